// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: the rule interpreter (<dfg/rules.h>) on synthetic run
 * views: syntax errors and their positions, each kind of condition and
 * action, rules adding and revoking rules, the firing bound, refused
 * edits, explain output, the plan store across handles, central and local
 * interpreters, and the default rule set's degree change on key skew.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <sqlite3.h>

#include <dfg/rules.h>

#include "kselftest_harness.h"

/* src -hash-> part (degree D) -gather-> sink */
static const char graph_fmt[] =
	"digraph g {\n"
	"  src [type=gen];\n"
	"  part [type=count, degree=%u, mode=fast];\n"
	"  sink [type=out];\n"
	"  src -> part [flow=hash, key=k];\n"
	"  part -> sink [flow=gather];\n"
	"}\n";

struct world {
	struct dfg_flow			*fg;
	struct dfg_plan			*plan;
	struct dfg_run_view_comp	comps[3];
	struct dfg_run_view		view;
};

static int world_init(struct world *w, unsigned int degree)
{
	char text[512];
	int ret;

	memset(w, 0, sizeof(*w));
	snprintf(text, sizeof(text), graph_fmt, degree);
	ret = dfg_flow_parse(text, strlen(text), "t.dot", NULL, &w->fg, NULL);
	if (ret)
		return ret;
	ret = dfg_plan_build(w->fg, 0, &w->plan);
	if (ret)
		return ret;
	w->view = (struct dfg_run_view){
		.fg = w->fg, .plan = w->plan, .now_ns = 1000000000ULL,
		.comps = w->comps,
	};
	return 0;
}

static void world_fini(struct world *w)
{
	dfg_plan_free(w->plan);
	dfg_flow_free(w->fg);
}

/* Index of component @name in the test graph. */
static unsigned int ci(const struct world *w, const char *name)
{
	return (unsigned int)dfg_flow_find(w->fg, name);
}

struct warns {
	char	buf[4096];
	size_t	len;
	int	n;
};

static void warn_cb(void *arg, const char *msg)
{
	struct warns *w = arg;
	int n = snprintf(w->buf + w->len, sizeof(w->buf) - w->len, "%s\n",
			 msg);

	if (n > 0 && w->len + n < sizeof(w->buf))
		w->len += n;
	w->n++;
}

static int load(struct dfg_rules *r, const char *text,
		struct dfg_rules_error *err)
{
	return dfg_rules_load_string(r, text, strlen(text), "t.rules", err);
}

FIXTURE(rules) {
	struct dfg_rules	*r;
	struct world		w;
	struct warns		warns;
	const struct dfg_plan_edit *e;
	unsigned int		n;
};

FIXTURE_SETUP(rules)
{
	static const struct dfg_rules_system sys = {
		.cpus = 8, .numa = 2, .mem_avail = 1ULL << 30,
	};

	ASSERT_EQ(0, dfg_rules_new(&self->r, 0));
	ASSERT_EQ(0, world_init(&self->w, 2));
	ASSERT_EQ(0, dfg_rules_set_system(self->r, &sys));
	ASSERT_EQ(0, dfg_rules_set_warn(self->r, warn_cb, &self->warns));
}

FIXTURE_TEARDOWN(rules)
{
	dfg_rules_free(self->r);
	world_fini(&self->w);
}

static int eval(struct dfg_rules *r, struct world *w,
		const struct dfg_plan_edit **e, unsigned int *n)
{
	w->view.now_ns += 1000000000ULL;
	return dfg_rules_eval(r, &w->view, e, n);
}

/* --- syntax errors ------------------------------------------------------ */

static const struct {
	const char	*text;
	unsigned int	line, col;
	const char	*msg;
} bad[] = {
	{ "rule a\nwhen comp ?c degre > 1\ndo fold ?c end", 2, 14,
	  "expected a slot of comp (name, type," },
	{ "rule a when comp ?c do fold ?c", 1, 31,
	  "expected ';' or 'end', found end of file" },
	{ "rule a when comp ?c do explode ?c end", 1, 24,
	  "expected an action: degree," },
	{ "rule a when comp ?c\n  do degree ?x 2 end", 2, 13,
	  "expected a ?variable bound by an earlier" },
	{ "rule a when comp ?c type == \"x\n do fold ?c end", 1, 29,
	  "expected '\"' to close the string" },
	{ "rule a when cpu ?c do fold ?c end", 1, 13,
	  "expected a condition: comp, flow," },
	{ "rule when comp ?c do fold ?c end", 1, 6,
	  "expected a rule name, found 'when'" },
	{ "rule a when comp ?c degree >> 1 do fold ?c end", 1, 29,
	  "expected a value" },
	{ "rule a when comp ?c degree = 1 do fold ?c end", 1, 28,
	  "expected a comparison" },
	{ "rule a when comp ?c do set x = 1 end", 1, 28,
	  "expected a $variable, found 'x'" },
	{ "rule a salience high when comp ?c do fold ?c end", 1, 17,
	  "expected an integer salience" },
	{ "var x 3", 1, 7, "expected '=', found '3'" },
	{ "rule a when flow ?f do degree ?f 2 end", 1, 34,
	  "expected '.' and a slot after '?f'" },
	{ "rule a when comp ?c @ do fold ?c end", 1, 21,
	  "expected a name, number, string" },
	{ "rule a when comp ?c do add fold ?c end", 1, 28,
	  "expected 'rule' after 'add'" },
	{ "rule a when flow ?f do degree ?f.nope 2 end", 1, 34,
	  "expected a slot of flow (src, dst, kind, key, src_type, dst_type), found 'nope'" },
	{ "rule a when comp ?c type < \"x\" do fold ?c end", 1, 28,
	  "expected a number after '<'" },
	{ "rule a when comp ?c type < \"x\" + 1 + 2 do fold ?c end", 1, 28,
	  "expected a number around '+', found string \"x\"" },
	{ "rule a when comp ?c do degree ?c 2 * \"y\" end", 1, 38,
	  "expected a number around '*', found string \"y\"" },
	{ "rule a when test 1 + 2 < \"y\" do fold x end", 1, 26,
	  "expected numbers on both sides of '<', found string \"y\"" },
};

TEST_F(rules, syntax_errors)
{
	struct dfg_rules_error err;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		EXPECT_EQ(-EINVAL, load(self->r, bad[i].text, &err)) TH_LOG("case %u", i);
		EXPECT_STREQ("t.rules", err.file);
		EXPECT_EQ(bad[i].line, err.line) TH_LOG("case %u: %s", i,
							err.msg);
		EXPECT_EQ(bad[i].col, err.col) TH_LOG("case %u: %s", i,
						      err.msg);
		EXPECT_NE(NULL, strstr(err.msg, bad[i].msg)) TH_LOG("case %u: '%s'", i, err.msg);
	}
}

/*
 * Mutations of a valid text (a fixed seed: the same 3000 every run) load
 * or fail with a position inside the text; nothing crashes or leaks.
 */
