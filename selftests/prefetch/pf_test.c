// SPDX-License-Identifier: GPL-2.0
/*
 * pf_test - the hub-node prefetch across the two-node rig (kmod/prefetch.c,
 * kmod/rdma/dfg_rdma.c), driven by selftests/prefetch/node0.sh.
 *
 *   pf_test load I	load partition I of the test graph (PART_LOAD)
 *   pf_test run STEP	one group of checks on node0, TAP lines out;
 *			PF_PEER names node1's address
 *   pf_test run hostile MAXCONNS STALL_MS
 *			a bad client against dfg_tcp.ko on node1
 *   pf_test run refused	PEER_ADD's connection errors over dfg_tcp.ko, with
 *			node0's own module serving nothing
 *   pf_test run midread FIRST
 *			a peer served by a fake dfg_tcp.ko on node0 that
 *			dies in the middle of an answer
 *
 * The test graph is a function of the node ID (pf_deg(), pf_nbr(),
 * pf_feat()), so node0 checks node1's bytes against what node1 loaded
 * without reading node1's image. Two partitions of PF_N nodes; each holds
 * replicas of the other's nodes with ID % 7 == 0.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "dfg_sys.h"
#include "dfg_tcp_wire.h"	/* kmod/tcp/: the transport's protocol */
#include "pf_tap.h"

#define PF_N		3000ULL
#define PF_K		2
#define PF_FEAT		24
#define PF_DEG_MAX	8
/* The set both nodes' images belong to (dfg_part_hdr.part_set). */
#define PF_SET		0x5e7ULL

static __u64 pf_first(int part)
{
	return part * (PF_N / PF_K);
}

static __u32 pf_deg(__u64 v)
{
	return (__u32)((v * 2654435761ULL) >> 7) % (PF_DEG_MAX + 1);
}

static __u64 pf_nbr(__u64 v, __u32 j)
{
	return (v * 31 + j * 977 + 7) % PF_N;
}

static __u8 pf_feat(__u64 v, unsigned int b)
{
	return (__u8)(v * 131 + b * 7);
}

static bool pf_replicated(int part, __u64 v)
{
	return v % 7 == 0 &&
	       (v < pf_first(part) || v >= pf_first(part) + PF_N / PF_K);
}

/* Rows, neighbours and attributes of @n nodes @ids at @img + offsets. */
static size_t pf_sections(void *img, const __u64 *ids, __u64 n, __u64 *row,
			  __u64 *col, __u64 *feat)
{
	size_t off = *row;
	__u64 i, c = 0;
	__u32 j;

	for (i = 0; i < n; i++)
		c += pf_deg(ids[i]);
	*col = off + (n + 1) * 8;
	*feat = *col + c * 8;
	if (img) {
		__u64 *r = img + *row, *cl = img + *col;
		__u8 *f = img + *feat;

		c = 0;
		for (i = 0; i < n; i++) {
			r[i] = c;
			for (j = 0; j < pf_deg(ids[i]); j++)
				cl[c++] = pf_nbr(ids[i], j);
			for (j = 0; j < PF_FEAT; j++)
				f[i * PF_FEAT + j] = pf_feat(ids[i], j);
		}
		r[n] = c;
	}
	return *feat + n * PF_FEAT;
}

/* The image of partition @part; *len gets its size. */
static void *pf_image(int part, size_t *len)
{
	__u64 n = PF_N / PF_K, first = pf_first(part), nrep = 0, i;
	__u64 *own = calloc(n, 8), *rep = calloc(PF_N, 8);
	struct dfg_part_hdr h = {
		.magic = DFG_PART_MAGIC, .version = DFG_PART_VERSION,
		.node_first = first, .node_count = n, .feat_bytes = PF_FEAT,
		.part_set = PF_SET,
	};
	void *img = NULL;
	int pass;

	for (i = 0; i < n; i++)
		own[i] = first + i;
	for (i = 0; i < PF_N; i++)
		if (pf_replicated(part, i))
			rep[nrep++] = i;
	h.rep_count = nrep;
	/* Pass 0 sizes the sections, pass 1 writes them. */
	for (pass = 0; pass < 2; pass++) {
		h.row_off = sizeof(h);
		*len = pf_sections(img, own, n, &h.row_off, &h.col_off,
				   &h.feat_off);
		h.col_count = (h.feat_off - h.col_off) / 8;
		h.rep_ids_off = *len;
		h.rep_row_off = h.rep_ids_off + nrep * 8;
		*len = pf_sections(img, rep, nrep, &h.rep_row_off,
				   &h.rep_col_off, &h.rep_feat_off);
		h.rep_col_count = (h.rep_feat_off - h.rep_col_off) / 8;
		h.image_bytes = *len;
		if (!img)
			img = calloc(1, *len);
	}
	memcpy(img, &h, sizeof(h));
	memcpy(img + h.rep_ids_off, rep, nrep * 8);
	free(own);
	free(rep);
	return img;
}

static int pf_load(int fd, void *img, size_t len)
{
	struct dfg_part_load a = { .addr = (uintptr_t)img, .len = len };

	return sys_dfg_ioctl(fd, DFG_IOC_PART_LOAD, &a);
}

static __u64 pf_stat(const char *name)
{
	char path[64];
	__u64 v = ~0ULL;

	snprintf(path, sizeof(path), "prefetch/%s", name);
	dfg_sysfs_read_u64(path, &v);
	return v;
}

static int pf_peer_add(int fd, struct dfg_peer_add *a)
{
	const char *peer = getenv("PF_PEER");

	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	a->timeout_ms = 20000;
	if (!peer || inet_pton(AF_INET, peer, a->addr) != 1)
		return -EDESTADDRREQ;
	return sys_dfg_ioctl(fd, DFG_IOC_PEER_ADD, a);
}

struct pf_maps {
	const void *part;
	const struct dfg_pf_cache_hdr *cache;
};

