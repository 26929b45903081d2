// SPDX-License-Identifier: GPL-2.0
/*
 * A command that fails has not happened: every command of the module's
 * table, sent with an argument struct the kernel can read but not write
 * (a PROT_READ page) or cannot reach at all (an unmapped page), over
 * ioctl, uring_cmd indirect and uring_cmd indirect from an io-wq worker
 * (IOSQE_ASYNC), must fail with -EFAULT and leave everything as it was:
 * open descriptors, graphs, the graph's objects, pages and attached
 * descriptors, module-wide pages, pinned pages, clients and parked
 * commands; and its own state (a set still READY or RUNNING, a team whose
 * other ranks still work, a channel slot still free, a region's data).
 * Then the same arguments from a writable struct must work, which shows
 * the -EFAULT came from the struct alone.
 *
 * The list of commands comes from the running module (stats/<cmd>, one
 * file per slot of kmod/cmd.c's table): a command without a case here
 * fails the test, so a new command cannot go uncovered.
 *
 * Commands that wait (SCHED_NEXT, CHAN_WAIT), whose struct turns
 * read-only while they wait, must not consume what completes them: the
 * set goes back, the data stays readable.
 *
 * Inline uring_cmd arguments have no struct to write back (results go in
 * the CQE), so that path has nothing to fail on.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stddef.h>
#include <sys/mman.h>

#include "dfg_sys.h"
#include "../chan/chan.h"
#include "kselftest_harness.h"

#define PAGE		4096UL
#define TEAM_CTL	PAGE

enum bad_buf {
	BAD_RDONLY,	/* the struct is there, in a PROT_READ page */
	BAD_UNMAPPED,	/* nothing mapped at the address */
};

/* What every case starts with: one of each object, fresh per case. */
struct env {
	int	dev;
	int	g;
	char	gname[DFG_NAME_MAX];
	int	gid;
	int	arena;		/* arena id, the channel's pool */
	void	*rmem;		/* exported page */
	int	region;		/* its region id */
	int	chan;		/* channel id (2 producer slots) */
	int	cons, prod;	/* its consumer, producer (slot 0) endpoints */
	int	member;		/* rank 0 of team "t" (size 2) */
	int	sched;		/* scheduler descriptor */
	int	set;		/* a ROOT set of it, READY */
	struct io_uring	ring;
};

/* Everything a failed command must not change. */
struct snap {
	int	fds;
	int	graphs;
	__u64	pages, pinned, clients, parked;
	__u32	objects;
	__u64	gpages;
	__u64	attached;
};

static char comp_names[1][DFG_NAME_MAX] = { "comp" };
static int seq;

