// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * A real graph every Debian machine has: the package dependency graph of
 * apt's package lists (/var/lib/apt/lists/ *_Packages, or dpkg's status
 * file), in the deb822 stanza format. See dfg_gs_import_apt() in gstore.h
 * for what becomes a node, an edge, a feature and a label.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gstore.h"

/* The fields read from a stanza (others are skipped). */
enum { F_PACKAGE, F_ISIZE, F_SIZE, F_SECTION, F_PRIORITY, F_ESSENTIAL,
       F_MULTIARCH, F_ARCH, F_DEPENDS, F_PREDEPENDS, F_RECOMMENDS,
       F_SUGGESTS, F_PROVIDES, F_COUNT };

static const char *const field_name[F_COUNT] = {
	"Package", "Installed-Size", "Size", "Section", "Priority",
	"Essential", "Multi-Arch", "Architecture", "Depends", "Pre-Depends",
	"Recommends", "Suggests", "Provides",
};

struct pkg {
	char		*f[F_COUNT];	/* field values, or NULL */
	uint64_t	order;		/* position in the input */
};

struct apt {
	struct pkg	*p;
	size_t		n, cap;
	struct dfg_gs_apt_stat *st;
};

static void pkg_free(struct pkg *p)
{
	for (int i = 0; i < F_COUNT; i++)
		free(p->f[i]);
}

/* Appends @s (a continuation line) to field value @v. */
static int field_append(char **v, const char *s)
{
	size_t a = strlen(*v), b = strlen(s);
	char *p = realloc(*v, a + b + 2);

	if (!p)
		return -ENOMEM;
	p[a] = ' ';
	memcpy(p + a + 1, s, b + 1);
	*v = p;
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
			 e[-1] == '\r'))
		*--e = 0;
	return s;
}

