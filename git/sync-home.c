/* SPDX-License-Identifier: MIT */
/*
 * Home: the sandbox commits everything and bundles branch `opencode` less
 * what the host is known to have; the bundle comes back through the file op
 * and is read onto local opencode/N (or opencode/N-incoming while
 * opencode/N is checked out). A missing prerequisite (the basis is gone
 * locally) makes one retry with the whole branch.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "git-bundle.h"
#include "git-refs.h"
#include "git-repo.h"
#include "sync-sandbox.h"

#define REFLOG_MESSAGE "twinbox: sync from the sandbox"
#define DEFAULT_MESSAGE "Work from the sandbox, committed by twinbox at sync"

void tbx_git_home_result_clear(struct tbx_git_home_result *r)
{
	free(r->backup);
	free(r->notice);
	memset(r, 0, sizeof(*r));
}

static void notice_add(struct tbx_git_home_result *r, const char *text)
{
	char *joined = NULL;

	if (!r->notice) {
		r->notice = strdup(text);
		return;
	}
	if (asprintf(&joined, "%s %s", r->notice, text) >= 0) {
		free(r->notice);
		r->notice = joined;
	}
}

/* The commit `name` points at, if it exists. */
static int ref_commit(git_repository *repo, const char *name, git_oid *out)
{
	git_reference *ref = NULL;
	git_object *obj = NULL;
	int ok = 0;

	if (git_reference_lookup(&ref, repo, name) == 0 &&
	    git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT) == 0) {
		git_oid_cpy(out, git_object_id(obj));
		ok = 1;
	}
	git_object_free(obj);
	git_reference_free(ref);
	return ok;
}

static int have_commit(git_repository *repo, const git_oid *id)
{
	git_commit *c = NULL;
	int ok = git_commit_lookup(&c, repo, id) == 0;

	git_commit_free(c);
	return ok;
}

/* Commits on tip but not on base (all of tip's history when base is NULL), and files changed. */
static int measure(git_repository *repo, const git_oid *tip, const git_oid *base,
		   struct tbx_git_home_result *out)
{
	git_revwalk *walk = NULL;
	git_commit *tip_commit = NULL, *base_commit = NULL;
	git_tree *tip_tree = NULL, *base_tree = NULL;
	git_diff *diff = NULL;
	git_oid id;
	int rc;

	out->commits = 0;
	if ((rc = git_revwalk_new(&walk, repo)) < 0 || (rc = git_revwalk_push(walk, tip)) < 0 ||
	    (base && (rc = git_revwalk_hide(walk, base)) < 0))
		goto fail;
	while ((rc = git_revwalk_next(&id, walk)) == 0)
		out->commits++;
	if (rc != GIT_ITEROVER)
		goto fail;
	if ((rc = git_commit_lookup(&tip_commit, repo, tip)) < 0 ||
	    (rc = git_commit_tree(&tip_tree, tip_commit)) < 0 ||
	    (base && ((rc = git_commit_lookup(&base_commit, repo, base)) < 0 ||
		      (rc = git_commit_tree(&base_tree, base_commit)) < 0)) ||
	    (rc = git_diff_tree_to_tree(&diff, repo, base_tree, tip_tree, NULL)) < 0)
		goto fail;
	out->files_changed = git_diff_num_deltas(diff);
	rc = 0;
	goto cleanup;
fail:
	rc = tbx_git_fail(rc, "cannot measure what the sync brought");
cleanup:
	git_diff_free(diff);
	git_tree_free(tip_tree);
	git_tree_free(base_tree);
	git_commit_free(tip_commit);
	git_commit_free(base_commit);
	git_revwalk_free(walk);
	return rc;
}

/* Pick where the work goes: opencode/N, or opencode/N-incoming while N is checked out. */
static int pick_target(git_repository *repo, int64_t n, char *target, size_t size,
		       struct tbx_git_home_result *out)
{
	char main_ref[256], incoming[256], *where = NULL, *text = NULL;
	int busy, rc;

