/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg host tests of hub/ (tests/hub.c, tests/hub_kv.c): partition files
 * of a small R-MAT graph in a scratch directory, and an arena over plain
 * memory. Include after kselftest_harness.h.
 */
#ifndef _DFG_TEST_HUB_PARTS_H
#define _DFG_TEST_HUB_PARTS_H

#include <stdio.h>
#include <stdlib.h>

#include <dfg/dfg.h>

#include "../gstore/gstore.h"

#ifndef ARENA_BYTES
#define ARENA_BYTES	(64u << 20)
#endif

/* Partition files of one R-MAT graph, in a scratch directory. */
struct parts {
	char		dir[64];
	char		path[4][200];
	const char	*paths[4];
	unsigned int	k;
};

/* make_parts() with a replica budget of @pct% of a partition's bytes. */
static void make_parts_budget(struct __test_metadata *_metadata,
			      struct parts *p, const char *tag,
			      unsigned int scale, uint64_t seed,
			      unsigned int k, unsigned int pct)
{
	struct dfg_gs_rmat rp = { .scale = scale, .edge_factor = 8,
				  .seed = seed, .flags = DFG_GS_F_UNDIRECTED };
	struct dfg_gs_part_opts o = { .k = k, .seed = 1 };
	struct dfg_gs_part_result res;
	struct dfg_gs_graph g = { 0 };
	struct dfg_gs_err err;
	char prefix[96];
	uint32_t *part;
	unsigned int i;

	if (pct)
		o.budget = (struct dfg_gs_budget){ DFG_GS_BUDGET_PCT, pct,
						   DFG_GS_ORDER_SCORE };
	snprintf(p->dir, sizeof(p->dir), "/tmp/dfg-hub-%s.XXXXXX", tag);
	ASSERT_NE(NULL, mkdtemp(p->dir));
	ASSERT_EQ(0, dfg_gs_gen_rmat(&g, &rp, NULL, NULL, &err));
	ASSERT_EQ(0, dfg_gs_make_attrs(&g, 6, DFG_GS_FEAT_F32, 5, seed, &err));
	g.graph_id = dfg_gs_graph_id(&g);
	part = calloc(g.n, sizeof(*part));
	ASSERT_NE(NULL, part);
	ASSERT_EQ(0, dfg_gs_assign(&g, &o, part, &err)) {
		TH_LOG("%s", err.msg);
	}
	snprintf(prefix, sizeof(prefix), "%s/g", p->dir);
	ASSERT_EQ(0, dfg_gs_write_parts(&g, part, &o, prefix, &res, &err)) {
		TH_LOG("%s", err.msg);
	}
	free(res.part);
	free(part);
	dfg_gs_graph_free(&g);
	p->k = k;
	for (i = 0; i < k; i++) {
		snprintf(p->path[i], sizeof(p->path[i]), "%s.%u.dfgg", prefix,
			 i);
		p->paths[i] = p->path[i];
	}
}

static void make_parts(struct __test_metadata *_metadata, struct parts *p,
		       const char *tag, unsigned int scale, uint64_t seed,
		       unsigned int k)
{
	make_parts_budget(_metadata, p, tag, scale, seed, k, 0);
}

static void rm_parts(struct parts *p)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p->dir);
	if (system(cmd))
		fprintf(stderr, "# could not remove %s\n", p->dir);
}

/* An arena over plain memory with an allocator. */
static struct dfg_arena *arena_new(struct __test_metadata *_metadata)
{
	struct dfg_arena *a;
	void *mem = NULL;

	ASSERT_EQ(0, posix_memalign(&mem, 4096, ARENA_BYTES));
	ASSERT_EQ(0, dfg_arena_wrap(mem, ARENA_BYTES, 1, &a));
	ASSERT_EQ(0, dfg_alloc_init(a));
	return a;
}

static void arena_free(struct dfg_arena *a)
{
	void *mem = dfg_arena_base(a);

	dfg_arena_unmap(a);
	free(mem);
}

#endif /* _DFG_TEST_HUB_PARTS_H */
