// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: the graph store (libdfg/gstore/). Generation is
 * deterministic; imports read what they should and reject what they
 * should; files round-trip; partition files hold exactly the other
 * partitions' cut-edge endpoints, computed here independently from the
 * graph and the assignment; the budget takes hubs in score order; every
 * malformed file is refused with its reason.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../gstore/gstore.h"

#include "kselftest_harness.h"

/* A scratch directory per test, removed with its files. */
struct scratch {
	char dir[64];
};

static void scratch_make(struct __test_metadata *_metadata, struct scratch *s)
{
	strcpy(s->dir, "/tmp/dfg-gstore.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(s->dir));
}

static void scratch_path(const struct scratch *s, char *buf, size_t len,
			 const char *name)
{
	snprintf(buf, len, "%s/%s", s->dir, name);
}

static void scratch_rm(struct scratch *s)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
	if (system(cmd))
		fprintf(stderr, "# could not remove %s\n", s->dir);
}

static void rmat(struct __test_metadata *_metadata, struct dfg_gs_graph *g,
		 uint32_t scale, uint64_t seed, uint32_t flags)
{
	struct dfg_gs_rmat p = { .scale = scale, .edge_factor = 8,
				 .seed = seed, .flags = flags };
	struct dfg_gs_err err;

	ASSERT_EQ(0, dfg_gs_gen_rmat(g, &p, NULL, NULL, &err)) {
		TH_LOG("%s", err.msg);
	}
	ASSERT_EQ(0, dfg_gs_make_attrs(g, 5, DFG_GS_FEAT_F32, 4, seed, &err));
}

static bool has_arc(const struct dfg_gs_graph *g, uint64_t u, uint64_t v)
{
	uint64_t j;

	for (j = g->row_ptr[u]; j < g->row_ptr[u + 1]; j++)
		if (g->col[j] == v)
			return true;
	return false;
}

TEST(gen_deterministic)
{
	struct dfg_gs_graph a, b, c;
	uint64_t u, j, maxdeg = 0;

	rmat(_metadata, &a, 9, 42, DFG_GS_F_UNDIRECTED);
	rmat(_metadata, &b, 9, 42, DFG_GS_F_UNDIRECTED);
	rmat(_metadata, &c, 9, 43, DFG_GS_F_UNDIRECTED);
	ASSERT_EQ(512, a.n);
	ASSERT_EQ(a.m, b.m);
	EXPECT_EQ(0, memcmp(a.row_ptr, b.row_ptr, (a.n + 1) * 8));
	EXPECT_EQ(0, memcmp(a.col, b.col, a.m * 8));
	EXPECT_EQ(0, memcmp(a.feat, b.feat, a.n * 5 * 4));
	EXPECT_EQ(0, memcmp(a.label, b.label, a.n * 4));
	EXPECT_EQ(dfg_gs_graph_id(&a), dfg_gs_graph_id(&b));
	EXPECT_NE(dfg_gs_graph_id(&a), dfg_gs_graph_id(&c));
	EXPECT_TRUE(a.m != c.m || memcmp(a.col, c.col, a.m * 8));

	/* symmetric, sorted, no loops, at most 2 arcs per generated edge */
	EXPECT_GE(2ULL * 8 * 512, a.m);
	for (u = 0; u < a.n; u++) {
		uint64_t d = a.row_ptr[u + 1] - a.row_ptr[u];

		maxdeg = d > maxdeg ? d : maxdeg;
		for (j = a.row_ptr[u]; j < a.row_ptr[u + 1]; j++) {
			ASSERT_NE(u, a.col[j]);
			ASSERT_TRUE(j == a.row_ptr[u] || a.col[j] > a.col[j - 1]);
			ASSERT_TRUE(has_arc(&a, a.col[j], u));
		}
	}
	/* R-MAT's skew: the largest degree is far above the mean */
	EXPECT_LT(8 * a.m / a.n, maxdeg);
	/* features in [-1, 1), labels below the class count */
	for (u = 0; u < a.n * 5; u++) {
		float f = ((float *)a.feat)[u];

		ASSERT_TRUE(f >= -1.0f && f < 1.0f);
	}
	for (u = 0; u < a.n; u++)
		ASSERT_GT(4, a.label[u]);
	dfg_gs_graph_free(&a);
	dfg_gs_graph_free(&b);
	dfg_gs_graph_free(&c);
}

