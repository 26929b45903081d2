/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Test helper: anonymous shared memory between two PROT_NONE guard pages,
 * so any access a hair outside it faults instead of passing unnoticed.
 */
#ifndef _DFG_TESTS_GUARD_H
#define _DFG_TESTS_GUARD_H

#include <stddef.h>
#include <sys/mman.h>

#define GUARD_PAGE	4096UL

/* @size bytes (a multiple of GUARD_PAGE), or NULL. */
static inline void *guarded_map(size_t size)
{
	size_t len = size + 2 * GUARD_PAGE;
	char *p;

	p = mmap(NULL, len, PROT_NONE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + GUARD_PAGE, size, PROT_READ | PROT_WRITE)) {
		munmap(p, len);
		return NULL;
	}
	return p + GUARD_PAGE;
}

static inline void guarded_unmap(void *p, size_t size)
{
	if (p)
		munmap((char *)p - GUARD_PAGE, size + 2 * GUARD_PAGE);
}

#endif /* _DFG_TESTS_GUARD_H */
