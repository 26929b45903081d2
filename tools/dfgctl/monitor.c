// SPDX-License-Identifier: GPL-2.0
/* dfgctl monitor: the module's netlink events (libdfg <dfg/events.h>). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dfg/events.h>

#include "dfgctl.h"
#include "json.h"

/* The u32 attributes of an event, in print order. */
static const struct {
	int		attr;
	const char	*key;
	size_t		off;
} ev_u32[] = {
	{ DFG_NL_A_GRAPH,	"graph",  offsetof(struct dfg_event_msg, graph) },
	{ DFG_NL_A_OBJECT,	"object", offsetof(struct dfg_event_msg, object) },
	{ DFG_NL_A_RANK,	"rank",	  offsetof(struct dfg_event_msg, rank) },
	{ DFG_NL_A_PID,		"pid",	  offsetof(struct dfg_event_msg, pid) },
	{ DFG_NL_A_CMD,		"cmd",	  offsetof(struct dfg_event_msg, cmd) },
};

/* The feedback attributes, after those, through dfg_events_value(). */
static const struct {
	unsigned int	attr;
	const char	*key;
} ev_num[] = {
	{ DFG_NL_A_FILL,	"fill" },
	{ DFG_NL_A_CAPACITY,	"capacity" },
	{ DFG_NL_A_MARK,	"mark" },
	{ DFG_NL_A_CPU,		"cpu" },
	{ DFG_NL_A_WAIT_MS,	"wait_ms" },
	{ DFG_NL_A_MEM_AVAIL,	"mem_avail_kb" },
	{ DFG_NL_A_MEM_TOTAL,	"mem_total_kb" },
	{ DFG_NL_A_COUNT,	"count" },
	{ DFG_NL_A_RATE,	"rate" },
	{ DFG_NL_A_PERIOD_MS,	"period_ms" },
};

static __u32 ev_field(const struct dfg_event_msg *ev, size_t off)
{
	return *(const __u32 *)((const char *)ev + off);
}

/*
 * "event=graph_create graph=3 name="sort" pid=812": the attributes the
 * message carried, the name quoted as a JSON string (a graph name is
 * anyone's text); with @json, the same as one JSON object per line. @ev
 * is the last event of @evs (feedback attributes).
 */
static void print_event(const struct dfg_events *evs,
			const struct dfg_event_msg *ev, bool json)
{
	__u64 v;
	const char *name = dfg_event_name(ev->type);
	char unknown[32];
	struct json j;
	size_t i;

	if (!name) {
		snprintf(unknown, sizeof(unknown), "unknown_%u", ev->type);
		name = unknown;
	}
	if (json) {
		json_init(&j, stdout);
		json_obj_begin(&j, NULL);
		json_str(&j, "event", name);
		json_u64(&j, "type", ev->type);
		for (i = 0; i < ARRAY_SIZE(ev_u32); i++)
			if (ev->attrs & (1U << ev_u32[i].attr))
				json_u64(&j, ev_u32[i].key,
					 ev_field(ev, ev_u32[i].off));
		for (i = 0; i < ARRAY_SIZE(ev_num); i++)
			if (!dfg_events_value(evs, ev_num[i].attr, &v))
				json_u64(&j, ev_num[i].key, v);
		if (ev->attrs & (1U << DFG_NL_A_NAME))
			json_str(&j, "name", ev->name);
		json_obj_end(&j);
		json_finish(&j);
		return;
	}
	printf("event=%s", name);
	for (i = 0; i < ARRAY_SIZE(ev_u32); i++) {
		if (!(ev->attrs & (1U << ev_u32[i].attr)))
			continue;
		printf(ev_u32[i].attr == DFG_NL_A_CMD ? " %s=0x%x" : " %s=%u",
		       ev_u32[i].key, ev_field(ev, ev_u32[i].off));
	}
	for (i = 0; i < ARRAY_SIZE(ev_num); i++)
		if (!dfg_events_value(evs, ev_num[i].attr, &v))
			printf(" %s=%llu", ev_num[i].key,
			       (unsigned long long)v);
	if (ev->attrs & (1U << DFG_NL_A_NAME)) {
		fputs(" name=", stdout);
		json_quote(stdout, ev->name);
	}
	putchar('\n');
	fflush(stdout);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int cmd_monitor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count",	required_argument,	NULL, 'c' },
		{ "timeout",	required_argument,	NULL, 't' },
		{ "full",	no_argument,		NULL, 'f' },
		{ "public",	no_argument,		NULL, 'p' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "help",	no_argument,		NULL, 'h' },
		{ }
	};
	unsigned long long count, want = 0, seen = 0;
	long long deadline = 0, left;
	unsigned int flags = 0;
	struct dfg_event_msg ev;
	struct dfg_events *evs;
	double timeout = 0;
	bool json = false;
	int c, ret;
	char *end;

	FOR_EACH_OPT(c, argc, argv, "c:t:fpjh", opts) {
		switch (c) {
		case 'c':
			if (!ctl_parse_u64(optarg, &count) || !count)
				return ctl_usage_error(
					"monitor: bad count '%s'", optarg);
			want = count;
			break;
		case 't':
			errno = 0;
			timeout = strtod(optarg, &end);
			if (errno || *end || !*optarg || !(timeout > 0) ||
			    timeout > INT_MAX / 1000)
				return ctl_usage_error(
					"monitor: bad timeout '%s'", optarg);
			break;
		case 'f':
			flags |= DFG_EVENTS_FULL;
			break;
		case 'p':
			flags |= DFG_EVENTS_PUBLIC;
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
	if (optind < argc)
		return ctl_usage_error("monitor: unexpected argument '%s'",
				       argv[optind]);
	if (flags == DFG_EVENTS_ALL)
		return ctl_usage_error("monitor: --full and --public exclude each other");

	ret = dfg_events_open(&evs, flags);
	if (ret < 0)
		return ctl_fail(flags & DFG_EVENTS_FULL ?
				"join multicast group " DFG_GENL_MCGRP_EVENTS_FULL :
				"join the module's event group",
				strerror(-ret), ret == -ENOENT);
	fprintf(stderr, "listening (%s)\n", dfg_events_full(evs) ?
		DFG_GENL_MCGRP_EVENTS_FULL : DFG_GENL_MCGRP_EVENTS);
	fflush(stderr);

	if (timeout > 0)
		deadline = now_ms() + (long long)(timeout * 1000);
	ret = EXIT_OK;
	while (!want || seen < want) {
		int wait_ms = -1;

		if (deadline) {
			left = deadline - now_ms();
			if (left <= 0)
				break;
			wait_ms = (int)left;
		}
		c = dfg_events_next(evs, &ev, wait_ms);
		if (c == -ETIMEDOUT)
			break;
		if (c == -EINTR)
			continue;
		/* Dropped on a full socket buffer: say so and go on. */
		if (c == -ENOBUFS) {
			fputs("dfgctl: monitor: events lost\n", stderr);
			continue;
		}
		if (c < 0) {
			ret = ctl_fail("receive events", strerror(-c), false);
			break;
		}
		print_event(evs, &ev, json);
		seen++;
	}
	if (!ret && want && seen < want) {
		fprintf(stderr, "dfgctl: monitor: timeout after %llu of %llu events\n",
			seen, want);
		ret = EXIT_ERR;
	}
	dfg_events_close(evs);
	return ret;
}