static int pf_map(int fd, struct pf_maps *m)
{
	char buf[128];
	__u64 first, count, reps, bytes, cache;
	void *p;

	if (dfg_sysfs_read("prefetch/partition", buf, sizeof(buf)) ||
	    sscanf(buf, "%llu %llu %llu %llu", &first, &count, &reps,
		   &bytes) != 4 || dfg_sysfs_read_u64("prefetch/cache_bytes",
						      &cache))
		return -ENODATA;
	p = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, DFG_PF_MMAP_PART);
	if (p == MAP_FAILED)
		return -errno;
	m->part = p;
	p = mmap(NULL, DFG_PF_CACHE_DATA + cache, PROT_READ, MAP_SHARED, fd,
		 DFG_PF_MMAP_CACHE);
	if (p == MAP_FAILED)
		return -errno;
	m->cache = p;
	return 0;
}

/* The bytes of @l, copied to @buf; false if a cache copy may be torn. */
static bool pf_copy(const struct pf_maps *m, const struct dfg_pf_loc *l,
		    void *buf)
{
	const struct dfg_pf_cache_hdr *c = m->cache;

	if (l->where != DFG_PF_IN_CACHE) {
		memcpy(buf, m->part + l->pos, l->len);
		return true;
	}
	memcpy(buf, (const void *)c + DFG_PF_CACHE_DATA +
	       l->pos % c->data_bytes, l->len);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&c->tail, __ATOMIC_RELAXED) <= l->pos;
}

/* Is @l (entry @k of node @v) what node @v's owner holds? */
static bool pf_check_loc(const struct pf_maps *m, __u64 v, int k,
			 const struct dfg_pf_loc *l)
{
	__u8 buf[PF_DEG_MAX * 8 + PF_FEAT];
	__u64 *nb = (__u64 *)buf;
	__u32 j;

	if (k == 0) {
		if (l->len != pf_deg(v) * 8)
			return false;
	} else if (l->len != PF_FEAT) {
		return false;
	}
	if (!pf_copy(m, l, buf))
		return false;
	for (j = 0; k == 0 && j < pf_deg(v); j++)
		if (nb[j] != pf_nbr(v, j))
			return false;
	for (j = 0; k == 1 && j < PF_FEAT; j++)
		if (buf[j] != pf_feat(v, j))
			return false;
	return true;
}

/*
 * Prefetch nodes [@first, @first + @n) over @path, both kinds; checks
 * every entry's bytes and place (@where, @hit: -1 for any; node0's
 * replicas must come from the replica whatever @where says). Returns the
 * command's result, *@ok whether every entry was right.
 */
static int pf_fetch(int fd, struct io_uring *ring, enum dfg_path path,
		    const struct pf_maps *m, __u64 first, __u32 n, int where,
		    int hit, bool *ok)
{
	__u64 *ids = calloc(n, 8);
	struct dfg_pf_loc *out = calloc(2 * n, sizeof(*out));
	struct dfg_prefetch a = {
		.ids = (uintptr_t)ids, .out = (uintptr_t)out, .nr = n,
		.what = DFG_PF_NBRS | DFG_PF_ATTRS,
	};
	__u32 i;
	int ret, k;

	for (i = 0; i < n; i++)
		ids[i] = first + i;
	ret = dfg_cmd_ex(path, fd, ring, DFG_IOC_PREFETCH, &a, sizeof(a),
			 NULL, 0);
	*ok = ret >= 0;
	for (i = 0; ret >= 0 && i < n; i++) {
		for (k = 0; k < 2; k++) {
			const struct dfg_pf_loc *l = &out[2 * i + k];
			bool rep = pf_replicated(0, first + i);
			int w = rep ? DFG_PF_IN_REPLICA : where;

			if ((w >= 0 && l->len && l->where != w) ||
			    (hit >= 0 && !rep && l->len && l->hit != hit) ||
			    !pf_check_loc(m, first + i, k, l)) {
				if (*ok)
					printf("# node %llu kind %d: where %u hit %u len %u pos %llu\n",
					       first + i, k, l->where, l->hit,
					       l->len, l->pos);
				*ok = false;
			}
		}
	}
	free(ids);
	free(out);
	return ret;
}

/*
 * Entries of node1's nodes [@first, @first + @n) that need a read (not
 * replicated on node0, not empty), and their bytes in *@bytes.
 */
static int pf_remote(__u64 first, __u32 n, __u64 *bytes)
{
	int c = 0;
	__u32 i;

	*bytes = 0;
	for (i = 0; i < n; i++) {
		if (pf_replicated(0, first + i))
			continue;
		c += 1 + !!pf_deg(first + i);
		*bytes += pf_deg(first + i) * 8 + PF_FEAT;
	}
	return c;
}

static int pf_prefetch_one(int fd, __u64 id, __u32 what, __u32 nr,
			   __u32 flags, void *out)
{
	__u64 ids[2] = { id, id };
	struct dfg_prefetch a = {
		.ids = (uintptr_t)ids, .out = (uintptr_t)out, .nr = nr,
		.what = what, .flags = flags,
	};

	return sys_dfg_ioctl(fd, DFG_IOC_PREFETCH, &a);
}

