// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * pipeline_demo: a zero-copy pipeline of five processes over dfg channels.
 *
 *   producer -> stage 1 -> stage 2 -> stage 3 -> consumer
 *
 * The parent creates graph "pipeline-demo", a 16 MiB arena with the
 * buffer allocator and four channels over that arena, and opens every
 * endpoint before it forks (so that end of stream means "every producer
 * has closed"). The producer allocates a buffer per message, writes the
 * message into it and sends its descriptor (offset, length, tag). Each
 * stage passes descriptors on with dfg_chan_forward(), never touching the
 * payload. The consumer checks each message, checks that it arrives at
 * the offset the producer wrote it at (the producer records offsets in a
 * shared table), and frees the buffer back to the allocator.
 *
 * usage: pipeline_demo [MESSAGES]     (default 100000)
 *
 * Needs the dfg module (run it in the test VM).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dfg/dfg.h>

#define GRAPH		"pipeline-demo"
#define ARENA_SIZE	(16U << 20)
#define STAGES		3		/* forwarding stages */
#define NCHAN		(STAGES + 1)
#define DEPTH		256
#define MSG_MAX		64
#define BATCH		32

static struct dfg_chan *in[NCHAN], *out[NCHAN];

static int die(const char *what, int err)
{
	fprintf(stderr, "pipeline_demo: %s: %s\n", what, strerror(-err));
	return 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Keep only this process's endpoints: consumer of @rx, producer of @tx. */
static void keep_only(int rx, int tx)
{
	int i;

	for (i = 0; i < NCHAN; i++) {
		if (i != rx)
			dfg_chan_close(in[i]);
		if (i != tx)
			dfg_chan_close(out[i]);
	}
}

static int stage(int n)
{
	long fwd = 0;
	int ret;

	keep_only(n - 1, n);
	while ((ret = dfg_chan_forward(in[n - 1], out[n], BATCH)) > 0)
		fwd += ret;
	if (ret < 0)
		return die("forward", ret);
	printf("stage %d (pid %d): forwarded %ld descriptors\n", n, getpid(),
	       fwd);
	dfg_chan_close(in[n - 1]);
	dfg_chan_close(out[n]);
	return 0;
}

static int consumer(struct dfg_arena *a, const __u64 *offs, long total)
{
	struct dfg_desc d[BATCH];
	long got = 0, moved = 0;
	char want[MSG_MAX];
	int n, i;

	keep_only(NCHAN - 1, -1);
	while ((n = dfg_chan_recv(in[NCHAN - 1], d, BATCH, 0)) > 0) {
		for (i = 0; i < n; i++, got++) {
			const char *buf = dfg_chan_buf(in[NCHAN - 1], &d[i]);
			int len = snprintf(want, sizeof(want), "message %ld",
					   got);

			if (!buf || d[i].tag != (__u64)got ||
			    d[i].len != (__u32)len + 1 ||
			    memcmp(buf, want, len + 1)) {
				fprintf(stderr, "pipeline_demo: message %ld "
					"corrupted\n", got);
				return 1;
			}
			if (d[i].off != offs[got])
				moved++;
			dfg_buf_free(a, d[i].off);
		}
	}
	if (n < 0)
		return die("recv", n);
	printf("consumer (pid %d): %ld messages verified, %ld at another "
	       "offset than written, buffers freed\n", getpid(), got, moved);
	dfg_chan_close(in[NCHAN - 1]);
	return got == total && !moved ? 0 : 1;
}

static int producer(struct dfg_arena *a, __u64 *offs, long total)
{
	struct dfg_desc d;
	long i;
	int len, ret;

	for (i = 0; i < total; i++) {
		__s64 off = dfg_buf_alloc(a, MSG_MAX);
		char *buf;

		if (off < 0)
			return die("dfg_buf_alloc", (int)off);
		buf = dfg_arena_ptr(a, off, MSG_MAX);
		len = snprintf(buf, MSG_MAX, "message %ld", i);
		offs[i] = off;
		d = (struct dfg_desc){ .off = off, .len = len + 1, .tag = i };
		ret = dfg_chan_send(out[0], &d, 1, 0);
		if (ret < 0)
			return die("send", ret);
	}
	dfg_chan_close(out[0]);		/* end of stream for stage 1 */
	return 0;
}

int main(int argc, char **argv)
{
	long total = argc > 1 ? atol(argv[1]) : 100000;
	pid_t pids[STAGES + 1];
	int g, i, ret, st, fail = 0;
	struct dfg_arena *a;
	struct dfg *d;
	double t0, t1;
	__u64 *offs;

	if (total <= 0)
		return fprintf(stderr, "usage: pipeline_demo [MESSAGES]\n"), 2;
	offs = mmap(NULL, total * sizeof(*offs), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (offs == MAP_FAILED)
		return die("mmap", -errno);
	ret = dfg_open(&d, DFG_OPEN_NO_RING);
	if (ret < 0)
		return die("dfg_open (is the module loaded?)", ret);
	g = dfg_graph_create(d, GRAPH, 0600, DFG_GRAPH_O_CLOEXEC);
	if (g < 0)
		return die("dfg_graph_create", g);
	ret = dfg_arena_create(g, ARENA_SIZE, &a);
	if (ret < 0)
		return die("dfg_arena_create", ret);
	ret = dfg_alloc_init(a);
	if (ret < 0)
		return die("dfg_alloc_init", ret);
	for (i = 0; i < NCHAN; i++) {
		int id = dfg_chan_create(g, dfg_arena_id(a), DEPTH, 1);

		if (id < 0)
			return die("dfg_chan_create", id);
		ret = dfg_chan_open(g, id, DFG_CHAN_CONSUMER, a, &in[i]);
		if (!ret)
			ret = dfg_chan_open(g, id, DFG_CHAN_PRODUCER, a,
					    &out[i]);
		if (ret < 0)
			return die("dfg_chan_open", ret);
	}
	printf("graph \"%s\": arena of %u KiB, %d channels of depth %d, "
	       "%d processes\n", GRAPH, ARENA_SIZE >> 10, NCHAN, DEPTH,
	       STAGES + 2);
	fflush(stdout);

	t0 = now();
	for (i = 1; i <= STAGES + 1; i++) {
		pids[i - 1] = fork();
		if (pids[i - 1] < 0)
			return die("fork", -errno);
		if (!pids[i - 1]) {
			ret = i <= STAGES ? stage(i) : consumer(a, offs, total);
			fflush(stdout);
			_exit(ret);
		}
	}
	keep_only(-1, 0);
	ret = producer(a, offs, total);
	for (i = 0; i <= STAGES; i++)
		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			fail = 1;
	t1 = now();
	if (ret || fail) {
		fprintf(stderr, "pipeline_demo: FAILED\n");
		return 1;
	}
	printf("%ld messages through %d hops in %.3f s: %.0f messages/s\n",
	       total, NCHAN, t1 - t0, total / (t1 - t0));
	printf("zero copy: every message arrived at the offset it was "
	       "written at; payload never copied\n");
	dfg_arena_unmap(a);
	close(g);
	dfg_close(d);
	munmap(offs, total * sizeof(*offs));
	return 0;
}
