// SPDX-License-Identifier: GPL-2.0
/* dfgctl top: live view of the scheduler's sets and components. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dfgctl.h"
#include "json.h"

/* CPU time of one set or component at the previous refresh. */
struct top_prev {
	char			key[3 * NAME_MAX + 3];	/* "<g>/set<id>[/comp<i>]" */
	unsigned long long	cpu_ns;
};

static struct top_prev *top_prev;
static size_t top_nr_prev, top_nr_next;
static struct top_prev *top_next;

/* CPU%% of @key since the last refresh, @dt_ns ago; remembered for the next. */
static double top_cpu(const char *key, unsigned long long cpu_ns,
		      unsigned long long dt_ns)
{
	unsigned long long before = cpu_ns;
	struct top_prev *n;
	size_t i;

	for (i = 0; i < top_nr_prev; i++)
		if (!strcmp(top_prev[i].key, key))
			before = top_prev[i].cpu_ns;
	n = realloc(top_next, (top_nr_next + 1) * sizeof(*n));
	if (n) {
		top_next = n;
		snprintf(n[top_nr_next].key, sizeof(n->key), "%s", key);
		n[top_nr_next++].cpu_ns = cpu_ns;
	}
	if (!dt_ns || cpu_ns < before)
		return 0;
	return 100.0 * (double)(cpu_ns - before) / (double)dt_ns;
}

static unsigned long long top_u64(const char *dir, const char *name)
{
	char v[64];

	if (ctl_read_sysfs_line(dir, name, v, sizeof(v)))
		return 0;
	return strtoull(v, NULL, 10);
}

/*
 * The set's line; with @js, the set as a JSON object instead. @gen: its
 * graph's plan generation, "" when the runner set none.
 */
static void top_set_line(struct json *js, const char *gid, const char *gen,
			 const char *ent, const char *sdir, const char *name,
			 const char *state, double cpu)
{
	if (!js) {
		printf("%-5s %-4s %-8s %-18s %-8s %8llu %8llu %6.1f %12llu\n",
		       gid, *gen ? gen : "-", ent + 3, name, state,
		       top_u64(sdir, "runs"),
		       top_u64(sdir, "waits"), cpu,
		       top_u64(sdir, "cpu_ns") / 1000000);
		return;
	}
	json_obj_begin(js, NULL);
	json_auto(js, "graph", gid);
	if (*gen)
		json_auto(js, "plan_gen", gen);
	json_auto(js, "set", ent + 3);
	json_str(js, "name", name);
	json_str(js, "state", state);
	json_u64(js, "runs", top_u64(sdir, "runs"));
	json_u64(js, "waits", top_u64(sdir, "waits"));
	json_double(js, "cpu_pct", cpu);
	json_u64(js, "cpu_ns", top_u64(sdir, "cpu_ns"));
	json_arr_begin(js, "components");
}

/* A component's line; with @js, an object of the set's "components". */
static void top_comp_line(struct json *js, const char *ent, const char *cdir,
			  const char *name, double cpu)
{
	if (!js) {
		printf("      %-8s   %-16s %6.1f%% in %llu (%llu B) "
		       "out %llu (%llu B)\n", ent + 4, name, cpu,
		       top_u64(cdir, "elements_in"), top_u64(cdir, "bytes_in"),
		       top_u64(cdir, "elements_out"),
		       top_u64(cdir, "bytes_out"));
		return;
	}
	json_obj_begin(js, NULL);
	json_auto(js, "comp", ent + 4);
	json_str(js, "name", name);
	json_double(js, "cpu_pct", cpu);
	json_u64(js, "cpu_ns", top_u64(cdir, "cpu_ns"));
	json_u64(js, "elements_in", top_u64(cdir, "elements_in"));
	json_u64(js, "bytes_in", top_u64(cdir, "bytes_in"));
	json_u64(js, "elements_out", top_u64(cdir, "elements_out"));
	json_u64(js, "bytes_out", top_u64(cdir, "bytes_out"));
	json_obj_end(js);
}

