// SPDX-License-Identifier: GPL-2.0
/*
 * Channels: DFG_IOC_CHAN_CREATE/OPEN/WAIT/WAKE, endpoint mmap, EOF, -EPIPE,
 * deaths and graph death, over raw ioctl and uring_cmd (never libdfg).
 *
 * FIXTURE(chan) gives each test a graph with a 16-page arena (pool id 1)
 * and runs it over ioctl, uring_cmd inline and uring_cmd indirect
 * (FIXTURE_VARIANT); waits that must block run in a thread (ioctl) or stay
 * in the ring (io_uring). Plain TESTs fork processes to kill. Every test
 * ends with sysfs "pages" back where it started. region_pool puts a channel
 * over an exported region instead of the arena.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include "dfg_sys.h"
#include "dfg_evmon.h"
#include "chan.h"
#include "kselftest_harness.h"

#define PAGE		4096UL
#define DEPTH		8
#define NPROD		2
#define MAPSZ		DFG_CHAN_MAP_SIZE(DEPTH, NPROD)

static long long chan_attr(int g, int cid, const char *attr)
{
	char name[128];
	__u64 v = 0;
	int ret;

	snprintf(name, sizeof(name), "graphs/%d/chan%d/%s", dfg_graph_id(g), cid,
		 attr);
	ret = dfg_sysfs_read_u64(name, &v);
	return ret < 0 ? ret : (long long)v;
}

/* ------------------------------------------------------------------------
 * A WAIT that may block: io_uring SQE left in the ring, or ioctl in a thread
 * ------------------------------------------------------------------------
 */
struct pending {
	struct dfg_pending	cmd;
	struct dfg_chan_wait	args;
};

static int wait_start(struct pending *p, enum dfg_path path,
		      struct io_uring *ring, int fd)
{
	memset(&p->args, 0, sizeof(p->args));
	return dfg_pending_start(&p->cmd, path, ring, fd, DFG_IOC_CHAN_WAIT,
				 &p->args, sizeof(p->args), 0x77);
}

/*
 * 0 with *@res once the WAIT completed within @ms, -ETIME otherwise. The
 * events come back in res2 (inline) or in the struct (ioctl, indirect).
 */
static int wait_end(struct pending *p, int ms, int *res)
{
	int ret = dfg_pending_end(&p->cmd, ms, res);

	if (ret || *res <= 0)
		return ret;
	if (p->cmd.path == DFG_PATH_INLINE
	    ? p->cmd.cqe.res2 != (__u64)*res : p->args.events != (__u32)*res)
		*res = -EPROTO;
	return 0;
}

/* ------------------------------------------------------------------------
 * FIXTURE(chan)
 * ------------------------------------------------------------------------
 */

/* The consumer, then a producer, of channel @id; 0 or -errno. */
static int open_pair(int g, int id, struct chan_ep *c, struct chan_ep *p)
{
	int ret = chan_ep_open(g, id, DFG_CHAN_CONSUMER, MAPSZ, c);

	if (ret)
		return ret;
	ret = chan_ep_open(g, id, DFG_CHAN_PRODUCER, MAPSZ, p);
	if (ret)
		chan_ep_close(c);
	return ret;
}

FIXTURE(chan) {
	int dev;		/* /dev/dfg */
	int g;			/* graph with arena 1 (16 pages) */
	int id;			/* a channel: DEPTH x NPROD on arena 1 */
	struct io_uring ring;	/* SQE128 | CQE32, uring variants */
	bool have_ring;
	__u64 pages0;		/* sysfs pages before the graph */
	__u64 parked0;		/* sysfs parked at setup */
};

FIXTURE_VARIANT(chan) {
	enum dfg_path path;
};

FIXTURE_VARIANT_ADD(chan, ioctl) {
	.path = DFG_PATH_IOCTL,
};

FIXTURE_VARIANT_ADD(chan, uring) {
	.path = DFG_PATH_INLINE,
};

FIXTURE_VARIANT_ADD(chan, uring_indirect) {
	.path = DFG_PATH_INDIRECT,
};

FIXTURE_SETUP(chan)
{
	struct dfg_info info;

	self->g = -1;
	self->dev = sys_dfg_open();
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, dfg_get_info(self->dev, &info));
	if (!(info.features & DFG_F_CHAN))
		SKIP(return, "module without DFG_F_CHAN");
	if (variant->path != DFG_PATH_IOCTL) {
		ASSERT_EQ(0, dfg_ring_init(&self->ring, 16));
		self->have_ring = true;
	}
	self->pages0 = dfg_sysfs_u64("pages");
	self->parked0 = dfg_sysfs_u64("parked");
	self->g = chan_graph_new(self->dev, "chan");
	ASSERT_LE(0, self->g);
	self->id = chan_create(self->g, 1, DEPTH, NPROD, NULL);
	ASSERT_LT(1, self->id);
}

FIXTURE_TEARDOWN(chan)
{
	if (self->g >= 0)
		close(self->g);
	if (self->have_ring)
		io_uring_queue_exit(&self->ring);
	close(self->dev);
	EXPECT_EQ(self->pages0, dfg_sysfs_wait("pages", self->pages0));
	EXPECT_EQ(self->parked0, dfg_sysfs_wait("parked", self->parked0));
}

