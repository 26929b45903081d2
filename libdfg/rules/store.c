// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * rules/store.c - the plan store (<dfg/rules.h> dfg_plan_store_*): the
 * decisions of the rule interpreter by the signature of the conditions
 * that produced them, in the SQLite database DIR/plans.db.
 *
 * Schema (user_version 1, application_id DFG_STORE_APP_ID):
 *   plan(sig PRIMARY KEY, graph, conditions, created, used, hits)
 *   edit(sig, seq, op, comp, degree, type, key, value), (sig, seq) unique
 * sig is the 64-bit signature stored as SQLite's signed integer. Several
 * `dfg run`s may share a state directory: the database is in WAL mode
 * (readers never wait for a writer), writers wait up to STORE_BUSY_MS for
 * each other, and each put or forget is one transaction. Every read goes
 * to the database, so one run sees the decisions another stored since.
 * A file that is not SQLite, or is damaged, is -EBADMSG; an SQLite
 * database of something else (another application_id, tables without
 * ours, a newer user_version) is -EPROTO: the caller goes on without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "rules_impl.h"

#define STORE_FILE		"plans.db"
#define STORE_APP_ID		0x44464750	/* "DFGP" */
#define STORE_VERSION		1
#define STORE_BUSY_MS		5000

enum {
	Q_GET,		/* a plan's edits */
	Q_HIT,		/* count a hit */
	Q_DEL_EDITS,	/* forget a plan's edits */
	Q_DEL_PLAN,	/* and the plan */
	Q_PUT_PLAN,
	Q_PUT_EDIT,
	Q_COUNT,
	Q_LIST,		/* plans, oldest first; ?1 0: all */
	Q_NR,
};

static const char *const queries[Q_NR] = {
	[Q_GET] = "SELECT op, comp, degree, type, key, value FROM edit "
		  "WHERE sig = ?1 ORDER BY seq",
	[Q_HIT] = "UPDATE plan SET hits = hits + 1, used = ?2 WHERE sig = ?1",
	[Q_DEL_EDITS] = "DELETE FROM edit WHERE sig = ?1 OR ?1 = 0",
	[Q_DEL_PLAN] = "DELETE FROM plan WHERE sig = ?1 OR ?1 = 0",
	[Q_PUT_PLAN] = "INSERT INTO plan (sig, graph, conditions, created, "
		       "used, hits) VALUES (?1, ?2, ?3, ?4, ?4, 0) "
		       "ON CONFLICT (sig) DO UPDATE SET graph = ?2, "
		       "conditions = ?3, used = ?4",
	[Q_PUT_EDIT] = "INSERT INTO edit (sig, seq, op, comp, degree, type, "
		       "key, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[Q_COUNT] = "SELECT count(*) FROM plan",
	[Q_LIST] = "SELECT sig, graph, conditions, created, used, hits "
		   "FROM plan WHERE sig = ?1 OR ?1 = 0 ORDER BY created, sig",
};

static const char schema[] =
	"CREATE TABLE plan (sig INTEGER PRIMARY KEY, graph TEXT NOT NULL, "
	"conditions TEXT NOT NULL, created INTEGER NOT NULL, "
	"used INTEGER NOT NULL, hits INTEGER NOT NULL);"
	"CREATE TABLE edit (sig INTEGER NOT NULL, seq INTEGER NOT NULL, "
	"op INTEGER NOT NULL, comp TEXT NOT NULL, degree INTEGER NOT NULL, "
	"type TEXT, key TEXT, value TEXT, PRIMARY KEY (sig, seq)) "
	"WITHOUT ROWID;";

/* Edits read from the database and the strings they point to. */
struct edits {
	struct dfg_plan_edit	*v;
	char			**strs;
	unsigned int		n, nstrs;
};

struct dfg_plan_store {
	sqlite3		*db;
	sqlite3_stmt	*q[Q_NR];
	struct edits	last;	/* rl_store_get()'s answer, until the next */
	unsigned long long hit;	/* its key, not yet counted (0: none) */
	long long	hit_at;	/* when it was served */
};

/* SQLite's result codes as -errno. */
static int sq_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return 0;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
	case SQLITE_FORMAT:
		return -EBADMSG;
	case SQLITE_SCHEMA:
	case SQLITE_MISMATCH:
	case SQLITE_CONSTRAINT:
		return -EPROTO;
	default:
		return -EIO;
	}
}

