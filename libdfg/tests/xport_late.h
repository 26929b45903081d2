/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg tests: a transport that completes late and out of order.
 *
 * It wraps another transport (xport.h) and holds every get and put back:
 * nothing moves when it is posted. complete(t) carries out the held
 * operations up to ticket t, and a random choice of later ones, in a
 * random order; flush() all of them, shuffled. notify() and fadd() first
 * carry out the puts to their peer (xport.h orders them after those),
 * nothing else does: waiting, messages and peeks leave everything held,
 * as a network card that is slow would. An algorithm that reads a
 * landing buffer before completing its get, reuses a put's source before
 * completing it, or tells a peer it is done reading before the read is
 * complete, then sees (or leaves) the wrong bytes, and the results stop
 * matching the serial reference.
 *
 * The shared-memory transport completes every operation when it is
 * posted, so over it the deferred paths of the algorithms never ran.
 */
#ifndef _DFG_TESTS_XPORT_LATE_H
#define _DFG_TESTS_XPORT_LATE_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/xport.h"

/* An operation held back. */
struct late_op {
	int		ticket;
	bool		put;
	unsigned int	peer;
	struct dfg_xkey	key;
	size_t		off;
	void		*local;
	struct dfg_xkey	lkey;
	bool		has_lkey;
	size_t		len;
};

/*
 * struct late - the wrapper
 * @in:		the transport that really moves the bytes
 * @ops:	held operations, @nr of them (in posting order)
 * @rng:	xorshift state: the orders chosen
 * @held:	operations ever held back, @reordered: carried out before
 *		an earlier one, @early: carried out past the ticket asked
 */
struct late {
	struct dfg_xport	x;
	struct dfg_xport	*in;
	struct late_op		*ops;
	unsigned int		nr;
	unsigned int		cap;
	int			tickets;
	__u64			rng;
	unsigned long		held;
	unsigned long		reordered;
	unsigned long		early;
};

static inline struct late *to_late(struct dfg_xport *x)
{
	return (struct late *)x;
}

static inline __u64 late_rand(struct late *l)
{
	l->rng ^= l->rng << 13;
	l->rng ^= l->rng >> 7;
	l->rng ^= l->rng << 17;
	return l->rng;
}

/* Carry out held op @i (and forget it). */
static inline int late_do(struct late *l, unsigned int i)
{
	struct late_op o = l->ops[i];
	const struct dfg_xkey *lk = o.has_lkey ? &o.lkey : NULL;
	int ret;

	for (unsigned int j = 0; j < i; j++)
		if (l->ops[j].ticket < o.ticket) {
			l->reordered++;
			break;
		}
	l->ops[i] = l->ops[--l->nr];
	ret = o.put ? l->in->ops->put(l->in, o.peer, &o.key, o.off, o.local,
				      lk, o.len) :
		      l->in->ops->get(l->in, o.peer, &o.key, o.off, o.local,
				      lk, o.len);
	if (ret < 0)
		return ret;
	return l->in->ops->flush(l->in);
}

/*
 * Carry out, in random order, every held op with @pick(op) true, and each
 * of the others with probability 1/4 when @early.
 */
static inline int late_run(struct late *l, bool (*pick)(const struct late_op *,
							 long), long arg,
			   bool early)
{
	int ret = 0, r;

	for (;;) {
		unsigned int want = 0, k;

		/* The ops to carry out now, picked at random among them. */
		for (unsigned int i = 0; i < l->nr; i++)
			want += pick(&l->ops[i], arg);
		if (!want)
			break;
		k = late_rand(l) % want;
		for (unsigned int i = 0; i < l->nr; i++) {
			if (!pick(&l->ops[i], arg))
				continue;
			if (k--)
				continue;
			/* Now and then a later one first: out of order. */
			if (early && l->nr > want && late_rand(l) % 4 == 0) {
				for (unsigned int j = 0; j < l->nr; j++) {
					if (pick(&l->ops[j], arg))
						continue;
					l->early++;
					r = late_do(l, j);
					if (!ret)
						ret = r;
					break;
				}
				break;
			}
			r = late_do(l, i);
			if (!ret)
				ret = r;
			break;
		}
	}
	return ret;
}

static inline bool late_upto(const struct late_op *o, long ticket)
{
	return o->ticket <= ticket;
}

static inline bool late_all(const struct late_op *o, long unused)
{
	(void)o;
	(void)unused;
	return true;
}

static inline bool late_puts_to(const struct late_op *o, long peer)
{
	return o->put && o->peer == (unsigned long)peer;
}

static inline int late_hold(struct dfg_xport *x, bool put, unsigned int peer,
			    const struct dfg_xkey *key, size_t off,
			    const void *local, const struct dfg_xkey *lkey,
			    size_t len)
{
	struct late *l = to_late(x);

	if (peer >= x->size)
		return -EINVAL;
	if (off > key->len || len > key->len - off)
		return -ERANGE;
	if (l->nr == l->cap) {
		unsigned int cap = l->cap ? 2 * l->cap : 16;
		struct late_op *o = realloc(l->ops, cap * sizeof(*o));

		if (!o)
			return -ENOMEM;
		l->ops = o;
		l->cap = cap;
	}
	l->ops[l->nr++] = (struct late_op){
		.ticket = ++l->tickets, .put = put, .peer = peer, .key = *key,
		.off = off, .local = (void *)local, .lkey = lkey ? *lkey :
		(struct dfg_xkey){ 0 }, .has_lkey = lkey, .len = len,
	};
	l->held++;
	return l->tickets;
}

