// SPDX-License-Identifier: GPL-2.0
/*
 * coll_vs_mpi: dfg's collectives against Open MPI's, in one MPI job.
 *
 *   mpirun -np N coll_vs_mpi [-c LIST] [-m MIN] [-M MAX] [-s 2|4] [-r ROUNDS]
 *                            [-t SEC] [-l LABEL]
 *                            [-a ALGO | -O | -e VAR=VALUE | -P] -o PREFIX
 *
 * LIST: collectives, comma-separated, each NAME or NAME:MIN:MAX (its own
 * size range, powers of two, instead of -m/-M); by default all but
 * alltoallv, which runs only where LIST names it.
 *
 * The same ranks run dfg (a team from dfg_team_from_mpi()) and MPI_* on
 * the same buffers. Per collective and size: warm-up and calibration
 * (the iteration count that makes the faster library's loop last SEC),
 * then ROUNDS rounds; a round times one loop of each library, the order
 * alternating round by round (MPI first in even rounds), each loop after
 * a barrier, and checks both results. The ratio MPI time / dfg time is
 * taken per round; the summary gives its median and range.
 *
 * Sizes follow nccl-tests: allreduce and bcast the vector, reduce_scatter
 * the input of a rank (N blocks), allgather the output (N blocks),
 * alltoall the send buffer of a rank (N blocks; alltoallv: the same equal
 * blocks through dfg_alltoallv() and MPI_Alltoallv()). Bus bandwidth = size /
 * time x 2(N-1)/N (allreduce), (N-1)/N (reduce_scatter, allgather,
 * alltoall), 1 (bcast). Time per call is the slowest rank's; CPU per call
 * is getrusage() user + system of all ranks, summed, and so are the
 * context switches per call (columns *_vcsw: voluntary, a sleep; *_ivcsw:
 * involuntary, a yield that switched or a preemption; printed as
 * "csw/call MPI v+i dfg v+i"): where the waiting goes.
 *
 * Inputs are small integers (floats for the reductions, float32 sum), so
 * every partial sum is exact and the result does not depend on the order
 * of the reduction: both libraries are checked bit for bit against the
 * closed form, hence against each other.
 *
 * Rank 0 first measures memcpy() at the same sizes, alone (the other
 * ranks wait sleeping): the physical limit the bus bandwidth is a
 * fraction of. Writes PREFIX_rounds.csv (a row per round) and
 * PREFIX_summary.csv (a row per collective and size); LABEL fills the
 * mpi_mode column (default, yield: how mpirun was told to wait).
 *
 * -a ALGO (rhalving, ring, direct, tiles, inbox, hier, put): a third loop per
 * round, dfg with ALGO forced (dfg_coll_set_algo(); back to the table
 * after it, so do not combine with DFG_COLL_ALGO for the same kind) for
 * the collectives ALGO applies to; the order of the three loops is MPI,
 * dfg, ALGO in even rounds and the reverse in odd ones. The per-round
 * ratio ALGO time / dfg time goes to PREFIX_alt_rounds.csv and its
 * median and range to PREFIX_alt_summary.csv: where the table's choice
 * and ALGO cross, measured in the same rounds.
 *
 * -O: the third loop is dfg as its table picks with DFG_COLL_OVERLAP=0
 * in the environment (libdfg reads it at every call: recursive halving
 * completes and reduces each segment before posting the next transfer),
 * for allreduce and reduce_scatter; its rows go to the same files,
 * alt_algo suffixed "/nooverlap": the time patent 002's overlap saves.
 *
 * -e VAR=VALUE: the third loop is dfg as its table picks on a second team,
 * formed (after the first) with VAR=VALUE in the environment, for every
 * collective; its rows go to the same files, alt_algo suffixed
 * "/VAR=VALUE": a change that libdfg reads when a team is formed (such as
 * DFG_COLL_PREV, which restores the previous way of a named change)
 * against the code as it is, in the same rounds.
 *
 * -P: Open MPI alone (dfg is not called; its columns are nan): to compare
 * Open MPI's transports between jobs (tools/bench/net.sh's probe), not a
 * comparison with dfg.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <mpi.h>
#include <dfg/coll_mpi.h>

enum kind { ALLREDUCE, REDUCE_SCATTER, ALLGATHER, BCAST, ALLTOALL, ALLTOALLV,
	    NKINDS };

static const char * const kind_names[NKINDS] = {
	"allreduce", "reduce_scatter", "allgather", "bcast", "alltoall",
	"alltoallv",
};

static const enum dfg_coll_kind dfg_kinds[NKINDS] = {
	DFG_COLL_ALLREDUCE, DFG_COLL_REDUCE_SCATTER, DFG_COLL_ALLGATHER,
	DFG_COLL_BROADCAST, DFG_COLL_ALLTOALL, DFG_COLL_ALLTOALL,
};

static const char * const algo_names[DFG_ALGO_NR] = {
	[DFG_ALGO_AUTO] = "auto",
	[DFG_ALGO_RHALVING] = "rhalving",
	[DFG_ALGO_RING] = "ring",
	[DFG_ALGO_DIRECT] = "direct",
	[DFG_ALGO_TILES] = "tiles",
	[DFG_ALGO_INBOX] = "inbox",
	[DFG_ALGO_HIER] = "hier",
	[DFG_ALGO_PUT] = "put",
};

#define ROUNDS_MAX	64
#define ITERS_MAX	100000u

struct opts {
	size_t min, max;
	size_t kmin[NKINDS], kmax[NKINDS];	/* per kind; 0: min, max */
	unsigned int step, rounds;
	double min_time;
	unsigned int mask;
	int alt;			/* -a: enum dfg_coll_algo, or -1 */
	bool nooverlap;			/* -O */
	const char *env;		/* -e VAR=VALUE */
	bool mpi_only;			/* -P */
	const char *label, *prefix;
};

