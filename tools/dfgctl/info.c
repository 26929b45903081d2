// SPDX-License-Identifier: GPL-2.0
/* dfgctl info: GET_INFO over ioctl, io_uring or generic netlink. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dfg/events.h>

#include "dfgctl.h"
#include "json.h"

static const struct {
	__u64		bit;
	const char	*name;
} feature_names[] = {
	{ DFG_F_URING_CMD,	"uring_cmd" },
	{ DFG_F_ASYNC,		"async" },
	{ DFG_F_NETLINK,	"netlink" },
};

/* "features: 0x7 uring_cmd,async,netlink"; unknown bits as hex items. */
static void print_features(__u64 features)
{
	const char *sep = " ";
	__u64 rest = features;
	size_t i;

	printf("features: 0x%llx", (unsigned long long)features);
	for (i = 0; i < ARRAY_SIZE(feature_names); i++) {
		if (!(features & feature_names[i].bit))
			continue;
		printf("%s%s", sep, feature_names[i].name);
		rest &= ~feature_names[i].bit;
		sep = ",";
	}
	while (rest) {
		__u64 bit = rest & -rest;

		printf("%s0x%llx", sep, (unsigned long long)bit);
		rest &= ~bit;
		sep = ",";
	}
	putchar('\n');
}

/* "features": the mask, and "feature_names": the known bits' names. */
static void json_features(struct json *j, __u64 features)
{
	size_t i;

	json_u64(j, "features", features);
	json_arr_begin(j, "feature_names");
	for (i = 0; i < ARRAY_SIZE(feature_names); i++)
		if (features & feature_names[i].bit)
			json_str(j, NULL, feature_names[i].name);
	json_arr_end(j);
}

static void print_info(const struct dfg_info *info, bool json)
{
	char version[sizeof(info->version) + 1];
	struct json j;

	snprintf(version, sizeof(version), "%.*s", (int)sizeof(info->version),
		 info->version);
	if (!json) {
		printf("version: %s\n", version);
		printf("api_version: %u\n", info->api_version);
		print_features(info->features);
		printf("nr_cmds: %u\n", info->nr_cmds);
		printf("uring_inline_max: %u\n", info->uring_inline_max);
		printf("max_parked: %u\n", info->max_parked);
		printf("monitor_ms: %u\n", info->monitor_ms);
		return;
	}
	json_init(&j, stdout);
	json_obj_begin(&j, NULL);
	json_str(&j, "version", version);
	json_u64(&j, "api_version", info->api_version);
	json_features(&j, info->features);
	json_u64(&j, "nr_cmds", info->nr_cmds);
	json_u64(&j, "uring_inline_max", info->uring_inline_max);
	json_u64(&j, "max_parked", info->max_parked);
	json_u64(&j, "monitor_ms", info->monitor_ms);
	json_obj_end(&j);
	json_finish(&j);
}

/* GET_INFO of the generic netlink family (libdfg's dfg_module_info()). */
static int nl_info(bool json)
{
	struct dfg_module_info mi;
	struct json j;
	int ret;

	ret = dfg_module_info(&mi);
	if (ret < 0)
		return ctl_fail("netlink GET_INFO", strerror(-ret),
				ret == -ENOENT);
	if (!json) {
		printf("version: %s\n", mi.version);
		printf("api_version: %u\n", mi.api_version);
		print_features(mi.features);
		if (mi.attrs & (1U << DFG_NL_A_CLIENTS))
			printf("clients: %u\n", mi.clients);
		if (mi.attrs & (1U << DFG_NL_A_PARKED))
			printf("parked: %u\n", mi.parked);
		return EXIT_OK;
	}
	json_init(&j, stdout);
	json_obj_begin(&j, NULL);
	json_str(&j, "version", mi.version);
	json_u64(&j, "api_version", mi.api_version);
	json_features(&j, mi.features);
	if (mi.attrs & (1U << DFG_NL_A_CLIENTS))
		json_u64(&j, "clients", mi.clients);
	if (mi.attrs & (1U << DFG_NL_A_PARKED))
		json_u64(&j, "parked", mi.parked);
	json_obj_end(&j);
	json_finish(&j);
	return EXIT_OK;
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "uring",	no_argument,	NULL, 'u' },
		{ "netlink",	no_argument,	NULL, 'n' },
		{ "json",	no_argument,	NULL, 'j' },
		{ "help",	no_argument,	NULL, 'h' },
		{ }
	};
	bool uring = false, netlink = false, json = false;
	struct dfg_info info;
	struct dfg *d;
	int c, ret;

	FOR_EACH_OPT(c, argc, argv, "unjh", opts) {
		switch (c) {
		case 'u':
			uring = true;
			break;
		case 'n':
			netlink = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			return ctl_help_requested();
		default:
			return ctl_bad_option(argv);
		}
	}
	if (optind < argc)
		return ctl_usage_error("info: unexpected argument '%s'",
				       argv[optind]);
	if (uring && netlink)
		return ctl_usage_error("info: --uring and --netlink exclude each other");

	if (netlink)
		return nl_info(json);

	ret = ctl_open_device(&d, uring ? 0 : DFG_OPEN_NO_RING);
	if (ret)
		return ret;
	if (uring) {
		info = (struct dfg_info){ .size = sizeof(info) };
		ret = dfg_uring_cmd(d, DFG_IOC_GET_INFO, &info, NULL);
	} else {
		ret = dfg_info(d, &info);
	}
	dfg_close(d);
	if (ret < 0)
		return ctl_fail_errno(uring ? "GET_INFO (io_uring)" :
				      "GET_INFO (ioctl)", -ret);
	/*
	 * A dfg module always reports its API; other devices (/dev/null
	 * accepts any uring_cmd) leave the struct empty.
	 */
	if (!info.api_version)
		return ctl_fail(uring ? "GET_INFO (io_uring)" :
				"GET_INFO (ioctl)",
				"empty reply: not a dfg device?", false);
	print_info(&info, json);
	return EXIT_OK;
}
