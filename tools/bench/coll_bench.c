// SPDX-License-Identifier: GPL-2.0
/*
 * coll_bench: dfg's collectives measured with the loop of coll_common.h,
 * the same loop coll_mpi runs under mpirun, so the CSVs compare directly.
 *
 *   coll_bench -n N [-c LIST] [-m MIN] [-M MAX] [-t SEC] [-o CSV]
 *
 * Forks N ranks; each opens /dev/dfg, attaches one graph (rank 0's
 * parent created it) and joins the team "bench". DFG_COLL_ALGO (see
 * <dfg/coll.h>) forces algorithms; the CSV's algo column says which ran.
 */
#include <getopt.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dfg/coll.h>
#include <dfg/dfg.h>
#include <dfg/graph.h>

#include "coll_common.h"

static const char * const algo_names[DFG_ALGO_NR] = {
	[DFG_ALGO_AUTO] = "auto",
	[DFG_ALGO_RHALVING] = "rhalving",
	[DFG_ALGO_RING] = "ring",
	[DFG_ALGO_DIRECT] = "direct",
	[DFG_ALGO_TILES] = "tiles",
};

static const enum dfg_coll_kind kinds[COLL_NR] = {
	[COLL_ALLREDUCE] = DFG_COLL_ALLREDUCE,
	[COLL_REDUCE_SCATTER] = DFG_COLL_REDUCE_SCATTER,
	[COLL_ALLTOALL] = DFG_COLL_ALLTOALL,
	[COLL_ALLTOALLV] = DFG_COLL_ALLTOALL,
};

static int d_allreduce(void *ctx, const float *s, float *r, size_t count)
{
	return dfg_allreduce(ctx, s, r, count, DFG_FLOAT32, DFG_SUM);
}

static int d_reduce_scatter(void *ctx, const float *s, float *r,
			    size_t count)
{
	return dfg_reduce_scatter(ctx, s, r, count, DFG_FLOAT32, DFG_SUM);
}

static int d_alltoall(void *ctx, const void *s, void *r, size_t block)
{
	return dfg_alltoall(ctx, s, r, block);
}

static int d_alltoallv(void *ctx, const void *s, const size_t *sc,
		       const size_t *sd, void *r, const size_t *rc,
		       const size_t *rd)
{
	return dfg_alltoallv(ctx, s, sc, sd, r, rc, rd);
}

static int d_barrier(void *ctx)
{
	return dfg_barrier(ctx);
}

static int d_max_double(void *ctx, double *v)
{
	return dfg_allreduce(ctx, DFG_IN_PLACE, v, 1, DFG_FLOAT64, DFG_MAX);
}

static const char *d_algo(void *ctx, enum coll_kind kind)
{
	enum dfg_coll_algo a = dfg_coll_last_algo(ctx, kinds[kind]);

	return a < DFG_ALGO_NR ? algo_names[a] : "?";
}

static int rank_main(const char *gname, unsigned int n, unsigned int rank,
		     const struct coll_opts *o, const char *out)
{
	struct coll_backend b = {
		.impl = "dfg",
		.allreduce = d_allreduce,
		.reduce_scatter = d_reduce_scatter,
		.alltoall = d_alltoall,
		.alltoallv = d_alltoallv,
		.barrier = d_barrier,
		.max_double = d_max_double,
		.algo = d_algo,
	};
	struct dfg_team *t;
	FILE *csv = stdout;
	struct dfg *d;
	int g, ret;

	ret = dfg_open(&d, 0);
	if (ret) {
		fprintf(stderr, "coll_bench: /dev/dfg: %s\n", strerror(-ret));
		return 1;
	}
	g = dfg_graph_attach(d, gname, 0);
	if (g < 0) {
		fprintf(stderr, "coll_bench: attach %s: %s\n", gname,
			strerror(-g));
		return 1;
	}
	ret = dfg_team_join(g, "bench", n, rank, 30000, &t);
	if (ret) {
		fprintf(stderr, "coll_bench: rank %u: join: %s\n", rank,
			strerror(-ret));
		return 1;
	}
	if (rank == 0 && out) {
		csv = fopen(out, "w");
		if (!csv) {
			perror(out);
			return 1;
		}
	}
	b.rank = rank;
	b.size = n;
	b.ctx = t;
	ret = coll_run(&b, o, csv);
	if (ret)
		fprintf(stderr, "coll_bench: rank %u: %s\n", rank,
			strerror(-ret));
	if (csv != stdout)
		fclose(csv);
	dfg_team_leave(t);
	close(g);
	dfg_close(d);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct coll_opts o = COLL_OPTS_DEFAULT;
	unsigned int n = 2, i;
	const char *out = NULL;
	char gname[64];
	pid_t pids[DFG_TEAM_SIZE_MAX];
	struct dfg *d;
	int opt, g, ret, fail = 0;

	while ((opt = getopt(argc, argv, "n:c:m:M:t:o:")) != -1) {
		if (opt == 'n')
			n = strtoul(optarg, NULL, 0);
		else if (!coll_opt(opt, optarg, &o, &out))
			o.mask = 0;
	}
	if (!o.mask || !n || n > DFG_TEAM_SIZE_MAX || !o.min_bytes ||
	    o.max_bytes < o.min_bytes) {
		fprintf(stderr, "usage: %s -n N [-c allreduce,reduce_scatter,alltoall,alltoallv] [-m MIN] [-M MAX] [-t SEC] [-o CSV]\n",
			argv[0]);
		return 2;
	}
	ret = dfg_open(&d, 0);
	if (ret) {
		fprintf(stderr, "coll_bench: /dev/dfg: %s\n", strerror(-ret));
		return 1;
	}
	snprintf(gname, sizeof(gname), "coll-bench-%d", getpid());
	g = dfg_graph_create(d, gname, 0600, 0);
	if (g < 0) {
		fprintf(stderr, "coll_bench: graph: %s\n", strerror(-g));
		return 1;
	}
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			n = i;
			fail = 1;
			break;
		}
		if (pids[i] == 0)
			_exit(rank_main(gname, n, i, &o, out));
	}
	for (i = 0; i < n; i++) {
		int st;

		if (waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			fail = 1;
	}
	close(g);
	dfg_close(d);
	return fail;
}
