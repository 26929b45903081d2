// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg test of live re-planning against the loaded dfg module (run it
 * in the test VM: tools/vm/dfg-vm -- build/libdfg/tests/replan_module;
 * make check runs it through selftests/run/replan.sh).
 * SKIPs when /dev/dfg cannot be opened, so the host run stays green.
 *
 * A hash job (generate -> gate -> key -> hash -> count x2 -> map x2 ->
 * gather -> write) runs under a test replanner, which injects edits
 * through struct dfg_run_opts.replanner; the gate, a component of the
 * test's, holds the generator so that no run ends before its change is
 * answered (tr_gate_*()). Every run's output is compared, per key,
 * with the job's run on its first plan and with the counts worked out
 * here: nothing lost, nothing counted twice. Covered: the degree of the
 * keyed count 2 -> 4 mid-run, unfold and fold, substitution, refused
 * edits (the run stays on its plan), a change refused when the state is
 * carried (count behind a round-robin flow), random re-plans over many
 * runs (DFG_REPLAN_TARGET of them, 60 by default; make replan-stress asks
 * for 10,000), and kill -9 of the run during a re-plan, then a resume.
 *
 * The same job beside a second, independent one (two pieces of the
 * graph, each generator behind its gate, in a process of its own): a
 * change to the first stops its piece alone, the
 * second's worker pool and generator run on in their processes (checked
 * by pid) and both outputs are those of a run that never re-planned,
 * the first piece's processes stopped at K on their stop marks; the same
 * with a change the carry refuses once they stopped (the first piece
 * alone restarts from K on the old plan), with the run's processes
 * killed while the change is applied or refused, with those that ran on
 * killed afterwards (the run fails, --resume finishes it) and with the
 * coordinator killed after
 * the restart (--resume again), and with random changes, several per
 * run; after each run no process, kernel graph or module page of it is
 * left. DFG_REPLAN_PART=one runs the first set of tests alone,
 * DFG_REPLAN_PART=pieces the two-piece ones (pieces_*) but for those of
 * a refusal (pieces_refused_*), DFG_REPLAN_PART=refused those;
 * DFG_REPLAN_ONLY=NAME[,NAME...] the tests named (to repeat one).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dfg/component.h>
#include <dfg/dfg.h>
#include <dfg/events.h>
#include <dfg/replan.h>
#include <dfg/run.h>

#include "kselftest_harness.h"
#include "module_pages.h"

#define NELEMS		60000
#define NKEYS		97
#define EVERY		500

static const char job_fmt[] =
	"digraph job {\n"
	"  gen [type=generate, count=%u];\n"
	"  gate [type=gate, piece=0];\n"
	"  key [type=map, expr=\"$0 %% %u\"];\n"
	"  cnt [type=count, degree=2];\n"
	"  fix [type=map, expr=\"$0\", degree=2];\n"
	"  out [type=write_lines, file=\"%s\"];\n"
	"  gen -> gate;\n"
	"  gate -> key;\n"
	"  key -> cnt [flow=%s%s];\n"
	"  cnt -> fix;\n"
	"  fix -> out [flow=gather];\n"
	"}\n";

/*
 * The gates (a component after each piece's generator, in a shared page
 * the run's processes inherit) hold element k until k is under their
 * piece's limit. A test replanner with .gated moves them (tr_gate_*()),
 * so that no piece ends before its change is answered, and none is
 * held short of checkpoint K. Without them the executor is right but the
 * test is not deterministic: a change decided once a generator ended gets
 * no stop marks, checkpoint K is never complete (exec.c stop_mark(),
 * replan.c ckpt_done()) and it is cancelled when the run ends ("the run
 * ended before the next checkpoint"); a coordinator that did not evaluate
 * while the generator ran its last part (descheduled that long on a
 * loaded host) decided only then.
 *
 * The first piece waits at a hold until the change is decided: a scripted
 * change past its point of the input (tr_eval_job()) by a quantum, whose
 * counts the view sees at its end, and two checkpoints; a random one
 * halfway. Once the stop marks are out (the executor's log line, read by
 * tr_log_write()), K is fixed at most two checkpoints past the newest the
 * first piece took, which the hold bounds: the first piece goes on to its
 * last element, held until the answer. A hold moved at the decision
 * instead would leave a window (the decision to the marks, the plan's
 * edits applied in between) in which the piece could run past the new
 * hold and take K out of its own reach. The second piece holds its last
 * element until the answer, so it cannot end before K is complete.
 */
#define N2		(2 * NELEMS)
#define GATE_OPEN	(~0ULL)
#define HOLD_RANDOM	(NELEMS / 2)

static __u64 *gates;	/* [0]: the first piece's limit, [1]: the second's */

static void gates_set(__u64 first, __u64 second)
{
	__atomic_store_n(&gates[0], first, __ATOMIC_RELEASE);
	__atomic_store_n(&gates[1], second, __ATOMIC_RELEASE);
}

static const struct dfg_param_decl gate_decls[] = {
	{ .name = "piece", .kind = DFG_PARAM_UINT, .min = 0, .max = 1,
	  .def = "0", .help = "whose limit: 0 the first piece's" },
	{ NULL },
};

static int gate_compute(struct dfg_comp *c, unsigned int port,
			const struct dfg_elem *e)
{
	const struct timespec ms = { .tv_nsec = 1000000 };
	unsigned int i = strcmp(dfg_comp_param(c, "piece", "0"), "1") ? 0 : 1;

	(void)port;
	/* generate's tag is the number */
	while (e->tag >= __atomic_load_n(&gates[i], __ATOMIC_ACQUIRE))
		nanosleep(&ms, NULL);
	return dfg_emit(c, 0, e);
}

static const struct dfg_comp_type gate_type = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "gate",
	.summary = "pass element k once k is under the piece's limit",
	.flags = DFG_COMP_FOLDABLE,
	.min_in = 1, .max_in = 1,
	.min_out = 1, .max_out = 1,
	.compute = gate_compute,
	.param_decls = gate_decls,
};

/* The test replanner. */
struct tr {
	/* scripted: each list once, the k-th after k/(n+1) of the input */
	const struct dfg_plan_edit *const *steps;
	const unsigned int	*nsteps;
	unsigned int		nlists;
	bool			random;
	unsigned int		seed;
	unsigned long		limit;		/* random: accepted, at most */
	int			kill_applied;	/* SIGKILL self at this gen */
	int			fail_eval;	/* eval's return, if not 0 */
	bool			no_ckpt;	/* run without checkpoints */
	bool			gated;		/* moves the gates */
	bool			view_bad;	/* a view broke a rule */
	unsigned int		view_gen;	/* the last view's generation */
	/* pieces: the run's processes when the change was applied, and
	 * what became of them (see tr_pieces()) */
	int			kill_mode;	/* TR_KILL_* */
	pid_t			before[16];
	int			nbefore;
	int			survivors, gone, after;
	bool			looked;
	/* answers */
	unsigned int		asked, accepted, refused, cancelled;
	unsigned int		generation;
	char			why[256];
	char			path[256];	/* applied()'s, accepted */
	/* random edits: built here, valid until the next eval */
	struct dfg_plan_edit	e[4];
	char			deg[2][8];
	bool			pending;
};

