/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg run: internal interfaces of the executor.
 *
 *   exec.c   the coordinator: plan to run graph, kernel objects, processes,
 *            failure handling, progress and summary
 *   set.c    one set instance: members, emit hooks, root pump, one
 *            quantum; the worker loop of a set in its own process
 *            (set.h: what its files share)
 *   pool.c   a worker pool: one process that runs many set instances
 *            with a few worker threads asking the module which runs next
 *   port.c   its boundary flows on channels, out and in
 *   spool.c  its boundary flows into a later phase, spool files
 *   ckpt.c   its checkpoints
 *   state.c  the state directory: checkpoint files, the resume point,
 *            spool files
 *   replan.c live re-planning: the replanner's view and edits, carrying a
 *            checkpoint into a new plan, the journal of generations
 *
 * Everything is indices into the plan (<dfg/flow.h>), built before the
 * processes fork, so each forked process uses it as it is.
 */
#ifndef _DFG_RUN_INT_H
#define _DFG_RUN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include <dfg/component.h>
#include <dfg/flow.h>
#include <dfg/run.h>

struct dfg_arena;
struct dfg_chan;

/* Per component instance, in the shared stats area. */
struct run_comp_stats {
	__u64	in_elems, in_bytes;
	__u64	out_elems, out_bytes;
	__u64	samples;		/* profiling ticks while active */
};

/* Set instance states (run_set_stats.state). */
enum {
	RUN_S_NEW,
	RUN_S_RUNNING,
	RUN_S_DONE,
	RUN_S_FAILED,
	RUN_S_STOPPED,		/* stopped at its stop mark, for a re-plan */
};

/* run_set_stats.flags */
#define RUN_SF_PEER	1U	/* failed only because another set did */

/* Per set instance, in the shared stats area. */
struct run_set_stats {
	__u32	state;
	__s32	pid;			/* its process, or its pool's */
	__u32	flags;			/* RUN_SF_* */
	__u32	pad;
	/*
	 * The stop mark, written by the coordinator while a change waits
	 * for checkpoint K (0: none): the instance stops right after taking
	 * a checkpoint >= stop_at (nothing consumed or produced past it,
	 * what it queued before sent), leaves the scheduler as done and
	 * waits, its endpoints open, until the mark says RUN_STOP_GO; then
	 * its process exits with RUN_EXIT_STOPPED.
	 */
	__u64	stop_at;
	__u64	runs;			/* quanta run */
	__u64	parks;			/* waits for the scheduler */
	__u64	boundary_out;		/* descriptors sent */
	__u64	forwarded;		/* of those, forwarded buffers */
	__u64	checkpoints;
	__u64	started_ns;		/* CLOCK_MONOTONIC of first quantum */
	__u64	resumed_ns;		/* ... of its state restored, ready
					 * for input */
	char	comp[64];		/* failing component */
	char	msg[DFG_COMP_ERRMSG_MAX];
};

/*
 * The plan being run, and where each of its pieces lives at run time.
 * Boundary flows (their ends in different sets) get channel slots: one
 * per downstream instance; components and sets get stats slots: one per
 * instance.
 */
struct run_graph {
	const struct dfg_flow	*fg;
	const struct dfg_plan	*plan;
	const struct dfg_comp_type **types;	/* per component */
	unsigned int		*chan;		/* per flow: first slot */
	unsigned int		*cstat;		/* per component: first slot */
	unsigned int		*sstat;		/* per set: first slot */
	unsigned int		nr_chans;
	unsigned int		nr_comp_stats;
	unsigned int		nr_set_stats;
	/* per set: its piece of the graph (sets joined by flows), each with
	 * a kernel graph of its own when a change may stop some pieces only;
	 * else one piece */
	unsigned int		*piece;
	unsigned int		npieces;
};

/* Everything a set instance process needs; built before fork. */
struct run_env {
	const struct run_graph	*g;
	const struct dfg_run_opts *opts;
	int			graph_fd;
	struct dfg_arena	*arena;
	int			*chan_ids;	/* per channel slot */
	struct run_comp_stats	*cstats;	/* shared, MAP_SHARED */
	struct run_set_stats	*sstats;	/* shared, MAP_SHARED */
	const char		*state_dir;	/* NULL: no checkpoints */
	const char		*spool_dir;	/* flows between phases */
	__u64			resume_seq;	/* 0: from the start */
};

/*
 * A flow between phases is spooled: the upstream phase writes it to files
 * (one per downstream instance and upstream producer slot, as channels
 * would be), the downstream phase reads them once it runs. Every other
 * flow between sets is a channel.
 */
static inline bool run_flow_spooled(const struct run_graph *g,
				    const struct dfg_flow_edge *f)
{
	return g->fg->comps[f->src].phase != g->fg->comps[f->dst].phase;
}

/* A record of a spool file: its data (@len bytes) follows. */
struct run_spool_rec {
	__u32	len;
	__u32	flags;		/* RUN_D_* kind */
	__u64	tag;		/* element tag, blip sequence */
};

