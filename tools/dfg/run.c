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

#include <dfg/rules.h>
#include <dfg/run.h>

#include "dfg.h"

/* The rule files of --rules ("default": the built-in set), in order. */
struct rules_args {
	const char	**files;
	unsigned int	n;
};

static void rules_warn(void *arg, const char *msg)
{
	(void)arg;
	dfg_tool_err("rules: %s", msg);
}

/*
 * The interpreter for --rules: the files merged, module events when the
 * module lets us read them, decisions kept in the run's state directory.
 * Returns 0 or a DFG_EXIT_* code after saying why.
 */
static int rules_setup(const struct rules_args *ra, bool explain,
		       const char *graph, const char *state_dir,
		       struct dfg_rules **rp)
{
	struct dfg_rules_error e;
	struct dfg_rules *r;
	char *dir = NULL;
	unsigned int i;
	int ret;

	ret = dfg_rules_new(&r, 0);
	if (ret) {
		dfg_tool_err("rules: %s", strerror(-ret));
		return DFG_EXIT_FAIL;
	}
	dfg_rules_set_warn(r, rules_warn, NULL);
	if (explain)
		dfg_rules_set_explain(r, dfg_rules_explain_print, stderr);
	for (i = 0; i < ra->n; i++) {
		memset(&e, 0, sizeof(e));
		ret = strcmp(ra->files[i], "default") ?
		      dfg_rules_load_file(r, ra->files[i], &e) :
		      dfg_rules_load_default(r, &e);
		if (ret == -EINVAL) {
			dfg_tool_err("%s:%u:%u: %s", e.file, e.line, e.col,
				     e.msg);
			goto fail;
		}
		if (ret) {
			dfg_tool_err("--rules %s: %s", ra->files[i],
				     strerror(-ret));
			goto fail;
		}
	}
	/* feedback events are a bonus: without the module's family, none */
	dfg_rules_subscribe(r, 0);
	if (!state_dir && asprintf(&dir, "%s.state", graph) < 0)
		goto fail;
	ret = dfg_rules_store_open(r, state_dir ? state_dir : dir);
	if (ret)
		dfg_tool_err("rules: plan store in %s: %s; deciding without it",
			     state_dir ? state_dir : dir,
			     dfg_tool_store_err(ret));
	free(dir);
	*rp = r;
	return 0;
fail:
	dfg_rules_free(r);
	return DFG_EXIT_FAIL;
}

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
		{ "rules", required_argument, NULL, 'R' },
		{ "explain", no_argument, NULL, 'E' },
		{ "replan-every", required_argument, NULL, 'M' },
		{ "workers", required_argument, NULL, 'w' },
		{ "isolate", no_argument, NULL, 'i' },
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
	struct rules_args ra = { 0 };
	struct dfg_rules *rules = NULL;
	struct dfg_replanner rp;
	bool quiet = false, explain = false;
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
		case 'R': {
			const char **v = realloc(ra.files,
						 (ra.n + 1) * sizeof(*v));

			if (!v) {
				free(ra.files);
				return DFG_EXIT_FAIL;
			}
			ra.files = v;
			ra.files[ra.n++] = optarg;
			break;
		}
		case 'E':
			explain = true;
			break;
		case 'M':
			if (dfg_tool_parse_uint("--replan-every", optarg, 1,
						UINT32_MAX, &num))
				return DFG_EXIT_USAGE;
			o.replan_ms = num;
			break;
		case 'w':
			if (dfg_tool_parse_uint("--workers", optarg, 1,
						DFG_RUN_WORKERS_MAX, &num))
				return DFG_EXIT_USAGE;
			o.workers = num;
			break;
		case 'i':
			o.flags |= DFG_RUN_ISOLATE;
			break;
		case 'h':
			printf("usage: dfg run GRAPH.dot [--no-fold] [--plugin SO]... [--resume]\n"
			       "           [--checkpoint-every N] [--state-dir DIR] [--progress] [-q] [-v]\n"
			       "           [--stats-json FILE] [--rules FILE]... [--explain]\n"
			       "           [--replan-every MS] [--workers N | --isolate]\n"
			       "\n"
			       "Which mode runs: by default a worker pool per phase, one process whose\n"
			       "N worker threads (--workers N, default one per CPU this process may run\n"
			       "on) ask the kernel set scheduler for the next runnable set and run it for\n"
			       "a quantum; sets may outnumber workers. A set with a plugin's component\n"
			       "(it may crash) or an exec component (it forks) runs in a process of its\n"
			       "own beside the pool. --isolate runs every set instance in a process of\n"
			       "its own (the mode of dfg 0.8 and before). -v prints the mode and which\n"
			       "sets have their own process.\n");
			free(ra.files);
			return DFG_EXIT_OK;
		default:
			free(ra.files);
			return DFG_EXIT_USAGE;
		}
	}
	if (o.workers && (o.flags & DFG_RUN_ISOLATE)) {
		dfg_tool_err("run: --workers sizes the pool, which --isolate does not use");
		free(ra.files);
		return DFG_EXIT_USAGE;
	}
	if (optind != argc - 1) {
		dfg_tool_err("run: one graph file expected");
		free(ra.files);
		return DFG_EXIT_USAGE;
	}
	if (explain && !ra.n) {
		dfg_tool_err("run: --explain explains --rules");
		free(ra.files);
		return DFG_EXIT_USAGE;
	}
	if (ra.n) {
		r = rules_setup(&ra, explain, argv[optind], o.state_dir,
				&rules);
		free(ra.files);
		if (r)
			return r;
		rp = dfg_rules_replanner(rules);
		o.replanner = &rp;
	}
	if (quiet) {
		o.log = NULL;
		o.flags &= ~DFG_RUN_PROGRESS;
	}
	r = dfg_run(argv[optind], &o, &sum);
	dfg_rules_free(rules);
	if (r) {
		dfg_tool_err("%s", err[0] ? err : strerror(-r));
		dfg_tool_device_hint(r, argv[optind]);
		return DFG_EXIT_FAIL;
	}
	if (stats_json && dfg_tool_stats_json(stats_json, argv[optind], &sum))
		return DFG_EXIT_FAIL;
	return DFG_EXIT_OK;
}
