// SPDX-License-Identifier: GPL-2.0
/*
 * Feedback (kmod/feedback.c): DFG_IOC_FEEDBACK_SET and the events a rule
 * interpreter acts on, each triggered for real: a channel filled past its
 * high mark and drained below its low one (and no flood while the fill
 * hovers at a mark), a set starved and one backpressured past T, CPU 1
 * taken offline and back, a worker killed with SIGKILL, MemAvailable
 * pushed below its mark by touching memory, the periodic summary (and
 * none by default), and a fill crossing reaching a rule of the rule
 * interpreter (<dfg/rules.h>) with its values. Events come through libdfg's <dfg/events.h>, read
 * here directly so that dfg_events_value() sees each one. Counts of
 * events that must not come are taken over fixed windows.
 *
 * FIXTURE(fb) gives each test a graph with arena 1, channel CH_A (depth
 * DEPTH, one producer), CH_B (depth 2, one producer), a scheduler
 * descriptor and a subscription.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <dfg/rules.h>

#include "dfg_sys.h"
#include "dfg_evmon.h"
#include "../chan/chan.h"
#include "kselftest_harness.h"

#define DEPTH		16
#define CH_A		2
#define CH_B		3
#define MAPSZ_A		DFG_CHAN_MAP_SIZE(DEPTH, 1)
#define MAPSZ_B		DFG_CHAN_MAP_SIZE(2, 1)
#define CPU1_ONLINE	"/sys/devices/system/cpu/cpu1/online"

/* One event and the numeric attributes it carried. */
struct fb_ev {
	struct dfg_event_msg	ev;
	__u64			v[DFG_NL_A_MAX + 1];
};

static void fb_take_values(struct dfg_events *evs, struct fb_ev *out)
{
	unsigned int a;

	for (a = 1; a <= DFG_NL_A_MAX; a++)
		if (dfg_events_value(evs, a, &out->v[a]))
			out->v[a] = ~0ULL;
}

/*
 * Waits up to @ms for an event @type of graph @gid (0: any graph),
 * dropping the others. True with @out filled if it came.
 */
static bool fb_wait(struct dfg_events *evs, __u32 type, __u32 gid, int ms,
		    struct fb_ev *out)
{
	long long deadline = dfg_evmon_now_ms() + ms;
	int left;

	for (;;) {
		left = (int)(deadline - dfg_evmon_now_ms());
		if (left <= 0)
			return false;
		if (dfg_events_next(evs, &out->ev, left) == -ETIMEDOUT)
			return false;
		if (out->ev.type == type && (!gid || out->ev.graph == gid)) {
			fb_take_values(evs, out);
			return true;
		}
	}
}

/* Events @type of graph @gid received in the next @ms. */
static int fb_count(struct dfg_events *evs, __u32 type, __u32 gid, int ms)
{
	long long deadline = dfg_evmon_now_ms() + ms;
	struct fb_ev e;
	int n = 0, left;

	while ((left = (int)(deadline - dfg_evmon_now_ms())) > 0)
		if (fb_wait(evs, type, gid, left, &e))
			n++;
	return n;
}

static int fb_set(int g, __u32 what, __u32 object, __u32 high, __u32 low,
		  __u32 stall_ms, __u32 period_ms)
{
	struct dfg_feedback_set a = {
		.what = what, .object = object, .high = high, .low = low,
		.stall_ms = stall_ms, .period_ms = period_ms,
	};

	return sys_dfg_ioctl(g, DFG_IOC_FEEDBACK_SET, &a);
}

static __u64 fb_counter(const char *name)
{
	char path[96];

	snprintf(path, sizeof(path), "feedback/%s", name);
	return dfg_sysfs_u64(path);
}

static int sched_attach(int g)
{
	struct dfg_sched_attach a = { .flags = DFG_SCHED_O_CLOEXEC };

	return sys_dfg_ioctl(g, DFG_IOC_SCHED_ATTACH, &a);
}

static char comp_names[1][DFG_NAME_MAX] = { "comp" };

/* Registers a set reading @nr_in channels of @in, writing @out (or none). */
static int reg(int sc, __u32 flags, __u32 nr_in, const __u32 *in,
	       const struct dfg_set_output *out)
{
	struct dfg_set_register r = {
		.size = sizeof(r), .flags = flags, .nr_comps = 1,
		.nr_inputs = nr_in, .nr_outputs = out ? 1 : 0,
		.inputs = (__u64)(uintptr_t)in,
		.outputs = (__u64)(uintptr_t)out,
		.comp_names = (__u64)(uintptr_t)comp_names, .quantum = 16,
	};

	snprintf(r.name, sizeof(r.name), "fbset");
	return sys_dfg_ioctl(sc, DFG_IOC_SET_REGISTER, &r);
}

