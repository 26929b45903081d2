// SPDX-License-Identifier: GPL-2.0
/*
 * Arena pages allocated at first touch (kmod/arena.c, dfg_mem_page()).
 *
 * ARENA_CREATE charges the whole size to RLIMIT_MEMLOCK and
 * dfg.max_total_mb (sysfs "pages") but allocates nothing: a page comes at
 * the first fault on it, from whichever process touches it, charged to the
 * creator's memory cgroup, and counts in graphs/<id>/arena<aid>/resident
 * and the module's "resident". Here: the first touch (read and write,
 * from two processes, after MADV_DONTNEED), first touches racing on the
 * same pages, processes killed while they fault, the creator's memory
 * cgroup at its limit (SIGBUS, no OOM kill, no oops), and every count and
 * charge back where it started once the graph is gone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "dfg_sys.h"
#include "kselftest_harness.h"

#define PAGE		4096UL
#define MiB		(1UL << 20)
#define CGROOT		"/sys/fs/cgroup"

static int name_seq;

static int graph_create(int dev)
{
	struct dfg_graph_open o = {
		.size = sizeof(o),
		.flags = DFG_GRAPH_O_CLOEXEC,
		.mode = 0600,
	};

	snprintf(o.name, sizeof(o.name), "arena-%d-%d", getpid(), name_seq++);
	return sys_dfg_ioctl(dev, DFG_IOC_GRAPH_CREATE, &o);
}

static int graph_attach(int dev, const char *name)
{
	struct dfg_graph_open o = { .size = sizeof(o) };

	snprintf(o.name, sizeof(o.name), "%s", name);
	return sys_dfg_ioctl(dev, DFG_IOC_GRAPH_ATTACH, &o);
}

/* ARENA_CREATE of @size bytes; the arena's id, or -errno. */
static int arena_create(int g, __u64 size)
{
	struct dfg_arena_create a = { .size = size };

	return sys_dfg_ioctl(g, DFG_IOC_ARENA_CREATE, &a);
}

static char *map_arena(int g, int id, size_t len, int prot)
{
	char *p = mmap(NULL, len, prot, MAP_SHARED, g, DFG_MMAP_OFFSET(id));

	return p == MAP_FAILED ? NULL : p;
}

/* graphs/<gid>/arena<id>/resident, or -1. */
static long long resident(int g, int id)
{
	char name[96];
	__u64 v;

	snprintf(name, sizeof(name), "graphs/%d/arena%d/resident",
		 dfg_graph_id(g), id);
	return dfg_sysfs_read_u64(name, &v) ? -1 : (long long)v;
}

/* Touches one byte of every page of @p (@len), writing @v if @write. */
static void touch_all(volatile char *p, size_t len, bool write, char v)
{
	size_t off;

	for (off = 0; off < len; off += PAGE) {
		if (write)
			p[off] = v;
		else
			(void)p[off];
	}
}

FIXTURE(arena) {
	int dev;		/* /dev/dfg */
	__u64 pages0;		/* sysfs "pages" at setup */
	__u64 resident0;	/* sysfs "resident" at setup */
	pid_t kids[8];		/* killed at teardown if still there */
};

FIXTURE_SETUP(arena)
{
	self->dev = sys_dfg_open();
	ASSERT_LE(0, self->dev);
	self->pages0 = dfg_sysfs_u64("pages");
	self->resident0 = dfg_sysfs_u64("resident");
	ASSERT_NE(~0ULL, self->resident0);
}

/* Everything the test made is gone: the module's counts are back. */
FIXTURE_TEARDOWN(arena)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(self->kids); i++)
		dfg_kill_pid(self->kids[i]);
	close(self->dev);
	EXPECT_EQ(self->resident0, dfg_sysfs_wait("resident", self->resident0));
	EXPECT_EQ(self->pages0, dfg_sysfs_wait("pages", self->pages0));
}

/*
 * Creation charges the size and allocates nothing; a read or a write
 * fault allocates one page, zeroed; a second process's fault on the same
 * page finds it; MADV_DONTNEED keeps it.
 */