static int count_dir(const char *path)
{
	struct dirent *de;
	DIR *d = opendir(path);
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void take_snap(struct env *e, struct snap *s)
{
	struct dfg_graph_info info = { .size = sizeof(info) };
	char name[64];

	memset(s, 0, sizeof(*s));
	s->fds = count_dir("/proc/self/fd");
	s->graphs = count_dir(DFG_SYSFS_DIR "/graphs");
	s->pages = dfg_sysfs_u64("pages");
	s->pinned = dfg_sysfs_u64("pinned");
	s->clients = dfg_sysfs_u64("clients");
	s->parked = dfg_sysfs_u64("parked");
	if (sys_dfg_ioctl(e->g, DFG_IOC_GRAPH_INFO, &info) == 0) {
		s->objects = info.nr_objects;
		s->gpages = info.pages;
	}
	snprintf(name, sizeof(name), "graphs/%d/attached", e->gid);
	s->attached = dfg_sysfs_u64(name);
}

static void reg_fill(struct dfg_set_register *r, const char *name)
{
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->flags = DFG_SET_F_ROOT;
	r->nr_comps = 1;
	r->comp_names = (__u64)(uintptr_t)comp_names;
	r->quantum = 16;
	snprintf(r->name, sizeof(r->name), "%s", name);
}

static struct dfg_team_join join_args(__u32 rank, const char *name)
{
	struct dfg_team_join j = {
		.size = sizeof(j),
		.team_size = 2,
		.rank = rank,
		.ctl_size = TEAM_CTL,
	};

	snprintf(j.name, sizeof(j.name), "%s", name);
	return j;
}

/* 0, or the step that failed (negative). */
static int env_init(struct env *e)
{
	struct dfg_graph_open o = { .size = sizeof(o), .mode = 0600 };
	struct dfg_arena_create a = { .size = PAGE };
	struct dfg_region r = { .len = PAGE, .flags = DFG_REGION_F_WRITE };
	struct dfg_chan_create c = { .depth = 4, .max_producers = 2 };
	struct dfg_chan_open co = { .role = DFG_CHAN_CONSUMER };
	struct dfg_chan_open po = { .role = DFG_CHAN_PRODUCER };
	struct dfg_team_join j = join_args(0, "t");
	struct dfg_sched_attach sa = { 0 };
	struct dfg_set_register sr;

	memset(e, 0, sizeof(*e));
	e->dev = sys_dfg_open();
	if (e->dev < 0)
		return -1;
	snprintf(o.name, sizeof(o.name), "efault-%d-%d", getpid(), seq++);
	snprintf(e->gname, sizeof(e->gname), "%s", o.name);
	e->g = sys_dfg_ioctl(e->dev, DFG_IOC_GRAPH_CREATE, &o);
	if (e->g < 0)
		return -2;
	e->gid = dfg_graph_id(e->g);
	e->arena = sys_dfg_ioctl(e->g, DFG_IOC_ARENA_CREATE, &a);
	if (e->arena < 0)
		return -3;
	e->rmem = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e->rmem == MAP_FAILED)
		return -4;
	memset(e->rmem, 0x5a, PAGE);
	r.addr = (__u64)(uintptr_t)e->rmem;
	e->region = sys_dfg_ioctl(e->g, DFG_IOC_REGION_EXPORT, &r);
	if (e->region < 0)
		return -5;
	c.pool = e->arena;
	e->chan = sys_dfg_ioctl(e->g, DFG_IOC_CHAN_CREATE, &c);
	if (e->chan < 0)
		return -6;
	co.id = po.id = e->chan;
	e->cons = sys_dfg_ioctl(e->g, DFG_IOC_CHAN_OPEN, &co);
	e->prod = sys_dfg_ioctl(e->g, DFG_IOC_CHAN_OPEN, &po);
	if (e->cons < 0 || e->prod < 0 || po.slot != 0)
		return -7;
	e->member = sys_dfg_ioctl(e->g, DFG_IOC_TEAM_JOIN, &j);
	if (e->member < 0)
		return -8;
	e->sched = sys_dfg_ioctl(e->g, DFG_IOC_SCHED_ATTACH, &sa);
	if (e->sched < 0)
		return -9;
	reg_fill(&sr, "root");
	e->set = sys_dfg_ioctl(e->sched, DFG_IOC_SET_REGISTER, &sr);
	if (e->set < 0)
		return -10;
	if (dfg_ring_init(&e->ring, 8))
		return -11;
	return 0;
}

static void env_fini(struct env *e)
{
	int fds[] = { e->sched, e->member, e->prod, e->cons, e->g, e->dev };
	unsigned int i;

	if (e->ring.ring_fd > 0)
		io_uring_queue_exit(&e->ring);
	for (i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] > 0)
			close(fds[i]);
	if (e->rmem && e->rmem != MAP_FAILED)
		munmap(e->rmem, PAGE);
}

/* ------------------------------------------------------------------------
 * One case per command: its arguments, descriptor and what must still
 * hold after the failure (which also runs it from a writable struct).
 * ------------------------------------------------------------------------
 */

struct cmd_case {
	const char	*name;		/* stats/<name> */
	__u32		cmd;
	/* Fill @args; returns the descriptor to send it on, or -1. */
	int		(*prep)(struct env *e, void *args);
	/* After the failure: 0 if the case's own state is intact. */
	int		(*after)(struct env *e, void *args);
};

static int prep_info(struct env *e, void *args)
{
	((struct dfg_info *)args)->size = sizeof(struct dfg_info);
	return e->dev;
}

static int prep_nop(struct env *e, void *args)
{
	((struct dfg_nop *)args)->value = 42;
	return e->dev;
}

static int prep_gcreate(struct env *e, void *args)
{
	struct dfg_graph_open *o = args;

	o->size = sizeof(*o);
	o->mode = 0600;
	snprintf(o->name, sizeof(o->name), "efault-new-%d", getpid());
	return e->dev;
}

