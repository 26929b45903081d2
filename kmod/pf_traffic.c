// SPDX-License-Identifier: GPL-2.0
/*
 * pf_traffic.c - the traffic monitor of patent 004 (claim 10, para. 87):
 * per prefetch peer, the recent bytes per second on the link that reaches
 * it, and the gate that lets speculative prefetch (DFG_PF_SPECULATIVE)
 * read from a peer only while that link is quiet.
 *
 * The link, not dfg's own reads: at PEER_ADD the peer's address is routed
 * (IPv4 or IPv6, in init_net, where the transports connect) to its output
 * device, and every traffic_interval_ms the device's rx + tx byte counters
 * are read (dev_get_stats() on the device found by ifindex under RCU: no
 * reference is kept between samples, so a device may go at any time).
 * Whatever crosses that device counts: dfg's transport, Soft-RoCE's UDP
 * over the same Ethernet device, anyone's TCP. The rate of each interval
 * is smoothed by an exponentially weighted moving average of weight 1/4
 * per sample (rate += (sample - rate) / 4; a step settles to 90% in 8
 * samples). A device that is gone (or an address with no route) is looked
 * up again at each sample; meanwhile the peer's state is "gone", its
 * rate 0 and its gate closed: without a measurement, no speculation.
 *
 * The gate, with hysteresis: a quiet link turns busy when its rate reaches
 * traffic_threshold, a busy one quiet when its rate falls under 7/8 of it.
 * Speculative reads go to a peer only while its link is quiet. Threshold
 * 0 closes every gate (no rate is under 0), U64_MAX opens every known
 * link's. Each change between quiet and busy is a netlink event
 * (DFG_EV_PF_LINK_BUSY / _QUIET) and every sample a tracepoint
 * (dfg_pf_traffic).
 *
 * Objects
 *   dfg_pf_links[]	one per peer slot of prefetch.c (its peer id), used
 *			from dfg_pf_traffic_add() to dfg_pf_traffic_del().
 *   dfg_pf_traffic_dwork the sampler: queued while a slot is used; it
 *			queues itself again while one is.
 *
 * Locks (lock order: see dfg.h)
 *   dfg_pf_traffic_lock mutex, process context: the slots, the threshold
 *			and the interval. Taken under dfg_pf_mutex (add, del)
 *			and dfg_pf_rwsem (del of a replaced peer), or alone
 *			(the sampler, sysfs); takes none of ours, and RCU's
 *			read lock only inside. Events are sent after it is
 *			released.
 *   ->open		read without the lock by the gate (under dfg_pf_lock,
 *			a spinlock): WRITE_ONCE under dfg_pf_traffic_lock,
 *			READ_ONCE there. The gate is advisory; a decision one
 *			sample old is what a sampled monitor gives anyway.
 *   ->spec_issued, ->spec_gated atomic64: counted under dfg_pf_lock,
 *			shown under dfg_pf_traffic_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>

#include "dfg.h"
#include "trace.h"

enum { DFG_PF_LINK_QUIET, DFG_PF_LINK_BUSY, DFG_PF_LINK_GONE };

static const char * const dfg_pf_link_states[] = {
	[DFG_PF_LINK_QUIET] = "quiet",
	[DFG_PF_LINK_BUSY] = "busy",
	[DFG_PF_LINK_GONE] = "gone",
};

/*
 * struct dfg_pf_link - one peer's link
 * @used:	the slot has a peer
 * @open:	speculative reads may go to it (see the locks above)
 * @state:	DFG_PF_LINK_*
 * @ifindex:	its output device in init_net, 0 for none
 * @ifname:	that device's name at the last sample
 * @addr:	the peer's address, for routing it again
 * @last:	the device's rx + tx bytes at @last_ns
 * @last_ns:	time of the last sample (ktime_get_ns())
 * @rate:	EWMA of bytes per second
 * @total:	bytes counted since PEER_ADD
 * @spec_issued: speculative reads started to this peer
 * @spec_gated:	speculative entries of this peer not read
 */
struct dfg_pf_link {
	bool			used;
	bool			open;
	u8			state;
	int			ifindex;
	char			ifname[IFNAMSIZ];
	struct sockaddr_storage	addr;
	u64			last;
	u64			last_ns;
	u64			rate;
	u64			total;
	atomic64_t		spec_issued;
	atomic64_t		spec_gated;
};

/* A change of a gate, sent once dfg_pf_traffic_lock is released. */
struct dfg_pf_link_ev {
	u32	event;
	u32	peer;
	u64	rate;
};