	tbx_git_ref_branch(main_ref, sizeof(main_ref), n, NULL);
	tbx_git_ref_branch(incoming, sizeof(incoming), n, "-incoming");
	if ((rc = tbx_git_ref_checked_out(repo, main_ref, &busy, &where)) < 0)
		return rc;
	if (!busy) {
		snprintf(target, size, "%s", main_ref);
		return 0;
	}
	free(where);
	where = NULL;
	if ((rc = tbx_git_ref_checked_out(repo, incoming, &busy, &where)) < 0)
		return rc;
	if (busy) {
		rc = tbx_error_set(TBX_EUNAVAIL, "both opencode/%lld and opencode/%lld-incoming are "
				   "checked out (the latter in %s), and a sync never moves a "
				   "checked-out branch: switch one of them to another branch and "
				   "sync again", (long long)n, (long long)n, where ? where : "a worktree");
		free(where);
		return rc;
	}
	tbx_git_ref_checked_out(repo, main_ref, &busy, &where);
	snprintf(target, size, "%s", incoming);
	if (asprintf(&text, "opencode/%lld is checked out in %s, and a sync never moves a "
		     "checked-out branch or touches its files, so this work is on "
		     "opencode/%lld-incoming: merge it with `git merge opencode/%lld-incoming`.",
		     (long long)n, where ? where : "a worktree", (long long)n, (long long)n) >= 0)
		notice_add(out, text);
	free(text);
	free(where);
	return 0;
}

/* Space-separated commits of opencode/N and opencode/N-incoming, for $TBX_HOST_HAS. */
static void host_candidates(git_repository *repo, int64_t n, char *buf, size_t size)
{
	static const char *const suffixes[] = { NULL, "-incoming" };
	char name[256];
	git_oid id;

	buf[0] = '\0';
	for (size_t i = 0; i < 2; i++) {
		tbx_git_ref_branch(name, sizeof(name), n, suffixes[i]);
		if (ref_commit(repo, name, &id)) {
			size_t used = strlen(buf);
			snprintf(buf + used, size - used, "%s%s", used ? " " : "", git_oid_tostr_s(&id));
		}
	}
}

static void read_head_line(const struct tbx_git_exec_result *run, struct tbx_git_home_result *out)
{
	char head[300], *text = NULL;

	if (tbx_git_output_field(run, "head", head, sizeof(head)) != 0 ||
	    strcmp(head, "refs/heads/opencode") == 0)
		return;
	if (asprintf(&text, "The sandbox has %s%s checked out; only its branch opencode is synced, "
		     "so commit or merge the work there.",
		     strcmp(head, "detached") == 0 ? "a detached HEAD" : "branch ",
		     strcmp(head, "detached") == 0 ? ""
		     : head + (strncmp(head, "refs/heads/", 11) == 0 ? 11 : 0)) >= 0)
		notice_add(out, text);
	free(text);
}

struct home_run {
	git_repository *repo;
	const struct tbx_git_sandbox *sbx;
	const struct tbx_git_sync_opts *opts;
	const char *target;
	char bundle_path[4096];
	char host_has[256];
	git_oid tip, adopted;
	int has_adopted;
	struct tbx_git_ref_update update;
};

