/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg internals: the transport under the collectives.
 *
 * The algorithms (the coll/ sources) move data and synchronise only
 * through these operations, so the same algorithm runs on one machine
 * (xport_shm.c: the team's control area, dfg regions and arenas) and,
 * later, across machines over RDMA. Each operation is stated in RDMA terms:
 *
 *  expose/unexpose	memory registration: a key peers use to reach
 *			[addr, addr + len) of this process (rkey + address)
 *  peer_ptr		load/store access to a peer's exposed memory where
 *			the transport has it (shared memory); NULL elsewhere,
 *			the algorithms then use get/put
 *  get/put		RDMA read/write between local memory and a peer's
 *			exposed memory; posted, complete at flush()
 *  notify		a monotonic 64-bit value into the peer's inbox word
 *			for (this rank, slot), ordered after every put to
 *			that peer posted before it (write-with-immediate, or
 *			a fenced RDMA write / atomic)
 *  fadd		fetch-and-add on a peer's atomic word (RDMA atomic)
 *  wait		until one of this rank's own words reaches a value:
 *			spin briefly, then sleep (a team WAIT)
 *  msg_send/recv	small eager messages through a per-pair mailbox
 *			(RDMA write into a pre-registered ring + credit)
 *  inbox		small payloads: a slot per (source, destination,
 *			call parity) that the source stores into and the
 *			destination reads in place (shared memory only)
 *  wait_begun		until a peer has begun a call (it no longer reads
 *			the inbox slots of calls before it)
 *  fence		order: a peer that sees a put posted after it sees
 *			every put posted before it (network transports)
 *  complete_local	until every posted get and put is done with its
 *			local memory, without remote completion: no peer
 *			has to progress (network transports)
 *  wait_eq		until a word of memory this rank exposed, which a
 *			peer puts, holds exactly a value (network
 *			transports)
 *  progress		what is pending, without waiting: answers to peers
 *			(network transports), run by a rank that sleeps
 *			elsewhere
 *
 * Words: each rank owns DFG_XPORT_WORDS(size) 64-bit words, the first
 * size * DFG_XPORT_SLOTS its inbox (word src * DFG_XPORT_SLOTS + slot is
 * written only by rank src, through notify), then DFG_XPORT_ATOMICS
 * words any peer changes through fadd. Values only grow: a call's values
 * start above every value of earlier calls (see coll.h, dfg_call_val()),
 * so nothing is ever reset.
 *
 * Failure: every blocking operation returns -EOWNERDEAD once a member
 * died (the team is broken: for ever), -ECANCELED once the graph died,
 * and -EPROTO when the rank it waits for aborted the current call (or
 * went past it without delivering, which only an abort does; for atomic
 * words, when any rank aborted exactly the current call).
 *
 * Threads: one thread per transport at a time (the team's collective).
 */
#ifndef _DFG_COLL_XPORT_H
#define _DFG_COLL_XPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include <dfg/coll.h>

/* Inbox slots per source rank; coll.h says who uses which. */
#define DFG_XPORT_SLOTS		16
/* Atomic words per rank. */
#define DFG_XPORT_ATOMICS	16
#define DFG_XPORT_WORDS(size)	((size) * DFG_XPORT_SLOTS + DFG_XPORT_ATOMICS)
/* Largest eager message. */
#define DFG_XPORT_MSG_MAX	480

/* expose() flags */
#define DFG_XPORT_READ		0x1U	/* peers read (get, loads) */
#define DFG_XPORT_WRITE		0x2U	/* peers write (put, stores) */
#define DFG_XPORT_KEEP		0x4U	/* caller keeps the memory until
					 * unexpose: peers may cache (the
					 * team's scratch, never user memory) */

/* dfg_xkey.kind */
#define DFG_XKEY_NONE		0	/* nothing exposed (zero length) */
#define DFG_XKEY_REGION		1	/* a dfg region exported for this key */
#define DFG_XKEY_ARENA		2	/* inside an arena of the team's graph */
#define DFG_XKEY_UCX		3	/* registered with UCX: @id indexes the
					 * exposer's key table, @addr is its
					 * address (xport_ucx.c) */

/* dfg_xkey.flags */
#define DFG_XKEY_F_KEEP		0x1U	/* outlives the call: peers may cache */
#define DFG_XKEY_F_WRITE	0x2U	/* peers may write (put, stores) */

/* Arenas a transport can expose by offset. */
#define DFG_TEAM_ARENAS_MAX	16

/*
 * struct dfg_xkey - how a peer reaches memory a rank exposed
 * @kind:	DFG_XKEY_*
 * @flags:	DFG_XKEY_F_*
 * @id:		region or arena id in the team's graph
 * @base:	region: mmap offset of the region; arena: byte offset of
 *		the exposed start inside the arena
 * @skew:	region: offset of the exposed start inside the region (the
 *		region is page-aligned, the buffer need not be)
 * @len:	bytes exposed
 * @gen:	exposer-wide generation: a peer's cached mapping of
 *		(rank, @id, @gen) is the same memory, any other is not
 * @addr:	the exposer's own address of the start (meaningless to
 *		peers; lets local code turn a key back into a pointer)
 *
 * Plain data: travels in messages as is.
 */
struct dfg_xkey {
	__u16	kind;
	__u16	flags;
	__u32	id;
	__u64	base;
	__u64	skew;
	__u64	len;
	__u64	gen;
	__u64	addr;
};

struct dfg_xport;

/*
 * struct dfg_xport_ops - one transport
 * All return 0 (or a count) or -errno unless said otherwise.
 */
struct dfg_xport_ops {
	const char	*name;
	/*
	 * msg_send() never waits for the receiver to receive: the
	 * transport holds any number of messages not received yet (UCX's
	 * unexpected queue; what a send may wait for, credits, comes back
	 * with the peer's progress, which every waiter makes), so a rank
	 * may send many before its peer receives one. False where a full
	 * box blocks the sender (shared memory).
	 */
	bool		msg_buffered;
	/* Register [@addr, @addr + @len) for DFG_XPORT_READ/WRITE access. */
	int	(*expose)(struct dfg_xport *x, const void *addr, size_t len,
			  unsigned int flags, struct dfg_xkey *key);
	/* Revoke: peers must be done with it (the algorithms see to it). */
	void	(*unexpose)(struct dfg_xport *x, struct dfg_xkey *key);
	/*
	 * Pointer to [@off, @off + @len) of @peer's @key, valid until
	 * release(); NULL with *@err = 0 when this transport has no
	 * load/store access, NULL with *@err < 0 on failure (-ERANGE
	 * outside the key, -EINVAL bad key, mapping errors).
	 */
	void	*(*peer_ptr)(struct dfg_xport *x, unsigned int peer,
			     const struct dfg_xkey *key, size_t off, size_t len,
			     int *err);
	/*
	 * Post a read of @peer's @key at @off into @local (@lkey: the key
	 * of the local memory, for transports that need registered local
	 * memory; may be NULL on shm). Returns a ticket >= 0 for complete().
	 */
	int	(*get)(struct dfg_xport *x, unsigned int peer,
		       const struct dfg_xkey *key, size_t off, void *local,
		       const struct dfg_xkey *lkey, size_t len);
	/* Post a write of @local to @peer's @key at @off; a ticket. */
	int	(*put)(struct dfg_xport *x, unsigned int peer,
		       const struct dfg_xkey *key, size_t off,
		       const void *local, const struct dfg_xkey *lkey,
		       size_t len);
	/* Complete every get and put posted up to ticket @ticket. */
	int	(*complete)(struct dfg_xport *x, int ticket);
	/* Complete every get and put posted so far. */
	int	(*flush)(struct dfg_xport *x);
	/*
	 * Optional (NULL: unknown), for traces only: 1 while the get or put
	 * of @ticket is still in flight, 0 once it has completed (not yet
	 * reaped by complete()), -errno. May progress the transport.
	 */
	int	(*in_flight)(struct dfg_xport *x, int ticket);
	/* @peer's inbox word (this rank, @slot) = @value (monotonic). */
	int	(*notify)(struct dfg_xport *x, unsigned int peer,
			  unsigned int slot, __u64 value);
	/* @peer's atomic word @idx += @add; old value into *@old (or NULL). */
	int	(*fadd)(struct dfg_xport *x, unsigned int peer, unsigned int idx,
			__u64 add, __u64 *old);
	/* Until own word @word >= @value; current value into *@now. */
	int	(*wait)(struct dfg_xport *x, unsigned int word, __u64 value,
			__u64 *now);
	/* Read own word @word without waiting. */
	__u64	(*peek)(struct dfg_xport *x, unsigned int word);
	/*
	 * Eager message to @peer: FIFO per pair, blocks while the box is
	 * full (unless msg_buffered).
	 */
	int	(*msg_send)(struct dfg_xport *x, unsigned int peer,
			    const void *buf, size_t len);
	/* Next message from @src into @buf: its length, or -EMSGSIZE. */
	int	(*msg_recv)(struct dfg_xport *x, unsigned int src, void *buf,
			    size_t cap);
	/*
	 * Optional (may be NULL): until each of the @n ranks @srcs has a
	 * message for us not yet received, with one sleep however many
	 * are missing. 0, or a wait's failure (msg_recv() from the rank
	 * concerned then reports it).
	 */
	int	(*msg_wait_all)(struct dfg_xport *x, const unsigned int *srcs,
				unsigned int n);
	/*
	 * The inbox slot rank @src stores into for rank @dst in call @seq
	 * (slots alternate between odd and even calls), its size into
	 * *@size; NULL where the transport has no inbox (may be NULL). The
	 * odd slot of a pair follows its even one: the two are one area
	 * of 2 * *@size bytes from the even slot (inbox.c places payloads
	 * anywhere in it).
	 */
	void	*(*inbox)(struct dfg_xport *x, unsigned int src,
			  unsigned int dst, __u64 seq, size_t *size);
	/* Until @peer has begun call @seq or a later one. */
	int	(*wait_begun)(struct dfg_xport *x, unsigned int peer,
			      __u64 seq);
	/*
	 * Optional (NULL where peers have load/store access: shared
	 * memory): every put posted before it lands at its peer before any
	 * put posted after it, to any peer (RDMA fence). Posts nothing.
	 */
	int	(*fence)(struct dfg_xport *x);
	/*
	 * Optional, with fence: until every get and put posted so far is
	 * done with its local memory (a put's source may be reused, a get's
	 * data is there). Unlike complete() and flush(), no remote
	 * completion: nothing waits for a peer's progress (a peer that has
	 * left the call may sit in another library, not progressing us).
	 */
	int	(*complete_local)(struct dfg_xport *x);
	/*
	 * Optional, with fence: until the 64-bit word at @word, inside
	 * memory this rank exposed with DFG_XPORT_WRITE and 8-byte aligned,
	 * holds exactly @value (a peer's put: exact, so that a torn 8-byte
	 * write never passes for it), progressing the transport. -EPROTO
	 * when rank @src aborted the current call (what it put before still
	 * counts: the word is read once more).
	 */
	int	(*wait_eq)(struct dfg_xport *x, const __u64 *word, __u64 value,
			   unsigned int src);
	/* This rank enters call @seq (sets x->seq, tells the peers). */
	int	(*begin)(struct dfg_xport *x, __u64 seq);
	/* Make the members' blocking operations of call @seq fail. */
	int	(*abort)(struct dfg_xport *x, __u64 seq);
	/*
	 * Optional (NULL: abort() without a reason): abort() that also
	 * tells the members why (@why, a dfg_xwhy_pack() word, written
	 * where they read it before they can see the abort).
	 */
	int	(*abort_why)(struct dfg_xport *x, __u64 seq, __u64 why);
	/*
	 * Optional (NULL: never known): why call @seq failed: once broken,
	 * the break's reason; after -EPROTO, the reason the aborting rank
	 * gave for call @seq. A dfg_xwhy_pack() word, 0 when unknown.
	 */
	__u64	(*why)(struct dfg_xport *x, __u64 seq);
	/* 0, or -EOWNERDEAD / -ECANCELED once the team is unusable. */
	int	(*broken)(struct dfg_xport *x);
	/*
	 * Optional (NULL: it needs none): do what is pending without
	 * waiting for anything, for a rank that waits elsewhere (a
	 * hierarchy's member sleeping in its machine's kernel team,
	 * dfg_xport_shm_idle()): a network transport answers its peers'
	 * connection requests and acknowledgements only while it runs.
	 */
	void	(*progress)(struct dfg_xport *x);
	/* Drop peer mappings made by peer_ptr() for per-call keys. */
	void	(*release)(struct dfg_xport *x);
	void	(*destroy)(struct dfg_xport *x);
};

/*
 * struct dfg_xport - what every transport has; implementations embed it
 * @ops:	operations
 * @rank:	this member
 * @size:	members
 * @seq:	sequence number of the current call (set by begin())
 * @top:	reasons name ranks of the outermost team: rank r here is
 *		@top[r] there (a hierarchy's node team); NULL: the same
 */
struct dfg_xport {
	const struct dfg_xport_ops	*ops;
	unsigned int			rank;
	unsigned int			size;
	__u64				seq;
	const unsigned int		*top;
};

/*
 * Why a call or a team failed, as one 64-bit word that travels between
 * the members (an 8-byte RDMA write, a shared-memory store, a goodbye on
 * the liveness connections): what (DFG_TEAM_FAIL_*, never 0 in a valid
 * word) in bits 0-7, the errno the member that found it had in 8-15,
 * the rank it concerns (of the outermost team; 0xffff: unknown) in
 * 16-31, and the low 32 bits of the sequence number of the call it
 * aborts (transport-level: a reader matches it with its own call) in
 * 32-63.
 */
#define DFG_XWHY_NOBODY		0xffffU

static inline __u64 dfg_xwhy_pack(unsigned int what, int err,
				  unsigned int rank, __u64 seq)
{
	if (err < 0)
		err = -err;
	return (__u64)(what & 0xff) | (__u64)(err & 0xff) << 8 |
	       (__u64)(rank & 0xffff) << 16 | (seq & 0xffffffffULL) << 32;
}

static inline unsigned int dfg_xwhy_what(__u64 w)
{
	return w & 0xff;
}

static inline int dfg_xwhy_err(__u64 w)
{
	return (w >> 8) & 0xff;
}

static inline unsigned int dfg_xwhy_rank(__u64 w)
{
	return (w >> 16) & 0xffff;
}

/* @w re-stamped for call @seq (a reason passed on to another call). */
static inline __u64 dfg_xwhy_for(__u64 w, __u64 seq)
{
	return w ? (w & 0xffffffffULL) | (seq & 0xffffffffULL) << 32 : 0;
}

/* Does @w (0: no) say why call @seq was aborted? */
static inline bool dfg_xwhy_is_for(__u64 w, __u64 seq)
{
	return dfg_xwhy_what(w) && (w >> 32) == (seq & 0xffffffffULL);
}

/* The outermost team's rank of rank @r of @x. */
static inline unsigned int dfg_xport_top(const struct dfg_xport *x,
					 unsigned int r)
{
	return r >= x->size ? DFG_XWHY_NOBODY : x->top ? x->top[r] : r;
}

/* Abort call @seq with reason @why where the transport carries one. */
static inline int dfg_xport_abort(struct dfg_xport *x, __u64 seq, __u64 why)
{
	if (why && x->ops->abort_why)
		return x->ops->abort_why(x, seq, dfg_xwhy_for(why, seq));
	return x->ops->abort(x, seq);
}

/* Why call @seq of @x failed (0: unknown); dfg_xport_why(): this call. */
static inline __u64 dfg_xport_why_at(struct dfg_xport *x, __u64 seq)
{
	return x->ops->why ? x->ops->why(x, seq) : 0;
}

static inline __u64 dfg_xport_why(struct dfg_xport *x)
{
	return dfg_xport_why_at(x, x->seq);
}

static inline unsigned int dfg_xport_inbox(unsigned int src,
					   unsigned int slot)
{
	return src * DFG_XPORT_SLOTS + slot;
}

static inline unsigned int dfg_xport_atomic(const struct dfg_xport *x,
					    unsigned int idx)
{
	return x->size * DFG_XPORT_SLOTS + idx;
}

/* Who writes own word @word: its source rank, or size for atomic words. */
static inline unsigned int dfg_xport_word_src(const struct dfg_xport *x,
					      unsigned int word)
{
	return word < x->size * DFG_XPORT_SLOTS ? word / DFG_XPORT_SLOTS :
						  x->size;
}

/* Wait for inbox word (@src, @slot) >= @value. */
static inline int dfg_xport_wait_from(struct dfg_xport *x, unsigned int src,
				      unsigned int slot, __u64 value)
{
	return x->ops->wait(x, dfg_xport_inbox(src, slot), value, NULL);
}

struct dfg_kteam;
struct dfg_arena;

/*
 * The shared-memory transport over a joined kernel team. @graph_fd is the
 * team's graph (not owned); @arenas, @nr_arenas: arena views of that graph
 * this process maps (not owned, may be NULL/0): buffers inside them are
 * exposed by arena offset, without a region. @ctl: the control-area bytes
 * reserved for the transport (dfg_xport_shm_ctl_size()). @no_ptr: hide
 * peer_ptr() (tests run the get/put path the RDMA transport will take).
 */
size_t dfg_xport_shm_ctl_size(unsigned int size);
int dfg_xport_shm_create(struct dfg_kteam *kt, int graph_fd, void *ctl,
			 unsigned int size, unsigned int rank, bool no_ptr,
			 struct dfg_xport **out);
int dfg_xport_shm_add_arena(struct dfg_xport *x, struct dfg_arena *a);
/*
 * While @x (a shared-memory transport) sleeps, @other's progress() runs
 * at every wakeup, at least every 100 ms (@other NULL: nothing runs).
 * The other transport must outlive @x's use, or be unset first.
 */
void dfg_xport_shm_idle(struct dfg_xport *x, struct dfg_xport *other);

/*
 * The network transport over UCX (xport_ucx.c): every rank calls it with
 * the same @size and its own @rank; @ag exchanges the ranks' addresses
 * and keys (an MPI_Allgather, or PMIx put/fence/get); then every rank
 * waits at most @timeout_ms (< 0: for ever) for the others to connect:
 * -ETIMEDOUT, or -EOWNERDEAD when one died meanwhile.
 */
int dfg_xport_ucx_create(unsigned int size, unsigned int rank,
			 dfg_allgather_fn ag, void *arg, int timeout_ms,
			 struct dfg_xport **out);
/*
 * What rank @rank told at creation: its machine into *@node (a string of
 * less than DFG_XPORT_NODE_MAX bytes, equal for ranks on one machine, ""
 * when unknown), its random token into *@token. -EINVAL when @x is not
 * this transport.
 */
#define DFG_XPORT_NODE_MAX	48
int dfg_xport_ucx_node(struct dfg_xport *x, unsigned int rank,
		       const char **node, __u64 *token);
/*
 * Whether a waiter of @x naps when idle (where the team's members on this
 * machine outnumber its CPUs, or DFG_COLL_PREV=nap) into *@nap, and the
 * naps taken since @x was created into *@naps (safe from any thread).
 * -EINVAL when @x is not this transport.
 */
int dfg_xport_ucx_naps(struct dfg_xport *x, bool *nap, unsigned long *naps);

#endif /* _DFG_COLL_XPORT_H */
