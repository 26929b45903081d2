// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: graphs checked against the component registry at
 * load time (what dfg plan does, without the module): each input that
 * used to pass the plan and fail the run (a parameter that is not a
 * number, a negative count, a required parameter left out, a broken or
 * unbalanced or deep expression, a port the component does not have),
 * the built-ins' declaration tables, dfg_comp_check() on the same values,
 * the loader's time on a 1 MiB token (and the lines after it), and
 * escaping in printed errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dfg/component.h>
#include <dfg/flow.h>
#include <dfg/run.h>

#include "../comp/param.h"
#include "kselftest_harness.h"

static int load(const char *text, struct dfg_flow **fg,
		struct dfg_flow_errors **errs)
{
	return dfg_flow_parse(text, strlen(text), "p.dot", dfg_run_types(),
			      fg, errs);
}

/*
 * @text must fail with exactly one error, at @line, about @attr (NULL:
 * none), whose message holds @msg.
 */
static int one_error(struct __test_metadata *_metadata, const char *text,
		     unsigned int line, const char *attr, const char *msg)
{
	struct dfg_flow_errors *errs = NULL;
	struct dfg_flow *fg = NULL;
	const struct dfg_flow_error *e;
	int ok;

	EXPECT_EQ(-EINVAL, load(text, &fg, &errs));
	EXPECT_EQ(NULL, fg);
	if (!errs)
		return 0;
	e = &errs->v[0];
	ok = errs->n == 1 && e->line == line && !strcmp(e->file, "p.dot") &&
	     (attr ? e->attr && !strcmp(e->attr, attr) : !e->attr) &&
	     strstr(e->msg, msg);
	if (!ok)
		dfg_flow_errors_print(errs, stderr);
	dfg_flow_errors_free(errs);
	dfg_flow_free(fg);
	return ok;
}

#define GEN	"digraph g {\n a [type=generate, count=5];\n"
#define OUT	" o [type=write_lines, file=\"x\"];\n"

TEST(count_not_a_number)
{
	EXPECT_TRUE(one_error(_metadata,
		"digraph g {\n a [type=generate,\n   count=ten];\n" OUT
		" a -> o;\n}\n", 3, "count", "'ten' is not an integer"));
}

TEST(count_negative)
{
	EXPECT_TRUE(one_error(_metadata,
		"digraph g {\n a [type=generate, count=-5];\n" OUT
		" a -> o;\n}\n", 2, "count", "-5 is not in [0, "));
}

TEST(filter_without_expr)
{
	EXPECT_TRUE(one_error(_metadata,
		GEN " f [type=filter];\n" OUT " a -> f -> o;\n}\n", 3, "expr",
		"missing: type 'filter' requires it"));
}

TEST(write_lines_without_file)
{
	EXPECT_TRUE(one_error(_metadata,
		GEN " o [type=write_lines];\n a -> o;\n}\n", 3, "file",
		"missing: type 'write_lines' requires it"));
}

TEST(expr_incomplete)
{
	EXPECT_TRUE(one_error(_metadata,
		GEN " f [type=filter, expr=\"$0 +\"];\n" OUT " a -> f -> o;\n}\n",
		3, "expr", "col 5: unexpected end of expression"));
}

TEST(expr_unbalanced)
{
	EXPECT_TRUE(one_error(_metadata,
		GEN " m [type=map, expr=\"($1 + 2\"];\n" OUT " a -> m -> o;\n}\n",
		3, "expr", "expected ')'"));
	EXPECT_TRUE(one_error(_metadata,
		GEN " s [type=sort, key=\"$1)\"];\n" OUT " a -> s -> o;\n}\n",
		3, "key", "col 3"));
}

/* Nesting well past the parser's bound, and too long a text, both fail
 * with a message (a recursive parser without a bound would overflow its
 * stack on 40,000 levels under ASan). */
