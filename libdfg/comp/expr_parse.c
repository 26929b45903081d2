// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * The expression language's parser: recursive descent into an array of
 * nodes (expr_tree.h), which expr_eval.c walks. Grammar, lowest
 * precedence first:
 *
 *	expr	:= or [ '?' expr ':' expr ]
 *	or	:= and { '||' and }
 *	and	:= cmp { '&&' cmp }
 *	cmp	:= cat [ ( '==' | '!=' | '<' | '<=' | '>' | '>=' ) cat
 *		       | ( '~' | '!~' ) STRING ]
 *	cat	:= add { '.' add }
 *	add	:= mul { ( '+' | '-' ) mul }
 *	mul	:= unary { ( '*' | '/' | '%' ) unary }
 *	unary	:= ( '!' | '-' ) unary | '$' primary | primary
 *	primary	:= INT | STRING | 'NF' | 'NR' | NAME '(' [ expr { ',' expr } ] ')'
 *		 | '(' expr ')'
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_tree.h"

static const struct {
	const char	*name;
	unsigned int	min_args, max_args;
} fns[] = {
	[FN_LEN]	= { "len", 1, 1 },
	[FN_LOWER]	= { "lower", 1, 1 },
	[FN_UPPER]	= { "upper", 1, 1 },
	[FN_SUBSTR]	= { "substr", 2, 3 },
	[FN_INT]	= { "int", 1, 1 },
	[FN_STR]	= { "str", 1, 1 },
	[FN_TRIM]	= { "trim", 1, 1 },
	[FN_CONTAINS]	= { "contains", 2, 2 },
	[FN_STARTS]	= { "startswith", 2, 2 },
	[FN_ENDS]	= { "endswith", 2, 2 },
};

/* Parser state; @err is set once, by the first error. */
struct parser {
	const char	*src;
	size_t		pos;
	unsigned int	depth;
	struct dfg_expr	*e;
	char		*err;
	size_t		errlen;
	int		ret;
};

