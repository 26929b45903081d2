// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: the access engine of patent 004 (libdfg/hub/) over
 * partition files of small R-MAT graphs, without the module.
 *
 *   image		the PART_LOAD image of a partition file holds the
 *			file's CSR, attributes (features + label) and replica
 *   same_batches_*	with a fixed seed, the mini-batches are byte-identical
 *			across no replication, replication, +R1/R2/R4, +R3,
 *			+R3 run a batch ahead (dfg_hub_ahead()), and with
 *			announcements that do not come (uniform and
 *			weighted, both R2 variants, every partition); a
 *			different seed changes them
 *   rules_fire		each rule fires exactly where the patent says, counted
 *			against what this test computes from the partition
 *			file's own hub mask and replica and from the batch
 *   replication_saves	replication and the rules cut remote reads, and what
 *			rules prefetch is used
 *   local_rules_no_trips under a replica budget, R1, R2 and R4 make no
 *			trip to an owner that sampling without them does not
 *   ahead_*		R3 a batch ahead leaves an announced batch no remote
 *			read (with the replica or under a budget, uniform,
 *			weighted, three hops), fires where R3 fires, and an
 *			announcement that does not come changes nothing
 *   bad_input		roots out of range, files of different partitionings,
 *			a partition twice
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dfg/dfg.h>
#include <dfg/hub.h>

#include "gstore.h"
#include "../hub/hub_impl.h"

#include "kselftest_harness.h"
#include "hub_parts.h"

#define ARENA_BYTES	(64u << 20)
#define BATCHES		12
#define ROOTS		24

/* Roots of batch @b: mostly own nodes of @f, a few of anywhere. */
static void roots_of(const struct dfg_gs_file *f, uint64_t b, __u64 *roots)
{
	uint64_t x = b * 0x9e3779b97f4a7c15ULL + 7;
	unsigned int i;

	for (i = 0; i < ROOTS; i++) {
		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ULL;
		x ^= x >> 32;
		if (i % 6 == 5)
			roots[i] = x % f->hdr->nodes_global;
		else
			roots[i] = f->hdr->node_base + x % f->hdr->nodes_local;
	}
}

/*
 * Runs BATCHES batches on partition @part; writes each batch's bytes'
 * hash to @hash and the counters to @st; calls @check on each batch.
 */
typedef void (*batch_check_fn)(struct __test_metadata *_metadata,
			       const struct dfg_gs_file *f,
			       const struct dfg_hub_batch *b,
			       const struct dfg_hub_opts *o, void *arg);

/* What run() announces before each batch (dfg_hub_ahead()). */
enum {
	AHEAD_NONE,	/* nothing */
	AHEAD_NEXT,	/* the next batch, as it will be sampled */
	AHEAD_WRONG,	/* the next batch's number, other roots */
};

static void run(struct __test_metadata *_metadata, const struct parts *p,
		unsigned int part, unsigned int load, unsigned int ahead,
		const struct dfg_hub_opts *o, uint64_t *hash,
		struct dfg_hub_stats *st, batch_check_fn check, void *arg)
{
	struct dfg_hub_engine *e;
	struct dfg_arena *a = arena_new(_metadata);
	struct dfg_gs_file f;
	struct dfg_gs_err gerr;
	struct dfg_hub_err err;
	__u64 roots[ROOTS], next[ROOTS], off;
	uint64_t b;
	int len;

	ASSERT_EQ(0, dfg_gs_open(&f, p->paths[part], &gerr));
	ASSERT_EQ(0, dfg_hub_engine_files(p->paths, p->k, part, load, o, &e,
					  &err)) {
		TH_LOG("%s", err.msg);
	}
	for (b = 0; b < BATCHES; b++) {
		const struct dfg_hub_batch *hb;

		roots_of(&f, b * 31 + part, roots);
		if (ahead != AHEAD_NONE && b + 1 < BATCHES) {
			roots_of(&f, (b + 1) * 31 + part +
				 (ahead == AHEAD_WRONG ? 7 : 0), next);
			ASSERT_EQ(0, dfg_hub_ahead(e, b + 1, next, ROOTS));
		}
		len = dfg_hub_sample(e, b, roots, ROOTS, a, &off);
		ASSERT_LT(0, len) {
			TH_LOG("batch %llu: %s", (unsigned long long)b,
			       strerror(-len));
		}
		hb = dfg_arena_ptr(a, off, len);
		ASSERT_NE(NULL, hb);
		ASSERT_EQ(DFG_HUB_BATCH_MAGIC, hb->magic);
		ASSERT_EQ((uint32_t)len, hb->bytes);
		hash[b] = dfg_gs_hash(0, hb, len);
		if (check)
			check(_metadata, &f, hb, o, arg);
		ASSERT_EQ(0, dfg_buf_free(a, off));
	}
	dfg_hub_engine_stats(e, st);
	dfg_hub_engine_free(e);
	dfg_gs_close(&f);
	arena_free(a);
}