FIXTURE(fb) {
	int dev;
	int g;
	int gid;
	int sc;
	struct dfg_events *evs;
};

FIXTURE_SETUP(fb)
{
	struct dfg_info info;

	self->g = -1;
	self->sc = -1;
	self->evs = NULL;
	self->dev = sys_dfg_open();
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, dfg_get_info(self->dev, &info));
	if (!(info.features & DFG_F_FEEDBACK))
		SKIP(return, "module without DFG_F_FEEDBACK");
	ASSERT_EQ(0, dfg_events_open(&self->evs, 0));
	self->g = chan_graph_new(self->dev, "fb");
	ASSERT_LE(0, self->g);
	self->gid = dfg_graph_id(self->g);
	ASSERT_EQ(CH_A, chan_create(self->g, 1, DEPTH, 1, NULL));
	ASSERT_EQ(CH_B, chan_create(self->g, 1, 2, 1, NULL));
	self->sc = sched_attach(self->g);
	ASSERT_LE(0, self->sc);
}

FIXTURE_TEARDOWN(fb)
{
	if (self->sc >= 0)
		close(self->sc);
	if (self->g >= 0)
		close(self->g);
	dfg_events_close(self->evs);
	close(self->dev);
}

/* A read-only descriptor of the fixture's graph, or -errno. */
static int graph_ro(FIXTURE_DATA(fb) *self)
{
	struct dfg_graph_open o = { .size = sizeof(o),
				    .flags = DFG_GRAPH_O_RDONLY };
	struct dfg_graph_info info = { .size = sizeof(info) };
	int ret = sys_dfg_ioctl(self->g, DFG_IOC_GRAPH_INFO, &info);

	if (ret)
		return ret;
	memcpy(o.name, info.name, sizeof(o.name));
	return sys_dfg_ioctl(self->dev, DFG_IOC_GRAPH_ATTACH, &o);
}

TEST_F(fb, set_errors)
{
	struct dfg_feedback_set a = { .what = DFG_FB_GRAPH };
	__u64 v = 5;
	int ro;

	EXPECT_EQ(-EINVAL, fb_set(self->g, 0, 0, 0, 0, 0, 0));
	EXPECT_EQ(-EINVAL, fb_set(self->g, DFG_FB_PLAN + 1, 0, 0, 0, 0, 0));
	a.reserved = 1;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_FEEDBACK_SET, &a));
	a.reserved = 0;
	/* Marks: a channel of this graph, low < high <= capacity. */
	EXPECT_EQ(-ENOENT, fb_set(self->g, DFG_FB_CHAN_MARKS, 1, 4, 1, 0, 0));
	EXPECT_EQ(-ENOENT, fb_set(self->g, DFG_FB_CHAN_MARKS, 99, 4, 1, 0, 0));
	EXPECT_EQ(-EINVAL, fb_set(self->g, DFG_FB_CHAN_MARKS, CH_A, 4, 4, 0,
				  0));
	EXPECT_EQ(-EINVAL, fb_set(self->g, DFG_FB_CHAN_MARKS, CH_A, 0, 1, 0,
				  0));
	EXPECT_EQ(-EINVAL, fb_set(self->g, DFG_FB_CHAN_MARKS, CH_A, DEPTH + 1,
				  1, 0, 0));
	EXPECT_EQ(-EINVAL, fb_set(self->g, DFG_FB_CHAN_MARKS, CH_A, 4, 1, 10,
				  0));
	EXPECT_EQ(-EINVAL, fb_set(self->g, DFG_FB_CHAN_MARKS, CH_A, 4, 1, 0,
				  100));
	EXPECT_EQ(0, fb_set(self->g, DFG_FB_CHAN_MARKS, CH_A, DEPTH, 0, 0, 0));
	EXPECT_EQ(0, fb_set(self->g, DFG_FB_CHAN_MARKS, CH_A, 0, 0, 0, 0));
	/* Graph: no channel fields, bounds. */
	EXPECT_EQ(-EINVAL, fb_set(self->g, DFG_FB_GRAPH, CH_A, 0, 0, 0, 0));
	EXPECT_EQ(-EINVAL, fb_set(self->g, DFG_FB_GRAPH, 0, 1, 0, 0, 0));
	EXPECT_EQ(-EINVAL, fb_set(self->g, DFG_FB_GRAPH, 0, 0, 0,
				  DFG_FB_STALL_MS_MAX + 1, 0));
	EXPECT_EQ(-EINVAL, fb_set(self->g, DFG_FB_GRAPH, 0, 0, 0, 0,
				  DFG_FB_PERIOD_MS_MIN - 1));
	EXPECT_EQ(-EINVAL, fb_set(self->g, DFG_FB_GRAPH, 0, 0, 0, 0,
				  DFG_FB_PERIOD_MS_MAX + 1));
	EXPECT_EQ(0, fb_set(self->g, DFG_FB_GRAPH, 0, 0, 0, 500, 0));
	/* Wrong descriptor kinds, read-only graph descriptor. */
	EXPECT_EQ(-EBADFD, fb_set(self->dev, DFG_FB_GRAPH, 0, 0, 0, 0, 0));
	EXPECT_EQ(-EBADFD, fb_set(self->sc, DFG_FB_GRAPH, 0, 0, 0, 0, 0));
	ro = graph_ro(self);
	ASSERT_LE(0, ro);
	EXPECT_EQ(-EACCES, fb_set(ro, DFG_FB_GRAPH, 0, 0, 0, 0, 0));
	close(ro);
	/* dfg_events_value(): no event yet, and strings are no numbers. */
	EXPECT_EQ(-ENOENT, dfg_events_value(self->evs, DFG_NL_A_GRAPH, &v));
	EXPECT_EQ(-EINVAL, dfg_events_value(self->evs, DFG_NL_A_NAME, &v));
	EXPECT_EQ(-EINVAL, dfg_events_value(self->evs, 0, &v));
	EXPECT_EQ(-EINVAL, dfg_events_value(self->evs, DFG_NL_A_MAX + 1, &v));
	EXPECT_EQ(-EINVAL, dfg_events_value(self->evs, DFG_NL_A_FILL, NULL));
	EXPECT_EQ(5, v);
}

