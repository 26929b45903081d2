/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chan.h - a tiny raw channel client for the selftests: maps an endpoint
 * and moves descriptors by the protocol of uapi/linux/dfg.h (indices with
 * acquire/release, waiting flags behind full barriers), without libdfg.
 * Functions return 0 or -errno and never assert.
 */
#ifndef DFG_CHAN_H
#define DFG_CHAN_H

#include <sys/mman.h>

#include "dfg_sys.h"

/* One mapped endpoint. */
struct chan_ep {
	int			fd;
	__u32			slot;
	size_t			size;
	struct dfg_chan_hdr	*hdr;
};

static inline struct dfg_chan_ring *chan_ring(struct dfg_chan_hdr *h, __u32 i)
{
	return (struct dfg_chan_ring *)((char *)h + h->ring_offset +
					(size_t)i * h->ring_size);
}

/*
 * A new graph named "@tag-<pid>-<n>" (mode 0600) with arena 1 of 16 pages,
 * the pool the channel tests use; its descriptor or -errno.
 */
static inline int chan_graph_new(int dev, const char *tag)
{
	static int seq;
	struct dfg_graph_open o = { .size = sizeof(o), .mode = 0600 };
	struct dfg_arena_create a = { .size = 16 * 4096 };
	int g, ret;

	snprintf(o.name, sizeof(o.name), "%s-%d-%d", tag, getpid(), seq++);
	g = sys_dfg_ioctl(dev, DFG_IOC_GRAPH_CREATE, &o);
	if (g < 0)
		return g;
	ret = sys_dfg_ioctl(g, DFG_IOC_ARENA_CREATE, &a);
	if (ret != 1) {
		close(g);
		return ret < 0 ? ret : -EPROTO;
	}
	return g;
}

static inline int chan_create(int gfd, __u32 pool, __u32 depth, __u32 nprod,
			      struct dfg_chan_create *out)
{
	struct dfg_chan_create c = {
		.pool = pool,
		.depth = depth,
		.max_producers = nprod,
	};
	int ret = sys_dfg_ioctl(gfd, DFG_IOC_CHAN_CREATE, &c);

	if (out)
		*out = c;
	return ret;
}

static inline int chan_open_raw(int gfd, __u32 id, __u32 role, __u32 *slot)
{
	struct dfg_chan_open o = { .id = id, .role = role };
	int ret = sys_dfg_ioctl(gfd, DFG_IOC_CHAN_OPEN, &o);

	if (ret >= 0 && slot)
		*slot = o.slot;
	return ret;
}

/* Opens and maps an endpoint; 0 or -errno. */
static inline int chan_ep_open(int gfd, __u32 id, __u32 role, size_t size,
			       struct chan_ep *ep)
{
	void *p;

	memset(ep, 0, sizeof(*ep));
	ep->fd = chan_open_raw(gfd, id, role, &ep->slot);
	if (ep->fd < 0)
		return ep->fd;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, ep->fd, 0);
	if (p == MAP_FAILED) {
		int err = -errno;

		close(ep->fd);
		return err;
	}
	ep->hdr = p;
	ep->size = size;
	return 0;
}

static inline void chan_ep_close(struct chan_ep *ep)
{
	if (ep->hdr)
		munmap(ep->hdr, ep->size);
	if (ep->fd >= 0)
		close(ep->fd);
	ep->hdr = NULL;
	ep->fd = -1;
}

/* Producer: one descriptor into its ring; -EAGAIN when full. */
static inline int chan_push(struct chan_ep *ep, __u64 off, __u32 len,
			    __u64 tag)
{
	struct dfg_chan_ring *r = chan_ring(ep->hdr, ep->slot);
	__u32 depth = ep->hdr->depth;
	__u32 tail = r->tail;
	__u32 head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	struct dfg_desc *d;

	if (tail - head >= depth) {
		r->full_stalls++;
		return -EAGAIN;
	}
	d = &r->desc[tail & (depth - 1)];
	d->off = off;
	d->len = len;
	d->flags = 0;
	d->tag = tag;
	__atomic_store_n(&r->tail, tail + 1, __ATOMIC_RELEASE);
	r->msgs++;
	r->bytes += len;
	if (tail + 1 - head > r->hwm)
		r->hwm = tail + 1 - head;
	return 0;
}

