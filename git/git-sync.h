/* SPDX-License-Identifier: MIT */
/*
 * Git sync between the user's repository and a sandbox (DESIGN §6): local
 * HEAD into the sandbox as branch `opencode` when the sandbox is made, and
 * the sandbox's `opencode` home onto local opencode/N on gitSync and idle.
 * Bundles are written and read on the host with libgit2 and moved through
 * the sandbox's file ops; the sandbox side runs the git CLI through its exec
 * op. So this needs no SSH, no port and no credential, and works the same on
 * every engine. The sandbox is reached only through struct tbx_git_sandbox,
 * which the daemon fills from its engine wrappers.
 */
#ifndef TBX_GIT_SYNC_H
#define TBX_GIT_SYNC_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "git-common.h"

struct json_object;

/* How a sandbox command ended, with what it printed. */
struct tbx_git_exec_result {
	int exit_code; /* -1 when killed */
	char *out;     /* stdout, NUL-terminated, malloc'd */
	size_t out_len;
	char *err;     /* stderr, likewise */
	size_t err_len;
};

void tbx_git_exec_result_clear(struct tbx_git_exec_result *r);

/* The sandbox as sync needs it: four ops, borrowed for one call. */
struct tbx_git_sandbox {
	/* Run `script` with /bin/sh in workdir, env ("KEY=VALUE", NULL-ended) added. */
	int (*exec)(void *payload, const char *script, const char *const *env,
		    uint32_t timeout_ms, struct tbx_git_exec_result *out);
	int (*file_read)(void *payload, const char *path, char **data_out, size_t *len_out);
	int (*file_write)(void *payload, const char *path, const char *data, size_t len);
	int (*file_remove)(void *payload, const char *path);
	void *payload;
	const char *workdir; /* the sandbox's project directory: its repository's root */
	const char *scratch; /* prefix for transfer files, e.g. "/tmp/twinbox-ses_x" */
};

struct tbx_git_sync_opts {
	const char *name;    /* identity for the sandbox's commits when it has none */
	const char *email;
	const char *message; /* message of the commit of uncommitted sandbox changes */
	const struct tbx_git_progress *progress;
	const atomic_int *cancel;
};

/* The identity a fresh sandbox commits with. */
#define TBX_GIT_SYNC_NAME "twinbox"
#define TBX_GIT_SYNC_EMAIL "twinbox@sandbox.invalid"

struct tbx_git_adopt_result {
	int head_kind;          /* enum tbx_git_head_kind of the local HEAD */
	git_oid oid;            /* the adopted commit, unless the repository is empty */
	char head_name[256];    /* the local branch, or "" */
	size_t dirty;           /* local paths HEAD leaves out */
	uint64_t bytes;         /* bundle bytes sent (0 when the sandbox had the commit) */
	int incremental;        /* the bundle had prerequisites */
	char *notice;           /* what to tell the agent and the user, or NULL */
};

void tbx_git_adopt_result_clear(struct tbx_git_adopt_result *r);

/*
 * Make local HEAD's commit branch `opencode`, checked out in the sandbox's
 * workdir (a repository is made there if needed). The bundle is incremental
 * over whatever the sandbox already holds. A dirty local worktree is not an
 * error: out->notice says so. TBX_ENOENT when repo_root is not a
 * repository; TBX_ENOTSUP when the sandbox has no git.
 */
int tbx_git_sync_adopt(const char *repo_root, const struct tbx_git_sandbox *sbx,
		       const struct tbx_git_sync_opts *opts, struct tbx_git_adopt_result *out);

struct tbx_git_home_result {
	char branch[256];    /* where the work went: "opencode/N" or "opencode/N-incoming" */
	int has_tip;         /* 0 when the sandbox has no commit on opencode yet */
	git_oid tip;
	size_t commits;      /* commits new to that branch */
	size_t files_changed;
	uint64_t bytes;      /* bundle bytes brought home */
	int incremental;     /* the bundle had prerequisites */
	int up_to_date;      /* nothing new: the branch was already there */
	int committed;       /* the sandbox had uncommitted changes and committed them */
	char *backup;        /* short name of the branch keeping local-only commits, or NULL */
	size_t backup_commits;
	char *notice;        /* anything else to say, or NULL */
};

void tbx_git_home_result_clear(struct tbx_git_home_result *r);

/*
 * Commit everything in the sandbox, bundle what is new since the tip
 * already home (the whole branch when the sandbox cannot find one), bring
 * the bundle home and move local opencode/N (n > 0) to the new tip. Returns
 * once the ref is on disk. When opencode/N is checked out in a worktree the
 * work goes to opencode/N-incoming instead, and out->notice says so.
 * TBX_ENOTSUP when the sandbox has no git; TBX_ENOENT when repo_root is
 * not a repository.
 */
int tbx_git_sync_home(const char *repo_root, int64_t n, const struct tbx_git_sandbox *sbx,
		      const struct tbx_git_sync_opts *opts, struct tbx_git_home_result *out);

/* The one-paragraph summary the agent and the user read. malloc'd. */
char *tbx_git_home_summary(const struct tbx_git_home_result *r);
/* {branch, tip, commits, files_changed, bytes, incremental, up_to_date, committed, backup,
 *  backup_commits, notice} */
struct json_object *tbx_git_home_json(const struct tbx_git_home_result *r);

/*
 * Allocate-side helper: the floor for a new branch number in repo_root (the
 * highest local opencode/N), 0 when there is none or it is not a repository.
 */
int tbx_git_sync_branch_floor(const char *repo_root, int64_t *floor_out);

#endif
