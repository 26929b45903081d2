// SPDX-License-Identifier: GPL-2.0
/*
 * Core command path of /dev/dfg: DFG_IOC_GET_INFO and DFG_IOC_NOP over
 * ioctl, inline uring_cmd and indirect uring_cmd, every error the ABI
 * promises for them, the uring_cmd area checks, async completion, a 100k
 * NOP stream and the sysfs counters the commands move.
 *
 * FIXTURE(cmd) runs each test over every path (FIXTURE_VARIANT); the uring
 * fixture holds checks that only exist for IORING_OP_URING_CMD; plain TESTs
 * cover ioctl pointers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <termios.h>

#include "dfg_sys.h"
#include "kselftest_harness.h"

/* A value per index that no two indices share and that is never 0. */
static __u64 nop_value(__u64 i)
{
	return (i + 1) * 0x9E3779B97F4A7C15ULL;
}

FIXTURE(cmd) {
	int fd;			/* /dev/dfg */
	struct io_uring ring;	/* SQE128 | CQE32; uring variants only */
	bool have_ring;
	struct dfg_info info;	/* GET_INFO over ioctl at setup */
};

FIXTURE_VARIANT(cmd) {
	enum dfg_path path;
	__u8 sqe_flags;		/* IOSQE_ASYNC: issue from an io-wq worker */
};

FIXTURE_VARIANT_ADD(cmd, ioctl) {
	.path = DFG_PATH_IOCTL,
};

FIXTURE_VARIANT_ADD(cmd, uring_inline) {
	.path = DFG_PATH_INLINE,
};

FIXTURE_VARIANT_ADD(cmd, uring_indirect) {
	.path = DFG_PATH_INDIRECT,
};

FIXTURE_VARIANT_ADD(cmd, uring_inline_iowq) {
	.path = DFG_PATH_INLINE,
	.sqe_flags = IOSQE_ASYNC,
};

FIXTURE_VARIANT_ADD(cmd, uring_indirect_iowq) {
	.path = DFG_PATH_INDIRECT,
	.sqe_flags = IOSQE_ASYNC,
};

FIXTURE_SETUP(cmd)
{
	int ret;

	self->fd = sys_dfg_open();
	ASSERT_LE(0, self->fd) {
		TH_LOG("open %s: %s (is dfg.ko loaded?)", DFG_DEV_PATH,
		       strerror(-self->fd));
	}
	ASSERT_EQ(0, dfg_get_info(self->fd, &self->info));
	if (variant->path != DFG_PATH_IOCTL) {
		ret = dfg_ring_init(&self->ring, 128);
		ASSERT_EQ(0, ret) {
			TH_LOG("io_uring SQE128|CQE32: %s", strerror(-ret));
		}
		self->have_ring = true;
	}
}

FIXTURE_TEARDOWN(cmd)
{
	if (self->have_ring)
		io_uring_queue_exit(&self->ring);
	EXPECT_EQ(0, close(self->fd));
}

/* One command over the variant's path. */
static int cmd_run(FIXTURE_DATA(cmd) *self,
		   const FIXTURE_VARIANT(cmd) *variant,
		   __u32 cmd_op, void *args, __u32 len, __u64 *res2)
{
	return dfg_cmd_ex(variant->path, self->fd, &self->ring, cmd_op, args,
			  len, res2, variant->sqe_flags);
}

/* Queues one uring_cmd SQE the variant's way (not for the ioctl variant). */
static struct io_uring_sqe *cmd_prep(FIXTURE_DATA(cmd) *self,
				     const FIXTURE_VARIANT(cmd) *variant,
				     __u32 cmd_op, void *args, __u32 len,
				     __u64 user_data)
{
	struct io_uring_sqe *sqe;

	if (variant->path == DFG_PATH_INLINE)
		sqe = dfg_prep_inline(&self->ring, self->fd, cmd_op, args, len,
				      user_data);
	else
		sqe = dfg_prep_indirect(&self->ring, self->fd, cmd_op, args,
					len, user_data);
	if (sqe)
		sqe->flags |= variant->sqe_flags;
	return sqe;
}

/*
 * One NOP over the variant's path; *@echo gets what came back where the
 * ABI puts it: the struct for ioctl and indirect, res2 for inline.
 */
static int nop_run(FIXTURE_DATA(cmd) *self,
		   const FIXTURE_VARIANT(cmd) *variant,
		   struct dfg_nop *nop, __u64 *echo)
{
	__u64 res2 = 0;
	int ret;

	ret = cmd_run(self, variant, DFG_IOC_NOP, nop, sizeof(*nop), &res2);
	if (echo)
		*echo = variant->path == DFG_PATH_INLINE ? res2 : nop->echo;
	return ret;
}

/* GET_INFO answers, its fields are sane, and every path agrees. */
TEST_F(cmd, get_info)
{
	struct dfg_info info = { .size = sizeof(info) };
	size_t len;
	int i, ret;

	ret = cmd_run(self, variant, DFG_IOC_GET_INFO, &info, sizeof(info),
		      NULL);
	if (variant->path == DFG_PATH_INLINE) {
		/* struct dfg_info (128 bytes) cannot travel inline. */
		ASSERT_EQ(-EINVAL, ret);
		return;
	}
	ASSERT_EQ(0, ret);
	ASSERT_EQ(sizeof(info), info.size);
	ASSERT_EQ((__u32)DFG_API_VERSION, info.api_version);
	ASSERT_EQ(DFG_F_ALL, info.features) {
		TH_LOG("features 0x%llx, the ABI names 0x%llx",
		       (unsigned long long)info.features,
		       (unsigned long long)DFG_F_ALL);
	}
	ASSERT_EQ((__u32)DFG_CMD_NR, info.nr_cmds);
	ASSERT_EQ((__u32)DFG_URING_INLINE_MAX, info.uring_inline_max);
	ASSERT_LT(0U, info.max_parked);
	ASSERT_LT(0U, info.monitor_ms);
	len = strnlen(info.version, sizeof(info.version));
	ASSERT_GT(sizeof(info.version), len);	/* NUL-terminated */
	ASSERT_LT(0UL, len);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0ULL, info.reserved[i]);
	/* Same answer as the ioctl of the setup, byte for byte. */
	ASSERT_EQ(0, memcmp(&self->info, &info, sizeof(info)));
}

