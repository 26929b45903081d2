/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pf_xport.h - the seam between dfg.ko's prefetch (kmod/prefetch.c) and a
 * transport module that reaches the other machines' modules (dfg_rdma.ko,
 * kmod/rdma/, or without RDMA dfg_tcp.ko, kmod/tcp/; one registers at a
 * time, the second gets -EBUSY). dfg.ko knows partitions, peers' node ranges, the cache and
 * the commands; the transport knows connections and how bytes of a peer's
 * partition get here. dfg.ko loads without any transport (PEER_ADD gives
 * -ENODEV then); the transport module depends on dfg.ko's exports below,
 * so it is unloaded first.
 *
 * Calls into the transport (struct dfg_pf_xport) come from process
 * context without dfg.ko's locks held, except ->read, which may come
 * under none but must not sleep. Calls back into dfg.ko come from process
 * context (the transport's completion work, its connection events).
 *
 * Reads go in batches: a PREFETCH hands each peer all of its reads toward
 * that peer in one ->read call, and the transport makes as few requests
 * of them as it can: one request with the list of (offset, length) and
 * one reply with the bytes back to back, per at most 256 reads (dfg_tcp.ko
 * over its socket; dfg_rdma.ko a SEND each way, its long reads as chains
 * of RDMA READs, one ib_post_send per chain). A single read is a batch of
 * one: there is no second path.
 */
#ifndef _DFG_KMOD_PF_XPORT_H
#define _DFG_KMOD_PF_XPORT_H

#include <linux/socket.h>
#include <linux/types.h>

#include <linux/dfg.h>

struct module;
struct dfg_pf_peer;

/**
 * struct dfg_pf_remote - what a peer serves, as its transport reports it
 * @node_first:	first global node ID of its partition
 * @node_count:	its nodes
 * @feat_bytes:	attribute bytes per node
 * @row_off:	offsets in its image (struct dfg_part_hdr)
 * @col_off:	...
 * @col_count:	...
 * @feat_off:	...
 * @image_bytes: size of its image: every read stays below it
 * @part_set:	its image's part_set (0: unknown)
 */
struct dfg_pf_remote {
	u64	node_first;
	u64	node_count;
	u32	feat_bytes;
	u64	row_off;
	u64	col_off;
	u64	col_count;
	u64	feat_off;
	u64	image_bytes;
	u64	part_set;
};

/**
 * struct dfg_pf_read - one read of a peer's bytes into local memory
 * @off:	offset in the peer's image
 * @len:	bytes (> 0)
 * @dst:	destination, vmalloc() memory of dfg.ko
 * @end:	dfg.ko's completion of this read, called by
 *		dfg_pf_read_done(); NULL for PREFETCH's reads
 *
 * dfg.ko owns the struct; from ->read until the transport calls
 * dfg_pf_read_done() with it, the transport does.
 */
struct dfg_pf_read {
	u64		off;
	u32		len;
	void		*dst;
	void		(*end)(struct dfg_pf_read *rd, int status);
};

/**
 * struct dfg_pf_xport - a transport to peers' modules
 * @name:	"rdma", "tcp" (sysfs prefetch/transport)
 * @owner:	its module
 * @connect:	connect to the module listening at @addr, tell it nothing
 *		but wait (up to @timeout_ms) for what it serves, into
 *		@remote. @peer is dfg.ko's cookie for dfg_pf_peer_lost().
 *		Returns the transport's handle or an ERR_PTR. Sleeps.
 * @read:	start the @n (> 0) reads @rds[0..@n) on @conn, all toward
 *		its peer; 0, after which dfg_pf_read_done() comes exactly
 *		once for each of them (also when the connection dies, and
 *		with an error for every read of a batch the peer did not
 *		answer whole), or a negative errno and no callback for any
 *		of them. The transport keeps the reads, not the array @rds,
 *		which it may reorder.
 *		Must not sleep.
 * @disconnect:	end @conn: every read started on it has completed
 *		(dfg_pf_read_done() returned) when this returns, and
 *		dfg_pf_peer_lost() does not come for it any more. Sleeps.
 */
struct dfg_pf_xport {
	const char	*name;
	struct module	*owner;
	void		*(*connect)(struct dfg_pf_peer *peer,
				    const struct sockaddr_storage *addr,
				    unsigned int timeout_ms,
				    struct dfg_pf_remote *remote);
	int		(*read)(void *conn, struct dfg_pf_read **rds,
				unsigned int n);
	void		(*disconnect)(void *conn);
};

/**
 * struct dfg_pf_served - this machine's partition, as served to peers
 * @image:	the image (vmalloc() memory, read-only while served)
 * @bytes:	its size
 * @hdr:	a copy of its header
 */
struct dfg_pf_served {
	void			*image;
	u64			bytes;
	struct dfg_part_hdr	hdr;
};

int dfg_pf_xport_register(const struct dfg_pf_xport *xp);
void dfg_pf_xport_unregister(const struct dfg_pf_xport *xp);
void dfg_pf_read_done(struct dfg_pf_read *rd, int status);
void dfg_pf_peer_lost(struct dfg_pf_peer *peer);
int dfg_pf_serve_get(struct dfg_pf_served *s);
void dfg_pf_serve_put(void);

#endif /* _DFG_KMOD_PF_XPORT_H */