TEST(expr_deep)
{
	static const unsigned int depth[] = { 40000, 2000 };
	static const char *const msg[] = { "expression too long",
					   "nested too deeply" };
	unsigned int k, i;

	for (k = 0; k < 2; k++) {
		size_t n = depth[k];
		char *text = malloc(2 * n + 256), *p = text;

		ASSERT_NE(NULL, text);
		p += sprintf(p, GEN " f [type=filter, expr=\"");
		for (i = 0; i < n; i++)
			*p++ = '(';
		*p++ = '1';
		for (i = 0; i < n; i++)
			*p++ = ')';
		sprintf(p, "\"];\n" OUT " a -> f -> o;\n}\n");
		EXPECT_TRUE(one_error(_metadata, text, 3, "expr", msg[k]));
		free(text);
	}
}

TEST(port_not_there)
{
	EXPECT_TRUE(one_error(_metadata, GEN OUT " a -> o [to_port=3];\n}\n",
			      4, "to_port",
			      "port 3: type 'write_lines' has input ports 0..0"));
	EXPECT_TRUE(one_error(_metadata,
		GEN OUT " m [type=map, expr=\"1\"];\n"
		" o2 [type=write_lines, file=\"y\"];\n a -> o -> m -> o2;\n}\n",
		6, "from_port", "type 'write_lines' has no output ports"));
	/* a join fed on one input only */
	EXPECT_TRUE(one_error(_metadata,
		GEN " j [type=join];\n" OUT " a -> j -> o;\n}\n", 3, NULL,
		"type 'join' needs 2 input flows, has 1"));
	EXPECT_TRUE(one_error(_metadata,
		GEN " j [type=join];\n" OUT
		" a -> j [to_port=1];\n a -> j [to_port=1];\n j -> o;\n}\n",
		3, NULL, "input port 0 has no flow"));
}

TEST(enum_char_and_unknown)
{
	EXPECT_TRUE(one_error(_metadata,
		GEN " s [type=sort, order=up];\n" OUT " a -> s -> o;\n}\n", 3,
		"order", "'up' is not asc or desc"));
	EXPECT_TRUE(one_error(_metadata,
		GEN " w [type=split_words, chars=digits];\n" OUT
		" a -> w -> o;\n}\n", 3, "chars",
		"'digits' is not alpha, alnum or nonblank"));
	EXPECT_TRUE(one_error(_metadata,
		GEN " m [type=map, expr=\"$1\", sep=\"::\"];\n" OUT
		" a -> m -> o;\n}\n", 3, "sep", "not one byte"));
	EXPECT_TRUE(one_error(_metadata,
		GEN " m [type=map, expr=\"$1\", bogus=1];\n" OUT
		" a -> m -> o;\n}\n", 3, "bogus", "takes no such parameter"));
}

TEST(fan_in_bound)
{
	EXPECT_TRUE(one_error(_metadata,
		"digraph g {\n a [type=generate, count=5, degree=65];\n" OUT
		" a -> o [flow=gather];\n}\n", 4, "flow",
		"comes from at most 64 instances, not 65"));
	/* into a later phase the flow is spooled: any number */
	{
		static const char text[] =
			"digraph g {\n a [type=generate, count=5, degree=1024];\n"
			" o [type=write_lines, file=\"x\", phase=1];\n"
			" a -> o [flow=gather];\n}\n";
		struct dfg_flow *fg = NULL;

		EXPECT_EQ(0, load(text, &fg, NULL));
		dfg_flow_free(fg);
	}
}

/* Every kind of declared parameter, valid: the graph loads. */
TEST(valid_graph)
{
	static const char text[] =
		"digraph g {\n"
		" r [type=read_lines, file=\"in.{}\", checkpoint_every=100];\n"
		" f [type=filter, expr=\"$1 > 2 && $2 == \\\"x\\\"\", sep=tab];\n"
		" w [type=split_words, chars=alnum, lower=1];\n"
		" s [type=sort, key=\"$2\", numeric=1, order=desc, sep=\":\"];\n"
		" o [type=write_lines, file=\"-\"];\n"
		" a [type=generate, count=\"0x10\", start=-3, pattern=\"n {}\"];\n"
		" g [type=aggregate, op=sum, value=\"$1 * 2\", out_sep=\" \"];\n"
		" o2 [type=write_lines, file=\"o.{}\"];\n"
		" r -> f -> w -> s -> o;\n a -> g -> o2;\n}\n";
	struct dfg_flow_errors *errs = NULL;
	struct dfg_flow *fg = NULL;

	EXPECT_EQ(0, load(text, &fg, &errs));
	if (errs)
		dfg_flow_errors_print(errs, stderr);
	dfg_flow_errors_free(errs);
	dfg_flow_free(fg);
}

