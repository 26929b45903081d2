/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Parameter declarations (struct dfg_param_decl) inside comp/: checking
 * a table, the names a type takes, what the built-ins' tables share. The
 * value check, which flow/ uses too, is in comp_flow.h.
 */
#ifndef _DFG_COMP_PARAM_H
#define _DFG_COMP_PARAM_H

#include <stdbool.h>
#include <stddef.h>

#include <dfg/component.h>

#include "comp_flow.h"

/* Whether @name is a valid type or parameter name: [a-z0-9_], 1 to 63. */
bool comp_name_ok(const char *name);


/* Whether @t takes a parameter called @name: its declarations or @params. */
bool comp_param_known(const struct dfg_comp_type *t, const char *name);


/* Whether @decls is a valid table (names, kinds, ranges, defaults). */
int comp_param_decls_check(const struct dfg_param_decl *decls, char *err,
			   size_t errlen);

/* Declarations the built-in types share. */
#define COMP_DECL_SEP(help_) \
	{ .name = "sep", .kind = DFG_PARAM_CHAR, .help = help_ }
#define COMP_DECL_KEY(name_, def_, help_) \
	{ .name = name_, .kind = DFG_PARAM_EXPR, .def = def_, .help = help_ }
#define COMP_DECL_NUMERIC \
	{ .name = "numeric", .kind = DFG_PARAM_UINT, .min = 0, .max = 1, \
	  .def = "0", .help = "1: compare keys as integers" }
#define COMP_DECL_ORDER \
	{ .name = "order", .kind = DFG_PARAM_ENUM, .choices = comp_orders, \
	  .def = "asc", .help = "asc or desc" }
#define COMP_DECL_OUT_SEP \
	{ .name = "out_sep", .kind = DFG_PARAM_STRING, .def = "\t", \
	  .help = "between the fields of an output line" }
#define COMP_DECL_CKPT \
	{ .name = "checkpoint_every", .kind = DFG_PARAM_UINT, .min = 0, \
	  .max = 1LL << 40, .def = "0", \
	  .help = "elements between checkpoint blips, 0: none" }

extern const char *const comp_orders[];

#endif /* _DFG_COMP_PARAM_H */
