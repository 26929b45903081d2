// SPDX-License-Identifier: GPL-2.0
/*
 * chan_bench - dfg channels against the best alternatives, same run.
 *
 * Three benchmarks, each figure a ratio to a baseline measured in the same
 * run on the same machine (under TCG absolute times mean little):
 *
 *  latency	ping-pong round trip of 8 B and 4 KiB messages between two
 *		processes, blocking and busy-poll, over
 *		  dfg	  two dfg channels (one each way) over one arena
 *		  pipe	  two pipes
 *		  unix	  two AF_UNIX SOCK_STREAM socket pairs
 *		  shmring an SPSC ring in MAP_SHARED memory, eventfd used for
 *			  wakeups only when the peer sleeps (waiting flag,
 *			  full barrier, look again: the same protocol as dfg)
 *		Each message is copied from the sender's buffer into the
 *		receiver's buffer (the work every method must do); the
 *		receiver checks its sequence number. Modes: block and busy
 *		with the processes on CPUs 0 and 1, block1 with both on CPU
 *		0 (a wakeup is then a local switch, not a cross-CPU wakeup of
 *		an idle vCPU, which under TCG costs milliseconds and hides the
 *		rest). Busy-poll: every method
 *		retries a non-blocking receive (O_NONBLOCK, DFG_CHAN_NONBLOCK,
 *		the ring without sleeping). Blocking: dfg endpoints as a
 *		user gets them, polling adaptively before they park (up to
 *		DFG_CHAN_SPIN_NS_DEFAULT, with back-off: see
 *		dfg_chan_set_spin_auto()); dfg_park the same with spin 0
 *		(parks at once); the ring sleeps on its eventfd at once.
 *		Baseline: pipe, same size and mode.
 *
 *  throughput	one-way stream of 64 B, 4 KiB, 64 KiB, 1 MiB messages. The
 *		producer writes the payload once (memset of the whole
 *		message where it will be sent from); the consumer touches
 *		it (sums one 64-bit word per 64-byte line where it received
 *		it) and checks the sequence number, for every method:
 *		  dfg	  dfg_buf_alloc() in the arena, write, send the
 *			  descriptor; receive, touch in place, dfg_buf_free()
 *			  (dfg_park: the same, endpoints with spin 0)
 *		  pipe	  write(2) from a buffer, read(2) into one (the pipe
 *			  is enlarged to fs.pipe-max-size, up to 1 MiB)
 *		  unix	  the same over SOCK_STREAM (SO_SNDBUF/SO_RCVBUF 1 MiB
 *			  asked for)
 *		  cma	  the producer fills buffers in its private memory and
 *			  announces them on a shmring; the consumer pulls with
 *			  process_vm_readv(2), then frees the slot
 *		  shmring payload written in place in the shared ring's slot,
 *			  touched in place (zero-copy without a kernel object)
 *		Baseline: pipe, same size. Blocking mode.
 *
 *  pipeline	source -> K forwarding stages -> sink, K = 5 and 1, 64 KiB
 *		and 1 MiB messages: dfg (and dfg_park) stages call
 *		dfg_chan_forward() (zero-copy), pipe stages read(2) the
 *		bytes and write(2) them on. Source and sink as in
 *		throughput. Baselines: pipe with the same K
 *		(ratio_to_baseline) and the same dfg method with K = 1
 *		(ratio_to_1stage).
 *
 * Processes, not threads (fork). Latency (but block1) and throughput pin
 * the two processes to CPUs 0 and 1 (or both to CPU 0 on one CPU); pipeline
 * processes are not pinned (K + 2 processes share the CPUs).
 *
 * Interleaved, as the performance method asks: a case (one benchmark,
 * size and mode) sets up every method's links before it forks, and the
 * same processes (the latency pair; the stream's source and sink) run
 * every method, on the same CPUs; pipeline stages are each method's own
 * and sleep while another method runs. Each method is calibrated so that
 * one repetition takes about -t ms and warmed up; then come -r rounds,
 * each timing every method once, the first of them turning round by round
 * (round r starts with method r mod M, so a busy moment of the host does
 * not pick the winner). Every message's sequence number is checked. A
 * ratio (to pipe with the same K; pipeline also to the same method with K
 * = 1) is taken within each round; the figures are the median over the
 * rounds, and the ratio's median, minimum and maximum.
 *
 * Output in -d DIR (default bench/results): chan_latency.csv,
 * chan_throughput.csv, chan_pipeline.csv (medians; ratio_to_baseline is
 * the median per-round ratio, ratio_min and ratio_max its range) and
 * chan_<name>_rounds.csv (every method in every round); a table on stdout.
 * DFG_BENCH_QUICK=1 (or -q) for a short smoke run.
 *
 * dfg methods need <dfg/chan.h> and libdfg's channels at build time and
 * /dev/dfg with DFG_F_CHAN at run time; without them the dfg rows are
 * left out (and said so) and the baselines still run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dfg/dfg.h>
#include <dfg/graph.h>

#if defined(__has_include)
#if __has_include(<dfg/chan.h>) && __has_include("../../libdfg/chan/chan.c")
#define HAVE_DFG_CHAN 1
#include <dfg/chan.h>
#endif
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define MAX_REPS	31
#define SEQ_STOP	(~(uint64_t)0)
#define LINE		64
#define KiB		1024UL
#define MiB		(1024UL * 1024UL)

struct opts {
	const char	*dir;
	unsigned int	reps;
	unsigned int	target_ms;
	int		quick;
	const char	*only;		/* run only this benchmark */
};

static struct opts o = {
	.dir		= "bench/results",
	.reps		= 5,
	.target_ms	= 250,
};

static int ncpus;
static bool dfg_ok;			/* dfg methods can run */
static volatile uint64_t sink_sum;	/* keeps the touches alive */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void pin(int cpu)
{
	long i, n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	if (cpu < 0) {			/* unpin: every online CPU */
		for (i = 0; i < n && i < CPU_SETSIZE; i++)
			CPU_SET(i, &set);
	} else {
		CPU_SET(cpu % ncpus, &set);
	}
	sched_setaffinity(0, sizeof(set), &set);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* The consumer's touch: one 64-bit word per cache line. */
static uint64_t touch(const void *p, size_t len)
{
	const uint64_t *w = p;
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < len / 8; i += LINE / 8)
		s += w[i];
	return s;
}

/* The producer's write: the whole payload, sequence number first. */
static void fill(void *p, size_t len, uint64_t seq)
{
	memset(p, (int)(seq & 0x7f) | 1, len);
	memcpy(p, &seq, sizeof(seq));
}

static uint64_t get_seq(const void *p)
{
	uint64_t s;

	memcpy(&s, p, sizeof(s));
	return s;
}

/* ------------------------------------------------------------------------
 * Links: one direction, a tx process and an rx process.
 *
 * tx(src): src NULL generates the payload (fill) where it is sent from,
 * else copies @len bytes of src. rx(dst): dst NULL touches the payload
 * where it was received, else copies it to dst. Both carry the sequence
 * number in the first 8 bytes; rx returns 1 at end of stream.
 * ------------------------------------------------------------------------
 */

struct shm_ring {
	_Atomic uint32_t	tail;
	_Atomic uint32_t	prod_waiting;
	_Atomic int32_t		tx_pid;
	uint32_t		pad0[13];
	_Atomic uint32_t	head;
	_Atomic uint32_t	cons_waiting;
	uint32_t		pad1[14];
};

