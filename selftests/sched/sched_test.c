// SPDX-License-Identifier: GPL-2.0
/*
 * The set scheduler: DFG_IOC_SCHED_ATTACH, SET_REGISTER/UNREGISTER,
 * SCHED_NEXT/YIELD, the set page, channel-driven waking, backpressure,
 * fairness, component CPU sampling, deaths and graph death, over raw ioctl
 * and uring_cmd (never libdfg).
 *
 * FIXTURE(sched) gives each test a graph with a 16-page arena (pool id 1),
 * two channels (DEPTH x 1 producer: "a" = id 2, "b" = id 3) and a
 * scheduler descriptor, over ioctl, uring_cmd inline and uring_cmd
 * indirect (FIXTURE_VARIANT). Every test ends with sysfs "pages" and
 * "parked" back where they started.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include "dfg_sys.h"
#include "dfg_evmon.h"
#include "../chan/chan.h"
#include "kselftest_harness.h"

#define PAGE		4096UL
#define DEPTH		4
#define MAPSZ		DFG_CHAN_MAP_SIZE(DEPTH, 1)
#define CH_A		2
#define CH_B		3

static int sched_attach(int g)
{
	struct dfg_sched_attach a = { .flags = DFG_SCHED_O_CLOEXEC };

	return sys_dfg_ioctl(g, DFG_IOC_SCHED_ATTACH, &a);
}

/* graphs/<gid>/set<id>/<attr>, as a number; -errno if unreadable. */
static long long set_attr(int gid, int id, const char *attr)
{
	char name[128];
	__u64 v = 0;
	int ret;

	snprintf(name, sizeof(name), "graphs/%d/set%d/%s", gid, id, attr);
	ret = dfg_sysfs_read_u64(name, &v);
	return ret < 0 ? ret : (long long)v;
}

static int set_state(int gid, int id, char *buf, size_t size)
{
	char name[128];

	snprintf(name, sizeof(name), "graphs/%d/set%d/state", gid, id);
	return dfg_sysfs_read(name, buf, size);
}

/* A set description for reg(). */
struct set_desc {
	const char	*name;
	__u32		flags;
	__u32		priority;
	__u32		nr_comps;
	__u32		nr_in;
	__u32		in[4];
	__u32		nr_out;
	struct dfg_set_output out[4];
	__u64		cpumask;
	__u64		quantum;
};

static char comp_names[DFG_SET_COMPS_MAX + 1][DFG_NAME_MAX];

static void reg_fill(struct dfg_set_register *r, const struct set_desc *d)
{
	int i;

	for (i = 0; i <= DFG_SET_COMPS_MAX; i++)
		snprintf(comp_names[i], DFG_NAME_MAX, "comp-%d", i);
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->flags = d->flags;
	r->priority = d->priority;
	r->nr_comps = d->nr_comps ? d->nr_comps : 1;
	r->nr_inputs = d->nr_in;
	r->nr_outputs = d->nr_out;
	r->inputs = (__u64)(uintptr_t)d->in;
	r->outputs = (__u64)(uintptr_t)d->out;
	r->comp_names = (__u64)(uintptr_t)comp_names;
	r->cpumask = d->cpumask;
	r->quantum = d->quantum ? d->quantum : 16;
	snprintf(r->name, sizeof(r->name), "%s", d->name ? d->name : "set");
}

static int reg(int sc, const struct set_desc *d)
{
	struct dfg_set_register r;
	int ret;

	reg_fill(&r, d);
	ret = sys_dfg_ioctl(sc, DFG_IOC_SET_REGISTER, &r);
	if (ret > 0 && (r.id != (__u32)ret ||
			r.mmap_offset != DFG_MMAP_OFFSET(ret)))
		return -EPROTO;
	return ret;
}

static int unreg(int sc, __u32 id)
{
	struct dfg_set_id a = { .id = id };

	return sys_dfg_ioctl(sc, DFG_IOC_SET_UNREGISTER, &a);
}

static int yield_ioctl(int sc, __u32 id, __u32 reason)
{
	struct dfg_sched_yield y = { .id = id, .reason = reason };

	return sys_dfg_ioctl(sc, DFG_IOC_SCHED_YIELD, &y);
}

/* NEXT that does not wait, over @path; checks the outputs it can. */
static int next_now(enum dfg_path path, struct io_uring *ring, int sc,
		    __u32 yield_id, __u32 reason, __u64 *quantum)
{
	struct dfg_sched_next n = {
		.flags = DFG_NEXT_F_NOWAIT,
		.yield_id = yield_id,
		.yield_reason = reason,
	};
	__u64 res2 = 0;
	int ret;

	ret = dfg_cmd(path, sc, ring, DFG_IOC_SCHED_NEXT, &n, sizeof(n), &res2);
	if (ret > 0) {
		if (path != DFG_PATH_INLINE && (n.id != (__u32)ret ||
						!n.quantum))
			return -EPROTO;
		if (path == DFG_PATH_INLINE && !res2)
			return -EPROTO;
		if (quantum)
			*quantum = path == DFG_PATH_INLINE ? res2 : n.quantum;
	}
	return ret;
}

/* ------------------------------------------------------------------------
 * A NEXT that may wait: io_uring SQE left in the ring, or ioctl in a thread
 * ------------------------------------------------------------------------
 */
struct pending {
	struct dfg_pending	cmd;
	struct dfg_sched_next	args;
};

/* Starts a plain NEXT (no flags, no yield). */
static int next_start(struct pending *p, enum dfg_path path,
		      struct io_uring *ring, int fd)
{
	memset(&p->args, 0, sizeof(p->args));
	return dfg_pending_start(&p->cmd, path, ring, fd, DFG_IOC_SCHED_NEXT,
				 &p->args, sizeof(p->args), 0x55);
}

/*
 * The same for a set the test goes on running from its main thread: over
 * ioctl the worker thread that got it stays alive until next_release().
 */
static int next_start_held(struct pending *p, enum dfg_path path,
			   struct io_uring *ring, int fd)
{
	memset(&p->args, 0, sizeof(p->args));
	return dfg_pending_start_held(&p->cmd, path, ring, fd,
				      DFG_IOC_SCHED_NEXT, &p->args,
				      sizeof(p->args), 0x55);
}

/* 0 with *@res once the NEXT completed within @ms, -ETIME otherwise. */
static int next_end(struct pending *p, int ms, int *res)
{
	int ret = dfg_pending_end(&p->cmd, ms, res);

	if (!ret && *res > 0 && p->cmd.path == DFG_PATH_INDIRECT &&
	    p->args.id != (__u32)*res)
		*res = -EPROTO;
	return ret;
}

/*
 * sysfs @name ("pages", "parked") at the start of a test. No earlier
 * test's graph should live on, but on a timeout 6.1's harness SIGKILLs the
 * test and starts the next without reaping it (the SIGALRM cut its
 * waitpid() short): that process may still be exiting, its pages not yet
 * freed. So the baseline is the count once they are, not a snapshot.
 */
static __u64 baseline(const char *name)
{
	return dfg_sysfs_wait(name, 0);
}

/* ------------------------------------------------------------------------
 * FIXTURE(sched)
 * ------------------------------------------------------------------------
 */

FIXTURE(sched) {
	int dev;		/* /dev/dfg */
	int g;			/* graph: arena 1, channels CH_A and CH_B */
	int gid;
	int sc;			/* scheduler descriptor */
	struct io_uring ring;	/* SQE128 | CQE32, uring variants */
	bool have_ring;
	__u64 pages0;
	__u64 parked0;
};

FIXTURE_VARIANT(sched) {
	enum dfg_path path;
};

FIXTURE_VARIANT_ADD(sched, ioctl) {
	.path = DFG_PATH_IOCTL,
};

FIXTURE_VARIANT_ADD(sched, uring) {
	.path = DFG_PATH_INLINE,
};

FIXTURE_VARIANT_ADD(sched, uring_indirect) {
	.path = DFG_PATH_INDIRECT,
};

FIXTURE_SETUP(sched)
{
	struct dfg_info info;

	self->g = -1;
	self->sc = -1;
	self->dev = sys_dfg_open();
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, dfg_get_info(self->dev, &info));
	if (!(info.features & DFG_F_SCHED))
		SKIP(return, "module without DFG_F_SCHED");
	if (variant->path != DFG_PATH_IOCTL) {
		ASSERT_EQ(0, dfg_ring_init(&self->ring, 16));
		self->have_ring = true;
	}
	self->pages0 = baseline("pages");
	self->parked0 = baseline("parked");
	self->g = chan_graph_new(self->dev, "sched");
	ASSERT_LE(0, self->g);
	self->gid = dfg_graph_id(self->g);
	ASSERT_EQ(CH_A, chan_create(self->g, 1, DEPTH, 1, NULL));
	ASSERT_EQ(CH_B, chan_create(self->g, 1, DEPTH, 1, NULL));
	self->sc = sched_attach(self->g);
	ASSERT_LE(0, self->sc);
}