TEST(gen_bad_params)
{
	struct dfg_gs_rmat p = { .scale = 0, .edge_factor = 16 };
	struct dfg_gs_graph g;
	struct dfg_gs_err err;

	EXPECT_EQ(-EINVAL, dfg_gs_gen_rmat(&g, &p, NULL, NULL, &err));
	p.scale = 31;
	EXPECT_EQ(-EINVAL, dfg_gs_gen_rmat(&g, &p, NULL, NULL, &err));
	p.scale = 4;
	p.edge_factor = 0;
	EXPECT_EQ(-EINVAL, dfg_gs_gen_rmat(&g, &p, NULL, NULL, &err));
	p.edge_factor = 2;
	ASSERT_EQ(0, dfg_gs_gen_rmat(&g, &p, NULL, NULL, &err));
	EXPECT_EQ(-EINVAL, dfg_gs_make_attrs(&g, 0, DFG_GS_FEAT_F32, 0, 1,
					     &err));
	EXPECT_EQ(-EINVAL, dfg_gs_make_attrs(&g, 3, DFG_GS_FEAT_NONE, 0, 1,
					     &err));
	EXPECT_EQ(-EINVAL, dfg_gs_make_attrs(&g, 3, 7, 0, 1, &err));
	dfg_gs_graph_free(&g);
}

static FILE *text(const char *s)
{
	return fmemopen((void *)s, strlen(s), "r");
}

TEST(snap_import)
{
	static const char in[] =
		"# Directed graph (each unordered pair of nodes is saved once)\n"
		"# FromNodeId\tToNodeId\n"
		"\n"
		"10\t20\n"
		"  20 1000000\n"
		"10 20\n"		/* duplicate */
		"1000000\t1000000\n"	/* self loop */
		"# a comment in the middle\n"
		"20 10 1234567890\n";	/* a third column is ignored */
	struct dfg_gs_graph g;
	struct dfg_gs_err err;
	FILE *f = text(in);

	ASSERT_EQ(0, dfg_gs_import_snap(&g, f, "in", 0, &err)) {
		TH_LOG("%s", err.msg);
	}
	fclose(f);
	ASSERT_EQ(3, g.n);
	ASSERT_NE(NULL, g.orig_id);
	EXPECT_EQ(10, g.orig_id[0]);
	EXPECT_EQ(20, g.orig_id[1]);
	EXPECT_EQ(1000000, g.orig_id[2]);
	EXPECT_EQ(3, g.m);	/* 10->20, 20->1000000, 20->10 */
	EXPECT_TRUE(has_arc(&g, 0, 1));
	EXPECT_TRUE(has_arc(&g, 1, 2));
	EXPECT_TRUE(has_arc(&g, 1, 0));
	EXPECT_FALSE(has_arc(&g, 2, 1));
	dfg_gs_graph_free(&g);

	f = text(in);
	ASSERT_EQ(0, dfg_gs_import_snap(&g, f, "in", DFG_GS_F_UNDIRECTED,
					&err));
	fclose(f);
	EXPECT_EQ(4, g.m);	/* {10,20} and {20,1000000}, both ways */
	EXPECT_TRUE(has_arc(&g, 2, 1));
	dfg_gs_graph_free(&g);

	/* dense ids need no orig_id */
	f = text("0 1\n1 2\n");
	ASSERT_EQ(0, dfg_gs_import_snap(&g, f, "in", 0, &err));
	fclose(f);
	EXPECT_EQ(NULL, g.orig_id);
	dfg_gs_graph_free(&g);
}

TEST(snap_errors)
{
	static const char *const bad[] = {
		"1 2\n3\n", "1 x\n", "1 -2\n", "a b\n",
		"1 99999999999999999999999\n", "1 2x\n",
	};
	struct dfg_gs_graph g;
	struct dfg_gs_err err;
	size_t i;
	FILE *f;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f = text(bad[i]);
		EXPECT_EQ(-EBADMSG, dfg_gs_import_snap(&g, f, "in", 0, &err)) {
			TH_LOG("input %zu", i);
		}
		fclose(f);
	}
	f = text("1 2\n3\n");
	dfg_gs_import_snap(&g, f, "in", 0, &err);
	fclose(f);
	EXPECT_NE(NULL, strstr(err.msg, "in:2: expected two node ids"));
	f = text("# only comments\n\n");
	EXPECT_EQ(-EBADMSG, dfg_gs_import_snap(&g, f, "in", 0, &err));
	fclose(f);
	EXPECT_NE(NULL, strstr(err.msg, "no edges"));
}

/* A binary CSR in memory: header, offsets, ids of @w bytes. */
static size_t bcsr(unsigned char *buf, uint64_t n, const uint64_t *rp,
		   const uint64_t *ids, unsigned int w)
{
	uint64_t hdr[2] = { n, rp[n] }, i;
	size_t at = 0;

	memcpy(buf, hdr, 16);
	at = 16;
	memcpy(buf + at, rp, (n + 1) * 8);
	at += (n + 1) * 8;
	for (i = 0; i < rp[n]; i++, at += w) {
		uint32_t v32 = (uint32_t)ids[i];

		memcpy(buf + at, w == 4 ? (void *)&v32 : (void *)&ids[i], w);
	}
	return at;
}

static int import_buf(const unsigned char *buf, size_t len, unsigned int w,
		       struct dfg_gs_graph *g, struct dfg_gs_err *err)
{
	FILE *f = fmemopen((void *)buf, len, "r");
	int ret = dfg_gs_import_bcsr(g, f, "csr", w, 0, err);

	fclose(f);
	return ret;
}

