// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: exported regions. Export and unexport ranges of this process's
 * memory, map a peer's region as an arena view, copy to and from one.
 */
#include <stdint.h>

#include "chan.h"

int dfg_region_export(int graph_fd, void *addr, size_t len,
		      unsigned int flags, __u64 *mmap_offset)
{
	struct dfg_region r = {
		.addr = (__u64)(uintptr_t)addr,
		.len = len,
		.flags = flags,
	};
	int ret;

	if (graph_fd < 0)
		return -EBADF;
	ret = dfg_sys_cmd(graph_fd, DFG_IOC_REGION_EXPORT, &r);
	if (ret < 0)
		return ret;
	if ((__u32)ret != r.id || !(r.mmap_offset & DFG_MMAP_REGION))
		return -EPROTO;
	if (mmap_offset)
		*mmap_offset = r.mmap_offset;
	return ret;
}

int dfg_region_unexport(int graph_fd, unsigned int id)
{
	struct dfg_region r = { .id = id };

	if (graph_fd < 0)
		return -EBADF;
	return dfg_sys_cmd(graph_fd, DFG_IOC_REGION_UNEXPORT, &r);
}

int dfg_region_map(int graph_fd, unsigned int id, __u64 mmap_offset,
		   size_t len, int writable, struct dfg_arena **out)
{
	int prot = PROT_READ | (writable ? PROT_WRITE : 0);
	int ret = 0;
	void *p;

	if (!out || !id || !len || !(mmap_offset & DFG_MMAP_REGION))
		return -EINVAL;
	if (graph_fd < 0)
		return -EBADF;
	len = dfg_page_round(len);
	if (!len)
		return -EINVAL;
	p = __dfg_sys_mmap(len, prot, graph_fd, mmap_offset, &ret);
	if (!p)
		return ret;
	ret = dfg_arena_new(graph_fd, id, p, len, writable, true, out);
	if (ret < 0)
		__dfg_sys_munmap(p, len);
	return ret;
}

__s64 dfg_region_copy(int graph_fd, unsigned int id, __u64 off, void *buf,
		      size_t len, unsigned int dir)
{
	size_t done = 0;

	if (dir != DFG_COPY_TO_REGION && dir != DFG_COPY_FROM_REGION)
		return -EINVAL;
	if (graph_fd < 0)
		return -EBADF;
	/* Check the whole range first, so a failure copies nothing. */
	if (len && off + len < off)
		return -ERANGE;
	do {
		size_t n = len - done;
		struct dfg_region_copy c;
		int ret;

		if (n > DFG_REGION_COPY_MAX)
			n = DFG_REGION_COPY_MAX;
		c = (struct dfg_region_copy){
			.id = id,
			.flags = dir,
			.offset = off + done,
			.len = n,
			.addr = (__u64)(uintptr_t)((char *)buf + done),
		};
		ret = dfg_sys_cmd(graph_fd, DFG_IOC_REGION_COPY, &c);
		if (ret < 0)
			return ret;
		if ((size_t)ret != n)
			return -EPROTO;
		done += n;
	} while (done < len);
	return (__s64)done;
}
