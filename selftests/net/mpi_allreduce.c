// SPDX-License-Identifier: GPL-2.0
/*
 * An MPI allreduce across the rig's nodes, checked against its closed form:
 * rank r contributes r + i at index i, so every rank must end with
 * n * i + n * (n - 1) / 2. Prints "allreduce ok <ranks> <count>" on rank 0,
 * exits non-zero on any wrong element. Needs only MPI, not libdfg: it
 * proves the rig's launcher and transport (UCX over rxe0), nothing of dfg.
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, n, count = argc > 1 ? atoi(argv[1]) : 1024;
	long bad = 0, all_bad = 0;
	long long *in, *out;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (count <= 0)
		MPI_Abort(MPI_COMM_WORLD, 2);
	in = malloc(sizeof(*in) * count);
	out = malloc(sizeof(*out) * count);
	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int i = 0; i < count; i++)
		in[i] = rank + i;
	MPI_Allreduce(in, out, count, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < count; i++)
		bad += out[i] != (long long)n * i + (long long)n * (n - 1) / 2;
	MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("allreduce %s %d %d\n", all_bad ? "WRONG" : "ok", n, count);
	free(in);
	free(out);
	MPI_Finalize();
	return all_bad ? 1 : 0;
}
