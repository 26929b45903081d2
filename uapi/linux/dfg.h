/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * dfg: kernel-assisted dataflow runtime, user/kernel ABI.
 *
 * Everything userspace may rely on is in this file: the command table,
 * result codes, flags with their _ALL masks, argument structs, the generic
 * netlink family and the sysfs layout. Read it top-down.
 *
 * Two paths, one command table
 * ----------------------------
 * Each command is one value, DFG_IOC_<NAME> = _IOWR(DFG_IOC_MAGIC, nr, struct).
 * The same value is used
 *
 *   - as the request of ioctl(fd, DFG_IOC_<NAME>, &args) on /dev/dfg: the
 *     struct is copied in, the handler runs, the struct is copied back out on
 *     success; the return value is the command's result (>= 0) or -1 with
 *     errno set;
 *
 *   - as the cmd_op of an IORING_OP_URING_CMD SQE on a ring created with
 *     IORING_SETUP_SQE128 (-EINVAL otherwise). The 80-byte sqe->cmd area holds
 *     a struct dfg_uring_cmd. Without DFG_URING_F_INDIRECT the argument struct
 *     sits inline in dfg_uring_cmd.args (only commands whose struct fits in
 *     DFG_URING_INLINE_MAX bytes); results leave through cqe->res and, on
 *     IORING_SETUP_CQE32 rings, cqe->big_cqe[0] ("res2"). With
 *     DFG_URING_F_INDIRECT, addr/len point at the argument struct in user
 *     memory, which is copied in and, on success, back out, exactly as ioctl.
 *
 * A command either completes inline (the CQE is posted at submission) or is
 * parked in the module and completes later from another context. A parked
 * command is always completed exactly once: by its event, or with
 * -ECANCELED when the submitting task exits or execs, when its ring is torn
 * down (all checked every dfg.monitor_ms: Linux 6.1 has no uring_cmd
 * cancel hook), or when the object it waits on dies.
 *
 * Errors (negative errno in cqe->res, errno for ioctl):
 *   -EOPNOTSUPP  unknown command (type or number not in the table); also
 *                from io_uring itself on IORING_SETUP_IOPOLL rings
 *   -EINVAL      known number but wrong size/direction, nonzero reserved
 *                field, unknown flag, wrong struct size field, ring not
 *                SQE128, inline args for a command too large to be inline
 *   -EFAULT      an argument pointer that cannot be read or written
 *   -EAGAIN      a ring submitted a sleeping command with IO_URING_F_NONBLOCK
 *                (io_uring retries it from a worker; never seen by users)
 *   -EBUSY       a per-file limit of parked commands (dfg.max_parked) reached
 *   -ECANCELED   a parked command whose task exited or whose object died
 *   -EINTR       a sleeping ioctl interrupted by a signal
 */
#ifndef _UAPI_LINUX_DFG_H
#define _UAPI_LINUX_DFG_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define DFG_DEVICE_NAME		"dfg"		/* /dev/dfg, misc device */
#define DFG_IOC_MAGIC		0xDF
#define DFG_API_VERSION		1

/*
 * Features (struct dfg_info.features). A bit is set when the running module
 * implements it; userspace must ignore bits it does not know.
 */
#define DFG_F_URING_CMD		0x1ULL	/* IORING_OP_URING_CMD path */
#define DFG_F_ASYNC		0x2ULL	/* parked commands, task-exit cancel */
#define DFG_F_NETLINK		0x4ULL	/* generic netlink family "dfg" */
#define DFG_F_GRAPH		0x8ULL	/* graphs and arenas */
#define DFG_F_REGION		0x10ULL	/* exported regions, single copy */
#define DFG_F_CHAN		0x20ULL	/* channels */
#define DFG_F_TEAM		0x40ULL	/* teams */
#define DFG_F_SCHED		0x80ULL	/* set scheduler */
#define DFG_F_PREFETCH		0x100ULL /* partitions, peers, prefetch */
#define DFG_F_FEEDBACK		0x200ULL	/* feedback events, FEEDBACK_SET */
#define DFG_F_PLAN_GEN		0x400ULL	/* FEEDBACK_SET DFG_FB_PLAN */
#define DFG_F_PART_SET		0x800ULL	/* dfg_part_hdr.part_set */
#define DFG_F_PF_GATE		0x1000ULL	/* link traffic monitor,
						 * DFG_PF_SPECULATIVE
						 */
#define DFG_F_ALL		(DFG_F_URING_CMD | DFG_F_ASYNC | DFG_F_NETLINK | \
				 DFG_F_GRAPH | DFG_F_REGION | DFG_F_CHAN | \
				 DFG_F_TEAM | DFG_F_SCHED | DFG_F_PREFETCH | \
				 DFG_F_FEEDBACK | DFG_F_PLAN_GEN | \
				 DFG_F_PART_SET | DFG_F_PF_GATE)

/* ------------------------------------------------------------------------
 * io_uring command area
 * ------------------------------------------------------------------------
 */

/* Largest argument struct that may travel inline in the SQE. */
#define DFG_URING_INLINE_MAX	64

/* dfg_uring_cmd.flags */
#define DFG_URING_F_INDIRECT	0x1U	/* args at addr/len, not inline */
#define DFG_URING_F_ALL		(DFG_URING_F_INDIRECT)

/**
 * struct dfg_uring_cmd - layout of sqe->cmd (80 bytes, SQE128 rings only)
 * @flags:	DFG_URING_F_*; unknown bits give -EINVAL
 * @len:	with DFG_URING_F_INDIRECT, size of the struct at @addr; must be
 *		_IOC_SIZE(cmd_op). Zero otherwise.
 * @addr:	with DFG_URING_F_INDIRECT, user address of the argument struct.
 *		Zero otherwise.
 * @args:	inline argument struct (without DFG_URING_F_INDIRECT); bytes
 *		past _IOC_SIZE(cmd_op) must be zero. Ignored with
 *		DFG_URING_F_INDIRECT.
 */
struct dfg_uring_cmd {
	__u32	flags;
	__u32	len;
	__u64	addr;
	__u8	args[DFG_URING_INLINE_MAX];
};

/* ------------------------------------------------------------------------
 * Commands: core (nr 0x00..0x0f)
 * ------------------------------------------------------------------------
 */

/*
 * DFG_IOC_GET_INFO - what this module is and what it allows.
 *
 * Sender: any process that opened /dev/dfg. In: @size = sizeof(struct
 * dfg_info), @reserved zero, other fields ignored. Out: all fields. Result: 0. Too large to
 * travel inline: io_uring callers must use DFG_URING_F_INDIRECT.
 */
#define DFG_IOC_GET_INFO	_IOWR(DFG_IOC_MAGIC, 0x00, struct dfg_info)

/*
 * DFG_IOC_NOP - does nothing, echoes @value. Measures the command path and
 * exercises deferred completion and cancellation.
 *
 * In: @value, @flags, @delay_ms; @echo and @reserved zero.
 * Out: @echo = @value (copied back on ioctl and DFG_URING_F_INDIRECT; in
 * res2 of a CQE32 ring otherwise). Result: 0.
 *
 *   no flag		completes at once, in the submitting context.
 *   DFG_NOP_F_ASYNC	completes @delay_ms later from a kernel worker
 *			(io_uring: the CQE comes later; ioctl: the call sleeps,
 *			-EINTR on a signal).
 *   DFG_NOP_F_PARK	never completes by itself: parked until the submitting
 *			task exits (io_uring: -ECANCELED) or a signal arrives
 *			(ioctl: -EINTR). Cannot be combined with ASYNC.
 */
#define DFG_IOC_NOP		_IOWR(DFG_IOC_MAGIC, 0x01, struct dfg_nop)

/* ------------------------------------------------------------------------
 * Commands: graphs (nr 0x10..0x1f)
 * ------------------------------------------------------------------------
 *
 * A graph is the unit of sharing and permission. It has a name, an owner
 * (the creator's fsuid/fsgid) and permission bits, checked like System V IPC
 * when a process attaches by name: owner bits if the caller's fsuid is the
 * owner, group bits if it is in the group, other bits otherwise; read (4)
 * is needed for DFG_GRAPH_O_RDONLY, read and write (6) otherwise;
 * CAP_IPC_OWNER overrides. A graph is reached through a graph file
 * descriptor, which can also be inherited or passed with SCM_RIGHTS. Every
 * object of a graph (arenas, later channels, regions, sets, teams) dies
 * with it; the graph dies when its last descriptor and last mapping go,
 * and its name is free again from then on.
 *
 * Commands on the wrong kind of file (a graph command on /dev/dfg or the
 * reverse) give -EBADFD. Commands that change a graph need a graph
 * descriptor opened for writing: -EACCES otherwise.
 *
 * Limits: every graph and object counts against its creator's effective
 * uid; a command that would create one more of a kind (GRAPH_CREATE,
 * ARENA_CREATE, REGION_EXPORT, CHAN_CREATE, a TEAM_JOIN that creates its
 * team, SET_REGISTER) gives -EDQUOT when that user holds
 * dfg.max_user_<kind> already (/sys/kernel/dfg/users/<uid>/<kind>), unless
 * the caller has CAP_SYS_RESOURCE. The last dfg.reserve_pct percent of the
 * module-wide bounds (dfg.max_graphs: -ENOSPC; dfg.max_total_mb: -ENOMEM)
 * is for CAP_SYS_RESOURCE callers only.
 */

/* Graph and object names: 1..DFG_NAME_MAX-1 bytes of [A-Za-z0-9._-], NUL. */
#define DFG_NAME_MAX		64

/*
 * DFG_IOC_GRAPH_CREATE - create a graph and open it.
 *
 * Sent on /dev/dfg. In: @size, @name, @mode (permission bits, <= 0777),
 * @flags (DFG_GRAPH_O_CLOEXEC only). Result: a new graph descriptor, opened
 * for reading and writing. Errors: -EEXIST name taken, -EINVAL bad name or
 * mode or flags, -ENOSPC dfg.max_graphs reached. Indirect on io_uring.
 */
#define DFG_IOC_GRAPH_CREATE	_IOWR(DFG_IOC_MAGIC, 0x10, struct dfg_graph_open)

/*
 * DFG_IOC_GRAPH_ATTACH - open an existing graph by name.
 *
 * Sent on /dev/dfg. In: @size, @name, @flags (DFG_GRAPH_O_*), @mode zero.
 * Result: a new graph descriptor, read-only with DFG_GRAPH_O_RDONLY.
 * Errors: -ENOENT no such graph, -EACCES permission denied.
 */
#define DFG_IOC_GRAPH_ATTACH	_IOWR(DFG_IOC_MAGIC, 0x11, struct dfg_graph_open)

/*
 * DFG_IOC_GRAPH_INFO - describe the graph a descriptor refers to.
 *
 * Sent on a graph descriptor. In: @size, rest zero. Out: all fields.
 */
#define DFG_IOC_GRAPH_INFO	_IOWR(DFG_IOC_MAGIC, 0x12, struct dfg_graph_info)

/* dfg_graph_open.flags */
#define DFG_GRAPH_O_RDONLY	0x1U	/* attach read-only: no writable maps */
#define DFG_GRAPH_O_CLOEXEC	0x2U	/* close the descriptor on exec */
#define DFG_GRAPH_O_ALL		(DFG_GRAPH_O_RDONLY | DFG_GRAPH_O_CLOEXEC)

/**
 * struct dfg_graph_open - DFG_IOC_GRAPH_CREATE, DFG_IOC_GRAPH_ATTACH
 * @size:	sizeof(struct dfg_graph_open), else -EINVAL
 * @flags:	DFG_GRAPH_O_*
 * @mode:	CREATE: permission bits (<= 0777); ATTACH: zero
 * @reserved0:	must be zero
 * @name:	graph name, NUL-terminated (see DFG_NAME_MAX)
 * @reserved:	must be zero
 */
struct dfg_graph_open {
	__u32	size;
	__u32	flags;
	__u32	mode;
	__u32	reserved0;
	char	name[DFG_NAME_MAX];
	__u64	reserved[4];
};

