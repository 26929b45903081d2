// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: the dataflow graph model and DOT loading
 * (<dfg/flow.h>). Files from examples/graphs and tests/graphs, and
 * inline texts: attributes, parameters, defaults, ports, a type
 * registry, and every validation error with its file, line, object and
 * attribute; the libcgraph lexer left clean between loads; concurrent
 * loads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dfg/flow.h>

#include "kselftest_harness.h"

#define ERRNO_MARK	12345
#define EXAMPLES	TEST_DIR "/../../examples/graphs/"
#define GRAPHS		TEST_DIR "/graphs/"

static int parse(const char *text, struct dfg_flow **fg,
		 struct dfg_flow_errors **errs)
{
	return dfg_flow_parse(text, strlen(text), "t.dot", NULL, fg, errs);
}

static const struct dfg_flow_comp *comp(const struct dfg_flow *fg,
					const char *name)
{
	int i = dfg_flow_find(fg, name);

	return i < 0 ? NULL : &fg->comps[i];
}

/* The error about @attr (NULL: any) whose message holds @msg, or NULL. */
static const struct dfg_flow_error *find_err(const struct dfg_flow_errors *e,
					     const char *attr, const char *msg)
{
	unsigned int i;

	for (i = 0; e && i < e->n; i++) {
		if (attr && (!e->v[i].attr || strcmp(e->v[i].attr, attr)))
			continue;
		if (strstr(e->v[i].msg, msg))
			return &e->v[i];
	}
	return NULL;
}

static void dump_errs(const struct dfg_flow_errors *e)
{
	if (e)
		dfg_flow_errors_print(e, stderr);
}

TEST(fig2_model)
{
	static const char *const topo[] = {
		"204A", "204B", "204E", "204F", "204G", "204H", "204C",
		"204D", "204I", "204J",
	};
	struct dfg_flow *fg;
	const struct dfg_flow_comp *c;
	unsigned int i;

	ASSERT_EQ(0, dfg_flow_load(EXAMPLES "fig2.dot", NULL, &fg, NULL));
	EXPECT_STREQ("fig2", fg->name);
	ASSERT_EQ(10, fg->ncomps);
	ASSERT_EQ(10, fg->nflows);
	for (i = 0; i < 10; i++)
		EXPECT_STREQ(topo[i], fg->comps[fg->topo[i]].name);

	c = comp(fg, "204A");
	ASSERT_NE(NULL, c);
	EXPECT_STREQ("filter", c->type);
	EXPECT_EQ(6, c->line);
	EXPECT_EQ(1, c->degree);
	EXPECT_EQ(0, c->phase);
	EXPECT_TRUE(c->foldable);
	EXPECT_TRUE(c->interior);
	EXPECT_EQ(NULL, c->pin);
	EXPECT_EQ(0, c->nparams);	/* label is drawing only */
	EXPECT_EQ(0, c->nin);
	ASSERT_EQ(2, c->nout);
	EXPECT_STREQ("0", c->out[0].name);
	ASSERT_EQ(1, c->out[1].nflows);
	EXPECT_STREQ("204C", fg->comps[fg->flows[c->out[1].flows[0]].dst].name);

	c = comp(fg, "204H");
	ASSERT_NE(NULL, c);
	EXPECT_FALSE(c->foldable);
	EXPECT_EQ(13, c->line);

	c = comp(fg, "204I");
	ASSERT_NE(NULL, c);
	ASSERT_EQ(2, c->nin);
	ASSERT_EQ(2, c->nin_flows);
	EXPECT_EQ(1, c->in[0].nflows);
	EXPECT_STREQ("204H",
		     fg->comps[fg->flows[c->in[0].flows[0]].src].name);
	EXPECT_STREQ("204D",
		     fg->comps[fg->flows[c->in[1].flows[0]].src].name);

	for (i = 0; i < fg->nflows; i++) {
		EXPECT_EQ(i, fg->flows[i].index);
		EXPECT_EQ(DFG_FLOW_STRAIGHT, fg->flows[i].kind);
		EXPECT_EQ(NULL, fg->flows[i].key);
		EXPECT_EQ(17 + i, fg->flows[i].line);
	}
	EXPECT_EQ(-ENOENT, dfg_flow_find(fg, "204K"));
	dfg_flow_free(fg);
}

