// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * The access engine of patent 004, section 3.3, for a mini-batch of roots:
 * neighbour acquisition (IDs only) -> sampling -> attributes of the
 * sampled nodes only -> encoding into one buffer of a dfg arena.
 *
 * Where bytes come from, in the order looked at: the engine's prefetch
 * buffer (the patent's buffer 323, filled by rules R1, R2 and R4), the
 * own partition, the hub replica (both in the loaded image), and else the
 * node's owner: the module's PREFETCH into the machine's shared cache
 * (the patent's interface device and its buffer 510), or, for an engine
 * over files, the owner's partition file, with a set of what was read
 * standing in for the cache, or a backend (hub_engine_ext: the TCP
 * key-value baseline of hub/kv.c, no cache).
 *
 * Determinism. Every random choice is a hash of (seed, batch, hop,
 * frontier slot, and the draw's index (uniform) or the candidate's ID
 * (weighted)) over a neighbour list that is the same wherever it was
 * read: sampling the same slot twice (a rule ahead of time, then the
 * pipeline) picks the same nodes, and nothing depends on where bytes
 * came from. So a batch is byte-identical whatever rules and
 * replication are on; the tests check it.
 *
 * Cost. A batch costs what its sampled nodes do, not what their degrees
 * or the graph's size do: uniform sampling draws k of a list of d in
 * O(k) (Floyd's algorithm), weighted in O(d log k) without allocating
 * d; neighbour lists and buffer entries read from this machine's
 * partition or replica are referenced where they are, not copied (only
 * bytes from the machine's cache are, which it may reuse); the
 * attributes are copied once, into the batch.
 *
 * Rules, and exactly when they fire (the patent's Fig. 4: root 413, own
 * hub 415, remote hub 425):
 *   R1 (claims 2/7, para. 76): at root selection, for each own hub h next
 *	to an own root r: h's neighbours and attributes into the buffer.
 *   R2 (claims 3/8): for each own hub h sampled at hop 1 from root r and
 *	each remote hub h2 next to h held in the replica that the next
 *	hop samples from h (computed as the pipeline will; all of them
 *	with one hop): h2 from the replica into the buffer. With
 *	DFG_HUB_F_R2_ON_ROOT, at root selection for every own hub next to
 *	r instead, and every remote hub next to it (para. 76/79: no
 *	sample of h is known then).
 *   R3 (para. 77, 83-84, claims 9/11): for each remote hub x sampled at
 *	hop k < hops (x not own, and either sampled from an own node, so
 *	that the edge is cut, or in the replica): x's neighbour IDs from
 *	its owner (the replica when held), sampled as the pipeline will,
 *	and the sampled nodes' attributes (and neighbours, if they are
 *	expanded later) brought into the machine's cache in one request.
 *	That request is speculative (DFG_PF_SPECULATIVE): the module's
 *	traffic monitor (claim 10) reads from an owner only while the link
 *	to it is under prefetch/traffic_threshold, and answers the rest
 *	DFG_PF_GATED (counted in r3_gated). Nobody waits for it: it goes
 *	on the engine's own ring (struct r3_req) and the pipeline goes on;
 *	its completion is taken when it is there (between the batch's
 *	steps), waited for only when a demand read asks for one of its
 *	entries (a filling cache entry is not a hit: the demand would read
 *	it again), and for all of them when the engine is freed. An
 *	engine without a ring (DFG_NO_URING, io_uring unavailable) sends it
 *	synchronously; a module without DFG_F_PF_GATE gets it ungated. A
 *	speculative request that fails (its owner died, no cache room)
 *	changes nothing: the demand read that needs the bytes reports it.
 *	Ahead (dfg_hub_ahead(), struct r3_walk): R3 runs for the batch
 *	after the current one while the current one runs. That batch is
 *	sampled hop by hop as the pipeline will sample it, as far as the
 *	lists at hand go (own, replica, and those its requests brought),
 *	R3 fires on its slots, and every remote node the batch will read
 *	is asked of its owner: R3's hubs (lists and attributes), what the
 *	next hop samples from them, and what it samples from own and
 *	replicated nodes (under a replica budget, remote hubs R2 finds no
 *	replica entry for). The walk goes on as its requests complete
 *	(walk_pump() between the steps of the batch being sampled); when
 *	the announced batch comes, its demand reads copy those entries out
 *	of the cache and R3 in the batch leaves the slots fired ahead.
 *   R4 (claim 5, para. 17): for an own root r next to an own hub: N(r)
 *	sampled as hop 1 will be, and those nodes' attributes into the
 *	buffer.
 * R1, R2 and R4 are machine-local (memory 312 into buffer 323): what is
 * neither own nor replicated they leave to the demand read (fetch()).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dfg/dfg.h>

#include "hub_impl.h"
#include "hub_kv.h"

/* ---- small containers ---- */

/* A growable array of @esz-byte elements. */
struct vec {
	void	*p;
	size_t	n, cap, esz;
};

static int vec_reserve(struct vec *v, size_t more)
{
	size_t cap = v->cap ? v->cap : 64;
	void *p;

	if (v->n + more <= v->cap)
		return 0;
	while (cap < v->n + more)
		cap *= 2;
	p = realloc(v->p, cap * v->esz);
	if (!p)
		return -ENOMEM;
	v->p = p;
	v->cap = cap;
	return 0;
}

static int vec_push(struct vec *v, const void *e, size_t n)
{
	int ret;

	/* Nothing to copy (a node without neighbours; v->p may be NULL). */
	if (!n)
		return 0;
	ret = vec_reserve(v, n);
	if (ret)
		return ret;
	memcpy((char *)v->p + v->n * v->esz, e, n * v->esz);
	v->n += n;
	return 0;
}

static void vec_swap(struct vec *a, struct vec *b)
{
	struct vec t = *a;

	*a = *b;
	*b = t;
}

#define VEC(type)	((struct vec){ .esz = sizeof(type) })
#define VAT(v, type, i)	(((type *)(v)->p)[i])

/* An open-addressing map of u64 keys (never ~0) to u32 values. */
struct map {
	uint64_t	*key;
	uint32_t	*val;
	size_t		n, cap;
};

#define MAP_EMPTY	(~0ULL)

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static void map_clear(struct map *m)
{
	/* Nothing in it (no key is ever taken out): nothing to clear. */
	if (m->key && m->n)
		memset(m->key, 0xff, m->cap * 8);
	m->n = 0;
}

static int map_grow(struct map *m)
{
	struct map g = { .cap = m->cap ? m->cap * 2 : 256 };
	size_t i;

	g.key = malloc(g.cap * 8);
	g.val = malloc(g.cap * 4);
	if (!g.key || !g.val) {
		free(g.key);
		free(g.val);
		return -ENOMEM;
	}
	memset(g.key, 0xff, g.cap * 8);
	for (i = 0; i < m->cap; i++) {
		size_t j;

		if (m->key[i] == MAP_EMPTY)
			continue;
		j = mix64(m->key[i]) & (g.cap - 1);
		while (g.key[j] != MAP_EMPTY)
			j = (j + 1) & (g.cap - 1);
		g.key[j] = m->key[i];
		g.val[j] = m->val[i];
	}
	g.n = m->n;
	free(m->key);
	free(m->val);
	*m = g;
	return 0;
}

/* The slot of @k: its value, or an empty slot for it (*found false). */
static uint32_t *map_slot(struct map *m, uint64_t k, bool *found)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap && map_grow(m))
		return NULL;
	j = mix64(k) & (m->cap - 1);
	while (m->key[j] != MAP_EMPTY && m->key[j] != k)
		j = (j + 1) & (m->cap - 1);
	*found = m->key[j] == k;
	if (!*found) {
		m->key[j] = k;
		m->n++;
	}
	return &m->val[j];
}

static const uint32_t *map_get(const struct map *m, uint64_t k)
{
	size_t j;

	if (!m->cap)
		return NULL;
	j = mix64(k) & (m->cap - 1);
	while (m->key[j] != MAP_EMPTY) {
		if (m->key[j] == k)
			return &m->val[j];
		j = (j + 1) & (m->cap - 1);
	}
	return NULL;
}

static void map_free(struct map *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof(*m));
}

/* Key of a node's neighbours (kind 0) or attributes (kind 1). */
static uint64_t kkey(uint64_t id, unsigned int what)
{
	return id << 1 | (what == DFG_PF_ATTRS);
}

/* ---- the engine ---- */

/* A weighted draw's candidate: its key, its ID. */
struct cand {
	double		key;
	uint64_t	id;
};

/*
 * One prefetch buffer entry: a node's bytes. @ref: @data points into
 * memory that outlives the engine (the own partition, the replica, an
 * owner's image over files), not owned; else @data is @copy, the slot's
 * own bytes (from the machine's cache, which may reuse them), kept
 * allocated for the slot's next copy.
 */
struct pbuf_ent {
	uint64_t	key;
	uint32_t	len;
	uint32_t	copy_cap;
	bool		ref;
	const uint8_t	*data;
	uint8_t		*copy;
};

/*
 * struct r3_req - one speculative PREFETCH in flight on the engine's ring
 * @ids, @locs:	its arrays, which the module reads and writes until the
 *		CQE: owned by the request until it is reaped
 * @cap:	entries @ids and @locs have room for
 * @nr, @what:	the request
 * @gen:	the struct r3_walk whose keys it brings (its @gen)
 * @seq:	its number (r3_pend maps a key to the last request for it)
 * @busy:	submitted, not reaped (user_data: index + 1)
 */
struct r3_req {
	uint64_t		*ids;
	struct dfg_pf_loc	*locs;
	size_t			cap;
	uint32_t		nr;
	unsigned int		what;
	uint64_t		gen;
	uint32_t		seq;
	bool			busy;
};

/*
 * Speculative requests in flight at most; the ring has as many entries.
 * A walk ahead sends up to four a step, and the current batch's may
 * still be in flight.
 */
#define R3_INFLIGHT	16

/* struct r3_walk.fired: R3 at a slot of the walk's frontier. */
enum {
	FIRE_NONE,	/* not a slot of R3 */
	FIRE_DONE,	/* fired and done ahead: the batch leaves it */
	FIRE_WAIT,	/* fired (counted), not done ahead: the batch does it */
};

/* struct r3_walk.done: a slot's sample ahead. */
enum {
	SLOT_TODO,	/* its list not asked for yet */
	SLOT_ASKED,	/* its list asked of its owner */
	SLOT_SAMPLED,	/* sampled, what it picked asked for */
	SLOT_LEFT,	/* its list did not come: left to the batch */
};

/*
 * struct r3_walk - R3's state for one batch: the batch being sampled
 * (e->wc), or one announced by dfg_hub_ahead() (e->wa), which is walked
 * ahead: sampled hop by hop as the pipeline will sample it, as far as
 * the neighbour lists on this machine (own, replica) and those its
 * requests brought go, and every remote node it will read asked of its
 * owner, speculatively, without waiting.
 * @valid:	holds a batch
 * @ahead:	announced (walked ahead), not a batch begun unannounced
 * @on:		the walk may go on (not finished, not stopped)
 * @formed:	@next is hop @hop's sample of @front
 * @asked:	@front's unknown lists were asked for (once)
 * @gen:	its number (struct r3_req.gen), new for every batch it holds
 * @batch, @roots: the batch
 * @hop:	the hop the walk samples
 * @front, @froot: that hop's frontier: IDs, their roots' indices
 * @next, @nroot, @npar: its sample: IDs, roots' indices, parent slots
 * @fired:	per hop k, a FIRE_* byte per slot of hop k's sample (the
 *		frontier of hop k + 1, where R3 fires), once formed
 * @done:	a SLOT_* byte per slot of @next
 * @keys, @locv: keys its requests brought into the machine's cache,
 *		each to its location in @locv (~0: over files, no location)
 * @lists, @lref, @nb: remote neighbour lists it copied out of the cache
 *		(ID -> index in @lref: struct nbref into @nb)
 * @att, @nbr, @ask: scratch: IDs to ask for attributes, lists, both
 * @hs, @hso:	the samples it drew, which its batch takes instead of
 *		drawing them again (hop_run()): per hop h, @hso[h] has a
 *		word per slot of hop h's frontier, (start << 32 | count)
 *		into @hs[h], or HS_NONE where the walk drew nothing
 */
