// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test of the network transport (coll/xport_ucx.c) without a
 * launcher or a second machine: the ranks are threads of this process,
 * each with its own UCX context, formed into a team by
 * dfg_team_join_net() with an in-process allgather; UCX carries the
 * traffic over whatever it finds here (shared memory, TCP on loopback).
 * Collectives are checked bit for bit against the serial references,
 * under ASan/UBSan; argument errors of dfg_team_join_net() and a failing
 * bootstrap are checked too; so are, with two processes, a rank's death
 * (found through the liveness connections within 2 s) and a rank that
 * never connects (-ETIMEDOUT after DFG_TEAM_TIMEOUT_MS), and how a
 * waiter waits (polls, or naps where its machine is crowded or
 * DFG_COLL_PREV=nap). Across machines: selftests/net/.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dfg/coll.h>

#include "kselftest_harness.h"
#include "coll_ref.h"

#define NET_MAX	4

/* An allgather among threads: each writes its part, a barrier, copy. */
struct boot {
	unsigned int		size;
	pthread_barrier_t	bar;
	char			*buf;
	size_t			len;
	pthread_mutex_t		lock;
	int			fail_at;	/* fail this round (-1: never) */
	int			round;
};

struct boot_arg {
	struct boot	*b;
	unsigned int	rank;
	int		round;
};

static int boot_ag(const void *mine, void *all, size_t len, void *arg)
{
	struct boot_arg *a = arg;
	struct boot *b = a->b;
	int round = a->round++;

	if (round == b->fail_at)
		return -EHOSTUNREACH;
	pthread_mutex_lock(&b->lock);
	if (b->len < len * b->size) {
		free(b->buf);
		b->buf = calloc(b->size, len);
		b->len = b->buf ? len * b->size : 0;
	}
	pthread_mutex_unlock(&b->lock);
	pthread_barrier_wait(&b->bar);
	if (!b->buf)
		return -ENOMEM;
	memcpy(b->buf + a->rank * len, mine, len);
	pthread_barrier_wait(&b->bar);
	memcpy(all, b->buf, len * b->size);
	/* Nobody rewrites the buffer before everyone copied it out. */
	pthread_barrier_wait(&b->bar);
	return 0;
}

struct net_rank {
	struct boot	*b;
	unsigned int	rank;
	int		failures;
	char		msg[160];
};

static void net_fail(struct net_rank *r, const char *what, int ret)
{
	if (!r->failures++)
		snprintf(r->msg, sizeof(r->msg), "rank %u: %s (%d)", r->rank,
			 what, ret);
}

/* Byte @k of rank @i's block for rank @j. */
static unsigned char net_byte(unsigned int i, unsigned int j, size_t k)
{
	return (unsigned char)(i * 31 + j * 17 + k * 7 + 1);
}

/* Fill @buf with rank @i's blocks: for rank j @cnt[j] bytes at @dis[j]. */
static void net_fill(char *buf, unsigned int i, unsigned int n,
		     const size_t *cnt, const size_t *dis)
{
	for (unsigned int j = 0; j < n; j++)
		for (size_t k = 0; k < cnt[j]; k++)
			buf[dis[j] + k] = (char)net_byte(i, j, k);
}

/* Are rank @me's received blocks (@cnt[i] bytes at @dis[i]) right? */
static bool net_got(const char *buf, unsigned int me, unsigned int n,
		    const size_t *cnt, const size_t *dis)
{
	for (unsigned int i = 0; i < n; i++)
		for (size_t k = 0; k < cnt[i]; k++)
			if ((unsigned char)buf[dis[i] + k] != net_byte(i, me, k))
				return false;
	return true;
}

/*
 * Bytes rank @i sends rank @j in net_alltoallv(): uneven, zero for some
 * pairs; with @big, rank 0's blocks exceed a landing slot (64 KiB) and
 * the others' do not (the put algorithm's two phases, mixed).
 */
static size_t net_vcount(unsigned int i, unsigned int j, bool big)
{
	size_t c = (i * 7 + j * 3) % 5 * 100;

	return big && i == 0 ? c + 70000 + j : c;
}

/*
 * alltoallv, counts @vc (NULL: net_vcount()), received packed in source
 * order with 8 bytes between blocks; 0 or the call's error, -EBADMSG
 * when the blocks are wrong.
 */
