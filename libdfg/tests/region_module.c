// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg test of exported regions against the loaded dfg module (run it in
 * the test VM: tools/vm/dfg-vm -- build/libdfg/tests/region_module). SKIPs
 * when the device cannot be opened or the module has no regions, so the
 * host run stays green.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dfg/dfg.h>

#include "kselftest_harness.h"

#define PAGE	4096UL

#define SKIP_IF_NO_REGION() do {					\
	if (self->gfd < 0)						\
		SKIP(return, "%s", "no dfg device with regions");	\
} while (0)

FIXTURE(region) {
	struct dfg *d;		/* handle on the dfg device */
	char name[DFG_NAME_MAX];	/* unique graph name */
	int gfd;		/* graph descriptor, read-write */
	char *mem;		/* 4 pages of this process's memory */
};

FIXTURE_SETUP(region)
{
	struct dfg_info info;
	static int seq;
	int ret;

	self->d = NULL;
	self->gfd = -1;
	self->mem = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
	ret = dfg_open(&self->d, DFG_OPEN_NO_RING);
	if (ret == -ENOENT || ret == -ENODEV)
		SKIP(return, "no dfg device (%s)", strerror(-ret));
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, dfg_info(self->d, &info));
	if (!(info.features & DFG_F_REGION))
		SKIP(return, "module without DFG_F_REGION");
	snprintf(self->name, sizeof(self->name), "libdfg-region-%d-%d",
		 getpid(), seq++);
	self->gfd = dfg_graph_create(self->d, self->name, 0600,
				     DFG_GRAPH_O_CLOEXEC);
	ASSERT_LE(0, self->gfd) TH_LOG("%s", strerror(-self->gfd));
}

FIXTURE_TEARDOWN(region)
{
	if (self->gfd >= 0)
		close(self->gfd);
	dfg_close(self->d);
	munmap(self->mem, 4 * PAGE);
}

/* A child maps the region as an arena view; bounds helpers work on it. */
TEST_F(region, export_map_child)
{
	__u64 off = 0;
	int id, status;
	pid_t pid;

	SKIP_IF_NO_REGION();
	strcpy(self->mem + PAGE, "exported");
	errno = 1234;
	id = dfg_region_export(self->gfd, self->mem, 4 * PAGE,
			       DFG_REGION_F_WRITE, &off);
	ASSERT_LT(0, id) TH_LOG("%s", strerror(-id));
	EXPECT_EQ(1234, errno);
	EXPECT_NE(0, off & DFG_MMAP_REGION);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct dfg_arena *a;
		char *p;

		if (dfg_region_map(self->gfd, off, 4 * PAGE, 1, &a))
			_exit(1);
		if (dfg_arena_size(a) != 4 * PAGE || dfg_arena_id(a) != 0)
			_exit(2);
		p = dfg_arena_ptr(a, PAGE, 9);
		if (!p || strcmp(p, "exported"))
			_exit(3);
		if (dfg_arena_ptr(a, 4 * PAGE - 1, 2))
			_exit(4);
		if (dfg_arena_off(a, p) != PAGE)
			_exit(5);
		strcpy((char *)dfg_arena_ptr(a, 3 * PAGE, 6), "peer!");
		dfg_arena_unmap(a);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_STREQ("peer!", self->mem + 3 * PAGE);
	EXPECT_EQ(0, dfg_region_unexport(self->gfd, id));
	EXPECT_EQ(-ENOENT, dfg_region_unexport(self->gfd, id));
}

