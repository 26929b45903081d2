// SPDX-License-Identifier: GPL-2.0
/*
 * chan.c - channels: DFG_IOC_CHAN_CREATE, _OPEN, _WAIT, _WAKE, endpoint
 * descriptors and their mmap.
 *
 * Objects, locks and references
 *   struct dfg_chan	one per channel, a dfg_object of its graph: in
 *			dfg_graph.objects from creation until the graph dies.
 *     ->kobj		memory and sysfs graphs/<gid>/chan<id>. Its
 *			references: the graph's (from creation until the
 *			graph's death, dfg_chan_destroy()) and one per
 *			endpoint descriptor (a mapping holds its descriptor,
 *			hence the channel). The release (last put) frees the
 *			ring memory and the struct. Endpoints do not hold the
 *			graph's life: when the last graph descriptor goes the
 *			graph dies, the channel is marked dead and its parked
 *			waits end with -ECANCELED, while endpoints and
 *			mappings keep the memory until they go.
 *     ->graph		the graph, whose kobject (its memory, not its life)
 *			the channel holds until its release, for the ids in
 *			events and the graph's page count.
 *     ->lock		spinlock, process context only (commands, endpoint
 *			release, graph death, sysfs). Protects the kernel's
 *			own copy of the states (->ring_state, ->ring_pid,
 *			->consumer_state, ->nr_producers, ->ever_opened,
 *			->dead), both waiter lists and the counters. Waits
 *			are completed under it (dfg_waiter_complete(), which
 *			is the lock the waiters name as their owner's, see
 *			wait.c). Lock order: see dfg.h.
 *     ->mem, ->base	the header page and rings (struct dfg_mem, accounted
 *			like an arena) and their kernel mapping (vmap).
 *			Shared with userspace, so never trusted: the kernel
 *			reads only head/tail indices (READ_ONCE) and derives
 *			booleans from them; it writes the state words from its
 *			own copy on every change and never reads them back.
 *   struct dfg_chan_ep	one per endpoint descriptor (anon inode
 *			"[dfg-chan]"), its file's private_data, freed at the
 *			file's release; holds one channel reference. Embeds a
 *			dfg_file (on dfg_files) so its parked WAITs follow
 *			wait.c: task-exit monitor, dfg.max_parked. A parked
 *			command pins the file, so release runs with nothing
 *			of this endpoint parked or sleeping.
 *   struct dfg_chan_watch  the scheduler's wait for a channel condition on
 *			behalf of a set (sched.c), on ->watches under ->lock
 *			while armed; embedded in the set, which disarms it
 *			before it goes. It raises the waiting flag of its
 *			side as a waiting endpoint would, and is fired (its
 *			callback called under ->lock, after unlinking) by the
 *			same WAKEs and endpoint releases that complete
 *			waiters; the callback takes the scheduler's client
 *			lock (lock order: see dfg.h).
 *   struct dfg_chan_waiter  one WAIT that could not complete at once, on
 *			->cons_waiters or ->prod_waiters under ->lock: a
 *			struct dfg_waiter (wait.c: its allocation, sleep,
 *			park and completion) plus the endpoint.
 *
 * Producer slots: a producer takes the lowest DFG_CHAN_S_FREE slot, else
 * the lowest CLOSED slot whose ring the consumer has drained (what an old
 * producer sent is never lost or mixed with a new stream). The new
 * producer goes on from the ring's indices as they are: rewriting them
 * under a consumer that may be reading them would show it a bogus fill
 * level. -EBUSY when every slot is open or closed with data left.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/vmalloc.h>

#include "dfg.h"
#include "trace.h"

static const struct dfg_obj_ops dfg_chan_obj_ops;

static_assert(sizeof(struct dfg_chan_hdr) <= DFG_CHAN_PAGE);
static_assert(offsetof(struct dfg_chan_ring, head) == 64);
static_assert(offsetof(struct dfg_chan_ring, state) == 128);
static_assert(offsetof(struct dfg_chan_ring, desc) == 192);
static_assert(sizeof(struct dfg_desc) == 24);
static_assert(DFG_CHAN_PAGE == PAGE_SIZE);

/**
 * struct dfg_chan - one channel (see the top of this file)
 * @obj:	header; @obj.id is the channel's id in its graph
 * @kobj:	memory and sysfs directory
 * @graph:	the graph (kobject reference held)
 * @lock:	see the top of this file
 * @depth:	entries per ring; immutable
 * @max_producers: rings; immutable
 * @ring_size:	bytes per ring; immutable
 * @mem:	header page and rings
 * @base:	kernel mapping of @mem
 * @cons_waiters: consumer waits (dfg_chan_waiter.node)
 * @prod_waiters: producer waits
 * @watches:	armed scheduler watches (dfg_chan_watch.node)
 * @consumer_state: DFG_CHAN_S_*
 * @nr_producers: producer endpoints OPEN now
 * @ever_opened: a producer endpoint was opened once (EOF needs one)
 * @dead:	the graph died: waits end with -ECANCELED
 * @in_sysfs:	@kobj is in sysfs (until the graph's death)
 * @parks:	WAITs that parked or slept
 * @wakeups:	waits completed by their event (WAKE, endpoint release)
 * @ring_state:	DFG_CHAN_S_* per ring
 * @ring_pid:	tgid of each ring's producer
 * @fb:		feedback's view: marks (feedback.c)
 */
