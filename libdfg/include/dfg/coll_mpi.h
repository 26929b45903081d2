/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg: a dfg team from an MPI communicator.
 *
 * For applications that already use MPI: include this header after
 * <mpi.h> and call dfg_team_from_mpi() collectively on a communicator;
 * dfg's collectives then run on the team. On one machine the team is a
 * kernel team over shared memory; across machines a network team
 * (dfg_team_join_net(), bootstrapped with MPI_Allgather). The function is
 * inline, so libdfg itself does not depend on an MPI library: it is built
 * with the application, whenever MPI's headers are there.
 */
#ifndef _DFG_COLL_MPI_H
#define _DFG_COLL_MPI_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>

#include <dfg/coll.h>
#include <dfg/dfg.h>
#include <dfg/graph.h>

/* dfg_team_join_net()'s allgather over the communicator at @arg. */
static inline int __dfg_mpi_allgather(const void *mine, void *all, size_t len,
				      void *arg)
{
	if (len > (size_t)INT_MAX)
		return -EOVERFLOW;
	return MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len,
			     MPI_BYTE, *(MPI_Comm *)arg) == MPI_SUCCESS ?
	       0 : -EIO;
}

/*
 * Does @comm span machines (or does DFG_TEAM_NET=1 ask for the network
 * team anyway)? 1, 0, or -EIO. The same answer on every rank.
 */
static inline int __dfg_mpi_spans_nodes(MPI_Comm comm, int size)
{
	const char *env = getenv("DFG_TEAM_NET");
	int lsize = 0, want = env && *env == '1', any = 0;
	MPI_Comm local;

	if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
				&local) != MPI_SUCCESS)
		return -EIO;
	if (MPI_Comm_size(local, &lsize) != MPI_SUCCESS)
		lsize = -1;
	MPI_Comm_free(&local);
	if (lsize < 0)
		return -EIO;
	want |= lsize < size;
	if (MPI_Allreduce(&want, &any, 1, MPI_INT, MPI_MAX, comm) !=
	    MPI_SUCCESS)
		return -EIO;
	return any;
}

/**
 * dfg_team_from_mpi() - form a dfg team of the processes of @comm
 * @comm:	the communicator; collective over it
 * @graph_fd:	a graph descriptor opened for writing by every process, or
 *		-1: rank 0 then creates a graph (mode 0600) that the others
 *		attach by name, and the team keeps it alive
 * @out:	the team: rank and size are those of @comm
 *
 * When @comm spans machines (MPI_Comm_split_type with
 * MPI_COMM_TYPE_SHARED is smaller than @comm), or DFG_TEAM_NET=1 is set,
 * the team is a network team: dfg_team_join_net() with MPI_Allgather as
 * its bootstrap, @graph_fd unused. Else rank 0 picks a team name unique
 * on the machine and broadcasts it (with the graph's name when it
 * created one); every rank joins. Returns 0, or
 * -errno: -EIO for an MPI error, the errors of dfg_open(),
 * dfg_graph_create() and dfg_graph_attach() (on every rank: the ranks
 * agree on them before joining), and those of dfg_team_join() (a rank
 * whose join fails leaves the others' joins to time out after 30 s).
 */
static inline int dfg_team_from_mpi(MPI_Comm comm, int graph_fd,
				    struct dfg_team **out)
{
	static unsigned int dfg_mpi_teams;	/* per process: unique names */
	char names[2][64] = { "", "" };
	int rank, size, ret = 0, worst, g = graph_fd;
	struct dfg *d = NULL;

	*out = NULL;
	if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
	    MPI_Comm_size(comm, &size) != MPI_SUCCESS)
		return -EIO;
	ret = __dfg_mpi_spans_nodes(comm, size);
	if (ret < 0)
		return ret;
	if (ret)
		return dfg_team_join_net((unsigned int)size,
					 (unsigned int)rank,
					 __dfg_mpi_allgather, &comm, out);
	if (rank == 0) {
		/* Both unique: a process may form several teams at once. */
		snprintf(names[0], sizeof(names[0]), "mpi-%d-%u", getpid(),
			 dfg_mpi_teams);
		snprintf(names[1], sizeof(names[1]), "mpi-graph-%d-%u",
			 getpid(), dfg_mpi_teams++);
		if (g < 0) {
			ret = dfg_open(&d, DFG_OPEN_NO_RING);
			if (!ret) {
				g = dfg_graph_create(d, names[1], 0600,
						     DFG_GRAPH_O_CLOEXEC);
				ret = g < 0 ? g : 0;
			}
		}
	}
	if (MPI_Bcast(names, sizeof(names), MPI_CHAR, 0, comm) != MPI_SUCCESS)
		return -EIO;
	if (rank != 0 && g < 0) {
		ret = dfg_open(&d, DFG_OPEN_NO_RING);
		if (!ret) {
			g = dfg_graph_attach(d, names[1], 0);
			ret = g < 0 ? g : 0;
		}
	}
	/* Rank 0's graph exists before anyone attaches: the Bcast orders it. */
	if (MPI_Allreduce(&ret, &worst, 1, MPI_INT, MPI_MIN, comm) !=
	    MPI_SUCCESS)
		worst = -EIO;
	if (!worst)
		ret = dfg_team_join(g, names[0], (unsigned int)size,
				    (unsigned int)rank, 30000, out);
	else if (!ret)
		ret = worst;
	/* The team holds the graph; our own descriptor goes. */
	if (graph_fd < 0 && g >= 0)
		close(g);
	if (d)
		dfg_close(d);
	return ret;
}

#endif /* _DFG_COLL_MPI_H */
