// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/* Test plugin: a shared object without DFG_PLUGIN_ENTRY. */
int dfg_plugin_other(void);

int dfg_plugin_other(void)
{
	return 0;
}
