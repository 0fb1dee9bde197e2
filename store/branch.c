/* SPDX-License-Identifier: MIT */
/* The per-repository ledger of branch numbers (opencode/N): handed out once, never again. */
#include "store-priv.h"

#include "error.h"

/* The ledger's foreign key is the only refusal we expect: the session is not there. */
static int branch_explain(int rc, const void *ctx)
{
	const char *session_id = ctx;

	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return tbx_error_set(TBX_ENOENT, "no session %s to allocate a branch for; insert "
				     "the session first", session_id);
	return 0;
}

/* Record n in the ledger and on the session, inside the caller's transaction. */
static int branch_record(struct tbx_store *store, const char *repo_root, const char *session_id,
			 int64_t n)
{
	const struct tbx_store_param entry[] = {
		TBX_STORE_TEXT(repo_root), TBX_STORE_INT(n), TBX_STORE_TEXT(session_id),
		TBX_STORE_NOW,
	};
	const struct tbx_store_param session[] = {
		TBX_STORE_INT(n), TBX_STORE_NOW, TBX_STORE_TEXT(session_id),
	};
	int status;

	status = tbx_store_exec(store, "INSERT INTO branches (repo_root, n, session_id,"
				" allocated_at) VALUES (?, ?, ?, ?)", entry, TBX_STORE_N(entry),
				"recording a branch number", branch_explain, session_id);
	if (status < 0)
		return status;
	/* The session row carries its current number so readers need not join. */
	return tbx_store_exec(store, "UPDATE sessions SET branch_number = ?, updated_at = ?"
			      " WHERE id = ?", session, TBX_STORE_N(session),
			      "recording a session's branch number", NULL, NULL);
}

int tbx_store_branch_allocate(struct tbx_store *store, const char *repo_root,
			      const char *session_id, int64_t floor, int64_t *n_out)
{
	const struct tbx_store_param repo[] = { TBX_STORE_TEXT(repo_root) };
	int64_t highest = 0, n = 0;
	int status;

	*n_out = 0;
	if (!repo_root || repo_root[0] != '/')
		return tbx_error_set(TBX_EINVAL, "branch numbers need an absolute repository path, "
				     "not '%s'", repo_root ? repo_root : "(null)");
	if (!session_id)
		return tbx_error_set(TBX_EINVAL, "no session id given");
	if (floor < 0 || floor == INT64_MAX)
		return tbx_error_set(TBX_EINVAL, "branch floor %lld is out of range",
				     (long long)floor);

	/*
	 * The write lock is taken before reading the highest number, so no other
	 * thread or process can read the same maximum until we commit ours.
	 */
	status = tbx_store_write_begin(store);
	if (status < 0)
		return status;
	status = tbx_store_query_int64(store, "SELECT coalesce(max(n), 0) FROM branches"
				       " WHERE repo_root = ?", repo, TBX_STORE_N(repo),
				       "reading the highest branch number", &highest);
	if (status < 0)
		goto cleanup;
	if (highest < floor)
		highest = floor;
	if (highest == INT64_MAX) {
		status = tbx_error_set(TBX_EINVAL, "repository %s has run out of branch numbers",
				       repo_root);
		goto cleanup;
	}
	n = highest + 1;
	status = branch_record(store, repo_root, session_id, n);
cleanup:
	status = tbx_store_write_end(store, status);
	if (status == 0)
		*n_out = n;
	return status;
}
