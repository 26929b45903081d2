// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test of the collectives without the module: the pure logic
 * (reduction kernels, block and segment arithmetic, the fold and halving
 * schedules for every size 1..64, the algorithm table and DFG_COLL_ALGO
 * parsing), and every algorithm run by threads of one process over an
 * in-process transport (xport.h ops on plain memory: load/store peers, or
 * the get/put path the RDMA transport will take), compared with serial
 * references in the same reduction order, under ASan/UBSan.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <dfg/coll.h>

#include "kselftest_harness.h"
#include "coll_ref.h"
#include "xport_late.h"

/* ------------------------------------------------------------------------
 * Pure logic
 * ------------------------------------------------------------------------
 */

TEST(dtype_sizes)
{
	EXPECT_EQ(4, dfg_dtype_size(DFG_INT32));
	EXPECT_EQ(8, dfg_dtype_size(DFG_INT64));
	EXPECT_EQ(4, dfg_dtype_size(DFG_FLOAT32));
	EXPECT_EQ(8, dfg_dtype_size(DFG_FLOAT64));
	EXPECT_EQ(0, dfg_dtype_size(DFG_DTYPE_NR));
	EXPECT_EQ(0, dfg_dtype_size((enum dfg_dtype)-1));
}

TEST(kernels)
{
	struct dfg_reducer r;
	int32_t a[3] = { INT32_MAX, -5, 7 }, b[3] = { 1, 3, -7 }, d[3];
	int64_t a8[2] = { INT64_MIN, 4 }, b8[2] = { -1, -9 }, d8[2];
	float fa[2] = { 1.5f, -2 }, fb[2] = { 2, -3 }, fd[2];
	double da[2] = { 0.25, 8 }, db[2] = { 4, -1 }, dd[2];

	ASSERT_EQ(0, dfg_reducer_get(DFG_SUM, DFG_INT32, &r));
	dfg_reducer_run(&r, d, a, b, 3);
	EXPECT_EQ(INT32_MIN, d[0]);	/* wraps, no UB */
	EXPECT_EQ(-2, d[1]);
	EXPECT_EQ(0, d[2]);
	ASSERT_EQ(0, dfg_reducer_get(DFG_PROD, DFG_INT32, &r));
	dfg_reducer_run(&r, d, a, b, 3);
	EXPECT_EQ(-15, d[1]);
	EXPECT_EQ(-49, d[2]);
	ASSERT_EQ(0, dfg_reducer_get(DFG_MIN, DFG_INT64, &r));
	dfg_reducer_run(&r, d8, a8, b8, 2);
	EXPECT_EQ(INT64_MIN, d8[0]);
	EXPECT_EQ(-9, d8[1]);
	ASSERT_EQ(0, dfg_reducer_get(DFG_MAX, DFG_INT64, &r));
	dfg_reducer_run(&r, d8, a8, b8, 2);
	EXPECT_EQ(-1, d8[0]);
	EXPECT_EQ(4, d8[1]);
	ASSERT_EQ(0, dfg_reducer_get(DFG_SUM, DFG_INT64, &r));
	dfg_reducer_run(&r, d8, a8, b8, 2);
	EXPECT_EQ(INT64_MAX, d8[0]);	/* wraps */
	ASSERT_EQ(0, dfg_reducer_get(DFG_PROD, DFG_FLOAT32, &r));
	dfg_reducer_run(&r, fd, fa, fb, 2);
	EXPECT_EQ(3.0f, fd[0]);
	EXPECT_EQ(6.0f, fd[1]);
	ASSERT_EQ(0, dfg_reducer_get(DFG_MIN, DFG_FLOAT64, &r));
	dfg_reducer_run(&r, dd, da, db, 2);
	EXPECT_EQ(0.25, dd[0]);
	EXPECT_EQ(-1.0, dd[1]);
	/* In place on either operand. */
	ASSERT_EQ(0, dfg_reducer_get(DFG_SUM, DFG_FLOAT64, &r));
	dfg_reducer_run(&r, da, da, db, 2);
	EXPECT_EQ(4.25, da[0]);
	dfg_reducer_run(&r, db, da, db, 2);
	EXPECT_EQ(8.25, db[0]);
	EXPECT_EQ(-EINVAL, dfg_reducer_get(DFG_OP_NR, DFG_INT32, &r));
	EXPECT_EQ(-EINVAL, dfg_reducer_get(-1, DFG_INT32, &r));
	EXPECT_EQ(-EINVAL, dfg_reducer_get(DFG_SUM, DFG_DTYPE_NR, &r));
	EXPECT_EQ(-EINVAL, dfg_reducer_get(DFG_OP_USER, DFG_INT32, &r));
}

/* The scalar definition of one element of dst = a (op) b. */
#define KREF(T, U, op, u, v)						\
	((op) == DFG_SUM ? (T)((U)(u) + (U)(v)) :			\
	 (op) == DFG_PROD ? (T)((U)(u) * (U)(v)) :			\
	 (op) == DFG_MIN ? ((v) < (u) ? (v) : (u)) :			\
	 ((v) > (u) ? (v) : (u)))

#define KCHECK(T, U, dt, op, n, fill)					\
do {									\
	T a[n], b[n], d[n], want[n], ina[n];				\
	struct dfg_reducer r;						\
									\
	for (size_t i = 0; i < (n); i++) {				\
		a[i] = fill(i, 1);					\
		b[i] = fill(i, 2);					\
	}								\
	for (size_t i = 0; i < (n); i++)				\
		want[i] = KREF(T, U, op, a[i], b[i]);			\
	ASSERT_EQ(0, dfg_reducer_get(op, dt, &r));			\
	dfg_reducer_run(&r, d, a, b, (n));				\
	EXPECT_EQ(0, memcmp(d, want, sizeof(d))) TH_LOG("op %d", op);	\
	/* In place, on either operand. */				\
	memcpy(ina, a, sizeof(a));					\
	dfg_reducer_run(&r, ina, ina, b, (n));				\
	EXPECT_EQ(0, memcmp(ina, want, sizeof(ina))) TH_LOG("op %d", op); \
	memcpy(ina, b, sizeof(b));					\
	dfg_reducer_run(&r, ina, a, ina, (n));				\
	EXPECT_EQ(0, memcmp(ina, want, sizeof(ina))) TH_LOG("op %d", op); \
} while (0)

/* Signed values of both signs, large enough to wrap in sum and product. */
#define FILL_INT(i, k)	(((i) * 2654435761u * (k)) ^ ((i) & 4 ? ~0u : 0))
#define FILL_I64(i, k)	((int64_t)((uint64_t)FILL_INT(i, k) << 31 ^	\
				   FILL_INT(i + 7, k)))
/* Floats of both signs, a NaN on either side, equal pairs. */
#define FILL_FLT(i, k)	((i) % 13 == (k) ? NAN : (i) % 5 == 0 ? 1.5 :	\
			 ((double)(i) - 20) * (k) / 3)

/* Every kernel on lengths around its vector width (vector and tail). */
TEST(kernels_vector)
{
	for (int op = DFG_SUM; op <= DFG_MAX; op++) {
		KCHECK(int32_t, uint32_t, DFG_INT32, op, 37, (int32_t)FILL_INT);
		KCHECK(int64_t, uint64_t, DFG_INT64, op, 37, FILL_I64);
		KCHECK(float, float, DFG_FLOAT32, op, 37, (float)FILL_FLT);
		KCHECK(double, double, DFG_FLOAT64, op, 37, FILL_FLT);
		KCHECK(float, float, DFG_FLOAT32, op, 8, (float)FILL_FLT);
		KCHECK(double, double, DFG_FLOAT64, op, 3, FILL_FLT);
	}
}

static void xor_op(void *inout, const void *in, size_t n,
		   enum dfg_dtype dt, void *arg)
{
	uint32_t *d = inout;
	const uint32_t *s = in;

	(void)dt;
	*(int *)arg += 1;
	for (size_t i = 0; i < n; i++)
		d[i] ^= s[i];
}

TEST(user_ops)
{
	struct dfg_reducer r;
	uint32_t a[2] = { 1, 2 }, b[2] = { 3, 6 }, d[2];
	int calls = 0, op, ops[64];
	int n = 0;

	EXPECT_EQ(-EINVAL, dfg_op_create(NULL, NULL));
	op = dfg_op_create(xor_op, &calls);
	ASSERT_GE(op, DFG_OP_USER);
	ASSERT_EQ(0, dfg_reducer_get(op, DFG_INT32, &r));
	dfg_reducer_run(&r, d, a, b, 2);
	EXPECT_EQ(2, d[0]);
	EXPECT_EQ(4, d[1]);
	dfg_reducer_run(&r, b, a, b, 2);	/* dst is b */
	EXPECT_EQ(2, b[0]);
	EXPECT_EQ(2, calls);
	EXPECT_EQ(0, dfg_op_free(op));
	EXPECT_EQ(-EINVAL, dfg_op_free(op));
	EXPECT_EQ(-EINVAL, dfg_op_free(DFG_SUM));
	EXPECT_EQ(-EINVAL, dfg_reducer_get(op, DFG_INT32, &r));
	/* The table fills up and frees. */
	for (;;) {
		int h = dfg_op_create(xor_op, &calls);

		if (h < 0) {
			EXPECT_EQ(-ENOSPC, h);
			break;
		}
		ops[n++] = h;
	}
	EXPECT_EQ(64, n);
	for (int i = 0; i < n; i++)
		EXPECT_EQ(0, dfg_op_free(ops[i]));
}

TEST(blocks)
{
	for (size_t n = 0; n < 200; n++) {
		for (size_t k = 1; k < 12; k++) {
			size_t sum = 0;

			for (size_t i = 0; i < k; i++) {
				ASSERT_EQ(sum, dfg_block_lo(n, k, i));
				sum += dfg_block_len(n, k, i);
				if (i)
					ASSERT_GE(dfg_block_len(n, k, i - 1),
						  dfg_block_len(n, k, i));
			}
			ASSERT_EQ(n, sum);
			ASSERT_EQ(n, dfg_block_lo(n, k, k));
		}
	}
}

TEST(fold_schedule)
{
	for (unsigned int size = 1; size <= 64; size++) {
		struct dfg_fold f;
		unsigned int seen = 0, out = 0;

		dfg_fold_init(&f, size);
		ASSERT_EQ(1U << f.q, f.p2);
		ASSERT_LE(f.p2, size);
		ASSERT_GT(2 * f.p2, size);
		ASSERT_EQ(size - f.p2, f.r);
		for (unsigned int r = 0; r < size; r++) {
			int v = dfg_fold_vrank(&f, r);

			if (v < 0) {
				/* folded out: an even rank, its odd next */
				ASSERT_LT(r, 2 * f.r);
				ASSERT_EQ(0, r & 1);
				ASSERT_EQ(r / 2, dfg_fold_vrank(&f, r + 1));
				out++;
				continue;
			}
			ASSERT_LT(v, f.p2);
			ASSERT_EQ(r, dfg_fold_rank(&f, v));
			/* virtual ranks keep the order of real ones */
			seen++;
		}
		ASSERT_EQ(f.p2, seen);
		ASSERT_EQ(f.r, out);
		for (unsigned int v = 1; v < f.p2; v++)
			ASSERT_LT(dfg_fold_rank(&f, v - 1),
				  dfg_fold_rank(&f, v));
	}
}

/*
 * Halving: after i steps the p2 virtual ranks' ranges of a segment are
 * the two halves of their step-(i-1) range (the partners' are disjoint
 * and cover it), and after q steps they partition the segment.
 */
