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

/* ------------------------------------------------------------------------
 * One test per command of <linux/dfg.h>: the SQE its dfg_prep_<cmd>()
 * fills is exactly what the module decodes (cmd.c: opcode, fd, cmd_op,
 * the dfg_uring_cmd header, then the struct inline with zeros after it,
 * or addr/len of an indirect struct).
 * ------------------------------------------------------------------------
 */

/* An inline command: @args, then zeros; nothing else in the SQE. */
static int inline_is(const struct slot *s, int fd, __u32 cmd_op,
		     const void *args, size_t len)
{
	const struct dfg_uring_cmd *cmd = (const void *)s->sqe.cmd;

	return s->sqe.opcode == IORING_OP_URING_CMD && s->sqe.fd == fd &&
	       s->sqe.cmd_op == cmd_op && header_clean(&s->sqe) &&
	       len == _IOC_SIZE(cmd_op) && len <= DFG_URING_INLINE_MAX &&
	       !cmd->flags && !cmd->len && !cmd->addr &&
	       !memcmp(cmd->args, args, len) &&
	       all_bytes(cmd->args + len, DFG_URING_INLINE_MAX - len, 0) &&
	       all_bytes(s->guard, sizeof(s->guard), GARBAGE);
}

/*
 * An indirect command: addr/len of @args, no inline bytes. Its struct is
 * larger than DFG_URING_INLINE_MAX, or (PEER_ADD) its results are in it.
 */
static int indirect_is(const struct slot *s, int fd, __u32 cmd_op,
		       const void *args, size_t len)
{
	const struct dfg_uring_cmd *cmd = (const void *)s->sqe.cmd;

	return s->sqe.opcode == IORING_OP_URING_CMD && s->sqe.fd == fd &&
	       s->sqe.cmd_op == cmd_op && header_clean(&s->sqe) &&
	       len == _IOC_SIZE(cmd_op) &&
	       cmd->flags == DFG_URING_F_INDIRECT && cmd->len == len &&
	       cmd->addr == (__u64)(uintptr_t)args &&
	       all_bytes(cmd->args, DFG_URING_INLINE_MAX, 0) &&
	       all_bytes(s->guard, sizeof(s->guard), GARBAGE);
}

TEST(prep_get_info_exact)
{
	struct dfg_info info, want = { .size = sizeof(want) };
	struct slot s;

	slot_init(&s);
	memset(&info, GARBAGE, sizeof(info));
	dfg_prep_get_info(&s.sqe, 3, &info);
	EXPECT_TRUE(indirect_is(&s, 3, DFG_IOC_GET_INFO, &info, sizeof(info)));
	EXPECT_EQ(0, memcmp(&want, &info, sizeof(info)));
}

TEST(prep_nop_exact)
{
	struct dfg_nop want = { .value = 7, .flags = DFG_NOP_F_PARK };
	struct slot s;

	slot_init(&s);
	dfg_prep_nop(&s.sqe, 3, 7, DFG_NOP_F_PARK, 0);
	EXPECT_TRUE(inline_is(&s, 3, DFG_IOC_NOP, &want, sizeof(want)));
}

TEST(prep_graph_create_exact)
{
	struct dfg_graph_open op, want = {
		.size = sizeof(want), .mode = 0640,
		.flags = DFG_GRAPH_O_CLOEXEC, .name = "g-1",
	};
	struct slot s;

	slot_init(&s);
	memset(&op, GARBAGE, sizeof(op));
	dfg_prep_graph_create(&s.sqe, 4, &op, "g-1", 0640, DFG_GRAPH_O_CLOEXEC);
	EXPECT_TRUE(indirect_is(&s, 4, DFG_IOC_GRAPH_CREATE, &op, sizeof(op)));
	EXPECT_EQ(0, memcmp(&want, &op, sizeof(op)));
}

TEST(prep_graph_attach_exact)
{
	struct dfg_graph_open op, want = {
		.size = sizeof(want), .flags = DFG_GRAPH_O_RDONLY,
		.name = "g-2",
	};
	struct slot s;

	slot_init(&s);
	memset(&op, GARBAGE, sizeof(op));
	dfg_prep_graph_attach(&s.sqe, 4, &op, "g-2", DFG_GRAPH_O_RDONLY);
	EXPECT_TRUE(indirect_is(&s, 4, DFG_IOC_GRAPH_ATTACH, &op, sizeof(op)));
	EXPECT_EQ(0, memcmp(&want, &op, sizeof(op)));
}

