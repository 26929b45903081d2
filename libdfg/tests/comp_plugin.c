// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: plugins. The example plugin (examples/plugins/uniq.c)
 * loads, its types work like built-ins, chained with them, and checkpoint;
 * a missing file, a shared object without the entry point, a type of
 * another ABI version and a name clash each fail with nothing registered.
 * Declarations: the example's parameters are checked by value; a type of
 * ABI version 1 (no declarations) still loads, checked by name only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "comp_harness.h"

#define ERRNO_MARK	12345

static const char *plugin(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s.so", TEST_PLUGIN_DIR, name);
	return path;
}

TEST(load_example)
{
	struct dfg_comp *r, *u;
	struct link l;
	struct sink s;
	char err[256], *all;

	errno = ERRNO_MARK;
	EXPECT_EQ(NULL, dfg_comp_find("uniq"));
	ASSERT_EQ(2, dfg_comp_load(plugin("uniq"), err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(ERRNO_MARK, errno);
	ASSERT_NE(NULL, dfg_comp_find("uniq"));
	ASSERT_NE(NULL, dfg_comp_find("rot13"));
	/* loading it again clashes with itself */
	EXPECT_EQ(-EEXIST, dfg_comp_load(plugin("uniq"), err, sizeof(err)));
	EXPECT_STREQ("type 'uniq' is already registered", err);

	/* rot13 -> uniq count=1, folded */
	r = mk_comp("rot13", 1, 1, NULL);
	u = mk_comp("uniq", 1, 1, "count=1", NULL);
	ASSERT_TRUE(r && u);
	l = (struct link){ .down = { u } };
	dfg_comp_set_emit(r, link_emit, &l);
	sink_attach(&s, u);
	EXPECT_EQ(0, feed(r, 0, "abc", "abc", "Hello", "abc", "abc", "abc",
			  NULL));
	EXPECT_EQ(0, dfg_comp_shutdown(r));
	EXPECT_EQ(0, dfg_comp_shutdown(u));
	all = sink_join(&s);
	EXPECT_STREQ("0:2 nop|0:1 Uryyb|0:3 nop", all);
	free(all);
	sink_free(&s);
	dfg_comp_destroy(r);
	dfg_comp_destroy(u);
	NO_LEAKS();
}

TEST(example_checkpoint)
{
	struct dfg_ckpt *w, *rd;
	struct dfg_comp *u;
	const void *data;
	struct sink s;
	size_t len;
	char *all;

	if (!dfg_comp_find("uniq"))
		ASSERT_EQ(2, dfg_comp_load(plugin("uniq"), NULL, 0));
	u = mk_comp("uniq", 1, 1, NULL);
	ASSERT_NE(NULL, u);
	sink_attach(&s, u);
	ASSERT_EQ(0, feed(u, 0, "a", "a", "b", NULL));
	ASSERT_EQ(0, dfg_ckpt_new(&w));
	ASSERT_EQ(0, dfg_comp_checkpoint(u, w));
	sink_free(&s);
	dfg_comp_destroy(u);

	u = mk_comp("uniq", 1, 1, NULL);
	ASSERT_NE(NULL, u);
	sink_attach(&s, u);
	data = dfg_ckpt_data(w, &len);
	ASSERT_EQ(0, dfg_ckpt_open(data, len, &rd));
	ASSERT_EQ(0, dfg_comp_restore(u, rd));
	ASSERT_EQ(0, feed(u, 0, "b", "c", NULL));	/* "b" continues a run */
	all = sink_join(&s);
	EXPECT_STREQ("0:c", all);
	free(all);
	sink_free(&s);
	dfg_ckpt_free(rd);
	dfg_ckpt_free(w);
	dfg_comp_destroy(u);
	NO_LEAKS();
}

TEST(load_failures)
{
	char err[256];
	int n = dfg_comp_list(NULL, 0);

	errno = ERRNO_MARK;
	EXPECT_EQ(-ENOENT, dfg_comp_load("/nonexistent/p.so", err,
					 sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "/nonexistent/p.so"));
	EXPECT_EQ(-ENOEXEC, dfg_comp_load(plugin("no_entry"), err,
					  sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "no dfg_plugin_types()"));
	EXPECT_EQ(-EPROTO, dfg_comp_load(plugin("bad_abi"), err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "type 'test_abi_bad': ABI version"));
	EXPECT_EQ(NULL, dfg_comp_find("test_abi_good"));	/* all or none */
	EXPECT_EQ(-EEXIST, dfg_comp_load(plugin("clash"), err, sizeof(err)));
	EXPECT_STREQ("type 'sort' is already registered", err);
	EXPECT_EQ(NULL, dfg_comp_find("test_clash_fresh"));
	EXPECT_EQ(-EINVAL, dfg_comp_load(NULL, err, sizeof(err)));
	EXPECT_EQ(n, dfg_comp_list(NULL, 0));
	EXPECT_EQ(ERRNO_MARK, errno);
	NO_LEAKS();
}

/* dfg_comp_check() of type @name with one parameter @key=@value. */
static int check_one(const char *name, const char *key, const char *value,
		     char *err, size_t errlen)
{
	struct dfg_param p = { key, value };
	struct dfg_comp_attr a = { .name = "t", .nr_in = 1, .nr_out = 1,
				   .params = &p, .nr_params = 1 };

	return dfg_comp_check(dfg_comp_find(name), &a, err, errlen);
}

TEST(declarations)
{
	const struct dfg_comp_type *t;
	char err[256];

	ASSERT_EQ(2, dfg_comp_load(plugin("uniq"), err, sizeof(err)))
		TH_LOG("%s", err);
	t = dfg_comp_find("uniq");
	ASSERT_NE(NULL, dfg_comp_param_decls(t));
	EXPECT_STREQ("count", dfg_comp_param_decls(t)[0].name);
	EXPECT_EQ(0, check_one("uniq", "count", "1", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, check_one("uniq", "count", "2", err, sizeof(err)));
	EXPECT_STREQ("parameter count: 2 is not in [0, 1]", err);
	/* rot13 declares an empty table: no parameter at all */
	ASSERT_NE(NULL, dfg_comp_param_decls(dfg_comp_find("rot13")));
	EXPECT_EQ(-EINVAL, check_one("rot13", "x", "1", err, sizeof(err)));

	ASSERT_EQ(1, dfg_comp_load(plugin("legacy_abi"), err, sizeof(err)))
		TH_LOG("%s", err);
	t = dfg_comp_find("test_legacy");
	ASSERT_NE(NULL, t);
	EXPECT_EQ(1, t->abi);
	EXPECT_EQ(NULL, dfg_comp_param_decls(t));
	EXPECT_EQ(0, check_one("test_legacy", "level", "any thing", err,
			       sizeof(err)));
	EXPECT_EQ(-EINVAL, check_one("test_legacy", "other", "1", err,
				     sizeof(err)));
	EXPECT_STREQ("test_legacy has no parameter 'other'", err);
}

TEST_HARNESS_MAIN
