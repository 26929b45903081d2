/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * dfg/rules.h - the rule interpreter (patent 001): rules over a running
 * graph that decide plan changes
 *
 * A struct dfg_rules holds a rule set written in dfg's rule language
 * (dfg-rules(7)), translated to CLIPS constructs and run by an embedded
 * CLIPS environment (Rete matching, salience, facts). At each evaluation
 * point of a run the interpreter turns the struct dfg_run_view of
 * <dfg/replan.h> into facts (components, flows, parameters, metrics, the
 * system), adds the variables, metrics and module events asserted since,
 * fires the rules whose conditions hold, and answers with the plan edits
 * their actions made (each also a "proposed" fact while the evaluation
 * lasts, for rules that complete a decision). dfg_rules_replanner() packs this as the struct
 * dfg_replanner an executor calls.
 *
 * Bounds: one evaluation fires at most DFG_RULES_MAX_FIRINGS rules (or
 * the number set with dfg_rules_set_max_firings()); rules that keep
 * triggering each other past it are cut off with a warning and that
 * evaluation's edits are dropped. An edit naming an unknown component, a
 * degree of 0 or above DFG_FLOW_MAX_DEGREE, or an empty type or key is
 * refused with a warning and the evaluation answers no change.
 *
 * Central and local: an interpreter made with DFG_RULES_LOCAL and given a
 * central one (dfg_rules_set_central()) first asks the central one for a
 * partial decision (global rules), then completes it with its own rules,
 * which see the partial decision as "proposed" facts and may override it.
 * The partial decision is plain data (struct dfg_plan_edit), so the two
 * can live in different processes.
 *
 * Plan store: with dfg_rules_store_open(), a decision is stored under the
 * signature of the conditions that led to it (the rule set, the graph and
 * its degrees, the system, the variables, and which rules matched which
 * components) together with the edits of the evaluations that followed
 * until the rules stopped changing the plan; the same signature later is
 * answered from the store with that whole decision, in one step, without
 * firing rules. The store is an SQLite database, plans.db in the given
 * directory (the state directory of `dfg run`); it survives the process
 * and several processes may share it. dfg_plan_store_*() read and edit
 * it (`dfg plans`).
 *
 * Threads: a handle is used from one thread at a time.
 * Errors: -errno returns, errno never changed.
 */
#ifndef _DFG_RULES_H
#define _DFG_RULES_H

#include <stdio.h>

#include <dfg/events.h>
#include <dfg/replan.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dfg_rules;

/* dfg_rules_new() flags */
#define DFG_RULES_LOCAL		(1U << 0)	/* completes a central decision */
#define DFG_RULES_NO_SYSTEM	(1U << 1)	/* never read /proc and /sys: the
						 * system is only what
						 * dfg_rules_set_system() says */
#define DFG_RULES_ALL		(DFG_RULES_LOCAL | DFG_RULES_NO_SYSTEM)

#define DFG_RULES_MAX_FIRINGS	1000

int dfg_rules_new(struct dfg_rules **rp, unsigned int flags);
void dfg_rules_free(struct dfg_rules *r);

/*
 * struct dfg_rules_error - where a rule text is wrong
 * @file, @line, @col:	position (1-based) of the offending token
 * @msg:		"expected ..., found ..."
 */
struct dfg_rules_error {
	char		file[256];
	unsigned int	line, col;
	char		msg[256];
};

/*
 * Adds the rules of @path (or of @len bytes at @text, named @name in
 * messages); several loads merge, a rule of a name already loaded
 * replaces it. Returns 0, -EINVAL with *@err filled (when not NULL) for a
 * text that does not parse, -ENOMEM, or the -errno of reading @path.
 * Nothing is added on failure.
 */
int dfg_rules_load_file(struct dfg_rules *r, const char *path,
			struct dfg_rules_error *err);
int dfg_rules_load_string(struct dfg_rules *r, const char *text, size_t len,
			  const char *name, struct dfg_rules_error *err);
/* The default rule set that ships with dfg (dfg-rules(7)). */
int dfg_rules_load_default(struct dfg_rules *r, struct dfg_rules_error *err);
/* Removes rule @name: 0 or -ENOENT. */
int dfg_rules_revoke(struct dfg_rules *r, const char *name);
/* Whether rule @name is loaded and active: 1, 0. */
int dfg_rules_has(const struct dfg_rules *r, const char *name);

/*
 * Facts from the caller. A variable keeps its value until set again or
 * unset (@value NULL); a metric of a component (@comp, or NULL for the
 * whole run) keeps its last value; an event is seen by one evaluation.
 * Returns 0, -EINVAL (empty name), -ENOMEM.
 */
int dfg_rules_assert_var(struct dfg_rules *r, const char *name,
			 const char *value);
int dfg_rules_assert_metric(struct dfg_rules *r, const char *comp,
			    const char *name, double value);
int dfg_rules_assert_event(struct dfg_rules *r, const struct dfg_event_msg *ev);
/* The value of variable @name (rules may set it), or NULL. */
const char *dfg_rules_var(const struct dfg_rules *r, const char *name);

/*
 * Reads the module's events at each evaluation (dfg_events_open() with
 * @flags) and asserts them. Returns 0 or dfg_events_open()'s error.
 */
int dfg_rules_subscribe(struct dfg_rules *r, unsigned int flags);

/*
 * struct dfg_rules_system - the machine as rules see it ("system" facts)
 * @cpus:	CPUs online
 * @numa:	NUMA nodes
 * @mem_avail:	bytes of memory available
 */
struct dfg_rules_system {
	unsigned int		cpus;
	unsigned int		numa;
	unsigned long long	mem_avail;
};