struct job {
	struct dfg_team *team;
	struct dfg_team *team_env;	/* -e: the second team */
	int rank, n;
	char *s, *r, *x;	/* send, receive, expected */
	size_t *vc, *vd;	/* alltoallv: counts, displacements */
	int *mc, *md;		/* the same for MPI_Alltoallv */
	FILE *rounds, *summary, *alt_rounds, *alt_summary;
	const struct opts *o;
	double memcpy_bw[64];	/* MB/s by log2(size), rank 0 */
	int yield;		/* mpi_yield_when_idle as this job runs */
	int dfg_algo;		/* what the last dfg loop ran */
	int alt_algo;		/* what the last -a loop ran */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* What this process used so far: CPU seconds, voluntary and involuntary
 * context switches (a sleep; a yield that switched, or a preemption). */
enum { USE_CPU, USE_VCSW, USE_IVCSW, NUSE };

static void use_now(double u[NUSE])
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	u[USE_CPU] = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
		     ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	u[USE_VCSW] = ru.ru_nvcsw;
	u[USE_IVCSW] = ru.ru_nivcsw;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, unsigned int n)
{
	double t[ROUNDS_MAX];

	memcpy(t, v, n * sizeof(*v));
	qsort(t, n, sizeof(*t), cmp_double);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static unsigned int log2_of(size_t v)
{
	unsigned int l = 0;

	while (v > 1) {
		v >>= 1;
		l++;
	}
	return l;
}

/* Input of a reduction: element @i of rank @r, a small integer. */
static float red_in(size_t i, int r)
{
	return (float)(((i ^ (i >> 5) ^ (i >> 13)) * 13 + (size_t)r * 3) % 11);
}

/* Byte @j of the block rank @src sends rank @dst (any mixing will do). */
static uint8_t byte_in(int src, int dst, size_t j)
{
	uint32_t x = (uint32_t)j * 2654435761u + (uint32_t)src * 40503u +
		     (uint32_t)dst * 9973u;

	return (uint8_t)(x >> 24);
}

/* Per-rank geometry of @k at @size: block, send and receive bytes. */
static bool geometry(enum kind k, size_t size, int n, size_t *blk)
{
	switch (k) {
	case ALLREDUCE:
		*blk = size;
		return size >= sizeof(float);
	case REDUCE_SCATTER:
		*blk = size / n;
		return size % (sizeof(float) * n) == 0 && *blk;
	case ALLGATHER:
	case ALLTOALL:
	case ALLTOALLV:
		*blk = size / n;
		return size % n == 0 && *blk;
	case BCAST:
		*blk = size;
		return true;
	default:
		return false;
	}
}

static double bus_factor(enum kind k, int n)
{
	if (k == ALLREDUCE)
		return 2.0 * (n - 1) / n;
	if (k == BCAST)
		return 1.0;
	return (double)(n - 1) / n;
}

/* Inputs into s (and r for bcast's root), the closed form into x. */
static void fill(struct job *j, enum kind k, size_t size, size_t blk)
{
	float *sf = (float *)j->s, *xf = (float *)j->x;
	int n = j->n, me = j->rank, p;
	size_t i, cnt;

	switch (k) {
	case ALLREDUCE:
	case REDUCE_SCATTER:
		cnt = size / sizeof(float);
		for (i = 0; i < cnt; i++)
			sf[i] = red_in(i, me);
		/* allreduce: all of it; reduce_scatter: block @me */
		if (k == REDUCE_SCATTER) {
			size_t c = blk / sizeof(float), off = c * me;

			for (i = 0; i < c; i++) {
				xf[i] = 0;
				for (p = 0; p < n; p++)
					xf[i] += red_in(off + i, p);
			}
		} else {
			for (i = 0; i < cnt; i++) {
				xf[i] = 0;
				for (p = 0; p < n; p++)
					xf[i] += red_in(i, p);
			}
		}
		break;
	case ALLGATHER:
		for (i = 0; i < blk; i++)
			j->s[i] = byte_in(me, 0, i);
		for (p = 0; p < n; p++)
			for (i = 0; i < blk; i++)
				j->x[p * blk + i] = byte_in(p, 0, i);
		break;
	case BCAST:
		for (i = 0; i < size; i++)
			j->x[i] = byte_in(0, 0, i);
		break;
	case ALLTOALL:
	case ALLTOALLV:
		for (p = 0; p < n; p++) {
			j->vc[p] = blk;
			j->vd[p] = p * blk;
			j->mc[p] = (int)blk;
			j->md[p] = (int)(p * blk);
		}
		for (p = 0; p < n; p++)
			for (i = 0; i < blk; i++) {
				j->s[p * blk + i] = byte_in(me, p, i);
				j->x[p * blk + i] = byte_in(p, me, i);
			}
		break;
	default:
		break;
	}
}

/* Bytes of the receive buffer a call writes, on this rank. */
static size_t out_bytes(enum kind k, size_t size, size_t blk)
{
	return k == REDUCE_SCATTER ? blk : size;
}

static int call_dfg(struct job *j, struct dfg_team *t, enum kind k,
		    size_t size, size_t blk)
{
	switch (k) {
	case ALLREDUCE:
		return dfg_allreduce(t, j->s, j->r, size / sizeof(float),
				     DFG_FLOAT32, DFG_SUM);
	case REDUCE_SCATTER:
		return dfg_reduce_scatter(t, j->s, j->r, blk / sizeof(float),
					  DFG_FLOAT32, DFG_SUM);
	case ALLGATHER:
		return dfg_allgather(t, j->s, j->r, blk);
	case BCAST:
		return dfg_broadcast(t, j->r, size, 0);
	case ALLTOALL:
		return dfg_alltoall(t, j->s, j->r, blk);
	case ALLTOALLV:
		return dfg_alltoallv(t, j->s, j->vc, j->vd, j->r, j->vc,
				     j->vd);
	default:
		return -EINVAL;
	}
}

static int call_mpi(struct job *j, enum kind k, size_t size, size_t blk)
{
	int rc;

	switch (k) {
	case ALLREDUCE:
		rc = MPI_Allreduce(j->s, j->r, (int)(size / sizeof(float)),
				   MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		break;
	case REDUCE_SCATTER:
		rc = MPI_Reduce_scatter_block(j->s, j->r,
					      (int)(blk / sizeof(float)),
					      MPI_FLOAT, MPI_SUM,
					      MPI_COMM_WORLD);
		break;
	case ALLGATHER:
		rc = MPI_Allgather(j->s, (int)blk, MPI_BYTE, j->r, (int)blk,
				   MPI_BYTE, MPI_COMM_WORLD);
		break;
	case BCAST:
		rc = MPI_Bcast(j->r, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
		break;
	case ALLTOALL:
		rc = MPI_Alltoall(j->s, (int)blk, MPI_BYTE, j->r, (int)blk,
				  MPI_BYTE, MPI_COMM_WORLD);
		break;
	case ALLTOALLV:
		rc = MPI_Alltoallv(j->s, j->mc, j->md, MPI_BYTE, j->r, j->mc,
				   j->md, MPI_BYTE, MPI_COMM_WORLD);
		break;
	default:
		return -EINVAL;
	}
	return rc == MPI_SUCCESS ? 0 : -EIO;
}

/* A barrier the other ranks wait at without spinning a CPU. */
static void quiet_barrier(void)
{
	struct timespec ms = { 0, 1000000 };
	MPI_Request req;
	int done = 0;

	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
	       !done)
		nanosleep(&ms, NULL);
}

/* memcpy() bandwidth at @size, median of the rounds, on rank 0. */
static void measure_memcpy_at(struct job *j, size_t size)
{
	const struct opts *o = j->o;
	double bw[ROUNDS_MAX], t;
	unsigned int it, c = 1, rd;

	for (;;) {
		t = now();
		for (it = 0; it < c; it++) {
			memcpy(j->r, j->s, size);
			__asm__ volatile("" : : "r"(j->r) : "memory");
		}
		t = now() - t;
		if (t >= o->min_time || c >= ITERS_MAX)
			break;
		c *= 4;
	}
	for (rd = 0; rd < o->rounds; rd++) {
		t = now();
		for (it = 0; it < c; it++) {
			memcpy(j->r, j->s, size);
			__asm__ volatile("" : : "r"(j->r) : "memory");
		}
		t = now() - t;
		bw[rd] = size * (double)c / t / 1e6;
	}
	j->memcpy_bw[log2_of(size)] = median(bw, o->rounds);
}

static size_t kind_min(const struct opts *o, int k)
{
	return o->kmin[k] ? o->kmin[k] : o->min;
}

static size_t kind_max(const struct opts *o, int k)
{
	return o->kmax[k] ? o->kmax[k] : o->max;
}

/* memcpy() bandwidth at each size of a selected collective, median of
 * the rounds, on rank 0. */
static void measure_memcpy(struct job *j)
{
	const struct opts *o = j->o;
	size_t size;
	int k;

	for (k = 0; k < NKINDS; k++) {
		if (!(o->mask & (1U << k)))
			continue;
		for (size = kind_min(o, k); size <= kind_max(o, k);
		     size *= o->step)
			if (!j->memcpy_bw[log2_of(size)])
				measure_memcpy_at(j, size);
	}
}


/* Poisons what @k writes (bcast's root keeps its input). */
static void poison(struct job *j, enum kind k, size_t size, size_t blk)
{
	if (k == BCAST && j->rank == 0)
		memcpy(j->r, j->x, size);
	else
		memset(j->r, 0xa5, out_bytes(k, size, blk));
}

/* The loops of a round: Open MPI, dfg as its table picks, dfg with -a. */
enum lib { LIB_MPI, LIB_DFG, LIB_ALT, NLIBS };

static const char * const lib_names[NLIBS] = { "MPI", "dfg", "dfg -a" };

/* Times @iters calls of one library; elapsed seconds and what this rank
 * used (use_now()). */
static int timed_loop(struct job *j, enum lib lib, enum kind k, size_t size,
		      size_t blk, unsigned int iters, double *el,
		      double use[NUSE])
{
	struct dfg_team *t = lib == LIB_ALT && j->team_env ? j->team_env :
								 j->team;
	double t0, u0[NUSE];
	unsigned int i;
	int ret = 0, u;

	poison(j, k, size, blk);
	if (lib == LIB_ALT && j->o->nooverlap)
		ret = setenv("DFG_COLL_OVERLAP", "0", 1) ? -errno : 0;
	else if (lib == LIB_ALT && !j->o->env)
		ret = dfg_coll_set_algo(j->team, dfg_kinds[k], j->o->alt);
	MPI_Barrier(MPI_COMM_WORLD);
	use_now(u0);
	t0 = now();
	for (i = 0; i < iters && !ret; i++)
		ret = lib == LIB_MPI ? call_mpi(j, k, size, blk) :
				       call_dfg(j, t, k, size, blk);
	*el = now() - t0;
	use_now(use);
	for (u = 0; u < NUSE; u++)
		use[u] -= u0[u];
	if (lib == LIB_DFG)
		j->dfg_algo = dfg_coll_last_algo(t, dfg_kinds[k]);
	if (lib == LIB_ALT) {
		j->alt_algo = dfg_coll_last_algo(t, dfg_kinds[k]);
		if (j->o->nooverlap)
			unsetenv("DFG_COLL_OVERLAP");
		else if (!j->o->env)
			dfg_coll_set_algo(j->team, dfg_kinds[k], DFG_ALGO_AUTO);
	}
	return ret;
}

/* 0 if the receive buffer holds the closed form; reports the first miss. */
static int check(struct job *j, enum lib lib, enum kind k, size_t size,
		 size_t blk)
{
	size_t len = out_bytes(k, size, blk), i;

	if (!memcmp(j->r, j->x, len))
		return 0;
	for (i = 0; i < len && j->r[i] == j->x[i]; i++)
		;
	fprintf(stderr, "coll_vs_mpi: rank %d: %s %s %zu B: wrong result at byte %zu (0x%02x, expected 0x%02x)\n",
		j->rank, lib_names[lib], kind_names[k], size, i,
		(uint8_t)j->r[i], (uint8_t)j->x[i]);
	return -EBADMSG;
}

/* All ranks agree on the worst (most negative) of @ret. */
static int agree(int ret)
{
	int worst;

	if (MPI_Allreduce(&ret, &worst, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) !=
	    MPI_SUCCESS)
		return -EIO;
	return worst;
}

/* The @nlibs loops of one round (MPI, dfg, then -a's; reversed unless
 * @mpi_first): elapsed (max over ranks) and use (summed), by enum lib. */
static int round_libs(struct job *j, enum kind k, size_t size, size_t blk,
		      unsigned int iters, bool mpi_first, int nlibs,
		      double t[NLIBS], double use[NLIBS][NUSE])
{
	double el[NLIBS], c[NLIBS][NUSE];
	int ret = 0, pass, lib;

	for (pass = 0; pass < nlibs; pass++) {
		lib = mpi_first ? pass : nlibs - 1 - pass;
		ret = timed_loop(j, lib, k, size, blk, iters, &el[lib],
				 c[lib]);
		if (!ret)
			ret = check(j, lib, k, size, blk);
		ret = agree(ret);
		if (ret)
			return ret;
	}
	MPI_Allreduce(el, t, nlibs, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	MPI_Reduce(c, use, nlibs * NUSE, MPI_DOUBLE, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	return 0;
}

/* Does -a apply to @k? (dfg_coll_set_algo() says; the table again after.) */
static bool alt_applies(struct job *j, enum kind k)
{
	if (j->o->nooverlap)
		return k == ALLREDUCE || k == REDUCE_SCATTER;
	if (j->o->env)
		return true;
	if (j->o->alt < 0 ||
	    dfg_coll_set_algo(j->team, dfg_kinds[k], j->o->alt))
		return false;
	dfg_coll_set_algo(j->team, dfg_kinds[k], DFG_ALGO_AUTO);
	return true;
}

/* The -a rows of one point: per round ALGO / table, then the summary. */
static void alt_report(struct job *j, enum kind k, size_t size, size_t blk,
		       unsigned int iters, const char *algo,
		       double lat[NLIBS][ROUNDS_MAX], double sw[NLIBS][2])
{
	const struct opts *o = j->o;
	double r[ROUNDS_MAX], m[ROUNDS_MAX], rmin, rmax, f;
	const char *aname = j->alt_algo >= 0 && j->alt_algo < DFG_ALGO_NR ?
			    algo_names[j->alt_algo] : "?";
	char nov[160];
	unsigned int rd;

	if (o->nooverlap || o->env) {
		snprintf(nov, sizeof(nov), "%s/%s", aname,
			 o->env ? o->env : "nooverlap");
		/* A CSV field: VALUE's commas become '+'. */
		for (char *c = nov; *c; c++)
			if (*c == ',')
				*c = '+';
		aname = nov;
	}

	for (rd = 0; rd < o->rounds; rd++) {
		r[rd] = lat[LIB_ALT][rd] / lat[LIB_DFG][rd];
		m[rd] = lat[LIB_MPI][rd] / lat[LIB_ALT][rd];
		fprintf(j->alt_rounds, "%s,%d,%s,%zu,%zu,%u,%s,%u,%.3f,%.3f,%.3f,%s,%s,%.4f,%.4f\n",
			kind_names[k], j->n, o->label, size, blk, rd,
			rd % 2 == 0 ? "mpi" : "alt", iters, lat[LIB_MPI][rd],
			lat[LIB_DFG][rd], lat[LIB_ALT][rd], algo, aname, r[rd],
			m[rd]);
	}
	rmin = rmax = r[0];
	for (rd = 1; rd < o->rounds; rd++) {
		rmin = fmin(rmin, r[rd]);
		rmax = fmax(rmax, r[rd]);
	}
	f = bus_factor(k, j->n);
	fprintf(j->alt_summary, "%s,%d,%s,%zu,%zu,%u,%u,%s,%s,%.3f,%.3f,%.4f,%.4f,%.4f,%.5g,%.5g,%.4f\n",
		kind_names[k], j->n, o->label, size, blk, o->rounds, iters,
		algo, aname, median(lat[LIB_DFG], o->rounds),
		median(lat[LIB_ALT], o->rounds), median(r, o->rounds), rmin,
		rmax, size / median(lat[LIB_DFG], o->rounds) * f,
		size / median(lat[LIB_ALT], o->rounds) * f,
		median(m, o->rounds));
	fflush(j->alt_rounds);
	fflush(j->alt_summary);
	printf("%-14s N=%d %-7s %9zu B  %s %10.2f us  %s %10.2f us  %s/%s %.2f [%.2f..%.2f]  csw/call %.2f+%.2f %.2f+%.2f\n",
	       kind_names[k], j->n, o->label, size, algo,
	       median(lat[LIB_DFG], o->rounds), aname,
	       median(lat[LIB_ALT], o->rounds), aname, algo,
	       median(r, o->rounds), rmin, rmax, sw[LIB_DFG][0],
	       sw[LIB_DFG][1], sw[LIB_ALT][0], sw[LIB_ALT][1]);
}

static int run_point(struct job *j, enum kind k, size_t size)
{
	const struct opts *o = j->o;
	double t[NLIBS], use[NLIBS][NUSE], ratio[ROUNDS_MAX];
	double lat[NLIBS][ROUNDS_MAX], cpc[2][ROUNDS_MAX], best;
	double csw[NLIBS][2][ROUNDS_MAX], sw[NLIBS][2];
	unsigned int c = 1, iters, rd;
	const char *algo = "?";
	size_t blk;
	int ret, a, nlibs;

	if (!geometry(k, size, j->n, &blk))
		return 0;
	nlibs = o->mpi_only ? 1 : alt_applies(j, k) ? 3 : 2;
	t[LIB_DFG] = use[LIB_DFG][USE_CPU] = NAN;
	fill(j, k, size, blk);
	/* Warm-up (first-touch, setup), then the calibration: the count
	 * that makes the faster library's loop last min_time. Each count is
	 * timed twice and the shorter kept, so that one slow moment of the
	 * machine does not leave a point with a handful of iterations. */
	ret = round_libs(j, k, size, blk, 2, true, nlibs, t, use);
	if (ret)
		return ret;
	for (;;) {
		int tries;

		best = INFINITY;
		for (tries = 0; tries < 2; tries++) {
			ret = round_libs(j, k, size, blk, c, tries,
					 nlibs < 2 ? nlibs : 2, t, use);
			if (ret)
				return ret;
			best = fmin(best, fmin(t[0], t[1]));	/* NAN: the other */
		}
		if (best >= o->min_time || c >= ITERS_MAX)
			break;
		c = c * 4 > ITERS_MAX ? ITERS_MAX : c * 4;
	}
	iters = (unsigned int)ceil(c * o->min_time / fmax(best, 1e-9));
	iters = iters < 1 ? 1 : iters > ITERS_MAX ? ITERS_MAX : iters;
	MPI_Bcast(&iters, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);

	for (rd = 0; rd < o->rounds; rd++) {
		bool mpi_first = rd % 2 == 0;

		ret = round_libs(j, k, size, blk, iters, mpi_first, nlibs, t,
				 use);
		if (ret)
			return ret;
		a = j->dfg_algo;	/* not the -a loop's, which may run later */
		algo = a >= 0 && a < DFG_ALGO_NR ? algo_names[a] : "?";
		if (j->rank)
			continue;
		lat[0][rd] = t[0] / iters * 1e6;
		lat[1][rd] = t[1] / iters * 1e6;
		lat[2][rd] = nlibs > 2 ? t[2] / iters * 1e6 : 0;
		cpc[0][rd] = use[0][USE_CPU] / iters * 1e6;
		cpc[1][rd] = use[1][USE_CPU] / iters * 1e6;
		for (a = 0; a < nlibs; a++) {
			csw[a][0][rd] = use[a][USE_VCSW] / iters;
			csw[a][1][rd] = use[a][USE_IVCSW] / iters;
		}
		ratio[rd] = t[0] / t[1];
		fprintf(j->rounds, "%s,%d,%s,%d,%zu,%zu,%u,%s,%u,%.3f,%.3f,%.4f,%.3f,%.3f,%s\n",
			kind_names[k], j->n, o->label, j->yield, size, blk, rd,
			mpi_first ? "mpi" : "dfg", iters, lat[0][rd],
			lat[1][rd], ratio[rd], cpc[0][rd], cpc[1][rd], algo);
	}
	if (j->rank == 0) {
		double lm = median(lat[0], o->rounds);
		double ld = median(lat[1], o->rounds);
		double rmin = ratio[0], rmax = ratio[0], f = bus_factor(k, j->n);
		double mb = j->memcpy_bw[log2_of(size)];
		double abm = size / lm, abd = size / ld;	/* MB/s */

		for (rd = 1; rd < o->rounds; rd++) {
			rmin = fmin(rmin, ratio[rd]);
			rmax = fmax(rmax, ratio[rd]);
		}
		for (a = 0; a < NLIBS; a++) {
			sw[a][0] = a < nlibs ? median(csw[a][0], o->rounds) :
					       NAN;
			sw[a][1] = a < nlibs ? median(csw[a][1], o->rounds) :
					       NAN;
		}
		fprintf(j->summary, "%s,%d,%s,%d,%zu,%zu,%u,%u,%s,%.3f,%.3f,%.4f,%.4f,%.4f,%.5g,%.5g,%.5g,%.5g,%.5g,%.4g,%.4g,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n",
			kind_names[k], j->n, o->label, j->yield, size, blk,
			o->rounds, iters, algo, lm, ld,
			median(ratio, o->rounds), rmin, rmax, abm, abd,
			abm * f, abd * f, mb, abm * f / mb, abd * f / mb,
			median(cpc[0], o->rounds), median(cpc[1], o->rounds),
			sw[0][0], sw[1][0], sw[0][1], sw[1][1]);
		fflush(j->rounds);
		fflush(j->summary);
		printf("%-14s N=%d %-7s %9zu B  MPI %10.2f us  dfg %10.2f us  ratio %.2f [%.2f..%.2f]  csw/call %.2f+%.2f %.2f+%.2f\n",
		       kind_names[k], j->n, o->label, size, lm, ld,
		       median(ratio, o->rounds), rmin, rmax, sw[0][0],
		       sw[0][1], sw[1][0], sw[1][1]);
		if (nlibs > 2)
			alt_report(j, k, size, blk, iters, algo, lat, sw);
		fflush(stdout);
	}
	return 0;
}

/* mpi_yield_when_idle as Open MPI set it for this job (MPI_T), or -1. */
static int mpi_yield_setting(void)
{
	int provided, idx, count, val = -1;
	MPI_T_cvar_handle h;
	union { int i; char c; long long l; } buf = { 0 };

	if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
		return -1;
	if (MPI_T_cvar_get_index("mpi_yield_when_idle", &idx) == MPI_SUCCESS &&
	    MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) == MPI_SUCCESS) {
		if (count == 1 && MPI_T_cvar_read(h, &buf) == MPI_SUCCESS)
			val = buf.l != 0;
		MPI_T_cvar_handle_free(&h);
	}
	MPI_T_finalize();
	return val;
}

static FILE *open_csv(const char *prefix, const char *what,
		      const char *header)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s_%s.csv", prefix, what);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return NULL;
	}
	fprintf(f, "%s\n", header);
	return f;
}

static bool pow2(size_t v)
{
	return v && !(v & (v - 1));
}

/* -c LIST: NAME or NAME:MIN:MAX, comma-separated; 0 if malformed. */
static unsigned int parse_mask(const char *list, struct opts *o)
{
	unsigned int mask = 0;
	char *dup = strdup(list), *save = NULL, *tok, *range, *end;
	size_t lo, hi;
	int k;

	if (!dup)
		return 0;
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		range = strchr(tok, ':');
		if (range)
			*range++ = '\0';
		for (k = 0; k < NKINDS && strcmp(tok, kind_names[k]); k++)
			;
		if (k == NKINDS) {
			mask = 0;
			break;
		}
		mask |= 1U << k;
		if (!range)
			continue;
		lo = strtoul(range, &end, 0);
		hi = *end == ':' ? strtoul(end + 1, &end, 0) : 0;
		if (*end || !pow2(lo) || !pow2(hi) || hi < lo ||
		    hi >= 1UL << 31) {
			mask = 0;
			break;
		}
		o->kmin[k] = lo;
		o->kmax[k] = hi;
	}
	free(dup);
	return mask;
}

