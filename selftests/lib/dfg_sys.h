/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dfg_sys.h - thin wrappers over the raw dfg ABI for the selftests.
 *
 * Everything here talks to /dev/dfg directly: ioctl(2) and hand-built
 * IORING_OP_URING_CMD SQEs carrying a struct dfg_uring_cmd, never libdfg.
 * Like pidfd.h, the helpers return what the kernel said (-errno on failure)
 * and never assert; the tests decide what is right.
 */
#ifndef DFG_SYS_H
#define DFG_SYS_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>
#include <pthread.h>
#include <linux/dfg.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define DFG_DEV_PATH	"/dev/" DFG_DEVICE_NAME
#define DFG_SYSFS_DIR	"/sys/kernel/dfg"

/* How a command reaches the module; one FIXTURE_VARIANT per path. */
enum dfg_path {
	DFG_PATH_IOCTL,		/* ioctl(fd, cmd, &args) */
	DFG_PATH_INLINE,	/* uring_cmd, args inline in the SQE */
	DFG_PATH_INDIRECT,	/* uring_cmd, DFG_URING_F_INDIRECT */
};

static inline const char *dfg_path_name(enum dfg_path path)
{
	switch (path) {
	case DFG_PATH_IOCTL:
		return "ioctl";
	case DFG_PATH_INLINE:
		return "uring-inline";
	case DFG_PATH_INDIRECT:
		return "uring-indirect";
	}
	return "?";
}

static inline __u64 dfg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static inline __u64 dfg_ms_since(__u64 start_ns)
{
	return (dfg_now_ns() - start_ns) / 1000000ULL;
}

/* Opens /dev/dfg; returns the fd or -errno. */
/* The module's parameters, as root sets them at run time. */
#define DFG_PARAM_DIR	"/sys/module/dfg/parameters/"

/*
 * Read (into @val of @size, the newline cut) or write (@wr: the string
 * @val) the file at @path, a sysfs or cgroup attribute. 0 or -errno.
 */
