/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg run: the scheduling point. A set instance registers with the
 * kernel set scheduler (DFG_IOC_SCHED_ATTACH, DFG_IOC_SET_REGISTER) and its
 * workers ask the module for it before each quantum (DFG_IOC_SCHED_NEXT,
 * which carries the yield of the previous quantum).
 */
#ifndef _DFG_RUN_SCHED_H
#define _DFG_RUN_SCHED_H

#include <stdbool.h>
#include <linux/dfg.h>

struct run_sched;

/* What the scheduler needs to know about a set instance. */
struct run_sched_set {
	const char			*name;
	bool				root;		/* makes its own work */
	unsigned int			nr_comps;
	const char *const		*comp_names;
	unsigned int			nr_inputs;
	const __u32			*inputs;	/* channel ids */
	unsigned int			nr_outputs;
	const struct dfg_set_output	*outputs;
};

int run_sched_open(struct run_sched **sp, int graph_fd,
		   const struct run_sched_set *set);

/*
 * Give back the set (@reason DFG_YIELD_*, 0 the first time) and wait
 * until the module hands it out again. Returns the quantum in elements
 * (> 0), 0 when the set is done for good (after DFG_YIELD_EOF), or
 * -errno: -EIO another set failed the graph, -ECANCELED the graph died.
 */
long run_sched_next(struct run_sched *s, unsigned int reason);

/* Tell the module (and sysfs) the component running now, -1 for none. */
void run_sched_active(struct run_sched *s, int member);

/* Per-component counters for the module's page (sysfs). */
struct dfg_set_comp_stats *run_sched_comp_stats(struct run_sched *s,
						unsigned int member);

void run_sched_close(struct run_sched *s);

#endif /* _DFG_RUN_SCHED_H */