TEST_F(arena, first_touch)
{
	const size_t len = 64 * PAGE;
	char *p, *r;
	int g, id, status;
	pid_t pid;

	g = graph_create(self->dev);
	ASSERT_LE(0, g);
	id = arena_create(g, len);
	ASSERT_EQ(1, id);
	EXPECT_EQ(self->pages0 + 64, dfg_sysfs_u64("pages"));
	EXPECT_EQ(self->resident0, dfg_sysfs_u64("resident"));
	EXPECT_EQ(0, resident(g, id));

	p = map_arena(g, id, len, PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(0, resident(g, id));		/* mmap allocates nothing */
	EXPECT_EQ(0, p[5 * PAGE + 17]);		/* a read fault */
	EXPECT_EQ(1, resident(g, id));
	p[7 * PAGE] = 'w';			/* a write fault */
	EXPECT_EQ(2, resident(g, id));
	EXPECT_EQ(self->resident0 + 2, dfg_sysfs_u64("resident"));
	EXPECT_EQ(0, p[5 * PAGE + 17]);		/* mapped: no fault, no page */
	EXPECT_EQ(2, resident(g, id));

	/* Another process: its faults find the pages there. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char *q = map_arena(g, id, len, PROT_READ | PROT_WRITE);

		if (!q || q[7 * PAGE] != 'w')
			_exit(1);
		q[5 * PAGE] = 'c';
		q[9 * PAGE + 1] = 'n';		/* a page of its own */
		_exit(0);
	}
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, 20000));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(3, resident(g, id));
	EXPECT_EQ('c', p[5 * PAGE]);
	EXPECT_EQ('n', p[9 * PAGE + 1]);

	/* The ptes go, the pages stay; a new mapping sees the same data. */
	EXPECT_EQ(0, madvise(p, len, MADV_DONTNEED));
	EXPECT_EQ('w', p[7 * PAGE]);
	EXPECT_EQ(3, resident(g, id));
	r = map_arena(g, id, len, PROT_READ);
	ASSERT_NE(NULL, r);
	EXPECT_EQ('n', r[9 * PAGE + 1]);
	touch_all(r, len, false, 0);
	EXPECT_EQ(64, resident(g, id));
	EXPECT_EQ(self->resident0 + 64, dfg_sysfs_u64("resident"));
	EXPECT_EQ(0, munmap(r, len));
	EXPECT_EQ(0, munmap(p, len));
	EXPECT_EQ(64, resident(g, id));		/* the arena keeps them */
	close(g);
}

#define RACERS	4

/*
 * First touches racing on the same pages: each of RACERS processes writes
 * its own word of every page, all starting together, in different orders.
 * Had two of them been given different pages for one slot, a word would
 * be lost; and exactly one page per slot is counted.
 */
