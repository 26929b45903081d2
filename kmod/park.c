// SPDX-License-Identifier: GPL-2.0
/*
 * park.c - parked io_uring commands and their one cancel path.
 *
 * A handler that cannot finish at submission parks its io_uring command
 * and returns -EIOCBQUEUED; the module then owns the command and must call
 * io_uring_cmd_done() on it exactly once. Every subsystem parks through
 * this file, so there is one completion path and one cancel path.
 *
 * Objects
 *   struct dfg_park	embedded in the subsystem's object (e.g. core.c's
 *			dfg_nop_wait); the io_uring_cmd pdu points back at it.
 *   dfg_monitor_work	delayed work on dfg_wq; queued while anything is
 *			parked, every dfg.monitor_ms. 6.1 has no uring_cmd
 *			cancel hook, and a task that exits waits in
 *			io_uring_files_cancel() or exec()'s
 *			io_uring_task_cancel() for its requests, and a closed
 *			ring's io_ring_exit_work() waits for them too. So the
 *			monitor completes with -ECANCELED every parked command
 *			whose task is leaving or whose ring is dying, like
 *			ublk_daemon_monitor_work().
 *
 * State and lock: dfg_park.state, under dfg_file.lock (irq-safe spinlock:
 * events may come from interrupts).
 *   IDLE	set up by the handler; nobody else sees it.
 *   PARKED	on dfg_file.parked; the module owns the command. Whoever moves
 *		it to CLAIMED (dfg_park_complete(), dfg_park_cancel(), the
 *		monitor) takes it off the list in the same critical section and
 *		is the only one to complete it. Every other claim fails.
 *   CLAIMED	final; the command is completed once by its claimer:
 *		events through task work in the submitter's context (which can
 *		copy results to its memory), cancels directly with
 *		IO_URING_F_UNLOCKED, as ublk_cancel_queue() does.
 *
 * References (dfg_park.ref): two from dfg_park_add(). The park's is dropped
 * just before io_uring_cmd_done(); the issuer's by the dispatcher once the
 * handler has returned (dfg_park_issued()), because an event or a cancel may
 * complete the command while an io-wq worker is still inside the handler.
 * The last one puts the task reference and calls ops->release(), in process
 * context. The command itself pins struct file, so dfg_park.df stays valid
 * until completion.
 */
#include <linux/build_bug.h>
#include <linux/jiffies.h>
#include <linux/sched/task.h>
#include <linux/uaccess.h>

#include "dfg.h"
#include "trace.h"

struct workqueue_struct *dfg_wq;
atomic_t dfg_nr_parked = ATOMIC_INIT(0);

/* What the io_uring_cmd pdu holds while the command is parked. */
struct dfg_pdu {
	struct dfg_park *park;
};

static struct dfg_pdu *dfg_pdu(struct io_uring_cmd *ucmd)
{
	BUILD_BUG_ON(sizeof(struct dfg_pdu) > sizeof(ucmd->pdu));
	return (struct dfg_pdu *)ucmd->pdu;
}

static void dfg_park_monitor(struct work_struct *work);
static DECLARE_DELAYED_WORK(dfg_monitor_work, dfg_park_monitor);

static void dfg_monitor_kick(void)
{
	/* No-op while already queued; the monitor requeues itself. */
	queue_delayed_work(dfg_wq, &dfg_monitor_work,
			   msecs_to_jiffies(READ_ONCE(dfg_monitor_ms)));
}

/* PARKED -> CLAIMED; caller holds p->df->lock. */
static bool __dfg_park_claim(struct dfg_park *p)
{
	lockdep_assert_held(&p->df->lock);

	if (p->state != DFG_PARK_PARKED)
		return false;
	list_del_init(&p->node);
	p->state = DFG_PARK_CLAIMED;
	p->df->nr_parked--;
	atomic_dec(&dfg_nr_parked);
	return true;
}

