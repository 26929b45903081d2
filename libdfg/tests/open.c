// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: the handle without the module. dfg_open() error paths,
 * NULL handling, and a handle on /dev/null (via $DFG_DEVICE) whose ioctls
 * fail cleanly with -ENOTTY, with and without a ring.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dfg/dfg.h>

#include "kselftest_harness.h"

/*
 * The 6.1 harness runs the test body even when FIXTURE_SETUP() skipped;
 * every TEST_F starts with this.
 */
#define SKIP_IF_NO_HANDLE() do {					\
	if (!self->d)							\
		SKIP(return, "%s", "io_uring not available");			\
} while (0)

#define NOT_SET		((struct dfg *)(uintptr_t)0xdeadbeef)
#define ERRNO_MARK	12345

TEST(open_missing_device_enoent)
{
	struct dfg *d = NOT_SET;

	ASSERT_EQ(0, setenv("DFG_DEVICE", "/nonexistent", 1));
	EXPECT_EQ(-ENOENT, dfg_open(&d, 0));
	EXPECT_EQ(NOT_SET, d);
	EXPECT_EQ(-ENOENT, dfg_open(&d, DFG_OPEN_NO_RING));
	EXPECT_EQ(NOT_SET, d);
}

/* An empty $DFG_DEVICE means the default device. */
TEST(open_empty_env_uses_default)
{
	struct dfg *d = NOT_SET;

	if (!access(DFG_DEVICE_PATH, F_OK))
		SKIP(return, "%s exists on this machine", DFG_DEVICE_PATH);
	ASSERT_EQ(0, setenv("DFG_DEVICE", "", 1));
	EXPECT_EQ(-ENOENT, dfg_open(&d, 0));
	ASSERT_EQ(0, unsetenv("DFG_DEVICE"));
	EXPECT_EQ(-ENOENT, dfg_open(&d, 0));
	EXPECT_EQ(NOT_SET, d);
}

/* A path open(2) refuses for another reason: its errno comes back. */
TEST(open_propagates_open_errno)
{
	struct dfg *d = NOT_SET;

	ASSERT_EQ(0, setenv("DFG_DEVICE", "/dev/null/x", 1));
	EXPECT_EQ(-ENOTDIR, dfg_open(&d, 0));
	EXPECT_EQ(NOT_SET, d);
}

/* Unknown flags are refused before anything is opened. */
TEST(open_unknown_flags_einval)
{
	struct dfg *d = NOT_SET;

	ASSERT_EQ(0, setenv("DFG_DEVICE", "/nonexistent", 1));
	EXPECT_EQ(-EINVAL, dfg_open(&d, 1U << 1));
	EXPECT_EQ(-EINVAL, dfg_open(&d, ~0U));
	EXPECT_EQ(-EINVAL, dfg_open(&d, DFG_OPEN_NO_RING | (1U << 31)));
	EXPECT_EQ(NOT_SET, d);
}

TEST(open_null_handle_pointer_einval)
{
	ASSERT_EQ(0, setenv("DFG_DEVICE", "/dev/null", 1));
	EXPECT_EQ(-EINVAL, dfg_open(NULL, 0));
}

TEST(close_null)
{
	errno = ERRNO_MARK;
	dfg_close(NULL);
	EXPECT_EQ(ERRNO_MARK, errno);
}

TEST(null_handle_calls)
{
	struct dfg_info info;
	struct dfg_nop nop = { 0 };
	__u64 echo = 7;

	EXPECT_EQ(-EINVAL, dfg_fd(NULL));
	EXPECT_EQ(NULL, dfg_ring(NULL));
	EXPECT_EQ(-EINVAL, dfg_cmd(NULL, DFG_IOC_NOP, &nop));
	EXPECT_EQ(-EINVAL, dfg_info(NULL, &info));
	EXPECT_EQ(-EINVAL, dfg_nop(NULL, 1, 0, 0, &echo));
	EXPECT_EQ(7, echo);
	EXPECT_EQ(-EINVAL, dfg_uring_cmd(NULL, DFG_IOC_NOP, &nop, NULL));
}

/* Failing calls return -errno and leave the caller's errno alone. */
TEST(errno_untouched)
{
	struct dfg *d;

	ASSERT_EQ(0, setenv("DFG_DEVICE", "/nonexistent", 1));
	errno = ERRNO_MARK;
	EXPECT_EQ(-ENOENT, dfg_open(&d, 0));
	EXPECT_EQ(ERRNO_MARK, errno);
	EXPECT_EQ(-EINVAL, dfg_open(&d, ~0U));
	EXPECT_EQ(ERRNO_MARK, errno);
}

TEST(version_string)
{
	ASSERT_NE(NULL, dfg_version());
	EXPECT_STREQ(LIBDFG_VERSION, dfg_version());
}

/*
 * A handle on /dev/null: a character device that is not dfg. Each variant
 * opens it with or without a ring.
 */
FIXTURE(devnull) {
	struct dfg *d;		/* handle on /dev/null */
};

