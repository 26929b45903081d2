// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/dfg: the identity files, and counters that move with what
 * userspace does (clients with open/close, stats/<cmd> with commands).
 * Per-path counting of stats/nop and stats/errors is in cmd_test; parked
 * and stats/canceled in park_test.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "dfg_sys.h"
#include "kselftest_harness.h"

/* The files the ABI lists exist and hold what they should. */
TEST(files)
{
	static const char * const counters[] = {
		"clients", "parked", "pages", "resident", "pinned",
		"stats/nop", "stats/get_info",
		"stats/errors", "stats/canceled",
	};
	__u64 api, features, v;
	char version[64];
	unsigned int i;
	int ret;

	ASSERT_EQ(0, dfg_sysfs_read("version", version, sizeof(version)));
	ASSERT_LT(0UL, strlen(version));
	ASSERT_EQ(0, dfg_sysfs_read_u64("api_version", &api));
	ASSERT_EQ((__u64)DFG_API_VERSION, api);
	ASSERT_EQ(0, dfg_sysfs_read_u64_base("features", &features, 16));
	ASSERT_EQ(DFG_F_ALL, features);
	for (i = 0; i < ARRAY_SIZE(counters); i++) {
		ret = dfg_sysfs_read_u64(counters[i], &v);
		ASSERT_EQ(0, ret) {
			TH_LOG("%s/%s: %s", DFG_SYSFS_DIR, counters[i],
			       strerror(-ret));
		}
	}
}

/* clients counts open files: up on open, down on close, not on dup. */
TEST(clients_follow_open_close)
{
	__u64 before, v;
	int fd, fd2, fd3;

	ASSERT_EQ(0, dfg_sysfs_read_u64("clients", &before));
	fd = sys_dfg_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dfg_sysfs_read_u64("clients", &v));
	ASSERT_EQ(before + 1, v);
	fd2 = sys_dfg_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, dfg_sysfs_read_u64("clients", &v));
	ASSERT_EQ(before + 2, v);
	fd3 = dup(fd2);
	ASSERT_LE(0, fd3);
	ASSERT_EQ(0, dfg_sysfs_read_u64("clients", &v));
	ASSERT_EQ(before + 2, v);
	ASSERT_EQ(0, close(fd2));
	ASSERT_EQ(0, dfg_sysfs_read_u64("clients", &v));
	ASSERT_EQ(before + 2, v);
	ASSERT_EQ(0, close(fd3));
	ASSERT_EQ(0, dfg_sysfs_read_u64("clients", &v));
	ASSERT_EQ(before + 1, v);
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, dfg_sysfs_read_u64("clients", &v));
	ASSERT_EQ(before, v);
}

/* stats/get_info counts GET_INFO, and only it; stats/nop does not move. */
TEST(stats_get_info_counts)
{
	__u64 gi0, gi, nop0, nop;
	struct dfg_info info;
	int fd, i;

	fd = sys_dfg_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/get_info", &gi0));
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/nop", &nop0));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, dfg_get_info(fd, &info));
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/get_info", &gi));
	ASSERT_EQ(gi0 + 10, gi);
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/nop", &nop));
	ASSERT_EQ(nop0, nop);
	close(fd);
}

/* A failed command moves stats/errors by one, a good one does not. */
TEST(stats_errors_counts)
{
	struct dfg_nop nop;
	__u64 e0, e;
	int fd;

	fd = sys_dfg_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/errors", &e0));
	nop = dfg_nop_args(1, 0, 0);
	nop.reserved[0] = 1;
	ASSERT_EQ(-EINVAL, sys_dfg_ioctl(fd, DFG_IOC_NOP, &nop));
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/errors", &e));
	ASSERT_EQ(e0 + 1, e);
	nop = dfg_nop_args(1, DFG_NOP_F_ASYNC | DFG_NOP_F_PARK, 0);
	ASSERT_EQ(-EINVAL, sys_dfg_ioctl(fd, DFG_IOC_NOP, &nop));
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/errors", &e));
	ASSERT_EQ(e0 + 2, e);
	nop = dfg_nop_args(1, 0, 0);
	ASSERT_EQ(0, sys_dfg_ioctl(fd, DFG_IOC_NOP, &nop));
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/errors", &e));
	ASSERT_EQ(e0 + 2, e);
	close(fd);
}

/* The files are read-only. */
TEST(read_only)
{
	static const char * const files[] = {
		"version", "api_version", "features", "clients", "parked",
		"stats/nop", "stats/errors",
	};
	char path[128];
	unsigned int i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), DFG_SYSFS_DIR "/%s", files[i]);
		ASSERT_EQ(0, access(path, R_OK)) {
			TH_LOG("%s: %s", path, strerror(errno));
		}
		fd = open(path, O_WRONLY);
		if (fd >= 0) {
			/* root may open; the write must still fail */
			EXPECT_GT(0, write(fd, "0\n", 2)) {
				TH_LOG("%s accepted a write", path);
			}
			close(fd);
		}
	}
}

TEST_HARNESS_MAIN
