/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg run: one set instance's process, shared by its files.
 *
 *   set.c    members, the emit hook (direct calls), set-up, the worker
 *            loop and the root protocol
 *   port.c   boundary flows on channels: outputs and inputs
 *   spool.c  boundary flows into a later phase, through spool files
 *   ckpt.c   checkpoints: alignment, taking, restoring
 */
#ifndef _DFG_RUN_SET_H
#define _DFG_RUN_SET_H

#include <stdbool.h>
#include <stdio.h>

#include <dfg/dfg.h>

#include <dfg/sched.h>

#include "../comp/comp_run.h"
#include "fifo.h"
#include "run.h"

struct rt_set;
struct rt_out;
struct run_pool;

/* One flow on an output port: a member of the set, or a boundary. */
struct rt_edge {
	struct rt_member	*to;
	unsigned int		port;
	struct rt_out		*out;
};

/*
 * An output port: its flows, and what it emitted since the counts were
 * last added to the shared stats area (rt_set_publish()). Counting once
 * per port and hop, here rather than in the emitter's and each
 * receiver's shared counters, keeps the hop's stores in this process's
 * own memory; a port's counts are its receivers' in the set too. The
 * port of a member with a step is not counted per element: count()
 * (set.c) makes its counts from what the member received and dropped.
 * @to, @to_port: the one flow of the port, when it goes to a member of
 * the set: the hop is then a single direct call.
 */
struct rt_port {
	struct rt_edge		*edge;
	unsigned int		nr;
	__u64			elems;
	struct rt_member	*to;
	unsigned int		to_port;
	/* apart from @elems: next to it, gcc pairs the two counts into
	 * vector instructions that take three times as many */
	__u64			bytes;
};

/*
 * What a member emitted to a run of members with a step, held so that the
 * run is called once per batch (rt_run(), set.c): the elements, their
 * bytes copied (an element is only valid while its emit runs) unless they
 * are in the buffer the set works on (rt_set.cur_data, valid until the
 * member's call returns), and the pointers handed to the steps. Passed on
 * when full and whenever a call into the member returns (rt_done()), so
 * that what it emitted has gone on, in order, by then, as with a direct
 * call per element.
 */
#define RT_BATCH	256
#define RT_BATCH_BYTES	(64 * 1024)

struct rt_batch {
	unsigned int		n;
	size_t			used;
	const struct dfg_elem	*v[RT_BATCH];
	struct dfg_elem		e[RT_BATCH];
	char			bytes[RT_BATCH_BYTES];
};

struct rt_member {
	struct rt_set		*set;
	unsigned int		idx;		/* in set->m */
	unsigned int		comp;		/* in fg->comps */
	struct dfg_comp		*c;
	struct rt_port		*out;		/* per output port */
	unsigned int		nr_out;
	struct run_comp_stats	*st;
	bool			step;		/* has a step (comp_run.h) */
	struct rt_member	*next;		/* with @step: the member its
						 * port's one flow reaches, if
						 * that has a step too */
	struct rt_batch		*batch;		/* without @step, one output
						 * whose one flow reaches a
						 * member with a step: what
						 * it emitted there */
	/* since the last count(): what came from a boundary (rt_deliver())
	 * and, with @step, what its step passed nothing on for (its bytes
	 * are in the step's c->step_grew) */
	__u64			in_elems, in_bytes;
	__u64			drop_elems;
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
	struct dfg_sched	*sched;		/* its scheduler client */
	bool			own_sched;	/* @sched is this set's alone */
	struct run_pool		*pool;		/* NULL: a process of its own */
	struct dfg_set		*kset;		/* the set, registered */
	struct dfg_set_page	*page;		/* its shared page */
	bool			done;		/* yielded EOF */
	bool			started;	/* pool: rt_set_start() done */
	bool			skip;		/* pool: finished before the
						 * resume point: only end its
						 * streams */
	int			start_err;	/* rt_set_start()'s */

	/* the buffer being worked on, while its compute() runs */
	const void		*cur_data;
	size_t			cur_len;
	__u64			cur_off;
	bool			cur_owned;
	/* uses of the element still to come after the current one (a port
	 * with several flows, a broadcast): while non-zero the buffer is
	 * copied, not forwarded, since a forwarded buffer may be consumed
	 * and freed before the later uses read it */
	unsigned int		cur_uses_left;
	/* the received buffer once forwarded (elem_buf()): the queue its
	 * descriptor went to and how many descriptors at that queue's tail,
	 * it and those queued after it, stay unsent until the delivery
	 * returns, so that the buffer is still the component's for the rest
	 * of its compute() (a second emission of it is copied from it) */
	struct rt_out		*hold_o;
	unsigned int		hold_j;
	unsigned int		hold_n;

	struct rt_member	*failed;	/* innermost failing member */
	int			err;
	char			msg[DFG_COMP_ERRMSG_MAX];
	__u64			ckpt_seq;	/* last checkpoint taken */
	bool			peer_failed;	/* stopped by another's failure */
	/* took the checkpoint of its stop mark (run_set_stats.stop_at):
	 * consumes and produces nothing more; @stopped once what it
	 * queued before is sent */
	bool			stopping;
	bool			stopped;
};

/*
 * The member called now (-1: none), in the set's page: the module samples
 * it, and so does SIGPROF (set.c), for each member's share of the CPU.
 */
static inline void set_active(struct rt_set *s, int idx)
{
	if (s->page)
		dfg_set_enter(s->page, idx < 0 ? DFG_SET_COMP_NONE :
			      (unsigned int)idx);
}

