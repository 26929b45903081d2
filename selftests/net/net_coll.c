// SPDX-License-Identifier: GPL-2.0
/*
 * dfg's collectives on a team formed with dfg_team_from_mpi() across the
 * rig's nodes (a network team over UCX), every result compared bit for
 * bit with a serial reference in the algorithm's reduction order
 * (libdfg/tests/coll_ref.h): allreduce (recursive halving and the
 * table's choice), reduce_scatter, allgather, broadcast, barrier,
 * alltoall and alltoallv, for several types and ops, 1 element to 1 MiB
 * (alltoall's blocks are bytes, whatever their type).
 *
 * With several ranks on some node (and more than one node), the team is
 * hierarchical: each node's ranks share a kernel team, the nodes' lowest
 * ranks talk over UCX (DFG_ALGO_HIER, the default there); every
 * hierarchical collective is then run too, checked against the
 * hierarchy's serial order (ref_hier(), the nodes from MPI's shared-memory
 * split), and the table's choice must be hier; allgather and barrier run
 * both hierarchical and flat (forced direct), the allgather's layout
 * checked against rank order in both; alltoall runs the table's choice
 * (hier up to 2 KiB blocks) and hier forced, at every size; alltoallv
 * the table's choice (put) and hier forced in elements of 4 and 8 bytes,
 * 1 element to the largest size.
 *
 *	net_coll [pmix] [MAX_BYTES]
 *				the team from dfg_team_from_mpi(), or with
 *				"pmix" from dfg_team_from_pmix() (its rank
 *				and size must be MPI's); every rank prints
 *				its failures; rank 0
 *				prints "net_coll ok <ranks> <checks>"
 *				when all ranks passed, and the exit status
 *				is 0 only then
 *	net_coll die RANK [alltoall]
 *				rank RANK exits (no MPI_Finalize, no
 *				dfg_team_leave) after a few collectives,
 *				before a barrier (with "alltoall": before an
 *				alltoall); the
 *				others must fail with -EOWNERDEAD and print
 *				"survivor <rank> <errno> <ms> <why> <who>
 *				<clock>", <ms> from their last successful
 *				call to the error (the death is at most one
 *				call after it), <why> and <who> what
 *				dfg_team_failure() says (killed, the rank),
 *				<clock> the machine's CLOCK_MONOTONIC in ms
 *				at the error; run it under mpirun
 *				--enable-recovery
 *	net_coll linkdown RANK	rank RANK sets its node's eth0 down for
 *				20 s after a few allreduces; every rank must
 *				fail (any error) and prints "linkdown <rank>
 *				<errno> <ms> <why> <who> <clock>" as above
 *	net_coll mismatch N	only the mismatched calls, N times: each
 *				rank's allreduce, allgather and alltoall
 *				counts differ (and, hierarchical, two
 *				alltoallv pairs' counts, in the first 4
 *				rounds), every rank must
 *				fail them
 *				and go on (a barrier, a good allreduce)
 *	net_coll alltoall N [mpi]
 *				only alltoall, N calls in a row at each of
 *				blocks of 8 B to 4 KiB, every result
 *				checked; with "mpi", each followed by an
 *				MPI_Alltoall on the same buffers (as the
 *				benchmark does: a rank that left dfg's call
 *				sits in MPI, not progressing dfg's UCX)
 *	net_coll nojoin RANK	rank RANK never forms the team (PMIx); the
 *				others' dfg_team_from_pmix() must fail with
 *				-ETIMEDOUT after DFG_TEAM_TIMEOUT_MS and print
 *				"nojoin <rank> <errno> <ms> <why> <who>",
 *				<ms> the time the call took, <why> and <who>
 *				dfg_team_failure(NULL)'s
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include <dfg/coll_mpi.h>

#include "coll_ref.h"

static int rank, size, checks, failures;
/* Per rank, the lowest rank on its node (from MPI); nodes; hierarchical. */
static unsigned int *node_key;
static int nodes;
static bool hier;
/* The team, for the reason of an unexpected failure. */
static struct dfg_team *team;

static void bad(const char *what, size_t n, int ret)
{
	struct dfg_team_failure f;

	failures++;
	if (!ret || !team || dfg_team_failure(team, &f))
		f = (struct dfg_team_failure){ .what = -1, .rank = -1 };
	fprintf(stderr, "rank %d: %s n=%zu: %s (reason %s, rank %d)\n", rank,
		what, n, ret ? strerror(-ret) : "wrong result",
		dfg_team_fail_name(f.what), f.rank);
}

