/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg graph store (internal for now; the access engine builds on it):
 * graphs in memory (CSR + features + labels), their files in the format of
 * <linux/dfg_graph.h>, generation (R-MAT), import (SNAP text, binary CSR)
 * and partitioning (METIS, hub replicas). Not exported from libdfg.so:
 * dfg(1) and the tests link libdfg.a.
 *
 * Every function returns 0 (or a count) or a negative errno, and on error
 * writes a one-line reason to @err (when not NULL) for the user.
 */
#ifndef _DFG_GSTORE_H
#define _DFG_GSTORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/dfg_graph.h>

/* A one-line error reason; callers keep one per operation. */
struct dfg_gs_err {
	char msg[256];
};

/* Writes the reason to @err (if any) and returns @ret (a -errno). */
int dfg_gs_fail(struct dfg_gs_err *err, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * A progress report of a long step: @done of @total units of @stage.
 * Called at most about a hundred times per stage, and once with done ==
 * total at its end.
 */
typedef void (*dfg_gs_progress_fn)(void *arg, const char *stage,
				   uint64_t done, uint64_t total);

/* A whole graph in memory, owned by the struct (dfg_gs_graph_free). */
struct dfg_gs_graph {
	uint64_t	n;		/* nodes */
	uint64_t	m;		/* arcs */
	uint64_t	*row_ptr;	/* n + 1 */
	uint64_t	*col;		/* m, sorted per row, no dups/loops */
	uint64_t	*orig_id;	/* n, or NULL: original id == id */
	void		*feat;		/* n rows of feat_dim x feat_type */
	uint32_t	feat_dim;
	uint32_t	feat_type;	/* enum dfg_gs_feat_type */
	uint32_t	*label;		/* n, or NULL */
	uint32_t	classes;	/* label classes; 0 iff label NULL */
	uint32_t	flags;		/* DFG_GS_F_UNDIRECTED */
	uint64_t	graph_id;	/* dfg_gs_graph_id() once complete */
};

void dfg_gs_graph_free(struct dfg_gs_graph *g);

/* qsort() order of uint64_t. */
int dfg_gs_cmp_u64(const void *a, const void *b);

/* The name of section @i ("row_ptr", ...), for messages. */
const char *dfg_gs_sec_name(int i);

/* Bytes of one feature row (0 when there are no features). */
size_t dfg_gs_feat_row_bytes(uint32_t feat_dim, uint32_t feat_type);

/* The 64-bit hash identifying @g (structure, ids, features, labels). */
uint64_t dfg_gs_graph_id(const struct dfg_gs_graph *g);

/*
 * CSR of @n nodes from @ne edges src[i] -> dst[i] (ids < @n): rows sorted,
 * duplicates and self loops dropped; with DFG_GS_F_UNDIRECTED in @flags
 * every edge is stored both ways. Fills g->n, m, row_ptr, col, flags.
 */
int dfg_gs_build_csr(struct dfg_gs_graph *g, uint64_t n, const uint64_t *src,
		     const uint64_t *dst, uint64_t ne, uint32_t flags,
		     struct dfg_gs_err *err);

/*
 * Deterministic attributes from @seed: feature rows of @feat_dim elements
 * of @feat_type and, with @classes > 0, labels; a node's values depend
 * only on (its original id, @seed), so they survive renumbering.
 */
int dfg_gs_make_attrs(struct dfg_gs_graph *g, uint32_t feat_dim,
		      uint32_t feat_type, uint32_t classes, uint64_t seed,
		      struct dfg_gs_err *err);

struct dfg_gs_rmat {
	uint32_t	scale;		/* 2^scale nodes */
	uint32_t	edge_factor;	/* edges = edge_factor << scale */
	uint64_t	seed;
	uint32_t	flags;		/* DFG_GS_F_UNDIRECTED or 0 */
};

/* An R-MAT graph, Graph500's A, B, C = 0.57, 0.19, 0.19 (no attributes). */
int dfg_gs_gen_rmat(struct dfg_gs_graph *g, const struct dfg_gs_rmat *p,
		    dfg_gs_progress_fn progress, void *parg,
		    struct dfg_gs_err *err);

/*
 * SNAP edge list from @f: one "SRC DST" pair of decimal ids per line,
 * blanks or tabs between, '#' lines are comments. Ids are compacted to
 * 0..n-1 in ascending order (orig_id keeps them, unless already dense).
 */
int dfg_gs_import_snap(struct dfg_gs_graph *g, FILE *f, const char *name,
		       uint32_t flags, struct dfg_gs_err *err);

/*
 * Binary CSR from @f: little-endian u64 nodes, u64 arcs, u64 offsets
 * [nodes + 1], then arcs neighbour ids, each u32 (@id_bytes 4) or u64 (8).
 */
int dfg_gs_import_bcsr(struct dfg_gs_graph *g, FILE *f, const char *name,
		       unsigned int id_bytes, uint32_t flags,
		       struct dfg_gs_err *err);

/* Features of a package (dfg_gs_import_apt), f32 each. */
#define DFG_GS_APT_FEAT_DIM	16

/* What dfg_gs_import_apt() read. */
struct dfg_gs_apt_stat {
	uint64_t	lines;
	uint64_t	packages;	/* nodes */
	uint64_t	duplicates;	/* stanzas of a name already read */
	uint64_t	malformed;	/* stanzas skipped (see below) */
	uint64_t	edges;		/* relation clauses resolved */
	uint64_t	unresolved;	/* clauses naming nothing in the lists */
};

/*
 * The package dependency graph of apt package lists or dpkg's status file
 * (deb822 stanzas, blank-line separated; any number of files concatenated)
 * from @f:
 *   nodes	one per package name, in name order (strcmp); of several
 *		stanzas of one name (versions, architectures, archives) the
 *		first in the input is taken
 *   edges	package -> dependency for each clause of Pre-Depends, Depends
 *		and Recommends; of a clause's alternatives ("a | b") the
 *		first that names a package or that some package Provides
 *		(then its provider of lowest id); version constraints and
 *		architecture qualifiers are ignored; clauses naming nothing
 *		known are counted (unresolved) and dropped. DFG_GS_F_UNDIRECTED
 *		in @flags stores each edge both ways.
 *   features	DFG_GS_APT_FEAT_DIM f32: log2(1 + Installed-Size),
 *		log2(1 + Size), Priority one-hot (required, important,
 *		standard, optional, extra), Essential, Multi-Arch one-hot
 *		(same, foreign, allowed), log2(1 + clauses) of Depends with
 *		Pre-Depends, of Recommends, of Suggests, of Provides, and
 *		Architecture: all
 *   labels	the Section without its archive area ("contrib/net" is
 *		"net"; none is "unknown"), numbered in name order
 * Malformed stanzas are skipped and counted: no Package field or one with
 * blanks, a line without "Field:", a continuation line with nothing to
 * continue, a kept field given twice. -EBADMSG if no stanza is left (or a
 * NUL byte: not a text file). Fills @st when not NULL.
 */
int dfg_gs_import_apt(struct dfg_gs_graph *g, FILE *f, const char *name,
		      uint32_t flags, struct dfg_gs_apt_stat *st,
		      struct dfg_gs_err *err);

/* A file of this format, mapped read-only and checked (dfg_gs_open). */
struct dfg_gs_file {
	const void		*base;
	size_t			size;
	const struct dfg_gs_hdr	*hdr;
	const uint64_t		*row_ptr, *col, *orig_id, *part_base;
	const uint64_t		*hub_mask, *rep_id, *rep_row_ptr, *rep_col;
	const void		*feat, *rep_feat;
	const uint32_t		*label, *rep_label;
	int			mapped;	/* base is an mmap of size bytes */
};

/* Checks @size bytes at @base and fills @f's pointers into them. */
int dfg_gs_check(struct dfg_gs_file *f, const void *base, size_t size,
		 struct dfg_gs_err *err);
int dfg_gs_open(struct dfg_gs_file *f, const char *path,
		struct dfg_gs_err *err);
void dfg_gs_close(struct dfg_gs_file *f);

/* -EXDEV unless @a and @b are different partitions of one partitioning. */
int dfg_gs_same_set(const struct dfg_gs_file *a, const struct dfg_gs_file *b,
		    struct dfg_gs_err *err);

/* A whole-graph file back in memory (copies; the file may be closed). */
int dfg_gs_load(struct dfg_gs_graph *g, const struct dfg_gs_file *f,
		struct dfg_gs_err *err);

/*
 * Writes a file: @hdr with every sec[].len set (offsets are assigned
 * here, in section order, 64-aligned) and data[i] the bytes of section i
 * (NULL: zeros). Sets hdr->file_size. @path is replaced atomically.
 */
int dfg_gs_write_file(const char *path, struct dfg_gs_hdr *hdr,
		      const void *const data[DFG_GS_SEC_COUNT],
		      struct dfg_gs_err *err);

/* A 64-bit hash step over @len bytes at @p, from state @h. */
uint64_t dfg_gs_hash(uint64_t h, const void *p, size_t len);

/* Writes @g as a whole-graph file at @path (replaced atomically). */
int dfg_gs_save(const struct dfg_gs_graph *g, const char *path,
		struct dfg_gs_err *err);

/* Owner partition of global id @id in a file with part_base (K + 1). */
static inline uint32_t dfg_gs_owner(const uint64_t *part_base, uint32_t k,
				    uint64_t id)
{
	uint32_t lo = 0, hi = k;	/* part_base[lo] <= id < part_base[hi] */

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (id < part_base[mid])
			hi = mid;
		else
			lo = mid;
	}
	return lo;
}

