// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * The expression language's evaluator: the environment (the element and
 * its fields, split on first use) and a loop over the instructions
 * expr_code.c made, on a stack of values whose depth the tree's height
 * bounds; nothing is allocated but the scratch strings an expression
 * builds (concatenation, lower, upper, a match's subject, printed
 * integers), which reuse one area from element to element.
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
	struct dfg_expr_env	*env;
	char			*err;
	size_t			errlen;
};

static int everr(struct evaluator *ev, unsigned int pos, int ret,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int everr(struct evaluator *ev, unsigned int pos, int ret,
		 const char *fmt, ...)
{
	va_list ap;
	int k;

	if (!ev->err || !ev->errlen)
		return ret;
	k = snprintf(ev->err, ev->errlen, "col %u: ", pos);
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

/* @v as an integer; @pos: the column of the operand it came from. */
static int want_int(struct evaluator *ev, unsigned int pos,
		    const struct dfg_expr_val *v, long long *out)
{
	int ret = dfg_expr_to_int(v, out);

	if (ret == -ERANGE)
		return everr(ev, pos, ret, "number out of range: '%.*s'",
			     (int)(v->len > 40 ? 40 : v->len), v->s);
	if (ret)
		return everr(ev, pos, ret, "not a number: '%.*s'",
			     (int)(v->len > 40 ? 40 : v->len), v->s);
	return 0;
}

static int want_str(struct evaluator *ev, unsigned int pos,
		    struct dfg_expr_val *v)
{
	if (dfg_expr_to_str(ev->env, v))
		return everr(ev, pos, -ENOMEM, "out of memory");
	return 0;
}

/* @a = @a OP @b, integers. */
static int do_arith(struct evaluator *ev, const struct insn *in,
		    struct dfg_expr_val *a, const struct dfg_expr_val *b)
{
	long long x, y, r = 0;
	bool ovf = false;
	int ret;

	ret = want_int(ev, in->kpos[0], a, &x);
	if (!ret)
		ret = want_int(ev, in->kpos[1], b, &y);
	if (ret)
		return ret;
	switch (in->op) {
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
			return everr(ev, in->pos, -EDOM, "division by zero");
		if (x == LLONG_MIN && y == -1)
			ovf = true;
		else
			r = in->op == OP_DIV ? x / y : x % y;
		break;
	default:
		break;
	}
	if (ovf)
		return everr(ev, in->pos, -ERANGE, "integer overflow");
	set_int(a, r);
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
static int do_cmp(struct evaluator *ev, const struct insn *in,
		  struct dfg_expr_val *a, struct dfg_expr_val *b)
{
	long long x, y;
	int c;

	if ((a->is_int || b->is_int) && !dfg_expr_to_int(a, &x) &&
	    !dfg_expr_to_int(b, &y)) {
		c = x < y ? -1 : x > y;
	} else {
		if (want_str(ev, in->pos, a) || want_str(ev, in->pos, b))
			return -ENOMEM;
		c = cmp_str(a, b);
	}
	switch (in->op) {
	case OP_EQ: c = c == 0; break;
	case OP_NE: c = c != 0; break;
	case OP_LT: c = c < 0; break;
	case OP_LE: c = c <= 0; break;
	case OP_GT: c = c > 0; break;
	default: c = c >= 0; break;
	}
	set_int(a, c);
	return 0;
}

static int do_match(struct evaluator *ev, const struct insn *in,
		    struct dfg_expr_val *a)
{
	char *s;
	int ret;

	ret = want_str(ev, in->pos, a);
	if (ret)
		return ret;
	/* regexec wants a terminated string */
	s = scratch(ev->env, a->len + 1);
	if (!s)
		return everr(ev, in->pos, -ENOMEM, "out of memory");
	memcpy(s, a->s, a->len);
	s[a->len] = '\0';
	ret = regexec(in->re, s, 0, NULL, 0) == 0;
	set_int(a, in->op == OP_MATCH ? ret : !ret);
	return 0;
}

/* Field @k (>= 0) of the element into @v. */
static int get_field(struct evaluator *ev, unsigned int pos, long long k,
		     struct dfg_expr_val *v)
{
	struct dfg_expr_env *env = ev->env;

	if (k == 0) {
		set_str(v, env->line, env->len);
		return 0;
	}
	if (!env->split && split_fields(env))
		return everr(ev, pos, -ENOMEM, "out of memory");
	if (k > env->nf)
		set_str(v, "", 0);	/* a missing field is empty, as in awk */
	else
		set_str(v, env->line + env->fields[k - 1].off,
			env->fields[k - 1].len);
	return 0;
}

static int do_field(struct evaluator *ev, const struct insn *in,
		    struct dfg_expr_val *v)
{
	long long k;
	int ret;

	ret = want_int(ev, in->kpos[0], v, &k);
	if (ret)
		return ret;
	if (k < 0)
		return everr(ev, in->pos, -EINVAL, "negative field number %lld",
			     k);
	return get_field(ev, in->pos, k, v);
}

static int do_case(struct evaluator *ev, const struct insn *in,
		   struct dfg_expr_val *v, bool upper)
{
	size_t i;
	char *s;

	s = scratch(ev->env, v->len ? v->len : 1);
	if (!s)
		return everr(ev, in->pos, -ENOMEM, "out of memory");
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

/* A call on arguments @a[0 .. nargs); the result into @a[0]. */
static int do_call(struct evaluator *ev, const struct insn *in,
		   struct dfg_expr_val *a)
{
	struct dfg_expr_val *v = a;
	long long start, cnt;
	unsigned int k;
	size_t i;
	int ret;

	switch (in->fn) {
	case FN_INT:
		ret = want_int(ev, in->kpos[0], &a[0], &cnt);
		if (!ret)
			set_int(v, cnt);
		return ret;
	case FN_STR:
		return want_str(ev, in->pos, v);
	case FN_SUBSTR:
		/* substr(s, start[, n]): from 1, clamped like awk's */
		ret = want_int(ev, in->kpos[1], &a[1], &start);
		if (!ret && in->nargs == 3)
			ret = want_int(ev, in->kpos[2], &a[2], &cnt);
		if (ret || want_str(ev, in->pos, &a[0]))
			return ret ? ret : -ENOMEM;
		/* positions [start, start + cnt) within [1, len] */
		if (in->nargs < 3)
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
	for (k = 0; k < in->nargs; k++)
		if (want_str(ev, in->pos, &a[k]))
			return -ENOMEM;
	switch (in->fn) {
	case FN_LEN:
		set_int(v, a[0].len);
		return 0;
	case FN_LOWER:
	case FN_UPPER:
		return do_case(ev, in, v, in->fn == FN_UPPER);
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

static int do_cat(struct evaluator *ev, const struct insn *in,
		  struct dfg_expr_val *a, struct dfg_expr_val *b)
{
	char *s;
	int ret;

	ret = want_str(ev, in->pos, a);
	if (!ret)
		ret = want_str(ev, in->pos, b);
	if (ret)
		return ret;
	s = scratch(ev->env, a->len + b->len ? a->len + b->len : 1);
	if (!s)
		return everr(ev, in->pos, -ENOMEM, "out of memory");
	if (a->len)
		memcpy(s, a->s, a->len);
	if (b->len)
		memcpy(s + a->len, b->s, b->len);
	set_str(a, s, a->len + b->len);
	return 0;
}

int __dfg_expr_run(const struct dfg_expr *e, unsigned int pc,
		   unsigned int end, struct dfg_expr_env *env,
		   struct dfg_expr_val *v, char *err, size_t errlen)
{
	struct evaluator ev = { .env = env, .err = err, .errlen = errlen };
	/* the stack, @sp its first free slot; expr_code.c bounds its depth */
	struct dfg_expr_val st[EXPR_STACK], *sp = st;
	long long x;
	int ret = 0;

	while (pc < end) {
		const struct insn *in = &e->code[pc++];

		switch (in->op) {
		case OP_INT:
			set_int(sp++, in->i);
			break;
		case OP_STR:
			set_str(sp++, in->s, in->len);
			break;
		case OP_NF:
			if (!env->split && split_fields(env))
				return everr(&ev, in->pos, -ENOMEM,
					     "out of memory");
			set_int(sp++, env->nf);
			break;
		case OP_NR:
			set_int(sp++, env->nr);
			break;
		case OP_FIELDK:
			if (!in->i)	/* $0, the commonest */
				set_str(sp++, env->line, env->len);
			else
				ret = get_field(&ev, in->pos, in->i, sp++);
			break;
		case OP_FIELD:
			ret = do_field(&ev, in, sp - 1);
			break;
		case OP_NOT:
			set_int(sp - 1, !dfg_expr_truth(sp - 1));
			break;
		case OP_NEG:
			ret = want_int(&ev, in->kpos[0], sp - 1, &x);
			if (ret)
				break;
			if (x == LLONG_MIN)
				return everr(&ev, in->pos, -ERANGE,
					     "integer overflow");
			set_int(sp - 1, -x);
			break;
		case OP_ADD:
		case OP_SUB:
		case OP_MUL:
		case OP_DIV:
		case OP_MOD:
			sp--;
			ret = do_arith(&ev, in, sp - 1, sp);
			break;
		case OP_CAT:
			sp--;
			ret = do_cat(&ev, in, sp - 1, sp);
			break;
		case OP_MATCH:
		case OP_NOMATCH:
			ret = do_match(&ev, in, sp - 1);
			break;
		case OP_CALL:
			sp -= in->nargs;
			ret = do_call(&ev, in, sp++);
			break;
		case OP_ANDJ:
		case OP_ORJ:
			if (dfg_expr_truth(sp - 1) == (in->op == OP_ORJ)) {
				set_int(sp - 1, in->op == OP_ORJ);
				pc = in->jump;
			} else {
				sp--;
			}
			break;
		case OP_TRUTH:
			set_int(sp - 1, dfg_expr_truth(sp - 1));
			break;
		case OP_JFALSE:
			if (!dfg_expr_truth(--sp))
				pc = in->jump;
			break;
		case OP_JMP:
			pc = in->jump;
			break;
		default:	/* comparisons */
			sp--;
			ret = do_cmp(&ev, in, sp - 1, sp);
			break;
		}
		if (ret)
			return ret;
	}
	*v = st[0];
	return 0;
}

/*
 * Evaluates @e on the element of @env into @v. Returns 0, or -EINVAL (a
 * string is not a number, negative field), -ERANGE (overflow), -EDOM
 * (division by zero), -ENOMEM, with @err saying where.
 */
enum dfg_expr_shape dfg_expr_shape(const struct dfg_expr *e,
				   struct dfg_expr_val *v)
{
	const struct insn *in = e->code;

	/* a folded constant and $0 compile to one instruction */
	if (e->ncode != 1)
		return DFG_EXPR_ANY;
	switch (in->op) {
	case OP_INT:
		set_int(v, in->i);
		return DFG_EXPR_CONST;
	case OP_STR:
		set_str(v, in->s, in->len);
		return DFG_EXPR_CONST;
	case OP_FIELDK:
		return in->i ? DFG_EXPR_ANY : DFG_EXPR_LINE;
	default:
		return DFG_EXPR_ANY;
	}
}

int dfg_expr_eval(const struct dfg_expr *e, struct dfg_expr_env *env,
		  struct dfg_expr_val *v, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	switch (dfg_expr_shape(e, v)) {
	case DFG_EXPR_LINE:
		set_str(v, env->line, env->len);
		return 0;
	case DFG_EXPR_CONST:
		return 0;
	default:
		return __dfg_expr_run(e, 0, e->ncode, env, v, err, errlen);
	}
}
