// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg core/cmd.c: synchronous commands.
 *
 * Every ioctl-path call fills its argument struct with a designated
 * initializer and goes through dfg_cmd(); dfg_uring_cmd() is the one
 * synchronous io_uring path.
 */
#include <stdint.h>

#include "internal.h"

int dfg_cmd(struct dfg *d, __u32 cmd_op, void *args)
{
	if (!d)
		return -EINVAL;
	return __dfg_sys_ioctl(d->fd, cmd_op, args);
}

int dfg_info(struct dfg *d, struct dfg_info *info)
{
	if (!info)
		return -EINVAL;
	*info = (struct dfg_info){ .size = sizeof(*info) };
	return dfg_cmd(d, DFG_IOC_GET_INFO, info);
}

int dfg_nop(struct dfg *d, __u64 value, __u32 flags, __u32 delay_ms,
	    __u64 *echo)
{
	struct dfg_nop nop = {
		.value		= value,
		.flags		= flags,
		.delay_ms	= delay_ms,
	};
	int ret;

	ret = dfg_cmd(d, DFG_IOC_NOP, &nop);
	if (ret >= 0 && echo)
		*echo = nop.echo;
	return ret;
}

/* CQE at position @pos (free-running index) of the CQ ring. */
static struct io_uring_cqe *dfg_cqe_at(struct io_uring *ring, unsigned int pos)
{
	return &ring->cq.cqes[io_uring_cqe_index(ring, pos, ring->cq.ring_mask)];
}

/*
 * Wait for the completion whose user_data is @tag and consume it, leaving
 * completions of other requests queued, in their order. When @tag is not at
 * the head, the CQEs before it are moved one slot towards the tail over it
 * and the head is then dropped. The entries between head and tail belong to
 * the application (the kernel only writes past the tail), so this is safe
 * as long as nobody else reaps this ring concurrently.
 */
static int dfg_reap_tagged(struct io_uring *ring, __u64 tag,
			   struct io_uring_cqe *out)
{
	const size_t cqe_size = sizeof(*out) << io_uring_cqe_shift(ring);
	struct io_uring_cqe *cqe;
	unsigned int head, ready, i, j;
	int ret;

	for (;;) {
		head = *ring->cq.khead;
		ready = io_uring_cq_ready(ring);
		for (i = 0; i < ready; i++) {
			cqe = dfg_cqe_at(ring, head + i);
			if (cqe->user_data != tag)
				continue;
			memcpy(out, cqe, cqe_size);
			for (j = i; j > 0; j--)
				memcpy(dfg_cqe_at(ring, head + j),
				       dfg_cqe_at(ring, head + j - 1),
				       cqe_size);
			io_uring_cq_advance(ring, 1);
			return 0;
		}
		ret = io_uring_wait_cqe_nr(ring, &cqe, ready + 1);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN)
			return ret;
	}
}

/*
 * Submit what is queued, our SQE included. If the kernel refused the batch
 * and our SQE is still unconsumed, turn it into a NOP without completion so
 * that a later submit cannot issue a command whose argument pointer and tag
 * have gone stale.
 */
static int dfg_submit_one(struct io_uring *ring, struct io_uring_sqe *sqe,
			  unsigned int sqe_pos)
{
	int ret;

	do {
		ret = io_uring_submit(ring);
	} while (ret == -EINTR);
	if (ret >= 0 &&
	    (int)(sqe_pos - io_uring_smp_load_acquire(ring->sq.khead)) < 0)
		return 0;
	if (ret >= 0)
		ret = -EAGAIN;
	memset(sqe, 0, DFG_SQE_SIZE);
	io_uring_prep_nop(sqe);
	sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
	return ret;
}

int dfg_uring_cmd(struct dfg *d, __u32 cmd_op, void *args, __u64 *res2)
{
	struct io_uring *ring = dfg_ring(d);
	__u32 len = _IOC_SIZE(cmd_op);
	struct io_uring_cqe_32 {
		struct io_uring_cqe	cqe;
		__u64			big[2];
	} c;
	struct io_uring_sqe *sqe;
	/* Unique while we wait: the address of our own stack frame. */
	const __u64 tag = (uintptr_t)&c;
	int saved = errno;
	int ret;

	if (!ring)
		return -EINVAL;
	if (len && !args)
		return -EFAULT;

	sqe = io_uring_get_sqe(ring);
	if (!sqe) {
		ret = io_uring_submit(ring);
		if (ret < 0)
			goto out;
		sqe = io_uring_get_sqe(ring);
		if (!sqe) {
			ret = -EBUSY;
			goto out;
		}
	}

	if (len <= DFG_URING_INLINE_MAX)
		dfg_prep_cmd(sqe, d->fd, cmd_op, args, len);
	else
		dfg_prep_cmd_indirect(sqe, d->fd, cmd_op, args, len);
	io_uring_sqe_set_data64(sqe, tag);

	ret = dfg_submit_one(ring, sqe, ring->sq.sqe_tail - 1);
	if (ret < 0)
		goto out;

	ret = dfg_reap_tagged(ring, tag, &c.cqe);
	if (ret < 0)
		goto out;
	if (res2)
		*res2 = dfg_cqe_res2(&c.cqe);
	ret = c.cqe.res;
out:
	errno = saved;
	return ret;
}
