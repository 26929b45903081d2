// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg collectives: allreduce, reduce and reduce_scatter by segmented,
 * pipelined recursive halving (patent 002, CN101206588A; see
 * shared/reference/002-allreduce-recursive-halving.md, section 4.4).
 *
 * Distribution (reduce-scatter): log2(p2) steps; at step i a rank works
 * with partner vrank ^ (1 << i). The vector is cut into M segments (the
 * patent's slices, M = slice[i] for every i); at each step each
 * segment's current range is halved and the rank whose bit i is set keeps
 * the lower half (Fig. 8 roles: it sends the odd pieces). The half kept
 * of segment m is reduced with the partner's copy of it while segment
 * m + 1 is in flight (claim 1), and a step's last reduction overlaps the
 * next partner's first transfer or the collection's (318 deferred).
 *
 * Data is pulled: a rank reads its partner's half (RDMA read, or loads
 * through a mapping) once the partner says it is final, and writes only
 * its own memory. Results stay at their natural offsets of the work
 * vector W (the patent's remark that a slice at offset x lands at offset
 * x): this fixes Fig. 8's unspecified output of 842 (erratum 3; compact
 * placement overwrites what the next step still sends) and keeps the
 * collection phase contiguous.
 *
 * Collection: the mirror order, distance p2/2 down to 1 (errata of Figs.
 * 6 and 7): recursive doubling for allreduce (every rank pulls what its
 * partner holds), a binomial gather towards the root for reduce (the
 * rank relabelled w = vrank ^ vroot pulls from w + 2^i), a direct
 * collection of its block for reduce_scatter.
 *
 * Non-power-of-two sizes: fold and unfold (dfg_fold_*), uneven halves.
 *
 * Order: every element is reduced as a balanced tree over the virtual
 * ranks, the lower rank's partial on the left; a folded pair combines as
 * (even, odd). So results do not depend on timing, and a serial
 * reference using the same tree matches bit for bit.
 *
 * Readiness and completion travel as notifications: DFG_SLOT_STEP(i)
 * from the producer of step i's data (value: segments ready), GATHER
 * during collection, FOLD for unfold, DONE when a rank stops reading its
 * peers' memory (nobody returns, and so unexposes, before its readers
 * are done).
 *
 * Evidence of the overlap (environment, read at every call):
 * DFG_COLL_OVERLAP=0 turns it off (each segment's transfer is completed
 * and reduced before the next is posted: the baseline for the time the
 * overlap saves); DFG_COLL_TRACE=1 prints, at the end of the call, a
 * line per reduced segment to stderr (rh_trace_print()): when its
 * transfer was posted, when completing it began and ended, when its
 * reduction ended, and whether the next segment's transfer was in
 * flight when the reduction began and when it ended (the transport's
 * in_flight(); -1 where there is no next transfer or no such op).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "copy.h"
#include "coll.h"

struct rh_note {
	unsigned int	peer;
	unsigned int	slot;
	__u64		val;
};

/*
 * struct rh_trace - one reduced segment, DFG_COLL_TRACE (times: µs since
 * the call began)
 * @step, @seg:	distribution step (-1: the fold), segment
 * @bytes:	the segment's length
 * @post:	its transfer posted (or its peer pointer taken)
 * @wait:	completing it began (rh_finish())
 * @done:	completed; the reduction begins
 * @end:	reduction done
 * @next0, @next1: the next segment's transfer in flight at @done, @end
 */
struct rh_trace {
	int		step;
	unsigned int	seg;
	size_t		bytes;
	double		post, wait, done, end;
	int		next0, next1;
};

/*
 * struct rh_pend - the reduction of the last segment transferred (§4.4's
 * pending_t): run when the next transfer is posted, or before a wait
 * that might depend on it
 */
struct rh_pend {
	bool		valid;
	bool		ticket_valid;
	int		ticket;
	bool		own_lower;
	const void	*own;
	const void	*peer;
	void		*dst;
	size_t		cnt;
	struct rh_note	note;
	struct rh_trace	tr;
};

