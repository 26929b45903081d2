// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg run: one set instance, in a process of its own or in a worker
 * pool (pool.c) with others.
 *
 * Members call each other directly: the emit hook of a member looks up
 * the flows on the output port and, for a flow inside the set, calls the
 * downstream member's compute() with the very element it was given (the
 * data flow is control flow). A flow that leaves the set puts the
 * element into an arena buffer and queues its descriptor for the
 * channel of the downstream instance the flow kind picks; if the element
 * is the buffer this set received and is working on, unchanged, that
 * buffer is forwarded instead of copied. Members with a step (map, filter
 * without rejects; comp_run.h) that follow one another are called in
 * turn from one frame (rt_steps()) rather than each from the emit of the
 * one before.
 *
 * Descriptors (struct dfg_desc) carry a kind and the sending instance in
 * @flags (RUN_D_*), the element's tag or the blip's sequence in @tag.
 * Every producer ends its stream with RUN_D_EOF, so a stream that ends
 * without it means a dead upstream process.
 *
 * A worker asks the scheduling point (sched.c) for a set, runs one
 * quantum of it (rt_set_step(): queued output first, then the roots'
 * run() and the channels' descriptors, each bounded), and yields; in a
 * process of its own the one worker loop (worker()) has one set to ask
 * for, in a pool each worker thread gets any of the pool's. Queued
 * descriptors that do not fit their channel wait in a FIFO; beyond
 * RUN_PEND_MAX the worker blocks in the channel, which is the
 * backpressure inside a single compute() call that emits a lot (a sort's
 * shutdown); a pool's worker lends its place meanwhile (pool.c).
 *
 * Boundary flows are in port.c (channels) and spool.c (between
 * phases), checkpoints in ckpt.c.
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

#include "set.h"

#define RUN_ROOT_BUDGET		256	/* elements per run() call */
#define RUN_QUANTUM		4096	/* elements per quantum */
#define RUN_PRIORITY		(DFG_SET_PRIO_MAX / 2)
#define RUN_PROF_US		5000	/* SIGPROF sampling period */

/*
 * The set the thread runs now, for SIGPROF sampling: ITIMER_PROF counts
 * the process's CPU time and its signal goes to the thread that used it,
 * which samples the member its own set calls (the active one of its
 * page, set_active()). Read in the signal handler: initial-exec, never
 * allocated on first use.
 */
static __thread struct rt_set *prof_set
	__attribute__((tls_model("initial-exec")));

static void prof_tick(int sig)
{
	struct rt_set *s = prof_set;
	unsigned int i;

	(void)sig;
	if (!s || !s->page)
		return;
	i = __atomic_load_n(&s->page->active, __ATOMIC_RELAXED);
	if (i < s->nr_m)
		__atomic_fetch_add(&s->m[i].st->samples, 1,
				   __ATOMIC_RELAXED);
}

/* The calling thread runs @s from now on (NULL: none). */
void rt_set_prof(struct rt_set *s)
{
	prof_set = s;
}

int rt_fail(struct rt_set *s, int err, const char *comp,
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
int rt_member_fail(struct rt_set *s, struct rt_member *m, int err)
{
	const char *msg;

	if (s->err)
		return s->err;
	if (s->failed)
		m = s->failed;
	msg = dfg_comp_errmsg(m->c);
	return rt_fail(s, err, dfg_comp_name(m->c), "%s",
		       msg && *msg ? msg : strerror(-err));
}

/* ------------------------------------------------------------------------
 * The emit hook: direct calls inside the set
 * ------------------------------------------------------------------------
 */

/*
 * A port with several flows, or one leaving the set: each in turn. Out of
 * line, so that the one-call hop below keeps its frame small.
 */
static __attribute__((noinline)) int rt_emit_each(struct rt_member *m,
						  struct rt_port *p,
						  const struct dfg_elem *e)
{
	unsigned int k;
	int r;

	for (k = 0; k < p->nr; k++) {
		struct rt_edge *ed = &p->edge[k];
		bool more = k + 1 < p->nr;

		m->set->cur_uses_left += more;
		if (ed->out)
			r = rt_out_put(m->set, ed->out, e);
		else if (ed->to->step)
			r = rt_steps(ed->to, e);
		else
			r = rt_call(ed->to, ed->port, e);
		m->set->cur_uses_left -= more;
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * The run of members with a step that @t begins ends with @t: the @n
 * elements of @v go down its port's flows, one after the other, until one
 * fails. Returns 0 or -errno, which its emit would have recorded.
 */
static __attribute__((noinline)) int rt_steps_out(struct rt_member *t,
						  const struct dfg_elem **v,
						  unsigned int n)
{
	struct rt_port *p = &t->out[0];
	unsigned int i;
	int r = 0;

	for (i = 0; i < n && r >= 0; i++)
		r = p->to ? rt_call(p->to, p->to_port, v[i]) :
			    rt_emit_each(t, p, v[i]);
	if (r < 0)	/* as __dfg_emit() records it */
		t->c->emit_err = r;
	return r < 0 ? r : 0;
}

/*
 * The batch @v[0..@n) into input 0 of @t, which has a step, and on: the
 * step of each member of a run of such members is called once for the
 * whole batch, on what the one before passed on, in this one frame, until
 * nothing is left or the batch reaches a member without a step or the
 * set's boundary, where its elements go one by one (rt_steps_out()). Each
 * member is the active one while its step runs. What a hop leaves undone
 * per element is done elsewhere: the checks of a compute() call when the
 * member's phase or input changes (c->step_now, comp_run.h), the counts
 * of its port per quantum from what the member received and dropped
 * (count()). So a hop costs per element what the member's step does for
 * it (nothing for a map of $0), and per batch one call.
 *
 * A member whose step fails has passed on what came before the failing
 * element; that goes on down the run first, as it would have one element
 * at a time, and a failure further down on it is the one reported. The
 * failure is then the same as through rt_call().
 */
static int rt_run(struct rt_member *t, const struct dfg_elem **v,
		  unsigned int n)
{
	struct dfg_set_page *pg = t->set->page;
	unsigned int prev = dfg_set_enter(pg, t->idx), k;
	struct rt_member *failed = NULL;
	int r = 0, err = 0;

	for (;;) {
		k = __dfg_comp_step(t->c, v, n);
		t->drop_elems += n - k;
		if (__builtin_expect(t->c->step_err != 0, 0)) {
			err = t->c->step_err;
			t->c->step_err = 0;
			failed = t;
		}
		n = k;
		if (!n)
			break;
		if (__builtin_expect(!t->next, 0)) {
			r = rt_steps_out(t, v, n);
			break;
		}
		t = t->next;
		dfg_set_leave(pg, t->idx);	/* t is the active one now */
	}
	dfg_set_leave(pg, prev);
	if (__builtin_expect(r >= 0 && failed != NULL, 0)) {
		r = err;
		t = failed;
	}
	if (__builtin_expect(r < 0, 0) && !t->set->failed)
		t->set->failed = t;
	return r < 0 ? r : 0;
}

int rt_steps(struct rt_member *t, const struct dfg_elem *e)
{
	const struct dfg_elem *v[1] = { e };

	return rt_run(t, v, 1);
}

int rt_batch_flush(struct rt_member *m)
{
	struct rt_batch *b = m->batch;
	unsigned int n = b->n;
	int r;

	b->n = 0;
	b->used = 0;
	r = rt_run(m->out[0].to, b->v, n);
	if (r < 0)	/* as __dfg_emit() records it */
		m->c->emit_err = r;
	return r;
}

/*
 * @e into @m's batch (rt_emit()): passed on first if full; an element
 * too big for it goes on by itself, uncopied, after what is held.
 */
static __attribute__((noinline)) int rt_batch_slow(struct rt_member *m,
						   const struct dfg_elem *e)
{
	struct rt_batch *b = m->batch;
	int r = b->n ? rt_batch_flush(m) : 0;

	if (r < 0)
		return r;
	if (e->len > sizeof(b->bytes)) {
		r = rt_steps(m->out[0].to, e);
		if (r < 0)
			m->c->emit_err = r;
		return r;
	}
	return 1;	/* room now */
}

/* @e into @m's batch; 0 or the -errno of passing the batch on. */
static inline int rt_batch_add(struct rt_member *m, const struct dfg_elem *e)
{
	struct rt_batch *b = m->batch;
	const struct rt_set *s = m->set;
	const char *d = e->data;
	struct dfg_elem *x;
	int r;

	if (__builtin_expect(b->n == RT_BATCH ||
			     e->len > sizeof(b->bytes) - b->used, 0)) {
		r = rt_batch_slow(m, e);
		if (r <= 0)
			return r;
	}
	x = &b->e[b->n];
	x->data = d;
	x->len = e->len;
	x->tag = e->tag;
	/* the buffer the set works on stays until the call returns */
	if (!s->cur_data || d < (const char *)s->cur_data ||
	    d + e->len > (const char *)s->cur_data + s->cur_len) {
		x->data = b->bytes + b->used;
		if (e->len)
			memcpy(b->bytes + b->used, d, e->len);
		b->used += e->len;
	}
	b->v[b->n++] = x;
	return 0;
}

static int rt_emit(struct dfg_comp *c, void *cookie, unsigned int port,
		   const struct dfg_elem *e)
{
	struct rt_member *m = cookie;
	struct rt_port *p = &m->out[port];	/* dfg_emit() checked @port */

	(void)c;
	p->elems++;
	p->bytes += e->len;
	if (__builtin_expect(p->to != NULL, 1)) {
		if (m->batch)
			return rt_batch_add(m, e);
		if (p->to->step)
			return rt_steps(p->to, e);
		return rt_call(p->to, p->to_port, e);
	}
	return rt_emit_each(m, p, e);
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
	m->idx = i;
	m->comp = fc->index;
	m->st = &s->env->cstats[g->cstat[fc->index] + s->inst];
	m->root = fc->nin_flows == 0;
	r = dfg_comp_create(g->types[fc->index], &a, &m->c);
	if (r)
		return rt_fail(s, r, fc->name, "cannot create: %s",
			       strerror(-r));
	dfg_comp_set_emit(m->c, rt_emit, m);
	/* one input: a step's flows in all go to input 0 */
	m->step = m->c->step && fc->nin == 1 && fc->nout == 1;
	m->out = calloc(fc->nout ? fc->nout : 1, sizeof(*m->out));
	if (!m->out)
		return rt_fail(s, -ENOMEM, fc->name, "out of memory");
	m->nr_out = fc->nout;
	for (p = 0; p < fc->nout; p++) {
		m->out[p].nr = fc->out[p].nflows;
		m->out[p].edge = calloc(fc->out[p].nflows + 1,
					sizeof(*m->out[p].edge));
		if (!m->out[p].edge)
			return rt_fail(s, -ENOMEM, fc->name, "out of memory");
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
		return rt_fail(s, -ENOMEM, g->fg->comps[f->src].name,
			       "out of memory");
	for (j = 0; o->spool && j < o->nr; j++) {
		unsigned int to = f->kind == DFG_FLOW_STRAIGHT ? s->inst : j;

		o->spool[j] = rt_spool_open(s, f, to, rt_prod_of(s, f), true);
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
			return rt_fail(s, r, g->fg->comps[f->src].name,
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
		return rt_fail(s, -ENOMEM, g->fg->comps[f->dst].name,
			       "out of memory");
	if (run_flow_spooled(g, f)) {
		for (p = 0; p < in->nprod; p++) {
			in->src[p].spool = rt_spool_open(s, f, s->inst, p,
							 false);
			if (!in->src[p].spool)
				return s->err;
		}
		return 0;
	}
	s->nr_chan_in++;
	r = dfg_chan_open(s->env->graph_fd, (unsigned int)s->env->chan_ids[slot],
			  DFG_CHAN_CONSUMER, s->env->arena, &in->ch);
	if (r)
		return rt_fail(s, r, g->fg->comps[f->dst].name,
			       "channel from '%s': %s",
			       g->fg->comps[f->src].name, strerror(-r));
	return 0;
}

static int setup(struct rt_set *s)
{
	const struct dfg_flow *fg = s->env->g->fg;
	unsigned int i, k;
	int r;

	s->nr_m = s->ps->nmembers;
	s->m = calloc(s->nr_m, sizeof(*s->m));
	s->nr_in = s->ps->nin_flows;
	s->in = calloc(s->nr_in + 1, sizeof(*s->in));
	s->nr_out = s->ps->nout_flows;
	s->out = calloc(s->nr_out + 1, sizeof(*s->out));
	if (!s->m || !s->in || !s->out)
		return rt_fail(s, -ENOMEM, fg->comps[s->ps->members[0]].name,
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
					return rt_fail(s, -EINVAL, fc->name,
						       "flow to '%s' has no channel",
						       fg->comps[f->dst].name);
			}
	}
	/* a port whose one flow stays in the set: one direct call */
	for (i = 0; i < s->nr_m; i++)
		for (k = 0; k < s->m[i].nr_out; k++) {
			struct rt_port *p = &s->m[i].out[k];

			if (p->nr == 1 && p->edge[0].to) {
				p->to = p->edge[0].to;
				p->to_port = p->edge[0].port;
				if (s->m[i].step && p->to->step)
					s->m[i].next = p->to;
			}
		}
	/*
	 * a member whose one output's one flow starts a run of steps emits
	 * into a batch; with one output, what it emits goes that one way
	 * in order, so holding it until its call returns changes no order
	 */
	for (i = 0; i < s->nr_m; i++) {
		struct rt_member *m = &s->m[i];

		if (m->step || m->nr_out != 1 || !m->out[0].to ||
		    !m->out[0].to->step)
			continue;
		m->batch = malloc(sizeof(*m->batch));
		if (!m->batch)
			return rt_fail(s, -ENOMEM, fg->comps[m->comp].name,
				       "out of memory");
		m->batch->n = 0;
		m->batch->used = 0;
	}
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
			return rt_member_fail(s, &s->m[i], r);
	}
	set_active(s, -1);
	if (s->env->resume_seq)
		return rt_ckpt_restore(s, s->env->resume_seq);
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
		r = rt_done(&s->m[i], dfg_comp_shutdown(s->m[i].c));
		if (r < 0)
			return rt_member_fail(s, &s->m[i], r);
	}
	set_active(s, -1);
	for (i = 0; i < s->nr_out; i++) {
		r = rt_out_control(s, &s->out[i], RUN_D_EOF, 0);
		for (j = 0; !r && j < s->out[i].nr; j++)
			r = rt_out_flush(s, &s->out[i], j, true);
		/* complete before the done marker says so */
		if (!r && !s->out[i].ch)
			r = rt_spool_flush(s, &s->out[i], s->env->state_dir);
		if (r)
			return r;
	}
	if (s->env->state_dir) {
		r = run_state_done(s->env->state_dir, s->set, s->inst,
				   s->ckpt_seq);
		if (r)
			return rt_fail(s, r, dfg_comp_name(s->m[0].c),
				       "checkpoint directory: %s",
				       strerror(-r));
	}
	return 0;
}

/* What @m emitted since its ports' counts were last published. */
static __u64 emitted(const struct rt_member *m)
{
	__u64 n = 0;
	unsigned int p;

	for (p = 0; p < m->nr_out; p++)
		n += m->out[p].elems;
	return n;
}

/* One root's run() under the root protocol; returns elements or -errno. */
static int pump_root(struct rt_set *s, struct rt_member *m)
{
	unsigned long budget = RUN_ROOT_BUDGET;
	__u64 before = m->root_count, sent = emitted(m);
	const struct dfg_blip *b;
	int code, r;

	if (s->stopping)
		return 0;	/* stopped at its mark: nothing past it */
	if (rt_ckpt_every(s)) {
		__u64 mark = (s->ckpt_seq + 1) * rt_ckpt_every(s);

		if (m->root_count >= mark || m->ckpt_asked)
			return 0;	/* waits for the checkpoint */
		if (mark - m->root_count < budget)
			budget = (unsigned long)(mark - m->root_count);
	} else if (m->ckpt_asked) {
		return 0;
	}
	set_active(s, (int)m->idx);
	code = dfg_comp_run(m->c, budget);
	set_active(s, -1);
	/* what it emitted goes on first; a failure there came first */
	if (rt_done(m, 0) < 0)
		code = DFG_ERROR;
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
			r = rt_done(&s->m[i],
				    dfg_comp_process_blip(s->m[i].c, b));
			if (r < 0)
				return rt_member_fail(s, &s->m[i], r);
		}
		set_active(s, -1);
		break;
	case DFG_ERROR:
	default:
		return rt_member_fail(s, m, code < 0 ? code : -EIO);
	}
	/* publishing, which clears the ports' counts, is between quanta */
	m->root_count += emitted(m) - sent;
	r = rt_maybe_checkpoint(s);
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
			r = rt_out_flush(s, &s->out[i], j, false);
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
		r = rt_in_pump(s, &s->in[i], (unsigned int)(budget - work));
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

/*
 * What the ports counted into the shared stats area: a port's emits are
 * its member's output and the input of each member its flows reach in
 * the set; a boundary's receiver counts its own. The port of a member
 * with a step (not counted per element, rt_steps()) emitted what the
 * member received less what it dropped, in bytes with what its step
 * added; a member's feeders come before it in s->m (topological order),
 * so what it received is known when its turn comes.
 */
static void count(struct rt_set *s)
{
	unsigned int i, p, k;

	for (i = 0; i < s->nr_m; i++) {
		struct rt_member *m = &s->m[i];

		if (m->step) {
			struct rt_port *o = &m->out[0];

			o->elems += m->in_elems - m->drop_elems;
			o->bytes += m->in_bytes + m->c->step_grew;
			m->c->step_grew = 0;
		}
		m->st->in_elems += m->in_elems;
		m->st->in_bytes += m->in_bytes;
		m->in_elems = m->in_bytes = 0;
		m->drop_elems = 0;
		for (p = 0; p < m->nr_out; p++) {
			struct rt_port *o = &m->out[p];

			m->st->out_elems += o->elems;
			m->st->out_bytes += o->bytes;
			for (k = 0; k < o->nr; k++) {
				struct rt_member *t = o->edge[k].to;

				if (!t)
					continue;
				t->in_elems += o->elems;
				t->in_bytes += o->bytes;
			}
			o->elems = 0;
			o->bytes = 0;
		}
	}
}

/* The shared stats area, and the module's page, get the counts. */
void rt_set_publish(struct rt_set *s)
{
	unsigned int i;

	count(s);
	if (!s->page)
		return;

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

static int already_done(struct rt_set *s);

int rt_set_start(struct rt_set *s)
{
	if (s->started)
		return s->start_err;
	s->started = true;
	if (s->env->resume_seq && s->env->state_dir &&
	    run_state_is_done(s->env->state_dir, s->set, s->inst,
			      s->env->resume_seq) > 0) {
		s->skip = true;
	} else {
		s->st->state = RUN_S_RUNNING;
		s->start_err = init_members(s);
	}
	if (!s->start_err)
		s->st->resumed_ns = run_now_ns();
	return s->start_err;
}

/*
 * Stopped at its stop mark (rt_maybe_checkpoint()): what it queued before
 * goes out (checkpoint K's blip among it), then it leaves the scheduler
 * as done (DFG_YIELD_EOF: no end of stream, no done marker) and is
 * stopped; its process waits for the coordinator (rt_stop_wait()).
 */
static int stop_step(struct rt_set *s)
{
	int r = flush_outputs(s);

	if (r)
		return r;
	s->stopped = true;
	__atomic_store_n(&s->st->state, RUN_S_STOPPED, __ATOMIC_RELEASE);
	return DFG_YIELD_EOF;
}

int rt_set_step(struct rt_set *s, unsigned long budget)
{
	int r = rt_set_start(s);

	if (r)
		return r;
	if (s->skip) {
		s->skip = false;
		r = already_done(s);
		if (!r)
			s->done = true;
		return r ? r : DFG_YIELD_EOF;
	}
	if (s->stopping)
		return stop_step(s);
	if (!s->st->runs)
		s->st->started_ns = run_now_ns();
	s->st->runs++;
	r = quantum(s, budget);
	if (r >= 0 && r != DFG_YIELD_EOF && s->stopping)
		r = stop_step(s);
	if (r == DFG_YIELD_INPUT_EMPTY || r == DFG_YIELD_OUTPUT_FULL)
		s->st->parks++;
	if (r == DFG_YIELD_EOF)
		s->done = true;
	return r;
}

static int worker(struct rt_set *s)
{
	unsigned int reason = 0;
	long q;
	int r;

	for (;;) {
		rt_set_publish(s);
		q = sched_next(s, reason);
		if (q == 0)
			return 0;
		if (q == -EIO && !s->err) {
			/* another set failed the graph: it reports why */
			s->peer_failed = true;
			return rt_fail(s, (int)q, dfg_comp_name(s->m[0].c),
				       "stopped: the graph failed");
		}
		if (q < 0)
			return rt_fail(s, (int)q, dfg_comp_name(s->m[0].c),
				       "scheduler: %s", strerror((int)-q));
		r = rt_set_step(s, (unsigned long)q);
		if (r < 0) {
			sched_next(s, DFG_YIELD_ERROR);
			return r;
		}
		reason = (unsigned int)r;
	}
}

void rt_set_close(struct rt_set *s)
{
	unsigned int i, j;

	count(s);	/* what the last quantum counted */
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
		free(s->m[i].batch);
	}
	free(s->m);
	free(s->in);
	free(s->out);
	if (s->own_sched)
		dfg_sched_detach(s->sched);
	s->m = NULL;
	s->in = NULL;
	s->out = NULL;
	s->nr_m = s->nr_in = s->nr_out = 0;
}

/* A set that finished before the resume point: only end its streams. */
static int already_done(struct rt_set *s)
{
	unsigned int i, j;
	int r;

	for (i = 0; i < s->nr_out; i++) {
		if (!s->out[i].ch)
			continue;	/* its spool files are complete */
		r = rt_out_control(s, &s->out[i], RUN_D_EOF, 0);
		for (j = 0; !r && j < s->out[i].nr; j++)
			r = rt_out_flush(s, &s->out[i], j, true);
		if (r)
			return r;
	}
	return 0;
}

/* SIGPROF sampling of the process's CPU time (prof_tick()). */
void rt_start_profiling(void)
{
	struct itimerval it = {
		.it_interval = { .tv_usec = RUN_PROF_US },
		.it_value = { .tv_usec = RUN_PROF_US },
	};
	struct sigaction sa = { .sa_handler = prof_tick,
				.sa_flags = SA_RESTART };

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
static int sched_open(struct rt_set *s, struct dfg_sched *sched)
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
	r = 0;
	if (sched) {
		s->sched = sched;
	} else {
		r = dfg_sched_attach(s->env->graph_fd, &s->sched);
		s->own_sched = !r;
	}
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

int rt_set_open(struct rt_set *s, const struct run_env *env,
		unsigned int set, unsigned int inst, struct dfg_sched *sched,
		struct run_pool *pool)
{
	int r;

	memset(s, 0, sizeof(*s));
	s->env = env;
	s->ps = &env->g->plan->sets[set];
	s->set = set;
	s->inst = inst;
	s->st = &env->sstats[env->g->sstat[set] + inst];
	s->pool = pool;
	s->st->pid = getpid();
	r = setup(s);
	if (!r) {
		r = sched_open(s, sched);
		if (r)
			rt_fail(s, r, dfg_comp_name(s->m[0].c),
				"kernel set scheduler: %s", strerror(-r));
	}
	return r;
}

int run_set_main(const struct run_env *env, unsigned int set,
		 unsigned int inst, int ready_fd, int go_fd)
{
	struct rt_set s;
	bool skip = false;
	int r;

	r = rt_set_open(&s, env, set, inst, NULL, NULL);
	/* every endpoint is open before any process runs */
	run_barrier(ready_fd, go_fd);
	if (!r && env->resume_seq && env->state_dir)
		skip = run_state_is_done(env->state_dir, set, inst,
					 env->resume_seq) > 0;
	if (!r && skip) {
		r = already_done(&s);
		s.st->resumed_ns = run_now_ns();
		if (!r)
			/* taken from the module before it is given back */
			r = sched_next(&s, 0) < 0 ||
			    sched_next(&s, DFG_YIELD_EOF) < 0 ? -EIO : 0;
	} else if (!r) {
		rt_start_profiling();
		rt_set_prof(&s);
		s.started = true;
		s.st->state = RUN_S_RUNNING;
		r = init_members(&s);
		if (!r)
			s.st->resumed_ns = run_now_ns();
		if (r)
			sched_next(&s, DFG_YIELD_ERROR);
		else
			r = worker(&s);
	}
	if (!s.stopped)
		s.st->state = r ? RUN_S_FAILED : RUN_S_DONE;
	if (s.peer_failed)
		s.st->flags |= RUN_SF_PEER;
	rt_set_prof(NULL);
	if (!r && s.stopped) {
		struct rt_set *sp = &s;

		rt_stop_wait(&sp, 1);
	}
	rt_set_close(&s);
	if (r)
		return s.peer_failed ? RUN_EXIT_PEER : RUN_EXIT_FAILED;
	return s.stopped ? RUN_EXIT_STOPPED : 0;
}
