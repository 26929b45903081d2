// SPDX-License-Identifier: GPL-2.0
/*
 * Parked commands: DFG_NOP_F_PARK and in-flight DFG_NOP_F_ASYNC.
 *
 * A parked uring_cmd completes with -ECANCELED when its submitting task
 * exits (killed or not): the task must die and be reaped promptly, sysfs
 * "parked" must come back down, stats/canceled must count it and the
 * DFG_EV_CMD_CANCELED netlink event must name the task. More than
 * max_parked parked commands on one file is -EBUSY. A parked or sleeping
 * ioctl ends with -EINTR on a signal and dies with SIGKILL.
 *
 * The ring is set up by the test and shared with a child through fork: the
 * child submits (so the commands are the child's), the test reads the CQEs
 * after the child is gone. Children are waited for with deadlines so that a
 * child stuck in the kernel fails the test instead of hanging the run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "dfg_sys.h"
#include "dfg_evmon.h"
#include "kselftest_harness.h"

#define REAP_MS		1000	/* a killed or exiting child is reaped by then */
#define BUSY_USER_DATA	0xB0000000ULL
#define OTHER_USER_DATA	0xC0000000ULL

/* Reads the child's report (0 or -errno) within 10 s; -ETIME otherwise. */
static int read_report(int rfd)
{
	struct pollfd pfd = { .fd = rfd, .events = POLLIN };
	int report;

	if (poll(&pfd, 1, 10000) != 1)
		return -ETIME;
	if (read(rfd, &report, sizeof(report)) != sizeof(report))
		return -EPIPE;
	return report;
}

static void write_report(int wfd, int report)
{
	if (write(wfd, &report, sizeof(report)) != sizeof(report))
		_exit(3);
}

/*
 * In the child: parks @n NOPs on @fd (user_data @base + i) through the
 * shared @ring with IOSQE_* @sqe_flags, @args holding the indirect structs
 * (which must outlive the call); then, unless @want_parked is 0, waits for
 * sysfs parked to read @want_parked. Returns 0 or -errno.
 * No ASSERTs here: this is not the test process.
 */
static int park_nops(struct io_uring *ring, int fd, enum dfg_path path,
		     __u8 sqe_flags, unsigned int n, __u64 base,
		     struct dfg_nop *args, __u64 want_parked)
{
	__u64 parked;
	struct io_uring_sqe *sqe;
	unsigned int i, queued = 0;
	int ret;

	for (i = 0; i < n; i++) {
		args[i] = dfg_nop_args(base + i, DFG_NOP_F_PARK, 0);
		for (;;) {
			if (path == DFG_PATH_INLINE)
				sqe = dfg_prep_inline(ring, fd, DFG_IOC_NOP,
						      &args[i], sizeof(args[i]),
						      base + i);
			else
				sqe = dfg_prep_indirect(ring, fd, DFG_IOC_NOP,
							&args[i],
							sizeof(args[i]),
							base + i);
			if (sqe) {
				sqe->flags |= sqe_flags;
				break;
			}
			ret = io_uring_submit(ring);
			if (ret != (int)queued)
				return ret < 0 ? ret : -EIO;
			queued = 0;
		}
		queued++;
	}
	ret = io_uring_submit(ring);
	if (ret != (int)queued)
		return ret < 0 ? ret : -EIO;
	/*
	 * io-wq issues after io_uring_submit() returns: wait until the
	 * module holds them, so that exiting cannot beat the issue.
	 */
	if (want_parked)
		return dfg_sysfs_wait_u64("parked", want_parked, 10000,
					  &parked);
	return 0;
}

static unsigned int roundup_pow2(unsigned int v)
{
	unsigned int r = 1;

	while (r < v)
		r <<= 1;
	return r;
}

FIXTURE(park) {
	int fd;			/* /dev/dfg, shared with the child */
	int fd2;		/* a second open file, also shared */
	struct io_uring ring;	/* shared with the child through fork */
	struct dfg_info info;
	struct dfg_evmon mon;	/* subscribed before the child starts */
	int mon_err;		/* 0, or why subscribing failed */
	pid_t child;		/* killed at teardown if still there */
	int pipe[2];		/* child -> test: its report */
	__u64 parked0;		/* sysfs parked before the test */
	__u64 canceled0;	/* sysfs stats/canceled before the test */
	unsigned int cancel_ms;	/* how long a cancellation may take */
};