TEST_F(rules, mutated_texts)
{
	static const char alphabet[] = "?$.,;()\"#=<>!+-*/ \n09az_";
	static const char base[] =
		"var t = 1.5\n"
		"rule a for part salience 5\n"
		"when comp ?c fed_by == hash, key_skew >= $t, degree < 8\n"
		"  and flow ?f dst == ?c, kind != \"straight\"\n"
		"  and not param comp == ?c, key == mode\n"
		"  and test ?f.key == k\n"
		"do degree ?c ?c.degree * 2; set $x = (?c.degree + 1) / 2;\n"
		"   add rule b when system cpus > 1 do revoke a end\n"
		"end\n";
	struct dfg_rules_error err;
	unsigned int i, j, lines, ok = 0;
	char text[sizeof(base) + 8];
	unsigned int seed = 1;
	int ret;

	for (i = 0; i < 3000; i++) {
		size_t len = sizeof(base) - 1, at;

		memcpy(text, base, len);
		for (j = 0; j < 1 + i % 3; j++) {
			at = rand_r(&seed) % len;
			switch (rand_r(&seed) % 3) {
			case 0:		/* replace */
				text[at] = alphabet[rand_r(&seed) %
						    (sizeof(alphabet) - 1)];
				break;
			case 1:		/* delete */
				memmove(text + at, text + at + 1, len - at - 1);
				len--;
				break;
			default:	/* duplicate */
				memmove(text + at + 1, text + at, len - at);
				len++;
				break;
			}
		}
		for (lines = 1, j = 0; j < len; j++)
			lines += text[j] == '\n';
		memset(&err, 0, sizeof(err));
		ret = dfg_rules_load_string(self->r, text, len, "m.rules", &err);
		if (!ret) {
			ok++;
			continue;
		}
		ASSERT_EQ(-EINVAL, ret) TH_LOG("%.*s", (int)len, text);
		EXPECT_LE(1, err.line);
		EXPECT_GE(lines, err.line) TH_LOG("%.*s", (int)len, text);
		EXPECT_LE(1, err.col);
		EXPECT_NE('\0', err.msg[0]);
	}
	TH_LOG("%u of 3000 mutations still load", ok);
	EXPECT_LT(0, ok);
	/* what still fires is what the last successful load left */
	ASSERT_EQ(0, load(self->r, base, NULL));
	EXPECT_EQ(1, dfg_rules_has(self->r, "a"));
	EXPECT_EQ(0, dfg_rules_has(self->r, "b"));
}

TEST_F(rules, failed_load_adds_nothing)
{
	struct dfg_rules_error err;

	ASSERT_EQ(-EINVAL, load(self->r,
				"rule good when comp ?c do fold ?c end\n"
				"rule bad when comp ?c do end\n", &err));
	EXPECT_EQ(2, err.line);
	EXPECT_EQ(0, dfg_rules_has(self->r, "good"));
	EXPECT_EQ(-EINVAL, load(self->r, "rule a when comp ?c do x end",
				NULL));
}

/* A rule CLIPS refuses after it parsed: the load gives everything back. */
TEST_F(rules, refused_by_clips_restores)
{
	struct dfg_rules_error err;

	ASSERT_EQ(0, load(self->r, "rule a when comp ?c type == out "
			  "do set $a = one end", NULL));
	ASSERT_EQ(-EINVAL, load(self->r,
		"rule a when comp ?c type == count do set $a = two end\n"
		"rule z when not comp ?d type == out\n"
		"  and comp ?c degree == ?d.degree do fold ?c end\n", &err));
	EXPECT_EQ(2, err.line);
	EXPECT_NE(NULL, strstr(err.msg, "rule 'z' not accepted")) TH_LOG("%s", err.msg);
	EXPECT_EQ(1, dfg_rules_has(self->r, "a"));
	EXPECT_EQ(0, dfg_rules_has(self->r, "z"));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_STREQ("one", dfg_rules_var(self->r, "a"));
}

TEST_F(rules, load_file)
{
	char path[] = "/tmp/dfg-rules-XXXXXX";
	struct dfg_rules_error err;
	const char *text = "# a comment\nrule a when comp ?c\ndo fold ?c\n";
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)strlen(text), write(fd, text, strlen(text)));
	close(fd);
	EXPECT_EQ(-EINVAL, dfg_rules_load_file(self->r, path, &err));
	EXPECT_STREQ(path, err.file);
	EXPECT_EQ(4, err.line);
	EXPECT_EQ(1, err.col);
	unlink(path);
	EXPECT_EQ(-ENOENT, dfg_rules_load_file(self->r, path, &err));
}

/* --- conditions --------------------------------------------------------- */

/* Loads @text, evaluates once, and returns variable "hit" (or NULL). */
static const char *hit_after(struct __test_metadata *_metadata,
			     FIXTURE_DATA(rules) *self, const char *text)
{
	struct dfg_rules_error err = { 0 };

	EXPECT_EQ(0, load(self->r, text, &err)) TH_LOG("%s:%u:%u: %s",
						       err.file, err.line,
						       err.col, err.msg);
	EXPECT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	return dfg_rules_var(self->r, "hit");
}

TEST_F(rules, graph_topology)
{
	/* a count component fed by a hash flow from a gen */
	const char *h = hit_after(_metadata, self,
		"rule t when comp ?c type == count\n"
		"  and flow dst == ?c, kind == hash, src_type == gen\n"
		"do set $hit = ?c end\n"
		"rule u when comp ?c type == out and flow dst == ?c, kind == hash\n"
		"do set $wrong = 1 end\n");

	ASSERT_NE(NULL, h);
	EXPECT_STREQ("part", h);
	EXPECT_EQ(NULL, dfg_rules_var(self->r, "wrong"));
}

TEST_F(rules, component_and_parameter)
{
	const char *h = hit_after(_metadata, self,
		"rule t when comp ?c fed_by == hash, degree == 2\n"
		"  and param comp == ?c, key == mode, value == fast\n"
		"do set $hit = ?c.type end\n"
		"rule u when param key == mode, value == slow do set $x = 1 end\n");

	ASSERT_NE(NULL, h);
	EXPECT_STREQ("count", h);
	EXPECT_EQ(NULL, dfg_rules_var(self->r, "x"));
}

/*
 * The param and flow facts are made again only when the graph changes
 * (libdfg/rules/engine.c, sync_graph): they stay while it does not, and
 * follow a new graph's parameters.
 */
TEST_F(rules, parameters_follow_the_graph)
{
	static const char slow[] =
		"digraph g { src [type=gen]; part [type=count, mode=slow];"
		" src -> part [flow=hash, key=k]; }";
	struct dfg_rules_error err = { 0 };
	struct world w2 = { 0 };

	ASSERT_EQ(0, load(self->r,
		"rule s when param comp == part, key == mode, value == slow\n"
		"do set $slow = yes end\n"
		"rule t when param comp == part, key == mode, value == slow\n"
		"  and test $tick == 1 do set $still = yes end\n"
		"rule f when param comp == part, key == mode, value == fast\n"
		"  and test $slow == yes do set $back = yes end\n", &err));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_EQ(NULL, dfg_rules_var(self->r, "slow"));

	/* another graph: mode=slow */
	ASSERT_EQ(0, dfg_flow_parse(slow, strlen(slow), "s.dot", NULL, &w2.fg,
				    NULL));
	ASSERT_EQ(0, dfg_plan_build(w2.fg, 0, &w2.plan));
	w2.view = self->w.view;
	w2.view.fg = w2.fg;
	w2.view.plan = w2.plan;
	w2.view.generation = 1;
	w2.view.comps = w2.comps;
	ASSERT_EQ(0, eval(self->r, &w2, &self->e, &self->n));
	EXPECT_STREQ("yes", dfg_rules_var(self->r, "slow"));
	/* the same graph again: its param fact stays */
	ASSERT_EQ(0, eval(self->r, &w2, &self->e, &self->n));
	ASSERT_EQ(0, dfg_rules_assert_var(self->r, "tick", "1"));
	ASSERT_EQ(0, eval(self->r, &w2, &self->e, &self->n));
	EXPECT_STREQ("yes", dfg_rules_var(self->r, "still"));

	/* back to the first graph: mode=fast again */
	self->w.view.now_ns = w2.view.now_ns;
	self->w.view.generation = 2;
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_STREQ("yes", dfg_rules_var(self->r, "back"));
	world_fini(&w2);
}

TEST_F(rules, system_topology)
{
	const char *h = hit_after(_metadata, self,
		"rule t when system cpus >= 8, numa == 2, mem_avail > 1000\n"
		"do set $hit = 1 end\n"
		"rule u when system cpus > 8 do set $x = 1 end\n");

	ASSERT_NE(NULL, h);
	EXPECT_STREQ("1", h);
	EXPECT_EQ(NULL, dfg_rules_var(self->r, "x"));
}

