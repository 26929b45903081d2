/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One TAP line ("ok - ..." / "not ok - ...") per check, for the
 * programs of selftests/prefetch; pf_fails counts the checks not ok.
 */
#ifndef PF_TAP_H
#define PF_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static unsigned int pf_fails;

static void pf_tap(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void pf_tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		pf_fails++;
}

#endif /* PF_TAP_H */
