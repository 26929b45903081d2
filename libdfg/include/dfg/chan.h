/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg: channels, zero-copy descriptor rings between processes.
 *
 * A channel (see <linux/dfg.h>, "Commands: channels") carries struct
 * dfg_desc descriptors (offset, length, flags, tag) that point into one
 * arena or exported region of the graph, its pool (a region's view comes
 * from dfg_region_map(), which records the region id for the pool check).
 * Payload never moves: a producer allocates a buffer in the pool
 * (dfg_buf_alloc()), fills it and sends its descriptor; the consumer gets
 * the descriptor, reads the buffer through dfg_chan_buf() and frees it or
 * forwards it to the next channel.
 *
 * dfg_chan_create() makes a channel on a graph descriptor; every process
 * that takes part opens an endpoint with dfg_chan_open(): up to
 * @max_producers producers, each with its own single-producer ring (its
 * slot), and one consumer, which takes from the rings in turn (round
 * robin). Each producer's order is kept; a producer that dies loses
 * nothing it published.
 *
 * The fast path is loads and stores in the shared channel memory; the
 * kernel is entered only to park a side that has to wait
 * (DFG_IOC_CHAN_WAIT, an SQE on the calling thread's wait ring, see
 * dfg_wait_ring(), or an ioctl under DFG_NO_URING) and to wake a parked
 * one (DFG_IOC_CHAN_WAKE), under the waiting-flag protocol of
 * <linux/dfg.h>. Before it parks, a side polls its ring(s) for a while:
 * adaptively by default (dfg_chan_set_spin_auto()), or a fixed number of
 * times (dfg_chan_set_spin(), 0 to park at once). Applications that wait
 * on several endpoints, or on an endpoint and their own I/O, in one
 * io_uring_enter() prepare each wait with dfg_chan_prep_wait(), read its
 * completion with dfg_chan_wait_cqe() and retry with DFG_CHAN_NONBLOCK.
 *
 * End of stream: once at least one producer has opened, and every opened
 * producer has closed (or died) and its ring is drained, dfg_chan_recv()
 * returns 0. When the consumer goes, producers get -EPIPE.
 *
 * Shared memory is not trusted: the header is checked at open, indices are
 * checked on every use (a fill level above the depth is -EPROTO, nothing
 * is read out of bounds) and every descriptor is checked against the pool,
 * by the sender (-EINVAL) and by the receiver (-EBADMSG).
 *
 * Threads: an endpoint is not locked; use each from one thread at a time.
 *
 * Errors: as everywhere in libdfg, -errno returns; errno is never changed.
 */
#ifndef _DFG_CHAN_H
#define _DFG_CHAN_H

#include <linux/dfg.h>
#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dfg_arena;
struct io_uring_sqe;
struct io_uring_cqe;

/* Opaque: one endpoint (descriptor, mapping, role, slot, pool). */
struct dfg_chan;

/* dfg_chan_send() / dfg_chan_recv() flags */
#define DFG_CHAN_NONBLOCK	0x1U	/* -EAGAIN instead of waiting */
#define DFG_CHAN_FLAGS_ALL	(DFG_CHAN_NONBLOCK)

/**
 * dfg_chan_create() - DFG_IOC_CHAN_CREATE on a graph descriptor
 * @graph_fd:	graph descriptor opened for writing
 * @pool_id:	arena (or region) of the graph the descriptors point into
 * @depth:	descriptors per producer ring, a power of two,
 *		2..DFG_CHAN_DEPTH_MAX
 * @max_producers: producer slots, 1..DFG_CHAN_PRODUCERS_MAX
 *
 * Returns the channel id (>= 0) or -errno: -EINVAL (@depth or
 * @max_producers out of range), -EBADF, -ENOENT (no such pool), -EACCES
 * (read-only descriptor), -ENOMEM, -EAGAIN (RLIMIT_MEMLOCK), -ENOTTY.
 */
int dfg_chan_create(int graph_fd, unsigned int pool_id, unsigned int depth,
		    unsigned int max_producers);

