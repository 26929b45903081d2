// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * The TCP key-value baseline of patent 004's benchmark (hub_kv.h): what a
 * DistDGL-style store does, a server per partition answering batched
 * requests for its nodes' neighbour lists and attributes, and a client the
 * access engine reads remote nodes through.
 *
 * Efficiency, so that the baseline is not starved: TCP_NODELAY both ends;
 * one request per owner per engine fetch, sent to every owner before the
 * first reply is read; a reply is built in one buffer and written with one
 * send (lengths and bytes together), read with as few recv() calls as the
 * kernel allows; buffers are kept across requests.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "hub_impl.h"
#include "hub_kv.h"

/* ---- both ends ---- */

static int io_all(int fd, void *buf, size_t len, bool out)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t r = out ? send(fd, p, len, MSG_NOSIGNAL) :
				  recv(fd, p, len, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (!r)
			return -ECONNRESET;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* Both iovecs, whole (one sendmsg but for a full socket buffer). */
static int sendv_all(int fd, struct iovec *iov, int cnt)
{
	while (cnt) {
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = cnt };
		ssize_t w = sendmsg(fd, &mh, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		while (cnt && (size_t)w >= iov->iov_len) {
			w -= iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt) {
			iov->iov_base = (uint8_t *)iov->iov_base + w;
			iov->iov_len -= w;
		}
	}
	return 0;
}

static int grow(uint8_t **buf, size_t *cap, size_t len)
{
	uint8_t *p;
	size_t c = *cap ? *cap : 4096;

	if (len <= *cap)
		return 0;
	while (c < len)
		c *= 2;
	p = realloc(*buf, c);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = c;
	return 0;
}

static void nodelay(int fd)
{
	int one = 1;

	/* A latency baseline: no Nagle delay on small requests. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* "ADDR[:PORT]" / "[ADDR6]:PORT" into a socket address. */
static int parse_addr(const char *s, unsigned int defport,
		      struct sockaddr_storage *sa, socklen_t *len)
{
	char host[64];
	const char *colon = strrchr(s, ':'), *end = s + strlen(s);
	unsigned long port = defport;
	struct sockaddr_in *a4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;
	char *e;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb)
			return -EINVAL;
		s++;
		end = rb;
		colon = rb[1] == ':' ? rb + 1 : NULL;
	} else if (colon && strchr(s, ':') != colon) {
		colon = NULL;
	} else if (colon) {
		end = colon;
	}
	if (end - s <= 0 || (size_t)(end - s) >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, end - s);
	host[end - s] = 0;
	if (colon) {
		errno = 0;
		port = strtoul(colon + 1, &e, 10);
		if (errno || *e || e == colon + 1 || !port || port > 65535)
			return -EINVAL;
	}
	memset(sa, 0, sizeof(*sa));
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		*len = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a6);
		return 0;
	}
	return -EINVAL;
}

/* The image and view of a partition file (@flags DFG_HUB_LOAD_*). */
static int load_view(const char *path, unsigned int flags,
		     struct dfg_gs_file *f, void **img, struct hub_view *v,
		     struct dfg_hub_err *err)
{
	struct dfg_gs_err ge;
	size_t len;
	int ret;

	ret = dfg_gs_open(f, path, &ge);
	if (ret)
		return hub_gs_err(err, ret, &ge);
	ret = hub_image_of(f, flags, img, &len, err);
	if (ret) {
		dfg_gs_close(f);
		return ret;
	}
	ret = hub_view_init(v, *img, len);
	if (ret) {
		free(*img);
		dfg_gs_close(f);
		return hub_fail(err, ret, "%s: bad image", path);
	}
	return 0;
}

/* ---- the server ---- */

struct conn {
	struct hub_kv_server	*s;
	int			fd;
	pthread_t		thr;
	bool			done;
	struct conn		*next;
};

struct hub_kv_server {
	struct dfg_gs_file	f;
	void			*img;
	struct hub_view		v;
	int			lfd;
	int			stop[2];	/* a pipe: stop() writes */
	unsigned int		port;
	pthread_mutex_t		lock;		/* conns, and each done */
	struct conn		*conns;
};

int hub_kv_server_new(const char *path, const char *addr, unsigned int port,
		      struct hub_kv_server **out, struct dfg_hub_err *err)
{
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(struct sockaddr_in);
	struct hub_kv_server *s;
	int one = 1, ret;
	char a[80];

