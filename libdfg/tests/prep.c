// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: the inline dfg_prep_*() helpers lay out SQEs as
 * <linux/dfg.h> says. No ring and no module needed: SQEs are plain
 * 128-byte buffers pre-filled with garbage, so clearing is checked too.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <dfg/dfg.h>

#include "kselftest_harness.h"

#define GARBAGE	0xa5

/* Layout facts the helpers rely on. */
_Static_assert(sizeof(struct dfg_uring_cmd) == 80, "dfg_uring_cmd is 80 bytes");
_Static_assert(offsetof(struct io_uring_sqe, cmd) + 80 == DFG_SQE_SIZE,
	       "sqe->cmd runs to the end of a 128-byte SQE");
_Static_assert(sizeof(struct dfg_nop) <= DFG_URING_INLINE_MAX,
	       "dfg_nop travels inline");
_Static_assert(sizeof(struct dfg_info) > DFG_URING_INLINE_MAX,
	       "dfg_info must travel indirectly");

/*
 * An SQE slot of an SQE128 ring, followed by a guard that a helper must not
 * touch.
 */
struct slot {
	union {
		struct io_uring_sqe	sqe;
		unsigned char		raw[DFG_SQE_SIZE];
	};
	unsigned char guard[64];
};

static void slot_init(struct slot *s)
{
	memset(s, GARBAGE, sizeof(*s));
}

static int all_bytes(const void *p, size_t len, unsigned char v)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (c[i] != v)
			return 0;
	return 1;
}

/* Bytes [0, 48) of the SQE hold only opcode, fd and cmd_op. */
static int header_clean(const struct io_uring_sqe *sqe)
{
	struct io_uring_sqe ref;

	memset(&ref, 0, sizeof(ref));
	ref.opcode = IORING_OP_URING_CMD;
	ref.fd = sqe->fd;
	ref.cmd_op = sqe->cmd_op;
	return !memcmp(&ref, sqe, offsetof(struct io_uring_sqe, cmd));
}

TEST(prep_cmd_inline_layout)
{
	struct slot s;
	struct io_uring_sqe *sqe = &s.sqe;
	struct dfg_uring_cmd *cmd = (struct dfg_uring_cmd *)sqe->cmd;
	unsigned char args[24];

	slot_init(&s);
	memset(args, 0x3c, sizeof(args));
	dfg_prep_cmd(sqe, 7, DFG_IOC_NOP, args, sizeof(args));

	EXPECT_EQ(IORING_OP_URING_CMD, sqe->opcode);
	EXPECT_EQ(7, sqe->fd);
	EXPECT_EQ(DFG_IOC_NOP, sqe->cmd_op);
	EXPECT_EQ(0, sqe->flags);
	EXPECT_EQ(0, sqe->user_data);
	EXPECT_EQ(0, sqe->__pad1);
	EXPECT_TRUE(header_clean(sqe));
	EXPECT_EQ(0, cmd->flags);
	EXPECT_EQ(0, cmd->len);
	EXPECT_EQ(0, cmd->addr);
	EXPECT_EQ(0, memcmp(cmd->args, args, sizeof(args)));
	/* Bytes past the argument struct must be zero. */
	EXPECT_TRUE(all_bytes(cmd->args + sizeof(args),
			      DFG_URING_INLINE_MAX - sizeof(args), 0));
	EXPECT_TRUE(all_bytes(s.guard, sizeof(s.guard), GARBAGE));
}

TEST(prep_cmd_inline_full_size)
{
	struct slot s;
	struct dfg_uring_cmd *cmd = (struct dfg_uring_cmd *)s.sqe.cmd;
	unsigned char args[DFG_URING_INLINE_MAX];

	slot_init(&s);
	memset(args, 0x11, sizeof(args));
	dfg_prep_cmd(&s.sqe, 3, DFG_IOC_NOP, args, sizeof(args));
	EXPECT_EQ(0, memcmp(cmd->args, args, sizeof(args)));
	EXPECT_EQ(0, cmd->flags);
	EXPECT_TRUE(all_bytes(s.guard, sizeof(s.guard), GARBAGE));
}

/* len 0 with NULL args: a command without arguments. */
TEST(prep_cmd_inline_empty)
{
	struct slot s;

	slot_init(&s);
	dfg_prep_cmd(&s.sqe, 3, 0xdf00, NULL, 0);
	EXPECT_EQ(IORING_OP_URING_CMD, s.sqe.opcode);
	EXPECT_EQ(0xdf00, s.sqe.cmd_op);
	EXPECT_TRUE(all_bytes(s.sqe.cmd, 80, 0));
}

/* An oversized len never writes past the SQE. */
TEST(prep_cmd_inline_oversize_clamped)
{
	struct slot s;
	struct dfg_uring_cmd *cmd = (struct dfg_uring_cmd *)s.sqe.cmd;
	unsigned char args[DFG_URING_INLINE_MAX * 2];

	slot_init(&s);
	memset(args, 0x22, sizeof(args));
	dfg_prep_cmd(&s.sqe, 3, DFG_IOC_GET_INFO, args, sizeof(args));
	EXPECT_TRUE(all_bytes(cmd->args, DFG_URING_INLINE_MAX, 0x22));
	EXPECT_EQ(0, cmd->flags);
	EXPECT_TRUE(all_bytes(s.guard, sizeof(s.guard), GARBAGE));
}

