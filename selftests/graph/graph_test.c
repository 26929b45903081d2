// SPDX-License-Identifier: GPL-2.0
/*
 * Graphs and arenas: DFG_IOC_GRAPH_CREATE/ATTACH/INFO, DFG_IOC_ARENA_CREATE
 * and mmap of graph descriptors, over raw ioctl and uring_cmd.
 *
 * FIXTURE(graph) runs each behaviour over ioctl and over uring_cmd
 * (FIXTURE_VARIANT: graph open/info structs travel indirect, arena create
 * inline); plain TESTs cover what needs other users (permissions, limits),
 * other processes (SCM_RIGHTS, kill -9) or module parameters. Every test
 * ends with the module-wide page count back to where it started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "dfg_sys.h"
#include "kselftest_harness.h"

#define NOBODY		65534
#define PAGE		4096UL
#define PARAM_DIR	"/sys/module/dfg/parameters/"

static int name_seq;

/* A name no other test of this run uses. */
static void uniq_name(char *buf, size_t size, const char *tag)
{
	snprintf(buf, size, "%s-%d-%d", tag, getpid(), name_seq++);
}

static struct dfg_graph_open open_args(const char *name, __u32 mode,
				       __u32 flags)
{
	struct dfg_graph_open o = {
		.size = sizeof(o),
		.flags = flags,
		.mode = mode,
	};

	memcpy(o.name, name, strnlen(name, sizeof(o.name) - 1));
	return o;
}

/* Sends @cmd over @path; the graph structs are too big to go inline. */
static int run(enum dfg_path path, struct io_uring *ring, int fd, __u32 cmd,
	       void *args, __u32 len)
{
	if (path == DFG_PATH_INLINE && len > DFG_URING_INLINE_MAX)
		path = DFG_PATH_INDIRECT;
	return dfg_cmd(path, fd, ring, cmd, args, len, NULL);
}

static int graph_create_p(enum dfg_path path, struct io_uring *ring, int dev,
			  const char *name, __u32 mode, __u32 flags)
{
	struct dfg_graph_open o = open_args(name, mode, flags);

	return run(path, ring, dev, DFG_IOC_GRAPH_CREATE, &o, sizeof(o));
}

static int graph_attach_p(enum dfg_path path, struct io_uring *ring, int dev,
			  const char *name, __u32 flags)
{
	struct dfg_graph_open o = open_args(name, 0, flags);

	return run(path, ring, dev, DFG_IOC_GRAPH_ATTACH, &o, sizeof(o));
}

static int graph_info(int gfd, struct dfg_graph_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return sys_dfg_ioctl(gfd, DFG_IOC_GRAPH_INFO, info);
}

static int graph_create(int dev, const char *name, __u32 mode, __u32 flags)
{
	return graph_create_p(DFG_PATH_IOCTL, NULL, dev, name, mode, flags);
}

static int graph_attach(int dev, const char *name, __u32 flags)
{
	return graph_attach_p(DFG_PATH_IOCTL, NULL, dev, name, flags);
}

/* ARENA_CREATE over ioctl; fills @a (size, id, mmap_offset). */
static int arena_create(int gfd, __u64 size, struct dfg_arena_create *a)
{
	memset(a, 0, sizeof(*a));
	a->size = size;
	return sys_dfg_ioctl(gfd, DFG_IOC_ARENA_CREATE, a);
}

static void *map_arena(int gfd, size_t len, int prot, int flags, __u64 off)
{
	return mmap(NULL, len, prot, flags, gfd, (off_t)off);
}

static int graph_id(int gfd)
{
	struct dfg_graph_info info;
	int ret = graph_info(gfd, &info);

	return ret < 0 ? ret : (int)info.id;
}

/* graphs/<id>/@attr as a number, or -errno (-ENOENT once the graph died). */
static long long graph_attr(int id, const char *attr)
{
	char name[128];
	__u64 v = 0;
	int ret;

	snprintf(name, sizeof(name), "graphs/%d/%s", id, attr);
	ret = dfg_sysfs_read_u64(name, &v);
	return ret < 0 ? ret : (long long)v;
}

static bool graph_dir_exists(int id)
{
	char path[128];

	snprintf(path, sizeof(path), DFG_SYSFS_DIR "/graphs/%d", id);
	return access(path, F_OK) == 0;
}

/* graphs/<id>/arena<aid>/@attr as a number, or -errno. */
static long long arena_attr(int id, int aid, const char *attr)
{
	char name[128];

	snprintf(name, sizeof(name), "arena%d/%s", aid, attr);
	return graph_attr(id, name);
}

/* Waits up to 5 s for graphs/<id>/arena<aid>/ to go; true once gone. */
static bool arena_dir_gone(int id, int aid)
{
	char path[128];
	int i;

	snprintf(path, sizeof(path), DFG_SYSFS_DIR "/graphs/%d/arena%d", id,
		 aid);
	for (i = 0; i < 500; i++) {
		if (access(path, F_OK) && errno == ENOENT)
			return true;
		usleep(10000);
	}
	return false;
}

