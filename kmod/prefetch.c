// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch.c - this machine's graph partition, its peers and the shared
 * prefetch cache (patent 004): DFG_IOC_PART_LOAD, DFG_IOC_PEER_ADD and
 * DFG_IOC_PREFETCH on /dev/dfg, the mmap of the partition and the cache,
 * sysfs prefetch/, and the registration of a transport module (see
 * pf_xport.h; dfg_rdma.ko or dfg_tcp.ko, one at a time).
 *
 * Objects
 *   dfg_pf_part	the loaded image (vmalloc_user(), immutable once
 *			loaded); replaced by a later PART_LOAD unless a
 *			transport serves it (dfg_pf_served_users). Mappings
 *			keep their own page references, so a replaced image
 *			stays readable to whoever mapped it.
 *   dfg_pf_peers[]	connected peers, by id. A peer lives until it is
 *			replaced (PEER_ADD of its range after it died) or its
 *			transport unregisters; a dead one stays so its nodes
 *			fail with -EHOSTUNREACH rather than -EINVAL. ->row is
 *			a copy of the peer's row section (its "directory"),
 *			read once at PEER_ADD, so every later read of a
 *			neighbour list is one read of known length.
 *   dfg_pf_cache	a ring of bytes (vmalloc_user(), mapped read-only by
 *			every process) and its entries: an entry is a node's
 *			neighbours or attributes at ring position ->pos, in
 *			dfg_pf_index (hits) and on dfg_pf_fifo (allocation
 *			order, eviction from the front). An entry being
 *			filled is never evicted; one whose read failed goes.
 *   dfg_pf_req		one PREFETCH with reads in flight: reference per
 *			read plus the issuer's; its waiter (wait.c) is on
 *			->waiters while armed.
 *
 * A speculative PREFETCH (DFG_PF_SPECULATIVE) reads from a peer only while
 * pf_traffic.c says that peer's link is quiet; its other entries are
 * DFG_PF_GATED, read by nobody, given no cache room.
 *
 * Locks (what each guards; what nests in what: the lock order table in
 * dfg.h, the only place that says it)
 *   dfg_pf_mutex	mutex, process context: configuration, the peer
 *			table's changes and the transport; held across a
 *			PEER_ADD's connection setup.
 *   dfg_pf_image_lock	mutex: which image is loaded and whether it is
 *			served (dfg_pf_served_users).
 *   dfg_pf_rwsem	read-held by a PREFETCH while it starts reads,
 *			write-held by unregistration and a dead peer's
 *			replacement, so the transport and its connections
 *			outlive every ->read.
 *   dfg_pf_lock	spinlock, process context only (transports complete
 *			from work items): the cache, the index, the counters,
 *			the image pointers, peers' ->up and ->lost, requests'
 *			counts and their waiters (it is their owner lock,
 *			wait.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bsearch.h>
#include <linux/completion.h>
#include <linux/hashtable.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "dfg.h"
#include "pf_xport.h"
#include "trace.h"

static unsigned int dfg_pf_cache_mb = 16;
module_param_named(pf_cache_mb, dfg_pf_cache_mb, uint, 0444);
MODULE_PARM_DESC(pf_cache_mb, "prefetch cache size in MiB (1..1024)");

static unsigned int dfg_pf_max_part_mb = 1024;
module_param_named(pf_max_part_mb, dfg_pf_max_part_mb, uint, 0644);
MODULE_PARM_DESC(pf_max_part_mb, "largest partition image in MiB");

/* Entry kinds, one per DFG_PF_* bit. */
enum { DFG_PF_K_NBRS, DFG_PF_K_ATTRS };

/* One synchronous read at PEER_ADD (the directory). */
struct dfg_pf_sync {
	struct dfg_pf_read	rd;
	struct completion	done;
	int			status;
};

struct dfg_pf_peer {
	u32			id;
	bool			up;	/* under dfg_pf_lock */
	bool			lost;	/* under dfg_pf_lock */
	void			*conn;
	struct dfg_pf_remote	r;
	u64			*row;
	struct dfg_pf_sync	sync;
};

struct dfg_pf_entry {
	struct hlist_node	hnode;
	struct list_head	lnode;
	u64			node;
	u64			pos;
	u32			len;
	u8			kind;
	bool			filling;
};

struct dfg_pf_req;

struct dfg_pf_rd {
	struct dfg_pf_read	rd;
	struct dfg_pf_req	*req;
	struct dfg_pf_entry	*e;
	struct dfg_pf_peer	*peer;
};

/*
 * @gated: entries a speculative request did not read, per peer
 * @ngated: their sum (res2)
 */
struct dfg_pf_req {
	refcount_t		ref;	/* issuer + one per read in flight */
	struct list_head	waiters;
	unsigned int		pending;
	unsigned int		nreads;
	int			err;
	bool			spec;
	u32			ngated;
	u32			gated[DFG_PF_PEERS_MAX];
	struct dfg_pf_rd	rds[];
};

static DEFINE_MUTEX(dfg_pf_mutex);
static DEFINE_MUTEX(dfg_pf_image_lock);
static DECLARE_RWSEM(dfg_pf_rwsem);
static DEFINE_SPINLOCK(dfg_pf_lock);

static const struct dfg_pf_xport *dfg_pf_xport;	/* under dfg_pf_mutex */
static unsigned int dfg_pf_served_users;	/* under dfg_pf_image_lock */
static struct dfg_pf_peer *dfg_pf_peers[DFG_PF_PEERS_MAX];

/* The image: changes under both dfg_pf_image_lock and dfg_pf_lock. */
static void *dfg_pf_image;
static u64 dfg_pf_image_bytes;
static const struct dfg_part_hdr *dfg_pf_hdr;

/* Header page + ring: made by the first PEER_ADD, freed at exit. */
static struct dfg_pf_cache_hdr *dfg_pf_cache;
static u64 dfg_pf_ring_bytes;
static DEFINE_HASHTABLE(dfg_pf_index, 10);
static LIST_HEAD(dfg_pf_fifo);

/* Counters, under dfg_pf_lock (sysfs prefetch/<name>). */
enum {
	DFG_PF_HITS, DFG_PF_MISSES, DFG_PF_LOCAL, DFG_PF_REPLICA,
	DFG_PF_BYTES, DFG_PF_READS, DFG_PF_INFLIGHT, DFG_PF_EVICTIONS,
	DFG_PF_ERRORS, DFG_PF_SPEC_ISSUED, DFG_PF_SPEC_GATED, DFG_PF_PUTS,
	DFG_PF_NR_STATS,
};

static const char * const dfg_pf_stat_names[DFG_PF_NR_STATS] = {
	"hits", "misses", "local", "replica", "bytes", "reads", "inflight",
	"evictions", "errors", "spec_issued", "spec_gated", "puts",
};

static u64 dfg_pf_stats[DFG_PF_NR_STATS];

static struct kobject *dfg_pf_kobj;

static void *dfg_pf_ring(u64 pos)
{
	return (void *)dfg_pf_cache + DFG_PF_CACHE_DATA +
	       pos % dfg_pf_ring_bytes;
}

/* ---- the image ---- */

/* Is [off, off + n * size) inside an image of @bytes, 8-aligned? */
static bool dfg_pf_sect_ok(u64 bytes, u64 off, u64 n, u64 size)
{
	u64 len;

	if (!IS_ALIGNED(off, 8) || check_mul_overflow(n, size, &len))
		return false;
	return off <= bytes && len <= bytes - off;
}

/* Row sections: @n + 1 nondecreasing entries, the last <= @cols. */
static bool dfg_pf_row_ok(const u64 *row, u64 n, u64 cols)
{
	u64 i;

	for (i = 0; i < n; i++)
		if (row[i] > row[i + 1])
			return false;
	return row[n] <= cols;
}

/*
 * Are two images of one set of partitions (unknown sets always are)?
 * Node IDs are renumbered per partitioning, so a peer of another set
 * would answer for the same IDs with another node's data.
 */
static bool dfg_pf_same_set(u64 a, u64 b)
{
	return !a || !b || a == b;
}

static int dfg_pf_image_check(const void *img, u64 bytes)
{
	const struct dfg_part_hdr *h = img;
	const u64 *ids;
	u64 i, n1, rn1;

	if (bytes < sizeof(*h) || h->magic != DFG_PART_MAGIC ||
	    h->version != DFG_PART_VERSION || h->flags ||
	    memchr_inv(h->reserved, 0, sizeof(h->reserved)) ||
	    h->image_bytes != bytes || !h->node_count ||
	    h->feat_bytes > DFG_PART_FEAT_MAX ||
	    check_add_overflow(h->node_first, h->node_count, &i))
		return -EINVAL;
	n1 = h->node_count + 1;
	rn1 = h->rep_count + 1;
	if (!n1 || !rn1 ||
	    !dfg_pf_sect_ok(bytes, h->row_off, n1, 8) ||
	    !dfg_pf_sect_ok(bytes, h->col_off, h->col_count, 8) ||
	    !dfg_pf_sect_ok(bytes, h->feat_off, h->node_count, h->feat_bytes) ||
	    !dfg_pf_sect_ok(bytes, h->rep_ids_off, h->rep_count, 8) ||
	    !dfg_pf_sect_ok(bytes, h->rep_row_off, rn1, 8) ||
	    !dfg_pf_sect_ok(bytes, h->rep_col_off, h->rep_col_count, 8) ||
	    !dfg_pf_sect_ok(bytes, h->rep_feat_off, h->rep_count,
			    h->feat_bytes))
		return -EINVAL;
	if (!dfg_pf_row_ok(img + h->row_off, h->node_count, h->col_count) ||
	    !dfg_pf_row_ok(img + h->rep_row_off, h->rep_count,
			   h->rep_col_count))
		return -EINVAL;
	ids = img + h->rep_ids_off;
	for (i = 0; i < h->rep_count; i++) {
		if (i && ids[i] <= ids[i - 1])
			return -EINVAL;
		if (ids[i] - h->node_first < h->node_count)
			return -EINVAL;
	}
	return 0;
}

/* DFG_IOC_PART_LOAD: copy and check outside the lock, then swap. */
int dfg_pf_part_load(struct dfg_cmd_ctx *c)
{
	struct dfg_part_load *a = c->args;
	const struct dfg_part_hdr *h;
	void *img, *old;
	unsigned int i;
	int ret;

	if (a->flags || memchr_inv(a->reserved, 0, sizeof(a->reserved)) ||
	    a->len < sizeof(struct dfg_part_hdr))
		return -EINVAL;
	if (a->len > (u64)READ_ONCE(dfg_pf_max_part_mb) << 20)
		return -EFBIG;
	img = vmalloc_user(a->len);
	if (!img)
		return -ENOMEM;
	if (copy_from_user(img, u64_to_user_ptr(a->addr), a->len)) {
		ret = -EFAULT;
		goto out_free;
	}
	ret = dfg_pf_image_check(img, a->len);
	if (ret)
		goto out_free;
	h = img;

	mutex_lock(&dfg_pf_image_lock);
	if (dfg_pf_served_users) {
		mutex_unlock(&dfg_pf_image_lock);
		ret = -EBUSY;
		goto out_free;
	}
	spin_lock(&dfg_pf_lock);
	for (i = 0; i < DFG_PF_PEERS_MAX; i++) {
		const struct dfg_pf_peer *p = dfg_pf_peers[i];

		if (p && !dfg_pf_same_set(p->r.part_set, h->part_set)) {
			spin_unlock(&dfg_pf_lock);
			mutex_unlock(&dfg_pf_image_lock);
			ret = -EXDEV;
			goto out_free;
		}
	}
	old = dfg_pf_image;
	dfg_pf_image = img;
	dfg_pf_image_bytes = a->len;
	dfg_pf_hdr = img;
	spin_unlock(&dfg_pf_lock);
	mutex_unlock(&dfg_pf_image_lock);
	vfree(old);
	return 0;

out_free:
	vfree(img);
	return ret;
}

/**
 * dfg_pf_serve_get() - the partition a transport serves to peers
 * @s: filled in
 *
 * Pins the image until dfg_pf_serve_put(): PART_LOAD gives -EBUSY
 * meanwhile.
 *
 * Return: 0, or -ENODATA if no partition is loaded.
 */
int dfg_pf_serve_get(struct dfg_pf_served *s)
{
	int ret = -ENODATA;

	mutex_lock(&dfg_pf_image_lock);
	if (dfg_pf_image) {
		s->image = dfg_pf_image;
		s->bytes = dfg_pf_image_bytes;
		s->hdr = *dfg_pf_hdr;
		dfg_pf_served_users++;
		ret = 0;
	}
	mutex_unlock(&dfg_pf_image_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(dfg_pf_serve_get);

void dfg_pf_serve_put(void)
{
	mutex_lock(&dfg_pf_image_lock);
	if (!WARN_ON_ONCE(!dfg_pf_served_users))
		dfg_pf_served_users--;
	mutex_unlock(&dfg_pf_image_lock);
}
EXPORT_SYMBOL_GPL(dfg_pf_serve_put);

/* ---- peers and the transport ---- */

int dfg_pf_xport_register(const struct dfg_pf_xport *xp)
{
	int ret = 0;

	mutex_lock(&dfg_pf_mutex);
	if (dfg_pf_xport)
		ret = -EBUSY;
	else
		dfg_pf_xport = xp;
	mutex_unlock(&dfg_pf_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(dfg_pf_xport_register);

/* Under dfg_pf_mutex: end peer @i's connection and forget it. */
static void dfg_pf_peer_remove(unsigned int i)
{
	struct dfg_pf_peer *p = dfg_pf_peers[i];

	spin_lock(&dfg_pf_lock);
	p->up = false;
	dfg_pf_peers[i] = NULL;
	spin_unlock(&dfg_pf_lock);
	dfg_pf_traffic_del(i);
	/* No reader starts on it now (dfg_pf_rwsem is write-held). */
	dfg_pf_xport->disconnect(p->conn);
	vfree(p->row);
	kfree(p);
}

void dfg_pf_xport_unregister(const struct dfg_pf_xport *xp)
{
	unsigned int i;

	mutex_lock(&dfg_pf_mutex);
	if (!WARN_ON_ONCE(dfg_pf_xport != xp)) {
		down_write(&dfg_pf_rwsem);
		for (i = 0; i < DFG_PF_PEERS_MAX; i++)
			if (dfg_pf_peers[i])
				dfg_pf_peer_remove(i);
		dfg_pf_xport = NULL;
		up_write(&dfg_pf_rwsem);
	}
	mutex_unlock(&dfg_pf_mutex);
}
EXPORT_SYMBOL_GPL(dfg_pf_xport_unregister);

/**
 * dfg_pf_peer_lost() - a peer's connection died
 * @peer: dfg.ko's cookie from ->connect
 *
 * Later requests for its nodes fail with -EHOSTUNREACH; reads in flight
 * end through dfg_pf_read_done() with the transport's error.
 */
void dfg_pf_peer_lost(struct dfg_pf_peer *peer)
{
	bool was;

	spin_lock(&dfg_pf_lock);
	was = peer->up;
	peer->up = false;
	peer->lost = true;
	spin_unlock(&dfg_pf_lock);
	if (was) {
		pr_info("peer %u (nodes %llu..%llu) lost\n", peer->id,
			peer->r.node_first,
			peer->r.node_first + peer->r.node_count - 1);
		dfg_nl_graph_event(DFG_EV_PF_PEER_DOWN, 0, 0, peer->id, NULL);
	}
}
EXPORT_SYMBOL_GPL(dfg_pf_peer_lost);

static bool dfg_pf_overlap(u64 a, u64 an, u64 b, u64 bn)
{
	return a < b + bn && b < a + an;
}

static void dfg_pf_sync_done(struct dfg_pf_read *rd, int status)
{
	struct dfg_pf_sync *s = container_of(rd, struct dfg_pf_sync, rd);

	s->status = status;
	complete(&s->done);
}

/*
 * Read peer @p's row section into p->row. A signal ends the wait, not the
 * read: the caller's disconnect drains it (p->sync outlives it).
 *
 * This wait, and dfg_rdma.ko's waits for the connection's steps, are the
 * one place a handler sleeps by hand rather than through wait.c (DESIGN.md,
 * "Adding a command"): PEER_ADD is one admin command that sets up a
 * connection under dfg_pf_mutex, in several steps that each wait for a cm
 * event or a completion within the caller's timeout, and it is flagged
 * DFG_CMDF_SLEEP, so on io_uring it runs (and sleeps) in an io-wq worker,
 * never parked. There is no condition for a waker to test under an owner
 * lock and nothing to complete from another task, which is what a
 * dfg_waiter is; and the interruptible sleep ends when io_uring cancels
 * its worker (the submitter exits or its ring goes: io-wq signals the
 * worker), as a signal ends it on ioctl.
 */
static int dfg_pf_peer_dir(const struct dfg_pf_xport *xp,
			   struct dfg_pf_peer *p, unsigned int tmo)
{
	struct dfg_pf_sync *s = &p->sync;
	struct dfg_pf_read *rd = &s->rd;
	u64 bytes = (p->r.node_count + 1) * 8;
	long left;
	int ret;

	if (bytes > U32_MAX)
		return -EFBIG;
	p->row = vmalloc(bytes);
	if (!p->row)
		return -ENOMEM;
	init_completion(&s->done);
	s->rd.off = p->r.row_off;
	s->rd.len = bytes;
	s->rd.dst = p->row;
	s->rd.end = dfg_pf_sync_done;
	ret = xp->read(p->conn, &rd, 1);
	if (ret)
		return ret;
	left = wait_for_completion_interruptible_timeout(&s->done,
							 msecs_to_jiffies(tmo));
	if (left < 0)
		return -EINTR;
	if (!left)
		return -ETIMEDOUT;
	if (s->status)
		return s->status;
	return dfg_pf_row_ok(p->row, p->r.node_count, p->r.col_count) ?
	       0 : -EPROTO;
}

static int dfg_pf_addr(const struct dfg_peer_add *a,
		       struct sockaddr_storage *ss)
{
	u16 port = a->port ?: DFG_PF_PORT;

	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (memchr_inv(a->addr + 4, 0, sizeof(a->addr) - 4))
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, a->addr, 4);
		return 0;
	}
	if (a->family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, a->addr, 16);
		return 0;
	}
	return -EINVAL;
}

/*
 * May a peer serving @r be added? Not one of another set of partitions,
 * not over the own range or a live peer's; over a dead peer's exact range
 * (*dead: its slot), which it replaces. Under dfg_pf_mutex (the table)
 * and dfg_pf_lock (the image, ->up).
 */
static int dfg_pf_range_check(const struct dfg_pf_remote *r, int *dead)
{
	unsigned int i;

	*dead = -1;
	if (dfg_pf_hdr && !dfg_pf_same_set(r->part_set, dfg_pf_hdr->part_set))
		return -EXDEV;
	if (dfg_pf_hdr && dfg_pf_overlap(r->node_first, r->node_count,
					 dfg_pf_hdr->node_first,
					 dfg_pf_hdr->node_count))
		return -EINVAL;
	for (i = 0; i < DFG_PF_PEERS_MAX; i++) {
		struct dfg_pf_peer *p = dfg_pf_peers[i];

		if (!p || !dfg_pf_overlap(r->node_first, r->node_count,
					  p->r.node_first, p->r.node_count))
			continue;
		/* A dead peer's exact range may be taken over by its heir. */
		if (p->up || p->r.node_first != r->node_first ||
		    p->r.node_count != r->node_count || *dead >= 0)
			return -EEXIST;
		*dead = i;
	}
	return 0;
}

/*
 * Under dfg_pf_mutex: the cache, made on first use so that loading the
 * module (and a machine without peers) costs none of it.
 */
static int dfg_pf_cache_make(void)
{
	struct dfg_pf_cache_hdr *cache;

	if (dfg_pf_cache)
		return 0;
	cache = vmalloc_user(DFG_PF_CACHE_DATA + dfg_pf_ring_bytes);
	if (!cache)
		return -ENOMEM;
	cache->data_bytes = dfg_pf_ring_bytes;
	/* Pairs with the acquire in dfg_pf_mmap(). */
	smp_store_release(&dfg_pf_cache, cache);
	return 0;
}

/* DFG_IOC_PEER_ADD */
int dfg_pf_peer_add(struct dfg_cmd_ctx *c)
{
	struct dfg_peer_add *a = c->args;
	const struct dfg_pf_xport *xp;
	struct sockaddr_storage ss;
	struct dfg_pf_peer *p;
	unsigned int tmo, i;
	int ret, dead, slot = -1;

	if (a->flags || a->id || a->node_first || a->node_count ||
	    memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return -EINVAL;
	ret = dfg_pf_addr(a, &ss);
	if (ret)
		return ret;
	/* A struct that cannot take the results fails before a connection. */
	ret = dfg_cmd_copy_out(c);
	if (ret)
		return ret;
	tmo = a->timeout_ms ?: 5000;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;

	mutex_lock(&dfg_pf_mutex);
	xp = dfg_pf_xport;
	ret = -ENODEV;
	if (!xp)
		goto out_unlock;
	ret = dfg_pf_cache_make();
	if (ret)
		goto out_unlock;
	p->conn = xp->connect(p, &ss, tmo, &p->r);
	if (IS_ERR(p->conn)) {
		ret = PTR_ERR(p->conn);
		goto out_unlock;
	}
	ret = -EPROTO;
	if (!p->r.node_count || p->r.feat_bytes > DFG_PART_FEAT_MAX ||
	    p->r.node_first + p->r.node_count < p->r.node_first ||
	    !dfg_pf_sect_ok(p->r.image_bytes, p->r.row_off,
			    p->r.node_count + 1, 8) ||
	    !dfg_pf_sect_ok(p->r.image_bytes, p->r.col_off, p->r.col_count,
			    8) ||
	    !dfg_pf_sect_ok(p->r.image_bytes, p->r.feat_off, p->r.node_count,
			    p->r.feat_bytes))
		goto out_disconnect;
	spin_lock(&dfg_pf_lock);
	ret = dfg_pf_range_check(&p->r, &dead);
	spin_unlock(&dfg_pf_lock);
	if (ret)
		goto out_disconnect;
	if (dead >= 0) {
		down_write(&dfg_pf_rwsem);
		dfg_pf_peer_remove(dead);
		up_write(&dfg_pf_rwsem);
		slot = dead;
	}
	for (i = 0; i < DFG_PF_PEERS_MAX && slot < 0; i++)
		if (!dfg_pf_peers[i])
			slot = i;
	ret = -ENOSPC;
	if (slot < 0)
		goto out_disconnect;
	p->id = slot;
	ret = dfg_pf_peer_dir(xp, p, tmo);
	if (ret)
		goto out_disconnect;

	a->id = slot;
	a->node_first = p->r.node_first;
	a->node_count = p->r.node_count;
	ret = dfg_cmd_copy_out(c);
	if (ret)
		goto out_disconnect;
	spin_lock(&dfg_pf_lock);
	/*
	 * A PART_LOAD since the range check may have brought an image of
	 * another set: it checks the published peers under this lock, and
	 * this one under the same lock, so one of the two refuses.
	 */
	if (dfg_pf_hdr && !dfg_pf_same_set(p->r.part_set,
					   dfg_pf_hdr->part_set)) {
		spin_unlock(&dfg_pf_lock);
		ret = -EXDEV;
		goto out_disconnect;
	}
	/* Up unless it died already: then its requests fail at once. */
	p->up = !p->lost;
	dfg_pf_peers[slot] = p;
	spin_unlock(&dfg_pf_lock);
	dfg_pf_traffic_add(slot, &ss);
	mutex_unlock(&dfg_pf_mutex);
	dfg_nl_graph_event(DFG_EV_PF_PEER_UP, current->tgid, 0, slot, NULL);
	return 0;

out_disconnect:
	xp->disconnect(p->conn);
	vfree(p->row);
out_unlock:
	mutex_unlock(&dfg_pf_mutex);
	kfree(p);
	return ret;
}

/* ---- the cache ---- */

static u32 dfg_pf_key(u64 node, u8 kind)
{
	return hash_64(node << 1 | kind, 32);
}

static struct dfg_pf_entry *dfg_pf_lookup(u64 node, u8 kind)
{
	struct dfg_pf_entry *e;

	hash_for_each_possible(dfg_pf_index, e, hnode, dfg_pf_key(node, kind))
		if (e->node == node && e->kind == kind && !e->filling)
			return e;
	return NULL;
}

static void dfg_pf_entry_del(struct dfg_pf_entry *e)
{
	hash_del(&e->hnode);
	list_del(&e->lnode);
	kfree(e);
}

/*
 * Under dfg_pf_lock: room for @len bytes at the ring's head, evicting the
 * oldest entries; -EBUSY if one of them is still being filled.
 */
static int dfg_pf_ring_alloc(u32 len, u64 *pos)
{
	u64 size = dfg_pf_ring_bytes, head = dfg_pf_cache->head, end;
	struct dfg_pf_entry *e, *tmp;

	if (len > size)
		return -E2BIG;
	if (head % size + len > size)
		head = roundup(head, size);
	end = head + len;
	list_for_each_entry(e, &dfg_pf_fifo, lnode) {
		if (e->pos + size >= end)
			break;
		if (e->filling)
			return -EBUSY;
	}
	list_for_each_entry_safe(e, tmp, &dfg_pf_fifo, lnode) {
		if (e->pos + size >= end)
			break;
		dfg_pf_entry_del(e);
		dfg_pf_stats[DFG_PF_EVICTIONS]++;
	}
	/* Readers check tail after copying: it moves before the bytes do. */
	if (end > size && dfg_pf_cache->tail < end - size)
		WRITE_ONCE(dfg_pf_cache->tail, end - size);
	smp_wmb();	/* tail before head: pairs with readers' smp_rmb() */
	WRITE_ONCE(dfg_pf_cache->head, end);
	*pos = head;
	return 0;
}

/* ---- PREFETCH ---- */

/* Index of @id in the sorted replica IDs, or -1. */
static s64 dfg_pf_replica(const struct dfg_part_hdr *h, u64 id)
{
	const u64 *ids = (const void *)h + h->rep_ids_off;
	u64 lo = 0, hi = h->rep_count;

	while (lo < hi) {
		u64 mid = lo + (hi - lo) / 2;

		if (ids[mid] == id)
			return mid;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Own or replicated node: its bytes in the partition mapping. */
static void dfg_pf_loc_image(const struct dfg_part_hdr *h, u64 row_off,
			     u64 col_off, u64 feat_off, u64 i, u8 kind,
			     struct dfg_pf_loc *l)
{
	const u64 *row = (const void *)h + row_off;

	if (kind == DFG_PF_K_NBRS) {
		l->pos = col_off + row[i] * 8;
		l->len = (row[i + 1] - row[i]) * 8;
	} else {
		l->pos = feat_off + i * h->feat_bytes;
		l->len = h->feat_bytes;
	}
}

static struct dfg_pf_peer *dfg_pf_owner(u64 id)
{
	unsigned int i;

	for (i = 0; i < DFG_PF_PEERS_MAX; i++) {
		struct dfg_pf_peer *p = dfg_pf_peers[i];

		if (p && id - p->r.node_first < p->r.node_count)
			return p;
	}
	return NULL;
}

/*
 * Under dfg_pf_lock: where entry @kind of node @id is, or the read that
 * brings it (*rd filled, entry allocated). Returns 0 or a negative errno.
 */
static int dfg_pf_resolve(u64 id, u8 kind, struct dfg_pf_loc *l,
			  struct dfg_pf_rd *rd, bool *read,
			  struct dfg_pf_req *req)
{
	const struct dfg_part_hdr *h = dfg_pf_hdr;
	struct dfg_pf_peer *p;
	struct dfg_pf_entry *e;
	u64 i, off;
	s64 r;
	u32 len;
	int ret;

	*read = false;
	if (id - h->node_first < h->node_count) {
		dfg_pf_loc_image(h, h->row_off, h->col_off, h->feat_off,
				 id - h->node_first, kind, l);
		l->where = DFG_PF_IN_PART;
		dfg_pf_stats[DFG_PF_LOCAL]++;
		return 0;
	}
	r = dfg_pf_replica(h, id);
	if (r >= 0) {
		dfg_pf_loc_image(h, h->rep_row_off, h->rep_col_off,
				 h->rep_feat_off, r, kind, l);
		l->where = DFG_PF_IN_REPLICA;
		dfg_pf_stats[DFG_PF_REPLICA]++;
		return 0;
	}
	p = dfg_pf_owner(id);
	if (!p)
		return -EINVAL;
	/* What the cache holds stays valid when its owner dies. */
	l->where = DFG_PF_IN_CACHE;
	e = dfg_pf_lookup(id, kind);
	if (e) {
		l->pos = e->pos;
		l->len = e->len;
		l->hit = 1;
		dfg_pf_stats[DFG_PF_HITS]++;
		return 0;
	}
	i = id - p->r.node_first;
	if (kind == DFG_PF_K_NBRS) {
		off = p->r.col_off + p->row[i] * 8;
		len = (p->row[i + 1] - p->row[i]) * 8;
	} else {
		off = p->r.feat_off + i * p->r.feat_bytes;
		len = p->r.feat_bytes;
	}
	l->len = len;
	l->hit = 1;
	/* Empty lists are known from the directory: no peer needed. */
	if (!len)
		return 0;
	if (!p->up)
		return -EHOSTUNREACH;
	/* Claim 10: speculation only while the owner's link is quiet. */
	if (req->spec && !dfg_pf_traffic_open(p->id)) {
		l->where = DFG_PF_GATED;
		l->hit = 0;
		req->gated[p->id]++;
		req->ngated++;
		return 0;
	}
	e = kzalloc(sizeof(*e), GFP_ATOMIC);
	if (!e)
		return -ENOMEM;
	ret = dfg_pf_ring_alloc(len, &l->pos);
	if (ret) {
		kfree(e);
		return ret;
	}
	l->hit = 0;
	e->node = id;
	e->kind = kind;
	e->pos = l->pos;
	e->len = len;
	e->filling = true;
	hash_add(dfg_pf_index, &e->hnode, dfg_pf_key(id, kind));
	list_add_tail(&e->lnode, &dfg_pf_fifo);
	rd->e = e;
	rd->peer = p;
	rd->rd.off = off;
	rd->rd.len = len;
	rd->rd.dst = dfg_pf_ring(l->pos);
	dfg_pf_stats[DFG_PF_MISSES]++;
	*read = true;
	return 0;
}

static void dfg_pf_req_put(struct dfg_pf_req *req)
{
	if (refcount_dec_and_test(&req->ref))
		kvfree(req);
}

/* Under dfg_pf_lock: one read of @req ended with @status. */
static void dfg_pf_req_end(struct dfg_pf_req *req, int status)
{
	struct dfg_waiter *w;

	if (status && !req->err)
		req->err = status;
	if (--req->pending)
		return;
	w = list_first_entry_or_null(&req->waiters, struct dfg_waiter, node);
	if (w)
		dfg_waiter_complete(w, req->err ?: req->nreads,
				    req->err ? 0 : req->ngated, NULL);
}

/**
 * dfg_pf_read_done() - a transport finished a read
 * @rd: the read passed to ->read
 * @status: 0, or a negative errno (-EHOSTUNREACH when the peer is gone)
 *
 * Context: process context, no lock of dfg.ko held.
 */
void dfg_pf_read_done(struct dfg_pf_read *rd, int status)
{
	struct dfg_pf_rd *r;
	struct dfg_pf_req *req;

	if (rd->end) {
		rd->end(rd, status);
		return;
	}
	r = container_of(rd, struct dfg_pf_rd, rd);
	req = r->req;
	trace_dfg_pf_read_done(r->peer->id, rd->len, status);
	spin_lock(&dfg_pf_lock);
	dfg_pf_stats[DFG_PF_INFLIGHT]--;
	if (status) {
		dfg_pf_stats[DFG_PF_ERRORS]++;
		dfg_pf_entry_del(r->e);
	} else {
		r->e->filling = false;
		dfg_pf_stats[DFG_PF_BYTES] += rd->len;
		dfg_pf_stats[DFG_PF_PUTS]++;
	}
	dfg_pf_req_end(req, status);
	spin_unlock(&dfg_pf_lock);
	dfg_pf_req_put(req);
}
EXPORT_SYMBOL_GPL(dfg_pf_read_done);

/* Under dfg_pf_lock: take back the entries of reads that never started. */
static void dfg_pf_unresolve(struct dfg_pf_req *req)
{
	unsigned int i;

	for (i = 0; i < req->nreads; i++) {
		dfg_pf_entry_del(req->rds[i].e);
		dfg_pf_stats[DFG_PF_MISSES]--;
	}
	req->nreads = 0;
	req->ngated = 0;
	memset(req->gated, 0, sizeof(req->gated));
}

/* Resolve every entry; on error nothing stays allocated. */
static int dfg_pf_resolve_all(struct dfg_pf_req *req, const u64 *ids,
			      u32 nr, u32 what, struct dfg_pf_loc *locs)
{
	unsigned int i, k, n = 0;
	bool read;
	int ret;

	spin_lock(&dfg_pf_lock);
	if (!dfg_pf_hdr) {
		ret = -ENODATA;
		goto out;
	}
	for (i = 0; i < nr; i++) {
		for (k = 0; k < 2; k++) {
			if (!(what & BIT(k)))
				continue;
			ret = dfg_pf_resolve(ids[i], k, &locs[n],
					     &req->rds[req->nreads], &read,
					     req);
			if (ret) {
				dfg_pf_unresolve(req);
				goto out;
			}
			n++;
			if (read)
				req->rds[req->nreads++].req = req;
		}
	}
	/* One for the issuer's count, dropped once every read started. */
	req->pending = req->nreads + 1;
	dfg_pf_stats[DFG_PF_INFLIGHT] += req->nreads;
	dfg_pf_stats[DFG_PF_READS] += req->nreads;
	ret = 0;
out:
	spin_unlock(&dfg_pf_lock);
	return ret;
}

/* A speculative request's reads and gated entries, in sysfs. */
static void dfg_pf_spec_count(struct dfg_pf_req *req)
{
	u32 issued[DFG_PF_PEERS_MAX] = { };
	unsigned int i;

	for (i = 0; i < req->nreads; i++)
		issued[req->rds[i].peer->id]++;
	for (i = 0; i < DFG_PF_PEERS_MAX; i++)
		if (issued[i] || req->gated[i])
			dfg_pf_traffic_count(i, issued[i], req->gated[i]);
	spin_lock(&dfg_pf_lock);
	dfg_pf_stats[DFG_PF_SPEC_ISSUED] += req->nreads;
	dfg_pf_stats[DFG_PF_SPEC_GATED] += req->ngated;
	spin_unlock(&dfg_pf_lock);
}

/*
 * Start @req's reads: one ->read per peer with all of its reads, in the
 * order their entries were asked (@vec: room for req->nreads pointers).
 * Under dfg_pf_rwsem read-held, so each peer's connection stays.
 */
static void dfg_pf_start(struct dfg_pf_req *req, struct dfg_pf_read **vec)
{
	unsigned int first[DFG_PF_PEERS_MAX + 1] = { };
	unsigned int at[DFG_PF_PEERS_MAX];
	unsigned int i, j, n;
	int ret;

	for (i = 0; i < req->nreads; i++)
		first[req->rds[i].peer->id + 1]++;
	for (i = 0; i < DFG_PF_PEERS_MAX; i++) {
		first[i + 1] += first[i];
		at[i] = first[i];
	}
	for (i = 0; i < req->nreads; i++)
		vec[at[req->rds[i].peer->id]++] = &req->rds[i].rd;
	for (i = 0; i < DFG_PF_PEERS_MAX; i++) {
		struct dfg_pf_rd *r;

		n = first[i + 1] - first[i];
		if (!n)
			continue;
		r = container_of(vec[first[i]], struct dfg_pf_rd, rd);
		/* One per read: dfg_pf_read_done() drops it. */
		refcount_add(n, &req->ref);
		ret = dfg_pf_xport->read(r->peer->conn, vec + first[i], n);
		if (ret)
			for (j = first[i]; j < first[i + 1]; j++)
				dfg_pf_read_done(vec[j], ret);
	}
}

/* DFG_IOC_PREFETCH */
int dfg_pf_prefetch(struct dfg_cmd_ctx *c)
{
	struct dfg_prefetch *a = c->args;
	struct dfg_waiter onstack, *w;
	unsigned int nent;
	struct dfg_pf_read **vec;
	struct dfg_pf_loc *locs;
	struct dfg_pf_req *req;
	u64 *ids;
	int ret;

	if ((a->flags & ~DFG_PF_FLAGS_ALL) || a->reserved || !a->what ||
	    (a->what & ~DFG_PF_ALL) || !a->nr || a->nr > DFG_PF_NR_MAX)
		return -EINVAL;
	nent = a->nr * hweight32(a->what);
	ids = kvmalloc_array(a->nr, sizeof(*ids), GFP_KERNEL);
	locs = kvcalloc(nent, sizeof(*locs), GFP_KERNEL);
	req = kvzalloc(struct_size(req, rds, nent), GFP_KERNEL);
	vec = kvmalloc_array(nent, sizeof(*vec), GFP_KERNEL);
	ret = -ENOMEM;
	if (!ids || !locs || !req || !vec)
		goto out_free;
	refcount_set(&req->ref, 1);
	INIT_LIST_HEAD(&req->waiters);
	req->spec = a->flags & DFG_PF_SPECULATIVE;
	ret = -EFAULT;
	if (copy_from_user(ids, u64_to_user_ptr(a->ids),
			   a->nr * sizeof(*ids)))
		goto out_free;

	/* Keeps the transport and its connections until the reads start. */
	down_read(&dfg_pf_rwsem);
	ret = dfg_pf_resolve_all(req, ids, a->nr, a->what, locs);
	if (ret)
		goto out_up;
	trace_dfg_pf_prefetch(a->nr, a->what, a->flags, req->nreads,
			      req->ngated);
	if (copy_to_user(u64_to_user_ptr(a->out), locs,
			 nent * sizeof(*locs))) {
		spin_lock(&dfg_pf_lock);
		dfg_pf_stats[DFG_PF_INFLIGHT] -= req->nreads;
		dfg_pf_stats[DFG_PF_READS] -= req->nreads;
		dfg_pf_unresolve(req);
		spin_unlock(&dfg_pf_lock);
		ret = -EFAULT;
		goto out_up;
	}
	if (req->spec)
		dfg_pf_spec_count(req);
	dfg_pf_start(req, vec);
	up_read(&dfg_pf_rwsem);
	kvfree(vec);
	kvfree(ids);
	kvfree(locs);

	/* The issuer's count goes: what is left are reads in flight. */
	w = dfg_waiter_new(c, &onstack, sizeof(onstack), 0, &dfg_pf_lock);
	spin_lock(&dfg_pf_lock);
	if (!--req->pending) {
		ret = req->err ?: req->nreads;
		if (!req->err)
			c->res2 = req->ngated;
		spin_unlock(&dfg_pf_lock);
		if (w)
			dfg_waiter_discard(c, w);
		dfg_pf_req_put(req);
		return ret;
	}
	/* Failing to wait leaves the reads to finish on their own. */
	ret = w ? dfg_waiter_arm(c, w, &req->waiters) : -ENOMEM;
	spin_unlock(&dfg_pf_lock);
	if (ret) {
		if (w)
			dfg_waiter_discard(c, w);
		dfg_pf_req_put(req);
		return ret;
	}
	ret = dfg_waiter_block(c, w);
	dfg_pf_req_put(req);
	return ret;

out_up:
	up_read(&dfg_pf_rwsem);
out_free:
	kvfree(vec);
	kvfree(req);
	kvfree(locs);
	kvfree(ids);
	return ret;
}

/* ---- mmap ---- */

/* mmap of /dev/dfg: the partition at 0, the cache at DFG_PF_MMAP_CACHE. */
int dfg_pf_mmap(struct file *file, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	unsigned long pgoff;
	void *mem;
	int ret;

	if (!(vma->vm_flags & VM_MAYSHARE) || (vma->vm_flags & VM_WRITE))
		return -EACCES;
	dfg_vm_flags_clear(vma, VM_MAYWRITE);
	if (off >= DFG_PF_MMAP_CACHE) {
		/* Pairs with the release in dfg_pf_cache_make(). */
		mem = smp_load_acquire(&dfg_pf_cache);
		pgoff = (off - DFG_PF_MMAP_CACHE) >> PAGE_SHIFT;
		return mem ? remap_vmalloc_range(vma, mem, pgoff) : -ENODATA;
	}
	mutex_lock(&dfg_pf_image_lock);
	mem = dfg_pf_image;
	ret = mem ? remap_vmalloc_range(vma, mem, vma->vm_pgoff) : -ENODATA;
	mutex_unlock(&dfg_pf_image_lock);
	return ret;
}

/* ---- sysfs prefetch/ ---- */

static struct kobj_attribute dfg_pf_stat_attrs[DFG_PF_NR_STATS];

static ssize_t dfg_pf_stat_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	u64 v;

	spin_lock(&dfg_pf_lock);
	v = dfg_pf_stats[attr - dfg_pf_stat_attrs];
	spin_unlock(&dfg_pf_lock);
	return sysfs_emit(buf, "%llu\n", v);
}

/* One line per peer: id, first node, nodes, up. */
static ssize_t peers_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	unsigned int i;
	int n = 0;

	spin_lock(&dfg_pf_lock);
	for (i = 0; i < DFG_PF_PEERS_MAX; i++) {
		struct dfg_pf_peer *p = dfg_pf_peers[i];

		if (p)
			n += sysfs_emit_at(buf, n, "%u %llu %llu %s\n", i,
					   p->r.node_first, p->r.node_count,
					   p->up ? "up" : "down");
	}
	spin_unlock(&dfg_pf_lock);
	return n;
}

/* The own partition: first node, nodes, replicas, bytes (or empty). */
static ssize_t partition_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	int n = 0;

	spin_lock(&dfg_pf_lock);
	if (dfg_pf_hdr)
		n = sysfs_emit(buf, "%llu %llu %llu %llu\n",
			       dfg_pf_hdr->node_first, dfg_pf_hdr->node_count,
			       dfg_pf_hdr->rep_count, dfg_pf_image_bytes);
	spin_unlock(&dfg_pf_lock);
	return n;
}

static ssize_t transport_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	ssize_t n;

	mutex_lock(&dfg_pf_mutex);
	n = sysfs_emit(buf, "%s\n", dfg_pf_xport ? dfg_pf_xport->name : "");
	mutex_unlock(&dfg_pf_mutex);
	return n;
}

static ssize_t cache_bytes_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", dfg_pf_ring_bytes);
}

