// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * Host test of the all-to-all engine (libdfg/coll/alltoall_tiles.c): the
 * whole protocol of N ranks simulated in one process over a fake port
 * (areas in plain memory, one-sided operations as copies), the ranks
 * stepped in random order so that arrival orders and interleavings vary,
 * several calls back to back so that ranks enter call k + 1 while others
 * still finish call k. Every byte of every result buffer is checked
 * against the definition of alltoall(v), gaps included.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/alltoall.h"

#include "kselftest_harness.h"

#define MAXN	8
#define NCALLS	3
#define CANARY	0xa5

struct sim;

struct fake {
	struct sim	*sim;
	unsigned int	rank;
};

struct exposure {
	unsigned int	rank;
	const uint8_t	*buf;
	size_t		len;
	int		live;
};

struct sim {
	unsigned int	n;
	size_t		size;
	uint8_t		*area[MAXN];
	struct fake	fake[MAXN];
	struct a2a_port	port[MAXN];
	struct a2a_team	team[MAXN];
	struct exposure	exp[MAXN * NCALLS * 2];
	unsigned int	nexp;
	uint64_t	word[MAXN][A2A_W_NR];	/* atomic words */
	uint64_t	activity;	/* changes to shared state */
	int		fault;		/* an operation went out of bounds */
};

static int fake_check(struct sim *s, unsigned int peer, size_t off,
		      size_t len)
{
	if (peer >= s->n || off > s->size || len > s->size - off) {
		s->fault = 1;
		return -EFAULT;
	}
	return 0;
}

static int fake_fadd(void *ctx, unsigned int peer, unsigned int idx,
		     uint64_t add, uint64_t *old)
{
	struct fake *f = ctx;

	if (peer >= f->sim->n || idx >= A2A_W_NR) {
		f->sim->fault = 1;
		return -EFAULT;
	}
	if (old)
		*old = f->sim->word[peer][idx];
	f->sim->word[peer][idx] += add;
	f->sim->activity++;
	return 0;
}

static uint64_t fake_peek(void *ctx, unsigned int idx)
{
	struct fake *f = ctx;

	return f->sim->word[f->rank][idx];
}

static int fake_get(void *ctx, unsigned int peer, size_t off, void *dst,
		    size_t len)
{
	struct fake *f = ctx;

	if (fake_check(f->sim, peer, off, len))
		return -EFAULT;
	memcpy(dst, f->sim->area[peer] + off, len);
	return 0;
}

static int fake_put(void *ctx, unsigned int peer, size_t off,
		    const void *src, size_t len)
{
	struct fake *f = ctx;

	if (fake_check(f->sim, peer, off, len))
		return -EFAULT;
	memcpy(f->sim->area[peer] + off, src, len);
	f->sim->activity++;
	return 0;
}

static int fake_get_mem(void *ctx, unsigned int peer, const void *key,
			uint64_t off, void *dst, size_t len)
{
	struct fake *f = ctx;
	struct exposure *e;
	uint64_t handle;

	memcpy(&handle, key, sizeof(handle));
	if (handle >= f->sim->nexp)
		goto fault;
	e = &f->sim->exp[handle];
	if (!e->live || e->rank != peer || off > e->len || len > e->len - off)
		goto fault;
	memcpy(dst, e->buf + off, len);
	return 0;
fault:
	f->sim->fault = 1;
	return -EFAULT;
}

static int fake_expose(void *ctx, const void *buf, size_t len, void *key)
{
	struct fake *f = ctx;
	struct sim *s = f->sim;
	uint64_t handle = s->nexp;

	if (s->nexp == sizeof(s->exp) / sizeof(s->exp[0]))
		return -ENOMEM;
	s->exp[s->nexp++] = (struct exposure){ f->rank, buf, len, 1 };
	memcpy(key, &handle, sizeof(handle));
	return 0;
}

static void fake_unexpose(void *ctx, void *key)
{
	struct fake *f = ctx;
	uint64_t handle;

	memcpy(&handle, key, sizeof(handle));
	f->sim->exp[handle].live = 0;
}

