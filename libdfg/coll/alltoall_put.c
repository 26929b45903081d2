// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg collectives: all-to-all(v) across machines by one-sided puts
 * (DFG_ALGO_PUT), the table's choice wherever the transport has fence(),
 * complete_local() and wait_eq() (xport.h: the network transport).
 *
 * Each member exposes one landing area (once, DFG_XPORT_KEEP; its key
 * travels in call messages at the team's first call of this algorithm):
 *
 *	rec[src][2]		a record per source and call parity (phase 1)
 *	slot[src][2]		per source and call parity: a 64-byte header
 *				and @slot bytes of block
 *
 * A call, on every member (phase 0):
 *  1. for every peer j, one put into j's slot[me][p] (p: the parity of
 *     the team's calls of this algorithm) of a header (this call's value,
 *     sequence number << 1 | phase; our count for j, the count we expect
 *     from j, our largest count, flags; a hash of all of it) and our
 *     block for j behind it (no block when one of ours exceeds a slot),
 *     staged into one buffer per peer: one RDMA write per peer and call;
 *  2. wait until every source's header holds exactly the value (exact:
 *     the previous value of that word is the one of two calls back), and
 *     its hash matches what landed: a write is placed in no particular
 *     order within itself, so a header whose value is there but whose
 *     hash is not right is still landing, and is read again;
 *  3. wait for our puts to be done with their local memory (no remote
 *     completion: the peer that saw the value has the data, and a peer
 *     that has left the call may sit in another library without
 *     progressing ours; nothing here waits for a peer after step 2);
 *  4. copy the blocks out of the slots.
 * That is N - 1 puts per call, all in flight together, and no fence, no
 * atomic, no flush, no message. (It was three puts per peer: the block,
 * the header's body, and after a fence the value: under TCG and
 * Soft-RoCE, where each packet costs its sender and its receiver a
 * software CRC and a trip through the guest's network stack, a call of
 * small blocks cost about three times Open MPI's one eager send.)
 *
 * Every member sees every other's body, so all reach one verdict: a
 * member with unusable arguments (flag BAD, nothing sent) fails the call
 * on every member with -EINVAL; so does a fixed block that differs
 * anywhere (all members see all blocks). alltoallv checks each pair
 * both ways (my count for you against the count you expect from me, and
 * the reverse): the two members of a pair that disagree fail with
 * -EINVAL, the others' results are complete and they succeed. A call in
 * which every member ran the protocol to its end aborts nothing.
 *
 * Blocks larger than a slot (phase 1, a rendezvous): when the largest
 * count of any member (every member knows them all after phase 0)
 * exceeds a slot, every member exposes its receive buffer for the call
 * and sends every peer its key and that peer's offset in a call message;
 * a member whose own blocks exceed a slot sent none in phase 0 and now
 * puts each block straight into the destination's receive buffer (only
 * where the destination expects exactly that count), fences and puts
 * the phase-1 value; members whose blocks fit sent them in phase 0.
 *
 * Reuse of a slot: a source writes slot[src][p] of call k + 2 only after
 * it finished call k + 1, which needs our record of k + 1, which we put
 * only after we copied call k out: double buffering by the parity of the
 * calls of this algorithm (not of the team's sequence numbers: other
 * collectives come between), without an acknowledgement. Phase 1
 * rewrites rec[src][p] only after we sent our key, that is after we read
 * the phase-0 body. A call that fails half way (a transport error, a
 * peer's abort) breaks that reasoning, so this algorithm then fails the
 * team's later calls with -EPROTO (the engine does the same).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "copy.h"
#include "sys.h"
#include "coll.h"

/* Slot bytes: 1 MiB of slots per call parity, within [4 KiB, 64 KiB]. */
#define PUT_SLOTS_BUDGET	(1U << 20)
#define PUT_SLOT_MIN		(4U << 10)
#define PUT_SLOT_MAX		(64U << 10)

/* Flags of a body. */
#define PUT_F_BAD		0x1ULL	/* unusable arguments: nothing sent */

/*
 * struct put_body - what a source tells a destination in each call
 * @len:	bytes it sends this destination
 * @want:	bytes it expects from this destination
 * @max:	its largest count, sent or expected (0 when BAD)
 * @flags:	PUT_F_*
 */
struct put_body {
	__u64	len;
	__u64	want;
	__u64	max;
	__u64	flags;
};

/* A record: the body, then the call's value, put after a fence. */
struct put_rec {
	struct put_body	b;
	__u64		pad[3];
	__u64		seq;
};

_Static_assert(sizeof(struct put_rec) == 64, "one cache line per record");

/*
 * A slot's header: phase 0's value, the body, and @hash over the header
 * (with @hash 0) and the block behind it; the block is there unless
 * PUT_F_NODATA.
 */
struct put_hdr {
	__u64		seq;
	struct put_body	b;
	__u64		hash;
	__u64		pad[2];
};

_Static_assert(sizeof(struct put_hdr) == 64, "one cache line per header");

/* Flags of a body: the block was not sent in phase 0 (it is too big). */
#define PUT_F_NODATA		0x2ULL

/* What a receiver tells each source in phase 1. */
struct put_rdv {
	struct dfg_xkey	key;
	__u64		off;
};

/*
 * struct dfg_a2ap - a team's state of this algorithm
 * @x:		the team's transport
 * @area:	our landing area (@size bytes, mapped, exposed as @key)
 * @keys:	every member's landing-area key
 * @slot:	bytes of one slot
 * @off_slots:	where the slots begin in an area
 * @ncalls:	calls of this algorithm so far (their parity picks slots)
 * @broken:	a call failed half way: the slots' reuse is not safe
 * @out:	per peer, the body being put
 * @stage:	per peer, header and block as put (must outlive the put):
 *		sizeof(struct put_hdr) + @slot bytes each
 * @val:	the value being put, per phase
 * @rdv:	phase 1: per source, where its blocks for us go
 */
struct dfg_a2ap {
	struct dfg_xport	*x;
	void			*area;
	size_t			size;
	struct dfg_xkey		key;
	struct dfg_xkey		*keys;
	size_t			slot;
	size_t			off_slots;
	__u64			ncalls;
	bool			broken;
	struct put_body		*out;
	char			*stage;
	__u64			val[2];
	struct put_rdv		*rdv;
};

bool dfg_put_fits(const struct dfg_team *t)
{
	const struct dfg_xport_ops *o = t->x ? t->x->ops : NULL;

	return o && o->fence && o->complete_local && o->wait_eq;
}

static struct put_rec *put_rec(struct dfg_a2ap *a, unsigned int src,
			       unsigned int p)
{
	return (struct put_rec *)a->area + 2 * src + p;
}

static size_t put_rec_off(unsigned int src, unsigned int p)
{
	return (2 * (size_t)src + p) * sizeof(struct put_rec);
}

/* A slot: its header, then its block. */
static size_t put_slot_off(const struct dfg_a2ap *a, unsigned int src,
			   unsigned int p)
{
	return a->off_slots + (2 * (size_t)src + p) *
	       (sizeof(struct put_hdr) + a->slot);
}

static struct put_hdr *put_hdr(struct dfg_a2ap *a, unsigned int src,
			       unsigned int p)
{
	return (struct put_hdr *)((char *)a->area + put_slot_off(a, src, p));
}

static struct put_hdr *put_stage(struct dfg_a2ap *a, unsigned int peer)
{
	return (struct put_hdr *)(a->stage + (size_t)peer *
				  (sizeof(struct put_hdr) + a->slot));
}

/*
 * The hash of a header (its @hash as 0) and the @len bytes behind it:
 * a multiply-xor per 8 bytes, enough to tell a write still landing from
 * a whole one (nobody forges these).
 */
static __u64 put_hash(const struct put_hdr *h, size_t len)
{
	const volatile unsigned char *p = (const unsigned char *)h;
	__u64 x = 0x9e3779b97f4a7c15ULL ^ len, w;
	size_t n = sizeof(*h) + len, i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, (const void *)(p + i), 8);
		if (i == offsetof(struct put_hdr, hash))
			w = 0;
		x = (x ^ w) * 0x100000001b3ULL;
		x ^= x >> 29;
	}
	for (; i < n; i++)
		x = (x ^ p[i]) * 0x100000001b3ULL;
	return x ^ x >> 32;
}

