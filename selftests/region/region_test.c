// SPDX-License-Identifier: GPL-2.0
/*
 * Exported regions: DFG_IOC_REGION_EXPORT/UNEXPORT/COPY and mmap of region
 * offsets, over raw ioctl and uring_cmd.
 *
 * FIXTURE(region) runs each behaviour over ioctl and over uring_cmd with
 * the structs inline in the SQE (FIXTURE_VARIANT; mmap_offset then comes
 * back in res2). Peers are forked children that attach the graph by name
 * or use the inherited descriptor; revocation is checked by the child's
 * death by SIGBUS. Plain TESTs cover other users (RLIMIT_MEMLOCK). Every
 * test ends with sysfs "pinned" back where it started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "dfg_sys.h"
#include "kselftest_harness.h"

#define NOBODY		65534
#define PAGE		4096UL

static int name_seq;

static void uniq_name(char *buf, size_t size, const char *tag)
{
	snprintf(buf, size, "%s-%d-%d", tag, getpid(), name_seq++);
}

static int graph_open(int dev, unsigned long cmd, const char *name,
		      __u32 mode, __u32 flags)
{
	struct dfg_graph_open o = {
		.size = sizeof(o),
		.flags = flags,
		.mode = mode,
	};

	memcpy(o.name, name, strnlen(name, sizeof(o.name) - 1));
	return sys_dfg_ioctl(dev, cmd, &o);
}

static __u64 pinned(void)
{
	__u64 v = ~0ULL;

	dfg_sysfs_read_u64("pinned", &v);
	return v;
}

/* graphs/<gid>/region<id>/@attr as a number, or -errno. */
static long long region_attr(int gid, int id, const char *attr)
{
	char name[128];
	__u64 v = 0;
	int ret;

	snprintf(name, sizeof(name), "graphs/%d/region%d/%s", gid, id, attr);
	ret = dfg_sysfs_read_u64(name, &v);
	return ret < 0 ? ret : (long long)v;
}

static bool region_dir_exists(int gid, int id)
{
	char path[128];

	snprintf(path, sizeof(path), DFG_SYSFS_DIR "/graphs/%d/region%d", gid,
		 id);
	return access(path, F_OK) == 0;
}

/* Waits up to 5 s for graphs/<gid>/region<id>/ to go; true once gone. */
static bool region_dir_gone(int gid, int id)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (!region_dir_exists(gid, id))
			return true;
		usleep(10000);
	}
	return false;
}

static __u64 wait_pinned(__u64 want)
{
	__u64 last = ~0ULL;

	dfg_sysfs_wait_u64("pinned", want, 5000, &last);
	return last;
}

/*
 * EXPORT over @path; returns the id or -errno, @off gets the mmap offset
 * (copied back, or res2 for inline SQEs).
 */
static int export_p(enum dfg_path path, struct io_uring *ring, int g,
		    void *addr, size_t len, __u32 flags, __u64 *off)
{
	struct dfg_region r = {
		.addr = (__u64)(uintptr_t)addr,
		.len = len,
		.flags = flags,
	};
	__u64 res2 = 0;
	int ret;

	ret = dfg_cmd(path, g, ring, DFG_IOC_REGION_EXPORT, &r, sizeof(r),
		      &res2);
	if (off)
		*off = path == DFG_PATH_INLINE ? res2 : r.mmap_offset;
	return ret;
}

static int unexport_p(enum dfg_path path, struct io_uring *ring, int g,
		      __u32 id)
{
	struct dfg_region r = { .id = id };

	return dfg_cmd(path, g, ring, DFG_IOC_REGION_UNEXPORT, &r, sizeof(r),
		       NULL);
}

static int copy_p(enum dfg_path path, struct io_uring *ring, int g, __u32 id,
		  __u64 off, void *buf, __u64 len, __u32 flags)
{
	struct dfg_region_copy c = {
		.id = id,
		.flags = flags,
		.offset = off,
		.len = len,
		.addr = (__u64)(uintptr_t)buf,
	};

	return dfg_cmd(path, g, ring, DFG_IOC_REGION_COPY, &c, sizeof(c),
		       NULL);
}