/* Consumer: one descriptor from any ring (round robin); -EAGAIN if none. */
static inline int chan_pop(struct chan_ep *ep, struct dfg_desc *out)
{
	struct dfg_chan_hdr *h = ep->hdr;
	__u32 n = h->max_producers, i;

	for (i = 0; i < n; i++) {
		__u32 k = (h->next + i) % n;
		struct dfg_chan_ring *r = chan_ring(h, k);
		__u32 head = r->head;
		__u32 tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

		if (tail == head)
			continue;
		*out = r->desc[head & (h->depth - 1)];
		__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
		h->next = k + 1;
		return 0;
	}
	chan_ring(h, 0)->empty_stalls++;
	return -EAGAIN;
}

static inline int chan_cmd(int fd, __u32 cmd)
{
	struct dfg_chan_wait w = { 0 };
	int ret = sys_dfg_ioctl(fd, cmd, &w);

	if (ret > 0 && cmd == DFG_IOC_CHAN_WAIT && w.events != (__u32)ret)
		return -EPROTO;
	return ret;
}

/* Producer after a push: wake the consumer if it waits (or is about to). */
static inline int chan_push_wake(struct chan_ep *ep, __u64 off, __u32 len,
				 __u64 tag)
{
	int ret = chan_push(ep, off, len, tag);

	if (ret)
		return ret;
	/* Pushed: a failed WAKE must not make the caller push again. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&ep->hdr->cons_waiting, __ATOMIC_RELAXED))
		chan_cmd(ep->fd, DFG_IOC_CHAN_WAKE);
	return 0;
}

/* Consumer after a pop: wake producers waiting for room. */
static inline int chan_pop_wake(struct chan_ep *ep, struct dfg_desc *out)
{
	struct dfg_chan_hdr *h = ep->hdr;
	int ret = chan_pop(ep, out);
	__u32 i;

	if (ret)
		return ret;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < h->max_producers; i++) {
		if (__atomic_load_n(&chan_ring(h, i)->prod_waiting,
				    __ATOMIC_RELAXED)) {
			chan_cmd(ep->fd, DFG_IOC_CHAN_WAKE);
			break;
		}
	}
	return 0;
}

/*
 * Consumer: blocking pop by the protocol (ioctl WAIT). 0 with @out, 1 at
 * end of stream, -errno.
 */
static inline int chan_pop_blocking(struct chan_ep *ep, struct dfg_desc *out)
{
	struct dfg_chan_hdr *h = ep->hdr;
	int ret;

	for (;;) {
		if (!chan_pop_wake(ep, out))
			return 0;
		__atomic_store_n(&h->cons_waiting, 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!chan_pop_wake(ep, out)) {
			h->cons_waiting = 0;
			return 0;
		}
		ret = chan_cmd(ep->fd, DFG_IOC_CHAN_WAIT);
		h->cons_waiting = 0;
		if (ret < 0)
			return ret;
		if (ret & DFG_CHAN_EV_EOF)
			return 1;
	}
}

/*
 * Consumer: blocking pop by the protocol, parking a uring WAIT on @ring
 * (SQE128) when empty. 0 with @out, 1 at end of stream, -errno.
 */
static inline int chan_pop_uring(struct chan_ep *ep, struct io_uring *ring,
				 struct dfg_desc *out)
{
	struct dfg_chan_wait wa = { 0 };
	struct dfg_cqe cqe;

	for (;;) {
		if (!chan_pop_wake(ep, out))
			return 0;
		__atomic_store_n(&ep->hdr->cons_waiting, 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!chan_pop_wake(ep, out)) {
			ep->hdr->cons_waiting = 0;
			return 0;
		}
		dfg_prep_inline(ring, ep->fd, DFG_IOC_CHAN_WAIT, &wa,
				sizeof(wa), 2);
		if (io_uring_submit(ring) != 1 ||
		    dfg_ring_wait(ring, &cqe, -1))
			return -EIO;
		ep->hdr->cons_waiting = 0;
		if (cqe.res < 0)
			return cqe.res;
		if (cqe.res & DFG_CHAN_EV_EOF)
			return 1;
	}
}

/* Producer: blocking push by the protocol (ioctl WAIT). */
static inline int chan_push_blocking(struct chan_ep *ep, __u64 off, __u32 len,
				     __u64 tag)
{
	struct dfg_chan_ring *r = chan_ring(ep->hdr, ep->slot);
	int ret;

	for (;;) {
		if (!chan_push_wake(ep, off, len, tag))
			return 0;
		__atomic_store_n(&r->prod_waiting, 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!chan_push_wake(ep, off, len, tag)) {
			r->prod_waiting = 0;
			return 0;
		}
		ret = chan_cmd(ep->fd, DFG_IOC_CHAN_WAIT);
		r->prod_waiting = 0;
		if (ret < 0)
			return ret;
	}
}

#endif /* DFG_CHAN_H */