/* One pass of the sandbox script and the read; TBX_ENOENT means "retry in full". */
static int home_pass(struct home_run *h, int full, struct tbx_git_home_result *out)
{
	const struct tbx_git_sync_opts *opts = h->opts;
	const struct tbx_git_progress *progress = opts ? opts->progress : NULL;
	struct tbx_git_ref_map map = { .from = "refs/heads/opencode", .to = h->target };
	struct tbx_git_read_opts ropts = {
		.map = &map, .n_map = 1, .log_message = REFLOG_MESSAGE, .progress = progress,
		.cancel = opts ? opts->cancel : NULL,
	};
	struct tbx_git_read_result read = { 0 };
	struct tbx_git_exec_result run = { 0 };
	char *env[7] = { 0 }, field[128], *data = NULL;
	size_t len = 0;
	int rc;

	if (asprintf(&env[0], "TBX_BUNDLE=%s", h->bundle_path) < 0 ||
	    asprintf(&env[1], "TBX_HOST_HAS=%s", h->host_has) < 0 ||
	    asprintf(&env[2], "TBX_NAME=%s", opts && opts->name ? opts->name : TBX_GIT_SYNC_NAME) < 0 ||
	    asprintf(&env[3], "TBX_EMAIL=%s",
		     opts && opts->email ? opts->email : TBX_GIT_SYNC_EMAIL) < 0 ||
	    asprintf(&env[4], "TBX_MESSAGE=%s",
		     opts && opts->message ? opts->message : DEFAULT_MESSAGE) < 0 ||
	    (full && !(env[5] = strdup("TBX_FULL=1")))) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto cleanup;
	}
	tbx_git_progress_report(progress, "commit", 0, 0);
	rc = tbx_git_sandbox_run(h->sbx, opts, "committing and bundling its work",
				 tbx_git_script_home, (const char *const *)env, &run);
	if (rc < 0)
		goto cleanup;
	if (tbx_git_output_has(&run, "committed"))
		out->committed = 1;
	if (!full)
		read_head_line(&run, out);
	if (tbx_git_output_has(&run, "empty")) {
		out->up_to_date = 1;
		goto cleanup;
	}
	if (tbx_git_output_field(&run, "tip", field, sizeof(field)) != 0 ||
	    git_oid_fromstr(&h->tip, field) < 0) {
		rc = tbx_error_set(TBX_EPROTO, "the sandbox's sync script did not say its tip");
		goto cleanup;
	}
	h->has_adopted = tbx_git_output_field(&run, "adopted", field, sizeof(field)) == 0 &&
			 git_oid_fromstr(&h->adopted, field) == 0;
	if (tbx_git_output_field(&run, "host-has", field, sizeof(field)) == 0) {
		/* The host holds the tip already (the agent went back, or nothing is new). */
		git_oid current;
		if (!have_commit(h->repo, &h->tip)) {
			rc = tbx_error_set(TBX_ENOENT, "the tip %s is not here after all",
					   git_oid_tostr_s(&h->tip));
			goto cleanup;
		}
		if (ref_commit(h->repo, h->target, &current) &&
		    (git_oid_equal(&current, &h->tip) ||
		     git_graph_descendant_of(h->repo, &current, &h->tip) == 1)) {
			/* Already contained: moving back would only bury local commits in a backup. */
			h->update.had_old = 1;
			git_oid_cpy(&h->update.old_oid, &current);
			git_oid_cpy(&h->update.new_oid, &h->tip);
			goto cleanup;
		}
		tbx_git_progress_report(progress, "refs", 0, 1);
		rc = tbx_git_ref_advance(h->repo, h->target, &h->tip, REFLOG_MESSAGE, &h->update);
		goto cleanup;
	}
	if (!tbx_git_output_has(&run, "bundle")) {
		rc = tbx_error_set(TBX_EPROTO, "the sandbox's sync script made no bundle");
		goto cleanup;
	}
	tbx_git_progress_report(progress, "receive", 0, 0);
	rc = h->sbx->file_read(h->sbx->payload, h->bundle_path, &data, &len);
	tbx_git_sandbox_remove(h->sbx, h->bundle_path);
	if (rc < 0) {
		tbx_error_prefix("cannot copy the bundle out of the sandbox");
		goto cleanup;
	}
	tbx_git_progress_report(progress, "receive", len, len);
	out->bytes += len;
	rc = tbx_git_bundle_read_mem(h->repo, data, len, &ropts, &read);
	if (rc == 0) {
		out->incremental = read.prerequisites > 0;
		h->update = read.updates[0];
		memset(&read.updates[0], 0, sizeof(read.updates[0]));
	}
