// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "dfg": DFG_NL_CMD_GET_INFO agrees with the ioctl
 * and with sysfs; the "events" group reports DFG_EV_CLIENT_OPEN when a
 * process opens /dev/dfg and DFG_EV_CLIENT_CLOSE when the last reference
 * to that file goes, both with the process's tgid.
 * (DFG_EV_CMD_CANCELED is checked in park_test.) libdfg's
 * <dfg/events.h> waits as it says (-EAGAIN, -ETIMEDOUT, -EINTR, a
 * pollable fd), reports lost events (-ENOBUFS) and goes on, and keeps
 * "events_full" for CAP_NET_ADMIN (-EPERM).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "dfg_sys.h"
#include "dfg_evmon.h"
#include "kselftest_harness.h"

#define EVENT_MS	2000	/* an event arrives within this */

/* DFG_NL_CMD_GET_INFO carries what GET_INFO and sysfs say. */
TEST(get_info_matches_ioctl)
{
	const __u32 want = 1U << DFG_NL_A_API_VERSION |
			   1U << DFG_NL_A_FEATURES | 1U << DFG_NL_A_VERSION |
			   1U << DFG_NL_A_CLIENTS | 1U << DFG_NL_A_PARKED;
	struct dfg_module_info nl;
	struct dfg_info info;
	__u64 clients, parked;
	int fd, ret;

	fd = sys_dfg_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dfg_get_info(fd, &info));
	ret = dfg_module_info(&nl);
	ASSERT_EQ(0, ret) {
		TH_LOG("genl GET_INFO: %s", strerror(-ret));
	}
	ASSERT_EQ(want, nl.attrs & want) {
		TH_LOG("attributes seen 0x%x, want 0x%x", nl.attrs, want);
	}
	ASSERT_EQ(info.api_version, nl.api_version);
	ASSERT_EQ(info.features, nl.features);
	ASSERT_STREQ(info.version, nl.version);
	/* Nothing else opens /dev/dfg or parks while the tests run. */
	ASSERT_EQ(0, dfg_sysfs_read_u64("clients", &clients));
	ASSERT_EQ(clients, (__u64)nl.clients);
	ASSERT_LE(1U, nl.clients);
	ASSERT_EQ(0, dfg_sysfs_read_u64("parked", &parked));
	ASSERT_EQ(parked, (__u64)nl.parked);
	close(fd);

	/* The reply follows the number of open files. */
	ret = dfg_module_info(&nl);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(clients - 1, (__u64)nl.clients);
}

/* open/close of /dev/dfg yield CLIENT_OPEN/CLIENT_CLOSE with our pid. */
TEST(client_open_close_events)
{
	struct dfg_event_msg ev;
	struct dfg_evmon mon;
	pid_t me = getpid();
	int fd, ret;

	ret = dfg_evmon_open(&mon);
	ASSERT_EQ(0, ret) {
		TH_LOG("subscribe %s/%s: %s", DFG_GENL_NAME,
		       DFG_GENL_MCGRP_EVENTS, strerror(-ret));
	}
	dfg_evmon_poll(&mon, 0);
	ASSERT_EQ(0, dfg_evmon_count(&mon, DFG_EV_CLIENT_OPEN, me));

	fd = sys_dfg_open();
	ASSERT_LE(0, fd);
	ASSERT_TRUE(dfg_evmon_find(&mon, DFG_EV_CLIENT_OPEN, me, EVENT_MS,
				    &ev)) {
		TH_LOG("no DFG_EV_CLIENT_OPEN for pid %d (%d other events)",
		       me, mon.nr);
	}
	ASSERT_TRUE(ev.attrs & (1U << DFG_NL_A_EVENT));
	ASSERT_TRUE(ev.attrs & (1U << DFG_NL_A_PID));
	/* Not closed yet. */
	dfg_evmon_poll(&mon, 100);
	ASSERT_EQ(0, dfg_evmon_count(&mon, DFG_EV_CLIENT_CLOSE, me));

	ASSERT_EQ(0, close(fd));
	ASSERT_TRUE(dfg_evmon_find(&mon, DFG_EV_CLIENT_CLOSE, me, EVENT_MS,
				    &ev)) {
		TH_LOG("no DFG_EV_CLIENT_CLOSE for pid %d (%d other events)",
		       me, mon.nr);
	}
	/* One open, one close: no duplicates. */
	dfg_evmon_poll(&mon, 100);
	ASSERT_EQ(0, dfg_evmon_count(&mon, DFG_EV_CLIENT_OPEN, me));
	ASSERT_EQ(0, dfg_evmon_count(&mon, DFG_EV_CLIENT_CLOSE, me));
	dfg_evmon_close(&mon);
}

