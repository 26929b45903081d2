// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg collectives: the network transport, over UCX's ucp layer.
 *
 * UCX picks the wire per peer (RDMA over a verbs device, rxe included;
 * TCP where there is none; shared memory on one machine): this file sees
 * only registered memory, remote keys, one-sided get/put, atomics and
 * tagged messages (DESIGN.md, "Across machines", says why UCX).
 *
 * Each rank registers one control area at creation and publishes its
 * address and remote key, with its worker address, through the
 * bootstrap's allgather:
 *
 *	words[DFG_XPORT_WORDS(size)]	inbox and atomic words (xport.h)
 *	aborted[size]			per source: the last call it aborted
 *	why[size]			per source: why (dfg_xwhy_pack()),
 *					put before its abort's atomic
 *	keys[XUCX_KEYS]			packed remote keys of exposures
 *
 * An exposure registers the memory (ucp_mem_map) and writes its packed
 * rkey into keys[id]; the dfg_xkey that travels carries id, generation,
 * length and the exposer's address. A peer that meets a key it has not
 * unpacked reads keys[id] with one get, checks the generation and
 * unpacks; keys flagged KEEP stay unpacked across calls, others until
 * release().
 *
 * Words are only ever raised: notify adds the difference to what this
 * rank last sent to that word (it is the only writer of it), so every
 * store into a peer's words is a 64-bit remote atomic, never a torn
 * write, and a fence before it orders it after the puts posted before.
 *
 * Failure: endpoints use peer error handling; a peer's death (its
 * endpoint failing, UCX's keepalive finding it gone) breaks the
 * transport for good: -EOWNERDEAD. So does a request that fails with a
 * status that means a lost connection; any other failed request fails
 * only its call (-EIO), which the call's abort tells the peers. Over
 * verbs UCX finds a dead peer only by timeouts (seconds, and shorter ones
 * break live connections under load), so each rank also keeps a liveness
 * connection to every peer in a second, TCP-only UCX context: a process
 * that dies has its sockets closed by its kernel at once, which fails our
 * endpoint to it within milliseconds, without any timeout. A rank that leaves in order says
 * goodbye on it first, so its closing is no death. A rank whose transport
 * breaks while it lives says so on the same connections (a goodbye whose
 * byte is XUCX_BYE_BROKEN): its peers break too, at their next look at
 * the liveness connections (a waiter looks every XUCX_LIVE_NS), rather
 * than wait for words it will never raise, and it says no other goodbye.
 * With DFG_COLL_TRACE set, a transport that breaks prints why to stderr.
 *
 * Reasons: a break has one (a death: the liveness connection closed
 * without a goodbye; a member unreachable: an endpoint or request failed
 * for a lost connection or a timeout, or this machine's own links all
 * went down; a peer's break: the reason its goodbye carries, the goodbye
 * being that 8-byte word), and so has an abort (the why word above).
 * This machine's links are watched through a netlink socket (link
 * events, read at the waiters' look at the liveness connections), so a
 * rank whose machine lost its network fails at once, not at UCX's
 * timeouts.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "coll.h"

#define XUCX_KEYS		256
#define XUCX_RKEY_MAX		232
#define XUCX_RKEYS_MAX		128
/*
 * Where a waiter naps (struct xucx, @nap): idle progress rounds before it
 * starts, and each nap.
 */
#define XUCX_SPIN		4096
#define XUCX_NAP_NS		20000
/* Shutdown: how long closing endpoints may take before forcing. */
#define XUCX_CLOSE_NS		(2 * 1000 * 1000 * 1000LL)
/*
 * An endpoint failed: how long its peer's liveness connection may take to
 * close too, which says the peer died (else it is unreachable).
 */
#define XUCX_DEATH_NS		(250 * 1000 * 1000LL)
/* A waiter looks at the liveness connections this often (at most). */
#define XUCX_LIVE_NS		(1000 * 1000LL)
/* Liveness tags: kind in the high bits, the sender's rank below. */
#define XUCX_TAG_HELLO		(1ULL << 32)
#define XUCX_TAG_BYE		(2ULL << 32)
/* The goodbye's word: leaving in order, else why the team broke here. */
#define XUCX_BYE_LEAVE		0

/* One published key: written by the exposer, read by peers' gets. */
struct xucx_kent {
	__u64		gen;
	__u64		len;
	__u32		rlen;
	__u32		pad;
	unsigned char	rkey[XUCX_RKEY_MAX];
};

/*
 * What one rank tells the others at creation, followed by its control
 * area's rkey, its worker address and its liveness worker address.
 * @node: its machine (the kernel's boot id, or DFG_TEAM_NODE), and
 * @token: a random number, which names its machine's kernel team when it
 * is that machine's leader (hier.c); @host: its machine's boot id even
 * where DFG_TEAM_NODE says otherwise (the CPUs it shares: struct xucx,
 * @nap).
 */
struct xucx_boot {
	__u64	ctl;
	__u32	rlen;
	__u32	alen;
	__u32	llen;
	__u32	pad;
	char	node[DFG_XPORT_NODE_MAX];
	char	host[DFG_XPORT_NODE_MAX];
	__u64	token;
};

/*
 * The liveness connection to one peer (endpoint error handler's argument)
 * @failed:	the connection closed or failed, with @fail_st
 * @left:	the peer said goodbye: its connection's end is no death
 * @bye:	the receive of the goodbye, posted once joined
 * @word:	its landing word (XUCX_BYE_LEAVE, else a reason)
 * @s, @rank:	the transport and the peer (endpoint error handlers)
 */
struct xucx_live {
	bool		failed;
	ucs_status_t	fail_st;
	bool		left;
	void		*bye;
	__u64		word;
	struct xucx	*s;
	unsigned int	rank;
};

/* A local exposure: keys[id] describes it. */
struct xucx_lkey {
	ucp_mem_h	memh;
	bool		used;
};

/* A peer's key, unpacked. */
struct xucx_rkey {
	unsigned int	peer;
	unsigned int	id;
	__u64		gen;
	bool		keep;
	ucp_rkey_h	rkey;
};

/*
 * What the transport did in the current call, for DFG_COLL_TRACE (@on:
 * tracing this call): operations posted (one-sided reads and writes,
 * atomics without and with a result, endpoint flushes, messages), and
 * the time from begin() to release(), the part of it spent waiting for
 * requests (round trips: a fetching atomic, a flush, a message) and for
 * own words (peers' notifications), the waiters' progress rounds and
 * their naps.
 */
struct xucx_stats {
	bool		on;
	unsigned int	get, put, amo, famo, flush, send, recv;
	unsigned long	rounds, naps;
	__s64		t0, req_ns, word_ns;
};

/* A posted operation. */
struct xucx_op {
	void		*req;
	int		ticket;
	unsigned int	peer;
};

struct xucx {
	struct dfg_xport	x;
	ucp_context_h		ctx;
	ucp_worker_h		w;
	ucp_ep_h		*eps;
	/* Control area: mapped, registered, its rkey published. */
	void			*ctl;
	size_t			ctl_len;
	ucp_mem_h		ctl_memh;
	_Atomic __u64		*words;
	_Atomic __u64		*aborted;
	_Atomic __u64		*whys;
	struct xucx_kent	*kents;
	unsigned int		nwords;
	/* Peers' control areas. */
	__u64			*peer_ctl;
	ucp_rkey_h		*peer_rkey;
	/* Last value sent into each peer's inbox words and aborted word. */
	__u64			*sent;
	__u64			*sent_abort;
	struct xucx_lkey	lk[XUCX_KEYS];
	__u64			gen;
	struct xucx_rkey	rk[XUCX_RKEYS_MAX];
	unsigned int		nr_rk;
	struct xucx_op		*ops;
	unsigned int		nr_ops;
	unsigned int		cap_ops;
	int			tickets;
	/*
	 * Per peer: a put or atomic was posted to it since the last flush.
	 * Flushes are per endpoint: a worker flush would also wait for the
	 * endpoints to peers that take no part (a hierarchy's members
	 * waiting in their machine's kernel team do not progress UCX, and
	 * an endpoint's wireup needs the peer's progress).
	 */
	bool			*unflushed;
	/* Liveness: TCP-only context, its worker, one endpoint per peer. */
	ucp_context_h		lctx;
	ucp_worker_h		lw;
	ucp_ep_h		*leps;
	struct xucx_live	*live;
	__s64			live_ns;
	/*
	 * -EOWNERDEAD once broken, @why_broken saying why; the peers were
	 * told (@told: a goodbye carrying it). @why_last: the reason of the
	 * abort that failed our last wait; @why_out, @bye_out: the sources
	 * of our reason's puts and of our goodbye (live until they are done).
	 */
	int			broken;
	bool			told;
	bool			why_settled;
	__u64			why_broken;
	__u64			why_last;
	__u64			why_out;
	__u64			bye_out;
	/*
	 * Link events (netlink, -1: not watched): this machine's links,
	 * watched when some peer is on another machine.
	 */
	int			nl;
	unsigned int		nr_eps;
	/* Every rank's machine and token (struct xucx_boot). */
	char			(*node)[DFG_XPORT_NODE_MAX];
	__u64			*token;
	/*
	 * Whether a waiter naps after XUCX_SPIN idle progress rounds: where
	 * this machine's members of the team outnumber its CPUs
	 * (dfg_coll_crowded(), the shared-memory transport's rule: counted
	 * by the boot ids, whatever DFG_TEAM_NODE says), or
	 * DFG_COLL_PREV=nap; else it polls. @naps: how many it took
	 * (dfg_xport_ucx_naps(); tests read it from other threads).
	 */
	bool			nap;
	_Atomic unsigned long	naps;
	struct xucx_stats	st;
};

