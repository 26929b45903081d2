// SPDX-License-Identifier: GPL-2.0
/*
 * graph.c - graphs: DFG_IOC_GRAPH_CREATE, _ATTACH, _INFO, graph descriptors.
 *
 * Objects, locks and references
 *   dfg_graphs		every live graph by id (an allocating xarray);
 *			ids, names and the count dfg_nr_graphs change only
 *			under dfg_graphs_lock, a mutex because create and
 *			destroy allocate and add/remove sysfs directories.
 *			Names are found by a walk under the mutex: at most
 *			dfg.max_graphs entries, only on create and attach.
 *			The outermost lock (lock order: see dfg.h).
 *   dfg_graph_hooks	subsystems told first of every graph's death (the
 *			scheduler, whose clients live beside the graph's
 *			objects); added at module init, under the mutex.
 *   struct dfg_graph	two references with two jobs:
 *     ->ref		(kref) life. One per graph descriptor (struct
 *			file, its private_data); a mapping holds its file,
 *			so a mapped graph outlives close(). Dropped with
 *			kref_put_mutex() so that the count reaches zero only
 *			under dfg_graphs_lock: a lookup under the mutex never
 *			sees a dying graph and may kref_get(). The release
 *			unregisters the name and id, removes sysfs, frees the
 *			objects and reports the death.
 *     ->kobj		memory. Initialised at allocation; its release
 *			(dfg_graph_free()) frees the struct once sysfs is
 *			done with it (kobject_del() drains attribute readers).
 *   dfg_object	each object of a graph (arena.c, region.c, chan.c,
 *			team.c, set.c) sits in dfg_graph.objects (the
 *			xarray's own lock) from creation until the graph
 *			dies, and carries its kind's dfg_obj_ops, through
 *			which the graph's death unpublishes and destroys
 *			it, an mmap of a graph descriptor maps it and a
 *			channel learns its size as a pool: graph.c knows no
 *			kind of object. No per-object reference: whoever
 *			reaches an object holds a graph descriptor, hence
 *			the graph, hence the object.
 *			Regions leave earlier (UNEXPORT) and have a
 *			reference of their own for that (region.c); they
 *			are looked up and erased under the xarray's lock.
 *			(A channel is also reached through its endpoint
 *			descriptors, which do not hold the graph's life: they
 *			hold the channel, which holds the graph's kobject;
 *			see chan.c. Teams likewise through their member
 *			descriptors, and leave the graph when their last
 *			member goes, under a life reference taken with
 *			kref_get_unless_zero(); see team.c.)
 *			Immutable graph fields need no lock; the counters
 *			are atomics read locklessly by sysfs and GRAPH_INFO.
 *   dfg_mmap_keys	module-wide mmap key -> object, for objects whose
 *			mappings must be revocable (regions): every graph
 *			descriptor shares anon_inode_getfile()'s one inode,
 *			hence one address_space, so unmap_mapping_range()
 *			of an offset zaps that offset in every graph, and
 *			such an offset must be unique module-wide. An
 *			allocating xarray (its own lock), cyclic so a key is
 *			not soon reused; the owner erases its key before it
 *			drops the reference a lookup would take.
 *
 * mmap offsets of a graph descriptor: DFG_MMAP_OFFSET(id) names object id
 * of the graph, DFG_MMAP_REGION | DFG_MMAP_OFFSET(key) a key's object (of
 * the same graph). The lookup takes a hold through ->get under the lock of
 * the table it searched (an object found there is alive) and the kind's
 * ->mmap sets up the vma.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/ctype.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uidgid.h>

#include "dfg.h"
#include "trace.h"

static DEFINE_MUTEX(dfg_graphs_lock);
static DEFINE_XARRAY_ALLOC1(dfg_graphs);
static DEFINE_XARRAY_ALLOC1(dfg_mmap_keys);
static u32 dfg_mmap_next_key;		/* xa_alloc_cyclic() cursor */
static unsigned int dfg_nr_graphs;	/* under dfg_graphs_lock */
static LIST_HEAD(dfg_graph_hooks);	/* under dfg_graphs_lock */

