// SPDX-License-Identifier: GPL-2.0
/*
 * wait.c - the one waiting mechanism: a command that cannot finish at once
 * sleeps (ioctl) or parks its io_uring command (returns -EIOCBQUEUED) until
 * a waker completes it, a timeout passes, a signal comes (ioctl) or a
 * cancel ends it (io_uring); plus the task-exit monitor and cancel path.
 * NOP, channel WAIT, TEAM_WAIT and SCHED_NEXT all wait through it; their
 * files keep only their lists, their locks and their conditions.
 *
 * Objects
 *   struct dfg_waiter	embedded in the subsystem's waiter object (e.g.
 *			chan.c's dfg_chan_waiter); on the owner's list
 *			(->node, under the owner's lock ->lock) from
 *			dfg_waiter_arm() until completed or, for a sleeper,
 *			until it returns. ->args is where results go: the
 *			dispatcher's buffer on ioctl, the waiter's own copy on
 *			io_uring (written back to an indirect command's
 *			struct by the completion's task work).
 *   struct dfg_park	the io_uring half of a waiter: the parked command,
 *			on dfg_file.parked for the monitor and max_parked.
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
 * Steps: dfg_waiter_new() (the object: allocated for io_uring, the
 * caller's stack for ioctl), optionally dfg_waiter_timeout(), then under
 * the owner's lock, once the condition failed, dfg_waiter_arm() (io_uring:
 * park, may fail -EBUSY at dfg.max_parked); drop the lock;
 * dfg_waiter_block() (ioctl: sleep, unlink, return the result; io_uring:
 * start the timer, return -EIOCBQUEUED). A waker calls
 * dfg_waiter_complete() under the owner's lock: the only place that
 * chooses between waking a task and posting a CQE.
 *
 * Memory ordering, the one rule every user follows:
 *   completer (owner's lock held): unlink, write res, res2 and *args, then
 *	smp_store_release(&done, true), then wake the task (or claim the
 *	park under dfg_file.lock and post the CQE, or queue task work,
 *	both of which order the results before anyone reads them).
 *   sleeper: set_current_state(TASK_INTERRUPTIBLE), then
 *	smp_load_acquire(&done) (pairs with the release above; the state
 *	write before it closes the lost-wakeup window), schedule(); then
 *	it takes the owner's lock, unlinks and reads the result under it, so
 *	a result that arrived before the unlink wins over a signal or a
 *	timeout, and no waker touches the waiter (or its stack) afterwards.
 *
 * Allocation: an io_uring waiter outlives its handler, so it is allocated
 * with a copy of the argument struct behind it and freed by the park's
 * release; an ioctl waiter lives on the sleeper's stack (it is unlinked
 * before the handler returns), which saves an allocation per ioctl wait.
 * dfg_waiter_new() makes that choice for every user.
 *
 * Timeouts run on CLOCK_MONOTONIC, the clock callers measure with (a
 * jiffies timeout ends up to a tick early, more when a TCG guest's ticks
 * catch up). An ioctl sleeper sleeps until an absolute time. A parked
 * command's hrtimer completes it directly if it has no owner lock (NOP),
 * else it queues work on dfg_wq that takes the owner's lock: owner locks
 * are not irq-safe (process context only), so hard-irq context may not
 * take them.
 *
 * Where an event completes a parked command: in place, from the waker,
 * when the completion writes nothing into the submitter's memory (an
 * inline SQE's results are res and res2 only) and no timer can be the
 * completer: one CQE post, whose CQ wakeup wakes the ring's sleeper.
 * Otherwise (an indirect command with results to copy out, a command
 * with a timeout) through io_uring_cmd_complete_in_task(): a TWA_SIGNAL
 * wakeup of the task, a task-work pass under the ring's uring_lock that
 * posts, and the CQ wakeup on top, all in the woken task before it
 * returns (see README, channel figures, for what it costs).
 *
 * Completing several commands at once (a WAKE, a team event): 6.1 has
 * no batched CQE post for modules. io_uring coalesces task-work
 * notifications (__io_req_task_work_add() signals the task only for the
 * first entry of its task list, and handle_tw_list() runs them all under
 * one uring_lock), but io_uring_cmd_done() ends in __io_req_complete(), which on 6.1 ignores
 * issue_flags and calls io_req_complete_post() per request (completion
 * lock, CQ commit, wakeup each); the deferred, batched completion path
 * (io_req_complete_defer(), io_submit_flush_completions()) and
 * io_post_aux_cqe() are not exported to modules. Sleeping tasks, though,
 * can be woken after the owner's lock is dropped: struct dfg_wake_batch.
 *
 * Park state and lock: dfg_park.state, under dfg_file.lock (irq-safe
 * spinlock, taken under owner locks; lock order: see dfg.h).
 *   IDLE	set up by the handler; nobody else sees it.
 *   PARKED	on dfg_file.parked; the module owns the command. Whoever moves
 *		it to CLAIMED (a completion, the monitor) takes it off the list
 *		in the same critical section and is the only one to complete
 *		it. Every other claim fails.
 *   CLAIMED	final; the command is completed once by its claimer:
 *		events in place or through task work in the submitter's
 *		context (which can copy results to its memory, see above),
 *		cancels directly with IO_URING_F_UNLOCKED, as
 *		ublk_cancel_queue() does.
 *
 * References (dfg_park.ref): two from dfg_waiter_arm(). The park's is
 * dropped just before io_uring_cmd_done(); the issuer's by the dispatcher
 * once the handler has returned (dfg_waiter_issued()), because an event or
 * a cancel may complete the command while an io-wq worker is still inside
 * the handler (or, completed in place, while the submitting task is still
 * in it). The last one puts the task reference and releases the waiter in
 * process context: stops its timer and timeout work if it had a timeout,
 * unlinks it under the owner's lock if a cancel left it listed (one
 * completed in place is unlinked and its completer holds that lock, which
 * is why no timer may be involved there) and frees it. The
 * command itself pins struct file, so dfg_park.df stays valid until
 * completion, and the file pins the owner (its lock).
 */