FIXTURE_VARIANT(devnull) {
	unsigned int open_flags;	/* flags for dfg_open() */
};

FIXTURE_VARIANT_ADD(devnull, ring) {
	.open_flags = 0,
};

FIXTURE_VARIANT_ADD(devnull, no_ring) {
	.open_flags = DFG_OPEN_NO_RING,
};

FIXTURE_SETUP(devnull)
{
	int ret;

	self->d = NULL;
	ASSERT_EQ(0, setenv("DFG_DEVICE", "/dev/null", 1));
	ret = dfg_open(&self->d, variant->open_flags);
	if (ret == -EPERM || ret == -ENOSYS)
		SKIP(return, "io_uring not available: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
	ASSERT_NE(NULL, self->d);
}

FIXTURE_TEARDOWN(devnull)
{
	dfg_close(self->d);
}

TEST_F(devnull, fd_open_rdwr_cloexec)
{
	int fd = dfg_fd(self->d);

	SKIP_IF_NO_HANDLE();
	ASSERT_LE(0, fd);
	EXPECT_EQ(O_RDWR, fcntl(fd, F_GETFL) & O_ACCMODE);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
}

TEST_F(devnull, ring_matches_flags)
{
	struct io_uring *ring = dfg_ring(self->d);

	SKIP_IF_NO_HANDLE();
	if (variant->open_flags & DFG_OPEN_NO_RING) {
		EXPECT_EQ(NULL, ring);
		return;
	}
	ASSERT_NE(NULL, ring);
	EXPECT_EQ(IORING_SETUP_SQE128, ring->flags & IORING_SETUP_SQE128);
	EXPECT_EQ(IORING_SETUP_CQE32, ring->flags & IORING_SETUP_CQE32);
	EXPECT_EQ(DFG_RING_ENTRIES, ring->sq.ring_entries);
}

TEST_F(devnull, info_enotty)
{
	struct dfg_info info;

	SKIP_IF_NO_HANDLE();
	memset(&info, 0xa5, sizeof(info));
	errno = ERRNO_MARK;
	EXPECT_EQ(-ENOTTY, dfg_info(self->d, &info));
	EXPECT_EQ(ERRNO_MARK, errno);
	/* The request was well formed: cleared, size set. */
	EXPECT_EQ(sizeof(info), info.size);
	EXPECT_EQ(0, info.api_version);
	EXPECT_EQ(0, info.features);
}

TEST_F(devnull, info_null_einval)
{
	SKIP_IF_NO_HANDLE();
	EXPECT_EQ(-EINVAL, dfg_info(self->d, NULL));
}

TEST_F(devnull, nop_enotty_echo_untouched)
{
	__u64 echo = 99;

	SKIP_IF_NO_HANDLE();
	EXPECT_EQ(-ENOTTY, dfg_nop(self->d, 42, 0, 0, &echo));
	EXPECT_EQ(99, echo);
	EXPECT_EQ(-ENOTTY, dfg_nop(self->d, 42, DFG_NOP_F_ASYNC, 10, NULL));
}

TEST_F(devnull, cmd_enotty)
{
	struct dfg_nop nop = { .value = 1 };
	struct dfg_info info = { .size = sizeof(info) };

	SKIP_IF_NO_HANDLE();
	EXPECT_EQ(-ENOTTY, dfg_cmd(self->d, DFG_IOC_NOP, &nop));
	EXPECT_EQ(-ENOTTY, dfg_cmd(self->d, DFG_IOC_GET_INFO, &info));
	EXPECT_EQ(-ENOTTY, dfg_cmd(self->d, _IOWR(DFG_IOC_MAGIC, 0x7f,
						  struct dfg_nop), &nop));
}

/*
 * dfg_uring_cmd() needs a ring. /dev/null completes uring_cmds with 0
 * (Linux >= 6.0) or io_uring refuses them with -EOPNOTSUPP; either way the
 * result comes back, with res2 0, inline and indirect alike.
 */
TEST_F(devnull, uring_cmd_result)
{
	struct dfg_nop nop = { .value = 5 };
	struct dfg_info info = { .size = sizeof(info) };
	__u64 res2 = 1234;
	int ret;

	SKIP_IF_NO_HANDLE();
	if (variant->open_flags & DFG_OPEN_NO_RING) {
		EXPECT_EQ(-EINVAL, dfg_uring_cmd(self->d, DFG_IOC_NOP, &nop,
						 &res2));
		EXPECT_EQ(1234, res2);
		return;
	}
	ret = dfg_uring_cmd(self->d, DFG_IOC_NOP, &nop, &res2);
	EXPECT_TRUE(ret == 0 || ret == -EOPNOTSUPP);
	EXPECT_EQ(0, res2);
	ret = dfg_uring_cmd(self->d, DFG_IOC_GET_INFO, &info, NULL);
	EXPECT_TRUE(ret == 0 || ret == -EOPNOTSUPP);
	EXPECT_EQ(sizeof(info), info.size);
}

TEST_HARNESS_MAIN
