// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: arenas without the module and the buffer allocator.
 * Arenas are anonymous MAP_SHARED memory wrapped with dfg_arena_wrap(),
 * between PROT_NONE guard pages so that any access outside the arena
 * kills the test. Covers the offset/pointer helpers at their edges,
 * single-process allocator behaviour, header validation, hostile shared
 * memory, and a stress run of 8 forked processes freeing each other's
 * blocks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dfg/dfg.h>

#include "kselftest_harness.h"
#include "guard.h"

#define ERRNO_MARK	12345
#define PAGE		4096UL

static int is_pow2(__u64 x)
{
	return x && !(x & (x - 1));
}

/* ------------------------------------------------------------------------
 * dfg_arena_wrap() and the offset/pointer helpers
 * ------------------------------------------------------------------------
 */

TEST(wrap_bad_args)
{
	struct dfg_arena *a = NULL;
	static char buf[256] __attribute__((aligned(64)));

	EXPECT_EQ(-EINVAL, dfg_arena_wrap(NULL, 4096, 1, &a));
	EXPECT_EQ(-EINVAL, dfg_arena_wrap(buf, 0, 1, &a));
	EXPECT_EQ(-EINVAL, dfg_arena_wrap(buf, 64, 1, NULL));
	EXPECT_EQ(-EINVAL, dfg_arena_wrap(buf + 8, 64, 1, &a));
	EXPECT_EQ(-EINVAL, dfg_arena_wrap(buf, SIZE_MAX, 1, &a));
	EXPECT_EQ(NULL, a);
	ASSERT_EQ(0, dfg_arena_wrap(buf, sizeof(buf), 1, &a));
	EXPECT_EQ((void *)buf, dfg_arena_base(a));
	EXPECT_EQ(sizeof(buf), dfg_arena_size(a));
	EXPECT_EQ(0, dfg_arena_id(a));
	dfg_arena_unmap(a);
	buf[0] = 1;	/* not unmapped */
}

TEST(null_arena)
{
	EXPECT_EQ(NULL, dfg_arena_base(NULL));
	EXPECT_EQ(0, dfg_arena_size(NULL));
	EXPECT_EQ(0, dfg_arena_id(NULL));
	EXPECT_EQ(NULL, dfg_arena_ptr(NULL, 0, 0));
	EXPECT_EQ(DFG_ARENA_OFF_INVALID, dfg_arena_off(NULL, ""));
	EXPECT_EQ(-EINVAL, dfg_alloc_init(NULL));
	EXPECT_EQ(-EINVAL, dfg_alloc_attach(NULL));
	EXPECT_EQ(-EINVAL, dfg_buf_alloc(NULL, 1));
	EXPECT_EQ(-EINVAL, dfg_buf_free(NULL, 4096));
	EXPECT_EQ(0, dfg_buf_size(NULL, 4096));
	dfg_arena_unmap(NULL);
}

TEST(ptr_off_edges)
{
	const size_t size = 8192;
	struct dfg_arena *a;
	char *base = guarded_map(size);

	ASSERT_NE(NULL, base);
	ASSERT_EQ(0, dfg_arena_wrap(base, size, 1, &a));

	EXPECT_EQ(base, dfg_arena_ptr(a, 0, 0));
	EXPECT_EQ(base, dfg_arena_ptr(a, 0, size));
	EXPECT_EQ(base + size - 1, dfg_arena_ptr(a, size - 1, 1));
	EXPECT_EQ(base + size, dfg_arena_ptr(a, size, 0));
	EXPECT_EQ(NULL, dfg_arena_ptr(a, 0, size + 1));
	EXPECT_EQ(NULL, dfg_arena_ptr(a, size - 1, 2));
	EXPECT_EQ(NULL, dfg_arena_ptr(a, size, 1));
	EXPECT_EQ(NULL, dfg_arena_ptr(a, size + 1, 0));
	/* off + len wraps around 2^64 */
	EXPECT_EQ(NULL, dfg_arena_ptr(a, 16, UINT64_MAX));
	EXPECT_EQ(NULL, dfg_arena_ptr(a, UINT64_MAX, 2));
	EXPECT_EQ(NULL, dfg_arena_ptr(a, UINT64_MAX, 0));
	EXPECT_EQ(NULL, dfg_arena_ptr(a, UINT64_MAX - 15, 16));

	EXPECT_EQ(0, dfg_arena_off(a, base));
	EXPECT_EQ(size - 1, dfg_arena_off(a, base + size - 1));
	EXPECT_EQ(DFG_ARENA_OFF_INVALID, dfg_arena_off(a, base + size));
	EXPECT_EQ(DFG_ARENA_OFF_INVALID, dfg_arena_off(a, base - 1));
	EXPECT_EQ(DFG_ARENA_OFF_INVALID, dfg_arena_off(a, NULL));
	EXPECT_EQ(100, dfg_arena_off(a, dfg_arena_ptr(a, 100, 1)));

	dfg_arena_unmap(a);
	guarded_unmap(base, size);
}