/*
 * struct rh - one call's state
 * @f, @v, @q:	fold, this rank's virtual rank (-1: folded out), log2(p2)
 * @segs:	segments per half-exchange (M)
 * @n, @e:	elements, bytes per element
 * @src, @work:	my input and work vector (from @b)
 * @b:		the call's buffers
 * @keys:	every rank's keys as received (by real rank)
 * @slot:	two landing slots for transports without load/store
 * @g:		transfers posted (selects the slot)
 * @overlap:	reduce segment k while k + 1 is in flight (DFG_COLL_OVERLAP)
 * @step, @seg:	what rh_reduce_seg() is called for (traces)
 * @tr, @ntr, @captr: trace records (DFG_COLL_TRACE; @tr NULL: off)
 * @t0:		CLOCK_MONOTONIC at the call's start, seconds (traces)
 */
struct rh {
	struct dfg_call		*c;
	struct dfg_xport	*x;
	struct dfg_fold		f;
	int			v;
	unsigned int		q;
	unsigned int		segs;
	size_t			n;
	size_t			e;
	const char		*src;
	char			*work;
	struct dfg_cbufs	b;
	struct dfg_ckeys	*keys;
	char			*slot[2];
	unsigned int		g;
	struct rh_pend		pend;
	bool			overlap;
	int			step;
	unsigned int		seg;
	struct rh_trace		*tr;
	unsigned int		ntr;
	unsigned int		captr;
	double			t0;
};

static double rh_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* µs since the call began. */
static double rh_us(const struct rh *h)
{
	return (rh_now() - h->t0) * 1e6;
}

/* The next transfer's state: in flight (1), done (0), none or unknown. */
static int rh_next_state(struct rh *h, int next)
{
	if (next < 0 || !h->x->ops->in_flight)
		return -1;
	return h->x->ops->in_flight(h->x, next);
}

/* Keep @t; a full trace grows, and a failed growth drops the record. */
static void rh_trace_add(struct rh *h, const struct rh_trace *t)
{
	if (h->ntr == h->captr) {
		unsigned int cap = h->captr ? 2 * h->captr : 64;
		struct rh_trace *n = realloc(h->tr, cap * sizeof(*n));

		if (!n)
			return;
		h->tr = n;
		h->captr = cap;
	}
	h->tr[h->ntr++] = *t;
}

/*
 * Complete and reduce the pending segment; @next: the ticket of the
 * transfer posted after it (-1: none), whose state a trace records.
 */
static int rh_finish(struct rh *h, int next)
{
	struct rh_pend *p = &h->pend;
	int ret;

	if (!p->valid)
		return 0;
	p->valid = false;
	if (h->tr)
		p->tr.wait = rh_us(h);
	if (p->ticket_valid) {
		ret = h->x->ops->complete(h->x, p->ticket);
		if (ret)
			return ret;
	}
	if (h->tr) {
		p->tr.done = rh_us(h);
		p->tr.next0 = rh_next_state(h, next);
	}
	dfg_reducer_run(&h->c->red, p->dst, p->own_lower ? p->own : p->peer,
			p->own_lower ? p->peer : p->own, p->cnt);
	if (h->tr) {
		p->tr.end = rh_us(h);
		p->tr.next1 = rh_next_state(h, next);
		rh_trace_add(h, &p->tr);
	}
	if (p->note.slot == DFG_XPORT_SLOTS)
		return 0;
	return h->x->ops->notify(h->x, p->note.peer, p->note.slot,
				 p->note.val);
}

/*
 * Wait for @peer's inbox word @slot to reach @val; when it has not yet,
 * run the pending reduction first: the peer may be waiting for its
 * result (the patent's cross-step overlap is only taken when free).
 */
static int rh_ready(struct rh *h, unsigned int peer, unsigned int slot,
		    __u64 val)
{
	struct dfg_xport *x = h->x;
	int ret;

	if (x->ops->peek(x, dfg_xport_inbox(peer, slot)) >= val)
		return 0;
	ret = rh_finish(h, -1);
	if (ret)
		return ret;
	return dfg_xport_wait_from(x, peer, slot, val);
}

