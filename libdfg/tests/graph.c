// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: graph and arena calls without the module. Names are
 * checked before any system call; a handle on /dev/null (via $DFG_DEVICE)
 * shows that valid arguments reach ioctl (-ENOTTY); bad descriptors give
 * -EBADF; the graph prep helpers lay out their SQEs as <linux/dfg.h> says.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dfg/dfg.h>

#include "kselftest_harness.h"

#define ERRNO_MARK	12345

FIXTURE(devnull) {
	struct dfg *d;		/* handle on /dev/null, no ring */
};

FIXTURE_SETUP(devnull)
{
	ASSERT_EQ(0, setenv("DFG_DEVICE", "/dev/null", 1));
	ASSERT_EQ(0, dfg_open(&self->d, DFG_OPEN_NO_RING));
}

FIXTURE_TEARDOWN(devnull)
{
	dfg_close(self->d);
}

TEST_F(devnull, name_checks)
{
	char name[DFG_NAME_MAX + 8];

	EXPECT_EQ(-EINVAL, dfg_graph_create(self->d, NULL, 0600, 0));
	EXPECT_EQ(-EINVAL, dfg_graph_create(self->d, "", 0600, 0));
	EXPECT_EQ(-EINVAL, dfg_graph_create(self->d, "a/b", 0600, 0));
	EXPECT_EQ(-EINVAL, dfg_graph_create(self->d, "a b", 0600, 0));
	EXPECT_EQ(-EINVAL, dfg_graph_attach(self->d, "\xff", 0));
	EXPECT_EQ(-EINVAL, dfg_graph_attach(self->d, NULL, 0));

	memset(name, 'x', sizeof(name));
	name[DFG_NAME_MAX] = 0;		/* DFG_NAME_MAX bytes: too long */
	EXPECT_EQ(-ENAMETOOLONG, dfg_graph_create(self->d, name, 0600, 0));
	EXPECT_EQ(-ENAMETOOLONG, dfg_graph_attach(self->d, name, 0));
	name[DFG_NAME_MAX - 1] = 0;	/* the longest valid name */
	EXPECT_EQ(-ENOTTY, dfg_graph_create(self->d, name, 0600, 0));
	EXPECT_EQ(-ENOTTY, dfg_graph_attach(self->d, name, 0));
	EXPECT_EQ(-ENOTTY, dfg_graph_create(self->d, "A-z_0.9", 0600, 0));
}

TEST(null_handle)
{
	EXPECT_EQ(-EINVAL, dfg_graph_create(NULL, "g", 0600, 0));
	EXPECT_EQ(-EINVAL, dfg_graph_attach(NULL, "g", 0));
}

TEST(bad_descriptors)
{
	struct dfg_graph_info info;
	struct dfg_arena *a = NULL;
	int fd;

	EXPECT_EQ(-EINVAL, dfg_graph_info(0, NULL));
	EXPECT_EQ(-EBADF, dfg_graph_info(-1, &info));
	EXPECT_EQ(-EBADF, dfg_arena_create(-1, 4096, &a));
	EXPECT_EQ(-EBADF, dfg_arena_map(-1, 1, 4096, 1, &a));
	EXPECT_EQ(-EINVAL, dfg_arena_create(0, 0, &a));
	EXPECT_EQ(-EINVAL, dfg_arena_create(0, 4096, NULL));
	EXPECT_EQ(-EINVAL, dfg_arena_map(0, 1, 0, 1, &a));
	EXPECT_EQ(-EINVAL, dfg_arena_map(0, 1, SIZE_MAX, 1, &a));
	EXPECT_EQ(NULL, a);

	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTTY, dfg_graph_info(fd, &info));
	EXPECT_EQ(sizeof(info), info.size);
	EXPECT_EQ(-ENOTTY, dfg_arena_create(fd, 4096, &a));
	/* /dev/null maps, but not shared at such offsets: some error. */
	EXPECT_GT(0, dfg_arena_map(fd, 1, 4096, 1, &a)) {
		dfg_arena_unmap(a);
	}
	close(fd);
}

TEST_F(devnull, errno_untouched)
{
	struct dfg_graph_info info;

	errno = ERRNO_MARK;
	EXPECT_EQ(-ENOTTY, dfg_graph_create(self->d, "g", 0600, 0));
	EXPECT_EQ(-EBADF, dfg_graph_info(-1, &info));
	EXPECT_EQ(-ENOTTY, dfg_graph_info(dfg_fd(self->d), &info));
	EXPECT_EQ(ERRNO_MARK, errno);
}

/* The graph prep helpers: indirect commands pointing at a filled struct. */
TEST(prep_graph)
{
	unsigned char raw[DFG_SQE_SIZE];
	struct io_uring_sqe *sqe = (struct io_uring_sqe *)raw;
	struct dfg_uring_cmd *cmd = dfg_sqe_cmd(sqe);
	struct dfg_graph_open op;
	char name[DFG_NAME_MAX + 8];

	memset(raw, 0xa5, sizeof(raw));
	memset(&op, 0xa5, sizeof(op));
	dfg_prep_graph_create(sqe, 7, &op, "demo", 0640, DFG_GRAPH_O_CLOEXEC);
	EXPECT_EQ(IORING_OP_URING_CMD, sqe->opcode);
	EXPECT_EQ(7, sqe->fd);
	EXPECT_EQ(DFG_IOC_GRAPH_CREATE, sqe->cmd_op);
	EXPECT_EQ(DFG_URING_F_INDIRECT, cmd->flags);
	EXPECT_EQ(sizeof(op), cmd->len);
	EXPECT_EQ((__u64)(uintptr_t)&op, cmd->addr);
	EXPECT_EQ(0, sqe->user_data);
	EXPECT_EQ(sizeof(op), op.size);
	EXPECT_EQ(0640, op.mode);
	EXPECT_EQ(DFG_GRAPH_O_CLOEXEC, op.flags);
	EXPECT_EQ(0, op.reserved0);
	EXPECT_STREQ("demo", op.name);
	EXPECT_EQ(0, op.name[DFG_NAME_MAX - 1]);
	EXPECT_EQ(0, op.reserved[0] | op.reserved[3]);

	memset(raw, 0xa5, sizeof(raw));
	dfg_prep_graph_attach(sqe, 9, &op, "other", DFG_GRAPH_O_RDONLY);
	EXPECT_EQ(DFG_IOC_GRAPH_ATTACH, sqe->cmd_op);
	EXPECT_EQ(9, sqe->fd);
	EXPECT_EQ(0, op.mode);
	EXPECT_EQ(DFG_GRAPH_O_RDONLY, op.flags);
	EXPECT_STREQ("other", op.name);

	/* Too long: no NUL in the struct, never a truncated name. */
	memset(name, 'y', sizeof(name));
	name[sizeof(name) - 1] = 0;
	dfg_prep_graph_attach(sqe, 9, &op, name, 0);
	EXPECT_EQ(NULL, memchr(op.name, 0, sizeof(op.name)));
	EXPECT_EQ(0, op.reserved[0]);
}

TEST_HARNESS_MAIN
