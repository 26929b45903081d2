// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/* Test plugin: a new type and one named like a built-in; none may load. */
#include <dfg/component.h>

static int pass(struct dfg_comp *c, unsigned int port,
		const struct dfg_elem *e)
{
	(void)port;
	return dfg_emit(c, 0, e);
}

static const struct dfg_comp_type fresh = {
	.abi = DFG_COMP_ABI_VERSION, .name = "test_clash_fresh",
	.min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
	.compute = pass,
};

static const struct dfg_comp_type sort = {
	.abi = DFG_COMP_ABI_VERSION, .name = "sort",
	.min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
	.compute = pass,
};

static const struct dfg_comp_type *const types[] = { &fresh, &sort, NULL };

const struct dfg_comp_type *const *dfg_plugin_types(void)
{
	return types;
}
