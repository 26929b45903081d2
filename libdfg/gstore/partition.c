// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * Partitioning (patent 004, para. 53-55 and 69): METIS's k-way multilevel
 * partitioner assigns nodes; hub nodes are the endpoints of cut edges;
 * each partition file holds its own subgraph (renumbered so that it owns
 * a contiguous id range) and a replica of the other partitions' hubs with
 * their neighbour lists and attributes. Under a budget the hubs are taken
 * greedily in order of an estimate of how often sampling from this
 * partition reaches them (dfg_gs_hub_scores), or of that per byte.
 */
#include <errno.h>
#include <metis.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gstore.h"

static int fail_nomem(struct dfg_gs_err *err)
{
	return dfg_gs_fail(err, -ENOMEM, "out of memory while partitioning");
}

int dfg_gs_assign(const struct dfg_gs_graph *g, const struct dfg_gs_part_opts *o,
		  uint32_t *part_out, struct dfg_gs_err *err)
{
	struct dfg_gs_graph sym = { 0 };
	idx_t nv, ncon = 1, np, cut, opts[METIS_NOPTIONS], *xadj, *adj, *pt;
	uint64_t *src = NULL, i, r;
	int ret, mret;

	if (o->k < 2 || o->k > 1024)
		return dfg_gs_fail(err, -EINVAL, "-k %u: 2 to 1024 partitions",
				   o->k);
	if (g->n < o->k)
		return dfg_gs_fail(err, -EINVAL, "-k %u: more partitions than the %llu nodes",
				   o->k, (unsigned long long)g->n);
	/* METIS wants a symmetric graph without self loops, in idx_t */
	if (!(g->flags & DFG_GS_F_UNDIRECTED)) {
		src = malloc((g->m ? g->m : 1) * sizeof(*src));
		if (!src)
			return fail_nomem(err);
		for (r = 0; r < g->n; r++)
			for (i = g->row_ptr[r]; i < g->row_ptr[r + 1]; i++)
				src[i] = r;
		ret = dfg_gs_build_csr(&sym, g->n, src, g->col, g->m,
				       DFG_GS_F_UNDIRECTED, err);
		free(src);
		if (ret)
			return ret;
		g = &sym;
	}
	if (g->n > INT32_MAX || g->m > INT32_MAX) {
		dfg_gs_graph_free(&sym);
		return dfg_gs_fail(err, -EOVERFLOW,
				   "%llu nodes, %llu arcs: above METIS's 32-bit limit",
				   (unsigned long long)g->n,
				   (unsigned long long)g->m);
	}
	xadj = malloc((g->n + 1) * sizeof(*xadj));
	adj = malloc((g->m ? g->m : 1) * sizeof(*adj));
	pt = malloc(g->n * sizeof(*pt));
	if (!xadj || !adj || !pt) {
		ret = fail_nomem(err);
		goto out;
	}
	for (i = 0; i <= g->n; i++)
		xadj[i] = (idx_t)g->row_ptr[i];
	for (i = 0; i < g->m; i++)
		adj[i] = (idx_t)g->col[i];
	METIS_SetDefaultOptions(opts);
	opts[METIS_OPTION_SEED] = (idx_t)(o->seed & INT32_MAX);
	opts[METIS_OPTION_NUMBERING] = 0;
	nv = (idx_t)g->n;
	np = (idx_t)o->k;
	if (o->progress)
		o->progress(o->parg, "metis", 0, 1);
	mret = METIS_PartGraphKway(&nv, &ncon, xadj, adj, NULL, NULL, NULL, &np,
				   NULL, NULL, opts, &cut, pt);
	if (mret != METIS_OK) {
		ret = dfg_gs_fail(err, mret == METIS_ERROR_MEMORY ? -ENOMEM : -EIO,
				  "METIS_PartGraphKway failed (%d)", mret);
		goto out;
	}
	if (o->progress)
		o->progress(o->parg, "metis", 1, 1);
	for (i = 0; i < g->n; i++)
		part_out[i] = (uint32_t)pt[i];
	ret = 0;
out:
	free(xadj);
	free(adj);
	free(pt);
	dfg_gs_graph_free(&sym);
	return ret;
}

