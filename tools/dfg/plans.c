// SPDX-License-Identifier: GPL-2.0
/*
 * dfg plans list | show ID | forget ID|--all: the rule interpreter's plan
 * store in a state directory (libdfg's dfg_plan_store_*() do the work;
 * this file parses and prints).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dfg/rules.h>

#include "dfg.h"
#include "json.h"

#define PLANS_USAGE \
	"plans list [--json] (--state-dir DIR | GRAPH.dot)\n" \
	"  dfg plans show ID [--json] (--state-dir DIR | GRAPH.dot)\n" \
	"  dfg plans forget ID|--all (--state-dir DIR | GRAPH.dot)"

const char dfg_plans_usage[] = PLANS_USAGE;

const char *dfg_tool_store_err(int err)
{
	switch (err) {
	case -ENOENT:
		return "no plan store (no run with --rules used this state "
		       "directory yet)";
	case -EBADMSG:
		return "plans.db is not a plan store: damaged, or not an "
		       "SQLite database (left as it is; move it away to "
		       "start a new store)";
	case -EPROTO:
		return "plans.db is an SQLite database of another program or "
		       "of a newer dfg (left as it is)";
	case -EBUSY:
		return "plans.db stayed locked by another process";
	default:
		return strerror(-err);
	}
}

static const char *const edit_ops[] = {
	[DFG_EDIT_DEGREE] = "degree",
	[DFG_EDIT_UNFOLD] = "unfold",
	[DFG_EDIT_FOLD] = "fold",
	[DFG_EDIT_SUBSTITUTE] = "substitute",
	[DFG_EDIT_PARAM] = "param",
};

static const char *op_name(enum dfg_edit_op op)
{
	if ((unsigned int)op < sizeof(edit_ops) / sizeof(edit_ops[0]) &&
	    edit_ops[op])
		return edit_ops[op];
	return "?";
}

/* "degree part 4", "substitute s extsort", "param c k=v", "fold c" */
static void print_edit(FILE *f, const struct dfg_plan_edit *e)
{
	fprintf(f, "%s %s", op_name(e->op), e->comp);
	if (e->op == DFG_EDIT_DEGREE)
		fprintf(f, " %u", e->degree);
	else if (e->op == DFG_EDIT_SUBSTITUTE)
		fprintf(f, " %s", e->type ? e->type : "");
	else if (e->op == DFG_EDIT_PARAM)
		fprintf(f, " %s=%s", e->key ? e->key : "",
			e->value ? e->value : "");
}

static void fmt_time(long long t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) ||
	    !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "%lld", t);
}

struct out {
	bool		json;
	bool		list;	/* a list: a table, or a JSON array */
	unsigned int	n;
	struct json	j;
};

