// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * dfg_run() and its older callers: struct dfg_run_opts as the headers of
 * libdfg 0.7 and 0.9 had it (DFG_RUN_OPTS_SIZE_V0, _V1, _V2), each with
 * the shorter struct dfg_run_summary of its time, and opts.sum_size
 * bounding the summary of a current caller (man dfg_run.3). Every struct
 * ends where its page ends, before a PROT_NONE guard page (guard.h): a
 * read of the options or a write of the summary one byte past what the
 * caller has faults, and the test with it.
 *
 * On the host (no /dev/dfg) the run stops at the device: every known size
 * gets past the argument check, any other size is -EINVAL, and a failed
 * run writes nothing in the summary. Where the module is loaded (the test
 * VM: selftests/libdfg/libdfg.sh) a small job runs for each caller, whose
 * summary is filled up to its end and not past it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dfg/run.h>

#include "guard.h"
#include "kselftest_harness.h"

#define COUNT		1000
#define PAT		0xa5

/* struct dfg_run_opts of libdfg 0.7, before the re-planner. */
struct opts_v0 {
	unsigned int	size;
	unsigned int	flags;
	__u64		checkpoint_every;
	const char	*state_dir;
	FILE		*log;
	char		*err;
	size_t		errlen;
};

/* ... of libdfg 0.9, before the workers (reserved0: its tail padding). */
struct opts_v1 {
	unsigned int	size;
	unsigned int	flags;
	__u64		checkpoint_every;
	const char	*state_dir;
	FILE		*log;
	char		*err;
	size_t		errlen;
	const struct dfg_replanner *replanner;
	unsigned int	replan_ms;
	unsigned int	reserved0;
};

/* ... and before sum_size (pad: its tail padding, now reserved1). */
struct opts_v2 {
	unsigned int	size;
	unsigned int	flags;
	__u64		checkpoint_every;
	const char	*state_dir;
	FILE		*log;
	char		*err;
	size_t		errlen;
	const struct dfg_replanner *replanner;
	unsigned int	replan_ms;
	unsigned int	reserved0;
	unsigned int	workers;
	unsigned int	pad;
};

_Static_assert(sizeof(struct opts_v0) == DFG_RUN_OPTS_SIZE_V0, "0.7 opts");
_Static_assert(sizeof(struct opts_v1) == DFG_RUN_OPTS_SIZE_V1, "0.9 opts");
_Static_assert(sizeof(struct opts_v2) == DFG_RUN_OPTS_SIZE_V2,
	       "0.9 opts with workers");

enum caller { V0, V1, V2, NOW, NR_CALLERS };

/* Each caller's summary ends here (man dfg_run.3). */
static const size_t sum_end[NR_CALLERS] = {
	[V0]	= offsetof(struct dfg_run_summary, replans),
	[V1]	= offsetof(struct dfg_run_summary, workers),
	[V2]	= offsetof(struct dfg_run_summary, stopped_clean),
	[NOW]	= sizeof(struct dfg_run_summary),
};

/* @len bytes that end where @page ends (at its guard page). */
static void *page_tail(void *page, size_t len)
{
	return (char *)page + GUARD_PAGE - len;
}

/*
 * Caller @c's options at the end of @page: errors into @err, nothing else
 * asked for, garbage in what was its tail padding (the library ignores
 * it); @sum_size for a current caller.
 */
