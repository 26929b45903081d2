// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * Making graphs: CSR from an edge list, R-MAT generation with Graph500's
 * parameters, deterministic attributes, and import from SNAP text and
 * binary CSR. Everything is deterministic from its inputs: a random value
 * is a hash of (seed, index), never a sequence that threads could reorder.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gstore.h"

/* splitmix64's finaliser: a bijective mix of one word. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

int dfg_gs_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

int dfg_gs_build_csr(struct dfg_gs_graph *g, uint64_t n, const uint64_t *src,
		     const uint64_t *dst, uint64_t ne, uint32_t flags,
		     struct dfg_gs_err *err)
{
	bool und = flags & DFG_GS_F_UNDIRECTED;
	uint64_t *rp, *cur, *col, i, r, j, out = 0;

	if (ne > UINT64_MAX / 16)
		return dfg_gs_fail(err, -EOVERFLOW, "too many edges");
	rp = calloc(n + 1, sizeof(*rp));
	cur = calloc(n + 1, sizeof(*cur));
	if (!rp || !cur)
		goto nomem;
	for (i = 0; i < ne; i++) {
		if (src[i] >= n || dst[i] >= n) {
			free(rp);
			free(cur);
			return dfg_gs_fail(err, -EINVAL,
					   "edge %llu: node id out of range (%llu nodes)",
					   (unsigned long long)i,
					   (unsigned long long)n);
		}
		if (src[i] == dst[i])
			continue;
		rp[src[i] + 1]++;
		if (und)
			rp[dst[i] + 1]++;
	}
	for (r = 0; r < n; r++)
		rp[r + 1] += rp[r];
	col = malloc((rp[n] ? rp[n] : 1) * sizeof(*col));
	if (!col)
		goto nomem;
	memcpy(cur, rp, n * sizeof(*cur));
	for (i = 0; i < ne; i++) {
		if (src[i] == dst[i])
			continue;
		col[cur[src[i]]++] = dst[i];
		if (und)
			col[cur[dst[i]]++] = src[i];
	}
	free(cur);
	/* sort each row, drop duplicates, compact in place */
	for (r = 0; r < n; r++) {
		uint64_t b = rp[r], e = rp[r + 1];

		qsort(col + b, e - b, sizeof(*col), dfg_gs_cmp_u64);
		rp[r] = out;
		for (j = b; j < e; j++)
			if (j == b || col[j] != col[j - 1])
				col[out++] = col[j];
	}
	rp[n] = out;
	g->n = n;
	g->m = out;
	g->row_ptr = rp;
	g->col = col;
	g->flags = flags & DFG_GS_F_UNDIRECTED;
	return 0;
nomem:
	free(rp);
	free(cur);
	return dfg_gs_fail(err, -ENOMEM, "out of memory for %llu nodes, %llu edges",
			   (unsigned long long)n, (unsigned long long)ne);
}

int dfg_gs_make_attrs(struct dfg_gs_graph *g, uint32_t feat_dim,
		      uint32_t feat_type, uint32_t classes, uint64_t seed,
		      struct dfg_gs_err *err)
{
	size_t row = dfg_gs_feat_row_bytes(feat_dim, feat_type);
	uint64_t v, id, h;
	uint32_t j;

