/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg: inline SQE preparation helpers for dfg io_uring commands.
 *
 * Like liburing's io_uring_prep_*() these helpers only fill in an SQE the
 * caller got from io_uring_get_sqe(); they never fail and never submit.
 * Every dfg_prep_<command>() is built on dfg_prep_cmd() (inline arguments)
 * or dfg_prep_cmd_indirect() (arguments behind a pointer).
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

/**
 * dfg_prep_get_info() - prepare DFG_IOC_GET_INFO (indirect)
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @fd:		file descriptor of /dev/dfg
 * @info:	clears it and sets @info->size; filled in by the module when the
 *		command completes with res 0. Must stay valid until then.
 *
 * struct dfg_info is larger than DFG_URING_INLINE_MAX, so it always travels
 * indirectly.
 */
static inline void dfg_prep_get_info(struct io_uring_sqe *sqe, int fd,
				     struct dfg_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	dfg_prep_cmd_indirect(sqe, fd, DFG_IOC_GET_INFO, info, sizeof(*info));
}

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
 * dfg_prep_chan_wait() - prepare DFG_IOC_CHAN_WAIT with inline arguments
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring
 * @endpoint_fd: channel endpoint descriptor (dfg_chan_fd())
 *
 * Parks in the module until the endpoint can make progress. cqe->res is
 * DFG_CHAN_EV_* (READABLE or EOF for a consumer, WRITABLE for a producer)
 * or -errno: -EPIPE (producer, the consumer has gone), -ECANCELED (the
 * submitting task exited or the channel died), -EBUSY (dfg.max_parked).
 * Raise the endpoint's waiting flag first as <linux/dfg.h> describes, or
 * simply retry dfg_chan_send()/dfg_chan_recv() with DFG_CHAN_NONBLOCK
 * after each completion: WAIT completes at once when progress is possible.
 */
static inline void dfg_prep_chan_wait(struct io_uring_sqe *sqe,
				      int endpoint_fd)
{
	struct dfg_chan_wait w;

	memset(&w, 0, sizeof(w));
	dfg_prep_cmd(sqe, endpoint_fd, DFG_IOC_CHAN_WAIT, &w, sizeof(w));
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
