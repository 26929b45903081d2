// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * rules/engine.c - the rule interpreter (<dfg/rules.h>) on an embedded
 * CLIPS environment.
 *
 * One CLIPS environment per struct dfg_rules; rules are built from the
 * language's translation (lang.c), facts are asserted from C and kept in
 * a table by a stable key ("comp:NAME", "var:X", ...) so that a fact whose
 * text did not change stays the same CLIPS fact (its rules do not fire
 * again: refraction), and so that the plan store's signature can name
 * facts across processes. Actions call back into C (dfg-edit, dfg-set,
 * dfg-add, dfg-revoke, dfg-warn, dfg-fired); rule additions and removals
 * wait until the current run returns, since CLIPS cannot remove a rule
 * while it fires.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include <clips/clips.h>

#include <dfg/rules.h>

#include "rules_impl.h"

struct fact_ent {
	char		*key;
	char		*text;		/* NULL: made by vfact_put() */
	unsigned long long hash;	/* vfact_put()'s: of the slots */
	char		*val;		/* a variable's value, as set */
	char		*ev_name;	/* an event's name */
	void		*fact;
	bool		view;		/* from the run view: rebuilt per eval */
	bool		once;		/* event, proposed: one eval */
	bool		seen;
};

struct prev_comp {
	char			*name;
	struct dfg_run_view_comp c;
};

struct rule_ent {
	struct rl_rule	r;
	bool		built;		/* a defrule in the environment */
};

struct dfg_rules {
	void			*env;
	unsigned int		flags;
	struct rule_ent		*rules;
	unsigned int		nrules;
	unsigned int		serial;
	unsigned long long	rules_hash;	/* of the active rules */

	struct fact_ent		*facts;
	unsigned int		nfacts;
	unsigned long long	nevents;	/* names each event's fact */

	struct dfg_rules_system	sys;
	bool			sys_fixed;
	struct dfg_events	*evs;
	unsigned int		max_firings;

	void	(*explain)(void *arg, const struct dfg_rules_firing *f);
	void	*explain_arg;
	void	(*warn)(void *arg, const char *msg);
	void	*warn_arg;

	/* the current evaluation */
	const struct dfg_run_view *view;
	struct dfg_plan_edit	*edits;
	char			**strs;		/* owned by edits */
	unsigned int		nedits, cap, nstrs;
	int			eval_err;
	bool			rules_changed;
	/* the firing being reported: its rule, facts, first edit */
	int			firing;		/* serial, -1: none */
	char			**ffacts;
	unsigned int		nffacts, fedit;
	/* rule changes queued by actions: serial to add, or name to revoke */
	struct {
		unsigned int	serial;
		char		*revoke;
	}			*pending;
	unsigned int		npending;
	struct rl_buf		cliperr;	/* CLIPS's error output */

	/*
	 * rates: the previous view's counters, by component name (a new
	 * plan brings a new graph, the counters go on)
	 */
	struct prev_comp	*prev;
	unsigned int		nprev;
	__u64			prev_ns;
	/* the graph the param and flow facts were made from (graph_print) */
	unsigned long long	graph_print;

	struct dfg_rules	*central;

	struct dfg_plan_store	*store;
	char			*sig_text;	/* the last signature in words */
	char			*ep_text;	/* the open episode's */
	unsigned long long	ep_key;		/* open episode, 0: none */
	bool			ep_open, ep_nocache;
	struct dfg_plan_edit	*ep_edits;
	char			**ep_strs;
	unsigned int		nep, nep_strs;

	char			*last_refusal;	/* the executor's last "why" */
	struct dfg_rules_stats	st;
	bool			log;		/* DFG_REPLAN_LOG: decisions */
	__u64			lookup_ns;	/* the last eval's store lookup */
};

static void warnf(struct dfg_rules *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warnf(struct dfg_rules *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->warn)
		r->warn(r->warn_arg, msg);
	else
		fprintf(stderr, "dfg rules: %s\n", msg);
}

static void refusef(struct dfg_rules *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A refusal is said once while it stays the same (rules that keep
 * matching ask again at every evaluation); a change of the rules, or a
 * change the executor applied, lets it be said again.
 */
static void refusef(struct dfg_rules *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->last_refusal && !strcmp(r->last_refusal, msg))
		return;
	warnf(r, "%s", msg);
	free(r->last_refusal);
	r->last_refusal = strdup(msg);
}

/* FNV-1a, for signatures */
static unsigned long long hash_str(unsigned long long h, const char *s)
{
	if (!h)
		h = 0xcbf29ce484222325ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	h ^= 0xff;
	return h * 0x100000001b3ULL;
}

/* CLIPS's error output, kept for the message of a failed build */
static int router_query(void *env, const char *name)
{
	(void)env;
	return !strcmp(name, WERROR) || !strcmp(name, WWARNING);
}

static int router_print(void *env, const char *name, const char *str)
{
	struct dfg_rules *r = GetEnvironmentContext(env);

	(void)name;
	rl_buf_printf(&r->cliperr, "%s", str);
	return 1;
}

/* Passes CLIPS's messages on as one warning, collapsing newlines. */
static void flush_cliperr(struct dfg_rules *r)
{
	char *s;

	if (!r->cliperr.len)
		return;
	for (s = r->cliperr.s; *s; s++)
		if (*s == '\n')
			*s = ' ';
	warnf(r, "CLIPS: %s", r->cliperr.s);
	r->cliperr.len = 0;
	r->cliperr.s[0] = '\0';
}

static struct rule_ent *rule_by_serial(struct dfg_rules *r, unsigned int s)
{
	unsigned int i;

	for (i = 0; i < r->nrules; i++)
		if (r->rules[i].r.serial == s)
			return &r->rules[i];
	return NULL;
}

static struct rule_ent *rule_active(const struct dfg_rules *r,
				    const char *name)
{
	unsigned int i;

	for (i = 0; i < r->nrules; i++)
		if (r->rules[i].built && !strcmp(r->rules[i].r.name, name))
			return &r->rules[i];
	return NULL;
}

/*
 * A rule's text without the serial numbers its actions pass (they
 * depend on load order), so that the same rules hash the same in another
 * process.
 */
static unsigned long long hash_body(unsigned long long h, const char *s)
{
	char one[2] = "";

	while (*s) {
		if (!strncmp(s, "(dfg-", 5)) {
			while (*s && *s != ' ') {
				one[0] = *s++;
				h = hash_str(h, one);
			}
			while (*s == ' ' || (*s >= '0' && *s <= '9'))
				s++;
			continue;
		}
		one[0] = *s++;
		h = hash_str(h, one);
	}
	return h;
}

/* The active rules, in any order of loading. */
static void rehash_rules(struct dfg_rules *r)
{
	unsigned long long h = 0;
	unsigned int i;

	for (i = 0; i < r->nrules; i++)
		if (r->rules[i].built)
			h ^= hash_body(hash_str(0, r->rules[i].r.name),
				       r->rules[i].r.body);
	if (h != r->rules_hash) {	/* new rules: say refusals again */
		free(r->last_refusal);
		r->last_refusal = NULL;
	}
	r->rules_hash = h;
}

static void unbuild(struct dfg_rules *r, struct rule_ent *e)
{
	char cname[32];
	void *d;

	snprintf(cname, sizeof(cname), "r%u", e->r.serial);
	d = EnvFindDefrule(r->env, cname);
	if (d)
		EnvUndefrule(r->env, d);
	e->built = false;
}

/* Builds @e, replacing the active rule of its name. 0 or -EINVAL. */
static int build(struct dfg_rules *r, struct rule_ent *e)
{
	struct rl_buf b = { 0 };
	struct rule_ent *old = rule_active(r, e->r.name);
	int ok;

	if (old && old != e)
		unbuild(r, old);
	rl_buf_printf(&b, "(defrule r%u %s", e->r.serial, e->r.body);
	if (b.oom) {
		free(b.s);
		return -ENOMEM;
	}
	ok = EnvBuild(r->env, b.s);
	free(b.s);
	e->built = ok;
	return ok ? 0 : -EINVAL;
}

/*
 * Frees the rules that can never fire again: top-level rules replaced or
 * revoked (a dormant rule stays: its "add" may build it again). Never
 * while rules fire: the entries move.
 */
static void compact_rules(struct dfg_rules *r)
{
	unsigned int i, n = 0;

	for (i = 0; i < r->nrules; i++) {
		struct rule_ent *e = &r->rules[i];

		if (!e->built && !e->r.dormant) {
			free(e->r.name);
			free(e->r.file);
			free(e->r.body);
			continue;
		}
		r->rules[n++] = *e;
	}
	r->nrules = n;
}

/* --- facts ------------------------------------------------------------ */

