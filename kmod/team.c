// SPDX-License-Identifier: GPL-2.0
/*
 * team.c - teams: DFG_IOC_TEAM_JOIN, _WAIT, _WAKE, _LEAVE, member
 * descriptors and their mmap.
 *
 * Objects, locks and references
 *   dfg_teams_lock	mutex over membership: JOIN's find-or-create, every
 *			change of a team's member set (join, leave, a
 *			member's release) and a team's link into its graph
 *			(->linked, ->in_sysfs). A mutex because creation
 *			allocates and unlinking removes a sysfs directory.
 *			Joins are rare; one lock for all graphs keeps
 *			"find or create" and "last member gone, unlink"
 *			atomic with each other. Lock order: see dfg.h.
 *   struct dfg_team	one per team, a dfg_object of its graph while
 *			->linked.
 *     ->kobj		memory and sysfs graphs/<gid>/team<id>. References:
 *			the link's (from creation until the team leaves its
 *			graph: when its last member goes, or at the graph's
 *			death) and one per member descriptor (a mapping
 *			holds its descriptor, hence the team). The release
 *			stops the watch and frees the control area.
 *     ->graph		the graph, whose kobject (memory, not life) the team
 *			holds until its release.
 *     ->lock		spinlock, process context only (commands, releases,
 *			the watch and timeout works, sysfs). Protects the
 *			kernel's copy of the header (->state, ->joined, ...),
 *			->members, the waiter buckets, the counters and
 *			->watching. Waits are completed under it (it is their
 *			owner's lock, wait.c). WAKE wakes the sleeping tasks
 *			it completed after dropping it (a dfg_wake_batch).
 *     ->mem, ->base	header and control area (struct dfg_mem, accounted
 *			like an arena) and their vmap. Shared with userspace,
 *			so never trusted: the kernel only compares WAIT's word
 *			with a value, and rewrites the header from its own
 *			copy on every change.
 *     ->watch		delayed work on dfg_wq, every dfg.monitor_ms while
 *			->watching (members and ACTIVE): breaks the team when
 *			a member's joining process has died while a member
 *			descriptor lives on elsewhere (a forked child).
 *   struct dfg_team_member  one per member descriptor (anon inode
 *			"[dfg-team]"), its file's private_data, freed at the
 *			file's release; holds one team reference once joined.
 *			Embeds a dfg_file (on dfg_files) so its parked WAITs
 *			follow wait.c: task-exit monitor, dfg.max_parked.
 *   struct dfg_team_waiter  one WAIT that sleeps or parks, on a bucket of
 *			->waiters (by word offset) under ->lock: a struct
 *			dfg_waiter (wait.c: allocation, sleep, park, the
 *			CLOCK_MONOTONIC timeout, completion) plus its word.
 *
 * Leaving the graph: the caller that takes the last member out unlinks
 * the team if the graph is alive (it takes a graph reference first,
 * kref_get_unless_zero(), so the graph cannot die meanwhile): hide the
 * entry, remove the directory, then give the id back. If the graph is
 * already dying, its death does it (dfg_team_unpublish(), then
 * dfg_team_destroy()) and the empty team waits in the graph until then.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/vmalloc.h>

#include "dfg.h"
#include "trace.h"

static const struct dfg_obj_ops dfg_team_obj_ops;

static_assert(sizeof(struct dfg_team_hdr) == DFG_TEAM_CTL_OFFSET);
static_assert(DFG_TEAM_SIZE_MAX <= 64);	/* ->ranks is one u64 */

/* Waiter buckets per team, by word: teams are small, waits few. */
#define DFG_TEAM_BUCKETS	16

static DEFINE_MUTEX(dfg_teams_lock);

/**
 * struct dfg_team - one team (see the top of this file)
 * @obj:	header; @obj.id is the team's id in its graph
 * @kobj:	memory and sysfs directory
 * @graph:	the graph (kobject reference held)
 * @name:	immutable
 * @team_size:	ranks; immutable
 * @ctl_size:	userspace control bytes; immutable
 * @map_size:	bytes of @mem; immutable
 * @mem:	header and control area
 * @base:	kernel mapping of @mem
 * @lock:	see the top of this file
 * @waiters:	dfg_team_waiter.node, by dfg_team_bucket()
 * @members:	member of each rank, NULL where none
 * @state:	DFG_TEAM_S_*
 * @dead_rank:	rank whose death broke the team, or DFG_TEAM_NO_RANK
 * @joined:	members now
 * @formed:	times @joined reached @team_size
 * @generation:	membership changes
 * @ranks:	bit per rank that is a member now
 * @waits:	WAITs that slept or parked
 * @wakes:	WAITs completed by WAKE
 * @watching:	@watch may requeue itself
 * @watch:	the joiners' death check
 * @linked:	in its graph's objects (under dfg_teams_lock)
 * @in_sysfs:	@kobj is in sysfs (under dfg_teams_lock)
 */