static int sim_init(struct sim *s, unsigned int n, size_t threshold)
{
	struct a2a_layout l;
	unsigned int r;

	memset(s, 0, sizeof(*s));
	a2a_layout_init(&l, n, threshold);
	s->n = n;
	s->size = l.size;
	for (r = 0; r < n; r++) {
		s->area[r] = calloc(1, l.size);
		if (!s->area[r])
			return -ENOMEM;
		s->fake[r] = (struct fake){ s, r };
		s->port[r] = (struct a2a_port){
			.ctx = &s->fake[r], .fadd = fake_fadd,
			.peek = fake_peek, .get = fake_get, .put = fake_put,
			.get_mem = fake_get_mem, .expose = fake_expose,
			.unexpose = fake_unexpose,
		};
		if (a2a_team_init(&s->team[r], &s->port[r], r, n, threshold,
				  s->area[r]))
			return -ENOMEM;
	}
	return 0;
}

static void sim_fini(struct sim *s)
{
	unsigned int r;

	for (r = 0; r < s->n; r++) {
		a2a_team_fini(&s->team[r]);
		free(s->area[r]);
	}
}

/* What rank i sends rank j in call k, byte b. */
static uint8_t pattern(unsigned int k, unsigned int i, unsigned int j,
		       size_t b)
{
	return (uint8_t)(k * 131 + i * 37 + j * 11 + b * 7 + 1);
}

/*
 * One rank's arguments for one call: counts and displacements in random
 * order with gaps, so that misplaced or overlong copies show.
 */
struct args {
	size_t	scounts[MAXN], sdispls[MAXN], rcounts[MAXN], rdispls[MAXN];
	size_t	slen, rlen;
	uint8_t	*sbuf, *rbuf;
};

static void place(const size_t *counts, size_t *displs, size_t *total,
		  unsigned int n)
{
	unsigned int perm[MAXN], i;
	size_t off = 0;

	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n; i > 1; i--) {
		unsigned int k = rand() % i, x = perm[i - 1];

		perm[i - 1] = perm[k];
		perm[k] = x;
	}
	for (i = 0; i < n; i++) {
		off += rand() % 3;
		displs[perm[i]] = off;
		off += counts[perm[i]];
	}
	*total = off + 1;
}

struct plan {
	enum a2a_kind	kind;
	int		algo[MAXN];
	size_t		block[MAXN];		/* A2A_FIXED, per rank */
	size_t		cnt[MAXN][MAXN];	/* A2A_V: i sends j */
};

static void args_make(struct args *a, const struct plan *p, unsigned int n,
		      unsigned int k, unsigned int r)
{
	unsigned int j;
	size_t b;

	for (j = 0; j < n; j++) {
		a->scounts[j] = p->kind == A2A_V ? p->cnt[r][j] : p->block[r];
		a->rcounts[j] = p->kind == A2A_V ? p->cnt[j][r] : p->block[r];
	}
	if (p->kind == A2A_FIXED) {
		for (j = 0; j < n; j++) {
			a->sdispls[j] = j * p->block[r];
			a->rdispls[j] = j * p->block[r];
		}
		a->slen = a->rlen = n * p->block[r] + 1;
	} else {
		place(a->scounts, a->sdispls, &a->slen, n);
		place(a->rcounts, a->rdispls, &a->rlen, n);
	}
	a->sbuf = malloc(a->slen);
	a->rbuf = malloc(a->rlen);
	memset(a->sbuf, CANARY, a->slen);
	memset(a->rbuf, CANARY, a->rlen);
	for (j = 0; j < n; j++)
		for (b = 0; b < a->scounts[j]; b++)
			a->sbuf[a->sdispls[j] + b] = pattern(k, r, j, b);
}

/* Every received block in place, every other byte untouched. */
static int args_check(const struct args *a, unsigned int n, unsigned int k,
		      unsigned int r)
{
	uint8_t *want = malloc(a->rlen);
	unsigned int i;
	size_t b;
	int bad;

	memset(want, CANARY, a->rlen);
	for (i = 0; i < n; i++)
		for (b = 0; b < a->rcounts[i]; b++)
			want[a->rdispls[i] + b] = pattern(k, i, r, b);
	bad = memcmp(want, a->rbuf, a->rlen);
	free(want);
	return bad;
}

/*
 * Run NCALLS calls on every rank of @s, stepping ranks in random order.
 * Returns 0 with each call's result in @res, or -EDEADLK when no rank
 * can move, or the engine's error.
 */