#include <linux/build_bug.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dfg.h"
#include "trace.h"

struct workqueue_struct *dfg_wq;
atomic_t dfg_nr_parked = ATOMIC_INIT(0);

/* What the io_uring_cmd pdu holds while the command is parked. */
struct dfg_pdu {
	struct dfg_waiter *w;
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

/* ------------------------------------------------------------------------
 * The io_uring half: park, claim, complete, cancel
 * ------------------------------------------------------------------------
 */

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

/* Last reference of a parked waiter: stop its sources, unlink, free. */
static void dfg_waiter_release(struct dfg_waiter *w)
{
	/* Only dfg_waiter_block() starts the timer, and only with a timeout. */
	if (w->timeout_ns >= 0) {
		/* The timer queues the work: stop it first. */
		hrtimer_cancel(&w->timer);
		cancel_work_sync(&w->timeout_work);
	}
	/*
	 * Still listed when a cancel (task exit, ring teardown) claimed it;
	 * no lock when completed in place (unlinked for good, and the
	 * completer holds it).
	 */
	if (w->lock) {
		spin_lock(w->lock);
		list_del_init(&w->node);
		spin_unlock(w->lock);
	}
	kfree(w->obj);
}

static void dfg_park_put(struct dfg_waiter *w)
{
	if (!refcount_dec_and_test(&w->park.ref))
		return;
	put_task_struct(w->park.task);
	dfg_waiter_release(w);
}

/* Park @w's command; caller holds the owner's lock. */
static int dfg_park_add(struct dfg_cmd_ctx *c, struct dfg_waiter *w)
{
	struct dfg_park *p = &w->park;
	struct dfg_file *df = dfg_cmd_file(c);
	unsigned long flags;

	if (WARN_ON_ONCE(c->waiter))
		return -EINVAL;

	INIT_LIST_HEAD(&p->node);
	p->df = df;
	p->cmd = c->ucmd;
	/* Nothing to copy back if the dispatcher did already (NOOUT). */
	p->uaddr = c->copied ? NULL : c->uaddr;
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
	dfg_pdu(c->ucmd)->w = w;
	list_add_tail(&p->node, &df->parked);
	df->nr_parked++;
	atomic_inc(&dfg_nr_parked);
	p->state = DFG_PARK_PARKED;
	spin_unlock_irqrestore(&df->lock, flags);

	c->waiter = w;
	dfg_monitor_kick();
	return 0;
}

/**
 * dfg_waiter_issued() - the handler that parked c->waiter has returned
 * @c: the command's context
 *
 * Called by the dispatcher only. Drops the issuer's reference.
 */
void dfg_waiter_issued(struct dfg_cmd_ctx *c)
{
	if (c->waiter)
		dfg_park_put(c->waiter);
}

/* Does completing @p write its result struct into the submitter's memory? */
static bool dfg_park_copies_out(const struct dfg_park *p)
{
	return p->uaddr && (_IOC_DIR(p->cmd_op) & _IOC_READ);
}

/* Post a claimed event completion: drop the park's reference, then done. */
static void dfg_park_post(struct dfg_waiter *w, int res, u64 res2,
			  unsigned int issue_flags)
{
	struct io_uring_cmd *ucmd = w->park.cmd;

	trace_dfg_cmd_complete(w->park.cmd_op, res);
	if (res < 0)
		dfg_stat_error();
	dfg_park_put(w);
	dfg_uring_cmd_done(ucmd, res, res2, issue_flags);
}

/*
 * Task work of an event completion that copies out or may race its timer,
 * in the context of the task that owns the request: only here is
 * current's memory the submitter's. io_uring runs task work in a kworker
 * when the task can no longer take it (fallback): no user memory there,
 * the command ends with -ECANCELED. A result that is not delivered must
 * not have been consumed: ->undo gives back what the completer handed
 * over (the command still pins its file, hence the owner).
 */
static void dfg_park_tw(struct io_uring_cmd *ucmd, unsigned int issue_flags)
{
	struct dfg_waiter *w = dfg_pdu(ucmd)->w;
	struct dfg_park *p = &w->park;
	int res = w->res;

	if (res >= 0 && dfg_park_copies_out(p)) {
		if (current != p->task)
			res = -ECANCELED;
		else if (copy_to_user(p->uaddr, w->args, p->size))
			res = -EFAULT;
		if (res < 0 && w->undo)
			w->undo(w);
	}
	dfg_park_post(w, res, w->res2, issue_flags);
}

DFG_URING_TW_CB(dfg_park_tw_cb, dfg_park_tw)

/* Complete a claimed command with an error, at once, from process context. */
static void dfg_park_finish_cancel(struct dfg_waiter *w, int res)
{
	struct io_uring_cmd *ucmd = w->park.cmd;
	u32 cmd_op = w->park.cmd_op;
	pid_t pid = task_tgid_nr(w->park.task);

	trace_dfg_cmd_cancel(cmd_op, pid, res);
	dfg_stat_canceled();
	dfg_stat_error();
	dfg_nl_event(DFG_EV_CMD_CANCELED, pid, cmd_op);

	dfg_park_put(w);
	dfg_uring_cmd_done(ucmd, res, 0, IO_URING_F_UNLOCKED);
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
		dfg_park_finish_cancel(container_of(p, struct dfg_waiter, park),
				       -ECANCELED);
	}

