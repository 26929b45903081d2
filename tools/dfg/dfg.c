// SPDX-License-Identifier: GPL-2.0
/*
 * dfg(1): plan and run dataflow graphs. Dispatches to one function per
 * subcommand; adding one is a line in subcmds[] (and its file).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <dfg/component.h>

#include "dfg.h"

static const struct subcmd {
	const char	*name;
	int		(*fn)(int argc, char **argv);
	const char	*usage;
} subcmds[] = {
	{ "plan", dfg_cmd_plan,
	  "plan GRAPH.dot [--no-fold] [--plugin SO]... [--any-types]\n"
	  "          [-o PLAN.dot] [--png PLAN.png]" },
	{ "run", dfg_cmd_run,
	  "run GRAPH.dot [--no-fold] [--plugin SO]... [--resume]\n"
	  "          [--checkpoint-every N] [--state-dir DIR] [--progress] [-q] [-v]" },
};

void dfg_tool_err(const char *fmt, ...)
{
	va_list ap;

	fputs("dfg: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int dfg_tool_load_plugin(const char *path)
{
	char err[512] = "";
	int ret = dfg_comp_load(path, err, sizeof(err));

	if (ret < 0) {	/* else the number of types it registered */
		dfg_tool_err("--plugin %s: %s", path, err[0] ? err : strerror(-ret));
		return -1;
	}
	return 0;
}

static void usage(FILE *f)
{
	size_t i;

	fputs("usage:\n", f);
	for (i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		fprintf(f, "  dfg %s\n", subcmds[i].usage);
	fputs("See dfg(1).\n", f);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return DFG_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return DFG_EXIT_OK;
	}
	for (i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		if (!strcmp(argv[1], subcmds[i].name))
			return subcmds[i].fn(argc - 1, argv + 1);
	dfg_tool_err("unknown command '%s'", argv[1]);
	usage(stderr);
	return DFG_EXIT_USAGE;
}