/* Descriptor kinds: struct dfg_desc.flags & RUN_D_KIND. */
#define RUN_D_DATA	1U
#define RUN_D_BLIP	2U		/* tag: checkpoint sequence */
#define RUN_D_EOF	3U		/* this producer is done */
#define RUN_D_KIND	0xffU
#define RUN_D_PROD_SHIFT 16		/* upstream instance in the high half */

/* The first word of a set instance's checkpoint file (ckpt.c, replan.c). */
#define RUN_CKPT_MAGIC		0x44464743504b5432ULL	/* "DFGCPKT2" */

/* Exit status of a set process whose component failed, and of one
 * stopped because another set failed the graph. */
#define RUN_EXIT_FAILED	3
#define RUN_EXIT_PEER	4
/* ... and of one whose sets all stopped at their stop marks, released */
#define RUN_EXIT_STOPPED	5

/* run_set_stats.stop_at: the stopped instance may go */
#define RUN_STOP_GO		(~0ULL)

/*
 * set.c: run instance @inst of set @set, in the process forked for it;
 * @ready_fd, @go_fd: the start barrier. Returns the exit status.
 */
int run_set_main(const struct run_env *env, unsigned int set,
		 unsigned int inst, int ready_fd, int go_fd);

/* A set instance, for the pool. */
struct run_item {
	unsigned int	set, inst;
};

/*
 * pool.c: run the @n set instances @items in this process with
 * @workers worker threads (spares join them while one blocks in a
 * channel); @ready_fd, @go_fd: the start barrier. Returns the exit
 * status: 0, RUN_EXIT_FAILED (a set of the pool failed: its stats say
 * why), RUN_EXIT_PEER or RUN_EXIT_STOPPED.
 */
int run_pool_main(const struct run_env *env, const struct run_item *items,
		  unsigned int n, unsigned int workers, int ready_fd,
		  int go_fd);

/* exec.c */
__u64 run_now_ns(void);
void run_barrier(int ready_fd, int go_fd);

/* Downstream instance a hash flow sends @e to, among @n. */
unsigned int run_hash_route(const struct dfg_flow_edge *f,
			    const struct dfg_elem *e, unsigned int n);

/* state.c: the state directory. */
int run_state_prepare(const char *dir, const struct run_graph *g,
		      bool resume, __u64 *resume_seq, char *err,
		      size_t errlen);
int run_state_write(const char *dir, unsigned int set, unsigned int inst,
		    __u64 seq, const void *data, size_t len);
/* As run_state_write(), the directory left to one run_state_sync() after
 * a batch of them (a re-plan's carry writes a file per set instance). */
int run_state_put(const char *dir, unsigned int set, unsigned int inst,
		  __u64 seq, const void *data, size_t len);
int run_state_sync(const char *dir);
int run_state_link(const char *from_dir, unsigned int from_set,
		   const char *to_dir, unsigned int to_set, unsigned int inst,
		   __u64 seq);
int run_state_write_file(const char *dir, const char *name, const void *data,
			 size_t len);
int run_state_read(const char *dir, unsigned int set, unsigned int inst,
		   __u64 seq, void **data, size_t *len);
int run_state_done(const char *dir, unsigned int set, unsigned int inst,
		   __u64 last_seq);
int run_state_is_done(const char *dir, unsigned int set, unsigned int inst,
		      __u64 before_seq);
void run_state_clear(const char *dir);
int run_spool_path(char *buf, size_t len, const char *dir, unsigned int flow,
		   unsigned int inst, unsigned int prod);
void run_spool_clear(const char *dir);

/*
 * replan.c: the region a change from plan @op to plan @np affects (the
 * same components and flows at the same indices, as dfg_plan_edit_apply()
 * gives them). A set of @np is
 *   RUN_REGION_NEW      when it is no set of @op as it was: its members,
 *                       degree or phase, or a member's type or parameters
 *                       changed; it starts from the carried checkpoint;
 *   RUN_REGION_REWIRED  when it is, but a flow joins it to a new set: its
 *                       state and members could go on, its channels on
 *                       those flows (@boundary of them) change;
 *   RUN_REGION_KEPT     when it is, and so are all its neighbours.
 * @closed: the sets in a piece of the graph (sets joined by flows) that
 * holds a new one, which a change must stop as long as it cannot re-wire
 * a running set's channels. The sets of @op that no set of @np continues
 * stop (@stopped_*). The executor stops and restarts the sets of the
 * closed region when it can keep the others running (each piece of the
 * graph in worker pools of its own, a partial switch), every set
 * otherwise; the region is also what it reports (DFG_REPLAN_LOG's
 * "region" line, dfg run -v) and the sets whose checkpoint files the
 * carry links as they are (those not new).
 */