TEST(image)
{
	struct parts p;
	struct dfg_gs_file f;
	struct dfg_gs_err gerr;
	const struct dfg_part_hdr *h;
	size_t len, row;
	uint64_t i;
	void *img;
	uint8_t *b;

	make_parts(_metadata, &p, "img", 9, 3, 2);
	ASSERT_EQ(0, dfg_gs_open(&f, p.paths[1], &gerr));
	ASSERT_EQ(0, dfg_hub_image(p.paths[1], 0, &img, &len, NULL));
	h = img;
	b = img;
	EXPECT_EQ(DFG_PART_MAGIC, h->magic);
	EXPECT_EQ(len, h->image_bytes);
	EXPECT_EQ(f.hdr->node_base, h->node_first);
	EXPECT_EQ(f.hdr->nodes_local, h->node_count);
	EXPECT_EQ(f.hdr->rep_count, h->rep_count);
	EXPECT_NE(0, h->rep_count);
	row = 6 * 4;
	EXPECT_EQ(row + 4, h->feat_bytes);
	EXPECT_EQ(0, memcmp(b + h->row_off, f.row_ptr,
			    (h->node_count + 1) * 8));
	EXPECT_EQ(0, memcmp(b + h->col_off, f.col, h->col_count * 8));
	EXPECT_EQ(0, memcmp(b + h->rep_ids_off, f.rep_id, h->rep_count * 8));
	EXPECT_EQ(0, memcmp(b + h->rep_col_off, f.rep_col,
			    h->rep_col_count * 8));
	for (i = 0; i < h->node_count; i++) {
		EXPECT_EQ(0, memcmp(b + h->feat_off + i * h->feat_bytes,
				    (const uint8_t *)f.feat + i * row, row));
		EXPECT_EQ(0, memcmp(b + h->feat_off + i * h->feat_bytes + row,
				    &f.label[i], 4));
	}
	for (i = 0; i < h->rep_count; i++)
		EXPECT_EQ(0, memcmp(b + h->rep_feat_off + i * h->feat_bytes,
				    (const uint8_t *)f.rep_feat + i * row,
				    row));
	free(img);
	/* Without the replica. */
	ASSERT_EQ(0, dfg_hub_image(p.paths[1], DFG_HUB_LOAD_NO_REPLICA, &img,
				   &len, NULL));
	h = img;
	EXPECT_EQ(0, h->rep_count);
	EXPECT_EQ(0, h->rep_col_count);
	free(img);
	EXPECT_EQ(-EINVAL, dfg_hub_image(p.paths[1], 0x80, &img, &len, NULL));
	dfg_gs_close(&f);
	rm_parts(&p);
}

/* The four configurations of the patent's ablation. */
static const struct {
	const char	*name;
	unsigned int	load, rules, ahead;
} configs[] = {
	{ "no replication",	DFG_HUB_LOAD_NO_REPLICA, 0, AHEAD_NONE },
	{ "replication",	0, 0, AHEAD_NONE },
	{ "+R1/R2/R4",		0, DFG_HUB_R1 | DFG_HUB_R2 | DFG_HUB_R4,
				AHEAD_NONE },
	{ "+R3",		0, DFG_HUB_R_ALL, AHEAD_NONE },
	{ "+R3 ahead",		0, DFG_HUB_R_ALL, AHEAD_NEXT },
	{ "+R3, wrong ahead",	0, DFG_HUB_R_ALL, AHEAD_WRONG },
};

#define NCONF	(sizeof(configs) / sizeof(configs[0]))

