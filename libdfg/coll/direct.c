// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg collectives: the direct algorithms (DFG_ALGO_DIRECT), the
 * broadcast and the barrier.
 *
 * Direct: one round in which every rank fetches what it needs from every
 * other rank (latency-bound sizes, and a baseline). Data that fits an
 * eager message travels inside it; larger data is pulled from the peers'
 * exposed buffers, followed by DONE so nobody returns while read. A
 * reduction combines the inputs in rank order, ((x0 op x1) op x2) ...,
 * the serial reference's order.
 *
 * Over a transport that buffers messages (msg_buffered: the network), a
 * reduction of up to DIRECT_MSGS_MAX bytes sends its vector in eager
 * messages of DFG_EAGER_MAX bytes instead, all posted at once: one
 * one-way trip where pulling took four (the key exchange, the read's
 * round trip, DONE) and a flush. DFG_COLL_PREV=eager1 pulls as before.
 *
 * Barrier: dissemination, ceil(log2 N) rounds of notifications.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "copy.h"
#include "coll.h"

/*
 * Bytes up to which a direct reduction over a network transport travels
 * in eager messages (at most 5 of them per peer). In the rig (N = 2,
 * coll_vs_mpi -e DFG_COLL_PREV=eager1 and -a direct, loaded host) the
 * pulled reduction took 1.63, 1.53, 1.31 and 0.94 times as long at 512 B,
 * 1, 2 and 4 KiB, and 40 messages (16 KiB) took 6.3 times as long as
 * recursive halving.
 */
#define DIRECT_MSGS_MAX		(2U << 10)

static unsigned int direct_others(const struct dfg_call *c,
				  unsigned int *peers)
{
	unsigned int np = 0;

	for (unsigned int r = 0; r < c->t->size; r++)
		if (r != c->t->rank)
			peers[np++] = r;
	return np;
}

/* Pointer to @peer's [@off, @off + @len) of @key, or a copy into @land. */
static const void *direct_fetch(struct dfg_call *c, unsigned int peer,
				const struct dfg_xkey *key, __u64 off,
				size_t len, void *land, int *err)
{
	struct dfg_xport *x = c->x;
	const void *p;
	int ticket;

	p = x->ops->peer_ptr(x, peer, key, off, len, err);
	if (p || *err)
		return p;
	ticket = x->ops->get(x, peer, key, off, land, &c->t->scratch.key,
			     len);
	if (ticket < 0) {
		*err = ticket;
		return NULL;
	}
	*err = x->ops->complete(x, ticket);
	return *err ? NULL : land;
}

int dfg_direct_combine(struct dfg_call *c, const void *const *inputs,
		       const struct dfg_ckeys *keys, size_t lo, size_t cnt,
		       void *acc, void *land)
{
	size_t e = c->esize;
	const void *x0 = NULL;
	int ret = 0;

	for (unsigned int r = 0; r < c->t->size; r++) {
		const void *p = inputs ? inputs[r] : NULL;

		if (!p)
			p = direct_fetch(c, r, &keys[r].src,
					 keys[r].soff + lo * e, cnt * e, land,
					 &ret);
		if (!p)
			return ret;
		/*
		 * x0 op x1 in one pass into @acc (a copy of x0 first cost
		 * one more pass over the vector), unless x0 was fetched
		 * into @land, which x1's fetch reuses.
		 */
		if (!r && p != land && c->t->size > 1)
			x0 = p;
		else if (!r)
			dfg_copy(acc, p, cnt * e);
		else
			dfg_reducer_run(&c->red, acc, x0 ? x0 : acc, p, cnt);
		if (r)
			x0 = NULL;
	}
	return 0;
}

/*
 * @bytes at @buf to @peer in messages of DFG_EAGER_MAX bytes (the last
 * one shorter; one message for 0 bytes), and their receipt from @src:
 * both sides cut the same vector the same way (the call header checks
 * the count and type in each).
 */
static int direct_send_msgs(struct dfg_call *c, unsigned int peer,
			    const void *buf, size_t bytes)
{
	size_t off = 0;
	int ret;

	do {
		size_t n = bytes - off < DFG_EAGER_MAX ? bytes - off :
			   DFG_EAGER_MAX;

		ret = dfg_call_send(c, peer, (const char *)buf + off, n);
		off += n;
	} while (!ret && off < bytes);
	return ret;
}

static int direct_recv_msgs(struct dfg_call *c, unsigned int src, void *buf,
			    size_t bytes)
{
	size_t off = 0;
	int ret;

	do {
		size_t n = bytes - off < DFG_EAGER_MAX ? bytes - off :
			   DFG_EAGER_MAX;

		ret = dfg_call_recv(c, src, (char *)buf + off, n);
		off += n;
	} while (!ret && off < bytes);
	return ret;
}

/*
 * Does a reduction of @bytes travel in messages? One that fits one
 * always; more only where sends never wait for their receiver (else two
 * ranks that fill each other's boxes before receiving would wait for
 * ever).
 */