TEST_F(rules, runtime_variables)
{
	ASSERT_EQ(0, dfg_rules_assert_var(self->r, "mode", "fast"));
	ASSERT_EQ(0, dfg_rules_assert_var(self->r, "limit", "3"));
	EXPECT_STREQ("yes", hit_after(_metadata, self,
		"rule t when test $mode == fast and test $limit + 1 == 4\n"
		"do set $hit = yes end\n"));
	/* a variable's change fires the rules on it again */
	ASSERT_EQ(0, dfg_rules_assert_var(self->r, "hit", NULL));
	EXPECT_EQ(NULL, dfg_rules_var(self->r, "hit"));
	ASSERT_EQ(0, dfg_rules_assert_var(self->r, "mode", "slow"));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_EQ(NULL, dfg_rules_var(self->r, "hit"));
	ASSERT_EQ(0, dfg_rules_assert_var(self->r, "mode", "fast"));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_STREQ("yes", dfg_rules_var(self->r, "hit"));
}

TEST_F(rules, metrics)
{
	struct dfg_rules_system low = { .cpus = 1, .numa = 1,
					.mem_avail = 4096 };
	struct world *w = &self->w;
	unsigned int p = ci(w, "part"), s = ci(w, "src");

	ASSERT_EQ(0, load(self->r,
		"rule cpu when comp ?c cpu_share > 0.5 do set $cpu = ?c end\n"
		"rule rate when comp ?c in_rate >= 1000, in_bytes_rate >= 64000\n"
		"do set $rate = ?c end\n"
		"rule skew when comp ?c key_skew > 2 do set $skew = ?c end\n"
		"rule fill when metric comp == part, name == chan_fill, value > 0.9\n"
		"do set $fill = 1 end\n"
		"rule mem when system mem_avail < 1000000 do set $mem = 1 end\n",
		NULL));
	/* first view: counters since the start, no rates yet */
	w->comps[p] = (struct dfg_run_view_comp){
		.in_elems = 100, .in_bytes = 6400, .cpu_samples = 90,
		.key_skew = 1.0,
	};
	w->comps[s].cpu_samples = 10;
	ASSERT_EQ(0, eval(self->r, w, &self->e, &self->n));
	EXPECT_STREQ("part", dfg_rules_var(self->r, "cpu"));
	EXPECT_EQ(NULL, dfg_rules_var(self->r, "rate"));
	EXPECT_EQ(NULL, dfg_rules_var(self->r, "skew"));
	/* one second later: 1000 elements, 64000 bytes; skew 3 */
	w->comps[p].in_elems += 1000;
	w->comps[p].in_bytes += 64000;
	w->comps[p].key_skew = 3.0;
	ASSERT_EQ(0, dfg_rules_assert_metric(self->r, "part", "chan_fill",
					     0.95));
	ASSERT_EQ(0, eval(self->r, w, &self->e, &self->n));
	EXPECT_STREQ("part", dfg_rules_var(self->r, "rate"));
	EXPECT_STREQ("part", dfg_rules_var(self->r, "skew"));
	EXPECT_STREQ("1", dfg_rules_var(self->r, "fill"));
	EXPECT_EQ(NULL, dfg_rules_var(self->r, "mem"));
	ASSERT_EQ(0, dfg_rules_set_system(self->r, &low));
	ASSERT_EQ(0, eval(self->r, w, &self->e, &self->n));
	EXPECT_STREQ("1", dfg_rules_var(self->r, "mem"));
	EXPECT_EQ(-EINVAL, dfg_rules_assert_metric(self->r, "part", "", 1));
}

TEST_F(rules, events_are_seen_once)
{
	struct dfg_event_msg ev = { .type = DFG_EV_PEER_DEATH, .pid = 42,
				    .graph = 1, .object = 7 };

	ASSERT_EQ(0, load(self->r,
		"rule death when event ?e name == peer_death, pid == 42\n"
		"do set $dead = ?e.object end\n"
		"rule future when event name == event_999 do set $f = 1 end\n",
		NULL));
	ASSERT_EQ(0, dfg_rules_assert_event(self->r, &ev));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_STREQ("7", dfg_rules_var(self->r, "dead"));
	ASSERT_EQ(0, dfg_rules_assert_var(self->r, "dead", NULL));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_EQ(NULL, dfg_rules_var(self->r, "dead"));
	ev.object = 8;
	ASSERT_EQ(0, dfg_rules_assert_event(self->r, &ev));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_STREQ("8", dfg_rules_var(self->r, "dead"));
	/* an event id newer than this libdfg is a fact by number */
	ev.type = 999;
	ASSERT_EQ(0, dfg_rules_assert_event(self->r, &ev));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_STREQ("1", dfg_rules_var(self->r, "f"));
}

/*
 * The module's feedback values are event slots; an event asserted from C
 * carries none, so they read 0 there (a real 0 and an absent value look
 * alike: see dfg-rules(7)).
 */
TEST_F(rules, event_feedback_slots)
{
	struct dfg_event_msg ev = { .type = DFG_EV_CHAN_FILL_HIGH,
				    .graph = 1, .object = 3 };
	struct dfg_rules_error err = { 0 };

	ASSERT_EQ(0, load(self->r,
		"rule high when event ?e name == chan_fill_high, fill == 0,\n"
		"  capacity == 0, mark == 0, cpu == 0, wait_ms == 0,\n"
		"  mem_avail == 0, mem_total == 0, count == 0, rate == 0,\n"
		"  period_ms == 0\n"
		"do set $high = ?e.object end\n"
		"rule full when event name == chan_fill_high, fill > 0\n"
		"do set $full = 1 end\n"
		"rule ratio when event ?e name == chan_fill_high,\n"
		"  capacity > 0, fill >= ?e.capacity * 0.5\n"
		"do set $ratio = 1 end\n",
		&err)) TH_LOG("%s:%u:%u: %s", err.file, err.line, err.col,
			      err.msg);
	ASSERT_EQ(0, dfg_rules_assert_event(self->r, &ev));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_STREQ("3", dfg_rules_var(self->r, "high"));
	EXPECT_EQ(NULL, dfg_rules_var(self->r, "full"));
	EXPECT_EQ(NULL, dfg_rules_var(self->r, "ratio"));

	/* a misspelt slot is a syntax error at its column */
	memset(&err, 0, sizeof(err));
	EXPECT_EQ(-EINVAL, load(self->r,
		"rule x when event ?e name == chan_fill_high, fil > 1\n"
		"do set $x = 1 end\n", &err));
	EXPECT_EQ(1, err.line);
	EXPECT_EQ(46, err.col);
	EXPECT_NE(NULL, strstr(err.msg, "expected a slot of event (name, "
			       "graph, object, pid, rank, cmd, fill, capacity,"
			       " mark, cpu, wait_ms, mem_avail, mem_total, "
			       "count, rate, period_ms), found 'fil'"))
		TH_LOG("'%s'", err.msg);
}

TEST_F(rules, negation_and_attachment)
{
	ASSERT_EQ(0, load(self->r,
		"rule lone when comp ?c and not flow src == ?c\n"
		"do set $sinkless = ?c end\n"
		"rule mine for sink when comp ?c degree == 1 do set $mine = ?c end\n"
		"rule self for src when system cpus > 0 do set $self = ?self end\n",
		NULL));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_STREQ("sink", dfg_rules_var(self->r, "sinkless"));
	EXPECT_STREQ("sink", dfg_rules_var(self->r, "mine"));
	EXPECT_STREQ("src", dfg_rules_var(self->r, "self"));
}

/* --- actions ------------------------------------------------------------ */