/* A name of DFG_NAME_MAX bytes is copied whole, without a NUL. */
TEST(prep_graph_name_not_truncated)
{
	char name[DFG_NAME_MAX + 8];
	struct dfg_graph_open op;
	struct slot s;

	slot_init(&s);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	dfg_prep_graph_attach(&s.sqe, 4, &op, name, 0);
	EXPECT_TRUE(all_bytes(op.name, DFG_NAME_MAX, 'n'));
	EXPECT_TRUE(all_bytes(op.reserved, sizeof(op.reserved), 0));
}

TEST(prep_graph_info_exact)
{
	struct dfg_graph_info info, want = { .size = sizeof(want) };
	struct slot s;

	slot_init(&s);
	memset(&info, GARBAGE, sizeof(info));
	dfg_prep_graph_info(&s.sqe, 5, &info);
	EXPECT_TRUE(indirect_is(&s, 5, DFG_IOC_GRAPH_INFO, &info,
				sizeof(info)));
	EXPECT_EQ(0, memcmp(&want, &info, sizeof(info)));
}

TEST(prep_arena_create_exact)
{
	struct dfg_arena_create want = { .size = 1ULL << 33 };
	struct slot s;

	slot_init(&s);
	dfg_prep_arena_create(&s.sqe, 5, 1ULL << 33);
	EXPECT_TRUE(inline_is(&s, 5, DFG_IOC_ARENA_CREATE, &want,
			      sizeof(want)));
}

TEST(prep_region_export_exact)
{
	static char page[4096] __attribute__((aligned(4096)));
	struct dfg_region want = {
		.addr = (__u64)(uintptr_t)page, .len = sizeof(page),
		.flags = DFG_REGION_F_WRITE,
	};
	struct slot s;

	slot_init(&s);
	dfg_prep_region_export(&s.sqe, 6, page, sizeof(page),
			       DFG_REGION_F_WRITE);
	EXPECT_TRUE(inline_is(&s, 6, DFG_IOC_REGION_EXPORT, &want,
			      sizeof(want)));
}

TEST(prep_region_unexport_exact)
{
	struct dfg_region want = { .id = 9 };
	struct slot s;

	slot_init(&s);
	dfg_prep_region_unexport(&s.sqe, 6, 9);
	EXPECT_TRUE(inline_is(&s, 6, DFG_IOC_REGION_UNEXPORT, &want,
			      sizeof(want)));
}

TEST(prep_region_copy_exact)
{
	char buf[16];
	struct dfg_region_copy want = {
		.id = 2, .flags = DFG_COPY_FROM_REGION, .offset = 4096,
		.len = sizeof(buf), .addr = (__u64)(uintptr_t)buf,
	};
	struct slot s;

	slot_init(&s);
	dfg_prep_region_copy(&s.sqe, 6, 2, DFG_COPY_FROM_REGION, 4096,
			     sizeof(buf), buf);
	EXPECT_TRUE(inline_is(&s, 6, DFG_IOC_REGION_COPY, &want,
			      sizeof(want)));
}

TEST(prep_chan_create_exact)
{
	struct dfg_chan_create want = {
		.pool = 3, .depth = 256, .max_producers = 4,
	};
	struct slot s;

	slot_init(&s);
	dfg_prep_chan_create(&s.sqe, 7, 3, 256, 4);
	EXPECT_TRUE(inline_is(&s, 7, DFG_IOC_CHAN_CREATE, &want,
			      sizeof(want)));
}

TEST(prep_chan_open_exact)
{
	struct dfg_chan_open want = {
		.id = 5, .role = DFG_CHAN_CONSUMER, .flags = DFG_CHAN_O_CLOEXEC,
	};
	struct slot s;

	slot_init(&s);
	dfg_prep_chan_open(&s.sqe, 7, 5, DFG_CHAN_CONSUMER,
			   DFG_CHAN_O_CLOEXEC);
	EXPECT_TRUE(inline_is(&s, 7, DFG_IOC_CHAN_OPEN, &want, sizeof(want)));
}

TEST(prep_chan_wait_exact)
{
	struct dfg_chan_wait want = { 0 };
	struct slot s;

	slot_init(&s);
	dfg_prep_chan_wait(&s.sqe, 8);
	EXPECT_TRUE(inline_is(&s, 8, DFG_IOC_CHAN_WAIT, &want, sizeof(want)));
}