static inline struct xucx *to_xucx(struct dfg_xport *x)
{
	return (struct xucx *)x;
}

static size_t xucx_align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

static size_t xucx_words_off(unsigned int word)
{
	return (size_t)word * sizeof(__u64);
}

static size_t xucx_aborted_off(const struct xucx *s, unsigned int src)
{
	return (size_t)(s->nwords + src) * sizeof(__u64);
}

static size_t xucx_whys_off(const struct xucx *s, unsigned int src)
{
	return (size_t)(s->nwords + s->x.size + src) * sizeof(__u64);
}

static size_t xucx_kents_off(const struct xucx *s)
{
	return xucx_align64((size_t)(s->nwords + 2 * s->x.size) *
			    sizeof(__u64));
}

/* DFG_COLL_TRACE: what happened to the transport, a line to stderr. */
static void xucx_trace(struct xucx *s, const char *what, unsigned int peer,
		       ucs_status_t st)
{
	const char *env = getenv("DFG_COLL_TRACE");
	char buf[192];

	if (!env || !*env || !strcmp(env, "0"))
		return;
	/* One write per line: ranks share the terminal. */
	snprintf(buf, sizeof(buf),
		 "dfg-trace ucx rank=%u size=%u seq=%llu %s peer=%d status=%s\n",
		 s->x.rank, s->x.size, (unsigned long long)s->x.seq, what,
		 peer < s->x.size ? (int)peer : -1, ucs_status_string(st));
	fputs(buf, stderr);
	fflush(stderr);
}

/*
 * The team is unusable from here on: -EOWNERDEAD for good. @kind
 * (DFG_TEAM_FAIL_*) and @peer (size: not known) are the reason the
 * peers are told, or @reason a peer's reason passed on (0: make one);
 * @why and @st say it for DFG_COLL_TRACE. The peers are told at the next
 * look at the liveness connections (xucx_live_poll()): this may run
 * inside UCX's progress, which must not post.
 */
static void xucx_break_why(struct xucx *s, const char *why, unsigned int kind,
			   unsigned int peer, ucs_status_t st, __u64 reason)
{
	char what[96];

	if (s->broken)
		return;
	s->broken = -EOWNERDEAD;
	s->why_broken = reason ? reason :
			dfg_xwhy_pack(kind, EOWNERDEAD,
				      dfg_xport_top(&s->x, peer), s->x.seq);
	snprintf(what, sizeof(what), "broken: %s", why);
	xucx_trace(s, what, peer, st);
}

/* A member is unreachable (a connection lost, a timeout). */
static void xucx_break(struct xucx *s, const char *why, unsigned int peer,
		       ucs_status_t st)
{
	xucx_break_why(s, why, DFG_TEAM_FAIL_LINK, peer, st, 0);
}

/*
 * A failed request or endpoint. Lost connections and timeouts break the
 * transport (a member is unreachable); any other status fails only the
 * call that met it.
 */
static int xucx_err_peer(struct xucx *s, ucs_status_t st, unsigned int peer)
{
	if (st == UCS_OK)
		return 0;
	if (s->broken)
		return s->broken;
	switch (st) {
	case UCS_ERR_MESSAGE_TRUNCATED:
		return -EMSGSIZE;
	case UCS_ERR_NO_MEMORY:
		return -ENOMEM;
	case UCS_ERR_CANCELED:
		return -ECANCELED;
	case UCS_ERR_INVALID_PARAM:
		return -EINVAL;
	case UCS_ERR_IO_ERROR:
	case UCS_ERR_UNREACHABLE:
	case UCS_ERR_TIMED_OUT:
	case UCS_ERR_NOT_CONNECTED:
	case UCS_ERR_CONNECTION_RESET:
	case UCS_ERR_REJECTED:
		break;
	default:
		if (!UCS_IS_LINK_ERROR(st) && !UCS_IS_ENDPOINT_ERROR(st)) {
			xucx_trace(s, "call failed", peer, st);
			return -EIO;
		}
	}
	xucx_break(s, "request failed", peer, st);
	return s->broken;
}

static void xucx_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
	struct xucx_live *l = arg;

	(void)ep;
	xucx_break(l->s, "endpoint failed", l->rank, status);
}

static void xucx_live_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
	struct xucx_live *l = arg;

	(void)ep;
	l->fail_st = status;
	l->failed = true;
}


/*
 * Send @word (XUCX_BYE_LEAVE, or why we broke) as our goodbye to every
 * peer on the liveness connections, without waiting: closing the
 * endpoints (or the peer's progress) flushes it.
 */
static void xucx_live_send(struct xucx *s, __u64 word)
{
	ucp_request_param_t p = { 0 };

	s->bye_out = word;
	for (unsigned int r = 0; r < s->x.size; r++) {
		void *req;

		if (!s->leps[r])
			continue;
		req = ucp_tag_send_nbx(s->leps[r], &s->bye_out,
				       sizeof(s->bye_out),
				       XUCX_TAG_BYE | s->x.rank, &p);
		if (UCS_PTR_IS_PTR(req))
			ucp_request_free(req);
	}
}

/* A goodbye that came from @l: a broken peer's breaks us, its reason ours. */
static void xucx_live_left(struct xucx *s, struct xucx_live *l)
{
	l->left = true;
	if (l->word != XUCX_BYE_LEAVE)
		xucx_break_why(s, "peer broke", DFG_TEAM_FAIL_LINK, l->rank,
			       UCS_OK, dfg_xwhy_what(l->word) ? l->word : 0);
}

/*
 * Is some interface other than loopback up with its carrier? (Else no
 * peer on another machine can be reached: the links are all down.)
 */
static bool xucx_links_up(void)
{
	struct ifaddrs *ifa, *i;
	bool up = false;

	if (getifaddrs(&ifa))
		return true;	/* cannot tell: assume so */
	for (i = ifa; i && !up; i = i->ifa_next)
		up = !(i->ifa_flags & IFF_LOOPBACK) &&
		     (i->ifa_flags & (IFF_UP | IFF_RUNNING)) ==
		     (IFF_UP | IFF_RUNNING);
	freeifaddrs(ifa);
	return up;
}

/*
 * Link events since the last look: when this machine has no link left
 * up, every peer on another machine is unreachable now, whatever UCX's
 * timeouts say later (a multi-homed machine losing one of its links
 * breaks nothing here: UCX decides for the peers behind it).
 */
static void xucx_links_poll(struct xucx *s)
{
	char buf[4096];
	bool change = false;
	ssize_t n;

	if (s->nl < 0)
		return;
	while ((n = recv(s->nl, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		for (; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n))
			change |= h->nlmsg_type == RTM_NEWLINK ||
				  h->nlmsg_type == RTM_DELLINK;
	}
	if (change && !xucx_links_up())
		xucx_break_why(s, "this machine's links are down",
			       DFG_TEAM_FAIL_LINK, s->x.rank,
			       UCS_ERR_UNREACHABLE, 0);
}

/* Watch link events where some peer is on another machine. */
static void xucx_links_watch(struct xucx *s)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
				  .nl_groups = RTMGRP_LINK };
	bool remote = false;

	for (unsigned int r = 0; r < s->x.size; r++)
		remote |= strcmp(s->node[r], s->node[s->x.rank]) ||
			  !s->node[r][0];
	if (!remote || !xucx_links_up())
		return;
	s->nl = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       NETLINK_ROUTE);
	if (s->nl >= 0 && bind(s->nl, (struct sockaddr *)&sa, sizeof(sa))) {
		close(s->nl);
		s->nl = -1;
	}
}

/*
 * Look at the liveness connections (every XUCX_LIVE_NS unless @now): a
 * peer whose connection closed without a goodbye died, one that said it
 * broke makes us break. Once broken, we say so.
 */
