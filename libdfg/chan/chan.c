// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: channels. Endpoints over the channel mapping of <linux/dfg.h>:
 * the producer's push onto its own ring, the consumer's round-robin pop
 * over all rings, and the park/wake protocol around them.
 *
 * Memory ordering (all on the shared words of <linux/dfg.h>, which are
 * plain __u32/__u64 and accessed with the __atomic builtins):
 *
 *   push:  descriptors (plain stores), tail store-release; then a full
 *          fence and a look at hdr->cons_waiting: WAKE if set.
 *   pop:   tail load-acquire, descriptors (plain loads, each copied once
 *          and checked on the copy), head store-release; then a full fence
 *          and a look at each served ring's prod_waiting: WAKE if any.
 *   park:  waiting flag = 1, full fence, look again, WAIT, flag = 0
 *          (the flag counts this endpoint's waits in flight: it goes down
 *          when the last one ends, see wait_begin()).
 *
 * The two fences pair (Dekker): either the waker sees the flag, or the
 * waiter's second look sees the published index. The kernel looks once
 * more before it parks, so a WAKE cannot be lost between look and WAIT.
 *
 * Shared memory is not trusted: geometry comes from the header once, is
 * checked and kept in struct dfg_chan; an index pair whose fill level is
 * above the depth is -EPROTO; ring entries are always masked; the round
 * robin start is reduced modulo the ring count.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chan.h"

#define DFG_CHAN_FWD_BATCH	64
/* Adaptive polling: clock read and yield every N polls; back-off cap. */
#define DFG_CHAN_SPIN_CLOCK_EVERY	32
#define DFG_CHAN_SPIN_FAILS_MAX		6
#define DFG_CHAN_SPIN_SHORT_DIV		16

#define LOAD_ACQ(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define LOAD(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE_REL(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define STORE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

static inline struct dfg_chan_ring *ring_of(const struct dfg_chan *c,
					    unsigned int i)
{
	return (struct dfg_chan_ring *)((char *)c->hdr + DFG_CHAN_PAGE +
					(size_t)i * c->ring_size);
}

static inline bool desc_ok(const struct dfg_chan *c, const struct dfg_desc *d)
{
	return dfg_arena_ptr(c->pool, d->off, d->len) != NULL;
}

/* ------------------------------------------------------------------------
 * Kernel entry points
 * ------------------------------------------------------------------------
 */

/* Through the thread's wait ring (core/wait.c), else ioctl. */
static int chan_sys_wait(struct dfg_chan *c)
{
	struct dfg_chan_wait w = { 0 };

	return dfg_sys_wait(c->fd, DFG_IOC_CHAN_WAIT, &w, NULL, NULL, NULL);
}

static int chan_sys_wake(struct dfg_chan *c)
{
	struct dfg_chan_wait w = { 0 };

	return dfg_sys_cmd(c->fd, DFG_IOC_CHAN_WAKE, &w);
}

static const struct dfg_chan_ops chan_sys_ops = {
	.wait	= chan_sys_wait,
	.wake	= chan_sys_wake,
};

/* This endpoint's waiting flag: the consumer's, or its producer ring's. */
static __u32 *wait_flag(struct dfg_chan *c)
{
	return c->role == DFG_CHAN_CONSUMER ? &c->hdr->cons_waiting :
					      &ring_of(c, c->slot)->prod_waiting;
}

/*
 * Raise the waiting flag for one more wait and make it visible before the
 * caller looks again (the fence pairs with the peer's after it publishes).
 * The flag stays up while any wait of ours is in flight: the library's own
 * and those the application submitted with dfg_chan_prep_wait().
 */
static void wait_begin(struct dfg_chan *c)
{
	if (!c->nr_waits++)
		STORE(wait_flag(c), 1);
	atomic_thread_fence(memory_order_seq_cst);
}

static void wait_end(struct dfg_chan *c)
{
	if (c->nr_waits && !--c->nr_waits)
		STORE(wait_flag(c), 0);
}

