// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test of channels without the module. The channel memory is
 * anonymous MAP_SHARED memory between PROT_NONE guard pages, with a header
 * this test writes as the kernel would; endpoints are built on it with the
 * library's internal __dfg_chan_attach() and fake WAIT/WAKE operations
 * (WAIT sleeps briefly and lets the caller look again, both count their
 * calls in shared memory), so the ring logic, the waiting-flag protocol
 * and the checks against hostile memory run as in production, across
 * fork() included. The test plays the kernel's part for the state words.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dfg/dfg.h>

#include "../chan/chan.h"
#include "kselftest_harness.h"
#include "guard.h"

#define ERRNO_MARK	12345
#define PAGE		4096UL
#define POOL_SIZE	(64 * 1024UL)

/* Call counters of the fake kernel entry points, shared over fork(). */
struct fake_kernel {
	unsigned int	waits;
	unsigned int	wakes;
};

static int fake_wait(struct dfg_chan *c)
{
	struct fake_kernel *k = c->priv;

	__atomic_fetch_add(&k->waits, 1, __ATOMIC_RELAXED);
	if (c->role == DFG_CHAN_PRODUCER &&
	    c->hdr->consumer_state == DFG_CHAN_S_CLOSED)
		return -EPIPE;
	usleep(100);
	return 0;
}

static int fake_wake(struct dfg_chan *c)
{
	struct fake_kernel *k = c->priv;

	__atomic_fetch_add(&k->wakes, 1, __ATOMIC_RELAXED);
	return 0;
}

static const struct dfg_chan_ops fake_ops = {
	.wait	= fake_wait,
	.wake	= fake_wake,
};

/* Channel memory as DFG_IOC_CHAN_CREATE leaves it, for pool @pool. */
static void fake_hdr(void *map, __u32 depth, __u32 nprod,
		     const struct dfg_arena *pool)
{
	struct dfg_chan_hdr *h = map;

	memset(map, 0, DFG_CHAN_MAP_SIZE(depth, nprod));
	h->magic = DFG_CHAN_MAGIC;
	h->depth = depth;
	h->max_producers = nprod;
	h->pool = dfg_arena_id(pool);
	h->pool_size = dfg_arena_size(pool);
	h->ring_offset = DFG_CHAN_PAGE;
	h->ring_size = DFG_CHAN_RING_SIZE(depth);
	h->consumer_state = DFG_CHAN_S_OPEN;
}

static struct dfg_chan_ring *ring_at(void *map, __u32 depth, unsigned int i)
{
	return (struct dfg_chan_ring *)((char *)map + DFG_CHAN_PAGE +
					i * DFG_CHAN_RING_SIZE(depth));
}

static struct dfg_desc mkdesc(__u64 off, __u32 len, __u64 tag)
{
	return (struct dfg_desc){ .off = off, .len = len, .tag = tag };
}

FIXTURE(chan) {
	void *pool_mem;		/* pool memory, guarded */
	struct dfg_arena *pool;	/* its view */
	void *map;		/* channel memory, guarded */
	size_t map_size;
	__u32 depth;
	__u32 nprod;
	struct fake_kernel *k;	/* shared call counters */
	struct dfg_chan *cons;	/* consumer endpoint */
	struct dfg_chan *prod[4];	/* producer endpoints, slot i */
};

FIXTURE_VARIANT(chan) {
	__u32 depth;
	__u32 nprod;
};

FIXTURE_VARIANT_ADD(chan, d8p1) { .depth = 8, .nprod = 1 };
FIXTURE_VARIANT_ADD(chan, d4p3) { .depth = 4, .nprod = 3 };

