// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * arena_demo: two processes share a dfg arena.
 *
 * The parent creates graph "demo" and a 1 MiB arena with an allocator,
 * forks a peer, allocates a buffer, writes a message into it and sends
 * the buffer's offset (never a pointer) through a pipe. The peer attaches
 * to the graph by name, maps the arena, reads the message through the
 * bounds-checked dfg_arena_ptr() and frees the buffer the parent
 * allocated. Needs the dfg module (run it in the test VM).
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dfg/dfg.h>

#define GRAPH		"demo"
#define ARENA_SIZE	(1U << 20)

/* What the parent tells the peer: where the arena and the message are. */
struct note {
	unsigned int	id;
	__u64		size;
	__u64		off;
	__u64		len;
};

static int peer(int rfd)
{
	struct dfg_arena *a;
	struct note n;
	struct dfg *d;
	const char *msg;
	int g, ret;

	if (read(rfd, &n, sizeof(n)) != sizeof(n))
		return 1;
	ret = dfg_open(&d, DFG_OPEN_NO_RING);
	if (ret < 0)
		goto err;
	g = dfg_graph_attach(d, GRAPH, DFG_GRAPH_O_CLOEXEC);
	ret = g;
	if (ret < 0)
		goto err;
	ret = dfg_arena_map(g, n.id, n.size, 1, &a);
	if (ret < 0)
		goto err;
	ret = dfg_alloc_attach(a);
	if (ret < 0)
		goto err;
	msg = dfg_arena_ptr(a, n.off, n.len);
	if (!msg || memchr(msg, 0, n.len) == NULL) {
		fprintf(stderr, "peer: offset %llu outside the arena\n",
			(unsigned long long)n.off);
		return 1;
	}
	printf("peer %d: attached to \"%s\", arena %u mapped at %p\n",
	       getpid(), GRAPH, n.id, dfg_arena_base(a));
	printf("peer %d: read at offset %llu: \"%s\"\n", getpid(),
	       (unsigned long long)n.off, msg);
	ret = dfg_buf_free(a, n.off);
	if (ret < 0)
		goto err;
	printf("peer %d: freed the parent's buffer\n", getpid());
	dfg_arena_unmap(a);
	close(g);
	dfg_close(d);
	return 0;
err:
	fprintf(stderr, "peer: %s\n", strerror(-ret));
	return 1;
}

int main(void)
{
	struct dfg_arena *a;
	int pfd[2], status, g, ret;
	struct dfg *d;
	struct note n;
	char *p;
	__s64 off;
	pid_t pid;

	ret = dfg_open(&d, DFG_OPEN_NO_RING);
	if (ret < 0)
		goto err;
	g = dfg_graph_create(d, GRAPH, 0600, DFG_GRAPH_O_CLOEXEC);
	ret = g;
	if (ret < 0)
		goto err;
	ret = dfg_arena_create(g, ARENA_SIZE, &a);
	if (ret < 0)
		goto err;
	ret = dfg_alloc_init(a);
	if (ret < 0)
		goto err;
	printf("parent %d: graph \"%s\", arena %u of %zu bytes at %p\n",
	       getpid(), GRAPH, dfg_arena_id(a), dfg_arena_size(a),
	       dfg_arena_base(a));

	if (pipe(pfd))
		return 1;
	/* Flush first, or the child would print the parent's lines again. */
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		close(pfd[1]);
		ret = peer(pfd[0]);
		/* _exit() skips stdio: flush what a pipe reader waits for. */
		fflush(stdout);
		_exit(ret);
	}
	close(pfd[0]);

	off = dfg_buf_alloc(a, 100);
	ret = off;
	if (off < 0)
		goto err;
	p = dfg_arena_ptr(a, off, 100);
	n = (struct note){
		.id	= dfg_arena_id(a),
		.size	= dfg_arena_size(a),
		.off	= off,
		.len	= snprintf(p, 100, "hello from %d", getpid()) + 1,
	};
	printf("parent %d: wrote \"%s\" at offset %lld (block of %zu bytes)\n",
	       getpid(), p, (long long)off, dfg_buf_size(a, off));
	if (write(pfd[1], &n, sizeof(n)) != sizeof(n))
		return 1;
	close(pfd[1]);

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return 1;
	printf("parent %d: buffer at %lld is %s\n", getpid(), (long long)off,
	       dfg_buf_size(a, off) ? "still allocated" : "free again");
	dfg_arena_unmap(a);
	close(g);
	dfg_close(d);
	return 0;
err:
	fprintf(stderr, "arena_demo: %s\n", strerror(-ret));
	return 1;
}