/* CREATE and OPEN over the variant's path. */
static int run(enum dfg_path path, struct io_uring *ring, int fd, __u32 cmd,
	       void *args, __u32 len, __u64 *res2)
{
	return dfg_cmd(path, fd, ring, cmd, args, len, res2);
}

#define RUN(fd, cmd, args, res2) \
	run(variant->path, &self->ring, fd, cmd, args, sizeof(*(args)), res2)

TEST_F(chan, create_errors)
{
	struct {
		__u32 pool, depth, nprod, flags;
		int err;
	} bad[] = {
		{ 1, 0, 1, 0, -EINVAL },
		{ 1, 1, 1, 0, -EINVAL },
		{ 1, 3, 1, 0, -EINVAL },
		{ 1, DFG_CHAN_DEPTH_MAX * 2, 1, 0, -EINVAL },
		{ 1, 8, 0, 0, -EINVAL },
		{ 1, 8, DFG_CHAN_PRODUCERS_MAX + 1, 0, -EINVAL },
		{ 1, 8, 1, 1, -EINVAL },
		{ 0, 8, 1, 0, -ENOENT },
		{ 99, 8, 1, 0, -ENOENT },
		{ (__u32)self->id, 8, 1, 0, -ENOENT },	/* a channel */
	};
	struct dfg_chan_create c;
	__u64 res2 = 0;
	unsigned int i;
	int ro;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&c, 0, sizeof(c));
		c.pool = bad[i].pool;
		c.depth = bad[i].depth;
		c.max_producers = bad[i].nprod;
		c.flags = bad[i].flags;
		EXPECT_EQ(bad[i].err, RUN(self->g, DFG_IOC_CHAN_CREATE, &c,
					  NULL)) TH_LOG("case %u", i);
	}
	memset(&c, 0, sizeof(c));
	c.pool = 1;
	c.depth = 8;
	c.max_producers = 1;
	c.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, RUN(self->g, DFG_IOC_CHAN_CREATE, &c, NULL));
	c.reserved[1] = 0;
	c.map_size = 1;
	EXPECT_EQ(-EINVAL, RUN(self->g, DFG_IOC_CHAN_CREATE, &c, NULL));
	c.map_size = 0;
	/* On /dev/dfg: wrong kind of file. */
	EXPECT_EQ(-EBADFD, RUN(self->dev, DFG_IOC_CHAN_CREATE, &c, NULL));

	/* Good one: id, map_size (res2 inline). */
	EXPECT_EQ(self->id + 1, RUN(self->g, DFG_IOC_CHAN_CREATE, &c, &res2));
	if (variant->path == DFG_PATH_INLINE) {
		EXPECT_EQ(DFG_CHAN_MAP_SIZE(8, 1), res2);
	} else {
		EXPECT_EQ(DFG_CHAN_MAP_SIZE(8, 1), c.map_size);
	}
	EXPECT_EQ(8, chan_attr(self->g, self->id + 1, "depth"));

	/* Read-only graph descriptor: -EACCES for CREATE and OPEN. */
	{
		struct dfg_graph_info info = { .size = sizeof(info) };
		struct dfg_graph_open o = { .size = sizeof(o),
					    .flags = DFG_GRAPH_O_RDONLY };

		ASSERT_EQ(0, sys_dfg_ioctl(self->g, DFG_IOC_GRAPH_INFO, &info));
		memcpy(o.name, info.name, sizeof(o.name));
		ro = sys_dfg_ioctl(self->dev, DFG_IOC_GRAPH_ATTACH, &o);
		ASSERT_LE(0, ro);
		memset(&c, 0, sizeof(c));
		c.pool = 1;
		c.depth = 8;
		c.max_producers = 1;
		EXPECT_EQ(-EACCES, chan_create(ro, 1, 8, 1, NULL));
		EXPECT_EQ(-EACCES, chan_open_raw(ro, self->id,
						 DFG_CHAN_CONSUMER, NULL));
		close(ro);
	}
}