/* Replica budget: none, an absolute byte count, or a share of the
 * partition's own bytes (ROW_PTR + COL_IDX + FEAT + LABEL). */
struct dfg_gs_budget {
	enum { DFG_GS_BUDGET_NONE, DFG_GS_BUDGET_BYTES,
	       DFG_GS_BUDGET_PCT } kind;
	uint64_t	value;		/* bytes, or percent (may exceed 100) */
	/*
	 * The order hubs go in: by score (most likely sampled first), or
	 * by score per replica byte (most sampled visits per byte: many
	 * small hubs before one with a huge neighbour list).
	 */
	enum { DFG_GS_ORDER_SCORE, DFG_GS_ORDER_DENSITY } order;
};

/* What partitioning did, per partition and in all. */
struct dfg_gs_part_stat {
	uint64_t	nodes, arcs, hubs;
	uint64_t	rep_candidates, rep_count, rep_bytes;
	uint64_t	halo_nodes, halo_bytes;
	uint64_t	own_bytes;	/* ROW_PTR + COL_IDX + FEAT + LABEL */
	uint64_t	file_bytes;
};

struct dfg_gs_part_result {
	uint32_t		k;
	uint64_t		cut_arcs, hubs;
	uint64_t		part_set_id;
	struct dfg_gs_part_stat	*part;	/* k entries; free() it */
};

