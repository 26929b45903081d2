/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg: inline SQE preparation helpers for dfg io_uring commands.
 *
 * Like liburing's io_uring_prep_*() these helpers only fill in an SQE the
 * caller got from io_uring_get_sqe(); they never fail and never submit.
 * There is one dfg_prep_<command>() for every command of <linux/dfg.h>,
 * below in the order of its table, each built on dfg_prep_cmd() (inline
 * arguments: every command whose struct fits in DFG_URING_INLINE_MAX) or
 * dfg_prep_cmd_indirect() (the six whose struct does not: GET_INFO,
 * GRAPH_CREATE, GRAPH_ATTACH, GRAPH_INFO, TEAM_JOIN, SET_REGISTER; and
 * PEER_ADD, whose results are in its struct; the caller's struct must then
 * stay valid until the CQE). Inline commands copy nothing back: their
 * outputs come in cqe->res and dfg_cqe_res2().
 *
 * The SQE must come from a ring created with IORING_SETUP_SQE128 (see
 * dfg_queue_init()): the helpers clear and fill all 128 bytes of it, and
 * struct dfg_uring_cmd occupies the 80-byte sqe->cmd area. Completions
 * carry the command's result in cqe->res and, on IORING_SETUP_CQE32 rings,
 * a second value ("res2") in cqe->big_cqe[0], read with dfg_cqe_res2().
 *
 * The helpers do not touch sqe->user_data beyond zeroing it; set it (and
 * any sqe->flags such as IOSQE_IO_LINK) after the prep call.
 */
#ifndef _DFG_PREP_H
#define _DFG_PREP_H

#include <stdint.h>
#include <string.h>

#include <sys/socket.h>

#include <liburing.h>
#include <linux/dfg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Size of one SQE on an IORING_SETUP_SQE128 ring. */
#define DFG_SQE_SIZE		128

/* The SQE's command area, which holds a struct dfg_uring_cmd. */
static inline struct dfg_uring_cmd *dfg_sqe_cmd(struct io_uring_sqe *sqe)
{
	return (struct dfg_uring_cmd *)sqe->cmd;
}

/*
 * Common part of every dfg command SQE: clear all DFG_SQE_SIZE bytes, then
 * set the opcode, the /dev/dfg file descriptor and the command value.
 */
static inline void __dfg_prep_uring_cmd(struct io_uring_sqe *sqe, int fd,
					__u32 cmd_op)
{
	memset(sqe, 0, DFG_SQE_SIZE);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = cmd_op;
}

/**
 * dfg_prep_cmd() - prepare a dfg command with inline arguments
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @fd:		file descriptor of /dev/dfg (dfg_fd())
 * @cmd_op:	command, DFG_IOC_*
 * @args:	argument struct, copied into the SQE now; may be NULL if @len
 *		is zero
 * @len:	size of @args; at most DFG_URING_INLINE_MAX
 *
 * The argument struct travels in dfg_uring_cmd.args; the rest of that area
 * stays zero, as the module requires. Results come back only through
 * cqe->res and dfg_cqe_res2(); nothing is copied back into @args, which may
 * be reused as soon as this returns. Only the first DFG_URING_INLINE_MAX
 * bytes are copied if @len is larger; such a command does not fit inline and
 * must use dfg_prep_cmd_indirect() instead (the module answers -EINVAL).
 */
static inline void dfg_prep_cmd(struct io_uring_sqe *sqe, int fd,
				__u32 cmd_op, const void *args, __u32 len)
{
	struct dfg_uring_cmd *cmd = dfg_sqe_cmd(sqe);

	__dfg_prep_uring_cmd(sqe, fd, cmd_op);
	if (len > DFG_URING_INLINE_MAX)
		len = DFG_URING_INLINE_MAX;
	if (len)
		memcpy(cmd->args, args, len);
}

/**
 * dfg_prep_cmd_indirect() - prepare a dfg command with arguments in memory
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @fd:		file descriptor of /dev/dfg (dfg_fd())
 * @cmd_op:	command, DFG_IOC_*
 * @args:	argument struct; the module reads it when the command is issued
 *		and writes it back on success, so it must stay valid and
 *		untouched until the CQE arrives
 * @len:	size of @args; must be _IOC_SIZE(@cmd_op)
 *
 * Sets DFG_URING_F_INDIRECT with addr/len, exactly the ioctl semantics.
 * Required for commands whose struct exceeds DFG_URING_INLINE_MAX.
 */