/*
 * CLIENT_CLOSE comes when the last reference goes: not when a dup or a
 * forked child's copy is closed.
 */
TEST(client_close_on_last_reference)
{
	struct dfg_event_msg ev;
	struct dfg_evmon mon;
	pid_t me = getpid(), pid;
	int fd, fd2, status;

	ASSERT_EQ(0, dfg_evmon_open(&mon));
	fd = sys_dfg_open();
	ASSERT_LE(0, fd);
	ASSERT_TRUE(dfg_evmon_find(&mon, DFG_EV_CLIENT_OPEN, me, EVENT_MS,
				    &ev));

	fd2 = dup(fd);
	ASSERT_LE(0, fd2);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(fd);
		close(fd2);
		_exit(0);
	}
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, 5000));
	ASSERT_EQ(0, close(fd));
	dfg_evmon_poll(&mon, 200);
	ASSERT_EQ(0, dfg_evmon_count(&mon, DFG_EV_CLIENT_CLOSE, me));
	ASSERT_EQ(0, dfg_evmon_count(&mon, DFG_EV_CLIENT_CLOSE, pid));
	/* A forked child does not open anything. */
	ASSERT_EQ(0, dfg_evmon_count(&mon, DFG_EV_CLIENT_OPEN, pid));

	ASSERT_EQ(0, close(fd2));
	ASSERT_TRUE(dfg_evmon_find(&mon, DFG_EV_CLIENT_CLOSE, me, EVENT_MS,
				    &ev));
	dfg_evmon_close(&mon);
}

/* Events from another process carry that process's tgid. */
TEST(client_events_name_the_process)
{
	struct dfg_event_msg ev;
	struct dfg_evmon mon;
	int status, pipefd[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, dfg_evmon_open(&mon));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = sys_dfg_open();

		close(pipefd[1]);
		/* Hold it until the test says so. */
		if (read(pipefd[0], &c, 1) < 0)
			_exit(2);
		_exit(fd < 0 ? 1 : 0);
	}
	close(pipefd[0]);
	ASSERT_TRUE(dfg_evmon_find(&mon, DFG_EV_CLIENT_OPEN, pid, EVENT_MS,
				    &ev)) {
		kill(pid, SIGKILL);
		dfg_wait_pid(pid, &status, 5000);
	}
	dfg_evmon_poll(&mon, 100);
	ASSERT_EQ(0, dfg_evmon_count(&mon, DFG_EV_CLIENT_CLOSE, pid));
	close(pipefd[1]);
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, 5000));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/* Exit closes the file: CLIENT_CLOSE with the same tgid. */
	ASSERT_TRUE(dfg_evmon_find(&mon, DFG_EV_CLIENT_CLOSE, pid, EVENT_MS,
				    &ev));
	dfg_evmon_close(&mon);
}

/* The next CLIENT_OPEN or CLIENT_CLOSE of ours in @evs, in @ms. */
static int next_own(struct dfg_events *evs, struct dfg_event_msg *ev, int ms)
{
	int ret;

	do {
		ret = dfg_events_next(evs, ev, ms);
	} while (!ret && ev->pid != (__u32)getpid());
	return ret;
}