static __u64 total_pages(void)
{
	__u64 v = ~0ULL;

	dfg_sysfs_read_u64("pages", &v);
	return v;
}

/* Polls until sysfs "pages" reads @want; returns the last value. */
static __u64 wait_pages(__u64 want)
{
	__u64 last = ~0ULL;

	dfg_sysfs_wait_u64("pages", want, 5000, &last);
	return last;
}

static bool wait_dir_gone(int id)
{
	int i;

	for (i = 0; i < 2500 && graph_dir_exists(id); i++)
		usleep(2000);
	return !graph_dir_exists(id);
}

static int param_write(const char *param, const char *val)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), PARAM_DIR "%s", param);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Become an unprivileged user, no capabilities left, with group 0 as a
 * supplementary group if @root_group. 0 or -errno.
 */
static int become_nobody(bool root_group)
{
	gid_t groups[1] = { 0 };

	if (setgroups(root_group ? 1 : 0, groups))
		return -errno;
	if (setresgid(NOBODY, NOBODY, NOBODY))
		return -errno;
	if (setresuid(NOBODY, NOBODY, NOBODY))
		return -errno;
	return 0;
}

/* ------------------------------------------------------------------------
 * FIXTURE(graph): each behaviour over ioctl and over uring_cmd
 * ------------------------------------------------------------------------
 */

FIXTURE(graph) {
	int dev;		/* /dev/dfg */
	struct io_uring ring;	/* SQE128 | CQE32; uring variant only */
	bool have_ring;
	__u64 pages0;		/* sysfs pages at setup */
	char name[DFG_NAME_MAX];/* a fresh graph name */
};

FIXTURE_VARIANT(graph) {
	enum dfg_path path;
};

FIXTURE_VARIANT_ADD(graph, ioctl) {
	.path = DFG_PATH_IOCTL,
};

FIXTURE_VARIANT_ADD(graph, uring) {
	.path = DFG_PATH_INLINE,
};

FIXTURE_SETUP(graph)
{
	struct dfg_info info;

	self->dev = sys_dfg_open();
	ASSERT_LE(0, self->dev) {
		TH_LOG("open %s: %s", DFG_DEV_PATH, strerror(-self->dev));
	}
	ASSERT_EQ(0, dfg_get_info(self->dev, &info));
	if (!(info.features & DFG_F_GRAPH))
		SKIP(return, "module without DFG_F_GRAPH");
	if (variant->path != DFG_PATH_IOCTL) {
		ASSERT_EQ(0, dfg_ring_init(&self->ring, 16));
		self->have_ring = true;
	}
	self->pages0 = total_pages();
	uniq_name(self->name, sizeof(self->name), "g");
}

FIXTURE_TEARDOWN(graph)
{
	if (self->have_ring)
		io_uring_queue_exit(&self->ring);
	close(self->dev);
	EXPECT_EQ(self->pages0, wait_pages(self->pages0));
}

#define CREATE(name, mode, flags) \
	graph_create_p(variant->path, &self->ring, self->dev, name, mode, flags)
#define ATTACH(name, flags) \
	graph_attach_p(variant->path, &self->ring, self->dev, name, flags)

