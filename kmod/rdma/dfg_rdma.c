// SPDX-License-Identifier: GPL-2.0
/*
 * dfg_rdma.c - dfg_rdma.ko, the RDMA transport of dfg.ko's prefetch (see
 * kmod/pf_xport.h). A module of its own so that dfg.ko loads on machines
 * without ib_core; it registers itself with dfg.ko at load and depends
 * on it, so it is unloaded first.
 *
 * Server side: a listening rdma_cm id on port dfg_rdma.port (IPv4, any
 * address, every RDMA device present or added later). Each connection
 * that arrives gets its own PD, CQ and RC QP, and registers this machine's
 * partition image (pinned in dfg.ko by dfg_pf_serve_get()) with fast-reg
 * MRs for remote reads only, one MR per chunk of at most the device's
 * fast-reg page list. It posts DFG_RDMA_SLOTS receives for lists before
 * it accepts; once established it posts the registrations, then one
 * SEND, the hello: what it serves and each chunk's rkey and address. The
 * SEND follows the registrations on the same send queue, so a peer that
 * has the hello can read. A connection without a loaded partition is
 * rejected (the connector sees -ECONNREFUSED). A list that comes (a SEND:
 * at most DFG_RDMA_LIST_MAX extents of the image) is checked whole, every
 * extent inside the image and all of them within one answer, and
 * answered with one SEND of the extents' bytes back to back, copied out
 * of the image into one of DFG_RDMA_SLOTS answer buffers; a list that is
 * not one drops the peer (stats/dropped). Lists and answers are the CQ's
 * completions' alone, which run one at a time.
 *
 * Client side (->connect, from DFG_IOC_PEER_ADD): resolve the address and
 * route, make the QP, post the receive for the hello and those for the
 * answers, connect, wait for the hello. ->read takes a batch of reads (a
 * PREFETCH's toward this peer). Reads up to dfg_rdma.pack_max bytes go in
 * lists of at most DFG_RDMA_LIST_MAX reads and one answer's bytes, sent
 * from DFG_RDMA_SLOTS request slots (the rest wait for a slot); an answer
 * is copied out to its reads' destinations and ends them. Over Soft-RoCE
 * this costs a SEND each way instead of a READ request and response per
 * read (tools/bench/pf_batch.c measures both). Longer reads go as RDMA
 * READs whose scatter list is the destination's pages (local DMA lkey),
 * split at the peer's chunk ends, in chains of at most DFG_RDMA_CHAIN
 * reads: one ib_post_send each with only the last WR signalled; an RC
 * send queue completes in order, so that WR's completion ends every read
 * of the chain, and a WR that fails completes signalled or not (as does
 * every WR flushed after it), before the chain's end, which then fails
 * all of its reads. A failed WR (retries exhausted: the peer is dead or
 * the link down) or a disconnect marks the connection dead and tells
 * dfg.ko (dfg_pf_peer_lost()); the QP's error state flushes every other
 * WR, and a flushed receive fails every list still waiting for its
 * answer. The time until a dead peer's read fails is bounded by the ack
 * timeout and retry count (dfg_rdma.ack_timeout, DFG_RDMA_RETRY); a peer
 * that took a list and then went silent, by dfg_rdma.list_timeout_ms
 * (the connection's timer fails the QP).
 *
 * Objects and locks (lock order: the table in kmod/dfg.h, which lists
 * dfg_rdma_lock and dfg_rdma_conn.lock with dfg.ko's locks)
 *   dfg_rdma_srv	one accepted connection, on dfg_rdma_srvs under
 *			dfg_rdma_lock (mutex: the list, each ->dying); freed
 *			by its work on dfg_rdma_wq, queued once (->dying) by
 *			a disconnect event, a bad list or the module's exit.
 *   dfg_rdma_conn	one connection to a peer, owned by dfg.ko from
 *			->connect to ->disconnect. ->lock (spinlock, process
 *			context: cm handler, CQ work, timer, ->read) guards
 *			->dead, ->closing, the lists waiting and the slots.
 *			->sq_used counts READ WRs posted and not completed,
 *			so the send queue never overflows (the lists' SENDs
 *			have DFG_RDMA_SLOTS entries of their own).
 *   dfg_rdma_list	reads waiting for a slot or in one: freed when its
 *			answer came, or when it failed.
 *   dfg_rdma_chain	one ib_post_send of READs in flight: freed by the
 *			completion of its last WR, which ends its reads.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "pf_xport.h"
#include "dfg_rdma_wire.h"

static unsigned short dfg_rdma_port = DFG_PF_PORT;
module_param_named(port, dfg_rdma_port, ushort, 0444);
MODULE_PARM_DESC(port, "TCP-space port the module listens on");

/*
 * 4.096 us * 2^18 = 1.07 s per try, DFG_RDMA_RETRY + 1 tries: a dead peer
 * fails reads within about 4.3 s. Shorter tries broke live connections of
 * a loaded TCG rig before (DESIGN.md, Across machines).
 */
static unsigned char dfg_rdma_ack_timeout = 18;
module_param_named(ack_timeout, dfg_rdma_ack_timeout, byte, 0644);
MODULE_PARM_DESC(ack_timeout, "RC ack timeout exponent (4.096 us * 2^x)");

static unsigned int dfg_rdma_list_tmo = 8000;
module_param_named(list_timeout_ms, dfg_rdma_list_tmo, uint, 0644);
MODULE_PARM_DESC(list_timeout_ms,
		 "a list of reads unanswered this long fails the connection");

/*
 * Reads up to this go in lists answered by the peer's module (at most
 * what an answer holds), longer ones as RDMA READs; 0: every read is an
 * RDMA READ.
 */
static unsigned int dfg_rdma_pack_max = 16384;
module_param_named(pack_max, dfg_rdma_pack_max, uint, 0644);
MODULE_PARM_DESC(pack_max,
		 "reads up to this many bytes go in lists, longer ones as RDMA READs");

/*
 * Connections served at once: each holds a PD, a CQ, a QP, the image's
 * registrations and DFG_RDMA_SLOTS list and answer buffers (about 560
 * KiB), so a peer that opens many must meet a bound. Read at each
 * connection request.
 */
static unsigned int dfg_rdma_max_conns = 64;
module_param_named(max_conns, dfg_rdma_max_conns, uint, 0644);
MODULE_PARM_DESC(max_conns, "most peer connections served at once");

/*
 * Fault injection for the selftests (selftests/prefetch/node0.sh): the
 * next list sent asks for bytes across the end of the peer's image (1)
 * or says it has more extents than a list may (2), so that the peer's
 * checks of what it serves can be seen to drop us.
 */
static unsigned int dfg_rdma_fault_list;
module_param_named(fault_list, dfg_rdma_fault_list, uint, 0644);
MODULE_PARM_DESC(fault_list,
		 "testing: the next list sent is bad (1: past the image, 2: too long)");

#define DFG_RDMA_RETRY		3
#define DFG_RDMA_SGE		8	/* destination pages per READ */
#define DFG_RDMA_SQ_DEPTH	1024
/* Reads per chain: one GFP_ATOMIC allocation of about 8 KiB. */
#define DFG_RDMA_CHAIN		32

/* A DMA-mapped buffer of a connection and the completion of its WR. */
struct dfg_rdma_buf {
	struct ib_cqe		cqe;
	void			*owner;	/* its dfg_rdma_srv or _conn */
	void			*va;
	u64			dma;
	u32			len;
	bool			busy;
};

static int dfg_rdma_buf_make(struct ib_device *dev, struct dfg_rdma_buf *b,
			     void *owner, u32 len,
			     enum dma_data_direction dir)
{
	b->owner = owner;
	b->len = len;
	b->va = kmalloc(len, GFP_KERNEL);
	if (!b->va)
		return -ENOMEM;
	b->dma = ib_dma_map_single(dev, b->va, len, dir);
	if (ib_dma_mapping_error(dev, b->dma)) {
		b->dma = 0;
		return -ENOMEM;
	}
	return 0;
}

static void dfg_rdma_buf_drop(struct ib_device *dev, struct dfg_rdma_buf *b,
			      enum dma_data_direction dir)
{
	if (b->dma)
		ib_dma_unmap_single(dev, b->dma, b->len, dir);
	kfree(b->va);
}

static int dfg_rdma_post_recv(struct ib_qp *qp, struct ib_pd *pd,
			      struct dfg_rdma_buf *b)
{
	struct ib_sge sge = {
		.addr	= b->dma,
		.length	= b->len,
		.lkey	= pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &b->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};

	return ib_post_recv(qp, &wr, NULL);
}

