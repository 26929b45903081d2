/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dfg_nl.h - generic netlink helpers for the selftests (libnl-genl-3).
 *
 * dfg_nl_get_info() sends DFG_NL_CMD_GET_INFO and parses the reply;
 * struct dfg_nl_mon subscribes to the "events" group of family "dfg" and
 * collects DFG_NL_CMD_EVENT messages. Functions return 0 or a negative
 * libnl error (NLE_*; nl_geterror() names it), never assert.
 */
#ifndef DFG_NL_H
#define DFG_NL_H

#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/family.h>

#include <linux/dfg.h>

/* Reply of DFG_NL_CMD_GET_INFO; @seen has bit (1 << DFG_NL_A_x) per attr. */
struct dfg_nl_info {
	__u32	seen;
	__u32	api_version;
	__u64	features;
	char	version[64];
	__u32	clients;
	__u32	parked;
};

struct dfg_nl_event {
	__u32	seen;		/* bit (1 << DFG_NL_A_x) per attr present */
	__u32	event;
	__u32	pid;
	__u32	cmd;
	__u32	graph;
	__u32	object;
	__u32	rank;
};

#define DFG_NL_MAX_EVENTS	256

/* A socket subscribed to the events group, and what it has received. */
struct dfg_nl_mon {
	struct nl_sock		*sk;
	int			nr;
	bool			overflow;
	struct dfg_nl_event	ev[DFG_NL_MAX_EVENTS];
};

/* Connects a generic netlink socket with a receive timeout of @timeout_ms. */
static inline int dfg_nl_connect(struct nl_sock **skp, int *family,
				 int timeout_ms)
{
	struct timeval tv = {
		.tv_sec = timeout_ms / 1000,
		.tv_usec = (timeout_ms % 1000) * 1000,
	};
	struct nl_sock *sk = nl_socket_alloc();
	int ret;

	if (!sk)
		return -NLE_NOMEM;
	ret = genl_connect(sk);
	if (ret < 0)
		goto out_free;
	setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVTIMEO, &tv,
		   sizeof(tv));
	ret = genl_ctrl_resolve(sk, DFG_GENL_NAME);
	if (ret < 0)
		goto out_free;
	*family = ret;
	*skp = sk;
	return 0;
out_free:
	nl_socket_free(sk);
	return ret;
}

static inline int dfg_nl_info_cb(struct nl_msg *msg, void *arg)
{
	struct dfg_nl_info *info = arg;
	struct nlattr *tb[DFG_NL_A_MAX + 1];
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh = nlmsg_data(nlh);
	int i;

	if (gh->cmd != DFG_NL_CMD_GET_INFO)
		return NL_SKIP;
	if (genlmsg_parse(nlh, 0, tb, DFG_NL_A_MAX, NULL) < 0)
		return NL_SKIP;
	for (i = 0; i <= DFG_NL_A_MAX; i++)
		if (tb[i])
			info->seen |= 1U << i;
	if (tb[DFG_NL_A_API_VERSION])
		info->api_version = nla_get_u32(tb[DFG_NL_A_API_VERSION]);
	if (tb[DFG_NL_A_FEATURES])
		info->features = nla_get_u64(tb[DFG_NL_A_FEATURES]);
	if (tb[DFG_NL_A_VERSION])
		nla_strlcpy(info->version, tb[DFG_NL_A_VERSION],
			    sizeof(info->version));
	if (tb[DFG_NL_A_CLIENTS])
		info->clients = nla_get_u32(tb[DFG_NL_A_CLIENTS]);
	if (tb[DFG_NL_A_PARKED])
		info->parked = nla_get_u32(tb[DFG_NL_A_PARKED]);
	return NL_OK;
}

static inline int dfg_nl_ack_cb(struct nl_msg *msg, void *arg)
{
	int *done = arg;

	(void)msg;
	*done = 0;
	return NL_STOP;
}

static inline int dfg_nl_err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e,
				void *arg)
{
	int *done = arg;

	(void)nla;
	*done = e->error ? e->error : 0;	/* -errno from the kernel */
	return NL_STOP;
}

/*
 * DFG_NL_CMD_GET_INFO. Returns 0, a negative libnl error, or (when the
 * kernel answers with an error) -NLE_FAILURE with *@kerr = its -errno.
 */
static inline int dfg_nl_get_info(struct dfg_nl_info *info, int *kerr)
{
	struct nl_sock *sk;
	struct nl_msg *msg;
	struct nl_cb *cb;
	int family, ret, done = 1;

	memset(info, 0, sizeof(*info));
	*kerr = 0;
	ret = dfg_nl_connect(&sk, &family, 5000);
	if (ret)
		return ret;
	ret = -NLE_NOMEM;
	msg = nlmsg_alloc();
	if (!msg)
		goto out_sk;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
			 DFG_NL_CMD_GET_INFO, DFG_GENL_VERSION))
		goto out_msg;
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		goto out_msg;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, dfg_nl_info_cb, info);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, dfg_nl_ack_cb, &done);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, dfg_nl_ack_cb, &done);
	nl_cb_err(cb, NL_CB_CUSTOM, dfg_nl_err_cb, &done);
	ret = nl_send_auto(sk, msg);
	if (ret < 0)
		goto out_cb;
	ret = 0;
	while (done > 0 && ret >= 0)
		ret = nl_recvmsgs(sk, cb);
	if (ret >= 0 && done < 0) {
		*kerr = done;
		ret = -NLE_FAILURE;
	} else if (ret > 0) {
		ret = 0;
	}
