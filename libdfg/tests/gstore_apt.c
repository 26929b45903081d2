// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: the apt package-list importer (gstore/apt.c).
 *
 *   graph		a small Packages text: nodes in name order, the first
 *			stanza of a name kept, edges of Pre-Depends, Depends
 *			and Recommends (first alternative that is a package,
 *			else a provider), versions and ":any" ignored,
 *			Suggests not an edge, features and section labels as
 *			documented
 *   malformed		stanzas without Package, with a line lacking "Field:",
 *			a stray continuation, a field twice: skipped and
 *			counted, the rest read
 *   errors		empty input, only bad stanzas, a NUL byte
 *   undirected		both ways, and the file round trip
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../gstore/gstore.h"

#include "kselftest_harness.h"

static const char good[] =
	"Package: zlib1g\n"
	"Installed-Size: 160\n"
	"Size: 56\n"
	"Priority: required\n"
	"Section: libs\n"
	"Multi-Arch: same\n"
	"Architecture: amd64\n"
	"Depends: libc6 (>= 2.14)\n"
	"Description: compression\n"
	" continued description line: with a colon\n"
	"\n"
	"Package: libc6\n"
	"Installed-Size: 12000\n"
	"Size: 2800000\n"
	"Priority: optional\n"
	"Section: libs\n"
	"Multi-Arch: same\n"
	"Depends: libgcc-s1\n"
	"Recommends: libidn2-0\n"
	"Provides: libc-any\n"
	"\n"
	"# a comment line between stanzas\n"
	"Package: libgcc-s1\n"
	"Section: libs\n"
	"Priority: optional\n"
	"Depends: gcc-12-base (= 12.2.0-14), libc6 (>= 2.35)\n"
	"\n"
	"Package: gcc-12-base\n"
	"Section: libs\n"
	"Priority: required\n"
	"Essential: no\n"
	"\n"
	"Package: coreutils\n"
	"Essential: yes\n"
	"Priority: required\n"
	"Section: utils\n"
	"Pre-Depends: libc6:any (>= 2.34), nosuchpkg | zlib1g\n"
	"Suggests: gcc-12-base\n"
	"\n"
	"Package: editor-x\n"
	"Section: contrib/editors\n"
	"Architecture: all\n"
	"Depends: libc-any | coreutils, missing-a | missing-b\n"
	"Provides: editor, editor2\n"
	"\n"
	"Package: libc6\n"
	"Installed-Size: 1\n"
	"Section: oldlibs\n"
	"Depends: coreutils\n";

static const char bad[] =
	"Installed-Size: 3\n"			/* no Package */
	"Section: libs\n"
	"\n"
	"Package: broken-line\n"
	"this line has no colon\n"
	"\n"
	" stray continuation\n"			/* nothing to continue */
	"Package: stray\n"
	"\n"
	"Package: twice\n"
	"Depends: a\n"
	"Depends: b\n"
	"\n"
	"Package: has blank\n"
	"\n"
	"Package: ok-one\n"
	"Section: misc\n"
	"Depends: ok-two\n"
	"\n"
	"\n"
	"\n"
	"Package: ok-two\n"
	"Section:\n";

static FILE *mem(const char *s, size_t len)
{
	return fmemopen((void *)s, len, "r");
}

static int64_t node(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return (int64_t)i;
	return -1;
}

static int has_arc(const struct dfg_gs_graph *g, uint64_t a, uint64_t b)
{
	for (uint64_t j = g->row_ptr[a]; j < g->row_ptr[a + 1]; j++)
		if (g->col[j] == b)
			return 1;
	return 0;
}

