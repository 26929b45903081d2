// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg collectives: the table of collectives and their algorithms
 * (names, which exist, the automatic choice, the function that runs
 * each), DFG_COLL_ALGO parsing, the segment count, and the arithmetic of
 * folding and recursive halving.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"

/*
 * struct dfg_coll_algodef - one algorithm of one collective
 * @name:	its name in DFG_COLL_ALGO; NULL: the collective has no such
 *		algorithm (dfg_coll_set_algo() refuses it)
 * @auto_max:	the automatic choice for a per-rank vector of n bytes is
 *		the inbox if n <= its @auto_max and the payload fits the
 *		team's inbox slots (dfg_inbox_fits()), else, of the
 *		collective's other algorithms with @auto_max >= n, the one
 *		with the smallest @auto_max; 0: only when forced
 * @run:	runs a call; NULL for all-to-all, which alltoall.c runs
 *		(tiles and direct on its engine, the inbox through
 *		dfg_inbox_alltoall(), put through dfg_put_alltoall())
 *
 * Small vectors are latency-bound: one round in which every rank stores
 * its payload into its peers' inbox slots (INBOX: no export, no key
 * exchange, no DONE round) beats everything else while the payload fits a
 * slot; where there is no inbox (the network transport, teams too large
 * for one), one round in which every rank reads what it needs directly
 * (DIRECT) beats log2(N) dependent rounds. Above,
 * patent 002's recursive halving moves and reduces (N-1)/N of the vector
 * per rank, like ring, in log2(N) instead of N-1 dependent rounds; but
 * reduce_scatter, whose result is one block per rank, takes the direct
 * algorithm at every size (each rank reads its block of every input,
 * one round). All-gather and reduce_scatter take the inbox wherever the
 * payload fits a slot (a block per peer, one message per pair, no shared
 * words, no DONE round); all-to-all takes it for blocks up to INBOX_A2A,
 * in pieces above a slot (a message per pair and piece), and above, the
 * tiles: blocks above their threshold go direct inside them.
 *
 * PUT (alltoall_put.c) exists only where the transport reaches peers by
 * RDMA (fence(), complete_local(), wait_eq(): the network transport):
 * there it is all-to-all's choice at every size and for alltoallv. The
 * tiles were written for shared memory: over the network a call of them
 * at N = 2 was a chain of blocking round trips (about 6 gets, 2 puts,
 * 5 fetching atomics and 2 flushes), 0.03-0.09x Open MPI's time in loaded
 * rig runs, and its flushes and atomics waited for peers that may have
 * left the call (see alltoall_put.c); PUT is one round of puts in flight
 * together, one fence, and a wait for the peers' records. Forced on a
 * shared-memory team it gives the table's choice; tiles and direct can
 * still be forced over the network.
 *
 * HIER (hier.c) exists only on a team that spans machines with several
 * members on some machine (t->hier): there it is the choice at every
 * size, since every other algorithm would send the members of one
 * machine to each other through the network transport (its auto_max of 0
 * keeps it out of the size rule); forced on a team without the
 * hierarchy, the table chooses as if not forced. All-to-all is the
 * exception: its hierarchy runs the put algorithm among the leaders, so
 * it exists only where PUT does, and the table takes it for a fixed
 * all-to-all's blocks up to HIER_A2A only. alltoallv's calls ask with
 * SIZE_MAX bytes (its ranks agree on no size: each knows its own
 * counts), so they take PUT unless HIER is forced: the hierarchy's
 * alltoallv (hier.c) has not been measured against PUT yet.
 */
struct dfg_coll_algodef {
	const char	*name;
	size_t		auto_max;
	int		(*run)(struct dfg_call *c);
};

/* struct dfg_coll_opdef - a collective: its name, its algorithms. */
struct dfg_coll_opdef {
	const char		*name;
	struct dfg_coll_algodef	algo[DFG_ALGO_NR];
};

#define SMALL	4096	/* bytes: direct below, recursive halving above */
/*
 * Bytes per rank up to which the inbox is taken where it fits: measured
 * at N = 2 in the test VM (2 vCPUs), against the previous algorithm in
 * the same job, the inbox won at every size up to its 16 KiB slots (see
 * DESIGN.md, "Collectives: the inbox"), the slot size then. Allreduce,
 * reduce and broadcast keep it: larger slots were not measured there.
 */
#define INBOX	(16U << 10)
/*
 * The inbox wherever the payload fits a slot (xport_shm.c: 256 KiB at
 * N = 2 to 4, 64 KiB at N = 8; 64 KiB at N = 4 and 16 KiB at N = 8 when
 * these figures were taken): for all-to-all, all-gather
 * and reduce_scatter. Measured with coll_vs_mpi -a inbox in the test VM
 * (issue 11; 3 interleaved rounds per point, loaded host, so indications
 * only), inbox time / the table's previous choice: all-to-all (tiles,
 * blocks above 4 KiB exported every call) 0.22-0.67 at N = 2 for
 * 64-512 KiB and 0.46 at N = 4 for 256 KiB; all-gather (direct, staged,
 * a DONE round) 0.67 at N = 4 for 256 KiB, within the noise at N = 2;
 * reduce_scatter (recursive halving) 0.35-0.69 at N = 2 for 32-512 KiB
 * but one point at 1.35, 0.65-0.97 at N = 4 for 64-256 KiB.
 */
