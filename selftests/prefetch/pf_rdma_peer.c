// SPDX-License-Identifier: GPL-2.0
/*
 * pf_rdma_peer - bad peers of dfg_rdma.ko, with user-space verbs and
 * rdma_cm against a machine's module (node1 of the two-node rig; node0.sh
 * runs it over Soft-RoCE). Each connection takes the module's hello
 * (kmod/rdma/dfg_rdma_wire.h) as its own module would, then misbehaves.
 *
 *   pf_rdma_peer ADDR PORT lists
 *	one connection per bad list (too short, garbage, empty, more
 *	extents than a list may, a count its length does not match, a
 *	nonzero pad, a zero length, across the image's end, far outside,
 *	wrapping, more bytes than an answer holds, a good list whose last
 *	extent is outside, more bytes than the module's receive buffer):
 *	each must end the connection with nothing answered; then a good
 *	list is answered with the image's first bytes
 *   pf_rdma_peer ADDR PORT flood MAX
 *	connections held open until the module refuses one: at most MAX,
 *	at least MAX - 1 (node0's own module may hold one), then all closed
 *	and one more served
 *   pf_rdma_peer ADDR PORT stall SECONDS
 *	a peer that sends DFG_RDMA_SLOTS good lists and the same again and
 *	never takes an answer, then sits for SECONDS (or until killed)
 *
 * One TAP line ("ok - ..." / "not ok - ...") per check; exits 1 if any
 * failed.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <linux/dfg.h>

#include "dfg_rdma_wire.h"
#include "pf_tap.h"

/* The module takes this long at most to drop a bad peer (a TCG guest). */
#define DROP_MS		10000
#define CM_MS		10000
/* Receives: the hello, then answers (each up to DFG_RDMA_ANSWER_MAX). */
#define NRECV		(DFG_RDMA_SLOTS + 1)
#define BAD_MAX		(2 * DFG_RDMA_LIST_BYTES)

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* One connection to the module and what it needs. */
struct peer {
	struct rdma_event_channel	*ch;
	struct rdma_cm_id		*id;
	struct ibv_pd			*pd;
	struct ibv_cq			*cq;
	struct ibv_mr			*mr;
	uint8_t				*buf;	/* NRECV answers, then a list */
	struct dfg_rdma_hello		hello;
	bool				connected;
};

static uint8_t *recv_buf(struct peer *p, unsigned int i)
{
	return p->buf + (size_t)i * DFG_RDMA_ANSWER_MAX;
}

static uint8_t *send_buf(struct peer *p)
{
	return recv_buf(p, NRECV);
}

/* The next cm event, of type @want, within @ms; its status in *@status. */
static int cm_wait(struct peer *p, enum rdma_cm_event_type want, int ms,
		   int *status)
{
	struct rdma_cm_event *ev;
	struct pollfd pfd = { .fd = p->ch->fd, .events = POLLIN };
	enum rdma_cm_event_type got;

	if (poll(&pfd, 1, ms) != 1)
		return -ETIMEDOUT;
	if (rdma_get_cm_event(p->ch, &ev))
		return -errno;
	got = ev->event;
	if (status)
		*status = ev->status;
	rdma_ack_cm_event(ev);
	return got == want ? 0 : -EPROTO;
}

static int post_recv(struct peer *p, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)recv_buf(p, i),
		.length = DFG_RDMA_ANSWER_MAX,
		.lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(p->id->qp, &wr, &bad);
}

/* A completion within @ms: 1 (in *@wc), 0 none, -1 the CQ failed. */
static int cq_wait(struct peer *p, struct ibv_wc *wc, int ms)
{
	struct timespec t0;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		n = ibv_poll_cq(p->cq, 1, wc);
		if (n)
			return n < 0 ? -1 : 1;
		usleep(1000);
	} while (ms_since(&t0) < ms);
	return 0;
}

static void peer_close(struct peer *p)
{
	if (p->connected)
		rdma_disconnect(p->id);
	if (p->id && p->id->qp)
		rdma_destroy_qp(p->id);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->ch)
		rdma_destroy_event_channel(p->ch);
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

/*
 * Connect to @addr:@port (@recvs receives posted: the hello's and, if
 * more, answers'), take the hello. 0, -ECONNREFUSED (rejected), or
 * another -errno, with a reason in @why.
 */
