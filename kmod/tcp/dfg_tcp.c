// SPDX-License-Identifier: GPL-2.0
/*
 * dfg_tcp.c - dfg_tcp.ko, the kernel TCP transport of dfg.ko's prefetch
 * (see kmod/pf_xport.h), for machines without an RDMA device. It stands in
 * for dfg_rdma.ko: dfg.ko takes one transport at a time (the second to
 * load gets -EBUSY), and both machines of a pair must load the same one.
 * The protocol is in dfg_tcp_wire.h.
 *
 * Server side: a listening socket on port dfg_tcp.port (IPv6 with
 * IPv4-mapped addresses, so both families; IPv4 only where the kernel has
 * no IPv6), accepted by a work item. Each connection pins this machine's
 * partition image (dfg_pf_serve_get()), says what it serves, and is then
 * served by a work item of its own: it receives what requests are there
 * (each a list of at most DFG_TCP_LIST_MAX extents), checks every extent
 * of one against the image and sends the answer's header and the
 * extents' bytes in one sendmsg (a kvec into the image: no bounce
 * buffer). What a client can make it hold is bounded: at most
 * dfg_tcp.max_conns connections (one more is told DFG_TCP_BUSY and
 * closed), two requests' room and one kvec each, answers taken from the
 * pinned image, never copied; a request that is not one (any of its
 * extents outside the image) ends its connection before any of it is
 * answered, and so does half a request
 * left for dfg_tcp.stall_ms or an answer that the client does not take
 * for as long (up to twice: a send that moved some bytes waits again).
 * Those are counted in /sys/module/dfg_tcp/stats/.
 *
 * Client side (->connect, from DFG_IOC_PEER_ADD): connect within the
 * caller's timeout, read the hello. ->read makes the batch of reads it
 * is given into requests of at most DFG_TCP_LIST_MAX reads (one for a
 * PREFETCH's reads toward this peer unless there are more), queues them
 * and kicks the connection's send work, which sends what is queued (up
 * to DFG_TCP_SBUF bytes of requests per sendmsg); the connection's
 * receive work takes each answer, in order, with one recvmsg straight
 * into its reads' destinations (a kvec of them) and completes them. An
 * answer cut short fails every read of its request. A dead link is
 * noticed by TCP: keepalive after
 * DFG_TCP_KEEPIDLE s of silence, every DFG_TCP_KEEPINTVL s, and
 * TCP_USER_TIMEOUT (dfg_tcp.user_timeout_ms, 5 s, about dfg_rdma.ko's
 * 4.3 s) for data or probes left unanswered, so a peer that dies or whose
 * link goes down fails every read in flight within about user_timeout_ms
 * + 1 s; one that closes (its module unloaded, its machine rebooted) fails
 * them at once. Either way dfg.ko hears dfg_pf_peer_lost() first, then
 * every read ends.
 *
 * Objects and locks (lock order: the table in kmod/dfg.h)
 *   dfg_tcp_srv	one served connection, on dfg_tcp_srvs under
 *			dfg_tcp_lock (mutex: the list and dfg_tcp_stopping,
 *			so the module's exit shuts down every socket a work
 *			still uses); its work frees it, and destroy_workqueue()
 *			at exit waits for every such work.
 *   dfg_tcp_conn	one connection to a peer, owned by dfg.ko from
 *			->connect to ->disconnect. ->lock (spinlock, process
 *			context: ->read, the send and receive works) guards
 *			the request lists, ->nreads, ->tag, ->dead and
 *			->closing.
 *   dfg_tcp_batch	one request: its dfg_pf_reads, queued or sent; on a
 *			list it is the connection's, off the lists the one
 *			work that took it off owns it, and frees it once
 *			dfg_pf_read_done() is called for each of its reads.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/tcp.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include <net/sock.h>

#include "pf_xport.h"
#include "dfg_tcp_wire.h"

static unsigned short dfg_tcp_port = DFG_PF_PORT;
module_param_named(port, dfg_tcp_port, ushort, 0444);
MODULE_PARM_DESC(port, "TCP port the module listens on");

static unsigned int dfg_tcp_max_conns = 64;
module_param_named(max_conns, dfg_tcp_max_conns, uint, 0444);
MODULE_PARM_DESC(max_conns, "most connections served at once (1..256)");

static unsigned int dfg_tcp_user_timeout_ms = 5000;
module_param_named(user_timeout_ms, dfg_tcp_user_timeout_ms, uint, 0644);
MODULE_PARM_DESC(user_timeout_ms,
		 "a silent peer's connection fails after this (TCP_USER_TIMEOUT)");

static unsigned int dfg_tcp_stall_ms = 10000;
module_param_named(stall_ms, dfg_tcp_stall_ms, uint, 0644);
MODULE_PARM_DESC(stall_ms,
		 "a client that leaves half a request or an answer this long is dropped");

#define DFG_TCP_KEEPIDLE	2	/* s of silence before keepalive */
#define DFG_TCP_KEEPINTVL	1	/* s between keepalive probes */
#define DFG_TCP_READS_MAX	65536	/* reads queued or sent per peer */
/* The longest request, header and list. */
#define DFG_TCP_REQ_MAX		(sizeof(struct dfg_tcp_req) + \
				 DFG_TCP_LIST_MAX * sizeof(struct dfg_tcp_ext))
