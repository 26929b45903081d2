// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg collectives: teams (join, leave, algorithm choice), the life of
 * one call (sequence number, abort, call-header messages), the scratch
 * memory, and the public entry points with their argument checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "copy.h"
#include "sys.h"
#include "coll.h"
#include "kteam.h"

/*
 * struct dfg_call_hdr - leads every message of a call
 * @seq, @kind:	the call: a peer in another call is a protocol error
 * @dtype, @op, @root, @count: the arguments every member must agree on
 * @outer:	a sub-team's: the team's call it serves (struct dfg_team)
 */
struct dfg_call_hdr {
	__u64	seq;
	__u32	kind;
	__u32	dtype;
	__u64	count;
	__s32	op;
	__u32	root;
	__u64	outer;
};

#define DFG_CALL_PAYLOAD_MAX	(DFG_XPORT_MSG_MAX - sizeof(struct dfg_call_hdr))

/* Why the calling thread's last join failed (dfg_team_failure(NULL)). */
static _Thread_local __u64 dfg_join_why;

/* What every team starts with: rank, size, DFG_COLL_ALGO, the stash. */
int dfg_team_new(unsigned int size, unsigned int rank,
			struct dfg_team **out)
{
	const char *env = getenv("DFG_COLL_ALGO");
	struct dfg_team *t;
	unsigned long every;
	long long yield;
	int ret;