static inline void dfg_prep_cmd_indirect(struct io_uring_sqe *sqe, int fd,
					 __u32 cmd_op, void *args, __u32 len)
{
	struct dfg_uring_cmd *cmd = dfg_sqe_cmd(sqe);

	__dfg_prep_uring_cmd(sqe, fd, cmd_op);
	cmd->flags = DFG_URING_F_INDIRECT;
	cmd->len = len;
	cmd->addr = (__u64)(uintptr_t)args;
}

/* ------------------------------------------------------------------------
 * Core
 * ------------------------------------------------------------------------
 */

/**
 * dfg_prep_get_info() - prepare DFG_IOC_GET_INFO (indirect)
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @fd:		file descriptor of /dev/dfg
 * @info:	clears it and sets @info->size; filled in by the module when the
 *		command completes with res 0. Must stay valid until then.
 */
static inline void dfg_prep_get_info(struct io_uring_sqe *sqe, int fd,
				     struct dfg_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	dfg_prep_cmd_indirect(sqe, fd, DFG_IOC_GET_INFO, info, sizeof(*info));
}

/**
 * dfg_prep_nop() - prepare DFG_IOC_NOP with inline arguments
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @fd:		file descriptor of /dev/dfg
 * @value:	value to echo
 * @flags:	DFG_NOP_F_*
 * @delay_ms:	with DFG_NOP_F_ASYNC, delay before completion; else zero
 *
 * The CQE has res 0 on success and @value in dfg_cqe_res2() (CQE32 ring).
 */
static inline void dfg_prep_nop(struct io_uring_sqe *sqe, int fd,
				__u64 value, __u32 flags, __u32 delay_ms)
{
	struct dfg_nop nop;

	/* memset, not a designated initializer: this header is C++-clean. */
	memset(&nop, 0, sizeof(nop));
	nop.value = value;
	nop.flags = flags;
	nop.delay_ms = delay_ms;
	dfg_prep_cmd(sqe, fd, DFG_IOC_NOP, &nop, sizeof(nop));
}

/* ------------------------------------------------------------------------
 * Graphs
 * ------------------------------------------------------------------------
 */

/*
 * Fill a struct dfg_graph_open for dfg_prep_graph_create/attach(). Copies
 * at most DFG_NAME_MAX bytes of @name: a name that long has no NUL in the
 * struct, and the module rejects it rather than using a truncated name.
 */
static inline void __dfg_graph_open_fill(struct dfg_graph_open *op,
					 const char *name, __u32 mode,
					 __u32 flags)
{
	size_t len = name ? strnlen(name, DFG_NAME_MAX) : 0;

	memset(op, 0, sizeof(*op));
	op->size = sizeof(*op);
	op->flags = flags;
	op->mode = mode;
	if (len)
		memcpy(op->name, name, len);
}

/**
 * dfg_prep_graph_create() - prepare DFG_IOC_GRAPH_CREATE (indirect)
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @fd:		file descriptor of /dev/dfg
 * @op:		argument struct, filled here; must stay valid until the CQE
 * @name:	graph name; copied into @op now
 * @mode:	permission bits (<= 0777)
 * @flags:	DFG_GRAPH_O_CLOEXEC or zero
 *
 * cqe->res is the new graph descriptor (>= 0) or -errno (see
 * dfg_graph_create(); a name of DFG_NAME_MAX bytes or more gives the
 * module's -EINVAL, not -ENAMETOOLONG).
 */
static inline void dfg_prep_graph_create(struct io_uring_sqe *sqe, int fd,
					 struct dfg_graph_open *op,
					 const char *name, __u32 mode,
					 __u32 flags)
{
	__dfg_graph_open_fill(op, name, mode, flags);
	dfg_prep_cmd_indirect(sqe, fd, DFG_IOC_GRAPH_CREATE, op, sizeof(*op));
}

/**
 * dfg_prep_graph_attach() - prepare DFG_IOC_GRAPH_ATTACH (indirect)
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @fd:		file descriptor of /dev/dfg
 * @op:		argument struct, filled here; must stay valid until the CQE
 * @name:	graph name; copied into @op now
 * @flags:	DFG_GRAPH_O_RDONLY, DFG_GRAPH_O_CLOEXEC
 *
 * cqe->res is the new graph descriptor (>= 0) or -errno (see
 * dfg_graph_attach()).
 */