/* ------------------------------------------------------------------------
 * Allocator, one process
 * ------------------------------------------------------------------------
 */

FIXTURE(heap) {
	char *base;		/* guarded shared anonymous memory */
	size_t size;		/* its size */
	struct dfg_arena *a;	/* writable view, allocator initialised */
};

FIXTURE_SETUP(heap)
{
	self->size = 1UL << 20;
	self->base = guarded_map(self->size);
	ASSERT_NE(NULL, self->base);
	ASSERT_EQ(0, dfg_arena_wrap(self->base, self->size, 1, &self->a));
	ASSERT_EQ(0, dfg_alloc_init(self->a));
}

FIXTURE_TEARDOWN(heap)
{
	dfg_arena_unmap(self->a);
	guarded_unmap(self->base, self->size);
}

/* Every size gets a power-of-two block, big enough and naturally aligned. */
TEST_F(heap, sizes_and_alignment)
{
	static const size_t lens[] = {
		1, 63, 64, 65, 100, 128, 129, 1000, 4095, 4096, 4097,
		16383, 16384, 16385, 65536, 100000, 262144,
	};
	size_t i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		__s64 off = dfg_buf_alloc(self->a, lens[i]);
		size_t bs;

		ASSERT_LT(0, off) TH_LOG("len %zu: %lld", lens[i], (long long)off);
		bs = dfg_buf_size(self->a, off);
		EXPECT_LE(lens[i], bs);
		EXPECT_TRUE(is_pow2(bs));
		EXPECT_LE(DFG_BUF_MIN, bs);
		EXPECT_GT(2 * lens[i] + DFG_BUF_MIN, bs);
		EXPECT_EQ(0, off % (bs < 4096 ? bs : 4096));
		ASSERT_NE(NULL, dfg_arena_ptr(self->a, off, bs));
		memset(dfg_arena_ptr(self->a, off, bs), 0x5a, bs);
	}
}

TEST_F(heap, bad_lengths)
{
	EXPECT_EQ(-EINVAL, dfg_buf_alloc(self->a, 0));
	EXPECT_EQ(-ENOMEM, dfg_buf_alloc(self->a, self->size));
	EXPECT_EQ(-ENOMEM, dfg_buf_alloc(self->a, SIZE_MAX));
	EXPECT_EQ(-ENOMEM, dfg_buf_alloc(self->a, (SIZE_MAX >> 1) + 2));
}

struct range {
	__u64 off, len;
};

static int range_cmp(const void *x, const void *y)
{
	const struct range *a = x, *b = y;

	return a->off < b->off ? -1 : a->off > b->off;
}

/*
 * Fill the arena with random sizes until -ENOMEM; no two blocks overlap,
 * none touches the header area; then free all and do it again.
 */
TEST_F(heap, no_overlap_until_exhausted)
{
	struct range r[4096];
	int round, n, i;

	srand(1);
	for (round = 0; round < 2; round++) {
		for (n = 0; n < 4096; n++) {
			size_t len = 1 + rand() % (rand() % 8 ? 2000 : 40000);
			__s64 off = dfg_buf_alloc(self->a, len);

			if (off == -ENOMEM)
				break;
			ASSERT_LT(0, off);
			r[n].off = off;
			r[n].len = dfg_buf_size(self->a, off);
			ASSERT_LE(len, r[n].len);
		}
		ASSERT_LT(100, n);
		ASSERT_GT(4096, n);
		qsort(r, n, sizeof(r[0]), range_cmp);
		EXPECT_LE(4096, r[0].off);
		for (i = 1; i < n; i++)
			ASSERT_LE(r[i - 1].off + r[i - 1].len, r[i].off);
		EXPECT_GE(self->size, r[n - 1].off + r[n - 1].len);
		for (i = 0; i < n; i++)
			ASSERT_EQ(0, dfg_buf_free(self->a, r[i].off));
	}
}

