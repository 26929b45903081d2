// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * Component instances: creation, the checks against the type, the calls
 * into the callbacks in the order the API allows, emit, errors,
 * parameters. Every public function keeps errno as it found it, whatever
 * the callbacks did to it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comp_impl.h"
#include "param.h"

static void put_msg(char *buf, size_t len, const char *fmt, va_list ap)
{
	if (buf && len)
		vsnprintf(buf, len, fmt, ap);
}

static int check_err(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int check_err(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	put_msg(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

/**
 * dfg_comp_check() - check an instantiation against its type
 *
 * Port counts within the type's ranges, instance below degree, parameter
 * names known to the type and distinct; with declarations, values of
 * their kind and the required ones given. Writes the reason into @err.
 * Returns 0, -EINVAL or -ENOMEM.
 */
int dfg_comp_check(const struct dfg_comp_type *t,
		   const struct dfg_comp_attr *a, char *err, size_t errlen)
{
	const struct dfg_param_decl *d;
	unsigned int i, j, degree;
	char why[192];
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!t || !a || !a->name || (a->nr_params && !a->params))
		return check_err(err, errlen, -EINVAL, "bad arguments");
	degree = a->degree ? a->degree : 1;
	if (a->nr_in < t->min_in || a->nr_in > t->max_in)
		return check_err(err, errlen, -EINVAL,
				 "%s takes %u to %u inputs, not %u", t->name,
				 t->min_in, t->max_in, a->nr_in);
	if (a->nr_out < t->min_out || a->nr_out > t->max_out)
		return check_err(err, errlen, -EINVAL,
				 "%s takes %u to %u outputs, not %u", t->name,
				 t->min_out, t->max_out, a->nr_out);
	if (a->instance >= degree)
		return check_err(err, errlen, -EINVAL,
				 "instance %u of a %u-way component",
				 a->instance, degree);
	for (i = 0; i < a->nr_params; i++) {
		const struct dfg_param *p = &a->params[i];

		if (!p->key || !p->value)
			return check_err(err, errlen, -EINVAL,
					 "parameter %u has no key or value", i);
		if (!comp_param_known(t, p->key))
			return check_err(err, errlen, -EINVAL,
					 "%s has no parameter '%s'", t->name,
					 p->key);
		for (j = 0; j < i; j++)
			if (!strcmp(a->params[j].key, p->key))
				return check_err(err, errlen, -EINVAL,
						 "parameter '%s' given twice",
						 p->key);
		d = comp_param_find(dfg_comp_param_decls(t), p->key);
		ret = d ? comp_param_check(d, p->value, why, sizeof(why)) : 0;
		if (ret)
			return check_err(err, errlen, ret, "parameter %s: %s",
					 p->key, ret == -ENOMEM ?
					 "out of memory" : why);
	}
	for (d = dfg_comp_param_decls(t); d && d->name; d++) {
		if (!(d->flags & DFG_PARAM_REQUIRED))
			continue;
		for (i = 0; i < a->nr_params; i++)
			if (!strcmp(a->params[i].key, d->name))
				break;
		if (i == a->nr_params)
			return check_err(err, errlen, -EINVAL,
					 "parameter %s is required", d->name);
	}
	return 0;
}

/* Parameters copied into one block: the array, then the strings. */
static struct dfg_param *copy_params(const struct dfg_param *src,
				     unsigned int n)
{
	size_t size = n * sizeof(*src);
	struct dfg_param *dst;
	unsigned int i;
	char *s;

	for (i = 0; i < n; i++)
		size += strlen(src[i].key) + strlen(src[i].value) + 2;
	dst = malloc(size ? size : 1);
	if (!dst)
		return NULL;
	s = (char *)(dst + n);
	for (i = 0; i < n; i++) {
		dst[i].key = s;
		s = stpcpy(s, src[i].key) + 1;
		dst[i].value = s;
		s = stpcpy(s, src[i].value) + 1;
	}
	return dst;
}

static int no_emit(struct dfg_comp *c, void *cookie, unsigned int port,
		   const struct dfg_elem *e)
{
	(void)cookie;
	(void)e;
	return dfg_comp_error(c, -ENOTCONN, "output %u is not connected",
			      port);
}

/* The step of an instance that does not take elements now. */
static unsigned int step_refused(struct dfg_comp *c,
				 const struct dfg_elem **v, unsigned int n)
{
	(void)v;
	(void)n;
	c->step_err = -EINVAL;
	return 0;
}

/*
 * c->step_now for @c's phase and input 0: the checks of a compute() call,
 * made here, when they change, instead of in each step call.
 */
static void rearm_step(struct dfg_comp *c)
{
	if (!c->step)
		return;
	c->step_now = c->phase == COMP_READY && !c->ended[0] ?
		comp_batch_ready(c) : step_refused;
}

static void set_phase(struct dfg_comp *c, enum comp_phase phase)
{
	c->phase = phase;
	rearm_step(c);
}

/**
 * dfg_comp_create() - make an instance of @t; nothing of @t runs yet
 *
 * Returns 0 and *@cp, or -EINVAL (NULL argument, NULL key or value),
 * -ENOMEM.
 */
int dfg_comp_create(const struct dfg_comp_type *t,
		    const struct dfg_comp_attr *a, struct dfg_comp **cp)
{
	int saved = errno, ret = -ENOMEM;
	struct dfg_comp *c;
	unsigned int i;

	if (!t || !a || !a->name || !cp || (a->nr_params && !a->params))
		return -EINVAL;
	for (i = 0; i < a->nr_params; i++)
		if (!a->params[i].key || !a->params[i].value)
			return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		goto out;
	c->type = t;
	c->nr_in = a->nr_in;
	c->nr_out = a->nr_out;
	c->instance = a->instance;
	c->degree = a->degree ? a->degree : 1;
	c->nr_params = a->nr_params;
	c->emit = no_emit;
	c->step = comp_batch_of(t, a->nr_out);
	c->step_now = step_refused;
	c->name = strdup(a->name);
	c->params = copy_params(a->params, a->nr_params);
	c->ended = calloc(a->nr_in ? a->nr_in : 1, sizeof(*c->ended));
	if (!c->name || !c->params || !c->ended) {
		dfg_comp_destroy(c);
		goto out;
	}
	*cp = c;
	ret = 0;
out:
	errno = saved;
	return ret;
}

/**
 * dfg_comp_set_emit() - install the executor's emit hook
 *
 * NULL restores the default, which fails with -ENOTCONN.
 */
void dfg_comp_set_emit(struct dfg_comp *c, dfg_emit_fn fn, void *cookie)
{
	c->emit = fn ? fn : no_emit;
	c->cookie = cookie;
}

/*
 * After a callback returned @ret: a failure this instance caused (not one
 * that came back through dfg_emit()) gets a message if it has none, and
 * the instance is failed.
 */
static int finish(struct dfg_comp *c, int ret, int saved_errno)
{
	if (ret < 0) {
		if (!c->errmsg[0] && ret != c->emit_err)
			snprintf(c->errmsg, sizeof(c->errmsg), "%s",
				 strerror(-ret));
		if (c->errmsg[0])
			set_phase(c, COMP_FAILED);
	}
	errno = saved_errno;
	return ret;
}

int __dfg_comp_failed(struct dfg_comp *c, int ret)
{
	return finish(c, ret, errno);
}

/**
 * dfg_comp_init() - check the instance against its type, then init()
 *
 * Returns 0, -EINVAL when called twice or the check fails, or what init()
 * returned; the message is in dfg_comp_errmsg().
 */
int dfg_comp_init(struct dfg_comp *c)
{
	struct dfg_comp_attr a = {
		.name = c->name, .nr_in = c->nr_in, .nr_out = c->nr_out,
		.instance = c->instance, .degree = c->degree,
		.params = c->params, .nr_params = c->nr_params,
	};
	int saved = errno, ret;

	if (c->phase != COMP_NEW)
		return -EINVAL;
	ret = dfg_comp_check(c->type, &a, c->errmsg, sizeof(c->errmsg));
	if (ret) {
		set_phase(c, COMP_FAILED);
		return ret;
	}
	ret = c->type->init ? c->type->init(c, &c->state) : 0;
	if (ret > 0)
		ret = -EINVAL;
	if (!ret) {
		set_phase(c, COMP_READY);
		c->inited = true;
		errno = saved;
		return 0;
	}
	c->state = NULL;
	finish(c, ret, saved);
	set_phase(c, COMP_FAILED);
	return ret;
}

/**
 * dfg_comp_compute() - hand element @e to input @port
 *
 * Returns 0, -EINVAL (not ready, bad port, the input has ended), or the
 * failure of compute() or of a component it emitted to.
 */
int dfg_comp_compute(struct dfg_comp *c, unsigned int port,
		     const struct dfg_elem *e)
{
	int *errp = &errno;	/* the thread's: looked up once per call */
	int saved = *errp, ret;

	if (c->phase != COMP_READY || port >= c->nr_in || !e ||
	    c->ended[port] || !c->type->compute)
		return -EINVAL;
	ret = c->type->compute(c, port, e);
	if (__builtin_expect(ret < 0, 0))
		return finish(c, ret, saved);
	*errp = saved;
	return ret;
}

/**
 * dfg_comp_run() - pump a root: produce at most @budget elements
 *
 * Returns an enum dfg_run_code, or -EINVAL when @c is not a ready root.
 * DFG_ERROR when the root or a component it emitted to failed; the
 * failed one has the message. After dfg_comp_shutdown() of the root, it
 * returns DFG_REACHED_EOF.
 */
int dfg_comp_run(struct dfg_comp *c, unsigned long budget)
{
	int saved = errno, ret;

	if (c->phase == COMP_DONE && !c->nr_in)
		return DFG_REACHED_EOF;
	if (c->phase != COMP_READY || c->nr_in || !c->type->run || !budget)
		return -EINVAL;
	c->has_blip = false;
	ret = c->type->run(c, budget);
	if (ret < 0) {
		finish(c, ret, saved);
		return DFG_ERROR;
	}
	errno = saved;
	if (ret > DFG_GOT_BLIP || ret == DFG_ERROR) {
		if (!c->errmsg[0])
			snprintf(c->errmsg, sizeof(c->errmsg),
				 "run returned %d without a message", ret);
		set_phase(c, COMP_FAILED);
		return DFG_ERROR;
	}
	if (ret == DFG_GOT_BLIP && !c->has_blip) {
		snprintf(c->errmsg, sizeof(c->errmsg),
			 "GOT_BLIP without dfg_comp_set_blip()");
		set_phase(c, COMP_FAILED);
		return DFG_ERROR;
	}
	return ret;
}

/**
 * dfg_comp_end_input() - input @port gets no more elements
 *
 * Returns 0, -EINVAL (not ready, bad port, ended twice), or a failure.
 */
int dfg_comp_end_input(struct dfg_comp *c, unsigned int port)
{
	int saved = errno;

	if (c->phase != COMP_READY || port >= c->nr_in || c->ended[port])
		return -EINVAL;
	c->ended[port] = true;
	rearm_step(c);
	if (!c->type->end_input)
		return 0;
	return finish(c, c->type->end_input(c, port), saved);
}

/**
 * dfg_comp_shutdown() - all inputs have ended; flush
 *
 * Returns 0, -EINVAL (not ready), or a failure.
 */
int dfg_comp_shutdown(struct dfg_comp *c)
{
	int saved = errno, ret;

	if (c->phase != COMP_READY)
		return -EINVAL;
	ret = c->type->shutdown ? c->type->shutdown(c) : 0;
	if (!ret)
		set_phase(c, COMP_DONE);
	return finish(c, ret, saved);
}

/**
 * dfg_comp_process_blip() - pass blip @b through the instance
 *
 * Returns 0, -EINVAL (not ready, NULL @b), or a failure.
 */
int dfg_comp_process_blip(struct dfg_comp *c, const struct dfg_blip *b)
{
	int saved = errno;

	if (c->phase != COMP_READY || !b)
		return -EINVAL;
	if (!c->type->process_blip)
		return 0;
	return finish(c, c->type->process_blip(c, b), saved);
}

/*
 * A component's record in a checkpoint: its type name, its instance name,
 * then the length and bytes of what checkpoint() wrote, so that restore
 * can tell a checkpoint of another graph and check the length.
 */

/**
 * dfg_comp_checkpoint() - append the instance's state to @w
 *
 * Returns 0, -EINVAL (not ready or done, NULL @w), -ENOMEM, or the
 * failure of checkpoint() (-EOPNOTSUPP for types that cannot).
 */
int dfg_comp_checkpoint(struct dfg_comp *c, struct dfg_ckpt *w)
{
	int saved = errno, ret;
	size_t at, end;

	if ((c->phase != COMP_READY && c->phase != COMP_DONE) || !w)
		return -EINVAL;
	ret = dfg_ckpt_put_bytes(w, c->type->name, strlen(c->type->name));
	if (!ret)
		ret = dfg_ckpt_put_bytes(w, c->name, strlen(c->name));
	dfg_ckpt_data(w, &at);
	if (!ret)
		ret = dfg_ckpt_put_u64(w, 0);
	if (!ret && c->type->checkpoint)
		ret = c->type->checkpoint(c, w);
	if (ret)
		return finish(c, ret, saved);
	dfg_ckpt_data(w, &end);
	ret = __dfg_ckpt_patch_u64(w, at, end - at - 8);
	errno = saved;
	return ret;
}

/**
 * dfg_comp_restore() - read back the state dfg_comp_checkpoint() saved
 *
 * Call after dfg_comp_init(), before any other call. Returns 0, -EINVAL
 * (wrong time), -EBADMSG (the record is of another type or instance, is
 * cut short, or restore() left bytes unread), or the failure of restore().
 */
int dfg_comp_restore(struct dfg_comp *c, struct dfg_ckpt *r)
{
	int saved = errno, ret;
	const void *tname, *iname;
	size_t tlen, ilen, left;
	__u64 len;

	if (c->phase != COMP_READY || !r)
		return -EINVAL;
	ret = dfg_ckpt_get_bytes(r, &tname, &tlen);
	if (!ret)
		ret = dfg_ckpt_get_bytes(r, &iname, &ilen);
	if (!ret)
		ret = dfg_ckpt_get_u64(r, &len);
	if (ret)
		return finish(c, dfg_comp_error(c, ret, "checkpoint cut short"),
			      saved);
	if (tlen != strlen(c->type->name) ||
	    memcmp(tname, c->type->name, tlen) || ilen != strlen(c->name) ||
	    memcmp(iname, c->name, ilen))
		return finish(c, dfg_comp_error(c, -EBADMSG,
				"checkpoint is of %.*s '%.*s'", (int)tlen,
				(const char *)tname, (int)ilen,
				(const char *)iname), saved);
	left = __dfg_ckpt_left(r);
	if (len > left)
		return finish(c, dfg_comp_error(c, -EBADMSG,
				"checkpoint cut short"), saved);
	ret = c->type->restore ? c->type->restore(c, r) : 0;
	if (!ret && left - __dfg_ckpt_left(r) != len)
		ret = dfg_comp_error(c, -EBADMSG,
				     "checkpoint has %llu bytes, %zu read",
				     (unsigned long long)len,
				     left - __dfg_ckpt_left(r));
	return finish(c, ret, saved);
}

/**
 * dfg_comp_destroy() - fini() if init() succeeded, then free @c
 */
void dfg_comp_destroy(struct dfg_comp *c)
{
	int saved = errno;

	if (!c)
		return;
	if (c->inited && c->type->fini)
		c->type->fini(c);
	free(c->ended);
	free(c->params);
	free(c->name);
	free(c);
	errno = saved;
}

/**
 * dfg_emit() - pass @e downstream on output @port
 *
 * Returns 0, or a negative errno: -EINVAL (bad port; the message is on
 * @c), or the failure of the receiver, to be returned as it is.
 */
int dfg_emit(struct dfg_comp *c, unsigned int port, const struct dfg_elem *e)
{
	return __dfg_emit(c, port, e);
}

/**
 * dfg_comp_error() - record why @c fails; returns @err for the caller
 *
 * The first message of a failure is kept; later ones are dropped.
 */
int dfg_comp_error(struct dfg_comp *c, int err, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (!c->errmsg[0]) {
		va_start(ap, fmt);
		put_msg(c->errmsg, sizeof(c->errmsg), fmt, ap);
		va_end(ap);
	}
	errno = saved;
	return err < 0 ? err : -EINVAL;
}

/**
 * dfg_comp_set_blip() - a root stores the blip it returns GOT_BLIP for
 *
 * Returns 0 or -EINVAL (NULL @b, unknown kind).
 */
int dfg_comp_set_blip(struct dfg_comp *c, const struct dfg_blip *b)
{
	if (!b || (b->kind != DFG_BLIP_CHECKPOINT && b->kind != DFG_BLIP_USER))
		return -EINVAL;
	c->blip = *b;
	c->blip.pad = 0;
	c->has_blip = true;
	return 0;
}

/* The blip of the last GOT_BLIP of root @c, or NULL. */
const struct dfg_blip *dfg_comp_blip(const struct dfg_comp *c)
{
	return c->has_blip ? &c->blip : NULL;
}

void *dfg_comp_state(const struct dfg_comp *c)
{
	return c->state;
}

const char *dfg_comp_name(const struct dfg_comp *c)
{
	return c->name;
}

const struct dfg_comp_type *dfg_comp_type(const struct dfg_comp *c)
{
	return c->type;
}

/* The failure message, "" if none. */
const char *dfg_comp_errmsg(const struct dfg_comp *c)
{
	return c->errmsg;
}

unsigned int dfg_comp_nr_in(const struct dfg_comp *c)
{
	return c->nr_in;
}

unsigned int dfg_comp_nr_out(const struct dfg_comp *c)
{
	return c->nr_out;
}

unsigned int dfg_comp_instance(const struct dfg_comp *c)
{
	return c->instance;
}

unsigned int dfg_comp_degree(const struct dfg_comp *c)
{
	return c->degree;
}

/* The value of parameter @key, or @def when the graph does not set it. */
const char *dfg_comp_param(const struct dfg_comp *c, const char *key,
			   const char *def)
{
	unsigned int i;

	for (i = 0; i < c->nr_params; i++)
		if (!strcmp(c->params[i].key, key))
			return c->params[i].value;
	return def;
}

/**
 * dfg_comp_param_long() - parameter @key as an integer in [@min, @max]
 *
 * @def when unset. Returns 0 and *@out, or -EINVAL with a message on @c.
 */
int dfg_comp_param_long(struct dfg_comp *c, const char *key, long long def,
			long long min, long long max, long long *out)
{
	const char *s = dfg_comp_param(c, key, NULL);
	int saved = errno;
	long long v = def;
	char *end;

	if (s) {
		errno = 0;
		v = strtoll(s, &end, 0);
		if (errno || end == s || *end) {
			errno = saved;
			return dfg_comp_error(c, -EINVAL,
					      "parameter %s: '%s' is not an integer",
					      key, s);
		}
		errno = saved;
	}
	if (v < min || v > max)
		return dfg_comp_error(c, -EINVAL,
				      "parameter %s: %lld is not in [%lld, %lld]",
				      key, v, min, max);
	*out = v;
	return 0;
}