TEST_F(chan, open_roles)
{
	struct dfg_chan_open o = { .id = self->id, .role = DFG_CHAN_CONSUMER };
	__u64 res2 = 0;
	int cons, p[NPROD], fd, i;

	cons = RUN(self->g, DFG_IOC_CHAN_OPEN, &o, NULL);
	ASSERT_LE(0, cons);
	EXPECT_EQ(-EBUSY, RUN(self->g, DFG_IOC_CHAN_OPEN, &o, NULL));
	for (i = 0; i < NPROD; i++) {
		struct dfg_chan_open po = { .id = self->id,
					    .role = DFG_CHAN_PRODUCER };

		p[i] = RUN(self->g, DFG_IOC_CHAN_OPEN, &po, &res2);
		ASSERT_LE(0, p[i]);
		if (variant->path == DFG_PATH_INLINE) {
			EXPECT_EQ((__u64)i, res2);
		} else {
			EXPECT_EQ((__u32)i, po.slot);
		}
	}
	o.role = DFG_CHAN_PRODUCER;
	EXPECT_EQ(-EBUSY, RUN(self->g, DFG_IOC_CHAN_OPEN, &o, NULL));
	EXPECT_EQ(NPROD, chan_attr(self->g, self->id, "producers"));
	EXPECT_EQ(1, chan_attr(self->g, self->id, "consumer"));
	/* A closed slot with an empty ring is taken again. */
	close(p[0]);
	EXPECT_EQ(NPROD - 1, chan_attr(self->g, self->id, "producers"));
	res2 = 99;
	fd = RUN(self->g, DFG_IOC_CHAN_OPEN, &o, &res2);
	ASSERT_LE(0, fd);
	if (variant->path == DFG_PATH_INLINE) {
		EXPECT_EQ(0, res2);
	} else {
		EXPECT_EQ(0, o.slot);
	}
	EXPECT_EQ(-EBUSY, RUN(self->g, DFG_IOC_CHAN_OPEN, &o, NULL));
	close(fd);
	o.slot = 0;

	o.role = 3;
	EXPECT_EQ(-EINVAL, RUN(self->g, DFG_IOC_CHAN_OPEN, &o, NULL));
	o.role = DFG_CHAN_CONSUMER;
	o.flags = 0x100;
	EXPECT_EQ(-EINVAL, RUN(self->g, DFG_IOC_CHAN_OPEN, &o, NULL));
	o.flags = 0;
	o.id = 1;	/* the arena */
	EXPECT_EQ(-ENOENT, RUN(self->g, DFG_IOC_CHAN_OPEN, &o, NULL));
	o.id = 77;
	EXPECT_EQ(-ENOENT, RUN(self->g, DFG_IOC_CHAN_OPEN, &o, NULL));

	/* Endpoint commands on the graph, graph commands on an endpoint. */
	EXPECT_EQ(-EBADFD, chan_cmd(self->g, DFG_IOC_CHAN_WAIT));
	EXPECT_EQ(-EBADFD, chan_create(cons, 1, 8, 1, NULL));
	{
		struct dfg_chan_wait w = { .flags = 1 };

		EXPECT_EQ(-EINVAL, sys_dfg_ioctl(cons, DFG_IOC_CHAN_WAIT, &w));
		w.flags = 0;
		w.reserved[0] = 1;
		EXPECT_EQ(-EINVAL, sys_dfg_ioctl(cons, DFG_IOC_CHAN_WAKE, &w));
	}

	/* Consumer gone: producers get -EPIPE; a new consumer may open. */
	close(cons);
	EXPECT_EQ(0, chan_attr(self->g, self->id, "consumer"));
	{
		int c2 = chan_create(self->g, 1, 8, 2, NULL);
		int pc;

		ASSERT_LT(0, c2);
		fd = chan_open_raw(self->g, c2, DFG_CHAN_CONSUMER, NULL);
		ASSERT_LE(0, fd);
		close(fd);
		EXPECT_EQ(-EPIPE, chan_open_raw(self->g, c2,
						DFG_CHAN_PRODUCER, NULL));
		fd = chan_open_raw(self->g, c2, DFG_CHAN_CONSUMER, NULL);
		ASSERT_LE(0, fd);
		pc = chan_open_raw(self->g, c2, DFG_CHAN_PRODUCER, NULL);
		EXPECT_LE(0, pc);
		close(pc);
		close(fd);
	}
	close(p[1]);
}

TEST_F(chan, mmap_bounds)
{
	struct chan_ep c;
	struct dfg_chan_ring *r;
	void *m;

	ASSERT_EQ(0, chan_ep_open(self->g, self->id, DFG_CHAN_CONSUMER, MAPSZ,
				  &c));
	EXPECT_EQ(DFG_CHAN_MAGIC, c.hdr->magic);
	EXPECT_EQ(DEPTH, c.hdr->depth);
	EXPECT_EQ(NPROD, c.hdr->max_producers);
	EXPECT_EQ(1, c.hdr->pool);
	EXPECT_EQ(16 * PAGE, c.hdr->pool_size);
	EXPECT_EQ(DFG_CHAN_PAGE, c.hdr->ring_offset);
	EXPECT_EQ(DFG_CHAN_RING_SIZE(DEPTH), c.hdr->ring_size);
	EXPECT_EQ(DFG_CHAN_S_OPEN, c.hdr->consumer_state);
	r = chan_ring(c.hdr, 0);
	EXPECT_EQ(DFG_CHAN_S_FREE, r->state);

	m = mmap(NULL, MAPSZ + PAGE, PROT_READ, MAP_SHARED, c.fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, c.fd, PAGE);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, c.fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, c.fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	munmap(m, PAGE);
	/* Ring pages count in sysfs pages while the channel lives. */
	EXPECT_EQ(self->pages0 + 16 + MAPSZ / PAGE, dfg_sysfs_u64("pages"));
	chan_ep_close(&c);
}

/*
 * A region as the pool: CREATE records its id and length; an unexport
 * afterwards leaves the channel working (descriptors are offsets); an
 * unexported (or never exported) region id is -ENOENT.
 */