/* The graph was never there: its name is free. */
static int after_gcreate(struct env *e, void *args)
{
	struct dfg_graph_open o = *(struct dfg_graph_open *)args;
	int fd;

	o.mode = 0;
	if (sys_dfg_ioctl(e->dev, DFG_IOC_GRAPH_ATTACH, &o) != -ENOENT)
		return -1;
	o = *(struct dfg_graph_open *)args;
	fd = sys_dfg_ioctl(e->dev, DFG_IOC_GRAPH_CREATE, &o);
	if (fd < 0)
		return -2;
	close(fd);
	return 0;
}

static int prep_gattach(struct env *e, void *args)
{
	struct dfg_graph_open *o = args;

	o->size = sizeof(*o);
	snprintf(o->name, sizeof(o->name), "%s", e->gname);
	return e->dev;
}

static int prep_ginfo(struct env *e, void *args)
{
	((struct dfg_graph_info *)args)->size = sizeof(struct dfg_graph_info);
	return e->g;
}

static int prep_arena(struct env *e, void *args)
{
	((struct dfg_arena_create *)args)->size = 4 * PAGE;
	return e->g;
}

/* The id that failed is the next one given: it was never taken. */
static int after_create(struct env *e, __u32 cmd, void *args, size_t size)
{
	__u8 copy[256];

	memcpy(copy, args, size);
	return sys_dfg_ioctl(e->g, cmd, copy) > 0 ? 0 : -1;
}

static int after_arena(struct env *e, void *args)
{
	return after_create(e, DFG_IOC_ARENA_CREATE, args,
			    sizeof(struct dfg_arena_create));
}

static void *spare_page;

static int prep_rexport(struct env *e, void *args)
{
	struct dfg_region *r = args;

	r->addr = (__u64)(uintptr_t)spare_page;
	r->len = PAGE;
	return e->g;
}

static int after_rexport(struct env *e, void *args)
{
	return after_create(e, DFG_IOC_REGION_EXPORT, args,
			    sizeof(struct dfg_region));
}

static int prep_runexport(struct env *e, void *args)
{
	((struct dfg_region *)args)->id = e->region;
	return e->g;
}

/* Still exported: a copy from it works. */
static int region_alive(struct env *e)
{
	char buf[16];
	struct dfg_region_copy rc = {
		.id = e->region,
		.flags = DFG_COPY_FROM_REGION,
		.len = sizeof(buf),
		.addr = (__u64)(uintptr_t)buf,
	};

	return sys_dfg_ioctl(e->g, DFG_IOC_REGION_COPY, &rc) ==
	       (int)sizeof(buf) ? 0 : -1;
}

static int after_runexport(struct env *e, void *args)
{
	struct dfg_region r = *(struct dfg_region *)args;

	if (region_alive(e))
		return -1;
	return sys_dfg_ioctl(e->g, DFG_IOC_REGION_UNEXPORT, &r) == 0 ? 0 : -2;
}

static char copy_src[64];

static int prep_rcopy(struct env *e, void *args)
{
	struct dfg_region_copy *rc = args;

	memset(copy_src, 0xa5, sizeof(copy_src));
	rc->id = e->region;
	rc->flags = DFG_COPY_TO_REGION;
	rc->len = sizeof(copy_src);
	rc->addr = (__u64)(uintptr_t)copy_src;
	return e->g;
}

/* Nothing was written into the region. */
static int after_rcopy(struct env *e, void *args)
{
	struct dfg_region_copy rc = *(struct dfg_region_copy *)args;

	if (((unsigned char *)e->rmem)[0] != 0x5a)
		return -1;
	if (sys_dfg_ioctl(e->g, DFG_IOC_REGION_COPY, &rc) != sizeof(copy_src))
		return -2;
	return ((unsigned char *)e->rmem)[0] == 0xa5 ? 0 : -3;
}

static int prep_ccreate(struct env *e, void *args)
{
	struct dfg_chan_create *c = args;

	c->pool = e->arena;
	c->depth = 4;
	c->max_producers = 1;
	return e->g;
}

static int after_ccreate(struct env *e, void *args)
{
	return after_create(e, DFG_IOC_CHAN_CREATE, args,
			    sizeof(struct dfg_chan_create));
}

static int prep_copen(struct env *e, void *args)
{
	struct dfg_chan_open *o = args;

	o->id = e->chan;
	o->role = DFG_CHAN_PRODUCER;
	return e->g;
}

