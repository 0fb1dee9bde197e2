/* SPDX-License-Identifier: MIT */
/* Session rows: which frontend key maps to which sandbox, twin and branch. */
#include "store-priv.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

#define SESSION_COLUMNS                                                                    \
	"id, frontend, external_key, project_dir, repo_root, engine, sandbox_id, workdir, " \
	"twin_id, branch_number, no_twin, state, created_at, updated_at, last_used_at"

void tbx_session_row_clear(struct tbx_session_row *row)
{
	if (!row)
		return;
	free(row->id);
	free(row->frontend);
	free(row->external_key);
	free(row->project_dir);
	free(row->repo_root);
	free(row->engine);
	free(row->sandbox_id);
	free(row->workdir);
	free(row->twin_id);
	free(row->state);
	memset(row, 0, sizeof(*row));
}

void tbx_session_rows_free(struct tbx_session_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++)
		tbx_session_row_clear(&rows[i]);
	free(rows);
}

static int session_state_valid(const char *state)
{
	return state && (strcmp(state, TBX_SESSION_OPEN) == 0 ||
			 strcmp(state, TBX_SESSION_CLOSED) == 0 ||
			 strcmp(state, TBX_SESSION_DELETED) == 0);
}

/* Copy a text column; NULL stays NULL. Returns -1 only when out of memory. */
static int column_dup(sqlite3_stmt *stmt, int col, char **out)
{
	const unsigned char *text = sqlite3_column_text(stmt, col);

	*out = NULL;
	if (!text)
		return 0;
	*out = strdup((const char *)text);
	return *out ? 0 : -1;
}

/* Fill out from a row selected with SESSION_COLUMNS, in that order. */
static int session_from_stmt(sqlite3_stmt *stmt, struct tbx_session_row *out)
{
	struct tbx_session_row row = { 0 };

	if (column_dup(stmt, 0, &row.id) < 0 || column_dup(stmt, 1, &row.frontend) < 0 ||
	    column_dup(stmt, 2, &row.external_key) < 0 ||
	    column_dup(stmt, 3, &row.project_dir) < 0 || column_dup(stmt, 4, &row.repo_root) < 0 ||
	    column_dup(stmt, 5, &row.engine) < 0 || column_dup(stmt, 6, &row.sandbox_id) < 0 ||
	    column_dup(stmt, 7, &row.workdir) < 0 || column_dup(stmt, 8, &row.twin_id) < 0 ||
	    column_dup(stmt, 11, &row.state) < 0) {
		tbx_session_row_clear(&row);
		return tbx_error_set(TBX_ENOMEM, "out of memory reading a session");
	}
	row.branch_number = sqlite3_column_int64(stmt, 9);
	row.no_twin = sqlite3_column_int(stmt, 10);
	row.created_at = sqlite3_column_int64(stmt, 12);
	row.updated_at = sqlite3_column_int64(stmt, 13);
	row.last_used_at = sqlite3_column_int64(stmt, 14);
	*out = row;
	return 0;
}

/* A new session clashes with an old one in one of two ways; say which, in the caller's terms. */
static int session_insert_explain(int rc, const void *ctx)
{
	const struct tbx_session_row *row = ctx;

	if (rc == SQLITE_CONSTRAINT_PRIMARYKEY)
		return tbx_error_set(TBX_EEXIST, "session %s already exists", row->id);
	if (rc == SQLITE_CONSTRAINT_UNIQUE)
		return tbx_error_set(TBX_EEXIST, "frontend %s already has a live session for key "
				     "%s; reuse it or delete it first", row->frontend,
				     row->external_key);
	return 0;
}

/* The INSERT itself, for a row the caller has validated; state is already defaulted. */
static int session_insert_row(struct tbx_store *store, const struct tbx_session_row *row,
			      const char *state, int64_t now)
{
	/* Zero timestamps mean "now", so callers need not read the clock. */
	const struct tbx_store_param params[] = {
		TBX_STORE_TEXT(row->id),
		TBX_STORE_TEXT(row->frontend),
		TBX_STORE_TEXT(row->external_key),
		TBX_STORE_TEXT(row->project_dir),
		TBX_STORE_TEXT(row->repo_root),
		TBX_STORE_TEXT(row->engine),
		TBX_STORE_TEXT(row->sandbox_id),
		TBX_STORE_TEXT(row->workdir),
		TBX_STORE_TEXT(row->twin_id),
		TBX_STORE_INT(row->branch_number),
		TBX_STORE_INT(row->no_twin ? 1 : 0),
		TBX_STORE_TEXT(state),
		TBX_STORE_INT(row->created_at ? row->created_at : now),
		TBX_STORE_INT(row->updated_at ? row->updated_at : now),
		TBX_STORE_INT(row->last_used_at ? row->last_used_at : now),
	};

	return tbx_store_write(store, "INSERT INTO sessions (" SESSION_COLUMNS ")"
			       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       params, TBX_STORE_N(params), "inserting a session",
			       session_insert_explain, row);
}