/*
 * Every partition, the four configurations, then three hops with every
 * rule, then another seed, for one set of engine flags.
 */
static void same_batches(struct __test_metadata *_metadata,
			 unsigned int flags)
{
	struct dfg_hub_stats st;
	uint64_t ref[BATCHES], got[BATCHES], other[BATCHES];
	struct parts p;
	unsigned int part, c;

	make_parts(_metadata, &p, "same", 9, 5, 3);
	for (part = 0; part < p.k; part++) {
		struct dfg_hub_opts o = {
			.hops = 2, .fanout = { 10, 5 }, .seed = 42,
			.flags = flags, .buf_entries = 64,
		};

		for (c = 0; c < NCONF; c++) {
			o.rules = configs[c].rules;
			run(_metadata, &p, part, configs[c].load,
			    configs[c].ahead, &o, c ? got : ref, &st, NULL,
			    NULL);
			if (c)
				EXPECT_EQ(0, memcmp(ref, got, sizeof(ref))) {
					TH_LOG("part %u flags %u: %s differs",
					       part, flags, configs[c].name);
				}
		}
		/* Three hops, all rules, another fan-out. */
		o.hops = 3;
		o.fanout[2] = 3;
		o.rules = 0;
		run(_metadata, &p, part, DFG_HUB_LOAD_NO_REPLICA, AHEAD_NONE,
		    &o, ref, &st, NULL, NULL);
		o.rules = DFG_HUB_R_ALL;
		run(_metadata, &p, part, 0, AHEAD_NONE, &o, got, &st, NULL,
		    NULL);
		EXPECT_EQ(0, memcmp(ref, got, sizeof(ref)));
		run(_metadata, &p, part, 0, AHEAD_NEXT, &o, got, &st, NULL,
		    NULL);
		EXPECT_EQ(0, memcmp(ref, got, sizeof(ref)));
		/* Another seed samples otherwise. */
		o.seed = 43;
		run(_metadata, &p, part, 0, AHEAD_NONE, &o, other, &st, NULL,
		    NULL);
		EXPECT_NE(0, memcmp(got, other, sizeof(got)));
	}
	rm_parts(&p);
}

TEST(same_batches_uniform)
{
	same_batches(_metadata, 0);
}

TEST(same_batches_weighted)
{
	same_batches(_metadata, DFG_HUB_F_WEIGHTED);
}

TEST(same_batches_r2_on_root)
{
	same_batches(_metadata, DFG_HUB_F_R2_ON_ROOT);
}

/* A batch's arrays (struct dfg_hub_batch's offsets resolved). */
struct bview {
	const uint32_t	*roots, *h0, *h1;
	const uint64_t	*nodes;
};

static struct bview bview_of(const struct dfg_hub_batch *b)
{
	const uint8_t *base = (const uint8_t *)b;

	return (struct bview){
		.roots = (const void *)(base + b->roots_off),
		.nodes = (const void *)(base + b->nodes_off),
		.h0 = (const void *)(base + b->hop_off[0]),
		.h1 = (const void *)(base + b->hop_off[1]),
	};
}

/*
 * Each own root's hop-0 sample: min(degree, fan-out) children, each from
 * its list, none more often than the list has it (without replacement).
 */
static void sample_shape(struct __test_metadata *_metadata,
			 const struct dfg_gs_file *f,
			 const struct dfg_hub_batch *b,
			 const struct dfg_hub_opts *o, void *arg)
{
	struct bview v = bview_of(b);
	const uint32_t *roots = v.roots, *h0 = v.h0;
	const uint64_t *nodes = v.nodes;
	uint64_t *big = arg, i, j, m, got, want, have, n;
	const uint64_t *nb;

	for (i = 0; i < b->roots; i++) {
		uint64_t r = nodes[roots[i]];

		if (r - f->hdr->node_base >= f->hdr->nodes_local)
			continue;
		nb = f->col + f->row_ptr[r - f->hdr->node_base];
		n = f->row_ptr[r - f->hdr->node_base + 1] -
		    f->row_ptr[r - f->hdr->node_base];
		got = 0;
		for (j = 0; j < b->edges[0]; j++) {
			uint64_t c;

			if (h0[2 * j] != i)
				continue;
			got++;
			c = nodes[h0[2 * j + 1]];
			want = 0;
			have = 0;
			for (m = 0; m < n; m++)
				have += nb[m] == c;
			for (m = 0; m < b->edges[0]; m++)
				want += h0[2 * m] == i &&
					nodes[h0[2 * m + 1]] == c;
			EXPECT_LE(want, have);
		}
		EXPECT_EQ(n < o->fanout[0] ? n : o->fanout[0], got);
		*big += n > o->fanout[0];
	}
}

