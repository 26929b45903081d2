// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg collectives: the ring alternatives (DFG_ALGO_RING) of allreduce,
 * reduce_scatter and allgather, to compare patent 002 against.
 *
 * Each rank pulls from its left neighbour only. Reduce-scatter: N - 1
 * steps; at step s rank r reduces block (r - s - 2) mod N as
 * (left's partial, own input), so block b is reduced along the chain
 * b + 1, b + 2, ..., b (that order is the serial reference's) and rank r
 * ends with block r. Allgather: N - 1 steps of copying the block the left
 * neighbour got last. RING notifications count steps done; DONE 1 says
 * "I no longer read your memory of the reduce-scatter", DONE 2 "of the
 * allgather" (the left neighbour may then write it, or return).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "copy.h"
#include "coll.h"

struct ring {
	struct dfg_call		*c;
	struct dfg_cbufs	b;
	struct dfg_ckeys	*keys;
	unsigned int		left;
	unsigned int		right;
	size_t			n;	/* elements of the whole vector */
};

static int ring_setup(struct ring *g, struct dfg_call *c, size_t src_bytes,
		      size_t work_bytes, void *user_work)
{
	unsigned int n = c->t->size, r = c->t->rank;
	int ret;

	g->c = c;
	g->left = (r + n - 1) % n;
	g->right = (r + 1) % n;
	g->keys = calloc(n, sizeof(*g->keys));
	if (!g->keys)
		return -ENOMEM;
	/* A landing slot: W may be our input (in place), never land there. */
	ret = dfg_cbufs_setup(c, src_bytes, work_bytes, user_work,
			      dfg_block_len(g->n, n, 0) * c->esize, &g->b);
	if (ret)
		return ret;
	return dfg_ckeys_xchg(c, &g->b.keys, &g->right, 1, &g->left, 1,
			      g->keys);
}

static void ring_teardown(struct ring *g)
{
	dfg_cbufs_teardown(g->c, &g->b);
	free(g->keys);
}

/* The left neighbour's [@lo, @lo + @cnt) of (@key, @off): a pointer. */
static const void *ring_peer(struct ring *g, const struct dfg_xkey *key,
			     __u64 off, size_t lo, size_t cnt, void *land,
			     int *err)
{
	struct dfg_xport *x = g->c->x;
	size_t e = g->c->esize;
	const void *p;
	int ticket;

	p = x->ops->peer_ptr(x, g->left, key, off + lo * e, cnt * e, err);
	if (p || *err)
		return p;
	ticket = x->ops->get(x, g->left, key, off + lo * e, land,
			     &g->c->t->scratch.key, cnt * e);
	if (ticket < 0) {
		*err = ticket;
		return NULL;
	}
	*err = x->ops->complete(x, ticket);
	return *err ? NULL : land;
}

static int ring_reduce_scatter_steps(struct ring *g)
{
	struct dfg_call *c = g->c;
	unsigned int n = c->t->size, r = c->t->rank;
	const struct dfg_ckeys *lk = &g->keys[g->left];
	size_t e = c->esize;
	int ret;

	for (unsigned int s = 0; s + 1 < n; s++) {
		unsigned int blk = (r + 2 * n - s - 2) % n;
		size_t lo = dfg_block_lo(g->n, n, blk);
		size_t cnt = dfg_block_len(g->n, n, blk);
		void *dst = g->b.work + lo * e;
		const void *p;

		if (s) {
			ret = dfg_xport_wait_from(c->x, g->left, DFG_SLOT_RING,
						  dfg_call_val(c, s));
			if (ret)
				return ret;
		}
		p = ring_peer(g, s ? &lk->work : &lk->src,
			      s ? lk->woff : lk->soff, lo, cnt, g->b.extra,
			      &ret);
		if (!p)
			return ret;
		dfg_reducer_run(&c->red, dst, p, g->b.src + lo * e, cnt);
		ret = c->x->ops->notify(c->x, g->right, DFG_SLOT_RING,
					dfg_call_val(c, s + 1));
		if (ret)
			return ret;
	}
	return 0;
}

/* Copy steps; the left neighbour's RING reaches @base + 1 + t at step t. */
static int ring_allgather_steps(struct ring *g, __u32 base)
{
	struct dfg_call *c = g->c;
	unsigned int n = c->t->size, r = c->t->rank;
	const struct dfg_ckeys *lk = &g->keys[g->left];
	size_t e = c->esize;
	int ret;

	for (unsigned int t = 0; t + 1 < n; t++) {
		unsigned int blk = (r + n - 1 - t) % n;
		size_t lo = dfg_block_lo(g->n, n, blk);
		size_t cnt = dfg_block_len(g->n, n, blk);
		void *dst = g->b.work + lo * e;
		const void *p;

		ret = dfg_xport_wait_from(c->x, g->left, DFG_SLOT_RING,
					  dfg_call_val(c, base + 1 + t));
		if (ret)
			return ret;
		p = ring_peer(g, &lk->work, lk->woff, lo, cnt, dst, &ret);
		if (!p)
			return ret;
		if (p != dst && cnt)
			dfg_copy(dst, p, cnt * e);
		ret = c->x->ops->notify(c->x, g->right, DFG_SLOT_RING,
					dfg_call_val(c, base + 2 + t));
		if (ret)
			return ret;
	}
	return 0;
}

int dfg_ring_allreduce(struct dfg_call *c)
{
	unsigned int n = c->t->size;
	size_t bytes = c->count * c->esize;
	struct ring g = { .n = c->count };
	int ret;

	ret = ring_setup(&g, c, bytes, bytes, c->rbuf);
	if (!ret)
		ret = ring_reduce_scatter_steps(&g);
	if (!ret)
		ret = dfg_call_done(c, 1, &g.left, 1, &g.right, 1);
	/* The reduce-scatter's last notification was n - 1: go on from it. */
	if (!ret)
		ret = ring_allgather_steps(&g, n - 2);
	if (!ret)
		ret = dfg_call_done(c, 2, &g.left, 1, &g.right, 1);
	if (!ret && g.b.out)
		dfg_copy(g.b.out, g.b.work, bytes);
	ring_teardown(&g);
	return ret;
}

int dfg_ring_reduce_scatter(struct dfg_call *c)
{
	unsigned int n = c->t->size, r = c->t->rank;
	size_t bytes = c->count * c->esize, rc = c->count / n;
	struct ring g = { .n = c->count };
	int ret;

	ret = ring_setup(&g, c, bytes, bytes, NULL);
	if (!ret)
		ret = ring_reduce_scatter_steps(&g);
	if (!ret)
		ret = dfg_call_done(c, 1, &g.left, 1, &g.right, 1);
	if (!ret)
		dfg_copy(c->rbuf, g.b.work + r * rc * c->esize, rc * c->esize);
	ring_teardown(&g);
	return ret;
}

int dfg_ring_allgather(struct dfg_call *c)
{
	unsigned int n = c->t->size, r = c->t->rank;
	size_t bytes = c->count;
	struct ring g = { .n = c->count * n };
	const void *mine = c->sbuf;
	int ret;

	/* Peers read only our work vector (rbuf, or its staged copy). */
	ret = ring_setup(&g, c, 0, n * bytes, c->rbuf);
	/* Our own block first: the right neighbour's step 0 reads it. */
	if (!ret && mine != g.b.work + r * bytes)
		dfg_copy(g.b.work + r * bytes, mine, bytes);
	if (!ret)
		ret = c->x->ops->notify(c->x, g.right, DFG_SLOT_RING,
					dfg_call_val(c, 1));
	if (!ret)
		ret = ring_allgather_steps(&g, 0);
	if (!ret)
		ret = dfg_call_done(c, 1, &g.left, 1, &g.right, 1);
	if (!ret && g.b.out)
		dfg_copy(g.b.out, g.b.work, n * bytes);
	ring_teardown(&g);
	return ret;
}
