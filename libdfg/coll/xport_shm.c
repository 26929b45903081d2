// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg collectives: the shared-memory transport (xport.h) on one
 * machine, over a kernel team (kteam.h) and dfg regions and arenas.
 *
 * Control area (the transport's part of the team's, zeroed at creation):
 *
 *   struct xshm_hdr			reserved
 *   struct xshm_rank[size]		per rank: doorbell, what it sleeps
 *					on, current and aborted call
 *   __u64 words[size][WORDS(size)]	per rank: inbox and atomic words
 *   struct xshm_mbox[size][size]	mailbox [src][dst], each with
 *					xshm_mbox_depth(size) entries
 *   inbox[dst][src][2][slot]		per destination, source and call
 *					parity: a slot of xshm_inbox_slot()
 *					bytes (none in large teams)
 *
 * Waiting: a rank polls its word briefly, then sleeps on its doorbell (a
 * team WAIT) after publishing which word it sleeps on and looking once
 * more; a notifier stores the word, then (full barrier) rings the
 * doorbell of a rank that sleeps on that very word. Either the sleeper
 * sees the new value, or the notifier sees it sleeping there: no wakeup
 * is lost, and a store nobody sleeps on (a rank that is running, or one
 * that waits for another word) costs its notifier no system call.
 *
 * Inbox: the source stores a small payload into its slots for the
 * destination and says so with a call message (coll/inbox.c); the
 * destination reads it in place. The source stores over a payload of
 * call seq only once the destination began a later call (wait_begun();
 * begin rings a peer sleeping on that): by then the destination is done
 * with call seq.
 *
 * When the team has more members than the machine has CPUs, the rank
 * everybody waits for is likely to wait for a CPU: polling would burn
 * the time it needs, so ranks then poll only a few times, then yield
 * their CPU for a bounded time (DFG_COLL_YIELD_US), then sleep. Yielding
 * hands the CPU over at once, like sleeping, but the yielder needs no
 * wakeup: a root that broadcasts small payloads call after call (its
 * receivers' mailboxes are deep enough to hold a time slice of its
 * calls) makes no system call for them, and each receiver, when its
 * turn comes, takes every call waiting for it; a rank that slept would
 * be woken, switched to and put back to sleep for each message.
 *
 * Memory: a buffer inside an arena this process registered is exposed by
 * arena offset; anything else is exported as a region for the call (the
 * page-rounded range), revoked at unexpose. Peers map regions on first
 * use and unmap them at release(), except keys with DFG_XKEY_F_KEEP (the
 * team's scratch, which only unexpose ends): those mappings are kept
 * while the (rank, id, generation) stays the same. User memory is never
 * cached: the user may free and reuse an address between calls.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dfg/region.h>

#include "copy.h"
#include "sys.h"
#include "coll.h"
#include "kteam.h"

/*
 * Mailbox depth: what the team's mailboxes may take (the [src][dst]
 * boxes share XSHM_MBOX_BUDGET), a power of two from 4 to 64. The depth
 * is how many calls a rank may run ahead of a receiver: where ranks
 * outnumber CPUs, a root that broadcasts eagerly runs its time slice
 * through as many calls while its receivers wait for a CPU, and each of
 * them then takes all of them in one turn. With 4, every 4th call of
 * such a root slept until a receiver ran (issue 11: 8-byte broadcasts
 * at N = 4 on 2 vCPUs took 300 us where Open MPI's took 13 us).
 */
#define XSHM_MBOX_BUDGET	(4U << 20)
#define XSHM_MBOX_DEPTH_MIN	4U
#define XSHM_MBOX_DEPTH_MAX	64U
/* Polls before sleeping: with CPUs to spare, and oversubscribed. */
#define XSHM_SPIN		2000
#define XSHM_SPIN_CROWDED	16
/*
 * Under QEMU's TCG, with CPUs to spare, a wait first looks this many
 * times without a pause: TCG emulates `pause` by leaving the translated
 * code for its vCPU loop (the big QEMU lock taken and dropped), a
 * fraction of a microsecond in which a store of the peer is not seen.
 * DESIGN.md, "Collectives: the pause under TCG". DFG_COLL_PREV=pause:
 * every look pauses (as on hardware, where a pause costs nanoseconds).
 */
#define XSHM_TIGHT		1024
/*
 * Oversubscribed, a rank that polled its XSHM_SPIN_CROWDED times yields
 * its CPU for up to DFG_COLL_YIELD_US (coll.h: dfg_coll_yield_ns())
 * before it sleeps: a rank that waits for one that waits for a CPU lets
 * it run, and stays ready for what comes, without a wakeup (a system call
 * for its waker and two context switches for each message otherwise).
 */
#define XSHM_SLEEP_NS		(100 * 1000 * 1000LL)
#define XSHM_MAPS_MAX		64
/*
 * Bytes of all inbox slots of a team, and the bounds of one slot: 256 KiB
 * at N = 2 to 4, 64 KiB at N = 8, 16 KiB at 16, 2 KiB at 45, none above.
 * With a 2 MiB budget (16 KiB slots at N = 8), an all-to-all of 64 KiB
 * blocks at N = 8 took the tiles (each block read from the source's
 * buffer, exported for the call): 0.80x Open MPI's time in the quiet run
 * at 76c13f5, while the inbox at 16 KiB blocks was 4.7x (issue 11).
 * coll_vs_mpi -a tiles and -a direct in the test VM (5 rounds, heavily
 * loaded host: indications only), tiles or direct time / the inbox's:
 * N = 8, 64 KiB blocks: tiles 2.52 (1.89-3.36), direct 3.37 (2.81-5.90);
 * N = 4, 64-256 KiB blocks: tiles 2.04-3.07. The slots are part of the
 * team's control area, allocated when the team is made: 8 MiB at N = 4
 * to 8 instead of 2 MiB (N = 2 keeps 2 MiB: the slot's cap). All-to-all
 * blocks larger than a slot (up to 2 MiB) go through the slots in pieces
 * (inbox.c), so the budget needs no growing for them.
 */
#define XSHM_INBOX_BUDGET	(8U << 20)
#define XSHM_INBOX_SLOT_MAX	(256U << 10)
#define XSHM_INBOX_SLOT_MIN	(2U << 10)

/*
 * DFG_COLL_STATS=K: every K calls, a line to stderr of what this rank's
 * waits did in them (struct xshm_stats), and their time: where a call's
 * microseconds go without a clock read per wait (the test VM's clock is
 * a system call). Waits by kind (a peer's message, room in a box, a
 * peer's begin, a word, a set of messages); of all of them, how many
 * found what they waited for at the first look, the looks that did not
 * and the pauses among them (XSHM_TIGHT), yields, sleeps and the
 * wakeups this rank rang.
 * @hist: waits by failed looks before they were done: 0, 1, 2-3, 4-15,
 * 16-127, 128-1023, 1024 and more (with @pauses of them paused).
 */
enum xshm_wk { XSHM_WK_MSG, XSHM_WK_ROOM, XSHM_WK_BEGUN, XSHM_WK_WORD,
	       XSHM_WK_ALL, XSHM_WK_NR };
#define XSHM_HIST	7

struct xshm_stats {
	unsigned long	every;
	unsigned long	calls;
	__u64		waits[XSHM_WK_NR];
	__u64		ready, polls, pauses, yields, sleeps, wakes;
	__u64		hist[XSHM_HIST];
	long long	t0;
};

struct xshm_hdr {
	__u64		reserved[8];
};

/*
 * Per rank: @doorbell as above; @sleep_on, 1 + the control-area offset
 * of the word it sleeps on (0: not sleeping, or a notifier already rang
 * it); @sleep_val, the value it waits for there; @cur_seq, the call it
 * is in (stored at begin); @aborted_seq, the last call it aborted;
 * @arrivals, messages sent to it while it slept on this very word
 * (msg_wait_all(); @sleep_val is then the count that completes its set);
 * @why, the reason it gave for its last abort (stored before
 * @aborted_seq: a rank that sees the abort sees its reason).
 *
 * @sleep_on has a cache line of its own: every notification and every
 * begin loads the peer's, and the peer stores it only around a sleep, so
 * a running peer's stays in the loader's cache; next to @cur_seq, which
 * its owner stores at every call, it was a miss per call and peer.
 */
struct xshm_rank {
	_Atomic __u32	doorbell;
	__u32		pad0;
	_Atomic __u64	cur_seq;
	_Atomic __u64	aborted_seq;
	_Atomic __u64	arrivals;
	_Atomic __u64	why;
	__u64		pad1[3];
	_Atomic __u32	sleep_on;
	__u32		pad2;
	_Atomic __u64	sleep_val;
	__u64		pad3[6];
};

_Static_assert(sizeof(struct xshm_rank) == 128, "two cache lines");

struct xshm_msg {
	__u32		len;
	__u32		pad;
	unsigned char	data[DFG_XPORT_MSG_MAX];
};

/*
 * Bytes from one mailbox entry to the next: a multiple of the cache line,
 * so that a message of up to 56 bytes (a call header and 16 bytes of
 * payload) is one line for its receiver to fetch; packed at 488 bytes, 6
 * entries in 8 straddled two lines. DFG_COLL_PREV=mbox packs them.
 */
#define XSHM_ENT_BYTES		512
_Static_assert(sizeof(struct xshm_msg) <= XSHM_ENT_BYTES, "entry");

/*
 * head: messages sent (sender writes); tail: consumed (receiver writes);
 * then the entries (the transport's @depth of them, @ent bytes apart).
 */
struct xshm_mbox {
	_Atomic __u64	head;
	__u64		pad0[7];
	_Atomic __u64	tail;
	__u64		pad1[7];
	unsigned char	ent[];
};

/*
 * struct xshm_map - a peer's memory mapped here
 * @peer, @id, @gen, @kind: whose key it is
 * @keep:	a DFG_XKEY_F_KEEP key: survives release()
 * @view:	the mapping (region or arena view)
 */
struct xshm_map {
	unsigned int		peer;
	unsigned int		id;
	__u64			gen;
	__u16			kind;
	bool			keep;
	struct dfg_arena	*view;
};

/*
 * struct xshm - the transport
 * @x:		the common part
 * @kt:		kernel team (not owned)
 * @graph_fd:	the team's graph (not owned)
 * @no_ptr:	hide peer_ptr() from the algorithms
 * @spin:	polls of a word before sleeping on it
 * @tight:	of those, the first ones without a pause (XSHM_TIGHT)
 * @hdr, @ranks, @words, @boxes: the control area, parsed
 * @nwords:	words per rank
 * @depth:	entries per mailbox (xshm_mbox_depth())
 * @ent:	bytes per entry (xshm_ent_bytes())
 * @box_bytes:	bytes per mailbox (xshm_mbox_bytes())
 * @tail_seen:	per peer, the tail of our box to it as last read: the
 *		sender reads the receiver's line again only when the box
 *		looks full (NULL: at every message, DFG_COLL_PREV=mbox)
 * @head_seen:	per source, the head of its box to us as last read: the
 *		receiver reads the sender's line again only when it has
 *		taken every message it knew of (NULL: at every message)
 * @begin_fence: begin() fences once per peer (DFG_COLL_PREV=begin)
 * @wait_all:	msg_wait_all() waits (false: returns at once, the caller
 *		then waits for each box in turn; DFG_COLL_PREV=waitall)
 * @yield_ns:	how long a wait yields before it sleeps (0: never)
 * @inbox:	the inbox slots (NULL: none)
 * @slot:	bytes per inbox slot
 * @gen:	generation of the next key exposed
 * @tickets:	last get/put ticket
 * @arenas:	registered arena views (not owned)
 * @maps:	peers' memory mapped here
 * @why_last:	the reason of the abort that failed our last wait
 */
struct xshm {
	struct dfg_xport	x;
	struct dfg_kteam	*kt;
	int			graph_fd;
	bool			no_ptr;
	unsigned int		spin;
	unsigned int		tight;
	struct xshm_hdr		*hdr;
	struct xshm_rank	*ranks;
	_Atomic __u64		*words;
	unsigned char		*boxes;
	unsigned int		nwords;
	unsigned int		depth;
	size_t			ent;
	size_t			box_bytes;
	__u64			*tail_seen;
	__u64			*head_seen;
	bool			begin_fence;
	bool			wait_all;
	long long		yield_ns;
	unsigned char		*inbox;
	size_t			slot;
	__u64			gen;
	int			tickets;
	struct dfg_arena	*arenas[DFG_TEAM_ARENAS_MAX];
	unsigned int		nr_arenas;
	struct xshm_map		maps[XSHM_MAPS_MAX];
	unsigned int		nr_maps;
	__u64			why_last;
	struct xshm_stats	st;
	/* Progressed at every wakeup of a sleep (dfg_xport_shm_idle()). */
	struct dfg_xport	*idle;
};

static inline struct xshm *to_xshm(struct dfg_xport *x)
{
	return (struct xshm *)x;
}

static size_t xshm_words_bytes(unsigned int size)
{
	size_t b = (size_t)size * DFG_XPORT_WORDS(size) * sizeof(__u64);

	return (b + 63) & ~(size_t)63;
}

/* Bytes per mailbox entry (see XSHM_ENT_BYTES). */
static size_t xshm_ent_bytes(void)
{
	return dfg_coll_prev("mbox") ? sizeof(struct xshm_msg) :
				       XSHM_ENT_BYTES;
}

/*
 * Bytes of one inbox slot of a team of @size: the budget shared by the
 * 2 * size * size slots, at most XSHM_INBOX_SLOT_MAX; 0 (no inbox) when
 * that leaves less than XSHM_INBOX_SLOT_MIN.
 */
static size_t xshm_inbox_slot(unsigned int size)
{
	size_t b = XSHM_INBOX_BUDGET / (2 * (size_t)size * size);

	if (b > XSHM_INBOX_SLOT_MAX)
		b = XSHM_INBOX_SLOT_MAX;
	return b < XSHM_INBOX_SLOT_MIN ? 0 : b & ~(size_t)63;
}

/*
 * Entries of each mailbox of a team of @size with entries of @ent bytes
 * (see XSHM_MBOX_BUDGET).
 */
static unsigned int xshm_mbox_depth(unsigned int size, size_t ent)
{
	size_t fit = XSHM_MBOX_BUDGET / ((size_t)size * size * ent);
	unsigned int d = XSHM_MBOX_DEPTH_MAX;

	while (d > XSHM_MBOX_DEPTH_MIN && d > fit)
		d /= 2;
	return d;
}

/* Bytes of one mailbox with its entries, cache-aligned. */
static size_t xshm_mbox_bytes(unsigned int size, size_t ent)
{
	size_t b = sizeof(struct xshm_mbox) + xshm_mbox_depth(size, ent) * ent;

	return (b + 63) & ~(size_t)63;
}

/* Control-area offset of the inbox: after the mailboxes, cache-aligned. */
static size_t xshm_inbox_off(unsigned int size, size_t ent)
{
	size_t off = sizeof(struct xshm_hdr) +
		     size * sizeof(struct xshm_rank) + xshm_words_bytes(size) +
		     (size_t)size * size * xshm_mbox_bytes(size, ent);

	return (off + 63) & ~(size_t)63;
}

size_t dfg_xport_shm_ctl_size(unsigned int size)
{
	return xshm_inbox_off(size, xshm_ent_bytes()) +
	       2 * (size_t)size * size * xshm_inbox_slot(size);
}

/* Bin of @hist for a wait that polled @polls times. */
static unsigned int xshm_hist_bin(__u64 polls)
{
	static const __u64 lim[XSHM_HIST - 1] = { 1, 2, 4, 16, 128, 1024 };
	unsigned int i = 0;

	while (i < XSHM_HIST - 1 && polls >= lim[i])
		i++;
	return i;
}

/* DFG_COLL_STATS: a wait of @kind ended after @polls failed looks. */
static void xshm_count(struct xshm *s, enum xshm_wk kind, __u64 polls)
{
	struct xshm_stats *st = &s->st;

	if (!st->every)
		return;
	st->waits[kind]++;
	st->ready += !polls;
	st->polls += polls;
	st->hist[xshm_hist_bin(polls)]++;
}

/* DFG_COLL_STATS: a call begins; every K calls, the line. */
static void xshm_stats_call(struct xshm *s)
{
	struct xshm_stats *st = &s->st;
	double k = st->every;
	long long t;
	char buf[512];

	if (!st->every)
		return;
	if (!st->t0) {
		st->t0 = dfg_coll_now_ns(CLOCK_MONOTONIC);
		return;
	}
	if (++st->calls < st->every)
		return;
	t = dfg_coll_now_ns(CLOCK_MONOTONIC);
	/* One write per line: ranks share the terminal. */
	snprintf(buf, sizeof(buf),
		 "dfg-stats shm rank=%u size=%u tight=%u seq=%llu calls=%lu us/call=%.2f per call: waits msg=%.2f room=%.2f begun=%.2f word=%.2f all=%.2f ready=%.2f polls=%.2f pauses=%.2f yields=%.2f sleeps=%.2f wakes=%.2f hist=%llu/%llu/%llu/%llu/%llu/%llu/%llu\n",
		 s->x.rank, s->x.size, s->tight,
		 (unsigned long long)s->x.seq, st->calls,
		 (t - st->t0) / 1e3 / k, st->waits[XSHM_WK_MSG] / k,
		 st->waits[XSHM_WK_ROOM] / k, st->waits[XSHM_WK_BEGUN] / k,
		 st->waits[XSHM_WK_WORD] / k, st->waits[XSHM_WK_ALL] / k,
		 st->ready / k, st->polls / k, st->pauses / k, st->yields / k,
		 st->sleeps / k, st->wakes / k,
		 (unsigned long long)st->hist[0],
		 (unsigned long long)st->hist[1],
		 (unsigned long long)st->hist[2],
		 (unsigned long long)st->hist[3],
		 (unsigned long long)st->hist[4],
		 (unsigned long long)st->hist[5],
		 (unsigned long long)st->hist[6]);
	fputs(buf, stderr);
	fflush(stderr);
	*st = (struct xshm_stats){ .every = st->every,
				   .t0 = dfg_coll_now_ns(CLOCK_MONOTONIC) };
}

static inline void xshm_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static int xshm_broken(struct dfg_xport *x)
{
	struct xshm *s = to_xshm(x);
	__u32 state = s->kt->hdr->state;

	if (state == DFG_TEAM_S_DEAD)
		return -ECANCELED;
	return dfg_kteam_broken(s->kt) ? -EOWNERDEAD : 0;
}

/*
 * Has the call we are in failed, as far as a wait for @src (or any rank:
 * @src == size) goes? @src aborted it, or moved past it (so it aborted
 * it: a successful call delivers what we wait for first). The caller
 * reads its word again after a "yes" (an abort of a later call says
 * nothing about this one).
 */
static int xshm_check(struct xshm *s, unsigned int src)
{
	__u64 w = s->x.seq;
	bool aborted = false;
	int ret;

	if (w && src < s->x.size) {
		struct xshm_rank *r = &s->ranks[src];

		aborted = atomic_load_explicit(&r->aborted_seq,
					       memory_order_acquire) >= w ||
			  atomic_load_explicit(&r->cur_seq,
					       memory_order_acquire) > w;
		if (aborted)
			s->why_last = atomic_load_explicit(&r->why,
						memory_order_relaxed);
	} else if (w) {
		for (unsigned int i = 0; i < s->x.size && !aborted; i++) {
			_Atomic __u64 *a = &s->ranks[i].aborted_seq;

			aborted = atomic_load_explicit(a, memory_order_acquire)
				  == w;
			if (aborted)
				s->why_last = atomic_load_explicit(
					&s->ranks[i].why, memory_order_relaxed);
		}
	}
	/*
	 * Read after the abort: a rank that aborted because a member died
	 * saw the team broken first, and so do we now; the death is the
	 * reason to report.
	 */
	ret = xshm_broken(&s->x);
	return ret ? ret : aborted ? -EPROTO : 0;
}

/* What a rank sleeping on @p publishes in its sleep_on. */
static __u32 xshm_sleep_tag(const struct xshm *s, const void *p)
{
	return (__u32)((const char *)p - (const char *)s->hdr) + 1;
}

/*
 * Ring @peer's doorbell if it sleeps on @p, which we just set to @v, and
 * @v is what it waits for (the caller's fence orders that store before
 * the look at sleep_on; one fence serves several peers). The notifier
 * that rings takes sleep_on back to 0, so the others that store to @p
 * before the sleeper runs again (a root that broadcasts call after call)
 * make no system call. A sleeper publishes
 * sleep_val before sleep_on (release, read here with acquire), so the
 * value read is its current one or a later one of its (after its fence,
 * it looks at @p again: it sees @v then).
 */
/* Wake @r, which sleeps on @tag, unless another notifier did. */
static void xshm_wake(struct xshm *s, struct xshm_rank *r, __u32 tag)
{
	if (!atomic_compare_exchange_strong(&r->sleep_on, &tag, 0))
		return;
	atomic_fetch_add_explicit(&r->doorbell, 1, memory_order_seq_cst);
	dfg_kteam_wake(s->kt, (const uint32_t *)&r->doorbell);
	s->st.wakes++;
}

static void xshm_ring_fenced(struct xshm *s, unsigned int peer,
			     const void *p, __u64 v)
{
	struct xshm_rank *r = &s->ranks[peer];
	__u32 tag = xshm_sleep_tag(s, p);

	if (atomic_load_explicit(&r->sleep_on, memory_order_acquire) != tag ||
	    v < atomic_load_explicit(&r->sleep_val, memory_order_relaxed))
		return;
	xshm_wake(s, r, tag);
}

/* The fence, then xshm_ring_fenced(). */
static void xshm_ring(struct xshm *s, unsigned int peer, const void *p,
		      __u64 v)
{
	atomic_thread_fence(memory_order_seq_cst);
	xshm_ring_fenced(s, peer, p, v);
}

/*
 * xshm_ring() for a message (@p the box's head): a receiver asleep in
 * msg_wait_all() counts it in its arrivals and is woken by the message
 * that completes its set. The count is read after the fetch-and-add, the
 * sleeper's target written before its last look at the count (both
 * sequentially consistent): either it sees our message counted, or we
 * see its target.
 */
static void xshm_ring_msg(struct xshm *s, unsigned int peer, const void *p,
			  __u64 v)
{
	struct xshm_rank *r = &s->ranks[peer];
	__u32 tag = xshm_sleep_tag(s, &r->arrivals);
	__u64 n;

	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&r->sleep_on, memory_order_acquire) != tag) {
		xshm_ring_fenced(s, peer, p, v);
		return;
	}
	n = atomic_fetch_add_explicit(&r->arrivals, 1, memory_order_seq_cst);
	if (n + 1 >= atomic_load_explicit(&r->sleep_val, memory_order_seq_cst))
		xshm_wake(s, r, tag);
}