FIXTURE_VARIANT(park) {
	enum dfg_path path;
	__u8 sqe_flags;		/* IOSQE_ASYNC: issued from an io-wq worker */
};

FIXTURE_VARIANT_ADD(park, uring_inline) {
	.path = DFG_PATH_INLINE,
};

FIXTURE_VARIANT_ADD(park, uring_indirect) {
	.path = DFG_PATH_INDIRECT,
};

FIXTURE_VARIANT_ADD(park, uring_inline_iowq) {
	.path = DFG_PATH_INLINE,
	.sqe_flags = IOSQE_ASYNC,
};

FIXTURE_VARIANT_ADD(park, uring_indirect_iowq) {
	.path = DFG_PATH_INDIRECT,
	.sqe_flags = IOSQE_ASYNC,
};

FIXTURE_SETUP(park)
{
	unsigned int cq;
	int ret;

	self->child = -1;
	self->fd = sys_dfg_open();
	ASSERT_LE(0, self->fd) {
		TH_LOG("open %s: %s (is dfg.ko loaded?)", DFG_DEV_PATH,
		       strerror(-self->fd));
	}
	self->fd2 = sys_dfg_open();
	ASSERT_LE(0, self->fd2);
	ASSERT_EQ(0, dfg_get_info(self->fd, &self->info));
	/* Room for every parked command's CQE, and then some. */
	cq = roundup_pow2(self->info.max_parked + 64);
	if (cq < 256)
		cq = 256;
	if (cq > 65536)
		cq = 65536;
	ret = dfg_ring_init_flags(&self->ring, 256,
				  IORING_SETUP_SQE128 | IORING_SETUP_CQE32, cq);
	ASSERT_EQ(0, ret) {
		TH_LOG("io_uring (cq %u): %s", cq, strerror(-ret));
	}
	ASSERT_EQ(0, pipe(self->pipe));
	ASSERT_EQ(0, dfg_sysfs_read_u64("parked", &self->parked0));
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/canceled", &self->canceled0));
	self->mon_err = dfg_evmon_open(&self->mon);
	self->cancel_ms = 3 * self->info.monitor_ms + 1000;
}

FIXTURE_TEARDOWN(park)
{
	dfg_kill_pid(self->child);
	if (!self->mon_err)
		dfg_evmon_close(&self->mon);
	close(self->pipe[0]);
	close(self->pipe[1]);
	io_uring_queue_exit(&self->ring);
	close(self->fd2);
	close(self->fd);
}

/*
 * Forks the child, which runs the statements given and reports through
 * self->pipe; never returns in the child.
 */
#define RUN_CHILD(...) do {						\
	self->child = fork();						\
	ASSERT_LE(0, self->child);					\
	if (self->child == 0) {						\
		close(self->pipe[0]);					\
		__VA_ARGS__						\
		_exit(0);						\
	}								\
} while (0)

/*
 * After the child is gone: one CQE per parked command, each -ECANCELED,
 * parked back to where it was, stats/canceled up by @n.
 */
