// SPDX-License-Identifier: GPL-2.0
/*
 * sched.c - the set scheduler: DFG_IOC_SCHED_ATTACH, SET_REGISTER,
 * SET_UNREGISTER, SCHED_NEXT, SCHED_YIELD, scheduler descriptors and
 * their mmap of a set's page, the run queue, the sets' channel watches
 * and the sampling of the component each running set executes. The set
 * object itself (struct, sysfs, shared page, place in its graph) is set.c.
 *
 * Objects, locks and references
 *   dfg_sched_mutex	module-wide mutex, process context only. Protects
 *			dfg_sched_clients, every client's ->graph_dead, the
 *			link between a set and its client (->client,
 *			->client_node additions and removals) and a
 *			published set's place in its graph (->in_graph,
 *			->in_sysfs; set.c says who owns them once it is
 *			out). Taken by the rare paths: attach, register,
 *			unregister, client release, failing a graph, the
 *			graph's death hook (under dfg_graphs_lock). Never by
 *			the worker hot path. Held across no set's last put
 *			and no sysfs removal (but that of a new set failing
 *			to enter its graph): a set leaving its graph is
 *			hidden under it and loses its directories and
 *			references after it (set.c), so clients ending
 *			together do not wait for each other's removals one
 *			at a time.
 *   struct dfg_sched_client  one per scheduler descriptor (anon inode
 *			"[dfg-sched]"), its file's private_data, freed at the
 *			file's release. Holds its graph's kobject (memory,
 *			not life, like a channel endpoint). Embeds a
 *			dfg_file for its parked SCHED_NEXTs, which pin the
 *			file: release runs with nothing parked or sleeping.
 *     ->lock		spinlock, process context and channel wake paths
 *			(taken under dfg_chan.lock by the watch callback).
 *			Protects the client's lists (->sets for walking,
 *			->ready, ->waiters), counters and ->error, and for
 *			each of its sets: ->state, the run fields, the
 *			counters and the component figures. Waiters are
 *			completed under it, their owner's lock (wait.c).
 *   Lock order: see dfg.h. No path holds a client lock while it arms or
 *			disarms a watch (the watch callback takes it under
 *			dfg_chan.lock).
 *   struct dfg_set	one per registered set, a dfg_object of its graph.
 *     ->kobj		memory and sysfs graphs/<gid>/set<id>. References:
 *			the graph's (publication until the set leaves the
 *			graph: UNREGISTER, close of a client whose set is
 *			done, or the graph's death) and the client's (until
 *			UNREGISTER or the client's release), one per
 *			component directory. The release puts the channels,
 *			frees the page and the struct.
 *     ->ports		inputs then outputs: a channel reference each and a
 *			dfg_chan_watch, armed only by the thread that moved
 *			the set to WAITING (->arming), disarmed before any
 *			re-arming and before the set leaves its client.
 *     ->mem		the shared page (accounted like an arena page),
 *			mapped with vm_insert_page(): a mapping keeps the
 *			page, not the set.
 *   struct dfg_sched_waiter  one SCHED_NEXT waiting for a set, on
 *			->waiters under ->lock: a struct dfg_waiter (wait.c:
 *			allocation, sleep, park, completion) plus the
 *			worker's CPU.
 *   sample_work	per client, on dfg_wq while a set of the client runs;
 *			canceled (synchronously) at the client's release.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/cpumask.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "sched.h"
#include "trace.h"

/* Sampling period of running sets, ms (dfg.sched_sample_ms, 1..1000). */
static unsigned int dfg_sched_sample_ms = 2;
module_param_named(sched_sample_ms, dfg_sched_sample_ms, uint, 0644);
MODULE_PARM_DESC(sched_sample_ms,
		 "period of the active-component sampling of running sets (ms)");

/* Rare paths only (attach, register, release, death): see the top. */
DEFINE_MUTEX(dfg_sched_mutex);
static LIST_HEAD(dfg_sched_clients);	/* under dfg_sched_mutex */

/**
 * struct dfg_sched_client - one scheduler descriptor (see the top)
 * @fd:		descriptor header (DFG_FD_SCHED), first
 * @df:		its parked commands (wait.c); on dfg_files while open
 * @graph:	the graph (kobject reference held)
 * @tgid:	thread group of the attaching process
 * @node:	on dfg_sched_clients, under dfg_sched_mutex
 * @graph_dead:	the graph died (under dfg_sched_mutex)
 * @lock:	see the top of this file
 * @sets:	its sets (dfg_set.client_node)
 * @ready:	its READY sets (dfg_set.ready_node)
 * @waiters:	waiting SCHED_NEXTs (dfg_sched_waiter.node)
 * @nr_live:	sets neither done nor failed
 * @nr_running:	RUNNING sets; the sampler runs while nonzero
 * @error:	0, -EIO once the graph failed, -ECANCELED once it died
 * @min_vruntime: virtual time of the last pick; waking sets start there
 * @sample_work: the sampler
 */
struct dfg_sched_client {
	struct dfg_fd		fd;
	struct dfg_file		df;
	struct dfg_graph	*graph;
	pid_t			tgid;
	struct list_head	node;
	bool			graph_dead;
	spinlock_t		lock;	/* see the top of this file */
	struct list_head	sets;
	struct list_head	ready;
	struct list_head	waiters;
	u32			nr_live;
	u32			nr_running;
	int			error;
	u64			min_vruntime;
	struct delayed_work	sample_work;
};

