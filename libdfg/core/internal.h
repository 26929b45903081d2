/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg internals shared by core/: the handle and errno-free system calls.
 */
#ifndef _DFG_CORE_INTERNAL_H
#define _DFG_CORE_INTERNAL_H

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

#endif /* _DFG_CORE_INTERNAL_H */