TEST_F(rules, plan_actions)
{
	struct world *w = &self->w;

	ASSERT_EQ(0, load(self->r,
		"rule a when comp ?c type == count\n"
		"do degree ?c ?c.degree * 2; unfold ?c;\n"
		"   param ?c \"mode\" slow\n"
		"end\n"
		"rule b salience -1 when comp ?c type == out\n"
		"do substitute ?c \"out2\"; fold \"src\" end\n", NULL));
	ASSERT_EQ(0, eval(self->r, w, &self->e, &self->n));
	ASSERT_EQ(4, self->n);
	EXPECT_EQ(DFG_EDIT_DEGREE, self->e[0].op);
	EXPECT_STREQ("part", self->e[0].comp);
	EXPECT_EQ(4, self->e[0].degree);
	/* part folds with nothing here: unfolding it changes nothing */
	EXPECT_EQ(DFG_EDIT_PARAM, self->e[1].op);
	EXPECT_STREQ("mode", self->e[1].key);
	EXPECT_STREQ("slow", self->e[1].value);
	EXPECT_EQ(DFG_EDIT_SUBSTITUTE, self->e[2].op);
	EXPECT_STREQ("sink", self->e[2].comp);
	EXPECT_STREQ("out2", self->e[2].type);
	EXPECT_EQ(DFG_EDIT_FOLD, self->e[3].op);
	EXPECT_STREQ("src", self->e[3].comp);
}

TEST_F(rules, edits_that_change_nothing_are_dropped)
{
	ASSERT_EQ(0, load(self->r,
		"rule a when comp ?c type == count\n"
		"do degree ?c 2; param ?c mode fast; substitute ?c count;\n"
		"   degree ?c 3; degree ?c 5\n"
		"end\n", NULL));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	/* the last degree wins */
	ASSERT_EQ(1, self->n);
	EXPECT_EQ(5, self->e[0].degree);
}

TEST_F(rules, invalid_edits_are_refused)
{
	static const char *const texts[] = {
		"rule a when comp ?c type == count do degree ?c 0 end",
		"rule a when comp ?c type == count do degree ?c 1025 end",
		"rule a when comp ?c type == count do degree ?c 2.5 end",
		"rule a when comp ?c type == count do degree nosuch 2 end",
		"rule a when comp ?c type == count do substitute ?c \"\" end",
	};
	struct dfg_rules_stats st;
	unsigned int i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		self->warns.len = 0;
		self->warns.buf[0] = '\0';
		ASSERT_EQ(0, load(self->r, texts[i], NULL));
		/* with a valid edit beside: the whole decision goes */
		ASSERT_EQ(0, load(self->r,
			"rule b when comp ?c type == out do degree ?c 1; "
			"unfold ?c end", NULL));
		ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
		EXPECT_EQ(0, self->n) TH_LOG("case %u", i);
		EXPECT_NE(NULL, strstr(self->warns.buf, "refused")) TH_LOG("case %u: %s", i, self->warns.buf);
		ASSERT_EQ(0, dfg_rules_revoke(self->r, "a"));
		ASSERT_EQ(0, dfg_rules_revoke(self->r, "b"));
	}
	ASSERT_EQ(0, dfg_rules_stats(self->r, &st));
	EXPECT_EQ(5, st.refused);
}

/* A refusal the rules ask for at every evaluation is said once. */
TEST_F(rules, refusal_said_once)
{
	struct dfg_rules_stats st;
	unsigned int p = ci(&self->w, "part"), i;

	ASSERT_EQ(0, load(self->r, "rule z when comp ?c type == count, "
			  "in_elems > 0 do degree ?c 0 end", NULL));
	for (i = 1; i <= 3; i++) {
		self->w.comps[p].in_elems = 1000 * i;	/* fires again */
		ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
		EXPECT_EQ(0, self->n);
	}
	EXPECT_EQ(1, self->warns.n) TH_LOG("%s", self->warns.buf);
	ASSERT_EQ(0, dfg_rules_stats(self->r, &st));
	EXPECT_EQ(3, st.refused);
	/* new rules: said again */
	ASSERT_EQ(0, load(self->r, "rule y when comp ?c type == out "
			  "do set $y = 1 end", NULL));
	self->w.comps[p].in_elems = 5000;
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_EQ(2, self->warns.n) TH_LOG("%s", self->warns.buf);
}

TEST_F(rules, warn_action)
{
	ASSERT_EQ(0, dfg_rules_assert_var(self->r, "s", "text"));
	ASSERT_EQ(0, load(self->r,
		"rule w when comp ?c type == count do warn $s + 1 end\n"
		"rule v when comp ?c type == out do warn ?c end\n", NULL));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_NE(NULL, strstr(self->warns.buf, "rule v: sink"));
	/* "+" on a string: CLIPS's error is passed on, the run goes on */
	EXPECT_NE(NULL, strstr(self->warns.buf, "CLIPS"));
}

TEST_F(rules, rules_add_and_revoke_rules)
{
	ASSERT_EQ(0, load(self->r,
		"rule grow when test $phase == 1\n"
		"do add rule late when comp ?c type == out\n"
		"       do set $late = ?c end\n"
		"end\n"
		"rule shrink when test $phase == 2 do revoke late end\n"
		"rule replace when test $phase == 3\n"
		"do add rule late when comp ?c type == gen do set $late = ?c end\n"
		"end\n", NULL));
	EXPECT_EQ(0, dfg_rules_has(self->r, "late"));
	ASSERT_EQ(0, dfg_rules_assert_var(self->r, "phase", "1"));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_EQ(1, dfg_rules_has(self->r, "late"));
	/* the added rule fires in the same evaluation */
	EXPECT_STREQ("sink", dfg_rules_var(self->r, "late"));
	ASSERT_EQ(0, dfg_rules_assert_var(self->r, "phase", "2"));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_EQ(0, dfg_rules_has(self->r, "late"));
	ASSERT_EQ(0, dfg_rules_assert_var(self->r, "phase", "3"));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_EQ(1, dfg_rules_has(self->r, "late"));
	EXPECT_STREQ("src", dfg_rules_var(self->r, "late"));
	/* from C */
	EXPECT_EQ(0, dfg_rules_revoke(self->r, "late"));
	EXPECT_EQ(-ENOENT, dfg_rules_revoke(self->r, "late"));
	EXPECT_EQ(0, dfg_rules_has(self->r, "late"));
}

TEST_F(rules, later_load_replaces_a_rule)
{
	ASSERT_EQ(0, load(self->r, "rule a when comp ?c type == out "
			  "do set $a = one end", NULL));
	ASSERT_EQ(0, load(self->r, "rule a when comp ?c type == out "
			  "do set $a = two end", NULL));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_STREQ("two", dfg_rules_var(self->r, "a"));
}

TEST_F(rules, firing_cutoff)
{
	struct dfg_rules_stats st;

	ASSERT_EQ(0, load(self->r,
		"var x = 0\n"
		"rule ping when test $x == 0 do set $x = 1; degree part 4 end\n"
		"rule pong when test $x == 1 do set $x = 0 end\n", NULL));
	ASSERT_EQ(0, dfg_rules_set_max_firings(self->r, 50));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_EQ(0, self->n);
	EXPECT_NE(NULL, strstr(self->warns.buf,
			       "still firing after 50 firings: cut off"));
	ASSERT_EQ(0, dfg_rules_stats(self->r, &st));
	EXPECT_EQ(1, st.cutoffs);
	EXPECT_EQ(50, st.firings);
	EXPECT_EQ(-EINVAL, dfg_rules_set_max_firings(self->r, 0));
}

/* --- explain ------------------------------------------------------------ */