cleanup:
	tbx_git_read_result_clear(&read);
	tbx_git_exec_result_clear(&run);
	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++)
		free(env[i]);
	free(data);
	return rc;
}

int tbx_git_sync_home(const char *repo_root, int64_t n, const struct tbx_git_sandbox *sbx,
		      const struct tbx_git_sync_opts *opts, struct tbx_git_home_result *out)
{
	struct tbx_git_exec_result done = { 0 };
	struct home_run h = { .sbx = sbx, .opts = opts };
	char target[256], env_tip[64];
	const git_oid *base = NULL;
	git_oid meet;
	int rc;

	memset(out, 0, sizeof(*out));
	if (n <= 0)
		return tbx_error_set(TBX_EINVAL, "no branch number to sync onto");
	if ((rc = tbx_git_repo_open(repo_root, &h.repo)) < 0 ||
	    (rc = pick_target(h.repo, n, target, sizeof(target), out)) < 0)
		goto cleanup;
	h.target = target;
	snprintf(out->branch, sizeof(out->branch), "%s", target + strlen("refs/heads/"));
	host_candidates(h.repo, n, h.host_has, sizeof(h.host_has));
	if ((rc = tbx_git_pathf(h.bundle_path, sizeof(h.bundle_path), "%s-out.bundle",
				sbx->scratch)) < 0)
		goto cleanup;
	rc = home_pass(&h, 0, out);
	if (rc == TBX_ENOENT && !tbx_git_cancelled(opts ? opts->cancel : NULL)) {
		/* Our basis is gone here (a deleted branch, a gc): send the whole branch. */
		tbx_git_ref_update_clear(&h.update);
		rc = home_pass(&h, 1, out);
	}
	if (rc < 0 || !h.update.name) {
		/* Failed, or "empty"/"contained": nothing moved. */
		if (rc == 0 && h.update.had_old) {
			out->has_tip = 1;
			out->up_to_date = 1;
			git_oid_cpy(&out->tip, &h.update.new_oid);
		}
		goto cleanup;
	}
	out->has_tip = 1;
	git_oid_cpy(&out->tip, &h.tip);
	out->up_to_date = !h.update.changed;
	if (h.update.backup) {
		out->backup = strdup(h.update.backup + strlen("refs/heads/"));
		out->backup_commits = h.update.backup_commits;
	}
	/*
	 * Measured from where the branch and the tip meet: with local-only
	 * commits in a backup, those are not "changed by the sandbox".
	 */
	if (h.update.had_old && git_merge_base(&meet, h.repo, &h.update.old_oid, &h.tip) == 0)
		base = &meet;
	else if (h.update.had_old)
		base = NULL;
	else if (h.has_adopted && have_commit(h.repo, &h.adopted))
		base = &h.adopted;
	if ((rc = measure(h.repo, &h.tip, base, out)) < 0)
		goto cleanup;
	/* The sandbox's record of what is home, for the next incremental bundle. */
	snprintf(env_tip, sizeof(env_tip), "TBX_TIP=%s", git_oid_tostr_s(&h.tip));
	{
		const char *extra[] = { env_tip, NULL };
		if (tbx_git_sandbox_run(sbx, opts, "recording what is home", tbx_git_script_home_done,
					extra, &done) < 0)
			tbx_error_clear(); /* only makes the next bundle bigger */
	}
cleanup:
	tbx_git_exec_result_clear(&done);
	tbx_git_ref_update_clear(&h.update);
	git_repository_free(h.repo);
	return rc;
}

int tbx_git_sync_branch_floor(const char *repo_root, int64_t *floor_out)
{
	git_repository *repo = NULL;
	int rc;

	*floor_out = 0;
	if (tbx_git_repo_open(repo_root, &repo) < 0) {
		tbx_error_clear();
		return 0;
	}
	rc = tbx_git_branch_floor(repo, floor_out);
	git_repository_free(repo);
	return rc;
}