/* Step "setup": bad images, the peer, its errors. */
static void pf_step_setup(int fd)
{
	struct dfg_peer_add a;
	size_t len;
	void *img = pf_image(0, &len);
	struct dfg_part_hdr *h = img;
	__u64 *row = img + h->row_off;
	char buf[256];
	int ret;

	h->magic ^= 1;
	pf_tap(pf_load(fd, img, len) == -EINVAL, "bad magic: -EINVAL");
	h->magic ^= 1;
	row[1] += 1000;
	pf_tap(pf_load(fd, img, len) == -EINVAL, "rows not monotone: -EINVAL");
	row[1] -= 1000;
	pf_tap(pf_load(fd, img, len - 8) == -EINVAL,
	       "image shorter than its header says: -EINVAL");
	h->reserved[2] = 1;
	pf_tap(pf_load(fd, img, len) == -EINVAL, "reserved set: -EINVAL");
	h->reserved[2] = 0;

	/* An image of another set of partitions: node1 is no peer of it. */
	h->part_set = PF_SET + 1;
	ret = pf_load(fd, img, len);
	pf_tap(ret == 0, "partition 0 of another set loads (%d)", ret);
	ret = pf_peer_add(fd, &a);
	pf_tap(ret == -EXDEV, "PEER_ADD of a peer of another set: %d", ret);
	pf_tap(!dfg_sysfs_read("prefetch/peers", buf, sizeof(buf)) &&
	       !buf[0], "no peer after it: '%s'", buf);

	h->part_set = PF_SET;
	ret = pf_load(fd, img, len);
	pf_tap(ret == 0, "partition 0 loads (%d)", ret);

	ret = pf_peer_add(fd, &a);
	pf_tap(ret == 0 && a.node_first == pf_first(1) &&
	       a.node_count == PF_N / PF_K,
	       "PEER_ADD node1: %d, nodes %llu+%llu", ret, a.node_first,
	       a.node_count);
	pf_tap(!dfg_sysfs_read("prefetch/peers", buf, sizeof(buf)) &&
	       !strcmp(buf, "0 1500 1500 up"), "sysfs peers: '%s'", buf);
	ret = pf_peer_add(fd, &a);
	pf_tap(ret == -EEXIST, "PEER_ADD of the same range: %d", ret);
	a.family = AF_INET;
	a.reserved[0] = 1;
	pf_tap(sys_dfg_ioctl(fd, DFG_IOC_PEER_ADD, &a) == -EINVAL,
	       "PEER_ADD with reserved set: -EINVAL");

	/* With node1 connected, only images of its set load. */
	h->part_set = PF_SET + 1;
	ret = pf_load(fd, img, len);
	pf_tap(ret == -EXDEV, "PART_LOAD of another set with a peer: %d", ret);
	h->part_set = 0;
	ret = pf_load(fd, img, len);
	pf_tap(ret == 0, "PART_LOAD of an unknown set (%d)", ret);
	h->part_set = PF_SET;
	ret = pf_load(fd, img, len);
	pf_tap(ret == 0, "PART_LOAD of the same set (%d)", ret);
	free(img);
}

/* Step "fetch": remote misses then hits, local, replicas, bad input. */
static void pf_step_fetch(int fd, struct io_uring *ring,
			  const struct pf_maps *m)
{
	__u64 miss0 = pf_stat("misses"), hit0 = pf_stat("hits");
	__u64 bytes0 = pf_stat("bytes"), loc0 = pf_stat("local"), rep0;
	__u64 put0 = pf_stat("puts");
	struct dfg_pf_loc out[4];
	__u64 rep_bytes;
	int want = pf_remote(1500, 300, &rep_bytes), ret;
	__u64 t0 = dfg_now_ns();
	bool ok;

	ret = pf_fetch(fd, ring, DFG_PATH_IOCTL, m, 1500, 300,
		       DFG_PF_IN_CACHE, 0, &ok);
	/* An indication only (TCG, a loaded host): the transport's cost. */
	printf("# %d reads of node1 in one PREFETCH: %llu us\n", ret,
	       (dfg_now_ns() - t0) / 1000);
	pf_tap(ok && ret == want,
	       "ioctl: 300 of node1's nodes read (%d of %d), bytes right",
	       ret, want);
	pf_tap(pf_stat("misses") - miss0 == (__u64)want &&
	       pf_stat("bytes") - bytes0 == rep_bytes,
	       "misses +%llu (want %d), bytes +%llu (want %llu)",
	       pf_stat("misses") - miss0, want, pf_stat("bytes") - bytes0,
	       rep_bytes);
	pf_tap(pf_stat("inflight") == 0, "no read in flight after the CQE");
	/* An entry is put once its read completed; empty lists are none. */
	pf_tap(pf_stat("puts") - put0 == (__u64)ret,
	       "puts +%llu (want %d, the reads)", pf_stat("puts") - put0, ret);

	ret = pf_fetch(fd, ring, DFG_PATH_INLINE, m, 1500, 300,
		       DFG_PF_IN_CACHE, 1, &ok);
	pf_tap(ok && ret == 0, "io_uring again: all hits (%d reads)", ret);
	pf_tap(pf_stat("hits") - hit0 == (__u64)want, "hits +%llu (want %d)",
	       pf_stat("hits") - hit0, want);

	want = pf_remote(1800, 200, &rep_bytes);
	ret = pf_fetch(fd, ring, DFG_PATH_INDIRECT, m, 1800, 200,
		       DFG_PF_IN_CACHE, 0, &ok);
	pf_tap(ok && ret == want,
	       "io_uring indirect: 200 new nodes (%d reads of %d)", ret, want);

	ret = pf_fetch(fd, ring, DFG_PATH_IOCTL, m, 0, 200, DFG_PF_IN_PART,
		       -1, &ok);
	pf_tap(ok && ret == 0 && pf_stat("local") - loc0 == 400,
	       "own nodes from the partition, no read");
	/* Node 2002 is 7 * 286: node1's, replicated on node0. */
	rep0 = pf_stat("replica");
	ret = pf_fetch(fd, ring, DFG_PATH_IOCTL, m, 2002, 1, DFG_PF_IN_REPLICA,
		       -1, &ok);
	pf_tap(ok && ret == 0 && pf_stat("replica") - rep0 == 2,
	       "a replicated hub from the replica, no read");

	pf_tap(pf_prefetch_one(fd, PF_N, DFG_PF_ALL, 1, 0, out) == -EINVAL,
	       "node ID past the graph: -EINVAL");
	pf_tap(pf_prefetch_one(fd, 1, 0, 1, 0, out) == -EINVAL,
	       "what 0: -EINVAL");
	pf_tap(pf_prefetch_one(fd, 1, 4, 1, 0, out) == -EINVAL,
	       "unknown what bit: -EINVAL");
	pf_tap(pf_prefetch_one(fd, 1, DFG_PF_ALL, 0, 0, out) == -EINVAL,
	       "nr 0: -EINVAL");
	pf_tap(pf_prefetch_one(fd, 1, DFG_PF_ALL, DFG_PF_NR_MAX + 1, 0,
			       out) == -EINVAL, "nr past DFG_PF_NR_MAX: -EINVAL");
	pf_tap(pf_prefetch_one(fd, 1, DFG_PF_ALL, 1, 2, out) == -EINVAL,
	       "unknown flag: -EINVAL");
	pf_tap(pf_prefetch_one(fd, 2500, DFG_PF_ALL, 1, 0, NULL) == -EFAULT,
	       "bad out pointer: -EFAULT");
	pf_tap(pf_stat("inflight") == 0, "nothing left in flight");
}

