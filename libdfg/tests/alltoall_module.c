// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg test of dfg_alltoall() and dfg_alltoallv() against the loaded dfg
 * module (run it in the test VM: tools/vm/dfg-vm --cpus 2 --
 * build/libdfg/tests/alltoall_module). N forked ranks form a team; every
 * result is checked against the definition, gaps included. SKIPs when the
 * device cannot be opened or has no teams.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dfg/dfg.h>
#include <dfg/coll.h>

#include "kselftest_harness.h"
#include "module_pages.h"
#include "devgraph.h"
#include "coll_ref.h"

#define MAXN	8
#define CANARY	0xa5

/* Exit codes of a rank. */
enum { RANK_OK, RANK_FAIL, RANK_SKIP };

FIXTURE(a2a) {
	struct dfg *d;
	char name[DFG_NAME_MAX];
	int gfd;
};

FIXTURE_SETUP(a2a)
{
	DEVGRAPH_SETUP(DFG_F_TEAM, "a2a", self->name, sizeof(self->name));
}

FIXTURE_TEARDOWN(a2a)
{
	if (self->gfd >= 0)
		close(self->gfd);
	dfg_close(self->d);
}

static uint8_t pattern(unsigned int k, unsigned int i, unsigned int j,
		       size_t b)
{
	return (uint8_t)(k * 131 + i * 37 + j * 11 + b * 7 + 1);
}

/* Counts every rank derives alike from (seed, call): i sends j. */
static size_t vcount(unsigned int seed, unsigned int k, unsigned int i,
		     unsigned int j)
{
	unsigned int h = seed * 2654435761u ^ k * 40503u ^ i * 977u ^ j * 131u;

	h ^= h >> 13;
	h *= 0x5bd1e995;
	h ^= h >> 15;
	if (h % 4 == 0)
		return 0;
	return h % 7 == 0 ? 4096 + h % 9000 : h % 700;
}

/*
 * One call @k on rank @r of @n: alltoallv with vcount() lengths placed in
 * reverse order with gaps (or alltoall of @block when @v is 0), checked.
 * Returns 0, the call's error, or -EBADMSG on wrong data.
 */
/*
 * struct call_bufs - buffers one_call() reuses instead of allocating
 * @s, @r, @want: send, receive and expected result, @cap bytes each
 */
struct call_bufs {
	uint8_t	*s, *r, *want;
	size_t	cap;
};

static int one_call_in(struct dfg_team *t, unsigned int n, unsigned int r,
		       unsigned int k, int v, size_t block, unsigned int seed,
		       struct call_bufs *cb)
{
	size_t sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN], slen = 1, rlen = 1, b;
	uint8_t *sbuf, *rbuf, *want;
	unsigned int j;
	int ret;

	for (j = n; j-- > 0;) {
		sc[j] = v ? vcount(seed, k, r, j) : block;
		rc[j] = v ? vcount(seed, k, j, r) : block;
		sd[j] = v ? slen : j * block;
		rd[j] = v ? rlen : j * block;
		slen = v ? slen + sc[j] + 3 : n * block + 1;
		rlen = v ? rlen + rc[j] + 5 : n * block + 1;
	}
	if (cb && (slen > cb->cap || rlen > cb->cap))
		return -ENOSPC;
	sbuf = cb ? cb->s : malloc(slen);
	rbuf = cb ? cb->r : malloc(rlen);
	want = cb ? cb->want : malloc(rlen);
	if (!sbuf || !rbuf || !want) {
		free(sbuf);
		free(rbuf);
		free(want);
		return -ENOMEM;
	}
	memset(sbuf, CANARY, slen);
	memset(rbuf, CANARY, rlen);
	for (j = 0; j < n; j++)
		for (b = 0; b < sc[j]; b++)
			sbuf[sd[j] + b] = pattern(k, r, j, b);
	if (v)
		ret = dfg_alltoallv(t, sbuf, sc, sd, rbuf, rc, rd);
	else
		ret = dfg_alltoall(t, sbuf, rbuf, block);
	if (!ret) {
		memset(want, CANARY, rlen);
		for (j = 0; j < n; j++)
			for (b = 0; b < rc[j]; b++)
				want[rd[j] + b] = pattern(k, j, r, b);
		if (memcmp(want, rbuf, rlen))
			ret = -EBADMSG;
	}
	if (!cb) {
		free(sbuf);
		free(rbuf);
		free(want);
	}
	return ret;
}

