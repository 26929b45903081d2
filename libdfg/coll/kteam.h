/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg internals: kernel teams (dfg.ko's DFG_IOC_TEAM_*), the
 * membership and synchronisation layer under the collectives. Not public
 * API: <dfg/coll.h>'s dfg_team_join() is built on it.
 *
 * A kernel team is joined by name in a graph; each member gets a member
 * descriptor and maps the team's control area: a kernel-written struct
 * dfg_team_hdr (state, joined count, dead rank) followed by ctl_size bytes
 * the collectives own (mailboxes, flags, sequence words). Waiting and
 * waking work like a futex on aligned 32-bit words of that area: store the
 * new value, then dfg_kteam_wake(); a waiter calls dfg_kteam_wait() with
 * the value it saw and looks again when it returns.
 *
 * When a member dies (or its descriptor goes without dfg_kteam_leave()),
 * the module breaks the team: dfg_kteam_broken() turns true, every wait in
 * progress on every member returns -EOWNERDEAD within dfg.monitor_ms (100
 * ms by default), and every later wait fails with -EOWNERDEAD at once.
 *
 * All functions return 0 (or a count) or -errno and leave errno alone.
 * A struct dfg_kteam is used by one thread at a time, except that
 * dfg_kteam_wait(), dfg_kteam_wake() and dfg_kteam_broken() may be called
 * from several threads at once.
 */
#ifndef _DFG_COLL_KTEAM_H
#define _DFG_COLL_KTEAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <liburing.h>
#include <linux/dfg.h>

/**
 * struct dfg_kteam - this process's membership of a kernel team
 * @fd:		member descriptor (O_CLOEXEC); owned
 * @id:		the team's object id in its graph
 * @rank:	this member's rank
 * @size:	number of ranks
 * @hdr:	start of the mapping: the kernel's header (read only, by
 *		convention: the mapping is writable for the control area)
 * @ctl:	the userspace control area, at DFG_TEAM_CTL_OFFSET
 * @ctl_size:	bytes at @ctl (as joined)
 * @map_size:	bytes mapped at @hdr
 * @left:	dfg_kteam_leave() succeeded
 *
 * Fields are read-only for users of this header.
 */
struct dfg_kteam {
	int				fd;
	unsigned int			id;
	unsigned int			rank;
	unsigned int			size;
	volatile struct dfg_team_hdr	*hdr;
	void				*ctl;
	size_t				ctl_size;
	size_t				map_size;
	bool				left;
};

/**
 * dfg_kteam_join() - join (or create) the kernel team @name
 * @graph_fd:	graph descriptor opened for writing; not kept
 * @name:	team name, 1..DFG_NAME_MAX-1 bytes of [A-Za-z0-9._-]
 * @size:	number of ranks, 1..DFG_TEAM_SIZE_MAX; every member the same
 * @rank:	this member's rank, < @size
 * @ctl_size:	bytes of control area wanted, 0..DFG_TEAM_CTL_MAX; every
 *		member the same (the first joiner's value makes the team)
 * @out:	on success, the new membership; free with dfg_kteam_close()
 *
 * Returns as soon as this member is in (others may still be joining: see
 * dfg_kteam_wait_all()). The control area is zeroed when the team is
 * created and is shared by every member.
 *
 * Return: 0, or -EINVAL (bad name, size, rank, or size/ctl_size unlike
 * the team's), -ENAMETOOLONG (@name of DFG_NAME_MAX bytes or more),
 * -EFBIG (ctl_size too large), -EADDRINUSE (rank taken),
 * -EOWNERDEAD (a broken team of that name still has members), -EACCES
 * (read-only graph descriptor), -ENOMEM, -EAGAIN (RLIMIT_MEMLOCK),
 * -ENOTTY/-EOPNOTSUPP (module without teams), -EBADFD (not a graph
 * descriptor).
 */
int dfg_kteam_join(int graph_fd, const char *name, unsigned int size,
		   unsigned int rank, size_t ctl_size, struct dfg_kteam **out);

/**
 * dfg_kteam_wait_all() - wait until every rank has joined
 * @kt:		membership
 * @timeout_ms:	how long to wait; < 0 for ever
 *
 * Waits for the team to have been complete once (header @formed != 0):
 * members that join, wait_all, work and leave never hang each other even
 * if the fastest leaves before the slowest looked.
 *
 * Return: 0, -ETIMEDOUT, -EOWNERDEAD (a member died first), -ECANCELED
 * (graph died), -EINTR (signal).
 */
int dfg_kteam_wait_all(struct dfg_kteam *kt, int timeout_ms);

/**
 * dfg_kteam_ctl() - the userspace control area
 * @kt:		membership
 *
 * Return: @kt->ctl, 64-byte aligned, @kt->ctl_size bytes long, shared by
 * every member at the same offsets (pass offsets, not pointers, to peers).
 */
void *dfg_kteam_ctl(const struct dfg_kteam *kt);

/**
 * dfg_kteam_wait() - sleep while *@word == @val
 * @kt:		membership
 * @word:	4-byte aligned word inside the mapping (control area or a
 *		header word such as &kt->hdr->joined)
 * @val:	value seen by the caller
 * @timeout_ns:	< 0 for ever, 0 do not sleep, else relative nanoseconds
 *
 * The kernel compares *@word with @val and sleeps under one lock with
 * dfg_kteam_wake(), so a wake after the store of a new value is never
 * lost. Wakeups may be spurious: the caller looks at @word again. The
 * wait is an SQE on the calling thread's wait ring (dfg_wait_ring()), or
 * an ioctl under DFG_NO_URING; on the ring a signal wakes @word (a
 * spurious wakeup for its other waiters) to end the wait with -EINTR.
 *
 * Return: 1 if *@word != @val already (no sleep), 0 woken, or -ETIMEDOUT,
 * -EOWNERDEAD (team broken), -ECANCELED (graph died), -EINTR (signal),
 * -ENOTCONN (after dfg_kteam_leave()), -EINVAL (@word outside the mapping
 * or unaligned).
 */
int dfg_kteam_wait(struct dfg_kteam *kt, const uint32_t *word, uint32_t val,
		   int64_t timeout_ns);

/**
 * dfg_kteam_wake() - wake every dfg_kteam_wait() on @word, on any member
 * @kt:		membership
 * @word:	4-byte aligned word inside the mapping
 *
 * Return: the number of waits woken (>= 0), or -EINVAL, -ENOTCONN,
 * -ECANCELED.
 */
int dfg_kteam_wake(struct dfg_kteam *kt, const uint32_t *word);

/**
 * dfg_kteam_prep_wait() - dfg_kteam_wait() as an io_uring command
 * @sqe:	SQE of an IORING_SETUP_SQE128 ring (see <dfg/prep.h>)
 * @kt:		membership
 * @word:	as dfg_kteam_wait()
 * @val:	as dfg_kteam_wait()
 * @timeout_ns:	as dfg_kteam_wait()
 *
 * Inline arguments; the CQE's res is dfg_kteam_wait()'s result, or
 * -ECANCELED when the submitting task exits or the ring goes, -EBUSY at
 * dfg.max_parked. Never fails, never submits.
 */
void dfg_kteam_prep_wait(struct io_uring_sqe *sqe, const struct dfg_kteam *kt,
			 const uint32_t *word, uint32_t val,
			 int64_t timeout_ns);

/**
 * dfg_kteam_broken() - has the team failed?
 * @kt:		membership
 *
 * One load of the header's state: true once a member died (or the graph
 * died). Cheap enough for every loop of a spinning collective.
 */
bool dfg_kteam_broken(const struct dfg_kteam *kt);

/**
 * dfg_kteam_dead_rank() - the rank whose death broke the team
 * @kt:		membership
 *
 * Return: the rank, or -1 if the team is not broken by a death.
 */
int dfg_kteam_dead_rank(const struct dfg_kteam *kt);

/**
 * dfg_kteam_leave() - leave in order
 * @kt:		membership
 *
 * The rank is free again and the others are not failed. @kt stays valid
 * (and its mapping readable) until dfg_kteam_close().
 *
 * Return: 0, or -ENOTCONN (already left).
 */
int dfg_kteam_leave(struct dfg_kteam *kt);

/**
 * dfg_kteam_close() - unmap, close and free @kt
 * @kt:		membership, or NULL
 *
 * Without dfg_kteam_leave() first, this counts as a death: the team
 * breaks (that is what a crash does; use it on error paths on purpose).
 */
void dfg_kteam_close(struct dfg_kteam *kt);

#endif /* _DFG_COLL_KTEAM_H */
