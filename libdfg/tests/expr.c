// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: the expression language of the built-in components
 * (comp/expr_parse.c, comp/expr_code.c, comp/expr_eval.c). Evaluation
 * results over tables of cases, syntax errors with their columns, runtime
 * errors, the limits that keep evaluation bounded, the compiled form
 * (constants folded, constant fields resolved) and the shape the
 * components read of it (dfg_expr_shape()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "../comp/expr_tree.h"

/* Evaluates @src over @line; the result as text in @out. */
static int run(const char *src, const char *line, int sep, char *out,
	       size_t outlen, char *err, size_t errlen)
{
	struct dfg_expr_env env;
	struct dfg_expr_val v;
	struct dfg_expr *e;
	int ret;

	ret = dfg_expr_compile(src, &e, err, errlen);
	if (ret)
		return ret;
	dfg_expr_env_init(&env, sep);
	dfg_expr_env_set(&env, line, strlen(line));
	ret = dfg_expr_eval(e, &env, &v, err, errlen);
	if (!ret && v.is_int)
		snprintf(out, outlen, "i:%lld", v.i);
	else if (!ret)
		snprintf(out, outlen, "s:%.*s", (int)v.len, v.s);
	dfg_expr_env_fini(&env);
	dfg_expr_free(e);
	return ret;
}

static const struct {
	const char	*src, *line;
	int		sep;
	const char	*want;
} cases[] = {
	{ "1 + 2 * 3", "", -1, "i:7" },
	{ "(1 + 2) * 3", "", -1, "i:9" },
	{ "7 / 2 . \"x\"", "", -1, "s:3x" },
	{ "-7 % 3", "", -1, "i:-1" },
	{ "- -5", "", -1, "i:5" },
	{ "$0", "  a b  ", -1, "s:  a b  " },
	{ "$1", "  alpha\tbeta  ", -1, "s:alpha" },
	{ "$2", "  alpha\tbeta  ", -1, "s:beta" },
	{ "$3", "alpha beta", -1, "s:" },
	{ "NF", "  alpha\tbeta  ", -1, "i:2" },
	{ "NF", "", -1, "i:0" },
	{ "NF", "a,,b,", ',', "i:4" },
	{ "$2", "a,,b,", ',', "s:" },
	{ "$3", "a,,b,", ',', "s:b" },
	{ "$NF", "a,b,c", ',', "s:c" },
	{ "$(NF-1)", "a,b,c", ',', "s:b" },
	{ "$NF-1", "1,2,30", ',', "i:29" },
	{ "NR", "x", -1, "i:1" },
	{ "$1 + $2", "40 2", -1, "i:42" },
	{ "$1 . $2", "40 2", -1, "s:402" },
	{ "$1 > 9", "10", -1, "i:1" },		/* numeric, not "10" < "9" */
	{ "$1 > \"9\"", "10", -1, "i:0" },	/* two strings: bytes */
	{ "$1 == 10", " 10 ", ',', "i:1" },
	{ "$1 == 10", "ten", -1, "i:0" },	/* not a number: strings */
	{ "\"abc\" < \"abd\"", "", -1, "i:1" },
	{ "\"ab\" < \"abc\"", "", -1, "i:1" },
	{ "\"b\" >= \"abc\"", "", -1, "i:1" },
	{ "1 != 1", "", -1, "i:0" },
	{ "1 <= 1 && 2 >= 3", "", -1, "i:0" },
	{ "0 || \"x\"", "", -1, "i:1" },
	{ "!\"\"", "", -1, "i:1" },
	{ "!!7", "", -1, "i:1" },
	{ "0 && 1 / 0", "", -1, "i:0" },	/* short circuit */
	{ "1 || 1 / 0", "", -1, "i:1" },
	{ "$1 ? \"yes\" : \"no\"", "", -1, "s:no" },
	{ "1 ? 2 ? 3 : 4 : 5", "", -1, "i:3" },
	{ "upper($1) . lower(\"MiX\")", "ab", -1, "s:ABmix" },
	{ "len($0)", "hello", -1, "i:5" },
	{ "len(12345)", "", -1, "i:5" },
	{ "substr(\"hello\", 2, 3)", "", -1, "s:ell" },
	{ "substr(\"hello\", 2)", "", -1, "s:ello" },
	{ "substr(\"hello\", 0, 2)", "", -1, "s:h" },
	{ "substr(\"hello\", -5, 100)", "", -1, "s:hello" },
	{ "substr(\"hello\", 6)", "", -1, "s:" },
	{ "substr(\"hello\", 3, -1)", "", -1, "s:" },
	{ "int(\" -12 \") + 1", "", -1, "i:-11" },
	{ "str(5) . 5", "", -1, "s:55" },
	{ "trim(\"  a b \\t\")", "", -1, "s:a b" },
	{ "contains($0, \"ell\")", "hello", -1, "i:1" },
	{ "contains($0, \"\")", "", -1, "i:1" },
	{ "contains($0, \"xl\")", "hello", -1, "i:0" },
	{ "startswith($0, \"he\") && endswith($0, \"lo\")", "hello", -1, "i:1" },
	{ "endswith(\"lo\", \"hello\")", "", -1, "i:0" },
	{ "$0 ~ \"^h.*o$\"", "hello", -1, "i:1" },
	{ "$0 !~ \"[0-9]\"", "hello", -1, "i:1" },
	{ "\"a\\\"b\\\\\\n\"", "", -1, "s:a\"b\\\n" },
	{ "9223372036854775807", "", -1, "i:9223372036854775807" },
	{ "int(\"-9223372036854775808\")", "", -1, "i:-9223372036854775808" },
	{ "$1 . \",\" . $3", "a b c", -1, "s:a,c" },
	/* constant parts folded, the rest per element */
	{ "$(1 + 1) . (2 * 3)", "a b c", -1, "s:b6" },
	{ "$NR", "a b c", -1, "s:a" },
	{ "$1 ? NR : \"x\" . $2", "", -1, "s:x" },
	{ "$1 ? NR + 1 : \"x\" . $2", "1 y", -1, "i:2" },
	{ "(0 && $1) || (NR && \"\")", "1", -1, "i:0" },
	{ "1 && $1 || 0", "", -1, "i:0" },
	{ "upper(\"ab\") ~ \"^AB$\" ? $1 : $2", "p q", -1, "s:p" },
	{ "substr($0, 1 + 1, len(\"abc\"))", "hello", -1, "s:ell" },
	{ "contains(lower($0), \"el\") . -(2 - 5)", "HELLO", -1, "s:13" },
	{ "(NF > 1 ? $2 : $1) . (1 ? \"!\" : $9)", "a b", -1, "s:b!" },
};

TEST(eval_cases)
{
	char out[256], err[128];
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = run(cases[i].src, cases[i].line, cases[i].sep, out,
			      sizeof(out), err, sizeof(err));

		EXPECT_EQ(0, ret) TH_LOG("'%s': %s", cases[i].src, err);
		if (!ret)
			EXPECT_STREQ(cases[i].want, out)
				TH_LOG("'%s' on '%s'", cases[i].src,
				       cases[i].line);
	}
}

