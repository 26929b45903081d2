// SPDX-License-Identifier: GPL-2.0
/*
 * Teams: DFG_IOC_TEAM_JOIN/WAIT/WAKE/LEAVE, the control area and its
 * header, member deaths (kill -9, a forked child outliving the joiner),
 * orderly leave, graph death, sysfs and netlink, over raw ioctl and
 * uring_cmd (never libdfg).
 *
 * FIXTURE(team) gives each test a graph and runs it over ioctl, uring_cmd
 * inline and uring_cmd indirect (FIXTURE_VARIANT) for WAIT, WAKE and
 * LEAVE (JOIN is indirect-only on io_uring). Waits that must block run in
 * a thread (ioctl) or stay in the ring (io_uring). Processes that die run
 * forked. Every test ends with sysfs "pages" back where it started.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "dfg_sys.h"
#include "dfg_evmon.h"
#include "kselftest_harness.h"

#define PAGE		4096UL
#define CTL		(3 * PAGE)	/* control bytes: 4 pages mapped */
#define MAPSZ		(4 * PAGE)
#define OFF_JOINED	offsetof(struct dfg_team_hdr, joined)
#define OFF_FORMED	offsetof(struct dfg_team_hdr, formed)
#define OFF_WORD	DFG_TEAM_CTL_OFFSET	/* first userspace word */

static int name_seq;

static int graph_new(int dev, char *name, size_t len)
{
	struct dfg_graph_open o = { .size = sizeof(o), .mode = 0600 };

	snprintf(o.name, sizeof(o.name), "team-%d-%d", getpid(), name_seq++);
	if (name)
		snprintf(name, len, "%s", o.name);
	return sys_dfg_ioctl(dev, DFG_IOC_GRAPH_CREATE, &o);
}

static struct dfg_team_join join_args(const char *name, __u32 size,
				      __u32 rank, __u64 ctl)
{
	struct dfg_team_join j = {
		.size = sizeof(j),
		.team_size = size,
		.rank = rank,
		.ctl_size = ctl,
	};

	snprintf(j.name, sizeof(j.name), "%s", name);
	return j;
}

/* JOIN over ioctl; the member descriptor or -errno. */
static int join(int g, const char *name, __u32 size, __u32 rank, __u64 ctl)
{
	struct dfg_team_join j = join_args(name, size, rank, ctl);

	return sys_dfg_ioctl(g, DFG_IOC_TEAM_JOIN, &j);
}

