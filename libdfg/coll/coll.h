/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg internals shared by coll/: the team as the algorithms see it, one
 * collective call, element types and reduction kernels, the algorithm
 * table, block arithmetic.
 *
 * A call: the public entry point checks its arguments, fills a struct
 * dfg_call (dfg_call_begin(): next sequence number, algorithm), runs the
 * algorithm, and ends with dfg_call_end() (transport release, abort of
 * the call on the other members if this one failed after it started).
 * Algorithms talk to peers only through t->x (xport.h).
 *
 * Notification values of call @seq are dfg_call_val(c, n) = seq << 32 | n:
 * above every value of an earlier call, so inbox words are never reset.
 */
#ifndef _DFG_COLL_COLL_H
#define _DFG_COLL_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <linux/dfg.h>
#include <linux/types.h>

#include <dfg/coll.h>

#include "xport.h"

/*
 * Inbox slots (DFG_XPORT_SLOTS per source). The reduction algorithms use
 * DFG_SLOT_STEP(i) to say "my data of step i is ready up to piece n" to
 * the partner of step i, DFG_SLOT_DONE to say "I no longer read your
 * memory"; alltoall owns DFG_SLOT_A2A_FIRST.. up to DFG_XPORT_SLOTS - 1.
 */
#define DFG_SLOT_STEP(i)	(i)	/* i < DFG_STEPS_MAX */
#define DFG_STEPS_MAX		7	/* log2(DFG_TEAM_SIZE_MAX) + 1 */
#define DFG_SLOT_FOLD		7	/* non-power-of-two fold/unfold */
#define DFG_SLOT_DONE		8
#define DFG_SLOT_GATHER		9	/* collection phase, broadcast */
#define DFG_SLOT_RING		10
#define DFG_SLOT_BARRIER	11
#define DFG_SLOT_A2A_FIRST	12

/* Atomic words: 0..7 for coll/, 8..15 for alltoall. */
#define DFG_ATOMIC_A2A_FIRST	8

/*
 * Below this many bytes a call stages its buffers through the team's
 * scratch (exposed once, mapped once by the peers) instead of exporting
 * the user's buffers: one copy is cheaper than an export and a mapping.
 */
#define DFG_STAGE_MAX		(256U << 10)

/* Largest payload of an eager call message. */
#define DFG_EAGER_MAX		(DFG_XPORT_MSG_MAX - 64)

/* Exposures of user memory one call may make (dfg_cbufs_*). */
#define DFG_CALL_EXPOSE_MAX	4

/* Largest forced segment count. */
#define DFG_SEGMENTS_MAX	64

/*
 * struct dfg_scratch - this rank's scratch memory, exposed with
 * DFG_XPORT_KEEP (we own it, so peers may cache their mapping)
 * @mem:	anonymous mapping, page-aligned
 * @size:	its length
 * @key:	its key
 */
struct dfg_scratch {
	void		*mem;
	size_t		size;
	struct dfg_xkey	key;
};

/*
 * struct dfg_stash - a message of a later call, received early (a peer
 * that saw our call aborted went on to the next one)
 */
struct dfg_stash {
	bool		valid;
	int		len;
	unsigned char	msg[DFG_XPORT_MSG_MAX];
};

/*
 * struct dfg_zombie - memory exposed in a call that failed: peers may
 * still be reading it (a broken team's members stop at different
 * times), so it is revoked only once no peer can be in that call any
 * more: after a successful barrier, or at leave
 * @key:	the exposure
 * @mem, @len:	scratch memory to unmap with it (NULL: user memory)
 */
struct dfg_zombie {
	struct dfg_xkey	key;
	void		*mem;
	size_t		len;
};