static const struct file_operations dfg_graph_fops;

static_assert(offsetof(struct dfg_graph, fd) == 0);

/* 1..DFG_NAME_MAX-1 bytes of [A-Za-z0-9._-], NUL-terminated. */
bool dfg_name_valid(const char *name)
{
	size_t len = strnlen(name, DFG_NAME_MAX);
	size_t i;

	if (!len || len == DFG_NAME_MAX)
		return false;
	for (i = 0; i < len; i++) {
		char ch = name[i];

		if (!isalnum(ch) && ch != '.' && ch != '_' && ch != '-')
			return false;
	}
	return true;
}

/* Caller holds dfg_graphs_lock. */
static struct dfg_graph *dfg_graph_find(const char *name)
{
	struct dfg_graph *g;
	unsigned long id;

	lockdep_assert_held(&dfg_graphs_lock);
	xa_for_each(&dfg_graphs, id, g)
		if (!strcmp(g->name, name))
			return g;
	return NULL;
}

/*
 * Like ipcperms(): owner bits if the caller's fsuid owns the graph, group
 * bits if it is in the group, other bits otherwise; CAP_IPC_OWNER
 * overrides. Graphs are module-wide, so the capability is checked against
 * the initial user namespace.
 */
static bool dfg_graph_permitted(const struct dfg_graph *g, bool write)
{
	int want = write ? 06 : 04;
	int granted = g->mode;

	if (uid_eq(current_fsuid(), g->uid))
		granted >>= 6;
	else if (in_group_p(g->gid))
		granted >>= 3;
	if (!(want & ~granted & 07))
		return true;
	return capable(CAP_IPC_OWNER);
}

void dfg_graph_free(struct dfg_graph *g)
{
	kfree(g);
}

/*
 * First step of a graph's death, under dfg_graphs_lock before the graph's
 * own sysfs directory goes: every object removes its directory below it,
 * which waits for its attribute readers; the objects themselves are
 * freed only later, by dfg_graph_free_objects().
 */
static void dfg_graph_unpublish_objects(struct dfg_graph *g)
{
	struct dfg_object *obj;
	unsigned long id;

	xa_for_each(&g->objects, id, obj)
		obj->ops->unpublish(obj);
}

/*
 * Frees every object (a channel: drops the graph's reference, see
 * chan.c); the graph is out of the registry, nobody else left.
 */
static void dfg_graph_free_objects(struct dfg_graph *g)
{
	struct dfg_object *obj;
	unsigned long id;

	xa_for_each(&g->objects, id, obj) {
		xa_erase(&g->objects, id);
		atomic_dec(&g->nr_objects);
		obj->ops->destroy(obj);
	}
	xa_destroy(&g->objects);
}

/**
 * dfg_graph_hook_add() - run @h->death at the start of every graph's death
 * @h: the hook, static in its subsystem; removed before module exit
 */
void dfg_graph_hook_add(struct dfg_graph_hook *h)
{
	mutex_lock(&dfg_graphs_lock);
	list_add_tail(&h->node, &dfg_graph_hooks);
	mutex_unlock(&dfg_graphs_lock);
}

void dfg_graph_hook_del(struct dfg_graph_hook *h)
{
	mutex_lock(&dfg_graphs_lock);
	list_del(&h->node);
	mutex_unlock(&dfg_graphs_lock);
}

/*
 * kref release, called by kref_put_mutex() with dfg_graphs_lock held;
 * unlocks it (mutexes carry no sparse context: no __releases()). sysfs
 * goes before the id, so a new graph never meets the old directory;
 * objects are freed after the unlock.
 */
