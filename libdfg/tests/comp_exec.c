// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: the exec component. Lines through cat, tr and sort;
 * more data than pipes hold, both ways (no deadlock); a program that stops
 * reading (no SIGPIPE); failures by exit status, by signal and of a
 * missing program; exec as a root; children reaped in every case.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "comp_harness.h"

/* No child of ours is left, running or zombie. */
static int no_children(void)
{
	return waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

static char *through(const char *cmd, const char *const *lines, int *ret,
		     char *msg)
{
	struct dfg_comp *c;
	char p[256];
	struct sink s;
	char *all;

	snprintf(p, sizeof(p), "cmd=%s", cmd);
	c = mk_comp("exec", 1, 1, p, NULL);
	if (!c)
		return NULL;
	sink_attach(&s, c);
	*ret = 0;
	for (; *lines && !*ret; lines++)
		*ret = feed(c, 0, *lines, NULL);
	if (!*ret)
		*ret = dfg_comp_shutdown(c);
	snprintf(msg, DFG_COMP_ERRMSG_MAX, "%s", dfg_comp_errmsg(c));
	all = sink_join(&s);
	sink_free(&s);
	dfg_comp_destroy(c);
	return all;
}

TEST(cat_tr_sort)
{
	static const char *const in[] = { "pear", "Apple", "fig", NULL };
	char msg[DFG_COMP_ERRMSG_MAX], *all;
	int ret;

	all = through("cat", in, &ret, msg);
	EXPECT_EQ(0, ret);
	EXPECT_STREQ("0:pear|0:Apple|0:fig", all);
	free(all);
	all = through("tr a-z A-Z", in, &ret, msg);
	EXPECT_EQ(0, ret);
	EXPECT_STREQ("0:PEAR|0:APPLE|0:FIG", all);
	free(all);
	all = through("LC_ALL=C sort", in, &ret, msg);
	EXPECT_EQ(0, ret);
	EXPECT_STREQ("0:Apple|0:fig|0:pear", all);
	free(all);
	EXPECT_TRUE(no_children());
	NO_LEAKS();
}

/* 8 MiB each way through cat: both pipes fill while we write. */
TEST(big_both_ways)
{
	struct dfg_comp *c = mk_comp("exec", 1, 1, "cmd=cat", NULL);
	char line[1024];
	struct sink s;
	size_t i, bad = 0;

	ASSERT_NE(NULL, c);
	sink_attach(&s, c);
	memset(line, 'q', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	for (i = 0; i < 8192; i++) {
		snprintf(line, 32, "%08u", (unsigned int)i);
		line[8] = 'q';
		ASSERT_EQ(0, feed(c, 0, line, NULL));
	}
	ASSERT_EQ(0, dfg_comp_shutdown(c));
	ASSERT_EQ(8192, s.nr);
	for (i = 0; i < s.nr; i++) {
		snprintf(line, 32, "%08u", (unsigned int)i);
		if (strncmp(s.items[i] + 2, line, 8) ||
		    strlen(s.items[i]) != 2 + 1023)
			bad++;
	}
	EXPECT_EQ(0, bad);
	sink_free(&s);
	dfg_comp_destroy(c);
	EXPECT_TRUE(no_children());
	NO_LEAKS();
}

/* head stops reading: the rest of the input is dropped, no SIGPIPE. */
TEST(reader_stops)
{
	struct dfg_comp *c = mk_comp("exec", 1, 1, "cmd=head -n 2", NULL);
	struct sink s;
	size_t i;

	ASSERT_NE(NULL, c);
	sink_attach(&s, c);
	for (i = 0; i < 200000; i++)
		ASSERT_EQ(0, feed(c, 0, "some line of text", NULL));
	ASSERT_EQ(0, dfg_comp_shutdown(c));
	EXPECT_EQ(2, s.nr);
	sink_free(&s);
	dfg_comp_destroy(c);
	EXPECT_TRUE(no_children());
	NO_LEAKS();
}

TEST(failures)
{
	static const char *const in[] = { "x", NULL };
	char msg[DFG_COMP_ERRMSG_MAX], *all;
	int ret;

	all = through("cat; exit 3", in, &ret, msg);
	EXPECT_EQ(-ECHILD, ret);
	EXPECT_STREQ("'cat; exit 3' exited with status 3", msg);
	EXPECT_STREQ("0:x", all);	/* what it wrote still went out */
	free(all);
	all = through("kill -TERM $$", in, &ret, msg);
	EXPECT_EQ(-ECHILD, ret);
	EXPECT_STREQ("'kill -TERM $$' killed by signal 15", msg);
	free(all);
	all = through("/nonexistent/prog", in, &ret, msg);
	EXPECT_EQ(-ECHILD, ret);
	EXPECT_STREQ("'/nonexistent/prog' exited with status 127", msg);
	free(all);
	EXPECT_TRUE(no_children());
	NO_LEAKS();
}

/*
 * An instance destroyed before shutdown kills and reaps its child, and
 * what the child started: the whole process group goes.
 */
TEST(destroy_early)
{
	char path[64], cmd[160], *pid = NULL;
	struct dfg_comp *c;
	int i;

	ASSERT_EQ(0, tmp_file(path, sizeof(path), "", 0));
	snprintf(cmd, sizeof(cmd), "cmd=echo $$ > %s; sleep 1000; true",
		 path);
	c = mk_comp("exec", 1, 1, cmd, NULL);
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, feed(c, 0, "x", NULL));
	for (i = 0; i < 1000; i++) {	/* until the shell has started */
		free(pid);
		pid = slurp(path);
		if (pid && strchr(pid, '\n'))
			break;
		usleep(10000);
	}
	ASSERT_NE(NULL, strchr(pid, '\n'));
	dfg_comp_destroy(c);
	EXPECT_TRUE(no_children());
	/* sleep is gone too, once init has reaped it */
	for (i = 0; i < 500 && !kill(-atoi(pid), 0); i++)
		usleep(10000);
	EXPECT_EQ(-1, kill(-atoi(pid), 0));
	EXPECT_EQ(ESRCH, errno);
	free(pid);
	unlink(path);
	NO_LEAKS();
}

/* A downstream failure stops the program's output early. */
TEST(downstream_fails)
{
	struct dfg_comp *c = mk_comp("exec", 1, 1, "cmd=seq 1 100000", NULL);
	struct sink s;

	ASSERT_NE(NULL, c);
	sink_attach(&s, c);
	s.fail_at = 10;
	EXPECT_EQ(-EIO, dfg_comp_shutdown(c));
	EXPECT_EQ(9, s.nr);
	EXPECT_STREQ("", dfg_comp_errmsg(c));	/* not exec's fault */
	sink_free(&s);
	dfg_comp_destroy(c);
	EXPECT_TRUE(no_children());
	NO_LEAKS();
}

TEST(as_root)
{
	struct dfg_comp *c = mk_comp("exec", 0, 1, "cmd=seq 1 5000", NULL);
	unsigned int calls;
	struct sink s;

	ASSERT_NE(NULL, c);
	sink_attach(&s, c);
	EXPECT_EQ(DFG_REACHED_EOF, pump(c, 100, &calls));
	EXPECT_EQ(5000, s.nr);
	EXPECT_STREQ("0:1", s.items[0]);
	EXPECT_STREQ("0:5000", s.items[4999]);
	EXPECT_EQ(0, dfg_comp_shutdown(c));
	sink_free(&s);
	dfg_comp_destroy(c);

	c = mk_comp("exec", 0, 1, "cmd=echo partial; exit 1", NULL);
	ASSERT_NE(NULL, c);
	sink_attach(&s, c);
	EXPECT_EQ(DFG_ERROR, pump(c, 100, &calls));
	EXPECT_STREQ("'echo partial; exit 1' exited with status 1",
		     dfg_comp_errmsg(c));
	EXPECT_EQ(1, s.nr);
	sink_free(&s);
	dfg_comp_destroy(c);
	EXPECT_TRUE(no_children());
	NO_LEAKS();
}

TEST_HARNESS_MAIN
