// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_roundtrip - round-trip cost of one dfg command, per path.
 *
 * Measures ns per operation of
 *
 *   getppid		the cheapest system call: the floor
 *   ioctl		DFG_IOC_NOP through ioctl(2)
 *   uring		DFG_IOC_NOP as an inline IORING_OP_URING_CMD, batches of
 *			1, 8 and 64 SQEs per io_uring_submit_and_wait()
 *   uring_indirect	the same with DFG_URING_F_INDIRECT (batches 1 and 64)
 *   uring_op_nop	io_uring's own IORING_OP_NOP on the same ring shape,
 *			the best a uring command could do (batches 1 and 64)
 *
 * Each method is warmed up, then timed over several repetitions of N
 * operations (N calibrated so that one repetition takes about -t ms); the
 * figure is the median repetition. Ratios to getppid are what to compare
 * across machines (under TCG absolute times mean little).
 *
 * Output: a table on stdout and CSV (method,batch,ns_per_op,
 * ratio_to_getppid,ops) to -o (default bench/results/cmd_roundtrip.csv).
 * Every NOP's result and echo are checked; any error aborts the run.
 *
 * Talks to /dev/dfg with raw ioctl and liburing, as the selftests do, so
 * that the figures are the module's and not a library's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>
#include <linux/dfg.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define RING_ENTRIES	64
#define MAX_BATCH	64
#define MAX_REPS	31

struct bench_opts {
	const char	*out;		/* CSV path */
	unsigned int	reps;		/* timed repetitions per method */
	unsigned int	target_ms;	/* wanted length of one repetition */
	unsigned long	fixed_ops;	/* -n: ops per repetition, no calibration */
};

struct bench_ctx {
	int		fd;		/* /dev/dfg */
	struct io_uring	ring;		/* SQE128 | CQE32 */
	struct dfg_nop	args[MAX_BATCH];/* indirect argument structs */
	__u64		seq;		/* next NOP value */
};

/* A method: runs @ops operations in batches of @batch; 0 or -errno. */
struct method {
	const char	*name;
	unsigned int	batch;
	int		(*run)(struct bench_ctx *c, unsigned long ops,
			       unsigned int batch);
};

struct result {
	const struct method *m;
	double		ns_per_op;
	unsigned long	ops;		/* operations timed, all repetitions */
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static int run_getppid(struct bench_ctx *c, unsigned long ops,
		       unsigned int batch)
{
	unsigned long i;

	(void)c;
	(void)batch;
	/* syscall(): no libc caching can stand in for the kernel. */
	for (i = 0; i < ops; i++)
		if (syscall(SYS_getppid) < 0)
			return -errno;
	return 0;
}

static int run_ioctl(struct bench_ctx *c, unsigned long ops,
		     unsigned int batch)
{
	struct dfg_nop nop;
	unsigned long i;

	(void)batch;
	for (i = 0; i < ops; i++) {
		memset(&nop, 0, sizeof(nop));
		nop.value = c->seq++;
		if (ioctl(c->fd, DFG_IOC_NOP, &nop) < 0)
			return -errno;
		if (nop.echo != nop.value)
			return -EPROTO;
	}
	return 0;
}

static void prep_cmd(struct bench_ctx *c, struct io_uring_sqe *sqe,
		     __u64 value, int indirect, unsigned int slot)
{
	struct dfg_uring_cmd *cmd = (struct dfg_uring_cmd *)sqe->cmd;

	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = c->fd;
	sqe->cmd_op = DFG_IOC_NOP;
	sqe->user_data = value;
	if (indirect) {
		memset(&c->args[slot], 0, sizeof(c->args[slot]));
		c->args[slot].value = value;
		cmd->flags = DFG_URING_F_INDIRECT;
		cmd->len = sizeof(struct dfg_nop);
		cmd->addr = (__u64)(uintptr_t)&c->args[slot];
	} else {
		struct dfg_nop *nop = (struct dfg_nop *)cmd->args;

		nop->value = value;
	}
}

/* Submits @batch SQEs prepared by @kind, waits for and checks all CQEs. */
static int run_uring_kind(struct bench_ctx *c, unsigned long ops,
			  unsigned int batch, int kind)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned long done = 0;
	unsigned int i, n, head, seen, got;
	int ret;

