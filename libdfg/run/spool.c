// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg run: a set's boundary flows into a later phase, through spool
 * files (struct run_spool_rec records, see run.h), written by the
 * upstream phase and read once the downstream phase runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "set.h"

#define RUN_SPOOL_BUF		(256U << 10)	/* stdio buffer of a spool */

/*
 * A spool file, for writing (from the start, or as the checkpoint being
 * restored leaves it) or for reading.
 */
FILE *rt_spool_open(struct rt_set *s, const struct dfg_flow_edge *f,
		    unsigned int inst, unsigned int prod, bool out)
{
	const struct run_graph *g = s->env->g;
	char path[4096];
	FILE *fp = NULL;
	int fd, r;

	r = run_spool_path(path, sizeof(path), s->env->spool_dir, f->index,
			   inst, prod);
	if (r) {
		errno = -r;
		goto fail;
	}
	fd = open(path, out ? O_WRONLY | O_CREAT | O_CLOEXEC :
			      O_RDONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		goto fail;
	if (out && !s->env->resume_seq && ftruncate(fd, 0)) {
		close(fd);
		goto fail;
	}
	fp = fdopen(fd, out ? "w" : "r");
	if (!fp) {
		close(fd);
		goto fail;
	}
	setvbuf(fp, NULL, _IOFBF, RUN_SPOOL_BUF);
	return fp;
fail:
	rt_fail(s, -errno, g->fg->comps[out ? f->src : f->dst].name,
		"spool of '%s' -> '%s': %s: %s", g->fg->comps[f->src].name,
		g->fg->comps[f->dst].name, path, strerror(errno));
	return NULL;
}

/* Append a record to spool file @j of @o. */
int rt_spool_put(struct rt_set *s, struct rt_out *o, unsigned int j,
		 unsigned int kind, __u64 tag, const void *data,
		 size_t len)
{
	struct run_spool_rec h = {
		.len = (__u32)len,
		.flags = kind,
		.tag = tag,
	};

	if (len > UINT32_MAX)
		return rt_fail(s, -EMSGSIZE, dfg_comp_name(s->m[0].c),
			       "element of %zu bytes for '%s'", len,
			       s->env->g->fg->comps[o->f->dst].name);
	if (fwrite(&h, sizeof(h), 1, o->spool[j]) != 1 ||
	    (len && fwrite(data, len, 1, o->spool[j]) != 1))
		return rt_fail(s, errno ? -errno : -EIO,
			       dfg_comp_name(s->m[0].c),
			       "spooling to '%s': %s",
			       s->env->g->fg->comps[o->f->dst].name,
			       strerror(errno ? errno : EIO));
	s->st->boundary_out++;
	return 0;
}

/* Everything spooled so far is in the file (durable if @sync). */
int rt_spool_flush(struct rt_set *s, struct rt_out *o, bool sync)
{
	unsigned int j;

	for (j = 0; j < o->nr; j++)
		if (fflush(o->spool[j]) ||
		    (sync && fdatasync(fileno(o->spool[j]))))
			return rt_fail(s, -errno, dfg_comp_name(s->m[0].c),
				       "spooling to '%s': %s",
				       s->env->g->fg->comps[o->f->dst].name,
				       strerror(errno));
	return 0;
}

/* The next record of a spool file; its producer ended with RUN_D_EOF. */
static int spool_get(struct rt_set *s, struct rt_in *in, struct rt_src *src)
{
	struct run_spool_rec h;
	struct dfg_elem e;
	int r;

	if (fread(&h, sizeof(h), 1, src->spool) != 1) {
		r = ferror(src->spool) ? -errno : -EPIPE;
		goto fail;
	}
	if (h.len > in->buf_len) {
		void *buf = realloc(in->buf, h.len);

		if (!buf) {
			r = -ENOMEM;
			goto fail;
		}
		in->buf = buf;
		in->buf_len = h.len;
	}
	if (h.len && fread(in->buf, h.len, 1, src->spool) != 1) {
		r = ferror(src->spool) ? -errno : -EPIPE;
		goto fail;
	}
	if ((h.flags & RUN_D_KIND) != RUN_D_DATA)
		return rt_in_control(s, in, src, h.flags & RUN_D_KIND, h.tag);
	e.data = in->buf;
	e.len = h.len;
	e.tag = h.tag;
	r = rt_deliver(in->to, in->f->dst_port, &e);
	return r < 0 ? rt_member_fail(s, in->to, r) : 0;
fail:
	return rt_fail(s, r, dfg_comp_name(in->to->c),
		       "spooled input from '%s': %s",
		       s->env->g->fg->comps[in->f->src].name,
		       r == -EPIPE ? "cut short" : strerror(-r));
}

/* Up to @budget records of a spooled input; how many, or -errno. */
int rt_spool_pump(struct rt_set *s, struct rt_in *in, unsigned int budget)
{
	unsigned int done = 0, p;
	int r;

	for (p = 0; p < in->nprod; p++) {
		struct rt_src *src = &in->src[p];

		while (done < budget && !src->at_seq && !src->eof) {
			r = spool_get(s, in, src);
			if (r)
				return r;
			done++;
		}
	}
	return (int)done;
}