static int dfg_rdma_post_send(struct ib_qp *qp, struct ib_pd *pd,
			      struct dfg_rdma_buf *b, u32 len)
{
	struct ib_sge sge = {
		.addr	= b->dma,
		.length	= len,
		.lkey	= pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe		= &b->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};

	return ib_post_send(qp, &wr, NULL);
}

static struct workqueue_struct *dfg_rdma_wq;
/* Counters, /sys/module/dfg_rdma/stats/. */
static atomic64_t dfg_rdma_lists;	/* served: lists answered */
static atomic64_t dfg_rdma_dropped;	/* served: peers dropped */
static atomic64_t dfg_rdma_timeouts;	/* lists unanswered in time */
static atomic64_t dfg_rdma_refused;	/* connections over max_conns */
static atomic_t dfg_rdma_nconns;	/* connections served now */
static struct rdma_cm_id *dfg_rdma_listen_id;
static DEFINE_MUTEX(dfg_rdma_lock);
static LIST_HEAD(dfg_rdma_srvs);

/* ---- server side ---- */

struct dfg_rdma_mr {
	struct ib_mr		*mr;
	struct sg_table		sgt;
	int			nents;
};

struct dfg_rdma_srv {
	struct list_head	node;
	bool			dying;	/* under dfg_rdma_lock */
	bool			served;
	struct rdma_cm_id	*id;
	struct ib_pd		*pd;
	struct ib_cq		*cq;
	struct dfg_pf_served	part;
	unsigned int		nchunks;
	struct dfg_rdma_mr	*mrs;
	struct dfg_rdma_hello	*hello;
	size_t			hello_len;
	u64			hello_dma;
	struct ib_cqe		cqe;
	struct work_struct	free_work;
	/*
	 * Lists come into ->lists (receives), answers go from ->answers;
	 * an answer is ->busy from its SEND to its completion. Touched by
	 * the CQ's completions alone, which run one at a time (one CQ,
	 * IB_POLL_WORKQUEUE), and by the teardown after ib_drain_qp().
	 */
	struct dfg_rdma_buf	lists[DFG_RDMA_SLOTS];
	struct dfg_rdma_buf	answers[DFG_RDMA_SLOTS];
	/*
	 * Lists that came before an answer buffer was free again (the
	 * client had the answer, our SEND's completion is still to come),
	 * in order: each stays in its receive buffer until answered.
	 */
	struct dfg_rdma_buf	*waiting[DFG_RDMA_SLOTS];
	u32			waiting_len[DFG_RDMA_SLOTS];
	unsigned int		nwaiting;
};

static void dfg_rdma_srv_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	/* Ratelimited: a peer can make as many as it sends. */
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("serving a peer: %s\n",
				    ib_wc_status_msg(wc->status));
}

/* Tear down what dfg_rdma_srv_setup() made, all but the id. */
static void dfg_rdma_srv_release(struct dfg_rdma_srv *s)
{
	struct ib_device *dev = s->id->device;
	unsigned int i;

	if (s->id->qp) {
		ib_drain_qp(s->id->qp);
		rdma_destroy_qp(s->id);
	}
	for (i = 0; i < DFG_RDMA_SLOTS; i++) {
		dfg_rdma_buf_drop(dev, &s->lists[i], DMA_FROM_DEVICE);
		dfg_rdma_buf_drop(dev, &s->answers[i], DMA_TO_DEVICE);
	}
	for (i = 0; s->mrs && i < s->nchunks; i++) {
		struct dfg_rdma_mr *m = &s->mrs[i];

		if (m->mr)
			ib_dereg_mr(m->mr);
		if (m->nents)
			ib_dma_unmap_sg(dev, m->sgt.sgl, m->sgt.orig_nents,
					DMA_TO_DEVICE);
		sg_free_table(&m->sgt);
	}
	kfree(s->mrs);
	if (s->hello_dma)
		ib_dma_unmap_single(dev, s->hello_dma, s->hello_len,
				    DMA_TO_DEVICE);
	kfree(s->hello);
	if (s->cq)
		ib_free_cq(s->cq);
	if (s->pd)
		ib_dealloc_pd(s->pd);
	if (s->served)
		dfg_pf_serve_put();
	kfree(s);
}

static void dfg_rdma_srv_free_work(struct work_struct *work)
{
	struct dfg_rdma_srv *s = container_of(work, struct dfg_rdma_srv,
					      free_work);
	struct rdma_cm_id *id;

	mutex_lock(&dfg_rdma_lock);
	list_del(&s->node);
	mutex_unlock(&dfg_rdma_lock);
	id = s->id;
	rdma_disconnect(id);
	dfg_rdma_srv_release(s);
	rdma_destroy_id(id);
	atomic_dec(&dfg_rdma_nconns);
}

/* Queue @s's end once; the cm handler and the module's exit both may. */
static void dfg_rdma_srv_kill(struct dfg_rdma_srv *s)
{
	mutex_lock(&dfg_rdma_lock);
	if (!s->dying) {
		s->dying = true;
		queue_work(dfg_rdma_wq, &s->free_work);
	}
	mutex_unlock(&dfg_rdma_lock);
}

static int dfg_rdma_srv_answer(struct dfg_rdma_srv *s,
			       struct dfg_rdma_buf *in, u32 len);
static void dfg_rdma_srv_taken(struct dfg_rdma_srv *s,
			       struct dfg_rdma_buf *in, int ret);

/* An answer went: its buffer is free, for the oldest list waiting. */
static void dfg_rdma_srv_answer_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct dfg_rdma_buf *b = container_of(wc->wr_cqe, struct dfg_rdma_buf,
					      cqe);
	struct dfg_rdma_srv *s = b->owner;
	struct dfg_rdma_buf *in;
	u32 len;

	b->busy = false;
	dfg_rdma_srv_wr_done(cq, wc);
	if (wc->status != IB_WC_SUCCESS || !s->nwaiting)
		return;
	in = s->waiting[0];
	len = s->waiting_len[0];
	s->nwaiting--;
	memmove(s->waiting, s->waiting + 1, s->nwaiting * sizeof(*s->waiting));
	memmove(s->waiting_len, s->waiting_len + 1,
		s->nwaiting * sizeof(*s->waiting_len));
	dfg_rdma_srv_taken(s, in, dfg_rdma_srv_answer(s, in, len));
}

/*
 * Answer the list in @in (@len bytes): every extent checked against the
 * image, and the answer's room, before anything is copied; then the
 * bytes packed into a free answer buffer behind the header, one SEND.
 * 0 when answered, 1 when it waits for an answer buffer (s->waiting),
 * -EPROTO for a list that is not one.
 */
static int dfg_rdma_srv_answer(struct dfg_rdma_srv *s,
			       struct dfg_rdma_buf *in, u32 len)
{
	const struct dfg_rdma_list_hdr *q = in->va;
	const struct dfg_rdma_ext *x = (const void *)(q + 1);
	struct ib_device *dev = s->id->device;
	struct dfg_rdma_answer *a;
	struct dfg_rdma_buf *out = NULL;
	u64 bytes = 0;
	u32 i, n;
	u8 *to;

	ib_dma_sync_single_for_cpu(dev, in->dma, in->len, DMA_FROM_DEVICE);
	if (len < sizeof(*q))
		return -EPROTO;
	n = le32_to_cpu(q->count);
	if (le32_to_cpu(q->magic) != DFG_RDMA_MAGIC_LIST || !n ||
	    n > DFG_RDMA_LIST_MAX || len != sizeof(*q) + n * sizeof(*x) ||
	    q->pad)
		return -EPROTO;
	for (i = 0; i < n; i++) {
		u64 off = le64_to_cpu(x[i].off);
		u32 l = le32_to_cpu(x[i].len);

		/* The image is s->part.bytes long; nothing outside goes. */
		if (!l || x[i].pad || off > s->part.bytes ||
		    l > s->part.bytes - off || l > DFG_RDMA_PAYLOAD_MAX - bytes)
			return -EPROTO;
		bytes += l;
	}
	for (i = 0; i < DFG_RDMA_SLOTS && !out; i++)
		if (!s->answers[i].busy)
			out = &s->answers[i];
	if (!out) {
		/* One waiting per receive buffer at most: never full. */
		if (WARN_ON_ONCE(s->nwaiting >= DFG_RDMA_SLOTS))
			return -EPROTO;
		s->waiting[s->nwaiting] = in;
		s->waiting_len[s->nwaiting++] = len;
		return 1;
	}
	a = out->va;
	a->magic = cpu_to_le32(DFG_RDMA_MAGIC_ANSWER);
	a->slot = q->slot;
	a->count = q->count;
	a->pad = 0;
	a->bytes = cpu_to_le64(bytes);
	to = (u8 *)(a + 1);
	for (i = 0; i < n; i++) {
		u32 l = le32_to_cpu(x[i].len);

		memcpy(to, s->part.image + le64_to_cpu(x[i].off), l);
		to += l;
	}
	ib_dma_sync_single_for_device(dev, out->dma, out->len, DMA_TO_DEVICE);
	out->busy = true;
	if (dfg_rdma_post_send(s->id->qp, s->pd, out, sizeof(*a) + bytes)) {
		out->busy = false;
		return -EIO;
	}
	return 0;
}

