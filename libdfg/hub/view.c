// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * A checked view of one partition image (struct dfg_part_hdr): the same
 * rules the module applies at PART_LOAD (kmod/prefetch.c), so that the
 * engine reads a mapping or an image built in memory without checking
 * bounds again, plus the own hub nodes found from the CSR.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hub_impl.h"

/* Is [off, off + n * size) inside @bytes, 8-aligned? */
static bool sect_ok(uint64_t bytes, uint64_t off, uint64_t n, uint64_t size)
{
	uint64_t len;

	if (off % 8 || __builtin_mul_overflow(n, size, &len))
		return false;
	return off <= bytes && len <= bytes - off;
}

static bool row_ok(const uint64_t *row, uint64_t n, uint64_t cols)
{
	uint64_t i;

	if (row[0])
		return false;
	for (i = 0; i < n; i++)
		if (row[i] > row[i + 1])
			return false;
	return row[n] <= cols;
}

int hub_view_init(struct hub_view *v, const void *img, uint64_t len)
{
	const struct dfg_part_hdr *h = img;
	const uint8_t *b = img;
	uint64_t i, j, end;

	memset(v, 0, sizeof(*v));
	if (len < sizeof(*h) || h->magic != DFG_PART_MAGIC ||
	    h->version != DFG_PART_VERSION || h->image_bytes != len ||
	    !h->node_count || h->feat_bytes > DFG_PART_FEAT_MAX ||
	    __builtin_add_overflow(h->node_first, h->node_count, &end) ||
	    h->node_count + 1 == 0 || h->rep_count + 1 == 0)
		return -EPROTO;
	if (!sect_ok(len, h->row_off, h->node_count + 1, 8) ||
	    !sect_ok(len, h->col_off, h->col_count, 8) ||
	    !sect_ok(len, h->feat_off, h->node_count, h->feat_bytes) ||
	    !sect_ok(len, h->rep_ids_off, h->rep_count, 8) ||
	    !sect_ok(len, h->rep_row_off, h->rep_count + 1, 8) ||
	    !sect_ok(len, h->rep_col_off, h->rep_col_count, 8) ||
	    !sect_ok(len, h->rep_feat_off, h->rep_count, h->feat_bytes))
		return -EPROTO;
	v->h = h;
	v->row = (const uint64_t *)(b + h->row_off);
	v->col = (const uint64_t *)(b + h->col_off);
	v->feat = b + h->feat_off;
	v->rep_ids = (const uint64_t *)(b + h->rep_ids_off);
	v->rep_row = (const uint64_t *)(b + h->rep_row_off);
	v->rep_col = (const uint64_t *)(b + h->rep_col_off);
	v->rep_feat = b + h->rep_feat_off;
	if (!row_ok(v->row, h->node_count, h->col_count) ||
	    !row_ok(v->rep_row, h->rep_count, h->rep_col_count))
		return -EPROTO;
	for (i = 0; i < h->rep_count; i++)
		if ((i && v->rep_ids[i] <= v->rep_ids[i - 1]) ||
		    hub_view_own(v, v->rep_ids[i]))
			return -EPROTO;
	v->hub = calloc((h->node_count + 63) / 64, 8);
	if (!v->hub)
		return -ENOMEM;
	for (i = 0; i < h->node_count; i++)
		for (j = v->row[i]; j < v->row[i + 1]; j++)
			if (!hub_view_own(v, v->col[j])) {
				v->hub[i / 64] |= 1ULL << (i % 64);
				break;
			}
	return 0;
}

void hub_view_fini(struct hub_view *v)
{
	free(v->hub);
	v->hub = NULL;
}

int64_t hub_view_rep(const struct hub_view *v, uint64_t id)
{
	uint64_t lo = 0, hi = v->h->rep_count;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (v->rep_ids[mid] == id)
			return (int64_t)mid;
		if (v->rep_ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

void hub_view_rep_ref(const struct hub_view *v, uint64_t r, unsigned int what,
		      struct dfg_hub_ref *ref)
{
	ref->where = DFG_PF_IN_REPLICA;
	if (what == DFG_PF_NBRS) {
		ref->data = v->rep_col + v->rep_row[r];
		ref->len = (uint32_t)((v->rep_row[r + 1] - v->rep_row[r]) * 8);
	} else {
		ref->data = v->rep_feat + r * v->h->feat_bytes;
		ref->len = v->h->feat_bytes;
	}
}

int hub_view_ref(const struct hub_view *v, uint64_t id, unsigned int what,
		 struct dfg_hub_ref *ref)
{
	const uint64_t *row, *col;
	const uint8_t *feat;
	uint64_t i;
	int64_t r;

	if (hub_view_own(v, id)) {
		i = id - v->h->node_first;
		row = v->row;
		col = v->col;
		feat = v->feat;
		ref->where = DFG_PF_IN_PART;
	} else {
		r = hub_view_rep(v, id);
		if (r < 0)
			return -ENOENT;
		i = (uint64_t)r;
		row = v->rep_row;
		col = v->rep_col;
		feat = v->rep_feat;
		ref->where = DFG_PF_IN_REPLICA;
	}
	if (what == DFG_PF_NBRS) {
		ref->data = col + row[i];
		ref->len = (uint32_t)((row[i + 1] - row[i]) * 8);
	} else {
		ref->data = feat + i * v->h->feat_bytes;
		ref->len = v->h->feat_bytes;
	}
	return 0;
}