TEST_F(graph, create_attach_info)
{
	struct dfg_graph_info info, info2;
	char link[64], path[64];
	int g, a, r, id;
	ssize_t n;

	g = CREATE(self->name, 0640, 0);
	ASSERT_LE(0, g) TH_LOG("create: %s", strerror(-g));
	ASSERT_EQ(0, graph_info(g, &info));
	EXPECT_EQ(sizeof(info), info.size);
	EXPECT_STREQ(self->name, info.name);
	EXPECT_EQ(getuid(), info.uid);
	EXPECT_EQ(getgid(), info.gid);
	EXPECT_EQ(0640, info.mode);
	EXPECT_EQ(0, info.rdonly);
	EXPECT_EQ(0, info.nr_objects);
	EXPECT_EQ(0, info.pages);
	EXPECT_NE(0, info.id);
	id = info.id;

	/* An anon inode file, O_RDWR, no close-on-exec without the flag. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", g);
	n = readlink(path, link, sizeof(link) - 1);
	ASSERT_LT(0, n);
	link[n] = '\0';
	EXPECT_STREQ("anon_inode:[dfg-graph]", link);
	EXPECT_EQ(O_RDWR, fcntl(g, F_GETFL) & O_ACCMODE);
	EXPECT_EQ(0, fcntl(g, F_GETFD) & FD_CLOEXEC);

	a = ATTACH(self->name, DFG_GRAPH_O_CLOEXEC);
	ASSERT_LE(0, a);
	EXPECT_EQ(FD_CLOEXEC, fcntl(a, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(0, graph_info(a, &info2));
	EXPECT_EQ(id, info2.id);
	EXPECT_EQ(0, info2.rdonly);

	r = ATTACH(self->name, DFG_GRAPH_O_RDONLY);
	ASSERT_LE(0, r);
	EXPECT_EQ(O_RDONLY, fcntl(r, F_GETFL) & O_ACCMODE);
	ASSERT_EQ(0, graph_info(r, &info2));
	EXPECT_EQ(1, info2.rdonly);

	/* sysfs mirrors it. */
	EXPECT_EQ(3, graph_attr(id, "attached"));
	EXPECT_EQ(0, graph_attr(id, "objects"));
	EXPECT_EQ(getuid(), graph_attr(id, "uid"));
	{
		char buf[80], attr[64];

		snprintf(attr, sizeof(attr), "graphs/%d/name", id);
		ASSERT_EQ(0, dfg_sysfs_read(attr, buf, sizeof(buf)));
		EXPECT_STREQ(self->name, buf);
		snprintf(attr, sizeof(attr), "graphs/%d/mode", id);
		ASSERT_EQ(0, dfg_sysfs_read(attr, buf, sizeof(buf)));
		EXPECT_STREQ("0640", buf);
	}

	/* GRAPH_INFO rejects a wrong size and nonzero input. */
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info) - 8;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(g, DFG_IOC_GRAPH_INFO, &info));
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, sys_dfg_ioctl(g, DFG_IOC_GRAPH_INFO, &info));

	close(a);
	close(r);
	EXPECT_EQ(1, graph_attr(id, "attached"));
	close(g);
	EXPECT_TRUE(wait_dir_gone(id));
	/* The name is free again. */
	g = CREATE(self->name, 0600, 0);
	ASSERT_LE(0, g);
	close(g);
}

TEST_F(graph, name_clash)
{
	int g = CREATE(self->name, 0600, 0);

	ASSERT_LE(0, g);
	EXPECT_EQ(-EEXIST, CREATE(self->name, 0600, 0));
	EXPECT_EQ(-EEXIST, CREATE(self->name, 0666, DFG_GRAPH_O_CLOEXEC));
	close(g);
}

TEST_F(graph, bad_args)
{
	static const char *const bad[] = {
		"", "a/b", "a b", "caf\xc3\xa9", "x\n", "*",
	};
	struct dfg_graph_open o;
	char longname[DFG_NAME_MAX + 1];
	unsigned int i;
	int g;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_EQ(-EINVAL, CREATE(bad[i], 0600, 0)) TH_LOG("bad name %u", i);

	/* 63 bytes is the longest name; 64 without a NUL is refused. */
	memset(longname, 'n', sizeof(longname));
	longname[DFG_NAME_MAX - 1] = '\0';
	snprintf(longname, 10, "%d", getpid());
	longname[strlen(longname)] = 'n';
	g = CREATE(longname, 0600, 0);
	EXPECT_LE(0, g);
	if (g >= 0)
		close(g);
	o = open_args("x", 0600, 0);
	memset(o.name, 'y', sizeof(o.name));
	EXPECT_EQ(-EINVAL, run(variant->path, &self->ring, self->dev,
			       DFG_IOC_GRAPH_CREATE, &o, sizeof(o)));

	/* mode, flags, size, reserved */
	EXPECT_EQ(-EINVAL, CREATE(self->name, 01000, 0));
	EXPECT_EQ(-EINVAL, CREATE(self->name, 0600, DFG_GRAPH_O_RDONLY));
	EXPECT_EQ(-EINVAL, CREATE(self->name, 0600, 0x80));
	o = open_args(self->name, 0600, 0);
	o.size = sizeof(o) + 8;
	EXPECT_EQ(-EINVAL, run(variant->path, &self->ring, self->dev,
			       DFG_IOC_GRAPH_CREATE, &o, sizeof(o)));
	o = open_args(self->name, 0600, 0);
	o.reserved0 = 1;
	EXPECT_EQ(-EINVAL, run(variant->path, &self->ring, self->dev,
			       DFG_IOC_GRAPH_CREATE, &o, sizeof(o)));
	o = open_args(self->name, 0600, 0);
	o.reserved[3] = 1;
	EXPECT_EQ(-EINVAL, run(variant->path, &self->ring, self->dev,
			       DFG_IOC_GRAPH_CREATE, &o, sizeof(o)));

	g = CREATE(self->name, 0600, 0);
	ASSERT_LE(0, g);
	/* ATTACH: mode must be zero, flags known. */
	o = open_args(self->name, 0600, 0);
	EXPECT_EQ(-EINVAL, run(variant->path, &self->ring, self->dev,
			       DFG_IOC_GRAPH_ATTACH, &o, sizeof(o)));
	EXPECT_EQ(-EINVAL, ATTACH(self->name, 0x4));
	EXPECT_EQ(-EINVAL, ATTACH("no/such", 0));
	close(g);
}

