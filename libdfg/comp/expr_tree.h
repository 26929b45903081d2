/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The expression language's compiled forms: the node array the parser
 * (expr_parse.c) builds, and the flat instruction array expr_code.c makes
 * of it (constants folded, constant field numbers resolved), which the
 * evaluator (expr_eval.c) runs per element on a stack of values.
 */
#ifndef _DFG_COMP_EXPR_TREE_H
#define _DFG_COMP_EXPR_TREE_H

#include <regex.h>
#include <stddef.h>

#include "expr.h"

enum op {
	OP_INT, OP_STR, OP_FIELD, OP_NF, OP_NR,
	OP_NEG, OP_NOT,
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_CAT,
	OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
	OP_AND, OP_OR, OP_COND, OP_MATCH, OP_NOMATCH,
	OP_CALL,
	/* instructions only */
	OP_FIELDK,	/* push field @i (a constant >= 0) */
	OP_ANDJ,	/* top false: make it 0 and jump, else pop */
	OP_ORJ,		/* top true: make it 1 and jump, else pop */
	OP_TRUTH,	/* top becomes 0 or 1 */
	OP_JFALSE,	/* pop; jump if it was false */
	OP_JMP,
};

enum fn {
	FN_LEN, FN_LOWER, FN_UPPER, FN_SUBSTR, FN_INT, FN_STR, FN_TRIM,
	FN_CONTAINS, FN_STARTS, FN_ENDS,
};

#define MAX_ARGS	3

/*
 * struct node - one node of the tree
 * @op:		OP_*
 * @pos:	column of the node's token, from 1, for messages
 * @kid:	operands (indices into the node array); calls: arguments
 * @nkids:	operands in use
 * @fn:		OP_CALL: FN_*
 * @i:		OP_INT: the value
 * @s, @len:	OP_STR: the unescaped string (owned)
 * @re:		OP_MATCH, OP_NOMATCH: the compiled pattern (owned)
 * @height:	levels of the subtree, bounded so evaluation recursion is
 */
struct node {
	enum op		op;
	unsigned int	pos;
	unsigned int	height;
	int		kid[MAX_ARGS];
	unsigned int	nkids;
	enum fn		fn;
	long long	i;
	char		*s;
	size_t		len;
	regex_t		*re;
};

/*
 * struct insn - one instruction: an operator over the values on top of
 * the stack (its operands, pushed in order), replaced by its result
 * @op:		OP_*
 * @fn:		OP_CALL: FN_*
 * @nargs:	OP_CALL: arguments on the stack
 * @pos:	column of the node it comes from, for messages
 * @kpos:	columns of its operands' nodes (messages about an operand)
 * @jump:	jumps: the instruction to go on at
 * @i:		OP_INT: the value; OP_FIELDK: the field number
 * @s, @len:	OP_STR: the string (a node's)
 * @re:		OP_MATCH, OP_NOMATCH: the pattern (a node's)
 */
struct insn {
	enum op		op;
	enum fn		fn;
	unsigned int	nargs;
	unsigned int	pos;
	unsigned int	kpos[MAX_ARGS];
	unsigned int	jump;
	long long	i;
	const char	*s;
	size_t		len;
	const regex_t	*re;
};

/*
 * Deepest stack the code of a tree of the tallest height needs: a node
 * keeps at most MAX_ARGS - 1 operands while it computes its last, so a
 * tree of height h needs at most (MAX_ARGS - 1)(h - 1) + 1 slots.
 */
#define EXPR_STACK	((MAX_ARGS - 1) * DFG_EXPR_MAX_HEIGHT + 1)

struct dfg_expr {
	struct node	*nodes;
	unsigned int	nr, cap;
	int		root;
	struct insn	*code;
	unsigned int	ncode, code_cap;
};

/* expr_code.c: the instructions of @e's tree; 0 or -ENOMEM. */
int __dfg_expr_codegen(struct dfg_expr *e);
/* expr_eval.c: runs instructions [@pc, @end) of @e; the result in @v. */
int __dfg_expr_run(const struct dfg_expr *e, unsigned int pc,
		   unsigned int end, struct dfg_expr_env *env,
		   struct dfg_expr_val *v, char *err, size_t errlen);

#endif /* _DFG_COMP_EXPR_TREE_H */
