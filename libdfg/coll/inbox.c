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
 * Placement: the two slots of a pair (xport.h: one after the other) are
 * one area of 2 x slot bytes, cut into at most INBOX_CHUNKS chunks of
 * whole cache lines. A source
 * places each payload on the chunks after its last one's (from the
 * first again where it would not fit), remembers per chunk the call
 * that stored there last, waits only until the destination has begun
 * the call after the latest of those (it is done reading them), and
 * sends the payload's offset in the call message. A rooted call
 * (broadcast, reduce) thus runs ahead of a destination that waits for a
 * CPU by as many calls as the area holds payloads, like an eager
 * message through a deep mailbox; when the slots alternated between odd
 * and even calls (DFG_COLL_PREV=ring), the root waited at every call for
 * each destination to have begun the previous one: with 4 ranks on 2
 * CPUs, broadcasts of 512 B-2 KiB were slower than Open MPI's (issue 11).
 * Eager payloads that a reduction reads in place land in the team's
 * memory, not in the source's area, which the source may be storing
 * into for later calls already.
 *
 * A reduction combines the inputs in rank order, ((x0 op x1) op x2) ...,
 * like the direct algorithm and the serial reference.
 *
 * An all-to-all block larger than a slot goes in pieces of half the area
 * (inbox_piece()), in rounds: in round k every rank stores piece k of
 * each block into the half k & 1 of its area for that peer, sends the
 * message, then hears every peer's piece k and copies it out. A peer's
 * message of round k leaves only after it copied out every piece of
 * round k - 1, so the half that piece k + 1 goes into (piece k - 1's)
 * is free once round k heard that peer: no acknowledgement, no wait
 * beyond the round's own messages. Round 0 is the plain call's: a
 * mismatch (arguments, or a peer on the engine) shows there on every
 * rank, which stops after it with every message heard.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "copy.h"
#include "coll.h"

/* Chunks of a pair's area (a payload of up to a slot takes up to half). */
#define INBOX_CHUNKS	64
/* Bytes per source where eager payloads land: DFG_EAGER_MAX, in lines. */
#define INBOX_LAND	((DFG_EAGER_MAX + 63) & ~63U)

/*
 * struct dfg_inbox_pair - where this rank stores for one destination
 * @seq:	per chunk, the call that stored there last (0: none)
 * @next:	the chunk after the last payload
 */
struct dfg_inbox_pair {
	__u64		seq[INBOX_CHUNKS];
	unsigned int	next;
};

/*
 * struct dfg_inbox - a team's inbox state
 * @tx:		per destination rank
 * @land:	per source rank, INBOX_LAND bytes (cache-aligned)
 */
struct dfg_inbox {
	struct dfg_inbox_pair	*tx;
	unsigned char		*land;
};

void dfg_inbox_free(struct dfg_team *t)
{
	if (!t->inbox)
		return;
	free(t->inbox->tx);
	free(t->inbox->land);
	free(t->inbox);
	t->inbox = NULL;
}

/* The team's inbox state, made at its first use. */
static struct dfg_inbox *inbox_state(struct dfg_team *t)
{
	struct dfg_inbox *in = t->inbox;

	if (in)
		return in;
	in = calloc(1, sizeof(*in));
	if (!in)
		return NULL;
	in->tx = calloc(t->size, sizeof(*in->tx));
	in->land = aligned_alloc(64, (size_t)t->size * INBOX_LAND);
	if (!in->tx || !in->land) {
		free(in->tx);
		free(in->land);
		free(in);
		return NULL;
	}
	t->inbox = in;
	return in;
}

/* Chunk bytes and count of a pair's area of two @slot-byte slots. */
static size_t inbox_chunk(size_t slot, unsigned int *nch)
{
	/*
	 * Whole cache lines, at most INBOX_CHUNKS of them: the reductions
	 * read elements of up to 8 bytes in place, and 2 x slot / 64 need
	 * not be aligned (1310 bytes at N = 5).
	 */
	size_t chunk = (2 * slot / INBOX_CHUNKS + 63) & ~(size_t)63;

	*nch = chunk ? 2 * slot / chunk : 0;
	return chunk;
}

/*
 * Take chunks @first.. (@n of them) of our area for @peer for this call,
 * once @peer is done with what earlier calls stored there (it has begun
 * the call after the latest of them). @again: they may hold this call's
 * earlier pieces already (inbox_piece_put() says why that is safe).
 */
static int inbox_claim(struct dfg_call *c, struct dfg_inbox_pair *p,
		       unsigned int peer, unsigned int first, unsigned int n,
		       bool again)
{
	__u64 last = 0;
	unsigned int i;
	int ret;

	for (i = first; i < first + n; i++)
		if (p->seq[i] > last)
			last = p->seq[i];
	/* One payload per pair and call, but for pieces: an earlier call's. */
	if (last > c->seq || (last == c->seq && !again))
		return -EPROTO;
	if (last && last < c->seq) {
		ret = c->x->ops->wait_begun(c->x, peer, last + 1);
		if (ret)
			return ret;
	}
	for (i = first; i < first + n; i++)
		p->seq[i] = c->seq;
	p->next = first + n;
	return 0;
}

/*
 * The offset in our area for @peer where a payload of @len bytes (at
 * most a slot of @slot bytes) goes in this call, into *@off, once
 * @peer is done with what was there.
 */
static int inbox_place(struct dfg_call *c, struct dfg_inbox_pair *p,
		       unsigned int peer, size_t slot, size_t len,
		       size_t *off)
{
	unsigned int nch, n, first = p->next;
	size_t chunk = inbox_chunk(slot, &nch);
	int ret;

	if (!chunk)
		return -EMSGSIZE;
	n = (len + chunk - 1) / chunk;
	if (len > slot || n > nch)
		return -EMSGSIZE;
	if (first + n > nch)
		first = 0;
	ret = inbox_claim(c, p, peer, first, n, false);
	if (!ret)
		*off = first * chunk;
	return ret;
}

/* Bytes of an all-to-all piece: half the area's chunks, 0 if none. */
static size_t inbox_piece(size_t slot)
{
	unsigned int nch;
	size_t chunk = inbox_chunk(slot, &nch);

	return nch / 2 * chunk;
}

/*
 * Store piece @k (@len bytes of @data, at most inbox_piece()) of this
 * call's block for @peer into the half k & 1 of our area for it; tell
 * @peer where. The half held piece k - 2 of this call (read by @peer
 * before it sent its piece k - 1, heard in the round before: no wait) or
 * an earlier call's payloads (wait until @peer has begun the call after
 * them, as inbox_place() does).
 */
static int inbox_piece_put(struct dfg_call *c, unsigned int peer,
			   const void *data, size_t len, unsigned int k)
{
	struct dfg_xport *x = c->x;
	struct dfg_inbox *in = inbox_state(c->t);
	unsigned int nch, first;
	size_t size = 0, chunk;
	__u64 where;
	char *slot;
	int ret;

	if (len <= DFG_EAGER_MAX)
		return dfg_call_send(c, peer, data, len);
	if (!in)
		return -ENOMEM;
	slot = x->ops->inbox(x, c->t->rank, peer, 0, &size);
	chunk = slot ? inbox_chunk(size, &nch) : 0;
	if (!chunk || len > nch / 2 * chunk)
		return -EMSGSIZE;
	first = (k & 1) * (nch / 2);
	ret = inbox_claim(c, &in->tx[peer], peer, first,
			  (len + chunk - 1) / chunk, k > 1);
	if (ret)
		return ret;
	dfg_copy(slot + (size_t)first * chunk, data, len);
	where = (size_t)first * chunk;
	return dfg_call_send(c, peer, &where, sizeof(where));
}

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
	/* An all-to-all block of any size, in pieces above a slot. */
	if (kind == DFG_COLL_ALLTOALL && !t->inbox_parity)
		return true;
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
	if (!c->t->inbox_parity) {
		struct dfg_inbox *in = inbox_state(c->t);
		__u64 where;
		size_t off;

		if (!in)
			return -ENOMEM;
		/* The pair's area: its even slot, then the odd one. */
		slot = x->ops->inbox(x, c->t->rank, peer, 0, &size);
		if (!slot || len > size)
			return -EMSGSIZE;
		ret = inbox_place(c, &in->tx[peer], peer, size, len, &off);
		if (ret)
			return ret;
		dfg_copy((char *)slot + off, data, len);
		where = off;
		return dfg_call_send(c, peer, &where, sizeof(where));
	}
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
 * Receive @src's message of a payload of @len bytes stored into its slots
 * for us: where the payload is, or NULL with *@err. @op as in
 * dfg_call_recv_op().
 */
static const void *inbox_slot_recv(struct dfg_call *c, unsigned int src,
				   size_t len, int *op, int *err)
{
	struct dfg_xport *x = c->x;
	size_t size = 0;
	char *slot;
	__u64 off;

	if (c->t->inbox_parity) {
		slot = x->ops->inbox(x, src, c->t->rank, c->seq, &size);
		if (!slot || len > size) {
			*err = -EMSGSIZE;
			return NULL;
		}
		*err = dfg_call_recv_op(c, src, NULL, 0, op);
		return *err ? NULL : slot;
	}
	slot = x->ops->inbox(x, src, c->t->rank, 0, &size);
	if (!slot || len > size) {
		*err = -EMSGSIZE;
		return NULL;
	}
	*err = dfg_call_recv_op(c, src, &off, sizeof(off), op);
	if (*err)
		return NULL;
	/* The source wrote the offset: never trust it beyond the area. */
	if (off > 2 * size || len > 2 * size - off) {
		*err = -EPROTO;
		return NULL;
	}
	return slot + off;
}

/*
 * @src's payload of @len bytes for us in this call, once its message
 * came; or NULL. An eager payload lands in the team's landing memory for
 * @src (with DFG_COLL_PREV=ring: in @src's slot for us, which @src does
 * not store into during this call then).
 */
static const void *inbox_get(struct dfg_call *c, unsigned int src,
			     size_t len, int *err)
{
	struct dfg_xport *x = c->x;
	struct dfg_inbox *in;
	size_t size = 0;
	void *land;

	if (len > DFG_EAGER_MAX)
		return inbox_slot_recv(c, src, len, NULL, err);
	if (c->t->inbox_parity) {
		land = x->ops->inbox(x, src, c->t->rank, c->seq, &size);
		if (!land || len > size) {
			*err = -EMSGSIZE;
			return NULL;
		}
	} else {
		in = inbox_state(c->t);
		if (!in) {
			*err = -ENOMEM;
			return NULL;
		}
		land = in->land + (size_t)src * INBOX_LAND;
	}
	*err = dfg_call_recv(c, src, land, len);
	return *err ? NULL : land;
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
	const void *slot;
	int ret;

	if (len <= DFG_EAGER_MAX)
		return dfg_call_recv_op(c, src, dst, len, op);
	slot = inbox_slot_recv(c, src, len, op, &ret);
	if (slot)
		dfg_copy(dst, slot, len);
	return ret;
}

/*
 * Until every peer's message of this call is there (those of a peer that
 * left one in the stash excepted), where the transport can wait for a
 * set: oversubscribed, a rank that waited for each peer in turn slept and
 * was woken once per late peer. Failures are left to the receives. With
 * one peer to hear, its receive waits the same way by itself.
 */
static void inbox_wait_all(struct dfg_call *c)
{
	unsigned int n = c->t->size, rank = c->t->rank, srcs[DFG_TEAM_SIZE_MAX];
	unsigned int m = 0;

	if (!c->x->ops->msg_wait_all)
		return;
	for (unsigned int i = 1; i < n; i++) {
		unsigned int src = (rank + n - i) % n;

		if (!c->t->stash[src].valid)
			srcs[m++] = src;
	}
	if (m > 1)
		(void)c->x->ops->msg_wait_all(c->x, srcs, m);
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
	inbox_wait_all(c);
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
	inbox_wait_all(c);
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
	if (!ret)
		inbox_wait_all(c);
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
	size_t b = c->count, slot = inbox_slot_size(c->x);
	size_t piece = b > slot ? inbox_piece(slot) : b, off = 0;
	const char *sbuf = c->sbuf;
	char *rbuf = c->rbuf;
	int ret = 0, err = 0;

	*engine = false;
	if (b > slot && !piece)
		return -EMSGSIZE;
	/* Round k moves piece k of every block (inbox.c's head comment). */
	for (unsigned int k = 0; !k || off < b; k++, off += piece) {
		size_t len = b - off < piece ? b - off : piece;

		/*
		 * Every piece leaves before its place in rbuf is written:
		 * rbuf may be sbuf.
		 */
		for (unsigned int i = 1; i < n && !ret; i++) {
			unsigned int p = (rank + i) % n;

			ret = b > slot ?
			      inbox_piece_put(c, p, sbuf + p * b + off, len,
					      k) :
			      inbox_put(c, p, sbuf + p * b, b);
		}
		if (ret)
			return ret;
		if (b && !k)
			dfg_copy(rbuf + rank * b, sbuf + rank * b, b);
		inbox_wait_all(c);
		/*
		 * Hear every peer, also after a mismatch: the messages must
		 * not stay in the boxes, and a peer that took the engine
		 * needs us there. All ranks see a mismatch in round 0 if
		 * any pair has one, and stop there.
		 */
		for (unsigned int i = 1; i < n; i++) {
			unsigned int src = (rank + n - i) % n;
			int op = DFG_A2A_OP_INBOX;

			ret = inbox_take(c, src, rbuf + src * b + off, len,
					 &op);
			if (ret && ret != -EINVAL)
				return ret;
			if (op != DFG_A2A_OP_INBOX)
				*engine = true;
			if (ret && !err)
				err = ret;
		}
		if (err || *engine)
			return err;
	}
	return 0;
}