struct dfg_chan {
	struct dfg_object	obj;
	struct kobject		kobj;
	struct dfg_graph	*graph;
	spinlock_t		lock;	/* see the top of this file */
	u32			depth;
	u32			max_producers;
	u64			ring_size;
	struct dfg_mem		mem;
	void			*base;
	struct list_head	cons_waiters;
	struct list_head	prod_waiters;
	struct list_head	watches;
	u32			consumer_state;
	u32			nr_producers;
	bool			ever_opened;
	bool			dead;
	bool			in_sysfs;
	u64			parks;
	u64			wakeups;
	u8			ring_state[DFG_CHAN_PRODUCERS_MAX];
	pid_t			ring_pid[DFG_CHAN_PRODUCERS_MAX];
	struct dfg_fb_obj	fb;
};

/**
 * struct dfg_chan_ep - one endpoint descriptor
 * @fd:		descriptor header (DFG_FD_EP), first
 * @df:		its parked commands (wait.c); on dfg_files while open
 * @ch:		the channel (kobject reference held)
 * @role:	DFG_CHAN_PRODUCER, DFG_CHAN_CONSUMER, or 0 while being set up
 * @slot:	producer: its ring
 * @opener:	thread group of the opener (struct pid reference held), to
 *		tell a death from a close at release
 */
struct dfg_chan_ep {
	struct dfg_fd		fd;
	struct dfg_file		df;
	struct dfg_chan		*ch;
	u32			role;
	u32			slot;
	struct pid		*opener;
};

static_assert(offsetof(struct dfg_chan_ep, fd) == 0);

/* The endpoint a WAIT or WAKE was issued on. */
static struct dfg_chan_ep *dfg_cmd_ep(const struct dfg_cmd_ctx *c)
{
	struct dfg_fd *fd = dfg_cmd_fd(c, DFG_FD_EP);

	return fd ? container_of(fd, struct dfg_chan_ep, fd) : NULL;
}

/**
 * struct dfg_chan_waiter - a WAIT waiting for its condition
 * @wait:	the waiter, on dfg_chan.cons_waiters/prod_waiters; its args
 *		are a struct dfg_chan_wait
 * @ep:		the endpoint the WAIT was issued on
 */
struct dfg_chan_waiter {
	struct dfg_waiter	wait;
	struct dfg_chan_ep	*ep;
};

static const struct file_operations dfg_chan_ep_fops;

static struct dfg_chan_hdr *dfg_chan_hdr(struct dfg_chan *ch)
{
	return ch->base;
}

static struct dfg_chan_ring *dfg_chan_ring(struct dfg_chan *ch, u32 i)
{
	return ch->base + DFG_CHAN_PAGE + (size_t)i * ch->ring_size;
}

/* Rewrite every kernel-owned word of the shared memory from our copy. */
static void dfg_chan_sync(struct dfg_chan *ch)
{
	u32 i;

	lockdep_assert_held(&ch->lock);
	WRITE_ONCE(dfg_chan_hdr(ch)->consumer_state, ch->consumer_state);
	for (i = 0; i < ch->max_producers; i++) {
		struct dfg_chan_ring *r = dfg_chan_ring(ch, i);

		WRITE_ONCE(r->state, ch->ring_state[i]);
		WRITE_ONCE(r->pid, ch->ring_pid[i]);
	}
}

/*
 * Consumer's condition: READABLE if an opened ring holds an entry (any
 * tail != head, garbage included: the consumer then looks and decides),
 * EOF once a producer opened, none is open and every opened ring is
 * drained; else 0. Caller holds ->lock.
 */
static int dfg_chan_cons_events(struct dfg_chan *ch)
{
	u32 i;

	lockdep_assert_held(&ch->lock);
	/* Pairs with the producer's barrier between tail and its waiting check. */
	smp_mb();
	for (i = 0; i < ch->max_producers; i++) {
		struct dfg_chan_ring *r = dfg_chan_ring(ch, i);

		if (ch->ring_state[i] == DFG_CHAN_S_FREE)
			continue;
		if (READ_ONCE(r->tail) != READ_ONCE(r->head))
			return DFG_CHAN_EV_READABLE;
	}
	if (ch->ever_opened && !ch->nr_producers)
		return DFG_CHAN_EV_EOF;
	return 0;
}

/*
 * Producer's condition: -EPIPE once the consumer has gone, WRITABLE unless
 * the ring is exactly full (a fill level above @depth is garbage: WRITABLE
 * too, so the producer returns and sees it), else 0. Caller holds ->lock.
 */
static int dfg_chan_prod_events(struct dfg_chan *ch, u32 slot)
{
	struct dfg_chan_ring *r = dfg_chan_ring(ch, slot);

	lockdep_assert_held(&ch->lock);
	if (ch->consumer_state == DFG_CHAN_S_CLOSED)
		return -EPIPE;
	/* Pairs with the consumer's barrier between head and its check. */
	smp_mb();
	if (READ_ONCE(r->tail) - READ_ONCE(r->head) != ch->depth)
		return DFG_CHAN_EV_WRITABLE;
	return 0;
}

static int dfg_chan_events(struct dfg_chan *ch, struct dfg_chan_ep *ep)
{
	if (ch->dead)
		return -ECANCELED;
	if (ep->role == DFG_CHAN_CONSUMER)
		return dfg_chan_cons_events(ch);
	return dfg_chan_prod_events(ch, ep->slot);
}

