/* SPDX-License-Identifier: MIT */
/*
 * Git sync for sessions: a session's sandbox, reached through the engine
 * wrappers, as the port git/git-sync.h drives; branch numbers from the
 * store; and the sync status a session reports. Worker threads only.
 */
#ifndef TBX_SYNC_H
#define TBX_SYNC_H

#include <stdatomic.h>
#include <stdint.h>

#include "git-sync.h"

struct json_object;
struct tbx_engine;
struct tbx_store;

/* One sandbox as a git sync port; everything it points at is borrowed. */
struct tbx_sync_sandbox {
	struct tbx_engine *engine;
	const char *sandbox_id;
	const atomic_int *cancel;
	char scratch[128]; /* /tmp/twinbox-<session id> in the sandbox */
	struct tbx_git_sandbox port;
};

void tbx_sync_sandbox_init(struct tbx_sync_sandbox *s, struct tbx_engine *engine,
			   const char *sandbox_id, const char *workdir, const char *session_id,
			   const atomic_int *cancel);

/*
 * A new branch number for a session on repo_root: above every local
 * opencode/N and every number the store ever gave for that repository.
 */
int tbx_sync_branch_allocate(struct tbx_store *store, const char *repo_root,
			     const char *session_id, int64_t *n_out);

/* What a session says about its sync. */
struct tbx_sync_status {
	char *state;  /* "off", "adopted", "empty", "synced", "failed"; NULL before any */
	char *notice; /* what the agent and the user should hear, or NULL */
	struct json_object *last; /* metadata of the last sync home, or NULL */
};

void tbx_sync_status_set(struct tbx_sync_status *st, const char *state, const char *notice);
void tbx_sync_status_clear(struct tbx_sync_status *st);
/* {enabled, branch, state, notice, last} */
struct json_object *tbx_sync_status_json(const struct tbx_sync_status *st, const char *repo_root,
					 int64_t branch_number);

#endif