int tbx_store_session_insert(struct tbx_store *store, const struct tbx_session_row *row)
{
	int64_t now = tbx_store_now_ms();
	const char *state;

	if (!row || !row->id || !row->frontend || !row->external_key || !row->project_dir ||
	    !row->engine)
		return tbx_error_set(TBX_EINVAL, "a session needs an id, frontend, external key, "
				     "project directory and engine");
	state = row->state ? row->state : TBX_SESSION_OPEN;
	if (!session_state_valid(state))
		return tbx_error_set(TBX_EINVAL, "unknown session state '%s'", state);
	if (row->branch_number < 0)
		return tbx_error_set(TBX_EINVAL, "branch number %lld is negative",
				     (long long)row->branch_number);
	return session_insert_row(store, row, state, now);
}

/* Row reader for queries that match at most one session: fill ctx, a tbx_session_row. */
static int session_read_one(sqlite3_stmt *stmt, void *ctx)
{
	int status = session_from_stmt(stmt, ctx);

	return status < 0 ? status : 1;
}

int tbx_store_session_get(struct tbx_store *store, const char *id, struct tbx_session_row *out)
{
	const struct tbx_store_param params[] = { TBX_STORE_TEXT(id) };
	int status;

	memset(out, 0, sizeof(*out));
	if (!id)
		return tbx_error_set(TBX_EINVAL, "no session id given");
	status = tbx_store_read(store, "SELECT " SESSION_COLUMNS " FROM sessions WHERE id = ?",
				params, TBX_STORE_N(params), "reading a session", session_read_one,
				out);
	if (status == 0)
		return tbx_error_set(TBX_ENOENT, "no session %s", id);
	return status < 0 ? status : 0;
}

int tbx_store_session_find(struct tbx_store *store, const char *frontend, const char *key,
			   struct tbx_session_row *out)
{
	const struct tbx_store_param params[] = { TBX_STORE_TEXT(frontend), TBX_STORE_TEXT(key) };
	int status;

	memset(out, 0, sizeof(*out));
	if (!frontend || !key)
		return tbx_error_set(TBX_EINVAL, "finding a session needs a frontend and a key");
	status = tbx_store_read(store,
				"SELECT " SESSION_COLUMNS " FROM sessions"
				" WHERE frontend = ? AND external_key = ? AND state != 'deleted'",
				params, TBX_STORE_N(params), "reading a session", session_read_one,
				out);
	if (status == 0)
		return tbx_error_set(TBX_ENOENT, "frontend %s has no live session for key %s",
				     frontend, key);
	return status < 0 ? status : 0;
}

struct session_list {
	struct tbx_session_row *rows;
	size_t n, cap;
};

/* Row reader for a listing: append to ctx, a session_list, growing it by doubling. */
static int session_list_add(sqlite3_stmt *stmt, void *ctx)
{
	struct session_list *list = ctx;
	int status;

	if (list->n == list->cap) {
		size_t ncap = list->cap ? list->cap * 2 : 16;
		struct tbx_session_row *grown = realloc(list->rows, ncap * sizeof(*grown));

		if (!grown)
			return tbx_error_set(TBX_ENOMEM, "out of memory listing sessions");
		list->rows = grown;
		list->cap = ncap;
	}
	status = session_from_stmt(stmt, &list->rows[list->n]);
	if (status < 0)
		return status;
	list->n++;
	return 0;
}

int tbx_store_session_list(struct tbx_store *store, struct tbx_session_row **out, size_t *n_out)
{
	struct session_list list = { 0 };
	int status;

	*out = NULL;
	*n_out = 0;
	/* rowid breaks ties between sessions created in the same millisecond. */
	status = tbx_store_read(store,
				"SELECT " SESSION_COLUMNS " FROM sessions"
				" WHERE state != 'deleted' ORDER BY created_at, rowid",
				NULL, 0, "listing sessions", session_list_add, &list);
	if (status < 0) {
		tbx_session_rows_free(list.rows, list.n);
		return status;
	}
	*out = list.rows;
	*n_out = list.n;
	return 0;
}

/*
 * Run one UPDATE of session `id` inside the caller's write transaction;
 * ENOENT when no row matched.
 */
