// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * Test plugin: a type of ABI version 1, as plugins built before
 * parameter declarations are: names only. It loads; dfg plan warns that
 * its values go unchecked. (Built with today's header, but nothing past
 * version 1's fields may be read from it.)
 */
#include <dfg/component.h>

static int pass(struct dfg_comp *c, unsigned int port,
		const struct dfg_elem *e)
{
	(void)port;
	return dfg_emit(c, 0, e);
}

static const char *const params[] = { "level", NULL };

static const struct dfg_comp_type legacy = {
	.abi = 1, .name = "test_legacy",
	.flags = DFG_COMP_FOLDABLE,
	.min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
	.params = params,
	.compute = pass,
};

static const struct dfg_comp_type *const types[] = { &legacy, NULL };

const struct dfg_comp_type *const *dfg_plugin_types(void)
{
	return types;
}
