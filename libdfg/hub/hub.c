// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * Serving a partition (<dfg/hub.h>): a partition file of the graph store
 * converted into the module's image (struct dfg_part_hdr), PART_LOAD,
 * PEER_ADD and PREFETCH through the one command path, and the read-only
 * view of the loaded image and of the machine's prefetch cache.
 *
 * The commands go through dfg_sys_cmd() (PART_LOAD, PEER_ADD) and
 * dfg_sys_wait() (PREFETCH, which waits for its reads: the thread's wait
 * ring, or ioctl under DFG_NO_URING).
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sys.h"
#include "hub_impl.h"

int hub_fail(struct dfg_hub_err *err, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return ret;
}

int hub_gs_err(struct dfg_hub_err *err, int ret, const struct dfg_gs_err *e)
{
	if (err)
		snprintf(err->msg, sizeof(err->msg), "%s", e->msg);
	return ret;
}

/* Bytes of a section of @n elements of @size, 64-aligned, after @off. */
static uint64_t sect(uint64_t *off, uint64_t n, uint64_t size)
{
	uint64_t at = *off;

	*off = (at + n * size + 63) & ~63ULL;
	return at;
}

/*
 * Each node's attributes: its feature row, then its label when the graph
 * has labels (classes > 0).
 */
static void attrs_copy(uint8_t *dst, const uint8_t *feat, const uint32_t *label,
		       uint64_t n, size_t row, uint32_t ab)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		if (row)
			memcpy(dst + i * ab, feat + i * row, row);
		if (label)
			memcpy(dst + i * ab + row, &label[i], 4);
	}
}

int hub_image_of(const struct dfg_gs_file *f, unsigned int flags, void **img,
		 size_t *len, struct dfg_hub_err *err)
{
	const struct dfg_gs_hdr *g = f->hdr;
	size_t row = dfg_gs_feat_row_bytes(g->feat_dim, g->feat_type);
	uint64_t ab = row + (g->label_classes ? 4 : 0);
	uint64_t rc = flags & DFG_HUB_LOAD_NO_REPLICA ? 0 : g->rep_count;
	uint64_t re = rc ? g->rep_edges : 0, off;
	struct dfg_part_hdr *h;
	uint8_t *p;

	if (ab > DFG_PART_FEAT_MAX)
		return hub_fail(err, -EFBIG,
				"attributes of %llu bytes: the module takes at most %u",
				(unsigned long long)ab, DFG_PART_FEAT_MAX);
	off = (sizeof(*h) + 63) & ~63ULL;
	*len = 0;
	h = &(struct dfg_part_hdr){
		.magic		= DFG_PART_MAGIC,
		.version	= DFG_PART_VERSION,
		.node_first	= g->node_base,
		.node_count	= g->nodes_local,
		.feat_bytes	= (uint32_t)ab,
		.col_count	= g->edges_local,
		.rep_count	= rc,
		.rep_col_count	= re,
		.part_set	= g->part_set_id,
	};
	h->row_off = sect(&off, h->node_count + 1, 8);
	h->col_off = sect(&off, h->col_count, 8);
	h->feat_off = sect(&off, h->node_count, ab);
	h->rep_ids_off = sect(&off, rc, 8);
	h->rep_row_off = sect(&off, rc + 1, 8);
	h->rep_col_off = sect(&off, re, 8);
	h->rep_feat_off = sect(&off, rc, ab);
	h->image_bytes = off;
	p = calloc(1, off);
	if (!p)
		return hub_fail(err, -ENOMEM, "no memory for a %llu-byte image",
				(unsigned long long)off);
	memcpy(p, h, sizeof(*h));
	h = (struct dfg_part_hdr *)p;
	memcpy(p + h->row_off, f->row_ptr, (h->node_count + 1) * 8);
	if (h->col_count)
		memcpy(p + h->col_off, f->col, h->col_count * 8);
	attrs_copy(p + h->feat_off, f->feat, f->label, h->node_count, row, ab);
	if (rc) {
		memcpy(p + h->rep_ids_off, f->rep_id, rc * 8);
		memcpy(p + h->rep_col_off, f->rep_col, re * 8);
		attrs_copy(p + h->rep_feat_off, f->rep_feat, f->rep_label, rc,
			   row, ab);
	}
	/* No replica: its row is the single 0 that calloc() wrote. */
	if (rc)
		memcpy(p + h->rep_row_off, f->rep_row_ptr, (rc + 1) * 8);
	*img = p;
	*len = off;
	return 0;
}