TEST(attributes_params_defaults)
{
	struct dfg_flow *fg;
	struct dfg_flow_errors *errs;
	const struct dfg_flow_comp *c;
	int ret;

	ret = parse("digraph g {\n"
		    "  node [phase=1]\n"
		    "  r [type=read, file=\"in.txt\", degree=2, set=io,\n"
		    "     role=root, label=\"drawn\", shape=box, sep=\",\"]\n"
		    "  w [type=write, foldable=false, phase=2, degree=2]\n"
		    "  r -> w [flow=hash, key=word, color=blue]\n"
		    "}\n", &fg, &errs);
	dump_errs(errs);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(NULL, errs);
	c = comp(fg, "r");
	ASSERT_NE(NULL, c);
	EXPECT_STREQ("read", c->type);
	EXPECT_EQ(2, c->degree);
	EXPECT_EQ(1, c->phase);		/* from "node [...]" */
	EXPECT_STREQ("io", c->pin);
	EXPECT_FALSE(c->interior);
	EXPECT_TRUE(c->foldable);
	ASSERT_EQ(2, c->nparams);
	EXPECT_STREQ("in.txt", dfg_flow_param(c, "file"));
	EXPECT_STREQ(",", dfg_flow_param(c, "sep"));
	EXPECT_EQ(NULL, dfg_flow_param(c, "label"));
	EXPECT_EQ(NULL, dfg_flow_param(c, "phase"));
	EXPECT_EQ(NULL, dfg_flow_param(NULL, "file"));
	EXPECT_EQ(NULL, dfg_flow_param(c, NULL));
	c = comp(fg, "w");
	ASSERT_NE(NULL, c);
	EXPECT_FALSE(c->foldable);
	EXPECT_EQ(2, c->phase);
	EXPECT_EQ(0, c->nparams);
	ASSERT_EQ(1, fg->nflows);
	EXPECT_EQ(DFG_FLOW_HASH, fg->flows[0].kind);
	EXPECT_STREQ("word", fg->flows[0].key);
	EXPECT_EQ(6, fg->flows[0].line);
	dfg_flow_free(fg);
}

TEST(kind_names)
{
	EXPECT_STREQ("straight", dfg_flow_kind_name(DFG_FLOW_STRAIGHT));
	EXPECT_STREQ("hash", dfg_flow_kind_name(DFG_FLOW_HASH));
	EXPECT_STREQ("roundrobin", dfg_flow_kind_name(DFG_FLOW_ROUNDROBIN));
	EXPECT_STREQ("broadcast", dfg_flow_kind_name(DFG_FLOW_BROADCAST));
	EXPECT_STREQ("gather", dfg_flow_kind_name(DFG_FLOW_GATHER));
	EXPECT_EQ(NULL, dfg_flow_kind_name(DFG_FLOW_GATHER + 1));
	EXPECT_EQ(NULL, dfg_flow_kind_name(-1));
}

TEST(numbered_ports)
{
	struct dfg_flow *fg;
	struct dfg_flow_errors *errs;
	const struct dfg_flow_comp *c;

	ASSERT_EQ(0, parse("digraph { a [type=split]; b [type=m]; "
			   "c [type=join]\n"
			   "a:1 -> c:1\n"
			   "a -> b [from_port=0]\n"
			   "b -> c [to_port=0, from_port=0]\n"
			   "a:2 -> c [headport=0, to_port=0] }",
			   &fg, &errs));
	c = comp(fg, "a");
	ASSERT_EQ(3, c->nout);
	EXPECT_EQ(1, c->out[0].nflows);
	EXPECT_EQ(1, c->out[1].nflows);
	EXPECT_EQ(1, c->out[2].nflows);
	EXPECT_STREQ("2", c->out[2].name);
	c = comp(fg, "c");
	ASSERT_EQ(2, c->nin);
	EXPECT_EQ(2, c->in[0].nflows);
	EXPECT_EQ(1, c->in[1].nflows);
	EXPECT_EQ(1, fg->flows[0].src_port);
	EXPECT_EQ(1, fg->flows[0].dst_port);
	dfg_flow_free(fg);
}

