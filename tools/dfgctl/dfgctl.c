// SPDX-License-Identifier: GPL-2.0
/*
 * dfgctl: inspect the dfg module.
 *
 *   dfgctl info [--uring | --netlink]   GET_INFO over ioctl, io_uring or
 *                                       generic netlink, "key: value" lines
 *   dfgctl nop [--uring] [--async MS | --park] [VALUE]
 *   dfgctl stats                        /sys/kernel/dfg as "name value" lines
 *   dfgctl graphs                       live graphs, one row each
 *   dfgctl chans                        every channel's counters, one line
 *                                       each
 *   dfgctl objects                      every object (arena, region,
 *                                       channel) of every graph with its
 *                                       kind and counters, one line each
 *   dfgctl monitor [--count N] [--timeout SEC]
 *                                       netlink events, one line each
 *   dfgctl version | --help
 *
 * Exit status: 0 success, 1 runtime error ("dfgctl: <what>: <reason>" on
 * stderr), 2 usage error. monitor also exits 1 when --timeout expires before
 * --count events arrived.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>

#include <dfg/dfg.h>

#ifndef DFGCTL_VERSION
#define DFGCTL_VERSION	"0.1.0"
#endif

#define DFG_SYSFS_DIR		"/sys/kernel/" DFG_DEVICE_NAME
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define NL_REPLY_TIMEOUT_MS	5000

enum {
	EXIT_OK		= 0,
	EXIT_ERR	= 1,
	EXIT_USAGE	= 2,
};

static const char usage_text[] =
"usage: dfgctl <command> [options]\n"
"\n"
"commands:\n"
"  info [--uring | --netlink]  print the module's GET_INFO, one 'key: value'\n"
"                              per line; via ioctl by default, through\n"
"                              io_uring (--uring) or generic netlink\n"
"                              (--netlink)\n"
"  nop [--uring] [--async MS | --park] [VALUE]\n"
"                              run DFG_IOC_NOP and print the echo\n"
"  stats                       print /sys/kernel/dfg as 'name value' lines\n"
"  graphs                      list live graphs: id, name, owner uid:gid,\n"
"                              mode, objects, pages, attached\n"
"  chans                       one line per channel of every graph:\n"
"                              'graph=<id> name=<name> chan=<id> <counter>=\n"
"                              <value> ...' (depth, producers, consumer,\n"
"                              messages, bytes, hwm, full_stalls,\n"
"                              empty_stalls, parks, wakeups)\n"
"  objects                     one line per object of every graph, in id\n"
"                              order: 'graph=<id> name=<name> kind=<arena|\n"
"                              region|chan> id=<id> <counter>=<value> ...'\n"
"                              (arena: size, pages; region: size, pages,\n"
"                              writable, users; chan: as chans)\n"
"  monitor [--count N] [--timeout SEC]\n"
"                              print netlink events, one line each:\n"
"                              'event=<name> pid=<pid> cmd=0x<hex>'; says\n"
"                              'listening' on stderr once subscribed; exits\n"
"                              0 after N events, 1 if SEC seconds pass first\n"
"                              (0 on timeout without --count)\n"
"  top [--interval MS] [--count N]\n"
"                              live view of the scheduler's sets and their\n"
"                              components: state, runs, waits, CPU%% since\n"
"                              the last refresh, elements and bytes in and\n"
"                              out; every MS ms (default 1000), N times\n"
"                              (default: until interrupted; the screen is\n"
"                              redrawn only on a terminal)\n"
"  version                     print the dfgctl and libdfg versions\n"
"\n"
"environment:\n"
"  DFG_DEVICE  device node (default /dev/dfg)\n"
"  DFG_SYSFS   sysfs directory (default /sys/kernel/dfg)\n"
"\n"
"exit status: 0 ok, 1 runtime error, 2 usage error\n";

/* ---------------------------------------------------------------------- */
/* Messages */

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("dfgctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'dfgctl --help'.\n", stderr);
	return EXIT_USAGE;
}