static struct fact_ent *fact_find(struct dfg_rules *r, const char *key)
{
	unsigned int i;

	for (i = 0; i < r->nfacts; i++)
		if (!strcmp(r->facts[i].key, key))
			return &r->facts[i];
	return NULL;
}

static void fact_drop(struct dfg_rules *r, struct fact_ent *f)
{
	if (f->fact) {
		EnvDecrementFactCount(r->env, f->fact);
		EnvRetract(r->env, f->fact);
	}
	free(f->key);
	free(f->text);
	free(f->val);
	free(f->ev_name);
	*f = r->facts[--r->nfacts];
}

/*
 * The entry of fact @key, made (without a CLIPS fact yet) if new, and
 * seen by this evaluation; NULL: no memory.
 */
static struct fact_ent *fact_entry(struct dfg_rules *r, const char *key,
				   bool view, bool once)
{
	struct fact_ent *f = fact_find(r, key);

	if (f) {
		f->seen = true;
		return f;
	}
	f = realloc(r->facts, (r->nfacts + 1) * sizeof(*f));
	if (!f)
		return NULL;
	r->facts = f;
	f = &r->facts[r->nfacts];
	*f = (struct fact_ent){ .view = view, .once = once, .seen = true };
	f->key = strdup(key);
	if (!f->key)
		return NULL;
	r->nfacts++;
	return f;
}

/* @f's CLIPS fact retracted, if it has one. */
static void fact_retract(struct dfg_rules *r, struct fact_ent *f)
{
	if (f->fact) {
		EnvDecrementFactCount(r->env, f->fact);
		EnvRetract(r->env, f->fact);
		f->fact = NULL;
	}
}

/* @fact (just asserted, or NULL: CLIPS refused it) becomes @f's. */
static int fact_hold(struct dfg_rules *r, struct fact_ent *f, void *fact)
{
	f->fact = fact;
	if (!fact) {
		flush_cliperr(r);
		return -EINVAL;
	}
	/* held: the table keeps the address until it retracts the fact */
	EnvIncrementFactCount(r->env, fact);
	return 0;
}

/*
 * Makes fact @key read @text: nothing when it already does, else the old
 * fact goes and a new one comes. 0, -ENOMEM, -EINVAL (CLIPS refused).
 */
static int fact_put(struct dfg_rules *r, const char *key, const char *text,
		    bool view, bool once)
{
	struct fact_ent *f = fact_entry(r, key, view, once);
	char *t;

	if (!f)
		return -ENOMEM;
	if (f->text && !strcmp(f->text, text))
		return 0;
	t = strdup(text);
	if (!t)
		return -ENOMEM;
	fact_retract(r, f);
	free(f->text);
	f->text = t;
	f->hash = 0;
	return fact_hold(r, f, EnvAssertString(r->env, text));
}

/*
 * A fact of the run view built slot by slot (vfact_*) and asserted through
 * CLIPS's fact API: the comp and system facts change at every evaluation
 * (rates, free memory), and printing them as text for CLIPS to parse back
 * was most of an evaluation's cost. Whether one changed is told by a hash
 * of its slots. Strings are CLIPS strings and numbers integers when whole
 * (below 1e15), else floats: what the text form gave.
 */
#define VFACT_SLOTS	16

struct vfact {
	const char		*tmpl;
	unsigned int		n;
	struct {
		const char	*name;
		const char	*s;	/* NULL: a number, @d */
		double		d;
	}			slot[VFACT_SLOTS];
};

static void vfact_str(struct vfact *v, const char *name, const char *s)
{
	if (v->n < VFACT_SLOTS)
		v->slot[v->n++] = (typeof(v->slot[0])){ name, s ? s : "", 0 };
}

static void vfact_num(struct vfact *v, const char *name, double d)
{
	if (v->n < VFACT_SLOTS)
		v->slot[v->n++] = (typeof(v->slot[0])){ name, NULL,
							isfinite(d) ? d : 0 };
}

static unsigned long long vfact_hash(const struct vfact *v)
{
	unsigned long long h = hash_str(0, v->tmpl);
	unsigned int i, k;
	__u64 bits;

	for (i = 0; i < v->n; i++) {
		if (v->slot[i].s) {
			h = hash_str(h, v->slot[i].s);
			continue;
		}
		memcpy(&bits, &v->slot[i].d, sizeof(bits));
		for (k = 0; k < sizeof(bits); k++, bits >>= 8) {
			h ^= bits & 0xff;
			h *= 0x100000001b3ULL;
		}
	}
	return h ? h : 1;
}

static void *vfact_assert(struct dfg_rules *r, const struct vfact *v)
{
	void *tmpl = EnvFindDeftemplate(r->env, v->tmpl);
	struct fact *fact = tmpl ? EnvCreateFact(r->env, tmpl) : NULL;
	unsigned int i;
	DATA_OBJECT d;

	if (!fact)
		return NULL;
	for (i = 0; i < v->n; i++) {
		double x = v->slot[i].d;

		if (v->slot[i].s) {
			SetType(d, STRING);
			SetValue(d, EnvAddSymbol(r->env, v->slot[i].s));
		} else if (x == floor(x) && fabs(x) < 1e15) {
			SetType(d, INTEGER);
			SetValue(d, EnvAddLong(r->env, (long long)x));
		} else {
			SetType(d, FLOAT);
			SetValue(d, EnvAddDouble(r->env, x));
		}
		EnvPutFactSlot(r->env, fact, v->slot[i].name, &d);
	}
	EnvAssignFactSlotDefaults(r->env, fact);
	return EnvAssert(r->env, fact);
}

/* Makes view fact @key what @v says; as fact_put(). */
static int vfact_put(struct dfg_rules *r, const char *key,
		     const struct vfact *v)
{
	struct fact_ent *f = fact_entry(r, key, true, false);
	unsigned long long h = vfact_hash(v);

	if (!f)
		return -ENOMEM;
	if (f->fact && f->hash == h)
		return 0;
	fact_retract(r, f);
	free(f->text);
	f->text = NULL;
	f->hash = h;
	return fact_hold(r, f, vfact_assert(r, v));
}

static const struct fact_ent *fact_of(struct dfg_rules *r, void *fact)
{
	unsigned int i;

	for (i = 0; i < r->nfacts; i++)
		if (r->facts[i].fact == fact)
			return &r->facts[i];
	return NULL;
}

/* A value as a CLIPS constant: a number when it reads as one. */
static void put_value(struct rl_buf *b, const char *v)
{
	char *end;
	double d;

	d = strtod(v, &end);
	if (*v && !*end && isfinite(d) && !strchr(v, 'x') && !strchr(v, 'X'))
		rl_buf_printf(b, "%s", v);
	else
		rl_buf_quote(b, v);
}

static void put_num(struct rl_buf *b, const char *slot, double v)
{
	/* 15 digits: what a rate or share means, without binary noise */
	rl_buf_printf(b, " (%s %.15g)", slot, isfinite(v) ? v : 0.0);
}

static void put_str(struct rl_buf *b, const char *slot, const char *v)
{
	rl_buf_printf(b, " (%s ", slot);
	rl_buf_quote(b, v ? v : "");
	rl_buf_printf(b, ")");
}

static int put_buf(struct dfg_rules *r, const char *key, struct rl_buf *b,
		   bool view, bool once)
{
	int ret = b->oom ? -ENOMEM : fact_put(r, key, b->s, view, once);

	free(b->s);
	*b = (struct rl_buf){ 0 };
	return ret;
}

static int var_set(struct dfg_rules *r, const char *name, const char *value)
{
	struct rl_buf key = { 0 }, b = { 0 };
	struct fact_ent *f;
	int ret;

	rl_buf_printf(&key, "var:%s", name);
	if (key.oom)
		return -ENOMEM;
	if (!value) {
		f = fact_find(r, key.s);
		if (f)
			fact_drop(r, f);
		free(key.s);
		return 0;
	}
	rl_buf_printf(&b, "(var");
	put_str(&b, "name", name);
	rl_buf_printf(&b, " (value ");
	put_value(&b, value);
	rl_buf_printf(&b, "))");
	ret = put_buf(r, key.s, &b, false, false);
	if (!ret) {
		f = fact_find(r, key.s);
		free(f->val);
		f->val = strdup(value);
		if (!f->val)
			ret = -ENOMEM;
	}
	free(key.s);
	return ret;
}

/* --- CLIPS callbacks ----------------------------------------------------- */

