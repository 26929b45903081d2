// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg test against the loaded dfg module (run it in the test VM:
 * tools/vm/dfg-vm -- build/libdfg/tests/module). Every test SKIPs when the
 * device cannot be opened, so the host run stays green.
 *
 * This tests the library over the module (both paths, typed wrappers, prep
 * helpers, dfg_uring_cmd() with other requests pending); selftests/ test
 * the module's ABI itself.
 */
#include <errno.h>
#include <string.h>

#include <dfg/dfg.h>

#include "kselftest_harness.h"

/*
 * The 6.1 harness runs the test body even when FIXTURE_SETUP() skipped;
 * every TEST_F starts with this.
 */
#define SKIP_IF_NO_HANDLE() do {					\
	if (!self->d)							\
		SKIP(return, "%s", "no dfg device");			\
} while (0)

FIXTURE(dev) {
	struct dfg *d;		/* handle on the dfg device, with a ring */
	struct io_uring *ring;	/* its ring */
	int fd;			/* its descriptor */
};

FIXTURE_SETUP(dev)
{
	int ret;

	self->d = NULL;
	ret = dfg_open(&self->d, 0);
	if (ret == -ENOENT || ret == -ENODEV)
		SKIP(return, "no dfg device (%s): module not loaded",
		     strerror(-ret));
	ASSERT_EQ(0, ret);
	self->ring = dfg_ring(self->d);
	self->fd = dfg_fd(self->d);
}

FIXTURE_TEARDOWN(dev)
{
	dfg_close(self->d);
}

TEST_F(dev, info_ioctl)
{
	struct dfg_info info;

	SKIP_IF_NO_HANDLE();
	ASSERT_EQ(0, dfg_info(self->d, &info));
	EXPECT_EQ(sizeof(info), info.size);
	EXPECT_EQ(DFG_API_VERSION, info.api_version);
	EXPECT_EQ(DFG_URING_INLINE_MAX, info.uring_inline_max);
	EXPECT_LE(DFG_CMD_NR, info.nr_cmds);
	EXPECT_NE(0, info.version[0]);
	EXPECT_NE(NULL, memchr(info.version, 0, sizeof(info.version)));
	TH_LOG("module %s features 0x%llx", info.version,
	       (unsigned long long)info.features);
}

/* Same answer through io_uring (indirect) as through ioctl. */
TEST_F(dev, info_uring_matches_ioctl)
{
	struct dfg_info a, b = { .size = sizeof(b) };

	SKIP_IF_NO_HANDLE();
	ASSERT_EQ(0, dfg_info(self->d, &a));
	ASSERT_EQ(0, dfg_uring_cmd(self->d, DFG_IOC_GET_INFO, &b, NULL));
	EXPECT_EQ(0, memcmp(&a, &b, sizeof(a)));
}

TEST_F(dev, nop_ioctl_echo)
{
	__u64 echo = 0;

	SKIP_IF_NO_HANDLE();
	ASSERT_EQ(0, dfg_nop(self->d, 0xabcdef0123ULL, 0, 0, &echo));
	EXPECT_EQ(0xabcdef0123ULL, echo);
	echo = 0;
	ASSERT_EQ(0, dfg_nop(self->d, 77, DFG_NOP_F_ASYNC, 20, &echo));
	EXPECT_EQ(77, echo);
}

TEST_F(dev, nop_ioctl_errors)
{
	SKIP_IF_NO_HANDLE();
	EXPECT_EQ(-EINVAL, dfg_nop(self->d, 1, 1U << 7, 0, NULL));
	EXPECT_EQ(-EINVAL, dfg_nop(self->d, 1, 0, 5, NULL));

	EXPECT_EQ(-EINVAL, dfg_nop(self->d, 1,
				   DFG_NOP_F_ASYNC | DFG_NOP_F_PARK, 0, NULL));
	EXPECT_EQ(-EINVAL, dfg_nop(self->d, 1, DFG_NOP_F_ASYNC,
				   DFG_NOP_DELAY_MAX_MS + 1, NULL));
}

TEST_F(dev, cmd_unknown_eopnotsupp)
{
	struct dfg_nop nop = { 0 };

	SKIP_IF_NO_HANDLE();
	EXPECT_EQ(-EOPNOTSUPP, dfg_cmd(self->d, _IOWR(DFG_IOC_MAGIC, 0x7f,
						      struct dfg_nop), &nop));
	EXPECT_EQ(-EOPNOTSUPP, dfg_uring_cmd(self->d,
					     _IOWR(DFG_IOC_MAGIC, 0x7f,
						   struct dfg_nop),
					     &nop, NULL));
}

