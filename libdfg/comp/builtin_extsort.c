// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * sort_external: sort's output within a memory budget. Records gather in
 * memory as sort's do; past the budget they are sorted and written out
 * as a run to an unlinked temporary file, and at the logical break the
 * runs and what is left in memory are merged. Equal keys leave in arrival
 * order, as from sort: each run is sorted stably, and the merge prefers
 * the earlier run.
 *
 * Its checkpoint is sort's record store (every record, the runs' first
 * in run order, then memory's), so the two types take over each other's
 * state when a rule substitutes one for the other, and a hash flow into
 * either re-partitions it record by record. Spilled runs go into the
 * checkpoint too: a checkpoint holds the whole state, as sort's does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comp_impl.h"
#include "param.h"

static const struct dfg_param_decl ext_decls[] = {
	COMP_DECL_KEY("key", "$0", "what to sort by"),
	COMP_DECL_SEP("field separator, blanks by default"),
	COMP_DECL_NUMERIC,
	COMP_DECL_ORDER,
	{ .name = "memory", .kind = DFG_PARAM_UINT, .min = 1,
	  .max = 1LL << 48, .def = "67108864",
	  .help = "bytes of records held in memory before a run is written" },
	{ .name = "tmpdir", .kind = DFG_PARAM_PATH,
	  .help = "directory of the runs, default $TMPDIR or /tmp" },
	{ NULL },
};

/*
 * struct ext_run - one sorted run on disk
 * @f:		the unlinked file; rewound for the merge
 * @nr:		its records
 * @left:	records not yet read by the merge
 * @cur:	the merge's current record (its bytes in @buf)
 */
struct ext_run {
	FILE			*f;
	__u64			nr, left;
	struct comp_rec		cur;
	struct comp_buf		buf;
};

/*
 * struct ext_sorter - sort's state, plus the runs
 * @bytes:	what the records in memory take (data, key, bookkeeping)
 * @budget:	the "memory" parameter
 * @heap:	the merge's runs, by current record (key, then run)
 */
struct ext_sorter {
	struct comp_key		key;
	struct comp_store	recs;
	size_t			bytes, budget;
	char			*tmpdir;
	struct ext_run		*runs;
	unsigned int		nruns;
	unsigned int		*heap;
};

static void ext_drop_runs(struct ext_sorter *s)
{
	unsigned int i;

	for (i = 0; i < s->nruns; i++) {
		fclose(s->runs[i].f);
		free(s->runs[i].buf.p);
	}
	free(s->runs);
	free(s->heap);
	s->runs = NULL;
	s->heap = NULL;
	s->nruns = 0;
}

static void ext_fini(struct dfg_comp *c)
{
	struct ext_sorter *s = dfg_comp_state(c);

	ext_drop_runs(s);
	comp_key_fini(&s->key);
	comp_store_fini(&s->recs);
	free(s->tmpdir);
	free(s);
}

static int ext_init(struct dfg_comp *c, void **state)
{
	const char *dir = dfg_comp_param(c, "tmpdir", NULL);
	struct ext_sorter *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	*state = s;
	s->budget = strtoull(dfg_comp_param(c, "memory", "67108864"), NULL, 0);
	if (!dir)
		dir = getenv("TMPDIR");
	s->tmpdir = strdup(dir && *dir ? dir : "/tmp");
	ret = s->tmpdir ? 0 : dfg_comp_error(c, -ENOMEM, "out of memory");
	if (!ret)
		ret = comp_key_init(c, &s->key, "key", "$0");
	if (ret)
		ext_fini(c);
	return ret;
}

static int put_u64(FILE *f, __u64 v)
{
	return fwrite(&v, sizeof(v), 1, f) == 1 ? 0 : -EIO;
}

