// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg host test: the TCP key-value baseline of patent 004's benchmark
 * (libdfg/hub/kv.c) on loopback, against the engine over files.
 *
 *   same_batches	K = 3, every partition, with and without the replica,
 *			rules none and all: each mini-batch's bytes equal the
 *			files engine's; remote reads equal the files engine's
 *			(its misses plus its cache hits: the baseline has no
 *			cache); at most one request per owner per fetch
 *   bad_peers		a server of another partitioning, a partition twice
 *			or missing, nobody listening, a bad address
 *   server_death	the server stops mid-run: the next batch fails with
 *			-EHOSTUNREACH within the timeout, and so does every
 *			later one; nothing hangs
 *   client_death	a client that dies mid-request leaves the server
 *			serving the others
 *   bad_request	IDs the server does not own: -ERANGE from the sampler
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <dfg/dfg.h>
#include <dfg/hub.h>

#include "../gstore/gstore.h"
#include "../hub/hub_kv.h"

#include "kselftest_harness.h"
#include "hub_parts.h"

#define BATCHES		10
#define ROOTS		24

/* A server on an ephemeral loopback port, run by a thread. */
struct srv {
	struct hub_kv_server	*s;
	pthread_t		thr;
	char			addr[32];
	int			ret;
};

static void *srv_main(void *arg)
{
	struct srv *v = arg;

	v->ret = hub_kv_server_run(v->s);
	return NULL;
}

static void srv_start(struct __test_metadata *_metadata, struct srv *v,
		      const char *path)
{
	struct dfg_hub_err err = { "" };

	ASSERT_EQ(0, hub_kv_server_new(path, "127.0.0.1", 0, &v->s, &err)) {
		TH_LOG("%s", err.msg);
	}
	snprintf(v->addr, sizeof(v->addr), "127.0.0.1:%u",
		 hub_kv_server_port(v->s));
	ASSERT_EQ(0, pthread_create(&v->thr, NULL, srv_main, v));
}

static void srv_stop(struct __test_metadata *_metadata, struct srv *v)
{
	if (!v->s)
		return;
	hub_kv_server_stop(v->s);
	ASSERT_EQ(0, pthread_join(v->thr, NULL));
	EXPECT_EQ(0, v->ret);
	hub_kv_server_free(v->s);
	v->s = NULL;
}

/* Roots of batch @b: own nodes of @f mostly, some anywhere. */
static void roots_of(const struct dfg_gs_file *f, uint64_t b, __u64 *roots)
{
	uint64_t x = b * 0x9e3779b97f4a7c15ULL + 11;
	unsigned int i;

	for (i = 0; i < ROOTS; i++) {
		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ULL;
		x ^= x >> 32;
		if (i % 5 == 4)
			roots[i] = x % f->hdr->nodes_global;
		else
			roots[i] = f->hdr->node_base + x % f->hdr->nodes_local;
	}
}

/* BATCHES batches of @e: each batch's hash into @hash. */
static void run(struct __test_metadata *_metadata, struct dfg_hub_engine *e,
		const char *path, uint64_t *hash, struct dfg_hub_stats *st)
{
	struct dfg_arena *a = arena_new(_metadata);
	struct dfg_gs_err gerr;
	struct dfg_gs_file f;
	__u64 roots[ROOTS], off;
	uint64_t b;
	int len;

	ASSERT_EQ(0, dfg_gs_open(&f, path, &gerr));
	for (b = 0; b < BATCHES; b++) {
		roots_of(&f, b, roots);
		len = dfg_hub_sample(e, b, roots, ROOTS, a, &off);
		ASSERT_LT(0, len) {
			TH_LOG("batch %llu: %s", (unsigned long long)b,
			       strerror(-len));
		}
		hash[b] = dfg_gs_hash(0, dfg_arena_ptr(a, off, len), len);
		ASSERT_EQ(0, dfg_buf_free(a, off));
	}
	dfg_hub_engine_stats(e, st);
	dfg_gs_close(&f);
	arena_free(a);
}

