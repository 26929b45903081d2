// SPDX-License-Identifier: GPL-2.0
/*
 * coll_mpi: the Open MPI baseline of the collective benchmark. Same loop
 * and CSV schema as coll_bench (coll_common.h); run under mpirun:
 *
 *   mpirun -np N coll_mpi [-c LIST] [-m MIN] [-M MAX] [-t SEC] [-o CSV]
 *
 * float32 sum for the reductions, MPI_BYTE blocks for alltoall(v).
 */
#include <getopt.h>
#include <limits.h>
#include <mpi.h>
#include <unistd.h>

#include "coll_common.h"

struct mpi_ctx {
	int *counts;	/* reduce_scatter receive counts, alltoallv ints */
};

static int mpi_ret(int rc)
{
	return rc == MPI_SUCCESS ? 0 : -EIO;
}

static int mpi_allreduce(void *ctx, const float *s, float *r, size_t count)
{
	(void)ctx;
	return mpi_ret(MPI_Allreduce(s, r, (int)count, MPI_FLOAT, MPI_SUM,
				     MPI_COMM_WORLD));
}

static int mpi_reduce_scatter(void *ctx, const float *s, float *r,
			      size_t count)
{
	struct mpi_ctx *m = ctx;
	int n, i;

	MPI_Comm_size(MPI_COMM_WORLD, &n);
	for (i = 0; i < n; i++)
		m->counts[i] = (int)count;
	return mpi_ret(MPI_Reduce_scatter(s, r, m->counts, MPI_FLOAT, MPI_SUM,
					  MPI_COMM_WORLD));
}

static int mpi_alltoall(void *ctx, const void *s, void *r, size_t block)
{
	(void)ctx;
	return mpi_ret(MPI_Alltoall(s, (int)block, MPI_BYTE, r, (int)block,
				    MPI_BYTE, MPI_COMM_WORLD));
}

static int mpi_alltoallv(void *ctx, const void *s, const size_t *sc,
			 const size_t *sd, void *r, const size_t *rc,
			 const size_t *rd)
{
	struct mpi_ctx *m = ctx;
	int n, i, *isc, *isd, *irc, *ird;

	MPI_Comm_size(MPI_COMM_WORLD, &n);
	isc = m->counts;
	isd = isc + n;
	irc = isd + n;
	ird = irc + n;
	for (i = 0; i < n; i++) {
		if (sd[i] + sc[i] > INT_MAX || rd[i] + rc[i] > INT_MAX)
			return -EOVERFLOW;
		isc[i] = (int)sc[i];
		isd[i] = (int)sd[i];
		irc[i] = (int)rc[i];
		ird[i] = (int)rd[i];
	}
	return mpi_ret(MPI_Alltoallv(s, isc, isd, MPI_BYTE, r, irc, ird,
				     MPI_BYTE, MPI_COMM_WORLD));
}

static int mpi_barrier(void *ctx)
{
	(void)ctx;
	return mpi_ret(MPI_Barrier(MPI_COMM_WORLD));
}

static int mpi_max_double(void *ctx, double *v)
{
	(void)ctx;
	return mpi_ret(MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_MAX,
				     MPI_COMM_WORLD));
}

static const char *mpi_algo(void *ctx, enum coll_kind kind)
{
	(void)ctx;
	(void)kind;
	return "ompi-tuned";
}

int main(int argc, char **argv)
{
	struct coll_opts o = COLL_OPTS_DEFAULT;
	struct coll_backend b = {
		.impl = "mpi",
		.allreduce = mpi_allreduce,
		.reduce_scatter = mpi_reduce_scatter,
		.alltoall = mpi_alltoall,
		.alltoallv = mpi_alltoallv,
		.barrier = mpi_barrier,
		.max_double = mpi_max_double,
		.algo = mpi_algo,
	};
	struct mpi_ctx m;
	const char *out = NULL;
	FILE *csv = stdout;
	int rank, size, opt, ret;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	while ((opt = getopt(argc, argv, "c:m:M:t:o:")) != -1) {
		if (!coll_opt(opt, optarg, &o, &out))
			o.mask = 0;
	}
	if (!o.mask || !o.min_bytes || o.max_bytes < o.min_bytes) {
		if (!rank)
			fprintf(stderr, "usage: mpirun -np N %s [-c allreduce,reduce_scatter,alltoall,alltoallv] [-m MIN] [-M MAX] [-t SEC] [-o CSV]\n",
				argv[0]);
		MPI_Finalize();
		return 2;
	}
	m.counts = calloc(4 * size, sizeof(int));
	if (!m.counts)
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (!rank && out) {
		csv = fopen(out, "w");
		if (!csv) {
			perror(out);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	b.rank = rank;
	b.size = size;
	b.ctx = &m;
	ret = coll_run(&b, &o, csv);
	if (ret && !rank)
		fprintf(stderr, "coll_mpi: %s\n", strerror(-ret));
	if (csv != stdout)
		fclose(csv);
	free(m.counts);
	MPI_Finalize();
	return ret ? 1 : 0;
}
