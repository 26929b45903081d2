// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * sched.c - the set scheduler client: a scheduler descriptor, its sets and
 * their shared pages, the worker's next/yield.
 *
 * struct dfg_sched owns the descriptor and the sets registered through it;
 * @lock (a mutex) guards the list of sets, which register and unregister
 * change and next (id -> set) reads. Nothing of libdfg is locked while a
 * worker waits in the module.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <dfg/dfg.h>
#include <dfg/sched.h>

#include "sys.h"

/**
 * struct dfg_set - a registered set
 * @s:		its client
 * @next:	on @s->sets
 * @id:		set id in the graph
 * @page:	its shared page, mapped
 * @held:	dfg_sched_next() handed it out and it has not been given back
 *		since: a yield of it cannot fail with -EBUSY ("not running")
 */
struct dfg_set {
	struct dfg_sched	*s;
	struct dfg_set		*next;
	unsigned int		id;
	struct dfg_set_page	*page;
	bool			held;
};

/**
 * struct dfg_sched - a scheduler client
 * @fd:		scheduler descriptor; owned
 * @lock:	guards @sets
 * @sets:	registered sets, newest first
 */
struct dfg_sched {
	int			fd;
	pthread_mutex_t		lock;
	struct dfg_set		*sets;
};

int dfg_sched_attach(int graph_fd, struct dfg_sched **sp)
{
	struct dfg_sched_attach a = { .flags = DFG_SCHED_O_CLOEXEC };
	struct dfg_sched *s;
	int fd;

	if (!sp)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	fd = dfg_sys_cmd(graph_fd, DFG_IOC_SCHED_ATTACH, &a);
	if (fd < 0) {
		free(s);
		return fd;
	}
	s->fd = fd;
	pthread_mutex_init(&s->lock, NULL);
	*sp = s;
	return 0;
}

static void set_free(struct dfg_set *set)
{
	__dfg_sys_munmap(set->page, DFG_SET_PAGE_SIZE);
	free(set);
}

/* Closing the descriptor fails the sets not done (see <linux/dfg.h>). */
void dfg_sched_detach(struct dfg_sched *s)
{
	struct dfg_set *set, *next;

	if (!s)
		return;
	__dfg_sys_close(s->fd);
	for (set = s->sets; set; set = next) {
		next = set->next;
		set_free(set);
	}
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int dfg_sched_fd(const struct dfg_sched *s)
{
	return s ? s->fd : -EINVAL;
}

int dfg_set_register(struct dfg_sched *s, const struct dfg_set_desc *desc,
		     struct dfg_set **setp)
{
	struct dfg_set_register r = { .size = sizeof(r) };
	char (*names)[DFG_NAME_MAX];
	struct dfg_set *set;
	unsigned int i;
	int ret, err = 0;

	if (!s || !desc || !setp || !desc->name || !desc->comp_names ||
	    !desc->nr_comps || desc->nr_comps > DFG_SET_COMPS_MAX ||
	    strlen(desc->name) >= DFG_NAME_MAX)
		return -EINVAL;
	names = calloc(desc->nr_comps, DFG_NAME_MAX);
	set = calloc(1, sizeof(*set));
	if (!names || !set) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < desc->nr_comps; i++) {
		if (!desc->comp_names[i] ||
		    strlen(desc->comp_names[i]) >= DFG_NAME_MAX) {
			ret = -EINVAL;
			goto out;
		}
		strcpy(names[i], desc->comp_names[i]);
	}
	strcpy(r.name, desc->name);
	r.flags = desc->flags;
	r.priority = desc->priority;
	r.nr_comps = desc->nr_comps;
	r.nr_inputs = desc->nr_inputs;
	r.nr_outputs = desc->nr_outputs;
	r.inputs = (__u64)(uintptr_t)desc->inputs;
	r.outputs = (__u64)(uintptr_t)desc->outputs;
	r.comp_names = (__u64)(uintptr_t)names;
	r.cpumask = desc->cpumask;
	r.quantum = desc->quantum;

	ret = dfg_sys_cmd(s->fd, DFG_IOC_SET_REGISTER, &r);
	if (ret < 0)
		goto out;
	set->s = s;
	set->id = r.id;
	set->page = __dfg_sys_mmap(DFG_SET_PAGE_SIZE, PROT_READ | PROT_WRITE,
				   s->fd, r.mmap_offset, &err);
	if (!set->page) {
		struct dfg_set_id u = { .id = r.id };

		dfg_sys_cmd(s->fd, DFG_IOC_SET_UNREGISTER, &u);
		ret = err;
		goto out;
	}
	pthread_mutex_lock(&s->lock);
	set->next = s->sets;
	s->sets = set;
	pthread_mutex_unlock(&s->lock);
	*setp = set;
	set = NULL;
	ret = 0;
out:
	free(set);
	free(names);
	return ret;
}