static_assert(offsetof(struct dfg_sched_client, fd) == 0);

/* The scheduler descriptor a command was issued on. */
static struct dfg_sched_client *dfg_cmd_client(const struct dfg_cmd_ctx *c)
{
	struct dfg_fd *fd = dfg_cmd_fd(c, DFG_FD_SCHED);

	return fd ? container_of(fd, struct dfg_sched_client, fd) : NULL;
}

/**
 * struct dfg_sched_waiter - a SCHED_NEXT waiting for a set
 * @wait:	the waiter, on dfg_sched_client.waiters; its args are a
 *		struct dfg_sched_next
 * @cpu:	the worker's CPU
 */
struct dfg_sched_waiter {
	struct dfg_waiter	wait;
	u32			cpu;
};

static const struct file_operations dfg_sched_fops;

static bool dfg_set_live(const struct dfg_set *set)
{
	return set->state != DFG_SET_S_DONE && set->state != DFG_SET_S_FAILED;
}

static bool dfg_set_on_cpu(const struct dfg_set *set, u32 cpu)
{
	if (cpu >= 64)
		return set->cpumask == ~0ULL;
	return set->cpumask & BIT_ULL(cpu);
}

/* ------------------------------------------------------------------------
 * Run queue, hand-out and waiters (under dfg_sched_client.lock)
 * ------------------------------------------------------------------------
 */

static void dfg_set_make_ready(struct dfg_sched_client *sc,
			       struct dfg_set *set)
{
	lockdep_assert_held(&sc->lock);
	/* No credit for the time spent waiting. */
	set->vruntime = max(set->vruntime, sc->min_vruntime);
	dfg_set_state(set, DFG_SET_S_READY);
	list_add_tail(&set->ready_node, &sc->ready);
}

/* The READY set of least virtual time that may run on @cpu, or NULL. */
static struct dfg_set *dfg_sched_pick(struct dfg_sched_client *sc, u32 cpu)
{
	struct dfg_set *set, *best = NULL;

	lockdep_assert_held(&sc->lock);
	list_for_each_entry(set, &sc->ready, ready_node)
		if (dfg_set_on_cpu(set, cpu) &&
		    (!best || set->vruntime < best->vruntime))
			best = set;
	return best;
}

static void dfg_sched_kick_sampler(struct dfg_sched_client *sc)
{
	unsigned int ms = clamp(READ_ONCE(dfg_sched_sample_ms), 1U, 1000U);

	queue_delayed_work(dfg_wq, &sc->sample_work, msecs_to_jiffies(ms));
}

/* READY -> RUNNING by @task. */
static void dfg_set_run(struct dfg_sched_client *sc, struct dfg_set *set,
			struct task_struct *task)
{
	lockdep_assert_held(&sc->lock);
	list_del_init(&set->ready_node);
	dfg_set_state(set, DFG_SET_S_RUNNING);
	set->runner = get_task_struct(task);
	set->run_start = ktime_get_ns();
	set->rt_last = READ_ONCE(task->se.sum_exec_runtime);
	WRITE_ONCE(set->runs, set->runs + 1);
	sc->min_vruntime = max(sc->min_vruntime, set->vruntime);
	if (!sc->nr_running++)
		dfg_sched_kick_sampler(sc);
}

/*
 * Charge the CPU time @set's worker used since the last sample to the
 * component the shared page names (the patent's "active" variable).
 */
static void dfg_set_sample(struct dfg_set *set)
{
	u64 now = READ_ONCE(set->runner->se.sum_exec_runtime);
	u64 delta = now - set->rt_last;
	u32 idx = READ_ONCE(set->page->active);

	set->rt_last = now;
	if (idx < set->nr_comps) {
		struct dfg_set_comp *comp = &set->comps[idx];

		WRITE_ONCE(comp->cpu_ns, comp->cpu_ns + delta);
		WRITE_ONCE(comp->samples, comp->samples + 1);
	} else {
		WRITE_ONCE(set->idle_ns, set->idle_ns + delta);
	}
	WRITE_ONCE(set->cpu_ns, set->cpu_ns + delta);
	WRITE_ONCE(set->samples, set->samples + 1);
}

/* RUNNING -> (caller's next state): last sample, time and vruntime. */
static void dfg_set_stop(struct dfg_sched_client *sc, struct dfg_set *set,
			 u32 reason)
{
	u64 held;

	lockdep_assert_held(&sc->lock);
	dfg_set_sample(set);
	held = ktime_get_ns() - set->run_start;
	WRITE_ONCE(set->run_ns, set->run_ns + held);
	set->vruntime += held << (DFG_SET_PRIO_MAX - set->priority);
	/* A task reference may be put in atomic context. */
	put_task_struct(set->runner);
	set->runner = NULL;
	sc->nr_running--;
	trace_dfg_sched_yield(set->graph->id, set->obj.id, reason, held);
}

/*
 * Undo dfg_set_run() of a set whose worker never learned it: READY again,
 * first in line, as if it had not run.
 */
static void dfg_set_unrun(struct dfg_sched_client *sc, struct dfg_set *set)
{
	lockdep_assert_held(&sc->lock);
	put_task_struct(set->runner);
	set->runner = NULL;
	sc->nr_running--;
	WRITE_ONCE(set->runs, set->runs - 1);
	dfg_set_state(set, DFG_SET_S_READY);
	list_add(&set->ready_node, &sc->ready);
}