/*
 * Complete one waiter with @res (events or -errno); caller holds ->lock.
 * Returns true if this call completed it (false: a cancel claimed its
 * parked command first).
 */
static bool dfg_chan_complete(struct dfg_chan_waiter *w, int res)
{
	struct dfg_chan_wait *args = w->wait.args;

	if (res > 0)
		args->events = res;
	return dfg_waiter_complete(&w->wait, res, res > 0 ? res : 0, NULL);
}

/* The waiting flag a watch raises: the consumer's, or its ring's. */
static void dfg_chan_watch_flag(struct dfg_chan *ch, struct dfg_chan_watch *w,
				u32 val)
{
	lockdep_assert_held(&ch->lock);
	if (w->role == DFG_CHAN_CONSUMER)
		WRITE_ONCE(dfg_chan_hdr(ch)->cons_waiting, val);
	else
		WRITE_ONCE(dfg_chan_ring(ch, w->slot)->prod_waiting, val);
}

static int dfg_chan_watch_events(struct dfg_chan *ch, struct dfg_chan_watch *w)
{
	if (w->role == DFG_CHAN_CONSUMER)
		return dfg_chan_cons_events(ch);
	return dfg_chan_prod_events(ch, w->slot);
}

/* Fire the armed watches of @role that can progress; caller holds ->lock. */
static u32 dfg_chan_fire_watches(struct dfg_chan *ch, u32 role)
{
	struct dfg_chan_watch *w, *tmp;
	u32 n = 0;

	list_for_each_entry_safe(w, tmp, &ch->watches, node) {
		if (w->role != role || !dfg_chan_watch_events(ch, w))
			continue;
		list_del_init(&w->node);
		dfg_chan_watch_flag(ch, w, 0);
		w->fire(w);
		n++;
	}
	return n;
}

/* Complete the consumer's waits if it can progress; caller holds ->lock. */
static u32 dfg_chan_wake_consumer(struct dfg_chan *ch)
{
	struct dfg_chan_waiter *w, *tmp;
	u32 n = dfg_chan_fire_watches(ch, DFG_CHAN_CONSUMER);
	int ev;

	if (list_empty(&ch->cons_waiters))
		goto out;
	ev = dfg_chan_cons_events(ch);
	if (!ev)
		goto out;
	list_for_each_entry_safe(w, tmp, &ch->cons_waiters, wait.node)
		n += dfg_chan_complete(w, ev);
out:
	ch->wakeups += n;
	return n;
}

/* Complete the producers' waits that can progress; caller holds ->lock. */
static u32 dfg_chan_wake_producers(struct dfg_chan *ch)
{
	struct dfg_chan_waiter *w, *tmp;
	u32 n = dfg_chan_fire_watches(ch, DFG_CHAN_PRODUCER);
	int ev;

	list_for_each_entry_safe(w, tmp, &ch->prod_waiters, wait.node) {
		ev = dfg_chan_prod_events(ch, w->ep->slot);
		if (ev)
			n += dfg_chan_complete(w, ev);
	}
	ch->wakeups += n;
	return n;
}

/* ------------------------------------------------------------------------
 * sysfs: graphs/<gid>/chan<id>/
 * ------------------------------------------------------------------------
 */

static struct dfg_chan *dfg_kobj_chan(struct kobject *kobj)
{
	return container_of(kobj, struct dfg_chan, kobj);
}

enum dfg_chan_stat {
	DFG_CHAN_STAT_MSGS,
	DFG_CHAN_STAT_BYTES,
	DFG_CHAN_STAT_HWM,
	DFG_CHAN_STAT_FULL,
	DFG_CHAN_STAT_EMPTY,
};

/*
 * Statistics kept by userspace in the rings (msgs, bytes, hwm, stalls):
 * read as they are, untrusted and unsynchronised; sums wrap. Readers run
 * only while the directory exists, hence while the memory does.
 */
static u64 dfg_chan_shared_stat(struct dfg_chan *ch, enum dfg_chan_stat s)
{
	u64 v = 0;
	u32 i;

	for (i = 0; i < ch->max_producers; i++) {
		struct dfg_chan_ring *r = dfg_chan_ring(ch, i);

		switch (s) {
		case DFG_CHAN_STAT_MSGS:
			v += READ_ONCE(r->msgs);
			break;
		case DFG_CHAN_STAT_BYTES:
			v += READ_ONCE(r->bytes);
			break;
		case DFG_CHAN_STAT_HWM:
			v = max_t(u64, v, READ_ONCE(r->hwm));
			break;
		case DFG_CHAN_STAT_FULL:
			v += READ_ONCE(r->full_stalls);
			break;
		case DFG_CHAN_STAT_EMPTY:
			v += READ_ONCE(r->empty_stalls);
			break;
		}
	}
	return v;
}

#define DFG_CHAN_SHARED_ATTR(_name, _stat)				\
static ssize_t _name##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%llu\n", (unsigned long long)		\
			  dfg_chan_shared_stat(dfg_kobj_chan(kobj), _stat)); \
}									\
static struct kobj_attribute dfg_cattr_##_name = __ATTR_RO(_name)