/* "dfgctl: <what>: <reason>", with a hint when the module seems absent. */
static int fail(const char *what, const char *reason, bool absent)
{
	fprintf(stderr, "dfgctl: %s: %s\n", what, reason);
	if (absent)
		fputs("dfgctl: is the dfg module loaded?\n", stderr);
	return EXIT_ERR;
}

/* @err is a positive errno value. */
static int fail_errno(const char *what, int err)
{
	return fail(what, strerror(err), err == ENOENT || err == ENODEV);
}

/* @err is a negative libnl error (NLE_*). */
static int fail_nl(const char *what, int err)
{
	return fail(what, nl_geterror(err), err == -NLE_OBJ_NOTFOUND);
}

/* ---------------------------------------------------------------------- */
/* Parsing helpers */

static bool parse_u64(const char *s, unsigned long long *v)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

static bool parse_u32(const char *s, __u32 *v)
{
	unsigned long long x;

	if (!parse_u64(s, &x) || x > UINT32_MAX)
		return false;
	*v = x;
	return true;
}

/* Option parsing of one subcommand; argv[0] is the subcommand's name. */
#define FOR_EACH_OPT(c, argc, argv, shortopts, longopts)		\
	for (optind = 1, opterr = 0;					\
	     ((c) = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1;)

static int bad_option(char **argv)
{
	return usage_error("%s: bad or incomplete option '%s'", argv[0],
			   argv[optind - 1]);
}

static int help_requested(void)
{
	fputs(usage_text, stdout);
	return EXIT_OK;
}

/* ---------------------------------------------------------------------- */
/* info, nop */

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

static const char *device_path(void)
{
	const char *path = getenv("DFG_DEVICE");

	return path && *path ? path : DFG_DEVICE_PATH;
}

static int open_device(struct dfg **d, unsigned int flags)
{
	char what[PATH_MAX + 16];
	int ret;

	ret = dfg_open(d, flags);
	if (ret < 0) {
		snprintf(what, sizeof(what), "open %s", device_path());
		return fail_errno(what, -ret);
	}
	return EXIT_OK;
}

static int nl_info(void);

static int cmd_info(int argc, char **argv)
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
			return help_requested();
		default:
			return bad_option(argv);
		}
	}
	if (optind < argc)
		return usage_error("info: unexpected argument '%s'",
				   argv[optind]);
	if (uring && netlink)
		return usage_error("info: --uring and --netlink exclude each other");

	if (netlink)
		return nl_info();

	ret = open_device(&d, uring ? 0 : DFG_OPEN_NO_RING);
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
		return fail_errno(uring ? "GET_INFO (io_uring)" :
				  "GET_INFO (ioctl)", -ret);
	/*
	 * A dfg module always reports its API; other devices (/dev/null
	 * accepts any uring_cmd) leave the struct empty.
	 */
	if (!info.api_version)
		return fail(uring ? "GET_INFO (io_uring)" : "GET_INFO (ioctl)",
			    "empty reply: not a dfg device?", false);
	print_info(&info);
	return EXIT_OK;
}

static int cmd_nop(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "uring",	no_argument,		NULL, 'u' },
		{ "async",	required_argument,	NULL, 'a' },
		{ "park",	no_argument,		NULL, 'p' },
		{ "help",	no_argument,		NULL, 'h' },
		{ }
	};
	unsigned long long value = 0;
	__u32 flags = 0, delay_ms = 0;
	bool uring = false;
	__u64 echo = 0;
	struct dfg *d;
	int c, ret;

	FOR_EACH_OPT(c, argc, argv, "ua:ph", opts) {
		switch (c) {
		case 'u':
			uring = true;
			break;
		case 'a':
			if (!parse_u32(optarg, &delay_ms))
				return usage_error("nop: bad delay '%s'",
						   optarg);
			flags |= DFG_NOP_F_ASYNC;
			break;
		case 'p':
			flags |= DFG_NOP_F_PARK;
			break;
		case 'h':
			return help_requested();
		default:
			return bad_option(argv);
		}
	}
	if (optind < argc && !parse_u64(argv[optind++], &value))
		return usage_error("nop: bad value '%s'", argv[optind - 1]);
	if (optind < argc)
		return usage_error("nop: unexpected argument '%s'",
				   argv[optind]);

	ret = open_device(&d, uring ? 0 : DFG_OPEN_NO_RING);
	if (ret)
		return ret;
	if (uring) {
		struct dfg_nop nop = {
			.value		= value,
			.flags		= flags,
			.delay_ms	= delay_ms,
		};

		ret = dfg_uring_cmd(d, DFG_IOC_NOP, &nop, &echo);
	} else {
		ret = dfg_nop(d, value, flags, delay_ms, &echo);
	}
	dfg_close(d);
	if (ret < 0)
		return fail_errno(uring ? "NOP (io_uring)" : "NOP (ioctl)",
				  -ret);
	printf("echo: %llu\n", (unsigned long long)echo);
	return EXIT_OK;
}

