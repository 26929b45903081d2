/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dfg.ko private header: objects shared between the files of kmod/.
 *
 * Objects, locks and references
 * -----------------------------
 * struct dfg_fd	first member of every descriptor's private data (an
 *			open /dev/dfg, a graph, a channel endpoint, a team
 *			member, a scheduler client): its kind, which the
 *			command entry point reads once, and the dfg_file of
 *			its parked commands.
 *
 * struct dfg_file	the parked commands of one descriptor, embedded in
 *			it (every kind but graphs, which never wait); from
 *			the descriptor's open to its release. On dfg_files
 *			(under dfg_files_lock, a mutex: open, release and the
 *			monitor all run in process context) so the wait
 *			monitor can walk every file.
 *			Nothing else holds a pointer to it across calls except
 *			parked commands, and a parked command pins the struct
 *			file (io_uring holds a file reference per request), so
 *			release() never runs while one is parked.
 *	->lock		spinlock, irq-safe because a parked NOP's timeout
 *			hrtimer completes it from hard-irq context (and
 *			RDMA completions will). Protects ->parked,
 *			->nr_parked and the ->state of every dfg_park on
 *			->parked.
 *
 * struct dfg_cmd_ctx	one per command execution, on the dispatcher's
 *			stack; never outlives the handler call.
 *
 * struct dfg_waiter	one command waiting (sleeping on ioctl, parked on
 *			io_uring), embedded in a subsystem's waiter object and
 *			listed under the subsystem's lock; its io_uring half,
 *			struct dfg_park, is on dfg_file.parked under
 *			dfg_file.lock. See wait.c for the steps, the one
 *			memory-ordering rule, the park states and the two
 *			references.
 *
 * struct dfg_graph	one per live graph (graph.c): see graph.c for its
 *			registry (dfg_graphs_lock), its two references (kref
 *			for life, kobject for memory) and its objects.
 *
 * struct dfg_object	header of every object of a graph (arena.c,
 *			region.c, chan.c, team.c, set.c): in its graph until
 *			the graph dies (arenas, channels) or leaves it earlier
 *			(an unexported region, a team without members, an
 *			unregistered set); see graph.c. Points to its kind's
 *			struct dfg_obj_ops, which the graph's death calls.
 *			A channel's memory may outlive the graph through its
 *			endpoints (see chan.c).
 *
 * struct dfg_chan, struct dfg_chan_ep: channels and their endpoint
 *			descriptors, see chan.c. An endpoint embeds a
 *			dfg_file for its parked commands.
 *
 * struct dfg_team, struct dfg_team_member: teams and their member
 *			descriptors, see team.c. A member embeds a dfg_file
 *			for its parked commands.
 *
 * struct dfg_sched_client: scheduler descriptors, see sched.c. A client
 *			embeds a dfg_file for its parked SCHED_NEXTs.
 * struct dfg_set:	the sets registered on them, see set.c and sched.h.
 *
 * Object directories graphs/<id>/{arena,region,chan,team,set}<oid>/:
 * added before the object is published in its graph (the id is reserved
 * first), removed (kobject_del(), which drains attribute readers) before
 * the object's memory can go: at the graph's death under dfg_graphs_lock
 * before the graph's own directory, and earlier by the one caller that
 * took the object out of its graph (a region's UNEXPORT, a team's last
 * member, a set's UNREGISTER or its client's release), which may finish
 * after the graph's directory went (the kobject core keeps a child's
 * sysfs node until its kobject_del()). A removal waits for readers, so
 * it nests every lock its readers take inside the locks its caller
 * holds: see the table.
 *
 * Lock order
 * ----------
 * Every lock of the module, outermost first. A lock is only ever taken
 * with none held, or under the locks listed above it that name it ("->
 * X: why"); nothing else nests. Files say "lock order: see dfg.h".
 *
 * dfg_graphs_lock	mutex (graph.c), outermost: a graph's death runs
 *			under it (kref_put_mutex()), and no path takes it
 *			holding another of ours.
 *	-> dfg_sched_mutex: the death ends the graph's scheduler clients
 *			(its hook; the sets' directories go after it).
 *	-> dfg_teams_lock: the death removes its teams' directories.
 *	-> dfg_chan.lock: removing chan<id>/ drains readers that take it.
 *	-> xa_lock(dfg_graphs): ids of graphs.
 * dfg_sched_mutex	mutex (sched.c); no sysfs removal under it (sched.c)
 *	-> dfg_fb_mutex: a set entering its graph is watched.
 *	-> dfg_chan.lock: disarming a set's watches (UNREGISTER, a
 *			client's release).
 *	-> dfg_sched_client.lock: UNREGISTER, a client's release, failing
 *			a graph.
 *	-> xa_lock(dfg_graph.objects): a set hidden from its graph.
 * dfg_teams_lock	mutex (team.c)
 *	-> dfg_team.lock: JOIN, detach; removing team<id>/ drains readers
 *			that take it.
 *	-> xa_lock(dfg_graph.objects): a team leaving its graph.
 *	-> dfg_users_lock: a JOIN that creates its team charges it.
 * dfg_users_lock	mutex (limits.c): charges of a graph or an object
 *			(under dfg_teams_lock for a team); takes none of
 *			ours. Removing users/<uid>/ drains its readers,
 *			which take no lock.
 * dfg_pf_mutex	mutex (prefetch.c): peers and the transport
 *	-> dfg_pf_rwsem: replacing a dead peer, unregistering.
 *	-> a transport's connection setup and teardown (rdma_cm, whose
 *			handler_mutex the transport's cm handlers run under):
 *			PEER_ADD waits there for the connection (the one
 *			handler that sleeps by hand, see DESIGN.md), and the
 *			handlers take only dfg_pf_lock (dfg_pf_peer_lost()),
 *			dfg_rdma_conn.lock, dfg_rdma_lock and, serving,
 *			dfg_pf_image_lock: never dfg_pf_mutex, so no handler
 *			waits for a PEER_ADD that waits for it. dfg_tcp.ko:
 *			a socket's connect and hello, and at ->disconnect the
 *			flush of the connection's works, which take only
 *			dfg_tcp_conn.lock and dfg_pf_lock (dfg_pf_read_done(),
 *			dfg_pf_peer_lost()).
 *	-> mmap_lock: PEER_ADD copies its struct out.
 *	-> dfg_pf_lock: publishing a peer.
 *	-> dfg_pf_traffic_lock: a peer's link measured, or no longer.
 * dfg_pf_rwsem		rwsem (prefetch.c), read by PREFETCH while it
 *			starts reads
 *	-> dfg_pf_lock: resolving.
 *	-> dfg_pf_traffic_lock: a replaced peer's link no longer measured.
 *	-> dfg_rdma_conn.lock, dfg_tcp_conn.lock: a transport's ->read.
 * dfg_pf_image_lock	mutex (prefetch.c), under mmap_lock (mmap) and a
 *			transport's cm handler (serving an accepted
 *			connection, dfg_pf_serve_get()); so nothing under it
 *			touches user memory or waits for a connection.
 *	-> dfg_pf_lock: swapping the image.
 * dfg_rdma_lock	mutex (rdma/dfg_rdma.c, dfg_rdma.ko): the served
 *			connections' list and their ->dying; taken under
 *			rdma_cm's handler_mutex (accepting, a disconnect
 *			event) or alone (a connection's free work, the
 *			module's exit); takes none of ours (queue_work()
 *			only).
 * dfg_tcp_lock	mutex (tcp/dfg_tcp.c, dfg_tcp.ko): the served
 *			connections' list and dfg_tcp_stopping; taken alone
 *			(the accept work, a connection's end, the module's
 *			exit, which shuts the sockets down under it); takes
 *			none of ours.
 * dfg_pf_lock		spinlock (prefetch.c), process context
 *	-> dfg_file.lock: completing a PREFETCH.
 * dfg_pf_traffic_lock	mutex (pf_traffic.c): the links' table, threshold
 *			and interval; takes none of ours (RCU inside, events
 *			sent after it). The gate reads a link's ->open
 *			under dfg_pf_lock without it.
 * dfg_rdma_conn.lock	spinlock (rdma/dfg_rdma.c), process context:
 *			a connection's ->dead and ->closing, its lists
 *			waiting and its request slots (a list is copied
 *			out of an answer under it); innermost (posts a
 *			SEND, nothing of ours), taken under dfg_pf_rwsem
 *			(->read), dfg_pf_mutex (->connect, ->disconnect)
 *			or alone (cm handler, CQ work, its timer work);
 *			dropped before dfg_pf_read_done() and
 *			dfg_pf_peer_lost().
 * dfg_tcp_conn.lock	spinlock (tcp/dfg_tcp.c), process context: a
 *			connection's requests queued and sent, its next tag,
 *			->dead and ->closing; innermost, taken under
 *			dfg_pf_rwsem (->read), dfg_pf_mutex (->disconnect) or
 *			alone (its send and receive works); dropped before
 *			dfg_pf_read_done() and dfg_pf_peer_lost().
 * dfg_fb_mutex	mutex (feedback.c): the feedback registry; taken
 *			under dfg_graphs_lock (a graph's death),
 *			dfg_sched_mutex (a set entering its graph) or alone
 *			(a channel's creation and death, a set leaving its
 *			graph, FEEDBACK_SET, the poller); takes none of
 *			ours.
 * dfg_files_lock	mutex (main.c)
 *	-> dfg_file.lock: the wait monitor's walk (wait.c).
 * mmap_lock		the kernel's, held around .mmap and .fault
 *	-> dfg_xregion.map_lock: a region fault (region.c).
 *	-> dfg_sched_client.lock: a scheduler mmap finds its set.
 *	-> xa_lock(dfg_graph.objects), xa_lock(dfg_mmap_keys): a graph
 *			descriptor's mmap finds its object (graph.c).
 * dfg_xregion.map_lock	rwsem (region.c); revocation takes it alone, with
 *			no mmap_lock, and unmaps (i_mmap_rwsem) after
 *			releasing it.
 *	-> page table locks: a fault inserts its ptes under it.
 * dfg_chan.lock	spinlock (chan.c), process context
 *	-> dfg_sched_client.lock: a watch's ->fire makes a set ready. So
 *			no path arms or disarms a watch holding a client
 *			lock.
 *	-> dfg_file.lock: completing a waiter (wait.c).
 * dfg_team.lock	spinlock (team.c), process context
 *	-> dfg_file.lock: completing a waiter.
 * dfg_sched_client.lock spinlock (sched.c), process context
 *	-> dfg_file.lock: completing a waiter.
 * xa_lock(dfg_graph.objects), xa_lock(dfg_graphs), xa_lock(dfg_mmap_keys)
 *			innermost: lookups under them only take a
 *			reference (kobject_get(), kref_get(), a kind's
 *			dfg_obj_ops.get) or read a size (.pool_size).
 * dfg_file.lock	spinlock, irq-safe (main.c, wait.c), innermost.
 */
#ifndef _DFG_KMOD_DFG_H
#define _DFG_KMOD_DFG_H

#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/hrtimer.h>
#include <linux/kobject.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/refcount.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <linux/dfg.h>

#include "compat.h"

/*
 * DFG_F_* bits this module implements (GET_INFO, sysfs, netlink). DFG_F_ALL
 * names every bit of the ABI; a bit is added here with its subsystem.
 */
#define DFG_F_IMPLEMENTED	(DFG_F_URING_CMD | DFG_F_ASYNC | \
				 DFG_F_NETLINK | DFG_F_GRAPH | DFG_F_REGION | \
				 DFG_F_CHAN | DFG_F_TEAM | \
				 DFG_F_SCHED | DFG_F_PREFETCH | \
				 DFG_F_FEEDBACK | DFG_F_PLAN_GEN | \
				 DFG_F_PART_SET | DFG_F_PF_GATE)

