// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg test of channels against the loaded dfg module (run it in the
 * test VM: tools/vm/dfg-vm -- build/libdfg/tests/chan_module). SKIPs when
 * the device cannot be opened or the module has no channels.
 *
 * Endpoints are opened by the parent before it forks (pipe semantics: end
 * of stream needs every producer open before the work starts); each child
 * closes the endpoints that are not its own, the parent closes the
 * children's, so that a child's exit or death is its endpoint's last
 * reference.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dfg/dfg.h>

#include "kselftest_harness.h"
#include "devgraph.h"

#define POOL_SIZE	(4U << 20)
#define NPROD		8
#define STAGES		5

#define SKIP_IF_NO_CHAN() do {						\
	if (!self->pool)						\
		SKIP(return, "%s", "no dfg device with channels");	\
} while (0)

FIXTURE(chan) {
	struct dfg *d;			/* handle on the dfg device */
	int gfd;			/* graph descriptor, read-write */
	unsigned int gid;		/* graph id (sysfs) */
	char name[DFG_NAME_MAX];	/* graph name */
	struct dfg_arena *pool;		/* 4 MiB arena with allocator */
	__u64 *shm;			/* anonymous shared page for counters */
	char max_parked[32];		/* dfg.max_parked to restore, or "" */
};

static const char max_parked_param[] = "/sys/module/dfg/parameters/max_parked";

FIXTURE_SETUP(chan)
{
	struct dfg_graph_info gi;

	self->pool = NULL;
	self->shm = NULL;
	self->max_parked[0] = '\0';
	DEVGRAPH_SETUP(DFG_F_CHAN, "chan", self->name, sizeof(self->name));
	ASSERT_EQ(0, dfg_graph_info(self->gfd, &gi));
	self->gid = gi.id;
	ASSERT_EQ(0, dfg_arena_create(self->gfd, POOL_SIZE, &self->pool));
	ASSERT_EQ(0, dfg_alloc_init(self->pool));
	self->shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->shm);
}

FIXTURE_TEARDOWN(chan)
{
	FILE *fp;

	if (self->max_parked[0]) {
		fp = fopen(max_parked_param, "w");
		EXPECT_NE(NULL, fp);
		if (fp) {
			fputs(self->max_parked, fp);
			EXPECT_EQ(0, fclose(fp));
		}
	}
	if (self->shm && self->shm != MAP_FAILED)
		munmap(self->shm, 4096);
	dfg_arena_unmap(self->pool);
	if (self->gfd >= 0)
		close(self->gfd);
	dfg_close(self->d);
}

/* A counter of /sys/kernel/dfg/graphs/<gid>/chan<id>/, or -1. */
static long long chan_stat(FIXTURE_DATA(chan) *self, int id, const char *f)
{
	char path[256];
	long long v = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "/sys/kernel/dfg/graphs/%u/chan%d/%s",
		 self->gid, id, f);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	if (fscanf(fp, "%lld", &v) != 1)
		v = -1;
	fclose(fp);
	return v;
}