#define RING_HDR	4096UL
#define SLOT_HDR	LINE

struct slot {
	uint64_t	len;
	uint64_t	addr;		/* cma: address in the producer */
};

struct dfg_ctx;

struct link {
	const struct link_ops *ops;
	size_t		max_len;
	unsigned int	depth;
	int		busy;
	int		fd[2];		/* [0] rx end, [1] tx end */
	int		io;		/* this process's end */
	void		*buf;		/* local buffer (copies, cma pool) */
	/* shmring, cma */
	struct shm_ring	*ring;
	size_t		slot_size;
	size_t		map_size;
	int		efd_data;	/* wakes the consumer */
	int		efd_room;	/* wakes the producer */
	int		tx;		/* this process is the producer */
	/* dfg */
	struct dfg_ctx	*dc;
	unsigned int	chan_id;
	void		*chan;		/* struct dfg_chan * */
};

struct link_ops {
	const char	*name;
	bool		is_dfg;
	int		(*create)(struct link *l);	/* before fork */
	int		(*open)(struct link *l, int tx);/* after fork */
	int		(*tx)(struct link *l, const void *src, size_t len,
			      uint64_t seq);
	int		(*rx)(struct link *l, void *dst, size_t len,
			      uint64_t *seq);
	void		(*stop)(struct link *l);	/* tx: end of stream */
	void		(*close)(struct link *l);	/* each process */
};

/* --- pipe and unix ----------------------------------------------------- */

