/* SPDX-License-Identifier: MIT */
/* The user's repository as sync sees it: opened at its root, its HEAD, and whether it is dirty. */
#ifndef TBX_GIT_REPO_H
#define TBX_GIT_REPO_H

#include <git2.h>
#include <stddef.h>

/*
 * Open the repository whose worktree root is dir. TBX_ENOENT with "<dir> is
 * not a git repository" when it is not one; TBX_ENOTSUP for a bare one.
 */
int tbx_git_repo_open(const char *dir, git_repository **out);

enum tbx_git_head_kind {
	TBX_GIT_HEAD_BRANCH = 1,   /* on a branch with commits */
	TBX_GIT_HEAD_DETACHED = 2, /* a commit, no branch */
	TBX_GIT_HEAD_UNBORN = 3,   /* no commits yet (an empty repository) */
};

struct tbx_git_head {
	int kind;        /* enum tbx_git_head_kind */
	git_oid oid;     /* the commit, unless unborn */
	char name[256];  /* branch short name, or "" */
};

int tbx_git_repo_head(git_repository *repo, struct tbx_git_head *out);

/*
 * How many paths differ from HEAD: staged or unstaged changes to tracked
 * files and untracked files that are not ignored (the things a snapshot of
 * HEAD leaves out). Submodules are not looked into.
 */
int tbx_git_repo_dirty_count(git_repository *repo, size_t *count_out);

#endif
