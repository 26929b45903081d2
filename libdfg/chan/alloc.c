// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: the arena buffer allocator. Lock-free, multi-process,
 * offsets only. The design is described in <dfg/graph.h>; this comment
 * covers the details the code relies on.
 *
 * Arena layout (offsets from the base; all computed by dfg_alloc_layout()
 * from the arena size alone):
 *
 *   0              struct dfg_alloc_hdr (DFG_ALLOC_HDR_SIZE bytes)
 *   bitmap_off     allocation bitmap: bit (off >> 6) is set while the block
 *                  starting at off is allocated; 64-bit words
 *   chunktab_off   chunk table: one byte per chunk of the data area:
 *                  0 unused, k + 1 first chunk of class k, CHUNK_CONT inner
 *                  chunk of a block of a chunk-run class
 *   data_off       chunks of DFG_CHUNK_SIZE bytes, page aligned, up to
 *   data_end
 *
 * Free-list head (struct dfg_alloc_hdr.free[k].head): tag << 32 | gidx,
 * where gidx is the block's granule index off >> 6 (off >= data_off > 0,
 * so 0 means empty) and tag counts successful updates of that head (ABA
 * guard). A free block's first 8 bytes hold the gidx of the next block in
 * the low 32 bits.
 *
 * Memory ordering: a push stores the next word (relaxed) then publishes
 * the head with a release CAS; a pop loads the head with acquire, so it
 * sees that next word, then claims with an acquire CAS. The chunk table
 * byte of a fresh chunk is stored with release before the chunk's blocks
 * become reachable (pushed or returned), and read with acquire. The bitmap
 * is changed with fetch_or/fetch_and (acq_rel): it is the single point
 * where ownership of a block changes between "allocated" and "not".
 *
 * Death mid-operation: between claiming a block (pop or bump) and setting
 * its bit, or between clearing a bit and the push, the block belongs to
 * nobody: it leaks, nothing else breaks.
 */
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "chan.h"

#define DFG_ALLOC_MAGIC		0x434f4c4c41474644ULL	/* "DFGALLOC" */
#define DFG_ALLOC_VERSION	1

#define DFG_GRAN_SHIFT		6			/* DFG_BUF_MIN */
#define DFG_CHUNK_SHIFT		14
#define DFG_CHUNK_SIZE		(1ULL << DFG_CHUNK_SHIFT)
#define DFG_DATA_ALIGN		4096ULL
#define DFG_NR_CLASSES_MAX	32			/* 64 B .. 128 GiB */
#define DFG_ARENA_MAX		(1ULL << (32 + DFG_GRAN_SHIFT))	/* 256 GiB */
/* First class whose blocks are whole chunks (16 KiB). */
#define DFG_CLASS_RUN		(DFG_CHUNK_SHIFT - DFG_GRAN_SHIFT)

#define CHUNK_UNUSED		0
#define CHUNK_CONT		0xff

/*
 * struct dfg_alloc_hdr - allocator header at arena offset 0
 * @magic:	DFG_ALLOC_MAGIC, stored last (release) by dfg_alloc_init()
 * @version:	DFG_ALLOC_VERSION
 * @hdr_size:	sizeof(struct dfg_alloc_hdr)
 * @arena_size:	size the layout was computed for
 * @bitmap_off, @chunktab_off, @data_off, @data_end, @nr_chunks,
 * @nr_classes:	the layout, for dfg_alloc_attach() to compare
 * @chunk_shift: DFG_CHUNK_SHIFT
 * @gran_shift:	DFG_GRAN_SHIFT
 * @bump:	next unused chunk offset, data_off..data_end, CAS-advanced
 * @free:	per-class free-list heads, one cache line each
 */
struct dfg_alloc_hdr {
	__u64		magic;
	__u32		version;
	__u32		hdr_size;
	__u64		arena_size;
	__u64		bitmap_off;
	__u64		chunktab_off;
	__u64		data_off;
	__u64		data_end;
	__u32		nr_chunks;
	__u32		nr_classes;
	__u32		chunk_shift;
	__u32		gran_shift;

	alignas(64) _Atomic __u64 bump;

	struct {
		alignas(64) _Atomic __u64 head;
	} free[DFG_NR_CLASSES_MAX];
};

_Static_assert(sizeof(_Atomic __u64) == 8 && alignof(_Atomic __u64) == 8,
	       "64-bit atomics must be plain words in shared memory");
_Static_assert(sizeof(struct dfg_alloc_hdr) == 64 * (3 + DFG_NR_CLASSES_MAX),
	       "header layout changed: bump DFG_ALLOC_VERSION");

static inline struct dfg_alloc_hdr *hdr_of(const struct dfg_arena *a)
{
	return a->base;
}

static inline __u64 class_size(unsigned int k)
{
	return 1ULL << (k + DFG_GRAN_SHIFT);
}

