/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg internals shared by comp/: the built-in type table and helpers
 * the built-in components share (keys, a record store, line splitting,
 * file output). The instance itself is in comp_run.h.
 */
#ifndef _DFG_COMP_IMPL_H
#define _DFG_COMP_IMPL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include <dfg/component.h>

#include "comp_run.h"
#include "expr.h"

/* Checkpoint internals for the instance record (ckpt.c). */
int __dfg_ckpt_patch_u64(struct dfg_ckpt *w, size_t at, __u64 v);
size_t __dfg_ckpt_left(const struct dfg_ckpt *r);

/* The built-in types, NULL-terminated (builtin_*.c). */
extern const struct dfg_comp_type comp_read_lines, comp_read_records,
	comp_write_lines, comp_write_records, comp_generate, comp_filter,
	comp_map, comp_split_words, comp_partition, comp_gather, comp_merge,
	comp_sort, comp_sort_external, comp_join, comp_aggregate, comp_count,
	comp_exec;

/* The batch step of an instance of @t with @nr_out outputs, or NULL
 * (builtin_xform.c). */
comp_batch_fn comp_batch_of(const struct dfg_comp_type *t,
			    unsigned int nr_out);
/* The step of @c (c->step set) as made for its state once init() is
 * done: what c->step_now is while it takes elements. */
comp_batch_fn comp_batch_ready(struct dfg_comp *c);

/*
 * A key: an expression over an element, compared as an integer (numeric)
 * or as bytes, ascending or descending.
 */
struct comp_key {
	struct dfg_expr		*expr;
	struct dfg_expr_env	env;
	bool			numeric;
	bool			desc;
};

/*
 * Key expression parameter @param (default @def), with parameters "sep",
 * "numeric" and "order" of @c, into @k.
 */
int comp_key_init(struct dfg_comp *c, struct comp_key *k, const char *param,
		  const char *def);
void comp_key_fini(struct comp_key *k);
/* The key of @e into @v (a string is valid until the next eval). */
int comp_key_eval(struct dfg_comp *c, struct comp_key *k,
		  const struct dfg_elem *e, struct dfg_expr_val *v);
int comp_key_cmp(const struct comp_key *k, const struct dfg_expr_val *a,
		 const struct dfg_expr_val *b);

/*
 * The indices of @recs' records in @key's order, equal keys in arrival
 * order (malloc'd; NULL: no memory). builtin_sort.c.
 */
struct comp_store;
size_t *comp_sort_index(const struct comp_key *key,
			const struct comp_store *recs);
/* Emits @recs in @key's order on port 0, then forgets them. */
int comp_emit_sorted(struct dfg_comp *c, const struct comp_key *key,
		     struct comp_store *recs);

/* Separator parameter "sep" of @c: a byte, or -1 (blanks) if unset. */
int comp_sep(struct dfg_comp *c, const char *param, int *sep);

/* Compiles parameter @param of @c (or @def if unset) into *@ep. */
int comp_expr(struct dfg_comp *c, const char *param, const char *def,
	      struct dfg_expr **ep);

/*
 * A record store: copies of elements with their keys, in arrival order,
 * in chunks so that records never move. A zeroed store is empty.
 */
struct comp_rec {
	const char	*data;
	size_t		len;
	long long	ikey;
	const char	*skey;
	size_t		sklen;
};

struct comp_store {
	struct comp_rec		*recs;
	size_t			head, nr, cap;
	struct dfg_bump		mem;
};

void comp_store_fini(struct comp_store *s);
/* Appends a copy of @data and of the key @v; returns the record or NULL. */
struct comp_rec *comp_store_add(struct comp_store *s, const void *data,
				size_t len, const struct dfg_expr_val *v);
/* Drops every record (the memory is kept for reuse). */
void comp_store_clear(struct comp_store *s);
/* One record as a checkpoint holds it: bytes, integer key, string key
 * (loaded, @r points into the checkpoint). */
int comp_rec_save(const struct comp_rec *r, struct dfg_ckpt *w);
int comp_rec_load(struct dfg_ckpt *rd, struct comp_rec *r);
/* Saves records [@head, @nr); loading appends them. */
int comp_store_save(struct comp_store *s, struct dfg_ckpt *w);
int comp_store_load(struct comp_store *s, struct dfg_ckpt *r);

/* FNV-1a, 64 bits. */
__u64 comp_hash(const void *p, size_t len);

/*
 * A hash table from keys to indices of records kept by the caller, who
 * compares keys with @eq(@ctx, index).
 */
struct comp_slot {
	__u64	hash;
	size_t	idx1;	/* index + 1; 0: empty */
};

struct comp_table {
	struct comp_slot	*slots;
	size_t			cap, nr;
};

void comp_table_fini(struct comp_table *t);
/* The index of the key hashed @h for which @eq is true, or -1. */
long comp_table_find(const struct comp_table *t, __u64 h,
		     bool (*eq)(void *ctx, size_t idx), void *ctx);
/* Adds index @idx under hash @h (not checking for an equal key). */
int comp_table_add(struct comp_table *t, __u64 h, size_t idx);

/* A growing byte buffer for elements a component builds. */
struct comp_buf {
	char	*p;
	size_t	len, cap;
};

int comp_buf_add(struct dfg_comp *c, struct comp_buf *b, const void *p,
		 size_t len);

/* A record's key as an expression value. */
void comp_rec_key(const struct comp_rec *r, bool numeric,
		  struct dfg_expr_val *v);

/*
 * struct comp_out - buffered output to a file, "-" for standard output
 * @fd, @buf, @used, @size: the file and the buffer
 * @off:	bytes written to the file so far (checkpoints save it)
 * @stream:	not a regular file: written in order, never truncated
 * @started:	the file was truncated to @off before its first write
 */
struct comp_out {
	int	fd;
	char	*buf;
	size_t	used, size;
	__u64	off;
	bool	stream;
	bool	started;
};

int comp_out_open(struct dfg_comp *c, struct comp_out *o, const char *path);
int comp_out_write(struct dfg_comp *c, struct comp_out *o, const void *p,
		   size_t len);
int comp_out_flush(struct dfg_comp *c, struct comp_out *o);
void comp_out_close(struct comp_out *o);

/* @path with "{}" replaced by the instance number (N-way files). */
int comp_path(struct dfg_comp *c, const char *param, char **pathp);

#endif /* _DFG_COMP_IMPL_H */
