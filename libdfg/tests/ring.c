// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: rings. dfg_queue_init() flags, SQEs prepared by the
 * dfg_prep_*() helpers accepted by the kernel's io_uring_cmd_prep(), and
 * dfg_uring_cmd() leaving the caller's other requests alone. The device is
 * /dev/null: since Linux 6.0 its uring_cmd handler completes every command
 * with 0, before that there is none and io_uring answers -EOPNOTSUPP.
 * Getting either, not -EINVAL, shows the SQE passed the generic checks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* What /dev/null answers to a well-formed uring_cmd (see above). */
#define NULL_CMD_OK(res)	((res) == 0 || (res) == -EOPNOTSUPP)

/* Skip when this host has no usable io_uring (disabled, seccomp). */
#define SKIP_IF_NO_URING(ret) do {					\
	if ((ret) == -EPERM || (ret) == -ENOSYS || (ret) == -EACCES)	\
		SKIP(return, "io_uring not available: %s",		\
		     strerror(-(ret)));					\
} while (0)

TEST(queue_init_sets_sqe128_cqe32)
{
	struct io_uring ring;
	int ret;

	ret = dfg_queue_init(8, &ring, 0);
	SKIP_IF_NO_URING(ret);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(IORING_SETUP_SQE128, ring.flags & IORING_SETUP_SQE128);
	EXPECT_EQ(IORING_SETUP_CQE32, ring.flags & IORING_SETUP_CQE32);
	EXPECT_EQ(8, ring.sq.ring_entries);
	io_uring_queue_exit(&ring);
}

TEST(queue_init_keeps_caller_flags)
{
	struct io_uring ring;
	int ret;

	ret = dfg_queue_init(4, &ring, IORING_SETUP_CLAMP);
	SKIP_IF_NO_URING(ret);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(IORING_SETUP_CLAMP, ring.flags & IORING_SETUP_CLAMP);
	EXPECT_EQ(IORING_SETUP_SQE128, ring.flags & IORING_SETUP_SQE128);
	EXPECT_EQ(IORING_SETUP_CQE32, ring.flags & IORING_SETUP_CQE32);
	io_uring_queue_exit(&ring);
}

TEST(queue_init_errors)
{
	struct io_uring ring;

	EXPECT_EQ(-EINVAL, dfg_queue_init(8, NULL, 0));
	errno = 777;
	EXPECT_EQ(-EINVAL, dfg_queue_init(0, &ring, 0));
	EXPECT_EQ(777, errno);
}

/* A handle with a ring on /dev/null. */
FIXTURE(ring) {
	struct dfg *d;		/* handle on /dev/null */
	struct io_uring *ring;	/* its ring */
	int fd;			/* its descriptor */
};

FIXTURE_SETUP(ring)
{
	int ret;

	self->d = NULL;
	ASSERT_EQ(0, setenv("DFG_DEVICE", "/dev/null", 1));
	ret = dfg_open(&self->d, 0);
	SKIP_IF_NO_URING(ret);
	ASSERT_EQ(0, ret);
	self->ring = dfg_ring(self->d);
	ASSERT_NE(NULL, self->ring);
	self->fd = dfg_fd(self->d);
}

FIXTURE_TEARDOWN(ring)
{
	dfg_close(self->d);
}

/* Submit what is queued and reap one CQE, checking its tag. */
static int submit_reap(struct __test_metadata *_metadata,
		       struct io_uring *ring, __u64 tag, __u64 *res2)
{
	struct io_uring_cqe *cqe;
	int res;

	EXPECT_EQ(1, io_uring_submit_and_wait(ring, 1));
	EXPECT_EQ(0, io_uring_wait_cqe(ring, &cqe));
	EXPECT_EQ(tag, cqe->user_data);
	res = cqe->res;
	if (res2)
		*res2 = dfg_cqe_res2(cqe);
	io_uring_cqe_seen(ring, cqe);
	return res;
}

/*
 * SQE slots are reused: a prep over a slot full of garbage must still give
 * a clean SQE (no stray __pad1, uring_cmd_flags, ... which the kernel
 * rejects with -EINVAL).
 */