/* Fill past the high mark, hover there, drain below the low one. */
TEST_F(fb, fill_marks_hysteresis)
{
	__u64 high0 = fb_counter("chan_fill_high");
	__u64 low0 = fb_counter("chan_fill_low");
	struct chan_ep prod, cons;
	struct dfg_desc d;
	struct fb_ev e;
	int i;

	ASSERT_EQ(0, chan_ep_open(self->g, CH_A, DFG_CHAN_CONSUMER, MAPSZ_A,
				  &cons));
	ASSERT_EQ(0, chan_ep_open(self->g, CH_A, DFG_CHAN_PRODUCER, MAPSZ_A,
				  &prod));
	ASSERT_EQ(0, fb_set(self->g, DFG_FB_CHAN_MARKS, CH_A, 8, 2, 0, 0));
	for (i = 0; i < 7; i++)
		ASSERT_EQ(0, chan_push(&prod, 0, 8, i));
	EXPECT_EQ(0, fb_count(self->evs, DFG_EV_CHAN_FILL_HIGH, self->gid,
			      300));
	ASSERT_EQ(0, chan_push(&prod, 0, 8, 7));
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_CHAN_FILL_HIGH, self->gid, 3000,
			    &e));
	EXPECT_EQ(CH_A, e.ev.object);
	EXPECT_EQ(8, e.v[DFG_NL_A_FILL]);
	EXPECT_EQ(8, e.v[DFG_NL_A_MARK]);
	EXPECT_EQ(DEPTH, e.v[DFG_NL_A_CAPACITY]);

	/* Hovering across the high mark for a second: nothing more. */
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, chan_pop(&cons, &d));
		usleep(10000);
		ASSERT_EQ(0, chan_push(&prod, 0, 8, i));
		usleep(10000);
	}
	EXPECT_EQ(0, fb_count(self->evs, DFG_EV_CHAN_FILL_HIGH, self->gid,
			      200));
	for (i = 0; i < 6; i++)
		ASSERT_EQ(0, chan_pop(&cons, &d));
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_CHAN_FILL_LOW, self->gid, 3000,
			    &e));
	EXPECT_EQ(2, e.v[DFG_NL_A_FILL]);
	EXPECT_EQ(2, e.v[DFG_NL_A_MARK]);
	/* And hovering at the low mark: nothing either. */
	for (i = 0; i < 30; i++) {
		ASSERT_EQ(0, chan_push(&prod, 0, 8, i));
		usleep(10000);
		ASSERT_EQ(0, chan_pop(&cons, &d));
		usleep(10000);
	}
	EXPECT_EQ(0, fb_count(self->evs, DFG_EV_CHAN_FILL_LOW, self->gid,
			      200));
	EXPECT_EQ(high0 + 1, fb_counter("chan_fill_high"));
	EXPECT_EQ(low0 + 1, fb_counter("chan_fill_low"));
	chan_ep_close(&prod);
	chan_ep_close(&cons);
}

