// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * exec: an external program as a component (the patent's interface
 * component for legacy programs). Elements go to the program's standard
 * input as lines, the lines it writes to its standard output are emitted.
 * Not foldable: it waits on another process.
 *
 * The program runs as /bin/sh -c "cmd". Its standard input is one end of
 * a socket pair, written with MSG_NOSIGNAL, so a program that stops
 * reading (head) gives EPIPE instead of killing us with SIGPIPE; the rest
 * of the input is then dropped, as in a shell pipeline. Writes and reads
 * are interleaved with poll(), so a program whose output fills its pipe
 * while we write never deadlocks us. At shutdown its input is closed, its
 * output read to the end, and it is reaped: a nonzero exit or a signal
 * fails the component. Without an input, it is a root whose elements are
 * the program's output.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "comp_impl.h"
#include "param.h"

/* Parameters (dfg_component(7)). */
static const struct dfg_param_decl exec_decls[] = {
	{ .name = "cmd", .kind = DFG_PARAM_STRING, .flags = DFG_PARAM_REQUIRED,
	  .help = "shell command: elements in on its input, out of its output" },
	{ NULL },
};

extern char **environ;

#define EXEC_BATCH	(64 * 1024)	/* input buffered before a write */
#define EXEC_READ	(64 * 1024)	/* output taken per read */
/*
 * Pipe and socket buffers asked for: a 64 KiB batch each way fits many
 * times over, so neither side waits for the other batch by batch. The
 * kernel may give less (pipe-max-size, wmem_max): then the default stays.
 */
#define EXEC_PIPE	(1024 * 1024)
#define EXEC_READ	(64 * 1024)

/*
 * struct runner - one child
 * @pid:	the child, 0 once reaped
 * @in:		our end of its standard input, -1 once closed
 * @out:	read end of its standard output, -1 at EOF
 * @pending:	input not yet written
 * @lines:	output not yet emitted (a line without its newline yet)
 * @cmd:	the command, for messages
 */
struct runner {
	pid_t		pid;
	int		in, out;
	struct comp_buf	pending;
	size_t		pending_off;
	struct comp_buf	lines;
	const char	*cmd;
};