DFG_CHAN_SHARED_ATTR(messages, DFG_CHAN_STAT_MSGS);
DFG_CHAN_SHARED_ATTR(bytes, DFG_CHAN_STAT_BYTES);
DFG_CHAN_SHARED_ATTR(hwm, DFG_CHAN_STAT_HWM);
DFG_CHAN_SHARED_ATTR(full_stalls, DFG_CHAN_STAT_FULL);
DFG_CHAN_SHARED_ATTR(empty_stalls, DFG_CHAN_STAT_EMPTY);

enum dfg_chan_kstat {
	DFG_CHAN_KSTAT_DEPTH,
	DFG_CHAN_KSTAT_PARKS,
	DFG_CHAN_KSTAT_WAKEUPS,
	DFG_CHAN_KSTAT_PRODUCERS,
	DFG_CHAN_KSTAT_CONSUMER,
};

/* Kernel counters and states, under ->lock. */
static u64 dfg_chan_kernel_stat(struct dfg_chan *ch, enum dfg_chan_kstat s)
{
	u64 v = 0;

	spin_lock(&ch->lock);
	switch (s) {
	case DFG_CHAN_KSTAT_DEPTH:
		v = ch->depth;
		break;
	case DFG_CHAN_KSTAT_PARKS:
		v = ch->parks;
		break;
	case DFG_CHAN_KSTAT_WAKEUPS:
		v = ch->wakeups;
		break;
	case DFG_CHAN_KSTAT_PRODUCERS:
		v = ch->nr_producers;
		break;
	case DFG_CHAN_KSTAT_CONSUMER:
		v = ch->consumer_state == DFG_CHAN_S_OPEN;
		break;
	}
	spin_unlock(&ch->lock);
	return v;
}

#define DFG_CHAN_KERNEL_ATTR(_name, _stat)				\
static ssize_t _name##_show(struct kobject *kobj,			\
			    struct kobj_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%llu\n", (unsigned long long)		\
			  dfg_chan_kernel_stat(dfg_kobj_chan(kobj), _stat)); \
}									\
static struct kobj_attribute dfg_cattr_##_name = __ATTR_RO(_name)

DFG_CHAN_KERNEL_ATTR(depth, DFG_CHAN_KSTAT_DEPTH);
DFG_CHAN_KERNEL_ATTR(parks, DFG_CHAN_KSTAT_PARKS);
DFG_CHAN_KERNEL_ATTR(wakeups, DFG_CHAN_KSTAT_WAKEUPS);
DFG_CHAN_KERNEL_ATTR(producers, DFG_CHAN_KSTAT_PRODUCERS);
DFG_CHAN_KERNEL_ATTR(consumer, DFG_CHAN_KSTAT_CONSUMER);

static struct attribute *dfg_chan_attrs[] = {
	&dfg_cattr_messages.attr,
	&dfg_cattr_bytes.attr,
	&dfg_cattr_depth.attr,
	&dfg_cattr_hwm.attr,
	&dfg_cattr_full_stalls.attr,
	&dfg_cattr_empty_stalls.attr,
	&dfg_cattr_parks.attr,
	&dfg_cattr_wakeups.attr,
	&dfg_cattr_producers.attr,
	&dfg_cattr_consumer.attr,
	NULL,
};
ATTRIBUTE_GROUPS(dfg_chan);

/* Last channel reference: nothing maps, waits or reads it any more. */
static void dfg_chan_kobj_release(struct kobject *kobj)
{
	struct dfg_chan *ch = dfg_kobj_chan(kobj);

	if (ch->base)
		vunmap(ch->base);
	if (ch->mem.pages) {
		atomic_long_sub(ch->mem.nr_pages, &ch->graph->pages);
		dfg_mem_free(&ch->mem);
	}
	dfg_obj_uncharge(&ch->obj);
	kobject_put(&ch->graph->kobj);
	kfree(ch);
}

static const struct kobj_type dfg_chan_ktype = {
	.release	= dfg_chan_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= dfg_chan_groups,
};

/* ------------------------------------------------------------------------
 * Commands on a graph descriptor: CREATE, OPEN
 * ------------------------------------------------------------------------
 */

static void dfg_chan_init_hdr(struct dfg_chan *ch, u32 pool, u64 pool_size)
{
	struct dfg_chan_hdr *h = dfg_chan_hdr(ch);

	h->magic = DFG_CHAN_MAGIC;
	h->depth = ch->depth;
	h->max_producers = ch->max_producers;
	h->pool = pool;
	h->pool_size = pool_size;
	h->ring_offset = DFG_CHAN_PAGE;
	h->ring_size = ch->ring_size;
	/* States are DFG_CHAN_S_FREE (0): the pages are zeroed. */
}