TEST_F(chan, region_pool)
{
	struct dfg_region r = { .len = 3 * PAGE };
	struct dfg_chan_create c = { .depth = DEPTH, .max_producers = 1 };
	struct chan_ep ce, pe;
	struct dfg_desc d;
	__u64 res2 = 0;
	char *buf;
	int rid, cid;

	buf = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 0x5a, 3 * PAGE);
	r.addr = (__u64)(uintptr_t)buf;
	rid = sys_dfg_ioctl(self->g, DFG_IOC_REGION_EXPORT, &r);
	ASSERT_LT(0, rid);

	c.pool = rid;
	cid = RUN(self->g, DFG_IOC_CHAN_CREATE, &c, &res2);
	ASSERT_LT(self->id, cid);
	if (variant->path == DFG_PATH_INLINE) {
		EXPECT_EQ(DFG_CHAN_MAP_SIZE(DEPTH, 1), res2);
	} else {
		EXPECT_EQ(DFG_CHAN_MAP_SIZE(DEPTH, 1), c.map_size);
	}
	ASSERT_EQ(0, chan_ep_open(self->g, cid, DFG_CHAN_CONSUMER,
				  DFG_CHAN_MAP_SIZE(DEPTH, 1), &ce));
	EXPECT_EQ((__u32)rid, ce.hdr->pool);
	EXPECT_EQ(3 * PAGE, ce.hdr->pool_size);
	ASSERT_EQ(0, chan_ep_open(self->g, cid, DFG_CHAN_PRODUCER,
				  DFG_CHAN_MAP_SIZE(DEPTH, 1), &pe));
	ASSERT_EQ(0, chan_push(&pe, PAGE, 64, 7));

	/* Unexport: the channel neither notices nor cares. */
	r = (struct dfg_region){ .id = rid };
	ASSERT_EQ(0, sys_dfg_ioctl(self->g, DFG_IOC_REGION_UNEXPORT, &r));
	EXPECT_EQ((__u32)rid, ce.hdr->pool);
	EXPECT_EQ(3 * PAGE, ce.hdr->pool_size);
	ASSERT_EQ(0, chan_pop(&ce, &d));
	EXPECT_EQ(PAGE, d.off);
	EXPECT_EQ(64, d.len);
	EXPECT_EQ(7, d.tag);
	ASSERT_EQ(0, chan_push_wake(&pe, 2 * PAGE, 128, 8));
	ASSERT_EQ(0, chan_pop_blocking(&ce, &d));
	EXPECT_EQ(2 * PAGE, d.off);
	EXPECT_EQ(128, d.len);
	EXPECT_EQ(8, d.tag);
	EXPECT_EQ(2, chan_attr(self->g, cid, "messages"));

	/* The unexported id, and one never used, are no pool. */
	memset(&c, 0, sizeof(c));
	c.pool = rid;
	c.depth = DEPTH;
	c.max_producers = 1;
	EXPECT_EQ(-ENOENT, RUN(self->g, DFG_IOC_CHAN_CREATE, &c, NULL));
	c.pool = cid + 1;
	EXPECT_EQ(-ENOENT, RUN(self->g, DFG_IOC_CHAN_CREATE, &c, NULL));

	/* EOF as ever once the producer goes. */
	chan_ep_close(&pe);
	EXPECT_EQ(1, chan_pop_blocking(&ce, &d));
	chan_ep_close(&ce);
	munmap(buf, 3 * PAGE);
}

/* A condition already true completes at once; stats from shared memory. */
TEST_F(chan, wait_now)
{
	struct chan_ep c, p;
	struct pending w;
	struct dfg_desc d;
	int res;

	ASSERT_EQ(0, open_pair(self->g, self->id, &c, &p));
	EXPECT_EQ(DFG_CHAN_S_OPEN, chan_ring(c.hdr, 0)->state);
	EXPECT_EQ((__u32)getpid(), chan_ring(c.hdr, 0)->pid);
	ASSERT_EQ(0, chan_push(&p, 0, 100, 1));
	ASSERT_EQ(0, wait_start(&w, variant->path, &self->ring, c.fd));
	ASSERT_EQ(0, wait_end(&w, 2000, &res));
	EXPECT_EQ(DFG_CHAN_EV_READABLE, res);
	ASSERT_EQ(0, wait_start(&w, variant->path, &self->ring, p.fd));
	ASSERT_EQ(0, wait_end(&w, 2000, &res));
	EXPECT_EQ(DFG_CHAN_EV_WRITABLE, res);
	/* WAKE with nobody parked wakes nobody. */
	EXPECT_EQ(0, chan_cmd(p.fd, DFG_IOC_CHAN_WAKE));
	ASSERT_EQ(0, chan_pop(&c, &d));
	EXPECT_EQ(100, d.len);
	EXPECT_EQ(1, d.tag);
	EXPECT_EQ(1, chan_attr(self->g, self->id, "messages"));
	EXPECT_EQ(100, chan_attr(self->g, self->id, "bytes"));
	EXPECT_EQ(1, chan_attr(self->g, self->id, "hwm"));
	EXPECT_EQ(0, chan_attr(self->g, self->id, "parks"));
	chan_ep_close(&p);
	chan_ep_close(&c);
}

