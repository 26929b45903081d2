// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - dfg.ko: module parameters, /dev/dfg, module init and exit.
 *
 * Objects
 *   dfg_misc		the misc device /dev/dfg; registered last at init,
 *			first at exit. Open files hold the module (fops
 *			.owner), so exit never runs with a file open.
 *   struct dfg_dev	per open file, its private_data: the descriptor
 *			header and the dfg_file (dfg.h) of its parked
 *			commands. Allocated in dfg_open(), freed in
 *			dfg_release(), which the VFS calls once when the last
 *			reference to the file goes. Parked commands hold file
 *			references through their io_uring requests, so none
 *			is parked by then.
 *   dfg_files		every dfg_file, under dfg_files_lock (a mutex: open,
 *			release and the wait monitor are process context;
 *			lock order: see dfg.h).
 *   dfg_nr_clients	open files; atomic so sysfs and netlink read it
 *			without the mutex.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "dfg.h"

#define DFG_MAX_PARKED_DEFAULT	1024
#define DFG_MAX_PARKED_LIMIT	1048576
#define DFG_MONITOR_MS_DEFAULT	100
#define DFG_MONITOR_MS_MIN	10
#define DFG_MONITOR_MS_MAX	10000
#define DFG_MAX_GRAPHS_DEFAULT	1024
#define DFG_MAX_GRAPHS_LIMIT	65536
#define DFG_MAX_ARENA_MB_DEFAULT 1024
/* dfg.max_total_mb unless given at load: this percentage of RAM. */
#define DFG_MAX_TOTAL_RAM_PCT	50
#define DFG_MB_LIMIT		1048576U	/* MiB: 1 TiB */
#define DFG_RESERVE_PCT_DEFAULT	10
#define DFG_RESERVE_PCT_MAX	50
#define DFG_USER_MAX_LIMIT	1048576U

unsigned int dfg_max_parked = DFG_MAX_PARKED_DEFAULT;
unsigned int dfg_monitor_ms = DFG_MONITOR_MS_DEFAULT;
unsigned int dfg_max_graphs = DFG_MAX_GRAPHS_DEFAULT;
unsigned int dfg_max_arena_mb = DFG_MAX_ARENA_MB_DEFAULT;
unsigned int dfg_max_total_mb;	/* 0 until load: see dfg_init() */
unsigned int dfg_reserve_pct = DFG_RESERVE_PCT_DEFAULT;
unsigned int dfg_user_max[DFG_LIM_NR] = {
	[DFG_LIM_GRAPH]		= 256,
	[DFG_OBJ_ARENA]		= 1024,
	[DFG_OBJ_REGION]	= 1024,
	[DFG_OBJ_CHAN]		= 4096,
	[DFG_OBJ_TEAM]		= 1024,
	[DFG_OBJ_SET]		= 1024,
};

static int dfg_param_set_max_parked(const char *val,
				    const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, DFG_MAX_PARKED_LIMIT);
}

static const struct kernel_param_ops dfg_max_parked_ops = {
	.set = dfg_param_set_max_parked,
	.get = param_get_uint,
};

module_param_cb(max_parked, &dfg_max_parked_ops, &dfg_max_parked, 0644);
MODULE_PARM_DESC(max_parked,
		 "Limit of parked commands per open file, 1..1048576 (default 1024)");

static int dfg_param_set_monitor_ms(const char *val,
				    const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, DFG_MONITOR_MS_MIN,
				     DFG_MONITOR_MS_MAX);
}

static const struct kernel_param_ops dfg_monitor_ms_ops = {
	.set = dfg_param_set_monitor_ms,
	.get = param_get_uint,
};

module_param_cb(monitor_ms, &dfg_monitor_ms_ops, &dfg_monitor_ms, 0644);
MODULE_PARM_DESC(monitor_ms,
		 "Period of the task-exit check of parked commands in ms, 10..10000 (default 100)");

/*
 * Limits on graphs and arenas. Lowering one affects new graphs and arenas
 * only: nothing that exists is taken away.
 */