/* Longest command name, NUL included (sysfs file name, tracepoints). */
#define DFG_CMD_NAME_MAX	16

/* Largest argument struct of any command; the dispatcher's stack buffer. */
#define DFG_ARGS_MAX		256

/**
 * struct dfg_file - the parked commands of one descriptor
 * @lock:	protects @parked, @nr_parked and their dfg_park.state
 * @parked:	dfg_park.node of this file's parked commands
 * @nr_parked:	length of @parked; at most dfg_max_parked
 * @node:	on dfg_files, under dfg_files_lock
 * @tgid:	thread group of the opener, for netlink events
 */
struct dfg_file {
	spinlock_t		lock;	/* irq-safe; see the top of this file */
	struct list_head	parked;
	unsigned int		nr_parked;
	struct list_head	node;
	pid_t			tgid;
};

/* main.c: put an embedded dfg_file on dfg_files (wait monitor) and off. */
void dfg_file_init(struct dfg_file *df);
void dfg_file_fini(struct dfg_file *df);

/* Kinds of descriptor that reach the command entry points. */
enum dfg_fd_kind {
	DFG_FD_DEV,	/* /dev/dfg (main.c) */
	DFG_FD_GRAPH,	/* graph descriptor: struct dfg_graph (graph.c) */
	DFG_FD_EP,	/* channel endpoint: struct dfg_chan_ep (chan.c) */
	DFG_FD_TEAM,	/* team member: struct dfg_team_member (team.c) */
	DFG_FD_SCHED,	/* scheduler client: struct dfg_sched_client */
	DFG_FD_NR,
};