static void check(int ok, const char *what, size_t n, int ret)
{
	checks++;
	if (!ok || ret)
		bad(what, n, ret);
}

/* Every rank's input, @bytes each (rounded up to whole elements). */
static void **inputs(size_t bytes)
{
	void **in = calloc(size, sizeof(*in));

	for (int r = 0; in && r < size; r++) {
		in[r] = malloc(bytes + 8);
		if (!in[r])
			exit(2);
	}
	if (!in)
		exit(2);
	return in;
}

static void free_inputs(void **in)
{
	for (int r = 0; r < size; r++)
		free(in[r]);
	free(in);
}

static unsigned int call;

/* The serial reference in the order of the algorithm @t's last @kind took. */
static void ref_team(struct dfg_team *t, enum dfg_coll_kind kind,
		     void *const *in, size_t n, const struct dfg_reducer *red,
		     void *out)
{
	if (dfg_coll_last_algo(t, kind) == DFG_ALGO_HIER)
		ref_hier(size, node_key, in, n, red, out);
	else
		ref_reduce(ref_order(t, kind), size, in, n, red, out);
}

/* allreduce and reduce_scatter of @n elements (per rank for the latter). */
static void reductions(struct dfg_team *t, enum dfg_dtype dt, int op,
		       size_t n, enum dfg_coll_algo force)
{
	struct dfg_reducer red;
	void **in;
	char *rbuf, *ref;
	size_t e;
	int ret;

	dfg_reducer_get(op, dt, &red);
	e = red.esize;
	in = inputs(n * size * e);
	rbuf = malloc(n * size * e);
	ref = malloc(n * size * e);
	if (!rbuf || !ref)
		exit(2);
	call++;
	for (int r = 0; r < size; r++)
		ref_fill(in[r], n * size, dt, r, call);
	dfg_coll_set_algo(t, DFG_COLL_ALLREDUCE, force);
	dfg_coll_set_algo(t, DFG_COLL_REDUCE_SCATTER, force);
	ret = dfg_allreduce(t, in[rank], rbuf, n, dt, op);
	ref_team(t, DFG_COLL_ALLREDUCE, in, n, &red, ref);
	check(!memcmp(ref, rbuf, n * e), "allreduce", n, ret);
	/* In place. */
	memcpy(rbuf, in[rank], n * e);
	ret = dfg_allreduce(t, DFG_IN_PLACE, rbuf, n, dt, op);
	check(!memcmp(ref, rbuf, n * e), "allreduce in place", n, ret);
	/* reduce to every root, hierarchical runs only (flat: host tests) */
	for (int root = 0; hier && force == DFG_ALGO_HIER && root < size;
	     root++) {
		memset(rbuf, 0, n * e);
		ret = dfg_reduce(t, in[rank], rbuf, n, dt, op, root);
		check(rank != root || !memcmp(ref, rbuf, n * e), "reduce", n,
		      ret);
	}
	ret = dfg_reduce_scatter(t, in[rank], rbuf, n, dt, op);
	ref_team(t, DFG_COLL_REDUCE_SCATTER, in, n * size, &red, ref);
	check(!memcmp(ref + rank * n * e, rbuf, n * e), "reduce_scatter", n,
	      ret);
	/* where the hierarchy exists, the table takes it */
	if (hier && force != DFG_ALGO_RHALVING)
		check(dfg_coll_last_algo(t, DFG_COLL_ALLREDUCE) ==
		      DFG_ALGO_HIER && dfg_coll_last_algo(t,
		      DFG_COLL_REDUCE_SCATTER) == DFG_ALGO_HIER,
		      "hier chosen", n, 0);
	free_inputs(in);
	free(rbuf);
	free(ref);
}

/* Bytes rank @i sends rank @j in alltoallv: 0..@b, uneven. */
static size_t vcount(int i, int j, size_t b)
{
	return b * ((i + 2 * j) % 3) / 2;
}

/*
 * alltoallv: rank i's block for j is vcount(i, j) bytes of its input,
 * packed in rank order; it lands packed in source order.
 */