/* Argument @i as text: numbers printed, strings and symbols as they are. */
static char *arg_text(void *env, int i)
{
	DATA_OBJECT d;
	char num[64];

	EnvRtnUnknown(env, i, &d);
	switch (GetType(d)) {
	case INTEGER:
		snprintf(num, sizeof(num), "%lld", (long long)DOToLong(d));
		return strdup(num);
	case FLOAT:
		snprintf(num, sizeof(num), "%.15g", DOToDouble(d));
		return strdup(num);
	case STRING:
	case SYMBOL:
		return strdup(DOToString(d));
	default:
		return strdup("");
	}
}

static int edit_check(struct dfg_rules *r, const struct dfg_plan_edit *e,
		      bool say);

static void report_firing(struct dfg_rules *r)
{
	struct rule_ent *e;
	struct dfg_rules_firing f = { 0 };
	unsigned int i;

	if (r->firing < 0)
		return;
	e = rule_by_serial(r, r->firing);
	if (r->explain && e && r->view) {
		struct dfg_plan_edit *shown = calloc(r->nedits - r->fedit + 1,
						     sizeof(*shown));

		f.rule = e->r.name;
		f.file = e->r.file;
		f.line = e->r.line;
		f.nfacts = r->nffacts;
		f.facts = (const char *const *)r->ffacts;
		/* what it changes: an edit the plan has already is none */
		for (i = r->fedit; shown && i < r->nedits; i++)
			if (edit_check(r, &r->edits[i], false))
				shown[f.nedits++] = r->edits[i];
		f.edits = shown;
		if (shown)
			r->explain(r->explain_arg, &f);
		else
			r->eval_err = -ENOMEM;
		free(shown);
	}
	for (i = 0; i < r->nffacts; i++)
		free(r->ffacts[i]);
	free(r->ffacts);
	r->ffacts = NULL;
	r->nffacts = 0;
	r->firing = -1;
}

/* (dfg-fired SERIAL ?f...): a rule starts its actions */
static int udf_fired(void *env)
{
	struct dfg_rules *r = GetEnvironmentContext(env);
	int i, n = EnvRtnArgCount(env);
	DATA_OBJECT d;

	report_firing(r);
	r->st.firings++;
	r->firing = (int)EnvRtnDouble(env, 1);
	r->fedit = r->nedits;
	if (!r->explain)
		return 0;
	r->ffacts = calloc(n, sizeof(*r->ffacts));
	if (!r->ffacts) {
		r->eval_err = -ENOMEM;
		return 0;
	}
	for (i = 2; i <= n; i++) {
		char buf[1024];

		EnvRtnUnknown(env, i, &d);
		if (GetType(d) != FACT_ADDRESS)
			continue;
		EnvGetFactPPForm(env, buf, sizeof(buf), DOToPointer(d));
		/* without CLIPS's "f-N     ": fact numbers mean nothing here */
		r->ffacts[r->nffacts] = strdup(strchr(buf, '(') ?
					       strchr(buf, '(') : buf);
		if (!r->ffacts[r->nffacts]) {
			r->eval_err = -ENOMEM;
			return 0;
		}
		r->nffacts++;
	}
	return 0;
}

static char *own(char ***strs, unsigned int *n, char *s, int *err)
{
	char **v;

	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	v = realloc(*strs, (*n + 1) * sizeof(*v));
	if (!v) {
		free(s);
		*err = -ENOMEM;
		return NULL;
	}
	*strs = v;
	v[(*n)++] = s;
	return s;
}

