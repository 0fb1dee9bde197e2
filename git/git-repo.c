/* SPDX-License-Identifier: MIT */
/* Opening the user's repository, reading its HEAD and counting what HEAD leaves out. */
#include "git-repo.h"

#include <stdio.h>
#include <string.h>

#include "error.h"
#include "git-common.h"

int tbx_git_repo_open(const char *dir, git_repository **out)
{
	int rc;

	*out = NULL;
	if ((rc = tbx_git_init()) < 0)
		return rc;
	/* NO_SEARCH: dir is the root the session recorded, never a parent of it. */
	rc = git_repository_open_ext(out, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (rc == GIT_ENOTFOUND)
		return tbx_error_set(TBX_ENOENT, "%s is not a git repository", dir);
	if (rc < 0)
		return tbx_git_fail(rc, "cannot open the git repository at %s", dir);
	if (git_repository_is_bare(*out)) {
		git_repository_free(*out);
		*out = NULL;
		return tbx_error_set(TBX_ENOTSUP, "%s is a bare repository", dir);
	}
	return 0;
}

int tbx_git_repo_head(git_repository *repo, struct tbx_git_head *out)
{
	git_reference *head = NULL;
	git_object *commit = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = git_repository_head(&head, repo);
	if (rc == GIT_EUNBORNBRANCH || rc == GIT_ENOTFOUND) {
		out->kind = TBX_GIT_HEAD_UNBORN;
		return 0;
	}
	if (rc < 0)
		return tbx_git_fail(rc, "cannot read HEAD");
	/* HEAD may name a tag or other non-commit in odd repositories: peel it. */
	rc = git_reference_peel(&commit, head, GIT_OBJECT_COMMIT);
	if (rc < 0) {
		rc = tbx_git_fail(rc, "HEAD does not point at a commit");
		goto cleanup;
	}
	git_oid_cpy(&out->oid, git_object_id(commit));
	if (git_repository_head_detached(repo) == 1) {
		out->kind = TBX_GIT_HEAD_DETACHED;
	} else {
		out->kind = TBX_GIT_HEAD_BRANCH;
		snprintf(out->name, sizeof(out->name), "%s", git_reference_shorthand(head));
	}
	rc = 0;
cleanup:
	git_object_free(commit);
	git_reference_free(head);
	return rc;
}

int tbx_git_repo_dirty_count(git_repository *repo, size_t *count_out)
{
	git_status_options opts = GIT_STATUS_OPTIONS_INIT;
	git_status_list *list = NULL;
	int rc;

	*count_out = 0;
	opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	/*
	 * An untracked directory counts once: the point is "something is not
	 * in the sandbox", and recursing into node_modules to say so is waste.
	 */
	opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	rc = git_status_list_new(&list, repo, &opts);
	if (rc < 0)
		return tbx_git_fail(rc, "cannot read the worktree's status");
	*count_out = git_status_list_entrycount(list);
	git_status_list_free(list);
	return 0;
}
