// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg run: a set's checkpoints (seq k). A root reaches its k-th mark
 * after k * every elements; a channel source (one upstream instance of
 * one input) reaches k when its blip k arrives, after which its
 * descriptors wait in its stash. When every root and source has reached
 * k or ended, every member gets process_blip() then checkpoint() in
 * topological order, the set's file is written and synced, the blip goes
 * out on every channel, and the stashes are replayed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "set.h"

__u64 rt_ckpt_every(const struct rt_set *s)
{
	return s->env->state_dir ? s->env->opts->checkpoint_every : 0;
}

/* Has root @m reached the mark of checkpoint @seq? */
static bool root_at(const struct rt_set *s, const struct rt_member *m,
		    __u64 seq)
{
	if (m->ckpt_asked)
		return true;
	return rt_ckpt_every(s) && m->root_count >= seq * rt_ckpt_every(s);
}

/* Every root and source reached checkpoint @seq or ended, one reached it. */
static bool aligned(const struct rt_set *s, __u64 seq)
{
	bool any = false;
	unsigned int i, p;

	for (i = 0; i < s->nr_m; i++) {
		const struct rt_member *m = &s->m[i];

		if (!m->root || m->root_eof)
			continue;
		if (!root_at(s, m, seq))
			return false;
		any = true;
	}
	for (i = 0; i < s->nr_in; i++)
		for (p = 0; p < s->in[i].nprod; p++) {
			const struct rt_src *src = &s->in[i].src[p];

			if (src->eof && !src->at_seq)
				continue;
			if (src->at_seq != seq)
				return false;
			any = true;
		}
	return any;
}

static int put_u64(struct dfg_ckpt *w, __u64 v)
{
	return dfg_ckpt_put_u64(w, v);
}

/*
 * The file: magic, seq, members, outputs, the round-robin counters, how
 * far each spool file was written (outputs) and read (inputs), then per
 * member its root count and its own checkpoint bytes. A spool gets the
 * blip (and is made durable) before the file is written: nobody reads it
 * before this phase ends, and the offsets then include the blip, as the
 * reader's offsets in its own checkpoint do.
 */
static int ckpt_take(struct rt_set *s, __u64 seq)
{
	struct dfg_blip b = { .kind = DFG_BLIP_CHECKPOINT, .seq = seq };
	struct dfg_ckpt *w = NULL, *mw;
	const void *data;
	size_t len;
	unsigned int i, j;
	int r;

	for (i = 0; i < s->nr_m; i++) {
		set_active(s, (int)i);
		r = rt_done(&s->m[i], dfg_comp_process_blip(s->m[i].c, &b));
		if (r < 0)
			return rt_member_fail(s, &s->m[i], r);
	}
	for (i = 0; i < s->nr_out; i++) {
		if (s->out[i].ch)
			continue;
		r = rt_out_control(s, &s->out[i], RUN_D_BLIP, seq);
		if (!r)
			r = rt_spool_flush(s, &s->out[i], true);
		if (r)
			return r;
	}
	r = dfg_ckpt_new(&w);
	if (r)
		goto fail;
	r = put_u64(w, RUN_CKPT_MAGIC) ?: put_u64(w, seq) ?:
	    put_u64(w, s->nr_m) ?: put_u64(w, s->nr_out);
	for (i = 0; !r && i < s->nr_out; i++)
		r = put_u64(w, s->out[i].rr);
	for (i = 0; !r && i < s->nr_out; i++)
		for (j = 0; !r && !s->out[i].ch && j < s->out[i].nr; j++)
			r = put_u64(w, (__u64)ftello(s->out[i].spool[j]));
	for (i = 0; !r && i < s->nr_in; i++)
		for (j = 0; !r && !s->in[i].ch && j < s->in[i].nprod; j++)
			r = put_u64(w, (__u64)ftello(s->in[i].src[j].spool));
	for (i = 0; !r && i < s->nr_m; i++) {
		set_active(s, (int)i);
		r = dfg_ckpt_new(&mw);
		if (r)
			break;
		r = dfg_comp_checkpoint(s->m[i].c, mw);
		if (r < 0) {
			dfg_ckpt_free(mw);
			dfg_ckpt_free(w);
			return rt_member_fail(s, &s->m[i], r);
		}
		data = dfg_ckpt_data(mw, &len);
		r = put_u64(w, s->m[i].root_count) ?:
		    dfg_ckpt_put_bytes(w, data, len);
		dfg_ckpt_free(mw);
	}
	set_active(s, -1);
	if (r)
		goto fail;
	data = dfg_ckpt_data(w, &len);
	r = run_state_write(s->env->state_dir, s->set, s->inst, seq, data, len);
	if (r)
		goto fail;
	dfg_ckpt_free(w);
	w = NULL;
	/* durable: now the blip may leave the set */
	for (i = 0; i < s->nr_out; i++) {
		if (!s->out[i].ch)
			continue;	/* has it already */
		r = rt_out_control(s, &s->out[i], RUN_D_BLIP, seq);
		if (r)
			return r;
	}
	for (i = 0; i < s->nr_m; i++)
		s->m[i].ckpt_asked = false;
	s->ckpt_seq = seq;
	__atomic_store_n(&s->st->checkpoints, s->st->checkpoints + 1,
			 __ATOMIC_RELEASE);
	return 0;
fail:
	dfg_ckpt_free(w);
	return rt_fail(s, r, dfg_comp_name(s->m[0].c),
		       "checkpoint %llu: %s", (unsigned long long)seq,
		       strerror(-r));
}