static int net_alltoallv(struct dfg_team *t, unsigned int me, unsigned int n,
			 bool big, char *sbuf, char *rbuf)
{
	size_t sc[NET_MAX], sd[NET_MAX], rc[NET_MAX], rd[NET_MAX];
	size_t so = 0, ro = 8;
	int ret;

	for (unsigned int j = 0; j < n; j++) {
		sc[j] = net_vcount(me, j, big);
		sd[j] = so;
		so += sc[j];
		rc[j] = net_vcount(j, me, big);
		rd[j] = ro;
		ro += rc[j] + 8;
	}
	net_fill(sbuf, me, n, sc, sd);
	ret = dfg_alltoallv(t, sbuf, sc, sd, rbuf, rc, rd);
	if (!ret && !net_got(rbuf, me, n, rc, rd))
		ret = -EBADMSG;
	return ret;
}

/*
 * The put algorithm (the network's all-to-all): alltoallv small and
 * across two phases, the same buffer for send and receive, mismatched
 * blocks (-EINVAL on every rank, and the team goes on), a rank with
 * unusable arguments, an alltoallv pair that disagrees (only those two
 * fail), and the tiles still forced over the network.
 */
static void net_alltoall(struct net_rank *r, struct dfg_team *t,
			 unsigned int n)
{
	static const size_t blocks[] = { 100, 70000 };
	size_t len = 72000 * NET_MAX * 2;
	char *sbuf = malloc(len), *rbuf = malloc(len);
	size_t cnt[NET_MAX], dis[NET_MAX];
	unsigned int me = r->rank;
	int ret;

	if (!sbuf || !rbuf) {
		net_fail(r, "alltoall put: memory", -ENOMEM);
		goto out;
	}
	for (int big = 0; big < 2; big++) {
		ret = net_alltoallv(t, me, n, big, sbuf, rbuf);
		if (ret || dfg_coll_last_algo(t, DFG_COLL_ALLTOALL) !=
			   DFG_ALGO_PUT)
			net_fail(r, big ? "alltoallv put, big" :
					  "alltoallv put", ret);
	}
	for (size_t i = 0; i < 2; i++) {
		for (unsigned int j = 0; j < n; j++) {
			cnt[j] = blocks[i];
			dis[j] = j * blocks[i];
		}
		net_fill(sbuf, me, n, cnt, dis);
		ret = dfg_alltoall(t, sbuf, sbuf, blocks[i]);
		if (ret || !net_got(sbuf, me, n, cnt, dis))
			net_fail(r, "alltoall put, one buffer", ret);
	}
	if (n > 1) {
		ret = dfg_alltoall(t, sbuf, rbuf, 64 + me);
		if (ret != -EINVAL)
			net_fail(r, "alltoall put, mismatched blocks", ret);
		ret = dfg_alltoall(t, me == 1 ? NULL : sbuf, rbuf, 64);
		if (ret != -EINVAL)
			net_fail(r, "alltoall put, unusable arguments", ret);
		for (unsigned int j = 0; j < n; j++) {
			cnt[j] = 100 + (me == 0 && j == 1) * 100;
			dis[j] = j * 200;
		}
		ret = dfg_alltoallv(t, sbuf, cnt, dis, rbuf, (size_t[NET_MAX]){
				    100, 100, 100, 100 }, dis);
		if (ret != (me <= 1 ? -EINVAL : 0))
			net_fail(r, "alltoallv put, a pair disagrees", ret);
		/* The team goes on, both phases. */
		ret = net_alltoallv(t, me, n, true, sbuf, rbuf);
		if (ret)
			net_fail(r, "alltoallv put after mismatches", ret);
	}
	/* The engine, forced over the network. */
	dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, DFG_ALGO_TILES);
	for (unsigned int j = 0; j < n; j++) {
		cnt[j] = 1000;
		dis[j] = j * 1000;
	}
	net_fill(sbuf, me, n, cnt, dis);
	ret = dfg_alltoall(t, sbuf, rbuf, 1000);
	if (ret || !net_got(rbuf, me, n, cnt, dis) ||
	    dfg_coll_last_algo(t, DFG_COLL_ALLTOALL) != DFG_ALGO_TILES)
		net_fail(r, "alltoall tiles over the network", ret);
	dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, DFG_ALGO_AUTO);