	/* Refused before joining: every member fails alike, at once. */
	ret = dfg_coll_yield_ns(&yield);
	if (!ret)
		ret = dfg_coll_stats_every(&every);
	if (ret)
		return ret;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->rank = rank;
	t->size = size;
	t->top_rank = rank;
	t->graph_fd = -1;
	if (env) {
		ret = dfg_coll_parse_algo(env, t->force, &t->segments);
		if (ret) {
			free(t);
			return ret;
		}
	}
	t->inbox_parity = dfg_coll_prev("ring");
	t->eager_one = dfg_coll_prev("eager1");
	t->stash = calloc(size, sizeof(*t->stash));
	if (!t->stash) {
		free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

bool dfg_coll_prev(const char *what)
{
	const char *s = getenv("DFG_COLL_PREV");
	size_t len = strlen(what);

	while (s && *s) {
		const char *end = strchr(s, ',');
		size_t n = end ? (size_t)(end - s) : strlen(s);

		if (n == len && !strncmp(s, what, n))
			return true;
		s = end ? end + 1 : NULL;
	}
	return false;
}

/*
 * The integer in environment variable @name into *@v: @dflt where it is
 * not set, -EINVAL where it is not an integer within [@min, @max]. Read
 * when a team is formed, so that every knob refuses the join alike.
 */
static int coll_env_long(const char *name, long min, long max, long dflt,
			 long *v)
{
	const char *env = getenv(name);
	char *end;

	*v = dflt;
	if (!env)
		return 0;
	errno = 0;
	*v = strtol(env, &end, 10);
	if (end == env || *end || errno || *v < min || *v > max)
		return -EINVAL;
	return 0;
}

int dfg_team_timeout_ms(int *ms)
{
	long v;
	int ret;

	ret = coll_env_long("DFG_TEAM_TIMEOUT_MS", INT_MIN, INT_MAX,
			    DFG_TEAM_TIMEOUT_DEFAULT_MS, &v);
	*ms = ret ? DFG_TEAM_TIMEOUT_DEFAULT_MS : v < 0 ? -1 : (int)v;
	return ret;
}

int dfg_coll_yield_ns(long long *ns)
{
	long v;
	int ret;

	ret = coll_env_long("DFG_COLL_YIELD_US", 0, DFG_COLL_YIELD_MAX_US,
			    DFG_COLL_YIELD_DEFAULT_US, &v);
	*ns = (ret ? DFG_COLL_YIELD_DEFAULT_US : v) * 1000LL;
	return ret;
}

bool dfg_coll_crowded(unsigned int ranks)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus <= 0 || ranks > (unsigned long)cpus;
}

int dfg_coll_stats_every(unsigned long *every)
{
	long v;
	int ret;

	ret = coll_env_long("DFG_COLL_STATS", 0, DFG_COLL_STATS_MAX, 0, &v);
	*every = ret ? 0 : (unsigned long)v;
	return ret;
}

int dfg_team_join_net(unsigned int size, unsigned int rank,
		      dfg_allgather_fn ag, void *arg, struct dfg_team **out)
{
	struct dfg_team *t;
	int ret, ms;

	dfg_join_why_set(0);
	if (!ag || !out || !size || size > DFG_TEAM_SIZE_MAX || rank >= size)
		return -EINVAL;
	ret = dfg_team_timeout_ms(&ms);
	if (ret)
		return ret;
	ret = dfg_team_new(size, rank, &t);
	if (ret)
		return ret;
	ret = dfg_xport_ucx_create(size, rank, ag, arg, ms, &t->x);
	if (ret) {
		free(t->stash);
		free(t);
		/* The transport names the rank where it knows it. */
		if (!dfg_xwhy_what(dfg_join_why))
			dfg_join_why_set(dfg_xwhy_pack(
				ret == -ETIMEDOUT ? DFG_TEAM_FAIL_TIMEOUT :
				ret == -EOWNERDEAD ? DFG_TEAM_FAIL_KILLED :
				DFG_TEAM_FAIL_ERROR, ret, DFG_XWHY_NOBODY, 0));
		return ret;
	}
	ret = dfg_hier_form(t, ag, arg, ms);
	if (ret) {
		dfg_team_leave(t);
		return ret;
	}
	*out = t;
	return 0;
}

int dfg_team_join(int graph_fd, const char *name, unsigned int size,
		  unsigned int rank, int timeout_ms, struct dfg_team **out)
{
	struct dfg_team *t;
	int saved = errno;
	const char *env;
	int ret;

	if (!name || !out || !size || size > DFG_TEAM_SIZE_MAX ||
	    rank >= size)
		return -EINVAL;
	if (graph_fd < 0)
		return -EBADF;
	ret = dfg_team_new(size, rank, &t);
	if (ret)
		return ret;
	t->graph_fd = fcntl(graph_fd, F_DUPFD_CLOEXEC, 3);
	if (t->graph_fd < 0) {
		ret = -errno;
		errno = saved;
		goto err_free;
	}
	ret = dfg_kteam_join(graph_fd, name, size, rank,
			     dfg_xport_shm_ctl_size(size), &t->kt);
	if (ret)
		goto err_close;
	ret = dfg_kteam_wait_all(t->kt, timeout_ms);
	if (ret)
		goto err_kteam;
	env = getenv("DFG_COLL_NOPTR");
	ret = dfg_xport_shm_create(t->kt, t->graph_fd, dfg_kteam_ctl(t->kt),
				   size, rank, env && *env == '1', &t->x);
	if (ret)
		goto err_kteam;
	*out = t;
	return 0;

err_kteam:
	/* A member that fails to join must not break the team: leave. */
	dfg_kteam_leave(t->kt);
	dfg_kteam_close(t->kt);
err_close:
	__dfg_sys_close(t->graph_fd);
err_free:
	free(t->stash);
	free(t);
	return ret;
}

/* Keep @key (and scratch @mem) exposed until no peer can read it. */
static void dfg_zombie_add(struct dfg_team *t, struct dfg_xkey *key,
			   void *mem, size_t len)
{
	if (t->nr_zombies == t->cap_zombies) {
		unsigned int cap = t->cap_zombies ? 2 * t->cap_zombies : 8;
		struct dfg_zombie *z = realloc(t->zombies, cap * sizeof(*z));

		if (!z) {
			/* Revoke now: a peer still reading would fault. */
			t->x->ops->unexpose(t->x, key);
			if (mem)
				__dfg_sys_munmap(mem, len);
			return;
		}
		t->zombies = z;
		t->cap_zombies = cap;
	}
	t->zombies[t->nr_zombies++] = (struct dfg_zombie){ *key, mem, len };
}

void dfg_team_zombies_free(struct dfg_team *t)
{
	while (t->nr_zombies) {
		struct dfg_zombie *z = &t->zombies[--t->nr_zombies];

		t->x->ops->unexpose(t->x, &z->key);
		if (z->mem)
			__dfg_sys_munmap(z->mem, z->len);
	}
	t->tainted = false;
}

static void dfg_scratch_free(struct dfg_team *t)
{
	if (!t->scratch.mem)
		return;
	if (t->tainted) {
		dfg_zombie_add(t, &t->scratch.key, t->scratch.mem,
			       t->scratch.size);
	} else {
		t->x->ops->unexpose(t->x, &t->scratch.key);
		__dfg_sys_munmap(t->scratch.mem, t->scratch.size);
	}
	t->scratch.mem = NULL;
	t->scratch.size = 0;
}

int dfg_team_leave(struct dfg_team *t)
{
	int ret;

	if (!t)
		return -EINVAL;
	if (t->tainted) {
		/*
		 * A call failed since the last barrier: peers may still read
		 * what it exposed, and our scratch. Unmap our side only: the
		 * pinned pages stay for their views until the graph's death
		 * unexports them; never revoke under a reader.
		 */
		for (unsigned int i = 0; i < t->nr_zombies; i++)
			if (t->zombies[i].mem)
				__dfg_sys_munmap(t->zombies[i].mem,
						 t->zombies[i].len);
		t->nr_zombies = 0;
		if (t->scratch.mem)
			__dfg_sys_munmap(t->scratch.mem, t->scratch.size);
		t->scratch.mem = NULL;
		t->scratch.size = 0;
	}
	/* The leaders' team exposes through our transport: first. */
	dfg_hier_free(t->hier);
	dfg_a2a_free(t);
	dfg_put_free(t);
	dfg_inbox_free(t);
	dfg_scratch_free(t);
	dfg_team_zombies_free(t);
	free(t->zombies);
	t->x->ops->destroy(t->x);
	ret = 0;
	/* A network team has no kernel team and no graph. */
	if (t->kt) {
		ret = dfg_kteam_leave(t->kt);
		dfg_kteam_close(t->kt);
		__dfg_sys_close(t->graph_fd);
	}
	free(t->stash);
	free(t);
	return ret;
}

int dfg_team_failure(const struct dfg_team *t, struct dfg_team_failure *f)
{
	__u64 why = t ? t->why : dfg_join_why;
	unsigned int who = dfg_xwhy_rank(why);

	if (!f)
		return -EINVAL;
	if (!dfg_xwhy_what(why) || dfg_xwhy_what(why) >= DFG_TEAM_FAIL_NR)
		return -ENOENT;
	*f = (struct dfg_team_failure){
		.what = (int)dfg_xwhy_what(why),
		.rank = who == DFG_XWHY_NOBODY ? -1 : (int)who,
		.err = dfg_xwhy_err(why),
		.seq = t ? t->why_seq : 0,
	};
	return 0;
}

const char *dfg_team_fail_name(int what)
{
	static const char *const names[DFG_TEAM_FAIL_NR] = {
		[DFG_TEAM_FAIL_NONE] = "none",
		[DFG_TEAM_FAIL_KILLED] = "killed",
		[DFG_TEAM_FAIL_LINK] = "link",
		[DFG_TEAM_FAIL_TIMEOUT] = "timeout",
		[DFG_TEAM_FAIL_MISMATCH] = "mismatch",
		[DFG_TEAM_FAIL_ERROR] = "error",
	};

	return what >= 0 && what < DFG_TEAM_FAIL_NR ? names[what] : "?";
}

unsigned int dfg_team_rank(const struct dfg_team *t)
{
	return t ? t->rank : 0;
}

unsigned int dfg_team_size(const struct dfg_team *t)
{
	return t ? t->size : 0;
}

int dfg_team_add_arena(struct dfg_team *t, struct dfg_arena *a)
{
	if (!t || !a)
		return -EINVAL;
	if (!t->kt)
		return -EOPNOTSUPP;
	return dfg_xport_shm_add_arena(t->x, a);
}

int dfg_coll_set_algo(struct dfg_team *t, enum dfg_coll_kind kind,
		      enum dfg_coll_algo algo)
{
	if (!t || !dfg_coll_algo_valid(kind, algo))
		return -EINVAL;
	t->force[kind] = algo;
	return 0;
}

enum dfg_coll_algo dfg_coll_last_algo(const struct dfg_team *t,
				      enum dfg_coll_kind kind)
{
	if (!t || (unsigned int)kind >= DFG_COLL_KIND_NR)
		return DFG_ALGO_AUTO;
	return t->last[kind];
}

int dfg_scratch_reserve(struct dfg_team *t, size_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int saved = errno;
	void *mem;
	int ret;

	if (size <= t->scratch.size)
		return 0;
	if (size > SIZE_MAX - pg)
		return -ENOMEM;
	size = (size + pg - 1) & ~(pg - 1);
	dfg_scratch_free(t);
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		ret = -errno;
		errno = saved;
		return ret;
	}
	ret = t->x->ops->expose(t->x, mem, size, DFG_XPORT_READ |
				DFG_XPORT_WRITE | DFG_XPORT_KEEP,
				&t->scratch.key);
	if (ret) {
		__dfg_sys_munmap(mem, size);
		return ret;
	}
	t->scratch.mem = mem;
	t->scratch.size = size;
	return 0;
}