TEST(halving_schedule)
{
	for (unsigned int q = 0; q <= 6; q++) {
		unsigned int p2 = 1U << q;

		for (unsigned int segs = 1; segs <= 5; segs++) {
			for (size_t n = 0; n < 90; n += 1 + n / 8) {
				for (unsigned int m = 0; m < segs; m++) {
					size_t slo = dfg_block_lo(n, segs, m);
					size_t shi = slo + dfg_block_len(n, segs, m);
					size_t covered = 0;

					for (unsigned int v = 0; v < p2; v++) {
						size_t lo, hi;

						dfg_rh_range(n, segs, m, v, 0,
							     &lo, &hi);
						ASSERT_EQ(slo, lo);
						ASSERT_EQ(shi, hi);
						for (unsigned int i = 0; i < q;
						     i++) {
							size_t a, b, c, d, e, f;

							dfg_rh_range(n, segs, m, v, i, &a, &b);
							dfg_rh_range(n, segs, m, v, i + 1, &c, &d);
							dfg_rh_range(n, segs, m, v ^ (1U << i), i + 1, &e, &f);
							/* bit set keeps the lower half */
							if (v >> i & 1) {
								ASSERT_EQ(a, c);
								ASSERT_EQ(d, e);
								ASSERT_EQ(b, f);
							} else {
								ASSERT_EQ(a, e);
								ASSERT_EQ(f, c);
								ASSERT_EQ(b, d);
							}
						}
						dfg_rh_range(n, segs, m, v, q,
							     &lo, &hi);
						covered += hi - lo;
					}
					ASSERT_EQ(shi - slo, covered);
				}
			}
		}
	}
}

/* A transport whose inbox slots hold 1 KiB, for the table's choice. */
static void *tbl_inbox(struct dfg_xport *x, unsigned int src,
		       unsigned int dst, __u64 seq, size_t *size)
{
	static unsigned char slot[1024];

	(void)x; (void)src; (void)dst; (void)seq;
	*size = sizeof(slot);
	return slot;
}

static const struct dfg_xport_ops tbl_ops = { .inbox = tbl_inbox };

TEST(table_inbox)
{
	struct dfg_xport x = { .ops = &tbl_ops, .size = 4 };
	struct dfg_xport none = { .ops = &(struct dfg_xport_ops){ 0 },
				  .size = 4 };
	struct dfg_team t = { .size = 4, .x = &x };
	enum dfg_coll_algo f[DFG_COLL_KIND_NR] = { 0 };
	unsigned int segs = 0;

	/* Where the payload fits a slot, the inbox; above, the others. */
	EXPECT_EQ(DFG_ALGO_INBOX, dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 8));
	EXPECT_EQ(DFG_ALGO_INBOX,
		  dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 1024));
	EXPECT_EQ(DFG_ALGO_DIRECT,
		  dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 1025));
	EXPECT_EQ(DFG_ALGO_INBOX, dfg_coll_pick(&t, DFG_COLL_REDUCE, 1024));
	EXPECT_EQ(DFG_ALGO_INBOX, dfg_coll_pick(&t, DFG_COLL_ALLGATHER, 1));
	EXPECT_EQ(DFG_ALGO_INBOX, dfg_coll_pick(&t, DFG_COLL_BROADCAST, 1));
	/* reduce_scatter: a rank sends a quarter of the vector to each */
	EXPECT_EQ(DFG_ALGO_INBOX,
		  dfg_coll_pick(&t, DFG_COLL_REDUCE_SCATTER, 4096));
	EXPECT_EQ(DFG_ALGO_DIRECT,
		  dfg_coll_pick(&t, DFG_COLL_REDUCE_SCATTER, 4097));
	/*
	 * all-to-all: the inbox, in pieces above a slot, up to 2 MiB
	 * blocks; with the slots alternating (DFG_COLL_PREV=ring) the tiles
	 * above a slot
	 */
	EXPECT_EQ(DFG_ALGO_INBOX, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 8));
	EXPECT_EQ(DFG_ALGO_INBOX, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 1024));
	EXPECT_EQ(DFG_ALGO_INBOX, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 1025));
	EXPECT_EQ(DFG_ALGO_INBOX,
		  dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 2 << 20));
	/* above 2 MiB the tiles' single copy wins (table.c) */
	EXPECT_EQ(DFG_ALGO_TILES,
		  dfg_coll_pick(&t, DFG_COLL_ALLTOALL, (2 << 20) + 1));
	t.force[DFG_COLL_ALLTOALL] = DFG_ALGO_INBOX;
	EXPECT_EQ(DFG_ALGO_INBOX,
		  dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 64 << 20));
	t.force[DFG_COLL_ALLTOALL] = DFG_ALGO_AUTO;
	t.inbox_parity = true;
	EXPECT_EQ(DFG_ALGO_INBOX, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 1024));
	EXPECT_EQ(DFG_ALGO_TILES, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 1025));
	t.inbox_parity = false;
	EXPECT_TRUE(dfg_coll_algo_valid(DFG_COLL_ALLTOALL, DFG_ALGO_INBOX));
	EXPECT_TRUE(dfg_coll_algo_valid(DFG_COLL_BROADCAST, DFG_ALGO_INBOX));
	/* Forced elsewhere: obeyed; forced inbox that does not fit: table. */
	t.force[DFG_COLL_ALLREDUCE] = DFG_ALGO_RING;
	EXPECT_EQ(DFG_ALGO_RING, dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 8));
	t.force[DFG_COLL_ALLREDUCE] = DFG_ALGO_INBOX;
	EXPECT_EQ(DFG_ALGO_INBOX, dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 8));
	EXPECT_EQ(DFG_ALGO_RHALVING,
		  dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 1 << 20));
	/* No inbox in the transport, or a team of one: never. */
	t.x = &none;
	EXPECT_EQ(DFG_ALGO_DIRECT, dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 8));
	t.x = &x;
	t.size = 1;
	t.force[DFG_COLL_ALLREDUCE] = DFG_ALGO_AUTO;
	EXPECT_EQ(DFG_ALGO_DIRECT, dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 8));

	EXPECT_EQ(0, dfg_coll_parse_algo("allreduce=inbox,broadcast=inbox",
					 f, &segs));
	EXPECT_EQ(DFG_ALGO_INBOX, f[DFG_COLL_ALLREDUCE]);
	EXPECT_EQ(DFG_ALGO_INBOX, f[DFG_COLL_BROADCAST]);
	EXPECT_EQ(0, dfg_coll_parse_algo("alltoall=inbox", f, &segs));
	EXPECT_EQ(DFG_ALGO_INBOX, f[DFG_COLL_ALLTOALL]);
	EXPECT_EQ(-EINVAL, dfg_coll_parse_algo("alltoall=ring", f, &segs));
}

static int tbl_fence(struct dfg_xport *x)
{
	(void)x;
	return 0;
}

static int tbl_wait_eq(struct dfg_xport *x, const __u64 *word, __u64 value,
		       unsigned int src)
{
	(void)x; (void)word; (void)value; (void)src;
	return 0;
}

/* A transport that reaches peers by RDMA only (the network's ops). */
static const struct dfg_xport_ops tbl_net_ops = {
	.fence = tbl_fence, .complete_local = tbl_fence,
	.wait_eq = tbl_wait_eq,
};

/*
 * DFG_COLL_YIELD_US: microseconds 0..DFG_COLL_YIELD_MAX_US, the default
 * unset; anything else refuses the team before it is joined.
 */
TEST(yield_window_env)
{
	static const char * const bad[] = {
		"", "x", "12x", "-1", "1000001", "99999999999999999999",
	};
	struct dfg_team *t;
	long long ns;

	unsetenv("DFG_COLL_YIELD_US");
	ASSERT_EQ(0, dfg_coll_yield_ns(&ns));
	EXPECT_EQ(DFG_COLL_YIELD_DEFAULT_US * 1000LL, ns);
	setenv("DFG_COLL_YIELD_US", "0", 1);
	ASSERT_EQ(0, dfg_coll_yield_ns(&ns));
	EXPECT_EQ(0, ns);
	setenv("DFG_COLL_YIELD_US", "1000000", 1);
	ASSERT_EQ(0, dfg_coll_yield_ns(&ns));
	EXPECT_EQ(1000000000LL, ns);
	ASSERT_EQ(0, dfg_team_new(2, 1, &t));
	free(t->stash);
	free(t);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("DFG_COLL_YIELD_US", bad[i], 1);
		ns = 7;
		EXPECT_EQ(-EINVAL, dfg_coll_yield_ns(&ns)) TH_LOG("'%s'", bad[i]);
		EXPECT_EQ(-EINVAL, dfg_team_new(2, 1, &t)) TH_LOG("'%s'", bad[i]);
	}
	unsetenv("DFG_COLL_YIELD_US");
}

/*
 * DFG_COLL_STATS: calls between lines, 0..DFG_COLL_STATS_MAX, none unset;
 * anything else refuses the team before it is joined.
 */
TEST(stats_env)
{
	static const char * const bad[] = {
		"", "x", "12x", "-1", "100000001", "99999999999999999999",
	};
	unsigned long every;
	struct dfg_team *t;

	unsetenv("DFG_COLL_STATS");
	ASSERT_EQ(0, dfg_coll_stats_every(&every));
	EXPECT_EQ(0UL, every);
	setenv("DFG_COLL_STATS", "0", 1);
	ASSERT_EQ(0, dfg_coll_stats_every(&every));
	EXPECT_EQ(0UL, every);
	setenv("DFG_COLL_STATS", "100000000", 1);
	ASSERT_EQ(0, dfg_coll_stats_every(&every));
	EXPECT_EQ(DFG_COLL_STATS_MAX, every);
	ASSERT_EQ(0, dfg_team_new(2, 1, &t));
	free(t->stash);
	free(t);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("DFG_COLL_STATS", bad[i], 1);
		every = 7;
		EXPECT_EQ(-EINVAL, dfg_coll_stats_every(&every))
			TH_LOG("'%s'", bad[i]);
		EXPECT_EQ(-EINVAL, dfg_team_new(2, 1, &t)) TH_LOG("'%s'", bad[i]);
	}
	unsetenv("DFG_COLL_STATS");
}

TEST(table_put)
{
	struct dfg_xport net = { .ops = &tbl_net_ops, .size = 4 };
	struct dfg_xport shm = { .ops = &tbl_ops, .size = 4 };
	struct dfg_team t = { .size = 4, .x = &net };
	enum dfg_coll_algo f[DFG_COLL_KIND_NR] = { 0 };
	unsigned int segs = 0;

	/* Over the network: put at every size; the others when forced. */
	EXPECT_EQ(DFG_ALGO_PUT, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 0));
	EXPECT_EQ(DFG_ALGO_PUT, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 8));
	EXPECT_EQ(DFG_ALGO_PUT, dfg_coll_pick(&t, DFG_COLL_ALLTOALL,
					      SIZE_MAX));
	EXPECT_EQ(DFG_ALGO_DIRECT, dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 8));
	t.force[DFG_COLL_ALLTOALL] = DFG_ALGO_TILES;
	EXPECT_EQ(DFG_ALGO_TILES, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 8));
	t.force[DFG_COLL_ALLTOALL] = DFG_ALGO_INBOX;
	EXPECT_EQ(DFG_ALGO_PUT, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 8));
	t.force[DFG_COLL_ALLTOALL] = DFG_ALGO_PUT;
	EXPECT_EQ(DFG_ALGO_PUT, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 8));
	/* Forced on shared memory (no fence, no wait_eq): the table's. */
	t.x = &shm;
	EXPECT_EQ(DFG_ALGO_INBOX, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 8));
	EXPECT_EQ(DFG_ALGO_INBOX, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 4096));
	EXPECT_TRUE(dfg_coll_algo_valid(DFG_COLL_ALLTOALL, DFG_ALGO_PUT));
	EXPECT_FALSE(dfg_coll_algo_valid(DFG_COLL_ALLREDUCE, DFG_ALGO_PUT));
	EXPECT_EQ(0, dfg_coll_parse_algo("alltoall=put", f, &segs));
	EXPECT_EQ(DFG_ALGO_PUT, f[DFG_COLL_ALLTOALL]);
	EXPECT_EQ(-EINVAL, dfg_coll_parse_algo("allreduce=put", f, &segs));
}