/* A burst of crossings inside fb_gap_ms: held back, then the last state. */
TEST_F(fb, fill_rate_limited)
{
	__u64 deferred0 = fb_counter("deferred");
	struct chan_ep prod, cons;
	struct dfg_desc d;
	struct fb_ev e;
	int i;

	ASSERT_EQ(0, chan_ep_open(self->g, CH_A, DFG_CHAN_CONSUMER, MAPSZ_A,
				  &cons));
	ASSERT_EQ(0, chan_ep_open(self->g, CH_A, DFG_CHAN_PRODUCER, MAPSZ_A,
				  &prod));
	ASSERT_EQ(0, dfg_param_rw("fb_gap_ms", "1000", 0, true));
	ASSERT_EQ(0, fb_set(self->g, DFG_FB_CHAN_MARKS, CH_A, 4, 1, 0, 0));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, chan_push(&prod, 0, 8, i));
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_CHAN_FILL_HIGH, self->gid, 3000,
			    &e));
	/* Down and up again inside the gap: at most the LOW, late. */
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, chan_pop(&cons, &d));
	EXPECT_EQ(0, fb_count(self->evs, DFG_EV_CHAN_FILL_LOW, self->gid,
			      300));
	EXPECT_LT(deferred0, fb_counter("deferred"));
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_CHAN_FILL_LOW, self->gid, 3000,
			    &e));
	EXPECT_EQ(0, e.v[DFG_NL_A_FILL]);
	EXPECT_EQ(0, dfg_param_rw("fb_gap_ms", "100", 0, true));
	chan_ep_close(&prod);
	chan_ep_close(&cons);
}

/* A set waiting on its input, then one on a full output, past T. */
TEST_F(fb, starved_and_backpressured)
{
	struct dfg_sched_next n = { .flags = DFG_NEXT_F_NOWAIT };
	struct dfg_sched_yield y = { .reason = DFG_YIELD_OUTPUT_FULL };
	__u32 in[1] = { CH_A };
	struct dfg_set_output out;
	struct chan_ep prod;
	long long t0;
	struct fb_ev e;
	int id, src, i;

	ASSERT_EQ(0, fb_set(self->g, DFG_FB_GRAPH, 0, 0, 0, 200, 0));
	t0 = dfg_evmon_now_ms();
	id = reg(self->sc, 0, 1, in, NULL);
	ASSERT_LT(0, id);
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_SET_STARVED, self->gid, 5000,
			    &e));
	EXPECT_LE(200, dfg_evmon_now_ms() - t0);
	EXPECT_EQ(id, e.ev.object);
	EXPECT_EQ(getpid(), e.ev.pid);
	EXPECT_LE(200, e.v[DFG_NL_A_WAIT_MS]);
	/* Once per wait. */
	EXPECT_EQ(0, fb_count(self->evs, DFG_EV_SET_STARVED, self->gid, 600));

	ASSERT_EQ(0, chan_ep_open(self->g, CH_B, DFG_CHAN_PRODUCER, MAPSZ_B,
				  &prod));
	out = (struct dfg_set_output){ CH_B, prod.slot };
	src = reg(self->sc, DFG_SET_F_ROOT, 0, NULL, &out);
	ASSERT_LT(0, src);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, chan_push(&prod, 0, 8, i));
	ASSERT_EQ(src, sys_dfg_ioctl(self->sc, DFG_IOC_SCHED_NEXT, &n));
	y.id = src;
	ASSERT_EQ(0, sys_dfg_ioctl(self->sc, DFG_IOC_SCHED_YIELD, &y));
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_SET_BACKPRESSURED, self->gid,
			    5000, &e));
	EXPECT_EQ(src, e.ev.object);
	EXPECT_LE(200, e.v[DFG_NL_A_WAIT_MS]);
	chan_ep_close(&prod);
}