TEST(bcsr_import)
{
	const uint64_t rp[] = { 0, 2, 3, 3 }, ids[] = { 2, 1, 0 };
	unsigned char buf[256];
	struct dfg_gs_graph g;
	struct dfg_gs_err err;
	uint64_t bad[4];
	unsigned int w;
	size_t len;

	for (w = 4; w <= 8; w += 4) {
		len = bcsr(buf, 3, rp, ids, w);
		ASSERT_EQ(0, import_buf(buf, len, w, &g, &err)) {
			TH_LOG("%s", err.msg);
		}
		EXPECT_EQ(3, g.n);
		EXPECT_EQ(3, g.m);
		EXPECT_EQ(1, g.col[0]);	/* rows come out sorted */
		EXPECT_EQ(2, g.col[1]);
		EXPECT_EQ(0, g.col[2]);
		dfg_gs_graph_free(&g);

		EXPECT_EQ(-EBADMSG, import_buf(buf, len - 1, w, &g, &err));
		EXPECT_NE(NULL, strstr(err.msg, "truncated"));
		EXPECT_EQ(-EBADMSG, import_buf(buf, 20, w, &g, &err));
		EXPECT_EQ(-EBADMSG, import_buf(buf, 8, w, &g, &err));
		buf[len] = 0;
		EXPECT_EQ(-EBADMSG, import_buf(buf, len + 1, w, &g, &err));
		EXPECT_NE(NULL, strstr(err.msg, "trailing"));
	}
	/* an id out of range, offsets that go down or end wrong */
	len = bcsr(buf, 3, rp, (const uint64_t[]){ 2, 1, 3 }, 8);
	EXPECT_EQ(-EBADMSG, import_buf(buf, len, 8, &g, &err));
	memcpy(bad, (const uint64_t[]){ 0, 2, 1, 3 }, sizeof(bad));
	len = bcsr(buf, 3, bad, ids, 8);
	EXPECT_EQ(-EBADMSG, import_buf(buf, len, 8, &g, &err));
	EXPECT_NE(NULL, strstr(err.msg, "decreases"));
	memcpy(bad, (const uint64_t[]){ 1, 2, 3, 3 }, sizeof(bad));
	len = bcsr(buf, 3, bad, ids, 8);
	EXPECT_EQ(-EBADMSG, import_buf(buf, len, 8, &g, &err));
	EXPECT_EQ(-EINVAL, import_buf(buf, len, 2, &g, &err));
}

TEST(round_trip)
{
	struct dfg_gs_graph a, b;
	struct dfg_gs_file f;
	struct dfg_gs_err err;
	struct scratch s;
	char path[128];

	scratch_make(_metadata, &s);
	scratch_path(&s, path, sizeof(path), "g.dfgg");
	rmat(_metadata, &a, 8, 5, 0);
	free(a.feat);	/* again as u8 */
	free(a.label);
	a.feat = NULL;
	a.label = NULL;
	ASSERT_EQ(0, dfg_gs_make_attrs(&a, 3, DFG_GS_FEAT_U8, 6, 5, &err));
	ASSERT_EQ(0, dfg_gs_save(&a, path, &err)) {
		TH_LOG("%s", err.msg);
	}
	ASSERT_EQ(0, dfg_gs_open(&f, path, &err)) {
		TH_LOG("%s", err.msg);
	}
	EXPECT_EQ(0, f.hdr->sec[DFG_GS_SEC_ROW_PTR].off % DFG_GS_ALIGN);
	EXPECT_EQ(0, f.hdr->flags & DFG_GS_F_UNDIRECTED);
	ASSERT_EQ(0, dfg_gs_load(&b, &f, &err));
	EXPECT_EQ(dfg_gs_graph_id(&a), f.hdr->graph_id);
	EXPECT_EQ(dfg_gs_graph_id(&a), dfg_gs_graph_id(&b));
	ASSERT_EQ(a.n, b.n);
	ASSERT_EQ(a.m, b.m);
	EXPECT_EQ(0, memcmp(a.row_ptr, b.row_ptr, (a.n + 1) * 8));
	EXPECT_EQ(0, memcmp(a.col, b.col, a.m * 8));
	EXPECT_EQ(0, memcmp(a.feat, b.feat, a.n * 3));
	EXPECT_EQ(0, memcmp(a.label, b.label, a.n * 4));
	EXPECT_EQ(DFG_GS_FEAT_U8, b.feat_type);
	EXPECT_EQ(6, b.classes);
	dfg_gs_close(&f);
	dfg_gs_graph_free(&a);
	dfg_gs_graph_free(&b);
	scratch_rm(&s);
}

/*
 * Partition @g into @k with METIS and check every file against what this
 * test computes from g and the assignment alone.
 */
