// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg run: one set instance, in its own process.
 *
 * Members call each other directly: the emit hook of a member looks up
 * the flows on the output port and, for a flow inside the set, calls the
 * downstream member's compute() with the very element it was given (the
 * data flow is control flow). A flow that leaves the set puts the
 * element into an arena buffer and queues its descriptor for the
 * channel of the downstream instance the flow kind picks; if the element
 * is the buffer this set received and is working on, unchanged, that
 * buffer is forwarded instead of copied.
 *
 * Descriptors (struct dfg_desc) carry a kind and the sending instance in
 * @flags (RUN_D_*), the element's tag or the blip's sequence in @tag.
 * Every producer ends its stream with RUN_D_EOF, so a stream that ends
 * without it means a dead upstream process.
 *
 * The worker loop asks the scheduling point (sched.c) for its set, runs
 * one quantum (queued output first, then the roots' run() and the
 * channels' descriptors, each bounded), and yields. Queued descriptors
 * that do not fit their channel wait in a FIFO; beyond RUN_PEND_MAX the
 * worker blocks in the channel, which is the backpressure inside a
 * single compute() call that emits a lot (a sort's shutdown).
 *
 * Checkpoints (seq k): a root reaches its k-th mark after k * every
 * elements; a channel source (one upstream instance of one input)
 * reaches k when its blip k arrives, after which its descriptors wait in
 * its stash. When every root and source has reached k or ended, every
 * member gets process_blip() then checkpoint() in topological order, the
 * set's file is written and synced, the blip goes out on every channel,
 * and the stashes are replayed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <dfg/dfg.h>

#include <dfg/sched.h>

#include "../comp/comp_run.h"
#include "fifo.h"
#include "run.h"

#define RUN_ROOT_BUDGET		256	/* elements per run() call */
#define RUN_QUANTUM		4096	/* elements per quantum */
#define RUN_PRIORITY		(DFG_SET_PRIO_MAX / 2)
#define RUN_RECV_BATCH		64
#define RUN_SEND_BATCH		64
#define RUN_PEND_MAX		16384	/* queued descriptors per channel */
#define RUN_SPOOL_BUF		(256U << 10)	/* stdio buffer of a spool */
#define RUN_PROF_US		5000	/* SIGPROF sampling period */
#define RUN_CKPT_MAGIC		0x44464743504b5432ULL	/* "DFGCPKT2" */

struct rt_set;
struct rt_out;

/* One flow on an output port: a member of the set, or a boundary. */
struct rt_edge {
	struct rt_member	*to;
	unsigned int		port;
	struct rt_out		*out;
};

struct rt_port {
	struct rt_edge	*edge;
	unsigned int	nr;
};

struct rt_member {
	struct rt_set		*set;
	unsigned int		comp;		/* in fg->comps */
	struct dfg_comp		*c;
	struct rt_port		*out;		/* per output port */
	struct run_comp_stats	*st;
	bool			root;
	bool			root_eof;
	bool			ckpt_asked;	/* root returned a ckpt blip */
	__u64			root_count;	/* elements it produced */
};

/*
 * A boundary flow leaving the set: one producer per reachable instance,
 * on a channel, or on a spool file for a flow into a later phase.
 */
struct rt_out {
	const struct dfg_flow_edge *f;
	unsigned int		nr;
	struct dfg_chan		**ch;		/* NULL: spooled */
	struct run_fifo		*pend;
	FILE			**spool;	/* spooled: per instance */
	__u64			rr;
};

/* One upstream instance of an input channel, or its spool file. */
struct rt_src {
	struct run_fifo		stash;
	FILE			*spool;
	__u64			at_seq;		/* blip reached, waiting */
	bool			eof;
};

struct rt_in {
	const struct dfg_flow_edge *f;
	struct rt_member	*to;
	struct dfg_chan		*ch;		/* NULL: spooled */
	unsigned int		nprod;
	struct rt_src		*src;
	unsigned int		nr_eof;
	bool			closed;		/* recv said end of stream */
	void			*buf;		/* spooled: the element read */
	size_t			buf_len;
};

struct rt_set {
	const struct run_env	*env;
	const struct dfg_plan_set *ps;
	unsigned int		set, inst;
	struct rt_member	*m;
	unsigned int		nr_m;
	struct rt_in		*in;
	unsigned int		nr_in;
	unsigned int		nr_chan_in;	/* of @in, on channels */
	struct rt_out		*out;
	unsigned int		nr_out;
	struct run_set_stats	*st;
	struct dfg_sched	*sched;		/* this process's client */
	struct dfg_set		*kset;		/* the set, registered */
	struct dfg_set_page	*page;		/* its shared page */
	bool			done;		/* yielded EOF */

	/* the buffer being worked on, while its compute() runs */
	const void		*cur_data;
	size_t			cur_len;
	__u64			cur_off;
	bool			cur_owned;

	struct rt_member	*failed;	/* innermost failing member */
	int			err;
	char			msg[DFG_COMP_ERRMSG_MAX];
	__u64			ckpt_seq;	/* last checkpoint taken */
	bool			peer_failed;	/* stopped by another's failure */
};

/* The member running now, for SIGPROF sampling and the scheduler. */
static struct rt_set *prof_set;
static volatile int prof_active = -1;

/* The member called now (-1: none), for SIGPROF and the module. */
static inline void set_active(struct rt_set *s, int idx)
{
	prof_active = idx;
	if (s->page)
		dfg_set_enter(s->page, idx < 0 ? DFG_SET_COMP_NONE :
			      (unsigned int)idx);
}

static void prof_tick(int sig)
{
	int i = prof_active;

	(void)sig;
	if (prof_set && i >= 0 && (unsigned int)i < prof_set->nr_m)
		__atomic_fetch_add(&prof_set->m[i].st->samples, 1,
				   __ATOMIC_RELAXED);
}

static int set_fail(struct rt_set *s, int err, const char *comp,
		    const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int set_fail(struct rt_set *s, int err, const char *comp,
		    const char *fmt, ...)
{
	va_list ap;

	if (s->err)
		return s->err;
	s->err = err < 0 ? err : -EIO;
	snprintf(s->st->comp, sizeof(s->st->comp), "%s", comp);
	va_start(ap, fmt);
	vsnprintf(s->st->msg, sizeof(s->st->msg), fmt, ap);
	va_end(ap);
	return s->err;
}

/* A member's callback failed: record who, from its own message. */
static int member_fail(struct rt_set *s, struct rt_member *m, int err)
{
	const char *msg;

	if (s->err)
		return s->err;
	if (s->failed)
		m = s->failed;
	msg = dfg_comp_errmsg(m->c);
	return set_fail(s, err, dfg_comp_name(m->c), "%s",
			msg && *msg ? msg : strerror(-err));
}

static inline unsigned int member_idx(const struct rt_member *m)
{
	return (unsigned int)(m - m->set->m);
}

/* ------------------------------------------------------------------------
 * Output: boundary flows
 * ------------------------------------------------------------------------
 */

static unsigned int prod_of(const struct rt_set *s,
			    const struct dfg_flow_edge *f)
{
	return f->kind == DFG_FLOW_STRAIGHT ? 0 : s->inst;
}

/* Append a record to spool file @j of @o. */
static int spool_put(struct rt_set *s, struct rt_out *o, unsigned int j,
		     unsigned int kind, __u64 tag, const void *data,
		     size_t len)
{
	struct run_spool_rec h = {
		.len = (__u32)len,
		.flags = kind,
		.tag = tag,
	};

	if (len > UINT32_MAX)
		return set_fail(s, -EMSGSIZE, dfg_comp_name(s->m[0].c),
				"element of %zu bytes for '%s'", len,
				s->env->g->fg->comps[o->f->dst].name);
	if (fwrite(&h, sizeof(h), 1, o->spool[j]) != 1 ||
	    (len && fwrite(data, len, 1, o->spool[j]) != 1))
		return set_fail(s, errno ? -errno : -EIO,
				dfg_comp_name(s->m[0].c),
				"spooling to '%s': %s",
				s->env->g->fg->comps[o->f->dst].name,
				strerror(errno ? errno : EIO));
	s->st->boundary_out++;
	return 0;
}

/* Everything spooled so far is in the file (durable if @sync). */
static int spool_flush(struct rt_set *s, struct rt_out *o, bool sync)
{
	unsigned int j;

	for (j = 0; j < o->nr; j++)
		if (fflush(o->spool[j]) ||
		    (sync && fdatasync(fileno(o->spool[j]))))
			return set_fail(s, -errno, dfg_comp_name(s->m[0].c),
					"spooling to '%s': %s",
					s->env->g->fg->comps[o->f->dst].name,
					strerror(errno));
	return 0;
}

/* Send what is queued for channel @j; block only if @block. */
static int out_flush(struct rt_set *s, struct rt_out *o, unsigned int j,
		     bool block)
{
	struct run_fifo *q = &o->pend[j];

	if (!o->ch)
		return 0;
	while (run_fifo_len(q)) {
		unsigned int n = run_fifo_span(q, RUN_SEND_BATCH);
		int r = dfg_chan_send(o->ch[j], run_fifo_peek(q), n,
				      block ? 0 : DFG_CHAN_NONBLOCK);

		if (r == -EAGAIN)
			return 0;
		if (r < 0)
			return set_fail(s, r, dfg_comp_name(s->m[0].c),
					"sending to '%s': %s",
					s->env->g->fg->comps[o->f->dst].name,
					strerror(-r));
		run_fifo_drop(q, (unsigned int)r);
		s->st->boundary_out += (unsigned int)r;
	}
	return 0;
}

static int out_queue(struct rt_set *s, struct rt_out *o, unsigned int j,
		     const struct dfg_desc *d)
{
	struct run_fifo *q = &o->pend[j];
	int r = run_fifo_push(q, d);

	if (r)
		return set_fail(s, r, dfg_comp_name(s->m[0].c),
				"out of memory queueing output");
	if (run_fifo_len(q) >= RUN_SEND_BATCH)
		r = out_flush(s, o, j, run_fifo_len(q) >= RUN_PEND_MAX);
	return r;
}

/* A control descriptor to every downstream instance. */
static int out_control(struct rt_set *s, struct rt_out *o, unsigned int kind,
		       __u64 tag)
{
	struct dfg_desc d = {
		.flags = kind | prod_of(s, o->f) << RUN_D_PROD_SHIFT,
		.tag = tag,
	};
	unsigned int j;
	int r;

	for (j = 0; j < o->nr; j++) {
		r = o->ch ? out_queue(s, o, j, &d) :
			    spool_put(s, o, j, kind, tag, NULL, 0);
		if (r)
			return r;
	}
	return 0;
}

/* An arena buffer holding @e: the received one if unchanged, else a copy. */
static int elem_buf(struct rt_set *s, const struct dfg_elem *e, __u64 *off)
{
	struct dfg_arena *a = s->env->arena;
	unsigned int tries = 0;
	__s64 b;
	void *p;

	if (s->cur_owned && e->data == s->cur_data && e->len == s->cur_len) {
		s->cur_owned = false;
		*off = s->cur_off;
		s->st->forwarded++;
		return 0;
	}
	if (e->len > UINT32_MAX)
		return -EMSGSIZE;
	/* A full arena drains as consumers free: push our queue meanwhile. */
	while ((b = dfg_buf_alloc(a, e->len ? e->len : 1)) == -ENOMEM) {
		unsigned int i, j;

		if (++tries > 2000)
			return -ENOMEM;
		for (i = 0; i < s->nr_out; i++)
			for (j = 0; j < s->out[i].nr; j++)
				if (out_flush(s, &s->out[i], j, false))
					return s->err;
		usleep(1000);
	}
	if (b < 0)
		return (int)b;
	p = dfg_arena_ptr(a, (__u64)b, e->len);
	if (e->len)
		memcpy(p, e->data, e->len);
	*off = (__u64)b;
	return 0;
}

static int out_put(struct rt_set *s, struct rt_out *o,
		   const struct dfg_elem *e)
{
	struct dfg_desc d = {
		.len = (__u32)e->len,
		.flags = RUN_D_DATA | prod_of(s, o->f) << RUN_D_PROD_SHIFT,
		.tag = e->tag,
	};
	unsigned int j, first = 0;
	int r;

	switch (o->f->kind) {
	case DFG_FLOW_HASH:
		first = run_hash_route(o->f, e, o->nr);
		break;
	case DFG_FLOW_ROUNDROBIN:
		first = (unsigned int)(o->rr++ % o->nr);
		break;
	case DFG_FLOW_BROADCAST:
		for (j = 0; j < o->nr; j++) {
			/* every copy is freed by its own consumer */
			if (!o->ch) {
				r = spool_put(s, o, j, RUN_D_DATA, e->tag,
					      e->data, e->len);
				if (r)
					return r;
				continue;
			}
			r = elem_buf(s, e, &d.off);
			if (!r)
				r = out_queue(s, o, j, &d);
			if (r)
				return r;
		}
		return 0;
	default:	/* straight, gather: the one channel */
		break;
	}
	if (!o->ch)
		return spool_put(s, o, first, RUN_D_DATA, e->tag, e->data,
				 e->len);
	r = elem_buf(s, e, &d.off);
	if (r)
		return set_fail(s, r, dfg_comp_name(s->m[0].c),
				"arena buffer for '%s': %s",
				s->env->g->fg->comps[o->f->dst].name,
				strerror(-r));
	return out_queue(s, o, first, &d);
}

unsigned int run_hash_route(const struct dfg_flow_edge *f,
			    const struct dfg_elem *e, unsigned int n)
{
	const unsigned char *p = e->data, *end = p + e->len;
	const char *key = f->key && f->key[0] == '$' ? f->key + 1 : f->key;
	long field = key ? strtol(key, NULL, 10) : 0;
	__u64 h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	/* key=N or $N: the N-th field separated by blanks; else (0, or not
	 * a number) the whole element */
	while (field > 1 && p < end) {
		while (p < end && *p != ' ' && *p != '\t')
			p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		field--;
	}
	if (field >= 1) {
		const unsigned char *q = p;

		while (q < end && *q != ' ' && *q != '\t')
			q++;
		end = q;
	}
	for (; p < end; p++) {
		h ^= *p;
		h *= 0x100000001b3ULL;
	}
	return (unsigned int)(h % n);
}

/* ------------------------------------------------------------------------
 * The emit hook: direct calls inside the set
 * ------------------------------------------------------------------------
 */

static int deliver(struct rt_member *t, unsigned int port,
		   const struct dfg_elem *e)
{
	struct rt_set *s = t->set;
	int prev = prof_active, r;

	t->st->in_elems++;
	t->st->in_bytes += e->len;
	set_active(s, (int)member_idx(t));
	r = __dfg_comp_compute(t->c, port, e);
	set_active(s, prev);
	if (r < 0 && !s->failed)
		s->failed = t;
	return r;
}

static int rt_emit(struct dfg_comp *c, void *cookie, unsigned int port,
		   const struct dfg_elem *e)
{
	struct rt_member *m = cookie;
	struct rt_port *p;
	unsigned int k;
	int r;

	(void)c;
	m->st->out_elems++;
	m->st->out_bytes += e->len;
	if (m->root)
		m->root_count++;
	p = &m->out[port];
	for (k = 0; k < p->nr; k++) {
		struct rt_edge *ed = &p->edge[k];

		if (ed->out)
			r = out_put(m->set, ed->out, e);
		else
			r = deliver(ed->to, ed->port, e);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Checkpoints
 * ------------------------------------------------------------------------
 */

static __u64 ckpt_every(const struct rt_set *s)
{
	return s->env->state_dir ? s->env->opts->checkpoint_every : 0;
}

/* Has root @m reached the mark of checkpoint @seq? */
static bool root_at(const struct rt_set *s, const struct rt_member *m,
		    __u64 seq)
{
	if (m->ckpt_asked)
		return true;
	return ckpt_every(s) && m->root_count >= seq * ckpt_every(s);
}

/* Every root and source reached checkpoint @seq or ended, one reached it. */
static bool aligned(const struct rt_set *s, __u64 seq)
{
	bool any = false;
	unsigned int i, p;

	for (i = 0; i < s->nr_m; i++) {
		const struct rt_member *m = &s->m[i];

		if (!m->root || m->root_eof)
			continue;
		if (!root_at(s, m, seq))
			return false;
		any = true;
	}
	for (i = 0; i < s->nr_in; i++)
		for (p = 0; p < s->in[i].nprod; p++) {
			const struct rt_src *src = &s->in[i].src[p];

			if (src->eof && !src->at_seq)
				continue;
			if (src->at_seq != seq)
				return false;
			any = true;
		}
	return any;
}

static int put_u64(struct dfg_ckpt *w, __u64 v)
{
	return dfg_ckpt_put_u64(w, v);
}

/*
 * The file: magic, seq, members, outputs, the round-robin counters, how
 * far each spool file was written (outputs) and read (inputs), then per
 * member its root count and its own checkpoint bytes. A spool gets the
 * blip (and is made durable) before the file is written: nobody reads it
 * before this phase ends, and the offsets then include the blip, as the
 * reader's offsets in its own checkpoint do.
 */
static int ckpt_take(struct rt_set *s, __u64 seq)
{
	struct dfg_blip b = { .kind = DFG_BLIP_CHECKPOINT, .seq = seq };
	struct dfg_ckpt *w = NULL, *mw;
	const void *data;
	size_t len;
	unsigned int i, j;
	int r;

	for (i = 0; i < s->nr_m; i++) {
		set_active(s, (int)i);
		r = dfg_comp_process_blip(s->m[i].c, &b);
		if (r < 0)
			return member_fail(s, &s->m[i], r);
	}
	for (i = 0; i < s->nr_out; i++) {
		if (s->out[i].ch)
			continue;
		r = out_control(s, &s->out[i], RUN_D_BLIP, seq);
		if (!r)
			r = spool_flush(s, &s->out[i], true);
		if (r)
			return r;
	}
	r = dfg_ckpt_new(&w);
	if (r)
		goto fail;
	r = put_u64(w, RUN_CKPT_MAGIC) ?: put_u64(w, seq) ?:
	    put_u64(w, s->nr_m) ?: put_u64(w, s->nr_out);
	for (i = 0; !r && i < s->nr_out; i++)
		r = put_u64(w, s->out[i].rr);
	for (i = 0; !r && i < s->nr_out; i++)
		for (j = 0; !r && !s->out[i].ch && j < s->out[i].nr; j++)
			r = put_u64(w, (__u64)ftello(s->out[i].spool[j]));
	for (i = 0; !r && i < s->nr_in; i++)
		for (j = 0; !r && !s->in[i].ch && j < s->in[i].nprod; j++)
			r = put_u64(w, (__u64)ftello(s->in[i].src[j].spool));
	for (i = 0; !r && i < s->nr_m; i++) {
		set_active(s, (int)i);
		r = dfg_ckpt_new(&mw);
		if (r)
			break;
		r = dfg_comp_checkpoint(s->m[i].c, mw);
		if (r < 0) {
			dfg_ckpt_free(mw);
			dfg_ckpt_free(w);
			return member_fail(s, &s->m[i], r);
		}
		data = dfg_ckpt_data(mw, &len);
		r = put_u64(w, s->m[i].root_count) ?:
		    dfg_ckpt_put_bytes(w, data, len);
		dfg_ckpt_free(mw);
	}
	set_active(s, -1);
	if (r)
		goto fail;
	data = dfg_ckpt_data(w, &len);
	r = run_state_write(s->env->state_dir, s->set, s->inst, seq, data, len);
	if (r)
		goto fail;
	dfg_ckpt_free(w);
	w = NULL;
	/* durable: now the blip may leave the set */
	for (i = 0; i < s->nr_out; i++) {
		if (!s->out[i].ch)
			continue;	/* has it already */
		r = out_control(s, &s->out[i], RUN_D_BLIP, seq);
		if (r)
			return r;
	}
	for (i = 0; i < s->nr_m; i++)
		s->m[i].ckpt_asked = false;
	s->ckpt_seq = seq;
	s->st->checkpoints++;
	return 0;
fail:
	dfg_ckpt_free(w);
	return set_fail(s, r, dfg_comp_name(s->m[0].c),
			"checkpoint %llu: %s", (unsigned long long)seq,
			strerror(-r));
}

static int ckpt_restore(struct rt_set *s, __u64 seq)
{
	struct dfg_ckpt *rd = NULL, *mr;
	__u64 v[4], x;
	const void *p;
	void *data = NULL;
	size_t len, plen;
	unsigned int i, j;
	int r;

	r = run_state_read(s->env->state_dir, s->set, s->inst, seq, &data,
			   &len);
	if (r)
		goto fail;
	r = dfg_ckpt_open(data, len, &rd);
	if (r)
		goto fail;
	for (i = 0; i < 4 && !r; i++)
		r = dfg_ckpt_get_u64(rd, &v[i]);
	if (!r && (v[0] != RUN_CKPT_MAGIC || v[1] != seq || v[2] != s->nr_m ||
		   v[3] != s->nr_out))
		r = -EPROTO;
	for (i = 0; !r && i < s->nr_out; i++)
		r = dfg_ckpt_get_u64(rd, &s->out[i].rr);
	for (i = 0; !r && i < s->nr_out; i++)
		for (j = 0; !r && !s->out[i].ch && j < s->out[i].nr; j++) {
			FILE *f = s->out[i].spool[j];

			r = dfg_ckpt_get_u64(rd, &x);
			/* what was written after the checkpoint goes */
			if (!r && (ftruncate(fileno(f), (off_t)x) ||
				   fseeko(f, (off_t)x, SEEK_SET)))
				r = -errno;
		}
	for (i = 0; !r && i < s->nr_in; i++)
		for (j = 0; !r && !s->in[i].ch && j < s->in[i].nprod; j++) {
			r = dfg_ckpt_get_u64(rd, &x);
			if (!r && fseeko(s->in[i].src[j].spool, (off_t)x,
					 SEEK_SET))
				r = -errno;
		}
	for (i = 0; !r && i < s->nr_m; i++) {
		r = dfg_ckpt_get_u64(rd, &x) ?:
		    dfg_ckpt_get_bytes(rd, &p, &plen);
		if (r)
			break;
		s->m[i].root_count = x;
		r = dfg_ckpt_open(p, plen, &mr);
		if (r)
			break;
		set_active(s, (int)i);
		r = dfg_comp_restore(s->m[i].c, mr);
		dfg_ckpt_free(mr);
		if (r < 0) {
			dfg_ckpt_free(rd);
			free(data);
			return member_fail(s, &s->m[i], r);
		}
	}
	set_active(s, -1);
fail:
	dfg_ckpt_free(rd);
	free(data);
	if (r)
		return set_fail(s, r, dfg_comp_name(s->m[0].c),
				"restoring checkpoint %llu: %s",
				(unsigned long long)seq, strerror(-r));
	s->ckpt_seq = seq;
	return 0;
}

/* ------------------------------------------------------------------------
 * Input: descriptors from the channels
 * ------------------------------------------------------------------------
 */

static int in_data(struct rt_set *s, struct rt_in *in, const struct dfg_desc *d)
{
	struct dfg_elem e = { .len = d->len, .tag = d->tag };
	int r;

	e.data = dfg_chan_buf(in->ch, d);
	if (!e.data)
		return set_fail(s, -EBADMSG, dfg_comp_name(in->to->c),
				"bad descriptor from '%s'",
				s->env->g->fg->comps[in->f->src].name);
	s->cur_data = e.data;
	s->cur_len = e.len;
	s->cur_off = d->off;
	s->cur_owned = true;
	r = deliver(in->to, in->f->dst_port, &e);
	if (s->cur_owned)
		dfg_buf_free(s->env->arena, d->off);
	s->cur_owned = false;
	s->cur_data = NULL;
	if (r < 0)
		return member_fail(s, in->to, r);
	return 0;
}

static int in_desc(struct rt_set *s, struct rt_in *in,
		   const struct dfg_desc *d);

/* After a checkpoint: what the sources held back, in order. */
static int replay(struct rt_set *s)
{
	unsigned int i, p;
	int r;

	for (i = 0; i < s->nr_in; i++)
		for (p = 0; p < s->in[i].nprod; p++) {
			struct rt_src *src = &s->in[i].src[p];

			src->at_seq = 0;
			while (!src->at_seq && run_fifo_len(&src->stash)) {
				struct dfg_desc d = *run_fifo_peek(&src->stash);

				run_fifo_drop(&src->stash, 1);
				r = in_desc(s, &s->in[i], &d);
				if (r)
					return r;
			}
		}
	return 0;
}

static int maybe_checkpoint(struct rt_set *s)
{
	int r;

	while (aligned(s, s->ckpt_seq + 1)) {
		r = ckpt_take(s, s->ckpt_seq + 1);
		if (!r)
			r = replay(s);
		if (r)
			return r;
	}
	return 0;
}

/* A blip or the end of a source's stream. */
static int in_control(struct rt_set *s, struct rt_in *in, struct rt_src *src,
		      unsigned int kind, __u64 tag)
{
	int r;

	switch (kind) {
	case RUN_D_BLIP:
		src->at_seq = tag;
		if (tag != s->ckpt_seq + 1)
			return set_fail(s, -EPROTO, dfg_comp_name(in->to->c),
					"checkpoint %llu out of order",
					(unsigned long long)tag);
		return maybe_checkpoint(s);
	case RUN_D_EOF:
		src->eof = true;
		if (++in->nr_eof == in->nprod) {
			set_active(s, (int)member_idx(in->to));
			r = dfg_comp_end_input(in->to->c, in->f->dst_port);
			set_active(s, -1);
			if (r < 0)
				return member_fail(s, in->to, r);
		}
		return maybe_checkpoint(s);
	default:
		return set_fail(s, -EBADMSG, dfg_comp_name(in->to->c),
				"bad descriptor kind %u", kind);
	}
}

static int in_desc(struct rt_set *s, struct rt_in *in,
		   const struct dfg_desc *d)
{
	unsigned int p = d->flags >> RUN_D_PROD_SHIFT;
	struct rt_src *src;
	int r;

	if (p >= in->nprod)
		return set_fail(s, -EBADMSG, dfg_comp_name(in->to->c),
				"descriptor from unknown instance %u", p);
	src = &in->src[p];
	if (src->at_seq || src->eof) {
		if (src->eof)
			return set_fail(s, -EBADMSG, dfg_comp_name(in->to->c),
					"descriptor after end of stream");
		r = run_fifo_push(&src->stash, d);
		return r ? set_fail(s, r, dfg_comp_name(in->to->c),
				    "out of memory") : 0;
	}
	if ((d->flags & RUN_D_KIND) == RUN_D_DATA)
		return in_data(s, in, d);
	return in_control(s, in, src, d->flags & RUN_D_KIND, d->tag);
}

/* The next record of a spool file; its producer ended with RUN_D_EOF. */
static int spool_get(struct rt_set *s, struct rt_in *in, struct rt_src *src)
{
	struct run_spool_rec h;
	struct dfg_elem e;
	int r;

	if (fread(&h, sizeof(h), 1, src->spool) != 1) {
		r = ferror(src->spool) ? -errno : -EPIPE;
		goto fail;
	}
	if (h.len > in->buf_len) {
		void *buf = realloc(in->buf, h.len);

		if (!buf) {
			r = -ENOMEM;
			goto fail;
		}
		in->buf = buf;
		in->buf_len = h.len;
	}
	if (h.len && fread(in->buf, h.len, 1, src->spool) != 1) {
		r = ferror(src->spool) ? -errno : -EPIPE;
		goto fail;
	}
	if ((h.flags & RUN_D_KIND) != RUN_D_DATA)
		return in_control(s, in, src, h.flags & RUN_D_KIND, h.tag);
	e.data = in->buf;
	e.len = h.len;
	e.tag = h.tag;
	r = deliver(in->to, in->f->dst_port, &e);
	return r < 0 ? member_fail(s, in->to, r) : 0;
fail:
	return set_fail(s, r, dfg_comp_name(in->to->c),
			"spooled input from '%s': %s",
			s->env->g->fg->comps[in->f->src].name,
			r == -EPIPE ? "cut short" : strerror(-r));
}

/* Up to @budget records of a spooled input; how many, or -errno. */
static int spool_pump(struct rt_set *s, struct rt_in *in, unsigned int budget)
{
	unsigned int done = 0, p;
	int r;

	for (p = 0; p < in->nprod; p++) {
		struct rt_src *src = &in->src[p];

		while (done < budget && !src->at_seq && !src->eof) {
			r = spool_get(s, in, src);
			if (r)
				return r;
			done++;
		}
	}
	return (int)done;
}

/* Up to @budget descriptors from input @in; returns how many, or -errno. */
static int in_pump(struct rt_set *s, struct rt_in *in, unsigned int budget)
{
	struct dfg_desc d[RUN_RECV_BATCH];
	unsigned int done = 0;
	int n, i, r;

	if (!in->ch)
		return spool_pump(s, in, budget);
	while (!in->closed && done < budget) {
		n = dfg_chan_recv(in->ch, d, RUN_RECV_BATCH, DFG_CHAN_NONBLOCK);
		if (n == -EAGAIN)
			break;
		if (n == 0) {
			in->closed = true;
			if (in->nr_eof < in->nprod)
				return set_fail(s, -EPIPE,
					dfg_comp_name(in->to->c),
					"input from '%s' ended early: an upstream process died",
					s->env->g->fg->comps[in->f->src].name);
			break;
		}
		if (n < 0)
			return set_fail(s, n, dfg_comp_name(in->to->c),
					"receiving from '%s': %s",
					s->env->g->fg->comps[in->f->src].name,
					strerror(-n));
		for (i = 0; i < n; i++) {
			r = in_desc(s, in, &d[i]);
			if (r)
				return r;
		}
		done += (unsigned int)n;
	}
	return (int)done;
}

/* ------------------------------------------------------------------------
 * Set-up and the worker loop
 * ------------------------------------------------------------------------
 */

static int setup_member(struct rt_set *s, unsigned int i)
{
	const struct run_graph *g = s->env->g;
	const struct dfg_flow_comp *fc = &g->fg->comps[s->ps->members[i]];
	struct rt_member *m = &s->m[i];
	struct dfg_comp_attr a = {
		.name = fc->name,
		.nr_in = fc->nin,
		.nr_out = fc->nout,
		.instance = s->inst,
		.degree = fc->degree,
		.params = (const struct dfg_param *)fc->params,
		.nr_params = fc->nparams,
	};
	unsigned int p;
	int r;

	m->set = s;
	m->comp = fc->index;
	m->st = &s->env->cstats[g->cstat[fc->index] + s->inst];
	m->root = fc->nin_flows == 0;
	r = dfg_comp_create(g->types[fc->index], &a, &m->c);
	if (r)
		return set_fail(s, r, fc->name, "cannot create: %s",
				strerror(-r));
	dfg_comp_set_emit(m->c, rt_emit, m);
	m->out = calloc(fc->nout ? fc->nout : 1, sizeof(*m->out));
	if (!m->out)
		return set_fail(s, -ENOMEM, fc->name, "out of memory");
	for (p = 0; p < fc->nout; p++) {
		m->out[p].nr = fc->out[p].nflows;
		m->out[p].edge = calloc(fc->out[p].nflows + 1,
					sizeof(*m->out[p].edge));
		if (!m->out[p].edge)
			return set_fail(s, -ENOMEM, fc->name, "out of memory");
	}
	return 0;
}

static struct rt_member *member_of(struct rt_set *s, unsigned int comp)
{
	unsigned int i;

	for (i = 0; i < s->nr_m; i++)
		if (s->m[i].comp == comp)
			return &s->m[i];
	return NULL;
}

/*
 * A spool file, for writing (from the start, or as the checkpoint being
 * restored leaves it) or for reading.
 */
static FILE *spool_open(struct rt_set *s, const struct dfg_flow_edge *f,
			unsigned int inst, unsigned int prod, bool out)
{
	const struct run_graph *g = s->env->g;
	char path[4096];
	FILE *fp = NULL;
	int fd, r;

	r = run_spool_path(path, sizeof(path), s->env->spool_dir, f->index,
			   inst, prod);
	if (r) {
		errno = -r;
		goto fail;
	}
	fd = open(path, out ? O_WRONLY | O_CREAT | O_CLOEXEC :
			      O_RDONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		goto fail;
	if (out && !s->env->resume_seq && ftruncate(fd, 0)) {
		close(fd);
		goto fail;
	}
	fp = fdopen(fd, out ? "w" : "r");
	if (!fp) {
		close(fd);
		goto fail;
	}
	setvbuf(fp, NULL, _IOFBF, RUN_SPOOL_BUF);
	return fp;
fail:
	set_fail(s, -errno, g->fg->comps[out ? f->src : f->dst].name,
		 "spool of '%s' -> '%s': %s: %s", g->fg->comps[f->src].name,
		 g->fg->comps[f->dst].name, path, strerror(errno));
	return NULL;
}

static int setup_out(struct rt_set *s, struct rt_out *o,
		     const struct dfg_flow_edge *f)
{
	const struct run_graph *g = s->env->g;
	unsigned int dst_deg = g->fg->comps[f->dst].degree, j;
	int r;

	o->f = f;
	o->nr = f->kind == DFG_FLOW_STRAIGHT ? 1 : dst_deg;
	o->pend = calloc(o->nr, sizeof(*o->pend));
	if (run_flow_spooled(g, f))
		o->spool = calloc(o->nr, sizeof(*o->spool));
	else
		o->ch = calloc(o->nr, sizeof(*o->ch));
	if ((!o->ch && !o->spool) || !o->pend)
		return set_fail(s, -ENOMEM, g->fg->comps[f->src].name,
				"out of memory");
	for (j = 0; o->spool && j < o->nr; j++) {
		o->spool[j] = spool_open(s, f, f->kind == DFG_FLOW_STRAIGHT ?
					 s->inst : j, prod_of(s, f), true);
		if (!o->spool[j])
			return s->err;
	}
	for (j = 0; o->ch && j < o->nr; j++) {
		unsigned int slot = g->chan[f->index] +
			(f->kind == DFG_FLOW_STRAIGHT ? s->inst : j);

		r = dfg_chan_open(s->env->graph_fd,
				  (unsigned int)s->env->chan_ids[slot],
				  DFG_CHAN_PRODUCER, s->env->arena, &o->ch[j]);
		if (r)
			return set_fail(s, r, g->fg->comps[f->src].name,
					"channel to '%s': %s",
					g->fg->comps[f->dst].name,
					strerror(-r));
	}
	return 0;
}

static int setup_in(struct rt_set *s, struct rt_in *in,
		    const struct dfg_flow_edge *f)
{
	const struct run_graph *g = s->env->g;
	unsigned int slot = g->chan[f->index] + s->inst, p;
	int r;

	in->f = f;
	in->to = member_of(s, f->dst);
	in->nprod = f->kind == DFG_FLOW_STRAIGHT ? 1 :
		g->fg->comps[f->src].degree;
	in->src = calloc(in->nprod, sizeof(*in->src));
	if (!in->src)
		return set_fail(s, -ENOMEM, g->fg->comps[f->dst].name,
				"out of memory");
	if (run_flow_spooled(g, f)) {
		for (p = 0; p < in->nprod; p++) {
			in->src[p].spool = spool_open(s, f, s->inst, p, false);
			if (!in->src[p].spool)
				return s->err;
		}
		return 0;
	}
	s->nr_chan_in++;
	r = dfg_chan_open(s->env->graph_fd, (unsigned int)s->env->chan_ids[slot],
			  DFG_CHAN_CONSUMER, s->env->arena, &in->ch);
	if (r)
		return set_fail(s, r, g->fg->comps[f->dst].name,
				"channel from '%s': %s",
				g->fg->comps[f->src].name, strerror(-r));
	return 0;
}

static int setup(struct rt_set *s)
{
	const struct dfg_flow *fg = s->env->g->fg;
	unsigned int i, k, nout = 0;
	int r;

	s->nr_m = s->ps->nmembers;
	s->m = calloc(s->nr_m, sizeof(*s->m));
	s->nr_in = s->ps->nin_flows;
	s->in = calloc(s->nr_in + 1, sizeof(*s->in));
	s->nr_out = s->ps->nout_flows;
	s->out = calloc(s->nr_out + 1, sizeof(*s->out));
	if (!s->m || !s->in || !s->out)
		return set_fail(s, -ENOMEM, fg->comps[s->ps->members[0]].name,
				"out of memory");
	for (i = 0; i < s->nr_m; i++) {
		r = setup_member(s, i);
		if (r)
			return r;
	}
	for (i = 0; i < s->nr_out; i++) {
		r = setup_out(s, &s->out[i], &fg->flows[s->ps->out_flows[i]]);
		if (r)
			return r;
	}
	for (i = 0; i < s->nr_in; i++) {
		r = setup_in(s, &s->in[i], &fg->flows[s->ps->in_flows[i]]);
		if (r)
			return r;
	}
	/* the edges of every output port, in the port's flow order */
	for (i = 0; i < s->nr_m; i++) {
		const struct dfg_flow_comp *fc = &fg->comps[s->m[i].comp];
		unsigned int p;

		for (p = 0; p < fc->nout; p++)
			for (k = 0; k < fc->out[p].nflows; k++) {
				const struct dfg_flow_edge *f =
					&fg->flows[fc->out[p].flows[k]];
				struct rt_edge *ed = &s->m[i].out[p].edge[k];
				unsigned int o;

				ed->to = member_of(s, f->dst);
				ed->port = f->dst_port;
				if (ed->to)
					continue;
				for (o = 0; o < s->nr_out; o++)
					if (s->out[o].f == f)
						ed->out = &s->out[o];
				if (!ed->out)
					return set_fail(s, -EINVAL, fc->name,
							"flow to '%s' has no channel",
							fg->comps[f->dst].name);
				nout++;
			}
	}
	(void)nout;
	return 0;
}

static int init_members(struct rt_set *s)
{
	unsigned int i;
	int r;

	for (i = 0; i < s->nr_m; i++) {
		set_active(s, (int)i);
		r = dfg_comp_init(s->m[i].c);
		if (r < 0)
			return member_fail(s, &s->m[i], r);
	}
	set_active(s, -1);
	if (s->env->resume_seq)
		return ckpt_restore(s, s->env->resume_seq);
	return 0;
}

static bool inputs_done(const struct rt_set *s)
{
	unsigned int i;

	for (i = 0; i < s->nr_m; i++)
		if (s->m[i].root && !s->m[i].root_eof)
			return false;
	for (i = 0; i < s->nr_in; i++)
		if (s->in[i].nr_eof < s->in[i].nprod)
			return false;
	return true;
}

/* The end: shutdown in topological order, then end of stream downstream. */
static int finish(struct rt_set *s)
{
	unsigned int i, j;
	int r;

	for (i = 0; i < s->nr_m; i++) {
		set_active(s, (int)i);
		r = dfg_comp_shutdown(s->m[i].c);
		if (r < 0)
			return member_fail(s, &s->m[i], r);
	}
	set_active(s, -1);
	for (i = 0; i < s->nr_out; i++) {
		r = out_control(s, &s->out[i], RUN_D_EOF, 0);
		for (j = 0; !r && j < s->out[i].nr; j++)
			r = out_flush(s, &s->out[i], j, true);
		/* complete before the done marker says so */
		if (!r && !s->out[i].ch)
			r = spool_flush(s, &s->out[i], s->env->state_dir);
		if (r)
			return r;
	}
	if (s->env->state_dir) {
		r = run_state_done(s->env->state_dir, s->set, s->inst,
				   s->ckpt_seq);
		if (r)
			return set_fail(s, r, dfg_comp_name(s->m[0].c),
					"checkpoint directory: %s",
					strerror(-r));
	}
	return 0;
}

/* One root's run() under the root protocol; returns elements or -errno. */
static int pump_root(struct rt_set *s, struct rt_member *m)
{
	unsigned long budget = RUN_ROOT_BUDGET;
	__u64 before = m->root_count;
	const struct dfg_blip *b;
	int code, r;

	if (ckpt_every(s)) {
		__u64 mark = (s->ckpt_seq + 1) * ckpt_every(s);

		if (m->root_count >= mark || m->ckpt_asked)
			return 0;	/* waits for the checkpoint */
		if (mark - m->root_count < budget)
			budget = (unsigned long)(mark - m->root_count);
	} else if (m->ckpt_asked) {
		return 0;
	}
	set_active(s, (int)member_idx(m));
	code = dfg_comp_run(m->c, budget);
	set_active(s, -1);
	switch (code) {
	case DFG_KEEP_GOING:
		break;
	case DFG_REACHED_EOF:
		m->root_eof = true;
		break;
	case DFG_GOT_BLIP:
		b = dfg_comp_blip(m->c);
		if (b && b->kind == DFG_BLIP_CHECKPOINT && s->env->state_dir) {
			m->ckpt_asked = true;
			break;
		}
		/* any other blip: every member sees it, upstream first */
		for (unsigned int i = 0; b && i < s->nr_m; i++) {
			set_active(s, (int)i);
			r = dfg_comp_process_blip(s->m[i].c, b);
			if (r < 0)
				return member_fail(s, &s->m[i], r);
		}
		set_active(s, -1);
		break;
	case DFG_ERROR:
	default:
		return member_fail(s, m, code < 0 ? code : -EIO);
	}
	r = maybe_checkpoint(s);
	if (r)
		return r;
	return (int)(m->root_count - before) + (m->root_eof ? 1 : 0);
}

/*
 * Send what every output has queued, without blocking: 0 when all went,
 * DFG_YIELD_OUTPUT_FULL when a channel is full, or an error.
 */
static int flush_outputs(struct rt_set *s)
{
	bool pending = false;
	unsigned int i, j;
	int r;

	for (i = 0; i < s->nr_out; i++)
		for (j = 0; j < s->out[i].nr; j++) {
			r = out_flush(s, &s->out[i], j, false);
			if (r)
				return r;
			if (run_fifo_len(&s->out[i].pend[j]))
				pending = true;
		}
	return pending ? DFG_YIELD_OUTPUT_FULL : 0;
}

/*
 * One quantum of at most @budget elements; returns how the set yields
 * (DFG_YIELD_*), or -errno.
 */
static int quantum(struct rt_set *s, unsigned long budget)
{
	unsigned long work = 0;
	unsigned int i;
	int r;

	r = flush_outputs(s);
	if (r)
		return r;
	for (i = 0; i < s->nr_m && work < budget; i++) {
		if (!s->m[i].root || s->m[i].root_eof)
			continue;
		while (work < budget && !s->m[i].root_eof) {
			r = pump_root(s, &s->m[i]);
			if (r < 0)
				return r;
			if (!r)
				break;
			work += (unsigned int)r;
		}
	}
	for (i = 0; i < s->nr_in && work < budget; i++) {
		r = in_pump(s, &s->in[i], (unsigned int)(budget - work));
		if (r < 0)
			return r;
		work += (unsigned int)r;
	}
	if (inputs_done(s)) {
		r = finish(s);
		return r ? r : DFG_YIELD_EOF;
	}
	/* send what this quantum produced before yielding */
	r = flush_outputs(s);
	if (r)
		return r;
	if (work >= budget || !s->nr_chan_in)
		return DFG_YIELD_QUANTUM;
	return DFG_YIELD_INPUT_EMPTY;
}

/* The module's page shows what the shared stats area counts. */
static void publish(struct rt_set *s)
{
	unsigned int i;

	for (i = 0; i < s->nr_m; i++) {
		struct dfg_set_comp_stats *p = &s->page->comps[i];
		const struct run_comp_stats *c = s->m[i].st;

		p->elems_in = c->in_elems;
		p->bytes_in = c->in_bytes;
		p->elems_out = c->out_elems;
		p->bytes_out = c->out_bytes;
	}
}

/*
 * Give the set back (@reason DFG_YIELD_*, 0 the first time) and wait
 * until the module hands it out again. Returns its quantum in elements
 * (> 0), 0 when it is done for good (after DFG_YIELD_EOF), or -errno:
 * -EIO another set failed the graph, -ECANCELED the graph died.
 */
static long sched_next(struct rt_set *s, unsigned int reason)
{
	unsigned long long q = 0;
	struct dfg_set *set;
	int r;

	if (reason == DFG_YIELD_EOF)
		s->done = true;
	do
		r = dfg_sched_next(s->sched, reason ? s->kset : NULL, reason,
				   0, &set, &q);
	while (r == -EINTR);
	if (r == -ENODATA && s->done)
		return 0;
	if (r < 0)
		return r;
	return q ? (long)q : RUN_QUANTUM;
}

static int worker(struct rt_set *s)
{
	unsigned int reason = 0;
	long q;
	int r;

	for (;;) {
		publish(s);
		q = sched_next(s, reason);
		if (q == 0)
			return 0;
		if (q == -EIO && !s->err) {
			/* another set failed the graph: it reports why */
			s->peer_failed = true;
			return set_fail(s, (int)q, dfg_comp_name(s->m[0].c),
					"stopped: the graph failed");
		}
		if (q < 0)
			return set_fail(s, (int)q, dfg_comp_name(s->m[0].c),
					"scheduler: %s", strerror((int)-q));
		if (!s->st->runs)
			s->st->started_ns = run_now_ns();
		s->st->runs++;
		r = quantum(s, (unsigned long)q);
		if (r < 0) {
			sched_next(s, DFG_YIELD_ERROR);
			return r;
		}
		if (r == DFG_YIELD_INPUT_EMPTY || r == DFG_YIELD_OUTPUT_FULL)
			s->st->parks++;
		reason = (unsigned int)r;
	}
}

static void teardown(struct rt_set *s)
{
	unsigned int i, j;

	for (i = 0; i < s->nr_out; i++) {
		for (j = 0; j < s->out[i].nr; j++) {
			if (s->out[i].ch)
				dfg_chan_close(s->out[i].ch[j]);
			if (s->out[i].spool && s->out[i].spool[j])
				fclose(s->out[i].spool[j]);
			if (s->out[i].pend)
				run_fifo_free(&s->out[i].pend[j]);
		}
		free(s->out[i].ch);
		free(s->out[i].spool);
		free(s->out[i].pend);
	}
	for (i = 0; i < s->nr_in; i++) {
		dfg_chan_close(s->in[i].ch);
		for (j = 0; s->in[i].src && j < s->in[i].nprod; j++) {
			run_fifo_free(&s->in[i].src[j].stash);
			if (s->in[i].src[j].spool)
				fclose(s->in[i].src[j].spool);
		}
		free(s->in[i].src);
		free(s->in[i].buf);
	}
	for (i = 0; i < s->nr_m; i++) {
		dfg_comp_destroy(s->m[i].c);
		if (s->m[i].out)
			for (j = 0; j < s->env->g->fg->comps[s->m[i].comp].nout;
			     j++)
				free(s->m[i].out[j].edge);
		free(s->m[i].out);
	}
	free(s->m);
	free(s->in);
	free(s->out);
	dfg_sched_detach(s->sched);
}

/* A set that finished before the resume point: only end its streams. */
static int already_done(struct rt_set *s)
{
	unsigned int i, j;
	int r;

	for (i = 0; i < s->nr_out; i++) {
		if (!s->out[i].ch)
			continue;	/* its spool files are complete */
		r = out_control(s, &s->out[i], RUN_D_EOF, 0);
		for (j = 0; !r && j < s->out[i].nr; j++)
			r = out_flush(s, &s->out[i], j, true);
		if (r)
			return r;
	}
	return 0;
}

static void start_profiling(struct rt_set *s)
{
	struct itimerval it = {
		.it_interval = { .tv_usec = RUN_PROF_US },
		.it_value = { .tv_usec = RUN_PROF_US },
	};
	struct sigaction sa = { .sa_handler = prof_tick,
				.sa_flags = SA_RESTART };

	prof_set = s;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) == 0)
		setitimer(ITIMER_PROF, &it, NULL);
}

/* Object names allow [A-Za-z0-9._-]: anything else becomes '_'. */
static void name_copy(char *dst, const char *src)
{
	size_t i;

	for (i = 0; src[i] && i < DFG_NAME_MAX - 1; i++) {
		char c = src[i];

		dst[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '.' || c == '_' ||
			 c == '-' ? c : '_';
	}
	dst[i] = '\0';
	if (!i)
		strcpy(dst, "_");
}

/* Register with the kernel set scheduler: channels, members' names. */
static int sched_open(struct rt_set *s)
{
	struct dfg_set_desc d = {
		/* spooled inputs are work of its own, as a root's */
		.flags = s->nr_chan_in < s->nr_in || !s->nr_in ?
			 DFG_SET_F_ROOT : 0,
		.priority = RUN_PRIORITY,
		.quantum = RUN_QUANTUM,
		.nr_comps = s->nr_m,
	};
	const struct dfg_flow *fg = s->env->g->fg;
	char name[DFG_NAME_MAX], (*cnames)[DFG_NAME_MAX];
	struct dfg_set_output *outs;
	const char **names;
	unsigned int i, j, n = 0, *ins;
	int r;

	for (i = 0; i < s->nr_out; i++)
		n += s->out[i].nr;
	ins = calloc(s->nr_in + 1, sizeof(*ins));
	outs = calloc(n + 1, sizeof(*outs));
	names = calloc(s->nr_m + 1, sizeof(*names));
	cnames = calloc(s->nr_m + 1, sizeof(*cnames));
	if (!ins || !outs || !names || !cnames) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0, j = 0; i < s->nr_in; i++)
		if (s->in[i].ch)
			ins[j++] = (unsigned int)s->env->chan_ids[
				s->env->g->chan[s->in[i].f->index] + s->inst];
	n = 0;
	for (i = 0; i < s->nr_out; i++)
		for (j = 0; s->out[i].ch && j < s->out[i].nr; j++, n++) {
			const struct dfg_flow_edge *f = s->out[i].f;
			unsigned int slot = s->env->g->chan[f->index] +
				(f->kind == DFG_FLOW_STRAIGHT ? s->inst : j);

			outs[n].chan = (__u32)s->env->chan_ids[slot];
			outs[n].slot = (__u32)dfg_chan_slot(s->out[i].ch[j]);
		}
	for (i = 0; i < s->nr_m; i++) {
		name_copy(cnames[i], fg->comps[s->m[i].comp].name);
		names[i] = cnames[i];
	}
	snprintf(name, sizeof(name), "%s.%u", s->ps->name, s->inst);
	name_copy(name, name);
	d.name = name;
	d.comp_names = names;
	d.nr_inputs = s->nr_chan_in;
	d.inputs = ins;
	d.nr_outputs = n;
	d.outputs = outs;
	r = dfg_sched_attach(s->env->graph_fd, &s->sched);
	if (!r)
		r = dfg_set_register(s->sched, &d, &s->kset);
	if (!r)
		s->page = dfg_set_page(s->kset);
out:
	free(ins);
	free(outs);
	free(names);
	free(cnames);
	return r;
}

int run_set_main(const struct run_env *env, unsigned int set,
		 unsigned int inst, int ready_fd, int go_fd)
{
	struct rt_set s = {
		.env = env,
		.ps = &env->g->plan->sets[set],
		.set = set,
		.inst = inst,
		.st = &env->sstats[env->g->sstat[set] + inst],
	};
	bool skip = false;
	int r;

	s.st->pid = getpid();
	r = setup(&s);
	if (!r) {
		r = sched_open(&s);
		if (r)
			set_fail(&s, r, dfg_comp_name(s.m[0].c),
				 "kernel set scheduler: %s", strerror(-r));
	}
	/* every endpoint is open before any process runs */
	run_barrier(ready_fd, go_fd);
	if (!r && env->resume_seq && env->state_dir)
		skip = run_state_is_done(env->state_dir, set, inst,
					 env->resume_seq) > 0;
	if (!r && skip) {
		r = already_done(&s);
		if (!r)
			/* taken from the module before it is given back */
			r = sched_next(&s, 0) < 0 ||
			    sched_next(&s, DFG_YIELD_EOF) < 0 ? -EIO : 0;
	} else if (!r) {
		start_profiling(&s);
		s.st->state = RUN_S_RUNNING;
		r = init_members(&s);
		if (r)
			sched_next(&s, DFG_YIELD_ERROR);
		else
			r = worker(&s);
	}
	s.st->state = r ? RUN_S_FAILED : RUN_S_DONE;
	prof_set = NULL;
	teardown(&s);
	if (r)
		return s.peer_failed ? RUN_EXIT_PEER : RUN_EXIT_FAILED;
	return 0;
}
