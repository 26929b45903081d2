/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg: the module's generic netlink family "dfg" (libnl-genl-3 inside,
 * none of it in this interface): its events and its GET_INFO.
 *
 * A struct dfg_events handle is a netlink socket subscribed to one of the
 * family's event groups (see <linux/dfg.h>): "events_full", every
 * attribute, for subscribers with CAP_NET_ADMIN; or "events", which
 * anyone may join, where the module leaves out graph names and pids
 * (unless loaded with public_event_details=1). Events from before
 * dfg_events_open() are not seen.
 *
 * Errors are negative errno values; errno is left untouched. A handle is
 * not locked: use it from one thread at a time.
 */
#ifndef _DFG_EVENTS_H
#define _DFG_EVENTS_H

#include <linux/dfg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque: the socket and what it has received. */
struct dfg_events;

/* dfg_events_open() flags; neither: full when allowed, else public. */
#define DFG_EVENTS_FULL		(1U << 0)	/* "events_full" or -EPERM */
#define DFG_EVENTS_PUBLIC	(1U << 1)	/* "events", even when root */
#define DFG_EVENTS_ALL		(DFG_EVENTS_FULL | DFG_EVENTS_PUBLIC)

/*
 * struct dfg_event_msg - one event
 * @type:	DFG_EV_*; dfg_event_name() names it
 * @attrs:	bit (1U << DFG_NL_A_x) for each attribute the message
 *		carried; a field whose bit is clear is 0 ("" for @name)
 * @pid:	DFG_NL_A_PID: thread-group id (initial pid namespace)
 * @cmd:	DFG_NL_A_CMD: command value
 * @graph:	DFG_NL_A_GRAPH: graph id
 * @object:	DFG_NL_A_OBJECT: object id in the graph
 * @rank:	DFG_NL_A_RANK: team rank
 * @name:	DFG_NL_A_NAME: graph name, NUL-terminated
 */
struct dfg_event_msg {
	__u32	type;
	__u32	attrs;
	__u32	pid;
	__u32	cmd;
	__u32	graph;
	__u32	object;
	__u32	rank;
	char	name[DFG_NAME_MAX];
};

/**
 * dfg_events_open() - subscribe to the module's events
 * @evsp:	out: the handle, set only on success
 * @flags:	DFG_EVENTS_FULL, DFG_EVENTS_PUBLIC or 0
 *
 * Returns 0 or -errno: -EINVAL (@evsp NULL, unknown or both flags),
 * -ENOENT (no family "dfg": the module is not loaded), -EPERM
 * (DFG_EVENTS_FULL without CAP_NET_ADMIN), -ENOMEM, or an error of
 * socket(2), bind(2) or setsockopt(2).
 */
int dfg_events_open(struct dfg_events **evsp, unsigned int flags);

/**
 * dfg_events_close() - unsubscribe and free the handle
 * @evs:	handle, or NULL (nothing happens)
 */
void dfg_events_close(struct dfg_events *evs);

/**
 * dfg_events_fd() - descriptor to poll(2) for POLLIN
 * @evs:	handle
 *
 * Readable when a message is queued; dfg_events_next() with a timeout of
 * 0 then takes it without blocking. Returns the descriptor or -EINVAL.
 */
int dfg_events_fd(const struct dfg_events *evs);

/**
 * dfg_events_full() - which group the handle joined
 * @evs:	handle
 *
 * Returns 1 for "events_full", 0 for "events", -EINVAL for NULL.
 */
int dfg_events_full(const struct dfg_events *evs);

/**
 * dfg_events_next() - the next event
 * @evs:	handle
 * @ev:		out: the event
 * @timeout_ms:	how long to wait: -1 without limit, 0 not at all
 *
 * Returns 0 with @ev filled, or -errno: -EINVAL (NULL argument,
 * @timeout_ms below -1), -EAGAIN (@timeout_ms 0 and nothing queued),
 * -ETIMEDOUT, -EINTR (a signal came while waiting), -ENOBUFS (events
 * were lost, the socket's buffer was full; the handle stays usable and
 * the next call returns the events that follow), or an error of recv(2).
 */
int dfg_events_next(struct dfg_events *evs, struct dfg_event_msg *ev,
		    int timeout_ms);

/**
 * dfg_events_value() - a numeric attribute of the last event
 * @evs:	handle
 * @attr:	DFG_NL_A_x of a number: PID, CMD, GRAPH, OBJECT, RANK, and
 *		the feedback attributes FILL, CAPACITY, MARK, CPU, WAIT_MS,
 *		MEM_AVAIL, MEM_TOTAL, COUNT, RATE, PERIOD_MS
 * @val:	out: its value
 *
 * The event is the one dfg_events_next() returned last. Returns 0, or
 * -errno: -EINVAL (NULL argument, @attr not a number this libdfg knows),
 * -ENOENT (that event did not carry @attr, or no event was returned yet).
 */
int dfg_events_value(const struct dfg_events *evs, unsigned int attr,
		     __u64 *val);

/**
 * dfg_event_name() - an event's name
 * @type:	DFG_EV_*
 *
 * Returns "graph_create" and so on (<linux/dfg.h>'s DFG_EVENT_NAMES), or
 * NULL for a value this libdfg does not know.
 */
const char *dfg_event_name(__u32 type);

/*
 * struct dfg_module_info - the family's GET_INFO reply
 * @attrs:	bit (1U << DFG_NL_A_x) for each attribute the reply carried
 * @api_version: DFG_NL_A_API_VERSION
 * @features:	DFG_NL_A_FEATURES (DFG_F_*)
 * @clients:	DFG_NL_A_CLIENTS: open files of the device
 * @parked:	DFG_NL_A_PARKED: commands parked now
 * @version:	DFG_NL_A_VERSION, NUL-terminated
 */
struct dfg_module_info {
	__u32	attrs;
	__u32	api_version;
	__u64	features;
	__u32	clients;
	__u32	parked;
	char	version[64];
};

/**
 * dfg_module_info() - ask the module about itself over generic netlink
 * @info:	out: the reply
 *
 * Needs no access to the device. Returns 0 or -errno: -EINVAL (@info
 * NULL), -ENOENT (the module is not loaded), -ETIMEDOUT (no reply within
 * 5 s), -EBADMSG (a reply without API_VERSION, FEATURES or VERSION), an
 * error the module answered with, -ENOMEM, or an error of the socket.
 */
int dfg_module_info(struct dfg_module_info *info);

#ifdef __cplusplus
}
#endif

#endif /* _DFG_EVENTS_H */