static DEFINE_MUTEX(dfg_pf_traffic_lock);
static struct dfg_pf_link dfg_pf_links[DFG_PF_PEERS_MAX];
static u64 dfg_pf_traffic_thr = 64ULL << 20;	/* bytes/s */
static unsigned int dfg_pf_traffic_ms = 100;

static void dfg_pf_traffic_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(dfg_pf_traffic_dwork, dfg_pf_traffic_fn);

/* The output device of @ss in init_net: its ifindex, or 0 (no route). */
static int dfg_pf_link_route(const struct sockaddr_storage *ss)
{
	struct dst_entry *dst;
	int ifindex = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;
		struct flowi4 fl4 = { .daddr = sin->sin_addr.s_addr };
		struct rtable *rt = ip_route_output_key(&init_net, &fl4);

		if (IS_ERR(rt))
			return 0;
		ifindex = rt->dst.dev->ifindex;
		ip_rt_put(rt);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)ss;
		struct flowi6 fl6 = { .daddr = sin6->sin6_addr };

		/* The stub answers -EAFNOSUPPORT while ipv6 is not loaded. */
		dst = ipv6_stub->ipv6_dst_lookup_flow(&init_net, NULL, &fl6,
						      NULL);
		if (IS_ERR(dst))
			return 0;
		ifindex = dst->dev->ifindex;
		dst_release(dst);
	}
	return ifindex;
}

/*
 * The rx + tx bytes of device @ifindex, and its name; false if there is
 * no such device. RCU keeps the device while its counters are read
 * (dev_get_stats() does not sleep: /proc/net/dev calls it so too).
 */
static bool dfg_pf_link_bytes(int ifindex, u64 *bytes, char *name)
{
	struct rtnl_link_stats64 st;
	struct net_device *dev;

	if (!ifindex)
		return false;
	rcu_read_lock();
	dev = dev_get_by_index_rcu(&init_net, ifindex);
	if (dev) {
		dev_get_stats(dev, &st);
		*bytes = st.rx_bytes + st.tx_bytes;
		strscpy(name, dev->name, IFNAMSIZ);
	}
	rcu_read_unlock();
	return dev;
}

/*
 * Under dfg_pf_traffic_lock: @l's state against the threshold; an event
 * for slot @i into *@ev (returns true) when its gate changed: between
 * quiet and busy, or from gone to either.
 */
static bool dfg_pf_link_judge(struct dfg_pf_link *l, unsigned int i,
			      struct dfg_pf_link_ev *ev)
{
	u64 thr = dfg_pf_traffic_thr;
	u8 old = l->state, now;

	if (old == DFG_PF_LINK_BUSY)
		now = l->rate >= thr - thr / 8 ? DFG_PF_LINK_BUSY :
						  DFG_PF_LINK_QUIET;
	else
		now = l->rate >= thr ? DFG_PF_LINK_BUSY : DFG_PF_LINK_QUIET;
	l->state = now;
	WRITE_ONCE(l->open, now == DFG_PF_LINK_QUIET);
	if (now == old)
		return false;
	ev->event = now == DFG_PF_LINK_BUSY ? DFG_EV_PF_LINK_BUSY :
					      DFG_EV_PF_LINK_QUIET;
	ev->peer = i;
	ev->rate = l->rate;
	return true;
}

/* Under dfg_pf_traffic_lock: the link is gone (or not found again). */
static void dfg_pf_link_gone(struct dfg_pf_link *l)
{
	if (l->state != DFG_PF_LINK_GONE)
		pr_info("peer %u: no link device (was %d, %s)\n",
			(unsigned int)(l - dfg_pf_links), l->ifindex,
			l->ifname);
	l->state = DFG_PF_LINK_GONE;
	WRITE_ONCE(l->open, false);
	l->rate = 0;
	strscpy(l->ifname, "-", sizeof(l->ifname));
}

/*
 * Under dfg_pf_traffic_lock: start measuring @l afresh (at PEER_ADD, or
 * when its device came back): route it, read its device's counters.
 * Returns false if there is no device to measure.
 */
static bool dfg_pf_link_prime(struct dfg_pf_link *l)
{
	l->ifindex = dfg_pf_link_route(&l->addr);
	if (!dfg_pf_link_bytes(l->ifindex, &l->last, l->ifname))
		return false;
	l->last_ns = ktime_get_ns();
	l->rate = 0;
	return true;
}