static struct dfg_team_hdr *map_team(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static __u32 load32(const volatile void *base, __u64 off)
{
	return __atomic_load_n((const __u32 *)((const char *)base + off),
			       __ATOMIC_ACQUIRE);
}

static void store32(volatile void *base, __u64 off, __u32 v)
{
	__atomic_store_n((__u32 *)((char *)base + off), v, __ATOMIC_RELEASE);
}

static struct dfg_team_wait wait_args(__u64 off, __u32 val, __s64 tmo)
{
	struct dfg_team_wait w = {
		.offset = off, .value = val, .timeout_ns = tmo,
	};

	return w;
}

static int team_wait(enum dfg_path path, struct io_uring *ring, int fd,
		     __u64 off, __u32 val, __s64 tmo)
{
	struct dfg_team_wait w = wait_args(off, val, tmo);

	return dfg_cmd(path, fd, ring, DFG_IOC_TEAM_WAIT, &w, sizeof(w), NULL);
}

static int team_wake(enum dfg_path path, struct io_uring *ring, int fd,
		     __u64 off)
{
	struct dfg_team_wake w = { .offset = off };

	return dfg_cmd(path, fd, ring, DFG_IOC_TEAM_WAKE, &w, sizeof(w), NULL);
}

static int team_leave(enum dfg_path path, struct io_uring *ring, int fd)
{
	struct dfg_team_leave l = { 0 };

	return dfg_cmd(path, fd, ring, DFG_IOC_TEAM_LEAVE, &l, sizeof(l), NULL);
}

static long long team_attr(int g, int tid, const char *attr)
{
	char name[128];
	__u64 v = 0;
	int ret;

	snprintf(name, sizeof(name), "graphs/%d/team%d/%s", dfg_graph_id(g), tid,
		 attr);
	ret = dfg_sysfs_read_u64(name, &v);
	return ret < 0 ? ret : (long long)v;
}

static int team_attr_str(int g, int tid, const char *attr, char *buf,
			 size_t len)
{
	char name[128];

	snprintf(name, sizeof(name), "graphs/%d/team%d/%s", dfg_graph_id(g), tid,
		 attr);
	return dfg_sysfs_read(name, buf, len);
}

/* ------------------------------------------------------------------------
 * A WAIT that may block: io_uring SQE left in the ring, or ioctl in a thread
 * ------------------------------------------------------------------------
 */
struct pending {
	struct dfg_pending	cmd;
	struct dfg_team_wait	args;
};

static int wait_start(struct pending *p, enum dfg_path path,
		      struct io_uring *ring, int fd, __u64 off, __u32 val,
		      __s64 tmo)
{
	p->args = wait_args(off, val, tmo);
	return dfg_pending_start(&p->cmd, path, ring, fd, DFG_IOC_TEAM_WAIT,
				 &p->args, sizeof(p->args), 0x77);
}

/* 0 with *@res once the WAIT completed within @ms, -ETIME otherwise. */
static int wait_end(struct pending *p, int ms, int *res)
{
	int ret = dfg_pending_end(&p->cmd, ms, res);

	if (!ret && p->cmd.path != DFG_PATH_IOCTL &&
	    p->cmd.cqe.user_data != 0x77)
		*res = -EPROTO;
	return ret;
}

/* Until the team's sysfs "waits" reaches @n: the WAIT really sleeps. */
static bool wait_parked(int g, int tid, long long n)
{
	__u64 start = dfg_now_ns();

	while (team_attr(g, tid, "waits") < n) {
		if (dfg_ms_since(start) > 5000)
			return false;
		usleep(1000);
	}
	return true;
}

/* ------------------------------------------------------------------------
 * FIXTURE(team)
 * ------------------------------------------------------------------------
 */

FIXTURE(team) {
	int dev;		/* /dev/dfg */
	int g;			/* a fresh graph */
	char gname[DFG_NAME_MAX];
	struct io_uring ring;	/* SQE128 | CQE32, uring variants */
	bool have_ring;
	__u64 pages0;		/* sysfs pages before the graph */
};

FIXTURE_VARIANT(team) {
	enum dfg_path path;
};

FIXTURE_VARIANT_ADD(team, ioctl) {
	.path = DFG_PATH_IOCTL,
};

FIXTURE_VARIANT_ADD(team, uring_inline) {
	.path = DFG_PATH_INLINE,
};

FIXTURE_VARIANT_ADD(team, uring_indirect) {
	.path = DFG_PATH_INDIRECT,
};

FIXTURE_SETUP(team)
{
	struct dfg_info info;

	self->dev = sys_dfg_open();
	if (self->dev < 0)
		SKIP(return, "no %s: %s", DFG_DEV_PATH, strerror(-self->dev));
	ASSERT_EQ(0, dfg_get_info(self->dev, &info));
	if (!(info.features & DFG_F_TEAM))
		SKIP(return, "module without DFG_F_TEAM");
	self->pages0 = dfg_sysfs_u64("pages");
	self->g = graph_new(self->dev, self->gname, sizeof(self->gname));
	ASSERT_LE(0, self->g);
	if (variant->path != DFG_PATH_IOCTL) {
		ASSERT_EQ(0, dfg_ring_init(&self->ring, 16));
		self->have_ring = true;
	}
}

FIXTURE_TEARDOWN(team)
{
	if (self->have_ring)
		io_uring_queue_exit(&self->ring);
	if (self->g >= 0)
		close(self->g);
	if (self->dev >= 0) {
		EXPECT_EQ(self->pages0, dfg_sysfs_wait("pages", self->pages0));
		close(self->dev);
	}
}

/* Every error JOIN promises for bad arguments. */
TEST_F(team, join_errors)
{
	struct dfg_graph_open o = { .size = sizeof(o),
				    .flags = DFG_GRAPH_O_RDONLY };
	struct dfg_team_join j;
	int ro, fd, fd2;

#define JOIN_ERR(expect, stmt) do {					\
		j = join_args("t", 2, 0, 64);				\
		stmt;							\
		EXPECT_EQ(expect, sys_dfg_ioctl(self->g, DFG_IOC_TEAM_JOIN, &j)); \
	} while (0)

	JOIN_ERR(-EINVAL, j.size = 0);
	JOIN_ERR(-EINVAL, j.size = sizeof(j) + 8);
	JOIN_ERR(-EINVAL, j.flags = 1);
	JOIN_ERR(-EINVAL, j.id = 1);
	JOIN_ERR(-EINVAL, j.reserved0 = 1);
	JOIN_ERR(-EINVAL, j.map_size = 1);
	JOIN_ERR(-EINVAL, j.reserved[3] = 1);
	JOIN_ERR(-EINVAL, j.team_size = 0);
	JOIN_ERR(-EINVAL, j.team_size = DFG_TEAM_SIZE_MAX + 1);
	JOIN_ERR(-EINVAL, j.rank = 2);
	JOIN_ERR(-EINVAL, j.rank = ~0U);
	JOIN_ERR(-EFBIG, j.ctl_size = DFG_TEAM_CTL_MAX + 1ULL);
	JOIN_ERR(-EFBIG, j.ctl_size = ~0ULL);
	JOIN_ERR(-EINVAL, j.name[0] = 0);
	JOIN_ERR(-EINVAL, strcpy(j.name, "a/b"));
	JOIN_ERR(-EINVAL, memset(j.name, 'a', sizeof(j.name)));
#undef JOIN_ERR

	/* The largest team and control area are fine. */
	fd = join(self->g, "big", DFG_TEAM_SIZE_MAX, DFG_TEAM_SIZE_MAX - 1,
		  DFG_TEAM_CTL_MAX);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, team_leave(DFG_PATH_IOCTL, NULL, fd));
	close(fd);

	/* Mismatched size or control area, taken rank. */
	fd = join(self->g, "t", 2, 0, 64);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, join(self->g, "t", 3, 1, 64));
	EXPECT_EQ(-EINVAL, join(self->g, "t", 2, 1, 128));
	EXPECT_EQ(-EADDRINUSE, join(self->g, "t", 2, 0, 64));
	fd2 = join(self->g, "t", 2, 1, 64);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-EADDRINUSE, join(self->g, "t", 2, 1, 64));

	/* Wrong kinds of file, both ways. */
	j = join_args("t", 2, 0, 64);
	EXPECT_EQ(-EBADFD, sys_dfg_ioctl(self->dev, DFG_IOC_TEAM_JOIN, &j));
	EXPECT_EQ(-EBADFD, sys_dfg_ioctl(fd, DFG_IOC_TEAM_JOIN, &j));
	{
		struct dfg_team_wait w = wait_args(OFF_WORD, 0, 0);

		EXPECT_EQ(-EBADFD, sys_dfg_ioctl(self->g, DFG_IOC_TEAM_WAIT,
						 &w));
	}

	/* A read-only graph descriptor cannot join. */
	snprintf(o.name, sizeof(o.name), "%s", self->gname);
	ro = sys_dfg_ioctl(self->dev, DFG_IOC_GRAPH_ATTACH, &o);
	ASSERT_LE(0, ro);
	EXPECT_EQ(-EACCES, join(ro, "t2", 1, 0, 0));
	close(ro);

	/* JOIN does not fit inline; indirect works on io_uring. */
	if (self->have_ring) {
		int r;

		j = join_args("u", 1, 0, 0);
		EXPECT_EQ(-EINVAL, dfg_cmd(DFG_PATH_INLINE, self->g, &self->ring,
					   DFG_IOC_TEAM_JOIN, &j, sizeof(j),
					   NULL));
		r = dfg_cmd(DFG_PATH_INDIRECT, self->g, &self->ring,
			    DFG_IOC_TEAM_JOIN, &j, sizeof(j), NULL);
		ASSERT_LE(0, r);
		EXPECT_NE(0, j.id);
		EXPECT_EQ(PAGE, j.map_size);
		EXPECT_EQ(0, team_leave(variant->path, &self->ring, r));
		close(r);
	}
	close(fd);
	close(fd2);
}

