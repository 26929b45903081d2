// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg collectives: the algorithm table, DFG_COLL_ALGO parsing, the
 * segment count, and the arithmetic of folding and recursive halving.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"

/*
 * struct dfg_algo_rule - the first rule matching a call picks its algorithm
 * @kind:	collective
 * @max_bytes:	largest per-rank vector (bytes) the rule covers
 * @algo:	the algorithm
 *
 * Small vectors are latency-bound: one round in which every rank reads
 * what it needs directly (DIRECT) beats log2(N) dependent rounds. Above,
 * patent 002's recursive halving moves and reduces (N-1)/N of the vector
 * per rank, like ring, in log2(N) instead of N-1 dependent rounds.
 */
struct dfg_algo_rule {
	enum dfg_coll_kind	kind;
	size_t			max_bytes;
	enum dfg_coll_algo	algo;
};

static const struct dfg_algo_rule dfg_algo_rules[] = {
	{ DFG_COLL_ALLREDUCE,		4096,		DFG_ALGO_DIRECT },
	{ DFG_COLL_ALLREDUCE,		SIZE_MAX,	DFG_ALGO_RHALVING },
	{ DFG_COLL_REDUCE,		4096,		DFG_ALGO_DIRECT },
	{ DFG_COLL_REDUCE,		SIZE_MAX,	DFG_ALGO_RHALVING },
	{ DFG_COLL_REDUCE_SCATTER,	4096,		DFG_ALGO_DIRECT },
	{ DFG_COLL_REDUCE_SCATTER,	SIZE_MAX,	DFG_ALGO_RHALVING },
	{ DFG_COLL_ALLGATHER,		SIZE_MAX,	DFG_ALGO_DIRECT },
	{ DFG_COLL_BROADCAST,		SIZE_MAX,	DFG_ALGO_DIRECT },
	/* Blocks above the threshold go direct inside the tiles. */
	{ DFG_COLL_ALLTOALL,		SIZE_MAX,	DFG_ALGO_TILES },
};

/* Bit (1 << algo) set where the algorithm implements the kind. */
static const unsigned int dfg_algo_valid[DFG_COLL_KIND_NR] = {
	[DFG_COLL_ALLREDUCE]	  = 1 << DFG_ALGO_RHALVING | 1 << DFG_ALGO_RING |
				    1 << DFG_ALGO_DIRECT,
	[DFG_COLL_REDUCE]	  = 1 << DFG_ALGO_RHALVING | 1 << DFG_ALGO_DIRECT,
	[DFG_COLL_REDUCE_SCATTER] = 1 << DFG_ALGO_RHALVING | 1 << DFG_ALGO_RING |
				    1 << DFG_ALGO_DIRECT,
	[DFG_COLL_ALLGATHER]	  = 1 << DFG_ALGO_RING | 1 << DFG_ALGO_DIRECT,
	[DFG_COLL_BROADCAST]	  = 1 << DFG_ALGO_DIRECT,
	[DFG_COLL_ALLTOALL]	  = 1 << DFG_ALGO_TILES | 1 << DFG_ALGO_DIRECT,
};

bool dfg_coll_algo_valid(enum dfg_coll_kind kind, enum dfg_coll_algo algo)
{
	if ((unsigned int)kind >= DFG_COLL_KIND_NR ||
	    (unsigned int)algo >= DFG_ALGO_NR)
		return false;
	return algo == DFG_ALGO_AUTO || (dfg_algo_valid[kind] >> algo & 1);
}

enum dfg_coll_algo dfg_coll_pick(const struct dfg_team *t,
				 enum dfg_coll_kind kind, size_t bytes)
{
	size_t i;

	if (t->force[kind] != DFG_ALGO_AUTO)
		return t->force[kind];
	for (i = 0; i < sizeof(dfg_algo_rules) / sizeof(dfg_algo_rules[0]);
	     i++) {
		if (dfg_algo_rules[i].kind == kind &&
		    bytes <= dfg_algo_rules[i].max_bytes)
			return dfg_algo_rules[i].algo;
	}
	return DFG_ALGO_DIRECT;
}

