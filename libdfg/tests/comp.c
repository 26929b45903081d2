// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: the component API (<dfg/component.h>). The registry,
 * the checks an instance gets against its type, the order of calls the
 * API enforces, errors and errno, checkpoint buffers; then every built-in
 * driven through its callbacks, alone into a sink and chained the way a
 * folded set chains them (emit calls the next compute).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "comp_harness.h"
#include "../comp/comp_run.h"	/* the executor's batch steps */

#define ERRNO_MARK	12345

/* ---- registry ---------------------------------------------------------- */

static const char *const builtin_names[] = {
	"read_lines", "read_records", "write_lines", "write_records",
	"generate", "filter", "map", "split_words", "partition", "gather",
	"merge", "sort", "sort_external", "join", "aggregate", "count", "exec",
};

TEST(registry_builtins)
{
	const struct dfg_comp_type *types[64];
	unsigned int i;
	int n;

	for (i = 0; i < sizeof(builtin_names) / sizeof(builtin_names[0]); i++) {
		const struct dfg_comp_type *t = dfg_comp_find(builtin_names[i]);

		ASSERT_NE(NULL, t) TH_LOG("%s", builtin_names[i]);
		EXPECT_STREQ(builtin_names[i], t->name);
		EXPECT_EQ(DFG_COMP_ABI_VERSION, t->abi);
	}
	EXPECT_EQ(NULL, dfg_comp_find("nope"));
	EXPECT_EQ(NULL, dfg_comp_find(NULL));
	EXPECT_FALSE(dfg_comp_find("exec")->flags & DFG_COMP_FOLDABLE);
	EXPECT_TRUE(dfg_comp_find("sort")->flags & DFG_COMP_PULL);
	n = dfg_comp_list(types, 64);
	ASSERT_GE(n, 16);
	EXPECT_EQ(types[0], dfg_comp_find("read_lines"));
	EXPECT_EQ(n, dfg_comp_list(NULL, 0));
	EXPECT_EQ(-EINVAL, dfg_comp_list(NULL, 3));
	NO_LEAKS();
}

static int nop_compute(struct dfg_comp *c, unsigned int port,
		       const struct dfg_elem *e)
{
	(void)port;
	return dfg_emit(c, 0, e);
}

static int nop_run(struct dfg_comp *c, unsigned long budget)
{
	(void)c;
	(void)budget;
	return 7;	/* not a run code */
}

static const char *const nop_params[] = { "a", "b", NULL };

TEST(register_checks)
{
	struct dfg_comp_type t = {
		.abi = DFG_COMP_ABI_VERSION, .name = "test_nop",
		.flags = DFG_COMP_FOLDABLE, .min_in = 1, .max_in = 1,
		.min_out = 1, .max_out = 1, .params = nop_params,
		.compute = nop_compute,
	};
	struct dfg_comp_type bad;

	errno = ERRNO_MARK;
	bad = t;
	bad.abi = 99;
	EXPECT_EQ(-EPROTO, dfg_comp_register(&bad));
	bad = t;
	bad.name = "Bad-Name";
	EXPECT_EQ(-EINVAL, dfg_comp_register(&bad));
	bad.name = "";
	EXPECT_EQ(-EINVAL, dfg_comp_register(&bad));
	bad = t;
	bad.flags = 1U << 30;
	EXPECT_EQ(-EINVAL, dfg_comp_register(&bad));
	bad = t;
	bad.min_in = 2;
	EXPECT_EQ(-EINVAL, dfg_comp_register(&bad));
	bad = t;
	bad.max_out = DFG_COMP_MAX_PORTS + 1;
	EXPECT_EQ(-EINVAL, dfg_comp_register(&bad));
	bad = t;
	bad.compute = NULL;
	EXPECT_EQ(-EINVAL, dfg_comp_register(&bad));
	bad = t;
	bad.min_in = 0;		/* a root needs run */
	EXPECT_EQ(-EINVAL, dfg_comp_register(&bad));
	bad = t;
	bad.name = "sort";
	EXPECT_EQ(-EEXIST, dfg_comp_register(&bad));
	EXPECT_EQ(-EINVAL, dfg_comp_register(NULL));
	EXPECT_EQ(0, dfg_comp_register(&t));
	EXPECT_EQ(-EEXIST, dfg_comp_register(&t));
	EXPECT_EQ(&t, dfg_comp_find("test_nop"));
	EXPECT_EQ(ERRNO_MARK, errno);
	NO_LEAKS();
}

/* A root returning something that is not a run code fails. */
TEST(root_bad_code)
{
	static const struct dfg_comp_type t = {
		.abi = DFG_COMP_ABI_VERSION, .name = "test_badroot",
		.min_out = 1, .max_out = 1, .run = nop_run,
	};
	struct dfg_comp *c;

	ASSERT_EQ(0, dfg_comp_register(&t));
	c = mk_comp("test_badroot", 0, 1, NULL);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(DFG_ERROR, dfg_comp_run(c, 1));
	EXPECT_STREQ("run returned 7 without a message", dfg_comp_errmsg(c));
	EXPECT_EQ(-EINVAL, dfg_comp_run(c, 1));
	dfg_comp_destroy(c);
	NO_LEAKS();
}

/* ---- instances --------------------------------------------------------- */