static int dfg_param_set_max_graphs(const char *val,
				    const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, DFG_MAX_GRAPHS_LIMIT);
}

static const struct kernel_param_ops dfg_max_graphs_ops = {
	.set = dfg_param_set_max_graphs,
	.get = param_get_uint,
};

module_param_cb(max_graphs, &dfg_max_graphs_ops, &dfg_max_graphs, 0644);
MODULE_PARM_DESC(max_graphs,
		 "Limit of live graphs, 1..65536 (default 1024)");

static int dfg_param_set_mb(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, DFG_MB_LIMIT);
}

static const struct kernel_param_ops dfg_mb_ops = {
	.set = dfg_param_set_mb,
	.get = param_get_uint,
};

module_param_cb(max_arena_mb, &dfg_mb_ops, &dfg_max_arena_mb, 0644);
MODULE_PARM_DESC(max_arena_mb,
		 "Largest arena in MiB, 1..1048576 (default 1024)");
module_param_cb(max_total_mb, &dfg_mb_ops, &dfg_max_total_mb, 0644);
MODULE_PARM_DESC(max_total_mb,
		 "Limit of all arenas, channels, teams and sets together in MiB, 1..1048576 (default half of RAM at load)");

/*
 * Per-user limits (limits.c): how many of each kind one user may hold;
 * CAP_SYS_RESOURCE callers are not held to them. 0 leaves the kind to
 * privileged callers.
 */
static int dfg_param_set_user_max(const char *val,
				  const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, DFG_USER_MAX_LIMIT);
}

static const struct kernel_param_ops dfg_user_max_ops = {
	.set = dfg_param_set_user_max,
	.get = param_get_uint,
};

#define DFG_USER_PARAM(_name, _kind, _what)				\
	module_param_cb(max_user_##_name, &dfg_user_max_ops,		\
			&dfg_user_max[_kind], 0644);			\
	MODULE_PARM_DESC(max_user_##_name,				\
			 "Limit of " _what " one user holds, 0..1048576")

DFG_USER_PARAM(graphs, DFG_LIM_GRAPH, "graphs (default 256)");
DFG_USER_PARAM(arenas, DFG_OBJ_ARENA, "arenas (default 1024)");
DFG_USER_PARAM(regions, DFG_OBJ_REGION, "exported regions (default 1024)");
DFG_USER_PARAM(chans, DFG_OBJ_CHAN, "channels (default 4096)");
DFG_USER_PARAM(teams, DFG_OBJ_TEAM, "teams (default 1024)");
DFG_USER_PARAM(sets, DFG_OBJ_SET, "scheduler sets (default 1024)");

static int dfg_param_set_reserve_pct(const char *val,
				     const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, DFG_RESERVE_PCT_MAX);
}

static const struct kernel_param_ops dfg_reserve_pct_ops = {
	.set = dfg_param_set_reserve_pct,
	.get = param_get_uint,
};

module_param_cb(reserve_pct, &dfg_reserve_pct_ops, &dfg_reserve_pct, 0644);
MODULE_PARM_DESC(reserve_pct,
		 "Percent of max_graphs and max_total_mb only CAP_SYS_RESOURCE callers may use, 0..50 (default 10)");

/* Protects dfg_files; taken by open, release and the wait monitor. */
DEFINE_MUTEX(dfg_files_lock);
LIST_HEAD(dfg_files);
atomic_t dfg_nr_clients = ATOMIC_INIT(0);

/**
 * dfg_file_init() - set up a dfg_file and put it on dfg_files
 * @df: zeroed; a /dev/dfg file's or one embedded in a channel endpoint
 *
 * From here on the wait monitor walks its parked commands.
 *
 * Context: process context; takes dfg_files_lock.
 */
void dfg_file_init(struct dfg_file *df)
{
	spin_lock_init(&df->lock);
	INIT_LIST_HEAD(&df->parked);
	df->tgid = task_tgid_nr(current);

	mutex_lock(&dfg_files_lock);
	list_add_tail(&df->node, &dfg_files);
	mutex_unlock(&dfg_files_lock);
}