static void check_partition(struct __test_metadata *_metadata,
			    const struct dfg_gs_graph *g, uint32_t k)
{
	struct dfg_gs_part_opts o = { .k = k, .seed = 3 };
	struct dfg_gs_part_result res;
	struct dfg_gs_file f[8];
	struct dfg_gs_err err;
	struct scratch s;
	uint32_t *part = calloc(g->n, sizeof(*part)), p;
	uint64_t *nid = calloc(g->n, sizeof(*nid)), *oid;
	uint64_t base[9] = { 0 }, cnt[8] = { 0 }, cut = 0, hubs = 0;
	bool *hub = calloc(g->n, 1);
	char prefix[128], path[160];
	uint64_t u, v, j, i, r;
	size_t row = dfg_gs_feat_row_bytes(g->feat_dim, g->feat_type);

	ASSERT_TRUE(part && nid && hub && k <= 8);
	oid = calloc(g->n, sizeof(*oid));
	ASSERT_NE(NULL, oid);
	scratch_make(_metadata, &s);
	scratch_path(&s, prefix, sizeof(prefix), "p");
	ASSERT_EQ(0, dfg_gs_assign(g, &o, part, &err)) {
		TH_LOG("%s", err.msg);
	}
	ASSERT_EQ(0, dfg_gs_write_parts(g, part, &o, prefix, &res, &err)) {
		TH_LOG("%s", err.msg);
	}
	/* the independent computation: ranges, new ids, cut endpoints */
	for (u = 0; u < g->n; u++)
		base[part[u] + 1]++;
	for (p = 0; p < k; p++)
		base[p + 1] += base[p];
	for (u = 0; u < g->n; u++) {
		nid[u] = base[part[u]] + cnt[part[u]]++;
		oid[nid[u]] = u;
	}
	for (u = 0; u < g->n; u++)
		for (j = g->row_ptr[u]; j < g->row_ptr[u + 1]; j++)
			if (part[u] != part[g->col[j]]) {
				cut++;
				hub[u] = hub[g->col[j]] = true;
			}
	for (u = 0; u < g->n; u++)
		hubs += hub[u];
	EXPECT_LT(0, cut);
	EXPECT_EQ(cut, res.cut_arcs);
	EXPECT_EQ(hubs, res.hubs);

	for (p = 0; p < k; p++) {
		const struct dfg_gs_hdr *h;

		snprintf(path, sizeof(path), "%s.%u.dfgg", prefix, p);
		ASSERT_EQ(0, dfg_gs_open(&f[p], path, &err)) {
			TH_LOG("%s", err.msg);
		}
		h = f[p].hdr;
		EXPECT_EQ(p, h->part_index);
		EXPECT_EQ(k, h->part_count);
		EXPECT_EQ(base[p], h->node_base);
		EXPECT_EQ(0, memcmp(base, f[p].part_base, (k + 1) * 8));
		EXPECT_EQ(cut, h->cut_arcs);
		EXPECT_EQ(0, h->flags & DFG_GS_F_REP_PARTIAL);
		/* local nodes: lists, attributes, hub bits, original ids */
		for (i = 0; i < h->nodes_local; i++) {
			u = oid[base[p] + i];
			ASSERT_EQ(u, f[p].orig_id[i]);
			ASSERT_EQ(g->row_ptr[u + 1] - g->row_ptr[u],
				  f[p].row_ptr[i + 1] - f[p].row_ptr[i]);
			for (j = f[p].row_ptr[i]; j < f[p].row_ptr[i + 1]; j++)
				ASSERT_TRUE(has_arc(g, u, oid[f[p].col[j]]));
			ASSERT_EQ(hub[u], !!(f[p].hub_mask[i / 64] &
					     (1ULL << (i % 64))));
			ASSERT_EQ(0, memcmp((const char *)g->feat + u * row,
					    (const char *)f[p].feat + i * row,
					    row));
			ASSERT_EQ(g->label[u], f[p].label[i]);
		}
		/* the replica: exactly the hubs owned elsewhere, in id order */
		r = 0;
		for (v = 0; v < g->n; v++) {
			u = oid[v];
			if (!hub[u] || part[u] == p)
				continue;
			ASSERT_GT(h->rep_count, r);
			ASSERT_EQ(v, f[p].rep_id[r]);
			ASSERT_EQ(g->row_ptr[u + 1] - g->row_ptr[u],
				  f[p].rep_row_ptr[r + 1] - f[p].rep_row_ptr[r]);
			for (j = f[p].rep_row_ptr[r]; j < f[p].rep_row_ptr[r + 1];
			     j++)
				ASSERT_TRUE(has_arc(g, u, oid[f[p].rep_col[j]]));
			ASSERT_EQ(0, memcmp((const char *)g->feat + u * row,
					    (const char *)f[p].rep_feat + r * row,
					    row));
			ASSERT_EQ(g->label[u], f[p].rep_label[r]);
			ASSERT_EQ(part[u], dfg_gs_owner(f[p].part_base, k, v));
			r++;
		}
		EXPECT_EQ(r, h->rep_count);
		EXPECT_EQ(r, h->rep_candidates);
	}
	/* one set: every pair matches, a file is not its own peer */
	for (p = 1; p < k; p++)
		EXPECT_EQ(0, dfg_gs_same_set(&f[0], &f[p], &err));
	EXPECT_EQ(-EXDEV, dfg_gs_same_set(&f[1], &f[1], &err));
	for (p = 0; p < k; p++)
		dfg_gs_close(&f[p]);
	free(res.part);
	free(part);
	free(nid);
	free(oid);
	free(hub);
	scratch_rm(&s);
}

