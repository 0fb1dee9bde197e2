/* SPDX-License-Identifier: MIT */
/* Session rows: which frontend key maps to which sandbox, twin and branch. */
#include "store-priv.h"

#include <stdio.h>
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

int tbx_store_session_insert(struct tbx_store *store, const struct tbx_session_row *row)
{
	static const char sql[] = "INSERT INTO sessions (" SESSION_COLUMNS ")"
				  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	sqlite3_stmt *stmt = NULL;
	const char *state;
	int64_t now = tbx_store_now_ms();
	int status, rc;

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

	tbx_store_lock(store);
	status = tbx_store_begin(store);
	if (status < 0)
		goto unlock;
	status = tbx_store_prepare(store, sql, &stmt);
	if (status < 0)
		goto cleanup;
	sqlite3_bind_text(stmt, 1, row->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, row->frontend, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 3, row->external_key, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 4, row->project_dir, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 5, row->repo_root, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 6, row->engine, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 7, row->sandbox_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 8, row->workdir, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 9, row->twin_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 10, row->branch_number);
	sqlite3_bind_int(stmt, 11, row->no_twin ? 1 : 0);
	sqlite3_bind_text(stmt, 12, state, -1, SQLITE_STATIC);
	/* Zero timestamps mean "now", so callers need not read the clock. */
	sqlite3_bind_int64(stmt, 13, row->created_at ? row->created_at : now);
	sqlite3_bind_int64(stmt, 14, row->updated_at ? row->updated_at : now);
	sqlite3_bind_int64(stmt, 15, row->last_used_at ? row->last_used_at : now);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
		status = tbx_error_set(TBX_EEXIST, "session %s already exists", row->id);
	} else if (rc == SQLITE_CONSTRAINT_UNIQUE) {
		status = tbx_error_set(TBX_EEXIST, "frontend %s already has a live session for key "
				       "%s; reuse it or delete it first", row->frontend,
				       row->external_key);
	} else if (rc != SQLITE_DONE) {
		status = tbx_store_fail(store, rc, "inserting a session");
	}
cleanup:
	sqlite3_finalize(stmt);
	if (status < 0)
		tbx_store_rollback(store);
	else
		status = tbx_store_commit(store);
unlock:
	tbx_store_unlock(store);
	return status;
}

/* Run a query expected to return at most one session row; ENOENT with `missing` when none. */
static int session_select_one(struct tbx_store *store, sqlite3_stmt *stmt,
			      struct tbx_session_row *out, const char *missing)
{
	int rc = sqlite3_step(stmt);

	if (rc == SQLITE_ROW)
		return session_from_stmt(stmt, out);
	if (rc == SQLITE_DONE)
		return tbx_error_set(TBX_ENOENT, "%s", missing);
	return tbx_store_fail(store, rc, "reading a session");
}

int tbx_store_session_get(struct tbx_store *store, const char *id, struct tbx_session_row *out)
{
	sqlite3_stmt *stmt = NULL;
	char missing[256];
	int status;

	memset(out, 0, sizeof(*out));
	if (!id)
		return tbx_error_set(TBX_EINVAL, "no session id given");
	snprintf(missing, sizeof(missing), "no session %s", id);
	tbx_store_lock(store);
	status = tbx_store_prepare(store, "SELECT " SESSION_COLUMNS " FROM sessions WHERE id = ?",
				   &stmt);
	if (status == 0) {
		sqlite3_bind_text(stmt, 1, id, -1, SQLITE_STATIC);
		status = session_select_one(store, stmt, out, missing);
	}
	sqlite3_finalize(stmt);
	tbx_store_unlock(store);
	return status;
}

int tbx_store_session_find(struct tbx_store *store, const char *frontend, const char *key,
			   struct tbx_session_row *out)
{
	sqlite3_stmt *stmt = NULL;
	char missing[512];
	int status;