/*
 * Hand @set to waiter @w. Returns false if a cancel claimed @w's parked
 * command first: @set is READY again.
 */
static bool dfg_sched_hand(struct dfg_sched_client *sc,
			   struct dfg_sched_waiter *w, struct dfg_set *set)
{
	struct task_struct *task = dfg_waiter_task(&w->wait);
	struct dfg_sched_next *args = w->wait.args;

	lockdep_assert_held(&sc->lock);
	dfg_set_run(sc, set, task);
	trace_dfg_sched_next(sc->graph->id, set->obj.id, task_pid_nr(task),
			     w->cpu, true);
	args->id = set->obj.id;
	args->quantum = set->quantum;
	if (dfg_waiter_complete(&w->wait, set->obj.id, set->quantum, NULL))
		return true;
	dfg_set_unrun(sc, set);
	return false;
}

/* Give READY sets to waiting workers whose CPU they may run on. */
static void dfg_sched_dispatch(struct dfg_sched_client *sc)
{
	struct dfg_sched_waiter *w, *tmp;
	struct dfg_set *set;

	lockdep_assert_held(&sc->lock);
	list_for_each_entry_safe(w, tmp, &sc->waiters, wait.node) {
		if (list_empty(&sc->ready))
			break;
		set = dfg_sched_pick(sc, w->cpu);
		if (set)
			dfg_sched_hand(sc, w, set);
	}
}

/* The client's set @id, or NULL; caller holds sc->lock. */
static struct dfg_set *dfg_sched_find(struct dfg_sched_client *sc, u32 id)
{
	struct dfg_set *set;

	lockdep_assert_held(&sc->lock);
	list_for_each_entry(set, &sc->sets, client_node)
		if (set->obj.id == id)
			return set;
	return NULL;
}

/*
 * SCHED_NEXT took set @id for @task, but the result could not be copied
 * back: give it back unless something happened to it meanwhile, and hand
 * it to a waiting worker.
 */
static void dfg_sched_untake(struct dfg_sched_client *sc, u32 id,
			     struct task_struct *task)
{
	struct dfg_set *set;

	spin_lock(&sc->lock);
	set = dfg_sched_find(sc, id);
	if (set && set->state == DFG_SET_S_RUNNING && set->runner == task &&
	    !set->arming) {
		dfg_set_unrun(sc, set);
		dfg_sched_dispatch(sc);
	}
	spin_unlock(&sc->lock);
}

/* A parked SCHED_NEXT's result was not delivered (wait.c). */
static void dfg_sched_waiter_undo(struct dfg_waiter *w)
{
	struct dfg_sched_next *args = w->args;

	dfg_sched_untake(container_of(w->park.df, struct dfg_sched_client,
				      df), args->id, w->park.task);
}

/* What a SCHED_NEXT gets when no set comes: an error, -ENODATA or 0. */
static int dfg_sched_end(struct dfg_sched_client *sc)
{
	lockdep_assert_held(&sc->lock);
	if (sc->error)
		return sc->error;
	return sc->nr_live ? 0 : -ENODATA;
}

/* Complete every waiter if the client has ended (dfg_sched_end()). */
static void dfg_sched_end_waiters(struct dfg_sched_client *sc)
{
	struct dfg_sched_waiter *w, *tmp;
	int res = dfg_sched_end(sc);

	lockdep_assert_held(&sc->lock);
	if (!res)
		return;
	list_for_each_entry_safe(w, tmp, &sc->waiters, wait.node)
		dfg_waiter_complete(&w->wait, res, 0, NULL);
}

/* ------------------------------------------------------------------------
 * Waiting for channels
 * ------------------------------------------------------------------------
 */

/* A channel made a waiting set runnable; under dfg_chan.lock. */
static void dfg_set_watch_fire(struct dfg_chan_watch *watch)
{
	struct dfg_set_port *port = container_of(watch, struct dfg_set_port,
						 watch);
	struct dfg_set *set = port->set;
	/* Stable: a set leaves its client only after disarming. */
	struct dfg_sched_client *sc = set->client;

	spin_lock(&sc->lock);
	if (set->state == DFG_SET_S_WAITING) {
		trace_dfg_sched_wake(set->graph->id, set->obj.id, port->chan);
		WRITE_ONCE(set->wakeups, set->wakeups + 1);
		if (set->arming) {
			set->kicked = true;
		} else {
			dfg_set_make_ready(sc, set);
			dfg_sched_dispatch(sc);
		}
	}
	spin_unlock(&sc->lock);
}

/*
 * Disarm every watch of @set. Each port goes through the channel's lock
 * even when its watch looks unarmed: a watch that fired was unlinked
 * before its ->fire ran, so only the lock says that ->fire has returned,
 * and callers about to drop the set or its client rely on that.
 */
static void dfg_set_disarm(struct dfg_set *set)
{
	u32 i;

	for (i = 0; i < set->nr_inputs + set->nr_outputs; i++)
		dfg_chan_watch_disarm(&set->ports[i].watch);
}

/* Any watch still armed (from an earlier wait ended by another one)? */
static bool dfg_set_armed(struct dfg_set *set)
{
	u32 i;

	for (i = 0; i < set->nr_inputs + set->nr_outputs; i++)
		if (!list_empty_careful(&set->ports[i].watch.node))
			return true;
	return false;
}

