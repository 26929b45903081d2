// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user limits and the memory bound (kmod/limits.c, kmod/arena.c).
 *
 * Unprivileged users are children that drop to UID_A / UID_B (setresuid,
 * which clears every capability): each one hits its own dfg.max_user_*
 * limit with -EDQUOT while another user and root still create; their
 * counts in /sys/kernel/dfg/users/<uid>/ go back to zero (the directory
 * goes) after kill -9. Unprivileged users together stop at the module-wide
 * bounds less dfg.reserve_pct percent (-ENOSPC for graphs, -ENOMEM for
 * memory), root goes on to the bound. Root filling the memory bound with
 * arenas leaves the machine able to allocate without an OOM kill, and
 * arena pages a process maps count in its RSS.
 *
 * The forced OOM (DFG_TEST_OOM=1 only: the OOM killer's report has a call
 * trace, which tools/vm/dfg-vm counts as a kernel report): a holder maps
 * arenas up to the bound, four ordinary processes allocate past what is
 * left; the first victim must be the holder.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <grp.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "dfg_sys.h"
#include "kselftest_harness.h"

#define PAGE		4096UL
#define UID_A		60001
#define UID_B		60002
#define MiB		(1UL << 20)

static int name_seq;

static void uniq_name(char *buf, size_t size, const char *tag)
{
	snprintf(buf, size, "%s-%d-%d", tag, getpid(), name_seq++);
}

static int param_set(const char *name, unsigned long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lu", v);
	return dfg_param_rw(name, buf, 0, true);
}

static unsigned long param_get(const char *name)
{
	char buf[32];

	if (dfg_param_rw(name, buf, sizeof(buf), false))
		return ~0UL;
	return strtoul(buf, NULL, 10);
}

/* Parameters a test changes, restored by its teardown. */
static const char * const saved_params[] = {
	"max_graphs", "max_total_mb", "reserve_pct", "max_user_graphs",
	"max_user_arenas", "max_user_regions", "max_user_chans",
	"max_user_teams", "max_user_sets",
};

#define NR_SAVED	ARRAY_SIZE(saved_params)

static void params_save(unsigned long *v)
{
	size_t i;

	for (i = 0; i < NR_SAVED; i++)
		v[i] = param_get(saved_params[i]);
}

static void params_restore(const unsigned long *v)
{
	size_t i;

	for (i = 0; i < NR_SAVED; i++)
		if (v[i] != ~0UL)
			param_set(saved_params[i], v[i]);
}

static int graph_create(int dev, const char *name)
{
	struct dfg_graph_open o = {
		.size = sizeof(o),
		.flags = DFG_GRAPH_O_CLOEXEC,
		.mode = 0600,
	};

	snprintf(o.name, sizeof(o.name), "%s", name);
	return sys_dfg_ioctl(dev, DFG_IOC_GRAPH_CREATE, &o);
}

static int graph_new(int dev)
{
	char name[DFG_NAME_MAX];

	uniq_name(name, sizeof(name), "lim");
	return graph_create(dev, name);
}

static int arena_create(int g, __u64 size, __u32 *id)
{
	struct dfg_arena_create a = { .size = size };
	int ret = sys_dfg_ioctl(g, DFG_IOC_ARENA_CREATE, &a);

	if (ret > 0 && id)
		*id = a.id;
	return ret;
}

/* What one object of a kind needs from its graph. */
struct kind_ctx {
	int	g;
	__u32	pool;	/* an arena, for channels */
	int	sc;	/* scheduler descriptor, for sets */
};

enum { K_GRAPH, K_ARENA, K_REGION, K_CHAN, K_TEAM, K_SET, K_NR };
#define K_ARENA_MIB	K_NR	/* arenas of 1 MiB: the memory bound */

static const char * const kind_names[K_NR] = {
	"graphs", "arenas", "regions", "chans", "teams", "sets",
};

static int kind_prepare(int kind, int dev, struct kind_ctx *k)
{
	struct dfg_sched_attach sa = { 0 };
	int ret;

	if (kind == K_GRAPH)
		return 0;	/* kind_make() makes the graphs */
	k->g = graph_new(dev);
	if (k->g < 0)
		return k->g;
	if (kind == K_CHAN) {
		ret = arena_create(k->g, PAGE, &k->pool);
		if (ret < 0)
			return ret;
	}
	if (kind == K_SET) {
		k->sc = sys_dfg_ioctl(k->g, DFG_IOC_SCHED_ATTACH, &sa);
		if (k->sc < 0)
			return k->sc;
	}
	return 0;
}