	memset(out, 0, sizeof(*out));
	if (!frontend || !key)
		return tbx_error_set(TBX_EINVAL, "finding a session needs a frontend and a key");
	snprintf(missing, sizeof(missing), "frontend %s has no live session for key %s", frontend,
		 key);
	tbx_store_lock(store);
	status = tbx_store_prepare(store,
				   "SELECT " SESSION_COLUMNS " FROM sessions"
				   " WHERE frontend = ? AND external_key = ? AND state != 'deleted'",
				   &stmt);
	if (status == 0) {
		sqlite3_bind_text(stmt, 1, frontend, -1, SQLITE_STATIC);
		sqlite3_bind_text(stmt, 2, key, -1, SQLITE_STATIC);
		status = session_select_one(store, stmt, out, missing);
	}
	sqlite3_finalize(stmt);
	tbx_store_unlock(store);
	return status;
}

int tbx_store_session_list(struct tbx_store *store, struct tbx_session_row **out, size_t *n_out)
{
	struct tbx_session_row *rows = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *stmt = NULL;
	int status, rc;

	*out = NULL;
	*n_out = 0;
	tbx_store_lock(store);
	/* rowid breaks ties between sessions created in the same millisecond. */
	status = tbx_store_prepare(store,
				   "SELECT " SESSION_COLUMNS " FROM sessions"
				   " WHERE state != 'deleted' ORDER BY created_at, rowid",
				   &stmt);
	if (status < 0)
		goto cleanup;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct tbx_session_row *grown = realloc(rows, ncap * sizeof(*rows));

			if (!grown) {
				status = tbx_error_set(TBX_ENOMEM, "out of memory listing sessions");
				goto cleanup;
			}
			rows = grown;
			cap = ncap;
		}
		status = session_from_stmt(stmt, &rows[n]);
		if (status < 0)
			goto cleanup;
		n++;
	}
	if (rc != SQLITE_DONE) {
		status = tbx_store_fail(store, rc, "listing sessions");
		goto cleanup;
	}
	*out = rows;
	*n_out = n;
	rows = NULL;
cleanup:
	sqlite3_finalize(stmt);
	tbx_store_unlock(store);
	tbx_session_rows_free(rows, n);
	return status;
}

/*
 * Run one UPDATE on session `id` inside a write transaction. The caller's
 * statement has `id` as its last parameter (number id_param); ENOENT when no
 * row matched.
 */
static int session_update(struct tbx_store *store, const char *id, sqlite3_stmt *stmt,
			  int id_param, const char *doing)
{
	int rc;

	sqlite3_bind_text(stmt, id_param, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc != SQLITE_DONE)
		return tbx_store_fail(store, rc, doing);
	if (sqlite3_changes(store->db) == 0)
		return tbx_error_set(TBX_ENOENT, "no session %s", id);
	return 0;
}

int tbx_store_session_set_sandbox(struct tbx_store *store, const char *id, const char *sandbox_id,
				  const char *workdir)
{
	sqlite3_stmt *stmt = NULL;
	int status;

	if (!id)
		return tbx_error_set(TBX_EINVAL, "no session id given");
	tbx_store_lock(store);
	status = tbx_store_begin(store);
	if (status < 0)
		goto unlock;
	status = tbx_store_prepare(store,
				   "UPDATE sessions SET sandbox_id = ?1, workdir = ?2, updated_at = ?3"
				   " WHERE id = ?4",
				   &stmt);
	if (status < 0)
		goto cleanup;
	sqlite3_bind_text(stmt, 1, sandbox_id, -1, SQLITE_STATIC);
	/* A forgotten sandbox takes its directory with it. */
	sqlite3_bind_text(stmt, 2, sandbox_id ? workdir : NULL, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 3, tbx_store_now_ms());
	status = session_update(store, id, stmt, 4, "recording a session's sandbox");
cleanup:
	sqlite3_finalize(stmt);
	if (status < 0)
		tbx_store_rollback(store);
	else
		status = tbx_store_commit(store);
unlock:
	tbx_store_unlock(store);
	return status;
}