/*
 * Shall a wait that has polled enough yield once more instead of
 * sleeping? *@since: 0, or when it began to yield.
 */
static bool xshm_yield(struct xshm *s, long long *since)
{
	long long t;

	if (!s->yield_ns)
		return false;
	t = dfg_coll_now_ns(CLOCK_MONOTONIC);
	if (!*since)
		*since = t;
	if (t - *since >= s->yield_ns)
		return false;
	sched_yield();
	s->st.yields++;
	return true;
}

/*
 * The end of a wait's round: sleep on our doorbell (read as @bell before
 * we published what we sleep on) unless @ret says not to (1: it came;
 * < 0: our check failed), then sleep on nothing. 0 to look again, or a
 * failure to return (-EPROTO from our check is looked at again at the
 * top of the wait).
 */
static int xshm_sleep(struct xshm *s, __u32 bell, int ret)
{
	struct xshm_rank *me = &s->ranks[s->x.rank];

	if (!ret) {
		ret = dfg_kteam_wait(s->kt, (const uint32_t *)&me->doorbell,
				     bell, XSHM_SLEEP_NS);
		s->st.sleeps++;
	}
	atomic_store_explicit(&me->sleep_on, 0, memory_order_relaxed);
	if (s->idle)
		s->idle->ops->progress(s->idle);
	return ret < 0 && ret != -ETIMEDOUT && ret != -EINTR &&
	       ret != -EPROTO ? ret : 0;
}