TEST_F(fb, stall_reports_off)
{
	char old[32];
	__u32 in[1] = { CH_A };

	ASSERT_EQ(0, dfg_param_rw("fb_stall_ms", old, sizeof(old), false));
	ASSERT_EQ(0, dfg_param_rw("fb_stall_ms", "0", 0, true));
	ASSERT_LT(0, reg(self->sc, 0, 1, in, NULL));
	EXPECT_EQ(0, fb_count(self->evs, DFG_EV_SET_STARVED, self->gid, 500));
	/* The graph's own T wins over the module's 0. */
	ASSERT_EQ(0, fb_set(self->g, DFG_FB_GRAPH, 0, 0, 0, 50, 0));
	EXPECT_EQ(1, fb_count(self->evs, DFG_EV_SET_STARVED, self->gid, 800));
	EXPECT_EQ(0, dfg_param_rw("fb_stall_ms", old, 0, true));
}

/* CPU 1 offline and back (the VM has 2 vCPUs). */
TEST_F(fb, cpu_hotplug)
{
	__u64 off0 = fb_counter("cpu_offline"), on0 = fb_counter("cpu_online");
	struct fb_ev e;
	int fd;

	fd = open(CPU1_ONLINE, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		SKIP(return, "no writable %s", CPU1_ONLINE);
	ASSERT_EQ(1, write(fd, "0", 1));
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_CPU_OFFLINE, 0, 5000, &e));
	EXPECT_EQ(1, e.v[DFG_NL_A_CPU]);
	ASSERT_EQ(1, write(fd, "1", 1));
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_CPU_ONLINE, 0, 5000, &e));
	EXPECT_EQ(1, e.v[DFG_NL_A_CPU]);
	close(fd);
	EXPECT_EQ(off0 + 1, fb_counter("cpu_offline"));
	EXPECT_EQ(on0 + 1, fb_counter("cpu_online"));
}

/* A worker process killed with SIGKILL while its graph lives. */
TEST_F(fb, worker_death)
{
	__u32 in[1] = { CH_A };
	int sync[2], id = 0, status;
	struct fb_ev e;
	pid_t pid;

	ASSERT_EQ(0, pipe(sync));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int csc = sched_attach(self->g);
		int cid = csc < 0 ? csc : reg(csc, 0, 1, in, NULL);

		if (write(sync[1], &cid, sizeof(cid)) != sizeof(cid))
			_exit(3);
		pause();
		_exit(4);
	}
	ASSERT_EQ(sizeof(id), read(sync[0], &id, sizeof(id)));
	ASSERT_LT(0, id);
	kill(pid, SIGKILL);
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_WORKER_DEATH, self->gid, 5000,
			    &e));
	EXPECT_EQ(id, e.ev.object);
	EXPECT_EQ(pid, e.ev.pid);
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_SET_FAILED, self->gid, 5000,
			    &e));
	EXPECT_EQ(id, e.ev.object);
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, 5000));
	close(sync[0]);
	close(sync[1]);
}

static void *take_and_exit(void *arg)
{
	struct dfg_sched_next n = { .flags = DFG_NEXT_F_NOWAIT };

	*(int *)arg = sys_dfg_ioctl(*(int *)arg, DFG_IOC_SCHED_NEXT, &n);
	return NULL;
}

/* A worker thread that exits holding a set: the sampler finds it. */
TEST_F(fb, worker_thread_exits_holding_a_set)
{
	struct fb_ev e;
	pthread_t t;
	int id, arg = self->sc;

	id = reg(self->sc, DFG_SET_F_ROOT, 0, NULL, NULL);
	ASSERT_LT(0, id);
	ASSERT_EQ(0, pthread_create(&t, NULL, take_and_exit, &arg));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(id, arg);
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_WORKER_DEATH, self->gid, 5000,
			    &e));
	EXPECT_EQ(id, e.ev.object);
	EXPECT_EQ(getpid(), e.ev.pid);
}

/* A set unregistered in order is no death. */
TEST_F(fb, orderly_close_no_death)
{
	__u32 in[1] = { CH_A };

	ASSERT_LT(0, reg(self->sc, 0, 1, in, NULL));
	close(self->sc);
	self->sc = -1;
	EXPECT_EQ(0, fb_count(self->evs, DFG_EV_WORKER_DEATH, self->gid,
			      300));
}