int dfg_area_share(struct dfg_call *c, size_t size, void **mem, size_t *len,
		   struct dfg_xkey *keys)
{
	struct dfg_team *t = c->t;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), count = c->count;
	int saved = errno, op = c->op, ret;
	unsigned int i;
	void *m;

	*len = (size + pg - 1) & ~(pg - 1);
	m = mmap(NULL, *len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		ret = -errno;
		errno = saved;
		return ret;
	}
	ret = t->x->ops->expose(t->x, m, *len, DFG_XPORT_READ |
				DFG_XPORT_WRITE | DFG_XPORT_KEEP,
				&keys[t->rank]);
	if (ret) {
		__dfg_sys_munmap(m, *len);
		return ret;
	}
	*mem = m;
	/* The keys' messages carry no arguments: members that disagree
	 * on them set their areas up together all the same. */
	c->count = 0;
	c->op = 0;
	for (i = 1; i < t->size && !ret; i++)
		ret = dfg_call_send(c, (t->rank + i) % t->size, &keys[t->rank],
				    sizeof(keys[t->rank]));
	for (i = 1; i < t->size && !ret; i++) {
		unsigned int src = (t->rank + t->size - i) % t->size;

		ret = dfg_call_recv(c, src, &keys[src], sizeof(keys[src]));
	}
	c->count = count;
	c->op = op;
	return ret;
}