/**
 * struct dfg_fd - first member of every descriptor's private data
 * @kind:	enum dfg_fd_kind; immutable
 * @df:		the dfg_file that takes the descriptor's parked commands
 *		(embedded in the same object), NULL for graph descriptors,
 *		which never wait; immutable
 *
 * Only dfg's own file_operations reach dfg_ioctl() and dfg_uring_cmd(),
 * so the entry points read the kind from any file's private_data.
 */
struct dfg_fd {
	enum dfg_fd_kind	kind;
	struct dfg_file		*df;
};

static inline void dfg_fd_init(struct dfg_fd *fd, enum dfg_fd_kind kind,
			       struct dfg_file *df)
{
	fd->kind = kind;
	fd->df = df;
}

struct dfg_waiter;
struct dfg_graph;
struct dfg_user;
struct file;
struct vm_area_struct;

/**
 * struct dfg_cmd_ctx - one command on its way through a handler
 * @kind:	the kind of descriptor the command was issued on
 * @obj:	its private data (the header of a /dev/dfg file, a graph, a
 *		channel endpoint, a team member or a scheduler client), held
 *		by the descriptor; reach it through the typed accessors
 *		(dfg_cmd_graph(), ...), which check @kind
 * @writable:	the descriptor was opened for writing (graph descriptors:
 *		DFG_CMDF_WRITE commands)
 * @ucmd:	the io_uring command, NULL on the ioctl path
 * @issue_flags: IO_URING_F_* of the issue (0 on ioctl)
 * @cmd:	the command value (DFG_IOC_*)
 * @size:	_IOC_SIZE(@cmd), bytes at @args
 * @args:	kernel copy of the argument struct; copied back out on
 *		success for ioctl and DFG_URING_F_INDIRECT
 * @uaddr:	user copy of the struct (ioctl argument or indirect @addr);
 *		NULL for inline io_uring arguments
 * @copied:	@args went back to @uaddr already (dfg_cmd_copy_out())
 * @res2:	out: second result, cqe->big_cqe[0] on inline CQE32 rings
 * @waiter:	set by dfg_waiter_arm() when the handler parked the command
 * @install:	set by a handler whose result is a new descriptor @fd: the
 *		dispatcher installs @install at @fd once nothing can fail any
 *		more (after the copy-out), or drops both on failure, so a
 *		failed command never leaves a descriptor behind
 * @fd:		descriptor reserved with get_unused_fd_flags() for @install
 */
struct dfg_cmd_ctx {
	enum dfg_fd_kind	kind;
	struct dfg_fd		*obj;
	bool			writable;
	struct io_uring_cmd	*ucmd;
	unsigned int		issue_flags;
	u32			cmd;
	u32			size;
	void			*args;
	void __user		*uaddr;
	bool			copied;
	u64			res2;
	struct dfg_waiter	*waiter;
	struct file		*install;
	int			fd;
};