struct dfg_team {
	struct dfg_object	obj;
	struct kobject		kobj;
	struct dfg_graph	*graph;
	char			name[DFG_NAME_MAX];
	u32			team_size;
	u64			ctl_size;
	u64			map_size;
	struct dfg_mem		mem;
	void			*base;
	spinlock_t		lock;	/* see the top of this file */
	struct list_head	waiters[DFG_TEAM_BUCKETS];
	struct dfg_team_member	*members[DFG_TEAM_SIZE_MAX];
	u32			state;
	u32			dead_rank;
	u32			joined;
	u32			formed;
	u32			generation;
	u64			ranks;
	u64			waits;
	u64			wakes;
	bool			watching;
	struct delayed_work	watch;
	bool			linked;
	bool			in_sysfs;
};

/**
 * struct dfg_team_member - one member descriptor
 * @fd:		descriptor header (DFG_FD_TEAM), first
 * @df:		its parked commands (wait.c); on dfg_files while open
 * @team:	the team (kobject reference held), NULL until joined
 * @rank:	its rank
 * @joined:	a member now: neither left nor gone (under dfg_team.lock,
 *		changed under dfg_teams_lock too)
 * @opener:	thread group of the joiner (struct pid reference held)
 */
struct dfg_team_member {
	struct dfg_fd		fd;
	struct dfg_file		df;
	struct dfg_team		*team;
	u32			rank;
	bool			joined;
	struct pid		*opener;
};

static_assert(offsetof(struct dfg_team_member, fd) == 0);

/* The member descriptor a TEAM_WAIT, _WAKE or _LEAVE was issued on. */
static struct dfg_team_member *dfg_cmd_member(const struct dfg_cmd_ctx *c)
{
	struct dfg_fd *fd = dfg_cmd_fd(c, DFG_FD_TEAM);

	return fd ? container_of(fd, struct dfg_team_member, fd) : NULL;
}

/**
 * struct dfg_team_waiter - a WAIT sleeping or parked on a word
 * @wait:	the waiter, on a bucket of dfg_team.waiters
 * @offset:	the word
 * @value:	sleep while the word holds it
 */
struct dfg_team_waiter {
	struct dfg_waiter	wait;
	u64			offset;
	u32			value;
};

static const struct file_operations dfg_team_fops;

static struct dfg_team_hdr *dfg_team_hdr(struct dfg_team *t)
{
	return t->base;
}

static struct list_head *dfg_team_bucket(struct dfg_team *t, u64 offset)
{
	return &t->waiters[(offset >> 2) % DFG_TEAM_BUCKETS];
}

static u32 dfg_team_word(struct dfg_team *t, u64 offset)
{
	return READ_ONCE(*(u32 *)(t->base + offset));
}

/*
 * Complete one waiter with @res; caller holds ->lock. Returns true if
 * this call completed it (false: a cancel claimed its parked command
 * first).
 */
static bool dfg_team_complete(struct dfg_team_waiter *w, int res)
{
	return dfg_waiter_complete(&w->wait, res, 0, NULL);
}

static void dfg_team_complete_all(struct dfg_team *t, int res)
{
	struct dfg_team_waiter *w, *tmp;
	unsigned int i;

	for (i = 0; i < DFG_TEAM_BUCKETS; i++)
		list_for_each_entry_safe(w, tmp, &t->waiters[i], wait.node)
			dfg_team_complete(w, res);
}

/*
 * Rewrite the header's variable words from our copy, then wake the waits
 * on header words whose value no longer matches. Caller holds ->lock.
 */
static void dfg_team_sync(struct dfg_team *t)
{
	struct dfg_team_hdr *h = dfg_team_hdr(t);
	struct dfg_team_waiter *w, *tmp;
	unsigned int i;

	lockdep_assert_held(&t->lock);
	WRITE_ONCE(h->state, t->state);
	WRITE_ONCE(h->joined, t->joined);
	WRITE_ONCE(h->formed, t->formed);
	WRITE_ONCE(h->dead_rank, t->dead_rank);
	WRITE_ONCE(h->generation, t->generation);
	WRITE_ONCE(h->ranks, t->ranks);
	for (i = 0; i < DFG_TEAM_BUCKETS; i++)
		list_for_each_entry_safe(w, tmp, &t->waiters[i], wait.node)
			if (w->offset < DFG_TEAM_CTL_OFFSET &&
			    dfg_team_word(t, w->offset) != w->value)
				dfg_team_complete(w, 0);
}