static int wait_ok(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F(chan, open_errors)
{
	struct dfg_chan *c, *p, *x;
	struct dfg_arena *other;
	struct dfg_desc d = { .off = 0, .len = 1 };
	int id, ro;

	SKIP_IF_NO_CHAN();
	EXPECT_EQ(-EINVAL, dfg_chan_create(self->gfd, dfg_arena_id(self->pool),
					   6, 1));
	EXPECT_EQ(-EINVAL, dfg_chan_create(self->gfd, dfg_arena_id(self->pool),
					   8, 0));
	EXPECT_EQ(-ENOENT, dfg_chan_create(self->gfd, 999, 8, 1));
	id = dfg_chan_create(self->gfd, dfg_arena_id(self->pool), 8, 2);
	ASSERT_LE(0, id) TH_LOG("%s", strerror(-id));
	EXPECT_EQ(-ENOENT, dfg_chan_open(self->gfd, id + 100,
					 DFG_CHAN_CONSUMER, self->pool, &x));

	/* Another pool than the channel's: the header check says no. */
	ASSERT_EQ(0, dfg_arena_create(self->gfd, 65536, &other));
	EXPECT_EQ(-EPROTO, dfg_chan_open(self->gfd, id, DFG_CHAN_CONSUMER,
					 other, &x));
	dfg_arena_unmap(other);

	ASSERT_EQ(0, dfg_chan_open(self->gfd, id, DFG_CHAN_CONSUMER,
				   self->pool, &c));
	EXPECT_EQ(-EBUSY, dfg_chan_open(self->gfd, id, DFG_CHAN_CONSUMER,
					self->pool, &x));
	ASSERT_EQ(0, dfg_chan_open(self->gfd, id, DFG_CHAN_PRODUCER,
				   self->pool, &p));
	ASSERT_EQ(0, dfg_chan_open(self->gfd, id, DFG_CHAN_PRODUCER,
				   self->pool, &x));
	EXPECT_NE(dfg_chan_slot(p), dfg_chan_slot(x));
	EXPECT_LE(0, dfg_chan_fd(x));
	EXPECT_EQ(FD_CLOEXEC, fcntl(dfg_chan_fd(x), F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(-EBUSY, dfg_chan_open(self->gfd, id, DFG_CHAN_PRODUCER,
					self->pool, &x));
	dfg_chan_close(x);

	EXPECT_EQ(-EAGAIN, dfg_chan_recv(c, &d, 1, DFG_CHAN_NONBLOCK));
	d.off = POOL_SIZE;
	EXPECT_EQ(-EINVAL, dfg_chan_send(p, &d, 1, 0));
	d.off = 64;
	d.tag = 77;
	EXPECT_EQ(1, dfg_chan_send(p, &d, 1, 0));
	memset(&d, 0, sizeof(d));
	EXPECT_EQ(1, dfg_chan_recv(c, &d, 1, 0));
	EXPECT_EQ(77, d.tag);
	EXPECT_EQ(1, chan_stat(self, id, "messages"));

	/* Read-only graph descriptor: no channel, no endpoint. */
	ro = dfg_graph_attach(self->d, self->name, DFG_GRAPH_O_RDONLY);
	ASSERT_LE(0, ro);
	EXPECT_EQ(-EACCES, dfg_chan_create(ro, dfg_arena_id(self->pool), 8,
					   1));
	EXPECT_EQ(-EACCES, dfg_chan_open(ro, id, DFG_CHAN_PRODUCER,
					 self->pool, &x));
	close(ro);
	dfg_chan_close(p);
	dfg_chan_close(c);
}

/*
 * One producer, one consumer in another process, a ring of 4: bursts and
 * pauses on both sides make each park; every descriptor arrives in order,
 * then end of stream once the producer has closed.
 */
static void run_pingpong(struct __test_metadata *_metadata,
			 FIXTURE_DATA(chan) *self, unsigned int spin)
{
	const unsigned int total = 20000;
	struct dfg_chan *c, *p;
	struct dfg_desc d[16];
	unsigned int got = 0;
	int id, n, i;
	pid_t pid;

	id = dfg_chan_create(self->gfd, dfg_arena_id(self->pool), 4, 1);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, dfg_chan_open(self->gfd, id, DFG_CHAN_CONSUMER,
				   self->pool, &c));
	ASSERT_EQ(0, dfg_chan_open(self->gfd, id, DFG_CHAN_PRODUCER,
				   self->pool, &p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		unsigned int sent = 0, k;

		dfg_chan_close(c);
		dfg_chan_set_spin(p, spin);
		while (sent < total) {
			k = 1 + sent % 7;
			for (i = 0; i < (int)k; i++)
				d[i] = (struct dfg_desc){ .off = sent + i,
							  .len = 1,
							  .tag = sent + i };
			n = dfg_chan_send(p, d, k, 0);
			if (n != (int)k)
				_exit(1);
			sent += k;
			if (sent % 5000 < 7)
				usleep(20000);	/* the consumer parks */
		}
		dfg_chan_close(p);
		_exit(0);
	}
	dfg_chan_close(p);
	dfg_chan_set_spin(c, spin);
	while ((n = dfg_chan_recv(c, d, 1 + got % 16, 0)) > 0) {
		for (i = 0; i < n; i++, got++) {
			ASSERT_EQ(got, d[i].tag);
			ASSERT_EQ(got, d[i].off);
		}
		if (got % 4000 < 16)
			usleep(20000);	/* the producer fills up and parks */
	}
	EXPECT_EQ(0, n);
	EXPECT_EQ(total, got);
	EXPECT_EQ(0, dfg_chan_recv(c, d, 1, DFG_CHAN_NONBLOCK));
	EXPECT_EQ(0, wait_ok(pid));
	EXPECT_EQ(total, chan_stat(self, id, "messages"));
	EXPECT_LT(0, chan_stat(self, id, "full_stalls"));
	EXPECT_LT(0, chan_stat(self, id, "empty_stalls"));
	EXPECT_LT(0, chan_stat(self, id, "parks"));
	EXPECT_LT(0, chan_stat(self, id, "wakeups"));
	EXPECT_EQ(4, chan_stat(self, id, "hwm"));
	TH_LOG("spin %u: parks %lld wakeups %lld full %lld empty %lld", spin,
	       chan_stat(self, id, "parks"), chan_stat(self, id, "wakeups"),
	       chan_stat(self, id, "full_stalls"),
	       chan_stat(self, id, "empty_stalls"));
	dfg_chan_close(c);
}

TEST_F_TIMEOUT(chan, blocking_both_ways, 120)
{
	SKIP_IF_NO_CHAN();
	run_pingpong(_metadata, self, 0);
}

/* The same with every wait of both processes on their thread's ring. */
TEST_F_TIMEOUT(chan, uring_blocking_both_ways, 120)
{
	SKIP_IF_NO_CHAN();
	ASSERT_EQ(0, setenv("DFG_WAIT_URING", "1", 1));
	run_pingpong(_metadata, self, 0);
}

TEST_F_TIMEOUT(chan, busy_poll, 120)
{
	SKIP_IF_NO_CHAN();
	run_pingpong(_metadata, self, 2000);
}

/* The consumer dies while the producer is parked on a full ring. */
TEST_F(chan, epipe_after_consumer_death)
{
	struct dfg_desc d[4] = { { .off = 0, .len = 1 } };
	struct dfg_chan *c, *p, *x;
	int id, n;
	pid_t pid;

	SKIP_IF_NO_CHAN();
	id = dfg_chan_create(self->gfd, dfg_arena_id(self->pool), 2, 1);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, dfg_chan_open(self->gfd, id, DFG_CHAN_CONSUMER,
				   self->pool, &c));
	ASSERT_EQ(0, dfg_chan_open(self->gfd, id, DFG_CHAN_PRODUCER,
				   self->pool, &p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dfg_chan_close(p);
		pause();		/* killed below */
		_exit(0);
	}
	dfg_chan_close(c);
	d[1] = d[0];
	ASSERT_EQ(2, dfg_chan_send(p, d, 2, DFG_CHAN_NONBLOCK));
	EXPECT_EQ(-EAGAIN, dfg_chan_send(p, d, 1, DFG_CHAN_NONBLOCK));
	/* Kill the consumer 200 ms into our wait. */
	if (!fork()) {
		usleep(200000);
		kill(pid, SIGKILL);
		_exit(0);
	}
	n = dfg_chan_send(p, d, 1, 0);
	EXPECT_EQ(-EPIPE, n);
	EXPECT_EQ(128 + SIGKILL, wait_ok(pid));
	while (wait(NULL) > 0)
		;
	EXPECT_EQ(-EPIPE, dfg_chan_send(p, d, 1, DFG_CHAN_NONBLOCK));
	EXPECT_EQ(-EPIPE, dfg_chan_open(self->gfd, id, DFG_CHAN_PRODUCER,
					self->pool, &x));
	dfg_chan_close(p);
}

/*
 * Source -> 5 forwarding stages -> sink, one process each. The source
 * fills allocated buffers; the sink checks the bytes and that each buffer
 * arrives at the offset it left from, and frees it. Afterwards every
 * buffer is back in the allocator.
 */
TEST_F_TIMEOUT(chan, forward_pipeline, 120)
{
	const unsigned int total = 3000, len = 200;
	struct dfg_chan *in[STAGES + 1], *out[STAGES + 1];
	__u64 *offs, sum_sent = 0;
	pid_t pids[STAGES + 1];
	int ids[STAGES + 1];
	unsigned int i, j, s;

	SKIP_IF_NO_CHAN();
	offs = mmap(NULL, total * sizeof(*offs), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, offs);
	/* Channel s goes from stage s (0: source) to stage s + 1. */
	for (s = 0; s <= STAGES; s++) {
		ids[s] = dfg_chan_create(self->gfd, dfg_arena_id(self->pool),
					 16, 1);
		ASSERT_LE(0, ids[s]);
		ASSERT_EQ(0, dfg_chan_open(self->gfd, ids[s],
					   DFG_CHAN_CONSUMER, self->pool,
					   &in[s]));
		ASSERT_EQ(0, dfg_chan_open(self->gfd, ids[s],
					   DFG_CHAN_PRODUCER, self->pool,
					   &out[s]));
	}
	/* Stages 1..STAGES forward channel s-1 to s; the sink reads the last. */
	for (s = 1; s <= STAGES + 1; s++) {
		pids[s - 1] = fork();
		ASSERT_LE(0, pids[s - 1]);
		if (pids[s - 1])
			continue;
		for (j = 0; j <= STAGES; j++) {
			if (j != s - 1)
				dfg_chan_close(in[j]);
			if (j != s)
				dfg_chan_close(out[j]);
		}
		if (s <= STAGES) {
			int n;

			while ((n = dfg_chan_forward(in[s - 1], out[s], 8)) > 0)
				;
			_exit(n < 0 ? 10 + -n % 100 : 0);
		}
		/* Sink. */
		for (j = 0; ; ) {
			struct dfg_desc d[8];
			int n = dfg_chan_recv(in[STAGES], d, 8, 0), k;

			if (n < 0)
				_exit(2);
			if (!n)
				break;
			for (k = 0; k < n; k++, j++) {
				unsigned char *b = dfg_chan_buf(in[STAGES],
								&d[k]);

				if (!b || d[k].tag != j || d[k].off != offs[j] ||
				    d[k].len != len)
					_exit(3);
				for (i = 0; i < len; i++)
					if (b[i] != (unsigned char)(j + i))
						_exit(4);
				if (dfg_buf_free(self->pool, d[k].off))
					_exit(5);
			}
		}
		_exit(j == total ? 0 : 6);
	}
	for (j = 0; j <= STAGES; j++) {
		dfg_chan_close(in[j]);
		if (j)
			dfg_chan_close(out[j]);
	}
	for (j = 0; j < total; j++) {
		struct dfg_desc d;
		unsigned char *b;
		__s64 off = dfg_buf_alloc(self->pool, len);

		ASSERT_LT(0, off);
		offs[j] = off;
		b = dfg_arena_ptr(self->pool, off, len);
		for (i = 0; i < len; i++)
			b[i] = j + i;
		d = (struct dfg_desc){ .off = off, .len = len, .tag = j };
		ASSERT_EQ(1, dfg_chan_send(out[0], &d, 1, 0));
		sum_sent += len;
	}
	dfg_chan_close(out[0]);
	for (s = 0; s <= STAGES; s++)
		EXPECT_EQ(0, wait_ok(pids[s])) TH_LOG("stage %u", s + 1);
	for (j = 0; j < total; j++)
		EXPECT_EQ(0, dfg_buf_size(self->pool, offs[j]));
	for (s = 0; s <= STAGES; s++) {
		EXPECT_EQ(total, chan_stat(self, ids[s], "messages"));
		EXPECT_EQ(sum_sent, chan_stat(self, ids[s], "bytes"));
	}
	munmap(offs, total * sizeof(*offs));
}

/*
 * 8 producer processes on one channel of depth 64, 100000 descriptors
 * each, tagged producer << 32 | seq: the consumer sees each producer's
 * sequence complete, without duplicates, in order. With @victim >= 0 that
 * producer sends forever, one at a time, recording each success in shared
 * memory, and is killed with SIGKILL mid-stream: the consumer still gets
 * end of stream once the others close, with every descriptor the victim
 * published before dying, in order.
 */
static void run_mpsc(struct __test_metadata *_metadata,
		     FIXTURE_DATA(chan) *self, int victim)
{
	const __u64 per = 100000;
	struct dfg_chan *c, *p[NPROD];
	__u64 next[NPROD] = { 0 };
	volatile __u64 *published = self->shm;
	pid_t pids[NPROD];
	struct dfg_desc d[64];
	bool killed = false;
	int id, n, i, k;

	id = dfg_chan_create(self->gfd, dfg_arena_id(self->pool), 64, NPROD);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, dfg_chan_open(self->gfd, id, DFG_CHAN_CONSUMER,
				   self->pool, &c));
	for (i = 0; i < NPROD; i++)
		ASSERT_EQ(0, dfg_chan_open(self->gfd, id, DFG_CHAN_PRODUCER,
					   self->pool, &p[i]));
	for (i = 0; i < NPROD; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i])
			continue;
		dfg_chan_close(c);
		for (k = 0; k < NPROD; k++)
			if (k != i)
				dfg_chan_close(p[k]);
		for (__u64 seq = 0; seq < per || i == victim; ) {
			unsigned int b = i == victim ? 1 : 1 + seq % 13, j;

			if (i != victim && b > per - seq)
				b = per - seq;
			for (j = 0; j < b; j++)
				d[j] = (struct dfg_desc){
					.off = i * 64, .len = 64,
					.tag = (__u64)i << 32 | (seq + j) };
			n = dfg_chan_send(p[i], d, b, 0);
			if (n != (int)b)
				_exit(1);
			seq += b;
			if (i == victim)
				published[i] = seq;
		}
		dfg_chan_close(p[i]);
		_exit(0);
	}
	for (i = 0; i < NPROD; i++)
		dfg_chan_close(p[i]);

	while ((n = dfg_chan_recv(c, d, 1 + next[0] % 64, 0)) > 0) {
		for (k = 0; k < n; k++) {
			__u64 who = d[k].tag >> 32, seq = (__u32)d[k].tag;

			ASSERT_GT(NPROD, who);
			ASSERT_EQ(next[who], seq) TH_LOG("producer %llu",
							 (unsigned long long)who);
			ASSERT_EQ(who * 64, d[k].off);
			next[who]++;
		}
		if (victim >= 0 && !killed && published[victim] >= 5000) {
			kill(pids[victim], SIGKILL);
			killed = true;
		}
	}
	EXPECT_EQ(0, n);
	for (i = 0; i < NPROD; i++) {
		if (i == victim) {
			EXPECT_EQ(128 + SIGKILL, wait_ok(pids[i]));
			/* Recorded after each send returned: at most one more. */
			EXPECT_LE(published[i], next[i]);
			EXPECT_GE(published[i] + 1, next[i]);
			TH_LOG("victim sent %llu before SIGKILL",
			       (unsigned long long)next[i]);
		} else {
			EXPECT_EQ(0, wait_ok(pids[i]));
			EXPECT_EQ(per, next[i]) TH_LOG("producer %d", i);
		}
	}
	TH_LOG("parks %lld wakeups %lld full %lld empty %lld",
	       chan_stat(self, id, "parks"), chan_stat(self, id, "wakeups"),
	       chan_stat(self, id, "full_stalls"),
	       chan_stat(self, id, "empty_stalls"));
	dfg_chan_close(c);
}