static int push_edit(struct dfg_rules *r, const struct dfg_plan_edit *e)
{
	int err = 0;
	struct dfg_plan_edit c = *e;

	if (r->nedits == r->cap) {
		unsigned int cap = r->cap ? r->cap * 2 : 8;
		struct dfg_plan_edit *v = realloc(r->edits, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->edits = v;
		r->cap = cap;
	}
	c.comp = own(&r->strs, &r->nstrs, strdup(e->comp ? e->comp : ""),
		     &err);
	if (e->type)
		c.type = own(&r->strs, &r->nstrs, strdup(e->type), &err);
	if (e->key)
		c.key = own(&r->strs, &r->nstrs, strdup(e->key), &err);
	if (e->value)
		c.value = own(&r->strs, &r->nstrs, strdup(e->value), &err);
	if (err)
		return err;
	r->edits[r->nedits++] = c;
	return 0;
}

static const char *edit_name(enum dfg_edit_op op);

/*
 * Makes edit @e a "proposed" fact for the rest of this evaluation, so
 * that rules can complete a decision (a straight neighbour's degree, a
 * machine's limit on a central decision). One fact per target: the same
 * edit again changes nothing and fires nothing.
 */
static int propose(struct dfg_rules *r, const struct dfg_plan_edit *e)
{
	bool fold = e->op == DFG_EDIT_FOLD || e->op == DFG_EDIT_UNFOLD;
	struct rl_buf b = { 0 }, key = { 0 };
	int ret;

	rl_buf_printf(&key, "proposed:%s:%s:%s",
		      fold ? "fold" : edit_name(e->op), e->comp ? e->comp : "",
		      e->op == DFG_EDIT_PARAM && e->key ? e->key : "");
	rl_buf_printf(&b, "(proposed");
	put_str(&b, "op", edit_name(e->op));
	put_str(&b, "comp", e->comp);
	put_num(&b, "degree", e->degree);
	put_str(&b, "type", e->type);
	put_str(&b, "key", e->key);
	put_str(&b, "value", e->value);
	rl_buf_printf(&b, ")");
	ret = key.oom ? -ENOMEM : put_buf(r, key.s, &b, false, true);
	free(b.s);
	free(key.s);
	return ret;
}

/* (dfg-edit SERIAL OP COMP ARGS...) */
static int udf_edit(void *env)
{
	struct dfg_rules *r = GetEnvironmentContext(env);
	int n = EnvRtnArgCount(env);
	struct dfg_plan_edit e = { 0 };
	char *op = arg_text(env, 2), *comp = arg_text(env, 3);
	char *a = n >= 4 ? arg_text(env, 4) : NULL;
	char *b = n >= 5 ? arg_text(env, 5) : NULL;
	int err = 0;

	if (!op || !comp || (n >= 4 && !a) || (n >= 5 && !b)) {
		err = -ENOMEM;
		goto out;
	}
	e.comp = comp;
	if (!strcmp(op, "degree")) {
		char *end;
		double d = strtod(a, &end);

		e.op = DFG_EDIT_DEGREE;
		/* out of range is the validator's to refuse, with a reason */
		if (*end || !isfinite(d) || d < 0 || d != floor(d))
			e.degree = 0;
		else
			e.degree = d > DFG_FLOW_MAX_DEGREE ?
				   DFG_FLOW_MAX_DEGREE + 1 : (unsigned int)d;
	} else if (!strcmp(op, "unfold")) {
		e.op = DFG_EDIT_UNFOLD;
	} else if (!strcmp(op, "fold")) {
		e.op = DFG_EDIT_FOLD;
	} else if (!strcmp(op, "substitute")) {
		e.op = DFG_EDIT_SUBSTITUTE;
		e.type = a;
	} else {
		e.op = DFG_EDIT_PARAM;
		e.key = a;
		e.value = b;
	}
	err = push_edit(r, &e);
	if (!err)
		err = propose(r, &e);
out:
	if (err)
		r->eval_err = err;
	free(op);
	free(comp);
	free(a);
	free(b);
	return 0;
}

/* (dfg-set NAME [VALUE]) */
static int udf_set(void *env)
{
	struct dfg_rules *r = GetEnvironmentContext(env);
	char *name = arg_text(env, 1);
	char *val = EnvRtnArgCount(env) >= 2 ? arg_text(env, 2) : NULL;
	int err;

	if (!name || (EnvRtnArgCount(env) >= 2 && !val))
		err = -ENOMEM;
	else
		err = var_set(r, name, val);
	if (err)
		r->eval_err = err;
	free(name);
	free(val);
	return 0;
}

static int queue_change(struct dfg_rules *r, unsigned int serial,
			char *revoke)
{
	void *v = realloc(r->pending, (r->npending + 1) * sizeof(*r->pending));

	if (!v) {
		free(revoke);
		return -ENOMEM;
	}
	r->pending = v;
	r->pending[r->npending].serial = serial;
	r->pending[r->npending].revoke = revoke;
	r->npending++;
	return 0;
}

/* (dfg-add SERIAL) */
static int udf_add(void *env)
{
	struct dfg_rules *r = GetEnvironmentContext(env);
	int err = queue_change(r, (unsigned int)EnvRtnDouble(env, 1), NULL);

	if (err)
		r->eval_err = err;
	return 0;
}

/* (dfg-revoke NAME) */
static int udf_revoke(void *env)
{
	struct dfg_rules *r = GetEnvironmentContext(env);
	char *name = arg_text(env, 1);
	int err = name ? queue_change(r, 0, name) : -ENOMEM;

	if (err)
		r->eval_err = err;
	return 0;
}

/* (dfg-warn SERIAL TEXT) */
static int udf_warn(void *env)
{
	struct dfg_rules *r = GetEnvironmentContext(env);
	struct rule_ent *e = rule_by_serial(r, (unsigned int)EnvRtnDouble(env, 1));
	char *msg = arg_text(env, 2);

	warnf(r, "rule %s: %s", e ? e->r.name : "?", msg ? msg : "");
	free(msg);
	return 0;
}

static void apply_pending(struct dfg_rules *r)
{
	unsigned int i;

	if (!r->npending)	/* the usual firing: the rules stay as they are */
		return;
	for (i = 0; i < r->npending; i++) {
		struct rule_ent *e;

		if (r->pending[i].revoke) {
			e = rule_active(r, r->pending[i].revoke);
			if (e)
				unbuild(r, e);
			else
				warnf(r, "revoke: no rule '%s'",
				      r->pending[i].revoke);
			free(r->pending[i].revoke);
		} else {
			e = rule_by_serial(r, r->pending[i].serial);
			if (e && build(r, e))
				flush_cliperr(r);
		}
		r->rules_changed = true;
	}
	r->npending = 0;
	compact_rules(r);
	rehash_rules(r);
}

/* --- handle -------------------------------------------------------------- */

int dfg_rules_new(struct dfg_rules **rp, unsigned int flags)
{
	static const struct {
		const char	*name;
		int		(*fn)(void *env);
	} udfs[] = {
		{ "dfg-fired", udf_fired }, { "dfg-edit", udf_edit },
		{ "dfg-set", udf_set }, { "dfg-add", udf_add },
		{ "dfg-revoke", udf_revoke }, { "dfg-warn", udf_warn },
	};
	struct dfg_rules *r;
	unsigned int i;

	if (!rp || (flags & ~DFG_RULES_ALL))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->flags = flags;
	r->max_firings = DFG_RULES_MAX_FIRINGS;
	r->log = getenv("DFG_REPLAN_LOG") != NULL;
	r->firing = -1;
	r->env = CreateEnvironment();
	if (!r->env) {
		free(r);
		return -ENOMEM;
	}
	SetEnvironmentContext(r->env, r);
	if (!EnvAddRouter(r->env, "dfg-err", 40, router_query, router_print,
			  NULL, NULL, NULL))
		goto fail;
	for (i = 0; i < sizeof(udfs) / sizeof(udfs[0]); i++)
		if (!EnvDefineFunction2(r->env, udfs[i].name, 'i', udfs[i].fn,
					udfs[i].name, NULL))
			goto fail;
	for (i = 0; rl_templates[i]; i++)
		if (!EnvBuild(r->env, rl_templates[i]))
			goto fail;
	*rp = r;
	return 0;
fail:
	DestroyEnvironment(r->env);
	free(r->cliperr.s);
	free(r);
	return -ENOMEM;
}

static void free_prev(struct dfg_rules *r)
{
	unsigned int i;

	for (i = 0; i < r->nprev; i++)
		free(r->prev[i].name);
	free(r->prev);
	r->prev = NULL;
	r->nprev = 0;
}

static void clear_edits(struct dfg_rules *r)
{
	unsigned int i;

	for (i = 0; i < r->nstrs; i++)
		free(r->strs[i]);
	free(r->strs);
	r->strs = NULL;
	r->nstrs = 0;
	r->nedits = 0;
}

static void clear_episode(struct dfg_rules *r)
{
	unsigned int i;

	for (i = 0; i < r->nep_strs; i++)
		free(r->ep_strs[i]);
	free(r->ep_strs);
	free(r->ep_edits);
	r->ep_strs = NULL;
	r->ep_edits = NULL;
	r->nep = r->nep_strs = 0;
	r->ep_open = r->ep_nocache = false;
}

void dfg_rules_free(struct dfg_rules *r)
{
	unsigned int i;

	if (!r)
		return;
	while (r->nfacts)
		fact_drop(r, &r->facts[r->nfacts - 1]);
	DestroyEnvironment(r->env);
	for (i = 0; i < r->nrules; i++) {
		free(r->rules[i].r.name);
		free(r->rules[i].r.file);
		free(r->rules[i].r.body);
	}
	for (i = 0; i < r->npending; i++)
		free(r->pending[i].revoke);
	report_firing(r);
	clear_edits(r);
	clear_episode(r);
	dfg_events_close(r->evs);
	dfg_plan_store_close(r->store);
	free(r->sig_text);
	free(r->ep_text);
	free(r->pending);
	free(r->rules);
	free(r->facts);
	free(r->edits);
	free_prev(r);
	free(r->last_refusal);
	free(r->cliperr.s);
	free(r);
}

int dfg_rules_load_string(struct dfg_rules *r, const char *text, size_t len,
			  const char *name, struct dfg_rules_error *err)
{
	struct rl_parsed p;
	struct rule_ent *v;
	unsigned int i, first;
	bool *was_built;
	int ret;

	if (!r || (!text && len))
		return -EINVAL;
	ret = rl_parse(text ? text : "", len, name ? name : "<string>",
		       &r->serial, &p, err);
	if (ret)
		return ret;
	v = realloc(r->rules, (r->nrules + p.nrules) * sizeof(*v));
	if (!v) {
		rl_parsed_free(&p);
		return -ENOMEM;
	}
	r->rules = v;
	first = r->nrules;
	/* what a failed load must give back: the rules active before it */
	was_built = calloc(first + 1, sizeof(*was_built));
	if (!was_built) {
		rl_parsed_free(&p);
		return -ENOMEM;
	}
	for (i = 0; i < first; i++)
		was_built[i] = r->rules[i].built;
	for (i = 0; i < p.nrules; i++)
		r->rules[r->nrules++] = (struct rule_ent){ .r = p.rules[i] };
	free(p.rules);
	p.rules = NULL;
	p.nrules = 0;
	for (i = first; i < r->nrules && !ret; i++) {
		struct rule_ent *e = &r->rules[i];

		if (e->r.dormant)
			continue;
		ret = build(r, e);
		if (ret == -EINVAL && err) {
			/* the translation refers to something CLIPS rejects */
			char *s;

			snprintf(err->file, sizeof(err->file), "%s", e->r.file);
			err->line = e->r.line;
			err->col = 1;
			for (s = r->cliperr.s; s && *s; s++)
				if (*s == '\n')
					*s = ' ';
			snprintf(err->msg, sizeof(err->msg),
				 "rule '%s' not accepted: %s", e->r.name,
				 r->cliperr.s ? r->cliperr.s : "");
		}
	}
	if (r->cliperr.s) {
		r->cliperr.len = 0;
		r->cliperr.s[0] = '\0';
	}
	if (ret) {
		/* nothing is added: undo this load's rules */
		while (r->nrules > first) {
			struct rule_ent *e = &r->rules[--r->nrules];

			if (e->built)
				unbuild(r, e);
			free(e->r.name);
			free(e->r.file);
			free(e->r.body);
		}
		for (i = 0; i < first; i++)
			if (was_built[i] && !r->rules[i].built)
				build(r, &r->rules[i]);
		free(was_built);
		rl_parsed_free(&p);
		rehash_rules(r);
		return ret;
	}
	free(was_built);
	for (i = 0; i < p.nvars && !ret; i++)
		ret = var_set(r, p.vars[i].name, p.vars[i].value);
	rl_parsed_free(&p);
	compact_rules(r);
	rehash_rules(r);
	return ret;
}

int dfg_rules_load_file(struct dfg_rules *r, const char *path,
			struct dfg_rules_error *err)
{
	char *text = NULL;
	size_t len = 0, cap = 0;
	FILE *f;
	int ret;

	if (!r || !path)
		return -EINVAL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	for (;;) {
		size_t got;

		if (len == cap) {
			char *t = realloc(text, cap ? cap * 2 : 4096);

			if (!t) {
				free(text);
				fclose(f);
				return -ENOMEM;
			}
			text = t;
			cap = cap ? cap * 2 : 4096;
		}
		got = fread(text + len, 1, cap - len, f);
		len += got;
		if (!got)
			break;
	}
	ret = ferror(f) ? -EIO : 0;
	fclose(f);
	if (!ret)
		ret = dfg_rules_load_string(r, text, len, path, err);
	free(text);
	return ret;
}

int dfg_rules_load_default(struct dfg_rules *r, struct dfg_rules_error *err)
{
	return dfg_rules_load_string(r, rl_default_rules,
				     strlen(rl_default_rules), "default.rules",
				     err);
}

int dfg_rules_revoke(struct dfg_rules *r, const char *name)
{
	struct rule_ent *e;

	if (!r || !name)
		return -EINVAL;
	e = rule_active(r, name);
	if (!e)
		return -ENOENT;
	unbuild(r, e);
	compact_rules(r);
	rehash_rules(r);
	return 0;
}

int dfg_rules_has(const struct dfg_rules *r, const char *name)
{
	return r && name && rule_active(r, name);
}

int dfg_rules_assert_var(struct dfg_rules *r, const char *name,
			 const char *value)
{
	if (!r || !name || !*name)
		return -EINVAL;
	return var_set(r, name, value);
}

const char *dfg_rules_var(const struct dfg_rules *r, const char *name)
{
	unsigned int i;

	if (!r || !name)
		return NULL;
	for (i = 0; i < r->nfacts; i++) {
		const char *k = r->facts[i].key;

		if (!strncmp(k, "var:", 4) && !strcmp(k + 4, name))
			return r->facts[i].val;
	}
	return NULL;
}

int dfg_rules_assert_metric(struct dfg_rules *r, const char *comp,
			    const char *name, double value)
{
	struct rl_buf key = { 0 }, b = { 0 };
	int ret;

	if (!r || !name || !*name)
		return -EINVAL;
	rl_buf_printf(&key, "metric:%s:%s", comp ? comp : "", name);
	rl_buf_printf(&b, "(metric");
	put_str(&b, "comp", comp ? comp : "");
	put_str(&b, "name", name);
	put_num(&b, "value", value);
	rl_buf_printf(&b, ")");
	ret = key.oom ? -ENOMEM : put_buf(r, key.s, &b, false, false);
	free(b.s);
	free(key.s);
	return ret;
}

/* The feedback's numbers an event may carry, as event slots. */
static const struct {
	unsigned int	attr;
	const char	*slot;
} ev_values[] = {
	{ DFG_NL_A_FILL, "fill" },
	{ DFG_NL_A_CAPACITY, "capacity" },
	{ DFG_NL_A_MARK, "mark" },
	{ DFG_NL_A_CPU, "cpu" },
	{ DFG_NL_A_WAIT_MS, "wait_ms" },
	{ DFG_NL_A_MEM_AVAIL, "mem_avail" },
	{ DFG_NL_A_MEM_TOTAL, "mem_total" },
	{ DFG_NL_A_COUNT, "count" },
	{ DFG_NL_A_RATE, "rate" },
	{ DFG_NL_A_PERIOD_MS, "period_ms" },
};

/* @evs: where @ev was read, for its feedback values; NULL: none. */
static int assert_event(struct dfg_rules *r, const struct dfg_event_msg *ev,
			const struct dfg_events *evs)
{
	struct rl_buf key = { 0 }, b = { 0 };
	const char *name;
	char unknown[32];
	int ret;

	if (!r || !ev)
		return -EINVAL;
	name = dfg_event_name(ev->type);
	if (!name) {
		/* an id newer than this libdfg: still a fact, by number */
		snprintf(unknown, sizeof(unknown), "event_%u", ev->type);
		name = unknown;
	}
	rl_buf_printf(&key, "event:%llu", r->nevents++);
	rl_buf_printf(&b, "(event");
	put_str(&b, "name", name);
	put_num(&b, "graph", ev->graph);
	put_num(&b, "object", ev->object);
	put_num(&b, "pid", ev->pid);
	put_num(&b, "rank", ev->rank);
	put_num(&b, "cmd", ev->cmd);
	for (size_t i = 0; evs && i < sizeof(ev_values) / sizeof(ev_values[0]);
	     i++) {
		__u64 v;

		/* absent values keep the slot's default, 0 */
		if (!dfg_events_value(evs, ev_values[i].attr, &v))
			put_num(&b, ev_values[i].slot, (double)v);
	}
	rl_buf_printf(&b, ")");
	ret = key.oom ? -ENOMEM : put_buf(r, key.s, &b, false, true);
	if (!ret) {
		struct fact_ent *f = fact_find(r, key.s);

		f->ev_name = strdup(name);
		if (!f->ev_name)
			ret = -ENOMEM;
	}
	free(b.s);
	free(key.s);
	return ret;
}

int dfg_rules_assert_event(struct dfg_rules *r, const struct dfg_event_msg *ev)
{
	return assert_event(r, ev, NULL);
}

int dfg_rules_subscribe(struct dfg_rules *r, unsigned int flags)
{
	int ret;

	if (!r)
		return -EINVAL;
	dfg_events_close(r->evs);
	r->evs = NULL;
	ret = dfg_events_open(&r->evs, flags);
	return ret;
}

int dfg_rules_set_system(struct dfg_rules *r,
			 const struct dfg_rules_system *sys)
{
	if (!r)
		return -EINVAL;
	r->sys_fixed = sys != NULL;
	if (sys)
		r->sys = *sys;
	return 0;
}

int dfg_rules_set_max_firings(struct dfg_rules *r, unsigned int n)
{
	if (!r || !n)
		return -EINVAL;
	r->max_firings = n;
	return 0;
}

int dfg_rules_set_explain(struct dfg_rules *r,
			  void (*fn)(void *arg,
				     const struct dfg_rules_firing *f),
			  void *arg)
{
	if (!r)
		return -EINVAL;
	r->explain = fn;
	r->explain_arg = arg;
	return 0;
}

int dfg_rules_set_warn(struct dfg_rules *r,
		       void (*fn)(void *arg, const char *msg), void *arg)
{
	if (!r)
		return -EINVAL;
	r->warn = fn;
	r->warn_arg = arg;
	return 0;
}

int dfg_rules_set_central(struct dfg_rules *local, struct dfg_rules *central)
{
	if (!local || local == central ||
	    !(local->flags & DFG_RULES_LOCAL) ||
	    (central && (central->flags & DFG_RULES_LOCAL)))
		return -EINVAL;
	local->central = central;
	return 0;
}

int dfg_rules_stats(const struct dfg_rules *r, struct dfg_rules_stats *st)
{
	if (!r || !st)
		return -EINVAL;
	*st = r->st;
	st->store_entries = r->store ? rl_store_entries(r->store) : 0;
	return 0;
}

int dfg_rules_store_open(struct dfg_rules *r, const char *dir)
{
	struct dfg_plan_store *s;
	int ret;

	if (!r || !dir)
		return -EINVAL;
	ret = dfg_plan_store_open(dir, DFG_PLAN_STORE_CREATE, &s);
	if (ret)
		return ret;
	dfg_plan_store_close(r->store);
	r->store = s;
	return 0;
}

static const char *edit_name(enum dfg_edit_op op)
{
	switch (op) {
	case DFG_EDIT_DEGREE:
		return "degree";
	case DFG_EDIT_UNFOLD:
		return "unfold";
	case DFG_EDIT_FOLD:
		return "fold";
	case DFG_EDIT_SUBSTITUTE:
		return "substitute";
	case DFG_EDIT_PARAM:
		return "param";
	}
	return "?";
}

static void print_edit(FILE *f, const struct dfg_plan_edit *e)
{
	fprintf(f, "%s %s", edit_name(e->op), e->comp);
	if (e->op == DFG_EDIT_DEGREE)
		fprintf(f, " %u", e->degree);
	else if (e->op == DFG_EDIT_SUBSTITUTE)
		fprintf(f, " %s", e->type);
	else if (e->op == DFG_EDIT_PARAM)
		fprintf(f, " %s=%s", e->key, e->value ? e->value : "");
}

void dfg_rules_explain_print(void *arg, const struct dfg_rules_firing *f)
{
	FILE *out = arg ? arg : stderr;
	unsigned int i;

	if (f->from_store)
		fprintf(out, "rules: decision from the plan store\n");
	else
		fprintf(out, "rules: %s fired (%s:%u)\n", f->rule, f->file,
			f->line);
	for (i = 0; i < f->nfacts; i++)
		fprintf(out, "  matched %s\n", f->facts[i]);
	if (!f->nedits)
		fprintf(out, "  no plan change\n");
	for (i = 0; i < f->nedits; i++) {
		fprintf(out, "  change ");
		print_edit(out, &f->edits[i]);
		fprintf(out, "\n");
	}
}

/* --- one evaluation ------------------------------------------------------ */

static void read_system(struct dfg_rules *r)
{
	struct dfg_rules_system s = { 0 };
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	char line[256];
	struct dirent *d;
	DIR *dir;
	FILE *f;

	s.cpus = n > 0 ? n : 1;
	dir = opendir("/sys/devices/system/node");
	if (dir) {
		while ((d = readdir(dir)))
			if (!strncmp(d->d_name, "node", 4) &&
			    d->d_name[4] >= '0' && d->d_name[4] <= '9')
				s.numa++;
		closedir(dir);
	}
	if (!s.numa)
		s.numa = 1;
	f = fopen("/proc/meminfo", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemAvailable: %llu kB",
				   &s.mem_avail) == 1) {
				s.mem_avail *= 1024;
				break;
			}
		fclose(f);
	}
	r->sys = s;
}

