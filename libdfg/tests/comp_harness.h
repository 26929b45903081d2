/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Test helpers for components: instances from "key=value" strings, a sink
 * that records what an instance emits, and links that call a downstream
 * instance's compute directly, the way a folded set does.
 */
#ifndef _DFG_TESTS_COMP_HARNESS_H
#define _DFG_TESTS_COMP_HARNESS_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sanitizer/lsan_interface.h>

#include <dfg/component.h>

/*
 * The harness ends each test with _exit(), before LeakSanitizer's own
 * check: tests call this at their end instead. Nonzero when a leak is
 * reported.
 */
#define NO_LEAKS()	EXPECT_EQ(0, __lsan_do_recoverable_leak_check())

#define MAX_PARAMS	16

/*
 * An instance of type @type named @name with @nr_in inputs and @nr_out
 * outputs and the NULL-terminated "key=value" parameters, created and
 * initialised; NULL if either step failed (the message goes to @err).
 */
static inline struct dfg_comp *mk_comp_v(const char *type, const char *name,
					 unsigned int nr_in,
					 unsigned int nr_out, char *err,
					 size_t errlen, va_list ap)
{
	struct dfg_param params[MAX_PARAMS];
	char *copies[MAX_PARAMS];
	struct dfg_comp_attr a = {
		.name = name, .nr_in = nr_in, .nr_out = nr_out,
		.params = params,
	};
	const struct dfg_comp_type *t = dfg_comp_find(type);
	struct dfg_comp *c = NULL;
	const char *kv;
	unsigned int i;

	snprintf(err, errlen, "no type %s", type);
	if (!t)
		return NULL;
	while ((kv = va_arg(ap, const char *)) && a.nr_params < MAX_PARAMS) {
		char *eq;

		copies[a.nr_params] = strdup(kv);
		eq = strchr(copies[a.nr_params], '=');
		*eq = '\0';
		params[a.nr_params].key = copies[a.nr_params];
		params[a.nr_params].value = eq + 1;
		a.nr_params++;
	}
	if (dfg_comp_create(t, &a, &c)) {
		snprintf(err, errlen, "create failed");
		c = NULL;
	} else if (dfg_comp_init(c)) {
		snprintf(err, errlen, "%s", dfg_comp_errmsg(c));
		dfg_comp_destroy(c);
		c = NULL;
	}
	for (i = 0; i < a.nr_params; i++)
		free(copies[i]);
	return c;
}

static inline struct dfg_comp *mk_comp_err(char *err, size_t errlen,
					   const char *type, const char *name,
					   unsigned int nr_in,
					   unsigned int nr_out, ...)
{
	struct dfg_comp *c;
	va_list ap;

	va_start(ap, nr_out);
	c = mk_comp_v(type, name, nr_in, nr_out, err, errlen, ap);
	va_end(ap);
	return c;
}

static inline struct dfg_comp *mk_comp(const char *type, unsigned int nr_in,
				       unsigned int nr_out, ...)
{
	struct dfg_comp *c;
	char err[DFG_COMP_ERRMSG_MAX];
	va_list ap;

	va_start(ap, nr_out);
	c = mk_comp_v(type, type, nr_in, nr_out, err, sizeof(err), ap);
	va_end(ap);
	if (!c)
		fprintf(stderr, "# mk_comp %s: %s\n", type, err);
	return c;
}

/* What one instance emitted: each element as "port:bytes" text. */
struct sink {
	char		**items;
	__u64		*tags;
	size_t		nr, cap;
	int		fail_at;	/* fail the nth element (1-based), 0: never */
};

static inline int sink_emit(struct dfg_comp *c, void *cookie,
			    unsigned int port, const struct dfg_elem *e)
{
	struct sink *s = cookie;
	char *item;

	(void)c;
	if (s->fail_at && (int)s->nr + 1 == s->fail_at)
		return -EIO;
	if (s->nr == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->items = realloc(s->items, s->cap * sizeof(*s->items));
		s->tags = realloc(s->tags, s->cap * sizeof(*s->tags));
	}
	if (asprintf(&item, "%u:%.*s", port, (int)e->len,
		     (const char *)e->data) < 0)
		return -ENOMEM;
	s->tags[s->nr] = e->tag;
	s->items[s->nr++] = item;
	return 0;
}

static inline void sink_attach(struct sink *s, struct dfg_comp *c)
{
	memset(s, 0, sizeof(*s));
	dfg_comp_set_emit(c, sink_emit, s);
}

/* All items joined by '|', for comparisons (caller frees). */
static inline char *sink_join(const struct sink *s)
{
	size_t i, len = 1;
	char *out, *p;

	for (i = 0; i < s->nr; i++)
		len += strlen(s->items[i]) + 1;
	p = out = calloc(1, len);
	for (i = 0; i < s->nr; i++)
		p += sprintf(p, "%s%s", i ? "|" : "", s->items[i]);
	return out;
}

static inline void sink_free(struct sink *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		free(s->items[i]);
	free(s->items);
	free(s->tags);
	memset(s, 0, sizeof(*s));
}

/* A folded link: output @port of an instance feeds @down's input @in. */
struct link {
	struct dfg_comp	*down[4];	/* per output port */
	unsigned int	in[4];
};

static inline int link_emit(struct dfg_comp *c, void *cookie,
			    unsigned int port, const struct dfg_elem *e)
{
	struct link *l = cookie;

	(void)c;
	return dfg_comp_compute(l->down[port], l->in[port], e);
}

/* Feeds the elements of a NULL-terminated list of strings to input @port. */
static inline int feed(struct dfg_comp *c, unsigned int port, ...)
{
	const char *s;
	va_list ap;
	int ret = 0;

	va_start(ap, port);
	while (!ret && (s = va_arg(ap, const char *))) {
		struct dfg_elem e = { .data = s, .len = strlen(s) };

		ret = dfg_comp_compute(c, port, &e);
	}
	va_end(ap);
	return ret;
}

/* Pumps root @c to the end with @budget per call; returns the last code. */
static inline int pump(struct dfg_comp *c, unsigned long budget,
		       unsigned int *calls)
{
	int ret;

	*calls = 0;
	do {
		ret = dfg_comp_run(c, budget);
		(*calls)++;
	} while (ret == DFG_KEEP_GOING || ret == DFG_GOT_BLIP);
	return ret;
}

/* Writes @text to a new temporary file; its name into @path. */
static inline int tmp_file(char *path, size_t len, const char *text,
			   size_t n)
{
	int fd;
	FILE *f;

	snprintf(path, len, "/tmp/dfg-comp-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	if (fwrite(text, 1, n, f) != n) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

/* The contents of @path (caller frees), NUL-terminated. */
static inline char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	if (fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

#endif /* _DFG_TESTS_COMP_HARNESS_H */