/* One error in a small graph: its line, object, attribute, message. */
struct bad_case {
	const char	*text;
	unsigned int	line;
	const char	*object;
	const char	*attr;
	const char	*msg;
};

static const struct bad_case bad_cases[] = {
	{ "digraph {\n a [degree=2]\n}", 2, "node 'a'", "type", "missing" },
	{ "digraph {\n a [type=\"\"]\n}", 2, "node 'a'", "type", "missing" },
	{ "digraph {\n a [type=m,\n degree=0]\n}", 3, "node 'a'", "degree",
	  "out of range 1..1024: '0'" },
	{ "digraph {\n a [type=m, degree=1025]\n}", 2, "node 'a'", "degree",
	  "out of range" },
	{ "digraph {\n a [type=m, degree=99999999999999999999]\n}", 2,
	  "node 'a'", "degree", "out of range" },
	{ "digraph {\n a [type=m]\n a [degree=\"two\"]\n}", 3, "node 'a'",
	  "degree", "not a number: 'two'" },
	{ "digraph {\n a [type=m, phase=\"-1\"]\n}", 2, "node 'a'", "phase",
	  "not a number" },
	{ "digraph {\n a [type=m, foldable=maybe]\n}", 2, "node 'a'",
	  "foldable", "true or false" },
	{ "digraph {\n a [type=m, role=leaf]\n}", 2, "node 'a'", "role",
	  "root or any" },
	{ "digraph {\n a [type=m, set=\"\"]\n}", 2, "node 'a'", "set",
	  "empty set name" },
	{ "digraph {\n a [type=m, set=s12]\n}", 2, "node 'a'", "set",
	  "s<number> names the unnamed sets" },
	{ "digraph {\n a [type=m]; b [type=m]\n a -> b [flow=sideways]\n}",
	  3, "flow 'a' -> 'b'", "flow", "unknown flow kind 'sideways'" },
	{ "digraph {\n a [type=m]; b [type=m]\n a -> b [flow=hash]\n}",
	  3, "flow 'a' -> 'b'", "key", "needs the key" },
	{ "digraph {\n a [type=m]; b [type=m]\n a -> b [key=k]\n}",
	  3, "flow 'a' -> 'b'", "key", "only hash flows" },
	{ "digraph {\n a [type=m]; b [type=m]\n a -> b [weight=3]\n}",
	  3, "flow 'a' -> 'b'", "weight", "unknown attribute" },
	{ "digraph {\n a [type=m]; b [type=m, degree=2]\n a -> b\n}",
	  3, "flow 'a' -> 'b'", "flow", "straight flow from degree 1 to degree 2" },
	{ "digraph {\n a [type=m, degree=4]; b [type=m, degree=2]\n"
	  " a -> b [flow=gather]\n}",
	  3, "flow 'a' -> 'b'", "flow", "serial component, not degree 2" },
	{ "digraph {\n a [type=m, phase=2]; b [type=m, phase=1]\n a -> b\n}",
	  3, "flow 'a' -> 'b'", "phase", "from phase 2 to phase 1" },
	{ "digraph {\n a [type=m]\n a -> a\n}", 3, "flow 'a' -> 'a'", NULL,
	  "cycle" },
	{ "digraph {\n a [type=m]; b [type=m]\n c [type=m]\n a -> b\n"
	  " b -> c\n c -> a\n}", 6, "flow 'c' -> 'a'", NULL,
	  "closes a cycle: 'a' -> 'b' -> 'c' -> 'a'" },
	{ "digraph {\n s [type=m]; a [type=m]\n b [type=m]\n s -> a\n"
	  " a -> b\n b -> a\n}", 6, "flow 'b' -> 'a'", NULL,
	  "closes a cycle: 'a' -> 'b' -> 'a'" },
	{ "digraph {\n a [type=m]; b [type=m]\n a:x -> b\n}", 3,
	  "flow 'a' -> 'b'", "from_port", "port 'x'" },
	{ "digraph {\n a [type=m]; b [type=m]\n a -> b [to_port=256]\n}", 3,
	  "flow 'a' -> 'b'", "to_port", "use a number 0..255" },
	{ "digraph {\n a [type=m]; b [type=m]\n a:1 -> b [from_port=2]\n}",
	  3, "flow 'a' -> 'b'", "from_port", "the DOT port says '1'" },
	{ "graph {\n a [type=m]\n}", 1, NULL, NULL, "not a digraph" },
	{ "digraph {\n a [type=m]\n}\ndigraph {\n b [type=m]\n}", 0, NULL,
	  NULL, "more than one graph" },
	{ "", 0, NULL, NULL, "no graph" },
	{ "digraph { }", 0, NULL, NULL, "no components" },
	{ "digraph {\n a [type=m]\n b [type=m\n a -> -> b\n}", 4, NULL, NULL,
	  "syntax error" },
	{ "digraph {\n a [type=m]\n b [type=\"m]\n}\n", 0, NULL, NULL,
	  "syntax error" },
};

