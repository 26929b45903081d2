// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: plan edits (<dfg/replan.h>). Each operation on a hash
 * job, edits in sequence, every refusal (unknown component, type or
 * parameter, a bad value, degree 0 and past the limit, a type whose
 * ports do not fit, a degree across a straight flow, FOLD of a component
 * not unfolded) with its reason and nothing returned, and a property
 * test: random edit lists either give a graph whose components and flows
 * keep their indices or are refused with a reason. And the region a
 * change affects (run_region_compute()): per edit, which sets are new,
 * which only border them, which are untouched, on one piece of a graph
 * and on two, with the same invariants over random edits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dfg/replan.h>
#include <dfg/run.h>

#include "kselftest_harness.h"
#include "../run/run.h"

static const char job[] =
	"digraph job {\n"
	"  gen [type=generate, count=100, pattern=\"k{}\"];\n"
	"  up [type=map, expr=\"$0\"];\n"
	"  cnt [type=count, degree=2];\n"
	"  fix [type=map, expr=\"$0\", degree=2];\n"
	"  out [type=write_lines, file=\"o.txt\"];\n"
	"  gen -> up;\n"
	"  up -> cnt [flow=hash, key=\"$0\"];\n"
	"  cnt -> fix;\n"
	"  fix -> out [flow=gather];\n"
	"}\n";

FIXTURE(g) {
	struct dfg_flow *fg;
	struct dfg_plan *plan;
	struct dfg_flow *nfg;
	struct dfg_plan *nplan;
	char why[256];
};

FIXTURE_SETUP(g)
{
	struct dfg_flow_errors *errs = NULL;

	ASSERT_EQ(0, dfg_flow_parse(job, strlen(job), "job.dot",
				    dfg_run_types(), &self->fg, &errs));
	ASSERT_EQ(0, dfg_plan_build(self->fg, 0, &self->plan));
	self->nfg = NULL;
	self->nplan = NULL;
}

FIXTURE_TEARDOWN(g)
{
	dfg_plan_free(self->nplan);
	dfg_flow_free(self->nfg);
	dfg_plan_free(self->plan);
	dfg_flow_free(self->fg);
}

static int apply(FIXTURE_DATA(g) *self, const struct dfg_plan_edit *e,
		 unsigned int n)
{
	dfg_plan_free(self->nplan);
	dfg_flow_free(self->nfg);
	self->nplan = NULL;
	self->nfg = NULL;
	strcpy(self->why, "untouched");
	return dfg_plan_edit_apply(self->fg, self->plan, 0, e, n, &self->nfg,
				   &self->nplan, self->why, sizeof(self->why));
}

static unsigned int comp(const struct dfg_flow *fg, const char *name)
{
	int c = dfg_flow_find(fg, name);

	return c < 0 ? ~0U : (unsigned int)c;
}

/* Same components and flows, same indices. */
static int same_shape(const struct dfg_flow *a, const struct dfg_flow *b)
{
	unsigned int i;

	if (a->ncomps != b->ncomps || a->nflows != b->nflows)
		return 0;
	for (i = 0; i < a->ncomps; i++)
		if (strcmp(a->comps[i].name, b->comps[i].name) ||
		    a->topo[i] != b->topo[i])
			return 0;
	for (i = 0; i < a->nflows; i++)
		if (a->flows[i].src != b->flows[i].src ||
		    a->flows[i].dst != b->flows[i].dst ||
		    a->flows[i].kind != b->flows[i].kind ||
		    a->flows[i].src_port != b->flows[i].src_port ||
		    a->flows[i].dst_port != b->flows[i].dst_port ||
		    (a->flows[i].key && strcmp(a->flows[i].key,
					       b->flows[i].key)))
			return 0;
	return 1;
}

TEST_F(g, nothing)
{
	ASSERT_EQ(0, apply(self, NULL, 0));
	EXPECT_TRUE(same_shape(self->fg, self->nfg));
	EXPECT_EQ(self->plan->nsets, self->nplan->nsets);
	EXPECT_EQ(self->nfg, self->nplan->graph);
	EXPECT_STREQ("", self->why);
}