static int sim_run(struct sim *s, const struct plan *p, int res[][MAXN],
		   int check)
{
	struct a2a_call call[MAXN];
	struct args args[MAXN];
	unsigned int k[MAXN] = { 0 }, started[MAXN] = { 0 }, left = s->n;
	unsigned int r, idle = 0;
	int ret = 0;

	while (left) {
		uint64_t before = s->activity;
		int step;

		r = rand() % s->n;
		if (k[r] == NCALLS)
			continue;
		if (!started[r]) {
			args_make(&args[r], p, s->n, k[r], r);
			call[r] = (struct a2a_call){
				.t = &s->team[r], .seq = 100 + k[r],
				.algo = p->algo[r], .kind = p->kind,
				.sbuf = args[r].sbuf, .rbuf = args[r].rbuf,
				.block = p->block[r],
				.scounts = args[r].scounts,
				.sdispls = args[r].sdispls,
				.rcounts = args[r].rcounts,
				.rdispls = args[r].rdispls,
			};
			started[r] = 1;
			step = a2a_start(&call[r]);
		} else {
			step = a2a_progress(&call[r]);
		}
		if (step < 0)
			return step;
		if (s->fault)
			return -EFAULT;
		if (step == 1) {
			res[k[r]][r] = call[r].err;
			if (check && !call[r].err &&
			    args_check(&args[r], s->n, k[r], r))
				ret = -EBADMSG;
			a2a_call_fini(&call[r]);
			free(args[r].sbuf);
			free(args[r].rbuf);
			started[r] = 0;
			if (++k[r] == NCALLS)
				left--;
			idle = 0;
			continue;
		}
		if (s->activity != before)
			idle = 0;
		else if (++idle > 64 * s->n)
			return -EDEADLK;
	}
	return ret;
}

static void plan_random_v(struct plan *p, unsigned int n, size_t max,
			  int algo)
{
	unsigned int i, j;

	memset(p, 0, sizeof(*p));
	p->kind = A2A_V;
	for (i = 0; i < n; i++) {
		p->algo[i] = algo;
		for (j = 0; j < n; j++)
			p->cnt[i][j] = rand() % 3 == 0 ? 0 : rand() % max;
	}
}

static void plan_fixed(struct plan *p, unsigned int n, size_t block,
		       int algo)
{
	unsigned int i;

	memset(p, 0, sizeof(*p));
	p->kind = A2A_FIXED;
	for (i = 0; i < n; i++) {
		p->algo[i] = algo;
		p->block[i] = block;
	}
}

static int run_all(struct sim *s, const struct plan *p, int *err)
{
	int res[NCALLS][MAXN], ret;
	unsigned int k, r;

	memset(res, 0x7f, sizeof(res));
	ret = sim_run(s, p, res, 1);
	if (ret)
		return ret;
	/* Each call consumed exactly its events. */
	for (r = 0; r < s->n; r++)
		if (s->word[r][A2A_W_EV])
			return -EOVERFLOW;
	for (k = 0; k < NCALLS; k++)
		for (r = 0; r < s->n; r++)
			if (res[k][r]) {
				*err = res[k][r];
				return 0;
			}
	*err = 0;
	return 0;
}

static void set_tiles(struct sim *s, unsigned int dh, unsigned int dv,
		      bool spread)
{
	unsigned int r;

	for (r = 0; r < s->n; r++) {
		s->team[r].force_dh = dh;
		s->team[r].force_dv = dv;
		s->team[r].assign_spread = spread;
	}
}


/* Tile size from the budget: one tile up to N = 8 at the threshold. */
TEST(pick_tile)
{
	unsigned int dh, dv;

	a2a_pick_tile(8, 8, &dh, &dv);
	EXPECT_EQ(8, dh);
	EXPECT_EQ(8, dv);
	a2a_pick_tile(8, A2A_THRESHOLD, &dh, &dv);
	EXPECT_EQ(8, dh);
	a2a_pick_tile(64, A2A_THRESHOLD, &dh, &dv);
	EXPECT_EQ(8, dh);
	EXPECT_EQ(8, dv);
	a2a_pick_tile(64, 4 * A2A_THRESHOLD, &dh, &dv);
	EXPECT_EQ(4, dh);
	a2a_pick_tile(64, 0, &dh, &dv);
	EXPECT_EQ(64, dh);
	a2a_pick_tile(3, 1 << 20, &dh, &dv);
	EXPECT_EQ(1, dh);
	EXPECT_EQ(2u, a2a_nsg(11, 9));
	EXPECT_EQ(4u, a2a_nsg(11, 3));
	EXPECT_EQ(2u, a2a_sg_size(11, 3, 3));
}

