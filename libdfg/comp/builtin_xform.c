// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * Built-in element-at-a-time components: filter, map, split_words,
 * partition, gather, and merge (which holds elements only until every
 * input has one to compare).
 *
 * Components that pass an element on unchanged (filter, gather,
 * partition, split_words without lower) emit pointers into the element
 * they were given, so inside a folded set nothing is copied.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comp_impl.h"
#include "param.h"

/* Parameters (dfg_component(7)); the defaults are the ones init() applies. */
static const struct dfg_param_decl xform_decls[] = {
	{ .name = "expr", .kind = DFG_PARAM_EXPR, .flags = DFG_PARAM_REQUIRED,
	  .help = "filter: the condition; map: the new element" },
	COMP_DECL_SEP("field separator, blanks by default"),
	{ NULL },
};

static const char *const words_chars[] = { "alpha", "alnum", "nonblank", NULL };

static const struct dfg_param_decl words_decls[] = {
	{ .name = "chars", .kind = DFG_PARAM_ENUM, .choices = words_chars,
	  .def = "alpha", .help = "what a word is made of" },
	{ .name = "lower", .kind = DFG_PARAM_UINT, .min = 0, .max = 1,
	  .def = "0", .help = "1: lower-case the words" },
	{ NULL },
};

static const struct dfg_param_decl partition_decls[] = {
	COMP_DECL_KEY("key", "$0", "what to hash"),
	COMP_DECL_SEP("field separator, blanks by default"),
	{ NULL },
};

static const struct dfg_param_decl gather_decls[] = { { NULL } };

static const struct dfg_param_decl merge_decls[] = {
	COMP_DECL_KEY("key", "$0", "the order of the inputs"),
	COMP_DECL_SEP("field separator, blanks by default"),
	COMP_DECL_NUMERIC,
	COMP_DECL_ORDER,
	{ NULL },
};

/* ---- filter, map ------------------------------------------------------- */

/*
 * An expression over the element, fields split by "sep".
 * @shape, @k:	what it is known to give without evaluating it per
 *		element (dfg_expr_shape()): the element itself, or the
 *		constant @k; a map of $0 and a filter of a constant then do
 *		no work of their own but the emit
 * @out:	a map's last element (its bytes in @env), valid until the
 *		next one
 * @outs, @nr_outs, @bytes: a map's step: the elements it made for its
 *		last batch, and the bytes of those that are not in their
 *		input element, valid until its next batch
 * @at:		per element of @outs, where its bytes are in @bytes while
 *		the batch is made (SIZE_MAX: in its input element)
 */
struct xform {
	struct dfg_expr		*expr;
	struct dfg_expr_env	env;
	enum dfg_expr_shape	shape;
	struct dfg_expr_val	k;
	struct dfg_elem		out;
	struct dfg_elem		*outs;
	unsigned int		nr_outs;
	size_t			*at;
	struct comp_buf		bytes;
};

static void xform_fini(struct dfg_comp *c)
{
	struct xform *x = dfg_comp_state(c);

	dfg_expr_free(x->expr);
	dfg_expr_env_fini(&x->env);
	free(x->outs);
	free(x->at);
	free(x->bytes.p);
	free(x);
}

static int xform_init(struct dfg_comp *c, void **state)
{
	struct xform *x;
	int ret, sep;

	ret = comp_sep(c, "sep", &sep);
	if (ret)
		return ret;
	x = calloc(1, sizeof(*x));
	if (!x)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	dfg_expr_env_init(&x->env, sep);
	*state = x;
	ret = comp_expr(c, "expr", NULL, &x->expr);
	if (ret)
		xform_fini(c);
	else
		x->shape = dfg_expr_shape(x->expr, &x->k);
	return ret;
}

static inline int xform_eval(struct dfg_comp *c, struct xform *x,
		      const struct dfg_elem *e, struct dfg_expr_val *v)
{
	char msg[160];
	int ret;

	dfg_expr_env_set(&x->env, e->data, e->len);
	ret = dfg_expr_eval(x->expr, &x->env, v, msg, sizeof(msg));
	if (ret)
		return dfg_comp_error(c, ret, "element %lld: %s", x->env.nr,
				      msg);
	return 0;
}

/*
 * The evaluating halves of filter and map, out of line: a filter of a
 * constant and a map of $0 then cost their caller no frame of this size.
 */