static void xucx_live_poll(struct xucx *s, bool now)
{
	__s64 t;

	if (!s->lw)
		return;
	if (!now) {
		/* The coarse clock: a load, no time source read. */
		t = dfg_coll_now_ns(CLOCK_MONOTONIC_COARSE);
		if (t - s->live_ns < XUCX_LIVE_NS)
			return;
		s->live_ns = t;
	}
	while (ucp_worker_progress(s->lw))
		;
	for (unsigned int r = 0; r < s->x.size && !s->broken; r++) {
		struct xucx_live *l = &s->live[r];

		if (!l->left && l->bye &&
		    ucp_request_check_status(l->bye) == UCS_OK)
			xucx_live_left(s, l);
		if (l->failed && !l->left)
			xucx_break_why(s, "peer died (liveness connection)",
				       DFG_TEAM_FAIL_KILLED, r, l->fail_st, 0);
	}
	xucx_links_poll(s);
	if (s->broken && !s->told) {
		s->told = true;
		xucx_live_send(s, s->why_broken);
	}
}

/*
 * Progress; where the machine is crowded (@nap), after XUCX_SPIN idle
 * rounds nap, so that the member we wait for gets the CPU. Elsewhere
 * poll, as Open MPI does: a nap gave the CPU away for a timer period
 * whether or not anyone needed it, and saw a completion only when the
 * timer fired (DESIGN.md, "Where the time goes in the rig").
 */
static void xucx_progress(struct xucx *s, unsigned int *idle)
{
	struct timespec ts = { .tv_nsec = XUCX_NAP_NS };

	s->st.rounds++;
	xucx_live_poll(s, false);
	if (ucp_worker_progress(s->w)) {
		*idle = 0;
		return;
	}
	if (s->nap && ++*idle > XUCX_SPIN) {
		s->st.naps++;
		atomic_fetch_add_explicit(&s->naps, 1, memory_order_relaxed);
		nanosleep(&ts, NULL);
	}
}

/*
 * Until @req completes, or the team breaks: its status. @req may be a
 * status pointer. A request to a dead peer may take UCX seconds to fail:
 * it is left to finish on its own (freed, so UCX releases it then).
 */
static ucs_status_t xucx_wait_req(struct xucx *s, void *req)
{
	__s64 t0 = s->st.on ? dfg_coll_now_ns(CLOCK_MONOTONIC) : 0;
	unsigned int idle = 0;
	ucs_status_t st;

	if (!UCS_PTR_IS_PTR(req))
		return UCS_PTR_STATUS(req);
	while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS &&
	       !s->broken)
		xucx_progress(s, &idle);
	ucp_request_free(req);
	if (s->st.on)
		s->st.req_ns += dfg_coll_now_ns(CLOCK_MONOTONIC) - t0;
	return st == UCS_INPROGRESS ? UCS_ERR_CONNECTION_RESET : st;
}

static int xucx_push(struct xucx *s, void *req, unsigned int peer)
{
	if (s->nr_ops == s->cap_ops) {
		unsigned int cap = s->cap_ops ? 2 * s->cap_ops : 64;
		struct xucx_op *o = realloc(s->ops, cap * sizeof(*o));

		if (!o)
			return -ENOMEM;
		s->ops = o;
		s->cap_ops = cap;
	}
	if (s->tickets == INT32_MAX)
		s->tickets = 0;
	s->ops[s->nr_ops++] = (struct xucx_op){
		.req = req, .ticket = ++s->tickets, .peer = peer,
	};
	return s->tickets;
}

/* Complete the posted operations for which @done(ticket) holds. */
static int xucx_reap(struct xucx *s, int ticket, bool all)
{
	unsigned int keep = 0;
	int ret = 0, r;

	for (unsigned int i = 0; i < s->nr_ops; i++) {
		struct xucx_op *o = &s->ops[i];

		if (!all && o->ticket > ticket) {
			s->ops[keep++] = *o;
			continue;
		}
		r = xucx_err_peer(s, xucx_wait_req(s, o->req), o->peer);
		if (!ret)
			ret = r;
	}
	s->nr_ops = keep;
	return ret;
}

/* Remote completion of every put and atomic: flush their endpoints. */
static int xucx_flush_worker(struct xucx *s)
{
	ucp_request_param_t p = { 0 };

	int ret = 0;

	for (unsigned int r = 0; s->unflushed && r < s->x.size && !ret; r++) {
		if (!s->unflushed[r])
			continue;
		s->unflushed[r] = false;
		s->st.flush++;
		ret = xucx_err_peer(s, xucx_wait_req(s,
				ucp_ep_flush_nbx(s->eps[r], &p)), r);
	}
	return ret;
}

static int xucx_complete(struct dfg_xport *x, int ticket)
{
	struct xucx *s = to_xucx(x);
	int ret = xucx_reap(s, ticket, false);

	return ret ? ret : xucx_flush_worker(s);
}

static int xucx_in_flight(struct dfg_xport *x, int ticket)
{
	struct xucx *s = to_xucx(x);
	ucs_status_t st;

	ucp_worker_progress(s->w);
	for (unsigned int i = 0; i < s->nr_ops; i++) {
		if (s->ops[i].ticket != ticket)
			continue;
		if (!UCS_PTR_IS_PTR(s->ops[i].req))
			return 0;
		st = ucp_request_check_status(s->ops[i].req);
		if (st == UCS_INPROGRESS)
			return 1;
		return st == UCS_OK ? 0 :
		       xucx_err_peer(s, st, s->ops[i].peer);
	}
	return 0;	/* reaped: complete */
}

static int xucx_flush(struct dfg_xport *x)
{
	struct xucx *s = to_xucx(x);
	int ret = xucx_reap(s, 0, true);

	return ret ? ret : xucx_flush_worker(s);
}

/*
 * Post an atomic add into @peer's control area at @off: completed by the
 * next complete() or flush(), or (@loose) by UCX on its own, which then
 * frees it: nobody waits for it.
 */
static int xucx_add(struct xucx *s, unsigned int peer, size_t off, __u64 add,
		    bool loose)
{
	ucp_request_param_t p = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
		.datatype = ucp_dt_make_contig(sizeof(__u64)),
	};
	void *req;
	int ret;

	if (!add)
		return 0;
	s->st.amo++;
	ucp_worker_fence(s->w);
	/* A non-fetching atomic reads its operand when posted. */
	req = ucp_atomic_op_nbx(s->eps[peer], UCP_ATOMIC_OP_ADD, &add, 1,
				s->peer_ctl[peer] + off, s->peer_rkey[peer], &p);
	if (UCS_PTR_IS_ERR(req))
		return xucx_err_peer(s, UCS_PTR_STATUS(req), peer);
	if (loose) {
		if (UCS_PTR_IS_PTR(req))
			ucp_request_free(req);
		return 0;
	}
	s->unflushed[peer] = true;
	ret = xucx_push(s, req, peer);
	if (ret < 0)
		return xucx_err_peer(s, xucx_wait_req(s, req), peer);
	return 0;
}

/*
 * Post a put of the word at @src (which stays live) into @peer's control
 * area at @off; loose, as xucx_add(..., true): nobody waits for it.
 */
static int xucx_put_word(struct xucx *s, unsigned int peer, size_t off,
			 const __u64 *src)
{
	ucp_request_param_t p = { 0 };
	void *req;

	s->st.put++;
	req = ucp_put_nbx(s->eps[peer], src, sizeof(*src),
			  s->peer_ctl[peer] + off, s->peer_rkey[peer], &p);
	if (UCS_PTR_IS_ERR(req))
		return xucx_err_peer(s, UCS_PTR_STATUS(req), peer);
	if (UCS_PTR_IS_PTR(req))
		ucp_request_free(req);
	return 0;
}

static int xucx_notify(struct dfg_xport *x, unsigned int peer,
		       unsigned int slot, __u64 value)
{
	struct xucx *s = to_xucx(x);
	__u64 *sent;
	int ret;

	if (peer >= x->size || slot >= DFG_XPORT_SLOTS)
		return -EINVAL;
	if (s->broken)
		return s->broken;
	sent = &s->sent[(size_t)peer * DFG_XPORT_SLOTS + slot];
	if (value <= *sent)
		return 0;
	ret = xucx_add(s, peer, xucx_words_off(dfg_xport_inbox(x->rank,
								   slot)),
		       value - *sent, false);
	if (!ret)
		*sent = value;
	return ret;
}

static int xucx_fadd(struct dfg_xport *x, unsigned int peer, unsigned int idx,
		     __u64 add, __u64 *old)
{
	struct xucx *s = to_xucx(x);
	ucp_request_param_t p = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE |
				UCP_OP_ATTR_FIELD_REPLY_BUFFER,
		.datatype = ucp_dt_make_contig(sizeof(__u64)),
	};
	__u64 reply = 0;
	void *req;
	int ret;

	if (peer >= x->size || idx >= DFG_XPORT_ATOMICS)
		return -EINVAL;
	if (s->broken)
		return s->broken;
	p.reply_buffer = &reply;
	s->st.famo++;
	ucp_worker_fence(s->w);
	req = ucp_atomic_op_nbx(s->eps[peer], UCP_ATOMIC_OP_ADD, &add, 1,
				s->peer_ctl[peer] +
				xucx_words_off(dfg_xport_atomic(x, idx)),
				s->peer_rkey[peer], &p);
	ret = xucx_err_peer(s, xucx_wait_req(s, req), peer);
	if (!ret && old)
		*old = reply;
	return ret;
}