TEST(check_attr)
{
	const struct dfg_comp_type *t = dfg_comp_find("partition");
	struct dfg_param p[2] = { { "key", "$1" }, { "sep", "," } };
	struct dfg_comp_attr a = {
		.name = "p", .nr_in = 1, .nr_out = 4, .params = p,
		.nr_params = 2,
	};
	char err[128];

	EXPECT_EQ(0, dfg_comp_check(t, &a, err, sizeof(err)));
	EXPECT_STREQ("", err);
	a.nr_in = 2;
	EXPECT_EQ(-EINVAL, dfg_comp_check(t, &a, err, sizeof(err)));
	EXPECT_STREQ("partition takes 1 to 1 inputs, not 2", err);
	a.nr_in = 1;
	a.nr_out = 0;
	EXPECT_EQ(-EINVAL, dfg_comp_check(t, &a, err, sizeof(err)));
	EXPECT_STREQ("partition takes 1 to 256 outputs, not 0", err);
	a.nr_out = 2;
	p[1].key = "color";
	EXPECT_EQ(-EINVAL, dfg_comp_check(t, &a, err, sizeof(err)));
	EXPECT_STREQ("partition has no parameter 'color'", err);
	p[1].key = "key";
	EXPECT_EQ(-EINVAL, dfg_comp_check(t, &a, err, sizeof(err)));
	EXPECT_STREQ("parameter 'key' given twice", err);
	a.nr_params = 1;
	a.degree = 2;
	a.instance = 2;
	EXPECT_EQ(-EINVAL, dfg_comp_check(t, &a, err, sizeof(err)));
	EXPECT_STREQ("instance 2 of a 2-way component", err);
	a.instance = 1;
	EXPECT_EQ(0, dfg_comp_check(t, &a, NULL, 0));
	EXPECT_EQ(-EINVAL, dfg_comp_check(NULL, &a, err, sizeof(err)));
	NO_LEAKS();
}

TEST(init_reports_errors)
{
	char err[DFG_COMP_ERRMSG_MAX];

	EXPECT_EQ(NULL, mk_comp_err(err, sizeof(err), "filter", "f", 1, 1,
				    "expr=$1 +", NULL));
	EXPECT_STREQ("parameter expr: col 5: unexpected end of expression",
		     err);
	EXPECT_EQ(NULL, mk_comp_err(err, sizeof(err), "filter", "f", 1, 1,
				    NULL));
	EXPECT_STREQ("parameter expr is required", err);
	EXPECT_EQ(NULL, mk_comp_err(err, sizeof(err), "sort", "s", 1, 1,
				    "numeric=2", NULL));
	EXPECT_STREQ("parameter numeric: 2 is not in [0, 1]", err);
	EXPECT_EQ(NULL, mk_comp_err(err, sizeof(err), "sort", "s", 1, 1,
				    "order=up", NULL));
	EXPECT_STREQ("parameter order: 'up' is not asc or desc", err);
	EXPECT_EQ(NULL, mk_comp_err(err, sizeof(err), "generate", "g", 0, 1,
				    "count=x", NULL));
	EXPECT_STREQ("parameter count: 'x' is not an integer", err);
	EXPECT_EQ(NULL, mk_comp_err(err, sizeof(err), "generate", "g", 0, 1,
				    NULL));
	EXPECT_STREQ("parameter count is required", err);
	EXPECT_EQ(NULL, mk_comp_err(err, sizeof(err), "read_lines", "r", 0, 1,
				    "file=/nonexistent/x", NULL));
	EXPECT_STREQ("/nonexistent/x: No such file or directory", err);
	EXPECT_EQ(NULL, mk_comp_err(err, sizeof(err), "map", "m", 1, 1,
				    "expr=$1", "sep=ab", NULL));
	EXPECT_STREQ("parameter sep: 'ab' is not one byte, 'tab' or 'space'",
		     err);
	EXPECT_EQ(NULL, mk_comp_err(err, sizeof(err), "aggregate", "a", 1, 1,
				    "op=avg", NULL));
	EXPECT_STREQ("parameter op: 'avg' is not count, sum, min or max", err);
	EXPECT_EQ(NULL, mk_comp_err(err, sizeof(err), "aggregate", "a", 1, 1,
				    "op=sum", NULL));
	EXPECT_STREQ("parameter value is required", err);
	EXPECT_EQ(NULL, mk_comp_err(err, sizeof(err), "join", "j", 2, 1,
				    "type=outer", NULL));
	EXPECT_STREQ("parameter type: 'outer' is not inner or left", err);
	EXPECT_EQ(NULL, mk_comp_err(err, sizeof(err), "split_words", "w", 1,
				    1, "chars=digits", NULL));
	EXPECT_EQ(NULL, mk_comp_err(err, sizeof(err), "exec", "x", 1, 1, NULL));
	EXPECT_STREQ("parameter cmd is required", err);
	NO_LEAKS();
}

TEST(call_order)
{
	struct dfg_comp *c = mk_comp("map", 1, 1, "expr=upper($0)", NULL);
	struct dfg_elem e = { "x", 1, 0 };
	struct dfg_blip b = { .kind = DFG_BLIP_USER };
	struct sink s;

	ASSERT_NE(NULL, c);
	errno = ERRNO_MARK;
	EXPECT_EQ(-EINVAL, dfg_comp_init(c));		/* twice */
	EXPECT_EQ(-EINVAL, dfg_comp_compute(c, 1, &e));	/* no such input */
	EXPECT_EQ(-EINVAL, dfg_comp_compute(c, 0, NULL));
	EXPECT_EQ(-EINVAL, dfg_comp_run(c, 10));	/* not a root */
	/* no emit hook yet: the default fails and says so */
	EXPECT_EQ(-ENOTCONN, dfg_comp_compute(c, 0, &e));
	EXPECT_STREQ("output 0 is not connected", dfg_comp_errmsg(c));
	EXPECT_EQ(-EINVAL, dfg_comp_compute(c, 0, &e));	/* failed for good */
	dfg_comp_destroy(c);

	c = mk_comp("map", 1, 1, "expr=upper($0)", NULL);
	ASSERT_NE(NULL, c);
	sink_attach(&s, c);
	EXPECT_EQ(0, dfg_comp_process_blip(c, &b));
	EXPECT_EQ(-EINVAL, dfg_comp_process_blip(c, NULL));
	EXPECT_EQ(0, dfg_comp_compute(c, 0, &e));
	EXPECT_EQ(0, dfg_comp_end_input(c, 0));
	EXPECT_EQ(-EINVAL, dfg_comp_end_input(c, 0));
	EXPECT_EQ(-EINVAL, dfg_comp_compute(c, 0, &e));	/* input ended */
	EXPECT_EQ(0, dfg_comp_shutdown(c));
	EXPECT_EQ(-EINVAL, dfg_comp_shutdown(c));
	EXPECT_EQ(-EINVAL, dfg_comp_process_blip(c, &b));
	EXPECT_STREQ("0:X", s.items[0]);
	EXPECT_STREQ("map", dfg_comp_name(c));
	EXPECT_EQ(dfg_comp_find("map"), dfg_comp_type(c));
	EXPECT_EQ(1, dfg_comp_nr_in(c));
	EXPECT_EQ(1, dfg_comp_nr_out(c));
	EXPECT_EQ(0, dfg_comp_instance(c));
	EXPECT_EQ(1, dfg_comp_degree(c));
	EXPECT_EQ(ERRNO_MARK, errno);
	sink_free(&s);
	dfg_comp_destroy(c);
	dfg_comp_destroy(NULL);
	NO_LEAKS();
}