/**
 * struct dfg_graph_info - DFG_IOC_GRAPH_INFO
 * @size:	in: sizeof(struct dfg_graph_info), else -EINVAL
 * @id:		out: module-wide graph id (sysfs: /sys/kernel/dfg/graphs/<id>)
 * @uid:	out: owner
 * @gid:	out: owner's group
 * @mode:	out: permission bits
 * @rdonly:	out: 1 if this descriptor is read-only
 * @nr_objects:	out: live objects (arenas, regions, ...) in the graph
 * @pages:	out: pages allocated by the graph's objects (not regions)
 * @name:	out: graph name
 * @reserved:	must be zero on input; zero on output
 */
struct dfg_graph_info {
	__u32	size;
	__u32	id;
	__u32	uid;
	__u32	gid;
	__u32	mode;
	__u32	rdonly;
	__u32	nr_objects;
	__u32	reserved0;
	__u64	pages;
	char	name[DFG_NAME_MAX];
	__u64	reserved[4];
};

/* ------------------------------------------------------------------------
 * Commands: arenas (nr 0x20..0x2f), on a graph descriptor
 * ------------------------------------------------------------------------
 *
 * An arena is kernel-allocated, zeroed memory that every process attached
 * to the graph maps with mmap(graph_fd, offset = DFG_MMAP_OFFSET(id)) for
 * up to its size. Data in it is referenced by offset, never by pointer.
 * Its whole size is charged at creation to the creating user's
 * RLIMIT_MEMLOCK (unless CAP_IPC_LOCK) and to dfg.max_total_mb for the
 * whole module, and bounded by dfg.max_arena_mb per arena. Each page is
 * allocated at the first fault on it, by whichever process, and charged
 * then to the creator's memory cgroup (sysfs graphs/<gid>/arena<id>/
 * resident counts them); a first touch that cannot get a page (memory, or
 * that cgroup's limit) is SIGBUS for the process touching it, never an
 * OOM kill. A mapping larger than the object, or writable on a read-only
 * descriptor, fails; a private mapping fails (-EINVAL): arenas are shared
 * or nothing. mmap errors:
 * -EINVAL offset not DFG_MMAP_OFFSET() of a live arena, length past its
 * size, or MAP_PRIVATE; -EACCES PROT_WRITE on a read-only descriptor.
 */

/* mmap offset of object @id of a graph. */
#define DFG_MMAP_SHIFT		36
#define DFG_MMAP_OFFSET(id)	((__u64)(id) << DFG_MMAP_SHIFT)

/*
 * DFG_IOC_ARENA_CREATE - allocate an arena in the graph.
 *
 * In: @size (bytes, > 0; rounded up to the page size), @flags zero.
 * Out: @id (object id in the graph, also the result), @mmap_offset,
 * @size (rounded; in res2 on inline CQE32 rings). Errors: -EINVAL size 0,
 * -EFBIG above dfg.max_arena_mb, -ENOMEM memory or dfg.max_total_mb
 * exhausted, -EAGAIN RLIMIT_MEMLOCK exceeded, -EACCES read-only descriptor.
 */
#define DFG_IOC_ARENA_CREATE	_IOWR(DFG_IOC_MAGIC, 0x20, struct dfg_arena_create)

/**
 * struct dfg_arena_create - DFG_IOC_ARENA_CREATE
 * @size:	in: requested bytes; out: rounded to the page size
 * @flags:	must be zero
 * @id:		out: object id; zero on input
 * @mmap_offset: out: DFG_MMAP_OFFSET(@id); zero on input
 * @reserved:	must be zero
 */
struct dfg_arena_create {
	__u64	size;
	__u32	flags;
	__u32	id;
	__u64	mmap_offset;
	__u64	reserved[2];
};

/* ------------------------------------------------------------------------
 * Commands: regions (nr 0x30..0x3f), on a graph descriptor
 * ------------------------------------------------------------------------
 *
 * A region is a range of the exporting process's own memory that peers
 * attached to the graph map without a copy (XPMEM-style): the same physical
 * pages, read-only, or read-write where the exporter granted it. The pages
 * stay pinned (FOLL_LONGTERM) and charged to the exporter's RLIMIT_MEMLOCK
 * (unless CAP_IPC_LOCK) while exported. Unexport revokes every peer mapping
 * at once (later accesses raise SIGBUS) and unpins. The exporter's exit does
 * not unexport: the pinned pages live on until unexport or graph death, so
 * a peer never sees freed memory. Peers map with
 * mmap(graph_fd, offset = @mmap_offset) as for arenas; a writable mapping
 * of a region exported without DFG_REGION_F_WRITE fails with -EACCES.
 *
 * Region mmap offsets are NOT DFG_MMAP_OFFSET(id): they have DFG_MMAP_REGION
 * set and carry a module-wide key, unique among the live regions of all
 * graphs (revocation zaps every mapping of that offset at once), and not
 * reused soon after an unexport. Peers must use the @mmap_offset EXPORT
 * returned, passed to them out of band (with the id). The offset works on
 * any descriptor of the region's graph (-EINVAL on another graph's).
 * A mapping starts at @mmap_offset and is at most the region's size; it
 * must be MAP_SHARED (-EINVAL otherwise). mprotect() cannot make a
 * read-only mapping writable. Peer mappings are raw page-frame mappings:
 * they cannot themselves be exported, pinned or used for O_DIRECT
 * (-EFAULT). After UNEXPORT (or graph death) every access to a mapping
 * raises SIGBUS; munmap() it.
 *
 * What is pinned is the pages, not the address range: if the exporter
 * unmaps or remaps its range, peers keep the old pages. Export memory the
 * exporter has written (or MAP_POPULATE'd): a read-only export of private
 * anonymous memory never touched may pin the shared zero page on kernels
 * without reliable read-only long-term pins.
 */

/* Set in every region mmap offset; never in DFG_MMAP_OFFSET(). */
#define DFG_MMAP_REGION		0x4000000000000000ULL	/* bit 62 */

/* Largest region: one mmap offset window, 1 << DFG_MMAP_SHIFT bytes. */
#define DFG_REGION_MAX		DFG_MMAP_OFFSET(1)

/* Largest DFG_IOC_REGION_COPY: its result must fit cqe->res (an int). */
#define DFG_REGION_COPY_MAX	0x40000000U	/* 1 GiB */

/*
 * DFG_IOC_REGION_EXPORT - export [@addr, @addr + @len) of the caller.
 *
 * In: @addr and @len page-aligned, @len > 0; @flags DFG_REGION_F_*.
 * @id, @mmap_offset and @reserved zero.
 * Out: @id (also the result), @mmap_offset (module-wide, see above; in
 * res2 on inline CQE32 rings).
 * Errors: -EINVAL alignment, flags, zero length, nonzero @id,
 * @mmap_offset or @reserved; -EFAULT range not mapped (or not writable
 * with DFG_REGION_F_WRITE, or not pinnable: I/O or page-frame mappings);
 * -EFBIG above dfg.max_arena_mb or DFG_REGION_MAX; -EAGAIN RLIMIT_MEMLOCK;
 * -EACCES read-only graph descriptor; -ENOSPC no free region key.
 */
#define DFG_IOC_REGION_EXPORT	_IOWR(DFG_IOC_MAGIC, 0x30, struct dfg_region)

/*
 * DFG_IOC_REGION_UNEXPORT - revoke and unpin region @id.
 *
 * In: @id, everything else zero. Any process with a writable graph
 * descriptor may unexport. Errors: -ENOENT no such region (or already
 * unexported), -EACCES read-only descriptor.
 */
#define DFG_IOC_REGION_UNEXPORT	_IOWR(DFG_IOC_MAGIC, 0x31, struct dfg_region)

/*
 * DFG_IOC_REGION_COPY - single copy between a region and the caller's own
 * memory (KNEM/CMA-style), for data that is not in shared memory.
 *
 * In: @id, @offset and @len inside the region, @addr the caller's buffer,
 * @flags DFG_COPY_TO_REGION (needs DFG_REGION_F_WRITE) or
 * DFG_COPY_FROM_REGION. Result: bytes copied (== @len). Works on a
 * read-only graph descriptor for DFG_COPY_FROM_REGION. Errors: -ERANGE
 * offset/len outside the region, -EFAULT bad @addr (part of the data may
 * have been copied), -EACCES direction not granted (TO_REGION without
 * DFG_REGION_F_WRITE or on a read-only descriptor), -ENOENT no such
 * region, -EINVAL flags not exactly one direction, nonzero @reserved,
 * @len above DFG_REGION_COPY_MAX.
 */
#define DFG_IOC_REGION_COPY	_IOWR(DFG_IOC_MAGIC, 0x32, struct dfg_region_copy)

/* dfg_region.flags */
#define DFG_REGION_F_WRITE	0x1U	/* peers may map and copy in writable */
#define DFG_REGION_F_ALL	(DFG_REGION_F_WRITE)

/**
 * struct dfg_region - DFG_IOC_REGION_EXPORT, DFG_IOC_REGION_UNEXPORT
 * @addr:	EXPORT in: start of the range in the caller's address space
 * @len:	EXPORT in: length in bytes
 * @flags:	EXPORT in: DFG_REGION_F_*
 * @id:		EXPORT out, UNEXPORT in: object id in the graph
 * @mmap_offset: EXPORT out: offset for mmap() on any descriptor of the
 *		graph (DFG_MMAP_REGION | module-wide key); zero on input
 * @reserved:	must be zero
 */
struct dfg_region {
	__u64	addr;
	__u64	len;
	__u32	flags;
	__u32	id;
	__u64	mmap_offset;
	__u64	reserved[2];
};

/* dfg_region_copy.flags: exactly one direction */
#define DFG_COPY_TO_REGION	0x1U
#define DFG_COPY_FROM_REGION	0x2U

/**
 * struct dfg_region_copy - DFG_IOC_REGION_COPY
 * @id:		region
 * @flags:	DFG_COPY_TO_REGION or DFG_COPY_FROM_REGION
 * @offset:	offset in the region
 * @len:	bytes to copy
 * @addr:	caller's buffer
 * @reserved:	must be zero
 */
struct dfg_region_copy {
	__u32	id;
	__u32	flags;
	__u64	offset;
	__u64	len;
	__u64	addr;
	__u64	reserved[2];
};

/* ------------------------------------------------------------------------
 * Commands: channels (nr 0x40..0x4f)
 * ------------------------------------------------------------------------
 *
 * A channel carries descriptors (struct dfg_desc: offset, length, flags,
 * tag) that point into one arena or exported region of the same graph,
 * its "pool". CHAN_CREATE records the pool's id and size (a region's
 * length) in the channel header; the channel holds no reference to the
 * pool. A region unexported after CHAN_CREATE leaves the channel working:
 * descriptors are only offsets, and each process maps the pool itself
 * (after the unexport, accesses to a region mapping raise SIGBUS, so
 * unexport only once no one dereferences descriptors any more).
 * It has up to @max_producers producer slots, each a single-producer ring
 * of @depth descriptors, and one consumer, which takes from the rings in
 * turn. So a multi-producer channel keeps each producer's order, loses
 * nothing when a producer dies at any point, and needs no atomic
 * read-modify-write on its fast path; a single-producer channel is the case
 * @max_producers = 1.
 *
 * Producers and the consumer are endpoints: descriptors opened with
 * DFG_IOC_CHAN_OPEN on a graph descriptor. They share the channel's memory
 * (struct dfg_chan_hdr and the rings), mapped with mmap(endpoint_fd,
 * offset 0, DFG_CHAN_MAP_SIZE). Data moves by indices in that memory; the
 * kernel is entered only to park a side that must wait (DFG_IOC_CHAN_WAIT)
 * and to wake one that is parked (DFG_IOC_CHAN_WAKE), under this protocol:
 *
 *   consumer, ring(s) empty:  waiting = 1; full barrier; look again;
 *                             if still empty: DFG_IOC_CHAN_WAIT (the kernel
 *                             looks once more before it parks); waiting = 0.
 *   producer, after publishing tail (store-release): full barrier;
 *                             if the consumer's waiting flag is set:
 *                             DFG_IOC_CHAN_WAKE.
 *   and the same with the roles swapped for a producer waiting for room.
 *
 * The kernel never trusts this memory: it reads only indices and flags and
 * derives booleans from them (empty, full); a descriptor is checked against
 * the pool by whoever dereferences it (libdfg rejects one outside the pool)
 * and never dereferenced by the kernel. The kernel owns the state words
 * (dfg_chan_ring.state, dfg_chan_hdr.consumer_state) and rewrites them from
 * its own copy on every change; userspace must not write them.
 *
 * End of stream and death: when a producer endpoint's last reference goes
 * (close, exit, kill), its ring becomes DFG_CHAN_S_CLOSED; the consumer reads
 * what is left, then that ring is done. The consumer sees end of stream
 * (DFG_CHAN_EV_EOF) once at least one producer has opened and every
 * opened ring is closed and drained (pipe semantics: open producers before
 * the work starts). When the consumer endpoint goes, consumer_state becomes
 * DFG_CHAN_S_CLOSED and producers get -EPIPE, parked ones at once.
 */

