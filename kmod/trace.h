/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace.h - tracepoints of dfg.ko, /sys/kernel/tracing/events/dfg/.
 *
 * No objects, locks or references: events copy what they print.
 *
 *   dfg_cmd_enter	a command reaches its handler (cmd, name, path)
 *   dfg_cmd_exit	the handler returned (cmd, ret; -EIOCBQUEUED: parked)
 *   dfg_cmd_complete	a parked command completed by its event (cmd, res)
 *   dfg_cmd_cancel	a parked command canceled (cmd, pid, res)
 *   dfg_graph_create	a graph was created (id, name, uid, mode)
 *   dfg_graph_destroy	a graph died (id, name)
 *   dfg_arena_create	an arena was created (graph, id, pages)
 *   dfg_arena_destroy	an arena was freed with its graph (graph, id, pages)
 *   dfg_region_export	a region was exported (graph, id, pinned pages)
 *   dfg_region_unexport	a region was revoked and released (graph, id,
 *			pages; unpinned at once or after the last COPY)
 *   dfg_chan_create	a channel was created (graph, id, ring pages)
 *   dfg_chan_destroy	a channel died with its graph (graph, id, ring pages)
 *   dfg_chan_park	a CHAN_WAIT parked (graph, chan, role, slot, path)
 *   dfg_chan_wake	parked waits completed by their event: CHAN_WAKE or
 *			an endpoint's release (graph, chan, role woken, count)
 *   dfg_team_create	a team was created by its first join (graph, id,
 *			control pages)
 *   dfg_team_destroy	a team left its graph: last member gone, or the
 *			graph died (graph, id, control pages)
 *   dfg_team_join	a member joined (graph, team, rank, pid)
 *   dfg_team_leave	a member left in order (graph, team, rank, pid)
 *   dfg_team_broken	a member's death broke its team (graph, team, dead
 *			rank, pid of its joiner)
 *   dfg_team_wait	a TEAM_WAIT slept or parked (graph, team, offset,
 *			value, path)
 *   dfg_team_wake	a TEAM_WAKE (graph, team, offset, waits woken)
 *   dfg_sched_next	a SCHED_NEXT handed out a set (graph, set, worker
 *			tid, cpu, parked: it had waited)
 *   dfg_sched_yield	a set was given back (graph, set, reason, ns held)
 *   dfg_sched_wake	a channel made a waiting set runnable (graph, set,
 *			chan)
 *   dfg_fb_fill	a channel's fill crossed a mark (graph, chan, fill,
 *			mark, high: FILL_HIGH, else FILL_LOW)
 *   dfg_fb_stall	a set waited longer than T (graph, set, inputs:
 *			starved, else backpressured, ms waited)
 *   dfg_fb_cpu	a CPU came or goes (cpu, online)
 *   dfg_fb_mem	MemAvailable crossed its marks (KiB available, KiB of
 *			RAM, low: MEM_LOW, else MEM_OK)
 *   dfg_fb_worker_death	a set lost its worker's process (graph, set, pid)
 *   dfg_fb_summary	a graph's periodic summary was sent (graph, samples)
 *   dfg_fb_plan	a graph's runner changed its plan's generation (graph,
 *			generation, pid)
 *
 * Names are copied into a fixed array rather than __string(), whose
 * __assign_str() changed its arguments in 6.10.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dfg

#if !defined(_DFG_KMOD_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DFG_KMOD_TRACE_H

#include <linux/string.h>
#include <linux/tracepoint.h>

#include "dfg.h"

TRACE_EVENT(dfg_cmd_enter,
	    TP_PROTO(u32 cmd, const char *name, bool uring),
	    TP_ARGS(cmd, name, uring),
	    TP_STRUCT__entry(__field(u32, cmd)
			     __array(char, name, DFG_CMD_NAME_MAX)
			     __field(bool, uring)),
	    TP_fast_assign(__entry->cmd = cmd;
			   strscpy(__entry->name, name, DFG_CMD_NAME_MAX);
			   __entry->uring = uring;),
	    TP_printk("cmd=%#x name=%s path=%s", __entry->cmd, __entry->name,
		      __entry->uring ? "uring" : "ioctl")
);