/* Under dfg_pf_traffic_lock: one sample of slot @i. */
static bool dfg_pf_link_sample(unsigned int i, struct dfg_pf_link_ev *ev)
{
	struct dfg_pf_link *l = &dfg_pf_links[i];
	u64 bytes, now, delta, dt, inst;

	if (l->state == DFG_PF_LINK_GONE) {
		/* Routed again, measured from now on if found. */
		if (!dfg_pf_link_prime(l))
			return false;
		pr_info("peer %u: link device %d (%s)\n", i, l->ifindex,
			l->ifname);
		/* From gone, either state is a change of the gate. */
		return dfg_pf_link_judge(l, i, ev);
	}
	if (!dfg_pf_link_bytes(l->ifindex, &bytes, l->ifname)) {
		dfg_pf_link_gone(l);
		return false;
	}
	now = ktime_get_ns();
	/* A counter that went back (another device took the index). */
	delta = bytes >= l->last ? bytes - l->last : 0;
	dt = now - l->last_ns;
	inst = dt ? mul_u64_u64_div_u64(delta, NSEC_PER_SEC, dt) : 0;
	l->rate = l->rate - l->rate / 4 + inst / 4;
	l->total += delta;
	l->last = bytes;
	l->last_ns = now;
	trace_dfg_pf_traffic(i, l->ifindex, l->rate, delta);
	return dfg_pf_link_judge(l, i, ev);
}

static void dfg_pf_link_send(const struct dfg_pf_link_ev *evs, unsigned int n,
			     u64 thr)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct dfg_nl_ev ev = {
			.event = evs[i].event, .object = evs[i].peer,
			.rank = -1, .rate = evs[i].rate, .count = thr,
			.attrs = BIT(DFG_NL_A_RATE) | BIT(DFG_NL_A_COUNT),
		};

		dfg_nl_emit(&ev);
	}
}

static void dfg_pf_traffic_fn(struct work_struct *work)
{
	struct dfg_pf_link_ev evs[DFG_PF_PEERS_MAX];
	unsigned int i, n = 0, ms;
	bool any = false;
	u64 thr;

	mutex_lock(&dfg_pf_traffic_lock);
	for (i = 0; i < DFG_PF_PEERS_MAX; i++) {
		if (!dfg_pf_links[i].used)
			continue;
		any = true;
		if (dfg_pf_link_sample(i, &evs[n]))
			n++;
	}
	thr = dfg_pf_traffic_thr;
	ms = dfg_pf_traffic_ms;
	mutex_unlock(&dfg_pf_traffic_lock);
	dfg_pf_link_send(evs, n, thr);
	/* A del racing with this stops it next time: no slot then. */
	if (any)
		queue_delayed_work(system_wq, &dfg_pf_traffic_dwork,
				   msecs_to_jiffies(ms));
}

/**
 * dfg_pf_traffic_add() - measure the link to a new peer
 * @slot: its peer id
 * @ss: its address
 *
 * Context: process context, under dfg_pf_mutex.
 */
void dfg_pf_traffic_add(unsigned int slot, const struct sockaddr_storage *ss)
{
	struct dfg_pf_link *l = &dfg_pf_links[slot];
	struct dfg_pf_link_ev ev;
	unsigned int ms;

	mutex_lock(&dfg_pf_traffic_lock);
	/* Field by field: the gate may read ->open meanwhile. */
	WRITE_ONCE(l->open, false);
	l->addr = *ss;
	l->used = true;
	l->total = 0;
	atomic64_set(&l->spec_issued, 0);
	atomic64_set(&l->spec_gated, 0);
	strscpy(l->ifname, "-", sizeof(l->ifname));
	l->state = DFG_PF_LINK_QUIET;
	/* No event: the peer's first state (threshold 0: busy). */
	if (dfg_pf_link_prime(l))
		dfg_pf_link_judge(l, slot, &ev);
	else
		dfg_pf_link_gone(l);
	ms = dfg_pf_traffic_ms;
	mutex_unlock(&dfg_pf_traffic_lock);
	queue_delayed_work(system_wq, &dfg_pf_traffic_dwork,
			   msecs_to_jiffies(ms));
}

/**
 * dfg_pf_traffic_del() - stop measuring a peer's link
 * @slot: its peer id
 *
 * Context: process context, under dfg_pf_mutex (and dfg_pf_rwsem).
 */
void dfg_pf_traffic_del(unsigned int slot)
{
	mutex_lock(&dfg_pf_traffic_lock);
	dfg_pf_links[slot].used = false;
	WRITE_ONCE(dfg_pf_links[slot].open, false);
	mutex_unlock(&dfg_pf_traffic_lock);
}

/**
 * dfg_pf_traffic_open() - may a speculative read go to a peer now?
 * @slot: its peer id
 *
 * Context: any; lockless (see the file's comment).
 */
