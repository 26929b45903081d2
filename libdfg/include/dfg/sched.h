/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * <dfg/sched.h> - the kernel set scheduler, client side.
 *
 * A process joins a graph's scheduler with dfg_sched_attach(), registers
 * its sets (folded component sets) with dfg_set_register(), then runs
 * worker threads that loop:
 *
 *	struct dfg_set *set = NULL;
 *	unsigned int why = 0;
 *	for (;;) {
 *		ret = dfg_sched_next(s, set, why, 0, &set, &quantum);
 *		if (ret == -ENODATA)
 *			break;			// every set of ours is done
 *		if (ret < 0)
 *			fail(ret);		// -EIO: the graph failed
 *		why = run(set, quantum);	// a DFG_YIELD_* reason
 *	}
 *
 * A set's code never waits on its channels: it sends and receives with
 * DFG_CHAN_NONBLOCK and gives the set back with DFG_YIELD_INPUT_EMPTY or
 * DFG_YIELD_OUTPUT_FULL; the module then waits for the channel on the
 * set's behalf and hands it to a worker once it can progress. Around each
 * call into a component, dfg_set_enter()/dfg_set_leave() name it in the
 * set's shared page, which the module samples to split CPU time between
 * components; dfg_set_count_in()/dfg_set_count_out() count its elements
 * and bytes (sysfs graphs/<g>/set<id>/comp<i>/).
 *
 * Every function returns 0 or a result >= 0, or -errno, and leaves errno
 * alone. A struct dfg_sched may be used by many threads at once;
 * registration is serialised inside, and next/yield never take a lock of
 * libdfg's while they wait.
 */
#ifndef _DFG_SCHED_H
#define _DFG_SCHED_H

#include <linux/dfg.h>
#include <liburing.h>
#include <string.h>

#include <dfg/prep.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dfg_sched;
struct dfg_set;

/**
 * struct dfg_set_desc - what dfg_set_register() needs to know
 * @name:	set name ([A-Za-z0-9._-], < DFG_NAME_MAX bytes)
 * @flags:	DFG_SET_F_ROOT (makes its own work until EOF),
 *		DFG_SET_F_QUANTUM_NS (@quantum in ns, else elements)
 * @priority:	0..DFG_SET_PRIO_MAX; each step doubles the set's share
 * @cpumask:	CPUs whose workers may run it (bit n: CPU n); 0: any
 * @quantum:	> 0, handed back by dfg_sched_next()
 * @nr_inputs:	input channels (0 only for a root)
 * @inputs:	their ids
 * @nr_outputs:	output rings
 * @outputs:	their channel ids and producer slots (dfg_chan_slot())
 * @nr_comps:	components, 1..DFG_SET_COMPS_MAX
 * @comp_names:	their names, by index
 */
struct dfg_set_desc {
	const char			*name;
	unsigned int			flags;
	unsigned int			priority;
	unsigned long long		cpumask;
	unsigned long long		quantum;
	unsigned int			nr_inputs;
	const unsigned int		*inputs;
	unsigned int			nr_outputs;
	const struct dfg_set_output	*outputs;
	unsigned int			nr_comps;
	const char * const		*comp_names;
};

int dfg_sched_attach(int graph_fd, struct dfg_sched **sp);
void dfg_sched_detach(struct dfg_sched *s);
int dfg_sched_fd(const struct dfg_sched *s);

int dfg_set_register(struct dfg_sched *s, const struct dfg_set_desc *desc,
		     struct dfg_set **setp);
int dfg_set_unregister(struct dfg_set *set);
unsigned int dfg_set_id(const struct dfg_set *set);
struct dfg_set_page *dfg_set_page(struct dfg_set *set);
struct dfg_set *dfg_sched_set(struct dfg_sched *s, unsigned int id);

int dfg_sched_next(struct dfg_sched *s, struct dfg_set *done,
		   unsigned int reason, unsigned int flags,
		   struct dfg_set **setp, unsigned long long *quantum);
int dfg_sched_yield(struct dfg_set *set, unsigned int reason);

/*
 * Component accounting in the set's page, by the worker that runs the set
 * (the only writer: plain relaxed stores, no read-modify-write).
 */

/**
 * dfg_set_enter() - the worker now calls component @comp
 * @pg:		the set's page (dfg_set_page())
 * @comp:	component index
 *
 * Return: the component active before, for dfg_set_leave().
 */
static inline unsigned int dfg_set_enter(struct dfg_set_page *pg,
					 unsigned int comp)
{
	unsigned int prev = __atomic_load_n(&pg->active, __ATOMIC_RELAXED);

	__atomic_store_n(&pg->active, comp, __ATOMIC_RELAXED);
	return prev;
}

/* Back to the caller of the component: @prev from dfg_set_enter(). */
static inline void dfg_set_leave(struct dfg_set_page *pg, unsigned int prev)
{
	__atomic_store_n(&pg->active, prev, __ATOMIC_RELAXED);
}

static inline void __dfg_set_add(__u64 *ctr, __u64 n)
{
	__atomic_store_n(ctr, __atomic_load_n(ctr, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

/* Component @comp received @elems elements of @bytes bytes in all. */
static inline void dfg_set_count_in(struct dfg_set_page *pg, unsigned int comp,
				    __u64 elems, __u64 bytes)
{
	if (comp >= DFG_SET_COMPS_MAX)
		return;
	__dfg_set_add(&pg->comps[comp].elems_in, elems);
	__dfg_set_add(&pg->comps[comp].bytes_in, bytes);
}

/* Component @comp emitted @elems elements of @bytes bytes in all. */
static inline void dfg_set_count_out(struct dfg_set_page *pg,
				     unsigned int comp, __u64 elems,
				     __u64 bytes)
{
	if (comp >= DFG_SET_COMPS_MAX)
		return;
	__dfg_set_add(&pg->comps[comp].elems_out, elems);
	__dfg_set_add(&pg->comps[comp].bytes_out, bytes);
}

#ifdef __cplusplus
}
#endif

#endif /* _DFG_SCHED_H */