/**
 * dfg_chan_open() - open an endpoint and map the channel
 * @graph_fd:	graph descriptor opened for writing; not owned
 * @id:		channel id
 * @role:	DFG_CHAN_PRODUCER or DFG_CHAN_CONSUMER
 * @pool:	this process's mapping of the channel's pool (an arena view,
 *		or a dfg_region_map() view of the whole region); must stay mapped
 *		while the endpoint is open
 * @out:	out: the endpoint, set only on success
 *
 * The endpoint descriptor is close-on-exec. Checks the channel header:
 * magic, depth, producer count, ring offset and size, and that its pool
 * id and size are those of @pool.
 *
 * Returns 0 or -errno: -EINVAL (bad role, NULL argument), -EBADF, -ENOENT
 * (no such channel), -EBUSY (no free producer slot, or a consumer is
 * already open), -EPIPE (producer of a channel whose consumer has gone),
 * -EACCES, -EPROTO (header does not match), -ENOMEM, errors of mmap(2).
 */
int dfg_chan_open(int graph_fd, unsigned int id, int role,
		  struct dfg_arena *pool, struct dfg_chan **out);

/**
 * dfg_chan_close() - close the endpoint, unmap, free
 * @c:		endpoint, or NULL (nothing happens)
 *
 * Closing a producer ends its ring: the consumer still gets what was
 * sent. Closing the consumer makes producers fail with -EPIPE. The pool
 * is not unmapped.
 */
void dfg_chan_close(struct dfg_chan *c);

/* The endpoint descriptor (for dfg_prep_chan_wait()), or -EINVAL. */
int dfg_chan_fd(const struct dfg_chan *c);

/* Producer: its ring index; consumer: 0; -EINVAL for NULL. */
int dfg_chan_slot(const struct dfg_chan *c);

/**
 * dfg_chan_set_spin() - busy-poll a fixed number of times before parking
 * @c:		endpoint
 * @spins:	polls of the ring(s) before entering the kernel to wait;
 *		0 parks at once. Turns adaptive polling off.
 */
void dfg_chan_set_spin(struct dfg_chan *c, unsigned int spins);

/* Adaptive polling budget of a new endpoint, in ns. */
#define DFG_CHAN_SPIN_NS_DEFAULT	50000U

/**
 * dfg_chan_set_spin_auto() - poll adaptively before parking (the default)
 * @c:		endpoint
 * @max_ns:	polling budget per wait; 0 parks at once
 *
 * A side that must wait polls up to @max_ns, yielding the CPU now and then
 * (sched_yield(): a peer on the same CPU runs meanwhile), then parks. When
 * a poll ends in a park anyway, the next waits poll more rarely: after k
 * such polls in a row, only one wait in 2^k polls the whole budget (k at
 * most 6), the others a sixteenth of it; a poll that finds work resets k.
 * So a ping-pong whose peer answers within the budget never enters the
 * kernel, and a side whose waits are long burns at most @max_ns per 64
 * waits, plus a sixteenth of it per wait. New endpoints use
 * DFG_CHAN_SPIN_NS_DEFAULT, or the value of the environment variable
 * DFG_CHAN_SPIN_NS (ns, at most 10^9), or 0 when the machine has one CPU
 * online.
 */
void dfg_chan_set_spin_auto(struct dfg_chan *c, unsigned int max_ns);

/**
 * dfg_chan_send() - producer: publish descriptors
 * @c:		producer endpoint
 * @d:		descriptors, each inside the pool (@off + @len <= pool size)
 * @n:		how many
 * @flags:	DFG_CHAN_NONBLOCK or 0
 *
 * Waits for room as needed (polling first, see dfg_chan_set_spin_auto()) and
 * wakes a parked consumer. Descriptors are checked before they are
 * published: one outside the pool stops the call before it.
 *
 * Returns the number sent, > 0: @n, or fewer with DFG_CHAN_NONBLOCK when
 * the ring fills up, or fewer when d[returned] is outside the pool (a call
 * starting at it fails with -EINVAL). 0 if @n is 0. Or -errno: -EAGAIN
 * (NONBLOCK, ring full), -EPIPE (the consumer has gone), -EINVAL (NULL,
 * not a producer, unknown flag, d[0] outside the pool), -EPROTO (the
 * ring's indices are corrupted), -ECANCELED (the graph died while
 * waiting: its last graph descriptor closed).
 */
