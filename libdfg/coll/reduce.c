// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg collectives: element types, the built-in reduction kernels and
 * user operations.
 *
 * Every kernel computes dst = a (op) b with a the operand of the lower
 * (virtual) rank: the algorithms fix which partial is a and which is b,
 * so a floating-point result depends only on the algorithm and the team
 * size, never on timing. Integer sums and products wrap (computed
 * unsigned: no undefined overflow).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "copy.h"
#include "coll.h"

size_t dfg_dtype_size(enum dfg_dtype dtype)
{
	switch (dtype) {
	case DFG_INT32:
	case DFG_FLOAT32:
		return 4;
	case DFG_INT64:
	case DFG_FLOAT64:
		return 8;
	default:
		return 0;
	}
}

/*
 * The kernels work on 32-byte vectors (GCC's vector extension; the
 * compiler lowers them to what the target has), element by element in
 * the scalar expression's exact semantics, so a result is the same bit
 * for bit as a scalar loop's. Loads and stores go through memcpy():
 * buffers need no alignment, and dst may be a or b (each vector is
 * loaded before it is stored). -O2 does not vectorize the scalar loop
 * (dst may alias a or b), and a vector op is worth 4 to 8 scalar ones.
 * min and max select with a mask: v < u ? v : u takes u whenever the
 * comparison is false, NaNs included, as the scalar expression does.
 */
#define DFG_VBYTES	32

#define DFG_KERNEL(name, T, U, M, vexpr, expr)				\
static void name(void *dst, const void *a, const void *b, size_t n)	\
{									\
	typedef T V __attribute__((vector_size(DFG_VBYTES)));		\
	typedef U VU __attribute__((vector_size(DFG_VBYTES)));		\
	typedef M VM __attribute__((vector_size(DFG_VBYTES)));		\
	const size_t w = DFG_VBYTES / sizeof(T);			\
	const T *x = a, *y = b;						\
	T *d = dst;							\
	size_t i = 0;							\
									\
	for (; n - i >= w; i += w) {					\
		V u, v, r;						\
									\
		memcpy(&u, x + i, sizeof(u));				\
		memcpy(&v, y + i, sizeof(v));				\
		r = (vexpr);						\
		memcpy(d + i, &r, sizeof(r));				\
	}								\
	for (; i < n; i++) {						\
		T u = x[i], v = y[i];					\
									\
		d[i] = (expr);						\
	}								\
	(void)sizeof(VU);						\
	(void)sizeof(VM);						\
}

/* v where @mask (all ones), u elsewhere; VM is the integer vector. */
#define DFG_VSEL(V, VM, mask, v, u)					\
	((V)(((VM)(v) & (mask)) | ((VM)(u) & ~(mask))))

#define DFG_KERNELS_INT(tag, T, U)					\
	DFG_KERNEL(sum_##tag, T, U, T, (V)((VU)u + (VU)v),		\
		   (T)((U)u + (U)v))					\
	DFG_KERNEL(prod_##tag, T, U, T, (V)((VU)u * (VU)v),		\
		   (T)((U)u * (U)v))					\
	DFG_KERNEL(min_##tag, T, U, T,					\
		   DFG_VSEL(V, VM, (VM)(v < u), v, u), v < u ? v : u)	\
	DFG_KERNEL(max_##tag, T, U, T,					\
		   DFG_VSEL(V, VM, (VM)(v > u), v, u), v > u ? v : u)

#define DFG_KERNELS_FLT(tag, T, M)					\
	DFG_KERNEL(sum_##tag, T, T, M, u + v, u + v)			\
	DFG_KERNEL(prod_##tag, T, T, M, u * v, u * v)			\
	DFG_KERNEL(min_##tag, T, T, M,					\
		   DFG_VSEL(V, VM, (VM)(v < u), v, u), v < u ? v : u)	\
	DFG_KERNEL(max_##tag, T, T, M,					\
		   DFG_VSEL(V, VM, (VM)(v > u), v, u), v > u ? v : u)

DFG_KERNELS_INT(i32, int32_t, uint32_t)
DFG_KERNELS_INT(i64, int64_t, uint64_t)
DFG_KERNELS_FLT(f32, float, int32_t)
DFG_KERNELS_FLT(f64, double, int64_t)

static const dfg_reduce_fn dfg_kernels[DFG_DTYPE_NR][DFG_OP_NR] = {
	[DFG_INT32]	= { sum_i32, prod_i32, min_i32, max_i32 },
	[DFG_INT64]	= { sum_i64, prod_i64, min_i64, max_i64 },
	[DFG_FLOAT32]	= { sum_f32, prod_f32, min_f32, max_f32 },
	[DFG_FLOAT64]	= { sum_f64, prod_f64, min_f64, max_f64 },
};

/* User operations: handle DFG_OP_USER + index. */
#define DFG_USER_OPS	64

struct dfg_user_op {
	dfg_user_op_fn	fn;
	void		*arg;
};

/* dfg_user_ops_lock protects dfg_user_ops[] (create/free vs lookup). */
static pthread_mutex_t dfg_user_ops_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dfg_user_op dfg_user_ops[DFG_USER_OPS];

int dfg_op_create(dfg_user_op_fn fn, void *arg)
{
	int ret = -ENOSPC;

	if (!fn)
		return -EINVAL;
	pthread_mutex_lock(&dfg_user_ops_lock);
	for (int i = 0; i < DFG_USER_OPS; i++) {
		if (!dfg_user_ops[i].fn) {
			dfg_user_ops[i] = (struct dfg_user_op){ fn, arg };
			ret = DFG_OP_USER + i;
			break;
		}
	}
	pthread_mutex_unlock(&dfg_user_ops_lock);
	return ret;
}

int dfg_op_free(int op)
{
	int ret = -EINVAL;

	if (op < DFG_OP_USER || op >= DFG_OP_USER + DFG_USER_OPS)
		return -EINVAL;
	pthread_mutex_lock(&dfg_user_ops_lock);
	if (dfg_user_ops[op - DFG_OP_USER].fn) {
		dfg_user_ops[op - DFG_OP_USER].fn = NULL;
		ret = 0;
	}
	pthread_mutex_unlock(&dfg_user_ops_lock);
	return ret;
}

int dfg_reducer_get(int op, enum dfg_dtype dtype, struct dfg_reducer *r)
{
	size_t esize = dfg_dtype_size(dtype);

	if (!esize)
		return -EINVAL;
	*r = (struct dfg_reducer){ .dtype = dtype, .esize = esize };
	if (op >= 0 && op < DFG_OP_NR) {
		r->fn = dfg_kernels[dtype][op];
		return 0;
	}
	if (op < DFG_OP_USER || op >= DFG_OP_USER + DFG_USER_OPS)
		return -EINVAL;
	pthread_mutex_lock(&dfg_user_ops_lock);
	r->user = dfg_user_ops[op - DFG_OP_USER].fn;
	r->arg = dfg_user_ops[op - DFG_OP_USER].arg;
	pthread_mutex_unlock(&dfg_user_ops_lock);
	return r->user ? 0 : -EINVAL;
}

void dfg_reducer_run(const struct dfg_reducer *r, void *dst,
		     const void *a, const void *b, size_t n)
{
	if (!n)
		return;
	if (r->fn) {
		r->fn(dst, a, b, n);
		return;
	}
	/* User ops are commutative: dst == b may take a as the other side. */
	if (dst == b) {
		r->user(dst, a, n, r->dtype, r->arg);
		return;
	}
	if (dst != a)
		dfg_copy(dst, a, n * r->esize);
	r->user(dst, b, n, r->dtype, r->arg);
}