int dfg_gs_hub_scores(const struct dfg_gs_graph *g, const uint32_t *part,
		      uint32_t p, double *score)
{
	uint64_t nl = 0, u, x, j;
	double *q1;

	q1 = calloc(g->n ? g->n : 1, sizeof(*q1));
	if (!q1)
		return -ENOMEM;
	for (u = 0; u < g->n; u++)
		nl += part[u] == p;
	/* step 1: root uniform over p, neighbour uniform over its list */
	for (u = 0; u < g->n; u++) {
		uint64_t d = g->row_ptr[u + 1] - g->row_ptr[u];

		if (part[u] != p || !d)
			continue;
		for (j = g->row_ptr[u]; j < g->row_ptr[u + 1]; j++)
			q1[g->col[j]] += 1.0 / ((double)nl * (double)d);
	}
	for (u = 0; u < g->n; u++)
		score[u] = part[u] == p ? 0 : q1[u];
	/* step 2: from wherever step 1 went */
	for (x = 0; x < g->n; x++) {
		uint64_t d = g->row_ptr[x + 1] - g->row_ptr[x];

		if (q1[x] == 0 || !d)
			continue;
		for (j = g->row_ptr[x]; j < g->row_ptr[x + 1]; j++)
			if (part[g->col[j]] != p)
				score[g->col[j]] += q1[x] / (double)d;
	}
	free(q1);
	return 0;
}

/* What partitioning needs of the whole graph, built once. */
struct pctx {
	const struct dfg_gs_graph	*g;
	const uint32_t			*part;
	uint32_t			k;
	uint64_t			*base;		/* k + 1 */
	uint64_t			*new_id;	/* old -> new */
	uint64_t			*old_id;	/* new -> old */
	uint8_t				*hub;		/* old id -> 0/1 */
	uint64_t			hubs_in[1024];	/* hubs per part */
	size_t				row;		/* feature row bytes */
	double				*score;
};

static uint64_t deg(const struct dfg_gs_graph *g, uint64_t v)
{
	return g->row_ptr[v + 1] - g->row_ptr[v];
}

/* Bytes a node takes in the replica (id, row pointer, list, attrs). */
static uint64_t rep_entry_bytes(const struct pctx *c, uint64_t v)
{
	return 16 + 8 * deg(c->g, v) + c->row + (c->g->label ? 4 : 0);
}

/* Highest key first; ties by new id, so the order is total. */
static int cmp_key(const void *a, const void *b, void *arg)
{
	const struct pctx *c = arg;
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	if (c->score[x] != c->score[y])
		return c->score[x] > c->score[y] ? -1 : 1;
	return dfg_gs_cmp_u64(&c->new_id[x], &c->new_id[y]);
}

/*
 * The neighbour lists of old ids @nodes[0..cnt) in new ids, sorted per
 * row, into fresh *@rp_out (cnt + 1) and *@col_out; with their feature
 * rows and labels when @feat/@label are not NULL.
 */
static int gather(const struct pctx *c, const uint64_t *nodes, uint64_t cnt,
		  uint64_t **rp_out, uint64_t **col_out, void *feat,
		  uint32_t *label)
{
	const struct dfg_gs_graph *g = c->g;
	uint64_t *rp, *col, i, j, at = 0, arcs = 0;

	for (i = 0; i < cnt; i++)
		arcs += deg(g, nodes[i]);
	rp = malloc((cnt + 1) * sizeof(*rp));
	col = malloc((arcs ? arcs : 1) * sizeof(*col));
	if (!rp || !col) {
		free(rp);
		free(col);
		return -ENOMEM;
	}
	for (i = 0; i < cnt; i++) {
		uint64_t v = nodes[i];

		rp[i] = at;
		for (j = g->row_ptr[v]; j < g->row_ptr[v + 1]; j++)
			col[at++] = c->new_id[g->col[j]];
		qsort(col + rp[i], at - rp[i], sizeof(*col), dfg_gs_cmp_u64);
		if (feat && c->row)
			memcpy((char *)feat + i * c->row,
			       (const char *)g->feat + v * c->row, c->row);
		if (label && g->label)
			label[i] = g->label[v];
	}
	rp[cnt] = at;
	*rp_out = rp;
	*col_out = col;
	return 0;
}

/* One partition's halo: remote out-neighbours of its nodes. */
static void halo(const struct pctx *c, uint32_t p, uint32_t *stamp,
		 struct dfg_gs_part_stat *st)
{
	const struct dfg_gs_graph *g = c->g;
	uint64_t nw, u, j;