static const struct {
	const char	*src;
	int		ret;
	const char	*msg;
} syntax[] = {
	{ "", -EINVAL, "col 1: unexpected end of expression" },
	{ "1 +", -EINVAL, "col 4: unexpected end of expression" },
	{ "(1 + 2", -EINVAL, "col 7: expected ')'" },
	{ "1 2", -EINVAL, "col 3: unexpected '2'" },
	{ "\"abc", -EINVAL, "col 1: unterminated string" },
	{ "\"a\\qb\"", -EINVAL, "col 3: unknown escape '\\q'" },
	{ "foo(1)", -EINVAL, "col 1: unknown function 'foo'" },
	{ "x + 1", -EINVAL, "col 1: unknown name 'x'" },
	{ "len()", -EINVAL, "col 1: len() takes at least 1 arguments" },
	{ "len(1, 2)", -EINVAL, "col 1: len() takes at most 1 arguments" },
	{ "1 ? 2", -EINVAL, "col 6: expected ':'" },
	{ "99999999999999999999", -ERANGE, "col 1: integer too large" },
	{ "12ab", -EINVAL, "col 3: bad number" },
	{ "1.5", -EINVAL, "col 1: no fractional numbers" },
	{ "$0 ~ $1", -EINVAL, "col 6: '~' wants a string literal pattern" },
	{ "$0 ~ \"(\"", -EINVAL, "col 6: bad pattern" },
	{ "1 < 2 < 3", -EINVAL, "col 7: unexpected '<'" },
	{ "@", -EINVAL, "col 1: unexpected '@'" },
};