/*
 * A command handler. Returns a result >= 0, a negative errno, or
 * -EIOCBQUEUED from dfg_waiter_block() (io_uring path only).
 * Must not return -EIOCBQUEUED on the ioctl path (c->ucmd == NULL).
 */
typedef int (*dfg_cmd_fn)(struct dfg_cmd_ctx *c);

/* The descriptor of @c, which must be of @kind (the command table says). */
static inline struct dfg_fd *dfg_cmd_fd(const struct dfg_cmd_ctx *c,
					enum dfg_fd_kind kind)
{
	if (WARN_ON_ONCE(c->kind != kind))
		return NULL;
	return c->obj;
}

/* The dfg_file that takes @c's parked commands (never a graph's). */
static inline struct dfg_file *dfg_cmd_file(const struct dfg_cmd_ctx *c)
{
	WARN_ON_ONCE(!c->obj->df);
	return c->obj->df;
}

/* cmd.c: the command table and both entry points */
int dfg_cmd_init(void);
const char *dfg_cmd_name(unsigned int nr);
long dfg_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
int dfg_uring_cmd(struct io_uring_cmd *ucmd, unsigned int issue_flags);

/*
 * DFG_FD_FOPS() - the file_operations of every dfg descriptor kind (an
 * open /dev/dfg, a graph, a channel endpoint, a team member, a scheduler
 * client): both command entry points of cmd.c, which read the kind from
 * the struct dfg_fd at the head of private_data, and the kind's own
 * @release and @mmap; /dev/dfg adds its .open. No position: lseek()
 * returns 0 (noop_llseek).
 */
#define DFG_FD_FOPS(_release, _mmap)			\
	.owner		= THIS_MODULE,			\
	.release	= (_release),			\
	.unlocked_ioctl	= dfg_ioctl,			\
	.compat_ioctl	= compat_ptr_ioctl,		\
	.uring_cmd	= dfg_uring_cmd,		\
	.mmap		= (_mmap),			\
	.llseek		= noop_llseek
int dfg_cmd_copy_out(struct dfg_cmd_ctx *c);

/* core.c: core command handlers (nr 0x00..0x0f) */
int dfg_core_get_info(struct dfg_cmd_ctx *c);
int dfg_core_nop(struct dfg_cmd_ctx *c);

/* graph.c: graphs, their registry and their descriptors */

/* Kinds of object in a graph (dfg_obj_ops.kind). */
enum dfg_obj_type {
	DFG_OBJ_ARENA = 1,
	DFG_OBJ_REGION,
	DFG_OBJ_CHAN,
	DFG_OBJ_TEAM,
	DFG_OBJ_SET,
};

struct dfg_object;

/**
 * struct dfg_obj_ops - what a kind of object does for its graph
 * @kind:	enum dfg_obj_type, for lookups by id that want one kind
 * @name:	kind name: the sysfs directory is <name><id>, added by
 *		dfg_obj_add_dir() with the kind's kobject and ktype
 * @unpublish:	the graph is dying: remove the object's sysfs directory
 *		(waits for its readers). Under dfg_graphs_lock, before the
 *		graph's own directory goes.
 * @destroy:	the graph died: drop the graph's hold on the object, which
 *		is already out of dfg_graph.objects. Process context, no
 *		lock held.
 * @mmap:	NULL, or set up @vma (shared, at an offset graph.c found
 *		the object by: DFG_MMAP_OFFSET(id), or an mmap key's offset
 *		for kinds that take one; the kind checks it is its own) on
 *		a descriptor @file of the object's graph. Under mmap_lock;
 *		the object is held (@get) for the call. 0 or -errno.
 * @get:	NULL (the graph's life holds the object, as for arenas),
 *		or take a hold on an object found in dfg_graph.objects or
 *		the mmap keys, under that xarray's lock; @put drops it
 * @put:	drop a hold @get took; may free the object
 * @pool_size:	NULL, or the bytes a channel's descriptors may point into
 *		(arenas, regions), under the lock of dfg_graph.objects
 */
struct dfg_obj_ops {
	enum dfg_obj_type	kind;
	const char		*name;
	void			(*unpublish)(struct dfg_object *obj);
	void			(*destroy)(struct dfg_object *obj);
	int			(*mmap)(struct dfg_object *obj, struct file *file,
					struct vm_area_struct *vma);
	void			(*get)(struct dfg_object *obj);
	void			(*put)(struct dfg_object *obj);
	u64			(*pool_size)(struct dfg_object *obj);
};

/**
 * struct dfg_object - header of every object of a graph
 * @graph:	the graph; objects never outlive it, so no reference
 * @ops:	its kind's operations
 * @id:		index in dfg_graph.objects, from 1
 * @user:	the creator's per-user count, charged when the id is
 *		reserved and returned by dfg_obj_uncharge() when the
 *		object's memory goes; NULL before the charge and after
 */
struct dfg_object {
	struct dfg_graph	*graph;
	const struct dfg_obj_ops *ops;
	u32			id;
	struct dfg_user		*user;
};

/* Is @obj (from a lookup, maybe NULL) of @kind? */
static inline bool dfg_obj_is(const struct dfg_object *obj,
			      enum dfg_obj_type kind)
{
	return obj && obj->ops->kind == kind;
}

/**
 * struct dfg_graph_hook - a subsystem told of every graph's death
 * @node:	on the graph.c list, under dfg_graphs_lock
 * @death:	called first in a graph's death, under dfg_graphs_lock,
 *		before its objects are unpublished
 */
