// SPDX-License-Identifier: GPL-2.0
/*
 * cmd.c - the command table and its two entry points.
 *
 * Objects: dfg_cmds[], the one command table, indexed by _IOC_NR(cmd) and
 * read-only after build: no lock, no references. A struct dfg_cmd_ctx lives
 * on the entry point's stack for one command and holds no references: the
 * file is pinned by the syscall (ioctl) or by the request (io_uring), and
 * the file holds its graph (graph descriptors). A handler's new descriptor
 * (ctx.install) is owned by the ctx until dfg_cmd_install() consumes it.
 *
 * Five kinds of file reach these entry points (enum dfg_fd_kind): /dev/dfg
 * (DFG_CMDF_DEV commands), graph descriptors (DFG_CMDF_GRAPH commands),
 * channel endpoints (DFG_CMDF_EP commands), team members (DFG_CMDF_TEAM
 * commands) and scheduler descriptors (DFG_CMDF_SCHED commands); a
 * command on another kind gives -EBADFD, before its arguments are read.
 * Only dfg's own file_operations point at the entry points, so every file
 * that reaches them is one of these, and its private_data starts with a
 * struct dfg_fd that names its kind: read once, no file_operations check.
 *
 * dfg_ioctl() and dfg_uring_cmd() find the same table entry and call the
 * same handler. They differ only in how the argument struct arrives (ioctl
 * argument; SQE inline area; SQE addr/len) and how results leave (ioctl
 * return value and copy-out; CQE res and res2; CQE res and copy-out).
 *
 * A command that fails has not happened, also when its struct cannot be
 * copied back (-EFAULT). So the copy-out comes before the effect is
 * visible: for DFG_CMDF_NOOUT commands, whose handlers write nothing in
 * the struct, the dispatcher copies it back before the handler runs; a
 * handler that makes an object calls dfg_cmd_copy_out() after reserving
 * its id and before publishing it, and undoes what it took when that
 * fails; a new descriptor is installed only after the copy-out. A parked
 * command's result is copied back by its completion's task work, which
 * calls the waiter's ->undo when it cannot (wait.c). Only what nobody
 * sees is left after such a failure: statistics and tracepoints.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/nospec.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "dfg.h"
#include "trace.h"

/* dfg_cmd_def.flags */
#define DFG_CMDF_SLEEP	BIT(0)	/* may block on the io_uring path */
#define DFG_CMDF_ADMIN	BIT(1)	/* needs CAP_SYS_ADMIN */
#define DFG_CMDF_INLINE	BIT(2)	/* args fit in dfg_uring_cmd.args */
#define DFG_CMDF_WRITE	BIT(3)	/* needs a writable graph descriptor */
/* The handler writes nothing in the struct: copied back before it runs. */
#define DFG_CMDF_NOOUT	BIT(4)
/* The one kind of descriptor a command is sent on: a bit per dfg_fd_kind. */
#define DFG_CMDF_KIND(k)	BIT(5 + (k))
#define DFG_CMDF_DEV	DFG_CMDF_KIND(DFG_FD_DEV)
#define DFG_CMDF_GRAPH	DFG_CMDF_KIND(DFG_FD_GRAPH)
#define DFG_CMDF_EP	DFG_CMDF_KIND(DFG_FD_EP)
#define DFG_CMDF_TEAM	DFG_CMDF_KIND(DFG_FD_TEAM)
#define DFG_CMDF_SCHED	DFG_CMDF_KIND(DFG_FD_SCHED)
#define DFG_CMDF_KINDS	(DFG_CMDF_KIND(DFG_FD_NR) - DFG_CMDF_KIND(0))

/**
 * struct dfg_cmd_def - one slot of the command table
 * @name:	lower-case name: sysfs stats file, tracepoints
 * @fn:		handler; NULL marks an unused slot (-EOPNOTSUPP)
 * @cmd:	the command value; must match the caller's exactly
 * @size:	size of the argument struct, == _IOC_SIZE(@cmd)
 * @flags:	DFG_CMDF_*
 */