/* Slot 1 was never taken: the next producer gets it. */
static int after_copen(struct env *e, void *args)
{
	struct dfg_chan_open o = *(struct dfg_chan_open *)args;
	int fd = sys_dfg_ioctl(e->g, DFG_IOC_CHAN_OPEN, &o);

	if (fd < 0)
		return -1;
	close(fd);
	return o.slot == 1 ? 0 : -2;
}

/* The producer's ring has room: WAIT completes at once. */
static int prep_cwait(struct env *e, void *args)
{
	(void)args;
	return e->prod;
}

static int prep_cwake(struct env *e, void *args)
{
	(void)args;
	return e->prod;
}

static int prep_tjoin(struct env *e, void *args)
{
	*(struct dfg_team_join *)args = join_args(1, "t");
	return e->g;
}

/* Rank 1 is free, the team not broken: rank 0 and a new rank 1 work. */
static int after_tjoin(struct env *e, void *args)
{
	struct dfg_team_join j = *(struct dfg_team_join *)args;
	struct dfg_team_wake w = { .offset = DFG_TEAM_CTL_OFFSET };
	int fd;

	if (sys_dfg_ioctl(e->member, DFG_IOC_TEAM_WAKE, &w) < 0)
		return -1;
	fd = sys_dfg_ioctl(e->g, DFG_IOC_TEAM_JOIN, &j);
	if (fd < 0)
		return -2;
	if (sys_dfg_ioctl(fd, DFG_IOC_TEAM_WAKE, &w) < 0)
		return -3;
	close(fd);
	return 0;
}

static int prep_tjoin_new(struct env *e, void *args)
{
	*(struct dfg_team_join *)args = join_args(0, "fresh");
	return e->g;
}

static int prep_twait(struct env *e, void *args)
{
	struct dfg_team_wait *w = args;

	w->offset = DFG_TEAM_CTL_OFFSET;
	w->value = 1;	/* the word holds 0: returns 1 at once */
	return e->member;
}

static int prep_twake(struct env *e, void *args)
{
	((struct dfg_team_wake *)args)->offset = DFG_TEAM_CTL_OFFSET;
	return e->member;
}

static int prep_tleave(struct env *e, void *args)
{
	(void)args;
	return e->member;
}

/* Still a member: WAKE works, LEAVE then too. */
static int after_tleave(struct env *e, void *args)
{
	struct dfg_team_wake w = { .offset = DFG_TEAM_CTL_OFFSET };
	struct dfg_team_leave l = *(struct dfg_team_leave *)args;

	if (sys_dfg_ioctl(e->member, DFG_IOC_TEAM_WAKE, &w) < 0)
		return -1;
	return sys_dfg_ioctl(e->member, DFG_IOC_TEAM_LEAVE, &l) == 0 ? 0 : -2;
}

static int prep_sattach(struct env *e, void *args)
{
	(void)args;
	return e->g;
}

static int prep_sreg(struct env *e, void *args)
{
	reg_fill(args, "other");
	return e->sched;
}

static int after_sreg(struct env *e, void *args)
{
	struct dfg_set_register r = *(struct dfg_set_register *)args;

	return sys_dfg_ioctl(e->sched, DFG_IOC_SET_REGISTER, &r) > 0 ? 0 : -1;
}

static int prep_sunreg(struct env *e, void *args)
{
	((struct dfg_set_id *)args)->id = e->set;
	return e->sched;
}

static int next_nowait(struct env *e)
{
	struct dfg_sched_next n = { .flags = DFG_NEXT_F_NOWAIT };

	return sys_dfg_ioctl(e->sched, DFG_IOC_SCHED_NEXT, &n);
}

/* Still registered: it runs. */
static int after_sunreg(struct env *e, void *args)
{
	(void)args;
	return next_nowait(e) == e->set ? 0 : -1;
}

static int prep_snext(struct env *e, void *args)
{
	((struct dfg_sched_next *)args)->flags = DFG_NEXT_F_NOWAIT;
	return e->sched;
}

/* Still READY: the next NEXT gets it. */
static int after_snext(struct env *e, void *args)
{
	(void)args;
	return next_nowait(e) == e->set ? 0 : -1;
}

/* NEXT with a yield of the running set: neither happens. */
static int prep_snext_yield(struct env *e, void *args)
{
	struct dfg_sched_next *n = args;

	if (next_nowait(e) != e->set)
		return -1;
	n->flags = DFG_NEXT_F_NOWAIT;
	n->yield_id = e->set;
	n->yield_reason = DFG_YIELD_QUANTUM;
	return e->sched;
}