/* Peer data [lo, hi) of (@key, @off): a pointer, or a posted get. */
static const void *rh_fetch(struct rh *h, unsigned int peer,
			    const struct dfg_xkey *key, __u64 off, size_t lo,
			    size_t cnt, void *land, int *ticket, int *err)
{
	struct dfg_xport *x = h->x;
	const void *p;

	*ticket = -1;
	p = x->ops->peer_ptr(x, peer, key, off + lo * h->e, cnt * h->e, err);
	if (p || *err)
		return p;
	*ticket = x->ops->get(x, peer, key, off + lo * h->e, land,
			      &h->c->t->scratch.key, cnt * h->e);
	if (*ticket < 0) {
		*err = *ticket;
		return NULL;
	}
	return land;
}

/*
 * One segment of an exchange (308/310 then 314): wait until the peer's
 * copy is final, start its transfer, run the previous segment's
 * reduction meanwhile, and leave this one pending (without the overlap:
 * reduce it at once).
 */
static int rh_reduce_seg(struct rh *h, unsigned int peer, bool own_lower,
			 const struct dfg_xkey *pkey, __u64 poff,
			 const char *own, size_t lo, size_t hi,
			 unsigned int wslot, __u64 wval, struct rh_note note)
{
	const void *pp;
	int ticket, err = 0;
	double posted;

	if (wslot < DFG_XPORT_SLOTS) {
		err = rh_ready(h, peer, wslot, wval);
		if (err)
			return err;
	}
	pp = rh_fetch(h, peer, pkey, poff, lo, hi - lo, h->slot[h->g % 2],
		      &ticket, &err);
	if (!pp)
		return err;
	/* before the previous segment's reduction, which it overlaps */
	posted = h->tr ? rh_us(h) : 0;
	h->g++;
	err = rh_finish(h, ticket);
	if (err)
		return err;
	h->pend = (struct rh_pend){
		.valid = true,
		.ticket_valid = ticket >= 0,
		.ticket = ticket,
		.own_lower = own_lower,
		.own = own + lo * h->e,
		.peer = pp,
		.dst = h->work + lo * h->e,
		.cnt = hi - lo,
		.note = note,
		.tr = {
			.step = h->step, .seg = h->seg,
			.bytes = (hi - lo) * h->e,
			.post = posted,
		},
	};
	return h->overlap ? 0 : rh_finish(h, -1);
}

/* Copy the peer's [lo, hi) of its W into ours at the same offset. */
static int rh_copy_seg(struct rh *h, unsigned int peer, size_t lo,
		       size_t hi, unsigned int wslot, __u64 wval)
{
	const struct dfg_ckeys *k = &h->keys[peer];
	void *dst = h->work + lo * h->e;
	int ticket, err = 0;
	const void *pp;

	if (wslot < DFG_XPORT_SLOTS) {
		err = rh_ready(h, peer, wslot, wval);
		if (err)
			return err;
	}
	if (hi == lo)
		return 0;
	pp = rh_fetch(h, peer, &k->work, k->woff, lo, hi - lo, dst, &ticket,
		      &err);
	if (!pp)
		return err;
	if (ticket >= 0)
		return h->x->ops->complete(h->x, ticket);
	dfg_copy(dst, pp, (hi - lo) * h->e);
	return 0;
}

static struct rh_note rh_note(unsigned int peer, unsigned int slot, __u64 val)
{
	return (struct rh_note){ .peer = peer, .slot = slot, .val = val };
}

#define RH_NO_NOTE	((struct rh_note){ .slot = DFG_XPORT_SLOTS })

/* Real rank of the partner of step @i. */
static unsigned int rh_partner(const struct rh *h, unsigned int i)
{
	return dfg_fold_rank(&h->f, (unsigned int)h->v ^ (1U << i));
}

static bool rh_folded_odd(const struct rh *h, unsigned int rank)
{
	return rank < 2 * h->f.r && (rank & 1);
}

/* G(i, m): "my data for collection step i, segment m, is final". */
static __u64 rh_gval(const struct rh *h, unsigned int i, unsigned int m)
{
	return dfg_call_val(h->c, (h->q - 1 - i) * h->segs + m + 1);
}

/* The virtual rank the reduce's collection ends at. */
static unsigned int rh_vroot(const struct rh *h)
{
	unsigned int root = h->c->root;

	if (root < 2 * h->f.r && !(root & 1))
		root++;
	return (unsigned int)dfg_fold_vrank(&h->f, root);
}

