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
#define DFG_F_ALL		(DFG_F_URING_CMD | DFG_F_ASYNC | DFG_F_NETLINK | \
				 DFG_F_GRAPH)

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
 * @nr_objects:	out: live objects (arenas, ...) in the graph
 * @pages:	out: pages allocated by the graph's objects
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
 * Its pages are charged to the creating user: to RLIMIT_MEMLOCK (unless
 * CAP_IPC_LOCK) and to the memory cgroup; and bounded by dfg.max_arena_mb
 * per arena and dfg.max_total_mb for the whole module. A mapping larger
 * than the object, or writable on a read-only descriptor, fails; a private
 * mapping fails (-EINVAL): arenas are shared or nothing. mmap errors:
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

/* Number of command slots in the table (highest nr + 1); holes allowed. */
#define DFG_CMD_NR		0x21

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
 * Generic netlink family "dfg" (version DFG_GENL_VERSION)
 * ------------------------------------------------------------------------
 *
 * DFG_NL_CMD_GET_INFO: request without attributes; the reply carries
 * API_VERSION, FEATURES, VERSION, CLIENTS, PARKED.
 *
 * The family lives in the initial network namespace; PID attributes are
 * thread-group ids in the initial pid namespace.
 *
 * DFG_NL_CMD_EVENT: sent by the module to the multicast group
 * DFG_GENL_MCGRP_EVENTS; carries EVENT (DFG_EV_*), PID and, where the
 * event has one, CMD (the command value).
 */
#define DFG_GENL_NAME		"dfg"
#define DFG_GENL_VERSION	1
#define DFG_GENL_MCGRP_EVENTS	"events"

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
	__DFG_EV_MAX,
};

/* ------------------------------------------------------------------------
 * sysfs: /sys/kernel/dfg/
 * ------------------------------------------------------------------------
 *
 *   version, api_version, features	module identity (features in hex)
 *   clients, parked			open files, parked commands now
 *   stats/<cmd>			commands of that name executed
 *   stats/errors			commands that returned an error
 *   stats/canceled			parked commands canceled
 *   pages				pages held by all arenas now
 *   graphs/<id>/			one directory per live graph: name, uid,
 *					gid, mode, objects, pages, attached
 */

#endif /* _UAPI_LINUX_DFG_H */
