// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: arenas. Create an arena in a graph and map it, map an arena a
 * peer created, wrap foreign shared memory in the same view, and convert
 * between offsets and pointers with bounds checks.
 */
#include <stdint.h>
#include <stdlib.h>

#include "chan.h"

static size_t dfg_page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (size_t)ps : 4096;
}

/* Round @size up to the page size; 0 if it overflows. */
size_t dfg_page_round(size_t size)
{
	size_t ps = dfg_page_size();

	if (size > SIZE_MAX - (ps - 1))
		return 0;
	return (size + ps - 1) & ~(ps - 1);
}

/* A new view; shared with region.c (hidden: not in the version map). */
int dfg_arena_new(int graph_fd, unsigned int id, void *base, size_t size,
		  bool writable, bool mapped, struct dfg_arena **out)
{
	struct dfg_arena *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->graph_fd = graph_fd;
	a->id = id;
	a->base = base;
	a->size = size;
	a->writable = writable;
	a->mapped = mapped;
	*out = a;
	return 0;
}

static int dfg_arena_do_map(int graph_fd, unsigned int id, size_t size,
			    bool writable, struct dfg_arena **out)
{
	int prot = PROT_READ | (writable ? PROT_WRITE : 0);
	int ret = 0;
	void *p;

	p = __dfg_sys_mmap(size, prot, graph_fd, DFG_MMAP_OFFSET(id), &ret);
	if (!p)
		return ret;
	ret = dfg_arena_new(graph_fd, id, p, size, writable, true, out);
	if (ret < 0)
		__dfg_sys_munmap(p, size);
	return ret;
}

int dfg_arena_create(int graph_fd, size_t size, struct dfg_arena **out)
{
	struct dfg_arena_create ac = { .size = size };
	int ret;

	if (!out || !size)
		return -EINVAL;
	if (graph_fd < 0)
		return -EBADF;
	ret = dfg_sys_cmd(graph_fd, DFG_IOC_ARENA_CREATE, &ac);
	if (ret < 0)
		return ret;
	if (ac.size < size || ac.size > SIZE_MAX ||
	    ac.mmap_offset != DFG_MMAP_OFFSET(ac.id))
		return -EPROTO;
	return dfg_arena_do_map(graph_fd, ac.id, (size_t)ac.size, true, out);
}

int dfg_arena_map(int graph_fd, unsigned int id, size_t size, int writable,
		  struct dfg_arena **out)
{
	if (!out || !size)
		return -EINVAL;
	if (graph_fd < 0)
		return -EBADF;
	size = dfg_page_round(size);
	if (!size)
		return -EINVAL;
	return dfg_arena_do_map(graph_fd, id, size, writable, out);
}

int dfg_arena_wrap(void *base, size_t size, int writable,
		   struct dfg_arena **out)
{
	uintptr_t b = (uintptr_t)base;

	if (!base || !size || !out || (b & (DFG_BUF_MIN - 1)) ||
	    size - 1 > UINTPTR_MAX - b)
		return -EINVAL;
	return dfg_arena_new(-1, 0, base, size, writable, false, out);
}

void dfg_arena_unmap(struct dfg_arena *a)
{
	if (!a)
		return;
	if (a->mapped)
		__dfg_sys_munmap(a->base, a->size);
	free(a);
}

void *dfg_arena_base(const struct dfg_arena *a)
{
	return a ? a->base : NULL;
}

size_t dfg_arena_size(const struct dfg_arena *a)
{
	return a ? a->size : 0;
}

unsigned int dfg_arena_id(const struct dfg_arena *a)
{
	return a ? a->id : 0;
}

bool dfg_arena_writable(const struct dfg_arena *a)
{
	return a && a->writable;
}

void *dfg_arena_ptr(const struct dfg_arena *a, __u64 off, __u64 len)
{
	if (!a || off > a->size || len > a->size - off)
		return NULL;
	return (char *)a->base + off;
}

__u64 dfg_arena_off(const struct dfg_arena *a, const void *p)
{
	uintptr_t b, q = (uintptr_t)p;

	if (!a)
		return DFG_ARENA_OFF_INVALID;
	b = (uintptr_t)a->base;
	if (q < b || q - b >= a->size)
		return DFG_ARENA_OFF_INVALID;
	return q - b;
}