TEST_F(arena, first_touch_race)
{
	const size_t npages = 512, len = npages * PAGE;
	int g, id, go[2], i, status, lost = 0;
	size_t k, j;
	__u64 *p;

	g = graph_create(self->dev);
	ASSERT_LE(0, g);
	id = arena_create(g, len);
	ASSERT_LT(0, id);
	ASSERT_EQ(0, pipe(go));
	for (i = 0; i < RACERS; i++) {
		self->kids[i] = fork();
		ASSERT_LE(0, self->kids[i]);
		if (self->kids[i] == 0) {
			__u64 *q = (__u64 *)map_arena(g, id, len,
						      PROT_READ | PROT_WRITE);
			char c;

			close(go[1]);
			if (!q || read(go[0], &c, 1) != 0)
				_exit(1);
			for (k = 0; k < npages; k++) {
				/* Forward, backward, odd first, even first. */
				j = k < npages / 2 ? 2 * k :
				    2 * (k - npages / 2) + 1;
				if (i == 0)
					j = k;
				else if (i == 1)
					j = npages - 1 - k;
				else if (i == 2)
					j ^= 1;
				q[j * (PAGE / 8) + i] = 0xa000 + i;
			}
			_exit(0);
		}
	}
	close(go[0]);
	close(go[1]);				/* EOF: all start */
	for (i = 0; i < RACERS; i++) {
		ASSERT_EQ(0, dfg_wait_pid(self->kids[i], &status, 60000));
		self->kids[i] = 0;
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	EXPECT_EQ((long long)npages, resident(g, id));
	p = (__u64 *)map_arena(g, id, len, PROT_READ);
	ASSERT_NE(NULL, p);
	for (k = 0; k < npages; k++)
		for (i = 0; i < RACERS; i++)
			if (p[k * (PAGE / 8) + i] != 0xa000 + (__u64)i &&
			    !lost++)
				TH_LOG("page %zu word %d: %#llx", k, i,
				       (unsigned long long)p[k * (PAGE / 8) + i]);
	EXPECT_EQ(0, lost);
	EXPECT_EQ(0, munmap(p, len));
	EXPECT_EQ((long long)npages, resident(g, id));
	close(g);
}

/*
 * Processes killed while they fault an arena in, a new arena each round,
 * killed later each round: the pages they got stay the arena's (their
 * data too), no page is counted twice, the rest still come at first
 * touch, and all of it goes with the graph (the teardown's counts).
 */
TEST_F_TIMEOUT(arena, death_while_faulting, 300)
{
	const size_t len = 16 * MiB, npages = len / PAGE;
	int g, id, round, i, status, bad = 0;
	long long res;
	size_t k;
	char *p;

	g = graph_create(self->dev);
	ASSERT_LE(0, g);
	for (round = 0; round < 6; round++) {
		id = arena_create(g, len);
		ASSERT_EQ(round + 1, id);
		for (i = 0; i < 3; i++) {
			self->kids[i] = fork();
			ASSERT_LE(0, self->kids[i]);
			if (self->kids[i] == 0) {
				char *q = map_arena(g, id, len,
						    PROT_READ | PROT_WRITE);

				if (!q)
					_exit(1);
				for (k = 0; k < npages; k++) {
					size_t j = i == 1 ? npages - 1 - k :
						   i == 2 ? (k * 7) % npages :
						   k;

					q[j * PAGE] = 'k';
				}
				pause();
				_exit(0);
			}
		}
		usleep(2000 + 9000 * round);
		for (i = 0; i < 3; i++) {
			kill(self->kids[i], SIGKILL);
			ASSERT_EQ(0, dfg_wait_pid(self->kids[i], &status,
						  60000));
			self->kids[i] = 0;
			EXPECT_TRUE(WIFSIGNALED(status) &&
				    WTERMSIG(status) == SIGKILL);
		}
		res = resident(g, id);
		EXPECT_LE(0, res);
		EXPECT_GE((long long)npages, res);
		TH_LOG("round %d: %lld of %zu pages resident", round, res,
		       npages);

		/* Each page is 0 (never touched) or 'k'; then all come. */
		p = map_arena(g, id, len, PROT_READ | PROT_WRITE);
		ASSERT_NE(NULL, p);
		for (k = 0; k < npages; k++)
			if (p[k * PAGE] != 0 && p[k * PAGE] != 'k' && !bad++)
				TH_LOG("page %zu: %#x", k, p[k * PAGE]);
		EXPECT_EQ(0, bad);
		touch_all(p, len, true, 'p');
		EXPECT_EQ((long long)npages, resident(g, id));
		EXPECT_EQ(0, munmap(p, len));
	}
	EXPECT_EQ(self->resident0 + 6 * npages, dfg_sysfs_u64("resident"));
	close(g);
}

/* Writes @val to @dir/@file; 0 or -errno. */
static int cg_write(const char *dir, const char *file, const char *val)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	snprintf(buf, sizeof(buf), "%s", val);
	return dfg_file_rw(path, buf, sizeof(buf), true);
}

/* @dir/@file as a number, ~0 if unreadable. */
static unsigned long long cg_read(const char *dir, const char *file)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (dfg_file_rw(path, buf, sizeof(buf), false))
		return ~0ULL;
	return strtoull(buf, NULL, 10);
}

/* Moves this process into cgroup @dir; 0 or -errno. */
static int cg_enter(const char *dir)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	return cg_write(dir, "cgroup.procs", pid);
}

/*
 * A child that maps arena @id of graph @g and writes every page of it in
 * order; exits 0 when done. Dies of SIGBUS at a page it cannot get.
 */
static pid_t toucher(int g, int id, size_t len)
{
	pid_t pid = fork();

	if (pid == 0) {
		char *q = map_arena(g, id, len, PROT_READ | PROT_WRITE);

		if (!q)
			_exit(1);
		touch_all(q, len, true, 't');
		_exit(0);
	}
	return pid;
}

/*
 * The creator's memory cgroup at its limit: the arena is created inside a
 * cgroup whose memory.max leaves room for 2 MiB of it; a process outside
 * that cgroup touching the arena is charged to the creator's cgroup, so
 * it gets SIGBUS after about 2 MiB, without an OOM kill; with the limit
 * lifted the rest comes, and once the graph is gone the cgroup's memory
 * is back down.
 */