int dfg_hub_image(const char *path, unsigned int flags, void **img,
		  size_t *len, struct dfg_hub_err *err)
{
	struct dfg_gs_file f;
	struct dfg_gs_err e;
	int ret;

	if (!path || !img || !len || (flags & ~DFG_HUB_LOAD_ALL))
		return hub_fail(err, -EINVAL, "invalid argument");
	ret = dfg_gs_open(&f, path, &e);
	if (ret)
		return hub_gs_err(err, ret, &e);
	ret = hub_image_of(&f, flags, img, len, err);
	dfg_gs_close(&f);
	return ret;
}

int dfg_hub_part_load(struct dfg *d, const char *path, unsigned int flags,
		      struct dfg_hub_err *err)
{
	struct dfg_part_load pl;
	struct dfg_info info;
	void *img;
	size_t len;
	int ret;

	if (!d)
		return hub_fail(err, -EINVAL, "invalid argument");
	ret = dfg_hub_image(path, flags, &img, &len, err);
	if (ret)
		return ret;
	/*
	 * A module older than the part_set field takes it for a reserved
	 * one (-EINVAL): it gets the image without it, and checks nothing.
	 */
	if (dfg_info(d, &info) || !(info.features & DFG_F_PART_SET))
		((struct dfg_part_hdr *)img)->part_set = 0;
	pl = (struct dfg_part_load){
		.addr	= (uintptr_t)img,
		.len	= len,
	};
	ret = dfg_sys_cmd(d->fd, DFG_IOC_PART_LOAD, &pl);
	free(img);
	if (ret < 0)
		return hub_fail(err, ret, "%s: the module refused the partition: %s",
				path, ret == -EXDEV ?
				"a connected peer serves a partition of another graph or partitioning" :
				strerror(-ret));
	return 0;
}

int dfg_hub_peer_add(struct dfg *d, const char *addr, unsigned int port,
		     unsigned int timeout_ms, struct dfg_hub_peer *out)
{
	struct dfg_peer_add pa = {
		.port		= (__u16)port,
		.timeout_ms	= timeout_ms,
	};
	int ret;

	if (!d || !addr || port > 65535)
		return -EINVAL;
	if (inet_pton(AF_INET, addr, pa.addr) == 1)
		pa.family = AF_INET;
	else if (inet_pton(AF_INET6, addr, pa.addr) == 1)
		pa.family = AF_INET6;
	else
		return -EINVAL;
	ret = dfg_sys_cmd(d->fd, DFG_IOC_PEER_ADD, &pa);
	if (ret < 0)
		return ret;
	if (out)
		*out = (struct dfg_hub_peer){
			.id		= pa.id,
			.node_first	= pa.node_first,
			.node_count	= pa.node_count,
		};
	return 0;
}

int hub_prefetch(struct dfg *d, const __u64 *ids, unsigned int nr,
		 unsigned int what, unsigned int flags, struct dfg_pf_loc *out)
{
	struct dfg_prefetch pf = {
		.ids	= (uintptr_t)ids,
		.out	= (uintptr_t)out,
		.nr	= nr,
		.what	= what,
		.flags	= flags,
	};

	if (!d || !ids || !out)
		return -EINVAL;
	return dfg_sys_wait(d->fd, DFG_IOC_PREFETCH, &pf, NULL, NULL, NULL);
}

int dfg_hub_prefetch(struct dfg *d, const __u64 *ids, unsigned int nr,
		     unsigned int what, struct dfg_pf_loc *out)
{
	return hub_prefetch(d, ids, nr, what, 0, out);
}

/* ---- the view ---- */

