/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg: partitioned graphs served by the module, and the access engine
 * of patent 004 (hub-node replication and prefetch).
 *
 * A machine serves one partition of a graph (a file written by `dfg graph
 * partition`, <linux/dfg_graph.h>): dfg_hub_part_load() converts the file
 * into the module's partition image (struct dfg_part_hdr of <linux/dfg.h>)
 * and loads it (DFG_IOC_PART_LOAD); dfg_hub_peer_add() connects the
 * module to a peer machine's module (DFG_IOC_PEER_ADD); dfg_hub_prefetch()
 * asks where nodes' neighbour lists and attributes are and brings remote
 * ones into the machine's shared cache (DFG_IOC_PREFETCH). dfg_hub_open()
 * maps the loaded partition and the cache read-only and
 * dfg_hub_lookup() finds a node's bytes in them.
 *
 * The image's attributes of a node are its feature row followed, when the
 * graph has labels, by its label (__u32): feat_bytes = feature row bytes
 * (+ 4).
 *
 * The access engine (struct dfg_hub_engine) runs the pipeline of the
 * patent's section 3.3 for a mini-batch of root nodes: neighbour IDs,
 * sampling (uniform, or weighted by hop distance, fan-outs per hop,
 * deterministic from a seed), attributes of the sampled nodes only, and
 * an encoding into one contiguous buffer (struct dfg_hub_batch) in a dfg
 * arena, which a channel hands to a consumer without a copy. Its
 * prefetch rules R1..R4 (DFG_HUB_R*) are each switchable and counted;
 * the sampled mini-batches do not depend on them, nor on replication.
 *
 * Threads: a view and an engine are not locked; use each from one thread
 * at a time (one engine per sampling thread; views and the machine's
 * cache may be shared by any number of them and of processes).
 *
 * Errors: -errno returns, errno untouched; calls that read files also
 * write a one-line reason into a struct dfg_hub_err when given one.
 */
#ifndef _DFG_HUB_H
#define _DFG_HUB_H

#include <stddef.h>
#include <linux/dfg.h>
#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dfg;
struct dfg_arena;
struct dfg_chan;

/* A one-line reason for a failed call, for the user. */
struct dfg_hub_err {
	char	msg[256];
};

/* dfg_hub_image() / dfg_hub_part_load() flags */
#define DFG_HUB_LOAD_NO_REPLICA	0x1U	/* leave the hub replica out */
#define DFG_HUB_LOAD_ALL	(DFG_HUB_LOAD_NO_REPLICA)

/**
 * dfg_hub_image() - the module's partition image of a partition file
 * @path:	a file of `dfg graph partition` (or a whole graph)
 * @flags:	DFG_HUB_LOAD_*
 * @img:	out: the image, malloc()ed (free() it), set only on success
 * @len:	out: its bytes
 * @err:	out, may be NULL: the reason of a failure
 *
 * Returns 0 or -errno: -EINVAL (flags, NULL), the file's errors
 * (-ENOENT, -EBADMSG malformed, -EPROTO other version), -EFBIG
 * (attributes wider than DFG_PART_FEAT_MAX), -ENOMEM.
 */
int dfg_hub_image(const char *path, unsigned int flags, void **img,
		  size_t *len, struct dfg_hub_err *err);

/**
 * dfg_hub_part_load() - load a partition file into the module
 * @d:		handle
 * @path, @flags, @err: as dfg_hub_image()
 *
 * Returns 0 or -errno: those of dfg_hub_image(), and of
 * DFG_IOC_PART_LOAD (-EPERM without CAP_SYS_ADMIN, -EFBIG above
 * dfg.pf_max_part_mb, -EBUSY a partition is served to peers).
 */
int dfg_hub_part_load(struct dfg *d, const char *path, unsigned int flags,
		      struct dfg_hub_err *err);