TEST(table)
{
	struct dfg_team t = { .size = 8 };
	enum dfg_coll_algo f[DFG_COLL_KIND_NR] = { 0 };
	unsigned int segs = 0;

	EXPECT_EQ(DFG_ALGO_DIRECT, dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 8));
	EXPECT_EQ(DFG_ALGO_RHALVING,
		  dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 1 << 20));
	/* reduce_scatter: direct at every size (table.c) */
	EXPECT_EQ(DFG_ALGO_DIRECT,
		  dfg_coll_pick(&t, DFG_COLL_REDUCE_SCATTER, 4097));
	EXPECT_EQ(DFG_ALGO_DIRECT,
		  dfg_coll_pick(&t, DFG_COLL_REDUCE_SCATTER, SIZE_MAX));
	EXPECT_EQ(DFG_ALGO_TILES, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 8));
	/* Large blocks go direct per block inside the tiles (alltoall.c). */
	EXPECT_EQ(DFG_ALGO_TILES,
		  dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 1 << 20));
	t.force[DFG_COLL_ALLREDUCE] = DFG_ALGO_RING;
	EXPECT_EQ(DFG_ALGO_RING, dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 8));

	EXPECT_TRUE(dfg_coll_algo_valid(DFG_COLL_ALLGATHER, DFG_ALGO_RING));
	EXPECT_FALSE(dfg_coll_algo_valid(DFG_COLL_ALLGATHER,
					 DFG_ALGO_RHALVING));
	EXPECT_FALSE(dfg_coll_algo_valid(DFG_COLL_REDUCE, DFG_ALGO_TILES));
	EXPECT_FALSE(dfg_coll_algo_valid(DFG_COLL_KIND_NR, DFG_ALGO_AUTO));
	EXPECT_FALSE(dfg_coll_algo_valid(DFG_COLL_REDUCE, DFG_ALGO_NR));

	/* The automatic choice exists for every size, and switches at 4K. */
	t.force[DFG_COLL_ALLREDUCE] = DFG_ALGO_AUTO;
	for (int k = 0; k < DFG_COLL_KIND_NR; k++) {
		static const size_t sizes[] = { 0, 4096, 4097, SIZE_MAX };

		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			enum dfg_coll_algo a = dfg_coll_pick(&t, k, sizes[i]);

			EXPECT_NE(DFG_ALGO_AUTO, a);
			EXPECT_TRUE(dfg_coll_algo_valid(k, a));
		}
	}
	EXPECT_EQ(DFG_ALGO_DIRECT, dfg_coll_pick(&t, DFG_COLL_REDUCE, 4096));
	EXPECT_EQ(DFG_ALGO_RHALVING, dfg_coll_pick(&t, DFG_COLL_REDUCE, 4097));
	EXPECT_EQ(DFG_ALGO_DIRECT, dfg_coll_pick(&t, DFG_COLL_ALLGATHER,
						 SIZE_MAX));

	EXPECT_EQ(0, dfg_coll_parse_algo("", f, &segs));
	EXPECT_EQ(0, dfg_coll_parse_algo("allreduce=ring,alltoall=direct",
					 f, &segs));
	EXPECT_EQ(DFG_ALGO_RING, f[DFG_COLL_ALLREDUCE]);
	EXPECT_EQ(DFG_ALGO_DIRECT, f[DFG_COLL_ALLTOALL]);
	EXPECT_EQ(0, dfg_coll_parse_algo("reduce_scatter=rhalving,segments=4",
					 f, &segs));
	EXPECT_EQ(4, segs);
	EXPECT_EQ(DFG_ALGO_RHALVING, f[DFG_COLL_REDUCE_SCATTER]);
	EXPECT_EQ(0, dfg_coll_parse_algo("reduce_scatter=auto", f, &segs));
	EXPECT_EQ(DFG_ALGO_AUTO, f[DFG_COLL_REDUCE_SCATTER]);
	EXPECT_EQ(-EINVAL, dfg_coll_parse_algo("broadcast=ring", f, &segs));
	EXPECT_EQ(-EINVAL, dfg_coll_parse_algo("auto=direct", f, &segs));
	/* Nothing changes unless all of it parses. */
	EXPECT_EQ(-EINVAL, dfg_coll_parse_algo("allreduce=direct,bogus=ring",
					       f, &segs));
	EXPECT_EQ(DFG_ALGO_RING, f[DFG_COLL_ALLREDUCE]);
	EXPECT_EQ(-EINVAL, dfg_coll_parse_algo("allgather=rhalving", f, &segs));
	EXPECT_EQ(-EINVAL, dfg_coll_parse_algo("allreduce", f, &segs));
	EXPECT_EQ(-EINVAL, dfg_coll_parse_algo("allreduce=", f, &segs));
	EXPECT_EQ(-EINVAL, dfg_coll_parse_algo("segments=0", f, &segs));
	EXPECT_EQ(-EINVAL, dfg_coll_parse_algo("segments=x", f, &segs));
	EXPECT_EQ(-EINVAL, dfg_coll_parse_algo("segments=65", f, &segs));
	EXPECT_EQ(4, segs);

	t.segments = 0;
	EXPECT_EQ(1, dfg_coll_segments(&t, 1000));
	EXPECT_EQ(2, dfg_coll_segments(&t, 1 << 20));
	EXPECT_EQ(8, dfg_coll_segments(&t, 64 << 20));
	t.segments = 3;
	EXPECT_EQ(3, dfg_coll_segments(&t, 1000));
}

/* ------------------------------------------------------------------------
 * An in-process transport: ranks are threads, peers' memory is ours
 * ------------------------------------------------------------------------
 */

#define W_MAX		8
#define MBOX_DEPTH	4
/* Inbox slot bytes: small, so that some calls fit and others do not. */
#define FX_SLOT		1024

struct world {
	unsigned int	size;
	bool		no_ptr;
	_Atomic __u64	words[W_MAX][DFG_XPORT_WORDS(W_MAX)];
	_Atomic __u64	head[W_MAX][W_MAX];
	_Atomic __u64	tail[W_MAX][W_MAX];
	struct {
		int	len;
		char	data[DFG_XPORT_MSG_MAX];
	} box[W_MAX][W_MAX][MBOX_DEPTH];
	_Atomic __u64	cur[W_MAX];
	_Atomic __u64	aborted[W_MAX];
	_Atomic int	broken;
	_Atomic int	exposed;
	_Atomic __u32	bell[W_MAX];
	unsigned char	inbox[W_MAX][W_MAX][2][FX_SLOT];
};

/* @broken: this rank's transport broke on its own, the world did not. */
struct fx {
	struct dfg_xport	x;
	struct world		*w;
	int			tickets;
	_Atomic int		broken;
};

static struct world *fx_w(struct dfg_xport *x)
{
	return ((struct fx *)x)->w;
}

/* As xport_shm.c: @src aborted our call or went past it (size: anyone). */
static int fx_check(struct dfg_xport *x, unsigned int src)
{
	struct world *w = fx_w(x);

	if (atomic_load(&w->broken) || atomic_load(&((struct fx *)x)->broken))
		return -EOWNERDEAD;
	if (!x->seq)
		return 0;
	if (src < x->size)
		return atomic_load(&w->aborted[src]) >= x->seq ||
		       atomic_load(&w->cur[src]) > x->seq ? -EPROTO : 0;
	for (unsigned int r = 0; r < x->size; r++)
		if (atomic_load(&w->aborted[r]) == x->seq)
			return -EPROTO;
	return 0;
}

/*
 * Rank @r may wait for what we just stored: ring its bell. Waiters
 * sleep on it, as xport_shm.c's do on their doorbell. Ranks that called
 * sched_yield() in a loop instead got the CPU back only when the
 * CPU-bound tasks beside them ended their slices, at every step of
 * every call: at load 13 on 2 CPUs the test's 4 threads had used under
 * a second of CPU in 70 s. A woken sleeper preempts such tasks.
 */
static void fx_ring(struct world *w, unsigned int r)
{
	atomic_fetch_add(&w->bell[r], 1);
	syscall(SYS_futex, &w->bell[r], FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
		NULL, 0);
}

/* Cur and aborted: what every waiter looks at. */
static void fx_ring_all(struct dfg_xport *x)
{
	for (unsigned int r = 0; r < x->size; r++)
		fx_ring(fx_w(x), r);
}

static int fx_wait_u64(struct dfg_xport *x, _Atomic __u64 *p, __u64 val,
		       unsigned int src, __u64 *now)
{
	_Atomic __u32 *bell = &fx_w(x)->bell[x->rank];
	struct timespec tmo = { .tv_nsec = 100 * 1000 * 1000 };
	__u32 b;
	__u64 v;
	int ret;

	for (;;) {
		/* Read before the word: a store after it changes the bell. */
		b = atomic_load(bell);
		v = atomic_load(p);
		if (v >= val)
			break;
		ret = fx_check(x, src);
		if (ret && atomic_load(p) < val)
			return ret;
		syscall(SYS_futex, bell, FUTEX_WAIT_PRIVATE, b, &tmo, NULL, 0);
	}
	if (now)
		*now = v;
	return 0;
}

static int fx_expose(struct dfg_xport *x, const void *addr, size_t len,
		     unsigned int flags, struct dfg_xkey *key)
{
	static _Atomic __u64 gen;

	*key = (struct dfg_xkey){
		.kind = len ? DFG_XKEY_REGION : DFG_XKEY_NONE,
		.flags = (flags & DFG_XPORT_WRITE ? DFG_XKEY_F_WRITE : 0) |
			 (flags & DFG_XPORT_KEEP ? DFG_XKEY_F_KEEP : 0),
		.len = len, .gen = ++gen, .addr = (uintptr_t)addr,
	};
	if (len)
		atomic_fetch_add(&fx_w(x)->exposed, 1);
	return 0;
}

static void fx_unexpose(struct dfg_xport *x, struct dfg_xkey *key)
{
	if (key->kind != DFG_XKEY_NONE)
		atomic_fetch_sub(&fx_w(x)->exposed, 1);
	key->kind = DFG_XKEY_NONE;
}

static void *fx_at(struct dfg_xport *x, const struct dfg_xkey *key,
		   size_t off, size_t len, int *err)
{
	(void)x;
	*err = 0;
	if (off > key->len || len > key->len - off) {
		*err = -ERANGE;
		return NULL;
	}
	return (char *)(uintptr_t)key->addr + off;
}

static void *fx_peer_ptr(struct dfg_xport *x, unsigned int peer,
			 const struct dfg_xkey *key, size_t off, size_t len,
			 int *err)
{
	*err = 0;
	if (fx_w(x)->no_ptr && peer != x->rank)
		return NULL;
	return fx_at(x, key, off, len, err);
}

static int fx_get(struct dfg_xport *x, unsigned int peer,
		  const struct dfg_xkey *key, size_t off, void *local,
		  const struct dfg_xkey *lkey, size_t len)
{
	int err;
	void *p = fx_at(x, key, off, len, &err);

	(void)peer;
	if (!lkey)
		return -EINVAL;
	if (!p)
		return err;
	memcpy(local, p, len);
	return ++((struct fx *)x)->tickets;
}

static int fx_put(struct dfg_xport *x, unsigned int peer,
		  const struct dfg_xkey *key, size_t off, const void *local,
		  const struct dfg_xkey *lkey, size_t len)
{
	int err;
	void *p = fx_at(x, key, off, len, &err);

	(void)peer;
	(void)lkey;
	if (!p)
		return err;
	memcpy(p, local, len);
	return ++((struct fx *)x)->tickets;
}

static int fx_complete(struct dfg_xport *x, int ticket)
{
	return ticket <= ((struct fx *)x)->tickets ? 0 : -EINVAL;
}

static int fx_flush(struct dfg_xport *x)
{
	(void)x;
	return 0;
}

static int fx_notify(struct dfg_xport *x, unsigned int peer,
		     unsigned int slot, __u64 val)
{
	if (peer >= x->size || slot >= DFG_XPORT_SLOTS)
		return -EINVAL;
	atomic_store(&fx_w(x)->words[peer][dfg_xport_inbox(x->rank, slot)],
		     val);
	fx_ring(fx_w(x), peer);
	return 0;
}

static int fx_fadd(struct dfg_xport *x, unsigned int peer, unsigned int idx,
		   __u64 add, __u64 *old)
{
	__u64 o = atomic_fetch_add(
		&fx_w(x)->words[peer][dfg_xport_atomic(x, idx)], add);

	fx_ring(fx_w(x), peer);
	if (old)
		*old = o;
	return 0;
}

static int fx_wait(struct dfg_xport *x, unsigned int word, __u64 val,
		   __u64 *now)
{
	return fx_wait_u64(x, &fx_w(x)->words[x->rank][word], val,
			   word < x->size * DFG_XPORT_SLOTS ?
			   word / DFG_XPORT_SLOTS : x->size, now);
}

static __u64 fx_peek(struct dfg_xport *x, unsigned int word)
{
	return atomic_load(&fx_w(x)->words[x->rank][word]);
}

