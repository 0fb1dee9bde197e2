/* SPDX-License-Identifier: MIT */
/* Internals shared by the store's source files (and visible to its tests). */
#ifndef TBX_STORE_PRIV_H
#define TBX_STORE_PRIV_H

#include <pthread.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/*
 * One connection, one mutex. SQLite's own locks keep other processes out; the
 * mutex keeps our worker threads from interleaving statements (and
 * transactions) on the shared connection.
 */
struct tbx_store {
	pthread_mutex_t lock;
	sqlite3 *db;
	char *path; /* for error messages */
};

/*
 * The schema history: tbx_store_migrations[i] takes a database from version
 * i to version i + 1. Entries are never edited once released; a schema change
 * is a new entry and a bump of TBX_STORE_SCHEMA_VERSION.
 */
extern const char *const tbx_store_migrations[];

/* Bring an open, validated database up to TBX_STORE_SCHEMA_VERSION. Caller holds the lock. */
int tbx_store_migrate(struct tbx_store *store);

/* Read PRAGMA user_version into *version_out. Caller holds the lock. */
int tbx_store_user_version(struct tbx_store *store, int *version_out);

/*
 * Turn a failed SQLite result into a tbx_status and a message that says what
 * we were doing and on which file. Call it before any rollback, which would
 * overwrite sqlite3_errmsg().
 */
int tbx_store_fail(struct tbx_store *store, int rc, const char *doing);

/* BEGIN IMMEDIATE / COMMIT / ROLLBACK. Caller holds the lock. */
int tbx_store_begin(struct tbx_store *store);
int tbx_store_commit(struct tbx_store *store);
void tbx_store_rollback(struct tbx_store *store);

int tbx_store_prepare(struct tbx_store *store, const char *sql, sqlite3_stmt **out);

void tbx_store_lock(struct tbx_store *store);
void tbx_store_unlock(struct tbx_store *store);

/* Wall clock in unix milliseconds: what every timestamp column holds. */
int64_t tbx_store_now_ms(void);

#endif /* TBX_STORE_PRIV_H */
