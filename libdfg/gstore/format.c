// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * The graph store's file format (<linux/dfg_graph.h>): writing a file from
 * sections, and checking a file before anything reads it. The check is
 * complete (every offset, length and id), so that code working on a
 * checked file never bounds-checks again; the module's copy of a
 * partition relies on the same rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gstore.h"

_Static_assert(sizeof(struct dfg_gs_hdr) == DFG_GS_HDR_SIZE,
	       "the header is DFG_GS_HDR_SIZE bytes");

static const char *const sec_name[DFG_GS_SEC_COUNT] = {
	[DFG_GS_SEC_ROW_PTR]	 = "row_ptr",
	[DFG_GS_SEC_COL_IDX]	 = "col_idx",
	[DFG_GS_SEC_ORIG_ID]	 = "orig_id",
	[DFG_GS_SEC_FEAT]	 = "feat",
	[DFG_GS_SEC_LABEL]	 = "label",
	[DFG_GS_SEC_PART_BASE]	 = "part_base",
	[DFG_GS_SEC_HUB_MASK]	 = "hub_mask",
	[DFG_GS_SEC_REP_ID]	 = "rep_id",
	[DFG_GS_SEC_REP_ROW_PTR] = "rep_row_ptr",
	[DFG_GS_SEC_REP_COL_IDX] = "rep_col_idx",
	[DFG_GS_SEC_REP_FEAT]	 = "rep_feat",
	[DFG_GS_SEC_REP_LABEL]	 = "rep_label",
};

const char *dfg_gs_sec_name(int i)
{
	return i >= 0 && i < DFG_GS_SEC_COUNT ? sec_name[i] : "?";
}

int dfg_gs_fail(struct dfg_gs_err *err, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return ret;
}

size_t dfg_gs_feat_row_bytes(uint32_t feat_dim, uint32_t feat_type)
{
	switch (feat_type) {
	case DFG_GS_FEAT_F32:
		return (size_t)feat_dim * 4;
	case DFG_GS_FEAT_U8:
		return feat_dim;
	default:
		return 0;
	}
}

static inline uint64_t rotl64(uint64_t x, unsigned int r)
{
	return (x << r) | (x >> (64 - r));
}