struct dfg_cmd_def {
	const char	*name;
	dfg_cmd_fn	fn;
	u32		cmd;
	u16		size;
	u16		flags;
};

/*
 * One table entry for DFG_IOC_<_id>, checked at build time: the value is
 * ours and encodes the struct's size, the struct fits the dispatcher's
 * buffer, the name fits DFG_CMD_NAME_MAX. Inline capability follows from
 * the size.
 */
#define DFG_CMD(_id, _type, _name, _fn, _flags)				\
	[_IOC_NR(DFG_IOC_##_id)] = {					\
		.name	= _name,					\
		.fn	= _fn,						\
		.cmd	= DFG_IOC_##_id,				\
		.size	= sizeof(_type) +				\
			  BUILD_BUG_ON_ZERO(sizeof(_type) !=		\
					    _IOC_SIZE(DFG_IOC_##_id)) +	\
			  BUILD_BUG_ON_ZERO(_IOC_TYPE(DFG_IOC_##_id) !=	\
					    DFG_IOC_MAGIC) +		\
			  BUILD_BUG_ON_ZERO(sizeof(_type) > DFG_ARGS_MAX) + \
			  BUILD_BUG_ON_ZERO(sizeof(_name) > DFG_CMD_NAME_MAX), \
		.flags	= (_flags) |					\
			  (sizeof(_type) <= DFG_URING_INLINE_MAX ?	\
			   DFG_CMDF_INLINE : 0),			\
	}

/* Sized by DFG_CMD_NR: slots without an entry are holes (-EOPNOTSUPP). */
static const struct dfg_cmd_def dfg_cmds[DFG_CMD_NR] = {
	DFG_CMD(GET_INFO, struct dfg_info, "get_info", dfg_core_get_info,
		DFG_CMDF_DEV),
	DFG_CMD(NOP, struct dfg_nop, "nop", dfg_core_nop, DFG_CMDF_DEV),
	DFG_CMD(GRAPH_CREATE, struct dfg_graph_open, "graph_create",
		dfg_graph_create,
		DFG_CMDF_DEV | DFG_CMDF_SLEEP | DFG_CMDF_NOOUT),
	DFG_CMD(GRAPH_ATTACH, struct dfg_graph_open, "graph_attach",
		dfg_graph_attach,
		DFG_CMDF_DEV | DFG_CMDF_SLEEP | DFG_CMDF_NOOUT),
	DFG_CMD(GRAPH_INFO, struct dfg_graph_info, "graph_info",
		dfg_graph_info, DFG_CMDF_GRAPH),
	DFG_CMD(ARENA_CREATE, struct dfg_arena_create, "arena_create",
		dfg_arena_create,
		DFG_CMDF_GRAPH | DFG_CMDF_WRITE | DFG_CMDF_SLEEP),
	DFG_CMD(REGION_EXPORT, struct dfg_region, "region_export",
		dfg_region_export,
		DFG_CMDF_GRAPH | DFG_CMDF_WRITE | DFG_CMDF_SLEEP),
	DFG_CMD(REGION_UNEXPORT, struct dfg_region, "region_unexport",
		dfg_region_unexport,
		DFG_CMDF_GRAPH | DFG_CMDF_WRITE | DFG_CMDF_SLEEP |
		DFG_CMDF_NOOUT),
	/* Read-only descriptors may copy out; the handler checks TO_REGION. */
	DFG_CMD(REGION_COPY, struct dfg_region_copy, "region_copy",
		dfg_region_copy,
		DFG_CMDF_GRAPH | DFG_CMDF_SLEEP | DFG_CMDF_NOOUT),
	DFG_CMD(CHAN_CREATE, struct dfg_chan_create, "chan_create",
		dfg_chan_create,
		DFG_CMDF_GRAPH | DFG_CMDF_WRITE | DFG_CMDF_SLEEP),
	DFG_CMD(CHAN_OPEN, struct dfg_chan_open, "chan_open", dfg_chan_open,
		DFG_CMDF_GRAPH | DFG_CMDF_WRITE | DFG_CMDF_SLEEP),
	DFG_CMD(CHAN_WAIT, struct dfg_chan_wait, "chan_wait", dfg_chan_wait,
		DFG_CMDF_EP),
	DFG_CMD(CHAN_WAKE, struct dfg_chan_wait, "chan_wake", dfg_chan_wake,
		DFG_CMDF_EP | DFG_CMDF_NOOUT),
	DFG_CMD(TEAM_JOIN, struct dfg_team_join, "team_join", dfg_team_join,
		DFG_CMDF_GRAPH | DFG_CMDF_WRITE | DFG_CMDF_SLEEP),
	DFG_CMD(TEAM_WAIT, struct dfg_team_wait, "team_wait", dfg_team_wait,
		DFG_CMDF_TEAM | DFG_CMDF_NOOUT),
	DFG_CMD(TEAM_WAKE, struct dfg_team_wake, "team_wake", dfg_team_wake,
		DFG_CMDF_TEAM | DFG_CMDF_NOOUT),
	DFG_CMD(TEAM_LEAVE, struct dfg_team_leave, "team_leave",
		dfg_team_leave,
		DFG_CMDF_TEAM | DFG_CMDF_SLEEP | DFG_CMDF_NOOUT),
	DFG_CMD(SCHED_ATTACH, struct dfg_sched_attach, "sched_attach",
		dfg_sched_attach,
		DFG_CMDF_GRAPH | DFG_CMDF_WRITE | DFG_CMDF_SLEEP |
		DFG_CMDF_NOOUT),
	DFG_CMD(SET_REGISTER, struct dfg_set_register, "set_register",
		dfg_set_register, DFG_CMDF_SCHED | DFG_CMDF_SLEEP),
	DFG_CMD(SET_UNREGISTER, struct dfg_set_id, "set_unregister",
		dfg_set_unregister,
		DFG_CMDF_SCHED | DFG_CMDF_SLEEP | DFG_CMDF_NOOUT),
	/* Sleep only to end or fail a set: they return -EAGAIN then. */
	DFG_CMD(SCHED_NEXT, struct dfg_sched_next, "sched_next",
		dfg_sched_next, DFG_CMDF_SCHED),
	DFG_CMD(SCHED_YIELD, struct dfg_sched_yield, "sched_yield",
		dfg_sched_yield, DFG_CMDF_SCHED | DFG_CMDF_NOOUT),
	DFG_CMD(FEEDBACK_SET, struct dfg_feedback_set, "feedback_set",
		dfg_feedback_set,
		DFG_CMDF_GRAPH | DFG_CMDF_WRITE | DFG_CMDF_SLEEP |
		DFG_CMDF_NOOUT),
	DFG_CMD(PART_LOAD, struct dfg_part_load, "part_load",
		dfg_pf_part_load,
		DFG_CMDF_DEV | DFG_CMDF_ADMIN | DFG_CMDF_SLEEP | DFG_CMDF_NOOUT),
	DFG_CMD(PEER_ADD, struct dfg_peer_add, "peer_add", dfg_pf_peer_add,
		DFG_CMDF_DEV | DFG_CMDF_ADMIN | DFG_CMDF_SLEEP),
	/* Writes its results to @out before it waits, not to the struct. */
	DFG_CMD(PREFETCH, struct dfg_prefetch, "prefetch", dfg_pf_prefetch,
		DFG_CMDF_DEV | DFG_CMDF_NOOUT),
};

static_assert(sizeof(struct dfg_uring_cmd) == 80);
static_assert(sizeof(struct dfg_nop) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_info) > DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_arena_create) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_region) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_region_copy) <= DFG_URING_INLINE_MAX);
/* The table spans the header's highest command, implemented or not. */
static_assert(_IOC_NR(DFG_IOC_PREFETCH) + 1 == DFG_CMD_NR);
static_assert(sizeof(struct dfg_part_load) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_peer_add) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_prefetch) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_feedback_set) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_chan_create) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_chan_open) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_chan_wait) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_sched_attach) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_set_register) > DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_set_id) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_sched_next) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_sched_yield) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_team_join) > DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_team_wait) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_team_wake) <= DFG_URING_INLINE_MAX);
static_assert(sizeof(struct dfg_team_leave) <= DFG_URING_INLINE_MAX);