TEST(same_batches)
{
	static const uint32_t rules[] = { 0, DFG_HUB_R_ALL };
	struct parts p;
	struct srv srv[3] = { 0 };
	unsigned int part, i, load, r;

	make_parts(_metadata, &p, "same", 10, 5, 3);
	for (i = 0; i < p.k; i++)
		srv_start(_metadata, &srv[i], p.paths[i]);
	for (part = 0; part < p.k; part++)
		for (load = 0; load <= DFG_HUB_LOAD_NO_REPLICA; load++)
			for (r = 0; r < 2; r++) {
				struct dfg_hub_opts o = {
					.hops = 2, .fanout = { 6, 4 },
					.seed = 9, .rules = rules[r],
				};
				struct dfg_hub_err err = { "" };
				const char *peers[2];
				uint64_t hf[BATCHES], hk[BATCHES], req, bytes;
				struct dfg_hub_stats sf, sk;
				struct dfg_hub_engine *e;
				struct hub_kv *kv;
				unsigned int n = 0;

				for (i = 0; i < p.k; i++)
					if (i != part)
						peers[n++] = srv[i].addr;
				ASSERT_EQ(0, dfg_hub_engine_files(p.paths, p.k,
								  part, load,
								  &o, &e,
								  &err));
				run(_metadata, e, p.paths[part], hf, &sf);
				dfg_hub_engine_free(e);
				ASSERT_EQ(0, hub_kv_open(p.paths[part], load,
							 peers, n, 0, &kv,
							 &err)) {
					TH_LOG("%s", err.msg);
				}
				ASSERT_EQ(0, hub_kv_engine(kv, &o, &e));
				run(_metadata, e, p.paths[part], hk, &sk);
				hub_kv_counts(kv, &req, &bytes);
				dfg_hub_engine_free(e);
				hub_kv_close(kv);
				for (i = 0; i < BATCHES; i++)
					ASSERT_EQ(hf[i], hk[i]) {
						TH_LOG("part %u load %u rules %x batch %u",
						       part, load, rules[r], i);
					}
				/* Demand reads: the same nodes, no cache. */
				if (!rules[r])
					EXPECT_EQ(sf.remote + sf.cache_hits,
						  sk.remote);
				EXPECT_EQ(sf.local, sk.local);
				EXPECT_EQ(sf.replica, sk.replica);
				EXPECT_EQ(0, sk.cache_hits);
				EXPECT_LT(0, sk.remote);
				EXPECT_LT(0, bytes);
				/* One request per owner per fetch at most. */
				EXPECT_LE(req, sk.remote_calls * (p.k - 1));
				EXPECT_LE(sk.remote_calls, sk.batches *
					  (o.hops + 1) + (rules[r] ?
					  sk.batches * 16 : 0));
				if (!rules[r])
					EXPECT_LE(sk.remote_calls,
						  sk.batches * (o.hops + 1));
			}
	for (i = 0; i < p.k; i++)
		srv_stop(_metadata, &srv[i]);
	rm_parts(&p);
}