int rt_ckpt_restore(struct rt_set *s, __u64 seq)
{
	struct dfg_ckpt *rd = NULL, *mr;
	__u64 v[4], x;
	const void *p;
	void *data = NULL;
	size_t len, plen;
	unsigned int i, j;
	int r;

	r = run_state_read(s->env->state_dir, s->set, s->inst, seq, &data,
			   &len);
	if (r)
		goto fail;
	r = dfg_ckpt_open(data, len, &rd);
	if (r)
		goto fail;
	for (i = 0; i < 4 && !r; i++)
		r = dfg_ckpt_get_u64(rd, &v[i]);
	if (!r && (v[0] != RUN_CKPT_MAGIC || v[1] != seq || v[2] != s->nr_m ||
		   v[3] != s->nr_out))
		r = -EPROTO;
	for (i = 0; !r && i < s->nr_out; i++)
		r = dfg_ckpt_get_u64(rd, &s->out[i].rr);
	for (i = 0; !r && i < s->nr_out; i++)
		for (j = 0; !r && !s->out[i].ch && j < s->out[i].nr; j++) {
			FILE *f = s->out[i].spool[j];

			r = dfg_ckpt_get_u64(rd, &x);
			/* what was written after the checkpoint goes */
			if (!r && (ftruncate(fileno(f), (off_t)x) ||
				   fseeko(f, (off_t)x, SEEK_SET)))
				r = -errno;
		}
	for (i = 0; !r && i < s->nr_in; i++)
		for (j = 0; !r && !s->in[i].ch && j < s->in[i].nprod; j++) {
			r = dfg_ckpt_get_u64(rd, &x);
			if (!r && fseeko(s->in[i].src[j].spool, (off_t)x,
					 SEEK_SET))
				r = -errno;
		}
	for (i = 0; !r && i < s->nr_m; i++) {
		r = dfg_ckpt_get_u64(rd, &x) ?:
		    dfg_ckpt_get_bytes(rd, &p, &plen);
		if (r)
			break;
		s->m[i].root_count = x;
		/* carried into a new plan without state: starts as new */
		if (!plen)
			continue;
		r = dfg_ckpt_open(p, plen, &mr);
		if (r)
			break;
		set_active(s, (int)i);
		r = dfg_comp_restore(s->m[i].c, mr);
		dfg_ckpt_free(mr);
		if (r < 0) {
			dfg_ckpt_free(rd);
			free(data);
			return rt_member_fail(s, &s->m[i], r);
		}
	}
	set_active(s, -1);
fail:
	dfg_ckpt_free(rd);
	free(data);
	if (r)
		return rt_fail(s, r, dfg_comp_name(s->m[0].c),
			       "restoring checkpoint %llu: %s",
			       (unsigned long long)seq, strerror(-r));
	s->ckpt_seq = seq;
	return 0;
}

/* After a checkpoint: what the sources held back, in order. */
static int replay(struct rt_set *s)
{
	unsigned int i, p;
	int r;

	for (i = 0; i < s->nr_in; i++)
		for (p = 0; p < s->in[i].nprod; p++) {
			struct rt_src *src = &s->in[i].src[p];

			src->at_seq = 0;
			while (!src->at_seq && run_fifo_len(&src->stash)) {
				struct dfg_desc d = *run_fifo_peek(&src->stash);

				run_fifo_drop(&src->stash, 1);
				r = rt_in_desc(s, &s->in[i], &d);
				if (r)
					return r;
			}
		}
	return 0;
}

/* Its stop mark says stop at the checkpoint just taken (or before). */
static bool stop_due(const struct rt_set *s)
{
	__u64 at;

	/* read after the checkpoint was counted (exec.c stop_mark()) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	at = __atomic_load_n(&s->st->stop_at, __ATOMIC_ACQUIRE);

	return at && s->ckpt_seq >= at;
}

int rt_maybe_checkpoint(struct rt_set *s)
{
	int r;

	while (!s->stopping && aligned(s, s->ckpt_seq + 1)) {
		r = ckpt_take(s, s->ckpt_seq + 1);
		if (r)
			return r;
		if (stop_due(s)) {
			/* what the sources held back stays unconsumed */
			s->stopping = true;
			break;
		}
		r = replay(s);
		if (r)
			return r;
	}
	return 0;
}

/*
 * The process of @sets, those stopped at their marks among them, waits
 * for the coordinator to let them go (or to kill it): until then their
 * channel endpoints stay open, so that no set of the run sees an
 * upstream end or a downstream vanish before checkpoint K is complete.
 */
void rt_stop_wait(struct rt_set *const *sets, unsigned int n)
{
	const struct timespec ms = { .tv_nsec = 1000000 };
	unsigned int i;

	for (i = 0; i < n; i++)
		while (sets[i]->stopped &&
		       __atomic_load_n(&sets[i]->st->stop_at,
				       __ATOMIC_ACQUIRE) != RUN_STOP_GO)
			nanosleep(&ms, NULL);
}