/*
 * Check every slot of the command table at load time: build-time checks
 * cover sizes, this covers misplaced entries, half-filled slots and file
 * kinds, like io_uring_optable_init(). A hole is an all-zero slot, also at
 * the end: commands the header defines but this module does not implement
 * (channels, here) are holes and give -EOPNOTSUPP; the static_assert above
 * keeps DFG_CMD_NR at the header's highest nr + 1. Returns 0, or -EINVAL
 * for a broken table.
 */
int dfg_cmd_init(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dfg_cmds); i++) {
		const struct dfg_cmd_def *d = &dfg_cmds[i];
		u16 kind = d->flags & DFG_CMDF_KINDS;

		if (!d->fn && !d->name && !d->cmd && !d->size && !d->flags)
			continue;
		if (!d->fn || !d->name || _IOC_NR(d->cmd) != i ||
		    hweight16(kind) != 1 ||
		    ((d->flags & DFG_CMDF_WRITE) && kind != DFG_CMDF_GRAPH)) {
			pr_err("command table slot %u is broken\n", i);
			return -EINVAL;
		}
	}
	return 0;
}

/**
 * dfg_cmd_name() - name of a command slot
 * @nr: slot number, < DFG_CMD_NR
 *
 * Return: the lower-case name, as used in sysfs and tracepoints; NULL for
 * a hole in the table.
 */