TEST_F(region, map_errors)
{
	struct dfg_arena *a;
	__u64 off = 0;
	int id, ro;

	SKIP_IF_NO_REGION();
	id = dfg_region_export(self->gfd, self->mem, PAGE, 0, &off);
	ASSERT_LT(0, id);
	EXPECT_EQ(-EINVAL, dfg_region_map(self->gfd, off, PAGE, 0, NULL));
	EXPECT_EQ(-EINVAL, dfg_region_map(self->gfd, off, 0, 0, &a));
	EXPECT_EQ(-EINVAL, dfg_region_map(self->gfd, DFG_MMAP_OFFSET(id),
					  PAGE, 0, &a));
	EXPECT_EQ(-EINVAL, dfg_region_map(self->gfd, off, 2 * PAGE, 0, &a));
	EXPECT_EQ(-EACCES, dfg_region_map(self->gfd, off, PAGE, 1, &a));
	EXPECT_EQ(-EBADF, dfg_region_map(-1, off, PAGE, 0, &a));
	ASSERT_EQ(0, dfg_region_map(self->gfd, off, 100, 0, &a));
	EXPECT_EQ(PAGE, dfg_arena_size(a));
	dfg_arena_unmap(a);

	EXPECT_EQ(-EINVAL, dfg_region_export(self->gfd, self->mem + 1, PAGE,
					     0, NULL));
	EXPECT_EQ(-EINVAL, dfg_region_export(self->gfd, self->mem, PAGE, 8,
					     NULL));
	EXPECT_EQ(-EBADF, dfg_region_export(-1, self->mem, PAGE, 0, NULL));
	ro = dfg_graph_attach(self->d, self->name, DFG_GRAPH_O_RDONLY);
	ASSERT_LE(0, ro);
	EXPECT_EQ(-EACCES, dfg_region_export(ro, self->mem, PAGE, 0, NULL));
	EXPECT_EQ(-EACCES, dfg_region_unexport(ro, id));
	close(ro);
	EXPECT_EQ(0, dfg_region_unexport(self->gfd, id));
	EXPECT_EQ(-EINVAL, dfg_region_map(self->gfd, off, PAGE, 0, &a));
}

TEST_F(region, copy)
{
	char out[32] = "", in[] = "in";
	int id;

	SKIP_IF_NO_REGION();
	strcpy(self->mem + PAGE - 3, "split");
	id = dfg_region_export(self->gfd, self->mem, 2 * PAGE,
			       DFG_REGION_F_WRITE, NULL);
	ASSERT_LT(0, id);
	EXPECT_EQ(6, dfg_region_copy(self->gfd, id, PAGE - 3, out, 6,
				     DFG_COPY_FROM_REGION));
	EXPECT_STREQ("split", out);
	EXPECT_EQ(3, dfg_region_copy(self->gfd, id, 0, in, 3,
				     DFG_COPY_TO_REGION));
	EXPECT_STREQ("in", self->mem);
	EXPECT_EQ(0, dfg_region_copy(self->gfd, id, 0, out, 0,
				     DFG_COPY_FROM_REGION));
	EXPECT_EQ(-ERANGE, dfg_region_copy(self->gfd, id, 2 * PAGE - 1, out,
					   2, DFG_COPY_FROM_REGION));
	EXPECT_EQ(-ERANGE, dfg_region_copy(self->gfd, id, ~0ULL, out, 2,
					   DFG_COPY_FROM_REGION));
	EXPECT_EQ(-EINVAL, dfg_region_copy(self->gfd, id, 0, out, 2, 0));
	EXPECT_EQ(-EFAULT, dfg_region_copy(self->gfd, id, 0, NULL, 2,
					   DFG_COPY_FROM_REGION));
	EXPECT_EQ(-ENOENT, dfg_region_copy(self->gfd, id + 1, 0, out, 2,
					   DFG_COPY_FROM_REGION));
	EXPECT_EQ(0, dfg_region_unexport(self->gfd, id));
	id = dfg_region_export(self->gfd, self->mem, PAGE, 0, NULL);
	ASSERT_LT(0, id);
	EXPECT_EQ(-EACCES, dfg_region_copy(self->gfd, id, 0, in, 2,
					   DFG_COPY_TO_REGION));
	EXPECT_EQ(0, dfg_region_unexport(self->gfd, id));
}

static void on_sigbus(int sig)
{
	(void)sig;
	_exit(77);
}

/*
 * Unexport revokes a view: the child gets SIGBUS on its next access (its
 * own handler exits 77: the sanitizers would otherwise catch the signal).
 */
TEST_F(region, unexport_revokes_view)
{
	struct dfg_arena *a;
	int status, id;
	__u64 off = 0;
	pid_t pid;

	SKIP_IF_NO_REGION();
	id = dfg_region_export(self->gfd, self->mem, PAGE, 0, &off);
	ASSERT_LT(0, id);
	ASSERT_EQ(0, dfg_region_map(self->gfd, off, PAGE, 0, &a));
	ASSERT_EQ(0, dfg_region_unexport(self->gfd, id));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		volatile char *p = dfg_arena_base(a);
		struct sigaction sa = { .sa_handler = on_sigbus };

		sigaction(SIGBUS, &sa, NULL);
		(void)p[0];
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (WIFSIGNALED(status)) {
		EXPECT_EQ(SIGBUS, WTERMSIG(status));
	} else {
		EXPECT_EQ(77, WEXITSTATUS(status));
	}
	dfg_arena_unmap(a);
}

TEST_HARNESS_MAIN