out:
	free(sbuf);
	free(rbuf);
}

/*
 * Direct reductions over the network (forced, so every size takes
 * them): in eager messages (one, one and a short one, the most there may
 * be: 2 KiB of float32) and pulled from the peers above that;
 * allreduce and reduce to every root, float32 sums in rank order, bit
 * for bit. Then counts that differ across several messages: -EINVAL on
 * every rank, and the team goes on.
 */
static void net_direct(struct net_rank *r, struct dfg_team *t,
		       unsigned int n, void **in, char *rbuf, char *ref)
{
	static const size_t counts[] = { 104, 105, 512, 513, 70000 };
	unsigned int me = r->rank;
	struct dfg_reducer red;
	int ret;

	dfg_reducer_get(DFG_SUM, DFG_FLOAT32, &red);
	dfg_coll_set_algo(t, DFG_COLL_ALLREDUCE, DFG_ALGO_DIRECT);
	dfg_coll_set_algo(t, DFG_COLL_REDUCE, DFG_ALGO_DIRECT);
	for (unsigned int ci = 0; ci < sizeof(counts) / sizeof(*counts);
	     ci++) {
		size_t cnt = counts[ci];
		unsigned int root = ci % n;

		for (unsigned int i = 0; i < n; i++)
			ref_fill(in[i], cnt, DFG_FLOAT32, i, 500 + ci);
		ref_reduce(DFG_ALGO_DIRECT, n, in, cnt, &red, ref);
		ret = dfg_allreduce(t, in[me], rbuf, cnt, DFG_FLOAT32,
				    DFG_SUM);
		if (ret || memcmp(ref, rbuf, cnt * 4) ||
		    dfg_coll_last_algo(t, DFG_COLL_ALLREDUCE) !=
		    DFG_ALGO_DIRECT)
			net_fail(r, "direct allreduce", ret);
		memset(rbuf, 0, cnt * 4);
		ret = dfg_reduce(t, in[me], rbuf, cnt, DFG_FLOAT32, DFG_SUM,
				 root);
		if (ret || (me == root && memcmp(ref, rbuf, cnt * 4)))
			net_fail(r, "direct reduce", ret);
	}
	if (n > 1) {
		ret = dfg_allreduce(t, in[me], rbuf, 500 + me, DFG_FLOAT32,
				    DFG_SUM);
		if (ret != -EINVAL)
			net_fail(r, "direct, mismatched count", ret);
		ret = dfg_barrier(t);
		if (ret)
			net_fail(r, "barrier after a direct mismatch", ret);
		ret = dfg_allreduce(t, in[me], rbuf, 500, DFG_FLOAT32,
				    DFG_SUM);
		ref_reduce(DFG_ALGO_DIRECT, n, in, 500, &red, ref);
		if (ret || memcmp(ref, rbuf, 500 * 4))
			net_fail(r, "direct allreduce after a mismatch", ret);
	}
	dfg_coll_set_algo(t, DFG_COLL_ALLREDUCE, DFG_ALGO_AUTO);
	dfg_coll_set_algo(t, DFG_COLL_REDUCE, DFG_ALGO_AUTO);
}

