/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * rules/rules_impl.h - between the rule language (lang.c), the engine
 * (engine.c) and the plan store (store.c).
 */
#ifndef _DFG_RULES_IMPL_H
#define _DFG_RULES_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include <dfg/rules.h>

/*
 * struct rl_rule - one parsed rule
 * @name, @file, @line:	as written
 * @serial:	unique in its interpreter; names the CLIPS defrule "r<serial>"
 * @dormant:	defined inside another rule's "add": built when that fires
 * @body:	the CLIPS defrule after its name: "(declare ...) LHS => RHS)"
 */
struct rl_rule {
	char		*name;
	char		*file;
	unsigned int	line;
	unsigned int	serial;
	bool		dormant;
	char		*body;
};

/* struct rl_var - "var NAME = VALUE": a variable's initial value */
struct rl_var {
	char	*name;
	char	*value;
};

struct rl_parsed {
	struct rl_rule	*rules;
	unsigned int	nrules;
	struct rl_var	*vars;
	unsigned int	nvars;
};

/* Growing string; @oom sticks once an allocation failed. */
struct rl_buf {
	char	*s;
	size_t	len, cap;
	bool	oom;
};

void rl_buf_printf(struct rl_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends @s as a CLIPS string literal. */
void rl_buf_quote(struct rl_buf *b, const char *s);

/*
 * Parses @len bytes of @text (named @file) into @out, numbering rules
 * from *@serial on. 0, -EINVAL with *@err, -ENOMEM.
 */
int rl_parse(const char *text, size_t len, const char *file,
	     unsigned int *serial, struct rl_parsed *out,
	     struct dfg_rules_error *err);
void rl_parsed_free(struct rl_parsed *p);

/* The fact templates every rule is translated against. */
extern const char *const rl_templates[];

/*
 * The plan store (store.c), opened with dfg_plan_store_open(): the
 * stored decision for @key: 0 and *@edits and *@n (valid until the next
 * call on @s), -ENOENT, or another -errno of the database.
 */
int rl_store_get(struct dfg_plan_store *s, unsigned long long key,
		 const struct dfg_plan_edit **edits, unsigned int *n);
/* Counts the last hit in the store (done by the next get, and close). */
void rl_store_count_hit(struct dfg_plan_store *s);
/*
 * Stores @n edits under @key (not 0), with the graph's name and the
 * conditions in words for people; @n 0 forgets @key. 0 or -errno.
 */
int rl_store_put(struct dfg_plan_store *s, unsigned long long key,
		 const char *graph, const char *conditions,
		 const struct dfg_plan_edit *edits, unsigned int n);
unsigned long long rl_store_entries(struct dfg_plan_store *s);

/* The default rule set's text, NUL-terminated (default.c). */
extern const char rl_default_rules[];

#endif /* _DFG_RULES_IMPL_H */