TEST(graph)
{
	/* Name order: coreutils editor-x gcc-12-base libc6 libgcc-s1 zlib1g */
	static const char *const names[] = {
		"coreutils", "editor-x", "gcc-12-base", "libc6", "libgcc-s1",
		"zlib1g",
	};
	struct dfg_gs_apt_stat st;
	struct dfg_gs_graph g;
	struct dfg_gs_err err;
	FILE *f = mem(good, sizeof(good) - 1);
	int64_t co, ed, gc, lc, lg, zl;
	const float *x;

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, dfg_gs_import_apt(&g, f, "good", 0, &st, &err)) {
		TH_LOG("%s", err.msg);
	}
	fclose(f);
	ASSERT_EQ(6, g.n);
	EXPECT_EQ(6, st.packages);
	EXPECT_EQ(1, st.duplicates);
	EXPECT_EQ(0, st.malformed);
	co = node(names, 6, "coreutils");
	ed = node(names, 6, "editor-x");
	gc = node(names, 6, "gcc-12-base");
	lc = node(names, 6, "libc6");
	lg = node(names, 6, "libgcc-s1");
	zl = node(names, 6, "zlib1g");
	/* Directed: dependent -> dependency. */
	EXPECT_TRUE(has_arc(&g, zl, lc));
	EXPECT_TRUE(has_arc(&g, lc, lg));
	EXPECT_FALSE(has_arc(&g, lc, co));	/* the second libc6 dropped */
	EXPECT_TRUE(has_arc(&g, lg, gc));
	EXPECT_TRUE(has_arc(&g, lg, lc));
	EXPECT_TRUE(has_arc(&g, co, lc));	/* "libc6:any (>= 2.34)" */
	EXPECT_TRUE(has_arc(&g, co, zl));	/* first alternative known */
	EXPECT_FALSE(has_arc(&g, co, gc));	/* Suggests: no edge */
	EXPECT_TRUE(has_arc(&g, ed, lc));	/* libc-any: libc6 provides */
	EXPECT_FALSE(has_arc(&g, ed, co));	/* only the first resolving */
	EXPECT_FALSE(has_arc(&g, lc, zl));	/* libidn2-0 unknown */
	/* Edges: zl1 lc1 lg2 co2 ed1 = 7; unresolved: libidn2-0, missing-*. */
	EXPECT_EQ(7, st.edges);
	EXPECT_EQ(7, g.m);
	EXPECT_EQ(2, st.unresolved);
	/* Features. */
	ASSERT_EQ(DFG_GS_APT_FEAT_DIM, g.feat_dim);
	ASSERT_EQ(DFG_GS_FEAT_F32, g.feat_type);
	x = (const float *)g.feat + lc * DFG_GS_APT_FEAT_DIM;
	EXPECT_TRUE(fabsf(x[0] - (float)log2(12001)) < 1e-4);
	EXPECT_TRUE(fabsf(x[1] - (float)log2(2800001)) < 1e-3);
	EXPECT_EQ(1.0f, x[5]);			/* optional */
	EXPECT_EQ(0.0f, x[2]);
	EXPECT_EQ(1.0f, x[8]);			/* Multi-Arch: same */
	EXPECT_EQ(1.0f, x[11]);			/* log2(1 + 1 Depends) */
	EXPECT_EQ(1.0f, x[12]);			/* one Recommends */
	EXPECT_EQ(1.0f, x[14]);			/* one Provides */
	x = (const float *)g.feat + co * DFG_GS_APT_FEAT_DIM;
	EXPECT_EQ(1.0f, x[2]);			/* required */
	EXPECT_EQ(1.0f, x[7]);			/* Essential */
	EXPECT_EQ((float)log2(3), x[11]);	/* two Pre-Depends clauses */
	EXPECT_EQ(1.0f, x[13]);			/* one Suggests */
	EXPECT_EQ(0.0f, x[0]);			/* no Installed-Size */
	x = (const float *)g.feat + ed * DFG_GS_APT_FEAT_DIM;
	EXPECT_EQ(1.0f, x[15]);			/* Architecture: all */
	EXPECT_EQ((float)log2(3), x[14]);	/* two Provides */
	/* Labels: editors, libs, utils (sorted). */
	ASSERT_EQ(3, g.classes);
	EXPECT_EQ(0, g.label[ed]);
	EXPECT_EQ(1, g.label[lc]);
	EXPECT_EQ(1, g.label[gc]);
	EXPECT_EQ(2, g.label[co]);
	dfg_gs_graph_free(&g);
}