/* GET_INFO agrees with /sys/kernel/dfg/{version,api_version,features}. */
TEST_F(cmd, get_info_matches_sysfs)
{
	struct dfg_info info = { .size = sizeof(info) };
	__u64 api, features;
	char version[64];

	if (variant->path == DFG_PATH_INLINE)
		SKIP(return, "GET_INFO cannot travel inline");
	ASSERT_EQ(0, cmd_run(self, variant, DFG_IOC_GET_INFO, &info,
			     sizeof(info), NULL));
	ASSERT_EQ(0, dfg_sysfs_read("version", version, sizeof(version)));
	ASSERT_STREQ(info.version, version);
	ASSERT_EQ(0, dfg_sysfs_read_u64("api_version", &api));
	ASSERT_EQ((__u64)info.api_version, api);
	ASSERT_EQ(0, dfg_sysfs_read_u64_base("features", &features, 16));
	ASSERT_EQ(info.features, features);
}

/* info.size other than sizeof(struct dfg_info) is -EINVAL. */
TEST_F(cmd, get_info_bad_size)
{
	static const __u32 sizes[] = {
		0, 4, sizeof(struct dfg_info) - 8, sizeof(struct dfg_info) - 1,
		sizeof(struct dfg_info) + 1, sizeof(struct dfg_info) + 8, 4096,
		UINT32_MAX,
	};
	struct dfg_info info;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		memset(&info, 0, sizeof(info));
		info.size = sizes[i];
		ASSERT_EQ(-EINVAL, cmd_run(self, variant, DFG_IOC_GET_INFO,
					   &info, sizeof(info), NULL)) {
			TH_LOG("size %u", sizes[i]);
		}
	}
}

/* Each nonzero dfg_info.reserved word is -EINVAL. */
TEST_F(cmd, get_info_reserved)
{
	struct dfg_info info;
	int i;

	for (i = 0; i < 8; i++) {
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		info.reserved[i] = 1ULL << (i * 8);
		ASSERT_EQ(-EINVAL, cmd_run(self, variant, DFG_IOC_GET_INFO,
					   &info, sizeof(info), NULL)) {
			TH_LOG("reserved[%d] nonzero", i);
		}
	}
}

/* NOP echoes its value, on every path, where the ABI says it does. */
TEST_F(cmd, nop_echo)
{
	static const __u64 values[] = {
		0, 1, 0xdeadbeefcafef00dULL, UINT64_MAX, 1ULL << 63,
	};
	struct dfg_nop nop;
	unsigned int i;
	__u64 echo;

	for (i = 0; i < ARRAY_SIZE(values); i++) {
		nop = dfg_nop_args(values[i], 0, 0);
		echo = ~values[i];
		ASSERT_EQ(0, nop_run(self, variant, &nop, &echo));
		ASSERT_EQ(values[i], echo);
		/* The inputs come back unchanged. */
		ASSERT_EQ(values[i], nop.value);
		ASSERT_EQ(0U, nop.flags);
		ASSERT_EQ(0U, nop.delay_ms);
	}
}

/* Unknown NOP flags are -EINVAL. */
TEST_F(cmd, nop_unknown_flags)
{
	static const __u32 flags[] = {
		1U << 2, 1U << 31, ~DFG_NOP_F_ALL, DFG_NOP_F_ASYNC | (1U << 7),
	};
	struct dfg_nop nop;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		nop = dfg_nop_args(1, flags[i], 0);
		ASSERT_EQ(-EINVAL, nop_run(self, variant, &nop, NULL)) {
			TH_LOG("flags 0x%x", flags[i]);
		}
	}
}

/* ASYNC and PARK together are -EINVAL, with or without a delay. */
TEST_F(cmd, nop_async_and_park)
{
	struct dfg_nop nop;

	nop = dfg_nop_args(1, DFG_NOP_F_ASYNC | DFG_NOP_F_PARK, 0);
	ASSERT_EQ(-EINVAL, nop_run(self, variant, &nop, NULL));
	nop = dfg_nop_args(1, DFG_NOP_F_ASYNC | DFG_NOP_F_PARK, 10);
	ASSERT_EQ(-EINVAL, nop_run(self, variant, &nop, NULL));
}

/* A delay without ASYNC (no flag, or PARK) is -EINVAL. */
TEST_F(cmd, nop_delay_without_async)
{
	struct dfg_nop nop;

	nop = dfg_nop_args(1, 0, 1);
	ASSERT_EQ(-EINVAL, nop_run(self, variant, &nop, NULL));
	nop = dfg_nop_args(1, 0, DFG_NOP_DELAY_MAX_MS);
	ASSERT_EQ(-EINVAL, nop_run(self, variant, &nop, NULL));
	nop = dfg_nop_args(1, DFG_NOP_F_PARK, 1);
	ASSERT_EQ(-EINVAL, nop_run(self, variant, &nop, NULL));
}

/* An ASYNC delay above DFG_NOP_DELAY_MAX_MS is -EINVAL. */
TEST_F(cmd, nop_delay_too_long)
{
	struct dfg_nop nop;

	nop = dfg_nop_args(1, DFG_NOP_F_ASYNC, DFG_NOP_DELAY_MAX_MS + 1);
	ASSERT_EQ(-EINVAL, nop_run(self, variant, &nop, NULL));
	nop = dfg_nop_args(1, DFG_NOP_F_ASYNC, UINT32_MAX);
	ASSERT_EQ(-EINVAL, nop_run(self, variant, &nop, NULL));
}