TEST_F(graph, enoent)
{
	EXPECT_EQ(-ENOENT, ATTACH(self->name, 0));
	EXPECT_EQ(-ENOENT, ATTACH(self->name, DFG_GRAPH_O_RDONLY));
}

/* A command for the other kind of file: -EBADFD, both ways. */
TEST_F(graph, wrong_file)
{
	struct dfg_graph_info gi = { .size = sizeof(gi) };
	struct dfg_info info = { .size = sizeof(info) };
	struct dfg_arena_create a = { .size = PAGE };
	struct dfg_nop nop = { .value = 1 };
	struct dfg_graph_open o = open_args(self->name, 0600, 0);
	int g;

	EXPECT_EQ(-EBADFD, run(variant->path, &self->ring, self->dev,
			       DFG_IOC_GRAPH_INFO, &gi, sizeof(gi)));
	EXPECT_EQ(-EBADFD, run(variant->path, &self->ring, self->dev,
			       DFG_IOC_ARENA_CREATE, &a, sizeof(a)));
	g = CREATE(self->name, 0600, 0);
	ASSERT_LE(0, g);
	EXPECT_EQ(-EBADFD, run(variant->path, &self->ring, g,
			       DFG_IOC_GET_INFO, &info, sizeof(info)));
	EXPECT_EQ(-EBADFD, run(variant->path, &self->ring, g,
			       DFG_IOC_NOP, &nop, sizeof(nop)));
	EXPECT_EQ(-EBADFD, run(variant->path, &self->ring, g,
			       DFG_IOC_GRAPH_CREATE, &o, sizeof(o)));
	/* Holes and unknown numbers stay -EOPNOTSUPP on both kinds. */
	EXPECT_EQ(-EOPNOTSUPP, sys_dfg_ioctl(g, _IOWR(DFG_IOC_MAGIC, 0x05,
						      struct dfg_nop), &nop));
	EXPECT_EQ(-EOPNOTSUPP, sys_dfg_ioctl(self->dev,
					     _IOWR(DFG_IOC_MAGIC, 0x15,
						   struct dfg_nop), &nop));
	EXPECT_EQ(-EOPNOTSUPP, sys_dfg_ioctl(g, _IOWR(DFG_IOC_MAGIC, 0x21,
						      struct dfg_nop), &nop));
	close(g);
}

TEST_F(graph, arena_create_map_fork)
{
	struct dfg_arena_create a = { .size = 3 * PAGE + 1 };
	struct dfg_graph_info info;
	__u64 res2 = 0;
	pid_t pid;
	int g, status, ret;
	char *p;

	g = CREATE(self->name, 0600, 0);
	ASSERT_LE(0, g);
	ret = dfg_cmd(variant->path, g, &self->ring, DFG_IOC_ARENA_CREATE,
		      &a, sizeof(a), &res2);
	ASSERT_EQ(1, ret) TH_LOG("arena create: %s", strerror(-ret));
	if (variant->path == DFG_PATH_IOCTL) {
		EXPECT_EQ(4 * PAGE, a.size);
		EXPECT_EQ(1, a.id);
		EXPECT_EQ(DFG_MMAP_OFFSET(1), a.mmap_offset);
	} else {
		EXPECT_EQ(4 * PAGE, res2);	/* inline: size in res2 */
	}
	ASSERT_EQ(0, graph_info(g, &info));
	EXPECT_EQ(1, info.nr_objects);
	EXPECT_EQ(4, info.pages);
	EXPECT_EQ(4, graph_attr(info.id, "pages"));
	EXPECT_EQ(1, graph_attr(info.id, "objects"));
	EXPECT_EQ(self->pages0 + 4, total_pages());

	/* A second arena gets the next id. */
	ASSERT_EQ(2, arena_create(g, 1, &a));
	EXPECT_EQ(PAGE, a.size);

	/* graphs/<id>/arena<aid>/: size in bytes (page-rounded), pages. */
	EXPECT_EQ(4 * PAGE, arena_attr(info.id, 1, "size"));
	EXPECT_EQ(4, arena_attr(info.id, 1, "pages"));
	EXPECT_EQ(PAGE, arena_attr(info.id, 2, "size"));
	EXPECT_EQ(1, arena_attr(info.id, 2, "pages"));
	EXPECT_EQ(-ENOENT, arena_attr(info.id, 3, "size"));

	p = map_arena(g, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		      DFG_MMAP_OFFSET(1));
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, p[0]);
	EXPECT_EQ(0, p[4 * PAGE - 1]);	/* zeroed */
	strcpy(p + PAGE, "from parent");

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* The peer maps through the inherited descriptor. */
		char *q = map_arena(g, 4 * PAGE, PROT_READ | PROT_WRITE,
				    MAP_SHARED, DFG_MMAP_OFFSET(1));

		if (q == MAP_FAILED || strcmp(q + PAGE, "from parent"))
			_exit(1);
		strcpy(q + 3 * PAGE, "from child");
		/* The inherited mapping is the same memory too. */
		if (strcmp(p + 3 * PAGE, "from child"))
			_exit(2);
		_exit(0);
	}
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, 10000));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_STREQ("from child", p + 3 * PAGE);

	/* MADV_DONTNEED drops the ptes; the data comes back by fault. */
	EXPECT_EQ(0, madvise(p, 4 * PAGE, MADV_DONTNEED));
	EXPECT_STREQ("from parent", p + PAGE);

	/* mremap cannot grow it (VM_DONTEXPAND). */
	EXPECT_EQ(MAP_FAILED, mremap(p, 4 * PAGE, 8 * PAGE, MREMAP_MAYMOVE));
	EXPECT_EQ(0, munmap(p, 4 * PAGE));
	close(g);

	/* Graph death removes the arena directories with the graph's. */
	EXPECT_TRUE(arena_dir_gone(info.id, 1));
	EXPECT_TRUE(arena_dir_gone(info.id, 2));
	EXPECT_EQ(-ENOENT, arena_attr(info.id, 1, "size"));
}

