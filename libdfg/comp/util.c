// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * What the built-in components share: parameters that name expressions,
 * separators and keys; a store of copied records with their keys; a
 * buffered file writer that knows its offset (checkpoints truncate back to
 * it); N-way file names.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comp_impl.h"

int comp_sep(struct dfg_comp *c, const char *param, int *sep)
{
	const char *s = dfg_comp_param(c, param, NULL);

	if (!s)
		*sep = -1;
	else if (!strcmp(s, "\\t") || !strcmp(s, "tab"))
		*sep = '\t';
	else if (!strcmp(s, "space"))
		*sep = ' ';
	else if (strlen(s) == 1)
		*sep = (unsigned char)s[0];
	else
		return dfg_comp_error(c, -EINVAL,
				      "parameter %s: '%s' is not one byte, "
				      "'tab' or 'space'", param, s);
	return 0;
}

int comp_expr(struct dfg_comp *c, const char *param, const char *def,
	      struct dfg_expr **ep)
{
	const char *src = dfg_comp_param(c, param, def);
	char msg[160];
	int ret;

	if (!src)
		return dfg_comp_error(c, -EINVAL, "parameter %s is required",
				      param);
	ret = dfg_expr_compile(src, ep, msg, sizeof(msg));
	if (ret == -ENOMEM)
		return dfg_comp_error(c, ret, "out of memory");
	if (ret)
		return dfg_comp_error(c, ret, "parameter %s: %s", param, msg);
	return 0;
}

static int param_bool(struct dfg_comp *c, const char *key, bool *out)
{
	long long v;
	int ret;

	ret = dfg_comp_param_long(c, key, 0, 0, 1, &v);
	if (!ret)
		*out = v;
	return ret;
}

int comp_key_init(struct dfg_comp *c, struct comp_key *k, const char *param,
		  const char *def)
{
	const char *order = dfg_comp_param(c, "order", "asc");
	int ret, sep;

	memset(k, 0, sizeof(*k));
	if (strcmp(order, "asc") && strcmp(order, "desc"))
		return dfg_comp_error(c, -EINVAL,
				      "parameter order: '%s' is not asc or desc",
				      order);
	k->desc = !strcmp(order, "desc");
	ret = param_bool(c, "numeric", &k->numeric);
	if (!ret)
		ret = comp_sep(c, "sep", &sep);
	if (!ret)
		ret = comp_expr(c, param, def, &k->expr);
	if (ret)
		return ret;
	dfg_expr_env_init(&k->env, sep);
	return 0;
}

void comp_key_fini(struct comp_key *k)
{
	dfg_expr_free(k->expr);
	dfg_expr_env_fini(&k->env);
	k->expr = NULL;
}

int comp_key_eval(struct dfg_comp *c, struct comp_key *k,
		  const struct dfg_elem *e, struct dfg_expr_val *v)
{
	char msg[160];
	long long i;
	int ret;

	dfg_expr_env_set(&k->env, e->data, e->len);
	ret = dfg_expr_eval(k->expr, &k->env, v, msg, sizeof(msg));
	if (ret)
		return dfg_comp_error(c, ret, "element %lld: key: %s",
				      k->env.nr, msg);
	if (!k->numeric)
		ret = dfg_expr_to_str(&k->env, v);
	else if (!(ret = dfg_expr_to_int(v, &i)))
		v->is_int = true, v->i = i;
	if (ret == -ENOMEM)
		return dfg_comp_error(c, ret, "out of memory");
	if (ret)
		return dfg_comp_error(c, ret,
				      "element %lld: numeric key '%.*s' is not an integer",
				      k->env.nr, (int)(v->len > 40 ? 40 : v->len),
				      v->s);
	return 0;
}

int comp_key_cmp(const struct comp_key *k, const struct dfg_expr_val *a,
		 const struct dfg_expr_val *b)
{
	int r;

	if (k->numeric) {
		r = a->i < b->i ? -1 : a->i > b->i;
	} else {
		size_t n = a->len < b->len ? a->len : b->len;

		r = n ? memcmp(a->s, b->s, n) : 0;
		if (!r)
			r = a->len < b->len ? -1 : a->len > b->len;
	}
	return k->desc ? -r : r;
}

/* ---- Record store ------------------------------------------------------ */