/* ---------------------------------------------------------------------- */
/* Generic netlink */

static struct nla_policy dfg_nl_policy[DFG_NL_A_MAX + 1] = {
	[DFG_NL_A_API_VERSION]	= { .type = NLA_U32 },
	[DFG_NL_A_FEATURES]	= { .type = NLA_U64 },
	[DFG_NL_A_VERSION]	= { .type = NLA_STRING },
	[DFG_NL_A_CLIENTS]	= { .type = NLA_U32 },
	[DFG_NL_A_PARKED]	= { .type = NLA_U32 },
	[DFG_NL_A_EVENT]	= { .type = NLA_U32 },
	[DFG_NL_A_PID]		= { .type = NLA_U32 },
	[DFG_NL_A_CMD]		= { .type = NLA_U32 },
};

/* A generic netlink socket and the id of family "dfg". */
struct nl_ctx {
	struct nl_sock	*sk;
	int		family;
};

static void nl_ctx_close(struct nl_ctx *ctx)
{
	nl_socket_free(ctx->sk);
}

static int nl_ctx_open(struct nl_ctx *ctx, int rcv_timeout_ms)
{
	struct timeval tv = {
		.tv_sec		= rcv_timeout_ms / 1000,
		.tv_usec	= (rcv_timeout_ms % 1000) * 1000,
	};
	int ret;

	ctx->sk = nl_socket_alloc();
	if (!ctx->sk)
		return fail_nl("netlink socket", -NLE_NOMEM);
	ret = genl_connect(ctx->sk);
	if (ret < 0) {
		fail_nl("connect generic netlink", ret);
		goto out_free;
	}
	if (rcv_timeout_ms &&
	    setsockopt(nl_socket_get_fd(ctx->sk), SOL_SOCKET, SO_RCVTIMEO,
		       &tv, sizeof(tv))) {
		fail_errno("netlink SO_RCVTIMEO", errno);
		goto out_free;
	}
	ret = genl_ctrl_resolve(ctx->sk, DFG_GENL_NAME);
	if (ret < 0) {
		fail_nl("resolve generic netlink family " DFG_GENL_NAME, ret);
		goto out_free;
	}
	ctx->family = ret;
	return EXIT_OK;

out_free:
	nl_socket_free(ctx->sk);
	return EXIT_ERR;
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
	if (genlmsg_parse(nlh, 0, tb, DFG_NL_A_MAX, dfg_nl_policy) < 0)
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

	ret = nl_ctx_open(&ctx, NL_REPLY_TIMEOUT_MS);
	if (ret)
		return ret;
	r.family = ctx.family;

	msg = nlmsg_alloc();
	if (!msg) {
		ret = fail_nl("netlink message", -NLE_NOMEM);
		goto out;
	}
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, ctx.family, 0, 0,
			 DFG_NL_CMD_GET_INFO, DFG_GENL_VERSION)) {
		nlmsg_free(msg);
		ret = fail_nl("netlink message", -NLE_NOMEM);
		goto out;
	}
	nl_socket_modify_cb(ctx.sk, NL_CB_VALID, NL_CB_CUSTOM, nl_info_cb, &r);
	/* Sends with NLM_F_ACK, reads the reply, then waits for the ack. */
	ret = nl_send_sync(ctx.sk, msg);
	if (ret < 0) {
		ret = fail_nl("netlink GET_INFO", ret);
		goto out;
	}
	if (!r.got || !r.complete) {
		ret = fail("netlink GET_INFO", r.got ? "incomplete reply" :
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
	nl_ctx_close(&ctx);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* monitor */

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
	if (genlmsg_parse(nlh, 0, tb, DFG_NL_A_MAX, dfg_nl_policy) < 0)
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

static int cmd_monitor(int argc, char **argv)
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
			if (!parse_u64(optarg, &count) || !count ||
			    count > ULONG_MAX)
				return usage_error("monitor: bad count '%s'",
						   optarg);
			m.want = count;
			break;
		case 't':
			errno = 0;
			timeout = strtod(optarg, &end);
			if (errno || *end || !*optarg || !(timeout > 0))
				return usage_error("monitor: bad timeout '%s'",
						   optarg);
			break;
		case 'h':
			return help_requested();
		default:
			return bad_option(argv);
		}
	}
	if (optind < argc)
		return usage_error("monitor: unexpected argument '%s'",
				   argv[optind]);

	ret = nl_ctx_open(&ctx, 0);
	if (ret)
		return ret;
	m.family = ctx.family;

	grp = genl_ctrl_resolve_grp(ctx.sk, DFG_GENL_NAME,
				    DFG_GENL_MCGRP_EVENTS);
	if (grp < 0) {
		ret = fail_nl("resolve multicast group " DFG_GENL_MCGRP_EVENTS,
			      grp);
		goto out;
	}
	/* Multicast messages carry no sequence numbers of ours. */
	nl_socket_disable_seq_check(ctx.sk);
	nl_socket_modify_cb(ctx.sk, NL_CB_VALID, NL_CB_CUSTOM, monitor_cb, &m);
	ret = nl_socket_add_membership(ctx.sk, grp);
	if (ret < 0) {
		ret = fail_nl("join multicast group " DFG_GENL_MCGRP_EVENTS,
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
			ret = fail_errno("poll", errno);
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
			ret = fail_nl("receive events", ret);
			goto out;
		}
	}
	ret = m.want && m.seen < m.want ? EXIT_ERR : EXIT_OK;
	if (ret)
		fprintf(stderr, "dfgctl: monitor: timeout after %lu of %lu events\n",
			m.seen, m.want);
