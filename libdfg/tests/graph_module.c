// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg test of graphs, arenas and the allocator against the loaded dfg
 * module (run it in the test VM: tools/vm/dfg-vm --
 * build/libdfg/tests/graph_module). SKIPs when the device cannot be
 * opened or the module has no graphs, so the host run stays green.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dfg/dfg.h>

#include "kselftest_harness.h"
#include "devgraph.h"

#define SKIP_IF_NO_GRAPH() do {						\
	if (self->gfd < 0)						\
		SKIP(return, "%s", "no dfg device with graphs");	\
} while (0)

#define MSG	"written by the parent"

FIXTURE(graph) {
	struct dfg *d;		/* handle on the dfg device */
	char name[DFG_NAME_MAX];	/* unique graph name */
	int gfd;		/* graph descriptor, read-write */
};

FIXTURE_SETUP(graph)
{
	DEVGRAPH_SETUP(DFG_F_GRAPH, "graph", self->name, sizeof(self->name));
}

FIXTURE_TEARDOWN(graph)
{
	if (self->gfd >= 0)
		close(self->gfd);
	dfg_close(self->d);
}

TEST_F(graph, create_info_attach)
{
	struct dfg_graph_info info;
	int fd;

	SKIP_IF_NO_GRAPH();
	ASSERT_EQ(0, dfg_graph_info(self->gfd, &info));
	EXPECT_STREQ(self->name, info.name);
	EXPECT_EQ(0600, info.mode);
	EXPECT_EQ(0, info.rdonly);
	EXPECT_EQ(geteuid(), info.uid);
	EXPECT_EQ(-EEXIST, dfg_graph_create(self->d, self->name, 0600, 0));
	EXPECT_EQ(-ENOENT, dfg_graph_attach(self->d, "libdfg-no-such", 0));
	EXPECT_EQ(-EBADFD, dfg_graph_info(dfg_fd(self->d), &info));

	fd = dfg_graph_attach(self->d, self->name, DFG_GRAPH_O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dfg_graph_info(fd, &info));
	EXPECT_EQ(1, info.rdonly);
	close(fd);
}

TEST_F(graph, arena_read_only_peer)
{
	struct dfg_arena *a, *ro;
	int fd;

	SKIP_IF_NO_GRAPH();
	ASSERT_EQ(0, dfg_arena_create(self->gfd, 100000, &a));
	EXPECT_EQ(0, dfg_arena_size(a) % 4096);
	EXPECT_LE(100000, dfg_arena_size(a));
	ASSERT_EQ(0, dfg_alloc_init(a));

	fd = dfg_graph_attach(self->d, self->name, DFG_GRAPH_O_RDONLY);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EACCES, dfg_arena_map(fd, dfg_arena_id(a),
					 dfg_arena_size(a), 1, &ro));
	EXPECT_EQ(-EACCES, dfg_arena_create(fd, 4096, &ro));
	ASSERT_EQ(0, dfg_arena_map(fd, dfg_arena_id(a), dfg_arena_size(a), 0,
				   &ro));
	ASSERT_EQ(0, dfg_alloc_attach(ro));
	EXPECT_EQ(-EACCES, dfg_buf_alloc(ro, 1));
	dfg_arena_unmap(ro);
	close(fd);
	dfg_arena_unmap(a);
}

/*
 * The parent allocates and writes; a forked child attaches by name on its
 * own handle, maps the arena, reads the data and frees the parent's block.
 */
TEST_F(graph, arena_shared_with_child)
{
	struct dfg_arena *a;
	int status;
	__s64 off;
	pid_t pid;

	SKIP_IF_NO_GRAPH();
	ASSERT_EQ(0, dfg_arena_create(self->gfd, 1 << 20, &a));
	ASSERT_EQ(0, dfg_alloc_init(a));
	off = dfg_buf_alloc(a, sizeof(MSG));
	ASSERT_LT(0, off);
	memcpy(dfg_arena_ptr(a, off, sizeof(MSG)), MSG, sizeof(MSG));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct dfg_arena *b;
		struct dfg *d;
		char *p;
		int fd;

		if (dfg_open(&d, DFG_OPEN_NO_RING))
			_exit(10);
		fd = dfg_graph_attach(d, self->name, 0);
		if (fd < 0)
			_exit(11);
		if (dfg_arena_map(fd, dfg_arena_id(a), dfg_arena_size(a), 1,
				  &b))
			_exit(12);
		if (dfg_alloc_attach(b))
			_exit(13);
		p = dfg_arena_ptr(b, off, sizeof(MSG));
		if (!p || strcmp(p, MSG))
			_exit(14);
		if (dfg_buf_free(b, off))
			_exit(15);
		dfg_arena_unmap(b);
		close(fd);
		dfg_close(d);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, dfg_buf_size(a, off));
	EXPECT_EQ(-EINVAL, dfg_buf_free(a, off));
	EXPECT_EQ(off, dfg_buf_alloc(a, 1));
	dfg_arena_unmap(a);
}

TEST_HARNESS_MAIN
