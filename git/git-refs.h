/* SPDX-License-Identifier: MIT */
/*
 * The local refs twinbox owns: those under refs/heads/opencode/ and nothing
 * else. For sandbox N these are opencode/N (the agent's work),
 * opencode/N-incoming (where it goes while opencode/N is checked out in a
 * worktree) and opencode/N-backup-<UTC time> (local commits a sync would
 * otherwise have dropped). A ref is only ever moved with compare-and-swap, never onto a
 * branch checked out in any worktree, and never so that a commit becomes
 * unreachable.
 */
#ifndef TBX_GIT_REFS_H
#define TBX_GIT_REFS_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#define TBX_GIT_NAMESPACE "refs/heads/opencode/"

/* Is name a valid ref under refs/heads/opencode/? */
int tbx_git_ref_is_owned(const char *name);

/* "refs/heads/opencode/<n><suffix>" into buf; suffix may be NULL. */
void tbx_git_ref_branch(char *buf, size_t size, int64_t n, const char *suffix);

/*
 * The highest N among refs/heads/opencode/<N> (decimal, > 0, no leading
 * zero); 0 when there is none. Other names there are ignored.
 */
int tbx_git_branch_floor(git_repository *repo, int64_t *floor_out);

/*
 * Is branch `name` (a full ref name) the HEAD of the main worktree or of a
 * linked one? *where_out (may be NULL) gets that worktree's path (malloc'd).
 */
int tbx_git_ref_checked_out(git_repository *repo, const char *name, int *out, char **where_out);

/* What moving one ref did. */
struct tbx_git_ref_update {
	char *name;         /* full ref name */
	git_oid old_oid;    /* valid when had_old */
	int had_old;
	git_oid new_oid;
	int changed;        /* 0 when it already pointed there */
	char *backup;       /* full name of the backup ref, or NULL */
	size_t backup_commits; /* commits only on the backup, not on new_oid */
};

void tbx_git_ref_update_clear(struct tbx_git_ref_update *u);

/*
 * Move owned ref `name` to commit `to`. When its current commit is not an
 * ancestor of `to`, that commit is first kept under a new backup ref
 * "<name>-backup-<YYYYmmddTHHMMSSZ>[-k]" (created, never overwritten). The
 * move itself is a compare-and-swap on the value just read, retried when
 * another writer got in between. TBX_EPERM for a name outside the
 * namespace, TBX_EUNAVAIL when the branch is checked out somewhere.
 */
int tbx_git_ref_advance(git_repository *repo, const char *name, const git_oid *to,
			const char *log_message, struct tbx_git_ref_update *out);

#endif
