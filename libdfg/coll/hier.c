// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg collectives: the hierarchy of a team that spans machines
 * (DFG_ALGO_HIER).
 *
 * The members on one machine form a kernel team of their own (the node
 * team: shared memory, xport_shm.c), and each machine's lowest rank, its
 * leader, is a member of the leaders' team, which reaches the other
 * leaders over the team's own network transport: no new connection, a
 * view of the team's transport that renames ranks (sub_ops below). A
 * reduction is then the node's reduction into its leader, the leaders'
 * recursive halving across machines, and the node's broadcast from its
 * leader; a broadcast goes to the root's leader, across the leaders, and
 * down each node.
 *
 * Reduction order (the serial reference's, tests/coll_ref.h ref_hier()):
 * each node combines its members in rank order, ((x_a op x_b) op x_c)...
 * (the node team's inbox or direct algorithm, both in that order); the
 * nodes' partial results are then combined by recursive halving over the
 * nodes numbered by their leaders' ranks (fold, balanced tree, lower on
 * the left).
 *
 * Sequence numbers: every member makes the same calls on the parent team,
 * but not every member makes the same calls on the sub-teams (a rank whose
 * node failed skips the leaders' step). So each sub-call takes its number
 * from the parent call: the leaders' call is parent call S itself (its
 * words are the parent's, and the parent makes no other use of them in
 * S), the node's calls are 3S, 3S + 1 and 3S + 2 (HIER_PHASES: alltoallv
 * needs three, the others two). A member that fails aborts the node's
 * 3S + 2, so its node's members waiting in any of them fail at once, and
 * the parent call S, which is the leaders' call.
 *
 * Messages: the leaders' team reads the parent's per-pair mailboxes, so a
 * message of a later call that one of them receives early must be found
 * by whichever team makes that call: the stash moves between the two
 * teams around every leaders' call.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdio.h>
#include <unistd.h>

#include <dfg/dfg.h>
#include <dfg/graph.h>

#include "copy.h"
#include "coll.h"

/*
 * struct xsub - a view of a transport for a subset of its ranks
 * @x:		sub-ranks 0..size-1
 * @up:		the parent's transport (not owned)
 * @map:	sub-rank -> parent rank
 */
struct xsub {
	struct dfg_xport	x;
	struct dfg_xport	*up;
	unsigned int		*map;
};

static inline struct xsub *to_xsub(struct dfg_xport *x)
{
	return (struct xsub *)x;
}

/* The parent's word of our word @word (inbox words renamed, atomics kept). */
static unsigned int sub_word(struct xsub *s, unsigned int word)
{
	unsigned int n = s->x.size * DFG_XPORT_SLOTS;

	if (word < n)
		return dfg_xport_inbox(s->map[word / DFG_XPORT_SLOTS],
				       word % DFG_XPORT_SLOTS);
	return dfg_xport_atomic(s->up, word - n);
}

static int sub_expose(struct dfg_xport *x, const void *addr, size_t len,
		      unsigned int flags, struct dfg_xkey *key)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->expose(s->up, addr, len, flags, key);
}

static void sub_unexpose(struct dfg_xport *x, struct dfg_xkey *key)
{
	struct xsub *s = to_xsub(x);

	s->up->ops->unexpose(s->up, key);
}

static void *sub_peer_ptr(struct dfg_xport *x, unsigned int peer,
			  const struct dfg_xkey *key, size_t off, size_t len,
			  int *err)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->peer_ptr(s->up, s->map[peer], key, off, len, err);
}

static int sub_get(struct dfg_xport *x, unsigned int peer,
		   const struct dfg_xkey *key, size_t off, void *local,
		   const struct dfg_xkey *lkey, size_t len)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->get(s->up, s->map[peer], key, off, local, lkey,
			       len);
}

static int sub_put(struct dfg_xport *x, unsigned int peer,
		   const struct dfg_xkey *key, size_t off, const void *local,
		   const struct dfg_xkey *lkey, size_t len)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->put(s->up, s->map[peer], key, off, local, lkey,
			       len);
}

static int sub_complete(struct dfg_xport *x, int ticket)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->complete(s->up, ticket);
}

static int sub_flush(struct dfg_xport *x)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->flush(s->up);
}

static int sub_notify(struct dfg_xport *x, unsigned int peer,
		      unsigned int slot, __u64 value)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->notify(s->up, s->map[peer], slot, value);
}

static int sub_fadd(struct dfg_xport *x, unsigned int peer, unsigned int idx,
		    __u64 add, __u64 *old)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->fadd(s->up, s->map[peer], idx, add, old);
}

static int sub_wait(struct dfg_xport *x, unsigned int word, __u64 value,
		    __u64 *now)
{
	struct xsub *s = to_xsub(x);

	if (word >= DFG_XPORT_WORDS(x->size))
		return -EINVAL;
	return s->up->ops->wait(s->up, sub_word(s, word), value, now);
}

static __u64 sub_peek(struct dfg_xport *x, unsigned int word)
{
	struct xsub *s = to_xsub(x);

	if (word >= DFG_XPORT_WORDS(x->size))
		return 0;
	return s->up->ops->peek(s->up, sub_word(s, word));
}

static int sub_msg_send(struct dfg_xport *x, unsigned int peer,
			const void *buf, size_t len)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->msg_send(s->up, s->map[peer], buf, len);
}

static int sub_msg_recv(struct dfg_xport *x, unsigned int src, void *buf,
			size_t cap)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->msg_recv(s->up, s->map[src], buf, cap);
}

static void *sub_inbox(struct dfg_xport *x, unsigned int src,
		       unsigned int dst, __u64 seq, size_t *size)
{
	struct xsub *s = to_xsub(x);

	if (!s->up->ops->inbox)
		return NULL;
	return s->up->ops->inbox(s->up, s->map[src], s->map[dst], seq, size);
}

static int sub_wait_begun(struct dfg_xport *x, unsigned int peer, __u64 seq)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->wait_begun(s->up, s->map[peer], seq);
}

/*
 * The put all-to-all's operations (alltoall_put.c), which the leaders'
 * all-to-all runs: they use words in memory the leaders exposed, none of
 * the parent's atomic words. Only a parent that has them is asked.
 */
static int sub_fence(struct dfg_xport *x)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->fence ? s->up->ops->fence(s->up) : -EOPNOTSUPP;
}

static int sub_complete_local(struct dfg_xport *x)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->complete_local ?
	       s->up->ops->complete_local(s->up) : -EOPNOTSUPP;
}

static int sub_wait_eq(struct dfg_xport *x, const __u64 *word, __u64 value,
		       unsigned int src)
{
	struct xsub *s = to_xsub(x);

	if (!s->up->ops->wait_eq || src >= x->size)
		return -EOPNOTSUPP;
	return s->up->ops->wait_eq(s->up, word, value, s->map[src]);
}

