// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: the bulk copy routine (core/copy.c). dfg_copy_vec()
 * and dfg_copy() against memcpy()/memmove() for every size up to a few
 * KiB and for large ones, at every alignment of source and destination
 * (0-63), with guard bytes around the destination that must stay
 * untouched; overlapping ranges behave as memmove(); DFG_COPY picks the
 * path.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "copy.h"

#include "kselftest_harness.h"

#define GUARD	64
#define SMALL_MAX	(5u << 10)

/* Reproducible bytes that differ at every offset: no shifted match. */
static void fill(unsigned char *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (unsigned char)x;
	}
}

typedef void (*copy_fn)(void *, const void *, size_t);

static void via_copy(void *d, const void *s, size_t n)
{
	dfg_copy(d, s, n);
}

/*
 * Copy @n bytes from @src + @sa to a destination at 64-aligned + @da with
 * @fn and check it against memcpy(), and that the GUARD bytes on either
 * side are untouched. Returns 0 or the first bad offset + 1.
 */
static size_t check_one(copy_fn fn, unsigned char *dbuf,
			const unsigned char *src, size_t n, size_t sa,
			size_t da)
{
	unsigned char *d = dbuf + GUARD + da;

	memset(dbuf, 0xa5, GUARD + da);
	memset(d, 0x5a, n);
	memset(d + n, 0xa5, GUARD);
	fn(d, src + sa, n);
	for (size_t i = 0; i < GUARD + da; i++)
		if (dbuf[i] != 0xa5)
			return SIZE_MAX;
	for (size_t i = 0; i < GUARD; i++)
		if (d[n + i] != 0xa5)
			return SIZE_MAX;
	if (!memcmp(d, src + sa, n))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (d[i] != src[sa + i])
			return i + 1;
	return SIZE_MAX;
}

/* Every size 0..SMALL_MAX at every alignment pair (0..63 both). */
static void sweep_small(struct __test_metadata *_metadata, copy_fn fn)
{
	size_t cap = SMALL_MAX + 2 * GUARD + 128;
	unsigned char *src = aligned_alloc(64, cap), *dst = aligned_alloc(64, cap);

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	fill(src, cap, 1);
	for (size_t n = 0; n <= SMALL_MAX; n++) {
		/* All 64x64 alignments for sizes around every vector edge. */
		bool all = n <= 200 || (n < 1024 && (n % 64 <= 1 ||
						      n % 64 == 63)) ||
			   (n >= DFG_COPY_VEC_MIN - 2 &&
			    n <= DFG_COPY_VEC_MIN + 2);

		for (size_t sa = 0; sa < 64; sa += all ? 1 : 7) {
			for (size_t da = 0; da < 64; da += all ? 1 : 5) {
				ASSERT_EQ(0, check_one(fn, dst, src, n, sa, da))
					TH_LOG("n %zu src+%zu dst+%zu", n, sa,
					       da);
			}
		}
	}
	free(src);
	free(dst);
}

TEST(vec_every_small_size_and_alignment)
{
	sweep_small(_metadata, dfg_copy_vec);
}

/*
 * The harness runs each test in a child of its own, and dfg_copy()
 * decides its path at its first call: DFG_COPY set first is what counts.
 */
TEST(copy_every_small_size_and_alignment)
{
	setenv("DFG_COPY", "vector", 1);
	ASSERT_TRUE(dfg_copy_vec_on());
	sweep_small(_metadata, via_copy);
}

