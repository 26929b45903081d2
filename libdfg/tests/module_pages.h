/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The module's page count, for tests that check memory returns to zero. */
#ifndef DFG_TESTS_MODULE_PAGES_H
#define DFG_TESTS_MODULE_PAGES_H

#include <stdio.h>

/* The module's pages (arenas, rings, regions, team control areas), or -1. */
static inline long dfg_pages(void)
{
	FILE *f = fopen("/sys/kernel/dfg/pages", "r");
	long pages = -1;

	if (f) {
		if (fscanf(f, "%ld", &pages) != 1)
			pages = -1;
		fclose(f);
	}
	return pages;
}

#endif
