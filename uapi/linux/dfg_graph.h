/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * dfg graph store: the file format of a graph and of one served partition.
 *
 * "Graph" here is a data graph (nodes, edges, features) for sampling, not
 * the dataflow graph of <linux/dfg.h> (struct dfg_graph_*); to keep the two
 * apart this file's names start with dfg_gs_ / DFG_GS_ ("graph store").
 *
 * One format for both. `dfg graph gen` and `dfg graph import` write a whole
 * graph (part_count 1); `dfg graph partition -k K` writes K partition files
 * of the same graph, one per machine, each holding its own subgraph plus a
 * replica of other partitions' hub nodes (patent 004, claim 1 and para. 69).
 * The file is used as it is: mmap()ed by userspace, or copied into memory
 * owned by dfg.ko and served to peers by RDMA READ at the offsets below.
 *
 * Encoding
 * --------
 * Little-endian, fixed-width integers only (__u32/__u64), no pointers. Every
 * offset is a byte offset from the start of the file; every section starts
 * on a DFG_GS_ALIGN (64) byte boundary and the bytes between sections are
 * zero. Present sections follow the header in the order of enum
 * dfg_gs_sec, without overlap; the file ends with the last one, padded to
 * 64 bytes (file_size). A section of length 0 is absent (its offset is 0).
 * The header is at offset 0 and is DFG_GS_HDR_SIZE bytes; reserved fields
 * are zero.
 *
 * Node ids
 * --------
 * A "global id" names a node of the whole graph, 0 <= id < nodes_global.
 * Partitioning renumbers the nodes so that partition p owns the contiguous
 * range [part_base[p], part_base[p + 1]) (METIS parts are not ranges; the
 * renumbering makes them so): the owner of any id is a binary search in a
 * table of part_count + 1 entries, and the local index of an owned id is
 * id - node_base. Inside a partition file every id (neighbours, replicas)
 * is a global id of this numbering. DFG_GS_SEC_ORIG_ID maps local nodes
 * back to the ids of the source (e.g. a SNAP file's ids); absent means
 * the original id is the global id.
 *
 * Identity
 * --------
 * graph_id is a 64-bit hash of the source graph (structure, features and
 * labels, in the source numbering); part_set_id is a hash of graph_id, K and
 * the node-to-partition assignment (0 in a whole-graph file). All K files of
 * one `dfg graph partition` run carry the same pair; a reader serving or
 * peering with partitions must reject a file whose pair differs from its
 * peers' (-EXDEV in libdfg), and a part_index seen twice.
 *
 * Adjacency (CSR)
 * ---------------
 * ROW_PTR has nodes_local + 1 entries; the neighbours of local node i are
 * COL_IDX[ROW_PTR[i] .. ROW_PTR[i + 1]), global ids sorted ascending with no
 * duplicates and no self loops. ROW_PTR[0] == 0, ROW_PTR[nodes_local] ==
 * edges_local. For a DFG_GS_F_UNDIRECTED graph each edge is stored in
 * both endpoints' lists ("arcs"); edge counts in the header count arcs.
 * Neighbour lists hold every neighbour, local or remote.
 *
 * Attributes
 * ----------
 * FEAT is nodes_local rows of feat_dim elements of feat_type, row-major, a
 * row being feat_dim * element size (4 for F32, 1 for U8) bytes, unpadded.
 * LABEL is nodes_local __u32 class numbers < label_classes, present iff
 * label_classes > 0. A node's "attributes" (the patent's) are its feature
 * row and its label.
 *
 * Hubs and the replica
 * --------------------
 * A hub node is an endpoint of a cut edge: an arc (u, v) whose endpoints
 * are owned by different partitions (the patent's definition, not a degree
 * threshold). HUB_MASK marks this partition's own hubs: bit (i % 64) of
 * word i / 64 is set iff local node i is a hub (R1 looks here).
 *
 * The replica holds hub nodes owned by OTHER partitions, each with its node
 * id, its full neighbour list and its attributes (claim 1, para. 69):
 * REP_ID (rep_count ids, sorted ascending for binary search), REP_ROW_PTR
 * (rep_count + 1 entries indexing REP_COL_IDX), REP_COL_IDX (global ids,
 * sorted per row), REP_FEAT (rep_count feature rows), REP_LABEL (rep_count
 * __u32, iff label_classes > 0). Replica entry j is the node REP_ID[j].
 * Without a budget the replica is every hub of every other partition
 * (rep_count == rep_candidates). Under `--replica-budget` it is the prefix,
 * by decreasing estimated sampling probability, that fits
 * (DFG_GS_F_REP_PARTIAL is set when rep_count < rep_candidates): a hub
 * missing from the replica is read from its owner, never an error.
 *
 * The halo of a partition is the set of remote nodes adjacent to its own
 * (what DistDGL keeps per partition); halo_bytes is what the REP_* sections
 * would take holding every halo node: per node 8 (id) + 8 (row pointer) +
 * 8 per neighbour + a feature row + 4 (label, if any).
 *
 * The section table is indexed by enum dfg_gs_sec; entries beyond
 * DFG_GS_SEC_COUNT are reserved (zero). A reader validates, before use:
 * magic, version, hdr_size, file_size against the real size, every section
 * inside the file, aligned and of exactly the length the counts imply,
 * ROW_PTR monotonic and bounded, every id < nodes_global, part_base
 * monotonic with part_base[part_index] == node_base.
 */
