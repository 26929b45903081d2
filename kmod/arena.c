// SPDX-License-Identifier: GPL-2.0
/*
 * arena.c - arenas: DFG_IOC_ARENA_CREATE and mmap of arena offsets.
 *
 * Objects, locks and references
 *   struct dfg_arena	one per arena, a dfg_object of its graph: in
 *			dfg_graph.objects (the xarray's lock) from creation
 *			until the graph dies, and freed only then
 *			(dfg_arena_destroy() from graph.c). No reference of
 *			its own: every user (a command, an mmap, a fault)
 *			holds a graph descriptor, and a mapping holds its
 *			file, so the graph and its arenas outlive every vma.
 *			Immutable after publication: no lock.
 *     ->kobj		memory of the struct and sysfs
 *			graphs/<gid>/arena<id>/ (size, pages: immutable, read
 *			without a lock). Added before the arena is published
 *			(its id reserved first), removed at the graph's death
 *			under dfg_graphs_lock before the graph's directory
 *			(dfg_arena_unpublish(), which drains readers), then
 *			dfg_arena_destroy() frees the pages and puts it; the
 *			release frees the struct. The directory holds the
 *			graph's kobject as its parent while it exists. The
 *			kernel keeps no count of an arena's mappings (no vma
 *			open/close), so sysfs shows none.
 *     ->mem		its pages (struct dfg_mem, below), allocated at first
 *			touch (dfg_mem_reserve()).
 *   struct dfg_mem	accounted page array, shared with channel rings
 *			(chan.c), owned by the object embedding it:
 *     ->pages		zeroed order-0 pages, charged to the creator's
 *			memory cgroup (GFP_KERNEL_ACCOUNT). Eager
 *			(dfg_mem_alloc(), rings the kernel vmaps): all
 *			allocated at creation. Lazy (dfg_mem_reserve(),
 *			arenas): NULL slots, each filled once at the page's
 *			first fault by dfg_mem_page() with a cmpxchg(), no
 *			lock: concurrent first touches race for the slot and
 *			the losers free their page. A slot is never cleared
 *			before dfg_mem_free(), so a fault reads it without a
 *			lock too. Each pte that maps a page holds a page
 *			reference (the fault handler takes it), so a page
 *			outlives its object if something still maps or pins
 *			it; we put ours at free.
 *     ->memcg		lazy only: the creator's memory cgroup, referenced
 *			at creation and put at free, so a page touched first
 *			by another process is still charged to the creator
 *			(set_active_memcg() around the allocation).
 *     ->user		the creator's user_struct, referenced (get_uid())
 *			so the RLIMIT_MEMLOCK charge in ->locked_vm is
 *			returned to the same user at free, whoever the
 *			last process to close the graph is.
 *   dfg_total_pages	pages of all arenas and channel rings: the
 *			dfg.max_total_mb counter and sysfs "pages";
 *			atomic_long, charged with a cmpxchg loop so
 *			concurrent creators never overshoot. An arena is
 *			charged its whole size at creation, touched or not.
 *   dfg_resident_pages	of those, pages allocated now (sysfs "resident");
 *			atomic_long, only added to and subtracted from.
 *
 * Mapping: mmap(graph_fd, offset DFG_MMAP_OFFSET(id)), which graph.c
 * resolves to the arena and hands to its dfg_obj_ops.mmap, sets up the
 * vma and a .fault handler supplies the pages. A fault handler rather than
 * vm_insert_pages() at mmap time: a vma without vm_ops counts as
 * anonymous, so after MADV_DONTNEED or a zap a file-backed arena vma needs
 * a fault path anyway, and with one there is a single way pages get in;
 * faults also keep mmap cheap for large arenas a process touches only in
 * part, and let an arena's pages be allocated at first touch: creating a
 * 64 MiB arena zeroes nothing, a run that uses 1 MiB of it pays for 1 MiB.
 * A first touch that cannot get a page (memory, or the creator's memory
 * cgroup at its limit) is SIGBUS for the toucher, never an OOM kill: the
 * size was charged to RLIMIT_MEMLOCK and dfg.max_total_mb at creation
 * (with the headroom check then), the page itself only when it comes.
 * A page returned from .fault is a struct page with its own pte
 * reference, counted in the mapping process's RSS (MM_FILEPAGES), so the
 * OOM killer sees an arena's pages in the processes that use them; a PFN
 * map (remap_pfn_range(), vmf_insert_pfn()) would count in nobody's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "dfg.h"
#include "trace.h"

static const struct dfg_obj_ops dfg_arena_obj_ops;

atomic_long_t dfg_total_pages = ATOMIC_LONG_INIT(0);
atomic_long_t dfg_resident_pages = ATOMIC_LONG_INIT(0);

/**
 * struct dfg_arena - one arena (see the top of this file)
 * @obj:	header; @obj.id is the arena's id in its graph
 * @kobj:	memory of the struct, sysfs graphs/<gid>/arena<id>/
 * @in_sysfs:	@kobj is in sysfs (from creation until the graph's death)
 * @mem:	the arena's pages
 */