	for (nw = c->base[p]; nw < c->base[p + 1]; nw++) {
		u = c->old_id[nw];
		for (j = g->row_ptr[u]; j < g->row_ptr[u + 1]; j++) {
			uint64_t v = g->col[j];

			if (c->part[v] == p || stamp[v] == p + 1)
				continue;
			stamp[v] = p + 1;
			st->halo_nodes++;
			st->halo_bytes += rep_entry_bytes(c, v);
		}
	}
}

/*
 * The replica of partition @p: other partitions' hubs, taken in order of
 * decreasing sampling score, or score per byte (@order), ties by smaller
 * id, while they fit in @limit bytes; old ids into *@sel (sorted by new
 * id), their count into *@cnt.
 */
static int choose_replica(struct pctx *c, uint32_t p, uint64_t limit,
			  int order, uint64_t **sel, uint64_t *cnt,
			  struct dfg_gs_part_stat *st)
{
	const struct dfg_gs_graph *g = c->g;
	uint64_t *cand, nc = 0, v, i, kept, used = 0;
	int ret;

	cand = malloc((g->n ? g->n : 1) * sizeof(*cand));
	if (!cand)
		return -ENOMEM;
	for (v = 0; v < g->n; v++)
		if (c->hub[v] && c->part[v] != p)
			cand[nc++] = v;
	st->rep_candidates = nc;
	ret = dfg_gs_hub_scores(g, c->part, p, c->score);
	if (ret) {
		free(cand);
		return ret;
	}
	if (order == DFG_GS_ORDER_DENSITY)	/* the key: score per byte */
		for (i = 0; i < nc; i++)
			c->score[cand[i]] /= (double)rep_entry_bytes(c, cand[i]);
	qsort_r(cand, nc, sizeof(*cand), cmp_key, c);
	/*
	 * Greedy in that order: a hub too big for what is left is skipped,
	 * not the end (one high-degree hub would otherwise stop the fill).
	 */
	for (i = 0, kept = 0; i < nc; i++) {
		uint64_t b = rep_entry_bytes(c, cand[i]);

		if (b > limit - used)
			continue;
		used += b;
		cand[kept++] = c->new_id[cand[i]];
	}
	*cnt = kept;
	/* back to id order, for binary search in the file */
	qsort(cand, kept, sizeof(*cand), dfg_gs_cmp_u64);
	for (v = 0; v < kept; v++)
		cand[v] = c->old_id[cand[v]];
	*sel = cand;
	return 0;
}

static int write_one(struct pctx *c, const struct dfg_gs_part_opts *o,
		     uint32_t p, uint64_t part_set_id, uint64_t cut_arcs,
		     uint64_t hubs, const char *prefix, uint32_t *stamp,
		     struct dfg_gs_part_stat *st, struct dfg_gs_err *err)
{
	const struct dfg_gs_graph *g = c->g;
	uint64_t nl = c->base[p + 1] - c->base[p], i, limit, nrep = 0;
	uint64_t *rp = NULL, *col = NULL, *orig = NULL, *mask = NULL;
	uint64_t *rep = NULL, *rrp = NULL, *rcol = NULL, *rid = NULL;
	uint32_t *label = NULL, *rlabel = NULL;
	void *feat = NULL, *rfeat = NULL;
	const void *data[DFG_GS_SEC_COUNT] = { 0 };
	struct dfg_gs_hdr h = { 0 };
	bool lab = g->label;
	char path[4096];
	int ret = -ENOMEM;

	orig = malloc((nl ? nl : 1) * sizeof(*orig));
	mask = calloc(nl / 64 + 1, sizeof(*mask));
	feat = malloc(nl * c->row + 1);
	label = malloc((nl ? nl : 1) * sizeof(*label));
	if (!orig || !mask || !feat || !label)
		goto nomem;
	for (i = 0; i < nl; i++) {
		uint64_t v = c->old_id[c->base[p] + i];

		orig[i] = g->orig_id ? g->orig_id[v] : v;
		if (c->hub[v])
			mask[i / 64] |= 1ULL << (i % 64);
	}
	if (gather(c, c->old_id + c->base[p], nl, &rp, &col, feat, label))
		goto nomem;
	st->nodes = nl;
	st->arcs = rp[nl];
	st->hubs = c->hubs_in[p];
	st->own_bytes = (nl + 1) * 8 + rp[nl] * 8 + nl * c->row +
			(lab ? nl * 4 : 0);
	halo(c, p, stamp, st);