static bool dfg_park_claim(struct dfg_park *p)
{
	unsigned long flags;
	bool claimed;

	spin_lock_irqsave(&p->df->lock, flags);
	claimed = __dfg_park_claim(p);
	spin_unlock_irqrestore(&p->df->lock, flags);
	return claimed;
}

static void dfg_park_put(struct dfg_park *p)
{
	if (!refcount_dec_and_test(&p->ref))
		return;
	put_task_struct(p->task);
	p->ops->release(p);
}

/**
 * dfg_park_add() - park an io_uring command
 * @c: the command's context; c->ucmd must be set (io_uring path)
 * @p: the dfg_park embedded in the caller's object
 * @ops: the caller's callbacks
 * @args: the caller's copy of the argument struct, written back to the
 *	user's struct on success when the command was indirect
 *
 * The last fallible step of a handler: once it returns 0 the command may be
 * completed or canceled at any moment, and the handler must return
 * -EIOCBQUEUED. @p stays valid until the handler has returned; after that
 * only ops->release() ends its life. On error nothing was kept: the caller
 * frees its object and returns the error.
 *
 * Context: process context (the ->uring_cmd issue path).
 * Return: 0, -EBUSY if the file has dfg.max_parked commands parked, or
 * -EINVAL on the ioctl path.
 */
int dfg_park_add(struct dfg_cmd_ctx *c, struct dfg_park *p,
		 const struct dfg_park_ops *ops, void *args)
{
	struct dfg_file *df = c->df;
	unsigned long flags;

	if (WARN_ON_ONCE(!c->ucmd || c->park))
		return -EINVAL;

	INIT_LIST_HEAD(&p->node);
	p->df = df;
	p->cmd = c->ucmd;
	p->ops = ops;
	p->args = args;
	p->uaddr = c->uaddr;
	p->size = c->size;
	p->cmd_op = c->cmd;
	p->state = DFG_PARK_IDLE;
	refcount_set(&p->ref, 2);

	spin_lock_irqsave(&df->lock, flags);
	if (df->nr_parked >= READ_ONCE(dfg_max_parked)) {
		spin_unlock_irqrestore(&df->lock, flags);
		return -EBUSY;
	}
	/* Pinned until the last dfg_park_put(); the monitor reads its flags. */
	p->task = get_task_struct(dfg_uring_cmd_task(c->ucmd));
	dfg_pdu(c->ucmd)->park = p;
	list_add_tail(&p->node, &df->parked);
	df->nr_parked++;
	atomic_inc(&dfg_nr_parked);
	p->state = DFG_PARK_PARKED;
	spin_unlock_irqrestore(&df->lock, flags);

	c->park = p;
	dfg_monitor_kick();
	return 0;
}

/**
 * dfg_park_issued() - the handler that parked c->park has returned
 * @c: the command's context
 *
 * Called by the dispatcher only. Drops the issuer's reference.
 */
void dfg_park_issued(struct dfg_cmd_ctx *c)
{
	if (c->park)
		dfg_park_put(c->park);
}

/*
 * Task work of an event completion, in the context of the task that owns
 * the request. Copies the result struct back for indirect commands: only
 * here is current's memory the submitter's. io_uring runs task work in a
 * kworker when the task can no longer take it (fallback): no user memory
 * there, the command ends with -ECANCELED.
 */
static void dfg_park_tw(struct io_uring_cmd *ucmd, unsigned int issue_flags)
{
	struct dfg_park *p = dfg_pdu(ucmd)->park;
	int res = p->res;
	u64 res2 = p->res2;

	if (res >= 0 && p->uaddr && (_IOC_DIR(p->cmd_op) & _IOC_READ)) {
		if (current != p->task)
			res = -ECANCELED;
		else if (copy_to_user(p->uaddr, p->args, p->size))
			res = -EFAULT;
	}
	trace_dfg_cmd_complete(p->cmd_op, res);
	if (res < 0)
		dfg_stat_error();

	dfg_park_put(p);
	dfg_uring_cmd_done(ucmd, res, res2, issue_flags);
}