TEST(bad_graphs)
{
	unsigned int i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *bc = &bad_cases[i];
		struct dfg_flow_errors *errs = NULL;
		const struct dfg_flow_error *e;
		struct dfg_flow *fg = (void *)1;

		int ret = parse(bc->text, &fg, &errs);

		e = find_err(errs, bc->attr, bc->msg);
		if (ret != -EINVAL || !e) {
			TH_LOG("case %u: %s", i, bc->text);
			dump_errs(errs);
		}
		ASSERT_EQ(-EINVAL, ret);
		EXPECT_EQ(NULL, fg);
		ASSERT_NE(NULL, e);
		EXPECT_STREQ("t.dot", e->file);
		if (bc->line) {
			EXPECT_EQ(bc->line, e->line);
		}
		if (bc->object) {
			EXPECT_STREQ(bc->object, e->object);
		} else {
			EXPECT_EQ(NULL, e->object);
		}
		if (!bc->attr) {
			EXPECT_EQ(NULL, e->attr);
		}
		dfg_flow_errors_free(errs);
	}
}

/* Several errors at once, from a file, each at its line. */
TEST(file_errors_lines)
{
	struct dfg_flow_errors *errs;
	const struct dfg_flow_error *e;
	struct dfg_flow *fg;
	char *out = NULL;
	size_t len;
	FILE *f;

	ASSERT_EQ(-EINVAL, dfg_flow_load(GRAPHS "lines.dot", NULL, &fg, &errs));
	ASSERT_NE(NULL, errs);
	EXPECT_EQ(3, errs->n);
	e = find_err(errs, "degree", "not a number: 'two'");
	ASSERT_NE(NULL, e);
	EXPECT_STREQ(GRAPHS "lines.dot", e->file);
	EXPECT_EQ(5, e->line);
	EXPECT_STREQ("node 'b'", e->object);
	e = find_err(errs, "flow", "unknown flow kind 'sideways'");
	ASSERT_NE(NULL, e);
	EXPECT_EQ(10, e->line);
	EXPECT_STREQ("flow 'c' -> 'd'", e->object);
	e = find_err(errs, "phase", "not a number: 'x'");
	ASSERT_NE(NULL, e);
	EXPECT_EQ(12, e->line);
	EXPECT_STREQ("node 'd'", e->object);

	f = open_memstream(&out, &len);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, dfg_flow_errors_print(errs, f));
	fclose(f);
	EXPECT_NE(NULL, strstr(out, GRAPHS "lines.dot:5: node 'b': "
			       "attribute 'degree': not a number: 'two'\n"));
	free(out);
	EXPECT_EQ(-EINVAL, dfg_flow_errors_print(NULL, stderr));
	EXPECT_EQ(-EINVAL, dfg_flow_errors_print(errs, NULL));
	dfg_flow_errors_free(errs);
}