FIXTURE_SETUP(chan)
{
	unsigned int i;

	self->depth = variant->depth;
	self->nprod = variant->nprod;
	self->pool_mem = guarded_map(POOL_SIZE);
	ASSERT_NE(NULL, self->pool_mem);
	ASSERT_EQ(0, dfg_arena_wrap(self->pool_mem, POOL_SIZE, 1,
				    &self->pool));
	self->map_size = DFG_CHAN_MAP_SIZE(self->depth, self->nprod);
	self->map = guarded_map(self->map_size);
	ASSERT_NE(NULL, self->map);
	fake_hdr(self->map, self->depth, self->nprod, self->pool);
	self->k = guarded_map(PAGE);
	ASSERT_NE(NULL, self->k);

	ASSERT_EQ(0, __dfg_chan_attach(self->map, self->map_size, -1,
				       DFG_CHAN_CONSUMER, 0, self->pool,
				       &fake_ops, self->k, &self->cons));
	for (i = 0; i < 4; i++) {
		self->prod[i] = NULL;
		if (i >= self->nprod)
			continue;
		ASSERT_EQ(0, __dfg_chan_attach(self->map, self->map_size, -1,
					       DFG_CHAN_PRODUCER, i,
					       self->pool, &fake_ops, self->k,
					       &self->prod[i]));
		ring_at(self->map, self->depth, i)->state = DFG_CHAN_S_OPEN;
	}
}

FIXTURE_TEARDOWN(chan)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		dfg_chan_close(self->prod[i]);
	dfg_chan_close(self->cons);
	guarded_unmap(self->k, PAGE);
	guarded_unmap(self->map, self->map_size);
	dfg_arena_unmap(self->pool);
	guarded_unmap(self->pool_mem, POOL_SIZE);
}

/* Send @n descriptors tagged @first.., 64 bytes apart in the pool. */
static int send_tags(struct dfg_chan *c, __u64 first, unsigned int n,
		     unsigned int flags)
{
	struct dfg_desc d[64];
	unsigned int i;

	for (i = 0; i < n && i < 64; i++)
		d[i] = mkdesc(((first + i) % 1000) * 64, 64, first + i);
	return dfg_chan_send(c, d, n, flags);
}

TEST_F(chan, header_checks)
{
	struct dfg_chan_hdr *h = self->map;
	struct dfg_chan *c = NULL;
	struct dfg_arena *other;

#define EXPECT_ATTACH(err, role, slot, pool) \
	EXPECT_EQ(err, __dfg_chan_attach(self->map, self->map_size, -1, role, \
					 slot, pool, &fake_ops, self->k, &c))
	EXPECT_ATTACH(-EINVAL, 0, 0, self->pool);
	EXPECT_ATTACH(-EINVAL, DFG_CHAN_CONSUMER, 0, NULL);
	EXPECT_ATTACH(-EPROTO, DFG_CHAN_PRODUCER, self->nprod, self->pool);
	EXPECT_ATTACH(-EPROTO, DFG_CHAN_CONSUMER, 1, self->pool);
	EXPECT_EQ(-EPROTO, __dfg_chan_attach(self->map, self->map_size - 1,
					     -1, DFG_CHAN_CONSUMER, 0,
					     self->pool, &fake_ops, self->k,
					     &c));

	/* Pool of another size (and, wrapped, the same id 0). */
	ASSERT_EQ(0, dfg_arena_wrap(self->pool_mem, POOL_SIZE / 2, 1, &other));
	EXPECT_ATTACH(-EPROTO, DFG_CHAN_CONSUMER, 0, other);
	dfg_arena_unmap(other);

	h->pool = 7;
	EXPECT_ATTACH(-EPROTO, DFG_CHAN_CONSUMER, 0, self->pool);
	h->pool = 0;
	h->magic ^= 1;
	EXPECT_ATTACH(-EPROTO, DFG_CHAN_CONSUMER, 0, self->pool);
	h->magic ^= 1;
	h->depth = 6;
	EXPECT_ATTACH(-EPROTO, DFG_CHAN_CONSUMER, 0, self->pool);
	h->depth = 4096;		/* rings larger than the mapping */
	h->ring_size = DFG_CHAN_RING_SIZE(4096);
	EXPECT_ATTACH(-EPROTO, DFG_CHAN_CONSUMER, 0, self->pool);
	h->depth = self->depth;
	h->ring_size = DFG_CHAN_RING_SIZE(self->depth);
	h->max_producers = 0;
	EXPECT_ATTACH(-EPROTO, DFG_CHAN_CONSUMER, 0, self->pool);
	h->max_producers = self->nprod + 1;
	EXPECT_ATTACH(-EPROTO, DFG_CHAN_CONSUMER, 0, self->pool);
	h->max_producers = self->nprod;
	h->ring_size += PAGE;
	EXPECT_ATTACH(-EPROTO, DFG_CHAN_CONSUMER, 0, self->pool);
	h->ring_size -= PAGE;
	EXPECT_EQ(NULL, c);
	EXPECT_ATTACH(0, DFG_CHAN_CONSUMER, 0, self->pool);
	EXPECT_EQ(-1, dfg_chan_fd(c));
	EXPECT_EQ(0, dfg_chan_slot(c));
	EXPECT_EQ(self->nprod - 1, dfg_chan_slot(self->prod[self->nprod - 1]));
	dfg_chan_close(c);
#undef EXPECT_ATTACH
}