/* Consumer parks; a push + WAKE completes it. */
TEST_F(chan, consumer_parked_woken)
{
	struct chan_ep c, p;
	struct pending w;
	int res;

	ASSERT_EQ(0, open_pair(self->g, self->id, &c, &p));
	c.hdr->cons_waiting = 1;
	ASSERT_EQ(0, wait_start(&w, variant->path, &self->ring, c.fd));
	EXPECT_EQ(-ETIME, wait_end(&w, 100, &res));
	EXPECT_EQ(1, chan_attr(self->g, self->id, "parks"));
	ASSERT_EQ(0, chan_push(&p, 0, 1, 1));
	EXPECT_EQ(1, chan_cmd(p.fd, DFG_IOC_CHAN_WAKE));
	ASSERT_EQ(0, wait_end(&w, 2000, &res));
	EXPECT_EQ(DFG_CHAN_EV_READABLE, res);
	EXPECT_EQ(1, chan_attr(self->g, self->id, "wakeups"));
	dfg_pending_abort(&w.cmd);
	chan_ep_close(&p);
	chan_ep_close(&c);
}

/*
 * The protocol race: the producer publishes while the consumer is between
 * its last look and WAIT, and sends no WAKE (it read cons_waiting before the
 * consumer set it). The kernel's look before parking must catch it.
 */
TEST_F(chan, race_published_before_wait)
{
	struct chan_ep c, p;
	struct pending w;
	int res, i;

	ASSERT_EQ(0, open_pair(self->g, self->id, &c, &p));
	for (i = 0; i < 20; i++) {
		struct dfg_desc d;

		ASSERT_EQ(0, chan_push(&p, 0, 1, i));	/* no WAKE */
		c.hdr->cons_waiting = 1;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		ASSERT_EQ(0, wait_start(&w, variant->path, &self->ring, c.fd));
		ASSERT_EQ(0, wait_end(&w, 2000, &res));
		EXPECT_EQ(DFG_CHAN_EV_READABLE, res);
		c.hdr->cons_waiting = 0;
		ASSERT_EQ(0, chan_pop(&c, &d));
		EXPECT_EQ((__u64)i, d.tag);
	}
	EXPECT_EQ(0, chan_attr(self->g, self->id, "parks"));
	chan_ep_close(&p);
	chan_ep_close(&c);
}

/* Producer parked on a full ring; a pop + WAKE completes it. */
TEST_F(chan, producer_full_woken)
{
	struct chan_ep c, p;
	struct pending w;
	struct dfg_desc d;
	int res, i;

	ASSERT_EQ(0, open_pair(self->g, self->id, &c, &p));
	for (i = 0; i < DEPTH; i++)
		ASSERT_EQ(0, chan_push(&p, 0, 1, i));
	EXPECT_EQ(-EAGAIN, chan_push(&p, 0, 1, 99));
	chan_ring(p.hdr, p.slot)->prod_waiting = 1;
	ASSERT_EQ(0, wait_start(&w, variant->path, &self->ring, p.fd));
	EXPECT_EQ(-ETIME, wait_end(&w, 100, &res));
	/* A producer's WAKE does not wake producers. */
	EXPECT_EQ(0, chan_cmd(p.fd, DFG_IOC_CHAN_WAKE));
	ASSERT_EQ(0, chan_pop_wake(&c, &d));
	ASSERT_EQ(0, wait_end(&w, 2000, &res));
	EXPECT_EQ(DFG_CHAN_EV_WRITABLE, res);
	EXPECT_EQ(DEPTH, chan_attr(self->g, self->id, "hwm"));
	dfg_pending_abort(&w.cmd);
	chan_ep_close(&p);
	chan_ep_close(&c);
}

/*
 * A closed producer's slot is taken again only once the consumer drained
 * it; the new producer goes on from its indices, nothing is lost or
 * mixed, and the consumer sees EOF only after the new one closes too.
 */
