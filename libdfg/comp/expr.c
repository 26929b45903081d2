// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * The expression language: a recursive-descent parser into an array of
 * nodes, and a tree-walking evaluator. Grammar, lowest precedence first:
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

#include "expr.h"

enum op {
	OP_INT, OP_STR, OP_FIELD, OP_NF, OP_NR,
	OP_NEG, OP_NOT,
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_CAT,
	OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
	OP_AND, OP_OR, OP_COND, OP_MATCH, OP_NOMATCH,
	OP_CALL,
};

enum fn {
	FN_LEN, FN_LOWER, FN_UPPER, FN_SUBSTR, FN_INT, FN_STR, FN_TRIM,
	FN_CONTAINS, FN_STARTS, FN_ENDS,
};

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

#define MAX_ARGS	3

/*
 * struct node - one node of the tree
 * @op:		OP_*
 * @pos:	column of the node's token, from 1, for messages
 * @kid:	operands (indices into the node array); calls: arguments
 * @nkids:	operands in use
 * @fn:		OP_CALL: FN_*
 * @i:		OP_INT: the value
 * @s, @len:	OP_STR: the unescaped string (owned)
 * @re:		OP_MATCH, OP_NOMATCH: the compiled pattern (owned)
 * @height:	levels of the subtree, bounded so evaluation recursion is
 */
struct node {
	enum op		op;
	unsigned int	pos;
	unsigned int	height;
	int		kid[MAX_ARGS];
	unsigned int	nkids;
	enum fn		fn;
	long long	i;
	char		*s;
	size_t		len;
	regex_t		*re;
};

struct dfg_expr {
	struct node	*nodes;
	unsigned int	nr, cap;
	int		root;
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
	if (p.ret) {
		dfg_expr_free(p.e);
		return p.ret;
	}
	*ep = p.e;
	return 0;
}

/* ---- Environment ------------------------------------------------------- */

struct dfg_bump_chunk {
	struct dfg_bump_chunk	*next;
	size_t			size, used;
	char			data[];
};

#define CHUNK_MIN	4096

/* @n bytes that stay put until dfg_bump_reset() or _free(), or NULL. */
void *dfg_bump_alloc(struct dfg_bump *b, size_t n)
{
	struct dfg_bump_chunk *c;
	size_t size;

	for (c = b->chunks; c; c = c->next) {
		if (c->size - c->used >= n) {
			c->used += n;
			return c->data + c->used - n;
		}
	}
	size = n > CHUNK_MIN ? n : CHUNK_MIN;
	/* grow with what was used, so n allocations cost O(log n) chunks */
	if (b->chunks && b->chunks->size > size / 2 &&
	    b->chunks->size <= SIZE_MAX / 4 - sizeof(*c))
		size = n > 2 * b->chunks->size ? n : 2 * b->chunks->size;
	if (size > SIZE_MAX - sizeof(*c))
		return NULL;
	c = malloc(sizeof(*c) + size);
	if (!c)
		return NULL;
	c->size = size;
	c->used = n;
	c->next = b->chunks;
	b->chunks = c;
	return c->data;
}

void dfg_bump_reset(struct dfg_bump *b)
{
	struct dfg_bump_chunk *c;

	for (c = b->chunks; c; c = c->next)
		c->used = 0;
}

void dfg_bump_free(struct dfg_bump *b)
{
	while (b->chunks) {
		struct dfg_bump_chunk *next = b->chunks->next;

		free(b->chunks);
		b->chunks = next;
	}
}

void dfg_expr_env_init(struct dfg_expr_env *env, int sep)
{
	memset(env, 0, sizeof(*env));
	env->sep = sep;
}

void dfg_expr_env_set(struct dfg_expr_env *env, const void *line, size_t len)
{
	env->line = line;
	env->len = len;
	env->split = false;
	env->nr++;
	dfg_bump_reset(&env->scratch);
}

void dfg_expr_env_fini(struct dfg_expr_env *env)
{
	dfg_bump_free(&env->scratch);
	free(env->fields);
	env->fields = NULL;
}

