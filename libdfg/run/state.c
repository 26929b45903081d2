// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libdfg run: the checkpoint directory.
 *
 *   plan                the plan the checkpoints belong to (sets, degrees,
 *                       members), compared on resume
 *   s<S>.<I>.<K>.ckpt   checkpoint K of instance I of set S: one file for
 *                       all its members, written to a temporary name,
 *                       synced, renamed, directory synced
 *   s<S>.<I>.done       instance I of set S finished; holds the number of
 *                       its last checkpoint
 *   spool.f<F>.<J>.<P>  flow F between phases, for downstream instance J
 *                       from upstream producer slot P: records (struct
 *                       run_spool_rec and the data), ended by RUN_D_EOF;
 *                       a checkpoint holds how far each was written and
 *                       read, so a resumed run truncates and seeks them
 *
 * Checkpoint K is complete when every set instance has its file K or
 * finished before taking K (a finished upstream has delivered all its
 * data, end of stream included, before its consumers took K). Resume
 * takes the newest complete K, drops what is newer, and every instance
 * starts from its file K, or only ends its streams if it had finished.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

#define PATHLEN	4096

static int path_of(char *buf, const char *dir, unsigned int set,
		   unsigned int inst, const char *what, __u64 seq)
{
	int n;

	if (what)
		n = snprintf(buf, PATHLEN, "%s/s%u.%u.%s", dir, set, inst, what);
	else
		n = snprintf(buf, PATHLEN, "%s/s%u.%u.%llu.ckpt", dir, set,
			     inst, (unsigned long long)seq);
	return n >= PATHLEN ? -ENAMETOOLONG : 0;
}

static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		r = -errno;
	close(fd);
	return r;
}

/*
 * Write @len bytes durably under @path (temporary name, rename), and sync
 * @dir unless @dsync is false: the caller then syncs it once after a
 * batch (run_state_sync()).
 */
static int write_file_in(const char *dir, const char *path,
			 const void *data, size_t len, bool dsync)
{
	char tmp[PATHLEN + 8];
	const char *p = data;
	int fd, r = 0, e = errno;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (!r && fsync(fd))
		r = -errno;
	close(fd);
	if (!r && rename(tmp, path))
		r = -errno;
	if (r)
		unlink(tmp);
	else if (dsync)
		r = sync_dir(dir);
out:
	errno = e;
	return r;
}

static int write_file(const char *dir, const char *path, const void *data,
		      size_t len)
{
	return write_file_in(dir, path, data, len, true);
}

int run_state_sync(const char *dir)
{
	int e = errno, r = sync_dir(dir);

	errno = e;
	return r;
}

