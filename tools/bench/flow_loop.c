// SPDX-License-Identifier: GPL-2.0
/*
 * flow_loop: the hand-written baseline of the in-set hop benchmark
 * (tools/bench/run.sh, run_flow_hop).
 *
 *   flow_loop -n HOPS -c COUNT [-r REPS] [-m comp] -o FILE
 *
 * Does in one process, by hand, what `dfg run` does for the graph
 * generate(count=COUNT, pattern="item {}") -> HOPS x map(expr="$0") ->
 * write_lines(FILE): for each element, builds it, calls HOPS pass-through
 * functions through a table of pointers (so the compiler can neither
 * inline nor drop them), each handing on a pointer and a length, and
 * writes the result through a 64 KiB buffer. Its output is the dfg run's,
 * byte for byte (run.sh checks). The time per hop is the slope between
 * HOPS = 0 and HOPS = N runs: what one function call per element costs,
 * the limit a folded set's hop is held against.
 *
 * Prints the seconds the work took (open to close of FILE, the process's
 * start-up left out as run.sh leaves out dfg run's), the best of REPS
 * passes (default 3): the loop's slope is a few ns per hop, and one
 * pass's noise on a loaded host is larger than that.
 *
 * -m comp puts in place of the functions HOPS instances of the built-in
 * map (expr="$0") made with the component API, each one's emit hook
 * calling the next one's compute(), as a folded set's members call each
 * other, without the module and without the set runtime's per-hop
 * counters and profiler marks (libdfg/run/set.h). For instruction
 * counts, which a loaded host does not change:
 *   valgrind --tool=callgrind flow_loop -r 1 -n 20 -c 100000 [-m comp] -o F
 * less the same with -n 0, over 20 x 100000, is one hop's instructions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dfg/component.h>

#define MAX_HOPS	64
#define OUT_BUF		(64 * 1024)

struct elem {
	const char	*data;
	size_t		len;
};

typedef void (*hop_fn)(struct elem *e);

/* A pass-through, kept out of line as a component's compute() is. */
static __attribute__((noinline)) void hop(struct elem *e)
{
	__asm__ volatile("" : : "r"(e) : "memory");
}

static hop_fn hops[MAX_HOPS];

static char obuf[OUT_BUF];
static size_t oused;
static int out_fd;

/* -m comp: the chain of map instances */
static struct dfg_comp *chain[MAX_HOPS + 1];

static int flush_out(int fd)
{
	size_t done = 0;

	while (done < oused) {
		ssize_t n = write(fd, obuf + done, oused - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		done += (size_t)n;
	}
	oused = 0;
	return 0;
}

static int put(int fd, const char *p, size_t len)
{
	int ret;

	if (oused + len + 1 > sizeof(obuf)) {
		ret = flush_out(fd);
		if (ret)
			return ret;
	}
	memcpy(obuf + oused, p, len);
	oused += len;
	obuf[oused++] = '\n';
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Member @cookie's output: the next member's input, or the file. */
static int next_comp(struct dfg_comp *c, void *cookie, unsigned int port,
		     const struct dfg_elem *e)
{
	long i = (long)cookie;

	(void)c;
	(void)port;
	if (chain[i + 1])
		return dfg_comp_compute(chain[i + 1], 0, e);
	return put(out_fd, e->data, e->len);
}

static int make_chain(int nhops)
{
	const struct dfg_param expr = { .key = "expr", .value = "$0" };
	const struct dfg_comp_type *map = dfg_comp_find("map");
	struct dfg_comp_attr a = {
		.name = "map", .nr_in = 1, .nr_out = 1, .degree = 1,
		.params = &expr, .nr_params = 1,
	};
	long i;
	int ret;

	if (!map)
		return -ENOENT;
	for (i = 0; i < nhops; i++) {
		ret = dfg_comp_create(map, &a, &chain[i]);
		if (ret)
			return ret;
		dfg_comp_set_emit(chain[i], next_comp, (void *)i);
		ret = dfg_comp_init(chain[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* One pass: COUNT elements through @nhops hops into @path. */
static int pass(const char *path, long long count, int nhops, bool comp)
{
	char buf[64];
	long long k;
	int ret = 0, i;

	out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out_fd < 0)
		return -errno;
	for (k = 0; k < count && !ret; k++) {
		struct elem e = { .data = buf };

		e.len = (size_t)snprintf(buf, sizeof(buf), "item %lld", k);
		if (comp && nhops) {
			struct dfg_elem de = { .data = buf, .len = e.len };

			ret = dfg_comp_compute(chain[0], 0, &de);
			continue;
		}
		for (i = 0; i < nhops; i++)
			hops[i](&e);
		ret = put(out_fd, e.data, e.len);
	}
	if (!ret)
		ret = flush_out(out_fd);
	if (close(out_fd) && !ret)
		ret = -errno;
	return ret;
}

int main(int argc, char **argv)
{
	long long count = -1;
	const char *path = NULL;
	int nhops = -1, reps = 3, opt, ret, i;
	bool comp = false;
	double best = 0;

	while ((opt = getopt(argc, argv, "n:c:r:m:o:")) != -1) {
		switch (opt) {
		case 'n':
			nhops = atoi(optarg);
			break;
		case 'c':
			count = atoll(optarg);
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 'm':
			if (strcmp(optarg, "comp"))
				goto usage;
			comp = true;
			break;
		case 'o':
			path = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (nhops < 0 || nhops > MAX_HOPS || count < 0 || reps < 1 || !path)
		goto usage;
	for (i = 0; i < nhops; i++)
		hops[i] = hop;
	ret = comp ? make_chain(nhops) : 0;
	if (ret) {
		fprintf(stderr, "flow_loop: map: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 0; i < reps; i++) {
		double t0 = now_s(), t;

		ret = pass(path, count, nhops, comp);
		if (ret) {
			fprintf(stderr, "flow_loop: %s: %s\n", path,
				strerror(-ret));
			return 1;
		}
		t = now_s() - t0;
		if (!i || t < best)
			best = t;
	}
	printf("%.6f\n", best);
	for (i = 0; i < nhops && comp; i++)
		dfg_comp_destroy(chain[i]);
	return 0;
usage:
	fprintf(stderr,
		"usage: flow_loop -n HOPS -c COUNT [-r REPS] [-m comp] -o FILE\n");
	return 2;
}