	if (atomic_read(&dfg_nr_parked))
		dfg_monitor_kick();
}

/* ------------------------------------------------------------------------
 * Waiters: new, arm, block, complete
 * ------------------------------------------------------------------------
 */

static enum hrtimer_restart dfg_waiter_timer(struct hrtimer *timer)
{
	struct dfg_waiter *w = container_of(timer, struct dfg_waiter, timer);

	/* No owner lock to take: complete from here (any context). */
	if (!w->lock)
		dfg_waiter_complete(w, w->timeout_res, w->timeout_res2, NULL);
	else
		queue_work(dfg_wq, &w->timeout_work);
	return HRTIMER_NORESTART;
}

static void dfg_waiter_timeout_work(struct work_struct *work)
{
	struct dfg_waiter *w = container_of(work, struct dfg_waiter,
					    timeout_work);

	spin_lock(w->lock);
	/* Lost to an event: nothing to do. A cancel's claim wins below. */
	if (!w->done)
		dfg_waiter_complete(w, w->timeout_res, w->timeout_res2, NULL);
	spin_unlock(w->lock);
}

/**
 * dfg_waiter_new() - the object that embeds a command's waiter
 * @c: the command
 * @onstack: the caller's object on its stack, used on the ioctl path
 * @size: bytes of the object
 * @off: offset of its struct dfg_waiter
 * @lock: the owner's lock, which guards the owner's list of waiters;
 *	NULL for a waiter on no list
 *
 * io_uring: allocates the object, zeroed, with a copy of the command's
 * argument struct behind it (the waiter's ->args); the park's release frees
 * it. ioctl: zeroes @onstack; ->args is the dispatcher's buffer. No
 * timeout until dfg_waiter_timeout().
 *
 * Context: process context.
 * Return: the object, or NULL if out of memory.
 */
