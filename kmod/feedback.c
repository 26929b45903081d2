// SPDX-License-Identifier: GPL-2.0
/*
 * feedback.c - what the module tells a rule interpreter (patent 001): a
 * channel's fill crossing its marks, a set starved or backpressured for
 * longer than T, CPU hotplug, memory running low, a worker's death, and a
 * periodic summary per graph; DFG_IOC_FEEDBACK_SET; the counters in
 * /sys/kernel/dfg/feedback/. Events go out through netlink.c.
 *
 * Objects, locks and references
 *   dfg_fb_objs	the registry: the struct dfg_fb_obj of every channel
 *			and every set while it is in its graph (a channel
 *			from its creation to its graph's death, a set from
 *			entering its graph to leaving it). No reference: the
 *			graph holds the object while it is listed, and the
 *			object holds the graph's memory.
 *   dfg_fb_mutex	the registry, every dfg_fb_obj's fields, the graphs'
 *			fb_ fields and the memory state. A mutex: the poller
 *			sends events (netlink allocates) under it. Lock
 *			order: see dfg.h.
 *   dfg_fb_work	the poller, on dfg_wq every dfg.fb_poll_ms while the
 *			registry is not empty; none is left at exit, when
 *			no graph lives, and the exit waits for a last one.
 *   dfg_fb_cpuhp	a dynamic CPU hotplug state whose callbacks report;
 *			removed at exit.
 *
 * Why a poller: producers and consumers move ring indices in shared
 * memory without entering the kernel, so only a look at the rings sees a
 * fill level, and a set waiting for a channel has no command in flight
 * that could time out. One pass costs O(channels + sets) reads.
 *
 * Memory: Linux 6.1 gives a module no PSI trigger (psi_trigger_create()
 * is not exported, and the system's psi_group is private), and a
 * shrinker is called inside reclaim, where a netlink message cannot be
 * allocated. So the poller compares si_mem_available(), the kernel's
 * MemAvailable, with two marks in percent of RAM, with hysteresis.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpuhotplug.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "sched.h"
#include "trace.h"

static unsigned int dfg_fb_poll_ms = 10;
module_param_named(fb_poll_ms, dfg_fb_poll_ms, uint, 0644);
MODULE_PARM_DESC(fb_poll_ms,
		 "period of the feedback poller: fill, stalls, memory (ms, 1..1000)");

static unsigned int dfg_fb_gap_ms = 100;
module_param_named(fb_gap_ms, dfg_fb_gap_ms, uint, 0644);
MODULE_PARM_DESC(fb_gap_ms, "least time between two fill reports of a channel (ms)");

static unsigned int dfg_fb_stall_ms = 1000;
module_param_named(fb_stall_ms, dfg_fb_stall_ms, uint, 0644);
MODULE_PARM_DESC(fb_stall_ms,
		 "default T: a set waiting longer is reported (ms, 0: off)");

static unsigned int dfg_fb_mem_low_pct = 5;
module_param_named(fb_mem_low_pct, dfg_fb_mem_low_pct, uint, 0644);
MODULE_PARM_DESC(fb_mem_low_pct,
		 "MEM_LOW below this MemAvailable, percent of RAM (0: off)");

static unsigned int dfg_fb_mem_ok_pct = 10;
module_param_named(fb_mem_ok_pct, dfg_fb_mem_ok_pct, uint, 0644);
MODULE_PARM_DESC(fb_mem_ok_pct,
		 "MEM_OK above this MemAvailable, percent of RAM (> fb_mem_low_pct)");

static DEFINE_MUTEX(dfg_fb_mutex);
static LIST_HEAD(dfg_fb_objs);		/* under dfg_fb_mutex */
static bool dfg_fb_mem_low;		/* under dfg_fb_mutex */
static int dfg_fb_cpuhp;
static void dfg_fb_poll(struct work_struct *work);
static DECLARE_DELAYED_WORK(dfg_fb_work, dfg_fb_poll);

/* Summaries one pass starts at most; the others are due at the next. */
#define DFG_FB_DUE_MAX		8

/* ------------------------------------------------------------------------
 * Counters: /sys/kernel/dfg/feedback/
 * ------------------------------------------------------------------------
 */

#define DFG_FB_EV_FIRST		DFG_EV_CHAN_FILL_HIGH
#define DFG_FB_DEFERRED		(__DFG_EV_MAX - DFG_FB_EV_FIRST)