/* 2 -> 4 behind the hash flow: the straight neighbour must follow. */
TEST_F(g, degree)
{
	struct dfg_plan_edit e[] = {
		{ .op = DFG_EDIT_DEGREE, .comp = "cnt", .degree = 4 },
		{ .op = DFG_EDIT_DEGREE, .comp = "fix", .degree = 4 },
	};
	unsigned int c;

	ASSERT_EQ(0, apply(self, e, 2));
	EXPECT_TRUE(same_shape(self->fg, self->nfg));
	c = comp(self->nfg, "cnt");
	EXPECT_EQ(4, self->nfg->comps[c].degree);
	EXPECT_EQ(4, self->nplan->sets[self->nplan->set_of[c]].degree);
	EXPECT_EQ(self->nplan->set_of[c],
		  self->nplan->set_of[comp(self->nfg, "fix")]);
	/* the old graph is as it was */
	EXPECT_EQ(2, self->fg->comps[c].degree);

	/* alone, the straight flow cnt -> fix refuses it */
	ASSERT_EQ(-EINVAL, apply(self, e, 1));
	EXPECT_TRUE(strstr(self->why, "degree") != NULL);
	EXPECT_EQ(NULL, self->nfg);
	EXPECT_EQ(NULL, self->nplan);
}

TEST_F(g, degree_bounds)
{
	struct dfg_plan_edit e = { .op = DFG_EDIT_DEGREE, .comp = "cnt" };

	ASSERT_EQ(-EINVAL, apply(self, &e, 1));
	EXPECT_STREQ("edit 0: 'cnt': degree 0 is not in 1..1024", self->why);
	e.degree = DFG_FLOW_MAX_DEGREE + 1;
	ASSERT_EQ(-EINVAL, apply(self, &e, 1));
	EXPECT_STREQ("edit 0: 'cnt': degree 1025 is not in 1..1024",
		     self->why);
	EXPECT_EQ(NULL, self->nplan);
}

TEST_F(g, unfold_fold)
{
	struct dfg_plan_edit e = { .op = DFG_EDIT_UNFOLD, .comp = "up" };
	unsigned int up, gen;
	struct dfg_flow *fg1;
	struct dfg_plan *p1;

	up = comp(self->fg, "up");
	gen = comp(self->fg, "gen");
	ASSERT_EQ(self->plan->set_of[gen], self->plan->set_of[up]);
	ASSERT_EQ(0, apply(self, &e, 1));
	EXPECT_TRUE(same_shape(self->fg, self->nfg));
	EXPECT_NE(self->nplan->set_of[gen], self->nplan->set_of[up]);
	EXPECT_EQ(1, self->nplan->sets[self->nplan->set_of[up]].nmembers);
	EXPECT_EQ(self->plan->nsets + 1, self->nplan->nsets);

	/* FOLD undoes it, on the edited graph */
	e.op = DFG_EDIT_FOLD;
	ASSERT_EQ(0, dfg_plan_edit_apply(self->nfg, self->nplan, 0, &e, 1,
					 &fg1, &p1, self->why,
					 sizeof(self->why)));
	EXPECT_EQ(self->plan->nsets, p1->nsets);
	EXPECT_EQ(p1->set_of[gen], p1->set_of[up]);
	dfg_plan_free(p1);
	dfg_flow_free(fg1);

	/* and is refused on one that was not unfolded */
	ASSERT_EQ(-EINVAL, apply(self, &e, 1));
	EXPECT_STREQ("edit 0: 'up' is not unfolded", self->why);
}

TEST_F(g, substitute)
{
	struct dfg_plan_edit e = {
		.op = DFG_EDIT_SUBSTITUTE, .comp = "up", .type = "filter",
	};
	unsigned int up = comp(self->fg, "up");

	/* filter takes expr too */
	ASSERT_EQ(0, apply(self, &e, 1));
	EXPECT_STREQ("filter", self->nfg->comps[up].type);
	EXPECT_STREQ("$0", dfg_flow_param(&self->nfg->comps[up], "expr"));

	e.type = "no_such_type";
	ASSERT_EQ(-EINVAL, apply(self, &e, 1));
	EXPECT_TRUE(strstr(self->why, "no_such_type") != NULL);
	EXPECT_EQ(NULL, self->nfg);

	/* a type mismatch: generate has no input port, and no expr */
	e.type = "generate";
	ASSERT_EQ(-EINVAL, apply(self, &e, 1));
	EXPECT_TRUE(strstr(self->why, "node 'up'") != NULL);
	EXPECT_EQ(NULL, self->nplan);
}