/* Class whose blocks hold @len bytes (may be >= DFG_NR_CLASSES_MAX). */
static unsigned int class_of(size_t len)
{
	if (len <= DFG_BUF_MIN)
		return 0;
	return 64 - __builtin_clzll((__u64)len - 1) - DFG_GRAN_SHIFT;
}

static inline _Atomic __u64 *word_at(const struct dfg_arena *a, __u64 off)
{
	return (_Atomic __u64 *)((char *)a->base + off);
}

static inline _Atomic __u8 *chunk_byte(const struct dfg_arena *a, __u32 c)
{
	return (_Atomic __u8 *)((char *)a->base + a->lay.chunktab_off + c);
}

static inline __u64 chunk_off(const struct dfg_arena *a, __u32 c)
{
	return a->lay.data_off + ((__u64)c << DFG_CHUNK_SHIFT);
}

/*
 * Layout for an arena of @size bytes; -ENOSPC if not even one chunk fits,
 * -EFBIG beyond what 32-bit granule indices address.
 */
static int dfg_alloc_layout(__u64 size, struct dfg_alloc_layout *lay)
{
	__u64 bitmap_bytes, off, max_chunks, k;

	if (size > DFG_ARENA_MAX)
		return -EFBIG;
	bitmap_bytes = ((size >> DFG_GRAN_SHIFT) + 63) / 64 * 8;
	max_chunks = size >> DFG_CHUNK_SHIFT;

	lay->bitmap_off = sizeof(struct dfg_alloc_hdr);
	lay->chunktab_off = lay->bitmap_off + bitmap_bytes;
	off = lay->chunktab_off + max_chunks;
	off = (off + DFG_DATA_ALIGN - 1) & ~(DFG_DATA_ALIGN - 1);
	if (off >= size || (size - off) < DFG_CHUNK_SIZE)
		return -ENOSPC;
	lay->data_off = off;
	lay->nr_chunks = (size - off) >> DFG_CHUNK_SHIFT;
	lay->data_end = off + ((__u64)lay->nr_chunks << DFG_CHUNK_SHIFT);
	for (k = 0; k < DFG_NR_CLASSES_MAX; k++)
		if (class_size(k) > lay->data_end - lay->data_off)
			break;
	lay->nr_classes = k;
	return 0;
}

int dfg_alloc_init(struct dfg_arena *a)
{
	struct dfg_alloc_layout lay;
	struct dfg_alloc_hdr *h;
	unsigned int k;
	int ret;

	if (!a)
		return -EINVAL;
	if (!a->writable)
		return -EACCES;
	ret = dfg_alloc_layout(a->size, &lay);
	if (ret < 0)
		return ret;

	h = hdr_of(a);
	atomic_store_explicit((_Atomic __u64 *)&h->magic, 0,
			      memory_order_relaxed);
	memset((char *)a->base + sizeof(h->magic), 0,
	       lay.data_off - sizeof(h->magic));
	h->version = DFG_ALLOC_VERSION;
	h->hdr_size = sizeof(*h);
	h->arena_size = a->size;
	h->bitmap_off = lay.bitmap_off;
	h->chunktab_off = lay.chunktab_off;
	h->data_off = lay.data_off;
	h->data_end = lay.data_end;
	h->nr_chunks = lay.nr_chunks;
	h->nr_classes = lay.nr_classes;
	h->chunk_shift = DFG_CHUNK_SHIFT;
	h->gran_shift = DFG_GRAN_SHIFT;
	atomic_init(&h->bump, lay.data_off);
	for (k = 0; k < DFG_NR_CLASSES_MAX; k++)
		atomic_init(&h->free[k].head, 0);
	atomic_store_explicit((_Atomic __u64 *)&h->magic, DFG_ALLOC_MAGIC,
			      memory_order_release);

	a->lay = lay;
	a->alloc_ready = true;
	return 0;
}

int dfg_alloc_attach(struct dfg_arena *a)
{
	struct dfg_alloc_layout lay;
	struct dfg_alloc_hdr *h;

	if (!a)
		return -EINVAL;
	if (a->size < sizeof(*h) || dfg_alloc_layout(a->size, &lay) < 0)
		return -EPROTO;
	h = hdr_of(a);
	if (atomic_load_explicit((_Atomic __u64 *)&h->magic,
				 memory_order_acquire) != DFG_ALLOC_MAGIC)
		return -EPROTO;
	if (h->version != DFG_ALLOC_VERSION || h->hdr_size != sizeof(*h) ||
	    h->arena_size != a->size || h->bitmap_off != lay.bitmap_off ||
	    h->chunktab_off != lay.chunktab_off ||
	    h->data_off != lay.data_off || h->data_end != lay.data_end ||
	    h->nr_chunks != lay.nr_chunks ||
	    h->nr_classes != lay.nr_classes ||
	    h->chunk_shift != DFG_CHUNK_SHIFT ||
	    h->gran_shift != DFG_GRAN_SHIFT)
		return -EPROTO;
	a->lay = lay;
	a->alloc_ready = true;
	return 0;
}

