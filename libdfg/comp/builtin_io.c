// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * Built-in sources and sinks: read_lines, read_records and generate
 * (roots), write_lines and write_records.
 *
 * Roots hand out elements that point into their read buffer (no copy);
 * they can raise a checkpoint blip every "checkpoint_every" elements, and
 * checkpoint the position of the next element, so a resumed run goes on
 * exactly after the last element the checkpoint covers. Writers
 * checkpoint the length of output they have made durable and, on
 * restore, truncate the file back to it before writing again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comp_impl.h"
#include "param.h"

#define IN_BUF		(64 * 1024)
#define MAX_RECORD	(16LL << 20)

/* Parameters (dfg_component(7)); the defaults are the ones init() applies. */
static const struct dfg_param_decl read_lines_decls[] = {
	{ .name = "file", .kind = DFG_PARAM_PATH, .flags = DFG_PARAM_REQUIRED,
	  .help = "file to read (\"{}\": the instance number)" },
	COMP_DECL_CKPT,
	{ NULL },
};

static const struct dfg_param_decl read_records_decls[] = {
	{ .name = "file", .kind = DFG_PARAM_PATH, .flags = DFG_PARAM_REQUIRED,
	  .help = "file to read (\"{}\": the instance number)" },
	{ .name = "size", .kind = DFG_PARAM_UINT, .flags = DFG_PARAM_REQUIRED,
	  .min = 1, .max = MAX_RECORD, .help = "bytes per record" },
	COMP_DECL_CKPT,
	{ NULL },
};

static const struct dfg_param_decl gen_decls[] = {
	{ .name = "count", .kind = DFG_PARAM_UINT, .flags = DFG_PARAM_REQUIRED,
	  .min = 0, .max = 1LL << 53, .help = "how many numbers" },
	{ .name = "start", .kind = DFG_PARAM_INT, .min = -(1LL << 53),
	  .max = 1LL << 53, .def = "0", .help = "the first number" },
	{ .name = "pattern", .kind = DFG_PARAM_STRING, .def = "{}",
	  .help = "each element, with \"{}\" replaced by the number" },
	COMP_DECL_CKPT,
	{ NULL },
};

static const struct dfg_param_decl write_lines_decls[] = {
	{ .name = "file", .kind = DFG_PARAM_PATH, .flags = DFG_PARAM_REQUIRED,
	  .help = "file to write, \"-\" for standard output (\"{}\": the instance number)" },
	{ NULL },
};

static const struct dfg_param_decl write_records_decls[] = {
	{ .name = "file", .kind = DFG_PARAM_PATH, .flags = DFG_PARAM_REQUIRED,
	  .help = "file to write, \"-\" for standard output (\"{}\": the instance number)" },
	{ .name = "size", .kind = DFG_PARAM_UINT, .min = 0, .max = MAX_RECORD,
	  .def = "0", .help = "bytes per record, 0: as they come" },
	{ NULL },
};

/*
 * Blips of a root: every @every elements (0: never) a checkpoint blip
 * numbered from 1; @since counts elements since the last one.
 */
struct root_blips {
	long long	every;
	long long	since;
	__u64		seq;
};

static int root_blips_init(struct dfg_comp *c, struct root_blips *b)
{
	memset(b, 0, sizeof(*b));
	return dfg_comp_param_long(c, "checkpoint_every", 0, 0, 1LL << 40,
				   &b->every);
}

/* After an element: whether run must return GOT_BLIP now. */
static bool root_blips_tick(struct dfg_comp *c, struct root_blips *b)
{
	struct dfg_blip blip = { .kind = DFG_BLIP_CHECKPOINT };

	if (!b->every || ++b->since < b->every)
		return false;
	b->since = 0;
	blip.seq = ++b->seq;
	dfg_comp_set_blip(c, &blip);
	return true;
}

static int root_blips_save(struct root_blips *b, struct dfg_ckpt *w)
{
	int ret = dfg_ckpt_put_u64(w, b->since);

	return ret ? ret : dfg_ckpt_put_u64(w, b->seq);
}