/*
 * The list in @in was answered (@ret 0: @in takes the next), waits (1) or
 * was bad (< 0: the peer is dropped).
 */
static void dfg_rdma_srv_taken(struct dfg_rdma_srv *s,
			       struct dfg_rdma_buf *in, int ret)
{
	if (ret > 0)
		return;
	if (!ret)
		ret = dfg_rdma_post_recv(s->id->qp, s->pd, in);
	if (ret) {
		atomic64_inc(&dfg_rdma_dropped);
		pr_warn_ratelimited("dropped a peer: %s (%d)\n",
				    ret == -EPROTO ? "bad list" : "error", ret);
		dfg_rdma_srv_kill(s);
		return;
	}
	atomic64_inc(&dfg_rdma_lists);
}

/* A list came: answer it, take the next into the same buffer. */
static void dfg_rdma_srv_list_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct dfg_rdma_buf *in = container_of(wc->wr_cqe, struct dfg_rdma_buf,
					       cqe);
	struct dfg_rdma_srv *s = in->owner;

	/*
	 * A flush is the connection's end. Another failed receive is the
	 * peer's doing (a SEND longer than a list's buffer): its QP is in
	 * error now, so it is dropped like a bad list.
	 */
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			dfg_rdma_srv_taken(s, in, -EPROTO);
		return;
	}
	dfg_rdma_srv_taken(s, in, dfg_rdma_srv_answer(s, in, wc->byte_len));
}

/* Register chunk @i of the image: fast-reg MR, remote read only. */
static int dfg_rdma_srv_chunk(struct dfg_rdma_srv *s, unsigned int i,
			      unsigned int chunk_pages)
{
	struct ib_device *dev = s->id->device;
	unsigned long first = (unsigned long)i * chunk_pages;
	unsigned long total = DIV_ROUND_UP(s->part.bytes, PAGE_SIZE);
	unsigned int j, n = min_t(unsigned long, chunk_pages, total - first);
	struct dfg_rdma_mr *m = &s->mrs[i];
	struct scatterlist *sg;
	int ret;

	ret = sg_alloc_table(&m->sgt, n, GFP_KERNEL);
	if (ret)
		return ret;
	for_each_sg(m->sgt.sgl, sg, n, j)
		sg_set_page(sg, vmalloc_to_page(s->part.image +
						(first + j) * PAGE_SIZE),
			    PAGE_SIZE, 0);
	m->nents = ib_dma_map_sg(dev, m->sgt.sgl, n, DMA_TO_DEVICE);
	if (!m->nents)
		return -ENOMEM;
	m->mr = ib_alloc_mr(s->pd, IB_MR_TYPE_MEM_REG, n);
	if (IS_ERR(m->mr)) {
		ret = PTR_ERR(m->mr);
		m->mr = NULL;
		return ret;
	}
	if (ib_map_mr_sg(m->mr, m->sgt.sgl, m->nents, NULL, PAGE_SIZE) !=
	    m->nents)
		return -EINVAL;
	ib_update_fast_reg_key(m->mr, ib_inc_rkey(m->mr->rkey));
	s->hello->chunk[i].iova = cpu_to_le64(m->mr->iova);
	s->hello->chunk[i].rkey = cpu_to_le32(m->mr->rkey);
	return 0;
}

static void dfg_rdma_hello_fill(struct dfg_rdma_hello *h,
				const struct dfg_part_hdr *p,
				unsigned int nchunks, u64 chunk_bytes)
{
	h->magic = cpu_to_le32(DFG_RDMA_MAGIC);
	h->version = cpu_to_le32(DFG_RDMA_VERSION);
	h->node_first = cpu_to_le64(p->node_first);
	h->node_count = cpu_to_le64(p->node_count);
	h->feat_bytes = cpu_to_le32(p->feat_bytes);
	h->nchunks = cpu_to_le32(nchunks);
	h->row_off = cpu_to_le64(p->row_off);
	h->col_off = cpu_to_le64(p->col_off);
	h->col_count = cpu_to_le64(p->col_count);
	h->feat_off = cpu_to_le64(p->feat_off);
	h->image_bytes = cpu_to_le64(p->image_bytes);
	h->chunk_bytes = cpu_to_le64(chunk_bytes);
	h->part_set = cpu_to_le64(p->part_set);
}

/* CONNECT_REQUEST: everything of a connection but the registrations. */
static int dfg_rdma_srv_setup(struct dfg_rdma_srv *s,
			      const struct rdma_conn_param *req)
{
	struct ib_device *dev = s->id->device;
	struct ib_qp_init_attr qa = {};
	struct rdma_conn_param cp = {};
	unsigned int i, chunk_pages;
	u64 chunk_bytes;
	int ret;

	ret = dfg_pf_serve_get(&s->part);
	if (ret)
		return ret;
	s->served = true;
	chunk_pages = min_t(u32, dev->attrs.max_fast_reg_page_list_len, 512);
	if (!chunk_pages)
		return -EOPNOTSUPP;
	chunk_bytes = (u64)chunk_pages * PAGE_SIZE;
	s->nchunks = DIV_ROUND_UP_ULL(s->part.bytes, chunk_bytes);
	if (s->nchunks > DFG_RDMA_CHUNKS_MAX) {
		pr_warn("partition of %llu bytes too large to serve\n",
			s->part.bytes);
		return -EFBIG;
	}
	s->hello_len = struct_size(s->hello, chunk, s->nchunks);
	s->hello = kzalloc(s->hello_len, GFP_KERNEL);
	s->mrs = kcalloc(s->nchunks, sizeof(*s->mrs), GFP_KERNEL);
	if (!s->hello || !s->mrs)
		return -ENOMEM;
	dfg_rdma_hello_fill(s->hello, &s->part.hdr, s->nchunks, chunk_bytes);

	s->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(s->pd)) {
		ret = PTR_ERR(s->pd);
		s->pd = NULL;
		return ret;
	}
	/* Registrations, the hello, answers and lists, the drain's. */
	s->cq = ib_alloc_cq(dev, s, s->nchunks + 2 * DFG_RDMA_SLOTS + 8, 0,
			    IB_POLL_WORKQUEUE);
	if (IS_ERR(s->cq)) {
		ret = PTR_ERR(s->cq);
		s->cq = NULL;
		return ret;
	}
	for (i = 0; i < s->nchunks; i++) {
		ret = dfg_rdma_srv_chunk(s, i, chunk_pages);
		if (ret)
			return ret;
	}
	s->hello_dma = ib_dma_map_single(dev, s->hello, s->hello_len,
					 DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, s->hello_dma)) {
		s->hello_dma = 0;
		return -ENOMEM;
	}
	for (i = 0; i < DFG_RDMA_SLOTS; i++) {
		ret = dfg_rdma_buf_make(dev, &s->lists[i], s,
					DFG_RDMA_LIST_BYTES, DMA_FROM_DEVICE);
		if (!ret)
			ret = dfg_rdma_buf_make(dev, &s->answers[i], s,
						DFG_RDMA_ANSWER_MAX,
						DMA_TO_DEVICE);
		if (ret)
			return ret;
		s->lists[i].cqe.done = dfg_rdma_srv_list_done;
		s->answers[i].cqe.done = dfg_rdma_srv_answer_done;
	}
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = IB_QPT_RC;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.cap.max_send_wr = s->nchunks + DFG_RDMA_SLOTS + 2;
	qa.cap.max_recv_wr = DFG_RDMA_SLOTS + 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	ret = rdma_create_qp(s->id, s->pd, &qa);
	if (ret)
		return ret;
	/* Before the client hears the hello, so no list finds none. */
	for (i = 0; i < DFG_RDMA_SLOTS; i++) {
		ret = dfg_rdma_post_recv(s->id->qp, s->pd, &s->lists[i]);
		if (ret)
			return ret;
	}
	s->cqe.done = dfg_rdma_srv_wr_done;
	/* The event gives the connector's initiator depth this name. */
	cp.responder_resources = min_t(u32, req->responder_resources,
				       dev->attrs.max_qp_rd_atom);
	cp.initiator_depth = 0;
	cp.rnr_retry_count = 7;
	return rdma_accept(s->id, &cp);
}

