// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs.c - /sys/kernel/dfg/ and the counters behind stats/.
 *
 *   version, api_version, features	module identity (features in hex)
 *   clients, parked			open files, parked commands now
 *   stats/<cmd>			commands of that name executed
 *   stats/errors			commands that returned an error
 *   stats/canceled			parked commands canceled
 *
 * Objects: dfg_kobj, created at init under kernel_kobj and put at exit;
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
#include <linux/sysfs.h>

#include "dfg.h"

DEFINE_PER_CPU(struct dfg_stats, dfg_stats);

static struct kobject *dfg_kobj;

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
	return sysfs_emit(buf, "%#llx\n", (unsigned long long)DFG_F_ALL);
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

static struct kobj_attribute dfg_attr_version = __ATTR_RO(version);
static struct kobj_attribute dfg_attr_api_version = __ATTR_RO(api_version);
static struct kobj_attribute dfg_attr_features = __ATTR_RO(features);
static struct kobj_attribute dfg_attr_clients = __ATTR_RO(clients);
static struct kobj_attribute dfg_attr_parked = __ATTR_RO(parked);

static struct attribute *dfg_attrs[] = {
	&dfg_attr_version.attr,
	&dfg_attr_api_version.attr,
	&dfg_attr_features.attr,
	&dfg_attr_clients.attr,
	&dfg_attr_parked.attr,
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
	NULL,
};

static void dfg_stats_attrs_init(void)
{
	unsigned int i;

	for (i = 0; i < DFG_STAT_NR; i++) {
		struct dfg_stat_attr *sa = &dfg_stat_attrs[i];

		if (i < DFG_CMD_NR)
			sa->attr.attr.name = dfg_cmd_name(i);
		else if (i == DFG_STAT_ERRORS)
			sa->attr.attr.name = "errors";
		else
			sa->attr.attr.name = "canceled";
		sa->attr.attr.mode = 0444;
		sa->attr.show = dfg_stat_show;
		sa->idx = i;
		sysfs_attr_init(&sa->attr.attr);
		dfg_stats_attrs[i] = &sa->attr.attr;
	}
	dfg_stats_attrs[DFG_STAT_NR] = NULL;
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
	return 0;

out_put_kobj:
	kobject_put(dfg_kobj);
	return ret;
}

void dfg_sysfs_exit(void)
{
	sysfs_remove_groups(dfg_kobj, dfg_groups);
	kobject_put(dfg_kobj);
}
