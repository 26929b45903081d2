// SPDX-License-Identifier: GPL-2.0
/* dfgctl stats: /sys/kernel/dfg as "name value" lines. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dfgctl.h"
#include "json.h"

static const char *const sysfs_top[] = {
	"version", "api_version", "features", "clients", "parked",
};

/*
 * The prefetch's counters and the traffic gate's settings (prefetch/,
 * kmod/prefetch.c, kmod/pf_traffic.c).
 */
static const char *const sysfs_prefetch[] = {
	"hits", "misses", "local", "replica", "bytes", "reads", "inflight",
	"evictions", "errors", "spec_issued", "spec_gated", "puts",
	"traffic_threshold", "traffic_interval_ms",
};

/*
 * prefetch/traffic, one peer's link a line: "prefetch/traffic <line>"
 * each, or with @js the member "traffic": [{peer, ifindex, ifname,
 * bytes_per_s, bytes, state, spec_issued, spec_gated}]. Returns 0 or
 * -errno.
 */
static int print_traffic(const char *dir, struct json *js)
{
	char path[PATH_MAX], line[256], ifname[64], state[16];
	unsigned long long rate, bytes, issued, gated;
	unsigned int peer;
	int ifindex;
	FILE *f;

	snprintf(path, sizeof(path), "%s/prefetch/traffic", dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (js)
		json_arr_begin(js, "traffic");
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!js) {
			printf("prefetch/traffic %s\n", line);
			continue;
		}
		if (sscanf(line, "%u %d %63s %llu %llu %15s %llu %llu", &peer,
			   &ifindex, ifname, &rate, &bytes, state, &issued,
			   &gated) != 8)
			continue;
		json_obj_begin(js, NULL);
		json_u64(js, "peer", peer);
		json_u64(js, "ifindex", ifindex > 0 ? (unsigned int)ifindex : 0);
		json_str(js, "ifname", ifname);
		json_u64(js, "bytes_per_s", rate);
		json_u64(js, "bytes", bytes);
		json_str(js, "state", state);
		json_u64(js, "spec_issued", issued);
		json_u64(js, "spec_gated", gated);
		json_obj_end(js);
	}
	if (js)
		json_arr_end(js);
	fclose(f);
	return 0;
}

/*
 * Prints "<name> <first line of dir/name>", or with @js the member
 * "<key>": value; returns 0 or -errno.
 */
static int print_sysfs_file(const char *dir, const char *name,
			    const char *key, struct json *js)
{
	char line[256];
	int err = ctl_read_sysfs_line(dir, name, line, sizeof(line));

	if (err)
		return err;
	if (js)
		json_auto(js, key, line);
	else
		printf("%s %s\n", name, line);
	return 0;
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json",	no_argument,	NULL, 'j' },
		{ "help",	no_argument,	NULL, 'h' },
		{ }
	};
	const char *dir = getenv("DFG_SYSFS");
	char path[PATH_MAX], what[PATH_MAX + 16];
	struct json j, *js = NULL;
	struct dirent **ents;
	int c, i, n, err, ret = EXIT_OK;

	FOR_EACH_OPT(c, argc, argv, "jh", opts) {
		switch (c) {
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
		return ctl_usage_error("stats: unexpected argument '%s'",
				       argv[optind]);

	if (!dir || !*dir)
		dir = DFG_SYSFS_DIR;
	if (access(dir, F_OK))
		return ctl_fail_errno(dir, errno);

	snprintf(path, sizeof(path), "%s/stats", dir);
	n = scandir(path, &ents, ctl_not_hidden, alphasort);
	if (n < 0)
		return ctl_fail_errno(path, errno);

	/* {"version":..., "clients":..., "stats":{"<name>":...}} */
	json_init(&j, stdout);
	if (js)
		json_obj_begin(js, NULL);
	for (i = 0; i < (int)ARRAY_SIZE(sysfs_top); i++) {
		err = print_sysfs_file(dir, sysfs_top[i], sysfs_top[i], js);
		if (err) {
			snprintf(what, sizeof(what), "%s/%s", dir,
				 sysfs_top[i]);
			ret = ctl_fail(what, strerror(-err), false);
		}
	}

	if (js)
		json_obj_begin(js, "stats");
	for (i = 0; i < n; i++) {
		char name[NAME_MAX + 8];

		snprintf(name, sizeof(name), "stats/%s", ents[i]->d_name);
		err = print_sysfs_file(dir, name, ents[i]->d_name, js);
		if (err) {
			snprintf(what, sizeof(what), "%s/%s", dir, name);
			ret = ctl_fail(what, strerror(-err), false);
		}
		free(ents[i]);
	}
	free(ents);
	if (js) {
		json_obj_end(js);
		json_obj_begin(js, "prefetch");
	}
	for (i = 0; i < (int)ARRAY_SIZE(sysfs_prefetch); i++) {
		char name[64];

		snprintf(name, sizeof(name), "prefetch/%s", sysfs_prefetch[i]);
		err = print_sysfs_file(dir, name, sysfs_prefetch[i], js);
		if (err) {
			snprintf(what, sizeof(what), "%s/%s", dir, name);
			ret = ctl_fail(what, strerror(-err), false);
		}
	}
	err = print_traffic(dir, js);
	if (err) {
		snprintf(what, sizeof(what), "%s/prefetch/traffic", dir);
		ret = ctl_fail(what, strerror(-err), false);
	}
	if (js) {
		json_obj_end(js);
		json_obj_end(js);
		json_finish(js);
	}
	return ret;
}