/* Nonzero reserved words, or a nonzero echo on input, are -EINVAL. */
TEST_F(cmd, nop_reserved)
{
	struct dfg_nop nop;

	nop = dfg_nop_args(1, 0, 0);
	nop.reserved[0] = 1;
	ASSERT_EQ(-EINVAL, nop_run(self, variant, &nop, NULL));
	nop = dfg_nop_args(1, 0, 0);
	nop.reserved[1] = 1ULL << 63;
	ASSERT_EQ(-EINVAL, nop_run(self, variant, &nop, NULL));
	nop = dfg_nop_args(1, 0, 0);
	nop.echo = 1;
	ASSERT_EQ(-EINVAL, nop_run(self, variant, &nop, NULL));
	/* The same struct with those fields zero is fine. */
	nop = dfg_nop_args(1, 0, 0);
	ASSERT_EQ(0, nop_run(self, variant, &nop, NULL));
}

/* Numbers past the table, holes in it, and 0xff are -EOPNOTSUPP. */
TEST_F(cmd, unknown_nr)
{
	static const __u32 cmds[] = {
		_IOWR(DFG_IOC_MAGIC, DFG_CMD_NR, struct dfg_nop),
		_IOWR(DFG_IOC_MAGIC, 0x0f, struct dfg_nop),
		_IOWR(DFG_IOC_MAGIC, 0x02, struct dfg_nop),
		_IOWR(DFG_IOC_MAGIC, 0x1f, struct dfg_nop),
		_IOWR(DFG_IOC_MAGIC, 0xff, struct dfg_nop),
	};
	struct dfg_nop nop;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		nop = dfg_nop_args(1, 0, 0);
		ASSERT_EQ(-EOPNOTSUPP, cmd_run(self, variant, cmds[i], &nop,
					       sizeof(nop), NULL)) {
			TH_LOG("cmd 0x%08x", cmds[i]);
		}
	}
}

/*
 * A command of another type (magic) is -EOPNOTSUPP, also for numbers that
 * mean something to other drivers (ioctl would say ENOTTY there; the ABI
 * says -EOPNOTSUPP for every unknown command).
 */
TEST_F(cmd, wrong_magic)
{
	static const __u32 cmds[] = {
		_IOWR(DFG_IOC_MAGIC - 1, 0x01, struct dfg_nop),
		_IOWR(DFG_IOC_MAGIC + 1, 0x00, struct dfg_nop),
		_IOWR('u', 0x01, struct dfg_nop),
		_IOR('T', 0x01, struct dfg_nop),
		TCGETS,
		0,
	};
	char buf[256] __attribute__((aligned(8)));
	__u32 len;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		memset(buf, 0, sizeof(buf));
		len = _IOC_SIZE(cmds[i]);
		ASSERT_EQ(-EOPNOTSUPP, cmd_run(self, variant, cmds[i], buf,
					       len, NULL)) {
			TH_LOG("cmd 0x%08x", cmds[i]);
		}
	}
}

/*
 * Every command value in @cmds is a known number with the wrong size or
 * direction: each must give -EINVAL, whatever its (valid) arguments.
 */
static void expect_einval(struct __test_metadata *_metadata,
			  FIXTURE_DATA(cmd) *self,
			  const FIXTURE_VARIANT(cmd) *variant,
			  const __u32 *cmds, unsigned int n)
{
	union {
		struct dfg_nop nop;
		struct dfg_info info;
		char pad[256];
	} buf;
	__u32 len;
	unsigned int i;

	for (i = 0; i < n; i++) {
		memset(&buf, 0, sizeof(buf));
		if (_IOC_NR(cmds[i]) == 0x00)
			buf.info.size = sizeof(buf.info);
		else
			buf.nop.value = 1;
		len = _IOC_SIZE(cmds[i]);
		if (variant->path == DFG_PATH_INLINE &&
		    len > DFG_URING_INLINE_MAX)
			len = DFG_URING_INLINE_MAX;
		ASSERT_EQ(-EINVAL, cmd_run(self, variant, cmds[i], &buf, len,
					   NULL)) {
			TH_LOG("cmd 0x%08x", cmds[i]);
		}
	}
}

/* A known number with the wrong size is -EINVAL. */
TEST_F(cmd, wrong_size)
{
	static const __u32 cmds[] = {
		_IOWR(DFG_IOC_MAGIC, 0x01, __u64),
		_IOWR(DFG_IOC_MAGIC, 0x01, struct dfg_info),
		_IOC(_IOC_READ | _IOC_WRITE, DFG_IOC_MAGIC, 0x01,
		     sizeof(struct dfg_nop) - 8),
		_IOC(_IOC_READ | _IOC_WRITE, DFG_IOC_MAGIC, 0x01,
		     sizeof(struct dfg_nop) + 8),
		_IOWR(DFG_IOC_MAGIC, 0x00, struct dfg_nop),
		_IOC(_IOC_READ | _IOC_WRITE, DFG_IOC_MAGIC, 0x00,
		     sizeof(struct dfg_info) + 8),
	};

	expect_einval(_metadata, self, variant, cmds, ARRAY_SIZE(cmds));
}

/* A known number with the wrong direction is -EINVAL. */
TEST_F(cmd, wrong_direction)
{
	static const __u32 cmds[] = {
		_IOR(DFG_IOC_MAGIC, 0x01, struct dfg_nop),
		_IOW(DFG_IOC_MAGIC, 0x01, struct dfg_nop),
		_IO(DFG_IOC_MAGIC, 0x01),
		_IOR(DFG_IOC_MAGIC, 0x00, struct dfg_info),
		_IOW(DFG_IOC_MAGIC, 0x00, struct dfg_info),
		_IO(DFG_IOC_MAGIC, 0x00),
	};

	expect_einval(_metadata, self, variant, cmds, ARRAY_SIZE(cmds));
}

