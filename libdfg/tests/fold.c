// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: folding (procedure 400) and plans (<dfg/flow.h>).
 * The patent's examples (Fig. 2B, Fig. 3), each folding constraint
 * violated in turn, manual sets, --no-fold, the plan's boundary flows and
 * phases, the plan as DOT, and a property test over random DAGs: sets
 * cover the graph without overlap, every constraint holds, every set is
 * as large as the procedure makes it, roots come in topological order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <graphviz/cgraph.h>

#include <dfg/flow.h>

#include "kselftest_harness.h"

#define EXAMPLES	TEST_DIR "/../../examples/graphs/"

/* The sets as "a b c|d|e f", members in plan order; caller frees. */
static char *sets_str(const struct dfg_plan *p)
{
	size_t len = 0, cap = 4096;
	char *s = malloc(cap);
	unsigned int i, k;

	if (!s)
		return NULL;
	s[0] = '\0';
	for (i = 0; i < p->nsets; i++) {
		for (k = 0; k < p->sets[i].nmembers; k++)
			len += snprintf(s + len, cap - len, "%s%s",
					k ? " " : (i ? "|" : ""),
					p->graph->comps[p->sets[i].members[k]].name);
	}
	return s;
}

/* Parses @text, plans it with @flags, compares the sets with @want. */
static int fold_text(struct __test_metadata *_metadata, const char *text,
		     unsigned int flags, const char *want)
{
	struct dfg_flow_errors *errs = NULL;
	struct dfg_plan *plan;
	struct dfg_flow *fg;
	char *got;
	int ret;

	ret = dfg_flow_parse(text, strlen(text), "t.dot", NULL, &fg, &errs);
	if (errs)
		dfg_flow_errors_print(errs, stderr);
	dfg_flow_errors_free(errs);
	if (ret)
		return ret;
	ret = dfg_plan_build(fg, flags, &plan);
	if (ret) {
		dfg_flow_free(fg);
		return ret;
	}
	got = sets_str(plan);
	if (!got || strcmp(got, want)) {
		TH_LOG("%s\nwant %s\n got %s", text, want, got);
		ret = -EDOM;
	}
	free(got);
	dfg_plan_free(plan);
	dfg_flow_free(fg);
	return ret;
}

#define FOLD(text, flags, want) fold_text(_metadata, text, flags, want)

static unsigned int flow_index(const struct dfg_flow *fg, const char *src,
			       const char *dst)
{
	unsigned int i;

	for (i = 0; i < fg->nflows; i++)
		if (!strcmp(fg->comps[fg->flows[i].src].name, src) &&
		    !strcmp(fg->comps[fg->flows[i].dst].name, dst))
			return i;
	return ~0U;
}

/* Fig. 2B: 210 = {A B E F G C D}, 211 = {H}, 212 = {I J}. */
TEST(fig2b)
{
	struct dfg_plan *plan;
	const struct dfg_plan_set *s;
	struct dfg_flow *fg;
	char *got;

	ASSERT_EQ(0, dfg_flow_load(EXAMPLES "fig2.dot", NULL, &fg, NULL));
	ASSERT_EQ(0, dfg_plan_build(fg, 0, &plan));
	got = sets_str(plan);
	EXPECT_STREQ("204A 204B 204E 204F 204G 204C 204D|204H|204I 204J", got);
	free(got);
	ASSERT_EQ(3, plan->nsets);
	EXPECT_TRUE(plan->folded);
	EXPECT_EQ(3, plan->ninstances);

	s = &plan->sets[0];
	EXPECT_STREQ("s0", s->name);
	EXPECT_TRUE(s->foldable);
	EXPECT_EQ(0, s->nin_flows);
	ASSERT_EQ(2, s->nout_flows);
	EXPECT_EQ(flow_index(fg, "204F", "204H"), s->out_flows[0]);
	EXPECT_EQ(flow_index(fg, "204D", "204I"), s->out_flows[1]);
	EXPECT_EQ(6, s->ninternal_flows);

	s = &plan->sets[1];
	EXPECT_FALSE(s->foldable);
	ASSERT_EQ(1, s->nin_flows);
	EXPECT_EQ(flow_index(fg, "204F", "204H"), s->in_flows[0]);
	ASSERT_EQ(1, s->nout_flows);
	EXPECT_EQ(flow_index(fg, "204H", "204I"), s->out_flows[0]);

	s = &plan->sets[2];
	ASSERT_EQ(2, s->nin_flows);
	EXPECT_EQ(flow_index(fg, "204H", "204I"), s->in_flows[0]);
	EXPECT_EQ(flow_index(fg, "204D", "204I"), s->in_flows[1]);
	EXPECT_EQ(0, s->nout_flows);
	EXPECT_EQ(1, s->ninternal_flows);

	EXPECT_EQ(0, plan->set_of[dfg_flow_find(fg, "204D")]);
	EXPECT_EQ(1, plan->set_of[dfg_flow_find(fg, "204H")]);
	EXPECT_EQ(2, plan->set_of[dfg_flow_find(fg, "204J")]);
	ASSERT_EQ(1, plan->nphases);
	EXPECT_EQ(0, plan->phases[0].phase);
	EXPECT_EQ(3, plan->phases[0].nsets);
	dfg_plan_free(plan);

	/* Unfolded: one set per component (10 processes, not 3). */
	ASSERT_EQ(0, dfg_plan_build(fg, DFG_PLAN_NO_FOLD, &plan));
	EXPECT_FALSE(plan->folded);
	EXPECT_EQ(10, plan->nsets);
	EXPECT_EQ(10, plan->ninstances);
	got = sets_str(plan);
	EXPECT_STREQ("204A|204B|204E|204F|204G|204H|204C|204D|204I|204J",
		     got);
	free(got);
	dfg_plan_free(plan);
	dfg_flow_free(fg);
}