static void check_canceled(struct __test_metadata *_metadata,
			   FIXTURE_DATA(park) *self, unsigned int n,
			   __u64 first, __u64 other)
{
	unsigned char *seen = calloc(n, 1);
	__u64 parked, canceled, idx;
	struct dfg_cqe cqe;
	unsigned int i;

	ASSERT_NE(NULL, seen);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, dfg_ring_wait(&self->ring, &cqe, self->cancel_ms)) {
			TH_LOG("%u of %u CQEs %u ms after the task died", i, n,
			       self->cancel_ms);
		}
		ASSERT_EQ(-ECANCELED, cqe.res) {
			TH_LOG("user_data 0x%llx",
			       (unsigned long long)cqe.user_data);
		}
		idx = cqe.user_data == other && other ? n - 1 :
			cqe.user_data - first;
		ASSERT_GT((__u64)n, idx) {
			TH_LOG("unexpected user_data 0x%llx",
			       (unsigned long long)cqe.user_data);
		}
		ASSERT_EQ(0, seen[idx]) {
			TH_LOG("user_data 0x%llx completed twice",
			       (unsigned long long)cqe.user_data);
		}
		seen[idx] = 1;
	}
	free(seen);
	/* Completed exactly once: nothing more comes. */
	usleep(100000);
	ASSERT_EQ(-EAGAIN, dfg_ring_peek(&self->ring, &cqe)) {
		TH_LOG("extra CQE user_data 0x%llx res %d",
		       (unsigned long long)cqe.user_data, cqe.res);
	}
	ASSERT_EQ(0, dfg_sysfs_wait_u64("parked", self->parked0,
					self->cancel_ms, &parked)) {
		TH_LOG("parked %llu, expected %llu", (unsigned long long)parked,
		       (unsigned long long)self->parked0);
	}
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/canceled", &canceled));
	ASSERT_EQ(self->canceled0 + n, canceled);
}

/*
 * A parked uring_cmd of a child killed with SIGKILL: the child is reaped
 * within REAP_MS, the command completes with -ECANCELED, parked comes back,
 * stats/canceled and the DFG_EV_CMD_CANCELED event count it.
 */
TEST_F(park, kill9_parked)
{
	struct dfg_nop args[1];
	struct dfg_event_msg ev;
	struct dfg_cqe cqe;
	__u64 start, took, parked;
	pid_t pid;
	int status;

	ASSERT_EQ(0, self->mon_err) {
		TH_LOG("netlink events group: %s", strerror(-self->mon_err));
	}
	RUN_CHILD({
		write_report(self->pipe[1],
			     park_nops(&self->ring, self->fd, variant->path,
				       variant->sqe_flags, 1, 0x1000, args,
				       self->parked0 + 1));
		for (;;)
			pause();
	});
	pid = self->child;
	ASSERT_EQ(0, read_report(self->pipe[0]));

	/* Parked: counted, no CQE, and not canceled while the task lives. */
	ASSERT_EQ(0, dfg_sysfs_wait_u64("parked", self->parked0 + 1, 1000,
					&parked)) {
		TH_LOG("parked %llu, expected %llu", (unsigned long long)parked,
		       (unsigned long long)self->parked0 + 1);
	}
	usleep((self->info.monitor_ms < 1000 ? 2 * self->info.monitor_ms :
		2000) * 1000 + 50000);
	ASSERT_EQ(-EAGAIN, dfg_ring_peek(&self->ring, &cqe)) {
		TH_LOG("CQE res %d for a parked command of a live task",
		       cqe.res);
	}
	ASSERT_EQ(0, dfg_sysfs_read_u64("parked", &parked));
	ASSERT_EQ(self->parked0 + 1, parked);
	ASSERT_EQ(0, dfg_evmon_count(&self->mon, DFG_EV_CMD_CANCELED, pid));

	start = dfg_now_ns();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, REAP_MS)) {
		TH_LOG("child not reaped %d ms after SIGKILL", REAP_MS);
	}
	took = dfg_ms_since(start);
	self->child = -1;
	TH_LOG("child reaped %llu ms after SIGKILL", (unsigned long long)took);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGKILL, WTERMSIG(status));

	check_canceled(_metadata, self, 1, 0x1000, 0);

	ASSERT_TRUE(dfg_evmon_find(&self->mon, DFG_EV_CMD_CANCELED, pid,
				    2000, &ev)) {
		TH_LOG("no DFG_EV_CMD_CANCELED for pid %d", pid);
	}
	ASSERT_TRUE(ev.attrs & (1U << DFG_NL_A_CMD));
	ASSERT_EQ((__u32)DFG_IOC_NOP, ev.cmd);
	/* One command, one event. */
	dfg_evmon_poll(&self->mon, 100);
	ASSERT_EQ(0, dfg_evmon_count(&self->mon, DFG_EV_CMD_CANCELED, pid));
}

