// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg run: a worker pool, the way the kernel set scheduler was built
 * to be used. One process holds many set instances, registered through
 * one scheduler client; a few worker threads (one per allowed CPU by
 * default) each ask the module for the next runnable set (SCHED_NEXT,
 * which carries the yield of the set it ran), run it for one quantum and
 * give it back with the reason it stopped: its quantum, an empty input or
 * a full output (the module then watches that channel and makes the set
 * runnable again when it changes), its end, or an error. The module
 * decides which set runs on which worker, by virtual time and priority;
 * a set never runs on two workers at once.
 *
 * Threads, not processes: a set's state (its members' memory, its FIFOs,
 * its channel mappings) lives in the address space that set it up, so a
 * set can move from one worker to another only between threads. What
 * must not share an address space (plugins, exec components, --isolate)
 * still gets a process of its own (exec.c).
 *
 * Waits. A worker waits for the module on its thread's io_uring ring
 * (core/wait.c, dfg_wait_ring()), through ioctl when it has none
 * (DFG_NO_URING, io_uring disabled). A set's code never waits on its
 * channels but in two places where one compute() call produces more than
 * its channel and the arena hold (rt_out_flush() past RUN_PEND_MAX, the
 * end of stream; elem_buf() on a full arena): the worker then blocks while
 * it holds the set. So that the set it waits for can run even when every
 * worker is blocked so, a blocking worker lends its place: a spare thread
 * (parked, or started) takes it, and the worker, once unblocked, finishes
 * its quantum and then parks as a spare itself while there are more
 * workers than the pool's size (Go's runtime hands its P over the same
 * way around a blocking system call).
 *
 * Locking: run_pool.lock (a mutex) guards the counts, the thread list and
 * @stop; nobody holds it while it runs a set or waits in the module.
 *
 * Failure: a set whose quantum fails gives itself back with
 * DFG_YIELD_ERROR, which fails the graph in the module: every SCHED_NEXT
 * of every client then ends with -EIO, and the workers leave. The process
 * exits with RUN_EXIT_FAILED when a set of its own failed (its stats say
 * why), RUN_EXIT_PEER when another failed the graph. A pool that dies
 * (kill -9) closes its scheduler descriptor: the module fails its sets
 * not done, and the graph, as for a set process.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "set.h"

#define POOL_QUANTUM	4096	/* elements, when the module says none */

/**
 * struct run_pool - one pool process
 * @env:	the run
 * @sched:	the client every set of the pool registered through; owned
 * @sets:	the set instances, @nr of them
 * @by_id:	the same, by kernel set id (for dfg_sched_next()'s answer)
 * @target:	workers wanted: the pool's size
 * @lock:	guards what follows
 * @cond:	spares wait on it
 * @active:	workers that run sets or ask the module for one (not
 *		blocked in a channel, not parked as spares)
 * @idle:	spares parked on @cond
 * @tids:	every thread started, @nthreads of @cap
 * @stop:	the pool ends: no set left, or the graph failed
 * @err:	first error of the module's, 0 when every set ended
 */
struct run_pool {
	const struct run_env	*env;
	struct dfg_sched	*sched;
	struct rt_set		*sets;
	unsigned int		nr;
	struct rt_set		**by_id;
	unsigned int		target;
	pthread_mutex_t		lock;
	pthread_cond_t		cond;
	unsigned int		active;
	unsigned int		idle;
	pthread_t		*tids;
	unsigned int		nthreads, cap;
	bool			stop;
	int			err;
};

static void *pool_worker(void *arg);