/*
 * Until *@p >= @value, written by @src (size: anyone): poll, yield for a
 * while where the team is crowded, then sleep on our doorbell.
 */
static int xshm_wait_u64(struct xshm *s, _Atomic __u64 *p, __u64 value,
			 unsigned int src, __u64 *now, enum xshm_wk kind)
{
	struct xshm_rank *me = &s->ranks[s->x.rank];
	unsigned int tries = 0;
	long long since = 0;
	__u64 v, polls = 0;
	int ret;

	for (;;) {
		v = atomic_load_explicit(p, memory_order_acquire);
		if (v >= value)
			break;
		if (++polls <= s->tight)
			continue;
		if (tries < s->spin) {
			tries++;
			s->st.pauses++;
			xshm_relax();
			continue;
		}
		ret = xshm_check(s, src);
		if (ret) {
			/* What it delivered before it went on still counts. */
			v = atomic_load_explicit(p, memory_order_acquire);
			if (v >= value)
				break;
			xshm_count(s, kind, polls);
			return ret;
		}
		if (xshm_yield(s, &since))
			continue;
		__u32 bell = atomic_load_explicit(&me->doorbell,
						  memory_order_acquire);

		atomic_store_explicit(&me->sleep_val, value,
				      memory_order_relaxed);
		atomic_store_explicit(&me->sleep_on, xshm_sleep_tag(s, p),
				      memory_order_seq_cst);
		atomic_thread_fence(memory_order_seq_cst);
		v = atomic_load_explicit(p, memory_order_acquire);
		ret = xshm_sleep(s, bell, v >= value ? 1 : xshm_check(s, src));
		if (ret) {
			xshm_count(s, kind, polls);
			return ret;
		}
	}
	xshm_count(s, kind, polls);
	if (now)
		*now = v;
	return 0;
}

