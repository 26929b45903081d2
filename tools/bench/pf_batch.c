// SPDX-License-Identifier: GPL-2.0
/*
 * pf_batch - how should a batch of small reads from a peer go over RDMA?
 * The measurement behind dfg_rdma.ko's batched ->read (kmod/rdma/), run
 * on the two-node rig (Soft-RoCE) with user-space verbs on the same rxe
 * device the module uses:
 *
 *   each	N RDMA READs, each posted alone and signalled (the module
 *		before batching)
 *   chain	the same N READs linked, one ibv_post_send, only the last
 *		signalled
 *   send	one SEND of the (offset, length) list to the peer, which
 *		packs the extents out of its image and answers with one SEND
 *		of the bytes back to back; the client copies them out
 *
 * Every batch reads N random extents of LEN bytes (8-aligned) of the
 * server's 4 MiB "image", and every result is checked against it. Rounds
 * interleave the three, the order rotating; prints the median and the
 * range of each in microseconds per batch, and per read.
 *
 *   pf_batch server PORT
 *   pf_batch client HOST PORT N LEN ROUNDS
 *
 * The queue pair is connected by hand over a TCP socket (GID index 0, as
 * the rig's UCX uses), with the module's RC settings: 16 READs in flight
 * (its initiator depth), retry 7, RNR retry 7. Completions are waited for
 * through a completion channel, as the module's CQ work is woken.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define IMG_BYTES	(4u << 20)
#define LIST_MAX	1024
#define MSG_BYTES	(LIST_MAX * 16 + 16)
#define REPLY_BYTES	(LIST_MAX * 4096)
#define NRECV		4
#define RD_ATOMIC	16

struct wire {
	uint32_t	qpn, psn, rkey, pad;
	uint64_t	addr;
	uint8_t		gid[16];
};

struct ext {
	uint64_t	off;
	uint32_t	len, pad;
};

struct ctx {
	struct ibv_context	*dev;
	struct ibv_pd		*pd;
	struct ibv_comp_channel	*ch;
	struct ibv_cq		*cq;
	struct ibv_qp		*qp;
	struct ibv_mr		*mr;
	uint8_t			*mem;	/* image (server) or destination */
	uint8_t			*msg;	/* NRECV receive slots + one send */
	struct ibv_mr		*msg_mr;
	uint8_t			*reply;	/* reply (server: send; client: recv) */
	struct ibv_mr		*reply_mr;
	uint8_t			port_mtu;
};

static void die(const char *what)
{
	fprintf(stderr, "pf_batch: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void setup(struct ctx *c)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2048, .max_recv_wr = NRECV + 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_port_attr pa;
	struct ibv_qp_attr ia;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;

	if (!list || !list[0])
		die("no RDMA device");
	c->dev = ibv_open_device(list[0]);
	if (!c->dev || ibv_query_port(c->dev, 1, &pa))
		die("ibv_open_device");
	c->port_mtu = pa.active_mtu;
	c->pd = ibv_alloc_pd(c->dev);
	c->ch = ibv_create_comp_channel(c->dev);
	c->cq = c->ch ? ibv_create_cq(c->dev, 4096, NULL, c->ch, 0) : NULL;
	if (!c->pd || !c->cq)
		die("pd or cq");
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	c->qp = ibv_create_qp(c->pd, &qa);
	c->mem = aligned_alloc(4096, IMG_BYTES);
	c->msg = aligned_alloc(4096, (NRECV + 1) * MSG_BYTES);
	c->reply = aligned_alloc(4096, NRECV * REPLY_BYTES);
	if (!c->qp || !c->mem || !c->msg || !c->reply)
		die("qp or memory");
	c->mr = ibv_reg_mr(c->pd, c->mem, IMG_BYTES, acc);
	c->msg_mr = ibv_reg_mr(c->pd, c->msg, (NRECV + 1) * MSG_BYTES, acc);
	c->reply_mr = ibv_reg_mr(c->pd, c->reply, NRECV * REPLY_BYTES, acc);
	if (!c->mr || !c->msg_mr || !c->reply_mr)
		die("ibv_reg_mr");
	ibv_free_device_list(list);
	/* INIT: receives may be posted from here on. */
	memset(&ia, 0, sizeof(ia));
	ia.qp_state = IBV_QPS_INIT;
	ia.port_num = 1;
	ia.qp_access_flags = IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(c->qp, &ia, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("INIT");
}

static void connect_qp(struct ctx *c, const struct wire *me,
		       const struct wire *peer)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };


	a.path_mtu = c->port_mtu;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = RD_ATOMIC;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = 0;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 18;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = me->psn;
	a.max_rd_atomic = RD_ATOMIC;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

static void exchange(struct ctx *c, int fd, struct wire *peer)
{
	struct wire me = {
		.qpn = c->qp->qp_num, .psn = 4711 + getpid() % 1000,
		.rkey = c->mr->rkey, .addr = (uintptr_t)c->mem,
	};
	union ibv_gid gid;

	if (ibv_query_gid(c->dev, 1, 0, &gid))
		die("ibv_query_gid");
	memcpy(me.gid, gid.raw, 16);
	if (write(fd, &me, sizeof(me)) != sizeof(me) ||
	    recv(fd, peer, sizeof(*peer), MSG_WAITALL) != sizeof(*peer))
		die("exchange");
	connect_qp(c, &me, peer);
}

static void post_recv(struct ctx *c, unsigned int slot)
{
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	/* The server's requests, into message slots. */
	sge.addr = (uintptr_t)c->msg + slot * MSG_BYTES;
	sge.length = MSG_BYTES;
	sge.lkey = c->msg_mr->lkey;
	if (ibv_post_recv(c->qp, &wr, &bad))
		die("ibv_post_recv");
}

static void post_recv_reply(struct ctx *c, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->reply + slot * REPLY_BYTES,
		.length = REPLY_BYTES, .lkey = c->reply_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(c->qp, &wr, &bad))
		die("ibv_post_recv");
}

