/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg internals of flow/: the allocation pool, the raw graph the DOT
 * loader hands to the model, the error list, procedure 400.
 */
#ifndef _DFG_FLOW_IMPL_H
#define _DFG_FLOW_IMPL_H

#include <stddef.h>

#include <dfg/flow.h>

#define fg_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/*
 * A pool: every allocation of one graph (or one error list) comes from it
 * and goes with it at once, so the builders need no unwinding per object.
 */
struct fg_chunk;
struct fg_pool {
	struct fg_chunk	*head;
};

void *fg_alloc(struct fg_pool *p, size_t size);		/* zeroed */
void *fg_allocv(struct fg_pool *p, size_t n, size_t size);
char *fg_strdup(struct fg_pool *p, const char *s);
void fg_pool_free(struct fg_pool *p);

/* An attribute as read from the file; @line 0 when not known. */
struct fg_attr {
	const char	*key;
	const char	*value;
	unsigned int	line;
};

struct fg_rnode {
	const char	*name;
	unsigned int	line;
	unsigned int	nattrs;
	struct fg_attr	*attrs;
};

struct fg_redge {
	unsigned int	tail, head;	/* indices into fg_raw.nodes */
	unsigned int	line;
	unsigned int	nattrs;
	struct fg_attr	*attrs;		/* incl. key, tailport, headport */
};

/* What the DOT loader read, in file order; strings live in the pool. */
struct fg_raw {
	const char	*file;
	const char	*name;
	unsigned int	nnodes, nedges;
	struct fg_rnode	*nodes;
	struct fg_redge	*edges;
};

struct fg_errs {
	struct dfg_flow_errors	pub;
	struct dfg_flow_error	*v;
	unsigned int		cap;
	struct fg_pool		pool;
};

/* Adds one error; -ENOMEM if it could not be recorded. */
int fg_err(struct fg_errs *e, const char *file, unsigned int line,
	   const char *object, const char *attr, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* dot.c: libcgraph keeps global state; one user at a time. */
void fg_cgraph_lock(void);
void fg_cgraph_unlock(void);

/* model.c: validates @raw and builds the graph (in @pool, taken over). */
int fg_build(const struct fg_raw *raw, struct fg_pool *pool,
	     const struct dfg_flow_types *types, struct fg_errs *errs,
	     struct dfg_flow **fgp);

/* fold.c: procedure 400; @set_of gets each component's set, returns nsets. */
int fg_fold(const struct dfg_flow *fg, unsigned int *set_of);

#endif /* _DFG_FLOW_IMPL_H */