static int root_blips_load(struct root_blips *b, struct dfg_ckpt *r)
{
	__u64 since;
	int ret;

	ret = dfg_ckpt_get_u64(r, &since);
	if (!ret)
		ret = dfg_ckpt_get_u64(r, &b->seq);
	b->since = since;
	return ret;
}

/* ---- read_lines, read_records ------------------------------------------ */

/*
 * struct reader - a root reading a file
 * @fd:		the file
 * @path:	its name (owned), for messages
 * @rec_size:	fixed record size, 0 for lines
 * @buf, @size:	read buffer; bytes [@head, @tail) are unread
 * @base:	file offset of @buf[0]
 * @eof:	read(2) returned 0
 * @done:	everything was emitted
 * @blips:	checkpoint blips
 */
struct reader {
	int			fd;
	char			*path;
	size_t			rec_size;
	char			*buf;
	size_t			size, head, tail;
	__u64			base;
	bool			eof, done;
	struct root_blips	blips;
};

static void reader_fini(struct dfg_comp *c)
{
	struct reader *r = dfg_comp_state(c);

	if (r->fd >= 0)
		close(r->fd);
	free(r->path);
	free(r->buf);
	free(r);
}

static int reader_init(struct dfg_comp *c, void **state)
{
	struct reader *r;
	long long size = 0;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	r->fd = -1;
	*state = r;
	if (dfg_comp_type(c) == &comp_read_records)
		ret = dfg_comp_param_long(c, "size", 0, 1, MAX_RECORD, &size);
	else
		ret = 0;
	r->rec_size = size;
	if (!ret)
		ret = root_blips_init(c, &r->blips);
	if (!ret)
		ret = comp_path(c, "file", &r->path);
	if (ret)
		goto fail;
	r->size = IN_BUF > 2 * r->rec_size ? IN_BUF : 2 * r->rec_size;
	r->buf = malloc(r->size);
	if (!r->buf) {
		ret = dfg_comp_error(c, -ENOMEM, "out of memory");
		goto fail;
	}
	r->fd = open(r->path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		ret = dfg_comp_error(c, -errno, "%s: %s", r->path,
				     strerror(errno));
		goto fail;
	}
	return 0;
fail:
	reader_fini(c);
	return ret;
}