TEST(prep_chan_wake_exact)
{
	struct dfg_chan_wait want = { 0 };
	struct slot s;

	slot_init(&s);
	dfg_prep_chan_wake(&s.sqe, 8);
	EXPECT_TRUE(inline_is(&s, 8, DFG_IOC_CHAN_WAKE, &want, sizeof(want)));
}

TEST(prep_team_join_exact)
{
	struct dfg_team_join j, want = {
		.size = sizeof(want), .name = "t", .team_size = 4, .rank = 3,
		.ctl_size = 8192,
	};
	struct slot s;

	slot_init(&s);
	memset(&j, GARBAGE, sizeof(j));
	dfg_prep_team_join(&s.sqe, 9, &j, "t", 4, 3, 8192);
	EXPECT_TRUE(indirect_is(&s, 9, DFG_IOC_TEAM_JOIN, &j, sizeof(j)));
	EXPECT_EQ(0, memcmp(&want, &j, sizeof(j)));
}

TEST(prep_team_wait_exact)
{
	struct dfg_team_wait want = {
		.offset = 256, .value = 0xdeadbeef, .timeout_ns = -1,
	};
	struct slot s;

	slot_init(&s);
	dfg_prep_team_wait(&s.sqe, 10, 256, 0xdeadbeef, -1);
	EXPECT_TRUE(inline_is(&s, 10, DFG_IOC_TEAM_WAIT, &want, sizeof(want)));
}

TEST(prep_team_wake_exact)
{
	struct dfg_team_wake want = { .offset = 260 };
	struct slot s;

	slot_init(&s);
	dfg_prep_team_wake(&s.sqe, 10, 260);
	EXPECT_TRUE(inline_is(&s, 10, DFG_IOC_TEAM_WAKE, &want, sizeof(want)));
}

TEST(prep_team_leave_exact)
{
	struct dfg_team_leave want = { 0 };
	struct slot s;

	slot_init(&s);
	dfg_prep_team_leave(&s.sqe, 10);
	EXPECT_TRUE(inline_is(&s, 10, DFG_IOC_TEAM_LEAVE, &want,
			      sizeof(want)));
}

TEST(prep_sched_attach_exact)
{
	struct dfg_sched_attach want = { .flags = DFG_SCHED_O_CLOEXEC };
	struct slot s;

	slot_init(&s);
	dfg_prep_sched_attach(&s.sqe, 11, DFG_SCHED_O_CLOEXEC);
	EXPECT_TRUE(inline_is(&s, 11, DFG_IOC_SCHED_ATTACH, &want,
			      sizeof(want)));
}

/* The caller's struct is kept as it is, but for its size field. */
TEST(prep_set_register_exact)
{
	struct dfg_set_register r, want;
	struct slot s;

	slot_init(&s);
	memset(&r, 0, sizeof(r));
	r.flags = DFG_SET_F_ROOT;
	r.nr_comps = 1;
	r.quantum = 10;
	want = r;
	want.size = sizeof(want);
	dfg_prep_set_register(&s.sqe, 12, &r);
	EXPECT_TRUE(indirect_is(&s, 12, DFG_IOC_SET_REGISTER, &r, sizeof(r)));
	EXPECT_EQ(0, memcmp(&want, &r, sizeof(r)));
}

TEST(prep_set_unregister_exact)
{
	struct dfg_set_id want = { .id = 13 };
	struct slot s;

	slot_init(&s);
	dfg_prep_set_unregister(&s.sqe, 12, 13);
	EXPECT_TRUE(inline_is(&s, 12, DFG_IOC_SET_UNREGISTER, &want,
			      sizeof(want)));
}

TEST(prep_sched_next_exact)
{
	struct dfg_sched_next want = {
		.flags = DFG_NEXT_F_CPU, .cpu = 1, .yield_id = 4,
		.yield_reason = DFG_YIELD_QUANTUM,
	};
	struct slot s;

	slot_init(&s);
	dfg_prep_sched_next(&s.sqe, 12, 4, DFG_YIELD_QUANTUM, DFG_NEXT_F_CPU,
			    1);
	EXPECT_TRUE(inline_is(&s, 12, DFG_IOC_SCHED_NEXT, &want,
			      sizeof(want)));
}