/* Fig. 3: three N-way components, 3N processes unfolded, N folded. */
TEST(fig3)
{
	struct dfg_plan *plan;
	struct dfg_flow *fg;
	char *got;

	ASSERT_EQ(0, dfg_flow_load(EXAMPLES "fig3.dot", NULL, &fg, NULL));
	ASSERT_EQ(0, dfg_plan_build(fg, 0, &plan));
	got = sets_str(plan);
	EXPECT_STREQ("304A 304B 304C", got);
	free(got);
	EXPECT_EQ(4, plan->sets[0].degree);
	EXPECT_EQ(4, plan->ninstances);
	dfg_plan_free(plan);
	ASSERT_EQ(0, dfg_plan_build(fg, DFG_PLAN_NO_FOLD, &plan));
	EXPECT_EQ(12, plan->ninstances);
	dfg_plan_free(plan);
	dfg_flow_free(fg);

	/* Serial files around it: repartitioning flows split the sets. */
	ASSERT_EQ(0,
		  dfg_flow_load(EXAMPLES "fig3-serial.dot", NULL, &fg, NULL));
	ASSERT_EQ(0, dfg_plan_build(fg, 0, &plan));
	got = sets_str(plan);
	EXPECT_STREQ("read|304A 304B 304C|write", got);
	free(got);
	EXPECT_EQ(6, plan->ninstances);
	dfg_plan_free(plan);
	dfg_flow_free(fg);
}

#define CHAIN(a, b, c, ab, bc) \
	"digraph {\n a [type=m " a "]\n b [type=m " b "]\n" \
	" c [type=m " c "]\n a -> b [" ab "]\n b -> c [" bc "]\n}\n"