TEST_F(chan, slot_reuse)
{
	struct chan_ep c, p, q;
	struct pending w;
	struct dfg_desc d;
	int res, i;

	ASSERT_EQ(0, open_pair(self->g, self->id, &c, &p));
	/* Fill every slot; the one in slot 0 sends two and goes. */
	ASSERT_EQ(0, p.slot);
	for (i = 1; i < NPROD; i++) {
		struct dfg_chan_open po = { .id = self->id,
					    .role = DFG_CHAN_PRODUCER };
		int fd = sys_dfg_ioctl(self->g, DFG_IOC_CHAN_OPEN, &po);

		ASSERT_LE(0, fd);
		close(fd);	/* closed, empty: reusable */
	}
	ASSERT_EQ(0, chan_push(&p, 0, 1, 1));
	ASSERT_EQ(0, chan_push(&p, 0, 1, 2));
	chan_ring(p.hdr, 0)->prod_waiting = 1;	/* as if killed parked */
	chan_ep_close(&p);
	/* Slot 0 holds data: the lowest closed drained slot is 1. */
	ASSERT_EQ(0, chan_ep_open(self->g, self->id, DFG_CHAN_PRODUCER, MAPSZ,
				  &q));
	EXPECT_EQ(1, q.slot);
	chan_ep_close(&q);
	ASSERT_EQ(0, chan_pop(&c, &d));
	EXPECT_EQ(1, d.tag);
	ASSERT_EQ(0, chan_pop(&c, &d));
	EXPECT_EQ(2, d.tag);
	/* Drained: slot 0 is taken again, from where its ring stands. */
	ASSERT_EQ(0, chan_ep_open(self->g, self->id, DFG_CHAN_PRODUCER, MAPSZ,
				  &q));
	EXPECT_EQ(0, q.slot);
	EXPECT_EQ(2, chan_ring(q.hdr, 0)->tail);
	EXPECT_EQ(0, chan_ring(q.hdr, 0)->prod_waiting);
	EXPECT_EQ(DFG_CHAN_S_OPEN, chan_ring(c.hdr, 0)->state);
	/* Not the end of the stream while it is open. */
	c.hdr->cons_waiting = 1;
	ASSERT_EQ(0, wait_start(&w, variant->path, &self->ring, c.fd));
	EXPECT_EQ(-ETIME, wait_end(&w, 100, &res));
	ASSERT_EQ(0, chan_push_wake(&q, 0, 1, 3));
	ASSERT_EQ(0, wait_end(&w, 2000, &res));
	c.hdr->cons_waiting = 0;
	EXPECT_EQ(DFG_CHAN_EV_READABLE, res);
	ASSERT_EQ(0, chan_pop(&c, &d));
	EXPECT_EQ(3, d.tag);
	chan_ep_close(&q);
	ASSERT_EQ(0, wait_start(&w, variant->path, &self->ring, c.fd));
	ASSERT_EQ(0, wait_end(&w, 2000, &res));
	EXPECT_EQ(DFG_CHAN_EV_EOF, res);
	chan_ep_close(&c);
}

/* End of stream: every opened producer closed and its ring drained. */
TEST_F(chan, eof)
{
	struct chan_ep c, p;
	struct pending w;
	struct dfg_desc d;
	int res;

	ASSERT_EQ(0, chan_ep_open(self->g, self->id, DFG_CHAN_CONSUMER, MAPSZ,
				  &c));
	/* No producer ever opened: no EOF, the WAIT blocks. */
	ASSERT_EQ(0, wait_start(&w, variant->path, &self->ring, c.fd));
	EXPECT_EQ(-ETIME, wait_end(&w, 100, &res));
	ASSERT_EQ(0, chan_ep_open(self->g, self->id, DFG_CHAN_PRODUCER, MAPSZ,
				  &p));
	ASSERT_EQ(0, chan_push(&p, 0, 1, 5));
	/* The producer's release wakes the consumer: data first. */
	chan_ep_close(&p);
	ASSERT_EQ(0, wait_end(&w, 2000, &res));
	EXPECT_EQ(DFG_CHAN_EV_READABLE, res);
	EXPECT_EQ(DFG_CHAN_S_CLOSED, chan_ring(c.hdr, 0)->state);
	ASSERT_EQ(0, chan_pop(&c, &d));
	EXPECT_EQ(5, d.tag);
	ASSERT_EQ(0, wait_start(&w, variant->path, &self->ring, c.fd));
	ASSERT_EQ(0, wait_end(&w, 2000, &res));
	EXPECT_EQ(DFG_CHAN_EV_EOF, res);
	chan_ep_close(&c);
}

/* The consumer goes: a parked producer gets -EPIPE within 1 s. */
TEST_F(chan, epipe)
{
	struct chan_ep c, p;
	struct pending w;
	__u64 start;
	int res, i;

	ASSERT_EQ(0, open_pair(self->g, self->id, &c, &p));
	for (i = 0; i < DEPTH; i++)
		ASSERT_EQ(0, chan_push(&p, 0, 1, i));
	ASSERT_EQ(0, wait_start(&w, variant->path, &self->ring, p.fd));
	EXPECT_EQ(-ETIME, wait_end(&w, 100, &res));
	start = dfg_now_ns();
	chan_ep_close(&c);
	ASSERT_EQ(0, wait_end(&w, 1000, &res));
	EXPECT_EQ(-EPIPE, res);
	EXPECT_GT(1000, dfg_ms_since(start));
	EXPECT_EQ(DFG_CHAN_S_CLOSED, p.hdr->consumer_state);
	EXPECT_EQ(-EPIPE, chan_cmd(p.fd, DFG_IOC_CHAN_WAIT));
	dfg_pending_abort(&w.cmd);
	chan_ep_close(&p);
}