/* stats/nop grows by exactly the number of NOPs issued. */
TEST_F(cmd, stats_nop_counts)
{
	const int n = 100;
	struct dfg_nop nop;
	__u64 before, after;
	int i;

	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/nop", &before));
	for (i = 0; i < n; i++) {
		nop = dfg_nop_args(i, 0, 0);
		ASSERT_EQ(0, nop_run(self, variant, &nop, NULL));
	}
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/nop", &after));
	ASSERT_EQ(before + n, after);
}

/* stats/errors grows by one per command that fails, nothing otherwise. */
TEST_F(cmd, stats_errors_counts)
{
	struct dfg_nop nop;
	__u64 before, after;

	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/errors", &before));
	nop = dfg_nop_args(1, 0, 0);
	ASSERT_EQ(0, nop_run(self, variant, &nop, NULL));
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/errors", &after));
	ASSERT_EQ(before, after);

	nop = dfg_nop_args(1, 1U << 5, 0);
	ASSERT_EQ(-EINVAL, nop_run(self, variant, &nop, NULL));
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/errors", &after));
	ASSERT_EQ(before + 1, after);
}

#define NOP_STREAM	100000
#define NOP_BATCH	64

/*
 * 100k NOPs: through io_uring in batches of NOP_BATCH per submit, or one
 * ioctl each. Every CQE has res 0 and the echo; every user_data comes back
 * exactly once; nothing is left over.
 */
TEST_F_TIMEOUT(cmd, nop_100k, 600)
{
	struct dfg_nop args[NOP_BATCH];
	struct io_uring_sqe *sqe;
	unsigned char *seen;
	struct dfg_cqe cqe;
	__u64 id, base, echo, before, after;
	unsigned int i, n, got;
	int ret;

	seen = calloc(NOP_STREAM, 1);
	ASSERT_NE(NULL, seen);
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/nop", &before));

	if (variant->path == DFG_PATH_IOCTL) {
		for (id = 0; id < NOP_STREAM; id++) {
			args[0] = dfg_nop_args(nop_value(id), 0, 0);
			ASSERT_EQ(0, sys_dfg_ioctl(self->fd, DFG_IOC_NOP,
						   &args[0]));
			ASSERT_EQ(nop_value(id), args[0].echo);
		}
		goto out;
	}

	for (base = 0; base < NOP_STREAM; base += n) {
		n = NOP_STREAM - base < NOP_BATCH ? NOP_STREAM - base :
						    NOP_BATCH;
		for (i = 0; i < n; i++) {
			id = base + i;
			args[i] = dfg_nop_args(nop_value(id), 0, 0);
			sqe = cmd_prep(self, variant, DFG_IOC_NOP, &args[i],
				       sizeof(args[i]), id);
			ASSERT_NE(NULL, sqe);
		}
		ret = io_uring_submit_and_wait(&self->ring, n);
		ASSERT_EQ((int)n, ret);
		for (got = 0; got < n; got++) {
			ASSERT_EQ(0, dfg_ring_wait(&self->ring, &cqe, 10000));
			id = cqe.user_data;
			ASSERT_LE(base, id);
			ASSERT_GT(base + n, id) {
				TH_LOG("user_data %llu not in this batch",
				       (unsigned long long)id);
			}
			ASSERT_EQ(0, seen[id]) {
				TH_LOG("user_data %llu twice",
				       (unsigned long long)id);
			}
			seen[id] = 1;
			ASSERT_EQ(0, cqe.res);
			echo = variant->path == DFG_PATH_INLINE ?
				cqe.res2 : args[id - base].echo;
			ASSERT_EQ(nop_value(id), echo);
		}
		/* No CQE beyond the batch. */
		ASSERT_EQ(-EAGAIN, dfg_ring_peek(&self->ring, &cqe));
	}
	for (id = 0; id < NOP_STREAM; id++)
		ASSERT_EQ(1, seen[id]);
out:
	ASSERT_EQ(0, dfg_sysfs_read_u64("stats/nop", &after));
	ASSERT_EQ(before + NOP_STREAM, after);
	free(seen);
}

#define ASYNC_DELAY_MS	50
#define ASYNC_SLACK_MS	2000	/* TCG guests are slow; late is not wrong */

/*
 * ASYNC with a delay: io_uring posts no CQE at submission and one after the
 * delay; ioctl sleeps about that long. The echo arrives either way.
 */
TEST_F(cmd, nop_async_delay)
{
	const __u64 value = 0xa5a5a5a5deadULL;
	struct dfg_nop nop = dfg_nop_args(value, DFG_NOP_F_ASYNC,
					  ASYNC_DELAY_MS);
	struct io_uring_sqe *sqe;
	struct dfg_cqe cqe;
	__u64 start, at_peek, waited;
	int ret;

	start = dfg_now_ns();
	if (variant->path == DFG_PATH_IOCTL) {
		ASSERT_EQ(0, sys_dfg_ioctl(self->fd, DFG_IOC_NOP, &nop));
		waited = dfg_ms_since(start);
		ASSERT_EQ(value, nop.echo);
		ASSERT_LE((__u64)ASYNC_DELAY_MS, waited);
		ASSERT_GT((__u64)ASYNC_DELAY_MS + ASYNC_SLACK_MS, waited);
		return;
	}

	sqe = cmd_prep(self, variant, DFG_IOC_NOP, &nop,
		       sizeof(nop), 7);
	ASSERT_NE(NULL, sqe);
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	ret = dfg_ring_peek(&self->ring, &cqe);
	at_peek = dfg_ms_since(start);
	if (at_peek < ASYNC_DELAY_MS) {
		ASSERT_EQ(-EAGAIN, ret) {
			TH_LOG("CQE (res %d) %llu ms after submit, before the %d ms delay",
			       cqe.res, (unsigned long long)at_peek,
			       ASYNC_DELAY_MS);
		}
		ASSERT_EQ(0, dfg_ring_wait(&self->ring, &cqe, 10000));
	} else {
		TH_LOG("guest too slow (%llu ms to peek); not checking absence",
		       (unsigned long long)at_peek);
		if (ret)
			ASSERT_EQ(0, dfg_ring_wait(&self->ring, &cqe, 10000));
	}
	waited = dfg_ms_since(start);
	ASSERT_EQ(7ULL, cqe.user_data);
	ASSERT_EQ(0, cqe.res);
	ASSERT_LE((__u64)ASYNC_DELAY_MS, waited);
	ASSERT_GT((__u64)ASYNC_DELAY_MS + ASYNC_SLACK_MS, waited);
	if (variant->path == DFG_PATH_INLINE) {
		ASSERT_EQ(value, cqe.res2);
	} else {
		ASSERT_EQ(value, nop.echo);
	}
}