int dfg_chan_create(struct dfg_cmd_ctx *c)
{
	struct dfg_chan_create *args = c->args;
	struct dfg_graph *g = dfg_cmd_graph(c);
	u64 pool_size, map_size;
	struct dfg_chan *ch;
	int ret;

	if (args->flags || args->id || args->reserved0 || args->map_size ||
	    memchr_inv(args->reserved, 0, sizeof(args->reserved)))
		return -EINVAL;
	if (args->depth < 2 || args->depth > DFG_CHAN_DEPTH_MAX ||
	    !is_power_of_2(args->depth))
		return -EINVAL;
	if (!args->max_producers ||
	    args->max_producers > DFG_CHAN_PRODUCERS_MAX)
		return -EINVAL;
	ret = dfg_pool_lookup(g, args->pool, &pool_size);
	if (ret)
		return ret;
	map_size = DFG_CHAN_MAP_SIZE(args->depth, args->max_producers);
	if (map_size > (u64)READ_ONCE(dfg_max_arena_mb) << 20)
		return -EFBIG;

	ch = kzalloc(sizeof(*ch), GFP_KERNEL_ACCOUNT);
	if (!ch)
		return -ENOMEM;
	/* From here on kobject_put() frees, through the release. */
	kobject_init(&ch->kobj, &dfg_chan_ktype);
	kobject_get(&g->kobj);
	ch->graph = g;
	spin_lock_init(&ch->lock);
	INIT_LIST_HEAD(&ch->cons_waiters);
	INIT_LIST_HEAD(&ch->prod_waiters);
	INIT_LIST_HEAD(&ch->watches);
	ch->depth = args->depth;
	ch->max_producers = args->max_producers;
	ch->ring_size = DFG_CHAN_RING_SIZE(args->depth);
	dfg_fb_obj_init(&ch->fb, &ch->obj);

	ret = dfg_mem_alloc(&ch->mem, map_size >> PAGE_SHIFT);
	if (ret) {
		ch->mem.pages = NULL;
		goto out_put;
	}
	atomic_long_add(ch->mem.nr_pages, &g->pages);
	ch->base = vmap(ch->mem.pages, ch->mem.nr_pages, VM_MAP, PAGE_KERNEL);
	if (!ch->base) {
		ret = -ENOMEM;
		goto out_put;
	}
	dfg_chan_init_hdr(ch, args->pool, pool_size);

	ret = dfg_graph_reserve_object(g, &ch->obj, &dfg_chan_obj_ops);
	if (ret < 0)
		goto out_put;
	/* Directory first: nobody reaches the channel before publication. */
	ret = dfg_obj_add_dir(&ch->obj, &ch->kobj);
	if (ret)
		goto out_unreserve;
	ch->in_sysfs = true;
	args->id = ch->obj.id;
	args->map_size = map_size;
	c->res2 = map_size;
	/* The caller learns the id before anyone can open the channel. */
	ret = dfg_cmd_copy_out(c);
	if (ret)
		goto out_del;
	ret = dfg_graph_publish_object(g, &ch->obj);
	if (ret)
		goto out_del;

	dfg_fb_add(&ch->fb);
	trace_dfg_chan_create(g->id, ch->obj.id, ch->mem.nr_pages);
	dfg_nl_graph_event(DFG_EV_CHAN_CREATE, task_tgid_nr(current), g->id,
			   ch->obj.id, NULL);
	return ch->obj.id;

out_del:
	kobject_del(&ch->kobj);
	ch->in_sysfs = false;
out_unreserve:
	dfg_graph_unreserve_id(g, ch->obj.id);
out_put:
	kobject_put(&ch->kobj);
	return ret;
}

/*
 * The slot a new producer takes: the lowest never opened, else the lowest
 * closed and drained; ->max_producers if none. Caller holds ->lock.
 */
static u32 dfg_chan_free_slot(struct dfg_chan *ch)
{
	struct dfg_chan_ring *r;
	u32 i;

	lockdep_assert_held(&ch->lock);
	for (i = 0; i < ch->max_producers; i++)
		if (ch->ring_state[i] == DFG_CHAN_S_FREE)
			return i;
	for (i = 0; i < ch->max_producers; i++) {
		if (ch->ring_state[i] != DFG_CHAN_S_CLOSED)
			continue;
		r = dfg_chan_ring(ch, i);
		/*
		 * Its producer is gone (a mapping pins the endpoint file), so
		 * tail is final; head == tail once the consumer has taken all.
		 */
		if (READ_ONCE(r->head) == READ_ONCE(r->tail))
			return i;
	}
	return i;
}

/*
 * Caller holds ->lock: the slot a new endpoint of @role would get now
 * (0 for the consumer), or an errno.
 */
static int dfg_chan_claimable(struct dfg_chan *ch, u32 role, u32 *slot)
{
	lockdep_assert_held(&ch->lock);
	if (ch->dead)
		return -ENOENT;
	if (role == DFG_CHAN_CONSUMER) {
		if (ch->consumer_state == DFG_CHAN_S_OPEN)
			return -EBUSY;
		*slot = 0;
		return 0;
	}
	if (ch->consumer_state == DFG_CHAN_S_CLOSED)
		return -EPIPE;
	*slot = dfg_chan_free_slot(ch);
	if (*slot == ch->max_producers)
		return -EBUSY;
	return 0;
}

/* Caller holds ->lock; @slot is claimable for @role: take it for @ep. */
static void dfg_chan_claim(struct dfg_chan *ch, struct dfg_chan_ep *ep,
			   u32 role, u32 slot)
{
	lockdep_assert_held(&ch->lock);
	if (role == DFG_CHAN_CONSUMER) {
		ch->consumer_state = DFG_CHAN_S_OPEN;
	} else {
		/* A producer killed while it waited left its flag up. */
		WRITE_ONCE(dfg_chan_ring(ch, slot)->prod_waiting, 0);
		ch->ring_state[slot] = DFG_CHAN_S_OPEN;
		ch->ring_pid[slot] = task_tgid_nr(current);
		ch->nr_producers++;
		ch->ever_opened = true;
	}
	ep->slot = slot;
	ep->role = role;
	dfg_chan_sync(ch);
}

