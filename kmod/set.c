// SPDX-License-Identifier: GPL-2.0
/*
 * set.c - the set object: a set's struct and reference, its sysfs
 * directories graphs/<gid>/set<id>/ and comp<i>/, its shared page, its
 * place in its graph (enter, leave, unpublish and destroy at the graph's
 * death). The scheduler that runs sets is sched.c; see its top for the
 * locks and references of a set and dfg.h for the lock order.
 *
 * ->in_graph and ->in_sysfs change under dfg_sched_mutex while the set is
 * published in its graph. Whoever takes it out owns them from then on,
 * and removes the directories without that mutex: the caller that hid
 * it (dfg_set_hide(), UNREGISTER or its client's release), or the
 * graph's death, after its hook has stopped every other change.
 *
 * Sysfs readers of a set take no lock: immutable fields, and u64
 * counters written under the client's lock and read whole (64-bit) with
 * READ_ONCE. They hold no reference either: kobject_del() drains them
 * (kernfs waits for every show() under way and fails later reads), and
 * every path removes the directories before it puts the graph's
 * reference, so whichever reference goes last, no show() runs on a freed
 * set or page. A comp<i>/ holds a set reference until its own release.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>

#include "sched.h"

static const struct dfg_obj_ops dfg_set_obj_ops;

static_assert(sizeof(struct dfg_set_page) <= DFG_SET_PAGE_SIZE);
static_assert(DFG_SET_PAGE_SIZE == PAGE_SIZE);
static_assert(offsetof(struct dfg_set_page, comps) == 64);

/* ------------------------------------------------------------------------
 * sysfs: graphs/<gid>/set<id>/ and its comp<i>/
 * ------------------------------------------------------------------------
 */

static struct dfg_set *dfg_kobj_set(struct kobject *kobj)
{
	return container_of(kobj, struct dfg_set, kobj);
}

static const char * const dfg_set_state_names[] = {
	[DFG_SET_S_READY]	= "ready",
	[DFG_SET_S_RUNNING]	= "running",
	[DFG_SET_S_WAITING]	= "waiting",
	[DFG_SET_S_DONE]	= "done",
	[DFG_SET_S_FAILED]	= "failed",
};

static ssize_t name_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", dfg_kobj_set(kobj)->name);
}

static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	u32 state = READ_ONCE(dfg_kobj_set(kobj)->state);

	return sysfs_emit(buf, "%s\n", dfg_set_state_names[state]);
}

static ssize_t cpumask_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%llx\n",
			  (unsigned long long)dfg_kobj_set(kobj)->cpumask);
}

#define DFG_SET_ATTR(_name, _expr)					\
static ssize_t _name##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	struct dfg_set *set = dfg_kobj_set(kobj);			\
									\
	return sysfs_emit(buf, "%llu\n", (unsigned long long)(_expr));	\
}									\
static struct kobj_attribute dfg_sattr_##_name = __ATTR_RO(_name)

static struct kobj_attribute dfg_sattr_name = __ATTR_RO(name);
static struct kobj_attribute dfg_sattr_state = __ATTR_RO(state);
static struct kobj_attribute dfg_sattr_cpumask = __ATTR_RO(cpumask);
DFG_SET_ATTR(pid, set->tgid);
DFG_SET_ATTR(flags, set->flags);
DFG_SET_ATTR(priority, set->priority);
DFG_SET_ATTR(quantum, set->quantum);
DFG_SET_ATTR(components, set->nr_comps);
DFG_SET_ATTR(runs, READ_ONCE(set->runs));
DFG_SET_ATTR(waits, READ_ONCE(set->waits));
DFG_SET_ATTR(wakeups, READ_ONCE(set->wakeups));
DFG_SET_ATTR(run_ns, READ_ONCE(set->run_ns));
DFG_SET_ATTR(cpu_ns, READ_ONCE(set->cpu_ns));
DFG_SET_ATTR(samples, READ_ONCE(set->samples));
DFG_SET_ATTR(idle_ns, READ_ONCE(set->idle_ns));

