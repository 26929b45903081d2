/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dfg(1): one program, one file per subcommand. A subcommand is a
 * function taking the arguments after its name (argv[0] is the name) and
 * returning the exit status; list it in dfg.c's table.
 */
#ifndef _DFG_TOOL_H
#define _DFG_TOOL_H

/* Exit statuses of every subcommand. */
enum {
	DFG_EXIT_OK	= 0,
	DFG_EXIT_FAIL	= 1,	/* the job or graph failed */
	DFG_EXIT_USAGE	= 2,	/* bad command line */
};

int dfg_cmd_plan(int argc, char **argv);
int dfg_cmd_run(int argc, char **argv);
int dfg_cmd_graph(int argc, char **argv);
int dfg_cmd_plans(int argc, char **argv);

/* hub.c: dfg graph serve and dfg graph sample. */
int dfg_graph_serve(int argc, char **argv);
int dfg_graph_sample(int argc, char **argv);
int dfg_graph_kv_serve(int argc, char **argv);

/* graph.c: the usage lines of dfg graph's commands. */
extern const char dfg_graph_usage[];
/* plans.c: dfg plans' usage lines. */
extern const char dfg_plans_usage[];
/* plans.c: a plan store's error (of dfg_plan_store_open()) in words. */
const char *dfg_tool_store_err(int err);

/* dfg_comp_load() of --plugin SO, with the error on stderr; 0 or -1. */
int dfg_tool_load_plugin(const char *path);

/*
 * The value @arg of numeric option @opt: decimal digits only, in [@min,
 * @max]. Returns 0 and *@out, or -1 after saying what is wrong.
 */
int dfg_tool_parse_uint(const char *opt, const char *arg,
			unsigned long long min, unsigned long long max,
			unsigned long long *out);

/*
 * After dfg_run() of @graph failed with @err: when the device node is
 * missing, says how to load the module or run in the test VM.
 */
void dfg_tool_device_hint(int err, const char *graph);

struct dfg_run_summary;
/*
 * stats_json.c: @sum as JSON to @path ("-": stdout), replacing it at
 * once; the error on stderr; 0 or -errno.
 */
int dfg_tool_stats_json(const char *path, const char *graph,
			const struct dfg_run_summary *sum);

/* "dfg: <fmt>\n" on stderr. */
void dfg_tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* _DFG_TOOL_H */