out:
	nl_ctx_close(&ctx);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* stats */

static const char *const sysfs_top[] = {
	"version", "api_version", "features", "clients", "parked",
};

/* First line of @dir/@name, without the newline, into @line; 0 or -errno. */
static int read_sysfs_line(const char *dir, const char *name, char *line,
			   size_t size)
{
	char path[PATH_MAX];
	FILE *f;
	int err = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(line, size, f)) {
		if (ferror(f))
			err = errno ? -errno : -EIO;
		line[0] = '\0';
	}
	fclose(f);
	if (err)
		return err;
	line[strcspn(line, "\n")] = '\0';
	return 0;
}

/* Prints "<name> <first line of dir/name>"; returns 0 or -errno. */
static int print_sysfs_file(const char *dir, const char *name)
{
	char line[256];
	int err = read_sysfs_line(dir, name, line, sizeof(line));

	if (!err)
		printf("%s %s\n", name, line);
	return err;
}

static int stats_filter(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

static int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help",	no_argument,	NULL, 'h' },
		{ }
	};
	const char *dir = getenv("DFG_SYSFS");
	char path[PATH_MAX], what[PATH_MAX + 16];
	struct dirent **ents;
	int c, i, n, err, ret = EXIT_OK;

	FOR_EACH_OPT(c, argc, argv, "h", opts) {
		switch (c) {
		case 'h':
			return help_requested();
		default:
			return bad_option(argv);
		}
	}
	if (optind < argc)
		return usage_error("stats: unexpected argument '%s'",
				   argv[optind]);

	if (!dir || !*dir)
		dir = DFG_SYSFS_DIR;
	if (access(dir, F_OK))
		return fail_errno(dir, errno);

	for (i = 0; i < (int)ARRAY_SIZE(sysfs_top); i++) {
		err = print_sysfs_file(dir, sysfs_top[i]);
		if (err) {
			snprintf(what, sizeof(what), "%s/%s", dir,
				 sysfs_top[i]);
			ret = fail(what, strerror(-err), false);
		}
	}

	snprintf(path, sizeof(path), "%s/stats", dir);
	n = scandir(path, &ents, stats_filter, alphasort);
	if (n < 0)
		return fail_errno(path, errno);
	for (i = 0; i < n; i++) {
		char name[NAME_MAX + 8];

		snprintf(name, sizeof(name), "stats/%s", ents[i]->d_name);
		err = print_sysfs_file(dir, name);
		if (err) {
			snprintf(what, sizeof(what), "%s/%s", dir, name);
			ret = fail(what, strerror(-err), false);
		}
		free(ents[i]);
	}
	free(ents);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* graphs, chans, objects */

