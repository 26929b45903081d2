// SPDX-License-Identifier: GPL-2.0
/*
 * dfg plan: load a graph, fold it (procedure 400) or not, print the sets,
 * write the plan as DOT (sets as clusters) and render it as PNG with
 * graphviz's dot(1).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dfg/component.h>
#include <dfg/flow.h>
#include <dfg/run.h>

#include "dfg.h"

extern char **environ;

static void print_flows(const struct dfg_flow *fg, const char *what,
			unsigned int n, const unsigned int *flows)
{
	unsigned int i;

	printf("      %-4s", what);
	if (!n)
		fputs(" -", stdout);
	for (i = 0; i < n; i++) {
		const struct dfg_flow_edge *f = &fg->flows[flows[i]];

		printf("%s %s->%s (%s%s%s%s)", i ? "," : "",
		       fg->comps[f->src].name, fg->comps[f->dst].name,
		       dfg_flow_kind_name(f->kind), f->key ? " " : "",
		       f->key ? f->key : "", "");
	}
	putchar('\n');
}

static void print_plan(const struct dfg_plan *p)
{
	const struct dfg_flow *fg = p->graph;
	unsigned int ph, k, m;

	printf("graph %s (%s): %u component%s, %u flow%s\n",
	       *fg->name ? fg->name : "-", fg->file,
	       fg->ncomps, fg->ncomps == 1 ? "" : "s",
	       fg->nflows, fg->nflows == 1 ? "" : "s");
	printf("%s: %u set%s, %u instance%s\n",
	       p->folded ? "folded (procedure 400)" : "not folded",
	       p->nsets, p->nsets == 1 ? "" : "s",
	       p->ninstances, p->ninstances == 1 ? "" : "s");
	for (ph = 0; ph < p->nphases; ph++) {
		printf("phase %u:\n", p->phases[ph].phase);
		for (k = 0; k < p->phases[ph].nsets; k++) {
			const struct dfg_plan_set *s =
				&p->sets[p->phases[ph].sets[k]];

			printf("  %s: degree %u%s:", s->name, s->degree,
			       s->foldable ? "" : ", not foldable");
			for (m = 0; m < s->nmembers; m++)
				printf(" %s%s", fg->comps[s->members[m]].name,
				       m ? "" : " (root)");
			putchar('\n');
			print_flows(fg, "in", s->nin_flows, s->in_flows);
			print_flows(fg, "out", s->nout_flows, s->out_flows);
		}
	}
}

static int write_dot_file(const struct dfg_plan *p, const char *path)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f) {
		dfg_tool_err("%s: %s", path, strerror(errno));
		return -1;
	}
	ret = dfg_plan_write_dot(p, f);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (ret)
		dfg_tool_err("%s: %s", path, strerror(-ret));
	return ret ? -1 : 0;
}

/* Pipes the plan's DOT into "dot -Tpng -o @png". */
static int render_png(const struct dfg_plan *p, const char *png)
{
	char *argv[] = { "dot", "-Tpng", "-o", (char *)png, NULL };
	posix_spawn_file_actions_t fa;
	int pipefd[2], status, ret;
	pid_t pid;
	FILE *f;

	/* dot may exit early (bad path): see EPIPE, not die of SIGPIPE */
	signal(SIGPIPE, SIG_IGN);
	if (pipe(pipefd)) {
		dfg_tool_err("pipe: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[0], 0);
	posix_spawn_file_actions_addclose(&fa, pipefd[1]);
	ret = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[0]);
	if (ret) {
		close(pipefd[1]);
		dfg_tool_err("running dot (graphviz): %s", strerror(ret));
		return -1;
	}
	f = fdopen(pipefd[1], "w");
	if (!f) {
		close(pipefd[1]);
		ret = -errno;
	} else {
		ret = dfg_plan_write_dot(p, f);
		if (fclose(f) && !ret)
			ret = -EIO;
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		dfg_tool_err("dot -Tpng -o %s failed", png);
		return -1;
	}
	if (ret) {
		dfg_tool_err("writing the plan to dot: %s", strerror(-ret));
		return -1;
	}
	return 0;
}

/*
 * Types that declare no parameters (plugins of ABI version 1, or that
 * leave param_decls NULL): their values are only checked when they run.
 */
static void warn_undeclared(void)
{
	const struct dfg_comp_type **types;
	int i, n = dfg_comp_list(NULL, 0);

	if (n <= 0 || !(types = calloc(n, sizeof(*types))))
		return;
	n = dfg_comp_list(types, n);
	for (i = 0; i < n; i++)
		if (!dfg_comp_param_decls(types[i]))
			fprintf(stderr,
				"dfg: warning: type '%s' declares no parameters (ABI version %u): their values are checked only when it runs\n",
				types[i]->name, types[i]->abi);
	free(types);
}

int dfg_cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-fold",	no_argument,		NULL, 'n' },
		{ "output",	required_argument,	NULL, 'o' },
		{ "png",	required_argument,	NULL, 'p' },
		{ "plugin",	required_argument,	NULL, 'P' },
		{ "any-types",	no_argument,		NULL, 'A' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *png = NULL;
	struct dfg_flow_errors *errs = NULL;
	struct dfg_plan *plan = NULL;
	struct dfg_flow *fg = NULL;
	const struct dfg_flow_types *types = dfg_run_types();
	unsigned int flags = 0;
	int c, ret, status = DFG_EXIT_FAIL;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			flags |= DFG_PLAN_NO_FOLD;
			break;
		case 'o':
			out = optarg;
			break;
		case 'p':
			png = optarg;
			break;
		case 'P':
			if (dfg_tool_load_plugin(optarg))
				return DFG_EXIT_FAIL;
			break;
		case 'A':
			types = NULL;	/* abstract graphs: every type foldable */
			break;
		case 'h':
			printf("usage: dfg plan GRAPH.dot [--no-fold] [--plugin SO]... "
			       "[--any-types] [-o PLAN.dot] [--png PLAN.png]\n");
			return DFG_EXIT_OK;
		default:
			return DFG_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		dfg_tool_err("plan: one graph file expected");
		return DFG_EXIT_USAGE;
	}

	/* Checked against the registry (built-ins, --plugin types) unless
	 * --any-types: then any type, foldable unless the graph says not. */
	if (types)
		warn_undeclared();
	ret = dfg_flow_load(argv[optind], types, &fg, &errs);
	if (ret == -EINVAL && errs) {
		dfg_flow_errors_print(errs, stderr);
		dfg_tool_err("%s: %u error%s, nothing planned", argv[optind],
			     errs->n, errs->n == 1 ? "" : "s");
		dfg_flow_errors_free(errs);
		return DFG_EXIT_FAIL;
	}
	if (ret) {
		dfg_tool_err("%s: %s", argv[optind], strerror(-ret));
		return DFG_EXIT_FAIL;
	}
	ret = dfg_plan_build(fg, flags, &plan);
	if (ret) {
		dfg_tool_err("planning %s: %s", argv[optind], strerror(-ret));
		goto out;
	}
	print_plan(plan);
	fflush(stdout);
	if (out && write_dot_file(plan, out))
		goto out;
	if (png && render_png(plan, png))
		goto out;
	status = DFG_EXIT_OK;
out:
	dfg_plan_free(plan);
	dfg_flow_free(fg);
	return status;
}
