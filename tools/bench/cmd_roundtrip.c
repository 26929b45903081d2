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
 *   uring_fixed	uring with /dev/dfg registered as the ring's fixed file
 *			(IOSQE_FIXED_FILE): no file reference taken per SQE
 *			(batches 1 and 64)
 *   uring_res0	inline NOPs of value 0, which succeed with res 0 and
 *			res2 0: the module returns them to io_uring, which
 *			posts them with the submit's batch (batches 1 and 64)
 *   uring_op_nop	io_uring's own IORING_OP_NOP on the same ring shape,
 *			the best a uring command could do (batches 1 and 64)
 *   wait_ioctl	a channel wait satisfied by a peer thread that pushes
 *			and WAKEs, as libdfg's blocking receive does it over
 *			ioctl (DFG_NO_URING): batch 1, and 64 channels waited
 *			for one after the other
 *   wait_uring	the same waits as SQEs on the thread's wait ring
 *			(dfg_chan_prep_wait()): batch 1, and 64 channels in
 *			one io_uring_enter()
 *
 * Each method is warmed up, then timed over several repetitions of N
 * operations (N calibrated so that one repetition takes about -t ms); the
 * figure is the median repetition. Ratios to getppid are what to compare
 * across machines (under TCG absolute times mean little).
 *
 * Output: a table on stdout and CSV (method,batch,ns_per_op,
 * ratio_to_getppid,ops,ratio_to_op_nop) to -o (default
 * bench/results/cmd_roundtrip.csv); ratio_to_op_nop compares with
 * uring_op_nop at the same batch (batch 1 for batch 8). Every NOP's result
 * and echo, and every descriptor of a wait round, are checked; any error
 * aborts the run.
 *
 * The NOP rows talk to /dev/dfg with raw ioctl and liburing, as the
 * selftests do, so that the figures are the module's and not a library's.
 * The wait rows are what a libdfg consumer pays: one round is the worker
 * thread arming its waits (the waiting flag, and on the ring the SQEs),
 * sending the peer a go, and waiting; the peer, parked on the go channel,
 * pushes one descriptor into each channel waited for (each push WAKEs);
 * figures are per wait.
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

#include <pthread.h>

#include <dfg/dfg.h>
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
			       unsigned int batch, int arg);
	int		arg;	/* uring methods: enum uring_kind; wait methods:
				 * on the wait ring, else ioctl */
};