/*
 * ASYNC never completes before its delay, not even by a timer tick.
 * Delays are whole numbers of ticks for HZ 100, 250 and 1000, submitted at
 * varying points between two ticks and timed from before submission:
 * ioctl one at a time, io_uring NEVER_EARLY_N in flight at once.
 */
#define NEVER_EARLY_N	8

TEST_F(cmd, nop_async_never_early)
{
	struct dfg_nop nops[NEVER_EARLY_N];
	struct io_uring_sqe *sqe;
	struct dfg_cqe cqe;
	long long margin_us = 1000000, late_us;
	__u64 start, took_us;
	__u32 delay;
	int round, i;

	for (round = 0; round < 12; round++) {
		/* Submit at varying points between two ticks. */
		usleep(100 + (round * 1370) % 10000);
		if (variant->path == DFG_PATH_IOCTL) {
			delay = (round % 3 + 1) * 20;
			nops[0] = dfg_nop_args(round, DFG_NOP_F_ASYNC, delay);
			start = dfg_now_ns();
			ASSERT_EQ(0, sys_dfg_ioctl(self->fd, DFG_IOC_NOP,
						   &nops[0]));
			took_us = (dfg_now_ns() - start) / 1000;
			late_us = (long long)took_us - delay * 1000LL;
			if (late_us < margin_us)
				margin_us = late_us;
			ASSERT_LE(0LL, late_us) {
				TH_LOG("delay %u ms, returned after %llu us",
				       delay, (unsigned long long)took_us);
			}
			continue;
		}
		/* user_data = delay in ms: 20..160 in a scrambled order */
		for (i = 0; i < NEVER_EARLY_N; i++) {
			delay = 20 * (1 + (i * 3 + round) % NEVER_EARLY_N);
			nops[i] = dfg_nop_args(delay, DFG_NOP_F_ASYNC, delay);
		}
		start = dfg_now_ns();
		for (i = 0; i < NEVER_EARLY_N; i++) {
			sqe = cmd_prep(self, variant, DFG_IOC_NOP, &nops[i],
				       sizeof(nops[i]), nops[i].value);
			ASSERT_NE(NULL, sqe);
		}
		ASSERT_EQ(NEVER_EARLY_N, io_uring_submit(&self->ring));
		for (i = 0; i < NEVER_EARLY_N; i++) {
			ASSERT_EQ(0, dfg_ring_wait(&self->ring, &cqe, 10000));
			took_us = (dfg_now_ns() - start) / 1000;
			ASSERT_EQ(0, cqe.res);
			late_us = (long long)took_us -
				  (long long)cqe.user_data * 1000;
			if (late_us < margin_us)
				margin_us = late_us;
			ASSERT_LE(0LL, late_us) {
				TH_LOG("delay %llu ms, CQE after %llu us",
				       (unsigned long long)cqe.user_data,
				       (unsigned long long)took_us);
			}
		}
	}
	TH_LOG("completed at least %lld us after the delay", margin_us);
}

/* ASYNC with delay 0 is valid and completes. */
TEST_F(cmd, nop_async_zero_delay)
{
	struct dfg_nop nop = dfg_nop_args(99, DFG_NOP_F_ASYNC, 0);
	__u64 echo = 0;

	ASSERT_EQ(0, nop_run(self, variant, &nop, &echo));
	ASSERT_EQ(99ULL, echo);
}

/*
 * Several ASYNC NOPs in flight complete in delay order, not submission
 * order, and a plain NOP submitted after them overtakes them all.
 */