/* set.c */
int rt_fail(struct rt_set *s, int err, const char *comp, const char *fmt,
	    ...) __attribute__((format(printf, 4, 5)));
int rt_member_fail(struct rt_set *s, struct rt_member *m, int err);

/*
 * set.c: @m's batch goes on (m->batch->n > 0): 0, or the -errno its emits
 * would have returned, also recorded as theirs (c->emit_err).
 */
int rt_batch_flush(struct rt_member *m);

/*
 * After a call into @m that returned @r: what it emitted into its batch
 * goes on before anything else happens. A failure there came first in
 * element order, so it is the result.
 */
static inline int rt_done(struct rt_member *m, int r)
{
	int f;

	if (__builtin_expect(!m->batch || !m->batch->n, 1))
		return r;
	f = rt_batch_flush(m);
	return f < 0 ? f : r;
}

/*
 * @e into input @port of member @t, which is now the active one, until
 * it returns. Inline: inside a set it is the whole cost of a hop. The set
 * is registered (a page) before any member runs.
 */
static inline int rt_call(struct rt_member *t, unsigned int port,
			  const struct dfg_elem *e)
{
	struct rt_set *s = t->set;
	unsigned int prev = dfg_set_enter(s->page, t->idx);
	int r;

	r = __dfg_comp_compute(t->c, port, e);
	dfg_set_leave(s->page, prev);
	r = rt_done(t, r);
	if (__builtin_expect(r < 0, 0) && !s->failed)
		s->failed = t;
	return r;
}

/* @e into the member with a step @t, and on down its run (set.c). */
int rt_steps(struct rt_member *t, const struct dfg_elem *e);

/*
 * What came on a boundary (port.c, spool.c), counted as it arrives, in
 * the set's own memory until count() (set.c).
 */
static inline int rt_deliver(struct rt_member *t, unsigned int port,
			     const struct dfg_elem *e)
{
	t->in_elems++;
	t->in_bytes += e->len;
	if (t->step)
		return rt_steps(t, e);
	return rt_call(t, port, e);
}

/*
 * set.c: a set instance, in a process of its own (run_set_main()) or one
 * of many in a worker pool (pool.c). open() builds it and registers it
 * with @sched; step() runs one quantum of at most @budget elements (the
 * first one of a pool's set also initialises it, or only ends its streams
 * when it finished before the resume point) and returns how the set
 * yields (DFG_YIELD_*) or -errno, after which it must be given back with
 * DFG_YIELD_ERROR; publish(), once per quantum, adds what its ports
 * counted to the shared stats area and copies the counts to the
 * module's page.
 */
int rt_set_open(struct rt_set *s, const struct run_env *env,
		unsigned int set, unsigned int inst, struct dfg_sched *sched,
		struct run_pool *pool);
int rt_set_step(struct rt_set *s, unsigned long budget);
/*
 * A pool's set instance back in service after the start barrier: its
 * members initialised and its checkpoint restored, or, when it finished
 * before the resume point, only marked so (its first quantum ends its
 * streams). The pool starts each before its workers run, so that a set
 * is ready for input (run_set_stats.resumed_ns) whenever the scheduler
 * hands it out; step() starts it if not. Returns 0 or -errno, also from
 * step() (the set then yields DFG_YIELD_ERROR there).
 */
int rt_set_start(struct rt_set *s);
void rt_set_publish(struct rt_set *s);
void rt_set_close(struct rt_set *s);
void rt_set_prof(struct rt_set *s);
void rt_start_profiling(void);

/*
 * pool.c: a worker about to block in a channel while it holds @s's set
 * (a full channel inside one compute() call, a full arena) lends its
 * place in the pool to a spare worker, so that the set it waits for can
 * run, and takes it back after.
 */
void run_pool_lend(struct run_pool *p);
void run_pool_reclaim(struct run_pool *p);

static inline void rt_block_begin(struct rt_set *s)
{
	if (s->pool)
		run_pool_lend(s->pool);
}

static inline void rt_block_end(struct rt_set *s)
{
	if (s->pool)
		run_pool_reclaim(s->pool);
}

/* port.c */
unsigned int rt_prod_of(const struct rt_set *s, const struct dfg_flow_edge *f);
int rt_out_flush(struct rt_set *s, struct rt_out *o, unsigned int j,
		 bool block);
int rt_out_control(struct rt_set *s, struct rt_out *o, unsigned int kind,
		   __u64 tag);
int rt_out_put(struct rt_set *s, struct rt_out *o, const struct dfg_elem *e);
int rt_in_desc(struct rt_set *s, struct rt_in *in, const struct dfg_desc *d);
int rt_in_control(struct rt_set *s, struct rt_in *in, struct rt_src *src,
		  unsigned int kind, __u64 tag);
int rt_in_pump(struct rt_set *s, struct rt_in *in, unsigned int budget);

/* spool.c */
FILE *rt_spool_open(struct rt_set *s, const struct dfg_flow_edge *f,
		    unsigned int inst, unsigned int prod, bool out);
int rt_spool_put(struct rt_set *s, struct rt_out *o, unsigned int j,
		 unsigned int kind, __u64 tag, const void *data, size_t len);
int rt_spool_flush(struct rt_set *s, struct rt_out *o, bool sync);
int rt_spool_pump(struct rt_set *s, struct rt_in *in, unsigned int budget);

/* ckpt.c */
__u64 rt_ckpt_every(const struct rt_set *s);
int rt_ckpt_restore(struct rt_set *s, __u64 seq);
int rt_maybe_checkpoint(struct rt_set *s);
void rt_stop_wait(struct rt_set *const *sets, unsigned int n);

#endif /* _DFG_RUN_SET_H */