/* Still RUNNING: a yield of it works. */
static int after_running(struct env *e, void *args)
{
	struct dfg_sched_yield y = { .id = e->set, .reason = DFG_YIELD_QUANTUM };

	(void)args;
	return sys_dfg_ioctl(e->sched, DFG_IOC_SCHED_YIELD, &y) == 0 ? 0 : -1;
}

static int prep_syield(struct env *e, void *args)
{
	struct dfg_sched_yield *y = args;

	if (next_nowait(e) != e->set)
		return -1;
	y->id = e->set;
	y->reason = DFG_YIELD_QUANTUM;
	return e->sched;
}

/* The smallest partition image: node 0 alone, no neighbours, 8 bytes. */
static struct {
	struct dfg_part_hdr	h;
	__u64			row[2];
	__u64			feat;
	__u64			rep_row;
} tiny_part = {
	.h = {
		.magic = DFG_PART_MAGIC, .version = DFG_PART_VERSION,
		.node_count = 1, .feat_bytes = 8,
		.row_off = offsetof(typeof(tiny_part), row),
		.col_off = offsetof(typeof(tiny_part), feat),
		.feat_off = offsetof(typeof(tiny_part), feat),
		.rep_ids_off = offsetof(typeof(tiny_part), rep_row),
		.rep_row_off = offsetof(typeof(tiny_part), rep_row),
		.rep_col_off = offsetof(typeof(tiny_part), rep_row),
		.rep_feat_off = offsetof(typeof(tiny_part), rep_row),
		.image_bytes = sizeof(tiny_part),
	},
};

static int prep_pload(struct env *e, void *args)
{
	struct dfg_part_load *a = args;

	a->addr = (uintptr_t)&tiny_part;
	a->len = sizeof(tiny_part);
	return e->dev;
}

static __u64 pf_id;
static struct dfg_pf_loc pf_out[2];

/* A loaded partition, then node 0's entries. */
static int prep_prefetch(struct env *e, void *args)
{
	struct dfg_part_load l = { 0 };
	struct dfg_prefetch *a = args;

	prep_pload(e, &l);
	if (sys_dfg_ioctl(e->dev, DFG_IOC_PART_LOAD, &l))
		return -1;
	a->ids = (uintptr_t)&pf_id;
	a->out = (uintptr_t)pf_out;
	a->nr = 1;
	a->what = DFG_PF_ALL;
	return e->dev;
}

static int prep_padd(struct env *e, void *args)
{
	struct dfg_peer_add *a = args;

	a->family = AF_INET;
	a->addr[0] = 127;
	a->addr[3] = 1;
	a->timeout_ms = 100;
	return e->dev;
}

/*
 * A writable PEER_ADD gets as far as the transport: -ENODEV without one
 * (this VM has none), anything but -EFAULT with one.
 */
static int after_padd(struct env *e, void *args)
{
	struct dfg_peer_add a;
	char t[32];
	int ret;

	memcpy(&a, args, sizeof(a));
	ret = sys_dfg_ioctl(e->dev, DFG_IOC_PEER_ADD, &a);
	if (dfg_sysfs_read("prefetch/transport", t, sizeof(t)))
		return -1;
	if (!t[0])
		return ret == -ENODEV ? 0 : -2;
	return ret != -EFAULT ? 0 : -3;
}

static int prep_fbset(struct env *e, void *args)
{
	struct dfg_feedback_set *a = args;

	a->what = DFG_FB_CHAN_MARKS;
	a->object = e->chan;
	a->high = 1;
	return e->g;
}

/* The same marks from a writable struct are still accepted. */
static int after_fbset(struct env *e, void *args)
{
	struct dfg_feedback_set a = *(struct dfg_feedback_set *)args;

	return sys_dfg_ioctl(e->g, DFG_IOC_FEEDBACK_SET, &a) == 0 ? 0 : -1;
}