static void *net_main(void *arg)
{
	static const size_t counts[] = { 1, 7, 1000, 70000 };
	struct net_rank *r = arg;
	struct boot_arg ba = { .b = r->b, .rank = r->rank };
	unsigned int n = r->b->size, call = 0;
	size_t maxc = 70000 * n;
	void **in = calloc(n, sizeof(*in));
	char *rbuf = malloc(maxc * 8), *ref = malloc(maxc * 8);
	struct dfg_team *t;
	int ret;

	ret = dfg_team_join_net(n, r->rank, boot_ag, &ba, &t);
	if (ret) {
		net_fail(r, "join", ret);
		goto out;
	}
	for (unsigned int i = 0; i < n; i++)
		in[i] = malloc(maxc * 8);
	for (int dt = 0; dt < DFG_DTYPE_NR; dt++) {
		for (size_t ci = 0; ci < 4; ci++) {
			size_t cnt = counts[ci];
			struct dfg_reducer red;
			int op = (dt + (int)ci) % DFG_OP_NR;

			dfg_reducer_get(op, dt, &red);
			call++;
			for (unsigned int i = 0; i < n; i++)
				ref_fill(in[i], cnt * n, dt, i, call);
			ret = dfg_allreduce(t, in[r->rank], rbuf, cnt, dt, op);
			ref_reduce(ref_order(t, DFG_COLL_ALLREDUCE), n, in, cnt,
				   &red, ref);
			if (ret || memcmp(ref, rbuf, cnt * red.esize))
				net_fail(r, "allreduce", ret);
			ret = dfg_reduce_scatter(t, in[r->rank], rbuf, cnt, dt,
						 op);
			ref_reduce(ref_order(t, DFG_COLL_REDUCE_SCATTER), n, in,
				   cnt * n, &red, ref);
			if (ret || memcmp(ref + r->rank * cnt * red.esize, rbuf,
					  cnt * red.esize))
				net_fail(r, "reduce_scatter", ret);
			ret = dfg_allgather(t, in[r->rank], rbuf, cnt * 4);
			for (unsigned int i = 0; i < n && !ret; i++)
				if (memcmp(rbuf + i * cnt * 4, in[i], cnt * 4))
					ret = -EBADMSG;
			if (ret)
				net_fail(r, "allgather", ret);
			memcpy(rbuf, in[r->rank], cnt * 4);
			ret = dfg_broadcast(t, rbuf, cnt * 4, call % n);
			if (ret || memcmp(rbuf, in[call % n], cnt * 4))
				net_fail(r, "broadcast", ret);
			ret = dfg_alltoall(t, in[r->rank], rbuf, cnt);
			for (unsigned int i = 0; i < n && !ret; i++)
				if (memcmp(rbuf + i * cnt, (char *)in[i] +
					   r->rank * cnt, cnt))
					ret = -EBADMSG;
			if (ret)
				net_fail(r, "alltoall", ret);
			ret = dfg_barrier(t);
			if (ret)
				net_fail(r, "barrier", ret);
		}
	}
	net_alltoall(r, t, n);
	net_direct(r, t, n, in, rbuf, ref);
	/*
	 * Mismatched counts: -EINVAL on every rank (the rank that finds it
	 * tells the others why), then it goes on.
	 */
	if (n > 1) {
		struct dfg_team_failure f;

		ret = dfg_allreduce(t, in[r->rank], rbuf, 64 + r->rank,
				    DFG_INT32, DFG_SUM);
		if (ret != -EINVAL)
			net_fail(r, "mismatched count", ret);
		ret = dfg_team_failure(t, &f);
		if (ret || f.what != DFG_TEAM_FAIL_MISMATCH || f.rank < 0 ||
		    f.rank >= (int)n || f.err != EINVAL || !f.seq)
			net_fail(r, "mismatch's reason", ret ? ret : -f.what);
	}
	ret = dfg_barrier(t);
	if (ret)
		net_fail(r, "barrier after mismatch", ret);
	{
		struct dfg_team_failure f;

		if (dfg_team_failure(t, &f) != -ENOENT)
			net_fail(r, "a reason after a good call", 0);
	}
	if (dfg_team_add_arena(t, (struct dfg_arena *)rbuf) != -EOPNOTSUPP)
		net_fail(r, "add_arena", 0);
	ret = dfg_team_leave(t);
	if (ret)
		net_fail(r, "leave", ret);
	for (unsigned int i = 0; i < n; i++)
		free(in[i]);
out:
	free(in);
	free(rbuf);
	free(ref);
	return NULL;
}

static void run_net(struct __test_metadata *_metadata, unsigned int n)
{
	struct boot b = { .size = n, .fail_at = -1 };
	struct net_rank r[NET_MAX];
	pthread_t th[NET_MAX];

	pthread_barrier_init(&b.bar, NULL, n);
	pthread_mutex_init(&b.lock, NULL);
	for (unsigned int i = 0; i < n; i++) {
		r[i] = (struct net_rank){ .b = &b, .rank = i };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, net_main, &r[i]));
	}
	for (unsigned int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (unsigned int i = 0; i < n; i++) {
		EXPECT_EQ(0, r[i].failures) TH_LOG("n=%u: %s", n, r[i].msg);
	}
	free(b.buf);
	pthread_barrier_destroy(&b.bar);
	pthread_mutex_destroy(&b.lock);
}