static void exec_fini(struct dfg_comp *c)
{
	struct runner *r = dfg_comp_state(c);
	int status;

	if (r->in >= 0)
		close(r->in);
	if (r->out >= 0)
		close(r->out);
	if (r->pid > 0) {	/* failed before shutdown: do not wait for it */
		kill(-r->pid, SIGKILL);	/* the shell and what it started */
		while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	free(r->pending.p);
	free(r->lines.p);
	free(r);
}

static int exec_init(struct dfg_comp *c, void **state)
{
	const char *cmd = dfg_comp_param(c, "cmd", NULL);
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int sv[2], pv[2], ret;
	struct runner *r;
	char *argv[4];

	if (!cmd || !*cmd)
		return dfg_comp_error(c, -EINVAL, "parameter cmd is required");
	r = calloc(1, sizeof(*r));
	if (!r)
		return dfg_comp_error(c, -ENOMEM, "out of memory");
	r->in = r->out = -1;
	r->cmd = cmd;
	*state = r;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		ret = dfg_comp_error(c, -errno, "socketpair: %s",
				     strerror(errno));
		goto fail;
	}
	if (pipe2(pv, O_CLOEXEC)) {
		ret = dfg_comp_error(c, -errno, "pipe: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		goto fail;
	}
	/* glibc's init functions cannot fail */
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	ret = posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
	if (!ret)
		ret = posix_spawn_file_actions_adddup2(&fa, pv[1], 1);
	/* its own process group, so that an early end kills all of it */
	if (!ret)
		ret = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	if (!ret)
		ret = posix_spawnattr_setpgroup(&attr, 0);
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = (char *)cmd;
	argv[3] = NULL;
	if (!ret)
		ret = posix_spawn(&r->pid, "/bin/sh", &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	close(sv[1]);
	close(pv[1]);
	r->in = sv[0];
	r->out = pv[0];
	if (ret) {
		r->pid = 0;
		ret = dfg_comp_error(c, -ret, "cannot start /bin/sh: %s",
				     strerror(ret));
		goto fail;
	}
	(void)fcntl(r->out, F_SETPIPE_SZ, EXEC_PIPE);
	(void)setsockopt(r->in, SOL_SOCKET, SO_SNDBUF, &(int){ EXEC_PIPE },
			 sizeof(int));
	if (fcntl(r->in, F_SETFL, O_NONBLOCK) ||
	    fcntl(r->out, F_SETFL, O_NONBLOCK)) {
		ret = dfg_comp_error(c, -errno, "fcntl: %s", strerror(errno));
		goto fail;
	}
	if (!dfg_comp_nr_in(c)) {	/* a root: the child reads nothing */
		close(r->in);
		r->in = -1;
	}
	return 0;
fail:
	exec_fini(c);
	return ret;
}

/* Emits the complete lines of @r->lines (all of it at EOF). */
static int exec_emit_lines(struct dfg_comp *c, struct runner *r, bool eof)
{
	size_t start = 0;
	char *nl;
	int ret = 0;

	while (!ret && start < r->lines.len) {
		struct dfg_elem e = { .data = r->lines.p + start };

		nl = memchr(r->lines.p + start, '\n', r->lines.len - start);
		if (!nl && !eof)
			break;
		e.len = nl ? (size_t)(nl - (r->lines.p + start)) :
			     r->lines.len - start;
		start += e.len + (nl != NULL);
		ret = dfg_emit(c, 0, &e);
	}
	if (start) {
		memmove(r->lines.p, r->lines.p + start, r->lines.len - start);
		r->lines.len -= start;
	}
	return ret;
}

/*
 * One read of the child's output, straight into @r->lines after what is
 * left of the last one; 0 at EOF sets @r->out to -1.
 */
static int exec_read(struct dfg_comp *c, struct runner *r)
{
	struct comp_buf *b = &r->lines;
	ssize_t n;

	if (b->cap - b->len < EXEC_READ) {
		/* doubling: a line longer than a read grows in O(log n) */
		size_t cap = b->len + EXEC_READ > 2 * b->cap ?
			     b->len + EXEC_READ : 2 * b->cap;
		char *p = realloc(b->p, cap);

		if (!p)
			return dfg_comp_error(c, -ENOMEM, "out of memory");
		b->p = p;
		b->cap = cap;
	}
	n = read(r->out, b->p + b->len, EXEC_READ);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n < 0)
		return dfg_comp_error(c, -errno, "reading from '%s': %s",
				      r->cmd, strerror(errno));
	if (!n) {
		close(r->out);
		r->out = -1;
		return exec_emit_lines(c, r, true);
	}
	b->len += (size_t)n;
	return exec_emit_lines(c, r, false);
}

/*
 * Writes all pending input (dropping it if the child closed its input)
 * while reading its output; with @to_eof, then closes the input and
 * reads the output to its end.
 */
static int exec_pump(struct dfg_comp *c, struct runner *r, bool to_eof)
{
	int ret;

	for (;;) {
		bool writing = r->in >= 0 &&
			       r->pending_off < r->pending.len;
		struct pollfd p[2] = {
			{ .fd = writing ? r->in : -1, .events = POLLOUT },
			{ .fd = r->out, .events = POLLIN },
		};

		if (!writing) {
			r->pending.len = r->pending_off = 0;
			if (to_eof && r->in >= 0) {
				close(r->in);
				r->in = -1;
			}
			if (!to_eof || r->out < 0)
				return 0;
		}
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return dfg_comp_error(c, -errno, "poll: %s",
					      strerror(errno));
		}
		if (p[1].revents) {
			ret = exec_read(c, r);
			if (ret)
				return ret;
		}
		if (p[0].revents) {
			ssize_t n = send(r->in, r->pending.p + r->pending_off,
					 r->pending.len - r->pending_off,
					 MSG_NOSIGNAL | MSG_DONTWAIT);

			if (n >= 0) {
				r->pending_off += n;
			} else if (errno == EPIPE || errno == ECONNRESET) {
				close(r->in);	/* it reads no more */
				r->in = -1;
			} else if (errno != EAGAIN && errno != EINTR) {
				return dfg_comp_error(c, -errno,
						      "writing to '%s': %s",
						      r->cmd, strerror(errno));
			}
		}
	}
}