/*
 * DFG_IOC_CHAN_CREATE - create a channel in the graph (graph descriptor).
 *
 * In: @pool (id of an arena or exported region of the graph), @depth
 * (power of two, 2..DFG_CHAN_DEPTH_MAX), @max_producers
 * (1..DFG_CHAN_PRODUCERS_MAX), @flags zero. Out: @id (also the result),
 * @map_size (in res2 on inline CQE32 rings). The ring memory is accounted
 * like an arena. Errors:
 * -EINVAL depth/producers/flags, -ENOENT no such pool (not an arena or
 * region, or a region already unexported), -EACCES read-only
 * descriptor, -EFBIG/-ENOMEM/-EAGAIN as arenas.
 */
#define DFG_IOC_CHAN_CREATE	_IOWR(DFG_IOC_MAGIC, 0x40, struct dfg_chan_create)

/*
 * DFG_IOC_CHAN_OPEN - open an endpoint of channel @id (graph descriptor).
 *
 * In: @id, @role (DFG_CHAN_PRODUCER or DFG_CHAN_CONSUMER), @flags
 * (DFG_CHAN_O_CLOEXEC). Out: @slot (producer: its ring; consumer: 0; in
 * res2 on inline CQE32 rings, where nothing is copied back). Result: the
 * endpoint descriptor. A producer takes the lowest slot never opened
 * (DFG_CHAN_S_FREE), else the lowest closed slot whose ring the consumer
 * has drained (it goes on from that ring's indices). A consumer may open
 * again after the previous one closed. Errors: -ENOENT no such channel,
 * -EBUSY every producer slot open or closed with data left, or a consumer
 * already open, -EPIPE producer on
 * a channel whose consumer has gone, -EACCES read-only graph descriptor.
 */
#define DFG_IOC_CHAN_OPEN	_IOWR(DFG_IOC_MAGIC, 0x41, struct dfg_chan_open)

/*
 * DFG_IOC_CHAN_WAIT - park until this endpoint can make progress
 * (endpoint descriptor).
 *
 * Consumer: completes when a ring has a descriptor (DFG_CHAN_EV_READABLE)
 * or at end of stream (DFG_CHAN_EV_EOF). Producer: completes when its ring
 * has room (DFG_CHAN_EV_WRITABLE); -EPIPE when the consumer has gone.
 * Result: DFG_CHAN_EV_* bits. Completes at once if the condition already
 * holds. io_uring: parks, completes later (-ECANCELED on task exit);
 * ioctl: sleeps, -EINTR on a signal. -ECANCELED once the graph has died
 * (its last graph descriptor closed; endpoints do not keep it alive), at
 * once for parked and sleeping waits. A corrupted ring (a fill level above
 * @depth) counts as readable/writable, so the caller returns and sees it.
 * In: @flags zero. Out: @events (also the result; in res2 on CQE32 rings).
 */
#define DFG_IOC_CHAN_WAIT	_IOWR(DFG_IOC_MAGIC, 0x42, struct dfg_chan_wait)

/*
 * DFG_IOC_CHAN_WAKE - wake the other side if it is parked and can now make
 * progress (endpoint descriptor). Producer: the consumer; consumer: every
 * producer. Result: number of parked commands completed. In: zero.
 */
#define DFG_IOC_CHAN_WAKE	_IOWR(DFG_IOC_MAGIC, 0x43, struct dfg_chan_wait)

#define DFG_CHAN_DEPTH_MAX	65536
#define DFG_CHAN_PRODUCERS_MAX	64

/* dfg_chan_open.role */
#define DFG_CHAN_PRODUCER	1
#define DFG_CHAN_CONSUMER	2

/* dfg_chan_open.flags */
#define DFG_CHAN_O_CLOEXEC	0x1U
#define DFG_CHAN_O_ALL		(DFG_CHAN_O_CLOEXEC)

/* DFG_IOC_CHAN_WAIT results */
#define DFG_CHAN_EV_READABLE	0x1U
#define DFG_CHAN_EV_WRITABLE	0x2U
#define DFG_CHAN_EV_EOF		0x4U

/**
 * struct dfg_chan_create - DFG_IOC_CHAN_CREATE
 * @pool:	id of the arena or region the descriptors point into
 * @depth:	descriptors per ring, power of two
 * @max_producers: producer slots (rings)
 * @flags:	must be zero
 * @id:		out: channel id; zero on input
 * @map_size:	out: DFG_CHAN_MAP_SIZE(@depth, @max_producers); zero on input
 * @reserved:	must be zero
 */
struct dfg_chan_create {
	__u32	pool;
	__u32	depth;
	__u32	max_producers;
	__u32	flags;
	__u32	id;
	__u32	reserved0;
	__u64	map_size;
	__u64	reserved[2];
};

/**
 * struct dfg_chan_open - DFG_IOC_CHAN_OPEN
 * @id:		channel id
 * @role:	DFG_CHAN_PRODUCER or DFG_CHAN_CONSUMER
 * @flags:	DFG_CHAN_O_*
 * @slot:	out: producer's ring index; zero on input
 * @reserved:	must be zero
 */
struct dfg_chan_open {
	__u32	id;
	__u32	role;
	__u32	flags;
	__u32	slot;
	__u64	reserved[2];
};

/**
 * struct dfg_chan_wait - DFG_IOC_CHAN_WAIT, DFG_IOC_CHAN_WAKE
 * @flags:	must be zero
 * @events:	out: DFG_CHAN_EV_* (also the result); zero on input
 * @reserved:	must be zero
 */
struct dfg_chan_wait {
	__u32	flags;
	__u32	events;
	__u64	reserved[2];
};

/* ------------------------------------------------------------------------
 * Commands: teams (nr 0x50..0x5f)
 * ------------------------------------------------------------------------
 *
 * A team is a group of processes, ranks 0..@team_size-1, that run
 * collectives together. It is an object of a graph, found by name: every
 * member sends DFG_IOC_TEAM_JOIN on a writable graph descriptor with the
 * same name, @team_size and @ctl_size and its own rank; the first join
 * creates the team, the others attach to it. Each join returns a member
 * descriptor (anon inode "[dfg-team]", always O_CLOEXEC): the member is
 * that descriptor, whoever holds it (it survives fork and SCM_RIGHTS).
 *
 * The team's control area, mmap(member_fd, 0, @map_size, MAP_SHARED), is
 * kernel memory shared by all members and accounted like an arena: a
 * struct dfg_team_hdr the kernel writes, then @ctl_size bytes that belong
 * to userspace (the collectives' mailboxes). DFG_IOC_TEAM_WAIT and
 * DFG_IOC_TEAM_WAKE are a futex over the aligned __u32 words of that area:
 * WAIT sleeps while a word holds a value, WAKE wakes the sleepers of a
 * word. The usual protocol: the waker stores the new value, then WAKEs;
 * the kernel compares and sleeps under one lock, so no wakeup is lost.
 * The kernel wakes the sleepers of a header word whenever it changes it
 * (e.g. @joined), waking only those whose value no longer matches.
 *
 * Membership ends in order with DFG_IOC_TEAM_LEAVE. A member that ends in
 * any other way breaks the team: its descriptor's last reference goes
 * without LEAVE (close, exit, kill), or the process that joined exits
 * while another (a forked child) still holds the descriptor (noticed
 * within dfg.monitor_ms). A broken team's header says
 * DFG_TEAM_S_BROKEN and @dead_rank; every WAIT in progress on any member
 * ends with -EOWNERDEAD at once, and every later WAIT fails with
 * -EOWNERDEAD without sleeping. A broken team stays (a JOIN of its name
 * gets -EOWNERDEAD) until its last member descriptor is gone.
 *
 * A team whose members have all left or gone disappears; a later JOIN of
 * its name makes a new team (new id, zeroed control area). Member
 * descriptors do not keep the graph alive: when the graph dies its teams
 * die with it (header DFG_TEAM_S_DEAD; WAITs end with -ECANCELED, later
 * WAIT and WAKE give -ECANCELED), while member descriptors and mappings
 * keep the control area until they go.
 */

/* Largest team. */
#define DFG_TEAM_SIZE_MAX	64

/* Largest @ctl_size of a team (the userspace part of the control area). */
#define DFG_TEAM_CTL_MAX	(16U << 20)

/*
 * DFG_IOC_TEAM_JOIN - join (or create) the team @name of the graph
 * (writable graph descriptor).
 *
 * In: @size, @name, @team_size (1..DFG_TEAM_SIZE_MAX), @rank (<
 * @team_size), @ctl_size (0..DFG_TEAM_CTL_MAX bytes of userspace control
 * area after the header), @flags zero; @id, @map_size, @reserved0 and
 * @reserved zero. The first join creates the team with @team_size and
 * @ctl_size; later joins must pass the same values. Out: @id (the team's
 * object id in the graph), @map_size (bytes to mmap: header and control
 * area rounded up to the page size). Result: the member descriptor.
 * Too large to travel inline: io_uring callers use DFG_URING_F_INDIRECT.
 * Errors: -EINVAL bad size field, name, flags, reserved fields, @team_size,
 * @rank, or @team_size/@ctl_size unlike the existing team's; -EFBIG
 * @ctl_size above DFG_TEAM_CTL_MAX or dfg.max_arena_mb; -EADDRINUSE @rank
 * taken; -EOWNERDEAD the team is broken and still has members; -EACCES
 * read-only graph descriptor; -ENOMEM/-EAGAIN as arenas.
 */
#define DFG_IOC_TEAM_JOIN	_IOWR(DFG_IOC_MAGIC, 0x50, struct dfg_team_join)

/*
 * DFG_IOC_TEAM_WAIT - sleep while the control-area word at @offset holds
 * @value (member descriptor).
 *
 * In: @offset (multiple of 4, word inside the mapping, header included),
 * @value, @timeout_ns (< 0: no timeout; 0: do not sleep; else relative),
 * @flags and @reserved zero. Result: 1 if the word did not hold @value
 * (nothing slept), 0 when woken by a WAKE of that word or by the kernel's
 * change of a header word (wakeups may be spurious: look at the word
 * again). io_uring: parks and completes later (-ECANCELED on task exit or
 * ring teardown); ioctl: sleeps, -EINTR on a signal. Errors: -EINVAL bad
 * offset, flags or reserved; -ETIMEDOUT the timeout expired;
 * -EOWNERDEAD the team is or becomes broken; -ECANCELED the graph died;
 * -ENOTCONN the member has left; -EBUSY dfg.max_parked reached.
 */
#define DFG_IOC_TEAM_WAIT	_IOWR(DFG_IOC_MAGIC, 0x51, struct dfg_team_wait)

/*
 * DFG_IOC_TEAM_WAKE - wake every WAIT sleeping on the word at @offset
 * (member descriptor). In: @offset as WAIT, @flags and @reserved zero.
 * Result: the number of WAITs woken. Errors: -EINVAL, -ENOTCONN (member
 * has left), -ECANCELED (graph died). A broken team still wakes (0: its
 * sleepers have all been ended).
 */