/* LIFO: a freed block is the next one handed out in its class. */
TEST_F(heap, reuse_after_free)
{
	__s64 a = dfg_buf_alloc(self->a, 100);
	__s64 b = dfg_buf_alloc(self->a, 100);

	ASSERT_LT(0, a);
	ASSERT_LT(0, b);
	EXPECT_NE(a, b);
	EXPECT_EQ(0, dfg_buf_free(self->a, a));
	EXPECT_EQ(a, dfg_buf_alloc(self->a, 128));
	EXPECT_EQ(0, dfg_buf_free(self->a, b));
	EXPECT_EQ(0, dfg_buf_free(self->a, a));
	EXPECT_EQ(a, dfg_buf_alloc(self->a, 65));
	EXPECT_EQ(b, dfg_buf_alloc(self->a, 65));
}

/* Exhaust with small blocks, free them, the same class works again. */
TEST_F(heap, exhaustion_and_recovery_small)
{
	static __s64 offs[1 << 14];
	int n, i;

	for (n = 0; n < (1 << 14); n++) {
		offs[n] = dfg_buf_alloc(self->a, 64);
		if (offs[n] == -ENOMEM)
			break;
		ASSERT_LT(0, offs[n]);
	}
	ASSERT_GT(1 << 14, n);
	EXPECT_EQ(-ENOMEM, dfg_buf_alloc(self->a, 64));
	EXPECT_EQ(-ENOMEM, dfg_buf_alloc(self->a, 16384));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, dfg_buf_free(self->a, offs[i]));
	for (i = 0; i < n; i++)
		ASSERT_LT(0, dfg_buf_alloc(self->a, 1));
	EXPECT_EQ(-ENOMEM, dfg_buf_alloc(self->a, 1));
}

/*
 * Exhaust with chunk-sized blocks, free them: they are split again for
 * small classes, and larger runs still come from split blocks.
 */
TEST_F(heap, exhaustion_and_recovery_large)
{
	__s64 offs[256], big;
	int n, i;

	for (n = 0; n < 256; n++) {
		offs[n] = dfg_buf_alloc(self->a, 16384);
		if (offs[n] == -ENOMEM)
			break;
		ASSERT_LT(0, offs[n]);
	}
	ASSERT_LT(32, n);
	EXPECT_EQ(-ENOMEM, dfg_buf_alloc(self->a, 1));
	EXPECT_EQ(0, dfg_buf_free(self->a, offs[0]));
	EXPECT_LT(0, dfg_buf_alloc(self->a, 1));
	for (i = 1; i < n; i++)
		ASSERT_EQ(0, dfg_buf_free(self->a, offs[i]));
	/* 16 KiB blocks are not merged: a 32 KiB request finds no room. */
	EXPECT_EQ(-ENOMEM, dfg_buf_alloc(self->a, 32768));

	/* A fresh arena: one big block split for small requests. */
	ASSERT_EQ(0, dfg_alloc_init(self->a));
	big = dfg_buf_alloc(self->a, 512 * 1024);
	ASSERT_LT(0, big);
	EXPECT_EQ(-ENOMEM, dfg_buf_alloc(self->a, 512 * 1024));
	for (n = 0; dfg_buf_alloc(self->a, 16384) > 0; n++)
		;
	ASSERT_EQ(0, dfg_buf_free(self->a, big));
	EXPECT_LT(0, dfg_buf_alloc(self->a, 100));
	EXPECT_LT(0, dfg_buf_alloc(self->a, 16384));
	EXPECT_LT(0, dfg_buf_alloc(self->a, 32768));
	EXPECT_LT(0, dfg_buf_alloc(self->a, 65536));
	EXPECT_LT(0, dfg_buf_alloc(self->a, 131072));
	EXPECT_LT(0, dfg_buf_alloc(self->a, 262144));
	EXPECT_EQ(-ENOMEM, dfg_buf_alloc(self->a, 16384));
}