static double rate(__u64 cur, __u64 prev, double dt)
{
	return dt > 0 && cur >= prev ? (double)(cur - prev) / dt : 0;
}

/* The kind of the flows into @c: "hash" if any is, else the first's. */
static const char *fed_by(const struct dfg_flow *fg,
			  const struct dfg_flow_comp *c)
{
	unsigned int i;

	for (i = 0; i < c->nin_flows; i++)
		if (fg->flows[c->in_flows[i]].kind == DFG_FLOW_HASH)
			return "hash";
	return c->nin_flows ?
	       dfg_flow_kind_name(fg->flows[c->in_flows[0]].kind) : "none";
}

/*
 * A fingerprint of what the param and flow facts say about @fg: they
 * change only with a new plan, and formatting them (an expression
 * parameter runs to hundreds of bytes) and parsing them back into CLIPS
 * was most of an evaluation's cost.
 */
static unsigned long long graph_print(const struct dfg_flow *fg)
{
	unsigned long long h = hash_str(0, "graph");
	char num[48];
	unsigned int i, j;

	for (i = 0; i < fg->ncomps; i++) {
		const struct dfg_flow_comp *c = &fg->comps[i];

		h = hash_str(hash_str(h, c->name), c->type);
		for (j = 0; j < c->nparams; j++)
			h = hash_str(hash_str(h, c->params[j].key),
				     c->params[j].value ?: "");
	}
	for (i = 0; i < fg->nflows; i++) {
		const struct dfg_flow_edge *e = &fg->flows[i];

		snprintf(num, sizeof(num), "%u:%u>%u:%u/%d", e->src,
			 e->src_port, e->dst, e->dst_port, e->kind);
		h = hash_str(hash_str(h, num), e->key ?: "");
	}
	return h;
}