void *dfg_waiter_new(struct dfg_cmd_ctx *c, void *onstack, size_t size,
		     size_t off, spinlock_t *lock)
{
	size_t args_off = ALIGN(size, 8);
	struct dfg_waiter *w;
	void *obj = onstack;

	if (c->ucmd) {
		obj = kzalloc(args_off + c->size, GFP_KERNEL_ACCOUNT);
		if (!obj)
			return NULL;
	} else {
		memset(onstack, 0, size);
	}
	w = obj + off;
	INIT_LIST_HEAD(&w->node);
	w->lock = lock;
	w->timeout_ns = -1;
	if (c->ucmd) {
		w->obj = obj;
		w->args = obj + args_off;
		memcpy(w->args, c->args, c->size);
		hrtimer_init(&w->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
		w->timer.function = dfg_waiter_timer;
		INIT_WORK(&w->timeout_work, dfg_waiter_timeout_work);
	} else {
		w->task = current;
		w->args = c->args;
	}
	return obj;
}

/**
 * dfg_waiter_discard() - free a waiter that was never armed
 * @c: the command
 * @w: the waiter from dfg_waiter_new(), not armed (or its arm failed)
 */
void dfg_waiter_discard(struct dfg_cmd_ctx *c, struct dfg_waiter *w)
{
	if (c->ucmd)
		kfree(w->obj);
}

/**
 * dfg_waiter_timeout() - end the wait after a time if nothing else does
 * @w: a waiter not armed yet
 * @ns: relative timeout in ns (0: at once, when blocking)
 * @res: the result then (e.g. -ETIMEDOUT, or 0 for a delay)
 * @res2: the second result then
 */
void dfg_waiter_timeout(struct dfg_waiter *w, s64 ns, int res, u64 res2)
{
	w->timeout_ns = ns;
	w->timeout_res = res;
	w->timeout_res2 = res2;
}

/**
 * dfg_waiter_arm() - start waiting: list @w, park it on io_uring
 * @c: the command
 * @w: the waiter from dfg_waiter_new()
 * @list: the owner's list of waiters, or NULL for none
 *
 * Called once the owner's condition failed, under the owner's lock, so
 * no waker can miss @w. On io_uring, the last fallible step of a handler:
 * once it returns 0 the command may be completed (by a waker that takes
 * the owner's lock) or canceled at any moment, and the handler must end
 * with dfg_waiter_block(). On error nothing was kept: the caller drops the
 * lock and calls dfg_waiter_discard().
 *
 * Return: 0, or -EBUSY if the file has dfg.max_parked commands parked.
 */
int dfg_waiter_arm(struct dfg_cmd_ctx *c, struct dfg_waiter *w,
		   struct list_head *list)
{
	int ret;

	if (w->lock)
		lockdep_assert_held(w->lock);
	if (c->ucmd) {
		ret = dfg_park_add(c, w);
		if (ret)
			return ret;
	}
	if (list)
		list_add_tail(&w->node, list);
	return 0;
}

/*
 * A sleeper's result, once off its owner's list (caller holds the owner's
 * lock, if any): what a completer recorded wins over a timeout or signal.
 */
static int dfg_waiter_result(struct dfg_cmd_ctx *c, struct dfg_waiter *w,
			     bool timed_out)
{
	if (w->done) {
		c->res2 = w->res2;
		return w->res;
	}
	if (timed_out) {
		c->res2 = w->timeout_res2;
		return w->timeout_res;
	}
	return -EINTR;
}

/**
 * dfg_waiter_block() - wait for @w to be completed
 * @c: the command
 * @w: an armed waiter; the owner's lock is not held
 *
 * io_uring: starts the timeout, if any, and returns -EIOCBQUEUED (the
 * handler's result). ioctl: sleeps until a waker completes @w, the timeout
 * passes (the timeout's result) or a signal comes (-EINTR), then unlinks
 * @w under the owner's lock; a result that arrived first wins. On success
 * c->res2 is the second result.
 *
 * Context: process context; the ioctl path sleeps.
 * Return: the result, -EINTR, or -EIOCBQUEUED.
 */
int dfg_waiter_block(struct dfg_cmd_ctx *c, struct dfg_waiter *w)
{
	ktime_t end = 0;
	bool timed_out = false;
	int res;

	if (c->ucmd) {
		if (w->timeout_ns >= 0)
			hrtimer_start(&w->timer, ns_to_ktime(w->timeout_ns),
				      HRTIMER_MODE_REL);
		return -EIOCBQUEUED;
	}

	if (w->timeout_ns >= 0)
		end = ktime_add_safe(ktime_get(), ns_to_ktime(w->timeout_ns));
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		/* Pairs with the release in dfg_waiter_complete(). */
		if (smp_load_acquire(&w->done) || signal_pending(current))
			break;
		if (w->timeout_ns < 0) {
			schedule();
		} else if (!schedule_hrtimeout_range(&end, 0,
						     HRTIMER_MODE_ABS)) {
			/* 0: the absolute time passed, not woken early. */
			timed_out = true;
			break;
		}
	}
	__set_current_state(TASK_RUNNING);

	if (!w->lock)
		return dfg_waiter_result(c, w, timed_out);
	spin_lock(w->lock);
	list_del_init(&w->node);
	res = dfg_waiter_result(c, w, timed_out);
	spin_unlock(w->lock);
	return res;
}