TEST_F(rules, explain)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, dfg_rules_set_explain(self->r, dfg_rules_explain_print,
					   f));
	ASSERT_EQ(0, load(self->r,
		"rule more when comp ?c fed_by == hash, key_skew > 2\n"
		"do degree ?c 4 end\n"
		"rule note when system cpus > 1 do set $n = 1 end\n"
		"rule alone when comp ?c type == out do unfold ?c end\n", NULL));
	self->w.comps[ci(&self->w, "part")].key_skew = 3;
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	fclose(f);
	ASSERT_NE(NULL, out);
	EXPECT_NE(NULL, strstr(out, "rules: more fired (t.rules:1)\n"
			       "  matched (comp (name \"part\") (type \"count\") "
			       "(degree 2)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "(key_skew 3)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "  change degree part 4\n"));
	EXPECT_NE(NULL, strstr(out, "rules: note fired (t.rules:3)\n"
			       "  matched (system (cpus 8) (numa 2)"));
	EXPECT_NE(NULL, strstr(out, "  no plan change\n"));
	/* sink is alone in its set: unfolding it changes nothing */
	EXPECT_NE(NULL, strstr(out, "rules: alone fired (t.rules:4)\n")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "change unfold sink"));
	free(out);
}

/* --- the default rule set ----------------------------------------------- */

TEST_F(rules, default_rules_skew_2_to_4)
{
	struct world *w = &self->w;
	unsigned int p = ci(w, "part");

	ASSERT_EQ(0, dfg_rules_load_default(self->r, NULL));
	EXPECT_EQ(1, dfg_rules_has(self->r, "skew_scale_out"));
	w->comps[p].key_skew = 1.2;
	ASSERT_EQ(0, eval(self->r, w, &self->e, &self->n));
	EXPECT_EQ(0, self->n);
	w->comps[p].key_skew = 2.5;
	ASSERT_EQ(0, eval(self->r, w, &self->e, &self->n));
	ASSERT_EQ(1, self->n);
	EXPECT_EQ(DFG_EDIT_DEGREE, self->e[0].op);
	EXPECT_STREQ("part", self->e[0].comp);
	EXPECT_EQ(4, self->e[0].degree);
	/* the threshold is a variable */
	ASSERT_EQ(0, dfg_rules_assert_var(self->r, "skew_threshold", "3"));
	ASSERT_EQ(0, eval(self->r, w, &self->e, &self->n));
	EXPECT_EQ(0, self->n);
}

/* Short of memory, a sort becomes an external sort, and the run says so. */
TEST_F(rules, default_rules_low_memory_sort)
{
	static const char text[] =
		"digraph g { src [type=gen]; s [type=sort]; out [type=out];"
		" src -> s; s -> out; }";
	struct dfg_rules_system sys = { .cpus = 8, .numa = 2,
					.mem_avail = 1ULL << 30 };
	struct world w = { 0 };

	ASSERT_EQ(0, dfg_flow_parse(text, strlen(text), "m.dot", NULL, &w.fg,
				    NULL));
	ASSERT_EQ(0, dfg_plan_build(w.fg, 0, &w.plan));
	w.view = (struct dfg_run_view){ .fg = w.fg, .plan = w.plan,
					.now_ns = 1, .comps = w.comps };
	ASSERT_EQ(0, dfg_rules_load_default(self->r, NULL));
	ASSERT_EQ(0, dfg_rules_set_system(self->r, &sys));
	ASSERT_EQ(0, eval(self->r, &w, &self->e, &self->n));
	EXPECT_EQ(0, self->n);
	EXPECT_EQ(0, self->warns.n);

	sys.mem_avail = 32ULL << 20;
	ASSERT_EQ(0, dfg_rules_set_system(self->r, &sys));
	ASSERT_EQ(0, eval(self->r, &w, &self->e, &self->n));
	ASSERT_EQ(1, self->n);
	EXPECT_EQ(DFG_EDIT_SUBSTITUTE, self->e[0].op);
	EXPECT_STREQ("s", self->e[0].comp);
	EXPECT_STREQ("sort_external", self->e[0].type);
	EXPECT_EQ(1, self->warns.n);
	EXPECT_NE(NULL, strstr(self->warns.buf, "below low_memory"));
	world_fini(&w);
}

/* A straight neighbour changes with the component (in both directions). */
TEST_F(rules, default_rules_straight_neighbours)
{
	static const char text[] =
		"digraph g {\n"
		"  src [type=gen];\n"
		"  pre [type=map, degree=2];\n"
		"  part [type=count, degree=2];\n"
		"  fix [type=map, degree=2];\n"
		"  sink [type=out];\n"
		"  src -> pre [flow=roundrobin];\n"
		"  pre -> part [flow=hash, key=k];\n"
		"  part -> fix;\n"
		"  fix -> sink [flow=gather];\n"
		"}\n";
	struct dfg_run_view_comp comps[5] = { 0 };
	struct dfg_run_view v = { .now_ns = 1, .comps = comps };
	struct dfg_rules_stats st;
	struct dfg_flow *fg;
	struct dfg_plan *plan;
	unsigned int i, seen = 0;

	ASSERT_EQ(0, dfg_flow_parse(text, strlen(text), "s.dot", NULL, &fg,
				    NULL));
	ASSERT_EQ(0, dfg_plan_build(fg, 0, &plan));
	v.fg = fg;
	v.plan = plan;
	comps[dfg_flow_find(fg, "part")].key_skew = 2;
	ASSERT_EQ(0, dfg_rules_load_default(self->r, NULL));
	ASSERT_EQ(0, dfg_rules_eval(self->r, &v, &self->e, &self->n));
	ASSERT_EQ(2, self->n);
	for (i = 0; i < self->n; i++) {
		EXPECT_EQ(DFG_EDIT_DEGREE, self->e[i].op);
		EXPECT_EQ(4, self->e[i].degree);
		seen |= !strcmp(self->e[i].comp, "part") ? 1 :
			!strcmp(self->e[i].comp, "fix") ? 2 : 4;
	}
	EXPECT_EQ(3, seen);
	ASSERT_EQ(0, dfg_rules_stats(self->r, &st));
	EXPECT_EQ(0, st.cutoffs);
	dfg_plan_free(plan);
	dfg_flow_free(fg);
}

TEST_F(rules, default_rules_one_step)
{
	struct world w4;
	unsigned int p;

	ASSERT_EQ(0, dfg_rules_load_default(self->r, NULL));
	/* the plan changed to 4; the hot key is still hot: no second step */
	ASSERT_EQ(0, world_init(&w4, 4));
	p = ci(&w4, "part");
	w4.comps[p].key_skew = 2.5;
	ASSERT_EQ(0, eval(self->r, &w4, &self->e, &self->n));
	EXPECT_EQ(0, self->n);
	w4.comps[p].key_skew = 5;
	ASSERT_EQ(0, eval(self->r, &w4, &self->e, &self->n));
	EXPECT_EQ(0, self->n);
	world_fini(&w4);
}

/*
 * CPU hotplug: 2 CPUs, part at degree 2; one goes offline: part fits on
 * the one left, once; it comes back: part gets its second instance back,
 * once; two more come: one instance per CPU.
 */
static void set_cpus(struct __test_metadata *_metadata, struct dfg_rules *r,
		     unsigned int cpus)
{
	const struct dfg_rules_system sys = {
		.cpus = cpus, .numa = 1, .mem_avail = 1ULL << 30,
	};

	ASSERT_EQ(0, dfg_rules_set_system(r, &sys));
}