TEST(create_bad_args)
{
	const struct dfg_comp_type *t = dfg_comp_find("gather");
	struct dfg_param p = { "k", NULL };
	struct dfg_comp_attr a = { .name = "g", .nr_in = 1, .nr_out = 1 };
	struct dfg_comp *c = NULL;

	EXPECT_EQ(-EINVAL, dfg_comp_create(NULL, &a, &c));
	EXPECT_EQ(-EINVAL, dfg_comp_create(t, NULL, &c));
	EXPECT_EQ(-EINVAL, dfg_comp_create(t, &a, NULL));
	a.name = NULL;
	EXPECT_EQ(-EINVAL, dfg_comp_create(t, &a, &c));
	a.name = "g";
	a.params = &p;
	a.nr_params = 1;
	EXPECT_EQ(-EINVAL, dfg_comp_create(t, &a, &c));
	a.nr_params = 0;
	a.nr_in = 0;	/* created, but init checks the ports */
	ASSERT_EQ(0, dfg_comp_create(t, &a, &c));
	EXPECT_EQ(-EINVAL, dfg_comp_init(c));
	EXPECT_STREQ("gather takes 1 to 256 inputs, not 0", dfg_comp_errmsg(c));
	dfg_comp_destroy(c);
	NO_LEAKS();
}

/* A downstream failure passes through without blaming the emitter. */
TEST(error_blame)
{
	struct dfg_comp *m = mk_comp("map", 1, 1, "expr=$1", NULL);
	struct dfg_comp *f = mk_comp("filter", 1, 1, "expr=$1 * 1 > 3", NULL);
	struct link l = { .down = { f } };
	struct sink s;

	ASSERT_NE(NULL, m);
	ASSERT_NE(NULL, f);
	dfg_comp_set_emit(m, link_emit, &l);
	sink_attach(&s, f);
	EXPECT_EQ(0, feed(m, 0, "5 a", NULL));
	EXPECT_EQ(-EINVAL, feed(m, 0, "x b", NULL));
	EXPECT_STREQ("", dfg_comp_errmsg(m));
	EXPECT_STREQ("element 2: col 1: not a number: 'x'",
		     dfg_comp_errmsg(f));
	EXPECT_EQ(-EINVAL, feed(f, 0, "9", NULL));	/* f failed for good */
	EXPECT_EQ(-EINVAL, feed(m, 0, "7", NULL));	/* m still works */
	EXPECT_STREQ("", dfg_comp_errmsg(m));
	EXPECT_EQ(1, s.nr);
	sink_free(&s);
	dfg_comp_destroy(m);
	dfg_comp_destroy(f);
	NO_LEAKS();
}

/* ---- checkpoint buffers ------------------------------------------------ */

TEST(ckpt_buffers)
{
	struct dfg_ckpt *w, *r;
	const void *p, *data;
	size_t len, n;
	char buf[4];
	__u64 v;

	ASSERT_EQ(0, dfg_ckpt_new(&w));
	EXPECT_EQ(0, dfg_ckpt_put_u64(w, 0x0102030405060708ULL));
	EXPECT_EQ(0, dfg_ckpt_put_bytes(w, "hello", 5));
	EXPECT_EQ(0, dfg_ckpt_put(w, "ab", 2));
	EXPECT_EQ(-EINVAL, dfg_ckpt_put(w, NULL, 2));
	data = dfg_ckpt_data(w, &len);
	EXPECT_EQ(8 + 8 + 5 + 2, len);
	EXPECT_EQ(8, ((const unsigned char *)data)[0]);	/* little-endian */

	ASSERT_EQ(0, dfg_ckpt_open(data, len, &r));
	EXPECT_EQ(-EINVAL, dfg_ckpt_put(r, "x", 1));	/* a reader */
	EXPECT_EQ(0, dfg_ckpt_get_u64(r, &v));
	EXPECT_EQ(0x0102030405060708ULL, v);
	EXPECT_EQ(0, dfg_ckpt_get_bytes(r, &p, &n));
	EXPECT_EQ(5, n);
	EXPECT_EQ(0, memcmp(p, "hello", 5));
	EXPECT_EQ(-EBADMSG, dfg_ckpt_get(r, buf, 3));	/* 2 left */
	EXPECT_EQ(0, dfg_ckpt_get(r, buf, 2));
	EXPECT_EQ(-EBADMSG, dfg_ckpt_get_u64(r, &v));
	dfg_ckpt_free(r);

	/* a length that points past the end */
	ASSERT_EQ(0, dfg_ckpt_open(data, 8 + 8 + 4, &r));
	EXPECT_EQ(0, dfg_ckpt_get_u64(r, &v));
	EXPECT_EQ(-EBADMSG, dfg_ckpt_get_bytes(r, &p, &n));
	dfg_ckpt_free(r);
	dfg_ckpt_free(w);
	dfg_ckpt_free(NULL);
	EXPECT_EQ(-EINVAL, dfg_ckpt_new(NULL));
	EXPECT_EQ(-EINVAL, dfg_ckpt_open(NULL, 1, &r));
	NO_LEAKS();
}

/* ---- sources and sinks ------------------------------------------------- */