static char *scratch(struct dfg_expr_env *env, size_t n)
{
	return dfg_bump_alloc(&env->scratch, n);
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

static int add_field(struct dfg_expr_env *env, size_t off, size_t len)
{
	if (env->nf == env->fields_cap) {
		unsigned int cap = env->fields_cap ? 2 * env->fields_cap : 16;
		struct dfg_expr_field *f;

		f = realloc(env->fields, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		env->fields = f;
		env->fields_cap = cap;
	}
	env->fields[env->nf].off = off;
	env->fields[env->nf].len = len;
	env->nf++;
	return 0;
}

/* Fields as awk makes them: by @sep, or by runs of blanks, trimmed. */
static int split_fields(struct dfg_expr_env *env)
{
	const char *l = env->line;
	size_t i = 0, start;
	int ret;

	env->nf = 0;
	if (env->sep >= 0) {
		if (!env->len)
			goto out;
		for (start = 0; i <= env->len; i++) {
			if (i < env->len && l[i] != (char)env->sep)
				continue;
			ret = add_field(env, start, i - start);
			if (ret)
				return ret;
			start = i + 1;
		}
		goto out;
	}
	for (;;) {
		while (i < env->len && is_blank(l[i]))
			i++;
		if (i == env->len)
			break;
		start = i;
		while (i < env->len && !is_blank(l[i]))
			i++;
		ret = add_field(env, start, i - start);
		if (ret)
			return ret;
	}
out:
	env->split = true;
	return 0;
}

/* ---- Evaluation -------------------------------------------------------- */

struct evaluator {
	const struct dfg_expr	*e;
	struct dfg_expr_env	*env;
	char			*err;
	size_t			errlen;
};

static int everr(struct evaluator *ev, const struct node *n, int ret,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int everr(struct evaluator *ev, const struct node *n, int ret,
		 const char *fmt, ...)
{
	va_list ap;
	int k;

	if (!ev->err || !ev->errlen)
		return ret;
	k = snprintf(ev->err, ev->errlen, "col %u: ", n->pos);
	if (k >= 0 && (size_t)k < ev->errlen) {
		va_start(ap, fmt);
		vsnprintf(ev->err + k, ev->errlen - k, fmt, ap);
		va_end(ap);
	}
	return ret;
}

static void set_int(struct dfg_expr_val *v, long long i)
{
	v->is_int = true;
	v->i = i;
	v->s = NULL;
	v->len = 0;
}

static void set_str(struct dfg_expr_val *v, const char *s, size_t len)
{
	v->is_int = false;
	v->s = s;
	v->len = len;
}

bool dfg_expr_truth(const struct dfg_expr_val *v)
{
	return v->is_int ? v->i != 0 : v->len != 0;
}

/*
 * Integer value of @v: an integer, or a string holding one (optional
 * blanks, optional sign, digits). Returns 0, -EINVAL or -ERANGE.
 */
int dfg_expr_to_int(const struct dfg_expr_val *v, long long *out)
{
	size_t i = 0, n = v->len;
	const char *s = v->s;
	bool neg = false, any = false;
	long long r = 0;

	if (v->is_int) {
		*out = v->i;
		return 0;
	}
	while (i < n && is_blank(s[i]))
		i++;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		/* accumulate negatively: LLONG_MIN has no positive twin */
		if (__builtin_mul_overflow(r, 10, &r) ||
		    __builtin_sub_overflow(r, s[i] - '0', &r))
			return -ERANGE;
		any = true;
	}
	while (i < n && is_blank(s[i]))
		i++;
	if (!any || i != n)
		return -EINVAL;
	if (!neg && r == LLONG_MIN)
		return -ERANGE;
	*out = neg ? r : -r;
	return 0;
}

/* Makes @v a string (integers are printed into the scratch area). */
int dfg_expr_to_str(struct dfg_expr_env *env, struct dfg_expr_val *v)
{
	char *s;
	int n;

	if (!v->is_int)
		return 0;
	s = scratch(env, 24);
	if (!s)
		return -ENOMEM;
	n = snprintf(s, 24, "%lld", v->i);
	set_str(v, s, n);
	return 0;
}

static int want_int(struct evaluator *ev, const struct node *n,
		    const struct dfg_expr_val *v, long long *out)
{
	int ret = dfg_expr_to_int(v, out);

	if (ret == -ERANGE)
		return everr(ev, n, ret, "number out of range: '%.*s'",
			     (int)(v->len > 40 ? 40 : v->len), v->s);
	if (ret)
		return everr(ev, n, ret, "not a number: '%.*s'",
			     (int)(v->len > 40 ? 40 : v->len), v->s);
	return 0;
}

static int want_str(struct evaluator *ev, const struct node *n,
		    struct dfg_expr_val *v)
{
	if (dfg_expr_to_str(ev->env, v))
		return everr(ev, n, -ENOMEM, "out of memory");
	return 0;
}

static int eval(struct evaluator *ev, int idx, struct dfg_expr_val *v);

static int eval_arith(struct evaluator *ev, const struct node *n,
		      struct dfg_expr_val *v)
{
	struct dfg_expr_val a, b;
	long long x, y, r = 0;
	bool ovf = false;
	int ret;

	ret = eval(ev, n->kid[0], &a);
	if (!ret)
		ret = eval(ev, n->kid[1], &b);
	if (!ret)
		ret = want_int(ev, &ev->e->nodes[n->kid[0]], &a, &x);
	if (!ret)
		ret = want_int(ev, &ev->e->nodes[n->kid[1]], &b, &y);
	if (ret)
		return ret;
	switch (n->op) {
	case OP_ADD:
		ovf = __builtin_add_overflow(x, y, &r);
		break;
	case OP_SUB:
		ovf = __builtin_sub_overflow(x, y, &r);
		break;
	case OP_MUL:
		ovf = __builtin_mul_overflow(x, y, &r);
		break;
	case OP_DIV:
	case OP_MOD:
		if (!y)
			return everr(ev, n, -EDOM, "division by zero");
		if (x == LLONG_MIN && y == -1)
			ovf = true;
		else
			r = n->op == OP_DIV ? x / y : x % y;
		break;
	default:
		break;
	}
	if (ovf)
		return everr(ev, n, -ERANGE, "integer overflow");
	set_int(v, r);
	return 0;
}

static int cmp_str(const struct dfg_expr_val *a, const struct dfg_expr_val *b)
{
	size_t n = a->len < b->len ? a->len : b->len;
	int c = n ? memcmp(a->s, b->s, n) : 0;

	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

/*
 * Two integers compare as numbers, two strings as bytes; an integer and a
 * string as numbers when the string holds one, else both as strings.
 */
static int eval_cmp(struct evaluator *ev, const struct node *n,
		    struct dfg_expr_val *v)
{
	struct dfg_expr_val a, b;
	long long x, y;
	int ret, c;

	ret = eval(ev, n->kid[0], &a);
	if (!ret)
		ret = eval(ev, n->kid[1], &b);
	if (ret)
		return ret;
	if ((a.is_int || b.is_int) && !dfg_expr_to_int(&a, &x) &&
	    !dfg_expr_to_int(&b, &y)) {
		c = x < y ? -1 : x > y;
	} else {
		if (want_str(ev, n, &a) || want_str(ev, n, &b))
			return -ENOMEM;
		c = cmp_str(&a, &b);
	}
	switch (n->op) {
	case OP_EQ: c = c == 0; break;
	case OP_NE: c = c != 0; break;
	case OP_LT: c = c < 0; break;
	case OP_LE: c = c <= 0; break;
	case OP_GT: c = c > 0; break;
	default: c = c >= 0; break;
	}
	set_int(v, c);
	return 0;
}

static int eval_match(struct evaluator *ev, const struct node *n,
		      struct dfg_expr_val *v)
{
	struct dfg_expr_val a;
	char *s;
	int ret;

	ret = eval(ev, n->kid[0], &a);
	if (!ret)
		ret = want_str(ev, n, &a);
	if (ret)
		return ret;
	/* regexec wants a terminated string */
	s = scratch(ev->env, a.len + 1);
	if (!s)
		return everr(ev, n, -ENOMEM, "out of memory");
	memcpy(s, a.s, a.len);
	s[a.len] = '\0';
	ret = regexec(n->re, s, 0, NULL, 0) == 0;
	set_int(v, n->op == OP_MATCH ? ret : !ret);
	return 0;
}

static int eval_field(struct evaluator *ev, const struct node *n,
		      struct dfg_expr_val *v)
{
	struct dfg_expr_env *env = ev->env;
	struct dfg_expr_val a;
	long long k;
	int ret;

	ret = eval(ev, n->kid[0], &a);
	if (!ret)
		ret = want_int(ev, &ev->e->nodes[n->kid[0]], &a, &k);
	if (ret)
		return ret;
	if (k < 0)
		return everr(ev, n, -EINVAL, "negative field number %lld", k);
	if (k == 0) {
		set_str(v, env->line, env->len);
		return 0;
	}
	if (!env->split && split_fields(env))
		return everr(ev, n, -ENOMEM, "out of memory");
	if (k > env->nf)
		set_str(v, "", 0);	/* a missing field is empty, as in awk */
	else
		set_str(v, env->line + env->fields[k - 1].off,
			env->fields[k - 1].len);
	return 0;
}

static int eval_case(struct evaluator *ev, const struct node *n,
		     struct dfg_expr_val *v, bool upper)
{
	size_t i;
	char *s;

	s = scratch(ev->env, v->len ? v->len : 1);
	if (!s)
		return everr(ev, n, -ENOMEM, "out of memory");
	for (i = 0; i < v->len; i++)
		s[i] = upper ? toupper((unsigned char)v->s[i]) :
			       tolower((unsigned char)v->s[i]);
	v->s = s;
	return 0;
}

static bool has_at(const struct dfg_expr_val *s, size_t off,
		   const struct dfg_expr_val *t)
{
	return off + t->len <= s->len && !memcmp(s->s + off, t->s, t->len);
}

static int eval_call(struct evaluator *ev, const struct node *n,
		     struct dfg_expr_val *v)
{
	struct dfg_expr_val a[MAX_ARGS];
	long long start, cnt;
	unsigned int k;
	size_t i;
	int ret;

	for (k = 0; k < n->nkids; k++) {
		ret = eval(ev, n->kid[k], &a[k]);
		if (ret)
			return ret;
	}
	switch (n->fn) {
	case FN_INT:
		ret = want_int(ev, &ev->e->nodes[n->kid[0]], &a[0], &cnt);
		if (!ret)
			set_int(v, cnt);
		return ret;
	case FN_STR:
		*v = a[0];
		return want_str(ev, n, v);
	case FN_SUBSTR:
		/* substr(s, start[, n]): from 1, clamped like awk's */
		ret = want_int(ev, &ev->e->nodes[n->kid[1]], &a[1], &start);
		if (!ret && n->nkids == 3)
			ret = want_int(ev, &ev->e->nodes[n->kid[2]], &a[2],
				       &cnt);
		if (ret || want_str(ev, n, &a[0]))
			return ret ? ret : -ENOMEM;
		/* positions [start, start + cnt) within [1, len] */
		if (n->nkids < 3)
			cnt = a[0].len;
		if (start < 1) {
			long long drop;

			if (__builtin_sub_overflow(1, start, &drop) ||
			    cnt <= drop)
				cnt = 0;
			else
				cnt -= drop;
			start = 1;
		}
		if (start > (long long)a[0].len || cnt <= 0) {
			set_str(v, "", 0);
			return 0;
		}
		if (cnt > (long long)a[0].len - (start - 1))
			cnt = a[0].len - (start - 1);
		set_str(v, a[0].s + start - 1, cnt);
		return 0;
	default:
		break;
	}
	for (k = 0; k < n->nkids; k++)
		if (want_str(ev, n, &a[k]))
			return -ENOMEM;
	*v = a[0];
	switch (n->fn) {
	case FN_LEN:
		set_int(v, a[0].len);
		return 0;
	case FN_LOWER:
	case FN_UPPER:
		return eval_case(ev, n, v, n->fn == FN_UPPER);
	case FN_TRIM:
		while (v->len && isspace((unsigned char)v->s[0])) {
			v->s++;
			v->len--;
		}
		while (v->len && isspace((unsigned char)v->s[v->len - 1]))
			v->len--;
		return 0;
	case FN_CONTAINS:
		ret = !a[1].len;
		for (i = 0; !ret && i + a[1].len <= a[0].len; i++)
			ret = has_at(&a[0], i, &a[1]);
		set_int(v, ret);
		return 0;
	case FN_STARTS:
		set_int(v, has_at(&a[0], 0, &a[1]));
		return 0;
	default:	/* FN_ENDS */
		set_int(v, a[1].len <= a[0].len &&
			   has_at(&a[0], a[0].len - a[1].len, &a[1]));
		return 0;
	}
}

static int eval_cat(struct evaluator *ev, const struct node *n,
		    struct dfg_expr_val *v)
{
	struct dfg_expr_val a, b;
	char *s;
	int ret;

	ret = eval(ev, n->kid[0], &a);
	if (!ret)
		ret = eval(ev, n->kid[1], &b);
	if (!ret)
		ret = want_str(ev, n, &a);
	if (!ret)
		ret = want_str(ev, n, &b);
	if (ret)
		return ret;
	s = scratch(ev->env, a.len + b.len ? a.len + b.len : 1);
	if (!s)
		return everr(ev, n, -ENOMEM, "out of memory");
	if (a.len)
		memcpy(s, a.s, a.len);
	if (b.len)
		memcpy(s + a.len, b.s, b.len);
	set_str(v, s, a.len + b.len);
	return 0;
}

static int eval(struct evaluator *ev, int idx, struct dfg_expr_val *v)
{
	const struct node *n = &ev->e->nodes[idx];
	struct dfg_expr_val a;
	long long x;
	int ret;

	switch (n->op) {
	case OP_INT:
		set_int(v, n->i);
		return 0;
	case OP_STR:
		set_str(v, n->s, n->len);
		return 0;
	case OP_NF:
		if (!ev->env->split && split_fields(ev->env))
			return everr(ev, n, -ENOMEM, "out of memory");
		set_int(v, ev->env->nf);
		return 0;
	case OP_NR:
		set_int(v, ev->env->nr);
		return 0;
	case OP_FIELD:
		return eval_field(ev, n, v);
	case OP_NOT:
		ret = eval(ev, n->kid[0], &a);
		if (!ret)
			set_int(v, !dfg_expr_truth(&a));
		return ret;
	case OP_NEG:
		ret = eval(ev, n->kid[0], &a);
		if (!ret)
			ret = want_int(ev, &ev->e->nodes[n->kid[0]], &a, &x);
		if (ret)
			return ret;
		if (x == LLONG_MIN)
			return everr(ev, n, -ERANGE, "integer overflow");
		set_int(v, -x);
		return 0;
	case OP_ADD:
	case OP_SUB:
	case OP_MUL:
	case OP_DIV:
	case OP_MOD:
		return eval_arith(ev, n, v);
	case OP_CAT:
		return eval_cat(ev, n, v);
	case OP_MATCH:
	case OP_NOMATCH:
		return eval_match(ev, n, v);
	case OP_AND:
	case OP_OR:
		ret = eval(ev, n->kid[0], &a);
		if (ret)
			return ret;
		if (dfg_expr_truth(&a) == (n->op == OP_OR)) {
			set_int(v, n->op == OP_OR);
			return 0;
		}
		ret = eval(ev, n->kid[1], &a);
		if (!ret)
			set_int(v, dfg_expr_truth(&a));
		return ret;
	case OP_COND:
		ret = eval(ev, n->kid[0], &a);
		if (ret)
			return ret;
		return eval(ev, n->kid[dfg_expr_truth(&a) ? 1 : 2], v);
	case OP_CALL:
		return eval_call(ev, n, v);
	default:
		return eval_cmp(ev, n, v);
	}
}

/*
 * Evaluates @e on the element of @env into @v. Returns 0, or -EINVAL (a
 * string is not a number, negative field), -ERANGE (overflow), -EDOM
 * (division by zero), -ENOMEM, with @err saying where.
 */
int dfg_expr_eval(const struct dfg_expr *e, struct dfg_expr_env *env,
		  struct dfg_expr_val *v, char *err, size_t errlen)
{
	struct evaluator ev = {
		.e = e, .env = env, .err = err, .errlen = errlen,
	};

	if (err && errlen)
		err[0] = '\0';
	return eval(&ev, e->root, v);
}
