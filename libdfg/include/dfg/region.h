/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg: exported regions.
 *
 * A region (see <linux/dfg.h>, "Commands: regions") is a range of the
 * exporting process's own memory that peers attached to the same graph map
 * without a copy: the same physical pages, read-only or, with
 * DFG_REGION_F_WRITE, read-write. The exporter calls dfg_region_export()
 * and passes the region's id and mmap offset to its peers out of band (a
 * pipe, a socket, shared memory); each peer calls dfg_region_map() on its
 * own descriptor of the graph. The offset is not DFG_MMAP_OFFSET(id): it
 * is module-wide, chosen by the kernel.
 *
 * dfg_region_map() returns the same struct dfg_arena view as
 * dfg_arena_map(), so dfg_arena_ptr(), dfg_arena_off() and everything
 * built on an arena view work on a region too; dfg_arena_id() of a region
 * view is the region id given to dfg_region_map(), dfg_arena_unmap()
 * unmaps it.
 *
 * A region can be a channel's pool (dfg_chan_create() with the region id):
 * open the endpoints with a view from dfg_region_map() of the whole
 * region (dfg_chan_open() checks the pool's id and size). The exporter,
 * which holds its memory already, maps its own region the same way to get
 * such a view; the pages are the same. A later dfg_region_unexport() does
 * not touch the channel, but every access to a mapping of the region then
 * raises SIGBUS: unexport once nobody dereferences its descriptors.
 *
 * dfg_region_unexport() revokes every peer's mapping at once: later
 * accesses raise SIGBUS. The exporter's exit does not unexport; graph
 * death does. dfg_region_copy() moves data between a region and the
 * caller's own memory with one copy in the kernel, for data that is not
 * in shared memory.
 *
 * Errors: as everywhere in libdfg, -errno returns; errno is never changed.
 */
#ifndef _DFG_REGION_H
#define _DFG_REGION_H

#include <stddef.h>
#include <linux/dfg.h>
#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dfg_arena;

/**
 * dfg_region_export() - DFG_IOC_REGION_EXPORT: export the caller's memory
 * @graph_fd:	graph descriptor opened for writing
 * @addr:	page-aligned start of the range
 * @len:	page-aligned length, > 0
 * @flags:	DFG_REGION_F_WRITE to let peers write, or zero
 * @mmap_offset: out: the offset peers map (may be NULL)
 *
 * The pages are pinned and charged to the caller's RLIMIT_MEMLOCK until
 * dfg_region_unexport() or the graph's death.
 *
 * Returns the region id (> 0) or -errno: -EINVAL (alignment, @len 0,
 * unknown flags), -EBADF, -EFAULT (range not mapped, or not writable with
 * DFG_REGION_F_WRITE), -EFBIG (above dfg.max_arena_mb), -EAGAIN
 * (RLIMIT_MEMLOCK), -EACCES (read-only descriptor), -EPROTO (the module
 * answered nonsense), -ENOTTY.
 */
int dfg_region_export(int graph_fd, void *addr, size_t len,
		      unsigned int flags, __u64 *mmap_offset);

/**
 * dfg_region_unexport() - DFG_IOC_REGION_UNEXPORT: revoke and unpin
 * @graph_fd:	graph descriptor opened for writing (any process's)
 * @id:		region id
 *
 * Returns 0 or -errno: -ENOENT (no such region), -EACCES (read-only
 * descriptor), -EBADF.
 */
int dfg_region_unexport(int graph_fd, unsigned int id);

/**
 * dfg_region_map() - map a region into this process
 * @graph_fd:	any descriptor of the region's graph; not owned by the view
 * @id:		the region id dfg_region_export() returned; recorded in the
 *		view (dfg_arena_id()), so it can be a channel's pool. The
 *		kernel maps by offset only: a wrong id is not detected here,
 *		but dfg_chan_open() then fails with -EPROTO
 * @mmap_offset: the offset dfg_region_export() returned
 * @len:	bytes to map, > 0, at most the region's length; rounded up to
 *		the page size
 * @writable:	nonzero to map read-write (needs DFG_REGION_F_WRITE and a
 *		read-write descriptor)
 * @out:	out: the view, set only on success
 *
 * Returns 0 or -errno: -EINVAL (@out NULL, @id 0, @len 0, not a region
 * offset, no such region in this graph, longer than the region), -EACCES
 * (@writable not granted), -EBADF, -ENOMEM, errors of mmap(2).
 */
int dfg_region_map(int graph_fd, unsigned int id, __u64 mmap_offset,
		   size_t len, int writable, struct dfg_arena **out);

/**
 * dfg_region_copy() - DFG_IOC_REGION_COPY: one copy to or from a region
 * @graph_fd:	graph descriptor (read-only is enough for
 *		DFG_COPY_FROM_REGION)
 * @id:		region id
 * @off:	offset in the region
 * @buf:	the caller's buffer
 * @len:	bytes; any length (split into DFG_REGION_COPY_MAX commands)
 * @dir:	DFG_COPY_TO_REGION or DFG_COPY_FROM_REGION
 *
 * Returns @len or -errno: -ERANGE ([@off, @off + @len) outside the
 * region), -EACCES (direction not granted), -EFAULT (bad @buf; part of
 * the data may have been copied), -ENOENT (no such region), -EINVAL (bad
 * @dir), -EBADF.
 */
__s64 dfg_region_copy(int graph_fd, unsigned int id, __u64 off, void *buf,
		      size_t len, unsigned int dir);

#ifdef __cplusplus
}
#endif

#endif /* _DFG_REGION_H */