/* Word-at-a-time multiply-rotate mixing, then a final avalanche. */
uint64_t dfg_gs_hash(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t w;

	h ^= len * 0x9e3779b97f4a7c15ULL;
	for (; len >= 8; b += 8, len -= 8) {
		memcpy(&w, b, 8);
		h = rotl64(h ^ (w * 0x87c37b91114253d5ULL), 31) *
		    0x4cf5ad432745937fULL;
	}
	w = 0;
	memcpy(&w, b, len);
	h = rotl64(h ^ (w * 0x87c37b91114253d5ULL), 31) * 0x4cf5ad432745937fULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

uint64_t dfg_gs_graph_id(const struct dfg_gs_graph *g)
{
	uint64_t shape[6] = { g->n, g->m, g->flags, g->feat_dim, g->feat_type,
			      g->classes };
	uint64_t h = dfg_gs_hash(0, shape, sizeof(shape));

	h = dfg_gs_hash(h, g->row_ptr, (g->n + 1) * 8);
	h = dfg_gs_hash(h, g->col, g->m * 8);
	if (g->orig_id)
		h = dfg_gs_hash(h, g->orig_id, g->n * 8);
	if (g->feat)
		h = dfg_gs_hash(h, g->feat,
				g->n * dfg_gs_feat_row_bytes(g->feat_dim,
							     g->feat_type));
	if (g->label)
		h = dfg_gs_hash(h, g->label, g->n * 4);
	return h ? h : 1;	/* 0 means "no graph" to a reader */
}

void dfg_gs_graph_free(struct dfg_gs_graph *g)
{
	free(g->row_ptr);
	free(g->col);
	free(g->orig_id);
	free(g->feat);
	free(g->label);
	memset(g, 0, sizeof(*g));
}

static uint64_t align_up(uint64_t x)
{
	return (x + DFG_GS_ALIGN - 1) & ~(uint64_t)(DFG_GS_ALIGN - 1);
}

static int write_all(FILE *f, const void *p, uint64_t len)
{
	static const char zeros[4096];

	if (p)
		return fwrite(p, 1, len, f) == len ? 0 : -EIO;
	while (len) {
		size_t n = len < sizeof(zeros) ? len : sizeof(zeros);

		if (fwrite(zeros, 1, n, f) != n)
			return -EIO;
		len -= n;
	}
	return 0;
}

int dfg_gs_write_file(const char *path, struct dfg_gs_hdr *hdr,
		      const void *const data[DFG_GS_SEC_COUNT],
		      struct dfg_gs_err *err)
{
	uint64_t pos = DFG_GS_HDR_SIZE, at = DFG_GS_HDR_SIZE;
	char tmp[4096];
	FILE *f;
	int i, ret = 0;

	for (i = 0; i < DFG_GS_SEC_COUNT; i++) {
		hdr->sec[i].off = hdr->sec[i].len ? pos : 0;
		pos = align_up(pos + hdr->sec[i].len);
	}
	hdr->magic = DFG_GS_MAGIC;
	hdr->version = DFG_GS_VERSION;
	hdr->hdr_size = DFG_GS_HDR_SIZE;
	hdr->file_size = pos;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return dfg_gs_fail(err, -ENAMETOOLONG, "%s: name too long",
				   path);
	f = fopen(tmp, "wb");
	if (!f)
		return dfg_gs_fail(err, -errno, "%s: %s", tmp,
				   strerror(errno));
	ret = write_all(f, hdr, DFG_GS_HDR_SIZE);
	for (i = 0; i < DFG_GS_SEC_COUNT && !ret; i++) {
		if (!hdr->sec[i].len)
			continue;
		ret = write_all(f, NULL, hdr->sec[i].off - at);
		if (!ret)
			ret = write_all(f, data[i], hdr->sec[i].len);
		at = hdr->sec[i].off + hdr->sec[i].len;
	}
	if (!ret)
		ret = write_all(f, NULL, pos - at);
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return dfg_gs_fail(err, ret, "%s: cannot write: %s", path,
				   strerror(-ret));
	}
	return 0;
}

