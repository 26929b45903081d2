// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs.c - /sys/kernel/dfg/ and the counters behind stats/.
 *
 *   version, api_version, features	module identity (features in hex)
 *   clients, parked			open files, parked commands now
 *   stats/<cmd>			commands of that name executed
 *   stats/errors			commands that returned an error
 *   stats/canceled			parked commands canceled
 *   pages				pages charged by all arenas and rings
 *					now (dfg.max_total_mb)
 *   resident				of those, pages allocated now (an
 *					arena's come at first touch)
 *   pinned				user pages pinned by exported regions now
 *   graphs/<id>/{name,uid,gid,mode,objects,pages,attached,plan_gen}
 *					one directory per live graph
 *   graphs/<id>/<kind><oid>/		one directory per object, named
 *					by its kind's dfg_obj_ops.name and
 *					owned by its kind's file
 *   users/<uid>/{graphs,arenas,regions,chans,teams,sets}
 *					what each user holding something
 *					holds now (limits.c owns the entries)
 *
 * Objects: dfg_graphs_kobj ("graphs") and dfg_users_kobj ("users"), like
 * dfg_kobj created at init and put at exit; graph files hold the module,
 * so no graph directory is left by then, and limits.c frees its entries
 * before. A graph's directory is the kobject embedded in its struct
 * dfg_graph (graph.c owns the rules): kobject_del() at the graph's death
 * drains readers, so show() never sees a dead graph, and the kobject's
 * release frees the graph. uid/gid are shown in the initial user
 * namespace. dfg_kobj, created at init under kernel_kobj and put at exit;
 * its one reference is the module's. dfg_stats, per-CPU counters without a
 * lock: writers only this_cpu_inc() their own CPU's copy (preempt and irq
 * safe), readers sum all CPUs. Per-CPU rather than atomic64_t because every
 * command bumps two counters and the command path should not bounce a
 * shared cache line between CPUs; the price is a sum per read. On 32-bit
 * kernels a read may tear a counter that is being incremented.
 *
 * The stats/<cmd> attributes come from the command table at init; the
 * arrays below are static and written once before the group is created.
 */
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uidgid.h>

#include "dfg.h"

DEFINE_PER_CPU(struct dfg_stats, dfg_stats);

static struct kobject *dfg_kobj;
static struct kobject *dfg_graphs_kobj;
static struct kobject *dfg_users_kobj;

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", DFG_VERSION);
}

static ssize_t api_version_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", DFG_API_VERSION);
}

static ssize_t features_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%#llx\n", (unsigned long long)DFG_F_IMPLEMENTED);
}

static ssize_t clients_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&dfg_nr_clients));
}

static ssize_t parked_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&dfg_nr_parked));
}

static ssize_t pages_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&dfg_total_pages));
}

static ssize_t resident_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&dfg_resident_pages));
}

static ssize_t pinned_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&dfg_pinned_pages));
}

static struct kobj_attribute dfg_attr_version = __ATTR_RO(version);
static struct kobj_attribute dfg_attr_api_version = __ATTR_RO(api_version);
static struct kobj_attribute dfg_attr_features = __ATTR_RO(features);
static struct kobj_attribute dfg_attr_clients = __ATTR_RO(clients);
static struct kobj_attribute dfg_attr_parked = __ATTR_RO(parked);
static struct kobj_attribute dfg_attr_pages = __ATTR_RO(pages);
static struct kobj_attribute dfg_attr_resident = __ATTR_RO(resident);
static struct kobj_attribute dfg_attr_pinned = __ATTR_RO(pinned);

static struct attribute *dfg_attrs[] = {
	&dfg_attr_version.attr,
	&dfg_attr_api_version.attr,
	&dfg_attr_features.attr,
	&dfg_attr_clients.attr,
	&dfg_attr_parked.attr,
	&dfg_attr_pages.attr,
	&dfg_attr_resident.attr,
	&dfg_attr_pinned.attr,
	NULL,
};

static const struct attribute_group dfg_group = {
	.attrs = dfg_attrs,
};

/* stats/: one counter per command slot, then errors and canceled. */
enum {
	DFG_STAT_ERRORS = DFG_CMD_NR,
	DFG_STAT_CANCELED,
	DFG_STAT_NR,
};

/**
 * struct dfg_stat_attr - one file in stats/
 * @attr:	the sysfs attribute
 * @idx:	command slot, or DFG_STAT_ERRORS / DFG_STAT_CANCELED
 */
struct dfg_stat_attr {
	struct kobj_attribute	attr;
	unsigned int		idx;
};

static u64 dfg_stat_sum(unsigned int idx)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct dfg_stats *s = per_cpu_ptr(&dfg_stats, cpu);

		if (idx < DFG_CMD_NR)
			sum += READ_ONCE(s->cmds[idx]);
		else if (idx == DFG_STAT_ERRORS)
			sum += READ_ONCE(s->errors);
		else
			sum += READ_ONCE(s->canceled);
	}
	return sum;
}

