/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * What the graph loader (libdfg/flow/) uses of comp/: a parameter value
 * checked against its declaration exactly as the component will parse it,
 * so that dfg plan and dfg run judge a parameter the same way.
 */
#ifndef _DFG_COMP_FLOW_H
#define _DFG_COMP_FLOW_H

#include <stddef.h>

#include <dfg/component.h>

/* The declaration of @name in @decls (NULL-name-terminated), or NULL. */
const struct dfg_param_decl *comp_param_find(const struct dfg_param_decl *decls,
					     const char *name);

/*
 * Whether @value is a value of @d; 0, or -EINVAL with why in @err (no
 * parameter name: the caller says where), or -ENOMEM.
 */
int comp_param_check(const struct dfg_param_decl *d, const char *value,
		     char *err, size_t errlen);

#endif /* _DFG_COMP_FLOW_H */