TEST_F_TIMEOUT(chan, mpsc_8_producers, 600)
{
	SKIP_IF_NO_CHAN();
	run_mpsc(_metadata, self, -1);
}

TEST_F_TIMEOUT(chan, mpsc_kill_producer, 600)
{
	SKIP_IF_NO_CHAN();
	run_mpsc(_metadata, self, 3);
}

/* ------------------------------------------------------------------------
 * Waits on the thread's io_uring (dfg_wait_ring()), and without it
 * ------------------------------------------------------------------------
 */

/* A channel of depth 4 with its consumer and one producer. */
static int open_pair(FIXTURE_DATA(chan) *self, struct dfg_chan **c,
		     struct dfg_chan **p)
{
	int id, ret;

	id = dfg_chan_create(self->gfd, dfg_arena_id(self->pool), 4, 1);
	if (id < 0)
		return id;
	ret = dfg_chan_open(self->gfd, id, DFG_CHAN_CONSUMER, self->pool, c);
	if (ret)
		return ret;
	ret = dfg_chan_open(self->gfd, id, DFG_CHAN_PRODUCER, self->pool, p);
	return ret ? ret : id;
}

/*
 * Waits until channel @id has been parked on (ioctl sleep or io_uring
 * park) at least @n times: the waiter is in the kernel. 0, or -1 after
 * 20 s.
 */
