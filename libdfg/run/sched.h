/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg run: the scheduling point. A set instance's workers ask here for
 * their set before each quantum; the kernel set scheduler decides.
 */
#ifndef _DFG_RUN_SCHED_H
#define _DFG_RUN_SCHED_H

#include <stdbool.h>

struct run_env;
struct run_sched;

/* Register set @set instance @inst (its channels) with the scheduler. */
int run_sched_open(struct run_sched **sp, const struct run_env *env,
		   unsigned int set, unsigned int inst);

/*
 * Wait until the set may run a quantum. @progressed: the last quantum
 * moved something (else it found nothing to do and yields until one of
 * its channels changes). Returns 0 (ran on at once), 1 (waited), -errno.
 */
int run_sched_next(struct run_sched *s, bool progressed);

/* The member running now (-1: none), for per-component CPU sampling. */
void run_sched_active(struct run_sched *s, int member);

void run_sched_close(struct run_sched *s);

#endif /* _DFG_RUN_SCHED_H */