/* As xport_shm.c: @src aborted our call (@src == size: anyone did). */
static int xucx_check(struct xucx *s, unsigned int src)
{
	__u64 seq = s->x.seq;
	bool aborted = false;

	if (s->broken)
		return s->broken;
	if (!seq)
		return 0;
	if (src < s->x.size) {
		aborted = atomic_load_explicit(&s->aborted[src],
					       memory_order_acquire) >= seq;
		if (aborted)
			s->why_last = atomic_load_explicit(&s->whys[src],
						memory_order_relaxed);
	} else {
		for (unsigned int r = 0; r < s->x.size && !aborted; r++) {
			aborted = atomic_load_explicit(&s->aborted[r],
						       memory_order_acquire) ==
				  seq;
			if (aborted)
				s->why_last = atomic_load_explicit(&s->whys[r],
							memory_order_relaxed);
		}
	}
	return aborted ? -EPROTO : 0;
}

/* Until *@p >= @value, or (@exact) == @value. */
static int xucx_wait_u64(struct xucx *s, _Atomic __u64 *p, __u64 value,
			 bool exact, unsigned int src, __u64 *now)
{
	__s64 t0 = s->st.on ? dfg_coll_now_ns(CLOCK_MONOTONIC) : 0;
	unsigned int idle = 0;
	__u64 v;
	int ret;

	for (;;) {
		v = atomic_load_explicit(p, memory_order_acquire);
		if (exact ? v == value : v >= value)
			break;
		ret = xucx_check(s, src);
		if (ret) {
			/* What it delivered before it failed still counts. */
			v = atomic_load_explicit(p, memory_order_acquire);
			if (exact ? v == value : v >= value)
				break;
			return ret;
		}
		xucx_progress(s, &idle);
	}
	if (s->st.on)
		s->st.word_ns += dfg_coll_now_ns(CLOCK_MONOTONIC) - t0;
	if (now)
		*now = v;
	return 0;
}

static int xucx_wait(struct dfg_xport *x, unsigned int word, __u64 value,
		     __u64 *now)
{
	struct xucx *s = to_xucx(x);

	if (word >= s->nwords)
		return -EINVAL;
	return xucx_wait_u64(s, &s->words[word], value, false,
			     dfg_xport_word_src(x, word), now);
}

/*
 * A word of exposed memory that a peer puts: RDMA writes it while we
 * load it, so it is read as an atomic (8-byte aligned: one load).
 */
static int xucx_wait_eq(struct dfg_xport *x, const __u64 *word, __u64 value,
			unsigned int src)
{
	struct xucx *s = to_xucx(x);

	if (src >= x->size || (uintptr_t)word % sizeof(*word))
		return -EINVAL;
	return xucx_wait_u64(s, (_Atomic __u64 *)(uintptr_t)word, value, true,
			     src, NULL);
}

/*
 * The worker's fence: UCX completes the puts before it at their targets
 * before it starts any after it, on every endpoint and lane.
 */
static int xucx_fence(struct dfg_xport *x)
{
	struct xucx *s = to_xucx(x);

	if (s->broken)
		return s->broken;
	return xucx_err_peer(s, ucp_worker_fence(s->w), x->size);
}

/* Requests only: no endpoint flush (which needs the peers' progress). */
static int xucx_complete_local(struct dfg_xport *x)
{
	return xucx_reap(to_xucx(x), 0, true);
}

static __u64 xucx_peek(struct dfg_xport *x, unsigned int word)
{
	struct xucx *s = to_xucx(x);

	if (word >= s->nwords)
		return 0;
	/* Software-emulated atomics land only when we progress. */
	ucp_worker_progress(s->w);
	return atomic_load_explicit(&s->words[word], memory_order_acquire);
}

static int xucx_expose(struct dfg_xport *x, const void *addr, size_t len,
		       unsigned int flags, struct dfg_xkey *key)
{
	struct xucx *s = to_xucx(x);
	ucp_mem_map_params_t mp = {
		.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
			      UCP_MEM_MAP_PARAM_FIELD_LENGTH,
		.address = (void *)addr,
		.length = len,
	};
	struct xucx_kent *k;
	unsigned int id;
	void *rbuf;
	size_t rlen;
	ucs_status_t st;

	if (flags & ~(DFG_XPORT_READ | DFG_XPORT_WRITE | DFG_XPORT_KEEP))
		return -EINVAL;
	*key = (struct dfg_xkey){ .kind = DFG_XKEY_NONE, .len = len };
	if (!len)
		return 0;
	for (id = 0; id < XUCX_KEYS && s->lk[id].used; id++)
		;
	if (id == XUCX_KEYS)
		return -ENOSPC;
	st = ucp_mem_map(s->ctx, &mp, &s->lk[id].memh);
	if (st != UCS_OK)
		return st == UCS_ERR_NO_MEMORY ? -ENOMEM : -EIO;
	st = ucp_rkey_pack(s->ctx, s->lk[id].memh, &rbuf, &rlen);
	if (st != UCS_OK || rlen > XUCX_RKEY_MAX) {
		if (st == UCS_OK)
			ucp_rkey_buffer_release(rbuf);
		ucp_mem_unmap(s->ctx, s->lk[id].memh);
		return st == UCS_OK ? -ENOSPC : -EIO;
	}
	k = &s->kents[id];
	k->len = len;
	k->rlen = rlen;
	memcpy(k->rkey, rbuf, rlen);
	ucp_rkey_buffer_release(rbuf);
	/* Published last: a peer that reads this generation reads it all. */
	atomic_store_explicit((_Atomic __u64 *)&k->gen, ++s->gen,
			      memory_order_release);
	s->lk[id].used = true;
	*key = (struct dfg_xkey){
		.kind = DFG_XKEY_UCX,
		.flags = (flags & DFG_XPORT_WRITE ? DFG_XKEY_F_WRITE : 0) |
			 (flags & DFG_XPORT_KEEP ? DFG_XKEY_F_KEEP : 0),
		.id = id, .len = len, .gen = s->gen, .addr = (uintptr_t)addr,
	};
	return 0;
}

static void xucx_unexpose(struct dfg_xport *x, struct dfg_xkey *key)
{
	struct xucx *s = to_xucx(x);

	if (key->kind == DFG_XKEY_UCX && key->id < XUCX_KEYS &&
	    s->lk[key->id].used && s->kents[key->id].gen == key->gen) {
		atomic_store_explicit((_Atomic __u64 *)&s->kents[key->id].gen,
				      0, memory_order_release);
		ucp_mem_unmap(s->ctx, s->lk[key->id].memh);
		s->lk[key->id].used = false;
	}
	key->kind = DFG_XKEY_NONE;
}

static void xucx_rkey_drop(struct xucx *s, unsigned int i)
{
	ucp_rkey_destroy(s->rk[i].rkey);
	s->rk[i] = s->rk[--s->nr_rk];
}

/* Drop the unpacked keys that do not outlive the call. */
static void xucx_rkeys_drop(struct xucx *s)
{
	for (unsigned int i = 0; i < s->nr_rk;) {
		if (!s->rk[i].keep)
			xucx_rkey_drop(s, i);
		else
			i++;
	}
}

/*
 * The call ends: drop its keys; DFG_COLL_TRACE: a line of what the
 * transport did in it (struct xucx_stats; sub-teams of a hierarchy
 * print theirs too, with the parent call's sequence).
 */
static void xucx_release(struct dfg_xport *x)
{
	struct xucx *s = to_xucx(x);
	struct xucx_stats *t = &s->st;
	char buf[256];

	xucx_rkeys_drop(s);
	if (!t->on)
		return;
	snprintf(buf, sizeof(buf),
		 "dfg-trace ucx rank=%u size=%u seq=%llu call us=%.1f req_wait_us=%.1f word_wait_us=%.1f get=%u put=%u amo=%u famo=%u flush=%u send=%u recv=%u rounds=%lu naps=%lu\n",
		 x->rank, x->size, (unsigned long long)x->seq,
		 (dfg_coll_now_ns(CLOCK_MONOTONIC) - t->t0) / 1e3,
		 t->req_ns / 1e3, t->word_ns / 1e3, t->get, t->put, t->amo,
		 t->famo, t->flush, t->send, t->recv, t->rounds, t->naps);
	fputs(buf, stderr);
	fflush(stderr);
	*t = (struct xucx_stats){ .on = true,
				  .t0 = dfg_coll_now_ns(CLOCK_MONOTONIC) };
}