static int parks_reach(FIXTURE_DATA(chan) *self, int id, long long n)
{
	int i;

	for (i = 0; i < 20000; i++) {
		if (chan_stat(self, id, "parks") >= n)
			return 0;
		usleep(1000);
	}
	return -1;
}

static int send_one(struct dfg_chan *p, __u64 tag)
{
	struct dfg_desc d = { .off = 64, .len = 1, .tag = tag };

	return dfg_chan_send(p, &d, 1, 0) == 1 ? 0 : -1;
}

/*
 * Two consumers wait in one io_uring_enter(): the completion that comes
 * is the one whose channel got data, the other wait stays parked until
 * its own channel gets some.
 */
TEST_F(chan, uring_two_channels_one_enter)
{
	struct dfg_chan *c[2], *p[2];
	struct dfg_desc d;
	struct io_uring_cqe *cqe;
	struct io_uring *ring;
	int id[2], i;
	pid_t pid;

	SKIP_IF_NO_CHAN();
	for (i = 0; i < 2; i++) {
		id[i] = open_pair(self, &c[i], &p[i]);
		ASSERT_LE(0, id[i]);
	}
	ASSERT_EQ(0, dfg_wait_ring(&ring));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Each send after the parent is parked on both. */
		if (parks_reach(self, id[0], 1) || parks_reach(self, id[1], 1) ||
		    send_one(p[1], 11))
			_exit(1);
		if (parks_reach(self, id[0], 2) || send_one(p[0], 10))
			_exit(2);
		_exit(0);
	}
	for (i = 0; i < 2; i++) {
		dfg_chan_close(p[i]);
		dfg_chan_prep_wait(c[i], io_uring_get_sqe(ring), 100 + i);
	}
	ASSERT_EQ(2, io_uring_submit(ring));
	ASSERT_EQ(0, io_uring_wait_cqe(ring, &cqe));
	EXPECT_EQ(101, cqe->user_data);
	EXPECT_EQ(DFG_CHAN_EV_READABLE, dfg_chan_wait_cqe(c[1], cqe));
	io_uring_cqe_seen(ring, cqe);
	EXPECT_EQ(1, dfg_chan_recv(c[1], &d, 1, DFG_CHAN_NONBLOCK));
	EXPECT_EQ(11, d.tag);
	EXPECT_EQ(-EAGAIN, io_uring_peek_cqe(ring, &cqe));

	/* The second wait is still parked: park it once more, then the data. */
	dfg_chan_prep_wait(c[0], io_uring_get_sqe(ring), 200);
	ASSERT_EQ(1, io_uring_submit(ring));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(ring, &cqe));
		EXPECT_TRUE(cqe->user_data == 100 || cqe->user_data == 200);
		EXPECT_EQ(DFG_CHAN_EV_READABLE, dfg_chan_wait_cqe(c[0], cqe));
		io_uring_cqe_seen(ring, cqe);
	}
	EXPECT_EQ(1, dfg_chan_recv(c[0], &d, 1, DFG_CHAN_NONBLOCK));
	EXPECT_EQ(10, d.tag);
	EXPECT_EQ(0, wait_ok(pid));
	for (i = 0; i < 2; i++)
		dfg_chan_close(c[i]);
}