	if (!feat_dim != (feat_type == DFG_GS_FEAT_NONE) ||
	    feat_type > DFG_GS_FEAT_U8)
		return dfg_gs_fail(err, -EINVAL, "feature type %u, width %u",
				   feat_type, feat_dim);
	if (row && g->n > SIZE_MAX / row)
		return dfg_gs_fail(err, -EOVERFLOW, "feature matrix too large");
	g->feat = row && g->n ? malloc(g->n * row) : NULL;
	g->label = classes && g->n ? malloc(g->n * sizeof(*g->label)) : NULL;
	if ((row && g->n && !g->feat) || (classes && g->n && !g->label)) {
		free(g->feat);
		free(g->label);
		g->feat = NULL;
		g->label = NULL;
		return dfg_gs_fail(err, -ENOMEM, "out of memory for attributes");
	}
	g->feat_dim = feat_dim;
	g->feat_type = feat_type;
	g->classes = classes;
	for (v = 0; v < g->n; v++) {
		id = g->orig_id ? g->orig_id[v] : v;
		h = mix64(seed ^ mix64(id));
		if (classes)
			g->label[v] = (uint32_t)(h % classes);
		for (j = 0; j < feat_dim; j++) {
			uint64_t x = mix64(h + j);

			if (feat_type == DFG_GS_FEAT_U8) {
				((uint8_t *)g->feat)[v * row + j] = x >> 56;
			} else {
				/* uniform in [-1, 1), exact in binary32 */
				float f = (float)(int32_t)(x >> 40) /
					  (float)(1 << 23) - 1.0f;

				memcpy((char *)g->feat + v * row + j * 4, &f, 4);
			}
		}
	}
	return 0;
}

/*
 * Graph500's vertex scramble, our way: a bijection of [0, 2^scale) from
 * the seed (odd multipliers and xor-shifts mod 2^scale), so that hub ids
 * are not all small numbers.
 */
static uint64_t scramble(uint64_t v, uint32_t scale, uint64_t seed)
{
	uint64_t mask = scale == 64 ? ~0ULL : (1ULL << scale) - 1;
	uint64_t m1 = mix64(seed) | 1, m2 = mix64(seed + 1) | 1;
	unsigned int sh = scale / 2 + 1;

	v = (v * m1) & mask;
	v ^= v >> sh;
	v = (v * m2) & mask;
	v ^= v >> sh;
	return v & mask;
}

int dfg_gs_gen_rmat(struct dfg_gs_graph *g, const struct dfg_gs_rmat *p,
		    dfg_gs_progress_fn progress, void *parg,
		    struct dfg_gs_err *err)
{
	/* A, A+B, A+B+C of Graph500 (D = 0.05), as 2^32 fixed point */
	const uint64_t ta = 0.57 * 4294967296.0, tb = 0.76 * 4294967296.0,
		       tc = 0.95 * 4294967296.0;
	uint64_t n, ne, i, *src, *dst, step;
	uint32_t lvl;
	int ret;

	memset(g, 0, sizeof(*g));
	if (p->scale < 1 || p->scale > 30)
		return dfg_gs_fail(err, -EINVAL, "scale %u: 1 to 30", p->scale);
	if (p->edge_factor < 1 || p->edge_factor > 1024)
		return dfg_gs_fail(err, -EINVAL, "edge factor %u: 1 to 1024",
				   p->edge_factor);
	n = 1ULL << p->scale;
	ne = n * p->edge_factor;
	src = malloc(ne * sizeof(*src));
	dst = malloc(ne * sizeof(*dst));
	if (!src || !dst) {
		free(src);
		free(dst);
		return dfg_gs_fail(err, -ENOMEM, "out of memory for %llu edges",
				   (unsigned long long)ne);
	}
	step = ne / 100 ? ne / 100 : 1;
	for (i = 0; i < ne; i++) {
		uint64_t s = 0, d = 0, h = mix64(p->seed ^ mix64(i));

		for (lvl = 0; lvl < p->scale; lvl++) {
			uint64_t r;

			/* two 32-bit draws per word of the edge's stream */
			if (!(lvl & 1))
				h = mix64(h);
			r = (lvl & 1) ? h >> 32 : h & 0xffffffffULL;
			s <<= 1;
			d <<= 1;
			if (r < ta)
				continue;
			if (r < tb)
				d |= 1;
			else if (r < tc)
				s |= 1;
			else
				s |= 1, d |= 1;
		}
		src[i] = scramble(s, p->scale, p->seed);
		dst[i] = scramble(d, p->scale, p->seed);
		if (progress && ((i + 1) % step == 0 || i + 1 == ne))
			progress(parg, "edges", i + 1, ne);
	}
	if (progress)
		progress(parg, "csr", 0, 1);
	ret = dfg_gs_build_csr(g, n, src, dst, ne, p->flags, err);
	free(src);
	free(dst);
	if (progress && !ret)
		progress(parg, "csr", 1, 1);
	return ret;
}

