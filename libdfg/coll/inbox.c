// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg collectives: the inbox algorithms (DFG_ALGO_INBOX), for payloads
 * that fit the transport's inbox slots (xport.h inbox()).
 *
 * A source stores its payload into its slot for the destination, then
 * sends the destination a call message without payload; the destination
 * receives the message (which checks seq, kind and arguments, like every
 * call message: mismatched arguments give -EINVAL, also against a rank
 * that took another algorithm) and reads the slot in place. Nothing is
 * exported, mapped or staged: one copy in, the reduction (or one copy)
 * out, one message per pair. A payload that fits a call message
 * (DFG_EAGER_MAX) travels inside it instead, and the destination
 * receives it into that same slot: measured at N = 2, the message alone
 * is cheaper there than a message plus a slot (the slot's wait and one
 * more cache line).
 *
 * Slots alternate between odd and even calls. Before storing, a source
 * waits until the destination has begun the previous call, so the
 * destination is done reading the slot's last payload (two calls back);
 * in a steady stream of calls that has long happened and costs one load.
 *
 * A reduction combines the inputs in rank order, ((x0 op x1) op x2) ...,
 * like the direct algorithm and the serial reference.
 */
#include <errno.h>
#include <string.h>

#include "copy.h"
#include "coll.h"

/* Bytes one slot holds, 0 without an inbox. */
static size_t inbox_slot_size(struct dfg_xport *x)
{
	size_t size = 0;

	if (!x->ops->inbox || !x->ops->inbox(x, 0, 0, 0, &size))
		return 0;
	return size;
}

bool dfg_inbox_fits(const struct dfg_team *t, enum dfg_coll_kind kind,
		    size_t bytes)
{
	size_t slot = t->x ? inbox_slot_size(t->x) : 0;

	if (!slot || t->size < 2)
		return false;
	/* reduce_scatter's @bytes is the whole vector: a rank sends 1/N. */
	if (kind == DFG_COLL_REDUCE_SCATTER)
		bytes = bytes / t->size + !!(bytes % t->size);
	return bytes <= slot;
}

/* Store @len bytes of @data into our slot for @peer; tell @peer. */
static int inbox_put(struct dfg_call *c, unsigned int peer, const void *data,
		     size_t len)
{
	struct dfg_xport *x = c->x;
	size_t size = 0;
	void *slot;
	int ret;

	if (len <= DFG_EAGER_MAX)
		return dfg_call_send(c, peer, data, len);
	slot = x->ops->inbox(x, c->t->rank, peer, c->seq, &size);
	if (!slot || len > size)
		return -EMSGSIZE;
	if (c->seq > 1) {
		ret = x->ops->wait_begun(x, peer, c->seq - 1);
		if (ret)
			return ret;
	}
	dfg_copy(slot, data, len);
	return dfg_call_send(c, peer, NULL, 0);
}

/*
 * @src's payload of @len bytes for us in this call, once its message
 * came; or NULL. An eager payload lands in @src's slot for us, which
 * @src does not store into during this call (inbox_put()).
 */
static const void *inbox_get(struct dfg_call *c, unsigned int src,
			     size_t len, int *err)
{
	struct dfg_xport *x = c->x;
	size_t size = 0;
	void *slot = x->ops->inbox(x, src, c->t->rank, c->seq, &size);

	if (!slot || len > size) {
		*err = -EMSGSIZE;
		return NULL;
	}
	if (len <= DFG_EAGER_MAX)
		*err = dfg_call_recv(c, src, slot, len);
	else
		*err = dfg_call_recv(c, src, NULL, 0);
	return *err ? NULL : slot;
}

/*
 * @src's payload of @len bytes for us in this call, copied to @dst: an
 * eager payload is received there straight from the message (through
 * the slot it would cost one more copy: at N = 2 that made broadcasts of
 * 8-256 B slower than the direct algorithm's message alone). @op, if not
 * NULL, gets @src's header op (dfg_call_recv_op()).
 */
static int inbox_take(struct dfg_call *c, unsigned int src, void *dst,
		      size_t len, int *op)
{
	struct dfg_xport *x = c->x;
	size_t size = 0;
	const void *slot;
	int ret;

	if (len <= DFG_EAGER_MAX)
		return dfg_call_recv_op(c, src, dst, len, op);
	slot = x->ops->inbox(x, src, c->t->rank, c->seq, &size);
	if (!slot || len > size)
		return -EMSGSIZE;
	ret = dfg_call_recv_op(c, src, NULL, 0, op);
	if (!ret)
		dfg_copy(dst, slot, len);
	return ret;
}

