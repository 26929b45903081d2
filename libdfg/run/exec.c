// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg run: the coordinator (the patent's execution module).
 *
 * dfg_run() loads and checks the graph, plans it, creates the kernel
 * objects (graph, arena, channels), lays out the shared stats area, forks
 * phase by phase a worker pool for the set instances that may share a
 * process (pool.c) and one process for each other set instance (set.c),
 * opens the start barrier once every process has opened its channels,
 * then watches the processes
 * through pidfds (past the descriptor limit, by a wait4() sweep): a
 * process that fails or dies stops the graph (the others are killed and
 * reaped; the kernel graph dies with its last descriptor). It prints a
 * progress line and the summary.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dfg/dfg.h>

#include "sys.h"
#include "run.h"
#include "../comp/comp_run.h"

/* Arena: a base, and more per channel, up to a bound; none without any. */
#define RUN_ARENA_BASE		(8UL << 20)
#define RUN_ARENA_PER_CHAN	(4UL << 20)
#define RUN_ARENA_MAX		(64UL << 20)
#define RUN_CHAN_DEPTH		1024
/* Descriptors a set process needs besides its pidfds or channels. */
#define RUN_FD_SPARE		64
/* poll() timeouts: idle, after a failure, with processes without pidfd. */
#define RUN_POLL_MS		1000
#define RUN_POLL_FAIL_MS	100
#define RUN_POLL_SLOW_MS	20
/* ... and while an accepted re-plan waits for its checkpoint */
#define RUN_POLL_PEND_MS	2

__u64 run_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* Child side of the start barrier: say ready, wait for the go. */
void run_barrier(int ready_fd, int go_fd)
{
	char c = 1;
	ssize_t n;

	do
		n = write(ready_fd, &c, 1);
	while (n < 0 && errno == EINTR);
	do
		n = read(go_fd, &c, 1);
	while (n < 0 && errno == EINTR);
}

/*
 * The kernel objects, stats area and layout of a plan made ready before
 * it runs: the one a re-plan waits with for its checkpoint (see
 * prebuild()).
 */
struct run_objs {
	bool			ready;
	struct run_graph	g;
	struct dfg		*dev;
	int			graph_fd;
	void			*stats;
	size_t			stats_len;
	struct dfg_arena	*arena;
	int			*chan_ids;
	int			*pgraph;
	struct dfg_arena	**parena;
};

/*
 * An earlier generation's objects (its kernel graph, arena, channels and
 * stats area), kept while set instances of a piece of the graph that a
 * change left alone run on in them (replan_partial()); @users counts
 * their processes not yet reaped, and the last one's end releases them
 * (held_release()).
 */
struct run_held {
	struct run_objs	o;
	char		dir[4096];	/* where its sets write checkpoints */
	__u64		resume_seq;	/* their checkpoints count from it */
	unsigned int	users;
};

/* A set of the plan being run whose instances run on from an earlier
 * generation (or ran, and ended there). */
struct run_cont {
	struct run_held	*h;	/* its objects; NULL once its processes are
				 * gone: its figures stay as they were */
	bool		on;	/* runs on: not started in this generation */
	unsigned int	set;	/* its set in @h's plan */
	unsigned int	sslot;	/* its first set stats slot in @h's area */
};

struct proc;

struct run_ctx {
	const struct dfg_run_opts *o;
	struct run_graph	g;
	struct run_env		env;
	struct dfg		*dev;
	int			graph_fd;	/* the first piece's */
	/*
	 * Per piece of the graph (run_graph.piece), its kernel graph and
	 * arena (NULL: no channel): a process that dies fails the graph of
	 * its piece in the module, and only that one. graph_fd and
	 * env.arena are the first piece's; a set process uses its own
	 * piece's (child_exit()).
	 */
	int			*pgraph;
	struct dfg_arena	**parena;
	int			ready_wr;	/* start barrier, for children */
	void			*stats;
	size_t			stats_len;
	char			state_dir[4096];
	char			spool_dir[4096];
	bool			spool_made;	/* we created spool_dir */
	__u64			t0;
	struct run_replan	*rp;		/* NULL: no re-planning */
	unsigned int		workers;	/* of a pool */
	__u64			own;		/* instances run in their own process */
	unsigned int		plan_flags;
	__u64			progress_ns;	/* last progress */
	/* the figures of earlier generations' stats areas */
	__u64			past_elems, past_bytes;
	__u64			past_boundary, past_forwarded;
	struct run_objs		next;		/* of the pending plan */
	const struct dfg_plan	*tried;		/* prebuild()'s last plan */

	/*
	 * A change may stop only the pieces of the graph it affects (its
	 * closed region) when no process holds sets of two pieces: with a
	 * replanner the sets run in a worker pool per piece (@pieces), and
	 * @by_piece says the running phase was started so.
	 */
	bool			pieces;
	bool			by_piece;
	/* the processes, earlier generations' objects and sets that run on
	 * into the plan being run (replan_partial()) */
	struct proc		*adopt;
	unsigned int		nadopt;
	struct run_held		**held;
	unsigned int		nheld;
	struct run_cont		*cont;		/* per set; NULL: none */
	unsigned int		*ccont;		/* per component: its first
						 * stats slot in its set's
						 * cont.h area */
	__u64			*linked;	/* per set stats slot: its
						 * checkpoints linked here */
	bool			*done_linked;	/* ... and its done marker */
	/* a partial switch decided at checkpoint K, carried before the
	 * stop (replan_decide()), made once the stopped sets are reaped */
	bool			partial;
	struct dfg_flow		*sw_fg;
	struct dfg_plan		*sw_plan;
	__u64			sw_seq;
	bool			*sw_keep;	/* per set of the old plan: runs
						 * on */
	char			sw_dir[4096];	/* the old generation's */
	char			full_why[192];	/* a full switch: why */
	/* the pending change's stop marks are written (stop_mark()), on
	 * which set instances (RUN_MARKS_*); when stopped processes were
	 * let go */
	bool			stop_marked;
	unsigned int		marks;
	__u64			release_ns;
	/* the partial switch restarts the closed region on the plan it ran
	 * (the change was refused at the carry after it stopped) */
	bool			restart;
};

/* run_ctx.marks: no stop marks; on the instances of the change's closed
 * region (a partial switch); on every instance (a full one) */
#define RUN_MARKS_NONE		0
#define RUN_MARKS_CLOSED	1
#define RUN_MARKS_ALL		2

/* run_phase(): the processes were stopped for a re-plan. */
#define RUN_PHASE_REPLAN	1

