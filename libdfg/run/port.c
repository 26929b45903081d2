// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg run: a set's boundary flows on channels. A flow that leaves the
 * set puts the element into an arena buffer and queues its descriptor for
 * the channel of the downstream instance the flow kind picks; if the
 * element is the buffer this set received and is working on, unchanged,
 * that buffer is forwarded instead of copied; its descriptor, and those
 * queued behind it on the same channel, stay here until the component's
 * compute() returns, so that the input is valid for the whole call as
 * dfg_component(7) says (emitting it again copies it). An element whose
 * data lies in the arena but not in that buffer is one received earlier
 * and no longer the component's: an error. Queued descriptors that do
 * not fit their channel wait in a FIFO; beyond RUN_PEND_MAX the worker
 * blocks in the channel (a worker of a pool lends its place meanwhile,
 * rt_block_begin()). Inputs deliver what the channels bring, hold
 * back a source that reached a checkpoint (every source, and what is
 * still in the channels, once the set stopped at its stop mark), and end
 * an input when each of its producers has sent RUN_D_EOF.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "set.h"

#define RUN_RECV_BATCH		64
#define RUN_SEND_BATCH		64
#define RUN_PEND_MAX		16384	/* queued descriptors per channel */

/* ------------------------------------------------------------------------
 * Output: boundary flows
 * ------------------------------------------------------------------------
 */

unsigned int rt_prod_of(const struct rt_set *s,
			const struct dfg_flow_edge *f)
{
	return f->kind == DFG_FLOW_STRAIGHT ? 0 : s->inst;
}

/*
 * Send what is queued for channel @j; block only if @block, and then
 * only after a send that would not block found the channel full.
 */
int rt_out_flush(struct rt_set *s, struct rt_out *o, unsigned int j,
		 bool block)
{
	struct run_fifo *q = &o->pend[j];
	/* the forwarded input and what follows it wait for its delivery */
	unsigned int keep = o == s->hold_o && j == s->hold_j ? s->hold_n : 0;
	bool blocking = false;
	int r = 0;

	if (!o->ch)
		return 0;
	while (run_fifo_len(q) > keep) {
		unsigned int n = run_fifo_span(q, RUN_SEND_BATCH);

		if (n > run_fifo_len(q) - keep)
			n = run_fifo_len(q) - keep;

		r = dfg_chan_send(o->ch[j], run_fifo_peek(q), n,
				  blocking ? 0 : DFG_CHAN_NONBLOCK);
		if (r == -EAGAIN && block && !blocking) {
			rt_block_begin(s);
			blocking = true;
			continue;
		}
		if (r == -EAGAIN) {
			r = 0;
			break;
		}
		if (r < 0) {
			r = rt_fail(s, r, dfg_comp_name(s->m[0].c),
				    "sending to '%s': %s",
				    s->env->g->fg->comps[o->f->dst].name,
				    strerror(-r));
			break;
		}
		run_fifo_drop(q, (unsigned int)r);
		s->st->boundary_out += (unsigned int)r;
		r = 0;
	}
	if (blocking)
		rt_block_end(s);
	return r;
}

static int out_queue(struct rt_set *s, struct rt_out *o, unsigned int j,
		     const struct dfg_desc *d)
{
	struct run_fifo *q = &o->pend[j];
	int r = run_fifo_push(q, d);

	if (r)
		return rt_fail(s, r, dfg_comp_name(s->m[0].c),
			       "out of memory queueing output");
	if (o == s->hold_o && j == s->hold_j)
		s->hold_n++;
	if (run_fifo_len(q) >= RUN_SEND_BATCH)
		r = rt_out_flush(s, o, j, run_fifo_len(q) >= RUN_PEND_MAX);
	return r;
}

/* A control descriptor to every downstream instance. */
int rt_out_control(struct rt_set *s, struct rt_out *o, unsigned int kind,
		   __u64 tag)
{
	struct dfg_desc d = {
		.flags = kind | rt_prod_of(s, o->f) << RUN_D_PROD_SHIFT,
		.tag = tag,
	};
	unsigned int j;
	int r;

	for (j = 0; j < o->nr; j++) {
		r = o->ch ? out_queue(s, o, j, &d) :
			    rt_spool_put(s, o, j, kind, tag, NULL, 0);
		if (r)
			return r;
	}
	return 0;
}

