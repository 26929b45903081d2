/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - the gaps between the kernels dfg.ko builds on.
 *
 * No objects, locks or references of its own: thin inline wrappers only.
 *
 * The module targets Debian's Linux 6.1 (6.1.y stable) and must still build
 * on newer kernels. Gaps are detected by feature, never by version number:
 * a stable backport (io_uring_cmd_done() gained issue_flags in 6.1.y)
 * would defeat a version test. The probes live in the top-level Kbuild
 * (file tests and greps over $(srctree); sparse lacks __has_include) and
 * arrive here as -DDFG_* flags:
 *
 *   DFG_HAVE_IO_URING_CMD_H	<linux/io_uring/cmd.h> exists (6.7+)
 *   DFG_URING_NO_ISSUE_FLAGS	io_uring_cmd_done(cmd, ret, res2) and a
 *				task-work callback without issue_flags
 *				(5.19 .. early 6.1.y)
 *   DFG_REQ_TCTX		struct io_kiocb reaches its task through
 *				->tctx (6.14+), not ->task
 *   DFG_HAVE_IN_EXECVE		task_struct.in_execve exists (up to 6.7)
 *   DFG_HAVE_VM_FLAGS_SET	vm_flags_set()/vm_flags_clear() exist and
 *				vma->vm_flags is read-only (6.3+)
 *
 * Known gaps, handled here:
 *   - 6.7 moved struct io_uring_cmd to <linux/io_uring/cmd.h> and replaced
 *     ->cmd by ->sqe (read it with io_uring_sqe_cmd()).
 *   - The task that owns a request is req->task up to 6.13; 6.14 reaches
 *     it through req->tctx->task.
 *   - A ring closed while its task lives waits for its requests in
 *     io_ring_exit_work(); the monitor cancels on the ring's dying ctx
 *     ref too (struct io_ring_ctx internals, as for req->task).
 *   - exec() waits for the task's io_uring requests too
 *     (io_uring_task_cancel() in begin_new_exec()) without PF_EXITING;
 *     in_execve, where it exists, lets the monitor see that.
 *
 * Known gaps, not needed by this module:
 *   - class_create() lost its owner argument in 6.4: dfg is a misc device
 *     and creates no class.
 *   - 6.7 added a cancel hook (io_uring_cmd_mark_cancelable(),
 *     IO_URING_F_CANCEL). 6.1 has none, so wait.c polls for PF_EXITING
 *     like ublk_daemon_monitor_work(); that works on every kernel.
 */
#ifndef _DFG_KMOD_COMPAT_H
#define _DFG_KMOD_COMPAT_H

#include <linux/compiler.h>
#include <linux/mm.h>
#include <linux/percpu-refcount.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>

#ifdef DFG_HAVE_IO_URING_CMD_H
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif
#include <linux/io_uring_types.h>

/* The 80-byte (SQE128) command area of the SQE; user-shared memory. */
static inline const void *dfg_uring_cmd_area(const struct io_uring_cmd *ucmd)
{
#ifdef DFG_HAVE_IO_URING_CMD_H
	return io_uring_sqe_cmd(ucmd->sqe);
#else
	return ucmd->cmd;
#endif
}

static inline void dfg_uring_cmd_done(struct io_uring_cmd *ucmd, int ret,
				      u64 res2, unsigned int issue_flags)
{
#ifdef DFG_URING_NO_ISSUE_FLAGS
	io_uring_cmd_done(ucmd, ret, res2);
#else
	io_uring_cmd_done(ucmd, ret, res2, issue_flags);
#endif
}

/*
 * DFG_URING_TW_CB(name, fn) defines name() with the task-work callback
 * signature of this kernel, calling fn(ucmd, issue_flags).
 */
#ifdef DFG_URING_NO_ISSUE_FLAGS
#define DFG_URING_TW_CB(name, fn)					\
static void name(struct io_uring_cmd *ucmd)				\
{									\
	fn(ucmd, 0);							\
}
#else
#define DFG_URING_TW_CB(name, fn)					\
static void name(struct io_uring_cmd *ucmd, unsigned int issue_flags)	\
{									\
	fn(ucmd, issue_flags);						\
}
#endif

/*
 * The task that owns the request: the submitter, whose task work completes
 * it and whose exit waits for it. Not current when io-wq (IOSQE_ASYNC or a
 * retry after -EAGAIN) issues the command.
 */
static inline struct task_struct *dfg_uring_cmd_task(struct io_uring_cmd *ucmd)
{
#ifdef DFG_REQ_TCTX
	return cmd_to_io_kiocb(ucmd)->tctx->task;
#else
	return cmd_to_io_kiocb(ucmd)->task;
#endif
}

/*
 * The ring of the request is being torn down (its last file reference went
 * while the task lives on): io_ring_exit_work() waits for every request and
 * warns after five minutes. The request holds a ring reference, so ->ctx is
 * valid while the command is parked; the poll is lockless and repeated.
 */
static inline bool dfg_uring_cmd_ring_dying(struct io_uring_cmd *ucmd)
{
	return percpu_ref_is_dying(&cmd_to_io_kiocb(ucmd)->ctx->refs);
}

/*
 * The task is leaving and waits for its io_uring requests: it exits
 * (PF_EXITING), its thread group is dying (SIGNAL_GROUP_EXIT: io threads
 * such as an SQPOLL thread cancel before PF_EXITING), or it execs.
 * Lockless reads of another task's state: a poll, repeated every period;
 * the caller holds a task reference, which keeps ->signal alive.
 */
static inline bool dfg_task_leaving(struct task_struct *t)
{
	if (READ_ONCE(t->flags) & PF_EXITING)
		return true;
	if (READ_ONCE(t->signal->flags) & SIGNAL_GROUP_EXIT)
		return true;
#ifdef DFG_HAVE_IN_EXECVE
	/* Racy by design: a bit of another task, polled each period. */
	if (data_race(t->in_execve != 0))
		return true;
#endif
	return false;
}

/* Change vma->vm_flags of a vma being set up by ->mmap. */
static inline void dfg_vm_flags_set(struct vm_area_struct *vma,
				    unsigned long flags)
{
#ifdef DFG_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

static inline void dfg_vm_flags_clear(struct vm_area_struct *vma,
				      unsigned long flags)
{
#ifdef DFG_HAVE_VM_FLAGS_SET
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

#endif /* _DFG_KMOD_COMPAT_H */
