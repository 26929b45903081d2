// SPDX-License-Identifier: GPL-2.0
/*
 * dfg(1): plan and run dataflow graphs; make and partition data graphs. Dispatches to one function per
 * subcommand; adding one is a line in subcmds[] (and its file).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dfg/component.h>
#include <dfg/dfg.h>

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
	{ "graph", dfg_cmd_graph, dfg_graph_usage },
	{ "plans", dfg_cmd_plans, dfg_plans_usage },
};

/* The command line, for the hint after a failed run; main() renames
 * argv[1] (the subcommand) for getopt, tool_sub keeps it. */
static int tool_argc;
static char **tool_argv;
static const char *tool_sub;

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

void dfg_tool_device_hint(int err, const char *graph)
{
	const char *dev = getenv("DFG_DEVICE");
	int i;

	if (!dev || !*dev)
		dev = DFG_DEVICE_PATH;
	/* The graph was read, so a missing file is the device node. */
	if ((err != -ENOENT && err != -ENODEV && err != -ENXIO) ||
	    !access(dev, F_OK) || access(graph, R_OK))
		return;
	fprintf(stderr,
		"dfg: %s is missing: the dfg module is not loaded. Load it:\n"
		"dfg:   sudo modprobe dfg     (installed: make install or make dkms-install)\n"
		"dfg:   sudo insmod ./dfg.ko  (in the dfg source tree, after make)\n"
		"dfg: or, in the source tree, run in the test VM, which loads ./dfg.ko:\n"
		"dfg:   tools/vm/dfg-vm --", dev);
	for (i = 0; i < tool_argc; i++) {
		const char *a = i == 1 ? tool_sub : tool_argv[i];

		fprintf(stderr, strpbrk(a, " \t'\"$") ? " '%s'" : " %s", a);
	}
	fputc('\n', stderr);
}

static void usage(FILE *f)
{
	size_t i;

	fputs("usage:\n", f);
	for (i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		fprintf(f, "  dfg %s\n", subcmds[i].usage);
	fputs("  dfg --version\n"
	      "See dfg(1).\n", f);
}

int main(int argc, char **argv)
{
	char name[32];
	size_t i;
	int ret;

	tool_argc = argc;
	tool_argv = argv;
	if (argc < 2) {
		usage(stderr);
		return DFG_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return DFG_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("dfg %s\n", dfg_version());
		return DFG_EXIT_OK;
	}
	for (i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++) {
		if (strcmp(argv[1], subcmds[i].name))
			continue;
		/* getopt's messages then begin "dfg plan: " */
		snprintf(name, sizeof(name), "dfg %s", subcmds[i].name);
		tool_sub = argv[1];
		argv[1] = name;
		ret = subcmds[i].fn(argc - 1, argv + 1);
		if (ret == DFG_EXIT_USAGE)
			fprintf(stderr, "usage: dfg %s\nTry 'dfg %s --help'; see dfg(1).\n",
				subcmds[i].usage, subcmds[i].name);
		return ret;
	}
	dfg_tool_err("unknown command '%s'", argv[1]);
	usage(stderr);
	return DFG_EXIT_USAGE;
}