static ssize_t dfg_stat_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	struct dfg_stat_attr *sa = container_of(attr, struct dfg_stat_attr, attr);

	return sysfs_emit(buf, "%llu\n",
			  (unsigned long long)dfg_stat_sum(sa->idx));
}

static struct dfg_stat_attr dfg_stat_attrs[DFG_STAT_NR];
static struct attribute *dfg_stats_attrs[DFG_STAT_NR + 1];

static const struct attribute_group dfg_stats_group = {
	.name = "stats",
	.attrs = dfg_stats_attrs,
};

static const struct attribute_group *dfg_groups[] = {
	&dfg_group,
	&dfg_stats_group,
	&dfg_fb_group,
	NULL,
};

/* Holes in the command table get no file; the list is NULL-terminated. */
static void dfg_stats_attrs_init(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < DFG_STAT_NR; i++) {
		struct dfg_stat_attr *sa = &dfg_stat_attrs[i];

		if (i < DFG_CMD_NR)
			sa->attr.attr.name = dfg_cmd_name(i);
		else if (i == DFG_STAT_ERRORS)
			sa->attr.attr.name = "errors";
		else
			sa->attr.attr.name = "canceled";
		if (!sa->attr.attr.name)
			continue;
		sa->attr.attr.mode = 0444;
		sa->attr.show = dfg_stat_show;
		sa->idx = i;
		sysfs_attr_init(&sa->attr.attr);
		dfg_stats_attrs[n++] = &sa->attr.attr;
	}
	dfg_stats_attrs[n] = NULL;
}

/* graphs/<id>/: attributes of one graph */
static struct dfg_graph *dfg_kobj_graph(struct kobject *kobj)
{
	return container_of(kobj, struct dfg_graph, kobj);
}

static ssize_t name_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", dfg_kobj_graph(kobj)->name);
}

static ssize_t uid_show(struct kobject *kobj, struct kobj_attribute *attr,
			char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  from_kuid_munged(&init_user_ns,
					   dfg_kobj_graph(kobj)->uid));
}

static ssize_t gid_show(struct kobject *kobj, struct kobj_attribute *attr,
			char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  from_kgid_munged(&init_user_ns,
					   dfg_kobj_graph(kobj)->gid));
}

static ssize_t mode_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%04o\n", dfg_kobj_graph(kobj)->mode);
}

static ssize_t objects_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  atomic_read(&dfg_kobj_graph(kobj)->nr_objects));
}

static ssize_t graph_pages_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n",
			  atomic_long_read(&dfg_kobj_graph(kobj)->pages));
}

static ssize_t attached_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  atomic_read(&dfg_kobj_graph(kobj)->attached));
}

/* The runner's plan generation (FEEDBACK_SET DFG_FB_PLAN); empty: none. */
static ssize_t plan_gen_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	u64 gen = READ_ONCE(dfg_kobj_graph(kobj)->fb_plan_gen);

	if (gen == U64_MAX)
		return sysfs_emit(buf, "\n");
	return sysfs_emit(buf, "%llu\n", gen);
}

static struct kobj_attribute dfg_gattr_name = __ATTR_RO(name);
static struct kobj_attribute dfg_gattr_uid = __ATTR_RO(uid);
static struct kobj_attribute dfg_gattr_gid = __ATTR_RO(gid);
static struct kobj_attribute dfg_gattr_mode = __ATTR_RO(mode);
static struct kobj_attribute dfg_gattr_objects = __ATTR_RO(objects);
static struct kobj_attribute dfg_gattr_pages =
	__ATTR(pages, 0444, graph_pages_show, NULL);
static struct kobj_attribute dfg_gattr_attached = __ATTR_RO(attached);
static struct kobj_attribute dfg_gattr_plan_gen = __ATTR_RO(plan_gen);

static struct attribute *dfg_graph_attrs[] = {
	&dfg_gattr_name.attr,
	&dfg_gattr_uid.attr,
	&dfg_gattr_gid.attr,
	&dfg_gattr_mode.attr,
	&dfg_gattr_objects.attr,
	&dfg_gattr_pages.attr,
	&dfg_gattr_attached.attr,
	&dfg_gattr_plan_gen.attr,
	NULL,
};
ATTRIBUTE_GROUPS(dfg_graph);

static void dfg_graph_kobj_release(struct kobject *kobj)
{
	dfg_graph_free(dfg_kobj_graph(kobj));
}

static const struct kobj_type dfg_graph_ktype = {
	.release	= dfg_graph_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= dfg_graph_groups,
};

/**
 * dfg_sysfs_graph_init() - initialise the kobject of a new graph
 * @g: the graph, zeroed; kobject_put(&g->kobj) frees it from now on
 */