/* Fan-outs beyond the small draw set: the same batches, the right shape. */
TEST(large_fanout)
{
	uint64_t ref[BATCHES], got[BATCHES], big = 0;
	struct dfg_hub_stats st;
	struct parts p;
	unsigned int c, i;
	static const uint32_t fan[][2] = { { 70, 66 }, { 10, 5 } };

	make_parts(_metadata, &p, "large", 11, 13, 2);
	for (i = 0; i < 2; i++) {
		struct dfg_hub_opts o = {
			.hops = 2, .fanout = { fan[i][0], fan[i][1] },
			.seed = 3,
		};

		for (c = 0; c < NCONF; c++) {
			o.rules = configs[c].rules;
			run(_metadata, &p, 0, configs[c].load,
			    configs[c].ahead, &o, c ? got : ref, &st,
			    sample_shape, &big);
			if (c)
				EXPECT_EQ(0, memcmp(ref, got, sizeof(ref)));
		}
		/* Some roots had more neighbours than the fan-out. */
		EXPECT_LT(0, big);
		big = 0;
	}
	rm_parts(&p);
}

/* Expected firings, computed from the batch and the partition file. */
struct expect {
	uint64_t	r1, r2, r3, r4;
};

static bool file_hub(const struct dfg_gs_file *f, uint64_t id)
{
	uint64_t i = id - f->hdr->node_base;

	return i < f->hdr->nodes_local && (f->hub_mask[i / 64] >> (i % 64) & 1);
}

static bool file_own(const struct dfg_gs_file *f, uint64_t id)
{
	return id - f->hdr->node_base < f->hdr->nodes_local;
}

static bool file_rep(const struct dfg_gs_file *f, uint64_t id)
{
	return bsearch(&id, f->rep_id, f->hdr->rep_count, 8,
		       dfg_gs_cmp_u64) != NULL;
}

static void file_nbrs(const struct dfg_gs_file *f, uint64_t id,
		      const uint64_t **nb, uint64_t *n)
{
	uint64_t i = id - f->hdr->node_base;

	*nb = f->col + f->row_ptr[i];
	*n = f->row_ptr[i + 1] - f->row_ptr[i];
}

static void expect_batch(struct __test_metadata *_metadata,
			 const struct dfg_gs_file *f,
			 const struct dfg_hub_batch *b,
			 const struct dfg_hub_opts *o, void *arg)
{
	struct bview v = bview_of(b);
	const uint32_t *roots = v.roots, *h0 = v.h0, *h1 = v.h1;
	const uint64_t *nodes = v.nodes;
	struct expect *x = arg;
	const uint64_t *nb, *nb2;
	uint64_t n, n2, i, j;

	for (i = 0; i < b->roots; i++) {
		uint64_t r = nodes[roots[i]], hubs = 0, picked = 0;

		if (!file_own(f, r))
			continue;
		file_nbrs(f, r, &nb, &n);
		for (j = 0; j < n; j++)
			hubs += file_hub(f, nb[j]);
		if (!hubs)
			continue;
		/* R1: the own hubs hop 0 sampled from it; R4: all it sampled. */
		for (j = 0; j < b->edges[0]; j++) {
			if (h0[2 * j] != i)
				continue;
			picked++;
			x->r1 += file_hub(f, nodes[h0[2 * j + 1]]);
		}
		x->r4 += picked;
	}
	/*
	 * R2 (claims 3/8): own hubs sampled from an own root, and of the
	 * remote hubs next to each, those the next hop sampled from it
	 * (hop 1's edges from its slot j); with one hop, all of them.
	 */
	for (j = 0; j < b->edges[0]; j++) {
		uint64_t r = nodes[roots[h0[2 * j]]], c = nodes[h0[2 * j + 1]];

		if (!file_own(f, r) || !file_hub(f, c))
			continue;
		if (b->hops < 2) {
			file_nbrs(f, c, &nb2, &n2);
			for (i = 0; i < n2; i++)
				x->r2 += !file_own(f, nb2[i]) &&
					 file_rep(f, nb2[i]);
			continue;
		}
		for (i = 0; i < b->edges[1]; i++) {
			uint64_t y = nodes[h1[2 * i + 1]];

			if (h1[2 * i] == j)
				x->r2 += !file_own(f, y) && file_rep(f, y);
		}
	}
	/* R3: remote hubs at hop 1, parent own or replicated. */
	if (o->hops < 2)
		return;
	for (j = 0; j < b->edges[0]; j++) {
		uint64_t parent = nodes[roots[h0[2 * j]]];
		uint64_t c = nodes[h0[2 * j + 1]];

		if (file_own(f, c))
			continue;
		x->r3 += file_own(f, parent) || file_rep(f, c);
	}
}