static int peer_open(struct peer *p, const char *addr, const char *port,
		     unsigned int recvs, const char **why)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;
	struct ibv_qp_init_attr qa = { 0 };
	struct rdma_conn_param cp = { 0 };
	struct ibv_wc wc;
	unsigned int i;
	int ret;

	memset(p, 0, sizeof(*p));
	*why = "resources";
	p->buf = calloc(NRECV + 1, DFG_RDMA_ANSWER_MAX);
	p->ch = rdma_create_event_channel();
	if (!p->buf || !p->ch)
		return -ENOMEM;
	fcntl(p->ch->fd, F_SETFL, fcntl(p->ch->fd, F_GETFL) | O_NONBLOCK);
	if (rdma_getaddrinfo(addr, port, &hints, &ai)) {
		*why = "address";
		return -EINVAL;
	}
	ret = rdma_create_id(p->ch, &p->id, NULL, RDMA_PS_TCP);
	if (!ret)
		ret = rdma_resolve_addr(p->id, NULL, ai->ai_dst_addr, CM_MS);
	rdma_freeaddrinfo(ai);
	if (ret || cm_wait(p, RDMA_CM_EVENT_ADDR_RESOLVED, CM_MS, NULL)) {
		*why = "resolving the address";
		return -EHOSTUNREACH;
	}
	if (rdma_resolve_route(p->id, CM_MS) ||
	    cm_wait(p, RDMA_CM_EVENT_ROUTE_RESOLVED, CM_MS, NULL)) {
		*why = "resolving the route";
		return -EHOSTUNREACH;
	}
	p->pd = ibv_alloc_pd(p->id->verbs);
	p->cq = p->pd ? ibv_create_cq(p->id->verbs, 64, NULL, NULL, 0) : NULL;
	if (!p->cq)
		return -ENOMEM;
	p->mr = ibv_reg_mr(p->pd, p->buf,
			   (size_t)(NRECV + 1) * DFG_RDMA_ANSWER_MAX,
			   IBV_ACCESS_LOCAL_WRITE);
	qa.send_cq = p->cq;
	qa.recv_cq = p->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 2 * DFG_RDMA_SLOTS + 2;
	qa.cap.max_recv_wr = NRECV;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (!p->mr || rdma_create_qp(p->id, p->pd, &qa))
		return -ENOMEM;
	for (i = 0; i < recvs && i < NRECV; i++)
		if (post_recv(p, i))
			return -EIO;
	cp.initiator_depth = 1;
	cp.retry_count = 3;
	cp.rnr_retry_count = 7;
	*why = "connecting";
	if (rdma_connect(p->id, &cp))
		return -EIO;
	ret = cm_wait(p, RDMA_CM_EVENT_ESTABLISHED, CM_MS, NULL);
	if (ret)
		return ret == -ETIMEDOUT ? ret : -ECONNREFUSED;
	p->connected = true;
	*why = "the hello";
	if (cq_wait(p, &wc, CM_MS) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.opcode != IBV_WC_RECV || wc.byte_len < sizeof(p->hello))
		return -EPROTO;
	memcpy(&p->hello, recv_buf(p, wc.wr_id), sizeof(p->hello));
	if (le32toh(p->hello.magic) != DFG_RDMA_MAGIC ||
	    le32toh(p->hello.version) != DFG_RDMA_VERSION)
		return -EPROTO;
	return 0;
}

/* SEND @len bytes of the send buffer; its completion is not waited for. */
static int send_list(struct peer *p, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)send_buf(p),
		.length = len,
		.lkey = p->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = NRECV, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(p->id->qp, &wr, &bad);
}

/* A list of @n extents into the send buffer; its length. */
static uint32_t make_list(struct peer *p, uint32_t n, const uint64_t *off,
			  const uint32_t *len)
{
	struct dfg_rdma_list_hdr *q = (void *)send_buf(p);
	struct dfg_rdma_ext *x = (void *)(q + 1);
	uint32_t i;

	q->magic = htole32(DFG_RDMA_MAGIC_LIST);
	q->count = htole32(n);
	q->slot = htole32(0);
	q->pad = 0;
	for (i = 0; i < n; i++) {
		x[i].off = htole64(off[i]);
		x[i].len = htole32(len[i]);
		x[i].pad = 0;
	}
	return sizeof(*q) + n * sizeof(*x);
}

