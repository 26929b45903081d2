/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The measurement loop shared by the collective benchmarks: coll_bench
 * (dfg teams, forked ranks) and coll_mpi (Open MPI, under mpirun). One
 * loop, one CSV schema, so the two are measured the same way and the
 * ratios compare like with like.
 *
 * Sizes are bytes per rank: the vector each rank contributes (allreduce,
 * reduce_scatter) or its whole send buffer (alltoall(v): blocks of
 * size / N bytes; alltoallv sends rank j (j + 1) * 2 / (N + 1) blocks'
 * worth, the same total with uneven blocks).
 *
 * Times: every rank runs @iters calls between two barriers; the figure is
 * the slowest rank's time per call (a max-reduction of the elapsed time).
 * Bus bandwidth follows the convention of NCCL's tests: allreduce moves
 * 2 (N - 1) / N of the vector per rank, reduce_scatter, allgather and
 * alltoall(v) (N - 1) / N.
 */
#ifndef COLL_COMMON_H
#define COLL_COMMON_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum coll_kind {
	COLL_ALLREDUCE,
	COLL_REDUCE_SCATTER,
	COLL_ALLTOALL,
	COLL_ALLTOALLV,
	COLL_NR,
};

static const char * const coll_names[COLL_NR] = {
	"allreduce", "reduce_scatter", "alltoall", "alltoallv",
};

/* What a backend provides; buffers are allocated by the loop. */
struct coll_backend {
	const char *impl;	/* "dfg", "mpi" */
	unsigned int rank, size;
	void *ctx;
	/* float32 sum over @count elements */
	int (*allreduce)(void *ctx, const float *s, float *r, size_t count);
	/* float32 sum, @count elements per rank */
	int (*reduce_scatter)(void *ctx, const float *s, float *r,
			      size_t count);
	int (*alltoall)(void *ctx, const void *s, void *r, size_t block);
	int (*alltoallv)(void *ctx, const void *s, const size_t *sc,
			 const size_t *sd, void *r, const size_t *rc,
			 const size_t *rd);
	int (*barrier)(void *ctx);
	/* max of @v over the team, into every rank */
	int (*max_double)(void *ctx, double *v);
	/* name of the algorithm the last call of @kind used */
	const char *(*algo)(void *ctx, enum coll_kind kind);
};

struct coll_opts {
	unsigned long min_bytes, max_bytes;
	double min_time;	/* seconds of calls per size, at least */
	unsigned int min_iters, max_iters;
	unsigned int mask;	/* 1 << enum coll_kind to run */
};

static inline double coll_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline double coll_bus_factor(enum coll_kind k, unsigned int n)
{
	if (n <= 1)
		return 1.0;
	if (k == COLL_ALLREDUCE)
		return 2.0 * (n - 1) / n;
	return (double)(n - 1) / n;
}

/* Bytes rank @r sends rank @j in the alltoallv pattern (8-byte units). */
static inline size_t coll_v_bytes(size_t per_rank, unsigned int n,
				  unsigned int r, unsigned int j)
{
	size_t unit = per_rank / n / 8 * 8;

	return unit * (2 * ((r + j) % n) + 1) / n;
}

static int coll_one(struct coll_backend *b, enum coll_kind k, void *s,
		    void *r, size_t bytes, size_t *v)
{
	unsigned int n = b->size;
	size_t *sc = v, *sd = v + n, *rc = v + 2 * n, *rd = v + 3 * n;

	switch (k) {
	case COLL_ALLREDUCE:
		return b->allreduce(b->ctx, s, r, bytes / sizeof(float));
	case COLL_REDUCE_SCATTER:
		return b->reduce_scatter(b->ctx, s, r,
					 bytes / sizeof(float) / n);
	case COLL_ALLTOALL:
		return b->alltoall(b->ctx, s, r, bytes / n);
	case COLL_ALLTOALLV:
		return b->alltoallv(b->ctx, s, sc, sd, r, rc, rd);
	default:
		return -EINVAL;
	}
}

/* Counts and displacements of the alltoallv pattern for this rank. */
static void coll_v_layout(struct coll_backend *b, size_t bytes, size_t *v)
{
	unsigned int n = b->size, j;
	size_t *sc = v, *sd = v + n, *rc = v + 2 * n, *rd = v + 3 * n;
	size_t so = 0, ro = 0;

	for (j = 0; j < n; j++) {
		sc[j] = coll_v_bytes(bytes, n, b->rank, j);
		rc[j] = coll_v_bytes(bytes, n, j, b->rank);
		sd[j] = so;
		rd[j] = ro;
		so += sc[j];
		ro += rc[j];
	}
}

/* Smallest per-rank size a collective takes: one element per rank. */
static size_t coll_min_bytes(enum coll_kind k, unsigned int n)
{
	if (k == COLL_REDUCE_SCATTER)
		return sizeof(float) * n;
	if (k == COLL_ALLTOALL)
		return n;
	if (k == COLL_ALLTOALLV)
		return 8 * n;
	return sizeof(float);
}