struct dfg_arena {
	struct dfg_object	obj;
	struct kobject		kobj;
	bool			in_sysfs;
	struct dfg_mem		mem;
};

/* sysfs: graphs/<gid>/arena<id>/: the size, immutable, and a counter. */
static struct dfg_arena *dfg_kobj_arena(struct kobject *kobj)
{
	return container_of(kobj, struct dfg_arena, kobj);
}

static ssize_t arena_size_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  (unsigned long long)dfg_kobj_arena(kobj)->mem.nr_pages
			  << PAGE_SHIFT);
}

static ssize_t arena_pages_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", dfg_kobj_arena(kobj)->mem.nr_pages);
}

/* Pages touched so far: a counter, read without a lock. */
static ssize_t arena_resident_show(struct kobject *kobj,
				   struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n",
			  atomic_long_read(&dfg_kobj_arena(kobj)->mem.resident));
}

static struct kobj_attribute dfg_aattr_size =
	__ATTR(size, 0444, arena_size_show, NULL);
static struct kobj_attribute dfg_aattr_pages =
	__ATTR(pages, 0444, arena_pages_show, NULL);
static struct kobj_attribute dfg_aattr_resident =
	__ATTR(resident, 0444, arena_resident_show, NULL);

static struct attribute *dfg_arena_attrs[] = {
	&dfg_aattr_size.attr,
	&dfg_aattr_pages.attr,
	&dfg_aattr_resident.attr,
	NULL,
};
ATTRIBUTE_GROUPS(dfg_arena);

/* Last put: the directory is gone and the pages are freed already. */
static void dfg_arena_kobj_release(struct kobject *kobj)
{
	struct dfg_arena *a = dfg_kobj_arena(kobj);

	dfg_obj_uncharge(&a->obj);
	kfree(a);
}

static const struct kobj_type dfg_arena_ktype = {
	.release	= dfg_arena_kobj_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= dfg_arena_groups,
};

/**
 * dfg_account_mem() - charge @nr_pages to @user's RLIMIT_MEMLOCK
 * @user: the user to charge (the caller holds a reference, get_uid())
 * @nr_pages: pages to charge
 *
 * Like io_uring's __io_account_mem(): a cmpxchg loop on ->locked_vm, so
 * concurrent chargers never overshoot the limit of the current task.
 * Shared by arenas and regions (region.c); undo with dfg_unaccount_mem().
 *
 * Return: 0, or -EAGAIN when the limit would be exceeded.
 */
int dfg_account_mem(struct user_struct *user, unsigned long nr_pages)
{
	unsigned long page_limit, cur_pages, new_pages;

	page_limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	cur_pages = atomic_long_read(&user->locked_vm);
	do {
		new_pages = cur_pages + nr_pages;
		if (new_pages > page_limit || new_pages < cur_pages)
			return -EAGAIN;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur_pages,
					  new_pages));
	return 0;
}

/* Return a dfg_account_mem() charge. */
void dfg_unaccount_mem(struct user_struct *user, unsigned long nr_pages)
{
	atomic_long_sub(nr_pages, &user->locked_vm);
}

