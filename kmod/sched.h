/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sched.h - what crosses the seam between the set object (set.c: its
 * struct, sysfs directories, shared page, place in the graph) and the
 * scheduler (sched.c: clients, run queue, NEXT/YIELD, watches, sampling).
 * Locks and references: see the top of sched.c; lock order: see dfg.h.
 */
#ifndef _DFG_KMOD_SCHED_H
#define _DFG_KMOD_SCHED_H

#include <linux/ktime.h>

#include "dfg.h"

/* sched.c: clients, a set's client link and its place in its graph. */
extern struct mutex dfg_sched_mutex;

struct dfg_set;

/**
 * struct dfg_set_port - one input channel or output ring of a set
 * @watch:	the scheduler's wait on it (->ch is the channel reference)
 * @set:	the set
 * @chan:	channel id, for traces
 */
struct dfg_set_port {
	struct dfg_chan_watch	watch;
	struct dfg_set		*set;
	u32			chan;
};

/**
 * struct dfg_set_comp - one component of a set, graphs/<g>/set<id>/comp<i>
 * @kobj:	its directory; holds a set reference while it exists
 * @set:	the set
 * @idx:	index in the set, also in the shared page
 * @name:	component name
 * @cpu_ns:	CPU time sampled while it was active
 * @samples:	samples that found it active
 */
struct dfg_set_comp {
	struct kobject		kobj;
	struct dfg_set		*set;
	u32			idx;
	char			name[DFG_NAME_MAX];
	u64			cpu_ns;
	u64			samples;
};

/**
 * struct dfg_set - one registered set (see the top of this file)
 * @obj:	header; @obj.id is the set's id in its graph
 * @kobj:	memory and sysfs directory
 * @graph:	the graph (kobject reference held)
 * @client:	its client, NULL once it left it (dfg_sched_mutex)
 * @client_node: on @client->sets
 * @ready_node:	on @client->ready while READY
 * @in_graph:	published in the graph, graph reference held (set.c's top
 *		says who changes it and @in_sysfs)
 * @in_sysfs:	its directories are in sysfs
 * @name:	set name; immutable
 * @tgid:	registering process; immutable
 * @flags:	DFG_SET_F_*; immutable
 * @priority:	immutable
 * @cpumask:	CPUs that may run it (all ones: any); immutable
 * @quantum:	immutable
 * @nr_inputs:	@ports[0 .. @nr_inputs - 1]; immutable
 * @nr_outputs:	@ports[@nr_inputs ..]; immutable
 * @nr_comps:	length of @comps; immutable
 * @ports:	inputs then outputs
 * @comps:	components
 * @mem:	the shared page
 * @page:	its kernel address
 * @state:	DFG_SET_S_*
 * @arming:	WAITING, its watches being armed by one thread
 * @kicked:	a watch fired while @arming
 * @runner:	RUNNING: the worker (task reference held)
 * @run_start:	RUNNING: ktime of the hand-out
 * @rt_last:	RUNNING: @runner's CPU time at the last sample
 * @vruntime:	virtual run time
 * @runs:	hand-outs
 * @waits:	times it waited for a channel
 * @wakeups:	waits ended by a channel
 * @run_ns:	time held by workers
 * @cpu_ns:	CPU time of its workers while held (sampled)
 * @samples:	samples taken while it ran
 * @idle_ns:	part of @cpu_ns outside any component
 * @wait_since:	WAITING: when the wait began (feedback)
 * @wait_inputs: WAITING: on its inputs (else on a full output)
 * @wait_seq:	waits begun, counting the first; written after the two
 *		above (feedback.c reads them without the client's lock)
 * @fb:		feedback's view (feedback.c), from entering the graph to
 *		leaving it
 */
struct dfg_set {
	struct dfg_object	obj;
	struct kobject		kobj;
	struct dfg_graph	*graph;
	struct dfg_sched_client	*client;
	struct list_head	client_node;
	struct list_head	ready_node;
	bool			in_graph;
	bool			in_sysfs;
	char			name[DFG_NAME_MAX];
	pid_t			tgid;
	u32			flags;
	u32			priority;
	u64			cpumask;
	u64			quantum;
	u32			nr_inputs;
	u32			nr_outputs;
	u32			nr_comps;
	struct dfg_set_port	*ports;
	struct dfg_set_comp	*comps;
	struct dfg_mem		mem;
	struct dfg_set_page	*page;
	u32			state;
	bool			arming;
	bool			kicked;
	struct task_struct	*runner;
	u64			run_start;
	u64			rt_last;
	u64			vruntime;
	u64			runs;
	u64			waits;
	u64			wakeups;
	u64			run_ns;
	u64			cpu_ns;
	u64			samples;
	u64			idle_ns;
	u64			wait_since;
	bool			wait_inputs;
	u64			wait_seq;
	struct dfg_fb_obj	fb;
};

/* Kernel copy of the state, mirrored into the shared page. */
static inline void dfg_set_state(struct dfg_set *set, u32 state)
{
	WRITE_ONCE(set->state, state);
	WRITE_ONCE(set->page->state, state);
}

/*
 * A wait for channels begins (under the client's lock, before the state
 * says WAITING): what feedback needs to report a stall.
 */
static inline void dfg_set_wait_begin(struct dfg_set *set, bool inputs)
{
	WRITE_ONCE(set->wait_since, ktime_get_ns());
	WRITE_ONCE(set->wait_inputs, inputs);
	/* Pairs with dfg_fb_set_poll(): the two above, then the number. */
	smp_wmb();
	WRITE_ONCE(set->wait_seq, set->wait_seq + 1);
}

/* feedback.c */
void dfg_fb_worker_death(u32 graph, u32 set, pid_t pid);
bool dfg_fb_dying(pid_t tgid);

/* set.c */
struct dfg_set *dfg_set_new(struct dfg_graph *g,
			    const struct dfg_set_register *a);
int dfg_set_alloc_page(struct dfg_set *set);
int dfg_set_reserve(struct dfg_set *set);
void dfg_set_unreserve(struct dfg_set *set);
int dfg_set_enter_graph(struct dfg_set *set);
bool dfg_set_hide(struct dfg_set *set, bool graph_dead);
void dfg_set_leave_graph(struct dfg_set *set);

#endif /* _DFG_KMOD_SCHED_H */