/* The header, the mapping, sysfs and the page count of one team. */
TEST_F(team, join_header_sysfs)
{
	struct dfg_team_join j = join_args("hdr", 2, 1, CTL);
	struct dfg_team_hdr *h;
	__u64 pages_before = dfg_sysfs_u64("pages");
	char buf[64];
	int fd, fd0, tid;

	fd = sys_dfg_ioctl(self->g, DFG_IOC_TEAM_JOIN, &j);
	ASSERT_LE(0, fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	tid = j.id;
	EXPECT_EQ(MAPSZ, j.map_size);
	EXPECT_EQ(pages_before + MAPSZ / PAGE, dfg_sysfs_u64("pages"));

	/* mmap: shared only, offset 0, at most map_size. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd,
				   PAGE));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, MAPSZ + PAGE, PROT_READ, MAP_SHARED,
				   fd, 0));
	h = map_team(fd, MAPSZ);
	ASSERT_NE(NULL, h);
	EXPECT_EQ(DFG_TEAM_MAGIC, h->magic);
	EXPECT_EQ(2, h->team_size);
	EXPECT_EQ(tid, h->id);
	EXPECT_EQ(CTL, h->ctl_size);
	EXPECT_EQ(MAPSZ, h->map_size);
	EXPECT_EQ(DFG_TEAM_S_ACTIVE, h->state);
	EXPECT_EQ(1, h->joined);
	EXPECT_EQ(0, h->formed);
	EXPECT_EQ(DFG_TEAM_NO_RANK, h->dead_rank);
	EXPECT_EQ(1, h->generation);
	EXPECT_EQ(2, h->ranks);

	ASSERT_EQ(0, team_attr_str(self->g, tid, "name", buf, sizeof(buf)));
	EXPECT_STREQ("hdr", buf);
	EXPECT_EQ(2, team_attr(self->g, tid, "size"));
	EXPECT_EQ(1, team_attr(self->g, tid, "joined"));
	EXPECT_EQ(MAPSZ / PAGE, team_attr(self->g, tid, "pages"));
	ASSERT_EQ(0, team_attr_str(self->g, tid, "state", buf, sizeof(buf)));
	EXPECT_STREQ("active", buf);
	ASSERT_EQ(0, team_attr_str(self->g, tid, "dead_rank", buf,
				   sizeof(buf)));
	EXPECT_STREQ("-1", buf);

	/* The control area is shared between members, the header updated. */
	fd0 = join(self->g, "hdr", 2, 0, CTL);
	ASSERT_LE(0, fd0);
	{
		struct dfg_team_hdr *h0 = map_team(fd0, MAPSZ);

		ASSERT_NE(NULL, h0);
		store32(h0, MAPSZ - 4, 0xabcd);
		EXPECT_EQ(0xabcd, load32(h, MAPSZ - 4));
		munmap(h0, MAPSZ);
	}
	EXPECT_EQ(2, h->joined);
	EXPECT_EQ(1, h->formed);
	EXPECT_EQ(3, h->ranks);
	EXPECT_EQ(2, team_attr(self->g, tid, "joined"));

	/* Both leave: the team and its directory go, the mapping stays. */
	EXPECT_EQ(0, team_leave(variant->path, &self->ring, fd0));
	EXPECT_EQ(1, h->joined);
	EXPECT_EQ(DFG_TEAM_S_ACTIVE, h->state);
	EXPECT_EQ(0, team_leave(variant->path, &self->ring, fd));
	EXPECT_EQ(-ENOENT, team_attr(self->g, tid, "joined"));
	EXPECT_EQ(0, h->joined);
	EXPECT_EQ(DFG_TEAM_S_ACTIVE, h->state);
	EXPECT_EQ(pages_before + MAPSZ / PAGE, dfg_sysfs_u64("pages"));
	close(fd0);
	close(fd);
	/* The mapping holds its descriptor, hence the pages. */
	EXPECT_EQ(pages_before + MAPSZ / PAGE, dfg_sysfs_u64("pages"));
	munmap(h, MAPSZ);
	EXPECT_EQ(pages_before, dfg_sysfs_wait("pages", pages_before));

	/* Same name again: a new team, zeroed. */
	fd = join(self->g, "hdr", 2, 0, CTL);
	ASSERT_LE(0, fd);
	h = map_team(fd, MAPSZ);
	ASSERT_NE(NULL, h);
	EXPECT_EQ(0, load32(h, MAPSZ - 4));
	EXPECT_EQ(1, h->joined);
	EXPECT_EQ(0, team_leave(variant->path, &self->ring, fd));
	munmap(h, MAPSZ);
	close(fd);
}

/* WAIT's immediate results, errors and timeouts. */
TEST_F(team, wait_now)
{
	struct dfg_team_wait w;
	struct dfg_team_wake k;
	__u64 start;
	int fd;

	fd = join(self->g, "w", 1, 0, CTL);
	ASSERT_LE(0, fd);
	/* The word is 0: another value returns at once with 1. */
	EXPECT_EQ(1, team_wait(variant->path, &self->ring, fd, OFF_WORD, 7,
			       -1));
	EXPECT_EQ(1, team_wait(variant->path, &self->ring, fd, OFF_JOINED, 0,
			       -1));
	EXPECT_EQ(-ETIMEDOUT, team_wait(variant->path, &self->ring, fd,
					OFF_WORD, 0, 0));
	start = dfg_now_ns();
	EXPECT_EQ(-ETIMEDOUT, team_wait(variant->path, &self->ring, fd,
					OFF_WORD, 0, 50 * 1000000LL));
	EXPECT_LE(50, dfg_ms_since(start));
	EXPECT_GT(2000, dfg_ms_since(start));

	/* Offsets: aligned, inside the mapping (header included). */
	EXPECT_EQ(-EINVAL, team_wait(variant->path, &self->ring, fd, 2, 0, 0));
	EXPECT_EQ(-EINVAL, team_wait(variant->path, &self->ring, fd, MAPSZ, 0,
				     0));
	EXPECT_EQ(-EINVAL, team_wait(variant->path, &self->ring, fd, ~3ULL, 0,
				     0));
	EXPECT_EQ(-ETIMEDOUT, team_wait(variant->path, &self->ring, fd,
					MAPSZ - 4, 0, 0));
	EXPECT_EQ(-EINVAL, team_wake(variant->path, &self->ring, fd, 1));
	EXPECT_EQ(-EINVAL, team_wake(variant->path, &self->ring, fd, MAPSZ));
	EXPECT_EQ(0, team_wake(variant->path, &self->ring, fd, OFF_WORD));

	/* Flags and reserved fields. */
	w = wait_args(OFF_WORD, 0, 0);
	w.flags = 1;
	EXPECT_EQ(-EINVAL, dfg_cmd(variant->path, fd, &self->ring,
				   DFG_IOC_TEAM_WAIT, &w, sizeof(w), NULL));
	w = wait_args(OFF_WORD, 0, 0);
	w.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, dfg_cmd(variant->path, fd, &self->ring,
				   DFG_IOC_TEAM_WAIT, &w, sizeof(w), NULL));
	memset(&k, 0, sizeof(k));
	k.reserved0 = 1;
	EXPECT_EQ(-EINVAL, dfg_cmd(variant->path, fd, &self->ring,
				   DFG_IOC_TEAM_WAKE, &k, sizeof(k), NULL));
	{
		struct dfg_team_leave l = { .flags = 1 };

		EXPECT_EQ(-EINVAL, dfg_cmd(variant->path, fd, &self->ring,
					   DFG_IOC_TEAM_LEAVE, &l, sizeof(l),
					   NULL));
	}

	/* After LEAVE: no member any more. */
	EXPECT_EQ(0, team_leave(variant->path, &self->ring, fd));
	EXPECT_EQ(-ENOTCONN, team_leave(variant->path, &self->ring, fd));
	EXPECT_EQ(-ENOTCONN, team_wait(variant->path, &self->ring, fd,
				       OFF_WORD, 0, 0));
	EXPECT_EQ(-ENOTCONN, team_wake(variant->path, &self->ring, fd,
				       OFF_WORD));
	close(fd);
}