static int tr_eval_job(struct tr *t, const struct dfg_run_view *v,
		       const struct dfg_plan_edit **edits, unsigned int *n)
{
	int key = dfg_flow_find(v->fg, "key");
	int cnt = dfg_flow_find(v->fg, "cnt");
	int fix = dfg_flow_find(v->fg, "fix");
	unsigned int k;

	*n = 0;
	if (key < 0 || cnt < 0 || fix < 0)
		return -ENOENT;
	if (t->fail_eval)
		return t->fail_eval;
	/* skew: 0 unless fed by a hash flow (through straight ones), then
	 * 1 to the degree; the generation is the last one
	 * applied() reported */
	if (v->comps[key].key_skew != 0 || v->comps[cnt].key_skew < 1.0 ||
	    v->comps[fix].key_skew < 1.0 ||
	    v->comps[cnt].key_skew > v->fg->comps[cnt].degree ||
	    v->generation != t->generation)
		t->view_bad = true;
	/* one question at a time: the answer comes with applied() */
	if (t->pending)
		return 0;
	if (t->random && t->limit && t->accepted >= t->limit)
		return 0;
	if (t->random) {
		const struct dfg_flow_comp *c = &v->fg->comps[cnt];
		const struct dfg_flow_comp *f = &v->fg->comps[fix];
		unsigned int d;

		memset(t->e, 0, sizeof(t->e));
		switch (rand_r(&t->seed) % 10) {
		case 0:		/* invalid: refused, the plan stays */
			t->e[0] = (struct dfg_plan_edit){
				.op = DFG_EDIT_DEGREE, .comp = "cnt" };
			*n = 1;
			break;
		case 1: case 2: case 3: case 4:
			do
				d = 1 + rand_r(&t->seed) % 4;
			while (d == c->degree);
			t->e[0] = (struct dfg_plan_edit){
				.op = DFG_EDIT_DEGREE, .comp = "cnt",
				.degree = d };
			t->e[1] = t->e[0];
			t->e[1].comp = "fix";
			*n = 2;
			break;
		case 5: case 6:
			t->e[0] = (struct dfg_plan_edit){
				.op = v->fg->comps[key].pin ? DFG_EDIT_FOLD :
				      DFG_EDIT_UNFOLD, .comp = "key" };
			*n = 1;
			break;
		default:	/* map "$0" and filter "1" pass the same */
			t->e[0] = (struct dfg_plan_edit){
				.op = DFG_EDIT_SUBSTITUTE, .comp = "fix",
				.type = strcmp(f->type, "map") ? "map" :
					"filter" };
			t->e[1] = (struct dfg_plan_edit){
				.op = DFG_EDIT_PARAM, .comp = "fix",
				.key = "expr",
				.value = strcmp(f->type, "map") ? "$0" : "1" };
			*n = 2;
			break;
		}
		*edits = t->e;
		t->asked++;
		t->pending = true;
		return 0;
	}
	k = t->asked;
	if (k >= t->nlists ||
	    v->comps[key].in_elems < (__u64)NELEMS * (k + 1) /
				     (t->nlists + 2))
		return 0;
	*edits = t->steps[k];
	*n = t->nsteps[k];
	t->asked++;
	t->pending = true;
	return 0;
}

/*
 * The first piece's hold before the next change is decided: a scripted
 * one's point (tr_eval_job()), a quantum and two checkpoints on; or a
 * random one's.
 */
static __u64 tr_hold(const struct tr *t)
{
	if (t->random)
		return HOLD_RANDOM;
	return (__u64)NELEMS * (t->asked + 1) / (t->nlists + 2) + 4096 +
	       2 * EVERY;
}

/* Before the run: the first piece at its hold, the second short of its
 * end. */
static void tr_gate_start(struct tr *t)
{
	t->gated = true;
	gates_set(tr_hold(t), N2 - 1);
}

/* The stop marks are out: the first piece may go on to K (and on to its
 * last element). */
static void tr_gate_marked(const struct tr *t)
{
	if (t->gated &&
	    __atomic_load_n(&gates[0], __ATOMIC_ACQUIRE) != GATE_OPEN)
		__atomic_store_n(&gates[0], (__u64)NELEMS - 1,
				 __ATOMIC_RELEASE);
}

/* Answered (@err): the next scripted change's hold, a random change's
 * again if this one was not accepted; or both pieces to their ends. */
static void tr_gate_answered(const struct tr *t, int err)
{
	/* once open, open: a later random change may be cancelled */
	if (!t->gated ||
	    __atomic_load_n(&gates[0], __ATOMIC_ACQUIRE) == GATE_OPEN)
		return;
	if (t->random ? err != 0 : t->asked < t->nlists)
		__atomic_store_n(&gates[0], tr_hold(t), __ATOMIC_RELEASE);
	else
		gates_set(GATE_OPEN, GATE_OPEN);
}

/* kill_mode: the run's processes killed when the change is applied or
 * refused at the carry (while the executor switches), those that ran on
 * once it has, or the coordinator itself then (a run spawn()ed) */
#define TR_KILL_APPLIED		1
#define TR_KILL_RUNNING		2
#define TR_KILL_SELF		3

/* The pids of this process's children (the run's processes), at most
 * @max; or -1. */
static int children(pid_t *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[300], buf[512], *q;
		int ppid;
		FILE *f;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		q = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		/* "pid (comm) state ppid ...", zombies included */
		if (q && sscanf(q + 1, " %*c %d", &ppid) == 1 &&
		    ppid == getpid() && n < max)
			out[n++] = (pid_t)atoi(de->d_name);
	}
	closedir(d);
	return n;
}

/*
 * After a change was applied: which of the processes the run had then
 * still run (survivors), which are gone, how many there are now; the
 * survivors killed with TR_KILL_RUNNING.
 */
static void tr_pieces(struct tr *t)
{
	pid_t now[16];
	int n = children(now, 16), i, j;

	t->looked = true;
	t->after = n;
	for (i = 0; i < t->nbefore; i++) {
		for (j = 0; j < n && now[j] != t->before[i]; j++)
			;
		if (j < n)
			t->survivors++;
		else
			t->gone++;
		if (j < n && t->kill_mode == TR_KILL_RUNNING)
			kill(now[j], SIGKILL);
	}
	if (t->kill_mode == TR_KILL_SELF)
		kill(getpid(), SIGKILL);
}