static int session_update_in(struct tbx_store *store, const char *id, const char *sql,
			     const struct tbx_store_param *params, size_t n_params,
			     const char *doing)
{
	int status = tbx_store_exec(store, sql, params, n_params, doing, NULL, NULL);

	if (status == 0 && sqlite3_changes(store->db) == 0)
		status = tbx_error_set(TBX_ENOENT, "no session %s", id);
	return status;
}

/* session_update_in in a write transaction of its own. */
static int session_update(struct tbx_store *store, const char *id, const char *sql,
			  const struct tbx_store_param *params, size_t n_params, const char *doing)
{
	int status = tbx_store_write_begin(store);

	if (status < 0)
		return status;
	status = session_update_in(store, id, sql, params, n_params, doing);
	return tbx_store_write_end(store, status);
}

int tbx_store_session_set_sandbox(struct tbx_store *store, const char *id, const char *sandbox_id,
				  const char *workdir)
{
	/* A forgotten sandbox takes its directory with it. */
	const struct tbx_store_param params[] = {
		TBX_STORE_TEXT(sandbox_id), TBX_STORE_TEXT(sandbox_id ? workdir : NULL),
		TBX_STORE_NOW, TBX_STORE_TEXT(id),
	};

	if (!id)
		return tbx_error_set(TBX_EINVAL, "no session id given");
	return session_update(store, id,
			      "UPDATE sessions SET sandbox_id = ?1, workdir = ?2, updated_at = ?3"
			      " WHERE id = ?4",
			      params, TBX_STORE_N(params), "recording a session's sandbox");
}

/* Row reader for "SELECT state": set ctx, an int, when the session is a tombstone. */
static int session_read_deleted(sqlite3_stmt *stmt, void *ctx)
{
	*(int *)ctx = strcmp((const char *)sqlite3_column_text(stmt, 0), TBX_SESSION_DELETED) == 0;
	return 1;
}

int tbx_store_session_set_state(struct tbx_store *store, const char *id, const char *state)
{
	const struct tbx_store_param by_id[] = { TBX_STORE_TEXT(id) };
	const struct tbx_store_param params[] = {
		TBX_STORE_TEXT(state), TBX_STORE_NOW, TBX_STORE_TEXT(id),
	};
	int status, deleted = 0;

	if (!id)
		return tbx_error_set(TBX_EINVAL, "no session id given");
	if (!session_state_valid(state))
		return tbx_error_set(TBX_EINVAL, "unknown session state '%s'",
				     state ? state : "(null)");
	status = tbx_store_write_begin(store);
	if (status < 0)
		return status;
	/*
	 * A tombstone stays one: its key may already belong to a newer live
	 * session, and its sandbox is gone.
	 */
	status = tbx_store_query(store, "SELECT state FROM sessions WHERE id = ?", by_id,
				 TBX_STORE_N(by_id), "reading a session's state",
				 session_read_deleted, &deleted);
	if (status == 0)
		status = tbx_error_set(TBX_ENOENT, "no session %s", id);
	if (status < 0)
		goto cleanup;
	if (deleted && strcmp(state, TBX_SESSION_DELETED) != 0) {
		status = tbx_error_set(TBX_EINVAL, "session %s is deleted and cannot become %s; "
				       "open a new session", id, state);
		goto cleanup;
	}
	status = session_update_in(store, id,
				   "UPDATE sessions SET state = ?1, updated_at = ?2 WHERE id = ?3",
				   params, TBX_STORE_N(params), "changing a session's state");
cleanup:
	return tbx_store_write_end(store, status);
}

int tbx_store_session_set_twin(struct tbx_store *store, const char *id, const char *twin_id)
{
	const struct tbx_store_param params[] = {
		TBX_STORE_TEXT(twin_id), TBX_STORE_NOW, TBX_STORE_TEXT(id),
	};

	if (!id)
		return tbx_error_set(TBX_EINVAL, "no session id given");
	return session_update(store, id,
			      "UPDATE sessions SET twin_id = ?1, updated_at = ?2 WHERE id = ?3",
			      params, TBX_STORE_N(params), "recording a session's twin");
}

int tbx_store_session_touch(struct tbx_store *store, const char *id)
{
	const struct tbx_store_param params[] = { TBX_STORE_NOW, TBX_STORE_TEXT(id) };

	if (!id)
		return tbx_error_set(TBX_EINVAL, "no session id given");
	/* Use is not a change of the session, so updated_at stays. */
	return session_update(store, id, "UPDATE sessions SET last_used_at = ?1 WHERE id = ?2",
			      params, TBX_STORE_N(params), "touching a session");
}