/* Writes what is in memory, sorted, as a new run; memory is then empty. */
static int ext_spill(struct dfg_comp *c, struct ext_sorter *s)
{
	char path[4096];
	struct ext_run *runs, *run;
	size_t i, *idx;
	int fd, ret = 0;

	if (!s->recs.nr)
		return 0;
	runs = realloc(s->runs, (s->nruns + 1) * sizeof(*runs));
	if (!runs)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	s->runs = runs;
	if ((size_t)snprintf(path, sizeof(path), "%s/dfg-sort-XXXXXX",
			     s->tmpdir) >= sizeof(path))
		return dfg_comp_error(c, -ENAMETOOLONG, "tmpdir %s: too long",
				      s->tmpdir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return dfg_comp_error(c, -errno, "tmpdir %s: %s", s->tmpdir,
				      strerror(errno));
	unlink(path);	/* gone with the process, however it ends */
	run = &s->runs[s->nruns];
	memset(run, 0, sizeof(*run));
	run->f = fdopen(fd, "w+");
	if (!run->f) {
		close(fd);
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	}
	s->nruns++;
	idx = comp_sort_index(&s->key, &s->recs);
	if (!idx)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	for (i = 0; !ret && i < s->recs.nr; i++) {
		const struct comp_rec *r = &s->recs.recs[idx[i]];

		ret = put_u64(run->f, r->len) ?: put_u64(run->f, r->ikey) ?:
		      put_u64(run->f, r->sklen);
		if (!ret && ((r->len && fwrite(r->data, r->len, 1, run->f) != 1) ||
			     (r->sklen && fwrite(r->skey, r->sklen, 1, run->f) != 1)))
			ret = -EIO;
	}
	run->nr = s->recs.nr;
	free(idx);
	if (!ret && fflush(run->f))
		ret = -EIO;
	if (ret)
		return dfg_comp_error(c, -EIO, "writing a run to %s: %s",
				      s->tmpdir, strerror(errno));
	comp_store_clear(&s->recs);
	s->bytes = 0;
	return 0;
}

/* Adds a record to memory, spilling first when it would pass the budget. */
static int ext_add(struct dfg_comp *c, struct ext_sorter *s, const void *data,
		   size_t len, const struct dfg_expr_val *v, long long ikey,
		   bool set_ikey)
{
	size_t cost = len + (v->is_int ? 0 : v->len) + sizeof(struct comp_rec);
	struct comp_rec *r;
	int ret;

	if (s->bytes && s->bytes + cost > s->budget) {
		ret = ext_spill(c, s);
		if (ret)
			return ret;
	}
	r = comp_store_add(&s->recs, data, len, v);
	if (!r)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	if (set_ikey)
		r->ikey = ikey;
	s->bytes += cost;
	return 0;
}

static int ext_compute(struct dfg_comp *c, unsigned int port,
		       const struct dfg_elem *e)
{
	struct ext_sorter *s = dfg_comp_state(c);
	struct dfg_expr_val v;
	int ret;

	(void)port;
	ret = comp_key_eval(c, &s->key, e, &v);
	return ret ? ret : ext_add(c, s, e->data, e->len, &v, 0, false);
}

static int get_u64(FILE *f, __u64 *v)
{
	return fread(v, sizeof(*v), 1, f) == 1 ? 0 : -EIO;
}

/* The next record of @run into its @cur. */
static int ext_read(struct dfg_comp *c, struct ext_run *run)
{
	__u64 len, ikey, klen;
	int ret;

	ret = get_u64(run->f, &len) ?: get_u64(run->f, &ikey) ?:
	      get_u64(run->f, &klen);
	if (!ret && len + klen < len)
		ret = -EIO;
	if (!ret && run->buf.cap < len + klen + 1) {
		char *p = realloc(run->buf.p, len + klen + 1);

		if (!p)
			return dfg_comp_error(c, -ENOMEM, "out of memory");
		run->buf.p = p;
		run->buf.cap = len + klen + 1;
	}
	if (!ret && len + klen &&
	    fread(run->buf.p, len + klen, 1, run->f) != 1)
		ret = -EIO;
	if (ret)
		return dfg_comp_error(c, -EIO, "reading back a run: %s",
				      ferror(run->f) ? strerror(errno) :
				      "short file");
	run->cur = (struct comp_rec){
		.data = run->buf.p, .len = len, .ikey = (long long)ikey,
		.skey = run->buf.p + len, .sklen = klen,
	};
	run->left--;
	return 0;
}

/* Does run @a's current record go before run @b's? */
static bool ext_before(const struct ext_sorter *s, unsigned int a,
		       unsigned int b)
{
	struct dfg_expr_val x, y;
	int r;

	comp_rec_key(&s->runs[a].cur, s->key.numeric, &x);
	comp_rec_key(&s->runs[b].cur, s->key.numeric, &y);
	r = comp_key_cmp(&s->key, &x, &y);
	return r ? r < 0 : a < b;	/* equal keys: the earlier run */
}

static void ext_sift(struct ext_sorter *s, unsigned int n, unsigned int i)
{
	unsigned int *h = s->heap;

	for (;;) {
		unsigned int m = i, l = 2 * i + 1, r = l + 1, t;

		if (l < n && ext_before(s, h[l], h[m]))
			m = l;
		if (r < n && ext_before(s, h[r], h[m]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Emits every record in key order (runs and memory), then forgets them. */
static int ext_flush(struct dfg_comp *c)
{
	struct ext_sorter *s = dfg_comp_state(c);
	unsigned int i, n = 0;
	int ret;

	if (!s->nruns) {	/* it all fit: sort's way */
		s->bytes = 0;
		return comp_emit_sorted(c, &s->key, &s->recs);
	}
	/* memory becomes the last run: it arrived last */
	ret = ext_spill(c, s);
	if (!ret) {
		s->heap = malloc(s->nruns * sizeof(*s->heap));
		if (!s->heap)
			ret = dfg_comp_error(c, -ENOMEM, "out of memory");
	}
	for (i = 0; !ret && i < s->nruns; i++) {
		struct ext_run *run = &s->runs[i];

		run->left = run->nr;
		if (fseeko(run->f, 0, SEEK_SET))
			ret = dfg_comp_error(c, -EIO, "rewinding a run: %s",
					     strerror(errno));
		else if (run->left && !(ret = ext_read(c, run)))
			s->heap[n++] = i;
	}
	for (i = n / 2; !ret && i-- > 0;)
		ext_sift(s, n, i);
	while (!ret && n) {
		struct ext_run *run = &s->runs[s->heap[0]];

		ret = dfg_emit(c, 0, &(struct dfg_elem){ run->cur.data,
							 run->cur.len, 0 });
		if (ret)
			break;
		if (run->left)
			ret = ext_read(c, run);
		else
			s->heap[0] = s->heap[--n];
		if (!ret)
			ext_sift(s, n, 0);
	}
	ext_drop_runs(s);
	return ret;
}

static int ext_blip(struct dfg_comp *c, const struct dfg_blip *b)
{
	return b->kind == DFG_BLIP_USER ? ext_flush(c) : 0;
}

/* sort's record store: the count, then the runs' records, then memory's. */
static int ext_checkpoint(struct dfg_comp *c, struct dfg_ckpt *w)
{
	struct ext_sorter *s = dfg_comp_state(c);
	__u64 nr = s->recs.nr - s->recs.head;
	unsigned int i;
	__u64 k;
	int ret;

	for (i = 0; i < s->nruns; i++)
		nr += s->runs[i].nr;
	ret = dfg_ckpt_put_u64(w, nr);
	for (i = 0; !ret && i < s->nruns; i++) {
		struct ext_run *run = &s->runs[i];

		run->left = run->nr;
		if (fseeko(run->f, 0, SEEK_SET))
			return dfg_comp_error(c, -EIO, "rewinding a run: %s",
					      strerror(errno));
		for (k = 0; !ret && k < run->nr; k++) {
			ret = ext_read(c, run) ?: comp_rec_save(&run->cur, w);
		}
		/* runs are appended to only before the merge */
		if (!ret && fseeko(run->f, 0, SEEK_END))
			ret = dfg_comp_error(c, -EIO, "seeking a run: %s",
					     strerror(errno));
	}
	if (ret)
		return ret;
	/* memory's records, without their count (given above) */
	for (k = s->recs.head; !ret && k < s->recs.nr; k++)
		ret = comp_rec_save(&s->recs.recs[k], w);
	return ret;
}

/* A record store (sort's or ours): into memory, spilling as it fills. */
static int ext_restore(struct dfg_comp *c, struct dfg_ckpt *r)
{
	struct ext_sorter *s = dfg_comp_state(c);
	struct comp_rec rec;
	__u64 nr, i;
	int ret;

	ret = dfg_ckpt_get_u64(r, &nr);
	for (i = 0; !ret && i < nr; i++) {
		struct dfg_expr_val v = { 0 };

		ret = comp_rec_load(r, &rec);
		if (ret)
			break;
		v.s = rec.skey;
		v.len = rec.sklen;
		ret = ext_add(c, s, rec.data, rec.len, &v, rec.ikey, true);
	}
	return ret;
}

const struct dfg_comp_type comp_sort_external = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "sort_external",
	.summary = "sort, spilling sorted runs to files past a memory budget",
	.flags = DFG_COMP_FOLDABLE | DFG_COMP_PULL,
	.min_in = 1, .max_in = 1,
	.min_out = 1, .max_out = 1,
	.param_decls = ext_decls,
	.init = ext_init,
	.fini = ext_fini,
	.compute = ext_compute,
	.shutdown = ext_flush,
	.process_blip = ext_blip,
	.checkpoint = ext_checkpoint,
	.restore = ext_restore,
};