TEST(rules_fire)
{
	struct dfg_hub_opts o = { .hops = 2, .fanout = { 8, 4 }, .seed = 9 };
	uint64_t hash[BATCHES];
	struct dfg_hub_stats st;
	struct expect x;
	struct parts p;
	unsigned int part, r;

	make_parts(_metadata, &p, "rules", 10, 11, 2);
	/* Each rule alone, all of them, all of them with R3 ahead. */
	for (part = 0; part < p.k; part++)
		for (r = 0; r <= 5; r++) {
			o.rules = r < 4 ? 1U << r : DFG_HUB_R_ALL;
			memset(&x, 0, sizeof(x));
			run(_metadata, &p, part, 0,
			    r == 5 ? AHEAD_NEXT : AHEAD_NONE, &o, hash, &st,
			    expect_batch, &x);
			EXPECT_EQ(o.rules & DFG_HUB_R1 ? x.r1 : 0, st.r1);
			EXPECT_EQ(o.rules & DFG_HUB_R2 ? x.r2 : 0, st.r2);
			EXPECT_EQ(o.rules & DFG_HUB_R3 ? x.r3 : 0, st.r3);
			EXPECT_EQ(o.rules & DFG_HUB_R4 ? x.r4 : 0, st.r4);
			/* Each one had something to do. */
			if (o.rules & DFG_HUB_R1)
				EXPECT_LT(0, st.r1);
			if (o.rules & DFG_HUB_R2)
				EXPECT_LT(0, st.r2);
			if (o.rules & DFG_HUB_R3)
				EXPECT_LT(0, st.r3);
			if (o.rules & DFG_HUB_R4)
				EXPECT_LT(0, st.r4);
		}
	rm_parts(&p);
}

TEST(replication_saves)
{
	struct dfg_hub_opts o = { .hops = 2, .fanout = { 10, 5 }, .seed = 1 };
	struct dfg_hub_stats st[NCONF];
	uint64_t hash[BATCHES];
	struct parts p;
	unsigned int c;

	make_parts(_metadata, &p, "save", 10, 21, 2);
	for (c = 0; c < NCONF; c++) {
		o.rules = configs[c].rules;
		run(_metadata, &p, 0, configs[c].load, configs[c].ahead, &o,
		    hash, &st[c], NULL, NULL);
		TH_LOG("%-15s remote %llu calls %llu replica %llu buf %llu cache %llu r3_hits %llu",
		       configs[c].name, (unsigned long long)st[c].remote,
		       (unsigned long long)st[c].remote_calls,
		       (unsigned long long)st[c].replica,
		       (unsigned long long)st[c].buf_hits,
		       (unsigned long long)st[c].cache_hits,
		       (unsigned long long)st[c].r3_hits);
	}
	EXPECT_EQ(0, st[0].replica);
	EXPECT_LT(0, st[1].replica);
	EXPECT_LT(st[1].remote, st[0].remote);
	EXPECT_EQ(0, st[1].buf_hits);
	EXPECT_LT(0, st[2].buf_hits);
	EXPECT_LT(0, st[3].r3_hits);
	EXPECT_EQ(st[0].nodes, st[3].nodes);
	EXPECT_EQ(st[0].sampled, st[3].sampled);
	/* Ahead: the announced batches' remote nodes were read for them. */
	EXPECT_LT(st[3].r3_hits, st[4].r3_hits);
	EXPECT_LT(st[4].remote, st[3].remote);
	EXPECT_EQ(st[0].nodes, st[4].nodes);
	rm_parts(&p);
}