TEST_F(ring, prep_over_garbage_accepted)
{
	struct dfg_info info;
	struct io_uring_sqe *sqe;
	__u64 res2 = 77;

	SKIP_IF_NO_HANDLE();
	sqe = io_uring_get_sqe(self->ring);
	ASSERT_NE(NULL, sqe);
	memset(sqe, 0xff, DFG_SQE_SIZE);
	dfg_prep_nop(sqe, self->fd, 1, 0, 0);
	io_uring_sqe_set_data64(sqe, 11);
	EXPECT_TRUE(NULL_CMD_OK(submit_reap(_metadata, self->ring, 11, &res2)));
	EXPECT_EQ(0, res2);

	sqe = io_uring_get_sqe(self->ring);
	ASSERT_NE(NULL, sqe);
	memset(sqe, 0xff, DFG_SQE_SIZE);
	dfg_prep_get_info(sqe, self->fd, &info);
	io_uring_sqe_set_data64(sqe, 12);
	EXPECT_TRUE(NULL_CMD_OK(submit_reap(_metadata, self->ring, 12, NULL)));
}

/* The same with a nonzero reserved SQE field: the kernel says -EINVAL. */
TEST_F(ring, dirty_sqe_rejected)
{
	struct io_uring_sqe *sqe;

	SKIP_IF_NO_HANDLE();
	sqe = io_uring_get_sqe(self->ring);
	ASSERT_NE(NULL, sqe);
	dfg_prep_nop(sqe, self->fd, 1, 0, 0);
	sqe->__pad1 = 1;
	io_uring_sqe_set_data64(sqe, 13);
	EXPECT_EQ(-EINVAL, submit_reap(_metadata, self->ring, 13, NULL));
}

TEST_F(ring, uring_cmd_null_args_efault)
{
	SKIP_IF_NO_HANDLE();
	EXPECT_EQ(-EFAULT, dfg_uring_cmd(self->d, DFG_IOC_NOP, NULL, NULL));

	EXPECT_EQ(-EFAULT, dfg_uring_cmd(self->d, DFG_IOC_GET_INFO, NULL,
					 NULL));
	EXPECT_EQ(0, io_uring_cq_ready(self->ring));
}

/* Many more calls than ring entries: nothing leaks in SQ or CQ. */
TEST_F(ring, uring_cmd_repeated)
{
	struct dfg_nop nop = { .value = 1 };
	int i;

	SKIP_IF_NO_HANDLE();
	for (i = 0; i < 4 * DFG_RING_ENTRIES; i++)
		ASSERT_TRUE(NULL_CMD_OK(dfg_uring_cmd(self->d, DFG_IOC_NOP,
						      &nop, NULL)));
	EXPECT_EQ(0, io_uring_cq_ready(self->ring));
	EXPECT_EQ(0, io_uring_sq_ready(self->ring));
}

/*
 * Completions of the caller's requests that arrive before ours stay in the
 * CQ ring, in their order, with their res and big_cqe intact.
 */
TEST_F(ring, uring_cmd_keeps_earlier_cqes)
{
	struct dfg_nop nop = { .value = 1 };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	unsigned int head, n = 0;
	int i;

	SKIP_IF_NO_HANDLE();
	for (i = 1; i <= 3; i++) {
		sqe = io_uring_get_sqe(self->ring);
		ASSERT_NE(NULL, sqe);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, i);
	}
	ASSERT_EQ(3, io_uring_submit(self->ring));
	ASSERT_EQ(3, io_uring_cq_ready(self->ring));

	EXPECT_TRUE(NULL_CMD_OK(dfg_uring_cmd(self->d, DFG_IOC_NOP, &nop,
					      NULL)));

	ASSERT_EQ(3, io_uring_cq_ready(self->ring));
	io_uring_for_each_cqe(self->ring, head, cqe) {
		n++;
		EXPECT_EQ(n, cqe->user_data);
		EXPECT_EQ(0, cqe->res);
	}
	io_uring_cq_advance(self->ring, n);
}

