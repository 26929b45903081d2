// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * rules/lang.c - dfg's rule language (dfg-rules(7)), translated to CLIPS.
 *
 *   file   := { "var" IDENT "=" expr | rule }
 *   rule   := "rule" IDENT [ "for" NAME ] [ "salience" INT ]
 *             "when" cond { "and" cond } "do" action { ";" action } "end"
 *   cond   := [ "not" ] KIND [ ?v ] [ SLOT OP expr { "," SLOT OP expr } ]
 *           | "test" expr OP expr
 *   action := "degree" expr expr | "unfold" expr | "fold" expr
 *           | "substitute" expr expr | "param" expr expr expr
 *           | "set" $x expr | "unset" $x | "add" rule | "revoke" IDENT
 *           | "warn" expr
 *   expr   := term { ("+" | "-" | "*" | "/") term }   (left to right)
 *   term   := NUMBER | STRING | IDENT | ?v | ?v.SLOT | $x | "(" expr ")"
 *
 * A condition becomes a CLIPS pattern binding every slot of its fact to
 * ?u-v--SLOT (?u-v itself to the name of a comp) and a test CE of its
 * comparisons; $x becomes a pattern ?v-x on variable x's fact. The
 * prefixes keep names CLIPS accepts, apart from the translation's own. Comparisons
 * never raise CLIPS errors: numbers compare as numbers, anything else
 * only for (in)equality.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules_impl.h"

/* The fact kinds rules match and their slots; [0] of comp is its name. */
struct kind {
	const char		*name;
	const char *const	*slots;
};

static const char *const comp_slots[] = {
	"name", "type", "degree", "phase", "set", "fed_by", "foldable",
	"cpu_share", "in_rate", "out_rate", "in_bytes_rate",
	"out_bytes_rate", "key_skew", "in_elems", "out_elems", NULL
};
static const char *const flow_slots[] = {
	"src", "dst", "kind", "key", "src_type", "dst_type", NULL
};
static const char *const param_slots[] = { "comp", "key", "value", NULL };
static const char *const metric_slots[] = { "comp", "name", "value", NULL };
static const char *const system_slots[] = {
	"cpus", "numa", "mem_avail", NULL
};
static const char *const event_slots[] = {
	"name", "graph", "object", "pid", "rank", "cmd", "fill", "capacity",
	"mark", "cpu", "wait_ms", "mem_avail", "mem_total", "count", "rate",
	"period_ms", NULL
};
static const char *const proposed_slots[] = {
	"op", "comp", "degree", "type", "key", "value", NULL
};
static const char *const var_slots[] = { "name", "value", NULL };

static const struct kind kinds[] = {
	{ "comp", comp_slots },
	{ "flow", flow_slots },
	{ "param", param_slots },
	{ "metric", metric_slots },
	{ "system", system_slots },
	{ "event", event_slots },
	{ "proposed", proposed_slots },
	{ "var", var_slots },
};

const char *const rl_templates[] = {
	"(deftemplate comp (slot name) (slot type) (slot degree) (slot phase)"
	" (slot set) (slot fed_by) (slot foldable) (slot cpu_share)"
	" (slot in_rate) (slot out_rate) (slot in_bytes_rate)"
	" (slot out_bytes_rate) (slot key_skew) (slot in_elems)"
	" (slot out_elems))",
	"(deftemplate flow (slot src) (slot dst) (slot kind) (slot key)"
	" (slot src_type) (slot dst_type))",
	"(deftemplate param (slot comp) (slot key) (slot value))",
	"(deftemplate metric (slot comp) (slot name) (slot value))",
	"(deftemplate system (slot cpus) (slot numa) (slot mem_avail))",
	"(deftemplate event (slot name) (slot graph) (slot object) (slot pid)"
	" (slot rank) (slot cmd) (slot fill (default 0))"
	" (slot capacity (default 0)) (slot mark (default 0))"
	" (slot cpu (default 0)) (slot wait_ms (default 0))"
	" (slot mem_avail (default 0)) (slot mem_total (default 0))"
	" (slot count (default 0)) (slot rate (default 0))"
	" (slot period_ms (default 0)))",
	"(deftemplate proposed (slot op) (slot comp) (slot degree) (slot type)"
	" (slot key) (slot value))",
	"(deftemplate var (slot name) (slot value))",
	NULL
};

