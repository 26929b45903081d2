// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * Parameter declarations: what a value of each kind looks like, and the
 * checks of a type's table. A value is accepted here exactly when the
 * component's own parsing would accept it (dfg_comp_param_long(),
 * comp_sep(), comp_expr(), comp_path()), so that a graph dfg plan passes
 * does not fail at dfg run on a parameter.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "param.h"

#define DECLS_MAX	256	/* entries of one table, for a sane bound */

const char *const comp_orders[] = { "asc", "desc", NULL };

static int param_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int param_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

const struct dfg_param_decl *comp_param_find(const struct dfg_param_decl *decls,
					     const char *name)
{
	for (; decls && decls->name; decls++)
		if (!strcmp(decls->name, name))
			return decls;
	return NULL;
}

bool comp_param_known(const struct dfg_comp_type *t, const char *name)
{
	const struct dfg_param_decl *decls = dfg_comp_param_decls(t);
	const char *const *p;

	if (decls)
		return comp_param_find(decls, name);
	for (p = t->params; p && *p; p++)
		if (!strcmp(*p, name))
			return true;
	return false;
}

/* As dfg_comp_param_long() reads it (and words it): strtoll(), base 0,
 * all of it, in range. */
static int check_int(const struct dfg_param_decl *d, const char *value,
		     char *err, size_t errlen)
{
	int saved = errno, bad;
	long long v;
	char *end;

	errno = 0;
	v = strtoll(value, &end, 0);
	bad = errno || end == value || *end;
	errno = saved;
	if (bad)
		return param_err(err, errlen, "'%s' is not an integer", value);
	if (v < d->min || v > d->max)
		return param_err(err, errlen, "%lld is not in [%lld, %lld]", v,
				 d->min, d->max);
	return 0;
}

int comp_param_check(const struct dfg_param_decl *d, const char *value,
		     char *err, size_t errlen)
{
	const char *const *c;
	struct dfg_expr *e;
	char msg[160];
	size_t len;
	int ret;

	switch (d->kind) {
	case DFG_PARAM_STRING:
		return 0;
	case DFG_PARAM_INT:
	case DFG_PARAM_UINT:
		return check_int(d, value, err, errlen);
	case DFG_PARAM_EXPR:
		msg[0] = '\0';
		ret = dfg_expr_compile(value, &e, msg, sizeof(msg));
		if (!ret) {
			dfg_expr_free(e);
			return 0;
		}
		if (ret == -ENOMEM)
			return ret;
		return param_err(err, errlen, "%s", msg[0] ? msg :
				 "not an expression");
	case DFG_PARAM_PATH:
		return *value ? 0 : param_err(err, errlen,
					      "empty: a file name is needed");
	case DFG_PARAM_ENUM:
		for (c = d->choices; c && *c; c++)
			if (!strcmp(*c, value))
				return 0;
		len = 0;
		msg[0] = '\0';
		for (c = d->choices; c && *c && len < sizeof(msg); c++)
			len += snprintf(msg + len, sizeof(msg) - len, "%s%s",
					c == d->choices ? "" : c[1] ? ", " :
					" or ", *c);
		return param_err(err, errlen, "'%s' is not %s", value, msg);
	case DFG_PARAM_CHAR:
		if (strlen(value) == 1 || !strcmp(value, "tab") ||
		    !strcmp(value, "\\t") || !strcmp(value, "space"))
			return 0;
		return param_err(err, errlen,
				 "'%s' is not one byte, 'tab' or 'space'",
				 value);
	}
	return param_err(err, errlen, "unknown kind %u", d->kind);
}

bool comp_name_ok(const char *name)
{
	size_t i, n = name ? strlen(name) : 0;

	if (!n || n > 63)
		return false;
	for (i = 0; i < n; i++)
		if (!islower((unsigned char)name[i]) &&
		    !isdigit((unsigned char)name[i]) && name[i] != '_')
			return false;
	return true;
}

/* One entry of a table; @why gets what is wrong with it. */
static int decl_check(const struct dfg_param_decl *d, char *why,
		      size_t len)
{
	int ret;

	if (!comp_name_ok(d->name))
		return param_err(why, len, "bad name");
	if (d->kind < DFG_PARAM_STRING || d->kind > DFG_PARAM_CHAR)
		return param_err(why, len, "unknown kind %u", d->kind);
	if (d->flags & ~DFG_PARAM_FLAGS_ALL)
		return param_err(why, len, "unknown flags");
	if ((d->kind == DFG_PARAM_INT || d->kind == DFG_PARAM_UINT) &&
	    (d->min > d->max || (d->kind == DFG_PARAM_UINT && d->min < 0)))
		return param_err(why, len, "bad range [%lld, %lld]", d->min,
				 d->max);
	if (d->kind == DFG_PARAM_ENUM && !(d->choices && d->choices[0]))
		return param_err(why, len, "an enum without choices");
	if (d->def && (d->flags & DFG_PARAM_REQUIRED))
		return param_err(why, len, "required but has a default");
	if (d->def) {
		ret = comp_param_check(d, d->def, why, len);
		if (ret == -EINVAL)
			return param_err(why, len, "default '%s' is not a valid value",
					 d->def);
		return ret;
	}
	return 0;
}

int comp_param_decls_check(const struct dfg_param_decl *decls, char *err,
			   size_t errlen)
{
	unsigned int i, j;
	char why[160];
	int ret;

	for (i = 0; decls[i].name; i++) {
		if (i == DECLS_MAX)
			return param_err(err, errlen,
					 "more than %u parameters", DECLS_MAX);
		ret = decl_check(&decls[i], why, sizeof(why));
		if (ret == -EINVAL)
			return param_err(err, errlen, "parameter %u ('%s'): %s",
					 i, decls[i].name, why);
		if (ret)
			return ret;
		for (j = 0; j < i; j++)
			if (!strcmp(decls[j].name, decls[i].name))
				return param_err(err, errlen,
						 "parameter '%s' declared twice",
						 decls[i].name);
	}
	return 0;
}
