// SPDX-License-Identifier: GPL-2.0
/* A small JSON writer (json.h). */
#include <math.h>
#include <string.h>

#include "json.h"

void json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

void json_quote(FILE *f, const char *s)
{
	const unsigned char *p;

	putc('"', f);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			/* Other controls escaped; bytes >= 0x80 pass as UTF-8. */
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				putc(*p, f);
		}
	}
	putc('"', f);
}

/* The comma and "key": before a member at the current depth. */
static void member(struct json *j, const char *key)
{
	if (j->more[j->depth])
		putc(',', j->f);
	j->more[j->depth] = true;
	if (key) {
		json_quote(j->f, key);
		putc(':', j->f);
	}
}

static void open_level(struct json *j, const char *key, char c)
{
	member(j, key);
	putc(c, j->f);
	/* Deeper levels than the tools use are a bug of the caller. */
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->more[j->depth] = false;
}

void json_obj_begin(struct json *j, const char *key)
{
	open_level(j, key, '{');
}

static void close_level(struct json *j, char c)
{
	putc(c, j->f);
	if (j->depth)
		j->depth--;
}

void json_obj_end(struct json *j)
{
	close_level(j, '}');
}

void json_arr_begin(struct json *j, const char *key)
{
	open_level(j, key, '[');
}

void json_arr_end(struct json *j)
{
	close_level(j, ']');
}

void json_str(struct json *j, const char *key, const char *v)
{
	member(j, key);
	json_quote(j->f, v);
}

void json_u64(struct json *j, const char *key, unsigned long long v)
{
	member(j, key);
	fprintf(j->f, "%llu", v);
}

void json_double(struct json *j, const char *key, double v)
{
	member(j, key);
	/* JSON has no NaN or infinity. */
	if (isfinite(v))
		fprintf(j->f, "%.17g", v);
	else
		fputs("null", j->f);
}

void json_bool(struct json *j, const char *key, bool v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_auto(struct json *j, const char *key, const char *v)
{
	const char *p = v;

	if (*p == '-')
		p++;
	/* JSON forbids leading zeros: "007" stays a string. */
	if (*p && strspn(p, "0123456789") == strlen(p) &&
	    (p[0] != '0' || !p[1])) {
		member(j, key);
		fputs(v, j->f);
	} else {
		json_str(j, key, v);
	}
}

void json_finish(struct json *j)
{
	putc('\n', j->f);
	fflush(j->f);
}