static struct attribute *dfg_set_attrs[] = {
	&dfg_sattr_name.attr,
	&dfg_sattr_state.attr,
	&dfg_sattr_cpumask.attr,
	&dfg_sattr_pid.attr,
	&dfg_sattr_flags.attr,
	&dfg_sattr_priority.attr,
	&dfg_sattr_quantum.attr,
	&dfg_sattr_components.attr,
	&dfg_sattr_runs.attr,
	&dfg_sattr_waits.attr,
	&dfg_sattr_wakeups.attr,
	&dfg_sattr_run_ns.attr,
	&dfg_sattr_cpu_ns.attr,
	&dfg_sattr_samples.attr,
	&dfg_sattr_idle_ns.attr,
	NULL,
};
ATTRIBUTE_GROUPS(dfg_set);

/* Last reference: no worker, watch, mapping or reader uses it any more. */
static void dfg_set_kobj_release(struct kobject *kobj)
{
	struct dfg_set *set = dfg_kobj_set(kobj);
	u32 i;

	if (set->ports)
		for (i = 0; i < set->nr_inputs + set->nr_outputs; i++)
			if (set->ports[i].watch.ch)
				dfg_chan_put(set->ports[i].watch.ch);
	kfree(set->ports);
	kfree(set->comps);
	if (set->page) {
		atomic_long_sub(set->mem.nr_pages, &set->graph->pages);
		dfg_mem_free(&set->mem);
	}
	dfg_obj_uncharge(&set->obj);
	kobject_put(&set->graph->kobj);
	kfree(set);
}

/* No default groups: see dfg_set_del_dirs(). */
static const struct kobj_type dfg_set_ktype = {
	.release	= dfg_set_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
};

static struct dfg_set_comp *dfg_kobj_comp(struct kobject *kobj)
{
	return container_of(kobj, struct dfg_set_comp, kobj);
}

static ssize_t comp_name_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", dfg_kobj_comp(kobj)->name);
}