static __attribute__((noinline)) int filter_eval(struct dfg_comp *c,
						 struct xform *x,
						 const struct dfg_elem *e)
{
	struct dfg_expr_val v;
	int ret;

	ret = xform_eval(c, x, e, &v);
	if (ret)
		return ret;
	return dfg_expr_truth(&v);
}

/* Does @e pass? 1 or 0, or a negative errno. */
static inline int filter_pass(struct dfg_comp *c, struct xform *x,
			      const struct dfg_elem *e)
{
	if (x->shape == DFG_EXPR_CONST)
		return dfg_expr_truth(&x->k);
	return filter_eval(c, x, e);
}

static int filter_compute(struct dfg_comp *c, unsigned int port,
			  const struct dfg_elem *e)
{
	int pass = filter_pass(c, c->state, e);

	(void)port;
	if (pass < 0)
		return pass;
	if (pass)
		return __dfg_emit(c, 0, e);
	if (dfg_comp_nr_out(c) > 1)	/* the rejects, if connected */
		return __dfg_emit(c, 1, e);
	return 0;
}

/* A step's failure @ret (< 0) at an element, after @k went on. */
static __attribute__((noinline)) unsigned int
step_failed(struct dfg_comp *c, int ret, unsigned int k)
{
	c->step_err = __dfg_comp_failed(c, ret);
	return k;
}

/* A filter without rejects: the elements that pass, in order. */
static unsigned int filter_step(struct dfg_comp *c, const struct dfg_elem **v,
				unsigned int n)
{
	struct xform *x = c->state;
	__u64 dropped = 0;
	unsigned int i, k = 0;
	int pass;

	for (i = 0; i < n; i++) {
		pass = filter_eval(c, x, v[i]);
		if (__builtin_expect(pass < 0, 0)) {
			k = step_failed(c, pass, k);
			break;
		}
		if (pass)
			v[k++] = v[i];
		else
			dropped += v[i]->len;
	}
	c->step_grew -= dropped;
	return k;
}

/*
 * The steps of an instance whose expression is known once compiled
 * (comp_batch_ready()): a map of $0 and a filter of a true constant hand
 * the batch on as it is, with no work per element; a filter of a false
 * constant passes nothing.
 */
static unsigned int step_same(struct dfg_comp *c, const struct dfg_elem **v,
			      unsigned int n)
{
	(void)c;
	(void)v;
	return n;
}

static unsigned int step_none(struct dfg_comp *c, const struct dfg_elem **v,
			      unsigned int n)
{
	__u64 dropped = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		dropped += v[i]->len;
	c->step_grew -= dropped;
	return 0;
}

/* The value of a map's expression for @e into x->out; 0 or -errno. */
static __attribute__((noinline)) int map_eval(struct dfg_comp *c,
					      struct xform *x,
					      const struct dfg_elem *e)
{
	struct dfg_expr_val v;
	int ret;

	ret = xform_eval(c, x, e, &v);
	if (!ret && v.is_int && dfg_expr_to_str(&x->env, &v))
		ret = dfg_comp_error(c, -ENOMEM, "out of memory");
	if (ret)
		return ret;
	x->out.data = v.s;
	x->out.len = v.len;
	x->out.tag = e->tag;
	return 0;
}

static __attribute__((noinline)) int map_eval_emit(struct dfg_comp *c,
						   struct xform *x,
						   const struct dfg_elem *e)
{
	int ret = map_eval(c, x, e);

	return ret ? ret : __dfg_emit(c, 0, &x->out);
}

static int map_compute(struct dfg_comp *c, unsigned int port,
		       const struct dfg_elem *e)
{
	struct xform *x = c->state;

	(void)port;
	if (x->shape == DFG_EXPR_LINE)
		return __dfg_emit(c, 0, e);	/* the same pointer, length, tag */
	return map_eval_emit(c, x, e);
}

/* Room in x->outs and x->at for a batch of @n; 0 or -ENOMEM. */
static int map_room(struct dfg_comp *c, struct xform *x, unsigned int n)
{
	struct dfg_elem *o;
	size_t *at;

	if (n <= x->nr_outs)
		return 0;
	o = realloc(x->outs, n * sizeof(*o));
	if (o)
		x->outs = o;
	at = o ? realloc(x->at, n * sizeof(*at)) : NULL;
	if (!at)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	x->at = at;
	x->nr_outs = n;
	return 0;
}

