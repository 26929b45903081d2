// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * core/events.c - the generic netlink family "dfg" (<dfg/events.h>).
 *
 * libnl-genl-3 resolves the family and its groups, joins a group and
 * parses messages; datagrams are read with recv(2) on the socket, so that
 * ENOBUFS (events lost) and EAGAIN arrive as themselves rather than as
 * libnl's merged codes.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>

#include <dfg/events.h>

/* Large enough for the socket to hold bursts (graph teardown). */
#define EVENTS_RCVBUF		(1 << 20)
/* Largest datagram read at once: events are well under 200 bytes. */
#define EVENTS_BUF		8192
#define INFO_TIMEOUT_MS		5000

/*
 * struct dfg_events - a subscription
 * @sk:		libnl socket, joined to one event group; owned
 * @family:	id of family "dfg", the nlmsg_type of its messages
 * @full:	joined "events_full" (else "events")
 * @len:	bytes of the last datagram in @buf
 * @off:	offset of its next unread message
 * @last:	numeric attributes of the last event returned, by
 *		DFG_NL_A_x (dfg_events_value())
 * @last_seen:	bit (1U << DFG_NL_A_x) for each in @last
 * @buf:	the last datagram; long for nlmsghdr alignment
 */
struct dfg_events {
	struct nl_sock	*sk;
	int		family;
	bool		full;
	int		len;
	int		off;
	__u64		last[DFG_NL_A_MAX + 1];
	__u32		last_seen;
	long		buf[EVENTS_BUF / sizeof(long)];
};

static const char *const event_names[__DFG_EV_MAX] = DFG_EVENT_NAMES;

static struct nla_policy dfg_nl_policy[DFG_NL_A_MAX + 1] = {
	[DFG_NL_A_API_VERSION]	= { .type = NLA_U32 },
	[DFG_NL_A_FEATURES]	= { .type = NLA_U64 },
	[DFG_NL_A_VERSION]	= { .type = NLA_STRING },
	[DFG_NL_A_CLIENTS]	= { .type = NLA_U32 },
	[DFG_NL_A_PARKED]	= { .type = NLA_U32 },
	[DFG_NL_A_EVENT]	= { .type = NLA_U32 },
	[DFG_NL_A_PID]		= { .type = NLA_U32 },
	[DFG_NL_A_CMD]		= { .type = NLA_U32 },
	[DFG_NL_A_GRAPH]	= { .type = NLA_U32 },
	[DFG_NL_A_OBJECT]	= { .type = NLA_U32 },
	[DFG_NL_A_NAME]		= { .type = NLA_STRING },
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

/* Bit (1U << DFG_NL_A_x) for each attribute present in @tb. */
static __u32 attrs_seen(struct nlattr *tb[DFG_NL_A_MAX + 1])
{
	__u32 seen = 0;
	int i;

	for (i = 0; i <= DFG_NL_A_MAX; i++)
		if (tb[i])
			seen |= 1U << i;
	return seen;
}

/* libnl's NLE_* (positive) as an errno value (positive). */
static int nle_errno(int nle)
{
	static const int map[] = {
		[NLE_INTR]		= EINTR,
		[NLE_BAD_SOCK]		= EBADF,
		[NLE_AGAIN]		= EAGAIN,
		[NLE_NOMEM]		= ENOMEM,
		[NLE_EXIST]		= EEXIST,
		[NLE_INVAL]		= EINVAL,
		[NLE_RANGE]		= ERANGE,
		[NLE_MSGSIZE]		= EMSGSIZE,
		[NLE_OPNOTSUPP]		= EOPNOTSUPP,
		[NLE_AF_NOSUPPORT]	= EAFNOSUPPORT,
		[NLE_OBJ_NOTFOUND]	= ENOENT,
		[NLE_NOADDR]		= EADDRNOTAVAIL,
		[NLE_SRCRT_NOSUPPORT]	= EOPNOTSUPP,
		[NLE_MSG_TOOSHORT]	= EBADMSG,
		[NLE_MSGTYPE_NOSUPPORT]	= EBADMSG,
		[NLE_OBJ_MISMATCH]	= EINVAL,
		[NLE_NOCACHE]		= ENOENT,
		[NLE_BUSY]		= EBUSY,
		[NLE_PROTO_MISMATCH]	= EPROTONOSUPPORT,
		[NLE_NOACCESS]		= EACCES,
		[NLE_PERM]		= EPERM,
		[NLE_PKTLOC_FILE]	= ENOENT,
		[NLE_PARSE_ERR]		= EBADMSG,
		[NLE_NODEV]		= ENODEV,
		[NLE_IMMUTABLE]		= EPERM,
		[NLE_DUMP_INTR]		= EINTR,
		[NLE_ATTRSIZE]		= EBADMSG,
	};

	if (nle < 0)
		nle = -nle;
	if ((size_t)nle < sizeof(map) / sizeof(map[0]) && map[nle])
		return map[nle];
	return EIO;
}

/* A socket connected to generic netlink, with family "dfg" resolved. */
static int genl_open(struct nl_sock **skp, int *family)
{
	struct nl_sock *sk;
	int ret;

	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	ret = genl_connect(sk);
	if (ret < 0)
		goto out_free;
	ret = genl_ctrl_resolve(sk, DFG_GENL_NAME);
	if (ret < 0)
		goto out_free;
	*family = ret;
	*skp = sk;
	return 0;

out_free:
	nl_socket_free(sk);
	return -nle_errno(ret);
}

/* Joins group @name of family "dfg"; -ENOENT when the module has none. */
static int join_group(struct nl_sock *sk, const char *name)
{
	int grp, ret;

	grp = genl_ctrl_resolve_grp(sk, DFG_GENL_NAME, name);
	if (grp < 0)
		return -nle_errno(grp);
	ret = nl_socket_add_membership(sk, grp);
	return ret < 0 ? -nle_errno(ret) : 0;
}

static int events_open(struct dfg_events **evsp, unsigned int flags)
{
	struct dfg_events *evs;
	int ret;

	if (!evsp || (flags & ~DFG_EVENTS_ALL) || flags == DFG_EVENTS_ALL)
		return -EINVAL;
	evs = calloc(1, sizeof(*evs));
	if (!evs)
		return -ENOMEM;
	ret = genl_open(&evs->sk, &evs->family);
	if (ret)
		goto out_free;
	ret = nl_socket_set_buffer_size(evs->sk, EVENTS_RCVBUF, 0);
	if (ret < 0) {
		ret = -nle_errno(ret);
		goto out_sk;
	}

	ret = -EPERM;
	if (!(flags & DFG_EVENTS_PUBLIC)) {
		ret = join_group(evs->sk, DFG_GENL_MCGRP_EVENTS_FULL);
		evs->full = !ret;
	}
	/* Without CAP_NET_ADMIN, or a module without the group. */
	if (ret && !(flags & DFG_EVENTS_FULL) && (ret == -EPERM ||
						  ret == -ENOENT))
		ret = join_group(evs->sk, DFG_GENL_MCGRP_EVENTS);
	if (ret)
		goto out_sk;
	*evsp = evs;
	return 0;

out_sk:
	nl_socket_free(evs->sk);
out_free:
	free(evs);
	return ret;
}

int dfg_events_open(struct dfg_events **evsp, unsigned int flags)
{
	int saved = errno;
	int ret = events_open(evsp, flags);

	errno = saved;
	return ret;
}

void dfg_events_close(struct dfg_events *evs)
{
	int saved = errno;

	if (!evs)
		return;
	nl_socket_free(evs->sk);
	free(evs);
	errno = saved;
}

int dfg_events_fd(const struct dfg_events *evs)
{
	return evs ? nl_socket_get_fd(evs->sk) : -EINVAL;
}

int dfg_events_full(const struct dfg_events *evs)
{
	return evs ? evs->full : -EINVAL;
}

const char *dfg_event_name(__u32 type)
{
	return type < __DFG_EV_MAX ? event_names[type] : NULL;
}

/* The numeric attributes of an event in @tb, for dfg_events_value(). */
static void keep_values(struct dfg_events *evs,
			struct nlattr *tb[DFG_NL_A_MAX + 1])
{
	int i;