/* @peer's key @key unpacked: cached, or read from its key table. */
static int xucx_rkey(struct xucx *s, unsigned int peer,
		     const struct dfg_xkey *key, ucp_rkey_h *out)
{
	ucp_request_param_t p = { 0 };
	struct xucx_kent k;
	ucp_rkey_h rkey;
	ucs_status_t st;
	int ret;

	if (key->kind != DFG_XKEY_UCX || key->id >= XUCX_KEYS)
		return -EINVAL;
	for (unsigned int i = 0; i < s->nr_rk; i++) {
		struct xucx_rkey *r = &s->rk[i];

		if (r->peer != peer || r->id != key->id)
			continue;
		if (r->gen == key->gen) {
			*out = r->rkey;
			return 0;
		}
		/* A slot the peer reused: the old key is gone. */
		xucx_rkey_drop(s, i);
		break;
	}
	ret = xucx_err_peer(s, xucx_wait_req(s, ucp_get_nbx(s->eps[peer], &k,
				sizeof(k), s->peer_ctl[peer] +
				xucx_kents_off(s) + key->id * sizeof(k),
				s->peer_rkey[peer], &p)), peer);
	if (ret)
		return ret;
	if (k.gen != key->gen || k.len != key->len ||
	    k.rlen > XUCX_RKEY_MAX)
		return -EINVAL;
	st = ucp_ep_rkey_unpack(s->eps[peer], k.rkey, &rkey);
	if (st != UCS_OK)
		return xucx_err_peer(s, st, peer);
	if (s->nr_rk == XUCX_RKEYS_MAX) {
		xucx_rkeys_drop(s);
		if (s->nr_rk == XUCX_RKEYS_MAX)
			xucx_rkey_drop(s, 0);
	}
	s->rk[s->nr_rk++] = (struct xucx_rkey){
		.peer = peer, .id = key->id, .gen = key->gen,
		.keep = key->flags & DFG_XKEY_F_KEEP, .rkey = rkey,
	};
	*out = rkey;
	return 0;
}

static void *xucx_peer_ptr(struct dfg_xport *x, unsigned int peer,
			   const struct dfg_xkey *key, size_t off, size_t len,
			   int *err)
{
	*err = 0;
	if (peer != x->rank)
		return NULL;
	/* Our own memory: the key knows its address. */
	if (key->kind != DFG_XKEY_UCX) {
		*err = -EINVAL;
		return NULL;
	}
	if (off > key->len || len > key->len - off) {
		*err = -ERANGE;
		return NULL;
	}
	return (char *)(uintptr_t)key->addr + off;
}

static int xucx_rma(struct xucx *s, bool put, unsigned int peer,
		    const struct dfg_xkey *key, size_t off, void *local,
		    size_t len)
{
	ucp_request_param_t p = { 0 };
	ucp_rkey_h rkey = NULL;
	void *req;
	int ret;

	if (peer >= s->x.size)
		return -EINVAL;
	if (s->broken)
		return s->broken;
	if (put && !(key->flags & DFG_XKEY_F_WRITE))
		return -EPERM;
	if (off > key->len || len > key->len - off)
		return -ERANGE;
	ret = xucx_rkey(s, peer, key, &rkey);
	if (ret)
		return ret;
	s->st.put += put;
	s->st.get += !put;
	if (put)
		req = ucp_put_nbx(s->eps[peer], local, len, key->addr + off,
				  rkey, &p);
	else
		req = ucp_get_nbx(s->eps[peer], local, len, key->addr + off,
				  rkey, &p);
	if (UCS_PTR_IS_ERR(req))
		return xucx_err_peer(s, UCS_PTR_STATUS(req), peer);
	s->unflushed[peer] |= put;
	ret = xucx_push(s, req, peer);
	if (ret < 0) {
		/* No ticket to hand out: finish it here. */
		int err = xucx_err_peer(s, xucx_wait_req(s, req), peer);

		return err ? err : ret;
	}
	return ret;
}

static int xucx_get(struct dfg_xport *x, unsigned int peer,
		    const struct dfg_xkey *key, size_t off, void *local,
		    const struct dfg_xkey *lkey, size_t len)
{
	(void)lkey;	/* UCX registers (and caches) local memory itself */
	return xucx_rma(to_xucx(x), false, peer, key, off, local, len);
}

static int xucx_put(struct dfg_xport *x, unsigned int peer,
		    const struct dfg_xkey *key, size_t off, const void *local,
		    const struct dfg_xkey *lkey, size_t len)
{
	(void)lkey;
	return xucx_rma(to_xucx(x), true, peer, key, off, (void *)local, len);
}

static int xucx_msg_send(struct dfg_xport *x, unsigned int peer,
			 const void *buf, size_t len)
{
	struct xucx *s = to_xucx(x);
	ucp_request_param_t p = { 0 };

	if (peer >= x->size || len > DFG_XPORT_MSG_MAX)
		return -EINVAL;
	if (s->broken)
		return s->broken;
	s->st.send++;
	/* The tag is the sender: per pair FIFO, as tag matching keeps order. */
	return xucx_err_peer(s, xucx_wait_req(s, ucp_tag_send_nbx(s->eps[peer],
				buf, len, x->rank, &p)), peer);
}

static int xucx_msg_recv(struct dfg_xport *x, unsigned int src, void *buf,
			 size_t cap)
{
	struct xucx *s = to_xucx(x);
	/* Always a request: its test tells the length. */
	ucp_request_param_t p = {
		.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
	};
	ucp_tag_recv_info_t info = { 0 };
	unsigned int idle = 0;
	ucs_status_t st;
	void *req;
	int ret;

	if (src >= x->size)
		return -EINVAL;
	if (s->broken)
		return s->broken;
	s->st.recv++;
	req = ucp_tag_recv_nbx(s->w, buf, cap, src, (ucp_tag_t)-1, &p);
	if (UCS_PTR_IS_ERR(req))
		return xucx_err_peer(s, UCS_PTR_STATUS(req), src);
	for (;;) {
		st = ucp_tag_recv_request_test(req, &info);
		if (st != UCS_INPROGRESS)
			break;
		ret = xucx_check(s, src);
		if (ret) {
			ucp_request_cancel(s->w, req);
			while ((st = ucp_tag_recv_request_test(req, &info)) ==
			       UCS_INPROGRESS)
				ucp_worker_progress(s->w);
			/* A message that arrived before the cancel counts. */
			if (st != UCS_OK) {
				ucp_request_free(req);
				return ret;
			}
			break;
		}
		xucx_progress(s, &idle);
	}
	ucp_request_free(req);
	if (st != UCS_OK)
		return xucx_err_peer(s, st, src);
	return (int)info.length;
}

static int xucx_begin(struct dfg_xport *x, __u64 seq)
{
	struct xucx *s = to_xucx(x);
	const char *env = getenv("DFG_COLL_TRACE");

	x->seq = seq;
	s->why_last = 0;
	s->st = (struct xucx_stats){
		.on = env && *env && strcmp(env, "0"),
	};
	if (s->st.on)
		s->st.t0 = dfg_coll_now_ns(CLOCK_MONOTONIC);
	return 0;
}

static int xucx_abort_peers(struct xucx *s, __u64 seq, bool why);

static int xucx_abort(struct dfg_xport *x, __u64 seq)
{
	return xucx_abort_peers(to_xucx(x), seq, false);
}

/*
 * The abort with its reason: the why word goes to every peer's why[me]
 * before the abort's atomic (xucx_add() fences first), so a peer that
 * sees the abort reads the reason.
 */
static int xucx_abort_why(struct dfg_xport *x, __u64 seq, __u64 why)
{
	struct xucx *s = to_xucx(x);

	s->why_out = why;
	return xucx_abort_peers(s, seq, true);
}

/* The reason of our break, or of the abort that failed our last wait. */
static __u64 xucx_why(struct dfg_xport *x, __u64 seq)
{
	struct xucx *s = to_xucx(x);
	unsigned int who;

	if (!s->broken) {
		/*
		 * A peer's message of its next call can fail us (-EPROTO)
		 * before we looked at its abort of this one: look now.
		 */
		for (unsigned int r = 0; r < x->size && seq &&
		     !dfg_xwhy_is_for(s->why_last, seq); r++)
			if (atomic_load_explicit(&s->aborted[r],
						 memory_order_acquire) ==
			    seq)
				s->why_last = atomic_load_explicit(&s->whys[r],
							memory_order_relaxed);
		return dfg_xwhy_is_for(s->why_last, seq) ? s->why_last : 0;
	}
	/*
	 * An endpoint to a peer failed: a dead process closes its liveness
	 * connection at the same moment (its kernel closes the socket),
	 * an unreachable one does not (its connection is found dead only
	 * by timeouts, seconds later; UCX 1.13 reports both as "Endpoint
	 * timeout", so the status does not tell). Settled once.
	 */
	who = dfg_xwhy_rank(s->why_broken);
	if (!s->why_settled &&
	    dfg_xwhy_what(s->why_broken) == DFG_TEAM_FAIL_LINK &&
	    who < x->size && who != x->rank && s->lw) {
		__s64 end = dfg_coll_now_ns(CLOCK_MONOTONIC) + XUCX_DEATH_NS;
		struct timespec nap = { .tv_nsec = XUCX_NAP_NS };

		while (!s->live[who].failed && !s->live[who].left &&
		       dfg_coll_now_ns(CLOCK_MONOTONIC) < end) {
			while (ucp_worker_progress(s->lw))
				;
			nanosleep(&nap, NULL);
		}
		if (s->live[who].failed && !s->live[who].left)
			s->why_broken = dfg_xwhy_pack(DFG_TEAM_FAIL_KILLED,
						      EOWNERDEAD, who, seq);
	}
	s->why_settled = true;
	return s->why_broken;
}