static atomic64_t dfg_fb_counts[DFG_FB_DEFERRED + 1];

/**
 * struct dfg_fb_attr - one file in feedback/
 * @attr:	the sysfs attribute
 * @idx:	index in dfg_fb_counts
 */
struct dfg_fb_attr {
	struct kobj_attribute	attr;
	unsigned int		idx;
};

static ssize_t dfg_fb_count_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	struct dfg_fb_attr *fa = container_of(attr, struct dfg_fb_attr, attr);

	return sysfs_emit(buf, "%lld\n",
			  (long long)atomic64_read(&dfg_fb_counts[fa->idx]));
}

#define DFG_FB_ATTR(_name, _idx)					\
static struct dfg_fb_attr dfg_fb_attr_##_name = {			\
	.attr	= __ATTR(_name, 0444, dfg_fb_count_show, NULL),		\
	.idx	= (_idx),						\
}

#define DFG_FB_EV_ATTR(_name, _ev) DFG_FB_ATTR(_name, (_ev) - DFG_FB_EV_FIRST)

DFG_FB_EV_ATTR(chan_fill_high, DFG_EV_CHAN_FILL_HIGH);
DFG_FB_EV_ATTR(chan_fill_low, DFG_EV_CHAN_FILL_LOW);
DFG_FB_EV_ATTR(set_starved, DFG_EV_SET_STARVED);
DFG_FB_EV_ATTR(set_backpressured, DFG_EV_SET_BACKPRESSURED);
DFG_FB_EV_ATTR(cpu_online, DFG_EV_CPU_ONLINE);
DFG_FB_EV_ATTR(cpu_offline, DFG_EV_CPU_OFFLINE);
DFG_FB_EV_ATTR(mem_low, DFG_EV_MEM_LOW);
DFG_FB_EV_ATTR(mem_ok, DFG_EV_MEM_OK);
DFG_FB_EV_ATTR(worker_death, DFG_EV_WORKER_DEATH);
DFG_FB_EV_ATTR(chan_sample, DFG_EV_CHAN_SAMPLE);
DFG_FB_EV_ATTR(set_sample, DFG_EV_SET_SAMPLE);
DFG_FB_EV_ATTR(graph_sample, DFG_EV_GRAPH_SAMPLE);
DFG_FB_EV_ATTR(plan_change, DFG_EV_PLAN_CHANGE);
DFG_FB_ATTR(deferred, DFG_FB_DEFERRED);

static struct attribute *dfg_fb_attrs[] = {
	&dfg_fb_attr_chan_fill_high.attr.attr,
	&dfg_fb_attr_chan_fill_low.attr.attr,
	&dfg_fb_attr_set_starved.attr.attr,
	&dfg_fb_attr_set_backpressured.attr.attr,
	&dfg_fb_attr_cpu_online.attr.attr,
	&dfg_fb_attr_cpu_offline.attr.attr,
	&dfg_fb_attr_mem_low.attr.attr,
	&dfg_fb_attr_mem_ok.attr.attr,
	&dfg_fb_attr_worker_death.attr.attr,
	&dfg_fb_attr_chan_sample.attr.attr,
	&dfg_fb_attr_set_sample.attr.attr,
	&dfg_fb_attr_graph_sample.attr.attr,
	&dfg_fb_attr_plan_change.attr.attr,
	&dfg_fb_attr_deferred.attr.attr,
	NULL,
};

/* One file per feedback event, and deferred; sysfs.c adds the group. */
const struct attribute_group dfg_fb_group = {
	.name	= "feedback",
	.attrs	= dfg_fb_attrs,
};

/* Count @ev->event and send it. Process context. */
static void dfg_fb_emit(const struct dfg_nl_ev *ev)
{
	atomic64_inc(&dfg_fb_counts[ev->event - DFG_FB_EV_FIRST]);
	dfg_nl_emit(ev);
}

/* ------------------------------------------------------------------------
 * The registry
 * ------------------------------------------------------------------------
 */

static void dfg_fb_kick(void)
{
	unsigned int ms = clamp(READ_ONCE(dfg_fb_poll_ms), 1U, 1000U);

	queue_delayed_work(dfg_wq, &dfg_fb_work, msecs_to_jiffies(ms));
}