static int export(int g, void *addr, size_t len, __u32 flags, __u64 *off)
{
	return export_p(DFG_PATH_IOCTL, NULL, g, addr, len, flags, off);
}

static int unexport(int g, __u32 id)
{
	return unexport_p(DFG_PATH_IOCTL, NULL, g, id);
}

static char *anon(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int become_nobody(void)
{
	if (setgroups(0, NULL))
		return -errno;
	if (setresgid(NOBODY, NOBODY, NOBODY))
		return -errno;
	if (setresuid(NOBODY, NOBODY, NOBODY))
		return -errno;
	return 0;
}

/* Touches @p in a child; returns the signal that killed it, 0 if none. */
static int touch_sig(volatile char *p, bool write)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (write)
			p[0] = 1;
		else
			(void)p[0];
		_exit(0);
	}
	if (dfg_wait_pid(pid, &status, 10000))
		return -ETIME;
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

FIXTURE(region) {
	int dev;		/* /dev/dfg */
	int g;			/* graph, read-write */
	struct io_uring ring;	/* SQE128 | CQE32; uring variant only */
	bool have_ring;
	__u64 pinned0;		/* sysfs pinned at setup */
	char name[DFG_NAME_MAX];
	char *buf;		/* 4 pages of the exporter's memory */
};

FIXTURE_VARIANT(region) {
	enum dfg_path path;
};

FIXTURE_VARIANT_ADD(region, ioctl) {
	.path = DFG_PATH_IOCTL,
};

FIXTURE_VARIANT_ADD(region, uring) {
	.path = DFG_PATH_INLINE,
};

FIXTURE_SETUP(region)
{
	struct dfg_info info;

	self->g = -1;
	self->dev = sys_dfg_open();
	ASSERT_LE(0, self->dev) {
		TH_LOG("open %s: %s", DFG_DEV_PATH, strerror(-self->dev));
	}
	ASSERT_EQ(0, dfg_get_info(self->dev, &info));
	if (!(info.features & DFG_F_REGION))
		SKIP(return, "module without DFG_F_REGION");
	if (variant->path != DFG_PATH_IOCTL) {
		ASSERT_EQ(0, dfg_ring_init(&self->ring, 16));
		self->have_ring = true;
	}
	self->pinned0 = pinned();
	ASSERT_NE(~0ULL, self->pinned0);
	uniq_name(self->name, sizeof(self->name), "r");
	self->g = graph_open(self->dev, DFG_IOC_GRAPH_CREATE, self->name,
			     0600, 0);
	ASSERT_LE(0, self->g);
	self->buf = anon(4 * PAGE);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(region)
{
	if (self->g >= 0)
		close(self->g);
	if (self->have_ring)
		io_uring_queue_exit(&self->ring);
	close(self->dev);
	EXPECT_EQ(self->pinned0, wait_pinned(self->pinned0));
}

#define EXPORT(addr, len, flags, off) \
	export_p(variant->path, &self->ring, self->g, addr, len, flags, off)
#define UNEXPORT(id) unexport_p(variant->path, &self->ring, self->g, id)
#define COPY(id, off, buf, len, flags) \
	copy_p(variant->path, &self->ring, self->g, id, off, buf, len, flags)

/* A peer maps the same pages: it reads what the exporter wrote, and the
 * exporter reads what the peer wrote, in its own memory. */
TEST_F(region, export_map_peer)
{
	struct dfg_graph_info info = { .size = sizeof(info) };
	__u64 off = 0;
	int id, status;
	pid_t pid;

	strcpy(self->buf, "from exporter");
	id = EXPORT(self->buf, 4 * PAGE, DFG_REGION_F_WRITE, &off);
	ASSERT_EQ(1, id) TH_LOG("export: %s", strerror(-id));
	EXPECT_NE(0, off & DFG_MMAP_REGION);
	EXPECT_NE(DFG_MMAP_OFFSET(1), off);
	EXPECT_EQ(self->pinned0 + 4, pinned());
	ASSERT_EQ(0, sys_dfg_ioctl(self->g, DFG_IOC_GRAPH_INFO, &info));
	EXPECT_EQ(1, info.nr_objects);
	EXPECT_EQ(0, info.pages);	/* not dfg's pages */

	/* graphs/<gid>/region<id>/ while exported. */
	EXPECT_EQ(4 * PAGE, region_attr(info.id, id, "size"));
	EXPECT_EQ(4, region_attr(info.id, id, "pages"));
	EXPECT_EQ(1, region_attr(info.id, id, "writable"));
	EXPECT_EQ(1, region_attr(info.id, id, "users"));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* A descriptor of its own: attach by name. */
		int dev = sys_dfg_open();
		int g2 = graph_open(dev, DFG_IOC_GRAPH_ATTACH, self->name, 0, 0);
		char *q;

		if (g2 < 0)
			_exit(1);
		q = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
			 g2, (off_t)off);
		if (q == MAP_FAILED)
			_exit(2);
		if (strcmp(q, "from exporter"))
			_exit(3);
		strcpy(q + 2 * PAGE, "from peer");
		_exit(0);
	}
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, 10000));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_STREQ("from peer", self->buf + 2 * PAGE);

	/* The exporter's own mapping of it is the same memory, too. */
	{
		char *q = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, self->g,
			       (off_t)off);

		ASSERT_NE(MAP_FAILED, q);
		self->buf[1] = 'R';
		EXPECT_EQ('R', q[1]);
		/* Cannot grow (VM_DONTEXPAND). */
		EXPECT_EQ(MAP_FAILED, mremap(q, PAGE, 8 * PAGE,
					     MREMAP_MAYMOVE));
		EXPECT_EQ(0, munmap(q, PAGE));
	}
	EXPECT_EQ(0, UNEXPORT(id));
	/* UNEXPORT removed the directory before it returned. */
	EXPECT_FALSE(region_dir_exists(info.id, id));
	EXPECT_EQ(-ENOENT, region_attr(info.id, id, "size"));
	EXPECT_EQ(self->pinned0, wait_pinned(self->pinned0));
}

