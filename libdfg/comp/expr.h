/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The expression language of the built-in components (filter, map, the
 * keys of sort, join, merge, partition and aggregate). Language reference
 * in dfg_component(7), "EXPRESSIONS".
 *
 * An expression is compiled once (dfg_expr_compile()) and evaluated per
 * element against an environment (struct dfg_expr_env) that holds the
 * element, its fields (split lazily by the separator) and a scratch area
 * for the strings the evaluation builds. A value lives until the next
 * dfg_expr_env_set() on the environment.
 *
 * Evaluation is bounded: no loops, a nesting limit at compile time,
 * integer overflow and division by zero are errors, strings are only as
 * long as what they are made from. Errors carry the column ("col 7: ...").
 */
#ifndef _DFG_COMP_EXPR_H
#define _DFG_COMP_EXPR_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Longest source text, deepest nesting of parentheses and prefix operators,
 * and tallest tree (which bounds the evaluator's recursion) accepted.
 */
#define DFG_EXPR_MAX_SRC	4096
#define DFG_EXPR_MAX_DEPTH	64
#define DFG_EXPR_MAX_HEIGHT	256

struct dfg_expr;

/* A value: an integer, or a string of @len bytes at @s (not terminated). */
struct dfg_expr_val {
	bool		is_int;
	long long	i;
	const char	*s;
	size_t		len;
};

struct dfg_expr_field {
	size_t	off;
	size_t	len;
};

/*
 * A bump allocator: memory that never moves, freed all at once (or reset
 * for reuse). The evaluator's scratch strings and the record stores of the
 * buffering components live in one.
 */
struct dfg_bump_chunk;

struct dfg_bump {
	struct dfg_bump_chunk	*chunks;
};

void *dfg_bump_alloc(struct dfg_bump *b, size_t n);
void dfg_bump_reset(struct dfg_bump *b);
void dfg_bump_free(struct dfg_bump *b);

/*
 * struct dfg_expr_env - what an expression is evaluated against
 * @line, @len:	the element
 * @sep:	field separator byte, or -1 for runs of blanks (space, tab)
 * @nr:		element number, from 1 (NR)
 * @split:	@fields holds the fields of @line
 * @nf, @fields, @fields_cap: the fields
 * @scratch:	strings made by the evaluation, reused for the next element
 */
struct dfg_expr_env {
	const char		*line;
	size_t			len;
	int			sep;
	long long		nr;
	bool			split;
	unsigned int		nf;
	unsigned int		fields_cap;
	struct dfg_expr_field	*fields;
	struct dfg_bump		scratch;
};

int dfg_expr_compile(const char *src, struct dfg_expr **ep, char *err,
		     size_t errlen);
void dfg_expr_free(struct dfg_expr *e);

void dfg_expr_env_init(struct dfg_expr_env *env, int sep);
void dfg_expr_env_fini(struct dfg_expr_env *env);

/* The next element; inline, as it runs once per element and expression. */
static inline void dfg_expr_env_set(struct dfg_expr_env *env,
				    const void *line, size_t len)
{
	env->line = line;
	env->len = len;
	env->split = false;
	env->nr++;
	if (env->scratch.chunks)
		dfg_bump_reset(&env->scratch);
}

/*
 * What @e gives, as known once it is compiled: DFG_EXPR_LINE, $0, the
 * element itself; DFG_EXPR_CONST, a constant, whose value goes into @v;
 * DFG_EXPR_ANY, anything else. The first two never fail and read nothing
 * but the element, so a component may use them without evaluating @e
 * per element.
 */
enum dfg_expr_shape {
	DFG_EXPR_ANY,
	DFG_EXPR_LINE,
	DFG_EXPR_CONST,
};

enum dfg_expr_shape dfg_expr_shape(const struct dfg_expr *e,
				   struct dfg_expr_val *v);
int dfg_expr_eval(const struct dfg_expr *e, struct dfg_expr_env *env,
		  struct dfg_expr_val *v, char *err, size_t errlen);
bool dfg_expr_truth(const struct dfg_expr_val *v);
int dfg_expr_to_int(const struct dfg_expr_val *v, long long *out);
int dfg_expr_to_str(struct dfg_expr_env *env, struct dfg_expr_val *v);

#endif /* _DFG_COMP_EXPR_H */