/* A reason that breaks the team for good: a member is lost. */
static bool dfg_why_lost(__u64 why)
{
	return dfg_xwhy_what(why) == DFG_TEAM_FAIL_KILLED ||
	       dfg_xwhy_what(why) == DFG_TEAM_FAIL_LINK;
}

/* Why @t is broken: the transports', else a death nobody named. */
static __u64 dfg_team_lost_why(struct dfg_team *t, int ret)
{
	__u64 why = t->lost;

	if (!why)
		why = dfg_xport_why(t->x);
	if (!why && t->hier && t->hier->node)
		why = dfg_xport_why(t->hier->node->x);
	if (!why)
		why = dfg_xwhy_pack(ret == -ECANCELED ? DFG_TEAM_FAIL_ERROR :
				    DFG_TEAM_FAIL_KILLED, ret, DFG_XWHY_NOBODY,
				    t->seq);
	return why;
}

int dfg_call_begin(struct dfg_call *c, struct dfg_team *t,
		   enum dfg_coll_kind kind, size_t bytes)
{
	int ret = t->x->ops->broken(t->x);

	if (!ret)
		ret = dfg_hier_broken(t->hier);
	if (!ret && t->lost)
		ret = -EOWNERDEAD;
	*c = (struct dfg_call){ .t = t, .x = t->x, .kind = kind };
	/* Sub-teams' reasons are this call's only once they fail in it. */
	if (t->hier && t->hier->node)
		t->hier->node->why = 0;
	if (t->hier && t->hier->lead)
		t->hier->lead->why = 0;
	if (ret) {
		/*
		 * Refused: the peers that wait for us in this call (the
		 * node's members in its node calls too) fail now, told why.
		 */
		__u64 why = dfg_team_lost_why(t, ret);

		++t->seq;
		dfg_xport_abort(t->x, t->seq, why);
		dfg_hier_refuse(t->hier, t->seq, why);
		t->why = why;
		t->why_seq = t->seq;
		if (dfg_why_lost(why))
			t->lost = why;
		return ret;
	}
	t->why = 0;
	c->seq = ++t->seq;
	t->x->ops->begin(t->x, c->seq);
	if (kind < DFG_COLL_KIND_NR) {
		c->algo = dfg_coll_pick(t, kind, bytes);
		t->last[kind] = c->algo;
	}
	c->started = true;
	return 0;
}

