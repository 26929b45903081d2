// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * Built-in pull components, recast as push the way the patent describes:
 * compute() only stores, and the work happens at a logical break, EOF
 * (shutdown) or a user blip (a unit-of-work boundary): sort, join,
 * aggregate and its shorthand count. Their buffers are their state, so a
 * checkpoint saves them whole.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comp_impl.h"
#include "param.h"

/* Parameters (dfg_component(7)); the defaults are the ones init() applies. */
static const struct dfg_param_decl sort_decls[] = {
	COMP_DECL_KEY("key", "$0", "what to sort by"),
	COMP_DECL_SEP("field separator, blanks by default"),
	COMP_DECL_NUMERIC,
	COMP_DECL_ORDER,
	{ NULL },
};

static const char *const join_types[] = { "inner", "left", NULL };

static const struct dfg_param_decl join_decls[] = {
	COMP_DECL_KEY("key", "$1", "the key of both inputs"),
	COMP_DECL_KEY("left_key", NULL, "the key of input 0, default key"),
	COMP_DECL_KEY("right_key", NULL, "the key of input 1, default key"),
	COMP_DECL_SEP("field separator, blanks by default"),
	COMP_DECL_OUT_SEP,
	{ .name = "type", .kind = DFG_PARAM_ENUM, .choices = join_types,
	  .def = "inner", .help = "inner, or left (outer)" },
	{ NULL },
};

static const char *const agg_ops[] = { "count", "sum", "min", "max", NULL };

static const struct dfg_param_decl agg_decls[] = {
	COMP_DECL_KEY("key", "$0", "what to group by"),
	{ .name = "value", .kind = DFG_PARAM_EXPR,
	  .help = "what to sum, min or max (required by those)" },
	{ .name = "op", .kind = DFG_PARAM_ENUM, .choices = agg_ops,
	  .def = "count", .help = "count, sum, min or max" },
	COMP_DECL_SEP("field separator, blanks by default"),
	COMP_DECL_OUT_SEP,
	{ NULL },
};

static const struct dfg_param_decl count_decls[] = {
	COMP_DECL_KEY("key", "$0", "what to count"),
	COMP_DECL_SEP("field separator, blanks by default"),
	COMP_DECL_OUT_SEP,
	{ NULL },
};

/* ---- sort -------------------------------------------------------------- */

struct sorter {
	struct comp_key		key;
	struct comp_store	recs;
};

static void sort_fini(struct dfg_comp *c)
{
	struct sorter *s = dfg_comp_state(c);

	comp_key_fini(&s->key);
	comp_store_fini(&s->recs);
	free(s);
}

static int sort_init(struct dfg_comp *c, void **state)
{
	struct sorter *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	*state = s;
	ret = comp_key_init(c, &s->key, "key", "$0");
	if (ret)
		sort_fini(c);
	return ret;
}

static int sort_compute(struct dfg_comp *c, unsigned int port,
			const struct dfg_elem *e)
{
	struct sorter *s = dfg_comp_state(c);
	struct dfg_expr_val v;
	int ret;

	(void)port;
	ret = comp_key_eval(c, &s->key, e, &v);
	if (ret)
		return ret;
	if (!comp_store_add(&s->recs, e->data, e->len, &v))
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	return 0;
}

/*
 * What the sort compares, copied out of the records once: the key inline
 * and the record's index, so that a comparison is a few loads and no call
 * (a sort of 30,000 records makes about 450,000 of them).
 */
struct sort_ent {
	const char	*s;
	size_t		len;
	long long	i;
	size_t		idx;
};

static inline int ent_cmp(bool numeric, bool desc, const struct sort_ent *a,
			  const struct sort_ent *b)
{
	int r;

	if (numeric) {
		r = (a->i > b->i) - (a->i < b->i);
	} else {
		size_t n = a->len < b->len ? a->len : b->len;

		r = n ? memcmp(a->s, b->s, n) : 0;
		if (!r)
			r = (a->len > b->len) - (a->len < b->len);
	}
	return desc ? -r : r;
}

#define SORT_RUN	8	/* insertion-sorted before the merges */

/*
 * Stable: a bottom-up merge sort that takes the left one of equal keys,
 * over runs that insertion sort left in order (it moves an entry only
 * past greater ones). @tmp holds @n entries.
 */
