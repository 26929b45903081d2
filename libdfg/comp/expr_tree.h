/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * The expression language's compiled form: the node array the parser
 * (expr_parse.c) builds and the evaluator (expr_eval.c) walks.
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

struct dfg_expr {
	struct node	*nodes;
	unsigned int	nr, cap;
	int		root;
};

#endif /* _DFG_COMP_EXPR_TREE_H */