/* Read-only grant: no writable mapping, no mprotect upgrade, no COPY in. */
TEST_F(region, rdonly_grant)
{
	__u64 off = 0;
	char *q;
	int id;

	strcpy(self->buf, "ro");
	id = EXPORT(self->buf, 2 * PAGE, 0, &off);
	ASSERT_EQ(1, id);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->g, (off_t)off));
	EXPECT_EQ(EACCES, errno);
	q = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, self->g, (off_t)off);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_STREQ("ro", q);
	EXPECT_EQ(-1, mprotect(q, 2 * PAGE, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(SIGSEGV, touch_sig(q, true));
	EXPECT_EQ(-EACCES, COPY(id, 0, self->buf + 3 * PAGE, 16,
				DFG_COPY_TO_REGION));
	EXPECT_EQ(0, munmap(q, 2 * PAGE));
	EXPECT_EQ(0, UNEXPORT(id));
}

TEST_F(region, mmap_errors)
{
	__u64 off = 0;
	int id, ro, dev2;

	id = EXPORT(self->buf, 2 * PAGE, DFG_REGION_F_WRITE, &off);
	ASSERT_EQ(1, id);
	/* Private, too long, DFG_MMAP_OFFSET(id), inside the window. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE,
				   self->g, (off_t)off));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 3 * PAGE, PROT_READ, MAP_SHARED,
				   self->g, (off_t)off));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ, MAP_SHARED,
				   self->g, (off_t)DFG_MMAP_OFFSET(id)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ, MAP_SHARED,
				   self->g, (off_t)(off + PAGE)));
	EXPECT_EQ(EINVAL, errno);

	/* Another graph's descriptor cannot map it. */
	{
		char other[DFG_NAME_MAX];
		int g2;

		uniq_name(other, sizeof(other), "ro");
		g2 = graph_open(self->dev, DFG_IOC_GRAPH_CREATE, other, 0600,
				0);
		ASSERT_LE(0, g2);
		EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ, MAP_SHARED,
					   g2, (off_t)off));
		EXPECT_EQ(EINVAL, errno);
		close(g2);
	}

	/* A read-only descriptor maps read-only only, and cannot export. */
	dev2 = sys_dfg_open();
	ASSERT_LE(0, dev2);
	ro = graph_open(dev2, DFG_IOC_GRAPH_ATTACH, self->name, 0,
			DFG_GRAPH_O_RDONLY);
	ASSERT_LE(0, ro);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
				   MAP_SHARED, ro, (off_t)off));
	EXPECT_EQ(EACCES, errno);
	{
		char *q = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, ro,
			       (off_t)off);

		ASSERT_NE(MAP_FAILED, q);
		EXPECT_EQ(-1, mprotect(q, PAGE, PROT_READ | PROT_WRITE));
		munmap(q, PAGE);
	}
	EXPECT_EQ(-EACCES, export(ro, self->buf, PAGE, 0, NULL));
	EXPECT_EQ(-EACCES, unexport(ro, id));
	/* COPY out works on it, COPY in does not. */
	EXPECT_EQ(16, copy_p(DFG_PATH_IOCTL, NULL, ro, id, 0,
			     self->buf + 3 * PAGE, 16, DFG_COPY_FROM_REGION));
	EXPECT_EQ(-EACCES, copy_p(DFG_PATH_IOCTL, NULL, ro, id, 0,
				  self->buf + 3 * PAGE, 16,
				  DFG_COPY_TO_REGION));
	close(ro);
	close(dev2);
	EXPECT_EQ(0, UNEXPORT(id));
	/* Gone: its offset maps nothing. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ, MAP_SHARED,
				   self->g, (off_t)off));
}

TEST_F(region, bad_args)
{
	struct dfg_region r;

	EXPECT_EQ(-EINVAL, EXPORT(self->buf + 1, PAGE, 0, NULL));
	EXPECT_EQ(-EINVAL, EXPORT(self->buf, PAGE + 1, 0, NULL));
	EXPECT_EQ(-EINVAL, EXPORT(self->buf, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, EXPORT(self->buf, PAGE, 0x2, NULL));
	EXPECT_EQ(-EINVAL, EXPORT(self->buf, PAGE, ~0U, NULL));
	EXPECT_EQ(-EFBIG, EXPORT(self->buf, DFG_REGION_MAX + PAGE, 0, NULL));

	memset(&r, 0, sizeof(r));
	r.addr = (__u64)(uintptr_t)self->buf;
	r.len = PAGE;
	r.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_REGION_EXPORT, &r));
	r.reserved[1] = 0;
	r.id = 3;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_REGION_EXPORT, &r));
	r.id = 0;
	r.mmap_offset = 1;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_REGION_EXPORT, &r));

	EXPECT_EQ(-ENOENT, UNEXPORT(1));
	EXPECT_EQ(-ENOENT, UNEXPORT(0));
	memset(&r, 0, sizeof(r));
	r.id = 1;
	r.len = 1;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_REGION_UNEXPORT,
					 &r));

	/* Region commands on /dev/dfg: wrong kind of file. */
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-EBADFD, sys_dfg_ioctl(self->dev, DFG_IOC_REGION_EXPORT,
					 &r));

	/* An arena is not a region. */
	{
		struct dfg_arena_create a = { .size = PAGE };

		ASSERT_EQ(1, sys_dfg_ioctl(self->g, DFG_IOC_ARENA_CREATE, &a));
		EXPECT_EQ(-ENOENT, UNEXPORT(1));
		EXPECT_EQ(-ENOENT, COPY(1, 0, self->buf, 1,
					DFG_COPY_FROM_REGION));
	}
	EXPECT_EQ(self->pinned0, pinned());
}