static bool direct_by_msgs(const struct dfg_call *c, size_t bytes)
{
	return bytes <= DFG_EAGER_MAX ||
	       (c->x->ops->msg_buffered && !c->t->eager_one &&
		bytes <= DIRECT_MSGS_MAX);
}

/* Eager: everyone sends its input to @to (all, or the root). */
static int direct_eager_reduce(struct dfg_call *c, bool all)
{
	unsigned int n = c->t->size, rank = c->t->rank;
	size_t bytes = c->count * c->esize;
	unsigned int peers[DFG_TEAM_SIZE_MAX], np = direct_others(c, peers);
	const void *inputs[DFG_TEAM_SIZE_MAX];
	bool mine = all || rank == c->root;
	char *tmp = NULL;
	int ret = 0;

	for (unsigned int i = 0; i < np && !ret; i++)
		if (all || peers[i] == c->root)
			ret = direct_send_msgs(c, peers[i], c->sbuf, bytes);
	if (ret || !mine)
		return ret;
	tmp = malloc(bytes * n);
	if (!tmp)
		return -ENOMEM;
	for (unsigned int r = 0; r < n; r++) {
		inputs[r] = tmp + r * bytes;
		if (r == rank)
			dfg_copy(tmp + r * bytes, c->sbuf, bytes);
		else
			ret = direct_recv_msgs(c, r, tmp + r * bytes, bytes);
		if (ret)
			break;
	}
	if (!ret)
		ret = dfg_direct_combine(c, inputs, NULL, 0, c->count,
					 c->rbuf, NULL);
	free(tmp);
	return ret;
}