void dfg_join_why_set(__u64 why)
{
	dfg_join_why = why;
}

__u64 dfg_call_why(struct dfg_call *c, int ret)
{
	struct dfg_team *t = c->t;
	__u64 why = 0;

	if (ret == -EPROTO || ret == -EOWNERDEAD || ret == -ECANCELED)
		why = dfg_xport_why(c->x);
	if (why)
		return why;
	if (ret == -EOWNERDEAD || ret == -ECANCELED)
		return dfg_team_lost_why(t, ret);
	/* A peer's abort without a reason, or out of sequence: unknown. */
	if (ret == -EPROTO)
		return dfg_xwhy_pack(DFG_TEAM_FAIL_ERROR, ret, DFG_XWHY_NOBODY,
				     c->seq);
	/* Our arguments are unusable, or differ from a peer's. */
	if (ret == -EINVAL)
		return dfg_xwhy_pack(DFG_TEAM_FAIL_MISMATCH, ret, t->top_rank,
				     c->seq);
	return dfg_xwhy_pack(DFG_TEAM_FAIL_ERROR, ret, t->top_rank, c->seq);
}

int dfg_why_errno(const struct dfg_team *t, __u64 why, int ret)
{
	unsigned int who = dfg_xwhy_rank(why);

	switch (dfg_xwhy_what(why)) {
	case DFG_TEAM_FAIL_KILLED:
	case DFG_TEAM_FAIL_LINK:
		return -EOWNERDEAD;
	case DFG_TEAM_FAIL_MISMATCH:
		return -EINVAL;
	case DFG_TEAM_FAIL_TIMEOUT:
		return -ETIMEDOUT;
	case DFG_TEAM_FAIL_ERROR:
		/* Another member's own failure: ours is that it aborted. */
		return who == DFG_XWHY_NOBODY || who == t->top_rank ? ret :
		       -ECONNABORTED;
	default:
		return ret;
	}
}

int dfg_call_end(struct dfg_call *c, int ret)
{
	struct dfg_team *t = c->t;

	if (!c->x)
		return ret;
	if (ret < 0) {
		/*
		 * Why, told to the members that wait for us (a peer's
		 * reason passed on as it came): they return its errno.
		 */
		__u64 why = c->why ? c->why : dfg_call_why(c, ret);

		if (c->started) {
			dfg_xport_abort(c->x, c->seq, why);
			t->tainted = true;
		}
		ret = dfg_why_errno(t, why, ret);
		t->why = why;
		t->why_seq = c->seq;
		if (dfg_why_lost(why))
			t->lost = why;
	}
	for (unsigned int i = 0; i < c->nr_unexpose; i++) {
		if (ret < 0)
			dfg_zombie_add(t, &c->unexpose[i], NULL, 0);
		else
			c->x->ops->unexpose(c->x, &c->unexpose[i]);
	}
	c->x->ops->release(c->x);
	return ret;
}

static void dfg_call_fill_hdr(const struct dfg_call *c,
			      struct dfg_call_hdr *h)
{
	*h = (struct dfg_call_hdr){
		.seq = c->seq, .kind = c->kind, .dtype = c->dtype,
		.count = c->count, .op = c->op, .root = c->root,
		.outer = c->t->outer,
	};
}

int dfg_call_send(struct dfg_call *c, unsigned int peer, const void *buf,
		  size_t len)
{
	unsigned char msg[DFG_XPORT_MSG_MAX];
	struct dfg_call_hdr h;

	if (len > DFG_CALL_PAYLOAD_MAX)
		return -EMSGSIZE;
	dfg_call_fill_hdr(c, &h);
	memcpy(msg, &h, sizeof(h));
	if (len)
		memcpy(msg + sizeof(h), buf, len);
	return c->x->ops->msg_send(c->x, peer, msg, sizeof(h) + len);
}

int dfg_call_recv(struct dfg_call *c, unsigned int src, void *buf,
		  size_t len)
{
	return dfg_call_recv_op(c, src, buf, len, NULL);
}