static void edits_free(struct edits *e)
{
	unsigned int i;

	for (i = 0; i < e->nstrs; i++)
		free(e->strs[i]);
	free(e->strs);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

/* A copy of column @col owned by @e; NULL for SQL NULL. -ENOMEM. */
static int col_str(struct edits *e, sqlite3_stmt *st, int col,
		   const char **out)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	char **v, *s;

	*out = NULL;
	if (!t)
		return sqlite3_column_type(st, col) == SQLITE_NULL ? 0 :
		       -ENOMEM;
	s = strdup((const char *)t);
	v = s ? realloc(e->strs, (e->nstrs + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(s);
		return -ENOMEM;
	}
	e->strs = v;
	v[e->nstrs++] = s;
	*out = s;
	return 0;
}

/* The edits of plan @sig into @e (emptied first). 0 or -errno. */
static int read_edits(struct dfg_plan_store *s, sqlite3_int64 sig,
		      struct edits *e)
{
	sqlite3_stmt *st = s->q[Q_GET];
	int rc, ret = 0;

	edits_free(e);
	sqlite3_bind_int64(st, 1, sig);
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct dfg_plan_edit *d, *v;
		int op = sqlite3_column_int(st, 0);

		v = realloc(e->v, (e->n + 1) * sizeof(*v));
		if (!v) {
			ret = -ENOMEM;
			break;
		}
		e->v = v;
		d = &e->v[e->n++];
		memset(d, 0, sizeof(*d));
		d->op = op;
		d->degree = (unsigned int)sqlite3_column_int64(st, 2);
		ret = col_str(e, st, 1, &d->comp);
		if (!ret)
			ret = col_str(e, st, 3, &d->type);
		if (!ret)
			ret = col_str(e, st, 4, &d->key);
		if (!ret)
			ret = col_str(e, st, 5, &d->value);
		/* someone else's rows: not an edit this libdfg knows */
		if (!ret && (op < DFG_EDIT_DEGREE || op > DFG_EDIT_PARAM ||
			     !d->comp))
			ret = -EPROTO;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sq_errno(rc);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (ret)
		edits_free(e);
	return ret;
}

static int exec(struct dfg_plan_store *s, const char *sql)
{
	return sq_errno(sqlite3_exec(s->db, sql, NULL, NULL, NULL));
}

/* The single integer a statement answers, in *@v. */
static int query_int(struct dfg_plan_store *s, const char *sql,
		     sqlite3_int64 *v)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sq_errno(rc);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -EPROTO :
	       sq_errno(rc);
}

/*
 * Makes sure the database is ours: a new one gets the schema, anything
 * else must carry our application_id and version. One transaction (a
 * write one to create), so that the three reads agree with each other
 * while another run creates the store, and two runs creating it at once
 * do it once.
 */
static int check_schema(struct dfg_plan_store *s, bool create)
{
	sqlite3_int64 app, ver, tables;
	int ret;

	ret = exec(s, create ? "BEGIN IMMEDIATE" : "BEGIN");
	if (ret)
		return ret;
	ret = query_int(s, "PRAGMA application_id", &app);
	if (!ret)
		ret = query_int(s, "PRAGMA user_version", &ver);
	if (!ret)
		ret = query_int(s, "SELECT count(*) FROM sqlite_master",
				&tables);
	if (!ret && app == STORE_APP_ID && ver != STORE_VERSION)
		ret = -EPROTO;
	else if (!ret && app != STORE_APP_ID && (app || ver || tables))
		ret = -EPROTO;
	if (!ret && create && app != STORE_APP_ID) {
		char sql[128];

		ret = exec(s, schema);
		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d; "
			 "PRAGMA user_version = %d", STORE_APP_ID,
			 STORE_VERSION);
		if (!ret)
			ret = exec(s, sql);
	}
	if (!ret)
		return exec(s, "COMMIT");
	exec(s, "ROLLBACK");
	return ret;
}

/* -EBADMSG unless SQLite's quick_check finds the database whole. */
static int quick_check(struct dfg_plan_store *s)
{
	const unsigned char *t;
	sqlite3_stmt *st;
	int rc, ret;

	rc = sqlite3_prepare_v2(s->db, "PRAGMA quick_check(1)", -1, &st,
				NULL);
	if (rc != SQLITE_OK)
		return sq_errno(rc);
	rc = sqlite3_step(st);
	t = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
	ret = t && !strcmp((const char *)t, "ok") ? 0 :
	      rc == SQLITE_ROW ? -EBADMSG : sq_errno(rc) ? sq_errno(rc) :
	      -EBADMSG;
	sqlite3_finalize(st);
	return ret;
}