/*
 * A member died: break the team, end every wait with -EOWNERDEAD.
 * Caller holds ->lock. Returns true if this call broke it.
 */
static bool dfg_team_break(struct dfg_team *t, u32 rank)
{
	lockdep_assert_held(&t->lock);
	if (t->state != DFG_TEAM_S_ACTIVE)
		return false;
	t->state = DFG_TEAM_S_BROKEN;
	t->dead_rank = rank;
	t->watching = false;
	dfg_team_complete_all(t, -EOWNERDEAD);
	dfg_team_sync(t);
	return true;
}

static void dfg_team_report_broken(struct dfg_team *t, u32 rank, pid_t pid)
{
	trace_dfg_team_broken(t->graph->id, t->obj.id, rank, pid);
	dfg_nl_team_event(DFG_EV_TEAM_BROKEN, pid, t->graph->id, t->obj.id,
			  rank);
}

/* ------------------------------------------------------------------------
 * The watch: joiners that died while their descriptor lives on
 * ------------------------------------------------------------------------
 */

/*
 * Has the thread group that joined gone? Gone once reaped, or exiting as
 * a whole: a group exit in progress, or its leader exiting with no thread
 * left (a leader that only ran pthread_exit() leaves its group alive).
 */
static bool dfg_team_opener_gone(struct dfg_team_member *m)
{
	struct task_struct *t;
	bool gone;

	rcu_read_lock();
	t = pid_task(m->opener, PIDTYPE_TGID);
	gone = !t || (READ_ONCE(t->signal->flags) & SIGNAL_GROUP_EXIT) ||
	       ((READ_ONCE(t->flags) & PF_EXITING) && thread_group_empty(t));
	rcu_read_unlock();
	return gone;
}

static void dfg_team_watch_kick(struct dfg_team *t)
{
	queue_delayed_work(dfg_wq, &t->watch,
			   msecs_to_jiffies(READ_ONCE(dfg_monitor_ms)));
}

static void dfg_team_watch(struct work_struct *work)
{
	struct dfg_team *t = container_of(to_delayed_work(work),
					  struct dfg_team, watch);
	u32 dead = DFG_TEAM_NO_RANK;
	bool broke = false;
	pid_t pid = 0;
	u32 r;

	spin_lock(&t->lock);
	for (r = 0; r < t->team_size && t->watching; r++) {
		struct dfg_team_member *m = t->members[r];

		if (m && dfg_team_opener_gone(m)) {
			dead = r;
			pid = pid_nr(m->opener);
			broke = dfg_team_break(t, r);
			break;
		}
	}
	if (t->watching)
		dfg_team_watch_kick(t);
	spin_unlock(&t->lock);

	if (broke)
		dfg_team_report_broken(t, dead, pid);
}

/* ------------------------------------------------------------------------
 * sysfs: graphs/<gid>/team<id>/
 * ------------------------------------------------------------------------
 */

static struct dfg_team *dfg_kobj_team(struct kobject *kobj)
{
	return container_of(kobj, struct dfg_team, kobj);
}

static ssize_t name_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", dfg_kobj_team(kobj)->name);
}

static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	static const char * const names[] = {
		[DFG_TEAM_S_ACTIVE]	= "active",
		[DFG_TEAM_S_BROKEN]	= "broken",
		[DFG_TEAM_S_DEAD]	= "dead",
	};
	struct dfg_team *t = dfg_kobj_team(kobj);
	u32 state;

	spin_lock(&t->lock);
	state = t->state;
	spin_unlock(&t->lock);
	return sysfs_emit(buf, "%s\n", names[state]);
}

static ssize_t dead_rank_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	struct dfg_team *t = dfg_kobj_team(kobj);
	u32 rank;

	spin_lock(&t->lock);
	rank = t->dead_rank;
	spin_unlock(&t->lock);
	return sysfs_emit(buf, "%d\n", rank == DFG_TEAM_NO_RANK ? -1 : rank);
}

enum dfg_team_stat {
	DFG_TEAM_STAT_SIZE,
	DFG_TEAM_STAT_JOINED,
	DFG_TEAM_STAT_WAITS,
	DFG_TEAM_STAT_WAKES,
	DFG_TEAM_STAT_PAGES,
};