int dfg_set_unregister(struct dfg_set *set)
{
	struct dfg_set_id u;
	struct dfg_sched *s;
	struct dfg_set **pp;
	int ret;

	if (!set)
		return -EINVAL;
	s = set->s;
	memset(&u, 0, sizeof(u));
	u.id = set->id;
	ret = dfg_sys_cmd(s->fd, DFG_IOC_SET_UNREGISTER, &u);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&s->lock);
	for (pp = &s->sets; *pp; pp = &(*pp)->next) {
		if (*pp == set) {
			*pp = set->next;
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	set_free(set);
	return 0;
}

unsigned int dfg_set_id(const struct dfg_set *set)
{
	return set ? set->id : 0;
}

struct dfg_set_page *dfg_set_page(struct dfg_set *set)
{
	return set ? set->page : NULL;
}

struct dfg_set *dfg_sched_set(struct dfg_sched *s, unsigned int id)
{
	struct dfg_set *set;

	if (!s)
		return NULL;
	pthread_mutex_lock(&s->lock);
	for (set = s->sets; set; set = set->next)
		if (set->id == id)
			break;
	pthread_mutex_unlock(&s->lock);
	return set;
}

/*
 * NEXT waits on the thread's wait ring (core/wait.c). The yield it
 * carries is done before the module tries to park, so when parking fails
 * (-EBUSY, dfg.max_parked) the command is sent again through ioctl
 * without it; -EBUSY is also a yield's own error (the set is not
 * running), which cannot be for a set that we handed out and that has not
 * been given back (@held). Over ioctl a signal ends the sleep with
 * -EINTR, also after the yield: then the call goes on without it (the set
 * is given back; a caller that retried with it would fail), and returns
 * -EINTR only when it carried none. On the ring a signal never ends the
 * wait: its completion may hand this thread a set. An EOF or ERROR yield
 * is never carried (see below).
 */
int dfg_sched_next(struct dfg_sched *s, struct dfg_set *done,
		   unsigned int reason, unsigned int flags,
		   struct dfg_set **setp, unsigned long long *quantum)
{
	struct dfg_sched_next n, bare;
	struct dfg_set *set;
	bool held = false;
	__u64 res2;
	int ret;

	if (!s || !setp || (done && done->s != s) || (!done && reason) ||
	    (flags & DFG_NEXT_F_CPU))
		return -EINVAL;
	memset(&n, 0, sizeof(n));
	n.flags = flags;
	bare = n;
	if (done && (reason == DFG_YIELD_EOF || reason == DFG_YIELD_ERROR)) {
		/*
		 * Ending or failing a set may sleep in the module, so NEXT
		 * carrying it is issued by an io-wq worker on the ring, and
		 * 6.1's io-wq can cancel such work (-ECANCELED) before it
		 * runs: the set would be neither given back nor reported.
		 * Such a yield goes through ioctl, and NEXT without it.
		 */
		ret = dfg_sched_yield(done, reason);
		if (ret) {
			*setp = NULL;
			return ret;
		}
		done = NULL;
	}
	if (done) {
		n.yield_id = done->id;
		n.yield_reason = reason;
		held = __atomic_exchange_n(&done->held, false,
					   __ATOMIC_RELAXED);
	}
	for (;;) {
		ret = dfg_sys_wait(s->fd, DFG_IOC_SCHED_NEXT, &n,
				   held ? &bare : NULL, &res2, NULL);
		if (ret != -EINTR || !n.yield_id)
			break;
		n = bare;
	}
	if (ret < 0) {
		*setp = NULL;
		return ret;
	}
	set = dfg_sched_set(s, ret);
	/* Registered through another handle on the same descriptor. */
	if (!set)
		return -ENOENT;
	__atomic_store_n(&set->held, true, __ATOMIC_RELAXED);
	*setp = set;
	if (quantum)
		*quantum = res2 ? res2 : n.quantum;
	return 0;
}

int dfg_sched_yield(struct dfg_set *set, unsigned int reason)
{
	struct dfg_sched_yield y;

	if (!set)
		return -EINVAL;
	memset(&y, 0, sizeof(y));
	y.id = set->id;
	y.reason = reason;
	__atomic_store_n(&set->held, false, __ATOMIC_RELAXED);
	return dfg_sys_cmd(set->s->fd, DFG_IOC_SCHED_YIELD, &y);
}
