/* SPDX-License-Identifier: MIT */
/* A session's append-only event log. */
#include "store-priv.h"

#include "error.h"

int tbx_store_event_append(struct tbx_store *store, const char *session_id, const char *kind,
			   const char *json)
{
	sqlite3_stmt *stmt = NULL;
	int status, rc;

	if (!session_id || !kind || !json)
		return tbx_error_set(TBX_EINVAL, "an event needs a session id, a kind and JSON");
	tbx_store_lock(store);
	status = tbx_store_begin(store);
	if (status < 0)
		goto unlock;
	status = tbx_store_prepare(store, "INSERT INTO events (session_id, at, kind, json)"
				   " VALUES (?, ?, ?, ?)", &stmt);
	if (status < 0)
		goto cleanup;
	sqlite3_bind_text(stmt, 1, session_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, tbx_store_now_ms());
	sqlite3_bind_text(stmt, 3, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 4, json, -1, SQLITE_STATIC);
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		status = tbx_error_set(TBX_ENOENT, "no session %s to log a %s event for", session_id,
				       kind);
	else if (rc == SQLITE_CONSTRAINT_CHECK)
		status = tbx_error_set(TBX_EINVAL, "the %s event for session %s is not valid JSON",
				       kind, session_id);
	else if (rc != SQLITE_DONE)
		status = tbx_store_fail(store, rc, "appending an event");
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