FIXTURE_TEARDOWN(sched)
{
	if (self->sc >= 0)
		close(self->sc);
	if (self->g >= 0)
		close(self->g);
	if (self->have_ring)
		io_uring_queue_exit(&self->ring);
	close(self->dev);
	EXPECT_EQ(self->pages0, dfg_sysfs_wait("pages", self->pages0));
	EXPECT_EQ(self->parked0, dfg_sysfs_wait("parked", self->parked0));
}

#define NEXT_NOW(yid, why, q) \
	next_now(variant->path, &self->ring, self->sc, yid, why, q)

TEST_F(sched, attach_and_kinds)
{
	struct dfg_graph_open o = { .size = sizeof(o),
				    .flags = DFG_GRAPH_O_RDONLY };
	struct dfg_sched_attach a = { 0 };
	struct dfg_sched_next n = { .flags = DFG_NEXT_F_NOWAIT };
	struct dfg_graph_info info = { .size = sizeof(info) };
	int ro;

	a.flags = 0x80;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_SCHED_ATTACH, &a));
	a.flags = 0;
	a.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_SCHED_ATTACH, &a));
	/* Scheduler commands elsewhere, graph commands here: -EBADFD. */
	EXPECT_EQ(-EBADFD, sys_dfg_ioctl(self->g, DFG_IOC_SCHED_NEXT, &n));
	EXPECT_EQ(-EBADFD, sys_dfg_ioctl(self->dev, DFG_IOC_SCHED_NEXT, &n));
	EXPECT_EQ(-EBADFD, sys_dfg_ioctl(self->sc, DFG_IOC_GRAPH_INFO, &info));
	/* A read-only graph descriptor cannot join. */
	ASSERT_EQ(0, sys_dfg_ioctl(self->g, DFG_IOC_GRAPH_INFO, &info));
	memcpy(o.name, info.name, sizeof(o.name));
	ro = sys_dfg_ioctl(self->dev, DFG_IOC_GRAPH_ATTACH, &o);
	ASSERT_LE(0, ro);
	memset(&a, 0, sizeof(a));
	EXPECT_EQ(-EACCES, sys_dfg_ioctl(ro, DFG_IOC_SCHED_ATTACH, &a));
	close(ro);
	/* No set at all: done at once. */
	EXPECT_EQ(-ENODATA, NEXT_NOW(0, 0, NULL));
}

TEST_F(sched, register_errors)
{
	struct set_desc root = { .flags = DFG_SET_F_ROOT };
	struct set_desc d;
	struct dfg_set_register r;
	int other, oid, cnt;

#define BAD(err, field, value) do {					\
		reg_fill(&r, &root);					\
		r.field = value;					\
		EXPECT_EQ(err, sys_dfg_ioctl(self->sc,			\
					     DFG_IOC_SET_REGISTER, &r)) \
			TH_LOG(#field " = " #value);			\
	} while (0)

	BAD(-EINVAL, size, sizeof(r) - 8);
	BAD(-EINVAL, flags, 0x100);
	BAD(-EINVAL, priority, DFG_SET_PRIO_MAX + 1);
	BAD(-EINVAL, nr_comps, 0);
	BAD(-EINVAL, nr_comps, DFG_SET_COMPS_MAX + 1);
	BAD(-EINVAL, nr_inputs, DFG_SET_PORTS_MAX + 1);
	BAD(-EINVAL, nr_outputs, DFG_SET_PORTS_MAX + 1);
	BAD(-EINVAL, quantum, 0);
	BAD(-EINVAL, id, 5);
	BAD(-EINVAL, mmap_offset, 1);
	BAD(-EINVAL, reserved0, 1);
	BAD(-EINVAL, reserved[3], 1);
	BAD(-EINVAL, name[0], 0);
	BAD(-EINVAL, name[0], '/');
	BAD(-EINVAL, cpumask, 1ULL << 63);
	BAD(-EFAULT, comp_names, 8);
	reg_fill(&r, &root);
	r.flags |= DFG_SET_F_QUANTUM_NS;
	r.quantum = DFG_SET_QUANTUM_NS_MAX + 1;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->sc, DFG_IOC_SET_REGISTER, &r));
	/* A bad component name. */
	strcpy(comp_names[0], "bad name");
	r.quantum = 100;
	r.comp_names = (__u64)(uintptr_t)comp_names;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->sc, DFG_IOC_SET_REGISTER, &r));

	/* Not a root and no input: could never run. */
	d = (struct set_desc){ .nr_in = 0 };
	EXPECT_EQ(-EINVAL, reg(self->sc, &d));
	/* Unknown ids, and an arena's. */
	d = (struct set_desc){ .nr_in = 1, .in = { 99 } };
	EXPECT_EQ(-ENOENT, reg(self->sc, &d));
	d = (struct set_desc){ .nr_in = 1, .in = { 1 } };
	EXPECT_EQ(-ENOENT, reg(self->sc, &d));
	d = (struct set_desc){ .nr_in = 2, .in = { CH_A, CH_A } };
	EXPECT_EQ(-EINVAL, reg(self->sc, &d));
	d = (struct set_desc){ .flags = DFG_SET_F_ROOT, .nr_out = 1,
			       .out = { { CH_A, 1 } } };
	EXPECT_EQ(-EINVAL, reg(self->sc, &d));
	d = (struct set_desc){ .flags = DFG_SET_F_ROOT, .nr_out = 2,
			       .out = { { CH_A, 0 }, { CH_A, 0 } } };
	EXPECT_EQ(-EINVAL, reg(self->sc, &d));
	d = (struct set_desc){ .flags = DFG_SET_F_ROOT, .nr_out = 1,
			       .out = { { 77, 0 } } };
	EXPECT_EQ(-ENOENT, reg(self->sc, &d));
	reg_fill(&r, &(struct set_desc){ .nr_in = 1 });
	r.inputs = 16;
	EXPECT_EQ(-EFAULT, sys_dfg_ioctl(self->sc, DFG_IOC_SET_REGISTER, &r));

	/* A channel of another graph is no channel of this one. */
	other = chan_graph_new(self->dev, "other");
	ASSERT_LE(0, other);
	ASSERT_EQ(2, chan_create(other, 1, DEPTH, 1, NULL));
	ASSERT_EQ(3, chan_create(other, 1, DEPTH, 1, NULL));
	oid = chan_create(other, 1, DEPTH, 1, NULL);
	ASSERT_EQ(4, oid);
	d = (struct set_desc){ .nr_in = 1, .in = { oid } };
	EXPECT_EQ(-ENOENT, reg(self->sc, &d));
	close(other);

	/* Nothing was left behind. */
	cnt = 0;
	for (oid = 1; oid < 16; oid++)
		if (set_attr(self->gid, oid, "runs") >= 0)
			cnt++;
	EXPECT_EQ(0, cnt);
#undef BAD
}

TEST_F(sched, root_next_yield_eof)
{
	struct set_desc d = { .name = "root", .flags = DFG_SET_F_ROOT,
			      .quantum = 321, .nr_comps = 3 };
	struct dfg_set_page *pg;
	char state[32];
	__u64 q = 0;
	int id;

	id = reg(self->sc, &d);
	ASSERT_LT(0, id);
	ASSERT_EQ(0, set_state(self->gid, id, state, sizeof(state)));
	EXPECT_STREQ("ready", state);
	EXPECT_EQ(3, set_attr(self->gid, id, "components"));

	pg = mmap(NULL, DFG_SET_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		  self->sc, DFG_MMAP_OFFSET(id));
	ASSERT_NE(MAP_FAILED, pg);
	EXPECT_EQ(DFG_SET_MAGIC, pg->magic);
	EXPECT_EQ((__u32)id, pg->id);
	EXPECT_EQ(3, pg->nr_comps);
	EXPECT_EQ(DFG_SET_COMP_NONE, pg->active);
	EXPECT_EQ(DFG_SET_S_READY, pg->state);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, DFG_SET_PAGE_SIZE, PROT_READ,
				   MAP_PRIVATE, self->sc,
				   DFG_MMAP_OFFSET(id)));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, DFG_SET_PAGE_SIZE, PROT_READ,
				   MAP_SHARED, self->sc,
				   DFG_MMAP_OFFSET(id + 1)));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 2 * DFG_SET_PAGE_SIZE, PROT_READ,
				   MAP_SHARED, self->sc, DFG_MMAP_OFFSET(id)));

	EXPECT_EQ(id, NEXT_NOW(0, 0, &q));
	EXPECT_EQ(321, q);
	EXPECT_EQ(DFG_SET_S_RUNNING, pg->state);
	/* One runner: nobody else gets it meanwhile. */
	EXPECT_EQ(-ETIME, NEXT_NOW(0, 0, NULL));
	EXPECT_EQ(id, NEXT_NOW(id, DFG_YIELD_QUANTUM, NULL));
	pg->comps[1].elems_out = 42;
	pg->comps[1].bytes_out = 4200;
	EXPECT_EQ(-ENODATA, NEXT_NOW(id, DFG_YIELD_EOF, NULL));
	EXPECT_EQ(DFG_SET_S_DONE, pg->state);
	ASSERT_EQ(0, set_state(self->gid, id, state, sizeof(state)));
	EXPECT_STREQ("done", state);
	EXPECT_EQ(2, set_attr(self->gid, id, "runs"));
	EXPECT_EQ(321, set_attr(self->gid, id, "quantum"));
	EXPECT_EQ(42, set_attr(self->gid, id, "comp1/elements_out"));
	EXPECT_EQ(4200, set_attr(self->gid, id, "comp1/bytes_out"));
	EXPECT_EQ(0, set_attr(self->gid, id, "comp0/elements_out"));
	EXPECT_EQ(0, unreg(self->sc, id));
	EXPECT_EQ(-ENOENT, set_attr(self->gid, id, "runs"));
	/* The mapping keeps the page, not the set. */
	EXPECT_EQ((__u32)id, pg->id);
	munmap(pg, DFG_SET_PAGE_SIZE);
}