TEST_F(g, param)
{
	struct dfg_plan_edit e[] = {
		{ .op = DFG_EDIT_PARAM, .comp = "gen", .key = "count",
		  .value = "500" },
		{ .op = DFG_EDIT_PARAM, .comp = "gen", .key = "start",
		  .value = "7" },
	};
	unsigned int gen = comp(self->fg, "gen");

	ASSERT_EQ(0, apply(self, e, 2));
	EXPECT_STREQ("500", dfg_flow_param(&self->nfg->comps[gen], "count"));
	EXPECT_STREQ("7", dfg_flow_param(&self->nfg->comps[gen], "start"));
	EXPECT_STREQ("100", dfg_flow_param(&self->fg->comps[gen], "count"));

	e[0].value = "many";
	ASSERT_EQ(-EINVAL, apply(self, e, 2));
	EXPECT_TRUE(strstr(self->why, "attribute 'count'") != NULL);

	e[0].key = "nonsense";
	ASSERT_EQ(-EINVAL, apply(self, e, 1));
	EXPECT_TRUE(strstr(self->why, "nonsense") != NULL);

	e[0].value = NULL;
	ASSERT_EQ(-EINVAL, apply(self, e, 1));
	EXPECT_STREQ("edit 0: 'gen': no parameter or value", self->why);
}

TEST_F(g, refusals)
{
	struct dfg_plan_edit e[] = {
		{ .op = DFG_EDIT_UNFOLD, .comp = "up" },
		{ .op = DFG_EDIT_DEGREE, .comp = "ghost", .degree = 2 },
	};
	struct dfg_flow *fg1 = NULL;
	struct dfg_plan *p1 = NULL;

	/* one bad edit refuses the list */
	ASSERT_EQ(-EINVAL, apply(self, e, 2));
	EXPECT_STREQ("edit 1: unknown component 'ghost'", self->why);
	EXPECT_EQ(NULL, self->nfg);

	e[1].comp = NULL;
	ASSERT_EQ(-EINVAL, apply(self, e, 2));
	EXPECT_STREQ("edit 1: no component", self->why);

	e[1].comp = "up";
	e[1].op = (enum dfg_edit_op)99;
	ASSERT_EQ(-EINVAL, apply(self, e, 2));
	EXPECT_STREQ("edit 1: unknown operation 99", self->why);

	e[1].op = DFG_EDIT_SUBSTITUTE;
	ASSERT_EQ(-EINVAL, apply(self, e, 2));
	EXPECT_STREQ("edit 1: 'up': no type", self->why);

	/* arguments */
	EXPECT_EQ(-EINVAL, dfg_plan_edit_apply(NULL, self->plan, 0, e, 1,
					       &fg1, &p1, NULL, 0));
	EXPECT_EQ(-EINVAL, dfg_plan_edit_apply(self->fg, self->plan, 0, NULL,
					       1, &fg1, &p1, NULL, 0));
	EXPECT_EQ(-EINVAL, dfg_plan_edit_apply(self->fg, self->plan, 8, e, 1,
					       &fg1, &p1, NULL, 0));
	EXPECT_EQ(-EINVAL, dfg_plan_edit_apply(self->fg, self->plan, 0, e, 1,
					       NULL, &p1, NULL, 0));
	ASSERT_EQ(0, apply(self, e, 1));
	/* a plan of another graph */
	EXPECT_EQ(-EINVAL, dfg_plan_edit_apply(self->fg, self->nplan, 0, e, 1,
					       &fg1, &p1, self->why,
					       sizeof(self->why)));
	EXPECT_STREQ("invalid arguments", self->why);
	EXPECT_EQ(NULL, fg1);
	EXPECT_EQ(NULL, p1);
}