static _Atomic __u64 *xshm_word(struct xshm *s, unsigned int rank,
				unsigned int word)
{
	return &s->words[(size_t)rank * s->nwords + word];
}

static int xshm_wait(struct dfg_xport *x, unsigned int word, __u64 value,
		     __u64 *now)
{
	struct xshm *s = to_xshm(x);

	if (word >= s->nwords)
		return -EINVAL;
	return xshm_wait_u64(s, xshm_word(s, x->rank, word), value,
			     dfg_xport_word_src(x, word), now, XSHM_WK_WORD);
}

static __u64 xshm_peek(struct dfg_xport *x, unsigned int word)
{
	struct xshm *s = to_xshm(x);

	if (word >= s->nwords)
		return 0;
	return atomic_load_explicit(xshm_word(s, x->rank, word),
				    memory_order_acquire);
}

static int xshm_notify(struct dfg_xport *x, unsigned int peer,
		       unsigned int slot, __u64 value)
{
	struct xshm *s = to_xshm(x);
	_Atomic __u64 *w;

	if (peer >= x->size || slot >= DFG_XPORT_SLOTS)
		return -EINVAL;
	w = xshm_word(s, peer, dfg_xport_inbox(x->rank, slot));
	atomic_store_explicit(w, value, memory_order_release);
	xshm_ring(s, peer, w, value);
	return 0;
}