static int xucx_abort_peers(struct xucx *s, __u64 seq, bool why)
{
	struct dfg_xport *x = &s->x;

	if (atomic_load(&s->aborted[x->rank]) < seq)
		atomic_store(&s->aborted[x->rank], seq);
	/* The call's transfers end here: its buffers go back to the user. */
	if (!s->broken)
		xucx_reap(s, 0, true);
	/*
	 * The abort words: posted, not waited for. A flush of them waited
	 * for every peer's progress, and a hierarchy's members sleep in
	 * their machine's kernel team while their leader waits for ours:
	 * in the rig a non-leader's abort waited 79 s on the other
	 * machine's non-leader, until UCX failed an endpoint ("Endpoint
	 * timeout") and broke the team.
	 */
	for (unsigned int r = 0; r < x->size && !s->broken; r++) {
		if (r == x->rank || s->sent_abort[r] >= seq)
			continue;
		if (why && xucx_put_word(s, r, xucx_whys_off(s, x->rank),
					 &s->why_out))
			break;
		if (xucx_add(s, r, xucx_aborted_off(s, x->rank),
			     seq - s->sent_abort[r], true))
			break;
		s->sent_abort[r] = seq;
	}
	/* Broken (before or meanwhile): the peers break too. */
	if (s->broken)
		xucx_live_poll(s, true);
	return 0;
}

/*
 * A rank that waits elsewhere (xport.h): what is pending here, done. A
 * peer's first use of the endpoint to us (UCX connects endpoints at
 * their first use) needs our answers: in the loaded rig a non-leader
 * that slept in its machine's kernel team for seconds let a peer's
 * endpoint to it time out ("Endpoint timeout"), which broke the team.
 */
static void xucx_idle(struct dfg_xport *x)
{
	struct xucx *s = to_xucx(x);

	while (ucp_worker_progress(s->w))
		;
	xucx_live_poll(s, false);
}

static int xucx_broken(struct dfg_xport *x)
{
	struct xucx *s = to_xucx(x);

	/* Lets a death found by the keepalive reach us between calls. */
	ucp_worker_progress(s->w);
	xucx_live_poll(s, true);
	return s->broken;
}

/*
 * Until every request in @reqs[@n] (NULL: none) completes or @end_ns
 * passes: progress @w, free what completed. True when all did.
 */
static bool xucx_reqs_wait(ucp_worker_h w, void **reqs, unsigned int n,
			   __s64 end_ns)
{
	bool pending = true;

	while (pending) {
		pending = false;
		ucp_worker_progress(w);
		for (unsigned int r = 0; r < n; r++) {
			if (!reqs[r])
				continue;
			if (ucp_request_check_status(reqs[r]) !=
			    UCS_INPROGRESS) {
				ucp_request_free(reqs[r]);
				reqs[r] = NULL;
			} else {
				pending = true;
			}
		}
		if (pending && dfg_coll_now_ns(CLOCK_MONOTONIC) > end_ns)
			return false;
	}
	return true;
}

/*
 * Close @eps[@n] of worker @w (NULL entries skipped): flushing while the
 * peers live, else (@force) at once; a peer that stopped answering is
 * given up after XUCX_CLOSE_NS.
 */
static void xucx_close_eps(ucp_worker_h w, ucp_ep_h *eps, unsigned int n,
			   bool force)
{
	ucp_request_param_t p = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
		.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0,
	};
	void **reqs = calloc(n, sizeof(*reqs));
	__s64 end;

	for (unsigned int r = 0; r < n; r++) {
		void *req = eps[r] ? ucp_ep_close_nbx(eps[r], &p) : NULL;

		eps[r] = NULL;
		if (!UCS_PTR_IS_PTR(req))
			continue;
		if (reqs) {
			reqs[r] = req;
			continue;
		}
		/* No room to track it: this one alone, bounded. */
		end = dfg_coll_now_ns(CLOCK_MONOTONIC) + XUCX_CLOSE_NS;
		if (!xucx_reqs_wait(w, &req, 1, end)) {
			ucp_request_cancel(w, req);
			ucp_request_free(req);
		}
	}
	end = dfg_coll_now_ns(CLOCK_MONOTONIC) + XUCX_CLOSE_NS;
	if (reqs && !xucx_reqs_wait(w, reqs, n, end)) {
		for (unsigned int r = 0; r < n; r++) {
			if (!reqs[r])
				continue;
			ucp_request_cancel(w, reqs[r]);
			ucp_request_free(reqs[r]);
		}
	}
	free(reqs);
}

/*
 * Goodbye to every peer on the liveness connections: we leave in order,
 * or (broken, and not said yet) the team broke here.
 */
static void xucx_live_bye(struct xucx *s)
{
	if (!s->lw || s->told)
		return;
	s->told = true;
	xucx_live_send(s, s->broken ? s->why_broken : XUCX_BYE_LEAVE);
}

static void xucx_live_destroy(struct xucx *s)
{
	if (s->lw) {
		for (unsigned int r = 0; s->live && r < s->x.size; r++) {
			if (!s->live[r].bye)
				continue;
			ucp_request_cancel(s->lw, s->live[r].bye);
			ucp_request_free(s->live[r].bye);
		}
		if (s->leps)
			xucx_close_eps(s->lw, s->leps, s->x.size, s->broken);
		ucp_worker_destroy(s->lw);
	}
	if (s->lctx)
		ucp_cleanup(s->lctx);
	free(s->leps);
	free(s->live);
}

static void xucx_destroy(struct dfg_xport *x)
{
	struct xucx *s = to_xucx(x);

	if (s->w) {
		xucx_flush(x);
		while (s->nr_rk)
			xucx_rkey_drop(s, 0);
		for (unsigned int r = 0; s->peer_rkey && r < x->size; r++)
			if (s->peer_rkey[r])
				ucp_rkey_destroy(s->peer_rkey[r]);
		xucx_live_bye(s);
		if (s->eps)
			xucx_close_eps(s->w, s->eps, s->nr_eps, s->broken);
		for (unsigned int i = 0; i < XUCX_KEYS; i++)
			if (s->lk[i].used)
				ucp_mem_unmap(s->ctx, s->lk[i].memh);
		if (s->ctl_memh)
			ucp_mem_unmap(s->ctx, s->ctl_memh);
		ucp_worker_destroy(s->w);
	}
	if (s->ctx)
		ucp_cleanup(s->ctx);
	xucx_live_destroy(s);
	if (s->ctl)
		munmap(s->ctl, s->ctl_len);
	if (s->nl >= 0)
		close(s->nl);
	free(s->ops);
	free(s->eps);
	free(s->peer_ctl);
	free(s->peer_rkey);
	free(s->sent);
	free(s->sent_abort);
	free(s->node);
	free(s->token);
	free(s->unflushed);
	free(s);
}

static const struct dfg_xport_ops xucx_ops = {
	.name		= "ucx",
	.msg_buffered	= true,
	.expose		= xucx_expose,
	.unexpose	= xucx_unexpose,
	.peer_ptr	= xucx_peer_ptr,
	.get		= xucx_get,
	.put		= xucx_put,
	.complete	= xucx_complete,
	.in_flight	= xucx_in_flight,
	.flush		= xucx_flush,
	.fence		= xucx_fence,
	.complete_local	= xucx_complete_local,
	.wait_eq	= xucx_wait_eq,
	.notify		= xucx_notify,
	.fadd		= xucx_fadd,
	.wait		= xucx_wait,
	.peek		= xucx_peek,
	.msg_send	= xucx_msg_send,
	.msg_recv	= xucx_msg_recv,
	.begin		= xucx_begin,
	.abort		= xucx_abort,
	.abort_why	= xucx_abort_why,
	.why		= xucx_why,
	.broken		= xucx_broken,
	.progress	= xucx_idle,
	.release	= xucx_release,
	.destroy	= xucx_destroy,
};

/*
 * Failure detection, where the user's environment does not say: with
 * UCX's defaults a dead peer over verbs is found by UD's peer timeout,
 * 30 s; these keep the bound DESIGN.md states ("Across machines").
 * RC's own retry timeout stays UCX's (1 s, 7 retries): shorter ones broke
 * live connections in the loaded TCG rig, large reads over rxe taking
 * longer than 200 ms to be acknowledged. UD's 2 s did too, once, during
 * wireup (a guest that did not run for 2 s): 5 s.
 */