static int tr_eval(void *ctx, const struct dfg_run_view *v,
		   const struct dfg_plan_edit **edits, unsigned int *n)
{
	struct tr *t = ctx;

	t->view_gen = v->generation;
	/* the first evaluation on the new plan */
	if (t->nbefore > 0 && !t->looked)
		tr_pieces(t);
	return tr_eval_job(t, v, edits, n);
}

static void tr_applied(void *ctx, unsigned int generation, int err,
		       const char *why)
{
	struct tr *t = ctx;
	int i;

	t->pending = false;
	tr_gate_answered(t, err);
	/* the first change applied or refused: the processes of the run
	 * before it (called before any of them goes; a refusal at the
	 * carry, too) */
	if (!t->nbefore && t->kill_mode >= 0 && err != -ECANCELED) {
		t->nbefore = children(t->before, 16);
		for (i = 0; t->kill_mode == TR_KILL_APPLIED && i < t->nbefore;
		     i++)
			kill(t->before[i], SIGKILL);
	}
	if (!err) {
		t->accepted++;
		t->generation = generation;
		snprintf(t->path, sizeof(t->path), "%s", why ? why : "");
		if (t->kill_applied && (int)generation == t->kill_applied)
			kill(getpid(), SIGKILL);
	} else if (err == -ECANCELED) {
		t->cancelled++;
	} else {
		t->refused++;
		snprintf(t->why, sizeof(t->why), "%s", why ? why : "");
	}
}

FIXTURE(rp) {
	char dir[64];
	char dot[128], out[128], state[128];
	char out2[128];		/* the second piece's (job2_tail) */
	bool other_part;	/* not in DFG_REPLAN_PART's part, or not
				 * in DFG_REPLAN_ONLY */
	char *ref;		/* the sorted output of the first plan */
	bool nodev;
};

static void write_job(FIXTURE_DATA(rp) *self, const char *flow)
{
	FILE *f = fopen(self->dot, "w");

	if (!f)
		return;
	fprintf(f, job_fmt, NELEMS, NKEYS, self->out, flow,
		strcmp(flow, "hash") ? "" : ", key=\"$0\"");
	fclose(f);
}

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The output, lines sorted (gather's order is the instances'), or NULL. */
static char *sorted_output(const char *path)
{
	char *text = NULL, *p, **lines = NULL, *res = NULL;
	size_t len = 0, n = 0, i, cap = 0;
	FILE *f = fopen(path, "r"), *m;

	if (!f)
		return NULL;
	m = open_memstream(&text, &len);
	if (m) {
		char buf[4096];
		size_t got;

		while ((got = fread(buf, 1, sizeof(buf), f)))
			fwrite(buf, 1, got, m);
		fclose(m);
	}
	fclose(f);
	if (!text)
		return NULL;
	for (p = strtok(text, "\n"); p; p = strtok(NULL, "\n")) {
		if (n == cap) {
			cap = cap ? 2 * cap : 128;
			lines = realloc(lines, cap * sizeof(*lines));
			if (!lines)
				return NULL;
		}
		lines[n++] = p;
	}
	qsort(lines, n, sizeof(*lines), cmp_lines);
	m = open_memstream(&res, &len);
	for (i = 0; m && i < n; i++)
		fprintf(m, "%s\n", lines[i]);
	if (m)
		fclose(m);
	free(lines);
	free(text);
	return res;
}

/* Every key once, with its count among @n elements: nothing lost,
 * nothing twice. */
static int counts_n(const char *sorted, long n)
{
	unsigned int seen[NKEYS] = { 0 }, k;
	const char *p = sorted;
	long key, count;
	int used;

	while (p && *p) {
		if (sscanf(p, "%ld %ld%n", &key, &count, &used) != 2 ||
		    key < 0 || key >= NKEYS || seen[key]++)
			return 0;
		if (count != (n - 1 - key) / NKEYS + 1)
			return 0;
		p = strchr(p + used, '\n');
		p = p ? p + 1 : NULL;
	}
	for (k = 0; k < NKEYS; k++)
		if (seen[k] != 1)
			return 0;
	return 1;
}

static int counts_ok(const char *sorted)
{
	return counts_n(sorted, NELEMS);
}

/* The sum of the counts of every line. */
static long total_count(const char *p)
{
	long k, c, total = 0;
	int used;

	while (p && sscanf(p, "%ld %ld%n", &k, &c, &used) == 2) {
		total += c;
		p = strchr(p + used, '\n');
		p = p ? p + 1 : NULL;
	}
	return total;
}

/*
 * The run's log, as the test replanner reads it: a line at a time, on
 * stderr too with DFG_REPLAN_LOG=1; the stop marks' line moves the gates
 * (tr_gate_marked()).
 */
struct tr_log {
	const struct tr	*t;
	char		line[512];
	size_t		len;
};

static ssize_t tr_log_write(void *cookie, const char *buf, size_t size)
{
	static const char marks[] = "re-plan: stop marks at checkpoint ";
	struct tr_log *l = cookie;
	size_t i;

	if (getenv("DFG_REPLAN_LOG") && fwrite(buf, 1, size, stderr) != size)
		return -1;
	for (i = 0; i < size; i++) {
		if (buf[i] != '\n') {
			if (l->len < sizeof(l->line) - 1)
				l->line[l->len++] = buf[i];
			continue;
		}
		l->line[l->len] = '\0';
		if (!strncmp(l->line, marks, sizeof(marks) - 1))
			tr_gate_marked(l->t);
		l->len = 0;
	}
	return (ssize_t)size;
}

static int run_job(FIXTURE_DATA(rp) *self, struct tr *t, unsigned int flags,
		   struct dfg_run_summary *sum, char *err, size_t errlen)
{
	static const cookie_io_functions_t io = { .write = tr_log_write };
	struct tr_log l = { .t = t };
	FILE *log = NULL;
	int ret;

	struct dfg_replanner r = {
		.eval = tr_eval, .applied = tr_applied, .ctx = t,
	};
	struct dfg_run_opts o = {
		.size = sizeof(o),
		.flags = flags,
		.checkpoint_every = t && t->no_ckpt ? 0 : EVERY,
		.state_dir = t && t->no_ckpt ? NULL : self->state,
		.err = err,
		.errlen = errlen,
		.replanner = t ? &r : NULL,
		.replan_ms = 5,
	};