static u64 dfg_team_stat(struct dfg_team *t, enum dfg_team_stat s)
{
	u64 v = 0;

	spin_lock(&t->lock);
	switch (s) {
	case DFG_TEAM_STAT_SIZE:
		v = t->team_size;
		break;
	case DFG_TEAM_STAT_JOINED:
		v = t->joined;
		break;
	case DFG_TEAM_STAT_WAITS:
		v = t->waits;
		break;
	case DFG_TEAM_STAT_WAKES:
		v = t->wakes;
		break;
	case DFG_TEAM_STAT_PAGES:
		v = t->mem.nr_pages;
		break;
	}
	spin_unlock(&t->lock);
	return v;
}

#define DFG_TEAM_ATTR(_name, _stat)					\
static ssize_t _name##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%llu\n", (unsigned long long)		\
			  dfg_team_stat(dfg_kobj_team(kobj), _stat));	\
}									\
static struct kobj_attribute dfg_tattr_##_name = __ATTR_RO(_name)

DFG_TEAM_ATTR(size, DFG_TEAM_STAT_SIZE);
DFG_TEAM_ATTR(joined, DFG_TEAM_STAT_JOINED);
DFG_TEAM_ATTR(waits, DFG_TEAM_STAT_WAITS);
DFG_TEAM_ATTR(wakes, DFG_TEAM_STAT_WAKES);
DFG_TEAM_ATTR(pages, DFG_TEAM_STAT_PAGES);

static struct kobj_attribute dfg_tattr_name = __ATTR_RO(name);
static struct kobj_attribute dfg_tattr_state = __ATTR_RO(state);
static struct kobj_attribute dfg_tattr_dead_rank = __ATTR_RO(dead_rank);

static struct attribute *dfg_team_attrs[] = {
	&dfg_tattr_name.attr,
	&dfg_tattr_size.attr,
	&dfg_tattr_joined.attr,
	&dfg_tattr_state.attr,
	&dfg_tattr_dead_rank.attr,
	&dfg_tattr_waits.attr,
	&dfg_tattr_wakes.attr,
	&dfg_tattr_pages.attr,
	NULL,
};
ATTRIBUTE_GROUPS(dfg_team);

/* Last team reference: no member, mapping, link or reader is left. */
static void dfg_team_kobj_release(struct kobject *kobj)
{
	struct dfg_team *t = dfg_kobj_team(kobj);

	/* ->watching is false: no member; a last run may still be queued. */
	cancel_delayed_work_sync(&t->watch);
	if (t->base)
		vunmap(t->base);
	if (t->mem.pages) {
		atomic_long_sub(t->mem.nr_pages, &t->graph->pages);
		dfg_mem_free(&t->mem);
	}
	dfg_obj_uncharge(&t->obj);
	kobject_put(&t->graph->kobj);
	kfree(t);
}

static const struct kobj_type dfg_team_ktype = {
	.release	= dfg_team_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= dfg_team_groups,
};

/* ------------------------------------------------------------------------
 * JOIN and LEAVE
 * ------------------------------------------------------------------------
 */

/*
 * A linked team named @name of @g; caller holds dfg_teams_lock, so no
 * team leaves meanwhile. The walk holds the xarray's lock: a region may
 * be unexported (hidden under that lock, then freed) while we look.
 */
static struct dfg_team *dfg_team_find(struct dfg_graph *g, const char *name)
{
	struct dfg_team *found = NULL;
	struct dfg_object *obj;
	unsigned long id;

	lockdep_assert_held(&dfg_teams_lock);
	xa_lock(&g->objects);
	xa_for_each(&g->objects, id, obj) {
		struct dfg_team *t;

		if (obj->ops->kind != DFG_OBJ_TEAM)
			continue;
		t = container_of(obj, struct dfg_team, obj);
		if (t->linked && !strcmp(t->name, name)) {
			found = t;
			break;
		}
	}
	xa_unlock(&g->objects);
	return found;
}

static void dfg_team_init_hdr(struct dfg_team *t)
{
	struct dfg_team_hdr *h = dfg_team_hdr(t);

	h->magic = DFG_TEAM_MAGIC;
	h->team_size = t->team_size;
	h->id = t->obj.id;
	h->ctl_size = t->ctl_size;
	h->map_size = t->map_size;
	h->state = t->state;
	h->dead_rank = t->dead_rank;
}

/*
 * Create the team @a asks for in @g, linked and in sysfs, without
 * members. Caller holds dfg_teams_lock (nobody else may create the name).
 */