static void alltoallv(struct dfg_team *t, void **in, size_t b, char *rbuf)
{
	size_t sc[64], sd[64], rc[64], rd[64], so = 0, ro = 0;
	int ret, ok = 1;

	for (int j = 0; j < size; j++) {
		sc[j] = vcount(rank, j, b);
		sd[j] = so;
		so += sc[j];
		rc[j] = vcount(j, rank, b);
		rd[j] = ro;
		ro += rc[j];
	}
	ret = dfg_alltoallv(t, in[rank], sc, sd, rbuf, rc, rd);
	for (int i = 0; i < size; i++) {
		size_t off = 0;

		for (int j = 0; j < rank; j++)
			off += vcount(i, j, b);
		ok &= !memcmp(rbuf + rd[i], (char *)in[i] + off, rc[i]);
	}
	check(ok, "alltoallv", b, ret);
}

/*
 * The hierarchy's alltoallv, forced, in elements of @es bytes: rank i
 * sends j vcount(i, j, e) elements, e = @b / @es (at least 1: 0 to 1
 * element at the smallest), from inputs of its own; every block bit for
 * bit where it belongs, the gaps between blocks untouched.
 */
static void alltoallv_hier(struct dfg_team *t, size_t b, size_t es)
{
	size_t e = b / es ? b / es : 1, sc[64], sd[64], rc[64], rd[64];
	size_t so = 0, ro = 0;
	void **in = inputs(e * es * size);
	char *rbuf = malloc(e * es * size + 8 * size);
	int ret, ok = 1;

	if (!rbuf)
		exit(2);
	call++;
	for (int r = 0; r < size; r++)
		ref_fill(in[r], (e * es * size + 3) / 4, DFG_INT32, r, call);
	for (int j = 0; j < size; j++) {
		sc[j] = vcount(rank, j, e) * es;
		sd[j] = so;
		so += sc[j];
		rc[j] = vcount(j, rank, e) * es;
		rd[j] = ro;
		ro += rc[j] + 8;
	}
	memset(rbuf, 0x3c, ro);
	dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, DFG_ALGO_HIER);
	ret = dfg_alltoallv(t, in[rank], sc, sd, rbuf, rc, rd);
	ok = dfg_coll_last_algo(t, DFG_COLL_ALLTOALL) == DFG_ALGO_HIER;
	dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, DFG_ALGO_AUTO);
	for (int i = 0; i < size; i++) {
		size_t off = 0;

		for (int j = 0; j < rank; j++)
			off += vcount(i, j, e) * es;
		ok &= !memcmp(rbuf + rd[i], (char *)in[i] + off, rc[i]);
		for (size_t g = 0; g < 8; g++)
			ok &= rbuf[rd[i] + rc[i] + g] == 0x3c;
	}
	check(ok, es == 4 ? "alltoallv hier, 4-byte elements" :
	      "alltoallv hier, 8-byte elements", e, ret);
	free_inputs(in);
	free(rbuf);
}

/* Every rank's @b bytes of @in, in rank order, at @rbuf? */
static int gathered(const char *rbuf, void **in, size_t b)
{
	int ok = 1;

	for (int r = 0; r < size; r++)
		ok &= !memcmp(rbuf + r * b, in[r], b);
	return ok;
}