/*
 * Is @off, read from shared memory, the start of a block of class @k in a
 * chunk of that class, wholly inside the data area? Everything the
 * allocator dereferences goes through this (or chunk_class_at()) first.
 */
static bool block_ok(const struct dfg_arena *a, __u64 off, unsigned int k)
{
	const struct dfg_alloc_layout *lay = &a->lay;
	__u64 rel, bsize = class_size(k);
	__u32 c;

	if (off < lay->data_off || off >= lay->data_end)
		return false;
	rel = off - lay->data_off;
	/* Carved blocks are aligned to their size, runs to the chunk. */
	if (rel & ((k < DFG_CLASS_RUN ? bsize : DFG_CHUNK_SIZE) - 1))
		return false;
	if (bsize > lay->data_end - off)
		return false;
	c = rel >> DFG_CHUNK_SHIFT;
	return atomic_load_explicit(chunk_byte(a, c), memory_order_acquire) ==
	       k + 1;
}

/*
 * Class of the block starting at @off, or -EINVAL if @off cannot be a
 * block start (outside the data area, misaligned for the class of its
 * chunk, an unused or inner chunk).
 */
static int class_at(const struct dfg_arena *a, __u64 off)
{
	const struct dfg_alloc_layout *lay = &a->lay;
	unsigned int b;
	__u64 rel;

	if (off < lay->data_off || off >= lay->data_end)
		return -EINVAL;
	rel = off - lay->data_off;
	b = atomic_load_explicit(chunk_byte(a, rel >> DFG_CHUNK_SHIFT),
				 memory_order_acquire);
	if (b == CHUNK_UNUSED || b == CHUNK_CONT || b > lay->nr_classes)
		return -EINVAL;
	return block_ok(a, off, b - 1) ? (int)(b - 1) : -EINVAL;
}

/* Bitmap word and mask of the block at @off (validated by the caller). */
static inline _Atomic __u64 *bit_word(const struct dfg_arena *a, __u64 off,
				      __u64 *mask)
{
	__u64 g = off >> DFG_GRAN_SHIFT;

	*mask = 1ULL << (g & 63);
	return word_at(a, a->lay.bitmap_off + (g >> 6) * 8);
}

/* Push the chain @first..@last (already linked) onto the list of @k. */
static void list_push(struct dfg_arena *a, unsigned int k, __u64 first,
		      __u64 last)
{
	_Atomic __u64 *head = &hdr_of(a)->free[k].head;
	__u64 old, new;

	old = atomic_load_explicit(head, memory_order_relaxed);
	do {
		atomic_store_explicit(word_at(a, last), (__u32)old,
				      memory_order_relaxed);
		new = ((old >> 32) + 1) << 32 | (first >> DFG_GRAN_SHIFT);
	} while (!atomic_compare_exchange_weak_explicit(head, &old, new,
							memory_order_release,
							memory_order_relaxed));
}

/* Pop a block of class @k: 0 and *@off, -ENOENT if empty, -EPROTO. */
static int list_pop(struct dfg_arena *a, unsigned int k, __u64 *off)
{
	_Atomic __u64 *head = &hdr_of(a)->free[k].head;
	__u64 old, new, next, b;

	old = atomic_load_explicit(head, memory_order_acquire);
	for (;;) {
		if (!(__u32)old)
			return -ENOENT;
		b = (__u64)(__u32)old << DFG_GRAN_SHIFT;
		if (!block_ok(a, b, k))
			return -EPROTO;
		/*
		 * May race with the block's new owner writing to it if
		 * another process popped it meanwhile; then the tag has
		 * moved and the CAS below fails.
		 */
		next = atomic_load_explicit(word_at(a, b),
					    memory_order_relaxed);
		new = ((old >> 32) + 1) << 32 | (__u32)next;
		if (atomic_compare_exchange_weak_explicit(head, &old, new,
							  memory_order_acquire,
							  memory_order_acquire))
			break;
	}
	*off = b;
	return 0;
}

/*
 * Give the chunks [@off, @off + @n chunks) to class @k: inner chunks
 * marked CHUNK_CONT, then the first one's class published with release.
 */
static void chunks_assign(struct dfg_arena *a, __u64 off, __u64 n,
			  unsigned int k)
{
	__u32 c = (off - a->lay.data_off) >> DFG_CHUNK_SHIFT;
	__u64 i;

	for (i = 1; i < n; i++)
		atomic_store_explicit(chunk_byte(a, c + i), CHUNK_CONT,
				      memory_order_relaxed);
	atomic_store_explicit(chunk_byte(a, c), k + 1, memory_order_release);
}

