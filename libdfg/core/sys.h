/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg's one library-wide private seam: the handle (struct dfg), the
 * errno-free system calls, the one synchronous command call
 * (dfg_sys_cmd()) and the wait that picks ioctl or the thread's ring
 * (dfg_sys_wait()). core/ implements it; chan/ (arenas, regions,
 * channels), coll/ (teams: kteam.c, team.c, alltoall.c, xport_shm.c),
 * sched/, hub/ (PART_LOAD, PEER_ADD, PREFETCH) and run/exec.c (the plan's
 * generation, FEEDBACK_SET) include it, as
 * "sys.h" through the library's -Icore, because every object file enters
 * the module through these calls and nowhere else. It is the only header
 * of one folder that others include by that path; any other seam is a
 * header named for it in its own folder (DESIGN.md, "Layout"). Not
 * installed.
 */
#ifndef _DFG_CORE_SYS_H
#define _DFG_CORE_SYS_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dfg/dfg.h>

/*
 * struct dfg - a handle
 * @fd:		open file of the dfg device; owned
 * @has_ring:	@ring was initialised (not DFG_OPEN_NO_RING)
 * @ring:	SQE128|CQE32 ring; owned, used by dfg_uring_cmd() and lent out
 *		by dfg_ring()
 */
struct dfg {
	int		fd;
	bool		has_ring;
	struct io_uring	ring;
};

/*
 * System calls returning -errno, liburing style (src/syscall.h). libc
 * reports through errno; these read it and restore the caller's value, so
 * that no libdfg call changes errno.
 */
static inline int __dfg_sys_ret(int ret, int saved_errno)
{
	if (ret < 0)
		ret = -errno;
	errno = saved_errno;
	return ret;
}

static inline int __dfg_sys_open(const char *path, int flags)
{
	int saved = errno;

	return __dfg_sys_ret(open(path, flags), saved);
}

/*
 * dfg_sys_cmd() - one dfg command on any dfg descriptor, through ioctl
 * @fd:		/dev/dfg, graph, endpoint, member or scheduler descriptor
 * @cmd_op:	DFG_IOC_*
 * @args:	the command's struct, _IOC_SIZE(@cmd_op) bytes, copied in and
 *		(on success) back out
 *
 * The one place libdfg enters the module synchronously (core/cmd.c); every
 * object file calls it. Returns the command's result (>= 0) or -errno and
 * leaves errno as it was.
 */
int dfg_sys_cmd(int fd, __u32 cmd_op, void *args);

/*
 * struct dfg_intr - what a ring command does when a signal interrupts its
 * wait for the CQE
 * @fn:		called once, in the waiting thread, after the first signal;
 *		it must make the parked command complete soon (a TEAM_WAKE of
 *		the word a TEAM_WAIT sleeps on). The command then ends with
 *		-EINTR unless it failed.
 * @fd, @off:	for @fn
 *
 * Without one a signal runs its handler and the wait goes on.
 */
struct dfg_intr {
	void	(*fn)(const struct dfg_intr *intr);
	int	fd;
	__u64	off;
};

/*
 * __dfg_ring_cmd() - one command on @ring, synchronously
 *
 * Submits the command (inline when its struct fits DFG_URING_INLINE_MAX,
 * else by address) with whatever the ring's owner left queued, and waits
 * for its CQE, always: see @intr. Other completions stay in the CQ ring,
 * in order. Returns cqe->res (*@res2 its res2) or -errno of io_uring, and
 * leaves errno alone. dfg_uring_cmd() and the thread's wait ring use it.
 */
int __dfg_ring_cmd(struct io_uring *ring, int fd, __u32 cmd_op, void *args,
		   __u64 *res2, const struct dfg_intr *intr);

/*
 * dfg_sys_wait() - a command that may park (CHAN_WAIT, TEAM_WAIT,
 * SCHED_NEXT), on the calling thread's wait ring (core/wait.c) once the
 * application took it with dfg_wait_ring() (or under DFG_WAIT_URING), else
 * through dfg_sys_cmd(): a lone wait costs less over ioctl on 6.1 (see
 * core/wait.c). Also through ioctl when the module refuses to park more
 * (-EBUSY, dfg.max_parked; then @retry, if not NULL, is sent instead of
 * @args: SCHED_NEXT gave its set back before it tried to park).
 *
 * Inline on the ring: nothing is copied back into @args there; *@res2
 * gets the CQE's res2. Through ioctl @args is copied back and *@res2 is
 * set to 0. Returns the result (>= 0) or -errno; errno is left alone.
 */
int dfg_sys_wait(int fd, __u32 cmd_op, void *args, void *retry, __u64 *res2,
		 const struct dfg_intr *intr);

static inline void __dfg_sys_close(int fd)
{
	int saved = errno;

	close(fd);
	errno = saved;
}

/* mmap(2) returning the mapping, or NULL with -errno in *@err. */
static inline void *__dfg_sys_mmap(size_t len, int prot, int fd, __u64 off,
				   int *err)
{
	int saved = errno;
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)off);

	if (p == MAP_FAILED) {
		*err = -errno;
		p = NULL;
	}
	errno = saved;
	return p;
}

static inline void __dfg_sys_munmap(void *p, size_t len)
{
	int saved = errno;

	munmap(p, len);
	errno = saved;
}

#endif /* _DFG_CORE_SYS_H */