/* a * b into *out, false on overflow. */
static bool mul_ok(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

#define BAD(...)	dfg_gs_fail(err, -EBADMSG, __VA_ARGS__)

/* Expected byte length of each section from the header's counts. */
static int expected_lens(const struct dfg_gs_hdr *h, uint64_t *want,
			 struct dfg_gs_err *err)
{
	uint64_t row = dfg_gs_feat_row_bytes(h->feat_dim, h->feat_type);
	uint64_t nl = h->nodes_local, rc = h->rep_count;
	bool ok = true, lab = h->label_classes > 0;

	ok &= mul_ok(nl + 1, 8, &want[DFG_GS_SEC_ROW_PTR]);
	ok &= mul_ok(h->edges_local, 8, &want[DFG_GS_SEC_COL_IDX]);
	ok &= mul_ok(h->sec[DFG_GS_SEC_ORIG_ID].len ? nl : 0, 8,
		     &want[DFG_GS_SEC_ORIG_ID]);
	ok &= mul_ok(nl, row, &want[DFG_GS_SEC_FEAT]);
	ok &= mul_ok(lab ? nl : 0, 4, &want[DFG_GS_SEC_LABEL]);
	ok &= mul_ok((uint64_t)h->part_count + 1, 8,
		     &want[DFG_GS_SEC_PART_BASE]);
	want[DFG_GS_SEC_HUB_MASK] = (nl / 64 + !!(nl % 64)) * 8;
	ok &= mul_ok(rc, 8, &want[DFG_GS_SEC_REP_ID]);
	ok &= mul_ok(rc ? rc + 1 : 0, 8, &want[DFG_GS_SEC_REP_ROW_PTR]);
	ok &= mul_ok(h->rep_edges, 8, &want[DFG_GS_SEC_REP_COL_IDX]);
	ok &= mul_ok(rc, row, &want[DFG_GS_SEC_REP_FEAT]);
	ok &= mul_ok(lab ? rc : 0, 4, &want[DFG_GS_SEC_REP_LABEL]);
	if (!ok || nl == UINT64_MAX || rc == UINT64_MAX)
		return BAD("node or edge counts overflow");
	return 0;
}

static int check_header(const struct dfg_gs_hdr *h, size_t size,
			struct dfg_gs_err *err)
{
	uint64_t want[DFG_GS_SEC_COUNT], end = DFG_GS_HDR_SIZE;
	size_t i;
	int ret;

	if (h->magic != DFG_GS_MAGIC)
		return BAD("bad magic: not a dfg graph file");
	if (h->version != DFG_GS_VERSION)
		return dfg_gs_fail(err, -EPROTONOSUPPORT,
				   "format version %u (this dfg reads %u)",
				   h->version, DFG_GS_VERSION);
	if (h->hdr_size != DFG_GS_HDR_SIZE)
		return BAD("header size %u, expected %u", h->hdr_size,
			   DFG_GS_HDR_SIZE);
	if (h->file_size > size)
		return BAD("truncated: %zu bytes, the header says %llu", size,
			   (unsigned long long)h->file_size);
	if (h->file_size < size)
		return BAD("%llu bytes of trailing data after the graph",
			   (unsigned long long)(size - h->file_size));
	if (h->flags & ~DFG_GS_F_ALL)
		return BAD("unknown flags 0x%x", h->flags & ~DFG_GS_F_ALL);
	if (h->reserved0 || h->reserved1)
		return BAD("nonzero reserved header field");
	for (i = 0; i < sizeof(h->reserved2) / 8; i++)
		if (h->reserved2[i])
			return BAD("nonzero reserved header field");
	for (i = DFG_GS_SEC_COUNT; i < DFG_GS_MAX_SECS; i++)
		if (h->sec[i].off || h->sec[i].len)
			return BAD("unknown section %zu", i);
	if (!h->part_count || h->part_index >= h->part_count)
		return BAD("partition %u of %u", h->part_index, h->part_count);
	if (!!(h->flags & DFG_GS_F_PARTITION) != (h->part_count > 1))
		return BAD("partition flag and count (%u) disagree",
			   h->part_count);
	if (h->part_count == 1 &&
	    (h->nodes_local != h->nodes_global || h->node_base ||
	     h->edges_local != h->edges_global || h->rep_count ||
	     h->rep_candidates || h->part_set_id))
		return BAD("a whole graph with partition fields set");
	if (h->nodes_local > h->nodes_global ||
	    h->edges_local > h->edges_global ||
	    h->node_base > h->nodes_global - h->nodes_local)
		return BAD("local counts exceed the graph's");
	if (h->rep_count > h->rep_candidates ||
	    h->rep_candidates > h->nodes_global - h->nodes_local ||
	    !!(h->flags & DFG_GS_F_REP_PARTIAL) !=
	    (h->rep_count < h->rep_candidates))
		return BAD("replica counts inconsistent");
	if (h->rep_edges > h->edges_global)
		return BAD("replica counts inconsistent");
	if (h->feat_type > DFG_GS_FEAT_U8 ||
	    !h->feat_dim != (h->feat_type == DFG_GS_FEAT_NONE))
		return BAD("feature type %u with width %u", h->feat_type,
			   h->feat_dim);
	if (!h->graph_id)
		return BAD("graph id 0");
	ret = expected_lens(h, want, err);
	if (ret)
		return ret;
	for (i = 0; i < DFG_GS_SEC_COUNT; i++) {
		const struct dfg_gs_sec_ent *s = &h->sec[i];

		if (s->len != want[i])
			return BAD("section %s: %llu bytes, expected %llu",
				   sec_name[i], (unsigned long long)s->len,
				   (unsigned long long)want[i]);
		if (!s->len) {
			if (s->off)
				return BAD("section %s: offset of an empty section",
					   sec_name[i]);
			continue;
		}
		if (s->off % DFG_GS_ALIGN || s->off < end ||
		    s->off > size || s->len > size - s->off)
			return BAD("section %s: offset %llu length %llu out of range",
				   sec_name[i], (unsigned long long)s->off,
				   (unsigned long long)s->len);
		end = s->off + s->len;
	}
	return 0;
}

static const void *sec_ptr(const struct dfg_gs_file *f, int i)
{
	const struct dfg_gs_sec_ent *s = &f->hdr->sec[i];

	return s->len ? (const char *)f->base + s->off : NULL;
}

/* A CSR of @rows rows over @arcs arcs with ids < @n, sorted per row. */
static int check_csr(const uint64_t *rp, const uint64_t *col, uint64_t rows,
		     uint64_t arcs, uint64_t n, const char *what,
		     struct dfg_gs_err *err)
{
	uint64_t r, j;

	if (!rows)
		return arcs ? BAD("%s: arcs without rows", what) : 0;
	if (rp[0] || rp[rows] != arcs)
		return BAD("%s: row pointers do not span the %llu arcs", what,
			   (unsigned long long)arcs);
	for (r = 0; r < rows; r++) {
		if (rp[r + 1] < rp[r] || rp[r + 1] > arcs)
			return BAD("%s: row pointer %llu out of order", what,
				   (unsigned long long)r + 1);
		for (j = rp[r]; j < rp[r + 1]; j++) {
			if (col[j] >= n)
				return BAD("%s: neighbour id %llu out of range (%llu nodes)",
					   what, (unsigned long long)col[j],
					   (unsigned long long)n);
			if (j > rp[r] && col[j] <= col[j - 1])
				return BAD("%s: row %llu not sorted", what,
					   (unsigned long long)r);
		}
	}
	return 0;
}

static int check_labels(const uint32_t *l, uint64_t n, uint32_t classes,
			const char *what, struct dfg_gs_err *err)
{
	uint64_t i;

	for (i = 0; l && i < n; i++)
		if (l[i] >= classes)
			return BAD("%s %llu: label %u of %u classes", what,
				   (unsigned long long)i, l[i], classes);
	return 0;
}

static int check_body(const struct dfg_gs_file *f, struct dfg_gs_err *err)
{
	const struct dfg_gs_hdr *h = f->hdr;
	uint64_t n = h->nodes_global, nl = h->nodes_local, i;
	uint32_t k = h->part_count, p;
	int ret;

	ret = check_csr(f->row_ptr, f->col, nl, h->edges_local, n, "col_idx",
			err);
	if (ret)
		return ret;
	if (f->part_base[0] || f->part_base[k] != n)
		return BAD("part_base does not span the %llu nodes",
			   (unsigned long long)n);
	for (p = 0; p < k; p++)
		if (f->part_base[p + 1] < f->part_base[p])
			return BAD("part_base out of order at %u", p + 1);
	if (f->part_base[h->part_index] != h->node_base ||
	    f->part_base[h->part_index + 1] - h->node_base != nl)
		return BAD("part_base disagrees with node_base/nodes_local");
	if (nl % 64 && f->hub_mask[nl / 64] >> (nl % 64))
		return BAD("hub_mask has bits past the last node");
	ret = check_labels(f->label, nl, h->label_classes, "node", err);
	if (ret)
		return ret;
	if (!h->rep_count)
		return 0;
	for (i = 0; i < h->rep_count; i++) {
		if (f->rep_id[i] >= n || (i && f->rep_id[i] <= f->rep_id[i - 1]))
			return BAD("rep_id: entry %llu out of range or order",
				   (unsigned long long)i);
		if (dfg_gs_owner(f->part_base, k, f->rep_id[i]) ==
		    h->part_index)
			return BAD("rep_id: node %llu is owned here",
				   (unsigned long long)f->rep_id[i]);
	}
	ret = check_csr(f->rep_row_ptr, f->rep_col, h->rep_count,
			h->rep_edges, n, "rep_col_idx", err);
	if (ret)
		return ret;
	return check_labels(f->rep_label, h->rep_count, h->label_classes,
			    "replica", err);
}

int dfg_gs_check(struct dfg_gs_file *f, const void *base, size_t size,
		 struct dfg_gs_err *err)
{
	int ret;

	memset(f, 0, sizeof(*f));
	if (size < DFG_GS_HDR_SIZE)
		return BAD("truncated: %zu bytes, shorter than the %u-byte header",
			   size, DFG_GS_HDR_SIZE);
	if ((uintptr_t)base % 8)
		return dfg_gs_fail(err, -EINVAL, "buffer not 8-byte aligned");
	f->base = base;
	f->size = size;
	f->hdr = base;
	ret = check_header(f->hdr, size, err);
	if (ret)
		return ret;
	f->row_ptr = sec_ptr(f, DFG_GS_SEC_ROW_PTR);
	f->col = sec_ptr(f, DFG_GS_SEC_COL_IDX);
	f->orig_id = sec_ptr(f, DFG_GS_SEC_ORIG_ID);
	f->feat = sec_ptr(f, DFG_GS_SEC_FEAT);
	f->label = sec_ptr(f, DFG_GS_SEC_LABEL);
	f->part_base = sec_ptr(f, DFG_GS_SEC_PART_BASE);
	f->hub_mask = sec_ptr(f, DFG_GS_SEC_HUB_MASK);
	f->rep_id = sec_ptr(f, DFG_GS_SEC_REP_ID);
	f->rep_row_ptr = sec_ptr(f, DFG_GS_SEC_REP_ROW_PTR);
	f->rep_col = sec_ptr(f, DFG_GS_SEC_REP_COL_IDX);
	f->rep_feat = sec_ptr(f, DFG_GS_SEC_REP_FEAT);
	f->rep_label = sec_ptr(f, DFG_GS_SEC_REP_LABEL);
	ret = check_body(f, err);
	if (ret)
		memset(f, 0, sizeof(*f));
	return ret;
}

int dfg_gs_open(struct dfg_gs_file *f, const char *path,
		struct dfg_gs_err *err)
{
	struct dfg_gs_err e;
	struct stat st;
	void *base;
	int fd, ret;

	memset(f, 0, sizeof(*f));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dfg_gs_fail(err, -errno, "%s: %s", path,
				   strerror(errno));
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		return dfg_gs_fail(err, ret, "%s: %s", path, strerror(-ret));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return dfg_gs_fail(err, -EINVAL, "%s: not a regular file",
				   path);
	}
	if ((uint64_t)st.st_size < DFG_GS_HDR_SIZE) {
		close(fd);
		return dfg_gs_fail(err, -EBADMSG,
				   "%s: truncated: %lld bytes, shorter than the %u-byte header",
				   path, (long long)st.st_size,
				   DFG_GS_HDR_SIZE);
	}
	base = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	ret = base == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret)
		return dfg_gs_fail(err, ret, "%s: mmap: %s", path,
				   strerror(-ret));
	ret = dfg_gs_check(f, base, st.st_size, &e);
	if (ret) {
		munmap(base, st.st_size);
		return dfg_gs_fail(err, ret, "%s: %s", path, e.msg);
	}
	f->mapped = 1;
	return 0;
}