/*
 * A map whose expression is evaluated: its values, new elements. A value
 * within its input element (a field) points there; any other is copied
 * into x->bytes, since the evaluator's scratch holds only the last one,
 * and pointed at once the batch is done and x->bytes no longer moves.
 */
static unsigned int map_step(struct dfg_comp *c, const struct dfg_elem **v,
			     unsigned int n)
{
	struct xform *x = c->state;
	unsigned int i, k;
	__u64 grew = 0;
	int ret;

	ret = map_room(c, x, n);
	if (ret)
		return step_failed(c, ret, 0);
	x->bytes.len = 0;
	for (i = 0; i < n; i++) {
		const struct dfg_elem *e = v[i];
		const char *d = e->data, *p;
		struct dfg_elem *o = &x->outs[i];

		ret = map_eval(c, x, e);
		if (__builtin_expect(ret < 0, 0))
			break;
		*o = x->out;
		p = o->data;
		x->at[i] = SIZE_MAX;
		if (o->len && (p < d || p + o->len > d + e->len)) {
			x->at[i] = x->bytes.len;
			ret = comp_buf_add(c, &x->bytes, p, o->len);
			if (ret)
				break;
		}
		grew += o->len - e->len;
	}
	for (k = 0; k < i; k++) {
		if (x->at[k] != SIZE_MAX)
			x->outs[k].data = x->bytes.p + x->at[k];
		v[k] = &x->outs[k];
	}
	c->step_grew += grew;
	return ret ? step_failed(c, ret, i) : n;
}

const struct dfg_comp_type comp_filter = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "filter",
	.summary = "pass elements where expr is true (rejects to output 1)",
	.flags = DFG_COMP_FOLDABLE,
	.min_in = 1, .max_in = 1,
	.min_out = 1, .max_out = 2,
	.param_decls = xform_decls,
	.init = xform_init,
	.fini = xform_fini,
	.compute = filter_compute,
};

const struct dfg_comp_type comp_map = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "map",
	.summary = "replace each element by the value of expr",
	.flags = DFG_COMP_FOLDABLE,
	.min_in = 1, .max_in = 1,
	.min_out = 1, .max_out = 1,
	.param_decls = xform_decls,
	.init = xform_init,
	.fini = xform_fini,
	.compute = map_compute,
};

comp_batch_fn comp_batch_of(const struct dfg_comp_type *t,
			    unsigned int nr_out)
{
	if (t == &comp_map)
		return map_step;
	if (t == &comp_filter && nr_out == 1)
		return filter_step;
	return NULL;
}

comp_batch_fn comp_batch_ready(struct dfg_comp *c)
{
	struct xform *x = c->state;

	if (c->step == map_step && x->shape == DFG_EXPR_LINE)
		return step_same;
	if (c->step == filter_step && x->shape == DFG_EXPR_CONST)
		return dfg_expr_truth(&x->k) ? step_same : step_none;
	return c->step;
}
/* ---- split_words ------------------------------------------------------- */

enum word_chars { WORD_ALPHA, WORD_ALNUM, WORD_NONBLANK };

/*
 * struct words - how split_words cuts
 * @chars:	what a word is made of (ASCII letters, letters and digits,
 *		anything but blanks)
 * @lower:	emit words in lower case (then copied into @buf)
 */
struct words {
	enum word_chars	chars;
	bool		lower;
	struct comp_buf	buf;
};

static void words_fini(struct dfg_comp *c)
{
	struct words *w = dfg_comp_state(c);

	free(w->buf.p);
	free(w);
}

static int words_init(struct dfg_comp *c, void **state)
{
	const char *chars = dfg_comp_param(c, "chars", "alpha");
	struct words *w;
	long long lower;
	int ret;

	ret = dfg_comp_param_long(c, "lower", 0, 0, 1, &lower);
	if (ret)
		return ret;
	w = calloc(1, sizeof(*w));
	if (!w)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	w->lower = lower;
	if (!strcmp(chars, "alpha"))
		w->chars = WORD_ALPHA;
	else if (!strcmp(chars, "alnum"))
		w->chars = WORD_ALNUM;
	else if (!strcmp(chars, "nonblank"))
		w->chars = WORD_NONBLANK;
	else {
		free(w);
		return dfg_comp_error(c, -EINVAL,
				      "parameter chars: '%s' is not alpha, alnum or nonblank",
				      chars);
	}
	*state = w;
	return 0;
}

