// SPDX-License-Identifier: GPL-2.0
/*
 * A test plugin for run_test.sh: a component that emits the element it
 * received more than once, which dfg run must copy (the first emission
 * may forward the received buffer to the next set), and one that keeps an
 * element past its call, which dfg run must refuse.
 *
 *   emit_again mode=twice	emits each element twice in a row
 *   emit_again mode=after	emits it, then FILL lines "fill", waits 2 ms
 *				(a consumer that got the buffer would
 *				have freed it by then), then emits it again;
 *				checks that its input did not change meanwhile
 *   emit_again mode=stale	emits the element of the call before (kept
 *				as a pointer, which the API forbids)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dfg/component.h>

#define FILL	70	/* more than a send batch: the forwarded one goes out */

enum { TWICE, AFTER, STALE };

struct again {
	int			mode;
	struct dfg_elem		prev;	/* STALE: the last element, not copied */
};

static const char *const modes[] = { "twice", "after", "stale", NULL };

static const struct dfg_param_decl again_decls[] = {
	{ .name = "mode", .kind = DFG_PARAM_ENUM,
	  .flags = DFG_PARAM_REQUIRED, .choices = modes,
	  .help = "twice, after or stale" },
	{ NULL },
};

static int again_init(struct dfg_comp *c, void **state)
{
	const char *m = dfg_comp_param(c, "mode", NULL);
	struct again *a = calloc(1, sizeof(*a));
	int i;

	if (!a)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	a->mode = -1;
	for (i = 0; m && modes[i]; i++)
		if (!strcmp(m, modes[i]))
			a->mode = i;
	if (a->mode < 0) {
		free(a);
		return dfg_comp_error(c, -EINVAL, "mode: twice, after or stale");
	}
	*state = a;
	return 0;
}

static void again_fini(struct dfg_comp *c)
{
	free(dfg_comp_state(c));
}

static int again_after(struct dfg_comp *c, const struct dfg_elem *e)
{
	struct timespec ts = { .tv_nsec = 2000000 };
	struct dfg_elem f = { .data = "fill", .len = 4 };
	char *copy = malloc(e->len ? e->len : 1);
	int ret, i;

	if (!copy)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	memcpy(copy, e->data, e->len);
	ret = dfg_emit(c, 0, e);
	for (i = 0; !ret && i < FILL; i++)
		ret = dfg_emit(c, 0, &f);
	if (!ret)
		nanosleep(&ts, NULL);
	if (!ret && memcmp(copy, e->data, e->len))
		ret = dfg_comp_error(c, -EIO, "input changed during compute");
	free(copy);
	return ret ? ret : dfg_emit(c, 0, e);
}

static int again_compute(struct dfg_comp *c, unsigned int port,
			 const struct dfg_elem *e)
{
	struct again *a = dfg_comp_state(c);
	int ret;

	(void)port;
	switch (a->mode) {
	case TWICE:
		ret = dfg_emit(c, 0, e);
		return ret ? ret : dfg_emit(c, 0, e);
	case AFTER:
		return again_after(c, e);
	default:
		ret = a->prev.data ? dfg_emit(c, 0, &a->prev) : 0;
		a->prev = *e;
		return ret;
	}
}

static const struct dfg_comp_type again_type = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "emit_again",
	.summary = "emits its input again (a test of dfg run's copies)",
	.flags = DFG_COMP_FOLDABLE,
	.min_in = 1, .max_in = 1,
	.min_out = 1, .max_out = 1,
	.param_decls = again_decls,
	.init = again_init,
	.fini = again_fini,
	.compute = again_compute,
};

static const struct dfg_comp_type *const types[] = { &again_type, NULL };

const struct dfg_comp_type *const *dfg_plugin_types(void)
{
	return types;
}