/* A growable pair of edge arrays. */
struct edges {
	uint64_t *src, *dst, n, cap;
};

static int edges_add(struct edges *e, uint64_t s, uint64_t d)
{
	if (e->n == e->cap) {
		uint64_t cap = e->cap ? e->cap * 2 : 1024;
		uint64_t *a = realloc(e->src, cap * sizeof(*a)), *b;

		if (!a)
			return -ENOMEM;
		e->src = a;
		b = realloc(e->dst, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		e->dst = b;
		e->cap = cap;
	}
	e->src[e->n] = s;
	e->dst[e->n++] = d;
	return 0;
}

/* A decimal id at *@pp (after blanks); false if there is none. */
static bool parse_id(char **pp, uint64_t *out)
{
	char *p = *pp;
	uint64_t v = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
		return false;
	*pp = p;
	*out = v;
	return true;
}

static uint64_t find_id(const uint64_t *ids, uint64_t n, uint64_t id)
{
	uint64_t lo = 0, hi = n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The graph of @e's edges, ids compacted to 0..n-1 in ascending order of
 * the original ids (kept in orig_id unless they were 0..n-1 already).
 */
static int build_compacted(struct dfg_gs_graph *g, struct edges *e,
			   uint32_t flags, struct dfg_gs_err *err)
{
	uint64_t *ids, n = 0, i;
	int ret;

	ids = malloc((e->n ? e->n : 1) * 2 * sizeof(*ids));
	if (!ids)
		return dfg_gs_fail(err, -ENOMEM, "out of memory");
	memcpy(ids, e->src, e->n * sizeof(*ids));
	memcpy(ids + e->n, e->dst, e->n * sizeof(*ids));
	qsort(ids, e->n * 2, sizeof(*ids), dfg_gs_cmp_u64);
	for (i = 0; i < e->n * 2; i++)
		if (!i || ids[i] != ids[i - 1])
			ids[n++] = ids[i];
	for (i = 0; i < e->n; i++) {
		e->src[i] = find_id(ids, n, e->src[i]);
		e->dst[i] = find_id(ids, n, e->dst[i]);
	}
	ret = dfg_gs_build_csr(g, n, e->src, e->dst, e->n, flags, err);
	if (ret) {
		free(ids);
		return ret;
	}
	if (!n || ids[n - 1] == n - 1) {	/* sorted, distinct: 0..n-1 */
		free(ids);
	} else {
		g->orig_id = realloc(ids, n * sizeof(*ids));
		if (!g->orig_id)
			g->orig_id = ids;
	}
	return 0;
}

int dfg_gs_import_snap(struct dfg_gs_graph *g, FILE *f, const char *name,
		       uint32_t flags, struct dfg_gs_err *err)
{
	struct edges e = { 0 };
	char *line = NULL, *p;
	size_t cap = 0, lineno = 0;
	uint64_t s, d;
	int ret = 0;

	memset(g, 0, sizeof(*g));
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		p = line + strspn(line, " \t");
		if (*p == '#' || *p == '\n' || *p == '\r' || !*p)
			continue;
		if (!parse_id(&p, &s) || !parse_id(&p, &d)) {
			ret = dfg_gs_fail(err, -EBADMSG,
					  "%s:%zu: expected two node ids (decimal, SRC DST)",
					  name, lineno);
			goto out;
		}
		ret = edges_add(&e, s, d);
		if (ret) {
			dfg_gs_fail(err, ret, "%s:%zu: out of memory", name,
				    lineno);
			goto out;
		}
	}
	if (ferror(f)) {
		ret = dfg_gs_fail(err, -EIO, "%s: read error", name);
		goto out;
	}
	if (!e.n) {
		ret = dfg_gs_fail(err, -EBADMSG, "%s: no edges", name);
		goto out;
	}
	ret = build_compacted(g, &e, flags, err);
out:
	free(line);
	free(e.src);
	free(e.dst);
	return ret;
}

static int read_exact(FILE *f, void *p, size_t len)
{
	return fread(p, 1, len, f) == len ? 0 : -EBADMSG;
}

int dfg_gs_import_bcsr(struct dfg_gs_graph *g, FILE *f, const char *name,
		       unsigned int id_bytes, uint32_t flags,
		       struct dfg_gs_err *err)
{
	uint64_t hdr[2], n, m, *rp = NULL, *src = NULL, *dst = NULL, i, r;
	struct stat st;
	int ret;

	memset(g, 0, sizeof(*g));
	if (id_bytes != 4 && id_bytes != 8)
		return dfg_gs_fail(err, -EINVAL, "id width %u: 4 or 8",
				   id_bytes);
	if (read_exact(f, hdr, sizeof(hdr)))
		return dfg_gs_fail(err, -EBADMSG,
				   "%s: truncated: no 16-byte header", name);
	n = hdr[0];
	m = hdr[1];
	if (n >= 1ULL << 40 || m >= 1ULL << 40)
		return dfg_gs_fail(err, -EBADMSG,
				   "%s: %llu nodes, %llu arcs: not a binary CSR (or above 2^40)",
				   name, (unsigned long long)n,
				   (unsigned long long)m);
	/* a header promising more than the file holds: say so, not ENOMEM */
	if (!fstat(fileno(f), &st) && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size < 16 + (n + 1) * 8 + m * id_bytes)
		return dfg_gs_fail(err, -EBADMSG,
				   "%s: truncated: %llu nodes and %llu arcs need %llu bytes, the file has %lld",
				   name, (unsigned long long)n,
				   (unsigned long long)m,
				   (unsigned long long)(16 + (n + 1) * 8 +
							m * id_bytes),
				   (long long)st.st_size);
	rp = malloc((n + 1) * sizeof(*rp));
	src = malloc((m ? m : 1) * sizeof(*src));
	dst = malloc((m ? m : 1) * sizeof(*dst));
	if (!rp || !src || !dst) {
		ret = dfg_gs_fail(err, -ENOMEM, "%s: out of memory", name);
		goto out;
	}
	if (read_exact(f, rp, (n + 1) * sizeof(*rp))) {
		ret = dfg_gs_fail(err, -EBADMSG, "%s: truncated in the offsets",
				  name);
		goto out;
	}
	if (rp[0] || rp[n] != m) {
		ret = dfg_gs_fail(err, -EBADMSG,
				  "%s: offsets run from %llu to %llu, expected 0 to %llu",
				  name, (unsigned long long)rp[0],
				  (unsigned long long)rp[n],
				  (unsigned long long)m);
		goto out;
	}
	for (r = 0; r < n; r++) {
		if (rp[r + 1] < rp[r]) {
			ret = dfg_gs_fail(err, -EBADMSG,
					  "%s: offset %llu decreases", name,
					  (unsigned long long)r + 1);
			goto out;
		}
		for (i = rp[r]; i < rp[r + 1]; i++)
			src[i] = r;
	}
	for (i = 0; i < m; i++) {
		uint32_t v32;

		if (id_bytes == 4 ? read_exact(f, &v32, 4) :
		    read_exact(f, &dst[i], 8)) {
			ret = dfg_gs_fail(err, -EBADMSG,
					  "%s: truncated at neighbour %llu of %llu",
					  name, (unsigned long long)i,
					  (unsigned long long)m);
			goto out;
		}
		if (id_bytes == 4)
			dst[i] = v32;
		if (dst[i] >= n) {
			ret = dfg_gs_fail(err, -EBADMSG,
					  "%s: neighbour %llu is node %llu of %llu",
					  name, (unsigned long long)i,
					  (unsigned long long)dst[i],
					  (unsigned long long)n);
			goto out;
		}
	}
	if (fgetc(f) != EOF) {
		ret = dfg_gs_fail(err, -EBADMSG,
				  "%s: trailing data after %llu arcs", name,
				  (unsigned long long)m);
		goto out;
	}
	ret = dfg_gs_build_csr(g, n, src, dst, m, flags, err);
out:
	free(rp);
	free(src);
	free(dst);
	return ret;
}