static const struct dfg_run_opts *caller_opts(enum caller c, void *page,
					      char *err, size_t errlen,
					      __u64 sum_size)
{
	struct opts_v0 *o0;
	struct opts_v1 *o1;
	struct opts_v2 *o2;
	struct dfg_run_opts *o;

	memset(page, PAT, GUARD_PAGE);
	switch (c) {
	case V0:
		o0 = page_tail(page, sizeof(*o0));
		*o0 = (struct opts_v0){ .size = sizeof(*o0), .err = err,
					.errlen = errlen };
		return (const struct dfg_run_opts *)o0;
	case V1:
		o1 = page_tail(page, sizeof(*o1));
		*o1 = (struct opts_v1){ .size = sizeof(*o1), .err = err,
					.errlen = errlen,
					.reserved0 = 0xdeadbeef };
		return (const struct dfg_run_opts *)o1;
	case V2:
		o2 = page_tail(page, sizeof(*o2));
		*o2 = (struct opts_v2){ .size = sizeof(*o2), .err = err,
					.errlen = errlen, .workers = 1,
					.pad = 0xdeadbeef };
		return (const struct dfg_run_opts *)o2;
	default:
		o = page_tail(page, sizeof(*o));
		*o = (struct dfg_run_opts){ .size = sizeof(*o), .err = err,
					    .errlen = errlen,
					    .sum_size = sum_size };
		return o;
	}
}

/* No byte of [@p, @p + @len) differs from PAT. */
static bool untouched(const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != PAT)
			return false;
	return true;
}

FIXTURE(run_opts) {
	char	dir[64];
	char	dot[96];
	char	out[96];
	void	*opage;		/* the options, at its end */
	void	*spage;		/* the summary, at its end */
	bool	nodev;
};

