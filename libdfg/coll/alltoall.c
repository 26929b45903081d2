// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg collectives: dfg_alltoall() and dfg_alltoallv(), the all-to-all
 * engine (alltoall_tiles.c) bound to the team's transport (xport.h);
 * across machines the table takes the put algorithm instead
 * (alltoall_put.c), and on a team with several members on a machine the
 * hierarchy (hier.c) for a fixed all-to-all's small blocks; alltoallv
 * takes it where forced.
 *
 * At a team's first all-to-all every member maps and exposes its engine
 * area (kept until the team is left) and sends its key to every peer in
 * a call message. The engine's atomic words are the transport's
 * DFG_ATOMIC_A2A_FIRST..; its waits are the transport's wait on this
 * rank's EV word, which spins briefly and then sleeps.
 *
 * A rank whose arguments are unusable still takes part, with nothing to
 * send and nothing received, and fails with -EINVAL: the others see the
 * lengths disagree and fail too, instead of waiting for it. A transport
 * failure (a member died, the call was aborted) leaves the engine's
 * shared words of this call half done, so the team's all-to-all fails
 * with -EPROTO from then on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "copy.h"
#include "sys.h"
#include "coll.h"
#include "alltoall.h"

_Static_assert(sizeof(struct dfg_xkey) == A2A_KEY_SIZE, "key size");
_Static_assert(DFG_ATOMIC_A2A_FIRST + A2A_W_NR <= DFG_XPORT_ATOMICS,
	       "atomic words");
_Static_assert(DFG_TEAM_SIZE_MAX <= A2A_TILES_MAX_N, "registration bits");

/*
 * struct dfg_a2a - a team's all-to-all state
 * @eng:	the engine
 * @port:	its operations, over @x
 * @x:		the team's transport
 * @area:	this rank's area (@size bytes, mapped here, exposed)
 * @key:	its key
 * @keys:	every rank's area key
 * @ptr:	peers' areas where the transport maps them; NULL: not looked
 *		up in this call (or get/put only)
 * @broken:	a call failed half way: the shared words are inconsistent
 */
struct dfg_a2a {
	struct a2a_team		eng;
	struct a2a_port		port;
	struct dfg_xport	*x;
	uint8_t			*area;
	size_t			size;
	struct dfg_xkey		key;
	struct dfg_xkey		*keys;
	uint8_t			**ptr;
	bool			broken;
};

static uint8_t *a2a_peer(struct dfg_a2a *a, unsigned int peer)
{
	int err = 0;

	if (!a->ptr[peer])
		a->ptr[peer] = a->x->ops->peer_ptr(a->x, peer, &a->keys[peer],
						   0, a->size, &err);
	return a->ptr[peer];
}

static int a2a_get(void *ctx, unsigned int peer, size_t off, void *dst,
		   size_t len)
{
	struct dfg_a2a *a = ctx;
	uint8_t *p = a2a_peer(a, peer);
	int ret;

	if (off > a->size || len > a->size - off)
		return -EPROTO;
	if (p) {
		dfg_copy(dst, p + off, len);
		return 0;
	}
	/* get() hands out a ticket: the data is there only once flushed. */
	ret = a->x->ops->get(a->x, peer, &a->keys[peer], off, dst, NULL, len);
	return ret < 0 ? ret : a->x->ops->flush(a->x);
}

static int a2a_put(void *ctx, unsigned int peer, size_t off,
		   const void *src, size_t len)
{
	struct dfg_a2a *a = ctx;
	uint8_t *p = a2a_peer(a, peer);
	int ret;

	if (off > a->size || len > a->size - off)
		return -EPROTO;
	if (p) {
		dfg_copy(p + off, src, len);
		return 0;
	}
	/* The caller reuses @src at once: complete the put. */
	ret = a->x->ops->put(a->x, peer, &a->keys[peer], off, src, NULL, len);
	return ret < 0 ? ret : a->x->ops->complete(a->x, ret);
}

