/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg: graphs, arenas and the arena buffer allocator.
 *
 * Graphs
 * ------
 * A graph (see <linux/dfg.h>, "Commands: graphs") is the unit of sharing and
 * permission. dfg_graph_create() and dfg_graph_attach() send
 * DFG_IOC_GRAPH_CREATE / DFG_IOC_GRAPH_ATTACH on the handle's /dev/dfg and
 * return a graph file descriptor, which the caller owns (close(2) it).
 * Asynchronous versions: dfg_prep_graph_create() and dfg_prep_graph_attach()
 * in <dfg/prep.h>.
 *
 * Arenas
 * ------
 * An arena is kernel memory of a graph that every attached process maps
 * shared. struct dfg_arena is this process's view of one: graph descriptor
 * (not owned), object id, size, base address, writable or not. Data in an
 * arena is referenced by offset from its base, never by pointer; convert
 * with the bounds-checked dfg_arena_ptr() and dfg_arena_off().
 * dfg_arena_wrap() builds the same view over memory that is not a dfg arena
 * (tests, a MAP_SHARED file), so the allocator also runs without the module.
 *
 * Buffer allocator
 * ----------------
 * Lets every process that maps an arena allocate and free blocks in it, by
 * offset, without a lock and without the kernel. The creator calls
 * dfg_alloc_init() once, before peers attach; every other process calls
 * dfg_alloc_attach() on its own mapping. Then dfg_buf_alloc() and
 * dfg_buf_free() work from any of them, on any block, whoever allocated it.
 *
 * Design (segregated power-of-two size classes, lock-free):
 *
 *  - Offset 0 holds a header (magic "DFGALLOC", version, arena size and the
 *    layout below), then an allocation bitmap (one bit per 64-byte granule
 *    of the arena: set when a block starting there is allocated), then a
 *    chunk table (one byte per 16 KiB chunk: the size class the chunk
 *    belongs to, "continuation" for the inner chunks of a large block, or
 *    0 for never used). Blocks start at the first page boundary after these.
 *  - Class k has blocks of 64 << k bytes (64 B up to the largest power of
 *    two that fits the data area, at most 128 GiB). A block is aligned to
 *    min(its size, 4096) bytes from the arena base. Requests are rounded up
 *    to their class: up to half a block is internal waste.
 *  - Each class has a free list: a LIFO (Treiber stack) whose head is one
 *    64-bit word, 32-bit ABA tag : 32-bit granule index of the top block,
 *    updated with compare-and-swap; a free block holds the index of the
 *    next one in its first 8 bytes.
 *  - Fresh space comes from a bump offset advanced by compare-and-swap, a
 *    chunk at a time. A class below 16 KiB carves a chunk into blocks (one
 *    returned, the rest pushed onto its list in one CAS); a class of 16 KiB
 *    or more takes a run of chunks. When the bump offset is exhausted, a
 *    request may split a free block of a larger chunk-run class (halving,
 *    buddy style; the halves go onto their lists). Memory given to a class
 *    below 16 KiB stays in it; free blocks are never merged.
 *  - Allocation: pop the class list, else refill; then set the block's
 *    bitmap bit. Free: validate that the offset is a block start of a used
 *    chunk, clear the bit (was it clear: -EINVAL, which catches double
 *    frees), push. No call takes a lock or enters the kernel; one process
 *    stalled at any point never blocks the others.
 *
 * Shared memory is never trusted: the layout is recomputed locally from
 * the size of this process's mapping and compared with the header at
 * attach (-EPROTO on any difference), and every index, offset and class
 * read from the arena at run time is bounds-checked before it is used. A
 * corrupted or hostile peer can lose or overlap blocks (data is shared
 * anyway) but cannot make this library read or write outside the arena;
 * inconsistencies it detects are reported as -EPROTO.
 *
 * A process that dies inside dfg_buf_alloc() or dfg_buf_free() can leak
 * at most the block (or, during a refill, the chunk) it was working on;
 * every shared word is updated by one atomic operation, so the structure
 * stays consistent and other processes carry on.
 *
 * The arena header layout is a library format (DFG_ALLOC_VERSION), not a
 * kernel ABI: all processes sharing an arena must use compatible libdfg.
 *
 * Errors: as everywhere in libdfg, -errno returns; errno is never changed.
 */
#ifndef _DFG_GRAPH_H
#define _DFG_GRAPH_H

#include <stddef.h>
#include <linux/dfg.h>
#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dfg;

/* ------------------------------------------------------------------------
 * Graphs
 * ------------------------------------------------------------------------
 */

