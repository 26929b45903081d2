// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg test of the set scheduler client against the loaded dfg module
 * (run it in the test VM: tools/vm/dfg-vm -- build/libdfg/tests/
 * sched_module). SKIPs when the device cannot be opened or the module has
 * no scheduler.
 *
 * A two-set pipeline over a libdfg channel: "src" (a root with two
 * components, gen -> tag) sends ITEMS buffers, "dst" (one component, sum)
 * receives them; worker threads loop on dfg_sched_next(). Checks the data,
 * the per-component counters in sysfs, and the end (-ENODATA).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dfg/dfg.h>

#include "kselftest_harness.h"

#define ITEMS		5000
#define WORKERS		3

struct pipe {
	struct dfg_sched	*s;
	struct dfg_set		*src, *dst;
	struct dfg_chan		*tx, *rx;
	struct dfg_arena	*arena;
	unsigned long long	sent, got, sum;
	int			errors;		/* atomic */
	int			eof;
};

static int sysfs_u64(unsigned int gid, unsigned int id, const char *attr,
		     unsigned long long *v)
{
	char path[256];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/kernel/dfg/graphs/%u/set%u/%s",
		 gid, id, attr);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ok = fscanf(f, "%llu", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/* src: gen (component 0) makes a value, tag (1) sends it. */
static unsigned int src_turn(struct pipe *p, unsigned long long quantum)
{
	struct dfg_set_page *pg = dfg_set_page(p->src);
	unsigned long long n;
	unsigned int prev;
	struct dfg_desc d;
	int ret;

	for (n = 0; n < quantum && p->sent < ITEMS; n++) {
		prev = dfg_set_enter(pg, 0);
		d.off = 0;
		d.len = 8;
		d.flags = 0;
		d.tag = p->sent + 1;
		dfg_set_count_out(pg, 0, 1, 8);
		dfg_set_enter(pg, 1);
		dfg_set_count_in(pg, 1, 1, 8);
		ret = dfg_chan_send(p->tx, &d, 1, DFG_CHAN_NONBLOCK);
		dfg_set_leave(pg, prev);
		if (ret == -EAGAIN)
			return DFG_YIELD_OUTPUT_FULL;
		if (ret != 1) {
			__atomic_add_fetch(&p->errors, 1, __ATOMIC_RELAXED);
			return DFG_YIELD_ERROR;
		}
		dfg_set_count_out(pg, 1, 1, 8);
		p->sent++;
	}
	if (p->sent < ITEMS)
		return DFG_YIELD_QUANTUM;
	dfg_chan_close(p->tx);
	p->tx = NULL;
	return DFG_YIELD_EOF;
}

static unsigned int dst_turn(struct pipe *p, unsigned long long quantum)
{
	struct dfg_set_page *pg = dfg_set_page(p->dst);
	unsigned long long n;
	unsigned int prev;
	struct dfg_desc d;
	int ret;

	for (n = 0; n < quantum; n++) {
		ret = dfg_chan_recv(p->rx, &d, 1, DFG_CHAN_NONBLOCK);
		if (ret == -EAGAIN)
			return DFG_YIELD_INPUT_EMPTY;
		if (ret == 0)
			return DFG_YIELD_EOF;
		if (ret != 1) {
			__atomic_add_fetch(&p->errors, 1, __ATOMIC_RELAXED);
			return DFG_YIELD_ERROR;
		}
		prev = dfg_set_enter(pg, 0);
		dfg_set_count_in(pg, 0, 1, d.len);
		if (d.tag != p->got + 1)
			__atomic_add_fetch(&p->errors, 1, __ATOMIC_RELAXED);
		p->sum += d.tag;
		p->got++;
		dfg_set_leave(pg, prev);
	}
	return DFG_YIELD_QUANTUM;
}

static void *worker(void *arg)
{
	struct pipe *p = arg;
	struct dfg_set *set = NULL;
	unsigned long long quantum = 0;
	unsigned int why = 0;
	int ret;

	for (;;) {
		ret = dfg_sched_next(p->s, set, why, 0, &set, &quantum);
		if (ret == -ENODATA)
			return NULL;
		if (ret < 0) {
			__atomic_add_fetch(&p->errors, 1, __ATOMIC_RELAXED);
			return NULL;
		}
		why = set == p->src ? src_turn(p, quantum) :
				      dst_turn(p, quantum);
	}
}

static void run_pipeline(struct __test_metadata *_metadata)
{
	const char *src_comps[] = { "gen", "tag" };
	const char *dst_comps[] = { "sum" };
	struct dfg_graph_info info;
	struct dfg_set_output out;
	struct pipe p = { 0 };
	struct dfg_set_desc src = {
		.name = "src", .flags = DFG_SET_F_ROOT, .quantum = 16,
		.nr_outputs = 1, .outputs = &out,
		.nr_comps = 2, .comp_names = src_comps,
	};
	struct dfg_set_desc dst = {
		.name = "dst", .quantum = 32, .nr_inputs = 1,
		.nr_comps = 1, .comp_names = dst_comps,
	};
	char name[DFG_NAME_MAX];
	unsigned long long v;
	pthread_t th[WORKERS];
	unsigned int cid;
	struct dfg *d;
	int gfd, i, ret;

	if (dfg_open(&d, DFG_OPEN_NO_RING))
		SKIP(return, "no dfg device");
	snprintf(name, sizeof(name), "sched-lib-%d", getpid());
	gfd = dfg_graph_create(d, name, 0600, 0);
	ASSERT_LE(0, gfd);
	ASSERT_EQ(0, dfg_graph_info(gfd, &info));
	ret = dfg_arena_create(gfd, 1 << 20, &p.arena);
	ASSERT_EQ(0, ret);
	ret = dfg_chan_create(gfd, dfg_arena_id(p.arena), 8, 1);
	ASSERT_LT(0, ret);
	cid = ret;
	ASSERT_EQ(0, dfg_chan_open(gfd, cid, DFG_CHAN_CONSUMER, p.arena,
				   &p.rx));
	ASSERT_EQ(0, dfg_chan_open(gfd, cid, DFG_CHAN_PRODUCER, p.arena,
				   &p.tx));
	out.chan = cid;
	out.slot = dfg_chan_slot(p.tx);
	dst.inputs = &cid;

	ret = dfg_sched_attach(gfd, &p.s);
	if (ret == -EOPNOTSUPP)
		SKIP(return, "module without the scheduler");
	ASSERT_EQ(0, ret);
	EXPECT_EQ(-EINVAL, dfg_set_register(p.s, &(struct dfg_set_desc){
		.name = "x" }, &p.src));
	ASSERT_EQ(0, dfg_set_register(p.s, &src, &p.src));
	ASSERT_EQ(0, dfg_set_register(p.s, &dst, &p.dst));
	EXPECT_EQ(p.src, dfg_sched_set(p.s, dfg_set_id(p.src)));
	EXPECT_EQ(2U, dfg_set_page(p.src)->nr_comps);

	for (i = 0; i < WORKERS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, worker, &p));
	for (i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);

	EXPECT_EQ(0, p.errors);
	EXPECT_EQ(ITEMS, p.got);
	EXPECT_EQ((unsigned long long)ITEMS * (ITEMS + 1) / 2, p.sum);
	ASSERT_EQ(0, sysfs_u64(info.id, dfg_set_id(p.src), "comp1/elements_out",
			       &v));
	EXPECT_EQ(ITEMS, v);
	ASSERT_EQ(0, sysfs_u64(info.id, dfg_set_id(p.dst), "comp0/bytes_in",
			       &v));
	EXPECT_EQ(8ULL * ITEMS, v);
	ASSERT_EQ(0, sysfs_u64(info.id, dfg_set_id(p.dst), "waits", &v));
	EXPECT_LT(0ULL, v);
	EXPECT_EQ(-ENODATA, dfg_sched_next(p.s, NULL, 0, DFG_NEXT_F_NOWAIT,
					   &p.src, NULL));
	EXPECT_EQ(0, dfg_set_unregister(p.dst));
	dfg_sched_detach(p.s);
	dfg_chan_close(p.rx);
	dfg_arena_unmap(p.arena);
	close(gfd);
	dfg_close(d);
}

/* The workers' NEXTs are lone waits: through ioctl. */
TEST(pipeline)
{
	ASSERT_EQ(0, unsetenv("DFG_WAIT_URING"));
	run_pipeline(_metadata);
}

/* The same with every NEXT and channel wait on the workers' rings. */
TEST(pipeline_uring)
{
	ASSERT_EQ(0, setenv("DFG_WAIT_URING", "1", 1));
	run_pipeline(_metadata);
}

TEST_HARNESS_MAIN