	while (done < ops) {
		n = ops - done < batch ? ops - done : batch;
		for (i = 0; i < n; i++) {
			sqe = io_uring_get_sqe(&c->ring);
			if (!sqe)
				return -EBUSY;
			if (kind == 2) {
				io_uring_prep_nop(sqe);
				sqe->user_data = c->seq + i;
			} else {
				prep_cmd(c, sqe, c->seq + i, kind, i);
			}
		}
		ret = io_uring_submit_and_wait(&c->ring, n);
		if (ret < 0)
			return ret;
		if ((unsigned int)ret != n)
			return -EIO;
		seen = 0;
		while (seen < n) {
			got = 0;
			io_uring_for_each_cqe(&c->ring, head, cqe) {
				if (cqe->res < 0)
					return cqe->res;
				if (kind == 0 && cqe->big_cqe[0] != cqe->user_data)
					return -EPROTO;
				if (kind == 1 &&
				    c->args[cqe->user_data - c->seq].echo !=
				    cqe->user_data)
					return -EPROTO;
				got++;
			}
			io_uring_cq_advance(&c->ring, got);
			seen += got;
			if (seen < n) {
				ret = io_uring_wait_cqe(&c->ring, &cqe);
				if (ret < 0)
					return ret;
			}
		}
		c->seq += n;
		done += n;
	}
	return 0;
}

static int run_uring(struct bench_ctx *c, unsigned long ops,
		     unsigned int batch)
{
	return run_uring_kind(c, ops, batch, 0);
}

static int run_uring_indirect(struct bench_ctx *c, unsigned long ops,
			      unsigned int batch)
{
	return run_uring_kind(c, ops, batch, 1);
}

static int run_uring_op_nop(struct bench_ctx *c, unsigned long ops,
			    unsigned int batch)
{
	return run_uring_kind(c, ops, batch, 2);
}

static const struct method methods[] = {
	{ "getppid",		1,  run_getppid },
	{ "ioctl",		1,  run_ioctl },
	{ "uring",		1,  run_uring },
	{ "uring",		8,  run_uring },
	{ "uring",		64, run_uring },
	{ "uring_indirect",	1,  run_uring_indirect },
	{ "uring_indirect",	64, run_uring_indirect },
	{ "uring_op_nop",	1,  run_uring_op_nop },
	{ "uring_op_nop",	64, run_uring_op_nop },
};

#define NR_METHODS	(ARRAY_SIZE(methods))

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int measure(struct bench_ctx *c, const struct bench_opts *o,
		   const struct method *m, struct result *r)
{
	double per[MAX_REPS];
	unsigned long ops;
	unsigned int i;
	__u64 t0, dt;
	int ret;

	/* Calibrate (and warm up): how many ops make target_ms. */
	ops = 64 * m->batch;
	for (;;) {
		t0 = now_ns();
		ret = m->run(c, ops, m->batch);
		if (ret)
			return ret;
		dt = now_ns() - t0;
		if (dt >= 20000000ULL || ops >= (1UL << 30))
			break;
		ops *= 4;
	}
	if (o->fixed_ops) {
		ops = o->fixed_ops;
	} else {
		ops = (unsigned long)((double)ops * o->target_ms * 1e6 /
				      (double)dt);
		if (ops < 1000)
			ops = 1000;
	}
	ops = (ops + m->batch - 1) / m->batch * m->batch;

	/* Warm-up at full length, then the timed repetitions. */
	ret = m->run(c, ops, m->batch);
	if (ret)
		return ret;
	for (i = 0; i < o->reps; i++) {
		t0 = now_ns();
		ret = m->run(c, ops, m->batch);
		if (ret)
			return ret;
		per[i] = (double)(now_ns() - t0) / (double)ops;
	}
	qsort(per, o->reps, sizeof(per[0]), cmp_double);
	r->m = m;
	r->ns_per_op = per[o->reps / 2];
	r->ops = ops * o->reps;
	return 0;
}