/**
 * dfg_graph_create() - DFG_IOC_GRAPH_CREATE: create a graph and open it
 * @d:		handle
 * @name:	1..DFG_NAME_MAX-1 bytes of [A-Za-z0-9._-]
 * @mode:	permission bits (<= 0777), checked like System V IPC
 * @flags:	DFG_GRAPH_O_CLOEXEC or zero
 *
 * Returns a new graph descriptor (>= 0, read-write, owned by the caller),
 * or -errno: -EINVAL (@d or @name NULL, empty name, bad character, bad
 * mode or flags), -ENAMETOOLONG (@name of DFG_NAME_MAX bytes or more),
 * -EEXIST (name taken), -ENOSPC (dfg.max_graphs reached), -ENOTTY.
 */
int dfg_graph_create(struct dfg *d, const char *name, unsigned int mode,
		     unsigned int flags);

/**
 * dfg_graph_attach() - DFG_IOC_GRAPH_ATTACH: open an existing graph by name
 * @d:		handle
 * @name:	graph name
 * @flags:	DFG_GRAPH_O_RDONLY, DFG_GRAPH_O_CLOEXEC
 *
 * Returns a new graph descriptor (>= 0; read-only with DFG_GRAPH_O_RDONLY)
 * or -errno: -EINVAL, -ENAMETOOLONG (as dfg_graph_create()), -ENOENT (no
 * such graph), -EACCES (permission denied), -ENOTTY.
 */
int dfg_graph_attach(struct dfg *d, const char *name, unsigned int flags);

/**
 * dfg_graph_info() - DFG_IOC_GRAPH_INFO on a graph descriptor
 * @graph_fd:	graph descriptor
 * @info:	out: cleared, @info->size set, then filled by the module
 *
 * Returns 0 or -errno: -EINVAL (@info NULL), -EBADF (@graph_fd < 0 or not
 * open), -EBADFD (not a graph descriptor, e.g. /dev/dfg), -ENOTTY.
 */
int dfg_graph_info(int graph_fd, struct dfg_graph_info *info);

/* ------------------------------------------------------------------------
 * Arenas
 * ------------------------------------------------------------------------
 */

/* Opaque: this process's mapping of one arena. */
struct dfg_arena;

/* dfg_arena_off() result for a pointer outside the arena. */
#define DFG_ARENA_OFF_INVALID	(~(__u64)0)

/**
 * dfg_arena_create() - DFG_IOC_ARENA_CREATE, then map the arena read-write
 * @graph_fd:	graph descriptor opened for writing; not owned by the arena
 *		(keep it open while the arena is used, close it yourself)
 * @size:	bytes, > 0; rounded up to the page size by the module
 * @out:	out: the arena, set only on success
 *
 * Peers map the arena with dfg_arena_map(dfg_arena_id(), dfg_arena_size()).
 * If the mapping fails the arena object stays in the graph until the graph
 * dies (there is no destroy command).
 *
 * Returns 0 or -errno: -EINVAL (@out NULL, @size 0), -EBADF, -EACCES
 * (read-only descriptor), -EFBIG, -ENOMEM, -EAGAIN (RLIMIT_MEMLOCK), errors
 * of mmap(2).
 */
int dfg_arena_create(int graph_fd, size_t size, struct dfg_arena **out);

/**
 * dfg_arena_map() - map an existing arena of a graph
 * @graph_fd:	graph descriptor (from dfg_graph_attach(), inherited, or
 *		received); not owned by the arena
 * @id:		object id of the arena (dfg_arena_id() in its creator)
 * @size:	bytes to map, > 0, at most the arena's size; rounded up to
 *		the page size
 * @writable:	nonzero to map read-write (needs a read-write descriptor)
 * @out:	out: the arena, set only on success
 *
 * Returns 0 or -errno: -EINVAL (@out NULL, @size 0, larger than the
 * arena, no such object), -EBADF, -EACCES (@writable on a read-only
 * descriptor), -ENOMEM, errors of mmap(2).
 */
int dfg_arena_map(int graph_fd, unsigned int id, size_t size, int writable,
		  struct dfg_arena **out);

/**
 * dfg_arena_wrap() - an arena view of memory that is not a dfg arena
 * @base:	start of the memory, 64-byte aligned (page-aligned memory
 *		gives the allocator's full alignment guarantees)
 * @size:	its size in bytes, > 0
 * @writable:	nonzero if the memory may be written
 * @out:	out: the arena, set only on success
 *
 * For tests, or memory shared otherwise (MAP_SHARED file or anonymous
 * mapping inherited over fork(2)). dfg_arena_unmap() frees the view but
 * leaves the memory alone. dfg_arena_id() is 0 and there is no graph.
 *
 * Returns 0 or -EINVAL (@base or @out NULL, @size 0, @base misaligned,
 * @base + @size wraps around).
 */
