// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: the handle. Opens the dfg device, creates and tears
 * down its SQE128|CQE32 ring, and hands both out.
 */
#include <stdlib.h>

#include "sys.h"

#ifndef LIBDFG_VERSION
#error "LIBDFG_VERSION must be defined by the build"
#endif

/* $DFG_DEVICE if set and non-empty, else the default device node. */
static const char *dfg_device_path(void)
{
	const char *path = secure_getenv("DFG_DEVICE");

	return path && *path ? path : DFG_DEVICE_PATH;
}

int dfg_queue_init(unsigned int entries, struct io_uring *ring,
		   unsigned int flags)
{
	int saved = errno;
	int ret;

	if (!ring)
		return -EINVAL;
	flags |= IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	ret = io_uring_queue_init(entries, ring, flags);
	errno = saved;
	return ret;
}

int dfg_open(struct dfg **dp, unsigned int flags)
{
	struct dfg *d;
	int ret;

	if (!dp || (flags & ~DFG_OPEN_ALL))
		return -EINVAL;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;

	ret = __dfg_sys_open(dfg_device_path(), O_RDWR | O_CLOEXEC);
	if (ret < 0)
		goto out_free;
	d->fd = ret;

	if (!(flags & DFG_OPEN_NO_RING)) {
		ret = dfg_queue_init(DFG_RING_ENTRIES, &d->ring, 0);
		if (ret < 0)
			goto out_close;
		d->has_ring = true;
	}

	*dp = d;
	return 0;

out_close:
	__dfg_sys_close(d->fd);
out_free:
	free(d);
	return ret;
}

void dfg_close(struct dfg *d)
{
	int saved = errno;

	if (!d)
		return;
	if (d->has_ring)
		io_uring_queue_exit(&d->ring);
	close(d->fd);
	free(d);
	errno = saved;
}

int dfg_fd(const struct dfg *d)
{
	return d ? d->fd : -EINVAL;
}

struct io_uring *dfg_ring(struct dfg *d)
{
	return d && d->has_ring ? &d->ring : NULL;
}

const char *dfg_version(void)
{
	return LIBDFG_VERSION;
}