TEST(partition_replica_is_cut_endpoints)
{
	struct dfg_gs_graph g;
	struct dfg_gs_err err;
	FILE *f;

	rmat(_metadata, &g, 7, 11, DFG_GS_F_UNDIRECTED);
	check_partition(_metadata, &g, 2);
	check_partition(_metadata, &g, 3);
	dfg_gs_graph_free(&g);
	rmat(_metadata, &g, 8, 12, 0);	/* directed */
	check_partition(_metadata, &g, 4);
	dfg_gs_graph_free(&g);
	/* two triangles joined by one edge: hubs are its two ends */
	f = text("0 1\n1 2\n2 0\n3 4\n4 5\n5 3\n2 3\n");
	ASSERT_EQ(0, dfg_gs_import_snap(&g, f, "t", DFG_GS_F_UNDIRECTED, &err));
	fclose(f);
	ASSERT_EQ(0, dfg_gs_make_attrs(&g, 2, DFG_GS_FEAT_F32, 2, 1, &err));
	check_partition(_metadata, &g, 2);
	dfg_gs_graph_free(&g);
}

TEST(owner_lookup)
{
	const uint64_t base[] = { 0, 3, 3, 7, 10 };	/* part 1 is empty */

	EXPECT_EQ(0, dfg_gs_owner(base, 4, 0));
	EXPECT_EQ(0, dfg_gs_owner(base, 4, 2));
	EXPECT_EQ(2, dfg_gs_owner(base, 4, 3));
	EXPECT_EQ(2, dfg_gs_owner(base, 4, 6));
	EXPECT_EQ(3, dfg_gs_owner(base, 4, 7));
	EXPECT_EQ(3, dfg_gs_owner(base, 4, 9));
}

TEST(hub_scores_by_hand)
{
	/* edges 0-1, 1-2, 0-3; partition 0 = {0, 1}, 1 = {2, 3} */
	const uint32_t part[] = { 0, 0, 1, 1 };
	struct dfg_gs_graph g;
	struct dfg_gs_err err;
	double score[4];
	FILE *f = text("0 1\n1 2\n0 3\n");

	ASSERT_EQ(0, dfg_gs_import_snap(&g, f, "t", DFG_GS_F_UNDIRECTED, &err));
	fclose(f);
	ASSERT_EQ(0, dfg_gs_hub_scores(&g, part, 0, score));
	/* step 1: 1/2 * 1/2 each; step 2: from 0 and 1 (1/4) halved */
	EXPECT_EQ(0.0, score[0]);
	EXPECT_EQ(0.0, score[1]);
	EXPECT_EQ(0.375, score[2]);
	EXPECT_EQ(0.375, score[3]);
	dfg_gs_graph_free(&g);
}

static uint64_t entry_bytes(const struct dfg_gs_graph *g, uint64_t u)
{
	return 16 + 8 * (g->row_ptr[u + 1] - g->row_ptr[u]) +
	       dfg_gs_feat_row_bytes(g->feat_dim, g->feat_type) +
	       (g->label ? 4 : 0);
}

/* Partition 0's replica under @budget: its old ids in *@rep. */
static uint64_t budget_run(struct __test_metadata *_metadata,
			   const struct dfg_gs_graph *g, const uint32_t *part,
			   struct dfg_gs_budget budget, bool *in_rep,
			   uint64_t *bytes)
{
	struct dfg_gs_part_opts o = { .k = 2, .budget = budget };
	struct dfg_gs_part_result res;
	struct dfg_gs_file f;
	struct dfg_gs_err err;
	struct scratch s;
	char prefix[128], path[160];
	uint64_t i, n;

	scratch_make(_metadata, &s);
	scratch_path(&s, prefix, sizeof(prefix), "b");
	ASSERT_EQ(0, dfg_gs_write_parts(g, part, &o, prefix, &res, &err));
	snprintf(path, sizeof(path), "%s.0.dfgg", prefix);
	ASSERT_EQ(0, dfg_gs_open(&f, path, &err)) {
		TH_LOG("%s", err.msg);
	}
	memset(in_rep, 0, g->n);
	*bytes = 0;
	/* part 0 owns 0..n0-1 and part 1 the rest, order kept */
	for (i = 0; i < f.hdr->rep_count; i++) {
		uint64_t rank = f.rep_id[i] - f.hdr->nodes_local, u, seen = 0;

		for (u = 0; u < g->n; u++)
			if (part[u] == 1 && seen++ == rank)
				break;
		in_rep[u] = true;
		*bytes += entry_bytes(g, u);
	}
	n = f.hdr->rep_count;
	EXPECT_EQ(n < f.hdr->rep_candidates,
		  !!(f.hdr->flags & DFG_GS_F_REP_PARTIAL));
	EXPECT_EQ(n, res.part[0].rep_count);
	dfg_gs_close(&f);
	free(res.part);
	scratch_rm(&s);
	return n;
}