/*
 * The application's own requests share the ring with dfg waits: a NOP, a
 * pipe read and a channel wait are in flight while libdfg parks a
 * blocking receive on another channel on the same ring; the receive reaps
 * only its own completion and leaves the others, in order.
 */
TEST_F(chan, uring_wait_mixed_with_own_io)
{
	struct dfg_chan *c[2], *p[2];
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring *ring;
	unsigned int tail, seen = 0;
	struct dfg_desc d;
	int id[2], pfd[2], i;
	char buf[8];
	pid_t pid;

	SKIP_IF_NO_CHAN();
	for (i = 0; i < 2; i++) {
		id[i] = open_pair(self, &c[i], &p[i]);
		ASSERT_LE(0, id[i]);
	}
	ASSERT_EQ(0, pipe(pfd));
	ASSERT_EQ(0, dfg_wait_ring(&ring));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (parks_reach(self, id[1], 1) || send_one(p[1], 21))
			_exit(1);
		if (write(pfd[1], "hello", 5) != 5)
			_exit(2);
		if (send_one(p[0], 20))
			_exit(3);
		_exit(0);
	}
	for (i = 0; i < 2; i++)
		dfg_chan_close(p[i]);
	close(pfd[1]);

	sqe = io_uring_get_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 1;
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_read(sqe, pfd[0], buf, sizeof(buf), 0);
	sqe->user_data = 2;
	dfg_chan_prep_wait(c[0], io_uring_get_sqe(ring), 3);
	ASSERT_EQ(3, io_uring_submit(ring));

	/* Parks at once, on this thread's ring: one more SQE. */
	tail = ring->sq.sqe_tail;
	dfg_chan_set_spin(c[1], 0);
	EXPECT_EQ(1, dfg_chan_recv(c[1], &d, 1, 0));
	EXPECT_EQ(21, d.tag);
	EXPECT_EQ(tail + 1, ring->sq.sqe_tail);

	/* The NOP completed first and is still at the head. */
	ASSERT_EQ(0, io_uring_peek_cqe(ring, &cqe));
	EXPECT_EQ(1, cqe->user_data);
	EXPECT_EQ(0, cqe->res);
	io_uring_cqe_seen(ring, cqe);
	while (seen != ((1U << 2) | (1U << 3))) {
		ASSERT_EQ(0, io_uring_wait_cqe(ring, &cqe));
		if (cqe->user_data == 2) {
			EXPECT_EQ(5, cqe->res);
		} else {
			ASSERT_EQ(3, cqe->user_data);
			EXPECT_EQ(DFG_CHAN_EV_READABLE,
				  dfg_chan_wait_cqe(c[0], cqe));
		}
		EXPECT_FALSE(seen & (1U << cqe->user_data));
		seen |= 1U << cqe->user_data;
		io_uring_cqe_seen(ring, cqe);
	}
	EXPECT_EQ(0, memcmp(buf, "hello", 5));
	EXPECT_EQ(1, dfg_chan_recv(c[0], &d, 1, DFG_CHAN_NONBLOCK));
	EXPECT_EQ(20, d.tag);
	EXPECT_EQ(0, wait_ok(pid));
	close(pfd[0]);
	for (i = 0; i < 2; i++)
		dfg_chan_close(c[i]);
}