#define CASE(_name, _id, _prep, _after) \
	{ _name, DFG_IOC_##_id, _prep, _after }

/* Every command of uapi/linux/dfg.h; several cases may share one. */
static const struct cmd_case cases[] = {
	CASE("get_info", GET_INFO, prep_info, NULL),
	CASE("nop", NOP, prep_nop, NULL),
	CASE("graph_create", GRAPH_CREATE, prep_gcreate, after_gcreate),
	CASE("graph_attach", GRAPH_ATTACH, prep_gattach, NULL),
	CASE("graph_info", GRAPH_INFO, prep_ginfo, NULL),
	CASE("arena_create", ARENA_CREATE, prep_arena, after_arena),
	CASE("region_export", REGION_EXPORT, prep_rexport, after_rexport),
	CASE("region_unexport", REGION_UNEXPORT, prep_runexport,
	     after_runexport),
	CASE("region_copy", REGION_COPY, prep_rcopy, after_rcopy),
	CASE("chan_create", CHAN_CREATE, prep_ccreate, after_ccreate),
	CASE("chan_open", CHAN_OPEN, prep_copen, after_copen),
	CASE("chan_wait", CHAN_WAIT, prep_cwait, NULL),
	CASE("chan_wake", CHAN_WAKE, prep_cwake, NULL),
	CASE("team_join", TEAM_JOIN, prep_tjoin, after_tjoin),
	CASE("team_join", TEAM_JOIN, prep_tjoin_new, NULL),
	CASE("team_wait", TEAM_WAIT, prep_twait, NULL),
	CASE("team_wake", TEAM_WAKE, prep_twake, NULL),
	CASE("team_leave", TEAM_LEAVE, prep_tleave, after_tleave),
	CASE("sched_attach", SCHED_ATTACH, prep_sattach, NULL),
	CASE("set_register", SET_REGISTER, prep_sreg, after_sreg),
	CASE("set_unregister", SET_UNREGISTER, prep_sunreg, after_sunreg),
	CASE("sched_next", SCHED_NEXT, prep_snext, after_snext),
	CASE("sched_next", SCHED_NEXT, prep_snext_yield, after_running),
	CASE("sched_yield", SCHED_YIELD, prep_syield, after_running),
	CASE("part_load", PART_LOAD, prep_pload, NULL),
	CASE("peer_add", PEER_ADD, prep_padd, after_padd),
	CASE("prefetch", PREFETCH, prep_prefetch, NULL),
	CASE("feedback_set", FEEDBACK_SET, prep_fbset, after_fbset),
};

/* ------------------------------------------------------------------------
 * The fixture: one variant per path that writes a struct back
 * ------------------------------------------------------------------------
 */

FIXTURE(efault) {
	void	*page;		/* the struct's page */
};

FIXTURE_VARIANT(efault) {
	enum dfg_path	path;
	__u8		sqe_flags;
};

FIXTURE_VARIANT_ADD(efault, ioctl) {
	.path = DFG_PATH_IOCTL,
};

FIXTURE_VARIANT_ADD(efault, uring_indirect) {
	.path = DFG_PATH_INDIRECT,
};

FIXTURE_VARIANT_ADD(efault, uring_indirect_async) {
	.path = DFG_PATH_INDIRECT,
	.sqe_flags = IOSQE_ASYNC,
};

FIXTURE_SETUP(efault)
{
	if (access(DFG_DEV_PATH, F_OK))
		SKIP(return, "dfg.ko not loaded");
	self->page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->page);
	spare_page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, spare_page);
	memset(spare_page, 1, PAGE);
}

FIXTURE_TEARDOWN(efault)
{
	if (self->page && self->page != MAP_FAILED)
		munmap(self->page, PAGE);
	if (spare_page && spare_page != MAP_FAILED)
		munmap(spare_page, PAGE);
}