int tbx_store_session_set_state(struct tbx_store *store, const char *id, const char *state)
{
	sqlite3_stmt *stmt = NULL;
	int status, rc;

	if (!id)
		return tbx_error_set(TBX_EINVAL, "no session id given");
	if (!session_state_valid(state))
		return tbx_error_set(TBX_EINVAL, "unknown session state '%s'",
				     state ? state : "(null)");
	tbx_store_lock(store);
	status = tbx_store_begin(store);
	if (status < 0)
		goto unlock;
	/*
	 * A tombstone stays one: its key may already belong to a newer live
	 * session, and its sandbox is gone.
	 */
	status = tbx_store_prepare(store, "SELECT state FROM sessions WHERE id = ?", &stmt);
	if (status < 0)
		goto cleanup;
	sqlite3_bind_text(stmt, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_DONE) {
		status = tbx_error_set(TBX_ENOENT, "no session %s", id);
		goto cleanup;
	}
	if (rc != SQLITE_ROW) {
		status = tbx_store_fail(store, rc, "reading a session's state");
		goto cleanup;
	}
	if (strcmp((const char *)sqlite3_column_text(stmt, 0), TBX_SESSION_DELETED) == 0 &&
	    strcmp(state, TBX_SESSION_DELETED) != 0) {
		status = tbx_error_set(TBX_EINVAL, "session %s is deleted and cannot become %s; "
				       "open a new session", id, state);
		goto cleanup;
	}
	sqlite3_finalize(stmt);
	stmt = NULL;
	status = tbx_store_prepare(store,
				   "UPDATE sessions SET state = ?1, updated_at = ?2 WHERE id = ?3",
				   &stmt);
	if (status < 0)
		goto cleanup;
	sqlite3_bind_text(stmt, 1, state, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, tbx_store_now_ms());
	status = session_update(store, id, stmt, 3, "changing a session's state");
cleanup:
	sqlite3_finalize(stmt);
	if (status < 0)
		tbx_store_rollback(store);
	else
		status = tbx_store_commit(store);
unlock:
	tbx_store_unlock(store);
	return status;
}

int tbx_store_session_set_twin(struct tbx_store *store, const char *id, const char *twin_id)
{
	sqlite3_stmt *stmt = NULL;
	int status;

	if (!id)
		return tbx_error_set(TBX_EINVAL, "no session id given");
	tbx_store_lock(store);
	status = tbx_store_begin(store);
	if (status < 0)
		goto unlock;
	status = tbx_store_prepare(store,
				   "UPDATE sessions SET twin_id = ?1, updated_at = ?2 WHERE id = ?3",
				   &stmt);
	if (status < 0)
		goto cleanup;
	sqlite3_bind_text(stmt, 1, twin_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, tbx_store_now_ms());
	status = session_update(store, id, stmt, 3, "recording a session's twin");
cleanup:
	sqlite3_finalize(stmt);
	if (status < 0)
		tbx_store_rollback(store);
	else
		status = tbx_store_commit(store);
unlock:
	tbx_store_unlock(store);
	return status;
}

int tbx_store_session_touch(struct tbx_store *store, const char *id)
{
	sqlite3_stmt *stmt = NULL;
	int status;

	if (!id)
		return tbx_error_set(TBX_EINVAL, "no session id given");
	tbx_store_lock(store);
	status = tbx_store_begin(store);
	if (status < 0)
		goto unlock;
	/* Use is not a change of the session, so updated_at stays. */
	status = tbx_store_prepare(store, "UPDATE sessions SET last_used_at = ?1 WHERE id = ?2",
				   &stmt);
	if (status < 0)
		goto cleanup;
	sqlite3_bind_int64(stmt, 1, tbx_store_now_ms());
	status = session_update(store, id, stmt, 2, "touching a session");
cleanup:
	sqlite3_finalize(stmt);
	if (status < 0)
		tbx_store_rollback(store);
	else
		status = tbx_store_commit(store);
unlock:
	tbx_store_unlock(store);
	return status;
}