TEST(bad_peers)
{
	struct parts p, q;
	struct srv a = { 0 }, b = { 0 }, c = { 0 };
	struct dfg_hub_err err = { "" };
	struct hub_kv *kv = NULL;
	const char *peers[2];
	int fd;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	char addr[32];
	double t0;
	struct timespec ts;

	make_parts(_metadata, &p, "bp", 9, 3, 3);
	make_parts(_metadata, &q, "bq", 9, 4, 3);
	srv_start(_metadata, &a, p.paths[1]);
	srv_start(_metadata, &b, p.paths[2]);
	srv_start(_metadata, &c, q.paths[2]);

	/* Another partitioning's server. */
	peers[0] = a.addr;
	peers[1] = c.addr;
	EXPECT_EQ(-EXDEV, hub_kv_open(p.paths[0], 0, peers, 2, 0, &kv, &err));
	EXPECT_NE(NULL, strstr(err.msg, "another graph"));
	/* A partition twice, and one missing. */
	peers[1] = a.addr;
	EXPECT_EQ(-EXDEV, hub_kv_open(p.paths[0], 0, peers, 2, 0, &kv, &err));
	EXPECT_EQ(-EXDEV, hub_kv_open(p.paths[0], 0, peers, 1, 0, &kv, &err));
	EXPECT_NE(NULL, strstr(err.msg, "partition 2"));
	/* The own partition's server. */
	peers[0] = a.addr;
	EXPECT_EQ(-EXDEV, hub_kv_open(p.paths[1], 0, peers, 1, 0, &kv, &err));
	/* Nobody listening: refused once the timeout is over, not before. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, fd);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&sa, &sl));
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", ntohs(sa.sin_port));
	peers[0] = addr;
	peers[1] = b.addr;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec + ts.tv_nsec / 1e9;
	EXPECT_EQ(-ECONNREFUSED, hub_kv_open(p.paths[0], 0, peers, 2, 300,
					     &kv, &err));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	EXPECT_LE(0.3, ts.tv_sec + ts.tv_nsec / 1e9 - t0);
	EXPECT_GE(5.0, ts.tv_sec + ts.tv_nsec / 1e9 - t0);
	close(fd);
	/* Bad addresses. */
	peers[0] = "no.such.address";
	EXPECT_EQ(-EINVAL, hub_kv_open(p.paths[0], 0, peers, 1, 0, &kv, &err));
	peers[0] = "127.0.0.1:0";
	EXPECT_EQ(-EINVAL, hub_kv_open(p.paths[0], 0, peers, 1, 0, &kv, &err));
	/* A missing file. */
	EXPECT_EQ(-ENOENT, hub_kv_open("/nonexistent/g.0.dfgg", 0, peers, 1, 0,
				       &kv, &err));
	/* And the right pair works. */
	peers[0] = a.addr;
	peers[1] = b.addr;
	ASSERT_EQ(0, hub_kv_open(p.paths[0], 0, peers, 2, 0, &kv, &err));
	hub_kv_close(kv);
	srv_stop(_metadata, &a);
	srv_stop(_metadata, &b);
	srv_stop(_metadata, &c);
	rm_parts(&p);
	rm_parts(&q);
}