static int fx_msg_send(struct dfg_xport *x, unsigned int peer,
		       const void *buf, size_t len)
{
	struct world *w = fx_w(x);
	__u64 h = atomic_load(&w->head[x->rank][peer]);
	int ret;

	if (len > DFG_XPORT_MSG_MAX)
		return -EINVAL;
	if (h >= MBOX_DEPTH) {
		ret = fx_wait_u64(x, &w->tail[x->rank][peer],
				  h + 1 - MBOX_DEPTH, peer, NULL);
		if (ret)
			return ret;
	}
	w->box[x->rank][peer][h % MBOX_DEPTH].len = len;
	memcpy(w->box[x->rank][peer][h % MBOX_DEPTH].data, buf, len);
	atomic_store(&w->head[x->rank][peer], h + 1);
	fx_ring(w, peer);
	return 0;
}

static int fx_msg_recv(struct dfg_xport *x, unsigned int src, void *buf,
		       size_t cap)
{
	struct world *w = fx_w(x);
	__u64 t = atomic_load(&w->tail[src][x->rank]);
	int len, ret;

	ret = fx_wait_u64(x, &w->head[src][x->rank], t + 1, src, NULL);
	if (ret)
		return ret;
	len = w->box[src][x->rank][t % MBOX_DEPTH].len;
	if ((size_t)len <= cap)
		memcpy(buf, w->box[src][x->rank][t % MBOX_DEPTH].data, len);
	atomic_store(&w->tail[src][x->rank], t + 1);
	fx_ring(w, src);
	return (size_t)len <= cap ? len : -EMSGSIZE;
}

static void *fx_inbox(struct dfg_xport *x, unsigned int src,
		      unsigned int dst, __u64 seq, size_t *size)
{
	if (fx_w(x)->no_ptr || src >= x->size || dst >= x->size)
		return NULL;
	*size = FX_SLOT;
	return fx_w(x)->inbox[dst][src][seq & 1];
}

static int fx_wait_begun(struct dfg_xport *x, unsigned int peer, __u64 seq)
{
	return fx_wait_u64(x, &fx_w(x)->cur[peer], seq, peer, NULL);
}

static int fx_begin(struct dfg_xport *x, __u64 seq)
{
	x->seq = seq;
	atomic_store(&fx_w(x)->cur[x->rank], seq);
	fx_ring_all(x);
	return 0;
}

static int fx_abort(struct dfg_xport *x, __u64 seq)
{
	atomic_store(&fx_w(x)->aborted[x->rank], seq);
	fx_ring_all(x);
	return 0;
}

static int fx_broken(struct dfg_xport *x)
{
	return atomic_load(&fx_w(x)->broken) ||
	       atomic_load(&((struct fx *)x)->broken) ? -EOWNERDEAD : 0;
}

static void fx_release(struct dfg_xport *x)
{
	(void)x;
}

static void fx_destroy(struct dfg_xport *x)
{
	(void)x;
}

static const struct dfg_xport_ops fx_ops = {
	.name = "test", .expose = fx_expose, .unexpose = fx_unexpose,
	.peer_ptr = fx_peer_ptr, .get = fx_get, .put = fx_put,
	.complete = fx_complete, .flush = fx_flush, .notify = fx_notify,
	.fadd = fx_fadd, .wait = fx_wait, .peek = fx_peek,
	.msg_send = fx_msg_send, .msg_recv = fx_msg_recv,
	.inbox = fx_inbox, .wait_begun = fx_wait_begun,
	.begin = fx_begin, .abort = fx_abort, .broken = fx_broken,
	.release = fx_release,
	.destroy = fx_destroy,
};

/*
 * The network's operations of the put algorithm over the in-process
 * transport (the hierarchy's all-to-all runs it among the leaders):
 * puts are copies made at once, so nothing is left to complete locally;
 * each rings the peer's bell for its waiters.
 */
static int fx_put_ring(struct dfg_xport *x, unsigned int peer,
		       const struct dfg_xkey *key, size_t off,
		       const void *local, const struct dfg_xkey *lkey,
		       size_t len)
{
	int ret = fx_put(x, peer, key, off, local, lkey, len);

	if (ret >= 0 && peer < x->size)
		fx_ring(fx_w(x), peer);
	return ret;
}

static int fx_fence(struct dfg_xport *x)
{
	(void)x;
	atomic_thread_fence(memory_order_seq_cst);
	return 0;
}

static int fx_complete_local(struct dfg_xport *x)
{
	(void)x;
	return 0;
}

static int fx_wait_eq(struct dfg_xport *x, const __u64 *word, __u64 value,
		      unsigned int src)
{
	_Atomic __u32 *bell = &fx_w(x)->bell[x->rank];
	struct timespec tmo = { .tv_nsec = 100 * 1000 * 1000 };
	__u32 b;
	int ret;

	for (;;) {
		b = atomic_load(bell);
		if (__atomic_load_n(word, __ATOMIC_ACQUIRE) == value)
			return 0;
		ret = fx_check(x, src);
		if (ret && __atomic_load_n(word, __ATOMIC_ACQUIRE) != value)
			return ret;
		syscall(SYS_futex, bell, FUTEX_WAIT_PRIVATE, b, &tmo, NULL, 0);
	}
}

/* fx_ops and the above: set up by fx_net_init(). */
static struct dfg_xport_ops fx_net_ops;

static void fx_net_init(void)
{
	fx_net_ops = fx_ops;
	fx_net_ops.name = "test-net";
	fx_net_ops.put = fx_put_ring;
	fx_net_ops.fence = fx_fence;
	fx_net_ops.complete_local = fx_complete_local;
	fx_net_ops.wait_eq = fx_wait_eq;
}

/* ------------------------------------------------------------------------
 * Algorithms over the in-process transport
 * ------------------------------------------------------------------------
 */

struct rank_ctx {
	struct world		*w;
	struct fx		fx;
	struct late		late;
	struct dfg_team		t;
	unsigned int		rank;
	int			failures;
	char			msg[200];
};

static const enum dfg_coll_algo red_algos[] = {
	DFG_ALGO_RHALVING, DFG_ALGO_RING, DFG_ALGO_DIRECT, DFG_ALGO_INBOX,
};
static const size_t counts[] = { 1, 3, 17, 100, 1000, 40000 };

static void fail(struct rank_ctx *c, const char *what, int ret)
{
	if (!c->failures++)
		snprintf(c->msg, sizeof(c->msg), "rank %u: %s (%d)", c->rank,
			 what, ret);
}

/* A rank's inputs of every rank, and its own buffers. */
static void free_bufs(unsigned int n, void **in, char *sbuf, char *rbuf,
		      char *ref)
{
	for (unsigned int r = 0; r < n; r++)
		free(in[r]);
	free(in);
	free(sbuf);
	free(rbuf);
	free(ref);
}

/*
 * Rank @r of @n in world @w, as a joined team would be (DFG_COLL_PREV
 * read as dfg_team_join() reads it); @late: the transport completes late
 * (xport_late.h), seeded by size and rank (which transfers are held
 * together still depends on the threads' timing).
 */
static void rank_ctx_init(struct rank_ctx *c, struct world *w,
			  unsigned int r, unsigned int n, bool late)
{
	c->w = w;
	c->rank = r;
	c->fx = (struct fx){
		.x = { .ops = &fx_ops, .rank = r, .size = n },
		.w = w,
	};
	c->t = (struct dfg_team){
		.rank = r, .size = n, .x = &c->fx.x, .graph_fd = -1,
		.inbox_parity = dfg_coll_prev("ring"),
	};
	if (late) {
		late_init(&c->late, &c->fx.x, n * 1000 + r);
		c->t.x = &c->late.x;
	}
	c->t.stash = calloc(n, sizeof(*c->t.stash));
}

/* Every member runs the same sequence; each checks its own results. */
static void *rank_main(void *arg)
{
	struct rank_ctx *c = arg;
	struct dfg_team *t = &c->t;
	unsigned int n = t->size, call = 0;
	size_t maxc = counts[sizeof(counts) / sizeof(counts[0]) - 1] * n;
	void **in = calloc(n, sizeof(*in));
	char *sbuf = malloc(maxc * 8), *rbuf = malloc(maxc * 8);
	char *ref = malloc(maxc * 8);
	int ret;

	for (unsigned int r = 0; r < n; r++)
		in[r] = malloc(maxc * 8);
	for (unsigned int ai = 0; ai < sizeof(red_algos) /
	     sizeof(red_algos[0]); ai++) {
		enum dfg_coll_algo algo = red_algos[ai];

		t->force[DFG_COLL_ALLREDUCE] = algo;
		t->force[DFG_COLL_REDUCE_SCATTER] = algo;
		t->force[DFG_COLL_REDUCE] = algo == DFG_ALGO_RING ?
					    DFG_ALGO_RHALVING : algo;
		t->force[DFG_COLL_ALLGATHER] = algo == DFG_ALGO_RHALVING ?
					       DFG_ALGO_DIRECT : algo;
		for (int dt = 0; dt < DFG_DTYPE_NR; dt++) {
			for (int op = 0; op < DFG_OP_NR; op++) {
				for (size_t ci = 0; ci < sizeof(counts) /
				     sizeof(counts[0]); ci++) {
					size_t cnt = counts[ci];
					struct dfg_reducer red;
					size_t e;

					/* big ones: sums only, fewer runs */
					if (cnt > 1000 &&
					    (op || dt != DFG_FLOAT64))
						continue;
					dfg_reducer_get(op, dt, &red);
					e = red.esize;
					call++;
					for (unsigned int r = 0; r < n; r++)
						ref_fill(in[r], cnt * n, dt, r,
							 call);
					memcpy(sbuf, in[c->rank], cnt * n * e);

					/* allreduce */
					ret = dfg_allreduce(t, sbuf, rbuf, cnt,
							    dt, op);
					if (ret)
						fail(c, "allreduce", ret);
					/* a forced inbox may not fit */
					if (algo == DFG_ALGO_INBOX && n > 1 &&
					    t->x->ops->inbox &&
					    !c->w->no_ptr &&
					    (cnt * e <= FX_SLOT) !=
					    (t->last[DFG_COLL_ALLREDUCE] ==
					     DFG_ALGO_INBOX))
						fail(c, "inbox not taken", 0);
					ref_reduce(t->last[DFG_COLL_ALLREDUCE],
						   n, in, cnt, &red, ref);
					if (memcmp(ref, rbuf, cnt * e))
						fail(c, "allreduce result", 0);
					/* in place */
					memcpy(rbuf, in[c->rank], cnt * e);
					ret = dfg_allreduce(t, DFG_IN_PLACE,
							    rbuf, cnt, dt, op);
					if (ret || memcmp(ref, rbuf, cnt * e))
						fail(c, "allreduce in place",
						     ret);
					/* reduce, root moving */
					memset(rbuf, 0, cnt * e);
					ret = dfg_reduce(t, sbuf, rbuf, cnt, dt,
							 op, call % n);
					ref_reduce(t->last[DFG_COLL_REDUCE],
						   n, in, cnt, &red, ref);
					if (ret || (c->rank == call % n &&
						    memcmp(ref, rbuf, cnt * e)))
						fail(c, "reduce", ret);
					/* reduce_scatter of cnt per rank */
					ret = dfg_reduce_scatter(t, sbuf, rbuf,
								 cnt, dt, op);
					ref_reduce(t->last[
						   DFG_COLL_REDUCE_SCATTER],
						   n, in, cnt * n, &red, ref);
					if (ret || memcmp(ref + c->rank * cnt *
							  e, rbuf, cnt * e))
						fail(c, "reduce_scatter", ret);
					memcpy(rbuf, in[c->rank], cnt * n * e);
					ret = dfg_reduce_scatter(t, DFG_IN_PLACE,
								 rbuf, cnt, dt,
								 op);
					if (ret || memcmp(ref + c->rank * cnt *
							  e, rbuf, cnt * e))
						fail(c, "reduce_scatter in place",
						     ret);
				}
			}
		}
		/* allgather and broadcast of bytes */
		for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]);
		     ci++) {
			size_t b = counts[ci] * 4;

			call++;
			for (unsigned int r = 0; r < n; r++)
				ref_fill(in[r], counts[ci], DFG_INT32, r, call);
			ret = dfg_allgather(t, in[c->rank], rbuf, b);
			for (unsigned int r = 0; r < n && !ret; r++)
				if (memcmp(rbuf + r * b, in[r], b))
					ret = -EBADMSG;
			if (ret)
				fail(c, "allgather", ret);
			memcpy(rbuf + c->rank * b, in[c->rank], b);
			ret = dfg_allgather(t, DFG_IN_PLACE, rbuf, b);
			for (unsigned int r = 0; r < n && !ret; r++)
				if (memcmp(rbuf + r * b, in[r], b))
					ret = -EBADMSG;
			if (ret)
				fail(c, "allgather in place", ret);
			memcpy(rbuf, in[c->rank], b);
			ret = dfg_broadcast(t, rbuf, b, call % n);
			if (ret || memcmp(rbuf, in[call % n], b))
				fail(c, "broadcast", ret);
			ret = dfg_barrier(t);
			if (ret)
				fail(c, "barrier", ret);
		}
	}
	/* Errors: every member passes the same bad argument. */
	if (dfg_allreduce(t, sbuf, rbuf, 4, DFG_INT32, DFG_OP_NR) != -EINVAL)
		fail(c, "unknown op", 0);
	if (dfg_allreduce(t, sbuf, rbuf, 4, DFG_DTYPE_NR, DFG_SUM) != -EINVAL)
		fail(c, "unknown type", 0);
	if (dfg_allreduce(t, sbuf, NULL, 4, DFG_INT32, DFG_SUM) != -EINVAL)
		fail(c, "no rbuf", 0);
	if (dfg_allreduce(t, sbuf, sbuf + 4, 4, DFG_INT32, DFG_SUM) !=
	    -EINVAL)
		fail(c, "overlap", 0);
	if (dfg_reduce(t, sbuf, rbuf, 4, DFG_INT32, DFG_SUM, n) != -EINVAL)
		fail(c, "bad root", 0);
	if (dfg_allreduce(t, sbuf, rbuf, SIZE_MAX / 2, DFG_INT64,
			  DFG_SUM) != -EOVERFLOW)
		fail(c, "overflow", 0);
	/* Mismatched sizes: the call fails everywhere, nobody hangs. */
	if (n > 1) {
		ret = dfg_allreduce(t, sbuf, rbuf, 64 + c->rank, DFG_INT32,
				    DFG_SUM);
		if (ret != -EINVAL && ret != -EPROTO)
			fail(c, "mismatched count", ret);
	}
	/* ... and the team goes on working. */
	ret = dfg_barrier(t);
	if (ret)
		fail(c, "barrier after errors", ret);
	ref_fill(sbuf, 10, DFG_INT64, c->rank, 0);
	ret = dfg_allreduce(t, sbuf, rbuf, 10, DFG_INT64, DFG_SUM);
	for (unsigned int r = 0; r < n; r++)
		ref_fill(in[r], 10, DFG_INT64, r, 0);
	{
		struct dfg_reducer red;

		dfg_reducer_get(DFG_SUM, DFG_INT64, &red);
		ref_reduce(DFG_ALGO_DIRECT, n, in, 10, &red, ref);
	}
	if (ret || memcmp(ref, rbuf, 80))
		fail(c, "allreduce after errors", ret);

	free_bufs(n, in, sbuf, rbuf, ref);
	return NULL;
}

