// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg run: live re-planning (patent 001), the coordinator's side.
 *
 * Every replan_ms the coordinator shows the replanner a view of the run
 * (per component counters from the shared stats area, the key skew of
 * components fed by hash flows) and checks what it asks for with
 * dfg_plan_edit_apply(). An accepted change waits for checkpoint K, one
 * taken after the decision and by none of the set instances it stops;
 * those are marked to stop right after taking K (stop marks, exec.c), and
 * once every instance took it their processes go (let go when they
 * stopped at their marks, killed otherwise), checkpoint K is carried
 * into the new plan, and the new plan's processes start from it.
 *
 * Checkpoint K is aligned (a set takes it once the blip has come on all
 * its inputs, and elements behind a blip wait), so no element is in
 * flight across it: every element before it is in some component's
 * state or output, every one after it is produced again from state K.
 * Carrying K over is then enough for the new plan to produce exactly
 * the output of a run that never re-planned:
 *
 *   - per component instance, its own checkpoint bytes and root count;
 *     a component keeps them when its degree is unchanged, whatever set
 *     it lands in;
 *   - a component whose degree changes has its keyed state re-partitioned
 *     by the key of the hash flow that feeds it (through straight flows):
 *     state in the record store format of the built-ins (a count, then
 *     per record its bytes, an integer and its key) is split record by
 *     record with the flow's own routing, after checking that the old
 *     placement is that routing's (otherwise the state is not keyed by
 *     the flow's key and the change is refused); a component without
 *     state needs nothing;
 *   - round-robin counters per flow and producer instance;
 *   - a set the change leaves as it was (the region of run_region_compute():
 *     the same members, degree, types and parameters) keeps its files, the
 *     same bytes, hard-linked into the new generation; only the files of
 *     the sets it stops are read and the new sets' written.
 *
 * The executor stops only the sets of the pieces of the graph that hold
 * a new set (the closed region) when the others can run on (a worker
 * pool and a kernel graph per piece): run_replan_path() says so before
 * the switch, which then comes before any process goes and leaves the
 * old generation's directory, where the sets that run on still write
 * their checkpoints, to the executor (it links them into the new one,
 * exec.c). A change refused at the carry once the closed region stopped
 * at K is followed by the carry of the old plan into itself
 * (run_replan_restart(): a generation of the journal's without edits),
 * so that the closed region alone restarts from K.
 *
 * The state directory keeps one directory per generation, "g<N>" (the
 * first plan's checkpoints stay at the top), and the journal "replan":
 * per generation the checkpoint it started from and its edits. A new
 * generation's directory is filled, synced, and only then the journal
 * names it: a kill -9 at any point resumes either on the old plan (from
 * its newest complete checkpoint, K or later) or on the new one (from K
 * or later), and --resume replays the journal's edits on the graph.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dfg/replan.h>

#include "../comp/comp_run.h"
#include "run.h"

#define RUN_REPLAN_MS		100
#define RUN_JOURNAL		"replan"
/*
 * Elements per instance in a window of key skew: a channel's backlog
 * (RUN_CHAN_DEPTH, 1024) a slow instance works off is at most a quarter
 * of its share, so uniform keys never look skewed past 1.2 or so.
 */
#define RUN_SKEW_WINDOW		4096

struct run_replan {
	const struct dfg_replanner *rp;
	unsigned int		plan_flags;
	__u64			period_ns;
	__u64			next_ns;
	unsigned int		generation;	/* of the plan: changes */
	/* of the journal and the directories: changes, and the restarts of
	 * a closed region on the old plan (run_replan_restart()) */
	unsigned int		dirgen;
	bool			ckpt;		/* with checkpoints */
	char			root[4096];	/* state directory */
	char			dir[4096];	/* this generation's */

	/* an accepted change waiting for checkpoint @at_seq */
	struct dfg_flow		*pend_fg;
	struct dfg_plan		*pend_plan;
	char			*pend_text;	/* journal lines */
	__u64			at_seq;
	__u64			stop_ns;	/* sets stopped */
	__u64			mark[RUN_RP_NMARKS];	/* the steps after */
	__u64			from_seq;	/* carried from */
	bool			starting;	/* pause not measured */
	bool			restarting;	/* ... of a restart */

	/* per component, since the start: past generations, and the view */
	unsigned int		ncomps;
	struct dfg_run_view_comp *past;
	struct dfg_run_view_comp *view;
	__u64			*skew_prev;	/* per instance: in_elems at
						 * the window's start, this plan */
	struct run_skew {		/* per component */
		double		last;		/* the last full window's */
		unsigned int	busy;		/* its busiest instance */
		double		shown;		/* in the view */
	}			*skew;

	__u64			replans, refused, pause_ns, pause_max_ns;
	__u64			stopped_clean, stopped_killed;
	bool			log;		/* DFG_REPLAN_LOG */

	/* what the last change affected, of the plan running now */
	struct run_region	region;
	char			*region_text;
	/* how the executor applies the pending change (run_replan_path()):
	 * stopping only the pieces of the graph it affects, or every set */
	bool			partial;
	unsigned int		running_inst;	/* partial: ran on */
	char			path_why[192];	/* full: why */
	char			path_text[256];	/* for applied() */
};

/* ---- The journal: generations and their edits ------------------------ */

/* A field of a journal line: tabs, newlines and backslashes escaped. */
static void put_field(FILE *f, const char *s)
{
	fputc('\t', f);
	if (!s) {
		fputs("\\0", f);
		return;
	}
	for (; *s; s++) {
		if (*s == '\t')
			fputs("\\t", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (*s == '\\')
			fputs("\\\\", f);
		else
			fputc(*s, f);
	}
}

/* Undoes put_field() on a field split off at its tab, in place; NULL
 * for "\0" (absent). */
static int get_field(char **q, char **out)
{
	char *s = strsep(q, "\t"), *w;

	if (!s)
		return -EBADMSG;
	if (!strcmp(s, "\\0")) {
		*out = NULL;
		return 0;
	}
	for (*out = w = s; *s; s++) {
		if (*s == '\\') {
			s++;
			if (*s == 't')
				*w++ = '\t';
			else if (*s == 'n')
				*w++ = '\n';
			else if (*s == '\\')
				*w++ = '\\';
			else
				return -EBADMSG;
			continue;
		}
		*w++ = *s;
	}
	*w = '\0';
	return 0;
}

/* The journal lines of @n edits. */
static char *edits_text(const struct dfg_plan_edit *e, unsigned int n)
{
	char *buf = NULL, num[16];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	unsigned int i;

	if (!f)
		return NULL;
	for (i = 0; i < n; i++) {
		snprintf(num, sizeof(num), "%u", e[i].degree);
		fprintf(f, "edit %d", (int)e[i].op);
		put_field(f, e[i].comp);
		put_field(f, num);
		put_field(f, e[i].type);
		put_field(f, e[i].key);
		put_field(f, e[i].value);
		fputc('\n', f);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int journal_path(char *buf, size_t len, const char *root)
{
	int n = snprintf(buf, len, "%s/%s", root, RUN_JOURNAL);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int gen_dir(char *buf, size_t len, const char *root, unsigned int g)
{
	int n = g ? snprintf(buf, len, "%s/g%u", root, g) :
		    snprintf(buf, len, "%s", root);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * Replays the journal of @root on *@fgp, *@planp: each generation's edits
 * in turn. Sets the generation and its directory, and removes the
 * directories of generations the journal does not name (a re-plan killed
 * before it committed).
 */
static int journal_replay(struct run_replan *x, struct dfg_flow **fgp,
			  struct dfg_plan **planp, char *err, size_t errlen)
{
	struct dfg_plan_edit *e = NULL;
	unsigned int n = 0, cap = 0, gen = 0, line = 0;
	char path[4096], *text = NULL, *p, *nl, why[256];
	unsigned long long seq;
	struct stat st;
	FILE *f;
	long sz;
	int r = journal_path(path, sizeof(path), x->root);

	if (r)
		return r;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	if (fseek(f, 0, SEEK_END) || (sz = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EIO;
	}
	text = malloc((size_t)sz + 2);
	if (!text) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(text, 1, (size_t)sz, f) != (size_t)sz) {
		fclose(f);
		free(text);
		return -EIO;
	}
	fclose(f);
	text[sz] = '\0';
	for (p = text; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl) {
			r = -EBADMSG;
			break;
		}
		*nl = '\0';
		line++;
		if (sscanf(p, "generation %u from %llu", &gen, &seq) == 2) {
			n = 0;
			continue;
		}
		if (!strcmp(p, "end")) {
			struct dfg_flow *nfg;
			struct dfg_plan *nplan;

			r = dfg_plan_edit_apply(*fgp, *planp, x->plan_flags, e,
						n, &nfg, &nplan, why,
						sizeof(why));
			if (r) {
				snprintf(err, errlen,
					 "%s:%u: generation %u no longer applies: %s",
					 path, line, gen,
					 r == -EINVAL ? why : strerror(-r));
				break;
			}
			dfg_plan_free(*planp);
			dfg_flow_free(*fgp);
			*fgp = nfg;
			*planp = nplan;
			/* no edits: a closed region restarted on the
			 * plan it ran (run_replan_restart()) */
			x->generation += n != 0;
			x->dirgen = gen;
			x->from_seq = seq;
			continue;
		}
		if (!strncmp(p, "edit ", 5)) {
			char *q = p + 5, *deg;
			int op = (int)strtol(q, &q, 10);

			if (*q != '\t') {
				r = -EBADMSG;
				break;
			}
			q++;

			if (n == cap) {
				struct dfg_plan_edit *ne;

				cap = cap ? 2 * cap : 8;
				ne = realloc(e, cap * sizeof(*e));
				if (!ne) {
					r = -ENOMEM;
					break;
				}
				e = ne;
			}
			memset(&e[n], 0, sizeof(e[n]));
			e[n].op = (enum dfg_edit_op)op;
			r = get_field(&q, (char **)&e[n].comp) ?:
			    get_field(&q, &deg) ?:
			    get_field(&q, (char **)&e[n].type) ?:
			    get_field(&q, (char **)&e[n].key) ?:
			    get_field(&q, (char **)&e[n].value);
			if (!r && (!deg || q))
				r = -EBADMSG;
			if (r)
				break;
			e[n++].degree = (unsigned int)strtoul(deg, NULL, 10);
			continue;
		}
		r = -EBADMSG;
		break;
	}
	if (r == -EBADMSG)
		snprintf(err, errlen, "%s:%u: malformed", path, line);
	free(e);
	free(text);
	if (r)
		return r;
	/* generations past the journal's never committed */
	for (gen = x->dirgen + 1;; gen++) {
		if (gen_dir(path, sizeof(path), x->root, gen) ||
		    stat(path, &st))
			break;
		run_state_clear(path);
	}
	return gen_dir(x->dir, sizeof(x->dir), x->root, x->dirgen);
}

/* Appends generation @gen (from @seq, @text's edits) to the journal. */
static int journal_commit(struct run_replan *x, unsigned int gen, __u64 seq,
			  const char *text)
{
	char path[4096], *old = NULL, *buf = NULL;
	size_t len = 0, olen = 0;
	FILE *f;
	int r = journal_path(path, sizeof(path), x->root);

	if (r)
		return r;
	f = fopen(path, "re");
	if (f) {
		FILE *m = open_memstream(&old, &olen);
		char chunk[4096];
		size_t got;

		while (m && (got = fread(chunk, 1, sizeof(chunk), f)))
			fwrite(chunk, 1, got, m);
		fclose(f);
		if (!m || fclose(m)) {
			free(old);
			return -ENOMEM;
		}
	} else if (errno != ENOENT) {
		return -errno;
	}
	f = open_memstream(&buf, &len);
	if (!f) {
		free(old);
		return -ENOMEM;
	}
	if (old)
		fwrite(old, 1, olen, f);
	fprintf(f, "generation %u from %llu\n%send\n", gen,
		(unsigned long long)seq, text);
	free(old);
	if (fclose(f)) {
		free(buf);
		return -ENOMEM;
	}
	r = run_state_write_file(x->root, RUN_JOURNAL, buf, len);
	free(buf);
	return r;
}

/* ---- Carrying checkpoint K into the new plan ------------------------- */

/* One component instance's saved state. */
struct inst_state {
	__u64		root_count;
	const void	*data;
	size_t		len;
	struct dfg_ckpt	*own;	/* re-partitioned: owns @data */
};

struct carry {
	const struct dfg_flow	*ofg, *nfg;
	const struct dfg_plan	*oplan, *nplan;
	/* the change's region, when known: the files of a set it leaves as
	 * it was are linked into the new generation, not read and written */
	const struct run_region	*reg;
	const char		*odir;
	struct inst_state	**st;	/* [comp][old inst], then new */
	__u64			**rr;	/* [flow][producer inst] */
	void			**files;
	unsigned int		nfiles;
};

/* The set of the new plan that set @s of the old one goes on as, or
 * ~0U (the change stops it, or its region is not known). */
static unsigned int carry_kept(const struct carry *c, unsigned int s)
{
	unsigned int t;

	for (t = 0; c->reg && t < c->reg->nsets; t++)
		if (c->reg->kind[t] != RUN_REGION_NEW && c->reg->old[t] == s)
			return t;
	return ~0U;
}

/*
 * Reads the old plan's files of checkpoint @seq into @c: those of the
 * sets the change stops (a set it keeps as it was holds no member of a
 * new set, and its file goes over as it is).
 */
static int carry_read(struct carry *c, const char *dir, __u64 seq)
{
	const struct dfg_plan *plan = c->oplan;
	unsigned int s, i, k, nf = 0;
	int r = 0;

	for (s = 0; s < plan->nsets; s++)
		nf += plan->sets[s].degree;
	c->files = calloc(nf + 1, sizeof(void *));
	if (!c->files)
		return -ENOMEM;
	for (s = 0; s < plan->nsets; s++) {
		const struct dfg_plan_set *ps = &plan->sets[s];

		if (carry_kept(c, s) != ~0U)
			continue;
		for (i = 0; i < ps->degree; i++) {
			struct dfg_ckpt *rd = NULL;
			__u64 v[4];
			size_t len;

			r = run_state_read(dir, s, i, seq,
					   &c->files[c->nfiles], &len);
			if (r)
				return r;
			r = dfg_ckpt_open(c->files[c->nfiles++], len, &rd);
			for (k = 0; !r && k < 4; k++)
				r = dfg_ckpt_get_u64(rd, &v[k]);
			if (!r && (v[0] != RUN_CKPT_MAGIC || v[1] != seq ||
				   v[2] != ps->nmembers ||
				   v[3] != ps->nout_flows))
				r = -EPROTO;
			for (k = 0; !r && k < ps->nout_flows; k++)
				r = dfg_ckpt_get_u64(rd,
					&c->rr[ps->out_flows[k]][i]);
			for (k = 0; !r && k < ps->nmembers; k++) {
				struct inst_state *is =
					&c->st[ps->members[k]][i];

				r = dfg_ckpt_get_u64(rd, &is->root_count) ?:
				    dfg_ckpt_get_bytes(rd, &is->data,
						       &is->len);
			}
			dfg_ckpt_free(rd);
			if (r)
				return r;
		}
	}
	return 0;
}

/* The hash flow whose key partitions @comp's input, through straight
 * flows; NULL if there is none. */
static const struct dfg_flow_edge *keyed_by(const struct dfg_flow *fg,
					    unsigned int comp)
{
	for (;;) {
		const struct dfg_flow_comp *fc = &fg->comps[comp];
		const struct dfg_flow_edge *f;

		if (fc->nin_flows != 1)
			return NULL;
		f = &fg->flows[fc->in_flows[0]];
		if (f->kind == DFG_FLOW_HASH)
			return f;
		if (f->kind != DFG_FLOW_STRAIGHT)
			return NULL;
		comp = f->src;
	}
}

/* One record of a record store, as read. */
struct rec {
	const void	*data, *key;
	size_t		len, klen;
	__u64		ikey;
};

/*
 * What dfg_comp_checkpoint() wrote for a member: its type's and its own
 * name, then the type's bytes (@payload). Empty: a member carried in
 * without state (see below).
 */
static int member_payload(const struct inst_state *is, const void **payload,
			  size_t *plen)
{
	struct dfg_ckpt *rd;
	const void *name;
	size_t nlen;
	__u64 len;
	int r;

	*payload = NULL;
	*plen = 0;
	if (!is->len)
		return 0;
	r = dfg_ckpt_open(is->data, is->len, &rd);
	if (r)
		return r;
	r = dfg_ckpt_get_bytes(rd, &name, &nlen) ?:
	    dfg_ckpt_get_bytes(rd, &name, &nlen) ?:
	    dfg_ckpt_get_u64(rd, &len);
	if (!r && len != is->len - (size_t)((const char *)name + nlen + 8 -
					     (const char *)is->data))
		r = -EBADMSG;
	if (!r) {
		*payload = (const char *)name + nlen + 8;
		*plen = (size_t)len;
	}
	dfg_ckpt_free(rd);
	return r;
}

/* A member's bytes as dfg_comp_checkpoint() would write them. */
static int member_wrap(struct inst_state *is, const char *type,
		       const char *name, struct dfg_ckpt *payload)
{
	const void *p;
	size_t len;
	int r = dfg_ckpt_new(&is->own);

	p = dfg_ckpt_data(payload, &len);
	if (!r)
		r = dfg_ckpt_put_bytes(is->own, type, strlen(type)) ?:
		    dfg_ckpt_put_bytes(is->own, name, strlen(name)) ?:
		    dfg_ckpt_put_u64(is->own, len) ?:
		    dfg_ckpt_put(is->own, p, len);
	if (!r)
		is->data = dfg_ckpt_data(is->own, &is->len);
	return r;
}

/* Parses @p as a record store: every byte, nothing else. */
static int parse_store(const void *p, size_t plen, struct rec **recs,
		       __u64 *nr)
{
	struct dfg_ckpt *rd;
	unsigned char end;
	__u64 i;
	int r = dfg_ckpt_open(p, plen, &rd);

	if (r)
		return r;
	*recs = NULL;
	r = dfg_ckpt_get_u64(rd, nr);
	/* each record takes 24 bytes at least */
	if (!r && *nr > plen / 24)
		r = -EBADMSG;
	if (!r) {
		*recs = calloc(*nr + 1, sizeof(**recs));
		if (!*recs)
			r = -ENOMEM;
	}
	for (i = 0; !r && i < *nr; i++) {
		struct rec *x = &(*recs)[i];

		r = dfg_ckpt_get_bytes(rd, &x->data, &x->len) ?:
		    dfg_ckpt_get_u64(rd, &x->ikey) ?:
		    dfg_ckpt_get_bytes(rd, &x->key, &x->klen);
	}
	if (!r && dfg_ckpt_get(rd, &end, 1) != -EBADMSG)
		r = -EBADMSG;
	dfg_ckpt_free(rd);
	if (r) {
		free(*recs);
		*recs = NULL;
	}
	return r;
}

/*
 * The keyed state of @comp, @on instances (payloads @pl, @plen), over
 * @nn: records routed as the hash flow @f routes the elements they
 * hold. -EINVAL with @why when it is not a record store keyed by @f's
 * key.
 */
static int repartition(struct carry *c, unsigned int comp, unsigned int on,
		       unsigned int nn, const void **pl, const size_t *plen,
		       char *why, size_t whylen)
{
	const struct dfg_flow_comp *fc = &c->nfg->comps[comp];
	const struct dfg_flow_edge *f = keyed_by(c->ofg, comp);
	struct inst_state *nst = c->st[comp] + on;	/* new ones follow */
	struct dfg_ckpt **w = NULL;
	struct rec **recs = NULL;
	__u64 *nr = NULL, *cnt = NULL, k;
	unsigned int i, j;
	int r = 0;

	if (!f) {
		snprintf(why, whylen,
			 "'%s' has state and is not fed by a hash flow: it cannot change degree",
			 fc->name);
		return -EINVAL;
	}
	recs = calloc(on, sizeof(*recs));
	nr = calloc(on, sizeof(*nr));
	cnt = calloc(nn, sizeof(*cnt));
	w = calloc(nn, sizeof(*w));
	if (!recs || !nr || !cnt || !w) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < on; i++) {
		r = parse_store(pl[i], plen[i], &recs[i], &nr[i]);
		if (r == -EBADMSG) {
			snprintf(why, whylen,
				 "the state of '%s' is not keyed records: it cannot change degree",
				 fc->name);
			r = -EINVAL;
		}
		if (r)
			goto out;
		for (k = 0; k < nr[i]; k++) {
			struct dfg_elem e = {
				.data = recs[i][k].data,
				.len = recs[i][k].len,
			};

			if (run_hash_route(f, &e, on) != i) {
				snprintf(why, whylen,
					 "the state of '%s' is not keyed by the key of its hash flow: it cannot change degree",
					 fc->name);
				r = -EINVAL;
				goto out;
			}
			cnt[run_hash_route(f, &e, nn)]++;
		}
	}
	for (j = 0; !r && j < nn; j++) {
		r = dfg_ckpt_new(&w[j]);
		if (!r)
			r = dfg_ckpt_put_u64(w[j], cnt[j]);
	}
	for (i = 0; !r && i < on; i++)
		for (k = 0; !r && k < nr[i]; k++) {
			const struct rec *x = &recs[i][k];
			struct dfg_elem e = { .data = x->data, .len = x->len };

			j = run_hash_route(f, &e, nn);
			r = dfg_ckpt_put_bytes(w[j], x->data, x->len) ?:
			    dfg_ckpt_put_u64(w[j], x->ikey) ?:
			    dfg_ckpt_put_bytes(w[j], x->key, x->klen);
		}
	for (j = 0; !r && j < nn; j++)
		r = member_wrap(&nst[j], fc->type, fc->name, w[j]);
out:
	for (j = 0; w && j < nn; j++)
		dfg_ckpt_free(w[j]);
	for (i = 0; recs && i < on; i++)
		free(recs[i]);
	free(recs);
	free(nr);
	free(cnt);
	free(w);
	return r;
}

/*
 * The new instances of @comp, of another type that takes over its state
 * (comp_types_share_state()) at the same degree: each the old one's
 * bytes, under the new type's name.
 */
static int rewrap(struct carry *c, unsigned int comp, const void **pl,
		  const size_t *plen)
{
	const struct dfg_flow_comp *fc = &c->nfg->comps[comp];
	struct inst_state *nst = c->st[comp] + fc->degree;
	struct dfg_ckpt *w;
	unsigned int i;
	int r = 0;

	for (i = 0; !r && i < fc->degree; i++) {
		if (!plen[i])
			continue;	/* no state: starts empty */
		r = dfg_ckpt_new(&w);
		if (r)
			break;
		r = dfg_ckpt_put(w, pl[i], plen[i]) ?:
		    member_wrap(&nst[i], fc->type, fc->name, w);
		dfg_ckpt_free(w);
	}
	return r;
}

/* Does @comp keep its instances' bytes as they are? */
static bool kept(const struct carry *c, unsigned int comp)
{
	const struct dfg_flow_comp *o = &c->ofg->comps[comp];
	const struct dfg_flow_comp *n = &c->nfg->comps[comp];

	return o->degree == n->degree && !strcmp(o->type, n->type);
}

/*
 * The new instances of a component whose degree or type changes: none
 * with state start as new (empty bytes: no restore); keyed state of the
 * same type is re-partitioned; any other state cannot move.
 */
static int change(struct carry *c, unsigned int comp, char *why,
		  size_t whylen)
{
	const struct dfg_flow_comp *o = &c->ofg->comps[comp];
	const struct dfg_flow_comp *n = &c->nfg->comps[comp];
	const void **pl = calloc(o->degree, sizeof(*pl));
	size_t *plen = calloc(o->degree, sizeof(*plen));
	bool state = false;
	unsigned int i;
	int r = pl && plen ? 0 : -ENOMEM;

	for (i = 0; !r && i < o->degree; i++) {
		r = member_payload(&c->st[comp][i], &pl[i], &plen[i]);
		state |= plen[i] != 0;
	}
	if (r || !state)
		goto out;	/* the new instances' bytes stay empty */
	if (!comp_types_share_state(o->type, n->type)) {
		snprintf(why, whylen,
			 "'%s' has state of type '%s', which type '%s' cannot take over",
			 o->name, o->type, n->type);
		r = -EINVAL;
		goto out;
	}
	if (o->degree == n->degree)	/* only the type: the bytes as they are */
		r = rewrap(c, comp, pl, plen);
	else
		r = repartition(c, comp, o->degree, n->degree, pl, plen, why,
				whylen);
out:
	free(pl);
	free(plen);
	return r;
}

/* The state of component @comp's instance @inst in the new plan. */
static const struct inst_state *new_state(const struct carry *c,
					  unsigned int comp, unsigned int inst)
{
	if (kept(c, comp))
		return &c->st[comp][inst];
	return &c->st[comp][c->ofg->comps[comp].degree + inst];
}

/* Writes the new plan's files of checkpoint @seq into @dir. */
static int carry_write(const struct carry *c, const char *dir, __u64 seq)
{
	const struct dfg_plan *plan = c->nplan;
	unsigned int s, i, k;
	int r = 0;

	for (s = 0; !r && s < plan->nsets; s++) {
		const struct dfg_plan_set *ps = &plan->sets[s];

		/* as it was: the same bytes (members, their states, the
		 * round-robin counters of the same flows) */
		if (c->reg && c->reg->kind[s] != RUN_REGION_NEW) {
			for (i = 0; !r && i < ps->degree; i++)
				r = run_state_link(c->odir, c->reg->old[s], dir,
						   s, i, seq);
			continue;
		}
		for (i = 0; !r && i < ps->degree; i++) {
			struct dfg_ckpt *w;
			const void *data;
			size_t len;

			r = dfg_ckpt_new(&w);
			if (r)
				break;
			r = dfg_ckpt_put_u64(w, RUN_CKPT_MAGIC) ?:
			    dfg_ckpt_put_u64(w, seq) ?:
			    dfg_ckpt_put_u64(w, ps->nmembers) ?:
			    dfg_ckpt_put_u64(w, ps->nout_flows);
			for (k = 0; !r && k < ps->nout_flows; k++) {
				unsigned int fl = ps->out_flows[k];
				unsigned int src = c->ofg->flows[fl].src;
				unsigned int od = c->ofg->comps[src].degree;

				r = dfg_ckpt_put_u64(w, i < od ?
						     c->rr[fl][i] : 0);
			}
			for (k = 0; !r && k < ps->nmembers; k++) {
				const struct inst_state *is =
					new_state(c, ps->members[k], i);

				r = dfg_ckpt_put_u64(w, is->root_count) ?:
				    dfg_ckpt_put_bytes(w, is->data, is->len);
			}
			data = dfg_ckpt_data(w, &len);
			if (!r)
				r = run_state_put(dir, s, i, seq, data, len);
			dfg_ckpt_free(w);
		}
	}
	/* once for every file, before the journal names the directory */
	return r ? r : run_state_sync(dir);
}

static void carry_free(struct carry *c)
{
	unsigned int i, k;

	for (i = 0; c->st && i < c->ofg->ncomps; i++) {
		unsigned int n = c->ofg->comps[i].degree +
				 c->nfg->comps[i].degree;

		for (k = 0; c->st[i] && k < n; k++)
			dfg_ckpt_free(c->st[i][k].own);
		free(c->st[i]);
	}
	for (i = 0; c->rr && i < c->ofg->nflows; i++)
		free(c->rr[i]);
	for (i = 0; c->files && i < c->nfiles; i++)
		free(c->files[i]);
	free(c->st);
	free(c->rr);
	free(c->files);
}

/*
 * Checkpoint @seq of the plan @g ran (files in x->dir) into the pending
 * plan, as the journal's generation x->dirgen + 1 in its own directory.
 */
static int carry(struct run_replan *x, const struct run_graph *g, __u64 seq,
		 char *newdir, size_t dirlen, char *why, size_t whylen)
{
	struct carry c = {
		.ofg = g->fg, .oplan = g->plan,
		.nfg = x->pend_fg, .nplan = x->pend_plan,
		.reg = x->region.nsets == x->pend_plan->nsets ? &x->region :
		       NULL,
		.odir = x->dir,
	};
	struct run_graph ng = { .fg = x->pend_fg, .plan = x->pend_plan };
	unsigned int i;
	__u64 rs;
	char msg[256];
	int r;

	c.st = calloc(c.ofg->ncomps + 1, sizeof(*c.st));
	c.rr = calloc(c.ofg->nflows + 1, sizeof(*c.rr));
	r = c.st && c.rr ? 0 : -ENOMEM;
	for (i = 0; !r && i < c.ofg->ncomps; i++) {
		c.st[i] = calloc(c.ofg->comps[i].degree +
				 c.nfg->comps[i].degree, sizeof(**c.st));
		if (!c.st[i])
			r = -ENOMEM;
	}
	for (i = 0; !r && i < c.ofg->nflows; i++) {
		c.rr[i] = calloc(c.ofg->comps[c.ofg->flows[i].src].degree,
				 sizeof(**c.rr));
		if (!c.rr[i])
			r = -ENOMEM;
	}
	if (!r)
		r = carry_read(&c, x->dir, seq);
	for (i = 0; !r && i < c.ofg->ncomps; i++)
		if (!kept(&c, i))
			r = change(&c, i, why, whylen);
	if (!r)
		r = gen_dir(newdir, dirlen, x->root, x->dirgen + 1);
	if (!r) {
		/* a leftover of a re-plan that never committed goes */
		run_state_clear(newdir);
		r = run_state_prepare(newdir, &ng, false, &rs, msg,
				      sizeof(msg));
	}
	if (!r)
		r = carry_write(&c, newdir, seq);
	carry_free(&c);
	return r;
}

/* ---- The affected region of a change --------------------------------- */

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The same type, degree and parameters (in order) in both graphs. */
static bool same_comp(const struct dfg_flow_comp *a,
		      const struct dfg_flow_comp *b)
{
	unsigned int i;

	if (a->degree != b->degree || a->phase != b->phase ||
	    !same_str(a->type, b->type) || a->nparams != b->nparams)
		return false;
	for (i = 0; i < a->nparams; i++)
		if (!same_str(a->params[i].key, b->params[i].key) ||
		    !same_str(a->params[i].value, b->params[i].value))
			return false;
	return true;
}

/* The set of @op that set @ns of @np is, as it was; ~0U if none. */
static unsigned int old_set(const struct dfg_flow *of,
			    const struct dfg_plan *op,
			    const struct dfg_flow *nf,
			    const struct dfg_plan *np, unsigned int ns)
{
	const struct dfg_plan_set *n = &np->sets[ns], *o;
	unsigned int os, i;

	if (!n->nmembers)
		return ~0U;
	os = op->set_of[n->members[0]];
	o = &op->sets[os];
	if (o->nmembers != n->nmembers || o->degree != n->degree ||
	    o->phase != n->phase)
		return ~0U;
	for (i = 0; i < n->nmembers; i++) {
		unsigned int c = n->members[i];

		if (op->set_of[c] != os ||
		    !same_comp(&of->comps[c], &nf->comps[c]))
			return ~0U;
	}
	return os;
}

/* Union-find over the new plan's sets, for the closed region. */
static unsigned int uf_root(unsigned int *up, unsigned int s)
{
	while (up[s] != s) {
		up[s] = up[up[s]];
		s = up[s];
	}
	return s;
}

int run_region_compute(struct run_region *r, const struct dfg_flow *of,
		       const struct dfg_plan *op, const struct dfg_flow *nf,
		       const struct dfg_plan *np)
{
	unsigned int ns = np->nsets, s, k, f;
	unsigned int *up = NULL;
	bool *cont = NULL, *closed_root = NULL;
	int ret = -ENOMEM;

	memset(r, 0, sizeof(*r));
	if (of->ncomps != nf->ncomps || of->nflows != nf->nflows)
		return -EINVAL;
	r->nsets = ns;
	r->kind = calloc(ns + 1, sizeof(*r->kind));
	r->old = calloc(ns + 1, sizeof(*r->old));
	r->closed = calloc(ns + 1, sizeof(*r->closed));
	up = calloc(ns + 1, sizeof(*up));
	closed_root = calloc(ns + 1, sizeof(*closed_root));
	cont = calloc(op->nsets + 1, sizeof(*cont));
	if (!r->kind || !r->old || !r->closed || !up || !closed_root || !cont)
		goto out;
	for (s = 0; s < ns; s++) {
		r->old[s] = old_set(of, op, nf, np, s);
		r->kind[s] = r->old[s] == ~0U ? RUN_REGION_NEW :
			     RUN_REGION_KEPT;
		up[s] = s;
	}
	/* flows between sets: a kept set next to a new one is rewired;
	 * both ends are one piece of the graph */
	for (f = 0; f < nf->nflows; f++) {
		const struct dfg_flow_edge *e = &nf->flows[f];
		unsigned int a = np->set_of[e->src], b = np->set_of[e->dst];
		bool na = r->kind[a] == RUN_REGION_NEW;
		bool nb = r->kind[b] == RUN_REGION_NEW;

		if (a == b)
			continue;
		if (na != nb)
			r->boundary++;
		if (na && !nb)
			r->kind[b] = RUN_REGION_REWIRED;
		if (nb && !na)
			r->kind[a] = RUN_REGION_REWIRED;
		a = uf_root(up, a);
		b = uf_root(up, b);
		if (a != b)
			up[a] = b;
	}
	for (s = 0; s < ns; s++)
		if (r->kind[s] == RUN_REGION_NEW)
			closed_root[uf_root(up, s)] = true;
	for (s = 0; s < ns; s++) {
		unsigned int d = np->sets[s].degree;

		r->sets[r->kind[s]]++;
		r->inst[r->kind[s]] += d;
		if (r->old[s] != ~0U)
			cont[r->old[s]] = true;
		r->closed[s] = closed_root[uf_root(up, s)];
		if (r->closed[s]) {
			r->closed_sets++;
			r->closed_inst += d;
		}
	}
	for (k = 0; k < op->nsets; k++)
		if (!cont[k]) {
			r->stopped_sets++;
			r->stopped_inst += op->sets[k].degree;
		}
	ret = 0;
out:
	free(up);
	free(closed_root);
	free(cont);
	if (ret)
		run_region_free(r);
	return ret;
}

void run_region_free(struct run_region *r)
{
	free(r->kind);
	free(r->old);
	free(r->closed);
	memset(r, 0, sizeof(*r));
}

/* "affected: s1; at the boundary: s0 s2; untouched: s3; stopped (old
 * plan): s1", one line into @f. */
void run_region_print(const struct run_region *r, const struct dfg_plan *op,
		      const struct dfg_plan *np, FILE *f)
{
	static const char *const what[RUN_REGION_NKINDS] = {
		[RUN_REGION_KEPT] = "untouched",
		[RUN_REGION_REWIRED] = "at the boundary",
		[RUN_REGION_NEW] = "affected",
	};
	unsigned int k, s;
	bool first = true;

	for (k = RUN_REGION_NKINDS; k-- > 0;) {
		if (!r->sets[k])
			continue;
		fprintf(f, "%s%s:", first ? "" : "; ", what[k]);
		first = false;
		for (s = 0; s < r->nsets; s++)
			if (r->kind[s] == k)
				fprintf(f, " %s", np->sets[s].name);
	}
	if (r->stopped_sets) {
		fprintf(f, "%sstopped (old plan):", first ? "" : "; ");
		for (s = 0; s < op->nsets; s++) {
			bool cont = false;
			unsigned int t;

			for (t = 0; t < r->nsets && !cont; t++)
				cont = r->old[t] == s;
			if (!cont)
				fprintf(f, " %s", op->sets[s].name);
		}
	}
	fputc('\n', f);
}

/* ---- The coordinator's side ------------------------------------------ */

int run_replan_open(struct run_replan **xp, const struct dfg_run_opts *o,
		    const char *state_dir, unsigned int plan_flags,
		    struct dfg_flow **fgp, struct dfg_plan **planp,
		    char *err, size_t errlen)
{
	struct run_replan *x;
	int n, r;

	*xp = NULL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->rp = o->replanner;
	x->plan_flags = plan_flags;
	x->period_ns = (__u64)(o->replan_ms ? o->replan_ms : RUN_REPLAN_MS) *
		       1000000ULL;
	x->next_ns = run_now_ns() + x->period_ns;
	x->log = getenv("DFG_REPLAN_LOG") != NULL;
	x->ckpt = state_dir && o->checkpoint_every;
	if (state_dir) {
		n = snprintf(x->root, sizeof(x->root), "%s", state_dir);
		if (n < 0 || (size_t)n >= sizeof(x->root) - 16) {
			free(x);
			return -ENAMETOOLONG;
		}
		snprintf(x->dir, sizeof(x->dir), "%s", state_dir);
	}
	if (state_dir && o->flags & DFG_RUN_RESUME) {
		r = journal_replay(x, fgp, planp, err, errlen);
		if (r) {
			if (!err[0])
				snprintf(err, errlen, "%s/%s: %s", x->root,
					 RUN_JOURNAL, strerror(-r));
			free(x);
			return r;
		}
	} else if (state_dir) {
		/* a fresh run: the generations of an older one go */
		run_replan_clear_gens(x);
	}
	*xp = x;
	return 0;
}

const char *run_replan_dir(const struct run_replan *x)
{
	return x->dir;
}

unsigned int run_replan_generation(const struct run_replan *x)
{
	return x->generation;
}

/* When the sets of the last change were told to stop. */
__u64 run_replan_stop_ns(const struct run_replan *x)
{
	return x->stop_ns;
}

/* The checkpoint the pending change waits for (K), 0 without one. */
__u64 run_replan_at_seq(const struct run_replan *x)
{
	return x->pend_fg ? x->at_seq : 0;
}

/*
 * The pending change waits for checkpoint @seq instead: a set instance
 * it stops had taken K (exec.c, stop_mark()).
 */
void run_replan_move_at(struct run_replan *x, __u64 seq)
{
	if (x->pend_fg && seq > x->at_seq)
		x->at_seq = seq;
}

/*
 * How the processes a change stopped went: @clean stopped at their stop
 * marks and exited when let go, @killed did not stop in time and were
 * killed (DFG_REPLAN_LOG's "stop" line, the run's summary).
 */
void run_replan_stopped(struct run_replan *x, unsigned int clean,
			unsigned int killed)
{
	x->stopped_clean += clean;
	x->stopped_killed += killed;
	if (x->log)
		fprintf(stderr, "replan-log: stop gen=%u clean=%u killed=%u\n",
			x->generation, clean, killed);
}

/* The plan an accepted change waits with for its checkpoint, or NULL. */
const struct dfg_plan *run_replan_pending(const struct run_replan *x,
					  const struct dfg_flow **fgp)
{
	*fgp = x->pend_fg;
	return x->pend_plan;
}

/* Step @what of the switch to the new plan is over (now). */
void run_replan_mark(struct run_replan *x, unsigned int what)
{
	if (what < RUN_RP_NMARKS)
		x->mark[what] = run_now_ns();
}

const char *run_replan_region_text(const struct run_replan *x)
{
	return x->region_text;
}

/*
 * Removes every generation's directory past the first, and the journal:
 * up to this generation whether or not each is there (a switch removes
 * the directory it leaves, unless sets that ran on still write there),
 * then past it while there are more.
 */
void run_replan_clear_gens(struct run_replan *x)
{
	char path[4096];
	struct stat st;
	unsigned int g;

	if (!x->root[0])
		return;
	for (g = 1;; g++) {
		if (gen_dir(path, sizeof(path), x->root, g) ||
		    (g > x->dirgen && stat(path, &st)))
			break;
		run_state_clear(path);
	}
	if (!journal_path(path, sizeof(path), x->root))
		unlink(path);
}

void run_replan_free(struct run_replan *x)
{
	if (!x)
		return;
	dfg_plan_free(x->pend_plan);
	dfg_flow_free(x->pend_fg);
	free(x->pend_text);
	free(x->past);
	free(x->view);
	free(x->skew_prev);
	free(x->skew);
	run_region_free(&x->region);
	free(x->region_text);
	free(x);
}

static void drop_pending(struct run_replan *x)
{
	dfg_plan_free(x->pend_plan);
	dfg_flow_free(x->pend_fg);
	free(x->pend_text);
	x->pend_plan = NULL;
	x->pend_fg = NULL;
	x->pend_text = NULL;
}

static void tell(struct run_replan *x, int err, const char *why)
{
	if (x->rp && x->rp->applied)
		x->rp->applied(x->rp->ctx, x->generation, err, why);
}

static void refuse(struct run_replan *x, int err, const char *why)
{
	x->refused++;
	tell(x, err, why);
}

/*
 * The pending change cannot reach checkpoint K (a set instance ended
 * after others had stopped at their marks): it goes, told as cancelled.
 */
void run_replan_cancel(struct run_replan *x, const char *why)
{
	if (!x->pend_fg)
		return;
	drop_pending(x);
	tell(x, -ECANCELED, why);
}

/*
 * Per component, since the start: the past plus this generation. The
 * counters are work done: what a generation did past the checkpoint the
 * next one started from is done again, and counted again.
 */
static int build_view(struct run_replan *x, const struct run_graph *g,
		      const struct run_env *env)
{
	const struct dfg_flow *fg = g->fg;
	unsigned int c, i;

	if (!x->skew_prev) {	/* a new plan's stats area starts at 0 */
		x->skew_prev = calloc(g->nr_comp_stats + 1, sizeof(__u64));
		x->skew = calloc(fg->ncomps + 1, sizeof(*x->skew));
	}
	if (!x->skew_prev || !x->skew)
		return -ENOMEM;
	if (!x->view) {
		x->ncomps = fg->ncomps;
		x->view = calloc(fg->ncomps + 1, sizeof(*x->view));
		x->past = calloc(fg->ncomps + 1, sizeof(*x->past));
		if (!x->view || !x->past)
			return -ENOMEM;
	}
	for (c = 0; c < fg->ncomps; c++) {
		struct dfg_run_view_comp *v = &x->view[c];
		const struct run_comp_stats *cs = &env->cstats[g->cstat[c]];
		unsigned int d = fg->comps[c].degree;
		unsigned int busy;
		__u64 wmax, wsum;
		bool all;

		*v = x->past[c];
		for (i = 0; i < d; i++) {
			v->in_elems += cs[i].in_elems;
			v->in_bytes += cs[i].in_bytes;
			v->out_elems += cs[i].out_elems;
			v->out_bytes += cs[i].out_bytes;
			v->cpu_samples += cs[i].samples;
		}
		/* skew: of this plan's instances, fed by a hash flow, over
		 * the last windows of RUN_SKEW_WINDOW elements or more per
		 * instance, every instance taking part (a shift in the keys
		 * shows within two; an instance starting late does not);
		 * even until the first two */
		v->key_skew = 0;
		if (!keyed_by(fg, c))
			continue;
		for (i = 0, wsum = wmax = 0, all = true, busy = 0; i < d; i++) {
			__u64 in = cs[i].in_elems;
			__u64 pv = x->skew_prev[g->cstat[c] + i];
			/* counters that restarted (the plan refused at the
			 * carry runs again from K) count from 0 */
			__u64 w = in >= pv ? in - pv : in;

			all &= in > 0;
			wsum += w;
			if (w > wmax) {
				wmax = w;
				busy = i;
			}
		}
		if (all && wsum >= (__u64)RUN_SKEW_WINDOW * d) {
			/*
			 * Keys that hash unevenly keep one instance the
			 * busiest; an instance that was descheduled, then
			 * works off its channel's backlog, takes turns with
			 * the others: skewed only when the same instance
			 * led two windows, by the lesser of the two.
			 */
			double w = (double)wmax * d / (double)wsum;
			struct run_skew *k = &x->skew[c];

			k->shown = k->last && k->busy == busy ?
				   (w < k->last ? w : k->last) : 1.0;
			k->last = w;
			k->busy = busy;
		}
		if (!all || wsum >= (__u64)RUN_SKEW_WINDOW * d)
			for (i = 0; i < d; i++)
				x->skew_prev[g->cstat[c] + i] = cs[i].in_elems;
		v->key_skew = x->skew[c].shown ? x->skew[c].shown : 1.0;
	}
	return 0;
}

/*
 * Keeps this generation's counters before its stats area goes; those of
 * the components in @running (NULL: none), whose sets run on into the
 * next generation and count on from where they were, stay out of the
 * past.
 */
void run_replan_retire(struct run_replan *x, const struct run_graph *g,
		       const struct run_env *env, const bool *running)
{
	unsigned int c;

	if (build_view(x, g, env))
		return;
	for (c = 0; c < x->ncomps; c++)
		if (!running || !running[c])
			x->past[c] = x->view[c];
	free(x->skew_prev);
	free(x->skew);
	x->skew_prev = NULL;
	x->skew = NULL;
}

/* The checkpoint every instance has taken, or 0 if one is not running. */
static __u64 ckpt_done(const struct run_graph *g, const struct run_env *env)
{
	__u64 low = ~0ULL;
	unsigned int i;

	for (i = 0; i < g->nr_set_stats; i++) {
		const struct run_set_stats *ss = &env->sstats[i];
		__u64 seq = env->resume_seq +
			    __atomic_load_n(&ss->checkpoints,
					    __ATOMIC_ACQUIRE);

		__u32 st = __atomic_load_n(&ss->state, __ATOMIC_ACQUIRE);

		/* stopped at its stop mark: that checkpoint is its last */
		if (st != RUN_S_RUNNING && st != RUN_S_STOPPED)
			return 0;
		if (seq < low)
			low = seq;
	}
	return low == ~0ULL ? 0 : low;
}

/*
 * The new plan's set instances are all back in service: the pause is
 * over. A set instance is back once its state is restored and it can
 * take input (resumed_ns), not when the scheduler first hands it out
 * (started_ns): a set downstream of a count, say, gets nothing to do
 * until the next checkpoint's blip reaches it, which is no pause of its
 * own. The log gives both, and the first quantum of the first set (the
 * reaction's end).
 */
static void measure_pause(struct run_replan *x, const struct run_graph *g,
			  const struct run_env *env, bool ended)
{
	__u64 last = 0, first = 0, resumed = 0, affected = 0, others = 0, t, p;
	bool restart = x->restarting;
	unsigned int i, s;

	if (!x->starting)
		return;
	for (i = 0; i < g->nr_set_stats; i++) {
		t = env->sstats[i].resumed_ns;
		if (!t && !ended)
			return;
		if (t > resumed)
			resumed = t;
	}
	/* the log waits for every first quantum too, unless the run ends;
	 * of the sets that restarted (those that ran on had theirs before) */
	for (i = 0; x->log && i < g->nr_set_stats; i++) {
		t = env->sstats[i].started_ns;
		if (!t && !ended)
			return;
		if (t && t < x->stop_ns)
			continue;
		if (t > last)
			last = t;
		if (t && (!first || t < first))
			first = t;
	}
	x->starting = false;
	x->restarting = false;
	if (!resumed)
		return;
	/* the affected sets' and the others' that restarted (every set, or
	 * on a partial switch those of the closed region; the sets that ran
	 * on did not pause) */
	for (s = 0; x->region.nsets == g->plan->nsets && s < x->region.nsets;
	     s++)
		for (i = 0; i < g->plan->sets[s].degree; i++) {
			bool aff = x->region.kind[s] == RUN_REGION_NEW;
			__u64 *m = aff ? &affected : &others;

			if (x->partial && !x->region.closed[s])
				continue;
			t = env->sstats[g->sstat[s] + i].resumed_ns;
			if (t > *m)
				*m = t;
		}
	/*
	 * A closed region restarted on the plan it ran (a change refused
	 * at the carry after it stopped): its own line, and no pause of a
	 * change, as a full switch's refusal at the carry counts none.
	 */
	if (restart) {
		if (x->log)
			fprintf(stderr, "replan-log: restart gen=%u running_inst=%u closed_inst=%u stop_ns=%llu resumed_ns=%llu carried_ns=%llu objects_ns=%llu go_ns=%llu\n",
				x->generation, x->running_inst,
				x->region.closed_inst,
				(unsigned long long)x->stop_ns,
				(unsigned long long)others,
				(unsigned long long)x->mark[RUN_RP_CARRIED],
				(unsigned long long)x->mark[RUN_RP_OBJECTS],
				(unsigned long long)x->mark[RUN_RP_GO]);
		return;
	}
	/* and the steps between, each as its end (0: not taken) */
	if (x->log)
		fprintf(stderr, "replan-log: run gen=%u path=%s running_inst=%u stop_ns=%llu first_ns=%llu last_ns=%llu resumed_ns=%llu reaped_ns=%llu carried_ns=%llu objects_ns=%llu forked_ns=%llu go_ns=%llu affected_resumed_ns=%llu others_resumed_ns=%llu\n",
			x->generation, x->partial ? "partial" : "full",
			x->partial ? x->running_inst : 0,
			(unsigned long long)x->stop_ns,
			(unsigned long long)first, (unsigned long long)last,
			(unsigned long long)resumed,
			(unsigned long long)x->mark[RUN_RP_REAPED],
			(unsigned long long)x->mark[RUN_RP_CARRIED],
			(unsigned long long)x->mark[RUN_RP_OBJECTS],
			(unsigned long long)x->mark[RUN_RP_FORKED],
			(unsigned long long)x->mark[RUN_RP_GO],
			(unsigned long long)affected,
			(unsigned long long)others);
	p = resumed > x->stop_ns ? resumed - x->stop_ns : 0;
	x->pause_ns += p;
	if (p > x->pause_max_ns)
		x->pause_max_ns = p;
}

int run_replan_tick(struct run_replan *x, const struct run_graph *g,
		    const struct run_env *env, char *why, size_t whylen)
{
	const struct dfg_plan_edit *edits = NULL;
	struct dfg_run_view view;
	unsigned int n = 0, c;
	__u64 now = run_now_ns(), done;
	int r;

	measure_pause(x, g, env, false);
	if (x->pend_fg) {
		done = ckpt_done(g, env);
		if (done && done >= x->at_seq) {
			x->stop_ns = now;
			memset(x->mark, 0, sizeof(x->mark));
			return 1;
		}
		return 0;
	}
	if (!x->rp || now < x->next_ns)
		return 0;
	x->next_ns = now + x->period_ns;
	r = build_view(x, g, env);
	if (r)
		return r;
	view = (struct dfg_run_view){
		.fg = g->fg, .plan = g->plan, .generation = x->generation,
		.now_ns = now, .comps = x->view,
	};
	r = x->rp->eval(x->rp->ctx, &view, &edits, &n);
	if (r < 0) {
		snprintf(why, whylen, "replanner: %s", strerror(-r));
		return r;
	}
	if (!n)
		return 0;
	if (!x->ckpt) {
		refuse(x, -EINVAL,
		       "re-planning needs checkpoints (checkpoint_every and a state directory)");
		return 0;
	}
	if (g->plan->nphases > 1) {
		refuse(x, -EINVAL,
		       "re-planning a graph of several phases is not supported");
		return 0;
	}
	r = dfg_plan_edit_apply(g->fg, g->plan, x->plan_flags, edits, n,
				&x->pend_fg, &x->pend_plan, why, whylen);
	if (r == -EINVAL) {
		refuse(x, r, why);
		return 0;
	}
	if (r)
		return r;
	for (c = 0; c < g->fg->ncomps; c++)
		if (!g->fg->comps[c].nin_flows &&
		    g->fg->comps[c].degree != x->pend_fg->comps[c].degree) {
			snprintf(why, whylen,
				 "'%s' is a source: its degree cannot change while it runs",
				 g->fg->comps[c].name);
			drop_pending(x);
			refuse(x, -EINVAL, why);
			return 0;
		}
	x->pend_text = edits_text(edits, n);
	if (!x->pend_text) {
		drop_pending(x);
		return -ENOMEM;
	}
	/* a checkpoint taken after the decision (the executor moves it
	 * past those the instances it stops took: run_replan_move_at()) */
	done = ckpt_done(g, env);
	x->at_seq = (done ? done : env->resume_seq) + 1;
	return 0;
}

/*
 * The region the change to the pending plan affected (worked out before
 * the carry), for the log lines and dfg run -v; without it (no memory)
 * they go without.
 */
static void note_region(struct run_replan *x, const struct run_graph *g)
{
	size_t len = 0;
	FILE *f;

	if (x->region.nsets != x->pend_plan->nsets)
		return;
	f = open_memstream(&x->region_text, &len);
	if (f) {
		run_region_print(&x->region, g->plan, x->pend_plan, f);
		if (fclose(f)) {
			free(x->region_text);
			x->region_text = NULL;
		}
	}
	if (x->log)
		fprintf(stderr, "replan-log: region gen=%u new_sets=%u new_inst=%u rewired_sets=%u rewired_inst=%u kept_sets=%u kept_inst=%u stopped_inst=%u boundary_flows=%u closed_inst=%u\n",
			x->generation, x->region.sets[RUN_REGION_NEW],
			x->region.inst[RUN_REGION_NEW],
			x->region.sets[RUN_REGION_REWIRED],
			x->region.inst[RUN_REGION_REWIRED],
			x->region.sets[RUN_REGION_KEPT],
			x->region.inst[RUN_REGION_KEPT],
			x->region.stopped_inst, x->region.boundary,
			x->region.closed_inst);
}

/*
 * How the executor applies the pending change: @partial, stopping only
 * the pieces of the graph that hold a set it affects while the others'
 * @running set instances run on; else stopping every set, for @why.
 * Said in the log and to the replanner's applied().
 */
void run_replan_path(struct run_replan *x, bool partial,
		     unsigned int running, const char *why)
{
	x->partial = partial;
	x->running_inst = partial ? running : 0;
	snprintf(x->path_why, sizeof(x->path_why), "%s",
		 partial || !why ? "" : why);
	if (partial)
		snprintf(x->path_text, sizeof(x->path_text),
			 "partial: %u set instances ran on", running);
	else
		snprintf(x->path_text, sizeof(x->path_text),
			 "full restart: %s", why ? why : "");
}

const struct run_region *run_replan_region(const struct run_replan *x)
{
	return x->region.nsets ? &x->region : NULL;
}

/*
 * The journal names the pending plan's generation, carried from K into
 * @dir: it becomes the plan being run (*@fgp, *@planp, the caller's), its
 * pause to be measured.
 */
static void committed(struct run_replan *x, const char *dir,
		      struct dfg_flow **fgp, struct dfg_plan **planp)
{
	x->starting = true;
	x->from_seq = x->at_seq;
	snprintf(x->dir, sizeof(x->dir), "%s", dir);
	*fgp = x->pend_fg;
	*planp = x->pend_plan;
	x->pend_fg = NULL;
	x->pend_plan = NULL;
	free(x->pend_text);
	x->pend_text = NULL;
}

int run_replan_switch(struct run_replan *x, const struct run_graph *g,
		      const struct run_env *env, struct dfg_flow **fgp,
		      struct dfg_plan **planp, __u64 *seq, char *err,
		      size_t errlen)
{
	char why[256] = "", dir[4096];
	int r;

	(void)env;
	*seq = x->at_seq;
	*fgp = NULL;
	*planp = NULL;
	if (!x->pend_fg) {
		/*
		 * Refused at the carry of a partial switch after sets had
		 * stopped at K (they cannot go on where they were), and
		 * their region could not be restarted alone
		 * (run_replan_restart()): every set restarts on the old
		 * plan from its newest complete checkpoint, as a full
		 * switch refused at the carry does.
		 */
		x->partial = false;
		r = run_state_prepare(x->dir, g, true, seq, why, sizeof(why));
		if (r)
			snprintf(err, errlen, "%s", why);
		return r;
	}
	/* the region first: the carry leaves the sets it keeps as they are
	 * (without it, no memory, every set is carried anew) */
	free(x->region_text);
	x->region_text = NULL;
	if (run_region_compute(&x->region, g->fg, g->plan, x->pend_fg,
			       x->pend_plan))
		run_region_free(&x->region);
	r = carry(x, g, x->at_seq, dir, sizeof(dir), why, sizeof(why));
	if (r)
		run_region_free(&x->region);
	if (r == -EINVAL && why[0] && x->partial) {
		/* nothing stopped for good: the old plan goes on as it
		 * runs, or the closed region, stopped at K, restarts from
		 * it alone (run_replan_restart()) */
		drop_pending(x);
		refuse(x, r, why);
		return 0;
	}
	if (r == -EINVAL && why[0]) {
		char msg[256];

		/*
		 * On the old plan, from its newest complete checkpoint (K
		 * or later), as --resume would; what some instances took
		 * past it before they stopped goes.
		 */
		drop_pending(x);
		refuse(x, r, why);
		r = run_state_prepare(x->dir, g, true, seq, msg, sizeof(msg));
		if (r)
			snprintf(err, errlen, "%s", msg);
		return r;
	}
	if (!r)
		r = journal_commit(x, x->dirgen + 1, x->at_seq,
				   x->pend_text);
	if (r) {
		snprintf(err, errlen, "re-plan at checkpoint %llu: %s",
			 (unsigned long long)x->at_seq, strerror(-r));
		drop_pending(x);
		return r;
	}
	/* the journal names the new generation: the old one's files go
	 * (the first one's stay with the journal at the top; on a partial
	 * switch the sets that run on still write there, and the executor
	 * removes it once they are gone) */
	if (x->dirgen && !x->partial)
		run_state_clear(x->dir);
	x->generation++;
	x->dirgen++;
	note_region(x, g);
	if (x->log)
		fprintf(stderr, "replan-log: path gen=%u path=%s running_inst=%u why=%s\n",
			x->generation, x->partial ? "partial" : "full",
			x->running_inst, x->partial ? "-" :
			x->path_why[0] ? x->path_why : "-");
	x->replans++;
	committed(x, dir, fgp, planp);
	tell(x, 0, x->path_text[0] ? x->path_text : NULL);
	return 0;
}

/*
 * The pending change was refused at the carry of a partial switch after
 * the sets of its closed region had stopped at checkpoint K (x->at_seq):
 * they cannot go on where they were. The plan being run is carried into
 * itself instead, as a generation of the journal's without edits (the
 * plan's generation stays): every set's files of K linked into its
 * directory, nothing read or written. The sets of @closed (per set of
 * the plan) restart from K, the others run on (a partial switch,
 * exec.c); the copies of the plan come back in *@fgp and *@planp. A kill
 * -9 at any point resumes on the plan from K or later, in either
 * directory. -errno (nothing committed): the caller restarts every set
 * instead.
 */
int run_replan_restart(struct run_replan *x, const struct run_graph *g,
		       const bool *closed, struct dfg_flow **fgp,
		       struct dfg_plan **planp)
{
	struct run_region *reg = &x->region;
	char why[256] = "", dir[4096];
	unsigned int s;
	int r;

	*fgp = NULL;
	*planp = NULL;
	drop_pending(x);
	free(x->region_text);
	x->region_text = NULL;
	run_region_free(reg);
	x->pend_text = strdup("");
	r = x->pend_text ? 0 : -ENOMEM;
	if (!r)
		r = dfg_plan_edit_apply(g->fg, g->plan, x->plan_flags, NULL, 0,
					&x->pend_fg, &x->pend_plan, why,
					sizeof(why));
	if (!r)
		r = run_region_compute(reg, g->fg, g->plan, x->pend_fg,
				       x->pend_plan);
	/* the same plan: every set kept, by its number */
	for (s = 0; !r && s < reg->nsets; s++)
		if (reg->kind[s] != RUN_REGION_KEPT || reg->old[s] != s)
			r = -EPROTO;
	for (s = 0; !r && s < reg->nsets; s++) {
		reg->closed[s] = closed[s];
		reg->closed_sets += closed[s];
		reg->closed_inst += closed[s] ? g->plan->sets[s].degree : 0;
	}
	if (!r)
		r = carry(x, g, x->at_seq, dir, sizeof(dir), why, sizeof(why));
	if (!r)
		r = journal_commit(x, x->dirgen + 1, x->at_seq, x->pend_text);
	if (r) {
		run_region_free(reg);
		drop_pending(x);
		return r;
	}
	/* the sets that run on still write in the old directory: the
	 * executor removes it once they are gone */
	x->dirgen++;
	x->partial = true;
	x->running_inst = g->plan->ninstances - reg->closed_inst;
	x->restarting = true;
	committed(x, dir, fgp, planp);
	return 0;
}

void run_replan_end(struct run_replan *x, const struct run_graph *g,
		    const struct run_env *env, struct dfg_run_summary *sum)
{
	measure_pause(x, g, env, true);
	if (x->pend_fg) {
		/* not refused: too late */
		drop_pending(x);
		tell(x, -ECANCELED, "the run ended before the next checkpoint");
	}
	sum->replans = x->replans;
	sum->refused = x->refused;
	sum->pause_ns = x->pause_ns;
	sum->pause_max_ns = x->pause_max_ns;
	sum->stopped_clean = x->stopped_clean;
	sum->stopped_killed = x->stopped_killed;
}
