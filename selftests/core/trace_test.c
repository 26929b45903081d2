// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoints: with events/dfg present in tracefs, enabling dfg_cmd_enter
 * shows each command entering the module. SKIP when tracefs or the dfg
 * events are absent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "dfg_sys.h"
#include "kselftest_harness.h"

#define TRACE_MAX	(8 << 20)

/* The tracefs mount point, mounting it at /sys/kernel/tracing if needed. */
static const char *find_tracefs(void)
{
	if (!access("/sys/kernel/tracing/events", F_OK))
		return "/sys/kernel/tracing";
	if (!mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) &&
	    !access("/sys/kernel/tracing/events", F_OK))
		return "/sys/kernel/tracing";
	if (!access("/sys/kernel/debug/tracing/events", F_OK))
		return "/sys/kernel/debug/tracing";
	return NULL;
}

static int write_str(const char *dir, const char *file, const char *s,
		     int flags)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | flags);
	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

/* Reads the trace buffer into a malloc'd string. */
static char *read_trace(const char *dir)
{
	char path[256], *buf;
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/trace", dir);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	buf = malloc(TRACE_MAX + 1);
	if (!buf) {
		close(fd);
		return NULL;
	}
	while (len < TRACE_MAX &&
	       (n = read(fd, buf + len, TRACE_MAX - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return buf;
}

/*
 * Counts "dfg_cmd_enter:" lines; those of task @pid in *@mine. A line
 * starts "  <comm>-<pid>  [cpu] ...".
 */
static int count_enter(const char *trace, pid_t pid, int *mine)
{
	const char *line = trace, *end, *ev, *bracket, *dash;
	int all = 0;

	*mine = 0;
	for (; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		if (*line == '#')
			continue;
		ev = memmem(line, end - line, "dfg_cmd_enter:", 14);
		if (!ev)
			continue;
		all++;
		bracket = memchr(line, '[', ev - line);
		if (!bracket)
			continue;
		for (dash = bracket; dash > line && *dash != '-'; dash--)
			;
		if (*dash == '-' && strtol(dash + 1, NULL, 10) == pid)
			(*mine)++;
	}
	return all;
}

FIXTURE(trace) {
	const char *dir;	/* tracefs mount */
	bool enabled;		/* dfg_cmd_enter enabled by us */
	int fd;
};

FIXTURE_SETUP(trace)
{
	char path[256];

	self->fd = -1;
	self->dir = find_tracefs();
	if (!self->dir)
		SKIP(return, "no tracefs");
	snprintf(path, sizeof(path), "%s/events/dfg", self->dir);
	if (access(path, F_OK))
		SKIP(return, "no %s: module without tracepoints", path);
	self->fd = sys_dfg_open();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(trace)
{
	if (self->enabled)
		write_str(self->dir, "events/dfg/dfg_cmd_enter/enable", "0", 0);
	if (self->fd >= 0)
		close(self->fd);
}

/* Each NOP, over ioctl and over io_uring, shows up as dfg_cmd_enter. */
TEST_F(trace, cmd_enter_nop)
{
	struct io_uring ring;
	struct dfg_nop nop;
	struct dfg_cqe cqe;
	int all, mine, i;
	char *trace;

	if (!self->dir || self->fd < 0)
		return;	/* skipped in setup */
	ASSERT_EQ(0, write_str(self->dir, "events/dfg/dfg_cmd_enter/enable",
			       "1", 0)) {
		TH_LOG("%s/events/dfg has no dfg_cmd_enter", self->dir);
	}
	self->enabled = true;
	ASSERT_EQ(0, write_str(self->dir, "tracing_on", "1", 0));

	/* Before any command: nothing of ours. */
	ASSERT_EQ(0, write_str(self->dir, "trace", "", O_TRUNC));
	trace = read_trace(self->dir);
	ASSERT_NE(NULL, trace);
	count_enter(trace, getpid(), &mine);
	free(trace);
	ASSERT_EQ(0, mine);

	for (i = 0; i < 3; i++) {
		nop = dfg_nop_args(0x7ace0 + i, 0, 0);
		ASSERT_EQ(0, sys_dfg_ioctl(self->fd, DFG_IOC_NOP, &nop));
	}
	trace = read_trace(self->dir);
	ASSERT_NE(NULL, trace);
	all = count_enter(trace, getpid(), &mine);
	ASSERT_EQ(3, mine) {
		TH_LOG("%d dfg_cmd_enter lines in all; trace:\n%.2000s", all,
		       trace);
	}
	free(trace);

	/* io_uring: the same event per command. */
	ASSERT_EQ(0, write_str(self->dir, "trace", "", O_TRUNC));
	ASSERT_EQ(0, dfg_ring_init(&ring, 8));
	for (i = 0; i < 3; i++) {
		nop = dfg_nop_args(i, 0, 0);
		ASSERT_NE(NULL, dfg_prep_inline(&ring, self->fd, DFG_IOC_NOP,
						&nop, sizeof(nop), i));
	}
	ASSERT_EQ(3, io_uring_submit(&ring));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, dfg_ring_wait(&ring, &cqe, 5000));
		ASSERT_EQ(0, cqe.res);
	}
	io_uring_queue_exit(&ring);
	trace = read_trace(self->dir);
	ASSERT_NE(NULL, trace);
	all = count_enter(trace, getpid(), &mine);
	ASSERT_LE(3, all) {
		TH_LOG("trace:\n%.2000s", trace);
	}
	free(trace);
}

TEST_HARNESS_MAIN