/* What DFG_IOC_PEER_ADD said about a peer. */
struct dfg_hub_peer {
	__u32	id;
	__u64	node_first;
	__u64	node_count;
};

/**
 * dfg_hub_peer_add() - connect the module to a peer's module
 * @d:		handle
 * @addr:	numeric IPv4 or IPv6 address
 * @port:	0 for DFG_PF_PORT
 * @timeout_ms:	0 for the module's default (5 s)
 * @out:	out, may be NULL: the peer's id and node range
 *
 * Returns 0 or -errno: -EINVAL (@addr not an address), the errors of
 * DFG_IOC_PEER_ADD (-ENODEV no transport module, -EEXIST range taken,
 * -ETIMEDOUT, -ECONNREFUSED, ...).
 */
int dfg_hub_peer_add(struct dfg *d, const char *addr, unsigned int port,
		     unsigned int timeout_ms, struct dfg_hub_peer *out);

/**
 * dfg_hub_prefetch() - DFG_IOC_PREFETCH on the calling thread's wait ring
 * @d:		handle
 * @ids:	@nr global node IDs
 * @nr:		1..DFG_PF_NR_MAX
 * @what:	DFG_PF_NBRS, DFG_PF_ATTRS or both
 * @out:	@nr entries per bit of @what (see DFG_IOC_PREFETCH)
 *
 * Waits until remote bytes are in the cache (io_uring, or ioctl under
 * DFG_NO_URING). Returns the number of entries read from peers, or
 * -errno: those of DFG_IOC_PREFETCH (-EINVAL an ID no partition holds,
 * -ENODATA no partition, -EHOSTUNREACH owner lost, -EBUSY, -E2BIG).
 */
int dfg_hub_prefetch(struct dfg *d, const __u64 *ids, unsigned int nr,
		     unsigned int what, struct dfg_pf_loc *out);

/* Opaque: this process's read-only view of the partition and cache. */
struct dfg_hub;

/**
 * dfg_hub_open() - map the loaded partition (and the cache) read-only
 * @d:		handle; must outlive the view
 * @out:	out: the view, set only on success
 *
 * The cache is mapped once a peer made it (at the first lookup in it).
 *
 * Returns 0 or -errno: -ENODATA (no partition loaded), -EPROTO (the
 * mapping is not a valid image), -ENOMEM, errors of mmap(2).
 */
int dfg_hub_open(struct dfg *d, struct dfg_hub **out);

/* Unmaps and frees @h (NULL: nothing). */
void dfg_hub_close(struct dfg_hub *h);

/* The mapped image's header (never NULL for an open view). */
const struct dfg_part_hdr *dfg_hub_part(const struct dfg_hub *h);

/* dfg_hub_ref.where: DFG_PF_IN_PART, DFG_PF_IN_REPLICA, DFG_PF_IN_CACHE */

/**
 * struct dfg_hub_ref - a node's neighbours or attributes
 * @data:	the bytes: neighbour IDs (__u64), or attributes
 * @len:	bytes
 * @where:	DFG_PF_IN_*
 */
struct dfg_hub_ref {
	const void	*data;
	__u32		len;
	__u32		where;
};

/**
 * dfg_hub_lookup() - a node's bytes on this machine
 * @h:		view
 * @id:		global node ID
 * @what:	DFG_PF_NBRS or DFG_PF_ATTRS (one bit)
 * @ref:	out: the bytes, in the partition mapping (own node or
 *		replica; valid while @h is open)
 *
 * Returns 0 or -errno: -EINVAL (@what), -ENOENT (neither own nor
 * replicated: dfg_hub_prefetch() it, then dfg_hub_cache_copy()).
 */
int dfg_hub_lookup(const struct dfg_hub *h, __u64 id, unsigned int what,
		   struct dfg_hub_ref *ref);