/* a -> b -> c folds into one set until one constraint fails. */
TEST(constraints_in_turn)
{
	EXPECT_EQ(0, FOLD(CHAIN("", "", "", "", ""), 0, "a b c"));
	/* foldable only; a non-foldable component is alone */
	EXPECT_EQ(0, FOLD(CHAIN("", "foldable=false", "", "", ""), 0,
			       "a|b|c"));
	EXPECT_EQ(0, FOLD(CHAIN("foldable=false", "", "", "", ""), 0,
			       "a|b c"));
	EXPECT_EQ(0, FOLD(CHAIN("", "", "foldable=false", "", ""), 0,
			       "a b|c"));
	/* same phase */
	EXPECT_EQ(0, FOLD(CHAIN("", "phase=1", "phase=1", "", ""), 0,
			       "a|b c"));
	EXPECT_EQ(0, FOLD(CHAIN("", "", "phase=3", "", ""), 0,
			       "a b|c"));
	/* same degree (a different degree needs a repartitioning flow) */
	EXPECT_EQ(0, FOLD(CHAIN("", "degree=2", "degree=2",
				     "flow=roundrobin", ""), 0, "a|b c"));
	EXPECT_EQ(0, FOLD(CHAIN("degree=3", "degree=3", "",
				     "", "flow=gather"), 0, "a b|c"));
	/* straight flows only: every repartitioning kind, same degree */
	EXPECT_EQ(0, FOLD(CHAIN("", "", "", "flow=hash, key=k", ""), 0,
			       "a|b c"));
	EXPECT_EQ(0, FOLD(CHAIN("", "", "", "flow=roundrobin", ""), 0,
			       "a|b c"));
	EXPECT_EQ(0, FOLD(CHAIN("", "", "", "flow=broadcast", ""), 0,
			       "a|b c"));
	EXPECT_EQ(0, FOLD(CHAIN("", "", "", "", "flow=gather"), 0,
			       "a b|c"));
	/* root-only components are never folded below another */
	EXPECT_EQ(0, FOLD(CHAIN("", "role=root", "", "", ""), 0,
			       "a|b c"));
	EXPECT_EQ(0, FOLD(CHAIN("role=root", "", "", "", ""), 0,
			       "a b c"));
	/* manual sets */
	EXPECT_EQ(0, FOLD(CHAIN("set=x", "set=x", "", "", ""), 0,
			       "a b|c"));
	EXPECT_EQ(0, FOLD(CHAIN("", "set=x", "set=x", "", ""), 0,
			       "a|b c"));
	EXPECT_EQ(0, FOLD(CHAIN("set=x", "set=y", "set=x", "", ""), 0,
			       "a|b|c"));
	EXPECT_EQ(0, FOLD(CHAIN("set=x", "set=x", "set=x", "", ""), 0,
			       "a b c"));
	/* --no-fold */
	EXPECT_EQ(0, FOLD(CHAIN("", "", "", "", ""), DFG_PLAN_NO_FOLD,
			       "a|b|c"));
}

/* A multi-input component folds only with all its upstream components. */
TEST(multi_input_closure)
{
	/* two sources: c has an upstream outside either set */
	EXPECT_EQ(0, FOLD("digraph { a [type=m]; b [type=m]; "
			       "c [type=m]; a -> c; b -> c }", 0,
			       "a|b|c"));
	/* diamond: both upstream components are in the set */
	EXPECT_EQ(0, FOLD("digraph { a [type=m]; b [type=m]; "
			       "c [type=m]; d [type=m]; a -> b; a -> c; "
			       "b -> d; c -> d }", 0, "a b c d"));
	/* diamond with one arm non-foldable (Fig. 2's 204H, 204I) */
	EXPECT_EQ(0, FOLD("digraph { a [type=m]; b [type=m, "
			       "foldable=false]; c [type=m]; d [type=m]; "
			       "e [type=m]; a -> b; a -> c; b -> d; c -> d; "
			       "d -> e }", 0, "a c|b|d e"));
	/* all upstream in the set, but one input repartitions */
	EXPECT_EQ(0, FOLD("digraph { a [type=m]; b [type=m]; "
			       "c [type=m]; a -> b; a -> c; "
			       "b -> c [flow=hash, key=k] }", 0, "a b|c"));
	/* two flows from the one upstream component */
	EXPECT_EQ(0, FOLD("digraph { a [type=m]; b [type=m]; "
			       "a -> b [from_port=0]; a -> b [from_port=1] }",
			       0, "a b"));
	/* single input from another set's member: root of its own set */
	EXPECT_EQ(0, FOLD("digraph { a [type=m]; b [type=m, phase=1]; "
			       "c [type=m]; d [type=m, phase=1]; a -> b; "
			       "a -> c; b -> d }", 0, "a c|b d"));
}

