// SPDX-License-Identifier: GPL-2.0
/*
 * region.c - exported regions: DFG_IOC_REGION_EXPORT, _UNEXPORT, _COPY and
 * mmap of region offsets on graph descriptors (found by graph.c through the
 * region's mmap key, then dfg_obj_ops.mmap).
 *
 * Objects, locks and references
 *   struct dfg_xregion	one per exported range, a dfg_object of its graph.
 *     ->ref		(kref) memory of the struct. Held by the export
 *			(the graph's entry in dfg_graph.objects, dropped at
 *			unexport or graph death), by every vma that maps the
 *			region (vm_ops open/close: a vma outlives unexport
 *			and its fault handler still reads the struct), and
 *			by a command between lookup and return, and by
 *			->kobj while it is in sysfs.
 *     ->kobj		sysfs graphs/<gid>/region<id>/ (size, pages,
 *			writable: immutable; users: refcount_read() of
 *			->users), read without a lock. Holds one ->ref
 *			(its release puts it). Added before the region is
 *			published in its graph (its id reserved first);
 *			removed (kobject_del(), draining readers, then put)
 *			by dfg_region_unpublish(): at UNEXPORT by the
 *			caller that hid the graph entry, first thing of
 *			the revocation, and at the graph's death under
 *			dfg_graphs_lock before the graph's directory.
 *			Either way before the export's references go, and
 *			before the id is given back (a new region with
 *			the same id would meet the old directory).
 *     ->users		(refcount_t) users of the pinned pages: one for the
 *			export itself, one per COPY in flight. The last put
 *			unpins, uncharges and frees the page array, so no
 *			page is unpinned while a copy still reads or writes
 *			it, and unexport never waits for a copy.
 *     ->map_lock	(rw_semaphore) orders revocation against faults:
 *			a fault holds it for reading from its ->revoked
 *			check until its pte is installed; revocation sets
 *			->revoked under it for writing. So after the write
 *			section no fault can install a pte any more, and
 *			every pte installed before it is in the page
 *			tables for the zap that follows. An rwsem, not a
 *			spinlock: inserting a pte may allocate page tables.
 *			Never held across a user copy (a COPY whose buffer
 *			is a mapping of the same region faults into it).
 *     ->mapping	the address_space the region's vmas are linked into
 *			(set by the first mmap, cmpxchg). Every graph
 *			descriptor is an anon-inode file and all of them
 *			share anon_inode_getfile()'s one inode, so this is
 *			the same mapping for every graph: hence offsets
 *			unique module-wide (the mmap key, below).
 *     ->pages		the pinned pages (pin_user_pages_fast(),
 *			FOLL_LONGTERM); immutable while ->users > 0.
 *     ->user		the exporter's user_struct (get_uid()), charged
 *			->locked pages of RLIMIT_MEMLOCK until the unpin.
 *   ->key		the region's module-wide mmap key (graph.c's
 *			dfg_mmap_keys): its mmap offset is DFG_MMAP_REGION
 *			| key << DFG_MMAP_SHIFT. Held from export until
 *			revocation starts. graph.c's mmap lookup takes ->ref
 *			(dfg_obj_ops.get) under the table's lock, and
 *			revocation erases the key before it drops the
 *			export's ->ref, so a region found is alive.
 *   dfg_pinned_pages	pages pinned by all regions (sysfs "pinned").
 *
 * Lookups by id (UNEXPORT, COPY, and CHAN_CREATE's pool lookup, which only
 * reads ->nr_pages and takes no reference) run under the graph xarray's
 * lock; the entry is hidden under that lock by the one UNEXPORT that wins
 * (or by graph death), which then owns the export's references. A channel
 * whose pool is a region holds nothing of it: unexport does not look at
 * channels, and their descriptors (offsets) stay as they are.
 *
 * Lock order: see dfg.h (->map_lock sits between mmap_lock, held by a
 * fault, and the page table locks; revocation never takes mmap_lock).
 *
 * Why peers get page-frame (VM_PFNMAP) mappings, not struct-page ones:
 * the exporter's pages are usually anonymous. vm_insert_page() refuses
 * anonymous pages, and returning one from .fault into a shared file vma
 * would file-rmap an anonymous page (page_add_file_rmap(), and
 * fault_dirty_shared_page() takes page_rmapping() of it as an
 * address_space). vmf_insert_pfn() installs special ptes that hold no page
 * reference and no rmap; GUP refuses them, so no page reference escapes
 * revocation through a peer. The price is that a pte does not keep its
 * page alive, so the order of revocation is the whole safety argument:
 *
 *   1. hide the graph entry (no new COPY or UNEXPORT finds it; the id
 *      stays reserved until the directory is gone) and erase the key (no
 *      new mmap finds it);
 *   2. ->revoked = true under ->map_lock for writing: from here on every
 *      fault returns VM_FAULT_SIGBUS, and no fault is between its check
 *      and its pte;
 *   3. unmap_mapping_range() of the region's offsets: zaps every pte of
 *      every vma (all processes, forked copies included: dup_mmap() links
 *      a child's vma after its parent's, so the walk zaps the parent's
 *      ptes before it reaches the child's copy);
 *   4. drop the export's ->users: the last user unpins (dirtying pages
 *      peers could write), uncharges and frees the array;
 *   5. drop the export's ->ref; the last vma's close frees the struct.
 *
 * Exit of the exporter changes nothing: the pins hold the pages, the
 * charge is on its user_struct. Graph death runs the same revocation
 * (no vma can exist then: a vma holds its file, the file the graph).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/rwsem.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>

#include "dfg.h"
#include "trace.h"

static const struct dfg_obj_ops dfg_region_obj_ops;

atomic_long_t dfg_pinned_pages = ATOMIC_LONG_INIT(0);

/* Pages one fault maps (the aligned window of the faulting one): 1 MiB */
#define DFG_REGION_PREFAULT	256