/*
 * An arena buffer holding @e, for channel @j of @o: the received one if
 * unchanged, still ours and this is its last use, else a copy. Once
 * forwarded, the received buffer is held (rt_out_flush()) until its
 * delivery returns; a later emission of it, whole or in part, is copied
 * from it.
 */
static int elem_buf(struct rt_set *s, struct rt_out *o, unsigned int j,
		    const struct dfg_elem *e, __u64 *off)
{
	struct dfg_arena *a = s->env->arena;
	unsigned int tries = 0;
	__s64 b;
	void *p;

	if (s->cur_owned && !s->cur_uses_left && e->data == s->cur_data &&
	    e->len == s->cur_len) {
		s->cur_owned = false;
		s->hold_o = o;
		s->hold_j = j;
		s->hold_n = 0;	/* out_queue() counts it */
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
			break;
		if (tries == 1)
			rt_block_begin(s);
		for (i = 0; i < s->nr_out; i++)
			for (j = 0; j < s->out[i].nr; j++)
				if (rt_out_flush(s, &s->out[i], j, false))
					b = s->err;
		if (b != -ENOMEM)
			break;
		usleep(1000);
	}
	if (tries)
		rt_block_end(s);
	if (b < 0)
		return (int)b;
	p = dfg_arena_ptr(a, (__u64)b, e->len);
	if (e->len)
		memcpy(p, e->data, e->len);
	*off = (__u64)b;
	return 0;
}

/*
 * Whether @e's data lies in the arena outside the buffer being worked on:
 * a buffer the set received before, freed or passed on since (a
 * component kept an element past the call that handed it over).
 */
static bool elem_stale(const struct rt_set *s, const struct dfg_elem *e)
{
	uintptr_t base = (uintptr_t)dfg_arena_base(s->env->arena);
	uintptr_t p = (uintptr_t)e->data, cur = (uintptr_t)s->cur_data;

	if (p < base || p - base >= dfg_arena_size(s->env->arena))
		return false;
	return !cur || p < cur || p - cur > s->cur_len ||
	       e->len > s->cur_len - (p - cur);
}