/**
 * dfg_fb_add() - watch a channel or a set
 * @fb: its dfg_fb_obj (dfg_fb_obj_init()), not listed; the object is
 *	published in its graph
 *
 * Context: process context; dfg_sched_mutex may be held (sets).
 */
void dfg_fb_add(struct dfg_fb_obj *fb)
{
	mutex_lock(&dfg_fb_mutex);
	if (list_empty(&dfg_fb_objs))
		dfg_fb_kick();
	list_add_tail(&fb->node, &dfg_fb_objs);
	mutex_unlock(&dfg_fb_mutex);
}

/**
 * dfg_fb_del() - stop watching; before the graph drops the object
 * @fb: a listed dfg_fb_obj
 *
 * Context: process context; dfg_graphs_lock or dfg_sched_mutex may be
 * held.
 */
void dfg_fb_del(struct dfg_fb_obj *fb)
{
	mutex_lock(&dfg_fb_mutex);
	list_del_init(&fb->node);
	mutex_unlock(&dfg_fb_mutex);
}

/* ------------------------------------------------------------------------
 * The poller
 * ------------------------------------------------------------------------
 */

/* FILL_HIGH or FILL_LOW if @fb's channel crossed a mark, with hysteresis. */
static void dfg_fb_chan_poll(struct dfg_fb_obj *fb, u64 now)
{
	u64 gap = (u64)READ_ONCE(dfg_fb_gap_ms) * NSEC_PER_MSEC;
	struct dfg_nl_ev ev = {
		.graph = fb->obj->graph->id, .object = fb->obj->id,
		.rank = -1, .attrs = BIT(DFG_NL_A_FILL) |
		BIT(DFG_NL_A_CAPACITY) | BIT(DFG_NL_A_MARK),
	};

	lockdep_assert_held(&dfg_fb_mutex);
	if (!fb->high)
		return;
	dfg_chan_fill(fb->obj, &ev.fill, &ev.capacity, NULL);
	if (!fb->above && ev.fill >= fb->high) {
		ev.event = DFG_EV_CHAN_FILL_HIGH;
		ev.mark = fb->high;
	} else if (fb->above && ev.fill <= fb->low) {
		ev.event = DFG_EV_CHAN_FILL_LOW;
		ev.mark = fb->low;
	} else {
		fb->held = false;
		return;
	}
	/* Too soon: the same look at the end of the gap decides. */
	if (fb->last_ns && now - fb->last_ns < gap) {
		if (!fb->held)
			atomic64_inc(&dfg_fb_counts[DFG_FB_DEFERRED]);
		fb->held = true;
		return;
	}
	fb->held = false;
	fb->above = !fb->above;
	fb->last_ns = now;
	trace_dfg_fb_fill(ev.graph, ev.object, ev.fill, ev.mark, fb->above);
	dfg_fb_emit(&ev);
}

/* STARVED or BACKPRESSURED, once per wait, if @fb's set waits past T. */
static void dfg_fb_set_poll(struct dfg_fb_obj *fb, u64 now)
{
	struct dfg_set *set = container_of(fb, struct dfg_set, fb);
	u32 t = fb->obj->graph->fb_stall_ms ?: READ_ONCE(dfg_fb_stall_ms);
	struct dfg_nl_ev ev = {
		.pid = set->tgid, .graph = fb->obj->graph->id,
		.object = fb->obj->id, .rank = -1,
		.attrs = BIT(DFG_NL_A_WAIT_MS),
	};
	u64 seq, since;
	bool inputs;

	lockdep_assert_held(&dfg_fb_mutex);
	if (!t || READ_ONCE(set->state) != DFG_SET_S_WAITING)
		return;
	seq = READ_ONCE(set->wait_seq);
	if (seq == fb->seen_wait)
		return;
	/*
	 * Pairs with dfg_set_wait_begin()'s barrier: the fields are those of
	 * wait @seq or of a newer one, whose later start can only make the
	 * wait look shorter, never report a stall that was not.
	 */
	smp_rmb();
	since = READ_ONCE(set->wait_since);
	inputs = READ_ONCE(set->wait_inputs);
	/* Orders the reads above before the check that no wait began. */
	smp_rmb();
	if (READ_ONCE(set->wait_seq) != seq ||
	    READ_ONCE(set->state) != DFG_SET_S_WAITING ||
	    now < since || now - since <= (u64)t * NSEC_PER_MSEC)
		return;
	fb->seen_wait = seq;
	ev.event = inputs ? DFG_EV_SET_STARVED : DFG_EV_SET_BACKPRESSURED;
	ev.wait_ms = min_t(u64, div_u64(now - since, NSEC_PER_MSEC), U32_MAX);
	trace_dfg_fb_stall(ev.graph, ev.object, inputs, ev.wait_ms);
	dfg_fb_emit(&ev);
}