TRACE_EVENT(dfg_cmd_exit,
	    TP_PROTO(u32 cmd, int ret),
	    TP_ARGS(cmd, ret),
	    TP_STRUCT__entry(__field(u32, cmd)
			     __field(int, ret)),
	    TP_fast_assign(__entry->cmd = cmd;
			   __entry->ret = ret;),
	    TP_printk("cmd=%#x ret=%d", __entry->cmd, __entry->ret)
);

TRACE_EVENT(dfg_cmd_complete,
	    TP_PROTO(u32 cmd, int res),
	    TP_ARGS(cmd, res),
	    TP_STRUCT__entry(__field(u32, cmd)
			     __field(int, res)),
	    TP_fast_assign(__entry->cmd = cmd;
			   __entry->res = res;),
	    TP_printk("cmd=%#x res=%d", __entry->cmd, __entry->res)
);

TRACE_EVENT(dfg_cmd_cancel,
	    TP_PROTO(u32 cmd, pid_t pid, int res),
	    TP_ARGS(cmd, pid, res),
	    TP_STRUCT__entry(__field(u32, cmd)
			     __field(pid_t, pid)
			     __field(int, res)),
	    TP_fast_assign(__entry->cmd = cmd;
			   __entry->pid = pid;
			   __entry->res = res;),
	    TP_printk("cmd=%#x pid=%d res=%d", __entry->cmd, __entry->pid,
		      __entry->res)
);

TRACE_EVENT(dfg_graph_create,
	    TP_PROTO(u32 id, const char *name, u32 uid, u32 mode),
	    TP_ARGS(id, name, uid, mode),
	    TP_STRUCT__entry(__field(u32, id)
			     __array(char, name, DFG_NAME_MAX)
			     __field(u32, uid)
			     __field(u32, mode)),
	    TP_fast_assign(__entry->id = id;
			   strscpy(__entry->name, name, DFG_NAME_MAX);
			   __entry->uid = uid;
			   __entry->mode = mode;),
	    TP_printk("id=%u name=%s uid=%u mode=%#o", __entry->id,
		      __entry->name, __entry->uid, __entry->mode)
);

TRACE_EVENT(dfg_graph_destroy,
	    TP_PROTO(u32 id, const char *name),
	    TP_ARGS(id, name),
	    TP_STRUCT__entry(__field(u32, id)
			     __array(char, name, DFG_NAME_MAX)),
	    TP_fast_assign(__entry->id = id;
			   strscpy(__entry->name, name, DFG_NAME_MAX);),
	    TP_printk("id=%u name=%s", __entry->id, __entry->name)
);

DECLARE_EVENT_CLASS(dfg_object_class,
		    TP_PROTO(u32 graph, u32 id, unsigned long pages),
		    TP_ARGS(graph, id, pages),
		    TP_STRUCT__entry(__field(u32, graph)
				     __field(u32, id)
				     __field(unsigned long, pages)),
		    TP_fast_assign(__entry->graph = graph;
				   __entry->id = id;
				   __entry->pages = pages;),
		    TP_printk("graph=%u id=%u pages=%lu", __entry->graph,
			      __entry->id, __entry->pages)
);

DEFINE_EVENT(dfg_object_class, dfg_arena_create,
	     TP_PROTO(u32 graph, u32 id, unsigned long pages),
	     TP_ARGS(graph, id, pages)
);

DEFINE_EVENT(dfg_object_class, dfg_arena_destroy,
	     TP_PROTO(u32 graph, u32 id, unsigned long pages),
	     TP_ARGS(graph, id, pages)
);

DEFINE_EVENT(dfg_object_class, dfg_region_export,
	     TP_PROTO(u32 graph, u32 id, unsigned long pages),
	     TP_ARGS(graph, id, pages)
);

DEFINE_EVENT(dfg_object_class, dfg_region_unexport,
	     TP_PROTO(u32 graph, u32 id, unsigned long pages),
	     TP_ARGS(graph, id, pages)
);

DEFINE_EVENT(dfg_object_class, dfg_chan_create,
	     TP_PROTO(u32 graph, u32 id, unsigned long pages),
	     TP_ARGS(graph, id, pages)
);

DEFINE_EVENT(dfg_object_class, dfg_chan_destroy,
	     TP_PROTO(u32 graph, u32 id, unsigned long pages),
	     TP_ARGS(graph, id, pages)
);