/* "MemTotal:" style line of /proc/meminfo, KiB; 0 if absent. */
static __u64 meminfo(const char *key)
{
	char line[128];
	__u64 v = 0;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			v = strtoull(line + strlen(key), NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* MemAvailable pushed below its mark by memory the test touches. */
TEST_F(fb, mem_low_and_ok)
{
	char low_old[24], ok_old[24], val[24];
	__u64 total = meminfo("MemTotal:"), avail = meminfo("MemAvailable:");
	__u64 pct, take;
	struct fb_ev e;
	void *p;

	ASSERT_LT(0, total);
	pct = avail * 100 / total;
	if (pct < 20)
		SKIP(return, "only %llu%% of RAM available",
		     (unsigned long long)pct);
	/* The mark 3 % of RAM below what is available now. */
	pct -= 3;
	take = avail - total * pct / 100 + total / 25;
	ASSERT_EQ(0, dfg_param_rw("fb_mem_low_pct", low_old, sizeof(low_old), false));
	ASSERT_EQ(0, dfg_param_rw("fb_mem_ok_pct", ok_old, sizeof(ok_old), false));
	snprintf(val, sizeof(val), "%llu", (unsigned long long)pct + 1);
	ASSERT_EQ(0, dfg_param_rw("fb_mem_ok_pct", val, 0, true));
	snprintf(val, sizeof(val), "%llu", (unsigned long long)pct);
	ASSERT_EQ(0, dfg_param_rw("fb_mem_low_pct", val, 0, true));
	EXPECT_EQ(0, fb_count(self->evs, DFG_EV_MEM_LOW, 0, 300));

	p = mmap(NULL, take << 10, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 1, take << 10);
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_MEM_LOW, 0, 5000, &e));
	EXPECT_GT(total * pct / 100, e.v[DFG_NL_A_MEM_AVAIL]);
	EXPECT_EQ(total, e.v[DFG_NL_A_MEM_TOTAL]);
	munmap(p, take << 10);
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_MEM_OK, 0, 5000, &e));
	EXPECT_LT(total * (pct + 1) / 100, e.v[DFG_NL_A_MEM_AVAIL]);
	EXPECT_EQ(0, dfg_param_rw("fb_mem_low_pct", low_old, 0, true));
	EXPECT_EQ(0, dfg_param_rw("fb_mem_ok_pct", ok_old, 0, true));
}

/* The periodic summary: off by default, then every period. */
TEST_F(fb, periodic_summary)
{
	__u32 in[1] = { CH_A };
	struct chan_ep prod;
	struct fb_ev e;
	bool chan_a = false;
	int id, i, samples = 0;

	id = reg(self->sc, 0, 1, in, NULL);
	ASSERT_LT(0, id);
	EXPECT_EQ(0, fb_count(self->evs, DFG_EV_GRAPH_SAMPLE, self->gid,
			      300));
	ASSERT_EQ(0, chan_ep_open(self->g, CH_A, DFG_CHAN_PRODUCER, MAPSZ_A,
				  &prod));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, chan_push(&prod, 0, 8, i));
	ASSERT_EQ(0, fb_set(self->g, DFG_FB_GRAPH, 0, 0, 0, 0, 50));
	/* One batch: a sample per channel and set, then GRAPH_SAMPLE. */
	for (;;) {
		ASSERT_EQ(0, dfg_events_next(self->evs, &e.ev, 3000));
		if (e.ev.graph != (__u32)self->gid)
			continue;
		fb_take_values(self->evs, &e);
		if (e.ev.type == DFG_EV_CHAN_SAMPLE) {
			samples++;
			if (e.ev.object == CH_A) {
				chan_a = true;
				EXPECT_EQ(3, e.v[DFG_NL_A_FILL]);
				EXPECT_EQ(3, e.v[DFG_NL_A_COUNT]);
				EXPECT_EQ(DEPTH, e.v[DFG_NL_A_CAPACITY]);
			}
		} else if (e.ev.type == DFG_EV_SET_SAMPLE) {
			samples++;
			EXPECT_EQ(id, e.ev.object);
			EXPECT_EQ(getpid(), e.ev.pid);
		} else if (e.ev.type == DFG_EV_GRAPH_SAMPLE) {
			EXPECT_EQ(samples, e.v[DFG_NL_A_COUNT]);
			EXPECT_EQ(50, e.v[DFG_NL_A_PERIOD_MS]);
			break;
		}
	}
	EXPECT_TRUE(chan_a);
	EXPECT_EQ(3, samples);
	/* Every period while set (TCG: room for slow polls); then none. */
	EXPECT_LE(3, fb_count(self->evs, DFG_EV_GRAPH_SAMPLE, self->gid,
			      1000));
	ASSERT_EQ(0, fb_set(self->g, DFG_FB_GRAPH, 0, 0, 0, 0, 0));
	EXPECT_EQ(0, fb_count(self->evs, DFG_EV_GRAPH_SAMPLE, self->gid,
			      300));
	chan_ep_close(&prod);
}