TEST(prep_sched_yield_exact)
{
	struct dfg_sched_yield want = { .id = 4, .reason = DFG_YIELD_EOF };
	struct slot s;

	slot_init(&s);
	dfg_prep_sched_yield(&s.sqe, 12, 4, DFG_YIELD_EOF);
	EXPECT_TRUE(inline_is(&s, 12, DFG_IOC_SCHED_YIELD, &want,
			      sizeof(want)));
}

TEST(prep_feedback_set_exact)
{
	struct dfg_feedback_set marks = {
		.what = DFG_FB_CHAN_MARKS, .object = 7, .high = 48, .low = 16,
	};
	struct dfg_feedback_set graph = {
		.what = DFG_FB_GRAPH, .stall_ms = 250, .period_ms = 1000,
	};
	struct slot s;

	slot_init(&s);
	dfg_prep_feedback_set(&s.sqe, 14, DFG_FB_CHAN_MARKS, 7, 48, 16, 0, 0);
	EXPECT_TRUE(inline_is(&s, 14, DFG_IOC_FEEDBACK_SET, &marks,
			      sizeof(marks)));
	slot_init(&s);
	dfg_prep_feedback_set(&s.sqe, 14, DFG_FB_GRAPH, 0, 0, 0, 250, 1000);
	EXPECT_TRUE(inline_is(&s, 14, DFG_IOC_FEEDBACK_SET, &graph,
			      sizeof(graph)));
}

TEST(prep_part_load_exact)
{
	static const char image[64];
	struct dfg_part_load want = {
		.addr = (__u64)(uintptr_t)image, .len = sizeof(image),
	};
	struct slot s;

	slot_init(&s);
	dfg_prep_part_load(&s.sqe, 3, image, sizeof(image));
	EXPECT_TRUE(inline_is(&s, 3, DFG_IOC_PART_LOAD, &want, sizeof(want)));
}

/* Fits inline, but its results come back in the struct: by address. */
TEST(prep_peer_add_exact)
{
	static const unsigned char v4[4] = { 10, 0, 2, 15 };
	static const unsigned char v6[16] = { 0xfe, 0x80, [15] = 1 };
	struct dfg_peer_add a, want;
	struct slot s;

	_Static_assert(sizeof(struct dfg_peer_add) <= DFG_URING_INLINE_MAX,
		       "peer_add would fit inline");
	memset(&want, 0, sizeof(want));
	want.family = AF_INET;
	want.port = 18600;
	want.timeout_ms = 2000;
	memcpy(want.addr, v4, sizeof(v4));
	slot_init(&s);
	memset(&a, GARBAGE, sizeof(a));
	dfg_prep_peer_add(&s.sqe, 3, &a, AF_INET, v4, 18600, 2000);
	EXPECT_TRUE(indirect_is(&s, 3, DFG_IOC_PEER_ADD, &a, sizeof(a)));
	EXPECT_EQ(0, memcmp(&want, &a, sizeof(a)));

	memset(&want, 0, sizeof(want));
	want.family = AF_INET6;
	memcpy(want.addr, v6, sizeof(v6));
	slot_init(&s);
	memset(&a, GARBAGE, sizeof(a));
	dfg_prep_peer_add(&s.sqe, 3, &a, AF_INET6, v6, 0, 0);
	EXPECT_TRUE(indirect_is(&s, 3, DFG_IOC_PEER_ADD, &a, sizeof(a)));
	EXPECT_EQ(0, memcmp(&want, &a, sizeof(a)));
}

TEST(prep_prefetch_exact)
{
	__u64 ids[3] = { 5, 900, 7 };
	struct dfg_pf_loc out[6];
	struct dfg_prefetch want = {
		.ids = (__u64)(uintptr_t)ids, .out = (__u64)(uintptr_t)out,
		.nr = 3, .what = DFG_PF_ALL,
	};
	struct slot s;

	slot_init(&s);
	dfg_prep_prefetch(&s.sqe, 3, ids, out, 3, DFG_PF_ALL, 0);
	EXPECT_TRUE(inline_is(&s, 3, DFG_IOC_PREFETCH, &want, sizeof(want)));
	/* The speculative flag travels in flags, nothing else changes. */
	want.flags = DFG_PF_SPECULATIVE;
	slot_init(&s);
	dfg_prep_prefetch(&s.sqe, 3, ids, out, 3, DFG_PF_ALL,
			  DFG_PF_SPECULATIVE);
	EXPECT_TRUE(inline_is(&s, 3, DFG_IOC_PREFETCH, &want, sizeof(want)));
}

TEST_HARNESS_MAIN
