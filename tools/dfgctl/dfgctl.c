// SPDX-License-Identifier: GPL-2.0
/*
 * dfgctl: inspect the dfg module. One file per subcommand (dfgctl.h).
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
 *   dfgctl monitor [--count N] [--timeout SEC] [--full | --public]
 *                                       netlink events, one line each
 *   dfgctl version | --version | --help
 *
 * Exit status: 0 success, 1 runtime error ("dfgctl: <what>: <reason>" on
 * stderr), 2 usage error. monitor also exits 1 when --timeout expires before
 * --count events arrived.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dfgctl.h"
#include "json.h"

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
"                              (arena: size, pages, resident; region:\n"
"                              size, pages, writable, users; chan: as\n"
"                              chans)\n"
"  monitor [--count N] [--timeout SEC] [--full | --public]\n"
"                              print netlink events, one line each:\n"
"                              'event=<name> <attr>=<value> ...' (graph,\n"
"                              object, rank, pid, cmd, name); says\n"
"                              'listening (<group>)' on stderr once\n"
"                              subscribed; exits 0 after N events, 1 if SEC\n"
"                              seconds pass first (0 on timeout without\n"
"                              --count); names and pids need CAP_NET_ADMIN\n"
"                              (--full insists, --public never asks)\n"
"  top [--interval MS] [--count N]\n"
"                              live view of the scheduler's sets and their\n"
"                              components: state, runs, waits, CPU% since\n"
"                              the last refresh, elements and bytes in and\n"
"                              out; every MS ms (default 1000), N times\n"
"                              (default: until interrupted; the screen is\n"
"                              redrawn only on a terminal)\n"
"  version [--json], --version print the version\n"
"\n"
"environment:\n"
"  DFG_DEVICE  device node (default /dev/dfg)\n"
"  DFG_SYSFS   sysfs directory (default /sys/kernel/dfg)\n"
"\n"
"every command takes --json: one JSON value on stdout (monitor and top:\n"
"one object per line)\n"
"\n"
"exit status: 0 ok, 1 runtime error, 2 usage error\n";

/* ---------------------------------------------------------------------- */
/* Messages */

int ctl_usage_error(const char *fmt, ...)
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
int ctl_fail(const char *what, const char *reason, bool absent)
{
	fprintf(stderr, "dfgctl: %s: %s\n", what, reason);
	if (absent)
		fputs("dfgctl: is the dfg module loaded? 'sudo modprobe dfg', or\n"
		      "dfgctl: 'sudo insmod ./dfg.ko' in the source tree; or run there\n"
		      "dfgctl: in the test VM: tools/vm/dfg-vm -- build/bin/dfgctl ...\n",
		      stderr);
	return EXIT_ERR;
}

/* @err is a positive errno value. */
int ctl_fail_errno(const char *what, int err)
{
	return ctl_fail(what, strerror(err), err == ENOENT || err == ENODEV);
}

/* ---------------------------------------------------------------------- */
/* Parsing helpers */

bool ctl_parse_u64(const char *s, unsigned long long *v)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

bool ctl_parse_u32(const char *s, __u32 *v)
{
	unsigned long long x;

	if (!ctl_parse_u64(s, &x) || x > UINT32_MAX)
		return false;
	*v = x;
	return true;
}

int ctl_bad_option(char **argv)
{
	return ctl_usage_error("%s: bad or incomplete option '%s'", argv[0],
			       argv[optind - 1]);
}

int ctl_help_requested(void)
{
	fputs(usage_text, stdout);
	return EXIT_OK;
}

/* Options of a subcommand that takes none; EXIT_OK to go on. */
static const char *device_path(void)
{
	const char *path = getenv("DFG_DEVICE");

	return path && *path ? path : DFG_DEVICE_PATH;
}

int ctl_open_device(struct dfg **d, unsigned int flags)
{
	char what[PATH_MAX + 16];
	int ret;

	ret = dfg_open(d, flags);
	if (ret < 0) {
		snprintf(what, sizeof(what), "open %s", device_path());
		return ctl_fail_errno(what, -ret);
	}
	return EXIT_OK;
}

/* ---------------------------------------------------------------------- */

static int cmd_version(int argc, char **argv)
{
	struct json js;
	bool json;
	int ret;

	ret = ctl_json_opts(argc, argv, "version", &json);
	if (ret)
		return ret < 0 ? EXIT_OK : ret;
	/* dfgctl is linked with this build's libdfg: one version. */
	if (!json) {
		printf("dfgctl %s (api %d)\n", dfg_version(), DFG_API_VERSION);
		return EXIT_OK;
	}
	json_init(&js, stdout);
	json_obj_begin(&js, NULL);
	json_str(&js, "version", dfg_version());
	json_u64(&js, "api_version", DFG_API_VERSION);
	json_obj_end(&js);
	json_finish(&js);
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
		return ctl_help_requested();
	if (!strcmp(argv[1], "--version"))
		return cmd_version(1, argv + 1);

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	return ctl_usage_error("unknown command '%s'", argv[1]);
}