int dfg_chan_send(struct dfg_chan *c, const struct dfg_desc *d,
		  unsigned int n, unsigned int flags);

/**
 * dfg_chan_recv() - consumer: take descriptors
 * @c:		consumer endpoint
 * @d:		out: up to @n descriptors
 * @n:		room in @d, > 0
 * @flags:	DFG_CHAN_NONBLOCK or 0
 *
 * Takes what is there, up to @n, from the rings in turn starting after
 * the one served last; waits only when every ring is empty (polling
 * first, see dfg_chan_set_spin_auto()), and wakes producers waiting for room.
 * A descriptor outside the pool is never handed out: the call returns
 * what it took before it, and the next call consumes it and fails with
 * -EBADMSG.
 *
 * Returns 1..@n received, 0 at end of stream, or -errno: -EAGAIN
 * (NONBLOCK, nothing there), -EBADMSG (a descriptor outside the pool was
 * dropped), -EINVAL (NULL, @n 0, not the consumer, unknown flag), -EPROTO
 * (a ring's indices are corrupted), -ECANCELED (the graph died while
 * waiting: keep a graph descriptor open while endpoints are in use).
 */
int dfg_chan_recv(struct dfg_chan *c, struct dfg_desc *d, unsigned int n,
		  unsigned int flags);

/**
 * dfg_chan_forward() - zero-copy stage: receive, then send unchanged
 * @in:		consumer endpoint
 * @out:	producer endpoint of a channel over the same pool
 * @n:		at most this many per call, > 0
 *
 * Blocks on both sides. Returns the number forwarded (> 0), 0 at end of
 * stream of @in, or -errno of dfg_chan_recv() or dfg_chan_send()
 * (descriptors received but not sent are lost to the caller: -EPIPE
 * means the next stage is gone).
 */
int dfg_chan_forward(struct dfg_chan *in, struct dfg_chan *out,
		     unsigned int n);

/**
 * dfg_chan_buf() - the buffer a descriptor names
 * @c:		endpoint
 * @d:		descriptor
 *
 * Returns dfg_arena_ptr(pool, @d->off, @d->len), NULL if the range is
 * outside the pool (or an argument is NULL).
 */
void *dfg_chan_buf(const struct dfg_chan *c, const struct dfg_desc *d);

/**
 * dfg_chan_prep_wait() - prepare a wait of this endpoint on an io_uring
 * @c:		endpoint
 * @sqe:	SQE of an SQE128 ring (dfg_wait_ring(), or the caller's own
 *		from dfg_queue_init())
 * @user_data:	the SQE's user_data, to find its CQE
 *
 * Raises the endpoint's waiting flag (so that the peer's next send or
 * receive WAKEs it) and prepares DFG_IOC_CHAN_WAIT on @sqe. The command
 * completes at once if the endpoint can already make progress. Every
 * such SQE, once submitted, must have its CQE passed to
 * dfg_chan_wait_cqe(): Linux 6.1 cannot cancel it, so it ends only by its
 * event, by the graph's death, or with -ECANCELED when the submitting
 * thread exits or the ring goes; until then it keeps the endpoint's file
 * (and its waiting flag) alive. Submit it only when you will wait for it.
 * Never fails, never submits.
 */
void dfg_chan_prep_wait(struct dfg_chan *c, struct io_uring_sqe *sqe,
			__u64 user_data);

/**
 * dfg_chan_wait_cqe() - the completion of a dfg_chan_prep_wait() SQE
 * @c:		the endpoint the SQE was prepared for
 * @cqe:	its CQE (not marked seen: call io_uring_cqe_seen() after)
 *
 * Lowers the waiting flag raised for it (the last wait in flight takes it
 * down). Returns DFG_CHAN_EV_* bits (>= 0): look at the channel again with
 * DFG_CHAN_NONBLOCK; or -errno: -EPIPE (producer, the consumer has gone),
 * -ECANCELED (thread exit, ring teardown, graph death), -EBUSY
 * (dfg.max_parked: wait again later or with dfg_chan_recv()), -EINVAL
 * (@c or @cqe NULL).
 */
int dfg_chan_wait_cqe(struct dfg_chan *c, const struct io_uring_cqe *cqe);

#ifdef __cplusplus
}
#endif

#endif /* _DFG_CHAN_H */