/* allreduce, and reduce (c->kind) */
int dfg_direct_allreduce(struct dfg_call *c)
{
	unsigned int peers[DFG_TEAM_SIZE_MAX], np = direct_others(c, peers);
	bool all = c->kind == DFG_COLL_ALLREDUCE;
	size_t bytes = c->count * c->esize;
	unsigned int root = c->root;
	struct dfg_ckeys *keys;
	struct dfg_cbufs b;
	int ret;

	if (direct_by_msgs(c, bytes))
		return direct_eager_reduce(c, all);
	keys = calloc(c->t->size, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	/* Accumulate in scratch: rbuf may be our input, read by the others. */
	ret = dfg_cbufs_setup(c, bytes, 0, NULL, 2 * bytes, &b);
	if (ret)
		goto out;
	if (all)
		ret = dfg_ckeys_xchg(c, &b.keys, peers, np, peers, np, keys);
	else if (c->t->rank == root)
		ret = dfg_ckeys_xchg(c, &b.keys, NULL, 0, peers, np, keys);
	else
		ret = dfg_ckeys_xchg(c, &b.keys, &root, 1, NULL, 0, keys);
	if (ret)
		goto out;
	if (all || c->t->rank == root)
		ret = dfg_direct_combine(c, NULL, keys, 0, c->count,
					 b.extra, b.extra + bytes);
	if (ret)
		goto out;
	if (all)
		ret = dfg_call_done(c, 1, peers, np, peers, np);
	else if (c->t->rank == root)
		ret = dfg_call_done(c, 1, peers, np, NULL, 0);
	else
		ret = dfg_call_done(c, 1, NULL, 0, &root, 1);
	if (!ret && (all || c->t->rank == root))
		dfg_copy(c->rbuf, b.extra, bytes);
out:
	dfg_cbufs_teardown(c, &b);
	free(keys);
	return ret;
}

int dfg_direct_reduce_scatter(struct dfg_call *c)
{
	unsigned int n = c->t->size, rank = c->t->rank;
	unsigned int peers[DFG_TEAM_SIZE_MAX], np = direct_others(c, peers);
	size_t rc = c->count / n, e = c->esize, bytes = c->count * e;
	const void *inputs[DFG_TEAM_SIZE_MAX];
	struct dfg_ckeys *keys = NULL;
	struct dfg_cbufs b = { 0 };
	char *tmp = NULL, *acc;
	int ret = 0;

	if (rc * e <= DFG_EAGER_MAX) {
		for (unsigned int i = 0; i < np && !ret; i++)
			ret = dfg_call_send(c, peers[i],
					    (const char *)c->sbuf +
					    peers[i] * rc * e, rc * e);
		tmp = ret ? NULL : malloc(rc * e * n);
		if (!ret && !tmp)
			ret = -ENOMEM;
		for (unsigned int r = 0; r < n && !ret; r++) {
			inputs[r] = tmp + r * rc * e;
			if (r == rank)
				dfg_copy(tmp + r * rc * e, (const char *)c->sbuf +
				       rank * rc * e, rc * e);
			else
				ret = dfg_call_recv(c, r, tmp + r * rc * e,
						    rc * e);
		}
		if (!ret)
			ret = dfg_direct_combine(c, inputs, NULL, 0, rc,
						 c->rbuf, NULL);
		free(tmp);
		return ret;
	}
	keys = calloc(n, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	ret = dfg_cbufs_setup(c, bytes, 0, NULL, 2 * rc * e, &b);
	/*
	 * The result goes straight to rbuf, which no peer reads, unless it
	 * is our input (in place): then through scratch, after DONE.
	 */
	acc = c->in_place ? b.extra : c->rbuf;
	if (!ret)
		ret = dfg_ckeys_xchg(c, &b.keys, peers, np, peers, np, keys);
	if (!ret)
		ret = dfg_direct_combine(c, NULL, keys, rank * rc, rc,
					 acc, b.extra + rc * e);
	if (!ret)
		ret = dfg_call_done(c, 1, peers, np, peers, np);
	if (!ret && acc != c->rbuf)
		dfg_copy(c->rbuf, acc, rc * e);
	dfg_cbufs_teardown(c, &b);
	free(keys);
	return ret;
}

int dfg_direct_allgather(struct dfg_call *c)
{
	unsigned int n = c->t->size, rank = c->t->rank;
	unsigned int peers[DFG_TEAM_SIZE_MAX], np = direct_others(c, peers);
	size_t bytes = c->count;
	char *rbuf = c->rbuf;
	struct dfg_ckeys *keys;
	struct dfg_cbufs b;
	int ret = 0;

	if (rbuf + rank * bytes != (const char *)c->sbuf)
		dfg_copy(rbuf + rank * bytes, c->sbuf, bytes);
	c->sbuf = rbuf + rank * bytes;
	if (bytes <= DFG_EAGER_MAX) {
		for (unsigned int i = 0; i < np && !ret; i++)
			ret = dfg_call_send(c, peers[i], c->sbuf, bytes);
		for (unsigned int i = 0; i < np && !ret; i++)
			ret = dfg_call_recv(c, peers[i],
					    rbuf + peers[i] * bytes, bytes);
		return ret;
	}
	keys = calloc(n, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	ret = dfg_cbufs_setup(c, bytes, 0, NULL, 0, &b);
	if (!ret)
		ret = dfg_ckeys_xchg(c, &b.keys, peers, np, peers, np, keys);
	for (unsigned int i = 0; i < np && !ret; i++) {
		unsigned int r = peers[i];
		char *dst = rbuf + r * bytes;
		const void *p = direct_fetch(c, r, &keys[r].src, keys[r].soff,
					     bytes, dst, &ret);

		if (p && p != dst)
			dfg_copy(dst, p, bytes);
	}
	if (!ret)
		ret = dfg_call_done(c, 1, peers, np, peers, np);
	dfg_cbufs_teardown(c, &b);
	free(keys);
	return ret;
}

int dfg_direct_broadcast(struct dfg_call *c)
{
	unsigned int peers[DFG_TEAM_SIZE_MAX], np = direct_others(c, peers);
	unsigned int root = c->root, rank = c->t->rank;
	size_t bytes = c->count;
	struct dfg_ckeys *keys;
	struct dfg_cbufs b;
	int ret = 0;

	if (bytes <= DFG_EAGER_MAX) {
		if (rank != root)
			return dfg_call_recv(c, root, c->rbuf, bytes);
		for (unsigned int i = 0; i < np && !ret; i++)
			ret = dfg_call_send(c, peers[i], c->sbuf, bytes);
		return ret;
	}
	keys = calloc(c->t->size, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	/* Only the root's input is read: the others expose nothing. */
	ret = dfg_cbufs_setup(c, rank == root ? bytes : 0, 0, NULL, 0, &b);
	if (ret)
		goto out;
	if (rank == root) {
		ret = dfg_ckeys_xchg(c, &b.keys, peers, np, NULL, 0, keys);
		if (!ret)
			ret = dfg_call_done(c, 1, NULL, 0, peers, np);
	} else {
		const void *p;

		ret = dfg_ckeys_xchg(c, &b.keys, NULL, 0, &root, 1, keys);
		p = ret ? NULL : direct_fetch(c, root, &keys[root].src,
					      keys[root].soff, bytes, c->rbuf,
					      &ret);
		if (p && p != c->rbuf)
			dfg_copy(c->rbuf, p, bytes);
		if (!ret)
			ret = dfg_call_done(c, 1, &root, 1, NULL, 0);
	}
out:
	dfg_cbufs_teardown(c, &b);
	free(keys);
	return ret;
}

int dfg_coll_barrier(struct dfg_call *c)
{
	unsigned int n = c->t->size, r = c->t->rank;
	int ret;

	for (unsigned int k = 0; (1U << k) < n; k++) {
		ret = c->x->ops->notify(c->x, (r + (1U << k)) % n,
					DFG_SLOT_BARRIER,
					dfg_call_val(c, k + 1));
		if (!ret)
			ret = dfg_xport_wait_from(c->x,
						  (r + n - (1U << k)) % n,
						  DFG_SLOT_BARRIER,
						  dfg_call_val(c, k + 1));
		if (ret)
			return ret;
	}
	return 0;
}