/* graphs/<gid>/plan_gen: its line, "" when empty; NULL if unreadable. */
static char *plan_gen(int gid, char *buf, size_t len)
{
	char name[64];

	snprintf(name, sizeof(name), "graphs/%d/plan_gen", gid);
	return dfg_sysfs_read(name, buf, len) ? NULL : buf;
}

/*
 * What `dfgctl top --json --count 1` (of this build: bin/ beside
 * selftests/) says of graph @gid's sets: the number of sets of @gid
 * showing "plan_gen":@gen, or -1 when dfgctl did not run.
 */
static int top_sets_at(int gid, unsigned int gen)
{
	char self_path[PATH_MAX], cmd[PATH_MAX + 64], want[64], *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	int found = 0;
	FILE *p;

	n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	if (n <= 0)
		return -1;
	self_path[n] = '\0';
	/* .../build/selftests/feedback/feedback_test -> .../build */
	for (int i = 0; i < 3; i++)
		*strrchr(self_path, '/') = '\0';
	snprintf(cmd, sizeof(cmd), "%s/bin/dfgctl top --json --count 1",
		 self_path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	snprintf(want, sizeof(want), "{\"graph\":%d,\"plan_gen\":%u,", gid,
		 gen);
	while (getline(&buf, &cap, p) > 0)
		for (char *s = buf; (s = strstr(s, want)); s++)
			found++;
	free(buf);
	return pclose(p) ? -1 : found;
}

static int fb_plan(int g, __u64 generation)
{
	struct dfg_feedback_set a = { .what = DFG_FB_PLAN,
				      .generation = generation };

	return sys_dfg_ioctl(g, DFG_IOC_FEEDBACK_SET, &a);
}

/*
 * The runner's plan generation: empty until told, then in sysfs, each
 * telling a PLAN_CHANGE with the caller's pid (also the same one again,
 * also a lower one: a new run); errors for fields of other kinds.
 */
TEST_F(fb, plan_generation)
{
	struct dfg_feedback_set a = { .what = DFG_FB_PLAN, .generation = 1 };
	__u64 n0 = fb_counter("plan_change");
	__u32 in[1] = { CH_A };
	struct dfg_info info;
	struct fb_ev e;
	char buf[32];
	int ro;

	ASSERT_EQ(0, dfg_get_info(self->dev, &info));
	if (!(info.features & DFG_F_PLAN_GEN))
		SKIP(return, "module without DFG_F_PLAN_GEN");
	ASSERT_NE(NULL, plan_gen(self->gid, buf, sizeof(buf)));
	EXPECT_STREQ("", buf);

	ASSERT_EQ(0, fb_plan(self->g, 0));
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_PLAN_CHANGE, self->gid, 3000,
			    &e));
	EXPECT_EQ(getpid(), e.ev.pid);
	EXPECT_EQ(0, e.v[DFG_NL_A_COUNT]);
	EXPECT_STREQ("0", plan_gen(self->gid, buf, sizeof(buf)));
	ASSERT_EQ(0, fb_plan(self->g, 7));
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_PLAN_CHANGE, self->gid, 3000,
			    &e));
	EXPECT_EQ(7, e.v[DFG_NL_A_COUNT]);
	EXPECT_STREQ("7", plan_gen(self->gid, buf, sizeof(buf)));
	ASSERT_EQ(0, fb_plan(self->g, 7));
	ASSERT_EQ(0, fb_plan(self->g, 2));
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_PLAN_CHANGE, self->gid, 3000,
			    &e));
	EXPECT_EQ(7, e.v[DFG_NL_A_COUNT]);
	ASSERT_TRUE(fb_wait(self->evs, DFG_EV_PLAN_CHANGE, self->gid, 3000,
			    &e));
	EXPECT_EQ(2, e.v[DFG_NL_A_COUNT]);
	EXPECT_STREQ("2", plan_gen(self->gid, buf, sizeof(buf)));
	EXPECT_EQ(n0 + 4, fb_counter("plan_change"));
	/* dfgctl top shows it with each set of the graph */
	ASSERT_LT(0, reg(self->sc, 0, 1, in, NULL));
	EXPECT_EQ(1, top_sets_at(self->gid, 2));

	/* fields of the other kinds, U64_MAX ("none"), reserved */
	a.object = CH_A;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_FEEDBACK_SET, &a));
	a.object = 0;
	a.high = 1;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_FEEDBACK_SET, &a));
	a.high = 0;
	a.period_ms = 100;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_FEEDBACK_SET, &a));
	a.period_ms = 0;
	a.stall_ms = 1;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_FEEDBACK_SET, &a));
	a.stall_ms = 0;
	a.reserved = 1;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_FEEDBACK_SET, &a));
	a.reserved = 0;
	EXPECT_EQ(-EINVAL, fb_plan(self->g, ~0ULL));
	/* a generation in the other kinds */
	a.what = DFG_FB_GRAPH;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_FEEDBACK_SET, &a));
	a.what = DFG_FB_CHAN_MARKS;
	a.object = CH_A;
	a.high = 2;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_FEEDBACK_SET, &a));
	/* a read-only descriptor tells nothing; the refused changed nothing */
	ro = graph_ro(self);
	ASSERT_LE(0, ro);
	EXPECT_EQ(-EACCES, fb_plan(ro, 9));
	close(ro);
	EXPECT_STREQ("2", plan_gen(self->gid, buf, sizeof(buf)));
	EXPECT_EQ(0, fb_count(self->evs, DFG_EV_PLAN_CHANGE, self->gid, 300));
	EXPECT_EQ(n0 + 4, fb_counter("plan_change"));
}