TEST(phases_and_names)
{
	const char *text =
		"digraph {\n"
		" r [type=m, set=io]; m [type=m, phase=2]; w [type=m, phase=2]\n"
		" x [type=m, set=io, phase=5]\n"
		" r -> m; m -> w; w -> x }\n";
	struct dfg_plan *plan;
	struct dfg_flow *fg;

	ASSERT_EQ(0, dfg_flow_parse(text, strlen(text), "t.dot", NULL, &fg,
				    NULL));
	ASSERT_EQ(0, dfg_plan_build(fg, 0, &plan));
	ASSERT_EQ(3, plan->nsets);
	EXPECT_STREQ("io", plan->sets[0].name);
	EXPECT_STREQ("s1", plan->sets[1].name);
	EXPECT_STREQ("io.2", plan->sets[2].name);
	ASSERT_EQ(3, plan->nphases);
	EXPECT_EQ(0, plan->phases[0].phase);
	EXPECT_EQ(2, plan->phases[1].phase);
	EXPECT_EQ(5, plan->phases[2].phase);
	ASSERT_EQ(1, plan->phases[1].nsets);
	EXPECT_EQ(1, plan->phases[1].sets[0]);
	EXPECT_EQ(2, plan->sets[1].nmembers);
	EXPECT_EQ(-EINVAL, dfg_plan_build(fg, 1U << 7, &plan));
	EXPECT_EQ(-EINVAL, dfg_plan_build(NULL, 0, &plan));
	EXPECT_EQ(-EINVAL, dfg_plan_build(fg, 0, NULL));
	dfg_plan_free(plan);
	dfg_plan_free(NULL);
	dfg_flow_free(fg);
}

/* The plan as DOT: libcgraph reads it back, one cluster per set. */
TEST(plan_dot)
{
	unsigned int clusters = 0, i;
	struct dfg_plan *plan;
	struct dfg_flow *fg;
	Agraph_t *g, *sub;
	char *text = NULL;
	size_t len;
	FILE *f;

	ASSERT_EQ(0, dfg_flow_load(EXAMPLES "fig2.dot", NULL, &fg, NULL));
	ASSERT_EQ(0, dfg_plan_build(fg, 0, &plan));
	f = open_memstream(&text, &len);
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, dfg_plan_write_dot(plan, f));
	fclose(f);
	EXPECT_EQ(-EINVAL, dfg_plan_write_dot(NULL, stdout));
	EXPECT_EQ(-EINVAL, dfg_plan_write_dot(plan, NULL));

	g = agmemread(text);
	ASSERT_NE(NULL, g);
	EXPECT_EQ(10, agnnodes(g));
	EXPECT_EQ(10, agnedges(g));
	for (sub = agfstsubg(g); sub; sub = agnxtsubg(sub)) {
		char name[32];

		snprintf(name, sizeof(name), "cluster_%u", clusters);
		EXPECT_STREQ(name, agnameof(sub));
		EXPECT_EQ(plan->sets[clusters].nmembers, agnnodes(sub));
		for (i = 0; i < plan->sets[clusters].nmembers; i++) {
			const char *m =
				fg->comps[plan->sets[clusters].members[i]].name;

			EXPECT_NE(NULL, agnode(sub, (char *)m, 0));
		}
		clusters++;
	}
	EXPECT_EQ(3, clusters);
	agclose(g);
	free(text);
	dfg_plan_free(plan);
	dfg_flow_free(fg);
}

/* ------------------------------------------------------------------------
 * Random DAGs
 * ------------------------------------------------------------------------
 */

static unsigned long long rng;

static unsigned int rnd(unsigned int n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (rng >> 33) % n;
}

static const char *random_kind(unsigned int src_deg, unsigned int dst_deg)
{
	static const char *const kinds[] = {
		"flow=hash, key=k", "flow=roundrobin", "flow=broadcast",
	};
	unsigned int r = rnd(12);

	if (dst_deg == 1 && r == 0)
		return "flow=gather";
	if (r < 2 || src_deg != dst_deg)
		return kinds[r % 3];
	return "";
}

/*
 * A random DAG of 1..40 components as DOT text: mostly a forest (each
 * component fed by one earlier one) plus a few extra flows that make
 * multi-input components; degrees 1 or 2, mostly inherited; phases
 * non-decreasing; some non-foldable, root-only or pinned components; flow
 * kinds legal for the two degrees, mostly straight.
 */