void rl_buf_printf(struct rl_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->cap ? b->cap * 2 : 256) + n;
		char *s = realloc(b->s, cap);

		if (!s) {
			b->oom = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

void rl_buf_quote(struct rl_buf *b, const char *s)
{
	rl_buf_printf(b, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			rl_buf_printf(b, "\\%c", *s);
		else
			rl_buf_printf(b, "%c", *s);
	}
	rl_buf_printf(b, "\"");
}

enum tok_kind {
	T_EOF, T_IDENT, T_NUM, T_STR, T_VAR, T_DOLLAR, T_OP, T_PUNCT,
};

struct tok {
	enum tok_kind	kind;
	unsigned int	line, col;
	char		*text;		/* ident, number, string value, op */
};

struct parser {
	const char		*p, *end;
	const char		*file;
	unsigned int		line, col;
	struct tok		tok;
	char			*prev_text;	/* the token before: copies
						 * of it stay valid one next() */
	struct dfg_rules_error	*err;
	unsigned int		*serial;
	struct rl_parsed	*out;
	int			ret;
	/* the rule being translated */
	unsigned int		anon;
	struct rl_buf		vars;		/* $x patterns */
	char			**bound;	/* ?v bound so far, "kind:v" */
	unsigned int		nbound;
	const char		*for_comp;
};

static void fail(struct parser *ps, const struct tok *t, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static const char *describe(const struct tok *t, char *buf, size_t len)
{
	switch (t->kind) {
	case T_EOF:
		return "end of file";
	case T_STR:
		snprintf(buf, len, "string \"%.40s\"", t->text);
		return buf;
	case T_VAR:
		snprintf(buf, len, "'?%.40s'", t->text);
		return buf;
	case T_DOLLAR:
		snprintf(buf, len, "'$%.40s'", t->text);
		return buf;
	default:
		snprintf(buf, len, "'%.40s'", t->text);
		return buf;
	}
}

static void fail(struct parser *ps, const struct tok *t, const char *fmt, ...)
{
	struct dfg_rules_error *e = ps->err;
	char what[64];
	va_list ap;
	int n;

	if (ps->ret)
		return;
	ps->ret = -EINVAL;
	if (!e)
		return;
	snprintf(e->file, sizeof(e->file), "%s", ps->file);
	e->line = t->line;
	e->col = t->col;
	va_start(ap, fmt);
	n = vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(e->msg))
		snprintf(e->msg + n, sizeof(e->msg) - n, ", found %s",
			 describe(t, what, sizeof(what)));
}

static void advance_char(struct parser *ps)
{
	if (*ps->p == '\n') {
		ps->line++;
		ps->col = 1;
	} else {
		ps->col++;
	}
	ps->p++;
}

static int set_text(struct parser *ps, const char *s, size_t n)
{
	free(ps->prev_text);
	ps->prev_text = ps->tok.text;
	ps->tok.text = strndup(s, n);
	if (!ps->tok.text) {
		ps->ret = -ENOMEM;
		return -ENOMEM;
	}
	return 0;
}

static bool ident_char(char c, bool first)
{
	return isalpha((unsigned char)c) || c == '_' ||
	       (!first && isdigit((unsigned char)c));
}

/* Reads the next token into ps->tok. */
static void next(struct parser *ps)
{
	const char *s;

	if (ps->ret)
		return;
	for (;;) {
		while (ps->p < ps->end && isspace((unsigned char)*ps->p))
			advance_char(ps);
		if (ps->p < ps->end && *ps->p == '#') {
			while (ps->p < ps->end && *ps->p != '\n')
				advance_char(ps);
			continue;
		}
		break;
	}
	ps->tok.line = ps->line;
	ps->tok.col = ps->col;
	if (ps->p >= ps->end) {
		ps->tok.kind = T_EOF;
		set_text(ps, "", 0);
		return;
	}
	s = ps->p;
	if (ident_char(*s, true)) {
		while (ps->p < ps->end && ident_char(*ps->p, false))
			advance_char(ps);
		ps->tok.kind = T_IDENT;
		set_text(ps, s, ps->p - s);
	} else if (isdigit((unsigned char)*s)) {
		while (ps->p < ps->end &&
		       (isalnum((unsigned char)*ps->p) || *ps->p == '.' ||
			((*ps->p == '-' || *ps->p == '+') &&
			 (ps->p[-1] == 'e' || ps->p[-1] == 'E'))))
			advance_char(ps);
		ps->tok.kind = T_NUM;
		if (set_text(ps, s, ps->p - s))
			return;
		{
			char *end;

			strtod(ps->tok.text, &end);
			if (*end) {
				struct tok t = ps->tok;

				fail(ps, &t, "expected a number");
			}
		}
	} else if (*s == '?' || *s == '$') {
		advance_char(ps);
		ps->tok.kind = *s == '?' ? T_VAR : T_DOLLAR;
		if (ps->p >= ps->end || !ident_char(*ps->p, true)) {
			set_text(ps, s, 1);
			fail(ps, &ps->tok, "expected a name after '%c'", *s);
			return;
		}
		while (ps->p < ps->end && ident_char(*ps->p, false))
			advance_char(ps);
		set_text(ps, s + 1, ps->p - s - 1);
	} else if (*s == '"') {
		struct rl_buf b = { 0 };

		advance_char(ps);
		while (ps->p < ps->end && *ps->p != '"' && *ps->p != '\n') {
			if (*ps->p == '\\' && ps->p + 1 < ps->end)
				advance_char(ps);
			rl_buf_printf(&b, "%c", *ps->p);
			advance_char(ps);
		}
		ps->tok.kind = T_STR;
		if (b.oom) {
			free(b.s);
			ps->ret = -ENOMEM;
			return;
		}
		if (ps->p >= ps->end || *ps->p != '"') {
			free(b.s);
			set_text(ps, "\"", 1);
			ps->tok.kind = T_PUNCT;
			fail(ps, &ps->tok,
			     "expected '\"' to close the string before the end of the line");
			return;
		}
		advance_char(ps);
		free(ps->prev_text);
		ps->prev_text = ps->tok.text;
		ps->tok.text = b.s ? b.s : strdup("");
		if (!ps->tok.text)
			ps->ret = -ENOMEM;
	} else {
		static const char *const ops[] = {
			"==", "!=", "<=", ">=", "<", ">", "=", "+", "-", "*",
			"/", NULL
		};
		unsigned int i;

		for (i = 0; ops[i]; i++) {
			size_t n = strlen(ops[i]);

			if ((size_t)(ps->end - s) >= n &&
			    !memcmp(s, ops[i], n)) {
				ps->tok.kind = T_OP;
				while (n--)
					advance_char(ps);
				set_text(ps, ops[i], strlen(ops[i]));
				return;
			}
		}
		advance_char(ps);
		ps->tok.kind = T_PUNCT;
		set_text(ps, s, 1);
		if (!strchr(",;().", *s))
			fail(ps, &ps->tok, "expected a name, number, string, "
			     "?variable, $variable or operator");
	}
}

/* Words of the language's structure: never a rule's name. */
static bool keyword(const char *w)
{
	static const char *const kw[] = {
		"rule", "var", "for", "salience", "when", "and", "do", "end",
		NULL
	};
	unsigned int i;

	for (i = 0; kw[i]; i++)
		if (!strcmp(kw[i], w))
			return true;
	return false;
}

static bool is(const struct parser *ps, enum tok_kind k, const char *text)
{
	return ps->tok.kind == k && (!text || !strcmp(ps->tok.text, text));
}

static bool accept(struct parser *ps, enum tok_kind k, const char *text)
{
	if (ps->ret || !is(ps, k, text))
		return false;
	next(ps);
	return true;
}

static bool expect(struct parser *ps, enum tok_kind k, const char *text,
		   const char *what)
{
	if (accept(ps, k, text))
		return true;
	fail(ps, &ps->tok, "expected %s", what);
	return false;
}

static const struct kind *find_kind(const char *name)
{
	unsigned int i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].name, name))
			return &kinds[i];
	return NULL;
}