/*
 * Memory the page allocator must still have after an allocation of ours,
 * beyond what si_mem_available() already keeps back (the zones' high
 * watermarks and lowmem reserves, so well above the min watermark): 1/32
 * of RAM, so the rest of the machine can go on allocating (page cache
 * faults included) without the OOM killer.
 */
#define DFG_MEM_HEADROOM_SHIFT	5

/*
 * dfg.max_total_mb: module-wide page bound, whose last dfg.reserve_pct
 * percent only privileged callers may use (limits.c), and the headroom.
 */
static int dfg_total_charge(unsigned long nr_pages)
{
	unsigned long limit = (unsigned long)READ_ONCE(dfg_max_total_mb) <<
			      (20 - PAGE_SHIFT);
	unsigned long headroom = totalram_pages() >> DFG_MEM_HEADROOM_SHIFT;
	long cur = atomic_long_read(&dfg_total_pages);
	long avail = si_mem_available();

	if (avail < 0 || (unsigned long)avail < nr_pages + headroom)
		return -ENOMEM;
	do {
		if (dfg_over_share((unsigned long)cur + nr_pages, limit))
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&dfg_total_pages, &cur,
					  cur + nr_pages));
	return 0;
}

/*
 * Zeroed pages charged to the caller's memory cgroup (or the one
 * set_active_memcg() names); a failure (memory or cgroup limit) is NULL,
 * never an OOM kill: __GFP_RETRY_MAYFAIL keeps both the page allocator and
 * the memcg charge from invoking the OOM killer.
 */
#define DFG_MEM_GFP	(GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN | \
			 __GFP_RETRY_MAYFAIL)

/* Puts the pages of slots 0..@nr-1 that hold one, and the array. */
static void dfg_mem_free_pages(struct dfg_mem *m, unsigned long nr)
{
	while (nr--)
		if (m->pages[nr])
			put_page(m->pages[nr]);
	kvfree(m->pages);
	m->pages = NULL;
}

static int dfg_mem_alloc_pages(struct dfg_mem *m)
{
	unsigned long i;

	m->pages = kvcalloc(m->nr_pages, sizeof(*m->pages),
			    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!m->pages)
		return -ENOMEM;
	for (i = 0; i < m->nr_pages; i++) {
		m->pages[i] = alloc_page(DFG_MEM_GFP);
		if (!m->pages[i])
			goto out_free_pages;
		if (fatal_signal_pending(current))
			goto out_free_pages_next;
		cond_resched();
	}
	return 0;

out_free_pages_next:
	i++;
out_free_pages:
	dfg_mem_free_pages(m, i);
	return fatal_signal_pending(current) ? -EINTR : -ENOMEM;
}

/*
 * The charges of a new dfg_mem of @nr_pages, for the caller's user:
 * RLIMIT_MEMLOCK (unless CAP_IPC_LOCK), then dfg.max_total_mb and the
 * headroom; dfg_mem_uncharge() returns them.
 */
static int dfg_mem_charge(struct dfg_mem *m, unsigned long nr_pages)
{
	int ret;

	m->nr_pages = nr_pages;
	m->pages = NULL;
	m->user = get_uid(current_user());
	m->locked = 0;
	atomic_long_set(&m->resident, 0);
	m->memcg = NULL;
	if (!capable(CAP_IPC_LOCK)) {
		ret = dfg_account_mem(m->user, nr_pages);
		if (ret)
			goto out_put_user;
		m->locked = nr_pages;
	}
	ret = dfg_total_charge(nr_pages);
	if (ret)
		goto out_unaccount;
	return 0;

out_unaccount:
	dfg_unaccount_mem(m->user, m->locked);
out_put_user:
	free_uid(m->user);
	m->user = NULL;
	return ret;
}

static void dfg_mem_uncharge(struct dfg_mem *m)
{
	atomic_long_sub(m->nr_pages, &dfg_total_pages);
	dfg_unaccount_mem(m->user, m->locked);
	free_uid(m->user);
	m->user = NULL;
}