TEST(file_syntax_error)
{
	struct dfg_flow_errors *errs;
	struct dfg_flow *fg;

	ASSERT_EQ(-EINVAL,
		  dfg_flow_load(GRAPHS "syntax.dot", NULL, &fg, &errs));
	ASSERT_NE(NULL, errs);
	ASSERT_EQ(1, errs->n);
	EXPECT_EQ(4, errs->v[0].line);
	EXPECT_STREQ(GRAPHS "syntax.dot", errs->v[0].file);
	EXPECT_NE(NULL, strstr(errs->v[0].msg, "syntax error near '->'"));
	dfg_flow_errors_free(errs);
}

/* Without an error list, a bad graph is still -EINVAL. */
TEST(errors_optional)
{
	struct dfg_flow *fg;

	EXPECT_EQ(-EINVAL, parse("digraph { a }", &fg, NULL));
	EXPECT_EQ(NULL, fg);
}

TEST(bad_args_and_files)
{
	struct dfg_flow_errors *errs = (void *)1;
	struct dfg_flow *fg = (void *)1;

	errno = ERRNO_MARK;
	EXPECT_EQ(-ENOENT,
		  dfg_flow_load(GRAPHS "missing.dot", NULL, &fg, &errs));
	EXPECT_EQ(NULL, fg);
	EXPECT_EQ(NULL, errs);
	EXPECT_EQ(-EISDIR, dfg_flow_load(GRAPHS, NULL, &fg, &errs));
	EXPECT_EQ(-EINVAL, dfg_flow_load(NULL, NULL, &fg, &errs));
	EXPECT_EQ(-EINVAL, dfg_flow_load(GRAPHS "lines.dot", NULL, NULL, NULL));
	EXPECT_EQ(-EINVAL, dfg_flow_parse(NULL, 0, "x", NULL, &fg, NULL));
	EXPECT_EQ(-EINVAL, dfg_flow_parse("", 0, NULL, NULL, &fg, NULL));
	EXPECT_EQ(-EINVAL, dfg_flow_parse("", 0, "x",
					  &(struct dfg_flow_types){ 0 }, &fg,
					  NULL));
	EXPECT_EQ(-EINVAL, dfg_flow_find(NULL, "a"));
	EXPECT_EQ(ERRNO_MARK, errno);
	dfg_flow_free(NULL);
	dfg_flow_errors_free(NULL);
}

/*
 * libcgraph's lexer is global: what one load leaves behind (text after
 * the graph, a syntax error mid-way) must not leak into the next.
 */
TEST(lexer_left_clean)
{
	static const char *const before[] = {
		"digraph { a [type=m] } x",
		"digraph { a [type=m] } /* unterminated",
		"digraph { a [type=m] -> }",
		"digraph { a [type=\"m }",
		"digraph { a [type=m] } digraph {",
	};
	unsigned int i;

	for (i = 0; i < sizeof(before) / sizeof(before[0]); i++) {
		struct dfg_flow *fg;

		EXPECT_EQ(-EINVAL, parse(before[i], &fg, NULL));
		if (parse("digraph ok { b [type=m] }", &fg, NULL))
			TH_LOG("stuck after: %s", before[i]);
		ASSERT_NE(NULL, fg);
		EXPECT_STREQ("ok", fg->name);
		ASSERT_EQ(1, fg->ncomps);
		EXPECT_STREQ("b", fg->comps[0].name);
		dfg_flow_free(fg);
	}
}

/* A small type registry, as the component library will provide. */
static const char *const map_params[] = { "expr", NULL };
static const char *const map_in[] = { "in", NULL };
static const char *const map_out[] = { "out", "reject", NULL };
static const char *const none[] = { NULL };

static int lookup(void *arg, const char *type, struct dfg_flow_typeinfo *info)
{
	int *calls = arg;

	(*calls)++;
	if (!strcmp(type, "map")) {
		*info = (struct dfg_flow_typeinfo){
			.foldable = true, .interior = true,
			.params = map_params,
			.in_ports = map_in, .out_ports = map_out,
		};
	} else if (!strcmp(type, "exec")) {
		*info = (struct dfg_flow_typeinfo){
			.foldable = false, .interior = true,
		};
	} else if (!strcmp(type, "gen")) {
		*info = (struct dfg_flow_typeinfo){
			.foldable = true, .interior = false,
			.params = none, .in_ports = none,
		};
	} else if (!strcmp(type, "broken")) {
		return -EIO;
	} else {
		return -ENOENT;
	}
	return 0;
}

