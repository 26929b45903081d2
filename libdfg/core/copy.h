/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg internal: the one copy routine for bulk data (core/copy.c).
 */
#ifndef DFG_CORE_COPY_H
#define DFG_CORE_COPY_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Bytes below which every copy is glibc's: its x86-64 memcpy uses `rep
 * movsb` from 2 KiB at the earliest (its rep_movsb_threshold: 2 KiB for
 * 16-byte vectors, 8 KiB with AVX2, 2112 bytes with FSRM).
 */
#define DFG_COPY_VEC_MIN	2048u

/*
 * dfg_copy() - copy @n bytes from @src to @dst; returns @dst.
 *
 * Overlapping ranges are allowed and handled as memmove() does (the
 * result is what the source held before the call); @dst == @src copies
 * nothing. Otherwise, when the
 * vector loop is on (dfg_copy_vec_on()) and @n is in the band
 * dfg_copy_band() gives, it copies with dfg_copy_vec(); every other call
 * is glibc's memcpy().
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
 * Is the CPU QEMU's TCG (x86-64: hypervisor signature "TCGTCGTCGTCG"),
 * where some instructions cost a trip through the emulator (`rep movsb`
 * here, `pause` in the collectives' polls)? False elsewhere.
 */
bool dfg_cpu_tcg(void);

/*
 * The band [*@lo, *@hi) of sizes dfg_copy() gives the loop when it is on:
 * where glibc 2.36 copies with `rep movsb` (copy.c, copy_band()): from its
 * rep_movsb_threshold (2 KiB, 2112 bytes with FSRM, 8 KiB with AVX2) up
 * to the L2 size on AMD, else 3/4 of the L3 (its non-temporal
 * threshold); 2 KiB-4 MiB when the CPU tells nothing.
 */
void dfg_copy_band(size_t *lo, size_t *hi);

#endif /* DFG_CORE_COPY_H */