/* A client's requests per sendmsg: at least the longest. */
#define DFG_TCP_SBUF		(4 * DFG_TCP_REQ_MAX)
#define DFG_TCP_CONNS_LIMIT	256
/* How often an idle server connection looks up (a half request's clock). */
#define DFG_TCP_POLL		(HZ)

/* Counters, /sys/module/dfg_tcp/stats/. */
static atomic_t dfg_tcp_nconns;			/* served now */
static atomic64_t dfg_tcp_accepted;		/* served, ever */
static atomic64_t dfg_tcp_refused;		/* over max_conns or unserved */
static atomic64_t dfg_tcp_dropped;		/* bad or stalled */
static atomic64_t dfg_tcp_requests;		/* answered */
static atomic64_t dfg_tcp_reads;		/* extents of those */
static atomic64_t dfg_tcp_bytes;		/* image bytes sent */
static atomic64_t dfg_tcp_lost;			/* client connections lost */

/* Long-running works: the accept loop and one per served connection. */
static struct workqueue_struct *dfg_tcp_srv_wq;
/* Per peer: its receive work (long-running) and its send work. */
static struct workqueue_struct *dfg_tcp_cli_wq;
static struct socket *dfg_tcp_lsock;
static struct work_struct dfg_tcp_accept;
static DEFINE_MUTEX(dfg_tcp_lock);
static LIST_HEAD(dfg_tcp_srvs);
static bool dfg_tcp_stopping;		/* under dfg_tcp_lock */

/* ---- both sides ---- */

static void dfg_tcp_sock_opts(struct sock *sk)
{
	tcp_sock_set_nodelay(sk);
	sock_set_keepalive(sk);
	tcp_sock_set_keepidle(sk, DFG_TCP_KEEPIDLE);
	tcp_sock_set_keepintvl(sk, DFG_TCP_KEEPINTVL);
	tcp_sock_set_user_timeout(sk, READ_ONCE(dfg_tcp_user_timeout_ms));
}

static void dfg_tcp_timeouts(struct sock *sk, long rcv, long snd)
{
	lock_sock(sk);
	sk->sk_rcvtimeo = rcv;
	sk->sk_sndtimeo = snd;
	release_sock(sk);
}

/*
 * Send all @len bytes of @vec. 0, or a negative errno; -EAGAIN: nothing
 * went for the socket's send timeout.
 */
static int dfg_tcp_send(struct socket *sock, struct kvec *vec, size_t nvec,
			size_t len, int flags)
{
	struct msghdr msg = { .msg_flags = flags | MSG_NOSIGNAL };
	int ret;

	iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, vec, nvec, len);
	while (msg_data_left(&msg)) {
		ret = sock_sendmsg(sock, &msg);
		if (ret <= 0)
			return ret ?: -EPIPE;
	}
	return 0;
}

/*
 * Receive what is there, up to @len bytes, waiting for the first (at most
 * the socket's receive timeout: -EAGAIN); 0 at the end of the stream.
 */
static int dfg_tcp_recv_some(struct socket *sock, void *buf, size_t len)
{
	struct kvec v = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {};

	iov_iter_kvec(&msg.msg_iter, ITER_DEST, &v, 1, len);
	return sock_recvmsg(sock, &msg, MSG_NOSIGNAL);
}

/*
 * Receive exactly @len bytes into @vec; 0, or a negative errno
 * (-ECONNRESET: end).
 */
static int dfg_tcp_recvv(struct socket *sock, struct kvec *vec, size_t nvec,
			 size_t len)
{
	struct msghdr msg = {};
	int ret;

	iov_iter_kvec(&msg.msg_iter, ITER_DEST, vec, nvec, len);
	while (msg_data_left(&msg)) {
		ret = sock_recvmsg(sock, &msg, MSG_WAITALL | MSG_NOSIGNAL);
		if (ret <= 0)
			return ret ?: -ECONNRESET;
	}
	return 0;
}

static int dfg_tcp_recv(struct socket *sock, void *buf, size_t len)
{
	struct kvec v = { .iov_base = buf, .iov_len = len };

	return dfg_tcp_recvv(sock, &v, 1, len);
}

/* ---- server side ---- */

struct dfg_tcp_srv {
	struct list_head	node;
	struct socket		*sock;
	struct dfg_pf_served	part;
	struct work_struct	work;
	unsigned int		have;	/* bytes in ->buf */
	/* An answer: its header, then an extent of the image each. */
	struct kvec		vec[1 + DFG_TCP_LIST_MAX];
	/* Requests as they came; whole ones are answered and go. */
	u8			buf[2 * DFG_TCP_REQ_MAX]
				__aligned(8);	/* read as struct dfg_tcp_req */
};