enum {
	RUN_REGION_KEPT,
	RUN_REGION_REWIRED,
	RUN_REGION_NEW,
	RUN_REGION_NKINDS
};

struct run_region {
	unsigned int	nsets;		/* of @np */
	unsigned int	*kind;		/* per set of @np: RUN_REGION_* */
	unsigned int	*old;		/* per set of @np: its set of @op, or
					 * ~0U when new */
	bool		*closed;	/* per set of @np */
	unsigned int	sets[RUN_REGION_NKINDS];	/* per kind */
	unsigned int	inst[RUN_REGION_NKINDS];	/* their instances */
	unsigned int	stopped_sets, stopped_inst;
	unsigned int	boundary;	/* flows from a new set to another */
	unsigned int	closed_sets, closed_inst;
};

int run_region_compute(struct run_region *r, const struct dfg_flow *ofg,
		       const struct dfg_plan *op, const struct dfg_flow *nfg,
		       const struct dfg_plan *np);
void run_region_free(struct run_region *r);
void run_region_print(const struct run_region *r, const struct dfg_plan *op,
		      const struct dfg_plan *np, FILE *f);

/*
 * replan.c: live re-planning. open() replays the journal of a resumed
 * run on *@fgp, *@planp; tick() runs at each wake-up of the coordinator
 * and returns 1 when the set processes must stop for an accepted change
 * (its checkpoint is complete); once they are reaped, switch_() carries
 * that checkpoint into the new plan (*@fgp, *@planp; NULL when the change
 * was refused then, and the old plan goes on) and gives the checkpoint
 * to resume from in *@seq.
 */
struct run_replan;
int run_replan_open(struct run_replan **xp, const struct dfg_run_opts *o,
		    const char *state_dir, unsigned int plan_flags,
		    struct dfg_flow **fgp, struct dfg_plan **planp,
		    char *err, size_t errlen);
const char *run_replan_dir(const struct run_replan *x);
unsigned int run_replan_generation(const struct run_replan *x);
__u64 run_replan_stop_ns(const struct run_replan *x);
const struct dfg_plan *run_replan_pending(const struct run_replan *x,
					  const struct dfg_flow **fgp);
__u64 run_replan_at_seq(const struct run_replan *x);
void run_replan_move_at(struct run_replan *x, __u64 seq);
void run_replan_cancel(struct run_replan *x, const char *why);
void run_replan_stopped(struct run_replan *x, unsigned int clean,
			unsigned int killed);
/* The steps of a switch, for DFG_REPLAN_LOG's "run" line: the old
 * processes reaped, the checkpoint carried, the new plan's kernel objects
 * ready, its processes forked, all of them set up (the start barrier). */
enum {
	RUN_RP_REAPED,
	RUN_RP_CARRIED,
	RUN_RP_OBJECTS,
	RUN_RP_FORKED,
	RUN_RP_GO,
	RUN_RP_NMARKS
};
void run_replan_mark(struct run_replan *x, unsigned int what);
/* The region of the last change, one line (run_region_print()); NULL
 * before the first or when it could not be worked out. */
const char *run_replan_region_text(const struct run_replan *x);
int run_replan_tick(struct run_replan *x, const struct run_graph *g,
		    const struct run_env *env, char *why, size_t whylen);
int run_replan_switch(struct run_replan *x, const struct run_graph *g,
		      const struct run_env *env, struct dfg_flow **fgp,
		      struct dfg_plan **planp, __u64 *seq, char *err,
		      size_t errlen);
/*
 * How the pending change is applied (before run_replan_switch()): only
 * the pieces of the graph in its closed region stop (@partial; the
 * others' @running set instances run on in their processes: the switch
 * keeps the old generation's directory, and a change refused at the
 * carry stops nothing), or every set (for @why). Said by DFG_REPLAN_LOG's
 * "path" and "run" lines and to the replanner's applied().
 */
void run_replan_path(struct run_replan *x, bool partial,
		     unsigned int running, const char *why);
/*
 * The pending change was refused at the carry of a partial switch after
 * the closed region's sets had stopped at K: the plan being run carried
 * into itself (a generation of the journal's without edits, every set's
 * files linked), its sets in @closed to restart from K, the others to
 * run on; copies of the plan in *@fgp, *@planp. -errno: nothing done.
 */
int run_replan_restart(struct run_replan *x, const struct run_graph *g,
		       const bool *closed, struct dfg_flow **fgp,
		       struct dfg_plan **planp);
/* The region of the last switch, of the plan it made (NULL: unknown). */
const struct run_region *run_replan_region(const struct run_replan *x);
void run_replan_retire(struct run_replan *x, const struct run_graph *g,
		       const struct run_env *env, const bool *running);
void run_replan_end(struct run_replan *x, const struct run_graph *g,
		    const struct run_env *env, struct dfg_run_summary *sum);
void run_replan_clear_gens(struct run_replan *x);
void run_replan_free(struct run_replan *x);

#endif /* _DFG_RUN_INT_H */