/* Fixes the system facts to @sys (NULL: read them again at each eval). */
int dfg_rules_set_system(struct dfg_rules *r,
			 const struct dfg_rules_system *sys);
int dfg_rules_set_max_firings(struct dfg_rules *r, unsigned int n);

/*
 * struct dfg_rules_firing - what --explain shows of one rule firing
 * @rule, @file, @line:	the rule and where it was written
 * @nfacts, @facts:	the facts it matched, as text
 * @nedits, @edits:	the plan edits its actions made
 * @from_store:		the decision came from the plan store (@rule is
 *			"plan-store", @facts its signature)
 */
struct dfg_rules_firing {
	const char			*rule;
	const char			*file;
	unsigned int			line;
	unsigned int			nfacts;
	const char *const		*facts;
	unsigned int			nedits;
	const struct dfg_plan_edit	*edits;
	int				from_store;
};

/* Called for each firing; NULL: none. */
int dfg_rules_set_explain(struct dfg_rules *r,
			  void (*fn)(void *arg,
				     const struct dfg_rules_firing *f),
			  void *arg);
/* An explain hook that prints to the FILE * @arg. */
void dfg_rules_explain_print(void *arg, const struct dfg_rules_firing *f);
/* Warnings (cut-offs, refused edits); NULL: to stderr. */
int dfg_rules_set_warn(struct dfg_rules *r,
		       void (*fn)(void *arg, const char *msg), void *arg);

/*
 * One evaluation: the facts of @view, the rules, and *@edits and *@n (owned
 * by @r, valid until the next call; *@n 0: no change). A local
 * interpreter with a central one asks it first. Returns 0, -EINVAL,
 * -ENOMEM.
 */
int dfg_rules_eval(struct dfg_rules *r, const struct dfg_run_view *view,
		   const struct dfg_plan_edit **edits, unsigned int *n);
/*
 * A local interpreter's half: completes the partial decision @partial
 * (@npartial edits, e.g. a central interpreter's on another machine).
 */
int dfg_rules_complete(struct dfg_rules *r, const struct dfg_run_view *view,
		       const struct dfg_plan_edit *partial,
		       unsigned int npartial,
		       const struct dfg_plan_edit **edits, unsigned int *n);
/* @local (DFG_RULES_LOCAL) asks @central first; NULL: no longer. */
int dfg_rules_set_central(struct dfg_rules *local, struct dfg_rules *central);

/* The replanner for struct dfg_run_opts: eval and applied on @r. */
struct dfg_replanner dfg_rules_replanner(struct dfg_rules *r);

/*
 * Keeps decisions in the plan store of @dir (created). Returns 0, -EINVAL,
 * -ENOMEM, or an error of dfg_plan_store_open() (-EBADMSG: not a database
 * or a damaged one; -EPROTO: another program's database); @r then goes
 * on without a store.
 */
int dfg_rules_store_open(struct dfg_rules *r, const char *dir);

/* --- the plan store --------------------------------------------------- */

struct dfg_plan_store;

/* dfg_plan_store_open() flags */
#define DFG_PLAN_STORE_CREATE	(1U << 0)	/* create @dir and the store */

/*
 * Opens the plan store of @dir (its file plans.db). Returns 0, -EINVAL,
 * -ENOMEM, -ENOENT (no store, and no DFG_PLAN_STORE_CREATE), -EBADMSG
 * (not an SQLite database, or a damaged one), -EPROTO (an SQLite database
 * of another program or of a newer libdfg), -EBUSY (locked by another
 * process for longer than 5 s), -EACCES, or another -errno.
 */
int dfg_plan_store_open(const char *dir, unsigned int flags,
			struct dfg_plan_store **sp);
void dfg_plan_store_close(struct dfg_plan_store *s);

/*
 * struct dfg_plan_record - one stored decision
 * @id:		the signature of its conditions (never 0)
 * @graph:	the name of the graph it was decided on ("" unnamed)
 * @conditions:	the rules that fired and the facts they matched, in words
 * @created:	when it was stored, @used: last stored or served (Unix s)
 * @hits:	times it was served from the store (counted once the
 *		interpreter that served it is past the decision: applied or
 *		refused, its next lookup, or closed; not on its path)
 * @edits:	the decision, @nedits of them
 * All pointers are valid during the callback only.
 */
struct dfg_plan_record {
	unsigned long long		id;
	const char			*graph;
	const char			*conditions;
	long long			created, used;
	unsigned long long		hits;
	const struct dfg_plan_edit	*edits;
	unsigned int			nedits;
};

/*
 * Calls @fn for the decision @id, or for every decision when @id is 0,
 * oldest first; a nonzero return of @fn stops and is returned. Returns 0,
 * -EINVAL, -ENOENT (no decision @id), or an error of the database.
 */
int dfg_plan_store_each(struct dfg_plan_store *s, unsigned long long id,
			int (*fn)(void *arg,
				  const struct dfg_plan_record *rec),
			void *arg);
/*
 * Forgets the decision @id, or all when @id is 0. Returns 0, -EINVAL,
 * -ENOENT (no decision @id), or an error of the database.
 */
int dfg_plan_store_forget(struct dfg_plan_store *s, unsigned long long id);
/*
 * struct dfg_rules_stats - counters since dfg_rules_new()
 * @evals, @firings:	evaluations, rule firings
 * @cutoffs:		evaluations cut off at the firing bound
 * @refused:		decisions refused (invalid edits, or the executor's)
 * @store_hits, @store_entries: decisions from the store; entries in it
 */
struct dfg_rules_stats {
	unsigned long long	evals, firings, cutoffs, refused;
	unsigned long long	store_hits, store_entries;
};

int dfg_rules_stats(const struct dfg_rules *r, struct dfg_rules_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* _DFG_RULES_H */