int dfg_call_recv_op(struct dfg_call *c, unsigned int src, void *buf,
		     size_t len, int *op)
{
	struct dfg_stash *st = &c->t->stash[src];
	unsigned char msg[DFG_XPORT_MSG_MAX];
	struct dfg_call_hdr h, mine;
	int n;

	for (;;) {
		if (st->valid) {
			n = st->len;
			memcpy(msg, st->msg, n);
			st->valid = false;
		} else {
			n = c->x->ops->msg_recv(c->x, src, msg, sizeof(msg));
			if (n < 0)
				return n;
		}
		if ((size_t)n < sizeof(h))
			return -EPROTO;
		memcpy(&h, msg, sizeof(h));
		if (h.seq >= c->seq)
			break;
		/* Left over from a call that was aborted: drop it. */
	}
	if (h.seq > c->seq) {
		st->valid = true;
		st->len = n;
		memcpy(st->msg, msg, n);
		return -EPROTO;
	}
	dfg_call_fill_hdr(c, &mine);
	if (h.kind != mine.kind)
		return -EPROTO;
	if (op)
		*op = h.op;
	if (h.dtype != mine.dtype || h.count != mine.count ||
	    h.op != mine.op || h.root != mine.root || h.outer != mine.outer)
		return -EINVAL;
	if ((size_t)n != sizeof(h) + len)
		return -EPROTO;
	if (len)
		memcpy(buf, msg + sizeof(h), len);
	return 0;
}

/* Entry points. */

static bool dfg_overlap(const void *a, const void *b, size_t len)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return len && (x < y ? y - x < len : x - y < len);
}

/* A team of one: the result is the input. */
static int dfg_alone(struct dfg_call *c, size_t bytes)
{
	if (c->rbuf && c->sbuf != c->rbuf && bytes)
		dfg_copy(c->rbuf, c->sbuf, bytes);
	return 0;
}

/* Common checks of the reductions; sets c->sbuf, c->red, c->esize. */
static int dfg_red_args(struct dfg_call *c, const void *sbuf, void *rbuf,
			size_t count, size_t rcount, enum dfg_dtype dtype,
			int op, bool need_rbuf)
{
	int ret = dfg_reducer_get(op, dtype, &c->red);

	c->count = count;
	c->dtype = dtype;
	c->op = op;
	if (ret)
		return ret;
	c->esize = c->red.esize;
	if (count > SIZE_MAX / c->esize)
		return -EOVERFLOW;
	c->rbuf = rbuf;
	c->in_place = sbuf == DFG_IN_PLACE;
	c->sbuf = c->in_place ? rbuf : sbuf;
	if (!count)
		return 0;
	if ((need_rbuf || c->in_place) && !rbuf)
		return -EINVAL;
	if (!c->sbuf)
		return -EINVAL;
	if (!c->in_place && rbuf &&
	    (dfg_overlap(c->sbuf, rbuf, count * c->esize) ||
	     dfg_overlap(c->sbuf, rbuf, rcount * c->esize)))
		return -EINVAL;
	return 0;
}

int dfg_allreduce(struct dfg_team *t, const void *sbuf, void *rbuf,
		  size_t count, enum dfg_dtype dtype, int op)
{
	struct dfg_call c;
	size_t esize = dfg_dtype_size(dtype);
	int ret;

	if (!t)
		return -EINVAL;
	ret = dfg_call_begin(&c, t, DFG_COLL_ALLREDUCE,
			     esize && count < SIZE_MAX / esize ?
			     count * esize : SIZE_MAX);
	if (ret)
		return ret;
	ret = dfg_red_args(&c, sbuf, rbuf, count, count, dtype, op, true);
	if (ret || !count)
		return dfg_call_end(&c, ret);
	if (t->size == 1)
		return dfg_call_end(&c, dfg_alone(&c, count * c.esize));
	return dfg_call_end(&c, dfg_coll_run(&c));
}

int dfg_reduce(struct dfg_team *t, const void *sbuf, void *rbuf,
	       size_t count, enum dfg_dtype dtype, int op, unsigned int root)
{
	struct dfg_call c;
	size_t esize = dfg_dtype_size(dtype);
	int ret;

	if (!t)
		return -EINVAL;
	ret = dfg_call_begin(&c, t, DFG_COLL_REDUCE,
			     esize && count < SIZE_MAX / esize ?
			     count * esize : SIZE_MAX);
	if (ret)
		return ret;
	c.root = root;
	ret = root >= t->size ? -EINVAL :
	      dfg_red_args(&c, sbuf, rbuf, count, count, dtype, op,
			   t->rank == root);
	if (!ret && t->rank != root && !c.in_place)
		c.rbuf = NULL;	/* not significant off the root */
	if (ret || !count)
		return dfg_call_end(&c, ret);
	if (t->size == 1)
		return dfg_call_end(&c, dfg_alone(&c, count * c.esize));
	return dfg_call_end(&c, dfg_coll_run(&c));
}