/* allgather, broadcast from every root, alltoall(v): @b bytes per rank. */
static void moves(struct dfg_team *t, size_t b)
{
	void **in = inputs(b * size);
	char *rbuf = malloc(b * size), *sbuf = malloc(b * size);
	int ret, ok;

	if (!rbuf || !sbuf)
		exit(2);
	call++;
	for (int r = 0; r < size; r++)
		ref_fill(in[r], (b * size + 3) / 4, DFG_INT32, r, call);
	/*
	 * allgather: the table's choice (hier where the hierarchy exists),
	 * in place too, and, on a hierarchical team, the flat one: the
	 * same layout, rank order, whatever the machines' order.
	 */
	ret = dfg_allgather(t, in[rank], rbuf, b);
	check(gathered(rbuf, in, b), "allgather", b, ret);
	if (hier)
		check(dfg_coll_last_algo(t, DFG_COLL_ALLGATHER) ==
		      DFG_ALGO_HIER, "allgather hier chosen", b, 0);
	memset(rbuf, 0xa5, b * size);
	memcpy(rbuf + rank * b, in[rank], b);
	ret = dfg_allgather(t, DFG_IN_PLACE, rbuf, b);
	check(gathered(rbuf, in, b), "allgather in place", b, ret);
	if (hier) {
		dfg_coll_set_algo(t, DFG_COLL_ALLGATHER, DFG_ALGO_DIRECT);
		memset(rbuf, 0x5a, b * size);
		ret = dfg_allgather(t, in[rank], rbuf, b);
		check(gathered(rbuf, in, b) &&
		      dfg_coll_last_algo(t, DFG_COLL_ALLGATHER) ==
		      DFG_ALGO_DIRECT, "allgather flat", b, ret);
		dfg_coll_set_algo(t, DFG_COLL_ALLGATHER, DFG_ALGO_AUTO);
	}
	for (int root = 0; root < size; root++) {
		memcpy(rbuf, in[rank], b);
		ret = dfg_broadcast(t, rbuf, b, root);
		check(!memcmp(rbuf, in[root], b), "broadcast", b, ret);
	}
	if (hier)
		check(dfg_coll_last_algo(t, DFG_COLL_BROADCAST) ==
		      DFG_ALGO_HIER, "broadcast hier chosen", b, 0);
	/*
	 * alltoall: block j of rank i's input lands as block i on rank j;
	 * the table's choice (hier up to 2 KiB blocks where the hierarchy
	 * exists, else put), and there hier forced at every size: each
	 * pair of nodes' blocks in one message between their leaders.
	 */
	for (int k = 0; k < 1 + hier; k++) {
		dfg_coll_set_algo(t, DFG_COLL_ALLTOALL,
				  k ? DFG_ALGO_HIER : DFG_ALGO_AUTO);
		memcpy(sbuf, in[rank], b * size);
		memset(rbuf, 0x3c, b * size);
		ret = dfg_alltoall(t, sbuf, rbuf, b);
		ok = !hier || (dfg_coll_last_algo(t, DFG_COLL_ALLTOALL) ==
			       DFG_ALGO_HIER) == (k || b <= 2048);
		for (int r = 0; r < size; r++)
			ok &= !memcmp(rbuf + r * b, (char *)in[r] + rank * b,
				      b);
		check(ok, k ? "alltoall hier" : "alltoall", b, ret);
	}
	dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, DFG_ALGO_AUTO);
	alltoallv(t, in, b, rbuf);
	if (hier) {
		alltoallv_hier(t, b, 4);
		alltoallv_hier(t, b, 8);
	}
	check(1, "barrier", b, dfg_barrier(t));
	if (hier) {
		check(dfg_coll_last_algo(t, DFG_COLL_BARRIER) ==
		      DFG_ALGO_HIER, "barrier hier chosen", b, 0);
		dfg_coll_set_algo(t, DFG_COLL_BARRIER, DFG_ALGO_DIRECT);
		check(1, "barrier flat", b, dfg_barrier(t));
		dfg_coll_set_algo(t, DFG_COLL_BARRIER, DFG_ALGO_AUTO);
	}
	free_inputs(in);
	free(rbuf);
	free(sbuf);
}

/*
 * Mismatched counts, @rounds times: an error on every rank, and the team
 * goes on (a barrier, then a good call). A rank that decided the team
 * was dead while the others went on, or one left waiting, shows here: a
 * failed barrier, or a job that hangs (rig_node0.sh's timeout).
 */
/* The last call failed for a mismatch, and says so. */
static bool why_mismatch(struct dfg_team *t)
{
	struct dfg_team_failure f;

	return !dfg_team_failure(t, &f) && f.what == DFG_TEAM_FAIL_MISMATCH &&
	       f.rank >= 0 && f.rank < size && f.err == EINVAL;
}

