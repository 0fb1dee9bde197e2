/* SPDX-License-Identifier: MIT */
/*
 * Sessions (DESIGN §4): a frontend's external key bound to a project
 * directory, an engine and, from first use, exactly one sandbox. The mapping
 * lives in the store, so it survives restarts of the daemon and of frontends.
 * Everything here runs on worker threads.
 */
#ifndef TBX_SESSION_H
#define TBX_SESSION_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;
struct tbx_core;
struct tbx_session;
struct tbx_sessions;

struct tbx_session_open_args {
	const char *frontend;    /* "cli" when NULL */
	const char *key;         /* external key; NULL = a fresh session every time */
	const char *project_dir; /* absolute; the client's directory */
	const char *engine;      /* NULL = the default engine */
	int no_twin;
};

int tbx_sessions_new(struct tbx_core *core, struct tbx_sessions **out);
void tbx_sessions_free(struct tbx_sessions *sessions);

/* Open a new session, or attach to the live one with the same frontend and key. */
int tbx_session_open(struct tbx_sessions *sessions, const struct tbx_session_open_args *args,
		     struct json_object **out);
/* Look a session up (loading it from the store); TBX_ENOENT when unknown. */
int tbx_session_get(struct tbx_sessions *sessions, const char *id, struct tbx_session **out);
void tbx_session_unref(struct tbx_session *session);

int tbx_session_to_json(struct tbx_session *session, struct json_object **out);
int tbx_sessions_list_json(struct tbx_sessions *sessions, struct json_object **out);
/* Live sessions known in memory or the store. */
size_t tbx_sessions_count(struct tbx_sessions *sessions);

/* Detach: the sandbox is kept for a later attach. */
int tbx_session_close(struct tbx_session *session);
/* Kill the sandbox and mark the session deleted. */
int tbx_session_delete(struct tbx_session *session, const atomic_int *cancel);

/*
 * Run a tool in the session's sandbox, creating, resuming or replacing the
 * sandbox first (exactly once however many calls race).
 */
int tbx_session_tool_call(struct tbx_session *session, const char *tool,
			  struct json_object *args, const atomic_int *cancel,
			  void (*on_progress)(void *payload, const char *stream, const char *data,
					      size_t len),
			  void *payload, struct json_object **result_out);

/*
 * gitSync without a tool call (the `sync` method): commit everything in the
 * session's sandbox and bring it home onto opencode/N. Never makes a
 * sandbox (TBX_ENOENT when the session has none yet); resumes a paused one.
 * *result_out is {summary, branch, tip, commits, files_changed, bytes,
 * incremental, up_to_date, committed, backup, backup_commits, notice}.
 * on_progress (may be NULL) hears phases ("commit", "receive", "index",
 * "refs"...) with counts, at most every 100 ms per phase.
 */
int tbx_session_sync(struct tbx_session *session, const atomic_int *cancel,
		     void (*on_progress)(void *payload, const char *phase, uint64_t done,
					 uint64_t total),
		     void *payload, struct json_object **result_out);

/*
 * The idle sync (DESIGN §6), for the idle/pool work to call when a session
 * goes idle: a sync home if the session has a repository and a sandbox this
 * daemon has running; otherwise nothing (0). It never wakes or makes a
 * sandbox. The outcome is in the log, the events and the sync status.
 */
int tbx_session_sync_idle(struct tbx_session *session);

/*
 * The session's twin and what it received: {twin_id, environment_id, egress,
 * services: [{name, hosts, requests: [Entry...], has_more, last_id}]}, the
 * entries of each service after since[name] (the last_id of an earlier call:
 * a baseline), oldest first, at most limit each. TBX_ENOENT without a twin.
 */
int tbx_session_twin(struct tbx_session *session, struct json_object *since, int limit,
		     struct json_object **out);

#endif