void comp_store_fini(struct comp_store *s)
{
	dfg_bump_free(&s->mem);
	free(s->recs);
	memset(s, 0, sizeof(*s));
}

static struct comp_rec *store_slot(struct comp_store *s)
{
	if (s->nr == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct comp_rec *recs = realloc(s->recs, cap * sizeof(*recs));

		if (!recs)
			return NULL;
		s->recs = recs;
		s->cap = cap;
	}
	return &s->recs[s->nr];
}

struct comp_rec *comp_store_add(struct comp_store *s, const void *data,
				size_t len, const struct dfg_expr_val *v)
{
	struct comp_rec *r = store_slot(s);
	const char *d = data;
	char *copy;

	if (!r)
		return NULL;
	copy = dfg_bump_alloc(&s->mem, len ? len : 1);
	if (!copy)
		return NULL;
	if (len)
		memcpy(copy, data, len);
	memset(r, 0, sizeof(*r));
	r->data = copy;
	r->len = len;
	if (v->is_int) {
		r->ikey = v->i;
	} else if (v->s >= d && v->s + v->len <= d + len) {
		r->skey = copy + (v->s - d);	/* a part of the record */
		r->sklen = v->len;
	} else {
		char *k = dfg_bump_alloc(&s->mem, v->len ? v->len : 1);

		if (!k)
			return NULL;
		if (v->len)
			memcpy(k, v->s, v->len);
		r->skey = k;
		r->sklen = v->len;
	}
	s->nr++;
	return r;
}

void comp_store_clear(struct comp_store *s)
{
	dfg_bump_reset(&s->mem);
	s->head = s->nr = 0;
}

void comp_rec_key(const struct comp_rec *r, bool numeric,
		  struct dfg_expr_val *v)
{
	v->is_int = numeric;
	v->i = r->ikey;
	v->s = r->skey;
	v->len = r->sklen;
}

int comp_rec_save(const struct comp_rec *r, struct dfg_ckpt *w)
{
	return dfg_ckpt_put_bytes(w, r->data, r->len) ?:
	       dfg_ckpt_put_u64(w, r->ikey) ?:
	       dfg_ckpt_put_bytes(w, r->skey, r->sklen);
}

int comp_rec_load(struct dfg_ckpt *rd, struct comp_rec *r)
{
	const void *d, *k;
	__u64 ikey;
	int ret;

	ret = dfg_ckpt_get_bytes(rd, &d, &r->len) ?:
	      dfg_ckpt_get_u64(rd, &ikey) ?:
	      dfg_ckpt_get_bytes(rd, &k, &r->sklen);
	r->data = d;
	r->skey = k;
	r->ikey = (long long)ikey;
	return ret;
}

int comp_store_save(struct comp_store *s, struct dfg_ckpt *w)
{
	size_t i;
	int ret;

	ret = dfg_ckpt_put_u64(w, s->nr - s->head);
	for (i = s->head; !ret && i < s->nr; i++)
		ret = comp_rec_save(&s->recs[i], w);
	return ret;
}

int comp_store_load(struct comp_store *s, struct dfg_ckpt *r)
{
	struct dfg_expr_val v = { 0 };
	struct comp_rec rec;
	__u64 nr, i;
	int ret;

	ret = dfg_ckpt_get_u64(r, &nr);
	for (i = 0; !ret && i < nr; i++) {
		ret = comp_rec_load(r, &rec);
		if (ret)
			break;
		v.s = rec.skey;
		v.len = rec.sklen;
		if (!comp_store_add(s, rec.data, rec.len, &v))
			return -ENOMEM;
		s->recs[s->nr - 1].ikey = rec.ikey;
	}
	return ret;
}

/* ---- Hash table ------------------------------------------------------- */

