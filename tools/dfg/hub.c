// SPDX-License-Identifier: GPL-2.0
/*
 * dfg graph serve | sample: serving this machine's partition through the
 * module and sampling mini-batches with the access engine of patent 004
 * (<dfg/hub.h> does the work; this file parses and prints).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dfg/dfg.h>
#include <dfg/hub.h>

#include "dfg.h"
#include "gstore.h"
#include "hub_kv.h"

/* ---- serve ---- */

/* Is [first, first + count) the range of a partition of @f other than its own? */
static bool peer_range_ok(const struct dfg_gs_file *f, uint64_t first,
			  uint64_t count)
{
	const struct dfg_gs_hdr *h = f->hdr;
	uint32_t p;

	if (!f->part_base)
		return false;
	for (p = 0; p < h->part_count; p++)
		if (p != h->part_index && f->part_base[p] == first &&
		    f->part_base[p + 1] - first == count)
			return true;
	return false;
}

/* "ADDR" or "ADDR:PORT" (IPv6: "[ADDR]:PORT") into @addr and *@port. */
static int split_peer(const char *arg, char *addr, size_t len,
		      unsigned int *port)
{
	const char *colon = strrchr(arg, ':'), *end = arg + strlen(arg);
	unsigned long long v;

	*port = 0;
	if (arg[0] == '[') {
		const char *rb = strchr(arg, ']');

		if (!rb)
			return -1;
		arg++;
		end = rb;
		colon = rb[1] == ':' ? rb + 1 : NULL;
	} else if (colon && strchr(arg, ':') != colon) {
		colon = NULL;	/* a bare IPv6 address */
	} else if (colon) {
		end = colon;
	}
	if ((size_t)(end - arg) >= len)
		return -1;
	memcpy(addr, arg, end - arg);
	addr[end - arg] = 0;
	if (colon) {
		if (dfg_tool_parse_uint("--peer", colon + 1, 1, 65535, &v))
			return -1;
		*port = (unsigned int)v;
	}
	return 0;
}

