// SPDX-License-Identifier: GPL-2.0
/* dfgctl monitor: the module's netlink events. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "nl.h"

static const char *const event_names[__DFG_EV_MAX] = {
	[DFG_EV_CLIENT_OPEN]	= "client_open",
	[DFG_EV_CLIENT_CLOSE]	= "client_close",
	[DFG_EV_CMD_CANCELED]	= "cmd_canceled",
};

struct monitor {
	int		family;
	unsigned long	want;		/* events to print, 0: no limit */
	unsigned long	seen;		/* events printed */
};

static int monitor_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[DFG_NL_A_MAX + 1];
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct monitor *m = arg;
	__u32 ev, pid = 0, cmd = 0;

	if (nlh->nlmsg_type != m->family)
		return NL_SKIP;
	if (genlmsg_parse(nlh, 0, tb, DFG_NL_A_MAX, ctl_nl_policy) < 0)
		return NL_SKIP;
	if (genlmsg_hdr(nlh)->cmd != DFG_NL_CMD_EVENT || !tb[DFG_NL_A_EVENT])
		return NL_SKIP;
	if (m->want && m->seen >= m->want)
		return NL_STOP;

	ev = nla_get_u32(tb[DFG_NL_A_EVENT]);
	if (tb[DFG_NL_A_PID])
		pid = nla_get_u32(tb[DFG_NL_A_PID]);
	if (tb[DFG_NL_A_CMD])
		cmd = nla_get_u32(tb[DFG_NL_A_CMD]);

	if (ev < __DFG_EV_MAX && event_names[ev])
		printf("event=%s", event_names[ev]);
	else
		printf("event=unknown_%u", ev);
	printf(" pid=%u cmd=0x%x\n", pid, cmd);
	fflush(stdout);
	m->seen++;
	return NL_OK;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int cmd_monitor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count",	required_argument,	NULL, 'c' },
		{ "timeout",	required_argument,	NULL, 't' },
		{ "help",	no_argument,		NULL, 'h' },
		{ }
	};
	struct monitor m = { 0 };
	double timeout = 0, deadline = 0;
	unsigned long long count;
	struct nl_ctx ctx;
	struct pollfd pfd;
	int c, ret, grp;
	char *end;

	FOR_EACH_OPT(c, argc, argv, "c:t:h", opts) {
		switch (c) {
		case 'c':
			if (!ctl_parse_u64(optarg, &count) || !count ||
			    count > ULONG_MAX)
				return ctl_usage_error(
					"monitor: bad count '%s'", optarg);
			m.want = count;
			break;
		case 't':
			errno = 0;
			timeout = strtod(optarg, &end);
			if (errno || *end || !*optarg || !(timeout > 0))
				return ctl_usage_error(
					"monitor: bad timeout '%s'", optarg);
			break;
		case 'h':
			return ctl_help_requested();
		default:
			return ctl_bad_option(argv);
		}
	}
	if (optind < argc)
		return ctl_usage_error("monitor: unexpected argument '%s'",
				       argv[optind]);

	ret = ctl_nl_open(&ctx, 0);
	if (ret)
		return ret;
	m.family = ctx.family;

	grp = genl_ctrl_resolve_grp(ctx.sk, DFG_GENL_NAME,
				    DFG_GENL_MCGRP_EVENTS);
	if (grp < 0) {
		ret = ctl_fail_nl("resolve multicast group "
				  DFG_GENL_MCGRP_EVENTS, grp);
		goto out;
	}
	/* Multicast messages carry no sequence numbers of ours. */
	nl_socket_disable_seq_check(ctx.sk);
	nl_socket_modify_cb(ctx.sk, NL_CB_VALID, NL_CB_CUSTOM, monitor_cb, &m);
	ret = nl_socket_add_membership(ctx.sk, grp);
	if (ret < 0) {
		ret = ctl_fail_nl("join multicast group " DFG_GENL_MCGRP_EVENTS,
				  ret);
		goto out;
	}
	fputs("listening\n", stderr);
	fflush(stderr);

	if (timeout > 0)
		deadline = now_s() + timeout;
	pfd = (struct pollfd){ .fd = nl_socket_get_fd(ctx.sk),
			       .events = POLLIN };
	while (!m.want || m.seen < m.want) {
		int wait_ms = -1;

		if (deadline) {
			double left = deadline - now_s();

			if (left <= 0)
				break;
			wait_ms = (int)(left * 1000) + 1;
		}
		ret = poll(&pfd, 1, wait_ms);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			ret = ctl_fail_errno("poll", errno);
			goto out;
		}
		if (!ret)
			continue;
		ret = nl_recvmsgs_default(ctx.sk);
		/* Events dropped on a full socket buffer: go on. */
		if (ret == -NLE_NOMEM) {
			fprintf(stderr, "dfgctl: monitor: events lost\n");
			continue;
		}
		if (ret < 0 && ret != -NLE_AGAIN && ret != -NLE_INTR) {
			ret = ctl_fail_nl("receive events", ret);
			goto out;
		}
	}
	ret = m.want && m.seen < m.want ? EXIT_ERR : EXIT_OK;
	if (ret)
		fprintf(stderr, "dfgctl: monitor: timeout after %lu of %lu events\n",
			m.seen, m.want);
out:
	ctl_nl_close(&ctx);
	return ret;
}