#define DFG_IOC_TEAM_WAKE	_IOWR(DFG_IOC_MAGIC, 0x52, struct dfg_team_wake)

/*
 * DFG_IOC_TEAM_LEAVE - leave the team in order (member descriptor): the
 * rank is free again, the others are not failed. The descriptor stays
 * open (and its mapping valid) but is no member any more: WAIT and WAKE
 * give -ENOTCONN. In: @flags and @reserved zero. Result: 0. Errors:
 * -EINVAL, -ENOTCONN already left.
 */
#define DFG_IOC_TEAM_LEAVE	_IOWR(DFG_IOC_MAGIC, 0x53, struct dfg_team_leave)

/**
 * struct dfg_team_join - DFG_IOC_TEAM_JOIN
 * @size:	sizeof(struct dfg_team_join), else -EINVAL
 * @flags:	must be zero
 * @name:	team name, NUL-terminated (see DFG_NAME_MAX)
 * @team_size:	number of members
 * @rank:	this member's rank
 * @ctl_size:	bytes of userspace control area after the header
 * @id:		out: the team's object id; zero on input
 * @reserved0:	must be zero
 * @map_size:	out: bytes of the mapping; zero on input
 * @reserved:	must be zero
 */
struct dfg_team_join {
	__u32	size;
	__u32	flags;
	char	name[DFG_NAME_MAX];
	__u32	team_size;
	__u32	rank;
	__u64	ctl_size;
	__u32	id;
	__u32	reserved0;
	__u64	map_size;
	__u64	reserved[4];
};

/**
 * struct dfg_team_wait - DFG_IOC_TEAM_WAIT
 * @offset:	byte offset of the __u32 word in the mapping
 * @value:	sleep while the word holds this value
 * @flags:	must be zero
 * @timeout_ns:	< 0 no timeout, 0 do not sleep, else relative timeout
 * @reserved:	must be zero
 */
struct dfg_team_wait {
	__u64	offset;
	__u32	value;
	__u32	flags;
	__s64	timeout_ns;
	__u64	reserved[2];
};

/**
 * struct dfg_team_wake - DFG_IOC_TEAM_WAKE
 * @offset:	byte offset of the __u32 word in the mapping
 * @flags:	must be zero
 * @reserved0:	must be zero
 * @reserved:	must be zero
 */
struct dfg_team_wake {
	__u64	offset;
	__u32	flags;
	__u32	reserved0;
	__u64	reserved[2];
};

/**
 * struct dfg_team_leave - DFG_IOC_TEAM_LEAVE
 * @flags:	must be zero
 * @reserved0:	must be zero
 * @reserved:	must be zero
 */
struct dfg_team_leave {
	__u32	flags;
	__u32	reserved0;
	__u64	reserved[2];
};

/* ------------------------------------------------------------------------
 * Commands: set scheduler (nr 0x60..0x6f)
 * ------------------------------------------------------------------------
 *
 * A set is one folded component set instance (or a single component):
 * code that runs inside one process, reads some channels and writes
 * others. The module decides which set runs next; the process supplies
 * worker threads that ask for work.
 *
 * A process joins a graph's scheduler with DFG_IOC_SCHED_ATTACH on a
 * writable graph descriptor, which returns a scheduler descriptor ("the
 * client"). Sets are registered on it and belong to it: only workers
 * asking on the same client run them, since their code lives in that
 * process. Sets are objects of the graph (ids shared with arenas and
 * channels; sysfs graphs/<g>/set<id>/).
 *
 * The worker loop (libdfg: dfg_sched_next()):
 *
 *   id = SCHED_NEXT          the module picks a runnable set nobody runs,
 *                            marks it running by this worker and returns
 *                            its id and quantum; parks (io_uring) or
 *                            sleeps (ioctl) while none is runnable.
 *   run the set for up to its quantum (elements or nanoseconds), never
 *   waiting on its channels: a set whose input is empty or whose output
 *   is full stops and says so.
 *   SCHED_YIELD(id, reason)  gives the set back: QUANTUM (still
 *                            runnable), INPUT_EMPTY, OUTPUT_FULL, EOF
 *                            (done for good) or ERROR (fails the graph).
 *                            SCHED_NEXT can carry the yield of the
 *                            previous set (@yield_id), one command per
 *                            turn.
 *
 * Runnable: a set with DFG_SET_F_ROOT is runnable from registration until
 * it yields EOF (it makes its own work, e.g. reads a file), except while
 * it waits after INPUT_EMPTY or OUTPUT_FULL. Any other set is runnable
 * when one of its input channels is readable (a descriptor, or end of
 * stream) and none of its outputs is waited for. After INPUT_EMPTY the
 * module raises the consumer's waiting flag of every input channel
 * (dfg_chan_hdr.cons_waiting), and after OUTPUT_FULL the producer's flag
 * of every full output ring (dfg_chan_ring.prod_waiting), then looks once
 * more, exactly as a waiting endpoint would: the peer's next send or
 * receive sees the flag and calls DFG_IOC_CHAN_WAKE (or its endpoint
 * closes), which makes the set runnable again and hands it to a parked
 * worker whose CPU is in the set's mask. The module clears a flag it
 * raised once its wait is over. A set is never run by two workers at
 * once; while it is runnable but not running nothing about it is
 * reported to userspace until a worker takes it.
 *
 * Choice: among the runnable sets of the client whose CPU mask holds the
 * worker's CPU, the one with the least virtual run time: the time it was
 * held by workers, scaled by 2^(DFG_SET_PRIO_MAX - @priority), so each
 * priority step doubles a set's share. A set that becomes runnable starts
 * no earlier than the smallest virtual time of the client's picks (no
 * credit for sleeping). Across processes, workers are ordinary threads
 * and share the CPUs through the kernel's scheduler.
 *
 * Monitoring: each set has a page of shared memory (struct dfg_set_page,
 * mmap(sched_fd, DFG_MMAP_OFFSET(id), DFG_SET_PAGE_SIZE)). The running
 * worker writes the index of the component it calls into @active
 * (DFG_SET_COMP_NONE between calls) and counts elements and bytes per
 * component. Every dfg.sched_sample_ms the module reads @active of each
 * running set and charges the CPU time the worker thread consumed since
 * the previous sample to that component (the patent's "active component"
 * sampling); sysfs shows the counters per set and per component.
 *
 * End and failure: when every set of a client has yielded EOF (or was
 * unregistered), its SCHED_NEXT returns -ENODATA, parked ones at once,
 * and the workers exit. A set that yields ERROR, a client closed with sets
 * not done (its process died or exited early) and a worker thread that
 * exits while holding a set fail the graph: the set's state becomes
 * DFG_SET_S_FAILED, DFG_EV_SET_FAILED is sent, and every SCHED_NEXT of
 * every client of the graph returns -EIO from then on, parked ones at
 * once. When the graph dies (its last graph descriptor closed),
 * SCHED_NEXT returns -ECANCELED. A failed set stays visible in sysfs until
 * the graph dies.
 */

/*
 * DFG_IOC_SCHED_ATTACH - join the graph's scheduler (writable graph
 * descriptor). In: @flags (DFG_SCHED_O_CLOEXEC), rest zero. Result: the
 * scheduler descriptor. Closing it unregisters its sets; sets not done
 * then fail the graph (see above). Errors: -EINVAL flags or reserved,
 * -EACCES read-only descriptor.
 */
#define DFG_IOC_SCHED_ATTACH	_IOWR(DFG_IOC_MAGIC, 0x60, struct dfg_sched_attach)

/*
 * DFG_IOC_SET_REGISTER - register a set (scheduler descriptor).
 *
 * In: every field of struct dfg_set_register but @id and @mmap_offset.
 * Out: @id (also the result), @mmap_offset of the set's page. A ROOT set
 * is runnable at once; another is runnable once an input is readable.
 * Too large to be inline: io_uring callers use DFG_URING_F_INDIRECT.
 * Errors: -EINVAL size, flags, reserved, name, priority, quantum, zero or
 * too many components or ports, a non-ROOT set without inputs, the same
 * channel twice in @inputs or the same (channel, slot) twice in
 * @outputs, an output slot >= the channel's max_producers; -ENOENT an id
 * that is not a channel of this graph; -EFAULT an array pointer;
 * -ECANCELED the graph died; -EIO the graph failed.
 */
#define DFG_IOC_SET_REGISTER	_IOWR(DFG_IOC_MAGIC, 0x61, struct dfg_set_register)

/*
 * DFG_IOC_SET_UNREGISTER - remove set @id of this client (scheduler
 * descriptor): it leaves the graph (and sysfs) at once, without failing
 * anything. In: @id, rest zero. Errors: -ENOENT not a set of this client,
 * -EBUSY a worker runs it.
 */
#define DFG_IOC_SET_UNREGISTER	_IOWR(DFG_IOC_MAGIC, 0x62, struct dfg_set_id)

/*
 * DFG_IOC_SCHED_NEXT - take the next set to run (scheduler descriptor).
 *
 * In: @flags (DFG_NEXT_F_*); @cpu with DFG_NEXT_F_CPU: the worker's CPU
 * for the sets' masks (else the CPU the command is issued on); @yield_id
 * and @yield_reason: a set this worker gives back first, exactly as
 * SCHED_YIELD (0: none); @id, @quantum and @reserved zero.
 * Out: @id (also the result) and @quantum of the set now running for the
 * caller (the quantum in res2 on inline CQE32 rings).
 * Completes at once if a set is runnable; else io_uring parks the command
 * until one is (-ECANCELED if the submitting task exits) and ioctl sleeps
 * (-EINTR on a signal); with DFG_NEXT_F_NOWAIT it returns -ETIME
 * instead (a wait of zero time; not -EAGAIN, which io_uring would take for
 * "issue again"). Errors: -ENODATA every set of this client is done; -EIO the
 * graph failed; -ECANCELED the graph died; -EINVAL flags, reserved, CPU
 * out of range, bad yield; errors of SCHED_YIELD for @yield_id (nothing
 * else happens then).
 */
#define DFG_IOC_SCHED_NEXT	_IOWR(DFG_IOC_MAGIC, 0x63, struct dfg_sched_next)

/*
 * DFG_IOC_SCHED_YIELD - give back set @id, which a worker of this client
 * runs (scheduler descriptor). In: @id, @reason (DFG_YIELD_*), rest zero.
 * Result: 0. Errors: -ENOENT not a set of this client, -EINVAL reason or
 * reserved, -EBUSY the set is not running, -EINVAL INPUT_EMPTY for a set
 * without inputs or OUTPUT_FULL for one without outputs.
 */
#define DFG_IOC_SCHED_YIELD	_IOWR(DFG_IOC_MAGIC, 0x64, struct dfg_sched_yield)

/* ------------------------------------------------------------------------
 * Feedback (nr 0x70..0x7f): what the module tells a rule interpreter
 * ------------------------------------------------------------------------
 *
 * The module watches every graph and reports on the netlink event groups
 * (DFG_EV_CHAN_FILL_HIGH and the events after it, below):
 *
 * - channel fill: a channel with marks (FEEDBACK_SET DFG_FB_CHAN_MARKS)
 *   reports FILL_HIGH when its fill (entries in all its rings) reaches
 *   @high, then FILL_LOW once it is back at or below @low, then HIGH
 *   again, and so on: a fill hovering at one mark sends nothing more.
 *   The fill is sampled every dfg.fb_poll_ms; a channel reports at most
 *   once per dfg.fb_gap_ms, a crossing inside that gap is reported when
 *   it ends if it still holds.
 * - stalls: a set WAITING on its inputs (STARVED) or on a full output
 *   (BACKPRESSURED) for longer than T is reported once per wait. T is the
 *   graph's @stall_ms, or dfg.fb_stall_ms when that is 0; 0 in both
 *   turns the reports off.
 * - CPU hotplug: CPU_ONLINE and CPU_OFFLINE for every CPU that comes or
 *   goes while the module is loaded (OFFLINE before the CPU stops).
 * - memory: MEM_LOW once MemAvailable falls below dfg.fb_mem_low_pct of
 *   RAM, MEM_OK once it is back above dfg.fb_mem_ok_pct (checked every
 *   poll while any graph has objects).
 * - worker death: WORKER_DEATH for each live set whose scheduler
 *   descriptor's process died, or whose worker thread exited holding it,
 *   while its graph lives (SET_FAILED follows, as before).
 * - periodic summary: with a graph's @period_ms set, every period one
 *   CHAN_SAMPLE per channel and one SET_SAMPLE per set of the graph, then
 *   one GRAPH_SAMPLE that closes the batch.
 * - plan generation (DFG_F_PLAN_GEN): the runner of a graph tells the
 *   module which generation of its plan the graph runs (FEEDBACK_SET
 *   DFG_FB_PLAN, at the start and after each re-plan); the module shows
 *   it in graphs/<id>/plan_gen (dfgctl top) and sends PLAN_CHANGE.
 *
 * Counters of every event are in /sys/kernel/dfg/feedback/.
 */