/* A sleeping WAIT: woken by WAKE of its word only, counted. */
TEST_F(team, wait_wake)
{
	struct pending p, q;
	struct dfg_team_hdr *h;
	struct dfg_team_join j = join_args("ww", 2, 0, CTL);
	int fd0, fd1, res, tid;

	fd0 = sys_dfg_ioctl(self->g, DFG_IOC_TEAM_JOIN, &j);
	ASSERT_LE(0, fd0);
	tid = j.id;
	fd1 = join(self->g, "ww", 2, 1, CTL);
	ASSERT_LE(0, fd1);
	h = map_team(fd1, MAPSZ);
	ASSERT_NE(NULL, h);

	ASSERT_EQ(0, wait_start(&p, variant->path, &self->ring, fd0, OFF_WORD,
				0, -1));
	ASSERT_TRUE(wait_parked(self->g, tid, 1));
	/* Another word: nobody woken. */
	EXPECT_EQ(0, team_wake(DFG_PATH_IOCTL, NULL, fd1, OFF_WORD + 4));
	EXPECT_EQ(-ETIME, wait_end(&p, 100, &res));
	/* The word: the sleeper returns 0, even if the value is the same. */
	EXPECT_EQ(1, team_wake(DFG_PATH_IOCTL, NULL, fd1, OFF_WORD));
	ASSERT_EQ(0, wait_end(&p, 2000, &res));
	EXPECT_EQ(0, res);
	EXPECT_EQ(1, team_attr(self->g, tid, "wakes"));

	/* Store then wake, as the protocol says; two sleepers. */
	ASSERT_EQ(0, wait_start(&p, variant->path, &self->ring, fd0, OFF_WORD,
				0, -1));
	ASSERT_TRUE(wait_parked(self->g, tid, 2));
	ASSERT_EQ(0, wait_start(&q, DFG_PATH_IOCTL, NULL, fd1, OFF_WORD, 0,
				-1));
	ASSERT_TRUE(wait_parked(self->g, tid, 3));
	store32(h, OFF_WORD, 5);
	EXPECT_EQ(2, team_wake(variant->path, &self->ring, fd1, OFF_WORD));
	ASSERT_EQ(0, wait_end(&q, 2000, &res));
	EXPECT_EQ(0, res);
	ASSERT_EQ(0, wait_end(&p, 2000, &res));
	EXPECT_EQ(0, res);
	EXPECT_EQ(3, team_attr(self->g, tid, "wakes"));

	/* A parked WAIT with a timeout ends by itself. */
	ASSERT_EQ(0, wait_start(&p, variant->path, &self->ring, fd0, OFF_WORD,
				5, 100 * 1000000LL));
	ASSERT_EQ(0, wait_end(&p, 3000, &res));
	EXPECT_EQ(-ETIMEDOUT, res);

	/* A signal ends an ioctl WAIT. */
	ASSERT_EQ(0, wait_start(&q, DFG_PATH_IOCTL, NULL, fd0, OFF_WORD, 5,
				-1));
	ASSERT_TRUE(wait_parked(self->g, tid, 5));
	pthread_kill(q.cmd.thread, SIGUSR1);
	ASSERT_EQ(0, wait_end(&q, 2000, &res));
	EXPECT_EQ(-EINTR, res);

	EXPECT_EQ(0, team_leave(DFG_PATH_IOCTL, NULL, fd0));
	EXPECT_EQ(0, team_leave(DFG_PATH_IOCTL, NULL, fd1));
	munmap(h, MAPSZ);
	close(fd0);
	close(fd1);
}