bool dfg_pf_traffic_open(unsigned int slot)
{
	return READ_ONCE(dfg_pf_links[slot].open);
}

/**
 * dfg_pf_traffic_count() - count a speculative request's entries
 * @slot: the peer id they belong to
 * @issued: reads started to it
 * @gated: entries not read
 */
void dfg_pf_traffic_count(unsigned int slot, u32 issued, u32 gated)
{
	atomic64_add(issued, &dfg_pf_links[slot].spec_issued);
	atomic64_add(gated, &dfg_pf_links[slot].spec_gated);
}

/* ---- sysfs prefetch/traffic* ---- */

static ssize_t traffic_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	unsigned int i;
	int n = 0;

	mutex_lock(&dfg_pf_traffic_lock);
	for (i = 0; i < DFG_PF_PEERS_MAX; i++) {
		const struct dfg_pf_link *l = &dfg_pf_links[i];

		if (!l->used)
			continue;
		n += sysfs_emit_at(buf, n, "%u %d %s %llu %llu %s %lld %lld\n",
				   i, l->ifindex, l->ifname, l->rate, l->total,
				   dfg_pf_link_states[l->state],
				   atomic64_read(&l->spec_issued),
				   atomic64_read(&l->spec_gated));
	}
	mutex_unlock(&dfg_pf_traffic_lock);
	return n;
}

static ssize_t traffic_threshold_show(struct kobject *kobj,
				      struct kobj_attribute *attr, char *buf)
{
	u64 v;

	mutex_lock(&dfg_pf_traffic_lock);
	v = dfg_pf_traffic_thr;
	mutex_unlock(&dfg_pf_traffic_lock);
	return sysfs_emit(buf, "%llu\n", v);
}

/* A new threshold judges every known link at once. */
static ssize_t traffic_threshold_store(struct kobject *kobj,
				       struct kobj_attribute *attr,
				       const char *buf, size_t len)
{
	struct dfg_pf_link_ev evs[DFG_PF_PEERS_MAX];
	unsigned int i, n = 0;
	u64 v;
	int ret;

	ret = kstrtou64(buf, 0, &v);
	if (ret)
		return ret;
	mutex_lock(&dfg_pf_traffic_lock);
	dfg_pf_traffic_thr = v;
	for (i = 0; i < DFG_PF_PEERS_MAX; i++) {
		struct dfg_pf_link *l = &dfg_pf_links[i];

		if (l->used && l->state != DFG_PF_LINK_GONE &&
		    dfg_pf_link_judge(l, i, &evs[n]))
			n++;
	}
	mutex_unlock(&dfg_pf_traffic_lock);
	dfg_pf_link_send(evs, n, v);
	return len;
}

static ssize_t traffic_interval_ms_show(struct kobject *kobj,
					struct kobj_attribute *attr,
					char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(dfg_pf_traffic_ms));
}

static ssize_t traffic_interval_ms_store(struct kobject *kobj,
					 struct kobj_attribute *attr,
					 const char *buf, size_t len)
{
	unsigned int v;
	int ret;

	ret = kstrtouint(buf, 0, &v);
	if (ret)
		return ret;
	if (v < 10 || v > 10000)
		return -EINVAL;
	mutex_lock(&dfg_pf_traffic_lock);
	WRITE_ONCE(dfg_pf_traffic_ms, v);
	mutex_unlock(&dfg_pf_traffic_lock);
	return len;
}

static struct kobj_attribute dfg_pf_attr_traffic = __ATTR_RO(traffic);
static struct kobj_attribute dfg_pf_attr_threshold =
	__ATTR_RW_MODE(traffic_threshold, 0644);
static struct kobj_attribute dfg_pf_attr_interval =
	__ATTR_RW_MODE(traffic_interval_ms, 0644);

static struct attribute *dfg_pf_traffic_attrs[] = {
	&dfg_pf_attr_traffic.attr,
	&dfg_pf_attr_threshold.attr,
	&dfg_pf_attr_interval.attr,
	NULL,
};

static const struct attribute_group dfg_pf_traffic_group = {
	.attrs = dfg_pf_traffic_attrs,
};

/* The files go into prefetch/ (@kobj). */
int dfg_pf_traffic_init(struct kobject *kobj)
{
	return sysfs_create_group(kobj, &dfg_pf_traffic_group);
}

/* No peer is left (prefetch.c's exit), so the sampler does not rearm. */
void dfg_pf_traffic_exit(struct kobject *kobj)
{
	sysfs_remove_group(kobj, &dfg_pf_traffic_group);
	cancel_delayed_work_sync(&dfg_pf_traffic_dwork);
}