static int sub_begin(struct dfg_xport *x, __u64 seq)
{
	struct xsub *s = to_xsub(x);

	x->seq = seq;
	return s->up->ops->begin(s->up, seq);
}

static int sub_abort(struct dfg_xport *x, __u64 seq)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->abort(s->up, seq);
}

static int sub_abort_why(struct dfg_xport *x, __u64 seq, __u64 why)
{
	struct xsub *s = to_xsub(x);

	return dfg_xport_abort(s->up, seq, why);
}

/* The parent's reasons name the parent's ranks: the outermost team's. */
static __u64 sub_why(struct dfg_xport *x, __u64 seq)
{
	struct xsub *s = to_xsub(x);

	return dfg_xport_why_at(s->up, seq);
}

static int sub_broken(struct dfg_xport *x)
{
	struct xsub *s = to_xsub(x);

	return s->up->ops->broken(s->up);
}

static void sub_release(struct dfg_xport *x)
{
	struct xsub *s = to_xsub(x);

	s->up->ops->release(s->up);
}

static void sub_destroy(struct dfg_xport *x)
{
	struct xsub *s = to_xsub(x);

	free(s->map);
	free(s);
}

static const struct dfg_xport_ops sub_ops = {
	.name = "sub", .expose = sub_expose, .unexpose = sub_unexpose,
	.peer_ptr = sub_peer_ptr, .get = sub_get, .put = sub_put,
	.complete = sub_complete, .flush = sub_flush, .notify = sub_notify,
	.fadd = sub_fadd, .wait = sub_wait, .peek = sub_peek,
	.msg_send = sub_msg_send, .msg_recv = sub_msg_recv,
	.inbox = sub_inbox, .wait_begun = sub_wait_begun,
	.fence = sub_fence, .complete_local = sub_complete_local,
	.wait_eq = sub_wait_eq, .begin = sub_begin, .abort = sub_abort,
	.abort_why = sub_abort_why,
	.why = sub_why, .broken = sub_broken,
	.release = sub_release, .destroy = sub_destroy,
};

/* The sub-teams run what the hierarchy asks of them, nothing forced. */
static void hier_sub_defaults(struct dfg_team *sub, const struct dfg_team *t)
{
	for (int k = 0; k < DFG_COLL_KIND_NR; k++)
		sub->force[k] = DFG_ALGO_AUTO;
	sub->segments = t->segments;
}

int dfg_hier_setup(struct dfg_team *t, const unsigned int *key,
		   struct dfg_team *node, struct dfg_hier **out)
{
	unsigned int n = t->size, me = t->rank, k;
	struct dfg_hier *h;
	struct xsub *s;
	int ret = -ENOMEM;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->node_of = calloc(n, sizeof(*h->node_of));
	h->lrank = calloc(n, sizeof(*h->lrank));
	h->leader = calloc(n, sizeof(*h->leader));
	h->nsize = calloc(n, sizeof(*h->nsize));
	h->members = calloc(n, sizeof(*h->members));
	if (!h->node_of || !h->lrank || !h->leader || !h->nsize ||
	    !h->members)
		goto err;
	/* Nodes numbered by their lowest rank, ranks within by rank. */
	for (unsigned int r = 0; r < n; r++) {
		for (k = 0; k < h->nodes; k++)
			if (key[h->leader[k]] == key[r])
				break;
		if (k == h->nodes)
			h->leader[h->nodes++] = r;
		h->node_of[r] = k;
		h->lrank[r] = h->nsize[k]++;
		if (h->nsize[k] > h->nsize_max)
			h->nsize_max = h->nsize[k];
	}
	ret = -EINVAL;
	k = h->node_of[me];
	if (h->nodes < 2 || h->nodes == n ||
	    (h->nsize[k] > 1) != !!node ||
	    (node && (node->size != h->nsize[k] ||
		      node->rank != h->lrank[me])))
		goto err;
	h->node = node;
	if (h->leader[k] == me) {
		ret = -ENOMEM;
		s = calloc(1, sizeof(*s));
		if (!s)
			goto err;
		s->map = calloc(h->nodes, sizeof(*s->map));
		if (!s->map) {
			free(s);
			goto err;
		}
		memcpy(s->map, h->leader, h->nodes * sizeof(*s->map));
		s->up = t->x;
		s->x = (struct dfg_xport){ .ops = &sub_ops, .rank = k,
					   .size = h->nodes, .top = s->map };
		ret = dfg_team_new(h->nodes, k, &h->lead);
		if (ret) {
			sub_destroy(&s->x);
			goto err;
		}
		h->lead->x = &s->x;
		h->lead->top_rank = t->top_rank;
		hier_sub_defaults(h->lead, t);
	}
	if (node) {
		/* Reasons from the node team name the team's ranks. */
		for (unsigned int r = 0; r < n; r++)
			if (h->node_of[r] == k)
				h->members[h->lrank[r]] = r;
		node->x->top = h->members;
		node->top_rank = t->top_rank;
		hier_sub_defaults(node, t);
		/*
		 * Members wait in the node team for most of a hierarchical
		 * call: the team's transport keeps answering its peers.
		 */
		if (node->kt)
			dfg_xport_shm_idle(node->x, t->x);
	}
	*out = h;
	return 0;
err:
	h->node = NULL;
	dfg_hier_free(h);
	return ret;
}

/* Node calls per call of the team (see above), and the last of call @seq. */
#define HIER_PHASES	3

static __u64 hier_node_last(__u64 seq)
{
	return HIER_PHASES * seq + HIER_PHASES - 1;
}

void dfg_hier_free(struct dfg_hier *h)
{
	if (!h)
		return;
	if (h->lead)
		dfg_team_leave(h->lead);
	if (h->node)
		dfg_team_leave(h->node);
	free(h->tmp);
	free(h->node_of);
	free(h->lrank);
	free(h->leader);
	free(h->nsize);
	free(h->members);
	free(h);
}

void dfg_hier_clean(struct dfg_hier *h)
{
	if (!h)
		return;
	if (h->lead)
		dfg_team_zombies_free(h->lead);
	if (h->node)
		dfg_team_zombies_free(h->node);
}

int dfg_hier_broken(struct dfg_hier *h)
{
	return h && h->node ? h->node->x->ops->broken(h->node->x) : 0;
}

/*
 * Call @seq is refused (the team is broken): this rank will not come to
 * its node calls, 3 @seq to 3 @seq + 2, so the node's members waiting
 * for it there fail now. (The other leaders learn it from the team's
 * transport: its abort of @seq, or the break it tells.)
 */
void dfg_hier_refuse(struct dfg_hier *h, __u64 seq, __u64 why)
{
	if (h && h->node)
		dfg_xport_abort(h->node->x, hier_node_last(seq), why);
}

/*
 * This machine's graph, made by its leader (@lead) or attached by name;
 * the graph descriptor or -errno.
 */