TEST_F(rules, default_rules_cpu_hotplug)
{
	struct world w1;

	ASSERT_EQ(0, dfg_rules_load_default(self->r, NULL));
	set_cpus(_metadata, self->r, 2);
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_EQ(0, self->n);
	EXPECT_STREQ("2", dfg_rules_var(self->r, "cpus_seen"));
	/* CPU 1 offline */
	set_cpus(_metadata, self->r, 1);
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	ASSERT_EQ(1, self->n);
	EXPECT_EQ(DFG_EDIT_DEGREE, self->e[0].op);
	EXPECT_STREQ("part", self->e[0].comp);
	EXPECT_EQ(1, self->e[0].degree);
	EXPECT_STREQ("1", dfg_rules_var(self->r, "cpus_seen"));
	/* the new plan: nothing more to do, even with the skew of 1 */
	ASSERT_EQ(0, world_init(&w1, 1));
	w1.view.now_ns = self->w.view.now_ns;
	w1.comps[ci(&w1, "part")].key_skew = 1.0;
	ASSERT_EQ(0, eval(self->r, &w1, &self->e, &self->n));
	EXPECT_EQ(0, self->n);
	ASSERT_EQ(0, eval(self->r, &w1, &self->e, &self->n));
	EXPECT_EQ(0, self->n);
	/* CPU 1 back */
	set_cpus(_metadata, self->r, 2);
	ASSERT_EQ(0, eval(self->r, &w1, &self->e, &self->n));
	ASSERT_EQ(1, self->n);
	EXPECT_STREQ("part", self->e[0].comp);
	EXPECT_EQ(2, self->e[0].degree);
	EXPECT_STREQ("2", dfg_rules_var(self->r, "cpus_seen"));
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_EQ(0, self->n);
	set_cpus(_metadata, self->r, 4);
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	ASSERT_EQ(1, self->n);
	EXPECT_EQ(4, self->e[0].degree);
	EXPECT_STREQ("4", dfg_rules_var(self->r, "cpus_seen"));
	world_fini(&w1);
}

/* Rates go on across a new graph of the same components (a new plan). */
TEST_F(rules, rates_across_plans)
{
	struct world w2;
	unsigned int p = ci(&self->w, "part");

	ASSERT_EQ(0, load(self->r, "rule rate when comp ?c in_rate >= 500 "
			  "do set $rate = ?c.in_rate end", NULL));
	self->w.comps[p].in_elems = 1000;
	ASSERT_EQ(0, eval(self->r, &self->w, &self->e, &self->n));
	EXPECT_EQ(NULL, dfg_rules_var(self->r, "rate"));
	ASSERT_EQ(0, world_init(&w2, 4));
	w2.view.now_ns = self->w.view.now_ns;
	w2.comps[ci(&w2, "part")].in_elems = 1600;
	ASSERT_EQ(0, eval(self->r, &w2, &self->e, &self->n));
	EXPECT_STREQ("600", dfg_rules_var(self->r, "rate"));
	world_fini(&w2);
}

/* --- plan store --------------------------------------------------------- */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Evaluates a view of the test graph at @degree with @skew on part; the
 * evaluation alone takes *@ms.
 */
static int skewed_eval(struct dfg_rules *r, unsigned int degree, double skew,
		       const struct dfg_plan_edit **e, unsigned int *n,
		       unsigned int *degree_out, double *ms)
{
	struct world w;
	double t0;
	int ret = world_init(&w, degree);

	if (ret)
		return ret;
	w.comps[ci(&w, "part")].key_skew = skew;
	t0 = now_ms();
	ret = eval(r, &w, e, n);
	if (ms)
		*ms = now_ms() - t0;
	*degree_out = !ret && *n ? (*e)[0].degree : 0;
	world_fini(&w);
	return ret;
}

/* Removes the store's files (the database and its WAL) and @dir. */
static void rm_store(const char *dir)
{
	static const char *const files[] = {
		"plans.db", "plans.db-wal", "plans.db-shm",
	};
	char path[128];
	unsigned int i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

TEST_F(rules, plan_store_second_run)
{
	static const struct dfg_rules_system sys = {
		.cpus = 8, .numa = 2, .mem_avail = 1ULL << 30,
	};
	char dir[] = "/tmp/dfg-plans-XXXXXX";
	const char *text = "var skew_max_degree = 8\n";
	struct dfg_rules_stats st;
	struct dfg_rules *r2;
	unsigned int d;
	double ms;

	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, dfg_rules_load_default(self->r, NULL));
	ASSERT_EQ(0, load(self->r, text, NULL));
	ASSERT_EQ(0, dfg_rules_store_open(self->r, dir));
	/* first run: 2 -> 4 -> 8 in two steps, then no change */
	ASSERT_EQ(0, skewed_eval(self->r, 2, 3, &self->e, &self->n, &d, NULL));
	EXPECT_EQ(4, d);
	ASSERT_EQ(0, skewed_eval(self->r, 4, 3, &self->e, &self->n, &d, NULL));
	EXPECT_EQ(8, d);
	ASSERT_EQ(0, skewed_eval(self->r, 8, 3, &self->e, &self->n, &d, NULL));
	EXPECT_EQ(0, self->n);
	ASSERT_EQ(0, dfg_rules_stats(self->r, &st));
	EXPECT_EQ(0, st.store_hits);
	EXPECT_EQ(1, st.store_entries);

	/* second run, a new handle on the same directory: one step */
	ASSERT_EQ(0, dfg_rules_new(&r2, 0));
	ASSERT_EQ(0, dfg_rules_set_system(r2, &sys));
	/* loaded in another order */
	ASSERT_EQ(0, load(r2, "rule unrelated when system cpus > 99 "
			  "do warn x end", NULL));
	ASSERT_EQ(0, dfg_rules_load_default(r2, NULL));
	ASSERT_EQ(0, load(r2, text, NULL));
	ASSERT_EQ(0, dfg_rules_revoke(r2, "unrelated"));
	ASSERT_EQ(0, dfg_rules_store_open(r2, dir));
	ASSERT_EQ(0, skewed_eval(r2, 2, 3, &self->e, &self->n, &d, &ms));
	ASSERT_EQ(1, self->n);
	EXPECT_EQ(8, d);
	ASSERT_EQ(0, dfg_rules_stats(r2, &st));
	EXPECT_EQ(1, st.store_hits);
	EXPECT_EQ(0, st.firings);
	TH_LOG("plan store hit: %.3f ms (sanitizers on)", ms);
	/* another rule set is another signature */
	ASSERT_EQ(0, load(r2, "rule x when system cpus > 99 do warn x end",
			  NULL));
	ASSERT_EQ(0, skewed_eval(r2, 2, 3.5, &self->e, &self->n, &d, NULL));
	EXPECT_EQ(4, d);
	ASSERT_EQ(0, dfg_rules_stats(r2, &st));
	EXPECT_EQ(1, st.store_hits);
	dfg_rules_free(r2);
	rm_store(dir);
}

TEST_F(rules, plan_store_forgets_refused)
{
	char dir[] = "/tmp/dfg-plans-XXXXXX";
	struct dfg_replanner rp = dfg_rules_replanner(self->r);
	struct dfg_rules_stats st;
	struct dfg_rules *r2;
	unsigned int d;

	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, dfg_rules_load_default(self->r, NULL));
	ASSERT_EQ(0, dfg_rules_store_open(self->r, dir));
	ASSERT_EQ(0, skewed_eval(self->r, 2, 3, &self->e, &self->n, &d, NULL));
	EXPECT_EQ(4, d);
	rp.applied(rp.ctx, 0, -EINVAL, "a test refusal");
	EXPECT_NE(NULL, strstr(self->warns.buf, "a test refusal"));
	/* said once while the rules insist */
	rp.applied(rp.ctx, 0, -EINVAL, "a test refusal");
	EXPECT_EQ(1, self->warns.n);
	ASSERT_EQ(0, dfg_rules_stats(self->r, &st));
	EXPECT_EQ(2, st.refused);
	EXPECT_EQ(0, st.store_entries);
	ASSERT_EQ(0, dfg_rules_new(&r2, 0));
	ASSERT_EQ(0, dfg_rules_store_open(r2, dir));
	ASSERT_EQ(0, dfg_rules_stats(r2, &st));
	EXPECT_EQ(0, st.store_entries);
	dfg_rules_free(r2);
	rm_store(dir);
}

static int count_rec(void *arg, const struct dfg_plan_record *rec)
{
	struct dfg_plan_record *last = arg;

	last->nedits += rec->nedits;
	last->id = rec->id;
	last->hits = rec->hits;
	last->created++;	/* records seen */
	last->edits = NULL;
	return 0;
}