/**
 * dfg_hub_cache_copy() - copy a cache entry that PREFETCH located
 * @h:		view
 * @loc:	a DFG_PF_IN_CACHE entry of dfg_hub_prefetch()
 * @dst:	@loc->len bytes
 *
 * Returns 0 or -errno: -EINVAL (not a cache entry, out of the ring),
 * -ENODATA (no cache), -ESTALE (the module reused the bytes while they
 * were copied: prefetch again).
 */
int dfg_hub_cache_copy(struct dfg_hub *h, const struct dfg_pf_loc *loc,
		       void *dst);

/* ------------------------------------------------------------------------
 * The access engine
 * ------------------------------------------------------------------------
 */

/* Most hops of a sample. */
#define DFG_HUB_HOPS_MAX	4

/* Prefetch rules (dfg_hub_opts.rules), patent 004. */
#define DFG_HUB_R1	0x1U	/* local hub one hop from the root */
#define DFG_HUB_R2	0x2U	/* remote hub two hops away, from replica */
#define DFG_HUB_R3	0x4U	/* owner: a sampled remote hub's neighbours */
#define DFG_HUB_R4	0x8U	/* sampled neighbours of a root by a hub */
#define DFG_HUB_R_ALL	(DFG_HUB_R1 | DFG_HUB_R2 | DFG_HUB_R3 | DFG_HUB_R4)

/* dfg_hub_opts.flags */
#define DFG_HUB_F_WEIGHTED	0x1U	/* weights by hop distance */
#define DFG_HUB_F_R2_ON_ROOT	0x2U	/* R2 at root selection (para. 76) */
#define DFG_HUB_F_ALL		(DFG_HUB_F_WEIGHTED | DFG_HUB_F_R2_ON_ROOT)

/**
 * struct dfg_hub_opts - how an engine samples and prefetches
 * @hops:	1..DFG_HUB_HOPS_MAX
 * @fanout:	nodes sampled per node, per hop (0: all neighbours)
 * @seed:	of the sampling; with the same seed, batch number and roots
 *		the batch is the same whatever @rules and replication are
 * @rules:	DFG_HUB_R* bits
 * @flags:	DFG_HUB_F_*
 * @decay:	DFG_HUB_F_WEIGHTED: a candidate at hop distance d from the
 *		root weighs decay^(d - 1) (0 < decay; 0 means 0.5): 0 is the
 *		root itself, 1 its neighbours, else the hop it is reached at
 * @buf_entries: the engine's prefetch buffer (the patent's 323), in
 *		entries (0: 4096); the oldest go first
 */
struct dfg_hub_opts {
	__u32	hops;
	__u32	fanout[DFG_HUB_HOPS_MAX];
	__u64	seed;
	__u32	rules;
	__u32	flags;
	double	decay;
	__u32	buf_entries;
};

/**
 * struct dfg_hub_stats - what an engine did (cumulative)
 * @batches, @roots, @sampled: mini-batches, roots, sampled node slots
 * @nodes:	unique nodes whose attributes went into batches
 * @local, @replica: neighbour lists and attributes read from the own
 *		partition and from the hub replica
 * @buf_hits:	reads served by the prefetch buffer
 * @remote:	entries read from peers on demand (misses)
 * @cache_hits:	entries found in the machine's cache (another process,
 *		an earlier batch or R3 brought them)
 * @remote_calls: round trips to the module's PREFETCH (or, without the
 *		module, to the other partitions)
 * @r1, @r2, @r3, @r4: firings of each rule (one per node it prefetched;
 *		@r3 counts owner requests, @r3_nodes their sampled nodes)
 * @r3_nodes:	nodes R3 brought into the machine's cache
 * @r3_hits:	demand reads served by cache entries R3 requested for the
 *		batch (in it, or ahead of it: dfg_hub_ahead())
 * @r3_gated:	entries of R3's requests the module did not read because
 *		the owner's link was busy (its traffic gate, claim 10)
 * @buf_puts:	entries the rules put into the prefetch buffer (its hit
 *		rate is @buf_hits / @buf_puts)
 */