static void dfg_graph_release(struct kref *ref)
{
	struct dfg_graph *g = container_of(ref, struct dfg_graph, ref);
	struct dfg_graph_hook *h;

	/* Subsystems with state beside the graph's objects (the scheduler). */
	list_for_each_entry(h, &dfg_graph_hooks, node)
		h->death(g);
	dfg_graph_unpublish_objects(g);
	dfg_sysfs_graph_del(g);
	xa_erase(&dfg_graphs, g->id);
	dfg_nr_graphs--;
	mutex_unlock(&dfg_graphs_lock);
	dfg_user_uncharge(g->user, DFG_LIM_GRAPH);

	dfg_graph_free_objects(g);
	trace_dfg_graph_destroy(g->id, g->name);
	dfg_nl_graph_event(DFG_EV_GRAPH_DESTROY, 0, g->id, 0, g->name);
	kobject_put(&g->kobj);
}

/*
 * Drop a life reference: a descriptor's, or one taken with
 * kref_get_unless_zero() (team.c). May destroy the graph.
 */
void dfg_graph_put(struct dfg_graph *g)
{
	kref_put_mutex(&g->ref, dfg_graph_release, &dfg_graphs_lock);
}

static int dfg_graph_fop_release(struct inode *inode, struct file *file)
{
	struct dfg_graph *g = file->private_data;

	atomic_dec(&g->attached);
	dfg_graph_put(g);
	return 0;
}

/* vm_pgoff bits: the key bit, and those below an object's offset. */
#define DFG_MMAP_KEY_PGBIT	(DFG_MMAP_REGION >> PAGE_SHIFT)
#define DFG_MMAP_PGSHIFT	(DFG_MMAP_SHIFT - PAGE_SHIFT)

/*
 * The object of @g whose mmap offset is @pgoff (an id, or a key with
 * DFG_MMAP_KEY_PGBIT), held through its ->get, or NULL if none can be
 * mapped there.
 */
static struct dfg_object *dfg_graph_mmap_find(struct dfg_graph *g,
					      unsigned long pgoff)
{
	unsigned long idx = (pgoff & ~DFG_MMAP_KEY_PGBIT) >> DFG_MMAP_PGSHIFT;
	struct xarray *xa = pgoff & DFG_MMAP_KEY_PGBIT ? &dfg_mmap_keys :
				&g->objects;
	struct dfg_object *obj;

	if (pgoff & ((1UL << DFG_MMAP_PGSHIFT) - 1))
		return NULL;
	if (!idx || idx > DFG_OBJ_ID_MAX)
		return NULL;
	/* Under the table's lock: its owner erases it there before going. */
	xa_lock(xa);
	obj = xa_load(xa, idx);
	if (obj && obj->graph == g && obj->ops->mmap) {
		if (obj->ops->get)
			obj->ops->get(obj);
	} else {
		obj = NULL;
	}
	xa_unlock(xa);
	return obj;
}

/*
 * Shared mappings only (VM_MAYSHARE: VM_SHARED is already gone on
 * read-only files); the object's kind checks the rest.
 */
static int dfg_graph_fop_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct dfg_object *obj;
	int ret;

	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	obj = dfg_graph_mmap_find(file->private_data, vma->vm_pgoff);
	if (!obj)
		return -EINVAL;
	ret = obj->ops->mmap(obj, file, vma);
	if (obj->ops->put)
		obj->ops->put(obj);
	return ret;
}

static const struct file_operations dfg_graph_fops = {
	DFG_FD_FOPS(dfg_graph_fop_release, dfg_graph_fop_mmap),
};

/*
 * Opens a descriptor on @g for the command in @c, consuming the graph
 * reference the caller holds: the file takes it over, or it is put on
 * failure. The descriptor is installed by the dispatcher (c->install).
 * Returns the descriptor number or a negative errno.
 */
static int dfg_graph_open_fd(struct dfg_cmd_ctx *c, struct dfg_graph *g,
			     u32 flags)
{
	int oflags = (flags & DFG_GRAPH_O_RDONLY) ? O_RDONLY : O_RDWR;
	struct file *file;
	int fd;

	fd = get_unused_fd_flags((flags & DFG_GRAPH_O_CLOEXEC) ? O_CLOEXEC : 0);
	if (fd < 0) {
		dfg_graph_put(g);
		return fd;
	}

	file = anon_inode_getfile("[dfg-graph]", &dfg_graph_fops, g, oflags);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		dfg_graph_put(g);
		return PTR_ERR(file);
	}
	atomic_inc(&g->attached);
	c->install = file;
	c->fd = fd;
	return fd;
}