/* The graph dies (last graph descriptor): waits end with -ECANCELED. */
TEST_F(chan, graph_death_cancels)
{
	struct chan_ep c, p;
	struct pending wc, wp;
	int res, i;

	ASSERT_EQ(0, open_pair(self->g, self->id, &c, &p));
	ASSERT_EQ(0, wait_start(&wc, variant->path, &self->ring, c.fd));
	EXPECT_EQ(-ETIME, wait_end(&wc, 100, &res));
	/* Full ring, no WAKE sent: both stay parked. */
	for (i = 0; i < DEPTH; i++)
		ASSERT_EQ(0, chan_push(&p, 0, 1, i));
	ASSERT_EQ(0, wait_start(&wp, variant->path, &self->ring, p.fd));
	EXPECT_EQ(-ETIME, wait_end(&wp, 100, &res));

	close(self->g);
	self->g = -1;
	ASSERT_EQ(0, wait_end(&wc, 2000, &res));
	EXPECT_EQ(-ECANCELED, res);
	ASSERT_EQ(0, wait_end(&wp, 2000, &res));
	EXPECT_EQ(-ECANCELED, res);
	EXPECT_EQ(-ECANCELED, chan_cmd(c.fd, DFG_IOC_CHAN_WAIT));
	EXPECT_EQ(0, chan_cmd(p.fd, DFG_IOC_CHAN_WAKE));
	/* Memory stays while endpoints map it, then goes. */
	EXPECT_NE(self->pages0, dfg_sysfs_u64("pages"));
	dfg_pending_abort(&wc.cmd);
	dfg_pending_abort(&wp.cmd);
	chan_ep_close(&p);
	chan_ep_close(&c);
}

/* Garbage in every shared word never hurts the kernel; WAIT returns. */
TEST_F(chan, corrupted_ring)
{
	struct dfg_chan_ring *r0, *r1;
	struct chan_ep c, p, p2;
	struct pending w;
	int res;

	ASSERT_EQ(0, open_pair(self->g, self->id, &c, &p));
	/* Ring addresses before the header's ring_offset turns to garbage. */
	r0 = chan_ring(c.hdr, 0);
	r1 = chan_ring(c.hdr, 1);
	memset(c.hdr, 0xa5, MAPSZ);
	r0->tail = 0x12345678;
	ASSERT_EQ(0, wait_start(&w, variant->path, &self->ring, c.fd));
	ASSERT_EQ(0, wait_end(&w, 2000, &res));
	EXPECT_EQ(DFG_CHAN_EV_READABLE, res);
	ASSERT_EQ(0, wait_start(&w, variant->path, &self->ring, p.fd));
	ASSERT_EQ(0, wait_end(&w, 2000, &res));
	EXPECT_EQ(DFG_CHAN_EV_WRITABLE, res);
	/* Fill level above depth: writable, so the producer sees it. */
	r0->tail = 1000;
	r0->head = 0;
	EXPECT_EQ(DFG_CHAN_EV_WRITABLE, chan_cmd(p.fd, DFG_IOC_CHAN_WAIT));
	EXPECT_LE(0, chan_cmd(p.fd, DFG_IOC_CHAN_WAKE));
	EXPECT_LE(0, chan_cmd(c.fd, DFG_IOC_CHAN_WAKE));
	EXPECT_LE(0, chan_attr(self->g, self->id, "messages"));
	EXPECT_LE(0, chan_attr(self->g, self->id, "hwm"));
	/* A change rewrites every state word from the kernel's copy. */
	ASSERT_EQ(0, chan_ep_open(self->g, self->id, DFG_CHAN_PRODUCER, MAPSZ,
				  &p2));
	EXPECT_EQ(DFG_CHAN_S_OPEN, c.hdr->consumer_state);
	EXPECT_EQ(DFG_CHAN_S_OPEN, r0->state);
	EXPECT_EQ(DFG_CHAN_S_OPEN, r1->state);
	EXPECT_EQ((__u32)getpid(), r1->pid);
	EXPECT_EQ(1, p2.slot);
	chan_ep_close(&p2);
	chan_ep_close(&p);
	chan_ep_close(&c);
}

/* ------------------------------------------------------------------------
 * Processes killed with commands parked
 * ------------------------------------------------------------------------
 */

/*
 * Child: open @role on channel @id of @g, fill the ring if a producer,
 * park a uring WAIT, report on @wfd, pause.
 */
static void child_park(int g, int id, __u32 role, int wfd)
{
	struct dfg_chan_wait wa = { 0 };
	struct io_uring ring;
	struct chan_ep ep;
	int i, ok = 0;

	if (chan_ep_open(g, id, role, MAPSZ, &ep))
		_exit(2);
	if (role == DFG_CHAN_PRODUCER)
		for (i = 0; i < DEPTH; i++)
			chan_push(&ep, 0, 1, i);
	if (dfg_ring_init(&ring, 4))
		_exit(3);
	dfg_prep_inline(&ring, ep.fd, DFG_IOC_CHAN_WAIT, &wa, sizeof(wa), 1);
	if (io_uring_submit(&ring) != 1)
		_exit(4);
	if (write(wfd, &ok, sizeof(ok)) != sizeof(ok))
		_exit(5);
	for (;;)
		pause();
}

