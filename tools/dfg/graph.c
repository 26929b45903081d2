// SPDX-License-Identifier: GPL-2.0
/*
 * dfg graph gen | import | partition | info: the graph store's command
 * line (libdfg/gstore/ does the work; this file parses, reports progress
 * and prints summaries).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dfg.h"
#include "gstore.h"

#define GRAPH_USAGE \
	"graph gen --scale S [--edge-factor F] [--seed N] [--directed]\n" \
	"          [--feat-dim D] [--feat-type f32|u8] [--classes C] -o FILE\n" \
	"  dfg graph import [--format snap|csr32|csr64|apt] [--undirected] [--feat-dim D]\n" \
	"          [--feat-type f32|u8] [--classes C] [--seed N] INPUT -o FILE\n" \
	"  dfg graph partition -k K [--seed N] [--replica-budget BYTES|PCT%]\n" \
	"          [--replica-order score|density] [-o PREFIX] FILE\n" \
	"  dfg graph info FILE...\n" \
	"  dfg graph serve [--no-replica] [--peer ADDR[:PORT]]... [--timeout MS] FILE\n" \
	"  dfg graph sample [--fanout 10,5] [--batch N] [--batches N] [--seed N]\n" \
	"          [--rules none|all|r1,r2,r3,r4] [--weighted[=DECAY]] [--r2-on-root]\n" \
	"          [--buffer ENTRIES] [--roots ID,...] [--no-ahead] [--verbose] FILE\n" \
	"  dfg graph sample --files [--no-replica] [options as above] FILE OTHER...\n" \
	"  dfg graph kv-serve [--addr ADDR] [--port PORT] FILE\n" \
	"  dfg graph sample --kv ADDR[:PORT]... [--timeout MS] [--no-replica] [options as above] FILE"

const char dfg_graph_usage[] = GRAPH_USAGE;

/* Shared options of gen and import: attributes, output, progress. */
struct attr_opts {
	uint32_t	feat_dim, feat_type, classes;
	uint64_t	seed;
	const char	*out;
	bool		quiet, progress;
};

struct progress {
	const char	*cmd;
	bool		tty;
	int		last;	/* last percentage printed, per stage */
	const char	*stage;
};

static void show_progress(void *arg, const char *stage, uint64_t done,
			  uint64_t total)
{
	struct progress *pr = arg;
	int pct = total ? (int)(done * 100 / total) : 100;

	if (stage != pr->stage) {
		pr->stage = stage;
		pr->last = -1;
	}
	/* a tty gets every percent in place, a log every quarter */
	if (pct == pr->last || (!pr->tty && pct % 25 && pct != 100))
		return;
	pr->last = pct;
	fprintf(stderr, "%s%s: %s %3d%%%s", pr->tty ? "\r" : "", pr->cmd,
		stage, pct, pr->tty && pct < 100 ? "" : "\n");
}

static dfg_gs_progress_fn progress_fn(const struct attr_opts *a,
				      struct progress *pr, const char *cmd)
{
	pr->cmd = cmd;
	pr->tty = isatty(STDERR_FILENO);
	pr->stage = NULL;
	if (a->quiet || (!a->progress && !pr->tty))
		return NULL;
	return show_progress;
}

static int parse_feat_type(const char *s, uint32_t *out)
{
	if (!strcmp(s, "f32")) {
		*out = DFG_GS_FEAT_F32;
		return 0;
	}
	if (!strcmp(s, "u8")) {
		*out = DFG_GS_FEAT_U8;
		return 0;
	}
	dfg_tool_err("--feat-type: '%s': f32 or u8", s);
	return -1;
}

enum {
	OPT_SCALE = 256, OPT_EF, OPT_SEED, OPT_DIRECTED, OPT_UNDIRECTED,
	OPT_FEAT_DIM, OPT_FEAT_TYPE, OPT_CLASSES, OPT_FORMAT, OPT_BUDGET,
	OPT_PROGRESS, OPT_ORDER,
};