/*
 * After a bad SEND: the module ends the connection within DROP_MS (the
 * cm says DISCONNECTED) and answers nothing before.
 */
static void expect_dropped(struct peer *p, const char *what)
{
	struct timespec t0;
	struct ibv_wc wc;
	bool answered = false;
	int ret = -ETIMEDOUT;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < DROP_MS) {
		while (ibv_poll_cq(p->cq, 1, &wc) == 1)
			if (wc.status == IBV_WC_SUCCESS &&
			    wc.opcode == IBV_WC_RECV)
				answered = true;
		ret = cm_wait(p, RDMA_CM_EVENT_DISCONNECTED, 10, NULL);
		if (ret != -ETIMEDOUT)
			break;
	}
	p->connected = false;
	pf_tap(!ret && !answered, "%s: dropped%s in %ld ms", what,
	    answered ? ", but answered first" :
	    ret ? " (no disconnect)" : "", ms_since(&t0));
}

static void step_lists(const char *addr, const char *port)
{
	static const struct {
		const char	*name;
		int		kind;
	} cases[] = {
		{ "a SEND shorter than a list's header", 1 },
		{ "garbage", 2 },
		{ "an empty list", 3 },
		{ "a list of 257 extents", 4 },
		{ "a count its length does not match", 5 },
		{ "a nonzero pad", 6 },
		{ "a zero-length extent", 7 },
		{ "an extent across the image's end", 8 },
		{ "an extent far outside", 9 },
		{ "an extent whose end wraps", 10 },
		{ "more bytes than an answer holds", 11 },
		{ "a list whose third extent is outside", 12 },
		{ "a SEND longer than the module's receive buffer", 13 },
	};
	uint64_t off[4] = { 0 };
	uint32_t len[4] = { 0 }, l = 0;
	struct peer p;
	const char *why;
	uint64_t img;
	unsigned int c;
	struct ibv_wc wc;
	int ret;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		ret = peer_open(&p, addr, port, NRECV, &why);
		if (ret) {
			pf_tap(false, "%s: connected (%s: %s)", cases[c].name,
			    why, strerror(-ret));
			peer_close(&p);
			continue;
		}
		img = le64toh(p.hello.image_bytes);
		off[0] = 0;
		len[0] = 64;
		switch (cases[c].kind) {
		case 1:
			make_list(&p, 1, off, len);
			l = 8;
			break;
		case 2:
			memset(send_buf(&p), 0x5a, 64);
			l = 64;
			break;
		case 3:
			l = make_list(&p, 0, off, len);
			break;
		case 4: {
			struct dfg_rdma_list_hdr *q = (void *)send_buf(&p);

			l = make_list(&p, 1, off, len);
			q->count = htole32(DFG_RDMA_LIST_MAX + 1);
			break;
		}
		case 5:
			l = make_list(&p, 2, off, len) - 16;
			break;
		case 6:
			l = make_list(&p, 1, off, len);
			((struct dfg_rdma_list_hdr *)send_buf(&p))->pad = 1;
			break;
		case 7:
			len[0] = 0;
			l = make_list(&p, 1, off, len);
			break;
		case 8:
			off[0] = img - 4;
			len[0] = 8;
			l = make_list(&p, 1, off, len);
			break;
		case 9:
			off[0] = 1ULL << 62;
			l = make_list(&p, 1, off, len);
			break;
		case 10:
			off[0] = img - 8;
			len[0] = 0xfffffff8U;
			l = make_list(&p, 1, off, len);
			break;
		case 11:
			off[1] = 0;
			len[0] = len[1] = DFG_RDMA_ANSWER_MAX / 2 + 64;
			if (img < len[0]) {
				/* A small image: one extent over it. */
				len[0] = (uint32_t)img + 1;
				l = make_list(&p, 1, off, len);
			} else {
				l = make_list(&p, 2, off, len);
			}
			break;
		case 12:
			off[1] = 64;
			off[2] = img;
			len[1] = len[2] = 8;
			l = make_list(&p, 3, off, len);
			break;
		case 13:
			memset(send_buf(&p), 0, BAD_MAX);
			l = make_list(&p, 1, off, len);
			l = BAD_MAX;
			break;
		}
		if (send_list(&p, l))
			pf_tap(false, "%s: sent", cases[c].name);
		else
			expect_dropped(&p, cases[c].name);
		off[0] = off[1] = off[2] = 0;
		len[0] = len[1] = len[2] = 0;
		peer_close(&p);
	}

	/* A good list: answered with the image's first bytes. */
	ret = peer_open(&p, addr, port, NRECV, &why);
	if (ret) {
		pf_tap(false, "a good list: connected (%s: %s)", why,
		    strerror(-ret));
		peer_close(&p);
		return;
	}
	len[0] = 64;
	l = make_list(&p, 1, off, len);
	ret = send_list(&p, l);
	while (!ret && (ret = cq_wait(&p, &wc, DROP_MS)) == 1 &&
	       wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND)
		ret = 0;
	if (ret == 1 && wc.status == IBV_WC_SUCCESS &&
	    wc.opcode == IBV_WC_RECV) {
		const struct dfg_rdma_answer *a = (void *)recv_buf(&p, wc.wr_id);
		const struct dfg_part_hdr *h = (const void *)(a + 1);

		pf_tap(wc.byte_len == sizeof(*a) + 64 &&
		    le32toh(a->magic) == DFG_RDMA_MAGIC_ANSWER &&
		    le32toh(a->count) == 1 && le64toh(a->bytes) == 64 &&
		    h->magic == DFG_PART_MAGIC,
		    "a good list: answered with the image's header");
	} else {
		pf_tap(false, "a good list: answered (%d)", ret);
	}
	peer_close(&p);
}