struct dfg_gs_part_opts {
	uint32_t		k;
	uint64_t		seed;		/* METIS's */
	struct dfg_gs_budget	budget;
	dfg_gs_progress_fn	progress;
	void			*parg;
};

/*
 * Partitions @g into o->k parts with METIS_PartGraphKway (k-way
 * multilevel; on the symmetrised graph), or takes @assign (n entries < k)
 * when not NULL. Writes @assign's result to @part_out (n entries) when
 * not NULL.
 */
int dfg_gs_assign(const struct dfg_gs_graph *g, const struct dfg_gs_part_opts *o,
		  uint32_t *part_out, struct dfg_gs_err *err);

/*
 * Writes "<prefix>.<p>.dfgg" for p < k from @g and the assignment @part
 * (n entries < k): renumbered ids, hub mask, replica of the other parts'
 * hubs under o->budget. Fills @res.
 */
int dfg_gs_write_parts(const struct dfg_gs_graph *g, const uint32_t *part,
		       const struct dfg_gs_part_opts *o, const char *prefix,
		       struct dfg_gs_part_result *res, struct dfg_gs_err *err);

/*
 * The sampling estimate behind the budget: for every node v not in @p,
 * score[v] = expected number of visits to v by a uniform random walk of
 * two steps from a uniformly chosen node of @p (P[step 1 = v] + P[step 2
 * = v]); uniform neighbour sampling with fan-outs reaches v in the same
 * proportion. @score has n entries; @p's own nodes get 0. 0 or -ENOMEM.
 */
int dfg_gs_hub_scores(const struct dfg_gs_graph *g, const uint32_t *part,
		       uint32_t p, double *score);

#endif /* _DFG_GSTORE_H */