/**
 * dfg_file_fini() - take a dfg_file off dfg_files
 * @df: set up by dfg_file_init(), nothing parked on it (parked commands
 *	pin the file whose release calls this)
 *
 * Context: process context; takes dfg_files_lock.
 */
void dfg_file_fini(struct dfg_file *df)
{
	mutex_lock(&dfg_files_lock);
	list_del(&df->node);
	mutex_unlock(&dfg_files_lock);
	WARN_ON_ONCE(!list_empty(&df->parked));
}

/**
 * struct dfg_dev - one open /dev/dfg, its file's private_data
 * @fd:		descriptor header (DFG_FD_DEV), first
 * @df:		its parked commands
 */
struct dfg_dev {
	struct dfg_fd		fd;
	struct dfg_file		df;
};

static_assert(offsetof(struct dfg_dev, fd) == 0);

static int dfg_open(struct inode *inode, struct file *file)
{
	struct dfg_dev *dev;
	int ret;

	ret = nonseekable_open(inode, file);
	if (ret)
		return ret;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL_ACCOUNT);
	if (!dev)
		return -ENOMEM;
	dfg_fd_init(&dev->fd, DFG_FD_DEV, &dev->df);
	dfg_file_init(&dev->df);
	file->private_data = dev;
	atomic_inc(&dfg_nr_clients);

	dfg_nl_event(DFG_EV_CLIENT_OPEN, dev->df.tgid, 0);
	return 0;
}

static int dfg_release(struct inode *inode, struct file *file)
{
	struct dfg_dev *dev = file->private_data;

	/* Parked commands pin the file: release cannot run before them. */
	dfg_file_fini(&dev->df);
	atomic_dec(&dfg_nr_clients);

	dfg_nl_event(DFG_EV_CLIENT_CLOSE, dev->df.tgid, 0);
	kfree(dev);
	return 0;
}

static const struct file_operations dfg_fops = {
	DFG_FD_FOPS(dfg_release, dfg_pf_mmap),
	.open		= dfg_open,
};

static struct miscdevice dfg_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= DFG_DEVICE_NAME,
	.fops	= &dfg_fops,
	.mode	= 0666,
};

/* Half of RAM, at least 1 MiB: arenas alone never fill the machine. */
static void __init dfg_max_total_init(void)
{
	unsigned long mb = totalram_pages() >> (20 - PAGE_SHIFT);

	mb = mb * DFG_MAX_TOTAL_RAM_PCT / 100;
	dfg_max_total_mb = clamp_t(unsigned long, mb, 1, DFG_MB_LIMIT);
}

static int __init dfg_init(void)
{
	int ret;

	if (!dfg_max_total_mb)
		dfg_max_total_init();

	ret = dfg_cmd_init();
	if (ret)
		return ret;

	ret = dfg_wait_init();
	if (ret)
		return ret;

	ret = dfg_sysfs_init();
	if (ret)
		goto out_wait_exit;

	ret = dfg_nl_init();
	if (ret)
		goto out_sysfs_exit;

	ret = dfg_pf_init();
	if (ret)
		goto out_nl_exit;

	ret = dfg_fb_init();
	if (ret)
		goto out_pf_exit;

	dfg_sched_init();
	ret = misc_register(&dfg_misc);
	if (ret)
		goto out_sched_exit;

	return 0;

out_sched_exit:
	dfg_sched_exit();
	dfg_fb_exit();
out_pf_exit:
	dfg_pf_exit();
out_nl_exit:
	dfg_nl_exit();
out_sysfs_exit:
	dfg_sysfs_exit();
out_wait_exit:
	dfg_wait_exit();
	return ret;
}

static void __exit dfg_exit(void)
{
	misc_deregister(&dfg_misc);
	dfg_sched_exit();
	dfg_fb_exit();
	dfg_pf_exit();
	dfg_nl_exit();
	dfg_limits_exit();
	dfg_sysfs_exit();
	dfg_wait_exit();
}

module_init(dfg_init);
module_exit(dfg_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("dfg: kernel-assisted dataflow runtime");
MODULE_VERSION(DFG_VERSION);