/* The param and flow facts of @fg, made again only when it changed. */
static int sync_graph(struct dfg_rules *r, const struct dfg_flow *fg)
{
	unsigned long long print = graph_print(fg);
	struct rl_buf b = { 0 }, key = { 0 };
	unsigned int i, j;
	int ret = 0;

	if (print == r->graph_print) {
		for (i = 0; i < r->nfacts; i++) {
			const char *k = r->facts[i].key;

			if (!strncmp(k, "param:", 6) || !strncmp(k, "flow:", 5))
				r->facts[i].seen = true;
		}
		return 0;
	}
	r->graph_print = 0;	/* until all are in */
	for (i = 0; i < fg->ncomps && !ret; i++) {
		const struct dfg_flow_comp *c = &fg->comps[i];

		for (j = 0; j < c->nparams && !ret; j++) {
			rl_buf_printf(&b, "(param");
			put_str(&b, "comp", c->name);
			put_str(&b, "key", c->params[j].key);
			rl_buf_printf(&b, " (value ");
			put_value(&b, c->params[j].value);
			rl_buf_printf(&b, "))");
			rl_buf_printf(&key, "param:%s:%s", c->name,
				      c->params[j].key);
			ret = key.oom ? -ENOMEM :
			      put_buf(r, key.s, &b, true, false);
			key.len = 0;
		}
	}
	for (i = 0; i < fg->nflows && !ret; i++) {
		const struct dfg_flow_edge *e = &fg->flows[i];

		rl_buf_printf(&b, "(flow");
		put_str(&b, "src", fg->comps[e->src].name);
		put_str(&b, "dst", fg->comps[e->dst].name);
		put_str(&b, "kind", dfg_flow_kind_name(e->kind));
		put_str(&b, "key", e->key);
		put_str(&b, "src_type", fg->comps[e->src].type);
		put_str(&b, "dst_type", fg->comps[e->dst].type);
		rl_buf_printf(&b, ")");
		rl_buf_printf(&key, "flow:%s:%u:%s:%u",
			      fg->comps[e->src].name, e->src_port,
			      fg->comps[e->dst].name, e->dst_port);
		ret = key.oom ? -ENOMEM : put_buf(r, key.s, &b, true, false);
		key.len = 0;
	}
	free(b.s);
	free(key.s);
	if (!ret)
		r->graph_print = print;
	return ret;
}

/* The system fact: the machine as it is now. */
static int sync_system(struct dfg_rules *r)
{
	struct vfact vf = { .tmpl = "system" };

	if (!r->sys_fixed && !(r->flags & DFG_RULES_NO_SYSTEM))
		read_system(r);
	vfact_num(&vf, "cpus", r->sys.cpus);
	vfact_num(&vf, "numa", r->sys.numa);
	vfact_num(&vf, "mem_avail", (double)r->sys.mem_avail);
	return vfact_put(r, "system", &vf);
}

static int sync_view(struct dfg_rules *r, const struct dfg_run_view *v)
{
	const struct dfg_flow *fg = v->fg;
	struct rl_buf key = { 0 };
	const struct dfg_run_view_comp **old;
	struct prev_comp *np;
	__u64 total_cpu = 0;
	double dt = 0;
	unsigned int i, j;
	int ret = 0;

	for (i = 0; i < r->nfacts; i++)
		r->facts[i].seen = false;
	if (r->nprev && v->now_ns > r->prev_ns)
		dt = (double)(v->now_ns - r->prev_ns) / 1e9;
	/* each component's previous counters, or NULL: none to compare */
	old = calloc(fg->ncomps + 1, sizeof(*old));
	if (!old)
		return -ENOMEM;
	for (i = 0; i < fg->ncomps && dt > 0; i++) {
		for (j = 0; j < r->nprev; j++) {
			unsigned int k = (i + j) % r->nprev;

			if (!strcmp(r->prev[k].name, fg->comps[i].name)) {
				old[i] = &r->prev[k].c;
				break;
			}
		}
	}
	for (i = 0; i < fg->ncomps; i++)
		total_cpu += v->comps[i].cpu_samples -
			     (old[i] ? old[i]->cpu_samples : 0);

	for (i = 0; i < fg->ncomps && !ret; i++) {
		const struct dfg_flow_comp *c = &fg->comps[i];
		const struct dfg_run_view_comp *m = &v->comps[i];
		const struct dfg_run_view_comp *p = old[i] ? old[i] : m;
		unsigned int set = v->plan ? v->plan->set_of[i] : 0;
		struct vfact vf = { .tmpl = "comp" };

		vfact_str(&vf, "name", c->name);
		vfact_str(&vf, "type", c->type);
		vfact_num(&vf, "degree", c->degree);
		vfact_num(&vf, "phase", c->phase);
		vfact_str(&vf, "set", v->plan ? v->plan->sets[set].name : "");
		vfact_str(&vf, "fed_by", fed_by(fg, c));
		vfact_str(&vf, "foldable", c->foldable ? "yes" : "no");
		vfact_num(&vf, "cpu_share", total_cpu ?
			  (double)(m->cpu_samples -
				   (old[i] ? p->cpu_samples : 0)) / total_cpu :
			  0);
		vfact_num(&vf, "in_rate", rate(m->in_elems, p->in_elems, dt));
		vfact_num(&vf, "out_rate", rate(m->out_elems, p->out_elems, dt));
		vfact_num(&vf, "in_bytes_rate",
			  rate(m->in_bytes, p->in_bytes, dt));
		vfact_num(&vf, "out_bytes_rate",
			  rate(m->out_bytes, p->out_bytes, dt));
		vfact_num(&vf, "key_skew", m->key_skew);
		vfact_num(&vf, "in_elems", m->in_elems);
		vfact_num(&vf, "out_elems", m->out_elems);
		rl_buf_printf(&key, "comp:%s", c->name);
		ret = key.oom ? -ENOMEM : vfact_put(r, key.s, &vf);
		key.len = 0;
	}
	if (!ret)
		ret = sync_graph(r, fg);
	if (!ret)
		ret = sync_system(r);
	free(key.s);
	free(old);
	/* what the view no longer has goes */
	for (i = r->nfacts; i-- > 0;)
		if (r->facts[i].view && !r->facts[i].seen)
			fact_drop(r, &r->facts[i]);
	if (ret)
		return ret;

	np = calloc(fg->ncomps + 1, sizeof(*np));
	if (!np)
		return -ENOMEM;
	for (i = 0; i < fg->ncomps; i++) {
		np[i].c = v->comps[i];
		np[i].name = strdup(fg->comps[i].name);
		if (!np[i].name) {
			while (i--)
				free(np[i].name);
			free(np);
			return -ENOMEM;
		}
	}
	free_prev(r);
	r->prev = np;
	r->nprev = fg->ncomps;
	r->prev_ns = v->now_ns;
	return 0;
}