TRACE_EVENT(dfg_chan_park,
	    TP_PROTO(u32 graph, u32 chan, u32 role, u32 slot, bool uring),
	    TP_ARGS(graph, chan, role, slot, uring),
	    TP_STRUCT__entry(__field(u32, graph)
			     __field(u32, chan)
			     __field(u32, role)
			     __field(u32, slot)
			     __field(bool, uring)),
	    TP_fast_assign(__entry->graph = graph;
			   __entry->chan = chan;
			   __entry->role = role;
			   __entry->slot = slot;
			   __entry->uring = uring;),
	    TP_printk("graph=%u chan=%u role=%s slot=%u path=%s",
		      __entry->graph, __entry->chan,
		      __entry->role == DFG_CHAN_PRODUCER ? "producer" :
		      "consumer", __entry->slot,
		      __entry->uring ? "uring" : "ioctl")
);

TRACE_EVENT(dfg_chan_wake,
	    TP_PROTO(u32 graph, u32 chan, u32 role, u32 woken),
	    TP_ARGS(graph, chan, role, woken),
	    TP_STRUCT__entry(__field(u32, graph)
			     __field(u32, chan)
			     __field(u32, role)
			     __field(u32, woken)),
	    TP_fast_assign(__entry->graph = graph;
			   __entry->chan = chan;
			   __entry->role = role;
			   __entry->woken = woken;),
	    TP_printk("graph=%u chan=%u woke=%s count=%u",
		      __entry->graph, __entry->chan,
		      __entry->role == DFG_CHAN_PRODUCER ? "producers" :
		      "consumer", __entry->woken)
);

DEFINE_EVENT(dfg_object_class, dfg_team_create,
	     TP_PROTO(u32 graph, u32 id, unsigned long pages),
	     TP_ARGS(graph, id, pages)
);

DEFINE_EVENT(dfg_object_class, dfg_team_destroy,
	     TP_PROTO(u32 graph, u32 id, unsigned long pages),
	     TP_ARGS(graph, id, pages)
);

DECLARE_EVENT_CLASS(dfg_team_member_class,
		    TP_PROTO(u32 graph, u32 team, u32 rank, pid_t pid),
		    TP_ARGS(graph, team, rank, pid),
		    TP_STRUCT__entry(__field(u32, graph)
				     __field(u32, team)
				     __field(u32, rank)
				     __field(pid_t, pid)),
		    TP_fast_assign(__entry->graph = graph;
				   __entry->team = team;
				   __entry->rank = rank;
				   __entry->pid = pid;),
		    TP_printk("graph=%u team=%u rank=%u pid=%d",
			      __entry->graph, __entry->team, __entry->rank,
			      __entry->pid)
);

DEFINE_EVENT(dfg_team_member_class, dfg_team_join,
	     TP_PROTO(u32 graph, u32 team, u32 rank, pid_t pid),
	     TP_ARGS(graph, team, rank, pid)
);

DEFINE_EVENT(dfg_team_member_class, dfg_team_leave,
	     TP_PROTO(u32 graph, u32 team, u32 rank, pid_t pid),
	     TP_ARGS(graph, team, rank, pid)
);

DEFINE_EVENT(dfg_team_member_class, dfg_team_broken,
	     TP_PROTO(u32 graph, u32 team, u32 rank, pid_t pid),
	     TP_ARGS(graph, team, rank, pid)
);

TRACE_EVENT(dfg_team_wait,
	    TP_PROTO(u32 graph, u32 team, u64 offset, u32 value, bool uring),
	    TP_ARGS(graph, team, offset, value, uring),
	    TP_STRUCT__entry(__field(u32, graph)
			     __field(u32, team)
			     __field(u64, offset)
			     __field(u32, value)
			     __field(bool, uring)),
	    TP_fast_assign(__entry->graph = graph;
			   __entry->team = team;
			   __entry->offset = offset;
			   __entry->value = value;
			   __entry->uring = uring;),
	    TP_printk("graph=%u team=%u offset=%llu value=%u path=%s",
		      __entry->graph, __entry->team,
		      (unsigned long long)__entry->offset, __entry->value,
		      __entry->uring ? "uring" : "ioctl")
);

TRACE_EVENT(dfg_team_wake,
	    TP_PROTO(u32 graph, u32 team, u64 offset, u32 woken),
	    TP_ARGS(graph, team, offset, woken),
	    TP_STRUCT__entry(__field(u32, graph)
			     __field(u32, team)
			     __field(u64, offset)
			     __field(u32, woken)),
	    TP_fast_assign(__entry->graph = graph;
			   __entry->team = team;
			   __entry->offset = offset;
			   __entry->woken = woken;),
	    TP_printk("graph=%u team=%u offset=%llu count=%u",
		      __entry->graph, __entry->team,
		      (unsigned long long)__entry->offset, __entry->woken)
);

