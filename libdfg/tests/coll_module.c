// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg test of the collectives on the shared-memory transport against
 * the loaded dfg module (run it in the test VM: tools/vm/dfg-vm --
 * build/libdfg/tests/coll_module). SKIPs without the device or teams.
 *
 * Members are forked processes; each checks its own results against a
 * serial reference in the algorithm's reduction order and reports
 * through its exit status (0 ok, else the line of the first failure).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dfg/coll.h>
#include <dfg/dfg.h>
#include <dfg/graph.h>

#include "kselftest_harness.h"
#include "copy.h"
#include "devgraph.h"
#include "coll_ref.h"

#define SKIP_IF_NO_TEAM() do {						\
	if (self->gfd < 0)						\
		SKIP(return, "%s", "no dfg device with teams");		\
} while (0)

FIXTURE(coll) {
	struct dfg *d;
	int gfd;
};

FIXTURE_SETUP(coll)
{
	char name[DFG_NAME_MAX];

	DEVGRAPH_SETUP(DFG_F_TEAM, "coll", name, sizeof(name));
}

FIXTURE_TEARDOWN(coll)
{
	if (self->gfd >= 0)
		close(self->gfd);
	dfg_close(self->d);
}

static long sysfs_long(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/dfg/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A member's body: 0, or the line that failed. */
typedef int (*member_fn)(struct dfg_team *t, unsigned int n,
			 unsigned int r, void *arg);

#define CHECK(cond) do { if (!(cond)) return __LINE__; } while (0)

static int member(int gfd, const char *name, unsigned int n, unsigned int r,
		  member_fn fn, void *arg)
{
	struct dfg_team *t;
	int ret;

	ret = dfg_team_join(gfd, name, n, r, 20000, &t);
	if (ret)
		return 200 + (-ret & 31);
	CHECK(dfg_team_rank(t) == r && dfg_team_size(t) == n);
	ret = fn(t, n, r, arg);
	if (ret)
		return ret;
	return dfg_team_leave(t) ? 250 : 0;
}

/* Fork @n members of a new team; the number of members that failed. */
static int run_team(struct __test_metadata *_metadata, int gfd,
		    unsigned int n, member_fn fn, void *arg)
{
	static unsigned int seq;
	pid_t pids[DFG_TEAM_SIZE_MAX];
	char name[32];
	int bad = 0, status;

	snprintf(name, sizeof(name), "t%u-%u", n, seq++);
	for (unsigned int r = 0; r < n; r++) {
		pids[r] = fork();
		if (!pids[r])
			_exit(member(gfd, name, n, r, fn, arg));
	}
	for (unsigned int r = 0; r < n; r++) {
		if (waitpid(pids[r], &status, 0) != pids[r] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			TH_LOG("n=%u rank %u: %s %d", n, r,
			       WIFEXITED(status) ? "exit" : "signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) :
			       WTERMSIG(status));
			bad++;
		}
	}
	return bad;
}

/*
 * Every collective, type and op at small and medium sizes (staged
 * through scratch, and exposed per call), each algorithm.
 */
static const size_t counts[] = { 1, 5, 333, 70000 };

/*
 * Every type and op pair runs at n = 1, 2 and 3 (power of two or not);
 * above, each team size runs a third of the pairs, in turn, so n = 4..8
 * still meet every pair and make check stays short under TCG (the
 * reducers' arithmetic has its own host test; n changes the schedule).
 * The pair the large count uses (float64 sum) runs everywhere.
 */
static bool pair_at(unsigned int n, int dt, int op)
{
	return n <= 3 || (dt == DFG_FLOAT64 && op == DFG_SUM) ||
	       (unsigned int)(dt * DFG_OP_NR + op) % 3 == n % 3;
}

static int all_kinds(struct dfg_team *t, unsigned int n, unsigned int r,
		     void *arg)
{
	static const enum dfg_coll_algo algos[] = {
		DFG_ALGO_AUTO, DFG_ALGO_RHALVING, DFG_ALGO_RING,
		DFG_ALGO_DIRECT, DFG_ALGO_INBOX,
	};
	size_t maxc = 70000 * n;
	char *sbuf = malloc(maxc * 8), *rbuf = malloc(maxc * 8);
	char *ref = malloc(maxc * 8);
	void *in[DFG_TEAM_SIZE_MAX];
	unsigned int call = 0;

	(void)arg;
	for (unsigned int i = 0; i < n; i++)
		in[i] = malloc(maxc * 8);
	for (unsigned int ai = 0; ai < sizeof(algos) / sizeof(algos[0]);
	     ai++) {
		enum dfg_coll_algo a = algos[ai];

		CHECK(!dfg_coll_set_algo(t, DFG_COLL_ALLREDUCE, a));
		CHECK(!dfg_coll_set_algo(t, DFG_COLL_REDUCE_SCATTER, a));
		CHECK(!dfg_coll_set_algo(t, DFG_COLL_REDUCE,
					 a == DFG_ALGO_RING ? DFG_ALGO_AUTO :
					 a));
		CHECK(!dfg_coll_set_algo(t, DFG_COLL_ALLGATHER,
					 a == DFG_ALGO_RHALVING ?
					 DFG_ALGO_AUTO : a));
		for (int dt = 0; dt < DFG_DTYPE_NR; dt++) {
			for (int op = 0; op < DFG_OP_NR; op++) {
				for (size_t ci = 0; ci < 4; ci++) {
					size_t cnt = counts[ci], e;
					struct dfg_reducer red;
					unsigned int root;

					if (cnt > 1000 && (op || dt != 3))
						continue;
					if (!pair_at(n, dt, op))
						continue;
					call++;
					root = call % n;
					dfg_reducer_get(op, dt, &red);
					e = red.esize;
					for (unsigned int i = 0; i < n; i++)
						ref_fill(in[i], cnt * n, dt, i,
							 call);
					memcpy(sbuf, in[r], cnt * n * e);
					CHECK(!dfg_allreduce(t, sbuf, rbuf, cnt,
							     dt, op));
					ref_reduce(ref_order(t,
						   DFG_COLL_ALLREDUCE), n, in,
						   cnt, &red, ref);
					CHECK(!memcmp(ref, rbuf, cnt * e));
					/*
					 * the inbox where forced and fitting
					 * (DFG_COLL_NOPTR hides it)
					 */
					CHECK(a != DFG_ALGO_INBOX || n < 2 ||
					      getenv("DFG_COLL_NOPTR") ||
					      (cnt * e <= ref_inbox_slot(n)) ==
					      (dfg_coll_last_algo(t,
					       DFG_COLL_ALLREDUCE) ==
					       DFG_ALGO_INBOX));
					memcpy(rbuf, sbuf, cnt * e);
					CHECK(!dfg_allreduce(t, DFG_IN_PLACE,
							     rbuf, cnt, dt,
							     op));
					CHECK(!memcmp(ref, rbuf, cnt * e));

					CHECK(!dfg_reduce(t, sbuf, rbuf, cnt,
							  dt, op, root));
					ref_reduce(ref_order(t,
						   DFG_COLL_REDUCE), n, in,
						   cnt, &red, ref);
					CHECK(r != root ||
					      !memcmp(ref, rbuf, cnt * e));

					CHECK(!dfg_reduce_scatter(t, sbuf, rbuf,
								  cnt, dt,
								  op));
					ref_reduce(ref_order(t,
						   DFG_COLL_REDUCE_SCATTER),
						   n, in, cnt * n, &red, ref);
					CHECK(!memcmp(ref + r * cnt * e, rbuf,
						      cnt * e));
				}
			}
		}
		for (size_t ci = 0; ci < 4; ci++) {
			size_t b = counts[ci] * 4;

			call++;
			for (unsigned int i = 0; i < n; i++)
				ref_fill(in[i], counts[ci], DFG_INT32, i,
					 call);
			CHECK(!dfg_allgather(t, in[r], rbuf, b));
			for (unsigned int i = 0; i < n; i++)
				CHECK(!memcmp(rbuf + i * b, in[i], b));
			memcpy(rbuf, in[r], b);
			CHECK(!dfg_broadcast(t, rbuf, b, call % n));
			CHECK(!memcmp(rbuf, in[call % n], b));
			CHECK(!dfg_barrier(t));
		}
	}
	for (unsigned int i = 0; i < n; i++)
		free(in[i]);
	free(sbuf);
	free(rbuf);
	free(ref);
	return 0;
}

TEST_F_TIMEOUT(coll, every_size_kind_type_op, 1200)
{
	SKIP_IF_NO_TEAM();
	/*
	 * Every team size up to 8 but 6: the host test checks the schedules
	 * of every size 1..64, and 5 and 7 already take the paths a size
	 * that is no power of two takes (6 alone cost a sixth of the test).
	 */
	for (unsigned int n = 1; n <= 8; n++) {
		if (n == 6)
			continue;
		EXPECT_EQ(0, run_team(_metadata, self->gfd, n, all_kinds,
				      NULL));
	}
	EXPECT_EQ(0, sysfs_long("pinned"));
}

/* The get/put path of transports without load/store, on shm. */
TEST_F_TIMEOUT(coll, get_put_path, 600)
{
	SKIP_IF_NO_TEAM();
	setenv("DFG_COLL_NOPTR", "1", 1);
	/* A size that is no power of two and one that is. */
	for (unsigned int n = 3; n <= 4; n++)
		EXPECT_EQ(0, run_team(_metadata, self->gfd, n, all_kinds,
				      NULL));
	unsetenv("DFG_COLL_NOPTR");
}

/*
 * Large vectors: int32 sums (exact in any order) up to 64 MiB, checked
 * element by element against the sum of the generated inputs.
 */
static int large(struct dfg_team *t, unsigned int n, unsigned int r,
		 void *arg)
{
	size_t cnt = *(size_t *)arg;
	int32_t *s = malloc(cnt * 4), *d = malloc(cnt * 4);
	int32_t *one = malloc(cnt * 4);
	double t0, t1;

	CHECK(s && d && one);
	ref_fill(s, cnt, DFG_INT32, r, 1);
	t0 = now_s();
	CHECK(!dfg_allreduce(t, s, d, cnt, DFG_INT32, DFG_SUM));
	t1 = now_s();
	for (unsigned int i = 0; i < n; i++) {
		ref_fill(one, cnt, DFG_INT32, i, 1);
		for (size_t k = 0; k < cnt; k++)
			d[k] -= one[k];
	}
	for (size_t k = 0; k < cnt; k++)
		CHECK(!d[k]);
	if (!r)
		fprintf(stderr, "# allreduce n=%u %zu MiB: %.3f s\n", n,
			cnt * 4 >> 20, t1 - t0);
	free(s);
	free(d);
	free(one);
	return 0;
}

TEST_F_TIMEOUT(coll, large_vectors, 600)
{
	size_t mb64 = 16 << 20, mb8 = 2 << 20;

	SKIP_IF_NO_TEAM();
	EXPECT_EQ(0, run_team(_metadata, self->gfd, 2, large, &mb64));
	EXPECT_EQ(0, run_team(_metadata, self->gfd, 3, large, &mb8));
	EXPECT_EQ(0, run_team(_metadata, self->gfd, 8, large, &mb8));
	EXPECT_EQ(0, sysfs_long("pinned"));
}

/* 1000 collectives in a row: nothing stays pinned or allocated. */
static int many(struct dfg_team *t, unsigned int n, unsigned int r,
		void *arg)
{
	size_t big = 96 << 10;	/* int64: 768 KiB, exported per call */
	int64_t *s = malloc(big * 8), *d = malloc(big * 8);

	(void)arg;
	for (int i = 0; i < 1000; i++) {
		size_t cnt = i % 10 ? (size_t)(i % 97) + 1 : big;

		for (size_t k = 0; k < cnt; k++)
			s[k] = (int64_t)(r + 1) * (i + (int64_t)k);
		CHECK(!dfg_allreduce(t, s, d, cnt, DFG_INT64, DFG_SUM));
		for (size_t k = 0; k < cnt; k++)
			CHECK(d[k] == (int64_t)n * (n + 1) / 2 *
				      (i + (int64_t)k));
	}
	CHECK(!dfg_barrier(t));
	free(s);
	free(d);
	return 0;
}

TEST_F_TIMEOUT(coll, thousand_calls_no_leak, 600)
{
	long pages0 = sysfs_long("pages");

	SKIP_IF_NO_TEAM();
	EXPECT_EQ(0, run_team(_metadata, self->gfd, 4, many, NULL));
	EXPECT_EQ(0, sysfs_long("pinned"));
	/* The teams' control areas went with their members. */
	EXPECT_EQ(pages0, sysfs_long("pages"));
}

/*
 * A member dies inside a collective (its user op kills it on the second
 * call): every other member fails with -EOWNERDEAD within 2 s, and so do
 * later collectives.
 */
static int killer_calls;
/* When the member died (CLOCK_MONOTONIC s), in memory shared by the ranks:
 * the 2 s run from the death, not from the survivors' call, which also
 * waits for the dying member to get there (slow on a loaded TCG host). */
static volatile double *death_at;

static void killer_op(void *inout, const void *in, size_t cnt,
		      enum dfg_dtype dt, void *arg)
{
	int32_t *d = inout;
	const int32_t *s = in;

	(void)dt;
	if (arg && ++killer_calls == 2) {
		*death_at = now_s();
		kill(getpid(), SIGKILL);
	}
	for (size_t i = 0; i < cnt; i++)
		d[i] += s[i];
}

static int dies(struct dfg_team *t, unsigned int n, unsigned int r,
		void *arg)
{
	size_t cnt = 1 << 20;
	int32_t *s = calloc(cnt, 4), *d = calloc(cnt, 4);
	int op = dfg_op_create(killer_op, r == n - 1 ? &killer_calls : NULL);
	int ret;

	(void)arg;
	CHECK(op >= DFG_OP_USER);
	CHECK(!dfg_allreduce(t, s, d, 16, DFG_INT32, DFG_SUM));
	ret = dfg_allreduce(t, s, d, cnt, DFG_INT32, op);
	CHECK(r != n - 1);	/* the killer never gets here */
	/*
	 * A rank that had everything it needed before the death (the killer
	 * dies in a later reduction step) may finish the call; the others
	 * fail within 2 s of the death.
	 */
	CHECK(ret == -EOWNERDEAD || ret == 0);
	CHECK(!ret || (*death_at > 0 && now_s() - *death_at < 2.0));
	CHECK(dfg_barrier(t) == -EOWNERDEAD);
	CHECK(dfg_allreduce(t, s, d, 4, DFG_INT32, DFG_SUM) == -EOWNERDEAD);
	/* A broken team's member still frees what it holds. */
	dfg_team_leave(t);
	_exit(0);
}

static void member_killed(struct __test_metadata *_metadata,
			  FIXTURE_DATA(coll) *self)
{
	pid_t pids[4];
	int status;

	death_at = mmap(NULL, sizeof(*death_at), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, (void *)death_at);
	*death_at = 0;
	for (unsigned int r = 0; r < 4; r++) {
		pids[r] = fork();
		ASSERT_LE(0, pids[r]);
		if (!pids[r])
			_exit(member(self->gfd, "killed", 4, r, dies, NULL));
	}
	for (unsigned int r = 0; r < 4; r++) {
		ASSERT_EQ(pids[r], waitpid(pids[r], &status, 0));
		if (r == 3) {
			EXPECT_TRUE(WIFSIGNALED(status));
			continue;
		}
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("rank %u", r);
	}
	/* What the broken team's calls exposed goes with the graph. */
	close(self->gfd);
	self->gfd = -1;
	EXPECT_EQ(0, sysfs_long("pinned"));
}

/*
 * A member sleeping in a wait of the team runs another transport's
 * progress() at its wakeups (dfg_xport_shm_idle(): a hierarchy's member
 * keeps the team's network transport answering its peers while it waits
 * in its machine's kernel team). Rank 1 comes to a barrier only once
 * rank 0, waiting there, has run it three times (its sleeps end every
 * 100 ms at most), or gives up after 20 s; rank 1 itself runs nothing.
 * Unset, nothing runs.
 */
static volatile unsigned int *idle_runs;

static void idle_progress(struct dfg_xport *x)
{
	(void)x;
	__atomic_add_fetch(idle_runs, 1, __ATOMIC_RELEASE);
}

static const struct dfg_xport_ops idle_ops = {
	.name = "idle", .progress = idle_progress,
};

static int idles(struct dfg_team *t, unsigned int n, unsigned int r,
		 void *arg)
{
	struct dfg_xport other = { .ops = &idle_ops };
	struct timespec nap = { .tv_nsec = 10 * 1000 * 1000 };
	struct timespec late = { .tv_nsec = 300 * 1000 * 1000 };
	double end = now_s() + 20;
	unsigned int runs;

	(void)n;
	(void)arg;
	if (r == 0)
		dfg_xport_shm_idle(t->x, &other);
	while (r == 1 &&
	       __atomic_load_n(idle_runs, __ATOMIC_ACQUIRE) < 3 &&
	       now_s() < end)
		nanosleep(&nap, NULL);
	CHECK(!dfg_barrier(t));
	CHECK(*idle_runs >= 3);
	/*
	 * Unset: rank 0 sleeps again (rank 1 comes late), nothing runs. Only
	 * rank 0 can tell: rank 1 may leave the barrier above while rank 0,
	 * still in its wait, runs progress() once more before it unsets.
	 */
	dfg_xport_shm_idle(t->x, NULL);
	runs = *idle_runs;
	if (r == 1)
		nanosleep(&late, NULL);
	CHECK(!dfg_barrier(t));
	CHECK(r != 0 || *idle_runs == runs);
	return 0;
}

TEST_F_TIMEOUT(coll, sleeper_runs_idle_transport, 120)
{
	SKIP_IF_NO_TEAM();
	idle_runs = mmap(NULL, sizeof(*idle_runs), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, (void *)idle_runs);
	EXPECT_EQ(0, run_team(_metadata, self->gfd, 2, idles, NULL));
	EXPECT_LE(3, *idle_runs);
}

TEST_F_TIMEOUT(coll, member_killed_mid_collective, 120)
{
	SKIP_IF_NO_TEAM();
	member_killed(_metadata, self);
}

/*
 * The same death where the 4 members outnumber the CPUs (the test VM has
 * 2) and their waits sleep right after polling (DFG_COLL_YIELD_US=0): a
 * sleeping survivor learns of it too.
 */
TEST_F_TIMEOUT(coll, member_killed_waits_asleep, 120)
{
	SKIP_IF_NO_TEAM();
	setenv("DFG_COLL_YIELD_US", "0", 1);
	member_killed(_metadata, self);
	unsetenv("DFG_COLL_YIELD_US");
}

/*
 * Small calls of every kind, checked, call after call: where the team
 * has more members than there are CPUs, every wait goes through the
 * yield window (DFG_COLL_YIELD_US) and often past it into a sleep.
 */
static int crowded(struct dfg_team *t, unsigned int n, unsigned int r,
		   void *arg)
{
	int32_t s[64], d[64];
	unsigned char a2s[8 * 64], a2r[8 * 64], bc[64];

	(void)arg;
	for (int i = 0; i < 300; i++) {
		size_t cnt = 1 + i % 64, b = 1 + i % 64;
		unsigned int root = i % n;

		for (size_t k = 0; k < cnt; k++)
			s[k] = (int32_t)(r + 1) * (i + (int32_t)k);
		CHECK(!dfg_allreduce(t, s, d, cnt, DFG_INT32, DFG_SUM));
		for (size_t k = 0; k < cnt; k++)
			CHECK(d[k] == (int32_t)(n * (n + 1) / 2) *
				      (i + (int32_t)k));
		for (unsigned int p = 0; p < n; p++)
			memset(a2s + p * b, (int)(r * 16 + p + i), b);
		CHECK(!dfg_alltoall(t, a2s, a2r, b));
		for (unsigned int p = 0; p < n; p++)
			for (size_t k = 0; k < b; k++)
				CHECK(a2r[p * b + k] ==
				      (unsigned char)(p * 16 + r + i));
		memset(bc, r == root ? i : 0xff, b);
		CHECK(!dfg_broadcast(t, bc, b, root));
		for (size_t k = 0; k < b; k++)
			CHECK(bc[k] == (unsigned char)i);
	}
	CHECK(!dfg_barrier(t));
	return 0;
}

TEST_F_TIMEOUT(coll, yield_window_bounds_crowded, 600)
{
	static const char * const us[] = { "0", "1000000" };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int n = cpus > 0 && cpus < 6 ? (unsigned int)cpus + 2 : 8;
	struct dfg_team *t;

	SKIP_IF_NO_TEAM();
	for (size_t i = 0; i < sizeof(us) / sizeof(us[0]); i++) {
		setenv("DFG_COLL_YIELD_US", us[i], 1);
		EXPECT_EQ(0, run_team(_metadata, self->gfd, n, crowded, NULL))
			TH_LOG("DFG_COLL_YIELD_US=%s, %u members", us[i], n);
	}
	/* Refused before the join: no wait for the other member. */
	setenv("DFG_COLL_YIELD_US", "1000001", 1);
	EXPECT_EQ(-EINVAL, dfg_team_join(self->gfd, "y", 2, 0, 20000, &t));
	unsetenv("DFG_COLL_YIELD_US");
	EXPECT_EQ(0, sysfs_long("pinned"));
}

/*
 * Two members with CPUs to spare: under TCG (the test VM) their waits
 * first look without a pause, with DFG_COLL_PREV=pause every look pauses
 * (xport_shm.c, XSHM_TIGHT). Either way: small calls of every kind bit
 * for bit, and mismatched arguments -EINVAL on both members, the team
 * usable after.
 */
static int small_paths(struct dfg_team *t, unsigned int n, unsigned int r,
		       void *arg)
{
	unsigned char s[2 * 16], d[2 * 16];
	int32_t v[16] = { 0 }, w[16];
	int ret = crowded(t, n, r, arg);

	if (ret)
		return ret;
	memset(s, (int)r, sizeof(s));
	CHECK(dfg_alltoall(t, s, d, 8 + r) == -EINVAL);
	CHECK(dfg_allreduce(t, v, w, 8 + r, DFG_INT32, DFG_SUM) == -EINVAL);
	CHECK(!dfg_alltoall(t, s, d, 16));
	CHECK(d[0] == 0 && d[16] == 1);
	return 0;
}

TEST_F_TIMEOUT(coll, tight_and_paused_polls, 300)
{
	SKIP_IF_NO_TEAM();
	unsetenv("DFG_COLL_PREV");
	EXPECT_EQ(0, run_team(_metadata, self->gfd, 2, small_paths, NULL));
	setenv("DFG_COLL_PREV", "pause", 1);
	EXPECT_EQ(0, run_team(_metadata, self->gfd, 2, small_paths, NULL));
	unsetenv("DFG_COLL_PREV");
	EXPECT_EQ(0, sysfs_long("pinned"));
}

/*
 * DFG_COLL_STATS=100: a member's 250 all-to-alls print two lines (the
 * first call starts the clock; the 101st and 201st print) into its
 * stderr, here a file, which it then reads back: its rank, the team's
 * size, whether its waits look without a pause first, 100 calls, and
 * counts that add up (every wait in one bin of the histogram, no more
 * pauses than failed looks, at most one message to wait for per call).
 */
static int stats_lines(struct dfg_team *t, unsigned int n, unsigned int r,
		       void *arg)
{
	unsigned int tight = *(const unsigned int *)arg, rr, nn, tt;
	unsigned char s[2 * 8], d[2 * 8];
	char path[64], line[512];
	int lines = 0, fd;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/dfg-stats-%d-%u", (int)getppid(),
		 r);
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	CHECK(fd >= 0);
	CHECK(dup2(fd, 2) == 2);
	close(fd);
	for (int i = 0; i < 250; i++) {
		for (unsigned int p = 0; p < n; p++)
			memset(s + p * 8, (int)(r * 16 + p + i), 8);
		CHECK(!dfg_alltoall(t, s, d, 8));
		for (unsigned int p = 0; p < n; p++)
			CHECK(d[p * 8] == (unsigned char)(p * 16 + r + i));
	}
	f = fopen(path, "r");
	CHECK(f);
	unlink(path);
	while (fgets(line, sizeof(line), f)) {
		double us, w[5], ready, polls, pauses, yields, sleeps, wakes;
		unsigned long long h[7], hsum = 0;
		unsigned long long seq;
		unsigned long calls;

		CHECK(sscanf(line, "dfg-stats shm rank=%u size=%u tight=%u "
			     "seq=%llu calls=%lu us/call=%lf per call: "
			     "waits msg=%lf room=%lf begun=%lf word=%lf "
			     "all=%lf ready=%lf polls=%lf pauses=%lf "
			     "yields=%lf sleeps=%lf wakes=%lf "
			     "hist=%llu/%llu/%llu/%llu/%llu/%llu/%llu",
			     &rr, &nn, &tt, &seq, &calls, &us, &w[0], &w[1],
			     &w[2], &w[3], &w[4], &ready, &polls, &pauses,
			     &yields, &sleeps, &wakes, &h[0], &h[1], &h[2],
			     &h[3], &h[4], &h[5], &h[6]) == 24);
		CHECK(rr == r && nn == n && tt == tight && calls == 100);
		CHECK(us > 0 && w[0] > 0 && w[0] <= 1.0);
		CHECK(pauses <= polls && ready <= w[0] + w[1] + w[2] + w[3] +
						 w[4] + 0.005);
		for (int i = 0; i < 7; i++)
			hsum += h[i];
		CHECK(hsum == (unsigned long long)((w[0] + w[1] + w[2] + w[3] +
						    w[4]) * 100 + 0.5));
		lines++;
	}
	fclose(f);
	CHECK(lines == 2);
	return 0;
}

