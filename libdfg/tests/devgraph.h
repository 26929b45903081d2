/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Test helper for the module tests (tests/<name>_module.c, in the VM): the
 * first steps of their FIXTURE_SETUP, /dev/dfg and a fresh graph.
 */
#ifndef _DFG_TESTS_DEVGRAPH_H
#define _DFG_TESTS_DEVGRAPH_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <dfg/dfg.h>
#include <dfg/graph.h>

/*
 * Opens /dev/dfg into *@d and creates the graph "libdfg-@tag-<pid>-<n>"
 * (mode 0600, close-on-exec; its name into @name). Returns the graph
 * descriptor, -ENODEV when there is no device or it lacks @feature (the
 * test skips), or another -errno.
 */
static inline int devgraph_open(struct dfg **d, __u64 feature,
				const char *tag, char *name, size_t len)
{
	static int seq;
	struct dfg_info info;
	int ret;

	*d = NULL;
	ret = dfg_open(d, DFG_OPEN_NO_RING);
	if (ret == -ENOENT || ret == -ENODEV)
		return -ENODEV;
	if (ret)
		return ret;
	ret = dfg_info(*d, &info);
	if (ret)
		return ret;
	if (!(info.features & feature))
		return -ENODEV;
	snprintf(name, len, "libdfg-%s-%d-%d", tag, getpid(), seq++);
	return dfg_graph_create(*d, name, 0600, DFG_GRAPH_O_CLOEXEC);
}

/*
 * In FIXTURE_SETUP: self->d and self->gfd (-1 when the test skips, so
 * that test bodies can check it), or SKIP / fail.
 */
#define DEVGRAPH_SETUP(feature, tag, name, len) do {			\
	self->gfd = devgraph_open(&self->d, (feature), (tag), (name),	\
				  (len));				\
	if (self->gfd == -ENODEV) {					\
		self->gfd = -1;						\
		SKIP(return, "no dfg device with %s", #feature);	\
	}								\
	ASSERT_LE(0, self->gfd) TH_LOG("%s", strerror(-self->gfd));	\
} while (0)

#endif /* _DFG_TESTS_DEVGRAPH_H */
