/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg: teams and collectives (reduction pipelines, all-to-all).
 *
 * A team is a group of processes, ranks 0..size-1, formed by name inside a
 * dfg graph (the unit of permission) through dfg.ko: every member joins
 * with the same name and size and its own rank, and dfg_team_join()
 * returns once all have joined. The module watches the members: when one
 * dies (or closes its team descriptor without dfg_team_leave()), the team
 * is broken and every pending and later collective on it fails with
 * -EOWNERDEAD, on every other member, within 2 s.
 *
 * Applications that use MPI can form the team from a communicator
 * instead: dfg_team_from_mpi() in <dfg/coll_mpi.h>.
 *
 * Collectives are called by every member in the same order (a per-team
 * sequence number checks it: a mismatch is -EPROTO). Buffers are the
 * caller's own memory (exported to peers as dfg regions, so peers read
 * and write them without an intermediate copy) or buffers inside a dfg
 * arena of the team's graph. Counts are elements of @dtype; alltoall(v)
 * counts are bytes (blocks are opaque).
 *
 * Algorithms: allreduce, reduce and reduce_scatter use the segmented,
 * pipelined recursive halving of patent 002 by default; alltoall(v) of
 * small blocks the tile repacking of patent 003, with direct exchange
 * above its size threshold. dfg_coll_set_algo() or the environment
 * variable DFG_COLL_ALGO ("allreduce=ring,alltoall=direct,segments=4",
 * read by dfg_team_join()) forces one; "segments" sets the segments per
 * half-exchange of recursive halving. Floating-point results depend only
 * on the algorithm and the team size (fixed reduction order), never on
 * timing.
 *
 * Buffers above 256 KiB are exported for the call (they must be mapped;
 * rbuf writable); smaller ones are staged through the team's scratch.
 * DFG_COLL_NOPTR=1 makes the transport use get/put instead of loads from
 * peers' memory (the path an RDMA transport takes; for tests).
 *
 * Threads: one collective at a time per team; different teams are
 * independent and may be used from different threads.
 *
 * Errors: -errno returns, errno never changed.
 */
#ifndef _DFG_COLL_H
#define _DFG_COLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque: membership, control area, transport, per-call state. */
struct dfg_team;

/**
 * dfg_team_join() - join (or form) the team @name of graph @graph_fd
 * @graph_fd:	graph descriptor opened for writing; not owned (the team
 *		keeps its own reference)
 * @name:	team name, 1..DFG_NAME_MAX-1 bytes
 * @size:	number of members, 1..DFG_TEAM_SIZE_MAX; all must agree
 * @rank:	this member's rank, < @size, unique in the team
 * @timeout_ms:	how long to wait for the others; < 0 waits for ever
 * @out:	the team handle
 *
 * Returns 0 once all @size members have joined, or -errno: -EINVAL,
 * -EADDRINUSE (@rank taken), -ETIMEDOUT, -EOWNERDEAD (a member died while
 * the team formed), -ENOMEM, -EACCES, -ENOTTY (module without teams).
 */
int dfg_team_join(int graph_fd, const char *name, unsigned int size,
		  unsigned int rank, int timeout_ms, struct dfg_team **out);

/*
 * Teams across machines. A launcher (mpirun, srun, prterun) starts the
 * processes; they learn each other's network addresses through an
 * allgather the caller provides: @ag(@mine, @all, @len, @arg) gathers
 * @len bytes from every rank, rank r's at @all + r * @len, on every
 * rank (collective, every rank the same @len); 0 or -errno.
 */
typedef int (*dfg_allgather_fn)(const void *mine, void *all, size_t len,
				void *arg);