/*
 * The set went WAITING with ->arming set by the caller, who alone arms
 * its watches (->arming keeps everyone else off the set): on every input
 * (runnable again once one is readable) or on every output (once a full
 * one has room). Ends ->arming, READY if the condition already holds or
 * a watch fired meanwhile. Watches left armed once the set is READY are
 * disarmed by its next give-back, while it is still RUNNING.
 */
static void dfg_set_arm(struct dfg_sched_client *sc, struct dfg_set *set,
			bool inputs)
{
	u32 first = inputs ? 0 : set->nr_inputs;
	u32 n = inputs ? set->nr_inputs : set->nr_outputs;
	bool ready = false;
	u32 i, armed = 0;

	dfg_set_disarm(set);
	for (i = first; i < first + n; i++) {
		if (!dfg_chan_watch_arm(&set->ports[i].watch)) {
			armed++;
		} else if (inputs) {
			ready = true;
			break;
		}
	}
	/* Outputs: waiting makes sense only for a full one. */
	if (!inputs && !armed)
		ready = true;
	/* Runnable already: lower the flags the other watches raised. */
	if (ready)
		dfg_set_disarm(set);

	spin_lock(&sc->lock);
	set->arming = false;
	if (set->state == DFG_SET_S_WAITING && (ready || set->kicked)) {
		dfg_set_make_ready(sc, set);
		dfg_sched_dispatch(sc);
	}
	spin_unlock(&sc->lock);
}

/* ------------------------------------------------------------------------
 * Failure
 * ------------------------------------------------------------------------
 */

/* Every client of @g ends with @err; caller holds dfg_sched_mutex. */
static void dfg_sched_fail_graph_locked(struct dfg_graph *g, int err)
{
	struct dfg_sched_client *sc;

	lockdep_assert_held(&dfg_sched_mutex);
	list_for_each_entry(sc, &dfg_sched_clients, node) {
		if (sc->graph != g)
			continue;
		spin_lock(&sc->lock);
		if (!sc->error || err == -ECANCELED)
			sc->error = err;
		dfg_sched_end_waiters(sc);
		spin_unlock(&sc->lock);
	}
}

/* A set of @g failed (its state is FAILED): report, fail the graph. */
static void dfg_sched_set_failed(struct dfg_graph *g, u32 id, pid_t pid)
{
	dfg_nl_graph_event(DFG_EV_SET_FAILED, pid, g->id, id, NULL);
	mutex_lock(&dfg_sched_mutex);
	dfg_sched_fail_graph_locked(g, -EIO);
	mutex_unlock(&dfg_sched_mutex);
}

/*
 * Sampler: every dfg.sched_sample_ms while a set of the client runs. A
 * worker that exits holding a set fails it, and the graph.
 */
static void dfg_sched_sample_work(struct work_struct *work)
{
	struct dfg_sched_client *sc = container_of(to_delayed_work(work),
						   struct dfg_sched_client,
						   sample_work);
	struct dfg_set *set, *lost = NULL;
	pid_t lost_pid = 0;
	u32 lost_id = 0;

	spin_lock(&sc->lock);
	list_for_each_entry(set, &sc->sets, client_node) {
		if (set->state != DFG_SET_S_RUNNING)
			continue;
		dfg_set_sample(set);
		/*
		 * ->arming: a give-back has dropped ->lock to disarm and will
		 * stop the set itself; failing it here would stop it twice.
		 */
		if (!lost && !set->arming && dfg_task_leaving(set->runner))
			lost = set;
	}
	if (lost) {
		lost_pid = task_tgid_nr(lost->runner);
		dfg_set_stop(sc, lost, DFG_YIELD_ERROR);
		dfg_set_state(lost, DFG_SET_S_FAILED);
		sc->nr_live--;
		lost_id = lost->obj.id;
	}
	if (sc->nr_running)
		dfg_sched_kick_sampler(sc);
	spin_unlock(&sc->lock);

	/* Ids only: an UNREGISTER may free the failed set from here on. */
	if (lost_id) {
		dfg_fb_worker_death(sc->graph->id, lost_id, lost_pid);
		dfg_sched_set_failed(sc->graph, lost_id, sc->tgid);
	}
}

/* ------------------------------------------------------------------------
 * Commands: ATTACH (graph descriptor), REGISTER, UNREGISTER
 * ------------------------------------------------------------------------
 */

int dfg_sched_attach(struct dfg_cmd_ctx *c)
{
	struct dfg_sched_attach *args = c->args;
	struct dfg_sched_client *sc;
	struct file *file;
	int fd;

	if ((args->flags & ~DFG_SCHED_O_ALL) || args->reserved0 ||
	    memchr_inv(args->reserved, 0, sizeof(args->reserved)))
		return -EINVAL;

	sc = kzalloc(sizeof(*sc), GFP_KERNEL_ACCOUNT);
	if (!sc)
		return -ENOMEM;
	sc->graph = dfg_cmd_graph(c);
	kobject_get(&sc->graph->kobj);
	sc->tgid = task_tgid_nr(current);
	spin_lock_init(&sc->lock);
	INIT_LIST_HEAD(&sc->sets);
	INIT_LIST_HEAD(&sc->ready);
	INIT_LIST_HEAD(&sc->waiters);
	INIT_DELAYED_WORK(&sc->sample_work, dfg_sched_sample_work);
	dfg_fd_init(&sc->fd, DFG_FD_SCHED, &sc->df);
	dfg_file_init(&sc->df);

	fd = get_unused_fd_flags((args->flags & DFG_SCHED_O_CLOEXEC) ?
				 O_CLOEXEC : 0);
	if (fd < 0)
		goto out_free;
	file = anon_inode_getfile("[dfg-sched]", &dfg_sched_fops, sc, O_RDWR);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		fd = PTR_ERR(file);
		goto out_free;
	}
	/* The caller's graph descriptor keeps the graph alive meanwhile. */
	mutex_lock(&dfg_sched_mutex);
	list_add_tail(&sc->node, &dfg_sched_clients);
	mutex_unlock(&dfg_sched_mutex);

	c->install = file;
	c->fd = fd;
	return fd;