/* Writes @val into /sys/kernel/dfg/@name: 0 or -errno. */
static int pf_sysfs_write(const char *name, const char *val)
{
	char path[128];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/sys/kernel/dfg/%s", name);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	if (fputs(val, f) < 0)
		ret = -EIO;
	if (fclose(f))
		ret = -errno;
	return ret;
}

/*
 * The traffic gate (kmod/pf_traffic.c) at the ABI: node1's nodes 2501
 * and 2502 (neither read nor replicated yet) asked speculatively under
 * threshold 0 (gated), on demand (never gated) and without a limit.
 */
static void pf_step_gate(int fd)
{
	__u64 g0 = pf_stat("spec_gated"), i0 = pf_stat("spec_issued");
	__u64 miss0 = pf_stat("misses");
	struct dfg_pf_loc out[2];
	int ret;

	pf_tap(!pf_sysfs_write("prefetch/traffic_threshold", "0"),
	       "threshold 0 written");
	memset(out, 0xff, sizeof(out));
	ret = pf_prefetch_one(fd, 2501, DFG_PF_ATTRS, 1, DFG_PF_SPECULATIVE,
			      out);
	pf_tap(ret == 0 && out[0].where == DFG_PF_GATED &&
	       out[0].len == PF_FEAT && out[0].pos == 0 && out[0].hit == 0,
	       "threshold 0: speculative read gated (%d, where %u, len %u)",
	       ret, out[0].where, out[0].len);
	pf_tap(pf_stat("spec_gated") - g0 == 1 &&
	       pf_stat("spec_issued") == i0 && pf_stat("misses") == miss0,
	       "counted gated, nothing read or allocated");
	ret = pf_prefetch_one(fd, 2501, DFG_PF_ATTRS, 1, 0, out);
	pf_tap(ret == 1 && out[0].where == DFG_PF_IN_CACHE,
	       "threshold 0: a demand read is not gated (%d)", ret);
	pf_tap(!pf_sysfs_write("prefetch/traffic_threshold",
			       "18446744073709551615"), "no limit written");
	ret = pf_prefetch_one(fd, 2502, DFG_PF_ATTRS, 1, DFG_PF_SPECULATIVE,
			      out);
	pf_tap(ret == 1 && out[0].where == DFG_PF_IN_CACHE &&
	       pf_stat("spec_issued") - i0 == 1 &&
	       pf_stat("spec_gated") - g0 == 1,
	       "no limit: the speculative read issued (%d)", ret);
	pf_tap(!pf_sysfs_write("prefetch/traffic_threshold", "67108864"),
	       "default threshold back");
	pf_tap(pf_stat("inflight") == 0, "nothing left in flight");
}

/*
 * Step "dead FIRST": node1 is unreachable (node0's link down, or node1
 * silent); node1's uncached nodes from FIRST fail in bounded time.
 */
static void pf_step_dead(int fd, struct io_uring *ring,
			 const struct pf_maps *m, __u64 first)
{
	__u64 t0 = dfg_now_ns(), ms;
	char buf[256];
	bool ok;
	int ret;

	ret = pf_fetch(fd, ring, DFG_PATH_INLINE, m, first, 100, -1, -1, &ok);
	ms = dfg_ms_since(t0);
	/* 100 nodes: one batch of about 200 reads in flight when it fails. */
	pf_tap(ret == -EHOSTUNREACH && ms < 30000,
	       "peer unreachable: a batch of 100 uncached nodes fails with %d after %llu ms",
	       ret, ms);
	pf_tap(!dfg_sysfs_read("prefetch/peers", buf, sizeof(buf)) &&
	       !strcmp(buf, "0 1500 1500 down"), "sysfs peers: '%s'", buf);
	t0 = dfg_now_ns();
	ret = pf_fetch(fd, ring, DFG_PATH_IOCTL, m, first + 100, 10, -1, -1,
		       &ok);
	pf_tap(ret == -EHOSTUNREACH && dfg_ms_since(t0) < 1000,
	       "then at once: %d", ret);
	ret = pf_fetch(fd, ring, DFG_PATH_IOCTL, m, 1500, 300, DFG_PF_IN_CACHE,
		       1, &ok);
	pf_tap(ok && ret == 0, "cached nodes still served, bytes right (%d)",
	       ret);
	pf_tap(pf_stat("inflight") == 0, "no read left in flight");
}

/*
 * Step "back FIRST": node1 is reachable again; PEER_ADD replaces the dead
 * peer and the nodes from FIRST that failed are read.
 */
static void pf_step_back(int fd, struct io_uring *ring,
			 const struct pf_maps *m, __u64 first)
{
	struct dfg_peer_add a;
	bool ok;
	int ret;

	ret = pf_peer_add(fd, &a);
	pf_tap(ret == 0 && a.id == 0, "PEER_ADD replaces the dead peer: %d",
	       ret);
	__u64 bytes;
	int want = pf_remote(first, 100, &bytes);

	ret = pf_fetch(fd, ring, DFG_PATH_INLINE, m, first, 100,
		       DFG_PF_IN_CACHE, 0, &ok);
	pf_tap(ok && ret == want,
	       "nodes read again after the link came back (%d of %d)", ret,
	       want);
}