static void dfg_tcp_hello_fill(struct dfg_tcp_hello *h,
			       const struct dfg_part_hdr *p, u32 status)
{
	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_le32(DFG_TCP_MAGIC_HELLO);
	h->version = cpu_to_le32(DFG_TCP_VERSION);
	h->status = cpu_to_le32(status);
	if (!p)
		return;
	h->feat_bytes = cpu_to_le32(p->feat_bytes);
	h->node_first = cpu_to_le64(p->node_first);
	h->node_count = cpu_to_le64(p->node_count);
	h->row_off = cpu_to_le64(p->row_off);
	h->col_off = cpu_to_le64(p->col_off);
	h->col_count = cpu_to_le64(p->col_count);
	h->feat_off = cpu_to_le64(p->feat_off);
	h->image_bytes = cpu_to_le64(p->image_bytes);
	h->part_set = cpu_to_le64(p->part_set);
}

/* Tell a fresh connection no, without waiting for it, and close it. */
static void dfg_tcp_refuse(struct socket *sock, u32 status)
{
	struct dfg_tcp_hello h;
	struct kvec v = { .iov_base = &h, .iov_len = sizeof(h) };

	dfg_tcp_hello_fill(&h, NULL, status);
	dfg_tcp_send(sock, &v, 1, sizeof(h), MSG_DONTWAIT);
	atomic64_inc(&dfg_tcp_refused);
	sock_release(sock);
}

/*
 * The length of the whole request at @buf (@left bytes there), 0 if it is
 * not whole yet, -EPROTO if it cannot be one.
 */
static long dfg_tcp_req_len(const u8 *buf, unsigned int left)
{
	const struct dfg_tcp_req *q = (const void *)buf;
	size_t need;
	u32 n;

	if (left < sizeof(*q))
		return 0;
	n = le32_to_cpu(q->count);
	if (le32_to_cpu(q->magic) != DFG_TCP_MAGIC_REQ || !n ||
	    n > DFG_TCP_LIST_MAX)
		return -EPROTO;
	need = sizeof(*q) + n * sizeof(struct dfg_tcp_ext);
	return left < need ? 0 : need;
}

/*
 * Answer the request at @q: every extent checked against the image
 * first, then header and bytes in one sendmsg (@more: another whole
 * request follows, so TCP may fill its segments).
 */
static int dfg_tcp_srv_one(struct dfg_tcp_srv *s,
			   const struct dfg_tcp_req *q, bool more)
{
	const struct dfg_tcp_ext *x = (const void *)(q + 1);
	u32 i, n = le32_to_cpu(q->count);
	struct dfg_tcp_resp a = {
		.magic	= cpu_to_le32(DFG_TCP_MAGIC_RESP),
		.tag	= q->tag,
		.count	= q->count,
	};
	u64 bytes = 0;
	int ret;

	for (i = 0; i < n; i++) {
		u64 off = le64_to_cpu(x[i].off);
		u32 len = le32_to_cpu(x[i].len);

		/* The image is s->part.bytes long; nothing outside goes. */
		if (!len || x[i].pad || off > s->part.bytes ||
		    len > s->part.bytes - off)
			return -EPROTO;
		s->vec[i + 1].iov_base = s->part.image + off;
		s->vec[i + 1].iov_len = len;
		bytes += len;
	}
	a.bytes = cpu_to_le64(bytes);
	s->vec[0].iov_base = &a;
	s->vec[0].iov_len = sizeof(a);
	ret = dfg_tcp_send(s->sock, s->vec, n + 1, sizeof(a) + bytes,
			   more ? MSG_MORE : 0);
	if (ret)
		return ret;
	atomic64_inc(&dfg_tcp_requests);
	atomic64_add(n, &dfg_tcp_reads);
	atomic64_add(bytes, &dfg_tcp_bytes);
	return 0;
}

/* Answer every whole request in s->buf; keep the rest. */
static int dfg_tcp_srv_answer(struct dfg_tcp_srv *s, bool *took)
{
	unsigned int at = 0;
	long len, next;
	int ret;

	len = dfg_tcp_req_len(s->buf, s->have);
	while (len > 0) {
		next = dfg_tcp_req_len(s->buf + at + len, s->have - at - len);
		ret = dfg_tcp_srv_one(s, (const void *)(s->buf + at),
				      next > 0);
		if (ret)
			return ret;
		at += len;
		len = next;
	}
	if (len < 0)
		return len;
	*took = at > 0;
	s->have -= at;
	memmove(s->buf, s->buf + at, s->have);
	return 0;
}

/*
 * Serve one connection until it ends: 0 when the client closed it or the
 * module ends it, a negative errno when it is dropped.
 */
