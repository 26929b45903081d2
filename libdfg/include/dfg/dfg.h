/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg: userspace library for the dfg kernel module (/dev/dfg).
 *
 * A struct dfg handle owns one open file of /dev/dfg and, unless opened with
 * DFG_OPEN_NO_RING, an io_uring created with IORING_SETUP_SQE128 and
 * IORING_SETUP_CQE32, the ring shape every dfg command needs.
 *
 * Commands reach the module on two paths that share one command table
 * (see <linux/dfg.h>): synchronously through ioctl (dfg_cmd() and the typed
 * wrappers dfg_info(), dfg_nop()), and through io_uring, either
 * synchronously with dfg_uring_cmd() or asynchronously by preparing SQEs
 * with the inline dfg_prep_*() helpers of <dfg/prep.h> on dfg_ring().
 *
 * Graphs, arenas and the arena buffer allocator are in <dfg/graph.h>,
 * exported regions in <dfg/region.h> and channels in <dfg/chan.h>, all
 * included from here.
 *
 * Errors: like liburing, every function that can fail returns a negative
 * errno value (-ENOENT, -EINVAL, ...) and leaves errno untouched; callers
 * never need to look at errno. Functions returning pointers or void say so.
 *
 * Threads: a handle is not locked. Calls that use its ring (dfg_uring_cmd(),
 * or the caller's own use of dfg_ring()) must not run concurrently on the
 * same handle; ioctl-based calls (dfg_cmd(), dfg_info(), dfg_nop()) may.
 */
#ifndef _DFG_DFG_H
#define _DFG_DFG_H

#include <liburing.h>
#include <linux/dfg.h>

#include <dfg/prep.h>
#include <dfg/graph.h>
#include <dfg/region.h>
#include <dfg/chan.h>
#include <dfg/sched.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque handle: the /dev/dfg file descriptor and its ring. */
struct dfg;

/* Device opened by dfg_open() unless $DFG_DEVICE names another one. */
#define DFG_DEVICE_PATH		"/dev/" DFG_DEVICE_NAME

/* Entries of the ring dfg_open() creates. */
#define DFG_RING_ENTRIES	64

/* dfg_open() flags */
#define DFG_OPEN_NO_RING	(1U << 0)	/* do not create the ring */
#define DFG_OPEN_ALL		(DFG_OPEN_NO_RING)

/**
 * dfg_open() - open the dfg device and create a handle
 * @dp:		out: the new handle, set only on success
 * @flags:	DFG_OPEN_*; unknown bits give -EINVAL
 *
 * Opens $DFG_DEVICE if set and non-empty (ignored in secure-execution
 * mode), else DFG_DEVICE_PATH, read-write and close-on-exec, and creates a
 * ring of DFG_RING_ENTRIES entries with dfg_queue_init() unless
 * DFG_OPEN_NO_RING is given.
 *
 * Returns 0, or -errno: -EINVAL (@dp NULL, unknown flag), -ENOMEM, any
 * error of open(2) (-ENOENT when the module is not loaded, -EACCES, ...),
 * any error of dfg_queue_init().
 */
int dfg_open(struct dfg **dp, unsigned int flags);

/**
 * dfg_close() - tear down the ring, close the device, free the handle
 * @d:		handle from dfg_open(), or NULL (nothing happens)
 *
 * Requests still in flight on the ring are not waited for; commands parked
 * in the module are completed by the module when the file goes away.
 */
void dfg_close(struct dfg *d);

/**
 * dfg_fd() - file descriptor of /dev/dfg owned by the handle
 * @d:		handle
 *
 * Returns the descriptor (>= 0), for dfg_prep_*() and raw ioctl(2), or
 * -EINVAL if @d is NULL. The handle keeps ownership: do not close it.
 */
int dfg_fd(const struct dfg *d);

/**
 * dfg_ring() - the handle's io_uring
 * @d:		handle
 *
 * Returns the SQE128|CQE32 ring, to be used with the liburing API and the
 * dfg_prep_*() helpers, or NULL if @d is NULL or was opened with
 * DFG_OPEN_NO_RING. The handle keeps ownership: do not call
 * io_uring_queue_exit() on it.
 */
struct io_uring *dfg_ring(struct dfg *d);

/**
 * dfg_queue_init() - create a ring able to carry dfg commands
 * @entries:	SQ size, as io_uring_queue_init()
 * @ring:	ring to initialise
 * @flags:	IORING_SETUP_* flags; IORING_SETUP_SQE128 and
 *		IORING_SETUP_CQE32 are always added
 *
 * For callers that want their own rings (one per thread, other sizes or
 * setup flags). Release with io_uring_queue_exit().
 *
 * Returns 0 or -errno of io_uring_queue_init(): -EINVAL (bad entries or
 * flags, or a kernel without SQE128/CQE32, before 5.19), -ENOMEM, -EPERM
 * (io_uring disabled), ...
 */
int dfg_queue_init(unsigned int entries, struct io_uring *ring,
		   unsigned int flags);

/**
 * dfg_wait_ring() - the calling thread's wait ring
 * @ringp:	out: the ring, set only on success
 *
 * libdfg sends every command that waits in the module (channel WAIT,
 * team WAIT, scheduler NEXT) as an SQE on a ring of the calling thread:
 * SQE128|CQE32, made at the thread's first wait (or here) and released
 * when the thread exits; a forked child gets a ring of its own. The thread
 * may put its own requests on it (dfg_chan_prep_wait(), dfg_prep_*(),
 * reads, timers, IORING_OP_NOP) and wait for them with the liburing API,
 * so that one io_uring_enter() sleeps on all of them. libdfg's own waits
 * on this ring reap only their own completions and leave every other CQE
 * in place, in order; their user_data are addresses in libdfg's stack
 * frames, which an application's requests must not use. Use the ring from
 * its thread only, and never call io_uring_queue_exit() on it.
 *
 * A process that sets DFG_NO_URING (to anything but "" or "0") before a
 * thread first waits gets no ring: its waits are ioctls, as is every wait
 * of a thread whose ring cannot be made.
 *
 * Returns 0 or -errno: -EINVAL (@ringp NULL), -EOPNOTSUPP (DFG_NO_URING),
 * or why the ring could not be made: -ENOMEM, an error of
 * dfg_queue_init() (-EPERM when io_uring is disabled, ...).
 */
int dfg_wait_ring(struct io_uring **ringp);

/**
 * dfg_info() - DFG_IOC_GET_INFO through ioctl
 * @d:		handle
 * @info:	out: cleared, @info->size set, then filled by the module
 *
 * Returns 0 or -errno: -EINVAL (NULL argument, or a module that does not
 * accept this struct size), -ENOTTY (the device is not dfg), -EFAULT.
 */
int dfg_info(struct dfg *d, struct dfg_info *info);

/**
 * dfg_nop() - DFG_IOC_NOP through ioctl
 * @d:		handle
 * @value:	value to echo
 * @flags:	DFG_NOP_F_*
 * @delay_ms:	with DFG_NOP_F_ASYNC, delay before completion; else zero
 * @echo:	out, may be NULL: the echoed value, set on success
 *
 * With DFG_NOP_F_ASYNC the call sleeps @delay_ms; with DFG_NOP_F_PARK it
 * sleeps until a signal arrives (-EINTR).
 *
 * Returns 0 or -errno: -EINVAL (unknown flag, ASYNC with PARK, delay
 * without ASYNC or above DFG_NOP_DELAY_MAX_MS), -EINTR, -EBUSY, -ENOTTY.
 */
int dfg_nop(struct dfg *d, __u64 value, __u32 flags, __u32 delay_ms,
	    __u64 *echo);

/**
 * dfg_cmd() - any dfg command, synchronously, through ioctl
 * @d:		handle
 * @cmd_op:	command, DFG_IOC_*
 * @args:	argument struct of the command, _IOC_SIZE(@cmd_op) bytes;
 *		copied in, and back out on success
 *
 * Returns the command's result (>= 0) or -errno: -EINVAL (@d NULL, bad
 * arguments), -EOPNOTSUPP (unknown command), -EFAULT, -ENOTTY, and the
 * errors of the command.
 */
int dfg_cmd(struct dfg *d, __u32 cmd_op, void *args);

/**
 * dfg_uring_cmd() - any dfg command, synchronously, through the handle's ring
 * @d:		handle with a ring
 * @cmd_op:	command, DFG_IOC_*
 * @args:	argument struct, _IOC_SIZE(@cmd_op) bytes. Sent inline when it
 *		fits in DFG_URING_INLINE_MAX bytes (input only: nothing is
 *		copied back), otherwise indirectly (copied back on success,
 *		as with ioctl).
 * @res2:	out, may be NULL: cqe->big_cqe[0] of the completion
 *
 * Submits one SQE (together with any SQEs the caller left queued on the
 * ring) and waits for its completion, retrying the wait on -EINTR since
 * the command is already in flight. Other requests may be in flight on the
 * ring: their completions are left in the CQ ring, in order, for the caller.
 *
 * Returns cqe->res, the command's result (>= 0) or its -errno (-EOPNOTSUPP
 * when the file has no uring_cmd support, e.g. not the dfg device), or
 * -EINVAL (@d NULL or opened with DFG_OPEN_NO_RING), -EFAULT (@args NULL),
 * -EBUSY (no free SQE even after submitting), or an io_uring_submit() error.
 */
int dfg_uring_cmd(struct dfg *d, __u32 cmd_op, void *args, __u64 *res2);

/**
 * dfg_version() - version of the library
 *
 * Returns a static string such as "0.1.0". Never fails.
 */
const char *dfg_version(void);

#ifdef __cplusplus
}
#endif

#endif /* _DFG_DFG_H */