/*
 * struct dfg_team - a joined team
 * @graph_fd:	the graph (dup'ed, owned)
 * @rank, @size: this member, members
 * @kt:		the kernel team (owned)
 * @x:		the transport (owned)
 * @seq:	calls started on this team; the current call's number
 * @force:	per kind: the algorithm forced by dfg_coll_set_algo() or
 *		DFG_COLL_ALGO, else DFG_ALGO_AUTO
 * @last:	per kind: the algorithm the last call used
 * @segments:	forced segments per half-exchange (0: the table's)
 * @scratch:	staging and intermediate memory
 * @a2a:	all-to-all state, from the first alltoall(v) (alltoall.c)
 * @a2ap:	the put algorithm's state, from its first call
 *		(alltoall_put.c)
 * @stash:	per source rank, a message of a later call received early
 * @zombies, @nr_zombies, @cap_zombies: exposures of failed calls
 * @tainted:	a call failed since the last successful barrier: the
 *		scratch, if replaced, becomes a zombie
 * @hier:	a team that spans machines with several members on some:
 *		its node and leaders' teams (hier.c), else NULL
 * @outer:	a sub-team of a hierarchy: which call of its team (kind,
 *		root) it serves now; travels in call messages, so members
 *		that disagree on the root (which the sub-call itself may
 *		not see) fail with -EINVAL. 0 elsewhere.
 * @inbox:	the inbox's placement state (inbox.c), from the first call
 *		that stores into a slot; NULL before
 * @inbox_parity: DFG_COLL_PREV=ring, read when the team is formed
 * @eager_one:	DFG_COLL_PREV=eager1, read when the team is formed: a
 *		direct reduction sends its vector in messages only where
 *		it fits one (direct.c)
 * @why:	why the last call failed (a dfg_xwhy_pack() word), 0 when
 *		it succeeded; @why_seq: that call's number
 * @lost:	a member died or became unreachable (its reason word, which
 *		a peer's abort may tell before this rank's own transport
 *		sees it): every later call is refused with -EOWNERDEAD
 * @top_rank:	this member's rank in the outermost team (a hierarchy's
 *		sub-teams), which reasons name
 */
struct dfg_team {
	int			graph_fd;
	unsigned int		rank;
	unsigned int		size;
	struct dfg_kteam	*kt;
	struct dfg_xport	*x;
	__u64			seq;
	enum dfg_coll_algo	force[DFG_COLL_KIND_NR];
	enum dfg_coll_algo	last[DFG_COLL_KIND_NR];
	unsigned int		segments;
	struct dfg_scratch	scratch;
	struct dfg_stash	*stash;
	struct dfg_zombie	*zombies;
	unsigned int		nr_zombies;
	unsigned int		cap_zombies;
	bool			tainted;
	struct dfg_a2a		*a2a;
	struct dfg_a2ap		*a2ap;
	struct dfg_hier		*hier;
	__u64			outer;
	struct dfg_inbox	*inbox;
	bool			inbox_parity;
	bool			eager_one;
	__u64			why;
	__u64			why_seq;
	__u64			lost;
	unsigned int		top_rank;
};

/*
 * struct dfg_hier - the hierarchy of a team across machines (hier.c)
 * @node:	the kernel team of this machine's members (owned), NULL when
 *		this rank is alone on its machine
 * @lead:	the leaders' team (owned) over the team's transport, NULL
 *		unless this rank is its machine's leader (lowest rank)
 * @nodes:	machines
 * @node_of:	per rank, its machine, numbered by their leaders' ranks
 * @lrank:	per rank, its rank in its machine's node team
 * @leader:	per machine, its leader's rank
 * @nsize:	per machine, its members
 * @nsize_max:	the largest of them (what the padded exchanges pad to)
 * @members:	this machine's ranks by their node-team rank (the node
 *		transport's @top)
 * @tmp, @tmp_size: private memory of the calls
 */
struct dfg_hier {
	struct dfg_team	*node;
	struct dfg_team	*lead;
	unsigned int	nodes;
	unsigned int	*node_of;
	unsigned int	*lrank;
	unsigned int	*leader;
	unsigned int	*nsize;
	unsigned int	nsize_max;
	unsigned int	*members;
	void		*tmp;
	size_t		tmp_size;
};

/*
 * A team's common part: rank, size, DFG_COLL_ALGO, the stash; no
 * transport yet (team.c).
 */