/* MEM_LOW below fb_mem_low_pct of RAM, MEM_OK back above fb_mem_ok_pct. */
static void dfg_fb_mem_poll(void)
{
	u32 low_pct = READ_ONCE(dfg_fb_mem_low_pct);
	u32 ok_pct = max(READ_ONCE(dfg_fb_mem_ok_pct), low_pct);
	u64 total = totalram_pages();
	u64 avail = si_mem_available();
	struct dfg_nl_ev ev = {
		.rank = -1, .mem_avail = avail << (PAGE_SHIFT - 10),
		.mem_total = total << (PAGE_SHIFT - 10),
		.attrs = BIT(DFG_NL_A_MEM_AVAIL) | BIT(DFG_NL_A_MEM_TOTAL),
	};

	lockdep_assert_held(&dfg_fb_mutex);
	if (!dfg_fb_mem_low && low_pct && avail * 100 < total * low_pct)
		ev.event = DFG_EV_MEM_LOW;
	else if (dfg_fb_mem_low && (!low_pct || avail * 100 > total * ok_pct))
		ev.event = DFG_EV_MEM_OK;
	else
		return;
	dfg_fb_mem_low = ev.event == DFG_EV_MEM_LOW;
	trace_dfg_fb_mem(ev.mem_avail, ev.mem_total, dfg_fb_mem_low);
	dfg_fb_emit(&ev);
}

/* Change per second of @count since @fb's last sample. */
static u64 dfg_fb_rate(struct dfg_fb_obj *fb, u64 count, u64 now)
{
	u64 rate = 0;

	if (fb->sample_ns && now > fb->sample_ns && count >= fb->sample_count)
		rate = mul_u64_u64_div_u64(count - fb->sample_count,
					   NSEC_PER_SEC, now - fb->sample_ns);
	fb->sample_count = count;
	fb->sample_ns = now;
	return rate;
}

/* One CHAN_SAMPLE or SET_SAMPLE of a graph's summary. */
static void dfg_fb_sample(struct dfg_fb_obj *fb, u64 now)
{
	struct dfg_nl_ev ev = {
		.graph = fb->obj->graph->id, .object = fb->obj->id,
		.rank = -1, .attrs = BIT(DFG_NL_A_COUNT) | BIT(DFG_NL_A_RATE),
	};

	lockdep_assert_held(&dfg_fb_mutex);
	if (fb->obj->ops->kind == DFG_OBJ_CHAN) {
		ev.event = DFG_EV_CHAN_SAMPLE;
		ev.attrs |= BIT(DFG_NL_A_FILL) | BIT(DFG_NL_A_CAPACITY);
		dfg_chan_fill(fb->obj, &ev.fill, &ev.capacity, &ev.count);
	} else {
		struct dfg_set *set = container_of(fb, struct dfg_set, fb);

		ev.event = DFG_EV_SET_SAMPLE;
		ev.pid = set->tgid;
		ev.count = READ_ONCE(set->cpu_ns);
	}
	ev.rate = dfg_fb_rate(fb, ev.count, now);
	fb->obj->graph->fb_batch++;
	dfg_fb_emit(&ev);
}

/* Is @g's summary due, and not yet among the @n in @due? */
static bool dfg_fb_due(struct dfg_graph *g, struct dfg_graph **due,
		       unsigned int n, u64 now)
{
	unsigned int i;

	if (!g->fb_period_ms || now < g->fb_next_ns)
		return false;
	for (i = 0; i < n; i++)
		if (due[i] == g)
			return false;
	return true;
}

static bool dfg_fb_in(struct dfg_graph *g, struct dfg_graph **due,
		      unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (due[i] == g)
			return true;
	return false;
}