/* Not mapped, or not writable with F_WRITE: -EFAULT, nothing pinned. */
TEST_F(region, efault)
{
	char *p = anon(4 * PAGE);

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, munmap(p + PAGE, PAGE));
	EXPECT_EQ(-EFAULT, EXPORT(p, 4 * PAGE, 0, NULL));
	EXPECT_EQ(-EFAULT, EXPORT(p + PAGE, PAGE, 0, NULL));
	ASSERT_EQ(0, mprotect(p + 2 * PAGE, 2 * PAGE, PROT_READ));
	EXPECT_EQ(-EFAULT, EXPORT(p + 2 * PAGE, 2 * PAGE, DFG_REGION_F_WRITE,
				  NULL));
	/* Read-only memory exports read-only. */
	EXPECT_EQ(1, EXPORT(p + 2 * PAGE, 2 * PAGE, 0, NULL));
	EXPECT_EQ(0, UNEXPORT(1));
	/* Kernel addresses are not the caller's. */
	EXPECT_EQ(-EFAULT, EXPORT((void *)0xffff888000000000UL, PAGE, 0,
				  NULL));
	EXPECT_EQ(self->pinned0, pinned());
	munmap(p, PAGE);
	munmap(p + 2 * PAGE, 2 * PAGE);
}

/*
 * UNEXPORT revokes every mapping at once: a peer's own, and one inherited
 * over fork (ptes copied), both SIGBUS afterwards; the pages are unpinned;
 * the exporter's memory is untouched.
 */
