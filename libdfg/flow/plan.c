// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: execution plans. A plan is a graph's partition into sets
 * (procedure 400, or one set per component), with what an executor needs
 * per set: members in topological order, the flows crossing its boundary,
 * the flows inside it; and the sets of each phase. Also writes a plan as
 * DOT, with libcgraph.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <graphviz/cgraph.h>

#include "flow_impl.h"

struct fg_plan {
	struct dfg_plan	pub;
	struct fg_pool	pool;	/* everything of the plan, itself included */
};

void dfg_plan_free(struct dfg_plan *plan)
{
	struct fg_pool pool;

	if (!plan)
		return;
	pool = fg_container_of(plan, struct fg_plan, pub)->pool;
	fg_pool_free(&pool);
}

/* Names: "s<index>", or the manual set, "<pin>.<n>" if it had to split. */
static const char *set_name(struct fg_pool *pool, const struct dfg_plan *p,
			    unsigned int s, const char *pin)
{
	unsigned int i, same = 0;
	char buf[64];

	if (!pin) {
		snprintf(buf, sizeof(buf), "s%u", s);
		return fg_strdup(pool, buf);
	}
	for (i = 0; i < s; i++) {
		const struct dfg_flow_comp *r =
			&p->graph->comps[p->sets[i].members[0]];

		same += r->pin && !strcmp(r->pin, pin);
	}
	if (!same)
		return pin;
	snprintf(buf, sizeof(buf), ".%u", same + 1);
	{
		size_t len = strlen(pin);
		char *name = fg_alloc(pool, len + strlen(buf) + 1);

		if (name) {
			memcpy(name, pin, len);
			strcpy(name + len, buf);
		}
		return name;
	}
}

static int fill_set(struct fg_pool *pool, struct dfg_plan *p,
		    struct dfg_plan_set *set, unsigned int s)
{
	const struct dfg_flow *fg = p->graph;
	unsigned int *members, *in, *out, *internal, k, m = 0;

	members = fg_allocv(pool, fg->ncomps + 1, sizeof(*members));
	in = fg_allocv(pool, fg->nflows + 1, sizeof(*in));
	out = fg_allocv(pool, fg->nflows + 1, sizeof(*out));
	internal = fg_allocv(pool, fg->nflows + 1, sizeof(*internal));
	if (!members || !in || !out || !internal)
		return -ENOMEM;
	for (k = 0; k < fg->ncomps; k++)
		if (p->set_of[fg->topo[k]] == s)
			members[m++] = fg->topo[k];
	set->index = s;
	set->members = members;
	set->nmembers = m;
	set->degree = fg->comps[members[0]].degree;
	set->phase = fg->comps[members[0]].phase;
	set->foldable = fg->comps[members[0]].foldable;
	set->in_flows = in;
	set->out_flows = out;
	set->internal_flows = internal;
	for (k = 0; k < fg->nflows; k++) {
		const struct dfg_flow_edge *f = &fg->flows[k];
		bool src_in = p->set_of[f->src] == s;
		bool dst_in = p->set_of[f->dst] == s;

		if (src_in && dst_in)
			internal[set->ninternal_flows++] = k;
		else if (dst_in)
			in[set->nin_flows++] = k;
		else if (src_in)
			out[set->nout_flows++] = k;
	}
	set->name = set_name(pool, p, s, fg->comps[members[0]].pin);
	return set->name ? 0 : -ENOMEM;
}

static int fill_phases(struct fg_pool *pool, struct dfg_plan *p)
{
	struct dfg_plan_phase *phases;
	unsigned int s, k, n = 0, last;

	phases = fg_allocv(pool, p->nsets + 1, sizeof(*phases));
	if (!phases)
		return -ENOMEM;
	/* Phases in increasing order: repeatedly the next larger one. */
	for (last = 0;; last++) {
		unsigned int next = ~0U, *sets;

		for (s = 0; s < p->nsets; s++)
			if (p->sets[s].phase >= last &&
			    p->sets[s].phase < next)
				next = p->sets[s].phase;
		if (next == ~0U)
			break;
		sets = fg_allocv(pool, p->nsets, sizeof(*sets));
		if (!sets)
			return -ENOMEM;
		phases[n].phase = next;
		phases[n].sets = sets;
		for (k = 0; k < p->nsets; k++)
			if (p->sets[k].phase == next)
				sets[phases[n].nsets++] = k;
		n++;
		last = next;
	}
	p->phases = phases;
	p->nphases = n;
	return 0;
}

int dfg_plan_build(const struct dfg_flow *fg, unsigned int flags,
		   struct dfg_plan **planp)
{
	struct fg_pool pool = { 0 };
	struct dfg_plan_set *sets;
	struct fg_plan *plan;
	unsigned int *set_of, s, k;
	int ret = -ENOMEM;