/*
 * A channel crossing its high mark reaches a rule through the rule
 * interpreter's own subscription, with the module's fill, capacity and
 * mark as the event's slots. The interpreter evaluates over a flow graph
 * of its own (src -hash-> part -> sink); the event is the real one.
 */
static const char rl_graph[] =
	"digraph g {\n"
	"  src [type=gen];\n"
	"  part [type=count, degree=2];\n"
	"  sink [type=out];\n"
	"  src -> part [flow=hash, key=k];\n"
	"  part -> sink [flow=gather];\n"
	"}\n";

TEST_F(fb, fill_mark_reaches_a_rule)
{
	struct dfg_run_view_comp comps[3] = { 0 };
	struct dfg_rules_error err = { 0 };
	const struct dfg_plan_edit *edits;
	struct dfg_run_view view;
	struct dfg_flow *fg = NULL;
	struct dfg_plan *plan = NULL;
	struct dfg_rules *r = NULL;
	struct chan_ep prod;
	long long deadline;
	unsigned int n;
	char text[512];
	const char *v;
	int i;

	ASSERT_EQ(0, dfg_flow_parse(rl_graph, strlen(rl_graph), "g.dot", NULL,
				    &fg, NULL));
	ASSERT_EQ(0, dfg_plan_build(fg, 0, &plan));
	view = (struct dfg_run_view){ .fg = fg, .plan = plan, .comps = comps,
				      .now_ns = 1000000000ULL };
	ASSERT_EQ(0, dfg_rules_new(&r, 0));
	snprintf(text, sizeof(text),
		 "rule high when event ?e name == chan_fill_high, graph == %d,"
		 " object == %d, fill >= ?e.mark\n"
		 "do set $fill = ?e.fill; set $capacity = ?e.capacity;\n"
		 "   set $mark = ?e.mark end\n"
		 "rule low when event name == chan_fill_low, graph == %d\n"
		 "do set $low = 1 end\n", self->gid, CH_A, self->gid);
	ASSERT_EQ(0, dfg_rules_load_string(r, text, strlen(text), "fb.rules",
					   &err))
		TH_LOG("%s:%u:%u: %s", err.file, err.line, err.col, err.msg);
	ASSERT_EQ(0, dfg_rules_subscribe(r, 0));

	ASSERT_EQ(0, chan_ep_open(self->g, CH_A, DFG_CHAN_PRODUCER, MAPSZ_A,
				  &prod));
	ASSERT_EQ(0, fb_set(self->g, DFG_FB_CHAN_MARKS, CH_A, 10, 3, 0, 0));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, chan_push(&prod, 0, 8, i));
	/* evaluations until the event has come through (TCG: slow) */
	deadline = dfg_evmon_now_ms() + 5000;
	do {
		usleep(20000);
		view.now_ns += 20000000ULL;
		ASSERT_EQ(0, dfg_rules_eval(r, &view, &edits, &n));
		EXPECT_EQ(0, n);
		v = dfg_rules_var(r, "fill");
	} while (!v && dfg_evmon_now_ms() < deadline);
	ASSERT_NE(NULL, v);
	/* the event's fill is the one at the crossing: the mark itself */
	EXPECT_STREQ("10", v);
	EXPECT_STREQ("16", dfg_rules_var(r, "capacity"));
	EXPECT_STREQ("10", dfg_rules_var(r, "mark"));
	EXPECT_EQ(NULL, dfg_rules_var(r, "low"));
	chan_ep_close(&prod);
	dfg_rules_free(r);
	dfg_plan_free(plan);
	dfg_flow_free(fg);
}

TEST_HARNESS_MAIN
