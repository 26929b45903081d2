// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: the copy routine for bulk data (copy.h).
 *
 * Why it exists: glibc's x86-64 memcpy copies with `rep movsb` from 2-8 KiB
 * up to its non-temporal (on AMD, the L2 size) threshold when the CPU
 * reports ERMS. On hardware that is its fastest way; under QEMU's TCG, where the
 * test VM runs, the instruction is emulated a byte at a time through a
 * helper and copies at ~30 MB/s where a loop of vector loads and stores
 * reaches 1-2 GB/s. The collectives copy exactly in that band. So under
 * TCG the band goes to the loop below, everywhere else to glibc.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "copy.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <emmintrin.h>

bool dfg_cpu_tcg(void)
{
	unsigned int a, b, c, d;
	char sig[12];

	/* Leaf 0x40000000 is the hypervisor's; meaningless without one. */
	__cpuid(1, a, b, c, d);
	if (!(c & (1u << 31)))
		return false;
	__cpuid(0x40000000, a, b, c, d);
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	return !memcmp(sig, "TCGTCGTCGTCG", sizeof(sig));
}

/* Does the CPU say ERMS, and is it QEMU's TCG? */
static bool copy_tcg_erms(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & (1u << 9)))
		return false;
	return dfg_cpu_tcg();
}

/*
 * glibc 2.36's band of `rep movsb` (sysdeps/x86/dl-cacheinfo.h, the
 * glibc of Debian 12): from 2112 bytes with FSRM, else 8 KiB with AVX2
 * (16 KiB with AVX-512, not told apart here: the smaller bound only
 * gives the loop more), else 2 KiB; up to the L2 size on AMD, else the
 * non-temporal threshold, 3/4 of the L3 share. Sizes outside it are
 * glibc's vector loops, which are not slow under TCG either.
 */
static void copy_band(size_t *lo, size_t *hi)
{
	unsigned int a, b, c, d;
	long l2 = -1, l3 = -1;
	bool amd;

	__cpuid(0, a, b, c, d);
	amd = b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;
	*lo = DFG_COPY_VEC_MIN;
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
		if (d & (1u << 4))
			*lo = 2112;
		else if (b & (1u << 5))
			*lo = 8192;
	}
#ifdef _SC_LEVEL2_CACHE_SIZE
	l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
	l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
	if (amd && l2 > 0)
		*hi = (size_t)l2;
	else if (l3 > 0)
		*hi = (size_t)l3 / 4 * 3;
	else
		*hi = (size_t)4 << 20;
}

/*
 * 16 bytes at a time: loads unaligned, stores aligned once @d is. The
 * empty asm makes the loaded values opaque to the compiler, so it cannot
 * recognise the loop as a copy and call memcpy() (rep movsb again) for
 * it; it costs no instruction.
 */