static void ent_sort(bool numeric, bool desc, struct sort_ent *v,
		     struct sort_ent *tmp, size_t n)
{
	struct sort_ent *from = v, *to = tmp, *t;
	size_t i, j, w, lo;

	for (lo = 0; lo < n; lo += SORT_RUN) {
		size_t hi = lo + SORT_RUN < n ? lo + SORT_RUN : n;

		for (i = lo + 1; i < hi; i++) {
			struct sort_ent x = v[i];

			for (j = i; j > lo && ent_cmp(numeric, desc, &v[j - 1],
						      &x) > 0; j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
	}
	for (w = SORT_RUN; w < n; w *= 2) {
		for (lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n;
			size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t a = lo, b = mid, k = lo;

			while (a < mid && b < hi)
				to[k++] = ent_cmp(numeric, desc, &from[b],
						  &from[a]) < 0 ?
					  from[b++] : from[a++];
			while (a < mid)
				to[k++] = from[a++];
			while (b < hi)
				to[k++] = from[b++];
		}
		t = from;
		from = to;
		to = t;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
}

size_t *comp_sort_index(const struct comp_key *key,
			const struct comp_store *recs)
{
	size_t i, n = recs->nr;
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	struct sort_ent *v = malloc((n ? 2 * n : 1) * sizeof(*v));

	if (!idx || !v) {
		free(idx);
		free(v);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		const struct comp_rec *r = &recs->recs[i];

		v[i] = (struct sort_ent){ r->skey, r->sklen, r->ikey, i };
	}
	ent_sort(key->numeric, key->desc, v, v + n, n);
	for (i = 0; i < n; i++)
		idx[i] = v[i].idx;
	free(v);
	return idx;
}

int comp_emit_sorted(struct dfg_comp *c, const struct comp_key *key,
		     struct comp_store *recs)
{
	size_t i, n = recs->nr;
	size_t *idx;
	int ret = 0;

	if (!n)
		return 0;
	idx = comp_sort_index(key, recs);
	if (!idx)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	for (i = 0; !ret && i < n; i++) {
		const struct comp_rec *r = &recs->recs[idx[i]];

		ret = dfg_emit(c, 0, &(struct dfg_elem){ r->data, r->len, 0 });
	}
	free(idx);
	comp_store_clear(recs);
	return ret;
}

static int sort_flush(struct dfg_comp *c)
{
	struct sorter *s = dfg_comp_state(c);

	return comp_emit_sorted(c, &s->key, &s->recs);
}

static int sort_blip(struct dfg_comp *c, const struct dfg_blip *b)
{
	return b->kind == DFG_BLIP_USER ? sort_flush(c) : 0;
}

static int sort_checkpoint(struct dfg_comp *c, struct dfg_ckpt *w)
{
	struct sorter *s = dfg_comp_state(c);

	return comp_store_save(&s->recs, w);
}

static int sort_restore(struct dfg_comp *c, struct dfg_ckpt *r)
{
	struct sorter *s = dfg_comp_state(c);

	return comp_store_load(&s->recs, r);
}

const struct dfg_comp_type comp_sort = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "sort",
	.summary = "stable sort by key at EOF (or at a user blip)",
	.flags = DFG_COMP_FOLDABLE | DFG_COMP_PULL,
	.min_in = 1, .max_in = 1,
	.min_out = 1, .max_out = 1,
	.param_decls = sort_decls,
	.init = sort_init,
	.fini = sort_fini,
	.compute = sort_compute,
	.shutdown = sort_flush,
	.process_blip = sort_blip,
	.checkpoint = sort_checkpoint,
	.restore = sort_restore,
};

/* ---- join -------------------------------------------------------------- */

/*
 * struct joiner - an equi-join of input 0 (left) with input 1 (right)
 * @key:	key of each side, compared as bytes
 * @side:	the stored elements of each side
 * @outer:	left join: a left element without a match goes out alone
 * @out_sep:	put between the left and the right element
 */
struct joiner {
	struct comp_key		key[2];
	struct comp_store	side[2];
	bool			outer;
	char			*out_sep;
	struct comp_buf		buf;
};

static void join_fini(struct dfg_comp *c)
{
	struct joiner *j = dfg_comp_state(c);
	int i;

	for (i = 0; i < 2; i++) {
		comp_key_fini(&j->key[i]);
		comp_store_fini(&j->side[i]);
	}
	free(j->out_sep);
	free(j->buf.p);
	free(j);
}

static int join_init(struct dfg_comp *c, void **state)
{
	const char *type = dfg_comp_param(c, "type", "inner");
	const char *key = dfg_comp_param(c, "key", "$1");
	struct joiner *j = calloc(1, sizeof(*j));
	int ret;

	if (!j)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	*state = j;
	j->outer = !strcmp(type, "left");
	j->out_sep = strdup(dfg_comp_param(c, "out_sep", "\t"));
	if (!j->out_sep)
		ret = dfg_comp_error(c, -ENOMEM, "out of memory");
	else if (strcmp(type, "inner") && strcmp(type, "left"))
		ret = dfg_comp_error(c, -EINVAL,
				     "parameter type: '%s' is not inner or left",
				     type);
	else
		ret = comp_key_init(c, &j->key[0], "left_key", key);
	if (!ret)
		ret = comp_key_init(c, &j->key[1], "right_key", key);
	if (ret)
		join_fini(c);
	return ret;
}

static int join_compute(struct dfg_comp *c, unsigned int port,
			const struct dfg_elem *e)
{
	struct joiner *j = dfg_comp_state(c);
	struct dfg_expr_val v;
	int ret;

	ret = comp_key_eval(c, &j->key[port], e, &v);
	if (ret)
		return ret;
	if (!comp_store_add(&j->side[port], e->data, e->len, &v))
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	return 0;
}

struct probe {
	const struct comp_store	*store;
	const char		*key;
	size_t			len;
};

static bool probe_eq(void *ctx, size_t idx)
{
	const struct probe *p = ctx;
	const struct comp_rec *r = &p->store->recs[idx];

	return r->sklen == p->len && !memcmp(r->skey, p->key, p->len);
}

static int join_emit(struct dfg_comp *c, struct joiner *j,
		     const struct comp_rec *l, const struct comp_rec *r)
{
	int ret;

	j->buf.len = 0;
	ret = comp_buf_add(c, &j->buf, l->data, l->len);
	if (!ret && r)
		ret = comp_buf_add(c, &j->buf, j->out_sep, strlen(j->out_sep));
	if (!ret && r)
		ret = comp_buf_add(c, &j->buf, r->data, r->len);
	if (ret)
		return ret;
	return dfg_emit(c, 0, &(struct dfg_elem){ j->buf.p, j->buf.len, 0 });
}

/*
 * Hash join: the right side is indexed by key (one table entry per
 * distinct key, @next chaining equal keys in arrival order), then every
 * left element, in arrival order, meets its matches in arrival order.
 */
static int join_shutdown(struct dfg_comp *c)
{
	struct joiner *j = dfg_comp_state(c);
	const struct comp_store *rs = &j->side[1], *ls = &j->side[0];
	struct comp_table t = { 0 };
	size_t i, *next = NULL, *last = NULL;
	long m;
	int ret = 0;

	if (rs->nr) {
		next = malloc(rs->nr * sizeof(*next));
		last = malloc(rs->nr * sizeof(*last));
		if (!next || !last)
			ret = dfg_comp_error(c, -ENOMEM, "out of memory");
	}
	for (i = 0; !ret && i < rs->nr; i++) {
		const struct comp_rec *r = &rs->recs[i];
		struct probe p = { rs, r->skey, r->sklen };
		__u64 h = comp_hash(r->skey, r->sklen);

		next[i] = SIZE_MAX;
		m = comp_table_find(&t, h, probe_eq, &p);
		if (m < 0) {
			last[i] = i;	/* i heads its chain */
			if (comp_table_add(&t, h, i))
				ret = dfg_comp_error(c, -ENOMEM,
						     "out of memory");
		} else {
			next[last[m]] = i;
			last[m] = i;
		}
	}
	for (i = 0; !ret && i < ls->nr; i++) {
		const struct comp_rec *l = &ls->recs[i];
		struct probe p = { rs, l->skey, l->sklen };
		size_t k;

		m = comp_table_find(&t, comp_hash(l->skey, l->sklen), probe_eq,
				    &p);
		if (m < 0 && j->outer)
			ret = join_emit(c, j, l, NULL);
		for (k = m; m >= 0 && !ret && k != SIZE_MAX; k = next[k])
			ret = join_emit(c, j, l, &rs->recs[k]);
	}
	comp_table_fini(&t);
	free(next);
	free(last);
	return ret;
}

static int join_checkpoint(struct dfg_comp *c, struct dfg_ckpt *w)
{
	struct joiner *j = dfg_comp_state(c);
	int ret = comp_store_save(&j->side[0], w);

	return ret ? ret : comp_store_save(&j->side[1], w);
}

static int join_restore(struct dfg_comp *c, struct dfg_ckpt *r)
{
	struct joiner *j = dfg_comp_state(c);
	int ret = comp_store_load(&j->side[0], r);

	return ret ? ret : comp_store_load(&j->side[1], r);
}

const struct dfg_comp_type comp_join = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "join",
	.summary = "join input 0 with input 1 on equal keys, at EOF",
	.flags = DFG_COMP_FOLDABLE | DFG_COMP_PULL,
	.min_in = 2, .max_in = 2,
	.min_out = 1, .max_out = 1,
	.param_decls = join_decls,
	.init = join_init,
	.fini = join_fini,
	.compute = join_compute,
	.shutdown = join_shutdown,
	.checkpoint = join_checkpoint,
	.restore = join_restore,
};

/* ---- aggregate, count -------------------------------------------------- */

enum agg_op { AGG_COUNT, AGG_SUM, AGG_MIN, AGG_MAX };

/*
 * struct aggregator - one value per distinct key, in first-seen order
 * @key:	the grouping key (compared as bytes)
 * @value:	expression aggregated (not for count)
 * @groups:	one record per key; its ikey holds the running value
 * @index:	key -> group
 */
struct aggregator {
	enum agg_op		op;
	struct comp_key		key;
	struct dfg_expr		*value;
	struct comp_store	groups;
	struct comp_table	index;
	char			*out_sep;
	struct comp_buf		buf;
};

static void agg_fini(struct dfg_comp *c)
{
	struct aggregator *a = dfg_comp_state(c);

	comp_key_fini(&a->key);
	dfg_expr_free(a->value);
	comp_store_fini(&a->groups);
	comp_table_fini(&a->index);
	free(a->out_sep);
	free(a->buf.p);
	free(a);
}

static int agg_init(struct dfg_comp *c, void **state)
{
	static const char *const ops[] = {
		[AGG_COUNT] = "count", [AGG_SUM] = "sum",
		[AGG_MIN] = "min", [AGG_MAX] = "max",
	};
	const char *op = dfg_comp_param(c, "op", "count");
	struct aggregator *a = calloc(1, sizeof(*a));
	int ret = 0;

	if (!a)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	*state = a;
	for (a->op = AGG_COUNT; a->op <= AGG_MAX; a->op++)
		if (!strcmp(op, ops[a->op]))
			break;
	if (a->op > AGG_MAX)
		ret = dfg_comp_error(c, -EINVAL,
				     "parameter op: '%s' is not count, sum, min or max",
				     op);
	if (!ret)
		ret = comp_key_init(c, &a->key, "key", "$0");
	if (!ret && a->op != AGG_COUNT)
		ret = comp_expr(c, "value", NULL, &a->value);
	if (!ret && !(a->out_sep = strdup(dfg_comp_param(c, "out_sep", "\t"))))
		ret = dfg_comp_error(c, -ENOMEM, "out of memory");
	if (ret)
		agg_fini(c);
	return ret;
}

/* The value expression on the element the key was just evaluated on. */
static int agg_value(struct dfg_comp *c, struct aggregator *a, long long *x)
{
	struct dfg_expr_val v;
	char msg[160];
	int ret;

	ret = dfg_expr_eval(a->value, &a->key.env, &v, msg, sizeof(msg));
	if (ret)
		return dfg_comp_error(c, ret, "element %lld: value: %s",
				      a->key.env.nr, msg);
	ret = dfg_expr_to_int(&v, x);
	if (ret)
		return dfg_comp_error(c, ret,
				      "element %lld: value '%.*s' is not an integer",
				      a->key.env.nr, (int)(v.len > 40 ? 40 : v.len),
				      v.s);
	return 0;
}

static int agg_compute(struct dfg_comp *c, unsigned int port,
		       const struct dfg_elem *e)
{
	struct aggregator *a = dfg_comp_state(c);
	struct dfg_expr_val k;
	struct comp_rec *g;
	long long x = 1;
	struct probe p;
	long m;
	__u64 h;
	int ret;

	(void)port;
	ret = comp_key_eval(c, &a->key, e, &k);
	if (!ret && a->value)
		ret = agg_value(c, a, &x);
	if (ret)
		return ret;
	p = (struct probe){ &a->groups, k.s, k.len };
	h = comp_hash(k.s, k.len);
	m = comp_table_find(&a->index, h, probe_eq, &p);
	if (m < 0) {
		/* the group record holds only its key */
		g = comp_store_add(&a->groups, k.s, k.len, &k);
		if (!g || comp_table_add(&a->index, h, a->groups.nr - 1))
			return dfg_comp_error(c, -ENOMEM, "out of memory");
		g->ikey = x;	/* count: x is 1 */
		return 0;
	}
	g = &a->groups.recs[m];
	switch (a->op) {
	case AGG_COUNT:
		g->ikey++;
		break;
	case AGG_SUM:
		if (__builtin_add_overflow(g->ikey, x, &g->ikey))
			return dfg_comp_error(c, -ERANGE,
					      "sum for key '%.*s' overflows",
					      (int)(k.len > 40 ? 40 : k.len),
					      k.s);
		break;
	case AGG_MIN:
		if (x < g->ikey)
			g->ikey = x;
		break;
	case AGG_MAX:
		if (x > g->ikey)
			g->ikey = x;
		break;
	}
	return 0;
}

/* Emits "key<out_sep>value" per group, then forgets the groups. */
static int agg_flush(struct dfg_comp *c)
{
	struct aggregator *a = dfg_comp_state(c);
	size_t i;
	int ret = 0;

	for (i = 0; !ret && i < a->groups.nr; i++) {
		const struct comp_rec *g = &a->groups.recs[i];
		char num[24];
		int n = snprintf(num, sizeof(num), "%lld", g->ikey);

		a->buf.len = 0;
		ret = comp_buf_add(c, &a->buf, g->data, g->len);
		if (!ret)
			ret = comp_buf_add(c, &a->buf, a->out_sep,
					   strlen(a->out_sep));
		if (!ret)
			ret = comp_buf_add(c, &a->buf, num, n);
		if (!ret)
			ret = dfg_emit(c, 0, &(struct dfg_elem){
					       a->buf.p, a->buf.len, 0 });
	}
	comp_store_clear(&a->groups);
	comp_table_fini(&a->index);
	return ret;
}

static int agg_blip(struct dfg_comp *c, const struct dfg_blip *b)
{
	return b->kind == DFG_BLIP_USER ? agg_flush(c) : 0;
}

static int agg_checkpoint(struct dfg_comp *c, struct dfg_ckpt *w)
{
	struct aggregator *a = dfg_comp_state(c);

	return comp_store_save(&a->groups, w);
}

static int agg_restore(struct dfg_comp *c, struct dfg_ckpt *r)
{
	struct aggregator *a = dfg_comp_state(c);
	size_t i;
	int ret;

	ret = comp_store_load(&a->groups, r);
	for (i = 0; !ret && i < a->groups.nr; i++) {
		const struct comp_rec *g = &a->groups.recs[i];

		if (comp_table_add(&a->index, comp_hash(g->skey, g->sklen), i))
			ret = dfg_comp_error(c, -ENOMEM, "out of memory");
	}
	return ret;
}

const struct dfg_comp_type comp_aggregate = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "aggregate",
	.summary = "count, sum, min or max of value per key, at EOF",
	.flags = DFG_COMP_FOLDABLE | DFG_COMP_PULL,
	.min_in = 1, .max_in = 1,
	.min_out = 1, .max_out = 1,
	.param_decls = agg_decls,
	.init = agg_init,
	.fini = agg_fini,
	.compute = agg_compute,
	.shutdown = agg_flush,
	.process_blip = agg_blip,
	.checkpoint = agg_checkpoint,
	.restore = agg_restore,
};

const struct dfg_comp_type comp_count = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "count",
	.summary = "number of elements per key, at EOF",
	.flags = DFG_COMP_FOLDABLE | DFG_COMP_PULL,
	.min_in = 1, .max_in = 1,
	.min_out = 1, .max_out = 1,
	.param_decls = count_decls,
	.init = agg_init,
	.fini = agg_fini,
	.compute = agg_compute,
	.shutdown = agg_flush,
	.process_blip = agg_blip,
	.checkpoint = agg_checkpoint,
	.restore = agg_restore,
};