TEST_F(chan, bad_args_keep_errno)
{
	struct dfg_desc d = mkdesc(0, 1, 0);
	struct dfg_chan *c;

	errno = ERRNO_MARK;
	EXPECT_EQ(-EINVAL, dfg_chan_send(NULL, &d, 1, 0));
	EXPECT_EQ(-EINVAL, dfg_chan_send(self->prod[0], NULL, 1, 0));
	EXPECT_EQ(-EINVAL, dfg_chan_send(self->prod[0], &d, 1, 0x80));
	EXPECT_EQ(-EINVAL, dfg_chan_send(self->cons, &d, 1, 0));
	EXPECT_EQ(0, dfg_chan_send(self->prod[0], &d, 0, 0));
	EXPECT_EQ(-EINVAL, dfg_chan_recv(self->cons, &d, 0, 0));
	EXPECT_EQ(-EINVAL, dfg_chan_recv(self->prod[0], &d, 1, 0));
	EXPECT_EQ(-EINVAL, dfg_chan_recv(self->cons, &d, 1, 0x80));
	EXPECT_EQ(-EINVAL, dfg_chan_forward(self->cons, NULL, 1));
	EXPECT_EQ(-EINVAL, dfg_chan_fd(NULL));
	EXPECT_EQ(-EINVAL, dfg_chan_slot(NULL));
	EXPECT_EQ(NULL, dfg_chan_buf(NULL, &d));
	EXPECT_EQ(-EBADF, dfg_chan_create(-1, 0, 8, 1));
	EXPECT_EQ(-EBADF, dfg_chan_open(-1, 0, DFG_CHAN_CONSUMER, self->pool,
					&c));
	EXPECT_EQ(-EINVAL, dfg_chan_open(0, 0, 3, self->pool, &c));
	EXPECT_EQ(-EBADF, dfg_chan_create(999, 0, 8, 1));	/* not open */
	dfg_chan_set_spin(NULL, 1);
	dfg_chan_close(NULL);
	EXPECT_EQ(ERRNO_MARK, errno);
}

TEST_F(chan, order_and_stats)
{
	struct dfg_chan_ring *r = ring_at(self->map, self->depth, 0);
	struct dfg_desc d[8];
	__u64 want = 0;
	int i, n;

	ASSERT_EQ(3, send_tags(self->prod[0], 0, 3, 0));
	ASSERT_EQ(1, send_tags(self->prod[0], 3, 1, 0));
	EXPECT_EQ(4, r->msgs);
	EXPECT_EQ(4 * 64, r->bytes);
	EXPECT_EQ(4, r->hwm);
	while (want < 4) {
		n = dfg_chan_recv(self->cons, d, 8, DFG_CHAN_NONBLOCK);
		ASSERT_LT(0, n);
		for (i = 0; i < n; i++, want++) {
			EXPECT_EQ(want, d[i].tag);
			EXPECT_EQ((char *)self->pool_mem + want * 64,
				  dfg_chan_buf(self->cons, &d[i]));
		}
	}
	EXPECT_EQ(-EAGAIN, dfg_chan_recv(self->cons, d, 8, DFG_CHAN_NONBLOCK));
	EXPECT_EQ(4, r->head);
	EXPECT_EQ(4, r->tail);
	EXPECT_EQ(0, self->k->waits);
}