static int dfg_tcp_srv_run(struct dfg_tcp_srv *s)
{
	unsigned long partial = jiffies;	/* since when ->buf holds half */
	struct dfg_tcp_hello h;
	struct kvec v = { .iov_base = &h, .iov_len = sizeof(h) };
	bool took;
	int ret;

	dfg_tcp_hello_fill(&h, &s->part.hdr, DFG_TCP_SERVING);
	ret = dfg_tcp_send(s->sock, &v, 1, sizeof(h), 0);
	while (!ret) {
		if (READ_ONCE(dfg_tcp_stopping))
			return 0;
		ret = dfg_tcp_recv_some(s->sock, s->buf + s->have,
					sizeof(s->buf) - s->have);
		if (ret == -EAGAIN) {
			/* Idle between requests is fine, within one is not. */
			ret = s->have && time_after(jiffies, partial +
				msecs_to_jiffies(READ_ONCE(dfg_tcp_stall_ms))) ?
			      -ETIMEDOUT : 0;
			continue;
		}
		if (ret <= 0)
			return 0;
		took = false;
		if (!s->have)
			partial = jiffies;
		s->have += ret;
		ret = dfg_tcp_srv_answer(s, &took);
		if (took)
			partial = jiffies;
	}
	/* Send timeout: the client leaves our answers in its window. */
	return ret == -EAGAIN ? -ETIMEDOUT : ret;
}

static void dfg_tcp_srv_work(struct work_struct *work)
{
	struct dfg_tcp_srv *s = container_of(work, struct dfg_tcp_srv, work);
	int ret = dfg_tcp_srv_run(s);

	/* A client that went away (closed, reset, dead) is not dropped. */
	if (ret && ret != -EPIPE && ret != -ECONNRESET) {
		atomic64_inc(&dfg_tcp_dropped);
		pr_warn_ratelimited("dropped a client: %s (%d)\n",
				    ret == -EPROTO ? "bad request" :
				    ret == -ETIMEDOUT ? "stalled" :
				    "error", ret);
	}
	mutex_lock(&dfg_tcp_lock);
	list_del(&s->node);
	mutex_unlock(&dfg_tcp_lock);
	sock_release(s->sock);
	dfg_pf_serve_put();
	kvfree(s);
	atomic_dec(&dfg_tcp_nconns);
}

/* A new connection: served by a work of its own, or refused. */
static void dfg_tcp_srv_start(struct socket *sock)
{
	long stall = msecs_to_jiffies(READ_ONCE(dfg_tcp_stall_ms)) ?: 1;
	struct dfg_tcp_srv *s;

	dfg_tcp_sock_opts(sock->sk);
	if (atomic_inc_return(&dfg_tcp_nconns) > dfg_tcp_max_conns) {
		atomic_dec(&dfg_tcp_nconns);
		pr_warn_ratelimited("refused a client: %u connections served\n",
				    dfg_tcp_max_conns);
		dfg_tcp_refuse(sock, DFG_TCP_BUSY);
		return;
	}
	s = kvzalloc(sizeof(*s), GFP_KERNEL);
	if (!s) {
		atomic_dec(&dfg_tcp_nconns);
		dfg_tcp_refuse(sock, DFG_TCP_BUSY);
		return;
	}
	if (dfg_pf_serve_get(&s->part)) {
		kvfree(s);
		atomic_dec(&dfg_tcp_nconns);
		dfg_tcp_refuse(sock, DFG_TCP_NOTHING);
		return;
	}
	s->sock = sock;
	INIT_WORK(&s->work, dfg_tcp_srv_work);
	dfg_tcp_timeouts(sock->sk, DFG_TCP_POLL, stall);
	mutex_lock(&dfg_tcp_lock);
	if (dfg_tcp_stopping) {
		mutex_unlock(&dfg_tcp_lock);
		sock_release(sock);
		dfg_pf_serve_put();
		kvfree(s);
		atomic_dec(&dfg_tcp_nconns);
		return;
	}
	list_add(&s->node, &dfg_tcp_srvs);
	mutex_unlock(&dfg_tcp_lock);
	atomic64_inc(&dfg_tcp_accepted);
	queue_work(dfg_tcp_srv_wq, &s->work);
}

/* Accepts until the module's exit shuts the listener down. */
static void dfg_tcp_accept_work(struct work_struct *work)
{
	struct socket *sock;
	int ret;

	for (;;) {
		ret = kernel_accept(dfg_tcp_lsock, &sock, 0);
		if (!ret) {
			dfg_tcp_srv_start(sock);
			continue;
		}
		mutex_lock(&dfg_tcp_lock);
		ret = dfg_tcp_stopping;
		mutex_unlock(&dfg_tcp_lock);
		if (ret)
			return;
		/* Out of memory, say: try again a little later. */
		schedule_timeout_interruptible(HZ / 10);
	}
}