struct r3_walk {
	bool		valid, ahead, on, formed, asked;
	uint64_t	gen;
	uint64_t	batch;
	struct vec	roots;
	unsigned int	hop;
	struct vec	front, froot, next, nroot, npar;
	struct vec	fired[DFG_HUB_HOPS_MAX];
	struct vec	done;
	struct map	keys;
	struct vec	locv;
	struct map	lists;
	struct vec	lref, nb;
	struct vec	att, nbr, ask;
	struct vec	hs[DFG_HUB_HOPS_MAX], hso[DFG_HUB_HOPS_MAX];
};

/* struct r3_walk.hso: a slot the walk did not sample. */
#define HS_NONE	UINT64_MAX

/*
 * DFG_HUB_PROF=1: where a batch's time goes, printed to stderr when the
 * engine is freed (a debugging aid for the prefetch configurations; off,
 * it costs a branch per stage change). Time is exclusive: a stage that
 * calls another (a rule's read waiting in PREFETCH) loses the inner
 * stage's time to it. PF_* counts synchronous PREFETCH calls (and their
 * entries) by the stage that made them.
 */
enum {
	PROF_OFF,	/* between the engine's calls: not timed */
	PROF_OTHER,	/* batch setup and encoding */
	PROF_ACQUIRE,	/* a hop's neighbour lists, but for PREFETCH */
	PROF_SAMPLE,	/* a hop's draws */
	PROF_RULES,	/* R1, R2, R4 */
	PROF_R3,	/* R3 within the batch */
	PROF_WALK,	/* R3 ahead: the announced batch's walk */
	PROF_ATTRS,	/* the batch's attributes */
	PROF_PF,	/* waiting in a synchronous PREFETCH */
	PROF_R3WAIT,	/* waiting for R3's completions */
	PROF_NR,
};

struct hub_prof {
	bool		on;
	unsigned int	cur;
	struct timespec	t;
	uint64_t	ns[PROF_NR];
	uint64_t	pf_calls[PROF_NR], pf_ents[PROF_NR];
	uint64_t	r3_waits;
};

struct dfg_hub_engine {
	struct dfg_hub_opts	o;
	struct dfg_hub_stats	st;
	struct hub_prof		prof;
	const struct hub_view	*own;
	uint64_t		id_end;		/* files: bound of IDs; else 0 */

	/* Served: the module. */
	struct dfg		*d;
	struct dfg_hub		*hub;

	/* Over files: every partition's image and view. */
	unsigned int		k;
	void			**imgs;
	struct hub_view		*views;
	uint64_t		*part_base;	/* k + 1 */
	struct map		sim_cache;	/* keys read from owners */

	/* Over a backend (hub_engine_ext): remote reads through it. */
	const struct hub_fetch_ops *ext;
	void			*ext_arg;

	/*
	 * The prefetch buffer: 2-way set-associative, @pbuf_sets sets of
	 * two entries (2 * @pbuf_sets of them), the older of a set replaced
	 * (@pbuf_old: a bit per set, the way to replace next). A put and a
	 * lookup are one hash and two compares: no index to keep.
	 */
	struct pbuf_ent		*pbuf;
	uint32_t		pbuf_sets;
	uint8_t			*pbuf_old;

	/*
	 * R3's walks: of the batch being sampled (@wc) and of the one
	 * announced (@wa; dfg_hub_ahead()); @r3w the one a speculative fetch
	 * brings keys for. @walks holds them.
	 */
	struct r3_walk		walks[2];
	struct r3_walk		*wc, *wa, *r3w;
	uint64_t		gen_next;
	/* Frontier slots sampled; of them, taken from a walk's draws. */
	uint64_t		slots, slots_ahead;

	/* R3's requests in flight: the ring, its requests, their keys. */
	struct io_uring		ring;
	bool			ring_up;
	unsigned int		spec_flags;	/* DFG_PF_SPECULATIVE or 0 */
	struct r3_req		r3q[R3_INFLIGHT];
	unsigned int		r3_busy;
	uint32_t		seq_next;
	struct map		r3_pend;	/* key -> seq of its last request */
	struct map		r3_seen;	/* keys of one R3 fetch */

	/* Per batch scratch. */
	struct vec		nb;		/* neighbour IDs, fetched */
	struct map		nb_idx;		/* node -> index in nbref */
	struct vec		nbref;		/* (start, count) in nb */
	struct map		node_idx;	/* node -> index in nodes */
	struct vec		nodes;		/* unique sampled nodes */
	struct vec		miss_ids;	/* remote ids of one fetch */
	struct vec		miss_slot;	/* their destinations */
	struct vec		locs;		/* PREFETCH results */
	struct vec		pairs[DFG_HUB_HOPS_MAX];	/* u32 x 2 */
	struct vec		front, next;	/* frontier node IDs */
	struct vec		froot, nroot;	/* their roots' indices */
	struct vec		ids;		/* IDs of one request */
	uint8_t			*tmp;		/* one remote entry */
	size_t			tmp_cap;

	/* What the current request's sink writes to. */
	size_t			sink_base;	/* sink_nbrs: nbref index */
	uint8_t			*sink_dst;	/* sink_attrs */
	const uint64_t		*sink_ids;	/* sink_pbuf */
	const uint64_t		*roots;		/* the batch's roots */
	unsigned int		sink_what;	/* sink_pbuf */
	/* The bytes given to the sink outlive the engine (see pbuf_ent). */
	bool			sink_stable;

	/* sample(): the candidates of a weighted draw, the picked slots. */
	struct vec		cand;
	struct map		picked;
};

/*
 * A node's neighbour list in this batch: @ptr when it stays where it was
 * read (own partition, replica, an owner's image), else @count IDs at
 * @start in e->nb (copied out of the cache or the buffer).
 */
struct nbref {
	const uint64_t	*ptr;
	uint64_t	start;
	uint32_t	count;
	uint32_t	pad;
};

static int r3_reap(struct dfg_hub_engine *e);

/* ---- DFG_HUB_PROF ---- */

/*
 * The time since the last change to the stage it was in, and stage @to
 * from now on. Returns the stage left (for prof_to() back to it).
 */
static unsigned int prof_to(struct dfg_hub_engine *e, unsigned int to)
{
	struct hub_prof *p = &e->prof;
	unsigned int was = p->cur;
	struct timespec t;

	if (!p->on)
		return was;
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (was != PROF_OFF)
		p->ns[was] += (uint64_t)((t.tv_sec - p->t.tv_sec) *
					 1000000000LL +
					 (t.tv_nsec - p->t.tv_nsec));
	p->t = t;
	p->cur = to;
	return was;
}

/* A synchronous PREFETCH of @n entries, made in the current stage. */
static void prof_pf(struct dfg_hub_engine *e, size_t n)
{
	e->prof.pf_calls[e->prof.cur]++;
	e->prof.pf_ents[e->prof.cur] += n;
}

static void prof_print(const struct dfg_hub_engine *e)
{
	static const char *const name[PROF_NR] = {
		"off", "other", "acquire", "sample", "rules", "r3", "walk",
		"attrs", "pf_wait", "r3_wait",
	};
	const struct hub_prof *p = &e->prof;
	double b = e->st.batches ? (double)e->st.batches : 1.0;
	uint64_t tot = 0;
	unsigned int i;

	if (!p->on)
		return;
	for (i = 1; i < PROF_NR; i++)
		tot += p->ns[i];
	fprintf(stderr, "hub-prof: %llu batches, %.0f us a batch in the engine:",
		(unsigned long long)e->st.batches, tot / b / 1e3);
	for (i = 1; i < PROF_NR; i++)
		fprintf(stderr, " %s %.0f", name[i], p->ns[i] / b / 1e3);
	fprintf(stderr, "\nhub-prof: PREFETCH calls (entries) a batch by stage:");
	for (i = 1; i < PROF_NR; i++)
		if (p->pf_calls[i])
			fprintf(stderr, " %s %.2f (%.1f)", name[i],
				p->pf_calls[i] / b, p->pf_ents[i] / b);
	fprintf(stderr, "; R3 waits %.2f\n", p->r3_waits / b);
	fprintf(stderr, "hub-prof: slots a batch %.1f, their samples taken from the walk ahead %.1f\n",
		e->slots / b, e->slots_ahead / b);
}

static void walk_init(struct r3_walk *w)
{
	unsigned int h;

	memset(w, 0, sizeof(*w));
	w->roots = VEC(uint64_t);
	w->front = VEC(uint64_t);
	w->froot = VEC(uint32_t);
	w->next = VEC(uint64_t);
	w->nroot = VEC(uint32_t);
	w->npar = VEC(uint32_t);
	for (h = 0; h < DFG_HUB_HOPS_MAX; h++) {
		w->fired[h] = VEC(uint8_t);
		w->hs[h] = VEC(uint64_t);
		w->hso[h] = VEC(uint64_t);
	}
	w->done = VEC(uint8_t);
	w->locv = VEC(struct dfg_pf_loc);
	w->lref = VEC(struct nbref);
	w->nb = VEC(uint64_t);
	w->att = VEC(uint64_t);
	w->nbr = VEC(uint64_t);
	w->ask = VEC(uint64_t);
}

/* @w emptied (its room kept) for batch @batch, under a new @gen. */
static void walk_reset(struct dfg_hub_engine *e, struct r3_walk *w,
		       uint64_t batch)
{
	unsigned int h;

	w->valid = true;
	w->ahead = false;
	w->on = false;
	w->formed = false;
	w->asked = false;
	w->gen = ++e->gen_next;
	w->batch = batch;
	w->roots.n = 0;
	w->hop = 0;
	w->front.n = 0;
	w->froot.n = 0;
	w->next.n = 0;
	w->nroot.n = 0;
	w->npar.n = 0;
	for (h = 0; h < DFG_HUB_HOPS_MAX; h++) {
		w->fired[h].n = 0;
		w->hs[h].n = 0;
		w->hso[h].n = 0;
	}
	w->done.n = 0;
	map_clear(&w->keys);
	w->locv.n = 0;
	map_clear(&w->lists);
	w->lref.n = 0;
	w->nb.n = 0;
}

static void walk_free(struct r3_walk *w)
{
	struct vec *v[] = { &w->roots, &w->front, &w->froot, &w->next,
			    &w->nroot, &w->npar, &w->done, &w->locv, &w->lref,
			    &w->nb, &w->att, &w->nbr, &w->ask };
	unsigned int i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		free(v[i]->p);
	for (i = 0; i < DFG_HUB_HOPS_MAX; i++) {
		free(w->fired[i].p);
		free(w->hs[i].p);
		free(w->hso[i].p);
	}
	map_free(&w->keys);
	map_free(&w->lists);
}

static int opts_check(const struct dfg_hub_opts *o)
{
	unsigned int i;

	if (!o || !o->hops || o->hops > DFG_HUB_HOPS_MAX ||
	    (o->rules & ~DFG_HUB_R_ALL) || (o->flags & ~DFG_HUB_F_ALL) ||
	    o->decay < 0 || isnan(o->decay))
		return -EINVAL;
	for (i = o->hops; i < DFG_HUB_HOPS_MAX; i++)
		if (o->fanout[i])
			return -EINVAL;
	return 0;
}

static int engine_alloc(const struct dfg_hub_opts *opts,
			struct dfg_hub_engine **out)
{
	struct dfg_hub_engine *e;
	const char *prof;