/*
 * Give @ep the role @args asks for, once the caller has the slot: the
 * slot is copied out before it is taken (nobody sees an endpoint whose
 * opener never learned it), and taken only if it is still the one a new
 * endpoint gets; else again with the new one.
 */
static int dfg_chan_open_claim(struct dfg_cmd_ctx *c, struct dfg_chan *ch,
			       struct dfg_chan_ep *ep)
{
	struct dfg_chan_open *args = c->args;
	u32 slot, now;
	int ret;

	spin_lock(&ch->lock);
	ret = dfg_chan_claimable(ch, args->role, &slot);
	spin_unlock(&ch->lock);
	while (!ret) {
		args->slot = slot;
		ret = dfg_cmd_copy_out(c);
		if (ret)
			break;
		spin_lock(&ch->lock);
		ret = dfg_chan_claimable(ch, args->role, &now);
		if (!ret && now == slot)
			dfg_chan_claim(ch, ep, args->role, slot);
		spin_unlock(&ch->lock);
		if (!ret && now == slot)
			break;
		slot = now;
	}
	return ret;
}

int dfg_chan_open(struct dfg_cmd_ctx *c)
{
	struct dfg_chan_open *args = c->args;
	struct dfg_graph *g = dfg_cmd_graph(c);
	struct dfg_object *obj;
	struct dfg_chan_ep *ep;
	struct dfg_chan *ch;
	struct file *file;
	int fd, ret;

	if (args->role != DFG_CHAN_PRODUCER && args->role != DFG_CHAN_CONSUMER)
		return -EINVAL;
	if ((args->flags & ~DFG_CHAN_O_ALL) || args->slot ||
	    memchr_inv(args->reserved, 0, sizeof(args->reserved)))
		return -EINVAL;
	if (!args->id || args->id > DFG_OBJ_ID_MAX)
		return -ENOENT;
	/* The graph (our descriptor's) holds its objects: no reference. */
	obj = xa_load(&g->objects, args->id);
	if (!dfg_obj_is(obj, DFG_OBJ_CHAN))
		return -ENOENT;
	ch = container_of(obj, struct dfg_chan, obj);

	ep = kzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);
	if (!ep)
		return -ENOMEM;
	/* The endpoint's reference, put at its release. */
	kobject_get(&ch->kobj);
	ep->ch = ch;
	ep->opener = get_task_pid(current, PIDTYPE_TGID);
	dfg_fd_init(&ep->fd, DFG_FD_EP, &ep->df);
	dfg_file_init(&ep->df);

	fd = get_unused_fd_flags((args->flags & DFG_CHAN_O_CLOEXEC) ?
				 O_CLOEXEC : 0);
	if (fd < 0) {
		ret = fd;
		goto out_free_ep;
	}
	/* From here on the file owns @ep: its release undoes the above. */
	file = anon_inode_getfile("[dfg-chan]", &dfg_chan_ep_fops, ep, O_RDWR);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		put_unused_fd(fd);
		goto out_free_ep;
	}

	ret = dfg_chan_open_claim(c, ch, ep);
	if (ret) {
		/* role 0: the release only frees. */
		put_unused_fd(fd);
		fput(file);
		return ret;
	}

	c->res2 = ep->slot;
	c->install = file;
	c->fd = fd;
	return fd;

out_free_ep:
	dfg_file_fini(&ep->df);
	put_pid(ep->opener);
	kobject_put(&ch->kobj);
	kfree(ep);
	return ret;
}

/* ------------------------------------------------------------------------
 * Commands on an endpoint: WAIT, WAKE
 * ------------------------------------------------------------------------
 */

static struct list_head *dfg_chan_waiters(struct dfg_chan_ep *ep)
{
	return ep->role == DFG_CHAN_CONSUMER ? &ep->ch->cons_waiters :
					       &ep->ch->prod_waiters;
}

int dfg_chan_wait(struct dfg_cmd_ctx *c)
{
	struct dfg_chan_wait *args = c->args;
	struct dfg_chan_ep *ep = dfg_cmd_ep(c);
	struct dfg_chan *ch = ep->ch;
	struct dfg_chan_waiter sleeper, *w;
	int ret;

	if (args->flags || args->events ||
	    memchr_inv(args->reserved, 0, sizeof(args->reserved)))
		return -EINVAL;

	w = dfg_waiter_new(c, &sleeper, sizeof(sleeper),
			   offsetof(struct dfg_chan_waiter, wait), &ch->lock);
	if (!w)
		return -ENOMEM;
	w->ep = ep;

	spin_lock(&ch->lock);
	ret = dfg_chan_events(ch, ep);
	if (!ret)
		ret = dfg_waiter_arm(c, &w->wait, dfg_chan_waiters(ep));
	if (ret) {
		spin_unlock(&ch->lock);
		dfg_waiter_discard(c, &w->wait);
		if (ret > 0) {
			args->events = ret;
			c->res2 = ret;
		}
		return ret;
	}
	ch->parks++;
	spin_unlock(&ch->lock);
	trace_dfg_chan_park(ch->graph->id, ch->obj.id, ep->role, ep->slot,
			    !!c->ucmd);
	/* The completer wrote args->events: ioctl's buffer or our copy. */
	return dfg_waiter_block(c, &w->wait);
}