/* IPv6 with IPv4-mapped addresses where the kernel has IPv6, else IPv4. */
static int dfg_tcp_listen(void)
{
	struct sockaddr_in6 sin6 = {
		.sin6_family	= AF_INET6,
		.sin6_port	= htons(dfg_tcp_port),
	};
	struct sockaddr_in sin = {
		.sin_family	= AF_INET,
		.sin_addr.s_addr = htonl(INADDR_ANY),
		.sin_port	= htons(dfg_tcp_port),
	};
	struct sockaddr *sa = (struct sockaddr *)&sin6;
	int len = sizeof(sin6), off = 0, ret;
	struct socket *sock;

	ret = sock_create_kern(&init_net, AF_INET6, SOCK_STREAM, IPPROTO_TCP,
			       &sock);
	if (ret == -EAFNOSUPPORT) {
		sa = (struct sockaddr *)&sin;
		len = sizeof(sin);
		ret = sock_create_kern(&init_net, AF_INET, SOCK_STREAM,
				       IPPROTO_TCP, &sock);
	}
	if (ret)
		return ret;
	sock_set_reuseaddr(sock->sk);
	if (sa->sa_family == AF_INET6)
		ret = sock->ops->setsockopt(sock, SOL_IPV6, IPV6_V6ONLY,
					    KERNEL_SOCKPTR(&off), sizeof(off));
	if (!ret)
		ret = kernel_bind(sock, sa, len);
	if (!ret)
		ret = kernel_listen(sock, 64);
	if (ret) {
		sock_release(sock);
		return ret;
	}
	dfg_tcp_lsock = sock;
	return 0;
}

/* ---- client side ---- */

/* One request: ->n reads, their destinations in ->vec. */
struct dfg_tcp_batch {
	struct list_head	node;
	u64			tag;
	u64			bytes;	/* the sum of the reads' lengths */
	unsigned int		n;
	struct dfg_pf_read	**rds;	/* ->n, behind ->vec */
	struct kvec		vec[];
};

struct dfg_tcp_conn {
	struct socket		*sock;
	struct dfg_pf_peer	*peer;
	spinlock_t		lock;	/* see the top */
	struct list_head	queued;	/* requests to send, in order */
	struct list_head	sent;	/* sent: answers come in this order */
	unsigned int		nreads;	/* reads of both lists' requests */
	u64			tag;	/* the next request's */
	bool			dead;
	bool			closing;
	u64			image_bytes;
	struct work_struct	send_work;
	struct work_struct	recv_work;
	/* The send work's: requests as the wire has them. */
	u8			sbuf[DFG_TCP_SBUF] __aligned(8);
};

/* Every read of @b ended with @status: tell dfg.ko, free @b. */
static void dfg_tcp_batch_end(struct dfg_tcp_batch *b, int status)
{
	unsigned int i;

	for (i = 0; i < b->n; i++)
		dfg_pf_read_done(b->rds[i], status);
	kfree(b);
}

/*
 * The connection is over (failed, or ended by ->disconnect): tell dfg.ko
 * once, unless it is ending it, then end every read still queued or sent.
 */
static void dfg_tcp_conn_end(struct dfg_tcp_conn *c, int why)
{
	struct dfg_tcp_batch *b, *tmp;
	LIST_HEAD(gone);
	bool tell;

	spin_lock(&c->lock);
	tell = !c->dead && !c->closing;
	c->dead = true;
	list_splice_tail_init(&c->sent, &gone);
	list_splice_tail_init(&c->queued, &gone);
	c->nreads = 0;
	spin_unlock(&c->lock);
	/* A send work in sendmsg() stops now; sends after it fail. */
	kernel_sock_shutdown(c->sock, SHUT_RDWR);
	if (tell) {
		atomic64_inc(&dfg_tcp_lost);
		pr_info("connection to a peer lost (%d)\n", why);
		dfg_pf_peer_lost(c->peer);
	}
	list_for_each_entry_safe(b, tmp, &gone, node)
		dfg_tcp_batch_end(b, -EHOSTUNREACH);
}

/* Under c->lock: request @b on the wire at @buf; its length. */
static size_t dfg_tcp_req_pack(const struct dfg_tcp_batch *b, u8 *buf)
{
	struct dfg_tcp_req *q = (void *)buf;
	struct dfg_tcp_ext *x = (void *)(q + 1);
	unsigned int i;

	q->magic = cpu_to_le32(DFG_TCP_MAGIC_REQ);
	q->count = cpu_to_le32(b->n);
	q->tag = cpu_to_le64(b->tag);
	for (i = 0; i < b->n; i++) {
		x[i].off = cpu_to_le64(b->rds[i]->off);
		x[i].len = cpu_to_le32(b->rds[i]->len);
		x[i].pad = 0;
	}
	return sizeof(*q) + b->n * sizeof(*x);
}