static int hier_graph(const char *name, bool lead)
{
	struct dfg *d;
	int g;

	g = dfg_open(&d, DFG_OPEN_NO_RING);
	if (g)
		return g;
	g = lead ? dfg_graph_create(d, name, 0600, DFG_GRAPH_O_CLOEXEC) :
		   dfg_graph_attach(d, name, DFG_GRAPH_O_CLOEXEC);
	dfg_close(d);
	return g;
}

/* Everyone's @mine (0 or -errno): the first failure anywhere, or 0. */
static int hier_agree(struct dfg_team *t, dfg_allgather_fn ag, void *arg,
		      int mine, int *worst)
{
	__s32 v = mine, *all = calloc(t->size, sizeof(*all));
	int ret;

	if (!all)
		return -ENOMEM;
	ret = ag(&v, all, sizeof(v), arg);
	*worst = 0;
	for (unsigned int r = 0; !ret && r < t->size && !*worst; r++)
		*worst = all[r];
	free(all);
	return ret;
}

/*
 * key[r]: the lowest rank on rank r's machine; *@nodes: machines. A rank
 * whose machine is unknown ("") is a machine of its own.
 */
static int hier_keys(struct dfg_team *t, unsigned int *key,
		     unsigned int *nodes)
{
	const char *a, *b;
	__u64 token;
	int ret;

	*nodes = 0;
	for (unsigned int r = 0; r < t->size; r++) {
		ret = dfg_xport_ucx_node(t->x, r, &a, &token);
		if (ret)
			return ret;
		key[r] = r;
		for (unsigned int q = 0; *a && q < r; q++) {
			ret = dfg_xport_ucx_node(t->x, q, &b, &token);
			if (ret)
				return ret;
			if (!strcmp(a, b)) {
				key[r] = key[q];
				break;
			}
		}
		*nodes += key[r] == r;
	}
	return 0;
}

int dfg_hier_form(struct dfg_team *t, dfg_allgather_fn ag, void *arg,
		  int timeout_ms)
{
	unsigned int n = t->size, me = t->rank, m = 0, lr = 0, nodes;
	struct dfg_team *node = NULL;
	char name[DFG_NAME_MAX];
	int g = -1, st = 0, worst, ret;
	unsigned int *key;
	const char *id;
	__u64 token;

	key = calloc(n, sizeof(*key));
	if (!key)
		return -ENOMEM;
	ret = hier_keys(t, key, &nodes);
	/* The hierarchy needs 2 machines, and 2 ranks on one of them. */
	if (ret || nodes < 2 || nodes == n)
		goto out;
	for (unsigned int r = 0; r < n; r++) {
		if (key[r] != key[me])
			continue;
		if (r == me)
			lr = m;
		m++;
	}
	/* The machine's kernel team: in a graph named by its leader. */
	ret = dfg_xport_ucx_node(t->x, key[me], &id, &token);
	if (ret)
		goto out;
	snprintf(name, sizeof(name), "dfg-node-%016llx-%u",
		 (unsigned long long)token, key[me]);
	if (m > 1 && me == key[me]) {
		g = hier_graph(name, true);
		st = g < 0 ? g : 0;
	}
	/* Every graph exists (or every rank knows one does not). */
	ret = hier_agree(t, ag, arg, st, &worst);
	if (ret || worst)
		goto out;
	if (m > 1 && me != key[me]) {
		g = hier_graph(name, false);
		st = g < 0 ? g : 0;
	}
	if (!st && m > 1)
		st = dfg_team_join(g, "node", m, lr, timeout_ms, &node);
	if (!st) {
		st = dfg_hier_setup(t, key, node, &t->hier);
		if (!st)
			node = NULL;
	}
	/* All ranks have the hierarchy, or none: a flat team. */
	ret = hier_agree(t, ag, arg, st, &worst);
	if (ret || worst) {
		dfg_hier_free(t->hier);
		t->hier = NULL;
	}
out:
	if (node)
		dfg_team_leave(node);
	/* The node team holds the graph: ours goes. */
	if (g >= 0)
		close(g);
	free(key);
	return ret;
}

/* At least @len bytes of private memory (not exposed). */
static void *hier_tmp(struct dfg_hier *h, size_t len)
{
	if (len > h->tmp_size) {
		void *p = malloc(len);

		if (!p)
			return NULL;
		free(h->tmp);
		h->tmp = p;
		h->tmp_size = len;
	}
	return h->tmp;
}

/* Messages of later calls go where the next caller will look. */
static void hier_stash_move(struct dfg_team *from, struct dfg_team *to,
			    const unsigned int *from_rank,
			    const unsigned int *to_rank, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct dfg_stash *a = &from->stash[from_rank ?
						   from_rank[i] : i];
		struct dfg_stash *b = &to->stash[to_rank ? to_rank[i] : i];

		if (a->valid && !b->valid) {
			*b = *a;
			a->valid = false;
		}
	}
}

/* What a sub-call tells of its parent call: kind and root. */
static __u64 hier_outer(const struct dfg_call *c)
{
	return (__u64)(c->kind + 1) << 32 | c->root;
}

/* Number the next node call 3S + @phase. */
static struct dfg_team *hier_node(struct dfg_call *c, unsigned int phase)
{
	struct dfg_team *node = c->t->hier->node;

	node->seq = HIER_PHASES * c->seq + phase - 1;
	node->outer = hier_outer(c);
	return node;
}

/* The leaders' call is the parent's call S. */
static struct dfg_team *hier_lead_begin(struct dfg_call *c)
{
	struct dfg_hier *h = c->t->hier;

	h->lead->seq = c->seq - 1;
	h->lead->outer = hier_outer(c);
	hier_stash_move(c->t, h->lead, h->leader, NULL, h->nodes);
	return h->lead;
}

static int hier_lead_end(struct dfg_call *c, int ret)
{
	struct dfg_hier *h = c->t->hier;

	hier_stash_move(h->lead, c->t, NULL, h->leader, h->nodes);
	return ret;
}

/* A death seen by the team's transport or by the node's. */
static int hier_broken(struct dfg_call *c)
{
	int b = c->x->ops->broken(c->x);

	return b ? b : dfg_hier_broken(c->t->hier);
}

/*
 * Why our node call of call @seq failed: the node team's reason, unless
 * it is unknown (an abort whose reason is not stamped for the node call
 * we were in). A member that fails call S aborts the node's last call of
 * S, 3S + 2, and stamps its reason for that call (hier_fail()), so a
 * member that waited in 3S or 3S + 1 finds it there.
 */
static __u64 hier_node_why(struct dfg_hier *h, __u64 seq)
{
	__u64 why = h->node->why, w;

	if (why && dfg_xwhy_rank(why) != DFG_XWHY_NOBODY)
		return why;
	w = dfg_xport_why_at(h->node->x, hier_node_last(seq));
	return w ? w : why;
}