struct dfg_graph_hook {
	struct list_head	node;
	void			(*death)(struct dfg_graph *g);
};

/*
 * Highest object id and mmap key: DFG_MMAP_OFFSET(id) must stay below
 * DFG_MMAP_REGION, the bit that marks key offsets, and a key's offset a
 * positive loff_t.
 */
#define DFG_OBJ_ID_MAX		((1U << (62 - DFG_MMAP_SHIFT)) - 1)

/* The mmap offset of module-wide key @key (graph.c). */
static inline u64 dfg_mmap_key_offset(u32 key)
{
	return DFG_MMAP_REGION | DFG_MMAP_OFFSET(key);
}

/**
 * struct dfg_graph - one live graph (see graph.c for the rules)
 * @fd:		descriptor header: the private data of its descriptors
 * @ref:	life: one per graph descriptor (struct file); the last put
 *		destroys the graph under dfg_graphs_lock
 * @kobj:	memory and sysfs graphs/<id>; its release frees the struct
 * @id:		module-wide id, index in dfg_graphs; immutable
 * @name:	unique among live graphs; immutable
 * @uid:	owner (creator's fsuid); immutable
 * @gid:	owner's group (creator's fsgid); immutable
 * @mode:	permission bits (<= 0777); immutable
 * @creator:	tgid of the creator, for events
 * @objects:	dfg_object pointers by id (XA_FLAGS_ALLOC1, own lock)
 * @nr_objects:	live objects
 * @pages:	pages held by the graph's objects
 * @attached:	open graph descriptors (struct files) now
 * @user:	the creator's per-user count, charged from creation until
 *		the graph's death
 * @fb_stall_ms: feedback: T of stall reports, 0 for the module's
 *		(under dfg_fb_mutex, like the other @fb_ fields)
 * @fb_period_ms: feedback: period of the summary, 0 for none
 * @fb_next_ns:	feedback: when the next summary is due
 * @fb_batch:	feedback: samples sent in the summary being built
 * @fb_plan_gen: feedback: FEEDBACK_SET DFG_FB_PLAN's last generation,
 *		U64_MAX before one (written with WRITE_ONCE under
 *		dfg_fb_mutex, read by sysfs with READ_ONCE alone: one u64,
 *		consistent with no other field)
 */
struct dfg_graph {
	struct dfg_fd		fd;
	struct kref		ref;
	struct kobject		kobj;
	u32			id;
	char			name[DFG_NAME_MAX];
	kuid_t			uid;
	kgid_t			gid;
	umode_t			mode;
	pid_t			creator;
	struct xarray		objects;
	atomic_t		nr_objects;
	atomic_long_t		pages;
	atomic_t		attached;
	struct dfg_user		*user;
	u32			fb_stall_ms;
	u32			fb_period_ms;
	u64			fb_next_ns;
	u64			fb_batch;
	u64			fb_plan_gen;
};

int dfg_graph_create(struct dfg_cmd_ctx *c);
int dfg_graph_attach(struct dfg_cmd_ctx *c);
int dfg_graph_info(struct dfg_cmd_ctx *c);

/* The graph of the graph descriptor @c was issued on. */
static inline struct dfg_graph *dfg_cmd_graph(const struct dfg_cmd_ctx *c)
{
	struct dfg_fd *fd = dfg_cmd_fd(c, DFG_FD_GRAPH);

	return fd ? container_of(fd, struct dfg_graph, fd) : NULL;
}

bool dfg_name_valid(const char *name);
void dfg_graph_put(struct dfg_graph *g);
void dfg_graph_free(struct dfg_graph *g);
int dfg_graph_reserve_object(struct dfg_graph *g, struct dfg_object *obj,
			     const struct dfg_obj_ops *ops);
void dfg_graph_hook_add(struct dfg_graph_hook *h);
void dfg_graph_hook_del(struct dfg_graph_hook *h);
void dfg_graph_unreserve_id(struct dfg_graph *g, u32 id);
void dfg_graph_hide_object_locked(struct dfg_graph *g, struct dfg_object *obj);
int dfg_graph_publish_object(struct dfg_graph *g, struct dfg_object *obj);
void dfg_obj_uncharge(struct dfg_object *obj);
int dfg_obj_add_dir(struct dfg_object *obj, struct kobject *kobj);
int dfg_mmap_key_alloc(struct dfg_object *obj, u32 *key);
void dfg_mmap_key_erase(u32 key);
int dfg_pool_lookup(struct dfg_graph *g, u32 id, u64 *size);

/*
 * limits.c: per-user counts and limits of what users create, and the
 * share of module-wide bounds kept for privileged callers. A kind is
 * DFG_LIM_GRAPH or an enum dfg_obj_type.
 */
#define DFG_LIM_GRAPH		0
#define DFG_LIM_NR		(DFG_OBJ_SET + 1)

/**
 * struct dfg_user - what one user (effective uid) holds now
 * @node:	in the table's hash, under dfg_users_lock
 * @kobj:	memory and sysfs users/<uid>/ (sysfs.c)
 * @uid:	the user; immutable
 * @total:	sum of @count; the entry lives while it is nonzero (and is
 *		removed by the table's collector once it is zero)
 * @count:	graphs and objects of each kind charged to the user;
 *		incremented under dfg_users_lock (so the limit check is
 *		exact), decremented anywhere
 */
