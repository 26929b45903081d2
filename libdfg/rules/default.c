// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * rules/default.c - the default rule set, rules/default.rules, built into
 * the library (so that it needs no installed file) and installed beside
 * it for reading.
 */
#include "rules_impl.h"

__asm__(".section .rodata\n"
	".global rl_default_rules\n"
	".hidden rl_default_rules\n"
	".type rl_default_rules, @object\n"
	"rl_default_rules:\n"
	".incbin \"rules/default.rules\"\n"
	".byte 0\n"
	".size rl_default_rules, . - rl_default_rules\n"
	".previous\n");