/* Checks shared by CREATE and ATTACH. */
static int dfg_graph_open_check(const struct dfg_graph_open *o, u32 flags)
{
	if (o->size != sizeof(*o))
		return -EINVAL;
	if (o->flags & ~flags)
		return -EINVAL;
	if (o->reserved0 || memchr_inv(o->reserved, 0, sizeof(o->reserved)))
		return -EINVAL;
	if (!dfg_name_valid(o->name))
		return -EINVAL;
	return 0;
}

int dfg_graph_create(struct dfg_cmd_ctx *c)
{
	const struct dfg_graph_open *o = c->args;
	struct dfg_graph *g;
	u32 id;
	int ret;

	ret = dfg_graph_open_check(o, DFG_GRAPH_O_CLOEXEC);
	if (ret)
		return ret;
	if (o->mode & ~0777U)
		return -EINVAL;

	g = kzalloc(sizeof(*g), GFP_KERNEL_ACCOUNT);
	if (!g)
		return -ENOMEM;
	dfg_fd_init(&g->fd, DFG_FD_GRAPH, NULL);
	kref_init(&g->ref);
	dfg_sysfs_graph_init(g);	/* from here on, kobject_put() frees */
	strscpy(g->name, o->name, sizeof(g->name));
	g->uid = current_fsuid();
	g->gid = current_fsgid();
	g->mode = o->mode;
	g->creator = task_tgid_nr(current);
	g->fb_plan_gen = U64_MAX;	/* no plan generation yet */
	xa_init_flags(&g->objects, XA_FLAGS_ALLOC1);
	/* Before dfg_graphs_lock, which is taken with nothing held. */
	g->user = dfg_user_charge(DFG_LIM_GRAPH);
	if (IS_ERR(g->user)) {
		ret = PTR_ERR(g->user);
		kobject_put(&g->kobj);
		return ret;
	}

	mutex_lock(&dfg_graphs_lock);
	if (dfg_graph_find(g->name)) {
		ret = -EEXIST;
		goto out_unlock;
	}
	if (dfg_over_share(dfg_nr_graphs + 1, READ_ONCE(dfg_max_graphs))) {
		ret = -ENOSPC;
		goto out_unlock;
	}
	ret = xa_alloc(&dfg_graphs, &id, g, xa_limit_31b, GFP_KERNEL);
	if (ret) {
		ret = ret == -EBUSY ? -ENOSPC : ret;
		goto out_unlock;
	}
	g->id = id;
	ret = dfg_sysfs_graph_add(g);
	if (ret)
		goto out_erase_id;
	dfg_nr_graphs++;
	mutex_unlock(&dfg_graphs_lock);

	trace_dfg_graph_create(g->id, g->name, from_kuid(&init_user_ns, g->uid),
			       g->mode);
	dfg_nl_graph_event(DFG_EV_GRAPH_CREATE, g->creator, g->id, 0, g->name);

	/* The creator's reference goes to the descriptor (or is put). */
	return dfg_graph_open_fd(c, g, o->flags);

out_erase_id:
	xa_erase(&dfg_graphs, id);
out_unlock:
	mutex_unlock(&dfg_graphs_lock);
	dfg_user_uncharge(g->user, DFG_LIM_GRAPH);
	kobject_put(&g->kobj);
	return ret;
}