struct dfg_user {
	struct hlist_node	node;
	struct kobject		kobj;
	kuid_t			uid;
	atomic_t		total;
	atomic_t		count[DFG_LIM_NR];
};

extern unsigned int dfg_user_max[DFG_LIM_NR];
extern unsigned int dfg_reserve_pct;
struct dfg_user *dfg_user_charge(unsigned int kind);
void dfg_user_uncharge(struct dfg_user *u, unsigned int kind);
bool dfg_over_share(unsigned long want, unsigned long limit);
void dfg_limits_exit(void);

/* arena.c: arenas and their mmap, accounted page arrays */
struct user_struct;
struct mem_cgroup;
extern atomic_long_t dfg_total_pages;
extern atomic_long_t dfg_resident_pages;
int dfg_account_mem(struct user_struct *user, unsigned long nr_pages);
void dfg_unaccount_mem(struct user_struct *user, unsigned long nr_pages);

/**
 * struct dfg_mem - accounted zeroed pages of an arena or a channel
 * @nr_pages:	length of @pages, all charged to the limits at creation
 * @pages:	the pages, one reference each; lazy: NULL until first touched
 *		(set once by cmpxchg(), never cleared before dfg_mem_free())
 * @user:	creator's user_struct (reference held)
 * @locked:	pages charged to @user->locked_vm (0 with CAP_IPC_LOCK)
 * @resident:	pages allocated (@nr_pages unless lazy)
 * @memcg:	lazy only: the creator's memory cgroup, which every page is
 *		charged to at first touch, whoever touches it (reference
 *		held until dfg_mem_free(), so the target outlives every
 *		fault); NULL without memory cgroups
 */
struct dfg_mem {
	unsigned long		nr_pages;
	struct page		**pages;
	struct user_struct	*user;
	unsigned long		locked;
	atomic_long_t		resident;
	struct mem_cgroup	*memcg;
};

int dfg_mem_alloc(struct dfg_mem *m, unsigned long nr_pages);
int dfg_mem_reserve(struct dfg_mem *m, unsigned long nr_pages);
struct page *dfg_mem_page(struct dfg_mem *m, unsigned long idx);
void dfg_mem_free(struct dfg_mem *m);
int dfg_mem_mmap(struct dfg_mem *m, struct vm_area_struct *vma);
int dfg_arena_create(struct dfg_cmd_ctx *c);

/* region.c: exported regions, their mmap and single copy */
extern atomic_long_t dfg_pinned_pages;
int dfg_region_export(struct dfg_cmd_ctx *c);
int dfg_region_unexport(struct dfg_cmd_ctx *c);
int dfg_region_copy(struct dfg_cmd_ctx *c);

/**
 * struct dfg_fb_obj - what feedback keeps of a channel or a set, embedded
 *	in it (all fields under dfg_fb_mutex)
 * @node:	on the registry while the object is in its graph
 * @obj:	the object it is embedded in; immutable
 * @high:	channels: FILL_HIGH mark, 0 for none
 * @low:	channels: FILL_LOW mark
 * @above:	channels: FILL_HIGH was the last report
 * @held:	channels: a crossing waits for the end of dfg.fb_gap_ms
 * @last_ns:	channels: time of the last fill report
 * @seen_wait:	sets: the wait (dfg_set.wait_seq) already reported
 * @sample_count: the COUNT of the last summary sample
 * @sample_ns:	its time (0: none yet)
 */
struct dfg_fb_obj {
	struct list_head	node;
	struct dfg_object	*obj;
	u32			high;
	u32			low;
	bool			above;
	bool			held;
	u64			last_ns;
	u64			seen_wait;
	u64			sample_count;
	u64			sample_ns;
};

/* Before the object is published: unlisted, pointing at its object. */
static inline void dfg_fb_obj_init(struct dfg_fb_obj *fb,
				   struct dfg_object *obj)
{
	INIT_LIST_HEAD(&fb->node);
	fb->obj = obj;
}

/* feedback.c: the reports a rule interpreter acts on */
extern const struct attribute_group dfg_fb_group;
int dfg_fb_init(void);
void dfg_fb_exit(void);
void dfg_fb_add(struct dfg_fb_obj *fb);
void dfg_fb_del(struct dfg_fb_obj *fb);
int dfg_feedback_set(struct dfg_cmd_ctx *c);

/* chan.c: channels (nr 0x40..0x4f) and their endpoint descriptors */
int dfg_chan_create(struct dfg_cmd_ctx *c);
int dfg_chan_open(struct dfg_cmd_ctx *c);
int dfg_chan_wait(struct dfg_cmd_ctx *c);
int dfg_chan_wake(struct dfg_cmd_ctx *c);

/* team.c: teams (nr 0x50..0x5f) and their member descriptors */
int dfg_team_join(struct dfg_cmd_ctx *c);
int dfg_team_wait(struct dfg_cmd_ctx *c);
int dfg_team_wake(struct dfg_cmd_ctx *c);
int dfg_team_leave(struct dfg_cmd_ctx *c);

/**
 * struct dfg_chan_watch - the scheduler waits for one side of a channel
 * @node:	on the channel's watch list while armed (under its lock);
 *		empty otherwise
 * @ch:		the channel (reference held by the owner of the watch)
 * @role:	DFG_CHAN_CONSUMER: readable or end of stream;
 *		DFG_CHAN_PRODUCER: room in ring @slot, or no consumer
 * @slot:	producer ring
 * @fire:	called once the condition holds, under the channel's lock
 *		(a spinlock), after @node is unlinked
 */
