/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg: running a dataflow graph (the execution module of the component
 * folding design, <dfg/flow.h> plans, <dfg/component.h> components).
 *
 * dfg_run() loads a DOT graph, plans it (procedure 400, or one set per
 * component with DFG_RUN_NO_FOLD) and runs it:
 *
 *  - one kernel graph (unique name), one arena with the buffer allocator,
 *    and one channel per boundary flow and downstream instance: a straight
 *    flow links instance i to instance i, a repartitioning flow (hash,
 *    round-robin, broadcast, gather) gives each downstream instance j one
 *    channel with a producer slot per upstream instance;
 *  - a worker pool per phase: one process, forked from the caller, that
 *    registers the phase's set instances (N for an N-way set) with the
 *    kernel set scheduler through one client and runs them with
 *    @workers threads (default: one per CPU the caller may run on,
 *    sched_getaffinity(2)); each thread asks the module for the next
 *    runnable set, runs it for a bounded quantum and gives it back with
 *    the reason it stopped (quantum, input empty, output full, end), and
 *    the module wakes a waiting set when its channel changes. The module
 *    never hands a set to two workers at once. Threads, not processes: a
 *    set's state lives in the address space that set it up;
 *  - a process of its own for each instance of a set that must not share
 *    one: a set with a component of a plugin or of the application (it
 *    may crash or keep global state) or an exec component (it forks), and
 *    every set with DFG_RUN_ISOLATE (the process-per-set mode of earlier
 *    versions); its one worker thread runs it the same way;
 *  - inside a set the members call each other's compute() with the same
 *    element (no copy, no queue), and elements that leave the set go into
 *    arena buffers whose descriptors cross the channels (a received
 *    element passed on unchanged is forwarded, not copied);
 *  - phases run one after another: the processes of phase p+1 start once
 *    every process of phase p has ended; a flow from one phase to a later
 *    one is spooled (the upstream phase writes it to files, one per
 *    downstream instance and upstream instance, the downstream phase
 *    reads them), so any volume crosses. The spool files live in the
 *    state directory with checkpoints (and stay there for a resume),
 *    else in @state_dir, else in a directory of their own under $TMPDIR;
 *    they are removed when the run ends;
 *  - the root protocol of the patent drives every set: KEEP_GOING, ERROR,
 *    REACHED_EOF (then shutdown() in topological order and end of stream
 *    on every outgoing channel), GOT_BLIP (process_blip() in topological
 *    order).
 *
 * Checkpoints: with @checkpoint_every, every root set sends a checkpoint
 * blip after each that many root elements. A set checkpoints once the
 * blip has arrived on all of its inputs (elements behind it wait), writes
 * one file for all its members, makes it durable and only then passes the
 * blip on. DFG_RUN_RESUME restarts every set from the newest checkpoint
 * that all sets completed; the output is that of an uninterrupted run.
 *
 * Failure: a component error stops the graph; dfg_run() returns -EIO and
 * the message is "<component>: <text>". A process that dies (a set's, or
 * a worker pool's) stops the graph the same way (-ECHILD): the other processes are killed and
 * reaped, the kernel graph goes with its last descriptor. Malformed graphs
 * fail before anything runs (-EINVAL, the message names file, line and
 * attribute).
 *
 * Errors: -errno returns; errno is never changed.
 */
#ifndef _DFG_RUN_H
#define _DFG_RUN_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dfg_flow_types;
struct dfg_replanner;

/* struct dfg_run_opts.flags */
#define DFG_RUN_NO_FOLD		(1U << 0)	/* one set per component */
#define DFG_RUN_RESUME		(1U << 1)	/* from the last checkpoint */
#define DFG_RUN_VERBOSE		(1U << 2)	/* plan and per-set detail */
#define DFG_RUN_PROGRESS	(1U << 3)	/* a progress line each second */
#define DFG_RUN_ISOLATE		(1U << 4)	/* a process per set instance */
#define DFG_RUN_FLAGS_ALL	(DFG_RUN_NO_FOLD | DFG_RUN_RESUME | \
				 DFG_RUN_VERBOSE | DFG_RUN_PROGRESS | \
				 DFG_RUN_ISOLATE)

/**
 * struct dfg_run_opts - how to run a graph
 * @size:	sizeof(struct dfg_run_opts)
 * @flags:	DFG_RUN_*
 * @checkpoint_every: root elements between checkpoints, 0 for none
 * @state_dir:	checkpoint directory (NULL: "<graph file>.state"); spools
 *		go there too, see above
 * @log:	plan (verbose), progress and summary go here; NULL: nothing
 * @err:	out: why the run failed, NUL-terminated; may be NULL
 * @errlen:	bytes at @err
 * @replanner:	asked for plan edits every @replan_ms while the run goes
 *		(<dfg/replan.h>); NULL: the plan stays as built. Edits apply at
 *		checkpoint blips, so they need @checkpoint_every
 * @replan_ms:	evaluation period; 0: 100 ms
 * @reserved0:	ignored (the tail padding of older versions)
 * @workers:	worker threads of each pool, 0: one per CPU the caller
 *		may run on; never more than the pool's set instances
 * @reserved1:	ignored (the tail padding of older versions)
 * @sum_size:	bytes of struct dfg_run_summary the caller has (its
 *		sizeof); 0: the summary of libdfg 0.10, up to @stopped_killed
 *
 * A caller built against the header before @replanner passes the shorter
 * size; the fields it lacks read as zero, and struct dfg_run_summary is
 * filled up to @replans only (as it is when @opts is NULL: nothing
 * re-plans then). One built before @workers passes
 * DFG_RUN_OPTS_SIZE_V1, and gets the summary up to @workers; one built
 * before @sum_size passes DFG_RUN_OPTS_SIZE_V2 and gets it up to
 * @stopped_clean. The summary is never filled past @sum_size.
 */