TEST(syntax_errors)
{
	struct dfg_expr *e = NULL;
	char err[128];
	unsigned int i;

	for (i = 0; i < sizeof(syntax) / sizeof(syntax[0]); i++) {
		EXPECT_EQ(syntax[i].ret,
			  dfg_expr_compile(syntax[i].src, &e, err, sizeof(err)))
			TH_LOG("'%s'", syntax[i].src);
		EXPECT_EQ(0, strncmp(err, syntax[i].msg, strlen(syntax[i].msg)))
			TH_LOG("'%s': got '%s', want '%s'", syntax[i].src, err,
			       syntax[i].msg);
		EXPECT_EQ(NULL, e);
	}
	EXPECT_EQ(-EINVAL, dfg_expr_compile(NULL, &e, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, dfg_expr_compile("1", NULL, err, sizeof(err)));
	/* no message buffer is fine */
	EXPECT_EQ(-EINVAL, dfg_expr_compile("(", &e, NULL, 0));
}

static const struct {
	const char	*src, *line;
	int		ret;
	const char	*msg;
} runtime[] = {
	{ "$1 + 1", "abc", -EINVAL, "col 1: not a number: 'abc'" },
	{ "1 + $1", "1x", -EINVAL, "col 5: not a number: '1x'" },
	{ "1 / ($1 - 2)", "2", -EDOM, "col 3: division by zero" },
	{ "5 % 0", "", -EDOM, "col 3: division by zero" },
	{ "9223372036854775807 + 1", "", -ERANGE, "col 21: integer overflow" },
	{ "-int(\"-9223372036854775808\")", "", -ERANGE,
	  "col 1: integer overflow" },
	{ "int(\"-9223372036854775808\") / -1", "", -ERANGE,
	  "col 29: integer overflow" },
	{ "4611686018427387904 * 2", "", -ERANGE, "col 21: integer overflow" },
	{ "int(\"99999999999999999999\")", "", -ERANGE,
	  "col 5: number out of range" },
	{ "$(0 - 1)", "a", -EINVAL, "col 1: negative field number -1" },
	{ "1 ? $1 * 2 : 0", "q", -EINVAL, "col 5: not a number: 'q'" },
};

TEST(runtime_errors)
{
	char out[64], err[128];
	unsigned int i;

	for (i = 0; i < sizeof(runtime) / sizeof(runtime[0]); i++) {
		EXPECT_EQ(runtime[i].ret,
			  run(runtime[i].src, runtime[i].line, -1, out,
			      sizeof(out), err, sizeof(err)))
			TH_LOG("'%s'", runtime[i].src);
		EXPECT_EQ(0, strncmp(err, runtime[i].msg,
				     strlen(runtime[i].msg)))
			TH_LOG("'%s': got '%s', want '%s'", runtime[i].src, err,
			       runtime[i].msg);
	}
}

TEST(limits)
{
	char src[DFG_EXPR_MAX_SRC + 2], err[128], out[64];
	struct dfg_expr *e = NULL;
	size_t i;

	/* too long */
	memset(src, ' ', sizeof(src) - 1);
	src[0] = '1';
	src[sizeof(src) - 1] = '\0';
	EXPECT_EQ(-EINVAL, dfg_expr_compile(src, &e, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "too long"));

	/* nested parentheses past the limit */
	for (i = 0; i < 100; i++)
		src[i] = '(';
	src[i++] = '1';
	memset(src + i, ')', 100);
	src[i + 100] = '\0';
	EXPECT_EQ(-EINVAL, dfg_expr_compile(src, &e, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "nested too deeply"));

	/* a chain taller than the tree limit */
	src[0] = '1';
	for (i = 1; i < 2 * (DFG_EXPR_MAX_HEIGHT + 1); i += 2)
		memcpy(src + i, "+1", 2);
	src[i] = '\0';
	EXPECT_EQ(-EINVAL, dfg_expr_compile(src, &e, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "too deep"));

	/* just below both limits works */
	src[0] = '1';
	for (i = 1; i < 2 * (DFG_EXPR_MAX_HEIGHT - 2); i += 2)
		memcpy(src + i, "+1", 2);
	src[i] = '\0';
	EXPECT_EQ(0, run(src, "", -1, out, sizeof(out), err, sizeof(err)));
	EXPECT_STREQ("i:255", out);
	EXPECT_EQ(NULL, e);
}

/*
 * What the code generator makes: a constant subtree is one instruction,
 * a constant field number is resolved, a subtree whose evaluation fails
 * stays code that fails per element with its column.
 */
static const struct {
	const char	*src;
	unsigned int	ncode;
	enum op		first;
} code[] = {
	{ "1 + 2 * 3", 1, OP_INT },
	{ "\"a\" . \"b\" . 1", 1, OP_STR },
	{ "upper(\"ab\") ~ \"^AB$\" && len(\"x\")", 1, OP_INT },
	{ "1 ? 2 : 3 / 0", 1, OP_INT },
	{ "$0", 1, OP_FIELDK },
	{ "$(2 - 1)", 1, OP_FIELDK },
	{ "$NF", 2, OP_NF },
	{ "$(0 - 1)", 2, OP_INT },
	{ "1 / 0", 3, OP_INT },
	{ "$1 . (\"a\" . \"b\")", 3, OP_FIELDK },
};

TEST(compiled_form)
{
	struct dfg_expr *e;
	char err[128];
	unsigned int i;

	for (i = 0; i < sizeof(code) / sizeof(code[0]); i++) {
		ASSERT_EQ(0, dfg_expr_compile(code[i].src, &e, err,
					      sizeof(err)))
			TH_LOG("'%s': %s", code[i].src, err);
		EXPECT_EQ(code[i].ncode, e->ncode) TH_LOG("'%s'", code[i].src);
		EXPECT_EQ(code[i].first, e->code[0].op)
			TH_LOG("'%s'", code[i].src);
		dfg_expr_free(e);
	}
}

/*
 * What a component may skip evaluating: $0 is the element, a folded
 * constant its value; anything that reads more, or whose folding failed
 * (left to every element, to report its error), is evaluated.
 */
static const struct {
	const char		*src;
	enum dfg_expr_shape	shape;
	const char		*want;	/* DFG_EXPR_CONST: the value */
} shapes[] = {
	{ "$0", DFG_EXPR_LINE, NULL },
	{ "$(1 - 1)", DFG_EXPR_LINE, NULL },
	{ "1", DFG_EXPR_CONST, "i:1" },
	{ "(2 + 3) * 4", DFG_EXPR_CONST, "i:20" },
	{ "\"a\" . \"b\"", DFG_EXPR_CONST, "s:ab" },
	{ "$1", DFG_EXPR_ANY, NULL },
	{ "$0 . \"\"", DFG_EXPR_ANY, NULL },
	{ "NR", DFG_EXPR_ANY, NULL },
	{ "NF", DFG_EXPR_ANY, NULL },
	{ "1 / 0", DFG_EXPR_ANY, NULL },
};

TEST(shape)
{
	struct dfg_expr_val v;
	struct dfg_expr *e;
	char err[128], got[64];
	unsigned int i;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		ASSERT_EQ(0, dfg_expr_compile(shapes[i].src, &e, err,
					      sizeof(err)))
			TH_LOG("'%s': %s", shapes[i].src, err);
		EXPECT_EQ(shapes[i].shape, dfg_expr_shape(e, &v))
			TH_LOG("'%s'", shapes[i].src);
		if (shapes[i].want) {
			if (v.is_int)
				snprintf(got, sizeof(got), "i:%lld", v.i);
			else
				snprintf(got, sizeof(got), "s:%.*s",
					 (int)v.len, v.s);
			EXPECT_STREQ(shapes[i].want, got)
				TH_LOG("'%s'", shapes[i].src);
		}
		dfg_expr_free(e);
	}
}

/* Strings made for one element stay valid until the next, however many. */
TEST(scratch_reuse)
{
	struct dfg_expr_env env;
	struct dfg_expr_val v;
	struct dfg_expr *e;
	char line[64], want[160], err[128];
	int i;

	ASSERT_EQ(0, dfg_expr_compile("upper($0) . \"-\" . $0 . \"-\" . NR",
				      &e, err, sizeof(err)));
	dfg_expr_env_init(&env, -1);
	for (i = 0; i < 20000; i++) {
		snprintf(line, sizeof(line), "line%d", i);
		dfg_expr_env_set(&env, line, strlen(line));
		ASSERT_EQ(0, dfg_expr_eval(e, &env, &v, err, sizeof(err)));
		snprintf(want, sizeof(want), "LINE%d-line%d-%d", i, i, i + 1);
		ASSERT_EQ(strlen(want), v.len);
		ASSERT_EQ(0, memcmp(want, v.s, v.len));
	}
	dfg_expr_env_fini(&env);
	dfg_expr_free(e);
}

TEST_HARNESS_MAIN
