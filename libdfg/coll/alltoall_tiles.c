// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: the all-to-all engine (patent 003): tile geometry, the control
 * tree, repacking instances and the direct exchange, over struct a2a_port.
 *
 * Every rank exposes one area (struct a2a_layout):
 *
 *   wq		repacking work queue: (seq << 32 | tile + 1) entries
 *   order	ranks in arrival order, per call parity (rank 0's only)
 *   stage	this rank's packed outgoing blocks: struct a2a_stage, a
 *		table of N struct a2a_entry by destination, the payload
 *   land	incoming repacked messages: one slot per source subgroup,
 *		struct a2a_msg, one struct a2a_entry per source, payload
 *
 * and has the atomic words of alltoall.h (A2A_W_*).
 *
 * The control tree is a one-level reduction tree rooted at rank 0: a rank
 * registers by adding to the root's ARRIVAL word (which hands out arrival
 * positions: subgroups form in arrival order), writing its rank at its
 * position of order[] and adding its position's bit to REGBITS. REGBITS
 * is the reduction of all registrations: the registration that completes
 * the bits of a subgroup makes it ready, and pairs every tile whose other
 * subgroup was already ready in the value it read. The atomic adds are
 * totally ordered, so each tile is paired exactly once, by the later of
 * its two subgroups. Even calls set the bits, odd calls clear them, so the
 * word never needs a reset.
 *
 * Call k + 1 cannot disturb call k: a rank enters k + 1 only after
 * completing k, and completing k needs a tile of every source and
 * destination subgroup, so by then every rank has registered for k and
 * every tile of k is paired. order[] is kept per parity for the repackers
 * still running tiles of k; all later events of a rank count in its EV
 * word, from which it subtracts exactly what call k consumed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "copy.h"
#include "alltoall.h"

/* Entry flag: the block is read from the source's exposed memory. */
#define A2A_E_DIRECT	1u

/*
 * struct a2a_entry - one block's place
 * @len:	bytes
 * @off:	in the stage payload or the message, or in the source's
 *		exposed memory (A2A_E_DIRECT)
 * @src:	source rank
 * @flags:	A2A_E_*
 */
struct a2a_entry {
	uint64_t	len;
	uint64_t	off;
	uint32_t	src;
	uint32_t	flags;
};

/*
 * struct a2a_stage - head of a rank's stage
 * @seq:	the call it was packed for
 * @key:	the exposed send buffer of its direct blocks
 */
struct a2a_stage {
	uint32_t	seq;
	uint32_t	pad;
	uint8_t		key[A2A_KEY_SIZE];
};

/* Head of a landed message: nblk entries in source order follow. */
struct a2a_msg {
	uint32_t	seq;
	uint32_t	nblk;
};

#define A2A_STAGE_HDR	64u
#define A2A_MSG_HDR	8u

_Static_assert(sizeof(struct a2a_stage) <= A2A_STAGE_HDR, "stage head");
_Static_assert(sizeof(struct a2a_entry) % 8 == 0, "entry alignment");

/* The arrival order at the head of the scratch buffer, 8-byte aligned. */
#define ORDER_SIZE(n)	(((size_t)(n) * 4 + 7) & ~(size_t)7)

enum a2a_state {
	S_IDLE,
	S_TILES,	/* registered; repacking, landing, completing */
	S_DIRECT_REG,	/* direct: waiting for every peer's registration */
	S_COMPLETING,	/* waiting for the completions of our blocks */
	S_OVER,
};

static inline uint64_t tag(uint32_t seq, uint32_t v)
{
	return (uint64_t)seq << 32 | v;
}

static size_t slot_size(const struct a2a_layout *l, unsigned int dh)
{
	return A2A_MSG_HDR + dh * (sizeof(struct a2a_entry) + l->threshold);
}