static inline void dfg_prep_graph_attach(struct io_uring_sqe *sqe, int fd,
					 struct dfg_graph_open *op,
					 const char *name, __u32 flags)
{
	__dfg_graph_open_fill(op, name, 0, flags);
	dfg_prep_cmd_indirect(sqe, fd, DFG_IOC_GRAPH_ATTACH, op, sizeof(*op));
}

/**
 * dfg_prep_graph_info() - prepare DFG_IOC_GRAPH_INFO (indirect)
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @graph_fd:	graph descriptor
 * @info:	cleared, @info->size set; filled in by the module when the
 *		command completes with res 0. Must stay valid until then.
 */
static inline void dfg_prep_graph_info(struct io_uring_sqe *sqe, int graph_fd,
				       struct dfg_graph_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	dfg_prep_cmd_indirect(sqe, graph_fd, DFG_IOC_GRAPH_INFO, info,
			      sizeof(*info));
}

/* ------------------------------------------------------------------------
 * Arenas
 * ------------------------------------------------------------------------
 */

/**
 * dfg_prep_arena_create() - prepare DFG_IOC_ARENA_CREATE, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @graph_fd:	graph descriptor opened for writing
 * @size:	bytes wanted, > 0
 *
 * cqe->res is the arena's id (its mmap offset is DFG_MMAP_OFFSET(id)) and
 * dfg_cqe_res2() its size rounded to the page size, or -errno.
 */
static inline void dfg_prep_arena_create(struct io_uring_sqe *sqe,
					 int graph_fd, __u64 size)
{
	struct dfg_arena_create ac;

	memset(&ac, 0, sizeof(ac));
	ac.size = size;
	dfg_prep_cmd(sqe, graph_fd, DFG_IOC_ARENA_CREATE, &ac, sizeof(ac));
}

/* ------------------------------------------------------------------------
 * Regions
 * ------------------------------------------------------------------------
 */

/**
 * dfg_prep_region_export() - prepare DFG_IOC_REGION_EXPORT, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @graph_fd:	graph descriptor opened for writing
 * @addr:	page-aligned start of the caller's range
 * @len:	page-aligned length, > 0
 * @flags:	DFG_REGION_F_*
 *
 * cqe->res is the region's id and dfg_cqe_res2() its mmap offset, or
 * -errno.
 */
static inline void dfg_prep_region_export(struct io_uring_sqe *sqe,
					  int graph_fd, const void *addr,
					  __u64 len, __u32 flags)
{
	struct dfg_region r;

	memset(&r, 0, sizeof(r));
	r.addr = (__u64)(uintptr_t)addr;
	r.len = len;
	r.flags = flags;
	dfg_prep_cmd(sqe, graph_fd, DFG_IOC_REGION_EXPORT, &r, sizeof(r));
}

/**
 * dfg_prep_region_unexport() - prepare DFG_IOC_REGION_UNEXPORT, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @graph_fd:	graph descriptor opened for writing
 * @id:		region id
 *
 * cqe->res is 0 or -errno.
 */
static inline void dfg_prep_region_unexport(struct io_uring_sqe *sqe,
					    int graph_fd, __u32 id)
{
	struct dfg_region r;

	memset(&r, 0, sizeof(r));
	r.id = id;
	dfg_prep_cmd(sqe, graph_fd, DFG_IOC_REGION_UNEXPORT, &r, sizeof(r));
}

/**
 * dfg_prep_region_copy() - prepare DFG_IOC_REGION_COPY, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @graph_fd:	graph descriptor
 * @id:		region id
 * @flags:	DFG_COPY_TO_REGION or DFG_COPY_FROM_REGION
 * @offset:	offset in the region
 * @len:	bytes to copy
 * @addr:	the caller's buffer; must stay valid until the CQE
 *
 * cqe->res is the number of bytes copied or -errno.
 */
static inline void dfg_prep_region_copy(struct io_uring_sqe *sqe, int graph_fd,
					__u32 id, __u32 flags, __u64 offset,
					__u64 len, void *addr)
{
	struct dfg_region_copy c;

	memset(&c, 0, sizeof(c));
	c.id = id;
	c.flags = flags;
	c.offset = offset;
	c.len = len;
	c.addr = (__u64)(uintptr_t)addr;
	dfg_prep_cmd(sqe, graph_fd, DFG_IOC_REGION_COPY, &c, sizeof(c));
}