TEST_F(heap, invalid_free)
{
	__s64 off = dfg_buf_alloc(self->a, 128);
	__s64 big = dfg_buf_alloc(self->a, 40000);

	ASSERT_LT(0, off);
	ASSERT_LT(0, big);
	EXPECT_EQ(-EINVAL, dfg_buf_free(self->a, 0));
	EXPECT_EQ(-EINVAL, dfg_buf_free(self->a, 64));
	EXPECT_EQ(-EINVAL, dfg_buf_free(self->a, off + 64));
	EXPECT_EQ(-EINVAL, dfg_buf_free(self->a, off + 1));
	EXPECT_EQ(-EINVAL, dfg_buf_free(self->a, big + 16384));
	EXPECT_EQ(-EINVAL, dfg_buf_free(self->a, big + 4096));
	EXPECT_EQ(-EINVAL, dfg_buf_free(self->a, self->size - 4096));
	EXPECT_EQ(-EINVAL, dfg_buf_free(self->a, self->size));
	EXPECT_EQ(-EINVAL, dfg_buf_free(self->a, UINT64_MAX));
	/* Carved but never handed out. */
	EXPECT_EQ(-EINVAL, dfg_buf_free(self->a, off + 128));
	EXPECT_EQ(0, dfg_buf_size(self->a, off + 64));
	EXPECT_EQ(0, dfg_buf_size(self->a, 0));

	EXPECT_EQ(0, dfg_buf_free(self->a, off));
	EXPECT_EQ(0, dfg_buf_size(self->a, off));
	EXPECT_EQ(-EINVAL, dfg_buf_free(self->a, off));	/* double free */
	EXPECT_EQ(0, dfg_buf_free(self->a, big));
	EXPECT_EQ(-EINVAL, dfg_buf_free(self->a, big));
	/* The list was not corrupted by the double frees. */
	EXPECT_EQ(off, dfg_buf_alloc(self->a, 128));
	EXPECT_NE(off, dfg_buf_alloc(self->a, 128));
}

TEST_F(heap, read_only_view)
{
	struct dfg_arena *ro;
	__s64 off = dfg_buf_alloc(self->a, 200);

	ASSERT_LT(0, off);
	ASSERT_EQ(0, dfg_arena_wrap(self->base, self->size, 0, &ro));
	EXPECT_EQ(-EACCES, dfg_alloc_init(ro));
	EXPECT_EQ(-EINVAL, dfg_buf_alloc(ro, 1));	/* not attached */
	ASSERT_EQ(0, dfg_alloc_attach(ro));
	EXPECT_EQ(-EACCES, dfg_buf_alloc(ro, 1));
	EXPECT_EQ(-EACCES, dfg_buf_free(ro, off));
	EXPECT_EQ(256, dfg_buf_size(ro, off));
	dfg_arena_unmap(ro);
	EXPECT_EQ(0, dfg_buf_free(self->a, off));
}

TEST_F(heap, second_view_attaches)
{
	struct dfg_arena *b;
	__s64 off;

	ASSERT_EQ(0, dfg_arena_wrap(self->base, self->size, 1, &b));
	ASSERT_EQ(0, dfg_alloc_attach(b));
	off = dfg_buf_alloc(self->a, 1000);
	ASSERT_LT(0, off);
	EXPECT_EQ(1024, dfg_buf_size(b, off));
	EXPECT_EQ(0, dfg_buf_free(b, off));
	EXPECT_EQ(-EINVAL, dfg_buf_free(self->a, off));
	dfg_arena_unmap(b);
}

TEST_F(heap, errno_untouched)
{
	__s64 off;

	errno = ERRNO_MARK;
	off = dfg_buf_alloc(self->a, 10);
	EXPECT_LT(0, off);
	EXPECT_EQ(-EINVAL, dfg_buf_free(self->a, off + 64));
	EXPECT_EQ(-ENOMEM, dfg_buf_alloc(self->a, self->size));
	EXPECT_EQ(0, dfg_buf_free(self->a, off));
	EXPECT_EQ(ERRNO_MARK, errno);
}

/* ------------------------------------------------------------------------
 * Header validation and hostile shared memory
 * ------------------------------------------------------------------------
 */