TEST(read_lines)
{
	static char text[200000];
	char path[64], file[80];
	struct dfg_comp *c;
	unsigned int calls;
	struct sink s;
	size_t i;

	/* short lines, an empty one, one longer than the read buffer, and
	 * a last one without a newline */
	strcpy(text, "a\n\nbb\n");
	for (i = strlen(text); i < 150006; i++)
		text[i] = 'x';
	strcpy(text + i, "\nlast");
	ASSERT_EQ(0, tmp_file(path, sizeof(path), text, strlen(text)));
	snprintf(file, sizeof(file), "file=%s", path);
	c = mk_comp("read_lines", 0, 1, file, NULL);
	ASSERT_NE(NULL, c);
	sink_attach(&s, c);
	EXPECT_EQ(DFG_KEEP_GOING, dfg_comp_run(c, 2));
	EXPECT_EQ(2, s.nr);
	EXPECT_EQ(-EINVAL, dfg_comp_run(c, 0));
	EXPECT_EQ(DFG_REACHED_EOF, pump(c, 1, &calls));
	ASSERT_EQ(5, s.nr);
	EXPECT_STREQ("0:a", s.items[0]);
	EXPECT_STREQ("0:", s.items[1]);
	EXPECT_STREQ("0:bb", s.items[2]);
	EXPECT_EQ(150000 + 2, strlen(s.items[3]));
	EXPECT_STREQ("0:last", s.items[4]);
	EXPECT_EQ(0, dfg_comp_shutdown(c));
	EXPECT_EQ(DFG_REACHED_EOF, dfg_comp_run(c, 1));
	sink_free(&s);
	dfg_comp_destroy(c);

	/* N-way: "{}" is the instance number */
	strcpy(file, "file=/nonexistent/part-{}");
	{
		struct dfg_param p = { "file", "/nonexistent/part-{}" };
		struct dfg_comp_attr a = {
			.name = "r", .nr_out = 1, .instance = 3, .degree = 4,
			.params = &p, .nr_params = 1,
		};

		ASSERT_EQ(0, dfg_comp_create(dfg_comp_find("read_lines"), &a,
					     &c));
		EXPECT_EQ(-ENOENT, dfg_comp_init(c));
		EXPECT_STREQ("/nonexistent/part-3: No such file or directory",
			     dfg_comp_errmsg(c));
		dfg_comp_destroy(c);
	}
	unlink(path);
	NO_LEAKS();
}

TEST(read_records)
{
	char path[64], file[80];
	struct dfg_comp *c;
	unsigned int calls;
	struct sink s;

	ASSERT_EQ(0, tmp_file(path, sizeof(path), "aaaabbbbcc", 10));
	snprintf(file, sizeof(file), "file=%s", path);
	c = mk_comp("read_records", 0, 1, file, "size=4", NULL);
	ASSERT_NE(NULL, c);
	sink_attach(&s, c);
	EXPECT_EQ(DFG_ERROR, pump(c, 100, &calls));
	EXPECT_EQ(2, s.nr);
	EXPECT_STREQ("0:bbbb", s.items[1]);
	EXPECT_NE(NULL, strstr(dfg_comp_errmsg(c),
			       "ends in a partial record of 2 bytes"));
	sink_free(&s);
	dfg_comp_destroy(c);
	unlink(path);
	NO_LEAKS();
}

TEST(generate)
{
	struct dfg_param p[2] = { { "count", "7" }, { "pattern", "n{}-{}" } };
	struct dfg_comp_attr a = {
		.name = "g", .nr_out = 1, .instance = 1, .degree = 3,
		.params = p, .nr_params = 2,
	};
	struct dfg_comp *c;
	unsigned int calls;
	struct sink s;
	char *all;

	ASSERT_EQ(0, dfg_comp_create(dfg_comp_find("generate"), &a, &c));
	ASSERT_EQ(0, dfg_comp_init(c));
	sink_attach(&s, c);
	EXPECT_EQ(DFG_REACHED_EOF, pump(c, 1, &calls));
	all = sink_join(&s);
	EXPECT_STREQ("0:n1-1|0:n4-4", all);	/* k % 3 == 1 */
	EXPECT_EQ(4, s.tags[1]);
	free(all);
	sink_free(&s);
	dfg_comp_destroy(c);
	NO_LEAKS();
}

TEST(write_lines_and_records)
{
	char path[64], file[80], *text;
	struct dfg_comp *c;

	ASSERT_EQ(0, tmp_file(path, sizeof(path), "old contents, longer", 20));
	snprintf(file, sizeof(file), "file=%s", path);
	c = mk_comp("write_lines", 1, 0, file, NULL);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(0, feed(c, 0, "one", "", "three", NULL));
	EXPECT_EQ(0, dfg_comp_shutdown(c));
	dfg_comp_destroy(c);
	text = slurp(path);
	EXPECT_STREQ("one\n\nthree\n", text);
	free(text);

	c = mk_comp("write_records", 1, 0, file, "size=2", NULL);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(0, feed(c, 0, "ab", "cd", NULL));
	EXPECT_EQ(-EINVAL, feed(c, 0, "efg", NULL));
	EXPECT_STREQ("a record of 3 bytes, not 2", dfg_comp_errmsg(c));
	dfg_comp_destroy(c);

	c = mk_comp("write_records", 1, 0, file, NULL);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(0, dfg_comp_shutdown(c));	/* nothing: empty file */
	dfg_comp_destroy(c);
	text = slurp(path);
	EXPECT_STREQ("", text);
	free(text);
	unlink(path);
	NO_LEAKS();
}

/* ---- transforms -------------------------------------------------------- */

TEST(filter_and_map)
{
	struct dfg_comp *f = mk_comp("filter", 1, 2, "expr=$2 >= 10", "sep=,",
				     NULL);
	struct dfg_comp *m = mk_comp("map", 1, 1,
				     "expr=upper($1) . \"=\" . ($2 * 2)",
				     "sep=,", NULL);
	struct sink s;
	char *all;

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, m);
	sink_attach(&s, f);
	EXPECT_EQ(0, feed(f, 0, "a,5", "b,10", "c,300", "d,9", NULL));
	all = sink_join(&s);
	EXPECT_STREQ("1:a,5|0:b,10|0:c,300|1:d,9", all);
	free(all);
	sink_free(&s);

	sink_attach(&s, m);
	EXPECT_EQ(0, feed(m, 0, "a,5", "bc,-7", NULL));
	EXPECT_EQ(-EINVAL, feed(m, 0, "x,y", NULL));
	EXPECT_STREQ("element 3: col 20: not a number: 'y'",
		     dfg_comp_errmsg(m));
	all = sink_join(&s);
	EXPECT_STREQ("0:A=10|0:BC=-14", all);
	free(all);
	sink_free(&s);
	dfg_comp_destroy(f);
	dfg_comp_destroy(m);

	/* an integer result is printed; a string one passes as it is */
	m = mk_comp("map", 1, 1, "expr=len($0) * NR", NULL);
	ASSERT_NE(NULL, m);
	sink_attach(&s, m);
	EXPECT_EQ(0, feed(m, 0, "abc", "-", NULL));
	all = sink_join(&s);
	EXPECT_STREQ("0:3|0:2", all);
	free(all);
	sink_free(&s);
	dfg_comp_destroy(m);
	NO_LEAKS();
}