FIXTURE(net) {
};

FIXTURE_SETUP(net)
{
}

FIXTURE_TEARDOWN(net)
{
}

/* Every collective over UCX for 1..4 threads-as-ranks. */
TEST_F_TIMEOUT(net, collectives, 300)
{
	for (unsigned int n = 1; n <= NET_MAX; n++)
		run_net(_metadata, n);
}

static int ag_unused(const void *mine, void *all, size_t len, void *arg)
{
	(void)mine;
	(void)all;
	(void)len;
	(void)arg;
	return -EIO;
}

TEST(join_errors)
{
	struct boot b = { .size = 1, .fail_at = 0 };
	struct boot_arg ba = { .b = &b };
	struct dfg_team *t = NULL;

	EXPECT_EQ(-EINVAL, dfg_team_join_net(0, 0, ag_unused, NULL, &t));
	EXPECT_EQ(-EINVAL, dfg_team_join_net(2, 2, ag_unused, NULL, &t));
	EXPECT_EQ(-EINVAL, dfg_team_join_net(65, 0, ag_unused, NULL, &t));
	EXPECT_EQ(-EINVAL, dfg_team_join_net(1, 0, NULL, NULL, &t));
	EXPECT_EQ(-EINVAL, dfg_team_join_net(1, 0, ag_unused, NULL, NULL));
	/* The bootstrap's error is the join's, and nothing leaks. */
	pthread_barrier_init(&b.bar, NULL, 1);
	pthread_mutex_init(&b.lock, NULL);
	EXPECT_EQ(-EHOSTUNREACH, dfg_team_join_net(1, 0, boot_ag, &ba, &t));
	b.fail_at = 1;
	ba.round = 0;
	EXPECT_EQ(-EHOSTUNREACH, dfg_team_join_net(1, 0, boot_ag, &ba, &t));
	EXPECT_EQ(NULL, t);
	free(b.buf);
	pthread_barrier_destroy(&b.bar);
	pthread_mutex_destroy(&b.lock);
}

/*
 * Two processes, one team: the allgather over a socket pair (rank 0 one
 * end, rank 1 the other). @stop_at: the round after which rank 1 stops
 * itself (SIGSTOP), or -1.
 */
struct pair_boot {
	int		fd;
	unsigned int	rank;
	int		round;
	int		stop_at;
};

static int pair_io(int fd, void *buf, size_t len, bool out)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = out ? write(fd, (char *)buf + done, len - done) :
				  read(fd, (char *)buf + done, len - done);

		if (n <= 0)
			return -EIO;
		done += n;
	}
	return 0;
}

static int pair_ag(const void *mine, void *all, size_t len, void *arg)
{
	struct pair_boot *b = arg;
	int round = b->round++;

	memcpy((char *)all + b->rank * len, mine, len);
	if (pair_io(b->fd, (void *)mine, len, true) ||
	    pair_io(b->fd, (char *)all + (1 - b->rank) * len, len, false))
		return -EIO;
	if (b->rank == 1 && round == b->stop_at)
		raise(SIGSTOP);
	return 0;
}

/* Fork rank 1 with its end of a socket pair: fork()'s result. */
static pid_t pair_fork(struct pair_boot *b)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -1;
	pid = fork();
	b->rank = pid == 0;
	b->fd = sv[b->rank];
	close(sv[1 - b->rank]);
	return pid;
}

static long long ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/*
 * Rank 1 (a child process) dies after a few allreduces: rank 0's next
 * collective fails with -EOWNERDEAD within 2 s (the liveness connection
 * closes when the process goes; no timeout is involved).
 */