/* Does this rank send (w bit @i set, higher bits clear) at gather step i? */
static bool rh_gather_sends(const struct rh *h, unsigned int i)
{
	unsigned int w = (unsigned int)h->v ^ rh_vroot(h);

	return (w >> i) == 1;
}

/* Who is told when my segment of the last step is final. */
static struct rh_note rh_last_note(const struct rh *h, unsigned int m)
{
	unsigned int i = h->q - 1;

	switch (h->c->kind) {
	case DFG_COLL_ALLREDUCE:
		return rh_note(rh_partner(h, i), DFG_SLOT_GATHER,
			       rh_gval(h, i, m));
	case DFG_COLL_REDUCE:
		if (rh_gather_sends(h, i))
			return rh_note(rh_partner(h, i), DFG_SLOT_GATHER,
				       rh_gval(h, i, m));
		return RH_NO_NOTE;
	default:
		return RH_NO_NOTE;
	}
}

static int rh_fold(struct rh *h)
{
	unsigned int rank = h->c->t->rank, even = rank - 1;
	const struct dfg_ckeys *k = &h->keys[even];
	int ret;

	for (unsigned int m = 0; m < h->segs; m++) {
		size_t lo = dfg_block_lo(h->n, h->segs, m);
		size_t hi = lo + dfg_block_len(h->n, h->segs, m);
		struct rh_note note = RH_NO_NOTE;

		if (h->q)
			note = rh_note(rh_partner(h, 0), DFG_SLOT_STEP(0),
				       dfg_call_val(h->c, m + 1));
		h->step = -1;
		h->seg = m;
		ret = rh_reduce_seg(h, even, false, &k->src, k->soff, h->src,
				    lo, hi, DFG_XPORT_SLOTS, 0, note);
		if (ret)
			return ret;
	}
	return 0;
}