/* Inline NOP: the echo comes back in res2. */
TEST_F(dev, nop_uring_res2)
{
	struct dfg_nop nop = { .value = 0x1122334455667788ULL };
	__u64 res2 = 0;

	SKIP_IF_NO_HANDLE();
	ASSERT_EQ(0, dfg_uring_cmd(self->d, DFG_IOC_NOP, &nop, &res2));
	EXPECT_EQ(0x1122334455667788ULL, res2);

	nop = (struct dfg_nop){ .value = 9, .flags = DFG_NOP_F_ASYNC,
				.delay_ms = 20 };
	res2 = 0;
	ASSERT_EQ(0, dfg_uring_cmd(self->d, DFG_IOC_NOP, &nop, &res2));
	EXPECT_EQ(9, res2);
}

/* Prep helpers on the handle's ring, reaped by hand. */
TEST_F(dev, prep_helpers_on_ring)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct dfg_info info;

	SKIP_IF_NO_HANDLE();
	sqe = io_uring_get_sqe(self->ring);
	ASSERT_NE(NULL, sqe);
	dfg_prep_nop(sqe, self->fd, 4242, 0, 0);
	io_uring_sqe_set_data64(sqe, 1);
	sqe = io_uring_get_sqe(self->ring);
	ASSERT_NE(NULL, sqe);
	dfg_prep_get_info(sqe, self->fd, &info);
	io_uring_sqe_set_data64(sqe, 2);
	ASSERT_EQ(2, io_uring_submit_and_wait(self->ring, 2));

	while (io_uring_peek_cqe(self->ring, &cqe) == 0) {
		EXPECT_EQ(0, cqe->res);
		if (cqe->user_data == 1) {
			EXPECT_EQ(4242, dfg_cqe_res2(cqe));
		} else {
			EXPECT_EQ(2, cqe->user_data);
			EXPECT_EQ(DFG_API_VERSION, info.api_version);
		}
		io_uring_cqe_seen(self->ring, cqe);
	}
}

/*
 * dfg_uring_cmd() of an ASYNC NOP while a completion of the caller sits at
 * the head of the CQ ring and another request is still in flight: it must
 * wait past them and leave both to the caller.
 */
TEST_F(dev, uring_cmd_waits_past_other_cqes)
{
	struct dfg_nop nop = { .value = 5, .flags = DFG_NOP_F_ASYNC,
			       .delay_ms = 50 };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	__u64 res2 = 0;

	SKIP_IF_NO_HANDLE();
	/* Completes at once: sits at the head. */
	sqe = io_uring_get_sqe(self->ring);
	ASSERT_NE(NULL, sqe);
	dfg_prep_nop(sqe, self->fd, 1, 0, 0);
	io_uring_sqe_set_data64(sqe, 101);
	/* Completes after ours. */
	sqe = io_uring_get_sqe(self->ring);
	ASSERT_NE(NULL, sqe);
	dfg_prep_nop(sqe, self->fd, 2, DFG_NOP_F_ASYNC, 300);
	io_uring_sqe_set_data64(sqe, 102);
	ASSERT_EQ(2, io_uring_submit(self->ring));

	ASSERT_EQ(0, dfg_uring_cmd(self->d, DFG_IOC_NOP, &nop, &res2));
	EXPECT_EQ(5, res2);

	ASSERT_EQ(0, io_uring_wait_cqe(self->ring, &cqe));
	EXPECT_EQ(101, cqe->user_data);
	EXPECT_EQ(1, dfg_cqe_res2(cqe));
	io_uring_cqe_seen(self->ring, cqe);
	ASSERT_EQ(0, io_uring_wait_cqe(self->ring, &cqe));
	EXPECT_EQ(102, cqe->user_data);
	EXPECT_EQ(2, dfg_cqe_res2(cqe));
	io_uring_cqe_seen(self->ring, cqe);
}

/* A second ring of the caller's making serves the same descriptor. */
TEST_F(dev, own_ring_from_queue_init)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;

	SKIP_IF_NO_HANDLE();
	ASSERT_EQ(0, dfg_queue_init(8, &ring, 0));
	sqe = io_uring_get_sqe(&ring);
	ASSERT_NE(NULL, sqe);
	dfg_prep_nop(sqe, self->fd, 31, 0, 0);
	ASSERT_EQ(1, io_uring_submit_and_wait(&ring, 1));
	ASSERT_EQ(0, io_uring_peek_cqe(&ring, &cqe));
	EXPECT_EQ(0, cqe->res);
	EXPECT_EQ(31, dfg_cqe_res2(cqe));
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
}

TEST_HARNESS_MAIN
