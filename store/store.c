/* SPDX-License-Identifier: MIT */
/* Opening, validating and closing the store, and the helpers its files share. */
#include "store-priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

/* How long a writer waits for another process's transaction before giving up. */
#define TBX_STORE_BUSY_TIMEOUT_MS 5000

int64_t tbx_store_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void store_lock(struct tbx_store *store)
{
	pthread_mutex_lock(&store->lock);
}

static void store_unlock(struct tbx_store *store)
{
	pthread_mutex_unlock(&store->lock);
}

int tbx_store_fail(struct tbx_store *store, int rc, const char *doing)
{
	const char *path = store && store->path ? store->path : "(none)";
	const char *detail = store && store->db ? sqlite3_errmsg(store->db) : sqlite3_errstr(rc);

	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return tbx_error_set(TBX_EUNAVAIL,
				     "database %s is locked by another process (waited up to %d ms) "
				     "while %s; retry, or look for a stuck twinbox process",
				     path, TBX_STORE_BUSY_TIMEOUT_MS, doing);
	case SQLITE_NOMEM:
		return tbx_error_set(TBX_ENOMEM, "out of memory while %s (database %s)", doing, path);
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return tbx_error_set(TBX_EPERM, "cannot write database %s while %s: %s; check its "
				     "permissions and those of its directory", path, doing, detail);
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return tbx_error_set(TBX_EIO, "database %s is damaged (%s) while %s; move it aside "
				     "to start afresh", path, detail, doing);
	case SQLITE_FULL:
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
	case SQLITE_PROTOCOL:
		return tbx_error_set(TBX_EIO, "I/O error on database %s while %s: %s", path, doing,
				     detail);
	case SQLITE_CONSTRAINT:
		return tbx_error_set(TBX_EINVAL, "refused by database %s while %s: %s", path, doing,
				     detail);
	default:
		/* Anything else means our SQL or our use of SQLite is wrong. */
		return tbx_error_set(TBX_EINTERNAL, "SQLite error while %s on %s: %s (please report)",
				     doing, path, detail);
	}
}

static int store_prepare(struct tbx_store *store, const char *sql, sqlite3_stmt **out)
{
	int rc = sqlite3_prepare_v2(store->db, sql, -1, out, NULL);

	if (rc != SQLITE_OK)
		return tbx_store_fail(store, rc, "preparing a query");
	return 0;
}