/* One more object of @kind; >= 0 or -errno. Descriptors are left open. */
static int kind_make(int kind, int dev, struct kind_ctx *k)
{
	static char comp[1][DFG_NAME_MAX] = { "c" };
	struct dfg_chan_create cc = { .depth = 2, .max_producers = 1 };
	struct dfg_team_join tj = { .size = sizeof(tj), .team_size = 2 };
	struct dfg_set_register sr = {
		.size = sizeof(sr), .flags = DFG_SET_F_ROOT, .nr_comps = 1,
		.comp_names = (__u64)(uintptr_t)comp, .quantum = 16,
	};
	struct dfg_region r = { .len = PAGE };
	void *p;

	switch (kind) {
	case K_GRAPH:
		return graph_new(dev);
	case K_ARENA:
		return arena_create(k->g, PAGE, NULL);
	case K_ARENA_MIB:
		return arena_create(k->g, MiB, NULL);
	case K_REGION:
		p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		r.addr = (__u64)(uintptr_t)p;
		return sys_dfg_ioctl(k->g, DFG_IOC_REGION_EXPORT, &r);
	case K_CHAN:
		cc.pool = k->pool;
		return sys_dfg_ioctl(k->g, DFG_IOC_CHAN_CREATE, &cc);
	case K_TEAM:
		uniq_name(tj.name, sizeof(tj.name), "t");
		return sys_dfg_ioctl(k->g, DFG_IOC_TEAM_JOIN, &tj);
	case K_SET:
		uniq_name(sr.name, sizeof(sr.name), "s");
		return sys_dfg_ioctl(k->sc, DFG_IOC_SET_REGISTER, &sr);
	}
	return -EINVAL;
}

/* users/<uid>/<kind>, -1 if the directory is gone, ~0 on other errors. */
static long user_count(unsigned int uid, int kind)
{
	char name[64];
	__u64 v;
	int ret;

	snprintf(name, sizeof(name), "users/%u/%s", uid, kind_names[kind]);
	ret = dfg_sysfs_read_u64(name, &v);
	if (ret == -ENOENT)
		return -1;
	return ret ? (long)~0UL : (long)v;
}

/* Polls up to 5 s until users/<uid>/ is gone (the user holds nothing). */
static bool user_gone(unsigned int uid)
{
	char path[64];
	__u64 start = dfg_now_ns();

	snprintf(path, sizeof(path), DFG_SYSFS_DIR "/users/%u", uid);
	while (access(path, F_OK) == 0) {
		if (dfg_ms_since(start) > 5000)
			return false;
		usleep(5000);
	}
	return errno == ENOENT;
}

/* What an unprivileged child reports before it waits to be killed. */
struct child_report {
	int	setup;		/* 0 or -errno of kind_prepare()/setresuid() */
	int	made;		/* objects made before the first error */
	int	err;		/* that error */
};

/*
 * Forks a child that becomes @uid (no capabilities), makes objects of
 * @kind until one fails or @max are made, reports, and sleeps holding
 * them. Returns its pid with @rep filled, or -errno.
 */
static pid_t unpriv_child(unsigned int uid, int kind, int max,
			  struct child_report *rep)
{
	struct rlimit rl = { 256 * MiB, 256 * MiB };
	struct kind_ctx k = { 0 };
	int pfd[2], dev;
	pid_t pid;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct child_report cr = { 0 };
		int ret = 0;

		close(pfd[0]);
		/* Arena pages are charged to RLIMIT_MEMLOCK without privilege. */
		if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
		    setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			cr.setup = -errno;
		dev = cr.setup ? -1 : sys_dfg_open();
		if (!cr.setup && dev < 0)
			cr.setup = dev;
		if (!cr.setup)
			cr.setup = kind_prepare(kind, dev, &k);
		while (!cr.setup && cr.made < max) {
			ret = kind_make(kind, dev, &k);
			if (ret < 0)
				break;
			cr.made++;
		}
		cr.err = ret < 0 ? ret : 0;
		if (write(pfd[1], &cr, sizeof(cr)) != sizeof(cr))
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	n = read(pfd[0], rep, sizeof(*rep));
	close(pfd[0]);
	if (n != sizeof(*rep)) {
		dfg_kill_pid(pid);
		return -EPIPE;
	}
	return pid;
}