int dfg_team_new(unsigned int size, unsigned int rank, struct dfg_team **out);
/* Revoke the exposures of failed calls: no member is in one any more. */
void dfg_team_zombies_free(struct dfg_team *t);

/*
 * The hierarchy of @t: @key[r] is the same for ranks on one machine;
 * @node, this machine's kernel team (NULL when this rank is alone on it),
 * passes to the hierarchy (and is left by dfg_hier_free()) on success.
 * The leaders' team is made over @t's transport, without communication.
 * -EINVAL unless there are at least 2 machines and one has 2 ranks, or
 * @node does not match @key.
 */
int dfg_hier_setup(struct dfg_team *t, const unsigned int *key,
		   struct dfg_team *node, struct dfg_hier **out);
/* Leave the sub-teams (before the team's transport goes), free @h. */
void dfg_hier_free(struct dfg_hier *h);
/* After a successful barrier of the team: the sub-teams' zombies go. */
void dfg_hier_clean(struct dfg_hier *h);
/* 0, or the node team's -EOWNERDEAD / -ECANCELED. */
int dfg_hier_broken(struct dfg_hier *h);
/*
 * The team refused call @seq (broken): the node's members fail it too,
 * told @why.
 */
void dfg_hier_refuse(struct dfg_hier *h, __u64 seq, __u64 why);
/*
 * Form the hierarchy of network team @t (team.c's dfg_team_join_net()):
 * the machines from the transport's boot ids, a kernel team per machine
 * with several ranks, two more rounds of @ag. 0 with t->hier NULL where
 * there is no hierarchy (one machine, one rank per machine, or some
 * machine without dfg.ko: every rank agrees); -errno only for @ag's
 * failures.
 */
int dfg_hier_form(struct dfg_team *t, dfg_allgather_fn ag, void *arg,
		  int timeout_ms);

/*
 * Element types and reductions. A reducer computes @dst = @a (op) @b
 * element-wise, @a the lower-ranked operand; @dst may be @a or @b.
 */
typedef void (*dfg_reduce_fn)(void *dst, const void *a, const void *b,
			      size_t n);

/*
 * struct dfg_reducer - a resolved (op, dtype)
 * @fn:		built-in kernel, or NULL for a user op
 * @user:	user op (inout = inout op in)
 * @arg:	its argument
 * @dtype:	element type
 * @esize:	bytes per element
 */
struct dfg_reducer {
	dfg_reduce_fn	fn;
	dfg_user_op_fn	user;
	void		*arg;
	enum dfg_dtype	dtype;
	size_t		esize;
};

/* Bytes per element, 0 for an unknown type. */
size_t dfg_dtype_size(enum dfg_dtype dtype);
/* Resolve @op for @dtype: 0 or -EINVAL (unknown type or op). */
int dfg_reducer_get(int op, enum dfg_dtype dtype, struct dfg_reducer *r);
/* @dst = @a (op) @b for @n elements. */
void dfg_reducer_run(const struct dfg_reducer *r, void *dst,
		     const void *a, const void *b, size_t n);

/*
 * struct dfg_call - one collective in progress
 * @t, @x:	the team and its transport
 * @kind:	which collective
 * @algo:	algorithm chosen
 * @seq:	its sequence number (t->seq)
 * @sbuf:	send buffer (resolved: never DFG_IN_PLACE)
 * @rbuf:	receive buffer (may be NULL where not significant)
 * @count:	elements (reductions), bytes (allgather, broadcast: per rank
 *		for allgather)
 * @red:	the reducer (reductions)
 * @esize:	bytes per element (1 for byte collectives)
 * @op:	op handle as given; @dtype: element type
 * @root:	root rank (reduce, broadcast)
 * @in_place:	DFG_IN_PLACE was given
 * @scounts, @sdispls, @rcounts, @rdispls: alltoallv (bytes, per rank);
 *		alltoall points them at @a2a_counts/@a2a_displs-style arrays
 *		of its own or leaves them NULL and uses @count as the block
 * @started:	peers may be waiting on us: a failure aborts the call
 * @unexpose, @nr_unexpose: the call's exposures, revoked by
 *		dfg_call_end() (or kept as zombies if the call failed)
 * @why:	why it failed, where the algorithm knows better than the
 *		transport (a hierarchy's sub-call): dfg_call_end() tells
 *		the members that; 0 lets it find the reason itself
 */