int dfg_arena_wrap(void *base, size_t size, int writable,
		   struct dfg_arena **out);

/**
 * dfg_arena_unmap() - unmap the arena and free the view
 * @a:		arena, or NULL (nothing happens)
 *
 * Pointers into the arena become invalid. The arena itself lives on in
 * the graph (and in other processes). The graph descriptor is not closed.
 */
void dfg_arena_unmap(struct dfg_arena *a);

/* Accessors; never fail on a valid arena; NULL/0 for a NULL arena. */
void *dfg_arena_base(const struct dfg_arena *a);
size_t dfg_arena_size(const struct dfg_arena *a);
unsigned int dfg_arena_id(const struct dfg_arena *a);
bool dfg_arena_writable(const struct dfg_arena *a);

/**
 * dfg_arena_ptr() - bounds-checked pointer to bytes [@off, @off + @len)
 * @a:		arena
 * @off:	offset from the arena base
 * @len:	length of the range the caller will access
 *
 * Returns base + @off if the whole range lies inside the arena (@off + @len
 * <= size, computed without overflow; @len 0 at @off == size gives the end
 * pointer), else NULL. Use it on every offset received from a peer.
 */
void *dfg_arena_ptr(const struct dfg_arena *a, __u64 off, __u64 len);

/**
 * dfg_arena_off() - offset of a pointer into the arena
 * @a:		arena
 * @p:		pointer
 *
 * Returns @p - base if @p points into the arena ([base, base + size)),
 * else DFG_ARENA_OFF_INVALID.
 */
__u64 dfg_arena_off(const struct dfg_arena *a, const void *p);

/* ------------------------------------------------------------------------
 * Buffer allocator
 * ------------------------------------------------------------------------
 */

/* Smallest block; every block is a power of two at least this large. */
#define DFG_BUF_MIN		64

/**
 * dfg_alloc_init() - lay out an allocator in an arena (creator only)
 * @a:		writable arena; everything from offset 0 to the first block
 *		(a few KiB: header, bitmap, chunk table) is overwritten
 *
 * Call once, before any peer attaches; the header's magic is published
 * last, so a peer attaching concurrently sees either -EPROTO or a
 * complete header. Re-initialising an arena in use by peers loses their
 * blocks and is not supported.
 *
 * Returns 0 or -errno: -EINVAL (@a NULL), -EACCES (read-only arena),
 * -ENOSPC (too small for the header and one 16 KiB chunk), -EFBIG (larger
 * than 256 GiB).
 */
int dfg_alloc_init(struct dfg_arena *a);

/**
 * dfg_alloc_attach() - use an allocator another process laid out
 * @a:		arena, mapped with the same size as its creator's
 *
 * Checks magic, version and that the layout recorded in the header is the
 * one this library computes for this mapping's size.
 *
 * Returns 0 or -errno: -EINVAL (@a NULL), -EPROTO (no allocator, other
 * version, different size or corrupted header).
 */
int dfg_alloc_attach(struct dfg_arena *a);

/**
 * dfg_buf_alloc() - allocate a block
 * @a:		arena after dfg_alloc_init() or dfg_alloc_attach()
 * @len:	bytes needed, > 0
 *
 * The block has at least @len bytes (dfg_buf_size() tells how many), is
 * aligned to min(block size, 4096) bytes from the arena base and may hold
 * old data. Lock-free; may be called from several threads and processes.
 *
 * Returns the block's offset (> 0) or -errno: -EINVAL (@a NULL or without
 * allocator, @len 0), -EACCES (read-only arena), -ENOMEM (no block of that
 * class free and no fresh space), -EPROTO (corruption detected).
 */
__s64 dfg_buf_alloc(struct dfg_arena *a, size_t len);

/**
 * dfg_buf_free() - free a block, whichever process allocated it
 * @a:		arena after dfg_alloc_init() or dfg_alloc_attach()
 * @off:	offset returned by dfg_buf_alloc() (in any process)
 *
 * Returns 0 or -errno: -EINVAL (@a NULL or without allocator, @off not the
 * start of a block, or of a block that is not allocated: double free),
 * -EACCES (read-only arena).
 */
int dfg_buf_free(struct dfg_arena *a, __u64 off);

/**
 * dfg_buf_size() - usable size of an allocated block
 * @a:		arena after dfg_alloc_init() or dfg_alloc_attach()
 * @off:	offset of the block
 *
 * Returns the block size (>= the requested length), or 0 if @off is not
 * the start of an allocated block. Works on read-only arenas.
 */
size_t dfg_buf_size(const struct dfg_arena *a, __u64 off);

#ifdef __cplusplus
}
#endif

#endif /* _DFG_GRAPH_H */