TEST(server_death)
{
	struct dfg_hub_opts o = { .hops = 2, .fanout = { 8, 4 }, .seed = 2 };
	struct parts p;
	struct srv s = { 0 };
	struct dfg_hub_err err = { "" };
	struct dfg_hub_engine *e;
	struct dfg_arena *a = arena_new(_metadata);
	struct dfg_gs_err gerr;
	struct dfg_gs_file f;
	struct hub_kv *kv;
	const char *peers[1];
	__u64 roots[ROOTS], off;
	struct timespec t0, t1;
	int len;

	make_parts(_metadata, &p, "death", 10, 6, 2);
	srv_start(_metadata, &s, p.paths[1]);
	peers[0] = s.addr;
	ASSERT_EQ(0, dfg_gs_open(&f, p.paths[0], &gerr));
	ASSERT_EQ(0, hub_kv_open(p.paths[0], DFG_HUB_LOAD_NO_REPLICA, peers, 1,
				 1000, &kv, &err));
	ASSERT_EQ(0, hub_kv_engine(kv, &o, &e));
	roots_of(&f, 0, roots);
	len = dfg_hub_sample(e, 0, roots, ROOTS, a, &off);
	ASSERT_LT(0, len);
	ASSERT_EQ(0, dfg_buf_free(a, off));
	/* The server goes: its connections are shut down. */
	srv_stop(_metadata, &s);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_EQ(-EHOSTUNREACH, dfg_hub_sample(e, 1, roots, ROOTS, a, &off));
	EXPECT_EQ(-EHOSTUNREACH, dfg_hub_sample(e, 2, roots, ROOTS, a, &off));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_GT(3.0, t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	dfg_hub_engine_free(e);
	hub_kv_close(kv);
	dfg_gs_close(&f);
	arena_free(a);
	rm_parts(&p);
}

TEST(client_death)
{
	struct dfg_hub_opts o = { .hops = 2, .fanout = { 8, 4 }, .seed = 2 };
	struct parts p;
	struct srv s = { 0 };
	struct dfg_hub_err err = { "" };
	struct dfg_hub_engine *e;
	struct dfg_arena *a = arena_new(_metadata);
	struct dfg_gs_err gerr;
	struct dfg_gs_file f;
	struct hub_kv *kv;
	const char *peers[1];
	__u64 roots[ROOTS], off;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct hub_kv_req q = { .magic = HUB_KV_MAGIC, .what = DFG_PF_ATTRS,
				.n = 1000 };
	int fd, i, len;

	make_parts(_metadata, &p, "cdeath", 10, 7, 2);
	srv_start(_metadata, &s, p.paths[1]);
	peers[0] = s.addr;
	/* Half requests, and a garbage one, from clients that then die. */
	for (i = 0; i < 3; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		ASSERT_LE(0, fd);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sa.sin_port = htons(hub_kv_server_port(s.s));
		ASSERT_EQ(0, connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
		if (i == 2)
			q.magic = 0x12345678;
		ASSERT_EQ((ssize_t)sizeof(q), write(fd, &q, sizeof(q)));
		ASSERT_EQ(16, write(fd, "0123456789abcdef", 16));
		close(fd);
	}
	ASSERT_EQ(0, dfg_gs_open(&f, p.paths[0], &gerr));
	ASSERT_EQ(0, hub_kv_open(p.paths[0], DFG_HUB_LOAD_NO_REPLICA, peers, 1,
				 0, &kv, &err));
	ASSERT_EQ(0, hub_kv_engine(kv, &o, &e));
	roots_of(&f, 0, roots);
	len = dfg_hub_sample(e, 0, roots, ROOTS, a, &off);
	EXPECT_LT(0, len);
	EXPECT_EQ(0, dfg_buf_free(a, off));
	dfg_hub_engine_free(e);
	hub_kv_close(kv);
	srv_stop(_metadata, &s);
	dfg_gs_close(&f);
	arena_free(a);
	rm_parts(&p);
}

TEST(bad_request)
{
	struct parts p;
	struct srv s = { 0 };
	struct dfg_hub_err err = { "" };
	struct dfg_hub_opts o = { .hops = 2, .fanout = { 8, 4 }, .seed = 2 };
	struct dfg_hub_engine *e;
	struct dfg_arena *a = arena_new(_metadata);
	struct hub_kv *kv;
	struct dfg_gs_err gerr;
	struct dfg_gs_file f;
	const char *peers[1];
	__u64 roots[2], off;
	struct hub_kv_req q = { .magic = HUB_KV_MAGIC, .what = DFG_PF_NBRS,
				.n = 1 };
	struct hub_kv_rep rep;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	uint64_t id = 0;
	int fd;

	make_parts(_metadata, &p, "breq", 9, 8, 2);
	srv_start(_metadata, &s, p.paths[1]);
	peers[0] = s.addr;
	ASSERT_EQ(0, dfg_gs_open(&f, p.paths[0], &gerr));
	ASSERT_EQ(0, hub_kv_open(p.paths[0], 0, peers, 1, 0, &kv, &err));
	ASSERT_EQ(0, hub_kv_engine(kv, &o, &e));
	roots[0] = f.hdr->node_base;
	roots[1] = f.hdr->nodes_global;	/* one past the end */
	EXPECT_EQ(-ERANGE, dfg_hub_sample(e, 0, roots, 2, a, &off));
	EXPECT_EQ(f.hdr->nodes_global, dfg_hub_engine_nodes(e));
	/* The server refuses a node it does not own, and keeps serving. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, fd);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(hub_kv_server_port(s.s));
	ASSERT_EQ(0, connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
	id = f.hdr->node_base;		/* partition 0's, not the server's */
	ASSERT_EQ((ssize_t)sizeof(q), write(fd, &q, sizeof(q)));
	ASSERT_EQ(8, write(fd, &id, 8));
	ASSERT_EQ((ssize_t)sizeof(rep), read(fd, &rep, sizeof(rep)));
	EXPECT_EQ(HUB_KV_MAGIC, rep.magic);
	EXPECT_EQ(-EINVAL, rep.status);
	close(fd);
	roots[1] = f.hdr->node_base + 1;
	EXPECT_LT(0, dfg_hub_sample(e, 0, roots, 2, a, &off));
	dfg_hub_engine_free(e);
	hub_kv_close(kv);
	srv_stop(_metadata, &s);
	dfg_gs_close(&f);
	arena_free(a);
	rm_parts(&p);
}

TEST_HARNESS_MAIN
