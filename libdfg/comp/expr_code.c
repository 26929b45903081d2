// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * The expression language's code generator: the parser's tree
 * (expr_parse.c) into a flat array of stack instructions (expr_tree.h)
 * that expr_eval.c runs per element without recursion or allocation.
 *
 * Done once per expression: a subtree that reads nothing of the element
 * (no $, NF or NR) is evaluated here and becomes one constant, unless its
 * evaluation fails, which is then left to every element as before; a
 * field whose number is a constant becomes one instruction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expr_tree.h"

/* Appends an instruction @op for node @n. */
static struct insn *emit(struct dfg_expr *e, enum op op, const struct node *n)
{
	struct insn *in;

	if (e->ncode == e->code_cap) {
		unsigned int cap = e->code_cap ? 2 * e->code_cap : 16;
		struct insn *code = realloc(e->code, cap * sizeof(*code));

		if (!code)
			return NULL;
		e->code = code;
		e->code_cap = cap;
	}
	in = &e->code[e->ncode++];
	memset(in, 0, sizeof(*in));
	in->op = op;
	in->pos = n->pos;
	return in;
}

/*
 * Code from @start on computes constant node @n: evaluate it now and put
 * its value there instead; a failure stays in the code, for the element.
 */
static int fold(struct dfg_expr *e, unsigned int start, struct node *n)
{
	struct dfg_expr_env env;
	struct dfg_expr_val v;
	struct insn *in;
	int ret;

	dfg_expr_env_init(&env, -1);
	dfg_expr_env_set(&env, "", 0);
	ret = __dfg_expr_run(e, start, e->ncode, &env, &v, NULL, 0);
	if (!ret && !v.is_int) {
		/* only leaves own strings, and @n is not one */
		n->s = malloc(v.len + 1);
		if (n->s) {
			memcpy(n->s, v.s, v.len);
			n->len = v.len;
		}
		ret = n->s ? 0 : -ENOMEM;
	}
	dfg_expr_env_fini(&env);
	if (ret == -ENOMEM)
		return ret;
	if (ret)
		return 0;
	e->ncode = start;
	in = emit(e, v.is_int ? OP_INT : OP_STR, n);
	in->i = v.is_int ? v.i : 0;
	in->s = n->s;
	in->len = n->len;
	return 0;
}

/* Code for the subtree at @idx; *@constant: it reads nothing of the element. */
static int gen(struct dfg_expr *e, int idx, bool *constant)
{
	struct node *n = &e->nodes[idx];
	unsigned int start = e->ncode, k, at;
	bool kc = true, c;
	struct insn *in;
	int ret;

	*constant = true;
	switch (n->op) {
	case OP_INT:
	case OP_STR:
	case OP_NF:
	case OP_NR:
		in = emit(e, n->op, n);
		if (!in)
			return -ENOMEM;
		in->i = n->i;
		in->s = n->s;
		in->len = n->len;
		*constant = n->op == OP_INT || n->op == OP_STR;
		return 0;
	case OP_AND:
	case OP_OR:
		ret = gen(e, n->kid[0], &kc);
		if (ret)
			return ret;
		at = e->ncode;
		if (!emit(e, n->op == OP_AND ? OP_ANDJ : OP_ORJ, n))
			return -ENOMEM;
		ret = gen(e, n->kid[1], &c);
		if (ret)
			return ret;
		if (!emit(e, OP_TRUTH, n))
			return -ENOMEM;
		e->code[at].jump = e->ncode;
		kc = kc && c;
		break;
	case OP_COND:
		ret = gen(e, n->kid[0], &kc);
		if (ret)
			return ret;
		at = e->ncode;
		if (!emit(e, OP_JFALSE, n))
			return -ENOMEM;
		ret = gen(e, n->kid[1], &c);
		if (ret)
			return ret;
		kc = kc && c;
		if (!emit(e, OP_JMP, n))
			return -ENOMEM;
		e->code[at].jump = e->ncode;
		at = e->ncode - 1;
		ret = gen(e, n->kid[2], &c);
		if (ret)
			return ret;
		e->code[at].jump = e->ncode;
		kc = kc && c;
		break;
	case OP_MATCH:
	case OP_NOMATCH:
		/* the pattern (kid 1) is compiled into @re */
		ret = gen(e, n->kid[0], &kc);
		if (ret)
			return ret;
		in = emit(e, n->op, n);
		if (!in)
			return -ENOMEM;
		in->re = n->re;
		in->kpos[0] = e->nodes[n->kid[0]].pos;
		break;
	case OP_FIELD:
		ret = gen(e, n->kid[0], &kc);
		if (ret)
			return ret;
		in = &e->code[e->ncode - 1];
		if (e->ncode == start + 1 && in->op == OP_INT && in->i >= 0) {
			/* a constant field number: resolved now */
			in->op = OP_FIELDK;
			in->pos = n->pos;
		} else {
			in = emit(e, OP_FIELD, n);
			if (!in)
				return -ENOMEM;
			in->kpos[0] = e->nodes[n->kid[0]].pos;
		}
		*constant = false;
		return 0;
	default:
		/* operators and calls over their operands, in order */
		for (k = 0; k < n->nkids; k++) {
			ret = gen(e, n->kid[k], &c);
			if (ret)
				return ret;
			kc = kc && c;
		}
		in = emit(e, n->op, n);
		if (!in)
			return -ENOMEM;
		in->fn = n->fn;
		in->nargs = n->nkids;
		for (k = 0; k < n->nkids; k++)
			in->kpos[k] = e->nodes[n->kid[k]].pos;
		break;
	}
	*constant = kc;
	return kc ? fold(e, start, n) : 0;
}

int __dfg_expr_codegen(struct dfg_expr *e)
{
	bool constant;

	return gen(e, e->root, &constant);
}
