/* SPDX-License-Identifier: MIT */
/*
 * Into the sandbox: local HEAD's commit becomes branch `opencode`, checked
 * out in the sandbox's workdir. The sandbox first says which commits it
 * holds, so a resumed or replaced sandbox gets only what it lacks; the
 * bundle travels through the file op and is fetched by git there.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "git-bundle.h"
#include "git-repo.h"
#include "sync-sandbox.h"

void tbx_git_adopt_result_clear(struct tbx_git_adopt_result *r)
{
	free(r->notice);
	memset(r, 0, sizeof(*r));
}

/* The commits the probe listed that this repository also has: a basis for the bundle. */
static int shared_commits(git_repository *repo, const struct tbx_git_exec_result *probe,
			  git_oid **out, size_t *n_out, int *has_target, const git_oid *target)
{
	git_odb *odb = NULL;
	const char *p = probe->out;
	int rc;

	*out = NULL;
	*n_out = 0;
	*has_target = 0;
	if ((rc = git_repository_odb(&odb, repo)) < 0)
		return tbx_git_fail(rc, "cannot open the object database");
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		git_oid id;
		git_object_t type;
		size_t len;

		if (strncmp(p, "have ", 5) == 0 && (!nl || nl - p >= 5 + GIT_OID_HEXSZ) &&
		    git_oid_fromstrn(&id, p + 5, GIT_OID_HEXSZ) == 0 &&
		    git_odb_read_header(&len, &type, odb, &id) == 0 && type == GIT_OBJECT_COMMIT) {
			git_oid *grown = realloc(*out, (*n_out + 1) * sizeof(*grown));
			if (!grown) {
				git_odb_free(odb);
				return tbx_error_set(TBX_ENOMEM, "out of memory");
			}
			*out = grown;
			git_oid_cpy(&grown[(*n_out)++], &id);
			if (git_oid_equal(&id, target))
				*has_target = 1;
		}
		p = nl ? nl + 1 : NULL;
	}
	git_odb_free(odb);
	return 0;
}

static char *dirty_notice(size_t dirty, const struct tbx_git_head *head)
{
	char *s = NULL;

	if (asprintf(&s, "uncommitted changes are not in the sandbox: %zu path%s in your worktree "
		     "differ%s from %s (%.12s), and the sandbox has only the committed state. "
		     "Commit them and start a new session to hand them over.",
		     dirty, dirty == 1 ? "" : "s", dirty == 1 ? "s" : "",
		     head->kind == TBX_GIT_HEAD_BRANCH ? head->name : "HEAD",
		     head->kind == TBX_GIT_HEAD_UNBORN ? "no commits" : git_oid_tostr_s(&head->oid)) < 0)
		return NULL;
	return s;
}

int tbx_git_sync_adopt(const char *repo_root, const struct tbx_git_sandbox *sbx,
		       const struct tbx_git_sync_opts *opts, struct tbx_git_adopt_result *out)
{
	const struct tbx_git_progress *progress = opts ? opts->progress : NULL;
	struct tbx_git_exec_result probe = { 0 }, run = { 0 };
	struct tbx_git_bundle_stats stats = { 0 };
	struct tbx_git_head head;
	git_repository *repo = NULL;
	git_oid *basis = NULL;
	size_t n_basis = 0;
	char *bundle = NULL, *bundle_path = NULL, *env_bundle = NULL, *env_commit = NULL;
	size_t bundle_len = 0;
	int has_commit = 0, rc;

	memset(out, 0, sizeof(*out));
	if ((rc = tbx_git_repo_open(repo_root, &repo)) < 0 ||
	    (rc = tbx_git_repo_head(repo, &head)) < 0)
		goto cleanup;
	out->head_kind = head.kind;
	snprintf(out->head_name, sizeof(out->head_name), "%s", head.name);
	if ((rc = tbx_git_repo_dirty_count(repo, &out->dirty)) < 0)
		goto cleanup;
	if (out->dirty && !(out->notice = dirty_notice(out->dirty, &head))) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto cleanup;
	}

	tbx_git_progress_report(progress, "probe", 0, 0);
	if ((rc = tbx_git_sandbox_run(sbx, opts, "looking at its repository", tbx_git_script_probe,
				      NULL, &probe)) < 0)
		goto cleanup;
	if (tbx_git_output_has(&probe, "nogit")) {
		rc = tbx_error_set(TBX_ENOTSUP, "the sandbox has no git, so your HEAD could not be "
				   "checked out there and git sync is off for it");
		goto cleanup;
	}
	if (head.kind == TBX_GIT_HEAD_UNBORN) {
		/* Nothing to adopt: give the agent an empty repository on the right branch. */
		rc = tbx_git_sandbox_run(sbx, opts, "starting an empty repository",
					 tbx_git_script_init, NULL, &run);
		goto cleanup;
	}
	git_oid_cpy(&out->oid, &head.oid);
	if ((rc = shared_commits(repo, &probe, &basis, &n_basis, &has_commit, &head.oid)) < 0)
		goto cleanup;
	if (!has_commit) {
		struct tbx_git_bundle_tip tip = { .name = "refs/heads/opencode", .oid = head.oid };
		struct tbx_git_bundle_spec spec = {
			.tips = &tip, .n_tips = 1, .basis = basis, .n_basis = n_basis,
			.progress = progress, .cancel = opts ? opts->cancel : NULL,
		};
		if ((rc = tbx_git_bundle_write_mem(repo, &spec, &bundle, &bundle_len, &stats)) < 0)
			goto cleanup;
		out->bytes = stats.bytes;
		out->incremental = stats.prerequisites > 0;
		if (asprintf(&bundle_path, "%s-in.bundle", sbx->scratch) < 0 ||
		    asprintf(&env_bundle, "TBX_BUNDLE=%s", bundle_path) < 0) {
			rc = tbx_error_set(TBX_ENOMEM, "out of memory");
			goto cleanup;
		}
		tbx_git_progress_report(progress, "send", 0, bundle_len);
		rc = sbx->file_write(sbx->payload, bundle_path, bundle, bundle_len);
		if (rc < 0) {
			tbx_error_prefix("cannot copy the bundle into the sandbox");
			goto cleanup;
		}
		tbx_git_progress_report(progress, "send", bundle_len, bundle_len);
	} else if (asprintf(&env_commit, "TBX_COMMIT=%s", git_oid_tostr_s(&head.oid)) < 0) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto cleanup;
	}
	{
		const char *extra[] = { env_bundle ? env_bundle : env_commit, NULL };
		tbx_git_progress_report(progress, "checkout", 0, 0);
		rc = tbx_git_sandbox_run(sbx, opts, "checking out your HEAD", tbx_git_script_adopt,
					 extra, &run);
	}
	if (bundle_path)
		tbx_git_sandbox_remove(sbx, bundle_path);
cleanup:
	tbx_git_exec_result_clear(&probe);
	tbx_git_exec_result_clear(&run);
	git_repository_free(repo);
	free(basis);
	free(bundle);
	free(bundle_path);
	free(env_bundle);
	free(env_commit);
	return rc;
}