/* struct dfg_feedback_set.what */
#define DFG_FB_CHAN_MARKS	1	/* @object's @high and @low */
#define DFG_FB_GRAPH		2	/* the graph's @stall_ms, @period_ms */
#define DFG_FB_PLAN		3	/* the graph's plan @generation */

/* Bounds of struct dfg_feedback_set. */
#define DFG_FB_STALL_MS_MAX	3600000U	/* 1 h */
#define DFG_FB_PERIOD_MS_MIN	10U
#define DFG_FB_PERIOD_MS_MAX	3600000U

/**
 * struct dfg_feedback_set - argument of DFG_IOC_FEEDBACK_SET
 * @what:	DFG_FB_CHAN_MARKS, DFG_FB_GRAPH or DFG_FB_PLAN
 * @object:	CHAN_MARKS: the channel's id; GRAPH, PLAN: 0
 * @high:	CHAN_MARKS: fill (entries) that reports FILL_HIGH,
 *		1..depth * max_producers; 0 with @low 0 removes the marks;
 *		GRAPH, PLAN: 0
 * @low:	CHAN_MARKS: fill that reports FILL_LOW, < @high; GRAPH,
 *		PLAN: 0
 * @stall_ms:	GRAPH: T for STARVED and BACKPRESSURED, 0 for the module's
 *		default, <= DFG_FB_STALL_MS_MAX; CHAN_MARKS, PLAN: 0
 * @period_ms:	GRAPH: period of the summary, 0 for none, else
 *		DFG_FB_PERIOD_MS_MIN..DFG_FB_PERIOD_MS_MAX; CHAN_MARKS,
 *		PLAN: 0
 * @generation:	PLAN: the generation of the plan the graph runs now (the
 *		runner's count of re-plans; any value, a later one may be
 *		lower: a new run); CHAN_MARKS, GRAPH: 0. Was reserved[0]
 *		before DFG_F_PLAN_GEN, which had to be zero.
 * @reserved:	must be zero
 */
struct dfg_feedback_set {
	__u32	what;
	__u32	object;
	__u32	high;
	__u32	low;
	__u32	stall_ms;
	__u32	period_ms;
	__u64	generation;
	__u64	reserved;
};

/*
 * DFG_IOC_FEEDBACK_SET - set what the module reports about this graph
 * (writable graph descriptor). In: struct dfg_feedback_set. Result: 0.
 * New marks start from "below": a channel already above @high reports
 * FILL_HIGH at the next poll. PLAN sets graphs/<id>/plan_gen and sends
 * PLAN_CHANGE (GRAPH, PID of the caller, COUNT = @generation), every
 * time, also for the same generation again. Errors: -EINVAL @what, reserved, a field
 * the kind does not use, bounds; -ENOENT @object is not a channel of this
 * graph; -EACCES read-only descriptor.
 */
#define DFG_IOC_FEEDBACK_SET	_IOWR(DFG_IOC_MAGIC, 0x70, struct dfg_feedback_set)

/* ------------------------------------------------------------------------
 * Commands: partitions and hub-node prefetch (nr 0x80..0x8f, /dev/dfg)
 * ------------------------------------------------------------------------
 *
 * Each machine serves one partition of a large graph: its own nodes, a
 * contiguous range of global node IDs [node_first, node_first +
 * node_count) (a partitioner renumbers nodes so that every partition is a
 * range: that range is the owner scheme), plus replicas of other
 * partitions' hub nodes. DFG_IOC_PART_LOAD copies a partition image (the
 * layout below) into memory owned by the module, which every process maps
 * read-only: mmap(/dev/dfg fd, offset DFG_PF_MMAP_PART). Peers (other
 * machines' modules) are connected with DFG_IOC_PEER_ADD over a transport
 * module, one loaded at a time and the same on every machine: dfg_rdma.ko
 * (rdma_cm, RDMA READs of the peer's registered partition) or, without an
 * RDMA device, dfg_tcp.ko (a kernel TCP socket to the peer's module).
 * DFG_IOC_PREFETCH resolves where each asked node's data is:
 * in the local partition, in a local replica, in the machine's prefetch
 * cache, or on a peer, in which case it is read into the cache; its
 * completion (CQE, or the ioctl's return) says the bytes are there. The
 * cache is one per machine, made by the first PEER_ADD, shared and mapped
 * read-only at DFG_PF_MMAP_CACHE (-ENODATA before).
 *
 * Partition image (DFG_IOC_PART_LOAD; little-endian, as the host): a
 * struct dfg_part_hdr at offset 0, then sections at the offsets it gives,
 * each 8-byte aligned and inside the image:
 *   row	node_count + 1 __u64: node i's neighbours are col[row[i]] ..
 *		col[row[i + 1] - 1]; nondecreasing, row[node_count] <=
 *		col_count
 *   col	col_count __u64 global node IDs
 *   feat	node_count * feat_bytes bytes: node i's attributes
 *   rep_ids	rep_count __u64 global IDs of replicated hub nodes of other
 *		partitions, strictly increasing, none in the own range
 *   rep_row, rep_col, rep_feat	the replicas' neighbours and attributes,
 *		as row, col and feat (rep_row has rep_count + 1 entries)
 */

#define DFG_PART_MAGIC		0x50474644U	/* "DFGP" */
#define DFG_PART_VERSION	1

/**
 * struct dfg_part_hdr - head of a partition image
 * @magic:	DFG_PART_MAGIC
 * @version:	DFG_PART_VERSION
 * @node_first:	first global node ID of this partition
 * @node_count:	nodes of this partition (>= 1)
 * @feat_bytes:	attribute bytes per node (0: none), at most
 *		DFG_PART_FEAT_MAX
 * @flags:	zero
 * @row_off:	offset of row
 * @col_off:	offset of col
 * @col_count:	entries of col
 * @feat_off:	offset of feat
 * @rep_count:	replicated hub nodes
 * @rep_ids_off: offset of rep_ids
 * @rep_row_off: offset of rep_row
 * @rep_col_off: offset of rep_col
 * @rep_col_count: entries of rep_col
 * @rep_feat_off: offset of rep_feat
 * @image_bytes: size of the whole image (== dfg_part_load.len)
 * @part_set:	identity of the set of partitions this image is one of
 *		(`dfg graph partition` writes a hash of the graph, K and
 *		the assignment of nodes to partitions); 0: unknown, never
 *		compared. Node IDs are renumbered per partitioning, so two
 *		images of different sets must not serve each other:
 *		PEER_ADD refuses a peer whose nonzero @part_set differs
 *		from the loaded image's, and PART_LOAD an image whose
 *		nonzero @part_set differs from a peer's, with -EXDEV
 *		(DFG_F_PART_SET)
 * @reserved:	zero
 */
struct dfg_part_hdr {
	__u32	magic;
	__u32	version;
	__u64	node_first;
	__u64	node_count;
	__u32	feat_bytes;
	__u32	flags;
	__u64	row_off;
	__u64	col_off;
	__u64	col_count;
	__u64	feat_off;
	__u64	rep_count;
	__u64	rep_ids_off;
	__u64	rep_row_off;
	__u64	rep_col_off;
	__u64	rep_col_count;
	__u64	rep_feat_off;
	__u64	image_bytes;
	__u64	part_set;
	__u64	reserved[3];
};

#define DFG_PART_FEAT_MAX	65536

/* mmap offsets of /dev/dfg: the partition and the prefetch cache. */
#define DFG_PF_MMAP_PART	0ULL
#define DFG_PF_MMAP_CACHE	0x10000000000ULL	/* 1 TiB */

/**
 * struct dfg_pf_cache_hdr - first page of the cache mapping
 * @data_bytes:	size of the data ring, which starts at DFG_PF_CACHE_DATA
 * @tail:	ring position below which data may have been overwritten:
 *		the module raises it before it reuses bytes. A reader copies
 *		an entry, then (after a read barrier) checks tail <= the
 *		entry's pos; if not, the copy may be torn: prefetch again.
 * @head:	next ring position the module allocates
 * @reserved:	zero
 *
 * Ring positions only grow; position P is at byte DFG_PF_CACHE_DATA +
 * P % data_bytes of the mapping, and no entry wraps.
 */
struct dfg_pf_cache_hdr {
	__u64	data_bytes;
	__u64	tail;
	__u64	head;
	__u64	reserved[5];
};

#define DFG_PF_CACHE_DATA	4096ULL

/*
 * DFG_IOC_PART_LOAD - load this machine's partition (CAP_SYS_ADMIN).
 * In: the image at @addr, @len bytes (struct dfg_part_hdr first). The
 * module copies and checks it. Result: 0. Errors: -EINVAL a malformed
 * image (magic, version, offsets, row not monotone, rep_ids not strictly
 * increasing or inside the own range), flags or reserved; -EFBIG larger
 * than dfg.pf_max_part_mb; -EBUSY a partition is loaded and still in use
 * (served to peers, or prefetch peers connected); -EXDEV its part_set
 * differs from a connected peer's; -EFAULT.
 */
#define DFG_IOC_PART_LOAD	_IOWR(DFG_IOC_MAGIC, 0x80, struct dfg_part_load)

/*
 * DFG_IOC_PEER_ADD - connect to the module of another machine, which
 * serves the partition the reply names (CAP_SYS_ADMIN). In: @family
 * (AF_INET or AF_INET6), @port (host order; 0: DFG_PF_PORT), @addr
 * (network order: 4 bytes for AF_INET, 16 for AF_INET6), @timeout_ms (0:
 * 5000). Out: @id, @node_first, @node_count. Result: 0. Errors: -ENODEV no
 * transport module (dfg_rdma.ko or dfg_tcp.ko) loaded; -EINVAL family,
 * flags, reserved, a range that overlaps the own one or a peer's
 * (-EEXIST); -ENOSPC DFG_PF_PEERS_MAX peers; -ETIMEDOUT, -ECONNREFUSED
 * (the peer serves no partition, runs no module of this transport, or
 * with dfg_tcp.ko serves its most connections), -EHOSTUNREACH,
 * -ENETUNREACH from the connection; -EAFNOSUPPORT AF_INET6 on
 * dfg_rdma.ko; -EINTR a signal; -EPROTO the peer's answer is not the
 * transport's; -EXDEV the peer's partition belongs to another set than
 * the loaded one (part_set).
 */
#define DFG_IOC_PEER_ADD	_IOWR(DFG_IOC_MAGIC, 0x81, struct dfg_peer_add)