/*
 * @late: the ranks' transport is xport_late.h's over the get/put path:
 * every transfer completes late and out of order.
 */
static void run_world(struct __test_metadata *_metadata, unsigned int n,
		      bool no_ptr, bool late)
{
	struct world *w = calloc(1, sizeof(*w));
	struct rank_ctx *c = calloc(n, sizeof(*c));
	unsigned long held = 0, reordered = 0, early = 0;
	pthread_t th[W_MAX];

	ASSERT_NE(NULL, w);
	w->size = n;
	w->no_ptr = no_ptr;
	for (unsigned int r = 0; r < n; r++) {
		rank_ctx_init(&c[r], w, r, n, late);
		ASSERT_EQ(0, pthread_create(&th[r], NULL, rank_main, &c[r]));
	}
	for (unsigned int r = 0; r < n; r++)
		pthread_join(th[r], NULL);
	for (unsigned int r = 0; r < n; r++) {
		EXPECT_EQ(0, c[r].failures) TH_LOG("n=%u no_ptr=%d late=%d: %s",
						     n, no_ptr, late,
						     c[r].msg);
		if (c[r].t.scratch.mem) {
			fx_unexpose(&c[r].fx.x, &c[r].t.scratch.key);
			munmap(c[r].t.scratch.mem, c[r].t.scratch.size);
		}
		free(c[r].t.stash);
		dfg_inbox_free(&c[r].t);
		held += c[r].late.held;
		reordered += c[r].late.reordered;
		early += c[r].late.early;
		EXPECT_EQ(0, c[r].late.nr);
		late_destroy(&c[r].late.x);
	}
	/*
	 * The deferred paths really ran: held, reordered, ahead of time
	 * (only recursive halving's overlap keeps two transfers in flight:
	 * with DFG_COLL_OVERLAP=0 nothing can be reordered).
	 */
	if (late && n > 1) {
		const char *ov = getenv("DFG_COLL_OVERLAP");

		EXPECT_LT(0, held);
		if (!ov || strcmp(ov, "0")) {
			EXPECT_LT(0, reordered);
			EXPECT_LT(0, early);
		} else {
			EXPECT_EQ(0, reordered);
		}
		TH_LOG("n=%u: %lu transfers held back, %lu carried out "
		       "before an earlier one, %lu ahead of their ticket", n,
		       held, reordered, early);
	}
	/* Every per-call exposure was undone. */
	EXPECT_EQ(0, atomic_load(&w->exposed));
	free(c);
	free(w);
}

/* ------------------------------------------------------------------------
 * The hierarchy (coll/hier.c) over in-process machines
 * ------------------------------------------------------------------------
 */

/*
 * A rank of a team spread over "machines": the team's transport is @c's
 * (one world, late or not), its machine's node team another world's.
 * @key: per rank, its machine; @victim: the rank that dies in the last
 * call (-1: none); @dkind: the others' call then, or DFG_COLL_KIND_NR:
 * the victim does not die, its own network transport breaks (it refuses
 * every later call, which the others must not wait for).
 */
struct hrank {
	struct rank_ctx		c;
	struct world		*nw;
	struct fx		nfx;
	unsigned int		m;
	unsigned int		lr;
	const unsigned int	*key;
	int			victim;
	enum dfg_coll_kind	dkind;
	bool			dv;
};

static const enum dfg_coll_kind hier_kinds[] = {
	DFG_COLL_ALLREDUCE, DFG_COLL_REDUCE, DFG_COLL_REDUCE_SCATTER,
	DFG_COLL_BROADCAST, DFG_COLL_ALLGATHER, DFG_COLL_BARRIER,
};

static bool hier_used(struct dfg_team *t, enum dfg_coll_kind kind)
{
	return dfg_coll_last_algo(t, kind) == DFG_ALGO_HIER;
}

/* What the victim's death looks like to the others: both worlds broken. */
static void hier_die(struct hrank *h)
{
	usleep(200 * 1000);
	atomic_store(&h->c.w->broken, 1);
	atomic_store(&h->nw->broken, 1);
	for (unsigned int r = 0; r < W_MAX; r++) {
		fx_ring(h->c.w, r);
		fx_ring(h->nw, r);
	}
}

/* Bytes rank @i sends rank @j in the hierarchy's alltoallv: uneven, 0s. */
static size_t hier_vcount(unsigned int i, unsigned int j, size_t b)
{
	return b * ((i * 7 + j * 3) % 5) / 4;
}

/*
 * Rank @i's counts and displacements in an alltoallv of @b (@recv: what
 * it receives from each rank, else what it sends each): blocks placed
 * in reverse rank order, 3 bytes apart.
 */
static void hier_vlayout(unsigned int n, unsigned int i, size_t b, bool recv,
			 size_t *cnt, size_t *displ)
{
	size_t at = 0;

	for (unsigned int r = n; r-- > 0;) {
		cnt[r] = recv ? hier_vcount(r, i, b) : hier_vcount(i, r, b);
		displ[r] = at;
		at += cnt[r] + 3;
	}
}

/*
 * alltoallv of @b on rank @me from inputs @in: 0 and every block in
 * place, or the call's error; @algo forced.
 */
static int hier_alltoallv(struct dfg_team *t, unsigned int me, void **in,
			  char *rbuf, size_t b, enum dfg_coll_algo algo)
{
	unsigned int n = t->size;
	size_t sc[W_MAX], sd[W_MAX], rc[W_MAX], rd[W_MAX], sc_i[W_MAX];
	size_t sd_i[W_MAX];
	int ret;

	hier_vlayout(n, me, b, false, sc, sd);
	hier_vlayout(n, me, b, true, rc, rd);
	dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, algo);
	memset(rbuf, 0x3c, rd[0] + rc[0]);
	/* Every count 0: no buffers at all. */
	ret = dfg_alltoallv(t, b ? in[me] : NULL, sc, sd, b ? rbuf : NULL, rc,
			    rd);
	for (unsigned int i = 0; !ret && i < n; i++) {
		hier_vlayout(n, i, b, false, sc_i, sd_i);
		if (memcmp(rbuf + rd[i], (char *)in[i] + sd_i[me], rc[i]))
			ret = -EBADMSG;
		/* the gaps untouched */
		if (i && rbuf[rd[i] + rc[i]] != 0x3c)
			ret = -EBADMSG;
	}
	return ret;
}