/*
 * The batch steps a folded set calls (comp_run.h): a map's new elements,
 * a filter's survivors in order, the bytes they add or drop, a failure in
 * the middle of a batch (what came before it goes on), the refusal of an
 * instance that does not take elements, and the steps made once the
 * expression is known ($0, a constant).
 */
#define BATCH_N		300

struct batch {
	char			text[BATCH_N][32];
	struct dfg_elem		e[BATCH_N];
	const struct dfg_elem	*v[BATCH_N];
	__u64			bytes;
};

/* Element i is "k<i>,<i>", or @bad at @bad_at. */
static void batch_fill(struct batch *b, int bad_at, const char *bad)
{
	int i;

	b->bytes = 0;
	for (i = 0; i < BATCH_N; i++) {
		if (i == bad_at)
			snprintf(b->text[i], sizeof(b->text[i]), "%s", bad);
		else
			snprintf(b->text[i], sizeof(b->text[i]), "k%d,%d", i, i);
		b->e[i].data = b->text[i];
		b->e[i].len = strlen(b->text[i]);
		b->e[i].tag = (__u64)i;
		b->v[i] = &b->e[i];
		b->bytes += b->e[i].len;
	}
}

static bool elem_is(const struct dfg_elem *e, const char *want)
{
	return e->len == strlen(want) && !memcmp(e->data, want, e->len);
}

TEST(batch_steps)
{
	struct dfg_comp *m = mk_comp("map", 1, 1,
				     "expr=upper($1) . \"=\" . ($2 * 2)",
				     "sep=,", NULL);
	struct dfg_comp *fld = mk_comp("map", 1, 1, "expr=$2", "sep=,", NULL);
	struct dfg_comp *f = mk_comp("filter", 1, 1, "expr=$2 % 3 == 0",
				     "sep=,", NULL);
	struct dfg_comp *same = mk_comp("map", 1, 1, "expr=$0", NULL);
	struct dfg_comp *none = mk_comp("filter", 1, 1, "expr=0", NULL);
	struct dfg_comp *rej = mk_comp("filter", 1, 2, "expr=1", NULL);
	struct batch *b = calloc(1, sizeof(*b));
	char want[64];
	__u64 out = 0;
	unsigned int k, i;

	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, m);
	ASSERT_NE(NULL, fld);
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, same);
	ASSERT_NE(NULL, none);
	ASSERT_NE(NULL, rej);
	/* a filter whose rejects are connected has no step */
	EXPECT_NE(NULL, m->step);
	EXPECT_EQ(NULL, rej->step);

	/* a map: new elements, each its own bytes, tags kept */
	batch_fill(b, -1, NULL);
	EXPECT_EQ(BATCH_N, __dfg_comp_step(m, b->v, BATCH_N));
	EXPECT_EQ(0, m->step_err);
	for (i = 0; i < BATCH_N; i++) {
		snprintf(want, sizeof(want), "K%u=%u", i, 2 * i);
		EXPECT_TRUE(elem_is(b->v[i], want));
		EXPECT_EQ((__u64)i, b->v[i]->tag);
		out += b->v[i]->len;
	}
	EXPECT_EQ(out - b->bytes, m->step_grew);

	/* a field: points into its input element */
	batch_fill(b, -1, NULL);
	EXPECT_EQ(BATCH_N, __dfg_comp_step(fld, b->v, BATCH_N));
	for (i = 0; i < BATCH_N; i++) {
		snprintf(want, sizeof(want), "%u", i);
		EXPECT_TRUE(elem_is(b->v[i], want));
		EXPECT_TRUE((const char *)b->v[i]->data > b->text[i] &&
			    (const char *)b->v[i]->data < b->text[i] + 32);
	}

	/* a filter: survivors in order, the dropped bytes counted off */
	batch_fill(b, -1, NULL);
	k = __dfg_comp_step(f, b->v, BATCH_N);
	EXPECT_EQ(BATCH_N / 3, k);
	out = 0;
	for (i = 0; i < k; i++) {
		EXPECT_EQ(&b->e[3 * i], b->v[i]);
		out += b->v[i]->len;
	}
	EXPECT_EQ(out - b->bytes, f->step_grew);

	/* a failure at element 200: the 200 before it went on */
	batch_fill(b, 200, "x,y");
	m->step_grew = 0;
	EXPECT_EQ(200, __dfg_comp_step(m, b->v, BATCH_N));
	EXPECT_EQ(-EINVAL, m->step_err);
	EXPECT_NE(NULL, strstr(dfg_comp_errmsg(m), "not a number: 'y'"));
	EXPECT_TRUE(elem_is(b->v[199], "K199=398"));
	/* failed: it refuses from now on */
	m->step_err = 0;
	batch_fill(b, -1, NULL);
	EXPECT_EQ(0, __dfg_comp_step(m, b->v, 1));
	EXPECT_EQ(-EINVAL, m->step_err);

	/* $0 hands the batch on as it is; a false constant passes nothing */
	batch_fill(b, -1, NULL);
	EXPECT_EQ(BATCH_N, __dfg_comp_step(same, b->v, BATCH_N));
	EXPECT_EQ(&b->e[BATCH_N - 1], b->v[BATCH_N - 1]);
	EXPECT_EQ(0, same->step_grew);
	EXPECT_EQ(0, __dfg_comp_step(none, b->v, BATCH_N));
	EXPECT_EQ(0, none->step_err);
	EXPECT_EQ(0 - b->bytes, none->step_grew);

	/* an ended input refuses */
	EXPECT_EQ(0, dfg_comp_end_input(same, 0));
	EXPECT_EQ(0, __dfg_comp_step(same, b->v, BATCH_N));
	EXPECT_EQ(-EINVAL, same->step_err);

	dfg_comp_destroy(m);
	dfg_comp_destroy(fld);
	dfg_comp_destroy(f);
	dfg_comp_destroy(same);
	dfg_comp_destroy(none);
	dfg_comp_destroy(rej);
	free(b);
	NO_LEAKS();
}