	switch (o->budget.kind) {
	case DFG_GS_BUDGET_BYTES:
		limit = o->budget.value;
		break;
	case DFG_GS_BUDGET_PCT:
		limit = (uint64_t)((double)st->own_bytes *
				   (double)o->budget.value / 100.0);
		break;
	default:
		limit = UINT64_MAX;
	}
	if (choose_replica(c, p, limit, o->budget.order, &rep, &nrep, st))
		goto nomem;
	rid = malloc((nrep ? nrep : 1) * sizeof(*rid));
	rfeat = malloc(nrep * c->row + 1);
	rlabel = malloc((nrep ? nrep : 1) * sizeof(*rlabel));
	if (!rid || !rfeat || !rlabel ||
	    gather(c, rep, nrep, &rrp, &rcol, rfeat, rlabel))
		goto nomem;
	for (i = 0; i < nrep; i++)
		rid[i] = c->new_id[rep[i]];
	st->rep_count = nrep;

	h.flags = (g->flags & DFG_GS_F_UNDIRECTED) | DFG_GS_F_PARTITION |
		  (nrep < st->rep_candidates ? DFG_GS_F_REP_PARTIAL : 0);
	h.graph_id = g->graph_id ? g->graph_id : dfg_gs_graph_id(g);
	h.part_set_id = part_set_id;
	h.part_index = p;
	h.part_count = c->k;
	h.nodes_global = g->n;
	h.edges_global = g->m;
	h.nodes_local = nl;
	h.edges_local = rp[nl];
	h.node_base = c->base[p];
	h.feat_dim = g->feat_dim;
	h.feat_type = g->feat_type;
	h.label_classes = g->classes;
	h.rep_count = nrep;
	h.rep_edges = nrep ? rrp[nrep] : 0;
	h.rep_candidates = st->rep_candidates;
	h.cut_arcs = cut_arcs;
	h.hubs_global = hubs;
	h.hubs_local = st->hubs;
	h.halo_nodes = st->halo_nodes;
	h.halo_bytes = st->halo_bytes;
	h.sec[DFG_GS_SEC_ROW_PTR].len = (nl + 1) * 8;
	data[DFG_GS_SEC_ROW_PTR] = rp;
	h.sec[DFG_GS_SEC_COL_IDX].len = rp[nl] * 8;
	data[DFG_GS_SEC_COL_IDX] = col;
	h.sec[DFG_GS_SEC_ORIG_ID].len = nl * 8;
	data[DFG_GS_SEC_ORIG_ID] = orig;
	h.sec[DFG_GS_SEC_FEAT].len = nl * c->row;
	data[DFG_GS_SEC_FEAT] = feat;
	h.sec[DFG_GS_SEC_LABEL].len = lab ? nl * 4 : 0;
	data[DFG_GS_SEC_LABEL] = label;
	h.sec[DFG_GS_SEC_PART_BASE].len = ((uint64_t)c->k + 1) * 8;
	data[DFG_GS_SEC_PART_BASE] = c->base;
	h.sec[DFG_GS_SEC_HUB_MASK].len = (nl / 64 + !!(nl % 64)) * 8;
	data[DFG_GS_SEC_HUB_MASK] = mask;
	h.sec[DFG_GS_SEC_REP_ID].len = nrep * 8;
	data[DFG_GS_SEC_REP_ID] = rid;
	h.sec[DFG_GS_SEC_REP_ROW_PTR].len = nrep ? (nrep + 1) * 8 : 0;
	data[DFG_GS_SEC_REP_ROW_PTR] = rrp;
	h.sec[DFG_GS_SEC_REP_COL_IDX].len = h.rep_edges * 8;
	data[DFG_GS_SEC_REP_COL_IDX] = rcol;
	h.sec[DFG_GS_SEC_REP_FEAT].len = nrep * c->row;
	data[DFG_GS_SEC_REP_FEAT] = rfeat;
	h.sec[DFG_GS_SEC_REP_LABEL].len = lab ? nrep * 4 : 0;
	data[DFG_GS_SEC_REP_LABEL] = rlabel;
	for (i = DFG_GS_SEC_REP_ID; i <= DFG_GS_SEC_REP_LABEL; i++)
		h.rep_bytes += h.sec[i].len;
	st->rep_bytes = h.rep_bytes;

