/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * dfg/replan.h - changing the plan of a running graph (patent 001)
 *
 * The seam between whoever decides (the rule interpreter of <dfg/rules.h>,
 * or the caller's own code) and the executor of <dfg/run.h>, which applies
 * the decision live:
 *
 *   - a decision is a list of plan edits (struct dfg_plan_edit): data, not
 *     code, so it can be checked, logged, stored in the plan store and
 *     replayed;
 *   - dfg_plan_edit_apply() checks a list against a graph and its plan and
 *     yields the new graph and plan, or refuses with the reason (a cycle, a
 *     type mismatch, a degree of 0, an unknown component) and leaves the
 *     old ones untouched;
 *   - a struct dfg_replanner in struct dfg_run_opts is asked, at every
 *     evaluation point of the run, for edits given a view of the running
 *     graph (struct dfg_run_view); the executor applies accepted edits at
 *     the next checkpoint blip: the sets stop, the checkpoint's state is
 *     carried into the new plan, and the run goes on from it. Output is
 *     identical to a run that never re-planned. Only the pieces of the
 *     graph (sets joined by flows) that hold a set the change affects
 *     stop; the others run on in their processes. A change in a single
 *     pipeline still stops all of it (dfg_run(3); which sets, and which
 *     way, dfg run -v and DFG_REPLAN_LOG say).
 *
 * Errors: -errno returns, errno never changed.
 */
#ifndef _DFG_REPLAN_H
#define _DFG_REPLAN_H

#include <stddef.h>
#include <linux/types.h>

#include <dfg/flow.h>

#ifdef __cplusplus
extern "C" {
#endif

enum dfg_edit_op {
	DFG_EDIT_DEGREE = 1,	/* @comp's set runs @degree instances; hash
				 * flows into it repartition, keyed state
				 * moves with its keys */
	DFG_EDIT_UNFOLD,	/* @comp runs in a set of its own */
	DFG_EDIT_FOLD,		/* @comp may fold again (undoes UNFOLD) */
	DFG_EDIT_SUBSTITUTE,	/* @comp becomes type @type, same ports */
	DFG_EDIT_PARAM,		/* @comp's parameter @key becomes @value */
};

/**
 * struct dfg_plan_edit - one change to a running graph
 * @op:		DFG_EDIT_*
 * @comp:	the component's name in the graph
 * @degree:	DFG_EDIT_DEGREE: the new degree, 1..DFG_FLOW_MAX_DEGREE
 * @type:	DFG_EDIT_SUBSTITUTE: the new component type
 * @key:	DFG_EDIT_PARAM: the parameter
 * @value:	DFG_EDIT_PARAM: its new value, as a graph file would give it
 */
struct dfg_plan_edit {
	enum dfg_edit_op	op;
	const char		*comp;
	unsigned int		degree;
	const char		*type;
	const char		*key;
	const char		*value;
};

/*
 * Applies @n edits, in order, to @fg and its @plan (built with @flags of
 * dfg_plan_build()) and returns the new graph in *@fgp and its plan in
 * *@planp; the caller frees both. On a refusal returns -EINVAL and writes
 * the reason, NUL-terminated, to @why (@whylen bytes); nothing is changed.
 * -ENOMEM.
 */
int dfg_plan_edit_apply(const struct dfg_flow *fg, const struct dfg_plan *plan,
			unsigned int flags, const struct dfg_plan_edit *edits,
			unsigned int n, struct dfg_flow **fgp,
			struct dfg_plan **planp, char *why, size_t whylen);

/**
 * struct dfg_run_view_comp - one component of a running graph, all its
 * instances summed since the run started
 * @in_elems, @in_bytes, @out_elems, @out_bytes: flows through its ports
 * @cpu_samples: the module's profiling ticks while it ran
 * @key_skew:	for a component fed by a hash flow: the busiest instance's
 *		share of its input over the mean share (1.0: even); else 0.
 *		dfg_run()'s: over this plan's instances, in windows of at
 *		least 4096 elements per instance, all taking part: the
 *		lesser of the last two when the same instance led both,
 *		else (and until then) 1.0
 */
struct dfg_run_view_comp {
	__u64	in_elems, in_bytes;
	__u64	out_elems, out_bytes;
	__u64	cpu_samples;
	double	key_skew;
};

/**
 * struct dfg_run_view - what an evaluation point sees
 * @fg, @plan:	the graph and plan running now
 * @generation:	0 for the first plan, +1 for every applied change
 * @now_ns:	CLOCK_MONOTONIC
 * @comps:	per component of @fg (fg->ncomps entries)
 */
struct dfg_run_view {
	const struct dfg_flow		*fg;
	const struct dfg_plan		*plan;
	unsigned int			generation;
	__u64				now_ns;
	const struct dfg_run_view_comp	*comps;
};

/**
 * struct dfg_replanner - who decides, for dfg_run()
 * @eval:	called at each evaluation point with the view; returns 0 and
 *		sets *@edits and *@n (owned by the replanner, valid until the next
 *		call; *@n == 0: no change), or -errno to stop the run
 * @applied:	called once the edits of the last @eval took effect (@err 0,
 *		@generation the new plan's, @why how: "partial: N set
 *		instances ran on" or "full restart: " and the reason) or were
 *		refused (@err -EINVAL and @why); may be NULL
 * @ctx:	passed to both
 */
struct dfg_replanner {
	int	(*eval)(void *ctx, const struct dfg_run_view *view,
			const struct dfg_plan_edit **edits, unsigned int *n);
	void	(*applied)(void *ctx, unsigned int generation, int err,
			   const char *why);
	void	*ctx;
};

#ifdef __cplusplus
}
#endif

#endif /* _DFG_REPLAN_H */
