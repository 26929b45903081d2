// SPDX-License-Identifier: GPL-2.0
/*
 * Seeded random command fuzzer for the whole dfg command table.
 *
 * Forked workers, two at a time, each run a chunk of iterations from their
 * own seed (DFG_FUZZ_SEED ^ chunk). An iteration picks a target descriptor
 * from a pool (/dev/dfg, graph, endpoint, team member and scheduler
 * descriptors the fuzzer made, dups of them, a just-closed number,
 * /dev/null, a pipe, the ring itself) and a command value (mostly one of
 * the header's DFG_IOC_*, including regions, channels, teams and the set
 * scheduler; sometimes a random nr/size/direction with our magic;
 * sometimes another magic), fills the argument struct with random bytes
 * or with valid values and one corrupted field (reserved nonzero,
 * huge lengths, offsets near 2^64, ids of another graph's objects, bad
 * addresses), places it (normal buffer, NULL, unmapped, kernel address,
 * read-only page, straddling a guard page) and issues it over ioctl,
 * uring inline, uring indirect or either of those with IOSQE_ASYNC. Other
 * iterations mmap descriptors at random offsets, lengths and protections
 * (pages touched in a child: SIGBUS/SIGSEGV stay there), munmap, close,
 * dup, and fork children that issue commands and exit.
 *
 * Nothing may block forever: NOP PARK, long NOP ASYNC, CHAN_WAIT,
 * TEAM_WAIT without a short timeout and SCHED_NEXT without NOWAIT only
 * go through io_uring, where the worker leaves them parked; the kernel
 * must cancel them when the worker exits. Every uring wait has a timeout
 * and every worker a deadline.
 *
 * Pass: every result is >= 0 or an errno of the ABI's documented set
 * (ENOTTY only on descriptors that are not dfg's), the table's own rules
 * hold (unknown nr: -EOPNOTSUPP; known nr, wrong size/direction: -EINVAL;
 * command for the other kind of dfg file: -EBADFD), no worker hangs, and
 * afterwards parked, clients and pages are 0 and graphs/ is empty. The
 * kernel log is checked by the VM runner.
 *
 * Environment: DFG_FUZZ_SEED (default: time), DFG_FUZZ_COUNT (iterations,
 * default 100000), DFG_FUZZ_CHUNK (per worker, default 5000),
 * DFG_FUZZ_JOBS (workers at a time, default 2).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dfg_sys.h"
#include "../chan/chan.h"
#include "kselftest_harness.h"

#define PAGE		4096UL

#define POOL_MAX	40
#define OBJ_MAX		64
#define MAP_MAX		16
#define PEND_MAX	512
#define BAD_MAX		32
#define ERRNO_MAX	134
#define WORKER_DEADLINE_MS	150000
#define CQE_TIMEOUT_MS		5000
#define PARK_TIMEOUT_MS		20

/* ------------------------------------------------------------------------
 * Argument structs: fields and what is wrong for each kind of field
 * ------------------------------------------------------------------------
 */

enum fkind {
	F_SIZE,		/* leading size field */
	F_FLAGS,
	F_RSV,		/* must be zero */
	F_OUT,		/* output, zero on input */
	F_ID,		/* object id */
	F_LEN,
	F_OFF,
	F_ADDR,		/* user pointer */
	F_NAME,
	F_VAL,		/* anything goes */
	F_MODE,
	F_DEPTH,
	F_NPROD,
	F_ROLE,
	F_DELAY,
	F_COUNT,	/* number of array elements */
};

struct field {
	unsigned short	off;
	unsigned char	size;
	unsigned char	kind;
};

#define FLD(type, member, kind) \
	{ offsetof(type, member), sizeof(((type *)0)->member), kind }

static const struct field info_f[] = {
	FLD(struct dfg_info, size, F_SIZE),
	FLD(struct dfg_info, api_version, F_OUT),
	FLD(struct dfg_info, features, F_OUT),
	FLD(struct dfg_info, version, F_OUT),
	FLD(struct dfg_info, reserved, F_RSV),
};

static const struct field nop_f[] = {
	FLD(struct dfg_nop, value, F_VAL),
	FLD(struct dfg_nop, echo, F_OUT),
	FLD(struct dfg_nop, flags, F_FLAGS),
	FLD(struct dfg_nop, delay_ms, F_DELAY),
	FLD(struct dfg_nop, reserved, F_RSV),
};

static const struct field gopen_f[] = {
	FLD(struct dfg_graph_open, size, F_SIZE),
	FLD(struct dfg_graph_open, flags, F_FLAGS),
	FLD(struct dfg_graph_open, mode, F_MODE),
	FLD(struct dfg_graph_open, reserved0, F_RSV),
	FLD(struct dfg_graph_open, name, F_NAME),
	FLD(struct dfg_graph_open, reserved, F_RSV),
};

static const struct field ginfo_f[] = {
	FLD(struct dfg_graph_info, size, F_SIZE),
	FLD(struct dfg_graph_info, id, F_OUT),
	FLD(struct dfg_graph_info, pages, F_OUT),
	FLD(struct dfg_graph_info, name, F_OUT),
	FLD(struct dfg_graph_info, reserved0, F_RSV),
	FLD(struct dfg_graph_info, reserved, F_RSV),
};

static const struct field arena_f[] = {
	FLD(struct dfg_arena_create, size, F_LEN),
	FLD(struct dfg_arena_create, flags, F_FLAGS),
	FLD(struct dfg_arena_create, id, F_OUT),
	FLD(struct dfg_arena_create, mmap_offset, F_OUT),
	FLD(struct dfg_arena_create, reserved, F_RSV),
};

static const struct field region_f[] = {
	FLD(struct dfg_region, addr, F_ADDR),
	FLD(struct dfg_region, len, F_LEN),
	FLD(struct dfg_region, flags, F_FLAGS),
	FLD(struct dfg_region, id, F_ID),
	FLD(struct dfg_region, mmap_offset, F_OUT),
	FLD(struct dfg_region, reserved, F_RSV),
};

static const struct field rcopy_f[] = {
	FLD(struct dfg_region_copy, id, F_ID),
	FLD(struct dfg_region_copy, flags, F_FLAGS),
	FLD(struct dfg_region_copy, offset, F_OFF),
	FLD(struct dfg_region_copy, len, F_LEN),
	FLD(struct dfg_region_copy, addr, F_ADDR),
	FLD(struct dfg_region_copy, reserved, F_RSV),
};

static const struct field ccreate_f[] = {
	FLD(struct dfg_chan_create, pool, F_ID),
	FLD(struct dfg_chan_create, depth, F_DEPTH),
	FLD(struct dfg_chan_create, max_producers, F_NPROD),
	FLD(struct dfg_chan_create, flags, F_FLAGS),
	FLD(struct dfg_chan_create, id, F_OUT),
	FLD(struct dfg_chan_create, reserved0, F_RSV),
	FLD(struct dfg_chan_create, map_size, F_OUT),
	FLD(struct dfg_chan_create, reserved, F_RSV),
};

static const struct field copen_f[] = {
	FLD(struct dfg_chan_open, id, F_ID),
	FLD(struct dfg_chan_open, role, F_ROLE),
	FLD(struct dfg_chan_open, flags, F_FLAGS),
	FLD(struct dfg_chan_open, slot, F_OUT),
	FLD(struct dfg_chan_open, reserved, F_RSV),
};

static const struct field cwait_f[] = {
	FLD(struct dfg_chan_wait, flags, F_FLAGS),
	FLD(struct dfg_chan_wait, events, F_OUT),
	FLD(struct dfg_chan_wait, reserved, F_RSV),
};

static const struct field tjoin_f[] = {
	FLD(struct dfg_team_join, size, F_SIZE),
	FLD(struct dfg_team_join, flags, F_FLAGS),
	FLD(struct dfg_team_join, name, F_NAME),
	FLD(struct dfg_team_join, team_size, F_NPROD),
	FLD(struct dfg_team_join, rank, F_VAL),
	FLD(struct dfg_team_join, ctl_size, F_LEN),
	FLD(struct dfg_team_join, id, F_OUT),
	FLD(struct dfg_team_join, reserved0, F_RSV),
	FLD(struct dfg_team_join, map_size, F_OUT),
	FLD(struct dfg_team_join, reserved, F_RSV),
};

static const struct field twait_f[] = {
	FLD(struct dfg_team_wait, offset, F_OFF),
	FLD(struct dfg_team_wait, value, F_VAL),
	FLD(struct dfg_team_wait, flags, F_FLAGS),
	FLD(struct dfg_team_wait, timeout_ns, F_VAL),
	FLD(struct dfg_team_wait, reserved, F_RSV),
};

static const struct field twake_f[] = {
	FLD(struct dfg_team_wake, offset, F_OFF),
	FLD(struct dfg_team_wake, flags, F_FLAGS),
	FLD(struct dfg_team_wake, reserved0, F_RSV),
	FLD(struct dfg_team_wake, reserved, F_RSV),
};

static const struct field tleave_f[] = {
	FLD(struct dfg_team_leave, flags, F_FLAGS),
	FLD(struct dfg_team_leave, reserved0, F_RSV),
	FLD(struct dfg_team_leave, reserved, F_RSV),
};

static const struct field sattach_f[] = {
	FLD(struct dfg_sched_attach, flags, F_FLAGS),
	FLD(struct dfg_sched_attach, reserved0, F_RSV),
	FLD(struct dfg_sched_attach, reserved, F_RSV),
};

static const struct field sreg_f[] = {
	FLD(struct dfg_set_register, size, F_SIZE),
	FLD(struct dfg_set_register, flags, F_FLAGS),
	FLD(struct dfg_set_register, priority, F_VAL),
	FLD(struct dfg_set_register, nr_comps, F_COUNT),
	FLD(struct dfg_set_register, nr_inputs, F_COUNT),
	FLD(struct dfg_set_register, nr_outputs, F_COUNT),
	FLD(struct dfg_set_register, inputs, F_ADDR),
	FLD(struct dfg_set_register, outputs, F_ADDR),
	FLD(struct dfg_set_register, comp_names, F_ADDR),
	FLD(struct dfg_set_register, cpumask, F_VAL),
	FLD(struct dfg_set_register, quantum, F_LEN),
	FLD(struct dfg_set_register, id, F_OUT),
	FLD(struct dfg_set_register, reserved0, F_RSV),
	FLD(struct dfg_set_register, mmap_offset, F_OUT),
	FLD(struct dfg_set_register, name, F_NAME),
	FLD(struct dfg_set_register, reserved, F_RSV),
};

static const struct field setid_f[] = {
	FLD(struct dfg_set_id, id, F_ID),
	FLD(struct dfg_set_id, reserved0, F_RSV),
	FLD(struct dfg_set_id, reserved, F_RSV),
};

static const struct field snext_f[] = {
	FLD(struct dfg_sched_next, flags, F_FLAGS),
	FLD(struct dfg_sched_next, cpu, F_VAL),
	FLD(struct dfg_sched_next, yield_id, F_ID),
	FLD(struct dfg_sched_next, yield_reason, F_VAL),
	FLD(struct dfg_sched_next, id, F_OUT),
	FLD(struct dfg_sched_next, reserved0, F_RSV),
	FLD(struct dfg_sched_next, quantum, F_OUT),
	FLD(struct dfg_sched_next, reserved, F_RSV),
};