/* ESTABLISHED: registrations, then the hello behind them. */
static int dfg_rdma_srv_start(struct dfg_rdma_srv *s)
{
	struct ib_sge sge = {
		.addr	= s->hello_dma,
		.length	= s->hello_len,
		.lkey	= s->pd->local_dma_lkey,
	};
	struct ib_send_wr send = {
		.wr_cqe		= &s->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};
	unsigned int i;
	int ret;

	for (i = 0; i < s->nchunks; i++) {
		struct ib_reg_wr reg = {
			.wr.wr_cqe	= &s->cqe,
			.wr.opcode	= IB_WR_REG_MR,
			.mr		= s->mrs[i].mr,
			.key		= s->mrs[i].mr->rkey,
			.access		= IB_ACCESS_REMOTE_READ,
		};

		ret = ib_post_send(s->id->qp, &reg.wr, NULL);
		if (ret)
			return ret;
	}
	return ib_post_send(s->id->qp, &send, NULL);
}

static int dfg_rdma_listen_handler(struct rdma_cm_id *id,
				   struct rdma_cm_event *ev)
{
	struct dfg_rdma_srv *s = id->context;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* A slot, given back by the free work (or below on failure). */
		if (atomic_inc_return(&dfg_rdma_nconns) >
		    READ_ONCE(dfg_rdma_max_conns)) {
			atomic_dec(&dfg_rdma_nconns);
			atomic64_inc(&dfg_rdma_refused);
			pr_warn_ratelimited("refused a peer: %u connections served\n",
					    READ_ONCE(dfg_rdma_max_conns));
			rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
			/* Nonzero: the cm destroys the id. */
			return -EBUSY;
		}
		s = kzalloc(sizeof(*s), GFP_KERNEL);
		if (!s) {
			atomic_dec(&dfg_rdma_nconns);
			rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
			return -ENOMEM;
		}
		s->id = id;
		INIT_WORK(&s->free_work, dfg_rdma_srv_free_work);
		id->context = s;
		ret = dfg_rdma_srv_setup(s, &ev->param.conn);
		if (ret) {
			rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
			dfg_rdma_srv_release(s);
			atomic_dec(&dfg_rdma_nconns);
			/* Nonzero: the cm destroys the id. */
			return ret;
		}
		mutex_lock(&dfg_rdma_lock);
		list_add(&s->node, &dfg_rdma_srvs);
		mutex_unlock(&dfg_rdma_lock);
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		ret = dfg_rdma_srv_start(s);
		if (ret) {
			pr_warn("cannot start serving a peer: %d\n", ret);
			dfg_rdma_srv_kill(s);
		}
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		if (s)
			dfg_rdma_srv_kill(s);
		return 0;
	default:
		return 0;
	}
}

/* ---- client side ---- */

struct dfg_rdma_rkey {
	u64	iova;
	u32	rkey;
};

/*
 * A list of reads waiting for a slot or in one: @n reads of @bytes in
 * all; @status is what they end with once it is over.
 */
struct dfg_rdma_list {
	struct list_head	node;
	unsigned int		n;
	int			status;
	u64			bytes;
	struct dfg_pf_read	*rds[];
};

/*
 * A request slot: the list in it (@l, NULL when free), its SEND's buffer,
 * when it went, whether the SEND completed and whether the answer came
 * (or never will). Over when both: then its reads end.
 */
struct dfg_rdma_slot {
	struct dfg_rdma_buf	req;
	struct dfg_rdma_list	*l;
	unsigned long		sent;
	bool			send_done;
	bool			answered;
	int			status;
};

struct dfg_rdma_conn {
	struct rdma_cm_id	*id;
	struct ib_pd		*pd;
	struct ib_cq		*cq;
	struct dfg_pf_peer	*peer;
	spinlock_t		lock;	/* see the top */
	bool			dead;
	bool			closing;
	struct completion	cm_done;
	int			cm_status;
	struct completion	hello_done;
	int			hello_status;
	u32			hello_len;
	struct dfg_rdma_hello	*hello;
	u64			hello_dma;
	struct ib_cqe		recv_cqe;
	atomic_t		sq_used;
	u32			sq_depth;
	u32			max_sge;
	u64			image_bytes;
	u64			chunk_bytes;
	u32			nchunks;
	struct dfg_rdma_rkey	*rk;
	/* Lists waiting for a slot, the slots: under ->lock. */
	struct list_head	pending;
	struct dfg_rdma_slot	slots[DFG_RDMA_SLOTS];
	/* Receives for the answers; CQ completions alone touch them. */
	struct dfg_rdma_buf	answers[DFG_RDMA_SLOTS];
	/* Fails the connection when a list stays unanswered. */
	struct delayed_work	timer;
};

struct dfg_rdma_chain;

struct dfg_rdma_wr {
	struct ib_cqe		cqe;
	struct ib_rdma_wr	wr;
	struct dfg_rdma_chain	*ch;
	struct ib_sge		sge[DFG_RDMA_SGE];
};

/*
 * @next: the next chain of the same ->read, until it is posted
 * @last: index of the WR whose completion ends the chain
 * @rds: @n reads, behind @wr[@nwr]
 */
struct dfg_rdma_chain {
	struct dfg_rdma_conn	*c;
	struct dfg_rdma_chain	*next;
	int			status;
	unsigned int		nwr;
	unsigned int		last;
	unsigned int		n;
	struct dfg_pf_read	**rds;
	struct dfg_rdma_wr	wr[];
};

/* The connection failed: tell dfg.ko once, unless it is ending it. */
static void dfg_rdma_conn_lost(struct dfg_rdma_conn *c)
{
	bool tell;

	spin_lock(&c->lock);
	tell = !c->dead && !c->closing;
	c->dead = true;
	spin_unlock(&c->lock);
	if (tell)
		dfg_pf_peer_lost(c->peer);
}

/* Fail the connection from our side: its QP errs, every WR flushes. */
static void dfg_rdma_conn_kill(struct dfg_rdma_conn *c)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	dfg_rdma_conn_lost(c);
	ib_modify_qp(c->id->qp, &attr, IB_QP_STATE);
}

/* Every read of @l ends with @status; @l goes. */
static void dfg_rdma_list_end(struct dfg_rdma_list *l, int status)
{
	unsigned int i;

	for (i = 0; i < l->n; i++)
		dfg_pf_read_done(l->rds[i], status);
	kfree(l);
}

/* Lists never started: only freed. */
static void dfg_rdma_lists_free(struct list_head *lists)
{
	struct dfg_rdma_list *l, *tmp;

	list_for_each_entry_safe(l, tmp, lists, node)
		kfree(l);
	INIT_LIST_HEAD(lists);
}

static void dfg_rdma_lists_end(struct list_head *lists)
{
	struct dfg_rdma_list *l, *tmp;

	list_for_each_entry_safe(l, tmp, lists, node)
		dfg_rdma_list_end(l, l->status);
}

/* Under c->lock: if slot @sl is over, free it and put its list on @done. */
static void dfg_rdma_slot_over(struct dfg_rdma_slot *sl,
			       struct list_head *done)
{
	if (!sl->l || !sl->send_done || !sl->answered)
		return;
	sl->l->status = sl->status;
	list_add_tail(&sl->l->node, done);
	sl->l = NULL;
}

/* Under c->lock: send list @l from free slot @i. */
static int dfg_rdma_slot_start(struct dfg_rdma_conn *c, unsigned int i,
			       struct dfg_rdma_list *l)
{
	struct dfg_rdma_slot *sl = &c->slots[i];
	struct dfg_rdma_list_hdr *q = sl->req.va;
	struct dfg_rdma_ext *x = (void *)(q + 1);
	u32 j, len = sizeof(*q) + l->n * sizeof(*x);
	int ret;

	q->magic = cpu_to_le32(DFG_RDMA_MAGIC_LIST);
	q->count = cpu_to_le32(l->n);
	q->slot = cpu_to_le32(i);
	q->pad = 0;
	for (j = 0; j < l->n; j++) {
		x[j].off = cpu_to_le64(l->rds[j]->off);
		x[j].len = cpu_to_le32(l->rds[j]->len);
		x[j].pad = 0;
	}
	switch (xchg(&dfg_rdma_fault_list, 0)) {
	case 1:
		x[l->n - 1].off = cpu_to_le64(c->image_bytes - 4);
		x[l->n - 1].len = cpu_to_le32(8);
		break;
	case 2:
		q->count = cpu_to_le32(DFG_RDMA_LIST_MAX + 1);
		break;
	}
	ib_dma_sync_single_for_device(c->id->device, sl->req.dma, len,
				      DMA_TO_DEVICE);
	sl->l = l;
	sl->sent = jiffies;
	sl->send_done = false;
	sl->answered = false;
	sl->status = 0;
	ret = dfg_rdma_post_send(c->id->qp, c->pd, &sl->req, len);
	if (ret)
		sl->l = NULL;
	return ret;
}

