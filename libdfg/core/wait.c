// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg: the thread's wait ring. Every place where the runtime blocks in
 * the module (a channel WAIT, a team WAIT, a scheduler NEXT) sends its
 * command as an SQE on a ring of the calling thread, so that a thread
 * waits in io_uring_enter() only, and an application can put its own
 * requests (other dfg waits, reads, timers) on the same ring and sleep on
 * all of them at once (dfg_wait_ring(), dfg_chan_prep_wait()).
 *
 * The ring is SQE128|CQE32, DFG_WAIT_RING_ENTRIES deep, made at the
 * thread's first wait and released by a pthread key destructor when the
 * thread exits. A process that sets DFG_NO_URING (non-empty, not "0")
 * gets none, and neither does a thread whose ring cannot be made (io_uring
 * disabled, out of memory): their waits are ioctls, which behave the same.
 *
 * Which path a wait takes. A lone wait, with nothing of the application on
 * the thread's ring, is cheaper over ioctl on Linux 6.1: the ring adds an
 * io_uring request's life (submission, io_uring_cmd_prep(), the parked
 * waiter's allocation, the CQE post and the CQ wait) to the same sleep
 * and wakeup, about 30% more kernel functions entered per round trip, and
 * a slower parked round trip (README, "Command round trip"). Such a wait
 * gains nothing from the ring: libdfg's own waits are one at a time and
 * block until their own completion. So a thread's waits go through ioctl
 * until the application takes the thread's ring with dfg_wait_ring(),
 * and through the ring from then on (until a fork gives the child a ring
 * of its own): then a library wait submits what the application queued
 * and sleeps in the same io_uring_enter() as the application's requests.
 * DFG_WAIT_URING (non-empty, not "0", read at a thread's first wait)
 * sends every wait of the thread through the ring, shared or not (the tests and the benchmarks of the
 * ring path); DFG_NO_URING, which wins over it, sends every wait through
 * ioctl and gives no ring at all.
 *
 * Fork: the child inherits the forking thread's pointer to a ring whose
 * memory and file it shares with the parent; using it would mix the two
 * processes' completions. A fork handler bumps a generation; a ring made
 * in an older one is dropped (the child's copies of the mapping and
 * descriptor only) and a new one made on the next wait.
 *
 * Cancelation: Linux 6.1 cannot cancel a parked uring_cmd
 * (IORING_OP_ASYNC_CANCEL does not reach it); a parked wait ends only by
 * its event, the exit of the submitting thread or the ring's teardown, or
 * the death of its object. So the library never gives up a wait it
 * submitted: __dfg_ring_cmd() reaps its CQE, keyed by a user_data that
 * is an address in its own frame, whatever happens, and leaves every
 * other CQE in place for the ring's owner. Timeouts are the kernel's
 * (TEAM_WAIT's timeout_ns completes the command), never an abandoned SQE.
 * A signal runs its handler while the thread waits; what follows is what
 * the ioctl path did: a channel wait goes on (chan.c retried after
 * -EINTR anyway), a team wait wakes its own word (spurious wakeups are
 * part of TEAM_WAIT's contract) and returns -EINTR once its CQE is in, and
 * a scheduler NEXT goes on, since its completion may hand the thread a
 * set that must not be lost. The kernel's -EBUSY (dfg.max_parked parked
 * commands on the file) sends the wait through ioctl instead, which does
 * not park and has no such limit.
 */
#include <pthread.h>
#include <stdlib.h>

#include "sys.h"

/* Entries of a thread's wait ring: a few waits and the owner's requests. */
#define DFG_WAIT_RING_ENTRIES	16

/*
 * struct dfg_wring - a thread's wait ring
 * @ring:	SQE128|CQE32 ring, valid when @up
 * @up:		@ring was made
 * @gen:	fork generation @ring was made in
 */
struct dfg_wring {
	struct io_uring	ring;
	bool		up;
	unsigned int	gen;
};

enum {
	WRING_UNSET,	/* the thread has not waited yet */
	WRING_UP,	/* tls_wring is its ring */
	WRING_OFF,	/* waits go through ioctl */
};

static __thread struct dfg_wring *tls_wring;
static __thread int tls_state;
static __thread unsigned int tls_gen;
static __thread int tls_err;	/* why WRING_OFF: -EOPNOTSUPP or -errno */
/* dfg_wait_ring() gave the application tls_wring (in generation tls_gen). */
static __thread bool tls_shared;
/* DFG_WAIT_URING, read at the thread's first wait: 1 set, -1 not. */
static __thread int tls_force;

static pthread_once_t wring_once = PTHREAD_ONCE_INIT;
static pthread_key_t wring_key;
static bool wring_key_ok;
/* Bumped in the child of every fork (pthread_atfork). */
static unsigned int fork_gen;

static void wring_free(struct dfg_wring *w)
{
	int saved = errno;

	if (w->up)
		io_uring_queue_exit(&w->ring);
	free(w);
	errno = saved;
}

/* pthread key destructor: the thread exits with its ring. */
static void wring_dtor(void *p)
{
	wring_free(p);
}

static void wring_atfork_child(void)
{
	__atomic_add_fetch(&fork_gen, 1, __ATOMIC_RELAXED);
}

static void wring_init_once(void)
{
	wring_key_ok = !pthread_key_create(&wring_key, wring_dtor) &&
		       !pthread_atfork(NULL, NULL, wring_atfork_child);
}

/* Environment variable @name set to anything but "" or "0". */
static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && !(v[0] == '0' && !v[1]);
}

static bool wring_disabled(void)
{
	return env_on("DFG_NO_URING");
}

/*
 * The calling thread's ring: made at its first wait (and after a fork),
 * NULL when it has none. Fails to none rather than to an error: the
 * ioctl path is always there.
 */
static struct io_uring *wring_get(void)
{
	unsigned int gen = __atomic_load_n(&fork_gen, __ATOMIC_RELAXED);
	int saved = errno;
	struct dfg_wring *w;

	if (tls_state != WRING_UNSET && tls_gen == gen)
		return tls_state == WRING_UP ? &tls_wring->ring : NULL;

	if (tls_wring) {
		/* Made before a fork: the child lets go of its copy. */
		if (wring_key_ok)
			pthread_setspecific(wring_key, NULL);
		wring_free(tls_wring);
		tls_wring = NULL;
	}
	tls_gen = gen;
	tls_shared = false;
	tls_state = WRING_OFF;
	tls_err = -EOPNOTSUPP;
	if (wring_disabled())
		goto out;
	tls_err = -ENOMEM;
	pthread_once(&wring_once, wring_init_once);
	if (!wring_key_ok)
		goto out;
	w = calloc(1, sizeof(*w));
	if (!w)
		goto out;
	tls_err = dfg_queue_init(DFG_WAIT_RING_ENTRIES, &w->ring, 0);
	if (tls_err < 0) {
		free(w);
		goto out;
	}
	w->up = true;
	w->gen = gen;
	tls_err = -ENOMEM;
	if (pthread_setspecific(wring_key, w)) {
		wring_free(w);
		goto out;
	}
	tls_wring = w;
	tls_state = WRING_UP;
out:
	errno = saved;
	return tls_state == WRING_UP ? &tls_wring->ring : NULL;
}

int dfg_wait_ring(struct io_uring **ringp)
{
	struct io_uring *ring;

	if (!ringp)
		return -EINVAL;
	ring = wring_get();
	if (!ring)
		return tls_err;
	tls_shared = true;
	*ringp = ring;
	return 0;
}

/*
 * The ring a library wait goes on, or NULL for ioctl: the thread's ring
 * once the application shares it (or with DFG_WAIT_URING), see the top.
 */
static struct io_uring *wring_for_wait(void)
{
	unsigned int gen = __atomic_load_n(&fork_gen, __ATOMIC_RELAXED);

	if (tls_shared && tls_gen == gen && tls_state == WRING_UP)
		return &tls_wring->ring;
	if (!tls_force)
		tls_force = env_on("DFG_WAIT_URING") ? 1 : -1;
	return tls_force > 0 ? wring_get() : NULL;
}

int dfg_sys_wait(int fd, __u32 cmd_op, void *args, void *retry, __u64 *res2,
		 const struct dfg_intr *intr)
{
	struct io_uring *ring = wring_for_wait();
	int ret;

	if (ring) {
		ret = __dfg_ring_cmd(ring, fd, cmd_op, args, res2, intr);
		if (ret != -EBUSY)
			return ret;
		if (retry)
			args = retry;
	}
	if (res2)
		*res2 = 0;
	return dfg_sys_cmd(fd, cmd_op, args);
}
