// SPDX-License-Identifier: GPL-2.0
/*
 * core.c - core commands: DFG_IOC_GET_INFO, DFG_IOC_NOP.
 *
 * Objects: a NOP that waits (DFG_NOP_F_ASYNC: for its delay;
 * DFG_NOP_F_PARK: until a signal on ioctl, a cancel on io_uring) is a bare
 * struct dfg_waiter (wait.c) on no list and under no lock: nothing but its
 * timeout, a signal or the cancel path completes it. The delay is the
 * waiter's timeout, whose result is success (0, res2 = value).
 */
#include <linux/ktime.h>
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

int dfg_core_nop(struct dfg_cmd_ctx *c)
{
	struct dfg_nop *nop = c->args;
	u32 async = nop->flags & DFG_NOP_F_ASYNC;
	struct dfg_waiter sleeper, *w;
	int ret;

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

	/* A waiter on no list: only the delay, a signal or a cancel end it. */
	w = dfg_waiter_new(c, &sleeper, sizeof(sleeper), 0, NULL);
	if (!w)
		return -ENOMEM;
	if (async)
		dfg_waiter_timeout(w, (s64)nop->delay_ms * NSEC_PER_MSEC, 0,
				   nop->value);
	ret = dfg_waiter_arm(c, w, NULL);
	if (ret) {
		dfg_waiter_discard(c, w);
		return ret;
	}
	return dfg_waiter_block(c, w);
}