/* The built-ins' tables pass the registry's own check, defaults too. */
TEST(builtin_tables)
{
	const struct dfg_comp_type *types[64];
	char err[256];
	int i, n = dfg_comp_list(types, 64);

	ASSERT_GE(n, 16);
	for (i = 0; i < n; i++) {
		const struct dfg_param_decl *d = dfg_comp_param_decls(types[i]);

		EXPECT_NE(NULL, d)
			TH_LOG("%s declares no parameters", types[i]->name);
		if (!d)
			continue;
		err[0] = '\0';
		EXPECT_EQ(0, comp_param_decls_check(d, err, sizeof(err)))
			TH_LOG("%s: %s", types[i]->name, err);
	}
	EXPECT_EQ(NULL, dfg_comp_param_decls(NULL));
}

static int pass(struct dfg_comp *c, unsigned int port,
		const struct dfg_elem *e)
{
	(void)port;
	return dfg_emit(c, 0, e);
}

/* A type registered with a bad table is refused, whole. */
TEST(bad_tables)
{
	static const char *const no_choices[] = { NULL };
	static const struct dfg_param_decl bad[][2] = {
		{ { .name = "x", .kind = 99 } },
		{ { .name = "Bad", .kind = DFG_PARAM_STRING } },
		{ { .name = "x", .kind = DFG_PARAM_INT, .min = 5, .max = 1 } },
		{ { .name = "x", .kind = DFG_PARAM_UINT, .min = -1, .max = 1 } },
		{ { .name = "x", .kind = DFG_PARAM_ENUM, .choices = no_choices } },
		{ { .name = "x", .kind = DFG_PARAM_UINT, .max = 3, .def = "4" } },
		{ { .name = "x", .kind = DFG_PARAM_EXPR, .def = "$0 +" } },
		{ { .name = "x", .kind = DFG_PARAM_PATH, .def = "a",
		    .flags = DFG_PARAM_REQUIRED } },
		{ { .name = "x", .kind = DFG_PARAM_STRING, .flags = 2 } },
		{ { .name = "x", .kind = DFG_PARAM_STRING },
		  { .name = "x", .kind = DFG_PARAM_STRING } },
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dfg_param_decl decls[3] = { bad[i][0], bad[i][1] };
		struct dfg_comp_type t = {
			.abi = DFG_COMP_ABI_VERSION, .name = "test_bad_table",
			.min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
			.compute = pass, .param_decls = decls,
		};

		EXPECT_EQ(-EINVAL, dfg_comp_register(&t)) TH_LOG("case %u", i);
	}
	EXPECT_EQ(NULL, dfg_comp_find("test_bad_table"));
}

/* dfg_comp_check() applies the same declarations (library users). */
TEST(comp_check_values)
{
	const struct dfg_comp_type *gen = dfg_comp_find("generate");
	const struct dfg_comp_type *filt = dfg_comp_find("filter");
	struct dfg_param ten = { "count", "ten" }, five = { "count", "5" };
	struct dfg_param bad_expr = { "expr", "$0 +" };
	struct dfg_comp_attr a = { .name = "g", .nr_out = 1, .params = &ten,
				   .nr_params = 1 };
	char err[256];

	ASSERT_NE(NULL, gen);
	ASSERT_NE(NULL, filt);
	EXPECT_EQ(-EINVAL, dfg_comp_check(gen, &a, err, sizeof(err)));
	EXPECT_STREQ("parameter count: 'ten' is not an integer",
		     err);
	a.params = &five;
	EXPECT_EQ(0, dfg_comp_check(gen, &a, err, sizeof(err)));
	a.nr_params = 0;
	EXPECT_EQ(-EINVAL, dfg_comp_check(gen, &a, err, sizeof(err)));
	EXPECT_STREQ("parameter count is required", err);
	a = (struct dfg_comp_attr){ .name = "f", .nr_in = 1, .nr_out = 1,
				    .params = &bad_expr, .nr_params = 1 };
	EXPECT_EQ(-EINVAL, dfg_comp_check(filt, &a, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "parameter expr: col 5"));
}