void dfg_sysfs_graph_init(struct dfg_graph *g)
{
	kobject_init(&g->kobj, &dfg_graph_ktype);
}

/**
 * dfg_sysfs_graph_add() - create graphs/<id>
 * @g: the graph, with its id set
 *
 * Return: 0 or a negative errno.
 */
int dfg_sysfs_graph_add(struct dfg_graph *g)
{
	return kobject_add(&g->kobj, dfg_graphs_kobj, "%u", g->id);
}

/**
 * dfg_sysfs_graph_del() - remove graphs/<id>; waits for readers
 * @g: the dying graph
 */
void dfg_sysfs_graph_del(struct dfg_graph *g)
{
	kobject_del(&g->kobj);
}

/*
 * users/<uid>/: one count per kind of a struct dfg_user (limits.c), read
 * without a lock; the directory goes (draining readers) before the entry.
 */
struct dfg_user_attr {
	struct kobj_attribute	attr;
	unsigned int		kind;
};

static ssize_t dfg_user_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	struct dfg_user *u = container_of(kobj, struct dfg_user, kobj);
	struct dfg_user_attr *ua = container_of(attr, struct dfg_user_attr,
						attr);

	return sysfs_emit(buf, "%d\n", atomic_read(&u->count[ua->kind]));
}

#define DFG_USER_ATTR(_name, _kind)					\
static struct dfg_user_attr dfg_uattr_##_name = {			\
	.attr = __ATTR(_name, 0444, dfg_user_show, NULL),		\
	.kind = (_kind),						\
}

DFG_USER_ATTR(graphs, DFG_LIM_GRAPH);
DFG_USER_ATTR(arenas, DFG_OBJ_ARENA);
DFG_USER_ATTR(regions, DFG_OBJ_REGION);
DFG_USER_ATTR(chans, DFG_OBJ_CHAN);
DFG_USER_ATTR(teams, DFG_OBJ_TEAM);
DFG_USER_ATTR(sets, DFG_OBJ_SET);

static struct attribute *dfg_user_attrs[] = {
	&dfg_uattr_graphs.attr.attr,
	&dfg_uattr_arenas.attr.attr,
	&dfg_uattr_regions.attr.attr,
	&dfg_uattr_chans.attr.attr,
	&dfg_uattr_teams.attr.attr,
	&dfg_uattr_sets.attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(dfg_user);

static void dfg_user_kobj_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct dfg_user, kobj));
}

static const struct kobj_type dfg_user_ktype = {
	.release	= dfg_user_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= dfg_user_groups,
};

/**
 * dfg_sysfs_user_add() - set up the kobject of @u and add users/<uid>
 * @u: a new entry, zeroed but for its uid; kobject_put(&u->kobj) frees
 *	it from now on, even on failure
 *
 * Return: 0 or a negative errno.
 */
int dfg_sysfs_user_add(struct dfg_user *u)
{
	return kobject_init_and_add(&u->kobj, &dfg_user_ktype, dfg_users_kobj,
				    "%u", from_kuid(&init_user_ns, u->uid));
}

/* Remove users/<uid> (waits for readers) and put the entry: frees it. */
void dfg_sysfs_user_del(struct dfg_user *u)
{
	kobject_del(&u->kobj);
	kobject_put(&u->kobj);
}

/* /sys/kernel/dfg, for subsystems that add a directory (prefetch.c). */
struct kobject *dfg_sysfs_kobj(void)
{
	return dfg_kobj;
}

int dfg_sysfs_init(void)
{
	int ret;

	dfg_stats_attrs_init();

	dfg_kobj = kobject_create_and_add("dfg", kernel_kobj);
	if (!dfg_kobj)
		return -ENOMEM;

	ret = sysfs_create_groups(dfg_kobj, dfg_groups);
	if (ret)
		goto out_put_kobj;

	dfg_graphs_kobj = kobject_create_and_add("graphs", dfg_kobj);
	if (!dfg_graphs_kobj) {
		ret = -ENOMEM;
		goto out_remove_groups;
	}
	dfg_users_kobj = kobject_create_and_add("users", dfg_kobj);
	if (!dfg_users_kobj) {
		ret = -ENOMEM;
		goto out_put_graphs;
	}
	return 0;

out_put_graphs:
	kobject_put(dfg_graphs_kobj);
out_remove_groups:
	sysfs_remove_groups(dfg_kobj, dfg_groups);
out_put_kobj:
	kobject_put(dfg_kobj);
	return ret;
}

void dfg_sysfs_exit(void)
{
	kobject_put(dfg_users_kobj);
	kobject_put(dfg_graphs_kobj);
	sysfs_remove_groups(dfg_kobj, dfg_groups);
	kobject_put(dfg_kobj);
}