static char *random_graph(unsigned int *ncomps)
{
	unsigned int n = 1 + rnd(40), i, j, deg[40], phase[40], parent[40];
	size_t cap = 1 << 16, len = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	len += snprintf(s + len, cap - len, "digraph r {\n");
	for (i = 0; i < n; i++) {
		parent[i] = i && rnd(5) ? rnd(i) : i;
		deg[i] = parent[i] != i && rnd(6) ? deg[parent[i]] :
						     1 + (rnd(4) == 0);
		phase[i] = i ? phase[i - 1] + (rnd(12) == 0) : 0;
		len += snprintf(s + len, cap - len,
				" c%u [type=m, degree=%u, phase=%u%s%s%s]\n",
				i, deg[i], phase[i],
				rnd(12) ? "" : ", foldable=false",
				rnd(15) ? "" : ", role=root",
				rnd(12) ? "" : (rnd(2) ? ", set=p" : ", set=q"));
	}
	for (j = 0; j < n; j++) {
		for (i = 0; i < j; i++) {
			if (i != parent[j] && rnd(3 * n))
				continue;
			len += snprintf(s + len, cap - len,
					" c%u -> c%u [%s]\n", i, j,
					random_kind(deg[i], deg[j]));
		}
	}
	snprintf(s + len, cap - len, "}\n");
	*ncomps = n;
	return s;
}