/*
 * Lists waiting go into free slots; on a connection that is over they
 * fail instead. Called after anything that may free a slot or add a list.
 */
static void dfg_rdma_kick(struct dfg_rdma_conn *c)
{
	struct dfg_rdma_list *l;
	unsigned int i;
	LIST_HEAD(fail);
	int ret;

	spin_lock(&c->lock);
	for (i = 0; i < DFG_RDMA_SLOTS && !list_empty(&c->pending); i++) {
		if (c->dead || c->closing)
			break;
		if (c->slots[i].l)
			continue;
		l = list_first_entry(&c->pending, struct dfg_rdma_list, node);
		list_del(&l->node);
		ret = dfg_rdma_slot_start(c, i, l);
		if (ret) {
			l->status = ret;
			list_add_tail(&l->node, &fail);
		}
	}
	if (c->dead || c->closing) {
		list_for_each_entry(l, &c->pending, node)
			l->status = -EHOSTUNREACH;
		list_splice_tail_init(&c->pending, &fail);
	}
	spin_unlock(&c->lock);
	dfg_rdma_lists_end(&fail);
}

/* A list's SEND completed. */
static void dfg_rdma_list_sent(struct ib_cq *cq, struct ib_wc *wc)
{
	struct dfg_rdma_slot *sl = container_of(wc->wr_cqe,
						struct dfg_rdma_slot, req.cqe);
	struct dfg_rdma_conn *c = sl->req.owner;
	LIST_HEAD(done);

	if (wc->status != IB_WC_SUCCESS)
		dfg_rdma_conn_lost(c);
	spin_lock(&c->lock);
	sl->send_done = true;
	/* Not sent, not answered: an answer cannot come any more. */
	if (wc->status != IB_WC_SUCCESS && !sl->answered) {
		sl->answered = true;
		sl->status = -EHOSTUNREACH;
	}
	dfg_rdma_slot_over(sl, &done);
	spin_unlock(&c->lock);
	dfg_rdma_lists_end(&done);
	dfg_rdma_kick(c);
}

/*
 * Under c->lock: the answer @a (@len bytes) into its slot's reads; false
 * if it answers no list in flight or not the one that is.
 */
static bool dfg_rdma_answer_take(struct dfg_rdma_conn *c,
				 const struct dfg_rdma_answer *a, u32 len,
				 struct list_head *done)
{
	u32 i = le32_to_cpu(a->slot);
	const u8 *from = (const u8 *)(a + 1);
	struct dfg_rdma_slot *sl;
	struct dfg_rdma_list *l;

	if (len < sizeof(*a) || le32_to_cpu(a->magic) != DFG_RDMA_MAGIC_ANSWER ||
	    i >= DFG_RDMA_SLOTS)
		return false;
	sl = &c->slots[i];
	l = sl->l;
	if (!l || sl->answered || le32_to_cpu(a->count) != l->n ||
	    le64_to_cpu(a->bytes) != l->bytes || len != sizeof(*a) + l->bytes)
		return false;
	for (i = 0; i < l->n; i++) {
		memcpy(l->rds[i]->dst, from, l->rds[i]->len);
		from += l->rds[i]->len;
	}
	sl->answered = true;
	dfg_rdma_slot_over(sl, done);
	return true;
}

/*
 * Under c->lock: the connection is over, so no answer comes any more;
 * every slot that waits for one fails.
 */
static void dfg_rdma_unanswered_fail(struct dfg_rdma_conn *c,
				     struct list_head *done)
{
	unsigned int i;

	for (i = 0; i < DFG_RDMA_SLOTS; i++) {
		struct dfg_rdma_slot *sl = &c->slots[i];

		if (!sl->l || sl->answered)
			continue;
		sl->answered = true;
		sl->status = -EHOSTUNREACH;
		dfg_rdma_slot_over(sl, done);
	}
}

/* An answer came into @b (or the receive flushed: the QP is in error). */
static void dfg_rdma_answer_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct dfg_rdma_buf *b = container_of(wc->wr_cqe, struct dfg_rdma_buf,
					      cqe);
	struct dfg_rdma_conn *c = b->owner;
	LIST_HEAD(done);
	bool ok = false;

	if (wc->status != IB_WC_SUCCESS) {
		dfg_rdma_conn_lost(c);
		spin_lock(&c->lock);
		dfg_rdma_unanswered_fail(c, &done);
		spin_unlock(&c->lock);
	} else {
		ib_dma_sync_single_for_cpu(c->id->device, b->dma, b->len,
					   DMA_FROM_DEVICE);
		spin_lock(&c->lock);
		ok = dfg_rdma_answer_take(c, b->va, wc->byte_len, &done);
		spin_unlock(&c->lock);
		if (!ok)
			pr_warn_ratelimited("a peer's answer fits no list\n");
		if (!ok || dfg_rdma_post_recv(c->id->qp, c->pd, b))
			dfg_rdma_conn_kill(c);
	}
	dfg_rdma_lists_end(&done);
	dfg_rdma_kick(c);
}

/*
 * Every second: a list unanswered for dfg_rdma.list_timeout_ms fails the
 * connection (a peer that took the list and died sends nothing more, and
 * nothing of ours is left to retry).
 */
static void dfg_rdma_timer(struct work_struct *work)
{
	struct dfg_rdma_conn *c = container_of(to_delayed_work(work),
					       struct dfg_rdma_conn, timer);
	unsigned long tmo = msecs_to_jiffies(READ_ONCE(dfg_rdma_list_tmo));
	bool late = false, again;
	unsigned int i;

	spin_lock(&c->lock);
	for (i = 0; i < DFG_RDMA_SLOTS; i++) {
		const struct dfg_rdma_slot *sl = &c->slots[i];

		if (sl->l && !sl->answered && time_after(jiffies, sl->sent + tmo))
			late = true;
	}
	again = !c->closing;
	spin_unlock(&c->lock);
	if (late && again) {
		atomic64_inc(&dfg_rdma_timeouts);
		pr_warn_ratelimited("a peer left a list unanswered: connection failed\n");
		dfg_rdma_conn_kill(c);
	}
	if (again)
		queue_delayed_work(dfg_rdma_wq, &c->timer, HZ);
}

static int dfg_rdma_conn_handler(struct rdma_cm_id *id,
				 struct rdma_cm_event *ev)
{
	struct dfg_rdma_conn *c = id->context;
	LIST_HEAD(done);
	int st = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
	case RDMA_CM_EVENT_ESTABLISHED:
		break;
	case RDMA_CM_EVENT_REJECTED:
		st = -ECONNREFUSED;
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		st = -EHOSTUNREACH;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		dfg_rdma_conn_lost(c);
		/* The peer answers nothing more: lists sent fail now. */
		spin_lock(&c->lock);
		dfg_rdma_unanswered_fail(c, &done);
		spin_unlock(&c->lock);
		dfg_rdma_lists_end(&done);
		dfg_rdma_kick(c);
		st = -ECONNRESET;
		break;
	default:
		return 0;
	}
	c->cm_status = st;
	complete(&c->cm_done);
	return 0;
}

/*
 * Wait for @done until jiffies @end (interruptible: a connection may take
 * long, PEER_ADD's caller may give up). 0, -ETIMEDOUT or -EINTR.
 *
 * PEER_ADD's connection setup sleeps here by hand, not through dfg.ko's
 * wait.c: see dfg_pf_peer_dir() in kmod/prefetch.c and DESIGN.md for why
 * it is the one exception (a DFG_CMDF_SLEEP admin command, run by an
 * io-wq worker on io_uring, whose cancellation interrupts this sleep).
 */
static int dfg_rdma_wait(struct completion *done, unsigned long end)
{
	long left = (long)(end - jiffies);

	if (left <= 0)
		left = 1;
	left = wait_for_completion_interruptible_timeout(done, left);
	if (left < 0)
		return -EINTR;
	return left ? 0 : -ETIMEDOUT;
}

/* Wait for the cm step started last; reinit for the next. */
static int dfg_rdma_cm_wait(struct dfg_rdma_conn *c, unsigned long end)
{
	int ret = dfg_rdma_wait(&c->cm_done, end);

	if (ret)
		return ret;
	reinit_completion(&c->cm_done);
	return c->cm_status;
}

static void dfg_rdma_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct dfg_rdma_conn *c = cq->cq_context;

	c->hello_status = wc->status == IB_WC_SUCCESS ? 0 : -ECONNRESET;
	c->hello_len = wc->byte_len;
	complete(&c->hello_done);
}