	evs->last_seen = 0;
	for (i = 1; i <= DFG_NL_A_MAX; i++) {
		if (!tb[i])
			continue;
		if (dfg_nl_policy[i].type == NLA_U32)
			evs->last[i] = nla_get_u32(tb[i]);
		else if (dfg_nl_policy[i].type == NLA_U64)
			evs->last[i] = nla_get_u64(tb[i]);
		else
			continue;
		evs->last_seen |= 1U << i;
	}
}

int dfg_events_value(const struct dfg_events *evs, unsigned int attr,
		     __u64 *val)
{
	if (!evs || !val || !attr || attr > DFG_NL_A_MAX ||
	    (dfg_nl_policy[attr].type != NLA_U32 &&
	     dfg_nl_policy[attr].type != NLA_U64))
		return -EINVAL;
	if (!(evs->last_seen & (1U << attr)))
		return -ENOENT;
	*val = evs->last[attr];
	return 0;
}

/*
 * Takes the next message of the datagram in @evs->buf. Returns 1 with @ev
 * filled for an event, 0 for anything else (skipped), -EBADMSG for an
 * event that does not parse.
 */
static int take_msg(struct dfg_events *evs, struct dfg_event_msg *ev)
{
	struct nlmsghdr *nlh = (void *)((char *)evs->buf + evs->off);
	int left = evs->len - evs->off;
	struct nlattr *tb[DFG_NL_A_MAX + 1];

	if (!nlmsg_ok(nlh, left)) {
		evs->off = evs->len;
		return 0;
	}
	evs->off += NLMSG_ALIGN(nlh->nlmsg_len);
	if (nlh->nlmsg_type != evs->family ||
	    !genlmsg_valid_hdr(nlh, 0) ||
	    genlmsg_hdr(nlh)->cmd != DFG_NL_CMD_EVENT)
		return 0;
	if (genlmsg_parse(nlh, 0, tb, DFG_NL_A_MAX, dfg_nl_policy) < 0 ||
	    !tb[DFG_NL_A_EVENT])
		return -EBADMSG;

	memset(ev, 0, sizeof(*ev));
	ev->attrs = attrs_seen(tb);
	keep_values(evs, tb);
	ev->type = nla_get_u32(tb[DFG_NL_A_EVENT]);
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
	if (tb[DFG_NL_A_NAME])
		nla_strlcpy(ev->name, tb[DFG_NL_A_NAME], sizeof(ev->name));
	return 1;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int events_next(struct dfg_events *evs, struct dfg_event_msg *ev,
		       int timeout_ms)
{
	int fd = nl_socket_get_fd(evs->sk);
	long long deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int ret, wait_ms;

	for (;;) {
		while (evs->off < evs->len) {
			ret = take_msg(evs, ev);
			if (ret)
				return ret < 0 ? ret : 0;
		}
		n = recv(fd, evs->buf, sizeof(evs->buf),
			 MSG_DONTWAIT | MSG_TRUNC);
		if (n > (ssize_t)sizeof(evs->buf))
			return -EMSGSIZE;
		if (n >= 0) {
			evs->len = n;
			evs->off = 0;
			continue;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		if (!timeout_ms)
			return -EAGAIN;
		wait_ms = -1;
		if (timeout_ms > 0) {
			long long left = deadline - now_ms();

			if (left <= 0)
				return -ETIMEDOUT;
			wait_ms = (int)left;
		}
		ret = poll(&pfd, 1, wait_ms);
		if (ret < 0)
			return -errno;
		if (!ret)
			return -ETIMEDOUT;
	}
}

int dfg_events_next(struct dfg_events *evs, struct dfg_event_msg *ev,
		    int timeout_ms)
{
	int saved = errno;
	int ret;

	if (!evs || !ev || timeout_ms < -1)
		return -EINVAL;
	ret = events_next(evs, ev, timeout_ms);
	errno = saved;
	return ret;
}

/* NL_CB_VALID of GET_INFO: copies the reply into the caller's struct. */
static int info_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct dfg_module_info *info = arg;
	struct nlattr *tb[DFG_NL_A_MAX + 1];

	if (!genlmsg_valid_hdr(nlh, 0) ||
	    genlmsg_hdr(nlh)->cmd != DFG_NL_CMD_GET_INFO ||
	    genlmsg_parse(nlh, 0, tb, DFG_NL_A_MAX, dfg_nl_policy) < 0)
		return NL_SKIP;
	info->attrs = attrs_seen(tb);
	if (tb[DFG_NL_A_API_VERSION])
		info->api_version = nla_get_u32(tb[DFG_NL_A_API_VERSION]);
	if (tb[DFG_NL_A_FEATURES])
		info->features = nla_get_u64(tb[DFG_NL_A_FEATURES]);
	if (tb[DFG_NL_A_CLIENTS])
		info->clients = nla_get_u32(tb[DFG_NL_A_CLIENTS]);
	if (tb[DFG_NL_A_PARKED])
		info->parked = nla_get_u32(tb[DFG_NL_A_PARKED]);
	if (tb[DFG_NL_A_VERSION])
		nla_strlcpy(info->version, tb[DFG_NL_A_VERSION],
			    sizeof(info->version));
	return NL_OK;
}

static int module_info(struct dfg_module_info *info)
{
	const __u32 need = 1U << DFG_NL_A_API_VERSION |
			   1U << DFG_NL_A_FEATURES | 1U << DFG_NL_A_VERSION;
	struct timeval tv = { .tv_sec = INFO_TIMEOUT_MS / 1000 };
	struct nl_sock *sk;
	struct nl_msg *msg;
	int family, ret;

	memset(info, 0, sizeof(*info));
	ret = genl_open(&sk, &family);
	if (ret)
		return ret;
	if (setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVTIMEO, &tv,
		       sizeof(tv))) {
		ret = -errno;
		goto out_sk;
	}
	ret = -ENOMEM;
	msg = nlmsg_alloc();
	if (!msg)
		goto out_sk;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
			 DFG_NL_CMD_GET_INFO, DFG_GENL_VERSION)) {
		nlmsg_free(msg);
		goto out_sk;
	}
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, info_cb, info);
	/* Sends with NLM_F_ACK, takes the reply, then the ack; frees msg. */
	ret = nl_send_sync(sk, msg);
	if (ret == -NLE_AGAIN)
		ret = -ETIMEDOUT;
	else if (ret < 0)
		ret = -nle_errno(ret);
	else if ((info->attrs & need) != need)
		ret = -EBADMSG;
	else
		ret = 0;
out_sk:
	nl_socket_free(sk);
	return ret;
}

int dfg_module_info(struct dfg_module_info *info)
{
	int saved = errno;
	int ret;

	if (!info)
		return -EINVAL;
	ret = module_info(info);
	errno = saved;
	return ret;
}