TEST(death_found_at_once)
{
	struct pair_boot b = { .stop_at = -1 };
	struct dfg_team_failure f;
	double v[64] = { 0 }, out[64];
	long long last, ms;
	struct dfg_team *t;
	int ret = 0, status;
	pid_t pid;

	pid = pair_fork(&b);
	ASSERT_LE(0, pid);
	ret = dfg_team_join_net(2, b.rank, pair_ag, &b, &t);
	if (pid == 0) {
		for (int i = 0; i < 5 && !ret; i++)
			ret = dfg_allreduce(t, v, out, 64, DFG_FLOAT64,
					    DFG_SUM);
		_exit(ret ? 1 : 0);
	}
	ASSERT_EQ(0, ret);
	last = ms_now();
	for (int i = 0; i < 1000000 && !ret; i++) {
		ret = dfg_allreduce(t, v, out, 64, DFG_FLOAT64, DFG_SUM);
		if (!ret)
			last = ms_now();
	}
	ms = ms_now() - last;
	EXPECT_EQ(-EOWNERDEAD, ret);
	EXPECT_GT(2000, ms) TH_LOG("found after %lld ms", ms);
	/* Why: rank 1 was killed (its process gone, not unreachable). */
	ASSERT_EQ(0, dfg_team_failure(t, &f));
	EXPECT_EQ(DFG_TEAM_FAIL_KILLED, f.what);
	EXPECT_EQ(1, f.rank);
	EXPECT_STREQ("killed", dfg_team_fail_name(f.what));
	/* Broken for good, and leaving still frees everything. */
	EXPECT_EQ(-EOWNERDEAD, dfg_barrier(t));
	EXPECT_EQ(0, dfg_team_leave(t));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	close(b.fd);
}

/*
 * Rank 1 takes part in the bootstrap, then never connects: rank 0's join
 * ends with -ETIMEDOUT after DFG_TEAM_TIMEOUT_MS.
 */
TEST(never_connects)
{
	struct pair_boot b = { .stop_at = 1 };
	struct dfg_team_failure f;
	struct dfg_team *t = NULL;
	long long t0, ms;
	int ret, status;
	pid_t pid;

	pid = pair_fork(&b);
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Stopped inside; killed by the parent. */
		dfg_team_join_net(2, 1, pair_ag, &b, &t);
		_exit(1);
	}
	setenv("DFG_TEAM_TIMEOUT_MS", "1500", 1);
	t0 = ms_now();
	ret = dfg_team_join_net(2, 0, pair_ag, &b, &t);
	ms = ms_now() - t0;
	unsetenv("DFG_TEAM_TIMEOUT_MS");
	EXPECT_EQ(-ETIMEDOUT, ret);
	EXPECT_EQ(NULL, t);
	EXPECT_LE(1500, ms);
	/* Why, with no team: rank 1 never said hello. */
	ASSERT_EQ(0, dfg_team_failure(NULL, &f));
	EXPECT_EQ(DFG_TEAM_FAIL_TIMEOUT, f.what);
	EXPECT_EQ(1, f.rank);
	EXPECT_EQ(ETIMEDOUT, f.err);
	EXPECT_EQ(0ULL, f.seq);
	EXPECT_GT(1500 + 2000, ms) TH_LOG("gave up after %lld ms", ms);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(b.fd);
}

/*
 * The wait policy of one team of @n threads: a waiter naps only where
 * the team's members on this machine (all of them here) outnumber its
 * CPUs, or with DFG_COLL_PREV=nap (@prev). Rank 0 waits in a barrier for
 * the last rank, which enters once rank 0 has napped where it should
 * (or after 20 s: the test fails), else after 100 ms, and then rank 0
 * must not have napped.
 */
struct nap_rank {
	struct boot		*b;
	unsigned int		rank;
	struct dfg_team		**teams;
	bool			expect;
	bool			nap;
	unsigned long		naps;
	int			ret;
};

static void *nap_main(void *arg)
{
	struct nap_rank *r = arg;
	struct boot_arg ba = { .b = r->b, .rank = r->rank };
	unsigned int n = r->b->size;
	struct dfg_team *t;
	bool nap;

	r->ret = dfg_team_join_net(n, r->rank, boot_ag, &ba, &t);
	r->teams[r->rank] = r->ret ? NULL : t;
	pthread_barrier_wait(&r->b->bar);
	for (unsigned int i = 0; i < n; i++)
		if (!r->teams[i])
			goto out;
	if (r->rank == n - 1) {
		long long end = ms_now() + 20000;

		if (!r->expect)
			usleep(100 * 1000);
		while (r->expect && ms_now() < end &&
		       !dfg_xport_ucx_naps(r->teams[0]->x, &nap, &r->naps) &&
		       !r->naps)
			usleep(1000);
	}
	r->ret = dfg_barrier(t);
	if (!r->ret)
		r->ret = dfg_xport_ucx_naps(t->x, &r->nap, &r->naps);
	pthread_barrier_wait(&r->b->bar);
out:
	if (r->teams[r->rank])
		dfg_team_leave(t);
	return NULL;
}