/* Close the summaries of @due[0 .. @n - 1] and schedule the next ones. */
static void dfg_fb_close(struct dfg_graph **due, unsigned int n, u64 now)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct dfg_graph *g = due[i];
		struct dfg_nl_ev ev = {
			.event = DFG_EV_GRAPH_SAMPLE, .graph = g->id,
			.rank = -1, .period_ms = g->fb_period_ms,
			.count = g->fb_batch,
			.attrs = BIT(DFG_NL_A_PERIOD_MS) | BIT(DFG_NL_A_COUNT),
		};

		trace_dfg_fb_summary(g->id, g->fb_batch);
		dfg_fb_emit(&ev);
		g->fb_next_ns = now + (u64)g->fb_period_ms * NSEC_PER_MSEC;
	}
}

/*
 * Every dfg.fb_poll_ms while a channel or set exists: memory, each
 * channel's fill, each set's wait, and the summaries that are due. The
 * graphs in @due are alive: each has a listed object, which holds it.
 */
static void dfg_fb_poll(struct work_struct *work)
{
	struct dfg_graph *due[DFG_FB_DUE_MAX];
	u64 now = ktime_get_ns();
	struct dfg_fb_obj *fb;
	unsigned int n = 0;

	mutex_lock(&dfg_fb_mutex);
	dfg_fb_mem_poll();
	list_for_each_entry(fb, &dfg_fb_objs, node) {
		struct dfg_graph *g = fb->obj->graph;

		if (n < DFG_FB_DUE_MAX && dfg_fb_due(g, due, n, now)) {
			g->fb_batch = 0;
			due[n++] = g;
		}
	}
	list_for_each_entry(fb, &dfg_fb_objs, node) {
		if (fb->obj->ops->kind == DFG_OBJ_CHAN)
			dfg_fb_chan_poll(fb, now);
		else
			dfg_fb_set_poll(fb, now);
		if (dfg_fb_in(fb->obj->graph, due, n))
			dfg_fb_sample(fb, now);
	}
	dfg_fb_close(due, n, now);
	if (!list_empty(&dfg_fb_objs))
		dfg_fb_kick();
	mutex_unlock(&dfg_fb_mutex);
}

/* ------------------------------------------------------------------------
 * Worker death, CPU hotplug
 * ------------------------------------------------------------------------
 */

/**
 * dfg_fb_worker_death() - a set lost the process of its worker
 * @graph: its graph's id (a live graph)
 * @set: the set's id; the set failed because of it
 * @pid: tgid of that process
 *
 * Context: process context, no spinlock held.
 */
void dfg_fb_worker_death(u32 graph, u32 set, pid_t pid)
{
	struct dfg_nl_ev ev = {
		.event = DFG_EV_WORKER_DEATH, .pid = pid, .graph = graph,
		.object = set, .rank = -1,
	};

	trace_dfg_fb_worker_death(graph, set, pid);
	dfg_fb_emit(&ev);
}

/**
 * dfg_fb_dying() - is process @tgid dying or gone (a death, not a close)?
 * @tgid: thread-group id in the initial namespace
 *
 * The releasing task exits, or @tgid is gone or going: the last reference
 * to a file often goes from a kworker (io_uring teardown, delayed fput).
 */
bool dfg_fb_dying(pid_t tgid)
{
	struct task_struct *t;
	bool dying;

	if ((current->flags & PF_EXITING) && task_tgid_nr(current) == tgid)
		return true;
	rcu_read_lock();
	t = pid_task(find_pid_ns(tgid, &init_pid_ns), PIDTYPE_TGID);
	dying = !t || dfg_task_leaving(t);
	rcu_read_unlock();
	return dying;
}

/* cpuhp callbacks: in the hotplugged CPU's hotplug thread, may sleep. */
static int dfg_fb_cpu(unsigned int cpu, bool online)
{
	struct dfg_nl_ev ev = {
		.event = online ? DFG_EV_CPU_ONLINE : DFG_EV_CPU_OFFLINE,
		.cpu = cpu, .rank = -1, .attrs = BIT(DFG_NL_A_CPU),
	};

	trace_dfg_fb_cpu(cpu, online);
	dfg_fb_emit(&ev);
	return 0;
}

static int dfg_fb_cpu_online(unsigned int cpu)
{
	return dfg_fb_cpu(cpu, true);
}

static int dfg_fb_cpu_offline(unsigned int cpu)
{
	return dfg_fb_cpu(cpu, false);
}

/* ------------------------------------------------------------------------
 * DFG_IOC_FEEDBACK_SET (graph descriptor)
 * ------------------------------------------------------------------------
 */