/* Fresh buffers for every call: the library must not cache user memory. */
static int one_call(struct dfg_team *t, unsigned int n, unsigned int r,
		    unsigned int k, int v, size_t block, unsigned int seed)
{
	return one_call_in(t, n, r, k, v, block, seed, NULL);
}

/*
 * A member's death, in a MAP_SHARED page the ranks inherit: @there, how
 * many ranks are past their first call (the one to kill in pause(), the
 * others about to start the call it never comes to); times
 * (CLOCK_MONOTONIC, the same in every process) @killed, of the kill();
 * @dead, when the parent reaped it (its exit released its team
 * descriptor before, which breaks the team); @failed[r], when rank r's
 * call returned; @block, the second call's block (0: an alltoallv).
 */
struct death_clock {
	_Atomic unsigned int there;
	size_t		block;
	struct timespec	killed, dead, failed[MAXN];
};

static long ms_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000 +
	       (b->tv_nsec - a->tv_nsec) / 1000000;
}

/* Has one of @n ranks exited (not reaped: its status stays)? */
static bool any_exited(const pid_t *pid, unsigned int n)
{
	siginfo_t si;

	for (unsigned int r = 0; r < n; r++) {
		si.si_pid = 0;
		if (!waitid(P_PID, pid[r], &si, WEXITED | WNOHANG | WNOWAIT) &&
		    si.si_pid)
			return true;
	}
	return false;
}

typedef int (*rank_fn)(struct dfg_team *t, unsigned int n, unsigned int r,
		       void *arg);

/*
 * Fork @n ranks that join a team and run @fn; @kill_rank (if < n) is
 * killed once all @n are @dc->there, plus 100 ms for the others to sleep
 * in their call (one that starts after the death must fail as well),
 * and reaped first. Returns how many other ranks failed, or -1 when the
 * module has no teams.
 */
static int run_ranks(int gfd, const char *name, unsigned int n, rank_fn fn,
		     void *arg, unsigned int kill_rank,
		     struct death_clock *dc)
{
	pid_t pid[MAXN];
	unsigned int r;
	int failed = 0, skipped = 0, st;

	for (r = 0; r < n; r++) {
		pid[r] = fork();
		if (pid[r] < 0)
			return n;
		if (!pid[r]) {
			struct dfg_team *t;
			int ret;

			ret = dfg_team_join(gfd, name, n, r, 10000, &t);
			if (ret == -ENOTTY || ret == -EOPNOTSUPP)
				_exit(RANK_SKIP);
			if (ret) {
				fprintf(stderr, "rank %u: join: %s\n", r,
					strerror(-ret));
				_exit(RANK_FAIL);
			}
			ret = fn(t, n, r, arg);
			if (ret == 0)
				ret = dfg_team_leave(t);
			_exit(ret ? RANK_FAIL : RANK_OK);
		}
	}
	if (kill_rank < n) {
		/* Not before: a death in the join or first call is no test. */
		while (atomic_load(&dc->there) < n && !any_exited(pid, n))
			usleep(1000);
		usleep(100 * 1000);
		clock_gettime(CLOCK_MONOTONIC, &dc->killed);
		kill(pid[kill_rank], SIGKILL);
		waitpid(pid[kill_rank], &st, 0);
		clock_gettime(CLOCK_MONOTONIC, &dc->dead);
	}
	for (r = 0; r < n; r++) {
		if (r == kill_rank)
			continue;
		waitpid(pid[r], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) == RANK_FAIL)
			failed++;
		else if (WEXITSTATUS(st) == RANK_SKIP)
			skipped++;
	}
	return skipped ? -1 : failed;
}

struct correct_arg {
	enum dfg_coll_algo algo;
};

/*
 * The inbox's bounds: a block up to DFG_EAGER_MAX (416 bytes) travels in
 * the call message, one up to the slot in the slot, a larger one in
 * pieces of half the pair's two slots (inbox.c), the last of them in the
 * message where it is that small (4 x slot + 3). The slot (xport_shm.c):
 * the 2 N^2 slots share 8 MiB, at most 256 KiB each (N = 2 to 4), 64 KiB
 * at N = 8. The table (table.c) takes the inbox for blocks up to 2 MiB,
 * the tiles above.
 */
#define EAGER_MAX	416