/* Everything of @c but dfg.ko's part; also for a failed connect. */
static void dfg_rdma_conn_free(struct dfg_rdma_conn *c)
{
	struct ib_device *dev = c->id->device;
	LIST_HEAD(done);
	unsigned int i;

	if (c->id->qp) {
		rdma_disconnect(c->id);
		/* Every posted WR completes: each list in a slot ends. */
		ib_drain_qp(c->id->qp);
		rdma_destroy_qp(c->id);
	}
	/* Sent lists no answer can come for any more, should any be left. */
	spin_lock(&c->lock);
	dfg_rdma_unanswered_fail(c, &done);
	spin_unlock(&c->lock);
	dfg_rdma_lists_end(&done);
	/* Those that waited for a slot fail (->closing or ->dead is set). */
	dfg_rdma_kick(c);
	for (i = 0; i < DFG_RDMA_SLOTS; i++) {
		dfg_rdma_buf_drop(dev, &c->slots[i].req, DMA_TO_DEVICE);
		dfg_rdma_buf_drop(dev, &c->answers[i], DMA_FROM_DEVICE);
	}
	if (c->hello_dma)
		ib_dma_unmap_single(dev, c->hello_dma, DFG_RDMA_HELLO_MAX,
				    DMA_FROM_DEVICE);
	if (c->cq)
		ib_free_cq(c->cq);
	if (c->pd)
		ib_dealloc_pd(c->pd);
	rdma_destroy_id(c->id);
	kfree(c->hello);
	kfree(c->rk);
	kfree(c);
}

static int dfg_rdma_conn_qp(struct dfg_rdma_conn *c)
{
	struct ib_device *dev = c->id->device;
	struct ib_qp_init_attr qa = {};
	struct ib_sge sge;
	struct ib_recv_wr wr = {
		.wr_cqe		= &c->recv_cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};
	unsigned int i;
	int ret;

	c->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(c->pd)) {
		ret = PTR_ERR(c->pd);
		c->pd = NULL;
		return ret;
	}
	c->sq_depth = min_t(u32, dev->attrs.max_qp_wr, DFG_RDMA_SQ_DEPTH);
	c->max_sge = min_t(u32, dev->attrs.max_send_sge, DFG_RDMA_SGE);
	c->cq = ib_alloc_cq(dev, c, c->sq_depth + 2 * DFG_RDMA_SLOTS + 8, 0,
			    IB_POLL_WORKQUEUE);
	if (IS_ERR(c->cq)) {
		ret = PTR_ERR(c->cq);
		c->cq = NULL;
		return ret;
	}
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IB_QPT_RC;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	/* READs, lists, ib_drain_qp()'s; the hello, answers, the drain's. */
	qa.cap.max_send_wr = c->sq_depth + DFG_RDMA_SLOTS + 1;
	qa.cap.max_recv_wr = DFG_RDMA_SLOTS + 2;
	qa.cap.max_send_sge = c->max_sge;
	qa.cap.max_recv_sge = 1;
	ret = rdma_create_qp(c->id, c->pd, &qa);
	if (ret)
		return ret;
	c->hello = kzalloc(DFG_RDMA_HELLO_MAX, GFP_KERNEL);
	if (!c->hello)
		return -ENOMEM;
	c->hello_dma = ib_dma_map_single(dev, c->hello, DFG_RDMA_HELLO_MAX,
					 DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, c->hello_dma)) {
		c->hello_dma = 0;
		return -ENOMEM;
	}
	c->recv_cqe.done = dfg_rdma_recv_done;
	sge.addr = c->hello_dma;
	sge.length = DFG_RDMA_HELLO_MAX;
	sge.lkey = c->pd->local_dma_lkey;
	/* The hello comes first: into the receive posted first. */
	ret = ib_post_recv(c->id->qp, &wr, NULL);
	for (i = 0; !ret && i < DFG_RDMA_SLOTS; i++) {
		ret = dfg_rdma_buf_make(dev, &c->slots[i].req, c,
					DFG_RDMA_LIST_BYTES, DMA_TO_DEVICE);
		if (!ret)
			ret = dfg_rdma_buf_make(dev, &c->answers[i], c,
						DFG_RDMA_ANSWER_MAX,
						DMA_FROM_DEVICE);
		if (ret)
			break;
		c->slots[i].req.cqe.done = dfg_rdma_list_sent;
		c->answers[i].cqe.done = dfg_rdma_answer_done;
		ret = dfg_rdma_post_recv(c->id->qp, c->pd, &c->answers[i]);
	}
	return ret;
}

/* Check the hello and take what the peer serves from it. */
static int dfg_rdma_hello_parse(struct dfg_rdma_conn *c,
				struct dfg_pf_remote *r)
{
	const struct dfg_rdma_hello *h = c->hello;
	u32 i, n;

	ib_dma_sync_single_for_cpu(c->id->device, c->hello_dma,
				   DFG_RDMA_HELLO_MAX, DMA_FROM_DEVICE);
	if (c->hello_len < sizeof(*h) ||
	    le32_to_cpu(h->magic) != DFG_RDMA_MAGIC ||
	    le32_to_cpu(h->version) != DFG_RDMA_VERSION)
		return -EPROTO;
	n = le32_to_cpu(h->nchunks);
	c->chunk_bytes = le64_to_cpu(h->chunk_bytes);
	c->image_bytes = le64_to_cpu(h->image_bytes);
	if (!n || n > DFG_RDMA_CHUNKS_MAX ||
	    c->hello_len < struct_size(h, chunk, n) || !c->chunk_bytes ||
	    c->image_bytes > n * c->chunk_bytes)
		return -EPROTO;
	c->rk = kcalloc(n, sizeof(*c->rk), GFP_KERNEL);
	if (!c->rk)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		c->rk[i].iova = le64_to_cpu(h->chunk[i].iova);
		c->rk[i].rkey = le32_to_cpu(h->chunk[i].rkey);
	}
	c->nchunks = n;
	r->node_first = le64_to_cpu(h->node_first);
	r->node_count = le64_to_cpu(h->node_count);
	r->feat_bytes = le32_to_cpu(h->feat_bytes);
	r->row_off = le64_to_cpu(h->row_off);
	r->col_off = le64_to_cpu(h->col_off);
	r->col_count = le64_to_cpu(h->col_count);
	r->feat_off = le64_to_cpu(h->feat_off);
	r->image_bytes = c->image_bytes;
	r->part_set = le64_to_cpu(h->part_set);
	return 0;
}

static void *dfg_rdma_connect(struct dfg_pf_peer *peer,
			      const struct sockaddr_storage *addr,
			      unsigned int timeout_ms,
			      struct dfg_pf_remote *remote)
{
	unsigned long end = jiffies + msecs_to_jiffies(timeout_ms);
	struct rdma_conn_param cp = {};
	struct dfg_rdma_conn *c;
	int ret;

	if (addr->ss_family != AF_INET)
		return ERR_PTR(-EAFNOSUPPORT);
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	c->peer = peer;
	spin_lock_init(&c->lock);
	INIT_LIST_HEAD(&c->pending);
	INIT_DELAYED_WORK(&c->timer, dfg_rdma_timer);
	init_completion(&c->cm_done);
	init_completion(&c->hello_done);
	c->id = rdma_create_id(&init_net, dfg_rdma_conn_handler, c,
			       RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(c->id)) {
		ret = PTR_ERR(c->id);
		kfree(c);
		return ERR_PTR(ret);
	}
	ret = rdma_set_ack_timeout(c->id, READ_ONCE(dfg_rdma_ack_timeout));
	if (ret)
		goto fail;
	ret = rdma_resolve_addr(c->id, NULL, (struct sockaddr *)addr,
				timeout_ms);
	if (!ret)
		ret = dfg_rdma_cm_wait(c, end);
	if (ret)
		goto fail;
	ret = rdma_resolve_route(c->id, timeout_ms);
	if (!ret)
		ret = dfg_rdma_cm_wait(c, end);
	if (ret)
		goto fail;
	ret = dfg_rdma_conn_qp(c);
	if (ret)
		goto fail;
	cp.initiator_depth = min_t(u32, c->id->device->attrs.max_qp_init_rd_atom,
				   16);
	cp.responder_resources = 0;
	cp.retry_count = DFG_RDMA_RETRY;
	cp.rnr_retry_count = 7;
	ret = rdma_connect(c->id, &cp);
	if (!ret)
		ret = dfg_rdma_cm_wait(c, end);
	if (ret)
		goto fail;
	ret = dfg_rdma_wait(&c->hello_done, end);
	if (!ret)
		ret = c->hello_status ?: dfg_rdma_hello_parse(c, remote);
	if (ret)
		goto fail;
	queue_delayed_work(dfg_rdma_wq, &c->timer, HZ);
	return c;

fail:
	/* Nothing of it reaches dfg.ko: no dfg_pf_peer_lost() from here. */
	spin_lock(&c->lock);
	c->closing = true;
	spin_unlock(&c->lock);
	dfg_rdma_conn_free(c);
	return ERR_PTR(ret);
}

