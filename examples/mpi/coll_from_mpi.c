// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * coll_from_mpi: an MPI program that forms a dfg team from
 * MPI_COMM_WORLD (<dfg/coll_mpi.h>) and checks dfg_allreduce() against
 * MPI_Allreduce() on the same data.
 *
 *   mpirun -np 4 coll_from_mpi
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <dfg/coll_mpi.h>

int main(int argc, char **argv)
{
	enum { COUNT = 100000 };
	int *in, *a, *b, rank, size, ret, bad = 0, all;
	struct dfg_team *t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	in = malloc(COUNT * sizeof(int));
	a = malloc(COUNT * sizeof(int));
	b = malloc(COUNT * sizeof(int));
	if (!in || !a || !b)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int i = 0; i < COUNT; i++)
		in[i] = i * (rank + 1) % 1000;

	ret = dfg_team_from_mpi(MPI_COMM_WORLD, -1, &t);
	if (ret) {
		fprintf(stderr, "rank %d: dfg_team_from_mpi: %s\n", rank,
			strerror(-ret));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (dfg_team_rank(t) != (unsigned int)rank ||
	    dfg_team_size(t) != (unsigned int)size)
		bad = 1;
	ret = dfg_allreduce(t, in, a, COUNT, DFG_INT32, DFG_SUM);
	MPI_Allreduce(in, b, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (ret || memcmp(a, b, COUNT * sizeof(int)))
		bad = 1;
	MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("coll_from_mpi: %d ranks, dfg_allreduce %s MPI_Allreduce\n",
		       size, all ? "DIFFERS FROM" : "equals");
	dfg_team_leave(t);
	free(in);
	free(a);
	free(b);
	MPI_Finalize();
	return all;
}