/* The algorithm a fixed call of @block must have taken, forced @algo. */
static enum dfg_coll_algo want_algo(enum dfg_coll_algo algo, unsigned int n,
				    size_t block)
{
	if (algo == DFG_ALGO_INBOX)
		return n > 1 ? DFG_ALGO_INBOX : DFG_ALGO_TILES;
	if (algo == DFG_ALGO_AUTO)
		return n > 1 && block <= (2U << 20) ? DFG_ALGO_INBOX :
						       DFG_ALGO_TILES;
	return algo;
}

static int rank_correct(struct dfg_team *t, unsigned int n, unsigned int r,
			void *arg)
{
	const size_t slot = ref_inbox_slot(n);
	const size_t blocks[] = {
		0, 1, 8, 100, EAGER_MAX - 1, EAGER_MAX, EAGER_MAX + 1, 1024,
		4097, 16383, 16384, 16385, slot - 1, slot, slot + 1, 8, slot,
		4 * slot + 3, 8,
	};
	struct correct_arg *a = arg;
	unsigned int k, i;
	int ret;

	ret = dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, a->algo);
	for (i = 0, k = 0; !ret && i < sizeof(blocks) / sizeof(*blocks);
	     i++, k++) {
		/*
		 * Four pieces and 3 bytes: through the inbox only (the
		 * engine's large blocks have their own tests; under TCG
		 * each such call costs seconds).
		 */
		if (blocks[i] == 4 * slot + 3 && a->algo != DFG_ALGO_INBOX)
			continue;
		ret = one_call(t, n, r, k, 0, blocks[i], 0);
		if (!ret && dfg_coll_last_algo(t, DFG_COLL_ALLTOALL) !=
		    want_algo(a->algo, n, blocks[i]))
			ret = -EINVAL;
		if (ret)
			fprintf(stderr, "n=%u r=%u block %zu: %s\n", n, r,
				blocks[i], strerror(-ret));
	}
	for (i = 0; !ret && i < 10; i++, k++) {
		ret = one_call(t, n, r, k, 1, 0, i);
		if (ret)
			fprintf(stderr, "n=%u r=%u v %u: %s\n", n, r, i,
				strerror(-ret));
		/* alltoallv: the engine, whatever was forced */
		if (!ret && a->algo == DFG_ALGO_DIRECT &&
		    dfg_coll_last_algo(t, DFG_COLL_ALLTOALL) != a->algo)
			ret = -EINVAL;
		/* and the inbox again right after it */
		if (!ret && i % 3 == 0)
			ret = one_call(t, n, r, k, 0, 8 + i, 0);
	}
	return ret;
}

#define SKIP_IF_NO_DEV() do {						\
	if (self->gfd < 0)						\
		SKIP(return, "%s", "no dfg device");			\
} while (0)

/*
 * Results equal to the definition for N = 1..8, every algorithm (the
 * inbox's bounds +-1 byte, the inbox before and after the engine): 32
 * teams of forked sanitized processes, 31 calls each. Measured in the
 * TCG guest (2 vCPUs) with the host's 2 CPUs at load 11-13: 9.6, 11.6
 * and 21.6 s for the three engine algorithms with 17 calls, 43 s in
 * all. At host load 15 (issue 11) the four algorithms with 31 calls took
 * 89, 109, 112 and 84 s (auto, tiles, direct, inbox; printed), 394 s in
 * all, past the 300 s of then: 900 s leaves room for that.
 */
TEST_F_TIMEOUT(a2a, correct_every_n, 900)
{
	static const enum dfg_coll_algo algos[] = {
		DFG_ALGO_AUTO, DFG_ALGO_TILES, DFG_ALGO_DIRECT, DFG_ALGO_INBOX,
	};
	struct correct_arg a;
	unsigned int n, algo;
	int failed;

	SKIP_IF_NO_DEV();
	for (algo = 0; algo < sizeof(algos) / sizeof(*algos); algo++) {
		struct timespec t0, t1;

		a.algo = algos[algo];
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (n = 1; n <= MAXN; n++) {
			char name[DFG_NAME_MAX];

			snprintf(name, sizeof(name), "c%u-%u", algo, n);
			failed = run_ranks(self->gfd, name, n, rank_correct,
					   &a, MAXN, NULL);
			if (failed < 0)
				SKIP(return, "module without teams");
			EXPECT_EQ(0, failed) TH_LOG("n=%u algo=%u", n, a.algo);
		}
		/* Where the time goes on a loaded host. */
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("# correct_every_n: algorithm %d, N = 1..%u: %ld ms\n",
		       a.algo, MAXN, ms_between(&t0, &t1));
		fflush(stdout);
	}
}

