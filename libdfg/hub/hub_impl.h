/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg hub/: what hub.c (serving, the view) and engine.c (the access
 * engine) share: a checked view of one partition image, wherever it lives
 * (the module's mapping, or an image built in memory from a file).
 */
#ifndef _DFG_HUB_IMPL_H
#define _DFG_HUB_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <dfg/hub.h>

#include "gstore.h"

/*
 * struct hub_view - pointers into a checked image
 * @h:		its header
 * @row, @col, @feat: own nodes' CSR and attributes
 * @rep_ids, @rep_row, @rep_col, @rep_feat: the hub replica
 * @hub:	bit i set iff own node i is a hub (a neighbour outside the
 *		own range: an endpoint of a cut edge); computed at init
 */
struct hub_view {
	const struct dfg_part_hdr	*h;
	const uint64_t			*row, *col, *rep_ids, *rep_row, *rep_col;
	const uint8_t			*feat, *rep_feat;
	uint64_t			*hub;
};

/* Checks the image at @img (@len bytes) as the module does; fills @v. */
int hub_view_init(struct hub_view *v, const void *img, uint64_t len);
void hub_view_fini(struct hub_view *v);

/* Own or replicated node's bytes; -ENOENT if neither. */
int hub_view_ref(const struct hub_view *v, uint64_t id, unsigned int what,
		 struct dfg_hub_ref *ref);

/* Index of @id in the replica, or -1. */
int64_t hub_view_rep(const struct hub_view *v, uint64_t id);

/* The bytes of replica entry @r (an index hub_view_rep() gave). */
void hub_view_rep_ref(const struct hub_view *v, uint64_t r, unsigned int what,
		      struct dfg_hub_ref *ref);

static inline bool hub_view_own(const struct hub_view *v, uint64_t id)
{
	return id - v->h->node_first < v->h->node_count;
}

static inline bool hub_view_is_hub(const struct hub_view *v, uint64_t id)
{
	uint64_t i = id - v->h->node_first;

	return hub_view_own(v, id) && (v->hub[i / 64] >> (i % 64) & 1);
}

/*
 * struct dfg_hub - a process's view of the served partition
 * @d:		the handle (PREFETCH, mmap)
 * @img, @img_len: the partition mapping
 * @cache, @cache_len, @ring_bytes: the cache mapping, once mapped
 * @v:		the checked view of @img
 */
struct dfg_hub {
	struct dfg	*d;
	void		*img;
	uint64_t	img_len;
	void		*cache;
	uint64_t	cache_len;
	uint64_t	ring_bytes;
	struct hub_view	v;
};

/*
 * DFG_IOC_PREFETCH with @flags (dfg_hub_prefetch() is @flags 0), waiting
 * for its reads as dfg_hub_prefetch() does.
 */
int hub_prefetch(struct dfg *d, const __u64 *ids, unsigned int nr,
		 unsigned int what, unsigned int flags, struct dfg_pf_loc *out);

/* The image of a checked partition file (DFG_HUB_LOAD_* @flags). */
int hub_image_of(const struct dfg_gs_file *f, unsigned int flags, void **img,
		 size_t *len, struct dfg_hub_err *err);

/* Writes the reason into @err (if any) and returns @ret (a -errno). */
int hub_fail(struct dfg_hub_err *err, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Frontier slots engine @e sampled (*@slots), and those of them whose
 * draws it took from the walk ahead of an announced batch (*@ahead)
 * instead of drawing them again.
 */
void hub_engine_slots(const struct dfg_hub_engine *e, uint64_t *slots,
		      uint64_t *ahead);

/* Copies a gstore reason into @err; returns @ret. */
int hub_gs_err(struct dfg_hub_err *err, int ret, const struct dfg_gs_err *e);

#endif /* _DFG_HUB_IMPL_H */
