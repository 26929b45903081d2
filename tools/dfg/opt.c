// SPDX-License-Identifier: GPL-2.0
/*
 * dfg(1): the numeric option values of every subcommand, parsed one way:
 * decimal digits only, no sign, no blanks, no suffix, within a range.
 * (strtoull() alone takes "-1" as 2^64-1 and " 7" as 7.)
 */
#include <stdbool.h>

#include "dfg.h"

int dfg_tool_parse_uint(const char *opt, const char *arg,
			unsigned long long min, unsigned long long max,
			unsigned long long *out)
{
	unsigned long long v = 0, d;
	bool big = false;	/* above @max: read on, to tell the error */
	const char *p;

	for (p = arg; *p >= '0' && *p <= '9'; p++) {
		d = (unsigned long long)(*p - '0');
		if (big || v > (max - d) / 10)
			big = true;
		else
			v = v * 10 + d;
	}
	if (p == arg || *p) {
		dfg_tool_err("%s: not a number: '%s' (digits only, %llu to %llu)",
			     opt, arg, min, max);
		return -1;
	}
	if (big || v < min) {
		dfg_tool_err("%s: '%s' is out of range (%llu to %llu)", opt,
			     arg, min, max);
		return -1;
	}
	*out = v;
	return 0;
}
