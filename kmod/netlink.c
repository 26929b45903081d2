// SPDX-License-Identifier: GPL-2.0
/*
 * netlink.c - generic netlink family "dfg": GET_INFO and the two event
 * multicast groups, "events_full" and "events".
 *
 * Objects: dfg_genl_family, registered at init and unregistered at exit;
 * its doit handlers run under genl_lock (no parallel_ops), which
 * genl_unregister_family() also takes, so none runs after exit. Messages
 * are built per call and handed to netlink, which owns them from
 * genlmsg_reply()/genlmsg_multicast() on. No lock or reference of our own.
 * The family lives in init_net only; events go to init_net listeners.
 *
 * Who hears what: graph names and the pids of the processes behind every
 * graph, team and channel are other users' business. "events_full"
 * carries every attribute and only CAP_NET_ADMIN may join it, which genl
 * checks at bind time (GENL_MCAST_CAP_NET_ADMIN, in 6.1.y since 6.1.66).
 * "events" is open to anyone and carries the same events without NAME
 * and PID, unless public_event_details is set.
 */
#include <linux/moduleparam.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "dfg.h"

#ifndef GENL_MCAST_CAP_NET_ADMIN
#error "dfg.ko needs per-group multicast capabilities (GENL_MCAST_CAP_NET_ADMIN)"
#endif

static bool public_event_details;
module_param(public_event_details, bool, 0644);
MODULE_PARM_DESC(public_event_details,
		 "Also send graph names and pids to the unprivileged group");

/* Indexes in dfg_nl_mcgrps[]. */
enum {
	DFG_NL_GRP_EVENTS,
	DFG_NL_GRP_EVENTS_FULL,
};

static const struct nla_policy dfg_nl_policy[DFG_NL_A_MAX + 1] = {
	[DFG_NL_A_API_VERSION]	= { .type = NLA_U32 },
	[DFG_NL_A_FEATURES]	= { .type = NLA_U64 },
	[DFG_NL_A_VERSION]	= { .type = NLA_NUL_STRING },
	[DFG_NL_A_CLIENTS]	= { .type = NLA_U32 },
	[DFG_NL_A_PARKED]	= { .type = NLA_U32 },
	[DFG_NL_A_EVENT]	= { .type = NLA_U32 },
	[DFG_NL_A_PID]		= { .type = NLA_U32 },
	[DFG_NL_A_CMD]		= { .type = NLA_U32 },
	[DFG_NL_A_GRAPH]	= { .type = NLA_U32 },
	[DFG_NL_A_OBJECT]	= { .type = NLA_U32 },
	[DFG_NL_A_NAME]		= { .type = NLA_NUL_STRING,
				    .len = DFG_NAME_MAX - 1 },
	[DFG_NL_A_RANK]		= { .type = NLA_U32 },
	[DFG_NL_A_FILL]		= { .type = NLA_U32 },
	[DFG_NL_A_CAPACITY]	= { .type = NLA_U32 },
	[DFG_NL_A_MARK]		= { .type = NLA_U32 },
	[DFG_NL_A_CPU]		= { .type = NLA_U32 },
	[DFG_NL_A_WAIT_MS]	= { .type = NLA_U32 },
	[DFG_NL_A_MEM_AVAIL]	= { .type = NLA_U64 },
	[DFG_NL_A_MEM_TOTAL]	= { .type = NLA_U64 },
	[DFG_NL_A_COUNT]	= { .type = NLA_U64 },
	[DFG_NL_A_RATE]		= { .type = NLA_U64 },
	[DFG_NL_A_PERIOD_MS]	= { .type = NLA_U32 },
};

static struct genl_family dfg_genl_family;