/* The kernel wakes waits on header words it changes (joined, formed). */
TEST_F(team, wait_header)
{
	struct pending p;
	struct dfg_team_join j = join_args("wh", 3, 0, 0);
	int fd0, fd1, fd2, res;

	fd0 = sys_dfg_ioctl(self->g, DFG_IOC_TEAM_JOIN, &j);
	ASSERT_LE(0, fd0);
	ASSERT_EQ(0, wait_start(&p, variant->path, &self->ring, fd0,
				OFF_FORMED, 0, -1));
	ASSERT_TRUE(wait_parked(self->g, j.id, 1));
	fd1 = join(self->g, "wh", 3, 1, 0);
	ASSERT_LE(0, fd1);
	/* joined changed, formed did not: still asleep. */
	EXPECT_EQ(-ETIME, wait_end(&p, 100, &res));
	fd2 = join(self->g, "wh", 3, 2, 0);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, wait_end(&p, 2000, &res));
	EXPECT_EQ(0, res);
	EXPECT_EQ(1, team_wait(variant->path, &self->ring, fd0, OFF_FORMED, 0,
			       0));
	EXPECT_EQ(0, team_leave(DFG_PATH_IOCTL, NULL, fd0));
	EXPECT_EQ(0, team_leave(DFG_PATH_IOCTL, NULL, fd1));
	EXPECT_EQ(0, team_leave(DFG_PATH_IOCTL, NULL, fd2));
	close(fd0);
	close(fd1);
	close(fd2);
}

/* An orderly LEAVE fails nobody; the rank can be taken again. */
TEST_F(team, leave_orderly)
{
	struct dfg_team_join j = join_args("lv", 2, 0, 0);
	struct dfg_team_hdr *h;
	struct pending p;
	int fd0, fd1, res;

	fd0 = sys_dfg_ioctl(self->g, DFG_IOC_TEAM_JOIN, &j);
	ASSERT_LE(0, fd0);
	fd1 = join(self->g, "lv", 2, 1, 0);
	ASSERT_LE(0, fd1);
	h = map_team(fd1, PAGE);
	ASSERT_NE(NULL, h);
	ASSERT_EQ(0, wait_start(&p, variant->path, &self->ring, fd1, OFF_WORD,
				0, -1));
	ASSERT_TRUE(wait_parked(self->g, j.id, 1));
	EXPECT_EQ(0, team_leave(variant->path, &self->ring, fd0));
	close(fd0);
	/* The sleeper stays asleep; the team stays active. */
	EXPECT_EQ(-ETIME, wait_end(&p, 200, &res));
	EXPECT_EQ(DFG_TEAM_S_ACTIVE, h->state);
	EXPECT_EQ(1, h->joined);
	EXPECT_EQ(2, h->ranks);
	fd0 = join(self->g, "lv", 2, 0, 0);
	ASSERT_LE(0, fd0);
	EXPECT_EQ(2, h->joined);
	EXPECT_EQ(2, h->formed);
	EXPECT_EQ(1, team_wake(DFG_PATH_IOCTL, NULL, fd0, OFF_WORD));
	ASSERT_EQ(0, wait_end(&p, 2000, &res));
	EXPECT_EQ(0, res);
	EXPECT_EQ(0, team_leave(DFG_PATH_IOCTL, NULL, fd0));
	EXPECT_EQ(0, team_leave(DFG_PATH_IOCTL, NULL, fd1));
	munmap(h, PAGE);
	close(fd0);
	close(fd1);
}