/*
 * DFG_IOC_PREFETCH - locate (and fetch from peers) the neighbour lists
 * and/or attributes of @nr nodes. In: @ids (user array of @nr __u64
 * global node IDs), @what (DFG_PF_NBRS, DFG_PF_ATTRS or both), @out (user
 * array of @nr entries per bit of @what: for node i, its DFG_PF_NBRS
 * entry then its DFG_PF_ATTRS entry). The @out array is written before
 * the command waits; the bytes of DFG_PF_IN_CACHE entries are valid once
 * it completes. Result: the number of entries read from peers (0: all were
 * local, replica or cache hits).
 *
 * Speculative requests (@flags DFG_PF_SPECULATIVE, DFG_F_PF_GATE): a
 * prefetch nobody waits for yet (patent 004's switch-side prefetch, rule
 * R3 of the access engine). The module's traffic monitor samples, per
 * peer, the byte counters of the network device its address routes
 * through (sysfs prefetch/traffic); such a request's reads from a peer
 * are issued only while that link's smoothed traffic is under
 * prefetch/traffic_threshold (claim 10: prefetch when traffic is low).
 * An entry that would be read from a peer whose link is busy (or whose
 * device is gone) is not read: its @out entry says DFG_PF_GATED, with
 * @len its size and @pos 0, and nothing is allocated for it in the
 * cache. Own, replica and cache-hit entries are answered as always. The
 * result still counts the entries read; on CQE32 rings res2 is the number
 * of gated entries (the @out array says which on both paths). Demand
 * requests (no flag) are never gated. Errors: -EINVAL @what, flags, reserved,
 * @nr 0 or > DFG_PF_NR_MAX, a node ID no partition holds; -ENODATA no
 * partition loaded; -EHOSTUNREACH a node's owner is unreachable (dead or
 * link down: within the transport's bound, about 4.3 s for dfg_rdma.ko,
 * 5-6 s for dfg_tcp.ko); -EBUSY the cache has no room that is not being
 * filled, or the transport has too many reads queued; -E2BIG an entry larger
 * than the cache; -EFAULT.
 */
#define DFG_IOC_PREFETCH	_IOWR(DFG_IOC_MAGIC, 0x82, struct dfg_prefetch)

/**
 * struct dfg_part_load - DFG_IOC_PART_LOAD
 * @addr:	user address of the image
 * @len:	its bytes
 * @flags:	zero
 * @reserved:	zero
 */
struct dfg_part_load {
	__u64	addr;
	__u64	len;
	__u32	flags;
	__u32	reserved[3];
};

/* Default port of the transports' listeners (their port parameter). */
#define DFG_PF_PORT		18515
#define DFG_PF_PEERS_MAX	16

/**
 * struct dfg_peer_add - DFG_IOC_PEER_ADD
 * @family:	AF_INET or AF_INET6
 * @port:	the peer's port, host order (0: DFG_PF_PORT)
 * @timeout_ms:	connection timeout (0: 5000)
 * @addr:	the peer's address, network order
 * @id:		out: the peer's index (sysfs prefetch/peer<id>)
 * @flags:	zero
 * @node_first:	out: first node of the peer's partition
 * @node_count:	out: its nodes
 * @reserved:	zero
 */
struct dfg_peer_add {
	__u16	family;
	__u16	port;
	__u32	timeout_ms;
	__u8	addr[16];
	__u32	id;
	__u32	flags;
	__u64	node_first;
	__u64	node_count;
	__u64	reserved[2];
};

/* dfg_prefetch.what */
#define DFG_PF_NBRS		0x1U	/* neighbour IDs (__u64 each) */
#define DFG_PF_ATTRS		0x2U	/* feat_bytes of attributes */
#define DFG_PF_ALL		(DFG_PF_NBRS | DFG_PF_ATTRS)

/* dfg_prefetch.flags */
#define DFG_PF_SPECULATIVE	0x1U	/* gated by the link's traffic */
#define DFG_PF_FLAGS_ALL	DFG_PF_SPECULATIVE

/* Most nodes per DFG_IOC_PREFETCH. */
#define DFG_PF_NR_MAX		4096

/**
 * struct dfg_prefetch - DFG_IOC_PREFETCH
 * @ids:	user address of @nr __u64 node IDs
 * @out:	user address of the struct dfg_pf_loc results
 * @nr:		nodes
 * @what:	DFG_PF_* bits
 * @flags:	DFG_PF_SPECULATIVE or zero
 * @reserved:	zero
 */
struct dfg_prefetch {
	__u64	ids;
	__u64	out;
	__u32	nr;
	__u32	what;
	__u32	flags;
	__u32	reserved;
};

/* dfg_pf_loc.where */
#define DFG_PF_IN_PART		1	/* own node: @pos in the partition map */
#define DFG_PF_IN_REPLICA	2	/* replica: @pos in the partition map */
#define DFG_PF_IN_CACHE		3	/* @pos is a cache ring position */
#define DFG_PF_GATED		4	/* speculative, not read: the owner's
					 * link is busy (@pos 0, @len its size)
					 */

/**
 * struct dfg_pf_loc - where one node's neighbours or attributes are
 * @pos:	byte offset in the partition mapping, or a cache ring
 *		position (see struct dfg_pf_cache_hdr)
 * @len:	bytes
 * @where:	DFG_PF_IN_*
 * @hit:	1 if a cache entry was reused, 0 if read now (IN_CACHE) or
 *		gated (GATED)
 * @pad:	zero
 */
struct dfg_pf_loc {
	__u64	pos;
	__u32	len;
	__u8	where;
	__u8	hit;
	__u16	pad;
};

/* Number of command slots in the table (highest nr + 1); holes allowed. */
#define DFG_CMD_NR		0x83

/* Bounds of struct dfg_set_register. */
#define DFG_SET_PORTS_MAX	32	/* inputs, and outputs */
#define DFG_SET_COMPS_MAX	64	/* components per set */
#define DFG_SET_PRIO_MAX	7	/* priorities 0..7 */
#define DFG_SET_QUANTUM_NS_MAX	1000000000ULL	/* 1 s */

/* dfg_sched_attach.flags */
#define DFG_SCHED_O_CLOEXEC	0x1U
#define DFG_SCHED_O_ALL		(DFG_SCHED_O_CLOEXEC)

/* dfg_set_register.flags */
#define DFG_SET_F_ROOT		0x1U	/* makes its own work until EOF */
#define DFG_SET_F_QUANTUM_NS	0x2U	/* @quantum in ns, else elements */
#define DFG_SET_F_ALL		(DFG_SET_F_ROOT | DFG_SET_F_QUANTUM_NS)

/* dfg_sched_next.flags */
#define DFG_NEXT_F_CPU		0x1U	/* @cpu is the worker's CPU */
#define DFG_NEXT_F_NOWAIT	0x2U	/* -ETIME rather than wait */
#define DFG_NEXT_F_ALL		(DFG_NEXT_F_CPU | DFG_NEXT_F_NOWAIT)

/* dfg_sched_yield.reason, dfg_sched_next.yield_reason */
#define DFG_YIELD_QUANTUM	1	/* quantum used up, still runnable */
#define DFG_YIELD_INPUT_EMPTY	2	/* every input is empty */
#define DFG_YIELD_OUTPUT_FULL	3	/* an output ring is full */
#define DFG_YIELD_EOF		4	/* done for good */
#define DFG_YIELD_ERROR		5	/* failed: fails the graph */

/**
 * struct dfg_sched_attach - DFG_IOC_SCHED_ATTACH
 * @flags:	DFG_SCHED_O_*
 * @reserved0:	must be zero
 * @reserved:	must be zero
 */
struct dfg_sched_attach {
	__u32	flags;
	__u32	reserved0;
	__u64	reserved[2];
};

/**
 * struct dfg_set_output - one output of a set: a producer ring
 * @chan:	channel id
 * @slot:	the producer slot (ring) the set writes, as CHAN_OPEN gave it
 */
struct dfg_set_output {
	__u32	chan;
	__u32	slot;
};

/**
 * struct dfg_set_register - DFG_IOC_SET_REGISTER
 * @size:	sizeof(struct dfg_set_register), else -EINVAL
 * @flags:	DFG_SET_F_*
 * @priority:	0..DFG_SET_PRIO_MAX; each step doubles the set's share
 * @nr_comps:	1..DFG_SET_COMPS_MAX components
 * @nr_inputs:	0..DFG_SET_PORTS_MAX input channels (0 only with ROOT)
 * @nr_outputs:	0..DFG_SET_PORTS_MAX output rings
 * @inputs:	user address of __u32[@nr_inputs]: channel ids
 * @outputs:	user address of struct dfg_set_output[@nr_outputs]
 * @comp_names:	user address of char[@nr_comps][DFG_NAME_MAX]: component
 *		names (DFG_NAME_MAX rules), in the order of their indices
 * @cpumask:	CPUs (bit n: CPU n) whose workers may run the set; 0: all.
 *		Bits of CPUs that do not exist are ignored; a mask of only
 *		such CPUs gives -EINVAL
 * @quantum:	> 0: elements per turn, or ns with DFG_SET_F_QUANTUM_NS
 *		(<= DFG_SET_QUANTUM_NS_MAX); handed back by SCHED_NEXT
 * @id:		out: the set's id in the graph; zero on input
 * @reserved0:	must be zero
 * @mmap_offset: out: DFG_MMAP_OFFSET(@id), for mmap() of the set's page on
 *		the scheduler descriptor; zero on input
 * @name:	set name (DFG_NAME_MAX rules)
 * @reserved:	must be zero
 */
struct dfg_set_register {
	__u32	size;
	__u32	flags;
	__u32	priority;
	__u32	nr_comps;
	__u32	nr_inputs;
	__u32	nr_outputs;
	__u64	inputs;
	__u64	outputs;
	__u64	comp_names;
	__u64	cpumask;
	__u64	quantum;
	__u32	id;
	__u32	reserved0;
	__u64	mmap_offset;
	char	name[DFG_NAME_MAX];
	__u64	reserved[4];
};

/**
 * struct dfg_set_id - DFG_IOC_SET_UNREGISTER
 * @id:		set id
 * @reserved0:	must be zero
 * @reserved:	must be zero
 */
struct dfg_set_id {
	__u32	id;
	__u32	reserved0;
	__u64	reserved[2];
};

/**
 * struct dfg_sched_next - DFG_IOC_SCHED_NEXT
 * @flags:	DFG_NEXT_F_*
 * @cpu:	with DFG_NEXT_F_CPU: the worker's CPU (< nr_cpu_ids); else 0
 * @yield_id:	set to give back first, or 0
 * @yield_reason: DFG_YIELD_* for @yield_id; 0 without it
 * @id:		out: the set to run; zero on input
 * @reserved0:	must be zero
 * @quantum:	out: its quantum; zero on input
 * @reserved:	must be zero
 */
struct dfg_sched_next {
	__u32	flags;
	__u32	cpu;
	__u32	yield_id;
	__u32	yield_reason;
	__u32	id;
	__u32	reserved0;
	__u64	quantum;
	__u64	reserved[2];
};

/**
 * struct dfg_sched_yield - DFG_IOC_SCHED_YIELD
 * @id:		the set
 * @reason:	DFG_YIELD_*
 * @reserved:	must be zero
 */
struct dfg_sched_yield {
	__u32	id;
	__u32	reason;
	__u64	reserved[2];
};

/* ------------------------------------------------------------------------
 * Shared memory: a set's page
 * ------------------------------------------------------------------------
 *
 * mmap(sched_fd, DFG_MMAP_OFFSET(id), DFG_SET_PAGE_SIZE), MAP_SHARED, by
 * the client that registered the set. The kernel writes @magic, @id,
 * @nr_comps and @state from its own copy and never reads them back; the
 * worker running the set writes @active and the counters, which the
 * kernel only reads (sampling, sysfs) and never trusts: an @active that
 * is not a component index counts as DFG_SET_COMP_NONE.
 */
#define DFG_SET_MAGIC		0x4446475345543031ULL	/* "DFGSET01" */
#define DFG_SET_PAGE_SIZE	4096
#define DFG_SET_COMP_NONE	0xffffffffU	/* @active: in no component */

/* dfg_set_page.state, sysfs set<id>/state */
#define DFG_SET_S_READY		1	/* runnable, waiting for a worker */
#define DFG_SET_S_RUNNING	2	/* a worker runs it */
#define DFG_SET_S_WAITING	3	/* waits for a channel */
#define DFG_SET_S_DONE		4	/* yielded EOF */
#define DFG_SET_S_FAILED	5	/* yielded ERROR, or its process died */

/**
 * struct dfg_set_comp_stats - one component's counters (userspace)
 * @elems_in:	work elements it received
 * @bytes_in:	their bytes
 * @elems_out:	work elements it emitted
 * @bytes_out:	their bytes
 */
