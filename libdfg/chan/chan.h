/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg internals shared by chan/: the arena view and the allocator's
 * private per-process state.
 */
#ifndef _DFG_CHAN_CHAN_H
#define _DFG_CHAN_CHAN_H

#include <stdbool.h>

#include "sys.h"

/*
 * struct dfg_alloc_layout - where the allocator's parts are in an arena
 *
 * Computed by this process from its own mapping size (dfg_alloc_layout()),
 * never read back from shared memory: the copy in the arena header is only
 * compared with it. All offsets are from the arena base.
 *
 * @bitmap_off:	allocation bitmap, one bit per DFG_BUF_MIN granule of the
 *		whole arena, in 64-bit words
 * @chunktab_off: chunk table, one byte per chunk of the data area
 * @data_off:	first chunk, page aligned
 * @data_end:	end of the last whole chunk
 * @nr_chunks:	chunks in [data_off, data_end)
 * @nr_classes:	size classes usable: 64 << (nr_classes - 1) <= data size
 */
struct dfg_alloc_layout {
	__u64		bitmap_off;
	__u64		chunktab_off;
	__u64		data_off;
	__u64		data_end;
	__u32		nr_chunks;
	__u32		nr_classes;
};

/*
 * struct dfg_arena - this process's view of an arena
 * @graph_fd:	graph descriptor it was mapped from (not owned), or -1
 * @id:		object id in the graph: the arena's, or the region id the
 *		caller gave dfg_region_map(); 0 for dfg_arena_wrap()
 * @size:	bytes mapped
 * @base:	start of the mapping
 * @writable:	mapped read-write
 * @mapped:	@base came from mmap() here: dfg_arena_unmap() unmaps it
 * @alloc_ready: dfg_alloc_init() or dfg_alloc_attach() succeeded
 * @lay:	allocator layout, valid when @alloc_ready
 */
struct dfg_arena {
	int			graph_fd;
	unsigned int		id;
	size_t			size;
	void			*base;
	bool			writable;
	bool			mapped;
	bool			alloc_ready;
	struct dfg_alloc_layout	lay;
};

/* arena.c helpers shared with region.c */
int dfg_arena_new(int graph_fd, unsigned int id, void *base, size_t size,
		  bool writable, bool mapped, struct dfg_arena **out);
size_t dfg_page_round(size_t size);

/*
 * struct dfg_chan_ops - how an endpoint enters the kernel
 * @wait:	DFG_IOC_CHAN_WAIT: DFG_CHAN_EV_* bits or -errno (-EPIPE,
 *		-EINTR, ...); a spurious 0 is allowed, callers look again
 * @wake:	DFG_IOC_CHAN_WAKE: >= 0 or -errno
 *
 * dfg_chan_open() uses the ioctls; host tests pass their own to run the
 * ring logic over fake channel memory without the module.
 */
struct dfg_chan_ops {
	int	(*wait)(struct dfg_chan *c);
	int	(*wake)(struct dfg_chan *c);
};

/*
 * struct dfg_chan - one endpoint
 * @fd:		endpoint descriptor; owned (-1 for __dfg_chan_attach() views)
 * @role:	DFG_CHAN_PRODUCER or DFG_CHAN_CONSUMER
 * @slot:	producer: its ring; consumer: 0
 * @depth:	entries per ring (checked power of two), @mask = @depth - 1
 * @nrings:	rings (max_producers), checked against the mapping size
 * @spin:	fixed polls before parking (when !@spin_auto)
 * @spin_auto:	adaptive polling: up to @spin_ns before parking, skipped on
 *		all but one wait in 2^@spin_fails after spins that failed
 * @spin_ns:	adaptive polling budget per wait, 0: park at once
 * @spin_fails:	consecutive adaptive spins that ended in a park (capped)
 * @spin_skip:	waits left that park without polling (back-off)
 * @hdr:	the mapping (page 0)
 * @map_size:	its length; @mapped: unmap it on close
 * @ring_size:	bytes per ring
 * @nr_waits:	WAITs of this endpoint in flight (its waiting flag is up)
 * @pool:	the pool as this process maps it (not owned)
 * @ops:	kernel entry points
 * @priv:	for @ops (tests)
 *
 * Geometry is read from the header once, checked, and kept here: nothing
 * at run time depends on header fields a peer could rewrite.
 */
struct dfg_chan {
	int				fd;
	int				role;
	unsigned int			slot;
	unsigned int			depth;
	unsigned int			mask;
	unsigned int			nrings;
	unsigned int			spin;
	bool				spin_auto;
	unsigned int			spin_ns;
	unsigned int			spin_fails;
	unsigned int			spin_skip;
	struct dfg_chan_hdr		*hdr;
	size_t				map_size;
	size_t				ring_size;
	bool				mapped;
	unsigned int			nr_waits;
	struct dfg_arena		*pool;
	const struct dfg_chan_ops	*ops;
	void				*priv;
};

/*
 * Endpoint over channel memory already mapped at @map (@size bytes):
 * checks the header against @pool as dfg_chan_open() does and builds the
 * endpoint; does not take ownership of @map or @fd (the caller sets
 * ->mapped and ->fd if it wants close to release them). @ops NULL means
 * the ioctls on @fd. Returns 0 or -EINVAL, -EPROTO, -ENOMEM.
 */
int __dfg_chan_attach(void *map, size_t size, int fd, int role,
		      unsigned int slot, struct dfg_arena *pool,
		      const struct dfg_chan_ops *ops, void *priv,
		      struct dfg_chan **out);

#endif /* _DFG_CHAN_CHAN_H */
