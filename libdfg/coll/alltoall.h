/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg internals: all-to-all(v) as the transpose of a distributed block
 * matrix (patent 003, shared/reference/003-alltoall-repacking.md).
 *
 * Block (i,j) goes from rank i to rank j. The matrix is cut into dh x dv
 * tiles: a source subgroup of dh ranks times a destination subgroup of dv
 * ranks, formed in the order the ranks enter the call (arrival position p
 * is in source subgroup p / dh and destination subgroup p / dv; the last
 * subgroups are smaller when dh or dv does not divide N). A control tree
 * registers arrivals, marks a subgroup ready once all its members have
 * registered, pairs a tile the moment its second subgroup becomes ready
 * and assigns it to a repacking instance (a member process of the tile).
 * The instance takes one packed message from each source of the tile,
 * repacks the blocks by destination and puts one contiguous message into
 * each destination's landing slot, then notifies every source and
 * destination. A rank is done when all its tiles have completed.
 *
 * Blocks above the size threshold never travel through a repacker: the
 * tile carries only their length and place, and the destination reads
 * them straight from the source's exposed buffer (direct exchange). With
 * DFG_ALGO_DIRECT every block goes that way without tiles.
 *
 * The engine is written against struct a2a_port, a handful of one-sided
 * operations on per-rank exposed areas, so that it runs in one process
 * over a fake port (host tests) as it runs over the team's transport.
 * It never blocks: a2a_progress() says when to wait for the next event.
 */
#ifndef _DFG_COLL_ALLTOALL_H
#define _DFG_COLL_ALLTOALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Tile staging budget: bytes of one tile (dh * dv blocks) a repacker
 * holds in flight. The patent's cost model ([derived] 3.4) trades d^2 * a
 * bytes of repacker staging against N/d messages per rank instead of
 * N - 1. The tile size must not depend on a rank's own block sizes (ranks
 * whose arguments disagree must still cut the same tiles), so it is sized
 * for the largest block the tiles carry, the threshold: 256 KiB, a core's
 * L2, gives d = 8 at 4 KiB. Teams of up to 8 members (the small-block
 * case the path is for) are one tile: one repacking pass, one message
 * into and out of each rank, and each rank blocks once; larger teams get
 * tiles of 8 x 8 that run on several members at once.
 */
#define A2A_TILE_BUDGET		(256u << 10)

/*
 * Size threshold (patent 3.5: "only messages below a pre-specified
 * threshold"; no number given). A block above it costs more in the two
 * extra copies of the tile path (pack and repack) than the fixed cost of
 * reading it straight from the source's exposed buffer; 4 KiB is where a
 * block stops being a few cache lines and becomes a page, the granule of
 * exposure. It also sizes each rank's staging and landing areas
 * (N * threshold).
 */
#define A2A_THRESHOLD		4096u

/* enum dfg_coll_algo values that the engine runs. */
#define A2A_ALGO_TILES		4	/* DFG_ALGO_TILES */
#define A2A_ALGO_DIRECT		3	/* DFG_ALGO_DIRECT */

/* Bytes of a transport's key for exposed memory (struct dfg_xkey). */
#define A2A_KEY_SIZE		48

/*
 * Atomic words per rank (fadd by any rank, wait by the owner):
 * EV: this rank's events in the current call, one 16-bit field each:
 *	DONE (a tile it is a source of completed, or a peer read one of its
 *	directly exchanged blocks), LAND (a repacked message landed in one
 *	of its slots), WORK (a tile was queued to it), REG (a peer
 *	registered for direct exchange). The owner subtracts exactly what
 *	its call consumed when the call ends.
 * WQ: work queue tail (entries ever pushed).
 * ARRIVAL, REGBITS: the control tree's root words, in rank 0 only.
 */
enum { A2A_W_EV, A2A_W_WQ, A2A_W_ARRIVAL, A2A_W_REGBITS, A2A_W_NR };

#define A2A_EV_DONE		(1ULL << 0)
#define A2A_EV_LAND		(1ULL << 16)
#define A2A_EV_WORK		(1ULL << 32)
#define A2A_EV_REG		(1ULL << 48)
#define A2A_EV_FIELD(v, f)	((uint32_t)((v) / (f)) & 0xffff)

/* The largest team the tiles serve: REGBITS has one bit per position. */
#define A2A_TILES_MAX_N		64

/*
 * struct a2a_port - one-sided operations on the ranks' exposed areas
 * @ctx:	the transport behind them
 * @fadd:	add @add to atomic word @idx (A2A_W_*) of @peer, previous
 *		value into *@old (may be NULL); ordered after every get and
 *		put before it, and wakes @peer if it waits
 * @peek:	this rank's own atomic word @idx
 * @get:	copy @len bytes at @off of @peer's area to @dst
 * @put:	copy @len bytes from @src to @off of @peer's area
 * @get_mem:	copy @len bytes at @off of memory that @peer exposed under
 *		@key to @dst (direct exchange)
 * @expose:	expose @len bytes at @buf to the team; its key into @key
 * @unexpose:	undo @expose
 *
 * Every operation returns 0 or -errno; -EOWNERDEAD once the team broke.
 */