TEST_F(sched, yield_errors)
{
	struct set_desc d = { .flags = DFG_SET_F_ROOT };
	struct dfg_sched_next n = { 0 };
	struct dfg_sched_yield y = { 0 };
	int id;

	id = reg(self->sc, &d);
	ASSERT_LT(0, id);
	EXPECT_EQ(-ENOENT, yield_ioctl(self->sc, id + 5, DFG_YIELD_QUANTUM));
	EXPECT_EQ(-EBUSY, yield_ioctl(self->sc, id, DFG_YIELD_QUANTUM));
	ASSERT_EQ(id, NEXT_NOW(0, 0, NULL));
	EXPECT_EQ(-EINVAL, yield_ioctl(self->sc, id, 0));
	EXPECT_EQ(-EINVAL, yield_ioctl(self->sc, id, DFG_YIELD_ERROR + 1));
	EXPECT_EQ(-EINVAL, yield_ioctl(self->sc, id, DFG_YIELD_INPUT_EMPTY));
	EXPECT_EQ(-EINVAL, yield_ioctl(self->sc, id, DFG_YIELD_OUTPUT_FULL));
	y.id = id;
	y.reason = DFG_YIELD_QUANTUM;
	y.reserved[0] = 1;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->sc, DFG_IOC_SCHED_YIELD, &y));
	/* A set running cannot be unregistered. */
	EXPECT_EQ(-EBUSY, unreg(self->sc, id));
	EXPECT_EQ(-ENOENT, unreg(self->sc, id + 7));

	n.yield_reason = DFG_YIELD_QUANTUM;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->sc, DFG_IOC_SCHED_NEXT, &n));
	n = (struct dfg_sched_next){ .cpu = 1 };
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->sc, DFG_IOC_SCHED_NEXT, &n));
	n = (struct dfg_sched_next){ .flags = DFG_NEXT_F_CPU, .cpu = 4096 };
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->sc, DFG_IOC_SCHED_NEXT, &n));
	n = (struct dfg_sched_next){ .flags = 0x80 };
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->sc, DFG_IOC_SCHED_NEXT, &n));
	n = (struct dfg_sched_next){ .flags = DFG_NEXT_F_NOWAIT, .id = 1 };
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->sc, DFG_IOC_SCHED_NEXT, &n));
	/* A bad yield inside NEXT changes nothing. */
	EXPECT_EQ(-EINVAL, NEXT_NOW(id, DFG_YIELD_INPUT_EMPTY, NULL));
	EXPECT_EQ(-ETIME, NEXT_NOW(0, 0, NULL));
	EXPECT_EQ(0, yield_ioctl(self->sc, id, DFG_YIELD_QUANTUM));
	EXPECT_EQ(0, unreg(self->sc, id));
}

/* A consumer set runs only when its input has data, and again after it. */
TEST_F(sched, input_gates_and_wakes)
{
	struct set_desc d = { .name = "cons", .nr_in = 1, .in = { CH_A } };
	struct chan_ep prod, cons;
	struct pending p;
	struct dfg_desc dd;
	char state[32];
	int id, res;

	ASSERT_EQ(0, chan_ep_open(self->g, CH_A, DFG_CHAN_CONSUMER, MAPSZ,
				  &cons));
	ASSERT_EQ(0, chan_ep_open(self->g, CH_A, DFG_CHAN_PRODUCER, MAPSZ,
				  &prod));
	id = reg(self->sc, &d);
	ASSERT_LT(0, id);
	ASSERT_EQ(0, set_state(self->gid, id, state, sizeof(state)));
	EXPECT_STREQ("waiting", state);
	/* The kernel waits as a consumer would: flag raised. */
	EXPECT_EQ(1, cons.hdr->cons_waiting);
	EXPECT_EQ(-ETIME, NEXT_NOW(0, 0, NULL));

	ASSERT_EQ(0, next_start_held(&p, variant->path, &self->ring, self->sc));
	EXPECT_EQ(-ETIME, next_end(&p, 100, &res));
	/* Only io_uring commands park; an ioctl sleeps. */
	if (variant->path != DFG_PATH_IOCTL)
		EXPECT_EQ(self->parked0 + 1,
			  dfg_sysfs_wait("parked", self->parked0 + 1));
	/* The producer's send sees the flag and WAKEs: the set is handed. */
	ASSERT_EQ(0, chan_push_wake(&prod, 0, 64, 1));
	ASSERT_EQ(0, next_end(&p, 5000, &res));
	EXPECT_EQ(id, res);
	EXPECT_EQ(0, cons.hdr->cons_waiting);
	EXPECT_EQ(1, set_attr(self->gid, id, "wakeups"));

	/* Runs, drains, waits again. */
	EXPECT_EQ(0, chan_pop(&cons, &dd));
	EXPECT_EQ(-ETIME, NEXT_NOW(id, DFG_YIELD_INPUT_EMPTY, NULL));
	EXPECT_EQ(1, set_attr(self->gid, id, "waits"));
	/* Data that came before the wait was armed: runnable at once. */
	ASSERT_EQ(0, chan_push_wake(&prod, 0, 64, 2));
	EXPECT_EQ(id, NEXT_NOW(0, 0, NULL));
	ASSERT_EQ(0, chan_push(&prod, 0, 64, 3));
	EXPECT_EQ(0, yield_ioctl(self->sc, id, DFG_YIELD_INPUT_EMPTY));
	EXPECT_EQ(id, NEXT_NOW(0, 0, NULL));
	EXPECT_EQ(0, chan_pop(&cons, &dd));
	EXPECT_EQ(0, chan_pop(&cons, &dd));
	EXPECT_EQ(-ETIME, NEXT_NOW(id, DFG_YIELD_INPUT_EMPTY, NULL));
	/* End of stream makes it runnable too. */
	chan_ep_close(&prod);
	EXPECT_EQ(id, NEXT_NOW(0, 0, NULL));
	EXPECT_EQ(-ENODATA, NEXT_NOW(id, DFG_YIELD_EOF, NULL));
	chan_ep_close(&cons);
	dfg_pending_release(&p.cmd);
}

/* Backpressure: a root that filled its output waits for room. */
TEST_F(sched, output_full_waits_for_room)
{
	struct chan_ep prod, cons;
	struct set_desc d = { .name = "src", .flags = DFG_SET_F_ROOT,
			      .nr_out = 1 };
	struct pending p;
	struct dfg_desc dd;
	int id, res, i;

	ASSERT_EQ(0, chan_ep_open(self->g, CH_B, DFG_CHAN_CONSUMER, MAPSZ,
				  &cons));
	ASSERT_EQ(0, chan_ep_open(self->g, CH_B, DFG_CHAN_PRODUCER, MAPSZ,
				  &prod));
	d.out[0] = (struct dfg_set_output){ CH_B, prod.slot };
	id = reg(self->sc, &d);
	ASSERT_LT(0, id);
	EXPECT_EQ(id, NEXT_NOW(0, 0, NULL));
	/* Room left: OUTPUT_FULL does not stop it. */
	EXPECT_EQ(id, NEXT_NOW(id, DFG_YIELD_OUTPUT_FULL, NULL));
	for (i = 0; i < DEPTH; i++)
		ASSERT_EQ(0, chan_push_wake(&prod, 0, 8, i));
	EXPECT_EQ(-ETIME, NEXT_NOW(id, DFG_YIELD_OUTPUT_FULL, NULL));
	EXPECT_EQ(1, chan_ring(prod.hdr, prod.slot)->prod_waiting);

	ASSERT_EQ(0, next_start_held(&p, variant->path, &self->ring, self->sc));
	EXPECT_EQ(-ETIME, next_end(&p, 100, &res));
	ASSERT_EQ(0, chan_pop_wake(&cons, &dd));
	ASSERT_EQ(0, next_end(&p, 5000, &res));
	EXPECT_EQ(id, res);
	EXPECT_EQ(0, chan_ring(prod.hdr, prod.slot)->prod_waiting);
	/* Consumer gone: producers can make progress (to see -EPIPE). */
	ASSERT_EQ(0, chan_push(&prod, 0, 8, 0));
	EXPECT_EQ(-EAGAIN, chan_push(&prod, 0, 8, 0));
	EXPECT_EQ(-ETIME, NEXT_NOW(id, DFG_YIELD_OUTPUT_FULL, NULL));
	chan_ep_close(&cons);
	EXPECT_EQ(id, NEXT_NOW(0, 0, NULL));
	EXPECT_EQ(0, yield_ioctl(self->sc, id, DFG_YIELD_EOF));
	chan_ep_close(&prod);
	dfg_pending_release(&p.cmd);
}