static int fd_create(struct link *l, int is_unix)
{
	int sz = 1 << 20;

	if (is_unix) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, l->fd))
			return -errno;
		/* Best effort: ask for big buffers (the kernel caps them). */
		setsockopt(l->fd[0], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		setsockopt(l->fd[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	} else {
		if (pipe2(l->fd, O_CLOEXEC))
			return -errno;
		if (l->max_len > 64 * KiB) {
			FILE *f = fopen("/proc/sys/fs/pipe-max-size", "r");
			int max = 1 << 20;

			if (f) {
				if (fscanf(f, "%d", &max) != 1)
					max = 1 << 20;
				fclose(f);
			}
			if (max > sz)
				max = sz;
			fcntl(l->fd[1], F_SETPIPE_SZ, max);
		}
	}
	return 0;
}

static int pipe_create(struct link *l)
{
	return fd_create(l, 0);
}

static int unix_create(struct link *l)
{
	return fd_create(l, 1);
}

static int fd_open(struct link *l, int tx)
{
	l->tx = tx;
	l->io = l->fd[tx ? 1 : 0];
	close(l->fd[tx ? 0 : 1]);
	l->fd[0] = l->fd[1] = -1;	/* l->io is closed by fd_close() */
	if (l->busy && fcntl(l->io, F_SETFL, O_NONBLOCK))
		return -errno;
	l->buf = aligned_alloc(4096, (l->max_len + 4095) & ~4095UL);
	if (!l->buf)
		return -ENOMEM;
	memset(l->buf, 0, l->max_len);
	return 0;
}

static int write_full(int fd, const void *p, size_t len)
{
	const char *c = p;
	ssize_t n;

	while (len) {
		n = write(fd, c, len);
		if (n < 0) {
			if (errno == EAGAIN) {
				cpu_relax();
				continue;
			}
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

/* 0 read, 1 end of stream before any byte, -errno. */
static int read_full(int fd, void *p, size_t len)
{
	size_t got = 0;
	char *c = p;
	ssize_t n;

	while (got < len) {
		n = read(fd, c + got, len - got);
		if (n < 0) {
			if (errno == EAGAIN) {
				cpu_relax();
				continue;
			}
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			return got ? -EPIPE : 1;
		got += (size_t)n;
	}
	return 0;
}

static int fd_tx(struct link *l, const void *src, size_t len, uint64_t seq)
{
	if (!src) {
		fill(l->buf, len, seq);
		src = l->buf;
	}
	return write_full(l->io, src, len);
}

static int fd_rx(struct link *l, void *dst, size_t len, uint64_t *seq)
{
	void *p = dst ? dst : l->buf;
	int ret;

	ret = read_full(l->io, p, len);
	if (ret)
		return ret;
	*seq = get_seq(p);
	if (!dst)
		sink_sum += touch(p, len);
	return 0;
}

static void fd_stop(struct link *l)
{
	close(l->io);
	l->io = -1;
}

static void fd_close(struct link *l)
{
	if (l->io >= 0)
		close(l->io);
	l->io = -1;
	free(l->buf);
	l->buf = NULL;
}

static const struct link_ops pipe_ops = {
	"pipe", false, pipe_create, fd_open, fd_tx, fd_rx, fd_stop, fd_close,
};

static const struct link_ops unix_ops = {
	"unix", false, unix_create, fd_open, fd_tx, fd_rx, fd_stop, fd_close,
};

/* --- shmring: SPSC ring in MAP_SHARED memory, eventfd wakeups ----------- */

static int ring_create(struct link *l)
{
	l->slot_size = SLOT_HDR + ((l->max_len + LINE - 1) & ~(LINE - 1));
	l->map_size = RING_HDR + l->slot_size * l->depth;
	l->ring = mmap(NULL, l->map_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (l->ring == MAP_FAILED) {
		l->ring = NULL;
		return -errno;
	}
	l->efd_data = eventfd(0, EFD_CLOEXEC);
	l->efd_room = eventfd(0, EFD_CLOEXEC);
	if (l->efd_data < 0 || l->efd_room < 0)
		return -errno;
	return 0;
}

static inline char *ring_slot(struct link *l, uint32_t i)
{
	return (char *)l->ring + RING_HDR +
	       (size_t)(i & (l->depth - 1)) * l->slot_size;
}

static void efd_wait(int efd)
{
	uint64_t v;

	if (read(efd, &v, sizeof(v)) < 0 && errno != EINTR)
		abort();
}

static void efd_kick(int efd)
{
	uint64_t v = 1;

	if (write(efd, &v, sizeof(v)) < 0)
		abort();
}

/* Producer: index of a free slot (waits for room). */
static uint32_t ring_get_room(struct link *l)
{
	struct shm_ring *r = l->ring;
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);

	for (;;) {
		if (t - atomic_load_explicit(&r->head, memory_order_acquire) <
		    l->depth)
			return t;
		if (l->busy) {
			cpu_relax();
			continue;
		}
		atomic_store_explicit(&r->prod_waiting, 1,
				      memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
		if (t - atomic_load_explicit(&r->head, memory_order_acquire) <
		    l->depth) {
			atomic_store_explicit(&r->prod_waiting, 0,
					      memory_order_relaxed);
			return t;
		}
		efd_wait(l->efd_room);
		atomic_store_explicit(&r->prod_waiting, 0,
				      memory_order_relaxed);
	}
}

static void ring_publish(struct link *l, uint32_t t)
{
	struct shm_ring *r = l->ring;

	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&r->cons_waiting, memory_order_relaxed))
		efd_kick(l->efd_data);
}

/* Consumer: index of a full slot (waits for data). */
static uint32_t ring_get_data(struct link *l)
{
	struct shm_ring *r = l->ring;
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);

	for (;;) {
		if (atomic_load_explicit(&r->tail, memory_order_acquire) != h)
			return h;
		if (l->busy) {
			cpu_relax();
			continue;
		}
		atomic_store_explicit(&r->cons_waiting, 1,
				      memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load_explicit(&r->tail, memory_order_acquire) != h) {
			atomic_store_explicit(&r->cons_waiting, 0,
					      memory_order_relaxed);
			return h;
		}
		efd_wait(l->efd_data);
		atomic_store_explicit(&r->cons_waiting, 0,
				      memory_order_relaxed);
	}
}

static void ring_release(struct link *l, uint32_t h)
{
	struct shm_ring *r = l->ring;

	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&r->prod_waiting, memory_order_relaxed))
		efd_kick(l->efd_room);
}

static int ring_open(struct link *l, int tx)
{
	l->tx = tx;
	return 0;
}

static int ring_tx(struct link *l, const void *src, size_t len, uint64_t seq)
{
	uint32_t t = ring_get_room(l);
	char *s = ring_slot(l, t);
	struct slot *h = (struct slot *)s;

	h->len = len;
	if (src)
		memcpy(s + SLOT_HDR, src, len);
	else
		fill(s + SLOT_HDR, len, seq);
	ring_publish(l, t);
	return 0;
}

static int ring_rx(struct link *l, void *dst, size_t len, uint64_t *seq)
{
	uint32_t h = ring_get_data(l);
	char *s = ring_slot(l, h);
	struct slot *sh = (struct slot *)s;

	if (sh->len == 0) {		/* stop */
		ring_release(l, h);
		return 1;
	}
	if (sh->len != len)
		return -EPROTO;
	if (dst)
		memcpy(dst, s + SLOT_HDR, len);
	else
		sink_sum += touch(s + SLOT_HDR, len);
	*seq = get_seq(s + SLOT_HDR);
	ring_release(l, h);
	return 0;
}

static void ring_stop(struct link *l)
{
	uint32_t t = ring_get_room(l);

	((struct slot *)ring_slot(l, t))->len = 0;
	ring_publish(l, t);
}

static void ring_close(struct link *l)
{
	free(l->buf);
	l->buf = NULL;
}

static const struct link_ops ring_ops = {
	"shmring", false, ring_create, ring_open, ring_tx, ring_rx, ring_stop,
	ring_close,
};

/* --- cma: shmring of addresses, consumer pulls with process_vm_readv --- */

static int cma_create(struct link *l)
{
	size_t max = l->max_len;
	int ret;

	l->max_len = 0;			/* ring slots carry headers only */
	ret = ring_create(l);
	l->max_len = max;
	return ret;
}

static int cma_open(struct link *l, int tx)
{
	size_t sz = (l->max_len + 4095) & ~4095UL;

	l->tx = tx;
	/* tx: one private buffer per ring slot; rx: one to pull into. */
	l->buf = aligned_alloc(4096, sz * (tx ? l->depth : 1));
	if (!l->buf)
		return -ENOMEM;
	memset(l->buf, 0, sz * (tx ? l->depth : 1));
	if (tx)
		atomic_store(&l->ring->tx_pid, getpid());
	return 0;
}

static int cma_tx(struct link *l, const void *src, size_t len, uint64_t seq)
{
	size_t sz = (l->max_len + 4095) & ~4095UL;
	uint32_t t = ring_get_room(l);
	struct slot *h = (struct slot *)ring_slot(l, t);
	char *p = (char *)l->buf + (size_t)(t & (l->depth - 1)) * sz;

	if (src)
		memcpy(p, src, len);
	else
		fill(p, len, seq);
	h->len = len;
	h->addr = (uint64_t)(uintptr_t)p;
	ring_publish(l, t);
	return 0;
}

static int cma_rx(struct link *l, void *dst, size_t len, uint64_t *seq)
{
	uint32_t hd = ring_get_data(l);
	struct slot *h = (struct slot *)ring_slot(l, hd);
	void *p = dst ? dst : l->buf;
	struct iovec local = { p, len };
	struct iovec remote = { (void *)(uintptr_t)h->addr, len };
	ssize_t n;

	if (h->len == 0) {
		ring_release(l, hd);
		return 1;
	}
	if (h->len != len)
		return -EPROTO;
	n = process_vm_readv(atomic_load(&l->ring->tx_pid), &local, 1,
			     &remote, 1, 0);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EIO;
	ring_release(l, hd);
	*seq = get_seq(p);
	if (!dst)
		sink_sum += touch(p, len);
	return 0;
}

static const struct link_ops cma_ops = {
	"cma", false, cma_create, cma_open, cma_tx, cma_rx, ring_stop,
	ring_close,
};

/* --- dfg channels --------------------------------------------------------
 *
 * One graph and one arena (with the buffer allocator) per case, made by
 * the parent before fork; every process inherits the graph descriptor and
 * the arena mapping and opens its own endpoints after fork.
 */
struct dfg_ctx {
	struct dfg		*d;
	int			graph_fd;
	struct dfg_arena	*arena;
};

#ifdef HAVE_DFG_CHAN
static int dfg_ctx_init(struct dfg_ctx *dc, size_t arena_size)
{
	static unsigned int nr;
	char name[48];
	int ret;

	memset(dc, 0, sizeof(*dc));
	dc->graph_fd = -1;
	ret = dfg_open(&dc->d, DFG_OPEN_NO_RING);
	if (ret)
		return ret;
	snprintf(name, sizeof(name), "chan_bench.%d.%u", getpid(), nr++);
	ret = dfg_graph_create(dc->d, name, 0600, 0);
	if (ret < 0)
		return ret;
	dc->graph_fd = ret;
	ret = dfg_arena_create(dc->graph_fd, arena_size, &dc->arena);
	if (ret)
		return ret;
	return dfg_alloc_init(dc->arena);
}

static void dfg_ctx_fini(struct dfg_ctx *dc)
{
	if (dc->arena)
		dfg_arena_unmap(dc->arena);
	if (dc->graph_fd >= 0)
		close(dc->graph_fd);
	if (dc->d)
		dfg_close(dc->d);
	memset(dc, 0, sizeof(*dc));
	dc->graph_fd = -1;
}

static int dfgl_create(struct link *l)
{
	int ret = dfg_chan_create(l->dc->graph_fd, dfg_arena_id(l->dc->arena),
				  l->depth, 1);

	if (ret < 0)
		return ret;
	l->chan_id = (unsigned int)ret;
	return 0;
}

/* @park: spin 0 (park at once), else the endpoint's default polling. */
static int dfgl_open_ep(struct link *l, int tx, bool park)
{
	struct dfg_chan *c;
	int ret;

	l->tx = tx;
	ret = dfg_chan_open(l->dc->graph_fd, l->chan_id,
			    tx ? DFG_CHAN_PRODUCER : DFG_CHAN_CONSUMER,
			    l->dc->arena, &c);
	if (ret)
		return ret;
	if (park)
		dfg_chan_set_spin(c, 0);
	l->chan = c;
	return 0;
}

static int dfgl_open(struct link *l, int tx)
{
	return dfgl_open_ep(l, tx, false);
}

static int dfgl_open_park(struct link *l, int tx)
{
	return dfgl_open_ep(l, tx, true);
}

static int dfgl_tx(struct link *l, const void *src, size_t len, uint64_t seq)
{
	struct dfg_desc d = { .len = (__u32)len, .tag = seq };
	__s64 off;
	void *p;
	int ret;

	for (;;) {
		off = dfg_buf_alloc(l->dc->arena, len);
		if (off != -ENOMEM)
			break;
		sched_yield();		/* consumer still holds the blocks */
	}
	if (off < 0)
		return (int)off;
	p = dfg_arena_ptr(l->dc->arena, (__u64)off, len);
	if (!p)
		return -EFAULT;
	if (src)
		memcpy(p, src, len);
	else
		fill(p, len, seq);
	d.off = (__u64)off;
	do {
		ret = dfg_chan_send(l->chan, &d, 1,
				    l->busy ? DFG_CHAN_NONBLOCK : 0);
		if (ret == -EAGAIN)
			cpu_relax();
	} while (ret == -EAGAIN);
	return ret == 1 ? 0 : ret < 0 ? ret : -EIO;
}

static int dfgl_rx(struct link *l, void *dst, size_t len, uint64_t *seq)
{
	struct dfg_desc d;
	void *p;
	int ret;

	do {
		ret = dfg_chan_recv(l->chan, &d, 1,
				    l->busy ? DFG_CHAN_NONBLOCK : 0);
		if (ret == -EAGAIN)
			cpu_relax();
	} while (ret == -EAGAIN);
	if (ret == 0)
		return 1;
	if (ret < 0)
		return ret;
	if (d.len != len)
		return -EPROTO;
	p = dfg_chan_buf(l->chan, &d);
	if (!p)
		return -EFAULT;
	if (dst)
		memcpy(dst, p, len);
	else
		sink_sum += touch(p, len);
	*seq = get_seq(p);
	return dfg_buf_free(l->dc->arena, d.off);
}

static void dfgl_stop(struct link *l)
{
	dfg_chan_close(l->chan);
	l->chan = NULL;
}

static void dfgl_close(struct link *l)
{
	if (l->chan)
		dfg_chan_close(l->chan);
	l->chan = NULL;
}

/* Zero-copy stage: descriptors from @in to @out until end of stream. */
static int dfgl_forward(struct link *in, struct link *out)
{
	int ret;

	while ((ret = dfg_chan_forward(in->chan, out->chan, 16)) > 0)
		;
	return ret;
}

static const struct link_ops dfg_ops = {
	"dfg", true, dfgl_create, dfgl_open, dfgl_tx, dfgl_rx, dfgl_stop,
	dfgl_close,
};

static const struct link_ops dfg_park_ops = {
	"dfg_park", true, dfgl_create, dfgl_open_park, dfgl_tx, dfgl_rx,
	dfgl_stop, dfgl_close,
};

static bool dfg_probe(void)
{
	struct dfg_info info;
	struct dfg *d;
	int ret;

	ret = dfg_open(&d, DFG_OPEN_NO_RING);
	if (ret) {
		fprintf(stderr, "chan_bench: /dev/dfg: %s: dfg rows left out\n",
			strerror(-ret));
		return false;
	}
	ret = dfg_info(d, &info);
	dfg_close(d);
	if (ret || !(info.features & DFG_F_CHAN)) {
		fprintf(stderr,
			"chan_bench: module without channels: dfg rows left out\n");
		return false;
	}
	return true;
}
#else
static int dfg_ctx_init(struct dfg_ctx *dc, size_t arena_size)
{
	(void)dc;
	(void)arena_size;
	return -EOPNOTSUPP;
}

static void dfg_ctx_fini(struct dfg_ctx *dc)
{
	(void)dc;
}

static int dfgl_forward(struct link *in, struct link *out)
{
	(void)in;
	(void)out;
	return -EOPNOTSUPP;
}

static bool dfg_probe(void)
{
	fprintf(stderr,
		"chan_bench: built without <dfg/chan.h>: dfg rows left out\n");
	return false;
}

static const struct link_ops dfg_ops = { "dfg", true };
static const struct link_ops dfg_park_ops = { "dfg_park", true };
#endif

/* ------------------------------------------------------------------------
 * Cases: one set of processes per case, every method (a variant) in it
 * ------------------------------------------------------------------------
 *
 * A case (one size and mode) holds a variant per method (and, for the
 * pipeline, per number of stages), each with its own links, made before
 * fork. The measuring processes (the latency pair; the stream's source and
 * sink) open the ends of every variant and serve whichever the parent
 * names on the control pipe, so dfg and its baselines run in the same
 * processes on the same CPUs. Pipeline stages are per variant (asleep
 * while another variant runs).
 */

#define MAX_LINKS	8
#define MAX_VARIANTS	8
#define MAX_PIDS	32
#define ENDS_LAST	(-2)		/* open_ends(): the variant's last link */

struct variant {
	const struct link_ops *ops;
	unsigned int	stages;		/* pipeline: forwarding stages */
	struct link	l[MAX_LINKS];
	unsigned int	nlinks;
	struct dfg_ctx	dc;
	uint64_t	seq;		/* next sequence number, per process */
	unsigned long	nops;		/* operations per timed repetition */
	double		ns[MAX_REPS];	/* ns per operation, by round */
};

struct bcase {
	size_t		size;
	int		busy;
	int		same_cpu;	/* latency: both processes on CPU 0 */
	unsigned int	depth;
	struct variant	v[MAX_VARIANTS];
	unsigned int	nv;
	int		ctl[2];		/* parent -> child: what to run */
	pid_t		pid[MAX_PIDS];
	unsigned int	npid;
};

/* A control message: run variant @idx for @n operations; @n 0 ends. */
struct ctl_msg {
	unsigned long	idx;
	unsigned long	n;
};

static void case_init(struct bcase *c, size_t size)
{
	memset(c, 0, sizeof(*c));
	c->size = size;
	c->ctl[0] = c->ctl[1] = -1;
}

static void case_add(struct bcase *c, const struct link_ops *ops,
		     unsigned int stages)
{
	c->v[c->nv].ops = ops;
	c->v[c->nv].stages = stages;
	c->nv++;
}

static int variant_setup(struct bcase *c, struct variant *v,
			 unsigned int nlinks)
{
	unsigned int i;
	int ret;

	v->nlinks = nlinks;
	v->dc.graph_fd = -1;
	if (v->ops->is_dfg) {
		/* Blocks in flight: every ring full plus one per process. */
		size_t blk = 64;
		size_t n = (size_t)nlinks * (c->depth + 2) + 4;

		while (blk < c->size)
			blk <<= 1;
		ret = dfg_ctx_init(&v->dc, n * blk + 4 * MiB);
		if (ret)
			return ret;
	}
	for (i = 0; i < nlinks; i++) {
		struct link *l = &v->l[i];

		memset(l, 0, sizeof(*l));
		l->ops = v->ops;
		l->max_len = c->size;
		l->depth = c->depth;
		l->busy = c->busy;
		l->fd[0] = l->fd[1] = l->io = -1;
		l->efd_data = l->efd_room = -1;
		l->dc = &v->dc;
		ret = l->ops->create(l);
		if (ret)
			return ret;
		v->nlinks = i + 1;
	}
	return 0;
}

/* @nlinks: links of a variant with 0 stages; each stage adds one. */
static int case_setup(struct bcase *c, unsigned int nlinks)
{
	unsigned int i;
	int ret;

	for (i = 0; i < c->nv; i++) {
		c->v[i].nlinks = 0;
		c->v[i].dc.graph_fd = -1;
	}
	for (i = 0; i < c->nv; i++) {
		ret = variant_setup(c, &c->v[i], nlinks + c->v[i].stages);
		if (ret)
			return ret;
	}
	if (pipe2(c->ctl, O_CLOEXEC))
		return -errno;
	return 0;
}

/* Parent side, after the children are gone. */
static void case_teardown(struct bcase *c)
{
	unsigned int i, j;

	for (j = 0; j < c->nv; j++) {
		struct variant *v = &c->v[j];

		for (i = 0; i < v->nlinks; i++) {
			struct link *l = &v->l[i];

			if (l->fd[0] >= 0)
				close(l->fd[0]);
			if (l->fd[1] >= 0)
				close(l->fd[1]);
			if (l->ring)
				munmap(l->ring, l->map_size);
			if (l->efd_data >= 0)
				close(l->efd_data);
			if (l->efd_room >= 0)
				close(l->efd_room);
		}
		if (v->ops->is_dfg)
			dfg_ctx_fini(&v->dc);
	}
	if (c->ctl[0] >= 0)
		close(c->ctl[0]);
	if (c->ctl[1] >= 0)
		close(c->ctl[1]);
}

static int link_index(const struct variant *v, int i)
{
	return i == ENDS_LAST ? (int)v->nlinks - 1 : i;
}

/*
 * Opens the ends this process uses (tx of link @txl, rx of link @rxl; -1
 * none, ENDS_LAST the last link) in variant @only, or in every variant
 * for @only -1, and closes every other fd, so that end of stream works.
 */
static int open_ends(struct bcase *c, int only, int txl, int rxl)
{
	unsigned int i, j;
	int ret;

	for (j = 0; j < c->nv; j++) {
		struct variant *v = &c->v[j];
		int tx = link_index(v, txl), rx = link_index(v, rxl);
		bool mine = only < 0 || (int)j == only;

		for (i = 0; i < v->nlinks; i++) {
			struct link *l = &v->l[i];

			if (mine && ((int)i == tx || (int)i == rx)) {
				ret = l->ops->open(l, (int)i == tx);
				if (ret)
					return ret;
				continue;
			}
			if (l->fd[0] >= 0)
				close(l->fd[0]);
			if (l->fd[1] >= 0)
				close(l->fd[1]);
			l->fd[0] = l->fd[1] = -1;
		}
	}
	return 0;
}

static void die_child(const char *what, int err)
{
	fprintf(stderr, "chan_bench: child %s: %s\n", what, strerror(-err));
	_exit(1);
}

static int spawn(struct bcase *c, void (*fn)(struct bcase *c, int arg),
		 int arg)
{
	pid_t pid;

	if (c->npid == MAX_PIDS)
		return -E2BIG;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		fn(c, arg);
		_exit(0);
	}
	c->pid[c->npid++] = pid;
	return 0;
}