static int xshm_fadd(struct dfg_xport *x, unsigned int peer, unsigned int idx,
		     __u64 add, __u64 *old)
{
	struct xshm *s = to_xshm(x);
	_Atomic __u64 *w;
	__u64 o;

	if (peer >= x->size || idx >= DFG_XPORT_ATOMICS)
		return -EINVAL;
	w = xshm_word(s, peer, dfg_xport_atomic(x, idx));
	o = atomic_fetch_add_explicit(w, add, memory_order_acq_rel);
	if (old)
		*old = o;
	xshm_ring(s, peer, w, o + add);
	return 0;
}

static struct xshm_mbox *xshm_box(struct xshm *s, unsigned int src,
				  unsigned int dst)
{
	size_t i = (size_t)src * s->x.size + dst;

	return (struct xshm_mbox *)(s->boxes + i * s->box_bytes);
}

/* Entry @i (a message count) of box @b. */
static struct xshm_msg *xshm_ent(struct xshm *s, struct xshm_mbox *b,
				 __u64 i)
{
	return (struct xshm_msg *)(b->ent + (i % s->depth) * s->ent);
}

static int xshm_msg_send(struct dfg_xport *x, unsigned int peer,
			 const void *buf, size_t len)
{
	struct xshm *s = to_xshm(x);
	struct xshm_mbox *b;
	struct xshm_msg *m;
	__u64 head;
	int ret;

	if (peer >= x->size || len > DFG_XPORT_MSG_MAX)
		return -EINVAL;
	b = xshm_box(s, x->rank, peer);
	head = atomic_load_explicit(&b->head, memory_order_relaxed);
	if (head >= s->depth &&
	    (!s->tail_seen || s->tail_seen[peer] < head + 1 - s->depth)) {
		__u64 tail;

		ret = xshm_wait_u64(s, &b->tail, head + 1 - s->depth,
				    peer, &tail, XSHM_WK_ROOM);
		if (ret)
			return ret;
		if (s->tail_seen)
			s->tail_seen[peer] = tail;
	}
	m = xshm_ent(s, b, head);
	m->len = len;
	memcpy(m->data, buf, len);
	atomic_store_explicit(&b->head, head + 1, memory_order_release);
	xshm_ring_msg(s, peer, &b->head, head + 1);
	return 0;
}

static int xshm_msg_recv(struct dfg_xport *x, unsigned int src, void *buf,
			 size_t cap)
{
	struct xshm *s = to_xshm(x);
	struct xshm_mbox *b;
	struct xshm_msg *m;
	__u64 tail;
	size_t len;
	int ret;

	if (src >= x->size)
		return -EINVAL;
	b = xshm_box(s, src, x->rank);
	tail = atomic_load_explicit(&b->tail, memory_order_relaxed);
	/* Entries below a head we read (acquire) are there already. */
	if (!s->head_seen || s->head_seen[src] <= tail) {
		__u64 head;

		ret = xshm_wait_u64(s, &b->head, tail + 1, src, &head,
				    XSHM_WK_MSG);
		if (ret)
			return ret;
		if (s->head_seen)
			s->head_seen[src] = head;
	}
	m = xshm_ent(s, b, tail);
	/* The peer writes len: never trust it beyond the entry. */
	len = m->len;
	if (len > DFG_XPORT_MSG_MAX)
		len = DFG_XPORT_MSG_MAX;
	if (len <= cap)
		memcpy(buf, m->data, len);
	atomic_store_explicit(&b->tail, tail + 1, memory_order_release);
	xshm_ring(s, src, &b->tail, tail + 1);
	return len <= cap ? (int)len : -EMSGSIZE;
}

/* Has @src a message for us that we have not received? */
static bool xshm_msg_ready(struct xshm *s, unsigned int src)
{
	struct xshm_mbox *b = xshm_box(s, src, s->x.rank);
	__u64 tail = atomic_load_explicit(&b->tail, memory_order_relaxed);
	__u64 head;

	if (s->head_seen && s->head_seen[src] > tail)
		return true;
	head = atomic_load_explicit(&b->head, memory_order_acquire);
	if (s->head_seen)
		s->head_seen[src] = head;
	return head > tail;
}