static int perr(struct parser *p, size_t pos, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int perr(struct parser *p, size_t pos, int ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->ret)
		return -1;
	p->ret = ret;
	if (!p->err || !p->errlen)
		return -1;
	n = snprintf(p->err, p->errlen, "col %zu: ", pos + 1);
	if (n >= 0 && (size_t)n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static void skip_blanks(struct parser *p)
{
	while (isspace((unsigned char)p->src[p->pos]))
		p->pos++;
}

/* Consumes @tok if it comes next (after blanks). */
static bool accept(struct parser *p, const char *tok)
{
	size_t n = strlen(tok);

	skip_blanks(p);
	if (strncmp(p->src + p->pos, tok, n))
		return false;
	/* '.' of a concatenation is never the start of "..": none exists */
	p->pos += n;
	return true;
}

static int new_node(struct parser *p, enum op op, size_t pos)
{
	struct dfg_expr *e = p->e;
	struct node *n;

	if (e->nr == e->cap) {
		unsigned int cap = e->cap ? 2 * e->cap : 16;
		struct node *nodes = realloc(e->nodes, cap * sizeof(*nodes));

		if (!nodes)
			return perr(p, pos, -ENOMEM, "out of memory");
		e->nodes = nodes;
		e->cap = cap;
	}
	n = &e->nodes[e->nr];
	memset(n, 0, sizeof(*n));
	n->op = op;
	n->pos = pos + 1;
	n->height = 1;
	return e->nr++;
}

/* A node @op over the @nkids subtrees @kids, or -1. */
static int inner(struct parser *p, enum op op, size_t pos, const int *kids,
		 unsigned int nkids)
{
	unsigned int k, height = 0;
	struct node *n;
	int idx;

	for (k = 0; k < nkids; k++) {
		if (kids[k] < 0)
			return -1;
		if (p->e->nodes[kids[k]].height > height)
			height = p->e->nodes[kids[k]].height;
	}
	if (height >= DFG_EXPR_MAX_HEIGHT)
		return perr(p, pos, -EINVAL, "expression too deep");
	idx = new_node(p, op, pos);
	if (idx < 0)
		return -1;
	n = &p->e->nodes[idx];
	n->height = height + 1;
	n->nkids = nkids;
	memcpy(n->kid, kids, nkids * sizeof(kids[0]));
	return idx;
}

static int binary(struct parser *p, enum op op, size_t pos, int a, int b)
{
	int kids[2] = { a, b };

	return inner(p, op, pos, kids, 2);
}

static int parse_expr(struct parser *p);

static int parse_string(struct parser *p)
{
	size_t start = p->pos, len = 0;
	char *s;
	int n;

	/* the unescaped text is never longer than the quoted one */
	s = malloc(strlen(p->src + start) + 1);
	if (!s)
		return perr(p, start, -ENOMEM, "out of memory");
	p->pos++;
	for (;;) {
		char ch = p->src[p->pos];

		if (!ch) {
			free(s);
			return perr(p, start, -EINVAL, "unterminated string");
		}
		p->pos++;
		if (ch == '"')
			break;
		if (ch == '\\') {
			char esc = p->src[p->pos++];

			switch (esc) {
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			case '\\': ch = '\\'; break;
			case '"': ch = '"'; break;
			default:
				free(s);
				return perr(p, p->pos - 2, -EINVAL,
					    "unknown escape '\\%c'",
					    esc ? esc : '0');
			}
		}
		s[len++] = ch;
	}
	n = new_node(p, OP_STR, start);
	if (n < 0) {
		free(s);
		return -1;
	}
	p->e->nodes[n].s = s;
	p->e->nodes[n].len = len;
	return n;
}

static int parse_int(struct parser *p)
{
	size_t start = p->pos;
	long long v = 0;
	int n;

	while (isdigit((unsigned char)p->src[p->pos])) {
		int d = p->src[p->pos++] - '0';

		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, d, &v))
			return perr(p, start, -ERANGE, "integer too large");
	}
	if (isalpha((unsigned char)p->src[p->pos]) || p->src[p->pos] == '_')
		return perr(p, p->pos, -EINVAL, "bad number");
	if (p->src[p->pos] == '.' && isdigit((unsigned char)p->src[p->pos + 1]))
		return perr(p, start, -EINVAL, "no fractional numbers");
	n = new_node(p, OP_INT, start);
	if (n >= 0)
		p->e->nodes[n].i = v;
	return n;
}

static int parse_call(struct parser *p, size_t start, const char *name,
		      size_t nlen)
{
	unsigned int f, nargs = 0;
	int n, args[MAX_ARGS];

	for (f = 0; f < sizeof(fns) / sizeof(fns[0]); f++)
		if (strlen(fns[f].name) == nlen &&
		    !strncmp(fns[f].name, name, nlen))
			break;
	if (f == sizeof(fns) / sizeof(fns[0]))
		return perr(p, start, -EINVAL, "unknown function '%.*s'",
			    (int)nlen, name);
	if (!accept(p, ")")) {
		do {
			int a;

			if (nargs == fns[f].max_args)
				return perr(p, start, -EINVAL,
					    "%s() takes at most %u arguments",
					    fns[f].name, fns[f].max_args);
			a = parse_expr(p);
			if (a < 0)
				return -1;
			args[nargs++] = a;
		} while (accept(p, ","));
		if (!accept(p, ")"))
			return perr(p, p->pos, -EINVAL, "expected ')'");
	}
	if (nargs < fns[f].min_args)
		return perr(p, start, -EINVAL, "%s() takes at least %u arguments",
			    fns[f].name, fns[f].min_args);
	n = inner(p, OP_CALL, start, args, nargs);
	if (n >= 0)
		p->e->nodes[n].fn = f;
	return n;
}