static int exec_compute(struct dfg_comp *c, unsigned int port,
			const struct dfg_elem *e)
{
	struct runner *r = dfg_comp_state(c);
	int ret;

	(void)port;
	if (r->in < 0)
		return 0;	/* the program stopped reading */
	ret = comp_buf_add(c, &r->pending, e->data, e->len);
	if (!ret)
		ret = comp_buf_add(c, &r->pending, "\n", 1);
	if (ret || r->pending.len < EXEC_BATCH)
		return ret;
	return exec_pump(c, r, false);
}

/* Reaps the child; its exit status decides. */
static int exec_wait(struct dfg_comp *c, struct runner *r)
{
	int status;
	pid_t pid;

	do {
		pid = waitpid(r->pid, &status, 0);
	} while (pid < 0 && errno == EINTR);
	if (pid < 0)
		return dfg_comp_error(c, -errno, "waitpid: %s",
				      strerror(errno));
	r->pid = 0;
	if (WIFSIGNALED(status))
		return dfg_comp_error(c, -ECHILD, "'%s' killed by signal %d",
				      r->cmd, WTERMSIG(status));
	if (WEXITSTATUS(status))
		return dfg_comp_error(c, -ECHILD, "'%s' exited with status %d",
				      r->cmd, WEXITSTATUS(status));
	return 0;
}

static int exec_shutdown(struct dfg_comp *c)
{
	struct runner *r = dfg_comp_state(c);
	int ret;

	if (!dfg_comp_nr_in(c) && r->pid <= 0)
		return 0;	/* a root that reached EOF in run */
	ret = exec_pump(c, r, true);
	return ret ? ret : exec_wait(c, r);
}

static int exec_run(struct dfg_comp *c, unsigned long budget)
{
	struct runner *r = dfg_comp_state(c);
	struct pollfd p = { .fd = r->out, .events = POLLIN };
	int ret;

	(void)budget;	/* one read: at most one buffer of lines */
	if (r->out >= 0 && poll(&p, 1, -1) < 0 && errno != EINTR)
		return dfg_comp_error(c, -errno, "poll: %s", strerror(errno));
	ret = r->out >= 0 ? exec_read(c, r) : 0;
	if (ret)
		return ret;
	if (r->out >= 0)
		return DFG_KEEP_GOING;
	ret = exec_wait(c, r);
	return ret ? ret : DFG_REACHED_EOF;
}

static int exec_checkpoint(struct dfg_comp *c, struct dfg_ckpt *w)
{
	(void)w;
	return dfg_comp_error(c, -EOPNOTSUPP,
			      "an external program cannot be checkpointed");
}

static int exec_restore(struct dfg_comp *c, struct dfg_ckpt *r)
{
	(void)r;
	return dfg_comp_error(c, -EOPNOTSUPP,
			      "an external program cannot be checkpointed");
}

const struct dfg_comp_type comp_exec = {
	.abi = DFG_COMP_ABI_VERSION,
	.name = "exec",
	.summary = "run 'cmd' with /bin/sh: lines in on stdin, out on stdout",
	.flags = 0,
	.min_in = 0, .max_in = 1,
	.min_out = 1, .max_out = 1,
	.param_decls = exec_decls,
	.init = exec_init,
	.fini = exec_fini,
	.compute = exec_compute,
	.run = exec_run,
	.shutdown = exec_shutdown,
	.checkpoint = exec_checkpoint,
	.restore = exec_restore,
};