/* An option common to gen and import; 1 if it was one, -1 on error. */
static int attr_opt(int c, struct attr_opts *a)
{
	unsigned long long v;

	switch (c) {
	case OPT_SEED:
		if (dfg_tool_parse_uint("--seed", optarg, 0, UINT64_MAX, &v))
			return -1;
		a->seed = v;
		return 1;
	case OPT_FEAT_DIM:
		if (dfg_tool_parse_uint("--feat-dim", optarg, 0, 65536, &v))
			return -1;
		a->feat_dim = (uint32_t)v;
		return 1;
	case OPT_FEAT_TYPE:
		return parse_feat_type(optarg, &a->feat_type) ? -1 : 1;
	case OPT_CLASSES:
		if (dfg_tool_parse_uint("--classes", optarg, 0, 1U << 20, &v))
			return -1;
		a->classes = (uint32_t)v;
		return 1;
	case 'o':
		a->out = optarg;
		return 1;
	case 'q':
		a->quiet = true;
		return 1;
	case OPT_PROGRESS:
		a->progress = true;
		return 1;
	}
	return 0;
}

static const struct option attr_longopts[] = {
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "feat-dim", required_argument, NULL, OPT_FEAT_DIM },
	{ "feat-type", required_argument, NULL, OPT_FEAT_TYPE },
	{ "classes", required_argument, NULL, OPT_CLASSES },
	{ "output", required_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "progress", no_argument, NULL, OPT_PROGRESS },
};

#define N_ATTR_OPTS (sizeof(attr_longopts) / sizeof(attr_longopts[0]))

/* Attributes, graph id, file; the summary line. */
static int finish_graph(struct dfg_gs_graph *g, const struct attr_opts *a,
			const char *what)
{
	struct dfg_gs_err err;
	int ret;

	/* An importer that read attributes (apt) keeps them. */
	ret = g->feat || g->label ? 0 :
	      dfg_gs_make_attrs(g, a->feat_dim,
				a->feat_dim ? a->feat_type : DFG_GS_FEAT_NONE,
				a->classes, a->seed, &err);
	if (!ret)
		ret = dfg_gs_save(g, a->out, &err);
	if (ret) {
		dfg_tool_err("%s", err.msg);
		return DFG_EXIT_FAIL;
	}
	if (!a->quiet)
		printf("%s: %s: %llu nodes, %llu arcs%s, %u x %s features, %u classes\n",
		       a->out, what, (unsigned long long)g->n,
		       (unsigned long long)g->m,
		       g->flags & DFG_GS_F_UNDIRECTED ? " (undirected)" : "",
		       g->feat_dim,
		       g->feat_type == DFG_GS_FEAT_U8 ? "u8" : "f32",
		       g->classes);
	return DFG_EXIT_OK;
}

static void attr_defaults(struct attr_opts *a)
{
	memset(a, 0, sizeof(*a));
	a->feat_dim = 16;
	a->feat_type = DFG_GS_FEAT_F32;
	a->classes = 8;
	a->seed = 1;
}

static int cmd_gen(int argc, char **argv)
{
	static struct option longopts[N_ATTR_OPTS + 4] = {
		{ "scale", required_argument, NULL, OPT_SCALE },
		{ "edge-factor", required_argument, NULL, OPT_EF },
		{ "directed", no_argument, NULL, OPT_DIRECTED },
	};
	struct dfg_gs_rmat p = { .edge_factor = 16, .seed = 1,
				 .flags = DFG_GS_F_UNDIRECTED };
	struct dfg_gs_graph g;
	struct dfg_gs_err err;
	struct attr_opts a;
	struct progress pr;
	unsigned long long v;
	char what[64];
	int c, ret;

	memcpy(longopts + 3, attr_longopts, sizeof(attr_longopts));
	attr_defaults(&a);
	while ((c = getopt_long(argc, argv, "o:q", longopts, NULL)) != -1) {
		ret = attr_opt(c, &a);
		if (ret < 0)
			return DFG_EXIT_USAGE;
		if (ret)
			continue;
		switch (c) {
		case OPT_SCALE:
			if (dfg_tool_parse_uint("--scale", optarg, 1, 30, &v))
				return DFG_EXIT_USAGE;
			p.scale = (uint32_t)v;
			break;
		case OPT_EF:
			if (dfg_tool_parse_uint("--edge-factor", optarg, 1,
						1024, &v))
				return DFG_EXIT_USAGE;
			p.edge_factor = (uint32_t)v;
			break;
		case OPT_DIRECTED:
			p.flags = 0;
			break;
		default:
			return DFG_EXIT_USAGE;
		}
	}
	if (optind != argc || !p.scale || !a.out) {
		dfg_tool_err("gen needs --scale S and -o FILE, and no other arguments");
		return DFG_EXIT_USAGE;
	}
	p.seed = a.seed;
	ret = dfg_gs_gen_rmat(&g, &p, progress_fn(&a, &pr, "dfg graph gen"),
			      &pr, &err);
	if (ret) {
		dfg_tool_err("%s", err.msg);
		return DFG_EXIT_FAIL;
	}
	snprintf(what, sizeof(what), "R-MAT scale %u, edge factor %u, seed %llu",
		 p.scale, p.edge_factor, (unsigned long long)p.seed);
	ret = finish_graph(&g, &a, what);
	dfg_gs_graph_free(&g);
	return ret;
}