/* ------------------------------------------------------------------------
 * Channels
 * ------------------------------------------------------------------------
 */

/**
 * dfg_prep_chan_create() - prepare DFG_IOC_CHAN_CREATE, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @graph_fd:	graph descriptor opened for writing
 * @pool:	id of the arena or region the descriptors point into
 * @depth:	descriptors per ring, a power of two
 * @max_producers: producer slots
 *
 * cqe->res is the channel id and dfg_cqe_res2() its mapping size, or
 * -errno.
 */
static inline void dfg_prep_chan_create(struct io_uring_sqe *sqe,
					int graph_fd, __u32 pool, __u32 depth,
					__u32 max_producers)
{
	struct dfg_chan_create cc;

	memset(&cc, 0, sizeof(cc));
	cc.pool = pool;
	cc.depth = depth;
	cc.max_producers = max_producers;
	dfg_prep_cmd(sqe, graph_fd, DFG_IOC_CHAN_CREATE, &cc, sizeof(cc));
}

/**
 * dfg_prep_chan_open() - prepare DFG_IOC_CHAN_OPEN, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @graph_fd:	graph descriptor opened for writing
 * @id:		channel id
 * @role:	DFG_CHAN_PRODUCER or DFG_CHAN_CONSUMER
 * @flags:	DFG_CHAN_O_CLOEXEC or zero
 *
 * cqe->res is the endpoint descriptor and dfg_cqe_res2() the producer's
 * slot (0 for a consumer), or -errno.
 */
static inline void dfg_prep_chan_open(struct io_uring_sqe *sqe, int graph_fd,
				      __u32 id, __u32 role, __u32 flags)
{
	struct dfg_chan_open op;

	memset(&op, 0, sizeof(op));
	op.id = id;
	op.role = role;
	op.flags = flags;
	dfg_prep_cmd(sqe, graph_fd, DFG_IOC_CHAN_OPEN, &op, sizeof(op));
}

/**
 * dfg_prep_chan_wait() - prepare DFG_IOC_CHAN_WAIT with inline arguments
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @endpoint_fd: channel endpoint descriptor (dfg_chan_fd())
 *
 * Parks in the module until the endpoint can make progress. cqe->res is
 * DFG_CHAN_EV_* (READABLE or EOF for a consumer, WRITABLE for a producer)
 * or -errno: -EPIPE (producer, the consumer has gone), -ECANCELED (the
 * submitting task exited or the channel died), -EBUSY (dfg.max_parked).
 * The endpoint's waiting flag must be raised first, as <linux/dfg.h>
 * describes, or no peer WAKEs it: dfg_chan_prep_wait() does both.
 */
static inline void dfg_prep_chan_wait(struct io_uring_sqe *sqe,
				      int endpoint_fd)
{
	struct dfg_chan_wait w;

	memset(&w, 0, sizeof(w));
	dfg_prep_cmd(sqe, endpoint_fd, DFG_IOC_CHAN_WAIT, &w, sizeof(w));
}

/**
 * dfg_prep_chan_wake() - prepare DFG_IOC_CHAN_WAKE, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @endpoint_fd: channel endpoint descriptor (dfg_chan_fd())
 *
 * Wakes the other side if it is parked and can now make progress.
 * cqe->res is the number of parked commands completed, or -errno.
 */
static inline void dfg_prep_chan_wake(struct io_uring_sqe *sqe,
				      int endpoint_fd)
{
	struct dfg_chan_wait w;

	memset(&w, 0, sizeof(w));
	dfg_prep_cmd(sqe, endpoint_fd, DFG_IOC_CHAN_WAKE, &w, sizeof(w));
}

/* ------------------------------------------------------------------------
 * Teams
 * ------------------------------------------------------------------------
 */

/**
 * dfg_prep_team_join() - prepare DFG_IOC_TEAM_JOIN (indirect)
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @graph_fd:	graph descriptor opened for writing
 * @j:		argument struct, filled here; must stay valid until the CQE,
 *		which writes @j->id and @j->map_size back
 * @name:	team name; at most DFG_NAME_MAX bytes copied into @j now
 * @team_size:	number of members
 * @rank:	this member's rank
 * @ctl_size:	bytes of userspace control area
 *
 * cqe->res is the member descriptor or -errno.
 */