static double now_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A 1 MiB node name, a 1 MiB quoted value with blanks, and a 1 MiB
 * comment, and the lines after them still right. Fed byte by byte a
 * 100 KB name took a minute; in runs, what is left is flex rescanning an
 * unfinished token at each refill of its buffer (8 KiB): about 0.5 s of
 * CPU for 1 MiB. CPU time is asserted (the wall clock of a loaded host
 * says little), both are logged.
 */
TEST(long_tokens)
{
	static const char *const shapes[] = { "name", "value", "comment" };
	size_t big = 1 << 20;
	unsigned int k;

	for (k = 0; k < 3; k++) {
		char *text = malloc(big + 512), *p = text;
		struct dfg_flow_errors *errs = NULL;
		struct dfg_flow *fg = NULL;
		double t0, c0, dt, dc;
		size_t i;

		ASSERT_NE(NULL, text);
		p += sprintf(p, "digraph g {\n");
		if (k == 0) {
			for (i = 0; i < big; i++)
				*p++ = 'a' + i % 26;
			p += sprintf(p, " [type=generate, count=1];\n");
		} else if (k == 1) {
			p += sprintf(p, "a [type=generate, count=1, pattern=\"");
			for (i = 0; i < big; i++)
				*p++ = i % 7 ? 'a' + i % 26 : ' ';
			p += sprintf(p, "\"];\n");
		} else {
			p += sprintf(p, "a [type=generate, count=1]; /*");
			for (i = 0; i < big; i++)
				*p++ = i % 7 ? 'a' + i % 26 : ' ';
			p += sprintf(p, "*/\n");
		}
		sprintf(p, " o [type=write_lines,\n  bogus=1];\n}\n");
		t0 = now_s(CLOCK_MONOTONIC);
		c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
		EXPECT_EQ(-EINVAL, load(text, &fg, &errs));
		dc = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
		dt = now_s(CLOCK_MONOTONIC) - t0;
		TH_LOG("1 MiB %s: %.3f s CPU, %.3f s wall", shapes[k], dc, dt);
		EXPECT_LT(dc, 5.0);
		ASSERT_NE(NULL, errs);
		/* first of three: o's bogus attribute (o and the root have
		 * no flows) */
		EXPECT_STREQ("bogus", errs->v[0].attr);
		EXPECT_EQ(4, errs->v[0].line);
		dfg_flow_errors_free(errs);
		dfg_flow_free(fg);
		free(text);
	}
}

/* Names and values from the file go to a terminal escaped. */
TEST(errors_escaped)
{
	static const char text[] =
		"digraph g {\n \"a\x1b[2J\xc3\xa9\" [type=generate, count=\"1\x07\"];\n"
		OUT " \"a\x1b[2J\xc3\xa9\" -> o;\n}\n";
	struct dfg_flow_errors *errs = NULL;
	struct dfg_flow *fg = NULL;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	EXPECT_EQ(-EINVAL, load(text, &fg, &errs));
	ASSERT_NE(NULL, errs);
	f = open_memstream(&out, &len);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, dfg_flow_errors_print(errs, f));
	fclose(f);
	EXPECT_EQ(NULL, strchr(out, '\x1b'));
	EXPECT_EQ(NULL, strchr(out, '\x07'));
	EXPECT_NE(NULL, strstr(out, "node 'a\\x1b[2J\xc3\xa9'"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "'1\\x07' is not"));
	free(out);
	dfg_flow_errors_free(errs);
}

TEST_HARNESS_MAIN