static void *hier_main(void *arg)
{
	struct hrank *h = arg;
	struct rank_ctx *c = &h->c;
	struct dfg_team *t = &c->t, *nt = NULL;
	unsigned int n = t->size, call = 0;
	size_t maxc = 40000 * n;
	bool a2a = t->x->ops->wait_eq;
	void **in = calloc(n, sizeof(*in));
	char *sbuf = malloc(maxc * 8), *rbuf = malloc(maxc * 8);
	char *ref = malloc(maxc * 8);
	int ret;

	for (unsigned int r = 0; r < n; r++)
		in[r] = malloc(maxc * 8);
	if (h->m > 1) {
		ret = dfg_team_new(h->m, h->lr, &nt);
		if (ret) {
			fail(c, "node team", ret);
			goto out;
		}
		nt->x = &h->nfx.x;
	}
	ret = dfg_hier_setup(t, h->key, nt, &t->hier);
	if (ret) {
		fail(c, "dfg_hier_setup", ret);
		if (nt)
			dfg_team_leave(nt);
		goto out;
	}
	for (int dt = 0; dt < DFG_DTYPE_NR; dt++) {
		for (int op = 0; op < DFG_OP_NR; op++) {
			for (size_t ci = 0; ci < sizeof(counts) /
			     sizeof(counts[0]); ci++) {
				size_t cnt = counts[ci], e;
				struct dfg_reducer red;

				if (cnt > 1000 && (op || dt != DFG_FLOAT64))
					continue;
				dfg_reducer_get(op, dt, &red);
				e = red.esize;
				call++;
				for (unsigned int r = 0; r < n; r++)
					ref_fill(in[r], cnt * n, dt, r, call);
				memcpy(sbuf, in[c->rank], cnt * n * e);
				ref_hier(n, h->key, in, cnt, &red, ref);
				ret = dfg_allreduce(t, sbuf, rbuf, cnt, dt, op);
				if (ret || memcmp(ref, rbuf, cnt * e))
					fail(c, "hier allreduce", ret);
				memcpy(rbuf, in[c->rank], cnt * e);
				ret = dfg_allreduce(t, DFG_IN_PLACE, rbuf, cnt,
						    dt, op);
				if (ret || memcmp(ref, rbuf, cnt * e))
					fail(c, "hier allreduce in place", ret);
				/* every root, and in place at the root */
				for (unsigned int root = 0; root < n; root++) {
					bool ip = (call + root) & 1;

					memcpy(rbuf, in[c->rank], cnt * e);
					ret = dfg_reduce(t, ip ? DFG_IN_PLACE :
							 sbuf, rbuf, cnt, dt,
							 op, root);
					if (ret || (c->rank == root &&
						    memcmp(ref, rbuf, cnt * e)))
						fail(c, "hier reduce", ret);
				}
				ref_hier(n, h->key, in, cnt * n, &red, ref);
				ret = dfg_reduce_scatter(t, sbuf, rbuf, cnt, dt,
							 op);
				if (ret || memcmp(ref + c->rank * cnt * e, rbuf,
						  cnt * e))
					fail(c, "hier reduce_scatter", ret);
				memcpy(rbuf, in[c->rank], cnt * n * e);
				ret = dfg_reduce_scatter(t, DFG_IN_PLACE, rbuf,
							 cnt, dt, op);
				if (ret || memcmp(ref + c->rank * cnt * e, rbuf,
						  cnt * e))
					fail(c, "hier reduce_scatter in place",
					     ret);
			}
		}
	}
	for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
		size_t b = counts[ci] * 4;

		call++;
		for (unsigned int r = 0; r < n; r++)
			ref_fill(in[r], counts[ci], DFG_INT32, r, call);
		for (unsigned int root = 0; root < n; root++) {
			memcpy(rbuf, in[c->rank], b);
			ret = dfg_broadcast(t, rbuf, b, root);
			if (ret || memcmp(rbuf, in[root], b))
				fail(c, "hier broadcast", ret);
		}
	}
	/*
	 * allgather: the flat layout, whatever the machines (interleaved
	 * ranks included); odd sizes, staged and exposed, in place; then a
	 * barrier.
	 */
	for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
		size_t b = counts[ci] * 4 + ci;

		call++;
		for (unsigned int r = 0; r < n; r++)
			ref_fill(in[r], (b + 3) / 4, DFG_INT32, r, call);
		ref_allgather(n, in, b, ref);
		/* Forced flat on the same team: the same layout. */
		dfg_coll_set_algo(t, DFG_COLL_ALLGATHER, DFG_ALGO_DIRECT);
		dfg_coll_set_algo(t, DFG_COLL_BARRIER, DFG_ALGO_DIRECT);
		memset(rbuf, 0x3c, n * b);
		ret = dfg_allgather(t, in[c->rank], rbuf, b);
		if (ret || memcmp(ref, rbuf, n * b) ||
		    dfg_coll_last_algo(t, DFG_COLL_ALLGATHER) !=
		    DFG_ALGO_DIRECT)
			fail(c, "flat allgather on a hier team", ret);
		ret = dfg_barrier(t);
		if (ret || dfg_coll_last_algo(t, DFG_COLL_BARRIER) !=
		    DFG_ALGO_DIRECT)
			fail(c, "flat barrier on a hier team", ret);
		dfg_coll_set_algo(t, DFG_COLL_ALLGATHER, DFG_ALGO_AUTO);
		dfg_coll_set_algo(t, DFG_COLL_BARRIER, DFG_ALGO_AUTO);
		memset(rbuf, 0xa5, n * b);
		ret = dfg_allgather(t, in[c->rank], rbuf, b);
		if (ret || memcmp(ref, rbuf, n * b))
			fail(c, "hier allgather", ret);
		memset(rbuf, 0x5a, n * b);
		memcpy(rbuf + c->rank * b, in[c->rank], b);
		ret = dfg_allgather(t, DFG_IN_PLACE, rbuf, b);
		if (ret || memcmp(ref, rbuf, n * b))
			fail(c, "hier allgather in place", ret);
		ret = dfg_barrier(t);
		if (ret)
			fail(c, "hier barrier", ret);
	}
	/*
	 * alltoall, where the network has the put algorithm's operations
	 * (not over the late transport): block j of rank i lands as block
	 * i on rank j, whatever the machines; hier forced at every size
	 * (the leaders' rendezvous at the largest), the table's choice
	 * (hier, and put above 2 KiB blocks) between.
	 */
	for (size_t ci = 0; a2a && ci < sizeof(counts) / sizeof(counts[0]);
	     ci++) {
		size_t b = counts[ci] * 4 + ci;
		int ok;

		call++;
		for (unsigned int r = 0; r < n; r++)
			ref_fill(in[r], (n * b + 3) / 4, DFG_INT32, r, call);
		dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, ci & 1 ?
				  DFG_ALGO_HIER : DFG_ALGO_AUTO);
		memset(rbuf, 0x3c, n * b);
		ret = dfg_alltoall(t, in[c->rank], rbuf, b);
		/* the table's choice: hier up to 2 KiB blocks, else put */
		ok = !ret && hier_used(t, DFG_COLL_ALLTOALL) ==
			     ((ci & 1) || b <= 2048);
		for (unsigned int r = 0; r < n; r++)
			ok &= !memcmp(rbuf + r * b,
				      (char *)in[r] + c->rank * b, b);
		if (!ok)
			fail(c, "hier alltoall", ret);
	}
	/*
	 * alltoallv: uneven counts, zeros among them, blocks in reverse
	 * rank order with gaps, bit for bit; hier forced (the leaders'
	 * rendezvous at the largest), the table's choice (put) between;
	 * then every count 0, without buffers.
	 */
	for (size_t ci = 0; a2a && ci <= sizeof(counts) / sizeof(counts[0]);
	     ci++) {
		bool zero = ci == sizeof(counts) / sizeof(counts[0]);
		size_t b = zero ? 0 : counts[ci] * 4 + ci;
		enum dfg_coll_algo algo = ci & 1 ? DFG_ALGO_HIER :
					  DFG_ALGO_AUTO;

		call++;
		for (unsigned int r = 0; r < n; r++)
			ref_fill(in[r], (n * (b + 3) + 3) / 4, DFG_INT32, r,
				 call);
		ret = hier_alltoallv(t, c->rank, in, rbuf, b, algo);
		/* the table's choice: put (hier not measured yet) */
		if (ret || hier_used(t, DFG_COLL_ALLTOALL) != (algo ==
							      DFG_ALGO_HIER))
			fail(c, zero ? "hier alltoallv, zero counts" :
			     "hier alltoallv", ret);
	}
	dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, DFG_ALGO_AUTO);
	for (size_t k = 0; k < sizeof(hier_kinds) / sizeof(hier_kinds[0]);
	     k++)
		if (!hier_used(t, hier_kinds[k]))
			fail(c, "hier not chosen", hier_kinds[k]);
	/*
	 * alltoallv's counts disagree: rank 0 expects a byte more from the
	 * last rank (another machine), then rank 1 a byte more from rank 0
	 * (its machine in 2x2 and 3+1+2, another in 2+3 interleaved), then
	 * rank 1's arguments are unusable: -EINVAL on every rank, whichever
	 * pair, and the next call works.
	 */
	dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, DFG_ALGO_HIER);
	for (int i = 0; a2a && i < 4; i++) {
		size_t sc[W_MAX], sd[W_MAX], rc[W_MAX], rd[W_MAX];
		bool good = i == 3;

		hier_vlayout(n, c->rank, 64, false, sc, sd);
		hier_vlayout(n, c->rank, 64, true, rc, rd);
		if (i == 0 && c->rank == 0)
			rc[n - 1]++;
		if (i == 1 && c->rank == 1)
			rc[0]++;
		ret = dfg_alltoallv(t, in[c->rank], sc, sd, rbuf,
				    i == 2 && c->rank == 1 ? NULL : rc, rd);
		if (good ? ret != 0 : ret != -EINVAL)
			fail(c, good ? "hier alltoallv after errors" :
			     "hier alltoallv mismatched", ret);
		if (!hier_used(t, DFG_COLL_ALLTOALL))
			fail(c, "hier alltoallv not chosen", i);
	}
	dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, DFG_ALGO_AUTO);
	/*
	 * alltoall's blocks differ between ranks, then one rank's
	 * arguments are unusable: -EINVAL everywhere, and the next call
	 * works (the leaders' exchange ran to its end both times).
	 */
	for (int i = 0; a2a && i < 3; i++) {
		bool good = i == 2;
		const void *sb = !good && i && c->rank == 1 ? DFG_IN_PLACE :
				 in[c->rank];
		int ok;

		ret = dfg_alltoall(t, sb, rbuf, i ? 64 : 64 + c->rank);
		/* -EPROTO: told by an abort (this transport has no reasons) */
		ok = good ? !ret : ret == -EINVAL || ret == -EPROTO;
		for (unsigned int r = 0; good && r < n; r++)
			ok &= !memcmp(rbuf + r * 64,
				      (char *)in[r] + c->rank * 64, 64);
		if (!ok || !hier_used(t, DFG_COLL_ALLTOALL))
			fail(c, good ? "hier alltoall after errors" :
			     "hier alltoall mismatched", ret);
	}
	/* Mismatched counts: an error everywhere, nobody hangs... */
	ret = dfg_allreduce(t, sbuf, rbuf, 64 + c->rank, DFG_INT32, DFG_SUM);
	if (ret != -EINVAL && ret != -EPROTO)
		fail(c, "hier mismatched count", ret);
	/* ... and the team goes on. */
	ret = dfg_barrier(t);
	if (ret)
		fail(c, "barrier after errors", ret);
	ret = dfg_allgather(t, sbuf, rbuf, 64 + c->rank);
	if (ret != -EINVAL && ret != -EPROTO)
		fail(c, "hier allgather mismatched count", ret);
	ret = dfg_barrier(t);
	if (ret || !hier_used(t, DFG_COLL_BARRIER))
		fail(c, "hier barrier after errors", ret);
	{
		struct dfg_reducer red;

		dfg_reducer_get(DFG_SUM, DFG_FLOAT64, &red);
		for (unsigned int r = 0; r < n; r++)
			ref_fill(in[r], 100, DFG_FLOAT64, r, 0);
		ref_hier(n, h->key, in, 100, &red, ref);
		ret = dfg_allreduce(t, in[c->rank], rbuf, 100, DFG_FLOAT64,
				    DFG_SUM);
		if (ret || memcmp(ref, rbuf, 800) ||
		    !hier_used(t, DFG_COLL_ALLREDUCE))
			fail(c, "hier allreduce after errors", ret);
	}
	/*
	 * A live member's transport breaks: it refuses the next calls, and
	 * the others fail them (an abort), rather than wait for it.
	 */
	if (h->victim >= 0 && h->dkind == DFG_COLL_KIND_NR) {
		struct dfg_hier *hh = t->hier;
		unsigned int me = c->rank, v = h->victim;
		/*
		 * Who waits on the victim's words or its leader's: its
		 * machine's members and the leaders. A non-leader elsewhere
		 * waits on its own leader's node words, which the leader's
		 * next call may raise before this rank looks (a wait takes
		 * a later call's value for its own: a known race, DESIGN.md),
		 * so its barrier may end without the victim.
		 */
		bool near = h->key[me] == h->key[v] ||
			    hh->leader[hh->node_of[me]] == me;

		if (me == v) {
			usleep(200 * 1000);
			atomic_store(&c->fx.broken, 1);
		}
		for (int i = 0; i < 2; i++) {
			ret = dfg_barrier(t);
			if (me == v ? ret != -EOWNERDEAD :
			    near ? ret != -EPROTO : ret && ret != -EPROTO)
				fail(c, "barrier with a refusing member", ret);
		}
		ret = dfg_allreduce(t, sbuf, rbuf, 1000, DFG_FLOAT64, DFG_SUM);
		if (c->rank == (unsigned int)h->victim ?
		    ret != -EOWNERDEAD : ret != -EPROTO)
			fail(c, "allreduce with a refusing member", ret);
	} else if (h->victim >= 0) {
		/* A member dies while the others are in a call: all fail. */
		if (c->rank == (unsigned int)h->victim) {
			hier_die(h);
		} else {
			if (h->dkind == DFG_COLL_ALLGATHER)
				ret = dfg_allgather(t, sbuf, rbuf, 1000);
			else if (h->dkind == DFG_COLL_BARRIER)
				ret = dfg_barrier(t);
			else if (h->dkind == DFG_COLL_ALLTOALL && h->dv)
				ret = hier_alltoallv(t, c->rank, in, rbuf,
						     1000, DFG_ALGO_HIER);
			else if (h->dkind == DFG_COLL_ALLTOALL)
				ret = dfg_alltoall(t, sbuf, rbuf, 1000);
			else
				ret = dfg_allreduce(t, sbuf, rbuf, 1000,
						    DFG_FLOAT64, DFG_SUM);
			if (ret != -EOWNERDEAD)
				fail(c, "survivor's error", ret);
			if (dfg_barrier(t) != -EOWNERDEAD)
				fail(c, "broken for good", 0);
		}
	}
	dfg_hier_free(t->hier);
	t->hier = NULL;
out:
	free_bufs(n, in, sbuf, rbuf, ref);
	return NULL;
}