int dfg_reduce_scatter(struct dfg_team *t, const void *sbuf, void *rbuf,
		       size_t recvcount, enum dfg_dtype dtype, int op)
{
	struct dfg_call c;
	size_t esize = dfg_dtype_size(dtype);
	size_t bytes = SIZE_MAX;
	int ret;

	if (!t)
		return -EINVAL;
	if (esize && recvcount < SIZE_MAX / esize / t->size)
		bytes = recvcount * esize * t->size;
	ret = dfg_call_begin(&c, t, DFG_COLL_REDUCE_SCATTER, bytes);
	if (ret)
		return ret;
	/* c.count is the whole vector: size * recvcount elements. */
	ret = bytes == SIZE_MAX && esize ? -EOVERFLOW :
	      dfg_red_args(&c, sbuf, rbuf, recvcount * t->size, recvcount,
			   dtype, op, true);
	if (ret || !recvcount)
		return dfg_call_end(&c, ret);
	if (t->size == 1)
		return dfg_call_end(&c, dfg_alone(&c, recvcount * c.esize));
	return dfg_call_end(&c, dfg_coll_run(&c));
}

int dfg_allgather(struct dfg_team *t, const void *sbuf, void *rbuf,
		  size_t bytes)
{
	struct dfg_call c;
	int ret;

	if (!t)
		return -EINVAL;
	ret = dfg_call_begin(&c, t, DFG_COLL_ALLGATHER, bytes);
	if (ret)
		return ret;
	c.count = bytes;
	c.esize = 1;
	c.rbuf = rbuf;
	c.in_place = sbuf == DFG_IN_PLACE;
	c.sbuf = c.in_place ? (char *)rbuf + bytes * t->rank : sbuf;
	if (bytes > SIZE_MAX / t->size)
		ret = -EOVERFLOW;
	else if (bytes && (!rbuf || !c.sbuf))
		ret = -EINVAL;
	else if (!c.in_place && dfg_overlap(rbuf, c.sbuf, bytes * t->size))
		ret = -EINVAL;
	if (ret || !bytes)
		return dfg_call_end(&c, ret);
	if (t->size == 1)
		return dfg_call_end(&c, dfg_alone(&c, bytes));
	return dfg_call_end(&c, dfg_coll_run(&c));
}

int dfg_broadcast(struct dfg_team *t, void *buf, size_t bytes,
		  unsigned int root)
{
	struct dfg_call c;
	int ret;

	if (!t)
		return -EINVAL;
	ret = dfg_call_begin(&c, t, DFG_COLL_BROADCAST, bytes);
	if (ret)
		return ret;
	c.count = bytes;
	c.esize = 1;
	c.root = root;
	c.rbuf = buf;
	c.sbuf = buf;
	if (root >= t->size || (bytes && !buf))
		ret = -EINVAL;
	if (ret || !bytes || t->size == 1)
		return dfg_call_end(&c, ret);
	return dfg_call_end(&c, dfg_coll_run(&c));
}

int dfg_barrier(struct dfg_team *t)
{
	struct dfg_call c;
	int ret;

	if (!t)
		return -EINVAL;
	ret = dfg_call_begin(&c, t, DFG_COLL_BARRIER, 0);
	if (ret)
		return ret;
	ret = dfg_call_end(&c, dfg_coll_run(&c));
	/*
	 * Everyone entered this barrier, so nobody is in a failed call any
	 * more: its exposures can go.
	 */
	if (!ret && t->nr_zombies)
		dfg_team_zombies_free(t);
	else if (!ret)
		t->tainted = false;
	if (!ret)
		dfg_hier_clean(t->hier);
	return ret;
}

/* Buffers of a call. */

static size_t dfg_align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

