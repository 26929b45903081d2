// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg run: the scheduling point.
 *
 * INTERIM until the kernel set scheduler (<dfg/sched.h>) is merged: an
 * idle set backs off in growing sleeps. Replaced by SCHED_NEXT/YIELD.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "run.h"
#include "sched.h"

struct run_sched {
	unsigned int	backoff_us;
};

int run_sched_open(struct run_sched **sp, const struct run_env *env,
		   unsigned int set, unsigned int inst)
{
	(void)env;
	(void)set;
	(void)inst;
	*sp = calloc(1, sizeof(**sp));
	return *sp ? 0 : -ENOMEM;
}

int run_sched_next(struct run_sched *s, bool progressed)
{
	struct timespec ts;

	if (progressed) {
		s->backoff_us = 0;
		return 0;
	}
	s->backoff_us = s->backoff_us ? s->backoff_us * 2 : 20;
	if (s->backoff_us > 2000)
		s->backoff_us = 2000;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)s->backoff_us * 1000;
	nanosleep(&ts, NULL);
	return 1;
}

void run_sched_active(struct run_sched *s, int member)
{
	(void)s;
	(void)member;
}

void run_sched_close(struct run_sched *s)
{
	free(s);
}