/* How many of @srcs have no message for us: the first of them in *@first. */
static unsigned int xshm_msg_missing(struct xshm *s, const unsigned int *srcs,
				     unsigned int n, unsigned int *first)
{
	unsigned int m = 0;

	for (unsigned int i = 0; i < n; i++) {
		if (xshm_msg_ready(s, srcs[i]))
			continue;
		if (!m)
			*first = srcs[i];
		m++;
	}
	return m;
}

/*
 * Poll the boxes of @srcs, yield where crowded (as xshm_wait_u64()), then
 * sleep on our arrivals until as many messages came as were missing: one
 * wakeup, by the last sender, where waiting on each box in turn woke us
 * for each late one. The count is published before the boxes are looked
 * at again, and a sender stores its message before it looks whether we
 * count (xshm_ring_msg()): a message missing in that look is counted.
 */
static int xshm_msg_wait_all(struct dfg_xport *x, const unsigned int *srcs,
			     unsigned int n)
{
	struct xshm *s = to_xshm(x);
	struct xshm_rank *me = &s->ranks[x->rank];
	__u32 tag = xshm_sleep_tag(s, &me->arrivals), bell;
	unsigned int tries = 0, first = 0, m;
	long long since = 0;
	__u64 a0, polls = 0;
	int ret;

	for (unsigned int i = 0; i < n; i++)
		if (srcs[i] >= x->size)
			return -EINVAL;
	if (!s->wait_all)
		return 0;
	for (;;) {
		if (!xshm_msg_missing(s, srcs, n, &first)) {
			xshm_count(s, XSHM_WK_ALL, polls);
			return 0;
		}
		if (++polls <= s->tight)
			continue;
		if (tries < s->spin) {
			tries++;
			s->st.pauses++;
			xshm_relax();
			continue;
		}
		ret = xshm_check(s, first);
		if (ret) {
			xshm_count(s, XSHM_WK_ALL, polls);
			return ret;
		}
		if (xshm_yield(s, &since))
			continue;
		bell = atomic_load_explicit(&me->doorbell, memory_order_acquire);
		atomic_store_explicit(&me->sleep_val, UINT64_MAX,
				      memory_order_relaxed);
		atomic_store_explicit(&me->sleep_on, tag, memory_order_seq_cst);
		atomic_thread_fence(memory_order_seq_cst);
		a0 = atomic_load_explicit(&me->arrivals, memory_order_acquire);
		m = xshm_msg_missing(s, srcs, n, &first);
		ret = 1;
		if (m) {
			atomic_store_explicit(&me->sleep_val, a0 + m,
					      memory_order_seq_cst);
			atomic_thread_fence(memory_order_seq_cst);
			if (atomic_load_explicit(&me->arrivals,
						 memory_order_seq_cst) < a0 + m)
				ret = xshm_check(s, first);
		}
		ret = xshm_sleep(s, bell, ret);
		if (ret) {
			xshm_count(s, XSHM_WK_ALL, polls);
			return ret;
		}
	}
}

static int xshm_begin(struct dfg_xport *x, __u64 seq)
{
	struct xshm *s = to_xshm(x);
	_Atomic __u64 *cur = &s->ranks[x->rank].cur_seq;

	xshm_stats_call(s);
	x->seq = seq;
	atomic_store_explicit(cur, seq, memory_order_release);
	/*
	 * A peer may sleep in wait_begun() for this very store: one fence
	 * orders it before the look at every peer's sleep_on.
	 */
	if (!s->inbox)
		return 0;
	if (!s->begin_fence)
		atomic_thread_fence(memory_order_seq_cst);
	for (unsigned int r = 0; r < x->size; r++) {
		if (r == x->rank)
			continue;
		if (s->begin_fence)
			xshm_ring(s, r, cur, seq);
		else
			xshm_ring_fenced(s, r, cur, seq);
	}
	return 0;
}

static void *xshm_inbox(struct dfg_xport *x, unsigned int src,
			unsigned int dst, __u64 seq, size_t *size)
{
	struct xshm *s = to_xshm(x);
	size_t i;

	if (!s->inbox || s->no_ptr || src >= x->size || dst >= x->size)
		return NULL;
	i = ((size_t)dst * x->size + src) * 2 + (seq & 1);
	*size = s->slot;
	return s->inbox + i * s->slot;
}

static int xshm_wait_begun(struct dfg_xport *x, unsigned int peer, __u64 seq)
{
	struct xshm *s = to_xshm(x);

	if (peer >= x->size)
		return -EINVAL;
	return xshm_wait_u64(s, &s->ranks[peer].cur_seq, seq, peer, NULL,
			     XSHM_WK_BEGUN);
}

/*
 * Why our last wait failed: the module's reason once the team is broken
 * (a death: which member), else the reason the aborting rank stored for
 * this very call.
 */
static __u64 xshm_why(struct dfg_xport *x, __u64 seq)
{
	struct xshm *s = to_xshm(x);
	int dead;

	if (s->kt->hdr->state == DFG_TEAM_S_DEAD)
		return dfg_xwhy_pack(DFG_TEAM_FAIL_ERROR, ECANCELED,
				     DFG_XWHY_NOBODY, seq);
	if (dfg_kteam_broken(s->kt)) {
		dead = dfg_kteam_dead_rank(s->kt);
		return dfg_xwhy_pack(DFG_TEAM_FAIL_KILLED, EOWNERDEAD,
				     dead < 0 ? DFG_XWHY_NOBODY :
				     dfg_xport_top(x, (unsigned int)dead),
				     seq);
	}
	/* A peer's next call can fail us before we saw its abort: look. */
	for (unsigned int r = 0; r < x->size && seq &&
	     !dfg_xwhy_is_for(s->why_last, seq); r++)
		if (atomic_load_explicit(&s->ranks[r].aborted_seq,
					 memory_order_acquire) == seq)
			s->why_last = atomic_load_explicit(&s->ranks[r].why,
							   memory_order_relaxed);
	return dfg_xwhy_is_for(s->why_last, seq) ? s->why_last : 0;
}

static int xshm_abort(struct dfg_xport *x, __u64 seq);

/* The reason first, then the abort that makes the members look at it. */
static int xshm_abort_why(struct dfg_xport *x, __u64 seq, __u64 why)
{
	struct xshm *s = to_xshm(x);

	atomic_store_explicit(&s->ranks[x->rank].why, why,
			      memory_order_relaxed);
	return xshm_abort(x, seq);
}

