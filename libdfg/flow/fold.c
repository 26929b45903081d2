// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: procedure 400 of CN103778015 (Fig. 4), the greedy partition of a
 * dataflow graph's components into folded sets. Step numbers refer to the
 * patent's flowchart; the constraints are those of its section 2.2.1 and
 * claims 8, 10 and 12 (see <dfg/flow.h>).
 */
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "flow_impl.h"

#define UNASSIGNED	UINT_MAX

static bool same_pin(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * May @c join set @set, rooted at @root? It must be foldable and able to
 * be interior, match the root's degree, phase and manual set, be fed by
 * the set through straight flows only (and by at least one), and, with
 * several inputs, have every upstream component in the set (claim 8).
 */
static bool admissible(const struct dfg_flow *fg, unsigned int c,
		       unsigned int root, unsigned int set,
		       const unsigned int *set_of)
{
	const struct dfg_flow_comp *x = &fg->comps[c], *r = &fg->comps[root];
	bool linked = false;
	unsigned int i;

	if (!x->foldable || !x->interior)
		return false;
	if (x->degree != r->degree || x->phase != r->phase)
		return false;
	if (!same_pin(x->pin, r->pin))
		return false;
	for (i = 0; i < x->nin_flows; i++) {
		const struct dfg_flow_edge *f = &fg->flows[x->in_flows[i]];

		if (set_of[f->src] != set) {
			if (x->nin_flows > 1)
				return false;
			continue;
		}
		if (f->kind != DFG_FLOW_STRAIGHT)
			return false;
		linked = true;
	}
	return linked;
}

int fg_fold(const struct dfg_flow *fg, unsigned int *set_of)
{
	unsigned int n = fg->ncomps, first = 0, nsets = 0, k;

	for (k = 0; k < n; k++)			/* 402 */
		set_of[k] = UNASSIGNED;
	for (;;) {
		unsigned int root, set;
		bool grew;

		/*
		 * 404: the first unassigned component in topological order;
		 * all its upstream components are assigned already, so it
		 * is a source or fed by assigned components.
		 */
		while (first < n && set_of[fg->topo[first]] != UNASSIGNED)
			first++;
		if (first == n)			/* 414 -> 416 */
			break;
		root = fg->topo[first];
		set = nsets++;
		set_of[root] = set;
		if (!fg->comps[root].foldable)	/* 406: alone */
			continue;
		do {				/* 408 */
			grew = false;
			for (k = first + 1; k < n; k++) {
				unsigned int c = fg->topo[k];

				if (set_of[c] != UNASSIGNED ||
				    !admissible(fg, c, root, set, set_of))
					continue;
				set_of[c] = set;	/* 410, 412 */
				grew = true;
			}
		} while (grew);
	}
	return nsets;
}