/*
 * Under a replica budget, remote nodes R4 samples next to a root are not
 * on this machine: the machine-local rules leave them to the hop's demand
 * read (one request for the hop), adding no trip to an owner (they made
 * one per root).
 */
TEST(local_rules_no_trips)
{
	struct dfg_hub_opts o = { .hops = 2, .fanout = { 10, 5 }, .seed = 1 };
	static const unsigned int rules[] = {
		0, DFG_HUB_R4, DFG_HUB_R1 | DFG_HUB_R2 | DFG_HUB_R4,
	};
	uint64_t ref[BATCHES], got[BATCHES];
	struct dfg_hub_stats st[3];
	struct parts p;
	unsigned int c;

	make_parts_budget(_metadata, &p, "r4trip", 10, 21, 2, 25);
	for (c = 0; c < 3; c++) {
		o.rules = rules[c];
		run(_metadata, &p, 0, 0, AHEAD_NONE, &o, c ? got : ref,
		    &st[c], NULL, NULL);
		if (c)
			EXPECT_EQ(0, memcmp(ref, got, sizeof(ref)));
		TH_LOG("rules %#x: remote %llu calls %llu buffer %llu r4 %llu",
		       rules[c], (unsigned long long)st[c].remote,
		       (unsigned long long)st[c].remote_calls,
		       (unsigned long long)st[c].buf_hits,
		       (unsigned long long)st[c].r4);
		EXPECT_EQ(st[0].remote, st[c].remote);
		EXPECT_EQ(st[0].remote_calls, st[c].remote_calls);
	}
	/* Remote reads remained for the rules to leave, and they fired. */
	EXPECT_LT(0, st[0].remote);
	EXPECT_LT(0, st[1].r4);
	EXPECT_LT(0, st[2].buf_hits);
	rm_parts(&p);
}

/*
 * Partition @part's batches, each announced (dfg_hub_ahead()) before the
 * one before it is sampled: every batch after the first finds its remote
 * nodes read for it (no demand read from a peer, R3's hits) and takes
 * the walk's draws of its first hop whole (the roots' lists are at hand
 * when it is announced) instead of drawing them again, and the batches
 * are @ref's.
 */
static void run_ahead(struct __test_metadata *_metadata, const struct parts *p,
		      unsigned int part, const struct dfg_hub_opts *o,
		      const uint64_t *ref)
{
	struct dfg_arena *a = arena_new(_metadata);
	struct dfg_hub_stats st, was;
	struct dfg_hub_engine *e;
	struct dfg_gs_file f;
	struct dfg_gs_err gerr;
	struct dfg_hub_err err;
	__u64 roots[ROOTS], next[ROOTS], off;
	uint64_t b, slots, ahead, slots0, ahead0;
	int len;

	ASSERT_EQ(0, dfg_gs_open(&f, p->paths[part], &gerr));
	ASSERT_EQ(0, dfg_hub_engine_files(p->paths, p->k, part, 0, o, &e,
					  &err)) {
		TH_LOG("%s", err.msg);
	}
	dfg_hub_engine_stats(e, &was);
	for (b = 0; b < BATCHES; b++) {
		roots_of(&f, b * 31 + part, roots);
		if (b + 1 < BATCHES) {
			roots_of(&f, (b + 1) * 31 + part, next);
			ASSERT_EQ(0, dfg_hub_ahead(e, b + 1, next, ROOTS));
		}
		hub_engine_slots(e, &slots0, &ahead0);
		len = dfg_hub_sample(e, b, roots, ROOTS, a, &off);
		ASSERT_LT(0, len);
		EXPECT_EQ(ref[b], dfg_gs_hash(0, dfg_arena_ptr(a, off, len),
					      len));
		ASSERT_EQ(0, dfg_buf_free(a, off));
		dfg_hub_engine_stats(e, &st);
		hub_engine_slots(e, &slots, &ahead);
		if (!b) {
			EXPECT_EQ(ahead0, ahead);
		} else {
			EXPECT_LE(ahead0 + ROOTS, ahead);
		}
		EXPECT_LE(ahead - ahead0, slots - slots0);
		if (b) {
			EXPECT_EQ(was.remote, st.remote) {
				TH_LOG("part %u batch %llu: %llu remote reads on demand",
				       part, (unsigned long long)b,
				       (unsigned long long)(st.remote -
							    was.remote));
			}
			EXPECT_LT(was.r3_hits, st.r3_hits);
		}
		was = st;
	}
	dfg_hub_engine_free(e);
	dfg_gs_close(&f);
	arena_free(a);
}