void dfg_put_free(struct dfg_team *t)
{
	struct dfg_a2ap *a = t->a2ap;

	if (!a)
		return;
	if (a->area) {
		a->x->ops->unexpose(a->x, &a->key);
		__dfg_sys_munmap(a->area, a->size);
	}
	free(a->keys);
	free(a->out);
	free(a->stage);
	free(a->rdv);
	free(a);
	t->a2ap = NULL;
}

/*
 * A call message of this algorithm to @peer (@send) or from it: no
 * arguments in its header (members whose blocks differ exchange them all
 * the same; the records tell).
 */
static int put_msg(struct dfg_call *c, unsigned int peer, bool send,
		   void *buf, size_t len)
{
	size_t count = c->count;
	int ret;

	c->count = 0;
	ret = send ? dfg_call_send(c, peer, buf, len) :
		     dfg_call_recv(c, peer, buf, len);
	c->count = count;
	return ret;
}

/* The team's state, made at its first call of this algorithm. */
static int put_state(struct dfg_call *c, struct dfg_a2ap **out)
{
	struct dfg_team *t = c->t;
	unsigned int n = t->size;
	struct dfg_a2ap *a = t->a2ap;
	size_t slot;
	int ret;

	if (a) {
		*out = a;
		return a->broken ? -EPROTO : 0;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	t->a2ap = a;
	a->x = t->x;
	a->keys = calloc(n, sizeof(*a->keys));
	a->out = calloc(n, sizeof(*a->out));
	a->rdv = calloc(n, sizeof(*a->rdv));
	if (!a->keys || !a->out || !a->rdv)
		return -ENOMEM;
	slot = PUT_SLOTS_BUDGET / n;
	slot = slot < PUT_SLOT_MIN ? PUT_SLOT_MIN :
	       slot > PUT_SLOT_MAX ? PUT_SLOT_MAX : slot & ~(size_t)63;
	a->slot = slot;
	a->stage = malloc((size_t)n * (sizeof(struct put_hdr) + slot));
	if (!a->stage)
		return -ENOMEM;
	a->off_slots = 2 * (size_t)n * sizeof(struct put_rec);
	ret = dfg_area_share(c, a->off_slots + 2 * (size_t)n *
			     (sizeof(struct put_hdr) + slot),
			     &a->area, &a->size, a->keys);
	if (a->area)
		a->key = a->keys[t->rank];
	if (ret)
		return ret;
	*out = a;
	return 0;
}

/* Bytes we send @peer / expect from @peer; where in the buffers. */
static size_t put_scount(const struct dfg_call *c, unsigned int peer)
{
	return c->scounts ? c->scounts[peer] : c->count;
}

static size_t put_rcount(const struct dfg_call *c, unsigned int peer)
{
	return c->rcounts ? c->rcounts[peer] : c->count;
}

static size_t put_sdispl(const struct dfg_call *c, unsigned int peer)
{
	return c->sdispls ? c->sdispls[peer] : peer * c->count;
}

static size_t put_rdispl(const struct dfg_call *c, unsigned int peer)
{
	return c->rdispls ? c->rdispls[peer] : peer * c->count;
}

/* [*@lo, *@hi): the bytes the counts and displacements cover. */
static void put_span(const struct dfg_call *c, bool recv, size_t *lo,
		     size_t *hi)
{
	*lo = SIZE_MAX;
	*hi = 0;
	for (unsigned int r = 0; r < c->t->size; r++) {
		size_t n = recv ? put_rcount(c, r) : put_scount(c, r);
		size_t d = recv ? put_rdispl(c, r) : put_sdispl(c, r);

		if (!n)
			continue;
		*lo = d < *lo ? d : *lo;
		*hi = d + n > *hi ? d + n : *hi;
	}
	if (*lo > *hi)
		*lo = *hi = 0;
}

/*
 * Our block for @peer: at its displacement in @sbuf, less @shift (a copy
 * of the send buffer from its byte @shift on).
 */
static const char *put_block(const struct dfg_call *c, const char *sbuf,
			     size_t shift, unsigned int peer)
{
	return sbuf + (put_sdispl(c, peer) - shift);
}

/*
 * Phase 1's value to every peer's record, after a fence: a peer that
 * sees it sees the blocks we put straight into its receive buffer.
 */
static int put_post1(struct dfg_call *c, struct dfg_a2ap *a, unsigned int p)
{
	struct dfg_xport *x = a->x;
	unsigned int n = c->t->size, me = c->t->rank;
	int ret;

	ret = x->ops->fence(x);
	a->val[1] = c->seq << 1 | 1;
	for (unsigned int i = 1; i < n && ret >= 0; i++) {
		unsigned int j = (me + i) % n;

		ret = x->ops->put(x, j, &a->keys[j], put_rec_off(me, p) +
				  offsetof(struct put_rec, seq),
				  &a->val[1], NULL, sizeof(a->val[1]));
	}
	return ret < 0 ? ret : 0;
}

/*
 * Phase 0: to every peer, one put of its header and (unless @big) our
 * block for it, staged together.
 */
static int put_post0(struct dfg_call *c, struct dfg_a2ap *a, unsigned int p,
		     const char *sbuf, size_t shift, bool big)
{
	struct dfg_xport *x = a->x;
	unsigned int n = c->t->size, me = c->t->rank;
	int ret = 0;

	a->val[0] = c->seq << 1;
	for (unsigned int i = 1; i < n && ret >= 0; i++) {
		unsigned int j = (me + i) % n;
		struct put_hdr *h = put_stage(a, j);
		size_t len = big ? 0 : a->out[j].len;

		*h = (struct put_hdr){ .seq = a->val[0], .b = a->out[j] };
		if (big)
			h->b.flags |= PUT_F_NODATA;
		if (len)
			memcpy(h + 1, put_block(c, sbuf, shift, j), len);
		h->hash = put_hash(h, len);
		ret = x->ops->put(x, j, &a->keys[j], put_slot_off(a, me, p), h,
				  NULL, sizeof(*h) + len);
	}
	return ret < 0 ? ret : 0;
}

/*
 * Until every source's phase-0 header is here, whole: its value, then a
 * hash that matches what landed (else it is still landing: look again,
 * with the transport's checks for a death between looks).
 */
static int put_wait0(struct dfg_call *c, struct dfg_a2ap *a, unsigned int p)
{
	struct dfg_xport *x = a->x;
	unsigned int n = c->t->size, me = c->t->rank;
	int ret = 0;

	for (unsigned int i = 1; i < n && !ret; i++) {
		unsigned int src = (me + n - i) % n;
		struct put_hdr *h = put_hdr(a, src, p);

		for (;;) {
			size_t len;

			ret = x->ops->wait_eq(x, &h->seq, c->seq << 1, src);
			if (ret)
				break;
			len = h->b.flags & (PUT_F_NODATA | PUT_F_BAD) ?
			      0 : h->b.len;
			if (len <= a->slot && put_hash(h, len) == h->hash)
				break;
			ret = x->ops->broken(x);
			if (ret)
				break;
		}
	}
	return ret;
}

/* Until every source's record of this phase is here. */
static int put_wait(struct dfg_call *c, struct dfg_a2ap *a, unsigned int p,
		    unsigned int phase)
{
	struct dfg_xport *x = a->x;
	unsigned int n = c->t->size, me = c->t->rank;
	int ret = 0;

	for (unsigned int i = 1; i < n && !ret; i++) {
		unsigned int src = (me + n - i) % n;

		ret = x->ops->wait_eq(x, &put_rec(a, src, p)->seq,
				      c->seq << 1 | phase, src);
	}
	return ret;
}

/* Does @src's body disagree with what we expect (@err: ours unusable)? */
static bool put_mismatch(const struct dfg_call *c, const struct put_body *b,
			 unsigned int src, int err)
{
	if (err || (b->flags & PUT_F_BAD))
		return true;
	return b->len != put_rcount(c, src) || b->want != put_scount(c, src);
}

/*
 * Phase 1: our receive buffer exposed for the call, its key to every
 * peer and theirs from every peer; our blocks (if @big: they did not fit
 * a slot) into the destinations' receive buffers; the phase-1 value.
 */
static int put_rendezvous(struct dfg_call *c, struct dfg_a2ap *a,
			  unsigned int p, const char *sbuf, size_t shift,
			  bool big)
{
	struct dfg_xport *x = a->x;
	unsigned int n = c->t->size, me = c->t->rank;
	struct put_rdv mine = { 0 };
	size_t lo, hi;
	int ret = 0;

	put_span(c, true, &lo, &hi);
	if (c->nr_unexpose == DFG_CALL_EXPOSE_MAX)
		return -ENOSPC;
	mine.key = (struct dfg_xkey){ .kind = DFG_XKEY_NONE };
	if (hi > lo)
		ret = x->ops->expose(x, (char *)c->rbuf + lo, hi - lo,
				     DFG_XPORT_WRITE, &mine.key);
	if (ret)
		return ret;
	/* Revoked at the call's end; kept as a zombie if it fails. */
	c->unexpose[c->nr_unexpose++] = mine.key;
	for (unsigned int i = 1; i < n && !ret; i++) {
		unsigned int j = (me + i) % n;

		mine.off = put_rdispl(c, j) - lo;
		ret = put_msg(c, j, true, &mine, sizeof(mine));
	}
	for (unsigned int i = 1; i < n && !ret; i++) {
		unsigned int src = (me + n - i) % n;

		ret = put_msg(c, src, false, &a->rdv[src],
			      sizeof(a->rdv[src]));
	}
	for (unsigned int i = 1; big && i < n && ret >= 0; i++) {
		unsigned int j = (me + i) % n;
		size_t len = a->out[j].len;

		/* Only the count it expects: never past its block. */
		if (len && len == put_hdr(a, j, p)->b.want)
			ret = x->ops->put(x, j, &a->rdv[j].key, a->rdv[j].off,
					  put_block(c, sbuf, shift, j), NULL,
					  len);
	}
	if (ret < 0)
		return ret;
	ret = put_post1(c, a, p);
	if (!ret)
		ret = put_wait(c, a, p, 1);
	if (!ret)
		ret = x->ops->complete_local(x);
	return ret;
}

int dfg_put_alltoall(struct dfg_call *c, int err)
{
	struct dfg_team *t = c->t;
	unsigned int n = t->size, me = t->rank, p;
	const char *sbuf = c->sbuf;
	char *rbuf = c->rbuf, *copy = NULL;
	struct dfg_xport *x = c->x;
	size_t mymax = 0, gmax, slo, shi, rlo, rhi, shift = 0, own;
	bool bad = err, mism = false, big;
	struct dfg_a2ap *a;
	int ret;

	ret = put_state(c, &a);
	if (ret) {
		if (t->a2ap && ret != -EPROTO)
			t->a2ap->broken = true;
		return ret;
	}
	p = a->ncalls++ & 1;
	for (unsigned int r = 0; !err && r < n; r++) {
		size_t s = put_scount(c, r), v = put_rcount(c, r);

		mymax = s > mymax ? s : mymax;
		mymax = v > mymax ? v : mymax;
	}
	big = mymax > a->slot;
	for (unsigned int r = 0; r < n; r++)
		a->out[r] = err ? (struct put_body){ .flags = PUT_F_BAD } :
			(struct put_body){ .len = put_scount(c, r),
					   .want = put_rcount(c, r),
					   .max = mymax };
	/*
	 * Our blocks go in phase 1, when peers may already write our
	 * receive buffer: from a copy where the two overlap.
	 */
	put_span(c, false, &slo, &shi);
	put_span(c, true, &rlo, &rhi);
	if (big && slo < shi && rlo < rhi && sbuf + slo < rbuf + rhi &&
	    rbuf + rlo < sbuf + shi) {
		copy = malloc(shi - slo);
		if (!copy) {
			ret = -ENOMEM;
			goto fail;
		}
		dfg_copy(copy, sbuf + slo, shi - slo);
		sbuf = copy;
		shift = slo;
	}
	ret = put_post0(c, a, p, sbuf, shift, big);
	if (!ret)
		ret = put_wait0(c, a, p);
	if (!ret)
		ret = x->ops->complete_local(x);
	if (ret)
		goto fail;
	/* The same verdict and phase count on every member (see above). */
	gmax = mymax;
	for (unsigned int src = 0; src < n; src++) {
		const struct put_body *b = &put_hdr(a, src, p)->b;

		if (src == me)
			continue;
		bad |= b->flags & PUT_F_BAD;
		gmax = b->max > gmax ? b->max : gmax;
		mism |= put_mismatch(c, b, src, err);
	}
	/* Our own block: our puts are done with the send buffer. */
	own = put_scount(c, me);
	if (!bad && own == put_rcount(c, me)) {
		if (own)
			memmove(rbuf + put_rdispl(c, me),
				put_block(c, sbuf, shift, me), own);
	} else {
		mism = true;
	}
	if (!bad && gmax > a->slot) {
		ret = put_rendezvous(c, a, p, sbuf, shift, big);
		if (ret)
			goto fail;
	}
	/* Blocks of sources that fitted a slot, where both sides agree. */
	for (unsigned int src = 0; !bad && src < n; src++) {
		const struct put_hdr *h = put_hdr(a, src, p);
		const struct put_body *b = &h->b;

		if (src == me || put_mismatch(c, b, src, 0) ||
		    (b->flags & PUT_F_NODATA) || !b->len)
			continue;
		dfg_copy(rbuf + put_rdispl(c, src), h + 1, b->len);
	}
	free(copy);
	/* The protocol ran to its end: nobody waits for us, no abort. */
	c->started = false;
	return bad || mism ? -EINVAL : 0;
fail:
	/* Our puts end here: the user gets the send buffer back. */
	x->ops->complete_local(x);
	free(copy);
	a->broken = true;
	return ret;
}