/**
 * struct dfg_xregion - one exported range (see the top of this file)
 * @obj:	header; @obj.id is the region's id in its graph
 * @ref:	memory of this struct
 * @kobj:	sysfs graphs/<gid>/region<id>/; holds a @ref while added
 * @in_sysfs:	@kobj is in sysfs (owned by whoever owns the export)
 * @users:	users of @pages; the last put unpins
 * @map_lock:	faults (read) against revocation (write)
 * @revoked:	set once under @map_lock for writing; faults give SIGBUS
 * @mapping:	address_space of the vmas (first mmap sets it)
 * @key:	module-wide key, the mmap offset's
 * @writable:	DFG_REGION_F_WRITE: pinned FOLL_WRITE, peers may write
 * @nr_pages:	length of @pages
 * @pages:	pinned pages
 * @user:	exporter's user_struct (reference held)
 * @locked:	pages charged to @user->locked_vm (0 with CAP_IPC_LOCK)
 */
struct dfg_xregion {
	struct dfg_object	obj;
	struct kref		ref;
	struct kobject		kobj;
	bool			in_sysfs;
	refcount_t		users;
	struct rw_semaphore	map_lock;
	bool			revoked;
	struct address_space	*mapping;
	u32			key;
	bool			writable;
	unsigned long		nr_pages;
	struct page		**pages;
	struct user_struct	*user;
	unsigned long		locked;
};

/* The region's mmap offset; @r->key is immutable once allocated. */
static u64 dfg_region_offset(const struct dfg_xregion *r)
{
	return dfg_mmap_key_offset(r->key);
}

static void dfg_region_release(struct kref *ref)
{
	struct dfg_xregion *r = container_of(ref, struct dfg_xregion, ref);

	/* The export's ->users went before its ->ref: pages are gone. */
	WARN_ON_ONCE(r->pages);
	kfree(r);
}

static void dfg_region_put(struct dfg_xregion *r)
{
	kref_put(&r->ref, dfg_region_release);
}

/* sysfs: graphs/<gid>/region<id>/ */
static struct dfg_xregion *dfg_kobj_region(struct kobject *kobj)
{
	return container_of(kobj, struct dfg_xregion, kobj);
}