static struct dfg_team *dfg_team_create(struct dfg_graph *g,
					const struct dfg_team_join *a)
{
	struct dfg_team *t;
	unsigned int i;
	int ret;

	lockdep_assert_held(&dfg_teams_lock);
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t)
		return ERR_PTR(-ENOMEM);
	/* From here on kobject_put() frees, through the release. */
	kobject_init(&t->kobj, &dfg_team_ktype);
	kobject_get(&g->kobj);
	t->graph = g;
	strscpy(t->name, a->name, sizeof(t->name));
	t->team_size = a->team_size;
	t->ctl_size = a->ctl_size;
	t->map_size = PAGE_ALIGN(DFG_TEAM_CTL_OFFSET + a->ctl_size);
	spin_lock_init(&t->lock);
	for (i = 0; i < DFG_TEAM_BUCKETS; i++)
		INIT_LIST_HEAD(&t->waiters[i]);
	t->state = DFG_TEAM_S_ACTIVE;
	t->dead_rank = DFG_TEAM_NO_RANK;
	INIT_DELAYED_WORK(&t->watch, dfg_team_watch);

	ret = dfg_mem_alloc(&t->mem, t->map_size >> PAGE_SHIFT);
	if (ret) {
		t->mem.pages = NULL;
		goto out_put;
	}
	atomic_long_add(t->mem.nr_pages, &g->pages);
	t->base = vmap(t->mem.pages, t->mem.nr_pages, VM_MAP, PAGE_KERNEL);
	if (!t->base) {
		ret = -ENOMEM;
		goto out_put;
	}

	ret = dfg_graph_reserve_object(g, &t->obj, &dfg_team_obj_ops);
	if (ret < 0)
		goto out_put;
	dfg_team_init_hdr(t);
	/* Directory first: nobody reaches the team before publication. */
	ret = dfg_obj_add_dir(&t->obj, &t->kobj);
	if (ret)
		goto out_unreserve;
	t->in_sysfs = true;
	ret = dfg_graph_publish_object(g, &t->obj);
	if (ret)
		goto out_del;
	t->linked = true;

	trace_dfg_team_create(g->id, t->obj.id, t->mem.nr_pages);
	return t;

out_del:
	kobject_del(&t->kobj);
	t->in_sysfs = false;
out_unreserve:
	dfg_graph_unreserve_id(g, t->obj.id);
out_put:
	kobject_put(&t->kobj);
	return ERR_PTR(ret);
}

/*
 * Take @t out of its live graph: hide the entry, remove the directory,
 * give the id back. Caller holds dfg_teams_lock and a graph reference.
 */
static void dfg_team_unlink(struct dfg_team *t)
{
	struct dfg_graph *g = t->graph;

	lockdep_assert_held(&dfg_teams_lock);
	xa_lock(&g->objects);
	dfg_graph_hide_object_locked(g, &t->obj);
	xa_unlock(&g->objects);
	t->linked = false;
	if (t->in_sysfs) {
		kobject_del(&t->kobj);
		t->in_sysfs = false;
	}
	dfg_graph_unreserve_id(g, t->obj.id);
}

/* Put @m in @t at its rank; caller holds dfg_teams_lock. */
static int dfg_team_attach(struct dfg_team *t, struct dfg_team_member *m,
			   const struct dfg_team_join *a)
{
	int ret = 0;

	lockdep_assert_held(&dfg_teams_lock);
	spin_lock(&t->lock);
	if (t->state != DFG_TEAM_S_ACTIVE) {
		ret = -EOWNERDEAD;
		goto out_unlock;
	}
	if (a->team_size != t->team_size || a->ctl_size != t->ctl_size) {
		ret = -EINVAL;
		goto out_unlock;
	}
	if (t->ranks & BIT_ULL(a->rank)) {
		ret = -EADDRINUSE;
		goto out_unlock;
	}
	/* The member's reference, put at its descriptor's release. */
	kobject_get(&t->kobj);
	m->team = t;
	m->rank = a->rank;
	m->joined = true;
	t->members[a->rank] = m;
	t->ranks |= BIT_ULL(a->rank);
	t->joined++;
	t->generation++;
	if (t->joined == t->team_size)
		t->formed++;
	dfg_team_sync(t);
	if (!t->watching) {
		t->watching = true;
		dfg_team_watch_kick(t);
	}
out_unlock:
	spin_unlock(&t->lock);
	return ret;
}