	/* DFG_REPLAN_LOG=1: the plans and the re-plans' steps on stderr */
	if (getenv("DFG_REPLAN_LOG"))
		o.flags |= DFG_RUN_VERBOSE;
	if (getenv("DFG_REPLAN_LOG") || (t && t->gated)) {
		log = fopencookie(&l, "w", io);
		if (!log)
			return -ENOMEM;
		/* each line as it is written, not when the run ends */
		setvbuf(log, NULL, _IOLBF, 0);
		o.log = log;
	}

	err[0] = '\0';
	ret = dfg_run(self->dot, &o, sum);
	if (log)
		fclose(log);
	return ret;
}

/* @name is one of the comma-separated names of @list. */
static bool named(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p;

	for (p = list; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return true;
	return false;
}

FIXTURE_SETUP(rp)
{
	struct dfg_run_summary sum;
	const char *part, *only;
	char err[512];
	int fd = open("/dev/dfg", O_RDWR | O_CLOEXEC);

	self->ref = NULL;
	gates = mmap(NULL, 2 * sizeof(*gates), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, gates);
	gates_set(GATE_OPEN, GATE_OPEN);
	ASSERT_EQ(0, dfg_comp_register(&gate_type));
	self->nodev = fd < 0;
	if (fd >= 0)
		close(fd);
	snprintf(self->dir, sizeof(self->dir), "/tmp/dfg-replan.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->dot, sizeof(self->dot), "%s/job.dot", self->dir);
	snprintf(self->out, sizeof(self->out), "%s/out.txt", self->dir);
	snprintf(self->state, sizeof(self->state), "%s/state", self->dir);
	snprintf(self->out2, sizeof(self->out2), "%s/out2.txt", self->dir);
	write_job(self, "hash");
	/* the two-piece tests (pieces_*; pieces_refused_* apart) and the
	 * others run as programs of their own (selftests/run/replan.sh,
	 * replan_pieces.sh, replan_refused.sh), each in its own time limit */
	part = getenv("DFG_REPLAN_PART");
	self->other_part = part &&
		strcmp(part, strstr(_metadata->name, "pieces_refused") ?
			     "refused" : strstr(_metadata->name, "pieces_") ?
			     "pieces" : "one");
	only = getenv("DFG_REPLAN_ONLY");
	if (only && !named(only, _metadata->name))
		self->other_part = true;
	if (self->nodev || self->other_part)
		return;
	ASSERT_EQ(0, run_job(self, NULL, 0, &sum, err, sizeof(err)))
		TH_LOG("%s", err);
	self->ref = sorted_output(self->out);
	ASSERT_NE(NULL, self->ref);
	ASSERT_TRUE(counts_ok(self->ref));
	unlink(self->out);
}

FIXTURE_TEARDOWN(rp)
{
	char cmd[128];

	free(self->ref);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		TH_LOG("could not remove %s", self->dir);
}

#define SKIP_IF_NO_DEV() do {						\
	if (self->other_part)						\
		SKIP(return, "%s", "not asked for (DFG_REPLAN_PART, _ONLY)"); \
	if (self->nodev)						\
		SKIP(return, "%s", "no dfg device");			\
} while (0)

/* The output of the last run equals the first plan's, key by key. */
static int same_output(FIXTURE_DATA(rp) *self)
{
	char *got = sorted_output(self->out);
	int ok = got && !strcmp(got, self->ref) && counts_ok(got);

	free(got);
	return ok;
}

static const struct dfg_plan_edit deg4[] = {
	{ .op = DFG_EDIT_DEGREE, .comp = "cnt", .degree = 4 },
	{ .op = DFG_EDIT_DEGREE, .comp = "fix", .degree = 4 },
};

/* Skew's answer: the keyed count goes from 2 to 4 instances mid-run. */
TEST_F_TIMEOUT(rp, degree_2_to_4, 300)
{
	const struct dfg_plan_edit *steps[] = { deg4 };
	const unsigned int nsteps[] = { 2 };
	struct tr t = { .steps = steps, .nsteps = nsteps, .nlists = 1 };
	struct dfg_run_summary sum;
	char err[512];

	SKIP_IF_NO_DEV();
	tr_gate_start(&t);
	ASSERT_EQ(0, run_job(self, &t, 0, &sum, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(1, t.accepted) TH_LOG("refused: %s", t.why);
	EXPECT_EQ(1, t.generation);
	EXPECT_EQ(1, sum.replans);
	EXPECT_EQ(0, sum.refused);
	EXPECT_FALSE(t.view_bad);
	EXPECT_GT(sum.pause_ns, 0);
	EXPECT_EQ(sum.pause_ns, sum.pause_max_ns);
	EXPECT_TRUE(same_output(self));
	/* one piece: every set stops */
	EXPECT_STREQ("full restart: it affects every piece of the graph",
		     t.path);
	/* at K, on their stop marks: none had to be killed */
	EXPECT_GT(sum.stopped_clean, 0);
	EXPECT_EQ(0, sum.stopped_killed);
	TH_LOG("pause %.3f ms", (double)sum.pause_ns / 1e6);
	/* the state directory is gone with its generations */
	EXPECT_NE(0, access(self->state, F_OK));
}

/*
 * PLAN_CHANGE events of this process's runs, read by a thread while the
 * run goes on (the run's other events would fill the socket otherwise).
 */
struct plan_watch {
	struct dfg_events	*evs;
	pthread_t		thread;
	int			stop;		/* atomic */
	unsigned long long	gens[16];
	__u32			graphs[16];
	unsigned int		n, lost;
};

static void watch_one(struct plan_watch *w, int ms)
{
	struct dfg_event_msg ev;
	__u64 gen;
	int r = dfg_events_next(w->evs, &ev, ms);

	if (r == -ENOBUFS)
		w->lost++;
	if (r || ev.type != DFG_EV_PLAN_CHANGE || ev.pid != (__u32)getpid())
		return;
	if (w->n < 16 && !dfg_events_value(w->evs, DFG_NL_A_COUNT, &gen)) {
		w->gens[w->n] = gen;
		w->graphs[w->n] = ev.graph;
	}
	w->n++;
}

static void *watch_thread(void *arg)
{
	struct plan_watch *w = arg;

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
		watch_one(w, 50);
	return NULL;
}

/* Watching from now on; 0, or -errno (no events: no DFG_F_PLAN_GEN). */
static int watch_start(struct plan_watch *w)
{
	struct dfg_info info;
	struct dfg *d;
	int r;

	memset(w, 0, sizeof(*w));
	r = dfg_open(&d, DFG_OPEN_NO_RING);
	if (r)
		return r;
	r = dfg_info(d, &info);
	dfg_close(d);
	if (r)
		return r;
	if (!(info.features & DFG_F_PLAN_GEN))
		return -EOPNOTSUPP;
	r = dfg_events_open(&w->evs, 0);
	if (r)
		return r;
	r = -pthread_create(&w->thread, NULL, watch_thread, w);
	if (r)
		dfg_events_close(w->evs);
	return r;
}

/* Stops the thread and reads what is left. */
static void watch_stop(struct plan_watch *w)
{
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
	pthread_join(w->thread, NULL);
	watch_one(w, 200);
	watch_one(w, 0);
	dfg_events_close(w->evs);
}

TEST_F_TIMEOUT(rp, unfold_fold_substitute, 300)
{
	static const struct dfg_plan_edit unfold[] = {
		{ .op = DFG_EDIT_UNFOLD, .comp = "key" },
	};
	static const struct dfg_plan_edit sub[] = {
		{ .op = DFG_EDIT_SUBSTITUTE, .comp = "fix", .type = "filter" },
		{ .op = DFG_EDIT_PARAM, .comp = "fix", .key = "expr",
		  .value = "1" },
	};
	static const struct dfg_plan_edit fold[] = {
		{ .op = DFG_EDIT_FOLD, .comp = "key" },
	};
	const struct dfg_plan_edit *steps[] = { unfold, sub, fold };
	const unsigned int nsteps[] = { 1, 2, 1 };
	struct tr t = { .steps = steps, .nsteps = nsteps, .nlists = 3 };
	struct dfg_run_summary sum;
	struct plan_watch w;
	unsigned int i;
	char err[512];

	SKIP_IF_NO_DEV();
	ASSERT_EQ(0, watch_start(&w));
	tr_gate_start(&t);
	ASSERT_EQ(0, run_job(self, &t, 0, &sum, err, sizeof(err)))
		TH_LOG("%s", err);
	watch_stop(&w);
	EXPECT_EQ(3, t.accepted) TH_LOG("refused: %s", t.why);
	EXPECT_EQ(3, sum.replans);
	EXPECT_GE(sum.pause_ns, sum.pause_max_ns);
	EXPECT_TRUE(same_output(self));
	/*
	 * each plan's kernel graph (a new one per generation, often with
	 * the id of the one before) announced its generation, in order
	 */
	EXPECT_EQ(0, w.lost);
	ASSERT_EQ(4, w.n);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(i, w.gens[i]);
		EXPECT_NE(0, w.graphs[i]);
	}
}

/* Refused edits: the run goes on on its plan, and says why. */
TEST_F_TIMEOUT(rp, refused, 300)
{
	static const struct dfg_plan_edit zero[] = {
		{ .op = DFG_EDIT_DEGREE, .comp = "cnt", .degree = 0 },
	};
	static const struct dfg_plan_edit alone[] = {
		{ .op = DFG_EDIT_DEGREE, .comp = "cnt", .degree = 3 },
	};
	/* the gate between them too: straight flows keep the degree */
	static const struct dfg_plan_edit source[] = {
		{ .op = DFG_EDIT_DEGREE, .comp = "gen", .degree = 2 },
		{ .op = DFG_EDIT_DEGREE, .comp = "gate", .degree = 2 },
		{ .op = DFG_EDIT_DEGREE, .comp = "key", .degree = 2 },
	};
	const struct dfg_plan_edit *steps[] = { zero, alone, source };
	const unsigned int nsteps[] = { 1, 1, 3 };
	struct tr t = { .steps = steps, .nsteps = nsteps, .nlists = 3 };
	struct dfg_run_summary sum;
	char err[512];

	SKIP_IF_NO_DEV();
	tr_gate_start(&t);
	ASSERT_EQ(0, run_job(self, &t, 0, &sum, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(0, t.accepted);
	EXPECT_EQ(3, t.refused);
	EXPECT_STREQ("'gen' is a source: its degree cannot change while it runs",
		     t.why);
	EXPECT_EQ(0, sum.replans);
	EXPECT_EQ(3, sum.refused);
	EXPECT_TRUE(same_output(self));
}

/*
 * Behind a round-robin flow the count's state is not keyed by a flow:
 * the change is refused once the processes stopped at the checkpoint,
 * and the run goes on on the old plan from there.
 */
TEST_F_TIMEOUT(rp, refused_at_carry, 300)
{
	const struct dfg_plan_edit *steps[] = { deg4 };
	const unsigned int nsteps[] = { 2 };
	struct tr t = { .steps = steps, .nsteps = nsteps, .nlists = 1 };
	struct dfg_run_summary sum;
	char err[512], *got;

	SKIP_IF_NO_DEV();
	write_job(self, "roundrobin");
	tr_gate_start(&t);
	ASSERT_EQ(0, run_job(self, &t, 0, &sum, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(0, t.accepted);
	EXPECT_EQ(1, t.refused);
	EXPECT_STREQ("'cnt' has state and is not fed by a hash flow: it cannot change degree",
		     t.why);
	EXPECT_EQ(0, sum.replans);
	/* per instance counts, whatever the spread: the sum is right */
	got = sorted_output(self->out);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(NELEMS, total_count(got));
	free(got);
}

/* Random re-plans over as many runs as it takes; each run checked. */
/* 10,000 re-plans take hours under TCG: the bound is the target's */
TEST_F_TIMEOUT(rp, random, 36000)
{
	const char *env = getenv("DFG_REPLAN_TARGET");
	unsigned long target = env ? strtoul(env, NULL, 10) : 60;
	unsigned long done = 0, refused = 0, runs = 0;
	__u64 pause = 0, pmax = 0, clean = 0, killed = 0;
	char err[512];

	SKIP_IF_NO_DEV();
	while (done < target) {
		struct tr t = { .random = true, .seed = 1000 + runs,
				.limit = target - done };
		struct dfg_run_summary sum;

		tr_gate_start(&t);
		ASSERT_EQ(0, run_job(self, &t, 0, &sum, err, sizeof(err)))
			TH_LOG("run %lu: %s", runs, err);
		ASSERT_TRUE(same_output(self)) TH_LOG("run %lu", runs);
		ASSERT_FALSE(t.view_bad);
		ASSERT_EQ(t.accepted, sum.replans);
		ASSERT_EQ(t.refused, sum.refused);
		/* every change stopped its processes, on marks or killed */
		ASSERT_GE(sum.stopped_clean + sum.stopped_killed, sum.replans);
		unlink(self->out);
		clean += sum.stopped_clean;
		killed += sum.stopped_killed;
		done += t.accepted;
		refused += t.refused;
		pause += sum.pause_ns;
		if (sum.pause_max_ns > pmax)
			pmax = sum.pause_max_ns;
		/* a run that re-plans nothing makes no progress */
		ASSERT_GT(t.accepted, 0) TH_LOG("run %lu", runs);
		runs++;
	}
	TH_LOG("%lu re-plans (and %lu refused) in %lu runs; pause %.2f ms on average, %.2f ms at most; processes stopped at K %llu, killed %llu",
	       done, refused, runs, (double)pause / 1e6 / (double)done,
	       (double)pmax / 1e6, (unsigned long long)clean,
	       (unsigned long long)killed);
}

/* Errors a caller can reach. */
TEST_F_TIMEOUT(rp, errors, 300)
{
	const struct dfg_plan_edit *steps[] = { deg4 };
	const unsigned int nsteps[] = { 2 };
	struct tr t = { .fail_eval = -EPERM };
	struct dfg_run_summary sum;
	char err[512], path[192];
	struct dfg_run_opts o = { .size = 7 };
	FILE *f;

	SKIP_IF_NO_DEV();
	/* the replanner stops the run */
	EXPECT_EQ(-EPERM, run_job(self, &t, 0, &sum, err, sizeof(err)));
	EXPECT_STREQ("replanner: Operation not permitted", err);

	/* no checkpoints: nothing can change */
	memset(&t, 0, sizeof(t));
	t.steps = steps;
	t.nsteps = nsteps;
	t.nlists = 1;
	t.no_ckpt = true;
	tr_gate_start(&t);
	ASSERT_EQ(0, run_job(self, &t, 0, &sum, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(1, t.refused);
	EXPECT_STREQ("re-planning needs checkpoints (checkpoint_every and a state directory)",
		     t.why);
	EXPECT_TRUE(same_output(self));

	/* an older caller's size runs, another size does not */
	o.size = DFG_RUN_OPTS_SIZE_V0;
	o.err = err;
	o.errlen = sizeof(err);
	EXPECT_EQ(0, dfg_run(self->dot, &o, &sum)) TH_LOG("%s", err);
	o.size = DFG_RUN_OPTS_SIZE_V0 + 1;
	EXPECT_EQ(-EINVAL, dfg_run(self->dot, &o, &sum));
	EXPECT_STREQ("invalid arguments", err);

	/* a journal that does not parse */
	/* the failed run above kept its state directory */
	ASSERT_TRUE(!mkdir(self->state, 0700) || errno == EEXIST);
	snprintf(path, sizeof(path), "%s/replan", self->state);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("generation 1 from 3\nedit x\n", f);
	fclose(f);
	EXPECT_EQ(-EBADMSG, run_job(self, NULL, DFG_RUN_RESUME, &sum, err,
				    sizeof(err)));
	EXPECT_TRUE(strstr(err, "/replan:2: malformed") != NULL) TH_LOG("%s",
									 err);
	/* one whose edits no longer apply to the graph */
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("generation 1 from 3\nedit 1\tghost\t2\t\\0\t\\0\t\\0\nend\n",
	      f);
	fclose(f);
	EXPECT_EQ(-EINVAL, run_job(self, NULL, DFG_RUN_RESUME, &sum, err,
				   sizeof(err)));
	EXPECT_TRUE(strstr(err, "generation 1 no longer applies: edit 0: unknown component 'ghost'") != NULL)
		TH_LOG("%s", err);
}

/* A graph of two phases keeps its plan. */
TEST_F_TIMEOUT(rp, phases, 300)
{
	const struct dfg_plan_edit *steps[] = { deg4 };
	const unsigned int nsteps[] = { 2 };
	struct tr t = { .steps = steps, .nsteps = nsteps, .nlists = 1 };
	struct dfg_run_summary sum;
	char err[512];
	FILE *f;

	SKIP_IF_NO_DEV();
	f = fopen(self->dot, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, job_fmt, NELEMS, NKEYS, self->out, "hash, key=\"$0\"",
		"];\n  out [phase=1");
	fclose(f);
	tr_gate_start(&t);
	ASSERT_EQ(0, run_job(self, &t, 0, &sum, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(1, t.refused);
	EXPECT_STREQ("re-planning a graph of several phases is not supported",
		     t.why);
	EXPECT_TRUE(same_output(self));
}

/* Runs the job in a process group of its own; returns its pid. */
static pid_t spawn(FIXTURE_DATA(rp) *self, struct tr *t, unsigned int flags)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct dfg_run_summary sum;
		char err[512];

		setpgid(0, 0);
		_exit(run_job(self, t, flags, &sum, err, sizeof(err)) ? 1 : 0);
	}
	if (pid > 0)
		setpgid(pid, pid);
	return pid;
}

/* Waits for the run and every process it left (we are their reaper). */
static void reap_group(pid_t pgid)
{
	int st;

	while (waitpid(-pgid, &st, 0) > 0 || errno == EINTR)
		;
}

/* kill -9 of the coordinator once the new plan is committed, then
 * --resume on the plan the journal names. */
TEST_F_TIMEOUT(rp, kill_at_commit_then_resume, 300)
{
	const struct dfg_plan_edit *steps[] = { deg4 };
	const unsigned int nsteps[] = { 2 };
	struct tr t = { .steps = steps, .nsteps = nsteps, .nlists = 1,
			.kill_applied = 1 };
	struct dfg_run_summary sum;
	char err[512], path[192];
	int st;
	pid_t pid;

	SKIP_IF_NO_DEV();
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	tr_gate_start(&t);
	pid = spawn(self, &t, 0);
	ASSERT_GT(pid, 0);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	reap_group(pid);
	snprintf(path, sizeof(path), "%s/replan", self->state);
	ASSERT_EQ(0, access(path, F_OK));
	gates_set(GATE_OPEN, GATE_OPEN);
	/* resumed without a replanner: the journal gives the plan */
	ASSERT_EQ(0, run_job(self, NULL, DFG_RUN_RESUME, &sum, err,
			     sizeof(err)))
		TH_LOG("%s", err);
	/* cnt+fix x4, out: 5 set instances in one worker pool; gen+gate+key
	 * in a process of its own (the test's gate component) */
	EXPECT_EQ(5, sum.pooled);
	EXPECT_EQ(2, sum.processes);
	EXPECT_TRUE(same_output(self));
}

/* kill -9 of the whole run at random points while it re-plans. */
TEST_F_TIMEOUT(rp, kill_anywhere_then_resume, 300)
{
	struct dfg_run_summary sum;
	unsigned int round, seed = 77;
	char err[512];

	SKIP_IF_NO_DEV();
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	for (round = 0; round < 6; round++) {
		struct tr t = { .random = true, .seed = 2000 + round };
		struct timespec ts = {
			.tv_nsec = (long)(50 + rand_r(&seed) % 400) * 1000000L,
		};
		pid_t pid = spawn(self, &t, 0);

		ASSERT_GT(pid, 0);
		nanosleep(&ts, NULL);
		kill(-pid, SIGKILL);
		reap_group(pid);
		ASSERT_EQ(0, run_job(self, NULL, DFG_RUN_RESUME, &sum, err,
				     sizeof(err)))
			TH_LOG("round %u: %s", round, err);
		ASSERT_TRUE(same_output(self)) TH_LOG("round %u", round);
		unlink(self->out);
	}
}

/*
 * Two pieces: the hash job, and beside it a job of its own (gen2 ...
 * out2, N2 elements) joined to it by no flow. A change to the first
 * job's keyed count stops that piece alone: the second runs on in its
 * process, on its kernel graph, through the switch.
 */
static const char job2_tail[] =
	"  gen2 [type=generate, count=%u];\n"
	"  gate2 [type=gate, piece=1];\n"
	"  key2 [type=map, expr=\"$0 %% %u\"];\n"
	"  cnt2 [type=count, degree=2];\n"
	"  fix2 [type=map, expr=\"$0\", degree=2];\n"
	"  out2 [type=write_lines, file=\"%s\"];\n"
	"  gen2 -> gate2;\n"
	"  gate2 -> key2;\n"
	"  key2 -> cnt2 [flow=hash, key=\"$0\"];\n"
	"  cnt2 -> fix2;\n"
	"  fix2 -> out2 [flow=gather];\n"
	"}\n";

static int write_job2(FIXTURE_DATA(rp) *self, const char *flow)
{
	char head[2048], *end;
	FILE *f;

	snprintf(head, sizeof(head), job_fmt, NELEMS, NKEYS, self->out, flow,
		 strcmp(flow, "hash") ? "" : ", key=\"$0\"");
	end = strrchr(head, '}');
	if (!end)
		return -1;
	*end = '\0';
	f = fopen(self->dot, "w");
	if (!f)
		return -1;
	fprintf(f, "%s", head);
	fprintf(f, job2_tail, N2, NKEYS, self->out2);
	return fclose(f) ? -1 : 0;
}

/* Entries of /sys/kernel/dfg/graphs: the module's graphs, or -1. */
static int nr_graphs(void)
{
	DIR *d = opendir("/sys/kernel/dfg/graphs");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * The output of the second piece is that of a run that never re-planned:
 * each key once, with its count of the N2 elements (a line per key; the
 * first piece's is compared with the fixture's run, same_output()).
 */
static int same_out2(FIXTURE_DATA(rp) *self)
{
	char *got = sorted_output(self->out2);
	int ok = got && counts_n(got, N2);

	free(got);
	return ok;
}

/* Nothing of a run left: no process, no kernel graph, the module's
 * pages as they were (@pages) before it. */
#define EXPECT_NOTHING_LEFT(pages) do {					\
	pid_t left_[4];							\
									\
	EXPECT_EQ(0, children(left_, 4));				\
	EXPECT_EQ(0, nr_graphs());					\
	EXPECT_EQ(pages, dfg_pages());					\
} while (0)

/* The degree change of the first piece: partial, the second runs on. */
TEST_F_TIMEOUT(rp, pieces_partial, 600)
{
	const struct dfg_plan_edit *steps[] = { deg4 };
	const unsigned int nsteps[] = { 2 };
	struct tr t = { .steps = steps, .nsteps = nsteps, .nlists = 1 };
	struct dfg_run_summary sum;
	char err[512];
	long pages;

	SKIP_IF_NO_DEV();
	pages = dfg_pages();
	ASSERT_EQ(0, write_job2(self, "hash"));
	tr_gate_start(&t);
	ASSERT_EQ(0, run_job(self, &t, 0, &sum, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(1, t.accepted) TH_LOG("refused: %s", t.why);
	EXPECT_EQ(1, sum.replans);
	EXPECT_FALSE(t.view_bad);
	EXPECT_EQ(0, strncmp(t.path, "partial: 4 set instances ran on", 31))
		TH_LOG("%s", t.path);
	/* before: each piece's pool and its gated generator's process (a
	 * test component's set runs in a process of its own); after: the
	 * second's, the same processes, and the first's anew */
	EXPECT_TRUE(t.looked);
	EXPECT_EQ(4, t.nbefore);
	EXPECT_EQ(2, t.survivors);
	EXPECT_EQ(2, t.gone);
	EXPECT_EQ(4, t.after);
	/* four processes, then two more */
	EXPECT_EQ(6, sum.processes);
	/* the first piece's two, stopped at K on their marks, let go */
	EXPECT_EQ(2, sum.stopped_clean);
	EXPECT_EQ(0, sum.stopped_killed);
	EXPECT_GT(sum.pause_ns, 0);
	EXPECT_TRUE(same_output(self));
	EXPECT_TRUE(same_out2(self));
	EXPECT_NOTHING_LEFT(pages);
	EXPECT_NE(0, access(self->state, F_OK));
	TH_LOG("pause of the stopped piece %.3f ms",
	       (double)sum.pause_ns / 1e6);
}

/* The first piece's output: every element counted once, whatever the
 * spread of a round-robin flow's counts over the instances. */
static int total_ok(FIXTURE_DATA(rp) *self)
{
	char *got = sorted_output(self->out);
	int ok = got && total_count(got) == NELEMS;

	free(got);
	return ok;
}

/*
 * A change the carry refuses (the count behind a round-robin flow cannot
 * change degree) after the first piece stopped at K on its marks: that
 * piece alone restarts from K on the old plan, in a pool anew; the
 * second's runs on in its process.
 */
TEST_F_TIMEOUT(rp, pieces_refused_at_carry, 600)
{
	const struct dfg_plan_edit *steps[] = { deg4 };
	const unsigned int nsteps[] = { 2 };
	struct tr t = { .steps = steps, .nsteps = nsteps, .nlists = 1 };
	struct dfg_run_summary sum;
	char err[512];
	long pages;

	SKIP_IF_NO_DEV();
	pages = dfg_pages();
	ASSERT_EQ(0, write_job2(self, "roundrobin"));
	tr_gate_start(&t);
	ASSERT_EQ(0, run_job(self, &t, 0, &sum, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(0, t.accepted);
	EXPECT_EQ(1, t.refused);
	EXPECT_STREQ("'cnt' has state and is not fed by a hash flow: it cannot change degree",
		     t.why);
	EXPECT_EQ(0, sum.replans);
	EXPECT_EQ(1, sum.refused);
	/* no change: no change's pause */
	EXPECT_EQ(0, sum.pause_ns);
	/* the plan's generation stays (no key skew to check here: the
	 * count is fed round-robin) */
	EXPECT_EQ(0, t.generation);
	EXPECT_EQ(0, t.view_gen);
	/* the second piece's processes (its pool, its gated generator's)
	 * ran on, the first's were let go at K and started anew */
	EXPECT_TRUE(t.looked);
	EXPECT_EQ(4, t.nbefore);
	EXPECT_EQ(2, t.survivors);
	EXPECT_EQ(2, t.gone);
	EXPECT_EQ(4, t.after);
	EXPECT_EQ(6, sum.processes);
	EXPECT_EQ(2, sum.stopped_clean);
	EXPECT_EQ(0, sum.stopped_killed);
	EXPECT_TRUE(total_ok(self));
	EXPECT_TRUE(same_out2(self));
	EXPECT_NOTHING_LEFT(pages);
	EXPECT_NE(0, access(self->state, F_OK));
}

/*
 * A worker pool killed while the change is applied (every process of the
 * run, the one that would run on included), or the one that ran on
 * killed once the new plan runs, or the coordinator killed then: the run
 * fails or dies, leaves nothing behind, and --resume finishes it with
 * the output of a run that never re-planned. @refused: the same with the
 * change the carry refuses after the first piece stopped (the kills come
 * at the refusal, and once that piece restarted on the old plan; the
 * journal names the restart, a generation without edits).
 */
static void pieces_kill(struct __test_metadata *_metadata,
			FIXTURE_DATA(rp) *self, int mode, bool refused)
{
	const struct dfg_plan_edit *steps[] = { deg4 };
	const unsigned int nsteps[] = { 2 };
	struct tr t = { .steps = steps, .nsteps = nsteps, .nlists = 1,
			.kill_mode = mode };
	struct dfg_run_summary sum;
	char err[512], path[192], text[512] = "";
	unsigned long long from;
	size_t len;
	FILE *f;
	long pages;
	pid_t pid;
	int st;

	pages = dfg_pages();
	ASSERT_EQ(0, write_job2(self, refused ? "roundrobin" : "hash"));
	tr_gate_start(&t);
	if (mode == TR_KILL_SELF) {
		ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
		pid = spawn(self, &t, 0);
		ASSERT_GT(pid, 0);
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		reap_group(pid);
		snprintf(path, sizeof(path), "%s/replan", self->state);
		f = fopen(path, "r");
		ASSERT_NE(NULL, f);
		len = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		text[len] = '\0';
		ASSERT_EQ(1, sscanf(text, "generation 1 from %llu", &from))
			TH_LOG("%s", text);
		EXPECT_GT(from, 0);
		/* a change has edits, a restart none */
		EXPECT_EQ(refused, strstr(text, "edit") == NULL)
			TH_LOG("%s", text);
	} else {
		EXPECT_NE(0, run_job(self, &t, 0, &sum, err, sizeof(err)));
		EXPECT_EQ((unsigned int)!refused, t.accepted)
			TH_LOG("refused: %s", t.why);
		EXPECT_EQ((unsigned int)refused, t.refused);
		if (!refused)
			EXPECT_EQ(0, strncmp(t.path, "partial:", 8))
				TH_LOG("%s", t.path);
		EXPECT_TRUE(strstr(err, "killed by signal 9") != NULL)
			TH_LOG("%s", err);
		/* the second piece's pool and gated generator */
		if (mode == TR_KILL_RUNNING)
			EXPECT_EQ(2, t.survivors);
	}
	EXPECT_NOTHING_LEFT(pages);
	gates_set(GATE_OPEN, GATE_OPEN);
	ASSERT_EQ(0, run_job(self, NULL, DFG_RUN_RESUME, &sum, err,
			     sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_TRUE(refused ? total_ok(self) : same_output(self));
	EXPECT_TRUE(same_out2(self));
	EXPECT_NOTHING_LEFT(pages);
	EXPECT_NE(0, access(self->state, F_OK));
}

TEST_F_TIMEOUT(rp, pieces_killed_while_switching, 600)
{
	SKIP_IF_NO_DEV();
	pieces_kill(_metadata, self, TR_KILL_APPLIED, false);
}

TEST_F_TIMEOUT(rp, pieces_killed_running_on, 600)
{
	SKIP_IF_NO_DEV();
	pieces_kill(_metadata, self, TR_KILL_RUNNING, false);
}

TEST_F_TIMEOUT(rp, pieces_refused_killed_while_switching, 600)
{
	SKIP_IF_NO_DEV();
	pieces_kill(_metadata, self, TR_KILL_APPLIED, true);
}

TEST_F_TIMEOUT(rp, pieces_refused_killed_running_on, 600)
{
	SKIP_IF_NO_DEV();
	pieces_kill(_metadata, self, TR_KILL_RUNNING, true);
}

TEST_F_TIMEOUT(rp, pieces_refused_coordinator_killed, 600)
{
	SKIP_IF_NO_DEV();
	pieces_kill(_metadata, self, TR_KILL_SELF, true);
}

/*
 * Random changes of the first piece, several per run: the second piece
 * runs on through each, its objects and checkpoints kept from the
 * generation it started in.
 */
TEST_F_TIMEOUT(rp, pieces_random, 3600)
{
	unsigned int run, changes = 0;
	char err[512];
	long pages;

	SKIP_IF_NO_DEV();
	pages = dfg_pages();
	ASSERT_EQ(0, write_job2(self, "hash"));
	for (run = 0; run < 2; run++) {
		struct tr t = { .random = true, .seed = 3000 + run,
				.limit = 3 };
		struct dfg_run_summary sum;

		tr_gate_start(&t);
		ASSERT_EQ(0, run_job(self, &t, 0, &sum, err, sizeof(err)))
			TH_LOG("run %u: %s", run, err);
		ASSERT_TRUE(same_output(self)) TH_LOG("run %u", run);
		ASSERT_TRUE(same_out2(self)) TH_LOG("run %u", run);
		ASSERT_FALSE(t.view_bad);
		ASSERT_EQ(t.accepted, sum.replans);
		/* every change affects the first piece alone */
		EXPECT_GT(t.accepted, 0) TH_LOG("run %u", run);
		if (t.accepted)
			EXPECT_EQ(0, strncmp(t.path, "partial:", 8))
				TH_LOG("run %u: %s", run, t.path);
		EXPECT_GE(sum.stopped_clean + sum.stopped_killed,
			  sum.replans);
		TH_LOG("run %u: processes stopped at K %llu, killed %llu",
		       run, (unsigned long long)sum.stopped_clean,
		       (unsigned long long)sum.stopped_killed);
		EXPECT_NOTHING_LEFT(pages);
		unlink(self->out);
		unlink(self->out2);
		changes += t.accepted;
	}
	TH_LOG("%u partial re-plans in %u runs", changes, run);
}

TEST_HARNESS_MAIN