static int xshm_abort(struct dfg_xport *x, __u64 seq)
{
	struct xshm *s = to_xshm(x);
	_Atomic __u64 *a = &s->ranks[x->rank].aborted_seq;

	if (atomic_load(a) < seq)
		atomic_store(a, seq);
	atomic_thread_fence(memory_order_seq_cst);
	for (unsigned int r = 0; r < x->size; r++) {
		if (r == x->rank)
			continue;
		atomic_fetch_add(&s->ranks[r].doorbell, 1);
		dfg_kteam_wake(s->kt, (const uint32_t *)&s->ranks[r].doorbell);
	}
	return 0;
}

void dfg_xport_shm_idle(struct dfg_xport *x, struct dfg_xport *other)
{
	to_xshm(x)->idle = other && other->ops->progress ? other : NULL;
}

int dfg_xport_shm_add_arena(struct dfg_xport *x, struct dfg_arena *a)
{
	struct xshm *s = to_xshm(x);

	if (!a || !dfg_arena_id(a))
		return -EINVAL;
	for (unsigned int i = 0; i < s->nr_arenas; i++)
		if (s->arenas[i] == a)
			return -EEXIST;
	if (s->nr_arenas == DFG_TEAM_ARENAS_MAX)
		return -ENOSPC;
	s->arenas[s->nr_arenas++] = a;
	return 0;
}

static struct dfg_arena *xshm_arena_of(struct xshm *s, const void *addr,
				       size_t len)
{
	uintptr_t p = (uintptr_t)addr;

	for (unsigned int i = 0; i < s->nr_arenas; i++) {
		struct dfg_arena *a = s->arenas[i];
		uintptr_t b = (uintptr_t)dfg_arena_base(a);
		size_t size = dfg_arena_size(a);

		if (p >= b && p - b <= size && len <= size - (p - b))
			return a;
	}
	return NULL;
}

static int xshm_expose(struct dfg_xport *x, const void *addr, size_t len,
		       unsigned int flags, struct dfg_xkey *key)
{
	struct xshm *s = to_xshm(x);
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t start, end;
	struct dfg_arena *a;
	__u64 off;
	int id;

	if (flags & ~(DFG_XPORT_READ | DFG_XPORT_WRITE | DFG_XPORT_KEEP))
		return -EINVAL;
	*key = (struct dfg_xkey){
		.kind = DFG_XKEY_NONE,
		.len = len,
		.gen = ++s->gen,
		.addr = (uintptr_t)addr,
	};
	if (flags & DFG_XPORT_KEEP)
		key->flags |= DFG_XKEY_F_KEEP;
	if (flags & DFG_XPORT_WRITE)
		key->flags |= DFG_XKEY_F_WRITE;
	if (!len)
		return 0;
	a = xshm_arena_of(s, addr, len);
	if (a) {
		key->kind = DFG_XKEY_ARENA;
		key->id = dfg_arena_id(a);
		key->base = (uintptr_t)addr - (uintptr_t)dfg_arena_base(a);
		key->skew = dfg_arena_size(a);	/* peers map the whole arena */
		return 0;
	}
	start = (uintptr_t)addr & ~(uintptr_t)(pg - 1);
	end = ((uintptr_t)addr + len + pg - 1) & ~(uintptr_t)(pg - 1);
	if (end < start)
		return -EINVAL;
	id = dfg_region_export(s->graph_fd, (void *)start, end - start,
			       flags & DFG_XPORT_WRITE ? DFG_REGION_F_WRITE : 0,
			       &off);
	if (id < 0)
		return id;
	key->kind = DFG_XKEY_REGION;
	key->id = id;
	key->base = off;
	key->skew = (uintptr_t)addr - start;
	return 0;
}

static void xshm_unexpose(struct dfg_xport *x, struct dfg_xkey *key)
{
	struct xshm *s = to_xshm(x);

	if (key->kind == DFG_XKEY_REGION)
		dfg_region_unexport(s->graph_fd, key->id);
	key->kind = DFG_XKEY_NONE;
}

static void xshm_unmap(struct xshm *s, unsigned int i)
{
	dfg_arena_unmap(s->maps[i].view);
	s->maps[i] = s->maps[--s->nr_maps];
}

/* Map @peer's @key here (or find the mapping): its view, or NULL. */
static struct dfg_arena *xshm_map(struct xshm *s, unsigned int peer,
				  const struct dfg_xkey *key, int *err)
{
	bool keep = key->flags & DFG_XKEY_F_KEEP;
	bool wr = key->flags & DFG_XKEY_F_WRITE;
	struct dfg_arena *v = NULL;
	unsigned int i;
	int ret;

	if (key->kind == DFG_XKEY_ARENA) {
		for (i = 0; i < s->nr_arenas; i++)
			if (dfg_arena_id(s->arenas[i]) == key->id &&
			    (!wr || dfg_arena_writable(s->arenas[i])))
				return s->arenas[i];
	}
	for (i = 0; i < s->nr_maps; i++) {
		struct xshm_map *m = &s->maps[i];

		if (m->peer != peer || m->kind != key->kind)
			continue;
		if (m->id == key->id && m->gen == key->gen)
			return m->view;
		/* A newer scratch of that peer: the old one is revoked. */
		if (keep && m->keep) {
			xshm_unmap(s, i);
			i--;
		}
	}
	if (s->nr_maps == XSHM_MAPS_MAX) {
		*err = -ENOSPC;
		return NULL;
	}
	if (key->kind == DFG_XKEY_REGION)
		ret = dfg_region_map(s->graph_fd, key->id, key->base,
				     key->skew + key->len, wr, &v);
	else if (key->kind == DFG_XKEY_ARENA)
		ret = dfg_arena_map(s->graph_fd, key->id, key->skew, wr, &v);
	else
		ret = -EINVAL;
	if (ret < 0) {
		*err = ret;
		return NULL;
	}
	s->maps[s->nr_maps++] = (struct xshm_map){
		.peer = peer, .id = key->id, .gen = key->gen,
		.kind = key->kind, .keep = keep, .view = v,
	};
	return v;
}