static int parse_primary(struct parser *p)
{
	size_t start;
	char ch;

	skip_blanks(p);
	start = p->pos;
	ch = p->src[start];
	if (isdigit((unsigned char)ch))
		return parse_int(p);
	if (ch == '"')
		return parse_string(p);
	if (ch == '(') {
		int n;

		p->pos++;
		n = parse_expr(p);
		if (n >= 0 && !accept(p, ")"))
			return perr(p, p->pos, -EINVAL, "expected ')'");
		return n;
	}
	if (isalpha((unsigned char)ch) || ch == '_') {
		size_t nlen;

		while (isalnum((unsigned char)p->src[p->pos]) ||
		       p->src[p->pos] == '_')
			p->pos++;
		nlen = p->pos - start;
		if (nlen == 2 && !strncmp(p->src + start, "NF", 2))
			return new_node(p, OP_NF, start);
		if (nlen == 2 && !strncmp(p->src + start, "NR", 2))
			return new_node(p, OP_NR, start);
		if (accept(p, "("))
			return parse_call(p, start, p->src + start, nlen);
		return perr(p, start, -EINVAL, "unknown name '%.*s'",
			    (int)nlen, p->src + start);
	}
	if (!ch)
		return perr(p, start, -EINVAL, "unexpected end of expression");
	return perr(p, start, -EINVAL, "unexpected '%c'", ch);
}

static int parse_unary(struct parser *p)
{
	size_t start;
	enum op op;
	int a;

	skip_blanks(p);
	start = p->pos;
	if (accept(p, "!") && p->src[p->pos] != '~')
		op = OP_NOT;
	else if ((p->pos = start, accept(p, "-")))
		op = OP_NEG;
	else if (accept(p, "$"))
		op = OP_FIELD;
	else
		return parse_primary(p);

	if (++p->depth > DFG_EXPR_MAX_DEPTH)
		return perr(p, start, -EINVAL, "expression nested too deeply");
	a = parse_unary(p);
	p->depth--;
	return inner(p, op, start, &a, 1);
}

static int parse_match(struct parser *p, enum op op, size_t pos, int a)
{
	struct node *pat;
	char msg[128];
	regex_t *re;
	int b, n, rc;

	skip_blanks(p);
	if (p->src[p->pos] != '"')
		return perr(p, p->pos, -EINVAL,
			    "'~' wants a string literal pattern");
	b = parse_string(p);
	n = binary(p, op, pos, a, b);
	if (n < 0)
		return -1;
	pat = &p->e->nodes[b];
	if (memchr(pat->s, '\0', pat->len))
		return perr(p, pat->pos - 1, -EINVAL, "NUL in pattern");
	pat->s[pat->len] = '\0';
	re = malloc(sizeof(*re));
	if (!re)
		return perr(p, pos, -ENOMEM, "out of memory");
	rc = regcomp(re, pat->s, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, re, msg, sizeof(msg));
		free(re);
		return perr(p, pat->pos - 1, -EINVAL, "bad pattern: %s", msg);
	}
	p->e->nodes[n].re = re;
	return n;
}

/* One binary operator: its token and node. */
struct bin_op {
	const char	*tok;
	enum op		op;
};

/*
 * struct bin_level - binary operators of one precedence
 * @ops:	longest token first where one is a prefix of another
 * @nr:		how many
 * @chain:	left-associative (a - b - c); else at most one (comparisons)
 */
struct bin_level {
	const struct bin_op	*ops;
	unsigned int		nr;
	bool			chain;
};

static const struct bin_op mul_ops[] = {
	{ "*", OP_MUL }, { "/", OP_DIV }, { "%", OP_MOD },
};
static const struct bin_op add_ops[] = { { "+", OP_ADD }, { "-", OP_SUB } };
static const struct bin_op cat_ops[] = { { ".", OP_CAT } };
static const struct bin_op cmp_ops[] = {
	{ "==", OP_EQ }, { "!=", OP_NE }, { "<=", OP_LE },
	{ ">=", OP_GE }, { "!~", OP_NOMATCH }, { "<", OP_LT },
	{ ">", OP_GT }, { "~", OP_MATCH },
};
static const struct bin_op and_ops[] = { { "&&", OP_AND } };
static const struct bin_op or_ops[] = { { "||", OP_OR } };