static int write_csv(const char *path, const struct result *res,
		     unsigned int n)
{
	double floor = res[0].ns_per_op;
	unsigned int i;
	FILE *f;

	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "method,batch,ns_per_op,ratio_to_getppid,ops\n");
	for (i = 0; i < n; i++)
		fprintf(f, "%s,%u,%.1f,%.3f,%lu\n", res[i].m->name,
			res[i].m->batch, res[i].ns_per_op,
			res[i].ns_per_op / floor, res[i].ops);
	if (fclose(f))
		return -errno;
	return 0;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-o CSV] [-r REPS] [-t MS] [-n OPS] [-q]\n"
		"  -o CSV   output (default bench/results/cmd_roundtrip.csv)\n"
		"  -r REPS  timed repetitions per method, median kept (7)\n"
		"  -t MS    length of one repetition (200)\n"
		"  -n OPS   operations per repetition (overrides -t)\n"
		"  -q       quick: -r 3 -t 30 (also if $DFG_BENCH_QUICK is set)\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	struct bench_opts o = {
		.out = "bench/results/cmd_roundtrip.csv",
		.reps = 7,
		.target_ms = 200,
	};
	struct io_uring_params p = {
		.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32,
	};
	struct result res[NR_METHODS];
	struct bench_ctx c = { .fd = -1 };
	const char *quick = getenv("DFG_BENCH_QUICK");
	unsigned int i;
	int opt, ret;

	if (quick && *quick && strcmp(quick, "0")) {
		o.reps = 3;
		o.target_ms = 30;
	}
	while ((opt = getopt(argc, argv, "o:r:t:n:qh")) != -1) {
		switch (opt) {
		case 'o':
			o.out = optarg;
			break;
		case 'r':
			o.reps = strtoul(optarg, NULL, 0);
			break;
		case 't':
			o.target_ms = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			o.fixed_ops = strtoul(optarg, NULL, 0);
			break;
		case 'q':
			o.reps = 3;
			o.target_ms = 30;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (!o.reps || o.reps > MAX_REPS || !o.target_ms)
		usage(argv[0]);

	c.fd = open("/dev/" DFG_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (c.fd < 0) {
		fprintf(stderr, "cmd_roundtrip: /dev/%s: %s\n",
			DFG_DEVICE_NAME, strerror(errno));
		return 1;
	}
	ret = io_uring_queue_init_params(RING_ENTRIES, &c.ring, &p);
	if (ret) {
		fprintf(stderr, "cmd_roundtrip: io_uring: %s\n",
			strerror(-ret));
		return 1;
	}

	printf("%-16s %5s %12s %10s %12s\n", "method", "batch", "ns/op",
	       "x getppid", "ops");
	for (i = 0; i < NR_METHODS; i++) {
		ret = measure(&c, &o, &methods[i], &res[i]);
		if (ret) {
			fprintf(stderr, "cmd_roundtrip: %s batch %u: %s\n",
				methods[i].name, methods[i].batch,
				strerror(-ret));
			return 1;
		}
		printf("%-16s %5u %12.1f %10.2f %12lu\n", res[i].m->name,
		       res[i].m->batch, res[i].ns_per_op,
		       res[i].ns_per_op / res[0].ns_per_op, res[i].ops);
		fflush(stdout);
	}
	ret = write_csv(o.out, res, NR_METHODS);
	if (ret) {
		fprintf(stderr, "cmd_roundtrip: %s: %s\n", o.out,
			strerror(-ret));
		return 1;
	}
	io_uring_queue_exit(&c.ring);
	close(c.fd);
	return 0;
}