static int dfg_nl_get_info(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	hdr = genlmsg_put_reply(msg, info, &dfg_genl_family, 0,
				DFG_NL_CMD_GET_INFO);
	if (!hdr)
		goto out_free_msg;

	if (nla_put_u32(msg, DFG_NL_A_API_VERSION, DFG_API_VERSION) ||
	    nla_put_u64_64bit(msg, DFG_NL_A_FEATURES, DFG_F_IMPLEMENTED,
			      DFG_NL_A_PAD) ||
	    nla_put_string(msg, DFG_NL_A_VERSION, DFG_VERSION) ||
	    nla_put_u32(msg, DFG_NL_A_CLIENTS, atomic_read(&dfg_nr_clients)) ||
	    nla_put_u32(msg, DFG_NL_A_PARKED, atomic_read(&dfg_nr_parked)))
		goto out_cancel_msg;

	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

out_cancel_msg:
	genlmsg_cancel(msg, hdr);
out_free_msg:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static const struct genl_small_ops dfg_nl_ops[] = {
	{
		.cmd	= DFG_NL_CMD_GET_INFO,
		.doit	= dfg_nl_get_info,
	},
};

static const struct genl_multicast_group dfg_nl_mcgrps[] = {
	[DFG_NL_GRP_EVENTS] = { .name = DFG_GENL_MCGRP_EVENTS },
	[DFG_NL_GRP_EVENTS_FULL] = {
		.name	= DFG_GENL_MCGRP_EVENTS_FULL,
		.flags	= GENL_MCAST_CAP_NET_ADMIN,
	},
};

static struct genl_family dfg_genl_family __ro_after_init = {
	.name		= DFG_GENL_NAME,
	.version	= DFG_GENL_VERSION,
	.maxattr	= DFG_NL_A_MAX,
	.policy		= dfg_nl_policy,
	.module		= THIS_MODULE,
	.small_ops	= dfg_nl_ops,
	.n_small_ops	= ARRAY_SIZE(dfg_nl_ops),
	.resv_start_op	= DFG_NL_CMD_MAX + 1,
	.mcgrps		= dfg_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(dfg_nl_mcgrps),
};

/* The feedback attributes of @ev (those in ->attrs): 0 or -EMSGSIZE. */
static int dfg_nl_put_fb(struct sk_buff *msg, const struct dfg_nl_ev *ev)
{
	const struct {
		int	attr;
		bool	wide;
		u64	val;
	} v[] = {
		{ DFG_NL_A_FILL, false, ev->fill },
		{ DFG_NL_A_CAPACITY, false, ev->capacity },
		{ DFG_NL_A_MARK, false, ev->mark },
		{ DFG_NL_A_CPU, false, ev->cpu },
		{ DFG_NL_A_WAIT_MS, false, ev->wait_ms },
		{ DFG_NL_A_MEM_AVAIL, true, ev->mem_avail },
		{ DFG_NL_A_MEM_TOTAL, true, ev->mem_total },
		{ DFG_NL_A_COUNT, true, ev->count },
		{ DFG_NL_A_RATE, true, ev->rate },
		{ DFG_NL_A_PERIOD_MS, false, ev->period_ms },
	};
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(v); i++) {
		if (!(ev->attrs & BIT(v[i].attr)))
			continue;
		if (v[i].wide)
			ret = nla_put_u64_64bit(msg, v[i].attr, v[i].val,
						DFG_NL_A_PAD);
		else
			ret = nla_put_u32(msg, v[i].attr, v[i].val);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Sends @ev to group @grp, with NAME and PID only when @details. Every
 * attribute but EVENT is optional and left out when zero (or NULL): graph
 * and object ids start at 1, and a PID of 0 names no process; RANK, where
 * 0 is a rank, is left out when negative; the feedback attributes go when
 * their bit is in @ev->attrs. A failure to allocate or deliver is dropped
 * (see dfg_nl_emit()).
 */
static void dfg_nl_send(const struct dfg_nl_ev *ev, unsigned int grp,
			bool details)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(12 * nla_total_size(sizeof(u32)) +
			  4 * nla_total_size_64bit(sizeof(u64)) +
			  nla_total_size(DFG_NAME_MAX), GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &dfg_genl_family, 0, DFG_NL_CMD_EVENT);
	if (!hdr)
		goto out_free_msg;
	if (nla_put_u32(msg, DFG_NL_A_EVENT, ev->event) ||
	    (details && ev->pid && nla_put_u32(msg, DFG_NL_A_PID, ev->pid)) ||
	    (ev->cmd && nla_put_u32(msg, DFG_NL_A_CMD, ev->cmd)) ||
	    (ev->graph && nla_put_u32(msg, DFG_NL_A_GRAPH, ev->graph)) ||
	    (ev->object && nla_put_u32(msg, DFG_NL_A_OBJECT, ev->object)) ||
	    (details && ev->name &&
	     nla_put_string(msg, DFG_NL_A_NAME, ev->name)) ||
	    (ev->rank >= 0 && nla_put_u32(msg, DFG_NL_A_RANK, ev->rank)) ||
	    dfg_nl_put_fb(msg, ev))
		goto out_free_msg;
	genlmsg_end(msg, hdr);

	/* -ESRCH when the last listener just left: nothing to report. */
	genlmsg_multicast(&dfg_genl_family, msg, 0, grp, GFP_KERNEL);
	return;

out_free_msg:
	nlmsg_free(msg);
}

/*
 * Sends one DFG_NL_CMD_EVENT to each group that has listeners. Best
 * effort: a failure never fails the operation that reports it. Process
 * context (GFP_KERNEL).
 */
void dfg_nl_emit(const struct dfg_nl_ev *ev)
{
	might_sleep();
	if (genl_has_listeners(&dfg_genl_family, &init_net,
			       DFG_NL_GRP_EVENTS_FULL))
		dfg_nl_send(ev, DFG_NL_GRP_EVENTS_FULL, true);
	if (genl_has_listeners(&dfg_genl_family, &init_net,
			       DFG_NL_GRP_EVENTS))
		dfg_nl_send(ev, DFG_NL_GRP_EVENTS,
			    READ_ONCE(public_event_details));
}

/**
 * dfg_nl_event() - tell the event groups that something happened
 * @event: DFG_EV_*
 * @pid: tgid of the process concerned
 * @cmd: command value concerned, 0 when the event has none
 *
 * Best effort, see dfg_nl_emit().
 *
 * Context: process context (allocates with GFP_KERNEL).
 */
void dfg_nl_event(u32 event, u32 pid, u32 cmd)
{
	struct dfg_nl_ev ev = {
		.event = event, .pid = pid, .cmd = cmd, .rank = -1,
	};

	dfg_nl_emit(&ev);
}

/**
 * dfg_nl_graph_event() - tell the event groups about a graph or object
 * @event: DFG_EV_GRAPH_*, DFG_EV_ARENA_*, DFG_EV_REGION_*, DFG_EV_CHAN_*
 * @pid: tgid of the process concerned; 0 (no PID attribute) for deaths
 * @graph: graph id
 * @object: object id in the graph, 0 for graph events
 * @name: graph name, NULL for object events
 *
 * Best effort, see dfg_nl_emit().
 *
 * Context: process context (allocates with GFP_KERNEL).
 */
void dfg_nl_graph_event(u32 event, u32 pid, u32 graph, u32 object,
			const char *name)
{
	struct dfg_nl_ev ev = {
		.event = event, .pid = pid, .graph = graph, .object = object,
		.name = name, .rank = -1,
	};

	dfg_nl_emit(&ev);
}

/**
 * dfg_nl_team_event() - tell the event groups about a team member
 * @event: DFG_EV_TEAM_JOIN, _LEAVE, _BROKEN
 * @pid: tgid of the process concerned (the joiner, leaver or the dead
 *	member's joiner)
 * @graph: graph id
 * @team: the team's object id
 * @rank: the member's rank
 *
 * Best effort, see dfg_nl_emit().
 *
 * Context: process context (allocates with GFP_KERNEL).
 */
void dfg_nl_team_event(u32 event, u32 pid, u32 graph, u32 team, u32 rank)
{
	struct dfg_nl_ev ev = {
		.event = event, .pid = pid, .graph = graph, .object = team,
		.rank = rank,
	};

	dfg_nl_emit(&ev);
}

int dfg_nl_init(void)
{
	return genl_register_family(&dfg_genl_family);
}

void dfg_nl_exit(void)
{
	genl_unregister_family(&dfg_genl_family);
}