struct dfg_chan_watch {
	struct list_head	node;
	struct dfg_chan		*ch;
	u32			role;
	u32			slot;
	void			(*fire)(struct dfg_chan_watch *w);
};

struct dfg_chan *dfg_chan_get(struct dfg_graph *g, u32 id, u32 *max_producers);
void dfg_chan_put(struct dfg_chan *ch);
struct dfg_fb_obj *dfg_chan_fb(struct dfg_chan *ch);
void dfg_chan_fill(struct dfg_object *obj, u32 *fill, u32 *capacity,
		   u64 *msgs);
int dfg_chan_watch_arm(struct dfg_chan_watch *w);
void dfg_chan_watch_disarm(struct dfg_chan_watch *w);

/* sched.c: the set scheduler (nr 0x60..0x6f) and scheduler descriptors */
int dfg_sched_attach(struct dfg_cmd_ctx *c);
int dfg_set_register(struct dfg_cmd_ctx *c);
int dfg_set_unregister(struct dfg_cmd_ctx *c);
int dfg_sched_next(struct dfg_cmd_ctx *c);
int dfg_sched_yield(struct dfg_cmd_ctx *c);
void dfg_sched_init(void);
void dfg_sched_exit(void);

/* prefetch.c: partition, peers, prefetch cache (nr 0x80..0x8f) */
int dfg_pf_part_load(struct dfg_cmd_ctx *c);
int dfg_pf_peer_add(struct dfg_cmd_ctx *c);
int dfg_pf_prefetch(struct dfg_cmd_ctx *c);
int dfg_pf_mmap(struct file *file, struct vm_area_struct *vma);
int dfg_pf_init(void);
void dfg_pf_exit(void);

/*
 * pf_traffic.c: the link traffic monitor of the prefetch's peers (claim
 * 10's traffic monitor). Slots are prefetch.c's peer ids.
 */
void dfg_pf_traffic_add(unsigned int slot, const struct sockaddr_storage *ss);
void dfg_pf_traffic_del(unsigned int slot);
bool dfg_pf_traffic_open(unsigned int slot);
void dfg_pf_traffic_count(unsigned int slot, u32 issued, u32 gated);
int dfg_pf_traffic_init(struct kobject *kobj);
void dfg_pf_traffic_exit(struct kobject *kobj);

/* wait.c: the waiting mechanism, parked io_uring commands, the monitor */

/*
 * dfg_park.state; changes only under dfg_file.lock.
 *   IDLE	not on a list: being set up by its handler
 *   PARKED	on dfg_file.parked: the module owns the command
 *   CLAIMED	taken off by an event or a cancel, which now owns the
 *		command and completes it exactly once
 */
enum dfg_park_state {
	DFG_PARK_IDLE,
	DFG_PARK_PARKED,
	DFG_PARK_CLAIMED,
};

/**
 * struct dfg_park - the io_uring half of a waiter (see wait.c)
 * @node:	on dfg_file.parked while PARKED; the claimer's private list
 *		after CLAIMED
 * @df:		file the command was issued on (pinned by the command)
 * @cmd:	the io_uring command, NULL on the ioctl path; invalid after
 *		its completion
 * @task:	the task that owns the request (task reference held)
 * @uaddr:	indirect user struct, or NULL for inline arguments
 * @size:	bytes of dfg_waiter.args
 * @cmd_op:	the command value, for traces and events
 * @state:	enum dfg_park_state, under dfg_file.lock
 * @ref:	two references: the park's (dropped after completion) and the
 *		issuer's (dropped when the handler has returned)
 */
struct dfg_park {
	struct list_head	node;
	struct dfg_file		*df;
	struct io_uring_cmd	*cmd;
	struct task_struct	*task;
	void __user		*uaddr;
	u32			size;
	u32			cmd_op;
	enum dfg_park_state	state;
	refcount_t		ref;
};

/**
 * struct dfg_waiter - one command waiting (see wait.c), embedded in the
 *	subsystem's waiter object
 * @node:	on the owner's list under @lock while armed; empty once
 *		completed or returned
 * @lock:	the owner's lock (process context only), or NULL
 * @task:	ioctl: the sleeper; NULL on io_uring (@park.task)
 * @args:	where results go: the dispatcher's buffer (ioctl) or the
 *		waiter's own copy (io_uring, written back if indirect)
 * @obj:	io_uring: the allocation holding the waiter, freed by the
 *		park's release
 * @res:	result, set by the completer
 * @res2:	second result, set by the completer
 * @done:	completed (store-release by the completer)
 * @timeout_ns:	relative timeout, or < 0 for none
 * @timeout_res: result when the timeout ends the wait
 * @timeout_res2: second result then
 * @undo:	io_uring: takes back what a completer handed over with a
 *		result >= 0 (a set to run) when that result cannot be
 *		delivered (the indirect struct is not writable, the task
 *		is gone); NULL when a result consumes nothing
 * @park:	io_uring: the parked command
 * @timer:	io_uring: the timeout (CLOCK_MONOTONIC)
 * @timeout_work: io_uring: the timeout under the owner's lock
 */
struct dfg_waiter {
	struct list_head	node;
	spinlock_t		*lock;	/* the owner's, see wait.c */
	struct task_struct	*task;
	void			*args;
	void			*obj;
	int			res;
	u64			res2;
	bool			done;
	s64			timeout_ns;
	int			timeout_res;
	u64			timeout_res2;
	void			(*undo)(struct dfg_waiter *w);
	struct dfg_park		park;
	struct hrtimer		timer;
	struct work_struct	timeout_work;
};