struct dfg_run_opts {
	unsigned int	size;
	unsigned int	flags;
	__u64		checkpoint_every;
	const char	*state_dir;
	FILE		*log;
	char		*err;
	size_t		errlen;
	const struct dfg_replanner *replanner;
	unsigned int	replan_ms;
	unsigned int	reserved0;
	unsigned int	workers;
	unsigned int	reserved1;
	__u64		sum_size;
};

/* The most workers a pool takes (struct dfg_run_opts.workers). */
#define DFG_RUN_WORKERS_MAX	1024

/* The size of struct dfg_run_opts before @replanner (libdfg 0.7). */
#define DFG_RUN_OPTS_SIZE_V0	offsetof(struct dfg_run_opts, replanner)
/* ... and before @workers (libdfg 0.9). */
#define DFG_RUN_OPTS_SIZE_V1	offsetof(struct dfg_run_opts, workers)
/* ... and before @sum_size (libdfg 0.9). */
#define DFG_RUN_OPTS_SIZE_V2	offsetof(struct dfg_run_opts, sum_size)

/**
 * struct dfg_run_summary - figures of a finished run
 * @elements:	elements that crossed a flow (in-set or boundary)
 * @bytes:	their bytes
 * @boundary:	elements that crossed a channel or a spool file
 * @forwarded:	of those, buffers forwarded without a copy
 * @processes:	processes used: a worker pool per phase, one per
 *		isolated set instance
 * @sets:	sets in the plan
 * @components:	components in the graph
 * @wall_ns:	from the plan to the last process reaped
 * @start_ns:	from the plan until every process ran its first quantum
 * @cpu_ns:	user + system time of all the processes
 * @ctx_switches: voluntary + involuntary, of all the processes
 * @replans:	plan changes applied while running (generations past 0)
 * @refused:	plan changes refused (the run went on on the old plan)
 * @pause_ns:	sum over the changes of the affected sets' pause: from
 *		the first of them stopping at the blip to the last new one
 *		back in service (its state restored, ready for input)
 * @pause_max_ns: the longest of those pauses
 * @workers:	worker threads of the largest pool (spares that stood in
 *		for blocked workers not counted); 0: no pool ran
 * @pooled:	set instances run by worker pools (the others each had a
 *		process)
 * @stopped_clean: processes a re-plan stopped that stopped at checkpoint K
 *		on their own (stop marks) and exited when let go
 * @stopped_killed: processes a re-plan stopped that had to be killed
 *		(they had not stopped at K when it was complete)
 */
struct dfg_run_summary {
	__u64	elements;
	__u64	bytes;
	__u64	boundary;
	__u64	forwarded;
	__u64	processes;
	__u64	sets;
	__u64	components;
	__u64	wall_ns;
	__u64	start_ns;
	__u64	cpu_ns;
	__u64	ctx_switches;
	__u64	replans;
	__u64	refused;
	__u64	pause_ns;
	__u64	pause_max_ns;
	__u64	workers;
	__u64	pooled;
	__u64	stopped_clean;
	__u64	stopped_killed;
};

/**
 * dfg_run_types() - the component registry as <dfg/flow.h>'s loader wants it
 *
 * Pass it to dfg_flow_load() so that a graph is checked against the
 * registered component types (built-ins and loaded plugins): unknown types
 * and parameters are errors, and each type's foldable flag and ports count
 * in the plan, as dfg_run() does.
 *
 * Return: a static table, never NULL.
 */
const struct dfg_flow_types *dfg_run_types(void);

/**
 * dfg_run() - plan and run a graph file
 * @dot_path:	graph (DOT)
 * @opts:	options; NULL for the defaults
 * @sum:	out, may be NULL: figures of the run, set on success
 *
 * Returns 0 when every set reached the end of its data, or -errno:
 * -EINVAL (bad options, malformed graph), -EIO (a component failed),
 * -ECHILD (a process died), -ENOENT (no module: /dev/dfg), -ENOMEM, and
 * errors of the kernel objects (graph, arena, channels, scheduler).
 */
int dfg_run(const char *dot_path, const struct dfg_run_opts *opts,
	    struct dfg_run_summary *sum);

#ifdef __cplusplus
}
#endif

#endif /* _DFG_RUN_H */
