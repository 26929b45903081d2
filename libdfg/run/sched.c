// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg run: the scheduling point, over the kernel set scheduler of
 * <linux/dfg.h> ("Commands: set scheduler"). One client per set
 * instance process; the set's page gets the running component (the
 * module samples it to charge CPU time per component) and the
 * per-component counters, which sysfs shows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "run.h"
#include "sched.h"

#define RUN_SET_QUANTUM	4096	/* elements per turn */

struct run_sched {
	int			fd;		/* scheduler descriptor */
	__u32			id;		/* the set */
	struct dfg_set_page	*page;
	bool			done;
};

/* Object names allow [A-Za-z0-9._-]: anything else becomes '_'. */
static void name_copy(char *dst, const char *src)
{
	size_t i;

	for (i = 0; src[i] && i < DFG_NAME_MAX - 1; i++) {
		char c = src[i];

		dst[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '.' || c == '_' ||
			 c == '-' ? c : '_';
	}
	dst[i] = '\0';
	if (!i)
		strcpy(dst, "_");
}

int run_sched_open(struct run_sched **sp, int graph_fd,
		   const struct run_sched_set *set)
{
	struct dfg_sched_attach at = { .flags = DFG_SCHED_O_CLOEXEC };
	struct dfg_set_register reg = {
		.size = sizeof(reg),
		.flags = set->root ? DFG_SET_F_ROOT : 0,
		.priority = DFG_SET_PRIO_MAX / 2,
		.nr_comps = set->nr_comps,
		.nr_inputs = set->nr_inputs,
		.nr_outputs = set->nr_outputs,
		.inputs = (__u64)(uintptr_t)set->inputs,
		.outputs = (__u64)(uintptr_t)set->outputs,
		.quantum = RUN_SET_QUANTUM,
	};
	struct run_sched *s;
	char (*names)[DFG_NAME_MAX];
	unsigned int i;
	void *p;
	int r;

	if (set->nr_comps > DFG_SET_COMPS_MAX ||
	    set->nr_inputs > DFG_SET_PORTS_MAX ||
	    set->nr_outputs > DFG_SET_PORTS_MAX)
		return -E2BIG;
	s = calloc(1, sizeof(*s));
	names = calloc(set->nr_comps + 1, DFG_NAME_MAX);
	if (!s || !names) {
		r = -ENOMEM;
		goto fail;
	}
	s->fd = -1;
	for (i = 0; i < set->nr_comps; i++)
		name_copy(names[i], set->comp_names[i]);
	name_copy(reg.name, set->name);
	reg.comp_names = (__u64)(uintptr_t)names;
	r = __dfg_sys_ioctl(graph_fd, DFG_IOC_SCHED_ATTACH, &at);
	if (r < 0)
		goto fail;
	s->fd = r;
	r = __dfg_sys_ioctl(s->fd, DFG_IOC_SET_REGISTER, &reg);
	if (r < 0)
		goto fail;
	s->id = reg.id;
	p = mmap(NULL, DFG_SET_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 s->fd, (off_t)reg.mmap_offset);
	if (p == MAP_FAILED) {
		r = -errno;
		goto fail;
	}
	s->page = p;
	free(names);
	*sp = s;
	return 0;
fail:
	free(names);
	if (s && s->fd >= 0)
		__dfg_sys_close(s->fd);
	free(s);
	return r;
}

long run_sched_next(struct run_sched *s, unsigned int reason)
{
	struct dfg_sched_next n = {
		.yield_id = reason ? s->id : 0,
		.yield_reason = reason,
	};
	int r;

	if (reason == DFG_YIELD_EOF)
		s->done = true;
	do
		r = __dfg_sys_ioctl(s->fd, DFG_IOC_SCHED_NEXT, &n);
	while (r == -EINTR);
	if (r == -ENODATA && s->done)
		return 0;
	if (r < 0)
		return r;
	return n.quantum ? (long)n.quantum : RUN_SET_QUANTUM;
}

void run_sched_active(struct run_sched *s, int member)
{
	if (s && s->page)
		__atomic_store_n(&s->page->active, member < 0 ?
				 DFG_SET_COMP_NONE : (__u32)member,
				 __ATOMIC_RELAXED);
}

struct dfg_set_comp_stats *run_sched_comp_stats(struct run_sched *s,
						unsigned int member)
{
	return &s->page->comps[member];
}

void run_sched_close(struct run_sched *s)
{
	if (!s)
		return;
	if (s->page)
		munmap(s->page, DFG_SET_PAGE_SIZE);
	if (s->fd >= 0)
		__dfg_sys_close(s->fd);
	free(s);
}