/* Send what is queued, up to DFG_TCP_SBUF bytes of requests per sendmsg. */
static void dfg_tcp_send_work(struct work_struct *work)
{
	struct dfg_tcp_conn *c = container_of(work, struct dfg_tcp_conn,
					      send_work);
	struct dfg_tcp_batch *b, *tmp;
	size_t len, need;
	bool full;
	struct kvec v;

	do {
		len = 0;
		full = false;
		spin_lock(&c->lock);
		list_for_each_entry_safe(b, tmp, &c->queued, node) {
			need = sizeof(struct dfg_tcp_req) +
			       b->n * sizeof(struct dfg_tcp_ext);
			if (len + need > sizeof(c->sbuf)) {
				full = true;
				break;
			}
			len += dfg_tcp_req_pack(b, c->sbuf + len);
			/* Before the send: its answer may come before it ends. */
			list_move_tail(&b->node, &c->sent);
		}
		spin_unlock(&c->lock);
		if (!len)
			return;
		v.iov_base = c->sbuf;
		v.iov_len = len;
		/* On failure the receive work sees the end and ends the reads. */
		if (dfg_tcp_send(c->sock, &v, 1, len, 0)) {
			kernel_sock_shutdown(c->sock, SHUT_RDWR);
			return;
		}
	} while (full);
}

/* Take the answers, in order, until the connection ends. */
static void dfg_tcp_recv_work(struct work_struct *work)
{
	struct dfg_tcp_conn *c = container_of(work, struct dfg_tcp_conn,
					      recv_work);
	struct dfg_tcp_batch *b;
	struct dfg_tcp_resp a;
	u32 status;
	int ret;

	for (;;) {
		ret = dfg_tcp_recv(c->sock, &a, sizeof(a));
		if (ret)
			break;
		status = le32_to_cpu(a.status);
		spin_lock(&c->lock);
		b = list_first_entry_or_null(&c->sent, struct dfg_tcp_batch,
					     node);
		if (b && le32_to_cpu(a.magic) == DFG_TCP_MAGIC_RESP &&
		    le64_to_cpu(a.tag) == b->tag &&
		    le32_to_cpu(a.count) == b->n &&
		    (status || le64_to_cpu(a.bytes) == b->bytes)) {
			list_del(&b->node);
			c->nreads -= b->n;
		} else {
			b = NULL;
		}
		spin_unlock(&c->lock);
		if (!b) {
			ret = -EPROTO;
			break;
		}
		if (status) {
			dfg_tcp_batch_end(b, -EIO);
			continue;
		}
		/* Off the lists: this work alone owns the request now. */
		ret = dfg_tcp_recvv(c->sock, b->vec, b->n, b->bytes);
		dfg_tcp_batch_end(b, ret ? -EHOSTUNREACH : 0);
		if (ret)
			break;
	}
	dfg_tcp_conn_end(c, ret);
}

static int dfg_tcp_hello_parse(struct dfg_tcp_conn *c,
			       const struct dfg_tcp_hello *h,
			       struct dfg_pf_remote *r)
{
	u32 status = le32_to_cpu(h->status);

	if (le32_to_cpu(h->magic) != DFG_TCP_MAGIC_HELLO ||
	    le32_to_cpu(h->version) != DFG_TCP_VERSION)
		return -EPROTO;
	if (status == DFG_TCP_NOTHING || status == DFG_TCP_BUSY) {
		pr_info("peer refused: %s\n", status == DFG_TCP_BUSY ?
			"it serves its most connections" : "it serves nothing");
		return -ECONNREFUSED;
	}
	if (status != DFG_TCP_SERVING)
		return -EPROTO;
	r->node_first = le64_to_cpu(h->node_first);
	r->node_count = le64_to_cpu(h->node_count);
	r->feat_bytes = le32_to_cpu(h->feat_bytes);
	r->row_off = le64_to_cpu(h->row_off);
	r->col_off = le64_to_cpu(h->col_off);
	r->col_count = le64_to_cpu(h->col_count);
	r->feat_off = le64_to_cpu(h->feat_off);
	r->image_bytes = le64_to_cpu(h->image_bytes);
	r->part_set = le64_to_cpu(h->part_set);
	c->image_bytes = r->image_bytes;
	return 0;
}

/* A socket call's errno as PEER_ADD documents it. */
static int dfg_tcp_connect_err(int ret)
{
	switch (ret) {
	case -EINPROGRESS:	/* kernel_connect()'s timeout */
	case -EALREADY:
	case -EAGAIN:		/* the hello's */
		return -ETIMEDOUT;
	case -ERESTARTSYS:
		return -EINTR;
	default:
		return ret;
	}
}

/*
 * PEER_ADD's connection setup sleeps here, within the caller's timeout
 * and interruptibly, as dfg_rdma.ko's does (DESIGN.md, "Adding a
 * command").
 */
static void *dfg_tcp_connect(struct dfg_pf_peer *peer,
			     const struct sockaddr_storage *addr,
			     unsigned int timeout_ms,
			     struct dfg_pf_remote *remote)
{
	unsigned long end = jiffies + msecs_to_jiffies(timeout_ms);
	struct dfg_tcp_hello h;
	struct dfg_tcp_conn *c;
	long left;
	int len, ret;