#define BIN_LEVEL(o, c)	{ o, sizeof(o) / sizeof((o)[0]), c }

/* Tightest first; parse_binary(p, BIN_LEVELS - 1) parses a whole "||". */
static const struct bin_level bin_levels[] = {
	BIN_LEVEL(mul_ops, true),
	BIN_LEVEL(add_ops, true),
	BIN_LEVEL(cat_ops, true),
	BIN_LEVEL(cmp_ops, false),
	BIN_LEVEL(and_ops, true),
	BIN_LEVEL(or_ops, true),
};

#define BIN_LEVELS	(sizeof(bin_levels) / sizeof(bin_levels[0]))

static int parse_binary(struct parser *p, unsigned int level);

/* An operand of @level: the next tighter level, or a unary term. */
static int parse_operand(struct parser *p, unsigned int level)
{
	return level ? parse_binary(p, level - 1) : parse_unary(p);
}

static int parse_binary(struct parser *p, unsigned int level)
{
	const struct bin_level *l = &bin_levels[level];
	int a = parse_operand(p, level);
	const struct bin_op *o;
	unsigned int i;
	size_t pos;

	while (a >= 0) {
		skip_blanks(p);
		pos = p->pos;
		for (i = 0; i < l->nr && !accept(p, l->ops[i].tok); i++)
			;
		if (i == l->nr)
			return a;
		o = &l->ops[i];
		if (o->op == OP_MATCH || o->op == OP_NOMATCH)
			return parse_match(p, o->op, pos, a);
		a = binary(p, o->op, pos, a, parse_operand(p, level));
		if (!l->chain)
			return a;
	}
	return -1;
}

static int parse_expr(struct parser *p)
{
	int kids[3];
	size_t pos;
	int c;

	if (++p->depth > DFG_EXPR_MAX_DEPTH)
		return perr(p, p->pos, -EINVAL, "expression nested too deeply");
	c = parse_binary(p, BIN_LEVELS - 1);
	if (c < 0)
		return -1;
	skip_blanks(p);
	pos = p->pos;
	if (accept(p, "?")) {
		kids[0] = c;
		kids[1] = parse_expr(p);
		if (kids[1] < 0)
			return -1;
		if (!accept(p, ":"))
			return perr(p, p->pos, -EINVAL, "expected ':'");
		kids[2] = parse_expr(p);
		c = inner(p, OP_COND, pos, kids, 3);
	}
	p->depth--;
	return c;
}

void dfg_expr_free(struct dfg_expr *e)
{
	unsigned int i;

	if (!e)
		return;
	for (i = 0; i < e->nr; i++) {
		free(e->nodes[i].s);
		if (e->nodes[i].re) {
			regfree(e->nodes[i].re);
			free(e->nodes[i].re);
		}
	}
	free(e->nodes);
	free(e->code);
	free(e);
}

/*
 * Compiles @src. Returns 0 and *@ep, or -EINVAL (syntax; @err says where
 * and what), -ERANGE (integer literal), -ENOMEM.
 */
int dfg_expr_compile(const char *src, struct dfg_expr **ep, char *err,
		     size_t errlen)
{
	struct parser p = { .src = src, .err = err, .errlen = errlen };

	if (err && errlen)
		err[0] = '\0';
	if (!src || !ep)
		return -EINVAL;
	if (strlen(src) > DFG_EXPR_MAX_SRC) {
		perr(&p, DFG_EXPR_MAX_SRC, -EINVAL, "expression too long");
		return p.ret;
	}
	p.e = calloc(1, sizeof(*p.e));
	if (!p.e)
		return -ENOMEM;
	p.e->root = parse_expr(&p);
	skip_blanks(&p);
	if (!p.ret && src[p.pos])
		perr(&p, p.pos, -EINVAL, "unexpected '%c'", src[p.pos]);
	if (!p.ret && __dfg_expr_codegen(p.e))
		perr(&p, p.pos, -ENOMEM, "out of memory");
	if (p.ret) {
		dfg_expr_free(p.e);
		return p.ret;
	}
	*ep = p.e;
	return 0;
}