static bool has_slot(const struct kind *k, const char *slot)
{
	unsigned int i;

	for (i = 0; k->slots[i]; i++)
		if (!strcmp(k->slots[i], slot))
			return true;
	return false;
}

static void slot_error(struct parser *ps, const struct kind *k)
{
	struct rl_buf list = { 0 };
	unsigned int i;

	for (i = 0; k->slots[i]; i++)
		rl_buf_printf(&list, "%s%s", i ? ", " : "", k->slots[i]);
	fail(ps, &ps->tok, "expected a slot of %s (%s)", k->name,
	     list.s ? list.s : "");
	free(list.s);
}

/* The kind of fact ?v was bound to, or NULL. Entries are "kind:v". */
static const struct kind *bound_kind(const struct parser *ps, const char *v)
{
	unsigned int i;

	for (i = 0; i < ps->nbound; i++) {
		const char *c = strchr(ps->bound[i], ':');

		if (c && !strcmp(c + 1, v)) {
			char k[16];

			snprintf(k, sizeof(k), "%.*s", (int)(c - ps->bound[i]),
				 ps->bound[i]);
			return find_kind(k);
		}
	}
	return NULL;
}

static void bind(struct parser *ps, const char *v, const struct kind *k)
{
	char **b;

	if (bound_kind(ps, v))
		return;
	b = realloc(ps->bound, (ps->nbound + 1) * sizeof(*b));
	if (b)
		b[ps->nbound] = NULL;
	if (!b || asprintf(&b[ps->nbound], "%s:%s", k->name, v) < 0) {
		if (b)
			ps->bound = b;
		ps->ret = -ENOMEM;
		return;
	}
	ps->bound = b;
	ps->nbound++;
}