static inline void dfg_prep_team_join(struct io_uring_sqe *sqe, int graph_fd,
				      struct dfg_team_join *j,
				      const char *name, __u32 team_size,
				      __u32 rank, __u64 ctl_size)
{
	size_t len = name ? strnlen(name, DFG_NAME_MAX) : 0;

	memset(j, 0, sizeof(*j));
	j->size = sizeof(*j);
	if (len)
		memcpy(j->name, name, len);
	j->team_size = team_size;
	j->rank = rank;
	j->ctl_size = ctl_size;
	dfg_prep_cmd_indirect(sqe, graph_fd, DFG_IOC_TEAM_JOIN, j, sizeof(*j));
}

/**
 * dfg_prep_team_wait() - prepare DFG_IOC_TEAM_WAIT, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @member_fd:	member descriptor
 * @offset:	byte offset of the __u32 word in the team's mapping
 * @value:	wait while the word holds this value
 * @timeout_ns:	< 0 no timeout, 0 do not wait, else relative nanoseconds
 *
 * cqe->res is 1 (the word did not hold @value), 0 (woken) or -errno:
 * -ETIMEDOUT, -EOWNERDEAD, -ECANCELED, -ENOTCONN, -EBUSY, -EINVAL.
 */
static inline void dfg_prep_team_wait(struct io_uring_sqe *sqe, int member_fd,
				      __u64 offset, __u32 value,
				      __s64 timeout_ns)
{
	struct dfg_team_wait w;

	memset(&w, 0, sizeof(w));
	w.offset = offset;
	w.value = value;
	w.timeout_ns = timeout_ns;
	dfg_prep_cmd(sqe, member_fd, DFG_IOC_TEAM_WAIT, &w, sizeof(w));
}

/**
 * dfg_prep_team_wake() - prepare DFG_IOC_TEAM_WAKE, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @member_fd:	member descriptor
 * @offset:	byte offset of the __u32 word in the team's mapping
 *
 * cqe->res is the number of waits woken or -errno.
 */
static inline void dfg_prep_team_wake(struct io_uring_sqe *sqe, int member_fd,
				      __u64 offset)
{
	struct dfg_team_wake w;

	memset(&w, 0, sizeof(w));
	w.offset = offset;
	dfg_prep_cmd(sqe, member_fd, DFG_IOC_TEAM_WAKE, &w, sizeof(w));
}

/**
 * dfg_prep_team_leave() - prepare DFG_IOC_TEAM_LEAVE, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @member_fd:	member descriptor
 *
 * cqe->res is 0 or -errno (-ENOTCONN: already left).
 */
static inline void dfg_prep_team_leave(struct io_uring_sqe *sqe,
				       int member_fd)
{
	struct dfg_team_leave l;

	memset(&l, 0, sizeof(l));
	dfg_prep_cmd(sqe, member_fd, DFG_IOC_TEAM_LEAVE, &l, sizeof(l));
}

/* ------------------------------------------------------------------------
 * Set scheduler
 * ------------------------------------------------------------------------
 */

/**
 * dfg_prep_sched_attach() - prepare DFG_IOC_SCHED_ATTACH, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @graph_fd:	graph descriptor opened for writing
 * @flags:	DFG_SCHED_O_CLOEXEC or zero
 *
 * cqe->res is the scheduler descriptor or -errno.
 */
static inline void dfg_prep_sched_attach(struct io_uring_sqe *sqe,
					 int graph_fd, __u32 flags)
{
	struct dfg_sched_attach a;

	memset(&a, 0, sizeof(a));
	a.flags = flags;
	dfg_prep_cmd(sqe, graph_fd, DFG_IOC_SCHED_ATTACH, &a, sizeof(a));
}

/**
 * dfg_prep_set_register() - prepare DFG_IOC_SET_REGISTER (indirect)
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @sched_fd:	scheduler descriptor
 * @reg:	filled by the caller (reserved fields, @id and @mmap_offset
 *		zero); @reg->size is set here. It and the arrays it points to
 *		must stay valid until the CQE, which writes @reg->id and
 *		@reg->mmap_offset back.
 *
 * cqe->res is the set's id or -errno.
 */
static inline void dfg_prep_set_register(struct io_uring_sqe *sqe,
					 int sched_fd,
					 struct dfg_set_register *reg)
{
	reg->size = sizeof(*reg);
	dfg_prep_cmd_indirect(sqe, sched_fd, DFG_IOC_SET_REGISTER, reg,
			      sizeof(*reg));
}

