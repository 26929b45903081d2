// SPDX-License-Identifier: GPL-2.0
/*
 * core.c - core commands: DFG_IOC_GET_INFO, DFG_IOC_NOP.
 *
 * Objects: struct dfg_nop_wait, one per NOP parked on the io_uring path
 * (DFG_NOP_F_ASYNC or DFG_NOP_F_PARK). It embeds its dfg_park and follows
 * the park's rules (park.c): no lock of its own; its dfg_park references
 * decide when it is freed, and dfg_nop_release() stops its timer before
 * freeing it, so the timer never runs on freed memory.
 *
 * Delays use hrtimers on CLOCK_MONOTONIC, the clock callers measure with:
 * a jiffies timeout may fire up to a tick (more under emulation) early.
 */
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "dfg.h"

int dfg_core_get_info(struct dfg_cmd_ctx *c)
{
	struct dfg_info *info = c->args;

	if (info->size != sizeof(*info))
		return -EINVAL;
	if (memchr_inv(info->reserved, 0, sizeof(info->reserved)))
		return -EINVAL;

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->api_version = DFG_API_VERSION;
	info->features = DFG_F_IMPLEMENTED;
	info->nr_cmds = DFG_CMD_NR;
	info->uring_inline_max = DFG_URING_INLINE_MAX;
	info->max_parked = READ_ONCE(dfg_max_parked);
	info->monitor_ms = READ_ONCE(dfg_monitor_ms);
	strscpy(info->version, DFG_VERSION, sizeof(info->version));
	return 0;
}

/**
 * struct dfg_nop_wait - a NOP parked on the io_uring path
 * @park:	the parked command
 * @timer:	DFG_NOP_F_ASYNC: completes the command @args.delay_ms later
 * @args:	copy of the argument struct, @args.echo set; written back to
 *		user memory on success in indirect mode
 */
struct dfg_nop_wait {
	struct dfg_park		park;
	struct hrtimer		timer;
	struct dfg_nop		args;
};

/* Hard-irq context: dfg_park_complete() defers the CQE to task work. */
static enum hrtimer_restart dfg_nop_timeout(struct hrtimer *timer)
{
	struct dfg_nop_wait *w = container_of(timer, struct dfg_nop_wait,
					      timer);

	/* false: canceled first; the canceler owns the command. */
	dfg_park_complete(&w->park, 0, w->args.echo);
	return HRTIMER_NORESTART;
}

static void dfg_nop_release(struct dfg_park *p)
{
	struct dfg_nop_wait *w = container_of(p, struct dfg_nop_wait, park);

	/* The timer may still run when a cancel won: let it finish first. */
	hrtimer_cancel(&w->timer);
	kfree(w);
}

static const struct dfg_park_ops dfg_nop_park_ops = {
	.release = dfg_nop_release,
};

static int dfg_nop_park(struct dfg_cmd_ctx *c, const struct dfg_nop *nop)
{
	struct dfg_nop_wait *w;
	int ret;

	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w)
		return -ENOMEM;
	hrtimer_init(&w->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	w->timer.function = dfg_nop_timeout;
	w->args = *nop;

	ret = dfg_park_add(c, &w->park, &dfg_nop_park_ops, &w->args);
	if (ret) {
		kfree(w);
		return ret;
	}
	/* Parked: w lives until the issuer's reference goes (after return). */
	if (nop->flags & DFG_NOP_F_ASYNC)
		hrtimer_start(&w->timer, ms_to_ktime(nop->delay_ms),
			      HRTIMER_MODE_REL);
	return -EIOCBQUEUED;
}

/* ioctl path: sleep for the delay, or until a signal for PARK. */
static int dfg_nop_sleep(const struct dfg_nop *nop)
{
	ktime_t end = ktime_add_ms(ktime_get(), nop->delay_ms);
	bool park = nop->flags & DFG_NOP_F_PARK;

	for (;;) {
		if (signal_pending(current))
			return -EINTR;
		set_current_state(TASK_INTERRUPTIBLE);
		if (park) {
			schedule();
		} else if (!schedule_hrtimeout(&end, HRTIMER_MODE_ABS)) {
			/* 0: the absolute time passed, not woken early. */
			return 0;
		}
	}
}

int dfg_core_nop(struct dfg_cmd_ctx *c)
{
	struct dfg_nop *nop = c->args;
	u32 async = nop->flags & DFG_NOP_F_ASYNC;

	if (nop->flags & ~DFG_NOP_F_ALL)
		return -EINVAL;
	if (async && (nop->flags & DFG_NOP_F_PARK))
		return -EINVAL;
	if (nop->delay_ms && !async)
		return -EINVAL;
	if (nop->delay_ms > DFG_NOP_DELAY_MAX_MS)
		return -EINVAL;
	if (nop->echo || memchr_inv(nop->reserved, 0, sizeof(nop->reserved)))
		return -EINVAL;

	nop->echo = nop->value;
	c->res2 = nop->value;
	if (!(nop->flags & DFG_NOP_F_ALL))
		return 0;
	if (c->ucmd)
		return dfg_nop_park(c, nop);
	return dfg_nop_sleep(nop);
}