/**
 * dfg_team_join_net() - form a team whose members may be on other machines
 * @size, @rank:	members, this member's rank
 * @ag, @arg:		the bootstrap allgather (called a few times, by
 *			every rank in the same order)
 * @out:		the team handle
 *
 * Peers are reached over the network transport (UCX: RDMA where a verbs
 * device is there, TCP else). No kernel team of its own:
 * dfg_team_add_arena() gives -EOPNOTSUPP. A team over several machines
 * with several members on one is hierarchical: each machine's members
 * join a kernel team (dfg.ko there; two more rounds of @ag), and
 * allreduce, reduce, reduce_scatter, allgather, broadcast and barrier
 * take DFG_ALGO_HIER
 * (man 3 dfg_team_join_net). After the allgather each rank waits at most
 * DFG_TEAM_TIMEOUT_MS (environment, default 30000; < 0 for ever) for the
 * others to connect. Returns 0, or -errno: -EINVAL, -ENOMEM, -ENODEV
 * (no usable UCX transport), -EPROTO (the ranks' data disagree),
 * -ETIMEDOUT (a rank never connected), -EOWNERDEAD (one died meanwhile),
 * the allgather's errors. A member that dies breaks the team: every
 * later and pending collective fails with -EOWNERDEAD, within
 * milliseconds for a dead process, within UCX's timeouts for a machine
 * gone unreachable (DESIGN.md, "Across machines").
 */
int dfg_team_join_net(unsigned int size, unsigned int rank,
		      dfg_allgather_fn ag, void *arg, struct dfg_team **out);

/**
 * dfg_team_from_pmix() - form a network team of the job's processes
 * @out:	the team: rank and size are the PMIx rank and job size
 *
 * For programs started by a PMIx launcher (Open MPI's mpirun/prterun,
 * Slurm's srun): initialises PMIx, publishes this process's addresses
 * (PMIx_Put, PMIx_Commit), waits for every process (PMIx_Fence with data
 * collection; at most DFG_TEAM_TIMEOUT_MS, else -ETIMEDOUT), reads
 * theirs (PMIx_Get), then dfg_team_join_net().
 * Returns 0, -ENOTCONN when the process was not started by a PMIx
 * launcher, -EIO for other PMIx errors, and dfg_team_join_net()'s.
 */
int dfg_team_from_pmix(struct dfg_team **out);

/* Leave in order (the others are not failed) and free @t. */
int dfg_team_leave(struct dfg_team *t);

/*
 * Buffers inside @a (an arena of the team's graph, mapped by this
 * process; not owned, must stay mapped until dfg_team_leave()) are then
 * reached by peers through the arena, without a region export per call.
 */
struct dfg_arena;
int dfg_team_add_arena(struct dfg_team *t, struct dfg_arena *a);

unsigned int dfg_team_rank(const struct dfg_team *t);
unsigned int dfg_team_size(const struct dfg_team *t);

/*
 * Why a team's call (or a join) failed. The member that first finds a
 * failure aborts the call with its reason, and every member that was
 * waiting for it returns the reason's errno:
 *
 *	DFG_TEAM_FAIL_KILLED	a member died	-EOWNERDEAD (the team is
 *				(process gone)	 broken for good)
 *	DFG_TEAM_FAIL_LINK	a member became	-EOWNERDEAD (broken for
 *				unreachable	 good)
 *	DFG_TEAM_FAIL_TIMEOUT	a member never	-ETIMEDOUT (joins)
 *				joined
 *	DFG_TEAM_FAIL_MISMATCH	the members'	-EINVAL (every member)
 *				arguments differ
 *	DFG_TEAM_FAIL_ERROR	a member's call	-ECONNABORTED on the
 *				failed otherwise others (@err: its errno)
 */
enum dfg_team_fail_what {
	DFG_TEAM_FAIL_NONE,
	DFG_TEAM_FAIL_KILLED,
	DFG_TEAM_FAIL_LINK,
	DFG_TEAM_FAIL_TIMEOUT,
	DFG_TEAM_FAIL_MISMATCH,
	DFG_TEAM_FAIL_ERROR,
	DFG_TEAM_FAIL_NR,
};

/**
 * struct dfg_team_failure - why a call failed
 * @what:	enum dfg_team_fail_what
 * @rank:	the member it concerns (the one that died, became
 *		unreachable, never joined, whose arguments or call failed),
 *		-1 when unknown
 * @err:	the errno (positive) with which that member found it
 * @seq:	the team's call that failed (1 is the first; 0: the join)
 */
struct dfg_team_failure {
	int			what;
	int			rank;
	int			err;
	unsigned long long	seq;
};

/*
 * dfg_team_failure() - why @t's last call failed (@t NULL: why the
 * calling thread's last dfg_team_join_net() or dfg_team_from_pmix()
 * failed). 0 with *@f filled, or -ENOENT (it did not fail, or the
 * reason is unknown), -EINVAL (@f NULL). man 3 dfg_team_failure.
 */