static void *xshm_ptr(struct xshm *s, unsigned int peer,
		      const struct dfg_xkey *key, size_t off, size_t len,
		      int *err)
{
	struct dfg_arena *v;
	__u64 at;

	*err = 0;
	if (peer >= s->x.size) {
		*err = -EINVAL;
		return NULL;
	}
	if (off > key->len || len > key->len - off) {
		*err = -ERANGE;
		return NULL;
	}
	if (peer == s->x.rank)
		return (char *)(uintptr_t)key->addr + off;
	if (!len)
		return (char *)(uintptr_t)1;	/* never dereferenced */
	v = xshm_map(s, peer, key, err);
	if (!v)
		return NULL;
	at = (key->kind == DFG_XKEY_ARENA ? key->base : key->skew) + off;
	if (at > dfg_arena_size(v) || len > dfg_arena_size(v) - at) {
		*err = -ERANGE;
		return NULL;
	}
	return (char *)dfg_arena_base(v) + at;
}

static void *xshm_peer_ptr(struct dfg_xport *x, unsigned int peer,
			   const struct dfg_xkey *key, size_t off, size_t len,
			   int *err)
{
	struct xshm *s = to_xshm(x);

	if (s->no_ptr && peer != x->rank) {
		*err = 0;
		return NULL;
	}
	return xshm_ptr(s, peer, key, off, len, err);
}

/* Transfers are done when posted: tickets only count them. */
static int xshm_ticket(struct xshm *s)
{
	s->tickets = (s->tickets + 1) & INT32_MAX;
	return s->tickets;
}

static int xshm_get(struct dfg_xport *x, unsigned int peer,
		    const struct dfg_xkey *key, size_t off, void *local,
		    const struct dfg_xkey *lkey, size_t len)
{
	struct xshm *s = to_xshm(x);
	int err;
	void *p = xshm_ptr(s, peer, key, off, len, &err);

	(void)lkey;
	if (!p)
		return err;
	if (len)
		dfg_copy(local, p, len);
	return xshm_ticket(s);
}

static int xshm_put(struct dfg_xport *x, unsigned int peer,
		    const struct dfg_xkey *key, size_t off, const void *local,
		    const struct dfg_xkey *lkey, size_t len)
{
	int err;
	void *p;

	(void)lkey;
	if (!(key->flags & DFG_XKEY_F_WRITE))
		return -EACCES;
	p = xshm_ptr(to_xshm(x), peer, key, off, len, &err);
	if (!p)
		return err;
	if (len)
		dfg_copy(p, local, len);
	return xshm_ticket(to_xshm(x));
}

/* get and put complete at once here; order them before what follows. */
static int xshm_complete(struct dfg_xport *x, int ticket)
{
	(void)x;
	(void)ticket;
	atomic_thread_fence(memory_order_seq_cst);
	return 0;
}

static int xshm_flush(struct dfg_xport *x)
{
	(void)x;
	atomic_thread_fence(memory_order_seq_cst);
	return 0;
}

static void xshm_release(struct dfg_xport *x)
{
	struct xshm *s = to_xshm(x);

	for (unsigned int i = 0; i < s->nr_maps; i++) {
		if (!s->maps[i].keep) {
			xshm_unmap(s, i);
			i--;
		}
	}
}

static void xshm_destroy(struct dfg_xport *x)
{
	struct xshm *s = to_xshm(x);

	while (s->nr_maps)
		xshm_unmap(s, 0);
	free(s->tail_seen);
	free(s->head_seen);
	free(s);
}

static const struct dfg_xport_ops xshm_ops = {
	.name		= "shm",
	.expose		= xshm_expose,
	.unexpose	= xshm_unexpose,
	.peer_ptr	= xshm_peer_ptr,
	.get		= xshm_get,
	.put		= xshm_put,
	.complete	= xshm_complete,
	.flush		= xshm_flush,
	.notify		= xshm_notify,
	.fadd		= xshm_fadd,
	.wait		= xshm_wait,
	.peek		= xshm_peek,
	.msg_send	= xshm_msg_send,
	.msg_recv	= xshm_msg_recv,
	.msg_wait_all	= xshm_msg_wait_all,
	.inbox		= xshm_inbox,
	.wait_begun	= xshm_wait_begun,
	.begin		= xshm_begin,
	.abort		= xshm_abort,
	.abort_why	= xshm_abort_why,
	.why		= xshm_why,
	.broken		= xshm_broken,
	.release	= xshm_release,
	.destroy	= xshm_destroy,
};

int dfg_xport_shm_create(struct dfg_kteam *kt, int graph_fd, void *ctl,
			 unsigned int size, unsigned int rank, bool no_ptr,
			 struct dfg_xport **out)
{
	struct xshm *s;
	char *p = ctl;
	unsigned long every;
	long long yield;
	int ret;

	if (!kt || !ctl || !size || rank >= size)
		return -EINVAL;
	ret = dfg_coll_yield_ns(&yield);
	if (!ret)
		ret = dfg_coll_stats_every(&every);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->x = (struct dfg_xport){ .ops = &xshm_ops, .rank = rank,
				   .size = size };
	s->kt = kt;
	s->graph_fd = graph_fd;
	s->no_ptr = no_ptr;
	s->spin = dfg_coll_crowded(size) ? XSHM_SPIN_CROWDED : XSHM_SPIN;
	s->yield_ns = s->spin == XSHM_SPIN_CROWDED ? yield : 0;
	s->tight = s->spin == XSHM_SPIN && dfg_cpu_tcg() &&
		   !dfg_coll_prev("pause") ? XSHM_TIGHT : 0;
	s->nwords = DFG_XPORT_WORDS(size);
	s->hdr = (struct xshm_hdr *)p;
	p += sizeof(struct xshm_hdr);
	s->ranks = (struct xshm_rank *)p;
	p += size * sizeof(struct xshm_rank);
	s->words = (_Atomic __u64 *)p;
	p += xshm_words_bytes(size);
	s->boxes = (unsigned char *)p;
	s->ent = xshm_ent_bytes();
	s->depth = xshm_mbox_depth(size, s->ent);
	s->box_bytes = xshm_mbox_bytes(size, s->ent);
	s->slot = xshm_inbox_slot(size);
	s->inbox = s->slot ? (unsigned char *)ctl +
			     xshm_inbox_off(size, s->ent) : NULL;
	s->st.every = every;
	s->begin_fence = dfg_coll_prev("begin");
	s->wait_all = !dfg_coll_prev("waitall");
	if (!dfg_coll_prev("mbox")) {
		s->tail_seen = calloc(size, sizeof(*s->tail_seen));
		s->head_seen = calloc(size, sizeof(*s->head_seen));
		if (!s->tail_seen || !s->head_seen) {
			free(s->tail_seen);
			free(s->head_seen);
			free(s);
			return -ENOMEM;
		}
	}
	*out = &s->x;
	return 0;
}
