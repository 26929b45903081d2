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
#include <string.h>

#include <pmix.h>

#include "coll.h"

/*
 * struct boot_pmix - one bootstrap
 * @me:		this process (namespace, rank)
 * @size:	processes in the job
 * @team:	teams this process formed before (keys never repeat)
 * @round:	allgathers of this bootstrap so far
 */
struct boot_pmix {
	pmix_proc_t	me;
	unsigned int	size;
	unsigned int	team;
	unsigned int	round;
};

static int boot_pmix_ag(const void *mine, void *all, size_t len, void *arg)
{
	struct boot_pmix *b = arg;
	pmix_proc_t any, peer;
	pmix_info_t info;
	pmix_value_t v, *got;
	bool collect = true;
	char key[PMIX_MAX_KEYLEN];
	pmix_status_t st;

	snprintf(key, sizeof(key), "dfg.%u.%u", b->team, b->round++);
	PMIX_VALUE_CONSTRUCT(&v);
	v.type = PMIX_BYTE_OBJECT;
	v.data.bo.bytes = (char *)mine;
	v.data.bo.size = len;
	/* Put copies the value: ours stays the caller's. */
	if (PMIx_Put(PMIX_GLOBAL, key, &v) != PMIX_SUCCESS ||
	    PMIx_Commit() != PMIX_SUCCESS)
		return -EIO;
	PMIX_PROC_LOAD(&any, b->me.nspace, PMIX_RANK_WILDCARD);
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	st = PMIx_Fence(&any, 1, &info, 1);
	PMIX_INFO_DESTRUCT(&info);
	if (st != PMIX_SUCCESS)
		return -EIO;
	for (unsigned int r = 0; r < b->size; r++) {
		int ret = 0;

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