TEST_F_TIMEOUT(coll, stats_every_k_calls, 300)
{
	unsigned int tight = dfg_cpu_tcg() ? 1024 : 0, none = 0;

	SKIP_IF_NO_TEAM();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		tight = 0;
	setenv("DFG_COLL_STATS", "100", 1);
	EXPECT_EQ(0, run_team(_metadata, self->gfd, 2, stats_lines, &tight));
	setenv("DFG_COLL_PREV", "pause", 1);
	EXPECT_EQ(0, run_team(_metadata, self->gfd, 2, stats_lines, &none));
	unsetenv("DFG_COLL_PREV");
	/* Refused before the join: no wait for the other member. */
	setenv("DFG_COLL_STATS", "x", 1);
	{
		struct dfg_team *t;

		EXPECT_EQ(-EINVAL,
			  dfg_team_join(self->gfd, "s", 2, 0, 20000, &t));
	}
	unsetenv("DFG_COLL_STATS");
}

/* Bad arguments: errors on every member, never a crash or a hang. */
static int bad_args(struct dfg_team *t, unsigned int n, unsigned int r,
		    void *arg)
{
	int32_t s[64] = { 0 }, d[64];
	static const int32_t ro[4096] = { 1 };
	void *unmapped = mmap(NULL, 1 << 20, PROT_NONE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)arg;
	munmap(unmapped, 1 << 20);
	CHECK(dfg_allreduce(NULL, s, d, 4, DFG_INT32, DFG_SUM) == -EINVAL);
	CHECK(dfg_allreduce(t, s, d, 4, DFG_INT32, 99) == -EINVAL);
	CHECK(dfg_allreduce(t, s, d, 4, DFG_DTYPE_NR, DFG_SUM) == -EINVAL);
	CHECK(dfg_allreduce(t, NULL, d, 4, DFG_INT32, DFG_SUM) == -EINVAL);
	CHECK(dfg_allreduce(t, s, s + 1, 4, DFG_INT32, DFG_SUM) == -EINVAL);
	CHECK(dfg_reduce(t, s, d, 4, DFG_INT32, DFG_SUM, n) == -EINVAL);
	CHECK(dfg_broadcast(t, d, 4, n + 3) == -EINVAL);
	CHECK(dfg_coll_set_algo(t, DFG_COLL_ALLGATHER, DFG_ALGO_RHALVING) ==
	      -EINVAL);
	CHECK(dfg_coll_set_algo(t, DFG_COLL_KIND_NR, DFG_ALGO_RING) ==
	      -EINVAL);
	/* Mismatched counts between members. */
	if (n > 1) {
		int ret = dfg_allreduce(t, s, d, 8 + r, DFG_INT32, DFG_SUM);

		CHECK(ret == -EINVAL || ret == -EPROTO);
	}
	/*
	 * ... also where rank 0's vector fits the inbox and the others'
	 * take recursive halving through exported buffers.
	 */
	if (n > 1) {
		int32_t *big = calloc(2 * 8192, sizeof(*big));
		int ret;

		CHECK(big);
		ret = dfg_allreduce(t, big, big + 8192, r ? 8192 : 8,
				    DFG_INT32, DFG_SUM);
		CHECK(ret == -EINVAL || ret == -EPROTO);
		free(big);
	}
	/*
	 * Buffers outside this process's memory: the export fails
	 * everywhere (vectors above DFG_STAGE_MAX; smaller ones are read
	 * with plain loads, as memcpy() would).
	 */
	if (n > 1) {
		int ret = dfg_allreduce(t, unmapped, d, 1 << 18, DFG_INT32,
					DFG_SUM);

		CHECK(ret == -EFAULT || ret == -EPROTO);
	}
	/* Read-only input works (exported read-only); the output may not be. */
	CHECK(!dfg_allreduce(t, ro, d, 64, DFG_INT32, DFG_SUM));
	CHECK(d[0] == (int32_t)n);
	/* The team still works. */
	CHECK(!dfg_barrier(t));
	for (int i = 0; i < 64; i++)
		s[i] = r;
	CHECK(!dfg_allreduce(t, s, d, 64, DFG_INT32, DFG_MAX));
	CHECK(d[63] == (int32_t)n - 1);
	return 0;
}

TEST_F_TIMEOUT(coll, bad_arguments, 300)
{
	struct dfg_team *t;

	SKIP_IF_NO_TEAM();
	EXPECT_EQ(-EINVAL, dfg_team_join(self->gfd, NULL, 1, 0, 0, &t));
	EXPECT_EQ(-EINVAL, dfg_team_join(self->gfd, "x", 0, 0, 0, &t));
	EXPECT_EQ(-EINVAL, dfg_team_join(self->gfd, "x", 2, 2, 0, &t));
	EXPECT_EQ(-EINVAL, dfg_team_join(self->gfd, "x", 65, 0, 0, &t));
	EXPECT_EQ(-EBADF, dfg_team_join(-1, "x", 1, 0, 0, &t));
	EXPECT_EQ(-ETIMEDOUT, dfg_team_join(self->gfd, "x", 2, 0, 100, &t));
	EXPECT_EQ(-EINVAL, dfg_team_leave(NULL));
	for (unsigned int n = 1; n <= 5; n += 2)
		EXPECT_EQ(0, run_team(_metadata, self->gfd, n, bad_args,
				      NULL));
	EXPECT_EQ(0, sysfs_long("pinned"));
}

TEST_HARNESS_MAIN