/* Options of a subcommand that takes none; EXIT_OK to go on. */
static int no_options(int argc, char **argv, const char *cmd)
{
	static const struct option opts[] = {
		{ "help",	no_argument,	NULL, 'h' },
		{ }
	};
	int c;

	FOR_EACH_OPT(c, argc, argv, "h", opts) {
		switch (c) {
		case 'h':
			return help_requested() == EXIT_OK ? -1 : EXIT_USAGE;
		default:
			return bad_option(argv);
		}
	}
	if (optind < argc)
		return usage_error("%s: unexpected argument '%s'", cmd,
				   argv[optind]);
	return EXIT_OK;
}

/* @buf = "@a/@b"; false (and an empty @buf) if it does not fit. */
static bool path_join(char *buf, size_t size, const char *a, const char *b)
{
	if (snprintf(buf, size, "%s/%s", a, b) < (int)size)
		return true;
	buf[0] = '\0';
	return false;
}

static const char *sysfs_dir(void)
{
	const char *dir = getenv("DFG_SYSFS");

	return dir && *dir ? dir : DFG_SYSFS_DIR;
}

/* Entries "<prefix><number>" of a directory, in numeric order. */
static const char *num_prefix;

static int num_filter(const struct dirent *de)
{
	size_t n = strlen(num_prefix);
	const char *p = de->d_name + n;

	if (strncmp(de->d_name, num_prefix, n) || !*p)
		return 0;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

static int num_sort(const struct dirent **a, const struct dirent **b)
{
	size_t n = strlen(num_prefix);
	unsigned long x = strtoul((*a)->d_name + n, NULL, 10);
	unsigned long y = strtoul((*b)->d_name + n, NULL, 10);

	return x < y ? -1 : x > y;
}

/* scandir() of @dir for "<prefix><n>" entries; count or -errno. */
static int scan_numbered(const char *dir, const char *prefix,
			 struct dirent ***ents)
{
	int n;

	num_prefix = prefix;
	n = scandir(dir, ents, num_filter, num_sort);
	return n < 0 ? -errno : n;
}

static void free_ents(struct dirent **ents, int n)
{
	while (n > 0)
		free(ents[--n]);
	free(ents);
}

static const char *const graph_attrs[] = {
	"name", "uid", "gid", "mode", "objects", "pages", "attached",
};

static int cmd_graphs(int argc, char **argv)
{
	char gdir[PATH_MAX], path[PATH_MAX], owner[260];
	char v[ARRAY_SIZE(graph_attrs)][128];
	struct dirent **ents;
	int i, j, n, ret;

	ret = no_options(argc, argv, "graphs");
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (!path_join(gdir, sizeof(gdir), sysfs_dir(), "graphs"))
		return fail(sysfs_dir(), strerror(ENAMETOOLONG), false);
	n = scan_numbered(gdir, "", &ents);
	if (n < 0)
		return fail(gdir, strerror(-n), n == -ENOENT);
	printf("%-6s %-24s %-11s %-5s %7s %9s %8s\n", "ID", "NAME", "OWNER",
	       "MODE", "OBJECTS", "PAGES", "ATTACHED");
	for (i = 0; i < n; i++) {
		path_join(path, sizeof(path), gdir, ents[i]->d_name);
		for (j = 0; j < (int)ARRAY_SIZE(graph_attrs); j++)
			if (read_sysfs_line(path, graph_attrs[j], v[j],
					    sizeof(v[j])))
				strcpy(v[j], "?");	/* died meanwhile */
		if (snprintf(owner, sizeof(owner), "%s:%s", v[1], v[2]) < 0)
			owner[0] = '\0';
		printf("%-6s %-24s %-11s %-5s %7s %9s %8s\n",
		       ents[i]->d_name, v[0], owner, v[3], v[4], v[5], v[6]);
	}
	free_ents(ents, n);
	return EXIT_OK;
}

/* Counters of graphs/<id>/chan<cid>/, in the order of <linux/dfg.h>. */
static const char *const chan_attrs[] = {
	"depth", "producers", "consumer", "messages", "bytes", "hwm",
	"full_stalls", "empty_stalls", "parks", "wakeups",
};

/* Attributes of graphs/<id>/arena<aid>/ and region<rid>/, in that order. */
static const char *const arena_attrs[] = { "size", "pages" };
static const char *const region_attrs[] = {
	"size", "pages", "writable", "users",
};

/* Kinds of object directory below graphs/<id>/. */
static const struct obj_kind {
	const char		*prefix;	/* directory "<prefix><id>" */
	const char *const	*attrs;		/* known counters, in order */
	size_t			nr_attrs;
} obj_kinds[] = {
	{ "arena",	arena_attrs,	ARRAY_SIZE(arena_attrs) },
	{ "region",	region_attrs,	ARRAY_SIZE(region_attrs) },
	{ "chan",	chan_attrs,	ARRAY_SIZE(chan_attrs) },
};

static bool is_attr(const struct obj_kind *k, const char *name)
{
	size_t i;

	for (i = 0; i < k->nr_attrs; i++)
		if (!strcmp(name, k->attrs[i]))
			return true;
	return false;
}

/*
 * Rest of an object's line after "graph=<id> name=<name> ...": its known
 * counters, then any added by newer modules, alphabetically. A counter
 * that vanished (the object died meanwhile) prints as "?".
 */
static void print_obj_attrs(const char *gdir, const char *ent,
			    const struct obj_kind *k)
{
	char odir[PATH_MAX], v[256];
	struct dirent **ents;
	size_t i;
	int n;

	path_join(odir, sizeof(odir), gdir, ent);
	for (i = 0; i < k->nr_attrs; i++) {
		if (read_sysfs_line(odir, k->attrs[i], v, sizeof(v)))
			strcpy(v, "?");
		printf(" %s=%s", k->attrs[i], v);
	}
	n = scandir(odir, &ents, stats_filter, alphasort);
	for (int j = 0; j < n; j++) {
		if (!is_attr(k, ents[j]->d_name) &&
		    !read_sysfs_line(odir, ents[j]->d_name, v, sizeof(v)))
			printf(" %s=%s", ents[j]->d_name, v);
	}
	if (n >= 0)
		free_ents(ents, n);
	putchar('\n');
}

/* The kind of an entry "<prefix><digits>" of a graph directory, or NULL. */
static const struct obj_kind *obj_kind_of(const char *name)
{
	size_t i, n;
	const char *p;

	for (i = 0; i < ARRAY_SIZE(obj_kinds); i++) {
		n = strlen(obj_kinds[i].prefix);
		if (strncmp(name, obj_kinds[i].prefix, n) || !name[n])
			continue;
		for (p = name + n; *p >= '0' && *p <= '9'; p++)
			;
		if (!*p)
			return &obj_kinds[i];
	}
	return NULL;
}

static int obj_filter(const struct dirent *de)
{
	return obj_kind_of(de->d_name) != NULL;
}

static unsigned long obj_id(const char *name)
{
	return strtoul(name + strlen(obj_kind_of(name)->prefix), NULL, 10);
}

static int obj_sort(const struct dirent **a, const struct dirent **b)
{
	unsigned long x = obj_id((*a)->d_name), y = obj_id((*b)->d_name);

	return x < y ? -1 : x > y;
}

/*
 * Every object of every graph, in graph then id order, one line each:
 * "graph=<id> name=<name> kind=<k> id=<oid> <counter>=<value> ...", or,
 * with @only, just the objects of that kind as "... <k>=<oid> ...".
 */
static int list_objects(int argc, char **argv, const char *cmd,
			const struct obj_kind *only)
{
	char gdir[PATH_MAX], path[PATH_MAX], gname[128];
	struct dirent **graphs, **objs;
	int i, j, ng, no, ret;

	ret = no_options(argc, argv, cmd);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	if (!path_join(gdir, sizeof(gdir), sysfs_dir(), "graphs"))
		return fail(sysfs_dir(), strerror(ENAMETOOLONG), false);
	ng = scan_numbered(gdir, "", &graphs);
	if (ng < 0)
		return fail(gdir, strerror(-ng), ng == -ENOENT);
	for (i = 0; i < ng; i++) {
		path_join(path, sizeof(path), gdir, graphs[i]->d_name);
		if (read_sysfs_line(path, "name", gname, sizeof(gname)))
			strcpy(gname, "?");
		no = scandir(path, &objs, obj_filter, obj_sort);
		if (no < 0)
			continue;	/* graph died meanwhile */
		for (j = 0; j < no; j++) {
			const struct obj_kind *k = obj_kind_of(objs[j]->d_name);
			unsigned long id = obj_id(objs[j]->d_name);

			if (only && k != only)
				continue;
			printf("graph=%s name=%s", graphs[i]->d_name, gname);
			if (only)
				printf(" %s=%lu", k->prefix, id);
			else
				printf(" kind=%s id=%lu", k->prefix, id);
			print_obj_attrs(path, objs[j]->d_name, k);
		}
		free_ents(objs, no);
	}
	free_ents(graphs, ng);
	return EXIT_OK;
}

static int cmd_objects(int argc, char **argv)
{
	return list_objects(argc, argv, "objects", NULL);
}

static int cmd_chans(int argc, char **argv)
{
	return list_objects(argc, argv, "chans", &obj_kinds[2]);
}

/* ---------------------------------------------------------------------- */
/* top */

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

	if (read_sysfs_line(dir, name, v, sizeof(v)))
		return 0;
	return strtoull(v, NULL, 10);
}