/* A child that exits on its own with a parked command: same outcome. */
TEST_F(park, exit_parked)
{
	struct dfg_nop args[2];
	__u64 start, took;
	int status;

	RUN_CHILD({
		write_report(self->pipe[1],
			     park_nops(&self->ring, self->fd, variant->path,
				       variant->sqe_flags, 2, 0x2000, args,
				       self->parked0 + 2));
		_exit(0);
	});
	start = dfg_now_ns();
	ASSERT_EQ(0, read_report(self->pipe[0]));
	ASSERT_EQ(0, dfg_wait_pid(self->child, &status, REAP_MS + 1000)) {
		TH_LOG("child with parked commands did not finish exiting");
	}
	took = dfg_ms_since(start);
	self->child = -1;
	TH_LOG("child reaped %llu ms after its report",
	       (unsigned long long)took);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	check_canceled(_metadata, self, 2, 0x2000, 0);
}

/*
 * A child that execs with a parked command: exec must not hang on it (6.1
 * waits for all of a task's requests at exec); the command is canceled.
 */
TEST_F(park, exec_parked)
{
	struct dfg_nop args[1];
	int status;

	RUN_CHILD({
		int ret = park_nops(&self->ring, self->fd, variant->path,
				    variant->sqe_flags, 1, 0x4000, args,
				    self->parked0 + 1);

		write_report(self->pipe[1], ret);
		if (!ret)
			execl("/bin/true", "true", (char *)NULL);
		_exit(4);
	});
	ASSERT_EQ(0, read_report(self->pipe[0]));
	ASSERT_EQ(0, dfg_wait_pid(self->child, &status,
				  self->cancel_ms + REAP_MS)) {
		TH_LOG("exec with a parked command did not finish");
	}
	self->child = -1;
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	check_canceled(_metadata, self, 1, 0x4000, 0);
}

struct thread_park {
	FIXTURE_DATA(park) *self;
	enum dfg_path path;
	__u8 sqe_flags;
	struct dfg_nop args[1];
	int ret;
};

static void *park_thread(void *arg)
{
	struct thread_park *t = arg;

	t->ret = park_nops(&t->self->ring, t->self->fd, t->path, t->sqe_flags,
			   1, 0x5000, t->args, t->self->parked0 + 1);
	return NULL;
}

/*
 * A thread that parks a command and exits, in a process that lives on:
 * the submitting task is gone, so the command is canceled.
 */
TEST_F(park, thread_exit_parked)
{
	struct thread_park t = {
		.self = self,
		.path = variant->path,
		.sqe_flags = variant->sqe_flags,
	};
	pthread_t th;

	ASSERT_EQ(0, pthread_create(&th, NULL, park_thread, &t));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, t.ret);
	check_canceled(_metadata, self, 1, 0x5000, 0);
	/* Nothing was copied back to a canceled indirect command. */
	ASSERT_EQ(0ULL, t.args[0].echo);
}

/*
 * An ASYNC NOP still in flight when its task exits is canceled too
 * (-ECANCELED well before its delay), not left to complete later.
 */
TEST_F(park, exit_async_in_flight)
{
	struct dfg_nop nop;
	struct dfg_cqe cqe;
	__u64 start, took, canceled;
	int status;

	RUN_CHILD({
		struct io_uring_sqe *sqe;
		int ret = -EIO;
		__u64 parked;

		nop = dfg_nop_args(0x3000, DFG_NOP_F_ASYNC, 20000);
		if (variant->path == DFG_PATH_INLINE)
			sqe = dfg_prep_inline(&self->ring, self->fd,
					      DFG_IOC_NOP, &nop, sizeof(nop),
					      0x3000);
		else
			sqe = dfg_prep_indirect(&self->ring, self->fd,
						DFG_IOC_NOP, &nop, sizeof(nop),
						0x3000);
		if (sqe) {
			sqe->flags |= variant->sqe_flags;
			if (io_uring_submit(&self->ring) == 1)
				/* An ASYNC command in flight is parked. */
				ret = dfg_sysfs_wait_u64("parked",
							 self->parked0 + 1,
							 10000, &parked);
		}
		write_report(self->pipe[1], ret);
		_exit(0);
	});
	start = dfg_now_ns();
	ASSERT_EQ(0, read_report(self->pipe[0]));
	ASSERT_EQ(0, dfg_wait_pid(self->child, &status, REAP_MS + 1000));
	self->child = -1;
	ASSERT_EQ(0, dfg_ring_wait(&self->ring, &cqe, self->cancel_ms));
	took = dfg_ms_since(start);
	TH_LOG("CQE %llu ms after submission", (unsigned long long)took);
	ASSERT_EQ(0x3000ULL, cqe.user_data);
	ASSERT_EQ(-ECANCELED, cqe.res);
	ASSERT_GT(20000ULL, took);
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/canceled", &canceled));
	ASSERT_EQ(self->canceled0 + 1, canceled);
}