static int cmd_import(int argc, char **argv)
{
	static struct option longopts[N_ATTR_OPTS + 3] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "undirected", no_argument, NULL, OPT_UNDIRECTED },
	};
	const char *fmt = "snap", *in;
	struct dfg_gs_apt_stat ast;
	uint32_t flags = 0;
	struct dfg_gs_graph g;
	struct dfg_gs_err err;
	struct attr_opts a;
	FILE *f;
	int c, ret;

	memcpy(longopts + 2, attr_longopts, sizeof(attr_longopts));
	attr_defaults(&a);
	a.feat_dim = 0;		/* imported graphs have none unless asked */
	a.classes = 0;
	while ((c = getopt_long(argc, argv, "o:q", longopts, NULL)) != -1) {
		ret = attr_opt(c, &a);
		if (ret < 0)
			return DFG_EXIT_USAGE;
		if (ret)
			continue;
		switch (c) {
		case OPT_FORMAT:
			fmt = optarg;
			if (strcmp(fmt, "snap") && strcmp(fmt, "csr32") &&
			    strcmp(fmt, "csr64") && strcmp(fmt, "apt")) {
				dfg_tool_err("--format: '%s': snap, csr32, csr64 or apt",
					     fmt);
				return DFG_EXIT_USAGE;
			}
			break;
		case OPT_UNDIRECTED:
			flags = DFG_GS_F_UNDIRECTED;
			break;
		default:
			return DFG_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !a.out) {
		dfg_tool_err("import needs one INPUT and -o FILE");
		return DFG_EXIT_USAGE;
	}
	in = argv[optind];
	f = strcmp(in, "-") ? fopen(in, "rb") : stdin;
	if (!f) {
		dfg_tool_err("%s: %s", in, strerror(errno));
		return DFG_EXIT_FAIL;
	}
	if (!strcmp(fmt, "snap"))
		ret = dfg_gs_import_snap(&g, f, in, flags, &err);
	else if (!strcmp(fmt, "apt"))
		ret = dfg_gs_import_apt(&g, f, in, flags, &ast, &err);
	else
		ret = dfg_gs_import_bcsr(&g, f, in, fmt[3] == '3' ? 4 : 8,
					 flags, &err);
	if (f != stdin)
		fclose(f);
	if (ret) {
		dfg_tool_err("%s", err.msg);
		return DFG_EXIT_FAIL;
	}
	if (!strcmp(fmt, "apt") && !a.quiet)
		printf("%s: %llu packages (%llu duplicate and %llu malformed stanzas skipped), %llu dependencies (%llu naming no package)\n",
		       in, (unsigned long long)ast.packages,
		       (unsigned long long)ast.duplicates,
		       (unsigned long long)ast.malformed,
		       (unsigned long long)ast.edges,
		       (unsigned long long)ast.unresolved);
	ret = finish_graph(&g, &a, fmt);
	dfg_gs_graph_free(&g);
	return ret;
}