/* close() without LEAVE is a death: the team breaks for everyone. */
TEST_F(team, close_breaks)
{
	struct dfg_team_join j = join_args("cb", 3, 2, 0);
	struct dfg_team_hdr *h;
	struct pending p;
	char buf[32];
	int fd0, fd1, fd2, res, tid;

	fd2 = sys_dfg_ioctl(self->g, DFG_IOC_TEAM_JOIN, &j);
	ASSERT_LE(0, fd2);
	tid = j.id;
	fd0 = join(self->g, "cb", 3, 0, 0);
	ASSERT_LE(0, fd0);
	fd1 = join(self->g, "cb", 3, 1, 0);
	ASSERT_LE(0, fd1);
	h = map_team(fd0, PAGE);
	ASSERT_NE(NULL, h);
	ASSERT_EQ(0, wait_start(&p, variant->path, &self->ring, fd0, OFF_WORD,
				0, -1));
	ASSERT_TRUE(wait_parked(self->g, tid, 1));
	close(fd2);
	ASSERT_EQ(0, wait_end(&p, 2000, &res));
	EXPECT_EQ(-EOWNERDEAD, res);
	EXPECT_EQ(DFG_TEAM_S_BROKEN, h->state);
	EXPECT_EQ(2, h->dead_rank);
	ASSERT_EQ(0, team_attr_str(self->g, tid, "state", buf, sizeof(buf)));
	EXPECT_STREQ("broken", buf);
	EXPECT_EQ(2, team_attr(self->g, tid, "dead_rank"));
	/* Later WAITs fail at once, whatever the value; JOINs too. */
	EXPECT_EQ(-EOWNERDEAD, team_wait(variant->path, &self->ring, fd1,
					 OFF_WORD, 0, -1));
	EXPECT_EQ(-EOWNERDEAD, team_wait(variant->path, &self->ring, fd1,
					 OFF_WORD, 9, -1));
	EXPECT_EQ(-EOWNERDEAD, join(self->g, "cb", 3, 2, 0));
	EXPECT_EQ(0, team_wake(variant->path, &self->ring, fd1, OFF_WORD));
	/* Once every member is gone the name is free again. */
	munmap(h, PAGE);
	close(fd0);
	EXPECT_EQ(-EOWNERDEAD, join(self->g, "cb", 3, 2, 0));
	close(fd1);
	fd2 = join(self->g, "cb", 3, 2, 0);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(0, team_leave(DFG_PATH_IOCTL, NULL, fd2));
	close(fd2);
}

/* The graph's death ends waits with -ECANCELED; members keep the memory. */
TEST_F(team, graph_death)
{
	struct dfg_team_join j = join_args("gd", 2, 0, CTL);
	struct dfg_team_hdr *h;
	struct pending p, q;
	int fd0, fd1, res;

	fd0 = sys_dfg_ioctl(self->g, DFG_IOC_TEAM_JOIN, &j);
	ASSERT_LE(0, fd0);
	fd1 = join(self->g, "gd", 2, 1, CTL);
	ASSERT_LE(0, fd1);
	h = map_team(fd0, MAPSZ);
	ASSERT_NE(NULL, h);
	ASSERT_EQ(0, wait_start(&p, variant->path, &self->ring, fd0, OFF_WORD,
				0, -1));
	ASSERT_TRUE(wait_parked(self->g, j.id, 1));
	ASSERT_EQ(0, wait_start(&q, DFG_PATH_IOCTL, NULL, fd1, OFF_WORD, 0,
				-1));
	ASSERT_TRUE(wait_parked(self->g, j.id, 2));
	close(self->g);
	self->g = -1;
	ASSERT_EQ(0, wait_end(&p, 2000, &res));
	EXPECT_EQ(-ECANCELED, res);
	ASSERT_EQ(0, wait_end(&q, 2000, &res));
	EXPECT_EQ(-ECANCELED, res);
	EXPECT_EQ(DFG_TEAM_S_DEAD, h->state);
	EXPECT_EQ(-ECANCELED, team_wait(variant->path, &self->ring, fd1,
					OFF_WORD, 0, -1));
	EXPECT_EQ(-ECANCELED, team_wake(variant->path, &self->ring, fd1,
					OFF_WORD));
	EXPECT_EQ(0, team_leave(variant->path, &self->ring, fd1));
	store32(h, MAPSZ - 4, 1);	/* still mapped, still memory */
	close(fd0);
	close(fd1);
	EXPECT_LT(self->pages0, dfg_sysfs_u64("pages"));
	munmap(h, MAPSZ);
}

/* 1000 join/leave cycles (and close-without-leave ones): nothing leaks. */
TEST_F(team, cycles)
{
	int i, fd0, fd1;

	for (i = 0; i < 1000; i++) {
		fd0 = join(self->g, "cy", 2, 0, CTL);
		ASSERT_LE(0, fd0);
		fd1 = join(self->g, "cy", 2, 1, CTL);
		ASSERT_LE(0, fd1);
		if (i & 1) {
			ASSERT_EQ(0, team_leave(variant->path, &self->ring,
						fd0));
			ASSERT_EQ(0, team_leave(variant->path, &self->ring,
						fd1));
		}
		close(fd0);
		close(fd1);
	}
	EXPECT_EQ(self->pages0, dfg_sysfs_wait("pages", self->pages0));
	{
		struct dfg_graph_info info = { .size = sizeof(info) };

		ASSERT_EQ(0, sys_dfg_ioctl(self->g, DFG_IOC_GRAPH_INFO, &info));
		EXPECT_EQ(0, info.nr_objects);
		EXPECT_EQ(0, info.pages);
	}
}