TEST_F(region, unexport_revokes)
{
	int go[2], ready[2], status;
	__u64 off = 0;
	pid_t peer;
	char c, *q;
	int id;

	strcpy(self->buf + PAGE, "data");
	id = EXPORT(self->buf, 4 * PAGE, DFG_REGION_F_WRITE, &off);
	ASSERT_EQ(1, id);
	q = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, self->g,
		 (off_t)off);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_STREQ("data", q + PAGE);	/* ptes present before fork */
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));

	peer = fork();
	ASSERT_LE(0, peer);
	if (peer == 0) {
		/* Inherited mapping and one of its own. */
		volatile char *own = mmap(NULL, 4 * PAGE, PROT_READ,
					  MAP_SHARED, self->g, (off_t)off);
		volatile char *inh = q;

		if (own == MAP_FAILED || own[PAGE] != 'd' || inh[PAGE] != 'd')
			_exit(1);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		if (c == 'o')
			(void)own[PAGE];	/* must SIGBUS */
		else
			inh[PAGE] = 'x';	/* must SIGBUS */
		_exit(3);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	EXPECT_EQ(0, UNEXPORT(id));
	EXPECT_EQ(self->pinned0, wait_pinned(self->pinned0));
	/* The exporter's memory is its own again, data intact. */
	EXPECT_STREQ("data", self->buf + PAGE);
	/* This process's mapping is revoked too. */
	EXPECT_EQ(SIGBUS, touch_sig(q, false));
	EXPECT_EQ(SIGBUS, touch_sig(q + 3 * PAGE, true));
	ASSERT_EQ(1, write(go[1], "i", 1));
	ASSERT_EQ(0, dfg_wait_pid(peer, &status, 10000));
	EXPECT_TRUE(WIFSIGNALED(status)) TH_LOG("peer exit %d",
						WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		EXPECT_EQ(SIGBUS, WTERMSIG(status));
	EXPECT_EQ(0, munmap(q, 4 * PAGE));
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	EXPECT_EQ(-ENOENT, UNEXPORT(id));
}

/* Same, with the peer's own mapping touched after the unexport. */
TEST_F(region, unexport_revokes_peer_own)
{
	int go[2], ready[2], status;
	__u64 off = 0;
	pid_t peer;
	char c;
	int id;

	strcpy(self->buf, "x");
	id = EXPORT(self->buf, PAGE, 0, &off);
	ASSERT_EQ(1, id);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	peer = fork();
	ASSERT_LE(0, peer);
	if (peer == 0) {
		volatile char *own = mmap(NULL, PAGE, PROT_READ, MAP_SHARED,
					  self->g, (off_t)off);

		if (own == MAP_FAILED || own[0] != 'x')
			_exit(1);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		(void)own[0];
		_exit(3);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	EXPECT_EQ(0, UNEXPORT(id));
	ASSERT_EQ(1, write(go[1], "o", 1));
	ASSERT_EQ(0, dfg_wait_pid(peer, &status, 10000));
	ASSERT_TRUE(WIFSIGNALED(status)) TH_LOG("peer exit %d",
						WEXITSTATUS(status));
	EXPECT_EQ(SIGBUS, WTERMSIG(status));
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
}

/* kill -9 of the exporter does not unexport: a peer keeps reading. */
TEST_F(region, exporter_killed)
{
	struct { int id; __u64 off; } msg = { 0 };
	int p[2], status;
	pid_t exporter;
	char *q;

	ASSERT_EQ(0, pipe(p));
	exporter = fork();
	ASSERT_LE(0, exporter);
	if (exporter == 0) {
		char *mine = anon(2 * PAGE);

		if (!mine)
			_exit(1);
		strcpy(mine + PAGE, "survives");
		msg.id = export(self->g, mine, 2 * PAGE, DFG_REGION_F_WRITE,
				&msg.off);
		if (write(p[1], &msg, sizeof(msg)) != sizeof(msg))
			_exit(2);
		for (;;)
			pause();
	}
	ASSERT_EQ(sizeof(msg), read(p[0], &msg, sizeof(msg)));
	ASSERT_LT(0, msg.id);
	q = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, self->g,
		 (off_t)msg.off);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_STREQ("survives", q + PAGE);
	kill(exporter, SIGKILL);
	ASSERT_EQ(0, dfg_wait_pid(exporter, &status, 10000));
	/* Fresh faults too, after the exporter's mm is gone. */
	EXPECT_STREQ("survives", q + PAGE);
	strcpy(q, "still shared");
	EXPECT_EQ(self->pinned0 + 2, pinned());
	{
		char out[16] = "";

		EXPECT_EQ(13, COPY(msg.id, 0, out, 13, DFG_COPY_FROM_REGION));
		EXPECT_STREQ("still shared", out);
	}
	EXPECT_EQ(0, munmap(q, 2 * PAGE));
	EXPECT_EQ(0, UNEXPORT(msg.id));
	close(p[0]);
	close(p[1]);
}

/* Graph death unexports: pinned back to where it was. */
TEST_F(region, graph_death_unpins)
{
	struct dfg_graph_info info = { .size = sizeof(info) };
	__u64 off = 0;
	char *q;

	ASSERT_EQ(1, EXPORT(self->buf, 4 * PAGE, DFG_REGION_F_WRITE, &off));
	ASSERT_EQ(2, EXPORT(self->buf, PAGE, 0, NULL));
	EXPECT_EQ(self->pinned0 + 5, pinned());
	ASSERT_EQ(0, sys_dfg_ioctl(self->g, DFG_IOC_GRAPH_INFO, &info));
	EXPECT_EQ(PAGE, region_attr(info.id, 2, "size"));
	EXPECT_EQ(0, region_attr(info.id, 2, "writable"));
	q = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, self->g, (off_t)off);
	ASSERT_NE(MAP_FAILED, q);
	/* The mapping keeps the graph (and the region) alive. */
	close(self->g);
	self->g = -1;
	self->buf[0] = 'z';
	EXPECT_EQ('z', q[0]);
	EXPECT_EQ(self->pinned0 + 5, pinned());
	EXPECT_TRUE(region_dir_exists(info.id, 1));
	EXPECT_EQ(0, munmap(q, PAGE));
	EXPECT_EQ(self->pinned0, wait_pinned(self->pinned0));
	EXPECT_TRUE(region_dir_gone(info.id, 1));
	EXPECT_TRUE(region_dir_gone(info.id, 2));
}