TEST(init_too_small_or_read_only)
{
	const size_t size = 16384;
	char *base = guarded_map(size);
	struct dfg_arena *a;

	ASSERT_NE(NULL, base);
	ASSERT_EQ(0, dfg_arena_wrap(base, size, 1, &a));
	EXPECT_EQ(-ENOSPC, dfg_alloc_init(a));
	EXPECT_EQ(-EPROTO, dfg_alloc_attach(a));
	EXPECT_EQ(-EINVAL, dfg_buf_alloc(a, 1));
	dfg_arena_unmap(a);
	/* Smallest arena that holds one chunk. */
	ASSERT_EQ(0, dfg_arena_wrap(base, size, 1, &a));
	dfg_arena_unmap(a);
	guarded_unmap(base, size);

	base = guarded_map(4096 + 16384);
	ASSERT_NE(NULL, base);
	ASSERT_EQ(0, dfg_arena_wrap(base, 4096 + 16384, 1, &a));
	ASSERT_EQ(0, dfg_alloc_init(a));
	EXPECT_EQ(4096, dfg_buf_alloc(a, 16384));
	EXPECT_EQ(-ENOMEM, dfg_buf_alloc(a, 1));
	dfg_arena_unmap(a);
	guarded_unmap(base, 4096 + 16384);
}

/* Header fields a peer checks, by offset (struct dfg_alloc_hdr). */
FIXTURE_VARIANT(corrupt) {
	size_t off;		/* byte to flip */
	const char *what;
};

FIXTURE(corrupt) {
	char *base;
	size_t size;
	struct dfg_arena *a, *b;
};

FIXTURE_VARIANT_ADD(corrupt, magic)	{ .off = 0,  .what = "magic" };
FIXTURE_VARIANT_ADD(corrupt, version)	{ .off = 8,  .what = "version" };
FIXTURE_VARIANT_ADD(corrupt, hdr_size)	{ .off = 12, .what = "hdr_size" };
FIXTURE_VARIANT_ADD(corrupt, arena_size) { .off = 17, .what = "arena_size" };
FIXTURE_VARIANT_ADD(corrupt, bitmap_off) { .off = 24, .what = "bitmap_off" };
FIXTURE_VARIANT_ADD(corrupt, data_off)	{ .off = 41, .what = "data_off" };
FIXTURE_VARIANT_ADD(corrupt, nr_classes) { .off = 60, .what = "nr_classes" };

FIXTURE_SETUP(corrupt)
{
	self->size = 1UL << 20;
	self->base = guarded_map(self->size);
	ASSERT_NE(NULL, self->base);
	ASSERT_EQ(0, dfg_arena_wrap(self->base, self->size, 1, &self->a));
	ASSERT_EQ(0, dfg_arena_wrap(self->base, self->size, 1, &self->b));
	ASSERT_EQ(0, dfg_alloc_init(self->a));
}

FIXTURE_TEARDOWN(corrupt)
{
	dfg_arena_unmap(self->a);
	dfg_arena_unmap(self->b);
	guarded_unmap(self->base, self->size);
}

TEST_F(corrupt, attach_eproto)
{
	self->base[variant->off] ^= 0x10;
	EXPECT_EQ(-EPROTO, dfg_alloc_attach(self->b)) TH_LOG("%s", variant->what);
	EXPECT_EQ(-EINVAL, dfg_buf_alloc(self->b, 1));
	self->base[variant->off] ^= 0x10;
	EXPECT_EQ(0, dfg_alloc_attach(self->b));
}

/* A mapping of another size than the creator's is refused. */
TEST(attach_other_size_eproto)
{
	const size_t size = 1UL << 20;
	char *base = guarded_map(size);
	struct dfg_arena *a, *b;

	ASSERT_NE(NULL, base);
	ASSERT_EQ(0, dfg_arena_wrap(base, size, 1, &a));
	ASSERT_EQ(0, dfg_alloc_init(a));
	ASSERT_EQ(0, dfg_arena_wrap(base, size / 2, 1, &b));
	EXPECT_EQ(-EPROTO, dfg_alloc_attach(b));
	dfg_arena_unmap(b);
	ASSERT_EQ(0, dfg_arena_wrap(base, 4096, 1, &b));
	EXPECT_EQ(-EPROTO, dfg_alloc_attach(b));
	dfg_arena_unmap(b);
	ASSERT_EQ(0, dfg_arena_wrap(base, 64, 1, &b));
	EXPECT_EQ(-EPROTO, dfg_alloc_attach(b));
	dfg_arena_unmap(b);
	dfg_arena_unmap(a);
	guarded_unmap(base, size);
}

