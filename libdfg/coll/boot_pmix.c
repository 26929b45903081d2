// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg collectives: a network team bootstrapped through PMIx, the
 * interface every common launcher serves (Open MPI's mpirun and prterun,
 * Slurm's srun): the launcher tells rank and job size, and its key-value
 * store with a fence is the allgather dfg_team_join_net() needs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pmix.h>

#include "coll.h"

/*
 * struct boot_pmix - one bootstrap
 * @me:		this process (namespace, rank)
 * @size:	processes in the job
 * @team:	teams this process formed before (keys never repeat)
 * @round:	allgathers of this bootstrap so far
 * @timeout_s:	how long a fence waits for every process (0: for ever)
 */
struct boot_pmix {
	pmix_proc_t	me;
	unsigned int	size;
	unsigned int	team;
	unsigned int	round;
	int		timeout_ms;
};

/*
 * One fence in flight: PMIx completes it from its own thread. Left
 * allocated when we give up on it (the callback may still come).
 */
struct boot_fence {
	pmix_info_t	info;
	pmix_status_t	st;
	int		done;
};

static void boot_fence_done(pmix_status_t st, void *arg)
{
	struct boot_fence *f = arg;

	f->st = st;
	__atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
}

/*
 * Fence with data collection among every process of the job, at most
 * @timeout_ms (< 0: for ever). Launchers differ in honouring PMIx's own
 * PMIX_TIMEOUT (Open MPI 4's does not), so the wait is ours.
 */
static int boot_pmix_fence(const struct boot_pmix *b)
{
	struct timespec nap = { .tv_nsec = 1000000 }, t0, t;
	struct boot_fence *f = calloc(1, sizeof(*f));
	bool collect = true;
	pmix_proc_t any;
	int ret;

	if (!f)
		return -ENOMEM;
	PMIX_PROC_LOAD(&any, b->me.nspace, PMIX_RANK_WILDCARD);
	PMIX_INFO_LOAD(&f->info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	if (PMIx_Fence_nb(&any, 1, &f->info, 1, boot_fence_done, f) !=
	    PMIX_SUCCESS) {
		free(f);
		return -EIO;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!__atomic_load_n(&f->done, __ATOMIC_ACQUIRE)) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		/* A process that never came: the team cannot form. */
		if (b->timeout_ms >= 0 &&
		    (t.tv_sec - t0.tv_sec) * 1000LL +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 > b->timeout_ms)
			return -ETIMEDOUT;
		nanosleep(&nap, NULL);
	}
	ret = f->st == PMIX_SUCCESS ? 0 : -EIO;
	PMIX_INFO_DESTRUCT(&f->info);
	free(f);
	return ret;
}

static int boot_pmix_ag(const void *mine, void *all, size_t len, void *arg)
{
	struct boot_pmix *b = arg;
	pmix_proc_t peer;
	pmix_value_t v, *got;
	char key[PMIX_MAX_KEYLEN];
	int ret;

	snprintf(key, sizeof(key), "dfg.%u.%u", b->team, b->round++);
	PMIX_VALUE_CONSTRUCT(&v);
	v.type = PMIX_BYTE_OBJECT;
	v.data.bo.bytes = (char *)mine;
	v.data.bo.size = len;
	/* Put copies the value: ours stays the caller's. */
	if (PMIx_Put(PMIX_GLOBAL, key, &v) != PMIX_SUCCESS ||
	    PMIx_Commit() != PMIX_SUCCESS)
		return -EIO;
	ret = boot_pmix_fence(b);
	if (ret)
		return ret;
	for (unsigned int r = 0; r < b->size; r++) {
		ret = 0;

		PMIX_PROC_LOAD(&peer, b->me.nspace, r);
		if (PMIx_Get(&peer, key, NULL, 0, &got) != PMIX_SUCCESS)
			return -EIO;
		if (got->type != PMIX_BYTE_OBJECT || got->data.bo.size != len)
			ret = -EPROTO;
		else
			memcpy((char *)all + (size_t)r * len,
			       got->data.bo.bytes, len);
		PMIX_VALUE_RELEASE(got);
		if (ret)
			return ret;
	}
	return 0;
}

int dfg_team_from_pmix(struct dfg_team **out)
{
	static unsigned int teams;	/* per process: keys never repeat */
	struct boot_pmix b = { .team = teams++ };
	pmix_value_t *v = NULL;
	pmix_proc_t any;
	int ret;

	if (!out)
		return -EINVAL;
	ret = dfg_team_timeout_ms(&b.timeout_ms);
	if (ret)
		return ret;
	/* Counted: an MPI library's own PMIx client is not disturbed. */
	if (PMIx_Init(&b.me, NULL, 0) != PMIX_SUCCESS)
		return -ENOTCONN;
	PMIX_PROC_LOAD(&any, b.me.nspace, PMIX_RANK_WILDCARD);
	if (PMIx_Get(&any, PMIX_JOB_SIZE, NULL, 0, &v) != PMIX_SUCCESS ||
	    v->type != PMIX_UINT32) {
		ret = -EIO;
	} else {
		b.size = v->data.uint32;
		ret = dfg_team_join_net(b.size, b.me.rank, boot_pmix_ag, &b,
					out);
	}
	if (v)
		PMIX_VALUE_RELEASE(v);
	PMIx_Finalize(NULL, 0);
	return ret;
}
