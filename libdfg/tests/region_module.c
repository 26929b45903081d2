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
#include "devgraph.h"

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
	self->d = NULL;
	self->gfd = -1;
	self->mem = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
	DEVGRAPH_SETUP(DFG_F_REGION, "region", self->name, sizeof(self->name));
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

		if (dfg_region_map(self->gfd, id, off, 4 * PAGE, 1, &a))
			_exit(1);
		if (dfg_arena_size(a) != 4 * PAGE || dfg_arena_id(a) != (unsigned int)id)
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
	EXPECT_EQ(-EINVAL, dfg_region_map(self->gfd, id, off, PAGE, 0, NULL));
	EXPECT_EQ(-EINVAL, dfg_region_map(self->gfd, id, off, 0, 0, &a));
	EXPECT_EQ(-EINVAL, dfg_region_map(self->gfd, id, DFG_MMAP_OFFSET(id),
					  PAGE, 0, &a));
	EXPECT_EQ(-EINVAL, dfg_region_map(self->gfd, id, off, 2 * PAGE, 0, &a));
	EXPECT_EQ(-EACCES, dfg_region_map(self->gfd, id, off, PAGE, 1, &a));
	EXPECT_EQ(-EBADF, dfg_region_map(-1, id, off, PAGE, 0, &a));
	ASSERT_EQ(0, dfg_region_map(self->gfd, id, off, 100, 0, &a));
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
	EXPECT_EQ(-EINVAL, dfg_region_map(self->gfd, id, off, PAGE, 0, &a));
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
	ASSERT_EQ(0, dfg_region_map(self->gfd, id, off, PAGE, 0, &a));
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

/*
 * A region as a channel's pool, across processes: the exporter writes each
 * payload into its own memory and sends only its descriptor; a peer maps
 * the region with dfg_region_map() and reads the payload in place through
 * dfg_chan_buf() (no copy anywhere). The channel outlives the unexport.
 */
#define RP_MSGS		32
#define RP_LEN		200
#define RP_STRIDE	512

static unsigned char rp_byte(unsigned int i, unsigned int j)
{
	return (unsigned char)(i * 31 + j * 7 + 1);
}

/* Peer: consumer over its own mapping of the region; exit status 0 = ok. */
static int rp_consumer(int gfd, unsigned int rid, __u64 off, unsigned int cid,
		       struct dfg_chan *theirs)
{
	struct dfg_arena *v;
	struct dfg_chan *c;
	struct dfg_desc d[4];
	unsigned int got = 0;
	int i, n, k;

	dfg_chan_close(theirs);		/* the exporter's producer */
	if (dfg_region_map(gfd, rid, off, 4 * PAGE, 0, &v))
		return 10;
	if (dfg_arena_id(v) != rid || dfg_arena_size(v) != 4 * PAGE)
		return 11;
	if (dfg_chan_open(gfd, cid, DFG_CHAN_CONSUMER, v, &c))
		return 12;
	while ((n = dfg_chan_recv(c, d, 4, 0)) > 0) {
		for (i = 0; i < n; i++, got++) {
			const unsigned char *p = dfg_chan_buf(c, &d[i]);

			if (d[i].tag != got || d[i].len != RP_LEN ||
			    d[i].off != (__u64)got * RP_STRIDE)
				return 13;
			/* In this process's view of the exporter's pages. */
			if (!p || p != (unsigned char *)dfg_arena_base(v) +
				       d[i].off)
				return 14;
			for (k = 0; k < RP_LEN; k++)
				if (p[k] != rp_byte(got, k))
					return 15;
		}
	}
	if (n < 0)
		return 16;
	if (got != RP_MSGS)
		return 17;
	dfg_chan_close(c);
	dfg_arena_unmap(v);
	return 0;
}

TEST_F(region, chan_pool_across_processes)
{
	struct dfg_arena *ev, *wrapped;
	struct dfg_chan *p, *bad;
	struct dfg_info info;
	unsigned int i, j;
	int rid, cid, cid2, status;
	__u64 off = 0;
	pid_t pid;

	SKIP_IF_NO_REGION();
	ASSERT_EQ(0, dfg_info(self->d, &info));
	if (!(info.features & DFG_F_CHAN))
		SKIP(return, "module without DFG_F_CHAN");
	memset(self->mem, 0, 4 * PAGE);
	rid = dfg_region_export(self->gfd, self->mem, 4 * PAGE, 0, &off);
	ASSERT_LT(0, rid);
	/* Depth 4 < RP_MSGS: the exporter waits for room, the peer for data. */
	cid = dfg_chan_create(self->gfd, rid, 4, 1);
	ASSERT_LT(0, cid) TH_LOG("%s", strerror(-cid));

	/* A view without the region id does not pass the pool check. */
	cid2 = dfg_chan_create(self->gfd, rid, 4, 1);
	ASSERT_LT(0, cid2);
	ASSERT_EQ(0, dfg_arena_wrap(self->mem, 4 * PAGE, 1, &wrapped));
	EXPECT_EQ(-EPROTO, dfg_chan_open(self->gfd, cid2, DFG_CHAN_PRODUCER,
					 wrapped, &bad));
	dfg_arena_unmap(wrapped);

	/* The exporter's own view of its region, with the id. */
	ASSERT_EQ(0, dfg_region_map(self->gfd, rid, off, 4 * PAGE, 0, &ev));
	EXPECT_EQ((unsigned int)rid, dfg_arena_id(ev));
	ASSERT_EQ(0, dfg_chan_open(self->gfd, cid, DFG_CHAN_PRODUCER, ev, &p));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(rp_consumer(self->gfd, rid, off, cid, p));

	for (i = 0; i < RP_MSGS; i++) {
		struct dfg_desc d = {
			.off = (__u64)i * RP_STRIDE,
			.len = RP_LEN,
			.tag = i,
		};

		/* Written after the export, into the exporter's own memory. */
		for (j = 0; j < RP_LEN; j++)
			self->mem[i * RP_STRIDE + j] = rp_byte(i, j);
		ASSERT_EQ(1, dfg_chan_send(p, &d, 1, 0));
	}
	dfg_chan_close(p);		/* end of stream */
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	dfg_arena_unmap(ev);
	EXPECT_EQ(0, dfg_region_unexport(self->gfd, rid));
	/* Unexported: no pool any more. */
	EXPECT_EQ(-ENOENT, dfg_chan_create(self->gfd, rid, 4, 1));
}

TEST_HARNESS_MAIN
