/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg tests of the collectives: inputs and serial references.
 *
 * Each reference reduces in the order the algorithm promises, so floating
 * point results must match bit for bit:
 *  - recursive halving: fold (even, odd), then a balanced tree over the
 *    virtual ranks, lower rank on the left;
 *  - ring: block b along the chain b + 1, b + 2, ..., b;
 *  - direct: rank order, ((x0 op x1) op x2) ...
 *  - hier: each machine's members in rank order, then recursive halving
 *    over the machines numbered by their lowest rank (ref_hier()).
 */
#ifndef _DFG_TESTS_COLL_REF_H
#define _DFG_TESTS_COLL_REF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dfg/coll.h>

#include "../coll/coll.h"

/* Element @i of rank @rank's input for a call numbered @call. */
static inline void ref_fill(void *buf, size_t count, enum dfg_dtype dt,
			    unsigned int rank, unsigned int call)
{
	uint64_t s = (uint64_t)rank * 0x9e3779b97f4a7c15ULL + call * 7919 + 1;

	for (size_t i = 0; i < count; i++) {
		uint64_t z = s + i * 0xbf58476d1ce4e5b9ULL;

		z ^= z >> 31;
		z *= 0x94d049bb133111ebULL;
		z ^= z >> 29;
		switch (dt) {
		case DFG_INT32:
			((int32_t *)buf)[i] = (int32_t)(z % 2001) - 1000;
			break;
		case DFG_INT64:
			((int64_t *)buf)[i] = (int64_t)(z >> 3) - (1LL << 59);
			break;
		case DFG_FLOAT32:
			/* Close to 1 so products stay finite and inexact. */
			((float *)buf)[i] = 0.5f + (float)(z % 100003) / 100003.0f;
			break;
		default:
			((double *)buf)[i] = 0.5 + (double)(z % 1000003) /
						   1000003.0;
			break;
		}
	}
}

/* @out = reduce of @in[0..size-1] (each @count elements) in @algo's order. */
static inline void ref_reduce(enum dfg_coll_algo algo, unsigned int size,
			      void *const *in, size_t count,
			      const struct dfg_reducer *red, void *out)
{
	size_t e = red->esize;

	if (algo == DFG_ALGO_RING) {
		/* Per block b of the reduce-scatter: chain b+1, ..., b. */
		for (unsigned int b = 0; b < size; b++) {
			size_t lo = dfg_block_lo(count, size, b);
			size_t cnt = dfg_block_len(count, size, b);
			char *o = (char *)out + lo * e;

			memcpy(o, (char *)in[(b + 1) % size] + lo * e,
			       cnt * e);
			for (unsigned int k = 2; k <= size; k++)
				dfg_reducer_run(red, o, o, (char *)in[(b + k) %
						size] + lo * e, cnt);
		}
	} else if (algo == DFG_ALGO_DIRECT || algo == DFG_ALGO_INBOX) {
		memcpy(out, in[0], count * e);
		for (unsigned int r = 1; r < size; r++)
			dfg_reducer_run(red, out, out, in[r], count);
	} else {
		struct dfg_fold f;
		char **v;

		dfg_fold_init(&f, size);
		v = calloc(f.p2, sizeof(*v));
		for (unsigned int u = 0; u < f.p2; u++) {
			v[u] = malloc(count * e + 1);
			if (u < f.r)
				dfg_reducer_run(red, v[u], in[2 * u],
						in[2 * u + 1], count);
			else
				memcpy(v[u], in[u + f.r], count * e);
		}
		for (unsigned int d = 1; d < f.p2; d *= 2)
			for (unsigned int u = 0; u < f.p2; u += 2 * d)
				dfg_reducer_run(red, v[u], v[u], v[u + d],
						count);
		memcpy(out, v[0], count * e);
		for (unsigned int u = 0; u < f.p2; u++)
			free(v[u]);
		free(v);
	}
}

/*
 * @out = reduce in the hierarchy's order (coll/hier.c); @key[r] is the
 * same for the ranks on one machine.
 */
static inline void ref_hier(unsigned int size, const unsigned int *key,
			    void *const *in, size_t count,
			    const struct dfg_reducer *red, void *out)
{
	void **part = calloc(size, sizeof(*part));
	unsigned int *first = calloc(size, sizeof(*first));
	unsigned int nodes = 0, k;

	for (unsigned int r = 0; r < size; r++) {
		for (k = 0; k < nodes; k++)
			if (key[first[k]] == key[r])
				break;
		if (k < nodes) {
			dfg_reducer_run(red, part[k], part[k], in[r], count);
			continue;
		}
		first[nodes] = r;
		part[nodes] = malloc(count * red->esize + 1);
		memcpy(part[nodes++], in[r], count * red->esize);
	}
	ref_reduce(DFG_ALGO_RHALVING, nodes, part, count, red, out);
	for (k = 0; k < nodes; k++)
		free(part[k]);
	free(part);
	free(first);
}

/*
 * @out = every rank's @bytes in rank order: the allgather's layout, which
 * every algorithm (the hierarchy's too, whatever its machines) keeps.
 */
static inline void ref_allgather(unsigned int size, void *const *in,
				 size_t bytes, void *out)
{
	for (unsigned int r = 0; r < size; r++)
		memcpy((char *)out + r * bytes, in[r], bytes);
}

/* The reduce-scatter orders: rh and direct as the reductions; ring too. */
static inline enum dfg_coll_algo ref_order(const struct dfg_team *t,
					   enum dfg_coll_kind kind)
{
	enum dfg_coll_algo a = dfg_coll_last_algo(t, kind);

	return a == DFG_ALGO_AUTO ? DFG_ALGO_RHALVING : a;
}

/*
 * Bytes of an inbox slot at N = @n (xport_shm.c): the 2 N^2 slots share
 * 8 MiB, at most 256 KiB each, none under 2 KiB.
 */
static inline size_t ref_inbox_slot(unsigned int n)
{
	size_t b = (8U << 20) / (2 * (size_t)n * n);

	if (b > (256U << 10))
		b = 256U << 10;
	return b < 2048 ? 0 : b & ~(size_t)63;
}

#endif /* _DFG_TESTS_COLL_REF_H */