/* ------------------------------------------------------------------------
 * A pipeline driven by worker threads
 * ------------------------------------------------------------------------
 */
#define ITEMS	3000

struct pipe_run {
	int sc;
	int src, dst;			/* set ids */
	struct chan_ep prod, cons;
	int running[2];			/* atomic: a worker runs the set */
	int waited_full;		/* src's last yield was OUTPUT_FULL */
	int waited_empty;		/* dst's last yield was INPUT_EMPTY */
	__u64 sent, got, next_tag;
	int errors;			/* atomic */
	int overlap;			/* atomic: a set ran twice at once */
	int early;			/* atomic: handed without work */
	int eof_sent;
};

static void pipe_err(struct pipe_run *r, int *ctr)
{
	__atomic_add_fetch(ctr, 1, __ATOMIC_RELAXED);
	(void)r;
}

/* One turn of the source: up to 8 items; returns the yield reason. */
static __u32 pipe_src_turn(struct pipe_run *r)
{
	int i;

	if (r->waited_full && chan_ring(r->prod.hdr, r->prod.slot)->tail -
	    __atomic_load_n(&chan_ring(r->prod.hdr, r->prod.slot)->head,
			    __ATOMIC_ACQUIRE) >= DEPTH)
		pipe_err(r, &r->early);
	r->waited_full = 0;
	for (i = 0; i < 8 && r->sent < ITEMS; i++) {
		if (chan_push_wake(&r->prod, 0, 16, r->sent)) {
			r->waited_full = 1;
			return DFG_YIELD_OUTPUT_FULL;
		}
		r->sent++;
	}
	if (r->sent < ITEMS)
		return DFG_YIELD_QUANTUM;
	chan_ep_close(&r->prod);
	return DFG_YIELD_EOF;
}

static __u32 pipe_dst_turn(struct pipe_run *r)
{
	struct dfg_chan_ring *ring = chan_ring(r->cons.hdr, 0);
	struct dfg_desc d;
	int i;

	/*
	 * Only a set woken from INPUT_EMPTY must find work: after a QUANTUM
	 * yield it is READY by right and may find the ring just drained.
	 */
	if (r->waited_empty &&
	    __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE) == ring->head &&
	    ring->state != DFG_CHAN_S_CLOSED)
		pipe_err(r, &r->early);
	r->waited_empty = 0;
	for (i = 0; i < 8; i++) {
		if (chan_pop_wake(&r->cons, &d)) {
			if (ring->state == DFG_CHAN_S_CLOSED &&
			    __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE) ==
			    ring->head)
				return DFG_YIELD_EOF;
			r->waited_empty = 1;
			return DFG_YIELD_INPUT_EMPTY;
		}
		if (d.tag != r->next_tag++)
			pipe_err(r, &r->errors);
		r->got++;
	}
	return DFG_YIELD_QUANTUM;
}

static void *pipe_worker(void *arg)
{
	struct pipe_run *r = arg;
	__u32 yid = 0, why = 0;

	for (;;) {
		struct dfg_sched_next n = { .yield_id = yid,
					    .yield_reason = why };
		int id = sys_dfg_ioctl(r->sc, DFG_IOC_SCHED_NEXT, &n);
		int k;

		if (id == -ENODATA)
			return NULL;
		if (id < 0) {
			pipe_err(r, &r->errors);
			return NULL;
		}
		k = id == r->src ? 0 : 1;
		if (__atomic_exchange_n(&r->running[k], 1, __ATOMIC_ACQ_REL))
			pipe_err(r, &r->overlap);
		why = k == 0 ? pipe_src_turn(r) : pipe_dst_turn(r);
		__atomic_store_n(&r->running[k], 0, __ATOMIC_RELEASE);
		yid = id;
	}
}

static void pipeline(struct __test_metadata *_metadata, int g, int workers)
{
	struct pipe_run r = { 0 };
	struct set_desc src = { .name = "src", .flags = DFG_SET_F_ROOT,
				.nr_out = 1 };
	struct set_desc dst = { .name = "dst", .nr_in = 1, .in = { CH_A } };
	pthread_t th[8];
	int i, gid = dfg_graph_id(g);

	r.sc = sched_attach(g);
	ASSERT_LE(0, r.sc);
	ASSERT_EQ(0, chan_ep_open(g, CH_A, DFG_CHAN_CONSUMER, MAPSZ, &r.cons));
	ASSERT_EQ(0, chan_ep_open(g, CH_A, DFG_CHAN_PRODUCER, MAPSZ, &r.prod));
	src.out[0] = (struct dfg_set_output){ CH_A, r.prod.slot };
	r.dst = reg(r.sc, &dst);
	r.src = reg(r.sc, &src);
	ASSERT_LT(0, r.src);
	ASSERT_LT(0, r.dst);
	for (i = 0; i < workers; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, pipe_worker, &r));
	for (i = 0; i < workers; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(ITEMS, r.sent);
	EXPECT_EQ(ITEMS, r.got);
	EXPECT_EQ(0, r.errors);
	EXPECT_EQ(0, r.overlap);
	EXPECT_EQ(0, r.early);
	TH_LOG("%d workers: src runs %lld waits %lld, dst runs %lld waits %lld",
	       workers, set_attr(gid, r.src, "runs"),
	       set_attr(gid, r.src, "waits"), set_attr(gid, r.dst, "runs"),
	       set_attr(gid, r.dst, "waits"));
	EXPECT_LT(0, set_attr(gid, r.dst, "waits"));
	chan_ep_close(&r.cons);
	close(r.sc);
}

TEST_F(sched, pipeline_two_workers)
{
	if (variant->path != DFG_PATH_IOCTL)
		SKIP(return, "workers use ioctl; uring_worker covers io_uring");
	pipeline(_metadata, self->g, 2);
}

TEST_F(sched, pipeline_four_workers)
{
	if (variant->path != DFG_PATH_IOCTL)
		SKIP(return, "workers use ioctl; uring_worker covers io_uring");
	pipeline(_metadata, self->g, 4);
}

/* A worker parked over io_uring is handed the set a QUANTUM yield frees. */
TEST_F(sched, handoff_to_parked)
{
	struct set_desc d = { .flags = DFG_SET_F_ROOT };
	struct pending p;
	int id, res;

	id = reg(self->sc, &d);
	ASSERT_LT(0, id);
	ASSERT_EQ(id, NEXT_NOW(0, 0, NULL));
	ASSERT_EQ(0, next_start(&p, variant->path, &self->ring, self->sc));
	EXPECT_EQ(-ETIME, next_end(&p, 50, &res));
	EXPECT_EQ(0, yield_ioctl(self->sc, id, DFG_YIELD_QUANTUM));
	ASSERT_EQ(0, next_end(&p, 5000, &res));
	EXPECT_EQ(id, res);
	if (variant->path == DFG_PATH_IOCTL) {
		/* The ioctl worker was a thread, gone holding the set. */
		__u64 t = dfg_now_ns();

		while (NEXT_NOW(0, 0, NULL) != -EIO && dfg_ms_since(t) < 5000)
			usleep(2000);
		EXPECT_EQ(-EIO, NEXT_NOW(0, 0, NULL));
		return;
	}
	/* The last set done: a parked worker learns it at once. */
	ASSERT_EQ(0, next_start(&p, variant->path, &self->ring, self->sc));
	EXPECT_EQ(-ETIME, next_end(&p, 50, &res));
	EXPECT_EQ(0, yield_ioctl(self->sc, id, DFG_YIELD_EOF));
	ASSERT_EQ(0, next_end(&p, 5000, &res));
	EXPECT_EQ(-ENODATA, res);
}