/*
 * @n ranks on machines @key (late: the network transport completes late);
 * @victim dies while the others are in a call of @dkind (allreduce,
 * allgather, barrier or alltoall; @dv: alltoallv).
 */
static void run_hier_dv(struct __test_metadata *_metadata, unsigned int n,
			const unsigned int *key, bool late, int victim,
			enum dfg_coll_kind dkind, bool dv)
{
	struct world *w = calloc(1, sizeof(*w));
	struct world *nw = calloc(n, sizeof(*nw));
	struct hrank *h = calloc(n, sizeof(*h));
	pthread_t th[W_MAX];

	ASSERT_NE(NULL, w);
	ASSERT_NE(NULL, nw);
	ASSERT_NE(NULL, h);
	w->size = n;
	/* The network: no load/store, no inbox. */
	w->no_ptr = true;
	fx_net_init();
	for (unsigned int r = 0; r < n; r++) {
		struct rank_ctx *c = &h[r].c;

		for (unsigned int q = 0; q < n; q++) {
			if (key[q] != key[r])
				continue;
			if (q < r)
				h[r].lr++;
			h[r].m++;
		}
		h[r].nw = &nw[key[r]];
		h[r].nw->size = h[r].m;
		h[r].nfx = (struct fx){
			.x = { .ops = &fx_ops, .rank = h[r].lr,
			       .size = h[r].m },
			.w = h[r].nw,
		};
		h[r].key = key;
		h[r].victim = victim;
		h[r].dkind = dkind;
		h[r].dv = dv;
		rank_ctx_init(c, w, r, n, late);
		/* The put algorithm's operations, not over the late one. */
		if (!late)
			c->fx.x.ops = &fx_net_ops;
	}
	for (unsigned int r = 0; r < n; r++)
		ASSERT_EQ(0, pthread_create(&th[r], NULL, hier_main, &h[r]));
	for (unsigned int r = 0; r < n; r++)
		pthread_join(th[r], NULL);
	for (unsigned int r = 0; r < n; r++) {
		struct rank_ctx *c = &h[r].c;

		EXPECT_EQ(0, c->failures) TH_LOG("n=%u late=%d victim=%d: %s",
						 n, late, victim, c->msg);
		if (c->t.scratch.mem) {
			fx_unexpose(&c->fx.x, &c->t.scratch.key);
			munmap(c->t.scratch.mem, c->t.scratch.size);
		}
		free(c->t.stash);
		dfg_inbox_free(&c->t);
		dfg_put_free(&c->t);
		if (late) {
			EXPECT_EQ(0, c->late.nr);
			late_destroy(&c->late.x);
		}
	}
	/* Every exposure undone, the sub-teams' too (not after a death). */
	if (victim < 0) {
		EXPECT_EQ(0, atomic_load(&w->exposed));
		for (unsigned int k = 0; k < n; k++)
			EXPECT_EQ(0, atomic_load(&nw[k].exposed));
	}
	free(h);
	free(nw);
	free(w);
}

static void run_hier_in(struct __test_metadata *_metadata, unsigned int n,
			const unsigned int *key, bool late, int victim,
			enum dfg_coll_kind dkind)
{
	run_hier_dv(_metadata, n, key, late, victim, dkind, false);
}

static void run_hier(struct __test_metadata *_metadata, unsigned int n,
		     const unsigned int *key, bool late, int victim)
{
	run_hier_in(_metadata, n, key, late, victim, DFG_COLL_ALLREDUCE);
}

/* Machines of 2 and 2, 2 and 3 interleaved, and 3, 1 and 2 (fold). */
static const unsigned int hier_2x2[] = { 0, 0, 1, 1 };
static const unsigned int hier_mix[] = { 0, 1, 0, 1, 1 };
static const unsigned int hier_3[] = { 0, 0, 0, 1, 2, 2 };

TEST(hier_setup)
{
	static const unsigned int flat[] = { 0, 1, 2, 3 };
	static const unsigned int one[] = { 0, 0, 0, 0 };
	struct world *w = calloc(1, sizeof(*w));
	struct fx fx = { .x = { .ops = &fx_ops, .rank = 1, .size = 4 },
			 .w = w };
	struct dfg_team t = { .rank = 1, .size = 4, .x = &fx.x };
	struct dfg_xport net = { .ops = &tbl_net_ops, .size = 4 };
	enum dfg_coll_algo f[DFG_COLL_KIND_NR] = { 0 };
	struct dfg_hier *hh = NULL;
	unsigned int segs = 0;
	struct dfg_team *nt;

	/* Rank 1 of 2x2: not a leader, node rank 1 of 2. */
	ASSERT_NE(NULL, w);
	w->size = 4;
	w->no_ptr = true;	/* the network: no inbox */
	ASSERT_EQ(0, dfg_team_new(2, 1, &nt));
	nt->x = &fx.x;
	EXPECT_EQ(-EINVAL, dfg_hier_setup(&t, flat, NULL, &hh));
	EXPECT_EQ(-EINVAL, dfg_hier_setup(&t, one, nt, &hh));
	EXPECT_EQ(-EINVAL, dfg_hier_setup(&t, hier_2x2, NULL, &hh));
	ASSERT_EQ(0, dfg_hier_setup(&t, hier_2x2, nt, &hh));
	EXPECT_EQ(2, hh->nodes);
	EXPECT_EQ(NULL, hh->lead);
	EXPECT_EQ(2, hh->leader[1]);
	EXPECT_EQ(1, hh->lrank[3]);
	/* The choice: hier where it exists, whatever the size. */
	t.hier = hh;
	EXPECT_EQ(DFG_ALGO_HIER, dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 8));
	EXPECT_EQ(DFG_ALGO_HIER, dfg_coll_pick(&t, DFG_COLL_BROADCAST,
					       SIZE_MAX));
	EXPECT_EQ(DFG_ALGO_HIER, dfg_coll_pick(&t, DFG_COLL_ALLGATHER, 8));
	EXPECT_EQ(DFG_ALGO_HIER, dfg_coll_pick(&t, DFG_COLL_BARRIER, 0));
	/* alltoall: only where the leaders have the put algorithm... */
	EXPECT_NE(DFG_ALGO_HIER, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 8));
	t.force[DFG_COLL_ALLTOALL] = DFG_ALGO_HIER;
	EXPECT_NE(DFG_ALGO_HIER, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 8));
	/* ... there up to 2 KiB blocks, forced at any size */
	t.x = &net;
	EXPECT_EQ(DFG_ALGO_HIER, dfg_coll_pick(&t, DFG_COLL_ALLTOALL,
					       SIZE_MAX));
	t.force[DFG_COLL_ALLTOALL] = DFG_ALGO_AUTO;
	EXPECT_EQ(DFG_ALGO_HIER, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 8));
	EXPECT_EQ(DFG_ALGO_HIER, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 2048));
	EXPECT_EQ(DFG_ALGO_PUT, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 2049));
	/* alltoallv's calls ask with SIZE_MAX bytes: put unless forced */
	EXPECT_EQ(DFG_ALGO_PUT, dfg_coll_pick(&t, DFG_COLL_ALLTOALL,
					      SIZE_MAX));
	EXPECT_EQ(DFG_ALGO_HIER, dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 8));
	t.force[DFG_COLL_ALLTOALL] = DFG_ALGO_PUT;
	EXPECT_EQ(DFG_ALGO_PUT, dfg_coll_pick(&t, DFG_COLL_ALLTOALL, 8));
	t.force[DFG_COLL_ALLTOALL] = DFG_ALGO_AUTO;
	t.x = &fx.x;
	t.force[DFG_COLL_ALLREDUCE] = DFG_ALGO_RING;
	EXPECT_EQ(DFG_ALGO_RING, dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 8));
	dfg_hier_free(hh);
	/* Forced where there is no hierarchy: the table's choice. */
	t.hier = NULL;
	t.force[DFG_COLL_ALLREDUCE] = DFG_ALGO_HIER;
	EXPECT_EQ(DFG_ALGO_DIRECT, dfg_coll_pick(&t, DFG_COLL_ALLREDUCE, 8));
	t.force[DFG_COLL_BARRIER] = DFG_ALGO_HIER;
	EXPECT_EQ(DFG_ALGO_DIRECT, dfg_coll_pick(&t, DFG_COLL_BARRIER, 0));
	EXPECT_FALSE(dfg_coll_algo_valid(DFG_COLL_BARRIER, DFG_ALGO_RING));
	EXPECT_TRUE(dfg_coll_algo_valid(DFG_COLL_REDUCE_SCATTER,
					DFG_ALGO_HIER));
	EXPECT_TRUE(dfg_coll_algo_valid(DFG_COLL_ALLTOALL, DFG_ALGO_HIER));
	EXPECT_EQ(0, dfg_coll_parse_algo("allreduce=hier,broadcast=hier",
					 f, &segs));
	EXPECT_EQ(DFG_ALGO_HIER, f[DFG_COLL_BROADCAST]);
	EXPECT_EQ(0, dfg_coll_parse_algo("allgather=hier,barrier=hier", f,
					 &segs));
	EXPECT_EQ(DFG_ALGO_HIER, f[DFG_COLL_ALLGATHER]);
	EXPECT_EQ(DFG_ALGO_HIER, f[DFG_COLL_BARRIER]);
	EXPECT_EQ(0, dfg_coll_parse_algo("alltoall=hier", f, &segs));
	EXPECT_EQ(DFG_ALGO_HIER, f[DFG_COLL_ALLTOALL]);
	EXPECT_EQ(-EINVAL, dfg_coll_parse_algo("barrier=inbox", f, &segs));
	free(w);
}

/*
 * Every algorithm of every collective for N = 1..8 threads. Each takes
 * some 3.5 s of CPU (sanitized); with the host's 2 CPUs at load 13 that
 * was 22 s, the harness's default being 30 s: the limit is 120 s, over
 * 5 times that.
 */
FIXTURE(world) {
};

FIXTURE_SETUP(world)
{
}

FIXTURE_TEARDOWN(world)
{
}

TEST_F_TIMEOUT(world, algorithms_load_store, 120)
{
	for (unsigned int n = 1; n <= W_MAX; n++)
		run_world(_metadata, n, false, false);
}

TEST_F_TIMEOUT(world, algorithms_get_put, 120)
{
	for (unsigned int n = 1; n <= W_MAX; n++)
		run_world(_metadata, n, true, false);
}

/*
 * The get/put path with every transfer completing late and out of order
 * (xport_late.h): results still bit for bit the serial references.
 */
TEST_F_TIMEOUT(world, algorithms_late, 120)
{
	for (unsigned int n = 1; n <= W_MAX; n++)
		run_world(_metadata, n, true, true);
}

/*
 * A root's broadcasts through the inbox slots run ahead of receivers that
 * have not begun (inbox.c's placement): with payloads of 420 B (7 of a
 * pair's 32 chunks of 64 B here) the root finishes 4 calls, as many as
 * the mailboxes (MBOX_DEPTH) hold, before anyone receives; with the
 * slots alternating between calls it finished 1. Then a stream of
 * sizes that wrap around the area at different chunks, the receivers
 * pausing now and then, every payload checked.
 */
#define AHEAD_CALLS	60

struct ahead {
	struct rank_ctx	*c;
	_Atomic int	*go;
	_Atomic unsigned int *done;
};

static size_t ahead_len(unsigned int k)
{
	static const size_t lens[] = { 1000, 417, 700, 1024, 450, 900, 600 };

	return k < 8 ? 420 : lens[k % 7];
}

static unsigned char ahead_byte(unsigned int k, size_t i)
{
	return (unsigned char)(k * 29 + i * 7 + 3);
}

static void *ahead_main(void *arg)
{
	struct ahead *a = arg;
	struct rank_ctx *c = a->c;
	unsigned char buf[FX_SLOT];
	unsigned int k;
	size_t i, len;
	int ret;

	while (c->rank && !atomic_load(a->go))
		usleep(1000);
	for (k = 0; k < AHEAD_CALLS; k++) {
		len = ahead_len(k);
		for (i = 0; i < len; i++)
			buf[i] = c->rank ? 0 : ahead_byte(k, i);
		ret = dfg_broadcast(&c->t, buf, len, 0);
		if (ret) {
			fail(c, "broadcast", ret);
			break;
		}
		for (i = 0; i < len; i++)
			if (buf[i] != ahead_byte(k, i))
				break;
		if (i < len)
			fail(c, "broadcast result", (int)k);
		if (!c->rank)
			atomic_fetch_add(a->done, 1);
		else if (k % 7 == c->rank)
			usleep(2000);
	}
	return NULL;
}