/* Live graphs now: entries of /sys/kernel/dfg/graphs. */
static unsigned long live_graphs(void)
{
	DIR *d = opendir(DFG_SYSFS_DIR "/graphs");
	struct dirent *e;
	unsigned long n = 0;

	if (!d)
		return ~0UL;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

FIXTURE(lim) {
	unsigned long saved[NR_SAVED];
	int dev;
	pid_t kids[8];
};

FIXTURE_SETUP(lim)
{
	if (geteuid() != 0)
		SKIP(return, "needs root: module parameters, setresuid");
	params_save(self->saved);
	self->dev = sys_dfg_open();
	ASSERT_LE(0, self->dev);
	memset(self->kids, 0, sizeof(self->kids));
}

FIXTURE_TEARDOWN(lim)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(self->kids); i++)
		dfg_kill_pid(self->kids[i]);
	if (self->dev >= 0)
		close(self->dev);
	params_restore(self->saved);
}

/*
 * One kind: UID_A holds 2 (the limit) and gets -EDQUOT for the third,
 * UID_B still makes its 2, root makes one past the limit; after kill -9
 * both users' counts are gone.
 */
static void check_kind(struct __test_metadata *_metadata,
		       FIXTURE_DATA(lim) *self, int kind)
{
	char param[64];
	struct child_report a, b;
	struct kind_ctx k = { 0 };

	snprintf(param, sizeof(param), "max_user_%s", kind_names[kind]);
	ASSERT_EQ(0, param_set(param, 2));

	self->kids[0] = unpriv_child(UID_A, kind, 3, &a);
	ASSERT_LT(0, self->kids[0]);
	ASSERT_EQ(0, a.setup);
	EXPECT_EQ(2, a.made);
	EXPECT_EQ(-EDQUOT, a.err);
	self->kids[1] = unpriv_child(UID_B, kind, 2, &b);
	ASSERT_LT(0, self->kids[1]);
	ASSERT_EQ(0, b.setup);
	EXPECT_EQ(2, b.made);
	EXPECT_EQ(0, b.err);

	/* Graph and pool count too: only the kind under test is at 2. */
	EXPECT_EQ(2, user_count(UID_A, kind));
	EXPECT_EQ(2, user_count(UID_B, kind));

	/* Root is not held to per-user limits. */
	ASSERT_EQ(0, param_set(param, 0));
	ASSERT_EQ(0, kind_prepare(kind, self->dev, &k));
	EXPECT_LE(0, kind_make(kind, self->dev, &k));
	EXPECT_LE(1, user_count(0, kind));

	dfg_kill_pid(self->kids[0]);
	self->kids[0] = 0;
	dfg_kill_pid(self->kids[1]);
	self->kids[1] = 0;
	EXPECT_TRUE(user_gone(UID_A));
	EXPECT_TRUE(user_gone(UID_B));
}

TEST_F(lim, user_graphs)
{
	check_kind(_metadata, self, K_GRAPH);
}

TEST_F(lim, user_arenas)
{
	check_kind(_metadata, self, K_ARENA);
}

TEST_F(lim, user_regions)
{
	check_kind(_metadata, self, K_REGION);
}

TEST_F(lim, user_chans)
{
	check_kind(_metadata, self, K_CHAN);
}

TEST_F(lim, user_teams)
{
	check_kind(_metadata, self, K_TEAM);
}

TEST_F(lim, user_sets)
{
	check_kind(_metadata, self, K_SET);
}

/* Root's own count follows its graphs: up on create, down on close. */
TEST_F(lim, root_counted)
{
	long before = user_count(0, K_GRAPH), after;
	int g;

	/* -1: no directory, root held nothing (or no longer does). */
	before = before < 0 ? 0 : before;
	g = graph_new(self->dev);
	ASSERT_LE(0, g);
	EXPECT_EQ(before + 1, user_count(0, K_GRAPH));
	close(g);
	after = user_count(0, K_GRAPH);
	EXPECT_EQ(before, after < 0 ? 0 : after);
}

/*
 * Unprivileged users together stop at dfg.max_graphs less the reserve
 * (-ENOSPC), root goes on to dfg.max_graphs.
 */