/*
 * A survivor's call returned @ret (0 where it must not have returned at
 * all): when, on @dc's clock; it must be -EOWNERDEAD, and the next call
 * must fail the same way at once.
 */
static int rank_saw_death(struct dfg_team *t, unsigned int n,
			  unsigned int r, struct death_clock *dc, int ret)
{
	clock_gettime(CLOCK_MONOTONIC, &dc->failed[r]);
	if (ret != -EOWNERDEAD) {
		fprintf(stderr, "rank %u: %d instead of -EOWNERDEAD\n", r, ret);
		return -EINVAL;
	}
	if (one_call(t, n, r, 2, 0, 8, 0) != -EOWNERDEAD)
		return -EINVAL;
	dfg_team_leave(t);
	_exit(RANK_OK);
}

static int rank_hang_then_die(struct dfg_team *t, unsigned int n,
			      unsigned int r, void *arg)
{
	struct death_clock *dc = arg;
	int ret;

	/*
	 * One good call, then rank 1 never comes to the second one: an
	 * alltoallv (the engine), or with @dc->block a fixed one.
	 */
	ret = one_call(t, n, r, 0, 0, 64, 0);
	if (ret)
		return ret;
	atomic_fetch_add(&dc->there, 1);
	if (r == 1)
		pause();
	ret = one_call(t, n, r, 1, !dc->block, dc->block, 3);
	return rank_saw_death(t, n, r, dc, ret);
}

/*
 * A member killed mid-alltoall fails the others with -EOWNERDEAD within
 * 2 s of its death (README), measured from the moment the parent reaped
 * it: its exit released its team descriptor before that, and the
 * release breaks the team. Not from kill(): the exit of a process (its
 * address space torn down first) takes whatever the scheduler gives it.
 */
TEST_F(a2a, member_killed)
{
	/*
	 * alltoallv; fixed blocks in the message, in the slot (a death
	 * in pieces: member_dies_mid_pieces, whose ranks fill their
	 * buffers before they count as there; here a rank's call fills
	 * them, which for blocks above a slot took seconds under TCG)
	 */
	static const size_t blocks[] = { 0, 64, 4096, 20000 };
	struct death_clock *dc;
	unsigned int n, r;
	int failed;

	SKIP_IF_NO_DEV();
	dc = mmap(NULL, sizeof(*dc), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dc);
	for (unsigned int i = 0; i < 2 * sizeof(blocks) / sizeof(*blocks);
	     i++) {
		char name[DFG_NAME_MAX];

		n = i % 2 ? 5 : 2;
		snprintf(name, sizeof(name), "kill-%u-%u", n, i);
		memset(dc, 0, sizeof(*dc));
		dc->block = blocks[i / 2];
		failed = run_ranks(self->gfd, name, n, rank_hang_then_die,
				   dc, 1, dc);
		if (failed < 0)
			SKIP(return, "module without teams");
		EXPECT_EQ(0, failed) TH_LOG("n=%u block %zu", n, dc->block);
		for (r = 0; r < n; r++) {
			if (r == 1)
				continue;
			EXPECT_GE(2000, ms_between(&dc->dead, &dc->failed[r]))
				TH_LOG("n=%u rank %u", n, r);
			TH_LOG("n=%u rank %u: killed->reaped %ld ms, "
			       "reaped->failed %ld ms", n, r,
			       ms_between(&dc->killed, &dc->dead),
			       ms_between(&dc->dead, &dc->failed[r]));
		}
	}
	munmap(dc, sizeof(*dc));
}

/*
 * Rank 1 dies inside a call in pieces, after two rounds: the page of its
 * send buffer where its third piece for rank 2 begins is unreadable, so
 * its copy into the slot faults there (the default action, no core)
 * while the others wait for that round's messages. The parent kills and
 * reaps what is left of it once every rank is there.
 */
