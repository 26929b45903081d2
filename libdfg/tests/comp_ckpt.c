// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: checkpoints of the stateful built-ins. For each, a run
 * cut by a checkpoint and finished by fresh instances restored from it
 * must give the output of an uninterrupted run; restoring a checkpoint of
 * another instance, or a cut one, fails cleanly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "comp_harness.h"

/* Checkpoints @c into a new buffer; its bytes are copied into *@data. */
static int save(struct dfg_comp *c, void **data, size_t *len)
{
	struct dfg_ckpt *w;
	const void *p;
	int ret;

	ret = dfg_ckpt_new(&w);
	if (ret)
		return ret;
	ret = dfg_comp_checkpoint(c, w);
	if (!ret) {
		p = dfg_ckpt_data(w, len);
		*data = malloc(*len);
		memcpy(*data, p, *len);
	}
	dfg_ckpt_free(w);
	return ret;
}

static int load(struct dfg_comp *c, const void *data, size_t len)
{
	struct dfg_ckpt *r;
	int ret;

	ret = dfg_ckpt_open(data, len, &r);
	if (ret)
		return ret;
	ret = dfg_comp_restore(c, r);
	dfg_ckpt_free(r);
	return ret;
}

static const char *const words[] = {
	"pear", "fig", "apple", "fig", "kiwi", "pear", "fig", "date",
};

/* count and sort: half, checkpoint, a new instance, the other half. */
static void split_run(struct __test_metadata *_metadata, const char *type,
		      const char *p1, const char *p2, const char *want)
{
	struct dfg_comp *a, *b;
	void *data;
	size_t len, i;
	struct sink s;
	char *all;

	a = mk_comp(type, 1, 1, p1, p2, NULL);
	ASSERT_NE(NULL, a);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, feed(a, 0, words[i], NULL));
	ASSERT_EQ(0, save(a, &data, &len));
	dfg_comp_destroy(a);		/* the process dies here */

	b = mk_comp(type, 1, 1, p1, p2, NULL);
	ASSERT_NE(NULL, b);
	sink_attach(&s, b);
	ASSERT_EQ(0, load(b, data, len));
	for (; i < 8; i++)
		ASSERT_EQ(0, feed(b, 0, words[i], NULL));
	ASSERT_EQ(0, dfg_comp_shutdown(b));
	all = sink_join(&s);
	EXPECT_STREQ(want, all);
	free(all);
	sink_free(&s);
	dfg_comp_destroy(b);
	free(data);
}

TEST(count_round_trip)
{
	split_run(_metadata, "count", "out_sep==", NULL,
		  "0:pear=2|0:fig=3|0:apple=1|0:kiwi=1|0:date=1");
	NO_LEAKS();
}

TEST(aggregate_round_trip)
{
	split_run(_metadata, "aggregate", "op=max", "value=len($0)",
		  "0:pear\t4|0:fig\t3|0:apple\t5|0:kiwi\t4|0:date\t4");
	NO_LEAKS();
}

TEST(sort_round_trip)
{
	split_run(_metadata, "sort", "order=desc", NULL,
		  "0:pear|0:pear|0:kiwi|0:fig|0:fig|0:fig|0:date|0:apple");
	NO_LEAKS();
}

/* spilled runs go into the checkpoint with memory's records */
TEST(sort_external_round_trip)
{
	split_run(_metadata, "sort_external", "order=desc", "memory=100",
		  "0:pear|0:pear|0:kiwi|0:fig|0:fig|0:fig|0:date|0:apple");
	NO_LEAKS();
}

TEST(merge_round_trip)
{
	struct dfg_comp *a, *b;
	struct sink s;
	void *data;
	size_t len;
	char *all;

	a = mk_comp("merge", 2, 1, NULL);
	ASSERT_NE(NULL, a);
	sink_attach(&s, a);
	ASSERT_EQ(0, feed(a, 0, "a", "c", "e", NULL));
	ASSERT_EQ(0, feed(a, 1, "b", NULL));	/* a, b out; c, e held */
	ASSERT_EQ(2, s.nr);
	ASSERT_EQ(0, save(a, &data, &len));
	sink_free(&s);
	dfg_comp_destroy(a);

	b = mk_comp("merge", 2, 1, NULL);
	ASSERT_NE(NULL, b);
	sink_attach(&s, b);
	ASSERT_EQ(0, load(b, data, len));
	ASSERT_EQ(0, feed(b, 1, "d", NULL));
	ASSERT_EQ(0, dfg_comp_shutdown(b));
	all = sink_join(&s);
	EXPECT_STREQ("0:c|0:d|0:e", all);
	free(all);
	sink_free(&s);
	dfg_comp_destroy(b);
	free(data);
	NO_LEAKS();
}

/*
 * A root with checkpoint blips into a writer, cut at the second blip and
 * resumed: the output file equals the uninterrupted one, although the
 * first run wrote (unflushed and flushed) lines past the checkpoint.
 */