	s = calloc(1, sizeof(*s));
	if (!s)
		return hub_fail(err, -ENOMEM, "no memory");
	s->lfd = -1;
	s->stop[0] = s->stop[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	/* The owner serves its own nodes only: the replica is not needed. */
	ret = load_view(path, DFG_HUB_LOAD_NO_REPLICA, &s->f, &s->img, &s->v,
			err);
	if (ret) {
		free(s);
		return ret;
	}
	memset(&sa, 0, sizeof(sa));
	if (addr) {
		snprintf(a, sizeof(a), strchr(addr, ':') ? "[%s]:%u" : "%s:%u",
			 addr, port ? port : 1);
		if (parse_addr(a, 0, &sa, &sl)) {
			ret = hub_fail(err, -EINVAL, "bad address '%s'", addr);
			goto fail;
		}
	} else {
		((struct sockaddr_in *)&sa)->sin_family = AF_INET;
	}
	((struct sockaddr_in *)&sa)->sin_port = htons((uint16_t)port);
	if (sa.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&sa)->sin6_port = htons((uint16_t)port);
	s->lfd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->lfd < 0 || pipe2(s->stop, O_CLOEXEC)) {
		ret = hub_fail(err, -errno, "socket: %s", strerror(errno));
		goto fail;
	}
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->lfd, (struct sockaddr *)&sa, sl) ||
	    listen(s->lfd, 64)) {
		ret = hub_fail(err, -errno, "port %u: %s", port,
			       strerror(errno));
		goto fail;
	}
	sl = sizeof(sa);
	getsockname(s->lfd, (struct sockaddr *)&sa, &sl);
	s->port = ntohs(sa.ss_family == AF_INET6 ?
			((struct sockaddr_in6 *)&sa)->sin6_port :
			((struct sockaddr_in *)&sa)->sin_port);
	*out = s;
	return 0;
fail:
	hub_kv_server_free(s);
	return ret;
}

unsigned int hub_kv_server_port(const struct hub_kv_server *s)
{
	return s->port;
}

/* The reply to one request into @buf (status set on bad input). */
static int build_reply(const struct hub_view *v, uint32_t what,
		       const uint64_t *ids, uint32_t n, uint8_t **buf,
		       size_t *cap, size_t *len)
{
	struct hub_kv_rep *r;
	size_t head = sizeof(*r) + (((size_t)n * 4 + 7) & ~(size_t)7), at;
	struct dfg_hub_ref ref;
	uint32_t i;
	int ret;

	ret = grow(buf, cap, head);
	if (ret)
		return ret;
	at = head;
	for (i = 0; i < n; i++) {
		if (!hub_view_own(v, ids[i]) ||
		    hub_view_ref(v, ids[i], what, &ref)) {
			ret = -EINVAL;
			break;
		}
		ret = grow(buf, cap, at + ref.len);
		if (ret)
			break;
		((uint32_t *)(*buf + sizeof(*r)))[i] = ref.len;
		memcpy(*buf + at, ref.data, ref.len);
		at += ref.len;
	}
	r = (struct hub_kv_rep *)*buf;
	memset(r, 0, sizeof(*r));
	r->magic = HUB_KV_MAGIC;
	if (ret) {
		r->status = ret;
		*len = sizeof(*r);
		return 0;
	}
	memset(*buf + sizeof(*r) + (size_t)n * 4, 0,
	       head - sizeof(*r) - (size_t)n * 4);
	r->n = n;
	r->data_bytes = at - head;
	*len = at;
	return 0;
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	const struct hub_view *v = &c->s->v;
	uint8_t *out = NULL, *in = NULL;
	size_t ocap = 0, icap = 0, len;
	struct hub_kv_req q;

	for (;;) {
		if (io_all(c->fd, &q, sizeof(q), false) ||
		    q.magic != HUB_KV_MAGIC || q.n > HUB_KV_NR_MAX)
			break;
		if (!q.what && !q.n) {
			struct hub_kv_hello h = {
				.magic = HUB_KV_MAGIC,
				.feat_bytes = v->h->feat_bytes,
				.node_first = v->h->node_first,
				.node_count = v->h->node_count,
				.part_set = v->h->part_set,
			};

			if (io_all(c->fd, &h, sizeof(h), true))
				break;
			continue;
		}
		if ((q.what != DFG_PF_NBRS && q.what != DFG_PF_ATTRS) ||
		    grow(&in, &icap, (size_t)q.n * 8 + 8) ||
		    io_all(c->fd, in, (size_t)q.n * 8, false) ||
		    build_reply(v, q.what, (const uint64_t *)in, q.n, &out,
				&ocap, &len) ||
		    io_all(c->fd, out, len, true))
			break;
	}
	free(in);
	free(out);
	pthread_mutex_lock(&c->s->lock);
	c->done = true;
	pthread_mutex_unlock(&c->s->lock);
	return NULL;
}