/**
 * dfg_prep_set_unregister() - prepare DFG_IOC_SET_UNREGISTER, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @sched_fd:	scheduler descriptor
 * @id:		set id
 *
 * cqe->res is 0 or -errno (-ENOENT, -EBUSY).
 */
static inline void dfg_prep_set_unregister(struct io_uring_sqe *sqe,
					   int sched_fd, __u32 id)
{
	struct dfg_set_id u;

	memset(&u, 0, sizeof(u));
	u.id = id;
	dfg_prep_cmd(sqe, sched_fd, DFG_IOC_SET_UNREGISTER, &u, sizeof(u));
}

/**
 * dfg_prep_sched_next() - prepare DFG_IOC_SCHED_NEXT, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @sched_fd:	scheduler descriptor (dfg_sched_fd())
 * @yield_id:	set to give back first (dfg_set_id()), or 0
 * @reason:	DFG_YIELD_* for @yield_id, 0 without it
 * @flags:	DFG_NEXT_F_*
 * @cpu:	with DFG_NEXT_F_CPU, the worker's CPU; else 0
 *
 * Parks in the module until a set of the client is runnable. cqe->res is
 * the set's id (find it with dfg_sched_set()), its quantum in
 * dfg_cqe_res2() on CQE32 rings, or -errno as dfg_sched_next(3) lists.
 */
static inline void dfg_prep_sched_next(struct io_uring_sqe *sqe, int sched_fd,
				       __u32 yield_id, __u32 reason,
				       __u32 flags, __u32 cpu)
{
	struct dfg_sched_next n;

	memset(&n, 0, sizeof(n));
	n.yield_id = yield_id;
	n.yield_reason = reason;
	n.flags = flags;
	n.cpu = cpu;
	dfg_prep_cmd(sqe, sched_fd, DFG_IOC_SCHED_NEXT, &n, sizeof(n));
}

/**
 * dfg_prep_sched_yield() - prepare DFG_IOC_SCHED_YIELD, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @sched_fd:	scheduler descriptor
 * @id:		the set to give back
 * @reason:	DFG_YIELD_*
 *
 * cqe->res is 0 or -errno.
 */
static inline void dfg_prep_sched_yield(struct io_uring_sqe *sqe,
					int sched_fd, __u32 id, __u32 reason)
{
	struct dfg_sched_yield y;

	memset(&y, 0, sizeof(y));
	y.id = id;
	y.reason = reason;
	dfg_prep_cmd(sqe, sched_fd, DFG_IOC_SCHED_YIELD, &y, sizeof(y));
}

/* ------------------------------------------------------------------------
 * Feedback
 * ------------------------------------------------------------------------
 */

/**
 * dfg_prep_feedback_set() - prepare DFG_IOC_FEEDBACK_SET, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @graph_fd:	graph descriptor opened for writing
 * @what:	DFG_FB_CHAN_MARKS or DFG_FB_GRAPH
 * @object:	CHAN_MARKS: the channel's id; GRAPH: 0
 * @high:	CHAN_MARKS: the high fill mark (0 with @low 0: no marks)
 * @low:	CHAN_MARKS: the low fill mark, < @high
 * @stall_ms:	GRAPH: T of STARVED and BACKPRESSURED (0: the default)
 * @period_ms:	GRAPH: period of the summary (0: none)
 *
 * The fields a kind does not use must be zero, as struct dfg_feedback_set
 * says. cqe->res is 0 or -errno (-EINVAL, -ENOENT, -EACCES).
 */
static inline void dfg_prep_feedback_set(struct io_uring_sqe *sqe,
					 int graph_fd, __u32 what,
					 __u32 object, __u32 high, __u32 low,
					 __u32 stall_ms, __u32 period_ms)
{
	struct dfg_feedback_set f;

	memset(&f, 0, sizeof(f));
	f.what = what;
	f.object = object;
	f.high = high;
	f.low = low;
	f.stall_ms = stall_ms;
	f.period_ms = period_ms;
	dfg_prep_cmd(sqe, graph_fd, DFG_IOC_FEEDBACK_SET, &f, sizeof(f));
}

/* ------------------------------------------------------------------------
 * Partitions and hub-node prefetch
 * ------------------------------------------------------------------------
 */