TEST(root_and_writer_resume)
{
	char in[64], out[64], fin[80], fout[80], text[4096], *res, *big;
	struct dfg_comp *rd, *wr;
	struct link l;
	void *d_rd, *d_wr;
	size_t n_rd, n_wr;
	unsigned int calls;
	int i, ret, blips = 0;

	text[0] = '\0';
	for (i = 0; i < 100; i++)
		sprintf(text + strlen(text), "line %d\n", i);
	ASSERT_EQ(0, tmp_file(in, sizeof(in), text, strlen(text)));
	ASSERT_EQ(0, tmp_file(out, sizeof(out), "", 0));
	snprintf(fin, sizeof(fin), "file=%s", in);
	snprintf(fout, sizeof(fout), "file=%s", out);

	rd = mk_comp("read_lines", 0, 1, fin, "checkpoint_every=30", NULL);
	wr = mk_comp("write_lines", 1, 0, fout, NULL);
	ASSERT_TRUE(rd && wr);
	l = (struct link){ .down = { wr } };
	dfg_comp_set_emit(rd, link_emit, &l);
	for (;;) {
		ret = dfg_comp_run(rd, 7);
		ASSERT_TRUE(ret == DFG_KEEP_GOING || ret == DFG_GOT_BLIP);
		if (ret != DFG_GOT_BLIP)
			continue;
		ASSERT_EQ(DFG_BLIP_CHECKPOINT, dfg_comp_blip(rd)->kind);
		ASSERT_EQ(++blips, (int)dfg_comp_blip(rd)->seq);
		if (blips == 2)
			break;
	}
	/* the set's checkpoint: every instance, upstream first */
	ASSERT_EQ(0, save(rd, &d_rd, &n_rd));
	ASSERT_EQ(0, save(wr, &d_wr, &n_wr));
	/* the run goes on, the writer writes past the checkpoint, dies */
	ASSERT_EQ(DFG_KEEP_GOING, dfg_comp_run(rd, 7));
	big = malloc(70001);
	memset(big, 'z', 70000);
	big[70000] = '\0';
	ASSERT_EQ(0, feed(wr, 0, big, NULL));
	free(big);
	dfg_comp_destroy(rd);
	dfg_comp_destroy(wr);
	res = slurp(out);
	ASSERT_GE(strlen(res), 65536);	/* a buffer flushed */
	free(res);

	rd = mk_comp("read_lines", 0, 1, fin, "checkpoint_every=30", NULL);
	wr = mk_comp("write_lines", 1, 0, fout, NULL);
	ASSERT_TRUE(rd && wr);
	dfg_comp_set_emit(rd, link_emit, &l);
	l.down[0] = wr;
	ASSERT_EQ(0, load(rd, d_rd, n_rd));
	ASSERT_EQ(0, load(wr, d_wr, n_wr));
	ASSERT_EQ(DFG_REACHED_EOF, pump(rd, 1000, &calls));
	EXPECT_EQ(2, calls);	/* the blip at line 90, then EOF */
	ASSERT_EQ(0, dfg_comp_shutdown(rd));
	ASSERT_EQ(0, dfg_comp_shutdown(wr));
	res = slurp(out);
	EXPECT_STREQ(text, res);
	free(res);
	dfg_comp_destroy(rd);
	dfg_comp_destroy(wr);
	free(d_rd);
	free(d_wr);
	unlink(in);
	unlink(out);
	NO_LEAKS();
}

TEST(generate_resume)
{
	struct dfg_comp *g;
	struct sink s;
	void *data;
	size_t len;
	unsigned int calls;
	char *all;

	g = mk_comp("generate", 0, 1, "count=5", NULL);
	ASSERT_NE(NULL, g);
	sink_attach(&s, g);
	ASSERT_EQ(DFG_KEEP_GOING, dfg_comp_run(g, 2));
	ASSERT_EQ(0, save(g, &data, &len));
	sink_free(&s);
	dfg_comp_destroy(g);
	g = mk_comp("generate", 0, 1, "count=5", NULL);
	ASSERT_NE(NULL, g);
	sink_attach(&s, g);
	ASSERT_EQ(0, load(g, data, len));
	ASSERT_EQ(DFG_REACHED_EOF, pump(g, 10, &calls));
	all = sink_join(&s);
	EXPECT_STREQ("0:2|0:3|0:4", all);
	free(all);
	sink_free(&s);
	dfg_comp_destroy(g);
	free(data);
	NO_LEAKS();
}

TEST(restore_errors)
{
	struct dfg_comp *a, *b;
	struct dfg_comp_attr at = { .name = "other", .nr_in = 1, .nr_out = 1 };
	struct sink s;
	void *data;
	size_t len, cut;

	a = mk_comp("sort", 1, 1, NULL);
	ASSERT_NE(NULL, a);
	ASSERT_EQ(0, feed(a, 0, "x", "y", NULL));
	ASSERT_EQ(0, save(a, &data, &len));

	/* another instance name */
	ASSERT_EQ(0, dfg_comp_create(dfg_comp_find("sort"), &at, &b));
	ASSERT_EQ(0, dfg_comp_init(b));
	EXPECT_EQ(-EBADMSG, load(b, data, len));
	EXPECT_STREQ("checkpoint is of sort 'sort'", dfg_comp_errmsg(b));
	dfg_comp_destroy(b);

	/* another type */
	b = mk_comp("count", 1, 1, NULL);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(-EBADMSG, load(b, data, len));
	dfg_comp_destroy(b);

	/* cut anywhere: never a crash, always -EBADMSG */
	for (cut = 0; cut < len; cut++) {
		b = mk_comp("sort", 1, 1, NULL);
		ASSERT_NE(NULL, b);
		EXPECT_EQ(-EBADMSG, load(b, data, cut)) TH_LOG("cut %zu", cut);
		dfg_comp_destroy(b);
	}

	/* restore only right after init */
	sink_attach(&s, a);
	EXPECT_EQ(0, dfg_comp_shutdown(a));
	sink_free(&s);
	EXPECT_EQ(-EINVAL, load(a, data, len));
	dfg_comp_destroy(a);
	free(data);

	/* exec cannot checkpoint, and says so */
	a = mk_comp("exec", 1, 1, "cmd=cat", NULL);
	ASSERT_NE(NULL, a);
	EXPECT_EQ(-EOPNOTSUPP, save(a, &data, &len));
	EXPECT_STREQ("an external program cannot be checkpointed",
		     dfg_comp_errmsg(a));
	dfg_comp_destroy(a);
	NO_LEAKS();
}

TEST_HARNESS_MAIN