static const struct {
	const char	*name;
	const char	*value;
	bool		verbs;	/* set only where there is a verbs device
				 * (UCX warns about settings it cannot use) */
} xucx_defaults[] = {
	{ "UCX_KEEPALIVE_INTERVAL", "500ms", false },
	{ "UCX_UD_VERBS_TIMEOUT", "5s", true },
};

static int xucx_init(struct xucx *s)
{
	ucp_params_t up = {
		.field_mask = UCP_PARAM_FIELD_FEATURES |
			      UCP_PARAM_FIELD_ESTIMATED_NUM_EPS,
		.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO64 |
			    UCP_FEATURE_TAG,
		.estimated_num_eps = s->x.size,
	};
	ucp_worker_params_t wp = {
		.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
		.thread_mode = UCS_THREAD_MODE_SINGLE,
	};
	bool verbs = access("/sys/class/infiniband", F_OK) == 0;
	ucp_config_t *cfg;
	ucs_status_t st;

	/*
	 * Transport settings reach UCX only through the environment
	 * (ucp_config_modify() keeps them from the transports in 1.13):
	 * set where unset, before UCX reads them.
	 */
	for (size_t i = 0; i < sizeof(xucx_defaults) / sizeof(*xucx_defaults);
	     i++)
		if (!xucx_defaults[i].verbs || verbs)
			setenv(xucx_defaults[i].name, xucx_defaults[i].value,
			       0);
	st = ucp_config_read(NULL, NULL, &cfg);
	if (st != UCS_OK)
		return -EIO;
	st = ucp_init(&up, cfg, &s->ctx);
	ucp_config_release(cfg);
	if (st != UCS_OK)
		return st == UCS_ERR_NO_MEMORY ? -ENOMEM : -ENODEV;
	st = ucp_worker_create(s->ctx, &wp, &s->w);
	if (st != UCS_OK)
		return st == UCS_ERR_NO_MEMORY ? -ENOMEM : -ENODEV;
	return 0;
}

/*
 * The interfaces the liveness connections may use, for UCX_NET_DEVICES:
 * every one that is up, loopback only when there is nothing else (a
 * loopback address would reach this machine, not the peer's).
 */
static void xucx_live_devices(char *buf, size_t cap)
{
	struct ifaddrs *ifa, *i;
	size_t len = 0;

	buf[0] = '\0';
	if (getifaddrs(&ifa))
		ifa = NULL;
	for (i = ifa; i; i = i->ifa_next) {
		const char *n = i->ifa_name;
		size_t nl = strlen(n);
		char *hit;

		if (!i->ifa_addr || !(i->ifa_flags & IFF_UP) ||
		    (i->ifa_flags & IFF_LOOPBACK) ||
		    (i->ifa_addr->sa_family != AF_INET &&
		     i->ifa_addr->sa_family != AF_INET6))
			continue;
		/* One entry per interface, whatever its addresses. */
		hit = strstr(buf, n);
		if (hit && (hit == buf || hit[-1] == ',') &&
		    (hit[nl] == ',' || !hit[nl]))
			continue;
		if (len + nl + 2 > cap)
			break;
		len += snprintf(buf + len, cap - len, "%s%s", len ? "," : "",
				n);
	}
	if (ifa)
		freeifaddrs(ifa);
	if (!len)
		snprintf(buf, cap, "lo");
}

/* The liveness context: TCP only, tags only, its own worker. */
static int xucx_live_init(struct xucx *s)
{
	ucp_params_t up = {
		.field_mask = UCP_PARAM_FIELD_FEATURES,
		.features = UCP_FEATURE_TAG,
	};
	ucp_worker_params_t wp = {
		.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
		.thread_mode = UCS_THREAD_MODE_SINGLE,
	};
	char devs[256];
	ucp_config_t *cfg;
	ucs_status_t st;

	s->leps = calloc(s->x.size, sizeof(*s->leps));
	s->live = calloc(s->x.size, sizeof(*s->live));
	if (!s->leps || !s->live)
		return -ENOMEM;
	xucx_live_devices(devs, sizeof(devs));
	if (ucp_config_read(NULL, NULL, &cfg) != UCS_OK)
		return -EIO;
	/* Both are context settings: ucp_config_modify() reaches them. */
	st = ucp_config_modify(cfg, "TLS", "tcp");
	if (st == UCS_OK)
		st = ucp_config_modify(cfg, "NET_DEVICES", devs);
	if (st == UCS_OK)
		st = ucp_init(&up, cfg, &s->lctx);
	ucp_config_release(cfg);
	if (st != UCS_OK)
		return st == UCS_ERR_NO_MEMORY ? -ENOMEM : -ENODEV;
	st = ucp_worker_create(s->lctx, &wp, &s->lw);
	if (st != UCS_OK) {
		s->lw = NULL;
		return st == UCS_ERR_NO_MEMORY ? -ENOMEM : -ENODEV;
	}
	return 0;
}