/*
 * A failed step: the node's members that wait for us in this call's node
 * calls (or will) fail now; the leaders wait on parent words, which
 * dfg_call_end() aborts. Both are told why: the reason of the sub-call
 * that failed (its dfg_call_end() found it: a peer's abort carries it,
 * through the network or the node's shared memory), a death this rank's
 * transports know of, or this rank's own error. A member dying on
 * another machine so reaches every survivor as a death with its rank,
 * by whichever way comes first (an abort, its own liveness connection);
 * no rank waits to find out which (it used to look for a death for up
 * to 500 ms after an abort).
 */
static int hier_fail(struct dfg_call *c, int ret)
{
	struct dfg_hier *h = c->t->hier;
	__u64 why = 0, w;
	int b;

	if (h->lead && h->lead->why)
		why = h->lead->why;
	else if (h->node)
		why = hier_node_why(h, c->seq);
	b = hier_broken(c);
	if (b && dfg_xwhy_what(why) != DFG_TEAM_FAIL_KILLED &&
	    dfg_xwhy_what(why) != DFG_TEAM_FAIL_LINK) {
		w = dfg_xport_why(c->x);
		if (!w && h->node)
			w = dfg_xport_why(h->node->x);
		why = w ? w : dfg_xwhy_pack(DFG_TEAM_FAIL_KILLED, b,
					    DFG_XWHY_NOBODY, c->seq);
	}
	if (!why)
		why = dfg_call_why(c, ret);
	c->why = why;
	if (h->node)
		dfg_xport_abort(h->node->x, hier_node_last(c->seq), why);
	return dfg_why_errno(c->t, why, b ? b : ret);
}

static int hier_done(struct dfg_call *c, int ret)
{
	return ret ? hier_fail(c, ret) : 0;
}

/*
 * The node's members in rank order into @dst on the leader (@src: ours;
 * @dst unused elsewhere). The node team's algorithm is chosen for its
 * order: the inbox where the vector fits it, else direct.
 */
static int hier_node_reduce(struct dfg_call *c, const void *src, void *dst,
			    size_t count)
{
	struct dfg_hier *h = c->t->hier;
	struct dfg_team *node;
	bool lead = h->leader[h->node_of[c->t->rank]] == c->t->rank;

	if (!h->node) {
		if (dst != src)
			dfg_copy(dst, src, count * c->esize);
		return 0;
	}
	node = hier_node(c, 0);
	node->force[DFG_COLL_REDUCE] =
		dfg_inbox_fits(node, DFG_COLL_REDUCE, count * c->esize) ?
		DFG_ALGO_INBOX : DFG_ALGO_DIRECT;
	if (!lead)
		return dfg_reduce(node, src, NULL, count, c->dtype, c->op, 0);
	return dfg_reduce(node, src == dst ? DFG_IN_PLACE : src, dst, count,
			  c->dtype, c->op, 0);
}

/*
 * The leaders' recursive halving, in place on @buf: the result at leader
 * @root, or at every leader for @root UINT_MAX.
 */
static int hier_lead_reduce(struct dfg_call *c, void *buf, size_t count,
			    unsigned int root)
{
	struct dfg_team *lead = hier_lead_begin(c);
	int ret;

	lead->force[DFG_COLL_ALLREDUCE] = DFG_ALGO_RHALVING;
	lead->force[DFG_COLL_REDUCE] = DFG_ALGO_RHALVING;
	if (root >= lead->size)
		ret = dfg_allreduce(lead, DFG_IN_PLACE, buf, count, c->dtype,
				    c->op);
	else if (root == lead->rank)
		ret = dfg_reduce(lead, DFG_IN_PLACE, buf, count, c->dtype,
				 c->op, root);
	else
		ret = dfg_reduce(lead, buf, NULL, count, c->dtype, c->op,
				 root);
	return hier_lead_end(c, ret);
}

static int hier_node_bcast(struct dfg_call *c, void *buf, size_t bytes,
			   unsigned int root)
{
	return dfg_broadcast(hier_node(c, 1), buf, bytes, root);
}

/* allreduce, reduce_scatter (@count: the whole vector) */
static int hier_allreduce_into(struct dfg_call *c, void *out, size_t count)
{
	struct dfg_hier *h = c->t->hier;
	int ret;

	ret = hier_node_reduce(c, c->sbuf, out, count);
	if (!ret && h->lead)
		ret = hier_lead_reduce(c, out, count, UINT_MAX);
	if (!ret && h->node)
		ret = hier_node_bcast(c, out, count * c->esize, 0);
	return ret;
}

int dfg_hier_allreduce(struct dfg_call *c)
{
	struct dfg_hier *h = c->t->hier;
	unsigned int me = c->t->rank, k = h->node_of[me];
	unsigned int rk = h->node_of[c->root];
	bool lead = h->leader[k] == me;
	void *part = NULL;
	int ret;

	if (c->kind == DFG_COLL_ALLREDUCE)
		return hier_done(c, hier_allreduce_into(c, c->rbuf,
							   c->count));
	/*
	 * reduce: into the root's leader, then (root not a leader) the
	 * node's broadcast on the root's node.
	 */
	if (me == c->root)
		part = c->rbuf;
	else if (lead || k == rk)
		part = hier_tmp(h, c->count * c->esize);
	if ((lead || k == rk) && !part)
		ret = -ENOMEM;
	else
		ret = hier_node_reduce(c, c->sbuf, part, c->count);
	if (!ret && h->lead)
		ret = hier_lead_reduce(c, part, c->count, rk);
	if (!ret && k == rk && h->leader[k] != c->root)
		ret = hier_node_bcast(c, part, c->count * c->esize, 0);
	return hier_done(c, ret);
}

/*
 * reduce_scatter: the whole vector reduced as allreduce does it, then
 * each member keeps its block. (The leaders could reduce-scatter by node
 * and the nodes scatter: less to move, when a node's blocks are
 * contiguous; not done yet.)
 */
int dfg_hier_reduce_scatter(struct dfg_call *c)
{
	struct dfg_hier *h = c->t->hier;
	size_t rc = c->count / c->t->size, e = c->esize;
	char *all = c->in_place ? c->rbuf : hier_tmp(h, c->count * e);
	int ret;

	if (!all)
		return -ENOMEM;
	ret = hier_allreduce_into(c, all, c->count);
	if (!ret)
		dfg_copy(c->rbuf, all + c->t->rank * rc * e, rc * e);
	return hier_done(c, ret);
}

/*
 * broadcast: on the root's node first (root not a leader), across the
 * leaders, then down every other node.
 */