static const char *const dfg_kind_names[DFG_COLL_KIND_NR] = {
	[DFG_COLL_ALLREDUCE]		= "allreduce",
	[DFG_COLL_REDUCE]		= "reduce",
	[DFG_COLL_REDUCE_SCATTER]	= "reduce_scatter",
	[DFG_COLL_ALLGATHER]		= "allgather",
	[DFG_COLL_BROADCAST]		= "broadcast",
	[DFG_COLL_ALLTOALL]		= "alltoall",
};

static const char *const dfg_algo_names[DFG_ALGO_NR] = {
	[DFG_ALGO_AUTO]		= "auto",
	[DFG_ALGO_RHALVING]	= "rhalving",
	[DFG_ALGO_RING]		= "ring",
	[DFG_ALGO_DIRECT]	= "direct",
	[DFG_ALGO_TILES]	= "tiles",
};

static int dfg_name_index(const char *s, size_t len,
			  const char *const *names, int nr)
{
	for (int i = 0; i < nr; i++)
		if (strlen(names[i]) == len && !strncmp(s, names[i], len))
			return i;
	return -1;
}

/*
 * "kind=algo" items separated by commas; "segments=N" forces the
 * segment count. Nothing is changed unless the whole string parses.
 */
int dfg_coll_parse_algo(const char *s,
			enum dfg_coll_algo force[DFG_COLL_KIND_NR],
			unsigned int *segments)
{
	enum dfg_coll_algo f[DFG_COLL_KIND_NR];
	unsigned int segs = *segments;

	memcpy(f, force, sizeof(f));
	while (*s) {
		const char *eq = strchr(s, '='), *end = strchr(s, ',');
		int kind, algo;

		if (!end)
			end = s + strlen(s);
		if (!eq || eq > end)
			return -EINVAL;
		if (eq - s == 8 && !strncmp(s, "segments", 8)) {
			char *stop;
			unsigned long v = strtoul(eq + 1, &stop, 10);

			if (stop != end || eq + 1 == end || !v ||
			    v > DFG_SEGMENTS_MAX)
				return -EINVAL;
			segs = v;
		} else {
			kind = dfg_name_index(s, eq - s, dfg_kind_names,
					      DFG_COLL_KIND_NR);
			algo = dfg_name_index(eq + 1, end - eq - 1,
					      dfg_algo_names, DFG_ALGO_NR);
			if (kind < 0 || algo < 0 ||
			    !dfg_coll_algo_valid(kind, algo))
				return -EINVAL;
			f[kind] = algo;
		}
		s = *end ? end + 1 : end;
	}
	memcpy(force, f, sizeof(f));
	*segments = segs;
	return 0;
}

/*
 * Patent 002 cuts each half-exchange into M segments (default 2) so the
 * reduction of one overlaps the transfer of the next, at the cost of one
 * notification per segment: one segment for small vectors, then one per
 * 512 KiB, at least 2, at most 8.
 */
unsigned int dfg_coll_segments(const struct dfg_team *t, size_t bytes)
{
	size_t m;

	if (t->segments)
		return t->segments;
	if (bytes < (64U << 10))
		return 1;
	m = bytes / (512U << 10);
	return m < 2 ? 2 : m > 8 ? 8 : m;
}

void dfg_fold_init(struct dfg_fold *f, unsigned int size)
{
	f->q = 0;
	while ((2U << f->q) <= size)
		f->q++;
	f->p2 = 1U << f->q;
	f->r = size - f->p2;
}

int dfg_fold_vrank(const struct dfg_fold *f, unsigned int rank)
{
	if (rank < 2 * f->r)
		return rank & 1 ? (int)(rank / 2) : -1;
	return rank - f->r;
}

unsigned int dfg_fold_rank(const struct dfg_fold *f, unsigned int v)
{
	return v < f->r ? 2 * v + 1 : v + f->r;
}

void dfg_rh_range(size_t n, unsigned int segs, unsigned int m,
		  unsigned int v, unsigned int steps, size_t *lo, size_t *hi)
{
	size_t l = dfg_block_lo(n, segs, m), h = l + dfg_block_len(n, segs, m);

	for (unsigned int i = 0; i < steps; i++) {
		size_t mid = l + (h - l) / 2;

		if (v >> i & 1)
			h = mid;
		else
			l = mid;
	}
	*lo = l;
	*hi = h;
}