TEST_F(cmd, nop_async_order)
{
	static const __u32 delays[] = { 400, 100, 300, 200 };
	const unsigned int n = ARRAY_SIZE(delays);
	struct dfg_nop nops[5];
	struct io_uring_sqe *sqe;
	struct dfg_cqe cqe;
	__u64 start, waited, last = 0, prev_max = 0, batch_max = 0;
	unsigned int i, seen = 0, batch_left = 0;

	if (variant->path == DFG_PATH_IOCTL)
		SKIP(return, "ioctl is synchronous: one in flight per thread");

	start = dfg_now_ns();
	for (i = 0; i <= n; i++) {
		/* user_data = delay; the last is a plain NOP (delay 0). */
		__u32 delay = i < n ? delays[i] : 0;

		nops[i] = dfg_nop_args(1000 + delay,
				       i < n ? DFG_NOP_F_ASYNC : 0, delay);
		sqe = cmd_prep(self, variant, DFG_IOC_NOP, &nops[i],
			       sizeof(nops[i]), delay);
		ASSERT_NE(NULL, sqe);
	}
	ASSERT_EQ((int)n + 1, io_uring_submit(&self->ring));

	for (i = 0; i <= n; i++) {
		ASSERT_EQ(0, dfg_ring_wait(&self->ring, &cqe, 10000));
		waited = dfg_ms_since(start);
		ASSERT_EQ(0, cqe.res);
		/*
		 * 0, 100, 200, 300, 400 when issued at submission, between
		 * batches: the CQEs one task-work pass posts come together,
		 * and on 6.1 that pass runs its list newest first, so two
		 * timers that both fired while the task was kept off the CPU
		 * (a loaded host stalls the guest) post in reverse. A batch
		 * is what the CQ held when its first CQE was reaped. From
		 * io-wq each delay starts when a worker issues the command,
		 * which the ABI does not time: only "never early" and "each
		 * exactly once" hold there.
		 */
		if (!batch_left) {
			prev_max = batch_max;
			batch_left = io_uring_cq_ready(&self->ring) + 1;
		}
		batch_left--;
		if (!(variant->sqe_flags & IOSQE_ASYNC) && i) {
			ASSERT_LT(prev_max, cqe.user_data) {
				TH_LOG("completion %u (%llu ms) after %llu ms", i,
				       (unsigned long long)cqe.user_data,
				       (unsigned long long)waited);
			}
		}
		if (cqe.user_data > batch_max)
			batch_max = cqe.user_data;
		ASSERT_EQ(0, cqe.user_data % 100);
		ASSERT_GE(4 * 100, cqe.user_data);
		ASSERT_EQ(0, seen & (1U << (cqe.user_data / 100)));
		seen |= 1U << (cqe.user_data / 100);
		ASSERT_LE(cqe.user_data, waited) {
			TH_LOG("delay %llu ms completed after %llu ms: early",
			       (unsigned long long)cqe.user_data,
			       (unsigned long long)waited);
		}
		ASSERT_LE(last, waited);
		last = waited;
		if (variant->path == DFG_PATH_INLINE)
			ASSERT_EQ(1000 + cqe.user_data, cqe.res2);
	}
	if (variant->path == DFG_PATH_INDIRECT)
		for (i = 0; i <= n; i++)
			ASSERT_EQ(nops[i].value, nops[i].echo);
	ASSERT_EQ(-EAGAIN, dfg_ring_peek(&self->ring, &cqe));
}

/* ------------------------------------------------------------------------
 * uring_cmd only: the dfg_uring_cmd area and the ring's flags
 * ------------------------------------------------------------------------
 */

FIXTURE(uring) {
	int fd;
	struct io_uring ring;	/* SQE128 | CQE32 */
};

FIXTURE_SETUP(uring)
{
	int ret;

	self->fd = sys_dfg_open();
	ASSERT_LE(0, self->fd) {
		TH_LOG("open %s: %s (is dfg.ko loaded?)", DFG_DEV_PATH,
		       strerror(-self->fd));
	}
	ret = dfg_ring_init(&self->ring, 64);
	ASSERT_EQ(0, ret) {
		TH_LOG("io_uring SQE128|CQE32: %s", strerror(-ret));
	}
}

FIXTURE_TEARDOWN(uring)
{
	io_uring_queue_exit(&self->ring);
	EXPECT_EQ(0, close(self->fd));
}

/* Submits the one SQE prepared and returns cqe->res (res2 in @res2). */
static int uring_one(struct io_uring *ring, __u64 *res2)
{
	struct dfg_cqe cqe;
	int ret = dfg_ring_submit_wait(ring, &cqe);

	if (ret)
		return ret;
	if (res2)
		*res2 = cqe.res2;
	return cqe.res;
}

/* A NOP with a given dfg_uring_cmd header, inline args = @nop. */
static int uring_nop_hdr(FIXTURE_DATA(uring) *self, const struct dfg_nop *nop,
			 __u32 flags, __u32 len, __u64 addr)
{
	struct io_uring_sqe *sqe;
	struct dfg_uring_cmd *cmd;

	sqe = dfg_prep_inline(&self->ring, self->fd, DFG_IOC_NOP, nop,
			      sizeof(*nop), 1);
	if (!sqe)
		return -EBUSY;
	cmd = dfg_sqe_cmd(sqe);
	cmd->flags = flags;
	cmd->len = len;
	cmd->addr = addr;
	return uring_one(&self->ring, NULL);
}

/* A ring without SQE128 gets -EINVAL, for inline and indirect alike. */
TEST_F(uring, ring_without_sqe128)
{
	struct dfg_nop nop = dfg_nop_args(5, 0, 0);
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct dfg_uring_cmd *cmd;
	int ret;

	ret = dfg_ring_init_flags(&ring, 8, 0, 0);
	ASSERT_EQ(0, ret);

	/* The 64-byte SQE has 16 bytes of cmd: dfg_uring_cmd's header. */
	sqe = dfg_get_cmd_sqe(&ring, self->fd, DFG_IOC_NOP, 1);
	ASSERT_NE(NULL, sqe);
	EXPECT_EQ(-EINVAL, uring_one(&ring, NULL));

	sqe = dfg_get_cmd_sqe(&ring, self->fd, DFG_IOC_NOP, 2);
	ASSERT_NE(NULL, sqe);
	cmd = dfg_sqe_cmd(sqe);
	cmd->flags = DFG_URING_F_INDIRECT;
	cmd->len = sizeof(nop);
	cmd->addr = (__u64)(uintptr_t)&nop;
	EXPECT_EQ(-EINVAL, uring_one(&ring, NULL));
	EXPECT_EQ(0ULL, nop.echo);

	/* CQE32 without SQE128 is no better. */
	io_uring_queue_exit(&ring);
	ret = dfg_ring_init_flags(&ring, 8, IORING_SETUP_CQE32, 0);
	ASSERT_EQ(0, ret);
	sqe = dfg_get_cmd_sqe(&ring, self->fd, DFG_IOC_NOP, 3);
	ASSERT_NE(NULL, sqe);
	cmd = dfg_sqe_cmd(sqe);
	cmd->flags = DFG_URING_F_INDIRECT;
	cmd->len = sizeof(nop);
	cmd->addr = (__u64)(uintptr_t)&nop;
	EXPECT_EQ(-EINVAL, uring_one(&ring, NULL));
	io_uring_queue_exit(&ring);
}