static ssize_t region_size_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  (unsigned long long)dfg_kobj_region(kobj)->nr_pages
			  << PAGE_SHIFT);
}

static ssize_t region_pages_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", dfg_kobj_region(kobj)->nr_pages);
}

static ssize_t region_writable_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", dfg_kobj_region(kobj)->writable);
}

/* The export's own user plus COPYs in flight. */
static ssize_t region_users_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  refcount_read(&dfg_kobj_region(kobj)->users));
}

static struct kobj_attribute dfg_rattr_size =
	__ATTR(size, 0444, region_size_show, NULL);
static struct kobj_attribute dfg_rattr_pages =
	__ATTR(pages, 0444, region_pages_show, NULL);
static struct kobj_attribute dfg_rattr_writable =
	__ATTR(writable, 0444, region_writable_show, NULL);
static struct kobj_attribute dfg_rattr_users =
	__ATTR(users, 0444, region_users_show, NULL);

static struct attribute *dfg_region_attrs[] = {
	&dfg_rattr_size.attr,
	&dfg_rattr_pages.attr,
	&dfg_rattr_writable.attr,
	&dfg_rattr_users.attr,
	NULL,
};
ATTRIBUTE_GROUPS(dfg_region);

static void dfg_region_kobj_release(struct kobject *kobj)
{
	dfg_region_put(dfg_kobj_region(kobj));
}

static const struct kobj_type dfg_region_ktype = {
	.release	= dfg_region_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= dfg_region_groups,
};

/* Add graphs/<gid>/region<id>/ for a reserved, not yet published id. */
static int dfg_region_publish(struct dfg_xregion *r)
{
	int ret;

	kref_get(&r->ref);		/* the kobject's; its release puts it */
	kobject_init(&r->kobj, &dfg_region_ktype);
	ret = dfg_obj_add_dir(&r->obj, &r->kobj);
	if (ret) {
		kobject_put(&r->kobj);
		return ret;
	}
	r->in_sysfs = true;
	return 0;
}

/**
 * dfg_region_unpublish() - remove graphs/<gid>/region<id>
 * @obj: a region whose export the caller owns (UNEXPORT that hid it,
 *	or the graph's death under dfg_graphs_lock)
 *
 * Waits for attribute readers (which take no lock), then drops the
 * directory's ->ref; the export's reference keeps the struct.
 */
static void dfg_region_unpublish(struct dfg_object *obj)
{
	struct dfg_xregion *r = container_of(obj, struct dfg_xregion, obj);

	if (r->in_sysfs) {
		r->in_sysfs = false;
		kobject_del(&r->kobj);
		kobject_put(&r->kobj);
	}
}

/*
 * Unpin and uncharge. Only from the last ->users put, or on the export's
 * own error path before anyone else could see the region. Pages peers
 * (or COPY) could write are dirtied, as every GUP user that wrote does.
 */
static void dfg_region_unpin(struct dfg_xregion *r)
{
	unpin_user_pages_dirty_lock(r->pages, r->nr_pages, r->writable);
	kvfree(r->pages);
	r->pages = NULL;
	atomic_long_sub(r->nr_pages, &dfg_pinned_pages);
	dfg_unaccount_mem(r->user, r->locked);
	free_uid(r->user);
	r->user = NULL;
	dfg_obj_uncharge(&r->obj);	/* the export ends with its pins */
}

static void dfg_region_users_put(struct dfg_xregion *r)
{
	if (refcount_dec_and_test(&r->users))
		dfg_region_unpin(r);
}

/*
 * Steps 2-5 of the revocation (see the top of this file) after the key's
 * erasure; the caller has taken the region out of its graph (or never put
 * it there) and owns the export's ->users and ->ref, which this drops.
 */