/* Sets go to workers whose CPU their mask holds. */
TEST_F(sched, cpumask)
{
	struct set_desc d0 = { .flags = DFG_SET_F_ROOT, .cpumask = 1 };
	struct dfg_sched_next n = { .flags = DFG_NEXT_F_CPU |
					    DFG_NEXT_F_NOWAIT };
	int id;

	id = reg(self->sc, &d0);
	ASSERT_LT(0, id);
	EXPECT_EQ(1, set_attr(self->gid, id, "cpumask") > 0);
	n.cpu = 1;
	if (sysconf(_SC_NPROCESSORS_CONF) > 1)
		EXPECT_EQ(-ETIME, sys_dfg_ioctl(self->sc, DFG_IOC_SCHED_NEXT,
						&n));
	n.cpu = 0;
	EXPECT_EQ(id, sys_dfg_ioctl(self->sc, DFG_IOC_SCHED_NEXT, &n));
	EXPECT_EQ(0, yield_ioctl(self->sc, id, DFG_YIELD_EOF));
}

/* This thread's CPU time, ns: the clock the module's sampler reads. */
static __u64 cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Spin for @ns of this thread's CPU time. */
static void spin_ns(__u64 ns)
{
	__u64 t0 = cpu_ns();

	while (cpu_ns() - t0 < ns)
		;
}

/* What fair_run() saw. */
struct fair {
	int	na, nb;		/* runs of each set */
	__u64	maxw;		/* longest run, wall ns, NEXT to NEXT */
	__u64	total;		/* sum of the runs, wall ns */
};

/*
 * Runs the always-ready sets @ida and @idb from this thread, 100 us of CPU
 * each run, at least @runs runs and then until the runs add up to ten
 * times the longest (or 8 s pass), ending with a yield for @reason. The
 * scheduler picks the lower virtual time, so the two stay within one run's
 * charge of each other; a run's wall time from the NEXT that starts it to
 * the one that ends it encloses the time the module charges, so f->maxw
 * bounds the unfairness allowed however long the host stalls the vCPU.
 */
static int fair_run(enum dfg_path path, struct io_uring *ring, int sc,
		    int ida, int idb, int runs, __u32 reason, struct fair *f)
{
	__u64 t0, t1, tprev = 0, start = dfg_now_ns();
	bool stop = false;
	int i, id = 0, ret;

	memset(f, 0, sizeof(*f));
	for (i = 0; !stop; i++) {
		stop = i >= runs && (f->total >= 10 * f->maxw ||
				     dfg_ms_since(start) >= 8000);
		t0 = dfg_now_ns();
		if (stop)
			ret = yield_ioctl(sc, id, reason);
		else
			ret = next_now(path, ring, sc, id,
				       id ? DFG_YIELD_QUANTUM : 0, NULL);
		t1 = dfg_now_ns();
		if (id) {
			f->maxw = t1 - tprev > f->maxw ? t1 - tprev : f->maxw;
			f->total += t1 - tprev;
		}
		if (stop)
			return ret;
		if (ret != ida && ret != idb)
			return ret < 0 ? ret : -EPROTO;
		id = ret;
		f->na += id == ida;
		f->nb += id == idb;
		tprev = t0;
		spin_ns(100000);
	}
	return 0;
}

/*
 * Two always-runnable sets: equal time held; priority doubles a share.
 * Time held, the scheduler's measure, not runs: a run the host stretches
 * is paid back in runs of the other set.
 */
TEST_F(sched, fairness)
{
	struct set_desc a = { .name = "a", .flags = DFG_SET_F_ROOT };
	struct set_desc b = { .name = "b", .flags = DFG_SET_F_ROOT };
	int ida, idb;
	long long ta, tb;
	struct fair f;

	ida = reg(self->sc, &a);
	idb = reg(self->sc, &b);
	ASSERT_LT(0, ida);
	ASSERT_LT(0, idb);
	ASSERT_EQ(0, fair_run(variant->path, &self->ring, self->sc, ida, idb,
			      400, DFG_YIELD_QUANTUM, &f));
	ta = set_attr(self->gid, ida, "run_ns");
	tb = set_attr(self->gid, idb, "run_ns");
	TH_LOG("equal priority: %d / %d runs, %lld / %lld ns held, longest run %llu of %llu ns",
	       f.na, f.nb, ta, tb, f.maxw, f.total);
	EXPECT_LT(0, ta);
	EXPECT_LT(0, tb);
	/* Both start at the same virtual time and gain their time held. */
	EXPECT_GE((long long)f.maxw, llabs(ta - tb));
	EXPECT_EQ(0, unreg(self->sc, ida));
	EXPECT_EQ(0, unreg(self->sc, idb));

	a.priority = 1;
	ida = reg(self->sc, &a);
	idb = reg(self->sc, &b);
	ASSERT_LT(0, ida);
	ASSERT_LT(0, idb);
	ASSERT_EQ(0, fair_run(variant->path, &self->ring, self->sc, ida, idb,
			      600, DFG_YIELD_EOF, &f));
	ta = set_attr(self->gid, ida, "run_ns");
	tb = set_attr(self->gid, idb, "run_ns");
	TH_LOG("priority 1 vs 0: %d / %d runs, %lld / %lld ns held, longest run %llu of %llu ns",
	       f.na, f.nb, ta, tb, f.maxw, f.total);
	/* a's virtual time grows by half its time held: ta ~ 2 tb. */
	EXPECT_GE(2 * (long long)f.maxw, llabs(ta - 2 * tb));
}

/*
 * Makes @v the active component of @pg once the sampler has charged the
 * time before: waits, asleep so that no CPU time accrues, for the second
 * sample after *@before (the first may have read the clock earlier), then
 * stores. CPU time in [*@before, *@after] may go to either component.
 */
static int comp_switch(int gid, int id, struct dfg_set_page *pg, __u32 v,
		       __u64 *before, __u64 *after)
{
	__u64 start = dfg_now_ns();
	long long s0, s;

	*before = cpu_ns();
	s0 = set_attr(gid, id, "samples");
	if (s0 < 0)
		return s0;
	do {
		if (dfg_ms_since(start) > 5000)
			return -ETIME;
		usleep(500);
		s = set_attr(gid, id, "samples");
		if (s < 0)
			return s;
	} while (s < s0 + 2);
	__atomic_store_n(&pg->active, v, __ATOMIC_RELAXED);
	*after = cpu_ns();
	return 0;
}

/*
 * The sampler charges a worker's CPU time to the component the set page
 * names. Sampling is late now and then (the host stalls the vCPU of the
 * sampler's kworker), and a late sample charges everything since the last
 * one to whatever is active then; so the test switches components only
 * after a sample, and checks the charges against the CPU time this thread
 * spent under each, within the few microseconds around each switch.
 */
TEST_F(sched, component_cpu_sampling)
{
	struct set_desc d = { .name = "two", .flags = DFG_SET_F_ROOT,
			      .nr_comps = 2 };
	__u64 b1, a1, b0, a0, bn, an;
	__u64 sure0 = 0, sure1 = 0, unsure0 = 0, unsure1 = 0;
	struct dfg_set_page *pg;
	long long c0, c1, total, idle;
	int id, i;

	id = reg(self->sc, &d);
	ASSERT_LT(0, id);
	pg = mmap(NULL, DFG_SET_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		  self->sc, DFG_MMAP_OFFSET(id));
	ASSERT_NE(MAP_FAILED, pg);
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(id, NEXT_NOW(i ? id : 0, i ? DFG_YIELD_QUANTUM : 0,
				       NULL));
		ASSERT_EQ(0, comp_switch(self->gid, id, pg, 1, &b1, &a1));
		spin_ns(8000000);
		ASSERT_EQ(0, comp_switch(self->gid, id, pg, 0, &b0, &a0));
		spin_ns(40000000);
		ASSERT_EQ(0, comp_switch(self->gid, id, pg, DFG_SET_COMP_NONE,
					 &bn, &an));
		sure1 += b0 - a1;
		sure0 += bn - a0;
		unsure1 += a1 - b1 + a0 - b0;
		unsure0 += a0 - b0 + an - bn;
	}
	ASSERT_EQ(0, yield_ioctl(self->sc, id, DFG_YIELD_EOF));
	c0 = set_attr(self->gid, id, "comp0/cpu_ns");
	c1 = set_attr(self->gid, id, "comp1/cpu_ns");
	total = set_attr(self->gid, id, "cpu_ns");
	idle = set_attr(self->gid, id, "idle_ns");
	TH_LOG("comp0 %lld ns (spent %llu..%llu), comp1 %lld ns (%llu..%llu)",
	       c0, sure0, sure0 + unsure0, c1, sure1, sure1 + unsure1);
	TH_LOG("idle %lld of %lld ns, %lld samples", idle, total,
	       set_attr(self->gid, id, "samples"));
	EXPECT_EQ(total, c0 + c1 + idle);
	EXPECT_LE((long long)sure0, c0);
	EXPECT_GE((long long)(sure0 + unsure0), c0);
	EXPECT_LE((long long)sure1, c1);
	EXPECT_GE((long long)(sure1 + unsure1), c1);
	EXPECT_LT(0, set_attr(self->gid, id, "comp0/samples"));
	EXPECT_LT(0, set_attr(self->gid, id, "comp1/samples"));
	munmap(pg, DFG_SET_PAGE_SIZE);
}

