// SPDX-License-Identifier: GPL-2.0
/*
 * dfg run: plan a graph and run it (libdfg's dfg_run(), <dfg/run.h>).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dfg/run.h>

#include "dfg.h"

int dfg_cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "no-fold", no_argument, NULL, 'n' },
		{ "resume", no_argument, NULL, 'r' },
		{ "checkpoint-every", required_argument, NULL, 'c' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "progress", no_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "plugin", required_argument, NULL, 'P' },
		{ "stats-json", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[1024] = "";
	struct dfg_run_opts o = {
		.size = sizeof(o),
		.log = stderr,
		.err = err,
		.errlen = sizeof(err),
	};
	unsigned long long num;
	const char *stats_json = NULL;
	struct dfg_run_summary sum;
	bool quiet = false;
	int c, r;

	/* a progress line when someone watches */
	if (isatty(STDERR_FILENO))
		o.flags |= DFG_RUN_PROGRESS;
	while ((c = getopt_long(argc, argv, "nrc:d:pqvh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'n':
			o.flags |= DFG_RUN_NO_FOLD;
			break;
		case 'r':
			o.flags |= DFG_RUN_RESUME;
			break;
		case 'c':
			if (dfg_tool_parse_uint("--checkpoint-every", optarg,
						1, UINT64_MAX, &num))
				return DFG_EXIT_USAGE;
			o.checkpoint_every = num;
			break;
		case 'd':
			o.state_dir = optarg;
			break;
		case 'p':
			o.flags |= DFG_RUN_PROGRESS;
			break;
		case 'q':
			quiet = true;
			break;
		case 'v':
			o.flags |= DFG_RUN_VERBOSE;
			break;
		case 'P':
			if (dfg_tool_load_plugin(optarg))
				return DFG_EXIT_FAIL;
			break;
		case 'J':
			stats_json = optarg;
			break;
		case 'h':
			printf("usage: dfg run GRAPH.dot [--no-fold] [--plugin SO]... [--resume]\n"
			       "           [--checkpoint-every N] [--state-dir DIR] [--progress] [-q] [-v]\n"
			       "           [--stats-json FILE]\n");
			return DFG_EXIT_OK;
		default:
			return DFG_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		dfg_tool_err("run: one graph file expected");
		return DFG_EXIT_USAGE;
	}
	if (quiet) {
		o.log = NULL;
		o.flags &= ~DFG_RUN_PROGRESS;
	}
	r = dfg_run(argv[optind], &o, &sum);
	if (r) {
		dfg_tool_err("%s", err[0] ? err : strerror(-r));
		dfg_tool_device_hint(r, argv[optind]);
		return DFG_EXIT_FAIL;
	}
	if (stats_json && dfg_tool_stats_json(stats_json, argv[optind], &sum))
		return DFG_EXIT_FAIL;
	return DFG_EXIT_OK;
}