/*
 * A forked child does not use its parent's ring: the parent's completion,
 * left unreaped in the parent's CQ ring, is not in the child's, and the
 * child's own waits work.
 */
TEST_F(chan, uring_fork_child_has_own_ring)
{
	struct dfg_chan *c[2], *p[2];
	struct io_uring_cqe *cqe;
	struct io_uring *ring;
	int id[2], go[2], i;
	struct dfg_desc d;
	char x;
	pid_t pid;

	SKIP_IF_NO_CHAN();
	for (i = 0; i < 2; i++) {
		id[i] = open_pair(self, &c[i], &p[i]);
		ASSERT_LE(0, id[i]);
	}
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, dfg_wait_ring(&ring));
	dfg_chan_prep_wait(c[0], io_uring_get_sqe(ring), 7);
	ASSERT_EQ(1, io_uring_submit(ring));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct io_uring *mine;

		dfg_chan_close(c[0]);
		if (dfg_wait_ring(&mine) || send_one(p[0], 30))
			_exit(1);
		if (read(go[0], &x, 1) != 1)
			_exit(2);
		/* The parent's CQE for user_data 7 is there, not here. */
		if (io_uring_peek_cqe(mine, &cqe) != -EAGAIN)
			_exit(3);
		/* A blocking wait of the child, on its ring. */
		dfg_chan_set_spin(c[1], 0);
		if (dfg_chan_recv(c[1], &d, 1, 0) != 1 || d.tag != 31)
			_exit(4);
		_exit(0);
	}
	ASSERT_EQ(0, io_uring_wait_cqe(ring, &cqe));
	EXPECT_EQ(7, cqe->user_data);
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(0, parks_reach(self, id[1], 1));
	ASSERT_EQ(0, send_one(p[1], 31));
	EXPECT_EQ(0, wait_ok(pid));
	EXPECT_EQ(DFG_CHAN_EV_READABLE, dfg_chan_wait_cqe(c[0], cqe));
	io_uring_cqe_seen(ring, cqe);
	EXPECT_EQ(1, dfg_chan_recv(c[0], &d, 1, DFG_CHAN_NONBLOCK));
	EXPECT_EQ(30, d.tag);
	for (i = 0; i < 2; i++) {
		dfg_chan_close(p[i]);
		dfg_chan_close(c[i]);
	}
	close(go[0]);
	close(go[1]);
}