/* Names and values DOT would misread unless quoted. */
TEST(quoting)
{
	static const char text[] =
		"digraph \"a \\\"b\\\"\" {\n"
		"  \"node\" [type=generate, count=3, pattern=\"x \\\"{}\\\" ;]\"];\n"
		"  \"-> w\" [type=write_lines, file=\"o p.txt\"];\n"
		"  \"node\" -> \"-> w\";\n"
		"}\n";
	struct dfg_plan_edit e = {
		.op = DFG_EDIT_PARAM, .comp = "node", .key = "pattern",
		.value = "{} \"\\\\ ;",
	};
	struct dfg_flow *fg, *nfg;
	struct dfg_plan *plan, *nplan;
	char why[128];

	ASSERT_EQ(0, dfg_flow_parse(text, strlen(text), "q.dot",
				    dfg_run_types(), &fg, NULL));
	ASSERT_EQ(0, dfg_plan_build(fg, DFG_PLAN_NO_FOLD, &plan));
	ASSERT_EQ(0, dfg_plan_edit_apply(fg, plan, DFG_PLAN_NO_FOLD, NULL, 0,
					 &nfg, &nplan, why, sizeof(why)));
	EXPECT_STREQ(fg->name, nfg->name);
	EXPECT_STREQ("x \"{}\" ;]", dfg_flow_param(&nfg->comps[0], "pattern"));
	EXPECT_STREQ("-> w", nfg->comps[1].name);
	EXPECT_FALSE(nplan->folded);
	EXPECT_EQ(2, nplan->nsets);
	dfg_plan_free(nplan);
	dfg_flow_free(nfg);
	ASSERT_EQ(0, dfg_plan_edit_apply(fg, plan, DFG_PLAN_NO_FOLD, &e, 1,
					 &nfg, &nplan, why, sizeof(why)));
	EXPECT_STREQ(e.value, dfg_flow_param(&nfg->comps[0], "pattern"));
	dfg_plan_free(nplan);
	dfg_flow_free(nfg);
	/* a value no graph file can hold */
	e.value = "{}\\";
	ASSERT_EQ(-EINVAL, dfg_plan_edit_apply(fg, plan, DFG_PLAN_NO_FOLD, &e,
					       1, &nfg, &nplan, why,
					       sizeof(why)));
	EXPECT_STREQ("edit 0: 'node': parameter 'pattern' cannot be written in a graph file",
		     why);
	e.op = DFG_EDIT_SUBSTITUTE;
	e.type = "gen\\\nerate";
	ASSERT_EQ(-EINVAL, dfg_plan_edit_apply(fg, plan, DFG_PLAN_NO_FOLD, &e,
					       1, &nfg, &nplan, why,
					       sizeof(why)));
	EXPECT_STREQ("edit 0: 'node': type 'gen\\\nerate' cannot be written in a graph file",
		     why);
	dfg_plan_free(plan);
	dfg_flow_free(fg);
}

/*
 * Random edit lists: accepted ones keep every index and apply what they
 * say; refused ones give a reason and nothing else.
 */
TEST_F(g, random)
{
	static const char *const names[] = { "gen", "up", "cnt", "fix", "out",
					     "nope" };
	static const char *const types[] = { "map", "filter", "count",
					     "write_lines", "gen" };
	unsigned int seed = 14, round, accepted = 0;

	for (round = 0; round < 2000; round++) {
		struct dfg_plan_edit e[4];
		unsigned int n = 1 + rand_r(&seed) % 4, i, c;

		memset(e, 0, sizeof(e));
		for (i = 0; i < n; i++) {
			e[i].op = (enum dfg_edit_op)(1 + rand_r(&seed) % 5);
			e[i].comp = names[rand_r(&seed) % 6];
			e[i].degree = rand_r(&seed) % 5;
			e[i].type = types[rand_r(&seed) % 5];
			e[i].key = "expr";
			e[i].value = "$0";
		}
		if (apply(self, e, n)) {
			ASSERT_NE(0, self->why[0]);
			ASSERT_STRNE("untouched", self->why);
			ASSERT_EQ(NULL, self->nfg);
			ASSERT_EQ(NULL, self->nplan);
			continue;
		}
		accepted++;
		ASSERT_TRUE(same_shape(self->fg, self->nfg));
		for (i = 0; i < n; i++) {
			c = comp(self->nfg, e[i].comp);
			if (e[i].op == DFG_EDIT_DEGREE)
				ASSERT_GE(self->nfg->comps[c].degree, 1);
		}
		c = comp(self->nfg, "cnt");
		ASSERT_EQ(self->nfg->comps[c].degree,
			  self->nfg->comps[comp(self->nfg, "fix")].degree);
	}
	EXPECT_GT(accepted, 50);
	TH_LOG("%u of 2000 edit lists accepted", accepted);
}

/* ---- The region a change affects ----------------------------------- */

/*
 * What every region holds: the kinds add up to the new plan, a kept or
 * rewired set is its old set as it was, a rewired one has a new
 * neighbour and a kept one none, every new set is in the closed region,
 * and the old sets no new set continues are the stopped ones.
 */