int dfg_plan_store_open(const char *dir, unsigned int flags,
			struct dfg_plan_store **sp)
{
	bool create = flags & DFG_PLAN_STORE_CREATE;
	struct dfg_plan_store *s;
	sqlite3_int64 empty;
	char *path = NULL;
	int i, rc, ret;

	if (!dir || !sp || (flags & ~DFG_PLAN_STORE_CREATE))
		return -EINVAL;
	if (create && mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (asprintf(&path, "%s/" STORE_FILE, dir) < 0)
		return -ENOMEM;
	if (!create && access(path, F_OK)) {
		ret = -errno;
		free(path);
		return ret;
	}
	/*
	 * The owner's alone, like the rest of the state directory: SQLite
	 * would create it (and its -wal, -shm, which copy its mode) 0644.
	 */
	if (create) {
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

		if (fd < 0) {
			ret = -errno;
			free(path);
			return ret;
		}
		close(fd);
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		free(path);
		return -ENOMEM;
	}
	/* a handle is used from one thread at a time */
	rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE |
			     (create ? SQLITE_OPEN_CREATE : 0) |
			     SQLITE_OPEN_NOMUTEX, NULL);
	free(path);
	if (rc != SQLITE_OK) {
		ret = s->db ? sq_errno(sqlite3_extended_errcode(s->db)) :
		      -ENOMEM;
		goto fail;
	}
	sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
	ret = check_schema(s, create);
	if (ret)
		goto fail;
	/* an empty file opened without DFG_PLAN_STORE_CREATE has no tables */
	ret = query_int(s, "SELECT count(*) FROM sqlite_master", &empty);
	if (!ret && !empty) {
		ret = -ENOENT;
		goto fail;
	}
	/*
	 * WAL: readers and one writer at once across processes; NORMAL
	 * syncs at checkpoints only, still never a torn database (a power
	 * cut may lose the last decisions, which are only a cache).
	 */
	if (!ret)
		ret = exec(s, "PRAGMA journal_mode = WAL; "
			   "PRAGMA synchronous = NORMAL");
	for (i = 0; !ret && i < Q_NR; i++)
		ret = sq_errno(sqlite3_prepare_v3(s->db, queries[i], -1,
						  SQLITE_PREPARE_PERSISTENT,
						  &s->q[i], NULL));
	/* a database that passed the checks but is damaged further in */
	if (!ret)
		ret = quick_check(s);
	if (ret)
		goto fail;
	*sp = s;
	return 0;
fail:
	dfg_plan_store_close(s);
	return ret;
}

void dfg_plan_store_close(struct dfg_plan_store *s)
{
	int i;

	if (!s)
		return;
	rl_store_count_hit(s);
	for (i = 0; i < Q_NR; i++)
		sqlite3_finalize(s->q[i]);
	sqlite3_close(s->db);
	edits_free(&s->last);
	free(s);
}

/*
 * Counts the last hit (a write transaction): after the decision it
 * served, at the next lookup or at close, not on the decision's path.
 * A hit the statistics miss is no reason to fail anything.
 */
void rl_store_count_hit(struct dfg_plan_store *s)
{
	sqlite3_stmt *hit = s->q[Q_HIT];

	if (!s->hit)
		return;
	sqlite3_bind_int64(hit, 1, (sqlite3_int64)s->hit);
	sqlite3_bind_int64(hit, 2, (sqlite3_int64)s->hit_at);
	sqlite3_step(hit);
	sqlite3_reset(hit);
	s->hit = 0;
}

int rl_store_get(struct dfg_plan_store *s, unsigned long long key,
		 const struct dfg_plan_edit **edits, unsigned int *n)
{
	int ret;

	rl_store_count_hit(s);
	ret = read_edits(s, (sqlite3_int64)key, &s->last);
	if (ret)
		return ret;
	if (!s->last.n)
		return -ENOENT;
	s->hit = key;
	s->hit_at = (long long)time(NULL);
	*edits = s->last.v;
	*n = s->last.n;
	return 0;
}

/* Runs @st with its bindings to the end and resets it. */
static int step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : sq_errno(rc) ? sq_errno(rc) : -EIO;
}