/* ASCII classes only: the result must not depend on the locale. */
static bool word_char(enum word_chars k, unsigned char ch)
{
	bool alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');

	switch (k) {
	case WORD_ALPHA:
		return alpha;
	case WORD_ALNUM:
		return alpha || (ch >= '0' && ch <= '9');
	default:
		return !isspace(ch);
	}
}

static int words_compute(struct dfg_comp *c, unsigned int port,
			 const struct dfg_elem *e)
{
	struct words *w = dfg_comp_state(c);
	const unsigned char *s = e->data;
	size_t i = 0, start, k;
	int ret;

	(void)port;
	while (i < e->len) {
		struct dfg_elem out = { .tag = e->tag };

		while (i < e->len && !word_char(w->chars, s[i]))
			i++;
		if (i == e->len)
			break;
		start = i;
		while (i < e->len && word_char(w->chars, s[i]))
			i++;
		out.data = s + start;
		out.len = i - start;
		if (w->lower) {
			w->buf.len = 0;
			ret = comp_buf_add(c, &w->buf, out.data, out.len);
			if (ret)
				return ret;
			for (k = 0; k < out.len; k++)
				w->buf.p[k] = tolower((unsigned char)w->buf.p[k]);
			out.data = w->buf.p;
		}
		ret = __dfg_emit(c, 0, &out);
		if (ret)
			return ret;
	}
	return 0;
}

const struct dfg_comp_type comp_split_words = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "split_words",
	.summary = "emit each word of each element",
	.flags = DFG_COMP_FOLDABLE,
	.min_in = 1, .max_in = 1,
	.min_out = 1, .max_out = 1,
	.param_decls = words_decls,
	.init = words_init,
	.fini = words_fini,
	.compute = words_compute,
};

/* ---- partition --------------------------------------------------------- */

static void keyed_fini(struct dfg_comp *c)
{
	struct comp_key *k = dfg_comp_state(c);

	comp_key_fini(k);
	free(k);
}

static int keyed_init(struct dfg_comp *c, void **state)
{
	struct comp_key *k = calloc(1, sizeof(*k));
	int ret;

	if (!k)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	ret = comp_key_init(c, k, "key", "$0");
	if (ret) {
		comp_key_fini(k);
		free(k);
		return ret;
	}
	*state = k;
	return 0;
}

static int partition_compute(struct dfg_comp *c, unsigned int port,
			     const struct dfg_elem *e)
{
	struct comp_key *k = dfg_comp_state(c);
	struct dfg_elem out = *e;
	struct dfg_expr_val v;
	int ret;

	(void)port;
	ret = comp_key_eval(c, k, e, &v);
	if (ret)
		return ret;
	out.tag = comp_hash(v.s, v.len);
	return __dfg_emit(c, out.tag % dfg_comp_nr_out(c), &out);
}

const struct dfg_comp_type comp_partition = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "partition",
	.summary = "send each element to output hash(key) % outputs",
	.flags = DFG_COMP_FOLDABLE,
	.min_in = 1, .max_in = 1,
	.min_out = 1, .max_out = DFG_COMP_MAX_PORTS,
	.param_decls = partition_decls,
	.init = keyed_init,
	.fini = keyed_fini,
	.compute = partition_compute,
};

/* ---- gather ------------------------------------------------------------ */

static int gather_compute(struct dfg_comp *c, unsigned int port,
			  const struct dfg_elem *e)
{
	(void)port;
	return __dfg_emit(c, 0, e);
}

const struct dfg_comp_type comp_gather = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "gather",
	.summary = "pass the elements of every input to the output",
	.flags = DFG_COMP_FOLDABLE,
	.min_in = 1, .max_in = DFG_COMP_MAX_PORTS,
	.min_out = 1, .max_out = 1,
	.param_decls = gather_decls,
	.compute = gather_compute,
};

/* ---- merge ------------------------------------------------------------- */

/*
 * struct merger - a queue per input, each sorted by @key
 *
 * An element leaves only when every input that has not ended has one
 * queued, since the smallest of the heads is then the smallest of all
 * that can still come; ties go to the lower input.
 */