int dfg_hier_broadcast(struct dfg_call *c)
{
	struct dfg_hier *h = c->t->hier;
	unsigned int me = c->t->rank, k = h->node_of[me];
	unsigned int rk = h->node_of[c->root];
	int ret = 0;

	if (k == rk && h->leader[rk] != c->root)
		ret = dfg_broadcast(hier_node(c, 0), c->rbuf, c->count,
				    h->lrank[c->root]);
	if (!ret && h->lead) {
		ret = dfg_broadcast(hier_lead_begin(c), c->rbuf, c->count, rk);
		ret = hier_lead_end(c, ret);
	}
	/* The root's node has it unless the root is its leader. */
	if (!ret && h->node && (k != rk || h->leader[rk] == c->root))
		ret = hier_node_bcast(c, c->rbuf, c->count, 0);
	return hier_done(c, ret);
}

/*
 * allgather (@count bytes per rank): the node's allgather (every member
 * gets its machine's blocks in node-rank order: the node team has no
 * gather, and the leader needs them all), the leaders' allgather of one
 * block per machine, padded to the largest machine (@pad members) so the
 * leaders' call has equal blocks, the leader's reordering into rank
 * order (a machine's members need not be consecutive ranks), and the
 * node's broadcast of the whole result. A member that is not a leader
 * gathers its machine's blocks into the front of its receive buffer,
 * which the broadcast overwrites.
 */
int dfg_hier_allgather(struct dfg_call *c)
{
	struct dfg_hier *h = c->t->hier;
	unsigned int me = c->t->rank, k = h->node_of[me], pad = h->nsize_max;
	size_t b = c->count, n = c->t->size;
	char *all = c->rbuf;
	int ret = 0;

	if (h->lead) {
		all = (size_t)h->nodes * pad > SIZE_MAX / b ? NULL :
		      hier_tmp(h, h->nodes * pad * b);
		if (!all)
			return hier_fail(c, -ENOMEM);
		all += k * pad * b;
	}
	/* In place, our block is at rank * b >= lrank * b: memmove. */
	memmove(all + h->lrank[me] * b, c->sbuf, b);
	if (h->node)
		ret = dfg_allgather(hier_node(c, 0), DFG_IN_PLACE, all, b);
	if (!ret && h->lead) {
		all -= k * pad * b;
		ret = dfg_allgather(hier_lead_begin(c), DFG_IN_PLACE, all,
				    pad * b);
		ret = hier_lead_end(c, ret);
		for (size_t r = 0; !ret && r < n; r++)
			dfg_copy((char *)c->rbuf + r * b, all +
				 (h->node_of[r] * pad + h->lrank[r]) * b, b);
	}
	if (!ret && h->node)
		ret = hier_node_bcast(c, c->rbuf, n * b, 0);
	return hier_done(c, ret);
}

/*
 * barrier: the node's barrier (every member of the machine entered), the
 * leaders' (every rank entered), the node's second barrier (the leader
 * is through, so every rank entered: the members may leave).
 */
int dfg_hier_barrier(struct dfg_call *c)
{
	struct dfg_hier *h = c->t->hier;
	int ret = 0;

	if (h->node)
		ret = dfg_barrier(hier_node(c, 0));
	if (!ret && h->lead)
		ret = hier_lead_end(c, dfg_barrier(hier_lead_begin(c)));
	if (!ret && h->node)
		ret = dfg_barrier(hier_node(c, 1));
	return hier_done(c, ret);
}

/*
 * The leaders' all-to-all: one block of @tile bytes per pair of
 * machines, by the put algorithm (alltoall_put.c), whose words live in
 * memory the leaders exposed: the parent's atomic words, which the
 * parent's own all-to-all engine counts arrivals on, stay untouched.
 * @bad: this machine's step failed (a mismatch, an error, not a death);
 * the leader takes part all the same, with unusable arguments, so that
 * every leader ends the exchange with -EINVAL and no leader's landing
 * slots are left half used (a put all-to-all that fails half way fails
 * the team's later ones).
 */
static int hier_lead_alltoall(struct dfg_call *c, const void *sl, void *rl,
			      size_t tile, bool bad)
{
	struct dfg_team *lead = hier_lead_begin(c);
	int ret;

	lead->force[DFG_COLL_ALLTOALL] = DFG_ALGO_PUT;
	ret = dfg_alltoall(lead, bad ? DFG_IN_PLACE : sl, rl, bad ? 0 : tile);
	return hier_lead_end(c, ret);
}

/*
 * A member's part of the node's allgather: a flag (its arguments are
 * unusable), then its send buffer.
 */
#define HIER_A2A_HDR	sizeof(__u64)

/*
 * A hierarchical all-to-all's bytes: *@row, one member's part of the
 * node's allgather; *@tile, the leaders' block (@pad members by @pad, so
 * that it is the same for every pair of machines); *@sz, this rank's
 * private memory (its machine's parts, and on a leader the leaders' send
 * and receive buffers). False when they do not fit a size_t.
 */
static bool hier_a2a_sizes(const struct dfg_hier *h, bool lead, size_t b,
			   unsigned int n, unsigned int nk, unsigned int pad,
			   size_t *row, size_t *tile, size_t *sz)
{
	size_t both;

	if (__builtin_mul_overflow(b, (size_t)n, row) ||
	    __builtin_add_overflow(*row, HIER_A2A_HDR, row) ||
	    __builtin_mul_overflow(*row, (size_t)nk, sz) ||
	    __builtin_mul_overflow(b, (size_t)pad * pad, tile))
		return false;
	return !lead ||
	       (!__builtin_mul_overflow(*tile, 2 * (size_t)h->nodes, &both) &&
		!__builtin_add_overflow(*sz, both, sz));
}

/* Node rank @l's block for rank @r in the node's allgather @g. */
static const char *hier_a2a_block(const char *g, size_t row, unsigned int l,
				  unsigned int r, size_t b)
{
	return g + l * row + HIER_A2A_HDR + r * b;
}

/*
 * The leader's tile for each other machine m, at @sl + m * @tile: the
 * blocks this machine's members (node rank l) send m's members (node
 * rank q), at (l * nsize[m] + q) * @b, from the node's allgather @g.
 */
static void hier_a2a_pack(const struct dfg_hier *h, unsigned int k,
			  unsigned int n, const char *g, size_t row, char *sl,
			  size_t tile, size_t b)
{
	for (unsigned int r = 0; r < n; r++) {
		unsigned int m = h->node_of[r];

		if (m == k)
			continue;
		for (unsigned int l = 0; l < h->nsize[k]; l++)
			dfg_copy(sl + m * tile + (l * h->nsize[m] +
						  h->lrank[r]) * b,
				 hier_a2a_block(g, row, l, r, b), b);
	}
}

/*
 * The node's allgather of every member's flag and send buffer into @g;
 * this rank's own failure @ret (its arguments, or blocks too large to
 * stage) travels as its flag, so every member of the machine fails.
 */