static void dfg_rdma_disconnect(void *conn)
{
	struct dfg_rdma_conn *c = conn;

	spin_lock(&c->lock);
	c->closing = true;
	spin_unlock(&c->lock);
	cancel_delayed_work_sync(&c->timer);
	/* The drain in it completes every read still posted. */
	dfg_rdma_conn_free(c);
}

static void dfg_rdma_wr_unmap(struct dfg_rdma_conn *c, struct dfg_rdma_wr *w)
{
	unsigned int i;

	for (i = 0; i < w->wr.wr.num_sge; i++)
		ib_dma_unmap_page(c->id->device, w->sge[i].addr,
				  w->sge[i].length, DMA_FROM_DEVICE);
	w->wr.wr.num_sge = 0;
}

/* Unmap and free @ch (a WR not mapped has no scatter list). */
static void dfg_rdma_chain_unmap_free(struct dfg_rdma_chain *ch)
{
	unsigned int i;

	for (i = 0; i < ch->nwr; i++)
		dfg_rdma_wr_unmap(ch->c, &ch->wr[i]);
	kfree(ch);
}

/* A posted chain is over: its send queue room goes back too. */
static void dfg_rdma_chain_free(struct dfg_rdma_chain *ch)
{
	atomic_sub(ch->nwr, &ch->c->sq_used);
	dfg_rdma_chain_unmap_free(ch);
}

/* Every read of @ch ends with @status (0 or a negative errno). */
static void dfg_rdma_chain_end(struct dfg_rdma_chain *ch, int status)
{
	unsigned int i;

	for (i = 0; i < ch->n; i++)
		dfg_pf_read_done(ch->rds[i], status);
	dfg_rdma_chain_free(ch);
}

static void dfg_rdma_read_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct dfg_rdma_wr *w = container_of(wc->wr_cqe, struct dfg_rdma_wr,
					     cqe);
	struct dfg_rdma_chain *ch = w->ch;

	if (wc->status != IB_WC_SUCCESS) {
		/* One status per chain; a flush after a failure says less. */
		if (!ch->status || wc->status != IB_WC_WR_FLUSH_ERR)
			ch->status = wc->status == IB_WC_REM_ACCESS_ERR ?
				     -EIO : -EHOSTUNREACH;
		dfg_rdma_conn_lost(ch->c);
	}
	/*
	 * In order: the chain's last WR completes after every other, and
	 * only a failed one of those completes at all.
	 */
	if (w == &ch->wr[ch->last])
		dfg_rdma_chain_end(ch, ch->status);
}

/*
 * The WRs of a read of [@off, @off + @len) into @dst, from @w on: each at
 * most c->max_sge destination pages, none across a chunk's end. With @w
 * NULL, only counts them.
 */
static int dfg_rdma_rd_build(struct dfg_rdma_conn *c, struct dfg_rdma_wr *w,
			     u64 off, u32 len, void *dst)
{
	struct ib_device *dev = c->id->device;
	unsigned int nwr = 0;
	u32 pos = 0;

	while (pos < len) {
		u64 roff = off + pos;
		u64 in_chunk = roff % c->chunk_bytes;
		u32 room = min_t(u64, len - pos, c->chunk_bytes - in_chunk);
		unsigned int ns = 0;
		u32 got = 0;

		while (got < room && ns < c->max_sge) {
			void *va = dst + pos + got;
			u32 n = min_t(u32, room - got,
				      PAGE_SIZE - offset_in_page(va));

			if (w) {
				struct ib_sge *sge = &w->sge[ns];

				sge->addr = ib_dma_map_page(dev,
							    vmalloc_to_page(va),
							    offset_in_page(va),
							    n, DMA_FROM_DEVICE);
				if (ib_dma_mapping_error(dev, sge->addr))
					return -ENOMEM;
				sge->length = n;
				sge->lkey = c->pd->local_dma_lkey;
				w->wr.wr.num_sge = ns + 1;
			}
			ns++;
			got += n;
		}
		if (w) {
			w->cqe.done = dfg_rdma_read_wr_done;
			w->wr.wr.wr_cqe = &w->cqe;
			w->wr.wr.sg_list = w->sge;
			w->wr.wr.opcode = IB_WR_RDMA_READ;
			w->wr.remote_addr = c->rk[roff / c->chunk_bytes].iova +
					    in_chunk;
			w->wr.rkey = c->rk[roff / c->chunk_bytes].rkey;
			w++;
		}
		nwr++;
		pos += got;
	}
	return nwr;
}

/*
 * A chain of the @n reads @rds, its WRs linked and mapped, only the last
 * signalled; NULL without memory. GFP_ATOMIC: ->read must not sleep.
 */
static struct dfg_rdma_chain *dfg_rdma_chain_new(struct dfg_rdma_conn *c,
						 struct dfg_pf_read **rds,
						 unsigned int n)
{
	struct dfg_rdma_chain *ch;
	unsigned int i, at = 0, nwr = 0;
	int k;

	for (i = 0; i < n; i++)
		nwr += dfg_rdma_rd_build(c, NULL, rds[i]->off, rds[i]->len,
					 rds[i]->dst);
	ch = kzalloc(struct_size(ch, wr, nwr) + n * sizeof(*rds), GFP_ATOMIC);
	if (!ch)
		return NULL;
	ch->c = c;
	ch->n = n;
	ch->nwr = nwr;
	ch->rds = (struct dfg_pf_read **)&ch->wr[nwr];
	for (i = 0; i < n; i++) {
		ch->rds[i] = rds[i];
		k = dfg_rdma_rd_build(c, &ch->wr[at], rds[i]->off,
				      rds[i]->len, rds[i]->dst);
		if (k < 0) {
			dfg_rdma_chain_unmap_free(ch);
			return NULL;
		}
		at += k;
	}
	for (i = 0; i < nwr; i++) {
		ch->wr[i].ch = ch;
		ch->wr[i].wr.wr.next = i + 1 < nwr ? &ch->wr[i + 1].wr.wr :
						     NULL;
	}
	ch->last = nwr - 1;
	ch->wr[ch->last].wr.wr.send_flags = IB_SEND_SIGNALED;
	return ch;
}

/*
 * Post @ch; 0, or a negative errno with none of it posted.
 *
 * Posted in part (the device refused a WR, which the room reserved in
 * ->read and WRs built within its limits rule out), the QP is put in the
 * error state so that the posted WRs flush, and the refused WR, emptied
 * and signalled, is posted again as the chain's end: in the error state
 * it completes, after every WR before it (ib_drain_qp()'s way).
 */
static int dfg_rdma_chain_post(struct dfg_rdma_chain *ch)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	const struct ib_send_wr *bad = NULL;
	struct dfg_rdma_conn *c = ch->c;
	unsigned int i, posted;
	struct dfg_rdma_wr *w;
	int ret;

	ret = ib_post_send(c->id->qp, &ch->wr[0].wr.wr, &bad);
	if (!ret)
		return 0;
	for (posted = 0; posted < ch->nwr; posted++)
		if (&ch->wr[posted].wr.wr == bad)
			break;
	if (!posted || posted == ch->nwr)
		return ret;
	pr_warn_ratelimited("a chain of READs posted in part: %d\n", ret);
	for (i = posted; i < ch->nwr; i++)
		dfg_rdma_wr_unmap(c, &ch->wr[i]);
	w = &ch->wr[posted];
	w->wr.wr.next = NULL;
	w->wr.wr.send_flags = IB_SEND_SIGNALED;
	ch->status = ret;
	ch->last = posted;
	dfg_rdma_conn_lost(c);
	ib_modify_qp(c->id->qp, &attr, IB_QP_STATE);
	if (ib_post_send(c->id->qp, &w->wr.wr, NULL))
		pr_err("a chain of READs cannot end: its reads stay\n");
	return 0;
}

/* Free chains never posted, and give back the room reserved for them. */
static void dfg_rdma_chains_drop(struct dfg_rdma_conn *c,
				 struct dfg_rdma_chain *head, unsigned int nwr)
{
	struct dfg_rdma_chain *ch;

	while (head) {
		ch = head;
		head = ch->next;
		dfg_rdma_chain_unmap_free(ch);
	}
	atomic_sub(nwr, &c->sq_used);
}