static void __dfg_region_revoke(struct dfg_xregion *r)
{
	struct address_space *mapping;

	dfg_region_unpublish(&r->obj);
	dfg_mmap_key_erase(r->key);

	down_write(&r->map_lock);
	r->revoked = true;
	up_write(&r->map_lock);

	/* Set by mmap before any pte of the region could exist. */
	mapping = READ_ONCE(r->mapping);
	if (mapping)
		unmap_mapping_range(mapping, dfg_region_offset(r),
				    (loff_t)r->nr_pages << PAGE_SHIFT, 1);

	dfg_region_users_put(r);
	dfg_region_put(r);
}

/* Revocation of an exported region, reported to tracing and netlink. */
static void dfg_region_revoke(struct dfg_xregion *r, pid_t pid)
{
	u32 graph = r->obj.graph->id, id = r->obj.id;
	unsigned long nr_pages = r->nr_pages;

	__dfg_region_revoke(r);
	trace_dfg_region_unexport(graph, id, nr_pages);
	dfg_nl_graph_event(DFG_EV_REGION_UNEXPORT, pid, graph, id, NULL);
}

/**
 * dfg_region_destroy() - revoke a region whose graph is dying
 * @obj: the region's header, already out of dfg_graph.objects
 *
 * Context: process context; nothing maps the graph any more.
 */
static void dfg_region_destroy(struct dfg_object *obj)
{
	dfg_region_revoke(container_of(obj, struct dfg_xregion, obj), 0);
}

/*
 * Region @id of @g with a ->ref for the caller, or NULL. With @hide, the
 * region also leaves the graph's lookups and the caller owns the export's
 * references instead (no extra ->ref is taken); the id stays reserved
 * until the caller has removed the directory and gives it back.
 */
static struct dfg_xregion *dfg_region_lookup(struct dfg_graph *g, u32 id,
					     bool hide)
{
	struct dfg_object *obj;
	struct dfg_xregion *r = NULL;

	if (!id || id > DFG_OBJ_ID_MAX)
		return NULL;
	xa_lock(&g->objects);
	obj = xa_load(&g->objects, id);
	if (dfg_obj_is(obj, DFG_OBJ_REGION)) {
		r = container_of(obj, struct dfg_xregion, obj);
		if (hide)
			dfg_graph_hide_object_locked(g, obj);
		else
			kref_get(&r->ref);
	}
	xa_unlock(&g->objects);
	return r;
}

/* Pin [@addr, @addr + nr_pages pages) into r->pages; 0 or -errno. */
static int dfg_region_pin(struct dfg_xregion *r, unsigned long addr)
{
	unsigned int gup = FOLL_LONGTERM | (r->writable ? FOLL_WRITE : 0);
	long ret;

	r->pages = kvcalloc(r->nr_pages, sizeof(*r->pages),
			    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!r->pages)
		return -ENOMEM;
	ret = pin_user_pages_fast(addr, r->nr_pages, gup, r->pages);
	if (ret == r->nr_pages)
		return 0;
	/* A partial pin: give back what we got, as if nothing was mapped. */
	if (ret > 0)
		unpin_user_pages(r->pages, ret);
	kvfree(r->pages);
	r->pages = NULL;
	if (ret == -ENOMEM || ret == -EINTR || ret == -ERESTARTSYS)
		return ret == -ERESTARTSYS ? -EINTR : ret;
	return -EFAULT;
}