TEST_F(region, copy)
{
	char out[64] = "", in[] = "copied in";
	__u64 big = (__u64)DFG_REGION_COPY_MAX + 1;
	int id, ro;

	strcpy(self->buf + PAGE - 4, "across pages");
	id = EXPORT(self->buf, 2 * PAGE, DFG_REGION_F_WRITE, NULL);
	ASSERT_EQ(1, id);
	ro = EXPORT(self->buf + 2 * PAGE, PAGE, 0, NULL);
	ASSERT_EQ(2, ro);

	EXPECT_EQ(13, COPY(id, PAGE - 4, out, 13, DFG_COPY_FROM_REGION));
	EXPECT_STREQ("across pages", out);
	EXPECT_EQ(5, COPY(id, 2 * PAGE - 5, in, 5, DFG_COPY_TO_REGION));
	EXPECT_EQ(0, memcmp(self->buf + 2 * PAGE - 5, "copie", 5));
	EXPECT_EQ(0, COPY(id, 2 * PAGE, out, 0, DFG_COPY_FROM_REGION));

	/* Bounds. */
	EXPECT_EQ(-ERANGE, COPY(id, 2 * PAGE - 4, out, 5,
				DFG_COPY_FROM_REGION));
	EXPECT_EQ(-ERANGE, COPY(id, 2 * PAGE + 1, out, 0,
				DFG_COPY_FROM_REGION));
	EXPECT_EQ(-ERANGE, COPY(id, ~0ULL, out, 2, DFG_COPY_FROM_REGION));
	EXPECT_EQ(-ERANGE, COPY(id, 1, out, ~0ULL >> 34,
				DFG_COPY_FROM_REGION));
	/* Direction. */
	EXPECT_EQ(-EACCES, COPY(ro, 0, in, 4, DFG_COPY_TO_REGION));
	EXPECT_EQ(4, COPY(ro, 0, out, 4, DFG_COPY_FROM_REGION));
	EXPECT_EQ(-EINVAL, COPY(id, 0, out, 4, 0));
	EXPECT_EQ(-EINVAL, COPY(id, 0, out, 4,
				DFG_COPY_TO_REGION | DFG_COPY_FROM_REGION));
	EXPECT_EQ(-EINVAL, COPY(id, 0, out, big, DFG_COPY_FROM_REGION));
	/* Bad user pointers. */
	EXPECT_EQ(-EFAULT, COPY(id, 0, NULL, 4, DFG_COPY_FROM_REGION));
	EXPECT_EQ(-EFAULT, COPY(id, 0, (void *)0xffff888000000000UL, 4,
				DFG_COPY_TO_REGION));
	/* Unknown region. */
	EXPECT_EQ(-ENOENT, COPY(9, 0, out, 4, DFG_COPY_FROM_REGION));
	/* Into a mapping of the same region: faults in during the copy. */
	{
		char *q = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			       MAP_SHARED, self->g, (off_t)0);

		EXPECT_EQ(MAP_FAILED, q);	/* offset 0 is nobody's */
	}
	{
		struct dfg_region_copy c = {
			.id = id, .flags = DFG_COPY_FROM_REGION,
			.len = 4, .addr = (__u64)(uintptr_t)out,
		};

		c.reserved[0] = 1;
		EXPECT_EQ(-EINVAL, sys_dfg_ioctl(self->g, DFG_IOC_REGION_COPY,
						 &c));
	}
	EXPECT_EQ(0, UNEXPORT(id));
	EXPECT_EQ(-ENOENT, COPY(id, 0, out, 4, DFG_COPY_FROM_REGION));
	EXPECT_EQ(0, UNEXPORT(ro));
}