int dfg_chan_wake(struct dfg_cmd_ctx *c)
{
	struct dfg_chan_wait *args = c->args;
	struct dfg_chan_ep *ep = dfg_cmd_ep(c);
	struct dfg_chan *ch = ep->ch;
	u32 role, n = 0;

	if (args->flags || args->events ||
	    memchr_inv(args->reserved, 0, sizeof(args->reserved)))
		return -EINVAL;

	/* The other side: a producer wakes the consumer and vice versa. */
	role = ep->role == DFG_CHAN_PRODUCER ? DFG_CHAN_CONSUMER :
					       DFG_CHAN_PRODUCER;
	spin_lock(&ch->lock);
	if (!ch->dead)
		n = role == DFG_CHAN_CONSUMER ? dfg_chan_wake_consumer(ch) :
						dfg_chan_wake_producers(ch);
	spin_unlock(&ch->lock);
	if (n)
		trace_dfg_chan_wake(ch->graph->id, ch->obj.id, role, n);
	return n;
}

/* ------------------------------------------------------------------------
 * Scheduler watches (sched.c)
 * ------------------------------------------------------------------------
 */

/**
 * dfg_chan_get() - take a reference on channel @id of @g
 * @g: the graph, held by the caller's descriptor or client
 * @id: object id
 * @max_producers: out: the channel's producer slots
 *
 * Return: the channel (kobject reference held), or NULL if @id is no
 * channel of @g.
 */
struct dfg_chan *dfg_chan_get(struct dfg_graph *g, u32 id, u32 *max_producers)
{
	struct dfg_object *obj;
	struct dfg_chan *ch = NULL;

	if (!id || id > DFG_OBJ_ID_MAX)
		return NULL;
	/* Under the xarray's lock: the graph may be dying meanwhile. */
	xa_lock(&g->objects);
	obj = xa_load(&g->objects, id);
	if (dfg_obj_is(obj, DFG_OBJ_CHAN)) {
		ch = container_of(obj, struct dfg_chan, obj);
		kobject_get(&ch->kobj);
		*max_producers = ch->max_producers;
	}
	xa_unlock(&g->objects);
	return ch;
}

void dfg_chan_put(struct dfg_chan *ch)
{
	kobject_put(&ch->kobj);
}

/* Feedback's view of @ch (marks), for FEEDBACK_SET. */
struct dfg_fb_obj *dfg_chan_fb(struct dfg_chan *ch)
{
	return &ch->fb;
}

/**
 * dfg_chan_fill() - how full a channel is, for feedback
 * @obj: the channel, held by the caller
 * @fill: out: entries in its rings, each ring's count clamped to its depth
 *	(the indices are userspace's, never trusted)
 * @capacity: out: depth * max_producers
 * @msgs: out, unless NULL: messages sent, as the rings' counters say
 *
 * Context: any; reads shared memory only, no lock.
 */
void dfg_chan_fill(struct dfg_object *obj, u32 *fill, u32 *capacity,
		   u64 *msgs)
{
	struct dfg_chan *ch = container_of(obj, struct dfg_chan, obj);
	u64 sent = 0;
	u32 i, n = 0;

	for (i = 0; i < ch->max_producers; i++) {
		struct dfg_chan_ring *r = dfg_chan_ring(ch, i);

		n += min(READ_ONCE(r->tail) - READ_ONCE(r->head), ch->depth);
		sent += READ_ONCE(r->msgs);
	}
	*fill = n;
	*capacity = ch->depth * ch->max_producers;
	if (msgs)
		*msgs = sent;
}

/**
 * dfg_chan_watch_arm() - wait for @w's condition on behalf of a set
 * @w: a watch not armed, with ->ch (referenced), ->role, ->slot, ->fire
 *
 * Raises the waiting flag of @w's side, then looks at the channel (behind
 * the same full barrier as a WAIT): if the side can progress (readable or
 * end of stream for the consumer, room or no consumer for a producer) or
 * the channel is dead, lowers the flag and returns 1; else arms @w, whose
 * ->fire is called later under the channel's lock.
 *
 * Context: process context, no scheduler lock held.
 * Return: 1 if the condition holds now, 0 if armed.
 */
int dfg_chan_watch_arm(struct dfg_chan_watch *w)
{
	struct dfg_chan *ch = w->ch;
	int ret = 1;

	spin_lock(&ch->lock);
	if (!ch->dead) {
		dfg_chan_watch_flag(ch, w, 1);
		if (dfg_chan_watch_events(ch, w)) {
			dfg_chan_watch_flag(ch, w, 0);
		} else {
			list_add_tail(&w->node, &ch->watches);
			ret = 0;
		}
	}
	spin_unlock(&ch->lock);
	return ret;
}

/**
 * dfg_chan_watch_disarm() - take @w back if armed
 * @w: a watch
 *
 * Once this returns, @w is not armed and its ->fire is not running.
 *
 * Context: process context, no scheduler lock held.
 */
void dfg_chan_watch_disarm(struct dfg_chan_watch *w)
{
	struct dfg_chan *ch = w->ch;

	spin_lock(&ch->lock);
	if (!list_empty(&w->node)) {
		list_del_init(&w->node);
		dfg_chan_watch_flag(ch, w, 0);
	}
	spin_unlock(&ch->lock);
}