/* Reads more: keeps the unread bytes, grows the buffer when it is full. */
static int reader_more(struct dfg_comp *c, struct reader *r)
{
	ssize_t n;

	if (r->head) {
		memmove(r->buf, r->buf + r->head, r->tail - r->head);
		r->base += r->head;
		r->tail -= r->head;
		r->head = 0;
	}
	if (r->tail == r->size) {
		char *buf = realloc(r->buf, 2 * r->size);

		if (!buf)
			return dfg_comp_error(c, -ENOMEM,
					      "out of memory (a line of %zu bytes)",
					      r->size);
		r->buf = buf;
		r->size *= 2;
	}
	do {
		n = read(r->fd, r->buf + r->tail, r->size - r->tail);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return dfg_comp_error(c, -errno, "%s: %s", r->path,
				      strerror(errno));
	if (!n)
		r->eof = true;
	r->tail += n;
	return 0;
}

/* The next element in @e: 1, 0 when more must be read first, or -errno. */
static int reader_next(struct dfg_comp *c, struct reader *r,
		       struct dfg_elem *e)
{
	size_t avail = r->tail - r->head;
	char *p = r->buf + r->head, *nl;

	if (r->rec_size) {
		if (avail >= r->rec_size) {
			e->len = r->rec_size;
		} else if (r->eof && avail) {
			return dfg_comp_error(c, -EINVAL,
					      "%s ends in a partial record of %zu bytes",
					      r->path, avail);
		} else {
			return 0;
		}
		e->data = p;
		r->head += e->len;
		return 1;
	}
	nl = memchr(p, '\n', avail);
	if (nl) {
		e->len = nl - p;
		r->head += e->len + 1;
	} else if (r->eof && avail) {	/* the last line has no newline */
		e->len = avail;
		r->head += avail;
	} else {
		return 0;
	}
	e->data = p;
	return 1;
}

static int reader_run(struct dfg_comp *c, unsigned long budget)
{
	struct reader *r = dfg_comp_state(c);
	struct dfg_elem e = { 0 };
	unsigned long n = 0;
	int ret;

	while (n < budget) {
		ret = reader_next(c, r, &e);
		if (ret < 0)
			return ret;
		if (!ret) {
			if (r->eof) {
				r->done = true;
				return DFG_REACHED_EOF;
			}
			ret = reader_more(c, r);
			if (ret)
				return ret;
			continue;
		}
		n++;
		ret = __dfg_emit(c, 0, &e);
		if (ret)
			return ret;
		if (root_blips_tick(c, &r->blips))
			return DFG_GOT_BLIP;
	}
	return DFG_KEEP_GOING;
}

static int reader_checkpoint(struct dfg_comp *c, struct dfg_ckpt *w)
{
	struct reader *r = dfg_comp_state(c);
	int ret;

	ret = dfg_ckpt_put_u64(w, r->base + r->head);
	if (!ret)
		ret = root_blips_save(&r->blips, w);
	return ret;
}

static int reader_restore(struct dfg_comp *c, struct dfg_ckpt *k)
{
	struct reader *r = dfg_comp_state(c);
	struct stat st;
	__u64 off;
	int ret;

	ret = dfg_ckpt_get_u64(k, &off);
	if (!ret)
		ret = root_blips_load(&r->blips, k);
	if (ret)
		return ret;
	if (fstat(r->fd, &st) || off > (__u64)st.st_size)
		return dfg_comp_error(c, -EBADMSG,
				      "%s is shorter than its checkpoint (%llu bytes)",
				      r->path, (unsigned long long)off);
	if (lseek(r->fd, off, SEEK_SET) < 0)
		return dfg_comp_error(c, -errno, "%s: %s", r->path,
				      strerror(errno));
	r->base = off;
	r->head = r->tail = 0;
	r->eof = false;
	return 0;
}

const struct dfg_comp_type comp_read_lines = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "read_lines",
	.summary = "emit the lines of a file, without their newline",
	.flags = DFG_COMP_FOLDABLE,
	.min_out = 1, .max_out = 1,
	.param_decls = read_lines_decls,
	.init = reader_init,
	.fini = reader_fini,
	.run = reader_run,
	.checkpoint = reader_checkpoint,
	.restore = reader_restore,
};

const struct dfg_comp_type comp_read_records = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "read_records",
	.summary = "emit the fixed-size records of a file",
	.flags = DFG_COMP_FOLDABLE,
	.min_out = 1, .max_out = 1,
	.param_decls = read_records_decls,
	.init = reader_init,
	.fini = reader_fini,
	.run = reader_run,
	.checkpoint = reader_checkpoint,
	.restore = reader_restore,
};

/* ---- generate ---------------------------------------------------------- */

/*
 * struct generator - numbers [@start, @end) that fall to this instance
 * (k % degree == instance), each printed into @pattern at "{}"
 * @next:	next number to consider
 * @buf:	the element being built (owned), big enough for any number
 * @fixed:	length of the pattern before its first "{}", which @buf
 *		holds from init on: only the rest is written per element
 */
struct generator {
	long long		next, end;
	char			*pattern;
	char			*buf;
	size_t			fixed;
	struct root_blips	blips;
};

static void gen_fini(struct dfg_comp *c)
{
	struct generator *g = dfg_comp_state(c);

	free(g->pattern);
	free(g->buf);
	free(g);
}

