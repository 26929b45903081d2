// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg test of kernel teams (coll/kteam.c) against the loaded dfg module
 * (run it in the test VM: tools/vm/dfg-vm -- build/libdfg/tests/team_module).
 * SKIPs when the device cannot be opened or the module has no teams.
 *
 * Members are forked processes; each reports through its exit status.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dfg/dfg.h>
#include <dfg/graph.h>
#include <dfg/prep.h>

#include "../coll/kteam.h"
#include "kselftest_harness.h"
#include "devgraph.h"

#define CTL	8192

#define SKIP_IF_NO_TEAM() do {						\
	if (self->gfd < 0)						\
		SKIP(return, "%s", "no dfg device with teams");		\
} while (0)

FIXTURE(kteam) {
	struct dfg *d;
	int gfd;
};

FIXTURE_SETUP(kteam)
{
	char name[DFG_NAME_MAX];

	DEVGRAPH_SETUP(DFG_F_TEAM, "kteam", name, sizeof(name));
}

FIXTURE_TEARDOWN(kteam)
{
	if (self->gfd >= 0)
		close(self->gfd);
	dfg_close(self->d);
}

static uint32_t load(const uint32_t *w)
{
	return __atomic_load_n(w, __ATOMIC_ACQUIRE);
}

/*
 * A member: join, wait for all, then @rounds barriers on a counter word
 * in the control area (each round: count in, last one bumps the epoch and
 * wakes), checking a value every rank wrote. Exit status 0 on success.
 */
static int member(int gfd, const char *name, unsigned int n, unsigned int r,
		  int rounds)
{
	struct dfg_kteam *kt;
	uint32_t *count, *epoch, *slots, e;
	int i, ret;

	ret = dfg_kteam_join(gfd, name, n, r, CTL, &kt);
	if (ret)
		return 10;
	if (dfg_kteam_wait_all(kt, 10000))
		return 11;
	count = dfg_kteam_ctl(kt);
	epoch = count + 16;
	slots = count + 32;
	for (i = 0; i < rounds; i++) {
		__atomic_store_n(&slots[r], (uint32_t)(i * 100 + r),
				 __ATOMIC_RELEASE);
		e = load(epoch);
		if (__atomic_add_fetch(count, 1, __ATOMIC_ACQ_REL) == n) {
			__atomic_store_n(count, 0, __ATOMIC_RELAXED);
			__atomic_store_n(epoch, e + 1, __ATOMIC_RELEASE);
			if (dfg_kteam_wake(kt, epoch) < 0)
				return 12;
		} else {
			while (load(epoch) == e) {
				ret = dfg_kteam_wait(kt, epoch, e, -1);
				if (ret < 0)
					return 13;
			}
		}
		for (unsigned int k = 0; k < n; k++)
			if (load(&slots[k]) != (uint32_t)(i * 100 + k))
				return 14;
		/* Nobody writes round i + 1 before all have checked i. */
		e = load(epoch);
		if (__atomic_add_fetch(count, 1, __ATOMIC_ACQ_REL) == n) {
			__atomic_store_n(count, 0, __ATOMIC_RELAXED);
			__atomic_store_n(epoch, e + 1, __ATOMIC_RELEASE);
			dfg_kteam_wake(kt, epoch);
		} else {
			while (load(epoch) == e)
				if (dfg_kteam_wait(kt, epoch, e, -1) < 0)
					return 15;
		}
	}
	if (dfg_kteam_broken(kt) || dfg_kteam_dead_rank(kt) != -1)
		return 16;
	if (dfg_kteam_leave(kt) || dfg_kteam_leave(kt) != -ENOTCONN)
		return 17;
	dfg_kteam_close(kt);
	return 0;
}

TEST_F(kteam, barrier_rounds)
{
	pid_t pids[8];
	unsigned int n, r;
	int status;

	SKIP_IF_NO_TEAM();

	for (n = 1; n <= 8; n += 3) {
		char name[16];

		snprintf(name, sizeof(name), "b%u", n);
		for (r = 0; r < n; r++) {
			pids[r] = fork();
			ASSERT_LE(0, pids[r]);
			if (!pids[r])
				_exit(member(self->gfd, name, n, r, 50));
		}
		for (r = 0; r < n; r++) {
			ASSERT_EQ(pids[r], waitpid(pids[r], &status, 0));
			EXPECT_TRUE(WIFEXITED(status));
			EXPECT_EQ(0, WEXITSTATUS(status)) {
				TH_LOG("n=%u rank %u", n, r);
			}
		}
	}
}