/* -e: the second team, formed with @env (VAR=VALUE) set, then unset. */
static int team_with_env(struct job *j, const char *env)
{
	const char *eq = strchr(env, '=');
	char var[128];
	int ret;

	if ((size_t)(eq - env) >= sizeof(var))
		return -EINVAL;
	memcpy(var, env, eq - env);
	var[eq - env] = '\0';
	if (getenv(var)) {
		if (!j->rank)
			fprintf(stderr, "coll_vs_mpi: -e %s: %s is set already\n",
				env, var);
		return -EINVAL;
	}
	if (setenv(var, eq + 1, 1))
		return -errno;
	ret = dfg_team_from_mpi(MPI_COMM_WORLD, -1, &j->team_env);
	unsetenv(var);
	if (ret && !j->rank)
		fprintf(stderr, "coll_vs_mpi: -e %s: dfg_team_from_mpi: %s\n",
			env, strerror(-ret));
	return ret;
}

static int parse_algo(const char *name)
{
	int a;

	for (a = DFG_ALGO_AUTO + 1; a < DFG_ALGO_NR; a++)
		if (!strcmp(name, algo_names[a]))
			return a;
	return -2;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.min = 8, .max = 1 << 20, .step = 2, .rounds = 5,
		.min_time = 0.01, .mask = (1U << ALLTOALLV) - 1, .alt = -1,
		.label = "default", .prefix = NULL,
	};
	struct job j = { .o = &o, .dfg_algo = -1, .alt_algo = -1 };
	int opt, ret = 0, k;
	size_t size, bufmax;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &j.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &j.n);
	while ((opt = getopt(argc, argv, "a:c:e:m:M:s:r:t:l:o:OP")) != -1) {
		switch (opt) {
		case 'e': o.env = optarg; break;
		case 'P': o.mpi_only = true; break;
		case 'O': o.nooverlap = true; break;
		case 'a': o.alt = parse_algo(optarg); break;
		case 'c': o.mask = parse_mask(optarg, &o); break;
		case 'm': o.min = strtoul(optarg, NULL, 0); break;
		case 'M': o.max = strtoul(optarg, NULL, 0); break;
		case 's': o.step = strtoul(optarg, NULL, 0); break;
		case 'r': o.rounds = strtoul(optarg, NULL, 0); break;
		case 't': o.min_time = strtod(optarg, NULL); break;
		case 'l': o.label = optarg; break;
		case 'o': o.prefix = optarg; break;
		default: o.mask = 0; break;
		}
	}
	/* Sizes are powers of two: memcpy_bw[] is indexed by log2. */
	if (!o.mask || !o.prefix || (o.step != 2 && o.step != 4) ||
	    o.rounds < 1 || o.rounds > ROUNDS_MAX || !(o.min_time > 0) ||
	    o.min < 1 || o.max < o.min || (o.min & (o.min - 1)) ||
	    o.max >= 1UL << 31 || j.n < 2 || o.alt < -1 ||
	    (o.env && (!strchr(o.env, '=') || *o.env == '=')) ||
	    (o.nooverlap + (o.alt >= 0) + o.mpi_only + !!o.env > 1)) {
		if (!j.rank)
			fprintf(stderr, "usage: mpirun -np N (N >= 2) %s [-c NAME[:MIN:MAX],... (allreduce,reduce_scatter,allgather,bcast,alltoall,alltoallv)] [-m MIN (power of 2)] [-M MAX (< 2 GiB)] [-s 2|4] [-r ROUNDS (1..%d)] [-t SEC] [-l LABEL] [-a rhalving|ring|direct|tiles|inbox|hier | -O | -e VAR=VALUE | -P] -o PREFIX\n",
				argv[0], ROUNDS_MAX);
		MPI_Finalize();
		return 2;
	}
	j.yield = mpi_yield_setting();
	bufmax = 0;
	for (k = 0; k < NKINDS; k++)
		if (o.mask & (1U << k) && kind_max(&o, k) > bufmax)
			bufmax = kind_max(&o, k);
	j.s = malloc(bufmax);
	j.r = malloc(bufmax);
	j.x = malloc(bufmax);
	j.vc = calloc(j.n, sizeof(*j.vc));
	j.vd = calloc(j.n, sizeof(*j.vd));
	j.mc = calloc(j.n, sizeof(*j.mc));
	j.md = calloc(j.n, sizeof(*j.md));
	if (!j.s || !j.r || !j.x || !j.vc || !j.vd || !j.mc || !j.md)
		ret = -ENOMEM;
	if (!ret && !j.rank) {
		j.rounds = open_csv(o.prefix, "rounds",
				    "coll,nprocs,mpi_mode,mpi_yield,bytes,block,round,first,iters,mpi_us,dfg_us,ratio,mpi_cpu_us,dfg_cpu_us,dfg_algo");
		j.summary = open_csv(o.prefix, "summary",
				     "coll,nprocs,mpi_mode,mpi_yield,bytes,block,rounds,iters,dfg_algo,mpi_us,dfg_us,ratio_med,ratio_min,ratio_max,mpi_algbw_MBps,dfg_algbw_MBps,mpi_busbw_MBps,dfg_busbw_MBps,memcpy_MBps,mpi_busbw_frac,dfg_busbw_frac,mpi_cpu_us,dfg_cpu_us,mpi_vcsw,dfg_vcsw,mpi_ivcsw,dfg_ivcsw");
		if (!j.rounds || !j.summary)
			ret = -EIO;
	}
	if (!ret && !j.rank && (o.alt >= 0 || o.nooverlap || o.env)) {
		j.alt_rounds = open_csv(o.prefix, "alt_rounds",
					"coll,nprocs,mpi_mode,bytes,block,round,first,iters,mpi_us,dfg_us,alt_us,dfg_algo,alt_algo,alt_over_dfg,mpi_over_alt");
		j.alt_summary = open_csv(o.prefix, "alt_summary",
					 "coll,nprocs,mpi_mode,bytes,block,rounds,iters,dfg_algo,alt_algo,dfg_us,alt_us,alt_over_dfg_med,alt_over_dfg_min,alt_over_dfg_max,dfg_busbw_MBps,alt_busbw_MBps,mpi_over_alt_med");
		if (!j.alt_rounds || !j.alt_summary)
			ret = -EIO;
	}
	ret = agree(ret);
	if (!ret && !o.mpi_only) {
		ret = dfg_team_from_mpi(MPI_COMM_WORLD, -1, &j.team);
		if (ret && !j.rank)
			fprintf(stderr, "coll_vs_mpi: dfg_team_from_mpi: %s\n",
				strerror(-ret));
		ret = agree(ret);
	}
	if (!ret && o.env)
		ret = agree(team_with_env(&j, o.env));
	if (!ret) {
		memset(j.s, 1, bufmax);
		if (!j.rank)
			measure_memcpy(&j);
		quiet_barrier();
	}
	for (k = 0; k < NKINDS && !ret; k++) {
		if (!(o.mask & (1U << k)))
			continue;
		for (size = kind_min(&o, k); size <= kind_max(&o, k) && !ret;
		     size *= o.step)
			ret = run_point(&j, k, size);
	}
	if (ret && !j.rank)
		fprintf(stderr, "coll_vs_mpi: stopped: %s\n", strerror(-ret));
	if (j.team_env)
		dfg_team_leave(j.team_env);
	if (j.team)
		dfg_team_leave(j.team);
	if (j.rounds)
		fclose(j.rounds);
	if (j.summary)
		fclose(j.summary);
	if (j.alt_rounds)
		fclose(j.alt_rounds);
	if (j.alt_summary)
		fclose(j.alt_summary);
	free(j.s);
	free(j.r);
	free(j.x);
	free(j.vc);
	free(j.vd);
	free(j.mc);
	free(j.md);
	MPI_Finalize();
	return ret ? 1 : 0;
}