static int dfg_fb_set_marks(struct dfg_graph *g,
			    const struct dfg_feedback_set *a)
{
	struct dfg_fb_obj *fb;
	struct dfg_chan *ch;
	u32 fill, capacity, maxp;

	if (a->stall_ms || a->period_ms || a->generation)
		return -EINVAL;
	if (a->high ? a->low >= a->high : a->low)
		return -EINVAL;
	ch = dfg_chan_get(g, a->object, &maxp);
	if (!ch)
		return -ENOENT;
	fb = dfg_chan_fb(ch);
	dfg_chan_fill(fb->obj, &fill, &capacity, NULL);
	if (a->high > capacity) {
		dfg_chan_put(ch);
		return -EINVAL;
	}
	mutex_lock(&dfg_fb_mutex);
	fb->high = a->high;
	fb->low = a->low;
	fb->above = false;
	fb->held = false;
	fb->last_ns = 0;
	mutex_unlock(&dfg_fb_mutex);
	dfg_chan_put(ch);
	return 0;
}

static int dfg_fb_set_graph(struct dfg_graph *g,
			    const struct dfg_feedback_set *a)
{
	if (a->object || a->high || a->low || a->generation)
		return -EINVAL;
	if (a->stall_ms > DFG_FB_STALL_MS_MAX)
		return -EINVAL;
	if (a->period_ms && (a->period_ms < DFG_FB_PERIOD_MS_MIN ||
			     a->period_ms > DFG_FB_PERIOD_MS_MAX))
		return -EINVAL;
	mutex_lock(&dfg_fb_mutex);
	g->fb_stall_ms = a->stall_ms;
	g->fb_period_ms = a->period_ms;
	g->fb_next_ns = ktime_get_ns() + (u64)a->period_ms * NSEC_PER_MSEC;
	mutex_unlock(&dfg_fb_mutex);
	return 0;
}

/*
 * The runner's plan generation: kept for sysfs (plan_gen) and announced
 * as PLAN_CHANGE, every time (a listener may count re-plans).
 */
static int dfg_fb_set_plan(struct dfg_graph *g,
			   const struct dfg_feedback_set *a)
{
	struct dfg_nl_ev ev = {
		.event = DFG_EV_PLAN_CHANGE, .pid = task_tgid_nr(current),
		.graph = g->id, .rank = -1,
		.attrs = BIT(DFG_NL_A_COUNT), .count = a->generation,
	};

	if (a->object || a->high || a->low || a->stall_ms || a->period_ms)
		return -EINVAL;
	/* U64_MAX reads as "none yet" in sysfs: not a generation */
	if (a->generation == U64_MAX)
		return -EINVAL;
	/*
	 * dfg_fb_mutex orders racing callers: the last PLAN_CHANGE sent
	 * names the generation plan_gen shows.
	 */
	mutex_lock(&dfg_fb_mutex);
	WRITE_ONCE(g->fb_plan_gen, a->generation);
	dfg_fb_emit(&ev);
	mutex_unlock(&dfg_fb_mutex);
	trace_dfg_fb_plan(g->id, a->generation, ev.pid);
	return 0;
}

int dfg_feedback_set(struct dfg_cmd_ctx *c)
{
	struct dfg_feedback_set *a = c->args;
	struct dfg_graph *g = dfg_cmd_graph(c);

	if (a->reserved)
		return -EINVAL;
	switch (a->what) {
	case DFG_FB_CHAN_MARKS:
		return dfg_fb_set_marks(g, a);
	case DFG_FB_GRAPH:
		return dfg_fb_set_graph(g, a);
	case DFG_FB_PLAN:
		return dfg_fb_set_plan(g, a);
	}
	return -EINVAL;
}

/* ------------------------------------------------------------------------
 * Init and exit
 * ------------------------------------------------------------------------
 */

/* After netlink and the workqueue exist: the callbacks report. */
int dfg_fb_init(void)
{
	int ret;

	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "dfg/feedback",
					dfg_fb_cpu_online, dfg_fb_cpu_offline);
	if (ret < 0)
		return ret;
	dfg_fb_cpuhp = ret;
	return 0;
}

/* No graph lives any more: the registry is empty, the poller stops. */
void dfg_fb_exit(void)
{
	cpuhp_remove_state_nocalls(dfg_fb_cpuhp);
	cancel_delayed_work_sync(&dfg_fb_work);
	WARN_ON_ONCE(!list_empty(&dfg_fb_objs));
}
