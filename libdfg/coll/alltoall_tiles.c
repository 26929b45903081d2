// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: the all-to-all engine (patent 003): tile geometry, the control
 * tree, repacking instances and the direct exchange, over struct a2a_port.
 *
 * Every rank exposes one area (struct a2a_layout):
 *
 *   words	DONE: completions owed to this rank in the current call
 *		(a tile it is a source of finished, or a peer read one of
 *		its directly exchanged blocks); REG: direct exchange
 *		registrations; WQ_TAIL: work entries pushed to this rank;
 *		LAND[s]: the message of source subgroup s has landed
 *   wq		repacking work queue: (seq << 32 | tile + 1) entries
 *   root	the control tree (used in rank 0's area only): CFG, the
 *		call's algorithm and tile size fixed by the first arrival;
 *		ARRIVAL, the arrival counter that hands out positions;
 *		SGS[g] / SGD[g], registrations of source / destination
 *		subgroup g; PAIR[t], readiness of tile t's two subgroups
 *   order	ranks in arrival order, per call parity
 *   stage	this rank's packed outgoing blocks: struct a2a_stage, a
 *		table of N struct a2a_entry, then the payload
 *   land	incoming repacked messages: one slot per source subgroup,
 *		struct a2a_msg, dh struct a2a_entry, then the payload
 *
 * Counters are tagged with the call's sequence number (seq << 32 | count)
 * and updated by compare-and-swap: a word with an older tag counts as
 * zero, so nothing is ever reset. That is safe because no rank can touch
 * a word for call k + 1 before every rank is done with it for call k: a
 * rank enters k + 1 only after completing k, and completing k needs a
 * tile from every source and destination subgroup, so every rank has
 * registered and every tile has been paired. The per-parity order[]
 * lasts one call longer, for the repackers still working on call k.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alltoall.h"

/* Word offsets in the area's first cache line. */
#define W_DONE		0
#define W_REG		8
#define W_WQ_TAIL	16

/* Root words: CFG, ARRIVAL, then SGS[N], SGD[N], PAIR[N * N]. */
#define R_CFG		0
#define R_ARRIVAL	1
#define R_SGS		2

/* Entry flag: the block is read from the source's exposed memory. */
#define A2A_E_DIRECT	1u

/*
 * struct a2a_entry - one block's place
 * @len:	bytes
 * @off:	in the stage payload, or in exposed memory (A2A_E_DIRECT)
 * @handle:	the exposed memory (A2A_E_DIRECT)
 * @src:	source rank (landed messages)
 * @flags:	A2A_E_*
 */
struct a2a_entry {
	uint64_t	len;
	uint64_t	off;
	uint64_t	handle;
	uint32_t	src;
	uint32_t	flags;
};

/* Head of the stage: table of N entries follows, indexed by destination. */
struct a2a_stage {
	uint32_t	seq;
	uint32_t	pad;
};

/* Head of a landed message: nblk entries in source order follow. */
struct a2a_msg {
	uint32_t	seq;
	uint32_t	nblk;
};

#define A2A_HDR		16u	/* struct a2a_stage / a2a_msg, rounded */

/* The arrival order at the head of the scratch buffer, 8-byte aligned. */
#define ORDER_SIZE(n)	(((size_t)(n) * 4 + 7) & ~(size_t)7)

enum a2a_state {
	S_IDLE,
	S_TILES,	/* registered; repacking, landing, completing */
	S_DIRECT_REG,	/* direct: waiting for every peer's registration */
	S_DIRECT_DONE,	/* direct: waiting for every peer to read ours */
	S_OVER,
};

static inline uint64_t tag(uint32_t seq, uint32_t v)
{
	return (uint64_t)seq << 32 | v;
}

static size_t root_off(const struct a2a_layout *l, unsigned int i)
{
	return l->off_root + (size_t)i * 8;
}

static size_t sgs_off(const struct a2a_layout *l, unsigned int g)
{
	return root_off(l, R_SGS + g);
}

static size_t sgd_off(const struct a2a_layout *l, unsigned int g)
{
	return root_off(l, R_SGS + l->n + g);
}

static size_t pair_off(const struct a2a_layout *l, unsigned int t)
{
	return root_off(l, R_SGS + 2 * l->n + t);
}

static size_t landf_off(const struct a2a_layout *l, unsigned int s)
{
	return l->off_landf + (size_t)s * 8;
}

static size_t land_slot_off(const struct a2a_layout *l, unsigned int dh,
			    unsigned int s)
{
	return l->off_land + (size_t)s * (A2A_HDR + dh *
		(sizeof(struct a2a_entry) + l->threshold));
}

void a2a_layout_init(struct a2a_layout *l, unsigned int n, size_t threshold)
{
	size_t nroot = R_SGS + 2 * (size_t)n + (size_t)n * n;

	l->n = n;
	/* Slots and entries stay 8-byte aligned. */
	l->threshold = (threshold + 7) & ~(size_t)7;
	l->wq_cap = 2 * n;
	l->off_landf = 64;
	l->off_wq = l->off_landf + (size_t)n * 8;
	l->off_root = l->off_wq + (size_t)l->wq_cap * 8;
	l->off_order = l->off_root + nroot * 8;
	l->off_stage = (l->off_order + 2 * (size_t)n * 4 + 63) & ~(size_t)63;
	l->off_land = l->off_stage + A2A_HDR +
		      n * (sizeof(struct a2a_entry) + l->threshold);
	l->off_land = (l->off_land + 63) & ~(size_t)63;
	/* dh = 1 needs the most headers; larger tiles fit in the same. */
	l->land_size = n * (A2A_HDR + sizeof(struct a2a_entry) + l->threshold);
	l->size = l->off_land + l->land_size;
}

void a2a_pick_tile(unsigned int n, size_t block, unsigned int *dh,
		   unsigned int *dv)
{
	size_t b = block ? block : 1;
	unsigned int d = 1;

	/* Largest square tile whose d * d blocks fit in the budget. */
	while (d < n && (size_t)(d + 1) * (d + 1) * b <= A2A_TILE_BUDGET)
		d++;
	*dh = d;
	*dv = d;
}

void a2a_repack(const uint8_t *const in[], uint8_t *const out[],
		const size_t *len, unsigned int dh, unsigned int dv)
{
	unsigned int p, q;

	for (q = 0; q < dv; q++) {
		size_t o = 0;

		for (p = 0; p < dh; p++) {
			size_t i = 0, k;

			for (k = 0; k < q; k++)
				i += len[p * dv + k];
			memcpy(out[q] + o, in[p] + i, len[p * dv + q]);
			o += len[p * dv + q];
		}
	}
}

/*
 * Add @add to the tagged counter at @off of @peer for call @seq; the new
 * count goes to *@count. A newer tag means the ranks disagree on the
 * order of their collectives.
 */
static int tagged_add(const struct a2a_port *pt, unsigned int peer,
		      size_t off, uint32_t seq, uint32_t add, uint32_t *count)
{
	uint64_t cur = 0, old;
	int ret;

	ret = pt->get(pt->ctx, peer, off, &cur, sizeof(cur));
	for (;;) {
		uint32_t c = 0;

		if (ret)
			return ret;
		if ((uint32_t)(cur >> 32) == seq)
			c = (uint32_t)cur;
		else if ((int32_t)((uint32_t)(cur >> 32) - seq) > 0)
			return -EPROTO;
		ret = pt->cas(pt->ctx, peer, off, cur, tag(seq, c + add), &old);
		if (!ret && old == cur) {
			if (count)
				*count = c + add;
			return 0;
		}
		cur = old;
	}
}

/* Count of a tagged word in this rank's own area for call @seq. */
static uint32_t own_count(const struct a2a_team *t, size_t off, uint32_t seq)
{
	uint64_t v = __atomic_load_n((uint64_t *)(t->area + off),
				     __ATOMIC_ACQUIRE);

	return (uint32_t)(v >> 32) == seq ? (uint32_t)v : 0;
}

static size_t expected_len(const struct a2a_call *c, unsigned int src)
{
	return c->kind == A2A_FIXED ? c->block : c->rcounts[src];
}

static size_t send_len(const struct a2a_call *c, unsigned int dst)
{
	return c->kind == A2A_FIXED ? c->block : c->scounts[dst];
}

static const uint8_t *send_ptr(const struct a2a_call *c, unsigned int dst)
{
	return c->sbuf + (c->kind == A2A_FIXED ? dst * c->block :
			  c->sdispls[dst]);
}

static uint8_t *recv_ptr(const struct a2a_call *c, unsigned int src)
{
	return c->rbuf + (c->kind == A2A_FIXED ? src * c->block :
			  c->rdispls[src]);
}

/* Lowest address and extent of the blocks this rank sends directly. */
static void direct_extent(const struct a2a_call *c, size_t min,
			  const uint8_t **lo, size_t *len)
{
	const uint8_t *a = NULL, *b = NULL;
	unsigned int j;

	for (j = 0; j < c->t->lay.n; j++) {
		size_t n = send_len(c, j);
		const uint8_t *p = send_ptr(c, j);

		if (!n || n < min)
			continue;
		if (!a || p < a)
			a = p;
		if (!b || p + n > b)
			b = p + n;
	}
	*lo = a;
	*len = a ? (size_t)(b - a) : 0;
}

/*
 * Pack the outgoing blocks into the stage (the edge packing of the
 * patent): blocks up to the threshold are copied into the payload in
 * destination order; larger ones stay in the user buffer, which is
 * exposed, and the table says where. Returns the number of directly
 * exchanged blocks (each will be confirmed by its reader) or -errno.
 */
static int stage_pack(struct a2a_call *c, size_t threshold)
{
	struct a2a_team *t = c->t;
	const struct a2a_port *pt = t->port;
	struct a2a_stage *st = (void *)(t->area + t->lay.off_stage);
	struct a2a_entry *tab = (void *)(t->area + t->lay.off_stage + A2A_HDR);
	uint8_t *pay = (uint8_t *)(tab + t->lay.n);
	const uint8_t *lo;
	size_t off = 0, span;
	unsigned int j;
	int ndirect = 0, ret;

	direct_extent(c, c->err ? SIZE_MAX : threshold + 1, &lo, &span);
	if (span) {
		ret = pt->expose(pt->ctx, lo, span, &c->exposed);
		if (ret)
			return ret;
		c->is_exposed = true;
	}
	for (j = 0; j < t->lay.n; j++) {
		size_t n = c->err ? 0 : send_len(c, j);

		tab[j] = (struct a2a_entry){ .len = n, .src = t->rank };
		if (n > threshold) {
			tab[j].off = send_ptr(c, j) - lo;
			tab[j].handle = c->exposed;
			tab[j].flags = A2A_E_DIRECT;
			ndirect++;
		} else if (n) {
			memcpy(pay + off, send_ptr(c, j), n);
			tab[j].off = off;
			off += n;
		}
	}
	st->seq = c->seq;
	return ndirect;
}

static void call_cfg(const struct a2a_call *c, unsigned int *dh,
		     unsigned int *dv)
{
	const struct a2a_team *t = c->t;
	size_t b = 0;
	unsigned int j;

	if (t->force_dh && t->force_dv) {
		*dh = t->force_dh < t->lay.n ? t->force_dh : t->lay.n;
		*dv = t->force_dv < t->lay.n ? t->force_dv : t->lay.n;
		return;
	}
	for (j = 0; j < t->lay.n; j++) {
		size_t n = send_len(c, j);

		if (n <= t->lay.threshold && n > b)
			b = n;
	}
	a2a_pick_tile(t->lay.n, b, dh, dv);
}

/*
 * The first rank to arrive fixes the call's algorithm and tile size in
 * the root's CFG word; the others adopt it. A rank that chose another
 * algorithm has arguments that disagree with the first one's: it goes on
 * with nothing to send, so that nobody hangs, and fails with -EINVAL.
 */
static int agree_cfg(struct a2a_call *c)
{
	const struct a2a_port *pt = c->t->port;
	size_t off = root_off(&c->t->lay, R_CFG);
	unsigned int dh, dv;
	uint64_t cur, old, mine;
	int ret;

	call_cfg(c, &dh, &dv);
	mine = tag(c->seq, (uint32_t)c->algo << 28 | dh << 14 | dv);
	ret = pt->get(pt->ctx, 0, off, &cur, sizeof(cur));
	while (!ret && (uint32_t)(cur >> 32) != c->seq) {
		if ((int32_t)((uint32_t)(cur >> 32) - c->seq) > 0)
			return -EPROTO;
		ret = pt->cas(pt->ctx, 0, off, cur, mine, &old);
		if (!ret && old == cur)
			cur = mine;
		else
			cur = old;
	}
	if (ret)
		return ret;
	if ((int)((uint32_t)cur >> 28) != c->algo) {
		c->algo = (uint32_t)cur >> 28;
		c->err = -EINVAL;
	}
	c->dh = (uint32_t)cur >> 14 & 0x3fff;
	c->dv = (uint32_t)cur & 0x3fff;
	if (!c->dh || !c->dv || c->dh > c->t->lay.n || c->dv > c->t->lay.n)
		return -EPROTO;
	return 0;
}

/*
 * Assignment policy (the patent leaves it open): the rank that paired the
 * tile is a member of it and is running right now, so by default it
 * repacks the tile itself (the locality option: no hop, no wakeup). With
 * assign_spread the tile goes round-robin to a member of S u D instead,
 * through that rank's work queue, so that tiles run on several instances
 * in parallel. Either way the instance has registered for this call and
 * cannot complete it before its queue is empty.
 */
static int run_tile(struct a2a_call *c, unsigned int tile);

static int assign(struct a2a_call *c, unsigned int s, unsigned int d,
		  const uint32_t *order)
{
	struct a2a_team *t = c->t;
	const struct a2a_port *pt = t->port;
	unsigned int n = t->lay.n, nd = a2a_nsg(n, c->dv);
	unsigned int tile = s * nd + d;
	unsigned int hs = a2a_sg_size(n, c->dh, s);
	unsigned int vs = a2a_sg_size(n, c->dv, d);
	unsigned int inst, k;
	uint64_t idx, old, ent;
	int ret;

	if (!t->assign_spread)
		return run_tile(c, tile);
	k = tile % (hs + vs);
	inst = k < hs ? order[s * c->dh + k] : order[d * c->dv + k - hs];
	if (inst == t->rank)
		return run_tile(c, tile);
	ret = pt->get(pt->ctx, inst, W_WQ_TAIL, &idx, sizeof(idx));
	for (;;) {
		if (ret)
			return ret;
		ret = pt->cas(pt->ctx, inst, W_WQ_TAIL, idx, idx + 1, &old);
		if (!ret && old == idx)
			break;
		idx = old;
	}
	ent = tag(c->seq, tile + 1);
	ret = pt->put(pt->ctx, inst, t->lay.off_wq + idx % t->lay.wq_cap * 8,
		      &ent, sizeof(ent));
	return ret ? ret : pt->notify(pt->ctx, inst);
}

static int read_order(struct a2a_call *c, uint32_t *order)
{
	const struct a2a_port *pt = c->t->port;
	const struct a2a_layout *l = &c->t->lay;

	return pt->get(pt->ctx, 0, l->off_order + (c->seq & 1) * l->n * 4,
		       order, l->n * 4);
}

/*
 * The subgroup of this rank (as a source if @as_src, else as a
 * destination) just became ready: pair it with every ready subgroup of
 * the other role. A tile is paired by whoever makes its PAIR count 2.
 */
static int pair_ready(struct a2a_call *c, unsigned int g, bool as_src,
		      uint32_t *order)
{
	const struct a2a_port *pt = c->t->port;
	const struct a2a_layout *l = &c->t->lay;
	unsigned int ns = a2a_nsg(l->n, c->dh), nd = a2a_nsg(l->n, c->dv);
	unsigned int other = as_src ? nd : ns, o;
	bool have_order = false;
	int ret;

	for (o = 0; o < other; o++) {
		unsigned int s = as_src ? g : o, d = as_src ? o : g;
		uint32_t cnt;

		ret = tagged_add(pt, 0, pair_off(l, s * nd + d), c->seq, 1,
				 &cnt);
		if (ret)
			return ret;
		if (cnt != 2)
			continue;
		if (!have_order) {
			ret = read_order(c, order);
			if (ret)
				return ret;
			have_order = true;
		}
		ret = assign(c, s, d, order);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Register with the control tree: take an arrival position, which puts
 * this rank into source subgroup pos / dh and destination subgroup
 * pos / dv, and count it in both; the registration that completes a
 * subgroup makes it ready and pairs its tiles.
 */
static int register_tiles(struct a2a_call *c)
{
	const struct a2a_port *pt = c->t->port;
	const struct a2a_layout *l = &c->t->lay;
	unsigned int s, d;
	uint32_t pos, cnt, me = c->t->rank;
	uint32_t *order;
	int ret;

	ret = tagged_add(pt, 0, root_off(l, R_ARRIVAL), c->seq, 1, &pos);
	if (ret)
		return ret;
	if (--pos >= l->n)
		return -EPROTO;
	c->pos = pos;
	ret = pt->put(pt->ctx, 0, l->off_order + (c->seq & 1) * l->n * 4 +
		      pos * 4, &me, sizeof(me));
	if (ret)
		return ret;
	order = (uint32_t *)c->t->scratch;
	s = pos / c->dh;
	ret = tagged_add(pt, 0, sgs_off(l, s), c->seq, 1, &cnt);
	if (!ret && cnt == a2a_sg_size(l->n, c->dh, s))
		ret = pair_ready(c, s, true, order);
	if (ret)
		return ret;
	d = pos / c->dv;
	ret = tagged_add(pt, 0, sgd_off(l, d), c->seq, 1, &cnt);
	if (!ret && cnt == a2a_sg_size(l->n, c->dv, d))
		ret = pair_ready(c, d, false, order);
	return ret;
}

/* Count @add completions on @peer and wake it. */
static int complete(struct a2a_call *c, unsigned int peer, uint32_t add)
{
	const struct a2a_port *pt = c->t->port;
	int ret;

	ret = tagged_add(pt, peer, W_DONE, c->seq, add, NULL);
	return ret ? ret : pt->notify(pt->ctx, peer);
}

/*
 * A repacking instance runs tile @tile: receive one packed message from
 * each source (its table entries and blocks for the tile's destinations,
 * fetched straight into their place in the outgoing messages: the
 * receive side does the shuffle, as a scatter), send one contiguous
 * message to each destination, then notify every source (its part is
 * done) and every destination (its slot has landed).
 */
static int run_tile(struct a2a_call *c, unsigned int tile)
{
	struct a2a_team *t = c->t;
	const struct a2a_port *pt = t->port;
	const struct a2a_layout *l = &t->lay;
	unsigned int nd = a2a_nsg(l->n, c->dv);
	unsigned int s = tile / nd, d = tile % nd;
	unsigned int hs = a2a_sg_size(l->n, c->dh, s);
	unsigned int vs = a2a_sg_size(l->n, c->dv, d);
	uint32_t *order = (uint32_t *)t->scratch;
	struct a2a_msg *m = (void *)(t->scratch + ORDER_SIZE(l->n));
	struct a2a_entry *e = (void *)((uint8_t *)m + A2A_HDR);
	uint8_t *pay = (uint8_t *)(e + hs);
	size_t stab = l->off_stage + A2A_HDR;
	size_t spay = stab + l->n * sizeof(struct a2a_entry);
	unsigned int p, q;
	int ret;

	ret = read_order(c, order);
	if (ret)
		return ret;
	for (q = 0; q < vs; q++) {
		unsigned int dst = order[d * c->dv + q];
		size_t o = 0;

		m->seq = c->seq;
		m->nblk = hs;
		for (p = 0; p < hs; p++) {
			unsigned int src = order[s * c->dh + p];

			ret = pt->get(pt->ctx, src, stab + dst * sizeof(*e),
				      &e[p], sizeof(*e));
			if (ret)
				return ret;
			if (e[p].src != src || (e[p].len > l->threshold &&
			    !(e[p].flags & A2A_E_DIRECT)))
				return -EPROTO;
			if (e[p].flags & A2A_E_DIRECT)
				continue;
			if (o + e[p].len > l->threshold * hs)
				return -EPROTO;
			ret = pt->get(pt->ctx, src, spay + e[p].off, pay + o,
				      e[p].len);
			if (ret)
				return ret;
			e[p].off = o;
			o += e[p].len;
		}
		ret = pt->put(pt->ctx, dst, land_slot_off(l, c->dh, s), m,
			      (size_t)(pay - (uint8_t *)m) + o);
		/* The flag is the ordering point: the message is whole. */
		if (!ret)
			ret = tagged_add(pt, dst, landf_off(l, s), c->seq, 1,
					 NULL);
		if (!ret)
			ret = pt->notify(pt->ctx, dst);
		if (ret)
			return ret;
	}
	for (p = 0; p < hs; p++) {
		ret = complete(c, order[s * c->dh + p], 1);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Unpack the message of source subgroup @s (the endpoint placement of the
 * patent: block from source i goes to its place in the result buffer),
 * fetching directly exchanged blocks from their sources' exposed memory
 * and confirming each read to its source. Lengths that disagree with
 * this rank's arguments fail the call with -EINVAL, after the protocol.
 */
static int unpack_slot(struct a2a_call *c, unsigned int s)
{
	struct a2a_team *t = c->t;
	const struct a2a_port *pt = t->port;
	const struct a2a_layout *l = &t->lay;
	unsigned int hs = a2a_sg_size(l->n, c->dh, s), p;
	const struct a2a_msg *m = (void *)(t->area +
					   land_slot_off(l, c->dh, s));
	const struct a2a_entry *e = (void *)((uint8_t *)m + A2A_HDR);
	const uint8_t *pay = (uint8_t *)(e + hs);
	int ret;

	if (m->seq != c->seq || m->nblk != hs)
		return -EPROTO;
	for (p = 0; p < hs; p++) {
		unsigned int src = e[p].src;
		bool direct = e[p].flags & A2A_E_DIRECT;

		if (src >= l->n)
			return -EPROTO;
		if (!direct && (e[p].len > l->threshold ||
				e[p].off > l->threshold * hs - e[p].len))
			return -EPROTO;
		if (e[p].len != expected_len(c, src) && !c->err)
			c->err = -EINVAL;
		if (c->err || !e[p].len) {
			/* nothing to place */
		} else if (!direct) {
			memcpy(recv_ptr(c, src), pay + e[p].off, e[p].len);
		} else {
			ret = pt->get_mem(pt->ctx, src, e[p].handle, e[p].off,
					  recv_ptr(c, src), e[p].len);
			if (ret)
				return ret;
		}
		if (direct) {
			ret = complete(c, src, 1);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int progress_tiles(struct a2a_call *c)
{
	struct a2a_team *t = c->t;
	const struct a2a_layout *l = &t->lay;
	unsigned int ns = a2a_nsg(l->n, c->dh), nd = a2a_nsg(l->n, c->dv);
	unsigned int s;
	int ret;

	for (;;) {
		uint64_t *slot = (uint64_t *)(t->area + l->off_wq +
					      t->wq_head % l->wq_cap * 8);
		uint64_t ent = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

		if ((uint32_t)(ent >> 32) != c->seq)
			break;
		if ((uint32_t)ent == 0 || (uint32_t)ent > ns * nd)
			return -EPROTO;
		t->wq_head++;
		ret = run_tile(c, (uint32_t)ent - 1);
		if (ret)
			return ret;
	}
	for (s = 0; s < ns && c->nlanded < ns; s++) {
		if (t->landed[s] || !own_count(t, landf_off(l, s), c->seq))
			continue;
		ret = unpack_slot(c, s);
		if (ret)
			return ret;
		t->landed[s] = 1;
		c->nlanded++;
	}
	if (c->nlanded < ns || own_count(t, W_DONE, c->seq) < c->expect)
		return 0;
	return 1;
}

/*
 * Direct exchange: every rank exposes its send buffer and registers with
 * every peer; each then reads its blocks straight from the peers'
 * exposed buffers and confirms every read, and is done once all peers
 * have confirmed reading its own.
 */
static int start_direct(struct a2a_call *c)
{
	struct a2a_team *t = c->t;
	const struct a2a_port *pt = t->port;
	unsigned int j;
	int ret;

	ret = stage_pack(c, 0);
	if (ret < 0)
		return ret;
	for (j = 0; j < t->lay.n; j++) {
		if (j == t->rank)
			continue;
		ret = tagged_add(pt, j, W_REG, c->seq, 1, NULL);
		if (!ret)
			ret = pt->notify(pt->ctx, j);
		if (ret)
			return ret;
	}
	c->expect = t->lay.n - 1;
	c->state = S_DIRECT_REG;
	return 0;
}

static int read_direct(struct a2a_call *c)
{
	struct a2a_team *t = c->t;
	const struct a2a_port *pt = t->port;
	size_t stab = t->lay.off_stage + A2A_HDR;
	unsigned int i, j;
	int ret;

	for (i = 0; i < t->lay.n; i++) {
		struct a2a_entry e;

		/* Start past this rank: not all read rank 0 first. */
		j = (t->rank + i) % t->lay.n;
		ret = pt->get(pt->ctx, j, stab + t->rank * sizeof(e), &e,
			      sizeof(e));
		if (ret)
			return ret;
		if (e.src != j)
			return -EPROTO;
		if (e.len != expected_len(c, j) && !c->err)
			c->err = -EINVAL;
		if (!c->err && e.len) {
			ret = pt->get_mem(pt->ctx, j, e.handle, e.off,
					  recv_ptr(c, j), e.len);
			if (ret)
				return ret;
		}
		if (j != t->rank) {
			ret = complete(c, j, 1);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int a2a_progress(struct a2a_call *c)
{
	struct a2a_team *t = c->t;
	int ret;

	switch (c->state) {
	case S_TILES:
		ret = progress_tiles(c);
		break;
	case S_DIRECT_REG:
		if (own_count(t, W_REG, c->seq) < t->lay.n - 1)
			return 0;
		ret = read_direct(c);
		if (ret)
			break;
		c->state = S_DIRECT_DONE;
		/* fall through */
	case S_DIRECT_DONE:
		ret = own_count(t, W_DONE, c->seq) >= c->expect;
		break;
	case S_OVER:
		return 1;
	default:
		return -EINVAL;
	}
	if (ret)
		c->state = S_OVER;
	return ret;
}

int a2a_start(struct a2a_call *c)
{
	struct a2a_team *t = c->t;
	int ret;

	c->err = 0;
	c->nlanded = 0;
	c->is_exposed = false;
	c->state = S_IDLE;
	if (c->algo != A2A_ALGO_TILES && c->algo != A2A_ALGO_DIRECT)
		return -EINVAL;
	ret = agree_cfg(c);
	if (ret)
		return ret;
	if (c->algo == A2A_ALGO_DIRECT) {
		ret = start_direct(c);
		return ret ? ret : a2a_progress(c);
	}
	ret = stage_pack(c, t->lay.threshold);
	if (ret < 0)
		return ret;
	c->expect = a2a_nsg(t->lay.n, c->dv) + ret;
	memset(t->landed, 0, t->lay.n);
	c->state = S_TILES;
	ret = register_tiles(c);
	return ret ? ret : a2a_progress(c);
}

void a2a_call_fini(struct a2a_call *c)
{
	const struct a2a_port *pt = c->t->port;

	if (c->is_exposed)
		pt->unexpose(pt->ctx, c->exposed);
	c->is_exposed = false;
}

int a2a_team_init(struct a2a_team *t, const struct a2a_port *port,
		  unsigned int rank, unsigned int n, size_t threshold,
		  uint8_t *area)
{
	size_t scratch;

	if (!n || n > 0x3fff || rank >= n)
		return -EINVAL;
	*t = (struct a2a_team){ .port = port, .rank = rank, .area = area };
	a2a_layout_init(&t->lay, n, threshold);
	scratch = ORDER_SIZE(n) + A2A_HDR +
		  n * (sizeof(struct a2a_entry) + t->lay.threshold);
	t->scratch = malloc(scratch);
	t->landed = malloc(n);
	if (!t->scratch || !t->landed) {
		a2a_team_fini(t);
		return -ENOMEM;
	}
	return 0;
}

void a2a_team_fini(struct a2a_team *t)
{
	free(t->scratch);
	free(t->landed);
	t->scratch = NULL;
	t->landed = NULL;
}