/* Reference batches (no replica, no rules), then run_ahead(). */
static void ahead_case(struct __test_metadata *_metadata, const struct parts *p,
		       struct dfg_hub_opts o)
{
	uint64_t ref[BATCHES];
	struct dfg_hub_stats st;
	unsigned int part;

	for (part = 0; part < p->k; part++) {
		o.rules = 0;
		run(_metadata, p, part, DFG_HUB_LOAD_NO_REPLICA, AHEAD_NONE, &o,
		    ref, &st, NULL, NULL);
		o.rules = DFG_HUB_R_ALL;
		run_ahead(_metadata, p, part, &o, ref);
	}
}

TEST(ahead_replica)
{
	struct dfg_hub_opts o = { .hops = 2, .fanout = { 10, 5 }, .seed = 4 };
	struct parts p;

	make_parts(_metadata, &p, "ahead", 10, 17, 2);
	ahead_case(_metadata, &p, o);
	o.flags = DFG_HUB_F_WEIGHTED;
	ahead_case(_metadata, &p, o);
	o.flags = 0;
	o.hops = 3;
	o.fanout[0] = 4;
	o.fanout[1] = 3;
	o.fanout[2] = 2;
	ahead_case(_metadata, &p, o);
	rm_parts(&p);
}

/* Under a budget: remote hubs next to own ones are not in the replica. */
TEST(ahead_budget)
{
	struct dfg_hub_opts o = { .hops = 2, .fanout = { 10, 5 }, .seed = 5 };
	struct parts p;

	make_parts_budget(_metadata, &p, "ahbud", 10, 19, 3, 5);
	ahead_case(_metadata, &p, o);
	rm_parts(&p);
}

/*
 * Announcements that do not come: other roots, a batch never sampled, a
 * batch sampled unannounced after one was announced; the engine freed
 * with one pending. Bad arguments.
 */
TEST(ahead_unused)
{
	struct dfg_hub_opts o = { .hops = 2, .fanout = { 6, 3 }, .seed = 8,
				  .rules = DFG_HUB_R_ALL };
	struct dfg_arena *a = arena_new(_metadata);
	struct dfg_hub_engine *e;
	struct dfg_hub_stats st;
	struct dfg_gs_file f;
	struct dfg_gs_err gerr;
	uint64_t ref[BATCHES];
	__u64 roots[ROOTS], other[ROOTS], off;
	struct parts p;
	uint64_t b;
	int len;

	make_parts(_metadata, &p, "ahun", 9, 23, 2);
	run(_metadata, &p, 0, 0, AHEAD_NONE, &o, ref, &st, NULL, NULL);
	ASSERT_EQ(0, dfg_gs_open(&f, p.paths[0], &gerr));
	ASSERT_EQ(0, dfg_hub_engine_files(p.paths, 2, 0, 0, &o, &e, NULL));
	for (b = 0; b < BATCHES; b++) {
		roots_of(&f, b * 31, roots);
		roots_of(&f, b * 31 + 5, other);
		switch (b % 4) {
		case 0:		/* this batch, other roots */
			ASSERT_EQ(0, dfg_hub_ahead(e, b, other, ROOTS));
			break;
		case 1:		/* a batch that never comes */
			ASSERT_EQ(0, dfg_hub_ahead(e, 1000 + b, roots, ROOTS));
			break;
		case 2:		/* this batch, fewer roots */
			ASSERT_EQ(0, dfg_hub_ahead(e, b, roots, ROOTS - 1));
			break;
		case 3:		/* this batch as it comes, announced twice */
			ASSERT_EQ(0, dfg_hub_ahead(e, b, other, ROOTS));
			ASSERT_EQ(0, dfg_hub_ahead(e, b, roots, ROOTS));
			break;
		}
		len = dfg_hub_sample(e, b, roots, ROOTS, a, &off);
		ASSERT_LT(0, len);
		EXPECT_EQ(ref[b], dfg_gs_hash(0, dfg_arena_ptr(a, off, len),
					      len));
		ASSERT_EQ(0, dfg_buf_free(a, off));
	}
	/* Freed with an announcement pending. */
	ASSERT_EQ(0, dfg_hub_ahead(e, BATCHES, roots, ROOTS));
	EXPECT_EQ(-EINVAL, dfg_hub_ahead(e, 0, NULL, ROOTS));
	EXPECT_EQ(-EINVAL, dfg_hub_ahead(e, 0, roots, 0));
	EXPECT_EQ(-EINVAL, dfg_hub_ahead(NULL, 0, roots, ROOTS));
	dfg_hub_engine_free(e);
	/* Without R3 it does nothing. */
	o.rules = DFG_HUB_R1;
	ASSERT_EQ(0, dfg_hub_engine_files(p.paths, 2, 0, 0, &o, &e, NULL));
	EXPECT_EQ(0, dfg_hub_ahead(e, 1, roots, ROOTS));
	dfg_hub_engine_stats(e, &st);
	EXPECT_EQ(0, st.r3);
	EXPECT_EQ(0, st.r3_nodes);
	dfg_hub_engine_free(e);
	dfg_gs_close(&f);
	rm_parts(&p);
	arena_free(a);
}