int rt_out_put(struct rt_set *s, struct rt_out *o,
	       const struct dfg_elem *e)
{
	struct dfg_desc d = {
		.len = (__u32)e->len,
		.flags = RUN_D_DATA | rt_prod_of(s, o->f) << RUN_D_PROD_SHIFT,
		.tag = e->tag,
	};
	unsigned int j, first = 0;
	int r;

	if (e->len && elem_stale(s, e))
		return rt_fail(s, -EFAULT, s->env->g->fg->comps[o->f->src].name,
			       "emitted an element received in an earlier call (an element is valid only during the call that hands it over; keep a copy)");
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
				r = rt_spool_put(s, o, j, RUN_D_DATA, e->tag,
						 e->data, e->len);
				if (r)
					return r;
				continue;
			}
			s->cur_uses_left += j + 1 < o->nr;
			r = elem_buf(s, o, j, e, &d.off);
			s->cur_uses_left -= j + 1 < o->nr;
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
		return rt_spool_put(s, o, first, RUN_D_DATA, e->tag, e->data,
				    e->len);
	r = elem_buf(s, o, first, e, &d.off);
	if (r)
		return rt_fail(s, r, dfg_comp_name(s->m[0].c),
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
 * Input: descriptors from the channels
 * ------------------------------------------------------------------------
 */

static int in_data(struct rt_set *s, struct rt_in *in, const struct dfg_desc *d)
{
	struct dfg_elem e = { .len = d->len, .tag = d->tag };
	int r;

	e.data = dfg_chan_buf(in->ch, d);
	if (!e.data)
		return rt_fail(s, -EBADMSG, dfg_comp_name(in->to->c),
			       "bad descriptor from '%s'",
			       s->env->g->fg->comps[in->f->src].name);
	s->cur_data = e.data;
	s->cur_len = e.len;
	s->cur_off = d->off;
	s->cur_owned = true;
	r = rt_deliver(in->to, in->f->dst_port, &e);
	/* the next out_queue() or flush sends what was held */
	s->hold_o = NULL;
	s->hold_n = 0;
	if (s->cur_owned)
		dfg_buf_free(s->env->arena, d->off);
	s->cur_owned = false;
	s->cur_data = NULL;
	if (r < 0)
		return rt_member_fail(s, in->to, r);
	return 0;
}

/* A blip or the end of a source's stream. */
int rt_in_control(struct rt_set *s, struct rt_in *in, struct rt_src *src,
		  unsigned int kind, __u64 tag)
{
	int r;

	switch (kind) {
	case RUN_D_BLIP:
		src->at_seq = tag;
		if (tag != s->ckpt_seq + 1)
			return rt_fail(s, -EPROTO, dfg_comp_name(in->to->c),
				       "checkpoint %llu out of order",
				       (unsigned long long)tag);
		return rt_maybe_checkpoint(s);
	case RUN_D_EOF:
		src->eof = true;
		if (++in->nr_eof == in->nprod) {
			set_active(s, (int)in->to->idx);
			r = rt_done(in->to, dfg_comp_end_input(in->to->c,
							       in->f->dst_port));
			set_active(s, -1);
			if (r < 0)
				return rt_member_fail(s, in->to, r);
		}
		return rt_maybe_checkpoint(s);
	default:
		return rt_fail(s, -EBADMSG, dfg_comp_name(in->to->c),
			       "bad descriptor kind %u", kind);
	}
}

int rt_in_desc(struct rt_set *s, struct rt_in *in,
	       const struct dfg_desc *d)
{
	unsigned int p = d->flags >> RUN_D_PROD_SHIFT;
	struct rt_src *src;
	int r;

	if (p >= in->nprod)
		return rt_fail(s, -EBADMSG, dfg_comp_name(in->to->c),
			       "descriptor from unknown instance %u", p);
	src = &in->src[p];
	if (src->at_seq || src->eof || s->stopping) {
		if (src->eof)
			return rt_fail(s, -EBADMSG, dfg_comp_name(in->to->c),
				       "descriptor after end of stream");
		r = run_fifo_push(&src->stash, d);
		return r ? rt_fail(s, r, dfg_comp_name(in->to->c),
				   "out of memory") : 0;
	}
	if ((d->flags & RUN_D_KIND) == RUN_D_DATA)
		return in_data(s, in, d);
	return rt_in_control(s, in, src, d->flags & RUN_D_KIND, d->tag);
}

/* Up to @budget descriptors from input @in; returns how many, or -errno. */
int rt_in_pump(struct rt_set *s, struct rt_in *in, unsigned int budget)
{
	struct dfg_desc d[RUN_RECV_BATCH];
	unsigned int done = 0;
	int n, i, r;

	if (!in->ch)
		return rt_spool_pump(s, in, budget);
	/* stopped at its mark: what comes after stays in the channel */
	while (!in->closed && !s->stopping && done < budget) {
		n = dfg_chan_recv(in->ch, d, RUN_RECV_BATCH, DFG_CHAN_NONBLOCK);
		if (n == -EAGAIN)
			break;
		if (n == 0) {
			in->closed = true;
			if (in->nr_eof < in->nprod)
				return rt_fail(s, -EPIPE,
					dfg_comp_name(in->to->c),
					"input from '%s' ended early: an upstream process died",
					s->env->g->fg->comps[in->f->src].name);
			break;
		}
		if (n < 0)
			return rt_fail(s, n, dfg_comp_name(in->to->c),
				       "receiving from '%s': %s",
				       s->env->g->fg->comps[in->f->src].name,
				       strerror(-n));
		for (i = 0; i < n; i++) {
			r = rt_in_desc(s, in, &d[i]);
			if (r)
				return r;
		}
		done += (unsigned int)n;
	}
	return (int)done;
}
