// SPDX-License-Identifier: GPL-2.0
/* dfgctl nop: DFG_IOC_NOP over ioctl or io_uring. */
#include <stdio.h>

#include "dfgctl.h"
#include "json.h"

int cmd_nop(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "uring",	no_argument,		NULL, 'u' },
		{ "async",	required_argument,	NULL, 'a' },
		{ "park",	no_argument,		NULL, 'p' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "help",	no_argument,		NULL, 'h' },
		{ }
	};
	unsigned long long value = 0;
	__u32 flags = 0, delay_ms = 0;
	bool uring = false, json = false;
	struct json j;
	__u64 echo = 0;
	struct dfg *d;
	int c, ret;

	FOR_EACH_OPT(c, argc, argv, "ua:pjh", opts) {
		switch (c) {
		case 'u':
			uring = true;
			break;
		case 'a':
			if (!ctl_parse_u32(optarg, &delay_ms))
				return ctl_usage_error("nop: bad delay '%s'",
						       optarg);
			flags |= DFG_NOP_F_ASYNC;
			break;
		case 'p':
			flags |= DFG_NOP_F_PARK;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			return ctl_help_requested();
		default:
			return ctl_bad_option(argv);
		}
	}
	if (optind < argc && !ctl_parse_u64(argv[optind++], &value))
		return ctl_usage_error("nop: bad value '%s'", argv[optind - 1]);
	if (optind < argc)
		return ctl_usage_error("nop: unexpected argument '%s'",
				       argv[optind]);

	ret = ctl_open_device(&d, uring ? 0 : DFG_OPEN_NO_RING);
	if (ret)
		return ret;
	if (uring) {
		struct dfg_nop nop = {
			.value		= value,
			.flags		= flags,
			.delay_ms	= delay_ms,
		};

		ret = dfg_uring_cmd(d, DFG_IOC_NOP, &nop, &echo);
	} else {
		ret = dfg_nop(d, value, flags, delay_ms, &echo);
	}
	dfg_close(d);
	if (ret < 0)
		return ctl_fail_errno(uring ? "NOP (io_uring)" : "NOP (ioctl)",
				      -ret);
	if (json) {
		json_init(&j, stdout);
		json_obj_begin(&j, NULL);
		json_u64(&j, "echo", echo);
		json_obj_end(&j);
		json_finish(&j);
	} else {
		printf("echo: %llu\n", (unsigned long long)echo);
	}
	return EXIT_OK;
}