/**
 * dfg_waiter_complete() - complete a waiter with its result
 * @w: an armed waiter, on its owner's list (or on none)
 * @res: the result (>= 0, or a negative errno)
 * @res2: the second result (cqe->big_cqe[0] on CQE32 rings)
 * @batch: if not NULL, a sleeping task is woken by dfg_wake_batch_flush()
 *	after the caller drops the owner's lock (while @batch has room)
 *
 * Unlinks @w and records the result (the caller writes anything else
 * into ->args first). A sleeper is woken; a parked command is claimed and
 * completed through task work, which copies ->args back for indirect
 * commands on success. Loses quietly to an earlier claim (a cancel).
 *
 * Context: under the owner's lock, any context that lock allows.
 * Return: true if this call completes @w.
 */
bool dfg_waiter_complete(struct dfg_waiter *w, int res, u64 res2,
			 struct dfg_wake_batch *batch)
{
	if (w->lock)
		lockdep_assert_held(w->lock);
	list_del_init(&w->node);
	w->res = res;
	w->res2 = res2;
	/* Pairs with the sleeper's acquire in dfg_waiter_block(). */
	smp_store_release(&w->done, true);
	if (!w->park.cmd) {
		/* The sleeper takes the owner's lock before it returns. */
		if (batch && batch->n < ARRAY_SIZE(batch->task))
			batch->task[batch->n++] = get_task_struct(w->task);
		else
			wake_up_process(w->task);
		return true;
	}
	if (!dfg_park_claim(&w->park))
		return false;
	/*
	 * Nothing to write into the submitter's memory and no timer that may
	 * be this very caller: post the CQE from here. Its CQ wakeup wakes
	 * the ring's sleeper, where task work would wake it with TWA_SIGNAL
	 * to run the work that then posts (a pass through io_uring's
	 * task-work machinery under the ring's lock per wait). The owner's
	 * lock is a process-context spinlock, under which io_uring_cmd_done()
	 * may run (it takes only io_uring's completion lock and wakes its CQ
	 * waiters), as may the release (no timer to stop, no lock to take:
	 * see dfg_waiter_release()). Not when the waker is the submitter itself
	 * (its own WAKE on its own ring): it sleeps on nothing, runs the task
	 * work on its way out, and its own command's CQE stays first.
	 */
	if (w->timeout_ns < 0 && !dfg_park_copies_out(&w->park) &&
	    w->park.task != current) {
		w->lock = NULL;
		dfg_park_post(w, res, res2, IO_URING_F_UNLOCKED);
		return true;
	}
	io_uring_cmd_complete_in_task(w->park.cmd, dfg_park_tw_cb);
	return true;
}

/**
 * dfg_wake_batch_flush() - wake the tasks dfg_waiter_complete() deferred
 * @batch: the batch, filled under an owner's lock now dropped
 *
 * A wakeup takes a while (runqueue locks, an IPI); done here, it does not
 * keep every other user of the owner's lock spinning.
 */
void dfg_wake_batch_flush(struct dfg_wake_batch *batch)
{
	unsigned int i;

	for (i = 0; i < batch->n; i++) {
		wake_up_process(batch->task[i]);
		put_task_struct(batch->task[i]);
	}
	batch->n = 0;
}

/**
 * dfg_waiter_task() - the task a waiter waits for
 * @w: an armed waiter
 *
 * Return: the ioctl sleeper, or the task that owns the parked request.
 */
struct task_struct *dfg_waiter_task(struct dfg_waiter *w)
{
	return w->park.cmd ? w->park.task : w->task;
}

int dfg_wait_init(void)
{
	/*
	 * Our own queue: the monitor and the timeouts run on it, and
	 * destroy_workqueue() at exit waits for every one of them.
	 */
	dfg_wq = alloc_workqueue("dfg", 0, 0);
	if (!dfg_wq)
		return -ENOMEM;
	return 0;
}

/*
 * Module exit: no file is open, so nothing is parked; the monitor may still
 * be queued from the last parked command, and releases may still be
 * returning from their work items.
 */
void dfg_wait_exit(void)
{
	cancel_delayed_work_sync(&dfg_monitor_work);
	destroy_workqueue(dfg_wq);
}