FIXTURE_SETUP(run_opts)
{
	int fd = open("/dev/dfg", O_RDWR | O_CLOEXEC);
	FILE *f;

	self->nodev = fd < 0;
	if (fd >= 0)
		close(fd);
	self->opage = guarded_map(GUARD_PAGE);
	self->spage = guarded_map(GUARD_PAGE);
	ASSERT_NE(NULL, self->opage);
	ASSERT_NE(NULL, self->spage);
	snprintf(self->dir, sizeof(self->dir), "/tmp/dfg-run-opts.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->dot, sizeof(self->dot), "%s/job.dot", self->dir);
	snprintf(self->out, sizeof(self->out), "%s/out.txt", self->dir);
	f = fopen(self->dot, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "digraph job {\n"
		   "  gen [type=generate, count=%d];\n"
		   "  out [type=write_lines, file=\"%s\"];\n"
		   "  gen -> out;\n"
		   "}\n", COUNT, self->out);
	ASSERT_EQ(0, fclose(f));
}

FIXTURE_TEARDOWN(run_opts)
{
	unlink(self->out);
	unlink(self->dot);
	rmdir(self->dir);
	guarded_unmap(self->opage, GUARD_PAGE);
	guarded_unmap(self->spage, GUARD_PAGE);
}

/* Lines in @path, -1 if it cannot be read. */
static long count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	long n = 0;
	int ch;

	if (!f)
		return -1;
	while ((ch = fgetc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

/*
 * Every caller's size gets past the argument check (here without the
 * module the run then fails at the device), reading no byte past its
 * options; a failed run leaves the summary alone.
 */
TEST_F(run_opts, known_sizes_pass_the_check)
{
	struct dfg_run_summary *sum;
	char err[256];
	enum caller c;
	int r;

	for (c = V0; c < NR_CALLERS; c++) {
		const struct dfg_run_opts *o = caller_opts(c, self->opage, err,
							   sizeof(err),
							   sum_end[c]);

		memset(self->spage, PAT, GUARD_PAGE);
		sum = page_tail(self->spage, sum_end[c]);
		err[0] = '\0';
		r = dfg_run(self->dot, o, sum);
		EXPECT_NE(-EINVAL, r) TH_LOG("caller %d: %s", c, err);
		if (r) {
			EXPECT_NE(0, err[0]);
			EXPECT_TRUE(untouched(self->spage, GUARD_PAGE))
				TH_LOG("caller %d: summary written by a failed run",
				       c);
		}
	}
}

/* Any other size is refused before anything runs or is written. */
TEST_F(run_opts, other_sizes_are_refused)
{
	static const unsigned int sizes[] = {
		0, DFG_RUN_OPTS_SIZE_V0 - 8, DFG_RUN_OPTS_SIZE_V0 + 4,
		DFG_RUN_OPTS_SIZE_V1 + 4, DFG_RUN_OPTS_SIZE_V2 + 4,
		sizeof(struct dfg_run_opts) + 8,
	};
	struct dfg_run_summary *sum = page_tail(self->spage, sizeof(*sum));
	struct dfg_run_opts *o;
	char err[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		o = (struct dfg_run_opts *)caller_opts(NOW, self->opage, err,
						       sizeof(err), 0);
		o->size = sizes[i];
		memset(self->spage, PAT, GUARD_PAGE);
		err[0] = '\0';
		EXPECT_EQ(-EINVAL, dfg_run(self->dot, o, sum))
			TH_LOG("size %u", sizes[i]);
		EXPECT_STREQ("invalid arguments", err);
		EXPECT_TRUE(untouched(self->spage, GUARD_PAGE));
	}
}

#define SKIP_IF_NO_DEV() do {						\
	if (self->nodev)						\
		SKIP(return, "%s", "no dfg device");			\
} while (0)

/*
 * Runs the job for a caller whose summary is @len bytes at the end of the
 * summary page: 0 once it ran, its output is whole and the summary's
 * first figures are right.
 */
static int run_bounded(struct __test_metadata *_metadata,
		       FIXTURE_DATA(run_opts) *self,
		       const struct dfg_run_opts *o, size_t len)
{
	struct dfg_run_summary *sum = page_tail(self->spage, len);
	int r;

	memset(self->spage, PAT, GUARD_PAGE);
	unlink(self->out);
	r = dfg_run(self->dot, o, sum);
	if (r)
		return r;
	EXPECT_EQ(COUNT, count_lines(self->out));
	/* Every caller has these. */
	EXPECT_EQ(COUNT, sum->elements);
	EXPECT_EQ(2, sum->components);
	EXPECT_LE(1, sum->sets);
	EXPECT_LE(1, sum->processes);
	EXPECT_LT(0, sum->wall_ns);
	/* Nothing before the summary. */
	EXPECT_TRUE(untouched(self->spage, GUARD_PAGE - len));
	return 0;
}

/*
 * An older caller's run fills its shorter summary: a write past it
 * would fault at the guard page.
 */
TEST_F(run_opts, older_callers_run)
{
	struct dfg_run_summary *sum;
	char err[256] = "";
	enum caller c;

	SKIP_IF_NO_DEV();
	for (c = V0; c < NOW; c++) {
		ASSERT_EQ(0, run_bounded(_metadata, self,
					 caller_opts(c, self->opage, err,
						     sizeof(err), 0),
					 sum_end[c]))
			TH_LOG("caller %d: %s", c, err);
		sum = page_tail(self->spage, sum_end[c]);
		/* The last 0.9 caller's summary has the pool's figures. */
		if (c == V2)
			EXPECT_EQ(1, sum->workers);
	}
	/* No options: the summary of a 0.7 caller, up to the re-plans. */
	ASSERT_EQ(0, run_bounded(_metadata, self, NULL, sum_end[V0]));
}

/*
 * A current caller's opts.sum_size bounds the summary: 0 stands for the
 * whole of it; a caller with a shorter one gets that much; one with a
 * longer one (a newer header) gets this library's and the rest stays.
 */
TEST_F(run_opts, sum_size_bounds_the_summary)
{
	const size_t full = sizeof(struct dfg_run_summary);
	const size_t sizes[] = { 0, full, sum_end[V1], sum_end[V1] + 8,
				 full + 24 };
	struct dfg_run_summary *sum;
	char err[256] = "";
	size_t i, len;

	SKIP_IF_NO_DEV();
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		len = sizes[i] ? sizes[i] : full;
		ASSERT_EQ(0, run_bounded(_metadata, self,
					 caller_opts(NOW, self->opage, err,
						     sizeof(err), sizes[i]),
					 len))
			TH_LOG("sum_size %zu: %s", sizes[i], err);
		sum = page_tail(self->spage, len);
		if (len > sum_end[V1])
			EXPECT_EQ(1, sum->workers);
		/* Past this library's summary: the caller's own bytes. */
		if (len > full)
			EXPECT_TRUE(untouched((char *)sum + full, len - full));
	}
}

TEST_HARNESS_MAIN