static int gen_init(struct dfg_comp *c, void **state)
{
	struct generator *g;
	long long count;
	int ret;

	g = calloc(1, sizeof(*g));
	if (!g)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	*state = g;
	if (!dfg_comp_param(c, "count", NULL))
		ret = dfg_comp_error(c, -EINVAL, "parameter count is required");
	else
		ret = dfg_comp_param_long(c, "count", 0, 0, 1LL << 53, &count);
	if (!ret)
		ret = dfg_comp_param_long(c, "start", 0, -(1LL << 53),
					  1LL << 53, &g->next);
	if (!ret)
		ret = root_blips_init(c, &g->blips);
	if (!ret) {
		const char *p = dfg_comp_param(c, "pattern", "{}");
		size_t holes = 0;

		g->end = g->next + count;
		g->pattern = strdup(p);
		for (; (p = strstr(p, "{}")); p += 2)
			holes++;
		/* each "{}" becomes at most 20 characters */
		g->buf = malloc(strlen(g->pattern ? g->pattern : "") +
				20 * holes + 1);
		if (!g->pattern || !g->buf) {
			ret = dfg_comp_error(c, -ENOMEM, "out of memory");
		} else {
			p = strstr(g->pattern, "{}");
			g->fixed = p ? (size_t)(p - g->pattern) :
				strlen(g->pattern);
			memcpy(g->buf, g->pattern, g->fixed);
		}
	}
	if (ret)
		gen_fini(c);
	return ret;
}

/* @k in decimal at @o, as "%lld" without stdio's per-call set-up. */
static size_t put_lld(char *o, long long k)
{
	unsigned long long u = k < 0 ? 0ULL - (unsigned long long)k :
			       (unsigned long long)k;
	char tmp[20], *t = tmp + sizeof(tmp);
	size_t n = 0;

	do {
		*--t = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (k < 0)
		o[n++] = '-';
	memcpy(o + n, t, (size_t)(tmp + sizeof(tmp) - t));
	return n + (size_t)(tmp + sizeof(tmp) - t);
}

/* Element @k into @g->buf, after the part that never changes. */
static size_t gen_format(const struct generator *g, long long k)
{
	char *out = g->buf, *o = out + g->fixed;
	const char *p;

	for (p = g->pattern + g->fixed; *p; p++) {
		if (p[0] == '{' && p[1] == '}') {
			o += put_lld(o, k);
			p++;
		} else {
			*o++ = *p;
		}
	}
	return o - out;
}

static int gen_run(struct dfg_comp *c, unsigned long budget)
{
	struct generator *g = dfg_comp_state(c);
	unsigned int deg = dfg_comp_degree(c), inst = dfg_comp_instance(c);
	unsigned long n = 0;
	int ret;

	while (n < budget) {
		struct dfg_elem e = { .data = g->buf };
		long long k;

		if (g->next >= g->end)
			return DFG_REACHED_EOF;
		k = g->next++;
		/* one instance takes every number: no division per element */
		if (deg > 1 && ((k % deg) + deg) % deg != inst)
			continue;
		e.len = gen_format(g, k);
		e.tag = k;
		n++;
		ret = __dfg_emit(c, 0, &e);
		if (ret)
			return ret;
		if (root_blips_tick(c, &g->blips))
			return DFG_GOT_BLIP;
	}
	return DFG_KEEP_GOING;
}

static int gen_checkpoint(struct dfg_comp *c, struct dfg_ckpt *w)
{
	struct generator *g = dfg_comp_state(c);
	int ret = dfg_ckpt_put_u64(w, g->next);

	return ret ? ret : root_blips_save(&g->blips, w);
}

static int gen_restore(struct dfg_comp *c, struct dfg_ckpt *r)
{
	struct generator *g = dfg_comp_state(c);
	__u64 next;
	int ret;

	ret = dfg_ckpt_get_u64(r, &next);
	if (!ret)
		ret = root_blips_load(&g->blips, r);
	if (!ret)
		g->next = next;
	return ret;
}

const struct dfg_comp_type comp_generate = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "generate",
	.summary = "emit 'count' elements, pattern with {} the number",
	.flags = DFG_COMP_FOLDABLE,
	.min_out = 1, .max_out = 1,
	.param_decls = gen_decls,
	.init = gen_init,
	.fini = gen_fini,
	.run = gen_run,
	.checkpoint = gen_checkpoint,
	.restore = gen_restore,
};

/* ---- write_lines, write_records ---------------------------------------- */

/*
 * struct writer - a sink
 * @out:	the file
 * @path:	its name (owned), for messages
 * @newline:	append '\n' to each element (write_lines)
 * @rec_size:	write_records: the size every element must have, or 0
 */
