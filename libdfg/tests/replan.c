// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: plan edits (<dfg/replan.h>). Each operation on a hash
 * job, edits in sequence, every refusal (unknown component, type or
 * parameter, a bad value, degree 0 and past the limit, a type whose
 * ports do not fit, a degree across a straight flow, FOLD of a component
 * not unfolded) with its reason and nothing returned, and a property
 * test: random edit lists either give a graph whose components and flows
 * keep their indices or are refused with a reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dfg/replan.h>
#include <dfg/run.h>

#include "kselftest_harness.h"

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

TEST_HARNESS_MAIN