/*
 * The budget under @order: hubs go in by key (score, or score per byte)
 * while they fit, so a hub left out that outranks a taken one is bigger.
 */
static void check_budget_order(struct __test_metadata *_metadata, int order)
{
	struct dfg_gs_part_opts o = { .k = 2, .seed = 1 };
	struct dfg_gs_budget bud = { DFG_GS_BUDGET_BYTES, 0, order };
	struct dfg_gs_graph g;
	struct dfg_gs_err err;
	uint64_t u, x, y, used, n, top = UINT64_MAX, all, full;
	uint32_t *part;
	double *key;
	bool *hub, *in;

	rmat(_metadata, &g, 9, 21, DFG_GS_F_UNDIRECTED);
	part = calloc(g.n, sizeof(*part));
	key = calloc(g.n, sizeof(*key));
	hub = calloc(g.n, 1);
	in = calloc(g.n, 1);
	ASSERT_TRUE(part && key && hub && in);
	ASSERT_EQ(0, dfg_gs_assign(&g, &o, part, &err));
	ASSERT_EQ(0, dfg_gs_hub_scores(&g, part, 0, key));
	for (u = 0; u < g.n; u++)
		for (x = g.row_ptr[u]; x < g.row_ptr[u + 1]; x++)
			if (part[u] != part[g.col[x]])
				hub[u] = hub[g.col[x]] = true;
	for (u = 0; u < g.n; u++) {
		if (order == DFG_GS_ORDER_DENSITY)
			key[u] /= (double)entry_bytes(&g, u);
		if (hub[u] && part[u] == 1 &&
		    (top == UINT64_MAX || key[u] > key[top]))
			top = u;
	}
	ASSERT_NE(UINT64_MAX, top);

	/* unlimited: all candidates */
	all = budget_run(_metadata, &g, part,
			 (struct dfg_gs_budget){ DFG_GS_BUDGET_NONE, 0, order },
			 in, &full);
	/* exactly the top hub's bytes: the top hub alone */
	bud.value = entry_bytes(&g, top);
	n = budget_run(_metadata, &g, part, bud, in, &used);
	EXPECT_EQ(1, n);
	EXPECT_TRUE(in[top]);
	/* 0%: nothing */
	n = budget_run(_metadata, &g, part,
		       (struct dfg_gs_budget){ DFG_GS_BUDGET_PCT, 0, order },
		       in, &used);
	EXPECT_EQ(0, n);
	/* a third of the full replica: greedy by key, within budget */
	bud.value = full / 3;
	n = budget_run(_metadata, &g, part, bud, in, &used);
	EXPECT_LT(0, n);
	EXPECT_GT(all, n);
	EXPECT_GE(bud.value, used);
	for (x = 0; x < g.n; x++) {
		if (!hub[x] || part[x] != 1 || in[x])
			continue;
		/* left out: did not fit what was left at the end ... */
		EXPECT_LT(bud.value - used, entry_bytes(&g, x));
		/* ... and outranks a taken hub only by being bigger */
		for (y = 0; y < g.n; y++)
			if (in[y] && (key[x] > key[y] ||
				      (key[x] == key[y] && x < y)))
				ASSERT_LT(entry_bytes(&g, y),
					  entry_bytes(&g, x));
	}
	free(part);
	free(key);
	free(hub);
	free(in);
	dfg_gs_graph_free(&g);
}

TEST(budget_order_score)
{
	check_budget_order(_metadata, DFG_GS_ORDER_SCORE);
}

TEST(budget_order_density)
{
	check_budget_order(_metadata, DFG_GS_ORDER_DENSITY);
}

/* A valid 3-way partition file in memory, for the malformed cases. */
FIXTURE(pfile) {
	struct scratch	s;
	unsigned char	*buf;	/* a copy of partition 1 */
	size_t		size;
	char		prefix[128];
	struct dfg_gs_err err;
	struct dfg_gs_file f;
};

FIXTURE_SETUP(pfile)
{
	struct dfg_gs_part_opts o = { .k = 3, .seed = 1 };
	struct dfg_gs_part_result res;
	struct dfg_gs_graph g;
	uint32_t *part;
	char path[160];
	FILE *f;

	rmat(_metadata, &g, 7, 2, DFG_GS_F_UNDIRECTED);
	part = calloc(g.n, sizeof(*part));
	ASSERT_NE(NULL, part);
	scratch_make(_metadata, &self->s);
	scratch_path(&self->s, self->prefix, sizeof(self->prefix), "m");
	ASSERT_EQ(0, dfg_gs_assign(&g, &o, part, &self->err));
	ASSERT_EQ(0, dfg_gs_write_parts(&g, part, &o, self->prefix, &res,
					&self->err));
	free(res.part);
	free(part);
	dfg_gs_graph_free(&g);
	snprintf(path, sizeof(path), "%s.1.dfgg", self->prefix);
	f = fopen(path, "rb");
	ASSERT_NE(NULL, f);
	fseek(f, 0, SEEK_END);
	self->size = ftell(f);
	rewind(f);
	/* room for one more word, 8-aligned (malloc) */
	self->buf = malloc(self->size + 8);
	ASSERT_NE(NULL, self->buf);
	ASSERT_EQ(self->size, fread(self->buf, 1, self->size, f));
	fclose(f);
	ASSERT_EQ(0, dfg_gs_check(&self->f, self->buf, self->size,
				  &self->err));
}