struct writer {
	struct comp_out	out;
	char		*path;
	bool		newline;
	size_t		rec_size;
};

static void writer_fini(struct dfg_comp *c)
{
	struct writer *w = dfg_comp_state(c);

	comp_out_close(&w->out);
	free(w->path);
	free(w);
}

static int writer_init(struct dfg_comp *c, void **state)
{
	struct writer *w;
	long long size = 0;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	w->out.fd = -1;
	*state = w;
	w->newline = dfg_comp_type(c) == &comp_write_lines;
	ret = w->newline ? 0 : dfg_comp_param_long(c, "size", 0, 0,
						   MAX_RECORD, &size);
	w->rec_size = size;
	if (!ret)
		ret = comp_path(c, "file", &w->path);
	if (!ret)
		ret = comp_out_open(c, &w->out, w->path);
	if (ret)
		writer_fini(c);
	return ret;
}

static int writer_compute(struct dfg_comp *c, unsigned int port,
			  const struct dfg_elem *e)
{
	struct writer *w = c->state;
	int ret;

	(void)port;
	if (w->rec_size && e->len != w->rec_size)
		return dfg_comp_error(c, -EINVAL,
				      "a record of %zu bytes, not %zu", e->len,
				      w->rec_size);
	/* a line that fits the buffer: one copy and its newline */
	if (w->newline && w->out.size - w->out.used > e->len) {
		memcpy(w->out.buf + w->out.used, e->data, e->len);
		w->out.used += e->len;
		w->out.buf[w->out.used++] = '\n';
		return 0;
	}
	ret = comp_out_write(c, &w->out, e->data, e->len);
	if (!ret && w->newline)
		ret = comp_out_write(c, &w->out, "\n", 1);
	return ret;
}

static int writer_shutdown(struct dfg_comp *c)
{
	struct writer *w = dfg_comp_state(c);

	return comp_out_flush(c, &w->out);
}

static int writer_checkpoint(struct dfg_comp *c, struct dfg_ckpt *k)
{
	struct writer *w = dfg_comp_state(c);
	int ret;

	if (w->out.stream)
		return dfg_comp_error(c, -EOPNOTSUPP,
				      "%s is not a regular file: no checkpoint",
				      w->path);
	ret = comp_out_flush(c, &w->out);
	if (ret)
		return ret;
	if (fdatasync(w->out.fd))
		return dfg_comp_error(c, -errno, "%s: %s", w->path,
				      strerror(errno));
	return dfg_ckpt_put_u64(k, w->out.off);
}

static int writer_restore(struct dfg_comp *c, struct dfg_ckpt *k)
{
	struct writer *w = dfg_comp_state(c);
	struct stat st;
	__u64 off;
	int ret;

	ret = dfg_ckpt_get_u64(k, &off);
	if (ret)
		return ret;
	if (w->out.stream || fstat(w->out.fd, &st) ||
	    off > (__u64)st.st_size)
		return dfg_comp_error(c, -EBADMSG,
				      "%s is shorter than its checkpoint (%llu bytes)",
				      w->path, (unsigned long long)off);
	w->out.off = off;	/* the first flush truncates to it */
	return 0;
}

const struct dfg_comp_type comp_write_lines = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "write_lines",
	.summary = "write each element and a newline to a file ('-': stdout)",
	.flags = DFG_COMP_FOLDABLE,
	.min_in = 1, .max_in = 1,
	.param_decls = write_lines_decls,
	.init = writer_init,
	.fini = writer_fini,
	.compute = writer_compute,
	.shutdown = writer_shutdown,
	.checkpoint = writer_checkpoint,
	.restore = writer_restore,
};

const struct dfg_comp_type comp_write_records = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "write_records",
	.summary = "write each element as it is to a file ('-': stdout)",
	.flags = DFG_COMP_FOLDABLE,
	.min_in = 1, .max_in = 1,
	.param_decls = write_records_decls,
	.init = writer_init,
	.fini = writer_fini,
	.compute = writer_compute,
	.shutdown = writer_shutdown,
	.checkpoint = writer_checkpoint,
	.restore = writer_restore,
};