static int region_holds(const struct run_region *r,
			const struct dfg_flow *of, const struct dfg_plan *op,
			const struct dfg_flow *nf, const struct dfg_plan *np)
{
	unsigned int s, i, f, inst = 0, kept_inst = 0, boundary = 0;
	bool *nb_new = calloc(np->nsets + 1, sizeof(bool));

	if (!nb_new)
		return 0;
	for (f = 0; f < nf->nflows; f++) {
		unsigned int a = np->set_of[nf->flows[f].src];
		unsigned int b = np->set_of[nf->flows[f].dst];

		if (a == b)
			continue;
		if ((r->kind[a] == RUN_REGION_NEW) !=
		    (r->kind[b] == RUN_REGION_NEW))
			boundary++;
		if (r->kind[a] == RUN_REGION_NEW)
			nb_new[b] = true;
		if (r->kind[b] == RUN_REGION_NEW)
			nb_new[a] = true;
	}
	for (s = 0; s < np->nsets; s++) {
		const struct dfg_plan_set *ps = &np->sets[s];

		if (r->kind[s] >= RUN_REGION_NKINDS)
			goto bad;
		inst += ps->degree;
		if (r->kind[s] == RUN_REGION_NEW) {
			if (r->old[s] != ~0U || !r->closed[s])
				goto bad;
			continue;
		}
		kept_inst += ps->degree;
		if (r->old[s] >= op->nsets ||
		    op->sets[r->old[s]].nmembers != ps->nmembers ||
		    op->sets[r->old[s]].degree != ps->degree ||
		    (r->kind[s] == RUN_REGION_REWIRED) != nb_new[s])
			goto bad;
		for (i = 0; i < ps->nmembers; i++)
			if (op->set_of[ps->members[i]] != r->old[s] ||
			    strcmp(of->comps[ps->members[i]].type,
				   nf->comps[ps->members[i]].type))
				goto bad;
	}
	free(nb_new);
	return r->sets[0] + r->sets[1] + r->sets[2] == np->nsets &&
	       r->inst[0] + r->inst[1] + r->inst[2] == inst &&
	       inst == np->ninstances &&
	       r->stopped_inst == op->ninstances - kept_inst &&
	       r->boundary == boundary &&
	       (r->sets[RUN_REGION_NEW] || !r->closed_inst);
bad:
	free(nb_new);
	return 0;
}

static int region_of(FIXTURE_DATA(g) *self, struct run_region *r)
{
	int ret = run_region_compute(r, self->fg, self->plan, self->nfg,
				     self->nplan);

	if (!ret && !region_holds(r, self->fg, self->plan, self->nfg,
				  self->nplan))
		ret = -EPROTO;
	return ret;
}

/* The kind of the new plan's set that holds component @name. */
static unsigned int kind_of(FIXTURE_DATA(g) *self, const struct run_region *r,
			    const char *name)
{
	return r->kind[self->nplan->set_of[comp(self->nfg, name)]];
}

TEST_F(g, region_nothing)
{
	struct run_region r;

	ASSERT_EQ(0, apply(self, NULL, 0));
	ASSERT_EQ(0, region_of(self, &r));
	EXPECT_EQ(self->nplan->nsets, r.sets[RUN_REGION_KEPT]);
	EXPECT_EQ(0, r.sets[RUN_REGION_NEW] + r.sets[RUN_REGION_REWIRED]);
	EXPECT_EQ(0, r.stopped_sets);
	EXPECT_EQ(0, r.boundary);
	EXPECT_EQ(0, r.closed_inst);
	run_region_free(&r);
}

/* cnt and fix 2 -> 4: their set is new; the hash flow's producer and
 * the gather's consumer border it. */