	if (addr->ss_family == AF_INET)
		len = sizeof(struct sockaddr_in);
	else if (addr->ss_family == AF_INET6)
		len = sizeof(struct sockaddr_in6);
	else
		return ERR_PTR(-EAFNOSUPPORT);
	c = kvzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	c->peer = peer;
	spin_lock_init(&c->lock);
	INIT_LIST_HEAD(&c->queued);
	INIT_LIST_HEAD(&c->sent);
	INIT_WORK(&c->send_work, dfg_tcp_send_work);
	INIT_WORK(&c->recv_work, dfg_tcp_recv_work);
	ret = sock_create_kern(&init_net, addr->ss_family, SOCK_STREAM,
			       IPPROTO_TCP, &c->sock);
	if (ret) {
		kvfree(c);
		return ERR_PTR(ret);
	}
	dfg_tcp_sock_opts(c->sock->sk);
	/* The send timeout is kernel_connect()'s. */
	dfg_tcp_timeouts(c->sock->sk, MAX_SCHEDULE_TIMEOUT,
			 msecs_to_jiffies(timeout_ms) ?: 1);
	ret = kernel_connect(c->sock, (struct sockaddr *)addr, len, 0);
	if (ret)
		goto fail;
	left = (long)(end - jiffies);
	ret = -ETIMEDOUT;
	if (left <= 0)
		goto fail;
	dfg_tcp_timeouts(c->sock->sk, left, MAX_SCHEDULE_TIMEOUT);
	ret = dfg_tcp_recv(c->sock, &h, sizeof(h));
	if (!ret)
		ret = dfg_tcp_hello_parse(c, &h, remote);
	if (ret)
		goto fail;
	/* From here the works block in the socket without a timeout. */
	dfg_tcp_timeouts(c->sock->sk, MAX_SCHEDULE_TIMEOUT,
			 MAX_SCHEDULE_TIMEOUT);
	queue_work(dfg_tcp_cli_wq, &c->recv_work);
	return c;

fail:
	sock_release(c->sock);
	kvfree(c);
	return ERR_PTR(dfg_tcp_connect_err(ret));
}

/* A request of the @n reads @rds (GFP_ATOMIC: ->read must not sleep). */
static struct dfg_tcp_batch *dfg_tcp_batch_new(struct dfg_pf_read **rds,
					       unsigned int n)
{
	struct dfg_tcp_batch *b;
	unsigned int i;

	b = kmalloc(struct_size(b, vec, n) + n * sizeof(*rds), GFP_ATOMIC);
	if (!b)
		return NULL;
	b->n = n;
	b->bytes = 0;
	b->rds = (struct dfg_pf_read **)&b->vec[n];
	for (i = 0; i < n; i++) {
		b->rds[i] = rds[i];
		b->vec[i].iov_base = rds[i]->dst;
		b->vec[i].iov_len = rds[i]->len;
		b->bytes += rds[i]->len;
	}
	return b;
}

static int dfg_tcp_read(void *conn, struct dfg_pf_read **rds, unsigned int n)
{
	struct dfg_tcp_conn *c = conn;
	struct dfg_tcp_batch *b, *tmp;
	unsigned int i, k;
	LIST_HEAD(reqs);
	int ret = 0;

	for (i = 0; i < n; i++)
		if (!rds[i]->len || rds[i]->off > c->image_bytes ||
		    rds[i]->len > c->image_bytes - rds[i]->off)
			return -EINVAL;
	/* All or none: each request of at most DFG_TCP_LIST_MAX reads. */
	for (i = 0; i < n; i += k) {
		k = min_t(unsigned int, n - i, DFG_TCP_LIST_MAX);
		b = dfg_tcp_batch_new(rds + i, k);
		if (!b) {
			ret = -ENOMEM;
			goto out_free;
		}
		list_add_tail(&b->node, &reqs);
	}
	spin_lock(&c->lock);
	if (c->dead || c->closing) {
		ret = -EHOSTUNREACH;
	} else if (n > DFG_TCP_READS_MAX - c->nreads) {
		ret = -EBUSY;
	} else {
		list_for_each_entry(b, &reqs, node)
			b->tag = c->tag++;
		list_splice_tail_init(&reqs, &c->queued);
		c->nreads += n;
	}
	spin_unlock(&c->lock);
	if (ret)
		goto out_free;
	/* No ->disconnect meanwhile (dfg_pf_rwsem): @c is still there. */
	queue_work(dfg_tcp_cli_wq, &c->send_work);
	return 0;

out_free:
	list_for_each_entry_safe(b, tmp, &reqs, node)
		kfree(b);
	return ret;
}

static void dfg_tcp_disconnect(void *conn)
{
	struct dfg_tcp_conn *c = conn;

	spin_lock(&c->lock);
	c->closing = true;
	spin_unlock(&c->lock);
	kernel_sock_shutdown(c->sock, SHUT_RDWR);
	/* It ends at the shutdown, and with it every read. */
	flush_work(&c->recv_work);
	cancel_work_sync(&c->send_work);
	sock_release(c->sock);
	kvfree(c);
}

static const struct dfg_pf_xport dfg_tcp_xport = {
	.name		= "tcp",
	.owner		= THIS_MODULE,
	.connect	= dfg_tcp_connect,
	.read		= dfg_tcp_read,
	.disconnect	= dfg_tcp_disconnect,
};