/* Step "nodev": dfg_rdma.ko is gone, with its peers. */
static void pf_step_nodev(int fd)
{
	struct dfg_peer_add a;
	struct dfg_pf_loc out[2];

	pf_tap(pf_peer_add(fd, &a) == -ENODEV, "no transport: -ENODEV");
	pf_tap(pf_prefetch_one(fd, 2500, DFG_PF_ALL, 1, 0, out) == -EINVAL,
	       "a peer's node without the peer: -EINVAL");
	pf_tap(pf_prefetch_one(fd, 10, DFG_PF_ALL, 1, 0, out) == 0 &&
	       out[1].where == DFG_PF_IN_PART, "own nodes still served");
}

/* ---- dfg_tcp.ko: a bad client, a peer that dies mid-answer ---- */

/*
 * Step "refused" (dfg_tcp.ko on node0, no partition loaded): PEER_ADD's
 * connection errors.
 */
static void pf_step_refused(int fd)
{
	struct dfg_peer_add a = {
		.family = AF_INET, .timeout_ms = 20000,
		.addr = { 127, 0, 0, 1 },
	};
	__u64 t0;
	int ret;

	ret = sys_dfg_ioctl(fd, DFG_IOC_PEER_ADD, &a);
	pf_tap(ret == -ECONNREFUSED,
	       "a module that serves nothing refuses: %d", ret);
	a.port = 1;
	ret = sys_dfg_ioctl(fd, DFG_IOC_PEER_ADD, &a);
	pf_tap(ret == -ECONNREFUSED, "no module listening: %d", ret);
	/* Nobody has it on the rig's link: no ARP answer within 1.5 s. */
	memcpy(a.addr, (__u8[]){ 169, 254, 0, 99 }, 4);
	a.port = 0;
	a.timeout_ms = 1500;
	t0 = dfg_now_ns();
	ret = sys_dfg_ioctl(fd, DFG_IOC_PEER_ADD, &a);
	pf_tap((ret == -ETIMEDOUT || ret == -EHOSTUNREACH) &&
	       dfg_ms_since(t0) < 5000,
	       "an address nobody has: %d after %llu ms (timeout 1500)", ret,
	       dfg_ms_since(t0));
}

/* A TCP connection to @ip:@port (@rcvbuf: SO_RCVBUF, 0: default). */
static int pf_dial(const char *ip, int port, int rcvbuf)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET, .sin_port = htons(port),
	};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if ((rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				  sizeof(rcvbuf))) ||
	    inet_pton(AF_INET, ip, &sin.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static bool pf_write_all(int fd, const void *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n <= 0)
			return false;
		buf = (const char *)buf + n;
		len -= n;
	}
	return true;
}

/*
 * Read @len bytes within @ms (-1: no limit). Returns the bytes read (short
 * at the end of the stream or a reset), or -ETIMEDOUT.
 */
static ssize_t pf_read_all(int fd, void *buf, size_t len, int ms)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, ms) == 0)
			return -ETIMEDOUT;
		n = recv(fd, (char *)buf + got, len - got, 0);
		if (n <= 0)
			break;
		got += n;
	}
	return got;
}

/*
 * Wait up to @ms for the server to end the connection, draining what it
 * sends (*@bytes); the ms it took, or -1 if it is still open.
 */
static long pf_wait_end(int fd, int ms, __u64 *bytes)
{
	__u64 t0 = dfg_now_ns(), n = 0;
	static char buf[65536];

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = ms - (long)dfg_ms_since(t0);
		ssize_t r;

		if (left <= 0 || poll(&p, 1, left) == 0)
			break;
		r = recv(fd, buf, sizeof(buf), 0);
		if (r <= 0) {
			if (bytes)
				*bytes = n;
			return dfg_ms_since(t0);
		}
		n += r;
	}
	if (bytes)
		*bytes = n;
	return -1;
}

/*
 * A connection to node1's dfg_tcp.ko (@rcvbuf: as pf_dial()) and its
 * hello; the fd or -errno.
 */
static int pf_tcp_open(struct dfg_tcp_hello *h, int rcvbuf)
{
	const char *peer = getenv("PF_PEER");
	int fd = peer ? pf_dial(peer, DFG_PF_PORT, rcvbuf) : -EDESTADDRREQ;

	if (fd < 0)
		return fd;
	if (pf_read_all(fd, h, sizeof(*h), 10000) != sizeof(*h) ||
	    le32toh(h->magic) != DFG_TCP_MAGIC_HELLO) {
		close(fd);
		return -EPROTO;
	}
	return fd;
}

/* A request of one extent, as the wire has it. */
struct pf_req1 {
	struct dfg_tcp_req	q;
	struct dfg_tcp_ext	x;
};

static struct pf_req1 pf_req(__u64 tag, __u64 off, __u32 len)
{
	struct pf_req1 r = {
		.q = { .magic = htole32(DFG_TCP_MAGIC_REQ),
		       .count = htole32(1), .tag = htole64(tag) },
		.x = { .off = htole64(off), .len = htole32(len) },
	};

	return r;
}

/*
 * A request of @n extents at @buf (room for DFG_TCP_LIST_MAX + 1 of
 * them, the header's included): @n extents (@off[i], @len[i]); its bytes.
 */
static size_t pf_req_list(void *buf, __u64 tag, __u32 n, const __u64 *off,
			  const __u32 *len)
{
	struct dfg_tcp_req *q = buf;
	struct dfg_tcp_ext *x = (void *)(q + 1);
	__u32 i;

	q->magic = htole32(DFG_TCP_MAGIC_REQ);
	q->count = htole32(n);
	q->tag = htole64(tag);
	for (i = 0; i < n; i++) {
		x[i].off = htole64(off[i]);
		x[i].len = htole32(len[i]);
		x[i].pad = 0;
	}
	return sizeof(*q) + n * sizeof(*x);
}