/*
 * Chains of the @n reads @rds into *@head, send queue room reserved for
 * every WR (*@nwr), or a negative errno and nothing kept.
 */
static int dfg_rdma_chains_make(struct dfg_rdma_conn *c,
				struct dfg_pf_read **rds, unsigned int n,
				struct dfg_rdma_chain **head, unsigned int *nwr)
{
	struct dfg_rdma_chain *ch, **tail = head;
	unsigned int i, k;

	*head = NULL;
	*nwr = 0;
	for (i = 0; i < n; i++)
		*nwr += dfg_rdma_rd_build(c, NULL, rds[i]->off, rds[i]->len,
					  rds[i]->dst);
	if (atomic_add_return(*nwr, &c->sq_used) > c->sq_depth) {
		atomic_sub(*nwr, &c->sq_used);
		return -EBUSY;
	}
	for (i = 0; i < n; i += k) {
		k = min_t(unsigned int, n - i, DFG_RDMA_CHAIN);
		ch = dfg_rdma_chain_new(c, rds + i, k);
		if (!ch) {
			dfg_rdma_chains_drop(c, *head, *nwr);
			return -ENOMEM;
		}
		*tail = ch;
		tail = &ch->next;
	}
	return 0;
}

/* Post the chains at @head; one the device refuses ends its reads. */
static void dfg_rdma_chains_post(struct dfg_rdma_chain *head)
{
	struct dfg_rdma_chain *ch;
	int ret;

	while (head) {
		ch = head;
		head = ch->next;
		ret = dfg_rdma_chain_post(ch);
		if (ret)
			dfg_rdma_chain_end(ch, ret);
	}
}

/*
 * Lists of the @n reads @rds, each at most DFG_RDMA_LIST_MAX reads and
 * DFG_RDMA_PAYLOAD_MAX bytes, onto @lists; -ENOMEM and none kept.
 */
static int dfg_rdma_lists_make(struct dfg_pf_read **rds, unsigned int n,
			       struct list_head *lists)
{
	struct dfg_rdma_list *l;
	unsigned int i, j;
	u64 bytes;

	for (i = 0; i < n; i = j) {
		bytes = 0;
		for (j = i; j < n && j - i < DFG_RDMA_LIST_MAX &&
		     rds[j]->len <= DFG_RDMA_PAYLOAD_MAX - bytes; j++)
			bytes += rds[j]->len;
		l = kmalloc(struct_size(l, rds, j - i), GFP_ATOMIC);
		if (!l)
			goto fail;
		l->n = j - i;
		l->bytes = bytes;
		l->status = 0;
		memcpy(l->rds, rds + i, l->n * sizeof(*rds));
		list_add_tail(&l->node, lists);
	}
	return 0;

fail:
	dfg_rdma_lists_free(lists);
	return -ENOMEM;
}

/*
 * Reads up to dfg_rdma.pack_max go in lists answered by the peer's
 * module, longer ones as chains of RDMA READs (@rds is reordered: lists'
 * reads first). All of them start, or none.
 */
static int dfg_rdma_read(void *conn, struct dfg_pf_read **rds, unsigned int n)
{
	struct dfg_rdma_conn *c = conn;
	struct dfg_rdma_chain *head = NULL;
	unsigned int i, np = 0, nwr = 0;
	u32 pack = min_t(u32, READ_ONCE(dfg_rdma_pack_max),
			 DFG_RDMA_PAYLOAD_MAX);
	struct dfg_pf_read *t;
	LIST_HEAD(lists);
	int ret;

	for (i = 0; i < n; i++) {
		if (!rds[i]->len || rds[i]->off > c->image_bytes ||
		    rds[i]->len > c->image_bytes - rds[i]->off)
			return -EINVAL;
		if (rds[i]->len <= pack) {
			t = rds[np];
			rds[np++] = rds[i];
			rds[i] = t;
		}
	}
	ret = dfg_rdma_lists_make(rds, np, &lists);
	if (ret)
		return ret;
	if (np < n) {
		ret = dfg_rdma_chains_make(c, rds + np, n - np, &head, &nwr);
		if (ret)
			goto out_lists;
	}
	spin_lock(&c->lock);
	if (c->dead || c->closing)
		ret = -EHOSTUNREACH;
	else
		list_splice_tail_init(&lists, &c->pending);
	spin_unlock(&c->lock);
	if (ret) {
		dfg_rdma_chains_drop(c, head, nwr);
		goto out_lists;
	}
	dfg_rdma_chains_post(head);
	dfg_rdma_kick(c);
	return 0;

out_lists:
	dfg_rdma_lists_free(&lists);
	return ret;
}

static const struct dfg_pf_xport dfg_rdma_xport = {
	.name		= "rdma",
	.owner		= THIS_MODULE,
	.connect	= dfg_rdma_connect,
	.read		= dfg_rdma_read,
	.disconnect	= dfg_rdma_disconnect,
};

/* ---- counters ---- */

#define DFG_RDMA_STAT(name, value)					\
static ssize_t name##_show(struct kobject *kobj,			\
			   struct kobj_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%lld\n", (long long)(value));		\
}									\
static struct kobj_attribute dfg_rdma_attr_##name = __ATTR_RO(name)

DFG_RDMA_STAT(lists, atomic64_read(&dfg_rdma_lists));
DFG_RDMA_STAT(dropped, atomic64_read(&dfg_rdma_dropped));
DFG_RDMA_STAT(timeouts, atomic64_read(&dfg_rdma_timeouts));
DFG_RDMA_STAT(refused, atomic64_read(&dfg_rdma_refused));
DFG_RDMA_STAT(conns, atomic_read(&dfg_rdma_nconns));

static struct attribute *dfg_rdma_attrs[] = {
	&dfg_rdma_attr_lists.attr,
	&dfg_rdma_attr_dropped.attr,
	&dfg_rdma_attr_timeouts.attr,
	&dfg_rdma_attr_refused.attr,
	&dfg_rdma_attr_conns.attr,
	NULL,
};

static const struct attribute_group dfg_rdma_group = {
	.name	= "stats",
	.attrs	= dfg_rdma_attrs,
};

/* ---- module ---- */

static int dfg_rdma_listen(void)
{
	struct sockaddr_in sin = {
		.sin_family	= AF_INET,
		.sin_addr.s_addr = htonl(INADDR_ANY),
		.sin_port	= htons(dfg_rdma_port),
	};
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, dfg_rdma_listen_handler, NULL,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_bind_addr(id, (struct sockaddr *)&sin);
	if (!ret)
		ret = rdma_listen(id, 16);
	if (ret) {
		rdma_destroy_id(id);
		return ret;
	}
	dfg_rdma_listen_id = id;
	return 0;
}

static int __init dfg_rdma_init(void)
{
	int ret;

	dfg_rdma_wq = alloc_workqueue("dfg_rdma", WQ_UNBOUND, 0);
	if (!dfg_rdma_wq)
		return -ENOMEM;
	ret = dfg_rdma_listen();
	if (ret)
		goto out_wq;
	ret = sysfs_create_group(&THIS_MODULE->mkobj.kobj, &dfg_rdma_group);
	if (ret)
		goto out_listen;
	ret = dfg_pf_xport_register(&dfg_rdma_xport);
	if (ret)
		goto out_sysfs;
	return 0;

out_sysfs:
	sysfs_remove_group(&THIS_MODULE->mkobj.kobj, &dfg_rdma_group);
out_listen:
	rdma_destroy_id(dfg_rdma_listen_id);
out_wq:
	destroy_workqueue(dfg_rdma_wq);
	return ret;
}

static void __exit dfg_rdma_exit(void)
{
	struct dfg_rdma_srv *s;

	/* Our peers first: their reads end before the transport goes. */
	dfg_pf_xport_unregister(&dfg_rdma_xport);
	/* No new connection after this; then end the served ones. */
	rdma_destroy_id(dfg_rdma_listen_id);
	mutex_lock(&dfg_rdma_lock);
	list_for_each_entry(s, &dfg_rdma_srvs, node) {
		if (!s->dying) {
			s->dying = true;
			queue_work(dfg_rdma_wq, &s->free_work);
		}
	}
	mutex_unlock(&dfg_rdma_lock);
	/* Each work takes its entry off the list and frees it. */
	destroy_workqueue(dfg_rdma_wq);
	sysfs_remove_group(&THIS_MODULE->mkobj.kobj, &dfg_rdma_group);
}

module_init(dfg_rdma_init);
module_exit(dfg_rdma_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("dfg: RDMA transport of the hub-node prefetch");
MODULE_VERSION(DFG_VERSION);
