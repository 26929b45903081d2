// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: graphs, the kernel's unit of sharing and permission that every
 * other object belongs to (hence core/). Create and attach by name over
 * the handle's /dev/dfg, describe a graph through its descriptor.
 */
#include <string.h>

#include "sys.h"

/*
 * Check @name as the module will (1..DFG_NAME_MAX-1 bytes of
 * [A-Za-z0-9._-]), so that an overlong name gets -ENAMETOOLONG rather
 * than a silently truncated copy, and bad names fail without a syscall.
 */
static int dfg_graph_name_check(const char *name)
{
	size_t len, i;

	if (!name)
		return -EINVAL;
	len = strnlen(name, DFG_NAME_MAX);
	if (len == DFG_NAME_MAX)
		return -ENAMETOOLONG;
	if (!len)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return -EINVAL;
	}
	return 0;
}

static int dfg_graph_open_cmd(struct dfg *d, __u32 cmd_op, const char *name,
			      unsigned int mode, unsigned int flags)
{
	struct dfg_graph_open op = {
		.size	= sizeof(op),
		.flags	= flags,
		.mode	= mode,
	};
	int ret;

	if (!d)
		return -EINVAL;
	ret = dfg_graph_name_check(name);
	if (ret < 0)
		return ret;
	memcpy(op.name, name, strlen(name));
	return dfg_cmd(d, cmd_op, &op);
}

int dfg_graph_create(struct dfg *d, const char *name, unsigned int mode,
		     unsigned int flags)
{
	return dfg_graph_open_cmd(d, DFG_IOC_GRAPH_CREATE, name, mode, flags);
}

int dfg_graph_attach(struct dfg *d, const char *name, unsigned int flags)
{
	return dfg_graph_open_cmd(d, DFG_IOC_GRAPH_ATTACH, name, 0, flags);
}

int dfg_graph_info(int graph_fd, struct dfg_graph_info *info)
{
	if (!info)
		return -EINVAL;
	if (graph_fd < 0)
		return -EBADF;
	*info = (struct dfg_graph_info){ .size = sizeof(*info) };
	return dfg_sys_cmd(graph_fd, DFG_IOC_GRAPH_INFO, info);
}