/* Runs case @c with a struct at a @bad address; 0 or a negative step. */
static int run_case(struct __test_metadata *_metadata,
		    FIXTURE_DATA(efault) *self,
		    const FIXTURE_VARIANT(efault) *variant,
		    const struct cmd_case *c, enum bad_buf bad)
{
	__u8 args[256] = { 0 };
	size_t size = _IOC_SIZE(c->cmd);
	struct snap before, after;
	struct env e;
	void *at;
	int fd, ret;

	ret = env_init(&e);
	if (ret) {
		TH_LOG("%s: setup step %d failed", c->name, -ret);
		env_fini(&e);
		return -100;
	}
	fd = c->prep(&e, args);
	if (fd < 0) {
		env_fini(&e);
		return -101;
	}
	/* The struct ends where the page ends: no slack to write into. */
	at = (char *)self->page + PAGE - size;
	if (mprotect(self->page, PAGE, PROT_READ | PROT_WRITE)) {
		env_fini(&e);
		return -102;
	}
	memcpy(at, args, size);
	if (bad == BAD_RDONLY) {
		mprotect(self->page, PAGE, PROT_READ);
	} else {
		munmap(self->page, PAGE);
	}

	take_snap(&e, &before);
	ret = dfg_cmd_ex(variant->path, fd, &e.ring, c->cmd, at, size, NULL,
			 variant->sqe_flags);
	take_snap(&e, &after);

	if (bad == BAD_UNMAPPED) {
		self->page = mmap(self->page, PAGE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
				  -1, 0);
		if (self->page == MAP_FAILED) {
			env_fini(&e);
			return -103;
		}
	}
	if (ret != -EFAULT) {
		TH_LOG("%s (%s): %d, not -EFAULT", c->name,
		       bad == BAD_RDONLY ? "read-only" : "unmapped", ret);
		env_fini(&e);
		return -1;
	}
	if (memcmp(&before, &after, sizeof(before))) {
		TH_LOG("%s (%s): state changed: fds %d->%d graphs %d->%d objects %u->%u gpages %llu->%llu attached %llu->%llu pages %llu->%llu pinned %llu->%llu clients %llu->%llu parked %llu->%llu",
		       c->name, bad == BAD_RDONLY ? "read-only" : "unmapped",
		       before.fds, after.fds, before.graphs, after.graphs,
		       before.objects, after.objects,
		       (unsigned long long)before.gpages,
		       (unsigned long long)after.gpages,
		       (unsigned long long)before.attached,
		       (unsigned long long)after.attached,
		       (unsigned long long)before.pages,
		       (unsigned long long)after.pages,
		       (unsigned long long)before.pinned,
		       (unsigned long long)after.pinned,
		       (unsigned long long)before.clients,
		       (unsigned long long)after.clients,
		       (unsigned long long)before.parked,
		       (unsigned long long)after.parked);
		env_fini(&e);
		return -2;
	}
	if (c->after) {
		ret = c->after(&e, args);
		if (ret) {
			TH_LOG("%s (%s): state check step %d failed", c->name,
			       bad == BAD_RDONLY ? "read-only" : "unmapped",
			       -ret);
			env_fini(&e);
			return -3;
		}
	} else {
		/* The same arguments from a writable struct work. */
		ret = dfg_cmd_ex(variant->path, fd, &e.ring, c->cmd, args,
				 size, NULL, variant->sqe_flags);
		if (ret < 0) {
			TH_LOG("%s: %d from a writable struct", c->name, ret);
			env_fini(&e);
			return -4;
		}
		/* A new descriptor: ours to close. */
		if (c->cmd == DFG_IOC_GRAPH_ATTACH ||
		    c->cmd == DFG_IOC_GRAPH_CREATE ||
		    c->cmd == DFG_IOC_SCHED_ATTACH ||
		    c->cmd == DFG_IOC_TEAM_JOIN)
			close(ret);
	}
	env_fini(&e);
	/* Everything made here is gone with its descriptors. */
	if (dfg_sysfs_wait("pages", 0) != 0 || dfg_sysfs_wait("pinned", 0) != 0)
		return -5;
	return 0;
}

/*
 * Every command of the module's table (stats/<cmd>) has a case, and
 * every case passes with @bad.
 */
static void every_command(struct __test_metadata *_metadata,
			  FIXTURE_DATA(efault) *self,
			  const FIXTURE_VARIANT(efault) *variant,
			  enum bad_buf bad)
{
	struct dirent *de;
	unsigned int i, ncmds = 0, nfail = 0;
	DIR *d = opendir(DFG_SYSFS_DIR "/stats");

	ASSERT_NE(NULL, d);
	while ((de = readdir(d))) {
		bool found = false;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "errors") ||
		    !strcmp(de->d_name, "canceled"))
			continue;
		ncmds++;
		for (i = 0; i < ARRAY_SIZE(cases); i++) {
			if (strcmp(cases[i].name, de->d_name))
				continue;
			found = true;
			if (run_case(_metadata, self, variant, &cases[i], bad))
				nfail++;
		}
		if (!found) {
			TH_LOG("command %s has no case here", de->d_name);
			nfail++;
		}
	}
	closedir(d);
	EXPECT_LT(0, ncmds);
	EXPECT_EQ(0, nfail);
}

