/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * libdfg hub/: the baseline of patent 004's benchmark, a plain user-space
 * key-value store over TCP as DistDGL runs one (internal; dfg(1) and the
 * tests link libdfg.a).
 *
 * The owner of a partition runs a server (hub_kv_server_*) that answers
 * requests for its own nodes' neighbour lists or attributes. A sampling
 * machine opens its own partition file and connects to every other
 * partition's server (hub_kv_open); hub_kv_engine() is then an access
 * engine whose remote reads are requests to those servers: one request per
 * owner per fetch (the pipeline fetches once per hop, and once for the
 * attributes), sent to every owner before any reply is read, with
 * TCP_NODELAY. There is no cache: what DistDGL's KVClient pulls it pulls
 * again for the next mini-batch, and rule R3 (which fills a machine's
 * cache) has nothing to fill and brings nothing.
 *
 * The sampled mini-batches are the same bytes as the module's and as an
 * engine over the files (the engine decides what to read; only where the
 * bytes come from changes).
 *
 * Wire format (host byte order: both ends are one build on one kind of
 * machine; the handshake's magic catches a mismatch): a request is struct
 * hub_kv_req and @n __u64 IDs; the reply is struct hub_kv_rep, then @n
 * __u32 lengths, padded to 8 bytes, then the entries' bytes one after the
 * other. A request with @n == 0 and @what == 0 is the handshake, answered
 * by struct hub_kv_hello.
 */
#ifndef _DFG_HUB_KV_H
#define _DFG_HUB_KV_H

#include <stdint.h>

#include <dfg/hub.h>

#define HUB_KV_PORT	7469
#define HUB_KV_MAGIC	0x564b4644U	/* "DFKV" */
#define HUB_KV_NR_MAX	(1U << 24)	/* IDs in one request */

struct hub_kv_req {
	uint32_t	magic;
	uint32_t	what;		/* DFG_PF_NBRS or DFG_PF_ATTRS; 0 hello */
	uint32_t	n;
	uint32_t	pad;
};

struct hub_kv_rep {
	uint32_t	magic;
	int32_t		status;		/* 0 or -errno (then nothing follows) */
	uint32_t	n;
	uint32_t	pad;
	uint64_t	data_bytes;	/* after the lengths */
};

struct hub_kv_hello {
	uint32_t	magic;
	uint32_t	feat_bytes;
	uint64_t	node_first, node_count, part_set;
};

/* A server of one partition file (own nodes only, no replica). */
struct hub_kv_server;

/*
 * Loads @path, binds @addr (NULL: any) port @port (0: an ephemeral one,
 * see hub_kv_server_port) and listens. Returns 0 or -errno with a reason.
 */
int hub_kv_server_new(const char *path, const char *addr, unsigned int port,
		      struct hub_kv_server **out, struct dfg_hub_err *err);
unsigned int hub_kv_server_port(const struct hub_kv_server *s);
/*
 * Serves until hub_kv_server_stop() (from another thread or a signal
 * handler): one thread per connection. Returns 0 or -errno.
 */
int hub_kv_server_run(struct hub_kv_server *s);
void hub_kv_server_stop(struct hub_kv_server *s);
/* Frees @s once run() returned (or never ran). */
void hub_kv_server_free(struct hub_kv_server *s);

/*
 * A sampling machine's side: its partition and a connection per peer.
 * Not locked: one thread (one engine) at a time.
 */
struct hub_kv;

/*
 * Opens partition file @path (DFG_HUB_LOAD_* @flags: its replica or not)
 * and connects to @npeers servers "ADDR[:PORT]" (IPv4, or [IPv6]:PORT),
 * which together must serve every other partition of the same
 * partitioning. @timeout_ms (0: 5000) bounds connecting (retried until
 * then: a server may still be starting) and every reply. Returns 0 or
 * -errno with a reason: -EXDEV (a server of another graph or
 * partitioning, a partition twice or missing), -ECONNREFUSED,
 * -ETIMEDOUT, the file's errors.
 */
int hub_kv_open(const char *path, unsigned int flags,
		const char *const *peers, unsigned int npeers,
		unsigned int timeout_ms, struct hub_kv **out,
		struct dfg_hub_err *err);
/*
 * An engine reading remote nodes through @kv (which must outlive it).
 * Its errors: those of dfg_hub_engine_new(), and per batch -EHOSTUNREACH
 * (a server closed, timed out or answered garbage: the connection is then
 * dead and every later remote read fails the same way).
 */
int hub_kv_engine(struct hub_kv *kv, const struct dfg_hub_opts *opts,
		  struct dfg_hub_engine **out);
/* Round trips and bytes received so far. */
void hub_kv_counts(const struct hub_kv *kv, uint64_t *requests,
		   uint64_t *bytes);
void hub_kv_close(struct hub_kv *kv);

/* ---- the engine's seam (engine.c) ---- */

struct hub_view;

/*
 * A backend for an engine's remote reads: @fetch reads @what of the @n
 * remote @ids and hands entry i to @put(@ctx, i, bytes, len) (any order);
 * returns 0 or -errno (put's errors passed on).
 */
struct hub_fetch_ops {
	int (*fetch)(void *arg, const uint64_t *ids, size_t n,
		     unsigned int what,
		     int (*put)(void *ctx, uint32_t i, const void *p,
				uint32_t len),
		     void *ctx);
};

/*
 * An engine over the view @own (kept; must outlive the engine) whose
 * remote reads go to @ops (IDs below @id_end). No cache: R3 brings
 * nothing.
 */
int hub_engine_ext(const struct hub_view *own, uint64_t id_end,
		   const struct hub_fetch_ops *ops, void *arg,
		   const struct dfg_hub_opts *opts,
		   struct dfg_hub_engine **out);

#endif /* _DFG_HUB_KV_H */