static const struct field syield_f[] = {
	FLD(struct dfg_sched_yield, id, F_ID),
	FLD(struct dfg_sched_yield, reason, F_VAL),
	FLD(struct dfg_sched_yield, reserved, F_RSV),
};

static const struct field fbset_f[] = {
	FLD(struct dfg_feedback_set, what, F_VAL),
	FLD(struct dfg_feedback_set, object, F_ID),
	FLD(struct dfg_feedback_set, high, F_VAL),
	FLD(struct dfg_feedback_set, low, F_VAL),
	FLD(struct dfg_feedback_set, stall_ms, F_VAL),
	FLD(struct dfg_feedback_set, period_ms, F_VAL),
	FLD(struct dfg_feedback_set, generation, F_VAL),
	FLD(struct dfg_feedback_set, reserved, F_RSV),
};
static const struct field pload_f[] = {
	FLD(struct dfg_part_load, addr, F_ADDR),
	FLD(struct dfg_part_load, len, F_LEN),
	FLD(struct dfg_part_load, flags, F_FLAGS),
	FLD(struct dfg_part_load, reserved, F_RSV),
};
static const struct field padd_f[] = {
	FLD(struct dfg_peer_add, family, F_VAL),
	FLD(struct dfg_peer_add, port, F_VAL),
	FLD(struct dfg_peer_add, timeout_ms, F_DELAY),
	FLD(struct dfg_peer_add, addr, F_VAL),
	FLD(struct dfg_peer_add, id, F_OUT),
	FLD(struct dfg_peer_add, flags, F_FLAGS),
	FLD(struct dfg_peer_add, node_first, F_OUT),
	FLD(struct dfg_peer_add, node_count, F_OUT),
	FLD(struct dfg_peer_add, reserved, F_RSV),
};
static const struct field pf_f[] = {
	FLD(struct dfg_prefetch, ids, F_ADDR),
	FLD(struct dfg_prefetch, out, F_ADDR),
	FLD(struct dfg_prefetch, nr, F_COUNT),
	FLD(struct dfg_prefetch, what, F_VAL),
	FLD(struct dfg_prefetch, flags, F_FLAGS),
	FLD(struct dfg_prefetch, reserved, F_RSV),
};

/* Which kind of descriptor a command is meant for. */
enum tkind { T_DEV, T_GRAPH, T_EP, T_TEAM, T_SCHED, T_OTHER };

/* Object kinds, for ids. */
enum okind { O_ARENA, O_REGION, O_CHAN, O_SET };

struct cmd_desc {
	const char		*name;
	__u32			cmd;
	enum tkind		target;
	__u64			feature;	/* DFG_F_* that implements it */
	const struct field	*f;
	unsigned int		nf;
};

