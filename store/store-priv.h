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

/*
 * Transactions. Every write runs in BEGIN IMMEDIATE ... COMMIT, so a failure
 * part-way leaves nothing behind.
 *
 * tbx_store_begin/tbx_store_end are for a caller that already holds the lock
 * (migrations); tbx_store_end commits when status is not negative, rolls back
 * otherwise, and returns the final status. tbx_store_write_begin/_end do the
 * same and also take and release the lock; on failure write_begin has
 * released it again.
 */
int tbx_store_begin(struct tbx_store *store);
int tbx_store_end(struct tbx_store *store, int status);
int tbx_store_write_begin(struct tbx_store *store);
int tbx_store_write_end(struct tbx_store *store, int status);

/*
 * Statement parameters, given as an array bound in order to ?1, ?2... so a
 * caller states its values instead of writing the sqlite3_bind_* calls.
 */
enum tbx_store_param_kind {
	TBX_STORE_PARAM_TEXT,
	TBX_STORE_PARAM_INT,
	TBX_STORE_PARAM_NOW,
};

struct tbx_store_param {
	enum tbx_store_param_kind kind;
	const char *text;
	int64_t integer;
};

/* Text bound without a copy (it must outlive the statement, as arguments do); NULL binds NULL. */
#define TBX_STORE_TEXT(s) { .kind = TBX_STORE_PARAM_TEXT, .text = (s) }
#define TBX_STORE_INT(v) { .kind = TBX_STORE_PARAM_INT, .integer = (v) }
/* tbx_store_now_ms() read at binding, under the lock, so timestamps follow the order of writes. */
#define TBX_STORE_NOW { .kind = TBX_STORE_PARAM_NOW }
#define TBX_STORE_N(params) (sizeof(params) / sizeof((params)[0]))

/*
 * A caller's reading of a failed step: a negative status (from
 * tbx_error_set) for a failure it expects, such as one of its constraints,
 * or 0 to have tbx_store_fail() report it as an SQLite error.
 */
typedef int tbx_store_explain_fn(int rc, const void *ctx);

/*
 * Called for each row of a query: a negative status stops the query with
 * that status, 0 asks for the next row, a positive value stops quietly.
 */
typedef int tbx_store_row_fn(sqlite3_stmt *stmt, void *ctx);

/*
 * Run one statement that returns no rows: prepare sql, bind params, step it,
 * finalize it. On a failed step, explain (may be NULL) has the first word;
 * otherwise the error says we were `doing`. Caller holds the lock, inside a
 * transaction when it writes. Returns 0 or a negative tbx_status.
 */
int tbx_store_exec(struct tbx_store *store, const char *sql, const struct tbx_store_param *params,
		   size_t n_params, const char *doing, tbx_store_explain_fn *explain,
		   const void *ctx);

/* tbx_store_exec in a write transaction of its own, taking the lock. */
int tbx_store_write(struct tbx_store *store, const char *sql, const struct tbx_store_param *params,
		    size_t n_params, const char *doing, tbx_store_explain_fn *explain,
		    const void *ctx);

/*
 * Run a query, handing each row to on_row. Returns the number of rows handed
 * over (so 0 means none matched) or a negative tbx_status. Caller holds the
 * lock.
 */
int tbx_store_query(struct tbx_store *store, const char *sql, const struct tbx_store_param *params,
		    size_t n_params, const char *doing, tbx_store_row_fn *on_row, void *ctx);

/* tbx_store_query taking the lock itself, for reads outside a transaction. */
int tbx_store_read(struct tbx_store *store, const char *sql, const struct tbx_store_param *params,
		   size_t n_params, const char *doing, tbx_store_row_fn *on_row, void *ctx);

/*
 * The first column of the first row of a query that always yields one (an
 * aggregate, a pragma). Caller holds the lock.
 */
int tbx_store_query_int64(struct tbx_store *store, const char *sql,
			  const struct tbx_store_param *params, size_t n_params, const char *doing,
			  int64_t *out);

/* Wall clock in unix milliseconds: what every timestamp column holds. */
int64_t tbx_store_now_ms(void);

#endif /* TBX_STORE_PRIV_H */