struct merger {
	struct comp_key		key;
	unsigned int		nr;
	struct comp_store	q[];
};

static void merge_fini(struct dfg_comp *c)
{
	struct merger *m = dfg_comp_state(c);
	unsigned int i;

	for (i = 0; i < m->nr; i++)
		comp_store_fini(&m->q[i]);
	comp_key_fini(&m->key);
	free(m);
}

static int merge_init(struct dfg_comp *c, void **state)
{
	unsigned int n = dfg_comp_nr_in(c);
	struct merger *m;
	int ret;

	m = calloc(1, sizeof(*m) + n * sizeof(m->q[0]));
	if (!m)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	m->nr = n;
	*state = m;
	ret = comp_key_init(c, &m->key, "key", "$0");
	if (ret)
		merge_fini(c);
	return ret;
}

/* Emits while the order is known; @all: every input has ended. */
static int merge_drain(struct dfg_comp *c, struct merger *m, bool all)
{
	for (;;) {
		struct dfg_expr_val best_key, key;
		struct comp_rec *r;
		int best = -1, ret;
		unsigned int i;

		for (i = 0; i < m->nr; i++) {
			struct comp_store *q = &m->q[i];

			if (q->head == q->nr) {
				if (!all && !c->ended[i])
					return 0;	/* it may still send */
				continue;
			}
			comp_rec_key(&q->recs[q->head], m->key.numeric, &key);
			if (best < 0 || comp_key_cmp(&m->key, &key,
						     &best_key) < 0) {
				best = i;
				best_key = key;
			}
		}
		if (best < 0)
			return 0;
		r = &m->q[best].recs[m->q[best].head++];
		ret = __dfg_emit(c, 0, &(struct dfg_elem){ r->data, r->len, 0 });
		if (m->q[best].head == m->q[best].nr)
			comp_store_clear(&m->q[best]);
		if (ret)
			return ret;
	}
}

static int merge_compute(struct dfg_comp *c, unsigned int port,
			 const struct dfg_elem *e)
{
	struct merger *m = dfg_comp_state(c);
	struct comp_store *q = &m->q[port];
	struct dfg_expr_val v, prev;
	int ret;

	ret = comp_key_eval(c, &m->key, e, &v);
	if (ret)
		return ret;
	if (q->nr) {
		comp_rec_key(&q->recs[q->nr - 1], m->key.numeric, &prev);
		if (comp_key_cmp(&m->key, &v, &prev) < 0)
			return dfg_comp_error(c, -EINVAL,
					      "input %u is not sorted (element %lld)",
					      port, m->key.env.nr);
	}
	if (!comp_store_add(q, e->data, e->len, &v))
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	return merge_drain(c, m, false);
}

static int merge_end_input(struct dfg_comp *c, unsigned int port)
{
	(void)port;
	return merge_drain(c, dfg_comp_state(c), false);
}

static int merge_shutdown(struct dfg_comp *c)
{
	return merge_drain(c, dfg_comp_state(c), true);
}

static int merge_checkpoint(struct dfg_comp *c, struct dfg_ckpt *w)
{
	struct merger *m = dfg_comp_state(c);
	unsigned int i;
	int ret = 0;

	for (i = 0; !ret && i < m->nr; i++)
		ret = comp_store_save(&m->q[i], w);
	return ret;
}

static int merge_restore(struct dfg_comp *c, struct dfg_ckpt *r)
{
	struct merger *m = dfg_comp_state(c);
	unsigned int i;
	int ret = 0;

	for (i = 0; !ret && i < m->nr; i++)
		ret = comp_store_load(&m->q[i], r);
	return ret;
}

const struct dfg_comp_type comp_merge = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "merge",
	.summary = "merge inputs sorted by key into one sorted output",
	.flags = DFG_COMP_FOLDABLE,
	.min_in = 1, .max_in = DFG_COMP_MAX_PORTS,
	.min_out = 1, .max_out = 1,
	.param_decls = merge_decls,
	.init = merge_init,
	.fini = merge_fini,
	.compute = merge_compute,
	.end_input = merge_end_input,
	.shutdown = merge_shutdown,
	.checkpoint = merge_checkpoint,
	.restore = merge_restore,
};