#define CMD(id, t, feat, fl) \
	{ #id, DFG_IOC_##id, t, feat, fl, ARRAY_SIZE(fl) }

/* Every command of uapi/linux/dfg.h. */
static const struct cmd_desc cmds[] = {
	CMD(GET_INFO, T_DEV, 0, info_f),
	CMD(NOP, T_DEV, 0, nop_f),
	CMD(GRAPH_CREATE, T_DEV, DFG_F_GRAPH, gopen_f),
	CMD(GRAPH_ATTACH, T_DEV, DFG_F_GRAPH, gopen_f),
	CMD(GRAPH_INFO, T_GRAPH, DFG_F_GRAPH, ginfo_f),
	CMD(ARENA_CREATE, T_GRAPH, DFG_F_GRAPH, arena_f),
	CMD(REGION_EXPORT, T_GRAPH, DFG_F_REGION, region_f),
	CMD(REGION_UNEXPORT, T_GRAPH, DFG_F_REGION, region_f),
	CMD(REGION_COPY, T_GRAPH, DFG_F_REGION, rcopy_f),
	CMD(CHAN_CREATE, T_GRAPH, DFG_F_CHAN, ccreate_f),
	CMD(CHAN_OPEN, T_GRAPH, DFG_F_CHAN, copen_f),
	CMD(CHAN_WAIT, T_EP, DFG_F_CHAN, cwait_f),
	CMD(CHAN_WAKE, T_EP, DFG_F_CHAN, cwait_f),
	CMD(TEAM_JOIN, T_GRAPH, DFG_F_TEAM, tjoin_f),
	CMD(TEAM_WAIT, T_TEAM, DFG_F_TEAM, twait_f),
	CMD(TEAM_WAKE, T_TEAM, DFG_F_TEAM, twake_f),
	CMD(TEAM_LEAVE, T_TEAM, DFG_F_TEAM, tleave_f),
	CMD(SCHED_ATTACH, T_GRAPH, DFG_F_SCHED, sattach_f),
	CMD(SET_REGISTER, T_SCHED, DFG_F_SCHED, sreg_f),
	CMD(SET_UNREGISTER, T_SCHED, DFG_F_SCHED, setid_f),
	CMD(SCHED_NEXT, T_SCHED, DFG_F_SCHED, snext_f),
	CMD(SCHED_YIELD, T_SCHED, DFG_F_SCHED, syield_f),
	CMD(FEEDBACK_SET, T_GRAPH, DFG_F_FEEDBACK, fbset_f),
	CMD(PART_LOAD, T_DEV, DFG_F_PREFETCH, pload_f),
	CMD(PEER_ADD, T_DEV, DFG_F_PREFETCH, padd_f),
	CMD(PREFETCH, T_DEV, DFG_F_PREFETCH, pf_f),
};

#define NCMDS		ARRAY_SIZE(cmds)
#define S_RANDNR	(NCMDS)		/* our magic, not a header value */
#define S_MAGIC		(NCMDS + 1)	/* another magic */
#define S_MMAP		(NCMDS + 2)	/* mmap(2) of a pool descriptor */
#define NSLOTS		(NCMDS + 3)

/* Histogram columns: 0 = ok, 1..ERRNO_MAX-1 = errno, then these. */
#define R_PENDING	ERRNO_MAX	/* still parked when the worker left */
#define R_OTHER		(ERRNO_MAX + 1)
#define NRES		(ERRNO_MAX + 2)

static const char * const slot_extra[] = { "rand-nr", "other-magic", "mmap" };

static const char *slot_name(unsigned int s)
{
	return s < NCMDS ? cmds[s].name : slot_extra[s - NCMDS];
}

/* The documented errno set. ENOTTY: only for descriptors not dfg's. */
static bool errno_documented(int e)
{
	switch (e) {
	case EINVAL: case EOPNOTSUPP: case EFAULT: case EBADFD: case EACCES:
	case ENOENT: case EEXIST: case ENOSPC: case EBUSY: case EPIPE:
	case EFBIG: case ENOMEM: case EAGAIN: case ERANGE: case ECANCELED:
	case EINTR: case ENAMETOOLONG: case EBADF: case EPROTO:
	case EADDRINUSE: case EOWNERDEAD: case ENOTCONN: case ETIMEDOUT:
	case ENODATA: case ETIME: case EIO:
	/* the prefetch's transport and peers */
	case ENODEV: case EHOSTUNREACH: case ENETUNREACH: case ECONNREFUSED:
	case E2BIG:
		return true;
	}
	return false;
}

enum path { P_IOCTL, P_INLINE, P_INDIRECT, P_INLINE_ASYNC,
	    P_INDIRECT_ASYNC, NPATHS };

static const char * const path_names[] = {
	"ioctl", "uring-inline", "uring-indirect", "uring-inline-async",
	"uring-indirect-async",
};

enum fdkind { K_DEV, K_GRAPH, K_EP, K_CLOSED, K_NULL, K_PIPE, K_RING,
	      K_TEAM, K_SCHED };

static const char * const kind_names[] = {
	"dev", "graph", "endpoint", "closed", "devnull", "pipe", "ring",
	"team", "sched",
};

static bool kind_is_dfg(enum fdkind k)
{
	return k == K_DEV || k == K_GRAPH || k == K_EP || k == K_TEAM ||
	       k == K_SCHED;
}

/* ------------------------------------------------------------------------
 * Shared state: histogram and failures, in MAP_SHARED memory
 * ------------------------------------------------------------------------
 */

struct bad {
	__u32	cmd;
	__s32	res;
	__u32	path;
	__u32	kind;
	__u32	chunk;
	__u32	iter;
	char	why[48];
	__u8	args[64];
	__u32	args_len;
};

enum { OP_CLOSE, OP_DUP, OP_FORK, OP_MUNMAP, OP_TOUCH, OP_TOUCH_SIG,
       OP_CMDS, OP_NOPOOL, OP_FORK_KILL, OP_RING, OP_WORKER_KILL,
       OP_PARAM, NOPS };

static const char * const op_names[] = {
	"close", "dup", "fork+exit", "munmap", "touched", "touch-signal",
	"commands", "skipped", "fork+kill", "ring-teardown", "worker-kill",
	"param-write",
};

struct shared {
	__u64		hist[NSLOTS][NRES];
	__u64		ops[NOPS];	/* close, dup, fork, munmap, touch... */
	__u64		nbad;
	struct bad	bad[BAD_MAX];
};

static struct shared *sh;

static void count(unsigned int slot, unsigned int col)
{
	__atomic_fetch_add(&sh->hist[slot][col], 1, __ATOMIC_RELAXED);
}

static void count_op(unsigned int op)
{
	__atomic_fetch_add(&sh->ops[op], 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------
 * Worker state
 * ------------------------------------------------------------------------
 */

struct pool_fd {
	int		fd;
	enum fdkind	kind;
	__u32		graph;		/* K_GRAPH, K_SCHED: module graph id */
	__u64		map_size;	/* K_EP, K_TEAM: mapping size */
};

struct obj {
	__u32		graph;
	__u32		id;
	enum okind	kind;
	__u64		size;
};

struct mapping {
	void		*addr;
	size_t		len;
	int		prot;
};

struct pend {
	__u64		ud;
	unsigned int	slot;
};

struct worker {
	__u64		rng;
	unsigned int	chunk;
	unsigned int	iter;
	__u64		features;
	struct io_uring	ring;
	bool		have_ring;
	__u64		next_ud;
	struct pool_fd	pool[POOL_MAX];
	unsigned int	npool;
	struct obj	objs[OBJ_MAX];
	unsigned int	nobj;
	struct mapping	maps[MAP_MAX];
	unsigned int	nmap;
	struct pend	pend[PEND_MAX];
	unsigned int	npend;
	__u8		*argbuf;	/* 4 pages + PROT_NONE guard */
	__u8		*ropage;	/* PROT_READ */
	__u8		*unmapped;	/* PROT_NONE */
	__u8		*rbuf;		/* 32 pages for regions */
	__u8		*sbuf;		/* 2 pages: a set's arrays */
	__u32		run_graph;	/* the set SCHED_NEXT last gave us */
	__u32		run_id;
};

static __u64 rnd(struct worker *w)
{
	/* xorshift64* */
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * 0x2545F4914F6CDD1DULL;
}

static __u32 below(struct worker *w, __u32 n)
{
	return n ? (__u32)(rnd(w) % n) : 0;
}

static bool chance(struct worker *w, unsigned int pct)
{
	return below(w, 100) < pct;
}

static void fill_random(struct worker *w, void *buf, size_t len)
{
	__u8 *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (__u8)rnd(w);
}

static void record_bad(struct worker *w, __u32 cmd, int res, enum path path,
		       enum fdkind kind, const char *why, const void *args,
		       size_t len)
{
	__u64 n = __atomic_fetch_add(&sh->nbad, 1, __ATOMIC_RELAXED);
	struct bad *b;

	if (n >= BAD_MAX)
		return;
	b = &sh->bad[n];
	b->cmd = cmd;
	b->res = res;
	b->path = path;
	b->kind = kind;
	b->chunk = w->chunk;
	b->iter = w->iter;
	snprintf(b->why, sizeof(b->why), "%s", why);
	if (args) {
		b->args_len = len < sizeof(b->args) ? len : sizeof(b->args);
		memcpy(b->args, args, b->args_len);
	}
}

static unsigned int slot_of(__u32 cmd)
{
	unsigned int i;

	for (i = 0; i < NCMDS; i++)
		if (cmds[i].cmd == cmd)
			return i;
	return _IOC_TYPE(cmd) == DFG_IOC_MAGIC ? S_RANDNR : S_MAGIC;
}

/* The header command with the same nr as @cmd (our magic), or NULL. */
static const struct cmd_desc *desc_of_nr(__u32 cmd)
{
	unsigned int i;

	for (i = 0; i < NCMDS; i++)
		if (_IOC_NR(cmds[i].cmd) == _IOC_NR(cmd))
			return &cmds[i];
	return NULL;
}

/*
 * Checks one result against the documented errno set and the command
 * table's rules, counts it in the histogram.
 */
static void check_result(struct worker *w, __u32 cmd, int res, enum path path,
			 enum fdkind kind, const void *args, size_t len)
{
	unsigned int slot = slot_of(cmd);
	const struct cmd_desc *d;
	int e = -res;
	int want = 0;

	count(slot, res >= 0 ? 0 : e < ERRNO_MAX ? (unsigned int)e : R_OTHER);
	if (res < 0 &&
	    (e == ENOTTY ? kind_is_dfg(kind) : !errno_documented(e))) {
		record_bad(w, cmd, res, path, kind, "undocumented errno",
			   args, len);
		return;
	}
	/* /dev/null completes any uring_cmd with 0 (uring_cmd_null) */
	if (res >= 0 && !kind_is_dfg(kind) &&
	    !(kind == K_NULL && path != P_IOCTL)) {
		record_bad(w, cmd, res, path, kind, "success on a foreign fd",
			   args, len);
		return;
	}
	/* The table's rules, on /dev/dfg and graph descriptors. */
	if (kind != K_DEV && kind != K_GRAPH)
		return;
	if (_IOC_TYPE(cmd) != DFG_IOC_MAGIC) {
		want = EOPNOTSUPP;
	} else {
		d = desc_of_nr(cmd);
		if (!d || (d->feature && !(w->features & d->feature)))
			want = EOPNOTSUPP;
		else if (d->cmd != cmd)
			want = EINVAL;
		else if (d->target != (kind == K_DEV ? T_DEV : T_GRAPH))
			want = EBADFD;
	}
	if (want && (res >= 0 || e != want)) {
		char why[48];

		snprintf(why, sizeof(why), "table rule: want %s",
			 strerrorname_np(want));
		record_bad(w, cmd, res, path, kind, why, args, len);
	}
}

/* ------------------------------------------------------------------------
 * The pool of descriptors and objects
 * ------------------------------------------------------------------------
 */

static __u32 graph_id_of(int fd)
{
	struct dfg_graph_info gi = { .size = sizeof(gi) };

	if (ioctl(fd, DFG_IOC_GRAPH_INFO, &gi) < 0)
		return ~0U;
	return gi.id;
}

static void pool_drop(struct worker *w, unsigned int i)
{
	close(w->pool[i].fd);
	w->pool[i] = w->pool[--w->npool];
}

/* @graph: of a K_SCHED (a K_GRAPH asks the module). */
static void pool_add(struct worker *w, int fd, enum fdkind kind,
		     __u64 map_size, __u32 graph)
{
	struct pool_fd *p;

	if (w->npool == POOL_MAX)
		pool_drop(w, 6 + below(w, POOL_MAX - 6));
	p = &w->pool[w->npool++];
	p->fd = fd;
	p->kind = kind;
	p->map_size = map_size;
	p->graph = kind == K_GRAPH ? graph_id_of(fd) :
		   kind == K_SCHED ? graph : ~0U;
}

static void obj_add(struct worker *w, __u32 graph, __u32 id, enum okind kind,
		    __u64 size)
{
	struct obj *o;

	if (w->nobj == OBJ_MAX)
		w->objs[below(w, OBJ_MAX)] = w->objs[--w->nobj];
	o = &w->objs[w->nobj++];
	o->graph = graph;
	o->id = id;
	o->kind = kind;
	o->size = size;
}

/* An object of @kind, preferably in @graph (or another, on request). */
static struct obj *obj_pick(struct worker *w, __u32 graph, int kind,
			    bool other_graph)
{
	unsigned int i, start = below(w, w->nobj ? w->nobj : 1);

	for (i = 0; i < w->nobj; i++) {
		struct obj *o = &w->objs[(start + i) % w->nobj];

		if ((kind < 0 || o->kind == (enum okind)kind) &&
		    (o->graph == graph) != other_graph)
			return o;
	}
	return NULL;
}

static struct pool_fd *pool_pick(struct worker *w, int kind)
{
	unsigned int i, start;

	if (!w->npool)
		return NULL;
	start = below(w, w->npool);
	for (i = 0; i < w->npool; i++) {
		struct pool_fd *p = &w->pool[(start + i) % w->npool];

		if (kind < 0 || p->kind == (enum fdkind)kind)
			return p;
	}
	return NULL;
}

/* ------------------------------------------------------------------------
 * Argument generation
 * ------------------------------------------------------------------------
 */

static void put_field(void *args, const struct field *f, __u64 v)
{
	__u8 *p = (__u8 *)args + f->off;

	switch (f->size) {
	case 4: {
		__u32 x = (__u32)v;

		memcpy(p, &x, 4);
		break;
	}
	case 8:
		memcpy(p, &v, 8);
		break;
	default: {
		/* arrays (reserved, names): one random element */
		memset(p, 0, f->size);
		memcpy(p + (f->size / 8 ? 8 * (v % (f->size / 8)) : 0), &v,
		       f->size >= 8 ? 8 : f->size);
		break;
	}
	}
}

/* Never mapped (below mmap_min_addr), or mapped PROT_NONE. */
static void *unmapped(struct worker *w)
{
	if (chance(w, 50))
		return w->unmapped;
	return (void *)(uintptr_t)(PAGE * (1 + below(w, 14)) + below(w, 64));
}

static __u64 bad_addr(struct worker *w)
{
	static const __u64 fixed[] = {
		0, 0xffffffff81000000ULL, 0xffff888000000000ULL,
		0xfffffffffffff000ULL, 0x8000000000000000ULL, 1,
	};

	switch (below(w, 4)) {
	case 0:
		return fixed[below(w, ARRAY_SIZE(fixed))];
	case 1:
		return (__u64)(uintptr_t)unmapped(w);
	case 2:
		return (__u64)(uintptr_t)w->ropage;
	default:
		return (__u64)(uintptr_t)(w->rbuf + 1 + below(w, 64));
	}
}

static __u64 bad_value(struct worker *w, const struct field *f, __u32 graph)
{
	static const __u64 huge[] = {
		~0ULL, 1ULL << 63, ~0ULL - PAGE + 1, 0xffffffffULL,
		0x100000000ULL, ~0ULL - 1,
	};
	struct obj *o;

	switch (f->kind) {
	case F_SIZE:
		switch (below(w, 4)) {
		case 0: return 0;
		case 1: return ~0ULL;
		default: return below(w, 512);
		}
	case F_FLAGS:
		return chance(w, 50) ? 1ULL << below(w, 32) : rnd(w);
	case F_ID:
		o = obj_pick(w, graph, -1, true);
		if (o && chance(w, 60))
			return o->id;
		return chance(w, 50) ? below(w, 80) : rnd(w);
	case F_LEN:
	case F_OFF:
		return chance(w, 70) ? huge[below(w, ARRAY_SIZE(huge))] :
				       below(w, 3 * PAGE);
	case F_ADDR:
		return bad_addr(w);
	case F_MODE:
		return chance(w, 50) ? 01000 + below(w, 07000) : rnd(w);
	case F_DEPTH:
		return chance(w, 50) ? below(w, 4) * 3 + 3 :
		       (DFG_CHAN_DEPTH_MAX << below(w, 3)) + below(w, 2);
	case F_NPROD:
		return chance(w, 50) ? 0 : DFG_CHAN_PRODUCERS_MAX + 1 +
					   below(w, 100000);
	case F_ROLE:
		return chance(w, 50) ? 0 : 3 + below(w, 100);
	case F_DELAY:
		return DFG_NOP_DELAY_MAX_MS + 1 + below(w, 100);
	case F_COUNT:
		switch (below(w, 4)) {
		case 0: return 0;
		case 1: return DFG_SET_PORTS_MAX + 1;
		case 2: return DFG_SET_COMPS_MAX + 1 + below(w, 1000);
		default: return rnd(w);
		}
	default:	/* F_RSV, F_OUT, F_VAL */
		return rnd(w) | 1;
	}
}

static const char name_chars[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";

static void gen_name(struct worker *w, char *name, bool bad)
{
	unsigned int i, n;

	memset(name, 0, DFG_NAME_MAX);
	if (!bad) {
		/* few names: creators collide, attachers find them */
		snprintf(name, DFG_NAME_MAX, "fz%u", below(w, 12));
		return;
	}
	switch (below(w, 5)) {
	case 0:		/* empty */
		break;
	case 1:		/* no NUL */
		for (i = 0; i < DFG_NAME_MAX; i++)
			name[i] = name_chars[below(w, sizeof(name_chars) - 1)];
		break;
	case 2:		/* longest valid */
		for (i = 0; i < DFG_NAME_MAX - 1; i++)
			name[i] = name_chars[below(w, sizeof(name_chars) - 1)];
		break;
	case 3:		/* bad characters */
		snprintf(name, DFG_NAME_MAX, "fz/%c..\n", (char)rnd(w));
		break;
	default:	/* random bytes */
		n = 1 + below(w, DFG_NAME_MAX - 1);
		fill_random(w, name, n);
		break;
	}
}

/*
 * A set of a few components on channels of @graph, mostly ROOT (runnable
 * at once, so SCHED_NEXT finds work); its arrays live in w->sbuf.
 */
static void gen_set(struct worker *w, struct dfg_set_register *r,
		    __u32 graph)
{
	__u32 *inputs = (__u32 *)w->sbuf;
	struct dfg_set_output *outputs = (void *)(w->sbuf + 256);
	char *names = (char *)w->sbuf + PAGE;
	struct obj *o;
	unsigned int i;

	r->size = sizeof(*r);
	r->flags = chance(w, 60) ? DFG_SET_F_ROOT : 0;
	if (chance(w, 30))
		r->flags |= DFG_SET_F_QUANTUM_NS;
	r->priority = below(w, DFG_SET_PRIO_MAX + 1);
	r->nr_comps = 1 + below(w, 4);
	r->nr_inputs = below(w, 3);
	r->nr_outputs = below(w, 3);
	for (i = 0; i < r->nr_inputs; i++) {
		o = obj_pick(w, graph, O_CHAN, false);
		inputs[i] = o ? o->id : below(w, 16);
	}
	for (i = 0; i < r->nr_outputs; i++) {
		o = obj_pick(w, graph, O_CHAN, false);
		outputs[i].chan = o ? o->id : below(w, 16);
		outputs[i].slot = chance(w, 80) ? 0 : below(w, 4);
	}
	memset(names, 0, (size_t)r->nr_comps * DFG_NAME_MAX);
	for (i = 0; i < r->nr_comps; i++)
		snprintf(names + i * DFG_NAME_MAX, DFG_NAME_MAX, "c%u", i);
	r->inputs = (__u64)(uintptr_t)inputs;
	r->outputs = (__u64)(uintptr_t)outputs;
	r->comp_names = (__u64)(uintptr_t)names;
	r->cpumask = chance(w, 70) ? 0 : chance(w, 80) ? 1ULL << below(w, 2) :
					 1ULL << 63;
	r->quantum = (r->flags & DFG_SET_F_QUANTUM_NS) ?
		     1000 + below(w, 1000000) : 1 + below(w, 64);
	snprintf(r->name, sizeof(r->name), "set%u", below(w, 8));
}

/* The set we run, mostly: a yield may give it back. */
static __u32 yield_id(struct worker *w, __u32 graph)
{
	struct obj *o;

	if (w->run_id && w->run_graph == graph && chance(w, 80))
		return w->run_id;
	o = obj_pick(w, graph, O_SET, false);
	return o ? o->id : below(w, 16);
}

/* Valid-looking arguments for cmds[@slot] on a target in @graph. */
static void gen_valid(struct worker *w, unsigned int slot, void *args,
		      __u32 graph)
{
	static const __u32 depths[] = { 2, 4, 64, 1024, DFG_CHAN_DEPTH_MAX };
	__u32 cmd = cmds[slot].cmd;
	struct obj *o;

	memset(args, 0, _IOC_SIZE(cmd));
	switch (cmd) {
	case DFG_IOC_GET_INFO:
		((struct dfg_info *)args)->size = sizeof(struct dfg_info);
		break;
	case DFG_IOC_NOP: {
		struct dfg_nop *n = args;
		static const __u32 fl[] = { 0, 0, 0, DFG_NOP_F_ASYNC,
					    DFG_NOP_F_PARK, DFG_NOP_F_ALL };

		n->value = rnd(w);
		n->flags = fl[below(w, ARRAY_SIZE(fl))];
		if (n->flags == DFG_NOP_F_ASYNC)
			n->delay_ms = chance(w, 90) ? below(w, 5) :
						      below(w, 3000);
		break;
	}
	case DFG_IOC_GRAPH_CREATE:
	case DFG_IOC_GRAPH_ATTACH: {
		struct dfg_graph_open *g = args;
		static const __u32 modes[] = { 0600, 0644, 0666, 0, 0400 };

		g->size = sizeof(*g);
		g->flags = chance(w, 60) ? DFG_GRAPH_O_CLOEXEC :
			   below(w, DFG_GRAPH_O_ALL + 1);
		if (cmd == DFG_IOC_GRAPH_CREATE) {
			g->flags &= ~DFG_GRAPH_O_RDONLY;
			g->mode = modes[below(w, ARRAY_SIZE(modes))];
		}
		gen_name(w, g->name, false);
		break;
	}
	case DFG_IOC_GRAPH_INFO:
		((struct dfg_graph_info *)args)->size =
			sizeof(struct dfg_graph_info);
		break;
	case DFG_IOC_ARENA_CREATE:
		((struct dfg_arena_create *)args)->size =
			chance(w, 80) ? 1 + below(w, 4 * PAGE) :
					1 + below(w, 4 << 20);
		break;
	case DFG_IOC_REGION_EXPORT: {
		struct dfg_region *r = args;
		__u32 first = below(w, 32);

		r->addr = (__u64)(uintptr_t)(w->rbuf + first * PAGE);
		r->len = (1 + below(w, 32 - first)) * PAGE;
		r->flags = below(w, 2) ? DFG_REGION_F_WRITE : 0;
		if (chance(w, 10))
			r->addr = (__u64)(uintptr_t)w->ropage;
		break;
	}
	case DFG_IOC_REGION_UNEXPORT:
	case DFG_IOC_REGION_COPY:
		o = obj_pick(w, graph, O_REGION, false);
		if (cmd == DFG_IOC_REGION_UNEXPORT) {
			((struct dfg_region *)args)->id =
				o ? o->id : below(w, 16);
		} else {
			struct dfg_region_copy *c = args;
			__u64 size = o ? o->size : PAGE;

			c->id = o ? o->id : below(w, 16);
			c->flags = 1 + below(w, 2);
			c->offset = below(w, (__u32)size);
			c->len = below(w, (__u32)(size - c->offset) + 1);
			if (c->len > 32 * PAGE)
				c->len = 32 * PAGE;
			c->addr = (__u64)(uintptr_t)w->rbuf;
		}
		break;
	case DFG_IOC_CHAN_CREATE: {
		struct dfg_chan_create *c = args;

		o = obj_pick(w, graph, chance(w, 70) ? O_ARENA : O_REGION,
			     false);
		c->pool = o ? o->id : below(w, 16);
		c->depth = depths[below(w, ARRAY_SIZE(depths))];
		c->max_producers = chance(w, 50) ? 1 :
				   1 + below(w, DFG_CHAN_PRODUCERS_MAX);
		break;
	}
	case DFG_IOC_CHAN_OPEN: {
		struct dfg_chan_open *c = args;

		o = obj_pick(w, graph, O_CHAN, false);
		c->id = o ? o->id : below(w, 16);
		c->role = 1 + below(w, 2);
		c->flags = below(w, 2) ? DFG_CHAN_O_CLOEXEC : 0;
		break;
	}
	case DFG_IOC_TEAM_JOIN: {
		struct dfg_team_join *j = args;

		/* few names and sizes: joiners meet, ranks collide */
		j->size = sizeof(*j);
		snprintf(j->name, sizeof(j->name), "tm%u", below(w, 4));
		j->team_size = 1 + below(w, 3);
		j->rank = below(w, j->team_size);
		j->ctl_size = chance(w, 80) ? 0 : below(w, 3 * PAGE);
		break;
	}
	case DFG_IOC_TEAM_WAIT: {
		struct dfg_team_wait *t = args;
		static const __s64 tmo[] = { 0, 1000, 1000000, -1 };

		t->offset = 4 * below(w, PAGE / 4);
		t->value = chance(w, 80) ? 0 : (__u32)rnd(w);
		t->timeout_ns = tmo[below(w, ARRAY_SIZE(tmo))];
		break;
	}
	case DFG_IOC_TEAM_WAKE:
		((struct dfg_team_wake *)args)->offset = 4 * below(w, PAGE / 4);
		break;
	case DFG_IOC_SCHED_ATTACH:
		((struct dfg_sched_attach *)args)->flags =
			below(w, DFG_SCHED_O_ALL + 1);
		break;
	case DFG_IOC_SET_REGISTER:
		gen_set(w, args, graph);
		break;
	case DFG_IOC_SET_UNREGISTER:
		o = obj_pick(w, graph, O_SET, false);
		((struct dfg_set_id *)args)->id = o ? o->id : below(w, 16);
		break;
	case DFG_IOC_SCHED_NEXT: {
		struct dfg_sched_next *n = args;

		/* mostly NOWAIT: without it only io_uring may send it */
		n->flags = chance(w, 80) ? DFG_NEXT_F_NOWAIT : 0;
		if (chance(w, 20)) {
			n->flags |= DFG_NEXT_F_CPU;
			n->cpu = below(w, 3);
		}
		if (chance(w, 30)) {
			n->yield_id = yield_id(w, graph);
			n->yield_reason = 1 + below(w, DFG_YIELD_ERROR);
		}
		break;
	}
	case DFG_IOC_SCHED_YIELD: {
		struct dfg_sched_yield *y = args;

		y->id = yield_id(w, graph);
		y->reason = 1 + below(w, DFG_YIELD_ERROR);
		break;
	}
	case DFG_IOC_FEEDBACK_SET: {
		struct dfg_feedback_set *f = args;

		o = obj_pick(w, graph, O_CHAN, false);
		if (o && chance(w, 50)) {
			f->what = DFG_FB_CHAN_MARKS;
			f->object = o->id;
			f->high = below(w, 4);
			f->low = f->high ? below(w, f->high) : 0;
		} else if (chance(w, 30)) {
			f->what = DFG_FB_PLAN;
			f->generation = below(w, 100);
		} else {
			f->what = DFG_FB_GRAPH;
			f->stall_ms = below(w, 1000);
			f->period_ms = chance(w, 50) ? 0 :
				DFG_FB_PERIOD_MS_MIN + below(w, 100);
		}
		break;
	}
	default:	/* CHAN_WAIT, CHAN_WAKE, TEAM_LEAVE: all zero */
		break;
	}
}

/* ------------------------------------------------------------------------
 * Issuing
 * ------------------------------------------------------------------------
 */

struct issue {
	__u32		cmd;
	int		fd;
	enum fdkind	kind;
	enum path	path;
	void		*argp;		/* ioctl arg / indirect addr */
	__u32		ind_len;	/* indirect len */
	__u8		*args;		/* the bytes (for inline and reports) */
	size_t		len;
	bool		inline_junk;	/* bytes after the struct */
	__u32		uflags;		/* extra dfg_uring_cmd.flags bits */
};

static void pend_add(struct worker *w, __u64 ud, unsigned int slot)
{
	if (w->npend == PEND_MAX) {
		count(slot, R_PENDING);
		return;
	}
	w->pend[w->npend].ud = ud;
	w->pend[w->npend].slot = slot;
	w->npend++;
}

/* A late CQE of a command we stopped waiting for. */
static void pend_done(struct worker *w, __u64 ud, int res)
{
	unsigned int i;

	for (i = 0; i < w->npend; i++) {
		if (w->pend[i].ud != ud)
			continue;
		check_result(w, cmds[w->pend[i].slot].cmd, res,
			     P_INDIRECT, K_EP, NULL, 0);
		w->pend[i] = w->pend[--w->npend];
		return;
	}
}

/*
 * Waits up to @ms for the CQE of @ud, handling others on the way. Returns
 * 0 with *@res set, or -ETIME.
 */
static int ring_wait_for(struct worker *w, __u64 ud, int ms, int *res)
{
	__u64 start = dfg_now_ns();
	struct dfg_cqe cqe;
	int left, ret;

	for (;;) {
		left = ms - (int)dfg_ms_since(start);
		if (left < 0)
			left = 0;
		ret = left ? dfg_ring_wait(&w->ring, &cqe, left) :
			     dfg_ring_peek(&w->ring, &cqe);
		if (ret)
			return -ETIME;
		if (cqe.user_data == ud) {
			*res = cqe.res;
			return 0;
		}
		pend_done(w, cqe.user_data, cqe.res);
	}
}

/* May this command stay parked in the kernel? Then never ioctl. */
static bool may_block(const struct issue *is, const __u8 *args)
{
	const struct dfg_nop *n = (const void *)args;

	if (is->cmd == DFG_IOC_CHAN_WAIT)
		return true;
	if (is->cmd == DFG_IOC_TEAM_WAIT) {
		const struct dfg_team_wait *t = (const void *)args;

		return t->timeout_ns < 0 || t->timeout_ns > 20000000;
	}
	if (is->cmd == DFG_IOC_SCHED_NEXT) {
		const struct dfg_sched_next *s = (const void *)args;

		return !(s->flags & DFG_NEXT_F_NOWAIT);
	}
	if (is->cmd != DFG_IOC_NOP)
		return false;
	return (n->flags & DFG_NOP_F_PARK) ||
	       ((n->flags & DFG_NOP_F_ASYNC) && n->delay_ms > 20);
}

static int issue_uring(struct worker *w, struct issue *is, bool parkable)
{
	struct io_uring_sqe *sqe;
	struct dfg_uring_cmd *uc;
	__u64 ud = ++w->next_ud;
	int ret, res;

	sqe = dfg_get_cmd_sqe(&w->ring, is->fd, is->cmd, ud);
	if (!sqe) {
		char why[48];

		snprintf(why, sizeof(why), "SQ full: h %u t %u st %u e %u",
			 *w->ring.sq.khead, *w->ring.sq.ktail,
			 w->ring.sq.sqe_tail, w->ring.sq.ring_entries);
		record_bad(w, is->cmd, 0, is->path, is->kind, why, NULL, 0);
		return INT_MIN;
	}
	uc = dfg_sqe_cmd(sqe);
	if (is->path == P_INDIRECT || is->path == P_INDIRECT_ASYNC) {
		uc->flags = DFG_URING_F_INDIRECT;
		uc->len = is->ind_len;
		uc->addr = (__u64)(uintptr_t)is->argp;
	} else {
		memcpy(uc->args, is->args, is->len < DFG_URING_INLINE_MAX ?
		       is->len : DFG_URING_INLINE_MAX);
		if (is->inline_junk && is->len < DFG_URING_INLINE_MAX)
			uc->args[is->len + below(w, DFG_URING_INLINE_MAX -
						     is->len)] = 0x5a;
	}
	uc->flags |= is->uflags;
	if (is->path == P_INLINE_ASYNC || is->path == P_INDIRECT_ASYNC)
		sqe->flags |= IOSQE_ASYNC;
	do {
		ret = io_uring_submit(&w->ring);
	} while (ret == -EINTR);
	if (ret != 1) {
		record_bad(w, is->cmd, ret, is->path, is->kind,
			   "io_uring_submit() != 1", NULL, 0);
		return INT_MIN;
	}
	if (ring_wait_for(w, ud, parkable ? PARK_TIMEOUT_MS : CQE_TIMEOUT_MS,
			  &res)) {
		if (parkable) {
			pend_add(w, ud, slot_of(is->cmd));
			return INT_MIN;		/* parked, result later */
		}
		record_bad(w, is->cmd, 0, is->path, is->kind,
			   "no completion in 5 s", is->args, is->len);
		pend_add(w, ud, slot_of(is->cmd));
		return INT_MIN;
	}
	return res;
}

/* Adds descriptors and objects a successful command made. */
static void harvest(struct worker *w, const struct issue *is, int res,
		    __u32 graph)
{
	const __u8 *a = is->argp;

	/* Outputs are readable only where they were written back. */
	bool out = is->path != P_INLINE && is->path != P_INLINE_ASYNC &&
		   a == is->args;

	switch (is->cmd) {
	case DFG_IOC_GRAPH_CREATE:
	case DFG_IOC_GRAPH_ATTACH:
		pool_add(w, res, K_GRAPH, 0, ~0U);
		break;
	case DFG_IOC_CHAN_OPEN: {
		const struct dfg_chan_open *o = (const void *)is->args;
		__u64 map_size = PAGE;
		unsigned int i;

		for (i = 0; i < w->nobj; i++)
			if (w->objs[i].kind == O_CHAN &&
			    w->objs[i].id == o->id && w->objs[i].graph == graph)
				map_size = w->objs[i].size;
		pool_add(w, res, K_EP, map_size, ~0U);
		break;
	}
	case DFG_IOC_TEAM_JOIN:
		pool_add(w, res, K_TEAM, out ?
			 ((const struct dfg_team_join *)a)->map_size : PAGE,
			 ~0U);
		break;
	case DFG_IOC_SCHED_ATTACH:
		pool_add(w, res, K_SCHED, DFG_SET_PAGE_SIZE, graph);
		break;
	case DFG_IOC_SET_REGISTER:
		obj_add(w, graph, (__u32)res, O_SET, DFG_SET_PAGE_SIZE);
		break;
	case DFG_IOC_SCHED_NEXT:
		if (res > 0) {
			w->run_graph = graph;
			w->run_id = (__u32)res;
		}
		break;
	case DFG_IOC_ARENA_CREATE:
		obj_add(w, graph, (__u32)res, O_ARENA, out ?
			((const struct dfg_arena_create *)a)->size : PAGE);
		break;
	case DFG_IOC_REGION_EXPORT:
		obj_add(w, graph, (__u32)res, O_REGION,
			((const struct dfg_region *)is->args)->len);
		break;
	case DFG_IOC_CHAN_CREATE:
		obj_add(w, graph, (__u32)res, O_CHAN, out ?
			((const struct dfg_chan_create *)a)->map_size : PAGE);
		break;
	}
}

static void place_args(struct worker *w, struct issue *is)
{
	size_t len = is->len;

	is->argp = is->args;
	is->ind_len = (__u32)len;
	if (chance(w, 5))
		is->ind_len = chance(w, 50) ? (__u32)rnd(w) : below(w, 512);
	if (!chance(w, 12))
		return;
	switch (below(w, 5)) {
	case 0:
		is->argp = NULL;
		break;
	case 1:
		is->argp = unmapped(w);
		break;
	case 2:
		is->argp = (void *)(uintptr_t)(chance(w, 50) ?
			0xffffffff81000000ULL : 0xffff888000000000ULL);
		break;
	case 3:		/* readable, not writable: copy-out fails */
		if (len <= PAGE) {
			mprotect(w->ropage, PAGE, PROT_READ | PROT_WRITE);
			memcpy(w->ropage, is->args, len);
			mprotect(w->ropage, PAGE, PROT_READ);
			is->argp = w->ropage;
		}
		break;
	default:	/* runs into the guard page */
		if (len > 1 && len <= 4 * PAGE) {
			__u8 *p = w->argbuf + 4 * PAGE - len / 2;

			memmove(p, is->args, len / 2);
			is->argp = p;
		}
		break;
	}
}

/* One command. */
static void do_command(struct worker *w)
{
	struct pool_fd *p = NULL;
	struct issue is = { 0 };
	unsigned int slot = below(w, NCMDS);
	__u32 graph = ~0U;
	int closed = -1, res;
	unsigned int r = below(w, 100);
	bool structured, rsv_bad = false;

	/* Command value. */
	if (r < 85) {
		is.cmd = cmds[slot].cmd;
	} else if (r < 95) {
		is.cmd = _IOC(below(w, 4), DFG_IOC_MAGIC, below(w, 0x100),
			      chance(w, 50) ? below(w, 0x4000) :
			      _IOC_SIZE(cmds[slot].cmd) + below(w, 3) - 1);
	} else {
		static const __u8 magics[] = { 'A', 'b', 0xDE, 0xE0, 0x15,
					       'U', 0xff };

		is.cmd = _IOC(below(w, 4), magics[below(w, sizeof(magics))],
			      below(w, 0x100), below(w, 0x200));
	}

	/* Target. */
	r = below(w, 100);
	if (r < 75) {
		static const enum fdkind want[] = { K_DEV, K_GRAPH, K_EP,
						    K_TEAM, K_SCHED };

		p = pool_pick(w, want[cmds[slot].target]);
	}
	if (!p && r < 97)
		p = pool_pick(w, -1);
	if (p) {
		is.fd = p->fd;
		is.kind = p->kind;
		graph = p->graph;
	} else {
		closed = dup(0);
		close(closed);
		is.fd = chance(w, 80) ? closed : (chance(w, 50) ? -1 : 1023);
		is.kind = K_CLOSED;
	}

	/* Arguments. */
	is.args = w->argbuf;
	is.len = _IOC_SIZE(is.cmd);
	structured = slot_of(is.cmd) < NCMDS && chance(w, 75);
	if (structured) {
		const struct cmd_desc *d = &cmds[slot_of(is.cmd)];

		gen_valid(w, slot_of(is.cmd), is.args, graph);
		if (chance(w, 40)) {
			const struct field *f = &d->f[below(w, d->nf)];

			if (f->kind == F_NAME)
				gen_name(w, (char *)is.args + f->off, true);
			else
				put_field(is.args, f, bad_value(w, f, graph));
			rsv_bad = f->kind == F_RSV;
		}
	} else {
		fill_random(w, is.args, is.len);
	}

	/* Path. */
	if (structured && chance(w, 90))
		is.path = is.len <= DFG_URING_INLINE_MAX ?
			  (enum path)below(w, NPATHS) :
			  (enum path)(below(w, 3) * 2 % 5);	/* 0, 2, 4 */
	else
		is.path = (enum path)below(w, NPATHS);
	if (is.path != P_IOCTL && chance(w, 3)) {
		if (chance(w, 50))
			is.uflags = 1U << (1 + below(w, 31));
		else
			is.inline_junk = true;
	}
	if (may_block(&is, is.args)) {
		struct dfg_nop *n = (void *)is.args;

		if (is.cmd == DFG_IOC_NOP && n->delay_ms > 3000)
			n->delay_ms = below(w, 3000);
		if (is.path == P_IOCTL)
			is.path = P_INDIRECT + 2 * below(w, 2);
	}
	if (!w->have_ring) {
		if (may_block(&is, is.args))
			return;
		is.path = P_IOCTL;
	}
	place_args(w, &is);

	count_op(OP_CMDS);
	if (is.path == P_IOCTL) {
		res = ioctl(is.fd, is.cmd, is.argp);
		if (res < 0)
			res = -errno;
	} else {
		res = issue_uring(w, &is, may_block(&is, is.args));
		if (res == INT_MIN)
			return;
	}
	check_result(w, is.cmd, res, is.path, is.kind, is.args, is.len);
	if (res >= 0 && rsv_bad && kind_is_dfg(is.kind))
		record_bad(w, is.cmd, res, is.path, is.kind,
			   "nonzero reserved field accepted", is.args, is.len);
	if (res >= 0 && kind_is_dfg(is.kind))
		harvest(w, &is, res, graph);
}

/* ------------------------------------------------------------------------
 * Other operations: mmap, munmap, close, dup, fork
 * ------------------------------------------------------------------------
 */

static void touch(void *addr, size_t len, int prot, __u64 seed)
{
	volatile __u8 *p = addr;
	size_t i;

	for (i = 0; i < len && i < 16 * PAGE; i += PAGE) {
		if (prot & PROT_READ)
			(void)p[i];
		if (prot & PROT_WRITE)
			p[i + (seed + i) % PAGE] = (__u8)seed;
	}
}

/* Touches a mapping in a child: faults stay there. */
static void touch_in_child(struct worker *w, struct mapping *m)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return;
	if (!pid) {
		touch(m->addr, m->len, m->prot, rnd(w));
		_exit(0);
	}
	if (dfg_wait_pid(pid, &status, 10000)) {
		record_bad(w, 0, 0, P_IOCTL, K_GRAPH, "touch child hangs",
			   NULL, 0);
		dfg_kill_pid(pid);
		return;
	}
	count_op(WIFSIGNALED(status) ? OP_TOUCH_SIG : OP_TOUCH);
}

static void do_mmap(struct worker *w)
{
	static const int prots[] = {
		PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE, PROT_NONE,
		PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE,
	};
	static const enum fdkind mappable[] = { K_GRAPH, K_GRAPH, K_EP,
						K_TEAM, K_SCHED };
	struct pool_fd *p = pool_pick(w, chance(w, 85) ?
				      (int)mappable[below(w, 5)] : -1);
	__u64 off, len;
	int prot = prots[below(w, ARRAY_SIZE(prots))];
	int flags = chance(w, 90) ? MAP_SHARED : MAP_PRIVATE;
	struct obj *o;
	void *addr;
	int e;

	if (!p) {
		count_op(OP_NOPOOL);
		return;
	}
	if (p->kind == K_RING)	/* our own SQ/CQ: look, do not write */
		prot = PROT_READ;
	if (p->kind == K_EP || p->kind == K_TEAM) {
		off = chance(w, 80) ? 0 : (chance(w, 50) ? PAGE * below(w, 8) :
					   DFG_MMAP_OFFSET(1 + below(w, 4)));
		len = chance(w, 70) ? p->map_size : PAGE * (1 + below(w, 40));
	} else if (p->kind == K_SCHED) {
		/* a set's page; sometimes another graph's set or no set */
		o = obj_pick(w, p->graph, O_SET, chance(w, 10));
		off = DFG_MMAP_OFFSET(o ? o->id : below(w, 16));
		len = chance(w, 85) ? DFG_SET_PAGE_SIZE :
				      PAGE * (2 + below(w, 3));
		if (chance(w, 10))
			off += PAGE * (1 + below(w, 3));
	} else {
		o = obj_pick(w, p->graph, -1, chance(w, 10));
		off = o ? DFG_MMAP_OFFSET(o->id) : DFG_MMAP_OFFSET(below(w, 8));
		len = o ? o->size : PAGE;
		if (o && o->kind == O_CHAN)
			off = DFG_MMAP_OFFSET(below(w, 8));
		if (chance(w, 20))
			off += PAGE * below(w, 4);
		if (chance(w, 20))
			len = PAGE * (1 + below(w, 20));
	}
	if (chance(w, 5))
		off = chance(w, 50) ? ~0ULL - PAGE + 1 : (rnd(w) & ~(PAGE - 1));
	if (chance(w, 3))
		len = chance(w, 50) ? 1ULL << 46 : 0;
	if (len > (1ULL << 30))
		len = 1ULL << 46;

	addr = mmap(NULL, len, prot, flags, p->fd, (off_t)off);
	if (addr == MAP_FAILED) {
		e = errno;
		count(S_MMAP, e < ERRNO_MAX ? (unsigned int)e : R_OTHER);
		/* core mm's own: ENODEV (no mmap), EOVERFLOW (offset) */
		if (!errno_documented(e) && e != ENODEV && e != EOVERFLOW)
			record_bad(w, 0, -e, P_IOCTL, p->kind,
				   "mmap: undocumented errno", &off,
				   sizeof(off));
		return;
	}
	count(S_MMAP, 0);
	if (w->nmap == MAP_MAX) {
		munmap(w->maps[0].addr, w->maps[0].len);
		w->maps[0] = w->maps[--w->nmap];
	}
	w->maps[w->nmap].addr = addr;
	w->maps[w->nmap].len = len;
	w->maps[w->nmap].prot = prot;
	touch_in_child(w, &w->maps[w->nmap]);
	w->nmap++;
}

static void do_munmap(struct worker *w)
{
	unsigned int i;
	struct mapping *m;
	size_t pages, first;

	if (!w->nmap)
		return;
	i = below(w, w->nmap);
	m = &w->maps[i];
	pages = m->len / PAGE;
	if (pages > 1 && chance(w, 30)) {
		/* a hole or an end: the vma splits */
		first = below(w, (__u32)pages);
		munmap((__u8 *)m->addr + first * PAGE, PAGE);
		if (chance(w, 50))
			touch_in_child(w, m);
	}
	munmap(m->addr, m->len);
	w->maps[i] = w->maps[--w->nmap];
	count_op(OP_MUNMAP);
}

static void worker_init_pool(struct worker *w)
{
	int pfd[2];
	int fd;

	fd = sys_dfg_open();
	if (fd >= 0)
		pool_add(w, fd, K_DEV, 0, ~0U);
	fd = sys_dfg_open();
	if (fd >= 0)
		pool_add(w, fd, K_DEV, 0, ~0U);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		pool_add(w, fd, K_NULL, 0, ~0U);
	if (!pipe2(pfd, O_CLOEXEC)) {
		pool_add(w, pfd[0], K_PIPE, 0, ~0U);
		pool_add(w, pfd[1], K_PIPE, 0, ~0U);
	}
	if (w->have_ring) {
		fd = dup(w->ring.ring_fd);
		if (fd >= 0)
			pool_add(w, fd, K_RING, 0, ~0U);
	}
}

static void run_commands(struct worker *w, unsigned int n);

/*
 * A child that inherits the descriptors, issues commands and exits, or is
 * killed (SIGKILL) at a random point among them: in a handler, parked, in
 * the middle of making an object.
 */
static void do_fork(struct worker *w)
{
	bool kill_it = chance(w, 40);
	int status;
	pid_t pid;

	count_op(kill_it ? OP_FORK_KILL : OP_FORK);
	pid = fork();
	if (pid < 0)
		return;
	if (!pid) {
		/* its own ring: the parent's SQ state is not ours */
		w->rng ^= (__u64)getpid() << 17;
		w->npend = 0;
		w->have_ring = !dfg_ring_init(&w->ring, 8);
		if (kill_it)
			run_commands(w, 200);
		else if (chance(w, 70))
			run_commands(w, below(w, 20));
		_exit(0);
	}
	if (kill_it) {
		usleep(below(w, 20000));
		kill(pid, SIGKILL);
	}
	if (dfg_wait_pid(pid, &status, 30000)) {
		record_bad(w, 0, 0, P_IOCTL, K_DEV, "fork child hangs",
			   NULL, 0);
		dfg_kill_pid(pid);
	}
}

/*
 * Tear the ring down with whatever is parked on it (every descriptor of
 * it closed, so it really dies: the kernel must cancel its commands), and
 * make a new one.
 */
static void do_ring_teardown(struct worker *w)
{
	unsigned int i;
	int fd;

	if (!w->have_ring)
		return;
	count_op(OP_RING);
	for (i = 0; i < w->npend; i++)
		count(w->pend[i].slot, R_PENDING);
	w->npend = 0;
	for (i = 0; i < w->npool;) {
		if (w->pool[i].kind == K_RING)
			pool_drop(w, i);
		else
			i++;
	}
	io_uring_queue_exit(&w->ring);
	w->have_ring = !dfg_ring_init(&w->ring, 64);
	if (w->have_ring) {
		fd = dup(w->ring.ring_fd);
		if (fd >= 0)
			pool_add(w, fd, K_RING, 0, ~0U);
	}
}

static void run_commands(struct worker *w, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		w->iter++;
		do_command(w);
	}
}

static void one_iteration(struct worker *w)
{
	unsigned int r = below(w, 1000);
	struct pool_fd *p;
	int fd;

	w->iter++;
	if (r < 940) {
		do_command(w);
	} else if (r < 960) {
		do_mmap(w);
	} else if (r < 970) {
		do_munmap(w);
	} else if (r < 980) {
		/* close: keep /dev/null, the pipe and one /dev/dfg around */
		if (w->npool > 6) {
			pool_drop(w, 6 + below(w, w->npool - 6));
			count_op(OP_CLOSE);
		} else {
			fd = sys_dfg_open();
			if (fd >= 0)
				pool_add(w, fd, K_DEV, 0, ~0U);
		}
	} else if (r < 985) {
		do_ring_teardown(w);
	} else if (r < 994) {
		p = pool_pick(w, -1);
		if (p) {
			fd = dup(p->fd);
			if (fd >= 0)
				pool_add(w, fd, p->kind, p->map_size,
					 p->graph);
			count_op(OP_DUP);
		}
	} else {
		do_fork(w);
	}
}

static void worker_main(__u64 seed, unsigned int chunk, unsigned int n,
			__u64 features)
{
	static struct worker wk;
	struct worker *w = &wk;
	unsigned int i;
	struct dfg_cqe cqe;

	w->rng = (seed ^ (0x9E3779B97F4A7C15ULL * (chunk + 1))) | 1;
	w->chunk = chunk;
	w->features = features;
	w->argbuf = mmap(NULL, 5 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	w->ropage = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	w->unmapped = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	w->rbuf = mmap(NULL, 32 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	w->sbuf = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->argbuf == MAP_FAILED || w->ropage == MAP_FAILED ||
	    w->unmapped == MAP_FAILED || w->rbuf == MAP_FAILED ||
	    w->sbuf == MAP_FAILED)
		_exit(2);
	/*
	 * Never munmap()ed: a freed range would be reused by later mappings
	 * (a ring, an arena) that "bad" pointers would then write into.
	 * Below mmap_min_addr (64 KiB) is never mapped: unmapped() uses it.
	 */
	mprotect(w->argbuf + 4 * PAGE, PAGE, PROT_NONE);
	memset(w->rbuf, 0x11, 32 * PAGE);

	w->have_ring = !dfg_ring_init(&w->ring, 64);
	worker_init_pool(w);
	for (i = 0; i < n; i++)
		one_iteration(w);

	/* Take what completed; the rest is the kernel's to cancel. */
	while (w->npend && !dfg_ring_wait(&w->ring, &cqe, 10))
		pend_done(w, cqe.user_data, cqe.res);
	for (i = 0; i < w->npend; i++)
		count(w->pend[i].slot, R_PENDING);
	_exit(0);
}

/* ------------------------------------------------------------------------
 * The test
 * ------------------------------------------------------------------------
 */

/* Limits set for the whole run, low enough for workers to reach them. */
static const char * const params[] = {
	"max_graphs", "max_arena_mb", "max_total_mb", "max_parked",
};
static const char * const fuzz_values[] = { "48", "4", "64", "32" };

/*
 * Values the parameter writer picks for the parameters it knows; any
 * other parameter of the module gets its own value, twice or half it.
 * monitor_ms stays short: the end of the run waits for its cancels.
 */
static const struct {
	const char	*name;
	const char	*values[4];
} param_values[] = {
	{ "max_graphs", { "8", "48", "1024", "1" } },
	{ "max_arena_mb", { "1", "4", "64", "0" } },
	{ "max_total_mb", { "16", "64", "4096", "0" } },
	{ "max_parked", { "1", "4", "32", "1024" } },
	{ "monitor_ms", { "10", "50", "100", "200" } },
	{ "sched_sample_ms", { "1", "10", "100", "0" } },
};

#define PARAM_MAX	32

/* Every parameter of the module and its value before the run. */
struct saved_params {
	unsigned int	n;
	char		name[PARAM_MAX][NAME_MAX + 1];
	char		val[PARAM_MAX][32];
};

static void params_save(struct saved_params *sp)
{
	DIR *d = opendir(DFG_PARAM_DIR);
	struct dirent *e;

	sp->n = 0;
	if (!d)
		return;
	while ((e = readdir(d)) && sp->n < PARAM_MAX) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(sp->name[sp->n], sizeof(sp->name[0]), "%s", e->d_name);
		if (!dfg_param_rw(e->d_name, sp->val[sp->n], sizeof(sp->val[0]),
			      false))
			sp->n++;
	}
	closedir(d);
}

static void params_restore(const struct saved_params *sp)
{
	unsigned int i;

	for (i = 0; i < sp->n; i++)
		dfg_param_rw(sp->name[i], (char *)sp->val[i], 0, true);
}

/*
 * The parameter writer: a process that writes a random parameter every
 * few ms, values in and out of range (the module must refuse those), until
 * killed. Writes race with every command of the workers.
 */
static void param_writer(const struct saved_params *sp, __u64 seed)
{
	struct worker w = { .rng = seed | 1 };
	char val[32];

	for (;;) {
		unsigned int i = below(&w, sp->n), j;
		const char *v = NULL;
		unsigned long long cur = strtoull(sp->val[i], NULL, 10);

		for (j = 0; j < ARRAY_SIZE(param_values); j++)
			if (!strcmp(param_values[j].name, sp->name[i]))
				v = param_values[j].values[below(&w, 4)];
		if (!v) {
			snprintf(val, sizeof(val), "%llu",
				 chance(&w, 50) ? cur * 2 : cur / 2);
			v = val;
		}
		dfg_param_rw(sp->name[i], (char *)v, 0, true);
		count_op(OP_PARAM);
		usleep(2000 + below(&w, 20000));
	}
}

static __u64 env_u64(const char *name, __u64 def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

static int graphs_left(void)
{
	DIR *d = opendir(DFG_SYSFS_DIR "/graphs");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void print_hist(void)
{
	unsigned int s, c;
	char line[1024];
	int len;

	for (s = 0; s < NSLOTS; s++) {
		__u64 total = 0;

		for (c = 0; c < NRES; c++)
			total += sh->hist[s][c];
		if (!total)
			continue;
		len = snprintf(line, sizeof(line), "%-16s %7llu:", slot_name(s),
			       (unsigned long long)total);
		for (c = 0; c < NRES && len < (int)sizeof(line) - 40; c++) {
			const char *n;

			if (!sh->hist[s][c])
				continue;
			n = !c ? "ok" : c == R_PENDING ? "pending" :
			    c == R_OTHER ? "other" : strerrorname_np((int)c);
			len += snprintf(line + len, sizeof(line) - len,
					" %s=%llu", n ? n : "?",
					(unsigned long long)sh->hist[s][c]);
		}
		ksft_print_msg("%s\n", line);
	}
	line[0] = '\0';
	for (c = 0, len = 0; c < ARRAY_SIZE(op_names); c++)
		len += snprintf(line + len, sizeof(line) - len, " %s=%llu",
				op_names[c], (unsigned long long)sh->ops[c]);
	ksft_print_msg("ops:%s\n", line);
}

static void print_bad(void)
{
	__u64 i, n = sh->nbad < BAD_MAX ? sh->nbad : BAD_MAX;
	char hex[2 * 64 + 1];

	for (i = 0; i < n; i++) {
		struct bad *b = &sh->bad[i];
		__u32 j;

		for (j = 0; j < b->args_len; j++)
			sprintf(hex + 2 * j, "%02x", b->args[j]);
		hex[2 * b->args_len] = '\0';
		ksft_print_msg("BAD %s: cmd 0x%08x (%s, nr 0x%02x size %u dir %u) res %d (%s) path %s fd %s chunk %u iter %u args %s\n",
			       b->why, b->cmd, slot_name(slot_of(b->cmd)),
			       _IOC_NR(b->cmd), _IOC_SIZE(b->cmd),
			       _IOC_DIR(b->cmd), b->res,
			       b->res < 0 && strerrorname_np(-b->res) ?
			       strerrorname_np(-b->res) : "-",
			       path_names[b->path], kind_names[b->kind],
			       b->chunk, b->iter, hex);
	}
}

/*
 * DFG_IOC_GET_INFO's features match the command table: a command of a
 * feature the module claims is in the table (not -EOPNOTSUPP), one of a
 * feature it does not claim is not. All-zero arguments on a fresh graph.
 */
TEST(features_match_table)
{
	__u8 args[256];
	struct dfg_graph_open o = { .size = sizeof(o), .mode = 0600 };
	struct dfg_info info;
	unsigned int i;
	int dev, gfd, ret;

	dev = sys_dfg_open();
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, dfg_get_info(dev, &info));
	snprintf(o.name, sizeof(o.name), "fzfeat-%d", getpid());
	gfd = sys_dfg_ioctl(dev, DFG_IOC_GRAPH_CREATE, &o);
	ASSERT_LE(0, gfd);
	for (i = 0; i < NCMDS; i++) {
		const struct cmd_desc *d = &cmds[i];
		bool claimed = !d->feature || (info.features & d->feature);

		/* nothing here may block: CHAN_WAIT goes to the graph fd */
		if (d->cmd == DFG_IOC_NOP || d->cmd == DFG_IOC_GRAPH_CREATE)
			continue;
		memset(args, 0, sizeof(args));
		ret = sys_dfg_ioctl(d->target == T_DEV ? dev : gfd, d->cmd,
				    args);
		if (ret >= 0 && (d->cmd == DFG_IOC_GRAPH_ATTACH ||
				 d->cmd == DFG_IOC_SCHED_ATTACH))
			close(ret);
		if (claimed) {
			EXPECT_NE(-EOPNOTSUPP, ret)
				TH_LOG("%s: feature claimed (features 0x%llx) but not in the table",
				       d->name,
				       (unsigned long long)info.features);
		} else {
			EXPECT_EQ(-EOPNOTSUPP, ret)
				TH_LOG("%s: feature not claimed, got %d",
				       d->name, ret);
		}
	}
	close(gfd);
	close(dev);
}

FIXTURE(fuzz) {
	struct saved_params saved;
	pid_t writer;
};

FIXTURE_SETUP(fuzz)
{
	unsigned int i;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	params_save(&self->saved);
	ASSERT_LT(0, self->saved.n);
	for (i = 0; i < ARRAY_SIZE(params); i++)
		ASSERT_EQ(0, dfg_param_rw(params[i], (char *)fuzz_values[i], 0,
				      true));
}

FIXTURE_TEARDOWN(fuzz)
{
	dfg_kill_pid(self->writer);
	params_restore(&self->saved);
}

TEST_F_TIMEOUT(fuzz, random_commands, 900)
{
	__u64 seed = env_u64("DFG_FUZZ_SEED", dfg_now_ns() ^ (__u64)getpid());
	__u64 total = env_u64("DFG_FUZZ_COUNT", 100000);
	__u64 chunk_size = env_u64("DFG_FUZZ_CHUNK", 5000);
	unsigned int jobs = (unsigned int)env_u64("DFG_FUZZ_JOBS", 2);
	__u64 seconds = env_u64("DFG_FUZZ_SECONDS", 0);
	unsigned int kill_permille = (unsigned int)env_u64("DFG_FUZZ_KILL", 2);
	struct worker ctl = { .rng = (seed * 3) | 1 };
	unsigned int nchunks, next = 0, running = 0, i;
	struct {
		pid_t		pid;
		__u64		start;
		unsigned int	chunk;
		bool		killed;
	} w[16] = { 0 };
	struct dfg_info info;
	__u64 start = dfg_now_ns(), v;
	bool hung = false;
	int status;

	ASSERT_EQ(0, dfg_read_info(&info));
	if (!chunk_size)
		chunk_size = 5000;
	if (!jobs || jobs > ARRAY_SIZE(w))
		jobs = 2;
	/* With a time budget, chunks follow each other until it is spent. */
	if (seconds)
		total = chunk_size * 100000;
	nchunks = (unsigned int)((total + chunk_size - 1) / chunk_size);
	ksft_print_msg("seed 0x%llx (DFG_FUZZ_SEED), %llu iterations in %u chunks, %u at a time, %llu s budget, features 0x%llx\n",
		       (unsigned long long)seed, (unsigned long long)total,
		       nchunks, jobs, (unsigned long long)seconds,
		       (unsigned long long)info.features);
	fflush(NULL);

	self->writer = fork();
	ASSERT_LE(0, self->writer);
	if (!self->writer)
		param_writer(&self->saved, seed ^ 0x5eed);

	while (next < nchunks || running) {
		if (seconds && dfg_ms_since(start) >= seconds * 1000)
			nchunks = next;
		for (i = 0; i < jobs && next < nchunks; i++) {
			__u64 n;

			if (w[i].pid)
				continue;
			n = next == nchunks - 1 ?
			    total - chunk_size * (nchunks - 1) : chunk_size;
			fflush(NULL);
			w[i].pid = fork();
			ASSERT_LE(0, w[i].pid);
			if (!w[i].pid)
				worker_main(seed, next, (unsigned int)n,
					    info.features);
			w[i].start = dfg_now_ns();
			w[i].chunk = next++;
			w[i].killed = false;
			running++;
		}
		for (i = 0; i < jobs; i++) {
			if (!w[i].pid)
				continue;
			/* kill -9 at a random point of a worker's chunk */
			if (!w[i].killed && below(&ctl, 1000) < kill_permille) {
				kill(w[i].pid, SIGKILL);
				w[i].killed = true;
				count_op(OP_WORKER_KILL);
			}
			if (waitpid(w[i].pid, &status, WNOHANG) == w[i].pid) {
				if (w[i].killed && WIFSIGNALED(status) &&
				    WTERMSIG(status) == SIGKILL) {
					/* as it should */
				} else if (!WIFEXITED(status) ||
					   WEXITSTATUS(status)) {
					ksft_print_msg("worker chunk %u: status 0x%x\n",
						       w[i].chunk, status);
					hung = true;
				}
				w[i].pid = 0;
				running--;
			} else if (dfg_ms_since(w[i].start) >
				   WORKER_DEADLINE_MS) {
				ksft_print_msg("worker chunk %u hangs: killing it\n",
					       w[i].chunk);
				hung = true;
				dfg_kill_pid(w[i].pid);
				w[i].pid = 0;
				running--;
			}
		}
		usleep(5000);
	}
	/* The limits of the run again, before anything is counted. */
	dfg_kill_pid(self->writer);
	self->writer = 0;
	params_restore(&self->saved);
	for (i = 0; i < ARRAY_SIZE(params); i++)
		dfg_param_rw(params[i], (char *)fuzz_values[i], 0, true);

	ksft_print_msg("%u chunks of %llu iterations in %llu ms\n", next,
		       (unsigned long long)chunk_size,
		       (unsigned long long)dfg_ms_since(start));
	print_hist();
	print_bad();
	fflush(stdout);	/* the harness leaves with _exit() */

	/* Everything gone: the kernel canceled and freed it all. */
	EXPECT_EQ(0, dfg_sysfs_wait_u64("parked", 0, 2000, &v))
		TH_LOG("parked: %llu", (unsigned long long)v);
	EXPECT_EQ(0, dfg_sysfs_wait_u64("clients", 0, 2000, &v))
		TH_LOG("clients: %llu", (unsigned long long)v);
	EXPECT_EQ(0, dfg_sysfs_wait_u64("pages", 0, 2000, &v))
		TH_LOG("pages: %llu", (unsigned long long)v);
	EXPECT_EQ(0, dfg_sysfs_wait_u64("pinned", 0, 2000, &v))
		TH_LOG("pinned: %llu", (unsigned long long)v);
	for (i = 0; i < 200 && graphs_left(); i++)
		usleep(10000);
	EXPECT_EQ(0, graphs_left());

	EXPECT_FALSE(hung);
	EXPECT_EQ(0, sh->nbad);
}

/* ------------------------------------------------------------------------
 * Messages under kills: nothing lost while other processes die
 * ------------------------------------------------------------------------
 */

#define MSG_PRODUCERS	3		/* counted producers of the stream */
/* + the test's own producer, which holds the stream open, + a victim */
#define MSG_SLOTS	(MSG_PRODUCERS + 2)
#define MSG_VICTIMS	6
#define MSG_VICTIM_TAG	0xffULL		/* producer number of victims */

/*
 * The test's producer endpoint, which holds the stream open. Children
 * drop their inherited copy (descriptor and mapping) first: the
 * consumer would otherwise hold a producer and never see the end.
 */
static struct chan_ep msg_holder = { .fd = -1 };

/*
 * The stream's consumer: every counted producer's messages arrive once,
 * in order. Exit 0, or the kind of loss.
 */
static void msg_consumer(int g, __u32 id, __u64 per_producer)
{
	__u64 next[MSG_PRODUCERS] = { 0 };
	struct io_uring ring;
	struct chan_ep ep;
	struct dfg_desc d;
	unsigned int i;
	int ret;

	chan_ep_close(&msg_holder);
	if (chan_ep_open(g, id, DFG_CHAN_CONSUMER,
			 DFG_CHAN_MAP_SIZE(64, MSG_SLOTS), &ep) ||
	    dfg_ring_init(&ring, 4))
		_exit(10);
	for (;;) {
		ret = chan_pop_uring(&ep, &ring, &d);
		if (ret == 1)
			break;
		if (ret)
			_exit(11);
		i = (unsigned int)(d.tag >> 32);
		if (i == MSG_VICTIM_TAG)
			continue;
		if (i >= MSG_PRODUCERS || (d.tag & 0xffffffffULL) != next[i])
			_exit(12);	/* out of order, twice, or from nowhere */
		next[i]++;
	}
	for (i = 0; i < MSG_PRODUCERS; i++)
		if (next[i] != per_producer)
			_exit(13);	/* lost */
	_exit(0);
}

static void msg_producer(int g, __u32 id, __u64 who, __u64 n)
{
	struct chan_ep ep;
	__u64 seq;

	chan_ep_close(&msg_holder);
	if (chan_ep_open(g, id, DFG_CHAN_PRODUCER,
			 DFG_CHAN_MAP_SIZE(64, MSG_SLOTS), &ep))
		_exit(20);
	for (seq = 0; seq < n; seq++)
		if (chan_push_blocking(&ep, 0, 1, (who << 32) | seq))
			_exit(21);
	_exit(0);
}

/*
 * A victim: a producer of the stream (its messages are not counted), or
 * one side of a channel of its own, parked often (ioctl or io_uring).
 * Runs until killed; a peer's death ends it quietly.
 */
static void msg_victim(int g, __u32 stream, __u32 own, unsigned int v)
{
	__u32 role = v % 2 ? DFG_CHAN_PRODUCER : DFG_CHAN_CONSUMER;
	struct io_uring ring;
	struct chan_ep ep;
	struct dfg_desc d;
	__u64 n = 0;
	int ret;

	chan_ep_close(&msg_holder);
	if (v == 0) {
		if (chan_ep_open(g, stream, DFG_CHAN_PRODUCER,
				 DFG_CHAN_MAP_SIZE(64, MSG_SLOTS), &ep))
			_exit(0);	/* its slot is not drained yet */
		for (;;)
			if (chan_push_blocking(&ep, 0, 1,
					       MSG_VICTIM_TAG << 32 | n++))
				_exit(0);
	}
	if (chan_ep_open(g, own, role, DFG_CHAN_MAP_SIZE(4, 1), &ep) ||
	    dfg_ring_init(&ring, 4))
		_exit(0);
	for (;;) {
		if (role == DFG_CHAN_PRODUCER)
			ret = chan_push_blocking(&ep, 0, 1, n++);
		else if (v % 4 == 0)
			ret = chan_pop_uring(&ep, &ring, &d);
		else
			ret = chan_pop_blocking(&ep, &d);
		if (ret)
			_exit(0);
	}
}

/*
 * kill -9 at random points under load: MSG_PRODUCERS producers stream
 * DFG_FUZZ_MESSAGES messages each (default 20000) to one consumer that
 * parks on io_uring, while victims (a producer of the same channel, pairs
 * on channels of their own, parking on ioctl and io_uring) are killed at
 * random moments and started again. Nothing of the counted streams may be
 * lost, doubled or reordered, nothing may hang, and pages and parked
 * commands come back to where they were.
 */
FIXTURE(msgs) {
};

FIXTURE_SETUP(msgs)
{
}

FIXTURE_TEARDOWN(msgs)
{
}

TEST_F_TIMEOUT(msgs, under_kills, 600)
{
	__u64 per = env_u64("DFG_FUZZ_MESSAGES", 20000);
	__u64 parked0 = dfg_sysfs_u64("parked"), pages0 = dfg_sysfs_u64("pages");
	pid_t prod[MSG_PRODUCERS], victim[MSG_VICTIMS], cons;
	struct worker rng = { .rng = (dfg_now_ns() ^ getpid()) | 1 };
	__u32 stream, own[MSG_VICTIMS / 2];
	unsigned int i, done = 0, kills = 0;
	int dev, g, status;
	__u64 start;

	dev = sys_dfg_open();
	ASSERT_LE(0, dev);
	g = chan_graph_new(dev, "msgs");
	ASSERT_LE(0, g);
	stream = chan_create(g, 1, 64, MSG_SLOTS, NULL);
	ASSERT_LT(0, (int)stream);
	for (i = 0; i < MSG_VICTIMS / 2; i++) {
		own[i] = chan_create(g, 1, 4, 1, NULL);
		ASSERT_LT(0, (int)own[i]);
	}
	/* No end of stream before the counted producers are done. */
	ASSERT_EQ(0, chan_ep_open(g, stream, DFG_CHAN_PRODUCER,
				  DFG_CHAN_MAP_SIZE(64, MSG_SLOTS), &msg_holder));
	fflush(NULL);
	cons = fork();
	ASSERT_LE(0, cons);
	if (!cons)
		msg_consumer(g, stream, per);
	for (i = 0; i < MSG_PRODUCERS; i++) {
		prod[i] = fork();
		ASSERT_LE(0, prod[i]);
		if (!prod[i])
			msg_producer(g, stream, i, per);
	}
	for (i = 0; i < MSG_VICTIMS; i++) {
		victim[i] = fork();
		ASSERT_LE(0, victim[i]);
		if (!victim[i])
			msg_victim(g, stream, own[i / 2], i);
	}

	start = dfg_now_ns();
	while (done < MSG_PRODUCERS && dfg_ms_since(start) < 400000) {
		usleep(below(&rng, 30000));
		i = below(&rng, MSG_VICTIMS);
		kill(victim[i], SIGKILL);
		ASSERT_EQ(0, dfg_wait_pid(victim[i], &status, 5000)) {
			TH_LOG("victim %u does not die", i);
		}
		kills++;
		fflush(NULL);
		victim[i] = fork();
		ASSERT_LE(0, victim[i]);
		if (!victim[i])
			msg_victim(g, stream, own[i / 2], i);
		for (i = 0, done = 0; i < MSG_PRODUCERS; i++)
			if (prod[i] && waitpid(prod[i], &status, WNOHANG) ==
				       prod[i]) {
				EXPECT_EQ(0, status);
				prod[i] = 0;
			} else if (!prod[i]) {
				done++;
			}
	}
	ksft_print_msg("%llu messages from each of %u producers, %u kills, %llu ms\n",
		       (unsigned long long)per, MSG_PRODUCERS, kills,
		       (unsigned long long)dfg_ms_since(start));
	fflush(stdout);	/* the harness leaves with _exit() */
	EXPECT_EQ(MSG_PRODUCERS, done);
	for (i = 0; i < MSG_VICTIMS; i++)
		dfg_kill_pid(victim[i]);
	for (i = 0; i < MSG_PRODUCERS; i++)
		dfg_kill_pid(prod[i]);
	chan_ep_close(&msg_holder);
	/* Every producer gone: the consumer sees the end of the stream. */
	ASSERT_EQ(0, dfg_wait_pid(cons, &status, 30000)) {
		TH_LOG("the consumer hangs");
		dfg_kill_pid(cons);
	}
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("consumer status 0x%x (12 disorder, 13 loss)", status);
	}
	close(g);
	close(dev);
	EXPECT_EQ(pages0, dfg_sysfs_wait("pages", pages0));
	EXPECT_EQ(parked0, dfg_sysfs_wait("parked", parked0));
}

TEST_HARNESS_MAIN