/* One set and its components. */
static void top_set(const char *gid, const char *sdir, const char *ent,
		    unsigned long long dt_ns)
{
	char name[128], state[32], key[3 * NAME_MAX + 3], cdir[PATH_MAX];
	struct dirent **comps;
	int i, n;

	if (read_sysfs_line(sdir, "name", name, sizeof(name)) ||
	    read_sysfs_line(sdir, "state", state, sizeof(state)))
		return;		/* gone meanwhile */
	snprintf(key, sizeof(key), "%s/%s", gid, ent);
	printf("%-5s %-8s %-18s %-8s %8llu %8llu %6.1f %12llu\n", gid,
	       ent + 3, name, state, top_u64(sdir, "runs"),
	       top_u64(sdir, "waits"),
	       top_cpu(key, top_u64(sdir, "cpu_ns"), dt_ns),
	       top_u64(sdir, "cpu_ns") / 1000000);
	n = scan_numbered(sdir, "comp", &comps);
	if (n < 0)
		return;
	for (i = 0; i < n; i++) {
		path_join(cdir, sizeof(cdir), sdir, comps[i]->d_name);
		if (read_sysfs_line(cdir, "name", name, sizeof(name)))
			continue;
		snprintf(key, sizeof(key), "%s/%s/%s", gid, ent,
			 comps[i]->d_name);
		printf("      %-8s   %-16s %6.1f%% in %llu (%llu B) "
		       "out %llu (%llu B)\n", comps[i]->d_name + 4, name,
		       top_cpu(key, top_u64(cdir, "cpu_ns"), dt_ns),
		       top_u64(cdir, "elements_in"), top_u64(cdir, "bytes_in"),
		       top_u64(cdir, "elements_out"),
		       top_u64(cdir, "bytes_out"));
	}
	free_ents(comps, n);
}