static void drop_once(struct dfg_rules *r)
{
	unsigned int i;

	for (i = r->nfacts; i-- > 0;)
		if (r->facts[i].once)
			fact_drop(r, &r->facts[i]);
}

static void drain_events(struct dfg_rules *r)
{
	struct dfg_event_msg ev;
	int ret;

	if (!r->evs)
		return;
	for (;;) {
		ret = dfg_events_next(r->evs, &ev, 0);
		if (ret == -ENOBUFS) {
			warnf(r, "module events were lost (socket buffer full)");
			continue;
		}
		if (ret)
			break;
		assert_event(r, &ev, r->evs);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The signature of the conditions: the rules, the graph as planned, the
 * system, variables, events, and which rules are about to fire on which
 * facts. 0 when nothing would fire.
 */
static unsigned long long signature(struct dfg_rules *r)
{
	const struct dfg_flow *fg = r->view->fg;
	unsigned long long h = hash_str(r->rules_hash ? r->rules_hash : 1,
					"sig");
	struct rl_buf text = { 0 };
	char **acts = NULL;
	unsigned int nacts = 0, i;
	char num[32];
	void *a;

	for (i = 0; i < fg->ncomps; i++) {
		snprintf(num, sizeof(num), "%u", fg->comps[i].degree);
		h = hash_str(hash_str(hash_str(h, fg->comps[i].name),
				      fg->comps[i].type), num);
		if (r->view->plan) {
			snprintf(num, sizeof(num), "%u",
				 r->view->plan->set_of[i]);
			h = hash_str(h, num);
		}
	}
	for (i = 0; i < fg->nflows; i++) {
		snprintf(num, sizeof(num), "%u>%u:%d", fg->flows[i].src,
			 fg->flows[i].dst, fg->flows[i].kind);
		h = hash_str(h, num);
	}
	/*
	 * Variables, the machine's shape (not its free memory: a metric)
	 * and a central decision count as they are; metrics and events only
	 * through the rules they activate, below.
	 */
	snprintf(num, sizeof(num), "%u/%u", r->sys.cpus, r->sys.numa);
	h = hash_str(h, num);
	for (i = 0; i < r->nfacts; i++) {
		const char *k = r->facts[i].key;

		if (!strncmp(k, "var:", 4))
			h = hash_str(h, r->facts[i].text);
		else if (!strncmp(k, "proposed:", 9))
			h ^= hash_str(0, r->facts[i].text);
	}
	for (a = EnvGetNextActivation(r->env, NULL); a;
	     a = EnvGetNextActivation(r->env, a)) {
		struct partialMatch *pm = EnvGetActivationBasis(r->env, a);
		struct rl_buf b = { 0 };
		struct rule_ent *e;
		char **v;

		e = rule_by_serial(r, atoi(EnvGetActivationName(r->env, a) + 1));
		rl_buf_printf(&b, "%s", e ? e->r.name : "?");
		for (i = 0; pm && i < pm->bcount; i++) {
			struct alphaMatch *am = pm->binds[i].gm.theMatch;
			const struct fact_ent *f = am ?
				fact_of(r, am->matchingItem) : NULL;

			/* an event by its name: its ids are this run's */
			if (f && f->ev_name)
				rl_buf_printf(&b, "|event:%s", f->ev_name);
			else
				rl_buf_printf(&b, "|%s", f ? f->key : "-");
		}
		v = b.oom ? NULL : realloc(acts, (nacts + 1) * sizeof(*v));
		if (!v) {
			free(b.s);
			h = 0;
			break;
		}
		acts = v;
		acts[nacts++] = b.s;
	}
	if (h && !nacts)
		h = 0;
	if (nacts)
		qsort(acts, nacts, sizeof(*acts), cmp_str);
	free(r->sig_text);
	r->sig_text = NULL;
	for (i = 0; i < nacts; i++) {
		if (h)
			h = hash_str(h, acts[i]);
		rl_buf_printf(&text, "%s%s", i ? "; " : "", acts[i]);
		free(acts[i]);
	}
	free(acts);
	if (text.oom)
		free(text.s);
	else
		r->sig_text = text.s;
	return h;
}

static void clear_agenda(struct dfg_rules *r)
{
	void *a;

	while ((a = EnvGetNextActivation(r->env, NULL)))
		EnvDeleteActivation(r->env, a);
}

static bool same_target(const struct dfg_plan_edit *a,
			const struct dfg_plan_edit *b)
{
	bool fa = a->op == DFG_EDIT_FOLD || a->op == DFG_EDIT_UNFOLD;
	bool fb = b->op == DFG_EDIT_FOLD || b->op == DFG_EDIT_UNFOLD;

	if (strcmp(a->comp, b->comp))
		return false;
	if (fa || fb)
		return fa && fb;
	if (a->op != b->op)
		return false;
	return a->op != DFG_EDIT_PARAM || !strcmp(a->key, b->key);
}

/*
 * Whether edit @e changes the running plan: 1, 0 (it is so already), or
 * -EINVAL for an edit that cannot be right (said when @say).
 */
static int edit_check(struct dfg_rules *r, const struct dfg_plan_edit *e,
		      bool say)
{
	const struct dfg_run_view *v = r->view;
	int c = dfg_flow_find(v->fg, e->comp);
	const struct dfg_flow_comp *fc;
	const char *p;

	if (c < 0) {
		if (say)
			refusef(r, "refused: %s %s: no component '%s' in the "
				"graph; the plan stays", edit_name(e->op),
				e->comp, e->comp);
		return -EINVAL;
	}
	fc = &v->fg->comps[c];
	switch (e->op) {
	case DFG_EDIT_DEGREE:
		if (!e->degree || e->degree > DFG_FLOW_MAX_DEGREE) {
			if (say)
				refusef(r, "refused: degree %s: not a degree in "
					"1..%u; the plan stays", e->comp,
					DFG_FLOW_MAX_DEGREE);
			return -EINVAL;
		}
		return fc->degree != e->degree;
	case DFG_EDIT_SUBSTITUTE:
		if (!e->type || !*e->type) {
			if (say)
				refusef(r, "refused: substitute %s: no type; "
					"the plan stays", e->comp);
			return -EINVAL;
		}
		return strcmp(fc->type, e->type) != 0;
	case DFG_EDIT_PARAM:
		if (!e->key || !*e->key) {
			if (say)
				refusef(r, "refused: param %s: no parameter "
					"name; the plan stays", e->comp);
			return -EINVAL;
		}
		p = dfg_flow_param(fc, e->key);
		return !(e->value && p && !strcmp(p, e->value));
	case DFG_EDIT_UNFOLD:
	case DFG_EDIT_FOLD:
		if (v->plan) {
			unsigned int m =
				v->plan->sets[v->plan->set_of[c]].nmembers;

			return e->op == DFG_EDIT_UNFOLD ? m > 1 : m == 1;
		}
		return 1;
	}
	return 1;
}

/*
 * Checks r->edits against the view and leaves only those that change
 * something, the last of several on one target. 0, or -EINVAL after
 * warning about the first invalid one.
 */
static int settle_edits(struct dfg_rules *r)
{
	unsigned int i, j, n = 0;

	for (i = 0; i < r->nedits; i++) {
		struct dfg_plan_edit *e = &r->edits[i];
		int ch = edit_check(r, e, true);

		if (ch < 0)
			return ch;
		for (j = i + 1; j < r->nedits && ch; j++)
			if (same_target(e, &r->edits[j]))
				ch = 0;	/* a later one wins */
		if (ch)
			r->edits[n++] = *e;
	}
	r->nedits = n;
	return 0;
}

static void store_firing(struct dfg_rules *r, unsigned long long key)
{
	struct dfg_rules_firing f = { .rule = "plan-store", .file = "",
				      .from_store = 1 };
	char sig[40];
	const char *facts[1] = { sig };

	snprintf(sig, sizeof(sig), "signature %016llx", key);
	f.nfacts = 1;
	f.facts = facts;
	f.nedits = r->nedits;
	f.edits = r->edits;
	if (r->explain)
		r->explain(r->explain_arg, &f);
}

/* Adds this evaluation's edits to the open episode and stores it. */
static void episode_add(struct dfg_rules *r, unsigned long long key)
{
	unsigned int i, j;
	int err = 0;

	if (!r->ep_open) {
		clear_episode(r);
		r->ep_open = true;
		r->ep_key = key;
		free(r->ep_text);
		r->ep_text = r->sig_text;
		r->sig_text = NULL;
	}
	if (r->rules_changed)
		r->ep_nocache = true;
	for (i = 0; i < r->nedits && !err; i++) {
		const struct dfg_plan_edit *e = &r->edits[i];
		struct dfg_plan_edit c = *e, *v;

		for (j = 0; j < r->nep; j++)
			if (same_target(&r->ep_edits[j], e))
				break;
		if (j == r->nep) {
			v = realloc(r->ep_edits, (r->nep + 1) * sizeof(*v));
			if (!v) {
				err = -ENOMEM;
				break;
			}
			r->ep_edits = v;
			r->nep++;
		}
		c.comp = own(&r->ep_strs, &r->nep_strs, strdup(e->comp), &err);
		if (e->type)
			c.type = own(&r->ep_strs, &r->nep_strs,
				     strdup(e->type), &err);
		if (e->key)
			c.key = own(&r->ep_strs, &r->nep_strs, strdup(e->key),
				    &err);
		if (e->value)
			c.value = own(&r->ep_strs, &r->nep_strs,
				      strdup(e->value), &err);
		r->ep_edits[j] = c;
	}
	if (err)
		r->ep_nocache = true;
	if (r->store && !r->ep_nocache && r->ep_key &&
	    rl_store_put(r->store, r->ep_key, r->view->fg->name, r->ep_text,
			 r->ep_edits, r->nep))
		warnf(r, "plan store: cannot write the decision");
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* The core of an evaluation, facts already in place. */
static int decide(struct dfg_rules *r)
{
	unsigned long long key = 0;
	long long fired = 0, n;
	int ret;

	clear_edits(r);
	r->eval_err = 0;
	r->rules_changed = false;
	r->st.evals++;
	r->lookup_ns = 0;
	if (r->store) {
		const struct dfg_plan_edit *se;
		unsigned int sn, i;
		__u64 t0 = mono_ns();
		int got;

		key = signature(r);
		if (!key) {
			/* nothing would fire: the episode is over */
			r->ep_open = false;
			return 0;
		}
		got = rl_store_get(r->store, key, &se, &sn);
		r->lookup_ns = mono_ns() - t0;	/* signature and lookup */
		if (!got) {
			for (i = 0; i < sn && !r->eval_err; i++)
				r->eval_err = push_edit(r, &se[i]);
			clear_agenda(r);
			r->st.store_hits++;
			ret = r->eval_err ? r->eval_err : settle_edits(r);
			if (!ret)
				store_firing(r, key);
			r->ep_open = false;
			return ret;
		}
	}
	do {
		n = EnvRun(r->env, r->max_firings - fired);
		fired += n;
		report_firing(r);
		apply_pending(r);
	} while (n > 0 && fired < r->max_firings &&
		 EnvGetNextActivation(r->env, NULL));
	flush_cliperr(r);
	if (r->eval_err)
		return r->eval_err;
	if (fired >= r->max_firings && EnvGetNextActivation(r->env, NULL)) {
		clear_agenda(r);
		r->st.cutoffs++;
		warnf(r, "rules still firing after %u firings: cut off, the "
		      "plan stays", r->max_firings);
		clear_edits(r);
		r->ep_open = false;
		return 0;
	}
	ret = settle_edits(r);
	if (ret)
		return ret;
	if (r->nedits)
		episode_add(r, key);
	else
		r->ep_open = false;
	return 0;
}

static int eval_local(struct dfg_rules *r, const struct dfg_run_view *view,
		      const struct dfg_plan_edit *partial, unsigned int npartial,
		      const struct dfg_plan_edit **edits, unsigned int *n)
{
	unsigned int i;
	int ret;

	if (!r || !view || !view->fg || (!view->comps && view->fg->ncomps) ||
	    !edits || !n || (npartial && !partial))
		return -EINVAL;
	*edits = NULL;
	*n = 0;
	r->view = view;
	drain_events(r);
	ret = sync_view(r, view);
	for (i = 0; i < npartial && !ret; i++)
		ret = propose(r, &partial[i]);
	if (!ret) {
		/* the partial decision first: local rules' edits win */
		clear_edits(r);
		ret = decide(r);
	}
	if (!ret && npartial) {
		unsigned int own_n = r->nedits;
		struct dfg_plan_edit *mine = malloc(own_n * sizeof(*mine) + 1);

		if (!mine) {
			ret = -ENOMEM;
		} else {
			memcpy(mine, r->edits, own_n * sizeof(*mine));
			r->nedits = 0;
			for (i = 0; i < npartial && !ret; i++)
				ret = push_edit(r, &partial[i]);
			for (i = 0; i < own_n && !ret; i++)
				ret = push_edit(r, &mine[i]);
			free(mine);
			if (!ret)
				ret = settle_edits(r);
		}
	}
	drop_once(r);
	r->view = NULL;
	if (ret) {
		if (ret == -EINVAL)
			r->st.refused++;
		clear_edits(r);
		r->ep_open = false;
		/* refused: the run goes on with the old plan */
		return ret == -EINVAL ? 0 : ret;
	}
	*edits = r->edits;
	*n = r->nedits;
	return 0;
}

int dfg_rules_complete(struct dfg_rules *r, const struct dfg_run_view *view,
		       const struct dfg_plan_edit *partial,
		       unsigned int npartial,
		       const struct dfg_plan_edit **edits, unsigned int *n)
{
	return eval_local(r, view, partial, npartial, edits, n);
}

int dfg_rules_eval(struct dfg_rules *r, const struct dfg_run_view *view,
		   const struct dfg_plan_edit **edits, unsigned int *n)
{
	const struct dfg_plan_edit *pe = NULL;
	unsigned int pn = 0;
	int ret;

	if (!r)
		return -EINVAL;
	if (r->central) {
		ret = dfg_rules_eval(r->central, view, &pe, &pn);
		if (ret)
			return ret;
	}
	return eval_local(r, view, pe, pn, edits, n);
}

static __u64 thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * With DFG_REPLAN_LOG set, every evaluation says on stderr what it cost
 * (wall and this thread's CPU: the evaluation shares the machine with the
 * sets it watches), and one that decides a change says when (the view's
 * CLOCK_MONOTONIC), how long the step took (all of it, and the signature
 * and store lookup alone: the rest is turning the view and the module's
 * events into facts), and whether the plan store answered it
 * (tools/bench/rules.sh reads these lines; dfg_run() adds its own, see
 * libdfg/run/replan.c).
 */
static int replanner_eval(void *ctx, const struct dfg_run_view *view,
			  const struct dfg_plan_edit **edits, unsigned int *n)
{
	struct dfg_rules *r = ctx;
	unsigned long long hits = r ? r->st.store_hits : 0;
	__u64 c0 = r && r->log ? thread_cpu_ns() : 0;
	__u64 t0 = mono_ns();
	int ret = dfg_rules_eval(ctx, view, edits, n);
	__u64 t1 = mono_ns();

	if (ret || !r->log)
		return ret;
	fprintf(stderr, "replan-log: eval gen=%u eval_ns=%llu cpu_ns=%llu "
		"edits=%u\n", view->generation,
		(unsigned long long)(t1 - t0),
		(unsigned long long)(thread_cpu_ns() - c0), *n);
	if (*n)
		fprintf(stderr, "replan-log: rules gen=%u view_ns=%llu "
			"eval_ns=%llu lookup_ns=%llu edits=%u store=%d\n",
			view->generation, (unsigned long long)view->now_ns,
			(unsigned long long)(t1 - t0),
			(unsigned long long)r->lookup_ns, *n,
			r->st.store_hits > hits);
	return ret;
}

static void replanner_applied(void *ctx, unsigned int generation, int err,
			      const char *why)
{
	struct dfg_rules *r = ctx;

	if (r->store)	/* a hit that served it: counted now, off its path */
		rl_store_count_hit(r->store);
	if (!err) {
		free(r->last_refusal);
		r->last_refusal = NULL;
		return;
	}
	r->st.refused++;
	/* the same refusal again (the rules insist): said once */
	if (!r->last_refusal || strcmp(r->last_refusal, why ? why : "")) {
		warnf(r, "the executor refused the plan change (generation "
		      "%u stays): %s", generation, why ? why : strerror(-err));
		free(r->last_refusal);
		r->last_refusal = strdup(why ? why : "");
	}
	if (r->store && r->ep_open && r->ep_key)
		rl_store_put(r->store, r->ep_key, NULL, NULL, NULL, 0);
	r->ep_open = false;
}

struct dfg_replanner dfg_rules_replanner(struct dfg_rules *r)
{
	return (struct dfg_replanner){
		.eval = replanner_eval,
		.applied = replanner_applied,
		.ctx = r,
	};
}