/* Joins and frees finished connections (all, with @all: after shutdown). */
static void reap(struct hub_kv_server *s, bool all)
{
	struct conn **pp = &s->conns, *c;

	for (;;) {
		bool done;

		pthread_mutex_lock(&s->lock);
		c = *pp;
		done = c && c->done;
		pthread_mutex_unlock(&s->lock);
		if (!c)
			return;
		if (!done && !all) {
			pp = &c->next;
			continue;
		}
		if (all)
			shutdown(c->fd, SHUT_RDWR);
		pthread_join(c->thr, NULL);
		close(c->fd);
		*pp = c->next;
		free(c);
	}
}

int hub_kv_server_run(struct hub_kv_server *s)
{
	struct pollfd p[2] = {
		{ .fd = s->lfd, .events = POLLIN },
		{ .fd = s->stop[0], .events = POLLIN },
	};
	int ret = 0;

	for (;;) {
		struct conn *c;
		int fd;

		if (poll(p, 2, 1000) < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		reap(s, false);
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;	/* the client went away first */
		nodelay(fd);
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->s = s;
		c->fd = fd;
		if (pthread_create(&c->thr, NULL, conn_main, c)) {
			close(fd);
			free(c);
			continue;
		}
		/* Only this thread links and unlinks: no lock for the list. */
		c->next = s->conns;
		s->conns = c;
	}
	reap(s, true);
	return ret;
}

void hub_kv_server_stop(struct hub_kv_server *s)
{
	/* write(2) is async-signal-safe: a handler may call this. */
	if (write(s->stop[1], "x", 1) < 0)
		return;
}

void hub_kv_server_free(struct hub_kv_server *s)
{
	if (!s)
		return;
	reap(s, true);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->stop[0] >= 0) {
		close(s->stop[0]);
		close(s->stop[1]);
	}
	if (s->img) {
		hub_view_fini(&s->v);
		free(s->img);
		dfg_gs_close(&s->f);
	}
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* ---- the client ---- */

struct hub_kv {
	struct dfg_gs_file	f;
	void			*img;
	struct hub_view		v;
	uint32_t		k;
	int			*fd;		/* k; -1 for the own part */
	bool			dead;
	uint64_t		requests, bytes;
	/* Per fetch: each owner's IDs and their indices in the request. */
	uint64_t		**ids;
	uint32_t		**idx;
	size_t			*n, *cap;
	uint8_t			*buf;
	size_t			buf_cap;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Connects to @peer (retrying until @tmo ms), handshakes; fd or -errno. */
static int kv_connect(const char *peer, unsigned int tmo,
		      struct hub_kv_hello *h, struct dfg_hub_err *err)
{
	struct sockaddr_storage sa;
	struct timeval tv = { tmo / 1000, (tmo % 1000) * 1000 };
	struct hub_kv_req q = { .magic = HUB_KV_MAGIC };
	double until = now_ms() + tmo;
	socklen_t sl;
	int fd, ret;

	if (parse_addr(peer, HUB_KV_PORT, &sa, &sl))
		return hub_fail(err, -EINVAL, "bad peer address '%s'", peer);
	for (;;) {
		fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return hub_fail(err, -errno, "socket: %s",
					strerror(errno));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (!connect(fd, (struct sockaddr *)&sa, sl))
			break;
		ret = -errno;
		close(fd);
		if (now_ms() >= until || (ret != -ECONNREFUSED &&
					  ret != -ETIMEDOUT && ret != -EINTR))
			return hub_fail(err, ret, "%s: %s", peer,
					strerror(-ret));
		usleep(50000);
	}
	nodelay(fd);
	ret = io_all(fd, &q, sizeof(q), true);
	if (!ret)
		ret = io_all(fd, h, sizeof(*h), false);
	if (!ret && h->magic != HUB_KV_MAGIC)
		ret = -EPROTO;
	if (ret) {
		close(fd);
		return hub_fail(err, ret, "%s: no handshake: %s", peer,
				strerror(-ret));
	}
	return fd;
}

int hub_kv_open(const char *path, unsigned int flags,
		const char *const *peers, unsigned int npeers,
		unsigned int timeout_ms, struct hub_kv **out,
		struct dfg_hub_err *err)
{
	const struct dfg_gs_hdr *gh;
	struct hub_kv *kv;
	unsigned int i, p;
	int ret;

	if (!path || (npeers && !peers) || !out || (flags & ~DFG_HUB_LOAD_ALL))
		return hub_fail(err, -EINVAL, "invalid argument");
	kv = calloc(1, sizeof(*kv));
	if (!kv)
		return hub_fail(err, -ENOMEM, "no memory");
	ret = load_view(path, flags, &kv->f, &kv->img, &kv->v, err);
	if (ret) {
		free(kv);
		return ret;
	}
	gh = kv->f.hdr;
	kv->k = gh->part_count ? gh->part_count : 1;
	kv->fd = malloc(kv->k * sizeof(*kv->fd));
	kv->ids = calloc(kv->k, sizeof(*kv->ids));
	kv->idx = calloc(kv->k, sizeof(*kv->idx));
	kv->n = calloc(kv->k, sizeof(*kv->n));
	kv->cap = calloc(kv->k, sizeof(*kv->cap));
	if (!kv->fd || !kv->ids || !kv->idx || !kv->n || !kv->cap) {
		ret = hub_fail(err, -ENOMEM, "no memory");
		goto fail;
	}
	for (p = 0; p < kv->k; p++)
		kv->fd[p] = -1;
	if (kv->k > 1 && !kv->f.part_base) {
		ret = hub_fail(err, -EXDEV, "%s: no partition table", path);
		goto fail;
	}
	timeout_ms = timeout_ms ? timeout_ms : 5000;
	for (i = 0; i < npeers; i++) {
		struct hub_kv_hello h;
		int fd = kv_connect(peers[i], timeout_ms, &h, err);

		if (fd < 0) {
			ret = fd;
			goto fail;
		}
		for (p = 0; p < kv->k; p++)
			if (kv->f.part_base[p] == h.node_first &&
			    kv->f.part_base[p + 1] - h.node_first ==
			    h.node_count)
				break;
		if (p == kv->k || p == gh->part_index ||
		    h.part_set != kv->v.h->part_set ||
		    h.feat_bytes != kv->v.h->feat_bytes || kv->fd[p] >= 0) {
			close(fd);
			ret = hub_fail(err, -EXDEV,
				       "%s serves nodes %llu..%llu of another graph or partitioning than %s, or a partition twice",
				       peers[i],
				       (unsigned long long)h.node_first,
				       (unsigned long long)(h.node_first +
							    h.node_count - 1),
				       path);
			goto fail;
		}
		kv->fd[p] = fd;
	}
	for (p = 0; p < kv->k; p++)
		if (p != gh->part_index && kv->fd[p] < 0) {
			ret = hub_fail(err, -EXDEV,
				       "no server given for partition %u of %s",
				       p, path);
			goto fail;
		}
	*out = kv;
	return 0;
fail:
	hub_kv_close(kv);
	return ret;
}

void hub_kv_counts(const struct hub_kv *kv, uint64_t *requests,
		   uint64_t *bytes)
{
	*requests = kv->requests;
	*bytes = kv->bytes;
}

void hub_kv_close(struct hub_kv *kv)
{
	uint32_t p;

	if (!kv)
		return;
	for (p = 0; p < kv->k; p++) {
		if (kv->fd && kv->fd[p] >= 0)
			close(kv->fd[p]);
		if (kv->ids)
			free(kv->ids[p]);
		if (kv->idx)
			free(kv->idx[p]);
	}
	free(kv->fd);
	free(kv->ids);
	free(kv->idx);
	free(kv->n);
	free(kv->cap);
	free(kv->buf);
	if (kv->img) {
		hub_view_fini(&kv->v);
		free(kv->img);
		dfg_gs_close(&kv->f);
	}
	free(kv);
}

/* Appends (@id, @i) to owner @p's list. */
static int owner_push(struct hub_kv *kv, uint32_t p, uint64_t id, uint32_t i)
{
	if (kv->n[p] == kv->cap[p]) {
		size_t c = kv->cap[p] ? kv->cap[p] * 2 : 256;
		uint64_t *a = realloc(kv->ids[p], c * 8);
		uint32_t *b;

		if (!a)
			return -ENOMEM;
		kv->ids[p] = a;
		b = realloc(kv->idx[p], c * 4);
		if (!b)
			return -ENOMEM;
		kv->idx[p] = b;
		kv->cap[p] = c;
	}
	kv->ids[p][kv->n[p]] = id;
	kv->idx[p][kv->n[p]++] = i;
	return 0;
}

/* Owner @p's reply: every entry to @put. */
static int recv_reply(struct hub_kv *kv, uint32_t p,
		      int (*put)(void *, uint32_t, const void *, uint32_t),
		      void *ctx)
{
	size_t n = kv->n[p], head = ((n * 4 + 7) & ~(size_t)7), at, i;
	struct hub_kv_rep r;
	int ret;

	ret = io_all(kv->fd[p], &r, sizeof(r), false);
	if (ret)
		return -EHOSTUNREACH;
	if (r.magic != HUB_KV_MAGIC)
		return -EHOSTUNREACH;
	if (r.status)
		return r.status == -EINVAL ? -ERANGE : -EPROTO;
	if (r.n != n || r.data_bytes > (1ULL << 40))
		return -EHOSTUNREACH;
	ret = grow(&kv->buf, &kv->buf_cap, head + r.data_bytes);
	if (ret)
		return ret;
	if (io_all(kv->fd[p], kv->buf, head + r.data_bytes, false))
		return -EHOSTUNREACH;
	kv->bytes += sizeof(r) + head + r.data_bytes;
	for (i = 0, at = head; i < n; i++) {
		uint32_t len = ((uint32_t *)kv->buf)[i];

		if (len > r.data_bytes - (at - head))
			return -EHOSTUNREACH;
		ret = put(ctx, kv->idx[p][i], kv->buf + at, len);
		if (ret)
			return ret;
		at += len;
	}
	return 0;
}

static int kv_fetch(void *arg, const uint64_t *ids, size_t n,
		    unsigned int what,
		    int (*put)(void *, uint32_t, const void *, uint32_t),
		    void *ctx)
{
	struct hub_kv *kv = arg;
	uint32_t p, own = kv->f.hdr->part_index;
	size_t i;
	int ret = 0;

	if (kv->dead)
		return -EHOSTUNREACH;
	for (p = 0; p < kv->k; p++)
		kv->n[p] = 0;
	for (i = 0; i < n; i++) {
		p = kv->k > 1 ? dfg_gs_owner(kv->f.part_base, kv->k, ids[i]) : 0;
		if (p == own || ids[i] >= kv->f.hdr->nodes_global)
			return -ERANGE;
		ret = owner_push(kv, p, ids[i], (uint32_t)i);
		if (ret)
			return ret;
	}
	/* Every owner's request out before any reply is read. */
	for (p = 0; p < kv->k; p++) {
		struct hub_kv_req q = {
			.magic = HUB_KV_MAGIC, .what = what,
			.n = (uint32_t)kv->n[p],
		};
		struct iovec iov[2] = {
			{ &q, sizeof(q) },
			{ kv->ids[p], kv->n[p] * 8 },
		};

		if (!kv->n[p])
			continue;
		if (kv->n[p] > HUB_KV_NR_MAX)
			return -E2BIG;
		if (sendv_all(kv->fd[p], iov, 2)) {
			kv->dead = true;
			return -EHOSTUNREACH;
		}
		kv->requests++;
	}
	for (p = 0; p < kv->k; p++) {
		if (!kv->n[p])
			continue;
		ret = recv_reply(kv, p, put, ctx);
		if (ret == -EHOSTUNREACH || ret == -EPROTO) {
			kv->dead = true;
			return ret;
		}
		if (ret)
			break;
	}
	/* A reply left unread would answer the next request: drop them. */
	if (ret)
		kv->dead = true;
	return ret;
}

static const struct hub_fetch_ops kv_ops = { .fetch = kv_fetch };

int hub_kv_engine(struct hub_kv *kv, const struct dfg_hub_opts *opts,
		  struct dfg_hub_engine **out)
{
	if (!kv)
		return -EINVAL;
	return hub_engine_ext(&kv->v, kv->f.hdr->nodes_global, &kv_ops, kv,
			      opts, out);
}