/* One refresh: every set of every graph. */
static int top_once(unsigned long long dt_ns)
{
	char gdir[PATH_MAX], path[PATH_MAX], sdir[PATH_MAX];
	struct dirent **graphs, **sets;
	int i, j, ng, ns;

	if (!path_join(gdir, sizeof(gdir), sysfs_dir(), "graphs"))
		return -ENAMETOOLONG;
	ng = scan_numbered(gdir, "", &graphs);
	if (ng < 0)
		return ng;
	printf("%-5s %-8s %-18s %-8s %8s %8s %6s %12s\n", "GRAPH", "SET",
	       "NAME", "STATE", "RUNS", "WAITS", "CPU%", "CPU_MS");
	for (i = 0; i < ng; i++) {
		path_join(path, sizeof(path), gdir, graphs[i]->d_name);
		ns = scan_numbered(path, "set", &sets);
		if (ns < 0)
			continue;	/* graph died meanwhile */
		for (j = 0; j < ns; j++) {
			path_join(sdir, sizeof(sdir), path, sets[j]->d_name);
			top_set(graphs[i]->d_name, sdir, sets[j]->d_name,
				dt_ns);
		}
		free_ents(sets, ns);
	}
	free_ents(graphs, ng);
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

static int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval",	required_argument,	NULL, 'i' },
		{ "count",	required_argument,	NULL, 'c' },
		{ "help",	no_argument,		NULL, 'h' },
		{ }
	};
	unsigned long long interval = 1000, count = 0, n, last = 0, t;
	bool tty = isatty(STDOUT_FILENO);
	int c, err;

	FOR_EACH_OPT(c, argc, argv, "i:c:h", opts) {
		switch (c) {
		case 'i':
			if (!parse_u64(optarg, &interval) || !interval ||
			    interval > 3600000)
				return usage_error("top: bad interval '%s'",
						   optarg);
			break;
		case 'c':
			if (!parse_u64(optarg, &count) || !count)
				return usage_error("top: bad count '%s'",
						   optarg);
			break;
		case 'h':
			return help_requested();
		default:
			return bad_option(argv);
		}
	}
	if (optind < argc)
		return usage_error("top: unexpected argument '%s'",
				   argv[optind]);
	for (n = 0; !count || n < count; n++) {
		if (n)
			usleep(interval * 1000);
		if (tty)
			fputs("\033[H\033[2J", stdout);
		else if (n)
			putchar('\n');
		t = now_ns();
		err = top_once(last ? t - last : 0);
		last = t;
		if (err)
			return fail(sysfs_dir(), strerror(-err), err == -ENOENT);
		fflush(stdout);
	}
	free(top_prev);
	return EXIT_OK;
}

/* ---------------------------------------------------------------------- */

static int cmd_version(int argc, char **argv)
{
	if (argc > 1)
		return usage_error("version: unexpected argument '%s'",
				   argv[1]);
	printf("dfgctl %s (libdfg %s, api %d)\n", DFGCTL_VERSION,
	       dfg_version(), DFG_API_VERSION);
	return EXIT_OK;
}

static const struct {
	const char	*name;
	int		(*fn)(int argc, char **argv);
} commands[] = {
	{ "info",	cmd_info },
	{ "nop",	cmd_nop },
	{ "stats",	cmd_stats },
	{ "graphs",	cmd_graphs },
	{ "chans",	cmd_chans },
	{ "objects",	cmd_objects },
	{ "monitor",	cmd_monitor },
	{ "top",	cmd_top },
	{ "version",	cmd_version },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help"))
		return help_requested();
	if (!strcmp(argv[1], "--version"))
		return cmd_version(1, argv + 1);

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	return usage_error("unknown command '%s'", argv[1]);
}