TEST(malformed)
{
	struct dfg_gs_apt_stat st;
	struct dfg_gs_graph g;
	struct dfg_gs_err err;
	FILE *f = mem(bad, sizeof(bad) - 1);

	ASSERT_EQ(0, dfg_gs_import_apt(&g, f, "bad", 0, &st, &err)) {
		TH_LOG("%s", err.msg);
	}
	fclose(f);
	EXPECT_EQ(5, st.malformed);
	EXPECT_EQ(2, g.n);			/* ok-one, ok-two */
	EXPECT_EQ(1, g.m);
	EXPECT_EQ(1, g.row_ptr[1] - g.row_ptr[0]);
	EXPECT_EQ(1, g.col[0]);
	/* "misc", and an empty Section is "unknown". */
	EXPECT_EQ(2, g.classes);
	EXPECT_EQ(0, g.label[0]);
	EXPECT_EQ(1, g.label[1]);
	dfg_gs_graph_free(&g);
}

TEST(errors)
{
	static const char only_bad[] = "Section: x\n\nno colon here\n";
	static const char nul[] = "Package: a\n\0Package: b\n";
	struct dfg_gs_graph g;
	struct dfg_gs_err err;
	FILE *f;

	f = mem("\n\n", 2);
	EXPECT_EQ(-EBADMSG, dfg_gs_import_apt(&g, f, "empty", 0, NULL, &err));
	EXPECT_NE(NULL, strstr(err.msg, "no package stanza"));
	fclose(f);
	f = mem(only_bad, sizeof(only_bad) - 1);
	EXPECT_EQ(-EBADMSG, dfg_gs_import_apt(&g, f, "bad", 0, NULL, &err));
	fclose(f);
	f = mem(nul, sizeof(nul) - 1);
	EXPECT_EQ(-EBADMSG, dfg_gs_import_apt(&g, f, "nul", 0, NULL, &err));
	EXPECT_NE(NULL, strstr(err.msg, "NUL"));
	fclose(f);
}

TEST(undirected)
{
	char dir[] = "/tmp/dfg-apt.XXXXXX", path[64];
	struct dfg_gs_graph g, h;
	struct dfg_gs_file file;
	struct dfg_gs_err err;
	FILE *f = mem(good, sizeof(good) - 1);

	ASSERT_EQ(0, dfg_gs_import_apt(&g, f, "good", DFG_GS_F_UNDIRECTED,
				       NULL, &err));
	fclose(f);
	EXPECT_EQ(12, g.m);		/* libc6 <-> libgcc-s1 once */
	for (uint64_t a = 0; a < g.n; a++)
		for (uint64_t j = g.row_ptr[a]; j < g.row_ptr[a + 1]; j++)
			EXPECT_TRUE(has_arc(&g, g.col[j], a));
	g.graph_id = dfg_gs_graph_id(&g);
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/apt.dfgg", dir);
	ASSERT_EQ(0, dfg_gs_save(&g, path, &err));
	ASSERT_EQ(0, dfg_gs_open(&file, path, &err));
	ASSERT_EQ(0, dfg_gs_load(&h, &file, &err));
	EXPECT_EQ(g.n, h.n);
	EXPECT_EQ(g.m, h.m);
	EXPECT_EQ(g.classes, h.classes);
	EXPECT_EQ(0, memcmp(g.feat, h.feat, g.n * 16 * sizeof(float)));
	EXPECT_EQ(0, memcmp(g.label, h.label, g.n * sizeof(uint32_t)));
	dfg_gs_close(&file);
	dfg_gs_graph_free(&h);
	dfg_gs_graph_free(&g);
	unlink(path);
	rmdir(dir);
}

TEST_HARNESS_MAIN