/* A thread more, counted in @active; caller holds @p->lock. */
static int pool_start_locked(struct run_pool *p)
{
	pthread_t *t;
	int r;

	if (p->nthreads == p->cap) {
		unsigned int cap = p->cap ? p->cap * 2 : 8;

		t = realloc(p->tids, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		p->tids = t;
		p->cap = cap;
	}
	r = pthread_create(&p->tids[p->nthreads], NULL, pool_worker, p);
	if (r)
		return -r;
	p->nthreads++;
	p->active++;
	return 0;
}

/* The pool ends (@err 0: done); wakes the spares. */
static void pool_stop(struct run_pool *p, int err)
{
	pthread_mutex_lock(&p->lock);
	if (!p->err)
		p->err = err;
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void run_pool_lend(struct run_pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->active--;
	/*
	 * Without a spare the pool goes on a worker short; if that leaves
	 * the set we wait for without one, the run stops with the
	 * coordinator's grace period, as a stuck set process would.
	 */
	if (!p->stop && p->active < p->target) {
		if (p->idle)
			pthread_cond_signal(&p->cond);
		else
			pool_start_locked(p);
	}
	pthread_mutex_unlock(&p->lock);
}

void run_pool_reclaim(struct run_pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->active++;
	pthread_mutex_unlock(&p->lock);
}

/*
 * Before asking the module again: a worker past the pool's size gives
 * its set back and waits as a spare until one is wanted. Returns false
 * once the pool stops.
 */
static bool pool_slot(struct run_pool *p, struct rt_set **sp,
		      unsigned int *reason)
{
	bool go;

	pthread_mutex_lock(&p->lock);
	if (p->active > p->target && !p->stop) {
		pthread_mutex_unlock(&p->lock);
		if (*sp) {
			int r = dfg_sched_yield((*sp)->kset, *reason);

			if (r < 0)
				pool_stop(p, r);
			*sp = NULL;
			*reason = 0;
		}
		pthread_mutex_lock(&p->lock);
		p->active--;
		p->idle++;
		while (!p->stop && p->active >= p->target)
			pthread_cond_wait(&p->cond, &p->lock);
		p->idle--;
		p->active++;
	}
	go = !p->stop;
	pthread_mutex_unlock(&p->lock);
	return go;
}

static int by_id_cmp(const void *a, const void *b)
{
	unsigned int x = dfg_set_id((*(struct rt_set *const *)a)->kset);
	unsigned int y = dfg_set_id((*(struct rt_set *const *)b)->kset);

	return x < y ? -1 : x > y;
}

static struct rt_set *pool_find(struct run_pool *p, struct dfg_set *kset)
{
	unsigned int id = dfg_set_id(kset), lo = 0, hi = p->nr;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		unsigned int m = dfg_set_id(p->by_id[mid]->kset);

		if (m == id)
			return p->by_id[mid];
		if (m < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void *pool_worker(void *arg)
{
	struct run_pool *p = arg;
	struct rt_set *s = NULL;
	unsigned int reason = 0;
	struct io_uring *ring;

	/* SCHED_NEXT through this thread's ring; through ioctl without */
	dfg_wait_ring(&ring);
	while (pool_slot(p, &s, &reason)) {
		unsigned long long q = 0;
		struct dfg_set *kset;
		int r;

		r = dfg_sched_next(p->sched, s ? s->kset : NULL, reason, 0,
				   &kset, &q);
		if (r == -EINTR)
			continue;	/* nothing was given back */
		s = NULL;
		reason = 0;
		if (r == -ENODATA) {
			pool_stop(p, 0);	/* every set ended */
			break;
		}
		if (r < 0) {
			pool_stop(p, r);
			break;
		}
		s = pool_find(p, kset);
		if (!s) {
			pool_stop(p, -ENOENT);
			break;
		}
		rt_set_prof(s);
		r = rt_set_step(s, q ? (unsigned long)q : POOL_QUANTUM);
		rt_set_prof(NULL);
		rt_set_publish(s);
		reason = r < 0 ? DFG_YIELD_ERROR : (unsigned int)r;
	}
	return NULL;
}

/* Join every thread, those started meanwhile too. */
static void pool_join(struct run_pool *p)
{
	unsigned int i;
	pthread_t t;

	for (i = 0;; i++) {
		pthread_mutex_lock(&p->lock);
		if (i >= p->nthreads) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		t = p->tids[i];
		pthread_mutex_unlock(&p->lock);
		/* only a live thread starts another: none is left after */
		pthread_join(t, NULL);
	}
}

int run_pool_main(const struct run_env *env, const struct run_item *items,
		  unsigned int n, unsigned int workers, int ready_fd,
		  int go_fd)
{
	struct run_pool p = {
		.env = env,
		.nr = n,
		.target = workers < n ? workers : n,
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	bool own = false, peer = false, stopped = false;
	unsigned int i, opened = 0;
	int r;

	if (!p.target)
		p.target = 1;
	p.sets = calloc(n + 1, sizeof(*p.sets));
	p.by_id = calloc(n + 1, sizeof(*p.by_id));
	r = p.sets && p.by_id ? 0 : -ENOMEM;
	if (!r)
		r = dfg_sched_attach(env->graph_fd, &p.sched);
	for (i = 0; !r && i < n; i++, opened++) {
		r = rt_set_open(&p.sets[i], env, items[i].set, items[i].inst,
				p.sched, &p);
		p.by_id[i] = &p.sets[i];
	}
	/* every endpoint is open before any process runs */
	run_barrier(ready_fd, go_fd);
	if (r) {
		if (i) {
			p.sets[i - 1].st->state = RUN_S_FAILED;
		} else if (n) {
			/* before any set: say it for the first */
			struct run_set_stats *st = &env->sstats[
				env->g->sstat[items[0].set] + items[0].inst];

			snprintf(st->comp, sizeof(st->comp), "worker pool");
			snprintf(st->msg, sizeof(st->msg),
				 "kernel set scheduler: %s", strerror(-r));
			st->state = RUN_S_FAILED;
		}
		own = true;
		goto out;
	}
	qsort(p.by_id, n, sizeof(*p.by_id), by_id_cmp);
	/* state restored now, not when each first runs (a failure shows
	 * at that first quantum) */
	for (i = 0; i < n; i++)
		rt_set_start(&p.sets[i]);
	rt_start_profiling();
	pthread_mutex_lock(&p.lock);
	for (i = 0; i < p.target && !r; i++)
		r = pool_start_locked(&p);
	/* fewer threads than asked is still a pool, none is not */
	if (r && p.nthreads)
		p.target = p.nthreads;
	pthread_mutex_unlock(&p.lock);
	if (!p.nthreads) {
		snprintf(p.sets[0].st->comp, sizeof(p.sets[0].st->comp),
			 "worker pool");
		snprintf(p.sets[0].st->msg, DFG_COMP_ERRMSG_MAX,
			 "threads: %s", strerror(-r));
		p.sets[0].st->state = RUN_S_FAILED;
		own = true;
		goto out;
	}
	pool_join(&p);

	for (i = 0; i < n; i++) {
		struct rt_set *s = &p.sets[i];

		if (s->err && !s->peer_failed) {
			own = true;
		} else if (!s->done) {
			/* stopped with the graph: another set says why */
			s->peer_failed = true;
			s->st->flags |= RUN_SF_PEER;
			if (!s->err)
				rt_fail(s, p.err ? p.err : -EIO,
					dfg_comp_name(s->m[0].c),
					"stopped: the graph failed");
			peer = true;
		}
		if (s->stopped && !s->err)
			stopped = true;
		else
			s->st->state = s->err ? RUN_S_FAILED : RUN_S_DONE;
	}
	/*
	 * No set of ours failed, yet the scheduler stopped the pool. -EIO
	 * says a set of another client did (the graph failed): ours stopped
	 * as its peers. Any other error is the scheduler's own and the cause,
	 * also when it left sets stopped as peers.
	 */
	if (p.err && !own && (!peer || p.err != -EIO)) {
		p.sets[0].st->flags &= ~RUN_SF_PEER;
		snprintf(p.sets[0].st->comp, sizeof(p.sets[0].st->comp),
			 "worker pool");
		snprintf(p.sets[0].st->msg, DFG_COMP_ERRMSG_MAX,
			 "kernel set scheduler: %s", strerror(-p.err));
		p.sets[0].st->state = RUN_S_FAILED;
		own = true;
	}
	/* its sets stopped at their marks (the others ended): their
	 * endpoints stay open until the coordinator lets them go */
	if (stopped && !own && !peer && !p.err)
		rt_stop_wait(p.by_id, n);
out:
	for (i = 0; i < opened; i++)
		rt_set_close(&p.sets[i]);
	dfg_sched_detach(p.sched);
	free(p.sets);
	free(p.by_id);
	free(p.tids);
	if (own)
		return RUN_EXIT_FAILED;
	if (peer || p.err)
		return RUN_EXIT_PEER;
	return stopped ? RUN_EXIT_STOPPED : 0;
}