int dfg_graph_attach(struct dfg_cmd_ctx *c)
{
	const struct dfg_graph_open *o = c->args;
	struct dfg_graph *g;
	int ret;

	ret = dfg_graph_open_check(o, DFG_GRAPH_O_ALL);
	if (ret)
		return ret;
	if (o->mode)
		return -EINVAL;

	mutex_lock(&dfg_graphs_lock);
	g = dfg_graph_find(o->name);
	if (!g) {
		mutex_unlock(&dfg_graphs_lock);
		return -ENOENT;
	}
	if (!dfg_graph_permitted(g, !(o->flags & DFG_GRAPH_O_RDONLY))) {
		mutex_unlock(&dfg_graphs_lock);
		return -EACCES;
	}
	/* Nonzero under the mutex: see kref_put_mutex() above. */
	kref_get(&g->ref);
	mutex_unlock(&dfg_graphs_lock);

	return dfg_graph_open_fd(c, g, o->flags);
}

int dfg_graph_info(struct dfg_cmd_ctx *c)
{
	struct dfg_graph_info *info = c->args;
	struct dfg_graph *g = dfg_cmd_graph(c);

	if (info->size != sizeof(*info))
		return -EINVAL;
	if (memchr_inv((u8 *)info + sizeof(info->size), 0,
		       sizeof(*info) - sizeof(info->size)))
		return -EINVAL;

	info->id = g->id;
	info->uid = from_kuid_munged(current_user_ns(), g->uid);
	info->gid = from_kgid_munged(current_user_ns(), g->gid);
	info->mode = g->mode;
	info->rdonly = !c->writable;
	info->nr_objects = atomic_read(&g->nr_objects);
	info->pages = atomic_long_read(&g->pages);
	strscpy(info->name, g->name, sizeof(info->name));
	return 0;
}

/**
 * dfg_graph_reserve_object() - give @obj an id in @g, not yet published
 * @g: the graph, held by the caller's descriptor
 * @obj: the object being set up
 * @ops: its kind's operations
 *
 * The id is reserved (lookups see nothing there) so that the object's
 * sysfs directory, named after the id, can be added before others can
 * reach the object. Then dfg_graph_publish_object(), or
 * dfg_graph_unreserve_id() on failure.
 *
 * The object is charged to the caller's per-user count of its kind here;
 * its kind returns the charge with dfg_obj_uncharge() when the object's
 * memory goes (whatever becomes of the id).
 *
 * Return: the new id (>= 1) or a negative errno (-EDQUOT: the caller's
 * per-user limit of the kind).
 */