	if (opts_check(opts))
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->o = *opts;
	prof = getenv("DFG_HUB_PROF");
	e->prof.on = prof && *prof && strcmp(prof, "0");
	if (!e->o.decay)
		e->o.decay = 0.5;
	e->pbuf_sets = e->o.buf_entries > 1 ? e->o.buf_entries / 2 :
		       e->o.buf_entries ? 1 : 2048;
	e->pbuf = calloc((size_t)e->pbuf_sets * 2, sizeof(*e->pbuf));
	e->pbuf_old = calloc(e->pbuf_sets, 1);
	if (!e->pbuf || !e->pbuf_old) {
		free(e->pbuf);
		free(e->pbuf_old);
		free(e);
		return -ENOMEM;
	}
	e->nb = VEC(uint64_t);
	e->nbref = VEC(struct nbref);
	e->nodes = VEC(uint64_t);
	e->miss_ids = VEC(uint64_t);
	e->miss_slot = VEC(uint32_t);
	e->locs = VEC(struct dfg_pf_loc);
	for (unsigned int h = 0; h < DFG_HUB_HOPS_MAX; h++)
		e->pairs[h] = VEC(uint64_t);
	e->front = VEC(uint64_t);
	e->next = VEC(uint64_t);
	e->froot = VEC(uint32_t);
	e->nroot = VEC(uint32_t);
	e->ids = VEC(uint64_t);
	walk_init(&e->walks[0]);
	walk_init(&e->walks[1]);
	e->wc = &e->walks[0];
	e->wa = &e->walks[1];
	e->r3w = e->wc;
	e->cand = VEC(struct cand);
	*out = e;
	return 0;
}

/* The end of the ID space the module's peers serve, from sysfs. */
static uint64_t served_nodes(const struct hub_view *v)
{
	uint64_t end = v->h->node_first + v->h->node_count;
	unsigned long long first, count;
	unsigned int id;
	char state[16];
	FILE *f;

	f = fopen("/sys/kernel/dfg/prefetch/peers", "re");
	if (!f)
		return end;
	while (fscanf(f, "%u %llu %llu %15s", &id, &first, &count, state) == 4)
		if (first + count > end)
			end = first + count;
	fclose(f);
	return end;
}

int dfg_hub_engine_new(struct dfg *d, struct dfg_hub *h,
		       const struct dfg_hub_opts *opts,
		       struct dfg_hub_engine **out)
{
	struct dfg_hub_engine *e;
	struct dfg_info info;
	const char *nouring;
	int ret;

	if (!d || !h || !out)
		return -EINVAL;
	ret = engine_alloc(opts, &e);
	if (ret)
		return ret;
	e->d = d;
	e->hub = h;
	e->own = &h->v;
	/*
	 * No bound of its own: peers may be added later, and PREFETCH
	 * refuses an ID no partition holds (-EINVAL, returned as -ERANGE).
	 */
	if (!dfg_info(d, &info) && (info.features & DFG_F_PF_GATE))
		e->spec_flags = DFG_PF_SPECULATIVE;
	/* R3's ring; without one, R3 waits for its request (ioctl). */
	nouring = getenv("DFG_NO_URING");
	if (!(nouring && *nouring && strcmp(nouring, "0")))
		e->ring_up = !dfg_queue_init(R3_INFLIGHT, &e->ring, 0);
	*out = e;
	return 0;
}

int hub_engine_ext(const struct hub_view *own, uint64_t id_end,
		   const struct hub_fetch_ops *ops, void *arg,
		   const struct dfg_hub_opts *opts,
		   struct dfg_hub_engine **out)
{
	struct dfg_hub_engine *e;
	int ret;

	if (!own || !ops || !out)
		return -EINVAL;
	ret = engine_alloc(opts, &e);
	if (ret)
		return ret;
	e->own = own;
	e->id_end = id_end;
	e->ext = ops;
	e->ext_arg = arg;
	*out = e;
	return 0;
}

int dfg_hub_engine_files(const char *const *paths, unsigned int k,
			 unsigned int part, unsigned int flags,
			 const struct dfg_hub_opts *opts,
			 struct dfg_hub_engine **out, struct dfg_hub_err *err)
{
	struct dfg_gs_file *f = NULL;
	struct dfg_hub_engine *e = NULL;
	struct dfg_gs_err ge;
	unsigned int i, p;
	size_t len;
	int ret;

	if (!paths || !k || part >= k || !out || (flags & ~DFG_HUB_LOAD_ALL))
		return hub_fail(err, -EINVAL, "invalid argument");
	ret = engine_alloc(opts, &e);
	if (ret)
		return hub_fail(err, ret, "invalid options");
	f = calloc(k, sizeof(*f));
	e->imgs = calloc(k, sizeof(*e->imgs));
	e->views = calloc(k, sizeof(*e->views));
	e->part_base = calloc(k + 1, 8);
	if (!f || !e->imgs || !e->views || !e->part_base) {
		ret = hub_fail(err, -ENOMEM, "no memory");
		goto out;
	}
	e->k = k;
	for (i = 0; i < k; i++) {
		ret = dfg_gs_open(&f[i], paths[i], &ge);
		if (ret) {
			hub_gs_err(err, ret, &ge);
			goto out;
		}
		if (f[i].hdr->part_count != k) {
			ret = hub_fail(err, -EXDEV,
					 "%s: one of %u partitions, not of %u",
					 paths[i], f[i].hdr->part_count, k);
			goto out;
		}
		if (i && k > 1 && dfg_gs_same_set(&f[0], &f[i], &ge)) {
			ret = hub_fail(err, -EXDEV, "%s and %s: %s",
					 paths[0], paths[i], ge.msg);
			goto out;
		}
	}
	for (i = 0; i < k; i++) {
		p = f[i].hdr->part_index;
		if (e->imgs[p]) {
			ret = hub_fail(err, -EXDEV, "partition %u given twice",
					 p);
			goto out;
		}
		/* Peers serve their images as partitioned, replica or not. */
		ret = hub_image_of(&f[i], flags, &e->imgs[p], &len, err);
		if (ret)
			goto out;
		ret = hub_view_init(&e->views[p], e->imgs[p], len);
		if (ret) {
			hub_fail(err, ret, "%s: bad image", paths[i]);
			goto out;
		}
	}
	if (f[0].part_base)
		memcpy(e->part_base, f[0].part_base, (k + 1) * 8);
	else
		e->part_base[1] = f[0].hdr->nodes_global;
	e->id_end = e->part_base[k];
	e->own = &e->views[part];
	ret = 0;
out:
	if (f)
		for (i = 0; i < k; i++)
			dfg_gs_close(&f[i]);
	free(f);
	if (ret) {
		dfg_hub_engine_free(e);
		return ret;
	}
	*out = e;
	return 0;
}

void dfg_hub_engine_free(struct dfg_hub_engine *e)
{
	unsigned int i;

	if (!e)
		return;
	/* Nothing in flight stays behind (normally the batch reaped it). */
	r3_reap(e);
	prof_print(e);
	if (e->ring_up)
		io_uring_queue_exit(&e->ring);
	for (i = 0; i < R3_INFLIGHT; i++) {
		free(e->r3q[i].ids);
		free(e->r3q[i].locs);
	}
	map_free(&e->r3_pend);
	map_free(&e->r3_seen);
	for (i = 0; i < e->k; i++) {
		if (e->views)
			hub_view_fini(&e->views[i]);
		if (e->imgs)
			free(e->imgs[i]);
	}
	free(e->imgs);
	free(e->views);
	free(e->part_base);
	for (i = 0; i < e->pbuf_sets * 2; i++)
		free(e->pbuf[i].copy);
	free(e->pbuf);
	free(e->pbuf_old);
	map_free(&e->sim_cache);
	walk_free(&e->walks[0]);
	walk_free(&e->walks[1]);
	map_free(&e->nb_idx);
	map_free(&e->node_idx);
	free(e->nb.p);
	free(e->nbref.p);
	free(e->nodes.p);
	free(e->miss_ids.p);
	free(e->miss_slot.p);
	free(e->locs.p);
	for (i = 0; i < DFG_HUB_HOPS_MAX; i++)
		free(e->pairs[i].p);
	free(e->front.p);
	free(e->next.p);
	free(e->froot.p);
	free(e->nroot.p);
	free(e->ids.p);
	free(e->cand.p);
	map_free(&e->picked);
	free(e->tmp);
	free(e);
}

__u64 dfg_hub_engine_nodes(const struct dfg_hub_engine *e)
{
	if (!e)
		return 0;
	return e->hub ? served_nodes(e->own) : e->id_end;
}

void dfg_hub_engine_stats(const struct dfg_hub_engine *e,
			  struct dfg_hub_stats *st)
{
	if (e && st)
		*st = e->st;
}

/* ---- the prefetch buffer (323) ---- */

/* The first lines of @len bytes at @p into the CPU's cache. */
static void touch(const void *p, uint32_t len)
{
	uint32_t o;

	for (o = 0; o < len && o < 256; o += 64)
		__builtin_prefetch((const uint8_t *)p + o);
}

/* The set of @key: its two entries. */
static struct pbuf_ent *pbuf_set(const struct dfg_hub_engine *e, uint64_t key)
{
	return &e->pbuf[(mix64(key) % e->pbuf_sets) * 2];
}

static const struct pbuf_ent *pbuf_get(const struct dfg_hub_engine *e,
				       uint64_t key)
{
	const struct pbuf_ent *s = pbuf_set(e, key);

	if (s[0].data && s[0].key == key)
		return &s[0];
	if (s[1].data && s[1].key == key)
		return &s[1];
	return NULL;
}

/*
 * @len bytes of @key into the buffer, replacing the older entry of its
 * set. Bytes that stay where they are (@stable: this machine's partition
 * or replica) are referenced, and their first lines brought into the
 * CPU's cache (the software form of the patent's DDR-to-buffer move: the
 * bytes are in this machine's memory already, a copy would only cost);
 * others copied into the entry's own room.
 */
static int pbuf_put(struct dfg_hub_engine *e, uint64_t key, const void *data,
		    uint32_t len, bool stable)
{
	struct pbuf_ent *s, *pe;
	uint32_t set;

	if (pbuf_get(e, key))
		return 0;
	s = pbuf_set(e, key);
	set = (uint32_t)((s - e->pbuf) / 2);
	pe = &s[e->pbuf_old[set]];
	e->pbuf_old[set] ^= 1;
	pe->data = NULL;
	if (stable) {
		pe->data = data;
		touch(data, len);
	} else {
		if (pe->copy_cap < len) {
			uint8_t *c = realloc(pe->copy, len);

			if (!c)
				return -ENOMEM;
			pe->copy = c;
			pe->copy_cap = len;
		}
		if (len)
			memcpy(pe->copy, data, len);
		/* Never NULL: data marks the entry used. */
		pe->data = pe->copy ? pe->copy : (const uint8_t *)pe;
	}
	pe->ref = stable;
	pe->len = len;
	pe->key = key;
	e->st.buf_puts++;
	return 0;
}

/* ---- reading nodes ---- */

static int tmp_room(struct dfg_hub_engine *e, size_t len)
{
	uint8_t *p;

	if (len <= e->tmp_cap)
		return 0;
	p = realloc(e->tmp, len);
	if (!p)
		return -ENOMEM;
	e->tmp = p;
	e->tmp_cap = len;
	return 0;
}

/* Owner view of a remote ID (engine over files), or NULL. */
static const struct hub_view *owner_view(const struct dfg_hub_engine *e,
					 uint64_t id)
{
	if (id >= e->part_base[e->k])
		return NULL;
	return &e->views[dfg_gs_owner(e->part_base, e->k, id)];
}

/*
 * A fetched entry: @i-th of the request. The sink gets the bytes; @r3
 * marks reads done for R3 (which keep nothing, the cache keeps them).
 */
typedef int (*sink_fn)(struct dfg_hub_engine *e, uint32_t i, const void *p,
		       uint32_t len);

/* Count a remote entry: a read now, or a cache hit (R3's or not). */
static void count_remote(struct dfg_hub_engine *e, uint64_t key, bool hit,
			 bool r3)
{
	if (r3) {
		if (!hit)
			e->st.r3_nodes++;
		return;
	}
	if (!hit) {
		e->st.remote++;
		return;
	}
	e->st.cache_hits++;
	if (map_get(&e->wc->keys, key))
		e->st.r3_hits++;
}

/* ---- R3's speculative requests ---- */

/* The walk that holds generation @gen, or NULL (a batch gone by). */
static struct r3_walk *walk_of(struct dfg_hub_engine *e, uint64_t gen)
{
	if (e->wc->valid && e->wc->gen == gen)
		return e->wc;
	if (e->wa->valid && e->wa->gen == gen)
		return e->wa;
	return NULL;
}