static int reap(struct bcase *c)
{
	int bad = 0, st;
	unsigned int i;

	for (i = 0; i < c->npid; i++) {
		if (waitpid(c->pid[i], &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			bad = 1;
	}
	c->npid = 0;
	return bad ? -ECHILD : 0;
}

static void kill_children(struct bcase *c)
{
	unsigned int i;

	for (i = 0; i < c->npid; i++)
		kill(c->pid[i], SIGKILL);
	reap(c);
}

/* The child reads what to run next; 0 once the parent is done. */
static int ctl_read(struct bcase *c, struct ctl_msg *m)
{
	ssize_t r = read(c->ctl[0], m, sizeof(*m));

	return r == sizeof(*m) && m->n && m->idx < c->nv;
}

static int ctl_write(struct bcase *c, unsigned int idx, unsigned long n)
{
	struct ctl_msg m = { .idx = idx, .n = n };

	return write(c->ctl[1], &m, sizeof(m)) == sizeof(m) ? 0 : -EPIPE;
}

/*
 * One timed repetition of @nops operations of variant @idx; *@ns is its
 * time (the control message that starts it is outside).
 */
typedef int (*run_fn)(struct bcase *c, unsigned int idx, unsigned long nops,
		      uint64_t *ns);

static void sort_doubles(double *a, unsigned int n)
{
	unsigned int i, j;

	for (i = 1; i < n; i++) {	/* insertion sort */
		double v = a[i];

		for (j = i; j && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

static double median(const double *a, unsigned int n)
{
	double s[MAX_REPS];

	memcpy(s, a, n * sizeof(*a));
	sort_doubles(s, n);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/*
 * Every variant calibrated to about -t ms a repetition and warmed up;
 * then @o.reps rounds, each timing every variant once, the first of them
 * turning round by round (round r starts with variant r mod nv), so that
 * a busy moment of the host does not pick the winner. v->ns[r] is ns per
 * operation in round r.
 */
static int measure(struct bcase *c, run_fn run, unsigned long unit)
{
	unsigned int i, r, k;
	uint64_t dt;
	int ret;

	for (i = 0; i < c->nv; i++) {
		struct variant *v = &c->v[i];
		unsigned long n = unit;

		for (;;) {
			ret = run(c, i, n, &dt);
			if (ret)
				return ret;
			if (dt >= 20000000ULL || n >= (1UL << 28))
				break;
			n *= 4;
		}
		n = (unsigned long)((double)n * o.target_ms * 1e6 / (double)dt);
		v->nops = n < unit ? unit : n;
		ret = run(c, i, v->nops, &dt);	/* warm-up at full length */
		if (ret)
			return ret;
	}
	for (r = 0; r < o.reps; r++) {
		for (k = 0; k < c->nv; k++) {
			i = (r + k) % c->nv;
			ret = run(c, i, c->v[i].nops, &dt);
			if (ret)
				return ret;
			c->v[i].ns[r] = (double)dt / (double)c->v[i].nops;
		}
	}
	return 0;
}

/* --- latency: l[0] parent -> child, l[1] child -> parent ---------------- */

static void lat_child(struct bcase *c, int arg)
{
	struct ctl_msg m;
	unsigned int i;
	uint64_t seq;
	void *buf;
	int ret;

	(void)arg;
	pin(c->same_cpu ? 0 : 1);
	close(c->ctl[1]);
	ret = open_ends(c, -1, 1, 0);
	if (ret)
		die_child("open", ret);
	buf = aligned_alloc(4096, (c->size + 4095) & ~4095UL);
	if (!buf)
		die_child("alloc", -ENOMEM);
	while (ctl_read(c, &m)) {
		struct variant *v = &c->v[m.idx];

		/* echo until the parent's SEQ_STOP ends the repetition */
		for (;;) {
			ret = v->l[0].ops->rx(&v->l[0], buf, c->size, &seq);
			if (ret)
				die_child("rx", ret < 0 ? ret : -EPIPE);
			if (seq == SEQ_STOP)
				break;
			if (seq != v->seq)
				die_child("sequence", -EPROTO);
			v->seq++;
			ret = v->l[1].ops->tx(&v->l[1], buf, c->size, seq);
			if (ret)
				die_child("tx", ret);
		}
	}
	for (i = 0; i < c->nv; i++) {
		c->v[i].l[1].ops->stop(&c->v[i].l[1]);
		c->v[i].l[0].ops->close(&c->v[i].l[0]);
		c->v[i].l[1].ops->close(&c->v[i].l[1]);
	}
	_exit(0);
}

static void *lat_src, *lat_dst;

static int lat_run(struct bcase *c, unsigned int idx, unsigned long nops,
		   uint64_t *ns)
{
	struct variant *v = &c->v[idx];
	struct link *out = &v->l[0], *in = &v->l[1];
	const uint64_t stop = SEQ_STOP;
	unsigned long i;
	uint64_t seq, t0;
	int ret;

	ret = ctl_write(c, idx, nops);
	if (ret)
		return ret;
	t0 = now_ns();
	for (i = 0; i < nops; i++) {
		memcpy(lat_src, &v->seq, sizeof(v->seq));
		ret = out->ops->tx(out, lat_src, c->size, v->seq);
		if (ret)
			return ret;
		ret = in->ops->rx(in, lat_dst, c->size, &seq);
		if (ret)
			return ret < 0 ? ret : -EPIPE;
		if (seq != v->seq)
			return -EPROTO;
		v->seq++;
	}
	*ns = now_ns() - t0;
	memcpy(lat_src, &stop, sizeof(stop));
	return out->ops->tx(out, lat_src, c->size, SEQ_STOP);
}

static int lat_case(struct bcase *c)
{
	size_t sz = (c->size + 4095) & ~4095UL;
	unsigned int i;
	uint64_t seq;
	int ret;

	c->depth = 8;
	ret = case_setup(c, 2);
	if (ret)
		goto out;
	ret = spawn(c, lat_child, 0);
	if (ret)
		goto out;
	pin(0);
	close(c->ctl[0]);
	c->ctl[0] = -1;
	ret = open_ends(c, -1, 0, 1);
	if (ret)
		goto out_kill;
	lat_src = aligned_alloc(4096, sz);
	lat_dst = aligned_alloc(4096, sz);
	if (!lat_src || !lat_dst) {
		ret = -ENOMEM;
		goto out_kill;
	}
	fill(lat_src, c->size, 0);
	ret = measure(c, lat_run, o.quick ? 8 : 32);
	if (ret)
		goto out_kill;
	close(c->ctl[1]);		/* the child ends every stream */
	c->ctl[1] = -1;
	for (i = 0; i < c->nv; i++) {
		struct variant *v = &c->v[i];

		v->l[0].ops->stop(&v->l[0]);
		while (!v->l[1].ops->rx(&v->l[1], lat_dst, c->size, &seq))
			;
		v->l[0].ops->close(&v->l[0]);
		v->l[1].ops->close(&v->l[1]);
	}
	ret = reap(c);
	goto out;
out_kill:
	kill_children(c);
out:
	free(lat_src);
	free(lat_dst);
	lat_src = lat_dst = NULL;
	pin(-1);
	case_teardown(c);
	return ret;
}

/*
 * --- throughput and pipeline: source -> l[0] -> stage -> l[1] ... -> sink
 * The source (a child) reads {variant, count} from ctl and sends that many
 * messages on the variant's first link; count 0 ends every stream. The
 * sink is the parent, which times.
 */

static void src_child(struct bcase *c, int cpu)
{
	struct ctl_msg m;
	unsigned long i;
	unsigned int j;
	int ret;

	pin(cpu);
	close(c->ctl[1]);
	ret = open_ends(c, -1, 0, -1);
	if (ret)
		die_child("open", ret);
	while (ctl_read(c, &m)) {
		struct link *l = &c->v[m.idx].l[0];

		for (i = 0; i < m.n; i++) {
			ret = l->ops->tx(l, NULL, c->size, c->v[m.idx].seq++);
			if (ret)
				die_child("tx", ret);
		}
	}
	for (j = 0; j < c->nv; j++) {
		c->v[j].l[0].ops->stop(&c->v[j].l[0]);
		c->v[j].l[0].ops->close(&c->v[j].l[0]);
	}
	_exit(0);
}

/* Stage @arg & 0xff of variant @arg >> 8. */
static void stage_child(struct bcase *c, int arg)
{
	struct variant *v = &c->v[arg >> 8];
	int k = arg & 0xff;
	struct link *in = &v->l[k - 1], *out = &v->l[k];
	uint64_t seq;
	void *buf;
	int ret;

	close(c->ctl[0]);
	close(c->ctl[1]);
	ret = open_ends(c, arg >> 8, k, k - 1);
	if (ret)
		die_child("open", ret);
	if (in->ops->is_dfg) {
		ret = dfgl_forward(in, out);
		if (ret < 0)
			die_child("forward", ret);
	} else {
		buf = aligned_alloc(4096, (c->size + 4095) & ~4095UL);
		if (!buf)
			die_child("alloc", -ENOMEM);
		for (;;) {
			ret = in->ops->rx(in, buf, c->size, &seq);
			if (ret == 1)
				break;
			if (ret)
				die_child("rx", ret);
			ret = out->ops->tx(out, buf, c->size, seq);
			if (ret)
				die_child("tx", ret);
		}
	}
	out->ops->stop(out);
	in->ops->close(in);
	out->ops->close(out);
	_exit(0);
}

static int stream_run(struct bcase *c, unsigned int idx, unsigned long nops,
		      uint64_t *ns)
{
	struct variant *v = &c->v[idx];
	struct link *l = &v->l[v->nlinks - 1];
	unsigned long i;
	uint64_t seq, t0;
	int ret;

	ret = ctl_write(c, idx, nops);
	if (ret)
		return ret;
	t0 = now_ns();
	for (i = 0; i < nops; i++) {
		ret = l->ops->rx(l, NULL, c->size, &seq);
		if (ret)
			return ret < 0 ? ret : -EPIPE;
		if (seq != v->seq)
			return -EPROTO;
		v->seq++;
	}
	*ns = now_ns() - t0;
	return 0;
}

/* @pinned: source on CPU 1 and sink on CPU 0 (throughput), else free. */
static int stream_case(struct bcase *c, bool pinned)
{
	unsigned int i, k;
	uint64_t seq;
	int ret;

	ret = case_setup(c, 1);
	if (ret)
		goto out;
	ret = spawn(c, src_child, pinned ? 1 : -1);
	if (ret)
		goto out_kill;
	for (i = 0; i < c->nv; i++) {
		for (k = 1; k <= c->v[i].stages; k++) {
			ret = spawn(c, stage_child, (int)(i << 8 | k));
			if (ret)
				goto out_kill;
		}
	}
	if (pinned)
		pin(0);
	close(c->ctl[0]);
	c->ctl[0] = -1;
	ret = open_ends(c, -1, -1, ENDS_LAST);
	if (ret)
		goto out_kill;
	ret = measure(c, stream_run, c->size >= MiB ? 4 : 64);
	if (ret)
		goto out_kill;
	close(c->ctl[1]);		/* the source ends every stream */
	c->ctl[1] = -1;
	for (i = 0; i < c->nv; i++) {
		struct link *last = &c->v[i].l[c->v[i].nlinks - 1];

		while (!last->ops->rx(last, NULL, c->size, &seq))
			;
		last->ops->close(last);
	}
	ret = reap(c);
	goto out;
out_kill:
	kill_children(c);
out:
	if (pinned)
		pin(-1);
	case_teardown(c);
	return ret;
}

/* ------------------------------------------------------------------------
 * Tables
 * ------------------------------------------------------------------------
 */

struct row {
	const char	*method;
	size_t		size;
	const char	*mode;
	unsigned int	stages;
	double		val[MAX_REPS];	/* by round: ns per round trip, MB/s */
	double		ns[MAX_REPS];	/* by round: ns per message */
	double		value;		/* medians over the rounds */
	double		ns_per_msg;
	int		ok;
};

/*
 * The @method row measured like @r (same size, mode and stages) among
 * @rows[0, @n), or NULL: the baseline of a ratio.
 */
static const struct row *like_row(const struct row *rows, unsigned int n,
				  const char *method, const struct row *r)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (rows[i].ok && !strcmp(rows[i].method, method) &&
		    rows[i].size == r->size && rows[i].stages == r->stages &&
		    !strcmp(rows[i].mode ?: "", r->mode ?: ""))
			return &rows[i];
	return NULL;
}

/* Ratio @r / @base round by round (same processes, same round). */
struct ratio {
	double	med, min, max;
	double	per[MAX_REPS];
};

static bool ratio_of(const struct row *r, const struct row *base,
		     struct ratio *q)
{
	double s[MAX_REPS];
	unsigned int i;

	if (!base)
		return false;
	for (i = 0; i < o.reps; i++)
		q->per[i] = base->val[i] ? r->val[i] / base->val[i] : 0;
	memcpy(s, q->per, o.reps * sizeof(*s));
	sort_doubles(s, o.reps);
	q->med = median(q->per, o.reps);
	q->min = s[0];
	q->max = s[o.reps - 1];
	return true;
}

static const char *size_str(size_t s)
{
	static char b[4][24];
	static int i;
	char *p = b[i++ & 3];

	if (s >= MiB)
		snprintf(p, 24, "%zuMiB", s / MiB);
	else if (s >= KiB)
		snprintf(p, 24, "%zuKiB", s / KiB);
	else
		snprintf(p, 24, "%zuB", s);
	return p;
}

static const struct link_ops *const lat_methods[] = {
	&dfg_ops, &dfg_park_ops, &pipe_ops, &unix_ops, &ring_ops,
};
static const struct link_ops *const tput_methods[] = {
	&dfg_ops, &dfg_park_ops, &pipe_ops, &unix_ops, &cma_ops, &ring_ops,
};
static const struct link_ops *const pipe_methods[] = {
	&dfg_ops, &dfg_park_ops, &pipe_ops,
};
static const size_t lat_sizes[] = { 8, 4 * KiB };
static const size_t tput_sizes[] = { 64, 4 * KiB, 64 * KiB, MiB };
static const size_t pipe_sizes[] = { 64 * KiB, MiB };
static const unsigned int pipe_stages[] = { 1, 5 };

static FILE *csv_open(const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", o.dir, name);
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "chan_bench: %s: %s\n", path, strerror(errno));
	return f;
}

static double mbps(size_t size, double ns_per_msg)
{
	return (double)size / ns_per_msg * 1e3;	/* bytes/ns -> MB/s */
}

/*
 * Rows of case @c (measured: @ok) from @rows[*@n] on: medians over the
 * rounds; @tput: values in MB/s, else ns per operation. Mode @mode, or
 * "<K>stage" for a variant with K stages.
 */
static void case_rows(const struct bcase *c, int ok, const char *mode,
		      bool tput, struct row *rows, unsigned int *n)
{
	static const char *const stage_modes[MAX_LINKS] = {
		"", "1stage", "2stage", "3stage", "4stage", "5stage",
		"6stage", "7stage",
	};
	unsigned int i, r;

	for (i = 0; i < c->nv; i++) {
		const struct variant *v = &c->v[i];
		struct row *w = &rows[(*n)++];

		*w = (struct row){ .method = v->ops->name, .size = c->size,
				   .mode = v->stages ? stage_modes[v->stages] :
				   mode, .stages = v->stages, .ok = ok };
		if (!ok)
			continue;
		for (r = 0; r < o.reps; r++) {
			w->ns[r] = v->ns[r];
			w->val[r] = tput ? mbps(c->size, v->ns[r]) : v->ns[r];
		}
		w->ns_per_msg = median(w->ns, o.reps);
		w->value = median(w->val, o.reps);
	}
}

/*
 * @name.csv: per row the median over the rounds and the per-round ratio
 * to @base (median, min, max) after the columns the plots read;
 * @name_rounds.csv: every round. @extra prints a row's trailing columns.
 */
static int write_csv(const char *name, const char *header, const char *unit,
		     const struct row *rows, unsigned int n, const char *base,
		     void (*extra)(FILE *f, const struct row *rows,
				   unsigned int n, const struct row *r))
{
	char file[128];
	unsigned int j, r;
	struct ratio q;
	FILE *f, *fr;

	snprintf(file, sizeof(file), "%s.csv", name);
	f = csv_open(file);
	snprintf(file, sizeof(file), "%s_rounds.csv", name);
	fr = csv_open(file);
	if (!f || !fr) {
		if (f)
			fclose(f);
		if (fr)
			fclose(fr);
		return 1;
	}
	fprintf(f, "%s,ratio_min,ratio_max,rounds\n", header);
	fprintf(fr, "method,size,mode,stages,round,value,unit,ns_per_msg,ratio_to_baseline,baseline\n");
	for (j = 0; j < n; j++) {
		const struct row *w = &rows[j];
		bool has = ratio_of(w, like_row(rows, n, base, w), &q);

		if (!w->ok)
			continue;
		fprintf(f, "%s,%zu,%s,%.2f,%s,%.4f,%s", w->method, w->size,
			w->mode, w->value, unit, has ? q.med : 0, base);
		if (w->stages)
			fprintf(f, "_%ustage", w->stages);
		extra(f, rows, n, w);
		fprintf(f, ",%.4f,%.4f,%u\n", has ? q.min : 0,
			has ? q.max : 0, o.reps);
		for (r = 0; r < o.reps; r++)
			fprintf(fr, "%s,%zu,%s,%u,%u,%.2f,%s,%.1f,%.4f,%s\n",
				w->method, w->size, w->mode, w->stages, r,
				w->val[r], unit, w->ns[r],
				has ? q.per[r] : 0, base);
	}
	fclose(f);
	fclose(fr);
	return 0;
}

/* The table on stdout: medians and the ratio's median [min, max]. */
static void print_rows(const struct row *rows, unsigned int n,
		       unsigned int from, const char *base)
{
	unsigned int j;
	struct ratio q;

	for (j = from; j < n; j++) {
		const struct row *w = &rows[j];

		if (!w->ok)
			continue;
		if (!ratio_of(w, like_row(rows, n, base, w), &q))
			q.med = q.min = q.max = 0;
		printf("%-8s %6s %7s %6u %12.1f %12.0f %7.3f [%.3f, %.3f]\n",
		       w->method, size_str(w->size), w->mode, w->stages,
		       w->value, w->ns_per_msg, q.med, q.min, q.max);
	}
	fflush(stdout);
}

/*
 * Case @c of @bench ran and returned @ret: its rows from @rows[*@n] on
 * (see case_rows()), printed. Returns 1 if it failed.
 */
static int case_done(const char *bench, const struct bcase *c, int ret,
		     const char *mode, bool tput, struct row *rows,
		     unsigned int *n)
{
	unsigned int from = *n;

	if (ret)
		fprintf(stderr, "chan_bench: %s %s %s: %s\n", bench,
			size_str(c->size), mode ?: "", strerror(-ret));
	case_rows(c, !ret, mode, tput, rows, n);
	print_rows(rows, *n, from, "pipe");
	return !!ret;
}

static void print_header(const char *what)
{
	printf("# %s; %u rounds, order turning, medians and x %s per round\n",
	       what, o.reps, "pipe");
	printf("%-8s %6s %7s %6s %12s %12s %s\n", "method", "size", "mode",
	       "stages", "value", "ns/msg", "x pipe median [min, max]");
}

static void lat_extra(FILE *f, const struct row *rows, unsigned int n,
		      const struct row *r)
{
	(void)rows;
	(void)n;
	fprintf(f, ",%s", ncpus > 1 && strcmp(r->mode, "block1") ? "0+1" : "0");
}

static int bench_latency(void)
{
	static const char *const modes[] = { "block", "busy", "block1" };
	static struct row rows[ARRAY_SIZE(modes) * ARRAY_SIZE(lat_sizes) *
			       ARRAY_SIZE(lat_methods)];
	unsigned int n = 0, i, m, b;
	static struct bcase c;
	int fail = 0;

	print_header("latency: ping-pong round trip (value ns), parent on CPU 0, child on CPU 1 (block1: both on CPU 0)");
	for (b = 0; b < ARRAY_SIZE(modes); b++) {
		for (i = 0; i < ARRAY_SIZE(lat_sizes); i++) {
			case_init(&c, lat_sizes[i]);
			c.busy = b == 1;
			c.same_cpu = b == 2;
			for (m = 0; m < ARRAY_SIZE(lat_methods); m++) {
				if (lat_methods[m]->is_dfg && !dfg_ok)
					continue;
				/* Busy-poll never parks: one dfg row. */
				if (lat_methods[m] == &dfg_park_ops && c.busy)
					continue;
				case_add(&c, lat_methods[m], 0);
			}
			fail |= case_done("latency", &c, lat_case(&c),
					  modes[b], false, rows, &n);
		}
	}
	return write_csv("chan_latency",
			 "method,size,mode,value,unit,ratio_to_baseline,baseline,cpus",
			 "ns_per_roundtrip", rows, n, "pipe", lat_extra) | fail;
}

static void tput_extra(FILE *f, const struct row *rows, unsigned int n,
		       const struct row *r)
{
	(void)rows;
	(void)n;
	fprintf(f, ",%.1f", r->ns_per_msg);
}

static int bench_throughput(void)
{
	static struct row rows[ARRAY_SIZE(tput_sizes) *
			       ARRAY_SIZE(tput_methods)];
	unsigned int n = 0, i, m;
	static struct bcase c;
	int fail = 0;

	print_header("throughput: one-way stream (value MB/s), producer on CPU 1, consumer on CPU 0");
	for (i = 0; i < ARRAY_SIZE(tput_sizes); i++) {
		case_init(&c, tput_sizes[i]);
		c.depth = c.size >= MiB ? 16 : 64;
		for (m = 0; m < ARRAY_SIZE(tput_methods); m++)
			if (!tput_methods[m]->is_dfg || dfg_ok)
				case_add(&c, tput_methods[m], 0);
		fail |= case_done("throughput", &c, stream_case(&c, true),
				  "stream", true, rows, &n);
	}
	return write_csv("chan_throughput",
			 "method,size,mode,value,unit,ratio_to_baseline,baseline,ns_per_msg",
			 "MB/s", rows, n, "pipe", tput_extra) | fail;
}

/* stages, ratio to the same method with one stage (same round), ns/msg */
static void pipe_extra(FILE *f, const struct row *rows, unsigned int n,
		       const struct row *r)
{
	struct row single = { .size = r->size, .mode = "1stage", .stages = 1 };
	struct ratio q;
	bool has = ratio_of(r, like_row(rows, n, r->method, &single), &q);

	fprintf(f, ",%u,%.4f,%.1f", r->stages, has ? q.med : 0,
		r->ns_per_msg);
}

static int bench_pipeline(void)
{
	static struct row rows[ARRAY_SIZE(pipe_methods) *
			       ARRAY_SIZE(pipe_sizes) *
			       ARRAY_SIZE(pipe_stages)];
	unsigned int n = 0, i, m, s;
	static struct bcase c;
	int fail = 0;

	print_header("pipeline: source -> K stages -> sink (value MB/s), unpinned");
	for (i = 0; i < ARRAY_SIZE(pipe_sizes); i++) {
		case_init(&c, pipe_sizes[i]);
		c.depth = c.size >= MiB ? 8 : 32;
		for (s = 0; s < ARRAY_SIZE(pipe_stages); s++)
			for (m = 0; m < ARRAY_SIZE(pipe_methods); m++)
				if (!pipe_methods[m]->is_dfg || dfg_ok)
					case_add(&c, pipe_methods[m],
						 pipe_stages[s]);
		fail |= case_done("pipeline", &c, stream_case(&c, false),
				  NULL, true, rows, &n);
	}
	return write_csv("chan_pipeline",
			 "method,size,mode,value,unit,ratio_to_baseline,baseline,stages,ratio_to_1stage,ns_per_msg",
			 "MB/s", rows, n, "pipe", pipe_extra) | fail;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-d DIR] [-r ROUNDS] [-t MS] [-q] [-b latency|throughput|pipeline]\n"
		"  -d DIR     where the CSVs go (default bench/results)\n"
		"  -r ROUNDS  rounds per case, each timing every method once (5)\n"
		"  -t MS      length of one timed repetition (250)\n"
		"  -q         quick: -r 3 -t 15 (also if $DFG_BENCH_QUICK is set)\n"
		"  -b NAME    run one benchmark only\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *quick = getenv("DFG_BENCH_QUICK");
	int opt, fail = 0;

	if (quick && *quick && strcmp(quick, "0"))
		o.quick = 1;
	while ((opt = getopt(argc, argv, "d:r:t:qb:h")) != -1) {
		switch (opt) {
		case 'd':
			o.dir = optarg;
			break;
		case 'r':
			o.reps = strtoul(optarg, NULL, 0);
			break;
		case 't':
			o.target_ms = strtoul(optarg, NULL, 0);
			break;
		case 'q':
			o.quick = 1;
			break;
		case 'b':
			o.only = optarg;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (o.quick) {
		o.reps = 3;
		o.target_ms = 15;
	}
	if (!o.reps || o.reps > MAX_REPS || !o.target_ms)
		usage(argv[0]);
	signal(SIGPIPE, SIG_IGN);
	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus < 1)
		ncpus = 1;
	if (ncpus > 2)
		ncpus = 2;
	dfg_ok = dfg_probe();

	if (!o.only || !strcmp(o.only, "latency"))
		fail |= bench_latency();
	if (!o.only || !strcmp(o.only, "throughput"))
		fail |= bench_throughput();
	if (!o.only || !strcmp(o.only, "pipeline"))
		fail |= bench_pipeline();
	return fail;
}