/* Waits as told: -EAGAIN at 0, -ETIMEDOUT after the timeout, POLLIN. */
TEST(events_next_waits)
{
	struct pollfd pfd = { .events = POLLIN };
	struct dfg_event_msg ev;
	struct dfg_events *evs;
	__u64 start, took;
	int fd;

	ASSERT_EQ(0, dfg_events_open(&evs, 0));
	ASSERT_EQ(1, dfg_events_full(evs));
	pfd.fd = dfg_events_fd(evs);
	ASSERT_LE(0, pfd.fd);
	EXPECT_EQ(-EAGAIN, dfg_events_next(evs, &ev, 0));
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	start = dfg_now_ns();
	EXPECT_EQ(-ETIMEDOUT, dfg_events_next(evs, &ev, 200));
	took = dfg_ms_since(start);
	EXPECT_LE(200ULL, took);

	fd = sys_dfg_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, poll(&pfd, 1, EVENT_MS));
	ASSERT_EQ(0, dfg_events_next(evs, &ev, 0));
	EXPECT_EQ(DFG_EV_CLIENT_OPEN, ev.type);
	EXPECT_EQ((__u32)getpid(), ev.pid);
	EXPECT_STREQ("client_open", dfg_event_name(ev.type));
	close(fd);
	ASSERT_EQ(0, next_own(evs, &ev, EVENT_MS));
	EXPECT_EQ(DFG_EV_CLIENT_CLOSE, ev.type);
	dfg_events_close(evs);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A signal ends a wait without limit with -EINTR. */
TEST(events_next_eintr)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct dfg_event_msg ev;
	struct dfg_events *evs;

	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, dfg_events_open(&evs, 0));
	alarm(1);
	EXPECT_EQ(-EINTR, dfg_events_next(evs, &ev, -1));
	dfg_events_close(evs);
}

/*
 * More events than the socket holds: -ENOBUFS once, then the handle goes
 * on and delivers what comes next.
 */
TEST(events_lost_enobufs)
{
	struct dfg_event_msg ev;
	struct dfg_events *evs;
	int i, fd, ret, lost = 0, got = 0;

	ASSERT_EQ(0, dfg_events_open(&evs, 0));
	/* 1 MiB asked, rmem_max allows less: 8000 events do not fit. */
	for (i = 0; i < 4000; i++) {
		fd = sys_dfg_open();
		ASSERT_LE(0, fd);
		close(fd);
	}
	while ((ret = dfg_events_next(evs, &ev, 0)) != -EAGAIN) {
		if (ret == -ENOBUFS)
			lost++;
		else if (!ret)
			got++;
		else
			ASSERT_EQ(0, ret);
	}
	EXPECT_LE(1, lost);
	EXPECT_LT(0, got);
	EXPECT_GT(8000, got);
	fd = sys_dfg_open();
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, next_own(evs, &ev, EVENT_MS));
	EXPECT_EQ(DFG_EV_CLIENT_OPEN, ev.type);
	dfg_events_close(evs);
}

/*
 * Without CAP_NET_ADMIN (here: uid 65534, no capabilities), "events_full"
 * is refused and flags 0 fall back to "events"; root gets either.
 */
TEST(events_full_needs_cap_net_admin)
{
	struct dfg_events *evs;
	int status;
	pid_t pid;

	ASSERT_EQ(0, dfg_events_open(&evs, DFG_EVENTS_FULL));
	EXPECT_EQ(1, dfg_events_full(evs));
	dfg_events_close(evs);
	ASSERT_EQ(0, dfg_events_open(&evs, DFG_EVENTS_PUBLIC));
	EXPECT_EQ(0, dfg_events_full(evs));
	dfg_events_close(evs);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(10);
		if (dfg_events_open(&evs, DFG_EVENTS_FULL) != -EPERM)
			_exit(11);
		if (dfg_events_open(&evs, 0))
			_exit(12);
		if (dfg_events_full(evs) != 0)
			_exit(13);
		dfg_events_close(evs);
		_exit(0);
	}
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, 5000));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