void a2a_layout_init(struct a2a_layout *l, unsigned int n, size_t threshold)
{
	l->n = n;
	/* Slots and entries stay 8-byte aligned. */
	l->threshold = (threshold + 7) & ~(size_t)7;
	l->wq_cap = 2 * n;
	l->off_wq = 0;
	l->off_order = l->off_wq + (size_t)l->wq_cap * 8;
	l->off_stage = (l->off_order + 2 * (size_t)n * 4 + 63) & ~(size_t)63;
	l->off_land = l->off_stage + A2A_STAGE_HDR +
		      n * (sizeof(struct a2a_entry) + l->threshold);
	l->off_land = (l->off_land + 63) & ~(size_t)63;
	/* dh = 1 needs the most headers; larger tiles fit in the same. */
	l->land_size = n * slot_size(l, 1);
	l->size = l->off_land + l->land_size;
}

void a2a_pick_tile(unsigned int n, size_t block, unsigned int *dh,
		   unsigned int *dv)
{
	size_t b = block ? block : 1;
	unsigned int d = 1;

	while (d < n && (size_t)(d + 1) * (d + 1) * b <= A2A_TILE_BUDGET)
		d++;
	*dh = d;
	*dv = d;
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

/* Lowest address and extent of the blocks above @threshold. */
static void direct_extent(const struct a2a_call *c, size_t threshold,
			  const uint8_t **lo, size_t *len)
{
	const uint8_t *a = NULL, *b = NULL;
	unsigned int j;

	for (j = 0; j < c->t->lay.n && threshold != SIZE_MAX; j++) {
		size_t n = send_len(c, j);
		const uint8_t *p = send_ptr(c, j);

		if (n <= threshold)
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
 * patent): blocks up to @threshold are copied into the payload in
 * destination order; larger ones stay in the user buffer, which is
 * exposed, and the table says where. Returns the number of directly
 * exchanged blocks (each will be confirmed by its reader) or -errno.
 */
static int stage_pack(struct a2a_call *c, size_t threshold)
{
	struct a2a_team *t = c->t;
	const struct a2a_port *pt = t->port;
	struct a2a_stage *st = (void *)(t->area + t->lay.off_stage);
	struct a2a_entry *tab = (void *)(t->area + t->lay.off_stage +
					 A2A_STAGE_HDR);
	uint8_t *pay = (uint8_t *)(tab + t->lay.n);
	const uint8_t *lo;
	size_t off = 0, span;
	unsigned int j;
	int ndirect = 0, ret;

	direct_extent(c, c->err ? SIZE_MAX : threshold, &lo, &span);
	if (span) {
		ret = pt->expose(pt->ctx, lo, span, c->key);
		if (ret)
			return ret;
		c->is_exposed = true;
	}
	for (j = 0; j < t->lay.n; j++) {
		size_t n = c->err ? 0 : send_len(c, j);

		tab[j] = (struct a2a_entry){ .len = n, .src = t->rank };
		if (n > threshold) {
			tab[j].off = send_ptr(c, j) - lo;
			tab[j].flags = A2A_E_DIRECT;
			ndirect++;
		} else if (n) {
			dfg_copy(pay + off, send_ptr(c, j), n);
			tab[j].off = off;
			off += n;
		}
	}
	st->seq = c->seq;
	memcpy(st->key, c->key, sizeof(st->key));
	return ndirect;
}

/* Count @ev on @peer's EV word (which wakes it). */
static int signal(struct a2a_call *c, unsigned int peer, uint64_t ev)
{
	const struct a2a_port *pt = c->t->port;

	return pt->fadd(pt->ctx, peer, A2A_W_EV, ev, NULL);
}

static int read_order(struct a2a_call *c, uint32_t *order)
{
	const struct a2a_port *pt = c->t->port;
	const struct a2a_layout *l = &c->t->lay;

	return pt->get(pt->ctx, 0, l->off_order + (c->t->ncalls & 1) *
		       l->n * 4, order, l->n * 4);
}

/*
 * A repacking instance runs tile @tile: receive one packed message from
 * each source (its table entries and blocks for the tile's destinations,
 * fetched straight into their place in the outgoing messages: the
 * receive side does the shuffle, as a scatter), send one contiguous
 * message to each destination, then notify every destination (its slot
 * landed) and every source (its part is done).
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
	struct a2a_entry *e = (void *)((uint8_t *)m + A2A_MSG_HDR);
	uint8_t *pay = (uint8_t *)(e + hs);
	size_t stab = l->off_stage + A2A_STAGE_HDR;
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
			if (e[p].flags & A2A_E_DIRECT || !e[p].len)
				continue;
			ret = pt->get(pt->ctx, src, spay + e[p].off, pay + o,
				      e[p].len);
			if (ret)
				return ret;
			e[p].off = o;
			o += e[p].len;
		}
		ret = pt->put(pt->ctx, dst, l->off_land + s * slot_size(l, c->dh),
			      m, (size_t)(pay - (uint8_t *)m) + o);
		if (ret)
			return ret;
	}
	/*
	 * One event word update per rank of S u D, LAND and DONE together
	 * where it is both: each is woken once, with all it waits for.
	 */
	for (q = 0; q < vs; q++) {
		unsigned int dst = order[d * c->dv + q];
		uint64_t ev = A2A_EV_LAND;

		for (p = 0; p < hs; p++)
			if (order[s * c->dh + p] == dst)
				ev |= A2A_EV_DONE;
		ret = signal(c, dst, ev);
		if (ret)
			return ret;
	}
	for (p = 0; p < hs; p++) {
		unsigned int src = order[s * c->dh + p];

		for (q = 0; q < vs && order[d * c->dv + q] != src; q++)
			;
		if (q < vs)
			continue;
		ret = signal(c, src, A2A_EV_DONE);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Assignment (the patent leaves the policy open): the rank that paired the
 * tile is one of its members and is running now, so by default it repacks
 * the tile itself (the locality option: no hop, no wakeup). With
 * assign_spread the tile goes round-robin to a member of S u D instead,
 * through that rank's work queue, so that tiles run on several instances
 * at once. Either way the instance has registered for this call and does
 * not complete it before its queue is empty.
 */
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
	uint64_t idx, ent;
	int ret;

	if (!t->assign_spread)
		return run_tile(c, tile);
	k = tile % (hs + vs);
	inst = k < hs ? order[s * c->dh + k] : order[d * c->dv + k - hs];
	if (inst == t->rank)
		return run_tile(c, tile);
	ret = pt->fadd(pt->ctx, inst, A2A_W_WQ, 1, &idx);
	if (ret)
		return ret;
	ent = tag(c->seq, tile + 1);
	ret = pt->put(pt->ctx, inst, t->lay.off_wq + idx % t->lay.wq_cap * 8,
		      &ent, sizeof(ent));
	return ret ? ret : signal(c, inst, A2A_EV_WORK);
}

/* Mask of the positions of subgroup @g of size-@d subgroups. */
static uint64_t sg_mask(unsigned int n, unsigned int d, unsigned int g)
{
	unsigned int sz = a2a_sg_size(n, d, g);
	uint64_t m = sz == 64 ? ~0ULL : (1ULL << sz) - 1;

	return m << (g * d);
}

static bool sg_ready(uint64_t regs, unsigned int n, unsigned int d,
		     unsigned int g)
{
	uint64_t m = sg_mask(n, d, g);

	return (regs & m) == m;
}

/*
 * Register with the control tree and pair what this registration made
 * ready: the source subgroup pos / dh and the destination subgroup
 * pos / dv of this rank's arrival position.
 */
static int register_tiles(struct a2a_call *c)
{
	struct a2a_team *t = c->t;
	const struct a2a_port *pt = t->port;
	const struct a2a_layout *l = &t->lay;
	unsigned int n = l->n, ns = a2a_nsg(n, c->dh), nd = a2a_nsg(n, c->dv);
	uint64_t all = n == 64 ? ~0ULL : (1ULL << n) - 1;
	uint64_t old, bit, before, after;
	uint32_t me = t->rank, *order = (uint32_t *)t->scratch;
	unsigned int s, d, g;
	bool src_ready, dst_ready, have_order = false;
	int ret;

	ret = pt->fadd(pt->ctx, 0, A2A_W_ARRIVAL, 1, &old);
	if (ret)
		return ret;
	/* Every tile call adds N: a different count means another call. */
	if (old / n != t->ncalls)
		return -EPROTO;
	c->pos = old % n;
	bit = 1ULL << c->pos;
	ret = pt->put(pt->ctx, 0, l->off_order + (t->ncalls & 1) * n * 4 +
		      c->pos * 4, &me, sizeof(me));
	if (ret)
		return ret;
	ret = pt->fadd(pt->ctx, 0, A2A_W_REGBITS,
		       t->ncalls & 1 ? -bit : bit, &old);
	if (ret)
		return ret;
	before = t->ncalls & 1 ? all & ~old : old;
	if (before & bit || before & ~all)
		return -EPROTO;
	after = before | bit;
	s = c->pos / c->dh;
	d = c->pos / c->dv;
	src_ready = sg_ready(after, n, c->dh, s);
	dst_ready = sg_ready(after, n, c->dv, d);
	for (g = 0; g < nd + ns; g++) {
		unsigned int ps = g < nd ? s : g - nd;
		unsigned int pd = g < nd ? g : d;

		if (g < nd ? !src_ready || !sg_ready(after, n, c->dv, pd) :
		    !dst_ready || !sg_ready(after, n, c->dh, ps) ||
		    (src_ready && ps == s))
			continue;
		if (!have_order) {
			ret = read_order(c, order);
			if (ret)
				return ret;
			have_order = true;
		}
		ret = assign(c, ps, pd, order);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Unpack the messages of all source subgroups (the endpoint placement of
 * the patent: the block from source i goes to its place in the result
 * buffer), fetch directly exchanged blocks from their sources' exposed
 * memory and confirm each read to its source. Lengths that disagree with
 * this rank's arguments fail the call with -EINVAL, after the protocol.
 */
static int unpack(struct a2a_call *c)
{
	struct a2a_team *t = c->t;
	const struct a2a_port *pt = t->port;
	const struct a2a_layout *l = &t->lay;
	unsigned int ns = a2a_nsg(l->n, c->dh), s, p;
	int ret;

	for (s = 0; s < ns; s++) {
		unsigned int hs = a2a_sg_size(l->n, c->dh, s);
		const struct a2a_msg *m = (void *)(t->area + l->off_land +
						   s * slot_size(l, c->dh));
		const struct a2a_entry *e = (void *)((uint8_t *)m +
						     A2A_MSG_HDR);
		const uint8_t *pay = (uint8_t *)(e + hs);

		if (m->seq != c->seq || m->nblk != hs)
			return -EPROTO;
		for (p = 0; p < hs; p++) {
			unsigned int src = e[p].src;
			bool direct = e[p].flags & A2A_E_DIRECT;
			struct a2a_stage st;

			if (src >= l->n)
				return -EPROTO;
			if (!direct && (e[p].len > l->threshold ||
					e[p].off > l->threshold * hs - e[p].len))
				return -EPROTO;
			if (e[p].len != expected_len(c, src) && !c->err)
				c->err = -EINVAL;
			if (!direct) {
				if (!c->err)
					dfg_copy(recv_ptr(c, src),
					       pay + e[p].off, e[p].len);
				continue;
			}
			if (!c->err) {
				ret = pt->get(pt->ctx, src, l->off_stage, &st,
					      sizeof(st));
				if (!ret)
					ret = pt->get_mem(pt->ctx, src, st.key,
							  e[p].off,
							  recv_ptr(c, src),
							  e[p].len);
				if (ret)
					return ret;
			}
			ret = signal(c, src, A2A_EV_DONE);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Run the tiles queued to this rank; entries of this call carry its seq. */
static int run_queue(struct a2a_call *c, uint32_t queued)
{
	struct a2a_team *t = c->t;
	const struct a2a_layout *l = &t->lay;
	unsigned int ntiles = a2a_nsg(l->n, c->dh) * a2a_nsg(l->n, c->dv);
	unsigned int i;
	int ret;

	for (i = 0; i < l->wq_cap && c->nwork < queued; i++) {
		uint64_t *slot = (uint64_t *)(t->area + l->off_wq + i * 8);
		uint64_t ent = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

		if ((uint32_t)(ent >> 32) != c->seq || !(uint32_t)ent)
			continue;
		if ((uint32_t)ent > ntiles)
			return -EPROTO;
		__atomic_store_n(slot, 0, __ATOMIC_RELAXED);
		c->nwork++;
		ret = run_tile(c, (uint32_t)ent - 1);
		if (ret)
			return ret;
	}
	return 0;
}

static int progress_tiles(struct a2a_call *c)
{
	struct a2a_team *t = c->t;
	const struct a2a_port *pt = t->port;
	unsigned int ns = a2a_nsg(t->lay.n, c->dh);
	int ret;

	for (;;) {
		uint32_t ran = c->nwork;

		c->ev = pt->peek(pt->ctx, A2A_W_EV);
		if (A2A_EV_FIELD(c->ev, A2A_EV_WORK) == c->nwork)
			break;
		ret = run_queue(c, A2A_EV_FIELD(c->ev, A2A_EV_WORK));
		if (ret)
			return ret;
		/* Counted entries are visible: the count follows the put. */
		if (c->nwork == ran)
			return -EPROTO;
	}
	if (A2A_EV_FIELD(c->ev, A2A_EV_LAND) < ns)
		return 0;
	if (c->state == S_TILES) {
		ret = unpack(c);
		if (ret)
			return ret;
		/* Landing counted; what remains are completions. */
		c->state = S_COMPLETING;
		c->ev = pt->peek(pt->ctx, A2A_W_EV);
	}
	return A2A_EV_FIELD(c->ev, A2A_EV_DONE) >= c->expect;
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
	unsigned int j;
	int ret;

	ret = stage_pack(c, 0);
	if (ret < 0)
		return ret;
	for (j = 0; j < t->lay.n; j++) {
		if (j == t->rank)
			continue;
		ret = signal(c, j, A2A_EV_REG);
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
	size_t stab = t->lay.off_stage + A2A_STAGE_HDR;
	unsigned int i, j;
	int ret;

	for (i = 0; i < t->lay.n; i++) {
		struct a2a_stage st;
		struct a2a_entry e;

		/* Start past this rank: not everybody reads rank 0 first. */
		j = (t->rank + i) % t->lay.n;
		ret = pt->get(pt->ctx, j, t->lay.off_stage, &st, sizeof(st));
		if (!ret)
			ret = pt->get(pt->ctx, j, stab + t->rank * sizeof(e),
				      &e, sizeof(e));
		if (ret)
			return ret;
		if (st.seq != c->seq || e.src != j)
			return -EPROTO;
		if (e.len != expected_len(c, j) && !c->err)
			c->err = -EINVAL;
		if (!c->err && e.len) {
			ret = pt->get_mem(pt->ctx, j, st.key, e.off,
					  recv_ptr(c, j), e.len);
			if (ret)
				return ret;
		}
		if (j != t->rank) {
			ret = signal(c, j, A2A_EV_DONE);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Subtract what this call consumed from EV: later calls start at zero. */
static int consume(struct a2a_call *c)
{
	const struct a2a_port *pt = c->t->port;
	uint64_t used = c->expect * A2A_EV_DONE;

	if (c->algo == A2A_ALGO_DIRECT)
		used += (uint64_t)(c->t->lay.n - 1) * A2A_EV_REG;
	else
		used += a2a_nsg(c->t->lay.n, c->dh) * A2A_EV_LAND +
			c->nwork * A2A_EV_WORK;
	return pt->fadd(pt->ctx, c->t->rank, A2A_W_EV, -used, NULL);
}

int a2a_progress(struct a2a_call *c)
{
	const struct a2a_port *pt = c->t->port;
	int ret;

	switch (c->state) {
	case S_TILES:
		ret = progress_tiles(c);
		break;
	case S_DIRECT_REG:
		c->ev = pt->peek(pt->ctx, A2A_W_EV);
		if (A2A_EV_FIELD(c->ev, A2A_EV_REG) < c->t->lay.n - 1)
			return 0;
		ret = read_direct(c);
		if (ret)
			return ret;
		c->state = S_COMPLETING;
		/* fall through */
	case S_COMPLETING:
		if (c->algo == A2A_ALGO_TILES) {
			ret = progress_tiles(c);
			break;
		}
		c->ev = pt->peek(pt->ctx, A2A_W_EV);
		ret = A2A_EV_FIELD(c->ev, A2A_EV_DONE) >= c->expect;
		break;
	case S_OVER:
		return 1;
	default:
		return -EINVAL;
	}
	if (ret == 1) {
		ret = consume(c);
		if (ret)
			return ret;
		if (c->algo == A2A_ALGO_TILES)
			c->t->ncalls++;
		c->state = S_OVER;
		return 1;
	}
	return ret;
}

static void call_tiles(const struct a2a_call *c, unsigned int *dh,
		       unsigned int *dv)
{
	const struct a2a_team *t = c->t;

	if (t->force_dh && t->force_dv) {
		*dh = t->force_dh < t->lay.n ? t->force_dh : t->lay.n;
		*dv = t->force_dv < t->lay.n ? t->force_dv : t->lay.n;
		return;
	}
	/*
	 * From what every rank knows alike, never from its own block sizes:
	 * ranks whose arguments disagree still cut the same tiles, finish
	 * the protocol and report -EINVAL instead of hanging.
	 */
	a2a_pick_tile(t->lay.n, t->lay.threshold, dh, dv);
}

int a2a_start(struct a2a_call *c)
{
	struct a2a_team *t = c->t;
	int ret;

	c->nwork = 0;
	c->is_exposed = false;
	memset(c->key, 0, sizeof(c->key));
	c->state = S_IDLE;
	if (c->algo == A2A_ALGO_DIRECT) {
		ret = start_direct(c);
		return ret ? ret : a2a_progress(c);
	}
	if (c->algo != A2A_ALGO_TILES || t->lay.n > A2A_TILES_MAX_N)
		return -EINVAL;
	call_tiles(c, &c->dh, &c->dv);
	ret = stage_pack(c, t->lay.threshold);
	if (ret < 0)
		return ret;
	c->expect = a2a_nsg(t->lay.n, c->dv) + ret;
	c->state = S_TILES;
	ret = register_tiles(c);
	return ret ? ret : a2a_progress(c);
}

void a2a_call_fini(struct a2a_call *c)
{
	const struct a2a_port *pt = c->t->port;

	if (c->is_exposed)
		pt->unexpose(pt->ctx, c->key);
	c->is_exposed = false;
}

int a2a_team_init(struct a2a_team *t, const struct a2a_port *port,
		  unsigned int rank, unsigned int n, size_t threshold,
		  uint8_t *area)
{
	if (!n || rank >= n)
		return -EINVAL;
	*t = (struct a2a_team){ .port = port, .rank = rank, .area = area };
	a2a_layout_init(&t->lay, n, threshold);
	t->scratch = malloc(ORDER_SIZE(n) + slot_size(&t->lay, n));
	return t->scratch ? 0 : -ENOMEM;
}

void a2a_team_fini(struct a2a_team *t)
{
	free(t->scratch);
	t->scratch = NULL;
}
