// SPDX-License-Identifier: GPL-2.0
/*
 * limits.c - per-user limits: how many graphs and objects of each kind
 * every user holds, against the dfg.max_user_* parameters, and the share
 * of the module-wide bounds (dfg.max_graphs, dfg.max_total_mb) that only
 * privileged callers may use.
 *
 * Why a table of our own rather than the kernel's ucounts (as user
 * namespaces use for theirs): inc_ucount() and dec_ucount() are not
 * exported to modules, and their kinds are the fixed enum ucount_type.
 *
 * The user is the caller's effective uid (as ucounts key theirs), seen
 * from the initial user namespace: graphs are module-wide.
 *
 * Privilege is CAP_SYS_RESOURCE in the initial namespace: the capability
 * whose meaning is "may go beyond resource limits and use reserved space"
 * (RLIMIT raises, ext4's reserved blocks, quota overrides), rather than
 * CAP_SYS_ADMIN, which says nothing about resources and would be one more
 * reason to hand out the catch-all. A privileged caller is not held to
 * its per-user limits (it is still counted) and may use the last
 * dfg.reserve_pct percent of the module-wide bounds, so root can create
 * after unprivileged users together took all they may. The capability is
 * checked only when a limit would be passed, so ordinary calls raise no
 * audit records and do not mark the task as having used privilege.
 *
 * Objects, locks and references
 *   dfg_users		hash table of struct dfg_user by uid; entries are
 *			added and removed only under dfg_users_lock, a
 *			mutex because adding an entry allocates and adds its
 *			sysfs directory users/<uid>/ (lock order: see dfg.h).
 *   struct dfg_user	one per user holding something. No reference count:
 *			every charge holds the entry (->total counts them),
 *			and whoever holds a charge may return it anywhere
 *			without a lock (object releases run in many
 *			contexts). An uncharge that takes ->total to zero
 *			schedules dfg_users_gc, which under the mutex frees
 *			every entry still at zero: charges raise ->total only
 *			under the mutex, so an entry the collector sees at
 *			zero has no holder and none can appear.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/hashtable.h>
#include <linux/math.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uidgid.h>
#include <linux/workqueue.h>

#include "dfg.h"

#define DFG_USERS_HASH_BITS	6

static DEFINE_MUTEX(dfg_users_lock);
static DEFINE_HASHTABLE(dfg_users, DFG_USERS_HASH_BITS); /* dfg_users_lock */

static void dfg_users_gc(struct work_struct *work);
static DECLARE_WORK(dfg_users_gc_work, dfg_users_gc);

/* May the caller pass a limit? See the top of this file. */
static bool dfg_privileged(void)
{
	return capable(CAP_SYS_RESOURCE);
}

/**
 * dfg_over_share() - would @want pass what the caller may use of @limit?
 * @want: the module-wide use the caller's request would make
 * @limit: the module-wide bound
 *
 * Unprivileged callers may use @limit less dfg.reserve_pct percent of it,
 * privileged ones all of it.
 *
 * Context: process context (may check a capability).
 * Return: true if the request must be refused.
 */
bool dfg_over_share(unsigned long want, unsigned long limit)
{
	unsigned long share;

	if (want > limit)
		return true;
	share = limit - mult_frac(limit, READ_ONCE(dfg_reserve_pct), 100);
	return want > share && !dfg_privileged();
}

/* Caller holds dfg_users_lock. */
static struct dfg_user *dfg_user_find(kuid_t uid)
{
	struct dfg_user *u;

	lockdep_assert_held(&dfg_users_lock);
	hash_for_each_possible(dfg_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/* A new entry for @uid in the table and in sysfs; dfg_users_lock held. */
static struct dfg_user *dfg_user_new(kuid_t uid)
{
	struct dfg_user *u;
	int ret;

	lockdep_assert_held(&dfg_users_lock);
	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u)
		return ERR_PTR(-ENOMEM);
	u->uid = uid;
	ret = dfg_sysfs_user_add(u);	/* kobject_put() frees from here on */
	if (ret) {
		kobject_put(&u->kobj);
		return ERR_PTR(ret);
	}
	hash_add(dfg_users, &u->node, __kuid_val(uid));
	return u;
}

/**
 * dfg_user_charge() - count one more @kind for the calling user
 * @kind: DFG_LIM_GRAPH or an enum dfg_obj_type
 *
 * Context: process context; takes dfg_users_lock.
 * Return: the user's entry, to give to dfg_user_uncharge() later, or
 * ERR_PTR(-EDQUOT) when the user holds dfg.max_user_<kind> already and
 * the caller is not privileged, or ERR_PTR(-ENOMEM).
 */
struct dfg_user *dfg_user_charge(unsigned int kind)
{
	kuid_t uid = current_euid();
	struct dfg_user *u;

	if (WARN_ON_ONCE(kind >= DFG_LIM_NR))
		return ERR_PTR(-EINVAL);
	mutex_lock(&dfg_users_lock);
	u = dfg_user_find(uid);
	if (!u) {
		u = dfg_user_new(uid);
		if (IS_ERR(u))
			goto out_unlock;
	}
	if (atomic_read(&u->count[kind]) >= READ_ONCE(dfg_user_max[kind]) &&
	    !dfg_privileged()) {
		/* A new entry at zero goes with the collector's next run. */
		if (!atomic_read(&u->total))
			schedule_work(&dfg_users_gc_work);
		u = ERR_PTR(-EDQUOT);
		goto out_unlock;
	}
	atomic_inc(&u->count[kind]);
	atomic_inc(&u->total);
out_unlock:
	mutex_unlock(&dfg_users_lock);
	return u;
}

/**
 * dfg_user_uncharge() - return one dfg_user_charge() of @kind
 * @u: the entry it returned
 * @kind: the same kind
 *
 * @u may be freed once this returns (when it was the user's last charge).
 *
 * Context: any; takes no lock.
 */
void dfg_user_uncharge(struct dfg_user *u, unsigned int kind)
{
	atomic_dec(&u->count[kind]);
	/* Last use of @u: the collector may free it from here on. */
	if (atomic_dec_and_test(&u->total))
		schedule_work(&dfg_users_gc_work);
}

/* Frees the entries that hold nothing; see the top of this file. */
static void dfg_users_gc(struct work_struct *work)
{
	struct hlist_node *tmp;
	struct dfg_user *u;
	int bkt;

	mutex_lock(&dfg_users_lock);
	hash_for_each_safe(dfg_users, bkt, tmp, u, node) {
		if (atomic_read(&u->total))
			continue;
		hash_del(&u->node);
		dfg_sysfs_user_del(u);	/* drains readers; the put frees */
	}
	mutex_unlock(&dfg_users_lock);
}

/*
 * Module exit: every file, hence every graph and object, is gone, so
 * every count is back to zero; free what the collector has not yet.
 */
void dfg_limits_exit(void)
{
	struct dfg_user *u;
	int bkt;

	cancel_work_sync(&dfg_users_gc_work);
	dfg_users_gc(NULL);
	mutex_lock(&dfg_users_lock);
	hash_for_each(dfg_users, bkt, u, node)
		WARN_ONCE(1, "dfg: uid %u still holds %d\n",
			  from_kuid(&init_user_ns, u->uid),
			  atomic_read(&u->total));
	mutex_unlock(&dfg_users_lock);
}