/* COPY between a region and a mapping of that same region. */
TEST_F(region, copy_self_mapping)
{
	__u64 off = 0;
	char *q;
	int id;

	strcpy(self->buf, "first page");
	id = EXPORT(self->buf, 2 * PAGE, DFG_REGION_F_WRITE, &off);
	ASSERT_EQ(1, id);
	q = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, self->g,
		 (off_t)off);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_EQ(11, COPY(id, 0, q + PAGE, 11, DFG_COPY_FROM_REGION));
	EXPECT_STREQ("first page", self->buf + PAGE);
	EXPECT_EQ(0, munmap(q, 2 * PAGE));
	EXPECT_EQ(0, UNEXPORT(id));
}

/* 1000 export/unexport cycles leave nothing pinned. */
TEST_F(region, cycles)
{
	__u64 off = 0, prev = 0;
	int i, id;

	for (i = 0; i < 1000; i++) {
		id = EXPORT(self->buf, 4 * PAGE, i & 1 ? DFG_REGION_F_WRITE : 0,
			    &off);
		ASSERT_LT(0, id) TH_LOG("cycle %d: %s", i, strerror(-id));
		/* Keys are not reused at once. */
		ASSERT_NE(prev, off);
		prev = off;
		if (i % 100 == 0) {
			char *q = mmap(NULL, PAGE, PROT_READ, MAP_SHARED,
				       self->g, (off_t)off);

			ASSERT_NE(MAP_FAILED, q);
			EXPECT_EQ(self->buf[0], q[0]);
			munmap(q, PAGE);
		}
		ASSERT_EQ(0, UNEXPORT(id));
	}
	EXPECT_EQ(self->pinned0, wait_pinned(self->pinned0));
}