static void bind_text(sqlite3_stmt *st, int i, const char *t)
{
	if (t)
		sqlite3_bind_text(st, i, t, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* Deletes plan @sig (0: all) inside the caller's transaction. */
static int delete(struct dfg_plan_store *s, sqlite3_int64 sig)
{
	int ret;

	sqlite3_bind_int64(s->q[Q_DEL_EDITS], 1, sig);
	ret = step_done(s->q[Q_DEL_EDITS]);
	if (ret)
		return ret;
	sqlite3_bind_int64(s->q[Q_DEL_PLAN], 1, sig);
	return step_done(s->q[Q_DEL_PLAN]);
}

int rl_store_put(struct dfg_plan_store *s, unsigned long long key,
		 const char *graph, const char *conditions,
		 const struct dfg_plan_edit *edits, unsigned int n)
{
	sqlite3_stmt *pp = s->q[Q_PUT_PLAN], *pe = s->q[Q_PUT_EDIT];
	sqlite3_int64 sig = (sqlite3_int64)key;
	unsigned int i;
	int ret;

	if (!key)
		return -EINVAL;
	ret = exec(s, "BEGIN IMMEDIATE");
	if (ret)
		return ret;
	ret = delete(s, sig);
	if (!ret && n) {
		sqlite3_bind_int64(pp, 1, sig);
		bind_text(pp, 2, graph ? graph : "");
		bind_text(pp, 3, conditions ? conditions : "");
		sqlite3_bind_int64(pp, 4, (sqlite3_int64)time(NULL));
		ret = step_done(pp);
	}
	for (i = 0; !ret && i < n; i++) {
		sqlite3_bind_int64(pe, 1, sig);
		sqlite3_bind_int(pe, 2, (int)i);
		sqlite3_bind_int(pe, 3, edits[i].op);
		bind_text(pe, 4, edits[i].comp ? edits[i].comp : "");
		sqlite3_bind_int64(pe, 5, edits[i].degree);
		bind_text(pe, 6, edits[i].type);
		bind_text(pe, 7, edits[i].key);
		bind_text(pe, 8, edits[i].value);
		ret = step_done(pe);
	}
	if (!ret)
		return exec(s, "COMMIT");
	exec(s, "ROLLBACK");
	return ret;
}

unsigned long long rl_store_entries(struct dfg_plan_store *s)
{
	sqlite3_stmt *st = s->q[Q_COUNT];
	unsigned long long n = 0;

	if (sqlite3_step(st) == SQLITE_ROW)
		n = (unsigned long long)sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return n;
}

int dfg_plan_store_each(struct dfg_plan_store *s, unsigned long long id,
			int (*fn)(void *arg,
				  const struct dfg_plan_record *rec),
			void *arg)
{
	struct dfg_plan_record rec;
	struct edits row = { 0 }, e = { 0 };
	sqlite3_stmt *st;
	unsigned int seen = 0;
	int rc, ret = 0;

	if (!s || !fn)
		return -EINVAL;
	/* its own statement: @fn may read the store again */
	rc = sqlite3_prepare_v2(s->db, queries[Q_LIST], -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sq_errno(rc);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
	/* one read transaction: a consistent list while others write */
	ret = exec(s, "BEGIN");
	while (!ret && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&rec, 0, sizeof(rec));
		rec.id = (unsigned long long)sqlite3_column_int64(st, 0);
		edits_free(&row);
		ret = col_str(&row, st, 1, &rec.graph);
		if (!ret)
			ret = col_str(&row, st, 2, &rec.conditions);
		if (ret)
			break;
		rec.created = sqlite3_column_int64(st, 3);
		rec.used = sqlite3_column_int64(st, 4);
		rec.hits = (unsigned long long)sqlite3_column_int64(st, 5);
		ret = read_edits(s, sqlite3_column_int64(st, 0), &e);
		if (ret)
			break;
		rec.edits = e.v;
		rec.nedits = e.n;
		seen++;
		ret = fn(arg, &rec);
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sq_errno(rc);
	sqlite3_finalize(st);
	exec(s, "COMMIT");
	edits_free(&row);
	edits_free(&e);
	if (!ret && id && !seen)
		ret = -ENOENT;
	return ret;
}

int dfg_plan_store_forget(struct dfg_plan_store *s, unsigned long long id)
{
	int ret;

	if (!s)
		return -EINVAL;
	ret = exec(s, "BEGIN IMMEDIATE");
	if (ret)
		return ret;
	ret = delete(s, (sqlite3_int64)id);
	if (!ret && id && !sqlite3_changes(s->db))
		ret = -ENOENT;
	if (ret) {
		exec(s, "ROLLBACK");
		return ret;
	}
	return exec(s, "COMMIT");
}
