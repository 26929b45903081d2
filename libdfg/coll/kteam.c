// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: kernel teams, the membership and synchronisation layer under the
 * collectives (see kteam.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dfg/prep.h>

#include "sys.h"
#include "kteam.h"

static __u64 kteam_offset(const struct dfg_kteam *kt, const uint32_t *word)
{
	return (__u64)((const char *)word - (const char *)kt->hdr);
}

/* Offsets the module would refuse: ~0 makes it answer -EINVAL. */
static __u64 kteam_word(const struct dfg_kteam *kt, const uint32_t *word)
{
	const char *p = (const char *)word, *base = (const char *)kt->hdr;

	if (p < base || p >= base + kt->map_size)
		return ~0ULL;
	return kteam_offset(kt, word);
}

int dfg_kteam_join(int graph_fd, const char *name, unsigned int size,
		   unsigned int rank, size_t ctl_size, struct dfg_kteam **out)
{
	struct dfg_team_join j = {
		.size		= sizeof(j),
		.team_size	= size,
		.rank		= rank,
		.ctl_size	= ctl_size,
	};
	struct dfg_kteam *kt;
	int fd, ret = 0;
	void *map;

	if (!name || !out)
		return -EINVAL;
	if (strlen(name) >= sizeof(j.name))
		return -ENAMETOOLONG;
	strcpy(j.name, name);
	kt = calloc(1, sizeof(*kt));
	if (!kt)
		return -ENOMEM;
	fd = dfg_sys_cmd(graph_fd, DFG_IOC_TEAM_JOIN, &j);
	if (fd < 0) {
		free(kt);
		return fd;
	}
	map = __dfg_sys_mmap(j.map_size, PROT_READ | PROT_WRITE, fd, 0, &ret);
	if (!map) {
		/* Never a member in the others' eyes: leave, then close. */
		struct dfg_team_leave l = { 0 };

		dfg_sys_cmd(fd, DFG_IOC_TEAM_LEAVE, &l);
		__dfg_sys_close(fd);
		free(kt);
		return ret;
	}
	kt->fd = fd;
	kt->id = j.id;
	kt->rank = rank;
	kt->size = size;
	kt->hdr = map;
	kt->ctl = (char *)map + DFG_TEAM_CTL_OFFSET;
	kt->ctl_size = ctl_size;
	kt->map_size = j.map_size;
	*out = kt;
	return 0;
}

static __s64 ns_left(const struct timespec *end)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (__s64)(end->tv_sec - now.tv_sec) * 1000000000LL +
	       (end->tv_nsec - now.tv_nsec);
}

int dfg_kteam_wait_all(struct dfg_kteam *kt, int timeout_ms)
{
	const uint32_t *formed = (const uint32_t *)&kt->hdr->formed;
	struct timespec end;
	__s64 left = -1;
	uint32_t f;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout_ms / 1000;
	end.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	while (!(f = __atomic_load_n(formed, __ATOMIC_ACQUIRE))) {
		if (timeout_ms >= 0) {
			left = ns_left(&end);
			if (left <= 0)
				return -ETIMEDOUT;
		}
		ret = dfg_kteam_wait(kt, formed, f, left);
		if (ret < 0)
			return ret;
	}
	return 0;
}

void *dfg_kteam_ctl(const struct dfg_kteam *kt)
{
	return kt->ctl;
}

/*
 * A signal came while a TEAM_WAIT was parked on the thread's ring: wake
 * the word so that it completes (every waiter of the word may wake
 * spuriously, which the protocol allows), and the wait returns -EINTR as
 * the ioctl did.
 */
static void kteam_wait_intr(const struct dfg_intr *intr)
{
	struct dfg_team_wake w = { .offset = intr->off };

	dfg_sys_cmd(intr->fd, DFG_IOC_TEAM_WAKE, &w);
}

int dfg_kteam_wait(struct dfg_kteam *kt, const uint32_t *word, uint32_t val,
		   int64_t timeout_ns)
{
	struct dfg_team_wait w = {
		.offset		= kteam_word(kt, word),
		.value		= val,
		.timeout_ns	= timeout_ns,
	};
	const struct dfg_intr intr = {
		.fn	= kteam_wait_intr,
		.fd	= kt->fd,
		.off	= w.offset,
	};

	return dfg_sys_wait(kt->fd, DFG_IOC_TEAM_WAIT, &w, NULL, NULL, &intr);
}

int dfg_kteam_wake(struct dfg_kteam *kt, const uint32_t *word)
{
	struct dfg_team_wake w = { .offset = kteam_word(kt, word) };

	return dfg_sys_cmd(kt->fd, DFG_IOC_TEAM_WAKE, &w);
}

void dfg_kteam_prep_wait(struct io_uring_sqe *sqe, const struct dfg_kteam *kt,
			 const uint32_t *word, uint32_t val,
			 int64_t timeout_ns)
{
	dfg_prep_team_wait(sqe, kt->fd, kteam_word(kt, word), val, timeout_ns);
}

bool dfg_kteam_broken(const struct dfg_kteam *kt)
{
	return __atomic_load_n(&kt->hdr->state, __ATOMIC_ACQUIRE) !=
	       DFG_TEAM_S_ACTIVE;
}

int dfg_kteam_dead_rank(const struct dfg_kteam *kt)
{
	uint32_t r = __atomic_load_n(&kt->hdr->dead_rank, __ATOMIC_ACQUIRE);

	return r == DFG_TEAM_NO_RANK ? -1 : (int)r;
}

int dfg_kteam_leave(struct dfg_kteam *kt)
{
	struct dfg_team_leave l = { 0 };
	int ret = dfg_sys_cmd(kt->fd, DFG_IOC_TEAM_LEAVE, &l);

	if (!ret)
		kt->left = true;
	return ret;
}

void dfg_kteam_close(struct dfg_kteam *kt)
{
	if (!kt)
		return;
	__dfg_sys_munmap((void *)kt->hdr, kt->map_size);
	__dfg_sys_close(kt->fd);
	free(kt);
}