/* allreduce, and reduce (c->kind) */
int dfg_inbox_allreduce(struct dfg_call *c)
{
	unsigned int n = c->t->size, rank = c->t->rank;
	bool all = c->kind == DFG_COLL_ALLREDUCE;
	size_t bytes = c->count * c->esize, size;
	const void *in[DFG_TEAM_SIZE_MAX];
	int ret = 0;

	for (unsigned int p = 0; p < n && !ret; p++)
		if (p != rank && (all || p == c->root))
			ret = inbox_put(c, p, c->sbuf, bytes);
	if (ret || !(all || rank == c->root))
		return ret;
	for (unsigned int r = 0; r < n; r++) {
		if (r != rank) {
			in[r] = inbox_get(c, r, bytes, &ret);
			if (!in[r])
				return ret ? ret : -EPROTO;
		} else if (c->sbuf == c->rbuf && rank) {
			/* In place: rank 0's input lands on ours first. */
			void *self = c->x->ops->inbox(c->x, rank, rank, c->seq,
						      &size);

			dfg_copy(self, c->sbuf, bytes);
			in[r] = self;
		} else {
			in[r] = c->sbuf;
		}
	}
	return dfg_direct_combine(c, in, NULL, 0, c->count, c->rbuf, NULL);
}

int dfg_inbox_reduce_scatter(struct dfg_call *c)
{
	unsigned int n = c->t->size, rank = c->t->rank;
	size_t rc = c->count / n, e = c->esize;
	const char *sbuf = c->sbuf;
	const void *in[DFG_TEAM_SIZE_MAX];
	int ret = 0;

	for (unsigned int p = 0; p < n && !ret; p++)
		if (p != rank)
			ret = inbox_put(c, p, sbuf + p * rc * e, rc * e);
	if (ret)
		return ret;
	/*
	 * In place, our block [rank * rc, ...) never meets the result
	 * [0, rc) but for rank 0, whose first step copies it onto itself.
	 */
	for (unsigned int r = 0; r < n; r++) {
		in[r] = r == rank ? sbuf + rank * rc * e :
				    inbox_get(c, r, rc * e, &ret);
		if (!in[r])
			return ret ? ret : -EPROTO;
	}
	return dfg_direct_combine(c, in, NULL, 0, rc, c->rbuf, NULL);
}

int dfg_inbox_allgather(struct dfg_call *c)
{
	unsigned int n = c->t->size, rank = c->t->rank;
	size_t bytes = c->count;
	char *rbuf = c->rbuf;
	int ret = 0;

	if (rbuf + rank * bytes != (const char *)c->sbuf)
		dfg_copy(rbuf + rank * bytes, c->sbuf, bytes);
	for (unsigned int p = 0; p < n && !ret; p++)
		if (p != rank)
			ret = inbox_put(c, p, rbuf + rank * bytes, bytes);
	for (unsigned int r = 0; r < n && !ret; r++)
		if (r != rank)
			ret = inbox_take(c, r, rbuf + r * bytes, bytes, NULL);
	return ret;
}

int dfg_inbox_broadcast(struct dfg_call *c)
{
	unsigned int n = c->t->size, rank = c->t->rank;
	int ret = 0;

	if (rank == c->root) {
		for (unsigned int r = 0; r < n && !ret; r++)
			if (r != rank)
				ret = inbox_put(c, r, c->sbuf, c->count);
		return ret;
	}
	return inbox_take(c, c->root, c->rbuf, c->count, NULL);
}

int dfg_inbox_alltoall(struct dfg_call *c, bool *engine)
{
	unsigned int n = c->t->size, rank = c->t->rank;
	size_t b = c->count;
	const char *sbuf = c->sbuf;
	char *rbuf = c->rbuf;
	int ret = 0, err = 0;

	*engine = false;
	/* Every block leaves before anything lands: rbuf may be sbuf. */
	for (unsigned int i = 1; i < n && !ret; i++) {
		unsigned int p = (rank + i) % n;

		ret = inbox_put(c, p, sbuf + p * b, b);
	}
	if (ret)
		return ret;
	if (b)
		dfg_copy(rbuf + rank * b, sbuf + rank * b, b);
	/*
	 * Hear every peer, also after a mismatch: the messages must not
	 * stay in the boxes, and a peer that took the engine needs us there.
	 */
	for (unsigned int i = 1; i < n; i++) {
		unsigned int src = (rank + n - i) % n;
		int op = DFG_A2A_OP_INBOX;

		ret = inbox_take(c, src, rbuf + src * b, b, &op);
		if (ret && ret != -EINVAL)
			return ret;
		if (op != DFG_A2A_OP_INBOX)
			*engine = true;
		if (ret && !err)
			err = ret;
	}
	return err;
}