int dfg_region_export(struct dfg_cmd_ctx *c)
{
	struct dfg_region *args = c->args;
	struct dfg_graph *g = dfg_cmd_graph(c);
	unsigned long nr_pages;
	struct dfg_xregion *r;
	u64 max_bytes;
	u32 key, id;
	int ret;

	if ((args->flags & ~DFG_REGION_F_ALL) || args->id ||
	    args->mmap_offset ||
	    memchr_inv(args->reserved, 0, sizeof(args->reserved)))
		return -EINVAL;
	if (!args->len || !PAGE_ALIGNED(args->addr) ||
	    !PAGE_ALIGNED(args->len))
		return -EINVAL;
	max_bytes = (u64)READ_ONCE(dfg_max_arena_mb) << 20;
	if (args->len > max_bytes || args->len > DFG_REGION_MAX)
		return -EFBIG;
	if (!access_ok(u64_to_user_ptr(args->addr), args->len))
		return -EFAULT;

	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	kref_init(&r->ref);
	refcount_set(&r->users, 1);
	init_rwsem(&r->map_lock);
	r->writable = args->flags & DFG_REGION_F_WRITE;
	r->nr_pages = args->len >> PAGE_SHIFT;
	r->user = get_uid(current_user());

	if (!capable(CAP_IPC_LOCK)) {
		ret = dfg_account_mem(r->user, r->nr_pages);
		if (ret)
			goto out_put_user;
		r->locked = r->nr_pages;
	}
	ret = dfg_region_pin(r, args->addr);
	if (ret)
		goto out_unaccount;
	atomic_long_add(r->nr_pages, &dfg_pinned_pages);

	/*
	 * Publish to mmap first: once the region is in the graph, UNEXPORT
	 * may find it by id and revoke it at once, so nothing may follow
	 * that. A peer that maps it before it has an id is harmless; if
	 * adding it to the graph fails, it is revoked like any other.
	 */
	r->obj.graph = g;
	r->obj.ops = &dfg_region_obj_ops;
	ret = dfg_mmap_key_alloc(&r->obj, &key);
	if (ret)
		goto out_unpin;
	r->key = key;
	args->mmap_offset = dfg_region_offset(r);
	c->res2 = args->mmap_offset;	/* inline CQE32 rings: res2 */
	nr_pages = r->nr_pages;

	ret = dfg_graph_reserve_object(g, &r->obj, &dfg_region_obj_ops);
	if (ret < 0)
		goto out_revoke;
	id = ret;
	ret = dfg_region_publish(r);
	if (ret) {
		dfg_graph_unreserve_id(g, id);
		goto out_revoke;
	}
	/* The caller learns the id before UNEXPORT can find the region. */
	args->id = id;
	ret = dfg_cmd_copy_out(c);
	if (!ret)
		ret = dfg_graph_publish_object(g, &r->obj);
	if (ret) {
		__dfg_region_revoke(r);		/* also removes the directory */
		dfg_graph_unreserve_id(g, id);
		args->id = 0;
		goto out_clear;
	}
	/* @r may already be gone (a racing UNEXPORT): locals only. */
	trace_dfg_region_export(g->id, args->id, nr_pages);
	dfg_nl_graph_event(DFG_EV_REGION_EXPORT, task_tgid_nr(current), g->id,
			   args->id, NULL);
	return args->id;

out_revoke:
	__dfg_region_revoke(r);
out_clear:
	args->mmap_offset = 0;
	c->res2 = 0;
	return ret;

out_unpin:
	dfg_region_unpin(r);	/* also uncharges and puts the user */
	kfree(r);
	return ret;

out_unaccount:
	dfg_unaccount_mem(r->user, r->locked);
out_put_user:
	free_uid(r->user);
	kfree(r);
	return ret;
}

int dfg_region_unexport(struct dfg_cmd_ctx *c)
{
	struct dfg_region *args = c->args;
	struct dfg_graph *g = dfg_cmd_graph(c);
	struct dfg_xregion *r;

	if (args->addr || args->len || args->flags || args->mmap_offset ||
	    memchr_inv(args->reserved, 0, sizeof(args->reserved)))
		return -EINVAL;
	r = dfg_region_lookup(g, args->id, true);
	if (!r)
		return -ENOENT;
	dfg_region_revoke(r, task_tgid_nr(current));
	dfg_graph_unreserve_id(g, args->id);
	return 0;
}

/*
 * Copy @len bytes between region offset @off and @ubuf, page by page
 * through a local kernel mapping. The caller holds a ->users reference.
 * Returns 0 or -EFAULT/-EINTR.
 */