out_cb:
	nl_cb_put(cb);
out_msg:
	nlmsg_free(msg);
out_sk:
	nl_socket_free(sk);
	return ret;
}

static inline int dfg_nl_event_cb(struct nl_msg *msg, void *arg)
{
	struct dfg_nl_mon *mon = arg;
	struct nlattr *tb[DFG_NL_A_MAX + 1];
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct dfg_nl_event *ev;
	int i;

	if (gh->cmd != DFG_NL_CMD_EVENT)
		return NL_SKIP;
	if (genlmsg_parse(nlh, 0, tb, DFG_NL_A_MAX, NULL) < 0)
		return NL_SKIP;
	if (mon->nr >= DFG_NL_MAX_EVENTS) {
		mon->overflow = true;
		return NL_OK;
	}
	ev = &mon->ev[mon->nr++];
	memset(ev, 0, sizeof(*ev));
	for (i = 0; i <= DFG_NL_A_MAX; i++)
		if (tb[i])
			ev->seen |= 1U << i;
	if (tb[DFG_NL_A_EVENT])
		ev->event = nla_get_u32(tb[DFG_NL_A_EVENT]);
	if (tb[DFG_NL_A_PID])
		ev->pid = nla_get_u32(tb[DFG_NL_A_PID]);
	if (tb[DFG_NL_A_CMD])
		ev->cmd = nla_get_u32(tb[DFG_NL_A_CMD]);
	if (tb[DFG_NL_A_GRAPH])
		ev->graph = nla_get_u32(tb[DFG_NL_A_GRAPH]);
	if (tb[DFG_NL_A_OBJECT])
		ev->object = nla_get_u32(tb[DFG_NL_A_OBJECT]);
	if (tb[DFG_NL_A_RANK])
		ev->rank = nla_get_u32(tb[DFG_NL_A_RANK]);
	return NL_OK;
}

/* Subscribes to DFG_GENL_MCGRP_EVENTS of family "dfg". */
static inline int dfg_nl_mon_open(struct dfg_nl_mon *mon)
{
	int family, grp, ret;

	memset(mon, 0, sizeof(*mon));
	ret = dfg_nl_connect(&mon->sk, &family, 1000);
	if (ret)
		return ret;
	grp = genl_ctrl_resolve_grp(mon->sk, DFG_GENL_NAME,
				    DFG_GENL_MCGRP_EVENTS);
	if (grp < 0) {
		ret = grp;
		goto out_free;
	}
	nl_socket_disable_seq_check(mon->sk);
	nl_socket_modify_cb(mon->sk, NL_CB_VALID, NL_CB_CUSTOM,
			    dfg_nl_event_cb, mon);
	nl_socket_set_buffer_size(mon->sk, 1 << 20, 0);
	ret = nl_socket_add_membership(mon->sk, grp);
	if (ret < 0)
		goto out_free;
	ret = nl_socket_set_nonblocking(mon->sk);
	if (ret < 0)
		goto out_free;
	return 0;
out_free:
	nl_socket_free(mon->sk);
	mon->sk = NULL;
	return ret;
}

static inline void dfg_nl_mon_close(struct dfg_nl_mon *mon)
{
	if (mon->sk)
		nl_socket_free(mon->sk);
	mon->sk = NULL;
}

/* Receives whatever arrives within @timeout_ms (0: only what is queued). */
static inline void dfg_nl_mon_poll(struct dfg_nl_mon *mon, int timeout_ms)
{
	struct pollfd pfd = { .fd = nl_socket_get_fd(mon->sk), .events = POLLIN };

	while (poll(&pfd, 1, timeout_ms) > 0) {
		if (nl_recvmsgs_default(mon->sk) < 0)
			break;
	}
}

/*
 * Finds (receiving for up to @timeout_ms) an event @event from @pid; copies
 * it to @out and removes it from the list. True if found.
 */
static inline bool dfg_nl_mon_find(struct dfg_nl_mon *mon, __u32 event,
				   __u32 pid, int timeout_ms,
				   struct dfg_nl_event *out)
{
	struct pollfd pfd = { .fd = nl_socket_get_fd(mon->sk), .events = POLLIN };
	struct timespec ts;
	long long start, left;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	start = ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
	for (;;) {
		nl_recvmsgs_default(mon->sk);
		for (i = 0; i < mon->nr; i++) {
			if (mon->ev[i].event != event || mon->ev[i].pid != pid)
				continue;
			*out = mon->ev[i];
			memmove(&mon->ev[i], &mon->ev[i + 1],
				(mon->nr - i - 1) * sizeof(mon->ev[0]));
			mon->nr--;
			return true;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		left = timeout_ms - (ts.tv_sec * 1000LL + ts.tv_nsec / 1000000 -
				     start);
		if (left <= 0)
			return false;
		poll(&pfd, 1, (int)left);
	}
}

/* Number of received events @event from @pid still in the list. */
static inline int dfg_nl_mon_count(struct dfg_nl_mon *mon, __u32 event,
				   __u32 pid)
{
	int i, n = 0;

	for (i = 0; i < mon->nr; i++)
		if (mon->ev[i].event == event && mon->ev[i].pid == pid)
			n++;
	return n;
}

#endif /* DFG_NL_H */