/*
 * Find or create the team @c asks for and put @m in it, once the caller
 * has the team's id: the struct is copied out with dfg_teams_lock dropped
 * (the copy may fault, and the lock is every team's), before @m is in the
 * team, so a caller that cannot take the result changes no team. A team
 * made here stays only if someone joined it meanwhile. Returns the team
 * or an ERR_PTR; *@created says whether this call made it.
 */
static struct dfg_team *dfg_team_join_copy_out(struct dfg_cmd_ctx *c,
					       struct dfg_team_member *m,
					       bool *created)
{
	struct dfg_team_join *a = c->args;
	struct dfg_graph *g = dfg_cmd_graph(c);
	struct dfg_team *t;
	int ret;

	mutex_lock(&dfg_teams_lock);
	for (;;) {
		*created = false;
		t = dfg_team_find(g, a->name);
		if (!t) {
			t = dfg_team_create(g, a);
			if (IS_ERR(t)) {
				mutex_unlock(&dfg_teams_lock);
				return t;
			}
			*created = true;
		}
		/* Ours while the lock is dropped; put below. */
		kobject_get(&t->kobj);
		mutex_unlock(&dfg_teams_lock);

		a->id = t->obj.id;
		a->map_size = t->map_size;
		ret = dfg_cmd_copy_out(c);

		mutex_lock(&dfg_teams_lock);
		/* Its last member left meanwhile: the id is stale, again. */
		if (ret || t->linked)
			break;
		kobject_put(&t->kobj);
	}
	if (!ret)
		ret = dfg_team_attach(t, m, a);
	if (ret && *created && t->linked && !t->joined) {
		/* Made for this call and joined by nobody: it never was. */
		dfg_team_unlink(t);
		kobject_put(&t->kobj);	/* the link's */
	}
	mutex_unlock(&dfg_teams_lock);
	kobject_put(&t->kobj);
	return ret ? ERR_PTR(ret) : t;
}

int dfg_team_join(struct dfg_cmd_ctx *c)
{
	struct dfg_team_join *a = c->args;
	struct dfg_graph *g = dfg_cmd_graph(c);
	struct dfg_team_member *m;
	struct dfg_team *t;
	struct file *file;
	bool created = false;
	int fd, ret;

	if (a->size != sizeof(*a) || a->flags || a->id || a->reserved0 ||
	    a->map_size || memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return -EINVAL;
	if (!dfg_name_valid(a->name))
		return -EINVAL;
	if (!a->team_size || a->team_size > DFG_TEAM_SIZE_MAX ||
	    a->rank >= a->team_size)
		return -EINVAL;
	if (a->ctl_size > DFG_TEAM_CTL_MAX ||
	    PAGE_ALIGN(DFG_TEAM_CTL_OFFSET + a->ctl_size) >
	    (u64)READ_ONCE(dfg_max_arena_mb) << 20)
		return -EFBIG;

	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return -ENOMEM;
	m->opener = get_task_pid(current, PIDTYPE_TGID);
	dfg_fd_init(&m->fd, DFG_FD_TEAM, &m->df);
	dfg_file_init(&m->df);

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto out_free_member;
	}
	/* From here on the file owns @m: its release undoes the above. */
	file = anon_inode_getfile("[dfg-team]", &dfg_team_fops, m, O_RDWR);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		put_unused_fd(fd);
		goto out_free_member;
	}

	t = dfg_team_join_copy_out(c, m, &created);
	if (IS_ERR(t)) {
		/* No team: the release only frees. */
		put_unused_fd(fd);
		fput(file);
		return PTR_ERR(t);
	}

	if (created)
		dfg_nl_graph_event(DFG_EV_TEAM_CREATE, task_tgid_nr(current),
				   g->id, t->obj.id, NULL);
	trace_dfg_team_join(g->id, t->obj.id, a->rank, task_tgid_nr(current));
	dfg_nl_team_event(DFG_EV_TEAM_JOIN, task_tgid_nr(current), g->id,
			  t->obj.id, a->rank);
	c->install = file;
	c->fd = fd;
	return fd;

out_free_member:
	dfg_file_fini(&m->df);
	put_pid(m->opener);
	kfree(m);
	return ret;
}

/*
 * Take @m out of its team: in order (@leave) or by its death, which
 * breaks the team. The last member out unlinks the team from its live
 * graph. Returns -ENOTCONN if @m was no member any more.
 *
 * Context: process context; takes dfg_teams_lock, may take and put a
 * graph reference (which may destroy the graph).
 */