static void say(const struct run_ctx *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(const struct run_ctx *x, const char *fmt, ...)
{
	va_list ap;

	if (!x->o->log)
		return;
	va_start(ap, fmt);
	vfprintf(x->o->log, fmt, ap);
	va_end(ap);
}

static int fail(const struct run_ctx *x, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(const struct run_ctx *x, int err, const char *fmt, ...)
{
	va_list ap;

	if (x->o->err && x->o->errlen) {
		va_start(ap, fmt);
		vsnprintf(x->o->err, x->o->errlen, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* The component registry, as flow's loader wants it. */
static int type_lookup(void *arg, const char *type,
		       struct dfg_flow_typeinfo *info)
{
	(void)arg;
	return comp_flow_typeinfo(type, info);
}

static const struct dfg_flow_types run_types = { .lookup = type_lookup };

const struct dfg_flow_types *dfg_run_types(void)
{
	return &run_types;
}

static int load(struct run_ctx *x, const char *path, struct dfg_flow **fgp)
{
	struct dfg_flow_errors *errs = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	r = dfg_flow_load(path, &run_types, fgp, &errs);
	if (r == -EINVAL && errs) {
		f = open_memstream(&text, &len);
		if (f) {
			dfg_flow_errors_print(errs, f);
			fclose(f);
		}
		if (text && len && text[len - 1] == '\n')
			text[len - 1] = '\0';
		fail(x, r, "%s", text ? text : "malformed graph");
		free(text);
		dfg_flow_errors_free(errs);
		return r;
	}
	dfg_flow_errors_free(errs);
	if (r)
		return fail(x, r, "%s: %s", path, strerror(-r));
	return 0;
}

/* Types, ports and parameters of every component, before anything runs. */
static int check_comps(struct run_ctx *x)
{
	const struct dfg_flow *fg = x->g.fg;
	char msg[256];
	unsigned int c;
	int r;

	for (c = 0; c < fg->ncomps; c++) {
		const struct dfg_flow_comp *fc = &fg->comps[c];
		struct dfg_comp_attr a = {
			.name = fc->name,
			.nr_in = fc->nin,
			.nr_out = fc->nout,
			.degree = fc->degree,
			.params = (const struct dfg_param *)fc->params,
			.nr_params = fc->nparams,
		};

		x->g.types[c] = dfg_comp_find(fc->type);
		if (!x->g.types[c])
			return fail(x, -EINVAL, "%s:%u: node '%s': unknown type '%s'",
				    fg->file, fc->line, fc->name, fc->type);
		msg[0] = '\0';
		r = dfg_comp_check(x->g.types[c], &a, msg, sizeof(msg));
		if (r)
			return fail(x, -EINVAL, "%s:%u: node '%s': %s",
				    fg->file, fc->line, fc->name,
				    msg[0] ? msg : strerror(-r));
	}
	return 0;
}

/*
 * Per set of the plan, the piece of the graph it is in (sets joined by
 * flows), numbered from 0 in the order of their first sets; *@n pieces.
 * NULL without memory.
 */
static unsigned int *set_pieces(const struct run_graph *g, unsigned int *n)
{
	const struct dfg_plan *plan = g->plan;
	unsigned int *up = calloc(plan->nsets + 1, sizeof(*up));
	unsigned int *id = calloc(plan->nsets + 1, sizeof(*id));
	unsigned int s, f, a, b;

	if (!up || !id) {
		free(up);
		free(id);
		return NULL;
	}
	for (s = 0; s < plan->nsets; s++)
		up[s] = s;
	for (f = 0; f < g->fg->nflows; f++) {
		a = plan->set_of[g->fg->flows[f].src];
		b = plan->set_of[g->fg->flows[f].dst];
		while (up[a] != a)
			a = up[a];
		while (up[b] != b)
			b = up[b];
		if (a != b)
			up[a < b ? b : a] = a < b ? a : b;
	}
	*n = 0;
	for (s = 0; s < plan->nsets; s++) {
		for (a = s; up[a] != a;)
			a = up[a];
		/* a root is the piece's lowest set: numbered first */
		id[s] = a == s ? (*n)++ : id[a];
	}
	free(up);
	return id;
}

/* Channel and stats slots. */
static int layout(struct run_ctx *x)
{
	struct run_graph *g = &x->g;
	const struct dfg_flow *fg = g->fg;
	unsigned int i;

	g->types = calloc(fg->ncomps + 1, sizeof(*g->types));
	g->chan = calloc(fg->nflows + 1, sizeof(*g->chan));
	g->cstat = calloc(fg->ncomps + 1, sizeof(*g->cstat));
	g->sstat = calloc(g->plan->nsets + 1, sizeof(*g->sstat));
	if (x->pieces) {
		g->piece = set_pieces(g, &g->npieces);
	} else {
		g->piece = calloc(g->plan->nsets + 1, sizeof(*g->piece));
		g->npieces = 1;
	}
	if (!g->types || !g->chan || !g->cstat || !g->sstat || !g->piece)
		return -ENOMEM;
	for (i = 0; i < fg->nflows; i++) {
		const struct dfg_flow_edge *f = &fg->flows[i];

		if (g->plan->set_of[f->src] == g->plan->set_of[f->dst] ||
		    run_flow_spooled(g, f))
			continue;
		g->chan[i] = g->nr_chans;
		g->nr_chans += fg->comps[f->dst].degree;
	}
	for (i = 0; i < fg->ncomps; i++) {
		g->cstat[i] = g->nr_comp_stats;
		g->nr_comp_stats += fg->comps[i].degree;
	}
	for (i = 0; i < g->plan->nsets; i++) {
		g->sstat[i] = g->nr_set_stats;
		g->nr_set_stats += g->plan->sets[i].degree;
	}
	x->stats_len = sizeof(struct run_comp_stats) * g->nr_comp_stats +
		       sizeof(struct run_set_stats) * g->nr_set_stats;
	x->stats = mmap(NULL, x->stats_len, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (x->stats == MAP_FAILED) {
		x->stats = NULL;
		return -ENOMEM;
	}
	x->env.cstats = x->stats;
	x->env.sstats = (struct run_set_stats *)(x->env.cstats +
						 g->nr_comp_stats);
	return 0;
}

/*
 * Tells the module which generation of the plan the new graph runs: it
 * shows it in sysfs (dfgctl top) and sends PLAN_CHANGE. A module without
 * DFG_F_PLAN_GEN refuses it (-EINVAL): nothing to show, the run goes on.
 */
static void tell_generation(struct run_ctx *x)
{
	struct dfg_feedback_set a = {
		.what = DFG_FB_PLAN,
		.generation = x->rp ? run_replan_generation(x->rp) : 0,
	};
	unsigned int pc, i;

	for (pc = 0; x->pgraph && pc < x->g.npieces; pc++)
		if (x->pgraph[pc] >= 0)
			dfg_sys_cmd(x->pgraph[pc], DFG_IOC_FEEDBACK_SET, &a);
	/* and the pieces that run on from earlier generations */
	for (i = 0; i < x->nheld; i++)
		for (pc = 0; x->held[i]->o.pgraph &&
		     pc < x->held[i]->o.g.npieces; pc++)
			if (x->held[i]->o.pgraph[pc] >= 0)
				dfg_sys_cmd(x->held[i]->o.pgraph[pc],
					    DFG_IOC_FEEDBACK_SET, &a);
}

/* The piece of the graph flow @f is in. */
static unsigned int flow_piece(const struct run_graph *g,
			       const struct dfg_flow_edge *f)
{
	return g->piece[g->plan->set_of[f->src]];
}

/* Whether flow @f goes through channels. */
static bool flow_chan(const struct run_graph *g, const struct dfg_flow_edge *f)
{
	return g->plan->set_of[f->src] != g->plan->set_of[f->dst] &&
	       !run_flow_spooled(g, f);
}

static int kernel_objects(struct run_ctx *x)
{
	static unsigned int serial;
	const struct dfg_flow *fg = x->g.fg;
	unsigned int np = x->g.npieces, i, j, pc, nch;
	unsigned long size;
	char name[64];
	int r;

	r = dfg_open(&x->dev, DFG_OPEN_NO_RING);
	if (r)
		return fail(x, r, "/dev/dfg: %s", strerror(-r));
	x->pgraph = malloc((np + 1) * sizeof(*x->pgraph));
	x->parena = calloc(np + 1, sizeof(*x->parena));
	x->env.chan_ids = calloc(x->g.nr_chans + 1, sizeof(int));
	for (pc = 0; x->pgraph && pc < np; pc++)
		x->pgraph[pc] = -1;
	if (!x->pgraph || !x->parena || !x->env.chan_ids)
		return -ENOMEM;
	for (pc = 0; pc < np; pc++) {
		snprintf(name, sizeof(name), "dfg-run-%d-%u", getpid(),
			 __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
		r = dfg_graph_create(x->dev, name, 0600, DFG_GRAPH_O_CLOEXEC);
		if (r < 0)
			return fail(x, r, "graph %s: %s", name, strerror(-r));
		x->pgraph[pc] = r;
		if (!pc)
			x->graph_fd = r;
		for (i = 0, nch = 0; i < fg->nflows; i++)
			if (flow_chan(&x->g, &fg->flows[i]) &&
			    flow_piece(&x->g, &fg->flows[i]) == pc)
				nch += fg->comps[fg->flows[i].dst].degree;
		if (!nch)
			continue;	/* everything in one set, or spooled */
		size = RUN_ARENA_BASE + RUN_ARENA_PER_CHAN * nch;
		r = dfg_arena_create(x->pgraph[pc], size < RUN_ARENA_MAX ?
				     size : RUN_ARENA_MAX, &x->parena[pc]);
		if (!r)
			r = dfg_alloc_init(x->parena[pc]);
		if (r)
			return fail(x, r, "arena: %s", strerror(-r));
	}
	x->env.arena = x->parena[0];
	for (i = 0; i < fg->nflows; i++) {
		const struct dfg_flow_edge *f = &fg->flows[i];
		unsigned int nprod;

		if (!flow_chan(&x->g, f))
			continue;
		pc = flow_piece(&x->g, f);
		nprod = f->kind == DFG_FLOW_STRAIGHT ? 1 :
			fg->comps[f->src].degree;
		for (j = 0; j < fg->comps[f->dst].degree; j++) {
			r = dfg_chan_create(x->pgraph[pc],
					    dfg_arena_id(x->parena[pc]),
					    RUN_CHAN_DEPTH, nprod);
			if (r < 0)
				return fail(x, r, "channel '%s' -> '%s': %s",
					    fg->comps[f->src].name,
					    fg->comps[f->dst].name,
					    strerror(-r));
			x->env.chan_ids[x->g.chan[i] + j] = r;
		}
	}
	return 0;
}

/* The kernel graph and arena of piece @pc go (no process of this
 * generation uses them). */
static void piece_drop(struct run_ctx *x, unsigned int pc)
{
	if (x->parena && x->parena[pc])
		dfg_arena_unmap(x->parena[pc]);
	if (x->parena)
		x->parena[pc] = NULL;
	if (x->pgraph && x->pgraph[pc] >= 0)
		close(x->pgraph[pc]);
	if (x->pgraph)
		x->pgraph[pc] = -1;
	if (!pc) {
		x->graph_fd = -1;
		x->env.arena = NULL;
	}
}

/* One running set instance, or a worker pool, seen from the coordinator. */
struct proc {
	pid_t		pid;
	int		pidfd;
	unsigned int	set, inst;	/* a pool's: its first */
	struct run_item	*items;		/* a pool's set instances (owned);
					 * NULL: one */
	unsigned int	nitems;
	bool		reaped;
	bool		killed;		/* by us, after the graph failed */
	bool		released;	/* stopped at its stop marks, let go */
	int		status;
	struct run_held	*h;		/* started in an earlier generation,
					 * runs on in its objects; NULL: in
					 * this one's */
};

static __u64 sum_elems(const struct run_ctx *x, __u64 *bytes)
{
	__u64 n = 0, b = 0;
	unsigned int i;

	for (i = 0; i < x->g.nr_comp_stats; i++) {
		n += x->env.cstats[i].in_elems;
		b += x->env.cstats[i].in_bytes;
	}
	if (bytes)
		*bytes = b;
	return n;
}

static void progress(const struct run_ctx *x, unsigned int live)
{
	__u64 bytes, n = sum_elems(x, &bytes);
	double s = (double)(run_now_ns() - x->t0) / 1e9;

	say(x, "\r[%7.1fs] %llu elements, %.1f MB, %u processes running  ",
	    s, (unsigned long long)n, (double)bytes / 1e6, live);
	fflush(x->o->log);
}

static void kill_all(struct proc *p, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!p[i].reaped && p[i].pid > 0 && !p[i].killed) {
			kill(p[i].pid, SIGKILL);
			p[i].killed = true;
		}
}

/* In the child forked for p[@n]: run it, exit. */
static void child_exit(struct run_ctx *x, struct proc *p, unsigned int n,
		       int ready_rd, int go_rd, int go_wr)
{
	unsigned int i, pc;
	int r;

	/* die with the coordinator */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (i = 0; i < n; i++)
		if (p[i].pidfd >= 0)
			close(p[i].pidfd);
	/* nor keep an earlier generation's graph alive: those objects
	 * belong to the processes that run on in them */
	for (i = 0; i < x->nadopt; i++)
		if (x->adopt[i].pidfd >= 0)
			close(x->adopt[i].pidfd);
	for (i = 0; i < x->nheld; i++) {
		struct run_held *h = x->held[i];
		unsigned int pc;

		for (pc = 0; h->o.pgraph && pc < h->o.g.npieces; pc++) {
			if (h->o.parena[pc])
				dfg_arena_unmap(h->o.parena[pc]);
			if (h->o.pgraph[pc] >= 0)
				close(h->o.pgraph[pc]);
		}
		if (h->o.stats)
			munmap(h->o.stats, h->o.stats_len);
	}
	/* its own piece's kernel graph and arena, and no other's: a death
	 * fails that piece alone */
	pc = x->g.piece[p[n].items ? p[n].items[0].set : p[n].set];
	for (i = 0; i < x->g.npieces; i++)
		if (i != pc) {
			if (x->parena[i])
				dfg_arena_unmap(x->parena[i]);
			if (x->pgraph[i] >= 0)
				close(x->pgraph[i]);
		}
	x->env.graph_fd = x->pgraph[pc];
	x->env.arena = x->parena[pc];
	close(ready_rd);
	close(go_wr);
	if (getppid() == 1)
		_exit(RUN_EXIT_FAILED);
	if (p[n].items)
		r = run_pool_main(&x->env, p[n].items, p[n].nitems,
				  x->workers, x->ready_wr, go_rd);
	else
		r = run_set_main(&x->env, p[n].set, p[n].inst, x->ready_wr,
				 go_rd);
	_exit(r);
}

/*
 * Whether set @s runs in its own process: with DFG_RUN_ISOLATE, or when a
 * member's type may not share one (comp_type_poolable()).
 */
static bool set_isolated(const struct run_ctx *x, unsigned int s)
{
	const struct dfg_plan_set *ps = &x->g.plan->sets[s];
	unsigned int i;

	if (x->o->flags & DFG_RUN_ISOLATE)
		return true;
	for (i = 0; i < ps->nmembers; i++)
		if (!comp_type_poolable(x->g.types[ps->members[i]]))
			return true;
	return false;
}

/* Why a process that exited with RUN_EXIT_FAILED failed: its stats. */
static const struct run_set_stats *proc_failure(const struct run_ctx *x,
						 const struct proc *p)
{
	const struct run_set_stats *ss;
	unsigned int i;

	if (!p->items)
		return &x->env.sstats[x->g.sstat[p->set] + p->inst];
	for (i = 0; i < p->nitems; i++) {
		ss = &x->env.sstats[x->g.sstat[p->items[i].set] +
				    p->items[i].inst];
		if (ss->state == RUN_S_FAILED && ss->msg[0] &&
		    !(ss->flags & RUN_SF_PEER))
			return ss;
	}
	return &x->env.sstats[x->g.sstat[p->set] + p->inst];
}

/*
 * Room for @nprocs pidfds (and the channels of a set instance that reads
 * from or writes to as many peers, which inherits the limit): the soft
 * RLIMIT_NOFILE raised to the hard one when it is short. A process that
 * still gets no pidfd is watched by polling (see run_phase()).
 */
static void raise_nofile(unsigned int nprocs)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) ||
	    rl.rlim_cur >= (rlim_t)nprocs + RUN_FD_SPARE ||
	    rl.rlim_cur == rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* fork() failed with @err: which limit it was, when it was one. */
static int fork_failed(struct run_ctx *x, int err, unsigned int i,
		       unsigned int n)
{
	struct rlimit rl;

	if (err == EAGAIN && !getrlimit(RLIMIT_NPROC, &rl))
		return fail(x, -err,
			    "fork of process %u of %u: %s (the limit on processes: RLIMIT_NPROC %llu, or kernel.threads-max / pid_max)",
			    i + 1, n, strerror(err),
			    (unsigned long long)rl.rlim_cur);
	return fail(x, -err, "fork of process %u of %u: %s", i + 1, n,
		    strerror(err));
}

static void prebuild(struct run_ctx *x);
static void mirror(struct run_ctx *x);
static void link_running(struct run_ctx *x);
static void held_release(struct run_ctx *x, struct run_held *h);
static int replan_decide(struct run_ctx *x, struct proc *p, unsigned int n);
static struct run_set_stats *held_sstats(const struct run_held *h);
static void next_drop(struct run_ctx *x);
static void stop_procs(struct run_ctx *x, struct proc *p, unsigned int n,
		       const bool *keep);

/* Does set @s run on from an earlier generation (not started anew)? */
static bool running_on(const struct run_ctx *x, unsigned int s)
{
	return x->cont && x->cont[s].on;
}

/*
 * The stats slot of instance @i of set @s of the plan being run that its
 * process reads and writes: its own generation's when it runs on from an
 * earlier one (mirror() copies that one here).
 */
static struct run_set_stats *live_slot(const struct run_ctx *x,
				       unsigned int s, unsigned int i)
{
	const struct run_cont *c = x->cont ? &x->cont[s] : NULL;

	if (c && c->h)
		return &held_sstats(c->h)[c->sslot + i];
	return &x->env.sstats[x->g.sstat[s] + i];
}

/* The newest checkpoint instance @i of set @s took (its sequence). */
static __u64 slot_ckpt(const struct run_ctx *x, unsigned int s,
		       unsigned int i)
{
	const struct run_cont *c = x->cont ? &x->cont[s] : NULL;

	return (c && c->h ? c->h->resume_seq : x->env.resume_seq) +
	       __atomic_load_n(&live_slot(x, s, i)->checkpoints,
			       __ATOMIC_ACQUIRE);
}

/*
 * A change waits for checkpoint K: the set instances it will stop get
 * stop marks, and each stops right after taking K (ckpt.c) instead of
 * running on past it until it is killed. On a partial switch those are
 * the instances of its closed region's pieces (the carry may still
 * refuse the change then: the closed region alone restarts from K on
 * the old plan, replan_restart()); on a full one every instance.
 */
static void stop_mark(struct run_ctx *x)
{
	const struct dfg_flow *nfg;
	const struct dfg_plan *np = run_replan_pending(x->rp, &nfg);
	const struct dfg_plan *op = x->g.plan;
	__u64 at = run_replan_at_seq(x->rp);
	struct run_region reg = { 0 };
	bool *keep = NULL, partial = false;
	unsigned int s, i;

	if (!np || !at) {
		x->stop_marked = true;
		return;
	}
	/*
	 * K is complete only once every instance took it, none ended
	 * (run_replan_tick()): with one ended, they wait unmarked; one not
	 * started yet (a change decided right after the last) is waited
	 * for, K cannot be complete before it runs.
	 */
	for (i = 0; i < x->g.nr_set_stats; i++) {
		__u32 st = __atomic_load_n(&x->env.sstats[i].state,
					   __ATOMIC_ACQUIRE);

		if (st == RUN_S_NEW)
			return;
		if (st != RUN_S_RUNNING) {
			x->stop_marked = true;
			return;
		}
	}
	x->stop_marked = true;
	if (x->by_piece && !run_region_compute(&reg, x->g.fg, op, nfg, np)) {
		partial = reg.closed_inst < np->ninstances;
		keep = partial ? calloc(op->nsets + 1, sizeof(*keep)) : NULL;
		for (s = 0; keep && s < np->nsets; s++)
			if (!reg.closed[s])
				keep[reg.old[s]] = true;
		run_region_free(&reg);
	}
	/* the pieces that run on must not stop: no marks at all then */
	if (partial && !keep)
		return;
	/*
	 * An instance that had taken K (sources run ahead) would stop at
	 * its next checkpoint, which the others, stopped at K, never let
	 * come: K is one past the newest checkpoint a marked instance took,
	 * and one more for those taken while the marks are written (the
	 * set counts the checkpoint, then reads its mark, ckpt.c
	 * stop_due()). K cannot move once a mark is out; an instance that
	 * still took it unmarked does not stop, and is killed at K. What
	 * the sets do up to K is kept. The pieces that run on take K as
	 * they come to it (its files are linked into the new generation).
	 */
	for (s = 0; s < op->nsets; s++)
		for (i = 0; !(keep && keep[s]) && i < op->sets[s].degree; i++)
			if (slot_ckpt(x, s, i) + 2 > at)
				at = slot_ckpt(x, s, i) + 2;
	run_replan_move_at(x->rp, at);
	for (s = 0; s < op->nsets; s++)
		for (i = 0; !(keep && keep[s]) && i < op->sets[s].degree; i++)
			__atomic_store_n(&live_slot(x, s, i)->stop_at, at,
					 __ATOMIC_SEQ_CST);
	x->marks = keep ? RUN_MARKS_CLOSED : RUN_MARKS_ALL;
	say(x, "re-plan: stop marks at checkpoint %llu on %s\n",
	    (unsigned long long)at, keep ? "the closed region's set instances" :
	    "every set instance");
	free(keep);
}

/*
 * Instances stopped at their marks, and one ended after the marks were
 * written: checkpoint K cannot be complete any more.
 */
static bool stop_stuck(const struct run_ctx *x)
{
	bool stopped = false, ended = false;
	unsigned int i;

	for (i = 0; i < x->g.nr_set_stats; i++) {
		__u32 st = __atomic_load_n(&x->env.sstats[i].state,
					   __ATOMIC_ACQUIRE);

		stopped |= st == RUN_S_STOPPED;
		ended |= st == RUN_S_DONE || st == RUN_S_FAILED;
	}
	return stopped && ended;
}

/* The change is not applied after all: no set stops at its mark. */
static void stop_unmark(struct run_ctx *x)
{
	const struct dfg_plan *op = x->g.plan;
	unsigned int s, i;

	for (s = 0; s < op->nsets; s++)
		for (i = 0; i < op->sets[s].degree; i++)
			__atomic_store_n(&live_slot(x, s, i)->stop_at, 0,
					 __ATOMIC_RELEASE);
	x->stop_marked = false;
	x->marks = RUN_MARKS_NONE;
}

/*
 * Process @q stopped at its marks: each of its sets stopped there or had
 * ended (a pool writes the ended ones' state once all are), one stopped.
 */
static bool proc_stopped(const struct run_ctx *x, const struct proc *q)
{
	unsigned int i, n = q->items ? q->nitems : 1, stopped = 0;

	for (i = 0; i < n; i++) {
		unsigned int s = q->items ? q->items[i].set : q->set;
		unsigned int k = q->items ? q->items[i].inst : q->inst;
		__u32 st = __atomic_load_n(&live_slot(x, s, k)->state,
					   __ATOMIC_ACQUIRE);

		if (st == RUN_S_STOPPED)
			stopped++;
		else if (st != RUN_S_DONE)
			return false;
	}
	return stopped;
}

/*
 * Runs the set instances of one phase to the end. Returns 0, or the
 * first failure (a death by signal is reported before the component
 * errors it caused downstream).
 *
 * Each process is watched through a pidfd in one poll(), which wakes up
 * as soon as one exits. A process that got no pidfd (the descriptor
 * limit, or a kernel without pidfd_open) is found by the wait4() sweep
 * after each poll(), which then times out every RUN_POLL_SLOW_MS.
 */
static int run_phase(struct run_ctx *x, const struct dfg_plan_phase *ph,
		     struct dfg_run_summary *sum)
{
	const struct dfg_plan *plan = x->g.plan;
	unsigned int n = 0, i, k, ready = 0, live, unwatched = 0, npool = 0;
	unsigned int nforked, npieces = x->g.npieces, pc, npools = 0, wk;
	int go[2] = { -1, -1 }, rdy[2] = { -1, -1 }, r = 0;
	const unsigned int *piece = x->g.piece;
	struct pollfd *pfd = NULL;
	struct proc *p = NULL;
	bool go_open = true, peer_only = false, replan = false, pend = false;
	const struct dfg_replanner *rpl = x->o->replanner;
	int idle_ms = rpl ? (int)(x->o->replan_ms ? x->o->replan_ms : 100) :
			    RUN_POLL_MS;
	__u64 fail_ns = 0;

	x->stop_marked = false;
	x->marks = RUN_MARKS_NONE;
	x->release_ns = 0;
	/* the set instances started here: not those that run on */
	for (k = 0; k < ph->nsets; k++)
		if (!running_on(x, ph->sets[k]))
			n += plan->sets[ph->sets[k]].degree;
	p = calloc(n + x->nadopt + 1, sizeof(*p));
	pfd = calloc(n + x->nadopt + 2, sizeof(*pfd));
	for (i = 0; p && i < n + x->nadopt; i++)
		p[i].pidfd = -1;
	if (!p || !pfd || pipe2(go, O_CLOEXEC) ||
	    pipe2(rdy, O_CLOEXEC)) {
		r = -ENOMEM;
		goto out;
	}
	x->ready_wr = rdy[1];
	/*
	 * The pools first, one per piece of the graph with a replanner (a
	 * change may then stop some pieces only), one in all otherwise; then
	 * a process per isolated instance.
	 */
	x->by_piece = x->pieces;
	i = 0;
	for (pc = 0; pc < npieces; pc++) {
		struct run_item *items = calloc(n + 1, sizeof(*items));
		unsigned int m = 0;

		if (!items) {
			r = -ENOMEM;
			goto out;
		}
		for (k = 0; k < ph->nsets; k++) {
			unsigned int s = ph->sets[k], inst;

			if (set_isolated(x, s) || running_on(x, s) ||
			    piece[s] != pc)
				continue;
			for (inst = 0; inst < plan->sets[s].degree; inst++) {
				items[m].set = s;
				items[m++].inst = inst;
			}
		}
		if (!m) {
			free(items);
			continue;
		}
		p[i].items = items;
		p[i].nitems = m;
		p[i].set = items[0].set;
		p[i].inst = items[0].inst;
		i++;
		npools++;
		npool += m;
		wk = x->workers < m ? x->workers : m;
		if (wk > sum->workers)
			sum->workers = wk;
	}
	for (k = 0; k < ph->nsets; k++) {
		unsigned int s = ph->sets[k], inst;

		if (!set_isolated(x, s) || running_on(x, s))
			continue;
		for (inst = 0; inst < plan->sets[s].degree; inst++, i++) {
			p[i].set = s;
			p[i].inst = inst;
		}
	}
	n = i;
	raise_nofile(n + x->nadopt + npool);
	sum->pooled += npool;
	x->own += n - npools;
	for (i = 0; i < n; i++) {
		fflush(NULL);
		p[i].pid = fork();
		if (p[i].pid == 0)
			child_exit(x, p, i, rdy[0], go[0], go[1]);
		if (p[i].pid < 0) {
			r = fork_failed(x, errno, i, n);
			break;
		}
		p[i].pidfd = (int)syscall(SYS_pidfd_open, p[i].pid, 0);
		unwatched += p[i].pidfd < 0;
	}
	nforked = i;
	if (!r) {
		close(rdy[1]);
		rdy[1] = -1;
		close(go[0]);
		go[0] = -1;
		sum->processes += nforked;
		if (x->rp)
			run_replan_mark(x->rp, RUN_RP_FORKED);
	}
	/* the processes that run on from earlier generations: watched here
	 * with the new ones, past the start barrier */
	n = nforked;
	for (k = 0; k < x->nadopt; k++) {
		p[n] = x->adopt[k];
		unwatched += p[n].pidfd < 0;
		n++;
	}
	free(x->adopt);
	x->adopt = NULL;
	x->nadopt = 0;
	if (r)
		kill_all(p, n);
	if (!nforked && !r) {
		/* nothing to start */
		close(go[1]);
		go[1] = -1;
		go_open = false;
	}
	live = n;
	while (live) {
		unsigned int m = 0;
		int t;

		/* the sets that run on: their figures, their checkpoints */
		mirror(x);
		link_running(x);
		for (i = 0; i < n; i++)
			if (!p[i].reaped && p[i].pidfd >= 0) {
				pfd[m].fd = p[i].pidfd;
				pfd[m].events = POLLIN;
				m++;
			}
		if (go_open) {
			pfd[m].fd = rdy[0];
			pfd[m].events = POLLIN;
			m++;
		}
		t = poll(pfd, m, unwatched ? RUN_POLL_SLOW_MS : fail_ns ?
			 RUN_POLL_FAIL_MS : pend ? RUN_POLL_PEND_MS :
			 idle_ms < RUN_POLL_MS ? idle_ms : RUN_POLL_MS);
		if (t < 0 && errno != EINTR) {
			if (!r)
				r = fail(x, -errno, "poll over %u processes: %s",
					 m, strerror(errno));
			kill_all(p, n);
		}
		if (go_open && (pfd[m - 1].revents & (POLLIN | POLLHUP))) {
			char buf[64];
			ssize_t got = read(rdy[0], buf, sizeof(buf));

			if (got > 0)
				ready += (unsigned int)got;
			if (got == 0 || ready >= nforked) {
				/* everyone is set up (or gone): go */
				close(go[1]);
				go[1] = -1;
				go_open = false;
				if (x->rp)
					run_replan_mark(x->rp, RUN_RP_GO);
				if (!sum->start_ns)	/* of the first phase */
					sum->start_ns = run_now_ns() - x->t0;
			}
		}
		for (i = 0; i < n; i++) {
			struct rusage ru;
			int st;

			if (p[i].reaped)
				continue;
			if (wait4(p[i].pid, &st, WNOHANG, &ru) <= 0)
				continue;
			p[i].reaped = true;
			unwatched -= p[i].pidfd < 0;
			p[i].status = st;
			live--;
			sum->cpu_ns += (__u64)(ru.ru_utime.tv_sec +
					       ru.ru_stime.tv_sec) * 1000000000ULL +
				       (__u64)(ru.ru_utime.tv_usec +
					       ru.ru_stime.tv_usec) * 1000ULL;
			sum->ctx_switches += (__u64)(ru.ru_nvcsw + ru.ru_nivcsw);
			/* the last process of an earlier generation: its
			 * objects go (its sets' final figures stay) */
			if (p[i].h && !--p[i].h->users)
				held_release(x, p[i].h);
			p[i].h = NULL;
			if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
				continue;
			/* stopped for a re-plan: whatever it saw of the
			 * others' end, a failure shows again from K */
			if (replan && (p[i].killed || p[i].released))
				continue;
			if (WIFEXITED(st) && WEXITSTATUS(st) == RUN_EXIT_PEER) {
				/* the one that failed the graph says why */
				if (!r) {
					r = fail(x, -EIO, "the graph failed");
					peer_only = true;
				}
				continue;
			}
			if (p[i].killed)
				continue;	/* our doing, not a cause */
			if (!r || peer_only || (r == -EIO && WIFSIGNALED(st))) {
				const struct run_set_stats *ss =
					proc_failure(x, &p[i]);
				const char *sname = plan->sets[p[i].set].name;

				if (WIFSIGNALED(st) && p[i].items)
					r = fail(x, -ECHILD,
						 "worker pool of %u set instances (pid %d) killed by signal %d (%s)",
						 p[i].nitems, p[i].pid,
						 WTERMSIG(st),
						 strsignal(WTERMSIG(st)));
				else if (WIFSIGNALED(st))
					r = fail(x, -ECHILD,
						 "set %s instance %u (pid %d) killed by signal %d (%s)",
						 sname, p[i].inst, p[i].pid,
						 WTERMSIG(st),
						 strsignal(WTERMSIG(st)));
				else if (ss->msg[0] && (!r || peer_only))
					r = fail(x, -EIO, "%s: %s", ss->comp,
						 ss->msg);
				else if ((!r || peer_only) && p[i].items)
					r = fail(x, -ECHILD,
						 "worker pool of %u set instances exited with status %d",
						 p[i].nitems, WEXITSTATUS(st));
				else if (!r || peer_only)
					r = fail(x, -ECHILD,
						 "set %s instance %u exited with status %d",
						 sname, p[i].inst,
						 WEXITSTATUS(st));
				peer_only = false;
			}
		}
		if (x->rp && !r && !replan && !go_open && x->stop_marked &&
		    stop_stuck(x)) {
			/* they cannot go on where they were: every set
			 * restarts on the old plan from its newest complete
			 * checkpoint, as after a change refused at K */
			run_replan_cancel(x->rp, "a set instance ended before the change's checkpoint");
			snprintf(x->full_why, sizeof(x->full_why),
				 "a set instance ended before checkpoint K");
			run_replan_path(x->rp, false, 0, x->full_why);
			next_drop(x);
			x->tried = NULL;
			replan = true;
			stop_procs(x, p, n, NULL);
		}
		if (x->rp && !r && !replan && !go_open) {
			char why[256] = "";
			int q = run_replan_tick(x->rp, &x->g, &x->env, why,
						sizeof(why));

			if (q < 0) {
				r = fail(x, q, "%s", why[0] ? why :
					 strerror(-q));
				kill_all(p, n);
			} else if (q) {
				/* checkpoint K is complete: stop the pieces
				 * it affects (carried first) or every set */
				replan = true;
				q = replan_decide(x, p, n);
				if (q < 0) {
					r = q;
					kill_all(p, n);
				}
				if (q == 0)
					stop_procs(x, p, n, NULL);
				if (q == 2)	/* refused: nothing stopped */
					replan = false;
			} else {
				const struct dfg_flow *pfg;

				pend = run_replan_pending(x->rp, &pfg) != NULL;
				/* before prebuild(): K is still ahead */
				if (pend && !x->stop_marked)
					stop_mark(x);
				prebuild(x);
			}
		}
		/* the others see the failure through the scheduler and go;
		 * whoever is still there after a grace period is killed;
		 * those of another generation (another kernel graph) cannot
		 * see it, and go now */
		if (r && !fail_ns) {
			fail_ns = run_now_ns();
			for (i = 0; i < n; i++)
				if (p[i].h && !p[i].reaped && !p[i].killed) {
					kill(p[i].pid, SIGKILL);
					p[i].killed = true;
				}
		}
		if (fail_ns && run_now_ns() - fail_ns > 2000000000ULL)
			kill_all(p, n);
		/* let go at K but still there: killed after a grace period */
		if (x->release_ns &&
		    run_now_ns() - x->release_ns > 2000000000ULL) {
			for (i = 0; i < n; i++)
				if (p[i].released && !p[i].reaped &&
				    !p[i].killed) {
					kill(p[i].pid, SIGKILL);
					p[i].killed = true;
				}
			x->release_ns = 0;
		}
		if (x->o->flags & DFG_RUN_PROGRESS && t == 0 && x->o->log &&
		    run_now_ns() - x->progress_ns >= 1000000000ULL) {
			x->progress_ns = run_now_ns();
			progress(x, live);
		}
		/* a partial switch: once the stopped pieces are reaped, the
		 * others run on into the new plan */
		if (replan && x->partial && !r) {
			for (i = 0; i < n; i++)
				if ((p[i].killed || p[i].released) &&
				    !p[i].reaped)
					break;
			if (i == n)
				break;
		}
	}
	if (!r && replan)
		r = RUN_PHASE_REPLAN;
	if (r == RUN_PHASE_REPLAN && x->partial) {
		x->adopt = calloc(live + 1, sizeof(*x->adopt));
		if (!x->adopt) {
			kill_all(p, n);
			r = -ENOMEM;
			goto out;
		}
		for (i = 0; i < n; i++)
			if (!p[i].reaped) {
				x->adopt[x->nadopt++] = p[i];
				p[i].pidfd = -1;	/* theirs now */
				p[i].items = NULL;
			}
	}
out:
	/* a failure on the way out: whatever still runs is reaped */
	for (i = 0; p && i < n; i++)
		if (!p[i].reaped && p[i].pid > 0 && r < 0) {
			kill(p[i].pid, SIGKILL);
			waitpid(p[i].pid, NULL, 0);
			p[i].reaped = true;
			if (p[i].h && !--p[i].h->users)
				held_release(x, p[i].h);
		}
	for (i = 0; p && i < n; i++) {
		if (p[i].pidfd >= 0)
			close(p[i].pidfd);
		free(p[i].items);
	}
	for (i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (rdy[i] >= 0)
			close(rdy[i]);
	}
	free(p);
	free(pfd);
	return r;
}

static void print_plan(const struct run_ctx *x)
{
	const struct dfg_plan *plan = x->g.plan;
	const struct dfg_flow *fg = x->g.fg;
	unsigned int s, i;

	say(x, "plan: %u components in %u sets, %u set instances%s\n",
	    fg->ncomps, plan->nsets, plan->ninstances,
	    plan->folded ? "" : " (not folded)");
	if (x->o->flags & DFG_RUN_ISOLATE)
		say(x, "mode: a process per set instance (--isolate)\n");
	else if (x->pieces)
		say(x, "mode: a worker pool of %u workers per piece of the graph (a change stops only the pieces it affects); a process of its own for a set with a plugin or exec component\n",
		    x->workers);
	else
		say(x, "mode: a worker pool of %u workers per phase; a process of its own for a set with a plugin or exec component\n",
		    x->workers);
	for (s = 0; s < plan->nsets; s++) {
		const struct dfg_plan_set *ps = &plan->sets[s];

		say(x, "  set %s (degree %u, phase %u%s):", ps->name,
		    ps->degree, ps->phase,
		    set_isolated(x, s) ? ", own process" : "");
		for (i = 0; i < ps->nmembers; i++)
			say(x, " %s", fg->comps[ps->members[i]].name);
		say(x, "\n");
	}
}

static void print_summary(const struct run_ctx *x,
			  const struct dfg_run_summary *sum)
{
	const struct dfg_flow *fg = x->g.fg;
	const struct dfg_plan *plan = x->g.plan;
	double secs = (double)sum->wall_ns / 1e9;
	unsigned int s, i, k;

	if (x->o->flags & DFG_RUN_PROGRESS)
		say(x, "\n");
	say(x, "summary: %llu elements, %.2f MB in %.3f s (%.0f elements/s); "
	    "%llu through channels or spools, %llu forwarded without a copy\n",
	    (unsigned long long)sum->elements, (double)sum->bytes / 1e6, secs,
	    secs > 0 ? (double)sum->elements / secs : 0.0,
	    (unsigned long long)sum->boundary,
	    (unsigned long long)sum->forwarded);
	say(x, "summary: %llu processes for %llu sets, start-up %.3f s, "
	    "cpu %.3f s, %llu context switches\n",
	    (unsigned long long)sum->processes, (unsigned long long)sum->sets,
	    (double)sum->start_ns / 1e9, (double)sum->cpu_ns / 1e9,
	    (unsigned long long)sum->ctx_switches);
	if (sum->pooled)
		say(x, "summary: worker pool: %llu workers ran %llu set instances, %llu set instances in processes of their own\n",
		    (unsigned long long)sum->workers,
		    (unsigned long long)sum->pooled,
		    (unsigned long long)x->own);
	if (x->rp && (sum->replans || sum->refused))
		say(x, "summary: %llu re-plans (generation %u), %llu refused, "
		    "pause of the stopped sets %.3f ms in all, %.3f ms at most\n",
		    (unsigned long long)sum->replans,
		    run_replan_generation(x->rp),
		    (unsigned long long)sum->refused,
		    (double)sum->pause_ns / 1e6,
		    (double)sum->pause_max_ns / 1e6);
	say(x, "  %-10s %-16s %4s %12s %12s %12s %6s\n", "set", "component",
	    "inst", "in", "out", "in bytes", "cpu%");
	for (s = 0; s < plan->nsets; s++) {
		const struct dfg_plan_set *ps = &plan->sets[s];

		for (k = 0; k < ps->degree; k++) {
			__u64 total = 0;

			for (i = 0; i < ps->nmembers; i++)
				total += x->env.cstats[x->g.cstat[ps->members[i]]
						       + k].samples;
			for (i = 0; i < ps->nmembers; i++) {
				unsigned int c = ps->members[i];
				const struct run_comp_stats *cs =
					&x->env.cstats[x->g.cstat[c] + k];

				say(x, "  %-10s %-16s %4u %12llu %12llu %12llu %5.1f%%\n",
				    ps->name, fg->comps[c].name, k,
				    (unsigned long long)cs->in_elems,
				    (unsigned long long)cs->out_elems,
				    (unsigned long long)cs->in_bytes,
				    total ? 100.0 * (double)cs->samples /
					    (double)total : 0.0);
			}
		}
	}
}

/*
 * Where the flows between phases are spooled: the state directory (with
 * checkpoints, so a resumed run finds them), else --state-dir, else a
 * directory of our own under $TMPDIR.
 */
static int spool_prepare(struct run_ctx *x)
{
	const struct dfg_flow *fg = x->g.fg;
	const char *tmp = getenv("TMPDIR");
	unsigned int i;
	int n;

	for (i = 0; i < fg->nflows; i++)
		if (run_flow_spooled(&x->g, &fg->flows[i]))
			break;
	if (i == fg->nflows)
		return 0;
	if (x->env.state_dir) {
		x->env.spool_dir = x->env.state_dir;
		return 0;
	}
	if (x->o->state_dir) {
		n = snprintf(x->spool_dir, sizeof(x->spool_dir), "%s",
			     x->o->state_dir);
		if (n < 0 || (size_t)n >= sizeof(x->spool_dir))
			return fail(x, -ENAMETOOLONG, "%s: %s",
				    x->o->state_dir, strerror(ENAMETOOLONG));
		if (!mkdir(x->spool_dir, 0700))
			x->spool_made = true;
		else if (errno != EEXIST)
			return fail(x, -errno, "%s: %s", x->spool_dir,
				    strerror(errno));
	} else {
		n = snprintf(x->spool_dir, sizeof(x->spool_dir),
			     "%s/dfg-spool-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (n < 0 || (size_t)n >= sizeof(x->spool_dir))
			return fail(x, -ENAMETOOLONG, "$TMPDIR: %s",
				    strerror(ENAMETOOLONG));
		if (!mkdtemp(x->spool_dir))
			return fail(x, -errno, "%s: %s", x->spool_dir,
				    strerror(errno));
		x->spool_made = true;
	}
	x->env.spool_dir = x->spool_dir;
	return 0;
}

/* The kernel objects, stats area and layout of the plan being run. */
static void teardown(struct run_ctx *x)
{
	unsigned int pc;

	for (pc = 0; x->pgraph && pc < x->g.npieces; pc++)
		piece_drop(x, pc);
	free(x->pgraph);
	free(x->parena);
	x->pgraph = NULL;
	x->parena = NULL;
	x->env.arena = NULL;
	x->graph_fd = -1;
	dfg_close(x->dev);
	x->dev = NULL;
	if (x->stats)
		munmap(x->stats, x->stats_len);
	x->stats = NULL;
	free(x->env.chan_ids);
	free(x->g.types);
	free(x->g.chan);
	free(x->g.cstat);
	free(x->g.sstat);
	free(x->g.piece);
	x->env.chan_ids = NULL;
	x->g.types = NULL;
	x->g.chan = x->g.cstat = x->g.sstat = x->g.piece = NULL;
	x->g.nr_chans = x->g.nr_comp_stats = x->g.nr_set_stats = 0;
	x->g.npieces = 0;
}

/* Exchanges the objects of the plan being run with @n's. */
static void objs_swap(struct run_ctx *x, struct run_objs *n)
{
	struct run_objs t = {
		.ready = n->ready, .g = x->g, .dev = x->dev,
		.graph_fd = x->graph_fd, .stats = x->stats,
		.stats_len = x->stats_len, .arena = x->env.arena,
		.chan_ids = x->env.chan_ids, .pgraph = x->pgraph,
		.parena = x->parena,
	};

	x->g = n->g;
	x->dev = n->dev;
	x->graph_fd = n->graph_fd;
	x->stats = n->stats;
	x->stats_len = n->stats_len;
	x->env.arena = n->arena;
	x->env.chan_ids = n->chan_ids;
	x->pgraph = n->pgraph;
	x->parena = n->parena;
	x->env.cstats = x->stats;
	x->env.sstats = x->stats ? (struct run_set_stats *)
		(x->env.cstats + x->g.nr_comp_stats) : NULL;
	*n = t;
}

/* The objects made ready for a plan that will not run go. */
static void next_drop(struct run_ctx *x)
{
	if (!x->next.ready)
		return;
	objs_swap(x, &x->next);
	teardown(x);
	objs_swap(x, &x->next);
	memset(&x->next, 0, sizeof(x->next));
	x->next.graph_fd = -1;
}

/* The layout, stats area and kernel objects of @plan made beside the
 * running plan's, in x->next (not ready when that failed). */
static void objs_make(struct run_ctx *x, const struct dfg_flow *fg,
		      const struct dfg_plan *plan)
{
	struct dfg_run_opts quiet;
	const struct dfg_run_opts *o = x->o;
	int r;

	/* a failure here must leave the caller's error text alone */
	quiet = *o;
	quiet.err = NULL;
	quiet.errlen = 0;
	x->o = &quiet;
	memset(&x->next, 0, sizeof(x->next));
	x->next.graph_fd = -1;
	x->next.g.fg = fg;
	x->next.g.plan = plan;
	objs_swap(x, &x->next);
	r = layout(x);
	if (!r)
		r = kernel_objects(x);
	x->next.ready = true;	/* taken by the swap back */
	objs_swap(x, &x->next);
	x->o = o;
	if (r)
		next_drop(x);
}

/*
 * While an accepted re-plan waits for its checkpoint, its plan's layout,
 * stats area and kernel objects (a graph, an arena whose pages the module
 * allocates and zeroes, the channels) are made ready, beside the running
 * plan's: they depend on the plan alone, and take them out of the pause.
 * Nothing is announced yet (the module hears the generation when it runs).
 * Failing here (the arena's memory limit with two plans alive, say)
 * costs nothing: replan_switch() makes them once the old plan is gone,
 * as it did before.
 */
static void prebuild(struct run_ctx *x)
{
	const struct dfg_flow *fg;
	const struct dfg_plan *plan;

	if (x->next.ready || !x->rp)
		return;
	plan = run_replan_pending(x->rp, &fg);
	if (!plan || plan == x->tried)
		return;	/* none, or once for each (not at every tick) */
	x->tried = plan;
	objs_make(x, fg, plan);
}

/* ---- Partial switches: the pieces a change leaves run on -------------- */

/* The set stats of an earlier generation's area. */
static struct run_set_stats *held_sstats(const struct run_held *h)
{
	return (struct run_set_stats *)((struct run_comp_stats *)h->o.stats +
					h->o.g.nr_comp_stats);
}

/*
 * The figures of the sets that run on, copied from their own generation's
 * stats area into this one's slots: whatever reads the stats (the
 * checkpoint the run has reached, the pause, the replanner's view, a
 * failure's message, the summary) finds them where the plan puts them.
 * Their checkpoints are counted from this generation's resume point, as
 * the sets started here count theirs. Only the coordinator writes these
 * slots; a set writes its own while this copies (figures, not locks).
 */
static void mirror(struct run_ctx *x)
{
	const struct dfg_plan *plan = x->g.plan;
	unsigned int s, i, k;

	for (s = 0; x->cont && s < plan->nsets; s++) {
		const struct run_cont *c = &x->cont[s];
		const struct dfg_plan_set *ps = &plan->sets[s];
		const struct run_comp_stats *hc;
		const struct run_set_stats *hs;

		if (!c->h)
			continue;
		hc = c->h->o.stats;
		hs = held_sstats(c->h);
		for (i = 0; i < ps->degree; i++) {
			const struct run_set_stats *from = &hs[c->sslot + i];
			struct run_set_stats *to =
				&x->env.sstats[x->g.sstat[s] + i];
			/* the state first: once it says ended, the rest is
			 * final */
			__u32 st = __atomic_load_n(&from->state,
						   __ATOMIC_ACQUIRE);
			__u64 ck;

			memcpy(to, from, sizeof(*to));
			ck = c->h->resume_seq +
			     __atomic_load_n(&from->checkpoints,
					     __ATOMIC_ACQUIRE);
			to->state = st;
			to->checkpoints = ck > x->env.resume_seq ?
					  ck - x->env.resume_seq : 0;
		}
		for (k = 0; k < ps->nmembers; k++) {
			unsigned int m = ps->members[k];

			memcpy(&x->env.cstats[x->g.cstat[m]], &hc[x->ccont[m]],
			       sizeof(*hc) * ps->degree);
		}
	}
}

/*
 * The sets that run on write their checkpoints in their own generation's
 * directory, under their set numbers there. Each new one is linked into
 * this generation's directory under the set's number here, and an ended
 * instance's done marker written, so that the next change's carry and
 * --resume find every set's files in one directory. A kill -9 between a
 * checkpoint and its link resumes from an older checkpoint, complete in
 * this directory (no set's files are removed while the run goes on).
 */
static void link_running(struct run_ctx *x)
{
	const struct dfg_plan *plan = x->g.plan;
	const char *dir = x->env.state_dir;
	unsigned int s, i;
	bool any = false;

	for (s = 0; dir && x->cont && s < plan->nsets; s++) {
		const struct run_cont *c = &x->cont[s];

		if (!c->h)
			continue;
		for (i = 0; i < plan->sets[s].degree; i++) {
			const struct run_set_stats *from =
				&held_sstats(c->h)[c->sslot + i];
			unsigned int slot = x->g.sstat[s] + i;
			__u32 st = __atomic_load_n(&from->state,
						   __ATOMIC_ACQUIRE);
			__u64 top = c->h->resume_seq +
				    __atomic_load_n(&from->checkpoints,
						    __ATOMIC_ACQUIRE);

			/* a set counts a checkpoint once its file is there */
			while (x->linked[slot] < top &&
			       !run_state_link(c->h->dir, c->set, dir, s, i,
					       x->linked[slot] + 1)) {
				x->linked[slot]++;
				any = true;
			}
			if (st == RUN_S_DONE && !x->done_linked[slot] &&
			    x->linked[slot] == top &&
			    !run_state_done(dir, s, i, top))
				x->done_linked[slot] = true;
		}
	}
	if (any)
		run_state_sync(dir);
}

/* The objects @o go (as teardown() does those of the plan being run). */
static void objs_teardown(struct run_ctx *x, struct run_objs *o)
{
	objs_swap(x, o);
	teardown(x);
	objs_swap(x, o);
	memset(o, 0, sizeof(*o));
	o->graph_fd = -1;
}

/*
 * The last process of an earlier generation is gone: its sets' final
 * figures and checkpoints are taken (unless @x's plan is not set up to
 * take them: @final false), its objects go, and its directory once no
 * set writes there and the journal no longer names it.
 */
static void held_drop(struct run_ctx *x, struct run_held *h, bool final)
{
	unsigned int i, s;

	if (final) {
		mirror(x);
		link_running(x);
	}
	for (s = 0; x->cont && s < x->g.plan->nsets; s++)
		if (x->cont[s].h == h)
			x->cont[s].h = NULL;
	for (i = 0; i < x->nheld; i++)
		if (x->held[i] == h) {
			x->held[i] = x->held[--x->nheld];
			break;
		}
	objs_teardown(x, &h->o);
	if (final && strcmp(h->dir, run_replan_dir(x->rp)) &&
	    strcmp(h->dir, x->state_dir))
		run_state_clear(h->dir);
	free(h);
}

static void held_release(struct run_ctx *x, struct run_held *h)
{
	held_drop(x, h, true);
}

/* No set runs on: the plan being run started every set itself. */
static void cont_reset(struct run_ctx *x)
{
	free(x->cont);
	free(x->ccont);
	free(x->linked);
	free(x->done_linked);
	x->cont = NULL;
	x->ccont = NULL;
	x->linked = NULL;
	x->done_linked = NULL;
}

static void sw_drop(struct run_ctx *x)
{
	dfg_plan_free(x->sw_plan);
	dfg_flow_free(x->sw_fg);
	free(x->sw_keep);
	x->sw_plan = NULL;
	x->sw_fg = NULL;
	x->sw_keep = NULL;
	x->partial = false;
	x->restart = false;
}

/* The sets of process @q, each in *@keep or not: 1 all, 0 none, -1 both. */
static int proc_kept(const struct proc *q, const bool *keep)
{
	unsigned int i, in = 0, n = q->items ? q->nitems : 1;

	for (i = 0; i < n; i++)
		in += keep[q->items ? q->items[i].set : q->set];
	return in == n ? 1 : in ? -1 : 0;
}

/*
 * Stop the processes of the run for a change at checkpoint K (those of
 * the closed region: not in *@keep; all without @keep): one that stopped
 * at its marks is let go (it exits, its sets having left the scheduler as
 * done, so its kernel graph does not fail), any other is killed.
 */
static void stop_procs(struct run_ctx *x, struct proc *p, unsigned int n,
		       const bool *keep)
{
	unsigned int i, k, clean = 0, killed = 0;

	for (i = 0; i < n; i++) {
		struct proc *q = &p[i];

		if (q->reaped || q->killed || q->released || q->pid <= 0 ||
		    (keep && proc_kept(q, keep)))
			continue;
		if (!proc_stopped(x, q)) {
			kill(q->pid, SIGKILL);
			q->killed = true;
			killed++;
			continue;
		}
		for (k = 0; k < (q->items ? q->nitems : 1); k++)
			__atomic_store_n(&live_slot(x, q->items ?
					q->items[k].set : q->set, q->items ?
					q->items[k].inst : q->inst)->stop_at,
					 RUN_STOP_GO, __ATOMIC_RELEASE);
		kill(q->pid, SIGCONT);	/* if it was stopped meanwhile */
		q->released = true;
		clean++;
	}
	if (clean)
		x->release_ns = run_now_ns();
	x->stop_marked = false;
	x->marks = RUN_MARKS_NONE;
	run_replan_stopped(x->rp, clean, killed);
}

/*
 * The change was refused at the carry after the sets of its closed region
 * (the sets not in @keep) had stopped at checkpoint @seq: they restart
 * from it on the plan being run, and the other pieces run on, as on a
 * partial switch (of the plan into itself, run_replan_restart(); its
 * objects made first, here, in the pause: a refusal is rare). 0, or
 * -errno with nothing done (every set restarts instead).
 */
static int replan_restart(struct run_ctx *x, bool *keep, __u64 seq)
{
	const struct dfg_plan *op = x->g.plan;
	struct dfg_flow *fg2;
	struct dfg_plan *plan2;
	bool *closed;
	unsigned int s;
	int r;

	objs_make(x, x->g.fg, op);
	if (!x->next.ready)
		return -ENOMEM;
	closed = calloc(op->nsets + 1, sizeof(*closed));
	r = closed ? 0 : -ENOMEM;
	for (s = 0; closed && s < op->nsets; s++)
		closed[s] = !keep[s];
	if (!r)
		r = run_replan_restart(x->rp, &x->g, closed, &fg2, &plan2);
	free(closed);
	if (r) {
		next_drop(x);
		return r;
	}
	x->partial = true;
	x->restart = true;
	x->sw_fg = fg2;
	x->sw_plan = plan2;
	x->sw_seq = seq;
	x->sw_keep = keep;
	return 0;
}

/*
 * Checkpoint K of the pending change is complete. When the pieces of the
 * graph outside its closed region can run on (each piece's sets in
 * processes of their own, the new plan's kernel objects made beside the
 * running plan's), K is carried into the new plan now, before any
 * process goes, and only the processes of the closed region go (let go
 * when their sets stopped at K on their marks, killed otherwise): 1, also
 * when the carry refused the change after they stopped (the closed region
 * restarts from K on the old plan, replan_restart()); 2: the carry
 * refused it and none had stopped, nothing stops, the old plan goes on.
 * Otherwise 0: every set stops, as before (why: DFG_REPLAN_LOG, -v).
 * -errno: the run fails.
 */
static int replan_decide(struct run_ctx *x, struct proc *p, unsigned int n)
{
	const struct dfg_flow *nfg;
	const struct dfg_plan *np = run_replan_pending(x->rp, &nfg);
	const struct dfg_plan *op = x->g.plan;
	struct run_region reg = { 0 };
	const char *why = NULL;
	struct dfg_flow *fg2;
	struct dfg_plan *plan2;
	unsigned int s, i, running = 0, stopped = 0;
	char msg[256] = "";
	bool *keep = NULL;
	__u64 seq;
	int r;

	x->partial = false;
	if (!np)
		why = "no change is pending";
	else if (!x->by_piece)
		why = "the pieces of the graph share a worker pool";
	else if (!x->next.ready || x->next.g.plan != np)
		why = "the new plan's kernel objects could not be made beside the running plan's";
	else if (run_region_compute(&reg, x->g.fg, op, nfg, np))
		why = "its region could not be worked out";
	else if (reg.closed_inst >= np->ninstances)
		why = "it affects every piece of the graph";
	else if (x->marks == RUN_MARKS_ALL)
		why = "every set instance was marked to stop";
	else if (!(keep = calloc(op->nsets + 1, sizeof(*keep))))
		why = "no memory";
	for (s = 0; !why && s < np->nsets; s++)
		if (!reg.closed[s]) {
			keep[reg.old[s]] = true;
			running += np->sets[s].degree;
		}
	for (i = 0; !why && i < n; i++)
		if (!p[i].reaped && proc_kept(&p[i], keep) < 0)
			why = "a process holds sets of several pieces";
	run_region_free(&reg);
	if (why) {
		free(keep);
		snprintf(x->full_why, sizeof(x->full_why), "%s", why);
		run_replan_path(x->rp, false, 0, why);
		return 0;
	}
	x->full_why[0] = '\0';
	snprintf(x->sw_dir, sizeof(x->sw_dir), "%s", run_replan_dir(x->rp));
	run_replan_path(x->rp, true, running, NULL);
	/* what the closed region does past K is lost: its processes leave
	 * the CPUs to the carry and to the pieces that run on meanwhile
	 * (those stopped at their marks wait idle already) */
	for (i = 0; i < n; i++)
		if (!p[i].reaped && !proc_kept(&p[i], keep)) {
			if (proc_stopped(x, &p[i]))
				stopped++;
			else
				kill(p[i].pid, SIGSTOP);
		}
	r = run_replan_switch(x->rp, &x->g, &x->env, &fg2, &plan2, &seq, msg,
			      sizeof(msg));
	run_replan_mark(x->rp, RUN_RP_CARRIED);
	if (r) {
		free(keep);
		return fail(x, r, "%s", msg);	/* all are killed */
	}
	if (!fg2 && (stopped || x->marks == RUN_MARKS_CLOSED)) {
		/* refused, but sets stopped at K cannot go on where they
		 * were: the closed region restarts from K on the old plan,
		 * the other pieces run on */
		next_drop(x);
		x->tried = NULL;
		if (!replan_restart(x, keep, seq)) {
			stop_procs(x, p, n, keep);
			return 1;
		}
		/* or, that failing, every set */
		free(keep);
		snprintf(x->full_why, sizeof(x->full_why),
			 "the carry refused the change after sets had stopped at checkpoint %llu",
			 (unsigned long long)seq);
		run_replan_path(x->rp, false, 0, x->full_why);
		return 0;
	}
	if (!fg2) {
		/* refused: they go on where they were */
		stop_unmark(x);
		for (i = 0; i < n; i++)
			if (!p[i].reaped && !proc_kept(&p[i], keep))
				kill(p[i].pid, SIGCONT);
		free(keep);
		next_drop(x);
		x->tried = NULL;
		return 2;
	}
	x->partial = true;
	x->sw_fg = fg2;
	x->sw_plan = plan2;
	x->sw_seq = seq;
	x->sw_keep = keep;
	stop_procs(x, p, n, keep);
	return 1;
}

/*
 * The processes of the closed region are reaped: the new plan runs on
 * the objects made for it, its sets of the closed region start from K
 * (run_phase()), the others run on in their processes, on their
 * generation's objects (held until the last of them ends), their figures
 * mirrored and their checkpoints linked here.
 */
static int replan_partial(struct run_ctx *x)
{
	const struct run_region *reg = run_replan_region(x->rp);
	const struct dfg_plan *op = x->g.plan, *np = x->sw_plan;
	const struct dfg_flow *ofg = x->g.fg;
	struct run_cont *cont = NULL;
	struct run_held *h = NULL, **nh;
	unsigned int *ccont = NULL, *newof = NULL, s, i, k;
	bool *running = NULL;
	int r = -ENOMEM;

	run_replan_mark(x->rp, RUN_RP_REAPED);
	if (!reg || reg->nsets != np->nsets) {
		sw_drop(x);
		return fail(x, -ENOMEM, "re-plan: the region of the change is lost");
	}
	h = calloc(1, sizeof(*h));
	cont = calloc(np->nsets + 1, sizeof(*cont));
	ccont = calloc(ofg->ncomps + 1, sizeof(*ccont));
	newof = calloc(op->nsets + 1, sizeof(*newof));
	running = calloc(ofg->ncomps + 1, sizeof(*running));
	nh = realloc(x->held, (x->nheld + 1) * sizeof(*nh));
	if (nh)
		x->held = nh;
	if (!h || !cont || !ccont || !newof || !running || !nh)
		goto fail;
	/* what the old generation did, but of the sets that run on, which
	 * count on from where they are */
	for (k = 0; k < ofg->ncomps; k++) {
		running[k] = x->sw_keep[op->set_of[k]];
		for (i = 0; !running[k] && i < ofg->comps[k].degree; i++) {
			x->past_elems += x->env.cstats[x->g.cstat[k] + i].in_elems;
			x->past_bytes += x->env.cstats[x->g.cstat[k] + i].in_bytes;
		}
	}
	for (s = 0; s < op->nsets; s++)
		for (i = 0; !x->sw_keep[s] && i < op->sets[s].degree; i++) {
			const struct run_set_stats *ss =
				&x->env.sstats[x->g.sstat[s] + i];

			x->past_boundary += ss->boundary_out;
			x->past_forwarded += ss->forwarded;
		}
	run_replan_retire(x->rp, &x->g, &x->env, running);
	/* the old objects stay while the sets that run on use them; the
	 * kernel graphs of the pieces stopped go (their processes are gone) */
	for (k = 0; k < x->g.npieces; k++) {
		for (s = 0; s < op->nsets; s++)
			if (x->g.piece[s] == k && x->sw_keep[s])
				break;
		if (s == op->nsets)
			piece_drop(x, k);
	}
	h->o.graph_fd = -1;
	snprintf(h->dir, sizeof(h->dir), "%s", x->sw_dir);
	h->resume_seq = x->env.resume_seq;
	objs_swap(x, &h->o);
	for (s = 0; s < np->nsets; s++) {
		const struct dfg_plan_set *ps = &np->sets[s];
		unsigned int os = reg->old[s];

		if (reg->closed[s])
			continue;
		newof[os] = s + 1;
		if (x->cont && x->cont[os].h) {
			/* it ran on already: from the same place */
			cont[s] = x->cont[os];
			for (k = 0; k < ps->nmembers; k++)
				ccont[ps->members[k]] =
					x->ccont[ps->members[k]];
		} else {
			cont[s].h = h;
			cont[s].set = os;
			cont[s].sslot = h->o.g.sstat[os];
			for (k = 0; k < ps->nmembers; k++)
				ccont[ps->members[k]] =
					h->o.g.cstat[ps->members[k]];
		}
		cont[s].on = true;
	}
	/* the processes that run on: their sets by their numbers here */
	for (i = 0; i < x->nadopt; i++) {
		struct proc *q = &x->adopt[i];

		if (!q->h) {
			q->h = h;
			h->users++;
		}
		for (k = 0; q->items && k < q->nitems; k++)
			q->items[k].set = newof[q->items[k].set] - 1;
		q->set = q->items ? q->items[0].set : newof[q->set] - 1;
	}
	h->o.g.fg = NULL;
	h->o.g.plan = NULL;
	x->held[x->nheld++] = h;
	/* the new plan, on the objects made while the change waited */
	dfg_plan_free((struct dfg_plan *)op);
	dfg_flow_free((struct dfg_flow *)ofg);
	objs_swap(x, &x->next);
	memset(&x->next, 0, sizeof(x->next));
	x->next.graph_fd = -1;
	x->g.fg = x->sw_fg;
	x->g.plan = x->sw_plan;
	/* made for every piece: those that run on use their own */
	for (k = 0; k < x->g.npieces; k++) {
		for (s = 0; s < np->nsets; s++)
			if (x->g.piece[s] == k && reg->closed[s])
				break;
		if (s == np->nsets)
			piece_drop(x, k);
	}
	x->sw_fg = NULL;
	x->sw_plan = NULL;
	cont_reset(x);
	x->cont = cont;
	x->ccont = ccont;
	cont = NULL;
	ccont = NULL;
	x->linked = calloc(x->g.nr_set_stats + 1, sizeof(*x->linked));
	x->done_linked = calloc(x->g.nr_set_stats + 1,
				sizeof(*x->done_linked));
	x->env.resume_seq = x->sw_seq;
	x->env.state_dir = run_replan_dir(x->rp);
	sw_drop(x);
	x->tried = NULL;
	if (!x->linked || !x->done_linked) {
		r = fail(x, -ENOMEM, "re-plan: %s", strerror(ENOMEM));
		goto out;
	}
	for (i = 0; i < x->g.nr_set_stats; i++)
		x->linked[i] = x->env.resume_seq;	/* the carry's */
	r = check_comps(x);
	if (!r && x->restart && (x->o->flags & DFG_RUN_VERBOSE)) {
		say(x, "re-plan: restart: the change was refused after its closed region stopped at checkpoint %llu: its %u set instances restart from it on the plan they ran, %u run on in their processes\n",
		    (unsigned long long)x->env.resume_seq, reg->closed_inst,
		    np->ninstances - reg->closed_inst);
	} else if (!r && (x->o->flags & DFG_RUN_VERBOSE)) {
		say(x, "re-plan: generation %u from checkpoint %llu\n",
		    run_replan_generation(x->rp),
		    (unsigned long long)x->env.resume_seq);
		print_plan(x);
		if (run_replan_region_text(x->rp))
			say(x, "re-plan: region: %s",
			    run_replan_region_text(x->rp));
		say(x, "re-plan: partial: the closed region's %u set instances stopped and restart, %u run on in their processes; stopped and reaped in %.1f ms (checkpoint carried before the stop)\n",
		    reg->closed_inst, np->ninstances - reg->closed_inst,
		    (double)(run_now_ns() - run_replan_stop_ns(x->rp)) / 1e6);
	}
	if (!r) {
		tell_generation(x);
		x->env.graph_fd = x->graph_fd;
		run_replan_mark(x->rp, RUN_RP_OBJECTS);
	}
out:
	mirror(x);
	link_running(x);
	if (!h->users)
		held_release(x, h);
	free(newof);
	free(running);
	return r;
fail:
	free(h);
	free(cont);
	free(ccont);
	free(newof);
	free(running);
	sw_drop(x);
	return fail(x, -ENOMEM, "re-plan: %s", strerror(ENOMEM));
}

static void cleanup(struct run_ctx *x)
{
	unsigned int i;

	/* what a failure left running of earlier generations */
	for (i = 0; i < x->nadopt; i++) {
		struct proc *q = &x->adopt[i];

		kill(q->pid, SIGKILL);
		waitpid(q->pid, NULL, 0);
		if (q->pidfd >= 0)
			close(q->pidfd);
		free(q->items);
	}
	free(x->adopt);
	x->adopt = NULL;
	x->nadopt = 0;
	while (x->nheld)
		held_drop(x, x->held[0], x->cont && x->g.plan);
	free(x->held);
	x->held = NULL;
	cont_reset(x);
	sw_drop(x);
	next_drop(x);
	/* spools of a run with checkpoints stay for --resume */
	if (x->env.spool_dir && !x->env.state_dir) {
		run_spool_clear(x->env.spool_dir);
		if (x->spool_made)
			rmdir(x->env.spool_dir);
	}
	teardown(x);
	run_replan_free(x->rp);
	dfg_plan_free((struct dfg_plan *)x->g.plan);
	dfg_flow_free((struct dfg_flow *)x->g.fg);
}

/*
 * The processes stopped at checkpoint K for a re-plan: carry K into the
 * new plan (or, if that refused it, keep the old one) and set up its
 * kernel objects afresh; the channels of the old ones may hold elements
 * past K, which the new processes produce again.
 */
static int replan_switch(struct run_ctx *x)
{
	struct dfg_flow *nfg;
	struct dfg_plan *nplan;
	char msg[256] = "";
	unsigned int i;
	__u64 seq, b;
	int r;

	__u64 t_reaped = run_now_ns(), t_carried;

	run_replan_mark(x->rp, RUN_RP_REAPED);

	r = run_replan_switch(x->rp, &x->g, &x->env, &nfg, &nplan, &seq, msg,
			      sizeof(msg));
	t_carried = run_now_ns();
	run_replan_mark(x->rp, RUN_RP_CARRIED);
	if (r)
		return fail(x, r, "%s", msg);
	/* refused at the carry: the old plan goes on, on objects anew */
	if (!nfg || x->next.g.plan != nplan)
		next_drop(x);
	x->tried = NULL;	/* the address may come again */
	run_replan_retire(x->rp, &x->g, &x->env, NULL);
	x->past_elems += sum_elems(x, &b);
	x->past_bytes += b;
	for (i = 0; i < x->g.nr_set_stats; i++) {
		x->past_boundary += x->env.sstats[i].boundary_out;
		x->past_forwarded += x->env.sstats[i].forwarded;
	}
	teardown(x);
	cont_reset(x);	/* every set starts again */
	if (nfg) {
		dfg_plan_free((struct dfg_plan *)x->g.plan);
		dfg_flow_free((struct dfg_flow *)x->g.fg);
		x->g.fg = nfg;
		x->g.plan = nplan;
	}
	x->env.resume_seq = seq;
	x->env.state_dir = run_replan_dir(x->rp);
	if (x->next.ready) {
		objs_swap(x, &x->next);
		memset(&x->next, 0, sizeof(x->next));
		x->next.graph_fd = -1;
		r = 0;
	} else {
		r = layout(x);
	}
	if (!r)
		r = check_comps(x);
	/* After check_comps(): print_plan() asks the members' types. */
	if (!r && nfg && (x->o->flags & DFG_RUN_VERBOSE)) {
		say(x, "re-plan: generation %u from checkpoint %llu\n",
		    run_replan_generation(x->rp), (unsigned long long)seq);
		print_plan(x);
		if (run_replan_region_text(x->rp))
			say(x, "re-plan: region: %s",
			    run_replan_region_text(x->rp));
		say(x, "re-plan: full: every set stopped and restarts (%s)\n",
		    x->full_why[0] ? x->full_why : "-");
	}
	if (!r && x->graph_fd < 0)
		r = kernel_objects(x);
	if (!r)
		tell_generation(x);
	if (r && x->o->err && !x->o->err[0])
		fail(x, r, "%s", strerror(-r));
	x->env.graph_fd = x->graph_fd;
	run_replan_mark(x->rp, RUN_RP_OBJECTS);
	if (x->o->flags & DFG_RUN_VERBOSE)
		say(x, "re-plan: stopped and reaped in %.1f ms, checkpoint carried in %.1f ms, kernel objects in %.1f ms\n",
		    (double)(t_reaped - run_replan_stop_ns(x->rp)) / 1e6,
		    (double)(t_carried - t_reaped) / 1e6,
		    (double)(run_now_ns() - t_carried) / 1e6);
	return r;
}

/* One worker per CPU this process may run on. */
static unsigned int run_default_workers(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	n = CPU_COUNT(&set);
	return n > 0 ? (unsigned int)n : 1;
}

int dfg_run(const char *dot_path, const struct dfg_run_opts *opts,
	    struct dfg_run_summary *sum)
{
	static const struct dfg_run_opts defaults = {
		.size = sizeof(defaults),
	};
	struct run_ctx x = { .graph_fd = -1 };
	struct dfg_run_summary total = { 0 };
	struct dfg_run_opts o_full = { 0 };
	size_t sum_len = sizeof(total);
	struct dfg_flow *fg = NULL;
	struct dfg_plan *plan = NULL;
	bool ckpt;
	unsigned int ph, i;
	int e = errno, r;

	x.o = opts ? opts : &defaults;
	/* without options nothing re-plans, and an older caller's summary
	 * may end before the re-plan figures */
	if (!opts)
		sum_len = offsetof(struct dfg_run_summary, replans);
	if (x.o->size == DFG_RUN_OPTS_SIZE_V0 ||
	    x.o->size == DFG_RUN_OPTS_SIZE_V1 ||
	    x.o->size == DFG_RUN_OPTS_SIZE_V2) {
		/* an older caller: what it lacks is zero, its summary shorter */
		memcpy(&o_full, x.o, x.o->size);
		o_full.size = sizeof(o_full);
		o_full.reserved1 = 0;
		sum_len = x.o->size == DFG_RUN_OPTS_SIZE_V0 ?
			  offsetof(struct dfg_run_summary, replans) :
			  x.o->size == DFG_RUN_OPTS_SIZE_V1 ?
			  offsetof(struct dfg_run_summary, workers) :
			  offsetof(struct dfg_run_summary, stopped_clean);
		x.o = &o_full;
	} else if (x.o->size == sizeof(*x.o) && x.o->sum_size &&
		   x.o->sum_size < sum_len) {
		sum_len = x.o->sum_size;
	}
	if (!dot_path || x.o->size != sizeof(*x.o) ||
	    x.o->flags & ~DFG_RUN_FLAGS_ALL ||
	    x.o->workers > DFG_RUN_WORKERS_MAX) {
		r = fail(&x, -EINVAL, "invalid arguments");
		goto out;
	}
	if (x.o->err && x.o->errlen)
		x.o->err[0] = '\0';
	x.t0 = run_now_ns();
	x.workers = x.o->workers ? x.o->workers : run_default_workers();
	/* a pool per piece of the graph, so that a change may stop only the
	 * pieces it affects */
	x.pieces = x.o->replanner != NULL;
	r = load(&x, dot_path, &fg);
	if (r)
		goto out;
	x.plan_flags = x.o->flags & DFG_RUN_NO_FOLD ? DFG_PLAN_NO_FOLD : 0;
	r = dfg_plan_build(fg, x.plan_flags, &plan);
	if (r) {
		dfg_flow_free(fg);
		r = fail(&x, r, "plan: %s", strerror(-r));
		goto out;
	}
	ckpt = x.o->checkpoint_every || x.o->flags & DFG_RUN_RESUME;
	if (ckpt) {
		if (x.o->state_dir)
			snprintf(x.state_dir, sizeof(x.state_dir), "%s",
				 x.o->state_dir);
		else
			snprintf(x.state_dir, sizeof(x.state_dir), "%s.state",
				 dot_path);
	}
	if (ckpt || x.o->replanner) {
		char msg[256] = "";

		/* a resumed run goes on with the plan it had reached */
		r = run_replan_open(&x.rp, x.o, ckpt ? x.state_dir : NULL,
				    x.plan_flags, &fg, &plan, msg,
				    sizeof(msg));
		if (r) {
			dfg_plan_free(plan);
			dfg_flow_free(fg);
			r = fail(&x, r, "%s", msg[0] ? msg : strerror(-r));
			goto out;
		}
	}
	x.g.fg = fg;
	x.g.plan = plan;
	r = layout(&x);
	if (!r)
		r = check_comps(&x);
	if (r) {
		if (x.o->err && !x.o->err[0])
			fail(&x, r, "%s", strerror(-r));
		goto out;
	}
	if (x.o->flags & DFG_RUN_VERBOSE)
		print_plan(&x);

	if (ckpt) {
		char msg[256] = "";

		r = run_state_prepare(run_replan_dir(x.rp), &x.g,
				      x.o->flags & DFG_RUN_RESUME,
				      &x.env.resume_seq, msg, sizeof(msg));
		if (r) {
			fail(&x, r, "%s", msg);
			goto out;
		}
		x.env.state_dir = run_replan_dir(x.rp);
		if (x.o->flags & DFG_RUN_RESUME)
			say(&x, "resume: %s\n", x.env.resume_seq ?
			    "from the last complete checkpoint" :
			    "no complete checkpoint, from the start");
		if (x.o->flags & DFG_RUN_RESUME &&
		    run_replan_generation(x.rp))
			say(&x, "resume: on plan generation %u\n",
			    run_replan_generation(x.rp));
		if (x.env.resume_seq && x.o->flags & DFG_RUN_VERBOSE)
			say(&x, "resume: checkpoint %llu\n",
			    (unsigned long long)x.env.resume_seq);
	}
	x.env.g = &x.g;
	x.env.opts = x.o;
	r = spool_prepare(&x);
	if (r)
		goto out;
	r = kernel_objects(&x);
	if (r)
		goto out;
	tell_generation(&x);
	x.env.graph_fd = x.graph_fd;

	for (ph = 0; ph < x.g.plan->nphases && !r; ph++) {
		r = run_phase(&x, &x.g.plan->phases[ph], &total);
		/* re-planning needs a single phase: ph stays 0 */
		while (r == RUN_PHASE_REPLAN) {
			r = x.partial ? replan_partial(&x) : replan_switch(&x);
			if (!r)
				r = run_phase(&x, &x.g.plan->phases[ph],
					      &total);
		}
	}
	total.wall_ns = run_now_ns() - x.t0;
	if (r)
		goto out;
	mirror(&x);
	total.sets = x.g.plan->nsets;
	total.components = x.g.fg->ncomps;
	total.elements = sum_elems(&x, &total.bytes) + x.past_elems;
	total.bytes += x.past_bytes;
	total.boundary = x.past_boundary;
	total.forwarded = x.past_forwarded;
	for (i = 0; i < x.g.nr_set_stats; i++) {
		total.boundary += x.env.sstats[i].boundary_out;
		total.forwarded += x.env.sstats[i].forwarded;
	}
	if (x.rp)
		run_replan_end(x.rp, &x.g, &x.env, &total);
	print_summary(&x, &total);
	if (sum)
		memcpy(sum, &total, sum_len);
	if (x.env.state_dir) {
		run_replan_clear_gens(x.rp);
		run_state_clear(x.state_dir);
	}
out:
	cleanup(&x);
	errno = e;
	return r;
}