struct dfg_call {
	struct dfg_team		*t;
	struct dfg_xport	*x;
	enum dfg_coll_kind	kind;
	enum dfg_coll_algo	algo;
	__u64			seq;
	const void		*sbuf;
	void			*rbuf;
	size_t			count;
	struct dfg_reducer	red;
	size_t			esize;
	int			op;
	enum dfg_dtype		dtype;
	unsigned int		root;
	bool			in_place;
	const size_t		*scounts;
	const size_t		*sdispls;
	const size_t		*rcounts;
	const size_t		*rdispls;
	bool			started;
	struct dfg_xkey		unexpose[DFG_CALL_EXPOSE_MAX];
	unsigned int		nr_unexpose;
	__u64			why;
};

/* Now on @clk, in ns (CLOCK_MONOTONIC_COARSE: a load, no time source read). */
static inline __s64 dfg_coll_now_ns(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static inline __u64 dfg_call_val(const struct dfg_call *c, __u32 n)
{
	return c->seq << 32 | n;
}

/*
 * Next sequence number, algorithm for @bytes (@kind DFG_COLL_KIND_NR: a
 * call outside the table, no algorithm); 0 or -errno (-EOWNERDEAD).
 */
int dfg_call_begin(struct dfg_call *c, struct dfg_team *t,
		   enum dfg_coll_kind kind, size_t bytes);
/*
 * Finish: on failure of a started call, finds why (c->why, else the
 * transport's reason, else this rank's own error), aborts the call with
 * that reason and records it (dfg_team_failure()); returns @ret, or the
 * reason's errno when the failure came from a peer (-EOWNERDEAD for a
 * member lost, -EINVAL for a mismatch, -ECONNABORTED for a peer's other
 * failure).
 */
int dfg_call_end(struct dfg_call *c, int ret);
/*
 * The reason word for this rank's failure @ret of call @c (the
 * transport's when it knows one), and the errno the call returns for
 * reason @why (@ret when @why is 0 or this rank's own).
 */
__u64 dfg_call_why(struct dfg_call *c, int ret);
int dfg_why_errno(const struct dfg_team *t, __u64 why, int ret);
/* The calling thread's last join failure (dfg_team_failure(NULL)). */
void dfg_join_why_set(__u64 why);

/*
 * Send a call header and @len bytes to @peer / receive them from @src.
 * The header carries seq, kind, count, dtype, op, root: receiving gives
 * -EPROTO when seq or kind differ, -EINVAL when the arguments do.
 */
int dfg_call_send(struct dfg_call *c, unsigned int peer, const void *buf,
		  size_t len);
int dfg_call_recv(struct dfg_call *c, unsigned int src, void *buf,
		  size_t len);
/* dfg_call_recv(), and the sender's op into *@op once its header came. */
int dfg_call_recv_op(struct dfg_call *c, unsigned int src, void *buf,
		     size_t len, int *op);

/*
 * The team's scratch, at least @size bytes (grown, and re-exposed under a
 * new generation, when smaller). Returns 0 or -errno.
 */
int dfg_scratch_reserve(struct dfg_team *t, size_t size);

/*
 * A team's persistent area, in a call every member makes: @size bytes
 * mapped (page-rounded into *@len, zeroed) into *@mem and exposed with
 * DFG_XPORT_READ | WRITE | KEEP, its key into @keys[rank]; then every
 * member's key into @keys[] through call messages that carry no
 * arguments. On failure after the exposure *@mem is set (the caller
 * unexposes @keys[rank] and unmaps it).
 */
int dfg_area_share(struct dfg_call *c, size_t size, void **mem, size_t *len,
		   struct dfg_xkey *keys);

/*
 * struct dfg_ckeys - what a rank publishes to the peers that read it
 * @src, @soff:	its input (key, byte offset of element 0 in it)
 * @work, @woff: its work or result vector
 */
struct dfg_ckeys {
	struct dfg_xkey	src;
	struct dfg_xkey	work;
	__u64		soff;
	__u64		woff;
};

/*
 * struct dfg_cbufs - a call's buffers as peers see them
 * @src:	the input peers read (staged copy or the user's)
 * @work:	the work vector (staged, scratch, or the user's)
 * @extra:	@extra_bytes of scratch for the algorithm (landing slots)
 * @out:	staged: copy @work there at the end (dfg_cbufs_out())
 * @keys:	keys of @src and @work
 * @exp_src, @exp_work: exposed for this call (undone at teardown)
 */
struct dfg_cbufs {
	const char		*src;
	char			*work;
	char			*extra;
	void			*out;
	struct dfg_ckeys	keys;
	bool			exp_src;
	bool			exp_work;
};

/*
 * Set up @b: @src_bytes of input at c->sbuf; @work_bytes of work vector,
 * at @user_work (the user's buffer) or, when NULL, in scratch. Below
 * DFG_STAGE_MAX both are staged in scratch (no export, one copy in and
 * one out); above, user memory is exposed for the call only.
 */
int dfg_cbufs_setup(struct dfg_call *c, size_t src_bytes, size_t work_bytes,
		    void *user_work, size_t extra_bytes, struct dfg_cbufs *b);
/*
 * Hand @b's exposures to the call: dfg_call_end() revokes them (the
 * algorithm copies @out itself, before).
 */
void dfg_cbufs_teardown(struct dfg_call *c, struct dfg_cbufs *b);
/* Send our keys to @to[], receive into @keys[r] from @from[] (by rank). */
int dfg_ckeys_xchg(struct dfg_call *c, const struct dfg_ckeys *mine,
		   const unsigned int *to, unsigned int nto,
		   const unsigned int *from, unsigned int nfrom,
		   struct dfg_ckeys *keys);
/* Notify DONE (@val) to @to[], then wait for it from @from[]. */
int dfg_call_done(struct dfg_call *c, __u32 val, const unsigned int *to,
		  unsigned int nto, const unsigned int *from,
		  unsigned int nfrom);

/*
 * The table of collectives and algorithms (table.c). dfg_coll_pick():
 * the forced algorithm, else the automatic choice for @bytes.
 */
enum dfg_coll_algo dfg_coll_pick(const struct dfg_team *t,
				 enum dfg_coll_kind kind, size_t bytes);
/* Runs @c (not all-to-all) with the algorithm dfg_call_begin() picked. */
int dfg_coll_run(struct dfg_call *c);
/* Does @algo implement @kind? */
bool dfg_coll_algo_valid(enum dfg_coll_kind kind, enum dfg_coll_algo algo);
/*
 * Parse DFG_COLL_ALGO-style "kind=algo,...,segments=N" into @force and
 * *@segments: 0, or -EINVAL with nothing changed.
 */
int dfg_coll_parse_algo(const char *s,
			enum dfg_coll_algo force[DFG_COLL_KIND_NR],
			unsigned int *segments);
/*
 * Measurement switches: does DFG_COLL_PREV (a comma-separated list of
 * names, read when a team is formed) ask for the previous way of @what?
 * Each name undoes one change, so that a benchmark can form a second
 * team with it and time both in one job (coll_vs_mpi -e
 * DFG_COLL_PREV=NAME): "mbox" (xport_shm.c: mailbox
 * indices read at every message, entries not aligned to cache lines),
 * "begin" (a fence per peer when a call begins), "ring" (inbox.c: the
 * two slots of a pair alternate between calls, a source waits for the
 * previous call of its destination), "waitall" (the inbox's collectives
 * wait for each peer's message in turn, not for all at once), and on
 * the network path "eager1" (direct.c: a direct reduction above one
 * message's payload reads its peers' inputs, after a key exchange,
 * instead of receiving them in several messages) and "nap"
 * (xport_ucx.c: a waiter naps after its idle progress rounds even where
 * its machine is not crowded). Every member must agree on those that
 * change messages (all but "nap").
 */
bool dfg_coll_prev(const char *what);

/*
 * How long a network team's join waits for the other ranks (ms, < 0 for
 * ever): DFG_TEAM_TIMEOUT_MS, else DFG_TEAM_TIMEOUT_DEFAULT_MS; -EINVAL
 * for a value that is not an integer.
 */
#define DFG_TEAM_TIMEOUT_DEFAULT_MS	30000
int dfg_team_timeout_ms(int *ms);

/*
 * How long a wait on the shared-memory transport yields its CPU before it
 * sleeps, where the team has more members than the machine has online
 * CPUs (ns, into *@ns): DFG_COLL_YIELD_US (read when a team is formed; 0
 * sleeps right after polling), else DFG_COLL_YIELD_DEFAULT_US; -EINVAL
 * for a value that is not an integer from 0 to DFG_COLL_YIELD_MAX_US.
 */
#define DFG_COLL_YIELD_DEFAULT_US	200
#define DFG_COLL_YIELD_MAX_US		1000000
int dfg_coll_yield_ns(long long *ns);

/*
 * Whether @ranks members of a team on one machine outnumber its online
 * CPUs (or their number is unknown): then a waiter must give its CPU
 * away, since the member it waits for may need it; else it may poll.
 */
bool dfg_coll_crowded(unsigned int ranks);

/*
 * Every how many calls the shared-memory transport prints what its waits
 * did (into *@every; 0: never): DFG_COLL_STATS (read when a team is
 * formed), an integer from 0 to DFG_COLL_STATS_MAX; -EINVAL otherwise.
 */
#define DFG_COLL_STATS_MAX	100000000UL
int dfg_coll_stats_every(unsigned long *every);

/* Segments per half-exchange for a block of @bytes (patent: >= 1, 2). */
unsigned int dfg_coll_segments(const struct dfg_team *t, size_t bytes);

/*
 * Block arithmetic. [dfg_block_lo(n, k, i), dfg_block_lo(n, k, i + 1)) is
 * block i of @n elements cut into @k nearly equal blocks (the first
 * n % k one longer).
 */
static inline size_t dfg_block_lo(size_t n, size_t k, size_t i)
{
	size_t q = n / k, r = n % k;

	return i * q + (i < r ? i : r);
}

static inline size_t dfg_block_len(size_t n, size_t k, size_t i)
{
	return n / k + (i < n % k);
}

/*
 * Non-power-of-two teams (patent 002 leaves them to the implementer): the
 * first 2r ranks (r = size - 2^floor(log2 size)) fold pairwise, the even
 * rank of each pair handing its vector to the odd one and sitting out;
 * the remaining p2 = 2^q ranks run the algorithm under virtual ranks.
 */
struct dfg_fold {
	unsigned int	p2;	/* power of two <= size */
	unsigned int	q;	/* log2(p2) */
	unsigned int	r;	/* size - p2 */
};

void dfg_fold_init(struct dfg_fold *f, unsigned int size);
/* Virtual rank of @rank, or -1 if it sits out (even rank < 2r). */
int dfg_fold_vrank(const struct dfg_fold *f, unsigned int rank);
/* Real rank of virtual rank @v. */
unsigned int dfg_fold_rank(const struct dfg_fold *f, unsigned int v);

/*
 * Recursive halving with segments: the vector (@n elements) is cut into
 * @segs segments; at step i each segment's current range is halved, the
 * virtual rank with bit i set keeping the lower half (patent Fig. 8:
 * it sends the odd pieces). dfg_rh_range() gives segment @m's range that
 * virtual rank @v holds after @steps steps.
 */
void dfg_rh_range(size_t n, unsigned int segs, unsigned int m,
		  unsigned int v, unsigned int steps, size_t *lo, size_t *hi);

/* The algorithms: 0 or -errno. */
int dfg_rh_allreduce(struct dfg_call *c);	/* also reduce */
int dfg_rh_reduce_scatter(struct dfg_call *c);
int dfg_ring_allreduce(struct dfg_call *c);
int dfg_ring_reduce_scatter(struct dfg_call *c);
int dfg_ring_allgather(struct dfg_call *c);
int dfg_direct_allreduce(struct dfg_call *c);	/* also reduce */
int dfg_direct_reduce_scatter(struct dfg_call *c);
int dfg_direct_allgather(struct dfg_call *c);
int dfg_direct_broadcast(struct dfg_call *c);
int dfg_coll_barrier(struct dfg_call *c);	/* dissemination */
int dfg_inbox_allreduce(struct dfg_call *c);	/* also reduce */
int dfg_inbox_reduce_scatter(struct dfg_call *c);
int dfg_inbox_allgather(struct dfg_call *c);
int dfg_inbox_broadcast(struct dfg_call *c);
int dfg_hier_allreduce(struct dfg_call *c);	/* also reduce */
int dfg_hier_reduce_scatter(struct dfg_call *c);
int dfg_hier_broadcast(struct dfg_call *c);
int dfg_hier_allgather(struct dfg_call *c);
int dfg_hier_barrier(struct dfg_call *c);
/*
 * Fixed-block all-to-all over the hierarchy (c->count: the block; @err:
 * this rank's arguments are unusable, it takes part and fails with
 * -EINVAL). Needs the put algorithm on the leaders (dfg_put_fits() of
 * the team: the table sees to it).
 */
int dfg_hier_alltoall(struct dfg_call *c, int err);
/*
 * alltoallv over the hierarchy (c->scounts ... c->rdispls: never NULL;
 * @err as above). Counts that disagree anywhere fail every rank with
 * -EINVAL. Needs what dfg_hier_alltoall() needs.
 */
int dfg_hier_alltoallv(struct dfg_call *c, int err);
/*
 * Fixed-block all-to-all through the inbox (c->count: the block). Its
 * call messages carry op DFG_A2A_OP_INBOX, an engine call's (alltoall.c)
 * op 0: *@engine tells that a peer took the engine in this call (its
 * arguments disagree: -EINVAL), which the caller must then join.
 */
#define DFG_A2A_OP_INBOX	1
int dfg_inbox_alltoall(struct dfg_call *c, bool *engine);
/*
 * Does a call of @kind over a per-rank vector of @bytes (dfg_coll_pick()'s
 * measure) fit @t's inbox slots?
 */
bool dfg_inbox_fits(const struct dfg_team *t, enum dfg_coll_kind kind,
		    size_t bytes);
/*
 * Reduce block [@lo, @lo + @cnt) of every rank's input into @acc, in rank
 * order. @inputs[r] points at rank r's data, or NULL (or @inputs NULL) to
 * fetch it from @keys (landing in @land when the transport has no
 * load/store). @acc may be an input's very address, never overlap one
 * otherwise: the first two inputs are read while @acc is written.
 */
int dfg_direct_combine(struct dfg_call *c, const void *const *inputs,
		       const struct dfg_ckeys *keys, size_t lo, size_t cnt,
		       void *acc, void *land);
/* Free the team's inbox state (dfg_team_leave()). */
void dfg_inbox_free(struct dfg_team *t);
/* Free the team's all-to-all state (dfg_team_leave()). */
void dfg_a2a_free(struct dfg_team *t);
/*
 * All-to-all(v) by one-sided puts into the peers' landing areas
 * (alltoall_put.c, DFG_ALGO_PUT): c->count is the block, or c->scounts,
 * c->sdispls, c->rcounts, c->rdispls (bytes) are set; @err (-EINVAL):
 * this rank's arguments are unusable, it takes part with nothing sent.
 * Returns 0, -EINVAL when the members' arguments disagree (the protocol
 * ran to its end: c->started cleared), or the transport's error.
 */
int dfg_put_alltoall(struct dfg_call *c, int err);
/* Does @t's transport have what the put algorithm needs? */
bool dfg_put_fits(const struct dfg_team *t);
/* Free the put algorithm's state (dfg_team_leave()). */
void dfg_put_free(struct dfg_team *t);

#endif /* _DFG_COLL_COLL_H */