TEST_F(chan, batch_takes_what_is_there)
{
	struct dfg_desc d[8];

	ASSERT_EQ(3, send_tags(self->prod[0], 10, 3, 0));
	EXPECT_EQ(2, dfg_chan_recv(self->cons, d, 2, 0));
	EXPECT_EQ(10, d[0].tag);
	EXPECT_EQ(11, d[1].tag);
	/* Fewer than asked, without waiting. */
	EXPECT_EQ(1, dfg_chan_recv(self->cons, d, 8, 0));
	EXPECT_EQ(12, d[0].tag);
	EXPECT_EQ(0, self->k->waits);
}

TEST_F(chan, full_then_empty)
{
	struct dfg_chan_ring *r = ring_at(self->map, self->depth, 0);
	__u32 depth = self->depth;
	struct dfg_desc d[16];

	EXPECT_EQ(depth, send_tags(self->prod[0], 0, depth + 2,
				   DFG_CHAN_NONBLOCK));
	EXPECT_EQ(-EAGAIN, send_tags(self->prod[0], depth, 1,
				     DFG_CHAN_NONBLOCK));
	EXPECT_EQ(2, r->full_stalls);	/* once per call that found it full */
	EXPECT_EQ(depth, r->hwm);
	EXPECT_EQ(depth, r->tail - r->head);
	EXPECT_EQ(depth, dfg_chan_recv(self->cons, d, 16, 0));
	EXPECT_EQ(-EAGAIN, dfg_chan_recv(self->cons, d, 16,
					 DFG_CHAN_NONBLOCK));
	EXPECT_EQ(1, r->empty_stalls);
}

/* Free-running indices wrap around 2^32 without a hiccup. */
TEST_F(chan, wraparound_u32)
{
	struct dfg_chan_ring *r = ring_at(self->map, self->depth, 0);
	struct dfg_desc d[8];
	__u64 sent = 0, got = 0;
	int i, n;

	r->head = r->tail = UINT32_MAX - 5;
	while (got < 200) {
		if (sent < 200) {
			n = send_tags(self->prod[0], sent, 3,
				      DFG_CHAN_NONBLOCK);
			if (n > 0)
				sent += n;
			else
				ASSERT_EQ(-EAGAIN, n);
		}
		n = dfg_chan_recv(self->cons, d, 2, DFG_CHAN_NONBLOCK);
		ASSERT_LT(0, n);
		for (i = 0; i < n; i++, got++)
			ASSERT_EQ(got, d[i].tag);
		ASSERT_LE(r->tail - r->head, self->depth);
	}
	EXPECT_EQ((__u32)(UINT32_MAX - 5 + 200), r->head);
	EXPECT_GT(UINT32_MAX - 5, r->head);
}

TEST_F(chan, send_checks_descriptors)
{
	struct dfg_chan_ring *r = ring_at(self->map, self->depth, 0);
	struct dfg_desc d[4] = {
		mkdesc(0, 64, 0),
		mkdesc(POOL_SIZE - 64, 64, 1),	/* last bytes: fine */
		mkdesc(POOL_SIZE - 63, 64, 2),	/* one past the end */
		mkdesc(128, 1, 3),
	};
	struct dfg_desc wrap = mkdesc(UINT64_MAX - 8, 16, 9);
	struct dfg_desc out[4];

	EXPECT_EQ(-EINVAL, dfg_chan_send(self->prod[0], &wrap, 1, 0));
	EXPECT_EQ(-EINVAL, dfg_chan_send(self->prod[0], &d[2], 2, 0));
	EXPECT_EQ(0, r->tail);
	EXPECT_EQ(2, dfg_chan_send(self->prod[0], d, 4, 0));
	EXPECT_EQ(2, r->tail);
	EXPECT_EQ(2, dfg_chan_recv(self->cons, out, 4, 0));
	EXPECT_EQ(1, out[1].tag);
}