/* Wait for one completion: its work completion in @wc. */
static void wait_one(struct ctx *c, struct ibv_wc *wc)
{
	struct ibv_cq *cq;
	void *cctx;

	for (;;) {
		int n = ibv_poll_cq(c->cq, 1, wc);

		if (n < 0)
			die("ibv_poll_cq");
		if (n) {
			if (wc->status != IBV_WC_SUCCESS) {
				fprintf(stderr, "pf_batch: wc %s (wr %llu)\n",
					ibv_wc_status_str(wc->status),
					(unsigned long long)wc->wr_id);
				exit(1);
			}
			return;
		}
		if (ibv_req_notify_cq(c->cq, 0))
			die("ibv_req_notify_cq");
		n = ibv_poll_cq(c->cq, 1, wc);
		if (n < 0)
			die("ibv_poll_cq");
		if (n) {
			if (wc->status != IBV_WC_SUCCESS) {
				fprintf(stderr, "pf_batch: wc %s\n",
					ibv_wc_status_str(wc->status));
				exit(1);
			}
			return;
		}
		if (ibv_get_cq_event(c->ch, &cq, &cctx))
			die("ibv_get_cq_event");
		ibv_ack_cq_events(cq, 1);
	}
}

static void fill_image(uint8_t *img)
{
	uint32_t i;

	for (i = 0; i < IMG_BYTES / 4; i++)
		((uint32_t *)img)[i] = i * 2654435761u;
}

static int server(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	int lfd = socket(AF_INET, SOCK_STREAM, 0), fd, one = 1;
	struct ctx c = { 0 };
	struct wire peer;
	unsigned int i;

	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) || listen(lfd, 1))
		die("listen");
	setup(&c);
	fill_image(c.mem);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	for (i = 0; i < NRECV; i++)
		post_recv(&c, i);
	exchange(&c, fd, &peer);
	/* Answer lists until one of 0 extents. */
	for (;;) {
		struct ibv_wc wc;
		struct ext *x;
		uint32_t n, slot, k;
		uint64_t at = 0;
		uint8_t *out;

		wait_one(&c, &wc);
		if (wc.opcode != IBV_WC_RECV)
			continue;	/* a reply's send completed */
		slot = wc.wr_id;
		x = (struct ext *)(c.msg + slot * MSG_BYTES);
		n = x[0].len;
		out = c.reply + slot * REPLY_BYTES;
		if (!n)
			break;
		for (k = 1; k <= n; k++) {
			if (x[k].off > IMG_BYTES ||
			    x[k].len > IMG_BYTES - x[k].off ||
			    at + x[k].len > REPLY_BYTES) {
				fprintf(stderr, "pf_batch: bad extent\n");
				return 1;
			}
			memcpy(out + at, c.mem + x[k].off, x[k].len);
			at += x[k].len;
		}
		post_recv(&c, slot);
		{
			struct ibv_sge sge = { .addr = (uintptr_t)out,
					       .length = at,
					       .lkey = c.reply_mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = 1000 + slot, .sg_list = &sge,
				.num_sge = 1, .opcode = IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED,
			}, *bad;

			if (ibv_post_send(c.qp, &wr, &bad))
				die("reply");
		}
	}
	close(fd);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

enum { EACH, CHAIN, SEND, NMODES };
static const char *const mode_name[NMODES] = { "each", "chain", "send" };

static void batch_reads(struct ctx *c, const struct wire *peer,
			const struct ext *x, unsigned int n, int chain,
			struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	unsigned int i, at = 0, got = 0;

	for (i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)c->mem + at;
		sge[i].length = x[i].len;
		sge[i].lkey = c->mr->lkey;
		at += x[i].len;
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_READ;
		wr[i].wr.rdma.remote_addr = peer->addr + x[i].off;
		wr[i].wr.rdma.rkey = peer->rkey;
		if (!chain || i == n - 1)
			wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = chain && i + 1 < n ? &wr[i + 1] : NULL;
	}
	if (chain) {
		if (ibv_post_send(c->qp, &wr[0], &bad))
			die("post chain");
		wait_one(c, &wc);
		return;
	}
	for (i = 0; i < n; i++)
		if (ibv_post_send(c->qp, &wr[i], &bad))
			die("post read");
	while (got < n) {
		wait_one(c, &wc);
		got++;
	}
}