/* ------------------------------------------------------------------------
 * Processes: N members forming a team, deaths at bad moments
 * ------------------------------------------------------------------------
 */

/* Child: join @rank, wait for all, count in, leave. Exit 0 on success. */
static int member_main(int g, const char *name, int size, int rank,
		       enum dfg_path path)
{
	struct io_uring ring;
	struct dfg_team_hdr *h;
	__u32 f;
	int fd, ret;

	if (path != DFG_PATH_IOCTL && dfg_ring_init(&ring, 4))
		return 10;
	fd = join(g, name, size, rank, CTL);
	if (fd < 0)
		return 11;
	h = map_team(fd, MAPSZ);
	if (!h)
		return 12;
	while (!(f = load32(h, OFF_FORMED))) {
		ret = team_wait(path, &ring, fd, OFF_FORMED, f, 5000000000LL);
		if (ret < 0)
			return 13;
	}
	/* Everyone counts in; the last one wakes the others. */
	if (__atomic_add_fetch((__u32 *)((char *)h + OFF_WORD), 1,
			       __ATOMIC_ACQ_REL) == (__u32)size)
		team_wake(path, &ring, fd, OFF_WORD);
	while ((f = load32(h, OFF_WORD)) != (__u32)size) {
		ret = team_wait(path, &ring, fd, OFF_WORD, f, 5000000000LL);
		if (ret < 0)
			return 14;
	}
	if (team_leave(path, &ring, fd))
		return 15;
	return 0;
}

TEST(form_n)
{
	char name[32];
	pid_t pids[8];
	int dev, g, n, r, status;
	__u64 pages0;

	dev = sys_dfg_open();
	if (dev < 0)
		SKIP(return, "no %s", DFG_DEV_PATH);
	pages0 = dfg_sysfs_u64("pages");
	g = graph_new(dev, NULL, 0);
	ASSERT_LE(0, g);
	for (n = 1; n <= 8; n++) {
		snprintf(name, sizeof(name), "form%d", n);
		for (r = 0; r < n; r++) {
			pids[r] = fork();
			ASSERT_LE(0, pids[r]);
			if (!pids[r])
				_exit(member_main(g, name, n, r,
						  (enum dfg_path)(r % 3)));
		}
		for (r = 0; r < n; r++) {
			ASSERT_EQ(0, dfg_wait_pid(pids[r], &status, 20000));
			EXPECT_TRUE(WIFEXITED(status));
			EXPECT_EQ(0, WEXITSTATUS(status)) {
				TH_LOG("n=%d rank %d", n, r);
			}
		}
	}
	close(g);
	EXPECT_EQ(pages0, dfg_sysfs_wait("pages", pages0));
	close(dev);
}

/*
 * Child: join @rank, report through @pipe_w, then wait on the first user
 * word for ever (over @path); exits with the WAIT's -result: the parent
 * expects EOWNERDEAD.
 */
static int waiter_main(int g, const char *name, int size, int rank,
		       enum dfg_path path, int pipe_w)
{
	struct io_uring ring;
	char c = 'j';
	int fd, ret;

	if (path != DFG_PATH_IOCTL && dfg_ring_init(&ring, 4))
		return 100;
	fd = join(g, name, size, rank, CTL);
	if (fd < 0)
		return 101;
	if (write(pipe_w, &c, 1) != 1)
		return 102;
	ret = team_wait(path, &ring, fd, OFF_WORD, 0, -1);
	return ret < 0 ? -ret : 103;
}

static int read_n(int fd, int n)
{
	char c;

	while (n > 0 && read(fd, &c, 1) == 1)
		n--;
	return n;
}