static inline int dfg_file_rw(const char *path, char *val, size_t size,
			      bool wr)
{
	ssize_t n;
	int fd;

	fd = open(path, (wr ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = wr ? write(fd, val, strlen(val)) : read(fd, val, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	if (!wr) {
		val[n] = '\0';
		val[strcspn(val, "\n")] = '\0';
	}
	return 0;
}

/* dfg_file_rw() of module parameter @name. */
static inline int dfg_param_rw(const char *name, char *val, size_t size,
			       bool wr)
{
	char path[256];

	if ((size_t)snprintf(path, sizeof(path), DFG_PARAM_DIR "%s", name) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	return dfg_file_rw(path, val, size, wr);
}

/* Occurrences of @what in the kernel log, or -1 if it cannot be read. */
static inline int dfg_klog_count(const char *what)
{
	int size = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */
	char *buf, *s;
	int n = 0, len;

	if (size <= 0)
		return -1;
	buf = malloc(size + 1);
	if (!buf)
		return -1;
	len = klogctl(3, buf, size);		/* SYSLOG_ACTION_READ_ALL */
	if (len < 0) {
		free(buf);
		return -1;
	}
	buf[len] = '\0';
	for (s = buf; (s = strstr(s, what)); s++)
		n++;
	free(buf);
	return n;
}

static inline int sys_dfg_open(void)
{
	int fd = open(DFG_DEV_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* ioctl(2) on /dev/dfg; returns its result or -errno. */
static inline int sys_dfg_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret = ioctl(fd, cmd, arg);

	return ret < 0 ? -errno : ret;
}

/* ------------------------------------------------------------------------
 * io_uring: SQE128 | CQE32 rings and raw dfg uring_cmd SQEs
 * ------------------------------------------------------------------------
 */

/*
 * Sets up a ring of @entries SQEs with @flags (callers add
 * IORING_SETUP_SQE128 | IORING_SETUP_CQE32 themselves or use
 * dfg_ring_init()). @cq_entries, when nonzero, sizes the CQ ring.
 */
static inline int dfg_ring_init_flags(struct io_uring *ring,
				      unsigned int entries, unsigned int flags,
				      unsigned int cq_entries)
{
	struct io_uring_params p = { .flags = flags };

	if (cq_entries) {
		p.flags |= IORING_SETUP_CQSIZE;
		p.cq_entries = cq_entries;
	}
	return io_uring_queue_init_params(entries, ring, &p);
}

static inline int dfg_ring_init(struct io_uring *ring, unsigned int entries)
{
	return dfg_ring_init_flags(ring, entries,
				   IORING_SETUP_SQE128 | IORING_SETUP_CQE32, 0);
}

static inline size_t dfg_sqe_size(const struct io_uring *ring)
{
	return ring->flags & IORING_SETUP_SQE128 ? 128 : 64;
}

static inline struct dfg_uring_cmd *dfg_sqe_cmd(struct io_uring_sqe *sqe)
{
	return (struct dfg_uring_cmd *)sqe->cmd;
}

/*
 * Gets a zeroed SQE (the whole 64 or 128 bytes) set up as an
 * IORING_OP_URING_CMD with @cmd_op on @fd; the dfg_uring_cmd area is left
 * zero (inline, no args). NULL when the SQ ring is full.
 */
static inline struct io_uring_sqe *dfg_get_cmd_sqe(struct io_uring *ring,
						   int fd, __u32 cmd_op,
						   __u64 user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		return NULL;
	memset(sqe, 0, dfg_sqe_size(ring));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = cmd_op;
	sqe->user_data = user_data;
	return sqe;
}

/* Inline: copies @len bytes of @args into dfg_uring_cmd.args. */
static inline struct io_uring_sqe *
dfg_prep_inline(struct io_uring *ring, int fd, __u32 cmd_op,
		const void *args, size_t len, __u64 user_data)
{
	struct io_uring_sqe *sqe = dfg_get_cmd_sqe(ring, fd, cmd_op, user_data);

	if (!sqe)
		return NULL;
	if (len > DFG_URING_INLINE_MAX)
		len = DFG_URING_INLINE_MAX;
	memcpy(dfg_sqe_cmd(sqe)->args, args, len);
	return sqe;
}

/* Indirect: addr/len point at @args. */
static inline struct io_uring_sqe *
dfg_prep_indirect(struct io_uring *ring, int fd, __u32 cmd_op,
		  void *args, __u32 len, __u64 user_data)
{
	struct io_uring_sqe *sqe = dfg_get_cmd_sqe(ring, fd, cmd_op, user_data);
	struct dfg_uring_cmd *cmd;

	if (!sqe)
		return NULL;
	cmd = dfg_sqe_cmd(sqe);
	cmd->flags = DFG_URING_F_INDIRECT;
	cmd->len = len;
	cmd->addr = (__u64)(uintptr_t)args;
	return sqe;
}

/* A CQE copied out of the ring. */
struct dfg_cqe {
	__u64	user_data;
	__s32	res;
	__u32	flags;
	__u64	res2;		/* big_cqe[0] on CQE32 rings, else 0 */
};

static inline void dfg_cqe_copy(const struct io_uring *ring,
				const struct io_uring_cqe *cqe,
				struct dfg_cqe *out)
{
	out->user_data = cqe->user_data;
	out->res = cqe->res;
	out->flags = cqe->flags;
	out->res2 = ring->flags & IORING_SETUP_CQE32 ? cqe->big_cqe[0] : 0;
}

/*
 * Takes one CQE if one is there: 0 with @out filled, -EAGAIN if the CQ ring
 * is empty.
 */
static inline int dfg_ring_peek(struct io_uring *ring, struct dfg_cqe *out)
{
	struct io_uring_cqe *cqe;
	int ret = io_uring_peek_cqe(ring, &cqe);

	if (ret)
		return ret;
	dfg_cqe_copy(ring, cqe, out);
	io_uring_cqe_seen(ring, cqe);
	return 0;
}

/*
 * Waits up to @timeout_ms (< 0: forever) for one CQE: 0 with @out filled,
 * -ETIME on timeout, else -errno.
 */
static inline int dfg_ring_wait(struct io_uring *ring, struct dfg_cqe *out,
				int timeout_ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (long long)(timeout_ms % 1000) * 1000000,
	};
	struct io_uring_cqe *cqe;
	int ret;

	do {
		if (timeout_ms < 0)
			ret = io_uring_wait_cqe(ring, &cqe);
		else
			ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
	} while (ret == -EINTR);
	if (ret)
		return ret;
	dfg_cqe_copy(ring, cqe, out);
	io_uring_cqe_seen(ring, cqe);
	return 0;
}

/* Submits what is queued and waits for one CQE (10 s at most). */
static inline int dfg_ring_submit_wait(struct io_uring *ring,
				       struct dfg_cqe *out)
{
	int ret = io_uring_submit(ring);

	if (ret < 0)
		return ret;
	if (ret != 1)
		return -EIO;
	return dfg_ring_wait(ring, out, 10000);
}

/*
 * One command, synchronously, over @path: ioctl, or one uring_cmd submitted
 * and waited for, with IOSQE_* @sqe_flags (IOSQE_ASYNC: issued from an
 * io-wq worker). Returns the command's result (ioctl: the return value or
 * -errno; io_uring: cqe->res); @res2, when not NULL, gets cqe->big_cqe[0]
 * (0 for ioctl). Errors of the submission itself come back as -errno too.
 */
static inline int dfg_cmd_ex(enum dfg_path path, int fd, struct io_uring *ring,
			     __u32 cmd_op, void *args, __u32 len, __u64 *res2,
			     __u8 sqe_flags)
{
	struct dfg_cqe cqe = { 0 };
	struct io_uring_sqe *sqe;
	int ret;

	if (res2)
		*res2 = 0;
	switch (path) {
	case DFG_PATH_IOCTL:
		return sys_dfg_ioctl(fd, cmd_op, args);
	case DFG_PATH_INLINE:
		sqe = dfg_prep_inline(ring, fd, cmd_op, args, len, 0xd0d0);
		break;
	case DFG_PATH_INDIRECT:
		sqe = dfg_prep_indirect(ring, fd, cmd_op, args, len, 0xd0d0);
		break;
	default:
		return -EINVAL;
	}
	if (!sqe)
		return -EBUSY;
	sqe->flags |= sqe_flags;
	ret = dfg_ring_submit_wait(ring, &cqe);
	if (ret)
		return ret;
	if (cqe.user_data != 0xd0d0)
		return -EPROTO;
	if (res2)
		*res2 = cqe.res2;
	return cqe.res;
}

/*
 * A command that may block (CHAN_WAIT, TEAM_WAIT, SCHED_NEXT), started now
 * and collected later: over io_uring its SQE stays in the ring, over ioctl
 * it runs in a thread. @args belongs to the caller and must outlive the
 * command (the kernel writes results into it, except inline).
 */
struct dfg_pending {
	enum dfg_path		path;
	struct io_uring		*ring;
	int			fd;
	__u32			cmd;
	void			*args;
	__u32			len;
	pthread_t		thread;	/* ioctl */
	int			res;	/* ioctl */
	int			done;	/* ioctl, atomic */
	bool			hold;	/* ioctl: thread lives until release */
	int			released; /* ioctl, atomic */
	bool			active;
	struct dfg_cqe		cqe;	/* io_uring, once collected */
};

static inline void *dfg_pending_thread(void *arg)
{
	struct dfg_pending *p = arg;

	p->res = sys_dfg_ioctl(p->fd, p->cmd, p->args);
	__atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
	/* A SCHED_NEXT's set belongs to this thread: it must not exit yet. */
	while (p->hold && !__atomic_load_n(&p->released, __ATOMIC_ACQUIRE))
		usleep(1000);
	return NULL;
}

/* SIGUSR1 ends a pending ioctl with -EINTR: caught, nothing done. */
static inline void dfg_pending_sigusr1(int sig)
{
	(void)sig;
}

/*
 * Starts @cmd on @fd; @user_data tags the uring SQE. 0 or -errno. An ioctl
 * runs in a thread, which SIGUSR1 interrupts (the handler is installed
 * without SA_RESTART).
 */
static inline int __dfg_pending_start(struct dfg_pending *p,
				      enum dfg_path path, struct io_uring *ring,
				      int fd, __u32 cmd, void *args, __u32 len,
				      __u64 user_data, bool hold)
{
	struct io_uring_sqe *sqe;

	memset(p, 0, sizeof(*p));
	p->hold = hold;
	p->path = path;
	p->ring = ring;
	p->fd = fd;
	p->cmd = cmd;
	p->args = args;
	p->len = len;
	p->active = true;
	if (path == DFG_PATH_IOCTL) {
		struct sigaction sa = { .sa_handler = dfg_pending_sigusr1 };

		sigaction(SIGUSR1, &sa, NULL);
		return -pthread_create(&p->thread, NULL, dfg_pending_thread, p);
	}
	if (path == DFG_PATH_INLINE)
		sqe = dfg_prep_inline(ring, fd, cmd, args, len, user_data);
	else
		sqe = dfg_prep_indirect(ring, fd, cmd, args, len, user_data);
	if (!sqe)
		return -EBUSY;
	return io_uring_submit(ring) == 1 ? 0 : -EIO;
}

static inline int dfg_pending_start(struct dfg_pending *p, enum dfg_path path,
				    struct io_uring *ring, int fd, __u32 cmd,
				    void *args, __u32 len, __u64 user_data)
{
	return __dfg_pending_start(p, path, ring, fd, cmd, args, len,
				   user_data, false);
}

/*
 * The same, but an ioctl's thread stays alive after the command until
 * dfg_pending_release(): a set that SCHED_NEXT hands it stays held by a
 * live worker (the module fails the graph when a worker thread exits
 * holding a set) while the test drives the set from its main thread.
 */
static inline int dfg_pending_start_held(struct dfg_pending *p,
					 enum dfg_path path,
					 struct io_uring *ring, int fd,
					 __u32 cmd, void *args, __u32 len,
					 __u64 user_data)
{
	return __dfg_pending_start(p, path, ring, fd, cmd, args, len,
				   user_data, true);
}

/*
 * 0 with the command's result in *@res once it completed within @ms
 * (io_uring: its CQE also in @p->cqe), -ETIME while it still runs.
 */
static inline int dfg_pending_end(struct dfg_pending *p, int ms, int *res)
{
	__u64 start = dfg_now_ns();
	int ret;

	if (p->path != DFG_PATH_IOCTL) {
		ret = dfg_ring_wait(p->ring, &p->cqe, ms);
		if (ret)
			return ret;
		p->active = false;
		*res = p->cqe.res;
		return 0;
	}
	while (!__atomic_load_n(&p->done, __ATOMIC_ACQUIRE)) {
		if (dfg_ms_since(start) >= (__u64)ms)
			return -ETIME;
		usleep(1000);
	}
	if (!p->hold)
		pthread_join(p->thread, NULL);
	p->active = false;
	*res = p->res;
	return 0;
}

/* Ends the thread of a dfg_pending_start_held() ioctl that has completed. */
static inline void dfg_pending_release(struct dfg_pending *p)
{
	if (p->path != DFG_PATH_IOCTL || !p->hold || p->active)
		return;
	__atomic_store_n(&p->released, 1, __ATOMIC_RELEASE);
	pthread_join(p->thread, NULL);
	p->hold = false;
}

/* Teardown of a command still pending over ioctl: SIGUSR1 until it ends. */
static inline void dfg_pending_abort(struct dfg_pending *p)
{
	int res;

	if (!p->active || p->path != DFG_PATH_IOCTL)
		return;
	while (dfg_pending_end(p, 10, &res) == -ETIME)
		pthread_kill(p->thread, SIGUSR1);
}

/* ------------------------------------------------------------------------
 * Argument helpers
 * ------------------------------------------------------------------------
 */

static inline struct dfg_nop dfg_nop_args(__u64 value, __u32 flags,
					  __u32 delay_ms)
{
	struct dfg_nop nop = {
		.value = value,
		.flags = flags,
		.delay_ms = delay_ms,
	};

	return nop;
}

static inline int dfg_get_info(int fd, struct dfg_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return sys_dfg_ioctl(fd, DFG_IOC_GET_INFO, info);
}

/* Opens /dev/dfg and reads GET_INFO over ioctl; 0 or -errno. */
static inline int dfg_read_info(struct dfg_info *info)
{
	int fd = sys_dfg_open();
	int ret;

	if (fd < 0)
		return fd;
	ret = dfg_get_info(fd, info);
	close(fd);
	return ret;
}

/* ------------------------------------------------------------------------
 * sysfs: /sys/kernel/dfg
 * ------------------------------------------------------------------------
 */

/* Reads /sys/kernel/dfg/@name into @buf without the trailing newline. */
static inline int dfg_sysfs_read(const char *name, char *buf, size_t size)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), DFG_SYSFS_DIR "/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* Reads a number (in @base; 16 accepts an optional 0x) from sysfs. */
static inline int dfg_sysfs_read_u64_base(const char *name, __u64 *val,
					  int base)
{
	char buf[64], *end;
	int ret = dfg_sysfs_read(name, buf, sizeof(buf));

	if (ret)
		return ret;
	errno = 0;
	*val = strtoull(buf, &end, base);
	if (errno || end == buf || *end)
		return -EINVAL;
	return 0;
}

static inline int dfg_sysfs_read_u64(const char *name, __u64 *val)
{
	return dfg_sysfs_read_u64_base(name, val, 10);
}

/*
 * Polls sysfs @name until it reads @want, for up to @timeout_ms; returns 0,
 * or -ETIME with the last value read in @last.
 */
static inline int dfg_sysfs_wait_u64(const char *name, __u64 want,
				     unsigned int timeout_ms, __u64 *last)
{
	__u64 start = dfg_now_ns();
	int ret;

	for (;;) {
		ret = dfg_sysfs_read_u64(name, last);
		if (ret)
			return ret;
		if (*last == want)
			return 0;
		if (dfg_ms_since(start) >= timeout_ms)
			return -ETIME;
		usleep(2000);
	}
}

/* The id of graph descriptor @g (its sysfs directory), or -errno. */
static inline int dfg_graph_id(int g)
{
	struct dfg_graph_info info = { .size = sizeof(info) };
	int ret = sys_dfg_ioctl(g, DFG_IOC_GRAPH_INFO, &info);

	return ret < 0 ? ret : (int)info.id;
}

/* sysfs @name as a number, ~0 if it cannot be read (a test then fails). */
static inline __u64 dfg_sysfs_u64(const char *name)
{
	__u64 v = ~0ULL;

	dfg_sysfs_read_u64(name, &v);
	return v;
}

/* Polls sysfs @name for up to 5 s until it reads @want; the last value. */
static inline __u64 dfg_sysfs_wait(const char *name, __u64 want)
{
	__u64 last = ~0ULL;

	dfg_sysfs_wait_u64(name, want, 5000, &last);
	return last;
}

/* ------------------------------------------------------------------------
 * Processes
 * ------------------------------------------------------------------------
 */

/*
 * Waits for @pid for up to @timeout_ms without blocking forever (a child
 * stuck in the kernel must fail a test, not hang the run). Returns 0 with
 * @status filled once reaped, -ETIME if it is still there.
 */
static inline int dfg_wait_pid(pid_t pid, int *status, unsigned int timeout_ms)
{
	__u64 start = dfg_now_ns();
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (dfg_ms_since(start) >= timeout_ms)
			return -ETIME;
		usleep(1000);
	}
}

/* Kills and reaps (briefly) a helper child at teardown; never blocks long. */
static inline void dfg_kill_pid(pid_t pid)
{
	int status;

	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	dfg_wait_pid(pid, &status, 5000);
}

static inline int dfg_cmd(enum dfg_path path, int fd, struct io_uring *ring,
			  __u32 cmd_op, void *args, __u32 len, __u64 *res2)
{
	return dfg_cmd_ex(path, fd, ring, cmd_op, args, len, res2, 0);
}

#endif /* DFG_SYS_H */