static void batch_send(struct ctx *c, const struct ext *x, unsigned int n)
{
	struct ext *m = (struct ext *)(c->msg + NRECV * MSG_BYTES);
	struct ibv_sge sge = { .addr = (uintptr_t)m,
			       .length = (n + 1) * sizeof(*m),
			       .lkey = c->msg_mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 2000, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	unsigned int i, at = 0, done = 0;
	int recvd = -1;

	m[0].len = n;
	memcpy(m + 1, x, n * sizeof(*x));
	if (ibv_post_send(c->qp, &wr, &bad))
		die("post list");
	/* Both the send's completion and the reply's. */
	while (done < 2) {
		wait_one(c, &wc);
		if (wc.opcode == IBV_WC_RECV)
			recvd = wc.wr_id;
		done++;
	}
	for (i = 0; i < n; i++) {
		memcpy(c->mem + at, c->reply + recvd * REPLY_BYTES + at,
		       x[i].len);
		at += x[i].len;
	}
	post_recv_reply(c, recvd);
}

static int client(const char *host, int port, unsigned int n,
		  unsigned int len, unsigned int rounds)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	struct ibv_send_wr *wr = calloc(n, sizeof(*wr));
	struct ibv_sge *sge = calloc(n, sizeof(*sge));
	struct ext *x = calloc(n, sizeof(*x));
	uint64_t *t[NMODES];
	uint8_t *img = malloc(IMG_BYTES);
	struct ctx c = { 0 };
	struct wire peer;
	unsigned int r, i, m, k;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (n > LIST_MAX || !n || len > 4096 || len < 8 || len % 8)
		die("N 1..1024, LEN 8..4096, a multiple of 8");
	for (m = 0; m < NMODES; m++)
		t[m] = calloc(rounds, sizeof(uint64_t));
	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
		die("connect");
	setup(&c);
	fill_image(img);
	for (i = 0; i < NRECV; i++)
		post_recv_reply(&c, i);
	exchange(&c, fd, &peer);
	srand(1);
	for (r = 0; r < rounds; r++) {
		for (k = 0; k < NMODES; k++) {
			uint64_t t0;
			unsigned int at = 0;

			m = (r + k) % NMODES;
			for (i = 0; i < n; i++) {
				x[i].off = ((uint64_t)rand() %
					    ((IMG_BYTES - len) / 8)) * 8;
				x[i].len = len;
				x[i].pad = 0;
			}
			memset(c.mem, 0, (size_t)n * len);
			t0 = now_ns();
			if (m == SEND)
				batch_send(&c, x, n);
			else
				batch_reads(&c, &peer, x, n, m == CHAIN, wr,
					    sge);
			t[m][r] = now_ns() - t0;
			for (i = 0; i < n; i++, at += len)
				if (memcmp(c.mem + at, img + x[i].off, len)) {
					fprintf(stderr,
						"pf_batch: %s: wrong bytes\n",
						mode_name[m]);
					return 1;
				}
		}
	}
	/* Tell the server to stop. */
	x[0].len = 0;
	{
		struct ext *q = (struct ext *)(c.msg + NRECV * MSG_BYTES);
		struct ibv_sge s = { .addr = (uintptr_t)q, .length = 16,
				     .lkey = c.msg_mr->lkey };
		struct ibv_send_wr w = { .sg_list = &s, .num_sge = 1,
					 .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED },
				   *bad;
		struct ibv_wc wc;

		q[0].len = 0;
		if (!ibv_post_send(c.qp, &w, &bad))
			wait_one(&c, &wc);
	}
	printf("# pf_batch: %u reads of %u bytes a batch, %u rounds; us a batch: median [min, max], us a read\n",
	       n, len, rounds);
	for (m = 0; m < NMODES; m++) {
		qsort(t[m], rounds, sizeof(uint64_t), cmp_u64);
		printf("%-6s %10.1f [%.1f, %.1f] %8.2f\n", mode_name[m],
		       t[m][rounds / 2] / 1e3, t[m][0] / 1e3,
		       t[m][rounds - 1] / 1e3, t[m][rounds / 2] / 1e3 / n);
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(atoi(argv[2]));
	if (argc == 7 && !strcmp(argv[1], "client"))
		return client(argv[2], atoi(argv[3]), atoi(argv[4]),
			      atoi(argv[5]), atoi(argv[6]));
	fprintf(stderr,
		"usage: pf_batch server PORT | client HOST PORT N LEN ROUNDS\n");
	return 2;
}