static int dfg_team_detach(struct dfg_team_member *m, bool leave)
{
	struct dfg_team *t = m->team;
	struct dfg_graph *g = t->graph;
	bool broke = false, unlinked = false;
	u32 rank = m->rank;

	mutex_lock(&dfg_teams_lock);
	spin_lock(&t->lock);
	if (!m->joined) {
		spin_unlock(&t->lock);
		mutex_unlock(&dfg_teams_lock);
		return -ENOTCONN;
	}
	m->joined = false;
	t->members[rank] = NULL;
	t->ranks &= ~BIT_ULL(rank);
	t->joined--;
	t->generation++;
	if (!t->joined)
		t->watching = false;
	if (!leave)
		broke = dfg_team_break(t, rank);
	dfg_team_sync(t);
	spin_unlock(&t->lock);

	/* The graph reference keeps it alive while the team leaves it. */
	if (!t->joined && t->linked && kref_get_unless_zero(&g->ref)) {
		dfg_team_unlink(t);
		unlinked = true;
	}
	mutex_unlock(&dfg_teams_lock);

	if (broke)
		dfg_team_report_broken(t, rank, pid_nr(m->opener));
	if (leave) {
		trace_dfg_team_leave(g->id, t->obj.id, rank,
				     task_tgid_nr(current));
		dfg_nl_team_event(DFG_EV_TEAM_LEAVE, task_tgid_nr(current),
				  g->id, t->obj.id, rank);
	}
	if (unlinked) {
		trace_dfg_team_destroy(g->id, t->obj.id, t->mem.nr_pages);
		dfg_nl_graph_event(DFG_EV_TEAM_DESTROY, 0, g->id, t->obj.id,
				   NULL);
		/* The link's reference; members still hold theirs. */
		kobject_put(&t->kobj);
		dfg_graph_put(g);
	}
	return 0;
}