TEST_F(sched, register_cycles)
{
	struct set_desc d = { .nr_in = 1, .in = { CH_A }, .nr_comps = 4 };
	struct dfg_graph_info info = { .size = sizeof(info) };
	__u32 objs0;
	int i, id;

	ASSERT_EQ(0, sys_dfg_ioctl(self->g, DFG_IOC_GRAPH_INFO, &info));
	objs0 = info.nr_objects;
	for (i = 0; i < 1000; i++) {
		d.flags = i % 2 ? DFG_SET_F_ROOT : 0;
		id = reg(self->sc, &d);
		ASSERT_LT(0, id);
		/* Roots run once now and then; the others never get data. */
		if (i % 3 == 0 && d.flags) {
			ASSERT_EQ(id, NEXT_NOW(0, 0, NULL));
			ASSERT_EQ(0, yield_ioctl(self->sc, id,
						 DFG_YIELD_EOF));
		} else {
			ASSERT_EQ(d.flags ? id : -ETIME, NEXT_NOW(0, 0, NULL) ==
				  id ? id : -ETIME);
			if (d.flags)
				ASSERT_EQ(0, yield_ioctl(self->sc, id,
							 DFG_YIELD_QUANTUM));
		}
		ASSERT_EQ(0, unreg(self->sc, id));
	}
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	ASSERT_EQ(0, sys_dfg_ioctl(self->g, DFG_IOC_GRAPH_INFO, &info));
	EXPECT_EQ(objs0, info.nr_objects);
	EXPECT_EQ(-ENODATA, NEXT_NOW(0, 0, NULL));
}

/* The producer side of unregister_races_watch_fire: push and WAKE. */
struct fire_race {
	struct chan_ep	*prod;
	int		rounds;
	int		go;	/* round the pusher may run */
	int		done;	/* rounds the pusher finished */
	int		err;
};

