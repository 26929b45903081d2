// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/* Test plugin: a type built for another ABI version; none may load. */
#include <dfg/component.h>

static int pass(struct dfg_comp *c, unsigned int port,
		const struct dfg_elem *e)
{
	(void)port;
	return dfg_emit(c, 0, e);
}

static const struct dfg_comp_type good = {
	.abi = DFG_COMP_ABI_VERSION, .name = "test_abi_good",
	.min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
	.compute = pass,
};

static const struct dfg_comp_type bad = {
	.abi = DFG_COMP_ABI_VERSION + 1, .name = "test_abi_bad",
	.min_in = 1, .max_in = 1, .min_out = 1, .max_out = 1,
	.compute = pass,
};

static const struct dfg_comp_type *const types[] = { &good, &bad, NULL };

const struct dfg_comp_type *const *dfg_plugin_types(void)
{
	return types;
}