FIXTURE_TEARDOWN(pfile)
{
	free(self->buf);
	scratch_rm(&self->s);
}

static struct dfg_gs_hdr *H(FIXTURE_DATA(pfile) *self)
{
	return (struct dfg_gs_hdr *)self->buf;
}

static uint64_t *sec64(FIXTURE_DATA(pfile) *self, int i)
{
	return (uint64_t *)(self->buf + H(self)->sec[i].off);
}

/* dfg_gs_check of the (mutated) buffer: @want, and @why in the reason. */
#define EXPECT_BAD(want, why) do {					\
	int __r = dfg_gs_check(&self->f, self->buf, self->size,		\
			       &self->err);				\
	EXPECT_EQ(want, __r);						\
	EXPECT_NE(NULL, strstr(self->err.msg, why)) {			\
		TH_LOG("reason: %s", self->err.msg);			\
	}								\
} while (0)

TEST_F(pfile, truncated)
{
	self->size -= 1;
	EXPECT_BAD(-EBADMSG, "truncated");
	self->size = 100;
	EXPECT_BAD(-EBADMSG, "truncated");
	self->size = 0;
	EXPECT_BAD(-EBADMSG, "truncated");
}

TEST_F(pfile, trailing)
{
	memset(self->buf + self->size, 0, 8);
	self->size += 8;
	EXPECT_BAD(-EBADMSG, "trailing");
}

TEST_F(pfile, bad_magic)
{
	self->buf[0] ^= 1;
	EXPECT_BAD(-EBADMSG, "bad magic");
}

TEST_F(pfile, version)
{
	H(self)->version = 2;
	EXPECT_BAD(-EPROTONOSUPPORT, "version 2");
}

TEST_F(pfile, header_fields)
{
	uint64_t nl = H(self)->nodes_local;

	H(self)->flags |= 0x80;
	EXPECT_BAD(-EBADMSG, "unknown flags");
	H(self)->flags &= ~0x80U;
	H(self)->reserved2[3] = 1;
	EXPECT_BAD(-EBADMSG, "reserved");
	H(self)->reserved2[3] = 0;
	H(self)->sec[DFG_GS_SEC_COUNT].len = 8;
	EXPECT_BAD(-EBADMSG, "unknown section");
	H(self)->sec[DFG_GS_SEC_COUNT].len = 0;
	H(self)->part_index = 3;
	EXPECT_BAD(-EBADMSG, "partition 3 of 3");
	H(self)->part_index = 1;
	H(self)->flags &= ~DFG_GS_F_PARTITION;
	EXPECT_BAD(-EBADMSG, "disagree");
	H(self)->flags |= DFG_GS_F_PARTITION;
	H(self)->feat_type = DFG_GS_FEAT_NONE;
	EXPECT_BAD(-EBADMSG, "feature type");
	H(self)->feat_type = DFG_GS_FEAT_F32;
	H(self)->nodes_local = H(self)->nodes_global + 1;
	EXPECT_BAD(-EBADMSG, "exceed");
	H(self)->nodes_local = UINT64_MAX;
	EXPECT_BAD(-EBADMSG, "exceed");
	H(self)->nodes_local = nl;
	H(self)->edges_global = H(self)->edges_local = 1ULL << 62;
	EXPECT_BAD(-EBADMSG, "overflow");
}

TEST_F(pfile, section_out_of_range)
{
	struct dfg_gs_sec_ent *s = &H(self)->sec[DFG_GS_SEC_REP_FEAT];
	uint64_t off = s->off;

	s->off = self->size;
	EXPECT_BAD(-EBADMSG, "rep_feat: offset");
	s->off = off + 8;	/* misaligned */
	EXPECT_BAD(-EBADMSG, "out of range");
	s->off = UINT64_MAX - 63;
	EXPECT_BAD(-EBADMSG, "out of range");
	s->off = H(self)->sec[DFG_GS_SEC_ROW_PTR].off;	/* overlaps */
	EXPECT_BAD(-EBADMSG, "out of range");
	s->off = off;
	s->len += 4;
	EXPECT_BAD(-EBADMSG, "rep_feat: ");
	EXPECT_NE(NULL, strstr(self->err.msg, "expected"));
}