/*
 * max_parked parked commands fill one file: the next PARK is -EBUSY at
 * once. Plain NOPs still run, and another open file can still park. The
 * child's exit cancels them all, each once.
 */
TEST_F_TIMEOUT(park, max_parked_ebusy, 120)
{
	unsigned int n = self->info.max_parked;
	struct dfg_nop *args;
	struct dfg_nop nop;
	struct dfg_cqe cqe;
	__u64 parked;
	int status;

	if (n > 32768)
		SKIP(return, "max_parked %u is too many to park here", n);
	args = calloc(n + 2, sizeof(*args));
	ASSERT_NE(NULL, args);

	RUN_CHILD({
		int ret = park_nops(&self->ring, self->fd, variant->path,
				    variant->sqe_flags, n, 0, args,
				    self->parked0 + n);

		if (!ret)	/* one too many on fd: -EBUSY CQE */
			ret = park_nops(&self->ring, self->fd, variant->path,
					variant->sqe_flags, 1, BUSY_USER_DATA,
					&args[n], 0);
		if (!ret)	/* another file has its own limit */
			ret = park_nops(&self->ring, self->fd2, variant->path,
					variant->sqe_flags, 1, OTHER_USER_DATA,
					&args[n + 1], self->parked0 + n + 1);
		write_report(self->pipe[1], ret);
		for (;;)
			pause();
	});
	ASSERT_EQ(0, read_report(self->pipe[0]));

	ASSERT_EQ(0, dfg_ring_wait(&self->ring, &cqe, 2000)) {
		TH_LOG("no CQE for the PARK past max_parked (%u)", n);
	}
	ASSERT_EQ(BUSY_USER_DATA, cqe.user_data) {
		TH_LOG("res %d", cqe.res);
	}
	ASSERT_EQ(-EBUSY, cqe.res);
	ASSERT_EQ(-EAGAIN, dfg_ring_peek(&self->ring, &cqe)) {
		TH_LOG("unexpected CQE user_data 0x%llx res %d",
		       (unsigned long long)cqe.user_data, cqe.res);
	}
	ASSERT_EQ(0, dfg_sysfs_wait_u64("parked", self->parked0 + n + 1,
					1000, &parked)) {
		TH_LOG("parked %llu, expected %llu", (unsigned long long)parked,
		       (unsigned long long)self->parked0 + n + 1);
	}
	/* The limit is on parking, not on commands. */
	nop = dfg_nop_args(77, 0, 0);
	ASSERT_EQ(0, sys_dfg_ioctl(self->fd, DFG_IOC_NOP, &nop));
	ASSERT_EQ(77ULL, nop.echo);

	ASSERT_EQ(0, kill(self->child, SIGKILL));
	ASSERT_EQ(0, dfg_wait_pid(self->child, &status, 5000));
	self->child = -1;
	check_canceled(_metadata, self, n + 1, 0, OTHER_USER_DATA);
	free(args);
}

/* ------------------------------------------------------------------------
 * ioctl: a parked or sleeping NOP and signals
 * ------------------------------------------------------------------------
 */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	(void)sig;
	got_signal = 1;
}

