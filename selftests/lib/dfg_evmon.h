/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dfg_evmon.h - the module's netlink events for the selftests, through
 * libdfg's <dfg/events.h> (link $(BUILD)/lib/libdfg.a and libnl-genl-3).
 *
 * struct dfg_evmon subscribes (as dfg_events_open(…, 0): root gets
 * "events_full") and keeps what arrives, so that a test can look for an
 * event and count the ones it must not have seen. Functions return 0 or
 * -errno, never assert.
 */
#ifndef DFG_EVMON_H
#define DFG_EVMON_H

#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <dfg/events.h>

#define DFG_EVMON_MAX	256

/* A subscription and the events received, oldest first. */
struct dfg_evmon {
	struct dfg_events	*evs;
	int			nr;
	bool			overflow;	/* lost: socket or list full */
	struct dfg_event_msg	ev[DFG_EVMON_MAX];
};

static inline int dfg_evmon_open(struct dfg_evmon *mon)
{
	memset(mon, 0, sizeof(*mon));
	return dfg_events_open(&mon->evs, 0);
}

static inline void dfg_evmon_close(struct dfg_evmon *mon)
{
	dfg_events_close(mon->evs);
	mon->evs = NULL;
}

/* Waits up to @timeout_ms for one event and keeps it; 0 or -errno. */
static inline int dfg_evmon_take(struct dfg_evmon *mon, int timeout_ms)
{
	struct dfg_event_msg ev;
	int ret;

	ret = dfg_events_next(mon->evs, &ev, timeout_ms);
	if (ret == -ENOBUFS)
		mon->overflow = true;
	if (ret)
		return ret == -ENOBUFS ? 0 : ret;
	if (mon->nr >= DFG_EVMON_MAX)
		mon->overflow = true;
	else
		mon->ev[mon->nr++] = ev;
	return 0;
}

/*
 * Keeps what arrives until no event came for @timeout_ms (0: what is
 * queued now).
 */
static inline void dfg_evmon_poll(struct dfg_evmon *mon, int timeout_ms)
{
	while (!dfg_evmon_take(mon, timeout_ms))
		;
}

static inline long long dfg_evmon_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * Finds (receiving for up to @timeout_ms) an event @type from @pid;
 * copies it to @out and removes it from the list. True if found.
 */
static inline bool dfg_evmon_find(struct dfg_evmon *mon, __u32 type,
				  __u32 pid, int timeout_ms,
				  struct dfg_event_msg *out)
{
	long long deadline = dfg_evmon_now_ms() + timeout_ms;
	int i, left;

	for (;;) {
		dfg_evmon_poll(mon, 0);
		for (i = 0; i < mon->nr; i++) {
			if (mon->ev[i].type != type || mon->ev[i].pid != pid)
				continue;
			*out = mon->ev[i];
			memmove(&mon->ev[i], &mon->ev[i + 1],
				(mon->nr - i - 1) * sizeof(mon->ev[0]));
			mon->nr--;
			return true;
		}
		left = (int)(deadline - dfg_evmon_now_ms());
		if (left <= 0)
			return false;
		dfg_evmon_take(mon, left);
	}
}

/* Number of received events @type from @pid still in the list. */
static inline int dfg_evmon_count(struct dfg_evmon *mon, __u32 type,
				  __u32 pid)
{
	int i, n = 0;

	for (i = 0; i < mon->nr; i++)
		if (mon->ev[i].type == type && mon->ev[i].pid == pid)
			n++;
	return n;
}

#endif /* DFG_EVMON_H */