TEST(split_words)
{
	struct dfg_comp *w = mk_comp("split_words", 1, 1, "lower=1", NULL);
	struct dfg_comp *n = mk_comp("split_words", 1, 1, "chars=nonblank",
				     NULL);
	struct sink s;
	char *all;

	ASSERT_NE(NULL, w);
	ASSERT_NE(NULL, n);
	sink_attach(&s, w);
	EXPECT_EQ(0, feed(w, 0, "The cat's 2 HATS--on!", "", "  ", NULL));
	all = sink_join(&s);
	EXPECT_STREQ("0:the|0:cat|0:s|0:hats|0:on", all);
	free(all);
	sink_free(&s);
	sink_attach(&s, n);
	EXPECT_EQ(0, feed(n, 0, " a-b\tc ", NULL));
	all = sink_join(&s);
	EXPECT_STREQ("0:a-b|0:c", all);
	free(all);
	sink_free(&s);
	dfg_comp_destroy(w);
	dfg_comp_destroy(n);
	NO_LEAKS();
}

TEST(partition_and_gather)
{
	struct dfg_comp *p = mk_comp("partition", 1, 3, "key=$1", NULL);
	struct dfg_comp *g = mk_comp("gather", 3, 1, NULL);
	int port_of[3] = { -1, -1, -1 };
	const char *keys[] = { "k0", "k1", "k2" };
	char line[32];
	struct sink s;
	size_t i;

	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, g);
	sink_attach(&s, p);
	for (i = 0; i < 300; i++) {
		snprintf(line, sizeof(line), "%s %zu", keys[i % 3], i);
		ASSERT_EQ(0, feed(p, 0, line, NULL));
	}
	ASSERT_EQ(300, s.nr);
	for (i = 0; i < 300; i++) {
		int port = s.items[i][0] - '0';

		/* one key, one output, always */
		if (port_of[i % 3] < 0)
			port_of[i % 3] = port;
		EXPECT_EQ(port_of[i % 3], port);
		EXPECT_EQ(s.tags[i] % 3, (__u64)port);
	}
	sink_free(&s);

	sink_attach(&s, g);
	EXPECT_EQ(0, feed(g, 2, "c", NULL));
	EXPECT_EQ(0, feed(g, 0, "a", NULL));
	EXPECT_EQ(0, feed(g, 1, "b", NULL));
	ASSERT_EQ(3, s.nr);
	EXPECT_STREQ("0:c", s.items[0]);
	sink_free(&s);
	dfg_comp_destroy(p);
	dfg_comp_destroy(g);
	NO_LEAKS();
}

TEST(merge)
{
	struct dfg_comp *m = mk_comp("merge", 2, 1, "key=$1", "numeric=1",
				     NULL);
	struct sink s;
	char *all;

	ASSERT_NE(NULL, m);
	sink_attach(&s, m);
	EXPECT_EQ(0, feed(m, 0, "1 a", "4 a", "9 a", NULL));
	EXPECT_EQ(0, s.nr);		/* input 1 may still send smaller */
	EXPECT_EQ(0, feed(m, 1, "2 b", "4 b", NULL));
	/* 1a, 2b, 4a (ties: the lower input), 4b; then input 1 is empty */
	EXPECT_EQ(4, s.nr);
	EXPECT_EQ(0, dfg_comp_end_input(m, 1));
	EXPECT_EQ(5, s.nr);
	EXPECT_EQ(0, feed(m, 0, "10 a", NULL));
	EXPECT_EQ(0, dfg_comp_shutdown(m));
	all = sink_join(&s);
	EXPECT_STREQ("0:1 a|0:2 b|0:4 a|0:4 b|0:9 a|0:10 a", all);
	free(all);
	sink_free(&s);
	dfg_comp_destroy(m);

	m = mk_comp("merge", 2, 1, NULL);
	ASSERT_NE(NULL, m);
	sink_attach(&s, m);
	EXPECT_EQ(-EINVAL, feed(m, 0, "b", "a", NULL));
	EXPECT_STREQ("input 0 is not sorted (element 2)", dfg_comp_errmsg(m));
	sink_free(&s);
	dfg_comp_destroy(m);
	NO_LEAKS();
}

/* ---- pull components --------------------------------------------------- */

TEST(sort)
{
	struct dfg_comp *c = mk_comp("sort", 1, 1, "key=$2", "numeric=1",
				     "order=desc", NULL);
	struct dfg_blip user = { .kind = DFG_BLIP_USER };
	struct sink s;
	char *all;

	ASSERT_NE(NULL, c);
	sink_attach(&s, c);
	EXPECT_EQ(0, feed(c, 0, "a 1", "b 30", "c 4", "d 30", "e -2", NULL));
	EXPECT_EQ(0, s.nr);
	EXPECT_EQ(0, dfg_comp_shutdown(c));
	all = sink_join(&s);
	EXPECT_STREQ("0:b 30|0:d 30|0:c 4|0:a 1|0:e -2", all);	/* stable */
	free(all);
	sink_free(&s);
	dfg_comp_destroy(c);

	/* a user blip is a logical break: sort what came before it */
	c = mk_comp("sort", 1, 1, NULL);
	ASSERT_NE(NULL, c);
	sink_attach(&s, c);
	EXPECT_EQ(0, feed(c, 0, "b", "a", NULL));
	EXPECT_EQ(0, dfg_comp_process_blip(c, &user));
	EXPECT_EQ(0, feed(c, 0, "0", NULL));
	EXPECT_EQ(0, dfg_comp_shutdown(c));
	all = sink_join(&s);
	EXPECT_STREQ("0:a|0:b|0:0", all);
	free(all);
	sink_free(&s);
	dfg_comp_destroy(c);

	c = mk_comp("sort", 1, 1, "numeric=1", NULL);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(-EINVAL, feed(c, 0, "12", "x1", NULL));
	EXPECT_STREQ("element 2: numeric key 'x1' is not an integer",
		     dfg_comp_errmsg(c));
	dfg_comp_destroy(c);
	NO_LEAKS();
}