out_free:
	dfg_file_fini(&sc->df);
	kobject_put(&sc->graph->kobj);
	kfree(sc);
	return fd;
}

static void dfg_set_port_init(struct dfg_set *set, struct dfg_set_port *port,
			      struct dfg_chan *ch, u32 id, u32 role, u32 slot)
{
	INIT_LIST_HEAD(&port->watch.node);
	port->watch.ch = ch;
	port->watch.role = role;
	port->watch.slot = slot;
	port->watch.fire = dfg_set_watch_fire;
	port->set = set;
	port->chan = id;
}

/* Channels of the graph, each once; references into @set->ports. */
static int dfg_set_get_ports(struct dfg_set *set,
			     const struct dfg_set_register *a)
{
	struct dfg_set_output *outs = NULL;
	u32 *ins = NULL;
	u32 i, j, maxp;
	int ret = 0;

	if (a->nr_inputs) {
		ins = memdup_user(u64_to_user_ptr(a->inputs),
				  a->nr_inputs * sizeof(*ins));
		if (IS_ERR(ins))
			return PTR_ERR(ins);
	}
	if (a->nr_outputs) {
		outs = memdup_user(u64_to_user_ptr(a->outputs),
				   a->nr_outputs * sizeof(*outs));
		if (IS_ERR(outs)) {
			kfree(ins);
			return PTR_ERR(outs);
		}
	}
	for (i = 0; i < a->nr_inputs && !ret; i++) {
		struct dfg_chan *ch;

		for (j = 0; j < i; j++)
			if (ins[j] == ins[i])
				ret = -EINVAL;
		if (ret)
			break;
		ch = dfg_chan_get(set->graph, ins[i], &maxp);
		if (!ch) {
			ret = -ENOENT;
			break;
		}
		dfg_set_port_init(set, &set->ports[i], ch, ins[i],
				  DFG_CHAN_CONSUMER, 0);
	}
	for (i = 0; i < a->nr_outputs && !ret; i++) {
		struct dfg_chan *ch;

		for (j = 0; j < i; j++)
			if (outs[j].chan == outs[i].chan &&
			    outs[j].slot == outs[i].slot)
				ret = -EINVAL;
		if (ret)
			break;
		ch = dfg_chan_get(set->graph, outs[i].chan, &maxp);
		if (!ch) {
			ret = -ENOENT;
			break;
		}
		/* Referenced from here on: the release puts it. */
		dfg_set_port_init(set, &set->ports[a->nr_inputs + i], ch,
				  outs[i].chan, DFG_CHAN_PRODUCER,
				  outs[i].slot);
		if (outs[i].slot >= maxp)
			ret = -EINVAL;
	}
	kfree(outs);
	kfree(ins);
	return ret;
}

/*
 * Under dfg_sched_mutex: give @set its place in the graph (set.c) and on
 * the client; READY if a root, else WAITING with ->arming (the caller
 * arms). Returns the id or a negative errno.
 */
static int dfg_set_publish(struct dfg_sched_client *sc, struct dfg_set *set)
{
	int ret;

	lockdep_assert_held(&dfg_sched_mutex);
	if (sc->graph_dead)
		return -ECANCELED;
	if (READ_ONCE(sc->error))
		return sc->error;
	ret = dfg_set_enter_graph(set);
	if (ret < 0)
		return ret;
	set->client = sc;

	spin_lock(&sc->lock);
	list_add_tail(&set->client_node, &sc->sets);
	sc->nr_live++;
	if (set->flags & DFG_SET_F_ROOT) {
		dfg_set_make_ready(sc, set);
		dfg_sched_dispatch(sc);
	} else {
		dfg_set_wait_begin(set, true);
		dfg_set_state(set, DFG_SET_S_WAITING);
		set->arming = true;
	}
	spin_unlock(&sc->lock);
	return set->obj.id;
}