const char *dfg_cmd_name(unsigned int nr)
{
	return dfg_cmds[array_index_nospec(nr, DFG_CMD_NR)].name;
}

/*
 * Unknown type or number: -EOPNOTSUPP. Known number with another size or
 * direction: -EINVAL. Known command on the wrong kind of file: -EBADFD.
 * The number is clamped against speculation before it indexes the table.
 */
static const struct dfg_cmd_def *dfg_cmd_lookup(const struct dfg_cmd_ctx *c)
{
	const struct dfg_cmd_def *d;
	u32 cmd = c->cmd;
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != DFG_IOC_MAGIC || nr >= DFG_CMD_NR)
		return ERR_PTR(-EOPNOTSUPP);
	nr = array_index_nospec(nr, DFG_CMD_NR);
	d = &dfg_cmds[nr];
	if (!d->fn)
		return ERR_PTR(-EOPNOTSUPP);
	if (d->cmd != cmd)
		return ERR_PTR(-EINVAL);
	if (!(d->flags & DFG_CMDF_KIND(c->kind)))
		return ERR_PTR(-EBADFD);
	return d;
}

/*
 * The descriptor a command arrived on, one of ours (see the top): its kind
 * and object, from the header its private data starts with.
 */
static void dfg_cmd_ctx_file(struct dfg_cmd_ctx *c, struct file *file)
{
	c->obj = file->private_data;
	c->kind = c->obj->kind;
	c->writable = !!(file->f_mode & FMODE_WRITE);
}

/*
 * Last step of both paths: a descriptor made by the handler goes into the
 * caller's table only if the command succeeded as a whole; otherwise the
 * reserved number and the file (with the graph reference it holds) go.
 */
static void dfg_cmd_install(struct dfg_cmd_ctx *c, int ret)
{
	if (!c->install)
		return;
	if (ret >= 0) {
		fd_install(c->fd, c->install);
	} else {
		put_unused_fd(c->fd);
		fput(c->install);
	}
	c->install = NULL;
}

/**
 * dfg_cmd_copy_out() - copy the argument struct back to the caller now
 * @c: the command
 *
 * For a handler whose effect must not happen unless the caller gets the
 * struct back: it fills in its results, calls this before making the
 * effect visible, and undoes what it took on failure. The dispatcher does
 * not copy the struct again. Nothing to do for inline io_uring arguments
 * (results travel in the CQE). Process context, no spinlock held: the
 * copy may fault.
 *
 * Return: 0, or -EFAULT.
 */