static int a2a_fadd(void *ctx, unsigned int peer, unsigned int idx,
		    uint64_t add, uint64_t *old)
{
	struct dfg_a2a *a = ctx;
	__u64 prev;
	int ret = a->x->ops->flush(a->x);

	if (!ret)
		ret = a->x->ops->fadd(a->x, peer, DFG_ATOMIC_A2A_FIRST + idx,
				      add, &prev);
	if (!ret && old)
		*old = prev;
	return ret;
}

static uint64_t a2a_peek(void *ctx, unsigned int idx)
{
	struct dfg_a2a *a = ctx;

	return a->x->ops->peek(a->x, dfg_xport_atomic(a->x,
					DFG_ATOMIC_A2A_FIRST + idx));
}

static int a2a_get_mem(void *ctx, unsigned int peer, const void *key,
		       uint64_t off, void *dst, size_t len)
{
	struct dfg_a2a *a = ctx;
	struct dfg_xkey k;
	void *p;
	int err = 0, ret;

	memcpy(&k, key, sizeof(k));
	p = a->x->ops->peer_ptr(a->x, peer, &k, off, len, &err);
	if (p) {
		dfg_copy(dst, p, len);
		return 0;
	}
	if (err)
		return err;
	ret = a->x->ops->get(a->x, peer, &k, off, dst, NULL, len);
	return ret < 0 ? ret : a->x->ops->flush(a->x);
}

static int a2a_expose(void *ctx, const void *buf, size_t len, void *key)
{
	struct dfg_a2a *a = ctx;
	struct dfg_xkey k;
	int ret;

	ret = a->x->ops->expose(a->x, buf, len, DFG_XPORT_READ, &k);
	if (!ret)
		memcpy(key, &k, sizeof(k));
	return ret;
}

static void a2a_unexpose(void *ctx, void *key)
{
	struct dfg_a2a *a = ctx;
	struct dfg_xkey k;

	memcpy(&k, key, sizeof(k));
	a->x->ops->unexpose(a->x, &k);
}

void dfg_a2a_free(struct dfg_team *t)
{
	struct dfg_a2a *a = t->a2a;

	if (!a)
		return;
	if (a->area) {
		a->x->ops->unexpose(a->x, &a->key);
		__dfg_sys_munmap(a->area, a->size);
	}
	a2a_team_fini(&a->eng);
	free(a->keys);
	free(a->ptr);
	free(a);
	t->a2a = NULL;
}

/*
 * The team's state, created at its first all-to-all (a call every member
 * makes, so the key exchange is part of it).
 */