void dfg_gs_close(struct dfg_gs_file *f)
{
	if (f->mapped)
		munmap((void *)f->base, f->size);
	memset(f, 0, sizeof(*f));
}

int dfg_gs_same_set(const struct dfg_gs_file *a, const struct dfg_gs_file *b,
		    struct dfg_gs_err *err)
{
	const struct dfg_gs_hdr *x = a->hdr, *y = b->hdr;

	if (x->graph_id != y->graph_id)
		return dfg_gs_fail(err, -EXDEV,
				   "partitions of different graphs (graph id %016llx and %016llx)",
				   (unsigned long long)x->graph_id,
				   (unsigned long long)y->graph_id);
	if (x->part_set_id != y->part_set_id || x->part_count != y->part_count)
		return dfg_gs_fail(err, -EXDEV,
				   "partitions of different partitionings of the graph (set %016llx and %016llx)",
				   (unsigned long long)x->part_set_id,
				   (unsigned long long)y->part_set_id);
	if (!(x->flags & DFG_GS_F_PARTITION))
		return dfg_gs_fail(err, -EXDEV, "whole graphs, not partitions");
	if (x->part_index == y->part_index)
		return dfg_gs_fail(err, -EXDEV, "partition %u given twice",
				   x->part_index);
	return 0;
}