static void mismatches(struct dfg_team *t, int rounds)
{
	double v[80] = { 0 }, out[80 * 64];
	int ret;

	for (int i = 0; i < rounds; i++) {
		/* -EINVAL on every rank: the finder tells the others why */
		ret = dfg_allreduce(t, v, out, 64 + rank, DFG_FLOAT64,
				    DFG_SUM);
		check(ret == -EINVAL && why_mismatch(t), "mismatch", 64,
		      ret == -EINVAL ? 0 : ret);
		check(1, "barrier after mismatch", 0, dfg_barrier(t));
		ret = dfg_allreduce(t, v, out, 80, DFG_FLOAT64, DFG_SUM);
		check(!ret && !out[0], "allreduce after mismatch", 80, ret);
		/* allgather's blocks disagree: hierarchical where it exists */
		ret = dfg_allgather(t, v, out, 64 + rank);
		check(ret == -EINVAL && why_mismatch(t), "allgather mismatch",
		      64, ret == -EINVAL ? 0 : ret);
		check(1, "barrier after allgather mismatch", 0,
		      dfg_barrier(t));
		/*
		 * alltoall's blocks disagree (every rank sees every block,
		 * or hierarchical: every node's and leader's), then rank 1's
		 * arguments are unusable: -EINVAL on every rank, told why
		 */
		ret = dfg_alltoall(t, v, out, 64 + rank);
		check(ret == -EINVAL && why_mismatch(t), "alltoall mismatch",
		      64, ret == -EINVAL ? 0 : ret);
		ret = dfg_alltoall(t, rank == 1 ? DFG_IN_PLACE : v, out, 64);
		check(ret == -EINVAL && why_mismatch(t),
		      "alltoall unusable arguments", 64,
		      ret == -EINVAL ? 0 : ret);
		ret = dfg_alltoall(t, v, out, 64);
		check(!ret && !out[0], "alltoall after mismatch", 64, ret);
		if (hier)
			check(dfg_coll_last_algo(t, DFG_COLL_ALLTOALL) ==
			      DFG_ALGO_HIER, "alltoall hier chosen", 64, 0);
		/*
		 * Hierarchical alltoallv (forced): rank 0 expects a byte more from
		 * the last rank (on the other node), then the last rank a
		 * byte more from the one before it (its own node, or the
		 * other with --map-by node): -EINVAL on every rank, told
		 * why, whichever pair; then a good one. In the first 4
		 * rounds only: the rig's time.
		 */
		if (hier && i < 4)
			dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, DFG_ALGO_HIER);
		for (int k = 0; hier && i < 4 && k < 3; k++) {
			size_t c[64], d[64], rcnt[64];

			for (int j = 0; j < size; j++) {
				c[j] = rcnt[j] = 8;
				d[j] = 8 * j;
			}
			if (k == 0 && rank == 0)
				rcnt[size - 1]++;
			if (k == 1 && rank == size - 1)
				rcnt[size - 2]++;
			ret = dfg_alltoallv(t, v, c, d, out, rcnt, d);
			if (k < 2)
				check(ret == -EINVAL && why_mismatch(t),
				      "alltoallv hier mismatch", 8,
				      ret == -EINVAL ? 0 : ret);
			else
				check(!ret, "alltoallv hier after mismatch", 8,
				      ret);
			check(dfg_coll_last_algo(t, DFG_COLL_ALLTOALL) ==
			      DFG_ALGO_HIER, "alltoallv hier forced", 8, 0);
		}
		dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, DFG_ALGO_AUTO);
	}
}

/*
 * alltoall, @rounds calls back to back at each of a few small blocks
 * (the tiles' sizes), every result checked: a call that hangs across the
 * nodes shows as a job that does not end (rig_node0.sh's timeout).
 */
static void alltoalls(struct dfg_team *t, int rounds, bool mpi)
{
	static const size_t blocks[] = { 8, 64, 512, 1024, 4096 };

	for (size_t k = 0; k < sizeof(blocks) / sizeof(*blocks); k++) {
		size_t b = blocks[k];
		void **in = inputs(b * size);
		char *rbuf = malloc(b * size);
		int ret, ok;

		if (!rbuf)
			exit(2);
		for (int i = 0; i < rounds; i++) {
			call++;
			for (int r = 0; r < size; r++)
				ref_fill(in[r], (b * size + 3) / 4, DFG_INT32,
					 r, call);
			ret = dfg_alltoall(t, in[rank], rbuf, b);
			ok = 1;
			for (int r = 0; r < size; r++)
				ok &= !memcmp(rbuf + r * b,
					      (char *)in[r] + rank * b, b);
			check(ok, "alltoall loop", b, ret);
			if (!mpi)
				continue;
			memset(rbuf, 0, b * size);
			ret = MPI_Alltoall(in[rank], (int)b, MPI_BYTE, rbuf,
					   (int)b, MPI_BYTE, MPI_COMM_WORLD);
			ok = ret == MPI_SUCCESS;
			for (int r = 0; r < size; r++)
				ok &= !memcmp(rbuf + r * b,
					      (char *)in[r] + rank * b, b);
			check(ok, "MPI_Alltoall loop", b, 0);
		}
		free_inputs(in);
		free(rbuf);
	}
}