/* $x used in a rule: a pattern binding ?v-x, added once. */
static void use_var(struct parser *ps, const char *x)
{
	char pat[128];

	snprintf(pat, sizeof(pat), "(var (name \"%s\") (value ?v-%s))", x, x);
	if (ps->vars.s && strstr(ps->vars.s, pat))
		return;
	rl_buf_printf(&ps->vars, "  %s\n", pat);
}

static void expr(struct parser *ps, struct rl_buf *b);

static void term(struct parser *ps, struct rl_buf *b)
{
	struct tok t = ps->tok;

	if (ps->ret)
		return;
	switch (t.kind) {
	case T_NUM:
		rl_buf_printf(b, "%s", t.text);
		next(ps);
		return;
	case T_STR:
	case T_IDENT:
		rl_buf_quote(b, t.text);
		next(ps);
		return;
	case T_DOLLAR:
		use_var(ps, t.text);
		rl_buf_printf(b, "?v-%s", t.text);
		next(ps);
		return;
	case T_VAR: {
		const struct kind *k;
		char *v = strdup(t.text);

		if (!v) {
			ps->ret = -ENOMEM;
			return;
		}
		next(ps);
		k = bound_kind(ps, v);
		if (!k) {
			fail(ps, &t, "expected a ?variable bound by an earlier "
			     "comp, flow, param, metric, system, event, "
			     "proposed or var condition");
		} else if (accept(ps, T_PUNCT, ".")) {
			if (is(ps, T_IDENT, NULL) && has_slot(k, ps->tok.text)) {
				rl_buf_printf(b, "?u-%s--%s", v, ps->tok.text);
				next(ps);
			} else {
				slot_error(ps, k);
			}
		} else if (strcmp(k->name, "comp")) {
			fail(ps, &ps->tok, "expected '.' and a slot after "
			     "'?%s' (only a comp's ?variable is a value)", v);
		} else {
			rl_buf_printf(b, "?u-%s", v);
		}
		free(v);
		return;
	}
	case T_PUNCT:
		if (accept(ps, T_PUNCT, "(")) {
			expr(ps, b);
			expect(ps, T_PUNCT, ")", "')'");
			return;
		}
		break;
	case T_OP:
		if (!strcmp(t.text, "-")) {
			next(ps);
			if (is(ps, T_NUM, NULL)) {
				rl_buf_printf(b, "-%s", ps->tok.text);
				next(ps);
				return;
			}
			t = ps->tok;
		}
		break;
	default:
		break;
	}
	fail(ps, &t, "expected a value (number, string, name, ?variable, "
	     "$variable or '(')");
}

/* A term of arithmetic must not be a string: CLIPS would refuse the rule. */
static void arith_operand(struct parser *ps, struct tok *t,
			  const struct rl_buf *term_text, char op)
{
	if (!ps->ret && term_text->s && term_text->s[0] == '"')
		fail(ps, t, "expected a number around '%c'", op);
}

static void expr(struct parser *ps, struct rl_buf *b)
{
	struct rl_buf acc = { 0 };
	struct tok first = ps->tok;

	first.text = strdup(first.text ? first.text : "");
	term(ps, &acc);
	while (!ps->ret && ps->tok.kind == T_OP &&
	       strchr("+-*/", ps->tok.text[0]) && !ps->tok.text[1]) {
		struct rl_buf rhs = { 0 };
		struct rl_buf wrap = { 0 };
		char op = ps->tok.text[0];
		struct tok t;

		arith_operand(ps, &first, &acc, op);
		next(ps);
		t = ps->tok;
		t.text = strdup(t.text ? t.text : "");
		term(ps, &rhs);
		arith_operand(ps, &t, &rhs, op);
		free(t.text);
		rl_buf_printf(&wrap, "(%c %s %s)", op, acc.s ? acc.s : "",
			      rhs.s ? rhs.s : "");
		free(rhs.s);
		free(acc.s);
		acc = wrap;
		if (rhs.oom)
			acc.oom = true;
	}
	if (acc.oom || !first.text)
		ps->ret = ps->ret ? ps->ret : -ENOMEM;
	free(first.text);
	rl_buf_printf(b, "%s", acc.s ? acc.s : "");
	free(acc.s);
}