/*
 * Exports and unexports racing in two processes on one graph: an id comes
 * free only once its region's sysfs directory is gone, so every export
 * succeeds (no -EEXIST from a directory still there, and no sysfs
 * duplicate-name report in the kernel log, which the VM runner fails on).
 */
TEST_F(region, racing_ids)
{
	pid_t pid[2];
	int i, status;

	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (pid[i] == 0) {
			int n, id;

			for (n = 0; n < 2000; n++) {
				id = export_p(DFG_PATH_IOCTL, NULL, self->g,
					      self->buf + i * PAGE, PAGE, 0,
					      NULL);
				if (id <= 0 ||
				    unexport_p(DFG_PATH_IOCTL, NULL, self->g,
					       id))
					_exit(1);
			}
			_exit(0);
		}
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, dfg_wait_pid(pid[i], &status, 120000));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	EXPECT_EQ(self->pinned0, wait_pinned(self->pinned0));
}

/*
 * RLIMIT_MEMLOCK of an unprivileged exporter: -EAGAIN past it; unexport
 * gives the charge back.
 */
TEST(memlock)
{
	char name[DFG_NAME_MAX];
	__u64 pinned0 = pinned();
	int dev, status;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root to switch users");
	dev = sys_dfg_open();
	ASSERT_LE(0, dev);
	uniq_name(name, sizeof(name), "mlock");

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { 64 * 1024, 64 * 1024 };
		char *p;
		int g, a, b;

		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(100);
		if (become_nobody())
			_exit(101);
		p = anon(32 * PAGE);
		if (!p)
			_exit(102);
		g = graph_open(dev, DFG_IOC_GRAPH_CREATE, name, 0600, 0);
		if (g < 0)
			_exit(1);
		if (export(g, p, 32 * PAGE, 0, NULL) != -EAGAIN)
			_exit(2);
		a = export(g, p, 12 * PAGE, DFG_REGION_F_WRITE, NULL);
		if (a <= 0)
			_exit(3);
		if (export(g, p, 8 * PAGE, 0, NULL) != -EAGAIN)
			_exit(4);
		b = export(g, p, 4 * PAGE, 0, NULL);
		if (b <= 0)
			_exit(5);
		if (unexport(g, a))
			_exit(6);
		if (export(g, p, 12 * PAGE, 0, NULL) <= 0)
			_exit(7);
		close(g);
		_exit(0);
	}
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, 10000));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child step %d",
						 WEXITSTATUS(status));
	close(dev);
	EXPECT_EQ(pinned0, wait_pinned(pinned0));
}

/* dfg.max_arena_mb bounds regions too. */
TEST(max_arena_mb)
{
	char name[DFG_NAME_MAX], old[32] = "";
	const char *param = "/sys/module/dfg/parameters/max_arena_mb";
	char *p = anon(2 << 20);
	int dev, g, fd;
	ssize_t n;

	ASSERT_NE(NULL, p);
	fd = open(param, O_RDWR);
	if (fd < 0)
		SKIP(return, "no %s", param);
	n = read(fd, old, sizeof(old) - 1);
	ASSERT_LT(0, n);
	ASSERT_EQ(1, pwrite(fd, "1", 1, 0));
	dev = sys_dfg_open();
	ASSERT_LE(0, dev);
	uniq_name(name, sizeof(name), "mb");
	g = graph_open(dev, DFG_IOC_GRAPH_CREATE, name, 0600, 0);
	ASSERT_LE(0, g);
	EXPECT_EQ(-EFBIG, export(g, p, 2 << 20, 0, NULL));
	EXPECT_EQ(1, export(g, p, 1 << 20, 0, NULL));
	EXPECT_EQ(n, pwrite(fd, old, n, 0));
	close(fd);
	close(g);
	close(dev);
	munmap(p, 2 << 20);
}

TEST_HARNESS_MAIN