/*
 * node_key[], nodes, hier: from MPI's shared-memory split, independent of
 * the library's own view of the machines.
 */
static void find_nodes(void)
{
	unsigned int mine;
	MPI_Comm local;
	int low;

	node_key = calloc(size, sizeof(*node_key));
	if (!node_key ||
	    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
				MPI_INFO_NULL, &local) != MPI_SUCCESS ||
	    MPI_Allreduce(&rank, &low, 1, MPI_INT, MPI_MIN, local) !=
	    MPI_SUCCESS)
		exit(2);
	MPI_Comm_free(&local);
	mine = (unsigned int)low;
	if (MPI_Allgather(&mine, 1, MPI_UNSIGNED, node_key, 1, MPI_UNSIGNED,
			  MPI_COMM_WORLD) != MPI_SUCCESS)
		exit(2);
	for (int r = 0; r < size; r++)
		nodes += node_key[r] == (unsigned int)r;
	hier = nodes > 1 && nodes < size;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * Collectives until one fails (at most 120 s), rank @victim doing @harm
 * after 20 of them; each rank reports "@what <rank> <errno> <ms> <why>
 * <who> <clock>" (see the top of the file).
 */
static int fail_loop(struct dfg_team *t, int victim, const char *what,
		     void (*harm)(void), int expect, bool a2a)
{
	double v[64] = { 0 }, out[64], *all = malloc(sizeof(v) * size);
	double *all2 = calloc(size, sizeof(v));
	long long last = now_ms(), t0 = last;
	struct dfg_team_failure f;
	int ret = 0;

	if (!all || !all2)
		exit(2);
	/*
	 * allreduce, allgather, barrier, alltoall in turn: the victim's
	 * harm comes before call 22, so the others wait for it in a
	 * barrier (a hierarchical one with several ranks per node), or
	 * with @a2a before call 23, an alltoall (hierarchical too).
	 */
	for (int i = 0; !ret && now_ms() - t0 < 120000; i++) {
		if (rank == victim && i == 22 + a2a)
			harm();
		if (i % 4 == 0)
			ret = dfg_allreduce(t, v, out, 64, DFG_FLOAT64,
					    DFG_SUM);
		else if (i % 4 == 1)
			ret = dfg_allgather(t, v, all, sizeof(v));
		else if (i % 4 == 2)
			ret = dfg_barrier(t);
		else
			ret = dfg_alltoall(t, all2, all, sizeof(v));
		if (!ret)
			last = now_ms();
	}
	/*
	 * Why (dfg_team_failure(): what and whose), and when on this
	 * machine's clock, so that the rig compares a machine's ranks.
	 */
	if (!ret || dfg_team_failure(t, &f))
		f = (struct dfg_team_failure){ .rank = -1 };
	printf("%s %d %d %lld %s %d %lld\n", what, rank, -ret,
	       now_ms() - last, dfg_team_fail_name(f.what), f.rank, now_ms());
	fflush(stdout);
	/*
	 * The job ends here: MPI_Finalize would wait for the lost rank. A
	 * survivor stays a while first: its exit is a death to a survivor
	 * that has not yet learned of the failure (a slower one on its
	 * machine, under load), which would then report this rank instead
	 * of the victim. Twice the documented bound (2 s) covers every
	 * survivor that meets it; the lines carry their own clock.
	 */
	if (ret)
		sleep(4);
	_exit(ret && (!expect || ret == expect) ? 0 : 1);
}

static void harm_die(void)
{
	_exit(0);
}

/* The link comes back, so that the launcher collects this node's output. */
static void harm_link(void)
{
	if (system("(ip link set eth0 down; sleep 20; ip link set eth0 up)"
		   " >/dev/null 2>&1 &"))
		exit(2);
}

