// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink events of graphs and arenas: GRAPH_CREATE (GRAPH, NAME, PID),
 * ARENA_CREATE (GRAPH, OBJECT, PID), then at the graph's death
 * ARENA_DESTROY (GRAPH, OBJECT) and GRAPH_DESTROY (GRAPH, NAME), which
 * carry no PID (reported here as pid 0).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sys/mman.h>

#include "dfg_sys.h"
#include "dfg_evmon.h"
#include "kselftest_harness.h"

#define SEEN(a)	(1U << (a))

TEST(graph_events)
{
	struct dfg_graph_open o = {
		.size = sizeof(o),
		.mode = 0600,
	};
	struct dfg_arena_create a = { .size = 4096 };
	struct dfg_event_msg ev;
	struct dfg_evmon mon;
	int dev, g, ret;

	ret = dfg_evmon_open(&mon);
	ASSERT_EQ(0, ret) TH_LOG("netlink: %d", ret);
	dev = sys_dfg_open();
	ASSERT_LE(0, dev);
	snprintf(o.name, sizeof(o.name), "ev-%d", getpid());

	g = sys_dfg_ioctl(dev, DFG_IOC_GRAPH_CREATE, &o);
	ASSERT_LE(0, g);
	ASSERT_EQ(1, sys_dfg_ioctl(g, DFG_IOC_ARENA_CREATE, &a));

	ASSERT_TRUE(dfg_evmon_find(&mon, DFG_EV_GRAPH_CREATE, getpid(), 2000,
				    &ev));
	EXPECT_EQ(SEEN(DFG_NL_A_EVENT) | SEEN(DFG_NL_A_GRAPH) |
		  SEEN(DFG_NL_A_NAME) | SEEN(DFG_NL_A_PID), ev.attrs);
	ASSERT_TRUE(dfg_evmon_find(&mon, DFG_EV_ARENA_CREATE, getpid(), 2000,
				    &ev));
	EXPECT_EQ(SEEN(DFG_NL_A_EVENT) | SEEN(DFG_NL_A_GRAPH) |
		  SEEN(DFG_NL_A_OBJECT) | SEEN(DFG_NL_A_PID), ev.attrs);

	close(g);
	ASSERT_TRUE(dfg_evmon_find(&mon, DFG_EV_ARENA_DESTROY, 0, 2000, &ev));
	EXPECT_EQ(SEEN(DFG_NL_A_EVENT) | SEEN(DFG_NL_A_GRAPH) |
		  SEEN(DFG_NL_A_OBJECT), ev.attrs);
	ASSERT_TRUE(dfg_evmon_find(&mon, DFG_EV_GRAPH_DESTROY, 0, 2000, &ev));
	EXPECT_EQ(SEEN(DFG_NL_A_EVENT) | SEEN(DFG_NL_A_GRAPH) |
		  SEEN(DFG_NL_A_NAME), ev.attrs);

	close(dev);
	dfg_evmon_close(&mon);
}

TEST_HARNESS_MAIN