int dfg_cmd_copy_out(struct dfg_cmd_ctx *c)
{
	c->copied = true;
	if (!c->uaddr || !(_IOC_DIR(c->cmd) & _IOC_READ))
		return 0;
	if (copy_to_user(c->uaddr, c->args, c->size))
		return -EFAULT;
	return 0;
}

/*
 * Last copy-out of a command that completes now, unless its handler (or
 * the dispatcher, before a DFG_CMDF_NOOUT handler) did it.
 */
static int dfg_cmd_finish(struct dfg_cmd_ctx *c, int ret)
{
	if (ret >= 0 && !c->copied && dfg_cmd_copy_out(c))
		ret = -EFAULT;
	dfg_cmd_install(c, ret);
	return ret;
}

/* Both paths: permission, handler, counters, tracepoints. */
static int dfg_cmd_run(const struct dfg_cmd_def *d, struct dfg_cmd_ctx *c)
{
	int ret;

	trace_dfg_cmd_enter(d->cmd, d->name, !!c->ucmd);
	if ((d->flags & DFG_CMDF_ADMIN) && !capable(CAP_SYS_ADMIN))
		ret = -EPERM;
	else if ((d->flags & DFG_CMDF_WRITE) && !c->writable)
		ret = -EACCES;
	else if ((d->flags & DFG_CMDF_NOOUT) && dfg_cmd_copy_out(c))
		ret = -EFAULT;
	else
		ret = d->fn(c);
	trace_dfg_cmd_exit(d->cmd, ret);

	/* A nonblocking -EAGAIN is retried by io-wq: not an execution. */
	if (ret == -EAGAIN && (c->issue_flags & IO_URING_F_NONBLOCK))
		return ret;
	dfg_stat_cmd(_IOC_NR(d->cmd));
	WARN_ON_ONCE(ret == -EIOCBQUEUED && !c->waiter);
	WARN_ON_ONCE(ret != -EIOCBQUEUED && c->waiter);
	WARN_ON_ONCE(c->install && (ret < 0 || c->waiter));
	return ret;
}

/**
 * dfg_ioctl() - ioctl entry point
 * @file: one of dfg's descriptors (enum dfg_fd_kind)
 * @cmd: DFG_IOC_* value
 * @arg: user pointer to the command's argument struct
 *
 * The struct is copied in, the handler runs, and the struct is copied back
 * out when the handler succeeded (before its effect: see the top).
 *
 * Return: the handler's result, or a negative errno.
 */
long dfg_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	u8 buf[DFG_ARGS_MAX] __aligned(8);
	const struct dfg_cmd_def *d;
	struct dfg_cmd_ctx c = {
		.cmd	= cmd,
		.args	= buf,
		.uaddr	= (void __user *)arg,
	};
	int ret;

	dfg_cmd_ctx_file(&c, file);
	d = dfg_cmd_lookup(&c);
	if (IS_ERR(d)) {
		ret = PTR_ERR(d);
		goto out;
	}
	c.size = d->size;

	if (_IOC_DIR(cmd) & _IOC_WRITE) {
		if (copy_from_user(buf, c.uaddr, c.size)) {
			ret = -EFAULT;
			goto out;
		}
	} else {
		memset(buf, 0, c.size);
	}

	ret = dfg_cmd_finish(&c, dfg_cmd_run(d, &c));
out:
	if (ret < 0)
		dfg_stat_error();
	return ret;
}

/*
 * Copy the SQE's command area once, field by field, into @u: it is memory
 * the submitter can still write. Everything after this reads only @u.
 */
static void dfg_uring_cmd_read(const struct dfg_uring_cmd *sqe_cmd,
			       struct dfg_uring_cmd *u)
{
	u->flags = READ_ONCE(sqe_cmd->flags);
	u->len = READ_ONCE(sqe_cmd->len);
	u->addr = READ_ONCE(sqe_cmd->addr);
	memcpy(u->args, sqe_cmd->args, sizeof(u->args));
}

