/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg run: a growable FIFO of channel descriptors, private to one set
 * instance: the descriptors a set has produced but not yet sent (its
 * outputs may be full), and those held back behind a checkpoint blip.
 */
#ifndef _DFG_RUN_FIFO_H
#define _DFG_RUN_FIFO_H

#include <errno.h>
#include <stdlib.h>
#include <linux/dfg.h>

struct run_fifo {
	struct dfg_desc	*d;
	unsigned int	cap;		/* power of two, or 0 */
	unsigned int	head, tail;	/* free-running */
};

static inline unsigned int run_fifo_len(const struct run_fifo *f)
{
	return f->tail - f->head;
}

static inline int run_fifo_push(struct run_fifo *f, const struct dfg_desc *d)
{
	if (run_fifo_len(f) == f->cap) {
		unsigned int cap = f->cap ? f->cap * 2 : 64, i;
		struct dfg_desc *n = malloc(sizeof(*n) * cap);

		if (!n)
			return -ENOMEM;
		for (i = 0; i < run_fifo_len(f); i++)
			n[i] = f->d[(f->head + i) & (f->cap - 1)];
		free(f->d);
		f->d = n;
		f->tail = run_fifo_len(f);
		f->head = 0;
		f->cap = cap;
	}
	f->d[f->tail++ & (f->cap - 1)] = *d;
	return 0;
}

static inline struct dfg_desc *run_fifo_peek(const struct run_fifo *f)
{
	return &f->d[f->head & (f->cap - 1)];
}

/* Up to @max descriptors from the head that do not wrap around. */
static inline unsigned int run_fifo_span(const struct run_fifo *f,
					 unsigned int max)
{
	unsigned int n = run_fifo_len(f);
	unsigned int to_end = f->cap - (f->head & (f->cap - 1));

	if (n > to_end)
		n = to_end;
	return n < max ? n : max;
}

static inline void run_fifo_drop(struct run_fifo *f, unsigned int n)
{
	f->head += n;
}

static inline void run_fifo_free(struct run_fifo *f)
{
	free(f->d);
	f->d = NULL;
	f->cap = f->head = f->tail = 0;
}

#endif /* _DFG_RUN_FIFO_H */