/* SQE128 without CQE32 works; only res2 is missing. */
TEST_F(uring, ring_without_cqe32)
{
	struct dfg_nop nop = dfg_nop_args(5, 0, 0);
	struct io_uring ring;

	ASSERT_EQ(0, dfg_ring_init_flags(&ring, 8, IORING_SETUP_SQE128, 0));
	ASSERT_NE(NULL, dfg_prep_inline(&ring, self->fd, DFG_IOC_NOP, &nop,
					sizeof(nop), 1));
	EXPECT_EQ(0, uring_one(&ring, NULL));
	ASSERT_NE(NULL, dfg_prep_indirect(&ring, self->fd, DFG_IOC_NOP, &nop,
					  sizeof(nop), 2));
	EXPECT_EQ(0, uring_one(&ring, NULL));
	EXPECT_EQ(5ULL, nop.echo);
	io_uring_queue_exit(&ring);
}

/* Unknown dfg_uring_cmd.flags are -EINVAL. */
TEST_F(uring, unknown_cmd_flags)
{
	struct dfg_nop nop = dfg_nop_args(5, 0, 0);

	ASSERT_EQ(-EINVAL, uring_nop_hdr(self, &nop, 1U << 1, 0, 0));
	ASSERT_EQ(-EINVAL, uring_nop_hdr(self, &nop, 1U << 31, 0, 0));
	ASSERT_EQ(-EINVAL, uring_nop_hdr(self, &nop,
					 DFG_URING_F_INDIRECT | (1U << 1),
					 sizeof(nop), (uintptr_t)&nop));
	/* Control: the same NOP with a clean header passes. */
	ASSERT_EQ(0, uring_nop_hdr(self, &nop, 0, 0, 0));
}

/* Inline commands must leave addr and len zero. */
TEST_F(uring, inline_addr_len_nonzero)
{
	struct dfg_nop nop = dfg_nop_args(5, 0, 0);

	ASSERT_EQ(-EINVAL, uring_nop_hdr(self, &nop, 0, 0, (uintptr_t)&nop));
	ASSERT_EQ(-EINVAL, uring_nop_hdr(self, &nop, 0, sizeof(nop), 0));
	ASSERT_EQ(-EINVAL, uring_nop_hdr(self, &nop, 0, 1, 0));
	ASSERT_EQ(-EINVAL, uring_nop_hdr(self, &nop, 0, 0, 1ULL << 63));
}

/* Indirect len must equal _IOC_SIZE(cmd_op). */
TEST_F(uring, indirect_len_mismatch)
{
	static const __u32 lens[] = {
		0, 1, sizeof(struct dfg_nop) - 1, sizeof(struct dfg_nop) + 1,
		DFG_URING_INLINE_MAX, 4096, UINT32_MAX,
	};
	struct dfg_nop nop[4];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		memset(nop, 0, sizeof(nop));
		nop[0].value = 5;
		ASSERT_EQ(-EINVAL, uring_nop_hdr(self, &nop[0],
						 DFG_URING_F_INDIRECT, lens[i],
						 (uintptr_t)nop)) {
			TH_LOG("len %u", lens[i]);
		}
		ASSERT_EQ(0ULL, nop[0].echo);
	}
	ASSERT_EQ(0, uring_nop_hdr(self, &nop[0], DFG_URING_F_INDIRECT,
				   sizeof(nop[0]), (uintptr_t)nop));
	ASSERT_EQ(5ULL, nop[0].echo);
}

/* GET_INFO is too large to travel inline: -EINVAL. */
TEST_F(uring, inline_get_info)
{
	struct dfg_info info = { .size = sizeof(info) };

	ASSERT_NE(NULL, dfg_prep_inline(&self->ring, self->fd,
					DFG_IOC_GET_INFO, &info,
					DFG_URING_INLINE_MAX, 1));
	ASSERT_EQ(-EINVAL, uring_one(&self->ring, NULL));
}

/* Inline bytes past _IOC_SIZE(cmd_op) must be zero. */
TEST_F(uring, inline_trailing_bytes)
{
	struct dfg_nop nop = dfg_nop_args(5, 0, 0);
	struct io_uring_sqe *sqe;
	unsigned int off;
	__u64 res2;

	for (off = sizeof(nop); off < DFG_URING_INLINE_MAX; off++) {
		sqe = dfg_prep_inline(&self->ring, self->fd, DFG_IOC_NOP, &nop,
				      sizeof(nop), off);
		ASSERT_NE(NULL, sqe);
		dfg_sqe_cmd(sqe)->args[off] = off == sizeof(nop) ? 1 : 0x80;
		ASSERT_EQ(-EINVAL, uring_one(&self->ring, NULL)) {
			TH_LOG("byte %u of args nonzero", off);
		}
	}
	/* Control: all zero passes and echoes. */
	ASSERT_NE(NULL, dfg_prep_inline(&self->ring, self->fd, DFG_IOC_NOP,
					&nop, sizeof(nop), 1));
	ASSERT_EQ(0, uring_one(&self->ring, &res2));
	ASSERT_EQ(5ULL, res2);
}

/*
 * A command that succeeds with res 0 and res2 0 is completed by io_uring
 * from ->uring_cmd's return value, with the submit's batch; one with res2
 * is posted by the module. In one linked submit of both kinds every CQE
 * comes, none is a failure that cuts the link, and each carries its own
 * user_data and res2; a failing command still cuts what follows it.
 */