TEST_F(g, region_degree)
{
	struct dfg_plan_edit e[] = {
		{ .op = DFG_EDIT_DEGREE, .comp = "cnt", .degree = 4 },
		{ .op = DFG_EDIT_DEGREE, .comp = "fix", .degree = 4 },
	};
	struct run_region r;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	ASSERT_EQ(0, apply(self, e, 2));
	ASSERT_EQ(0, region_of(self, &r));
	EXPECT_EQ(RUN_REGION_NEW, kind_of(self, &r, "cnt"));
	EXPECT_EQ(RUN_REGION_REWIRED, kind_of(self, &r, "up"));
	EXPECT_EQ(RUN_REGION_REWIRED, kind_of(self, &r, "out"));
	EXPECT_EQ(1, r.sets[RUN_REGION_NEW]);
	EXPECT_EQ(4, r.inst[RUN_REGION_NEW]);
	EXPECT_EQ(1, r.stopped_sets);
	EXPECT_EQ(2, r.stopped_inst);
	EXPECT_EQ(2, r.boundary);
	EXPECT_EQ(self->nplan->ninstances, r.closed_inst);

	f = open_memstream(&text, &len);
	ASSERT_NE(NULL, f);
	run_region_print(&r, self->plan, self->nplan, f);
	fclose(f);
	EXPECT_TRUE(strstr(text, "affected: ") == text);
	EXPECT_TRUE(strstr(text, "; at the boundary: ") != NULL);
	EXPECT_TRUE(strstr(text, "untouched") == NULL);
	EXPECT_TRUE(strstr(text, "; stopped (old plan): ") != NULL);
	EXPECT_EQ('\n', text[len - 1]);
	free(text);
	run_region_free(&r);
}

/* up becomes a filter: its set is new, the next borders it, the sink is
 * untouched. */
TEST_F(g, region_substitute)
{
	struct dfg_plan_edit e = {
		.op = DFG_EDIT_SUBSTITUTE, .comp = "up", .type = "filter",
	};
	struct run_region r;

	ASSERT_EQ(0, apply(self, &e, 1));
	ASSERT_EQ(0, region_of(self, &r));
	EXPECT_EQ(RUN_REGION_NEW, kind_of(self, &r, "gen"));
	EXPECT_EQ(RUN_REGION_REWIRED, kind_of(self, &r, "cnt"));
	EXPECT_EQ(RUN_REGION_KEPT, kind_of(self, &r, "out"));
	EXPECT_EQ(1, r.boundary);
	run_region_free(&r);
}

/* A parameter of the sink: only its set is new. */
TEST_F(g, region_param)
{
	struct dfg_plan_edit e = {
		.op = DFG_EDIT_PARAM, .comp = "out", .key = "file",
		.value = "p.txt",
	};
	struct run_region r;

	ASSERT_EQ(0, apply(self, &e, 1));
	ASSERT_EQ(0, region_of(self, &r));
	EXPECT_EQ(RUN_REGION_NEW, kind_of(self, &r, "out"));
	EXPECT_EQ(RUN_REGION_REWIRED, kind_of(self, &r, "fix"));
	EXPECT_EQ(RUN_REGION_KEPT, kind_of(self, &r, "gen"));
	EXPECT_EQ(1, r.stopped_sets);
	run_region_free(&r);
}

/* Unfolding up makes two new sets of one; folding it back, one of two. */
TEST_F(g, region_unfold_fold)
{
	struct dfg_plan_edit e = { .op = DFG_EDIT_UNFOLD, .comp = "up" };
	struct run_region r;
	struct dfg_flow *fg1;
	struct dfg_plan *p1;

	ASSERT_EQ(0, apply(self, &e, 1));
	ASSERT_EQ(0, region_of(self, &r));
	EXPECT_EQ(2, r.sets[RUN_REGION_NEW]);
	EXPECT_EQ(RUN_REGION_REWIRED, kind_of(self, &r, "cnt"));
	EXPECT_EQ(RUN_REGION_KEPT, kind_of(self, &r, "out"));
	EXPECT_EQ(1, r.stopped_sets);
	run_region_free(&r);

	e.op = DFG_EDIT_FOLD;
	ASSERT_EQ(0, dfg_plan_edit_apply(self->nfg, self->nplan, 0, &e, 1,
					 &fg1, &p1, self->why,
					 sizeof(self->why)));
	ASSERT_EQ(0, run_region_compute(&r, self->nfg, self->nplan, fg1, p1));
	EXPECT_TRUE(region_holds(&r, self->nfg, self->nplan, fg1, p1));
	EXPECT_EQ(1, r.sets[RUN_REGION_NEW]);
	EXPECT_EQ(2, r.stopped_sets);
	run_region_free(&r);
	dfg_plan_free(p1);
	dfg_flow_free(fg1);
}

/*
 * Two pieces, a set per component: a change on one leaves the other
 * untouched and outside the closed region.
 */