static int dfg_a2a_get(struct dfg_call *c, struct dfg_a2a **out)
{
	struct dfg_team *t = c->t;
	struct dfg_a2a *a = t->a2a;
	void *mem = NULL;
	int ret;

	if (a) {
		*out = a;
		return a->broken ? -EPROTO : 0;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	t->a2a = a;
	a->x = t->x;
	a->port = (struct a2a_port){
		.ctx = a, .fadd = a2a_fadd, .peek = a2a_peek, .get = a2a_get,
		.put = a2a_put, .get_mem = a2a_get_mem, .expose = a2a_expose,
		.unexpose = a2a_unexpose,
	};
	a->keys = calloc(t->size, sizeof(*a->keys));
	a->ptr = calloc(t->size, sizeof(*a->ptr));
	if (!a->keys || !a->ptr)
		return -ENOMEM;
	ret = a2a_team_init(&a->eng, &a->port, t->rank, t->size,
			    A2A_THRESHOLD, NULL);
	if (ret)
		return ret;
	ret = dfg_area_share(c, a->eng.lay.size, &mem, &a->size, a->keys);
	if (mem) {
		a->area = mem;
		a->key = a->keys[t->rank];
		a->eng.area = a->area;
	}
	if (ret)
		return ret;
	*out = a;
	return 0;
}

/* An engine call's message (op 0, no payload) to every peer. */
static int dfg_a2a_tell(struct dfg_call *c)
{
	unsigned int n = c->t->size, rank = c->t->rank;
	int ret = 0;

	for (unsigned int i = 1; i < n && !ret; i++)
		ret = dfg_call_send(c, (rank + i) % n, NULL, 0);
	return ret;
}

/*
 * Every peer's message of this call: 0, -EINVAL when one disagrees
 * (arguments, or it took the inbox), or the transport's failure.
 */
static int dfg_a2a_hear(struct dfg_call *c)
{
	unsigned int n = c->t->size, rank = c->t->rank;
	int ret, err = 0;

	for (unsigned int i = 1; i < n; i++) {
		ret = dfg_call_recv(c, (rank + n - i) % n, NULL, 0);
		if (ret && ret != -EINVAL)
			return ret;
		if (ret && !err)
			err = ret;
	}
	return err;
}

/*
 * Run @ac on the engine. Where the team has inbox slots, a fixed all-to-
 * all whose block fits takes the inbox (inbox.c), so the members must
 * agree on the path before anyone touches the engine's shared words: an
 * engine call there tells every peer so with a call message before it
 * starts and hears theirs after it ends (sent at their start: no wait),
 * or, at the team's first engine call, before it starts, since the key
 * exchange follows in the same mailboxes. A rank on the inbox that hears
 * an engine message joins the engine with nothing to send (@joined: it
 * sent and heard its messages already), so that every rank ends, with
 * -EINVAL. Teams without an inbox exchange nothing more.
 */
static int dfg_a2a_run(struct dfg_call *c, struct a2a_call *ac, bool joined)
{
	bool talk = !joined && dfg_inbox_fits(c->t, DFG_COLL_ALLTOALL, 0);
	struct dfg_a2a *a = NULL;
	struct dfg_xport *x = c->x;
	int heard = 0, ret, op;
	unsigned int ev;
	size_t count;

	if (talk) {
		ret = dfg_a2a_tell(c);
		if (!ret && !c->t->a2a) {
			talk = false;
			ret = heard = dfg_a2a_hear(c);
			if (ret == -EINVAL) {
				ret = 0;
				if (!ac->err)
					ac->err = -EINVAL;
			}
		}
		if (ret)
			return ret;
	}
	/*
	 * The key exchange's messages carry no arguments: ranks whose
	 * blocks or paths differ set the engine up together all the same.
	 */
	count = c->count;
	op = c->op;
	c->count = 0;
	c->op = 0;
	ret = dfg_a2a_get(c, &a);
	c->count = count;
	c->op = op;
	if (ret) {
		if (c->t->a2a && ret != -EPROTO)
			c->t->a2a->broken = true;
		return ret;
	}
	ev = dfg_xport_atomic(x, DFG_ATOMIC_A2A_FIRST + A2A_W_EV);
	memset(a->ptr, 0, c->t->size * sizeof(*a->ptr));
	ac->t = &a->eng;
	ac->seq = (uint32_t)c->seq;
	ac->algo = c->algo == DFG_ALGO_DIRECT ? A2A_ALGO_DIRECT :
						A2A_ALGO_TILES;
	ret = a2a_start(ac);
	while (!ret) {
		ret = x->ops->wait(x, ev, ac->ev + 1, NULL);
		if (!ret)
			ret = a2a_progress(ac);
	}
	a2a_call_fini(ac);
	if (ret < 0) {
		a->broken = true;
		return ret;
	}
	/* The protocol ran to its end: nobody waits for us, no abort. */
	c->started = false;
	if (talk)
		heard = dfg_a2a_hear(c);
	return heard && heard != -EINVAL ? heard : ac->err ? ac->err : heard;
}

static bool dfg_a2a_span_ok(const size_t *counts, const size_t *displs,
			    unsigned int n, const void *buf)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (counts[i] > SIZE_MAX - displs[i])
			return false;
		if (counts[i] && !buf)
			return false;
	}
	return true;
}