/* A hostile producer's descriptor is consumed, never handed out. */
TEST_F(chan, recv_drops_bad_descriptors)
{
	struct dfg_chan_ring *r = ring_at(self->map, self->depth, 0);
	struct dfg_desc out[4];

	r->desc[0] = mkdesc(0, 8, 0);
	r->desc[1] = mkdesc(POOL_SIZE, 1, 1);		/* outside */
	r->desc[2] = mkdesc(64, 8, 2);
	r->desc[3] = mkdesc(UINT64_MAX, 2, 3);		/* wraps */
	__atomic_store_n(&r->tail, 4, __ATOMIC_RELEASE);

	EXPECT_EQ(1, dfg_chan_recv(self->cons, out, 4, 0));
	EXPECT_EQ(0, out[0].tag);
	EXPECT_EQ(-EBADMSG, dfg_chan_recv(self->cons, out, 4, 0));
	EXPECT_EQ(1, dfg_chan_recv(self->cons, out, 4, 0));
	EXPECT_EQ(2, out[0].tag);
	EXPECT_EQ(-EBADMSG, dfg_chan_recv(self->cons, out, 4, 0));
	EXPECT_EQ(4, r->head);
	EXPECT_EQ(-EAGAIN, dfg_chan_recv(self->cons, out, 4,
					 DFG_CHAN_NONBLOCK));
}

/* Fill levels above the depth: -EPROTO, and no access past the rings. */
TEST_F(chan, corrupted_indices)
{
	unsigned int last = self->nprod - 1;
	struct dfg_chan_ring *r = ring_at(self->map, self->depth, last);
	struct dfg_desc out[4];

	r->head = 0;
	r->tail = self->depth + 1;
	EXPECT_EQ(-EPROTO, dfg_chan_recv(self->cons, out, 4, 0));
	EXPECT_EQ(-EPROTO, send_tags(self->prod[last], 0, 1, 0));
	r->head = 100;
	r->tail = 10;
	EXPECT_EQ(-EPROTO, dfg_chan_recv(self->cons, out, 4, 0));
	EXPECT_EQ(-EPROTO, send_tags(self->prod[last], 0, 1, 0));
	/* Round robin start out of range: reduced, not trusted. */
	r->head = r->tail = 0xfffffff0;
	((struct dfg_chan_hdr *)self->map)->next = 0xdeadbeef;
	ASSERT_EQ(1, send_tags(self->prod[last], 5, 1, 0));
	EXPECT_EQ(1, dfg_chan_recv(self->cons, out, 4, 0));
	EXPECT_EQ(5, out[0].tag);
}

TEST_F(chan, round_robin_fairness)
{
	unsigned int i, p, np = self->nprod, per[4] = { 0 };
	struct dfg_desc d[12];
	int n;

	if (np < 3)
		SKIP(return, "single ring");
	for (p = 0; p < np; p++)
		ASSERT_EQ(4, send_tags(self->prod[p], p * 100, 4, 0));
	/* One at a time: strict rotation. */
	for (i = 0; i < 2 * np; i++) {
		ASSERT_EQ(1, dfg_chan_recv(self->cons, d, 1, 0));
		EXPECT_EQ((i % np) * 100 + i / np, d[0].tag);
	}
	/* A batch: an equal share of each ring. */
	n = dfg_chan_recv(self->cons, d, np, 0);
	ASSERT_EQ(np, n);
	for (i = 0; i < (unsigned int)n; i++)
		per[d[i].tag / 100]++;
	for (p = 0; p < np; p++)
		EXPECT_EQ(1, per[p]);
	/* Larger than the shares: takes everything left, in ring order. */
	EXPECT_EQ(np, dfg_chan_recv(self->cons, d, 12, 0));
}