/* Sleepers one completer wakes after dropping the owner's lock. */
#define DFG_WAKE_BATCH		8

/**
 * struct dfg_wake_batch - tasks to wake once the owner's lock is dropped
 * @n:		entries in @task
 * @task:	task references taken by dfg_waiter_complete()
 */
struct dfg_wake_batch {
	unsigned int		n;
	struct task_struct	*task[DFG_WAKE_BATCH];
};

void *dfg_waiter_new(struct dfg_cmd_ctx *c, void *onstack, size_t size,
		     size_t off, spinlock_t *lock);
void dfg_waiter_discard(struct dfg_cmd_ctx *c, struct dfg_waiter *w);
void dfg_waiter_timeout(struct dfg_waiter *w, s64 ns, int res, u64 res2);
int dfg_waiter_arm(struct dfg_cmd_ctx *c, struct dfg_waiter *w,
		   struct list_head *list);
int dfg_waiter_block(struct dfg_cmd_ctx *c, struct dfg_waiter *w);
bool dfg_waiter_complete(struct dfg_waiter *w, int res, u64 res2,
			 struct dfg_wake_batch *batch);
void dfg_wake_batch_flush(struct dfg_wake_batch *batch);
struct task_struct *dfg_waiter_task(struct dfg_waiter *w);
void dfg_waiter_issued(struct dfg_cmd_ctx *c);
int dfg_wait_init(void);
void dfg_wait_exit(void);

extern struct workqueue_struct *dfg_wq;
extern struct mutex dfg_files_lock;
extern struct list_head dfg_files;
extern atomic_t dfg_nr_clients;
extern atomic_t dfg_nr_parked;

/* main.c: module parameters (read with READ_ONCE, set through param ops) */
extern unsigned int dfg_max_parked;
extern unsigned int dfg_monitor_ms;
extern unsigned int dfg_max_graphs;
extern unsigned int dfg_max_arena_mb;
extern unsigned int dfg_max_total_mb;

/*
 * sysfs.c: counters. Per-CPU, so the command path never bounces a shared
 * cache line between CPUs issuing commands; sysfs readers, which are rare,
 * sum over all possible CPUs. A reader may miss increments in flight.
 */
struct dfg_stats {
	u64	cmds[DFG_CMD_NR];
	u64	errors;
	u64	canceled;
};

DECLARE_PER_CPU(struct dfg_stats, dfg_stats);

static inline void dfg_stat_cmd(unsigned int nr)
{
	this_cpu_inc(dfg_stats.cmds[nr]);
}

static inline void dfg_stat_error(void)
{
	this_cpu_inc(dfg_stats.errors);
}

static inline void dfg_stat_canceled(void)
{
	this_cpu_inc(dfg_stats.canceled);
}

int dfg_sysfs_init(void);
struct kobject *dfg_sysfs_kobj(void);
void dfg_sysfs_exit(void);
void dfg_sysfs_graph_init(struct dfg_graph *g);
int dfg_sysfs_graph_add(struct dfg_graph *g);
void dfg_sysfs_graph_del(struct dfg_graph *g);
int dfg_sysfs_user_add(struct dfg_user *u);
void dfg_sysfs_user_del(struct dfg_user *u);

/**
 * struct dfg_nl_ev - one event, as the dfg_nl_*_event() callers describe it
 * @event:	DFG_EV_*
 * @pid:	PID attribute, 0 for none
 * @cmd:	CMD attribute, 0 for none
 * @graph:	GRAPH attribute, 0 for none
 * @object:	OBJECT attribute, 0 for none
 * @name:	NAME attribute, NULL for none
 * @rank:	RANK attribute, < 0 for none
 * @attrs:	bit (1 << DFG_NL_A_x) for each feedback attribute below to
 *		send (0 is a value for them)
 * @fill:	DFG_NL_A_FILL
 * @capacity:	DFG_NL_A_CAPACITY
 * @mark:	DFG_NL_A_MARK
 * @cpu:	DFG_NL_A_CPU
 * @wait_ms:	DFG_NL_A_WAIT_MS
 * @period_ms:	DFG_NL_A_PERIOD_MS
 * @mem_avail:	DFG_NL_A_MEM_AVAIL
 * @mem_total:	DFG_NL_A_MEM_TOTAL
 * @count:	DFG_NL_A_COUNT
 * @rate:	DFG_NL_A_RATE
 */
struct dfg_nl_ev {
	u32		event;
	u32		pid;
	u32		cmd;
	u32		graph;
	u32		object;
	const char	*name;
	s64		rank;
	u32		attrs;
	u32		fill;
	u32		capacity;
	u32		mark;
	u32		cpu;
	u32		wait_ms;
	u32		period_ms;
	u64		mem_avail;
	u64		mem_total;
	u64		count;
	u64		rate;
};

/* netlink.c: generic netlink family "dfg" */
int dfg_nl_init(void);
void dfg_nl_emit(const struct dfg_nl_ev *ev);
void dfg_nl_exit(void);
void dfg_nl_event(u32 event, u32 pid, u32 cmd);
void dfg_nl_graph_event(u32 event, u32 pid, u32 graph, u32 object,
			const char *name);
void dfg_nl_team_event(u32 event, u32 pid, u32 graph, u32 team, u32 rank);

#endif /* _DFG_KMOD_DFG_H */