TEST(region_two_pieces)
{
	static const char two[] =
		"digraph two {\n"
		"  g1 [type=generate, count=10];\n"
		"  c1 [type=count, degree=2];\n"
		"  w1 [type=write_lines, file=\"a.txt\"];\n"
		"  g2 [type=generate, count=10];\n"
		"  m2 [type=map, expr=\"$0\"];\n"
		"  w2 [type=write_lines, file=\"b.txt\"];\n"
		"  g1 -> c1 [flow=hash, key=\"$0\"];\n"
		"  c1 -> w1 [flow=gather];\n"
		"  g2 -> m2;\n"
		"  m2 -> w2;\n"
		"}\n";
	struct dfg_plan_edit e = {
		.op = DFG_EDIT_DEGREE, .comp = "c1", .degree = 3,
	};
	struct dfg_flow_errors *errs = NULL;
	struct dfg_flow *fg, *nfg;
	struct dfg_plan *plan, *nplan;
	struct run_region r;
	char why[256];
	unsigned int c, s;

	ASSERT_EQ(0, dfg_flow_parse(two, strlen(two), "two.dot",
				    dfg_run_types(), &fg, &errs));
	ASSERT_EQ(0, dfg_plan_build(fg, DFG_PLAN_NO_FOLD, &plan));
	ASSERT_EQ(0, dfg_plan_edit_apply(fg, plan, DFG_PLAN_NO_FOLD, &e, 1,
					 &nfg, &nplan, why, sizeof(why)));
	ASSERT_EQ(0, run_region_compute(&r, fg, plan, nfg, nplan));
	EXPECT_TRUE(region_holds(&r, fg, plan, nfg, nplan));
	EXPECT_EQ(1, r.sets[RUN_REGION_NEW]);
	EXPECT_EQ(2, r.sets[RUN_REGION_REWIRED]);
	EXPECT_EQ(3, r.sets[RUN_REGION_KEPT]);
	EXPECT_EQ(2, r.boundary);
	EXPECT_EQ(3, r.closed_sets);
	EXPECT_EQ(1 + 3 + 1, r.closed_inst);
	for (c = 0; c < nfg->ncomps; c++) {
		bool second = nfg->comps[c].name[1] == '2';

		s = nplan->set_of[c];
		EXPECT_EQ(!second, r.closed[s]);
		if (second)
			EXPECT_EQ(RUN_REGION_KEPT, r.kind[s]);
	}
	run_region_free(&r);
	dfg_plan_free(nplan);
	dfg_flow_free(nfg);
	dfg_plan_free(plan);
	dfg_flow_free(fg);
}

/* The invariants over random accepted edit lists, folded and not. */
TEST_F(g, region_random)
{
	static const char *const names[] = { "gen", "up", "cnt", "fix",
					     "out" };
	static const char *const types[] = { "map", "filter" };
	unsigned int seed = 1414, round, accepted = 0, kinds[3] = { 0 };

	for (round = 0; round < 2000; round++) {
		struct dfg_plan_edit e[3];
		unsigned int n = 1 + rand_r(&seed) % 3, i, d;
		struct run_region r;

		memset(e, 0, sizeof(e));
		for (i = 0; i < n; i++) {
			e[i].op = (enum dfg_edit_op)(1 + rand_r(&seed) % 5);
			e[i].comp = names[rand_r(&seed) % 5];
			e[i].type = types[rand_r(&seed) % 2];
			e[i].key = "expr";
			e[i].value = rand_r(&seed) % 2 ? "$0" : "1";
		}
		/* cnt and fix move together, or not at all */
		d = 1 + rand_r(&seed) % 4;
		if (e[0].op == DFG_EDIT_DEGREE && n < 3) {
			e[0].comp = "cnt";
			e[0].degree = d;
			e[n] = e[0];
			e[n++].comp = "fix";
		}
		if (apply(self, e, n))
			continue;
		accepted++;
		ASSERT_EQ(0, region_of(self, &r));
		for (i = 0; i < 3; i++)
			kinds[i] += r.sets[i];
		run_region_free(&r);
	}
	EXPECT_GT(accepted, 100);
	EXPECT_GT(kinds[RUN_REGION_NEW], 0);
	EXPECT_GT(kinds[RUN_REGION_REWIRED], 0);
	EXPECT_GT(kinds[RUN_REGION_KEPT], 0);
	TH_LOG("%u of 2000 accepted; sets new %u, rewired %u, kept %u",
	       accepted, kinds[2], kinds[1], kinds[0]);
}

TEST_HARNESS_MAIN