/* ---- counters ---- */

#define DFG_TCP_STAT(name, expr)					\
static ssize_t name##_show(struct kobject *kobj,			\
			   struct kobj_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%lld\n", (long long)(expr));		\
}									\
static struct kobj_attribute dfg_tcp_attr_##name = __ATTR_RO(name)

DFG_TCP_STAT(conns, atomic_read(&dfg_tcp_nconns));
DFG_TCP_STAT(accepted, atomic64_read(&dfg_tcp_accepted));
DFG_TCP_STAT(refused, atomic64_read(&dfg_tcp_refused));
DFG_TCP_STAT(dropped, atomic64_read(&dfg_tcp_dropped));
DFG_TCP_STAT(requests, atomic64_read(&dfg_tcp_requests));
DFG_TCP_STAT(reads, atomic64_read(&dfg_tcp_reads));
DFG_TCP_STAT(bytes, atomic64_read(&dfg_tcp_bytes));
DFG_TCP_STAT(lost, atomic64_read(&dfg_tcp_lost));

static struct attribute *dfg_tcp_attrs[] = {
	&dfg_tcp_attr_conns.attr,
	&dfg_tcp_attr_accepted.attr,
	&dfg_tcp_attr_refused.attr,
	&dfg_tcp_attr_dropped.attr,
	&dfg_tcp_attr_requests.attr,
	&dfg_tcp_attr_reads.attr,
	&dfg_tcp_attr_bytes.attr,
	&dfg_tcp_attr_lost.attr,
	NULL,
};

static const struct attribute_group dfg_tcp_group = {
	.name	= "stats",
	.attrs	= dfg_tcp_attrs,
};

/* ---- module ---- */

static int __init dfg_tcp_init(void)
{
	int ret;

	if (!dfg_tcp_max_conns || dfg_tcp_max_conns > DFG_TCP_CONNS_LIMIT)
		return -EINVAL;
	/* Every served connection's work runs at once, and the accept's. */
	dfg_tcp_srv_wq = alloc_workqueue("dfg_tcp_srv", WQ_UNBOUND,
					 dfg_tcp_max_conns + 1);
	if (!dfg_tcp_srv_wq)
		return -ENOMEM;
	/* Each peer's receive and send works: 2 * DFG_PF_PEERS_MAX. */
	dfg_tcp_cli_wq = alloc_workqueue("dfg_tcp_cli", WQ_UNBOUND,
					 2 * DFG_PF_PEERS_MAX);
	ret = -ENOMEM;
	if (!dfg_tcp_cli_wq)
		goto out_srv_wq;
	ret = dfg_tcp_listen();
	if (ret) {
		pr_err("cannot listen on port %u: %d\n", dfg_tcp_port, ret);
		goto out_cli_wq;
	}
	ret = sysfs_create_group(&THIS_MODULE->mkobj.kobj, &dfg_tcp_group);
	if (ret)
		goto out_listen;
	ret = dfg_pf_xport_register(&dfg_tcp_xport);
	if (ret) {
		if (ret == -EBUSY)
			pr_err("another prefetch transport is loaded (dfg_rdma?)\n");
		goto out_sysfs;
	}
	INIT_WORK(&dfg_tcp_accept, dfg_tcp_accept_work);
	queue_work(dfg_tcp_srv_wq, &dfg_tcp_accept);
	return 0;

out_sysfs:
	sysfs_remove_group(&THIS_MODULE->mkobj.kobj, &dfg_tcp_group);
out_listen:
	sock_release(dfg_tcp_lsock);
out_cli_wq:
	destroy_workqueue(dfg_tcp_cli_wq);
out_srv_wq:
	destroy_workqueue(dfg_tcp_srv_wq);
	return ret;
}

static void __exit dfg_tcp_exit(void)
{
	struct dfg_tcp_srv *s;

	/* Our peers first: their reads end before the transport goes. */
	dfg_pf_xport_unregister(&dfg_tcp_xport);
	/* No new connection after this; every served one ends. */
	mutex_lock(&dfg_tcp_lock);
	WRITE_ONCE(dfg_tcp_stopping, true);
	kernel_sock_shutdown(dfg_tcp_lsock, SHUT_RDWR);
	list_for_each_entry(s, &dfg_tcp_srvs, node)
		kernel_sock_shutdown(s->sock, SHUT_RDWR);
	mutex_unlock(&dfg_tcp_lock);
	/* Waits for the accept work and each connection's, which frees it. */
	destroy_workqueue(dfg_tcp_srv_wq);
	sock_release(dfg_tcp_lsock);
	destroy_workqueue(dfg_tcp_cli_wq);
	sysfs_remove_group(&THIS_MODULE->mkobj.kobj, &dfg_tcp_group);
}

module_init(dfg_tcp_init);
module_exit(dfg_tcp_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("dfg: kernel TCP transport of the hub-node prefetch");
MODULE_VERSION(DFG_VERSION);