static void put_json(struct json *j, const struct dfg_plan_record *rec)
{
	char id[20], t[32];
	unsigned int i;

	snprintf(id, sizeof(id), "%016llx", rec->id);
	json_obj_begin(j, NULL);
	json_str(j, "id", id);
	json_str(j, "graph", rec->graph);
	json_str(j, "conditions", rec->conditions);
	fmt_time(rec->created, t, sizeof(t));
	json_str(j, "created", t);
	fmt_time(rec->used, t, sizeof(t));
	json_str(j, "used", t);
	json_u64(j, "hits", rec->hits);
	json_arr_begin(j, "edits");
	for (i = 0; i < rec->nedits; i++) {
		const struct dfg_plan_edit *e = &rec->edits[i];

		json_obj_begin(j, NULL);
		json_str(j, "op", op_name(e->op));
		json_str(j, "comp", e->comp);
		if (e->op == DFG_EDIT_DEGREE)
			json_u64(j, "degree", e->degree);
		if (e->type)
			json_str(j, "type", e->type);
		if (e->key)
			json_str(j, "key", e->key);
		if (e->value)
			json_str(j, "value", e->value);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static int print_rec(void *arg, const struct dfg_plan_record *rec)
{
	struct out *o = arg;
	unsigned int i;
	char t[32];

	o->n++;
	if (o->json) {
		put_json(&o->j, rec);
		return 0;
	}
	if (o->list) {
		if (o->n == 1)
			printf("%-16s  %-12s %6s  %-20s  %s\n", "ID", "GRAPH",
			       "HITS", "USED", "DECISION");
		fmt_time(rec->used, t, sizeof(t));
		printf("%016llx  %-12s %6llu  %-20s  ", rec->id,
		       *rec->graph ? rec->graph : "-", rec->hits, t);
		for (i = 0; i < rec->nedits; i++) {
			fputs(i ? "; " : "", stdout);
			print_edit(stdout, &rec->edits[i]);
		}
		putchar('\n');
		return 0;
	}
	printf("plan %016llx\n", rec->id);
	printf("  graph:      %s\n", *rec->graph ? rec->graph : "-");
	printf("  conditions: %s\n", rec->conditions);
	fmt_time(rec->created, t, sizeof(t));
	printf("  created:    %s\n", t);
	fmt_time(rec->used, t, sizeof(t));
	printf("  used:       %s\n", t);
	printf("  hits:       %llu\n", rec->hits);
	for (i = 0; i < rec->nedits; i++) {
		printf("  change      ");
		print_edit(stdout, &rec->edits[i]);
		putchar('\n');
	}
	return 0;
}

/* A plan id as list prints it: 1 to 16 hex digits, not 0. */
static int parse_id(const char *s, unsigned long long *id)
{
	char *end;

	errno = 0;
	*id = strtoull(s, &end, 16);
	if (!*s || *end || errno || !*id || strlen(s) > 16 ||
	    strspn(s, "0123456789abcdefABCDEF") != strlen(s)) {
		dfg_tool_err("plans: '%s' is no plan id (16 hex digits, as "
			     "'dfg plans list' prints them)", s);
		return -1;
	}
	return 0;
}

int dfg_cmd_plans(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "state-dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *state_dir = NULL, *verb, *graph = NULL, *idarg = NULL;
	struct out o = { .json = false };
	struct dfg_plan_store *s;
	unsigned long long id = 0;
	bool all = false;
	char *dir = NULL;
	int c, ret, nargs;

	while ((c = getopt_long(argc, argv, "d:jah", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			state_dir = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'a':
			all = true;
			break;
		case 'h':
			printf("usage: dfg %s\nSee dfg(1).\n",
			       dfg_plans_usage);
			return DFG_EXIT_OK;
		default:
			return DFG_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		dfg_tool_err("plans: which: list, show ID or forget ID|--all?");
		return DFG_EXIT_USAGE;
	}
	verb = argv[optind++];
	nargs = argc - optind;
	if (!strcmp(verb, "show") || (!strcmp(verb, "forget") && !all)) {
		if (nargs < 1) {
			dfg_tool_err("plans %s: needs a plan ID%s", verb,
				     *verb == 'f' ? " or --all" : "");
			return DFG_EXIT_USAGE;
		}
		idarg = argv[optind++];
		nargs--;
	} else if (strcmp(verb, "list") && strcmp(verb, "forget")) {
		dfg_tool_err("plans: unknown command '%s'", verb);
		return DFG_EXIT_USAGE;
	}
	if (nargs > 1 || (nargs && state_dir) || (!nargs && !state_dir)) {
		dfg_tool_err("plans %s: needs --state-dir DIR or a GRAPH.dot "
			     "(its state directory GRAPH.dot.state), one of "
			     "them", verb);
		return DFG_EXIT_USAGE;
	}
	if (nargs)
		graph = argv[optind];
	if (all && strcmp(verb, "forget")) {
		dfg_tool_err("plans %s: --all is for forget", verb);
		return DFG_EXIT_USAGE;
	}
	if (o.json && !strcmp(verb, "forget")) {
		dfg_tool_err("plans forget: --json is for list and show");
		return DFG_EXIT_USAGE;
	}
	if (idarg && parse_id(idarg, &id))
		return DFG_EXIT_USAGE;
	/* dfg run's default state directory */
	if (graph && asprintf(&dir, "%s.state", graph) < 0)
		return DFG_EXIT_FAIL;
	if (!state_dir)
		state_dir = dir;
	ret = dfg_plan_store_open(state_dir, 0, &s);
	if (ret) {
		dfg_tool_err("plans: %s: %s", state_dir,
			     dfg_tool_store_err(ret));
		free(dir);
		return DFG_EXIT_FAIL;
	}
	if (*verb == 'f') {
		ret = dfg_plan_store_forget(s, id);
		if (!ret)
			printf(all ? "forgot every plan\n" :
			       "forgot plan %016llx\n", id);
	} else {
		o.list = *verb == 'l';
		if (o.json) {
			json_init(&o.j, stdout);
			if (o.list)
				json_arr_begin(&o.j, NULL);
		}
		ret = dfg_plan_store_each(s, id, print_rec, &o);
		if (o.json && !ret) {
			if (o.list)
				json_arr_end(&o.j);
			json_finish(&o.j);
		}
		if (!ret && o.list && !o.json && !o.n)
			printf("no plans stored in %s\n", state_dir);
	}
	if (ret == -ENOENT)
		dfg_tool_err("plans %s: no plan %016llx in %s", verb, id,
			     state_dir);
	else if (ret)
		dfg_tool_err("plans %s: %s: %s", verb, state_dir,
			     dfg_tool_store_err(ret));
	dfg_plan_store_close(s);
	free(dir);
	return ret ? DFG_EXIT_FAIL : DFG_EXIT_OK;
}