/* Key @key brought into the cache at @l, for walk @w's batch. */
static int walk_key(struct r3_walk *w, uint64_t key,
		    const struct dfg_pf_loc *l)
{
	bool found;
	uint32_t *v = map_slot(&w->keys, key, &found);

	if (!v)
		return -ENOMEM;
	if (!l) {
		if (!found)
			*v = ~0U;
		return 0;
	}
	if (vec_push(&w->locv, l, 1))
		return -ENOMEM;
	*v = (uint32_t)(w->locv.n - 1);
	return 0;
}

/*
 * What a speculative request of @n entries (@ids, @what: one bit or
 * both, @l holding a node's entries one after the other, lists first)
 * answered (@res): reads and hits counted, its keys kept in walk @w (if
 * its batch is still to come or being sampled) for r3_hits with their
 * cache locations (a demand read copies them from there without asking
 * the module again), gated entries counted. A failure counts nothing
 * (see the header).
 */
static int r3_done(struct dfg_hub_engine *e, struct r3_walk *w,
		   const uint64_t *ids, const struct dfg_pf_loc *l, size_t n,
		   unsigned int what, int res)
{
	unsigned int per = (what & DFG_PF_NBRS ? 1 : 0) +
			   (what & DFG_PF_ATTRS ? 1 : 0), k;
	size_t i;
	int ret;

	if (res < 0)
		return 0;
	for (i = 0; i < n; i++)
		for (k = 0; k < per; k++) {
			const struct dfg_pf_loc *li = &l[i * per + k];
			unsigned int bit = per == 2 ? (k ? DFG_PF_ATTRS :
						       DFG_PF_NBRS) : what;
			uint64_t key = kkey(ids[i], bit);

			if (li->where == DFG_PF_GATED) {
				e->st.r3_gated++;
				continue;
			}
			if (li->where != DFG_PF_IN_CACHE)
				continue;
			count_remote(e, key, li->hit, true);
			if (!w)
				continue;
			ret = walk_key(w, key, li);
			if (ret)
				return ret;
		}
	return 0;
}

/*
 * The ring failed: stop using it. The requests in flight are the
 * module's to finish; their arrays, which it may still write, are left
 * allocated (leaked) rather than freed under it.
 */
static void r3_abandon(struct dfg_hub_engine *e)
{
	unsigned int i;

	for (i = 0; i < R3_INFLIGHT; i++) {
		struct r3_req *q = &e->r3q[i];

		if (!q->busy)
			continue;
		q->ids = NULL;
		q->locs = NULL;
		q->cap = 0;
		q->busy = false;
	}
	e->r3_busy = 0;
	map_clear(&e->r3_pend);
	io_uring_queue_exit(&e->ring);
	e->ring_up = false;
}

/*
 * Reap R3 completions: one at least if @wait (while any is in flight),
 * then every one that is there. Returns 0, -ENOMEM, or -EIO when the
 * ring failed (r3_abandon()).
 */
static int r3_reap_some(struct dfg_hub_engine *e, bool wait)
{
	struct io_uring_cqe *cqe;
	int ret = 0, r, res;
	struct r3_req *q;
	__u64 idx;

	while (e->r3_busy) {
		if (wait) {
			unsigned int was = e->prof.cur;

			if (was != PROF_OFF) {
				e->prof.r3_waits++;
				prof_to(e, PROF_R3WAIT);
			}
			r = io_uring_wait_cqe(&e->ring, &cqe);
			if (was != PROF_OFF)
				prof_to(e, was);
			if (r == -EINTR)
				continue;
		} else {
			r = io_uring_peek_cqe(&e->ring, &cqe);
			if (r == -EAGAIN)
				break;
		}
		if (r < 0) {
			r3_abandon(e);
			return -EIO;
		}
		idx = cqe->user_data - 1;
		res = cqe->res;
		io_uring_cqe_seen(&e->ring, cqe);
		if (idx >= R3_INFLIGHT || !e->r3q[idx].busy)
			continue;
		q = &e->r3q[idx];
		q->busy = false;
		e->r3_busy--;
		wait = false;
		r = r3_done(e, walk_of(e, q->gen), q->ids, q->locs, q->nr,
			    q->what, res);
		if (r && !ret)
			ret = r;
	}
	/* Nothing in flight: no key pending (the map kept small). */
	if (!e->r3_busy)
		map_clear(&e->r3_pend);
	return ret;
}

/* Wait for every R3 request in flight (teardown). */
static int r3_reap(struct dfg_hub_engine *e)
{
	int ret = 0, r;

	if (!e)
		return 0;
	while (e->r3_busy) {
		r = r3_reap_some(e, true);
		if (r && !ret)
			ret = r;
		if (r == -EIO)
			break;
	}
	return ret;
}

/* Is @key in a speculative request still in flight? */
static bool r3_pending(const struct dfg_hub_engine *e, uint64_t key)
{
	const uint32_t *v;
	unsigned int i;

	if (!e->r3_busy)
		return false;
	v = map_get(&e->r3_pend, key);
	if (!v)
		return false;
	for (i = 0; i < R3_INFLIGHT; i++)
		if (e->r3q[i].busy && e->r3q[i].seq == *v)
			return true;
	return false;
}

/*
 * Put @c IDs of one speculative request on the ring, its keys for walk
 * e->r3w (*@sent false: no ring).
 */