/* Open descriptors of this process. */
static int nr_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/*
 * Lines "kK vI" with K drawn from a few keys (many equal: stability
 * shows), fed to @c with a user blip after @blip_at lines (0: none).
 */
static int feed_keys(struct dfg_comp *c, unsigned int n, unsigned int blip_at)
{
	struct dfg_blip user = { .kind = DFG_BLIP_USER };
	unsigned int i, seed = 14;
	char line[64];
	int ret = 0;

	for (i = 0; !ret && i < n; i++) {
		int len;

		seed = seed * 1103515245 + 12345;
		len = snprintf(line, sizeof(line), "k%u v%u %d",
			       (seed >> 16) % 37, i, (int)(seed >> 8) % 1000 - 500);
		ret = dfg_comp_compute(c, 0, &(struct dfg_elem){ line, len, 0 });
		if (!ret && i + 1 == blip_at)
			ret = dfg_comp_process_blip(c, &user);
	}
	return ret ? ret : dfg_comp_shutdown(c);
}

/* What @type with the parameters emits for feed_keys(); caller frees. */
static char *sorted_by(const char *type, unsigned int blip_at,
		       const char *const *keys, const char *mem)
{
	struct dfg_comp *c = mk_comp(type, 1, 1, keys[0], keys[1] ?: mem,
				     keys[1] ? keys[2] ?: mem : NULL,
				     keys[1] && keys[2] ? mem : NULL, NULL);
	struct sink s;
	char *all = NULL;

	if (!c)
		return NULL;
	sink_attach(&s, c);
	if (!feed_keys(c, 3000, blip_at))
		all = sink_join(&s);
	sink_free(&s);
	dfg_comp_destroy(c);
	return all;
}

/*
 * Whether @all (sink_join() of feed_keys() lines through sort) is in the
 * order of field @field (1: "kK", string; 3: a number) ascending, or
 * descending if @desc, with equal keys in arrival order (vI rising); and
 * holds @n lines. An oracle of its own, not the sort's comparison.
 */
static bool sorted_ok(const char *all, unsigned int field, bool desc,
		      unsigned int n)
{
	char pk[16] = "", k[16];
	long pnum = 0, num, pv = -1, v;
	unsigned int got = 0;
	const char *p = all;
	bool first = true;

	while (p && *p) {
		int r;

		if (sscanf(p, "0:%15s v%ld %ld", k, &v, &num) != 3)
			return false;
		if (!first) {
			r = field == 1 ? strcmp(k, pk) :
					 (num > pnum) - (num < pnum);
			if (desc)
				r = -r;
			if (r < 0 || (r == 0 && v <= pv))
				return false;
		}
		first = false;
		snprintf(pk, sizeof(pk), "%s", k);
		pnum = num;
		pv = v;
		got++;
		p = strchr(p, '|');
		if (p)
			p++;
	}
	return got == n;
}

/* sort on more elements than a few: in order, and stable, both ways */
TEST(sort_order_stable)
{
	static const char *const keys[][3] = {
		{ "key=$1", NULL },
		{ "key=$1", "order=desc", NULL },
		{ "key=$3", "numeric=1", NULL },
		{ "key=$3", "numeric=1", "order=desc" },
	};
	static const unsigned int field[] = { 1, 1, 3, 3 };
	unsigned int k;

	for (k = 0; k < 4; k++) {
		char *all = sorted_by("sort", 0, keys[k], NULL);

		ASSERT_NE(NULL, all);
		EXPECT_TRUE(sorted_ok(all, field[k], k == 1 || k == 3, 3000))
			TH_LOG("keys %s %s", keys[k][0], keys[k][1] ?: "");
		free(all);
	}
	NO_LEAKS();
}

/*
 * sort_external emits what sort does, with runs spilled (a budget of a
 * few records), at a user blip and at the end, for string and numeric
 * keys both ways; its runs are unlinked files that close with it.
 */
TEST(sort_external_is_sort)
{
	static const char *const keys[][3] = {
		{ "key=$1", NULL, NULL },
		{ "key=$1", "order=desc", NULL },
		{ "key=$3", "numeric=1", NULL },
		{ "key=$3", "numeric=1", "order=desc" },
	};
	unsigned int k, b;
	int fds = nr_fds();

	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		for (b = 0; b < 2; b++) {
			/* 700 bytes: a run every 5 records or so */
			char *want = sorted_by("sort", b * 1234, keys[k], NULL);
			char *all = sorted_by("sort_external", b * 1234,
					      keys[k], "memory=700");
			char *mem = sorted_by("sort_external", b * 1234,
					      keys[k], NULL);

			ASSERT_NE(NULL, want);
			ASSERT_NE(NULL, all);
			ASSERT_NE(NULL, mem);
			EXPECT_STREQ(want, all) TH_LOG("keys %u blip %u", k, b);
			EXPECT_STREQ(want, mem) TH_LOG("keys %u blip %u", k, b);
			free(want);
			free(all);
			free(mem);
		}
	}
	EXPECT_EQ(fds, nr_fds());
	NO_LEAKS();
}

TEST(sort_external_errors)
{
	struct dfg_comp *c = mk_comp("sort_external", 1, 1, "memory=10",
				     "tmpdir=/nonexistent/dir", NULL);

	ASSERT_NE(NULL, c);
	EXPECT_EQ(0, feed(c, 0, "b", NULL));	/* the first stays in memory */
	EXPECT_EQ(-ENOENT, feed(c, 0, "a", NULL));
	EXPECT_STREQ("tmpdir /nonexistent/dir: No such file or directory",
		     dfg_comp_errmsg(c));
	dfg_comp_destroy(c);
	NO_LEAKS();
}