static int dfg_region_do_copy(struct dfg_xregion *r, u64 off, u64 len,
			      void __user *ubuf, bool to_region)
{
	while (len) {
		struct page *page = r->pages[off >> PAGE_SHIFT];
		unsigned int pg_off = offset_in_page(off);
		unsigned int n = min_t(u64, len, PAGE_SIZE - pg_off);
		unsigned long left;
		void *kaddr;

		kaddr = kmap_local_page(page);
		if (to_region) {
			left = copy_from_user(kaddr + pg_off, ubuf, n);
			flush_dcache_page(page);
		} else {
			left = copy_to_user(ubuf, kaddr + pg_off, n);
		}
		kunmap_local(kaddr);
		if (left)
			return -EFAULT;
		off += n;
		len -= n;
		ubuf += n;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

int dfg_region_copy(struct dfg_cmd_ctx *c)
{
	struct dfg_region_copy *args = c->args;
	bool to_region = args->flags == DFG_COPY_TO_REGION;
	struct dfg_xregion *r;
	int ret;

	if ((args->flags != DFG_COPY_TO_REGION &&
	     args->flags != DFG_COPY_FROM_REGION) ||
	    memchr_inv(args->reserved, 0, sizeof(args->reserved)))
		return -EINVAL;
	if (args->len > DFG_REGION_COPY_MAX)
		return -EINVAL;
	if (to_region && !c->writable)
		return -EACCES;

	r = dfg_region_lookup(dfg_cmd_graph(c), args->id, false);
	if (!r)
		return -ENOENT;
	if (args->offset > ((u64)r->nr_pages << PAGE_SHIFT) ||
	    args->len > ((u64)r->nr_pages << PAGE_SHIFT) - args->offset) {
		ret = -ERANGE;
		goto out_put;
	}
	if (to_region && !r->writable) {
		ret = -EACCES;
		goto out_put;
	}
	/* Fails once revocation dropped the export's reference. */
	if (!refcount_inc_not_zero(&r->users)) {
		ret = -ENOENT;
		goto out_put;
	}
	ret = dfg_region_do_copy(r, args->offset, args->len,
				 u64_to_user_ptr(args->addr), to_region);
	dfg_region_users_put(r);
	if (!ret)
		ret = args->len;
out_put:
	dfg_region_put(r);
	return ret;
}

/*
 * Insert the page frame of page @vmf->pgoff, then those of the other pages
 * of its DFG_REGION_PREFAULT-aligned window of the region that the vma
 * maps: a fault per page costs more than the copy of it. The window is
 * aligned, not "the faulting page and those after it": glibc's memcpy()
 * copies backwards when source and destination are equally placed in
 * their pages (its 4k-aliasing rule, 512 KiB up to its non-temporal
 * threshold), and with a window after the fault every page of such a
 * copy faulted once and re-inserted up to 255 ptes already there (a PAT
 * lookup each): 768 faults per 4 MiB broadcast, 0.15-0.3x Open MPI at
 * 2-8 MiB. Offsets count from the region's base (vm_pgoff of a split vma
 * moves, the base does not). The read side of ->map_lock covers the
 * check and every pte inserted: see the top.
 */
static vm_fault_t dfg_region_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct dfg_xregion *r = vma->vm_private_data;
	pgoff_t base = dfg_region_offset(r) >> PAGE_SHIFT;
	pgoff_t idx = vmf->pgoff - base, first, last, j;
	unsigned long addr = vmf->address & PAGE_MASK, at;
	vm_fault_t ret;

	if (vmf->pgoff < base || idx >= r->nr_pages)
		return VM_FAULT_SIGBUS;
	first = idx & ~(pgoff_t)(DFG_REGION_PREFAULT - 1);
	last = min_t(pgoff_t, first + DFG_REGION_PREFAULT, r->nr_pages);
	down_read(&r->map_lock);
	if (r->revoked) {
		up_read(&r->map_lock);
		return VM_FAULT_SIGBUS;
	}
	ret = vmf_insert_pfn(vma, addr, page_to_pfn(r->pages[idx]));
	for (j = first; j < last && !(ret & VM_FAULT_ERROR); j++) {
		if (j == idx)
			continue;
		at = j < idx ? addr - (idx - j) * PAGE_SIZE :
			       addr + (j - idx) * PAGE_SIZE;
		if (at < vma->vm_start || at >= vma->vm_end)
			continue;
		/* A pte already there is left as is (VM_FAULT_NOPAGE). */
		if (vmf_insert_pfn(vma, at, page_to_pfn(r->pages[j])) &
		    VM_FAULT_ERROR)
			break;
	}
	up_read(&r->map_lock);
	return ret;
}

/* A vma copied (fork, split, mremap) holds the region like the original. */
static void dfg_region_vm_open(struct vm_area_struct *vma)
{
	struct dfg_xregion *r = vma->vm_private_data;

	kref_get(&r->ref);
}

static void dfg_region_vm_close(struct vm_area_struct *vma)
{
	dfg_region_put(vma->vm_private_data);
}

static const struct vm_operations_struct dfg_region_vm_ops = {
	.open	= dfg_region_vm_open,
	.close	= dfg_region_vm_close,
	.fault	= dfg_region_fault,
};

/**
 * dfg_region_mmap() - mmap of a region offset on a graph descriptor
 * @obj: the region, found by graph.c (held for the call)
 * @file: the descriptor; the vma takes a reference to it (hence to the
 *	graph)
 * @vma: the new mapping, shared (graph.c checked)
 *
 * The offset must be the region's mmap key's (graph.c also finds a region
 * by its id, which is no offset of it) and the length at most its size.
 * Writable only for regions exported with DFG_REGION_F_WRITE and on
 * writable descriptors; otherwise VM_MAYWRITE goes, so mprotect() cannot
 * add PROT_WRITE later.
 *
 * Return: 0 or a negative errno (-EINVAL bad offset or length; -EACCES
 * writable where not granted).
 */
static int dfg_region_mmap(struct dfg_object *obj, struct file *file,
			   struct vm_area_struct *vma)
{
	struct dfg_xregion *r = container_of(obj, struct dfg_xregion, obj);
	struct address_space *old;

	if (vma->vm_pgoff != dfg_region_offset(r) >> PAGE_SHIFT)
		return -EINVAL;
	if (vma_pages(vma) > r->nr_pages)
		return -EINVAL;
	if (!r->writable || !(file->f_mode & FMODE_WRITE)) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		dfg_vm_flags_clear(vma, VM_MAYWRITE);
	}
	/*
	 * All graph descriptors share one anon inode, hence one mapping;
	 * revocation zaps through it. Refuse anything else rather than
	 * leave a vma revocation would not find.
	 */
	old = cmpxchg(&r->mapping, NULL, file->f_mapping);
	if (old && old != file->f_mapping)
		return -EINVAL;

	dfg_vm_flags_set(vma, VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	kref_get(&r->ref);		/* the vma's, put by its close */
	vma->vm_private_data = r;
	vma->vm_ops = &dfg_region_vm_ops;
	return 0;
}

/* graph.c's mmap lookup, under the lock of the table it found @obj in. */
static void dfg_region_get(struct dfg_object *obj)
{
	kref_get(&container_of(obj, struct dfg_xregion, obj)->ref);
}

static void dfg_region_obj_put(struct dfg_object *obj)
{
	dfg_region_put(container_of(obj, struct dfg_xregion, obj));
}

/*
 * A channel's pool, under the lock of dfg_graph.objects: the entry is
 * still there, so the export's ->ref keeps the struct (revocation hides
 * the entry under that lock before it drops it); ->nr_pages is immutable.
 */
static u64 dfg_region_pool_size(struct dfg_object *obj)
{
	return (u64)container_of(obj, struct dfg_xregion, obj)->nr_pages <<
	       PAGE_SHIFT;
}

static const struct dfg_obj_ops dfg_region_obj_ops = {
	.kind		= DFG_OBJ_REGION,
	.name		= "region",
	.unpublish	= dfg_region_unpublish,
	.destroy	= dfg_region_destroy,
	.mmap		= dfg_region_mmap,
	.get		= dfg_region_get,
	.put		= dfg_region_obj_put,
	.pool_size	= dfg_region_pool_size,
};
