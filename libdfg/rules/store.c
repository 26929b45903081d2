// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * rules/store.c - the plan store: decisions by the signature of the
 * conditions that produced them, in memory and in DIR/plans.dfg.
 *
 * The file is a log, one line per put, appended and never rewritten in
 * place, so a crash mid-write loses at most its last line (which then
 * fails to parse and is skipped):
 *   KEY N [OP COMP DEGREE TYPE KEY VALUE]...
 * KEY in hex, N edits of six fields each, strings %-escaped ("-" for
 * none); a later line for a key replaces an earlier one, N 0 forgets it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rules_impl.h"

#define STORE_FILE	"plans.dfg"

struct entry {
	unsigned long long	key;
	struct dfg_plan_edit	*edits;
	unsigned int		n;
};

struct rl_store {
	int		fd;
	struct entry	*v;
	unsigned int	n;
};

static void entry_free(struct entry *e)
{
	unsigned int i;

	for (i = 0; i < e->n; i++) {
		free((char *)e->edits[i].comp);
		free((char *)e->edits[i].type);
		free((char *)e->edits[i].key);
		free((char *)e->edits[i].value);
	}
	free(e->edits);
	e->edits = NULL;
	e->n = 0;
}

static struct entry *find(struct rl_store *s, unsigned long long key)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].key == key)
			return &s->v[i];
	return NULL;
}

static char *dup_or_null(const char *p)
{
	return p ? strdup(p) : NULL;
}

/* Puts in memory; takes nothing from @edits. */
static int put_mem(struct rl_store *s, unsigned long long key,
		   const struct dfg_plan_edit *edits, unsigned int n)
{
	struct entry e = { .key = key, .n = 0 }, *old = find(s, key);
	unsigned int i;

	if (n) {
		e.edits = calloc(n, sizeof(*e.edits));
		if (!e.edits)
			return -ENOMEM;
	}
	for (i = 0; i < n; i++, e.n++) {
		struct dfg_plan_edit *d = &e.edits[i];

		*d = edits[i];
		d->comp = dup_or_null(edits[i].comp);
		d->type = dup_or_null(edits[i].type);
		d->key = dup_or_null(edits[i].key);
		d->value = dup_or_null(edits[i].value);
		if (!d->comp || (edits[i].type && !d->type) ||
		    (edits[i].key && !d->key) ||
		    (edits[i].value && !d->value)) {
			e.n++;
			entry_free(&e);
			return -ENOMEM;
		}
	}
	if (old) {
		entry_free(old);
		if (!n) {
			*old = s->v[--s->n];
			return 0;
		}
		*old = e;
		return 0;
	}
	if (!n)
		return 0;
	old = realloc(s->v, (s->n + 1) * sizeof(*old));
	if (!old) {
		entry_free(&e);
		return -ENOMEM;
	}
	s->v = old;
	s->v[s->n++] = e;
	return 0;
}

static void put_field(struct rl_buf *b, const char *f)
{
	if (!f) {
		rl_buf_printf(b, " -");
		return;
	}
	rl_buf_printf(b, " ");
	if (!*f || *f == '-')
		rl_buf_printf(b, "%%%02x", (unsigned char)(*f ? *f++ : 0));
	for (; *f; f++) {
		if (*f <= ' ' || *f == '%' || *f == 0x7f)
			rl_buf_printf(b, "%%%02x", (unsigned char)*f);
		else
			rl_buf_printf(b, "%c", *f);
	}
}

/* Undoes put_field() on @f in place; "-" is NULL, "%00" alone is "". */
static char *get_field(char *f, bool *null)
{
	char *in = f, *out = f;

	*null = !strcmp(f, "-");
	if (!strcmp(f, "%00")) {
		*f = '\0';
		return f;
	}
	while (*in) {
		unsigned int c;

		if (*in == '%' && sscanf(in + 1, "%2x", &c) == 1) {
			*out++ = (char)c;
			in += 3;
		} else {
			*out++ = *in++;
		}
	}
	*out = '\0';
	return f;
}

