/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * What the executor (libdfg/run/) uses of comp/ beyond <dfg/component.h>:
 * the instance and its per-element call, inline because it runs once per
 * element of every direct call inside a set. Nothing else of comp/ is
 * for run/.
 */
#ifndef _DFG_COMP_RUN_H
#define _DFG_COMP_RUN_H

#include <errno.h>
#include <stdbool.h>

#include <dfg/component.h>

enum comp_phase {
	COMP_NEW,	/* created, init() not yet called */
	COMP_READY,	/* init() done: takes work */
	COMP_DONE,	/* shutdown() done */
	COMP_FAILED,	/* a callback failed; only destroy is left */
};

struct dfg_comp;

/*
 * A one-in, one-out step over a batch: what compute() would emit on
 * output 0 for each of @v[0..@n), without emitting it. The step works in
 * place: it leaves in @v[0..k), in order, what goes on (an element of @v
 * itself, or one the instance owns until its next call) and returns k;
 * a filter compacts its survivors, a map puts its new elements in. It
 * adds what its outputs have in bytes over its inputs (a dropped element
 * counts as its whole length less) to c->step_grew, for the executor's
 * byte counts. On a failure at @v[i] it sets c->step_err to the negative
 * errno (the instance failed, with its message, as __dfg_comp_failed()
 * does) and returns the k that went on out of @v[0..i), so that the
 * executor passes them on before it reports the failure, as one element
 * at a time would have. Built-in map, and filter with its rejects not
 * connected, have one (comp_batch_of()), so that a run of them inside a
 * set is called once per batch per member rather than once per element
 * (set.c).
 */
typedef unsigned int (*comp_batch_fn)(struct dfg_comp *c,
				      const struct dfg_elem **v,
				      unsigned int n);

/*
 * struct dfg_comp - an instance
 * @type:	its type (registered types are never freed)
 * @name:	instance name (owned)
 * @nr_in, @nr_out, @instance, @degree: from struct dfg_comp_attr
 * @params, @nr_params: copies of the parameters (one allocation, owned)
 * @state:	what init() made
 * @emit, @cookie: the executor's emit hook
 * @step:	its batch step, or NULL: compute() is then the only way in
 * @step_now:	with @step, what the executor calls for a batch on input 0
 *		(__dfg_comp_step()): while the instance takes elements
 *		there (ready, input 0 not ended), its step as made for its
 *		state after init() (a map of $0 hands the batch on as it
 *		is, a filter of a constant all or nothing); otherwise one
 *		that refuses with -EINVAL. The checks of a compute() call
 *		are thus made when the phase or input changes (comp.c),
 *		not per element or batch.
 * @step_err:	0, or the errno of the step's failure; the executor reads
 *		and clears it after each batch
 * @step_grew:	bytes the step's outputs had over its inputs (mod 2^64);
 *		the executor reads and clears it
 * @phase:	COMP_*
 * @inited:	init() succeeded, so fini() is due
 * @ended:	per input: end_input() was called for it
 * @emit_err:	last error dfg_emit() got from downstream, so a failure
 *		that only passes through is not blamed on this instance
 * @has_blip, @blip: the pending blip of a root that returned GOT_BLIP
 * @errmsg:	the failure message
 */
struct dfg_comp {
	const struct dfg_comp_type	*type;
	char				*name;
	unsigned int			nr_in, nr_out;
	unsigned int			instance, degree;
	struct dfg_param		*params;
	unsigned int			nr_params;
	void				*state;
	dfg_emit_fn			emit;
	void				*cookie;
	comp_batch_fn			step;
	comp_batch_fn			step_now;
	int				step_err;
	__u64				step_grew;
	enum comp_phase			phase;
	bool				inited;
	bool				*ended;
	int				emit_err;
	bool				has_blip;
	struct dfg_blip			blip;
	char				errmsg[DFG_COMP_ERRMSG_MAX];
};

/*
 * The executor's per-element call (libdfg/run/): dfg_comp_compute()
 * without its errno save and restore, which the executor, not a public
 * caller, has no use for; the checks are the same, a failure goes through
 * __dfg_comp_failed() as in dfg_comp_compute().
 */
int __dfg_comp_failed(struct dfg_comp *c, int ret);

static inline int __dfg_comp_compute(struct dfg_comp *c, unsigned int port,
				     const struct dfg_elem *e)
{
	int ret;

	if (__builtin_expect(c->phase != COMP_READY || port >= c->nr_in ||
			     c->ended[port] || !c->type->compute, 0))
		return -EINVAL;
	ret = c->type->compute(c, port, e);
	return __builtin_expect(ret < 0, 0) ? __dfg_comp_failed(c, ret) : ret;
}

/*
 * The executor's call of @c's step (c->step set) for a batch on input 0,
 * which must be its only input: the survivors in @v, their number
 * returned, c->step_err set on a failure, as comp_batch_fn says; -EINVAL
 * there when the instance does not take elements (not ready, input
 * ended), as __dfg_comp_compute().
 */
static inline unsigned int __dfg_comp_step(struct dfg_comp *c,
					   const struct dfg_elem **v,
					   unsigned int n)
{
	return c->step_now(c, v, n);
}

struct dfg_flow_typeinfo;

/* The registry as the graph loader's lookup (dfg_run_types()): fills
 * @info for type @type; 0 or -ENOENT. */
int comp_flow_typeinfo(const char *type, struct dfg_flow_typeinfo *info);

/* Instances of @t may run in a worker pool with other sets (registry.c). */
bool comp_type_poolable(const struct dfg_comp_type *t);

/* Can an instance of type @b take over the state of one of type @a? */
bool comp_types_share_state(const char *a, const char *b);

/*
 * dfg_emit() for libdfg's own callers (the built-ins' per-element paths):
 * the same checks and result, without a call into the exported symbol.
 */
static inline int __dfg_emit(struct dfg_comp *c, unsigned int port,
			     const struct dfg_elem *e)
{
	int ret;

	if (__builtin_expect(port >= c->nr_out || !e, 0))
		return dfg_comp_error(c, -EINVAL, "emit on output %u of %u",
				      port, c->nr_out);
	ret = c->emit(c, c->cookie, port, e);
	if (__builtin_expect(ret < 0, 0))
		c->emit_err = ret;
	return ret;
}

#endif /* _DFG_COMP_RUN_H */