/*
 * WAIT with the waiting flag raised around it; @recheck looks once more
 * after the fence (true: progress possible, do not park). Returns the
 * WAIT result, 0 when the recheck made it unnecessary or on -EINTR (the
 * caller looks again and parks again).
 */
static int chan_park(struct dfg_chan *c, bool (*recheck)(struct dfg_chan *c))
{
	int ret = 0;

	wait_begin(c);
	if (!recheck(c))
		ret = c->ops->wait(c);
	wait_end(c);
	return ret == -EINTR ? 0 : ret;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/*
 * Poll @can_go before parking. Fixed mode: c->spin polls. Adaptive mode:
 * up to c->spin_ns, yielding the CPU every few polls (a peer that shares
 * it runs meanwhile, and needs no wakeup); a full-length poll that ends
 * in a park anyway makes the next full ones rarer (one wait in 2^k after
 * k in a row, k capped) and the waits in between poll only a sixteenth of
 * the budget. A side
 * whose waits are long so burns little, a ping-pong whose peer answers
 * within the budget never parks, and two sides that both park recover:
 * the short polls catch a peer that is polling itself. Returns @can_go's
 * last answer.
 */
static bool chan_spin(struct dfg_chan *c, bool (*can_go)(struct dfg_chan *c))
{
	unsigned int s, budget = c->spin_ns;
	bool full = true;
	__u64 end;

	if (!c->spin_auto) {
		for (s = 0; s < c->spin; s++) {
			if (can_go(c))
				return true;
			cpu_relax();
		}
		return can_go(c);
	}
	if (c->spin_skip) {
		c->spin_skip--;
		budget /= DFG_CHAN_SPIN_SHORT_DIV;
		full = false;
	}
	if (!budget)
		return can_go(c);
	end = mono_ns() + budget;
	for (s = 1;; s++) {
		if (can_go(c)) {
			c->spin_fails = 0;
			c->spin_skip = 0;
			return true;
		}
		cpu_relax();
		if (s % DFG_CHAN_SPIN_CLOCK_EVERY)
			continue;
		if (mono_ns() >= end)
			break;
		/* A peer runnable on this CPU gets it while we poll. */
		sched_yield();
	}
	if (full) {
		if (c->spin_fails < DFG_CHAN_SPIN_FAILS_MAX)
			c->spin_fails++;
		c->spin_skip = (1U << c->spin_fails) - 1;
	}
	return can_go(c);
}

/* DFG_CHAN_SPIN_NS from the environment (0..1 s), else the default. */
static unsigned int chan_spin_default(void)
{
	const char *v = getenv("DFG_CHAN_SPIN_NS");
	unsigned long ns;
	char *end;

	if (!v || !*v)
		return DFG_CHAN_SPIN_NS_DEFAULT;
	ns = strtoul(v, &end, 10);
	if (*end || ns > 1000000000UL)
		return DFG_CHAN_SPIN_NS_DEFAULT;
	return (unsigned int)ns;
}

/* ------------------------------------------------------------------------
 * Endpoints
 * ------------------------------------------------------------------------
 */

/*
 * CPUs online, read once per process: sysconf() opens, reads and closes
 * /sys/devices/system/cpu/online each time, and a run attaches every
 * channel of its sets. After a CPU hotplug the figure may be stale: a
 * channel then parks at once (one CPU seen, two online) or spins its
 * spin time for nothing before parking (the other way round); either is
 * only slower.
 */
static long chan_cpus_online(void)
{
	static _Atomic long cpus;
	long n = atomic_load_explicit(&cpus, memory_order_relaxed);

	if (!n) {
		n = sysconf(_SC_NPROCESSORS_ONLN);
		atomic_store_explicit(&cpus, n, memory_order_relaxed);
	}
	return n;
}

static bool is_pow2(__u64 x)
{
	return x && !(x & (x - 1));
}

int __dfg_chan_attach(void *map, size_t size, int fd, int role,
		      unsigned int slot, struct dfg_arena *pool,
		      const struct dfg_chan_ops *ops, void *priv,
		      struct dfg_chan **out)
{
	const struct dfg_chan_hdr *h = map;
	struct dfg_chan *c;
	__u32 depth, nprod;
	int saved_errno;

	if (!map || !pool || !out)
		return -EINVAL;
	if (role != DFG_CHAN_PRODUCER && role != DFG_CHAN_CONSUMER)
		return -EINVAL;
	if (size < DFG_CHAN_PAGE)
		return -EPROTO;
	depth = LOAD(&h->depth);
	nprod = LOAD(&h->max_producers);
	if (LOAD(&h->magic) != DFG_CHAN_MAGIC || depth < 2 ||
	    depth > DFG_CHAN_DEPTH_MAX || !is_pow2(depth) || !nprod ||
	    nprod > DFG_CHAN_PRODUCERS_MAX ||
	    LOAD(&h->ring_offset) != DFG_CHAN_PAGE ||
	    LOAD(&h->ring_size) != DFG_CHAN_RING_SIZE(depth) ||
	    size < DFG_CHAN_MAP_SIZE(depth, nprod) ||
	    LOAD(&h->pool) != dfg_arena_id(pool) ||
	    LOAD(&h->pool_size) != dfg_arena_size(pool))
		return -EPROTO;
	if (role == DFG_CHAN_PRODUCER ? slot >= nprod : slot != 0)
		return -EPROTO;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = fd;
	c->role = role;
	c->slot = slot;
	c->depth = depth;
	c->mask = depth - 1;
	c->nrings = nprod;
	c->hdr = map;
	c->map_size = size;
	c->ring_size = DFG_CHAN_RING_SIZE(depth);
	c->pool = pool;
	c->ops = ops ? ops : &chan_sys_ops;
	c->priv = priv;
	/*
	 * Views with their own entry points (tests) park at once, and so
	 * does everyone on a machine with one CPU online: the peer cannot
	 * run while we poll. (One allowed CPU is no reason: the peer may
	 * be pinned to another.)
	 */
	c->spin_auto = !ops;
	saved_errno = errno;	/* libc calls below; errno is the caller's */
	if (!ops && chan_cpus_online() > 1)
		c->spin_ns = chan_spin_default();
	errno = saved_errno;
	*out = c;
	return 0;
}

int dfg_chan_create(int graph_fd, unsigned int pool_id, unsigned int depth,
		    unsigned int max_producers)
{
	struct dfg_chan_create cc = {
		.pool		= pool_id,
		.depth		= depth,
		.max_producers	= max_producers,
	};
	int ret;

	if (graph_fd < 0)
		return -EBADF;
	ret = dfg_sys_cmd(graph_fd, DFG_IOC_CHAN_CREATE, &cc);
	if (ret < 0)
		return ret;
	if ((__u32)ret != cc.id)
		return -EPROTO;
	return ret;
}

int dfg_chan_open(int graph_fd, unsigned int id, int role,
		  struct dfg_arena *pool, struct dfg_chan **out)
{
	struct dfg_chan_open op = {
		.id	= id,
		.role	= role,
		.flags	= DFG_CHAN_O_CLOEXEC,
	};
	const struct dfg_chan_hdr *h;
	__u32 depth, nprod;
	size_t size;
	int fd, ret = 0;
	void *map;

	if (!pool || !out)
		return -EINVAL;
	if (role != DFG_CHAN_PRODUCER && role != DFG_CHAN_CONSUMER)
		return -EINVAL;
	if (graph_fd < 0)
		return -EBADF;
	fd = dfg_sys_cmd(graph_fd, DFG_IOC_CHAN_OPEN, &op);
	if (fd < 0)
		return fd;

	/* The header says how much to map; check it before trusting it. */
	h = __dfg_sys_mmap(DFG_CHAN_PAGE, PROT_READ, fd, 0, &ret);
	if (!h)
		goto out_close;
	depth = LOAD(&h->depth);
	nprod = LOAD(&h->max_producers);
	__dfg_sys_munmap((void *)h, DFG_CHAN_PAGE);
	if (depth < 2 || depth > DFG_CHAN_DEPTH_MAX || !is_pow2(depth) ||
	    !nprod || nprod > DFG_CHAN_PRODUCERS_MAX) {
		ret = -EPROTO;
		goto out_close;
	}
	size = DFG_CHAN_MAP_SIZE(depth, nprod);
	map = __dfg_sys_mmap(size, PROT_READ | PROT_WRITE, fd, 0, &ret);
	if (!map)
		goto out_close;
	ret = __dfg_chan_attach(map, size, fd, role, op.slot, pool, NULL,
				NULL, out);
	if (ret < 0)
		goto out_unmap;
	(*out)->mapped = true;
	return 0;

out_unmap:
	__dfg_sys_munmap(map, size);
out_close:
	__dfg_sys_close(fd);
	return ret;
}

void dfg_chan_close(struct dfg_chan *c)
{
	if (!c)
		return;
	if (c->mapped)
		__dfg_sys_munmap(c->hdr, c->map_size);
	if (c->fd >= 0)
		__dfg_sys_close(c->fd);
	free(c);
}

int dfg_chan_fd(const struct dfg_chan *c)
{
	return c ? c->fd : -EINVAL;
}

int dfg_chan_slot(const struct dfg_chan *c)
{
	return c ? (int)c->slot : -EINVAL;
}

void dfg_chan_set_spin(struct dfg_chan *c, unsigned int spins)
{
	if (!c)
		return;
	c->spin_auto = false;
	c->spin = spins;
}

void dfg_chan_set_spin_auto(struct dfg_chan *c, unsigned int max_ns)
{
	if (!c)
		return;
	c->spin_auto = true;
	c->spin_ns = max_ns;
	c->spin_fails = 0;
	c->spin_skip = 0;
}

void *dfg_chan_buf(const struct dfg_chan *c, const struct dfg_desc *d)
{
	if (!c || !d)
		return NULL;
	return dfg_arena_ptr(c->pool, d->off, d->len);
}

void dfg_chan_prep_wait(struct dfg_chan *c, struct io_uring_sqe *sqe,
			__u64 user_data)
{
	wait_begin(c);
	dfg_prep_chan_wait(sqe, c->fd);
	io_uring_sqe_set_data64(sqe, user_data);
}

int dfg_chan_wait_cqe(struct dfg_chan *c, const struct io_uring_cqe *cqe)
{
	if (!c || !cqe)
		return -EINVAL;
	wait_end(c);
	return cqe->res;
}

/* ------------------------------------------------------------------------
 * Producer
 * ------------------------------------------------------------------------
 */

static bool consumer_gone(const struct dfg_chan *c)
{
	return LOAD_ACQ(&c->hdr->consumer_state) == DFG_CHAN_S_CLOSED;
}

/* Free entries in our ring, or -EPROTO. */
static int ring_room(const struct dfg_chan *c, const struct dfg_chan_ring *r)
{
	__u32 fill = LOAD(&r->tail) - LOAD_ACQ(&r->head);

	return fill > c->depth ? -EPROTO : (int)(c->depth - fill);
}

/* Recheck of a producer about to park: room, or a reason to stop. */
static bool prod_can_go(struct dfg_chan *c)
{
	return ring_room(c, ring_of(c, c->slot)) != 0 || consumer_gone(c);
}

/*
 * Publish up to @n descriptors into the ring; stops before the first
 * outside the pool. Returns the number published (0: ring full or d[0]
 * bad; the caller tells them apart) or -EPROTO.
 */
static int push(struct dfg_chan *c, const struct dfg_desc *d, unsigned int n)
{
	struct dfg_chan_ring *r = ring_of(c, c->slot);
	__u32 tail = LOAD(&r->tail), fill, k, i;
	__u64 bytes = 0;
	int room;

	room = ring_room(c, r);
	if (room < 0)
		return room;
	k = n < (unsigned int)room ? n : (unsigned int)room;
	for (i = 0; i < k; i++) {
		if (!desc_ok(c, &d[i]))
			break;
		r->desc[(tail + i) & c->mask] = d[i];
		bytes += d[i].len;
	}
	if (!i)
		return 0;
	STORE_REL(&r->tail, tail + i);

	fill = c->depth - room + i;
	STORE(&r->msgs, LOAD(&r->msgs) + i);
	STORE(&r->bytes, LOAD(&r->bytes) + bytes);
	if (fill > LOAD(&r->hwm))
		STORE(&r->hwm, fill);

	atomic_thread_fence(memory_order_seq_cst);
	if (LOAD(&c->hdr->cons_waiting))
		c->ops->wake(c);
	return i;
}

int dfg_chan_send(struct dfg_chan *c, const struct dfg_desc *d,
		  unsigned int n, unsigned int flags)
{
	struct dfg_chan_ring *r;
	unsigned int sent = 0;
	int ret;

	if (!c || !d || c->role != DFG_CHAN_PRODUCER ||
	    (flags & ~DFG_CHAN_FLAGS_ALL))
		return -EINVAL;
	r = ring_of(c, c->slot);
	while (sent < n) {
		if (consumer_gone(c))
			return sent ? (int)sent : -EPIPE;
		ret = push(c, d + sent, n - sent);
		if (ret < 0)
			return sent ? (int)sent : ret;
		if (ret) {
			sent += ret;
			continue;
		}
		/* Nothing pushed: d[sent] is bad, or the ring is full. */
		if (!desc_ok(c, &d[sent]))
			return sent ? (int)sent : -EINVAL;
		STORE(&r->full_stalls, LOAD(&r->full_stalls) + 1);
		if (flags & DFG_CHAN_NONBLOCK)
			return sent ? (int)sent : -EAGAIN;
		if (chan_spin(c, prod_can_go))
			continue;
		ret = chan_park(c, prod_can_go);
		if (ret == -EPIPE)
			return sent ? (int)sent : -EPIPE;
		if (ret < 0)
			return sent ? (int)sent : ret;
	}
	return (int)sent;
}

/* ------------------------------------------------------------------------
 * Consumer
 * ------------------------------------------------------------------------
 */

/*
 * Take up to @n descriptors from ring @i into @d, stopping before the
 * first one outside the pool (*@bad set, not consumed). Returns the number
 * taken or -EPROTO on corrupted indices.
 */
static int pop(struct dfg_chan *c, unsigned int i, struct dfg_desc *d,
	       unsigned int n, bool *bad)
{
	struct dfg_chan_ring *r = ring_of(c, i);
	__u32 head = LOAD(&r->head), fill, k, j;
	struct dfg_desc e;

	fill = LOAD_ACQ(&r->tail) - head;
	if (fill > c->depth)
		return -EPROTO;
	k = fill < n ? fill : n;
	for (j = 0; j < k; j++) {
		e = r->desc[(head + j) & c->mask];	/* one read, then check */
		if (!desc_ok(c, &e)) {
			*bad = true;
			break;
		}
		d[j] = e;
	}
	if (j)
		STORE_REL(&r->head, head + j);
	return j;
}

/* Consume the (bad) entry at the head of ring @i without looking at it. */
static void drop(struct dfg_chan *c, unsigned int i)
{
	struct dfg_chan_ring *r = ring_of(c, i);

	STORE_REL(&r->head, LOAD(&r->head) + 1);
}

/*
 * One round over the rings from hdr->next: a fair share of @n per ring
 * first, then whatever is left. A bad descriptor ends the round: returned
 * alone as -EBADMSG (and consumed) when nothing was taken before it, else
 * left for the next call. Wakes producers waiting for room in a ring it
 * took from. Returns the number taken, 0, -EBADMSG or -EPROTO.
 */
static int take(struct dfg_chan *c, struct dfg_desc *d, unsigned int n)
{
	unsigned int nr = c->nrings, start, quota, got = 0, pass, i, ri;
	bool served[DFG_CHAN_PRODUCERS_MAX] = { false };
	bool bad = false, stop = false;
	int ret = 0;

	start = LOAD(&c->hdr->next) % nr;
	quota = n / nr ? n / nr : 1;
	for (pass = 0; pass < 2 && got < n && !stop; pass++) {
		for (i = 0; i < nr && got < n; i++) {
			unsigned int want = n - got;

			ri = (start + i) % nr;
			if (!pass && want > quota)
				want = quota;
			ret = pop(c, ri, d + got, want, &bad);
			if (ret > 0) {
				served[ri] = true;
				got += ret;
			}
			if (ret < 0 || bad) {
				if (bad && !got) {
					drop(c, ri);
					served[ri] = true;
					ret = -EBADMSG;
				}
				stop = true;
				break;
			}
		}
	}
	STORE(&c->hdr->next, (start + 1) % nr);

	atomic_thread_fence(memory_order_seq_cst);
	for (i = 0; i < nr; i++)
		if (served[i] && LOAD(&ring_of(c, i)->prod_waiting)) {
			c->ops->wake(c);
			break;
		}
	if (got)
		return (int)got;
	return ret < 0 ? ret : 0;
}

/* Every opened ring closed and drained, at least one opened. */
static bool chan_eof(const struct dfg_chan *c)
{
	bool opened = false;
	unsigned int i;

	for (i = 0; i < c->nrings; i++) {
		const struct dfg_chan_ring *r = ring_of(c, i);
		__u32 st = LOAD_ACQ(&r->state);

		if (st == DFG_CHAN_S_FREE)
			continue;
		if (st != DFG_CHAN_S_CLOSED)
			return false;
		opened = true;
		if (LOAD_ACQ(&r->tail) != LOAD(&r->head))
			return false;
	}
	return opened;
}

/* Recheck of the consumer about to park: data, or end of stream. */
static bool cons_can_go(struct dfg_chan *c)
{
	unsigned int i;

	for (i = 0; i < c->nrings; i++) {
		const struct dfg_chan_ring *r = ring_of(c, i);

		if (LOAD_ACQ(&r->tail) != LOAD(&r->head))
			return true;
	}
	return chan_eof(c);
}

int dfg_chan_recv(struct dfg_chan *c, struct dfg_desc *d, unsigned int n,
		  unsigned int flags)
{
	struct dfg_chan_ring *r0;
	bool eof = false;
	int ret;

	if (!c || !d || !n || c->role != DFG_CHAN_CONSUMER ||
	    (flags & ~DFG_CHAN_FLAGS_ALL))
		return -EINVAL;
	r0 = ring_of(c, 0);
	for (;;) {
		ret = take(c, d, n);
		if (ret)
			return ret;
		if (eof || chan_eof(c))
			return 0;
		/* Ring 0 holds the consumer's channel-wide counter. */
		STORE(&r0->empty_stalls, LOAD(&r0->empty_stalls) + 1);
		if (flags & DFG_CHAN_NONBLOCK)
			return -EAGAIN;
		if (chan_spin(c, cons_can_go))
			continue;
		ret = chan_park(c, cons_can_go);
		if (ret < 0)
			return ret;
		/* The kernel's EOF stands once a last look finds nothing. */
		eof = ret & DFG_CHAN_EV_EOF;
	}
}

int dfg_chan_forward(struct dfg_chan *in, struct dfg_chan *out,
		     unsigned int n)
{
	struct dfg_desc d[DFG_CHAN_FWD_BATCH];
	int got, ret;

	if (!in || !out || !n)
		return -EINVAL;
	if (n > DFG_CHAN_FWD_BATCH)
		n = DFG_CHAN_FWD_BATCH;
	got = dfg_chan_recv(in, d, n, 0);
	if (got <= 0)
		return got;
	ret = dfg_chan_send(out, d, got, 0);
	if (ret < 0)
		return ret;
	return ret < got ? -EINVAL : got;
}