int tbx_store_begin(struct tbx_store *store)
{
	/*
	 * IMMEDIATE takes the write lock up front, so the busy timeout applies
	 * here; a deferred transaction that later upgrades can fail at once with
	 * SQLITE_BUSY when another process wrote in between.
	 */
	int rc = sqlite3_exec(store->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		return tbx_store_fail(store, rc, "starting a write transaction");
	return 0;
}

static void store_rollback(struct tbx_store *store)
{
	/* SQLite may already have rolled back on its own (e.g. after SQLITE_FULL). */
	if (!sqlite3_get_autocommit(store->db))
		sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
}

static int store_commit(struct tbx_store *store)
{
	int rc = sqlite3_exec(store->db, "COMMIT", NULL, NULL, NULL);

	if (rc != SQLITE_OK) {
		int status = tbx_store_fail(store, rc, "committing");

		store_rollback(store);
		return status;
	}
	return 0;
}

int tbx_store_end(struct tbx_store *store, int status)
{
	if (status < 0) {
		store_rollback(store);
		return status;
	}
	return store_commit(store);
}

int tbx_store_write_begin(struct tbx_store *store)
{
	int status;

	store_lock(store);
	status = tbx_store_begin(store);
	if (status < 0)
		store_unlock(store);
	return status;
}

int tbx_store_write_end(struct tbx_store *store, int status)
{
	status = tbx_store_end(store, status);
	store_unlock(store);
	return status;
}

/* Prepare sql and bind params to it; *out is set for the caller to finalize even on failure. */
static int store_prepare_bound(struct tbx_store *store, const char *sql,
			       const struct tbx_store_param *params, size_t n_params,
			       sqlite3_stmt **out)
{
	int status = store_prepare(store, sql, out);
	int n_wanted;

	if (status < 0)
		return status;
	/* A mismatch is a slip in our own code; refuse it rather than bind NULLs. */
	n_wanted = sqlite3_bind_parameter_count(*out);
	if ((size_t)n_wanted != n_params)
		return tbx_error_set(TBX_EINTERNAL, "a query on %s takes %d parameters but was given "
				     "%zu (please report)", store->path, n_wanted, n_params);
	for (size_t i = 0; i < n_params; i++) {
		int col = (int)i + 1, rc = SQLITE_MISUSE;

		switch (params[i].kind) {
		case TBX_STORE_PARAM_TEXT:
			rc = sqlite3_bind_text(*out, col, params[i].text, -1, SQLITE_STATIC);
			break;
		case TBX_STORE_PARAM_INT:
			rc = sqlite3_bind_int64(*out, col, params[i].integer);
			break;
		case TBX_STORE_PARAM_NOW:
			rc = sqlite3_bind_int64(*out, col, tbx_store_now_ms());
			break;
		}
		if (rc != SQLITE_OK)
			return tbx_store_fail(store, rc, "binding a query's parameters");
	}
	return 0;
}

int tbx_store_exec(struct tbx_store *store, const char *sql, const struct tbx_store_param *params,
		   size_t n_params, const char *doing, tbx_store_explain_fn *explain,
		   const void *ctx)
{
	sqlite3_stmt *stmt = NULL;
	int status, rc;

	status = store_prepare_bound(store, sql, params, n_params, &stmt);
	if (status < 0)
		goto cleanup;
	rc = sqlite3_step(stmt);
	if (rc != SQLITE_DONE) {
		/* tbx_store_fail() reads sqlite3_errmsg(): call it before finalizing. */
		status = explain ? explain(rc, ctx) : 0;
		if (status == 0)
			status = tbx_store_fail(store, rc, doing);
	}
cleanup:
	sqlite3_finalize(stmt);
	return status;
}

int tbx_store_write(struct tbx_store *store, const char *sql, const struct tbx_store_param *params,
		    size_t n_params, const char *doing, tbx_store_explain_fn *explain,
		    const void *ctx)
{
	int status = tbx_store_write_begin(store);

	if (status < 0)
		return status;
	status = tbx_store_exec(store, sql, params, n_params, doing, explain, ctx);
	return tbx_store_write_end(store, status);
}

int tbx_store_query(struct tbx_store *store, const char *sql, const struct tbx_store_param *params,
		    size_t n_params, const char *doing, tbx_store_row_fn *on_row, void *ctx)
{
	sqlite3_stmt *stmt = NULL;
	int status, rc, rows = 0;

	status = store_prepare_bound(store, sql, params, n_params, &stmt);
	if (status < 0)
		goto cleanup;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		rows++;
		status = on_row(stmt, ctx);
		if (status < 0)
			goto cleanup;
		if (status > 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		status = tbx_store_fail(store, rc, doing);
		goto cleanup;
	}
	status = rows;
cleanup:
	sqlite3_finalize(stmt);
	return status;
}

int tbx_store_read(struct tbx_store *store, const char *sql, const struct tbx_store_param *params,
		   size_t n_params, const char *doing, tbx_store_row_fn *on_row, void *ctx)
{
	int status;

	store_lock(store);
	status = tbx_store_query(store, sql, params, n_params, doing, on_row, ctx);
	store_unlock(store);
	return status;
}

static int store_row_int64(sqlite3_stmt *stmt, void *ctx)
{
	*(int64_t *)ctx = sqlite3_column_int64(stmt, 0);
	return 1;
}

int tbx_store_query_int64(struct tbx_store *store, const char *sql,
			  const struct tbx_store_param *params, size_t n_params, const char *doing,
			  int64_t *out)
{
	int status = tbx_store_query(store, sql, params, n_params, doing, store_row_int64, out);

	/* No row from a query that always yields one: our SQL is wrong. */
	if (status == 0)
		return tbx_store_fail(store, SQLITE_DONE, doing);
	return status < 0 ? status : 0;
}

int tbx_store_user_version(struct tbx_store *store, int *version_out)
{
	int64_t version = 0;
	int status = tbx_store_query_int64(store, "PRAGMA user_version", NULL, 0,
					   "reading the schema version", &version);

	if (status == 0)
		*version_out = (int)version;
	return status;
}

/* mkdir -p for the directories above path, each new one 0700: the db says what the user ran. */
static int store_make_parents(const char *path)
{
	char *dir = strdup(path);
	int status = 0;
	char *slash;

	if (!dir)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		goto cleanup; /* relative file in cwd, or directly under / */
	*slash = '\0';
	for (char *p = dir + 1;; p++) {
		int last = *p == '\0';

		if (*p != '/' && !last)
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			int err = errno;

			status = tbx_error_set(err == EACCES ? TBX_EPERM
					       : err == ENOTDIR ? TBX_ENOTDIR : TBX_EIO,
					       "cannot create directory %s for the database: %s", dir,
					       strerror(err));
			goto cleanup;
		}
		if (last)
			break;
		*p = '/';
	}
	{
		struct stat st;

		if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			status = tbx_error_set(TBX_ENOTDIR, "%s should be a directory to hold the "
					       "database, but it is not", dir);
			goto cleanup;
		}
	}
cleanup:
	free(dir);
	return status;
}

/*
 * Create the file ourselves so it is born 0600 (SQLite would use 0644 less
 * umask); its -wal and -shm files copy the database file's mode. An existing
 * file is opened without being touched.
 */
static int store_create_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0) {
		int err = errno;

		return tbx_error_set(err == EACCES ? TBX_EPERM
				     : err == EISDIR ? TBX_EISDIR
				     : err == ENOTDIR ? TBX_ENOTDIR : TBX_EIO,
				     "cannot open database %s: %s", path, strerror(err));
	}
	close(fd);
	return 0;
}