/* A new run's interpreter: the default rules, the store of @dir. */
static int new_run(const char *dir, struct dfg_rules **rp)
{
	static const struct dfg_rules_system sys = {
		.cpus = 8, .numa = 2, .mem_avail = 1ULL << 30,
	};
	int ret = dfg_rules_new(rp, 0);

	if (ret)
		return ret;
	ret = dfg_rules_set_system(*rp, &sys);
	if (!ret)
		ret = dfg_rules_load_default(*rp, NULL);
	if (!ret)
		ret = dfg_rules_store_open(*rp, dir);
	if (ret) {
		dfg_rules_free(*rp);
		*rp = NULL;
	}
	return ret;
}

/* What `dfg plans` reads: records, one by id, forgetting. */
TEST_F(rules, plan_store_records)
{
	char dir[] = "/tmp/dfg-plans-XXXXXX";
	struct dfg_plan_record seen = { 0 };
	struct dfg_plan_store *s;
	struct dfg_rules *r2;
	struct stat st;
	unsigned int d;
	char missing[64];

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(missing, sizeof(missing), "%s/none", dir);
	EXPECT_EQ(-ENOENT, dfg_plan_store_open(dir, 0, &s));
	EXPECT_EQ(-ENOENT, dfg_plan_store_open(missing, 0, &s));
	EXPECT_EQ(-EINVAL, dfg_plan_store_open(dir, 2, &s));
	EXPECT_EQ(-EINVAL, dfg_plan_store_open(NULL, 0, &s));
	ASSERT_EQ(0, dfg_rules_load_default(self->r, NULL));
	ASSERT_EQ(0, dfg_rules_store_open(self->r, dir));
	ASSERT_EQ(0, skewed_eval(self->r, 2, 3, &self->e, &self->n, &d, NULL));
	EXPECT_EQ(4, d);

	ASSERT_EQ(0, dfg_plan_store_open(dir, 0, &s));
	/* the owner's alone, like the state directory */
	snprintf(missing, sizeof(missing), "%s/plans.db", dir);
	ASSERT_EQ(0, stat(missing, &st));
	EXPECT_EQ(0, st.st_mode & 077);
	ASSERT_EQ(0, dfg_plan_store_each(s, 0, count_rec, &seen));
	EXPECT_EQ(1, seen.created);
	EXPECT_EQ(1, seen.nedits);
	EXPECT_EQ(0, seen.hits);
	ASSERT_NE(0, seen.id);
	EXPECT_EQ(-ENOENT, dfg_plan_store_each(s, seen.id + 1, count_rec,
					       &seen));
	EXPECT_EQ(-EINVAL, dfg_plan_store_each(s, 0, NULL, NULL));

	/* another handle served from it: a hit, counted once that handle
	 * is past the decision (not on its path: here, closed), seen by
	 * this one */
	ASSERT_EQ(0, new_run(dir, &r2));
	ASSERT_EQ(0, skewed_eval(r2, 2, 3, &self->e, &self->n, &d, NULL));
	EXPECT_EQ(4, d);
	memset(&seen, 0, sizeof(seen));
	ASSERT_EQ(0, dfg_plan_store_each(s, 0, count_rec, &seen));
	EXPECT_EQ(0, seen.hits);
	dfg_rules_free(r2);
	memset(&seen, 0, sizeof(seen));
	ASSERT_EQ(0, dfg_plan_store_each(s, 0, count_rec, &seen));
	EXPECT_EQ(1, seen.created);
	EXPECT_EQ(1, seen.hits);

	EXPECT_EQ(-ENOENT, dfg_plan_store_forget(s, seen.id + 1));
	EXPECT_EQ(0, dfg_plan_store_forget(s, seen.id));
	EXPECT_EQ(-ENOENT, dfg_plan_store_each(s, seen.id, count_rec, &seen));
	EXPECT_EQ(0, dfg_plan_store_forget(s, 0));
	/* forgotten: the next run decides again, with its rules */
	ASSERT_EQ(0, new_run(dir, &r2));
	ASSERT_EQ(0, skewed_eval(r2, 2, 3, &self->e, &self->n, &d, NULL));
	EXPECT_EQ(4, d);
	memset(&seen, 0, sizeof(seen));
	ASSERT_EQ(0, dfg_plan_store_each(s, 0, count_rec, &seen));
	EXPECT_EQ(1, seen.created);
	EXPECT_EQ(0, seen.hits);
	EXPECT_EQ(0, dfg_plan_store_forget(s, 0));
	memset(&seen, 0, sizeof(seen));
	ASSERT_EQ(0, dfg_plan_store_each(s, 0, count_rec, &seen));
	EXPECT_EQ(0, seen.created);
	dfg_plan_store_close(s);
	dfg_rules_free(r2);
	rm_store(dir);
}

static int write_file(const char *path, const void *buf, size_t len,
		      off_t off)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0600);
	ssize_t w;

	if (fd < 0)
		return -errno;
	w = pwrite(fd, buf, len, off);
	close(fd);
	return w == (ssize_t)len ? 0 : -EIO;
}

/*
 * A file that is no store, a damaged store, another program's SQLite
 * database: a clear error, and the interpreter decides without a store.
 */
TEST_F(rules, plan_store_bad_files)
{
	static const char junk[] = "this is not an SQLite database at all, "
				   "it is plain text that someone left here";
	char dir[] = "/tmp/dfg-plans-XXXXXX";
	struct dfg_plan_store *s;
	struct dfg_rules_stats st;
	char path[128], page[1024];
	sqlite3 *db;
	unsigned int d;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/plans.db", dir);
	ASSERT_EQ(0, dfg_rules_load_default(self->r, NULL));

	ASSERT_EQ(0, write_file(path, junk, sizeof(junk), 0));
	EXPECT_EQ(-EBADMSG, dfg_rules_store_open(self->r, dir));
	EXPECT_EQ(-EBADMSG, dfg_plan_store_open(dir, 0, &s));
	ASSERT_EQ(0, skewed_eval(self->r, 2, 3, &self->e, &self->n, &d, NULL));
	EXPECT_EQ(4, d);
	ASSERT_EQ(0, dfg_rules_stats(self->r, &st));
	EXPECT_EQ(0, st.store_entries);
	rm_store(dir);

	/* another program's database */
	ASSERT_EQ(0, mkdir(dir, 0700));
	ASSERT_EQ(SQLITE_OK, sqlite3_open(path, &db));
	ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "CREATE TABLE t (x); "
					  "INSERT INTO t VALUES (1)", NULL,
					  NULL, NULL));
	sqlite3_close(db);
	EXPECT_EQ(-EPROTO, dfg_rules_store_open(self->r, dir));
	EXPECT_EQ(-EPROTO, dfg_plan_store_open(dir, DFG_PLAN_STORE_CREATE,
					       &s));
	/* ours, from a newer libdfg */
	ASSERT_EQ(SQLITE_OK, sqlite3_open(path, &db));
	ASSERT_EQ(SQLITE_OK, sqlite3_exec(db, "DROP TABLE t; "
					  "PRAGMA application_id = 1145456464;"
					  " PRAGMA user_version = 99", NULL,
					  NULL, NULL));
	sqlite3_close(db);
	EXPECT_EQ(-EPROTO, dfg_plan_store_open(dir, 0, &s));
	rm_store(dir);

	/* a real store, damaged inside its tables' pages */
	ASSERT_EQ(0, dfg_rules_store_open(self->r, dir));
	ASSERT_EQ(0, skewed_eval(self->r, 2, 3.5, &self->e, &self->n, &d,
				 NULL));
	dfg_rules_free(self->r);	/* the last handle: checkpointed */
	self->r = NULL;
	ASSERT_EQ(0, dfg_rules_new(&self->r, 0));
	memset(page, 0xa5, sizeof(page));
	ASSERT_EQ(0, write_file(path, page, sizeof(page), 4096));
	ASSERT_EQ(0, write_file(path, page, sizeof(page), 2 * 4096));
	EXPECT_EQ(-EBADMSG, dfg_plan_store_open(dir, 0, &s));
	EXPECT_EQ(-EBADMSG, dfg_rules_store_open(self->r, dir));
	rm_store(dir);
}