static void *fire_pusher(void *arg)
{
	struct fire_race *r = arg;
	int i;

	for (i = 0; i < __atomic_load_n(&r->rounds, __ATOMIC_RELAXED); i++) {
		/* Spin: the push must land while UNREGISTER runs. */
		while (__atomic_load_n(&r->go, __ATOMIC_ACQUIRE) < i)
			if (__atomic_load_n(&r->rounds, __ATOMIC_RELAXED) <= i)
				return NULL;
		if (chan_push_wake(r->prod, 0, 64, i) && !r->err)
			r->err = i + 1;
		__atomic_store_n(&r->done, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * A watch fires (the producer's WAKE) while its set leaves the client
 * (UNREGISTER, the client's close): the leaving side must wait for the
 * callback, which uses the set and its client, before dropping them.
 *
 * Every round can meet the window, so the rounds run for a time budget
 * (at most 3000, at least 300): two spinning threads on two vCPUs go far
 * slower when the host takes one of them away, and the harness kills a
 * test at 30 s.
 */
TEST_F(sched, unregister_races_watch_fire)
{
	struct set_desc d = { .nr_in = 1, .in = { CH_A } };
	struct fire_race r = { .rounds = 3000, .go = -1 };
	__u64 start = dfg_now_ns();
	struct chan_ep prod, cons;
	struct dfg_desc dd;
	pthread_t th;
	int i, sc, id;

	if (variant->path != DFG_PATH_IOCTL)
		SKIP(return, "no command of this test is parked");
	ASSERT_EQ(0, chan_ep_open(self->g, CH_A, DFG_CHAN_CONSUMER, MAPSZ,
				  &cons));
	ASSERT_EQ(0, chan_ep_open(self->g, CH_A, DFG_CHAN_PRODUCER, MAPSZ,
				  &prod));
	r.prod = &prod;
	ASSERT_EQ(0, pthread_create(&th, NULL, fire_pusher, &r));
	for (i = 0; i < r.rounds; i++) {
		if (i >= 300 && dfg_ms_since(start) >= 10000)
			break;
		sc = sched_attach(self->g);
		ASSERT_LE(0, sc);
		id = reg(sc, &d);
		ASSERT_LT(0, id);
		/* Empty input: the watch is armed, the flag raised. */
		__atomic_store_n(&r.go, i, __ATOMIC_RELEASE);
		ASSERT_EQ(0, unreg(sc, id));
		/* The race is over once UNREGISTER returned: no need to spin. */
		while (__atomic_load_n(&r.done, __ATOMIC_ACQUIRE) <= i)
			sched_yield();
		ASSERT_EQ(0, chan_pop(&cons, &dd));
		EXPECT_EQ((__u64)i, dd.tag);
		ASSERT_EQ(0, close(sc));
	}
	__atomic_store_n(&r.rounds, i, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	TH_LOG("%d rounds", i);
	EXPECT_EQ(0, r.err);
	EXPECT_EQ(0, cons.hdr->cons_waiting);
	chan_ep_close(&prod);
	chan_ep_close(&cons);
}

/* The graph dies under registered sets and a waiting worker. */
TEST_F(sched, graph_death)
{
	struct set_desc d = { .nr_in = 1, .in = { CH_A } };
	struct set_desc r = { .flags = DFG_SET_F_ROOT };
	struct dfg_evmon mon;
	struct dfg_event_msg ev;
	struct pending p;
	char dir[64];
	int id, rid, res;

	ASSERT_EQ(0, dfg_evmon_open(&mon));
	id = reg(self->sc, &d);
	ASSERT_LT(0, id);
	EXPECT_TRUE(dfg_evmon_find(&mon, DFG_EV_SET_REGISTER, getpid(), 2000,
				    &ev));
	rid = reg(self->sc, &r);
	ASSERT_LT(0, rid);
	ASSERT_EQ(rid, NEXT_NOW(0, 0, NULL));
	ASSERT_EQ(0, next_start(&p, variant->path, &self->ring, self->sc));
	EXPECT_EQ(-ETIME, next_end(&p, 50, &res));
	snprintf(dir, sizeof(dir), "/sys/kernel/dfg/graphs/%d/set%d", self->gid,
		 id);
	EXPECT_EQ(0, access(dir, F_OK));
	close(self->g);
	self->g = -1;
	ASSERT_EQ(0, next_end(&p, 5000, &res));
	EXPECT_EQ(-ECANCELED, res);
	EXPECT_NE(0, access(dir, F_OK));
	EXPECT_EQ(-ECANCELED, NEXT_NOW(0, 0, NULL));
	EXPECT_EQ(-ECANCELED, reg(self->sc, &r));
	/* The running set can still be given back and dropped. */
	EXPECT_EQ(0, yield_ioctl(self->sc, rid, DFG_YIELD_QUANTUM));
	EXPECT_EQ(0, unreg(self->sc, id));
	dfg_evmon_close(&mon);
}

/* ------------------------------------------------------------------------
 * Deaths: a worker process killed while parked or while running a set
 * ------------------------------------------------------------------------
 */

enum kill_point { KILL_PARKED, KILL_RUNNING, KILL_THREAD_EXIT };

static void *grab_and_exit(void *arg)
{
	struct dfg_sched_next n = { .flags = DFG_NEXT_F_NOWAIT };

	*(int *)arg = sys_dfg_ioctl(*(int *)arg, DFG_IOC_SCHED_NEXT, &n);
	return NULL;
}

static void kill_worker(struct __test_metadata *_metadata, enum kill_point kp,
			bool uring)
{
	__u64 parked0 = baseline("parked"), pages0 = baseline("pages");
	struct set_desc wait = { .nr_in = 1, .in = { CH_A } };
	struct set_desc root = { .flags = DFG_SET_F_ROOT };
	struct dfg_evmon mon;
	struct dfg_event_msg ev;
	struct pending p;
	char state[32];
	int dev, g, sc, gid, mine, cid, res, status;
	int sync[2];
	pid_t pid;

	ASSERT_EQ(0, dfg_evmon_open(&mon));
	dev = sys_dfg_open();
	ASSERT_LE(0, dev);
	g = chan_graph_new(dev, "kill");
	ASSERT_LE(0, g);
	gid = dfg_graph_id(g);
	ASSERT_EQ(CH_A, chan_create(g, 1, DEPTH, 1, NULL));
	sc = sched_attach(g);
	ASSERT_LE(0, sc);
	mine = reg(sc, &wait);
	ASSERT_LT(0, mine);
	ASSERT_EQ(0, pipe(sync));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct dfg_sched_next n = { 0 };
		struct io_uring ring;
		struct dfg_cqe cqe;
		int csc = sched_attach(g), id;

		if (csc < 0)
			_exit(2);
		id = reg(csc, kp == KILL_PARKED ? &wait : &root);
		if (id < 0 || write(sync[1], &id, sizeof(id)) != sizeof(id))
			_exit(3);
		if (kp == KILL_THREAD_EXIT) {
			pthread_t t;
			int arg = csc;

			pthread_create(&t, NULL, grab_and_exit, &arg);
			pthread_join(t, NULL);
			if (arg != id)
				_exit(4);
			pause();
		}
		if (kp == KILL_RUNNING) {
			if (sys_dfg_ioctl(csc, DFG_IOC_SCHED_NEXT, &n) != id)
				_exit(4);
			for (;;)
				;
		}
		if (!uring) {
			sys_dfg_ioctl(csc, DFG_IOC_SCHED_NEXT, &n);
			_exit(5);
		}
		if (dfg_ring_init(&ring, 4))
			_exit(6);
		dfg_prep_inline(&ring, csc, DFG_IOC_SCHED_NEXT, &n, sizeof(n),
				1);
		io_uring_submit(&ring);
		dfg_ring_wait(&ring, &cqe, -1);
		_exit(7);
	}
	ASSERT_EQ(sizeof(cid), read(sync[0], &cid, sizeof(cid)));
	close(sync[0]);
	close(sync[1]);
	ASSERT_EQ(0, next_start(&p, DFG_PATH_IOCTL, NULL, sc));
	usleep(100000);
	if (kp != KILL_THREAD_EXIT) {
		/* Only the child's io_uring NEXT counts as parked. */
		if (kp == KILL_PARKED && uring)
			EXPECT_EQ(parked0 + 1, dfg_sysfs_wait("parked",
							  parked0 + 1));
		kill(pid, SIGKILL);
	}
	/* The other process's worker learns the graph failed. */
	ASSERT_EQ(0, next_end(&p, 5000, &res));
	EXPECT_EQ(-EIO, res);
	EXPECT_TRUE(dfg_evmon_find(&mon, DFG_EV_SET_FAILED, pid, 2000, &ev));
	ASSERT_EQ(0, set_state(gid, cid, state, sizeof(state)));
	EXPECT_STREQ("failed", state);
	ASSERT_EQ(0, set_state(gid, mine, state, sizeof(state)));
	EXPECT_STREQ("waiting", state);
	EXPECT_EQ(-EIO, reg(sc, &root));
	if (kp == KILL_THREAD_EXIT)
		kill(pid, SIGKILL);
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, 5000)) {
		dfg_kill_pid(pid);
	}
	EXPECT_TRUE(WIFSIGNALED(status));
	close(sc);
	close(g);
	close(dev);
	EXPECT_EQ(pages0, dfg_sysfs_wait("pages", pages0));
	EXPECT_EQ(parked0, dfg_sysfs_wait("parked", parked0));
	dfg_evmon_close(&mon);
}

TEST(kill9_parked_ioctl)
{
	kill_worker(_metadata, KILL_PARKED, false);
}

TEST(kill9_parked_uring)
{
	kill_worker(_metadata, KILL_PARKED, true);
}

TEST(kill9_running)
{
	kill_worker(_metadata, KILL_RUNNING, false);
}

TEST(worker_thread_exits_holding_a_set)
{
	kill_worker(_metadata, KILL_THREAD_EXIT, false);
}

/* A worker loop over io_uring: parks, is woken by channel traffic. */
TEST(uring_worker)
{
	__u64 parked0 = baseline("parked"), pages0 = baseline("pages");
	struct set_desc dst = { .name = "dst", .nr_in = 1, .in = { CH_A } };
	struct chan_ep prod, cons;
	struct io_uring ring;
	struct dfg_cqe cqe;
	struct dfg_desc d;
	int dev, g, sc, id, i, got = 0, yid = 0, why = 0;

	dev = sys_dfg_open();
	ASSERT_LE(0, dev);
	g = chan_graph_new(dev, "uw");
	ASSERT_LE(0, g);
	ASSERT_EQ(CH_A, chan_create(g, 1, DEPTH, 1, NULL));
	ASSERT_EQ(0, dfg_ring_init(&ring, 8));
	sc = sched_attach(g);
	ASSERT_LE(0, sc);
	ASSERT_EQ(0, chan_ep_open(g, CH_A, DFG_CHAN_CONSUMER, MAPSZ, &cons));
	ASSERT_EQ(0, chan_ep_open(g, CH_A, DFG_CHAN_PRODUCER, MAPSZ, &prod));
	id = reg(sc, &dst);
	ASSERT_LT(0, id);
	for (i = 0; i < 50; i++) {
		struct dfg_sched_next n = { .yield_id = yid,
					    .yield_reason = why };

		dfg_prep_inline(&ring, sc, DFG_IOC_SCHED_NEXT, &n, sizeof(n),
				i);
		ASSERT_EQ(1, io_uring_submit(&ring));
		/* Nothing to read: parked until the send below. */
		EXPECT_EQ(-ETIME, dfg_ring_wait(&ring, &cqe, 20));
		ASSERT_EQ(0, chan_push_wake(&prod, 0, 1, i));
		ASSERT_EQ(0, dfg_ring_wait(&ring, &cqe, 5000));
		ASSERT_EQ(id, cqe.res);
		while (!chan_pop_wake(&cons, &d))
			got++;
		yid = id;
		why = DFG_YIELD_INPUT_EMPTY;
	}
	EXPECT_EQ(50, got);
	EXPECT_EQ(0, yield_ioctl(sc, id, DFG_YIELD_EOF));
	EXPECT_EQ(50, set_attr(dfg_graph_id(g), id, "runs"));
	chan_ep_close(&prod);
	chan_ep_close(&cons);
	close(sc);
	io_uring_queue_exit(&ring);
	close(g);
	close(dev);
	EXPECT_EQ(pages0, dfg_sysfs_wait("pages", pages0));
	EXPECT_EQ(parked0, dfg_sysfs_wait("parked", parked0));
}

/* ------------------------------------------------------------------------
 * Leaving: sets' directories under readers, many clients ending at once
 * ------------------------------------------------------------------------
 */

/* open() of graphs/<gid>/set<id>/<attr>, or -1. */
static int set_attr_open(int gid, int id, const char *attr)
{
	char path[160];

	snprintf(path, sizeof(path), DFG_SYSFS_DIR "/graphs/%d/set%d/%s", gid,
		 id, attr);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* pread() of an open attribute from its start, without the newline. */
static int attr_pread(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

static bool set_dir_exists(int gid, int id)
{
	char path[128];

	snprintf(path, sizeof(path), DFG_SYSFS_DIR "/graphs/%d/set%d", gid, id);
	return access(path, F_OK) == 0;
}

/*
 * Attribute files held open while their set leaves (UNREGISTER; a client's
 * close with its set done): reads fail with ENODEV from then on and never
 * reach the set, whose memory the last put frees.
 */
TEST(sysfs_open_across_leaving)
{
	struct set_desc d = { .name = "leaver", .flags = DFG_SET_F_ROOT,
			      .nr_comps = 2 };
	int dev, g, gid, sc, id, round, i, fds[3];
	char buf[64];

	dev = sys_dfg_open();
	ASSERT_LE(0, dev);
	g = chan_graph_new(dev, "sysfs-leave");
	ASSERT_LE(0, g);
	gid = dfg_graph_id(g);
	for (round = 0; round < 2; round++) {
		sc = sched_attach(g);
		ASSERT_LE(0, sc);
		id = reg(sc, &d);
		ASSERT_LT(0, id);
		fds[0] = set_attr_open(gid, id, "name");
		fds[1] = set_attr_open(gid, id, "comp1/name");
		fds[2] = set_attr_open(gid, id, "comp1/elements_in");
		for (i = 0; i < 3; i++)
			ASSERT_LE(0, fds[i]);
		ASSERT_EQ(0, attr_pread(fds[0], buf, sizeof(buf)));
		EXPECT_STREQ("leaver", buf);
		ASSERT_EQ(0, attr_pread(fds[1], buf, sizeof(buf)));
		EXPECT_STREQ("comp-1", buf);
		ASSERT_EQ(0, attr_pread(fds[2], buf, sizeof(buf)));
		EXPECT_STREQ("0", buf);
		if (!round) {
			ASSERT_EQ(0, unreg(sc, id));
		} else {
			ASSERT_EQ(id, next_now(DFG_PATH_IOCTL, NULL, sc, 0, 0,
					       NULL));
			ASSERT_EQ(0, yield_ioctl(sc, id, DFG_YIELD_EOF));
		}
		/* The client goes; after UNREGISTER the set is already gone. */
		ASSERT_EQ(0, close(sc));
		EXPECT_FALSE(set_dir_exists(gid, id));
		for (i = 0; i < 3; i++) {
			EXPECT_EQ(-ENODEV, attr_pread(fds[i], buf, sizeof(buf)));
			close(fds[i]);
		}
	}
	close(g);
	close(dev);
}

/* The readers of clients_leave_together. */
struct leave_race {
	int	gid;		/* graph read now */
	int	max_id;		/* ids 1..max_id are read */
	int	stop;
	long	found;		/* reads that found a set's file */
	int	has_bad;	/* the first reader to see a wrong answer */
	char	bad[160];	/* writes it here; "" if none */
};

static void leave_bad(struct leave_race *r, const char *file, int ret,
		      const char *buf)
{
	if (!__atomic_exchange_n(&r->has_bad, 1, __ATOMIC_RELAXED))
		snprintf(r->bad, sizeof(r->bad), "%s: %d \"%.40s\"", file,
			 ret, buf);
}

/* One file: its content, or a set gone (ENOENT at open, ENODEV after). */
static void leave_read(struct leave_race *r, const char *file,
		       const char *const *want)
{
	char buf[64] = "";
	int ret = dfg_sysfs_read(file, buf, sizeof(buf));

	if (ret == -ENOENT || ret == -ENODEV)
		return;
	if (!ret) {
		for (; *want; want++)
			if (!strcmp(buf, *want))
				break;
		if (*want) {
			__atomic_add_fetch(&r->found, 1, __ATOMIC_RELAXED);
			return;
		}
	}
	leave_bad(r, file, ret, buf);
}

static void *leave_reader(void *arg)
{
	static const char *const names[] = { "leaver", NULL };
	static const char *const comps[] = { "comp-2", NULL };
	static const char *const states[] = { "ready", "running", "waiting",
					      "done", "failed", NULL };
	struct leave_race *r = arg;
	char file[128];
	int gid, id;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		gid = __atomic_load_n(&r->gid, __ATOMIC_ACQUIRE);
		for (id = 1; id <= r->max_id; id++) {
			snprintf(file, sizeof(file), "graphs/%d/set%d/name",
				 gid, id);
			leave_read(r, file, names);
			snprintf(file, sizeof(file),
				 "graphs/%d/set%d/comp2/name", gid, id);
			leave_read(r, file, comps);
			snprintf(file, sizeof(file), "graphs/%d/set%d/state",
				 gid, id);
			leave_read(r, file, states);
		}
	}
	return NULL;
}

#define LEAVERS		16

/*
 * A child of clients_leave_together: a client of graph @g with two sets
 * done and one waiting, which it leaves (exit: the client's release) once
 * @go reads end of file.
 */
static void leaver(int g, int ready, int go)
{
	struct set_desc done = { .name = "leaver", .flags = DFG_SET_F_ROOT,
				 .nr_comps = 3 };
	struct set_desc wait = { .name = "leaver", .nr_in = 1, .in = { CH_A },
				 .nr_comps = 3 };
	int sc = sched_attach(g), i, id;
	char c;

	/* The graph lives on the parent's descriptor alone. */
	close(g);
	if (sc < 0)
		_exit(2);
	for (i = 0; i < 2; i++)
		if (reg(sc, &done) <= 0)
			_exit(3);
	for (i = 0; i < 2; i++) {
		id = next_now(DFG_PATH_IOCTL, NULL, sc, 0, 0, NULL);
		if (id <= 0 || yield_ioctl(sc, id, DFG_YIELD_EOF))
			_exit(4);
	}
	if (reg(sc, &wait) <= 0)
		_exit(5);
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 0)
		_exit(6);
	_exit(0);
}

/* Set directories in graphs/<gid>/, and how many of them are failed. */
static int count_set_dirs(int gid, int *failed)
{
	char dir[96], file[128], state[32];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), DFG_SYSFS_DIR "/graphs/%d", gid);
	d = opendir(dir);
	if (!d)
		return -errno;
	*failed = 0;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "set", 3))
			continue;
		n++;
		snprintf(file, sizeof(file), "graphs/%d/%.32s/state", gid,
			 e->d_name);
		if (!dfg_sysfs_read(file, state, sizeof(state)) &&
		    !strcmp(state, "failed"))
			(*failed)++;
	}
	closedir(d);
	return n;
}

