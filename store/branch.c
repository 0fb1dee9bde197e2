/* SPDX-License-Identifier: MIT */
/* The per-repository ledger of branch numbers (opencode/N): handed out once, never again. */
#include "store-priv.h"

#include "error.h"

int tbx_store_branch_allocate(struct tbx_store *store, const char *repo_root,
			      const char *session_id, int64_t floor, int64_t *n_out)
{
	sqlite3_stmt *stmt = NULL;
	int64_t highest, n = 0;
	int status, rc;

	*n_out = 0;
	if (!repo_root || repo_root[0] != '/')
		return tbx_error_set(TBX_EINVAL, "branch numbers need an absolute repository path, "
				     "not '%s'", repo_root ? repo_root : "(null)");
	if (!session_id)
		return tbx_error_set(TBX_EINVAL, "no session id given");
	if (floor < 0 || floor == INT64_MAX)
		return tbx_error_set(TBX_EINVAL, "branch floor %lld is out of range",
				     (long long)floor);

	tbx_store_lock(store);
	/*
	 * The write lock is taken before reading the highest number, so no other
	 * thread or process can read the same maximum until we commit ours.
	 */
	status = tbx_store_begin(store);
	if (status < 0)
		goto unlock;
	status = tbx_store_prepare(store, "SELECT coalesce(max(n), 0) FROM branches"
				   " WHERE repo_root = ?", &stmt);
	if (status < 0)
		goto cleanup;
	sqlite3_bind_text(stmt, 1, repo_root, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc != SQLITE_ROW) {
		status = tbx_store_fail(store, rc, "reading the highest branch number");
		goto cleanup;
	}
	highest = sqlite3_column_int64(stmt, 0);
	sqlite3_finalize(stmt);
	stmt = NULL;
	if (highest < floor)
		highest = floor;
	if (highest == INT64_MAX) {
		status = tbx_error_set(TBX_EINVAL, "repository %s has run out of branch numbers",
				       repo_root);
		goto cleanup;
	}
	n = highest + 1;

	status = tbx_store_prepare(store, "INSERT INTO branches (repo_root, n, session_id,"
				   " allocated_at) VALUES (?, ?, ?, ?)", &stmt);
	if (status < 0)
		goto cleanup;
	sqlite3_bind_text(stmt, 1, repo_root, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, n);
	sqlite3_bind_text(stmt, 3, session_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 4, tbx_store_now_ms());
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY) {
		status = tbx_error_set(TBX_ENOENT, "no session %s to allocate a branch for; insert "
				       "the session first", session_id);
		goto cleanup;
	}
	if (rc != SQLITE_DONE) {
		status = tbx_store_fail(store, rc, "recording a branch number");
		goto cleanup;
	}
	sqlite3_finalize(stmt);
	stmt = NULL;

	/* The session row carries its current number so readers need not join. */
	status = tbx_store_prepare(store, "UPDATE sessions SET branch_number = ?, updated_at = ?"
				   " WHERE id = ?", &stmt);
	if (status < 0)
		goto cleanup;
	sqlite3_bind_int64(stmt, 1, n);
	sqlite3_bind_int64(stmt, 2, tbx_store_now_ms());
	sqlite3_bind_text(stmt, 3, session_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc != SQLITE_DONE)
		status = tbx_store_fail(store, rc, "recording a session's branch number");
cleanup:
	sqlite3_finalize(stmt);
	if (status < 0) {
		tbx_store_rollback(store);
	} else {
		status = tbx_store_commit(store);
		if (status == 0)
			*n_out = n;
	}
unlock:
	tbx_store_unlock(store);
	return status;
}