int dfg_cbufs_setup(struct dfg_call *c, size_t src_bytes, size_t work_bytes,
		    void *user_work, size_t extra_bytes, struct dfg_cbufs *b)
{
	struct dfg_xport *x = c->x;
	struct dfg_team *t = c->t;
	bool staged = src_bytes <= DFG_STAGE_MAX &&
		      work_bytes <= DFG_STAGE_MAX;
	size_t off = 0, soff = 0, woff;
	int ret;

	*b = (struct dfg_cbufs){ 0 };
	if (staged)
		off += dfg_align64(src_bytes);
	woff = off;
	if (staged || !user_work)
		off += dfg_align64(work_bytes);
	if (off > SIZE_MAX - extra_bytes)
		return -ENOMEM;
	ret = dfg_scratch_reserve(t, off + extra_bytes);
	if (ret)
		return ret;
	b->extra = (char *)t->scratch.mem + off;

	if (staged) {
		if (src_bytes)
			dfg_copy(t->scratch.mem, c->sbuf, src_bytes);
		b->src = (char *)t->scratch.mem + soff;
		b->keys.src = t->scratch.key;
		b->keys.soff = soff;
	} else {
		/*
		 * Memory we write while peers read it is exposed writable:
		 * that pins the pages we write (an untouched page would else
		 * be pinned as the shared zero page, and our first store
		 * would move us to a copy the peers never see).
		 */
		bool alias = user_work && (const void *)user_work ==
					  (const void *)c->sbuf &&
			     work_bytes == src_bytes;

		b->src = c->sbuf;
		ret = x->ops->expose(x, b->src, src_bytes, DFG_XPORT_READ |
				     (alias ? DFG_XPORT_WRITE : 0),
				     &b->keys.src);
		if (ret)
			return ret;
		b->exp_src = true;
	}
	if (staged || !user_work) {
		b->work = (char *)t->scratch.mem + woff;
		b->keys.work = t->scratch.key;
		b->keys.woff = woff;
		b->out = user_work;
	} else if ((const void *)user_work == (const void *)b->src &&
		   work_bytes == src_bytes) {
		b->work = user_work;
		b->keys.work = b->keys.src;
	} else {
		b->work = user_work;
		ret = x->ops->expose(x, user_work, work_bytes, DFG_XPORT_READ |
				     DFG_XPORT_WRITE, &b->keys.work);
		if (ret) {
			dfg_cbufs_teardown(c, b);
			return ret;
		}
		b->exp_work = true;
	}
	return 0;
}

static void dfg_call_keep(struct dfg_call *c, struct dfg_xkey *key)
{
	if (c->nr_unexpose < DFG_CALL_EXPOSE_MAX)
		c->unexpose[c->nr_unexpose++] = *key;
	else
		c->x->ops->unexpose(c->x, key);
	key->kind = DFG_XKEY_NONE;
}

void dfg_cbufs_teardown(struct dfg_call *c, struct dfg_cbufs *b)
{
	if (b->exp_work)
		dfg_call_keep(c, &b->keys.work);
	if (b->exp_src)
		dfg_call_keep(c, &b->keys.src);
	b->exp_work = b->exp_src = false;
}

int dfg_ckeys_xchg(struct dfg_call *c, const struct dfg_ckeys *mine,
		   const unsigned int *to, unsigned int nto,
		   const unsigned int *from, unsigned int nfrom,
		   struct dfg_ckeys *keys)
{
	int ret;

	for (unsigned int i = 0; i < nto; i++) {
		ret = dfg_call_send(c, to[i], mine, sizeof(*mine));
		if (ret)
			return ret;
	}
	for (unsigned int i = 0; i < nfrom; i++) {
		ret = dfg_call_recv(c, from[i], &keys[from[i]],
				    sizeof(*keys));
		if (ret)
			return ret;
	}
	keys[c->t->rank] = *mine;
	return 0;
}

int dfg_call_done(struct dfg_call *c, __u32 val, const unsigned int *to,
		  unsigned int nto, const unsigned int *from,
		  unsigned int nfrom)
{
	int ret;

	for (unsigned int i = 0; i < nto; i++) {
		ret = c->x->ops->notify(c->x, to[i], DFG_SLOT_DONE,
					dfg_call_val(c, val));
		if (ret)
			return ret;
	}
	for (unsigned int i = 0; i < nfrom; i++) {
		ret = dfg_xport_wait_from(c->x, from[i], DFG_SLOT_DONE,
					  dfg_call_val(c, val));
		if (ret)
			return ret;
	}
	return 0;
}