TEST_F(graph, arena_bad_args)
{
	struct dfg_arena_create a;
	int g = CREATE(self->name, 0600, 0);

	ASSERT_LE(0, g);
	memset(&a, 0, sizeof(a));
	EXPECT_EQ(-EINVAL, run(variant->path, &self->ring, g,
			       DFG_IOC_ARENA_CREATE, &a, sizeof(a)));
	a.size = PAGE;
	a.flags = 1;
	EXPECT_EQ(-EINVAL, run(variant->path, &self->ring, g,
			       DFG_IOC_ARENA_CREATE, &a, sizeof(a)));
	a.flags = 0;
	a.id = 3;
	EXPECT_EQ(-EINVAL, run(variant->path, &self->ring, g,
			       DFG_IOC_ARENA_CREATE, &a, sizeof(a)));
	a.id = 0;
	a.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, run(variant->path, &self->ring, g,
			       DFG_IOC_ARENA_CREATE, &a, sizeof(a)));
	a.reserved[1] = 0;
	a.size = ~0ULL;
	EXPECT_EQ(-EFBIG, run(variant->path, &self->ring, g,
			      DFG_IOC_ARENA_CREATE, &a, sizeof(a)));
	close(g);
}

TEST_F(graph, mmap_errors)
{
	struct dfg_arena_create a;
	int g = CREATE(self->name, 0600, 0);
	void *p;

	ASSERT_LE(0, g);
	ASSERT_EQ(1, arena_create(g, 2 * PAGE, &a));

	/* Past the size. */
	p = map_arena(g, 3 * PAGE, PROT_READ, MAP_SHARED, a.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* Offsets that are not DFG_MMAP_OFFSET() of a live arena. */
	p = map_arena(g, PAGE, PROT_READ, MAP_SHARED, a.mmap_offset + PAGE);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = map_arena(g, PAGE, PROT_READ, MAP_SHARED, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = map_arena(g, PAGE, PROT_READ, MAP_SHARED, DFG_MMAP_OFFSET(2));
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* Private mappings. */
	p = map_arena(g, PAGE, PROT_READ, MAP_PRIVATE, a.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = map_arena(g, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		      a.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* /dev/dfg itself cannot be mapped. */
	p = map_arena(self->dev, PAGE, PROT_READ, MAP_SHARED, a.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);

	/* A part of the arena is fine. */
	p = map_arena(g, PAGE, PROT_READ, MAP_SHARED, a.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	munmap(p, PAGE);
	close(g);
}

TEST_F(graph, rdonly)
{
	struct dfg_arena_create a;
	int g, r;
	char *w, *p;

	g = CREATE(self->name, 0600, 0);
	ASSERT_LE(0, g);
	ASSERT_EQ(1, arena_create(g, PAGE, &a));
	w = map_arena(g, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		      a.mmap_offset);
	ASSERT_NE(MAP_FAILED, w);
	strcpy(w, "hello");

	r = ATTACH(self->name, DFG_GRAPH_O_RDONLY);
	ASSERT_LE(0, r);
	p = map_arena(r, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		      a.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);

	p = map_arena(r, PAGE, PROT_READ, MAP_SHARED, a.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_STREQ("hello", p);
	EXPECT_EQ(-1, mprotect(p, PAGE, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	strcpy(w, "again");
	EXPECT_STREQ("again", p);

	memset(&a, 0, sizeof(a));
	a.size = PAGE;
	EXPECT_EQ(-EACCES, run(variant->path, &self->ring, r,
			       DFG_IOC_ARENA_CREATE, &a, sizeof(a)));
	munmap(p, PAGE);
	munmap(w, PAGE);
	close(r);
	close(g);
}

/* The graph outlives close() while mapped and dies at munmap. */
TEST_F(graph, lives_while_mapped)
{
	struct dfg_arena_create a;
	int g, id;
	char *p;

	g = CREATE(self->name, 0600, 0);
	ASSERT_LE(0, g);
	id = graph_id(g);
	ASSERT_LT(0, id);
	ASSERT_EQ(1, arena_create(g, 8 * PAGE, &a));
	p = map_arena(g, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		      a.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	close(g);

	usleep(20000);
	EXPECT_TRUE(graph_dir_exists(id));
	EXPECT_EQ(8, graph_attr(id, "pages"));
	EXPECT_EQ(self->pages0 + 8, total_pages());
	/* Still attached by name, and the data is the same memory. */
	p[5] = 42;
	g = ATTACH(self->name, DFG_GRAPH_O_RDONLY);
	ASSERT_LE(0, g);
	{
		char *q = map_arena(g, PAGE, PROT_READ, MAP_SHARED,
				    a.mmap_offset);

		ASSERT_NE(MAP_FAILED, q);
		EXPECT_EQ(42, q[5]);
		munmap(q, PAGE);
	}
	close(g);
	EXPECT_EQ(-EEXIST, CREATE(self->name, 0600, 0));

	/* A split vma keeps it alive until its last piece goes. */
	EXPECT_EQ(0, munmap(p, 4 * PAGE));
	EXPECT_TRUE(graph_dir_exists(id));
	EXPECT_EQ(0, munmap(p + 4 * PAGE, 4 * PAGE));
	EXPECT_TRUE(wait_dir_gone(id));
	EXPECT_EQ(self->pages0, wait_pages(self->pages0));

	g = CREATE(self->name, 0600, 0);
	ASSERT_LE(0, g);
	close(g);
}

/* 1000 create/arena/map/destroy cycles leave nothing behind. */
TEST_F(graph, cycles)
{
	struct dfg_arena_create a;
	int i, g;
	char *p;

	for (i = 0; i < 1000; i++) {
		g = CREATE(self->name, 0600, DFG_GRAPH_O_CLOEXEC);
		ASSERT_LE(0, g) TH_LOG("cycle %d: %s", i, strerror(-g));
		ASSERT_EQ(1, arena_create(g, 2 * PAGE, &a));
		p = map_arena(g, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
			      a.mmap_offset);
		ASSERT_NE(MAP_FAILED, p);
		p[i % (2 * PAGE)] = 1;
		if (i & 1) {
			close(g);
			munmap(p, 2 * PAGE);
		} else {
			munmap(p, 2 * PAGE);
			close(g);
		}
	}
	EXPECT_EQ(self->pages0, wait_pages(self->pages0));
}

/* ------------------------------------------------------------------------
 * Other processes, other users, module parameters
 * ------------------------------------------------------------------------
 */

/* Permission bits checked like System V IPC, by an unprivileged child. */
TEST(permissions)
{
	char n_none[DFG_NAME_MAX], n_ro[DFG_NAME_MAX], n_rw[DFG_NAME_MAX];
	char n_grp[DFG_NAME_MAX];
	int dev, g1, g2, g3, g4, status;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root to switch users");
	dev = sys_dfg_open();
	ASSERT_LE(0, dev);
	uniq_name(n_none, sizeof(n_none), "p0");
	uniq_name(n_ro, sizeof(n_ro), "p4");
	uniq_name(n_rw, sizeof(n_rw), "p6");
	uniq_name(n_grp, sizeof(n_grp), "pg");
	g1 = graph_create(dev, n_none, 0600, 0);	/* nothing for others */
	g2 = graph_create(dev, n_ro, 0644, 0);		/* others read */
	g3 = graph_create(dev, n_rw, 0666, 0);		/* all read-write */
	g4 = graph_create(dev, n_grp, 0060, 0);	/* group only (gid 0) */
	ASSERT_LE(0, g1);
	ASSERT_LE(0, g2);
	ASSERT_LE(0, g3);
	ASSERT_LE(0, g4);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd, rc = 0;

		if (become_nobody(true))
			_exit(100);
		/* owner bits of root's graph don't apply; others' do. */
		if (graph_attach(dev, n_none, DFG_GRAPH_O_RDONLY) != -EACCES)
			rc |= 1;
		if (graph_attach(dev, n_none, 0) != -EACCES)
			rc |= 2;
		fd = graph_attach(dev, n_ro, DFG_GRAPH_O_RDONLY);
		if (fd < 0)
			rc |= 4;
		close(fd);
		if (graph_attach(dev, n_ro, 0) != -EACCES)
			rc |= 8;
		fd = graph_attach(dev, n_rw, 0);
		if (fd < 0)
			rc |= 16;
		close(fd);
		/* In group 0 (supplementary): group bits apply, not other. */
		if (graph_attach(dev, n_ro, 0) != -EACCES)
			rc |= 64;
		fd = graph_attach(dev, n_grp, 0);
		if (fd < 0)
			rc |= 32;
		close(fd);
		_exit(rc);
	}
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, 10000));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* Without the group: group bits of 0060 give nothing. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (become_nobody(false))
			_exit(100);
		_exit(graph_attach(dev, n_grp, DFG_GRAPH_O_RDONLY) == -EACCES ?
		      0 : 1);
	}
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, 10000));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* Root keeps access through CAP_IPC_OWNER, whatever the mode. */
	{
		char n0[DFG_NAME_MAX];
		int z, fd;

		uniq_name(n0, sizeof(n0), "pz");
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			if (become_nobody(false))
				_exit(100);
			/* nobody owns this one, mode 0 */
			z = graph_create(dev, n0, 0, 0);
			if (z < 0)
				_exit(1);
			if (graph_attach(dev, n0, DFG_GRAPH_O_RDONLY) !=
			    -EACCES)
				_exit(2);
			pause();
			_exit(0);
		}
		usleep(100000);
		fd = graph_attach(dev, n0, 0);
		EXPECT_LE(0, fd);
		if (fd >= 0) {
			struct dfg_graph_info info;

			ASSERT_EQ(0, graph_info(fd, &info));
			EXPECT_EQ(NOBODY, info.uid);
			EXPECT_EQ(NOBODY, info.gid);
			close(fd);
		}
		dfg_kill_pid(pid);
	}
	close(g1);
	close(g2);
	close(g3);
	close(g4);
	close(dev);
}

static int send_fd(int sock, int fd)
{
	char data = 'g';
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char data;
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -errno;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * A descriptor passed with SCM_RIGHTS to an unprivileged process that could
 * not attach by name still works, and keeps the graph alive after the
 * creator closed it.
 */
TEST(scm_rights)
{
	char name[DFG_NAME_MAX];
	struct dfg_arena_create a;
	int sv[2], dev, g, id, status;
	char *p;
	pid_t pid;

	dev = sys_dfg_open();
	ASSERT_LE(0, dev);
	uniq_name(name, sizeof(name), "scm");
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct dfg_graph_info info;
		int fd;
		char *q;

		close(sv[0]);
		if (geteuid() == 0 && become_nobody(false))
			_exit(100);
		fd = recv_fd(sv[1]);
		if (fd < 0)
			_exit(1);
		if (graph_info(fd, &info) || strcmp(info.name, name))
			_exit(2);
		q = map_arena(fd, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
			      DFG_MMAP_OFFSET(1));
		if (q == MAP_FAILED)
			_exit(3);
		strcpy(q, "via scm");
		/* Tell the parent, then hold the graph alone a while. */
		if (write(sv[1], "k", 1) != 1)
			_exit(4);
		close(fd);
		usleep(200000);
		if (strcmp(q, "via scm"))
			_exit(5);
		_exit(0);
	}
	close(sv[1]);
	g = graph_create(dev, name, 0600, 0);
	ASSERT_LE(0, g);
	id = graph_id(g);
	ASSERT_EQ(1, arena_create(g, PAGE, &a));
	ASSERT_EQ(0, send_fd(sv[0], g));
	{
		char k;

		ASSERT_EQ(1, read(sv[0], &k, 1));
	}
	p = map_arena(g, PAGE, PROT_READ, MAP_SHARED, a.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_STREQ("via scm", p);
	munmap(p, PAGE);
	close(g);
	EXPECT_TRUE(graph_dir_exists(id));	/* the child's mapping */
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, 10000));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_TRUE(wait_dir_gone(id));
	close(sv[0]);
	close(dev);
}

/* Holders killed with SIGKILL: everything goes, pages back to 0. */
TEST(kill9)
{
	char name[DFG_NAME_MAX];
	int dev, id = -1, i, status, pfd[2];
	__u64 pages0 = total_pages();
	pid_t pids[3];

	dev = sys_dfg_open();
	ASSERT_LE(0, dev);
	uniq_name(name, sizeof(name), "kill");
	ASSERT_EQ(0, pipe(pfd));

	for (i = 0; i < 3; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0) {
			struct dfg_arena_create a;
			int g, n = i;
			char *p;

			close(pfd[0]);
			if (i == 0)
				g = graph_create(dev, name, 0600, 0);
			else
				g = graph_attach(dev, name, 0);
			if (g < 0)
				_exit(1);
			if (i == 0 && arena_create(g, 16 * PAGE, &a) != 1)
				_exit(2);
			p = map_arena(g, 16 * PAGE, PROT_READ | PROT_WRITE,
				      MAP_SHARED, DFG_MMAP_OFFSET(1));
			if (p == MAP_FAILED)
				_exit(3);
			memset(p, i + 1, 16 * PAGE);
			if (i == 0)
				n = graph_id(g);
			/* Keep the fd open in two, closed in one. */
			if (i == 1)
				close(g);
			if (write(pfd[1], &n, sizeof(n)) != sizeof(n))
				_exit(4);
			for (;;)
				pause();
		}
		{
			int n;

			ASSERT_EQ(sizeof(n), read(pfd[0], &n, sizeof(n)));
			if (i == 0)
				id = n;
		}
	}
	EXPECT_EQ(pages0 + 16, total_pages());
	/* Open files, not descriptors: child 1's mapping holds its file. */
	EXPECT_EQ(3, graph_attr(id, "attached"));
	for (i = 0; i < 3; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, dfg_wait_pid(pids[i], &status, 10000));
	EXPECT_TRUE(wait_dir_gone(id));
	EXPECT_EQ(pages0, wait_pages(pages0));
	EXPECT_EQ(-ENOENT, graph_attach(dev, name, 0));
	close(pfd[0]);
	close(pfd[1]);
	close(dev);
}

