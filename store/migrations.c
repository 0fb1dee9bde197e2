/* SPDX-License-Identifier: MIT */
/* The store's schema history and the runner that applies it, one version per transaction. */
#include "store-priv.h"

#include <stdio.h>

#include "error.h"

/*
 * Released entries are frozen: a database in the field was built by exactly
 * this text. Change the schema by appending an entry and raising
 * TBX_STORE_SCHEMA_VERSION; tests/store keeps a fixture of every older version.
 */
const char *const tbx_store_migrations[] = {
	/* 0 -> 1: sessions. */
	"CREATE TABLE sessions ("
	"  id TEXT PRIMARY KEY NOT NULL,"
	"  frontend TEXT NOT NULL,"
	"  external_key TEXT NOT NULL,"
	"  project_dir TEXT NOT NULL,"
	"  repo_root TEXT,"
	"  engine TEXT NOT NULL,"
	"  sandbox_id TEXT,"
	"  workdir TEXT,"
	"  twin_id TEXT,"
	"  branch_number INTEGER NOT NULL DEFAULT 0 CHECK (branch_number >= 0),"
	"  no_twin INTEGER NOT NULL DEFAULT 0 CHECK (no_twin IN (0, 1)),"
	"  state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed', 'deleted')),"
	"  created_at INTEGER NOT NULL,"
	"  updated_at INTEGER NOT NULL,"
	"  last_used_at INTEGER NOT NULL"
	");"
	/* Deleted sessions stay as tombstones, so a key may come back once its old session is gone. */
	"CREATE UNIQUE INDEX sessions_live_key ON sessions (frontend, external_key)"
	"  WHERE state != 'deleted';"
	"CREATE INDEX sessions_created ON sessions (created_at);",

	/*
	 * 1 -> 2: the branch ledger, the event log and receipts. Branch numbers
	 * already handed out live only in sessions.branch_number at version 1;
	 * copy them into the ledger so they are never handed out again.
	 */
	"CREATE TABLE branches ("
	"  repo_root TEXT NOT NULL,"
	"  n INTEGER NOT NULL CHECK (n > 0),"
	"  session_id TEXT NOT NULL REFERENCES sessions (id),"
	"  allocated_at INTEGER NOT NULL,"
	"  UNIQUE (repo_root, n)"
	");"
	"CREATE INDEX branches_session ON branches (session_id);"
	"INSERT OR IGNORE INTO branches (repo_root, n, session_id, allocated_at)"
	"  SELECT repo_root, branch_number, id, created_at FROM sessions"
	"  WHERE branch_number > 0 AND repo_root IS NOT NULL;"
	"CREATE TABLE events ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  session_id TEXT NOT NULL REFERENCES sessions (id),"
	"  at INTEGER NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  json TEXT NOT NULL CHECK (json_valid(json))"
	");"
	"CREATE INDEX events_session ON events (session_id, id);"
	/* Signed receipts of what a session did; the signature lives inside the envelope. */
	"CREATE TABLE receipts ("
	"  id TEXT PRIMARY KEY NOT NULL,"
	"  session_id TEXT NOT NULL REFERENCES sessions (id),"
	"  created_at INTEGER NOT NULL,"
	"  baseline TEXT,"
	"  envelope_json TEXT NOT NULL CHECK (json_valid(envelope_json))"
	");"
	"CREATE INDEX receipts_session ON receipts (session_id, created_at);",
};

_Static_assert(sizeof(tbx_store_migrations) / sizeof(tbx_store_migrations[0]) ==
		       TBX_STORE_SCHEMA_VERSION,
	       "TBX_STORE_SCHEMA_VERSION must equal the number of migrations");

/*
 * Apply one step. The version is read again under the write lock: another
 * process starting at the same moment may have migrated already, and each
 * step must be applied exactly once.
 */
static int store_migrate_step(struct tbx_store *store, int *done_out)
{
	char sql[64];
	int status, rc, version = 0;

	*done_out = 0;
	status = tbx_store_begin(store);
	if (status < 0)
		return status;
	status = tbx_store_user_version(store, &version);
	if (status < 0)
		goto cleanup;
	if (version > TBX_STORE_SCHEMA_VERSION) {
		status = tbx_error_set(TBX_EINVAL, "database %s has schema version %d but this "
				       "twinbox only knows up to %d; upgrade twinbox", store->path,
				       version, TBX_STORE_SCHEMA_VERSION);
		goto cleanup;
	}
	if (version == TBX_STORE_SCHEMA_VERSION) {
		*done_out = 1;
		goto cleanup;
	}
	rc = sqlite3_exec(store->db, tbx_store_migrations[version], NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		char doing[64];

		snprintf(doing, sizeof(doing), "migrating schema version %d to %d", version,
			 version + 1);
		status = tbx_store_fail(store, rc, doing);
		goto cleanup;
	}
	/* PRAGMA takes no bound parameters; the value is our own integer. */
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", version + 1);
	rc = sqlite3_exec(store->db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		status = tbx_store_fail(store, rc, "recording the schema version");
cleanup:
	return tbx_store_end(store, status);
}

int tbx_store_migrate(struct tbx_store *store)
{
	int done = 0;

	while (!done) {
		int status = store_migrate_step(store, &done);

		if (status < 0)
			return status;
	}
	return 0;
}