/* Large sizes, each alignment pair, through both entry points. */
TEST(large_sizes_every_alignment)
{
	static const size_t sizes[] = {
		(64u << 10) - 1, 64u << 10, (256u << 10) + 17, 1u << 20,
		(3u << 20) + 4095,
	};
	size_t cap = (4u << 20) + 2 * GUARD + 128;
	unsigned char *src = aligned_alloc(64, cap), *dst = aligned_alloc(64, cap);

	setenv("DFG_COPY", "vector", 1);

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	fill(src, cap, 2);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (size_t a = 0; a < 64; a++) {
			size_t sa = a, da = (a * 37) % 64;

			ASSERT_EQ(0, check_one(dfg_copy_vec, dst, src,
					       sizes[k], sa, da))
				TH_LOG("vec n %zu src+%zu dst+%zu", sizes[k],
				       sa, da);
			ASSERT_EQ(0, check_one(via_copy, dst, src, sizes[k],
					       da, sa))
				TH_LOG("copy n %zu src+%zu dst+%zu", sizes[k],
				       da, sa);
		}
	free(src);
	free(dst);
}

/* Around both edges of the band, where dfg_copy() changes path. */
TEST(band_edges)
{
	size_t lo, hi, cap;
	unsigned char *src, *dst;

	setenv("DFG_COPY", "vector", 1);
	dfg_copy_band(&lo, &hi);
	ASSERT_LE(DFG_COPY_VEC_MIN, lo);
	ASSERT_LT(lo, hi);
	cap = (hi + 1 + 2 * GUARD + 128 + 63) & ~(size_t)63;
	src = aligned_alloc(64, cap);
	dst = aligned_alloc(64, cap);
	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	fill(src, cap, 4);
	for (size_t k = 0; k < 6; k++) {
		size_t n = (k < 3 ? lo : hi) + k % 3 - 1;

		for (size_t a = 0; a < 64; a += 9) {
			ASSERT_EQ(0, check_one(via_copy, dst, src, n, a,
					       63 - a))
				TH_LOG("n %zu src+%zu", n, a);
		}
	}
	free(src);
	free(dst);
}

/* Overlap, either direction and equal pointers: memmove()'s result. */
TEST(overlap_is_memmove)
{
	static const size_t sizes[] = { 1, 15, 64, 100, 2048, 4099,
					(128u << 10) + 3 };
	static const long shifts[] = { -4097, -64, -17, -1, 0, 1, 16, 63,
				       2048 };
	size_t cap = (256u << 10) + 16384;
	unsigned char *a = malloc(cap), *b = malloc(cap);

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (size_t j = 0; j < sizeof(shifts) / sizeof(shifts[0]); j++) {
			size_t n = sizes[k], base = 8192;
			unsigned char *src;

			if ((size_t)labs(shifts[j]) >= n && shifts[j])
				continue;	/* not overlapping */
			fill(a, cap, 3);
			memcpy(b, a, cap);
			src = a + base;
			ASSERT_EQ(src + shifts[j],
				  dfg_copy(src + shifts[j], src, n));
			memmove(b + base + shifts[j], b + base, n);
			ASSERT_EQ(0, memcmp(a, b, cap))
				TH_LOG("n %zu shift %ld", n, shifts[j]);
		}
	free(a);
	free(b);
}

/* DFG_COPY picks the path; the band is the documented one. */
TEST(env_picks_the_path)
{
	/* The decision is per process: ask a child for each setting. */
	static const char *const vals[] = { "vector", "libc" };

	for (int i = 0; i < 2; i++) {
		pid_t pid = fork();
		int st;

		ASSERT_LE(0, pid);
		if (!pid) {
			size_t lo, hi;

			setenv("DFG_COPY", vals[i], 1);
			dfg_copy_band(&lo, &hi);
			_exit(dfg_copy_vec_on() == !i &&
			      lo >= DFG_COPY_VEC_MIN && hi > lo ? 0 : 1);
		}
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
			TH_LOG("DFG_COPY=%s", vals[i]);
	}
}

TEST(zero_bytes_touch_nothing)
{
	unsigned char d = 7, s = 9;

	/* NULL with n == 0 is fine for dfg_copy (memcpy's is UB). */
	EXPECT_EQ(NULL, dfg_copy(NULL, NULL, 0));
	dfg_copy_vec(&d, &s, 0);
	EXPECT_EQ(7, d);
}

TEST_HARNESS_MAIN