TEST_F(lim, graph_reserve)
{
	unsigned long live = live_graphs(), limit;
	struct child_report a, b;
	int g, n = 0;

	/* Half reserved, and the share is 4 more than are alive now. */
	ASSERT_NE(~0UL, live);
	limit = 2 * (live + 4);
	ASSERT_EQ(0, param_set("reserve_pct", 50));
	ASSERT_EQ(0, param_set("max_graphs", limit));
	ASSERT_EQ(0, param_set("max_user_graphs", 3));

	/* A takes 3 (its own limit), B the one left of the share. */
	self->kids[0] = unpriv_child(UID_A, K_GRAPH, 100, &a);
	ASSERT_LT(0, self->kids[0]);
	ASSERT_EQ(0, a.setup);
	EXPECT_EQ(3, a.made);
	EXPECT_EQ(-EDQUOT, a.err);
	self->kids[1] = unpriv_child(UID_B, K_GRAPH, 100, &b);
	ASSERT_LT(0, self->kids[1]);
	ASSERT_EQ(0, b.setup);
	EXPECT_EQ(1, b.made);
	EXPECT_EQ(-ENOSPC, b.err);
	EXPECT_EQ(live + 4, live_graphs());

	/* Root: the reserved half. */
	while ((g = graph_new(self->dev)) >= 0)
		n++;
	EXPECT_EQ(-ENOSPC, g);
	EXPECT_EQ((int)(live + 4), n);
	EXPECT_EQ(limit, live_graphs());
}

/* The limit parameters' ranges. */
TEST_F(lim, param_ranges)
{
	EXPECT_EQ(-EINVAL, param_set("max_user_graphs", 1048577));
	EXPECT_EQ(0, param_set("max_user_graphs", 0));
	EXPECT_EQ(-EINVAL, param_set("reserve_pct", 51));
	EXPECT_EQ(0, param_set("reserve_pct", 0));
	EXPECT_EQ(-EINVAL, param_set("max_total_mb", 0));
}