/* kill -9 of a member while the others are parked: all out in < 2 s. */
TEST(kill9_parked)
{
	struct dfg_evmon mon;
	struct dfg_event_msg ev;
	char name[32];
	pid_t pids[4], victim;
	int dev, g, r, p[2], status, fd;
	bool nl;
	__u64 t0;
	__u64 pages0 = dfg_sysfs_u64("pages");

	dev = sys_dfg_open();
	if (dev < 0)
		SKIP(return, "no %s", DFG_DEV_PATH);
	nl = !dfg_evmon_open(&mon);
	g = graph_new(dev, NULL, 0);
	ASSERT_LE(0, g);
	ASSERT_EQ(0, pipe(p));
	snprintf(name, sizeof(name), "k9");
	for (r = 1; r < 4; r++) {
		pids[r] = fork();
		ASSERT_LE(0, pids[r]);
		if (!pids[r])
			_exit(waiter_main(g, name, 4, r,
					  (enum dfg_path)(r % 3), p[1]));
	}
	victim = fork();
	ASSERT_LE(0, victim);
	if (!victim) {
		fd = join(g, name, 4, 0, CTL);
		if (fd < 0 || write(p[1], "j", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(0, read_n(p[0], 4));
	fd = join(g, name, 4, 0, CTL);
	EXPECT_EQ(-EADDRINUSE, fd);
	/* The three waiters sleep (team 1 of a new graph) before the kill. */
	ASSERT_TRUE(wait_parked(g, 1, 3));
	t0 = dfg_now_ns();
	kill(victim, SIGKILL);
	ASSERT_EQ(0, dfg_wait_pid(victim, &status, 5000));
	for (r = 1; r < 4; r++) {
		ASSERT_EQ(0, dfg_wait_pid(pids[r], &status, 5000));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(EOWNERDEAD, WEXITSTATUS(status)) {
			TH_LOG("rank %d path %s", r,
			       dfg_path_name((enum dfg_path)(r % 3)));
		}
	}
	EXPECT_GT(2000, dfg_ms_since(t0));
	if (nl) {
		EXPECT_TRUE(dfg_evmon_find(&mon, DFG_EV_TEAM_BROKEN, victim,
					    2000, &ev));
		EXPECT_EQ(0, ev.rank);
		EXPECT_EQ((__u32)dfg_graph_id(g), ev.graph);
		EXPECT_TRUE(dfg_evmon_find(&mon, DFG_EV_TEAM_JOIN, pids[1],
					    2000, &ev));
		EXPECT_EQ(1, ev.rank);
		EXPECT_NE(0, ev.attrs & (1U << DFG_NL_A_RANK));
		dfg_evmon_close(&mon);
	}
	/* Everyone gone: the name is free. */
	fd = join(g, name, 4, 0, CTL);
	ASSERT_LE(0, fd);
	close(fd);
	close(p[0]);
	close(p[1]);
	close(g);
	close(dev);
	/* Gone before the next test reads its baseline. */
	EXPECT_EQ(pages0, dfg_sysfs_wait("pages", pages0));
}

/* A member killed while the others are still forming the team. */
TEST(kill_while_joining)
{
	struct dfg_team_hdr *h;
	pid_t victim;
	int dev, g, fd1, p[2], status, ret;
	__u64 t0;
	__u64 pages0 = dfg_sysfs_u64("pages");

	dev = sys_dfg_open();
	if (dev < 0)
		SKIP(return, "no %s", DFG_DEV_PATH);
	g = graph_new(dev, NULL, 0);
	ASSERT_LE(0, g);
	ASSERT_EQ(0, pipe(p));
	victim = fork();
	ASSERT_LE(0, victim);
	if (!victim) {
		if (join(g, "kj", 3, 0, 0) < 0 || write(p[1], "j", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(0, read_n(p[0], 1));
	fd1 = join(g, "kj", 3, 1, 0);
	ASSERT_LE(0, fd1);
	h = map_team(fd1, PAGE);
	ASSERT_NE(NULL, h);
	EXPECT_EQ(2, h->joined);
	kill(victim, SIGKILL);
	t0 = dfg_now_ns();
	/* wait-all on formed: the death ends it. */
	ret = team_wait(DFG_PATH_IOCTL, NULL, fd1, OFF_FORMED, 0, -1);
	EXPECT_EQ(-EOWNERDEAD, ret);
	EXPECT_GT(2000, dfg_ms_since(t0));
	EXPECT_EQ(0, h->dead_rank);
	EXPECT_EQ(-EOWNERDEAD, join(g, "kj", 3, 2, 0));
	ASSERT_EQ(0, dfg_wait_pid(victim, &status, 5000));
	munmap(h, PAGE);
	close(fd1);
	close(p[0]);
	close(p[1]);
	close(g);
	close(dev);
	/* Gone before the next test reads its baseline. */
	EXPECT_EQ(pages0, dfg_sysfs_wait("pages", pages0));
}

/*
 * The joiner exits while its forked child still holds the member
 * descriptor: a death all the same, seen within dfg.monitor_ms.
 */
TEST(joiner_exits_child_holds)
{
	struct dfg_team_hdr *h;
	pid_t joiner, child = 0;
	int dev, g, fd1, p[2], status, ret;
	__u64 t0;
	__u64 pages0 = dfg_sysfs_u64("pages");

	dev = sys_dfg_open();
	if (dev < 0)
		SKIP(return, "no %s", DFG_DEV_PATH);
	g = graph_new(dev, NULL, 0);
	ASSERT_LE(0, g);
	fd1 = join(g, "fc", 2, 1, 0);
	ASSERT_LE(0, fd1);
	h = map_team(fd1, PAGE);
	ASSERT_NE(NULL, h);
	ASSERT_EQ(0, pipe(p));
	joiner = fork();
	ASSERT_LE(0, joiner);
	if (!joiner) {
		int fd = join(g, "fc", 2, 0, 0);
		pid_t c;

		if (fd < 0)
			_exit(1);
		c = fork();
		if (c < 0)
			_exit(2);
		if (!c) {
			/* Holds fd (inherited) until killed. */
			pause();
			_exit(0);
		}
		if (write(p[1], &c, sizeof(c)) != sizeof(c))
			_exit(3);
		/* Wait for the WAIT below to sleep, then exit. */
		usleep(300000);
		_exit(0);
	}
	ASSERT_EQ(sizeof(child), read(p[0], &child, sizeof(child)));
	t0 = dfg_now_ns();
	ret = team_wait(DFG_PATH_IOCTL, NULL, fd1, OFF_WORD, 0, -1);
	EXPECT_EQ(-EOWNERDEAD, ret);
	EXPECT_GT(2000, dfg_ms_since(t0));
	EXPECT_EQ(0, h->dead_rank);
	EXPECT_EQ(2, h->joined);	/* the child's descriptor lives */
	ASSERT_EQ(0, dfg_wait_pid(joiner, &status, 5000));
	EXPECT_EQ(0, WEXITSTATUS(status));
	dfg_kill_pid(child);
	munmap(h, PAGE);
	close(fd1);
	close(p[0]);
	close(p[1]);
	close(g);
	close(dev);
	/* Gone before the next test reads its baseline. */
	EXPECT_EQ(pages0, dfg_sysfs_wait("pages", pages0));
}

TEST_HARNESS_MAIN