/*
 * A comparison "A OP B" as a CLIPS expression that cannot raise. CLIPS
 * checks constant arguments when it parses: a string literal is only
 * compared with eq/neq, and never ordered (false: not a number).
 */
static bool compare(struct rl_buf *b, const char *op, const char *a,
		    const char *c)
{
	bool lit = a[0] == '"' || c[0] == '"';

	if (lit && (!strcmp(op, "==") || !strcmp(op, "!="))) {
		rl_buf_printf(b, "(%s %s %s)", op[0] == '!' ? "neq" : "eq",
			      a, c);
		return true;
	}
	if (lit)
		return false;
	if (!strcmp(op, "==") || !strcmp(op, "!="))
		rl_buf_printf(b, "%s(or (eq %s %s) (and (numberp %s) "
			      "(numberp %s) (= %s %s)))%s",
			      op[0] == '!' ? "(not " : "", a, c, a, c, a, c,
			      op[0] == '!' ? ")" : "");
	else
		rl_buf_printf(b, "(and (numberp %s) (numberp %s) (%s %s %s))",
			      a, c, op, a, c);
	return true;
}

static bool comparison_op(const struct parser *ps)
{
	static const char *const cmp[] = {
		"==", "!=", "<", "<=", ">", ">=", NULL
	};
	unsigned int i;

	if (ps->tok.kind != T_OP)
		return false;
	for (i = 0; cmp[i]; i++)
		if (!strcmp(ps->tok.text, cmp[i]))
			return true;
	return false;
}

/* "test A OP B" */
static void test_cond(struct parser *ps, struct rl_buf *lhs)
{
	struct rl_buf a = { 0 }, c = { 0 };
	char op[3] = "";
	struct tok t;

	expr(ps, &a);
	if (comparison_op(ps)) {
		snprintf(op, sizeof(op), "%s", ps->tok.text);
		next(ps);
	} else {
		fail(ps, &ps->tok, "expected a comparison (==, !=, <, <=, >, >=)");
	}
	t = ps->tok;
	t.text = strdup(t.text ? t.text : "");
	expr(ps, &c);
	if (!t.text)
		ps->ret = ps->ret ? ps->ret : -ENOMEM;
	if (!ps->ret && op[0]) {
		rl_buf_printf(lhs, "  (test ");
		if (!compare(lhs, op, a.s, c.s))
			fail(ps, &t, "expected numbers on both sides of '%s'",
			     op);
		rl_buf_printf(lhs, ")\n");
	}
	free(t.text);
	if (a.oom || c.oom)
		ps->ret = ps->ret ? ps->ret : -ENOMEM;
	free(a.s);
	free(c.s);
}

/* "[not] KIND [?v] [SLOT OP expr, ...]"; @nfact numbers ?f-N. */
static void fact_cond(struct parser *ps, struct rl_buf *lhs,
		      struct rl_buf *facts, unsigned int *nfact)
{
	struct rl_buf pat = { 0 }, tests = { 0 };
	const struct kind *k;
	bool neg = accept(ps, T_IDENT, "not");
	bool first_comp;
	char v[64];
	unsigned int i;