static int hier_a2a_gather(struct dfg_call *c, char *g, size_t row, int ret)
{
	struct dfg_hier *h = c->t->hier;
	unsigned int nk = h->nsize[h->node_of[c->t->rank]];
	char *mine = g + h->lrank[c->t->rank] * row;
	__u64 flag = ret != 0;
	int nret = 0;

	memcpy(mine, &flag, sizeof(flag));
	if (!ret)
		dfg_copy(mine + HIER_A2A_HDR, c->sbuf, row - HIER_A2A_HDR);
	if (h->node)
		nret = dfg_allgather(hier_node(c, 0), DFG_IN_PLACE, g, row);
	if (ret)
		return ret;
	for (unsigned int l = 0; !nret && l < nk; l++) {
		memcpy(&flag, g + l * row, sizeof(flag));
		if (flag)
			nret = -EINVAL;
	}
	return nret;
}

/*
 * alltoall (@c->count bytes a block; @err: this rank's arguments are
 * unusable), patent 003's tiles with a machine as subgroup: each machine
 * is a source and a destination subgroup, its leader the repacking
 * instance of the tiles it sends, and the blocks that one machine's
 * members send another's travel as one message.
 *  1. The node's allgather of the members' send buffers (the node team
 *     has no gather, and every member needs its machine's blocks for it:
 *     the blocks between a machine's ranks go through shared memory
 *     only, taken from there by each member), each behind a flag that
 *     says the member's arguments are unusable.
 *  2. The leaders' all-to-all of one tile per pair of machines, packed
 *     by the leader (hier_a2a_pack()), padded to the largest machine.
 *  3. The leader's broadcast of what arrived from the other machines,
 *     without the padding (each machine's blocks, by source then
 *     destination node rank), from which each member takes its own.
 * Members that disagree on the block fail the node's allgather, or the
 * leaders' exchange (its blocks are equal: a block that differs on any
 * leader fails it on all), and every rank returns -EINVAL.
 */
int dfg_hier_alltoall(struct dfg_call *c, int err)
{
	struct dfg_hier *h = c->t->hier;
	unsigned int n = c->t->size, me = c->t->rank, k = h->node_of[me];
	unsigned int nk = h->nsize[k], pad = h->nsize_max;
	size_t b = c->count, row, tile, sz, off = 0;
	char *g, *rbuf = c->rbuf;
	int ret = err, lret;

	if (!hier_a2a_sizes(h, h->lead, b, n, nk, pad, &row, &tile, &sz)) {
		/* A part of a flag alone: the others' differ, they fail. */
		row = HIER_A2A_HDR;
		sz = nk * row;
		tile = 0;
		ret = ret ? ret : -ENOMEM;
	}
	g = hier_tmp(h, sz);
	if (g)
		ret = hier_a2a_gather(c, g, row, ret);
	else
		ret = -ENOMEM;
	/* Our machine's blocks for us (the send buffer is in @g now). */
	for (unsigned int r = 0; !ret && b && r < n; r++)
		if (h->node_of[r] == k)
			dfg_copy(rbuf + r * b,
				 hier_a2a_block(g, row, h->lrank[r], me, b), b);
	/*
	 * The leaders' exchange runs to its end unless a member is lost:
	 * a leader whose machine failed takes part with nothing.
	 */
	if (h->lead && ret != -EOWNERDEAD && ret != -ECANCELED) {
		char *sl = ret ? NULL : g + nk * row;
		char *rl = ret ? NULL : sl + h->nodes * tile;

		if (!ret)
			hier_a2a_pack(h, k, n, g, row, sl, tile, b);
		lret = hier_lead_alltoall(c, sl, rl, tile, ret != 0);
		if (!ret) {
			ret = lret;
			/* Unpadded, into @g: its blocks are all taken. */
			for (unsigned int m = 0; !ret && m < h->nodes; m++) {
				size_t len = (size_t)h->nsize[m] * nk * b;

				if (m == k)
					continue;
				dfg_copy(g + off, rl + m * tile, len);
				off += len;
			}
		} else {
			/* The reason is this machine's, not the echo. */
			h->lead->why = 0;
		}
	}
	if (!ret && h->node)
		ret = hier_node_bcast(c, g, (n - nk) * nk * b, 0);
	/* Block (source node rank l of machine m, us) of machine m's part. */
	off = 0;
	for (unsigned int m = 0; !ret && b && m < h->nodes; m++) {
		if (m == k)
			continue;
		for (unsigned int r = 0; r < n; r++)
			if (h->node_of[r] == m)
				dfg_copy(rbuf + r * b, g + off +
					 (h->lrank[r] * nk + h->lrank[me]) * b,
					 b);
		off += (size_t)h->nsize[m] * nk * b;
	}
	return hier_done(c, ret);
}

/*
 * alltoallv: a member's row of the node's first allgather, __u64 words:
 * a flag (its arguments are unusable), then its send counts and its
 * receive counts, one per rank.
 */
#define HIER_V_FLAG	0
#define HIER_V_SC	1
#define HIER_V_RC(n)	(1 + (size_t)(n))
#define HIER_V_WORDS(n)	(1 + 2 * (size_t)(n))

/* A member's send counts and receive counts, in its row @w (@n ranks). */
static const __u64 *hier_v_sc(const __u64 *w)
{
	return w + HIER_V_SC;
}

static const __u64 *hier_v_rc(const __u64 *w, unsigned int n)
{
	return w + HIER_V_RC(n);
}

/* *@acc += @v; false when it does not fit a size_t. */
static bool hier_add(size_t *acc, __u64 v)
{
	return v <= SIZE_MAX && !__builtin_add_overflow(*acc, (size_t)v, acc);
}

/*
 * The bytes of an alltoallv on this machine (@rows: its members' rows,
 * by node rank; false when some sum does not fit a size_t):
 * *@pad, the largest of the members' send totals (the node's second
 * allgather pads to it); *@in, what the members receive from the other
 * machines; per machine m, @out[m], what this machine's members send
 * m's, and @from[m], what they expect from m's.
 */
static bool hier_v_sums(const struct dfg_hier *h, unsigned int k,
			unsigned int n, const __u64 *rows, size_t *pad,
			size_t *in, size_t *out, size_t *from)
{
	size_t words = HIER_V_WORDS(n);

	*pad = *in = 0;
	for (unsigned int m = 0; m < h->nodes; m++)
		out[m] = from[m] = 0;
	for (unsigned int l = 0; l < h->nsize[k]; l++) {
		const __u64 *w = rows + l * words;
		size_t tot = 0;

		for (unsigned int r = 0; r < n; r++) {
			unsigned int m = h->node_of[r];

			if (!hier_add(&tot, hier_v_sc(w)[r]) ||
			    !hier_add(&out[m], hier_v_sc(w)[r]) ||
			    !hier_add(&from[m], hier_v_rc(w, n)[r]) ||
			    (m != k && !hier_add(in, hier_v_rc(w, n)[r])))
				return false;
		}
		*pad = tot > *pad ? tot : *pad;
	}
	return true;
}

/*
 * Do all the counts agree, rank a's send count for b with b's receive
 * count from a, for every pair? @rows[m]: machine m's rows, by node rank.
 */