int dfg_set_register(struct dfg_cmd_ctx *c)
{
	struct dfg_set_register *args = c->args;
	struct dfg_sched_client *sc = dfg_cmd_client(c);
	pid_t tgid = task_tgid_nr(current);
	struct dfg_set *set;
	int ret;

	set = dfg_set_new(sc->graph, args);
	if (IS_ERR(set))
		return PTR_ERR(set);
	/* Counted only now: the release walks what was taken. */
	set->nr_inputs = args->nr_inputs;
	set->nr_outputs = args->nr_outputs;
	ret = dfg_set_get_ports(set, args);
	if (ret)
		goto out_put;
	ret = dfg_set_alloc_page(set);
	if (ret)
		goto out_put;

	/* The caller learns the id before the set can run or be seen. */
	ret = dfg_set_reserve(set);
	if (ret < 0)
		goto out_put;
	args->id = ret;
	args->mmap_offset = DFG_MMAP_OFFSET(ret);
	ret = dfg_cmd_copy_out(c);
	if (ret)
		goto out_unreserve;

	mutex_lock(&dfg_sched_mutex);
	ret = dfg_set_publish(sc, set);
	mutex_unlock(&dfg_sched_mutex);
	if (ret < 0)
		goto out_unreserve;
	/* The client cannot go meanwhile: this command pins its file. */
	if (!(set->flags & DFG_SET_F_ROOT))
		dfg_set_arm(sc, set, true);

	/* @set may be gone already (an UNREGISTER): locals only. */
	dfg_nl_graph_event(DFG_EV_SET_REGISTER, tgid, sc->graph->id, ret,
			   NULL);
	return ret;

out_unreserve:
	dfg_set_unreserve(set);
out_put:
	kobject_put(&set->kobj);
	return ret;
}

int dfg_set_unregister(struct dfg_cmd_ctx *c)
{
	struct dfg_set_id *args = c->args;
	struct dfg_sched_client *sc = dfg_cmd_client(c);
	struct dfg_set *set;
	bool hidden = false;
	int ret = 0;

	if (args->reserved0 || memchr_inv(args->reserved, 0,
					  sizeof(args->reserved)))
		return -EINVAL;

	mutex_lock(&dfg_sched_mutex);
	spin_lock(&sc->lock);
	set = dfg_sched_find(sc, args->id);
	if (!set) {
		ret = -ENOENT;
	} else if (set->state == DFG_SET_S_RUNNING || set->arming) {
		ret = -EBUSY;
	} else {
		list_del_init(&set->client_node);
		list_del_init(&set->ready_node);
		/* Ours now: a watch firing meanwhile leaves it alone. */
		set->arming = true;
		if (dfg_set_live(set))
			sc->nr_live--;
		dfg_sched_end_waiters(sc);
	}
	spin_unlock(&sc->lock);
	if (!ret) {
		/* Off the client: only this thread reaches it now. */
		dfg_set_disarm(set);
		set->client = NULL;
		hidden = dfg_set_hide(set, sc->graph_dead);
	}
	mutex_unlock(&dfg_sched_mutex);
	if (hidden)
		dfg_set_leave_graph(set);
	if (!ret)
		kobject_put(&set->kobj);	/* the client's */
	return ret;
}

/* ------------------------------------------------------------------------
 * Commands: YIELD, NEXT
 * ------------------------------------------------------------------------
 */

/*
 * Give back set @id that a worker of @c's client runs. May arm channel
 * watches; for EOF and ERROR also reports (netlink, sleeping), so those
 * ask io_uring for a blocking issue first.
 */
static int dfg_sched_give_back(struct dfg_cmd_ctx *c, u32 id, u32 reason)
{
	struct dfg_sched_client *sc = dfg_cmd_client(c);
	struct dfg_set *set;
	u32 graph = sc->graph->id;
	bool wait;
	int ret = 0;

	if (reason < DFG_YIELD_QUANTUM || reason > DFG_YIELD_ERROR)
		return -EINVAL;
	if ((reason == DFG_YIELD_EOF || reason == DFG_YIELD_ERROR) &&
	    (c->issue_flags & IO_URING_F_NONBLOCK))
		return -EAGAIN;

	spin_lock(&sc->lock);
	set = dfg_sched_find(sc, id);
	if (!set)
		ret = -ENOENT;
	else if (set->state != DFG_SET_S_RUNNING || set->arming)
		ret = -EBUSY;
	else if ((reason == DFG_YIELD_INPUT_EMPTY && !set->nr_inputs) ||
		 (reason == DFG_YIELD_OUTPUT_FULL && !set->nr_outputs))
		ret = -EINVAL;
	if (ret) {
		spin_unlock(&sc->lock);
		return ret;
	}
	if (dfg_set_armed(set)) {
		/* Still RUNNING, and ours alone while ->arming. */
		set->arming = true;
		spin_unlock(&sc->lock);
		dfg_set_disarm(set);
		spin_lock(&sc->lock);
		set->arming = false;
	}
	dfg_set_stop(sc, set, reason);
	wait = reason == DFG_YIELD_INPUT_EMPTY ||
	       reason == DFG_YIELD_OUTPUT_FULL;
	switch (reason) {
	case DFG_YIELD_QUANTUM:
		dfg_set_make_ready(sc, set);
		dfg_sched_dispatch(sc);
		break;
	case DFG_YIELD_INPUT_EMPTY:
	case DFG_YIELD_OUTPUT_FULL:
		dfg_set_wait_begin(set, reason == DFG_YIELD_INPUT_EMPTY);
		dfg_set_state(set, DFG_SET_S_WAITING);
		WRITE_ONCE(set->waits, set->waits + 1);
		set->arming = true;
		set->kicked = false;
		break;
	case DFG_YIELD_EOF:
	case DFG_YIELD_ERROR:
		dfg_set_state(set, reason == DFG_YIELD_EOF ? DFG_SET_S_DONE :
				   DFG_SET_S_FAILED);
		sc->nr_live--;
		dfg_sched_end_waiters(sc);
		break;
	}
	spin_unlock(&sc->lock);

	/* The set stays on the client: this command pins its file. */
	if (wait)
		dfg_set_arm(sc, set, reason == DFG_YIELD_INPUT_EMPTY);
	else if (reason == DFG_YIELD_EOF)
		dfg_nl_graph_event(DFG_EV_SET_DONE, sc->tgid, graph, id, NULL);
	else if (reason == DFG_YIELD_ERROR)
		dfg_sched_set_failed(sc->graph, id, sc->tgid);
	return 0;
}