/* Bring the argument struct into c->args, inline or from c->uaddr. */
static int dfg_uring_cmd_args(const struct dfg_cmd_def *d,
			      const struct dfg_uring_cmd *u,
			      struct dfg_cmd_ctx *c)
{
	if (u->flags & ~DFG_URING_F_ALL)
		return -EINVAL;

	if (u->flags & DFG_URING_F_INDIRECT) {
		if (u->len != c->size)
			return -EINVAL;
		c->uaddr = u64_to_user_ptr(u->addr);
		if (!(_IOC_DIR(c->cmd) & _IOC_WRITE)) {
			memset(c->args, 0, c->size);
			return 0;
		}
		if (copy_from_user(c->args, c->uaddr, c->size))
			return -EFAULT;
		return 0;
	}

	if (u->len || u->addr || !(d->flags & DFG_CMDF_INLINE))
		return -EINVAL;
	if (memchr_inv(u->args + c->size, 0, sizeof(u->args) - c->size))
		return -EINVAL;
	memcpy(c->args, u->args, c->size);
	return 0;
}

/**
 * dfg_uring_cmd() - IORING_OP_URING_CMD entry point
 * @ucmd: the command; ucmd->cmd_op is the DFG_IOC_* value
 * @issue_flags: IO_URING_F_* of this issue
 *
 * Commands that finish at once with 0 and no res2 are completed by
 * io_uring from the return value (batched); other commands that finish at
 * once are completed here through io_uring_cmd_done(), the only way to
 * post res2. Commands the handler parked are completed later by wait.c.
 *
 * Return: 0 for a command that succeeded with res 0 and res2 0,
 * -EIOCBQUEUED once any other command is completed or parked, -EAGAIN to
 * have io-wq retry a sleeping command, or a negative errno (posted as the
 * CQE's res by io_uring) for commands rejected before their handler ran.
 */
int dfg_uring_cmd(struct io_uring_cmd *ucmd, unsigned int issue_flags)
{
	u8 buf[DFG_ARGS_MAX] __aligned(8);
	const struct dfg_cmd_def *d;
	struct dfg_uring_cmd u;
	struct dfg_cmd_ctx c = {
		.ucmd		= ucmd,
		.issue_flags	= issue_flags,
		.cmd		= ucmd->cmd_op,
		.args		= buf,
	};
	int ret;

	if (!(issue_flags & IO_URING_F_SQE128)) {
		ret = -EINVAL;
		goto fail;
	}
	dfg_cmd_ctx_file(&c, ucmd->file);
	d = dfg_cmd_lookup(&c);
	if (IS_ERR(d)) {
		ret = PTR_ERR(d);
		goto fail;
	}
	if ((d->flags & DFG_CMDF_SLEEP) && (issue_flags & IO_URING_F_NONBLOCK))
		return -EAGAIN;
	c.size = d->size;

	dfg_uring_cmd_read(dfg_uring_cmd_area(ucmd), &u);
	ret = dfg_uring_cmd_args(d, &u, &c);
	if (ret)
		goto fail;

	ret = dfg_cmd_run(d, &c);
	if (ret == -EIOCBQUEUED) {
		dfg_waiter_issued(&c);
		return ret;
	}
	if (ret == -EAGAIN && (issue_flags & IO_URING_F_NONBLOCK))
		return ret;

	ret = dfg_cmd_finish(&c, ret);
	if (ret < 0)
		dfg_stat_error();
	/*
	 * io_uring_cmd_done() posts its CQE at once, under the ring's
	 * completion lock. A plain success returned from here instead joins
	 * the submitter's batch of deferred completions (io_issue_sqe() on
	 * IOU_OK), posted together at the end of the submit. Only 0 with no
	 * res2 can: other values are posted as failures (which cut a link),
	 * and res2 has no other way out.
	 */
	if (!ret && !c.res2)
		return 0;
	dfg_uring_cmd_done(ucmd, ret, c.res2, issue_flags);
	return -EIOCBQUEUED;

fail:
	dfg_stat_error();
	return ret;
}
