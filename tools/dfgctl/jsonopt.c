// SPDX-License-Identifier: GPL-2.0
/* dfgctl: option parsing of the subcommands that take only --json. */
#include "dfgctl.h"

int ctl_json_opts(int argc, char **argv, const char *cmd, bool *json)
{
	static const struct option opts[] = {
		{ "json",	no_argument,	NULL, 'j' },
		{ "help",	no_argument,	NULL, 'h' },
		{ }
	};
	int c;

	*json = false;
	FOR_EACH_OPT(c, argc, argv, "jh", opts) {
		switch (c) {
		case 'j':
			*json = true;
			break;
		case 'h':
			ctl_help_requested();
			return -1;
		default:
			return ctl_bad_option(argv);
		}
	}
	if (optind < argc)
		return ctl_usage_error("%s: unexpected argument '%s'", cmd,
				       argv[optind]);
	return EXIT_OK;
}