static struct kobj_attribute dfg_pf_attr_peers = __ATTR_RO(peers);
static struct kobj_attribute dfg_pf_attr_partition = __ATTR_RO(partition);
static struct kobj_attribute dfg_pf_attr_transport = __ATTR_RO(transport);
static struct kobj_attribute dfg_pf_attr_cache_bytes = __ATTR_RO(cache_bytes);

/* The counters' entries are filled in by dfg_pf_init(). */
static struct attribute *dfg_pf_attrs[DFG_PF_NR_STATS + 5] = {
	&dfg_pf_attr_peers.attr,
	&dfg_pf_attr_partition.attr,
	&dfg_pf_attr_transport.attr,
	&dfg_pf_attr_cache_bytes.attr,
};

static const struct attribute_group dfg_pf_group = {
	.attrs = dfg_pf_attrs,
};

/* ---- init and exit ---- */

int dfg_pf_init(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < DFG_PF_NR_STATS; i++) {
		struct kobj_attribute *ka = &dfg_pf_stat_attrs[i];

		sysfs_attr_init(&ka->attr);
		ka->attr.name = dfg_pf_stat_names[i];
		ka->attr.mode = 0444;
		ka->show = dfg_pf_stat_show;
		dfg_pf_attrs[4 + i] = &ka->attr;
	}

	if (!dfg_pf_cache_mb || dfg_pf_cache_mb > 1024)
		return -EINVAL;
	dfg_pf_ring_bytes = (u64)dfg_pf_cache_mb << 20;
	dfg_pf_kobj = kobject_create_and_add("prefetch", dfg_sysfs_kobj());
	if (!dfg_pf_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(dfg_pf_kobj, &dfg_pf_group);
	if (ret)
		goto out_put;
	ret = dfg_pf_traffic_init(dfg_pf_kobj);
	if (ret)
		goto out_remove;
	return 0;

out_remove:
	sysfs_remove_group(dfg_pf_kobj, &dfg_pf_group);
out_put:
	kobject_put(dfg_pf_kobj);
	return ret;
}

/* No transport is left (it depends on us), hence no peer and no read. */
void dfg_pf_exit(void)
{
	struct dfg_pf_entry *e, *tmp;

	dfg_pf_traffic_exit(dfg_pf_kobj);
	sysfs_remove_group(dfg_pf_kobj, &dfg_pf_group);
	kobject_put(dfg_pf_kobj);
	list_for_each_entry_safe(e, tmp, &dfg_pf_fifo, lnode)
		dfg_pf_entry_del(e);
	vfree(dfg_pf_cache);
	vfree(dfg_pf_image);
}