/*
 * Runs sharing one state directory: four processes deciding, storing,
 * reading each other's decisions and forgetting them all at once. Every
 * decision is right (from the store or from the rules), no write fails,
 * and the store is whole afterwards.
 */
TEST_F(rules, plan_store_shared_by_processes)
{
	char dir[] = "/tmp/dfg-plans-XXXXXX";
	struct dfg_plan_record seen = { 0 };
	struct dfg_plan_store *s;
	pid_t pids[4];
	unsigned int c;
	int status;

	ASSERT_NE(NULL, mkdtemp(dir));
	for (c = 0; c < 4; c++) {
		pids[c] = fork();
		ASSERT_LE(0, pids[c]);
		if (!pids[c]) {
			struct dfg_plan_store *mine;
			const struct dfg_plan_edit *e;
			struct warns w = { .n = 0 };
			struct dfg_rules *r;
			unsigned int j, d, n;
			char num[16];
			int bad = 0;

			if (dfg_rules_new(&r, 0) ||
			    dfg_rules_set_warn(r, warn_cb, &w) ||
			    dfg_rules_load_default(r, NULL))
				_exit(2);
			bad = dfg_rules_store_open(r, dir);
			if (!bad)
				bad = dfg_plan_store_open(dir, 0, &mine);
			if (bad) {
				fprintf(stderr, "child %u: store: %s\n", c,
					strerror(-bad));
				_exit(3);
			}
			for (j = 0; j < 30; j++) {
				/* shared conditions: keys 0..9 */
				snprintf(num, sizeof(num), "%u", j % 10);
				if (dfg_rules_assert_var(r, "round", num))
					bad++;
				if (skewed_eval(r, 2, 3, &e, &n, &d, NULL) ||
				    d != 4)
					bad++;
				/* skew gone: the episode ends */
				if (skewed_eval(r, 4, 1, &e, &n, &d, NULL) ||
				    n)
					bad++;
				if (j % 7 == c && dfg_plan_store_forget(mine,
									0))
					bad++;
			}
			if (w.n)
				fprintf(stderr, "child %u: %s", c, w.buf);
			dfg_plan_store_close(mine);
			dfg_rules_free(r);
			_exit(bad || w.n ? 1 : 0);
		}
	}
	for (c = 0; c < 4; c++) {
		ASSERT_EQ(pids[c], waitpid(pids[c], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("child %u: status %#x", c, status);
	}
	ASSERT_EQ(0, dfg_plan_store_open(dir, 0, &s));
	ASSERT_EQ(0, dfg_plan_store_each(s, 0, count_rec, &seen));
	EXPECT_GE(10, seen.created);
	EXPECT_EQ(seen.created, seen.nedits);
	dfg_plan_store_close(s);
	rm_store(dir);
}

/* --- central and local -------------------------------------------------- */

TEST_F(rules, central_and_local)
{
	struct dfg_plan_edit partial = {
		.op = DFG_EDIT_DEGREE, .comp = "part", .degree = 16,
	};
	struct dfg_rules *local;
	struct dfg_rules_system one = { .cpus = 3, .numa = 1 };

	ASSERT_EQ(0, load(self->r,
		"rule global when comp ?c key_skew > 2 do degree ?c 8 end\n",
		NULL));
	ASSERT_EQ(0, dfg_rules_new(&local, DFG_RULES_LOCAL));
	ASSERT_EQ(0, dfg_rules_set_system(local, &one));
	/* this machine has 3 CPUs: it lowers what central proposed */
	ASSERT_EQ(0, load(local,
		"rule fit when proposed ?p op == degree, degree > 4\n"
		"  and system cpus < ?p.degree\n"
		"do degree ?p.comp ?p.degree / 2 end\n", NULL));
	EXPECT_EQ(-EINVAL, dfg_rules_set_central(self->r, local));
	EXPECT_EQ(-EINVAL, dfg_rules_set_central(local, local));
	ASSERT_EQ(0, dfg_rules_set_central(local, self->r));
	self->w.comps[ci(&self->w, "part")].key_skew = 3;
	ASSERT_EQ(0, eval(local, &self->w, &self->e, &self->n));
	ASSERT_EQ(1, self->n);
	EXPECT_STREQ("part", self->e[0].comp);
	EXPECT_EQ(4, self->e[0].degree);

	/* the same, the partial decision carried as data */
	ASSERT_EQ(0, dfg_rules_set_central(local, NULL));
	ASSERT_EQ(0, dfg_rules_complete(local, &self->w.view, &partial, 1,
					&self->e, &self->n));
	ASSERT_EQ(1, self->n);
	/* 16 -> 8, itself a proposal the rule sees: -> 4 */
	EXPECT_EQ(4, self->e[0].degree);
	/* a partial decision nothing local overrides stands */
	partial.degree = 3;
	ASSERT_EQ(0, dfg_rules_complete(local, &self->w.view, &partial, 1,
					&self->e, &self->n));
	ASSERT_EQ(1, self->n);
	EXPECT_EQ(3, self->e[0].degree);
	dfg_rules_free(local);
}

/* --- the replanner and bad arguments ------------------------------------ */

TEST_F(rules, replanner)
{
	struct dfg_replanner rp = dfg_rules_replanner(self->r);

	ASSERT_EQ(0, load(self->r, "rule a when comp ?c type == count "
			  "do degree ?c 3 end", NULL));
	ASSERT_EQ(0, rp.eval(rp.ctx, &self->w.view, &self->e, &self->n));
	ASSERT_EQ(1, self->n);
	EXPECT_EQ(3, self->e[0].degree);
	rp.applied(rp.ctx, 1, 0, NULL);
	EXPECT_EQ(0, self->warns.n);
}

TEST(bad_arguments)
{
	struct dfg_rules *r;
	struct dfg_rules_stats st;
	const struct dfg_plan_edit *e;
	unsigned int n;

	EXPECT_EQ(-EINVAL, dfg_rules_new(NULL, 0));
	EXPECT_EQ(-EINVAL, dfg_rules_new(&r, 1U << 7));
	ASSERT_EQ(0, dfg_rules_new(&r, DFG_RULES_NO_SYSTEM));
	EXPECT_EQ(-EINVAL, dfg_rules_load_string(NULL, "", 0, "x", NULL));
	EXPECT_EQ(-EINVAL, dfg_rules_load_file(r, NULL, NULL));
	EXPECT_EQ(-EINVAL, dfg_rules_assert_var(r, "", "1"));
	EXPECT_EQ(-EINVAL, dfg_rules_assert_event(r, NULL));
	EXPECT_EQ(-EINVAL, dfg_rules_eval(r, NULL, &e, &n));
	EXPECT_EQ(-EINVAL, dfg_rules_stats(r, NULL));
	EXPECT_EQ(-EINVAL, dfg_rules_set_central(r, NULL));
	EXPECT_EQ(-EINVAL, dfg_rules_store_open(r, NULL));
	EXPECT_EQ(-ENOENT, dfg_rules_store_open(r, "/nonexistent/a/b"));
	EXPECT_EQ(-EINVAL, dfg_rules_load_string(r, "a\0b", 3, "x", NULL));
	EXPECT_EQ(0, dfg_rules_load_string(r, "", 0, "x", NULL));
	ASSERT_EQ(0, dfg_rules_stats(r, &st));
	EXPECT_EQ(0, st.evals);
	dfg_rules_free(r);
	dfg_rules_free(NULL);
}

TEST_HARNESS_MAIN