int dfg_sched_yield(struct dfg_cmd_ctx *c)
{
	struct dfg_sched_yield *args = c->args;

	if (memchr_inv(args->reserved, 0, sizeof(args->reserved)))
		return -EINVAL;
	return dfg_sched_give_back(c, args->id, args->reason);
}

/* Take a set at once for the caller: its id, an end, or 0 to wait. */
static int dfg_sched_take(struct dfg_sched_client *sc, u32 cpu, u64 *quantum)
{
	struct dfg_set *set;

	lockdep_assert_held(&sc->lock);
	if (sc->error)
		return sc->error;
	set = dfg_sched_pick(sc, cpu);
	if (!set)
		return dfg_sched_end(sc);
	dfg_set_run(sc, set, current);
	*quantum = set->quantum;
	trace_dfg_sched_next(sc->graph->id, set->obj.id, task_pid_nr(current),
			     cpu, false);
	return set->obj.id;
}

static int dfg_sched_next_check(const struct dfg_sched_next *a)
{
	if ((a->flags & ~DFG_NEXT_F_ALL) || a->id || a->reserved0 ||
	    a->quantum || memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return -EINVAL;
	if ((a->flags & DFG_NEXT_F_CPU) ? a->cpu >= nr_cpu_ids : a->cpu)
		return -EINVAL;
	if (!a->yield_id && a->yield_reason)
		return -EINVAL;
	return 0;
}

/*
 * Set @id runs for the caller now: copy the result out, or give the set
 * back if the caller cannot take it (a set nobody knows it runs would stay
 * RUNNING for good).
 */
static int dfg_sched_next_copy_out(struct dfg_cmd_ctx *c,
				   struct dfg_sched_client *sc, int id)
{
	if (!dfg_cmd_copy_out(c))
		return id;
	dfg_sched_untake(sc, id, current);
	return -EFAULT;
}

int dfg_sched_next(struct dfg_cmd_ctx *c)
{
	struct dfg_sched_next *args = c->args;
	struct dfg_sched_client *sc = dfg_cmd_client(c);
	struct dfg_sched_waiter sleeper, *w = NULL;
	u64 quantum = 0;
	u32 cpu;
	int ret;

	ret = dfg_sched_next_check(args);
	if (ret)
		return ret;
	cpu = (args->flags & DFG_NEXT_F_CPU) ? args->cpu :
					       raw_smp_processor_id();
	if (args->yield_id) {
		/* A struct that cannot take the result fails before the yield. */
		ret = dfg_cmd_copy_out(c);
		if (ret)
			return ret;
		c->copied = false;	/* the result is still to come */
		ret = dfg_sched_give_back(c, args->yield_id,
					  args->yield_reason);
		if (ret)
			return ret;
	}

	spin_lock(&sc->lock);
	ret = dfg_sched_take(sc, cpu, &quantum);
	if (ret || (args->flags & DFG_NEXT_F_NOWAIT))
		goto out_unlock;

	if (c->ucmd) {
		/* io_uring allocates: outside ->lock, only when it must wait. */
		spin_unlock(&sc->lock);
		w = dfg_waiter_new(c, NULL, sizeof(*w),
				   offsetof(struct dfg_sched_waiter, wait),
				   &sc->lock);
		if (!w)
			return -ENOMEM;
		spin_lock(&sc->lock);
		/* Things may have changed while the lock was dropped. */
		ret = dfg_sched_take(sc, cpu, &quantum);
		if (ret)
			goto out_unlock;
	} else {
		w = dfg_waiter_new(c, &sleeper, sizeof(sleeper),
				   offsetof(struct dfg_sched_waiter, wait),
				   &sc->lock);
	}
	w->cpu = cpu;
	w->wait.undo = dfg_sched_waiter_undo;
	ret = dfg_waiter_arm(c, &w->wait, &sc->waiters);
	if (ret)
		goto out_unlock;
	spin_unlock(&sc->lock);
	/*
	 * The hand-over wrote id and quantum in args (ioctl's buffer or
	 * our copy); a set handed over wins against a signal: it is
	 * running for the caller.
	 */
	ret = dfg_waiter_block(c, &w->wait);
	if (ret > 0)
		ret = dfg_sched_next_copy_out(c, sc, ret);
	return ret;

out_unlock:
	/* Not -EAGAIN: io_uring would issue the command (and its yield) again. */
	if (!ret)
		ret = -ETIME;
	/* A yield above may have made sets READY for parked workers. */
	dfg_sched_dispatch(sc);
	spin_unlock(&sc->lock);
	if (w)
		dfg_waiter_discard(c, &w->wait);
	if (ret > 0) {
		args->id = ret;
		args->quantum = quantum;
		c->res2 = quantum;
		ret = dfg_sched_next_copy_out(c, sc, ret);
	}
	return ret;
}

/* ------------------------------------------------------------------------
 * Scheduler descriptors
 * ------------------------------------------------------------------------
 */

/*
 * The client goes (close, exit, kill): its sets leave it. Sets done leave
 * the graph too; sets not done fail, stay visible in the graph as failed
 * until it dies, and fail the graph. The sets' directories go and their
 * references are put after dfg_sched_mutex: a thousand processes ending
 * together would otherwise wait for each other's sysfs removals (which
 * wait for readers) one after another, past the hung-task timeout.
 */
static int dfg_sched_release(struct inode *inode, struct file *file)
{
	struct dfg_sched_client *sc = file->private_data;
	struct dfg_set *set, *tmp;
	LIST_HEAD(gone);
	LIST_HEAD(leaving);
	bool failed = false;
	bool dying = dfg_fb_dying(sc->tgid);

	/* Nothing parked: parked commands pin the file. */
	dfg_file_fini(&sc->df);
	cancel_delayed_work_sync(&sc->sample_work);

	mutex_lock(&dfg_sched_mutex);
	list_del(&sc->node);
	spin_lock(&sc->lock);
	list_for_each_entry_safe(set, tmp, &sc->sets, client_node) {
		list_del_init(&set->ready_node);
		if (set->runner) {
			put_task_struct(set->runner);
			set->runner = NULL;
		}
		if (dfg_set_live(set)) {
			dfg_set_state(set, DFG_SET_S_FAILED);
			failed = true;
		}
		list_move_tail(&set->client_node, &gone);
	}
	spin_unlock(&sc->lock);

	list_for_each_entry_safe(set, tmp, &gone, client_node) {
		dfg_set_disarm(set);
		set->client = NULL;
		if (set->state == DFG_SET_S_DONE) {
			if (dfg_set_hide(set, sc->graph_dead))
				list_move_tail(&set->client_node, &leaving);
		} else if (!sc->graph_dead) {
			if (dying)
				dfg_fb_worker_death(sc->graph->id,
						    set->obj.id, sc->tgid);
			dfg_nl_graph_event(DFG_EV_SET_FAILED, sc->tgid,
					   sc->graph->id, set->obj.id, NULL);
		}
	}
	if (failed && !sc->graph_dead)
		dfg_sched_fail_graph_locked(sc->graph, -EIO);
	mutex_unlock(&dfg_sched_mutex);

	/* Off the client, and @leaving out of the graph: ours alone now. */
	list_for_each_entry(set, &leaving, client_node)
		dfg_set_leave_graph(set);
	list_splice(&leaving, &gone);
	list_for_each_entry_safe(set, tmp, &gone, client_node) {
		list_del_init(&set->client_node);
		kobject_put(&set->kobj);	/* the client's */
	}

	kobject_put(&sc->graph->kobj);
	kfree(sc);
	return 0;
}

/*
 * mmap(sched_fd, DFG_MMAP_OFFSET(id), <= DFG_SET_PAGE_SIZE), shared only:
 * the page of set @id of this client, inserted at once. The mapping holds
 * the page, not the set.
 */
static int dfg_sched_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct dfg_sched_client *sc = file->private_data;
	unsigned long shift = DFG_MMAP_SHIFT - PAGE_SHIFT;
	struct page *page = NULL;
	struct dfg_set *set;
	int ret;

	if (!(vma->vm_flags & VM_MAYSHARE) || vma_pages(vma) != 1 ||
	    (vma->vm_pgoff & ((1UL << shift) - 1)) ||
	    (vma->vm_pgoff >> shift) > DFG_OBJ_ID_MAX)
		return -EINVAL;
	spin_lock(&sc->lock);
	set = dfg_sched_find(sc, vma->vm_pgoff >> shift);
	if (set) {
		page = set->mem.pages[0];
		get_page(page);
	}
	spin_unlock(&sc->lock);
	if (!page)
		return -EINVAL;
	dfg_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	ret = vm_insert_page(vma, vma->vm_start, page);
	put_page(page);
	return ret;
}