/* One set and its components. */
static void top_set(struct json *js, const char *gid, const char *gen,
		    const char *sdir, const char *ent, unsigned long long dt_ns)
{
	char name[128], state[32], key[3 * NAME_MAX + 3], cdir[PATH_MAX];
	struct dirent **comps;
	int i, n;

	if (ctl_read_sysfs_line(sdir, "name", name, sizeof(name)) ||
	    ctl_read_sysfs_line(sdir, "state", state, sizeof(state)))
		return;		/* gone meanwhile */
	snprintf(key, sizeof(key), "%s/%s", gid, ent);
	top_set_line(js, gid, gen, ent, sdir, name, state,
		     top_cpu(key, top_u64(sdir, "cpu_ns"), dt_ns));
	n = ctl_scan_numbered(sdir, "comp", &comps);
	for (i = 0; i < n; i++) {
		ctl_path_join(cdir, sizeof(cdir), sdir, comps[i]->d_name);
		if (ctl_read_sysfs_line(cdir, "name", name, sizeof(name)))
			continue;
		snprintf(key, sizeof(key), "%s/%s/%s", gid, ent,
			 comps[i]->d_name);
		top_comp_line(js, comps[i]->d_name, cdir, name,
			      top_cpu(key, top_u64(cdir, "cpu_ns"), dt_ns));
	}
	if (n >= 0)
		ctl_free_ents(comps, n);
	if (js) {
		json_arr_end(js);
		json_obj_end(js);
	}
}

/*
 * One refresh: every set of every graph; with @js, one JSON object
 * {"interval_ns":<dt>,"sets":[...]} on one line.
 */
static int top_once(unsigned long long dt_ns, struct json *js)
{
	char gdir[PATH_MAX], path[PATH_MAX], sdir[PATH_MAX], gen[32];
	struct dirent **graphs, **sets;
	int i, j, ng, ns;

	if (!ctl_path_join(gdir, sizeof(gdir), ctl_sysfs_dir(), "graphs"))
		return -ENAMETOOLONG;
	ng = ctl_scan_numbered(gdir, "", &graphs);
	if (ng < 0)
		return ng;
	if (js) {
		json_init(js, stdout);
		json_obj_begin(js, NULL);
		json_u64(js, "interval_ns", dt_ns);
		json_arr_begin(js, "sets");
	} else {
		printf("%-5s %-4s %-8s %-18s %-8s %8s %8s %6s %12s\n",
		       "GRAPH", "GEN", "SET", "NAME", "STATE", "RUNS", "WAITS",
		       "CPU%", "CPU_MS");
	}
	for (i = 0; i < ng; i++) {
		ctl_path_join(path, sizeof(path), gdir, graphs[i]->d_name);
		ns = ctl_scan_numbered(path, "set", &sets);
		if (ns < 0)
			continue;	/* graph died meanwhile */
		/* the runner's plan generation; none (or an older module) */
		if (ctl_read_sysfs_line(path, "plan_gen", gen, sizeof(gen)))
			gen[0] = '\0';
		for (j = 0; j < ns; j++) {
			ctl_path_join(sdir, sizeof(sdir), path,
				      sets[j]->d_name);
			top_set(js, graphs[i]->d_name, gen, sdir,
				sets[j]->d_name, dt_ns);
		}
		ctl_free_ents(sets, ns);
	}
	ctl_free_ents(graphs, ng);
	if (js) {
		json_arr_end(js);
		json_obj_end(js);
		json_finish(js);
	}
	free(top_prev);
	top_prev = top_next;
	top_nr_prev = top_nr_next;
	top_next = NULL;
	top_nr_next = 0;
	return 0;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval",	required_argument,	NULL, 'i' },
		{ "count",	required_argument,	NULL, 'c' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "help",	no_argument,		NULL, 'h' },
		{ }
	};
	unsigned long long interval = 1000, count = 0, n, last = 0, t;
	bool tty = isatty(STDOUT_FILENO);
	struct json j, *js = NULL;
	int c, err;

	FOR_EACH_OPT(c, argc, argv, "i:c:jh", opts) {
		switch (c) {
		case 'i':
			if (!ctl_parse_u64(optarg, &interval) || !interval ||
			    interval > 3600000)
				return ctl_usage_error("top: bad interval '%s'",
						       optarg);
			break;
		case 'c':
			if (!ctl_parse_u64(optarg, &count) || !count)
				return ctl_usage_error("top: bad count '%s'",
						       optarg);
			break;
		case 'j':
			js = &j;
			break;
		case 'h':
			return ctl_help_requested();
		default:
			return ctl_bad_option(argv);
		}
	}
	if (optind < argc)
		return ctl_usage_error("top: unexpected argument '%s'",
				       argv[optind]);
	for (n = 0; !count || n < count; n++) {
		if (n)
			usleep(interval * 1000);
		/* JSON: one line per refresh, never a redraw. */
		if (tty && !js)
			fputs("\033[H\033[2J", stdout);
		else if (n && !js)
			putchar('\n');
		t = now_ns();
		err = top_once(last ? t - last : 0, js);
		last = t;
		if (err)
			return ctl_fail(ctl_sysfs_dir(), strerror(-err),
					err == -ENOENT);
		fflush(stdout);
	}
	free(top_prev);
	return EXIT_OK;
}