DFG_URING_TW_CB(dfg_park_tw_cb, dfg_park_tw)

/**
 * dfg_park_complete() - complete a parked command by its event
 * @p: the parked command
 * @res: result for cqe->res (>= 0, or a negative errno)
 * @res2: second result, cqe->big_cqe[0] on CQE32 rings
 *
 * Claims @p and completes it in the submitter's context through task work;
 * on success (@res >= 0) an indirect command's struct is copied back out.
 * Loses quietly to an earlier claim (another event, a cancel): the caller
 * then does nothing more with the command.
 *
 * Context: any; takes dfg_file.lock with interrupts disabled.
 * Return: true if this call completes the command.
 */
bool dfg_park_complete(struct dfg_park *p, int res, u64 res2)
{
	if (!dfg_park_claim(p))
		return false;
	p->res = res;
	p->res2 = res2;
	io_uring_cmd_complete_in_task(p->cmd, dfg_park_tw_cb);
	return true;
}

/* Complete a claimed command with an error, at once, from process context. */
static void dfg_park_finish_cancel(struct dfg_park *p, int res)
{
	struct io_uring_cmd *ucmd = p->cmd;
	u32 cmd_op = p->cmd_op;
	pid_t pid = task_tgid_nr(p->task);

	trace_dfg_cmd_cancel(cmd_op, pid, res);
	dfg_stat_canceled();
	dfg_stat_error();
	dfg_nl_event(DFG_EV_CMD_CANCELED, pid, cmd_op);

	dfg_park_put(p);
	dfg_uring_cmd_done(ucmd, res, 0, IO_URING_F_UNLOCKED);
}

/**
 * dfg_park_cancel() - cancel a parked command
 * @p: the parked command
 * @res: the error to post, normally -ECANCELED
 *
 * For subsystems whose object dies with commands parked on it. Claims @p
 * and completes it at once with @res (no copy-out), counts it in
 * stats/canceled and sends DFG_EV_CMD_CANCELED. Loses quietly to an earlier
 * claim.
 *
 * Context: process context; may sleep.
 * Return: true if this call canceled the command.
 */
bool dfg_park_cancel(struct dfg_park *p, int res)
{
	might_sleep();
	if (!dfg_park_claim(p))
		return false;
	dfg_park_finish_cancel(p, res);
	return true;
}

static void dfg_park_monitor(struct work_struct *work)
{
	struct dfg_park *p, *tmp;
	struct dfg_file *df;
	LIST_HEAD(leaving);

	/* Claim under the locks, complete after: done takes io_uring locks. */
	mutex_lock(&dfg_files_lock);
	list_for_each_entry(df, &dfg_files, node) {
		spin_lock_irq(&df->lock);
		list_for_each_entry_safe(p, tmp, &df->parked, node) {
			if (!dfg_task_leaving(p->task) &&
			    !dfg_uring_cmd_ring_dying(p->cmd))
				continue;
			__dfg_park_claim(p);
			list_add_tail(&p->node, &leaving);
		}
		spin_unlock_irq(&df->lock);
	}
	mutex_unlock(&dfg_files_lock);

	list_for_each_entry_safe(p, tmp, &leaving, node) {
		list_del(&p->node);
		dfg_park_finish_cancel(p, -ECANCELED);
	}

	if (atomic_read(&dfg_nr_parked))
		dfg_monitor_kick();
}

int dfg_park_init(void)
{
	/*
	 * Our own queue: the monitor and NOP timers run on it, and
	 * destroy_workqueue() at exit waits for every one of them.
	 */
	dfg_wq = alloc_workqueue("dfg", 0, 0);
	if (!dfg_wq)
		return -ENOMEM;
	return 0;
}

/*
 * Module exit: no file is open, so nothing is parked; the monitor may still
 * be queued from the last parked command, and release callbacks may still
 * be returning from their work items.
 */
void dfg_park_exit(void)
{
	cancel_delayed_work_sync(&dfg_monitor_work);
	destroy_workqueue(dfg_wq);
}