/* The kernel reads the struct but cannot write it back. */
TEST_F(efault, every_command_readonly)
{
	every_command(_metadata, self, variant, BAD_RDONLY);
}

/* The kernel cannot read the struct at all. */
TEST_F(efault, every_command_unmapped)
{
	every_command(_metadata, self, variant, BAD_UNMAPPED);
}

/*
 * A SCHED_NEXT that waits (parked on io_uring, asleep in ioctl) and whose
 * struct turns read-only before a set comes: the set it was handed goes
 * back (io_uring: the waiter's undo in the task work; ioctl: the handler),
 * the command ends with -EFAULT, and the next NEXT gets the set. The
 * struct is readable throughout, so the NEXT waits whenever it starts.
 */
TEST_F(efault, waiting_sched_next_gives_back)
{
	struct dfg_sched_yield y;
	struct dfg_pending p;
	struct dfg_sched_next *n;
	struct env e;
	int res;

	ASSERT_EQ(0, env_init(&e));
	/* The set runs: the NEXT below waits. */
	ASSERT_EQ(e.set, next_nowait(&e));
	n = (struct dfg_sched_next *)((char *)self->page + PAGE - sizeof(*n));
	memset(n, 0, sizeof(*n));
	ASSERT_EQ(0, dfg_pending_start(&p, variant->path, &e.ring, e.sched,
				       DFG_IOC_SCHED_NEXT, n, sizeof(*n), 7));
	ASSERT_EQ(-ETIME, dfg_pending_end(&p, 200, &res));
	ASSERT_EQ(0, mprotect(self->page, PAGE, PROT_READ));

	y = (struct dfg_sched_yield){ .id = e.set,
				      .reason = DFG_YIELD_QUANTUM };
	ASSERT_EQ(0, sys_dfg_ioctl(e.sched, DFG_IOC_SCHED_YIELD, &y));
	ASSERT_EQ(0, dfg_pending_end(&p, 10000, &res));
	EXPECT_EQ(-EFAULT, res);
	dfg_pending_release(&p);
	ASSERT_EQ(0, mprotect(self->page, PAGE, PROT_READ | PROT_WRITE));
	/* Not left RUNNING for a worker that never learned it. */
	EXPECT_EQ(e.set, next_nowait(&e));
	env_fini(&e);
}

/*
 * A CHAN_WAIT that waits and whose struct turns read-only before data
 * comes: -EFAULT then, and the data is not taken from anyone: the next
 * WAIT says READABLE at once.
 */
TEST_F(efault, waiting_chan_wait_keeps_data)
{
	struct dfg_chan_wait *cw, wa = { 0 };
	struct chan_ep prod;
	struct dfg_pending p;
	struct env e;
	int res;

	ASSERT_EQ(0, env_init(&e));
	prod = (struct chan_ep){ .fd = e.prod,
				 .size = DFG_CHAN_MAP_SIZE(4, 2) };
	prod.hdr = mmap(NULL, prod.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			e.prod, 0);
	ASSERT_NE(MAP_FAILED, prod.hdr);
	cw = (struct dfg_chan_wait *)((char *)self->page + PAGE - sizeof(*cw));
	memset(cw, 0, sizeof(*cw));
	ASSERT_EQ(0, dfg_pending_start(&p, variant->path, &e.ring, e.cons,
				       DFG_IOC_CHAN_WAIT, cw, sizeof(*cw), 9));
	ASSERT_EQ(-ETIME, dfg_pending_end(&p, 200, &res));
	ASSERT_EQ(0, mprotect(self->page, PAGE, PROT_READ));

	ASSERT_EQ(0, chan_push(&prod, 0, 1, 42));
	ASSERT_LE(0, sys_dfg_ioctl(e.prod, DFG_IOC_CHAN_WAKE, &wa));
	ASSERT_EQ(0, dfg_pending_end(&p, 10000, &res));
	EXPECT_EQ(-EFAULT, res);
	ASSERT_EQ(0, mprotect(self->page, PAGE, PROT_READ | PROT_WRITE));
	EXPECT_EQ(DFG_CHAN_EV_READABLE,
		  sys_dfg_ioctl(e.cons, DFG_IOC_CHAN_WAIT, &wa) &
		  DFG_CHAN_EV_READABLE);
	munmap(prod.hdr, prod.size);
	env_fini(&e);
}

TEST_HARNESS_MAIN