int dfg_team_failure(const struct dfg_team *t, struct dfg_team_failure *f);
/* "killed", "link", "timeout", "mismatch", "error"; "none"; "?" */
const char *dfg_team_fail_name(int what);

/* Element types and reduction operations. */
enum dfg_dtype {
	DFG_INT32,
	DFG_INT64,
	DFG_FLOAT32,
	DFG_FLOAT64,
	DFG_DTYPE_NR,
};

enum dfg_op {
	DFG_SUM,
	DFG_PROD,
	DFG_MIN,
	DFG_MAX,
	DFG_OP_NR,
	DFG_OP_USER = 64,	/* first handle of dfg_op_create() */
};

/* A user operation: @inout[i] = @inout[i] (op) @in[i], for @count elements. */
typedef void (*dfg_user_op_fn)(void *inout, const void *in, size_t count,
			       enum dfg_dtype dtype, void *arg);

/* Register a user operation (assumed associative and commutative). */
int dfg_op_create(dfg_user_op_fn fn, void *arg);
int dfg_op_free(int op);

/* Pass as a send buffer: the operation works in place on the receive one. */
#define DFG_IN_PLACE	((const void *)1)

int dfg_allreduce(struct dfg_team *t, const void *sbuf, void *rbuf,
		  size_t count, enum dfg_dtype dtype, int op);
int dfg_reduce(struct dfg_team *t, const void *sbuf, void *rbuf,
	       size_t count, enum dfg_dtype dtype, int op, unsigned int root);
/* Each rank gets @recvcount elements: block r of the reduced vector. */
int dfg_reduce_scatter(struct dfg_team *t, const void *sbuf, void *rbuf,
		       size_t recvcount, enum dfg_dtype dtype, int op);
int dfg_allgather(struct dfg_team *t, const void *sbuf, void *rbuf,
		  size_t bytes);
int dfg_broadcast(struct dfg_team *t, void *buf, size_t bytes,
		  unsigned int root);
int dfg_barrier(struct dfg_team *t);
/* Block j of @sbuf (@block bytes) goes to rank j, lands as block i there. */
int dfg_alltoall(struct dfg_team *t, const void *sbuf, void *rbuf,
		 size_t block);
/* Counts and displacements in bytes, one per rank. */
int dfg_alltoallv(struct dfg_team *t, const void *sbuf, const size_t *scounts,
		  const size_t *sdispls, void *rbuf, const size_t *rcounts,
		  const size_t *rdispls);

enum dfg_coll_kind {
	DFG_COLL_ALLREDUCE,
	DFG_COLL_REDUCE,
	DFG_COLL_REDUCE_SCATTER,
	DFG_COLL_ALLGATHER,
	DFG_COLL_BROADCAST,
	DFG_COLL_ALLTOALL,	/* also alltoallv */
	DFG_COLL_BARRIER,	/* direct (dissemination) or hier */
	DFG_COLL_KIND_NR,
};

enum dfg_coll_algo {
	DFG_ALGO_AUTO,		/* the table: by size and team size */
	DFG_ALGO_RHALVING,	/* patent 002: segmented recursive halving */
	DFG_ALGO_RING,
	DFG_ALGO_DIRECT,
	DFG_ALGO_TILES,		/* patent 003: repacking tiles */
	DFG_ALGO_INBOX,		/* small payloads through the team's
				 * inbox slots: no export, one copy */
	DFG_ALGO_HIER,		/* across machines: each machine's members
				 * through shared memory, its lowest rank
				 * across the network */
	DFG_ALGO_PUT,		/* alltoall across machines: one-sided
				 * puts into each peer's landing area */
	DFG_ALGO_NR,
};

/* Force @algo for @kind on @t (-EINVAL where it does not apply). */
int dfg_coll_set_algo(struct dfg_team *t, enum dfg_coll_kind kind,
		      enum dfg_coll_algo algo);
/* The algorithm the last call of @kind used (benchmarks, tests). */
enum dfg_coll_algo dfg_coll_last_algo(const struct dfg_team *t,
				      enum dfg_coll_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* _DFG_COLL_H */