/*
 * Runs every selected collective over the sizes (powers of two) and writes
 * one CSV row per (collective, size) on rank 0. Returns 0 or -errno.
 */
static int coll_run(struct coll_backend *b, const struct coll_opts *o,
		    FILE *csv)
{
	unsigned int n = b->size;
	size_t max = o->max_bytes, *v;
	char *s, *r;
	int k, ret = 0;

	s = malloc(max + 64);
	r = malloc(max + 64);
	v = calloc(4 * n, sizeof(*v));
	if (!s || !r || !v) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < max / sizeof(float); i++)
		((float *)s)[i] = (float)((i + b->rank) % 7);
	memset(r, 0, max);
	if (b->rank == 0)
		fprintf(csv, "impl,algo,coll,nprocs,bytes,block,iters,lat_us,algbw_MBps,busbw_MBps\n");

	for (k = 0; k < COLL_NR; k++) {
		size_t bytes, lo;

		if (!(o->mask & (1U << k)))
			continue;
		lo = o->min_bytes;
		if (lo < coll_min_bytes(k, n))
			lo = coll_min_bytes(k, n);
		for (bytes = lo; bytes <= max; bytes *= 2) {
			unsigned int iters = 0, want;
			double t0, t, per;
			const char *algo;

			if (k == COLL_ALLTOALLV)
				coll_v_layout(b, bytes, v);
			/* Warm-up call, then as many as fill min_time. */
			ret = coll_one(b, k, s, r, bytes, v);
			if (ret)
				goto out;
			ret = b->barrier(b->ctx);
			if (ret)
				goto out;
			t0 = coll_now();
			ret = coll_one(b, k, s, r, bytes, v);
			if (ret)
				goto out;
			t = coll_now() - t0;
			ret = b->max_double(b->ctx, &t);
			if (ret)
				goto out;
			want = t > 0 ? (unsigned int)(o->min_time / t) : 1;
			if (want < o->min_iters)
				want = o->min_iters;
			if (want > o->max_iters)
				want = o->max_iters;
			ret = b->barrier(b->ctx);
			if (ret)
				goto out;
			t0 = coll_now();
			for (iters = 0; iters < want; iters++) {
				ret = coll_one(b, k, s, r, bytes, v);
				if (ret)
					goto out;
			}
			t = coll_now() - t0;
			/* Before max_double(), itself a collective. */
			algo = b->algo(b->ctx, k);
			ret = b->max_double(b->ctx, &t);
			if (ret)
				goto out;
			per = t / iters;
			if (b->rank == 0) {
				double alg = bytes / per / 1e6;

				fprintf(csv, "%s,%s,%s,%u,%zu,%zu,%u,%.3f,%.3f,%.3f\n",
					b->impl, algo,
					coll_names[k], n, bytes,
					k >= COLL_ALLTOALL ? bytes / n : bytes,
					iters, per * 1e6, alg,
					alg * coll_bus_factor(k, n));
				fflush(csv);
			}
		}
	}
out:
	free(s);
	free(r);
	free(v);
	return ret;
}

static inline unsigned int coll_parse_mask(const char *list);

/* The defaults of both programs: 8 B to 1 MiB, 0.2 s per size. */
#define COLL_OPTS_DEFAULT {						\
	.min_bytes = 8, .max_bytes = 1UL << 20, .min_time = 0.2,	\
	.min_iters = 3, .max_iters = 10000, .mask = (1U << COLL_NR) - 1 \
}

/* The options both programs share (getopt "c:m:M:t:o:"); false if @opt is
 * not one of them. A bad -c leaves an empty mask, for the usage check. */
static inline bool coll_opt(int opt, const char *arg, struct coll_opts *o,
			    const char **out)
{
	switch (opt) {
	case 'c':
		o->mask = coll_parse_mask(arg);
		return true;
	case 'm':
		o->min_bytes = strtoul(arg, NULL, 0);
		return true;
	case 'M':
		o->max_bytes = strtoul(arg, NULL, 0);
		return true;
	case 't':
		o->min_time = strtod(arg, NULL);
		return true;
	case 'o':
		*out = arg;
		return true;
	}
	return false;
}

/* -c allreduce,alltoall -> mask; 0 on an unknown name. */
static inline unsigned int coll_parse_mask(const char *list)
{
	unsigned int mask = 0;
	char *dup = strdup(list), *save = NULL, *tok;

	if (!dup)
		return 0;
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 0; k < COLL_NR; k++)
			if (!strcmp(tok, coll_names[k]))
				break;
		if (k == COLL_NR) {
			free(dup);
			return 0;
		}
		mask |= 1U << k;
	}
	free(dup);
	return mask;
}

#endif /* COLL_COMMON_H */