	if (snprintf(path, sizeof(path), "%s.%u.dfgg", prefix, p) >=
	    (int)sizeof(path)) {
		ret = dfg_gs_fail(err, -ENAMETOOLONG, "%s: name too long",
				  prefix);
		goto out;
	}
	ret = dfg_gs_write_file(path, &h, data, err);
	st->file_bytes = h.file_size;
	goto out;
nomem:
	ret = fail_nomem(err);
out:
	free(rp);
	free(col);
	free(orig);
	free(mask);
	free(feat);
	free(label);
	free(rep);
	free(rid);
	free(rrp);
	free(rcol);
	free(rfeat);
	free(rlabel);
	return ret;
}

int dfg_gs_write_parts(const struct dfg_gs_graph *g, const uint32_t *part,
		       const struct dfg_gs_part_opts *o, const char *prefix,
		       struct dfg_gs_part_result *res, struct dfg_gs_err *err)
{
	struct pctx c = { .g = g, .part = part, .k = o->k };
	uint64_t *cur = NULL, v, j, cut = 0, hubs = 0, gid, set;
	uint32_t *stamp = NULL, p;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	if (o->k < 2 || o->k > 1024)
		return dfg_gs_fail(err, -EINVAL, "-k %u: 2 to 1024 partitions",
				   o->k);
	for (v = 0; v < g->n; v++)
		if (part[v] >= o->k)
			return dfg_gs_fail(err, -EINVAL,
					   "node %llu assigned to partition %u of %u",
					   (unsigned long long)v, part[v], o->k);
	c.row = dfg_gs_feat_row_bytes(g->feat_dim, g->feat_type);
	c.base = calloc(o->k + 1, sizeof(*c.base));
	cur = calloc(o->k, sizeof(*cur));
	c.new_id = malloc((g->n ? g->n : 1) * sizeof(*c.new_id));
	c.old_id = malloc((g->n ? g->n : 1) * sizeof(*c.old_id));
	c.hub = calloc(g->n ? g->n : 1, 1);
	c.score = malloc((g->n ? g->n : 1) * sizeof(*c.score));
	stamp = calloc(g->n ? g->n : 1, sizeof(*stamp));
	res->part = calloc(o->k, sizeof(*res->part));
	if (!c.base || !cur || !c.new_id || !c.old_id || !c.hub || !c.score ||
	    !stamp || !res->part) {
		ret = fail_nomem(err);
		goto out;
	}
	/* renumber: partition p owns [base[p], base[p + 1]), order kept */
	for (v = 0; v < g->n; v++)
		c.base[part[v] + 1]++;
	for (p = 0; p < o->k; p++)
		c.base[p + 1] += c.base[p];
	for (v = 0; v < g->n; v++) {
		c.new_id[v] = c.base[part[v]] + cur[part[v]]++;
		c.old_id[c.new_id[v]] = v;
	}
	/* hubs: both endpoints of every cut arc */
	for (v = 0; v < g->n; v++)
		for (j = g->row_ptr[v]; j < g->row_ptr[v + 1]; j++)
			if (part[g->col[j]] != part[v]) {
				cut++;
				c.hub[v] = 1;
				c.hub[g->col[j]] = 1;
			}
	for (v = 0; v < g->n; v++)
		if (c.hub[v]) {
			hubs++;
			c.hubs_in[part[v]]++;
		}
	gid = g->graph_id ? g->graph_id : dfg_gs_graph_id(g);
	set = dfg_gs_hash(gid, &o->k, sizeof(o->k));
	set = dfg_gs_hash(set, part, g->n * sizeof(*part));
	res->k = o->k;
	res->cut_arcs = cut;
	res->hubs = hubs;
	res->part_set_id = set ? set : 1;
	for (p = 0; p < o->k && !ret; p++) {
		ret = write_one(&c, o, p, res->part_set_id, cut, hubs, prefix,
				stamp, &res->part[p], err);
		if (o->progress)
			o->progress(o->parg, "partitions", p + 1, o->k);
	}
out:
	free(c.base);
	free(cur);
	free(c.new_id);
	free(c.old_id);
	free(c.hub);
	free(c.score);
	free(stamp);
	if (ret) {
		free(res->part);
		res->part = NULL;
	}
	return ret;
}