/* Counters the worker keeps in the shared page: untrusted, as they are. */
#define DFG_COMP_ATTR(_name, _expr)					\
static ssize_t comp_##_name##_show(struct kobject *kobj,		\
				   struct kobj_attribute *attr,		\
				   char *buf)				\
{									\
	struct dfg_set_comp *comp = dfg_kobj_comp(kobj);		\
	struct dfg_set_comp_stats *st =					\
		&comp->set->page->comps[comp->idx];			\
									\
	return sysfs_emit(buf, "%llu\n", (unsigned long long)(_expr));	\
}									\
static struct kobj_attribute dfg_cattr_##_name =			\
	__ATTR(_name, 0444, comp_##_name##_show, NULL)

static struct kobj_attribute dfg_cattr_name =
	__ATTR(name, 0444, comp_name_show, NULL);
DFG_COMP_ATTR(elements_in, READ_ONCE(st->elems_in));
DFG_COMP_ATTR(bytes_in, READ_ONCE(st->bytes_in));
DFG_COMP_ATTR(elements_out, READ_ONCE(st->elems_out));
DFG_COMP_ATTR(bytes_out, READ_ONCE(st->bytes_out));

/* Figures the sampler keeps. */
#define DFG_COMP_KATTR(_name, _expr)					\
static ssize_t comp_##_name##_show(struct kobject *kobj,		\
				   struct kobj_attribute *attr,		\
				   char *buf)				\
{									\
	struct dfg_set_comp *comp = dfg_kobj_comp(kobj);		\
									\
	return sysfs_emit(buf, "%llu\n", (unsigned long long)(_expr));	\
}									\
static struct kobj_attribute dfg_cattr_##_name =			\
	__ATTR(_name, 0444, comp_##_name##_show, NULL)

DFG_COMP_KATTR(cpu_ns, READ_ONCE(comp->cpu_ns));
DFG_COMP_KATTR(samples, READ_ONCE(comp->samples));

static struct attribute *dfg_comp_attrs[] = {
	&dfg_cattr_name.attr,
	&dfg_cattr_elements_in.attr,
	&dfg_cattr_bytes_in.attr,
	&dfg_cattr_elements_out.attr,
	&dfg_cattr_bytes_out.attr,
	&dfg_cattr_cpu_ns.attr,
	&dfg_cattr_samples.attr,
	NULL,
};
ATTRIBUTE_GROUPS(dfg_comp);

static void dfg_comp_kobj_release(struct kobject *kobj)
{
	kobject_put(&dfg_kobj_comp(kobj)->set->kobj);
}

static const struct kobj_type dfg_comp_ktype = {
	.release	= dfg_comp_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
};

/*
 * Remove set<id>/ with its files and its first @nr_comps comp<i>/, waiting
 * for their readers: by whoever owns ->in_sysfs (see the top of this
 * file). The set's directory goes first, in one kernfs removal of the
 * whole tree: every sysfs removal takes the sysfs tree's one lock for
 * writing, and a kobject_del() of a kobject with default groups takes it
 * once per file, about forty times for a set of three components. A
 * thousand processes ending together queued on it past the hung-task
 * timeout. So the ktypes name no default groups (dfg_set_add_dirs()
 * adds the files itself), and the comps' kobject_del() below find their
 * nodes gone.
 */
static void dfg_set_del_dirs(struct dfg_set *set, u32 nr_comps)
{
	u32 i;

	kobject_del(&set->kobj);
	for (i = 0; i < nr_comps; i++) {
		kobject_del(&set->comps[i].kobj);
		kobject_put(&set->comps[i].kobj);
	}
	set->in_sysfs = false;
}

/* Add set<id>/ and its comp<i>/; under dfg_sched_mutex. */
static int dfg_set_add_dirs(struct dfg_set *set)
{
	u32 i;
	int ret;

	lockdep_assert_held(&dfg_sched_mutex);
	ret = dfg_obj_add_dir(&set->obj, &set->kobj);
	if (ret)
		return ret;
	/* Nobody reaches the set yet: its files may come after its directory. */
	ret = sysfs_create_groups(&set->kobj, dfg_set_groups);
	if (ret) {
		kobject_del(&set->kobj);
		return ret;
	}
	for (i = 0; i < set->nr_comps; i++) {
		struct dfg_set_comp *comp = &set->comps[i];

		/* The directory's set reference, put by its release. */
		kobject_get(&set->kobj);
		kobject_init(&comp->kobj, &dfg_comp_ktype);
		ret = kobject_add(&comp->kobj, &set->kobj, "comp%u", i);
		if (ret) {
			kobject_put(&comp->kobj);
			dfg_set_del_dirs(set, i);
			return ret;
		}
		ret = sysfs_create_groups(&comp->kobj, dfg_comp_groups);
		if (ret) {
			dfg_set_del_dirs(set, i + 1);
			return ret;
		}
	}
	set->in_sysfs = true;
	return 0;
}

/**
 * dfg_set_hide() - first step of @set leaving its graph before its death
 * @set: a set off its client, with the caller's reference
 * @graph_dead: its client's ->graph_dead
 *
 * Takes the set out of lookups, and so out of the graph's death, whose
 * walks see only published entries. The caller then owns what the graph
 * held: the directories, the id and the graph's reference, given up by
 * dfg_set_leave_graph() once it has dropped dfg_sched_mutex.
 *
 * Context: under dfg_sched_mutex, which orders this against the graph's
 * death hook (it sets @graph_dead before the death walks the objects).
 * Return: true if the caller must call dfg_set_leave_graph(); false if
 * the set is not in its graph or the graph is dying (its death does all).
 */
bool dfg_set_hide(struct dfg_set *set, bool graph_dead)
{
	struct dfg_graph *g = set->graph;

	lockdep_assert_held(&dfg_sched_mutex);
	if (graph_dead || !set->in_graph)
		return false;
	xa_lock(&g->objects);
	dfg_graph_hide_object_locked(g, &set->obj);
	xa_unlock(&g->objects);
	set->in_graph = false;
	return true;
}

/**
 * dfg_set_leave_graph() - second step: give up what the graph held
 * @set: a set dfg_set_hide() took out of its graph for the caller
 *
 * Stops its feedback, removes its directories (waiting for their
 * readers), gives its id back (only now: the next set with this id adds
 * its own directory) and drops the graph's reference. Nobody else
 * reaches these any more, so no lock: many processes leaving at once
 * (a thousand instances ending together) wait for their own sysfs
 * removals side by side, not one after another under dfg_sched_mutex.
 * A graph's death meanwhile may remove the graph's directory first;
 * the kobject core keeps the set's sysfs node for kobject_del().
 *
 * Context: process context, no lock of ours held; the caller's reference
 * keeps the set.
 */
void dfg_set_leave_graph(struct dfg_set *set)
{
	dfg_fb_del(&set->fb);
	if (set->in_sysfs)
		dfg_set_del_dirs(set, set->nr_comps);
	dfg_graph_unreserve_id(set->graph, set->obj.id);
	kobject_put(&set->kobj);	/* the graph's */
}

static int dfg_set_register_check(const struct dfg_set_register *a)
{
	if (a->size != sizeof(*a) || (a->flags & ~DFG_SET_F_ALL) ||
	    a->id || a->reserved0 || a->mmap_offset ||
	    memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return -EINVAL;
	if (!dfg_name_valid(a->name) || a->priority > DFG_SET_PRIO_MAX)
		return -EINVAL;
	if (!a->nr_comps || a->nr_comps > DFG_SET_COMPS_MAX ||
	    a->nr_inputs > DFG_SET_PORTS_MAX ||
	    a->nr_outputs > DFG_SET_PORTS_MAX)
		return -EINVAL;
	if (!a->nr_inputs && !(a->flags & DFG_SET_F_ROOT))
		return -EINVAL;
	if (!a->quantum || ((a->flags & DFG_SET_F_QUANTUM_NS) &&
			    a->quantum > DFG_SET_QUANTUM_NS_MAX))
		return -EINVAL;
	return 0;
}

/* CPUs of @mask that exist (all ones for 0), or 0 if none does. */
static u64 dfg_set_cpumask(u64 mask)
{
	u64 valid = 0;
	u32 cpu;

	if (!mask)
		return ~0ULL;
	for_each_possible_cpu(cpu)
		if (cpu < 64)
			valid |= BIT_ULL(cpu);
	return mask & valid;
}

/* Components' names from user memory into @set->comps. */
static int dfg_set_copy_comps(struct dfg_set *set, u64 uaddr)
{
	char (*names)[DFG_NAME_MAX];
	u32 i;
	int ret = 0;

	names = memdup_user(u64_to_user_ptr(uaddr),
			    (size_t)set->nr_comps * DFG_NAME_MAX);
	if (IS_ERR(names))
		return PTR_ERR(names);
	for (i = 0; i < set->nr_comps; i++) {
		if (!dfg_name_valid(names[i])) {
			ret = -EINVAL;
			break;
		}
		set->comps[i].set = set;
		set->comps[i].idx = i;
		strscpy(set->comps[i].name, names[i], DFG_NAME_MAX);
	}
	kfree(names);
	return ret;
}

int dfg_set_alloc_page(struct dfg_set *set)
{
	int ret = dfg_mem_alloc(&set->mem, 1);

	if (ret)
		return ret;
	atomic_long_add(1, &set->graph->pages);
	set->page = page_address(set->mem.pages[0]);
	set->page->magic = DFG_SET_MAGIC;
	set->page->nr_comps = set->nr_comps;
	set->page->active = DFG_SET_COMP_NONE;
	dfg_set_state(set, DFG_SET_S_WAITING);
	return 0;
}

/*
 * A new set for REGISTER's @a in @g: checked, its components named, its
 * port array allocated (sched.c takes the channels). Returns the set,
 * whose one reference is the caller's, or an ERR_PTR.
 */
struct dfg_set *dfg_set_new(struct dfg_graph *g,
			    const struct dfg_set_register *a)
{
	struct dfg_set *set;
	int ret;

	ret = dfg_set_register_check(a);
	if (ret)
		return ERR_PTR(ret);

	set = kzalloc(sizeof(*set), GFP_KERNEL_ACCOUNT);
	if (!set)
		return ERR_PTR(-ENOMEM);
	/* From here on kobject_put() frees, through the release. */
	kobject_init(&set->kobj, &dfg_set_ktype);
	kobject_get(&g->kobj);
	set->graph = g;
	INIT_LIST_HEAD(&set->client_node);
	INIT_LIST_HEAD(&set->ready_node);
	dfg_fb_obj_init(&set->fb, &set->obj);
	strscpy(set->name, a->name, sizeof(set->name));
	set->tgid = task_tgid_nr(current);
	set->flags = a->flags;
	set->priority = a->priority;
	set->quantum = a->quantum;
	set->nr_comps = a->nr_comps;
	set->cpumask = dfg_set_cpumask(a->cpumask);
	ret = -EINVAL;
	if (!set->cpumask)
		goto out_put;

	ret = -ENOMEM;
	set->comps = kcalloc(set->nr_comps, sizeof(*set->comps),
			     GFP_KERNEL_ACCOUNT);
	set->ports = kcalloc(a->nr_inputs + a->nr_outputs,
			     sizeof(*set->ports), GFP_KERNEL_ACCOUNT);
	if (!set->comps || (!set->ports && a->nr_inputs + a->nr_outputs))
		goto out_put;
	ret = dfg_set_copy_comps(set, a->comp_names);
	if (ret)
		goto out_put;
	return set;

out_put:
	kobject_put(&set->kobj);
	return ERR_PTR(ret);
}

/*
 * Give @set an id in its graph that nobody reaches yet (SET_REGISTER copies
 * it out before dfg_set_enter_graph()). Returns the id or a negative errno;
 * dfg_set_unreserve() gives it back if the set never enters the graph.
 */
int dfg_set_reserve(struct dfg_set *set)
{
	int ret;

	ret = dfg_graph_reserve_object(set->graph, &set->obj, &dfg_set_obj_ops);
	if (ret < 0)
		return ret;
	set->page->id = set->obj.id;
	return ret;
}

void dfg_set_unreserve(struct dfg_set *set)
{
	dfg_graph_unreserve_id(set->graph, set->obj.id);
}

/*
 * Under dfg_sched_mutex: give @set, with its reserved id, its directories
 * and its place in the graph, with the graph's reference. Returns the id
 * or a negative errno (the id stays reserved).
 */
int dfg_set_enter_graph(struct dfg_set *set)
{
	struct dfg_graph *g = set->graph;
	int ret;

	lockdep_assert_held(&dfg_sched_mutex);
	ret = dfg_set_add_dirs(set);
	if (ret)
		return ret;
	ret = dfg_graph_publish_object(g, &set->obj);
	if (ret) {
		dfg_set_del_dirs(set, set->nr_comps);
		return ret;
	}
	/* The graph's reference; the caller's becomes the client's. */
	kobject_get(&set->kobj);
	set->in_graph = true;
	dfg_fb_add(&set->fb);
	return set->obj.id;
}

/**
 * dfg_set_unpublish() - remove graphs/<gid>/set<id> and its comp<i>
 * @obj: a set of a dying graph, still published in it
 *
 * No dfg_sched_mutex: the death hook (sched.c) has set every client's
 * ->graph_dead under it, so no set enters the graph or hides from it any
 * more, and ->in_sysfs of a published set is the death's alone.
 *
 * Context: under dfg_graphs_lock, after the death hook and before the
 * graph's directory goes; waits for attribute readers (which take no
 * lock).
 */
static void dfg_set_unpublish(struct dfg_object *obj)
{
	struct dfg_set *set = container_of(obj, struct dfg_set, obj);

	if (set->in_sysfs)
		dfg_set_del_dirs(set, set->nr_comps);
}

/**
 * dfg_set_destroy() - the graph of a set died
 * @obj: the set, already out of dfg_graph.objects
 *
 * Drops the graph's reference; a client still holding the set keeps it
 * until it unregisters or closes.
 *
 * Context: process context.
 */
static void dfg_set_destroy(struct dfg_object *obj)
{
	struct dfg_set *set = container_of(obj, struct dfg_set, obj);

	dfg_fb_del(&set->fb);
	mutex_lock(&dfg_sched_mutex);
	set->in_graph = false;
	mutex_unlock(&dfg_sched_mutex);
	kobject_put(&set->kobj);
}

static const struct dfg_obj_ops dfg_set_obj_ops = {
	.kind		= DFG_OBJ_SET,
	.name		= "set",
	.unpublish	= dfg_set_unpublish,
	.destroy	= dfg_set_destroy,
};
