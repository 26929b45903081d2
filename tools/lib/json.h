/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON writer for the tools' --json and --stats-json output:
 * compact, one value per call, commas and string escapes handled here.
 * Keys are NULL for array members and the top-level value.
 */
#ifndef _DFG_TOOLS_JSON_H
#define _DFG_TOOLS_JSON_H

#include <stdbool.h>
#include <stdio.h>

#define JSON_MAX_DEPTH	8

struct json {
	FILE	*f;
	int	depth;
	bool	more[JSON_MAX_DEPTH];	/* a member was written at depth */
};

void json_init(struct json *j, FILE *f);
void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_str(struct json *j, const char *key, const char *v);
void json_u64(struct json *j, const char *key, unsigned long long v);
void json_double(struct json *j, const char *key, double v);
void json_bool(struct json *j, const char *key, bool v);
/* A sysfs value: a number when it reads as a decimal integer, else a string. */
void json_auto(struct json *j, const char *key, const char *v);
/* Ends the top-level value with a newline and flushes. */
void json_finish(struct json *j);

/* @s as a JSON string literal, quotes included. */
void json_quote(FILE *f, const char *s);

#endif /* _DFG_TOOLS_JSON_H */