__u64 comp_hash(const void *p, size_t len)
{
	const unsigned char *b = p;
	__u64 h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

void comp_table_fini(struct comp_table *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

long comp_table_find(const struct comp_table *t, __u64 h,
		     bool (*eq)(void *ctx, size_t idx), void *ctx)
{
	size_t i;

	if (!t->cap)
		return -1;
	for (i = h & (t->cap - 1); t->slots[i].idx1; i = (i + 1) & (t->cap - 1))
		if (t->slots[i].hash == h && eq(ctx, t->slots[i].idx1 - 1))
			return t->slots[i].idx1 - 1;
	return -1;
}

static void table_put(struct comp_slot *slots, size_t cap, __u64 h,
		      size_t idx1)
{
	size_t i = h & (cap - 1);

	while (slots[i].idx1)
		i = (i + 1) & (cap - 1);
	slots[i].hash = h;
	slots[i].idx1 = idx1;
}

int comp_table_add(struct comp_table *t, __u64 h, size_t idx)
{
	/* at most half full, so probes stay short and always end */
	if (2 * (t->nr + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64, i;
		struct comp_slot *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (i = 0; i < t->cap; i++)
			if (t->slots[i].idx1)
				table_put(slots, cap, t->slots[i].hash,
					  t->slots[i].idx1);
		free(t->slots);
		t->slots = slots;
		t->cap = cap;
	}
	table_put(t->slots, t->cap, h, idx + 1);
	t->nr++;
	return 0;
}

int comp_buf_add(struct dfg_comp *c, struct comp_buf *b, const void *p,
		 size_t len)
{
	if (len > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 256;
		char *n;

		while (cap - b->len < len)
			cap *= 2;
		n = realloc(b->p, cap);
		if (!n)
			return dfg_comp_error(c, -ENOMEM, "out of memory");
		b->p = n;
		b->cap = cap;
	}
	if (len)
		memcpy(b->p + b->len, p, len);
	b->len += len;
	return 0;
}

/* ---- Buffered output --------------------------------------------------- */

#define OUT_BUF		(64 * 1024)

int comp_out_open(struct dfg_comp *c, struct comp_out *o, const char *path)
{
	struct stat st;
	int saved = errno;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->buf = malloc(OUT_BUF);
	if (!o->buf)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	o->size = OUT_BUF;
	if (!strcmp(path, "-")) {
		o->fd = dup(STDOUT_FILENO);
		o->stream = true;
	} else {
		/* not truncated here: a restore first says how much to keep */
		o->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	}
	if (o->fd < 0 || fstat(o->fd, &st)) {
		int ret = -errno;

		errno = saved;
		comp_out_close(o);
		return dfg_comp_error(c, ret, "%s: %s", path, strerror(-ret));
	}
	if (!S_ISREG(st.st_mode))
		o->stream = true;
	return 0;
}

int comp_out_flush(struct dfg_comp *c, struct comp_out *o)
{
	size_t done = 0;
	ssize_t n;

	if (!o->started && !o->stream && ftruncate(o->fd, o->off))
		return dfg_comp_error(c, -errno, "truncate: %s",
				      strerror(errno));
	o->started = true;
	while (done < o->used) {
		if (o->stream)
			n = write(o->fd, o->buf + done, o->used - done);
		else
			n = pwrite(o->fd, o->buf + done, o->used - done,
				   o->off + done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return dfg_comp_error(c, -errno, "write: %s",
					      strerror(errno));
		done += n;
	}
	o->off += o->used;
	o->used = 0;
	return 0;
}

int comp_out_write(struct dfg_comp *c, struct comp_out *o, const void *p,
		   size_t len)
{
	const char *s = p;
	int ret;

	while (len) {
		size_t n = o->size - o->used;

		if (!n) {
			ret = comp_out_flush(c, o);
			if (ret)
				return ret;
			continue;
		}
		if (n > len)
			n = len;
		memcpy(o->buf + o->used, s, n);
		o->used += n;
		s += n;
		len -= n;
	}
	return 0;
}

void comp_out_close(struct comp_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	free(o->buf);
	o->fd = -1;
	o->buf = NULL;
}

int comp_path(struct dfg_comp *c, const char *param, char **pathp)
{
	const char *s = dfg_comp_param(c, param, NULL), *p;
	char num[16];
	size_t len = 0, nl;
	char *out;

	if (!s || !*s)
		return dfg_comp_error(c, -EINVAL, "parameter %s is required",
				      param);
	nl = snprintf(num, sizeof(num), "%u", dfg_comp_instance(c));
	for (p = s; *p; p++)
		len += (p[0] == '{' && p[1] == '}') ? (p++, nl) : 1;
	out = malloc(len + 1);
	if (!out)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	*pathp = out;
	for (p = s; *p; p++) {
		if (p[0] == '{' && p[1] == '}') {
			out = stpcpy(out, num);
			p++;
		} else {
			*out++ = *p;
		}
	}
	*out = '\0';
	return 0;
}