TEST_F(kteam, errors)
{
	char longname[DFG_NAME_MAX + 1];
	struct dfg_kteam *kt, *kt2;
	uint32_t outside = 0;

	SKIP_IF_NO_TEAM();

	memset(longname, 'a', DFG_NAME_MAX);
	longname[DFG_NAME_MAX] = 0;
	errno = 1234;
	EXPECT_EQ(-ENAMETOOLONG, dfg_kteam_join(self->gfd, longname, 1, 0, 0,
						&kt));
	EXPECT_EQ(-EINVAL, dfg_kteam_join(self->gfd, "e", 2, 2, 0, &kt));
	EXPECT_EQ(-EINVAL, dfg_kteam_join(self->gfd, "e/", 1, 0, 0, &kt));
	EXPECT_EQ(-EFBIG, dfg_kteam_join(self->gfd, "e", 1, 0,
					 DFG_TEAM_CTL_MAX + 1UL, &kt));
	EXPECT_EQ(-EBADFD, dfg_kteam_join(dfg_fd(self->d), "e", 1, 0, 0, &kt));
	EXPECT_EQ(1234, errno);

	ASSERT_EQ(0, dfg_kteam_join(self->gfd, "e", 2, 0, CTL, &kt));
	EXPECT_EQ(-EADDRINUSE, dfg_kteam_join(self->gfd, "e", 2, 0, CTL,
					      &kt2));
	EXPECT_EQ(-EINVAL, dfg_kteam_join(self->gfd, "e", 2, 1, 0, &kt2));
	EXPECT_EQ(-ETIMEDOUT, dfg_kteam_wait_all(kt, 50));
	EXPECT_EQ(-EINVAL, dfg_kteam_wait(kt, &outside, 0, 0));
	EXPECT_EQ(-EINVAL, dfg_kteam_wake(kt, &outside));
	EXPECT_EQ(-EINVAL, dfg_kteam_wait(kt, (uint32_t *)((char *)
					  dfg_kteam_ctl(kt) + 2), 0, 0));
	EXPECT_EQ(1, dfg_kteam_wait(kt, dfg_kteam_ctl(kt), 5, -1));
	EXPECT_EQ(-ETIMEDOUT, dfg_kteam_wait(kt, dfg_kteam_ctl(kt), 0,
					     1000000));
	EXPECT_EQ(0, dfg_kteam_wake(kt, dfg_kteam_ctl(kt)));
	EXPECT_EQ(1234, errno);
	EXPECT_EQ(0, dfg_kteam_leave(kt));
	dfg_kteam_close(kt);
	dfg_kteam_close(NULL);
}

/* A member that dies: waits over ioctl and io_uring end with -EOWNERDEAD. */
TEST_F(kteam, death)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct dfg_kteam *kt;
	struct timespec t0, t1;
	uint32_t *word;
	int p[2], status;
	pid_t victim;
	char c;

	SKIP_IF_NO_TEAM();

	ASSERT_EQ(0, dfg_queue_init(4, &ring, 0));
	ASSERT_EQ(0, pipe(p));
	victim = fork();
	ASSERT_LE(0, victim);
	if (!victim) {
		if (dfg_kteam_join(self->gfd, "d", 2, 1, CTL, &kt) ||
		    write(p[1], "j", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(p[0], &c, 1));
	ASSERT_EQ(0, dfg_kteam_join(self->gfd, "d", 2, 0, CTL, &kt));
	ASSERT_EQ(0, dfg_kteam_wait_all(kt, 5000));
	word = dfg_kteam_ctl(kt);
	dfg_kteam_prep_wait(io_uring_get_sqe(&ring), kt, word, 0, -1);
	ASSERT_EQ(1, io_uring_submit(&ring));
	EXPECT_EQ(-EAGAIN, io_uring_peek_cqe(&ring, &cqe));
	EXPECT_FALSE(dfg_kteam_broken(kt));

	clock_gettime(CLOCK_MONOTONIC, &t0);
	kill(victim, SIGKILL);
	EXPECT_EQ(-EOWNERDEAD, dfg_kteam_wait(kt, word, 0, -1));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(-EOWNERDEAD, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_GT(2.0, (t1.tv_sec - t0.tv_sec) +
		  (t1.tv_nsec - t0.tv_nsec) / 1e9);
	EXPECT_TRUE(dfg_kteam_broken(kt));
	EXPECT_EQ(1, dfg_kteam_dead_rank(kt));
	ASSERT_EQ(victim, waitpid(victim, &status, 0));
	dfg_kteam_close(kt);
	io_uring_queue_exit(&ring);
	close(p[0]);
	close(p[1]);
}

static void on_signal(int sig)
{
}

/*
 * A signal ends a team wait with -EINTR, on the thread's ring (which wakes
 * the word so that the parked command completes) as over ioctl; nothing
 * of it is left behind for the next wait.
 */
static void run_wait_signal(struct __test_metadata *_metadata, int gfd)
{
	struct sigaction sa = { .sa_handler = on_signal };
	pid_t pid, parent = getpid();
	struct dfg_kteam *kt;
	uint32_t *word;
	int p[2];
	char c;

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, pipe2(p, O_NONBLOCK));
	ASSERT_EQ(0, dfg_kteam_join(gfd, "i", 1, 0, CTL, &kt));
	word = dfg_kteam_ctl(kt);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Until the parent says the wait ended. */
		while (read(p[0], &c, 1) != 1) {
			kill(parent, SIGUSR1);
			usleep(50000);
		}
		_exit(0);
	}
	EXPECT_EQ(-EINTR, dfg_kteam_wait(kt, word, 0, -1));
	ASSERT_EQ(1, write(p[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	EXPECT_EQ(-ETIMEDOUT, dfg_kteam_wait(kt, word, 0, 1000000));
	EXPECT_EQ(1, dfg_kteam_wait(kt, word, 1, -1));
	EXPECT_EQ(0, dfg_kteam_leave(kt));
	dfg_kteam_close(kt);
	close(p[0]);
	close(p[1]);
}

TEST_F(kteam, wait_signal_uring)
{
	struct io_uring *ring;

	SKIP_IF_NO_TEAM();
	ASSERT_EQ(0, dfg_wait_ring(&ring));
	run_wait_signal(_metadata, self->gfd);
}

TEST_F(kteam, wait_signal_no_uring)
{
	struct io_uring *ring;

	SKIP_IF_NO_TEAM();
	ASSERT_EQ(0, setenv("DFG_NO_URING", "1", 1));
	EXPECT_EQ(-EOPNOTSUPP, dfg_wait_ring(&ring));
	run_wait_signal(_metadata, self->gfd);
}

TEST_HARNESS_MAIN