/* SIGUSR1, without SA_RESTART, @ms from now. */
static int arm_signal(timer_t *timer, unsigned int ms)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigevent sev = {
		.sigev_notify = SIGEV_SIGNAL,
		.sigev_signo = SIGUSR1,
	};
	struct itimerspec its = {
		.it_value.tv_sec = ms / 1000,
		.it_value.tv_nsec = (ms % 1000) * 1000000L,
	};

	got_signal = 0;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return -errno;
	if (timer_create(CLOCK_MONOTONIC, &sev, timer))
		return -errno;
	if (timer_settime(*timer, 0, &its, NULL))
		return -errno;
	return 0;
}

/* A parked ioctl NOP returns -EINTR when a signal arrives. */
TEST(ioctl_park_eintr)
{
	struct dfg_nop nop = dfg_nop_args(1, DFG_NOP_F_PARK, 0);
	__u64 start, took, parked0, parked;
	timer_t timer;
	int fd = sys_dfg_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dfg_sysfs_read_u64("parked", &parked0));
	/* The clock starts before the timer, which fires 100 ms after. */
	start = dfg_now_ns();
	ASSERT_EQ(0, arm_signal(&timer, 100));
	ASSERT_EQ(-EINTR, sys_dfg_ioctl(fd, DFG_IOC_NOP, &nop));
	took = dfg_ms_since(start);
	ASSERT_EQ(1, got_signal);
	ASSERT_LE(100ULL, took);
	timer_delete(timer);
	/* Nothing stays parked; the file still works. */
	ASSERT_EQ(0, dfg_sysfs_read_u64("parked", &parked));
	ASSERT_EQ(parked0, parked);
	nop = dfg_nop_args(2, 0, 0);
	ASSERT_EQ(0, sys_dfg_ioctl(fd, DFG_IOC_NOP, &nop));
	ASSERT_EQ(2ULL, nop.echo);
	close(fd);
}

/* A sleeping ASYNC ioctl NOP returns -EINTR on a signal, not after it. */
TEST(ioctl_async_eintr)
{
	struct dfg_nop nop = dfg_nop_args(1, DFG_NOP_F_ASYNC, 20000);
	__u64 start, took;
	timer_t timer;
	int fd = sys_dfg_open();

	ASSERT_LE(0, fd);
	/* Start first: the timer may fire less than 100 ms after "start". */
	start = dfg_now_ns();
	ASSERT_EQ(0, arm_signal(&timer, 100));
	ASSERT_EQ(-EINTR, sys_dfg_ioctl(fd, DFG_IOC_NOP, &nop));
	took = dfg_ms_since(start);
	ASSERT_EQ(1, got_signal);
	ASSERT_LE(100ULL, took);
	ASSERT_GT(10000ULL, took);
	timer_delete(timer);
	close(fd);
}

/* Whether @pid is inside syscall @nr (from /proc/<pid>/syscall). */
static bool in_syscall(pid_t pid, long nr)
{
	char path[64], buf[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strtol(buf, NULL, 10) == nr;
}

/* A process parked in the ioctl dies at once with SIGKILL. */
TEST(ioctl_park_kill9)
{
	__u64 start, took;
	int fd = sys_dfg_open();
	int status, i;
	pid_t pid;

	ASSERT_LE(0, fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct dfg_nop nop = dfg_nop_args(1, DFG_NOP_F_PARK, 0);

		_exit(sys_dfg_ioctl(fd, DFG_IOC_NOP, &nop) == -EINTR ? 2 : 1);
	}
	/* Wait until it sleeps in ioctl(2), then a bit more. */
	for (i = 0; i < 2000 && !in_syscall(pid, SYS_ioctl); i++)
		usleep(1000);
	usleep(100000);
	if (waitpid(pid, &status, WNOHANG) == pid) {
		TH_LOG("the parked ioctl returned: exit %d",
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		ASSERT_TRUE(false);
	}
	ASSERT_TRUE(in_syscall(pid, SYS_ioctl));
	start = dfg_now_ns();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, REAP_MS)) {
		dfg_kill_pid(pid);
		TH_LOG("not reaped %d ms after SIGKILL", REAP_MS);
	}
	took = dfg_ms_since(start);
	TH_LOG("reaped %llu ms after SIGKILL", (unsigned long long)took);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGKILL, WTERMSIG(status));
	close(fd);
}

TEST_HARNESS_MAIN