/* A copy of @len bytes at @p, or NULL for @len 0; -ENOMEM via *@ret. */
static void *dup_sec(const void *p, uint64_t len, int *ret)
{
	void *q;

	if (!len)
		return NULL;
	q = malloc(len);
	if (!q)
		*ret = -ENOMEM;
	else
		memcpy(q, p, len);
	return q;
}

int dfg_gs_load(struct dfg_gs_graph *g, const struct dfg_gs_file *f,
		struct dfg_gs_err *err)
{
	const struct dfg_gs_hdr *h = f->hdr;
	int ret = 0;

	memset(g, 0, sizeof(*g));
	if (h->part_count != 1)
		return dfg_gs_fail(err, -EINVAL,
				   "partition %u of %u, not a whole graph",
				   h->part_index, h->part_count);
	g->n = h->nodes_global;
	g->m = h->edges_global;
	g->flags = h->flags & DFG_GS_F_UNDIRECTED;
	g->feat_dim = h->feat_dim;
	g->feat_type = h->feat_type;
	g->classes = h->label_classes;
	g->graph_id = h->graph_id;
	g->row_ptr = dup_sec(f->row_ptr, h->sec[DFG_GS_SEC_ROW_PTR].len, &ret);
	g->col = dup_sec(f->col, h->sec[DFG_GS_SEC_COL_IDX].len, &ret);
	g->orig_id = dup_sec(f->orig_id, h->sec[DFG_GS_SEC_ORIG_ID].len, &ret);
	g->feat = dup_sec(f->feat, h->sec[DFG_GS_SEC_FEAT].len, &ret);
	g->label = dup_sec(f->label, h->sec[DFG_GS_SEC_LABEL].len, &ret);
	if (ret) {
		dfg_gs_graph_free(g);
		return dfg_gs_fail(err, ret, "out of memory loading the graph");
	}
	return 0;
}