TEST_F(chan, eof_and_epipe)
{
	struct dfg_chan_hdr *h = self->map;
	struct dfg_desc d[4];
	unsigned int p;

	/* No producer ever opened: not end of stream. */
	for (p = 0; p < self->nprod; p++)
		ring_at(self->map, self->depth, p)->state = DFG_CHAN_S_FREE;
	EXPECT_EQ(-EAGAIN, dfg_chan_recv(self->cons, d, 4,
					 DFG_CHAN_NONBLOCK));
	ring_at(self->map, self->depth, 0)->state = DFG_CHAN_S_OPEN;
	ASSERT_EQ(2, send_tags(self->prod[0], 0, 2, 0));
	ring_at(self->map, self->depth, 0)->state = DFG_CHAN_S_CLOSED;
	/* What was sent before the close comes first, then EOF, for good. */
	EXPECT_EQ(2, dfg_chan_recv(self->cons, d, 4, 0));
	EXPECT_EQ(0, dfg_chan_recv(self->cons, d, 4, 0));
	EXPECT_EQ(0, dfg_chan_recv(self->cons, d, 4, DFG_CHAN_NONBLOCK));

	h->consumer_state = DFG_CHAN_S_CLOSED;
	EXPECT_EQ(-EPIPE, send_tags(self->prod[0], 0, 1, 0));
	EXPECT_EQ(-EPIPE, send_tags(self->prod[0], 0, 1, DFG_CHAN_NONBLOCK));
}

/* Waiting flags: whoever publishes checks the other side's and wakes. */
TEST_F(chan, wakes_parked_side)
{
	struct dfg_chan_ring *r = ring_at(self->map, self->depth, 0);
	struct dfg_chan_hdr *h = self->map;
	struct dfg_desc d[4];

	ASSERT_EQ(1, send_tags(self->prod[0], 0, 1, 0));
	EXPECT_EQ(0, self->k->wakes);
	h->cons_waiting = 1;
	ASSERT_EQ(1, send_tags(self->prod[0], 1, 1, 0));
	EXPECT_EQ(1, self->k->wakes);
	h->cons_waiting = 0;

	ASSERT_EQ(1, dfg_chan_recv(self->cons, d, 1, 0));
	EXPECT_EQ(1, self->k->wakes);
	r->prod_waiting = 1;
	ASSERT_EQ(1, dfg_chan_recv(self->cons, d, 1, 0));
	EXPECT_EQ(2, self->k->wakes);
	/* Nothing taken from that ring: no wake. */
	EXPECT_EQ(-EAGAIN, dfg_chan_recv(self->cons, d, 1,
					 DFG_CHAN_NONBLOCK));
	EXPECT_EQ(2, self->k->wakes);
}

/*
 * Blocking both ways across fork(): a ring of 4 or 8 entries, 20000
 * descriptors, a consumer that is slower at times and faster at times,
 * so both sides park; in order; EOF once the producer's ring is closed.
 * Then the same with busy polling, which parks less, and with adaptive
 * polling (@spin ~0U).
 */
static void run_blocking(struct __test_metadata *_metadata,
			 FIXTURE_DATA(chan) *self, unsigned int spin)
{
	struct dfg_chan_ring *r = ring_at(self->map, self->depth, 0);
	const __u64 total = 20000;
	struct dfg_desc d[16];
	__u64 got = 0;
	int i, n, status;
	pid_t pid;

	for (i = 1; i < (int)self->nprod; i++)
		ring_at(self->map, self->depth, i)->state = DFG_CHAN_S_FREE;
	if (spin == ~0U) {
		dfg_chan_set_spin_auto(self->prod[0], 200000);
		dfg_chan_set_spin_auto(self->cons, 200000);
	} else {
		dfg_chan_set_spin(self->prod[0], spin);
		dfg_chan_set_spin(self->cons, spin);
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		__u64 sent = 0;

		while (sent < total) {
			n = send_tags(self->prod[0], sent, 1 + sent % 7, 0);
			if (n <= 0)
				_exit(1);
			sent += n;
			if (sent % 4000 < 7)
				usleep(2000);	/* let the consumer park */
		}
		/* The kernel's part: the producer's file went away. */
		__atomic_store_n(&r->state, DFG_CHAN_S_CLOSED,
				 __ATOMIC_RELEASE);
		_exit(0);
	}
	while ((n = dfg_chan_recv(self->cons, d, 1 + got % 16, 0)) > 0) {
		for (i = 0; i < n; i++, got++)
			ASSERT_EQ(got, d[i].tag);
		if (got % 5000 < 16)
			usleep(2000);	/* let the producer fill up and park */
	}
	EXPECT_EQ(0, n);
	EXPECT_EQ(total, got);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_LT(0, r->full_stalls);
	EXPECT_LT(0, r->empty_stalls);
	EXPECT_LT(0, self->k->waits);
	EXPECT_EQ(0, r->prod_waiting);
	EXPECT_EQ(0, ((struct dfg_chan_hdr *)self->map)->cons_waiting);
	TH_LOG("spin %u: waits %u wakes %u full_stalls %llu empty_stalls %llu",
	       spin, self->k->waits, self->k->wakes,
	       (unsigned long long)r->full_stalls,
	       (unsigned long long)r->empty_stalls);
}