struct dfg_set_comp_stats {
	__u64	elems_in;
	__u64	bytes_in;
	__u64	elems_out;
	__u64	bytes_out;
};

/**
 * struct dfg_set_page - a set's shared page
 * @magic:	DFG_SET_MAGIC (kernel, constant)
 * @id:		set id (kernel, constant)
 * @nr_comps:	components (kernel, constant)
 * @state:	DFG_SET_S_* (kernel)
 * @active:	worker: index of the component being called, or
 *		DFG_SET_COMP_NONE
 * @pad:	zero
 * @comps:	worker: per-component counters, @nr_comps used
 */
struct dfg_set_page {
	__u64	magic;
	__u32	id;
	__u32	nr_comps;
	__u32	state;
	__u32	active;
	__u32	pad[10];
	struct dfg_set_comp_stats comps[DFG_SET_COMPS_MAX];
};

/**
 * struct dfg_info - DFG_IOC_GET_INFO
 * @size:		in: sizeof(struct dfg_info), else -EINVAL
 * @api_version:	out: DFG_API_VERSION of the module
 * @features:		out: DFG_F_* bits the module implements
 * @nr_cmds:		out: number of command slots (DFG_CMD_NR of the module)
 * @uring_inline_max:	out: DFG_URING_INLINE_MAX of the module
 * @max_parked:		out: limit of parked commands per open file
 * @monitor_ms:		out: interval of the task-exit check of parked commands
 * @version:		out: module version string, NUL-terminated
 * @reserved:		must be zero on input; zero on output
 */
struct dfg_info {
	__u32	size;
	__u32	api_version;
	__u64	features;
	__u32	nr_cmds;
	__u32	uring_inline_max;
	__u32	max_parked;
	__u32	monitor_ms;
	char	version[32];
	__u64	reserved[8];
};

/* dfg_nop.flags */
#define DFG_NOP_F_ASYNC		0x1U
#define DFG_NOP_F_PARK		0x2U
#define DFG_NOP_F_ALL		(DFG_NOP_F_ASYNC | DFG_NOP_F_PARK)

/* Longest DFG_NOP_F_ASYNC delay accepted (ms); longer gives -EINVAL. */
#define DFG_NOP_DELAY_MAX_MS	60000

/**
 * struct dfg_nop - DFG_IOC_NOP
 * @value:	in: value to echo
 * @echo:	out: @value; must be zero on input
 * @flags:	in: DFG_NOP_F_*
 * @delay_ms:	in: with DFG_NOP_F_ASYNC, delay before completion; else zero
 * @reserved:	must be zero
 */
struct dfg_nop {
	__u64	value;
	__u64	echo;
	__u32	flags;
	__u32	delay_ms;
	__u64	reserved[2];
};

/* ------------------------------------------------------------------------
 * Shared memory: channels
 * ------------------------------------------------------------------------
 *
 * mmap(endpoint_fd, 0, DFG_CHAN_MAP_SIZE(depth, max_producers)): a header
 * page, then @max_producers rings, each DFG_CHAN_RING_SIZE(depth) bytes.
 * Indices are free-running __u32 counters: ring entry i is desc[i & (depth
 * - 1)], the ring is empty when head == tail and full when tail - head ==
 * depth. The producer writes desc and tail (store-release after the
 * descriptor); the consumer reads desc after tail (load-acquire) and writes
 * head (store-release) when it is done with the entry.
 */
#define DFG_CHAN_MAGIC		0x4446474348414e31ULL	/* "DFGCHAN1" */
#define DFG_CHAN_S_FREE		0	/* state: slot never opened */
#define DFG_CHAN_S_OPEN		1	/* state: endpoint alive */
#define DFG_CHAN_S_CLOSED	2	/* state: endpoint gone */

/**
 * struct dfg_desc - one descriptor: a buffer in the channel's pool
 * @off:	offset of the buffer in the pool
 * @len:	length in bytes; @off + @len <= pool size, else rejected
 * @flags:	free for the application
 * @tag:	free for the application (e.g. a sequence number, a key)
 */
struct dfg_desc {
	__u64	off;
	__u32	len;
	__u32	flags;
	__u64	tag;
};

/**
 * struct dfg_chan_ring - one producer's ring; each group on its own line
 * @tail:	producer: next entry to write
 * @prod_waiting: producer: set while it waits (or is about to) for room
 * @msgs:	producer: descriptors sent (statistics)
 * @bytes:	producer: sum of their @len (statistics)
 * @full_stalls: producer: times it found the ring full
 * @hwm:	producer: highest fill level seen
 * @head:	consumer: next entry to read
 * @cons_waiting: consumer's copy of dfg_chan_hdr.cons_waiting (unused)
 * @empty_stalls: consumer: times it found every ring empty
 * @state:	kernel: DFG_CHAN_S_FREE, DFG_CHAN_S_OPEN or DFG_CHAN_S_CLOSED
 * @pid:	kernel: tgid of the producer that opened the slot
 * @desc:	the entries
 */
struct dfg_chan_ring {
	__u32	tail;
	__u32	prod_waiting;
	__u64	msgs;
	__u64	bytes;
	__u64	full_stalls;
	__u32	hwm;
	__u32	pad0[7];
	__u32	head;
	__u32	cons_waiting;
	__u64	empty_stalls;
	__u32	pad1[12];
	__u32	state;
	__u32	pid;
	__u32	pad2[14];
	struct dfg_desc desc[];
};

/**
 * struct dfg_chan_hdr - page 0 of a channel mapping
 * @magic:	DFG_CHAN_MAGIC (kernel-written, constant)
 * @depth:	entries per ring (constant)
 * @max_producers: rings (constant)
 * @pool:	pool object id (constant)
 * @pool_size:	pool size in bytes: arena size or region length (constant)
 * @ring_offset: offset of ring 0 from the start of the mapping (constant)
 * @ring_size:	DFG_CHAN_RING_SIZE(@depth) (constant)
 * @consumer_state: kernel: DFG_CHAN_S_FREE, DFG_CHAN_S_OPEN or DFG_CHAN_S_CLOSED
 * @cons_waiting: consumer: set while it waits (or is about to) for data
 * @next:	consumer: ring to look at first (round robin)
 */
struct dfg_chan_hdr {
	__u64	magic;
	__u32	depth;
	__u32	max_producers;
	__u32	pool;
	__u32	pad0;
	__u64	pool_size;
	__u64	ring_offset;
	__u64	ring_size;
	__u32	consumer_state;
	__u32	pad1[3];
	__u32	cons_waiting;
	__u32	next;
	__u32	pad2[14];
};

#define DFG_CHAN_PAGE		4096
#define DFG_CHAN_RING_SIZE(depth)					\
	((((__u64)sizeof(struct dfg_chan_ring) +			\
	   (__u64)(depth) * sizeof(struct dfg_desc)) + DFG_CHAN_PAGE - 1) & \
	 ~(__u64)(DFG_CHAN_PAGE - 1))
#define DFG_CHAN_MAP_SIZE(depth, nprod)					\
	(DFG_CHAN_PAGE + (__u64)(nprod) * DFG_CHAN_RING_SIZE(depth))

/* ------------------------------------------------------------------------
 * Shared memory: teams
 * ------------------------------------------------------------------------
 *
 * mmap(member_fd, 0, @map_size): struct dfg_team_hdr at offset 0, written
 * by the kernel only (userspace must not write it), then from
 * DFG_TEAM_CTL_OFFSET on, @ctl_size bytes (zeroed at creation) that belong
 * to userspace; the mapping ends at @map_size, the header and control area
 * rounded up to the page size. Every kernel store to a header word is
 * followed by a wakeup of that word's WAITs (those whose value differs).
 */
#define DFG_TEAM_MAGIC		0x4446475445414d31ULL	/* "DFGTEAM1" */
#define DFG_TEAM_S_ACTIVE	1	/* state: alive */
#define DFG_TEAM_S_BROKEN	2	/* state: a member died */
#define DFG_TEAM_S_DEAD		3	/* state: the graph died */
#define DFG_TEAM_NO_RANK	0xffffffffU	/* dead_rank: nobody */

/**
 * struct dfg_team_hdr - offset 0 of a team mapping (kernel-written)
 * @magic:	DFG_TEAM_MAGIC (constant)
 * @team_size:	number of ranks (constant)
 * @id:		object id of the team in its graph (constant)
 * @ctl_size:	bytes of userspace control area at DFG_TEAM_CTL_OFFSET
 *		(constant)
 * @map_size:	bytes of the mapping (constant)
 * @state:	DFG_TEAM_S_*
 * @joined:	members now (joined and neither left nor gone)
 * @formed:	times @joined reached @team_size (0 until the team was
 *		complete once)
 * @dead_rank:	rank whose death broke the team, else DFG_TEAM_NO_RANK
 * @generation:	membership changes (joins, leaves, deaths) so far
 * @pad0:	zero
 * @ranks:	bit r set while rank r is a member
 * @reserved:	zero
 */
struct dfg_team_hdr {
	__u64	magic;
	__u32	team_size;
	__u32	id;
	__u64	ctl_size;
	__u64	map_size;
	__u32	state;
	__u32	joined;
	__u32	formed;
	__u32	dead_rank;
	__u32	generation;
	__u32	pad0;
	__u64	ranks;
	__u64	reserved[8];
};

/* First byte of the userspace control area; a cache-line multiple. */
#define DFG_TEAM_CTL_OFFSET	128

/* ------------------------------------------------------------------------
 * Generic netlink family "dfg" (version DFG_GENL_VERSION)
 * ------------------------------------------------------------------------
 *
 * DFG_NL_CMD_GET_INFO: request without attributes; the reply carries
 * API_VERSION, FEATURES, VERSION, CLIENTS, PARKED.
 *
 * The family lives in the initial network namespace; PID attributes are
 * thread-group ids in the initial pid namespace.
 *
 * DFG_NL_CMD_EVENT: sent by the module to two multicast groups; carries
 * EVENT (DFG_EV_*) and the attributes listed with it below.
 *   DFG_GENL_MCGRP_EVENTS_FULL: every attribute; only a subscriber with
 *	CAP_NET_ADMIN may join (-EPERM otherwise).
 *   DFG_GENL_MCGRP_EVENTS: anyone may join; the same events without NAME
 *	and PID, unless the module parameter public_event_details is set.
 */
#define DFG_GENL_NAME		"dfg"
#define DFG_GENL_VERSION	1
#define DFG_GENL_MCGRP_EVENTS	"events"
#define DFG_GENL_MCGRP_EVENTS_FULL	"events_full"

enum dfg_nl_cmd {
	DFG_NL_CMD_UNSPEC,
	DFG_NL_CMD_GET_INFO,
	DFG_NL_CMD_EVENT,
	__DFG_NL_CMD_MAX,
};

#define DFG_NL_CMD_MAX		(__DFG_NL_CMD_MAX - 1)

enum dfg_nl_attr {
	DFG_NL_A_UNSPEC,
	DFG_NL_A_API_VERSION,	/* u32 */
	DFG_NL_A_FEATURES,	/* u64 */
	DFG_NL_A_VERSION,	/* string */
	DFG_NL_A_CLIENTS,	/* u32: open /dev/dfg files */
	DFG_NL_A_PARKED,	/* u32: commands parked now */
	DFG_NL_A_EVENT,		/* u32: DFG_EV_* */
	DFG_NL_A_PID,		/* u32: tgid of the process concerned */
	DFG_NL_A_CMD,		/* u32: command value concerned */
	DFG_NL_A_PAD,
	DFG_NL_A_GRAPH,		/* u32: graph id */
	DFG_NL_A_OBJECT,	/* u32: object id in the graph */
	DFG_NL_A_NAME,		/* string: graph name */
	DFG_NL_A_RANK,		/* u32: team rank concerned */
	DFG_NL_A_FILL,		/* u32: entries in a channel's rings */
	DFG_NL_A_CAPACITY,	/* u32: depth * max_producers */
	DFG_NL_A_MARK,		/* u32: the mark crossed */
	DFG_NL_A_CPU,		/* u32: CPU number */
	DFG_NL_A_WAIT_MS,	/* u32: how long the set has waited */
	DFG_NL_A_MEM_AVAIL,	/* u64: MemAvailable, KiB */
	DFG_NL_A_MEM_TOTAL,	/* u64: RAM, KiB */
	DFG_NL_A_COUNT,		/* u64: cumulative count (see the event) */
	DFG_NL_A_RATE,		/* u64: COUNT's change per second over the
				 * last period
				 */
	DFG_NL_A_PERIOD_MS,	/* u32: the summary's period */
	__DFG_NL_A_MAX,
};