int dfg_graph_reserve_object(struct dfg_graph *g, struct dfg_object *obj,
			     const struct dfg_obj_ops *ops)
{
	struct dfg_user *u;
	u32 id;
	int ret;

	obj->graph = g;
	obj->ops = ops;
	u = dfg_user_charge(ops->kind);
	if (IS_ERR(u))
		return PTR_ERR(u);
	ret = xa_alloc(&g->objects, &id, NULL, XA_LIMIT(1, DFG_OBJ_ID_MAX),
		       GFP_KERNEL_ACCOUNT);
	if (ret) {
		dfg_user_uncharge(u, ops->kind);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	obj->id = id;
	obj->user = u;
	return id;
}

/**
 * dfg_obj_uncharge() - return the per-user charge of @obj, if it has one
 * @obj: an object whose memory is going (or whose kind says it no longer
 *	holds what it was charged for)
 *
 * Context: any; called once its kind is done with the object.
 */
void dfg_obj_uncharge(struct dfg_object *obj)
{
	if (obj->user) {
		dfg_user_uncharge(obj->user, obj->ops->kind);
		obj->user = NULL;
	}
}

/*
 * Give back an id that dfg_graph_reserve_object() reserved or
 * dfg_graph_hide_object_locked() left reserved. Only once the object's
 * sysfs directory is gone: the next object with this id adds its own.
 */
void dfg_graph_unreserve_id(struct dfg_graph *g, u32 id)
{
	xa_erase(&g->objects, id);
}

/**
 * dfg_graph_hide_object_locked() - take a published @obj out of lookups
 * @g: the graph
 * @obj: the object, found in @g->objects under its lock
 *
 * The id stays reserved (an allocating xarray keeps a NULL store as a
 * reserved slot, and replacing a present entry allocates nothing), so no
 * new object takes it while @obj's directory is still in sysfs; the
 * caller gives it back with dfg_graph_unreserve_id() after removing it.
 *
 * Context: holds the xarray lock of @g->objects.
 */
void dfg_graph_hide_object_locked(struct dfg_graph *g, struct dfg_object *obj)
{
	lockdep_assert_held(&g->objects.xa_lock);
	__xa_store(&g->objects, obj->id, NULL, 0);
	atomic_dec(&g->nr_objects);
}

/**
 * dfg_graph_publish_object() - make a reserved @obj reachable by others
 * @g: the graph, held by the caller's descriptor
 * @obj: fully set up object with its reserved id
 *
 * Return: 0, or a negative errno; the id then stays reserved for the
 * caller to give back once the object's directory is gone.
 */
int dfg_graph_publish_object(struct dfg_graph *g, struct dfg_object *obj)
{
	int ret;

	ret = xa_err(xa_store(&g->objects, obj->id, obj, GFP_KERNEL_ACCOUNT));
	if (ret)
		return ret;
	atomic_inc(&g->nr_objects);
	return 0;
}

/**
 * dfg_obj_add_dir() - add graphs/<gid>/<name><id>/ for @obj
 * @obj: an object whose id is reserved (dfg_graph_reserve_object()), not
 *	yet published, so nobody reaches it before its directory exists
 * @kobj: the kind's kobject for it, initialised with the kind's ktype
 *	(its attributes and release)
 *
 * The kind removes the directory (kobject_del()) in its ->unpublish, or
 * earlier when it takes the object out of the graph itself.
 *
 * Return: 0 or a negative errno.
 */
int dfg_obj_add_dir(struct dfg_object *obj, struct kobject *kobj)
{
	return kobject_add(kobj, &obj->graph->kobj, "%s%u", obj->ops->name,
			   obj->id);
}

/**
 * dfg_mmap_key_alloc() - give @obj a module-wide mmap key
 * @obj: an object of a live graph whose kind has ->mmap and ->get
 * @key: out: the key; the offset is dfg_mmap_key_offset(@key)
 *
 * From here on an mmap of that offset on a descriptor of @obj's graph
 * reaches @obj's ->mmap, until dfg_mmap_key_erase().
 *
 * Return: 0, -ENOSPC (no key free) or -ENOMEM.
 */
int dfg_mmap_key_alloc(struct dfg_object *obj, u32 *key)
{
	int ret;

	ret = xa_alloc_cyclic(&dfg_mmap_keys, key, obj,
			      XA_LIMIT(1, DFG_OBJ_ID_MAX), &dfg_mmap_next_key,
			      GFP_KERNEL);
	if (ret < 0)
		return ret == -EBUSY ? -ENOSPC : ret;
	return 0;
}

/* No new mmap finds @key's object once this returns. */
void dfg_mmap_key_erase(u32 key)
{
	xa_erase(&dfg_mmap_keys, key);
}

/**
 * dfg_pool_lookup() - the object a channel's descriptors point into
 * @g: the graph, held by the caller
 * @id: object id
 * @size: out: the pool's size in bytes
 *
 * A pool is an object whose kind has ->pool_size (an arena, an exported
 * region). Its size is read under the lock of @g's object xarray: a
 * region can be unexported (hidden under that lock) at any time and freed
 * soon after, so nothing of it is touched after the unlock. The channel
 * keeps no reference to its pool (descriptors are offsets, each process
 * maps the pool itself).
 *
 * Context: process context; takes the xarray lock of @g->objects.
 * Return: 0, or -ENOENT when @id is no object, no pool, or a region
 * already unexported.
 */
int dfg_pool_lookup(struct dfg_graph *g, u32 id, u64 *size)
{
	struct dfg_object *obj;
	int ret = -ENOENT;

	if (!id || id > DFG_OBJ_ID_MAX)
		return -ENOENT;
	xa_lock(&g->objects);
	obj = xa_load(&g->objects, id);
	if (obj && obj->ops->pool_size) {
		*size = obj->ops->pool_size(obj);
		ret = 0;
	}
	xa_unlock(&g->objects);
	return ret;
}