TEST(bad_input)
{
	struct dfg_hub_opts o = { .hops = 2, .fanout = { 4, 4 }, .seed = 1 };
	struct dfg_hub_engine *e;
	struct dfg_arena *a = arena_new(_metadata);
	struct dfg_hub_err err;
	struct parts p, q;
	const char *mix[2];
	__u64 roots[2], off;

	make_parts(_metadata, &p, "bad1", 8, 1, 2);
	make_parts(_metadata, &q, "bad2", 8, 2, 2);
	ASSERT_EQ(0, dfg_hub_engine_files(p.paths, 2, 0, 0, &o, &e, &err));
	roots[0] = 1;
	roots[1] = dfg_hub_engine_nodes(e);
	EXPECT_EQ(-ERANGE, dfg_hub_sample(e, 0, roots, 2, a, &off));
	roots[1] = ~0ULL;
	EXPECT_EQ(-ERANGE, dfg_hub_sample(e, 0, roots, 2, a, &off));
	EXPECT_EQ(-EINVAL, dfg_hub_sample(e, 0, roots, 0, a, &off));
	dfg_hub_engine_free(e);

	/* A partition of another graph. */
	mix[0] = p.paths[0];
	mix[1] = q.paths[1];
	EXPECT_EQ(-EXDEV, dfg_hub_engine_files(mix, 2, 0, 0, &o, &e, &err));
	TH_LOG("%s", err.msg);
	EXPECT_NE(NULL, strstr(err.msg, "different graphs"));
	/* The same partition twice, and a missing one. */
	mix[1] = p.paths[0];
	EXPECT_EQ(-EXDEV, dfg_hub_engine_files(mix, 2, 0, 0, &o, &e, &err));
	EXPECT_EQ(-EXDEV, dfg_hub_engine_files(p.paths, 1, 0, 0, &o, &e,
					       &err));
	/* Options. */
	o.hops = 0;
	EXPECT_EQ(-EINVAL, dfg_hub_engine_files(p.paths, 2, 0, 0, &o, &e,
						&err));
	o.hops = 1;
	o.fanout[1] = 3;
	EXPECT_EQ(-EINVAL, dfg_hub_engine_files(p.paths, 2, 0, 0, &o, &e,
						&err));
	o.fanout[1] = 0;
	o.rules = 0x100;
	EXPECT_EQ(-EINVAL, dfg_hub_engine_files(p.paths, 2, 0, 0, &o, &e,
						&err));
	rm_parts(&p);
	rm_parts(&q);
	arena_free(a);
}

TEST_HARNESS_MAIN