/* DFG_NO_URING: no ring, and every wait of the ping-pong is an ioctl. */
TEST_F_TIMEOUT(chan, no_uring_blocking_both_ways, 120)
{
	struct io_uring *ring;

	SKIP_IF_NO_CHAN();
	ASSERT_EQ(0, setenv("DFG_NO_URING", "1", 1));
	EXPECT_EQ(-EOPNOTSUPP, dfg_wait_ring(&ring));
	run_pingpong(_metadata, self, 0);
}

/* dfg.max_parked reached: the wait goes through ioctl instead. */
TEST_F(chan, uring_ebusy_falls_back_to_ioctl)
{
	struct dfg_chan *c, *p;
	struct io_uring_cqe *cqe;
	struct io_uring *ring;
	struct dfg_desc d;
	unsigned int tail;
	char old[32];
	FILE *fp;
	int id;
	pid_t pid;

	SKIP_IF_NO_CHAN();
	fp = fopen(max_parked_param, "r+");
	if (!fp)
		SKIP(return, "cannot write %s", max_parked_param);
	ASSERT_NE(NULL, fgets(old, sizeof(old), fp));
	strcpy(self->max_parked, old);	/* the teardown puts it back */
	rewind(fp);
	fputs("1\n", fp);
	ASSERT_EQ(0, fclose(fp));

	id = open_pair(self, &c, &p);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, dfg_wait_ring(&ring));
	/* Ours parks: the endpoint's file is at its limit. */
	dfg_chan_prep_wait(c, io_uring_get_sqe(ring), 5);
	ASSERT_EQ(1, io_uring_submit(ring));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Ours and the ioctl sleep of the receive. */
		if (parks_reach(self, id, 2) || send_one(p, 40))
			_exit(1);
		_exit(0);
	}
	dfg_chan_close(p);
	tail = ring->sq.sqe_tail;
	dfg_chan_set_spin(c, 0);
	EXPECT_EQ(1, dfg_chan_recv(c, &d, 1, 0));
	EXPECT_EQ(40, d.tag);
	/* Tried on the ring (-EBUSY) first. */
	EXPECT_EQ(tail + 1, ring->sq.sqe_tail);
	EXPECT_EQ(0, wait_ok(pid));
	ASSERT_EQ(0, io_uring_wait_cqe(ring, &cqe));
	EXPECT_EQ(5, cqe->user_data);
	EXPECT_EQ(DFG_CHAN_EV_READABLE, dfg_chan_wait_cqe(c, cqe));
	io_uring_cqe_seen(ring, cqe);
	dfg_chan_close(c);
}