/*
 * Hostile free-list heads and bump offset: detected (-EPROTO), never
 * followed outside the arena (the guard pages would kill the test).
 */
TEST_F(heap, hostile_heads_and_bump)
{
	__u64 *bump = (__u64 *)(self->base + 128);
	__u64 *head0 = (__u64 *)(self->base + 192);
	__u64 save;
	__s64 off;

	off = dfg_buf_alloc(self->a, 64);
	ASSERT_LT(0, off);
	ASSERT_NE(0, *head0);		/* rest of the chunk is on the list */

	save = *head0;
	*head0 = 0xffffffffULL;		/* granule index past the end */
	EXPECT_EQ(-EPROTO, dfg_buf_alloc(self->a, 64));
	*head0 = 1;			/* inside the header */
	EXPECT_EQ(-EPROTO, dfg_buf_alloc(self->a, 64));
	*head0 = (__u64)(off >> 6);	/* an allocated block */
	EXPECT_EQ(-EPROTO, dfg_buf_alloc(self->a, 64));
	*head0 = save;

	save = *bump;
	*bump = self->size + (1UL << 20);
	EXPECT_EQ(-EPROTO, dfg_buf_alloc(self->a, 128));
	*bump = save + 1;
	EXPECT_EQ(-EPROTO, dfg_buf_alloc(self->a, 128));
	*bump = save;
	EXPECT_LT(0, dfg_buf_alloc(self->a, 128));
}

/*
 * Random garbage over the whole metadata area and the free blocks' next
 * words, then random operations: every result is an offset whose block
 * lies inside the arena, or -ENOMEM, -EINVAL, -EPROTO; nothing crashes.
 */
TEST_F(heap, garbage_metadata_fuzz)
{
	__s64 live[64] = { 0 };
	int round, i;

	srand(7);
	for (i = 0; i < 200; i++)
		dfg_buf_free(self->a, dfg_buf_alloc(self->a, 1 + rand() % 70000));

	for (round = 0; round < 50; round++) {
		/* Scribble over header, bitmap, chunk table and some data. */
		for (i = 0; i < 64; i++) {
			size_t at = rand() % (round & 1 ? 8192 : self->size);

			self->base[at] = rand();
		}
		for (i = 0; i < 500; i++) {
			int slot = rand() % 64;

			if (live[slot] > 0) {
				int r = dfg_buf_free(self->a, live[slot]);

				ASSERT_TRUE(r == 0 || r == -EINVAL);
				live[slot] = 0;
			} else {
				size_t len = 1 + rand() % 20000;
				__s64 off = dfg_buf_alloc(self->a, len);

				ASSERT_TRUE(off > 0 || off == -ENOMEM ||
					    off == -EPROTO)
					TH_LOG("%lld", (long long)off);
				if (off > 0) {
					char *p = dfg_arena_ptr(self->a, off,
								len);

					ASSERT_NE(NULL, p);
					p[0] = 1;
					p[len - 1] = 1;
					live[slot] = off;
				}
			}
		}
	}
}

/* ------------------------------------------------------------------------
 * Multi-process stress
 * ------------------------------------------------------------------------
 */

#define NPROC		8
#define NITER		20000
#define NSLOTS		64
#define NHOT		50000
#define STRESS_SIZE	(8UL << 20)

/* Start of every live block in the stress test. */
struct stamp {
	__u32	pid;
	__u32	len;		/* bytes filled with pattern(seq) */
	__u64	seq;
};

static unsigned char pattern(__u64 seq, __u32 pid)
{
	return (unsigned char)(seq * 131 + pid * 7 + 1);
}

static void stamp_fill(struct dfg_arena *a, __u64 off, __u32 len, __u64 seq)
{
	struct stamp *s = dfg_arena_ptr(a, off, len);

	s->pid = getpid();
	s->len = len;
	s->seq = seq;
	memset(s + 1, pattern(seq, s->pid), len - sizeof(*s));
}

/* 0 if the block at @off still holds what its owner wrote. */
static int stamp_check(struct dfg_arena *a, __u64 off)
{
	struct stamp *s = dfg_arena_ptr(a, off, sizeof(*s));
	unsigned char *p;
	unsigned char v;
	__u32 i;

	if (!s || s->len < sizeof(*s) || s->len > dfg_buf_size(a, off))
		return -1;
	p = (unsigned char *)(s + 1);
	v = pattern(s->seq, s->pid);
	for (i = 0; i < s->len - sizeof(*s); i++)
		if (p[i] != v)
			return -1;
	return 0;
}