static bool hier_v_agree(const struct dfg_hier *h, unsigned int n,
			 const __u64 *const *rows)
{
	size_t words = HIER_V_WORDS(n);

	for (unsigned int a = 0; a < n; a++) {
		const __u64 *wa = rows[h->node_of[a]] + h->lrank[a] * words;

		for (unsigned int b = 0; b < n; b++) {
			const __u64 *wb = rows[h->node_of[b]] +
					  h->lrank[b] * words;

			if (hier_v_sc(wa)[b] != hier_v_rc(wb, n)[a])
				return false;
		}
	}
	return true;
}

/* At least @len bytes of private memory, the first @keep kept. */
static void *hier_tmp_keep(struct dfg_hier *h, size_t keep, size_t len)
{
	void *p;

	if (len <= h->tmp_size)
		return h->tmp;
	p = malloc(len);
	if (!p)
		return NULL;
	if (keep)
		memcpy(p, h->tmp, keep);
	free(h->tmp);
	h->tmp = p;
	h->tmp_size = len;
	return p;
}

/*
 * The node's first allgather: every member's row (flag, counts) into
 * @rows; 0, -EINVAL when a member's arguments are unusable, or the
 * failure. @err: ours are.
 */
static int hier_v_counts(struct dfg_call *c, __u64 *rows, int err)
{
	struct dfg_hier *h = c->t->hier;
	unsigned int n = c->t->size, me = c->t->rank;
	unsigned int nk = h->nsize[h->node_of[me]];
	size_t words = HIER_V_WORDS(n);
	__u64 *w = rows + h->lrank[me] * words;
	int ret = 0;

	memset(w, 0, words * sizeof(*w));
	w[HIER_V_FLAG] = err != 0;
	for (unsigned int r = 0; !err && r < n; r++) {
		w[HIER_V_SC + r] = c->scounts[r];
		w[HIER_V_RC(n) + r] = c->rcounts[r];
	}
	if (h->node)
		ret = dfg_allgather(hier_node(c, 0), DFG_IN_PLACE, rows,
				    words * sizeof(*w));
	if (err)
		return err;
	for (unsigned int l = 0; !ret && l < nk; l++)
		if (rows[l * words + HIER_V_FLAG])
			ret = -EINVAL;
	return ret;
}

/*
 * The leader's message to machine @m at @sl: this machine's rows (the
 * count matrix's rows of its members: every leader so learns them all),
 * then the blocks its members (node rank l)
 * send m's, by l, then by m's rank. @data: the node's second allgather
 * (each member's blocks packed in rank order, @pad bytes a member).
 */
static char *hier_v_pack(const struct dfg_hier *h, unsigned int k,
			 unsigned int m, unsigned int n, const __u64 *rows,
			 const char *data, size_t pad, char *sl)
{
	size_t words = HIER_V_WORDS(n);

	memcpy(sl, rows, h->nsize[k] * words * sizeof(*rows));
	sl += h->nsize[k] * words * sizeof(*rows);
	for (unsigned int l = 0; l < h->nsize[k]; l++) {
		const __u64 *sc = hier_v_sc(rows + l * words);
		size_t off = 0;

		for (unsigned int r = 0; r < n; r++) {
			if (h->node_of[r] == m && sc[r]) {
				dfg_copy(sl, data + l * pad + off, sc[r]);
				sl += sc[r];
			}
			off += sc[r];
		}
	}
	return sl;
}

/*
 * The leaders' alltoallv, one message per pair of machines (@len[m]
 * bytes to m at @sl, @want[m] from m into @rl, in machine order), by
 * the put algorithm; @bad as in hier_lead_alltoall(). Then every
 * leader checks the whole count matrix, its own machine's rows and
 * those that came (@rows[m], set here): a pair that disagrees anywhere
 * fails every leader with -EINVAL (the put algorithm fails only the
 * pairs of leaders whose byte counts differ, and one pair's difference
 * may hide in a sum). On success the blocks that came are packed at
 * @rl, by machine, without the rows. @sd, @rd: room for the leaders'
 * displacements.
 */
static int hier_lead_alltoallv(struct dfg_call *c, const char *sl,
			       const size_t *len, size_t *sd, char *rl,
			       const size_t *want, size_t *rd,
			       const __u64 **rows, bool bad)
{
	struct dfg_hier *h = c->t->hier;
	unsigned int n = c->t->size, nl = h->nodes;
	size_t words = HIER_V_WORDS(n), so = 0, ro = 0, at = 0;
	struct dfg_team *lead;
	int ret;

	/* Each message's rows at an aligned offset (@rl is aligned). */
	for (unsigned int m = 0; !bad && m < nl; m++) {
		sd[m] = so;
		rd[m] = ro;
		so += len[m];
		ro += (want[m] + 7) & ~(size_t)7;
	}
	lead = hier_lead_begin(c);
	lead->force[DFG_COLL_ALLTOALL] = DFG_ALGO_PUT;
	if (bad)
		ret = dfg_alltoallv(lead, DFG_IN_PLACE, NULL, NULL, NULL,
				    NULL, NULL);
	else
		ret = dfg_alltoallv(lead, sl, len, sd, rl, want, rd);
	ret = hier_lead_end(c, ret);
	/* The rows of machine m come first in its message. */
	for (unsigned int m = 0; !ret && m < nl; m++)
		if (m != h->node_of[c->t->rank])
			rows[m] = (const __u64 *)(rl + rd[m]);
	if (!ret && !hier_v_agree(h, n, rows))
		ret = -EINVAL;
	for (unsigned int m = 0; !ret && m < nl; m++) {
		size_t hdr = h->nsize[m] * words * sizeof(__u64);

		if (m == h->node_of[c->t->rank])
			continue;
		memmove(rl + at, rl + rd[m] + hdr, want[m] - hdr);
		at += want[m] - hdr;
	}
	return ret;
}

/*
 * An alltoallv's private memory on this rank, offsets into the call's
 * buffer: the node's rows (@rows: HIER_V_WORDS(n) words a member), its
 * second allgather (@data: @pad bytes a member), then on a leader the
 * leaders' send buffer (@sl) and, 8 bytes in, their receive buffer
 * (@rl, aligned: each message begins with rows), on a member the
 * broadcast's buffer (@rl - 8): the leader's verdict, 8 bytes, then the
 * blocks from the other machines. False when it does not fit a size_t.
 */
struct hier_v_mem {
	size_t	rows;
	size_t	data;
	size_t	sl;
	size_t	rl;
	size_t	size;
};

static bool hier_v_layout(const struct dfg_hier *h, unsigned int k,
			  unsigned int n, size_t pad, size_t in,
			  const size_t *len, const size_t *want,
			  struct hier_v_mem *v)
{
	size_t r0 = h->nsize[k] * HIER_V_WORDS(n) * sizeof(__u64), end, s;