/**
 * dfg_mem_alloc() - allocate and account @nr_pages zeroed pages
 * @m: descriptor, filled on success
 * @nr_pages: pages wanted, > 0
 *
 * Charges the caller's RLIMIT_MEMLOCK (unless CAP_IPC_LOCK), the module's
 * dfg.max_total_mb (sysfs "pages"; refused too when less than a headroom
 * of memory would be left) and the memory cgroup, in that order, and
 * allocates every page now (for memory the kernel maps itself);
 * dfg_mem_free() returns everything.
 *
 * Context: process context; may sleep.
 * Return: 0, -EAGAIN (RLIMIT_MEMLOCK), -ENOMEM (memory, cgroup or
 * dfg.max_total_mb) or -EINTR (fatal signal).
 */
int dfg_mem_alloc(struct dfg_mem *m, unsigned long nr_pages)
{
	int ret;

	ret = dfg_mem_charge(m, nr_pages);
	if (ret)
		return ret;
	ret = dfg_mem_alloc_pages(m);
	if (ret) {
		dfg_mem_uncharge(m);
		return ret;
	}
	atomic_long_set(&m->resident, nr_pages);
	atomic_long_add(nr_pages, &dfg_resident_pages);
	return 0;
}

/**
 * dfg_mem_reserve() - account @nr_pages zeroed pages, allocated at first use
 * @m: descriptor, filled on success
 * @nr_pages: pages wanted, > 0
 *
 * The charges of dfg_mem_alloc() for the whole size, except the memory
 * cgroup's, which each page gets when dfg_mem_page() allocates it (to
 * the caller's cgroup, whoever touches the page). No page is allocated
 * here; dfg_mem_free() returns everything.
 *
 * Context: process context; may sleep.
 * Return: 0, -EAGAIN (RLIMIT_MEMLOCK) or -ENOMEM (memory for the page
 * array, dfg.max_total_mb or the headroom).
 */
int dfg_mem_reserve(struct dfg_mem *m, unsigned long nr_pages)
{
	int ret;

	ret = dfg_mem_charge(m, nr_pages);
	if (ret)
		return ret;
	m->pages = kvcalloc(nr_pages, sizeof(*m->pages),
			    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!m->pages) {
		dfg_mem_uncharge(m);
		return -ENOMEM;
	}
	/* Reference put by dfg_mem_free(): the charge target of its pages. */
	m->memcg = get_mem_cgroup_from_mm(current->mm);
	return 0;
}

/**
 * dfg_mem_page() - page @idx of a dfg_mem_reserve() array, allocated at
 *	its first use
 * @m: the pages, alive (the caller holds what holds them)
 * @idx: page index, < @m->nr_pages
 *
 * The first caller for a page allocates it, zeroed, charged to @m's memory
 * cgroup; callers racing on the same page all get the one that won the
 * slot.
 *
 * Context: process context (a fault); may sleep.
 * Return: the page (@m holds its reference; a pte takes its own), or NULL
 * when none can be had (memory, or the memory cgroup's limit).
 */
struct page *dfg_mem_page(struct dfg_mem *m, unsigned long idx)
{
	struct mem_cgroup *old_memcg;
	struct page *page, *cur;

	/* Pairs with the cmpxchg() below: the zeroes before the pointer. */
	page = smp_load_acquire(&m->pages[idx]);
	if (page)
		return page;
	old_memcg = set_active_memcg(m->memcg);
	page = alloc_page(DFG_MEM_GFP);
	set_active_memcg(old_memcg);
	if (!page)
		return NULL;
	/* Full barrier on success: the page's zeroes are visible first. */
	cur = cmpxchg(&m->pages[idx], NULL, page);
	if (cur) {
		put_page(page);		/* another first touch won */
		return cur;
	}
	atomic_long_inc(&m->resident);
	atomic_long_inc(&dfg_resident_pages);
	return page;
}

/* Page @vmf->pgoff of a dfg_mem mapped whole; the pte takes a reference. */
static vm_fault_t dfg_mem_fault(struct vm_fault *vmf)
{
	struct dfg_mem *m = vmf->vma->vm_private_data;

	if (vmf->pgoff >= m->nr_pages)
		return VM_FAULT_SIGBUS;
	vmf->page = m->pages[vmf->pgoff];
	get_page(vmf->page);
	return 0;
}