int dfg_team_leave(struct dfg_cmd_ctx *c)
{
	struct dfg_team_leave *a = c->args;

	if (a->flags || a->reserved0 ||
	    memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return -EINVAL;
	return dfg_team_detach(dfg_cmd_member(c), true);
}

/* ------------------------------------------------------------------------
 * WAIT and WAKE
 * ------------------------------------------------------------------------
 */

/* A word offset WAIT and WAKE accept: aligned, inside the mapping. */
static bool dfg_team_offset_ok(struct dfg_team *t, u64 offset)
{
	return !(offset & 3) && offset < t->map_size;
}

/* Why @m may not wait or wake now, or 0; caller holds ->lock. */
static int dfg_team_check(struct dfg_team *t, struct dfg_team_member *m)
{
	lockdep_assert_held(&t->lock);
	if (t->state == DFG_TEAM_S_DEAD)
		return -ECANCELED;
	if (!m->joined)
		return -ENOTCONN;
	return 0;
}

int dfg_team_wait(struct dfg_cmd_ctx *c)
{
	struct dfg_team_wait *a = c->args;
	struct dfg_team_member *m = dfg_cmd_member(c);
	struct dfg_team *t = m->team;
	struct dfg_team_waiter sleeper, *w;
	int ret;

	if (a->flags || memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return -EINVAL;
	if (!t)
		return -ENOTCONN;
	if (!dfg_team_offset_ok(t, a->offset))
		return -EINVAL;

	w = dfg_waiter_new(c, &sleeper, sizeof(sleeper),
			   offsetof(struct dfg_team_waiter, wait), &t->lock);
	if (!w)
		return -ENOMEM;
	w->offset = a->offset;
	w->value = a->value;
	if (a->timeout_ns > 0)
		dfg_waiter_timeout(&w->wait, a->timeout_ns, -ETIMEDOUT, 0);

	spin_lock(&t->lock);
	ret = dfg_team_check(t, m);
	if (!ret && t->state == DFG_TEAM_S_BROKEN)
		ret = -EOWNERDEAD;
	if (!ret && dfg_team_word(t, a->offset) != a->value)
		ret = 1;
	if (!ret && !a->timeout_ns)
		ret = -ETIMEDOUT;
	if (!ret)
		ret = dfg_waiter_arm(c, &w->wait,
				     dfg_team_bucket(t, a->offset));
	if (ret) {
		spin_unlock(&t->lock);
		dfg_waiter_discard(c, &w->wait);
		return ret;
	}
	t->waits++;
	spin_unlock(&t->lock);
	trace_dfg_team_wait(t->graph->id, t->obj.id, a->offset, a->value,
			    !!c->ucmd);
	return dfg_waiter_block(c, &w->wait);
}

int dfg_team_wake(struct dfg_cmd_ctx *c)
{
	struct dfg_team_wake *a = c->args;
	struct dfg_team_member *m = dfg_cmd_member(c);
	struct dfg_team *t = m->team;
	struct dfg_wake_batch later = { 0 };
	struct dfg_team_waiter *w, *tmp;
	u32 n = 0;
	int ret;

	if (a->flags || a->reserved0 ||
	    memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return -EINVAL;
	if (!t)
		return -ENOTCONN;
	if (!dfg_team_offset_ok(t, a->offset))
		return -EINVAL;

	spin_lock(&t->lock);
	ret = dfg_team_check(t, m);
	if (!ret) {
		/*
		 * Sleepers are woken after unlocking (the first
		 * DFG_WAKE_BATCH of them): a wakeup takes a while (runqueue
		 * locks, an IPI), during which every WAIT and WAKE of the
		 * team would spin on ->lock.
		 */
		list_for_each_entry_safe(w, tmp, dfg_team_bucket(t, a->offset),
					 wait.node)
			if (w->offset == a->offset)
				n += dfg_waiter_complete(&w->wait, 0, 0,
							 &later);
		t->wakes += n;
	}
	spin_unlock(&t->lock);
	dfg_wake_batch_flush(&later);
	if (ret)
		return ret;
	trace_dfg_team_wake(t->graph->id, t->obj.id, a->offset, n);
	return n;
}

/* ------------------------------------------------------------------------
 * Member descriptors
 * ------------------------------------------------------------------------
 */

/* Without LEAVE first, the member's end is a death: the team breaks. */
static int dfg_team_release(struct inode *inode, struct file *file)
{
	struct dfg_team_member *m = file->private_data;
	struct dfg_team *t = m->team;

	/* Nothing parked: parked commands pin the file. */
	dfg_file_fini(&m->df);
	if (t) {
		dfg_team_detach(m, false);
		kobject_put(&t->kobj);
	}
	put_pid(m->opener);
	kfree(m);
	return 0;
}

/*
 * mmap(member, 0, <= map_size), shared only: -EINVAL for another offset,
 * a longer length or MAP_PRIVATE; -ENOTCONN before the join completed.
 * The vma holds the file, hence the team and its pages.
 */
static int dfg_team_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct dfg_team_member *m = file->private_data;
	struct dfg_team *t = m->team;

	if (!t)
		return -ENOTCONN;
	return dfg_mem_mmap(&t->mem, vma);
}

static const struct file_operations dfg_team_fops = {
	DFG_FD_FOPS(dfg_team_release, dfg_team_mmap),
};

/* ------------------------------------------------------------------------
 * The graph's death (graph.c)
 * ------------------------------------------------------------------------
 */

/**
 * dfg_team_unpublish() - remove graphs/<gid>/team<id>
 * @obj: a team of a dying graph
 *
 * Context: under dfg_graphs_lock, before the graph's directory goes;
 * takes dfg_teams_lock and waits for attribute readers.
 */
static void dfg_team_unpublish(struct dfg_object *obj)
{
	struct dfg_team *t = container_of(obj, struct dfg_team, obj);

	mutex_lock(&dfg_teams_lock);
	if (t->in_sysfs) {
		kobject_del(&t->kobj);
		t->in_sysfs = false;
	}
	mutex_unlock(&dfg_teams_lock);
}

/**
 * dfg_team_destroy() - the graph of a team died
 * @obj: the team, already out of dfg_graph.objects
 *
 * Marks it dead (header DFG_TEAM_S_DEAD), ends every wait with
 * -ECANCELED and drops the link's reference; member descriptors and
 * mappings keep the control area until they go.
 *
 * Context: process context.
 */
static void dfg_team_destroy(struct dfg_object *obj)
{
	struct dfg_team *t = container_of(obj, struct dfg_team, obj);

	mutex_lock(&dfg_teams_lock);
	t->linked = false;
	mutex_unlock(&dfg_teams_lock);

	spin_lock(&t->lock);
	t->state = DFG_TEAM_S_DEAD;
	t->watching = false;
	dfg_team_complete_all(t, -ECANCELED);
	dfg_team_sync(t);
	spin_unlock(&t->lock);

	trace_dfg_team_destroy(t->graph->id, obj->id, t->mem.nr_pages);
	dfg_nl_graph_event(DFG_EV_TEAM_DESTROY, 0, t->graph->id, obj->id,
			   NULL);
	kobject_put(&t->kobj);
}

static const struct dfg_obj_ops dfg_team_obj_ops = {
	.kind		= DFG_OBJ_TEAM,
	.name		= "team",
	.unpublish	= dfg_team_unpublish,
	.destroy	= dfg_team_destroy,
};