static void kill_parked(struct __test_metadata *_metadata, __u32 role)
{
	__u64 parked0 = dfg_sysfs_u64("parked"), pages0 = dfg_sysfs_u64("pages");
	struct dfg_event_msg ev;
	struct dfg_evmon mon;
	struct chan_ep other;
	int dev, g, id, pfd[2], n, status;
	__u64 start;
	pid_t pid;

	ASSERT_EQ(0, dfg_evmon_open(&mon));
	dev = sys_dfg_open();
	ASSERT_LE(0, dev);
	g = chan_graph_new(dev, "kill");
	ASSERT_LE(0, g);
	id = chan_create(g, 1, DEPTH, NPROD, NULL);
	ASSERT_LT(0, id);
	EXPECT_TRUE(dfg_evmon_find(&mon, DFG_EV_CHAN_CREATE, getpid(), 2000,
				    &ev));
	/* The other side stays open, so the producer does not get -EPIPE. */
	ASSERT_EQ(0, chan_ep_open(g, id, role == DFG_CHAN_PRODUCER ?
				  DFG_CHAN_CONSUMER : DFG_CHAN_PRODUCER,
				  MAPSZ, &other));
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(pfd[0]);
		child_park(g, id, role, pfd[1]);
	}
	close(pfd[1]);
	ASSERT_EQ(sizeof(n), read(pfd[0], &n, sizeof(n)));
	close(pfd[0]);
	EXPECT_EQ(parked0 + 1, dfg_sysfs_wait("parked", parked0 + 1));
	EXPECT_EQ(1, chan_attr(g, id, "parks"));

	start = dfg_now_ns();
	kill(pid, SIGKILL);
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, 1000)) {
		dfg_kill_pid(pid);
	}
	EXPECT_GT(1000, dfg_ms_since(start));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(parked0, dfg_sysfs_wait("parked", parked0));
	EXPECT_TRUE(dfg_evmon_find(&mon, DFG_EV_PEER_DEATH, pid, 2000, &ev));
	if (role == DFG_CHAN_PRODUCER) {
		EXPECT_EQ(DFG_CHAN_S_CLOSED, chan_ring(other.hdr, 0)->state);
	} else {
		EXPECT_EQ(DFG_CHAN_S_CLOSED, other.hdr->consumer_state);
	}

	chan_ep_close(&other);
	{
		char dir[128];

		snprintf(dir, sizeof(dir), DFG_SYSFS_DIR "/graphs/%d/chan%d",
			 dfg_graph_id(g), id);
		EXPECT_EQ(0, access(dir, F_OK));
		close(g);
		EXPECT_TRUE(dfg_evmon_find(&mon, DFG_EV_CHAN_DESTROY, 0, 2000,
					    &ev));
		EXPECT_NE(0, access(dir, F_OK));
	}
	close(dev);
	EXPECT_EQ(pages0, dfg_sysfs_wait("pages", pages0));
	dfg_evmon_close(&mon);
}

TEST(kill9_parked_consumer)
{
	kill_parked(_metadata, DFG_CHAN_CONSUMER);
}

TEST(kill9_parked_producer)
{
	kill_parked(_metadata, DFG_CHAN_PRODUCER);
}

#define PAIRS	4

/* Pairs pushing and popping with parking, killed at random points. */
TEST(kill9_under_load)
{
	__u64 parked0 = dfg_sysfs_u64("parked"), pages0 = dfg_sysfs_u64("pages");
	pid_t pids[2 * PAIRS];
	int dev, g, ids[PAIRS], i, status, round;

	srand(getpid());
	for (round = 0; round < 3; round++) {
		dev = sys_dfg_open();
		ASSERT_LE(0, dev);
		g = chan_graph_new(dev, "load");
		ASSERT_LE(0, g);
		for (i = 0; i < PAIRS; i++) {
			ids[i] = chan_create(g, 1, 4, 1, NULL);
			ASSERT_LT(0, ids[i]);
		}
		for (i = 0; i < 2 * PAIRS; i++) {
			pids[i] = fork();
			ASSERT_LE(0, pids[i]);
			if (pids[i] == 0) {
				__u32 role = i % 2 ? DFG_CHAN_PRODUCER :
						     DFG_CHAN_CONSUMER;
				struct io_uring ring;
				struct chan_ep ep;
				struct dfg_desc d;
				__u64 n = 0;
				int ret;

				if (chan_ep_open(g, ids[i / 2], role,
						 DFG_CHAN_MAP_SIZE(4, 1), &ep))
					_exit(2);
				if (dfg_ring_init(&ring, 4))
					_exit(3);
				for (;;) {
					if (role == DFG_CHAN_PRODUCER)
						ret = chan_push_blocking(&ep, 0,
									 1, n++);
					else if (i % 4 == 0)
						ret = chan_pop_uring(&ep, &ring, &d);
					else
						ret = chan_pop_blocking(&ep, &d);
					if (ret)
						_exit(ret == -EPIPE ||
						      ret == 1 ? 0 : 6);
				}
			}
		}
		for (i = 0; i < 2 * PAIRS; i++) {
			int k = rand() % (2 * PAIRS);
			pid_t t = pids[k];

			pids[k] = pids[i];
			pids[i] = t;
		}
		for (i = 0; i < 2 * PAIRS; i++) {
			usleep(rand() % 30000);
			kill(pids[i], SIGKILL);
		}
		for (i = 0; i < 2 * PAIRS; i++) {
			ASSERT_EQ(0, dfg_wait_pid(pids[i], &status, 5000)) {
				dfg_kill_pid(pids[i]);
			}
		}
		close(g);
		close(dev);
		EXPECT_EQ(pages0, dfg_sysfs_wait("pages", pages0));
		EXPECT_EQ(parked0, dfg_sysfs_wait("parked", parked0));
	}
}

TEST_HARNESS_MAIN
