/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dfg_rdma_wire.h - what dfg_rdma.ko's modules say to each other in
 * SENDs over an RC connection (kmod/rdma/dfg_rdma.c), little-endian. Also
 * included by its selftest (selftests/prefetch/pf_rdma_peer.c), which
 * plays bad peers with user-space verbs.
 *
 * The server (the side that accepted) speaks first: one struct
 * dfg_rdma_hello, what it serves and each registered chunk's rkey. Then
 * the client sends lists, up to DFG_RDMA_SLOTS at a time: a struct
 * dfg_rdma_list_hdr followed by @count struct dfg_rdma_ext, the
 * (offset, length) list of one batch of reads (1..DFG_RDMA_LIST_MAX of
 * them, their bytes within one answer). The server answers each with a
 * struct dfg_rdma_answer followed by the @bytes bytes of its partition
 * image that the list names, back to back in the list's order. A list
 * that is not one (length, magic, count, pad, a zero length, an extent
 * beyond the image, more bytes than an answer holds) drops the peer;
 * nothing of it is answered.
 */
#ifndef _DFG_KMOD_RDMA_WIRE_H
#define _DFG_KMOD_RDMA_WIRE_H

#include <linux/types.h>

#define DFG_RDMA_MAGIC		0x48474644U	/* "DFGH" */
#define DFG_RDMA_VERSION	3	/* 3: reads go as lists */
#define DFG_RDMA_CHUNKS_MAX	256
/* Lists in flight per connection: request slots, answer buffers. */
#define DFG_RDMA_SLOTS		8
#define DFG_RDMA_LIST_MAX	256	/* extents per list */
/* An answer, header and bytes: one kmalloc() each, order 4. */
#define DFG_RDMA_ANSWER_MAX	(64u << 10)
#define DFG_RDMA_MAGIC_LIST	0x4c474644U	/* "DFGL" */
#define DFG_RDMA_MAGIC_ANSWER	0x41474644U	/* "DFGA" */

struct dfg_rdma_chunk_wire {
	__le64	iova;
	__le32	rkey;
	__le32	pad;
};

/* The hello, little-endian on the wire. */
struct dfg_rdma_hello {
	__le32	magic;
	__le32	version;
	__le64	node_first;
	__le64	node_count;
	__le32	feat_bytes;
	__le32	nchunks;
	__le64	row_off;
	__le64	col_off;
	__le64	col_count;
	__le64	feat_off;
	__le64	image_bytes;
	__le64	chunk_bytes;
	__le64	part_set;
	struct dfg_rdma_chunk_wire chunk[];
};

#define DFG_RDMA_HELLO_MAX	(sizeof(struct dfg_rdma_hello) + \
				 DFG_RDMA_CHUNKS_MAX * \
				 sizeof(struct dfg_rdma_chunk_wire))

/*
 * A list (SEND, client to server): the header, then @count extents of the
 * image. @slot is the client's, given back in the answer.
 */
struct dfg_rdma_list_hdr {
	__le32	magic;
	__le32	count;
	__le32	slot;
	__le32	pad;
};

struct dfg_rdma_ext {
	__le64	off;
	__le32	len;
	__le32	pad;
};

#define DFG_RDMA_LIST_BYTES	(sizeof(struct dfg_rdma_list_hdr) + \
				 DFG_RDMA_LIST_MAX * sizeof(struct dfg_rdma_ext))

/* The answer (SEND, server to client): the header, then @bytes bytes. */
struct dfg_rdma_answer {
	__le32	magic;
	__le32	slot;
	__le32	count;
	__le32	pad;
	__le64	bytes;
};

#define DFG_RDMA_PAYLOAD_MAX	(DFG_RDMA_ANSWER_MAX - \
				 sizeof(struct dfg_rdma_answer))

#endif /* _DFG_KMOD_RDMA_WIRE_H */