	v->rows = 0;
	v->data = r0;
	if (__builtin_mul_overflow((size_t)h->nsize[k], pad, &s) ||
	    __builtin_add_overflow(r0, s, &end))
		return false;
	v->sl = end;
	if (!h->lead) {
		v->rl = end + 8;
		return !__builtin_add_overflow(v->rl, in, &v->size);
	}
	for (unsigned int m = 0; m < h->nodes; m++)
		if (!hier_add(&end, len[m]))
			return false;
	if (!hier_add(&end, 7 + 8))
		return false;
	v->rl = (end & ~(size_t)7);
	end = v->rl;
	for (unsigned int m = 0; m < h->nodes; m++)
		if (!hier_add(&end, want[m]) || !hier_add(&end, 7))
			return false;
	v->size = end;
	return true;
}

/*
 * alltoallv (@c's counts and displacements in bytes; @err: this rank's
 * arguments are unusable), patent 003's machine-pair packing as for the
 * fixed all-to-all (dfg_hier_alltoall()), with counts that differ per
 * pair:
 *  1. the node's allgather of every member's counts, sent and expected
 *     (behind the flag), so every member knows its machine's rows of
 *     the count matrix: the sizes of every later step;
 *  2. the node's allgather of every member's blocks, packed in rank
 *     order, padded to the machine's largest send total; a member takes
 *     its machine's blocks for it from there;
 *  3. the leaders' alltoallv, one message per pair of machines: the
 *     sender's rows, then its members' blocks for the receiver's, by
 *     source then destination; each leader then holds the whole count
 *     matrix and checks every pair, so that a mismatch anywhere fails
 *     every rank with -EINVAL;
 *  4. the node's broadcast of the leader's verdict and the blocks from
 *     the other machines, from which each member takes its own at its
 *     displacements.
 */
int dfg_hier_alltoallv(struct dfg_call *c, int err)
{
	struct dfg_hier *h = c->t->hier;
	unsigned int n = c->t->size, me = c->t->rank, k = h->node_of[me];
	unsigned int nk = h->nsize[k], nl = h->nodes;
	size_t words = HIER_V_WORDS(n), r0 = nk * words * sizeof(__u64);
	size_t pad = 0, in = 0, off, *out, *from, *len, *want, *sd;
	const __u64 **rows;
	struct hier_v_mem v = { 0 };
	__u64 *g0, verdict = 0;
	char *tmp, *rl, *rbuf = c->rbuf;
	int ret = err, lret;

	out = calloc(6 * (size_t)nl, sizeof(*out));
	rows = calloc(nl, sizeof(*rows));
	from = out ? out + nl : NULL;
	len = out ? from + nl : NULL;
	want = out ? len + nl : NULL;
	sd = out ? want + nl : NULL;
	g0 = hier_tmp_keep(h, 0, r0);
	if (!out || !rows || !g0)
		ret = -ENOMEM;
	else
		ret = hier_v_counts(c, g0, ret);
	if (!ret && !hier_v_sums(h, k, n, g0, &pad, &in, out, from))
		ret = -ENOMEM;
	for (unsigned int m = 0; !ret && m < nl; m++) {
		if (m == k)
			continue;
		len[m] = r0;
		want[m] = h->nsize[m] * words * sizeof(__u64);
		if (!hier_add(&len[m], out[m]) || !hier_add(&want[m], from[m]))
			ret = -ENOMEM;
	}
	if (!ret && !hier_v_layout(h, k, n, pad, in, len, want, &v))
		ret = -ENOMEM;
	tmp = ret ? NULL : hier_tmp_keep(h, r0, v.size);
	if (!ret && !tmp)
		ret = -ENOMEM;
	/* Our blocks, packed in rank order, into our part of step 2. */
	if (!ret) {
		char *mine = tmp + v.data + h->lrank[me] * pad;

		g0 = (__u64 *)tmp;
		for (unsigned int r = 0; r < n; r++) {
			if (!c->scounts[r])
				continue;
			dfg_copy(mine, (const char *)c->sbuf + c->sdispls[r],
				 c->scounts[r]);
			mine += c->scounts[r];
		}
		if (h->node && pad)
			ret = dfg_allgather(hier_node(c, 1), DFG_IN_PLACE,
					    tmp + v.data, pad);
	}
	/* Our machine's blocks for us, where both sides agree. */
	for (unsigned int r = 0; !ret && r < n; r++) {
		const __u64 *sc = hier_v_sc(g0 + h->lrank[r] * words);

		if (h->node_of[r] != k || !sc[me] || sc[me] != c->rcounts[r])
			continue;
		off = 0;
		for (unsigned int q = 0; q < me; q++)
			off += sc[q];
		dfg_copy(rbuf + c->rdispls[r],
			 tmp + v.data + h->lrank[r] * pad + off, sc[me]);
	}
	/* As in dfg_hier_alltoall(): a leader whose machine failed joins. */
	if (h->lead && ret != -EOWNERDEAD && ret != -ECANCELED) {
		char *sl = ret ? NULL : tmp + v.sl;

		for (unsigned int m = 0; !ret && m < nl; m++)
			if (m != k)
				sl = hier_v_pack(h, k, m, n, g0, tmp + v.data,
						 pad, sl);
		rows[k] = g0;
		lret = hier_lead_alltoallv(c, ret ? NULL : tmp + v.sl, len, sd,
					   ret ? NULL : tmp + v.rl, want,
					   sd ? sd + nl : NULL, rows, ret != 0);
		if (!ret) {
			ret = lret;
			verdict = lret == -EINVAL;
		} else {
			/* The reason is this machine's, not the echo. */
			h->lead->why = 0;
		}
	}
	/* The verdict and the blocks (a leader's are at its @rl already). */
	rl = tmp ? tmp + v.rl : NULL;
	if (h->node && (!ret || verdict)) {
		if (h->lead)
			memcpy(rl - 8, &verdict, sizeof(verdict));
		lret = dfg_broadcast(hier_node(c, 2), rl - 8, 8 + in, 0);
		if (!lret && !h->lead) {
			memcpy(&verdict, rl - 8, sizeof(verdict));
			ret = verdict ? -EINVAL : 0;
		}
		if (lret && !ret)
			ret = lret;
	}
	/* Source r's block for us: by machine, source, then our node rank. */
	off = 0;
	for (unsigned int m = 0; !ret && m < nl; m++) {
		if (m == k)
			continue;
		for (unsigned int r = 0; r < n; r++) {
			if (h->node_of[r] != m)
				continue;
			for (unsigned int q = 0; q < n; q++) {
				size_t b;

				if (h->node_of[q] != k)
					continue;
				b = hier_v_rc(g0 + h->lrank[q] * words, n)[r];
				if (q == me && b)
					dfg_copy(rbuf + c->rdispls[r], rl + off,
						 b);
				off += b;
			}
		}
	}
	free(out);
	free(rows);
	return hier_done(c, ret);
}