/* Send @len bytes of @buf on a fresh connection: is it dropped soon? */
static bool pf_tcp_dropped(const void *buf, size_t len)
{
	struct dfg_tcp_hello h;
	int fd = pf_tcp_open(&h, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = pf_write_all(fd, buf, len) && pf_wait_end(fd, 10000, NULL) >= 0;
	close(fd);
	return ok;
}

/*
 * Step "hostile MAXCONNS STALL_MS": garbage, requests outside the image,
 * half a request, a reader that takes nothing, more connections than
 * node1 serves; then node1 still answers right. node0.sh checks node1's
 * counters around it.
 */
static void pf_step_hostile(unsigned int maxconns, unsigned int stall_ms)
{
	static __u8 list[(DFG_TCP_LIST_MAX + 2) * sizeof(struct dfg_tcp_ext)];
	__u64 offs[DFG_TCP_LIST_MAX + 1];
	__u32 lens[DFG_TCP_LIST_MAX + 1];
	struct dfg_tcp_hello h;
	struct pf_req1 q[512];
	struct dfg_tcp_resp a;
	size_t llen, len1;
	void *mine;
	__u8 *back;
	bool ok;
	unsigned int i, serving = 0, busy = 0, nfd = maxconns + 16;
	struct dfg_part_hdr ph;
	int fd, *fds;
	__u64 img, got, t0;
	char junk[100];
	long ms;

	fd = pf_tcp_open(&h, 0);
	pf_tap(fd >= 0 && h.status == htole32(DFG_TCP_SERVING),
	       "node1's dfg_tcp.ko says hello (%d)", fd);
	if (fd < 0)
		return;
	close(fd);
	img = le64toh(h.image_bytes);

	memset(junk, 0x5a, sizeof(junk));
	pf_tap(pf_tcp_dropped(junk, sizeof(junk)), "garbage: dropped");
	q[0] = pf_req(1, img - 8, 16);
	pf_tap(pf_tcp_dropped(q, sizeof(q[0])),
	       "a read across the image's end: dropped");
	q[0] = pf_req(1, 1ULL << 62, 8);
	pf_tap(pf_tcp_dropped(q, sizeof(q[0])), "a read far outside: dropped");
	q[0] = pf_req(1, 0, 0xffffffffU);
	pf_tap(pf_tcp_dropped(q, sizeof(q[0])), "a 4 GiB read: dropped");
	q[0] = pf_req(1, 0, 0);
	pf_tap(pf_tcp_dropped(q, sizeof(q[0])), "an empty read: dropped");
	q[0] = pf_req(1, 0, 8);
	q[0].x.pad = htole32(1);
	pf_tap(pf_tcp_dropped(q, sizeof(q[0])), "a nonzero pad: dropped");

	/* Lists: empty, too long, one bad extent among good ones. */
	for (i = 0; i <= DFG_TCP_LIST_MAX; i++) {
		offs[i] = 8 * i;
		lens[i] = 8;
	}
	llen = pf_req_list(list, 1, 0, offs, lens);
	pf_tap(pf_tcp_dropped(list, llen), "an empty list: dropped");
	llen = pf_req_list(list, 1, DFG_TCP_LIST_MAX + 1, offs, lens);
	pf_tap(pf_tcp_dropped(list, llen), "a list of %u: dropped",
	       DFG_TCP_LIST_MAX + 1);
	offs[2] = img - 4;
	llen = pf_req_list(list, 1, 5, offs, lens);
	fd = pf_tcp_open(&h, 0);
	got = 0;
	ms = fd >= 0 && pf_write_all(fd, list, llen) ?
	     pf_wait_end(fd, 10000, &got) : -1;
	pf_tap(ms >= 0 && got == 0,
	       "a list with its third extent across the end: dropped, nothing of it answered (%llu bytes)",
	       got);
	if (fd >= 0)
		close(fd);
	offs[2] = 16;

	/* Half a request, then nothing: dropped after stall_ms. */
	fd = pf_tcp_open(&h, 0);
	q[0] = pf_req(1, 0, 8);
	t0 = dfg_now_ns();
	ms = fd >= 0 && pf_write_all(fd, q, 10) ?
	     pf_wait_end(fd, stall_ms + 10000, NULL) : -1;
	pf_tap(ms >= 0 && dfg_ms_since(t0) + 200 >= stall_ms,
	       "half a request: dropped after %ld ms (stall_ms %u; %s)", ms,
	       stall_ms, fd < 0 ? "no connection" :
	       ms < 0 ? "still open after stall_ms + 10 s" : "closed");
	if (fd >= 0)
		close(fd);

	/*
	 * Ask for the image 512 times and take nothing (a small receive
	 * buffer: node1's sends stop at once): node1 gives up.
	 */
	fd = pf_tcp_open(&h, 4096);
	for (i = 0; i < ARRAY_SIZE(q); i++)
		q[i] = pf_req(i, 0, img);
	ms = -1;
	got = 0;
	if (fd >= 0 && pf_write_all(fd, q, sizeof(q))) {
		/* A send that stops after some bytes waits stall_ms again. */
		sleep(2 * stall_ms / 1000 + 2);
		ms = pf_wait_end(fd, 20000, &got);
	}
	pf_tap(ms >= 0 && got < ARRAY_SIZE(q) * (img + sizeof(a)),
	       "a reader that takes nothing: dropped (%llu of %llu bytes sent)",
	       got, ARRAY_SIZE(q) * (img + sizeof(a)));
	if (fd >= 0)
		close(fd);

	/* More connections than it serves: the rest are told it is busy. */
	fds = calloc(nfd, sizeof(*fds));
	for (i = 0; i < nfd; i++) {
		fds[i] = pf_tcp_open(&h, 0);
		if (fds[i] >= 0 && h.status == htole32(DFG_TCP_SERVING))
			serving++;
		else if (fds[i] >= 0 && h.status == htole32(DFG_TCP_BUSY))
			busy++;
	}
	/*
	 * At most max_conns served (fewer while node1 still serves others:
	 * node0's dfg.ko itself, when its peer connection is up), every
	 * other told busy, none left without an answer.
	 */
	pf_tap(serving <= maxconns && serving + busy == nfd &&
	       busy >= nfd - maxconns,
	       "%u connections: %u served, %u told busy (max_conns %u)", nfd,
	       serving, busy, maxconns);
	for (i = 0; i < nfd; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);

	/*
	 * Still serving: the image's header, right (once node1 has seen the
	 * flood's connections close: it says busy until then).
	 */
	t0 = dfg_now_ns();
	while ((fd = pf_tcp_open(&h, 0)) >= 0 &&
	       h.status == htole32(DFG_TCP_BUSY) && dfg_ms_since(t0) < 10000) {
		close(fd);
		usleep(100000);
	}
	q[0] = pf_req(77, 0, sizeof(ph));
	pf_tap(fd >= 0 && pf_write_all(fd, q, sizeof(q[0])) &&
	       pf_read_all(fd, &a, sizeof(a), 10000) == sizeof(a) &&
	       a.magic == htole32(DFG_TCP_MAGIC_RESP) && !a.status &&
	       a.tag == htole64(77) && a.count == htole32(1) &&
	       a.bytes == htole64(sizeof(ph)) &&
	       pf_read_all(fd, &ph, sizeof(ph), 10000) == sizeof(ph) &&
	       ph.magic == DFG_PART_MAGIC && ph.node_first == pf_first(1),
	       "then a good client is served right");

	/*
	 * A list of DFG_TCP_LIST_MAX extents, the last the whole image: one
	 * answer, the bytes back to back, as node1 loaded them.
	 */
	mine = pf_image(1, &len1);
	for (i = 0; i < DFG_TCP_LIST_MAX; i++) {
		offs[i] = (i * 4099ULL) % (len1 - 64) & ~7ULL;
		lens[i] = 8 + i % 56;
	}
	offs[DFG_TCP_LIST_MAX - 1] = 0;
	lens[DFG_TCP_LIST_MAX - 1] = len1;
	llen = pf_req_list(list, 78, DFG_TCP_LIST_MAX, offs, lens);
	got = 0;
	for (i = 0; i < DFG_TCP_LIST_MAX; i++)
		got += lens[i];
	back = malloc(got);
	ok = fd >= 0 && back && len1 == img && pf_write_all(fd, list, llen) &&
	     pf_read_all(fd, &a, sizeof(a), 10000) == sizeof(a) &&
	     a.magic == htole32(DFG_TCP_MAGIC_RESP) && !a.status &&
	     a.tag == htole64(78) && a.count == htole32(DFG_TCP_LIST_MAX) &&
	     a.bytes == htole64(got) &&
	     pf_read_all(fd, back, got, 10000) == (ssize_t)got;
	for (i = 0, t0 = 0; ok && i < DFG_TCP_LIST_MAX; t0 += lens[i++])
		ok = !memcmp(back + t0, (__u8 *)mine + offs[i], lens[i]);
	pf_tap(ok, "a list of %u extents: one answer, bytes back to back, right",
	       DFG_TCP_LIST_MAX);
	free(back);
	free(mine);
	if (fd >= 0)
		close(fd);
}

/*
 * The fake peer (a child of step "midread"): serves partition 1 over
 * dfg_tcp.ko's protocol on @lfd, until a byte on @ctl says to die: then
 * it sends half of the next answer and exits.
 */
static void pf_fake_peer(int lfd, int ctl)
{
	size_t len;
	void *img = pf_image(1, &len);
	struct dfg_part_hdr *p = img;
	struct dfg_tcp_hello h = {
		.magic = htole32(DFG_TCP_MAGIC_HELLO),
		.version = htole32(DFG_TCP_VERSION),
		.status = htole32(DFG_TCP_SERVING),
		.feat_bytes = htole32(p->feat_bytes),
		.node_first = htole64(p->node_first),
		.node_count = htole64(p->node_count),
		.row_off = htole64(p->row_off),
		.col_off = htole64(p->col_off),
		.col_count = htole64(p->col_count),
		.feat_off = htole64(p->feat_off),
		.image_bytes = htole64(p->image_bytes),
		.part_set = htole64(p->part_set),
	};
	int fd = accept(lfd, NULL, NULL);
	struct dfg_tcp_ext x[DFG_TCP_LIST_MAX];
	struct dfg_tcp_req q;
	__u32 n, i;
	__u64 bytes;
	char c;

	if (fd < 0 || !pf_write_all(fd, &h, sizeof(h)))
		_exit(1);
	while (pf_read_all(fd, &q, sizeof(q), -1) == sizeof(q)) {
		struct dfg_tcp_resp a = {
			.magic = htole32(DFG_TCP_MAGIC_RESP), .tag = q.tag,
			.count = q.count,
		};

		n = le32toh(q.count);
		if (!n || n > DFG_TCP_LIST_MAX ||
		    pf_read_all(fd, x, n * sizeof(x[0]), -1) !=
		    (ssize_t)(n * sizeof(x[0])))
			_exit(1);
		for (i = 0, bytes = 0; i < n; i++) {
			__u64 off = le64toh(x[i].off);
			__u32 l = le32toh(x[i].len);

			if (off > len || l > len - off)
				_exit(1);
			bytes += l;
		}
		a.bytes = htole64(bytes);
		if (!pf_write_all(fd, &a, sizeof(a)))
			_exit(1);
		/* Told to die: half of this answer's bytes, then gone. */
		if (read(ctl, &c, 1) == 1) {
			bytes /= 2;
			for (i = 0; bytes && i < n; i++) {
				__u32 l = le32toh(x[i].len);

				l = l < bytes ? l : bytes;
				pf_write_all(fd, img + le64toh(x[i].off), l);
				bytes -= l;
			}
			_exit(0);
		}
		for (i = 0; i < n; i++)
			if (!pf_write_all(fd, img + le64toh(x[i].off),
					  le32toh(x[i].len)))
				_exit(1);
	}
	_exit(0);
}

/*
 * Step "midread FIRST" (dfg_tcp.ko, node1's peer dead): a fake peer on
 * node0's IPv6 loopback replaces it, serves nodes FIRST.., then dies in the middle of an
 * answer: every read in flight fails at once, the peer is down, what it
 * served stays cached and right.
 */
static void pf_step_midread(int fd, struct io_uring *ring,
			    const struct pf_maps *m, __u64 first)
{
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6, .sin6_port = htons(18600),
		.sin6_addr = IN6ADDR_LOOPBACK_INIT,
	};
	struct dfg_peer_add a = {
		.family = AF_INET6, .port = 18600, .timeout_ms = 20000,
	};
	int lfd, ctl[2], ret, one = 1, st = -1;
	char buf[256];
	__u64 t0, bytes;
	pid_t pid;
	bool ok;

	lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sin6, sizeof(sin6)) ||
	    listen(lfd, 1) ||
	    pipe(ctl) || fcntl(ctl[0], F_SETFL, O_NONBLOCK)) {
		pf_tap(false, "fake peer listens: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (!pid)
		pf_fake_peer(lfd, ctl[0]);
	close(lfd);
	memcpy(a.addr, &sin6.sin6_addr, 16);
	ret = sys_dfg_ioctl(fd, DFG_IOC_PEER_ADD, &a);
	pf_tap(ret == 0 && a.id == 0 && a.node_first == pf_first(1),
	       "PEER_ADD of a fake peer on ::1 replaces the dead one: %d", ret);
	ret = pf_fetch(fd, ring, DFG_PATH_IOCTL, m, first, 10,
		       DFG_PF_IN_CACHE, 0, &ok);
	pf_tap(ok && ret == pf_remote(first, 10, &bytes),
	       "fake peer serves 10 nodes (%d reads)", ret);

	/* It dies in the middle of the next answer. */
	if (write(ctl[1], "x", 1) != 1)
		pf_tap(false, "telling the fake peer to die");
	t0 = dfg_now_ns();
	ret = pf_fetch(fd, ring, DFG_PATH_INLINE, m, first + 100, 100, -1, -1,
		       &ok);
	pf_tap(ret == -EHOSTUNREACH && dfg_ms_since(t0) < 5000,
	       "peer dies mid-answer: reads fail with %d after %llu ms", ret,
	       dfg_ms_since(t0));
	waitpid(pid, &st, 0);
	pf_tap(WIFEXITED(st) && !WEXITSTATUS(st), "fake peer died as told");
	pf_tap(!dfg_sysfs_read("prefetch/peers", buf, sizeof(buf)) &&
	       !strcmp(buf, "0 1500 1500 down"), "sysfs peers: '%s'", buf);
	pf_tap(pf_stat("inflight") == 0, "no read left in flight");
	ret = pf_fetch(fd, ring, DFG_PATH_IOCTL, m, first, 10, DFG_PF_IN_CACHE,
		       1, &ok);
	pf_tap(ok && ret == 0, "what it served is still cached, right (%d)",
	       ret);
	close(ctl[0]);
	close(ctl[1]);
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct pf_maps m;
	__u64 first;
	int fd, ret;

	if (argc == 5 && !strcmp(argv[1], "run") &&
	    !strcmp(argv[2], "hostile")) {
		pf_step_hostile(atoi(argv[3]), atoi(argv[4]));
		return !!pf_fails;
	}
	if (argc != 3 && argc != 4)
		goto usage;
	first = argc == 4 ? strtoull(argv[3], NULL, 0) : 0;
	fd = sys_dfg_open();
	if (fd < 0) {
		fprintf(stderr, "pf_test: /dev/dfg: %s\n", strerror(-fd));
		return 1;
	}
	if (!strcmp(argv[1], "load")) {
		size_t len;
		void *img = pf_image(atoi(argv[2]), &len);

		ret = pf_load(fd, img, len);
		if (ret)
			fprintf(stderr, "pf_test: PART_LOAD: %s\n",
				strerror(-ret));
		return !!ret;
	}
	if (strcmp(argv[1], "run"))
		goto usage;
	if (!strcmp(argv[2], "setup")) {
		pf_step_setup(fd);
		return !!pf_fails;
	}
	if (!strcmp(argv[2], "nodev")) {
		pf_step_nodev(fd);
		return !!pf_fails;
	}
	if (!strcmp(argv[2], "refused")) {
		pf_step_refused(fd);
		return !!pf_fails;
	}
	ret = dfg_ring_init(&ring, 8);
	if (!ret)
		ret = pf_map(fd, &m);
	if (ret) {
		pf_tap(false, "pf_test run %s: ring or mmap: %s", argv[2],
		       strerror(-ret));
		return 1;
	}
	if (!strcmp(argv[2], "fetch")) {
		pf_step_fetch(fd, &ring, &m);
		pf_step_gate(fd);
	} else if (!strcmp(argv[2], "dead") && first)
		pf_step_dead(fd, &ring, &m, first);
	else if (!strcmp(argv[2], "back") && first)
		pf_step_back(fd, &ring, &m, first);
	else if (!strcmp(argv[2], "midread") && first)
		pf_step_midread(fd, &ring, &m, first);
	else
		goto usage;
	return !!pf_fails;
usage:
	fprintf(stderr,
		"usage: pf_test load I | run setup|fetch|nodev|refused | run dead|back|midread FIRST | run hostile MAXCONNS STALL_MS\n");
	return 2;
}