static unsigned long meminfo_kb(const char *key)
{
	char line[256];
	unsigned long v = 0;
	size_t len = strlen(key);
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':') {
			v = strtoul(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* dfg.max_total_mb unless set at load: half of RAM (MemTotal). */
TEST_F(lim, total_default)
{
	EXPECT_EQ((meminfo_kb("MemTotal") >> 10) / 2, param_get("max_total_mb"));
}

/*
 * Unprivileged users stop at max_total_mb less the reserve (-ENOMEM);
 * root goes on to the bound.
 */
TEST_F(lim, memory_reserve)
{
	struct child_report a;
	int g, n;

	if (dfg_sysfs_u64("pages") != 0)
		SKIP(return, "arenas of others are alive");
	ASSERT_EQ(0, param_set("max_total_mb", 8));
	ASSERT_EQ(0, param_set("reserve_pct", 10));
	/* Unprivileged: 8 MiB less 10% is 7.2 MiB, so seven of 1 MiB. */
	self->kids[0] = unpriv_child(UID_A, K_ARENA_MIB, 100, &a);
	ASSERT_LT(0, self->kids[0]);
	ASSERT_EQ(0, a.setup);
	n = a.made;
	EXPECT_EQ(7, n);
	EXPECT_EQ(-ENOMEM, a.err);

	g = graph_new(self->dev);
	ASSERT_LE(0, g);
	EXPECT_LT(0, arena_create(g, MiB, NULL));	/* 8 MiB: the bound */
	EXPECT_EQ(-ENOMEM, arena_create(g, PAGE, NULL));
	close(g);
}

/* The RSS of this process (file and shmem pages included), in kB. */
static unsigned long rss_kb(void)
{
	char line[256];
	unsigned long v = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6)) {
			v = strtoul(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* Arena pages a process maps are in its RSS, so the OOM killer sees them. */
TEST_F(lim, arena_rss)
{
	const size_t size = 32 * MiB;
	unsigned long before, mapped;
	__u32 id;
	char *p;
	int g;

	g = graph_new(self->dev);
	ASSERT_LE(0, g);
	ASSERT_LT(0, arena_create(g, size, &id));
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, g,
		 DFG_MMAP_OFFSET(id));
	ASSERT_NE(MAP_FAILED, p);
	before = rss_kb();
	memset(p, 1, size);
	mapped = rss_kb();
	EXPECT_LE(before + (size >> 10) - 256, mapped);
	munmap(p, size);
	EXPECT_GE(mapped - (size >> 10) + 256, rss_kb());
	close(g);
}

/* Allocates and touches @bytes of anonymous memory in a child: 0 if done. */
static int ordinary_alloc(size_t bytes)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			_exit(1);
		memset(p, 1, bytes);
		_exit(0);
	}
	if (dfg_wait_pid(pid, &status, 120000)) {
		dfg_kill_pid(pid);
		return -ETIME;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * Root creating 64 MiB arenas until refusal stays within max_total_mb and
 * leaves the machine usable: an ordinary process then allocates, and the
 * OOM killer stays silent.
 */
TEST_F_TIMEOUT(lim, fill_until_refusal, 300)
{
	unsigned long bound = param_get("max_total_mb");
	int ooms = dfg_klog_count("invoked oom-killer");
	int g, ret, n = 0;

	ASSERT_LE(0, ooms);
	g = graph_new(self->dev);
	ASSERT_LE(0, g);
	while ((ret = arena_create(g, 64 * MiB, NULL)) > 0)
		n++;
	EXPECT_EQ(-ENOMEM, ret);
	EXPECT_LE(1, n);
	EXPECT_GE(bound, (unsigned long)n * 64);
	TH_LOG("%d arenas of 64 MiB, bound %lu MiB, MemAvailable %lu kB", n,
	       bound, meminfo_kb("MemAvailable"));
	/* Page cache and anonymous memory still come without a kill. */
	EXPECT_EQ(0, ordinary_alloc(64 * MiB));
	EXPECT_EQ(ooms, dfg_klog_count("invoked oom-killer"));
	close(g);
	EXPECT_EQ(0, dfg_sysfs_wait("pages", 0));
}

/* Maps and touches arenas up to the bound, then sleeps: the holder. */
static void holder(int ready)
{
	__u32 id;
	char *p;
	int dev = sys_dfg_open(), g, n = 0;

	g = dev < 0 ? dev : graph_new(dev);
	while (g >= 0 && arena_create(g, 64 * MiB, &id) > 0) {
		p = mmap(NULL, 64 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED,
			 g, DFG_MMAP_OFFSET(id));
		if (p == MAP_FAILED)
			break;
		memset(p, 1, 64 * MiB);
		n++;
	}
	if (write(ready, &n, sizeof(n)) < 0)
		_exit(1);
	for (;;)
		pause();
}

/*
 * Forced OOM: a holder maps arenas up to the bound, four ordinary
 * processes each allocate 40% of what is left; the first victim of the
 * OOM killer is the holder, whose death frees the arenas.
 */
TEST_F_TIMEOUT(lim, oom_victim_is_holder, 600)
{
	char want[64], *log, *kill;
	int pfd[2], n = 0, status, i, size, kills;
	pid_t storm[4], holder_pid;
	size_t each;

	if (!getenv("DFG_TEST_OOM"))
		SKIP(return, "DFG_TEST_OOM=1: the OOM report fails dfg-vm's log check");
	ASSERT_EQ(0, pipe(pfd));
	self->kids[0] = fork();
	ASSERT_LE(0, self->kids[0]);
	if (self->kids[0] == 0)
		holder(pfd[1]);
	close(pfd[1]);
	ASSERT_EQ(sizeof(n), read(pfd[0], &n, sizeof(n)));
	close(pfd[0]);
	ASSERT_LE(1, n);
	holder_pid = self->kids[0];
	kills = dfg_klog_count("Killed process ");
	ASSERT_LE(0, kills);

	each = (meminfo_kb("MemAvailable") << 10) / 10 * 4;
	TH_LOG("holder %d: %d MiB of arenas; 4 x %zu MiB", self->kids[0],
	       n * 64, each >> 20);
	for (i = 0; i < 4; i++) {
		storm[i] = fork();
		ASSERT_LE(0, storm[i]);
		if (storm[i] == 0) {
			char *p = mmap(NULL, each, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			size_t off;

			if (p == MAP_FAILED)
				_exit(1);
			for (off = 0; off < each; off += PAGE)
				p[off] = 1;
			_exit(0);
		}
		self->kids[1 + i] = storm[i];
	}
	ASSERT_EQ(0, dfg_wait_pid(self->kids[0], &status, 300000));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	self->kids[0] = 0;
	for (i = 0; i < 4; i++) {
		dfg_wait_pid(storm[i], &status, 300000);
		self->kids[1 + i] = 0;
	}

	/* The first kill since the storm began is the holder's. */
	size = klogctl(10, NULL, 0);
	ASSERT_LT(0, size);
	log = calloc(1, size + 1);
	ASSERT_NE(NULL, log);
	ASSERT_LT(0, klogctl(3, log, size));
	kill = log;
	for (i = 0; kill && i <= kills; i++) {
		kill = strstr(i ? kill + 1 : kill, "Killed process ");
	}
	ASSERT_NE(NULL, kill);
	snprintf(want, sizeof(want), "Killed process %d (", holder_pid);
	EXPECT_EQ(0, strncmp(kill, want, strlen(want)));
	TH_LOG("%.80s", kill);
	free(log);
}

TEST_HARNESS_MAIN
