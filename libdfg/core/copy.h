/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg internal: the one copy routine for bulk data (core/copy.c).
 */
#ifndef DFG_CORE_COPY_H
#define DFG_CORE_COPY_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Bytes from which the vector loop takes over, when it is on: glibc's
 * x86-64 memcpy starts using `rep movsb` at 2 KiB (its
 * rep_movsb_threshold for 16-byte vectors; 4 KiB for 32-byte ones, 2112
 * bytes with FSRM), so below this every path is glibc's.
 */
#define DFG_COPY_VEC_MIN	2048u

/*
 * dfg_copy() - copy @n bytes from @src to @dst; returns @dst.
 *
 * Overlapping ranges are allowed and handled as memmove() does (the
 * result is what the source held before the call); @dst == @src copies
 * nothing. Otherwise, when the
 * vector loop is on (dfg_copy_vec_on()) and DFG_COPY_VEC_MIN <= @n <
 * dfg_copy_vec_max(), it copies with dfg_copy_vec(); every other call is
 * glibc's memcpy().
 */
void *dfg_copy(void *dst, const void *src, size_t n);

/*
 * dfg_copy_vec() - the vector loop itself, any @n (0 included); @dst and
 * @src must not overlap. x86-64: SSE2, 64 bytes a step, stores aligned
 * to 16 bytes; elsewhere memcpy().
 */
void dfg_copy_vec(void *dst, const void *src, size_t n);

/*
 * Is the vector loop used by dfg_copy()? Decided once per process:
 * DFG_COPY=vector or DFG_COPY=libc forces it; by default it is on only
 * on x86-64 when glibc's memcpy uses `rep movsb` (the CPU has ERMS) and
 * that instruction is emulated, i.e. the CPU is QEMU's TCG (hypervisor
 * signature "TCGTCGTCGTCG"). DESIGN.md, "Collectives: copies under TCG".
 */
bool dfg_copy_vec_on(void);

/*
 * Bytes from which dfg_copy() leaves the loop to glibc again: about
 * glibc's non-temporal threshold (3/4 of the L3 cache sysconf() reports,
 * 4 MiB when it reports none), where glibc stops using `rep movsb` and
 * streams with non-temporal stores.
 */
size_t dfg_copy_vec_max(void);

#endif /* DFG_CORE_COPY_H */