/*
 * One stress worker: random sizes (mostly small, some chunk runs), each
 * block stamped over its whole requested length and checked before it is
 * freed. Half the frees go through the shared slots, so blocks are freed
 * by other processes than their allocator. Exit status: 0 ok, 1 bad data,
 * 2 bad return value.
 */
static int stress_worker(struct dfg_arena *a, _Atomic __u64 *slots, int id)
{
	__s64 mine[16] = { 0 };
	__u64 seq = (__u64)id << 40;
	unsigned int r = id * 7919 + 1;
	int i, j;

	for (i = 0; i < NITER; i++) {
		r = r * 1103515245 + 12345;
		j = (r >> 8) % 16;
		if (mine[j] > 0) {
			__u64 off = mine[j];

			mine[j] = 0;
			if ((r >> 20) & 1) {
				/* Hand it over; free whatever was there. */
				off = atomic_exchange(&slots[(r >> 12) % NSLOTS],
						      off);
				if (!off)
					continue;
			}
			if (stamp_check(a, off))
				return 1;
			if (dfg_buf_free(a, off))
				return 2;
		} else {
			__u32 len = (r >> 16) % 8 ? 16 + (r >> 4) % 1000 :
				    16 + (r >> 4) % 70000;
			__s64 off = dfg_buf_alloc(a, len);

			if (off == -ENOMEM)
				continue;
			if (off <= 0 || dfg_buf_size(a, off) < len)
				return 2;
			stamp_fill(a, off, len, ++seq);
			mine[j] = off;
		}
	}
	/*
	 * Hot phase: tiny blocks, short hold times, so that pops race with
	 * pops and pushes of the same few blocks (the ABA window).
	 */
	for (i = 0; i < NHOT; i++) {
		__s64 off[3];

		for (j = 0; j < 3; j++) {
			off[j] = dfg_buf_alloc(a, 64);
			if (off[j] <= 0)
				return 2;
			stamp_fill(a, off[j], 24, ++seq);
		}
		for (j = 0; j < 3; j++)
			if (stamp_check(a, off[j]) || dfg_buf_free(a, off[j]))
				return 1;
	}
	for (j = 0; j < 16; j++) {
		if (mine[j] <= 0)
			continue;
		if (stamp_check(a, mine[j]))
			return 1;
		if (dfg_buf_free(a, mine[j]))
			return 2;
	}
	return 0;
}

TEST(stress_8_processes)
{
	_Atomic __u64 *slots;
	struct dfg_arena *a;
	pid_t pids[NPROC];
	char *base;
	int i, status;
	__s64 off;

	base = guarded_map(STRESS_SIZE);
	ASSERT_NE(NULL, base);
	slots = mmap(NULL, NSLOTS * sizeof(*slots), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, slots);
	ASSERT_EQ(0, dfg_arena_wrap(base, STRESS_SIZE, 1, &a));
	ASSERT_EQ(0, dfg_alloc_init(a));

	for (i = 0; i < NPROC; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			struct dfg_arena *c;

			/* A view of its own, as a peer process would have. */
			if (dfg_arena_wrap(base, STRESS_SIZE, 1, &c) ||
			    dfg_alloc_attach(c))
				_exit(3);
			_exit(stress_worker(c, slots, i + 1));
		}
	}
	for (i = 0; i < NPROC; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("worker %d", i);
	}
	for (i = 0; i < NSLOTS; i++) {
		if (!slots[i])
			continue;
		EXPECT_EQ(0, stamp_check(a, slots[i]));
		EXPECT_EQ(0, dfg_buf_free(a, slots[i]));
	}
	/* Everything is free again: blocks come back and are distinct. */
	off = dfg_buf_alloc(a, 100);
	EXPECT_LT(0, off);
	EXPECT_EQ(0, dfg_buf_free(a, off));
	EXPECT_EQ(-EINVAL, dfg_buf_free(a, off));

	dfg_arena_unmap(a);
	munmap(slots, NSLOTS * sizeof(*slots));
	guarded_unmap(base, STRESS_SIZE);
}

TEST_HARNESS_MAIN