/* Each figure as median, min, max over the repetitions. */
struct result {
	const struct method *m;
	double		ns[3];		/* ns per op */
	double		to_getppid[3];	/* per-repetition ratio to getppid */
	double		to_op_nop[3];	/* ... to IORING_OP_NOP, same batch */
	unsigned long	ops;		/* operations timed, all repetitions */
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static int run_getppid(struct bench_ctx *c, unsigned long ops,
		       unsigned int batch, int arg)
{
	unsigned long i;

	(void)c;
	(void)batch;
	(void)arg;
	/* syscall(): no libc caching can stand in for the kernel. */
	for (i = 0; i < ops; i++)
		if (syscall(SYS_getppid) < 0)
			return -errno;
	return 0;
}

static int run_ioctl(struct bench_ctx *c, unsigned long ops,
		     unsigned int batch, int arg)
{
	struct dfg_nop nop;
	unsigned long i;

	(void)batch;
	(void)arg;
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

/* What the SQEs of a uring method are. */
enum uring_kind {
	URING_INLINE,		/* inline NOP echoing a value in res2 */
	URING_INDIRECT,		/* the same, DFG_URING_F_INDIRECT */
	URING_OP_NOP,		/* IORING_OP_NOP */
	URING_RES0,		/* inline NOP of value 0: res 0, res2 0 */
	URING_FIXED,		/* URING_INLINE on the registered file */
};

/* Submits @batch SQEs prepared by @kind, waits for and checks all CQEs. */
static int run_uring(struct bench_ctx *c, unsigned long ops,
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
			if (kind == URING_OP_NOP) {
				io_uring_prep_nop(sqe);
				sqe->user_data = c->seq + i;
			} else {
				prep_cmd(c, sqe,
					 kind == URING_RES0 ? 0 : c->seq + i,
					 kind == URING_INDIRECT, i);
			}
			if (kind == URING_FIXED) {
				sqe->fd = 0;
				sqe->flags |= IOSQE_FIXED_FILE;
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
				if ((kind == URING_INLINE ||
				     kind == URING_FIXED) &&
				    cqe->big_cqe[0] != cqe->user_data)
					return -EPROTO;
				if (kind == URING_RES0 &&
				    (cqe->res || cqe->big_cqe[0] ||
				     cqe->user_data))
					return -EPROTO;
				if (kind == URING_INDIRECT &&
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

/* ------------------------------------------------------------------------
 * Channel waits satisfied by a peer
 * ------------------------------------------------------------------------
 */

#define WAIT_CHANS	MAX_BATCH
#define WAIT_STOP	(~0ULL)

/*
 * struct wait_bench - the two threads of the wait methods
 * @gfd:	graph of the channels
 * @pool:	arena the descriptors point into
 * @in_c:	channels the worker waits for: consumers (worker)
 * @in_p:	their producers (peer)
 * @go_c:	the worker's go to the peer, a descriptor whose tag is the
 *		batch (WAIT_STOP: exit): consumer (peer)
 * @go_p:	its producer (worker)
 * @ring:	wait on the thread's ring (else DFG_NO_URING: ioctl)
 * @lock, @cond, @ops, @batch, @busy, @ret: a job for the worker thread
 *		(ops waits in rounds of @batch) and its result
 */
struct wait_bench {
	struct dfg		*d;
	int			gfd;
	struct dfg_arena	*pool;
	struct dfg_chan		*in_c[WAIT_CHANS], *in_p[WAIT_CHANS];
	struct dfg_chan		*go_c, *go_p;
	int			ring;
	pthread_t		worker, peer;
	pthread_mutex_t		lock;
	pthread_cond_t		cond;
	unsigned long		ops;
	unsigned int		batch;
	int			busy;
	int			ret;
};

static struct wait_bench wb;

static int chan_pair(struct wait_bench *w, struct dfg_chan **c,
		     struct dfg_chan **p)
{
	int id, ret;

	id = dfg_chan_create(w->gfd, dfg_arena_id(w->pool), 2, 1);
	if (id < 0)
		return id;
	ret = dfg_chan_open(w->gfd, id, DFG_CHAN_CONSUMER, w->pool, c);
	if (!ret)
		ret = dfg_chan_open(w->gfd, id, DFG_CHAN_PRODUCER, w->pool, p);
	if (ret)
		return ret;
	/* Park at once: a wait is what is measured, not a poll. */
	dfg_chan_set_spin(*c, 0);
	dfg_chan_set_spin(*p, 0);
	return 0;
}

/* The peer: on each go, one descriptor into each channel waited for. */
static void *wait_peer(void *arg)
{
	struct wait_bench *w = arg;
	struct dfg_desc go, d = { .off = 0, .len = 1 };
	unsigned int i;

	for (;;) {
		if (dfg_chan_recv(w->go_c, &go, 1, 0) != 1 ||
		    go.tag == WAIT_STOP || go.tag > WAIT_CHANS)
			return NULL;
		for (i = 0; i < go.tag; i++) {
			d.tag = i;
			if (dfg_chan_send(w->in_p[i], &d, 1, 0) != 1)
				return NULL;
		}
	}
}

static int wait_go(struct wait_bench *w, __u64 tag)
{
	struct dfg_desc go = { .off = 0, .len = 1, .tag = tag };

	return dfg_chan_send(w->go_p, &go, 1, 0) == 1 ? 0 : -EIO;
}

/* Take the descriptor of channel @i, which must be there. */
static int wait_take(struct wait_bench *w, unsigned int i)
{
	struct dfg_desc d;
	int n = dfg_chan_recv(w->in_c[i], &d, 1, DFG_CHAN_NONBLOCK);

	if (n < 0)
		return n;
	return n == 1 && d.tag == i ? 0 : -EPROTO;
}

/* One round over ioctl: go, then a blocking receive per channel. */
static int wait_round_ioctl(struct wait_bench *w, unsigned int batch)
{
	struct dfg_desc d;
	unsigned int i;
	int ret;

	ret = wait_go(w, batch);
	for (i = 0; !ret && i < batch; i++) {
		ret = dfg_chan_recv(w->in_c[i], &d, 1, 0);
		ret = ret == 1 && d.tag == i ? 0 : ret < 0 ? ret : -EPROTO;
	}
	return ret;
}

/* One round on the ring: @batch waits armed, go, one enter for all. */
static int wait_round_ring(struct wait_bench *w, struct io_uring *ring,
			   unsigned int batch)
{
	unsigned int i, got = 0, sent = 0;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret;

	/* The wait ring is small: submit as it fills up. */
	for (i = 0; i < batch; i++) {
		sqe = io_uring_get_sqe(ring);
		if (!sqe) {
			ret = io_uring_submit(ring);
			if (ret <= 0)
				return ret < 0 ? ret : -EBUSY;
			sent += ret;
			sqe = io_uring_get_sqe(ring);
			if (!sqe)
				return -EBUSY;
		}
		dfg_chan_prep_wait(w->in_c[i], sqe, i);
	}
	ret = io_uring_submit(ring);
	if (ret < 0 || sent + ret != batch)
		return ret < 0 ? ret : -EIO;
	ret = wait_go(w, batch);
	while (!ret && got < batch) {
		ret = io_uring_wait_cqe(ring, &cqe);
		if (ret)
			break;
		i = cqe->user_data;
		if (i >= batch)
			return -EPROTO;
		ret = dfg_chan_wait_cqe(w->in_c[i], cqe);
		io_uring_cqe_seen(ring, cqe);
		ret = ret < 0 ? ret : wait_take(w, i);
		got++;
	}
	return ret;
}

/* The worker thread: runs the jobs run_wait() hands it. */
static void *wait_worker(void *arg)
{
	struct wait_bench *w = arg;
	struct io_uring *ring = NULL;
	unsigned long done;
	int ret = 0;

	if (w->ring)
		ret = dfg_wait_ring(&ring);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (w->busy != 1)
			pthread_cond_wait(&w->cond, &w->lock);
		pthread_mutex_unlock(&w->lock);
		if (!w->ops) {
			pthread_mutex_lock(&w->lock);
			w->busy = 2;
			pthread_cond_broadcast(&w->cond);
			pthread_mutex_unlock(&w->lock);
			return NULL;
		}
		for (done = 0; !ret && done < w->ops; done += w->batch)
			ret = w->ring ? wait_round_ring(w, ring, w->batch) :
					wait_round_ioctl(w, w->batch);
		pthread_mutex_lock(&w->lock);
		w->ret = ret;
		w->busy = 2;
		pthread_cond_broadcast(&w->cond);
	}
}

/* @ring is the worker's (wait_start()): not used here. */
static int run_wait(struct bench_ctx *c, unsigned long ops,
		    unsigned int batch, int ring)
{
	int ret;

	(void)c;
	(void)ring;
	pthread_mutex_lock(&wb.lock);
	wb.ops = ops;
	wb.batch = batch;
	wb.busy = 1;
	pthread_cond_broadcast(&wb.cond);
	while (wb.busy != 2)
		pthread_cond_wait(&wb.cond, &wb.lock);
	wb.busy = 0;
	ret = wb.ret;
	pthread_mutex_unlock(&wb.lock);
	return ret;
}

static void wait_stop(struct wait_bench *w)
{
	run_wait(NULL, 0, 1, 0);	/* ops 0: the worker exits */
	pthread_join(w->worker, NULL);
	wait_go(w, WAIT_STOP);
	pthread_join(w->peer, NULL);
}

/*
 * Threads for a wait method. A thread decides at its first wait whether
 * it has a ring, from DFG_NO_URING, and whether its lone waits use it,
 * from DFG_WAIT_URING (the peer's waits on the go channel are lone: by
 * default they would go through ioctl): set them before both start (no
 * other thread is running then).
 */
static int wait_start(struct wait_bench *w, int ring)
{
	if (ring) {
		unsetenv("DFG_NO_URING");
		setenv("DFG_WAIT_URING", "1", 1);
	} else {
		setenv("DFG_NO_URING", "1", 1);
		unsetenv("DFG_WAIT_URING");
	}
	w->ring = ring;
	w->busy = 0;
	if (pthread_create(&w->peer, NULL, wait_peer, w))
		return -EAGAIN;
	if (pthread_create(&w->worker, NULL, wait_worker, w)) {
		wait_go(w, WAIT_STOP);
		pthread_join(w->peer, NULL);
		return -EAGAIN;
	}
	return 0;
}

/* A graph with a small arena and WAIT_CHANS + 1 channels of depth 2. */
static int wait_setup(struct wait_bench *w)
{
	char name[DFG_NAME_MAX];
	unsigned int i;
	int ret;

	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	ret = dfg_open(&w->d, DFG_OPEN_NO_RING);
	if (ret)
		return ret;
	snprintf(name, sizeof(name), "cmd-roundtrip-%d", getpid());
	w->gfd = dfg_graph_create(w->d, name, 0600, DFG_GRAPH_O_CLOEXEC);
	if (w->gfd < 0)
		return w->gfd;
	ret = dfg_arena_create(w->gfd, 65536, &w->pool);
	for (i = 0; !ret && i < WAIT_CHANS; i++)
		ret = chan_pair(w, &w->in_c[i], &w->in_p[i]);
	return ret ? ret : chan_pair(w, &w->go_c, &w->go_p);
}

static const struct method methods[] = {
	{ "getppid",		1,  run_getppid, 0 },
	{ "ioctl",		1,  run_ioctl, 0 },
	{ "uring",		1,  run_uring, URING_INLINE },
	{ "uring",		8,  run_uring, URING_INLINE },
	{ "uring",		64, run_uring, URING_INLINE },
	{ "uring_indirect",	1,  run_uring, URING_INDIRECT },
	{ "uring_indirect",	64, run_uring, URING_INDIRECT },
	{ "uring_fixed",	1,  run_uring, URING_FIXED },
	{ "uring_fixed",	64, run_uring, URING_FIXED },
	{ "uring_res0",		1,  run_uring, URING_RES0 },
	{ "uring_res0",		64, run_uring, URING_RES0 },
	{ "uring_op_nop",	1,  run_uring, URING_OP_NOP },
	{ "uring_op_nop",	64, run_uring, URING_OP_NOP },
	{ "wait_ioctl",		1,  run_wait, 0 },
	{ "wait_ioctl",		64, run_wait, 0 },
	{ "wait_uring",		1,  run_wait, 1 },
	{ "wait_uring",		64, run_wait, 1 },
};

#define NR_METHODS	(ARRAY_SIZE(methods))

/* Run @ops of @m once, its wait threads around it; @dt: its time. */
static int run_once(struct bench_ctx *c, const struct method *m,
		    unsigned long ops, __u64 *dt)
{
	__u64 t0;
	int ret;

	if (m->run == run_wait) {
		ret = wait_start(&wb, m->arg);
		if (ret)
			return ret;
	}
	t0 = now_ns();
	ret = m->run(c, ops, m->batch, m->arg);
	*dt = now_ns() - t0;
	if (m->run == run_wait)
		wait_stop(&wb);
	return ret;
}

/* How many ops of @m make one repetition of o->target_ms (warms up). */
static int calibrate(struct bench_ctx *c, const struct bench_opts *o,
		     const struct method *m, unsigned long *opsp)
{
	unsigned long ops = 64 * m->batch;
	__u64 dt;
	int ret;

	for (;;) {
		ret = run_once(c, m, ops, &dt);
		if (ret)
			return ret;
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
	*opsp = (ops + m->batch - 1) / m->batch * m->batch;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median, min and max of @n values (sorts @v). */
static void summarize(double *v, unsigned int n, double out[3])
{
	qsort(v, n, sizeof(v[0]), cmp_double);
	out[0] = v[n / 2];
	out[1] = v[0];
	out[2] = v[n - 1];
}

/* Index of IORING_OP_NOP at @batch (at batch 1 if not measured). */
static unsigned int op_nop_idx(unsigned int batch)
{
	unsigned int i, one = 0;

	for (i = 0; i < NR_METHODS; i++) {
		if (strcmp(methods[i].name, "uring_op_nop"))
			continue;
		if (methods[i].batch == batch)
			return i;
		if (methods[i].batch == 1)
			one = i;
	}
	return one;
}

/*
 * Interleaved: every repetition runs every method once, in table order in
 * even repetitions and reversed in odd ones; a method's ratios to getppid
 * (method 0) and to IORING_OP_NOP are taken within each repetition, then
 * summarized (median, min, max), never from medians of different times.
 */
static int measure_all(struct bench_ctx *c, const struct bench_opts *o,
		       struct result *res)
{
	static double per[NR_METHODS][MAX_REPS];
	double v[MAX_REPS];
	unsigned long ops[NR_METHODS];
	unsigned int i, j, r;
	__u64 dt;
	int ret;

	for (i = 0; i < NR_METHODS; i++) {
		ret = calibrate(c, o, &methods[i], &ops[i]);
		if (ret)
			goto fail;
	}
	for (r = 0; r < o->reps; r++) {
		for (j = 0; j < NR_METHODS; j++) {
			i = r % 2 ? NR_METHODS - 1 - j : j;
			ret = run_once(c, &methods[i], ops[i], &dt);
			if (ret)
				goto fail;
			per[i][r] = (double)dt / (double)ops[i];
		}
	}
	for (i = 0; i < NR_METHODS; i++) {
		unsigned int nop = op_nop_idx(methods[i].batch);

		res[i].m = &methods[i];
		res[i].ops = ops[i] * o->reps;
		memcpy(v, per[i], o->reps * sizeof(v[0]));
		summarize(v, o->reps, res[i].ns);
		for (r = 0; r < o->reps; r++)
			v[r] = per[i][r] / per[0][r];
		summarize(v, o->reps, res[i].to_getppid);
		for (r = 0; r < o->reps; r++)
			v[r] = per[i][r] / per[nop][r];
		summarize(v, o->reps, res[i].to_op_nop);
	}
	return 0;
fail:
	fprintf(stderr, "cmd_roundtrip: %s batch %u: %s\n", methods[i].name,
		methods[i].batch, strerror(-ret));
	return ret;
}

static int write_csv(const char *path, const struct result *res,
		     unsigned int n)
{
	unsigned int i;
	FILE *f;

	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "method,batch,ns_per_op,ratio_to_getppid,ops,"
		"ratio_to_op_nop,ratio_to_getppid_min,ratio_to_getppid_max,"
		"ratio_to_op_nop_min,ratio_to_op_nop_max\n");
	for (i = 0; i < n; i++)
		fprintf(f, "%s,%u,%.1f,%.3f,%lu,%.3f,%.3f,%.3f,%.3f,%.3f\n",
			res[i].m->name, res[i].m->batch, res[i].ns[0],
			res[i].to_getppid[0], res[i].ops, res[i].to_op_nop[0],
			res[i].to_getppid[1], res[i].to_getppid[2],
			res[i].to_op_nop[1], res[i].to_op_nop[2]);
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

	ret = io_uring_register_files(&c.ring, &c.fd, 1);
	if (ret) {
		fprintf(stderr, "cmd_roundtrip: fixed file: %s\n",
			strerror(-ret));
		return 1;
	}

	ret = wait_setup(&wb);
	if (ret) {
		fprintf(stderr, "cmd_roundtrip: channels: %s\n", strerror(-ret));
		return 1;
	}

	ret = measure_all(&c, &o, res);
	if (ret)
		return 1;
	printf("%-16s %5s %12s %22s %22s\n", "method", "batch", "ns/op",
	       "x getppid [range]", "x IORING_OP_NOP [range]");
	for (i = 0; i < NR_METHODS; i++)
		printf("%-16s %5u %12.1f %8.2f [%5.2f..%5.2f] %8.2f [%5.2f..%5.2f]\n",
		       res[i].m->name, res[i].m->batch, res[i].ns[0],
		       res[i].to_getppid[0], res[i].to_getppid[1],
		       res[i].to_getppid[2], res[i].to_op_nop[0],
		       res[i].to_op_nop[1], res[i].to_op_nop[2]);
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
