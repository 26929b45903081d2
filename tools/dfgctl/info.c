// SPDX-License-Identifier: GPL-2.0
/* dfgctl info: GET_INFO over ioctl, io_uring or generic netlink. */
#include <stdio.h>

#include "nl.h"

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

static void print_info(const struct dfg_info *info)
{
	printf("version: %.*s\n", (int)sizeof(info->version), info->version);
	printf("api_version: %u\n", info->api_version);
	print_features(info->features);
	printf("nr_cmds: %u\n", info->nr_cmds);
	printf("uring_inline_max: %u\n", info->uring_inline_max);
	printf("max_parked: %u\n", info->max_parked);
	printf("monitor_ms: %u\n", info->monitor_ms);
}

struct nl_info_reply {
	int		family;
	bool		got;
	__u32		api_version, clients, parked;
	__u64		features;
	bool		has_clients, has_parked, complete;
	char		version[64];
};

static int nl_info_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[DFG_NL_A_MAX + 1];
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nl_info_reply *r = arg;

	if (nlh->nlmsg_type != r->family)
		return NL_SKIP;
	if (genlmsg_parse(nlh, 0, tb, DFG_NL_A_MAX, ctl_nl_policy) < 0)
		return NL_SKIP;
	if (genlmsg_hdr(nlh)->cmd != DFG_NL_CMD_GET_INFO)
		return NL_SKIP;

	r->got = true;
	r->complete = tb[DFG_NL_A_API_VERSION] && tb[DFG_NL_A_FEATURES] &&
		      tb[DFG_NL_A_VERSION];
	if (!r->complete)
		return NL_SKIP;
	r->api_version = nla_get_u32(tb[DFG_NL_A_API_VERSION]);
	r->features = nla_get_u64(tb[DFG_NL_A_FEATURES]);
	nla_strlcpy(r->version, tb[DFG_NL_A_VERSION], sizeof(r->version));
	r->has_clients = tb[DFG_NL_A_CLIENTS];
	if (r->has_clients)
		r->clients = nla_get_u32(tb[DFG_NL_A_CLIENTS]);
	r->has_parked = tb[DFG_NL_A_PARKED];
	if (r->has_parked)
		r->parked = nla_get_u32(tb[DFG_NL_A_PARKED]);
	return NL_OK;
}

static int nl_info(void)
{
	struct nl_info_reply r = { 0 };
	struct nl_ctx ctx;
	struct nl_msg *msg;
	int ret;

	ret = ctl_nl_open(&ctx, NL_REPLY_TIMEOUT_MS);
	if (ret)
		return ret;
	r.family = ctx.family;

	msg = nlmsg_alloc();
	if (!msg) {
		ret = ctl_fail_nl("netlink message", -NLE_NOMEM);
		goto out;
	}
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, ctx.family, 0, 0,
			 DFG_NL_CMD_GET_INFO, DFG_GENL_VERSION)) {
		nlmsg_free(msg);
		ret = ctl_fail_nl("netlink message", -NLE_NOMEM);
		goto out;
	}
	nl_socket_modify_cb(ctx.sk, NL_CB_VALID, NL_CB_CUSTOM, nl_info_cb, &r);
	/* Sends with NLM_F_ACK, reads the reply, then waits for the ack. */
	ret = nl_send_sync(ctx.sk, msg);
	if (ret < 0) {
		ret = ctl_fail_nl("netlink GET_INFO", ret);
		goto out;
	}
	if (!r.got || !r.complete) {
		ret = ctl_fail("netlink GET_INFO", r.got ? "incomplete reply" :
			       "no reply", false);
		goto out;
	}

	printf("version: %s\n", r.version);
	printf("api_version: %u\n", r.api_version);
	print_features(r.features);
	if (r.has_clients)
		printf("clients: %u\n", r.clients);
	if (r.has_parked)
		printf("parked: %u\n", r.parked);
	ret = EXIT_OK;
out:
	ctl_nl_close(&ctx);
	return ret;
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "uring",	no_argument,	NULL, 'u' },
		{ "netlink",	no_argument,	NULL, 'n' },
		{ "help",	no_argument,	NULL, 'h' },
		{ }
	};
	bool uring = false, netlink = false;
	struct dfg_info info;
	struct dfg *d;
	int c, ret;

	FOR_EACH_OPT(c, argc, argv, "unh", opts) {
		switch (c) {
		case 'u':
			uring = true;
			break;
		case 'n':
			netlink = true;
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
		return nl_info();

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
	print_info(&info);
	return EXIT_OK;
}