	k = ps->tok.kind == T_IDENT ? find_kind(ps->tok.text) : NULL;
	if (!k) {
		fail(ps, &ps->tok, "expected a condition: comp, flow, param, "
		     "metric, system, event, proposed, var or test");
		return;
	}
	next(ps);
	first_comp = !strcmp(k->name, "comp") && ps->for_comp;
	if (is(ps, T_VAR, NULL)) {
		snprintf(v, sizeof(v), "%s", ps->tok.text);
		next(ps);
	} else {
		snprintf(v, sizeof(v), "-a%u", ps->anon++);
	}
	/* ?v is bound before its own comparisons may use ?v.slot */
	bind(ps, v, k);
	rl_buf_printf(&pat, "(%s", k->name);
	for (i = 0; k->slots[i]; i++) {
		if (i == 0 && !strcmp(k->name, "comp"))
			rl_buf_printf(&pat, " (name ?u-%s)", v);
		else
			rl_buf_printf(&pat, " (%s ?u-%s--%s)", k->slots[i], v,
				      k->slots[i]);
	}
	rl_buf_printf(&pat, ")");
	if (first_comp) {
		char q[128];
		struct rl_buf nm = { 0 };

		snprintf(q, sizeof(q), "?u-%s", v);
		rl_buf_quote(&nm, ps->for_comp);
		compare(&tests, "==", q, nm.s ? nm.s : "\"\"");
		free(nm.s);
		ps->for_comp = NULL;
	}
	while (!ps->ret && is(ps, T_IDENT, NULL) && !is(ps, T_IDENT, "and") &&
	       !is(ps, T_IDENT, "do")) {
		struct tok slot = ps->tok, vt;
		struct rl_buf val = { 0 };
		char a[160], op[3] = "";

		if (!has_slot(k, slot.text)) {
			slot_error(ps, k);
			break;
		}
		next(ps);
		if (!strcmp(k->name, "comp") && !strcmp(slot.text, "name"))
			snprintf(a, sizeof(a), "?u-%s", v);
		else
			snprintf(a, sizeof(a), "?u-%s--%s", v, slot.text);
		if (comparison_op(ps)) {
			snprintf(op, sizeof(op), "%s", ps->tok.text);
			next(ps);
		} else {
			fail(ps, &ps->tok,
			     "expected a comparison (==, !=, <, <=, >, >=)");
		}
		vt = ps->tok;
		vt.text = strdup(vt.text ? vt.text : "");
		expr(ps, &val);
		if (!vt.text)
			ps->ret = ps->ret ? ps->ret : -ENOMEM;
		if (!ps->ret && op[0] && !compare(&tests, op, a, val.s))
			fail(ps, &vt, "expected a number after '%s'", op);
		free(vt.text);
		free(val.s);
		if (!accept(ps, T_PUNCT, ","))
			break;
		if (!is(ps, T_IDENT, NULL) || !has_slot(k, ps->tok.text))
			slot_error(ps, k);
	}
	if (neg) {
		if (tests.len)
			rl_buf_printf(lhs, "  (not (and %s (test (and %s TRUE))))\n",
				      pat.s ? pat.s : "", tests.s);
		else
			rl_buf_printf(lhs, "  (not %s)\n", pat.s ? pat.s : "");
	} else {
		rl_buf_printf(lhs, "  ?f-%u <- %s\n", *nfact,
			      pat.s ? pat.s : "");
		if (tests.len)
			rl_buf_printf(lhs, "  (test (and %s TRUE))\n",
				      tests.s);
		rl_buf_printf(facts, " ?f-%u", (*nfact)++);
	}
	if (pat.oom || tests.oom)
		ps->ret = ps->ret ? ps->ret : -ENOMEM;
	free(pat.s);
	free(tests.s);
}

static void rule(struct parser *ps, bool dormant, unsigned int *serialp);

static void action(struct parser *ps, struct rl_buf *rhs, unsigned int serial)
{
	static const struct {
		const char	*name;
		unsigned int	nargs;
	} edits[] = {
		{ "degree", 2 }, { "unfold", 1 }, { "fold", 1 },
		{ "substitute", 2 }, { "param", 3 },
	};
	struct tok t = ps->tok;
	unsigned int i, j;

	if (t.kind != T_IDENT)
		goto bad;
	for (i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		if (strcmp(t.text, edits[i].name))
			continue;
		next(ps);
		rl_buf_printf(rhs, "  (dfg-edit %u \"%s\"", serial,
			      edits[i].name);
		for (j = 0; j < edits[i].nargs; j++) {
			rl_buf_printf(rhs, " ");
			expr(ps, rhs);
		}
		rl_buf_printf(rhs, ")\n");
		return;
	}
	if (!strcmp(t.text, "set") || !strcmp(t.text, "unset")) {
		bool set = t.text[0] == 's';

		next(ps);
		if (is(ps, T_DOLLAR, NULL))
			rl_buf_printf(rhs, "  (dfg-set \"%s\"", ps->tok.text);
		expect(ps, T_DOLLAR, NULL, "a $variable");
		if (set) {
			expect(ps, T_OP, "=", "'='");
			rl_buf_printf(rhs, " ");
			expr(ps, rhs);
		}
		rl_buf_printf(rhs, ")\n");
		return;
	}
	if (!strcmp(t.text, "add")) {
		unsigned int inner = 0;

		next(ps);
		if (!is(ps, T_IDENT, "rule")) {
			fail(ps, &ps->tok, "expected 'rule' after 'add'");
			return;
		}
		rule(ps, true, &inner);
		rl_buf_printf(rhs, "  (dfg-add %u)\n", inner);
		return;
	}
	if (!strcmp(t.text, "revoke")) {
		next(ps);
		if (is(ps, T_IDENT, NULL)) {
			rl_buf_printf(rhs, "  (dfg-revoke ");
			rl_buf_quote(rhs, ps->tok.text);
			rl_buf_printf(rhs, ")\n");
		}
		expect(ps, T_IDENT, NULL, "a rule name");
		return;
	}
	if (!strcmp(t.text, "warn")) {
		next(ps);
		rl_buf_printf(rhs, "  (dfg-warn %u ", serial);
		expr(ps, rhs);
		rl_buf_printf(rhs, ")\n");
		return;
	}
bad:
	fail(ps, &t, "expected an action: degree, unfold, fold, substitute, "
	     "param, set, unset, add, revoke or warn");
}