TEST_F(pfile, csr_contents)
{
	uint64_t *rp = sec64(self, DFG_GS_SEC_ROW_PTR);
	uint64_t *col = sec64(self, DFG_GS_SEC_COL_IDX), r1 = rp[1], c0, r;

	rp[1] = H(self)->edges_local + 1;
	EXPECT_BAD(-EBADMSG, "row pointer");
	rp[1] = r1;
	ASSERT_EQ(0, dfg_gs_check(&self->f, self->buf, self->size,
				  &self->err));
	c0 = col[0];
	col[0] = H(self)->nodes_global;
	EXPECT_BAD(-EBADMSG, "out of range");
	col[0] = c0;
	for (r = 0; rp[r + 1] - rp[r] < 2; r++)	/* a row of two or more */
		ASSERT_GT(H(self)->nodes_local, r + 1);
	col[rp[r]] = col[rp[r] + 1];
	EXPECT_BAD(-EBADMSG, "not sorted");
}

TEST_F(pfile, ids_and_labels)
{
	uint64_t *pb = sec64(self, DFG_GS_SEC_PART_BASE);
	uint64_t *rid = sec64(self, DFG_GS_SEC_REP_ID), r0;
	uint32_t *lab = (uint32_t *)(self->buf +
				     H(self)->sec[DFG_GS_SEC_LABEL].off);

	ASSERT_LT(0, H(self)->rep_count);
	r0 = rid[0];
	rid[0] = H(self)->node_base;	/* a node of this partition */
	EXPECT_BAD(-EBADMSG, "owned here");
	rid[0] = H(self)->nodes_global;
	EXPECT_BAD(-EBADMSG, "rep_id");
	rid[0] = r0;
	pb[1] += 1;
	EXPECT_BAD(-EBADMSG, "part_base");
	pb[1] -= 1;
	lab[0] = H(self)->label_classes;
	EXPECT_BAD(-EBADMSG, "label");
}

TEST_F(pfile, open_errors)
{
	struct dfg_gs_err err;
	struct dfg_gs_graph g;
	struct dfg_gs_file f;
	char path[160];
	FILE *fp;

	scratch_path(&self->s, path, sizeof(path), "none");
	EXPECT_EQ(-ENOENT, dfg_gs_open(&f, path, &err));
	EXPECT_EQ(-EINVAL, dfg_gs_open(&f, self->s.dir, &err));
	scratch_path(&self->s, path, sizeof(path), "empty");
	fp = fopen(path, "w");
	ASSERT_NE(NULL, fp);
	fclose(fp);
	EXPECT_EQ(-EBADMSG, dfg_gs_open(&f, path, &err));
	EXPECT_NE(NULL, strstr(err.msg, "truncated"));
	/* a partition is not a whole graph */
	snprintf(path, sizeof(path), "%s.0.dfgg", self->prefix);
	ASSERT_EQ(0, dfg_gs_open(&f, path, &err));
	EXPECT_EQ(-EINVAL, dfg_gs_load(&g, &f, &err));
	dfg_gs_close(&f);
}

/*
 * Partition 0 of an R-MAT graph (scale 7, @seed) cut @k ways, at
 * @prefix, opened into @f.
 */
static void open_part0(struct __test_metadata *_metadata, uint64_t seed,
		       uint32_t k, const char *prefix, struct dfg_gs_file *f)
{
	struct dfg_gs_part_opts o = { .k = k, .seed = 1 };
	struct dfg_gs_part_result res;
	struct dfg_gs_graph g;
	struct dfg_gs_err err;
	char path[160];
	uint32_t *part;

	rmat(_metadata, &g, 7, seed, DFG_GS_F_UNDIRECTED);
	part = calloc(g.n, sizeof(*part));
	ASSERT_NE(NULL, part);
	ASSERT_EQ(0, dfg_gs_assign(&g, &o, part, &err));
	ASSERT_EQ(0, dfg_gs_write_parts(&g, part, &o, prefix, &res, &err));
	free(res.part);
	free(part);
	dfg_gs_graph_free(&g);
	snprintf(path, sizeof(path), "%s.0.dfgg", prefix);
	ASSERT_EQ(0, dfg_gs_open(f, path, &err));
}

TEST_F(pfile, other_graph)
{
	struct dfg_gs_err err;
	struct dfg_gs_file a;
	char prefix[128];

	/* another graph, partitioned the same way */
	scratch_path(&self->s, prefix, sizeof(prefix), "other");
	open_part0(_metadata, 3, 3, prefix, &a);
	EXPECT_EQ(-EXDEV, dfg_gs_same_set(&a, &self->f, &err));
	EXPECT_NE(NULL, strstr(err.msg, "different graphs"));
	dfg_gs_close(&a);
	/* the same graph, partitioned into 2 */
	scratch_path(&self->s, prefix, sizeof(prefix), "two");
	open_part0(_metadata, 2, 2, prefix, &a);
	EXPECT_EQ(-EXDEV, dfg_gs_same_set(&a, &self->f, &err));
	EXPECT_NE(NULL, strstr(err.msg, "different partitionings"));
	dfg_gs_close(&a);
}

TEST_HARNESS_MAIN