/* The stanza @cur ends: kept if it is a package, else counted. */
static int stanza_end(struct apt *a, struct pkg *cur, bool bad, bool any)
{
	if (!any)
		return 0;
	if (bad || !cur->f[F_PACKAGE] || !cur->f[F_PACKAGE][0] ||
	    strpbrk(cur->f[F_PACKAGE], " \t")) {
		a->st->malformed++;
		pkg_free(cur);
		memset(cur, 0, sizeof(*cur));
		return 0;
	}
	if (a->n == a->cap) {
		size_t c = a->cap ? a->cap * 2 : 1024;
		struct pkg *p = realloc(a->p, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		a->p = p;
		a->cap = c;
	}
	cur->order = a->n;
	a->p[a->n++] = *cur;
	memset(cur, 0, sizeof(*cur));
	return 0;
}

/* Reads every stanza of @f into @a. */
static int read_stanzas(struct apt *a, FILE *f, const char *name,
			struct dfg_gs_err *err)
{
	struct pkg cur = { 0 };
	char *line = NULL, **last = NULL, *skip = NULL;
	bool bad = false, any = false;
	size_t cap = 0;
	ssize_t len;
	int ret = 0, i;

	while ((len = getline(&line, &cap, f)) >= 0) {
		char *colon, *v;

		a->st->lines++;
		if (memchr(line, 0, (size_t)len)) {
			ret = dfg_gs_fail(err, -EBADMSG,
					  "%s: line %llu: a NUL byte: not a package list",
					  name,
					  (unsigned long long)a->st->lines);
			break;
		}
		v = trim(line);
		if (!*v) {			/* a blank line ends a stanza */
			ret = stanza_end(a, &cur, bad, any);
			if (ret)
				break;
			bad = any = false;
			last = NULL;
			continue;
		}
		any = true;
		if (line[0] == ' ' || line[0] == '\t') {	/* continuation */
			if (!last)
				bad = true;	/* nothing to continue */
			else if (last && *last && field_append(last, v))
				ret = -ENOMEM;
			if (ret)
				break;
			continue;
		}
		if (line[0] == '#')
			continue;
		colon = strchr(line, ':');
		if (!colon || colon == line) {
			bad = true;
			last = NULL;
			continue;
		}
		*colon = 0;
		/* A field not kept: its continuation lines go nowhere. */
		last = &skip;
		for (i = 0; i < F_COUNT; i++) {
			if (strcasecmp(line, field_name[i]))
				continue;
			if (cur.f[i]) {
				bad = true;
				break;
			}
			cur.f[i] = strdup(trim(colon + 1));
			if (!cur.f[i]) {
				ret = -ENOMEM;
				break;
			}
			last = &cur.f[i];
			break;
		}
		if (ret)
			break;
	}
	if (!ret && ferror(f))
		ret = dfg_gs_fail(err, -EIO, "%s: read error", name);
	if (!ret)
		ret = stanza_end(a, &cur, bad, any);
	pkg_free(&cur);
	free(line);
	if (ret == -ENOMEM)
		dfg_gs_fail(err, ret, "%s: out of memory", name);
	return ret;
}

/* ---- names ---- */

struct name_ref {
	const char	*name;
	uint64_t	id;		/* node, or the providing node */
};

static int name_cmp(const void *x, const void *y)
{
	const struct name_ref *a = x, *b = y;
	int c = strcmp(a->name, b->name);

	return c ? c : (a->id > b->id) - (a->id < b->id);
}

static int pkg_order_cmp(const void *x, const void *y)
{
	const struct pkg *a = x, *b = y;
	int c = strcmp(a->f[F_PACKAGE], b->f[F_PACKAGE]);

	return c ? c : (a->order > b->order) - (a->order < b->order);
}

/* The first entry of @name in sorted @r (@n), or NULL. */
static const struct name_ref *name_find(const struct name_ref *r, size_t n,
					const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(r[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strcmp(r[lo].name, name) ? &r[lo] : NULL;
}

/* The package name of one alternative: up to a blank, '(', '[', '<', ':'. */
static size_t alt_name(const char *s, char *out, size_t cap)
{
	size_t i = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	while (s[i] && !strchr(" \t([<:|,", s[i]) && i + 1 < cap) {
		out[i] = s[i];
		i++;
	}
	out[i] = 0;
	return i;
}

/* Number of comma-separated clauses of a relation field. */
static unsigned int clauses(const char *v)
{
	unsigned int n = 0;
	bool word = false;

	for (; v && *v; v++) {
		if (*v == ',') {
			n += word;
			word = false;
		} else if (*v != ' ' && *v != '\t') {
			word = true;
		}
	}
	return n + word;
}

struct edges {
	uint64_t	*src, *dst;
	size_t		n, cap;
};

static int edge_add(struct edges *e, uint64_t s, uint64_t d)
{
	if (e->n == e->cap) {
		size_t c = e->cap ? e->cap * 2 : 4096;
		uint64_t *a = realloc(e->src, c * 8), *b;

		if (!a)
			return -ENOMEM;
		e->src = a;
		b = realloc(e->dst, c * 8);
		if (!b)
			return -ENOMEM;
		e->dst = b;
		e->cap = c;
	}
	e->src[e->n] = s;
	e->dst[e->n++] = d;
	return 0;
}

/*
 * The edges of node @id's relation field @v: per clause, the first
 * alternative that names a package or that some package provides (then
 * its provider with the lowest id), as apt tries them in order.
 */
static int relation_edges(struct edges *e, uint64_t id, const char *v,
			  const struct name_ref *pk, size_t npk,
			  const struct name_ref *pv, size_t npv,
			  struct dfg_gs_apt_stat *st)
{
	char name[256];

	while (v && *v) {
		const char *end = strchr(v, ','), *a;
		const struct name_ref *hit = NULL;
		bool any = false;

		if (!end)
			end = v + strlen(v);
		for (a = v; a < end && !hit;) {
			const char *bar = memchr(a, '|', end - a);
			char alt[256];
			size_t l = (bar ? bar : end) - a;

			if (l >= sizeof(alt))
				l = sizeof(alt) - 1;
			memcpy(alt, a, l);
			alt[l] = 0;
			if (alt_name(alt, name, sizeof(name))) {
				any = true;
				hit = name_find(pk, npk, name);
				if (!hit)
					hit = name_find(pv, npv, name);
			}
			a = bar ? bar + 1 : end;
		}
		if (hit && hit->id != id) {
			if (edge_add(e, id, hit->id))
				return -ENOMEM;
			st->edges++;
		} else if (any && !hit) {
			st->unresolved++;
		}
		v = *end ? end + 1 : end;
	}
	return 0;
}

/* ---- features and labels ---- */

static float lg(const char *v)
{
	double x = v ? strtod(v, NULL) : 0;

	return (float)log2(1 + (x > 0 ? x : 0));
}

static bool is(const char *v, const char *s)
{
	return v && !strcasecmp(v, s);
}

/* The section without its archive area ("contrib/net" -> "net"). */
static const char *section_of(const struct pkg *p)
{
	const char *s = p->f[F_SECTION], *slash;

	if (!s || !*s)
		return "unknown";
	slash = strrchr(s, '/');
	return slash && slash[1] ? slash + 1 : s;
}

static void features(const struct pkg *p, float *x)
{
	static const char *const prio[] = {
		"required", "important", "standard", "optional", "extra",
	};
	unsigned int i;

	memset(x, 0, DFG_GS_APT_FEAT_DIM * sizeof(*x));
	x[0] = lg(p->f[F_ISIZE]);
	x[1] = lg(p->f[F_SIZE]);
	for (i = 0; i < 5; i++)
		x[2 + i] = is(p->f[F_PRIORITY], prio[i]);
	x[7] = is(p->f[F_ESSENTIAL], "yes");
	x[8] = is(p->f[F_MULTIARCH], "same");
	x[9] = is(p->f[F_MULTIARCH], "foreign");
	x[10] = is(p->f[F_MULTIARCH], "allowed");
	x[11] = (float)log2(1 + clauses(p->f[F_DEPENDS]) +
			    clauses(p->f[F_PREDEPENDS]));
	x[12] = (float)log2(1 + clauses(p->f[F_RECOMMENDS]));
	x[13] = (float)log2(1 + clauses(p->f[F_SUGGESTS]));
	x[14] = (float)log2(1 + clauses(p->f[F_PROVIDES]));
	x[15] = is(p->f[F_ARCH], "all");
}

static int str_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Labels: the index of each node's section among the sorted sections. */
static int labels(struct dfg_gs_graph *g, const struct pkg *p, size_t n)
{
	const char **sec = malloc(n * sizeof(*sec));
	size_t i, k = 0;

	g->label = malloc(n * sizeof(*g->label));
	if (!sec || !g->label) {
		free(sec);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		sec[i] = section_of(&p[i]);
	qsort(sec, n, sizeof(*sec), str_cmp);
	for (i = 0; i < n; i++)
		if (!k || strcmp(sec[k - 1], sec[i]))
			sec[k++] = sec[i];
	for (i = 0; i < n; i++) {
		const char *s = section_of(&p[i]);
		const char **hit = bsearch(&s, sec, k, sizeof(*sec), str_cmp);

		g->label[i] = (uint32_t)(hit - sec);
	}
	g->classes = (uint32_t)k;
	free(sec);
	return 0;
}

int dfg_gs_import_apt(struct dfg_gs_graph *g, FILE *f, const char *name,
		      uint32_t flags, struct dfg_gs_apt_stat *st,
		      struct dfg_gs_err *err)
{
	static const int rel[] = { F_PREDEPENDS, F_DEPENDS, F_RECOMMENDS };
	struct dfg_gs_apt_stat dummy;
	struct apt a = { .st = st ? st : &dummy };
	struct name_ref *pk = NULL, *pv = NULL;
	struct edges e = { 0 };
	size_t i, j, n = 0, npv = 0;
	int ret;

	memset(g, 0, sizeof(*g));
	memset(a.st, 0, sizeof(*a.st));
	ret = read_stanzas(&a, f, name, err);
	if (ret)
		goto out;
	/* One node per name, the first stanza in the input winning. */
	if (a.n)
		qsort(a.p, a.n, sizeof(*a.p), pkg_order_cmp);
	for (i = 0; i < a.n; i++) {
		if (n && !strcmp(a.p[n - 1].f[F_PACKAGE], a.p[i].f[F_PACKAGE])) {
			a.st->duplicates++;
			pkg_free(&a.p[i]);
			continue;
		}
		a.p[n++] = a.p[i];
	}
	a.n = n;
	if (!n) {
		ret = dfg_gs_fail(err, -EBADMSG, "%s: no package stanza", name);
		goto out;
	}
	pk = malloc(n * sizeof(*pk));
	if (!pk)
		goto nomem;
	for (i = 0; i < n; i++)
		pk[i] = (struct name_ref){ a.p[i].f[F_PACKAGE], i };
	/* Provided names (virtual packages): (name, provider) sorted. */
	for (i = 0; i < n; i++)
		npv += clauses(a.p[i].f[F_PROVIDES]);
	pv = malloc((npv ? npv : 1) * sizeof(*pv));
	if (!pv)
		goto nomem;
	npv = 0;
	for (i = 0; i < n; i++) {
		const char *v = a.p[i].f[F_PROVIDES];
		char nm[256];

		while (v && *v) {
			const char *end = strchr(v, ',');
			char *s;

			if (!end)
				end = v + strlen(v);
			if (alt_name(v, nm, sizeof(nm))) {
				s = strdup(nm);
				if (!s)
					goto nomem;
				pv[npv++] = (struct name_ref){ s, i };
			}
			v = *end ? end + 1 : end;
		}
	}
	qsort(pv, npv, sizeof(*pv), name_cmp);
	for (i = 0; i < n; i++)
		for (j = 0; j < sizeof(rel) / sizeof(rel[0]); j++) {
			ret = relation_edges(&e, i, a.p[i].f[rel[j]], pk, n, pv,
					     npv, a.st);
			if (ret)
				goto nomem;
		}
	ret = dfg_gs_build_csr(g, n, e.src, e.dst, e.n, flags, err);
	if (ret)
		goto out;
	g->feat = malloc(n * DFG_GS_APT_FEAT_DIM * sizeof(float));
	if (!g->feat || labels(g, a.p, n))
		goto nomem;
	for (i = 0; i < n; i++)
		features(&a.p[i], (float *)g->feat + i * DFG_GS_APT_FEAT_DIM);
	g->feat_dim = DFG_GS_APT_FEAT_DIM;
	g->feat_type = DFG_GS_FEAT_F32;
	a.st->packages = n;
	ret = 0;
	goto out;
nomem:
	ret = dfg_gs_fail(err, -ENOMEM, "%s: out of memory", name);
out:
	for (i = 0; i < a.n; i++)
		pkg_free(&a.p[i]);
	free(a.p);
	free(pk);
	for (i = 0; pv && i < npv; i++)
		free((char *)pv[i].name);
	free(pv);
	free(e.src);
	free(e.dst);
	if (ret)
		dfg_gs_graph_free(g);
	return ret;
}