TEST(type_registry)
{
	int calls = 0;
	struct dfg_flow_types types = { .lookup = lookup, .arg = &calls };
	struct dfg_flow_errors *errs;
	const struct dfg_flow_comp *c;
	struct dfg_flow *fg;
	const char *text =
		"digraph {\n"
		" g [type=gen]\n"
		" m [type=map, expr=\"x+1\"]\n"
		" x [type=exec, cmd=\"sort\"]\n"
		" g -> m\n"
		" m:reject -> x [to_port=0]\n"
		"}\n";

	ASSERT_EQ(0, dfg_flow_parse(text, strlen(text), "t.dot", &types, &fg,
				    &errs));
	EXPECT_EQ(3, calls);
	c = comp(fg, "g");
	EXPECT_FALSE(c->interior);
	EXPECT_EQ(0, c->nin);
	c = comp(fg, "m");
	ASSERT_EQ(1, c->nin);
	ASSERT_EQ(2, c->nout);
	EXPECT_STREQ("in", c->in[0].name);
	EXPECT_STREQ("out", c->out[0].name);
	EXPECT_STREQ("reject", c->out[1].name);
	EXPECT_EQ(0, c->out[0].nflows);
	EXPECT_EQ(1, c->out[1].nflows);
	EXPECT_STREQ("x+1", dfg_flow_param(c, "expr"));
	EXPECT_EQ(1, fg->flows[1].src_port);
	c = comp(fg, "x");
	EXPECT_FALSE(c->foldable);
	EXPECT_STREQ("sort", dfg_flow_param(c, "cmd"));
	dfg_flow_free(fg);

	text = "digraph {\n"
	       " g [type=gen, role=any, n=3]\n"
	       " m [type=map, exprr=1]\n"
	       " x [type=exec, foldable=true]\n"
	       " u [type=unknown]\n"
	       " b [type=broken]\n"
	       " g -> m [to_port=out]\n"
	       " m:nope -> x\n"
	       " x -> g\n"
	       "}\n";
	ASSERT_EQ(-EINVAL, dfg_flow_parse(text, strlen(text), "t.dot", &types,
					  &fg, &errs));
	ASSERT_NE(NULL, errs);
	EXPECT_EQ(9, errs->n);
	EXPECT_NE(NULL, find_err(errs, "role", "can only be a root"));
	EXPECT_NE(NULL, find_err(errs, "n", "takes no such parameter"));
	EXPECT_NE(NULL, find_err(errs, "exprr", "takes no such parameter"));
	EXPECT_NE(NULL, find_err(errs, "foldable", "is not foldable"));
	EXPECT_NE(NULL, find_err(errs, "type", "unknown component type 'unknown'"));
	EXPECT_NE(NULL, find_err(errs, "type", "looking up type 'broken'"));
	EXPECT_NE(NULL, find_err(errs, "to_port", "has no input port 'out'"));
	EXPECT_NE(NULL, find_err(errs, "from_port", "has no output port 'nope'"));
	EXPECT_NE(NULL, find_err(errs, "to_port", "has no input ports"));
	dfg_flow_errors_free(errs);
}

static void *load_loop(void *arg)
{
	unsigned int i;

	for (i = 0; i < 200; i++) {
		struct dfg_flow *fg;

		if (dfg_flow_load(EXAMPLES "fig2.dot", NULL, &fg, NULL))
			return arg;
		if (fg->ncomps != 10 || fg->comps[0].line != 6) {
			dfg_flow_free(fg);
			return arg;
		}
		dfg_flow_free(fg);
	}
	return NULL;
}

TEST(concurrent_loads)
{
	static int failed = 1;
	pthread_t t[4];
	unsigned int i;
	void *ret;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, load_loop, &failed));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, pthread_join(t[i], &ret));
		EXPECT_EQ(NULL, ret);
	}
}

TEST_HARNESS_MAIN
