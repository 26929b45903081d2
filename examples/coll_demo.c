// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * coll_demo: N processes form a dfg team, run allreduce and alltoall,
 * check every result and print the bandwidth they reached.
 *
 *   coll_demo [N [MIB]]      (default 4 ranks, 4 MiB vectors)
 *
 * The parent creates a graph; each forked rank opens /dev/dfg, attaches
 * the graph by name and joins the team "demo". Values are small integers
 * in float32, so the sums are exact whatever the reduction order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dfg/coll.h>
#include <dfg/dfg.h>
#include <dfg/graph.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int fail(unsigned int rank, const char *what, int err)
{
	fprintf(stderr, "coll_demo: rank %u: %s: %s\n", rank, what,
		strerror(-err));
	return 1;
}

static int rank_main(const char *gname, unsigned int n, unsigned int rank,
		     size_t count)
{
	size_t block = 256, i, bad = 0;
	float *in, *out;
	unsigned char *sbuf, *rbuf;
	struct dfg_team *t;
	struct dfg *d;
	double t0, dt;
	int g, ret, iters = 5;

	ret = dfg_open(&d, DFG_OPEN_NO_RING);
	if (ret)
		return fail(rank, "dfg_open", ret);
	g = dfg_graph_attach(d, gname, 0);
	if (g < 0)
		return fail(rank, "dfg_graph_attach", g);
	ret = dfg_team_join(g, "demo", n, rank, 10000, &t);
	if (ret)
		return fail(rank, "dfg_team_join", ret);

	in = malloc(count * sizeof(*in));
	out = malloc(count * sizeof(*out));
	sbuf = malloc(block * n);
	rbuf = malloc(block * n);
	if (!in || !out || !sbuf || !rbuf)
		return fail(rank, "malloc", -ENOMEM);

	/* allreduce: element i of rank r is (i + r) % 100 */
	for (i = 0; i < count; i++)
		in[i] = (float)((i + rank) % 100);
	ret = dfg_barrier(t);
	t0 = now();
	for (int k = 0; k < iters && !ret; k++)
		ret = dfg_allreduce(t, in, out, count, DFG_FLOAT32, DFG_SUM);
	dt = (now() - t0) / iters;
	if (ret)
		return fail(rank, "dfg_allreduce", ret);
	for (i = 0; i < count; i++) {
		double want = 0;

		for (unsigned int r = 0; r < n; r++)
			want += (i + r) % 100;
		bad += out[i] != (float)want;
	}
	if (rank == 0)
		printf("allreduce: %u ranks, %zu floats: %.2f ms per call, bus bandwidth %.0f MB/s, %s\n",
		       n, count, dt * 1e3,
		       count * sizeof(float) * 2.0 * (n - 1) / n / dt / 1e6,
		       bad ? "WRONG" : "checked");

	/* alltoall: byte k of the block for rank j is (rank * 31 + j + k) */
	for (unsigned int j = 0; j < n; j++)
		for (i = 0; i < block; i++)
			sbuf[j * block + i] = (unsigned char)(rank * 31 + j + i);
	ret = dfg_barrier(t);
	t0 = now();
	for (int k = 0; k < iters && !ret; k++)
		ret = dfg_alltoall(t, sbuf, rbuf, block);
	dt = (now() - t0) / iters;
	if (ret)
		return fail(rank, "dfg_alltoall", ret);
	for (unsigned int j = 0; j < n; j++)
		for (i = 0; i < block; i++)
			bad += rbuf[j * block + i] !=
			       (unsigned char)(j * 31 + rank + i);
	if (rank == 0)
		printf("alltoall:  %u ranks, %zu-byte blocks: %.1f us per call, %s\n",
		       n, block, dt * 1e6, bad ? "WRONG" : "checked");

	dfg_team_leave(t);
	free(in);
	free(out);
	free(sbuf);
	free(rbuf);
	close(g);
	dfg_close(d);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned int n = argc > 1 ? strtoul(argv[1], NULL, 0) : 4;
	size_t mib = argc > 2 ? strtoul(argv[2], NULL, 0) : 4;
	pid_t pids[DFG_TEAM_SIZE_MAX];
	char gname[64];
	struct dfg *d;
	int g, ret, st, failed = 0;

	if (!n || n > DFG_TEAM_SIZE_MAX || !mib || mib > 1024) {
		fprintf(stderr, "usage: %s [N (1..%d) [MIB (1..1024)]]\n",
			argv[0], DFG_TEAM_SIZE_MAX);
		return 2;
	}
	ret = dfg_open(&d, DFG_OPEN_NO_RING);
	if (ret)
		return fail(0, "dfg_open", ret);
	snprintf(gname, sizeof(gname), "coll-demo-%d", getpid());
	g = dfg_graph_create(d, gname, 0600, DFG_GRAPH_O_CLOEXEC);
	if (g < 0)
		return fail(0, "dfg_graph_create", g);
	fflush(stdout);
	for (unsigned int r = 0; r < n; r++) {
		pids[r] = fork();
		if (pids[r] < 0) {
			perror("fork");
			n = r;
			failed = 1;
			break;
		}
		if (pids[r] == 0)
			_exit(rank_main(gname, n, r,
					(mib << 20) / sizeof(float)));
	}
	for (unsigned int r = 0; r < n; r++)
		if (waitpid(pids[r], &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			failed = 1;
	close(g);
	dfg_close(d);
	printf("coll_demo: %s\n", failed ? "FAILED" : "ok");
	return failed;
}
