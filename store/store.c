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

void tbx_store_lock(struct tbx_store *store)
{
	pthread_mutex_lock(&store->lock);
}

void tbx_store_unlock(struct tbx_store *store)
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

int tbx_store_prepare(struct tbx_store *store, const char *sql, sqlite3_stmt **out)
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

int tbx_store_commit(struct tbx_store *store)
{
	int rc = sqlite3_exec(store->db, "COMMIT", NULL, NULL, NULL);

	if (rc != SQLITE_OK) {
		int status = tbx_store_fail(store, rc, "committing");

		tbx_store_rollback(store);
		return status;
	}
	return 0;
}

void tbx_store_rollback(struct tbx_store *store)
{
	/* SQLite may already have rolled back on its own (e.g. after SQLITE_FULL). */
	if (!sqlite3_get_autocommit(store->db))
		sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
}

int tbx_store_user_version(struct tbx_store *store, int *version_out)
{
	sqlite3_stmt *stmt = NULL;
	int status, rc;

	status = tbx_store_prepare(store, "PRAGMA user_version", &stmt);
	if (status < 0)
		return status;
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		*version_out = sqlite3_column_int(stmt, 0);
		status = 0;
	} else {
		status = tbx_store_fail(store, rc, "reading the schema version");
	}
	sqlite3_finalize(stmt);
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
		status = tbx_store_prepare(store, "PRAGMA journal_mode=WAL", &stmt);
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

	tbx_store_lock(store);
	status = tbx_store_user_version(store, &version);
	tbx_store_unlock(store);
	return status < 0 ? status : version;
}