/* Rank @absent never forms the team: the others time out. */
static int nojoin(int absent)
{
	struct dfg_team_failure f;
	struct dfg_team *t = NULL;
	long long t0 = now_ms();
	int ret;

	if (rank == absent) {
		/* Long enough for the others to give up. */
		sleep(30);
		_exit(0);
	}
	ret = dfg_team_from_pmix(&t);
	/* Why, from the join: a timeout (PMIx's fence names no rank). */
	if (dfg_team_failure(NULL, &f))
		f = (struct dfg_team_failure){ .rank = -1 };
	printf("nojoin %d %d %lld %s %d\n", rank, -ret, now_ms() - t0,
	       dfg_team_fail_name(f.what), f.rank);
	fflush(stdout);
	_exit(ret == -ETIMEDOUT ? 0 : 1);
}

int main(int argc, char **argv)
{
	static const enum dfg_dtype dts[] = { DFG_INT32, DFG_FLOAT64,
					      DFG_FLOAT32, DFG_INT64 };
	bool pmix = argc > 1 && !strcmp(argv[1], "pmix");
	bool dying = argc > 2 && (!strcmp(argv[1], "die") ||
				  !strcmp(argv[1], "linkdown"));
	bool mism = argc > 2 && !strcmp(argv[1], "mismatch");
	bool a2a = argc > 2 && !strcmp(argv[1], "alltoall");
	size_t max = 1 << 20;
	struct dfg_team *t;
	int ret, all;

	if (!dying && !mism && !a2a && argc > 1 + pmix)
		max = strtoul(argv[1 + pmix], NULL, 0);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 2 && !strcmp(argv[1], "nojoin"))
		return nojoin(atoi(argv[2]));
	find_nodes();
	ret = pmix ? dfg_team_from_pmix(&t) :
	      dfg_team_from_mpi(MPI_COMM_WORLD, -1, &t);
	if (!ret && (dfg_team_rank(t) != (unsigned int)rank ||
		     dfg_team_size(t) != (unsigned int)size))
		ret = -EPROTO;
	if (ret) {
		fprintf(stderr, "rank %d: dfg_team_from_%s: %s\n", rank,
			pmix ? "pmix" : "mpi", strerror(-ret));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	team = t;
	if (dying && !strcmp(argv[1], "die"))
		return fail_loop(t, atoi(argv[2]), "survivor", harm_die,
				 -EOWNERDEAD,
				 argc > 3 && !strcmp(argv[3], "alltoall"));
	if (dying)
		return fail_loop(t, atoi(argv[2]), "linkdown", harm_link, 0,
				 false);
	if (mism || a2a) {
		if (mism)
			mismatches(t, atoi(argv[2]));
		else
			alltoalls(t, atoi(argv[2]),
				  argc > 3 && !strcmp(argv[3], "mpi"));
		goto out;
	}
	/* Each type with one op, and every op on one type. */
	for (size_t k = 0; k < 4; k++) {
		for (size_t n = 1; n * 8 <= max; n = n < 4 ? n + 2 : n * 16)
			reductions(t, dts[k], (int)k, n, DFG_ALGO_RHALVING);
	}
	/* The table's own choice, the big end included. */
	reductions(t, DFG_FLOAT64, DFG_SUM, max / 8, DFG_ALGO_AUTO);
	reductions(t, DFG_FLOAT32, DFG_PROD, 1000, DFG_ALGO_AUTO);
	/* The hierarchy, forced: every type, 1 element to MAX_BYTES. */
	for (size_t k = 0; hier && k < 4; k++) {
		for (size_t n = 1; n * 8 <= max; n = n < 4 ? n + 2 : n * 32)
			reductions(t, dts[k], (int)k, n, DFG_ALGO_HIER);
	}
	if (hier)
		reductions(t, DFG_FLOAT64, DFG_SUM, max / 8, DFG_ALGO_HIER);
	dfg_coll_set_algo(t, DFG_COLL_ALLREDUCE, DFG_ALGO_AUTO);
	dfg_coll_set_algo(t, DFG_COLL_REDUCE_SCATTER, DFG_ALGO_AUTO);
	for (size_t b = 1; b * size <= max; b *= 32)
		moves(t, b);
	moves(t, max / size);
	mismatches(t, 1);
out:
	ret = dfg_team_leave(t);
	check(1, "leave", 0, ret);
	MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && !all)
		printf("net_coll ok %d %d%s\n", size, checks,
		       hier ? " hier" : "");
	MPI_Finalize();
	return all ? 1 : 0;
}