static int r3_submit(struct dfg_hub_engine *e, const uint64_t *ids,
		     size_t c, unsigned int what, bool *sent)
{
	struct io_uring_sqe *sqe;
	struct r3_req *q = NULL;
	unsigned int i;
	uint32_t *v;
	bool found;
	int ret;

	*sent = false;
	/* All in flight: the oldest to finish makes room. */
	if (e->r3_busy == R3_INFLIGHT) {
		ret = r3_reap_some(e, true);
		if (ret && ret != -EIO)
			return ret;
	}
	if (!e->ring_up)
		return 0;
	for (i = 0; i < R3_INFLIGHT && !q; i++)
		if (!e->r3q[i].busy)
			q = &e->r3q[i];
	if (q->cap < c) {
		uint64_t *ni = realloc(q->ids, c * sizeof(*ni));
		struct dfg_pf_loc *nl;

		if (!ni)
			return -ENOMEM;
		q->ids = ni;
		/* Entries for both bits of @what: room for two each. */
		nl = realloc(q->locs, 2 * c * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		q->locs = nl;
		q->cap = c;
	}
	memcpy(q->ids, ids, c * sizeof(*ids));
	/* As many SQEs as requests: one is free while a request is. */
	sqe = io_uring_get_sqe(&e->ring);
	if (!sqe) {
		r3_abandon(e);
		return 0;
	}
	dfg_prep_prefetch(sqe, dfg_fd(e->d), (const __u64 *)q->ids, q->locs,
			  (__u32)c, what, e->spec_flags);
	sqe->user_data = (__u64)(q - e->r3q) + 1;
	q->nr = (uint32_t)c;
	q->what = what;
	q->gen = e->r3w->gen;
	q->seq = ++e->seq_next;
	q->busy = true;
	e->r3_busy++;
	if (io_uring_submit(&e->ring) != 1) {
		r3_abandon(e);
		return 0;
	}
	*sent = true;
	for (i = 0; i < c; i++) {
		if (what & DFG_PF_NBRS) {
			v = map_slot(&e->r3_pend, kkey(ids[i], DFG_PF_NBRS),
				     &found);
			if (!v)
				return -ENOMEM;
			*v = q->seq;
		}
		if (what & DFG_PF_ATTRS) {
			v = map_slot(&e->r3_pend, kkey(ids[i], DFG_PF_ATTRS),
				     &found);
			if (!v)
				return -ENOMEM;
			*v = q->seq;
		}
	}
	return 0;
}

/*
 * R3's request for @n remote entries: on the ring, not waited for; or,
 * without a ring, waited for here.
 */
static int r3_send(struct dfg_hub_engine *e, const uint64_t *ids, size_t n,
		   unsigned int what)
{
	unsigned int was;
	size_t at, c;
	bool sent;
	int ret;

	for (at = 0; at < n; at += c) {
		c = n - at < DFG_PF_NR_MAX ? n - at : DFG_PF_NR_MAX;
		ret = r3_submit(e, ids + at, c, what, &sent);
		if (ret)
			return ret;
		if (sent)
			continue;
		e->locs.n = 0;
		ret = vec_reserve(&e->locs, 2 * c);
		if (ret)
			return ret;
		prof_pf(e, c);
		was = prof_to(e, PROF_PF);
		ret = hub_prefetch(e->d, (const __u64 *)ids + at,
				   (unsigned int)c, what, e->spec_flags,
				   e->locs.p);
		prof_to(e, was);
		ret = r3_done(e, e->r3w, ids + at, e->locs.p, c, what, ret);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Before a demand read of @n entries: R3's requests for them reaped
 * (only those: the walk ahead's others stay in flight).
 */
static int r3_before(struct dfg_hub_engine *e, const uint64_t *ids, size_t n,
		     unsigned int what)
{
	size_t i;
	int ret;

	for (i = 0; i < n && e->r3_busy; i++)
		while (r3_pending(e, kkey(ids[i], what))) {
			ret = r3_reap_some(e, true);
			if (ret == -ENOMEM)
				return ret;
			if (ret)
				return 0;
		}
	return 0;
}

/* A backend's entry @i of the request: to the sink at its slot. */
struct ext_put {
	struct dfg_hub_engine	*e;
	sink_fn			sink;
};

static int ext_put(void *ctx, uint32_t i, const void *p, uint32_t len)
{
	struct ext_put *x = ctx;

	x->e->sink_stable = false;
	return x->sink(x->e, VAT(&x->e->miss_slot, uint32_t, i), p, len);
}

/* Remote entries through a backend: every one a read, none cached. */
static int fetch_ext(struct dfg_hub_engine *e, unsigned int what,
		     sink_fn sink, bool r3)
{
	struct ext_put x = { e, sink };

	if (r3)
		return 0;	/* no cache to bring anything into */
	e->st.remote_calls++;
	e->st.remote += e->miss_ids.n;
	return e->ext->fetch(e->ext_arg, e->miss_ids.p, e->miss_ids.n, what,
			     ext_put, &x);
}

/*
 * Demand entries among miss_ids that R3 brought into the machine's cache
 * for this batch (in it, or ahead of it), its request reaped: copied from where its completion
 * said, no PREFETCH. What is left (not R3's, or its bytes reused since:
 * -ESTALE) stays in miss_ids and miss_slot for the module.
 */
static int from_r3(struct dfg_hub_engine *e, unsigned int what, sink_fn sink)
{
	uint64_t *ids = e->miss_ids.p;
	uint32_t *slot = e->miss_slot.p;
	struct r3_walk *w = e->wc;
	size_t i, left = 0;
	int ret;

	if (!w->locv.n)
		return 0;
	for (i = 0; i < e->miss_ids.n; i++) {
		uint64_t key = kkey(ids[i], what);
		const uint32_t *v = map_get(&w->keys, key);
		const struct dfg_pf_loc *l;

		ret = -ESTALE;
		if (v && *v != ~0U) {
			l = &VAT(&w->locv, struct dfg_pf_loc, *v);
			ret = tmp_room(e, l->len);
			if (!ret)
				ret = dfg_hub_cache_copy(e->hub, l, e->tmp);
			e->sink_stable = false;
			if (!ret)
				ret = sink(e, slot[i], e->tmp, l->len);
		}
		if (!ret) {
			count_remote(e, key, true, false);
			continue;
		}
		if (ret != -ESTALE)
			return ret;
		ids[left] = ids[i];
		slot[left++] = slot[i];
	}
	e->miss_ids.n = left;
	e->miss_slot.n = left;
	return 0;
}

/*
 * Remote entries of one fetch (miss_ids, miss_slot) from their owners:
 * PREFETCH in chunks and a copy out of the cache, or the owners' files.
 */
static int fetch_remote(struct dfg_hub_engine *e, unsigned int what,
			sink_fn sink, bool r3)
{
	const uint64_t *ids = e->miss_ids.p;
	const uint32_t *slot = e->miss_slot.p;
	size_t n = e->miss_ids.n, at, i;
	struct dfg_hub_ref ref;
	bool found;
	int ret;

	if (!n)
		return 0;
	if (e->ext)
		return fetch_ext(e, what, sink, r3);
	if (e->hub && r3) {
		e->st.remote_calls++;
		return r3_send(e, ids, n, what);
	}
	if (e->hub) {
		ret = r3_before(e, ids, n, what);
		if (!ret)
			ret = from_r3(e, what, sink);
		if (ret)
			return ret;
		n = e->miss_ids.n;
		if (!n)
			return 0;
	}
	e->st.remote_calls++;
	if (!e->hub) {
		for (i = 0; i < n; i++) {
			const struct hub_view *ov = owner_view(e, ids[i]);
			uint64_t key = kkey(ids[i], what);
			uint32_t *v;

			if (!ov || hub_view_ref(ov, ids[i], what, &ref))
				return -ERANGE;
			v = map_slot(&e->sim_cache, key, &found);
			if (!v)
				return -ENOMEM;
			count_remote(e, key, found, r3);
			if (r3) {
				ret = walk_key(e->r3w, key, NULL);
				if (ret)
					return ret;
				continue;
			}
			/* An owner's image: loaded for the engine's life. */
			e->sink_stable = true;
			ret = sink(e, slot[i], ref.data, ref.len);
			if (ret)
				return ret;
		}
		return 0;
	}
	for (at = 0; at < n; at += DFG_PF_NR_MAX) {
		size_t c = n - at < DFG_PF_NR_MAX ? n - at : DFG_PF_NR_MAX;
		struct dfg_pf_loc *l;
		int tries;

		e->locs.n = 0;
		ret = vec_reserve(&e->locs, c);
		if (ret)
			return ret;
		l = e->locs.p;
		for (tries = 0;; tries++) {
			unsigned int was;

			prof_pf(e, c);
			was = prof_to(e, PROF_PF);
			ret = dfg_hub_prefetch(e->d, (const __u64 *)ids + at,
					       (unsigned int)c, what, l);
			prof_to(e, was);
			if (ret == -EINVAL)
				return -ERANGE;
			if (ret < 0)
				return ret;
			/* ret counted the reads; the counts below use l[]. */
			ret = 0;
			for (i = 0; i < c && !r3; i++) {
				if (l[i].where != DFG_PF_IN_CACHE) {
					/* Own or replica after all. */
					ret = hub_view_ref(e->own, ids[at + i],
							   what, &ref);
					if (ret)
						return -EPROTO;
					e->sink_stable = true;
					ret = sink(e, slot[at + i], ref.data,
						   ref.len);
				} else {
					ret = tmp_room(e, l[i].len);
					if (!ret)
						ret = dfg_hub_cache_copy(e->hub,
									&l[i],
									e->tmp);
					e->sink_stable = false;
					if (!ret)
						ret = sink(e, slot[at + i],
							   e->tmp, l[i].len);
				}
				if (ret)
					break;
			}
			/* Bytes reused while copied: ask again (bounded). */
			if (ret != -ESTALE || tries == 3)
				break;
		}
		if (ret)
			return ret;
		for (i = 0; i < c; i++) {
			uint64_t key = kkey(ids[at + i], what);

			if (l[i].where != DFG_PF_IN_CACHE)
				continue;
			count_remote(e, key, l[i].hit, r3);
		}
	}
	return 0;
}

/*
 * Read @what of @n nodes: own, buffer, replica, else remote (one request
 * for all of them). Each entry goes to @sink as (index, bytes). @demand:
 * the pipeline's read (counted as local, replica, buffer hit), not a
 * rule's. A rule's own nodes are only touched (brought into the CPU's
 * cache): a buffer entry for bytes one row lookup away would cost more
 * than it saves; replica entries save the demand read its search. A
 * machine-local rule's (R1, R2, R4: the patent's memory 312 into buffer
 * 323) remote node is left to the demand read, which asks for it with
 * the rest of its hop in one request: read for the rule, it cost a round
 * trip per root (R4 under a replica budget: 20 a batch at R-MAT 13 where
 * the demand reads make 2) to save none. With @r3, only remote entries
 * are requested (into the cache) and nothing reaches the sink.
 */
static int fetch(struct dfg_hub_engine *e, const uint64_t *ids, size_t n,
		 unsigned int what, sink_fn sink, bool demand, bool r3)
{
	struct dfg_hub_ref ref;
	size_t i;
	int ret;

	e->miss_ids.n = 0;
	e->miss_slot.n = 0;
	if (r3)
		map_clear(&e->r3_seen);
	for (i = 0; i < n; i++) {
		const struct pbuf_ent *pe;
		uint32_t s = (uint32_t)i;

		if (e->id_end && ids[i] >= e->id_end)
			return -ERANGE;
		if (hub_view_own(e->own, ids[i])) {
			if (r3)
				continue;
			if (hub_view_ref(e->own, ids[i], what, &ref))
				return -EPROTO;
			if (!demand) {
				touch(ref.data, ref.len);
				continue;
			}
			e->st.local++;
			e->sink_stable = true;
			ret = sink(e, s, ref.data, ref.len);
			if (ret)
				return ret;
			continue;
		}
		if (!r3) {
			pe = pbuf_get(e, kkey(ids[i], what));
			if (pe) {
				e->st.buf_hits += demand;
				e->sink_stable = pe->ref;
				ret = sink(e, s, pe->data, pe->len);
				if (ret)
					return ret;
				continue;
			}
		}
		if (!hub_view_ref(e->own, ids[i], what, &ref)) {
			if (r3)
				continue;
			e->st.replica += demand;
			e->sink_stable = true;
			ret = sink(e, s, ref.data, ref.len);
			if (ret)
				return ret;
			continue;
		}
		if (!demand && !r3)
			continue;
		/* R3 asks once: not what it brought or asks for already. */
		if (r3) {
			uint64_t key = kkey(ids[i], what);
			bool found;

			if (map_get(&e->r3w->keys, key) ||
			    r3_pending(e, key))
				continue;
			if (!map_slot(&e->r3_seen, key, &found))
				return -ENOMEM;
			if (found)
				continue;
		}
		ret = vec_push(&e->miss_ids, &ids[i], 1);
		if (!ret)
			ret = vec_push(&e->miss_slot, &s, 1);
		if (ret)
			return ret;
	}
	return fetch_remote(e, what, sink, r3);
}

/* ---- sinks ---- */

/* Neighbour lists into e->nb, for nbref[sink_base + i]. */
static int sink_nbrs(struct dfg_hub_engine *e, uint32_t i, const void *p,
		     uint32_t len)
{
	struct nbref *r = &VAT(&e->nbref, struct nbref, e->sink_base + i);

	r->count = len / 8;
	if (e->sink_stable) {
		/* Where it is: no copy of a hub's long list. */
		r->ptr = p;
		return 0;
	}
	r->ptr = NULL;
	r->start = e->nb.n;
	return vec_push(&e->nb, p, len / 8);
}

/* Attributes into the batch buffer, row i. */
static int sink_attrs(struct dfg_hub_engine *e, uint32_t i, const void *p,
		      uint32_t len)
{
	if (len != e->own->h->feat_bytes)
		return -EPROTO;
	memcpy(e->sink_dst + (size_t)i * len, p, len);
	return 0;
}

/* Into the prefetch buffer: sink_ids[i] is the node. */
static int sink_pbuf(struct dfg_hub_engine *e, uint32_t i, const void *p,
		     uint32_t len)
{
	return pbuf_put(e, kkey(e->sink_ids[i], e->sink_what), p, len,
			e->sink_stable);
}

/* Rule reads into the buffer: @what of @n nodes (R1, R2, R4). */
static int to_pbuf(struct dfg_hub_engine *e, const uint64_t *ids, size_t n,
		   unsigned int what)
{
	e->sink_ids = ids;
	e->sink_what = what;
	return fetch(e, ids, n, what, sink_pbuf, false, false);
}

/* ---- neighbour acquisition ---- */

/*
 * Make sure the neighbour lists of @n nodes are in e->nb (one request for
 * those not read yet in this batch).
 */
static int acquire(struct dfg_hub_engine *e, const uint64_t *ids, size_t n)
{
	size_t i, base = e->nbref.n;
	struct nbref z = { 0 };
	uint32_t *v;
	bool found;
	int ret;

	e->ids.n = 0;
	for (i = 0; i < n; i++) {
		v = map_slot(&e->nb_idx, ids[i], &found);
		if (!v)
			return -ENOMEM;
		if (found)
			continue;
		*v = (uint32_t)e->nbref.n;
		ret = vec_push(&e->nbref, &z, 1);
		if (!ret)
			ret = vec_push(&e->ids, &ids[i], 1);
		if (ret)
			return ret;
	}
	e->sink_base = base;
	/* e->ids is reused by nothing fetch() calls. */
	return fetch(e, e->ids.p, e->ids.n, DFG_PF_NBRS, sink_nbrs, true,
		     false);
}

/* The neighbours of @id (acquired): count, and a pointer into e->nb. */
static const uint64_t *nbrs_of(const struct dfg_hub_engine *e, uint64_t id,
			       uint32_t *count)
{
	const uint32_t *v = map_get(&e->nb_idx, id);
	const struct nbref *r;

	if (!v) {
		*count = 0;
		return NULL;
	}
	r = &VAT(&e->nbref, struct nbref, *v);
	*count = r->count;
	return r->ptr ? r->ptr : &VAT(&e->nb, uint64_t, r->start);
}

/* ---- sampling ---- */

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static bool sorted_has(const uint64_t *a, uint32_t n, uint64_t id)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (a[mid] == id)
			return true;
		if (a[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* A number in (0, 1) from the slot's key and a candidate. */
static double unit(const struct dfg_hub_engine *e, uint64_t batch,
		   unsigned int hop, uint64_t slot, uint64_t id)
{
	uint64_t x = mix64(e->o.seed ^ 0x6a09e667f3bcc909ULL);

	x = mix64(x ^ batch);
	x = mix64(x ^ ((uint64_t)hop << 56 | slot));
	x = mix64(x ^ id);
	return ((double)(x >> 11) + 0.5) * 0x1p-53;
}

/* A number in [0, @n) from the slot's key and the draw @j (@n <= 2^32). */
static uint32_t draw(const struct dfg_hub_engine *e, uint64_t batch,
		     unsigned int hop, uint64_t slot, uint32_t j, uint64_t n)
{
	uint64_t x = mix64(e->o.seed ^ 0xbb67ae8584caa73bULL);

	x = mix64(x ^ batch);
	x = mix64(x ^ ((uint64_t)hop << 56 | slot));
	x = mix64(x ^ j);
	/* The high 32 bits scaled to [0, n): no division, bias < n / 2^32. */
	return (uint32_t)(((x >> 32) * n) >> 32);
}

/* Picked indices up to this many are kept in an array, more in a map. */
#define PICK_SMALL	64

/*
 * Uniform, without replacement: @k of the @deg positions of @nb by
 * Floyd's algorithm, k draws whatever @deg is (a hub's list of 100 000
 * costs what a list of 11 does). Appends the picks in draw order.
 */
static int sample_uniform(struct dfg_hub_engine *e, uint64_t batch,
			  unsigned int hop, uint64_t slot, const uint64_t *nb,
			  uint32_t deg, uint32_t k, struct vec *out)
{
	uint32_t small[PICK_SMALL], j, t, i, n = 0, *v;
	bool found;
	int ret;

	ret = vec_reserve(out, k);
	if (ret)
		return ret;
	if (k > PICK_SMALL)
		map_clear(&e->picked);
	for (j = deg - k; j < deg; j++) {
		t = draw(e, batch, hop, slot, j, (uint64_t)j + 1);
		if (k <= PICK_SMALL) {
			for (i = 0; i < n && small[i] != t; i++)
				;
			/* Taken: j itself, which no earlier draw could be. */
			if (i < n)
				t = j;
			small[n++] = t;
		} else {
			v = map_slot(&e->picked, t, &found);
			if (!v)
				return -ENOMEM;
			if (found) {
				t = j;
				if (!map_slot(&e->picked, t, &found))
					return -ENOMEM;
			}
		}
		VAT(out, uint64_t, out->n++) = nb[t];
	}
	return 0;
}

/* True if @a ranks after @b (a smaller key, or a larger ID on a tie). */
static bool cand_after(const struct cand *a, const struct cand *b)
{
	return cand_cmp(a, b) > 0;
}

/* The heap of the k best so far: c[0] the one ranking last. */
static void heap_down(struct cand *c, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, w = i;
		struct cand t;

		if (l < n && cand_after(&c[l], &c[w]))
			w = l;
		if (r < n && cand_after(&c[r], &c[w]))
			w = r;
		if (w == i)
			return;
		t = c[i];
		c[i] = c[w];
		c[w] = t;
		i = w;
	}
}

static void heap_up(struct cand *c, uint32_t i)
{
	while (i) {
		uint32_t p = (i - 1) / 2;
		struct cand t;

		if (!cand_after(&c[i], &c[p]))
			return;
		t = c[i];
		c[i] = c[p];
		c[p] = t;
		i = p;
	}
}

/*
 * Weighted by hop distance: the @k with the largest keys log(u) / w
 * (Efraimidis and Spirakis: without replacement, each with probability
 * in proportion to its weight), w = decay^(d - 1) for hop distance d
 * from @root (0 the root, 1 in @rnb, sorted, else @hop + 1). A key per
 * candidate, the k best kept in a heap: O(deg log k), no allocation of
 * deg. Appends the picks best first.
 */
static int sample_weighted(struct dfg_hub_engine *e, uint64_t batch,
			   unsigned int hop, uint64_t slot, uint64_t root,
			   const uint64_t *rnb, uint32_t rdeg,
			   const uint64_t *nb, uint32_t deg, uint32_t k,
			   struct vec *out)
{
	struct cand *c, x;
	uint32_t i, n = 0;
	int ret;

	e->cand.n = 0;
	ret = vec_reserve(&e->cand, k);
	if (!ret)
		ret = vec_reserve(out, k);
	if (ret)
		return ret;
	c = e->cand.p;
	for (i = 0; i < deg; i++) {
		double u = unit(e, batch, hop, slot, nb[i]);
		unsigned int d = nb[i] == root ? 0 :
				 sorted_has(rnb, rdeg, nb[i]) ? 1 : hop + 1;

		x.key = log(u) / pow(e->o.decay, (double)d - 1);
		x.id = nb[i];
		if (n < k) {
			c[n] = x;
			heap_up(c, n++);
		} else if (cand_after(&c[0], &x)) {
			c[0] = x;
			heap_down(c, n, 0);
		}
	}
	qsort(c, n, sizeof(*c), cand_cmp);
	for (i = 0; i < n; i++)
		VAT(out, uint64_t, out->n++) = c[i].id;
	return 0;
}

/*
 * Sample the neighbours @nb (@deg of them) of the node in frontier slot
 * @slot of hop @hop, whose root is @root (neighbours @rnb, @rdeg, sorted):
 * all of them when the fan-out allows, else the fan-out's worth, uniform
 * or weighted by hop distance. Every choice is a hash of the slot and
 * the list (which is the same wherever it was read), so a rule sampling
 * a slot ahead of the pipeline picks what the pipeline will. Appends to
 * @out.
 */
static int sample(struct dfg_hub_engine *e, uint64_t batch, unsigned int hop,
		  uint64_t slot, uint64_t root, const uint64_t *rnb,
		  uint32_t rdeg, const uint64_t *nb, uint32_t deg,
		  struct vec *out)
{
	uint32_t k = e->o.fanout[hop];

	if (!k || deg <= k)
		return vec_push(out, nb, deg);
	if (e->o.flags & DFG_HUB_F_WEIGHTED)
		return sample_weighted(e, batch, hop, slot, root, rnb, rdeg,
				       nb, deg, k, out);
	return sample_uniform(e, batch, hop, slot, nb, deg, k, out);
}

/* ---- rules ---- */

static bool own_hub(const struct dfg_hub_engine *e, uint64_t id)
{
	return hub_view_is_hub(e->own, id);
}

/*
 * R2's puts: of @n nodes, those in the replica into the buffer (their
 * attributes, which the batch reads, and their lists if a later hop
 * expands them), each found in the replica once.
 */
static int r2_put(struct dfg_hub_engine *e, const uint64_t *ids, size_t n)
{
	struct dfg_hub_ref ref;
	size_t i;
	int64_t r;
	int ret;

	for (i = 0; i < n; i++) {
		if (hub_view_own(e->own, ids[i]))
			continue;
		r = hub_view_rep(e->own, ids[i]);
		if (r < 0)
			continue;
		e->st.r2++;
		hub_view_rep_ref(e->own, (uint64_t)r, DFG_PF_ATTRS, &ref);
		ret = pbuf_put(e, kkey(ids[i], DFG_PF_ATTRS), ref.data,
			       ref.len, true);
		if (!ret && e->o.hops > 2) {
			hub_view_rep_ref(e->own, (uint64_t)r, DFG_PF_NBRS,
					 &ref);
			ret = pbuf_put(e, kkey(ids[i], DFG_PF_NBRS), ref.data,
				       ref.len, true);
		}
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * R2 with no sample of own hub @h known (at root selection, para. 76/79,
 * or with one hop): every remote hub next to @h held in the replica.
 * Claims 3/8's R2, an own hub sampled at hop 0, is r2_put() of what hop 1
 * samples from it (hop_run()): what the batch reads, not every remote
 * neighbour of a hub that may have tens of thousands (R-MAT 18: 150 000
 * entries a batch for a buffer of 4096, all evicted unread), and drawn
 * once, not once for the rule and again for the hop.
 */
static int rule_r2(struct dfg_hub_engine *e, uint64_t h)
{
	struct dfg_hub_ref ref;

	if (hub_view_ref(e->own, h, DFG_PF_NBRS, &ref))
		return 0;
	return r2_put(e, ref.data, ref.len / 8);
}

/*
 * Rules of root @r (frontier slot @ri) once hop 0 has sampled its
 * neighbours (@pick, @np of them; the sample R4 and R1 would compute is
 * this one, so it is not drawn twice): if @r is an own node next to an
 * own hub, R1 the own hubs among them (lists and attributes, bounded like
 * R2 to what the batch reads: a root of R-MAT 18 has up to thousands of
 * hubs next to it, of which hop 0 samples ten), R2's para. 76 variant
 * every remote hub next to an own hub of @r, R4 the attributes of them
 * all.
 */
static int rules_root(struct dfg_hub_engine *e, uint64_t r,
		      const uint64_t *pick, size_t np)
{
	bool on_root = (e->o.rules & DFG_HUB_R2) &&
		       (e->o.flags & DFG_HUB_F_R2_ON_ROOT);
	struct vec hubs = VEC(uint64_t);
	const uint64_t *nb;
	uint32_t n, i;
	bool near = false;
	int ret = 0;

	if (!hub_view_own(e->own, r))
		return 0;
	nb = nbrs_of(e, r, &n);
	for (i = 0; i < n && !ret && (!near || on_root); i++) {
		if (!own_hub(e, nb[i]))
			continue;
		near = true;
		if (on_root)
			ret = vec_push(&hubs, &nb[i], 1);
	}
	if (ret || !near)
		goto out;
	for (i = 0; i < hubs.n && !ret; i++)
		ret = rule_r2(e, VAT(&hubs, uint64_t, i));
	if (!ret && (e->o.rules & DFG_HUB_R1)) {
		hubs.n = 0;
		for (i = 0; i < np && !ret; i++)
			if (own_hub(e, pick[i]))
				ret = vec_push(&hubs, &pick[i], 1);
		e->st.r1 += hubs.n;
		if (!ret)
			ret = to_pbuf(e, hubs.p, hubs.n, DFG_PF_NBRS);
		if (!ret)
			ret = to_pbuf(e, hubs.p, hubs.n, DFG_PF_ATTRS);
	}
	if (!ret && (e->o.rules & DFG_HUB_R4)) {
		e->st.r4 += np;
		ret = to_pbuf(e, pick, np, DFG_PF_ATTRS);
	}
out:
	free(hubs.p);
	return ret;
}

/*
 * R3 after hop @hop's sampling: remote hubs among the new frontier
 * (e->next, parents in pairs[hop]) whose neighbours the next hop
 * expands. Their lists are acquired (from the owner, or the replica), the
 * next hop's sample of each computed, and those nodes' attributes (and
 * lists, if expanded later) brought into the machine's cache.
 */
static int rule_r3(struct dfg_hub_engine *e, uint64_t batch, unsigned int hop)
{
	const uint64_t *pairs = e->pairs[hop].p, *front = e->front.p;
	struct vec hubs = VEC(uint64_t), slots = VEC(uint64_t);
	struct vec got = VEC(uint64_t);
	const struct vec *fv = &e->wc->fired[hop];
	/* Fired ahead (the batch was announced): a FIRE_* byte a slot. */
	const uint8_t *fired = e->wc->ahead && fv->n == e->next.n ?
			       fv->p : NULL;
	size_t j;
	int ret = 0;

	for (j = 0; j < e->next.n && !ret; j++) {
		uint64_t x = VAT(&e->next, uint64_t, j);
		uint64_t parent = front[pairs[j] & 0xffffffffU];

		if (hub_view_own(e->own, x))
			continue;
		if (!hub_view_own(e->own, parent) &&
		    hub_view_rep(e->own, x) < 0)
			continue;
		/* Done ahead; or fired ahead, counted there. */
		if (fired && fired[j] == FIRE_DONE)
			continue;
		if (!fired || fired[j] != FIRE_WAIT)
			e->st.r3++;
		ret = vec_push(&hubs, &x, 1);
		if (!ret)
			ret = vec_push(&slots, &(uint64_t){ j }, 1);
	}
	if (ret || !hubs.n)
		goto out;
	e->r3w = e->wc;
	ret = acquire(e, hubs.p, hubs.n);
	for (j = 0; j < hubs.n && !ret; j++) {
		uint64_t x = VAT(&hubs, uint64_t, j);
		uint64_t slot = VAT(&slots, uint64_t, j);
		uint64_t rid = e->roots[VAT(&e->nroot, uint32_t, slot)];
		const uint64_t *nb, *rnb;
		uint32_t n, rn;

		/* The slot's root, for hop-distance weights. */
		rnb = nbrs_of(e, rid, &rn);
		nb = nbrs_of(e, x, &n);
		ret = sample(e, batch, hop + 1, slot, rid, rnb, rn, nb, n,
			     &got);
	}
	if (ret || !got.n)
		goto out;
	ret = fetch(e, got.p, got.n, DFG_PF_ATTRS, NULL, false, true);
	if (!ret && hop + 2 < e->o.hops)
		ret = fetch(e, got.p, got.n, DFG_PF_NBRS, NULL, false, true);
out:
	free(hubs.p);
	free(slots.p);
	free(got.p);
	return ret;
}

/* ---- R3 ahead: the walk of an announced batch ---- */

/*
 * Is @id's neighbour list at hand for walk @w? 1: on this machine (own,
 * replica), or brought by its requests (copied out of the cache into
 * w->nb, or over files the owner's image); 0: asked for, in flight;
 * -ENOENT: neither (never asked, gated, failed, or reused since); or
 * -errno.
 */
static int walk_known(struct dfg_hub_engine *e, struct r3_walk *w,
		      uint64_t id)
{
	uint64_t key = kkey(id, DFG_PF_NBRS);
	const struct dfg_pf_loc *l;
	struct dfg_hub_ref ref;
	struct nbref r = { 0 };
	const uint32_t *v;
	uint32_t *s;
	bool found;
	int ret;

	if (!hub_view_ref(e->own, id, DFG_PF_NBRS, &ref) ||
	    map_get(&w->lists, id))
		return 1;
	v = map_get(&w->keys, key);
	if (!v)
		return r3_pending(e, key) ? 0 : -ENOENT;
	if (*v == ~0U) {
		/* Over files: the owner's image, loaded for the engine's life. */
		const struct hub_view *ov = owner_view(e, id);

		if (!ov || hub_view_ref(ov, id, DFG_PF_NBRS, &ref))
			return -ENOENT;
		r.ptr = ref.data;
		r.count = ref.len / 8;
	} else {
		l = &VAT(&w->locv, struct dfg_pf_loc, *v);
		ret = vec_reserve(&w->nb, l->len / 8 + 1);
		if (ret)
			return ret;
		ret = dfg_hub_cache_copy(e->hub, l,
					 &VAT(&w->nb, uint64_t, w->nb.n));
		if (ret)
			return ret == -ENOMEM ? ret : -ENOENT;
		r.start = w->nb.n;
		r.count = l->len / 8;
		w->nb.n += r.count;
	}
	s = map_slot(&w->lists, id, &found);
	if (!s || vec_push(&w->lref, &r, 1))
		return -ENOMEM;
	*s = (uint32_t)(w->lref.n - 1);
	return 1;
}

/* The list of @id, which walk_known() found at hand. */
static const uint64_t *walk_list(const struct dfg_hub_engine *e,
				 const struct r3_walk *w, uint64_t id,
				 uint32_t *count)
{
	const struct nbref *r;
	struct dfg_hub_ref ref;
	const uint32_t *v;

	if (!hub_view_ref(e->own, id, DFG_PF_NBRS, &ref)) {
		*count = ref.len / 8;
		return ref.data;
	}
	v = map_get(&w->lists, id);
	if (!v) {
		*count = 0;
		return NULL;
	}
	r = &VAT(&w->lref, struct nbref, *v);
	*count = r->count;
	return r->ptr ? r->ptr : &VAT(&w->nb, uint64_t, r->start);
}

/*
 * Walk @w's requests: the lists of w->nbr and w->ask, the attributes of
 * w->att and w->ask, speculative, not waited for (fetch() leaves out
 * what is on this machine, what was asked already, and repeats).
 */
static int walk_send(struct dfg_hub_engine *e, struct r3_walk *w)
{
	struct r3_walk *keep = e->r3w;
	int ret;

	ret = vec_push(&w->nbr, w->ask.p, w->ask.n);
	if (!ret)
		ret = vec_push(&w->att, w->ask.p, w->ask.n);
	e->r3w = w;
	if (!ret && w->nbr.n)
		ret = fetch(e, w->nbr.p, w->nbr.n, DFG_PF_NBRS, NULL, false,
			    true);
	if (!ret && w->att.n)
		ret = fetch(e, w->att.p, w->att.n, DFG_PF_ATTRS, NULL, false,
			    true);
	e->r3w = keep;
	w->nbr.n = 0;
	w->att.n = 0;
	w->ask.n = 0;
	return ret;
}

/*
 * Walk @w drew @n IDs at @p for slot @slot of hop @hop's frontier: kept
 * for its batch (struct r3_walk.hs; walk_form() made room for the slot).
 */
static int walk_keep(struct r3_walk *w, unsigned int hop, size_t slot,
		     const uint64_t *p, size_t n)
{
	struct vec *hs = &w->hs[hop];
	uint64_t at = hs->n;
	int ret = vec_push(hs, p, n);

	if (!ret)
		VAT(&w->hso[hop], uint64_t, slot) = at << 32 | n;
	return ret;
}

/*
 * Hop w->hop's sample of its frontier, drawn as the pipeline will draw
 * it, once the lists of the frontier and of its roots are at hand (the
 * missing ones asked of their owners first, once: one that does not come
 * stops the walk), and R3's slots among it (a remote node whose parent
 * is own, or which is in the replica: where rule_r3() fires) fired and
 * counted. Returns 1 formed, 0 not yet or stopped, or -errno.
 */
static int walk_form(struct dfg_hub_engine *e, struct r3_walk *w)
{
	const uint64_t *roots = w->roots.p, *front = w->front.p;
	const uint32_t *froot = w->froot.p;
	struct vec *fv = &w->fired[w->hop];
	struct vec *hso = &w->hso[w->hop], *nso = &w->hso[w->hop + 1];
	bool wait = false;
	uint8_t *fired;
	unsigned int k;
	size_t s, c;
	int ret;

	for (s = 0; s < w->front.n; s++)
		for (k = 0; k < 2; k++) {
			uint64_t id = k ? roots[froot[s]] : front[s];

			ret = walk_known(e, w, id);
			if (ret == 0) {
				wait = true;
			} else if (ret == -ENOENT) {
				if (w->asked) {
					w->on = false;
					return 0;
				}
				ret = vec_push(&w->ask, &id, 1);
				if (ret)
					return ret;
			} else if (ret < 0) {
				return ret;
			}
		}
	if (w->ask.n) {
		w->asked = true;
		return walk_send(e, w);
	}
	if (wait)
		return 0;
	w->next.n = 0;
	w->nroot.n = 0;
	w->npar.n = 0;
	w->hs[w->hop].n = 0;
	hso->n = 0;
	ret = vec_reserve(hso, w->front.n);
	if (ret)
		return ret;
	for (s = 0; s < w->front.n; s++) {
		uint32_t ri = froot[s], n, rn, ps = (uint32_t)s;
		const uint64_t *nb = walk_list(e, w, front[s], &n);
		const uint64_t *rnb = walk_list(e, w, roots[ri], &rn);
		size_t before = w->next.n;

		ret = sample(e, w->batch, w->hop, s, roots[ri], rnb, rn, nb, n,
			     &w->next);
		/* @next and hs[hop] alike: the same start. */
		VAT(hso, uint64_t, hso->n++) = (uint64_t)before << 32 |
					       (w->next.n - before);
		for (c = before; c < w->next.n && !ret; c++) {
			/* The batch will fail (-ERANGE): nothing to bring. */
			if (e->id_end &&
			    VAT(&w->next, uint64_t, c) >= e->id_end) {
				w->on = false;
				return 0;
			}
			ret = vec_push(&w->nroot, &ri, 1);
			if (!ret)
				ret = vec_push(&w->npar, &ps, 1);
		}
		if (ret)
			return ret;
	}
	fv->n = 0;
	w->done.n = 0;
	w->hs[w->hop + 1].n = 0;
	nso->n = 0;
	ret = vec_push(&w->hs[w->hop], w->next.p, w->next.n);
	if (!ret)
		ret = vec_reserve(fv, w->next.n);
	if (!ret)
		ret = vec_reserve(&w->done, w->next.n);
	if (!ret)
		ret = vec_reserve(nso, w->next.n);
	if (ret)
		return ret;
	/* Each slot's next sample, as walk_slots() draws it. */
	for (c = 0; c < w->next.n; c++)
		VAT(nso, uint64_t, c) = HS_NONE;
	nso->n = w->next.n;
	fired = fv->p;
	memset(w->done.p, SLOT_TODO, w->next.n);
	for (c = 0; c < w->next.n; c++) {
		uint64_t x = VAT(&w->next, uint64_t, c);
		uint64_t parent = front[VAT(&w->npar, uint32_t, c)];

		fired[c] = FIRE_NONE;
		if (hub_view_own(e->own, x) ||
		    (!hub_view_own(e->own, parent) &&
		     hub_view_rep(e->own, x) < 0))
			continue;
		fired[c] = FIRE_WAIT;
		e->st.r3++;
	}
	fv->n = w->next.n;
	w->done.n = w->next.n;
	w->formed = true;
	w->asked = false;
	return 1;
}

/*
 * The next hop's sample of every slot of w->next whose list is at hand,
 * and what it picks asked of the owners (attributes; lists too if a
 * later hop expands them); a slot whose list is not here is asked for
 * (list and attributes: the batch reads both), once, and left to the
 * batch if it does not come. Returns 1 when no slot waits, 0 while some
 * do, or -errno.
 */
static int walk_slots(struct dfg_hub_engine *e, struct r3_walk *w)
{
	unsigned int hop = w->hop + 1;
	const uint64_t *roots = w->roots.p;
	uint8_t *done = w->done.p, *fired = w->fired[w->hop].p;
	bool wait = false;
	size_t j, before;
	int ret;

	for (j = 0; j < w->next.n; j++) {
		uint64_t x = VAT(&w->next, uint64_t, j);
		uint32_t ri = VAT(&w->nroot, uint32_t, j), n, rn;
		const uint64_t *nb, *rnb;

		if (done[j] == SLOT_SAMPLED || done[j] == SLOT_LEFT)
			continue;
		ret = walk_known(e, w, x);
		if (ret == 0) {
			wait = true;
			continue;
		}
		if (ret == -ENOENT) {
			if (done[j] == SLOT_ASKED) {
				done[j] = SLOT_LEFT;
				continue;
			}
			done[j] = SLOT_ASKED;
			wait = true;
			ret = vec_push(&w->ask, &x, 1);
			if (ret)
				return ret;
			continue;
		}
		if (ret < 0)
			return ret;
		nb = walk_list(e, w, x, &n);
		rnb = walk_list(e, w, roots[ri], &rn);
		before = w->att.n;
		ret = sample(e, w->batch, hop, j, roots[ri], rnb, rn, nb, n,
			     &w->att);
		if (!ret)
			ret = walk_keep(w, hop, j, &VAT(&w->att, uint64_t,
							before),
					w->att.n - before);
		if (!ret && hop + 1 < e->o.hops)
			ret = vec_push(&w->nbr, &VAT(&w->att, uint64_t, before),
				       w->att.n - before);
		if (ret)
			return ret;
		done[j] = SLOT_SAMPLED;
		if (fired[j] == FIRE_WAIT)
			fired[j] = FIRE_DONE;
	}
	ret = walk_send(e, w);
	if (ret)
		return ret;
	return !wait;
}

/*
 * Walk @w on as far as what is at hand allows: hop by hop, each hop's
 * frontier sampled, then each of its slots' next sample. Returns 0 (at
 * the end, stopped, or waiting for a request) or -ENOMEM; any other
 * failure stops the walk, which changes no batch.
 */
static int walk_step(struct dfg_hub_engine *e, struct r3_walk *w)
{
	int ret = 0;

	/* The ring failed: the walk would wait for every request. */
	if (e->hub && !e->ring_up)
		w->on = false;
	while (w->on && w->hop + 1 < e->o.hops) {
		if (!w->formed) {
			ret = walk_form(e, w);
			if (ret <= 0)
				break;
		}
		ret = walk_slots(e, w);
		if (ret <= 0)
			break;
		/* This hop's sample is the next hop's frontier. */
		vec_swap(&w->front, &w->next);
		vec_swap(&w->froot, &w->nroot);
		w->hop++;
		w->formed = false;
		ret = 0;
	}
	if (w->hop + 1 >= e->o.hops)
		w->on = false;
	if (ret < 0 && ret != -ENOMEM) {
		w->on = false;
		ret = 0;
	}
	return ret < 0 ? ret : 0;
}

/*
 * Between the batch's steps: R3's completions that are there taken, and
 * the announced batch's walk taken on with what they brought.
 */
static int walk_pump(struct dfg_hub_engine *e)
{
	unsigned int was = prof_to(e, PROF_WALK);
	int ret;

	ret = r3_reap_some(e, false);
	if (ret != -ENOMEM && e->wa->valid && e->wa->on)
		ret = walk_step(e, e->wa);
	else if (ret != -ENOMEM)
		ret = 0;
	prof_to(e, was);
	return ret;
}

/*
 * At the start of batch @batch: its walk, if it was announced with these
 * roots (one last step, then the batch goes on from what it did), else a
 * fresh one (R3 in the batch only).
 */
static int walk_begin(struct dfg_hub_engine *e, uint64_t batch,
		      const __u64 *roots, unsigned int nroots)
{
	struct r3_walk *w = e->wa;
	int ret;

	prof_to(e, PROF_WALK);

	ret = r3_reap_some(e, false);
	if (ret == -ENOMEM)
		return ret;
	if (w->valid && w->batch == batch) {
		e->wa = e->wc;
		e->wc = w;
		e->wa->valid = false;
	}
	w = e->wc;
	e->r3w = w;
	if (w->valid && w->ahead && w->batch == batch &&
	    w->roots.n == nroots &&
	    !memcmp(w->roots.p, roots, (size_t)nroots * 8)) {
		ret = walk_step(e, w);
		w->on = false;
		if (ret)
			return ret;
	} else {
		walk_reset(e, w, batch);
	}
	return walk_pump(e);
}

static int ahead(struct dfg_hub_engine *e, __u64 batch, const __u64 *roots,
		 unsigned int nroots)
{
	struct r3_walk *w;
	unsigned int i;
	int ret;

	/* Nothing to walk for: no R3, no cache, no ring to leave it on. */
	if (!(e->o.rules & DFG_HUB_R3) || e->o.hops < 2 || e->ext ||
	    (e->hub && !e->ring_up))
		return 0;
	ret = r3_reap_some(e, false);
	if (ret == -ENOMEM)
		return ret;
	/* An announced batch not sampled yet is the one to sample next. */
	if (e->wa->valid) {
		w = e->wc;
		e->wc = e->wa;
		e->wa = w;
		e->r3w = e->wc;
	}
	w = e->wa;
	walk_reset(e, w, batch);
	w->ahead = true;
	w->on = true;
	ret = vec_push(&w->roots, roots, nroots);
	if (!ret)
		ret = vec_push(&w->front, roots, nroots);
	for (i = 0; i < nroots && !ret; i++)
		ret = vec_push(&w->froot, &i, 1);
	if (ret) {
		w->valid = false;
		return ret;
	}
	if (e->wc->valid && e->wc->on) {
		ret = walk_step(e, e->wc);
		if (ret)
			return ret;
	}
	return walk_step(e, w);
}

int dfg_hub_ahead(struct dfg_hub_engine *e, __u64 batch, const __u64 *roots,
		  unsigned int nroots)
{
	unsigned int was;
	int ret;

	if (!e || !roots || !nroots)
		return -EINVAL;
	was = prof_to(e, PROF_WALK);
	ret = ahead(e, batch, roots, nroots);
	prof_to(e, was);
	return ret;
}

/* ---- the pipeline ---- */

/* Index of @id in the batch's nodes, added if new. */
static int node_index(struct dfg_hub_engine *e, uint64_t id, uint32_t *idx)
{
	bool found;
	uint32_t *v = map_slot(&e->node_idx, id, &found);

	if (!v)
		return -ENOMEM;
	if (!found) {
		if (e->nodes.n >= UINT32_MAX)
			return -E2BIG;
		*v = (uint32_t)e->nodes.n;
		if (vec_push(&e->nodes, &id, 1))
			return -ENOMEM;
	}
	*idx = *v;
	return 0;
}

static void batch_reset(struct dfg_hub_engine *e)
{
	unsigned int h;

	e->nb.n = 0;
	e->nbref.n = 0;
	e->nodes.n = 0;
	map_clear(&e->nb_idx);
	map_clear(&e->node_idx);
	for (h = 0; h < DFG_HUB_HOPS_MAX; h++)
		e->pairs[h].n = 0;
	e->front.n = 0;
	e->froot.n = 0;
}

static size_t al8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

/* Hop @h: acquire the frontier's lists, sample each slot, run rules. */
static int hop_run(struct dfg_hub_engine *e, uint64_t batch, unsigned int h)
{
	const struct r3_walk *w = e->wc;
	/* The walk ahead's draws of this hop, if it walked this batch. */
	const uint64_t *hso = w->ahead && w->batch == batch &&
			      w->hso[h].n == e->front.n ? w->hso[h].p : NULL;
	size_t s;
	int ret;

	prof_to(e, PROF_ACQUIRE);
	ret = acquire(e, e->front.p, e->front.n);
	if (ret)
		return ret;
	prof_to(e, PROF_SAMPLE);
	e->next.n = 0;
	e->nroot.n = 0;
	for (s = 0; s < e->front.n; s++) {
		uint64_t x = VAT(&e->front, uint64_t, s);
		uint32_t ri = VAT(&e->froot, uint32_t, s), n, rn, idx;
		const uint64_t *nb = nbrs_of(e, x, &n);
		const uint64_t *rnb = nbrs_of(e, e->roots[ri], &rn);
		size_t before = e->next.n, c;

		e->slots++;
		if (hso && hso[s] != HS_NONE) {
			e->slots_ahead++;
			ret = vec_push(&e->next, &VAT(&w->hs[h], uint64_t,
						      hso[s] >> 32),
				       (uint32_t)hso[s]);
		} else {
			ret = sample(e, batch, h, s, e->roots[ri], rnb, rn,
				     nb, n, &e->next);
		}
		for (c = before; c < e->next.n && !ret; c++) {
			uint64_t y = VAT(&e->next, uint64_t, c);

			if (e->id_end && y >= e->id_end)
				return -ERANGE;
			ret = node_index(e, y, &idx);
			if (!ret)
				ret = vec_push(&e->pairs[h],
					       &(uint64_t){ (uint64_t)idx << 32 |
							    (uint32_t)s }, 1);
			if (!ret)
				ret = vec_push(&e->nroot, &ri, 1);
		}
		if (!ret && h == 0 &&
		    (e->o.rules & (DFG_HUB_R1 | DFG_HUB_R2 | DFG_HUB_R4))) {
			prof_to(e, PROF_RULES);
			ret = rules_root(e, x, &VAT(&e->next, uint64_t, before),
					 e->next.n - before);
			prof_to(e, PROF_SAMPLE);
		}
		/* R2 (claims 3/8): an own hub sampled from an own root. */
		if (!ret && h == 1 && (e->o.rules & DFG_HUB_R2) &&
		    !(e->o.flags & DFG_HUB_F_R2_ON_ROOT) &&
		    hub_view_own(e->own, e->roots[ri]) && own_hub(e, x)) {
			prof_to(e, PROF_RULES);
			ret = r2_put(e, &VAT(&e->next, uint64_t, before),
				     e->next.n - before);
			prof_to(e, PROF_SAMPLE);
		}
		if (ret)
			return ret;
	}
	e->st.sampled += e->next.n;
	/* R2 (claims 3/8) with one hop: no next hop's sample to bound it. */
	if (h == 0 && e->o.hops == 1 && (e->o.rules & DFG_HUB_R2) &&
	    !(e->o.flags & DFG_HUB_F_R2_ON_ROOT))
		for (s = 0; s < e->next.n; s++) {
			uint64_t y = VAT(&e->next, uint64_t, s);

			if (hub_view_own(e->own, e->roots[VAT(&e->nroot,
							    uint32_t, s)]) &&
			    own_hub(e, y)) {
				ret = rule_r2(e, y);
				if (ret)
					return ret;
			}
		}
	if ((e->o.rules & DFG_HUB_R3) && h + 1 < e->o.hops) {
		prof_to(e, PROF_R3);
		ret = rule_r3(e, batch, h);
		if (ret)
			return ret;
	}
	prof_to(e, PROF_OTHER);
	/* The children are the next hop's frontier. */
	vec_swap(&e->front, &e->next);
	vec_swap(&e->froot, &e->nroot);
	return 0;
}

static int sample_batch(struct dfg_hub_engine *e, __u64 batch,
			const __u64 *roots, unsigned int nroots,
			struct dfg_arena *arena, __u64 *off)
{
	size_t bytes, at, ab;
	struct dfg_hub_batch *b;
	uint32_t idx, i;
	unsigned int h;
	uint8_t *base;
	__s64 o;
	int ret;

	if (!e || !roots || !nroots || !arena || !off)
		return -EINVAL;
	ret = walk_begin(e, batch, roots, nroots);
	if (ret)
		return ret;
	prof_to(e, PROF_OTHER);
	batch_reset(e);
	e->roots = (const uint64_t *)roots;
	for (i = 0; i < nroots; i++) {
		if (e->id_end && roots[i] >= e->id_end)
			return -ERANGE;
		ret = node_index(e, roots[i], &idx);
		if (!ret)
			ret = vec_push(&e->front, &roots[i], 1);
		if (!ret)
			ret = vec_push(&e->froot, &i, 1);
		if (ret)
			return ret;
	}
	for (h = 0; h < e->o.hops; h++) {
		ret = hop_run(e, batch, h);
		if (!ret)
			ret = walk_pump(e);
		if (ret)
			return ret;
	}

	/* Encode: the layout of struct dfg_hub_batch. */
	ab = e->own->h->feat_bytes;
	bytes = al8(sizeof(*b)) + al8((size_t)nroots * 4) + e->nodes.n * 8;
	for (h = 0; h < e->o.hops; h++)
		bytes += e->pairs[h].n * 8;
	bytes += al8(e->nodes.n * ab);
	if (bytes > UINT32_MAX)
		return -E2BIG;
	o = dfg_buf_alloc(arena, bytes);
	if (o < 0)
		return (int)o;
	base = dfg_arena_ptr(arena, (__u64)o, bytes);
	if (!base)
		return -EPROTO;
	b = (struct dfg_hub_batch *)base;
	memset(b, 0, sizeof(*b));
	b->magic = DFG_HUB_BATCH_MAGIC;
	b->bytes = (uint32_t)bytes;
	b->batch = batch;
	b->roots = nroots;
	b->hops = e->o.hops;
	b->attr_bytes = (uint32_t)ab;
	b->nodes = (uint32_t)e->nodes.n;
	at = al8(sizeof(*b));
	b->roots_off = at;
	for (i = 0; i < nroots; i++)
		((uint32_t *)(base + at))[i] = *map_get(&e->node_idx, roots[i]);
	memset(base + at + nroots * 4, 0, al8(nroots * 4) - nroots * 4);
	at += al8((size_t)nroots * 4);
	b->nodes_off = at;
	memcpy(base + at, e->nodes.p, e->nodes.n * 8);
	at += e->nodes.n * 8;
	for (h = 0; h < e->o.hops; h++) {
		const uint64_t *pr = e->pairs[h].p;
		uint32_t *dst = (uint32_t *)(base + at);
		size_t j;

		b->edges[h] = (uint32_t)e->pairs[h].n;
		b->hop_off[h] = at;
		for (j = 0; j < e->pairs[h].n; j++) {
			dst[2 * j] = (uint32_t)pr[j];
			dst[2 * j + 1] = (uint32_t)(pr[j] >> 32);
		}
		at += e->pairs[h].n * 8;
	}
	b->attrs_off = at;
	memset(base + at, 0, bytes - at);
	/* Attributes of the sampled nodes only, straight into the buffer. */
	e->sink_dst = base + at;
	prof_to(e, PROF_ATTRS);
	ret = fetch(e, e->nodes.p, e->nodes.n, DFG_PF_ATTRS, sink_attrs, true,
		    false);
	prof_to(e, PROF_OTHER);
	if (ret) {
		dfg_buf_free(arena, (__u64)o);
		return ret;
	}
	e->st.batches++;
	e->st.roots += nroots;
	e->st.nodes += e->nodes.n;
	*off = (__u64)o;
	return (int)bytes;
}

void hub_engine_slots(const struct dfg_hub_engine *e, uint64_t *slots,
		      uint64_t *ahead)
{
	*slots = e->slots;
	*ahead = e->slots_ahead;
}

int dfg_hub_sample(struct dfg_hub_engine *e, __u64 batch, const __u64 *roots,
		   unsigned int nroots, struct dfg_arena *arena, __u64 *off)
{
	int ret = sample_batch(e, batch, roots, nroots, arena, off), r;

	/*
	 * R3's requests may outlive the batch (the announced one's are for
	 * later); those that are done are taken, and its walk goes on.
	 */
	r = e ? walk_pump(e) : 0;
	if (e)
		prof_to(e, PROF_OFF);
	if (ret >= 0 && r == -ENOMEM) {
		dfg_buf_free(arena, *off);
		return r;
	}
	return ret;
}

int dfg_hub_sample_send(struct dfg_hub_engine *e, __u64 batch,
			const __u64 *roots, unsigned int nroots,
			struct dfg_arena *arena, struct dfg_chan *chan)
{
	struct dfg_desc d;
	__u64 off;
	int ret, len;

	if (!chan)
		return -EINVAL;
	len = dfg_hub_sample(e, batch, roots, nroots, arena, &off);
	if (len < 0)
		return len;
	d = (struct dfg_desc){ .off = off, .len = (__u32)len, .tag = batch };
	ret = dfg_chan_send(chan, &d, 1, 0);
	if (ret < 0) {
		dfg_buf_free(arena, off);
		return ret;
	}
	return len;
}