static const struct vm_operations_struct dfg_mem_vm_ops = {
	.fault	= dfg_mem_fault,
};

/**
 * dfg_mem_mmap() - map @m from offset 0 of a descriptor's own mmap
 * @m: the pages of the object the descriptor holds (a channel's, a team's)
 * @vma: the new mapping
 *
 * Shared only, offset 0, at most @m's length. The vma holds the file,
 * which holds the object and so @m: @m outlives the mapping.
 *
 * Return: 0, or -EINVAL for another offset, a longer length or a private
 * mapping.
 */
int dfg_mem_mmap(struct dfg_mem *m, struct vm_area_struct *vma)
{
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_pgoff || vma_pages(vma) > m->nr_pages)
		return -EINVAL;
	dfg_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = m;
	vma->vm_ops = &dfg_mem_vm_ops;
	return 0;
}

/**
 * dfg_mem_free() - put the pages of @m and return its charges
 * @m: filled by a successful dfg_mem_alloc() or dfg_mem_reserve(); no
 *	fault can reach it any more
 *
 * Pages still mapped somewhere live on through their pte references.
 */
void dfg_mem_free(struct dfg_mem *m)
{
	dfg_mem_free_pages(m, m->nr_pages);
	atomic_long_sub(atomic_long_read(&m->resident), &dfg_resident_pages);
	mem_cgroup_put(m->memcg);
	m->memcg = NULL;
	dfg_mem_uncharge(m);
}

int dfg_arena_create(struct dfg_cmd_ctx *c)
{
	struct dfg_arena_create *args = c->args;
	struct dfg_graph *g = dfg_cmd_graph(c);
	struct dfg_arena *a;
	u64 max_bytes;
	int ret;

	if (args->flags || args->id || args->mmap_offset ||
	    memchr_inv(args->reserved, 0, sizeof(args->reserved)))
		return -EINVAL;
	if (!args->size)
		return -EINVAL;
	max_bytes = (u64)READ_ONCE(dfg_max_arena_mb) << 20;
	if (args->size > max_bytes)
		return -EFBIG;

	a = kzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
	if (!a)
		return -ENOMEM;
	/* From here on kobject_put() frees, through the release. */
	kobject_init(&a->kobj, &dfg_arena_ktype);
	ret = dfg_mem_reserve(&a->mem, PAGE_ALIGN(args->size) >> PAGE_SHIFT);
	if (ret)
		goto out_put;

	ret = dfg_graph_reserve_object(g, &a->obj, &dfg_arena_obj_ops);
	if (ret < 0)
		goto out_free_mem;
	/* Directory first: nobody reaches the arena before publication. */
	ret = dfg_obj_add_dir(&a->obj, &a->kobj);
	if (ret)
		goto out_unreserve;
	a->in_sysfs = true;
	args->size = (u64)a->mem.nr_pages << PAGE_SHIFT;
	args->id = a->obj.id;
	args->mmap_offset = DFG_MMAP_OFFSET(a->obj.id);
	c->res2 = args->size;
	/* The caller learns the id before anyone can reach the arena. */
	ret = dfg_cmd_copy_out(c);
	if (ret)
		goto out_del;
	ret = dfg_graph_publish_object(g, &a->obj);
	if (ret)
		goto out_del;
	atomic_long_add(a->mem.nr_pages, &g->pages);

	trace_dfg_arena_create(g->id, a->obj.id, a->mem.nr_pages);
	dfg_nl_graph_event(DFG_EV_ARENA_CREATE, task_tgid_nr(current), g->id,
			   a->obj.id, NULL);
	return a->obj.id;

out_del:
	kobject_del(&a->kobj);
out_unreserve:
	dfg_graph_unreserve_id(g, a->obj.id);
out_free_mem:
	dfg_mem_free(&a->mem);
out_put:
	kobject_put(&a->kobj);
	return ret;
}

/**
 * dfg_arena_unpublish() - remove graphs/<gid>/arena<id>
 * @obj: an arena of a dying graph
 *
 * Context: under dfg_graphs_lock, before the graph's directory goes;
 * waits for attribute readers (which take no lock).
 */