TEST(prep_cmd_indirect_layout)
{
	struct slot s;
	struct dfg_uring_cmd *cmd = (struct dfg_uring_cmd *)s.sqe.cmd;
	struct dfg_info info;

	slot_init(&s);
	dfg_prep_cmd_indirect(&s.sqe, 9, DFG_IOC_GET_INFO, &info,
			      sizeof(info));
	EXPECT_EQ(IORING_OP_URING_CMD, s.sqe.opcode);
	EXPECT_EQ(9, s.sqe.fd);
	EXPECT_EQ(DFG_IOC_GET_INFO, s.sqe.cmd_op);
	EXPECT_TRUE(header_clean(&s.sqe));
	EXPECT_EQ(DFG_URING_F_INDIRECT, cmd->flags);
	EXPECT_EQ(sizeof(info), cmd->len);
	EXPECT_EQ((__u64)(uintptr_t)&info, cmd->addr);
	EXPECT_TRUE(all_bytes(cmd->args, DFG_URING_INLINE_MAX, 0));
	EXPECT_TRUE(all_bytes(s.guard, sizeof(s.guard), GARBAGE));
}

TEST(prep_nop_inline_args)
{
	struct slot s;
	struct dfg_uring_cmd *cmd = (struct dfg_uring_cmd *)s.sqe.cmd;
	struct dfg_nop nop;

	slot_init(&s);
	dfg_prep_nop(&s.sqe, 4, 0x0123456789abcdefULL, DFG_NOP_F_ASYNC, 25);
	EXPECT_EQ(DFG_IOC_NOP, s.sqe.cmd_op);
	EXPECT_EQ(4, s.sqe.fd);
	EXPECT_TRUE(header_clean(&s.sqe));
	EXPECT_EQ(0, cmd->flags);
	EXPECT_EQ(0, cmd->len);
	EXPECT_EQ(0, cmd->addr);

	memcpy(&nop, cmd->args, sizeof(nop));
	EXPECT_EQ(0x0123456789abcdefULL, nop.value);
	EXPECT_EQ(0, nop.echo);
	EXPECT_EQ(DFG_NOP_F_ASYNC, nop.flags);
	EXPECT_EQ(25, nop.delay_ms);
	EXPECT_EQ(0, nop.reserved[0]);
	EXPECT_EQ(0, nop.reserved[1]);
	EXPECT_TRUE(all_bytes(cmd->args + sizeof(nop),
			      DFG_URING_INLINE_MAX - sizeof(nop), 0));
}

TEST(prep_get_info_indirect)
{
	struct slot s;
	struct dfg_uring_cmd *cmd = (struct dfg_uring_cmd *)s.sqe.cmd;
	struct dfg_info info;

	slot_init(&s);
	memset(&info, GARBAGE, sizeof(info));
	dfg_prep_get_info(&s.sqe, 5, &info);
	EXPECT_EQ(DFG_IOC_GET_INFO, s.sqe.cmd_op);
	EXPECT_EQ(5, s.sqe.fd);
	EXPECT_EQ(DFG_URING_F_INDIRECT, cmd->flags);
	EXPECT_EQ(sizeof(info), cmd->len);
	EXPECT_EQ((__u64)(uintptr_t)&info, cmd->addr);
	EXPECT_TRUE(all_bytes(cmd->args, DFG_URING_INLINE_MAX, 0));

	/* The struct is cleared except for its size field. */
	EXPECT_EQ(sizeof(info), info.size);
	EXPECT_TRUE(all_bytes((char *)&info + sizeof(info.size),
			      sizeof(info) - sizeof(info.size), 0));
}

/* The command values are the ABI's encoding, usable by both paths. */
TEST(cmd_values_encoded)
{
	EXPECT_EQ(DFG_IOC_MAGIC, _IOC_TYPE(DFG_IOC_NOP));
	EXPECT_EQ(sizeof(struct dfg_nop), _IOC_SIZE(DFG_IOC_NOP));
	EXPECT_EQ(sizeof(struct dfg_info), _IOC_SIZE(DFG_IOC_GET_INFO));
	EXPECT_EQ(_IOC_READ | _IOC_WRITE, _IOC_DIR(DFG_IOC_GET_INFO));
}

TEST(cqe_res2_reads_big_cqe)
{
	union {
		struct io_uring_cqe	cqe;
		__u64			raw[4];
	} c;

	memset(&c, 0, sizeof(c));
	c.raw[2] = 0xfeedfacecafebeefULL;
	c.raw[3] = 1;
	EXPECT_EQ(0xfeedfacecafebeefULL, dfg_cqe_res2(&c.cqe));
}

TEST_HARNESS_MAIN