/* dfg.max_arena_mb: -EFBIG; dfg.max_total_mb: -ENOMEM. */
TEST(module_limits)
{
	char name[DFG_NAME_MAX], total[32];
	struct dfg_arena_create a;
	int dev, g, ret, fd;
	ssize_t n;

	if (geteuid() != 0)
		SKIP(return, "needs root for module parameters");
	dev = sys_dfg_open();
	ASSERT_LE(0, dev);
	uniq_name(name, sizeof(name), "lim");
	g = graph_create(dev, name, 0600, 0);
	ASSERT_LE(0, g);

	ASSERT_EQ(0, param_write("max_arena_mb", "1"));
	EXPECT_EQ(-EFBIG, arena_create(g, (1 << 20) + 1, &a));
	EXPECT_EQ(1, arena_create(g, 1 << 20, &a));
	ASSERT_EQ(0, param_write("max_arena_mb", "1024"));

	/* The default depends on RAM: put back what was there. */
	fd = open(PARAM_DIR "max_total_mb", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	n = read(fd, total, sizeof(total) - 1);
	close(fd);
	ASSERT_LT(0, n);
	total[n] = '\0';
	ret = param_write("max_total_mb", "2");
	ASSERT_EQ(0, ret);
	/* total_pages may hold other arenas: none here (tests run serially). */
	EXPECT_EQ(-ENOMEM, arena_create(g, (1 << 20) + PAGE, &a));
	EXPECT_EQ(2, arena_create(g, 1 << 20, &a));
	EXPECT_EQ(-ENOMEM, arena_create(g, PAGE, &a));
	ASSERT_EQ(0, param_write("max_total_mb", total));
	EXPECT_EQ(3, arena_create(g, PAGE, &a));
	EXPECT_EQ(-EINVAL, param_write("max_total_mb", "0"));

	/* dfg.max_graphs: -ENOSPC. */
	{
		char n2[DFG_NAME_MAX];
		char cur[16];
		int g2;

		snprintf(cur, sizeof(cur), "%d", 1);
		ASSERT_EQ(0, param_write("max_graphs", cur));
		uniq_name(n2, sizeof(n2), "lim");
		EXPECT_EQ(-ENOSPC, graph_create(dev, n2, 0600, 0));
		ASSERT_EQ(0, param_write("max_graphs", "1024"));
		g2 = graph_create(dev, n2, 0600, 0);
		EXPECT_LE(0, g2);
		close(g2);
	}
	close(g);
	close(dev);
	EXPECT_EQ(0, wait_pages(0));
}

/*
 * RLIMIT_MEMLOCK of an unprivileged creator: -EAGAIN past it, and the
 * charge comes back when the graph dies.
 */
TEST(memlock)
{
	char name[DFG_NAME_MAX];
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
		struct dfg_arena_create a;
		int round, g;

		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(100);
		if (become_nobody(false))
			_exit(101);
		for (round = 0; round < 2; round++) {
			g = graph_create(dev, name, 0600, 0);
			if (g < 0)
				_exit(1);
			if (arena_create(g, 128 * 1024, &a) != -EAGAIN)
				_exit(2);
			if (arena_create(g, 48 * 1024, &a) != 1)
				_exit(3);
			if (arena_create(g, 32 * 1024, &a) != -EAGAIN)
				_exit(4);
			if (arena_create(g, 16 * 1024, &a) != 2)
				_exit(5);
			/* Graph death gives the user's 64 KiB back. */
			close(g);
		}
		_exit(0);
	}
	ASSERT_EQ(0, dfg_wait_pid(pid, &status, 10000));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child step %d",
						 WEXITSTATUS(status));
	close(dev);
	EXPECT_EQ(0, wait_pages(0));
}

TEST_HARNESS_MAIN
