// SPDX-License-Identifier: GPL-2.0
/*
 * hold_objects: create a graph "exobj-<pid>" with one arena (id 1, two
 * pages), one read-only exported region (id 2, one page) and a team of
 * one member, "exteam" (id 3), run the command given as arguments while
 * they live, and exit with its status. The graph dies when this process
 * exits. For examples.sh: dfgctl objects must list the three objects
 * with their counters.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dfg_sys.h"

int main(int argc, char **argv)
{
	struct dfg_graph_open o = { .size = sizeof(o), .mode = 0600 };
	struct dfg_arena_create a = { .size = 8192 };
	struct dfg_region r = { .len = 4096 };
	struct dfg_team_join tj = { .size = sizeof(tj), .name = "exteam",
				    .team_size = 1 };
	int dev, g, ret, status;
	pid_t pid;
	char *buf;

	if (argc < 2) {
		fprintf(stderr, "usage: hold_objects COMMAND [ARG...]\n");
		return 2;
	}
	dev = sys_dfg_open();
	if (dev < 0) {
		fprintf(stderr, "open: %s\n", strerror(-dev));
		return 1;
	}
	snprintf(o.name, sizeof(o.name), "exobj-%d", (int)getpid());
	g = sys_dfg_ioctl(dev, DFG_IOC_GRAPH_CREATE, &o);
	if (g < 0) {
		fprintf(stderr, "graph create: %s\n", strerror(-g));
		return 1;
	}
	ret = sys_dfg_ioctl(g, DFG_IOC_ARENA_CREATE, &a);
	if (ret != 1) {
		fprintf(stderr, "arena create: %d\n", ret);
		return 1;
	}
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED)
		return 1;
	r.addr = (__u64)(uintptr_t)buf;
	ret = sys_dfg_ioctl(g, DFG_IOC_REGION_EXPORT, &r);
	if (ret != 2) {
		fprintf(stderr, "region export: %d\n", ret);
		return 1;
	}
	/* The member descriptor lives until exit, and the team with it. */
	ret = sys_dfg_ioctl(g, DFG_IOC_TEAM_JOIN, &tj);
	if (ret < 0 || tj.id != 3) {
		fprintf(stderr, "team join: %d (id %u)\n", ret, tj.id);
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
