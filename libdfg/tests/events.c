// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: <dfg/events.h> without the module. Every event of
 * <linux/dfg.h> has a name (DFG_EVENT_NAMES beside the enum), and the
 * calls reject bad arguments and a missing family with -errno, errno
 * untouched.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <dfg/events.h>

#include "kselftest_harness.h"

#define ERRNO_MARK	12345

/* An event added to the enum without its line in DFG_EVENT_NAMES fails. */
TEST(every_event_has_a_unique_name)
{
	__u32 t, u;

	EXPECT_EQ(NULL, dfg_event_name(DFG_EV_UNSPEC));
	for (t = 1; t < __DFG_EV_MAX; t++) {
		const char *n = dfg_event_name(t);
		const char *p;

		ASSERT_NE(NULL, n) TH_LOG("event %u has no name", t);
		ASSERT_NE('\0', n[0]);
		for (p = n; *p; p++)
			ASSERT_TRUE(islower((unsigned char)*p) || *p == '_')
				TH_LOG("event %u: '%s'", t, n);
		for (u = 1; u < t; u++)
			ASSERT_STRNE(n, dfg_event_name(u));
	}
	EXPECT_EQ(NULL, dfg_event_name(__DFG_EV_MAX));
	EXPECT_EQ(NULL, dfg_event_name(~0U));
	/* Spot checks that names follow the enum's order. */
	EXPECT_STREQ("client_open", dfg_event_name(DFG_EV_CLIENT_OPEN));
	EXPECT_STREQ("graph_create", dfg_event_name(DFG_EV_GRAPH_CREATE));
	EXPECT_STREQ("set_failed", dfg_event_name(DFG_EV_SET_FAILED));
	EXPECT_STREQ("chan_fill_high", dfg_event_name(DFG_EV_CHAN_FILL_HIGH));
	EXPECT_STREQ("graph_sample", dfg_event_name(DFG_EV_GRAPH_SAMPLE));
}

TEST(bad_arguments_einval)
{
	struct dfg_events *evs = (void *)1;
	struct dfg_event_msg ev;
	__u64 v = 7;

	errno = ERRNO_MARK;
	EXPECT_EQ(-EINVAL, dfg_events_open(NULL, 0));
	EXPECT_EQ(-EINVAL, dfg_events_open(&evs, DFG_EVENTS_ALL));
	EXPECT_EQ(-EINVAL, dfg_events_open(&evs, 1U << 7));
	EXPECT_EQ((void *)1, evs);
	EXPECT_EQ(-EINVAL, dfg_events_fd(NULL));
	EXPECT_EQ(-EINVAL, dfg_events_full(NULL));
	EXPECT_EQ(-EINVAL, dfg_events_next(NULL, &ev, 0));
	EXPECT_EQ(-EINVAL, dfg_module_info(NULL));
	EXPECT_EQ(-EINVAL, dfg_events_value(NULL, DFG_NL_A_FILL, &v));
	EXPECT_EQ(7, v);
	dfg_events_close(NULL);
	EXPECT_EQ(ERRNO_MARK, errno);
}

/* No module, no family "dfg": -ENOENT from both ends of the API. */
TEST(no_module_enoent)
{
	struct dfg_events *evs = NULL;
	struct dfg_module_info mi;

	if (!access("/sys/kernel/dfg", F_OK))
		SKIP(return, "the dfg module is loaded here");
	errno = ERRNO_MARK;
	EXPECT_EQ(-ENOENT, dfg_events_open(&evs, 0));
	EXPECT_EQ(-ENOENT, dfg_events_open(&evs, DFG_EVENTS_FULL));
	EXPECT_EQ(-ENOENT, dfg_events_open(&evs, DFG_EVENTS_PUBLIC));
	EXPECT_EQ(NULL, evs);
	EXPECT_EQ(-ENOENT, dfg_module_info(&mi));
	EXPECT_EQ(ERRNO_MARK, errno);
}

TEST_HARNESS_MAIN