void dfg_copy_vec(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	__m128i v0, v1, v2, v3, head, tail[4];
	size_t skew;

	if (n < 16) {
		uint64_t x, y;
		uint32_t u, w;

		if (n >= 8) {
			memcpy(&x, s, 8);
			memcpy(&y, s + n - 8, 8);
			memcpy(d, &x, 8);
			memcpy(d + n - 8, &y, 8);
		} else if (n >= 4) {
			memcpy(&u, s, 4);
			memcpy(&w, s + n - 4, 4);
			memcpy(d, &u, 4);
			memcpy(d + n - 4, &w, 4);
		} else if (n) {
			unsigned char b0 = s[0], b1 = s[n / 2],
				      b2 = s[n - 1];

			d[0] = b0;
			d[n / 2] = b1;
			d[n - 1] = b2;
		}
		return;
	}
	if (n <= 64) {
		/* 1-4 chunks from each end, overlapping in the middle. */
		size_t k = (n - 1) / 16 + 1;

		for (size_t i = 0; i < k / 2 + k % 2; i++) {
			v0 = _mm_loadu_si128((const __m128i *)(s + 16 * i));
			v1 = _mm_loadu_si128((const __m128i *)
					     (s + n - 16 * (i + 1)));
			__asm__("" : "+x"(v0), "+x"(v1));
			_mm_storeu_si128((__m128i *)(d + 16 * i), v0);
			_mm_storeu_si128((__m128i *)(d + n - 16 * (i + 1)),
					 v1);
		}
		return;
	}
	/*
	 * The first 16 and the last 64 bytes are loaded before the loop
	 * and stored unaligned after it; the loop runs from the first
	 * 16-byte boundary of @d and stops where the last 64 begin.
	 */
	head = _mm_loadu_si128((const __m128i *)s);
	for (int i = 0; i < 4; i++)
		tail[i] = _mm_loadu_si128((const __m128i *)
					  (s + n - 64 + 16 * i));
	skew = 16 - ((uintptr_t)d & 15);
	for (size_t i = skew; i < n - 64; i += 64) {
		v0 = _mm_loadu_si128((const __m128i *)(s + i));
		v1 = _mm_loadu_si128((const __m128i *)(s + i + 16));
		v2 = _mm_loadu_si128((const __m128i *)(s + i + 32));
		v3 = _mm_loadu_si128((const __m128i *)(s + i + 48));
		__asm__("" : "+x"(v0), "+x"(v1), "+x"(v2), "+x"(v3));
		_mm_store_si128((__m128i *)(d + i), v0);
		_mm_store_si128((__m128i *)(d + i + 16), v1);
		_mm_store_si128((__m128i *)(d + i + 32), v2);
		_mm_store_si128((__m128i *)(d + i + 48), v3);
	}
	_mm_storeu_si128((__m128i *)d, head);
	for (int i = 0; i < 4; i++)
		_mm_storeu_si128((__m128i *)(d + n - 64 + 16 * i), tail[i]);
}

#else /* !__x86_64__ */

bool dfg_cpu_tcg(void)
{
	return false;
}

static bool copy_tcg_erms(void)
{
	return false;
}

static void copy_band(size_t *lo, size_t *hi)
{
	*lo = DFG_COPY_VEC_MIN;
	*hi = (size_t)4 << 20;
}

void dfg_copy_vec(void *dst, const void *src, size_t n)
{
	if (n)
		memcpy(dst, src, n);
}

#endif

/* 0: not decided yet; 1: libc; 2: vector. */
static int copy_mode;
/* The band [copy_min, copy_max) the loop copies when on. */
static size_t copy_min, copy_max;

static void copy_decide(void)
{
	const char *e = getenv("DFG_COPY");
	size_t lo, hi;
	int mode;

	copy_band(&lo, &hi);
	__atomic_store_n(&copy_min, lo, __ATOMIC_RELAXED);
	__atomic_store_n(&copy_max, hi, __ATOMIC_RELAXED);
	if (e && !strcmp(e, "vector"))
		mode = 2;
	else if (e && !strcmp(e, "libc"))
		mode = 1;
	else
		mode = copy_tcg_erms() ? 2 : 1;
	/*
	 * Racing first callers decide the same: last store wins, same
	 * value. Release: a reader that sees the mode sees the band.
	 */
	__atomic_store_n(&copy_mode, mode, __ATOMIC_RELEASE);
}

bool dfg_copy_vec_on(void)
{
	int m = __atomic_load_n(&copy_mode, __ATOMIC_ACQUIRE);

	if (!m) {
		copy_decide();
		m = __atomic_load_n(&copy_mode, __ATOMIC_ACQUIRE);
	}
	return m == 2;
}

void dfg_copy_band(size_t *lo, size_t *hi)
{
	dfg_copy_vec_on();
	*lo = __atomic_load_n(&copy_min, __ATOMIC_RELAXED);
	*hi = __atomic_load_n(&copy_max, __ATOMIC_RELAXED);
}

void *dfg_copy(void *dst, const void *src, size_t n)
{
	uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;

	if (!n || dst == src)
		return dst;
	/* Overlap: memmove()'s semantics (also covers @dst == @src). */
	if (d - s < n || s - d < n)
		return memmove(dst, src, n);
	if (n >= DFG_COPY_VEC_MIN && dfg_copy_vec_on() &&
	    n >= __atomic_load_n(&copy_min, __ATOMIC_RELAXED) &&
	    n < __atomic_load_n(&copy_max, __ATOMIC_RELAXED)) {
		dfg_copy_vec(dst, src, n);
		return dst;
	}
	return memcpy(dst, src, n);
}