#define DFG_NL_A_MAX		(__DFG_NL_A_MAX - 1)

enum dfg_event {
	DFG_EV_UNSPEC,
	DFG_EV_CLIENT_OPEN,	/* a process opened /dev/dfg */
	DFG_EV_CLIENT_CLOSE,	/* the last reference to that file went */
	DFG_EV_CMD_CANCELED,	/* a parked command was canceled */
	DFG_EV_GRAPH_CREATE,	/* GRAPH, NAME, PID */
	DFG_EV_GRAPH_DESTROY,	/* GRAPH, NAME */
	DFG_EV_ARENA_CREATE,	/* GRAPH, OBJECT, PID */
	DFG_EV_ARENA_DESTROY,	/* GRAPH, OBJECT */
	DFG_EV_REGION_EXPORT,	/* GRAPH, OBJECT, PID */
	DFG_EV_REGION_UNEXPORT,	/* GRAPH, OBJECT */
	DFG_EV_CHAN_CREATE,	/* GRAPH, OBJECT, PID */
	DFG_EV_CHAN_DESTROY,	/* GRAPH, OBJECT */
	DFG_EV_PEER_DEATH,	/* GRAPH, OBJECT, PID: an endpoint's process
				 * died (killed or exited) while it was open
				 */
	DFG_EV_TEAM_CREATE,	/* GRAPH, OBJECT, PID: the first join */
	DFG_EV_TEAM_JOIN,	/* GRAPH, OBJECT, PID, RANK */
	DFG_EV_TEAM_LEAVE,	/* GRAPH, OBJECT, PID, RANK: orderly */
	DFG_EV_TEAM_BROKEN,	/* GRAPH, OBJECT, PID, RANK: the dead member */
	DFG_EV_TEAM_DESTROY,	/* GRAPH, OBJECT: last member gone or graph
				 * died
				 */
	DFG_EV_SET_REGISTER,	/* GRAPH, OBJECT, PID */
	DFG_EV_SET_DONE,	/* GRAPH, OBJECT, PID: the set yielded EOF */
	DFG_EV_SET_FAILED,	/* GRAPH, OBJECT, PID: yielded ERROR, its
				 * process died or its worker exited
				 */
	DFG_EV_PF_PEER_UP,	/* OBJECT: the peer id; PID: who added it */
	DFG_EV_PF_PEER_DOWN,	/* OBJECT: the peer id: connection lost */
	DFG_EV_CHAN_FILL_HIGH,	/* GRAPH, OBJECT, FILL, CAPACITY, MARK */
	DFG_EV_CHAN_FILL_LOW,	/* GRAPH, OBJECT, FILL, CAPACITY, MARK */
	DFG_EV_SET_STARVED,	/* GRAPH, OBJECT, PID, WAIT_MS */
	DFG_EV_SET_BACKPRESSURED, /* GRAPH, OBJECT, PID, WAIT_MS */
	DFG_EV_CPU_ONLINE,	/* CPU */
	DFG_EV_CPU_OFFLINE,	/* CPU */
	DFG_EV_MEM_LOW,		/* MEM_AVAIL, MEM_TOTAL */
	DFG_EV_MEM_OK,		/* MEM_AVAIL, MEM_TOTAL */
	DFG_EV_WORKER_DEATH,	/* GRAPH, OBJECT (the set), PID (its
				 * worker's process)
				 */
	DFG_EV_CHAN_SAMPLE,	/* GRAPH, OBJECT, FILL, CAPACITY, COUNT
				 * (messages sent), RATE
				 */
	DFG_EV_SET_SAMPLE,	/* GRAPH, OBJECT, PID, COUNT (CPU ns of its
				 * workers), RATE (CPU ns per second)
				 */
	DFG_EV_GRAPH_SAMPLE,	/* GRAPH, PERIOD_MS, COUNT (samples sent in
				 * this batch)
				 */
	DFG_EV_PLAN_CHANGE,	/* GRAPH, PID, COUNT (the plan's generation):
				 * FEEDBACK_SET DFG_FB_PLAN
				 */
	DFG_EV_PF_LINK_BUSY,	/* OBJECT: the peer id (absent: peer 0), RATE:
				 * its link's bytes/s, COUNT: the threshold;
				 * speculative reads for it stop
				 */
	DFG_EV_PF_LINK_QUIET,	/* OBJECT, RATE, COUNT as LINK_BUSY: back
				 * under 7/8 of the threshold
				 */
	__DFG_EV_MAX,
};

/*
 * Every event's name, for a table indexed by event (dfg_event_name(),
 * dfgctl monitor): give each new DFG_EV_* its line here too, a test fails
 * otherwise.
 */
#define DFG_EVENT_NAMES {						\
	[DFG_EV_CLIENT_OPEN] = "client_open",				\
	[DFG_EV_CLIENT_CLOSE] = "client_close",				\
	[DFG_EV_CMD_CANCELED] = "cmd_canceled",				\
	[DFG_EV_GRAPH_CREATE] = "graph_create",				\
	[DFG_EV_GRAPH_DESTROY] = "graph_destroy",			\
	[DFG_EV_ARENA_CREATE] = "arena_create",				\
	[DFG_EV_ARENA_DESTROY] = "arena_destroy",			\
	[DFG_EV_REGION_EXPORT] = "region_export",			\
	[DFG_EV_REGION_UNEXPORT] = "region_unexport",			\
	[DFG_EV_CHAN_CREATE] = "chan_create",				\
	[DFG_EV_CHAN_DESTROY] = "chan_destroy",				\
	[DFG_EV_PEER_DEATH] = "peer_death",				\
	[DFG_EV_TEAM_CREATE] = "team_create",				\
	[DFG_EV_TEAM_JOIN] = "team_join",				\
	[DFG_EV_TEAM_LEAVE] = "team_leave",				\
	[DFG_EV_TEAM_BROKEN] = "team_broken",				\
	[DFG_EV_TEAM_DESTROY] = "team_destroy",				\
	[DFG_EV_SET_REGISTER] = "set_register",				\
	[DFG_EV_SET_DONE] = "set_done",					\
	[DFG_EV_SET_FAILED] = "set_failed",				\
	[DFG_EV_PF_PEER_UP] = "pf_peer_up",				\
	[DFG_EV_PF_PEER_DOWN] = "pf_peer_down",				\
	[DFG_EV_CHAN_FILL_HIGH] = "chan_fill_high",			\
	[DFG_EV_CHAN_FILL_LOW] = "chan_fill_low",			\
	[DFG_EV_SET_STARVED] = "set_starved",				\
	[DFG_EV_SET_BACKPRESSURED] = "set_backpressured",		\
	[DFG_EV_CPU_ONLINE] = "cpu_online",				\
	[DFG_EV_CPU_OFFLINE] = "cpu_offline",				\
	[DFG_EV_MEM_LOW] = "mem_low",					\
	[DFG_EV_MEM_OK] = "mem_ok",					\
	[DFG_EV_WORKER_DEATH] = "worker_death",				\
	[DFG_EV_CHAN_SAMPLE] = "chan_sample",				\
	[DFG_EV_SET_SAMPLE] = "set_sample",				\
	[DFG_EV_GRAPH_SAMPLE] = "graph_sample",				\
	[DFG_EV_PLAN_CHANGE] = "plan_change",				\
	[DFG_EV_PF_LINK_BUSY] = "pf_link_busy",				\
	[DFG_EV_PF_LINK_QUIET] = "pf_link_quiet",			\
}

/* ------------------------------------------------------------------------
 * sysfs: /sys/kernel/dfg/
 * ------------------------------------------------------------------------
 *
 *   version, api_version, features	module identity (features in hex)
 *   clients, parked			open files, parked commands now
 *   stats/<cmd>			commands of that name executed
 *   stats/errors			commands that returned an error
 *   stats/canceled			parked commands canceled
 *   prefetch/{hits,misses,local,replica,bytes,reads,inflight,evictions,
 *	errors,spec_issued,spec_gated,puts}
 *					the prefetch's counters: cache hits,
 *					entries read from peers, own and
 *					replica entries, bytes read, reads
 *					started, reads in flight now, cache
 *					entries evicted, failed reads, reads
 *					of speculative requests started,
 *					entries of theirs gated, and entries
 *					put into the cache (reads that
 *					completed: the hit rate is hits/puts)
 *   prefetch/traffic			per peer: "<id> <ifindex> <ifname>
 *					<bytes/s> <bytes> <state> <spec_issued>
 *					<spec_gated>": the link its address
 *					routes through (ifindex 0, ifname
 *					"-": no route), the EWMA of its rx+tx
 *					bytes per second, bytes counted since
 *					PEER_ADD, state quiet|busy|gone
 *   prefetch/traffic_threshold		bytes/s (root may write; default
 *					64 MiB/s): speculative reads go to a
 *					peer only while its link is under it;
 *					0: never (every speculative read is
 *					gated), 18446744073709551615: always
 *   prefetch/traffic_interval_ms	the monitor's sampling period
 *					(10..10000, default 100)
 *   prefetch/peers			"<id> <node_first> <node_count>
 *					up|down" per peer
 *   prefetch/partition			"<node_first> <node_count>
 *					<replicas> <bytes>" or empty
 *   prefetch/transport, cache_bytes	"rdma" or empty; the ring's size
 *   feedback/<event>			feedback events raised, one file per
 *					event (chan_fill_high ... plan_change,
 *					listeners or not), and deferred
 *					(crossings held back by fb_gap_ms)
 *   pages				pages held by all arenas now
 *   pinned				user pages pinned by exported regions
 *					now (not in "pages": dfg did not
 *					allocate them); back to 0 once every
 *					region is unexported
 *   graphs/<id>/			one directory per live graph: name, uid,
 *					gid, mode, objects, pages, attached,
 *					plan_gen (FEEDBACK_SET DFG_FB_PLAN's
 *					last generation, empty before one)
 *   graphs/<id>/arena<aid>/		per arena: size (bytes), pages; gone
 *					with the graph
 *   graphs/<id>/region<rid>/		per exported region: size (bytes),
 *					pages, writable (0/1), users (1 for
 *					the export plus REGION_COPYs in
 *					flight); gone at UNEXPORT or with the
 *					graph
 *   graphs/<id>/chan<cid>/		per channel: messages, bytes, depth,
 *					hwm, full_stalls, empty_stalls, parks,
 *					wakeups, producers, consumer
 *   graphs/<id>/team<tid>/		per team: name, size, joined, state
 *					(active, broken, dead), dead_rank
 *					(-1 for none), waits (WAITs that
 *					slept or parked), wakes (WAITs woken
 *					by WAKE), pages; gone with the team
 *   graphs/<id>/set<sid>/		per set: name, pid, state (ready,
 *					running, waiting, done, failed),
 *					flags, priority, cpumask (hex),
 *					quantum, runs, waits (times it
 *					waited for a channel), wakeups (waits
 *					ended by a channel), run_ns (time held
 *					by workers), cpu_ns (CPU time of its
 *					workers, sampled), samples, idle_ns
 *					(CPU time outside any component),
 *					components
 *   graphs/<id>/set<sid>/comp<i>/	per component: name, elements_in,
 *					bytes_in, elements_out, bytes_out,
 *					cpu_ns, samples; gone with the set
 *					(UNREGISTER or the graph's death; a
 *					failed set stays until the latter)
 *
 * An object's directory appears before CREATE/EXPORT returns its id and
 * is gone before the object is; a reader may find a directory vanish
 * between listing and reading (ENOENT).
 */

#endif /* _UAPI_LINUX_DFG_H */