static volatile sig_atomic_t nr_signals;

static void count_signal(int sig)
{
	nr_signals++;
}

/*
 * A signal during a blocking receive runs its handler and the receive
 * goes on, as over ioctl (where chan.c parks again after -EINTR).
 */
static void run_signal_wait(struct __test_metadata *_metadata,
			    FIXTURE_DATA(chan) *self)
{
	struct sigaction sa = { .sa_handler = count_signal };
	struct dfg_chan *c, *p;
	struct dfg_desc d;
	pid_t pid, parent = getpid();
	int id;

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	id = open_pair(self, &c, &p);
	ASSERT_LE(0, id);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (parks_reach(self, id, 1) || kill(parent, SIGUSR1))
			_exit(1);
		/* Parked again, or still: the data then. */
		usleep(100000);
		if (send_one(p, 50))
			_exit(2);
		_exit(0);
	}
	dfg_chan_close(p);
	dfg_chan_set_spin(c, 0);
	EXPECT_EQ(1, dfg_chan_recv(c, &d, 1, 0));
	EXPECT_EQ(50, d.tag);
	EXPECT_EQ(1, nr_signals);
	EXPECT_EQ(0, wait_ok(pid));
	dfg_chan_close(c);
}

TEST_F(chan, uring_signal_wait_goes_on)
{
	SKIP_IF_NO_CHAN();
	ASSERT_EQ(0, setenv("DFG_WAIT_URING", "1", 1));
	run_signal_wait(_metadata, self);
}

/* io_uring instances among this process's descriptors. */
static int count_rings(void)
{
	char path[300], link[64];
	struct dirent *e;
	ssize_t len;
	DIR *dir;
	int n = 0;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	while ((e = readdir(dir))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		n += !strcmp(link, "anon_inode:[io_uring]");
	}
	closedir(dir);
	return n;
}

/*
 * A lone wait goes through ioctl (no ring is even made) until the thread
 * takes its ring with dfg_wait_ring(); from then on its waits are SQEs on
 * that ring, one each.
 */
TEST_F(chan, lone_wait_ioctl_until_ring_shared)
{
	struct dfg_chan *c, *p;
	struct io_uring *ring;
	struct dfg_desc d;
	unsigned int tail;
	int id, rings;
	pid_t pid;

	SKIP_IF_NO_CHAN();
	ASSERT_EQ(0, unsetenv("DFG_WAIT_URING"));
	id = open_pair(self, &c, &p);
	ASSERT_LE(0, id);
	rings = count_rings();
	ASSERT_LE(0, rings);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Each send once the parent is in the kernel. */
		if (parks_reach(self, id, 1) || send_one(p, 60) ||
		    parks_reach(self, id, 2) || send_one(p, 61))
			_exit(1);
		_exit(0);
	}
	dfg_chan_close(p);
	dfg_chan_set_spin(c, 0);
	EXPECT_EQ(1, dfg_chan_recv(c, &d, 1, 0));
	EXPECT_EQ(60, d.tag);
	EXPECT_EQ(rings, count_rings());
	ASSERT_EQ(0, dfg_wait_ring(&ring));
	EXPECT_EQ(rings + 1, count_rings());
	tail = ring->sq.sqe_tail;
	EXPECT_EQ(1, dfg_chan_recv(c, &d, 1, 0));
	EXPECT_EQ(61, d.tag);
	EXPECT_EQ(tail + 1, ring->sq.sqe_tail);
	EXPECT_EQ(0, wait_ok(pid));
	dfg_chan_close(c);
}

TEST_F(chan, no_uring_signal_wait_goes_on)
{
	SKIP_IF_NO_CHAN();
	ASSERT_EQ(0, setenv("DFG_NO_URING", "1", 1));
	run_signal_wait(_metadata, self);
}

TEST_HARNESS_MAIN