/*
 * Switch the file to WAL (a no-op when it already is). Two processes creating
 * the database at once can each hold a read lock the other needs to upgrade;
 * SQLite then fails one side with SQLITE_BUSY at once, without waiting in the
 * busy handler. So wait here, until the other side has switched the file.
 */
static int store_enable_wal(struct tbx_store *store)
{
	int64_t deadline = tbx_store_now_ms() + TBX_STORE_BUSY_TIMEOUT_MS;
	sqlite3_stmt *stmt = NULL;
	const char *mode;
	int status, rc;

	for (;;) {
		status = store_prepare(store, "PRAGMA journal_mode=WAL", &stmt);
		if (status < 0)
			return status;
		rc = sqlite3_step(stmt);
		if ((rc & 0xff) != SQLITE_BUSY || tbx_store_now_ms() >= deadline)
			break;
		sqlite3_finalize(stmt);
		stmt = NULL;
		/* Vary the pause by process so two racing openers drift apart. */
		usleep(5000 + (useconds_t)(getpid() % 5) * 1000);
	}
	if (rc != SQLITE_ROW) {
		status = tbx_store_fail(store, rc, "switching to WAL mode");
		goto cleanup;
	}
	mode = (const char *)sqlite3_column_text(stmt, 0);
	if (!mode || strcmp(mode, "wal") != 0) {
		/* WAL needs shared memory: network filesystems usually refuse it. */
		status = tbx_error_set(TBX_EIO, "database %s could not use WAL mode (it stayed in "
				       "'%s'); keep it on a local filesystem", store->path,
				       mode ? mode : "?");
	}
cleanup:
	sqlite3_finalize(stmt);
	return status;
}

/* Everything that makes a connection ours; run only after the file proved acceptable. */
static int store_configure(struct tbx_store *store)
{
	int status, rc;

	status = store_enable_wal(store);
	if (status < 0)
		return status;
	rc = sqlite3_exec(store->db, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", NULL,
			  NULL, NULL);
	if (rc != SQLITE_OK)
		return tbx_store_fail(store, rc, "setting connection options");
	return 0;
}

int tbx_store_open(const char *path, struct tbx_store **out)
{
	struct tbx_store *store = NULL;
	int status, rc, version = 0;

	*out = NULL;
	if (!path || !*path)
		return tbx_error_set(TBX_EINVAL, "no database path given");
	status = store_make_parents(path);
	if (status < 0)
		return status;
	status = store_create_file(path);
	if (status < 0)
		return status;

	store = calloc(1, sizeof(*store));
	if (!store || !(store->path = strdup(path))) {
		free(store);
		return tbx_error_set(TBX_ENOMEM, "out of memory opening database %s", path);
	}
	pthread_mutex_init(&store->lock, NULL);

	/* NOMUTEX: our own mutex already serialises every use of the connection. */
	rc = sqlite3_open_v2(path, &store->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		status = tbx_store_fail(store, rc, "opening");
		goto cleanup;
	}
	sqlite3_extended_result_codes(store->db, 1);
	sqlite3_busy_timeout(store->db, TBX_STORE_BUSY_TIMEOUT_MS);

	/*
	 * Only read until we know the file is an SQLite database of a version we
	 * understand: refusing must leave it exactly as it was.
	 */
	status = tbx_store_user_version(store, &version);
	if (status < 0) {
		rc = sqlite3_extended_errcode(store->db);
		if ((rc & 0xff) == SQLITE_NOTADB)
			status = tbx_error_set(TBX_EINVAL, "%s is not an SQLite database, so it "
					       "cannot be twinbox's store; move it aside or choose "
					       "another path", path);
		goto cleanup;
	}
	if (version > TBX_STORE_SCHEMA_VERSION) {
		status = tbx_error_set(TBX_EINVAL, "database %s has schema version %d but this "
				       "twinbox only knows up to %d; upgrade twinbox", path, version,
				       TBX_STORE_SCHEMA_VERSION);
		goto cleanup;
	}
	if (version < 0) {
		status = tbx_error_set(TBX_EINVAL, "database %s has schema version %d, which no "
				       "twinbox writes; it belongs to something else", path, version);
		goto cleanup;
	}

	status = store_configure(store);
	if (status < 0)
		goto cleanup;
	status = tbx_store_migrate(store);
	if (status < 0)
		goto cleanup;
	*out = store;
	store = NULL;
cleanup:
	tbx_store_close(store);
	return status;
}

void tbx_store_close(struct tbx_store *store)
{
	if (!store)
		return;
	/* The last connection to close checkpoints the WAL back into the file. */
	sqlite3_close(store->db);
	pthread_mutex_destroy(&store->lock);
	free(store->path);
	free(store);
}

int tbx_store_schema_version(struct tbx_store *store)
{
	int version = 0, status;

	store_lock(store);
	status = tbx_store_user_version(store, &version);
	store_unlock(store);
	return status < 0 ? status : version;
}