/* One line of the log; a line that does not parse is skipped. */
static int load_line(struct rl_store *s, char *line)
{
	struct dfg_plan_edit *e = NULL;
	unsigned long long key;
	unsigned int n, i, j;
	char *save = NULL, *tok;
	int ret = 0;

	tok = strtok_r(line, " \n", &save);
	if (!tok || sscanf(tok, "%llx", &key) != 1)
		return 0;
	tok = strtok_r(NULL, " \n", &save);
	if (!tok || sscanf(tok, "%u", &n) != 1 || n > 4096)
		return 0;
	if (n) {
		e = calloc(n, sizeof(*e));
		if (!e)
			return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		char *f[6];
		bool null;

		for (j = 0; j < 6; j++) {
			f[j] = strtok_r(NULL, " \n", &save);
			if (!f[j])
				goto skip;
		}
		e[i].op = atoi(f[0]);
		e[i].comp = get_field(f[1], &null);
		e[i].degree = strtoul(f[2], NULL, 10);
		get_field(f[3], &null);
		e[i].type = null ? NULL : f[3];
		get_field(f[4], &null);
		e[i].key = null ? NULL : f[4];
		get_field(f[5], &null);
		e[i].value = null ? NULL : f[5];
		if (e[i].op < DFG_EDIT_DEGREE || e[i].op > DFG_EDIT_PARAM)
			goto skip;
	}
	ret = put_mem(s, key, e, n);
skip:
	free(e);
	return ret;
}

int rl_store_open(const char *dir, struct rl_store **sp)
{
	struct rl_store *s;
	char *path = NULL, *line = NULL;
	size_t cap = 0;
	FILE *f;
	int ret = 0;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (asprintf(&path, "%s/" STORE_FILE, dir) < 0)
		return -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s) {
		free(path);
		return -ENOMEM;
	}
	s->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	free(path);
	if (s->fd < 0) {
		ret = -errno;
		free(s);
		return ret;
	}
	f = fdopen(dup(s->fd), "r");
	if (!f) {
		ret = -errno;
		rl_store_close(s);
		return ret;
	}
	rewind(f);
	while (!ret && getline(&line, &cap, f) > 0)
		ret = load_line(s, line);
	free(line);
	fclose(f);
	if (ret) {
		rl_store_close(s);
		return ret;
	}
	*sp = s;
	return 0;
}

void rl_store_close(struct rl_store *s)
{
	unsigned int i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		entry_free(&s->v[i]);
	free(s->v);
	close(s->fd);
	free(s);
}

int rl_store_get(struct rl_store *s, unsigned long long key,
		 const struct dfg_plan_edit **edits, unsigned int *n)
{
	struct entry *e = find(s, key);

	if (!e)
		return -ENOENT;
	*edits = e->edits;
	*n = e->n;
	return 0;
}

int rl_store_put(struct rl_store *s, unsigned long long key,
		 const struct dfg_plan_edit *edits, unsigned int n)
{
	struct rl_buf b = { 0 };
	unsigned int i;
	ssize_t w;
	int ret;

	rl_buf_printf(&b, "%016llx %u", key, n);
	for (i = 0; i < n; i++) {
		rl_buf_printf(&b, " %d", edits[i].op);
		put_field(&b, edits[i].comp);
		rl_buf_printf(&b, " %u", edits[i].degree);
		put_field(&b, edits[i].type);
		put_field(&b, edits[i].key);
		put_field(&b, edits[i].value);
	}
	rl_buf_printf(&b, "\n");
	if (b.oom) {
		free(b.s);
		return -ENOMEM;
	}
	ret = put_mem(s, key, edits, n);
	if (!ret) {
		/* one write(2) of an O_APPEND file: the line lands whole */
		w = write(s->fd, b.s, b.len);
		if (w < 0)
			ret = -errno;
		else if ((size_t)w != b.len)
			ret = -EIO;
	}
	free(b.s);
	return ret;
}

unsigned long long rl_store_entries(const struct rl_store *s)
{
	return s->n;
}