static inline int late_get(struct dfg_xport *x, unsigned int peer,
			   const struct dfg_xkey *key, size_t off, void *local,
			   const struct dfg_xkey *lkey, size_t len)
{
	return late_hold(x, false, peer, key, off, local, lkey, len);
}

static inline int late_put(struct dfg_xport *x, unsigned int peer,
			   const struct dfg_xkey *key, size_t off,
			   const void *local, const struct dfg_xkey *lkey,
			   size_t len)
{
	return late_hold(x, true, peer, key, off, local, lkey, len);
}

static inline int late_complete(struct dfg_xport *x, int ticket)
{
	if (ticket > to_late(x)->tickets)
		return -EINVAL;
	return late_run(to_late(x), late_upto, ticket, true);
}

/* Held (not carried out yet): in flight. */
static inline int late_in_flight(struct dfg_xport *x, int ticket)
{
	struct late *l = to_late(x);

	for (unsigned int i = 0; i < l->nr; i++)
		if (l->ops[i].ticket == ticket)
			return 1;
	return 0;
}

static inline int late_flush(struct dfg_xport *x)
{
	return late_run(to_late(x), late_all, 0, false);
}

static inline int late_notify(struct dfg_xport *x, unsigned int peer,
			      unsigned int slot, __u64 value)
{
	struct late *l = to_late(x);
	int ret = late_run(l, late_puts_to, peer, false);

	return ret ? ret : l->in->ops->notify(l->in, peer, slot, value);
}

static inline int late_fadd(struct dfg_xport *x, unsigned int peer,
			    unsigned int idx, __u64 add, __u64 *old)
{
	struct late *l = to_late(x);
	int ret = late_run(l, late_puts_to, peer, false);

	return ret ? ret : l->in->ops->fadd(l->in, peer, idx, add, old);
}

/* The rest passes through. */
static inline int late_expose(struct dfg_xport *x, const void *addr,
			      size_t len, unsigned int flags,
			      struct dfg_xkey *key)
{
	return to_late(x)->in->ops->expose(to_late(x)->in, addr, len, flags,
					   key);
}

static inline void late_unexpose(struct dfg_xport *x, struct dfg_xkey *key)
{
	to_late(x)->in->ops->unexpose(to_late(x)->in, key);
}

static inline void *late_peer_ptr(struct dfg_xport *x, unsigned int peer,
				  const struct dfg_xkey *key, size_t off,
				  size_t len, int *err)
{
	/* Peers only through get and put; our own memory as it is. */
	*err = 0;
	if (peer != x->rank)
		return NULL;
	return to_late(x)->in->ops->peer_ptr(to_late(x)->in, peer, key, off,
					     len, err);
}

static inline int late_wait(struct dfg_xport *x, unsigned int word,
			    __u64 value, __u64 *now)
{
	return to_late(x)->in->ops->wait(to_late(x)->in, word, value, now);
}

static inline __u64 late_peek(struct dfg_xport *x, unsigned int word)
{
	return to_late(x)->in->ops->peek(to_late(x)->in, word);
}

static inline int late_msg_send(struct dfg_xport *x, unsigned int peer,
				const void *buf, size_t len)
{
	return to_late(x)->in->ops->msg_send(to_late(x)->in, peer, buf, len);
}

static inline int late_msg_recv(struct dfg_xport *x, unsigned int src,
				void *buf, size_t cap)
{
	return to_late(x)->in->ops->msg_recv(to_late(x)->in, src, buf, cap);
}

static inline int late_begin(struct dfg_xport *x, __u64 seq)
{
	x->seq = seq;
	return to_late(x)->in->ops->begin(to_late(x)->in, seq);
}

static inline int late_abort(struct dfg_xport *x, __u64 seq)
{
	return to_late(x)->in->ops->abort(to_late(x)->in, seq);
}

static inline int late_broken(struct dfg_xport *x)
{
	return to_late(x)->in->ops->broken(to_late(x)->in);
}

/* A call ended: what it left posted lands now, as it would on a wire. */
static inline void late_release(struct dfg_xport *x)
{
	late_flush(x);
	to_late(x)->in->ops->release(to_late(x)->in);
}

static inline void late_destroy(struct dfg_xport *x)
{
	free(to_late(x)->ops);
	to_late(x)->ops = NULL;
	to_late(x)->nr = to_late(x)->cap = 0;
}

static const struct dfg_xport_ops late_ops = {
	.name = "late", .expose = late_expose, .unexpose = late_unexpose,
	.peer_ptr = late_peer_ptr, .get = late_get, .put = late_put,
	.complete = late_complete, .flush = late_flush,
	.in_flight = late_in_flight, .notify = late_notify, .fadd = late_fadd, .wait = late_wait,
	.peek = late_peek, .msg_send = late_msg_send,
	.msg_recv = late_msg_recv, .begin = late_begin, .abort = late_abort,
	.broken = late_broken, .release = late_release,
	.destroy = late_destroy,
};

/* Wrap @in (not owned) in @l; @seed picks the orders. */
static inline void late_init(struct late *l, struct dfg_xport *in,
			     __u64 seed)
{
	*l = (struct late){
		.x = { .ops = &late_ops, .rank = in->rank, .size = in->size },
		.in = in,
		.rng = seed | 1,
	};
}

#endif /* _DFG_TESTS_XPORT_LATE_H */