TRACE_EVENT(dfg_sched_next,
	    TP_PROTO(u32 graph, u32 set, pid_t tid, u32 cpu, bool parked),
	    TP_ARGS(graph, set, tid, cpu, parked),
	    TP_STRUCT__entry(__field(u32, graph)
			     __field(u32, set)
			     __field(pid_t, tid)
			     __field(u32, cpu)
			     __field(bool, parked)),
	    TP_fast_assign(__entry->graph = graph;
			   __entry->set = set;
			   __entry->tid = tid;
			   __entry->cpu = cpu;
			   __entry->parked = parked;),
	    TP_printk("graph=%u set=%u tid=%d cpu=%u parked=%d",
		      __entry->graph, __entry->set, __entry->tid,
		      __entry->cpu, __entry->parked)
);

TRACE_EVENT(dfg_sched_yield,
	    TP_PROTO(u32 graph, u32 set, u32 reason, u64 held_ns),
	    TP_ARGS(graph, set, reason, held_ns),
	    TP_STRUCT__entry(__field(u32, graph)
			     __field(u32, set)
			     __field(u32, reason)
			     __field(u64, held_ns)),
	    TP_fast_assign(__entry->graph = graph;
			   __entry->set = set;
			   __entry->reason = reason;
			   __entry->held_ns = held_ns;),
	    TP_printk("graph=%u set=%u reason=%u held_ns=%llu",
		      __entry->graph, __entry->set, __entry->reason,
		      (unsigned long long)__entry->held_ns)
);

TRACE_EVENT(dfg_sched_wake,
	    TP_PROTO(u32 graph, u32 set, u32 chan),
	    TP_ARGS(graph, set, chan),
	    TP_STRUCT__entry(__field(u32, graph)
			     __field(u32, set)
			     __field(u32, chan)),
	    TP_fast_assign(__entry->graph = graph;
			   __entry->set = set;
			   __entry->chan = chan;),
	    TP_printk("graph=%u set=%u chan=%u", __entry->graph,
		      __entry->set, __entry->chan)
);

TRACE_EVENT(dfg_pf_prefetch,
	    TP_PROTO(u32 nr, u32 what, u32 flags, u32 reads, u32 gated),
	    TP_ARGS(nr, what, flags, reads, gated),
	    TP_STRUCT__entry(__field(u32, nr)
			     __field(u32, what)
			     __field(u32, flags)
			     __field(u32, reads)
			     __field(u32, gated)),
	    TP_fast_assign(__entry->nr = nr;
			   __entry->what = what;
			   __entry->flags = flags;
			   __entry->reads = reads;
			   __entry->gated = gated;),
	    TP_printk("nr=%u what=%#x flags=%#x reads=%u gated=%u",
		      __entry->nr, __entry->what, __entry->flags,
		      __entry->reads, __entry->gated)
);

/* One sample of a peer's link (pf_traffic.c): EWMA rate, bytes since. */
TRACE_EVENT(dfg_pf_traffic,
	    TP_PROTO(u32 peer, int ifindex, u64 rate, u64 bytes),
	    TP_ARGS(peer, ifindex, rate, bytes),
	    TP_STRUCT__entry(__field(u32, peer)
			     __field(int, ifindex)
			     __field(u64, rate)
			     __field(u64, bytes)),
	    TP_fast_assign(__entry->peer = peer;
			   __entry->ifindex = ifindex;
			   __entry->rate = rate;
			   __entry->bytes = bytes;),
	    TP_printk("peer=%u ifindex=%d rate=%llu bytes=%llu",
		      __entry->peer, __entry->ifindex, __entry->rate,
		      __entry->bytes)
);

TRACE_EVENT(dfg_pf_read_done,
	    TP_PROTO(u32 peer, u32 len, int status),
	    TP_ARGS(peer, len, status),
	    TP_STRUCT__entry(__field(u32, peer)
			     __field(u32, len)
			     __field(int, status)),
	    TP_fast_assign(__entry->peer = peer;
			   __entry->len = len;
			   __entry->status = status;),
	    TP_printk("peer=%u len=%u status=%d", __entry->peer,
		      __entry->len, __entry->status)
);

