/* SPDX-License-Identifier: MIT */
/*
 * The daemon's persistent state in SQLite: sessions, branch numbers per
 * repository, receipts and events. Thread-safe; used only from worker
 * threads after start-up, never from the event loop.
 */
#ifndef TBX_STORE_H
#define TBX_STORE_H

#include <stddef.h>
#include <stdint.h>

struct tbx_store;

/*
 * The schema version this build writes (PRAGMA user_version). It equals the
 * number of entries in store/migrations.c: 1 = sessions, 2 = branch ledger,
 * events and receipts.
 */
#define TBX_STORE_SCHEMA_VERSION 2

/* Session lifecycle states, as stored. */
#define TBX_SESSION_OPEN "open"       /* no sandbox yet, or sandbox live */
#define TBX_SESSION_CLOSED "closed"   /* detached by its frontend; sandbox kept */
#define TBX_SESSION_DELETED "deleted" /* sandbox killed; row kept as a tombstone */

struct tbx_session_row {
	char *id;           /* "ses_" + 20 [a-z0-9] */
	char *frontend;     /* "cli", "mcp", "opencode"... */
	char *external_key; /* the frontend's own key; unique per frontend among live sessions */
	char *project_dir;  /* local directory the session was opened on */
	char *repo_root;    /* its git worktree root, or NULL */
	char *engine;       /* backend name */
	char *sandbox_id;   /* NULL until first use */
	char *workdir;      /* the sandbox's project directory, NULL until first use */
	char *twin_id;      /* NULL without a twin */
	int64_t branch_number; /* 0 = none allocated */
	int no_twin;
	char *state;        /* TBX_SESSION_* */
	int64_t created_at; /* unix ms */
	int64_t updated_at;
	int64_t last_used_at;
};

/* Frees the members (not the struct); safe on a zeroed row. */
void tbx_session_row_clear(struct tbx_session_row *row);

/*
 * Open (creating if needed) the database at path, in WAL mode, and migrate it
 * forward to TBX_STORE_SCHEMA_VERSION. A database newer than this build is
 * refused with TBX_EINVAL and a message saying so; nothing is changed.
 * Parent directories are created with mode 0700.
 */
int tbx_store_open(const char *path, struct tbx_store **out);
void tbx_store_close(struct tbx_store *store);

/* Current PRAGMA user_version (for tests and `status`), or a negative tbx_status. */
int tbx_store_schema_version(struct tbx_store *store);

/*
 * Insert a new session; TBX_EEXIST when the id exists or a live session has
 * the same frontend and key. Zero timestamps are taken as "now"; a NULL
 * state as TBX_SESSION_OPEN.
 */
int tbx_store_session_insert(struct tbx_store *store, const struct tbx_session_row *row);
/* TBX_ENOENT when no such id. */
int tbx_store_session_get(struct tbx_store *store, const char *id, struct tbx_session_row *out);
/* The live (not deleted) session of frontend + key; TBX_ENOENT when none. */
int tbx_store_session_find(struct tbx_store *store, const char *frontend, const char *key,
			   struct tbx_session_row *out);
/* All sessions not deleted, oldest first; *out is an array to free with tbx_session_rows_free. */
int tbx_store_session_list(struct tbx_store *store, struct tbx_session_row **out, size_t *n_out);
void tbx_session_rows_free(struct tbx_session_row *rows, size_t n);
/* Record the sandbox a session got (sandbox_id NULL = forget it). */
int tbx_store_session_set_sandbox(struct tbx_store *store, const char *id, const char *sandbox_id,
				  const char *workdir);
/* A deleted session stays deleted (TBX_EINVAL for any other state). */
int tbx_store_session_set_state(struct tbx_store *store, const char *id, const char *state);
int tbx_store_session_set_twin(struct tbx_store *store, const char *id, const char *twin_id);
/* Bump last_used_at to now. */
int tbx_store_session_touch(struct tbx_store *store, const char *id);

/*
 * Allocate the next branch number N for repo_root (an absolute path),
 * starting above `floor` (the highest opencode/N already present locally),
 * record it against session_id, and never hand the same N out twice for that
 * repository, across processes and restarts. The session must already be
 * inserted (TBX_ENOENT otherwise); its branch_number becomes N in the same
 * transaction. Each call hands out a new N, even for the same session.
 */
int tbx_store_branch_allocate(struct tbx_store *store, const char *repo_root,
			      const char *session_id, int64_t floor, int64_t *n_out);

/*
 * Append an event (kind, JSON text) to a session's log. TBX_ENOENT for an
 * unknown session, TBX_EINVAL when json is not valid JSON.
 */
int tbx_store_event_append(struct tbx_store *store, const char *session_id, const char *kind,
			   const char *json);

#endif /* TBX_STORE_H */