#define INBOX_FIT	SIZE_MAX
/*
 * All-to-all's blocks up to which the inbox is taken, in pieces above a
 * slot (inbox.c): two copies of each block, where the tiles read a block
 * above their threshold straight from the source's buffer (one copy) but
 * export that buffer and map it in every peer at every call. Measured
 * with coll_vs_mpi -a tiles in the test VM (issue 11; one job per N,
 * 7 rounds, heavily loaded host: indications), tiles time / pieces',
 * median per point: N = 8, blocks of 128 KiB-1 MiB 1.5-5.5; N = 4,
 * 512 KiB and 1 MiB blocks 3.3 and 2.2; N = 2, 512 KiB-2 MiB blocks
 * 1.1-1.9, but 4 and 8 MiB blocks 0.77 and 0.56: the second copy costs
 * more than the export there.
 */
#define INBOX_A2A	(2U << 20)
/*
 * All-to-all's blocks up to which a team with a hierarchy takes it
 * (hier.c: the leaders exchange one message per pair of machines, on
 * the put algorithm, so it needs what PUT needs); above, PUT.
 */
#define HIER_A2A	(2U << 10)

static const struct dfg_coll_opdef dfg_coll_opdefs[DFG_COLL_KIND_NR] = {
	[DFG_COLL_ALLREDUCE] = { "allreduce", {
		[DFG_ALGO_DIRECT]	= { "direct", SMALL,
					    dfg_direct_allreduce },
		[DFG_ALGO_RHALVING]	= { "rhalving", SIZE_MAX,
					    dfg_rh_allreduce },
		[DFG_ALGO_RING]		= { "ring", 0, dfg_ring_allreduce },
		[DFG_ALGO_INBOX]	= { "inbox", INBOX,
					    dfg_inbox_allreduce },
		[DFG_ALGO_HIER]		= { "hier", 0, dfg_hier_allreduce },
	} },
	/* the allreduce algorithms, the result kept on the root only */
	[DFG_COLL_REDUCE] = { "reduce", {
		[DFG_ALGO_DIRECT]	= { "direct", SMALL,
					    dfg_direct_allreduce },
		[DFG_ALGO_RHALVING]	= { "rhalving", SIZE_MAX,
					    dfg_rh_allreduce },
		[DFG_ALGO_INBOX]	= { "inbox", INBOX,
					    dfg_inbox_allreduce },
		[DFG_ALGO_HIER]		= { "hier", 0, dfg_hier_allreduce },
	} },
	/*
	 * Above the inbox, direct: each rank reads its block of every
	 * input once, in one round (recursive halving reduces a segment
	 * layout that is not the block layout, then collects its block
	 * from the owners). coll_vs_mpi -a direct in the test VM (issue 11,
	 * 3 rounds, loaded host): direct / recursive halving 0.31-0.69 at
	 * N = 4 for 64 KiB-1 MiB, 0.78-0.82 at N = 2 for 1-4 MiB (but
	 * 1.6-2.2 at 256-512 KiB, where the inbox now runs). N = 8 and the
	 * network transport (get() instead of loads) not measured.
	 */
	[DFG_COLL_REDUCE_SCATTER] = { "reduce_scatter", {
		[DFG_ALGO_DIRECT]	= { "direct", SIZE_MAX,
					    dfg_direct_reduce_scatter },
		[DFG_ALGO_RHALVING]	= { "rhalving", 0,
					    dfg_rh_reduce_scatter },
		[DFG_ALGO_RING]		= { "ring", 0,
					    dfg_ring_reduce_scatter },
		[DFG_ALGO_INBOX]	= { "inbox", INBOX_FIT,
					    dfg_inbox_reduce_scatter },
		[DFG_ALGO_HIER]		= { "hier", 0,
					    dfg_hier_reduce_scatter },
	} },
	[DFG_COLL_ALLGATHER] = { "allgather", {
		[DFG_ALGO_DIRECT]	= { "direct", SIZE_MAX,
					    dfg_direct_allgather },
		[DFG_ALGO_RING]		= { "ring", 0, dfg_ring_allgather },
		[DFG_ALGO_INBOX]	= { "inbox", INBOX_FIT,
					    dfg_inbox_allgather },
		[DFG_ALGO_HIER]		= { "hier", 0, dfg_hier_allgather },
	} },
	[DFG_COLL_BROADCAST] = { "broadcast", {
		[DFG_ALGO_DIRECT]	= { "direct", SIZE_MAX,
					    dfg_direct_broadcast },
		[DFG_ALGO_INBOX]	= { "inbox", INBOX,
					    dfg_inbox_broadcast },
		[DFG_ALGO_HIER]		= { "hier", 0, dfg_hier_broadcast },
	} },
	/* fixed blocks only: alltoallv always takes the engine */
	[DFG_COLL_ALLTOALL] = { "alltoall", {
		[DFG_ALGO_TILES]	= { "tiles", SIZE_MAX, NULL },
		[DFG_ALGO_DIRECT]	= { "direct", 0, NULL },
		[DFG_ALGO_INBOX]	= { "inbox", INBOX_A2A, NULL },
		[DFG_ALGO_PUT]		= { "put", 0, NULL },
		[DFG_ALGO_HIER]		= { "hier", 0, NULL },
	} },
	/* no payload: dissemination over the team's words, or hier */
	[DFG_COLL_BARRIER] = { "barrier", {
		[DFG_ALGO_DIRECT]	= { "direct", SIZE_MAX,
					    dfg_coll_barrier },
		[DFG_ALGO_HIER]		= { "hier", 0, dfg_hier_barrier },
	} },
};