TEST_F_TIMEOUT(world, inbox_runs_ahead, 60)
{
	const unsigned int n = 3;
	struct world *w = calloc(1, sizeof(*w));
	struct rank_ctx *c = calloc(n, sizeof(*c));
	_Atomic unsigned int done = 0;
	_Atomic int go = 0;
	struct ahead a[3];
	pthread_t th[3];
	unsigned int ahead, ms;

	ASSERT_NE(NULL, w);
	ASSERT_NE(NULL, c);
	w->size = n;
	for (unsigned int r = 0; r < n; r++) {
		rank_ctx_init(&c[r], w, r, n, false);
		c[r].t.force[DFG_COLL_BROADCAST] = DFG_ALGO_INBOX;
		a[r] = (struct ahead){ .c = &c[r], .go = &go, .done = &done };
		ASSERT_EQ(0, pthread_create(&th[r], NULL, ahead_main, &a[r]));
	}
	/* The root stops at 4 calls: wait for them (5 s at most), a bit more. */
	for (ms = 0; ms < 5000 && atomic_load(&done) < 4; ms += 10)
		usleep(10000);
	usleep(50000);
	ahead = atomic_load(&done);
	atomic_store(&go, 1);
	for (unsigned int r = 0; r < n; r++)
		pthread_join(th[r], NULL);
	EXPECT_EQ(4, ahead);
	for (unsigned int r = 0; r < n; r++) {
		EXPECT_EQ(0, c[r].failures) TH_LOG("%s", c[r].msg);
		EXPECT_EQ(DFG_ALGO_INBOX, c[r].t.last[DFG_COLL_BROADCAST]);
		free(c[r].t.stash);
		dfg_inbox_free(&c[r].t);
	}
	free(c);
	free(w);
}

/*
 * All-to-all blocks around the inbox slot (FX_SLOT): one payload, a full
 * slot, then in pieces of half the pair's area (inbox.c), with a last
 * piece that travels in the message (4 x slot + 3) and one that fills
 * the area's first half again (7 x slot + 500); each also in place, bit
 * for bit, through the inbox. Then blocks that differ between ranks (all
 * in pieces, or rank 1's a slot and the others' in pieces): an error on
 * every rank (-EPROTO where an abort told it: this transport carries no
 * reasons), and the next call right.
 */
static unsigned char pieces_byte(unsigned int src, unsigned int dst,
				 size_t k, unsigned int call)
{
	return (unsigned char)(src * 53 + dst * 17 + k * 7 + k / 251 + call);
}

static void *pieces_main(void *arg)
{
	static const size_t blocks[] = {
		FX_SLOT - 1, FX_SLOT, FX_SLOT + 1, 4 * FX_SLOT + 3,
		7 * FX_SLOT + 500,
	};
	struct rank_ctx *c = arg;
	struct dfg_team *t = &c->t;
	unsigned int n = t->size, r = c->rank, call = 0;
	size_t maxb = 8 * FX_SLOT;
	unsigned char *s = malloc(n * maxb), *d = malloc(n * maxb);
	int ret;

	if (!s || !d) {
		fail(c, "malloc", -ENOMEM);
		goto out;
	}
	t->force[DFG_COLL_ALLTOALL] = DFG_ALGO_AUTO;
	for (size_t bi = 0; bi < 2 * sizeof(blocks) / sizeof(blocks[0]);
	     bi++) {
		size_t b = blocks[bi / 2];
		bool in_place = bi & 1;
		unsigned char *out = in_place ? s : d;

		call++;
		for (unsigned int p = 0; p < n; p++)
			for (size_t k = 0; k < b; k++)
				s[p * b + k] = pieces_byte(r, p, k, call);
		memset(d, 0xee, n * b);
		ret = dfg_alltoall(t, s, out, b);
		if (ret || t->last[DFG_COLL_ALLTOALL] != DFG_ALGO_INBOX)
			fail(c, in_place ? "pieces in place" : "pieces", ret);
		for (unsigned int p = 0; p < n; p++)
			for (size_t k = 0; k < b; k++)
				if (out[p * b + k] != pieces_byte(p, r, k, call)) {
					fail(c, "pieces result", (int)b);
					goto out;
				}
	}
	for (int i = 0; i < 3; i++) {
		size_t b = i == 0 ? 2 * FX_SLOT + !r :
			   i == 1 ? (r == 1 ? FX_SLOT : 3 * FX_SLOT) :
			   3 * FX_SLOT + 5;

		call++;
		for (unsigned int p = 0; p < n; p++)
			for (size_t k = 0; k < b; k++)
				s[p * b + k] = pieces_byte(r, p, k, call);
		ret = dfg_alltoall(t, s, d, b);
		if (i < 2 ? ret != -EINVAL && ret != -EPROTO : ret != 0) {
			fail(c, "pieces mismatched", ret);
			continue;
		}
		for (unsigned int p = 0; i == 2 && p < n; p++)
			for (size_t k = 0; k < b; k++)
				if (d[p * b + k] != pieces_byte(p, r, k, call)) {
					fail(c, "pieces after errors", (int)k);
					goto out;
				}
	}
out:
	free(s);
	free(d);
	return NULL;
}

TEST_F_TIMEOUT(world, alltoall_pieces, 60)
{
	static const unsigned int sizes[] = { 2, 3, 8 };

	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		unsigned int n = sizes[si];
		struct world *w = calloc(1, sizeof(*w));
		struct rank_ctx *c = calloc(n, sizeof(*c));
		pthread_t th[W_MAX];

		ASSERT_NE(NULL, w);
		ASSERT_NE(NULL, c);
		w->size = n;
		for (unsigned int r = 0; r < n; r++) {
			rank_ctx_init(&c[r], w, r, n, false);
			ASSERT_EQ(0, pthread_create(&th[r], NULL, pieces_main,
						    &c[r]));
		}
		for (unsigned int r = 0; r < n; r++)
			pthread_join(th[r], NULL);
		for (unsigned int r = 0; r < n; r++) {
			EXPECT_EQ(0, c[r].failures) TH_LOG("n=%u: %s", n,
							   c[r].msg);
			free(c[r].t.stash);
			dfg_inbox_free(&c[r].t);
			dfg_a2a_free(&c[r].t);
		}
		free(c);
		free(w);
	}
}

/*
 * Patent 002's overlap, traced (DFG_COLL_TRACE, stderr into a file while
 * the ranks run): over the late transport a segment's reduction runs
 * while the next segment's transfer is held (in flight), on some
 * segments at least; with DFG_COLL_OVERLAP=0 never (the next transfer is
 * not posted yet), and the results are still the references bit for bit
 * (run_world checks them). @n: team size; returns the trace's records
 * and, in *@flying, those whose next transfer was in flight as the
 * reduction began and when it ended.
 */
static unsigned long traced_world(struct __test_metadata *_metadata,
				  unsigned int n, bool overlap,
				  unsigned long *flying)
{
	char path[] = "/tmp/dfg-coll-trace.XXXXXX", line[512];
	unsigned long recs = 0;
	int fd, saved, a, b, ov;
	FILE *f;

	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	unlink(path);
	fflush(stderr);
	saved = dup(2);
	ASSERT_LE(0, saved);
	ASSERT_EQ(2, dup2(fd, 2));
	setenv("DFG_COLL_TRACE", "1", 1);
	if (!overlap)
		setenv("DFG_COLL_OVERLAP", "0", 1);
	run_world(_metadata, n, true, true);
	unsetenv("DFG_COLL_TRACE");
	unsetenv("DFG_COLL_OVERLAP");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	f = fdopen(fd, "r");
	ASSERT_NE(NULL, f);
	*flying = 0;
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, " overlap="), *q;

		q = strstr(line, " next_in_flight=");
		if (strncmp(line, "dfg-trace ", 10)) {
			/* run_world's own reports: to the real stderr */
			fputs(line, stderr);
			continue;
		}
		if (!p || !q || sscanf(p, " overlap=%d", &ov) != 1 ||
		    sscanf(q, " next_in_flight=%d,%d", &a, &b) != 2)
			continue;
		recs++;
		EXPECT_EQ(overlap, ov);
		if (a == 1 && b == 1)
			(*flying)++;
	}
	fclose(f);
	return recs;
}

TEST_F_TIMEOUT(world, overlap_trace, 300)
{
	unsigned long recs, flying;

	for (unsigned int n = 3; n <= 4; n++) {
		recs = traced_world(_metadata, n, true, &flying);
		EXPECT_LT(0, recs);
		EXPECT_LT(0, flying);
		TH_LOG("n=%u, overlap: %lu segments reduced, %lu with the next transfer in flight throughout",
		       n, recs, flying);
		recs = traced_world(_metadata, n, false, &flying);
		EXPECT_LT(0, recs);
		EXPECT_EQ(0, flying);
		TH_LOG("n=%u, no overlap: %lu segments reduced, %lu with the next transfer in flight",
		       n, recs, flying);
	}
}

TEST_F_TIMEOUT(world, hier, 300)
{
	run_hier(_metadata, 4, hier_2x2, false, -1);
	run_hier(_metadata, 5, hier_mix, false, -1);
	run_hier(_metadata, 6, hier_3, false, -1);
}

/* The leaders' transport completing late and out of order. */
TEST_F_TIMEOUT(world, hier_late, 300)
{
	run_hier(_metadata, 4, hier_2x2, true, -1);
	run_hier(_metadata, 6, hier_3, true, -1);
}

/*
 * A member dies while the others wait for it in a hierarchical call: a
 * non-leader (its node's leader and the other machine's members learn it
 * through their own team or an abort), then a leader.
 */
TEST_F_TIMEOUT(world, hier_death, 300)
{
	run_hier(_metadata, 4, hier_2x2, false, 3);
	run_hier(_metadata, 4, hier_2x2, false, 2);
	run_hier(_metadata, 5, hier_mix, true, 0);
	/* ... in a hierarchical allgather and barrier */
	run_hier_in(_metadata, 4, hier_2x2, false, 3, DFG_COLL_ALLGATHER);
	run_hier_in(_metadata, 5, hier_mix, true, 2, DFG_COLL_ALLGATHER);
	run_hier_in(_metadata, 5, hier_mix, true, 1, DFG_COLL_ALLGATHER);
	run_hier_in(_metadata, 4, hier_2x2, false, 2, DFG_COLL_BARRIER);
	run_hier_in(_metadata, 6, hier_3, true, 4, DFG_COLL_BARRIER);
	/* ... and in a hierarchical alltoall: a non-leader, a leader */
	run_hier_in(_metadata, 4, hier_2x2, false, 3, DFG_COLL_ALLTOALL);
	run_hier_in(_metadata, 5, hier_mix, false, 1, DFG_COLL_ALLTOALL);
	/* ... and in a hierarchical alltoallv: a non-leader, leaders */
	run_hier_dv(_metadata, 4, hier_2x2, false, 3, DFG_COLL_ALLTOALL, true);
	run_hier_dv(_metadata, 4, hier_2x2, false, 2, DFG_COLL_ALLTOALL, true);
	run_hier_dv(_metadata, 6, hier_3, false, 3, DFG_COLL_ALLTOALL, true);
}

/*
 * A member's network transport breaks while it lives (xport_ucx.c: a
 * lost connection, not a death): it refuses the next calls with
 * -EOWNERDEAD, and the others fail them with -EPROTO instead of waiting
 * for it: a leader (its node's member and the other leaders wait for
 * it), a non-leader (its leader waits), late and out of order too.
 */
TEST_F_TIMEOUT(world, hier_refuse, 300)
{
	run_hier_in(_metadata, 4, hier_2x2, false, 2, DFG_COLL_KIND_NR);
	run_hier_in(_metadata, 4, hier_2x2, false, 3, DFG_COLL_KIND_NR);
	run_hier_in(_metadata, 5, hier_mix, true, 0, DFG_COLL_KIND_NR);
	run_hier_in(_metadata, 6, hier_3, true, 4, DFG_COLL_KIND_NR);
}

TEST_HARNESS_MAIN