int dfg_gs_save(const struct dfg_gs_graph *g, const char *path,
		struct dfg_gs_err *err)
{
	uint64_t part_base[2] = { 0, g->n };
	struct dfg_gs_hdr h = { 0 };
	const void *data[DFG_GS_SEC_COUNT] = { 0 };

	h.flags = g->flags & DFG_GS_F_UNDIRECTED;
	h.graph_id = dfg_gs_graph_id(g);
	h.part_count = 1;
	h.nodes_global = h.nodes_local = g->n;
	h.edges_global = h.edges_local = g->m;
	h.feat_dim = g->feat_dim;
	h.feat_type = g->feat_type;
	h.label_classes = g->classes;
	h.sec[DFG_GS_SEC_ROW_PTR].len = (g->n + 1) * 8;
	data[DFG_GS_SEC_ROW_PTR] = g->row_ptr;
	h.sec[DFG_GS_SEC_COL_IDX].len = g->m * 8;
	data[DFG_GS_SEC_COL_IDX] = g->col;
	h.sec[DFG_GS_SEC_ORIG_ID].len = g->orig_id ? g->n * 8 : 0;
	data[DFG_GS_SEC_ORIG_ID] = g->orig_id;
	h.sec[DFG_GS_SEC_FEAT].len =
		g->n * dfg_gs_feat_row_bytes(g->feat_dim, g->feat_type);
	data[DFG_GS_SEC_FEAT] = g->feat;
	h.sec[DFG_GS_SEC_LABEL].len = g->label ? g->n * 4 : 0;
	data[DFG_GS_SEC_LABEL] = g->label;
	h.sec[DFG_GS_SEC_PART_BASE].len = sizeof(part_base);
	data[DFG_GS_SEC_PART_BASE] = part_base;
	/* no cut edges in a whole graph: the hub mask is zeros */
	h.sec[DFG_GS_SEC_HUB_MASK].len = (g->n / 64 + !!(g->n % 64)) * 8;
	return dfg_gs_write_file(path, &h, data, err);
}