struct a2a_port {
	void	*ctx;
	int	(*fadd)(void *ctx, unsigned int peer, unsigned int idx,
			uint64_t add, uint64_t *old);
	uint64_t (*peek)(void *ctx, unsigned int idx);
	int	(*get)(void *ctx, unsigned int peer, size_t off, void *dst,
		       size_t len);
	int	(*put)(void *ctx, unsigned int peer, size_t off,
		       const void *src, size_t len);
	int	(*get_mem)(void *ctx, unsigned int peer, const void *key,
			   uint64_t off, void *dst, size_t len);
	int	(*expose)(void *ctx, const void *buf, size_t len, void *key);
	void	(*unexpose)(void *ctx, void *key);
};

/*
 * struct a2a_layout - where things are in every rank's exposed area
 *
 * All ranks' areas have this one layout; the control tree's words are
 * used only in rank 0's (the root).
 * @n:		team size
 * @threshold:	largest block that travels through tiles
 * @wq_cap:	work queue entries (tiles one rank can be assigned per call)
 * @off_wq:	the work queue: @wq_cap u64 entries
 * @off_order:	arrival order, 2 (call parity) x N u32 ranks (rank 0's)
 * @off_stage:	this rank's outgoing blocks: header, table, payload
 * @off_land:	incoming messages, one slot per source subgroup
 * @land_size:	bytes of the landing area
 * @size:	bytes of one area
 */
struct a2a_layout {
	unsigned int	n;
	size_t		threshold;
	unsigned int	wq_cap;
	size_t		off_wq;
	size_t		off_order;
	size_t		off_stage;
	size_t		off_land;
	size_t		land_size;
	size_t		size;
};

void a2a_layout_init(struct a2a_layout *l, unsigned int n, size_t threshold);

/* Tile geometry: subgroups of @d ranks over @n; the last may be smaller. */
static inline unsigned int a2a_nsg(unsigned int n, unsigned int d)
{
	return (n + d - 1) / d;
}

static inline unsigned int a2a_sg_size(unsigned int n, unsigned int d,
				       unsigned int g)
{
	return n - g * d < d ? n - g * d : d;
}

/*
 * Tile size on @n ranks for blocks of up to @block bytes: the largest
 * square tile whose blocks fit A2A_TILE_BUDGET.
 */
void a2a_pick_tile(unsigned int n, size_t block, unsigned int *dh,
		   unsigned int *dv);


/*
 * struct a2a_team - per-team engine state that outlives a call
 * @port:	the one-sided operations
 * @lay:	the areas' layout
 * @rank:	this rank
 * @area:	this rank's own area (@lay.size bytes, exposed to the team)
 * @ncalls:	tile calls so far (the parity of REGBITS and order[])
 * @assign_spread: spread tiles over their members (see assign())
 * @force_dh:	tile size for tests and tuning (the same on every rank);
 *		0: a2a_pick_tile() for the threshold
 * @force_dv:	likewise
 * @scratch:	the repacker's outgoing message and arrival order
 */
struct a2a_team {
	const struct a2a_port	*port;
	struct a2a_layout	lay;
	unsigned int		rank;
	uint8_t			*area;
	uint64_t		ncalls;
	bool			assign_spread;
	unsigned int		force_dh, force_dv;
	uint8_t			*scratch;
};

/* Set up @t for rank @rank of @n over @port; @area is zeroed. */
int a2a_team_init(struct a2a_team *t, const struct a2a_port *port,
		  unsigned int rank, unsigned int n, size_t threshold,
		  uint8_t *area);
void a2a_team_fini(struct a2a_team *t);

enum a2a_kind { A2A_FIXED, A2A_V };

/*
 * struct a2a_call - one alltoall(v) on one rank
 * Filled by the caller: @t, @seq, @algo, @kind, the buffers and sizes.
 * @block is the fixed block size; for A2A_V the four arrays count bytes.
 * An @err set by the caller (unusable arguments) makes the rank take part
 * with nothing to send and nothing received.
 */
struct a2a_call {
	struct a2a_team	*t;
	uint32_t	seq;
	int		algo;
	enum a2a_kind	kind;
	const uint8_t	*sbuf;
	uint8_t		*rbuf;
	size_t		block;
	const size_t	*scounts, *sdispls, *rcounts, *rdispls;

	/* Engine state. */
	int		state;
	int		err;		/* -EINVAL: arguments disagree */
	unsigned int	dh, dv;
	unsigned int	pos;		/* arrival position */
	uint32_t	expect;		/* DONE events to wait for */
	uint32_t	nwork;		/* tiles run from the work queue */
	uint64_t	ev;		/* EV as last seen: wait for more */
	bool		is_exposed;
	uint8_t		key[A2A_KEY_SIZE];	/* of the exposed sbuf */
};

/*
 * a2a_start() runs the call until it must wait; a2a_progress() goes on.
 * Both return 1 when the call is over on this rank (its result in
 * @c->err), 0 when it must wait for this rank's EV word to exceed
 * @c->ev, or -errno when the transport failed (the call is then
 * abandoned: the caller aborts it on the other members).
 */
int a2a_start(struct a2a_call *c);
int a2a_progress(struct a2a_call *c);
void a2a_call_fini(struct a2a_call *c);

#endif /* _DFG_COLL_ALLTOALL_H */