static int push_rule(struct parser *ps, struct rl_rule *r)
{
	struct rl_rule *v;

	v = realloc(ps->out->rules, (ps->out->nrules + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	ps->out->rules = v;
	v[ps->out->nrules++] = *r;
	return 0;
}

/*
 * "rule NAME ... end" at the current token; @dormant for one inside
 * "add". Sets *@serialp to its serial.
 */
static void rule(struct parser *ps, bool dormant, unsigned int *serialp)
{
	struct rl_buf lhs = { 0 }, rhs = { 0 }, facts = { 0 }, body = { 0 };
	struct rl_buf saved_vars = ps->vars;
	char **saved_bound = ps->bound;
	unsigned int saved_nbound = ps->nbound;
	unsigned int serial = (*ps->serial)++;
	struct rl_rule r = { .serial = serial, .dormant = dormant };
	long salience = 0;
	unsigned int nfact = 0, i;
	char *forc = NULL;

	*serialp = serial;
	r.line = ps->tok.line;
	ps->vars = (struct rl_buf){ 0 };
	ps->bound = NULL;
	ps->nbound = 0;
	expect(ps, T_IDENT, "rule", "'rule' or 'var'");
	if (is(ps, T_IDENT, NULL) && !keyword(ps->tok.text)) {
		r.name = strdup(ps->tok.text);
		if (!r.name)
			ps->ret = -ENOMEM;
	}
	if (r.name)
		next(ps);
	else
		fail(ps, &ps->tok, "expected a rule name");
	if (accept(ps, T_IDENT, "for")) {
		if (is(ps, T_IDENT, NULL) || is(ps, T_STR, NULL)) {
			forc = strdup(ps->tok.text);
			if (!forc)
				ps->ret = -ENOMEM;
			next(ps);
		} else {
			fail(ps, &ps->tok, "expected a component name after 'for'");
		}
	}
	if (accept(ps, T_IDENT, "salience")) {
		bool negs = accept(ps, T_OP, "-");
		char *end = NULL;

		if (is(ps, T_NUM, NULL))
			salience = strtol(ps->tok.text, &end, 10);
		if (!end || *end || salience > 10000) {
			fail(ps, &ps->tok,
			     "expected an integer salience, -10000..10000");
		} else {
			next(ps);
			if (negs)
				salience = -salience;
		}
	}
	expect(ps, T_IDENT, "when", "'when'");
	ps->for_comp = forc;
	if (forc && !ps->ret && !is(ps, T_IDENT, "comp")) {
		/* attached, but the first condition is not a comp */
		rl_buf_printf(&lhs, "  ?f-%u <- (comp (name ?u-self)", nfact);
		for (i = 1; comp_slots[i]; i++)
			rl_buf_printf(&lhs, " (%s ?u-self--%s)", comp_slots[i],
				      comp_slots[i]);
		rl_buf_printf(&lhs, ")\n  (test (eq ?u-self ");
		rl_buf_quote(&lhs, forc);
		rl_buf_printf(&lhs, "))\n");
		rl_buf_printf(&facts, " ?f-%u", nfact++);
		bind(ps, "self", find_kind("comp"));
		ps->for_comp = NULL;
	}
	do {
		if (accept(ps, T_IDENT, "test"))
			test_cond(ps, &lhs);
		else
			fact_cond(ps, &lhs, &facts, &nfact);
	} while (!ps->ret && accept(ps, T_IDENT, "and"));
	ps->for_comp = NULL;
	if (!ps->ret && !is(ps, T_IDENT, "do"))
		fail(ps, &ps->tok, "expected 'and', ',' or 'do'");
	next(ps);
	do {
		action(ps, &rhs, serial);
	} while (!ps->ret && accept(ps, T_PUNCT, ";"));
	if (!ps->ret && !is(ps, T_IDENT, "end"))
		fail(ps, &ps->tok, "expected ';' or 'end'");
	next(ps);

	rl_buf_printf(&body, "(declare (salience %ld))\n%s%s=>\n"
		      "  (dfg-fired %u%s)\n%s)", salience,
		      ps->vars.s ? ps->vars.s : "", lhs.s ? lhs.s : "",
		      serial, facts.s ? facts.s : "", rhs.s ? rhs.s : "");
	if (lhs.oom || rhs.oom || facts.oom || body.oom || ps->vars.oom)
		ps->ret = ps->ret ? ps->ret : -ENOMEM;
	free(lhs.s);
	free(rhs.s);
	free(facts.s);
	free(forc);
	free(ps->vars.s);
	for (i = 0; i < ps->nbound; i++)
		free(ps->bound[i]);
	free(ps->bound);
	ps->vars = saved_vars;
	ps->bound = saved_bound;
	ps->nbound = saved_nbound;
	r.body = body.s;
	r.file = strdup(ps->file);
	if (!ps->ret && !r.file)
		ps->ret = -ENOMEM;
	if (!ps->ret)
		ps->ret = push_rule(ps, &r);
	if (ps->ret) {
		free(r.name);
		free(r.body);
		free(r.file);
	}
}

static void var_decl(struct parser *ps)
{
	struct rl_var v = { 0 }, *vv;
	struct rl_buf val = { 0 };

	next(ps);
	if (is(ps, T_IDENT, NULL))
		v.name = strdup(ps->tok.text);
	expect(ps, T_IDENT, NULL, "a variable name");
	expect(ps, T_OP, "=", "'='");
	if (is(ps, T_NUM, NULL) || is(ps, T_STR, NULL) ||
	    is(ps, T_IDENT, NULL)) {
		rl_buf_printf(&val, "%s", ps->tok.text);
		next(ps);
	} else if (accept(ps, T_OP, "-") && is(ps, T_NUM, NULL)) {
		rl_buf_printf(&val, "-%s", ps->tok.text);
		next(ps);
	} else {
		fail(ps, &ps->tok, "expected a number, string or name");
	}
	v.value = val.s;
	if (!ps->ret && (!v.name || !v.value))
		ps->ret = -ENOMEM;
	if (!ps->ret) {
		vv = realloc(ps->out->vars, (ps->out->nvars + 1) * sizeof(*vv));
		if (vv) {
			ps->out->vars = vv;
			vv[ps->out->nvars++] = v;
			return;
		}
		ps->ret = -ENOMEM;
	}
	free(v.name);
	free(v.value);
}

int rl_parse(const char *text, size_t len, const char *file,
	     unsigned int *serial, struct rl_parsed *out,
	     struct dfg_rules_error *err)
{
	struct parser ps = {
		.p = text, .end = text + len, .file = file,
		.line = 1, .col = 1, .err = err, .serial = serial, .out = out,
	};
	unsigned int s;

	memset(out, 0, sizeof(*out));
	if (memchr(text, '\0', len)) {
		ps.tok.line = 1;
		ps.tok.col = 1;
		ps.tok.kind = T_EOF;
		fail(&ps, &ps.tok, "expected text without NUL bytes");
	}
	next(&ps);
	while (!ps.ret && ps.tok.kind != T_EOF) {
		if (is(&ps, T_IDENT, "var"))
			var_decl(&ps);
		else
			rule(&ps, false, &s);
	}
	free(ps.tok.text);
	free(ps.prev_text);
	if (ps.ret)
		rl_parsed_free(out);
	return ps.ret;
}

void rl_parsed_free(struct rl_parsed *p)
{
	unsigned int i;

	for (i = 0; i < p->nrules; i++) {
		free(p->rules[i].name);
		free(p->rules[i].file);
		free(p->rules[i].body);
	}
	for (i = 0; i < p->nvars; i++) {
		free(p->vars[i].name);
		free(p->vars[i].value);
	}
	free(p->rules);
	free(p->vars);
	memset(p, 0, sizeof(*p));
}
