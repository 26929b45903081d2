// SPDX-License-Identifier: GPL-2.0
/*
 * dfg run --stats-json FILE: the run summary as one JSON object, written
 * to FILE.tmp and renamed over FILE, so that a reader (a textfile
 * collector's script run by cron) never sees half a file; "-" is stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dfg/run.h>

#include "dfg.h"
#include "json.h"

/* The summary's members, in <dfg/run.h>'s order. */
static void put_summary(struct json *j, const char *graph,
			const struct dfg_run_summary *s)
{
	json_obj_begin(j, NULL);
	json_str(j, "graph", graph);
	json_u64(j, "elements", s->elements);
	json_u64(j, "bytes", s->bytes);
	json_u64(j, "boundary", s->boundary);
	json_u64(j, "forwarded", s->forwarded);
	json_u64(j, "processes", s->processes);
	json_u64(j, "sets", s->sets);
	json_u64(j, "components", s->components);
	json_u64(j, "wall_ns", s->wall_ns);
	json_u64(j, "start_ns", s->start_ns);
	json_u64(j, "cpu_ns", s->cpu_ns);
	json_u64(j, "ctx_switches", s->ctx_switches);
	json_u64(j, "workers", s->workers);
	json_u64(j, "pooled", s->pooled);
	json_obj_end(j);
	json_finish(j);
}

int dfg_tool_stats_json(const char *path, const char *graph,
			const struct dfg_run_summary *sum)
{
	char tmp[4096];
	struct json j;
	FILE *f;

	if (!strcmp(path, "-")) {
		json_init(&j, stdout);
		put_summary(&j, graph, sum);
		return ferror(stdout) ? -EIO : 0;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		dfg_tool_err("--stats-json %s: %s", path,
			     strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	f = fopen(tmp, "w");
	if (!f) {
		dfg_tool_err("--stats-json %s: %s", tmp, strerror(errno));
		return -errno;
	}
	json_init(&j, f);
	put_summary(&j, graph, sum);
	if (ferror(f) | fclose(f)) {
		dfg_tool_err("--stats-json %s: %s", tmp, strerror(errno));
		remove(tmp);
		return -EIO;
	}
	if (rename(tmp, path)) {
		dfg_tool_err("--stats-json %s: %s", path, strerror(errno));
		remove(tmp);
		return -errno;
	}
	return 0;
}