TRACE_EVENT(dfg_fb_fill,
	    TP_PROTO(u32 graph, u32 chan, u32 fill, u32 mark, bool high),
	    TP_ARGS(graph, chan, fill, mark, high),
	    TP_STRUCT__entry(__field(u32, graph)
			     __field(u32, chan)
			     __field(u32, fill)
			     __field(u32, mark)
			     __field(bool, high)),
	    TP_fast_assign(__entry->graph = graph;
			   __entry->chan = chan;
			   __entry->fill = fill;
			   __entry->mark = mark;
			   __entry->high = high;),
	    TP_printk("graph=%u chan=%u fill=%u mark=%u %s", __entry->graph,
		      __entry->chan, __entry->fill, __entry->mark,
		      __entry->high ? "high" : "low")
);

TRACE_EVENT(dfg_fb_stall,
	    TP_PROTO(u32 graph, u32 set, bool inputs, u32 wait_ms),
	    TP_ARGS(graph, set, inputs, wait_ms),
	    TP_STRUCT__entry(__field(u32, graph)
			     __field(u32, set)
			     __field(bool, inputs)
			     __field(u32, wait_ms)),
	    TP_fast_assign(__entry->graph = graph;
			   __entry->set = set;
			   __entry->inputs = inputs;
			   __entry->wait_ms = wait_ms;),
	    TP_printk("graph=%u set=%u %s wait_ms=%u", __entry->graph,
		      __entry->set,
		      __entry->inputs ? "starved" : "backpressured",
		      __entry->wait_ms)
);

TRACE_EVENT(dfg_fb_cpu,
	    TP_PROTO(u32 cpu, bool online),
	    TP_ARGS(cpu, online),
	    TP_STRUCT__entry(__field(u32, cpu)
			     __field(bool, online)),
	    TP_fast_assign(__entry->cpu = cpu;
			   __entry->online = online;),
	    TP_printk("cpu=%u %s", __entry->cpu,
		      __entry->online ? "online" : "offline")
);

TRACE_EVENT(dfg_fb_mem,
	    TP_PROTO(u64 avail_kb, u64 total_kb, bool low),
	    TP_ARGS(avail_kb, total_kb, low),
	    TP_STRUCT__entry(__field(u64, avail_kb)
			     __field(u64, total_kb)
			     __field(bool, low)),
	    TP_fast_assign(__entry->avail_kb = avail_kb;
			   __entry->total_kb = total_kb;
			   __entry->low = low;),
	    TP_printk("avail_kb=%llu total_kb=%llu %s",
		      (unsigned long long)__entry->avail_kb,
		      (unsigned long long)__entry->total_kb,
		      __entry->low ? "low" : "ok")
);

TRACE_EVENT(dfg_fb_worker_death,
	    TP_PROTO(u32 graph, u32 set, u32 pid),
	    TP_ARGS(graph, set, pid),
	    TP_STRUCT__entry(__field(u32, graph)
			     __field(u32, set)
			     __field(u32, pid)),
	    TP_fast_assign(__entry->graph = graph;
			   __entry->set = set;
			   __entry->pid = pid;),
	    TP_printk("graph=%u set=%u pid=%u", __entry->graph,
		      __entry->set, __entry->pid)
);

TRACE_EVENT(dfg_fb_summary,
	    TP_PROTO(u32 graph, u64 samples),
	    TP_ARGS(graph, samples),
	    TP_STRUCT__entry(__field(u32, graph)
			     __field(u64, samples)),
	    TP_fast_assign(__entry->graph = graph;
			   __entry->samples = samples;),
	    TP_printk("graph=%u samples=%llu", __entry->graph,
		      (unsigned long long)__entry->samples)
);

TRACE_EVENT(dfg_fb_plan,
	    TP_PROTO(u32 graph, u64 generation, u32 pid),
	    TP_ARGS(graph, generation, pid),
	    TP_STRUCT__entry(__field(u32, graph)
			     __field(u64, generation)
			     __field(u32, pid)),
	    TP_fast_assign(__entry->graph = graph;
			   __entry->generation = generation;
			   __entry->pid = pid;),
	    TP_printk("graph=%u generation=%llu pid=%u", __entry->graph,
		      (unsigned long long)__entry->generation, __entry->pid)
);

#endif /* _DFG_KMOD_TRACE_H */

/* define_trace.h includes this file again, found through -I kmod. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