TEST_F(chan, blocking_across_fork)
{
	run_blocking(_metadata, self, 0);
}

/* The same with adaptive polling (200 us budget); the pauses make it park. */
TEST_F(chan, blocking_adaptive)
{
	run_blocking(_metadata, self, ~0U);
}

TEST_F(chan, blocking_busy_poll)
{
	run_blocking(_metadata, self, 1000);
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* push_wait's producer: a WAIT of the consumer is answered by a push. */
static struct dfg_chan *wait_pusher;

static int push_wait(struct dfg_chan *c)
{
	struct fake_kernel *k = c->priv;
	unsigned int n = __atomic_add_fetch(&k->waits, 1, __ATOMIC_RELAXED);

	return send_tags(wait_pusher, n, 1, DFG_CHAN_NONBLOCK) == 1 ? 0 : -EIO;
}

static const struct dfg_chan_ops push_wait_ops = {
	.wait	= push_wait,
	.wake	= fake_wake,
};

/* push_when_polling's argument: the producer, ring 0's empty count. */
struct push_poll {
	struct dfg_chan	*prod;
	__u64		*stalls;
	__u64		before;
};

/*
 * Push once the consumer has found the channel empty (its empty count
 * moved, just before it polls), so that the element comes during the
 * poll however late this thread is scheduled; a sleep before the push
 * made the test depend on being run again within the poll's budget (it
 * parked once on a loaded host).
 */
static void *push_when_polling(void *arg)
{
	struct push_poll *p = arg;

	while (__atomic_load_n(p->stalls, __ATOMIC_ACQUIRE) == p->before)
		sched_yield();
	return (void *)(long)send_tags(p->prod, 7, 1, 0);
}

/*
 * Adaptive polling: a full-budget poll that ends in a park makes the next
 * full ones rarer (one wait in 2^k, k capped at 6), the waits in between
 * poll a sixteenth of the budget; every wait here parks. Then a push that
 * comes while the endpoint polls is taken without a park, and resets k.
 */
TEST_F(chan, adaptive_backoff)
{
	const unsigned int budget = 2000000;
	unsigned int i, k = 0, skip = 0;
	struct push_poll pp;
	struct dfg_chan *c;
	struct dfg_desc d;
	pthread_t t;
	void *sent;
	__u64 t0;

	ASSERT_EQ(0, __dfg_chan_attach(self->map, self->map_size, -1,
				       DFG_CHAN_CONSUMER, 0, self->pool,
				       &push_wait_ops, self->k, &c));
	EXPECT_FALSE(c->spin_auto);	/* views park at once */
	dfg_chan_set_spin_auto(c, budget);
	wait_pusher = self->prod[0];
	for (i = 0; i < 130; i++) {
		bool full = !skip;

		t0 = mono_ns();
		ASSERT_EQ(1, dfg_chan_recv(c, &d, 1, 0));
		ASSERT_EQ(i + 1, self->k->waits);
		EXPECT_EQ(i + 1, d.tag);
		if (full) {
			EXPECT_LE(budget, mono_ns() - t0);
			k = k < 6 ? k + 1 : 6;
			skip = (1U << k) - 1;
		} else {
			EXPECT_LE(budget / 16, mono_ns() - t0);
			skip--;
		}
		ASSERT_EQ(k, c->spin_fails);
		ASSERT_EQ(skip, c->spin_skip);
	}
	EXPECT_EQ(6, k);

	/* Data during a full poll: no park, back-off reset. */
	dfg_chan_set_spin_auto(c, 1000000000);
	pp.prod = self->prod[0];
	pp.stalls = &ring_at(self->map, self->depth, 0)->empty_stalls;
	pp.before = __atomic_load_n(pp.stalls, __ATOMIC_ACQUIRE);
	ASSERT_EQ(0, pthread_create(&t, NULL, push_when_polling, &pp));
	ASSERT_EQ(1, dfg_chan_recv(c, &d, 1, 0));
	ASSERT_EQ(0, pthread_join(t, &sent));
	EXPECT_EQ(1, (long)sent);
	EXPECT_EQ(7, d.tag);
	EXPECT_EQ(130, self->k->waits);
	EXPECT_EQ(0, c->spin_fails);
	EXPECT_EQ(0, c->spin_skip);

	/* Budget 0 and fixed spins: straight to the park. */
	dfg_chan_set_spin_auto(c, 0);
	ASSERT_EQ(1, dfg_chan_recv(c, &d, 1, 0));
	EXPECT_EQ(131, self->k->waits);
	dfg_chan_set_spin(c, 0);
	EXPECT_FALSE(c->spin_auto);
	ASSERT_EQ(1, dfg_chan_recv(c, &d, 1, 0));
	EXPECT_EQ(132, self->k->waits);
	dfg_chan_set_spin_auto(NULL, 1);
	dfg_chan_close(c);
}

/* A forwarding stage: descriptors pass unchanged between two channels. */
TEST_F(chan, forward_unchanged)
{
	size_t size2 = DFG_CHAN_MAP_SIZE(8, 1);
	struct dfg_chan *in2, *out2;
	struct dfg_desc d[8];
	void *map2;
	int n;

	map2 = guarded_map(size2);
	ASSERT_NE(NULL, map2);
	fake_hdr(map2, 8, 1, self->pool);
	ring_at(map2, 8, 0)->state = DFG_CHAN_S_OPEN;
	ASSERT_EQ(0, __dfg_chan_attach(map2, size2, -1, DFG_CHAN_PRODUCER, 0,
				       self->pool, &fake_ops, self->k, &out2));
	ASSERT_EQ(0, __dfg_chan_attach(map2, size2, -1, DFG_CHAN_CONSUMER, 0,
				       self->pool, &fake_ops, self->k, &in2));
	ASSERT_EQ(3, send_tags(self->prod[0], 40, 3, 0));
	EXPECT_EQ(3, dfg_chan_forward(self->cons, out2, 8));
	n = dfg_chan_recv(in2, d, 8, 0);
	ASSERT_EQ(3, n);
	EXPECT_EQ(40, d[0].tag);
	EXPECT_EQ(42 * 64, d[2].off);
	EXPECT_EQ(64, d[2].len);
	/* Wrong role on either side. */
	EXPECT_EQ(-EINVAL, dfg_chan_forward(out2, in2, 8));
	dfg_chan_close(in2);
	dfg_chan_close(out2);
	guarded_unmap(map2, size2);
}

TEST(prep_chan_wait)
{
	struct io_uring_sqe sqe[2];
	struct dfg_uring_cmd *cmd;
	unsigned int i;

	memset(sqe, 0xaa, sizeof(sqe));
	dfg_prep_chan_wait(sqe, 42);
	cmd = dfg_sqe_cmd(sqe);
	EXPECT_EQ(IORING_OP_URING_CMD, sqe->opcode);
	EXPECT_EQ(42, sqe->fd);
	EXPECT_EQ(DFG_IOC_CHAN_WAIT, sqe->cmd_op);
	EXPECT_EQ(0, cmd->flags);
	for (i = 0; i < sizeof(cmd->args); i++)
		EXPECT_EQ(0, cmd->args[i]);
	EXPECT_EQ(0, sqe->user_data);
}

TEST_HARNESS_MAIN