#ifndef _UAPI_LINUX_DFG_GRAPH_H
#define _UAPI_LINUX_DFG_GRAPH_H

#include <linux/types.h>

/* "DFGGRPH\0" read as a little-endian __u64. */
#define DFG_GS_MAGIC		0x0048505247474644ULL
#define DFG_GS_VERSION		1
#define DFG_GS_ALIGN		64
#define DFG_GS_HDR_SIZE		512
#define DFG_GS_MAX_SECS		16

/* Header flags. */
#define DFG_GS_F_UNDIRECTED	0x1U	/* every edge stored as two arcs */
#define DFG_GS_F_PARTITION	0x2U	/* one of part_count partitions */
#define DFG_GS_F_REP_PARTIAL	0x4U	/* replica cut by a budget */
#define DFG_GS_F_ALL		(DFG_GS_F_UNDIRECTED | \
				 DFG_GS_F_PARTITION | \
				 DFG_GS_F_REP_PARTIAL)

/* Feature element types (feat_type). */
enum dfg_gs_feat_type {
	DFG_GS_FEAT_NONE	= 0,	/* feat_dim == 0, no FEAT section */
	DFG_GS_FEAT_F32		= 1,	/* IEEE 754 binary32 */
	DFG_GS_FEAT_U8		= 2,	/* quantised, 0..255 */
};

/* Sections: index into dfg_gs_hdr.sec[]; element type in brackets. */
enum dfg_gs_sec {
	DFG_GS_SEC_ROW_PTR     = 0,	/* [__u64] nodes_local + 1 */
	DFG_GS_SEC_COL_IDX     = 1,	/* [__u64] edges_local global ids */
	DFG_GS_SEC_ORIG_ID     = 2,	/* [__u64] nodes_local, or absent */
	DFG_GS_SEC_FEAT        = 3,	/* nodes_local feature rows */
	DFG_GS_SEC_LABEL       = 4,	/* [__u32] nodes_local, or absent */
	DFG_GS_SEC_PART_BASE   = 5,	/* [__u64] part_count + 1 */
	DFG_GS_SEC_HUB_MASK    = 6,	/* [__u64] (nodes_local + 63) / 64 */
	DFG_GS_SEC_REP_ID      = 7,	/* [__u64] rep_count, ascending */
	DFG_GS_SEC_REP_ROW_PTR = 8,	/* [__u64] rep_count + 1 */
	DFG_GS_SEC_REP_COL_IDX = 9,	/* [__u64] rep_edges global ids */
	DFG_GS_SEC_REP_FEAT    = 10,	/* rep_count feature rows */
	DFG_GS_SEC_REP_LABEL   = 11,	/* [__u32] rep_count, or absent */
	DFG_GS_SEC_COUNT       = 12,
};

struct dfg_gs_sec_ent {
	__u64 off;	/* bytes from the start of the file, 64-aligned */
	__u64 len;	/* bytes; 0 = absent */
};

/*
 * The header, DFG_GS_HDR_SIZE bytes at offset 0. Statistics marked
 * [stat] are informative (written by the partitioner, shown by `dfg graph
 * info`); a reader needs only the counts and the section table.
 */
struct dfg_gs_hdr {
	__u64 magic;		/* DFG_GS_MAGIC */
	__u32 version;		/* DFG_GS_VERSION */
	__u32 hdr_size;		/* DFG_GS_HDR_SIZE */
	__u64 file_size;	/* bytes; a shorter file is truncated */
	__u32 flags;		/* DFG_GS_F_* */
	__u32 reserved0;
	__u64 graph_id;		/* hash of the source graph */
	__u64 part_set_id;	/* hash of graph_id, K, assignment; 0 if whole */
	__u32 part_index;	/* this partition, < part_count */
	__u32 part_count;	/* K; 1 for a whole graph */

	__u64 nodes_global;	/* nodes of the whole graph */
	__u64 edges_global;	/* arcs of the whole graph */
	__u64 nodes_local;	/* nodes owned here */
	__u64 edges_local;	/* arcs out of owned nodes */
	__u64 node_base;	/* global id of local node 0 */

	__u32 feat_dim;		/* elements per feature row; 0 = none */
	__u32 feat_type;	/* enum dfg_gs_feat_type */
	__u32 label_classes;	/* 0 = no labels */
	__u32 reserved1;

	__u64 rep_count;	/* replicated remote hubs */
	__u64 rep_edges;	/* arcs in the replica's CSR */
	__u64 rep_candidates;	/* hubs owned by other partitions */

	__u64 cut_arcs;		/* [stat] arcs crossing partitions, global */
	__u64 hubs_global;	/* [stat] hub nodes, all partitions */
	__u64 hubs_local;	/* [stat] hub nodes owned here */
	__u64 halo_nodes;	/* [stat] remote 1-hop neighbours of local */
	__u64 halo_bytes;	/* [stat] REP_* bytes if the halo were replicated */
	__u64 rep_bytes;	/* [stat] bytes of the REP_* sections */
	__u64 reserved2[9];

	struct dfg_gs_sec_ent sec[DFG_GS_MAX_SECS];
};

#endif /* _UAPI_LINUX_DFG_GRAPH_H */