static void step_flood(const char *addr, const char *port, unsigned int max)
{
	struct peer *ps = calloc(max + 2, sizeof(*ps));
	unsigned int n = 0, i;
	const char *why = "";
	struct peer p;
	int ret = 0;

	if (!ps) {
		pf_tap(false, "flood: memory");
		return;
	}
	while (n < max + 1) {
		ret = peer_open(&ps[n], addr, port, 1, &why);
		if (ret)
			break;
		n++;
	}
	pf_tap(ret == -ECONNREFUSED && n <= max && n + 1 >= max,
	    "flood: %u connections served, the next refused (max_conns %u; %s)",
	    n, max, ret ? strerror(-ret) : "none refused");
	peer_close(&ps[n]);
	for (i = 0; i < n; i++)
		peer_close(&ps[i]);
	free(ps);
	/* Their slots come back as the module frees them. */
	for (i = 0; i < 50; i++) {
		ret = peer_open(&p, addr, port, 1, &why);
		if (!ret || ret != -ECONNREFUSED)
			break;
		peer_close(&p);
		usleep(200000);
	}
	pf_tap(!ret, "flood: served again once they closed (%s)",
	    ret ? strerror(-ret) : "ok");
	peer_close(&p);
}

static void step_stall(const char *addr, const char *port, unsigned int sec)
{
	uint64_t off[1] = { 0 };
	uint32_t len[1] = { 64 }, l;
	const char *why;
	struct peer p;
	unsigned int i;
	int ret;

	/* The hello's receive only: no room for any answer. */
	ret = peer_open(&p, addr, port, 1, &why);
	if (ret) {
		pf_tap(false, "stall: connected (%s: %s)", why, strerror(-ret));
		peer_close(&p);
		return;
	}
	l = make_list(&p, 1, off, len);
	for (i = 0; i < 2 * DFG_RDMA_SLOTS && !ret; i++)
		ret = send_list(&p, l);
	pf_tap(!ret, "stall: %u lists sent, no answer taken", i);
	sleep(sec);
	peer_close(&p);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[3], "lists"))
		step_lists(argv[1], argv[2]);
	else if (argc == 5 && !strcmp(argv[3], "flood"))
		step_flood(argv[1], argv[2], (unsigned int)atoi(argv[4]));
	else if (argc == 5 && !strcmp(argv[3], "stall"))
		step_stall(argv[1], argv[2], (unsigned int)atoi(argv[4]));
	else {
		fprintf(stderr,
			"usage: pf_rdma_peer ADDR PORT lists | flood MAX | stall SECONDS\n");
		return 2;
	}
	return !!pf_fails;
}