static void dfg_arena_unpublish(struct dfg_object *obj)
{
	struct dfg_arena *a = container_of(obj, struct dfg_arena, obj);

	if (a->in_sysfs) {
		kobject_del(&a->kobj);
		a->in_sysfs = false;
	}
}

/**
 * dfg_arena_destroy() - free an arena whose graph is dying
 * @obj: the arena's header, already out of dfg_graph.objects and out of
 *	sysfs (dfg_arena_unpublish())
 *
 * Context: process context; nothing maps the graph any more.
 */
static void dfg_arena_destroy(struct dfg_object *obj)
{
	struct dfg_arena *a = container_of(obj, struct dfg_arena, obj);
	struct dfg_graph *g = obj->graph;

	trace_dfg_arena_destroy(g->id, obj->id, a->mem.nr_pages);
	dfg_nl_graph_event(DFG_EV_ARENA_DESTROY, 0, g->id, obj->id, NULL);

	atomic_long_sub(a->mem.nr_pages, &g->pages);
	dfg_mem_free(&a->mem);
	dfg_arena_unpublish(obj);	/* normally done already */
	kobject_put(&a->kobj);
}

/*
 * Page @vmf->pgoff of the arena: offsets count from DFG_MMAP_OFFSET(id)
 * (vm_pgoff of a split vma moves, the arena's base does not), allocated
 * here at its first touch. The pte takes its own page reference. No page
 * to be had is SIGBUS (VM_FAULT_OOM would call the OOM killer).
 */
static vm_fault_t dfg_arena_fault(struct vm_fault *vmf)
{
	struct dfg_arena *a = vmf->vma->vm_private_data;
	pgoff_t base = DFG_MMAP_OFFSET(a->obj.id) >> PAGE_SHIFT;
	pgoff_t idx = vmf->pgoff - base;
	struct page *page;

	if (vmf->pgoff < base || idx >= a->mem.nr_pages)
		return VM_FAULT_SIGBUS;
	page = dfg_mem_page(&a->mem, idx);
	if (!page)
		return VM_FAULT_SIGBUS;
	get_page(page);
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct dfg_arena_vm_ops = {
	.fault	= dfg_arena_fault,
};

/**
 * dfg_arena_mmap() - mmap of an arena's offset on a graph descriptor
 * @obj: the arena, found by graph.c at DFG_MMAP_OFFSET(id) of @vma
 * @file: the descriptor; the vma takes a reference to it (hence to the
 *	graph, which holds the arena)
 * @vma: the new mapping, shared (graph.c checked)
 *
 * The length must be at most the arena's size. On a read-only descriptor
 * the VFS already refuses PROT_WRITE with MAP_SHARED and clears
 * VM_MAYWRITE; we clear it too, so mprotect() can never make the mapping
 * writable.
 *
 * Return: 0 or a negative errno (-EINVAL for a length past the size,
 * -EACCES for a writable mapping of a read-only descriptor).
 */
static int dfg_arena_mmap(struct dfg_object *obj, struct file *file,
			  struct vm_area_struct *vma)
{
	struct dfg_arena *a = container_of(obj, struct dfg_arena, obj);

	if (vma_pages(vma) > a->mem.nr_pages)
		return -EINVAL;
	if (!(file->f_mode & FMODE_WRITE)) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		dfg_vm_flags_clear(vma, VM_MAYWRITE);
	}
	dfg_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = a;
	vma->vm_ops = &dfg_arena_vm_ops;
	return 0;
}

/* Under the lock of dfg_graph.objects; the size is immutable. */
static u64 dfg_arena_pool_size(struct dfg_object *obj)
{
	return (u64)container_of(obj, struct dfg_arena, obj)->mem.nr_pages <<
	       PAGE_SHIFT;
}

static const struct dfg_obj_ops dfg_arena_obj_ops = {
	.kind		= DFG_OBJ_ARENA,
	.name		= "arena",
	.unpublish	= dfg_arena_unpublish,
	.destroy	= dfg_arena_destroy,
	.mmap		= dfg_arena_mmap,
	.pool_size	= dfg_arena_pool_size,
};