struct dfg_hub_stats {
	__u64	batches, roots, sampled, nodes;
	__u64	local, replica, buf_hits, remote, cache_hits, remote_calls;
	__u64	r1, r2, r3, r4, r3_nodes, r3_hits;
	__u64	r3_gated;
	__u64	buf_puts;
};

/* Opaque: an engine over a view (or over partition files, for tests). */
struct dfg_hub_engine;

/**
 * dfg_hub_engine_new() - an engine over this machine's served partition
 * @d:		handle; must outlive the engine (PREFETCH goes through it)
 * @h:		view of the partition; must outlive the engine
 * @opts:	sampling and rules
 * @out:	out: the engine
 *
 * Returns 0 or -errno: -EINVAL (@opts: hops, flags, rules, decay),
 * -ENOMEM.
 */
int dfg_hub_engine_new(struct dfg *d, struct dfg_hub *h,
		       const struct dfg_hub_opts *opts,
		       struct dfg_hub_engine **out);

/**
 * dfg_hub_engine_files() - an engine without the module
 * @paths:	the K partition files of one `dfg graph partition` run, in
 *		any order
 * @k:		how many
 * @part:	the partition this engine runs on (a part_index)
 * @flags:	DFG_HUB_LOAD_* (as the served image would be built)
 * @opts, @out:	as dfg_hub_engine_new()
 * @err:	out, may be NULL: the reason of a failure
 *
 * Other partitions stand in for the peers: reading them is a remote read,
 * and a set of what was read stands in for the machine's cache. For tests
 * and for comparing with a served run.
 *
 * Returns 0 or -errno: -EINVAL, the files' errors, -EXDEV (files of
 * different partitionings, or a partition twice or missing).
 */
int dfg_hub_engine_files(const char *const *paths, unsigned int k,
			 unsigned int part, unsigned int flags,
			 const struct dfg_hub_opts *opts,
			 struct dfg_hub_engine **out, struct dfg_hub_err *err);

/* Frees @e (NULL: nothing). */
void dfg_hub_engine_free(struct dfg_hub_engine *e);

/*
 * The end of the node IDs the engine knows: the files' graph, or the
 * highest range of the served partition and its peers (sysfs) now.
 */
__u64 dfg_hub_engine_nodes(const struct dfg_hub_engine *e);

/* Cumulative counters of @e. */
void dfg_hub_engine_stats(const struct dfg_hub_engine *e,
			  struct dfg_hub_stats *st);

#define DFG_HUB_BATCH_MAGIC	0x48474644U	/* "DFGH" */

/**
 * struct dfg_hub_batch - head of an encoded mini-batch (patent 004's
 * encode stage), in one contiguous buffer; offsets are from its start,
 * every section 8-byte aligned:
 *   roots	@roots __u32: each root's index in nodes
 *   nodes	@nodes __u64 global IDs, unique, in order of first
 *		appearance (roots first)
 *   hop h	for h < @hops: @edges[h] pairs of __u32 (parent, child):
 *		parent indexes hop h's frontier (the roots for h == 0, else
 *		the children of hop h - 1, in order), child indexes nodes
 *   attrs	@nodes rows of @attr_bytes: each node's attributes
 * @magic:	DFG_HUB_BATCH_MAGIC
 * @bytes:	of the whole buffer
 * @batch:	the batch number (the sampling's key with the seed)
 * @roots:	roots, as given (repeats allowed)
 * @hops:	hops sampled
 * @attr_bytes:	attribute bytes per node
 * @nodes:	unique nodes
 * @roots_off:	offset of roots
 * @nodes_off:	offset of nodes
 * @attrs_off:	offset of attrs
 * @edges:	pairs per hop
 * @hop_off:	offset of each hop's pairs
 */