/* Take @n (a power of two) fresh chunks from the bump offset. */
static int bump_take(struct dfg_arena *a, __u64 n, __u64 *off)
{
	_Atomic __u64 *bump = &hdr_of(a)->bump;
	const struct dfg_alloc_layout *lay = &a->lay;
	__u64 need = n << DFG_CHUNK_SHIFT, cur;

	cur = atomic_load_explicit(bump, memory_order_relaxed);
	do {
		if (cur < lay->data_off || cur > lay->data_end ||
		    ((cur - lay->data_off) & (DFG_CHUNK_SIZE - 1)))
			return -EPROTO;
		if (need > lay->data_end - cur)
			return -ENOMEM;
	} while (!atomic_compare_exchange_weak_explicit(bump, &cur, cur + need,
							memory_order_relaxed,
							memory_order_relaxed));
	*off = cur;
	return 0;
}

/*
 * Take @n chunks (a power of two) from a free block of a chunk-run class
 * of @n chunks or more, splitting it buddy style: the first @n chunks are
 * ours, the rest go back as blocks of @n, 2@n, ... chunks.
 */
static int split_take(struct dfg_arena *a, __u64 n, __u64 *off)
{
	/* From the class of exactly @n chunks: a carving class has none. */
	unsigned int k = DFG_CLASS_RUN + __builtin_ctzll(n);
	unsigned int j;
	__u64 b, piece;

	for (; k < a->lay.nr_classes; k++) {
		if (list_pop(a, k, &b) < 0)
			continue;
		j = DFG_CLASS_RUN + __builtin_ctzll(n);
		for (piece = n; piece < class_size(k) >> DFG_CHUNK_SHIFT;
		     piece <<= 1, j++) {
			__u64 p = b + (piece << DFG_CHUNK_SHIFT);

			chunks_assign(a, p, piece, j);
			list_push(a, j, p, p);
		}
		*off = b;
		return 0;
	}
	return -ENOMEM;
}

/* No free block of class @k: make some, return one in *@off. */
static int refill(struct dfg_arena *a, unsigned int k, __u64 *off)
{
	__u64 bsize = class_size(k), n, b, i;
	int ret;

	n = k >= DFG_CLASS_RUN ? bsize >> DFG_CHUNK_SHIFT : 1;
	ret = bump_take(a, n, &b);
	if (ret == -ENOMEM)
		ret = split_take(a, n, &b);
	if (ret < 0)
		return ret;
	chunks_assign(a, b, n, k);

	if (k < DFG_CLASS_RUN) {
		/* Carve: keep the first block, chain and push the others. */
		for (i = bsize; i + bsize < DFG_CHUNK_SIZE; i += bsize)
			atomic_store_explicit(word_at(a, b + i),
					      (b + i + bsize) >> DFG_GRAN_SHIFT,
					      memory_order_relaxed);
		list_push(a, k, b + bsize, b + DFG_CHUNK_SIZE - bsize);
	}
	*off = b;
	return 0;
}

__s64 dfg_buf_alloc(struct dfg_arena *a, size_t len)
{
	_Atomic __u64 *w;
	unsigned int k;
	__u64 off, mask;
	int ret;

	if (!a || !a->alloc_ready || !len)
		return -EINVAL;
	if (!a->writable)
		return -EACCES;
	k = class_of(len);
	if (k >= a->lay.nr_classes)
		return -ENOMEM;

	ret = list_pop(a, k, &off);
	if (ret == -ENOENT)
		ret = refill(a, k, &off);
	if (ret < 0)
		return ret;

	w = bit_word(a, off, &mask);
	if (atomic_fetch_or_explicit(w, mask, memory_order_acq_rel) & mask)
		return -EPROTO;	/* a free-list entry that was in use: leak it */
	return (__s64)off;
}

int dfg_buf_free(struct dfg_arena *a, __u64 off)
{
	_Atomic __u64 *w;
	__u64 mask;
	int k;

	if (!a || !a->alloc_ready)
		return -EINVAL;
	if (!a->writable)
		return -EACCES;
	k = class_at(a, off);
	if (k < 0)
		return k;
	w = bit_word(a, off, &mask);
	if (!(atomic_fetch_and_explicit(w, ~mask, memory_order_acq_rel) & mask))
		return -EINVAL;	/* not allocated: double free */
	list_push(a, k, off, off);
	return 0;
}

size_t dfg_buf_size(const struct dfg_arena *a, __u64 off)
{
	_Atomic __u64 *w;
	__u64 mask;
	int k;

	if (!a || !a->alloc_ready)
		return 0;
	k = class_at(a, off);
	if (k < 0)
		return 0;
	w = bit_word(a, off, &mask);
	if (!(atomic_load_explicit(w, memory_order_acquire) & mask))
		return 0;
	return class_size(k);
}