TEST(join)
{
	struct dfg_comp *j = mk_comp("join", 2, 1, "sep=,", "out_sep=|",
				     NULL);
	struct dfg_comp *l = mk_comp("join", 2, 1, "left_key=$2",
				     "right_key=$1", "type=left", NULL);
	struct sink s;
	char *all;

	ASSERT_NE(NULL, j);
	ASSERT_NE(NULL, l);
	sink_attach(&s, j);
	EXPECT_EQ(0, feed(j, 1, "1,one", "2,two", "1,uno", NULL));
	EXPECT_EQ(0, feed(j, 0, "2,b", "3,c", "1,a", NULL));
	EXPECT_EQ(0, dfg_comp_shutdown(j));
	all = sink_join(&s);
	EXPECT_STREQ("0:2,b|2,two|0:1,a|1,one|0:1,a|1,uno", all);
	free(all);
	sink_free(&s);

	sink_attach(&s, l);
	EXPECT_EQ(0, feed(l, 0, "x 7", "y 8", NULL));
	EXPECT_EQ(0, feed(l, 1, "8 eight", NULL));
	EXPECT_EQ(0, dfg_comp_shutdown(l));
	all = sink_join(&s);
	EXPECT_STREQ("0:x 7|0:y 8\t8 eight", all);
	free(all);
	sink_free(&s);
	dfg_comp_destroy(j);
	dfg_comp_destroy(l);
	NO_LEAKS();
}

TEST(aggregate)
{
	static const char *const ops[] = { "sum", "min", "max" };
	static const char *const want[] = {
		"0:a=5|0:b=-3|0:c=0", "0:a=1|0:b=-3|0:c=0",
		"0:a=4|0:b=-3|0:c=0",
	};
	struct dfg_comp *c;
	char op[16], *all;
	struct sink s;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		snprintf(op, sizeof(op), "op=%s", ops[i]);
		c = mk_comp("aggregate", 1, 1, op, "key=$1", "value=$2",
			    "out_sep==", NULL);
		ASSERT_NE(NULL, c);
		sink_attach(&s, c);
		EXPECT_EQ(0, feed(c, 0, "a 1", "b -3", "a 4", "c 0", NULL));
		EXPECT_EQ(0, dfg_comp_shutdown(c));
		all = sink_join(&s);
		EXPECT_STREQ(want[i], all) TH_LOG("%s", ops[i]);
		free(all);
		sink_free(&s);
		dfg_comp_destroy(c);
	}

	c = mk_comp("aggregate", 1, 1, "op=sum", "key=$1", "value=$2", NULL);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(0, feed(c, 0, "a 9223372036854775807", NULL));
	EXPECT_EQ(-ERANGE, feed(c, 0, "a 1", NULL));
	EXPECT_STREQ("sum for key 'a' overflows", dfg_comp_errmsg(c));
	dfg_comp_destroy(c);

	c = mk_comp("aggregate", 1, 1, "op=max", "key=$1", "value=$2", NULL);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(-EINVAL, feed(c, 0, "a one", NULL));
	EXPECT_STREQ("element 1: value 'one' is not an integer",
		     dfg_comp_errmsg(c));
	dfg_comp_destroy(c);
	NO_LEAKS();
}

/* ---- a folded chain: word frequency ------------------------------------ */

TEST(word_frequency_chain)
{
	static const char text[] =
		"The quick brown fox\njumps over the lazy dog.\n"
		"The dog sleeps; the fox runs!\n";
	struct dfg_comp *rd, *sw, *cnt, *srt, *wr;
	struct link l_rd, l_sw, l_cnt, l_srt;
	char in[64], out[64], fin[80], fout[80], *res;
	unsigned int calls;

	ASSERT_EQ(0, tmp_file(in, sizeof(in), text, strlen(text)));
	ASSERT_EQ(0, tmp_file(out, sizeof(out), "", 0));
	snprintf(fin, sizeof(fin), "file=%s", in);
	snprintf(fout, sizeof(fout), "file=%s", out);
	rd = mk_comp("read_lines", 0, 1, fin, NULL);
	sw = mk_comp("split_words", 1, 1, "lower=1", NULL);
	cnt = mk_comp("count", 1, 1, "out_sep= ", NULL);
	srt = mk_comp("sort", 1, 1, "key=$2 . \" \" . $1", NULL);
	wr = mk_comp("write_lines", 1, 0, fout, NULL);
	ASSERT_TRUE(rd && sw && cnt && srt && wr);
	l_rd = (struct link){ .down = { sw } };
	l_sw = (struct link){ .down = { cnt } };
	l_cnt = (struct link){ .down = { srt } };
	l_srt = (struct link){ .down = { wr } };
	dfg_comp_set_emit(rd, link_emit, &l_rd);
	dfg_comp_set_emit(sw, link_emit, &l_sw);
	dfg_comp_set_emit(cnt, link_emit, &l_cnt);
	dfg_comp_set_emit(srt, link_emit, &l_srt);

	EXPECT_EQ(DFG_REACHED_EOF, pump(rd, 2, &calls));
	EXPECT_EQ(2, calls);
	/* shutdown in topological order; each may emit downstream */
	EXPECT_EQ(0, dfg_comp_shutdown(rd));
	EXPECT_EQ(0, dfg_comp_shutdown(sw));
	EXPECT_EQ(0, dfg_comp_shutdown(cnt));
	EXPECT_EQ(0, dfg_comp_shutdown(srt));
	EXPECT_EQ(0, dfg_comp_shutdown(wr));
	res = slurp(out);
	EXPECT_STREQ("brown 1\njumps 1\nlazy 1\nover 1\nquick 1\nruns 1\n"
		     "sleeps 1\ndog 2\nfox 2\nthe 4\n", res);
	free(res);
	dfg_comp_destroy(rd);
	dfg_comp_destroy(sw);
	dfg_comp_destroy(cnt);
	dfg_comp_destroy(srt);
	dfg_comp_destroy(wr);
	unlink(in);
	unlink(out);
	NO_LEAKS();
}

TEST_HARNESS_MAIN
