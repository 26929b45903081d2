// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: synchronous commands.
 *
 * Every ioctl-path call of the library fills its argument struct with a
 * designated initializer and goes through dfg_sys_cmd() (dfg_cmd() on a
 * handle); dfg_uring_cmd() is the one synchronous io_uring path.
 */
#include <stdint.h>
#include <sys/ioctl.h>

#include "sys.h"

int dfg_sys_cmd(int fd, __u32 cmd_op, void *args)
{
	int saved = errno;

	return __dfg_sys_ret(ioctl(fd, cmd_op, args), saved);
}

int dfg_cmd(struct dfg *d, __u32 cmd_op, void *args)
{
	if (!d)
		return -EINVAL;
	return dfg_sys_cmd(d->fd, cmd_op, args);
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
 * Wait for the completion whose user_data is @tag, consume it and return
 * its res and res2 (the ring is CQE32), leaving
 * completions of other requests queued, in their order. When @tag is not at
 * the head, the CQEs before it are moved one slot towards the tail over it
 * and the head is then dropped. The entries between head and tail belong to
 * the application (the kernel only writes past the tail), so this is safe
 * as long as nobody else reaps this ring concurrently. Returns 0, -EINTR
 * when a signal interrupted the wait (the request is still in flight: the
 * caller decides whether to call again), or another io_uring_enter error.
 */
static int dfg_reap_tagged(struct io_uring *ring, __u64 tag, int *res,
			   __u64 *res2)
{
	const size_t cqe_size =
		sizeof(struct io_uring_cqe) << io_uring_cqe_shift(ring);
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
			*res = cqe->res;
			*res2 = dfg_cqe_res2(cqe);
			for (j = i; j > 0; j--)
				memcpy(dfg_cqe_at(ring, head + j),
				       dfg_cqe_at(ring, head + j - 1),
				       cqe_size);
			io_uring_cq_advance(ring, 1);
			return 0;
		}
		ret = io_uring_wait_cqe_nr(ring, &cqe, ready + 1);
		if (ret < 0 && ret != -EAGAIN)
			return ret;
	}
}

/* Has the kernel consumed the SQE at free-running position @pos? */
static bool dfg_sqe_consumed(struct io_uring *ring, unsigned int pos)
{
	return (int)(pos - io_uring_smp_load_acquire(ring->sq.khead)) < 0;
}

/*
 * Submit what is queued, our SQE at @sqe_pos included, and in the same
 * io_uring_enter() wait until @wait_nr CQEs are ready (0: do not wait;
 * io_uring_enter submits first, and reports what it submitted even when a
 * signal cut the wait short). Without IORING_SETUP_SUBMIT_ALL the kernel
 * stops a batch at the first SQE that fails to submit, so go on (without
 * waiting) while it makes progress. If our SQE is still unconsumed after
 * an error, turn it into a NOP without completion so that a later submit
 * cannot issue a command whose argument pointer and tag have gone stale.
 */
static int dfg_submit_one(struct io_uring *ring, struct io_uring_sqe *sqe,
			  unsigned int sqe_pos, unsigned int wait_nr)
{
	int ret;

	for (;;) {
		ret = io_uring_submit_and_wait(ring, wait_nr);
		wait_nr = 0;
		if (ret == -EINTR)
			continue;
		if (ret >= 0 && dfg_sqe_consumed(ring, sqe_pos))
			return 0;
		if (ret <= 0)
			break;
	}
	if (!ret)
		ret = -EAGAIN;
	memset(sqe, 0, DFG_SQE_SIZE);
	io_uring_prep_nop(sqe);
	sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
	return ret;
}

int __dfg_ring_cmd(struct io_uring *ring, int fd, __u32 cmd_op, void *args,
		   __u64 *res2, const struct dfg_intr *intr)
{
	__u32 len = _IOC_SIZE(cmd_op);
	struct io_uring_sqe *sqe;
	bool interrupted = false;
	__u64 cqe_res2;
	int cqe_res;
	/* Unique while we wait: an address in our own stack frame. */
	const __u64 tag = (uintptr_t)&cqe_res;
	int saved = errno;
	int ret;

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
		dfg_prep_cmd(sqe, fd, cmd_op, args, len);
	else
		dfg_prep_cmd_indirect(sqe, fd, cmd_op, args, len);
	io_uring_sqe_set_data64(sqe, tag);

	/*
	 * One system call for submit and wait: until one CQE more than now
	 * is ready, often ours. Not when a signal must be noticed (@intr):
	 * the submit would hide it.
	 */
	ret = dfg_submit_one(ring, sqe, ring->sq.sqe_tail - 1,
			     intr ? 0 : io_uring_cq_ready(ring) + 1);
	if (ret < 0)
		goto out;

	/*
	 * The command is in flight: whatever happens we wait for its CQE,
	 * so that no completion of ours is ever left for the ring's owner
	 * and no argument pointer outlives this frame. A signal runs its
	 * handler and the wait goes on, after @intr's hook if any.
	 */
	while ((ret = dfg_reap_tagged(ring, tag, &cqe_res, &cqe_res2)) ==
	       -EINTR) {
		if (intr && !interrupted)
			intr->fn(intr);
		interrupted = true;
	}
	if (ret < 0)
		goto out;
	if (res2)
		*res2 = cqe_res2;
	ret = cqe_res;
	if (interrupted && intr && ret >= 0)
		ret = -EINTR;
out:
	errno = saved;
	return ret;
}

int dfg_uring_cmd(struct dfg *d, __u32 cmd_op, void *args, __u64 *res2)
{
	struct io_uring *ring = dfg_ring(d);

	if (!ring)
		return -EINVAL;
	return __dfg_ring_cmd(ring, d->fd, cmd_op, args, res2, NULL);
}