static const struct file_operations dfg_sched_fops = {
	DFG_FD_FOPS(dfg_sched_release, dfg_sched_mmap),
};

/* ------------------------------------------------------------------------
 * The graph's death (graph.c)
 * ------------------------------------------------------------------------
 */

/**
 * dfg_sched_graph_death() - @g is dying
 * @g: the graph, out of reach of new descriptors
 *
 * From here on no set registers in @g and none leaves it but through the
 * death itself; every SCHED_NEXT of its clients ends with -ECANCELED.
 *
 * Context: process context, under dfg_graphs_lock, before the graph's
 * objects are unpublished (a graph hook, see graph.c).
 */
static void dfg_sched_graph_death(struct dfg_graph *g)
{
	struct dfg_sched_client *sc;

	mutex_lock(&dfg_sched_mutex);
	list_for_each_entry(sc, &dfg_sched_clients, node)
		if (sc->graph == g)
			sc->graph_dead = true;
	dfg_sched_fail_graph_locked(g, -ECANCELED);
	mutex_unlock(&dfg_sched_mutex);
}

static struct dfg_graph_hook dfg_sched_graph_hook = {
	.death	= dfg_sched_graph_death,
};

/* At module init, before /dev/dfg exists, and exit, after it is gone. */
void dfg_sched_init(void)
{
	dfg_graph_hook_add(&dfg_sched_graph_hook);
}

void dfg_sched_exit(void)
{
	dfg_graph_hook_del(&dfg_sched_graph_hook);
}