	if (planp)
		*planp = NULL;
	if (!fg || !planp || (flags & ~DFG_PLAN_ALL))
		return -EINVAL;
	plan = fg_alloc(&pool, sizeof(*plan));
	set_of = fg_allocv(&pool, fg->ncomps + 1, sizeof(*set_of));
	if (!plan || !set_of)
		goto err;
	plan->pub.graph = fg;
	plan->pub.set_of = set_of;
	plan->pub.folded = !(flags & DFG_PLAN_NO_FOLD);
	if (plan->pub.folded) {
		plan->pub.nsets = fg_fold(fg, set_of);
	} else {
		for (k = 0; k < fg->ncomps; k++)
			set_of[fg->topo[k]] = k;
		plan->pub.nsets = fg->ncomps;
	}
	sets = fg_allocv(&pool, plan->pub.nsets + 1, sizeof(*sets));
	if (!sets)
		goto err;
	plan->pub.sets = sets;
	for (s = 0; s < plan->pub.nsets; s++) {
		ret = fill_set(&pool, &plan->pub, &sets[s], s);
		if (ret)
			goto err;
		plan->pub.ninstances += sets[s].degree;
	}
	ret = fill_phases(&pool, &plan->pub);
	if (ret)
		goto err;
	plan->pool = pool;
	*planp = &plan->pub;
	return 0;
err:
	fg_pool_free(&pool);
	return ret;
}

/* Writing a plan as DOT */

static int set_attr(void *obj, const char *name, const char *value)
{
	return agsafeset(obj, (char *)name, (char *)value, "");
}

static int write_flow(Agraph_t *g, Agnode_t **nodes,
		      const struct dfg_plan *p, const struct dfg_flow_edge *f)
{
	const struct dfg_flow_comp *src = &p->graph->comps[f->src];
	const struct dfg_flow_comp *dst = &p->graph->comps[f->dst];
	Agedge_t *e;
	char label[256];
	int n;

	e = agedge(g, nodes[f->src], nodes[f->dst], NULL, 1);
	if (!e)
		return -ENOMEM;
	n = snprintf(label, sizeof(label), "%s", dfg_flow_kind_name(f->kind));
	if (f->key)
		n += snprintf(label + n, sizeof(label) - n, "(%s)", f->key);
	if (src->nout > 1 || dst->nin > 1)
		snprintf(label + n, sizeof(label) - n, " %s:%s",
			 src->out[f->src_port].name,
			 dst->in[f->dst_port].name);
	set_attr(e, "label", label);
	if (p->set_of[f->src] != p->set_of[f->dst])
		set_attr(e, "style", f->kind == DFG_FLOW_STRAIGHT ?
			 "bold" : "bold,dashed");
	return 0;
}

static int build_dot(Agraph_t *g, const struct dfg_plan *p, Agnode_t **nodes)
{
	const struct dfg_flow *fg = p->graph;
	unsigned int s, k;
	char buf[512];

	for (s = 0; s < p->nsets; s++) {
		const struct dfg_plan_set *set = &p->sets[s];
		Agraph_t *sub;

		snprintf(buf, sizeof(buf), "cluster_%u", s);
		sub = agsubg(g, buf, 1);
		if (!sub)
			return -ENOMEM;
		snprintf(buf, sizeof(buf), "%s: %u component%s, degree %u, phase %u%s",
			 set->name, set->nmembers, set->nmembers > 1 ? "s" : "",
			 set->degree, set->phase,
			 set->foldable ? "" : ", not foldable");
		set_attr(sub, "label", buf);
		set_attr(sub, "style", set->foldable ? "rounded" : "dashed");
		for (k = 0; k < set->nmembers; k++) {
			const struct dfg_flow_comp *c =
				&fg->comps[set->members[k]];
			Agnode_t *n = agnode(sub, (char *)c->name, 1);

			if (!n)
				return -ENOMEM;
			snprintf(buf, sizeof(buf), "%s\\n%s%s", c->name,
				 c->type, k ? "" : " (root)");
			set_attr(n, "label", buf);
			set_attr(n, "shape", "box");
			nodes[c->index] = n;
		}
	}
	for (k = 0; k < fg->nflows; k++)
		if (write_flow(g, nodes, p, &fg->flows[k]))
			return -ENOMEM;
	return 0;
}

int dfg_plan_write_dot(const struct dfg_plan *plan, FILE *f)
{
	Agdesc_t desc = Agdirected;
	Agnode_t **nodes;
	Agraph_t *g;
	int saved = errno, ret = -ENOMEM;
	char name[256];

	if (!plan || !f)
		return -EINVAL;
	nodes = calloc(plan->graph->ncomps + 1, sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	snprintf(name, sizeof(name), "%s_plan",
		 *plan->graph->name ? plan->graph->name : "graph");
	fg_cgraph_lock();
	g = agopen(name, desc, NULL);
	if (g) {
		set_attr(g, "label", plan->folded ?
			 "folded (procedure 400)" : "not folded");
		set_attr(g, "compound", "true");
		ret = build_dot(g, plan, nodes);
		if (!ret && (agwrite(g, f) || fflush(f)))
			ret = -EIO;
		agclose(g);
	}
	fg_cgraph_unlock();
	free(nodes);
	errno = saved;
	return ret;
}