static int read_file(const char *path, void **data, size_t *len)
{
	struct stat st;
	char *buf;
	size_t got = 0;
	int fd, r = 0, e = errno;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	if (fstat(fd, &st)) {
		r = -errno;
		close(fd);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		r = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (r) {
		free(buf);
		goto out;
	}
	buf[got] = '\0';
	*data = buf;
	*len = got;
out:
	errno = e;
	return r;
}

int run_state_write_file(const char *dir, const char *name, const void *data,
			 size_t len)
{
	char path[PATHLEN];
	int n = snprintf(path, sizeof(path), "%s/%s", dir, name);

	if (n < 0 || n >= PATHLEN)
		return -ENAMETOOLONG;
	return write_file(dir, path, data, len);
}

int run_state_write(const char *dir, unsigned int set, unsigned int inst,
		    __u64 seq, const void *data, size_t len)
{
	char path[PATHLEN];
	int r = path_of(path, dir, set, inst, NULL, seq);

	return r ? r : write_file(dir, path, data, len);
}

int run_state_put(const char *dir, unsigned int set, unsigned int inst,
		  __u64 seq, const void *data, size_t len)
{
	char path[PATHLEN];
	int r = path_of(path, dir, set, inst, NULL, seq);

	return r ? r : write_file_in(dir, path, data, len, false);
}

/*
 * Checkpoint @seq of set @from_set's instance @inst in @from_dir, as set
 * @to_set's in @to_dir: a hard link (the bytes are the same), else a
 * copy. The directory is left to run_state_sync(), as run_state_put().
 */
int run_state_link(const char *from_dir, unsigned int from_set,
		   const char *to_dir, unsigned int to_set, unsigned int inst,
		   __u64 seq)
{
	char from[PATHLEN], to[PATHLEN];
	void *data;
	size_t len;
	int r = path_of(from, from_dir, from_set, inst, NULL, seq) ?:
		path_of(to, to_dir, to_set, inst, NULL, seq);
	int e = errno;

	if (r)
		return r;
	unlink(to);	/* a leftover of a re-plan that never committed */
	if (!link(from, to)) {
		errno = e;
		return 0;
	}
	/* a file system without hard links: copy */
	r = read_file(from, &data, &len);
	if (!r) {
		r = write_file_in(to_dir, to, data, len, false);
		free(data);
	}
	errno = e;
	return r;
}

int run_state_read(const char *dir, unsigned int set, unsigned int inst,
		   __u64 seq, void **data, size_t *len)
{
	char path[PATHLEN];
	int r = path_of(path, dir, set, inst, NULL, seq);

	return r ? r : read_file(path, data, len);
}

int run_state_done(const char *dir, unsigned int set, unsigned int inst,
		   __u64 last_seq)
{
	char path[PATHLEN], text[32];
	int r = path_of(path, dir, set, inst, "done", 0);

	if (r)
		return r;
	snprintf(text, sizeof(text), "%llu\n", (unsigned long long)last_seq);
	return write_file(dir, path, text, strlen(text));
}

/* 1 if the instance finished with its last checkpoint below @before_seq,
 * 0 if not, -errno. */
int run_state_is_done(const char *dir, unsigned int set, unsigned int inst,
		      __u64 before_seq)
{
	char path[PATHLEN];
	void *data;
	size_t len;
	__u64 last;
	int r = path_of(path, dir, set, inst, "done", 0);

	if (r)
		return r;
	r = read_file(path, &data, &len);
	if (r == -ENOENT)
		return 0;
	if (r)
		return r;
	last = strtoull(data, NULL, 10);
	free(data);
	return last < before_seq;
}

static bool has_ckpt(const char *dir, unsigned int set, unsigned int inst,
		     __u64 seq)
{
	char path[PATHLEN];

	return !path_of(path, dir, set, inst, NULL, seq) &&
	       access(path, R_OK) == 0;
}

/* What identifies a plan: sets, degrees and members, in order. */
static char *plan_text(const struct run_graph *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	unsigned int s, i;

	if (!f)
		return NULL;
	for (s = 0; s < g->plan->nsets; s++) {
		const struct dfg_plan_set *ps = &g->plan->sets[s];

		fprintf(f, "set %u degree %u phase %u:", s, ps->degree,
			ps->phase);
		for (i = 0; i < ps->nmembers; i++)
			fprintf(f, " %s", g->fg->comps[ps->members[i]].name);
		fputc('\n', f);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Remove our files: every checkpoint above @keep_max, and done markers of
 * instances that ran past it (they run again). @keep_max 0: all. */
static void prune(const char *dir, const struct run_graph *g, __u64 keep_max,
		  bool plan_too)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATHLEN];
	int e = errno;

	if (!d)
		return;
	while ((de = readdir(d))) {
		unsigned int s, i;
		unsigned long long k;
		char tail[16];
		bool drop = false;

		if (sscanf(de->d_name, "s%u.%u.%llu.%15s", &s, &i, &k,
			   tail) == 4 && !strcmp(tail, "ckpt"))
			drop = k > keep_max;
		else if (sscanf(de->d_name, "s%u.%u.%15s", &s, &i, tail) == 3 &&
			 !strcmp(tail, "done"))
			drop = keep_max == 0 ||
			       !run_state_is_done(dir, s, i, keep_max);
		else if (strstr(de->d_name, ".tmp"))
			drop = true;
		else if (!strncmp(de->d_name, "spool.", 6))
			drop = plan_too;
		else if (!strcmp(de->d_name, "plan"))
			drop = plan_too;
		if (drop && snprintf(path, sizeof(path), "%s/%s", dir,
				     de->d_name) < (int)sizeof(path))
			unlink(path);
	}
	closedir(d);
	(void)g;
	errno = e;
}

int run_state_prepare(const char *dir, const struct run_graph *g,
		      bool resume, __u64 *resume_seq, char *err,
		      size_t errlen)
{
	char path[PATHLEN];
	char *want = plan_text(g), *have = NULL;
	__u64 k, top = 0;
	size_t len;
	int r, e = errno;

	*resume_seq = 0;
	if (!want)
		return -ENOMEM;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(-r));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/plan", dir);
	if (resume) {
		r = read_file(path, (void **)&have, &len);
		if (r == -ENOENT) {
			resume = false;	/* nothing saved: from the start */
		} else if (r) {
			snprintf(err, errlen, "%s: %s", path, strerror(-r));
			goto out;
		} else if (strcmp(have, want)) {
			r = -EINVAL;
			snprintf(err, errlen,
				 "%s: the checkpoints belong to another plan",
				 dir);
			goto out;
		}
	}
	if (resume) {
		DIR *d = opendir(dir);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			unsigned int s, i;
			unsigned long long kk;
			char tail[16];

			if (sscanf(de->d_name, "s%u.%u.%llu.%15s", &s, &i, &kk,
				   tail) == 4 && !strcmp(tail, "ckpt") &&
			    kk > top)
				top = kk;
		}
		if (d)
			closedir(d);
		for (k = top; k > 0; k--) {
			bool complete = true;
			unsigned int s, i;

			for (s = 0; complete && s < g->plan->nsets; s++)
				for (i = 0; complete &&
				     i < g->plan->sets[s].degree; i++)
					complete = has_ckpt(dir, s, i, k) ||
						run_state_is_done(dir, s, i,
								  k) > 0;
			if (complete)
				break;
		}
		*resume_seq = k;
	}
	prune(dir, g, *resume_seq, false);
	r = write_file(dir, path, want, strlen(want));
	if (r)
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
out:
	free(want);
	free(have);
	errno = e;
	return r;
}

void run_state_clear(const char *dir)
{
	int e = errno;

	prune(dir, NULL, 0, true);
	rmdir(dir);
	errno = e;
}

int run_spool_path(char *buf, size_t len, const char *dir, unsigned int flow,
		   unsigned int inst, unsigned int prod)
{
	int n = snprintf(buf, len, "%s/spool.f%u.%u.%u", dir, flow, inst, prod);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Remove the spool files in @dir (a run without checkpoints, done). */
void run_spool_clear(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATHLEN];
	int e = errno;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "spool.", 6) &&
		    snprintf(path, sizeof(path), "%s/%s", dir,
			     de->d_name) < (int)sizeof(path))
			unlink(path);
	closedir(d);
	errno = e;
}