/* alltoall for every N <= 8 and every dh x dv, both assignment policies. */
TEST(fixed_every_tile)
{
	unsigned int n, dh, dv, spread, it;
	struct plan p;
	struct sim s;
	int err;

	srand(1);
	for (n = 1; n <= MAXN; n++)
		for (dh = 1; dh <= n; dh++)
			for (dv = 1; dv <= n; dv++)
				for (spread = 0; spread < 2; spread++)
					for (it = 0; it < 2; it++) {
						size_t b = it ? rand() % 24 : 0;

						ASSERT_EQ(0, sim_init(&s, n, 16));
						set_tiles(&s, dh, dv, spread);
						plan_fixed(&p, n, b, A2A_ALGO_TILES);
						ASSERT_EQ(0, run_all(&s, &p, &err))
						TH_LOG("n=%u dh=%u dv=%u b=%zu",
						       n, dh, dv, b);
						EXPECT_EQ(0, err);
						sim_fini(&s);
					}
}

/* alltoallv with random and zero counts, some above the threshold. */
TEST(v_random_every_tile)
{
	unsigned int n, dh, dv, spread, it;
	struct plan p;
	struct sim s;
	int err;

	srand(2);
	for (n = 1; n <= MAXN; n++)
		for (dh = 1; dh <= n; dh++)
			for (dv = 1; dv <= n; dv++)
				for (spread = 0; spread < 2; spread++)
					for (it = 0; it < 3; it++) {
						ASSERT_EQ(0, sim_init(&s, n, 16));
						set_tiles(&s, dh, dv, spread);
						plan_random_v(&p, n, it ? 40 : 2,
							      A2A_ALGO_TILES);
						ASSERT_EQ(0, run_all(&s, &p, &err))
						TH_LOG("n=%u dh=%u dv=%u",
						       n, dh, dv);
						EXPECT_EQ(0, err);
						sim_fini(&s);
					}
}

/* The tile size the engine picks itself, and direct exchange. */
TEST(auto_tile_and_direct)
{
	unsigned int n, it;
	struct plan p;
	struct sim s;
	int err;

	srand(3);
	for (n = 1; n <= MAXN; n++)
		for (it = 0; it < 20; it++) {
			ASSERT_EQ(0, sim_init(&s, n, 64));
			if (it % 2)
				plan_random_v(&p, n, 200, it % 4 == 1 ?
					      A2A_ALGO_DIRECT : A2A_ALGO_TILES);
			else
				plan_fixed(&p, n, rand() % 100, it % 4 == 0 ?
					   A2A_ALGO_DIRECT : A2A_ALGO_TILES);
			ASSERT_EQ(0, run_all(&s, &p, &err)) TH_LOG("n=%u", n);
			EXPECT_EQ(0, err);
			sim_fini(&s);
		}
}

/*
 * Mismatched block sizes fail every rank whose blocks disagree with
 * -EINVAL; nobody hangs and nothing is written out of bounds.
 */
TEST(mismatch_fails_without_hang)
{
	int res[NCALLS][MAXN];
	unsigned int n, bad, k, r, it;
	struct plan p;
	struct sim s;

	srand(5);
	for (n = 2; n <= MAXN; n++)
		for (it = 0; it < 6; it++) {
			bad = rand() % n;
			ASSERT_EQ(0, sim_init(&s, n, 16));
			set_tiles(&s, 1 + rand() % n, 1 + rand() % n, it & 1);
			plan_fixed(&p, n, 8, A2A_ALGO_TILES);
			if (it < 2)
				p.block[bad] = 12;
			else if (it < 4)
				p.block[bad] = 40;	/* above threshold */
			else
				p.block[bad] = 0;
			if (it == 5)
				set_tiles(&s, 0, 0, 0);
			ASSERT_EQ(0, sim_run(&s, &p, res, 0)) TH_LOG("n=%u", n);
			for (k = 0; k < NCALLS; k++)
				for (r = 0; r < n; r++)
					EXPECT_EQ(-EINVAL, res[k][r])
					TH_LOG("n=%u it=%u k=%u r=%u bad=%u",
					       n, it, k, r, bad);
			sim_fini(&s);
		}
}

TEST_HARNESS_MAIN