static void run_naps(struct __test_metadata *_metadata, unsigned int n,
		     bool prev)
{
	struct boot b = { .size = n, .fail_at = -1 };
	struct dfg_team *teams[NET_MAX];
	struct nap_rank r[NET_MAX];
	pthread_t th[NET_MAX];
	bool expect = dfg_coll_crowded(n) || prev;

	pthread_barrier_init(&b.bar, NULL, n);
	pthread_mutex_init(&b.lock, NULL);
	if (prev)
		setenv("DFG_COLL_PREV", "nap", 1);
	for (unsigned int i = 0; i < n; i++) {
		r[i] = (struct nap_rank){ .b = &b, .rank = i, .teams = teams,
					  .expect = expect };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, nap_main, &r[i]));
	}
	for (unsigned int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	unsetenv("DFG_COLL_PREV");
	for (unsigned int i = 0; i < n; i++) {
		EXPECT_EQ(0, r[i].ret) TH_LOG("n=%u prev=%d rank %u", n, prev,
					      i);
		EXPECT_EQ(expect, r[i].nap) TH_LOG("n=%u prev=%d rank %u", n,
						   prev, i);
	}
	if (expect) {
		EXPECT_LT(0UL, r[0].naps) TH_LOG("n=%u prev=%d", n, prev);
	} else {
		EXPECT_EQ(0UL, r[0].naps) TH_LOG("n=%u", n);
	}
	free(b.buf);
	pthread_barrier_destroy(&b.bar);
	pthread_mutex_destroy(&b.lock);
}

/*
 * With as many members as CPUs a waiter polls; with more, or with
 * DFG_COLL_PREV=nap, it naps (on a 2-CPU machine: 2 polls, 3 naps).
 */
TEST(wait_policy)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	ASSERT_LT(0, cpus);
	EXPECT_FALSE(dfg_coll_crowded(1));
	EXPECT_FALSE(dfg_coll_crowded(cpus));
	EXPECT_TRUE(dfg_coll_crowded(cpus + 1));
	run_naps(_metadata, 2, false);
	run_naps(_metadata, 3, false);
	run_naps(_metadata, 2, true);
}

/* DFG_TEAM_TIMEOUT_MS that is not a number. */
TEST(bad_timeout)
{
	struct dfg_team *t = NULL;

	setenv("DFG_TEAM_TIMEOUT_MS", "soon", 1);
	EXPECT_EQ(-EINVAL, dfg_team_join_net(1, 0, ag_unused, NULL, &t));
	unsetenv("DFG_TEAM_TIMEOUT_MS");
	EXPECT_EQ(NULL, t);
}

/* dfg_team_failure()'s own errors and names. */
TEST(failure_args)
{
	struct dfg_team_failure f;

	EXPECT_EQ(-EINVAL, dfg_team_failure(NULL, NULL));
	EXPECT_STREQ("none", dfg_team_fail_name(DFG_TEAM_FAIL_NONE));
	EXPECT_STREQ("link", dfg_team_fail_name(DFG_TEAM_FAIL_LINK));
	EXPECT_STREQ("mismatch", dfg_team_fail_name(DFG_TEAM_FAIL_MISMATCH));
	EXPECT_STREQ("?", dfg_team_fail_name(DFG_TEAM_FAIL_NR));
	EXPECT_STREQ("?", dfg_team_fail_name(-1));
	/* A join that failed on its arguments has no reason to give. */
	EXPECT_EQ(-EINVAL, dfg_team_join_net(0, 0, ag_unused, NULL, NULL));
	EXPECT_EQ(-ENOENT, dfg_team_failure(NULL, &f));
}

/* Outside a PMIx launcher there is nobody to ask. */
TEST(pmix_without_launcher)
{
	struct dfg_team *t = NULL;

	EXPECT_EQ(-ENOTCONN, dfg_team_from_pmix(&t));
	EXPECT_EQ(-EINVAL, dfg_team_from_pmix(NULL));
}

TEST_HARNESS_MAIN