/* Map and register the control area. */
static int xucx_ctl(struct xucx *s)
{
	ucp_mem_map_params_t mp = {
		.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
			      UCP_MEM_MAP_PARAM_FIELD_LENGTH,
	};
	int saved = errno, ret;

	s->nwords = DFG_XPORT_WORDS(s->x.size);
	s->ctl_len = xucx_kents_off(s) + XUCX_KEYS * sizeof(struct xucx_kent);
	s->ctl = mmap(NULL, s->ctl_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->ctl == MAP_FAILED) {
		ret = -errno;
		errno = saved;
		s->ctl = NULL;
		return ret;
	}
	s->words = s->ctl;
	s->aborted = (_Atomic __u64 *)s->ctl + s->nwords;
	s->whys = s->aborted + s->x.size;
	s->kents = (struct xucx_kent *)((char *)s->ctl + xucx_kents_off(s));
	mp.address = s->ctl;
	mp.length = s->ctl_len;
	if (ucp_mem_map(s->ctx, &mp, &s->ctl_memh) != UCS_OK) {
		s->ctl_memh = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * This machine, for the hierarchy: DFG_TEAM_NODE when set (tests make one
 * machine look like several) unless @host, else the kernel's boot id; ""
 * when neither is there (the rank is then a machine of its own).
 */
static void xucx_node_id(char id[DFG_XPORT_NODE_MAX], bool host)
{
	const char *env = host ? NULL : getenv("DFG_TEAM_NODE");
	FILE *f;

	memset(id, 0, DFG_XPORT_NODE_MAX);
	if (env) {
		snprintf(id, DFG_XPORT_NODE_MAX, "env:%s", env);
		return;
	}
	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (!f)
		return;
	if (!fgets(id, DFG_XPORT_NODE_MAX, f))
		id[0] = '\0';
	id[strcspn(id, "\n")] = '\0';
	fclose(f);
}

int dfg_xport_ucx_node(struct dfg_xport *x, unsigned int rank,
		       const char **node, __u64 *token)
{
	struct xucx *s = to_xucx(x);

	if (x->ops != &xucx_ops || rank >= x->size)
		return -EINVAL;
	*node = s->node[rank];
	*token = s->token[rank];
	return 0;
}

/* Exchange worker addresses and control keys; connect to every rank. */
static int xucx_connect(struct xucx *s, dfg_allgather_fn ag, void *arg)
{
	unsigned int n = s->x.size;
	ucp_address_t *addr = NULL, *laddr = NULL;
	size_t alen = 0, rlen = 0, llen = 0, blen, max = 0;
	char host[DFG_XPORT_NODE_MAX];
	unsigned int here = 0;
	struct xucx_boot b;
	void *rbuf = NULL;
	__u32 *lens = NULL;
	char *mine = NULL, *all = NULL;
	int ret = -ENOMEM;

	if (ucp_worker_get_address(s->w, &addr, &alen) != UCS_OK)
		return -EIO;
	if (ucp_worker_get_address(s->lw, &laddr, &llen) != UCS_OK) {
		laddr = NULL;
		ret = -EIO;
		goto out;
	}
	if (ucp_rkey_pack(s->ctx, s->ctl_memh, &rbuf, &rlen) != UCS_OK) {
		ret = -EIO;
		goto out;
	}
	blen = sizeof(b) + rlen + alen + llen;
	lens = calloc(n, sizeof(*lens));
	s->eps = calloc(n, sizeof(*s->eps));
	s->peer_ctl = calloc(n, sizeof(*s->peer_ctl));
	s->peer_rkey = calloc(n, sizeof(*s->peer_rkey));
	s->sent = calloc((size_t)n * DFG_XPORT_SLOTS, sizeof(*s->sent));
	s->sent_abort = calloc(n, sizeof(*s->sent_abort));
	s->unflushed = calloc(n, sizeof(*s->unflushed));
	s->node = calloc(n, sizeof(*s->node));
	s->token = calloc(n, sizeof(*s->token));
	if (!lens || !s->eps || !s->peer_ctl || !s->peer_rkey || !s->sent ||
	    !s->sent_abort || !s->node || !s->token || !s->unflushed)
		goto out;
	lens[s->x.rank] = blen;
	ret = ag(&lens[s->x.rank], lens, sizeof(*lens), arg);
	if (ret)
		goto out;
	for (unsigned int r = 0; r < n; r++)
		max = lens[r] > max ? lens[r] : max;
	ret = -ENOMEM;
	mine = calloc(1, max);
	all = calloc(n, max);
	if (!mine || !all)
		goto out;
	b = (struct xucx_boot){
		.ctl = (uintptr_t)s->ctl, .rlen = rlen, .alen = alen,
		.llen = llen,
	};
	xucx_node_id(b.node, false);
	xucx_node_id(b.host, true);
	if (getrandom(&b.token, sizeof(b.token), 0) != sizeof(b.token))
		b.token = (__u64)getpid() << 32 ^ (__u64)dfg_coll_now_ns(
			CLOCK_REALTIME);
	memcpy(host, b.host, sizeof(host));
	memcpy(mine, &b, sizeof(b));
	memcpy(mine + sizeof(b), rbuf, rlen);
	memcpy(mine + sizeof(b) + rlen, addr, alen);
	memcpy(mine + sizeof(b) + rlen + alen, laddr, llen);
	ret = ag(mine, all, max, arg);
	if (ret)
		goto out;
	for (unsigned int r = 0; r < n; r++) {
		const char *e = all + (size_t)r * max;
		ucp_ep_params_t ep = {
			.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
				      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
				      UCP_EP_PARAM_FIELD_ERR_HANDLER,
			.err_mode = UCP_ERR_HANDLING_MODE_PEER,
			.err_handler = { .cb = xucx_ep_error,
					 .arg = &s->live[r] },
		};

		s->live[r].s = s;
		s->live[r].rank = r;
		memcpy(&b, e, sizeof(b));
		if (sizeof(b) + (size_t)b.rlen + b.alen + b.llen != lens[r] ||
		    lens[r] > max) {
			ret = -EPROTO;
			goto out;
		}
		s->peer_ctl[r] = b.ctl;
		b.node[DFG_XPORT_NODE_MAX - 1] = '\0';
		memcpy(s->node[r], b.node, sizeof(b.node));
		b.host[DFG_XPORT_NODE_MAX - 1] = '\0';
		here += !strcmp(b.host, host);
		s->token[r] = b.token;
		ep.address = (const ucp_address_t *)(e + sizeof(b) + b.rlen);
		if (ucp_ep_create(s->w, &ep, &s->eps[r]) != UCS_OK) {
			ret = -ECONNREFUSED;
			goto out;
		}
		s->nr_eps = r + 1;
		if (ucp_ep_rkey_unpack(s->eps[r], e + sizeof(b),
				       &s->peer_rkey[r]) != UCS_OK) {
			s->peer_rkey[r] = NULL;
			ret = -EPROTO;
			goto out;
		}
		if (r == s->x.rank)
			continue;
		/* The liveness connection: errors are its whole point. */
		ep.err_handler.cb = xucx_live_error;
		ep.err_handler.arg = &s->live[r];
		ep.address = (const ucp_address_t *)(e + sizeof(b) + b.rlen +
						     b.alen);
		if (ucp_ep_create(s->lw, &ep, &s->leps[r]) != UCS_OK) {
			s->leps[r] = NULL;
			ret = -ECONNREFUSED;
			goto out;
		}
	}
	s->nap = dfg_coll_crowded(here) || dfg_coll_prev("nap");
	ret = 0;
out:
	free(mine);
	free(all);
	free(lens);
	if (rbuf)
		ucp_rkey_buffer_release(rbuf);
	ucp_worker_release_address(s->w, addr);
	if (laddr)
		ucp_worker_release_address(s->lw, laddr);
	return ret;
}

/*
 * Every rank says hello to every other on the liveness connections and
 * waits for theirs (at most @timeout_ms; < 0 for ever): once it returns
 * 0 the connections are up, and a peer's death closes them. Then the
 * receives of the goodbyes are posted.
 */
static int xucx_live_hello(struct xucx *s, int timeout_ms)
{
	ucp_request_param_t p = { 0 };
	static const unsigned char hello;
	unsigned int n = s->x.size;
	unsigned char *got;
	void **reqs;
	__s64 end = INT64_MAX;
	int ret = 0;

	if (timeout_ms >= 0)
		end = dfg_coll_now_ns(CLOCK_MONOTONIC) +
		      timeout_ms * 1000000LL;
	reqs = calloc(2 * (size_t)n, sizeof(*reqs));
	got = calloc(n, 1);
	if (!reqs || !got) {
		ret = -ENOMEM;
		goto out;
	}
	for (unsigned int r = 0; r < n; r++) {
		void *req;

		if (r == s->x.rank)
			continue;
		req = ucp_tag_recv_nbx(s->lw, &got[r], 1, XUCX_TAG_HELLO | r,
				       (ucp_tag_t)-1, &p);
		if (UCS_PTR_IS_ERR(req)) {
			ret = -EIO;
			goto out;
		}
		reqs[r] = UCS_PTR_IS_PTR(req) ? req : NULL;
		req = ucp_tag_send_nbx(s->leps[r], &hello, 1,
				       XUCX_TAG_HELLO | s->x.rank, &p);
		if (UCS_PTR_IS_ERR(req)) {
			ret = -EOWNERDEAD;
			goto out;
		}
		reqs[n + r] = UCS_PTR_IS_PTR(req) ? req : NULL;
	}
	while (!xucx_reqs_wait(s->lw, reqs, 2 * n,
			       dfg_coll_now_ns(CLOCK_MONOTONIC) + XUCX_LIVE_NS)) {
		/* A peer that died while we formed: no need to wait on. */
		for (unsigned int r = 0; r < n && !ret; r++) {
			if (!s->live[r].failed)
				continue;
			ret = -EOWNERDEAD;
			dfg_join_why_set(dfg_xwhy_pack(DFG_TEAM_FAIL_KILLED,
						       ret, r, 0));
		}
		if (!ret && dfg_coll_now_ns(CLOCK_MONOTONIC) > end) {
			/* Which rank never said hello: the lowest. */
			unsigned int r = 0;

			while (r < n && !reqs[r])
				r++;
			ret = -ETIMEDOUT;
			dfg_join_why_set(dfg_xwhy_pack(DFG_TEAM_FAIL_TIMEOUT,
						       ret, r < n ? r :
						       DFG_XWHY_NOBODY, 0));
		}
		if (ret)
			goto out;
	}
	for (unsigned int r = 0; r < n; r++) {
		void *req;

		if (r == s->x.rank)
			continue;
		if (s->live[r].failed) {
			ret = -EOWNERDEAD;
			goto out;
		}
		req = ucp_tag_recv_nbx(s->lw, &s->live[r].word,
				       sizeof(s->live[r].word),
				       XUCX_TAG_BYE | r, (ucp_tag_t)-1, &p);
		if (UCS_PTR_IS_ERR(req)) {
			ret = -EIO;
			goto out;
		}
		/* Already here: a peer that left as soon as it joined. */
		if (UCS_PTR_IS_PTR(req))
			s->live[r].bye = req;
		else
			xucx_live_left(s, &s->live[r]);
	}
out:
	/* Left over on failure: cancelled (sends end with the endpoints). */
	for (unsigned int r = 0; reqs && r < 2 * n; r++) {
		if (!reqs[r])
			continue;
		if (r < n)
			ucp_request_cancel(s->lw, reqs[r]);
		ucp_request_free(reqs[r]);
	}
	free(reqs);
	free(got);
	return ret;
}

int dfg_xport_ucx_naps(struct dfg_xport *x, bool *nap, unsigned long *naps)
{
	struct xucx *s = to_xucx(x);

	if (x->ops != &xucx_ops)
		return -EINVAL;
	*nap = s->nap;
	*naps = atomic_load_explicit(&s->naps, memory_order_relaxed);
	return 0;
}

int dfg_xport_ucx_create(unsigned int size, unsigned int rank,
			 dfg_allgather_fn ag, void *arg, int timeout_ms,
			 struct dfg_xport **out)
{
	struct xucx *s;
	int ret;

	if (!size || rank >= size || !ag || !out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->x = (struct dfg_xport){ .ops = &xucx_ops, .rank = rank,
				   .size = size };
	s->nl = -1;
	ret = xucx_init(s);
	if (!ret)
		ret = xucx_live_init(s);
	if (!ret)
		ret = xucx_ctl(s);
	if (!ret)
		ret = xucx_connect(s, ag, arg);
	if (!ret)
		ret = xucx_live_hello(s, timeout_ms);
	if (!ret)
		xucx_links_watch(s);
	if (ret) {
		/*
		 * Peers that never came answer no orderly close: force it.
		 * Those that did find our connections closed: no goodbye.
		 */
		s->broken = ret;
		s->told = true;
		xucx_destroy(&s->x);
		return ret;
	}
	*out = &s->x;
	return 0;
}