/**
 * dfg_prep_part_load() - prepare DFG_IOC_PART_LOAD, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @fd:		file descriptor of /dev/dfg (CAP_SYS_ADMIN)
 * @image:	the partition image (struct dfg_part_hdr first); the module
 *		reads it when the command is issued, so it must stay valid
 *		until the CQE
 * @len:	its bytes
 *
 * cqe->res is 0 or -errno (-EINVAL, -EFBIG, -EBUSY, -EFAULT, -EPERM).
 */
static inline void dfg_prep_part_load(struct io_uring_sqe *sqe, int fd,
				      const void *image, __u64 len)
{
	struct dfg_part_load l;

	memset(&l, 0, sizeof(l));
	l.addr = (__u64)(uintptr_t)image;
	l.len = len;
	dfg_prep_cmd(sqe, fd, DFG_IOC_PART_LOAD, &l, sizeof(l));
}

/**
 * dfg_prep_peer_add() - prepare DFG_IOC_PEER_ADD (indirect)
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @fd:		file descriptor of /dev/dfg (CAP_SYS_ADMIN)
 * @a:		argument struct, filled here; must stay valid until the CQE,
 *		which writes @a->id, @a->node_first and @a->node_count back
 * @family:	AF_INET or AF_INET6
 * @addr:	the peer's address in network order: 4 bytes are copied for
 *		AF_INET, 16 for any other @family
 * @port:	the peer's port, host order (0: DFG_PF_PORT)
 * @timeout_ms:	connection timeout (0: the module's 5000)
 *
 * The struct fits inline, but its results come back in it, so it travels
 * by address. cqe->res is 0 or -errno (see DFG_IOC_PEER_ADD).
 */
static inline void dfg_prep_peer_add(struct io_uring_sqe *sqe, int fd,
				     struct dfg_peer_add *a, __u16 family,
				     const void *addr, __u16 port,
				     __u32 timeout_ms)
{
	memset(a, 0, sizeof(*a));
	a->family = family;
	a->port = port;
	a->timeout_ms = timeout_ms;
	memcpy(a->addr, addr, family == AF_INET ? 4 : sizeof(a->addr));
	dfg_prep_cmd_indirect(sqe, fd, DFG_IOC_PEER_ADD, a, sizeof(*a));
}

/**
 * dfg_prep_prefetch() - prepare DFG_IOC_PREFETCH, inline
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @fd:		file descriptor of /dev/dfg
 * @ids:	@nr global node IDs; must stay valid until the CQE
 * @out:	@nr entries per bit of @what (node i's DFG_PF_NBRS entry, then
 *		its DFG_PF_ATTRS entry), written by the module; must stay
 *		valid until the CQE
 * @nr:		nodes, 1..DFG_PF_NR_MAX
 * @what:	DFG_PF_NBRS, DFG_PF_ATTRS or both
 * @flags:	0 (a demand request), or DFG_PF_SPECULATIVE: reads from a
 *		peer only while its link's traffic is under the module's
 *		threshold, the others come back as DFG_PF_GATED entries
 *		(modules with DFG_F_PF_GATE; -EINVAL from older ones)
 *
 * Completes once every read from a peer has landed in the cache. cqe->res
 * is the number of entries read from peers, or -errno (see
 * DFG_IOC_PREFETCH); on a CQE32 ring dfg_cqe_res2() is the number of
 * gated entries.
 */
static inline void dfg_prep_prefetch(struct io_uring_sqe *sqe, int fd,
				     const __u64 *ids, struct dfg_pf_loc *out,
				     __u32 nr, __u32 what, __u32 flags)
{
	struct dfg_prefetch p;

	memset(&p, 0, sizeof(p));
	p.ids = (__u64)(uintptr_t)ids;
	p.out = (__u64)(uintptr_t)out;
	p.nr = nr;
	p.what = what;
	p.flags = flags;
	dfg_prep_cmd(sqe, fd, DFG_IOC_PREFETCH, &p, sizeof(p));
}

/**
 * dfg_cqe_res2() - second result of a dfg command completion
 * @cqe:	CQE of an IORING_SETUP_CQE32 ring
 *
 * Returns cqe->big_cqe[0]. Only valid on a CQE32 ring: a 16-byte CQE has no
 * such field and this would read past it.
 */
static inline __u64 dfg_cqe_res2(const struct io_uring_cqe *cqe)
{
	return cqe->big_cqe[0];
}

#ifdef __cplusplus
}
#endif

#endif /* _DFG_PREP_H */