/* BYTES with an optional K/M/G (1024-based) suffix, or PCT%. */
static int parse_budget(const char *s, struct dfg_gs_budget *b)
{
	unsigned long long v, mul = 1;
	char num[32];
	size_t len = strlen(s);
	char last = len ? s[len - 1] : 0;

	if (!len || len >= sizeof(num))
		goto bad;
	memcpy(num, s, len + 1);
	b->kind = DFG_GS_BUDGET_BYTES;
	switch (last) {
	case '%':
		b->kind = DFG_GS_BUDGET_PCT;
		break;
	case 'K': case 'k':
		mul = 1ULL << 10;
		break;
	case 'M': case 'm':
		mul = 1ULL << 20;
		break;
	case 'G': case 'g':
		mul = 1ULL << 30;
		break;
	default:
		len++;	/* no suffix to cut */
	}
	num[len - 1] = 0;
	if (dfg_tool_parse_uint("--replica-budget", num, 0,
				b->kind == DFG_GS_BUDGET_PCT ? 100000 :
				UINT64_MAX / mul, &v))
		return -1;
	b->value = v * mul;
	return 0;
bad:
	dfg_tool_err("--replica-budget: '%s': BYTES[K|M|G] or PCT%%", s);
	return -1;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void print_parts(const struct dfg_gs_part_result *r,
			const struct dfg_gs_graph *g, const char *prefix)
{
	uint64_t rn = 0, rb = 0, hn = 0, hb = 0, cand = 0;
	uint32_t p;

	printf("%u partitions of %llu nodes, %llu arcs (METIS k-way): %llu cut arcs%s, %llu hub nodes (%.1f%% of nodes)\n",
	       r->k, (unsigned long long)g->n, (unsigned long long)g->m,
	       (unsigned long long)r->cut_arcs,
	       g->flags & DFG_GS_F_UNDIRECTED ? " (each edge twice)" : "",
	       (unsigned long long)r->hubs, pct(r->hubs, g->n));
	printf("%-5s %10s %12s %9s %16s %12s %10s %12s %8s %8s %12s\n",
	       "part", "nodes", "arcs", "hubs", "replica/cand", "rep bytes",
	       "halo", "halo bytes", "rep/halo", "bytes", "file bytes");
	for (p = 0; p < r->k; p++) {
		const struct dfg_gs_part_stat *s = &r->part[p];
		char rc[40];

		snprintf(rc, sizeof(rc), "%llu/%llu",
			 (unsigned long long)s->rep_count,
			 (unsigned long long)s->rep_candidates);
		printf("%-5u %10llu %12llu %9llu %16s %12llu %10llu %12llu %7.1f%% %7.1f%% %12llu\n",
		       p, (unsigned long long)s->nodes,
		       (unsigned long long)s->arcs,
		       (unsigned long long)s->hubs, rc,
		       (unsigned long long)s->rep_bytes,
		       (unsigned long long)s->halo_nodes,
		       (unsigned long long)s->halo_bytes,
		       pct(s->rep_count, s->halo_nodes),
		       pct(s->rep_bytes, s->halo_bytes),
		       (unsigned long long)s->file_bytes);
		rn += s->rep_count;
		rb += s->rep_bytes;
		hn += s->halo_nodes;
		hb += s->halo_bytes;
		cand += s->rep_candidates;
	}
	printf("replicated: %llu of %llu candidate hub copies; %.1f%% of the nodes and %.1f%% of the bytes a 1-hop halo would replicate (%llu nodes, %llu bytes)\n",
	       (unsigned long long)rn, (unsigned long long)cand, pct(rn, hn),
	       pct(rb, hb), (unsigned long long)hn, (unsigned long long)hb);
	printf("files: %s.0.dfgg .. %s.%u.dfgg (graph %016llx, set %016llx)\n",
	       prefix, prefix, r->k - 1, (unsigned long long)g->graph_id,
	       (unsigned long long)r->part_set_id);
}

static int cmd_partition(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "replica-budget", required_argument, NULL, OPT_BUDGET },
		{ "replica-order", required_argument, NULL, OPT_ORDER },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "progress", no_argument, NULL, OPT_PROGRESS },
		{ NULL, 0, NULL, 0 },
	};
	struct dfg_gs_part_opts o = { .seed = 1 };
	struct dfg_gs_part_result res;
	struct attr_opts a = { 0 };
	struct dfg_gs_graph g;
	struct dfg_gs_file f;
	struct dfg_gs_err err;
	struct progress pr;
	unsigned long long v;
	uint32_t *part = NULL;
	char prefix[4096];
	const char *in, *out = NULL;
	int c, ret;

	while ((c = getopt_long(argc, argv, "k:o:q", longopts, NULL)) != -1) {
		switch (c) {
		case 'k':
			if (dfg_tool_parse_uint("-k", optarg, 2, 1024, &v))
				return DFG_EXIT_USAGE;
			o.k = (uint32_t)v;
			break;
		case OPT_SEED:
			if (dfg_tool_parse_uint("--seed", optarg, 0, INT32_MAX,
						&v))
				return DFG_EXIT_USAGE;
			o.seed = v;
			break;
		case OPT_BUDGET:
			if (parse_budget(optarg, &o.budget))
				return DFG_EXIT_USAGE;
			break;
		case OPT_ORDER:
			if (!strcmp(optarg, "score")) {
				o.budget.order = DFG_GS_ORDER_SCORE;
			} else if (!strcmp(optarg, "density")) {
				o.budget.order = DFG_GS_ORDER_DENSITY;
			} else {
				dfg_tool_err("--replica-order: '%s': score or density",
					     optarg);
				return DFG_EXIT_USAGE;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case 'q':
			a.quiet = true;
			break;
		case OPT_PROGRESS:
			a.progress = true;
			break;
		default:
			return DFG_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !o.k) {
		dfg_tool_err("partition needs -k K and one FILE");
		return DFG_EXIT_USAGE;
	}
	in = argv[optind];
	if (out) {
		snprintf(prefix, sizeof(prefix), "%s", out);
	} else {	/* FILE without its .dfgg */
		size_t len = strlen(in);

		if (len > 5 && !strcmp(in + len - 5, ".dfgg"))
			len -= 5;
		snprintf(prefix, sizeof(prefix), "%.*s", (int)len, in);
	}
	o.progress = progress_fn(&a, &pr, "dfg graph partition");
	o.parg = &pr;
	if (dfg_gs_open(&f, in, &err)) {
		dfg_tool_err("%s", err.msg);
		return DFG_EXIT_FAIL;
	}
	ret = dfg_gs_load(&g, &f, &err);
	dfg_gs_close(&f);
	if (ret) {
		dfg_tool_err("%s: %s", in, err.msg);
		return DFG_EXIT_FAIL;
	}
	part = malloc((g.n ? g.n : 1) * sizeof(*part));
	ret = part ? dfg_gs_assign(&g, &o, part, &err) :
	      dfg_gs_fail(&err, -ENOMEM, "out of memory");
	if (!ret)
		ret = dfg_gs_write_parts(&g, part, &o, prefix, &res, &err);
	if (ret) {
		dfg_tool_err("%s", err.msg);
	} else {
		if (!a.quiet)
			print_parts(&res, &g, prefix);
		free(res.part);
	}
	free(part);
	dfg_gs_graph_free(&g);
	return ret ? DFG_EXIT_FAIL : DFG_EXIT_OK;
}

static void print_info(const char *path, const struct dfg_gs_file *f)
{
	const struct dfg_gs_hdr *h = f->hdr;
	int i;

	if (h->part_count > 1)
		printf("%s: partition %u of %u (graph %016llx, set %016llx)\n",
		       path, h->part_index, h->part_count,
		       (unsigned long long)h->graph_id,
		       (unsigned long long)h->part_set_id);
	else
		printf("%s: whole graph (graph %016llx)\n", path,
		       (unsigned long long)h->graph_id);
	printf("  nodes      %llu", (unsigned long long)h->nodes_global);
	if (h->part_count > 1)
		printf(", %llu here (ids %llu..%llu)",
		       (unsigned long long)h->nodes_local,
		       (unsigned long long)h->node_base,
		       (unsigned long long)(h->node_base + h->nodes_local - 1));
	printf("\n  edges      %llu arcs%s", (unsigned long long)h->edges_global,
	       h->flags & DFG_GS_F_UNDIRECTED ? " (undirected, each edge twice)" :
	       " (directed)");
	if (h->part_count > 1)
		printf(", %llu out of local nodes",
		       (unsigned long long)h->edges_local);
	printf("\n  features   %u x %s, labels: %u classes\n", h->feat_dim,
	       h->feat_type == DFG_GS_FEAT_U8 ? "u8" :
	       h->feat_type == DFG_GS_FEAT_F32 ? "f32" : "none",
	       h->label_classes);
	if (h->part_count > 1) {
		printf("  cut arcs   %llu; hub nodes %llu (%llu here)\n",
		       (unsigned long long)h->cut_arcs,
		       (unsigned long long)h->hubs_global,
		       (unsigned long long)h->hubs_local);
		printf("  replica    %llu of %llu other partitions' hubs%s, %llu bytes\n",
		       (unsigned long long)h->rep_count,
		       (unsigned long long)h->rep_candidates,
		       h->flags & DFG_GS_F_REP_PARTIAL ? " (budget)" : "",
		       (unsigned long long)h->rep_bytes);
		printf("  1-hop halo %llu nodes, %llu bytes; replica = %.1f%% of its nodes, %.1f%% of its bytes\n",
		       (unsigned long long)h->halo_nodes,
		       (unsigned long long)h->halo_bytes,
		       pct(h->rep_count, h->halo_nodes),
		       pct(h->rep_bytes, h->halo_bytes));
	}
	printf("  sections   (offset, bytes)\n");
	for (i = 0; i < DFG_GS_SEC_COUNT; i++)
		if (h->sec[i].len)
			printf("    %-12s %12llu %14llu\n", dfg_gs_sec_name(i),
			       (unsigned long long)h->sec[i].off,
			       (unsigned long long)h->sec[i].len);
	printf("  file       %llu bytes, valid\n",
	       (unsigned long long)h->file_size);
}

static int cmd_info(int argc, char **argv)
{
	struct dfg_gs_file *f;
	struct dfg_gs_err err;
	int i, j, n = argc - 1, ret = DFG_EXIT_OK;

	if (n < 1 || (argc > 1 && argv[1][0] == '-' && argv[1][1])) {
		dfg_tool_err("info needs FILE...");
		return DFG_EXIT_USAGE;
	}
	f = calloc(n, sizeof(*f));
	if (!f) {
		dfg_tool_err("out of memory");
		return DFG_EXIT_FAIL;
	}
	for (i = 0; i < n && ret == DFG_EXIT_OK; i++) {
		if (dfg_gs_open(&f[i], argv[i + 1], &err)) {
			dfg_tool_err("%s", err.msg);
			ret = DFG_EXIT_FAIL;
			break;
		}
		print_info(argv[i + 1], &f[i]);
		/* files given together must be one partitioning's parts */
		for (j = 0; j < i && ret == DFG_EXIT_OK; j++)
			if (dfg_gs_same_set(&f[j], &f[i], &err)) {
				dfg_tool_err("%s and %s: %s", argv[j + 1],
					     argv[i + 1], err.msg);
				ret = DFG_EXIT_FAIL;
			}
	}
	for (i = 0; i < n; i++)
		dfg_gs_close(&f[i]);
	free(f);
	return ret;
}

int dfg_cmd_graph(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} sub[] = {
		{ "gen", cmd_gen }, { "import", cmd_import },
		{ "partition", cmd_partition }, { "info", cmd_info },
		{ "serve", dfg_graph_serve }, { "sample", dfg_graph_sample },
		{ "kv-serve", dfg_graph_kv_serve },
	};
	static char name[32];
	size_t i;

	if (argc < 2) {
		dfg_tool_err("graph needs a command: gen, import, partition, info, serve, sample or kv-serve");
		return DFG_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		printf("usage: dfg %s\nSee dfg-graph(1).\n", GRAPH_USAGE);
		return DFG_EXIT_OK;
	}
	for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		if (strcmp(argv[1], sub[i].name))
			continue;
		/* getopt's messages then begin "dfg graph gen: " */
		snprintf(name, sizeof(name), "dfg graph %s", sub[i].name);
		argv[1] = name;
		return sub[i].fn(argc - 1, argv + 1);
	}
	dfg_tool_err("graph: unknown command '%s' (gen, import, partition, info, serve, sample)",
		     argv[1]);
	return DFG_EXIT_USAGE;
}