static int same_pin(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/*
 * Could @c have joined set @s (rooted at @root) given the final
 * assignment? Written from the patent's constraints, not from fold.c.
 */
static int could_join(const struct dfg_plan *p, unsigned int c,
		      unsigned int s)
{
	const struct dfg_flow *fg = p->graph;
	const struct dfg_flow_comp *x = &fg->comps[c];
	const struct dfg_flow_comp *r = &fg->comps[p->sets[s].members[0]];
	unsigned int i, from_set = 0, straight_from_set = 0;

	if (!r->foldable || !x->foldable || !x->interior)
		return 0;
	if (x->degree != r->degree || x->phase != r->phase ||
	    !same_pin(x->pin, r->pin))
		return 0;
	for (i = 0; i < fg->nflows; i++) {
		const struct dfg_flow_edge *f = &fg->flows[i];

		if (f->dst != c || p->set_of[f->src] != s)
			continue;
		from_set++;
		straight_from_set += f->kind == DFG_FLOW_STRAIGHT;
	}
	if (!from_set || straight_from_set != from_set)
		return 0;
	return x->nin_flows == 1 || from_set == x->nin_flows;
}

static void check_plan(struct __test_metadata *_metadata,
		       const struct dfg_plan *p)
{
	const struct dfg_flow *fg = p->graph;
	unsigned int n = fg->ncomps, s, k, i, seen = 0, instances = 0;
	unsigned int *pos = calloc(n, sizeof(*pos));
	unsigned char *member = calloc(n, 1);

	ASSERT_NE(NULL, pos);
	ASSERT_NE(NULL, member);
	for (k = 0; k < n; k++)
		pos[fg->topo[k]] = k;
	/* topological order */
	for (i = 0; i < fg->nflows; i++)
		ASSERT_LT(pos[fg->flows[i].src], pos[fg->flows[i].dst]);

	for (s = 0; s < p->nsets; s++) {
		const struct dfg_plan_set *set = &p->sets[s];
		const struct dfg_flow_comp *r = &fg->comps[set->members[0]];

		ASSERT_EQ(s, set->index);
		ASSERT_LE(1, set->nmembers);
		instances += set->degree;
		EXPECT_EQ(r->degree, set->degree);
		EXPECT_EQ(r->phase, set->phase);
		/* the root: first component of topo order not in an earlier set */
		for (k = 0; k < pos[r->index]; k++)
			ASSERT_LT(p->set_of[fg->topo[k]], s);
		if (!r->foldable)
			ASSERT_EQ(1, set->nmembers);
		for (k = 0; k < set->nmembers; k++) {
			unsigned int c = set->members[k];
			const struct dfg_flow_comp *x = &fg->comps[c];

			/* no overlap, set_of agrees, topological order */
			ASSERT_EQ(0, member[c]);
			member[c] = 1;
			seen++;
			ASSERT_EQ(s, p->set_of[c]);
			if (k)
				ASSERT_LT(pos[set->members[k - 1]], pos[c]);
			EXPECT_EQ(set->degree, x->degree);
			EXPECT_EQ(set->phase, x->phase);
			EXPECT_TRUE(same_pin(r->pin, x->pin));
			if (!k)
				continue;
			/* interior members passed every constraint */
			EXPECT_TRUE(x->foldable);
			EXPECT_TRUE(x->interior);
			EXPECT_TRUE(could_join(p, c, s));
		}
		/* boundary flows */
		for (i = 0; i < set->nin_flows; i++) {
			const struct dfg_flow_edge *f =
				&fg->flows[set->in_flows[i]];

			EXPECT_EQ(set->members[0], f->dst);
			EXPECT_NE(s, p->set_of[f->src]);
		}
		for (i = 0; i < set->nout_flows; i++) {
			const struct dfg_flow_edge *f =
				&fg->flows[set->out_flows[i]];

			EXPECT_EQ(s, p->set_of[f->src]);
			EXPECT_NE(s, p->set_of[f->dst]);
		}
		for (i = 0; i < set->ninternal_flows; i++) {
			const struct dfg_flow_edge *f =
				&fg->flows[set->internal_flows[i]];

			EXPECT_EQ(s, p->set_of[f->src]);
			EXPECT_EQ(s, p->set_of[f->dst]);
			if (p->folded)
				EXPECT_EQ(DFG_FLOW_STRAIGHT, f->kind);
		}
	}
	EXPECT_EQ(n, seen);
	EXPECT_EQ(instances, p->ninstances);

	for (i = 0; i < fg->nflows; i++) {
		const struct dfg_flow_edge *f = &fg->flows[i];
		unsigned int a = p->set_of[f->src], b = p->set_of[f->dst];

		/* sets come in an order the flows respect */
		EXPECT_LE(a, b);
		/*
		 * Maximal: a component downstream of a set, still unassigned
		 * when that set closed (so in a later set), could not join.
		 */
		if (p->folded && a < b)
			EXPECT_FALSE(could_join(p, f->dst, a));
	}

	/* phases: increasing, every set once, in set order */
	for (k = 0, seen = 0; k < p->nphases; k++) {
		if (k)
			EXPECT_LT(p->phases[k - 1].phase, p->phases[k].phase);
		for (i = 0; i < p->phases[k].nsets; i++) {
			EXPECT_EQ(p->phases[k].phase,
				  p->sets[p->phases[k].sets[i]].phase);
			if (i)
				EXPECT_LT(p->phases[k].sets[i - 1],
					  p->phases[k].sets[i]);
			seen++;
		}
	}
	EXPECT_EQ(p->nsets, seen);
	free(pos);
	free(member);
}

TEST(random_dags)
{
	unsigned int round, multi = 0, total_sets = 0, total_comps = 0;

	for (round = 0; round < 400; round++) {
		struct dfg_plan *plan, *again, *unfolded;
		struct dfg_flow_errors *errs = NULL;
		struct dfg_flow *fg;
		unsigned int n, i;
		char *text;

		rng = round + 1;
		text = random_graph(&n);
		ASSERT_NE(NULL, text);
		if (dfg_flow_parse(text, strlen(text), "r.dot", NULL, &fg,
				   &errs)) {
			dfg_flow_errors_print(errs, stderr);
			TH_LOG("round %u:\n%s", round, text);
		}
		ASSERT_NE(NULL, fg);
		ASSERT_EQ(n, fg->ncomps);

		ASSERT_EQ(0, dfg_plan_build(fg, 0, &plan));
		check_plan(_metadata, plan);
		ASSERT_EQ(0, dfg_plan_build(fg, DFG_PLAN_NO_FOLD, &unfolded));
		check_plan(_metadata, unfolded);
		EXPECT_EQ(n, unfolded->nsets);
		EXPECT_LE(plan->nsets, unfolded->nsets);
		/* deterministic */
		ASSERT_EQ(0, dfg_plan_build(fg, 0, &again));
		ASSERT_EQ(plan->nsets, again->nsets);
		for (i = 0; i < n; i++)
			EXPECT_EQ(plan->set_of[i], again->set_of[i]);
		for (i = 0; i < plan->nsets; i++)
			multi += plan->sets[i].nmembers > 1;
		total_sets += plan->nsets;
		total_comps += n;
		if (!_metadata->passed) {
			TH_LOG("round %u failed:\n%s", round, text);
			free(text);
			break;
		}
		dfg_plan_free(again);
		dfg_plan_free(unfolded);
		dfg_plan_free(plan);
		dfg_flow_free(fg);
		free(text);
	}
	TH_LOG("%u components in %u sets, %u sets of several", total_comps,
	       total_sets, multi);
	/* the generator must exercise folding, not just singletons */
	EXPECT_LT(total_sets * 5, total_comps * 4);
	EXPECT_LT(500, multi);
}

TEST_HARNESS_MAIN