TEST_F(uring, zero_result_batched_and_linked)
{
	struct dfg_nop zero = dfg_nop_args(0, 0, 0);
	struct dfg_nop echo = dfg_nop_args(7, 0, 0);
	struct dfg_nop bad = dfg_nop_args(1, 0x80, 0);
	struct io_uring_sqe *sqe;
	struct dfg_cqe cqe;
	unsigned int i, n = 8;

	for (i = 0; i < n; i++) {
		sqe = dfg_prep_inline(&self->ring, self->fd, DFG_IOC_NOP,
				      i % 2 ? &echo : &zero, sizeof(zero),
				      100 + i);
		ASSERT_NE(NULL, sqe);
		if (i + 1 < n)
			sqe->flags |= IOSQE_IO_LINK;
	}
	ASSERT_EQ((int)n, io_uring_submit(&self->ring));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, dfg_ring_wait(&self->ring, &cqe, 10000));
		/* A linked chain completes in order. */
		ASSERT_EQ(100 + i, cqe.user_data);
		ASSERT_EQ(0, cqe.res);
		ASSERT_EQ(i % 2 ? 7ULL : 0ULL, cqe.res2);
	}
	ASSERT_EQ(-EAGAIN, dfg_ring_peek(&self->ring, &cqe));

	/* zero -> bad -> zero: the error cuts the link after it. */
	for (i = 0; i < 3; i++) {
		sqe = dfg_prep_inline(&self->ring, self->fd, DFG_IOC_NOP,
				      i == 1 ? &bad : &zero, sizeof(zero),
				      200 + i);
		ASSERT_NE(NULL, sqe);
		if (i < 2)
			sqe->flags |= IOSQE_IO_LINK;
	}
	ASSERT_EQ(3, io_uring_submit(&self->ring));
	ASSERT_EQ(0, dfg_ring_wait(&self->ring, &cqe, 10000));
	ASSERT_EQ(200ULL, cqe.user_data);
	ASSERT_EQ(0, cqe.res);
	ASSERT_EQ(0, dfg_ring_wait(&self->ring, &cqe, 10000));
	ASSERT_EQ(201ULL, cqe.user_data);
	ASSERT_EQ(-EINVAL, cqe.res);
	ASSERT_EQ(0, dfg_ring_wait(&self->ring, &cqe, 10000));
	ASSERT_EQ(202ULL, cqe.user_data);
	ASSERT_EQ(-ECANCELED, cqe.res);
	ASSERT_EQ(-EAGAIN, dfg_ring_peek(&self->ring, &cqe));
}

/* An indirect address that cannot be read is -EFAULT. */
TEST_F(uring, indirect_bad_addr)
{
	struct dfg_nop nop = dfg_nop_args(5, 0, 0);
	long page = sysconf(_SC_PAGESIZE);
	void *hole;

	ASSERT_EQ(-EFAULT, uring_nop_hdr(self, &nop, DFG_URING_F_INDIRECT,
					 sizeof(nop), 1));
	ASSERT_EQ(-EFAULT, uring_nop_hdr(self, &nop, DFG_URING_F_INDIRECT,
					 sizeof(nop), 0xffff888000000000ULL));
	/* A page that was mapped and is no longer. */
	hole = mmap(NULL, page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, munmap(hole, page));
	ASSERT_EQ(-EFAULT, uring_nop_hdr(self, &nop, DFG_URING_F_INDIRECT,
					 sizeof(nop), (uintptr_t)hole));
	/* Straddling the end of a mapping into the hole. */
	hole = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, munmap((char *)hole + page, page));
	ASSERT_EQ(-EFAULT, uring_nop_hdr(self, &nop, DFG_URING_F_INDIRECT,
					 sizeof(nop),
					 (uintptr_t)hole + page - 8));
	munmap(hole, page);
}

/* An indirect struct that can be read but not written back is -EFAULT. */
TEST_F(uring, indirect_readonly)
{
	long page = sysconf(_SC_PAGESIZE);
	struct dfg_nop *nop;

	nop = mmap(NULL, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, nop);
	*nop = dfg_nop_args(5, 0, 0);
	ASSERT_EQ(0, mprotect(nop, page, PROT_READ));
	ASSERT_EQ(-EFAULT, uring_nop_hdr(self, nop, DFG_URING_F_INDIRECT,
					 sizeof(*nop), (uintptr_t)nop));
	munmap(nop, page);
}

/* ------------------------------------------------------------------------
 * ioctl only: argument pointers
 * ------------------------------------------------------------------------
 */

/* ioctl with a pointer that cannot be read is -EFAULT. */
TEST(ioctl_bad_pointer)
{
	int fd = sys_dfg_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EFAULT, sys_dfg_ioctl(fd, DFG_IOC_NOP, (void *)1));
	ASSERT_EQ(-EFAULT, sys_dfg_ioctl(fd, DFG_IOC_NOP, NULL));
	ASSERT_EQ(-EFAULT, sys_dfg_ioctl(fd, DFG_IOC_GET_INFO, (void *)1));
	ASSERT_EQ(-EFAULT, sys_dfg_ioctl(fd, DFG_IOC_GET_INFO, NULL));
	ASSERT_EQ(-EFAULT, sys_dfg_ioctl(fd, DFG_IOC_NOP,
					 (void *)0xffff888000000000ULL));
	close(fd);
}

/* ioctl whose struct cannot be written back is -EFAULT. */
TEST(ioctl_readonly)
{
	long page = sysconf(_SC_PAGESIZE);
	struct dfg_nop *nop;
	struct dfg_info *info;
	char *mem;
	int fd = sys_dfg_open();

	ASSERT_LE(0, fd);
	mem = mmap(NULL, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	nop = (struct dfg_nop *)mem;
	info = (struct dfg_info *)(mem + 256);
	*nop = dfg_nop_args(5, 0, 0);
	info->size = sizeof(*info);
	ASSERT_EQ(0, mprotect(mem, page, PROT_READ));
	ASSERT_EQ(-EFAULT, sys_dfg_ioctl(fd, DFG_IOC_NOP, nop));
	ASSERT_EQ(-EFAULT, sys_dfg_ioctl(fd, DFG_IOC_GET_INFO, info));
	munmap(mem, page);
	close(fd);
}

TEST_HARNESS_MAIN
