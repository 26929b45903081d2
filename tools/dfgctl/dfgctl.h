/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dfgctl(8): one program, one file per subcommand (cmd_<name>(), taking
 * the arguments after its name, argv[0] being the name, and returning the
 * exit status; listed in dfgctl.c's table), and the helpers they share.
 */
#ifndef _DFGCTL_H
#define _DFGCTL_H

#include <dirent.h>
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include <dfg/dfg.h>

#define DFG_SYSFS_DIR		"/sys/kernel/" DFG_DEVICE_NAME
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

enum {
	EXIT_OK		= 0,
	EXIT_ERR	= 1,
	EXIT_USAGE	= 2,
};

/* Option parsing of one subcommand; argv[0] is the subcommand's name. */
#define FOR_EACH_OPT(c, argc, argv, shortopts, longopts)		\
	for (optind = 1, opterr = 0;					\
	     ((c) = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1;)

/* dfgctl.c: messages; each returns the exit status to return. */
int ctl_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
int ctl_fail(const char *what, const char *reason, bool absent);
int ctl_fail_errno(const char *what, int err);

/* dfgctl.c: numbers and options. */
bool ctl_parse_u64(const char *s, unsigned long long *v);
bool ctl_parse_u32(const char *s, __u32 *v);
int ctl_bad_option(char **argv);
int ctl_help_requested(void);
/*
 * jsonopt.c: for subcommands whose only option is --json (sets *@json):
 * EXIT_OK, -1 after --help, or the usage error's status.
 */
int ctl_json_opts(int argc, char **argv, const char *cmd, bool *json);

/* dfgctl.c: opens the device (DFG_DEVICE); EXIT_OK or the failure's. */
int ctl_open_device(struct dfg **d, unsigned int flags);

/* sysfs.c: reading /sys/kernel/dfg (DFG_SYSFS). */
const char *ctl_sysfs_dir(void);
int ctl_read_sysfs_line(const char *dir, const char *name, char *line,
			size_t size);
bool ctl_path_join(char *buf, size_t size, const char *a, const char *b);
int ctl_not_hidden(const struct dirent *de);
int ctl_scan_numbered(const char *dir, const char *prefix,
		      struct dirent ***ents);
void ctl_free_ents(struct dirent **ents, int n);

/* The subcommands, one file each. */
int cmd_info(int argc, char **argv);
int cmd_nop(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_graphs(int argc, char **argv);
int cmd_chans(int argc, char **argv);
int cmd_objects(int argc, char **argv);
int cmd_monitor(int argc, char **argv);
int cmd_top(int argc, char **argv);

#endif /* _DFGCTL_H */