TEST_F_TIMEOUT(arena, memcg_limit_sigbus, 300)
{
	const size_t len = 16 * MiB, npages = len / PAGE;
	unsigned long long cur0, cur1, cur2;
	__u64 last;
	char cg[128], val[64], gname[DFG_NAME_MAX];
	int info[2], g, id = 0, status, ooms, ret;
	bool mounted = false;
	struct dfg_graph_info gi = { .size = sizeof(gi) };
	long long res;

	if (access(CGROOT "/cgroup.controllers", F_OK)) {
		if (mount("none", CGROOT, "cgroup2", 0, NULL))
			SKIP(return, "no cgroup2 (%s)", strerror(errno));
		mounted = true;
	}
	if (cg_write(CGROOT, "cgroup.subtree_control", "+memory"))
		SKIP(goto out_umount, "no memory controller");
	snprintf(cg, sizeof(cg), CGROOT "/dfg-arena-%d", getpid());
	ASSERT_EQ(0, mkdir(cg, 0755));
	ooms = dfg_klog_count("invoked oom-killer");
	ASSERT_LE(0, ooms);

	/* The creator: enters the cgroup, creates, hands the name over. */
	ASSERT_EQ(0, pipe(info));
	self->kids[0] = fork();
	ASSERT_LE(0, self->kids[0]);
	if (self->kids[0] == 0) {
		int dev = sys_dfg_open(), cg_g, a;

		close(info[0]);
		if (dev < 0 || cg_enter(cg))
			_exit(1);
		cg_g = graph_create(dev);
		a = cg_g < 0 ? -1 : arena_create(cg_g, len);
		if (a < 0 || sys_dfg_ioctl(cg_g, DFG_IOC_GRAPH_INFO, &gi) < 0)
			_exit(2);
		if (write(info[1], &a, sizeof(a)) != sizeof(a) ||
		    write(info[1], gi.name, sizeof(gi.name)) !=
		    sizeof(gi.name))
			_exit(3);
		pause();			/* until the parent attached */
		_exit(0);
	}
	close(info[1]);
	ASSERT_EQ(sizeof(id), read(info[0], &id, sizeof(id)));
	ASSERT_EQ(sizeof(gname), read(info[0], gname, sizeof(gname)));
	close(info[0]);
	g = graph_attach(self->dev, gname);
	ASSERT_LE(0, g);
	dfg_kill_pid(self->kids[0]);		/* the graph is ours now */
	self->kids[0] = 0;

	cur0 = cg_read(cg, "memory.current");
	ASSERT_NE(~0ULL, cur0);
	snprintf(val, sizeof(val), "%llu", cur0 + 2 * MiB);
	ASSERT_EQ(0, cg_write(cg, "memory.max", val));

	/* This process is not in the cgroup; the charge still goes there. */
	self->kids[1] = toucher(g, id, len);
	ASSERT_LE(0, self->kids[1]);
	ASSERT_EQ(0, dfg_wait_pid(self->kids[1], &status, 120000));
	self->kids[1] = 0;
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS) {
		TH_LOG("toucher status %#x", status);
	}
	res = resident(g, id);
	TH_LOG("SIGBUS after %lld of %zu pages, memory.current %llu -> %llu",
	       res, npages, cur0, cg_read(cg, "memory.current"));
	/* At most memory.max: cur0 may be a per-CPU stock of the charge,
	 * which the limit drains for the arena's pages. */
	EXPECT_GE((long long)((cur0 + 2 * MiB) / PAGE), res);
	EXPECT_LE((long long)(MiB / PAGE), res);
	EXPECT_EQ(ooms, dfg_klog_count("invoked oom-killer"));

	/* The limit lifted, every page comes, charged to the cgroup. */
	ASSERT_EQ(0, cg_write(cg, "memory.max", "max"));
	self->kids[1] = toucher(g, id, len);
	ASSERT_LE(0, self->kids[1]);
	ASSERT_EQ(0, dfg_wait_pid(self->kids[1], &status, 120000));
	self->kids[1] = 0;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ((long long)npages, resident(g, id));
	cur1 = cg_read(cg, "memory.current");
	EXPECT_LE(cur0 + len - MiB, cur1);

	/* Memory back to zero: the graph gone, the charge is returned. */
	close(g);
	ret = dfg_sysfs_wait_u64("resident", self->resident0, 5000, &last);
	EXPECT_EQ(0, ret);
	cur2 = cg_read(cg, "memory.current");
	TH_LOG("memory.current at the end %llu", cur2);
	EXPECT_GE(cur0 + MiB, cur2);
	EXPECT_EQ(0, rmdir(cg));
out_umount:
	if (mounted)
		umount(CGROOT);
}

TEST_HARNESS_MAIN