/*
 * LEAVERS processes end together, each client's release taking its sets
 * out of the graph (those done leave it, the waiting one fails and stays)
 * while two threads read the sets' files. Each round the graph dies at a
 * different point: as the clients go, a little later, or after them (the
 * sets done are then gone, the failed ones stay, a new set takes a free
 * id). Every read finds its set's own content or no set, every directory
 * goes with its set or its graph, and no page stays.
 */
TEST(clients_leave_together)
{
	struct leave_race r = { .max_id = 3 * LEAVERS + 4 };
	struct set_desc root = { .name = "leaver", .flags = DFG_SET_F_ROOT,
				 .nr_comps = 3 };
	__u64 pages0 = baseline("pages"), start = dfg_now_ns();
	int dev, g, gid, sc, id, round, i, n, failed, status;
	int ready[2], go[2];
	pid_t pids[LEAVERS];
	pthread_t th[2];
	long found;
	char c;

	dev = sys_dfg_open();
	ASSERT_LE(0, dev);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, leave_reader, &r));
	for (round = 0; round < 12; round++) {
		if (round >= 3 && dfg_ms_since(start) >= 12000)
			break;
		g = chan_graph_new(dev, "leave");
		ASSERT_LE(0, g);
		gid = dfg_graph_id(g);
		ASSERT_EQ(CH_A, chan_create(g, 1, DEPTH, 1, NULL));
		__atomic_store_n(&r.gid, gid, __ATOMIC_RELEASE);
		ASSERT_EQ(0, pipe(ready));
		ASSERT_EQ(0, pipe(go));
		for (i = 0; i < LEAVERS; i++) {
			pids[i] = fork();
			ASSERT_LE(0, pids[i]);
			if (!pids[i]) {
				close(ready[0]);
				close(go[1]);
				leaver(g, ready[1], go[0]);
			}
		}
		close(ready[1]);
		close(go[0]);
		for (i = 0; i < LEAVERS; i++)
			ASSERT_EQ(1, read(ready[0], &c, 1));
		close(ready[0]);
		/* The readers meet these sets before they go. */
		found = __atomic_load_n(&r.found, __ATOMIC_RELAXED);
		for (i = 0; i < 500; i++) {
			if (__atomic_load_n(&r.found, __ATOMIC_RELAXED) >
			    found + 3 * LEAVERS)
				break;
			usleep(2000);
		}
		close(go[1]);
		if (round % 3 == 1)
			usleep(20000);
		if (round % 3 != 2)
			close(g);
		for (i = 0; i < LEAVERS; i++) {
			ASSERT_EQ(0, dfg_wait_pid(pids[i], &status, 10000)) {
				dfg_kill_pid(pids[i]);
			}
			EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
				TH_LOG("leaver %d: status %#x", i, status);
		}
		if (round % 3 == 2) {
			n = count_set_dirs(gid, &failed);
			EXPECT_EQ(LEAVERS, n);
			EXPECT_EQ(LEAVERS, failed);
			/* An id given back is taken again, directory and all. */
			sc = sched_attach(g);
			ASSERT_LE(0, sc);
			id = reg(sc, &root);
			ASSERT_LT(0, id);
			EXPECT_GE(3 * LEAVERS + 2, id);
			EXPECT_TRUE(set_dir_exists(gid, id));
			EXPECT_EQ(0, unreg(sc, id));
			close(sc);
			close(g);
		}
		EXPECT_EQ(-ENOENT, count_set_dirs(gid, &failed));
		EXPECT_EQ(pages0, dfg_sysfs_wait("pages", pages0));
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	TH_LOG("%d rounds, %ld reads found a set", round, r.found);
	EXPECT_STREQ("", r.bad);
	EXPECT_LT(0, r.found);
	close(dev);
}

/*
 * DFG_TEST_ONLY=fixture.variant.test (as TAP names it) runs that one test (tools/stress.sh
 * runs it in a loop): 6.1's harness has no test selection of its own, so
 * the registered lists are cut down to it before they run.
 */
static int harness_only(const char *name)
{
	static struct __fixture_variant_metadata none = { .name = "" };
	struct __fixture_variant_metadata *v;
	struct __fixture_metadata *f;
	struct __test_metadata *t;
	char buf[256];

	for (f = __fixture_list; f; f = f->next) {
		for (v = f->variant ?: &none; v; v = v->next) {
			for (t = f->tests; t; t = t->next) {
				snprintf(buf, sizeof(buf), "%s%s%s.%s", f->name,
					 v->name[0] ? "." : "", v->name,
					 t->name);
				if (strcmp(buf, name))
					continue;
				f->next = NULL;
				if (v != &none) {
					f->variant = v;
					v->next = NULL;
				}
				f->tests = t;
				t->next = NULL;
				__fixture_list = f;
				return 0;
			}
		}
	}
	return -ENOENT;
}

static void __attribute__((constructor)) __constructor_order_last(void)
{
	if (!__constructor_order)
		__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD;
}

int main(int argc, char **argv)
{
	const char *only = getenv("DFG_TEST_ONLY");

	if (only && harness_only(only)) {
		fprintf(stderr, "no test %s\n", only);
		return KSFT_FAIL;
	}
	return test_harness_run(argc, argv);
}