int dfg_hub_open(struct dfg *d, struct dfg_hub **out)
{
	struct dfg_part_hdr hdr;
	struct dfg_hub *h;
	void *p;
	int ret = 0;

	if (!d || !out)
		return -EINVAL;
	/* The header first, for the image's size. */
	p = __dfg_sys_mmap(sizeof(hdr), PROT_READ, d->fd, DFG_PF_MMAP_PART,
			   &ret);
	if (!p)
		return ret;
	memcpy(&hdr, p, sizeof(hdr));
	__dfg_sys_munmap(p, sizeof(hdr));
	if (hdr.magic != DFG_PART_MAGIC || hdr.image_bytes < sizeof(hdr))
		return -EPROTO;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->d = d;
	h->img_len = hdr.image_bytes;
	h->img = __dfg_sys_mmap(h->img_len, PROT_READ, d->fd,
				DFG_PF_MMAP_PART, &ret);
	if (!h->img) {
		free(h);
		return ret;
	}
	/*
	 * The module checked the image it holds; a later PART_LOAD replaces
	 * it, but this mapping keeps the pages it mapped. Check again what
	 * this view relies on, so that nothing below bounds-checks.
	 */
	ret = hub_view_init(&h->v, h->img, h->img_len);
	if (ret) {
		dfg_hub_close(h);
		return ret;
	}
	*out = h;
	return 0;
}

void dfg_hub_close(struct dfg_hub *h)
{
	if (!h)
		return;
	if (h->cache)
		__dfg_sys_munmap(h->cache, h->cache_len);
	hub_view_fini(&h->v);
	__dfg_sys_munmap(h->img, h->img_len);
	free(h);
}

const struct dfg_part_hdr *dfg_hub_part(const struct dfg_hub *h)
{
	return h ? h->v.h : NULL;
}

int dfg_hub_lookup(const struct dfg_hub *h, __u64 id, unsigned int what,
		   struct dfg_hub_ref *ref)
{
	if (!h || !ref || (what != DFG_PF_NBRS && what != DFG_PF_ATTRS))
		return -EINVAL;
	return hub_view_ref(&h->v, id, what, ref);
}

/* Map the cache: its header page for the size, then all of it. */
static int hub_cache_map(struct dfg_hub *h)
{
	struct dfg_pf_cache_hdr ch;
	void *p;
	int ret = 0;

	p = __dfg_sys_mmap(DFG_PF_CACHE_DATA, PROT_READ, h->d->fd,
			   DFG_PF_MMAP_CACHE, &ret);
	if (!p)
		return ret;
	memcpy(&ch, p, sizeof(ch));
	__dfg_sys_munmap(p, DFG_PF_CACHE_DATA);
	if (!ch.data_bytes)
		return -EPROTO;
	h->cache_len = DFG_PF_CACHE_DATA + ch.data_bytes;
	h->cache = __dfg_sys_mmap(h->cache_len, PROT_READ, h->d->fd,
				  DFG_PF_MMAP_CACHE, &ret);
	if (!h->cache)
		return ret;
	h->ring_bytes = ch.data_bytes;
	return 0;
}

int dfg_hub_cache_copy(struct dfg_hub *h, const struct dfg_pf_loc *loc,
		       void *dst)
{
	const struct dfg_pf_cache_hdr *ch;
	uint64_t at;
	int ret;

	if (!h || !loc || loc->where != DFG_PF_IN_CACHE || (!dst && loc->len))
		return -EINVAL;
	if (!loc->len)
		return 0;
	if (!h->cache) {
		ret = hub_cache_map(h);
		if (ret)
			return ret;
	}
	at = loc->pos % h->ring_bytes;
	if (loc->len > h->ring_bytes - at)
		return -EINVAL;
	ch = h->cache;
	memcpy(dst, (const uint8_t *)h->cache + DFG_PF_CACHE_DATA + at,
	       loc->len);
	/* The module raises tail before it reuses bytes (dfg_pf_cache_hdr). */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&ch->tail, __ATOMIC_RELAXED) > loc->pos)
		return -ESTALE;
	return 0;
}