static int rank_dies_in_piece(struct dfg_team *t, unsigned int n,
			      unsigned int r, void *arg)
{
	struct death_clock *dc = arg;
	size_t b = dc->block, pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (n * b + pg - 1) & ~(pg - 1);
	uint8_t *s, *d = malloc(n * b);
	int ret;

	ret = one_call(t, n, r, 0, 0, 64, 0);
	if (ret || !d)
		return ret ? ret : -ENOMEM;
	s = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return -ENOMEM;
	memset(s, (int)r, n * b);
	if (r == 1) {
		/* Piece 2 (of the 256 KiB slot at N = 3) for rank 2. */
		uintptr_t at = (uintptr_t)s + 2 * b + 2 * ref_inbox_slot(n);
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		signal(SIGSEGV, SIG_DFL);
		if (mprotect((void *)((at + pg - 1) & ~(uintptr_t)(pg - 1)),
			     pg, PROT_NONE))
			return -errno;
	}
	atomic_fetch_add(&dc->there, 1);
	ret = dfg_alltoall(t, s, d, b);
	/* Rank 1 faults in the call: its return is a failure. */
	return rank_saw_death(t, n, r, dc, r == 1 ? 0 : ret);
}

TEST_F(a2a, member_dies_mid_pieces)
{
	struct death_clock *dc;
	int failed;

	SKIP_IF_NO_DEV();
	dc = mmap(NULL, sizeof(*dc), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dc);
	memset(dc, 0, sizeof(*dc));
	/* Four pieces of 256 KiB (N = 3): it dies in round 2. */
	dc->block = 4 * ref_inbox_slot(3);
	failed = run_ranks(self->gfd, "die-piece", 3, rank_dies_in_piece, dc,
			   1, dc);
	if (failed < 0)
		SKIP(return, "module without teams");
	EXPECT_EQ(0, failed);
	for (unsigned int r = 0; r < 3; r += 2) {
		EXPECT_GE(2000, ms_between(&dc->dead, &dc->failed[r]))
			TH_LOG("rank %u", r);
	}
	munmap(dc, sizeof(*dc));
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, c;

	while (f && (c = getc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

#ifdef __SANITIZE_ADDRESS__
/* The sanitizer runtime's; no header declares them in every version. */
size_t __sanitizer_get_current_allocated_bytes(void);
void __sanitizer_purge_allocator(void);

/*
 * Live heap bytes, after the allocator gave back what it holds without a
 * leak (the freed blocks in its quarantine, which it maps more memory
 * for as it fills).
 */
static long heap_bytes(void)
{
	__sanitizer_purge_allocator();
	return (long)__sanitizer_get_current_allocated_bytes();
}
#else
#include <malloc.h>

static long heap_bytes(void)
{
	return (long)mallinfo2().uordblks;
}
#endif

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size = 0, rss = 0;

	if (f) {
		if (fscanf(f, "%ld %ld", &size, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/*
 * What the library holds per call must be given back after every call:
 * descriptors, mappings of peers' regions, heap blocks (the allocator's
 * live bytes, here the sanitizer's), counted after 100 calls (every path
 * has been taken: tiles, direct blocks, zero blocks) and after 1000; the
 * module's pages are compared by the test once the team is gone. The
 * buffers are allocated once, so that the test's own allocations do not
 * count. Not the resident size: it also counts the pages the sanitizer
 * runtime touches for itself (shadow of heap addresses new to this
 * process, allocation-stack tables), which under load grew by 3-7 MB
 * once while the live heap stayed the same; a leak of 16 bytes a call
 * is 14 kB here, past the 8 kB of slack.
 */
static int rank_many(struct dfg_team *t, unsigned int n, unsigned int r,
		     void *arg)
{
	struct call_bufs cb = { .cap = 128 << 10 };
	int fds = 0, maps = 0, ret = 0;
	long heap = 0, rss[3] = { 0 };
	unsigned int k;

	(void)arg;
	cb.s = malloc(cb.cap);
	cb.r = malloc(cb.cap);
	cb.want = malloc(cb.cap);
	if (!cb.s || !cb.r || !cb.want)
		ret = -ENOMEM;
	for (k = 0; k < 1000 && !ret; k++) {
		if (k == 100) {
			heap = heap_bytes();
			fds = count_fds();
			maps = count_lines("/proc/self/maps");
			rss[0] = rss_kb();
		}
		if (k == 500)
			rss[1] = rss_kb();
		ret = one_call_in(t, n, r, k, k % 2, k % 300, k, &cb);
	}
	rss[2] = rss_kb();
	if (ret)
		goto out;
	if (heap_bytes() > heap + 8192 || count_fds() != fds ||
	    count_lines("/proc/self/maps") > maps) {
		fprintf(stderr,
			"rank %u: fds %d -> %d, maps %d -> %d, heap %ld -> %ld B, rss %ld, %ld, %ld kB\n",
			r, fds, count_fds(), maps,
			count_lines("/proc/self/maps"), heap, heap_bytes(),
			rss[0], rss[1], rss[2]);
		ret = -ENOSPC;
	}
out:
	free(cb.s);
	free(cb.r);
	free(cb.want);
	return ret;
}

/*
 * 1000 calls in a row: no descriptor or memory leak. 4 ranks on the test
 * VM's 2 CPUs: at host load 15 a call took 2-45 ms (coll_vs_mpi, N = 4),
 * so the harness's default 30 s was too short once (issue 11).
 */
TEST_F_TIMEOUT(a2a, thousand_calls, 300)
{
	long pages;
	int failed;

	SKIP_IF_NO_DEV();
	pages = dfg_pages();
	failed = run_ranks(self->gfd, "many", 4, rank_many, NULL, MAXN, NULL);
	if (failed < 0)
		SKIP(return, "module without teams");
	EXPECT_EQ(0, failed);
	/* The team's control area went with its last member. */
	EXPECT_EQ(pages, dfg_pages());
}

static int rank_bad(struct dfg_team *t, unsigned int n, unsigned int r,
		    void *arg)
{
	size_t c[MAXN] = { 0 }, d[MAXN] = { 0 };
	uint8_t *sbuf = calloc(MAXN, 600000), *rbuf = malloc(MAXN * 600000);
	int ret = -ENOMEM, step = 0;

	(void)arg;
	if (!sbuf || !rbuf)
		goto out;
	/*
	 * Rank 0's block takes the engine, the others' the inbox: every
	 * rank fails, none hangs; first at the team's first engine call
	 * (messages heard before the key exchange), later once more.
	 */
	ret = -EPROTO;
	step++;
	if (dfg_alltoall(t, sbuf, rbuf, r == 0 ? 20000 : 8) != -EINVAL)
		goto out;
	/* Rank 0's block differs, all on the inbox. */
	step++;
	if (dfg_alltoall(t, sbuf, rbuf, r == 0 ? 16 : 8) != -EINVAL)
		goto out;
	/* Rank 1's block takes the engine, with the engine set up. */
	step++;
	if (n > 1 && dfg_alltoall(t, sbuf, rbuf, r == 1 ? 20000 : 500) !=
	    -EINVAL)
		goto out;
	/* Same block, rank 0 forced onto the engine: the paths disagree. */
	step++;
	if (dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, r == 0 ? DFG_ALGO_TILES :
			      DFG_ALGO_AUTO) ||
	    dfg_alltoall(t, sbuf, rbuf, 8) != -EINVAL ||
	    dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, DFG_ALGO_AUTO))
		goto out;
	/*
	 * Blocks above the slot (256 KiB at N = 3), in pieces: rank 0's
	 * differs by a byte; rank 1's fits a slot; rank 0 on the engine.
	 */
	step++;
	if (dfg_alltoall(t, sbuf, rbuf, r == 0 ? 600000 : 599999) != -EINVAL)
		goto out;
	step++;
	if (dfg_alltoall(t, sbuf, rbuf, r == 1 ? 4096 : 600000) != -EINVAL)
		goto out;
	step++;
	if (dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, r == 0 ? DFG_ALGO_TILES :
			      DFG_ALGO_AUTO) ||
	    dfg_alltoall(t, sbuf, rbuf, 600000) != -EINVAL ||
	    dfg_coll_set_algo(t, DFG_COLL_ALLTOALL, DFG_ALGO_AUTO))
		goto out;
	step++;
	ret = one_call(t, n, r, 11, 0, 600000, 0);
	if (ret)
		goto out;
	ret = -EPROTO;
	/* Rank 2 passes no buffer (the engine with nothing), inbox size. */
	step++;
	if (dfg_alltoall(t, sbuf, r == 2 ? NULL : rbuf, 8) != -EINVAL)
		goto out;
	step++;
	ret = one_call(t, n, r, 8, 0, 64, 0);
	if (ret)
		goto out;
	ret = -EPROTO;
	/* Rank 1 passes no counts: it fails, the others see a mismatch. */
	for (unsigned int j = 0; j < n; j++) {
		c[j] = 4;
		d[j] = 4 * j;
	}
	step++;
	if (dfg_alltoallv(t, sbuf, r == 1 ? NULL : c, d, rbuf, c, d) !=
	    -EINVAL)
		goto out;
	/* Zero-length blocks everywhere. */
	step++;
	ret = dfg_alltoall(t, sbuf, rbuf, 0);
	if (ret)
		goto out;
	ret = -EPROTO;
	step++;
	if (dfg_alltoall(NULL, sbuf, rbuf, 8) != -EINVAL)
		goto out;
	/* The team still works. */
	step++;
	ret = one_call(t, n, r, 9, 1, 0, 1);
	if (!ret)
		ret = one_call(t, n, r, 10, 0, 1000, 0);
out:
	if (ret)
		fprintf(stderr, "rank %u: bad_arguments step %d: %d\n", r,
			step, ret);
	free(sbuf);
	free(rbuf);
	return ret;
}

/* Bad and mismatched arguments give errors, never a hang or a crash. */
TEST_F(a2a, bad_arguments)
{
	int failed;

	SKIP_IF_NO_DEV();
	failed = run_ranks(self->gfd, "bad", 3, rank_bad, NULL, MAXN, NULL);
	if (failed < 0)
		SKIP(return, "module without teams");
	EXPECT_EQ(0, failed);
}

/*
 * Small-block latency: 100 calls per block after 5 of warm-up, every
 * result checked; rank 0 prints the mean and the slowest call.
 */
static int rank_time(struct dfg_team *t, unsigned int n, unsigned int r,
		     void *arg)
{
	static const size_t blocks[] = { 8, 64, 1024 };
	uint8_t *sbuf = calloc(n, 1024), *rbuf = calloc(n, 1024);
	unsigned int i, j, k, warm = 5, iters = 100;
	int ret = sbuf && rbuf ? 0 : -ENOMEM;
	size_t b, x;

	(void)arg;
	for (i = 0; i < 3 && !ret; i++) {
		struct timespec t0, t1, c0, c1;
		double worst = 0, us;

		b = blocks[i];
		for (j = 0; j < n; j++)
			for (x = 0; x < b; x++)
				sbuf[j * b + x] = pattern(i, r, j, x);
		for (k = 0; k < warm && !ret; k++)
			ret = dfg_alltoall(t, sbuf, rbuf, b);
		memset(rbuf, CANARY, n * b);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (k = 0; k < iters && !ret; k++) {
			clock_gettime(CLOCK_MONOTONIC, &c0);
			ret = dfg_alltoall(t, sbuf, rbuf, b);
			clock_gettime(CLOCK_MONOTONIC, &c1);
			us = (c1.tv_sec - c0.tv_sec) * 1e6 +
			     (c1.tv_nsec - c0.tv_nsec) / 1e3;
			if (us > worst)
				worst = us;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		for (j = 0; j < n && !ret; j++)
			for (x = 0; x < b && !ret; x++)
				if (rbuf[j * b + x] != pattern(i, j, r, x))
					ret = -EBADMSG;
		if (ret)
			fprintf(stderr, "rank %u: block %zu: %s\n", r, b,
				strerror(-ret));
		if (r == 0 && !ret)
			printf("# alltoall n=%u block=%zu: %.1f us/call, slowest %.1f us\n",
			       n, b, ((t1.tv_sec - t0.tv_sec) * 1e9 +
				      (t1.tv_nsec - t0.tv_nsec)) / iters / 1e3,
			       worst);
	}
	free(sbuf);
	free(rbuf);
	return ret;
}

/*
 * Small-block latency with N = 8: oversubscribed on the test VM's 2 CPUs
 * (reported, compared by bench/), every result checked. With 320 calls
 * per block and the harness's default 30 s it failed in a loaded VM
 * run: there a call takes what the machine gives it, 7-61 ms on average
 * and up to 1.5 s at host load 15 (issue 11; coll_vs_mpi in the same
 * loaded VM timed Open MPI's all-to-all at N = 8 at 30-870 ms a call,
 * dfg's at 30-300 ms), so 960 calls took more than 30 s. 315 calls at
 * 190 ms are a minute.
 */
TEST_F_TIMEOUT(a2a, small_block_latency, 300)
{
	int failed;

	SKIP_IF_NO_DEV();
	failed = run_ranks(self->gfd, "time", MAXN, rank_time, NULL, MAXN, NULL);
	if (failed < 0)
		SKIP(return, "module without teams");
	EXPECT_EQ(0, failed);
}

TEST_HARNESS_MAIN