int dfg_alltoall(struct dfg_team *t, const void *sbuf, void *rbuf,
		 size_t block)
{
	struct a2a_call ac = { .kind = A2A_FIXED, .block = block };
	struct dfg_call c;
	int ret;

	if (!t)
		return -EINVAL;
	ret = dfg_call_begin(&c, t, DFG_COLL_ALLTOALL, block);
	if (ret)
		return ret;
	c.count = block;
	ac.sbuf = sbuf;
	ac.rbuf = rbuf;
	if (block > SIZE_MAX / t->size || sbuf == DFG_IN_PLACE ||
	    (block && (!sbuf || !rbuf)))
		ac.err = -EINVAL;
	if (c.algo == DFG_ALGO_PUT || c.algo == DFG_ALGO_HIER) {
		c.sbuf = sbuf;
		c.rbuf = rbuf;
		ret = c.algo == DFG_ALGO_HIER ? dfg_hier_alltoall(&c, ac.err) :
						dfg_put_alltoall(&c, ac.err);
		return dfg_call_end(&c, ret);
	}
	if (c.algo == DFG_ALGO_INBOX && !ac.err) {
		bool engine;

		c.sbuf = sbuf;
		c.rbuf = rbuf;
		c.op = DFG_A2A_OP_INBOX;
		ret = dfg_inbox_alltoall(&c, &engine);
		if (engine) {
			/* A peer took the engine: its arguments differ. */
			ac.err = -EINVAL;
			ret = dfg_a2a_run(&c, &ac, true);
		}
		return dfg_call_end(&c, ret);
	}
	/* Unusable arguments take part through the engine (see above). */
	if (c.algo == DFG_ALGO_INBOX)
		c.algo = t->last[DFG_COLL_ALLTOALL] = DFG_ALGO_TILES;
	ret = dfg_a2a_run(&c, &ac, false);
	return dfg_call_end(&c, ret);
}

int dfg_alltoallv(struct dfg_team *t, const void *sbuf, const size_t *scounts,
		  const size_t *sdispls, void *rbuf, const size_t *rcounts,
		  const size_t *rdispls)
{
	struct a2a_call ac = { .kind = A2A_V };
	static const size_t zero[DFG_TEAM_SIZE_MAX];
	struct dfg_call c;
	int ret;

	if (!t)
		return -EINVAL;
	/* No size the ranks agree on: the table's largest (table.c). */
	ret = dfg_call_begin(&c, t, DFG_COLL_ALLTOALL, SIZE_MAX);
	if (ret)
		return ret;
	/* Per-peer counts: never the inbox. */
	if (c.algo == DFG_ALGO_INBOX)
		c.algo = t->last[DFG_COLL_ALLTOALL] = DFG_ALGO_TILES;
	ac.sbuf = sbuf;
	ac.rbuf = rbuf;
	ac.scounts = scounts;
	ac.sdispls = sdispls;
	ac.rcounts = rcounts;
	ac.rdispls = rdispls;
	if (!scounts || !sdispls || !rcounts || !rdispls ||
	    sbuf == DFG_IN_PLACE ||
	    !dfg_a2a_span_ok(scounts, sdispls, t->size, sbuf) ||
	    !dfg_a2a_span_ok(rcounts, rdispls, t->size, rbuf)) {
		/* Take part with nothing: the others must not hang. */
		ac.err = -EINVAL;
		ac.scounts = ac.sdispls = ac.rcounts = ac.rdispls = zero;
	}
	if (c.algo == DFG_ALGO_PUT || c.algo == DFG_ALGO_HIER) {
		c.sbuf = sbuf;
		c.rbuf = rbuf;
		c.scounts = ac.scounts;
		c.sdispls = ac.sdispls;
		c.rcounts = ac.rcounts;
		c.rdispls = ac.rdispls;
		ret = c.algo == DFG_ALGO_HIER ? dfg_hier_alltoallv(&c, ac.err) :
						dfg_put_alltoall(&c, ac.err);
		return dfg_call_end(&c, ret);
	}
	ret = dfg_a2a_run(&c, &ac, false);
	return dfg_call_end(&c, ret);
}