/* The distribution phase (Fig. 3 / Fig. 8, corrected). */
static int rh_distribute(struct rh *h)
{
	const char *own0 = rh_folded_odd(h, h->c->t->rank) ? h->work : h->src;
	unsigned int v = (unsigned int)h->v;
	int ret;

	for (unsigned int i = 0; i < h->q; i++) {
		unsigned int p = rh_partner(h, i), bit = v >> i & 1;
		const struct dfg_ckeys *k = &h->keys[p];
		bool pfold = rh_folded_odd(h, p);
		const struct dfg_xkey *pkey = i || pfold ? &k->work : &k->src;
		__u64 poff = i || pfold ? k->woff : k->soff;
		unsigned int wslot = i || pfold ? DFG_SLOT_STEP(i) :
						  DFG_XPORT_SLOTS;

		for (unsigned int m = 0; m < h->segs; m++) {
			size_t lo, hi, mid;
			struct rh_note note;

			dfg_rh_range(h->n, h->segs, m, v, i, &lo, &hi);
			mid = lo + (hi - lo) / 2;
			if (bit)
				hi = mid;
			else
				lo = mid;
			if (i + 1 < h->q)
				note = rh_note(rh_partner(h, i + 1),
					       DFG_SLOT_STEP(i + 1),
					       dfg_call_val(h->c, m + 1));
			else
				note = rh_last_note(h, m);
			h->step = (int)i;
			h->seg = m;
			ret = rh_reduce_seg(h, p, !bit, pkey, poff,
					    i ? h->work : own0, lo, hi, wslot,
					    dfg_call_val(h->c, m + 1), note);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * Collection after the reduction, to all (allreduce; Fig. 7 corrected:
 * recursive doubling, mirrored) or to one (reduce; Fig. 6 corrected:
 * towards w = 0, mirrored). To one, a rank whose w has a bit at or above
 * step i set only sends at step i (its partner pulls), and tells the next
 * step's partner only if it sends there.
 */
static int rh_collect(struct rh *h, bool to_all)
{
	unsigned int v = (unsigned int)h->v;
	unsigned int w = to_all ? 0 : v ^ rh_vroot(h);
	int ret;

	for (unsigned int i = h->q; i-- > 0;) {
		unsigned int p = rh_partner(h, i);

		if (w >> i)	/* sender (partner pulls) or idle */
			continue;
		for (unsigned int m = 0; m < h->segs; m++) {
			size_t lo, hi;

			dfg_rh_range(h->n, h->segs, m, v ^ (1U << i), i + 1,
				     &lo, &hi);
			ret = rh_copy_seg(h, p, lo, hi, DFG_SLOT_GATHER,
					  rh_gval(h, i, m));
			if (!ret && i && (to_all || rh_gather_sends(h, i - 1)))
				ret = h->x->ops->notify(h->x,
							rh_partner(h, i - 1),
							DFG_SLOT_GATHER,
							rh_gval(h, i - 1, m));
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* reduce_scatter: pull block @rank of the result from its owners. */
static int rh_collect_block(struct rh *h)
{
	struct dfg_call *c = h->c;
	unsigned int rank = c->t->rank;
	size_t rc = h->n / c->t->size, blo = rank * rc, bhi = blo + rc;
	int ret;

	/*
	 * First every owner's "done": their distribution is over, so nobody
	 * reads our W or our input any more (we land pieces in W, and the
	 * input may be rbuf).
	 */
	for (unsigned int u = 0; u < h->f.p2; u++) {
		unsigned int ru = dfg_fold_rank(&h->f, u);

		if (ru == rank)
			continue;
		ret = dfg_xport_wait_from(h->x, ru, DFG_SLOT_GATHER,
					  dfg_call_val(c, 1));
		if (ret)
			return ret;
	}
	for (unsigned int u = 0; u < h->f.p2; u++) {
		unsigned int ru = dfg_fold_rank(&h->f, u);

		for (unsigned int m = 0; m < h->segs; m++) {
			size_t lo, hi;

			dfg_rh_range(h->n, h->segs, m, u, h->q, &lo, &hi);
			lo = lo < blo ? blo : lo;
			hi = hi > bhi ? bhi : hi;
			if (lo >= hi)
				continue;
			/* Land in W at the same offset, then to rbuf. */
			ret = rh_copy_seg(h, ru, lo, hi, DFG_XPORT_SLOTS, 0);
			if (ret)
				return ret;
		}
	}
	dfg_copy(c->rbuf, h->work + blo * h->e, rc * h->e);
	return 0;
}

/* Everyone this rank exchanges keys with and reads from, or is read by. */
static unsigned int rh_peers(const struct rh *h, unsigned int *peers)
{
	const struct dfg_call *c = h->c;
	unsigned int rank = c->t->rank, np = 0;

	if (c->kind == DFG_COLL_REDUCE_SCATTER) {
		for (unsigned int r = 0; r < c->t->size; r++)
			if (r != rank)
				peers[np++] = r;
		return np;
	}
	if (rank < 2 * h->f.r)
		peers[np++] = rank ^ 1;
	if (h->v >= 0)
		for (unsigned int i = 0; i < h->q; i++)
			peers[np++] = rh_partner(h, i);
	return np;
}

/* W is rbuf where the caller has the whole result, else scratch. */
static int rh_setup(struct rh *h, struct dfg_call *c)
{
	struct dfg_team *t = c->t;
	size_t bytes, slot_bytes;
	const char *env;
	bool user_w;
	int ret;

	h->c = c;
	h->x = c->x;
	env = getenv("DFG_COLL_OVERLAP");
	h->overlap = !env || strcmp(env, "0");
	env = getenv("DFG_COLL_TRACE");
	if (env && *env && strcmp(env, "0")) {
		h->t0 = rh_now();
		h->tr = malloc(64 * sizeof(*h->tr));
		h->captr = h->tr ? 64 : 0;
	}
	h->n = c->count;
	h->e = c->esize;
	bytes = h->n * h->e;
	dfg_fold_init(&h->f, t->size);
	h->v = dfg_fold_vrank(&h->f, t->rank);
	h->q = h->f.q;
	h->segs = dfg_coll_segments(t, bytes);
	user_w = c->kind == DFG_COLL_ALLREDUCE ||
		 (c->kind == DFG_COLL_REDUCE && t->rank == c->root);
	slot_bytes = dfg_block_len(h->n, h->segs, 0) * h->e;
	slot_bytes = (slot_bytes + 63) & ~(size_t)63;
	h->keys = calloc(t->size, sizeof(*h->keys));
	if (!h->keys)
		return -ENOMEM;
	ret = dfg_cbufs_setup(c, bytes, bytes, user_w ? c->rbuf : NULL,
			      2 * slot_bytes, &h->b);
	if (ret)
		return ret;
	h->src = h->b.src;
	h->work = h->b.work;
	h->slot[0] = h->b.extra;
	h->slot[1] = h->b.extra + slot_bytes;
	return 0;
}

/* DFG_COLL_TRACE: the call's segments, a line each, to stderr. */
static void rh_trace_print(const struct rh *h)
{
	const struct dfg_call *c = h->c;
	char buf[256];

	for (unsigned int k = 0; k < h->ntr; k++) {
		const struct rh_trace *r = &h->tr[k];

		/* One write per line: ranks share the terminal. */
		snprintf(buf, sizeof(buf),
			 "dfg-trace rh rank=%u size=%u seq=%llu bytes=%zu segs=%u overlap=%d step=%d seg=%u len=%zu post=%.1f wait=%.1f done=%.1f end=%.1f next_in_flight=%d,%d\n",
			 c->t->rank, c->t->size, (unsigned long long)c->seq,
			 h->n * h->e, h->segs, h->overlap, r->step, r->seg,
			 r->bytes, r->post, r->wait, r->done, r->end, r->next0,
			 r->next1);
		fputs(buf, stderr);
	}
	fflush(stderr);
}

static int rh_run(struct dfg_call *c)
{
	unsigned int peers[DFG_TEAM_SIZE_MAX], np, rank = c->t->rank;
	struct rh h = { 0 };
	int ret;

	ret = rh_setup(&h, c);
	if (ret)
		goto out;
	np = rh_peers(&h, peers);
	ret = dfg_ckeys_xchg(c, &h.b.keys, peers, np, peers, np, h.keys);
	if (ret)
		goto out;

	if (rh_folded_odd(&h, rank))
		ret = rh_fold(&h);
	if (!ret && h.v >= 0)
		ret = rh_distribute(&h);
	if (!ret)
		ret = rh_finish(&h, -1);
	if (ret)
		goto out;

	if (c->kind == DFG_COLL_REDUCE_SCATTER) {
		if (h.v >= 0) {
			for (unsigned int r = 0; r < c->t->size && !ret; r++)
				if (r != rank)
					ret = c->x->ops->notify(c->x, r,
							DFG_SLOT_GATHER,
							dfg_call_val(c, 1));
		}
		if (!ret)
			ret = rh_collect_block(&h);
	} else if (h.v >= 0) {
		ret = rh_collect(&h, c->kind == DFG_COLL_ALLREDUCE);
		/* Unfold: the folded-out even rank takes the result. */
		if (!ret && rank < 2 * h.f.r &&
		    (c->kind == DFG_COLL_ALLREDUCE || c->root == rank - 1))
			ret = c->x->ops->notify(c->x, rank - 1, DFG_SLOT_FOLD,
						dfg_call_val(c, 1));
	} else if (c->kind == DFG_COLL_ALLREDUCE || c->root == rank) {
		ret = dfg_xport_wait_from(c->x, rank + 1, DFG_SLOT_FOLD,
					  dfg_call_val(c, 1));
		if (!ret)
			ret = rh_copy_seg(&h, rank + 1, 0, h.n,
					  DFG_XPORT_SLOTS, 0);
	}
	if (!ret)
		ret = dfg_call_done(c, 1, peers, np, peers, np);
	if (!ret && h.b.out)
		dfg_copy(h.b.out, h.work, h.n * h.e);
out:
	if (h.tr && !ret)
		rh_trace_print(&h);
	free(h.tr);
	dfg_cbufs_teardown(c, &h.b);
	free(h.keys);
	return ret;
}

int dfg_rh_allreduce(struct dfg_call *c)
{
	return rh_run(c);
}

int dfg_rh_reduce_scatter(struct dfg_call *c)
{
	return rh_run(c);
}