int dfg_graph_serve(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "no-replica", no_argument, NULL, 'R' },
		{ "peer", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *peers[DFG_PF_PEERS_MAX];
	unsigned int npeers = 0, flags = 0, tmo = 0, i, port;
	struct dfg_hub_err herr = { "" };
	struct dfg_gs_err gerr;
	struct dfg_gs_file f;
	unsigned long long v;
	struct dfg *d;
	char addr[64];
	int c, ret;

	while ((c = getopt_long(argc, argv, "p:t:h", lo, NULL)) != -1) {
		switch (c) {
		case 'R':
			flags |= DFG_HUB_LOAD_NO_REPLICA;
			break;
		case 'p':
			if (npeers == DFG_PF_PEERS_MAX) {
				dfg_tool_err("serve: at most %u peers",
					     DFG_PF_PEERS_MAX);
				return DFG_EXIT_USAGE;
			}
			peers[npeers++] = optarg;
			break;
		case 't':
			if (dfg_tool_parse_uint("--timeout", optarg, 1,
						600000, &v))
				return DFG_EXIT_USAGE;
			tmo = (unsigned int)v;
			break;
		case 'h':
			printf("usage: dfg %s\n", dfg_graph_usage);
			return DFG_EXIT_OK;
		default:
			return DFG_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		dfg_tool_err("serve needs one partition FILE");
		return DFG_EXIT_USAGE;
	}
	if (dfg_gs_open(&f, argv[optind], &gerr)) {
		dfg_tool_err("%s", gerr.msg);
		return DFG_EXIT_FAIL;
	}
	ret = dfg_open(&d, DFG_OPEN_NO_RING);
	if (ret) {
		dfg_tool_err("cannot open the dfg device: %s", strerror(-ret));
		dfg_gs_close(&f);
		return DFG_EXIT_FAIL;
	}
	ret = dfg_hub_part_load(d, argv[optind], flags, &herr);
	if (ret) {
		dfg_tool_err("%s", herr.msg);
		goto out;
	}
	printf("serving %s: partition %u of %u, nodes %llu..%llu, %llu replicated hubs%s\n",
	       argv[optind], f.hdr->part_index, f.hdr->part_count,
	       (unsigned long long)f.hdr->node_base,
	       (unsigned long long)(f.hdr->node_base + f.hdr->nodes_local - 1),
	       flags ? 0ULL : (unsigned long long)f.hdr->rep_count,
	       flags ? " (replica left out)" : "");
	for (i = 0; i < npeers; i++) {
		struct dfg_hub_peer pi;

		if (split_peer(peers[i], addr, sizeof(addr), &port)) {
			dfg_tool_err("serve: bad --peer '%s'", peers[i]);
			ret = -EINVAL;
			goto out;
		}
		ret = dfg_hub_peer_add(d, addr, port, tmo, &pi);
		if (ret) {
			if (ret == -EXDEV)
				dfg_tool_err("peer %s serves a partition of another graph or partitioning than %s",
					     peers[i], argv[optind]);
			else
				dfg_tool_err("peer %s: %s%s", peers[i],
					     strerror(-ret), ret == -ENODEV ?
					     " (is dfg_rdma.ko or dfg_tcp.ko loaded?)" : "");
			goto out;
		}
		if (!peer_range_ok(&f, pi.node_first, pi.node_count)) {
			dfg_tool_err("peer %s serves nodes %llu..%llu, which is no other partition of %s: a partition of another graph or partitioning",
				     peers[i], (unsigned long long)pi.node_first,
				     (unsigned long long)(pi.node_first +
							  pi.node_count - 1),
				     argv[optind]);
			ret = -EXDEV;
			goto out;
		}
		printf("peer %u: %s, nodes %llu..%llu\n", pi.id, peers[i],
		       (unsigned long long)pi.node_first,
		       (unsigned long long)(pi.node_first + pi.node_count - 1));
	}
	ret = 0;
out:
	dfg_close(d);
	dfg_gs_close(&f);
	return ret ? DFG_EXIT_FAIL : DFG_EXIT_OK;
}

/* ---- kv-serve: the TCP key-value baseline's server ---- */

static struct hub_kv_server *kv_srv;

static void kv_stop(int sig)
{
	(void)sig;
	hub_kv_server_stop(kv_srv);
}

int dfg_graph_kv_serve(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct dfg_hub_err herr = { "" };
	const char *addr = NULL;
	unsigned int port = HUB_KV_PORT;
	struct sigaction sa = { .sa_handler = kv_stop };
	unsigned long long v;
	int c, ret;

	while ((c = getopt_long(argc, argv, "a:p:h", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			addr = optarg;
			break;
		case 'p':
			if (dfg_tool_parse_uint("--port", optarg, 0, 65535, &v))
				return DFG_EXIT_USAGE;
			port = (unsigned int)v;
			break;
		case 'h':
			printf("usage: dfg %s\n", dfg_graph_usage);
			return DFG_EXIT_OK;
		default:
			return DFG_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		dfg_tool_err("kv-serve needs one partition FILE");
		return DFG_EXIT_USAGE;
	}
	ret = hub_kv_server_new(argv[optind], addr, port, &kv_srv, &herr);
	if (ret) {
		dfg_tool_err("kv-serve: %s", herr.msg);
		return DFG_EXIT_FAIL;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("kv-serve %s: port %u\n", argv[optind],
	       hub_kv_server_port(kv_srv));
	fflush(stdout);
	ret = hub_kv_server_run(kv_srv);
	hub_kv_server_free(kv_srv);
	if (ret) {
		dfg_tool_err("kv-serve: %s", strerror(-ret));
		return DFG_EXIT_FAIL;
	}
	return DFG_EXIT_OK;
}

/* ---- sample ---- */

struct sample_opts {
	struct dfg_hub_opts	o;
	unsigned int		batch, batches;
	bool			files, verbose, no_ahead;
	__u64			*roots;		/* --roots, or NULL */
	const char		*kv[DFG_PF_PEERS_MAX];	/* --kv servers */
	unsigned int		nkv, kv_tmo;		/* --timeout, ms */
};

/* "ID,ID,...": the roots of every batch. */
static int parse_roots(const char *s, struct sample_opts *so)
{
	unsigned int n = 1;
	const char *c;
	char *end;

	for (c = s; *c; c++)
		n += *c == ',';
	free(so->roots);
	so->roots = calloc(n, sizeof(*so->roots));
	if (!so->roots)
		return -1;
	for (so->batch = 0; so->batch < n; so->batch++) {
		errno = 0;
		so->roots[so->batch] = strtoull(s, &end, 10);
		if (end == s || errno || (*end && *end != ','))
			return -1;
		s = end + 1;
	}
	return 0;
}

/* Says why batch @b failed. */
static void batch_err(const struct dfg_hub_engine *e, uint64_t b, int ret)
{
	if (ret == -ERANGE)
		dfg_tool_err("batch %llu: a node ID outside the graph (0..%llu)",
			     (unsigned long long)b,
			     (unsigned long long)dfg_hub_engine_nodes(e) - 1);
	else if (ret == -EHOSTUNREACH)
		dfg_tool_err("batch %llu: the owner of a node is unreachable",
			     (unsigned long long)b);
	else
		dfg_tool_err("batch %llu: %s", (unsigned long long)b,
			     strerror(-ret));
}

static int parse_fanout(const char *s, struct dfg_hub_opts *o)
{
	char *end;
	unsigned long v;

	o->hops = 0;
	memset(o->fanout, 0, sizeof(o->fanout));
	for (;;) {
		errno = 0;
		v = strtoul(s, &end, 10);
		if (end == s || errno || v > 100000 ||
		    o->hops == DFG_HUB_HOPS_MAX)
			return -1;
		o->fanout[o->hops++] = (uint32_t)v;
		if (!*end)
			return 0;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}

static int parse_rules(const char *s, uint32_t *rules)
{
	char buf[64], *tok, *save;

	*rules = 0;
	if (!strcmp(s, "none"))
		return 0;
	if (!strcmp(s, "all")) {
		*rules = DFG_HUB_R_ALL;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if ((tok[0] != 'r' && tok[0] != 'R') || tok[1] < '1' ||
		    tok[1] > '4' || tok[2])
			return -1;
		*rules |= 1U << (tok[1] - '1');
	}
	return 0;
}

/*
 * Roots of batch @b: --roots, or @n own nodes of @f, a hash of (seed, b,
 * i).
 */
static void pick_roots(const struct sample_opts *so,
		       const struct dfg_gs_file *f, uint64_t seed, uint64_t b,
		       __u64 *roots, unsigned int n)
{
	unsigned int i;

	if (so->roots) {
		memcpy(roots, so->roots, n * sizeof(*roots));
		return;
	}
	for (i = 0; i < n; i++) {
		uint64_t x = dfg_gs_hash(seed, &(uint64_t[2]){ b, i }, 16);

		roots[i] = f->hdr->node_base + x % f->hdr->nodes_local;
	}
}

/*
 * Batch @b's roots into @roots (unless @have: the previous call's
 * @next), then, unless --no-ahead, batch @b + 1's into @next, announced
 * to the engine (dfg_hub_ahead(): R3 runs for it during batch @b). The
 * last batch announces none.
 */
static int roots_and_ahead(const struct sample_opts *so,
			   const struct dfg_gs_file *f,
			   struct dfg_hub_engine *e, uint64_t b, bool have,
			   __u64 *roots, __u64 *next)
{
	if (!have)
		pick_roots(so, f, so->o.seed, b, roots, so->batch);
	if (so->no_ahead || b + 1 >= so->batches)
		return 0;
	pick_roots(so, f, so->o.seed, b + 1, next, so->batch);
	return dfg_hub_ahead(e, b + 1, next, so->batch);
}

/*
 * --verbose: one line per batch, with its latency, the entries read from
 * peers on demand for it and those R3 read speculatively meanwhile (for
 * it or the batch announced after it). @last: the counters after the
 * previous batch.
 */
static void batch_line(const struct dfg_hub_engine *e,
		       const struct dfg_hub_batch *hb, double us,
		       struct dfg_hub_stats *last)
{
	struct dfg_hub_stats st;

	dfg_hub_engine_stats(e, &st);
	printf("batch %llu nodes %u bytes %u hash %016llx us %.0f remote %llu spec %llu\n",
	       (unsigned long long)hb->batch, hb->nodes, hb->bytes,
	       (unsigned long long)dfg_gs_hash(0, hb, hb->bytes), us,
	       (unsigned long long)(st.remote - last->remote),
	       (unsigned long long)(st.r3_nodes - last->r3_nodes));
	*last = st;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void print_stats(const struct dfg_hub_stats *st, unsigned int batches,
			uint64_t digest, double *lat)
{
	qsort(lat, batches, sizeof(*lat), cmp_double);
	printf("digest %016llx\n", (unsigned long long)digest);
	printf("batches %llu roots %llu sampled %llu nodes %llu\n",
	       (unsigned long long)st->batches, (unsigned long long)st->roots,
	       (unsigned long long)st->sampled, (unsigned long long)st->nodes);
	printf("local %llu replica %llu buffer %llu remote %llu cache %llu calls %llu puts %llu\n",
	       (unsigned long long)st->local, (unsigned long long)st->replica,
	       (unsigned long long)st->buf_hits,
	       (unsigned long long)st->remote,
	       (unsigned long long)st->cache_hits,
	       (unsigned long long)st->remote_calls,
	       (unsigned long long)st->buf_puts);
	printf("r1 %llu r2 %llu r3 %llu r3_nodes %llu r3_hits %llu r3_gated %llu r4 %llu\n",
	       (unsigned long long)st->r1, (unsigned long long)st->r2,
	       (unsigned long long)st->r3, (unsigned long long)st->r3_nodes,
	       (unsigned long long)st->r3_hits,
	       (unsigned long long)st->r3_gated, (unsigned long long)st->r4);
	printf("remote reads per batch %.2f, latency median %.0f us p99 %.0f us\n",
	       batches ? (double)st->remote / batches : 0.0,
	       lat[batches / 2], lat[(batches * 99) / 100]);
}

/*
 * The mini-batches through a channel of a graph of the module, consumed
 * here: checked, hashed, freed.
 */
static int sample_served(const struct sample_opts *so,
			 const struct dfg_gs_file *f, const char *path)
{
	struct dfg_hub_engine *e = NULL;
	struct dfg_chan *prod = NULL, *cons = NULL;
	struct dfg_arena *a = NULL;
	const struct dfg_part_hdr *ph;
	struct dfg_hub_stats st;
	struct dfg_hub *h = NULL;
	uint64_t digest = 0, b;
	struct dfg_hub_stats last = { 0 };
	struct dfg *d;
	char name[64];
	__u64 *rbuf, *roots, *next, *t;
	double *lat;
	int gfd = -1, cid, ret;

	rbuf = calloc(2 * (size_t)so->batch, sizeof(*rbuf));
	roots = rbuf;
	next = rbuf + so->batch;
	lat = calloc(so->batches, sizeof(*lat));
	if (!rbuf || !lat) {
		free(rbuf);
		free(lat);
		dfg_tool_err("out of memory");
		return DFG_EXIT_FAIL;
	}
	ret = dfg_open(&d, 0);
	if (ret) {
		dfg_tool_err("cannot open the dfg device: %s", strerror(-ret));
		goto out_free;
	}
	ret = dfg_hub_open(d, &h);
	if (ret) {
		dfg_tool_err("the module serves no partition (%s): run 'dfg graph serve' first",
			     strerror(-ret));
		goto out;
	}
	ph = dfg_hub_part(h);
	if (ph->node_first != f->hdr->node_base ||
	    ph->node_count != f->hdr->nodes_local) {
		dfg_tool_err("the module serves nodes %llu..%llu, not %s's",
			     (unsigned long long)ph->node_first,
			     (unsigned long long)(ph->node_first +
						  ph->node_count - 1), path);
		ret = -EXDEV;
		goto out;
	}
	ret = dfg_hub_engine_new(d, h, &so->o, &e);
	if (ret) {
		dfg_tool_err("engine: %s", strerror(-ret));
		goto out;
	}
	snprintf(name, sizeof(name), "dfg-sample.%d", (int)getpid());
	gfd = dfg_graph_create(d, name, 0600, DFG_GRAPH_O_CLOEXEC);
	ret = gfd < 0 ? gfd : dfg_arena_create(gfd, 64u << 20, &a);
	if (!ret)
		ret = dfg_alloc_init(a);
	cid = ret ? ret : dfg_chan_create(gfd, dfg_arena_id(a), 4, 1);
	ret = cid < 0 ? cid : dfg_chan_open(gfd, cid, DFG_CHAN_CONSUMER, a,
					     &cons);
	if (!ret)
		ret = dfg_chan_open(gfd, cid, DFG_CHAN_PRODUCER, a, &prod);
	if (ret) {
		dfg_tool_err("graph, arena or channel: %s", strerror(-ret));
		goto out;
	}
	for (b = 0; b < so->batches; b++) {
		const struct dfg_hub_batch *hb;
		struct dfg_desc desc;
		double t0;

		t0 = now_us();
		ret = roots_and_ahead(so, f, e, b, b > 0 && !so->no_ahead,
				      roots, next);
		if (!ret)
			ret = dfg_hub_sample_send(e, b, roots, so->batch, a,
						  prod);
		if (ret < 0) {
			batch_err(e, b, ret);
			goto out;
		}
		ret = dfg_chan_recv(cons, &desc, 1, 0);
		lat[b] = now_us() - t0;
		if (ret != 1) {
			dfg_tool_err("channel: %s", strerror(-ret));
			ret = ret < 0 ? ret : -EPROTO;
			goto out;
		}
		hb = dfg_chan_buf(cons, &desc);
		if (!hb || hb->magic != DFG_HUB_BATCH_MAGIC ||
		    hb->bytes != desc.len || desc.tag != b) {
			dfg_tool_err("batch %llu: bad buffer", (unsigned long long)b);
			ret = -EPROTO;
			goto out;
		}
		digest = dfg_gs_hash(digest, hb, hb->bytes);
		if (so->verbose)
			batch_line(e, hb, lat[b], &last);
		dfg_buf_free(a, desc.off);
		t = roots;
		roots = next;
		next = t;
	}
	dfg_hub_engine_stats(e, &st);
	print_stats(&st, so->batches, digest, lat);
	ret = 0;
out:
	dfg_chan_close(prod);
	dfg_chan_close(cons);
	dfg_arena_unmap(a);
	if (gfd >= 0)
		close(gfd);
	dfg_hub_engine_free(e);
	dfg_hub_close(h);
	dfg_close(d);
out_free:
	free(rbuf);
	free(lat);
	return ret ? DFG_EXIT_FAIL : DFG_EXIT_OK;
}

/* Batches of an engine without the module, into a private arena. */
static int sample_loop(const struct sample_opts *so, struct dfg_hub_engine *e,
		       const struct dfg_gs_file *f)
{
	struct dfg_hub_stats st;
	struct dfg_arena *a = NULL;
	uint64_t digest = 0, b;
	struct dfg_hub_stats last = { 0 };
	__u64 *rbuf, *roots, *next, *t, off;
	double *lat;
	void *mem = NULL;
	int ret;

	rbuf = calloc(2 * (size_t)so->batch, sizeof(*rbuf));
	roots = rbuf;
	next = rbuf + so->batch;
	lat = calloc(so->batches, sizeof(*lat));
	if (!rbuf || !lat || posix_memalign(&mem, 4096, 64u << 20) ||
	    dfg_arena_wrap(mem, 64u << 20, 1, &a) || dfg_alloc_init(a)) {
		dfg_tool_err("out of memory");
		ret = -ENOMEM;
		goto out;
	}
	for (b = 0; b < so->batches; b++) {
		const struct dfg_hub_batch *hb;
		double t0 = now_us();

		ret = roots_and_ahead(so, f, e, b, b > 0 && !so->no_ahead,
				      roots, next);
		if (!ret)
			ret = dfg_hub_sample(e, b, roots, so->batch, a, &off);
		lat[b] = now_us() - t0;
		if (ret < 0) {
			batch_err(e, b, ret);
			goto out;
		}
		hb = dfg_arena_ptr(a, off, ret);
		digest = dfg_gs_hash(digest, hb, hb->bytes);
		if (so->verbose)
			batch_line(e, hb, lat[b], &last);
		dfg_buf_free(a, off);
		t = roots;
		roots = next;
		next = t;
	}
	dfg_hub_engine_stats(e, &st);
	print_stats(&st, so->batches, digest, lat);
	ret = 0;
out:
	dfg_arena_unmap(a);
	free(mem);
	free(rbuf);
	free(lat);
	return ret ? DFG_EXIT_FAIL : DFG_EXIT_OK;
}

/* Without the module: the K files, the other partitions as peers. */
static int sample_files(const struct sample_opts *so, char **paths,
			unsigned int k, const struct dfg_gs_file *f,
			unsigned int load)
{
	struct dfg_hub_err herr = { "" };
	struct dfg_hub_engine *e;
	int ret;

	ret = dfg_hub_engine_files((const char *const *)paths, k,
				   f->hdr->part_index, load, &so->o, &e, &herr);
	if (ret) {
		dfg_tool_err("%s", herr.msg);
		return DFG_EXIT_FAIL;
	}
	ret = sample_loop(so, e, f);
	dfg_hub_engine_free(e);
	return ret;
}

/*
 * Without the module, the other partitions read from their kv-serve
 * servers over TCP: the DistDGL-style baseline.
 */
static int sample_kv(const struct sample_opts *so, const char *path,
		     const struct dfg_gs_file *f, unsigned int load)
{
	struct dfg_hub_err herr = { "" };
	struct dfg_hub_engine *e = NULL;
	struct hub_kv *kv;
	uint64_t req, bytes;
	int ret;

	ret = hub_kv_open(path, load, so->kv, so->nkv, so->kv_tmo, &kv, &herr);
	if (ret) {
		dfg_tool_err("--kv: %s", herr.msg);
		return DFG_EXIT_FAIL;
	}
	ret = hub_kv_engine(kv, &so->o, &e);
	if (ret) {
		dfg_tool_err("engine: %s", strerror(-ret));
		hub_kv_close(kv);
		return DFG_EXIT_FAIL;
	}
	ret = sample_loop(so, e, f);
	hub_kv_counts(kv, &req, &bytes);
	if (!ret)
		printf("kv requests %llu bytes %llu\n", (unsigned long long)req,
		       (unsigned long long)bytes);
	dfg_hub_engine_free(e);
	hub_kv_close(kv);
	return ret;
}

int dfg_graph_sample(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "fanout", required_argument, NULL, 'f' },
		{ "batch", required_argument, NULL, 'b' },
		{ "batches", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "rules", required_argument, NULL, 'r' },
		{ "weighted", optional_argument, NULL, 'w' },
		{ "r2-on-root", no_argument, NULL, 'O' },
		{ "buffer", required_argument, NULL, 'B' },
		{ "files", no_argument, NULL, 'F' },
		{ "no-replica", no_argument, NULL, 'R' },
		{ "roots", required_argument, NULL, 'o' },
		{ "kv", required_argument, NULL, 'K' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "no-ahead", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct sample_opts so = {
		.o = { .hops = 2, .fanout = { 10, 5 }, .seed = 1 },
		.batch = 64, .batches = 16,
	};
	unsigned int load = 0;
	struct dfg_gs_err gerr;
	struct dfg_gs_file f;
	unsigned long long v;
	char *end;
	int c, ret;

	while ((c = getopt_long(argc, argv, "f:b:n:s:r:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (parse_fanout(optarg, &so.o)) {
				dfg_tool_err("sample: --fanout wants up to %u counts such as 10,5",
					     DFG_HUB_HOPS_MAX);
				return DFG_EXIT_USAGE;
			}
			break;
		case 'b':
			if (dfg_tool_parse_uint("--batch", optarg, 1, 65536, &v))
				return DFG_EXIT_USAGE;
			so.batch = (unsigned int)v;
			break;
		case 'n':
			if (dfg_tool_parse_uint("--batches", optarg, 1, 1000000,
						&v))
				return DFG_EXIT_USAGE;
			so.batches = (unsigned int)v;
			break;
		case 's':
			if (dfg_tool_parse_uint("--seed", optarg, 0, ~0ULL, &v))
				return DFG_EXIT_USAGE;
			so.o.seed = v;
			break;
		case 'r':
			if (parse_rules(optarg, &so.o.rules)) {
				dfg_tool_err("sample: --rules wants none, all or a list such as r1,r2,r4");
				return DFG_EXIT_USAGE;
			}
			break;
		case 'w':
			so.o.flags |= DFG_HUB_F_WEIGHTED;
			if (optarg) {
				so.o.decay = strtod(optarg, &end);
				if (*end || !(so.o.decay > 0)) {
					dfg_tool_err("sample: --weighted=DECAY wants a number > 0");
					return DFG_EXIT_USAGE;
				}
			}
			break;
		case 'O':
			so.o.flags |= DFG_HUB_F_R2_ON_ROOT;
			break;
		case 'B':
			if (dfg_tool_parse_uint("--buffer", optarg, 1, 1 << 24,
						&v))
				return DFG_EXIT_USAGE;
			so.o.buf_entries = (uint32_t)v;
			break;
		case 'F':
			so.files = true;
			break;
		case 'o':
			if (parse_roots(optarg, &so)) {
				dfg_tool_err("sample: --roots wants node IDs such as 1,5,9");
				free(so.roots);
				return DFG_EXIT_USAGE;
			}
			break;
		case 'R':
			load |= DFG_HUB_LOAD_NO_REPLICA;
			break;
		case 'K':
			if (so.nkv == DFG_PF_PEERS_MAX) {
				dfg_tool_err("sample: at most %u --kv servers",
					     DFG_PF_PEERS_MAX);
				free(so.roots);
				return DFG_EXIT_USAGE;
			}
			so.kv[so.nkv++] = optarg;
			break;
		case 'T':
			if (dfg_tool_parse_uint("--timeout", optarg, 1,
						600000, &v))
				return DFG_EXIT_USAGE;
			so.kv_tmo = (unsigned int)v;
			break;
		case 'v':
			so.verbose = true;
			break;
		case 'A':
			so.no_ahead = true;
			break;
		case 'h':
			printf("usage: dfg %s\n", dfg_graph_usage);
			return DFG_EXIT_OK;
		default:
			return DFG_EXIT_USAGE;
		}
	}
	if (optind >= argc || (!so.files && optind + 1 != argc)) {
		free(so.roots);
		dfg_tool_err("sample needs the machine's partition FILE (with --files: every partition file, this machine's first)");
		return DFG_EXIT_USAGE;
	}
	if (so.files && so.nkv) {
		free(so.roots);
		dfg_tool_err("sample: --files and --kv are two ways of reading the other partitions: give one");
		return DFG_EXIT_USAGE;
	}
	if (!so.files && !so.nkv && load) {
		free(so.roots);
		dfg_tool_err("sample: --no-replica goes with --files or --kv; a served partition is loaded with or without it by 'dfg graph serve'");
		return DFG_EXIT_USAGE;
	}
	if (dfg_gs_open(&f, argv[optind], &gerr)) {
		free(so.roots);
		dfg_tool_err("%s", gerr.msg);
		return DFG_EXIT_FAIL;
	}
	if (so.files)
		ret = sample_files(&so, argv + optind, argc - optind, &f, load);
	else if (so.nkv)
		ret = sample_kv(&so, argv[optind], &f, load);
	else
		ret = sample_served(&so, &f, argv[optind]);
	dfg_gs_close(&f);
	free(so.roots);
	return ret;
}