struct dfg_hub_batch {
	__u32	magic;
	__u32	bytes;
	__u64	batch;
	__u32	roots;
	__u32	hops;
	__u32	attr_bytes;
	__u32	nodes;
	__u64	roots_off;
	__u64	nodes_off;
	__u64	attrs_off;
	__u32	edges[DFG_HUB_HOPS_MAX];
	__u64	hop_off[DFG_HUB_HOPS_MAX];
};

/**
 * dfg_hub_sample() - sample one mini-batch into an arena
 * @e:		engine
 * @batch:	batch number (with the seed, the key of every random choice)
 * @roots:	@nroots global node IDs (repeats allowed)
 * @nroots:	>= 1
 * @arena:	arena with an allocator (dfg_alloc_init/attach), writable
 * @off:	out: offset of the batch buffer (a dfg_buf_alloc() block,
 *		struct dfg_hub_batch first); the caller frees or sends it
 *
 * Returns the batch's bytes (> 0) or -errno: -EINVAL (NULL, @nroots 0),
 * -ERANGE (a root or neighbour ID out of the graph's range), -ENOMEM
 * (memory, or no room in @arena), -EHOSTUNREACH (a node's owner is
 * lost), and the errors of dfg_hub_prefetch().
 */
int dfg_hub_sample(struct dfg_hub_engine *e, __u64 batch, const __u64 *roots,
		   unsigned int nroots, struct dfg_arena *arena, __u64 *off);

/**
 * dfg_hub_ahead() - announce the batch to sample after the next one
 * @e:		engine
 * @batch, @roots, @nroots: the batch, as dfg_hub_sample() will be given
 *		it (the roots are copied)
 *
 * With DFG_HUB_R3, R3 runs for that batch from now on instead of during
 * it: the engine samples it ahead, hop by hop, as dfg_hub_sample() will
 * (the same draws), as far as the neighbour lists on this machine and
 * those its requests bring allow, fires R3 on its slots, and asks the
 * owners for every remote node it will read (lists and attributes):
 * speculative PREFETCHes on the engine's ring, gated like R3's, not
 * waited for. The walk goes on as they complete, looked at between the
 * steps of the dfg_hub_sample() calls before it; so its reads overlap
 * those batches. When dfg_hub_sample() gets @batch with the same roots,
 * its demand reads copy those entries out of the cache without another
 * PREFETCH (waiting only for a request still in flight that holds one),
 * and R3 does not fire again where it fired ahead.
 *
 * Call it before dfg_hub_sample() of the batch before @batch. An
 * announced batch not sampled next is the one expected after the next
 * announcement; one that does not come (another batch number or other
 * roots) was prefetched for nothing: batches never depend on it. R3's
 * firings ahead are counted when they fire.
 *
 * Without DFG_HUB_R3, with one hop, over a backend without a cache, or
 * without io_uring (DFG_NO_URING) it does nothing. Over files the walk's
 * requests complete at once.
 *
 * Returns 0 or -errno: -EINVAL (NULL, @nroots 0), -ENOMEM.
 */
int dfg_hub_ahead(struct dfg_hub_engine *e, __u64 batch, const __u64 *roots,
		  unsigned int nroots);

/**
 * dfg_hub_sample_send() - dfg_hub_sample(), then hand the buffer over
 * @e, @batch, @roots, @nroots: as dfg_hub_sample()
 * @arena:	the channel's pool
 * @chan:	producer endpoint; the descriptor's tag is @batch
 *
 * The buffer is sent as it was written (no copy); the consumer frees it.
 * Returns the batch's bytes or -errno (those of dfg_hub_sample() and
 * dfg_chan_send(); the buffer is freed when sending fails).
 */
int dfg_hub_sample_send(struct dfg_hub_engine *e, __u64 batch,
			const __u64 *roots, unsigned int nroots,
			struct dfg_arena *arena, struct dfg_chan *chan);

#ifdef __cplusplus
}
#endif

#endif /* _DFG_HUB_H */