/* SQEs the caller queued but did not submit go out with ours. */
TEST_F(ring, uring_cmd_submits_queued_sqes)
{
	struct dfg_nop nop = { .value = 1 };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;

	SKIP_IF_NO_HANDLE();
	sqe = io_uring_get_sqe(self->ring);
	ASSERT_NE(NULL, sqe);
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data64(sqe, 77);

	EXPECT_TRUE(NULL_CMD_OK(dfg_uring_cmd(self->d, DFG_IOC_NOP, &nop,
					      NULL)));
	ASSERT_EQ(1, io_uring_cq_ready(self->ring));
	ASSERT_EQ(0, io_uring_peek_cqe(self->ring, &cqe));
	EXPECT_EQ(77, cqe->user_data);
	io_uring_cqe_seen(self->ring, cqe);
}

/*
 * A queued SQE of the caller that fails to submit ends the kernel's batch
 * (no IORING_SETUP_SUBMIT_ALL); ours still goes out.
 */
TEST_F(ring, uring_cmd_after_failing_sqe)
{
	struct dfg_nop nop = { .value = 1 };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;

	SKIP_IF_NO_HANDLE();
	sqe = io_uring_get_sqe(self->ring);
	ASSERT_NE(NULL, sqe);
	io_uring_prep_nop(sqe);
	sqe->opcode = 0xff;		/* no such opcode */
	io_uring_sqe_set_data64(sqe, 66);

	EXPECT_TRUE(NULL_CMD_OK(dfg_uring_cmd(self->d, DFG_IOC_NOP, &nop,
					      NULL)));
	ASSERT_EQ(1, io_uring_cq_ready(self->ring));
	ASSERT_EQ(0, io_uring_peek_cqe(self->ring, &cqe));
	EXPECT_EQ(66, cqe->user_data);
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(self->ring, cqe);
	EXPECT_EQ(0, io_uring_sq_ready(self->ring));
}

/* A full SQ is submitted to make room for our SQE. */
TEST_F(ring, uring_cmd_full_sq)
{
	struct dfg_nop nop = { .value = 1 };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	unsigned int head, n = 0;

	SKIP_IF_NO_HANDLE();
	while ((sqe = io_uring_get_sqe(self->ring))) {
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, ++n);
	}
	ASSERT_EQ(DFG_RING_ENTRIES, n);

	EXPECT_TRUE(NULL_CMD_OK(dfg_uring_cmd(self->d, DFG_IOC_NOP, &nop,
					      NULL)));
	ASSERT_EQ(DFG_RING_ENTRIES, io_uring_cq_ready(self->ring));
	n = 0;
	io_uring_for_each_cqe(self->ring, head, cqe)
		EXPECT_EQ(++n, cqe->user_data);
	io_uring_cq_advance(self->ring, n);
}

/* A request of the caller still in flight completes later, untouched. */
TEST_F(ring, uring_cmd_with_request_in_flight)
{
	struct __kernel_timespec ts = { .tv_nsec = 50 * 1000 * 1000 };
	struct dfg_nop nop = { .value = 1 };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;

	SKIP_IF_NO_HANDLE();
	sqe = io_uring_get_sqe(self->ring);
	ASSERT_NE(NULL, sqe);
	io_uring_prep_timeout(sqe, &ts, 0, 0);
	io_uring_sqe_set_data64(sqe, 55);
	ASSERT_EQ(1, io_uring_submit(self->ring));

	EXPECT_TRUE(NULL_CMD_OK(dfg_uring_cmd(self->d, DFG_IOC_NOP, &nop,
					      NULL)));

	ASSERT_EQ(0, io_uring_wait_cqe(self->ring, &cqe));
	EXPECT_EQ(55, cqe->user_data);
	EXPECT_EQ(-ETIME, cqe->res);
	io_uring_cqe_seen(self->ring, cqe);
	EXPECT_EQ(0, io_uring_cq_ready(self->ring));
}

TEST_HARNESS_MAIN
