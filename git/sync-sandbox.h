/* SPDX-License-Identifier: MIT */
/*
 * The sandbox half of git sync: the shell scripts that run the git CLI
 * there, how they are run, and what they print. Internal to git/.
 */
#ifndef TBX_GIT_SYNC_SANDBOX_H
#define TBX_GIT_SYNC_SANDBOX_H

#include "git-sync.h"

/* Exit code the scripts use when git is missing (the shell's "not found"). */
#define TBX_GIT_NO_GIT 127

/* Lists what the sandbox's repository holds: "nogit", or "git" then "have <oid>" lines. */
extern const char tbx_git_script_probe[];
/* Fetch $TBX_BUNDLE (if set) or take $TBX_COMMIT, and check out branch opencode there. */
extern const char tbx_git_script_adopt[];
/* Start an empty repository on branch opencode (the local repository had no commits). */
extern const char tbx_git_script_init[];
/* Commit everything and bundle opencode into $TBX_BUNDLE, less what $TBX_HOST_HAS covers. */
extern const char tbx_git_script_home[];
/* Record $TBX_TIP as home in the sandbox (refs/twinbox/home). */
extern const char tbx_git_script_home_done[];

/*
 * Run script in the sandbox with the common environment (workdir, git's
 * ceiling, no prompts, C locale) plus `extra` (NULL-ended "K=V"). A nonzero
 * exit is TBX_ENOTSUP for a missing git, otherwise TBX_EIO with the tail of
 * what git printed; `what` names the step in messages.
 */
int tbx_git_sandbox_run(const struct tbx_git_sandbox *sbx, const struct tbx_git_sync_opts *opts,
			const char *what, const char *script, const char *const *extra,
			struct tbx_git_exec_result *out);

/* Remove a transfer file, keeping the thread's current error as it was. */
void tbx_git_sandbox_remove(const struct tbx_git_sandbox *sbx, const char *path);

/* The value of the first stdout line "<key> <value>", copied into buf; 0 if found. */
int tbx_git_output_field(const struct tbx_git_exec_result *r, const char *key, char *buf,
			 size_t size);
/* Is there a line that is exactly `word`? */
int tbx_git_output_has(const struct tbx_git_exec_result *r, const char *word);

#endif