/* ------------------------------------------------------------------------
 * Endpoint descriptors
 * ------------------------------------------------------------------------
 */

/*
 * Is this release a death rather than a close? The releasing task exits,
 * or the opener's thread group is gone or going (the last reference then
 * often goes from a kworker: io_uring teardown, delayed fput).
 */
static bool dfg_chan_ep_dying(struct dfg_chan_ep *ep)
{
	struct task_struct *t;
	bool dying;

	if (current->flags & PF_EXITING)
		return true;
	rcu_read_lock();
	t = pid_task(ep->opener, PIDTYPE_TGID);
	dying = !t || (READ_ONCE(t->flags) & PF_EXITING) ||
		(READ_ONCE(t->signal->flags) & SIGNAL_GROUP_EXIT);
	rcu_read_unlock();
	return dying;
}

static int dfg_chan_ep_release(struct inode *inode, struct file *file)
{
	struct dfg_chan_ep *ep = file->private_data;
	struct dfg_chan *ch = ep->ch;
	bool was_open = false;
	u32 woken = 0;

	/* Nothing parked: parked commands pin the file. */
	dfg_file_fini(&ep->df);

	spin_lock(&ch->lock);
	if (ep->role == DFG_CHAN_PRODUCER) {
		was_open = ch->ring_state[ep->slot] == DFG_CHAN_S_OPEN;
		ch->ring_state[ep->slot] = DFG_CHAN_S_CLOSED;
		if (was_open)
			ch->nr_producers--;
		dfg_chan_sync(ch);
		/* The consumer may now see EOF, or what is left. */
		if (!ch->dead)
			woken = dfg_chan_wake_consumer(ch);
	} else if (ep->role == DFG_CHAN_CONSUMER) {
		was_open = ch->consumer_state == DFG_CHAN_S_OPEN;
		ch->consumer_state = DFG_CHAN_S_CLOSED;
		dfg_chan_sync(ch);
		/* Every parked producer gets -EPIPE. */
		if (!ch->dead)
			woken = dfg_chan_wake_producers(ch);
	}
	spin_unlock(&ch->lock);

	if (woken)
		trace_dfg_chan_wake(ch->graph->id, ch->obj.id,
				    ep->role == DFG_CHAN_PRODUCER ?
				    DFG_CHAN_CONSUMER : DFG_CHAN_PRODUCER,
				    woken);
	if (was_open && dfg_chan_ep_dying(ep))
		dfg_nl_graph_event(DFG_EV_PEER_DEATH, pid_nr(ep->opener),
				   ch->graph->id, ch->obj.id, NULL);

	put_pid(ep->opener);
	kfree(ep);
	kobject_put(&ch->kobj);
	return 0;
}

/*
 * mmap(endpoint, 0, <= DFG_CHAN_MAP_SIZE), shared only: -EINVAL for
 * another offset, a longer length or MAP_PRIVATE. The vma holds the file,
 * hence the channel and its pages.
 */
static int dfg_chan_ep_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct dfg_chan_ep *ep = file->private_data;

	return dfg_mem_mmap(&ep->ch->mem, vma);
}

static const struct file_operations dfg_chan_ep_fops = {
	DFG_FD_FOPS(dfg_chan_ep_release, dfg_chan_ep_mmap),
};

/* ------------------------------------------------------------------------
 * The graph's death (graph.c)
 * ------------------------------------------------------------------------
 */

/**
 * dfg_chan_unpublish() - remove graphs/<gid>/chan<id>
 * @obj: a channel of a dying graph
 *
 * Context: under dfg_graphs_lock, before the graph's directory goes;
 * waits for attribute readers.
 */
static void dfg_chan_unpublish(struct dfg_object *obj)
{
	struct dfg_chan *ch = container_of(obj, struct dfg_chan, obj);

	if (ch->in_sysfs) {
		kobject_del(&ch->kobj);
		ch->in_sysfs = false;
	}
}

/**
 * dfg_chan_destroy() - the graph of a channel died
 * @obj: the channel, already out of dfg_graph.objects
 *
 * Marks it dead, ends every waiting WAIT with -ECANCELED and drops the
 * graph's reference; endpoints and mappings keep the memory until they go.
 *
 * Context: process context.
 */
static void dfg_chan_destroy(struct dfg_object *obj)
{
	struct dfg_chan *ch = container_of(obj, struct dfg_chan, obj);
	struct dfg_chan_waiter *w, *tmp;

	dfg_fb_del(&ch->fb);
	spin_lock(&ch->lock);
	ch->dead = true;
	list_for_each_entry_safe(w, tmp, &ch->cons_waiters, wait.node)
		dfg_chan_complete(w, -ECANCELED);
	list_for_each_entry_safe(w, tmp, &ch->prod_waiters, wait.node)
		dfg_chan_complete(w, -ECANCELED);
	spin_unlock(&ch->lock);

	trace_dfg_chan_destroy(ch->graph->id, obj->id, ch->mem.nr_pages);
	dfg_nl_graph_event(DFG_EV_CHAN_DESTROY, 0, ch->graph->id, obj->id,
			   NULL);
	kobject_put(&ch->kobj);
}

static const struct dfg_obj_ops dfg_chan_obj_ops = {
	.kind		= DFG_OBJ_CHAN,
	.name		= "chan",
	.unpublish	= dfg_chan_unpublish,
	.destroy	= dfg_chan_destroy,
};