bool dfg_coll_algo_valid(enum dfg_coll_kind kind, enum dfg_coll_algo algo)
{
	if ((unsigned int)kind >= DFG_COLL_KIND_NR ||
	    (unsigned int)algo >= DFG_ALGO_NR)
		return false;
	return algo == DFG_ALGO_AUTO || dfg_coll_opdefs[kind].algo[algo].name;
}

enum dfg_coll_algo dfg_coll_pick(const struct dfg_team *t,
				 enum dfg_coll_kind kind, size_t bytes)
{
	const struct dfg_coll_algodef *a = dfg_coll_opdefs[kind].algo;
	enum dfg_coll_algo best = DFG_ALGO_DIRECT;
	size_t best_max = 0;
	int i;

	/* A forced inbox that the payload does not fit: the table's choice. */
	if (t->force[kind] == DFG_ALGO_INBOX &&
	    dfg_inbox_fits(t, kind, bytes))
		return DFG_ALGO_INBOX;
	if (t->force[kind] != DFG_ALGO_AUTO &&
	    t->force[kind] != DFG_ALGO_INBOX &&
	    t->force[kind] != DFG_ALGO_HIER &&
	    t->force[kind] != DFG_ALGO_PUT)
		return t->force[kind];
	/* Here the force is auto or does not apply (inbox, hier, put). */
	if (kind == DFG_COLL_ALLTOALL && t->hier && dfg_put_fits(t) &&
	    (t->force[kind] == DFG_ALGO_HIER ||
	     (t->force[kind] == DFG_ALGO_AUTO && bytes <= HIER_A2A)))
		return DFG_ALGO_HIER;
	if (a[DFG_ALGO_PUT].name && dfg_put_fits(t))
		return DFG_ALGO_PUT;
	if (t->hier && a[DFG_ALGO_HIER].name && kind != DFG_COLL_ALLTOALL &&
	    (t->force[kind] == DFG_ALGO_AUTO ||
	     t->force[kind] == DFG_ALGO_HIER))
		return DFG_ALGO_HIER;
	if (a[DFG_ALGO_INBOX].name && bytes <= a[DFG_ALGO_INBOX].auto_max &&
	    dfg_inbox_fits(t, kind, bytes))
		return DFG_ALGO_INBOX;
	for (i = DFG_ALGO_AUTO + 1; i < DFG_ALGO_NR; i++) {
		if (!a[i].name || !a[i].auto_max || bytes > a[i].auto_max ||
		    i == DFG_ALGO_INBOX || i == DFG_ALGO_HIER ||
		    i == DFG_ALGO_PUT)
			continue;
		if (!best_max || a[i].auto_max < best_max) {
			best = i;
			best_max = a[i].auto_max;
		}
	}
	return best;
}

int dfg_coll_run(struct dfg_call *c)
{
	return dfg_coll_opdefs[c->kind].algo[c->algo].run(c);
}

/* Is @name (may be NULL) the @len bytes at @s? */
static bool dfg_name_is(const char *name, const char *s, size_t len)
{
	return name && strlen(name) == len && !strncmp(s, name, len);
}

/* The collective named by the @len bytes at @s, or -1. */
static int dfg_kind_of(const char *s, size_t len)
{
	for (int i = 0; i < DFG_COLL_KIND_NR; i++)
		if (dfg_name_is(dfg_coll_opdefs[i].name, s, len))
			return i;
	return -1;
}

/* @kind's algorithm named by the @len bytes at @s ("auto" too), or -1. */
static int dfg_algo_of(enum dfg_coll_kind kind, const char *s, size_t len)
{
	if (dfg_name_is("auto", s, len))
		return DFG_ALGO_AUTO;
	for (int i = DFG_ALGO_AUTO + 1; i < DFG_ALGO_NR; i++)
		if (dfg_name_is(dfg_coll_opdefs[kind].algo[i].name, s, len))
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
			kind = dfg_kind_of(s, eq - s);
			algo = kind < 0 ? -1 :
			       dfg_algo_of(kind, eq + 1, end - eq - 1);
			if (algo < 0)
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
