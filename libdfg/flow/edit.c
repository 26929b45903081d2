// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg flow: plan edits (<dfg/replan.h>).
 *
 * An edited graph is written back as DOT and loaded again through the
 * loader with the component registry, so it passes exactly the checks a
 * graph file passes (types, ports, parameters and their values, degrees
 * across straight flows, cycles) and the refusal names what broke. The
 * components and flows keep their order, hence their indices and the
 * topological order, unless an edit changes the topology itself.
 *
 * UNFOLD pins the component to a manual set of its own, named
 * DFG_EDIT_UNFOLD_PIN "<name>" (no other component can carry it); FOLD
 * removes that pin again.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dfg/replan.h>
#include <dfg/run.h>

#define DFG_EDIT_UNFOLD_PIN	"unfold:"

static int refuse(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* One component as the edits leave it; strings are borrowed. */
struct ecomp {
	const char	*type;
	unsigned int	degree;
	const char	*pin;
	char		*own_pin;	/* UNFOLD's, allocated */
	unsigned int	nparams;
	const char	**pkey, **pval;	/* the graph's, then edits' */
};

/*
 * A DOT quoted string. libcgraph turns \" into " and keeps any other
 * backslash as it is, so only quotes are escaped.
 */
static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* What the type says when the file says nothing. */
static void type_defaults(const char *type, bool *foldable, bool *interior)
{
	struct dfg_flow_typeinfo info = { 0 };
	const struct dfg_flow_types *t = dfg_run_types();

	*foldable = *interior = true;
	if (!t->lookup(t->arg, type, &info)) {
		*foldable = info.foldable;
		*interior = info.interior;
	}
}

static void write_comp(FILE *f, const struct dfg_flow_comp *fc,
		       const struct ecomp *e)
{
	bool tf, ti;
	unsigned int i;

	type_defaults(fc->type, &tf, &ti);
	put_str(f, fc->name);
	fputs(" [type=", f);
	put_str(f, e->type);
	fprintf(f, " degree=%u phase=%u", e->degree, fc->phase);
	/* only what the file set against its (old) type's default */
	if (tf && !fc->foldable)
		fputs(" foldable=false", f);
	if (ti && !fc->interior)
		fputs(" role=root", f);
	if (e->pin) {
		fputs(" set=", f);
		put_str(f, e->pin);
	}
	for (i = 0; i < e->nparams; i++) {
		if (!e->pkey[i])
			continue;
		fputc(' ', f);
		put_str(f, e->pkey[i]);
		fputc('=', f);
		put_str(f, e->pval[i]);
	}
	fputs("];\n", f);
}

static void write_flow(FILE *f, const struct dfg_flow *fg,
		       const struct dfg_flow_edge *fe)
{
	put_str(f, fg->comps[fe->src].name);
	fputs(" -> ", f);
	put_str(f, fg->comps[fe->dst].name);
	fputs(" [from_port=", f);
	put_str(f, fg->comps[fe->src].out[fe->src_port].name);
	fputs(" to_port=", f);
	put_str(f, fg->comps[fe->dst].in[fe->dst_port].name);
	fprintf(f, " flow=%s", dfg_flow_kind_name(fe->kind));
	if (fe->key) {
		fputs(" key=", f);
		put_str(f, fe->key);
	}
	fputs("];\n", f);
}

/*
 * What a DOT string cannot hold: a final backslash (it would escape the
 * closing quote) or one before a newline (a line continuation).
 */
static bool dot_safe(const char *s)
{
	const char *b = strchr(s, '\\');

	for (; b; b = strchr(b + 1, '\\'))
		if (!b[1] || b[1] == '\n')
			return false;
	return true;
}

/* Edit @i on the components' copies; -EINVAL with @why. */
static int apply_one(const struct dfg_flow *fg, struct ecomp *ec,
		     const struct dfg_plan_edit *ed, unsigned int i,
		     char *why, size_t whylen)
{
	struct ecomp *e;
	unsigned int p;
	int c;

	if (!ed->comp)
		return refuse(why, whylen, "edit %u: no component", i);
	c = dfg_flow_find(fg, ed->comp);
	if (c < 0)
		return refuse(why, whylen, "edit %u: unknown component '%s'",
			      i, ed->comp);
	e = &ec[c];
	switch (ed->op) {
	case DFG_EDIT_DEGREE:
		if (ed->degree < 1 || ed->degree > DFG_FLOW_MAX_DEGREE)
			return refuse(why, whylen,
				      "edit %u: '%s': degree %u is not in 1..%u",
				      i, ed->comp, ed->degree,
				      DFG_FLOW_MAX_DEGREE);
		e->degree = ed->degree;
		return 0;
	case DFG_EDIT_UNFOLD:
		free(e->own_pin);
		e->own_pin = malloc(strlen(DFG_EDIT_UNFOLD_PIN) +
				    strlen(ed->comp) + 1);
		if (!e->own_pin)
			return -ENOMEM;
		strcpy(e->own_pin, DFG_EDIT_UNFOLD_PIN);
		strcat(e->own_pin, ed->comp);
		e->pin = e->own_pin;
		return 0;
	case DFG_EDIT_FOLD:
		if (!e->pin || strncmp(e->pin, DFG_EDIT_UNFOLD_PIN,
				       strlen(DFG_EDIT_UNFOLD_PIN)))
			return refuse(why, whylen,
				      "edit %u: '%s' is not unfolded", i,
				      ed->comp);
		e->pin = NULL;
		return 0;
	case DFG_EDIT_SUBSTITUTE:
		if (!ed->type || !*ed->type)
			return refuse(why, whylen, "edit %u: '%s': no type", i,
				      ed->comp);
		if (!dot_safe(ed->type))
			return refuse(why, whylen,
				      "edit %u: '%s': type '%s' cannot be written in a graph file",
				      i, ed->comp, ed->type);
		e->type = ed->type;
		return 0;
	case DFG_EDIT_PARAM:
		if (!ed->key || !*ed->key || !ed->value)
			return refuse(why, whylen,
				      "edit %u: '%s': no parameter or value",
				      i, ed->comp);
		if (!dot_safe(ed->key) || !dot_safe(ed->value))
			return refuse(why, whylen,
				      "edit %u: '%s': parameter '%s' cannot be written in a graph file",
				      i, ed->comp, ed->key);
		for (p = 0; p < e->nparams; p++)
			if (e->pkey[p] && !strcmp(e->pkey[p], ed->key))
				break;
		e->pkey[p] = ed->key;
		e->pval[p] = ed->value;
		if (p == e->nparams)
			e->nparams++;
		return 0;
	}
	return refuse(why, whylen, "edit %u: unknown operation %d", i,
		      (int)ed->op);
}

/* The loader's first complaint, as the reason. */
static void why_load(const struct dfg_flow_errors *errs, char *why,
		     size_t whylen)
{
	const struct dfg_flow_error *e;

	if (!errs || !errs->n) {
		refuse(why, whylen, "the edited graph does not load");
		return;
	}
	e = &errs->v[0];
	refuse(why, whylen, "%s%s%s%s%s%s", e->object ? e->object : "",
	       e->object ? ": " : "", e->attr ? "attribute '" : "",
	       e->attr ? e->attr : "", e->attr ? "': " : "", e->msg);
}

int dfg_plan_edit_apply(const struct dfg_flow *fg, const struct dfg_plan *plan,
			unsigned int flags, const struct dfg_plan_edit *edits,
			unsigned int n, struct dfg_flow **fgp,
			struct dfg_plan **planp, char *why, size_t whylen)
{
	struct dfg_flow_errors *errs = NULL;
	struct dfg_flow *nfg = NULL;
	struct dfg_plan *nplan = NULL;
	struct ecomp *ec = NULL;
	char *text = NULL;
	size_t len = 0;
	unsigned int c, i;
	FILE *f = NULL;
	int r;

	if (why && whylen)
		why[0] = '\0';
	if (!fg || !plan || plan->graph != fg || (n && !edits) || !fgp ||
	    !planp || flags & ~DFG_PLAN_ALL)
		return refuse(why, whylen, "invalid arguments");
	ec = calloc(fg->ncomps + 1, sizeof(*ec));
	if (!ec)
		return -ENOMEM;
	for (c = 0; c < fg->ncomps; c++) {
		const struct dfg_flow_comp *fc = &fg->comps[c];
		unsigned int extra = 0;

		for (i = 0; i < n; i++)
			extra += edits[i].op == DFG_EDIT_PARAM;
		ec[c].type = fc->type;
		ec[c].degree = fc->degree;
		ec[c].pin = fc->pin;
		ec[c].nparams = fc->nparams;
		ec[c].pkey = calloc(fc->nparams + extra + 1, sizeof(char *));
		ec[c].pval = calloc(fc->nparams + extra + 1, sizeof(char *));
		if (!ec[c].pkey || !ec[c].pval) {
			r = -ENOMEM;
			goto out;
		}
		for (i = 0; i < fc->nparams; i++) {
			ec[c].pkey[i] = fc->params[i].key;
			ec[c].pval[i] = fc->params[i].value;
		}
	}
	for (i = 0; i < n; i++) {
		r = apply_one(fg, ec, &edits[i], i, why, whylen);
		if (r)
			goto out;
	}
	f = open_memstream(&text, &len);
	if (!f) {
		r = -ENOMEM;
		goto out;
	}
	fputs("digraph ", f);
	if (fg->name && *fg->name)
		put_str(f, fg->name);
	fputs(" {\n", f);
	for (c = 0; c < fg->ncomps; c++)
		write_comp(f, &fg->comps[c], &ec[c]);
	for (i = 0; i < fg->nflows; i++)
		write_flow(f, fg, &fg->flows[i]);
	fputs("}\n", f);
	if (fclose(f)) {
		f = NULL;
		r = -ENOMEM;
		goto out;
	}
	f = NULL;
	r = dfg_flow_parse(text, len, fg->file ? fg->file : "<edited>",
			   dfg_run_types(), &nfg, &errs);
	if (r == -EINVAL) {
		why_load(errs, why, whylen);
		goto out;
	}
	if (r)
		goto out;
	r = dfg_plan_build(nfg, flags, &nplan);
	if (r)
		goto out;
	*fgp = nfg;
	*planp = nplan;
	nfg = NULL;
out:
	dfg_flow_errors_free(errs);
	dfg_flow_free(nfg);
	free(text);
	for (c = 0; ec && c < fg->ncomps; c++) {
		free(ec[c].own_pin);
		free(ec[c].pkey);
		free(ec[c].pval);
	}
	free(ec);
	return r;
}
