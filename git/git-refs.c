/* SPDX-License-Identifier: MIT */
/* The refs twinbox owns (under refs/heads/opencode/): numbering, worktree checks, safe moves. */
#define _GNU_SOURCE
#include "git-refs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "git-common.h"

/* Compare-and-swap attempts before giving up on a ref someone keeps moving. */
#define ADVANCE_ATTEMPTS 5
/* Backups made within one second get -2, -3...; past this something is wrong. */
#define BACKUP_SUFFIXES 100

int tbx_git_ref_is_owned(const char *name)
{
	int valid = 0;

	if (!name || strncmp(name, TBX_GIT_NAMESPACE, strlen(TBX_GIT_NAMESPACE)) != 0 ||
	    !name[strlen(TBX_GIT_NAMESPACE)])
		return 0;
	return git_reference_name_is_valid(&valid, name) == 0 && valid;
}

void tbx_git_ref_branch(char *buf, size_t size, int64_t n, const char *suffix)
{
	snprintf(buf, size, TBX_GIT_NAMESPACE "%lld%s", (long long)n, suffix ? suffix : "");
}

/* N for "refs/heads/opencode/N", or 0 when the rest is not a plain decimal > 0. */
static int64_t branch_number(const char *name)
{
	const char *p = name + strlen(TBX_GIT_NAMESPACE);
	int64_t n = 0;

	if (*p < '1' || *p > '9')
		return 0;
	for (; *p; p++) {
		if (!isdigit((unsigned char)*p) || n > (INT64_MAX - 9) / 10)
			return 0;
		n = n * 10 + (*p - '0');
	}
	return n;
}

int tbx_git_branch_floor(git_repository *repo, int64_t *floor_out)
{
	git_reference_iterator *it = NULL;
	const char *name;
	int64_t highest = 0;
	int rc;

	*floor_out = 0;
	rc = git_reference_iterator_glob_new(&it, repo, TBX_GIT_NAMESPACE "*");
	if (rc < 0)
		return tbx_git_fail(rc, "cannot list the opencode/* branches");
	while ((rc = git_reference_next_name(&name, it)) == 0) {
		int64_t n = branch_number(name);
		if (n > highest)
			highest = n;
	}
	git_reference_iterator_free(it);
	if (rc != GIT_ITEROVER)
		return tbx_git_fail(rc, "cannot list the opencode/* branches");
	*floor_out = highest;
	return 0;
}

/* Does the HEAD file at path say "ref: <name>"? */
static int head_file_names(const char *path, const char *name)
{
	char line[PATH_MAX + 16];
	FILE *fp = fopen(path, "r");
	size_t len;
	int hit = 0;

	if (!fp)
		return 0;
	if (fgets(line, sizeof(line), fp)) {
		len = strcspn(line, "\r\n");
		line[len] = '\0';
		hit = strncmp(line, "ref: ", 5) == 0 && strcmp(line + 5, name) == 0;
	}
	fclose(fp);
	return hit;
}

/* The worktree a linked worktree's admin directory points at: dirname of its gitdir file. */
static char *linked_worktree_path(const char *admin)
{
	char line[PATH_MAX], *path = NULL, *slash;
	FILE *fp = NULL;

	line[0] = '\0';
	if (asprintf(&path, "%s/gitdir", admin) >= 0 && (fp = fopen(path, "r"))) {
		if (!fgets(line, sizeof(line), fp))
			line[0] = '\0';
		fclose(fp);
	}
	free(path);
	line[strcspn(line, "\r\n")] = '\0';
	if ((slash = strrchr(line, '/')) && slash != line)
		*slash = '\0';
	return strdup(line[0] ? line : admin);
}

/*
 * HEAD files are read directly, as git itself does: libgit2's worktree API
 * answers from the point of view of the repository opened, which may be a
 * linked worktree, while every worktree shares the one commondir.
 */
int tbx_git_ref_checked_out(git_repository *repo, const char *name, int *out, char **where_out)
{
	const char *common = git_repository_commondir(repo);
	char *path = NULL, *admin = NULL, *head = NULL;
	struct dirent *de;
	DIR *dir = NULL;
	int hit;

	*out = 0;
	if (where_out)
		*where_out = NULL;
	if (asprintf(&path, "%sHEAD", common) < 0)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	hit = head_file_names(path, name);
	free(path);
	if (hit) {
		*out = 1;
		if (where_out) {
			const char *wd = git_repository_workdir(repo);
			*where_out = strdup(git_repository_is_worktree(repo) || !wd ? common : wd);
		}
		return 0;
	}
	if (asprintf(&path, "%sworktrees", common) < 0)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	dir = opendir(path);
	while (dir && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		if (asprintf(&admin, "%s/%s", path, de->d_name) < 0)
			break;
		if (asprintf(&head, "%s/HEAD", admin) >= 0 && head_file_names(head, name)) {
			*out = 1;
			if (where_out)
				*where_out = linked_worktree_path(admin);
		}
		free(head);
		free(admin);
		head = admin = NULL;
		if (*out)
			break;
	}
	if (dir)
		closedir(dir);
	free(path);
	return 0;
}

void tbx_git_ref_update_clear(struct tbx_git_ref_update *u)
{
	free(u->name);
	free(u->backup);
	memset(u, 0, sizeof(*u));
}

/* Commits reachable from `from` but not from `not`. */
static int count_only_on(git_repository *repo, const git_oid *from, const git_oid *not,
			 size_t *out)
{
	git_revwalk *walk = NULL;
	git_oid id;
	int rc;

	*out = 0;
	if ((rc = git_revwalk_new(&walk, repo)) < 0 || (rc = git_revwalk_push(walk, from)) < 0 ||
	    (rc = git_revwalk_hide(walk, not)) < 0) {
		git_revwalk_free(walk);
		return tbx_git_fail(rc, "cannot walk the history");
	}
	while ((rc = git_revwalk_next(&id, walk)) == 0)
		(*out)++;
	git_revwalk_free(walk);
	return rc == GIT_ITEROVER ? 0 : tbx_git_fail(rc, "cannot walk the history");
}

/* Keep `keep` under a fresh "<name>-backup-<time>[-k]"; its name goes to *backup_out. */
static int ref_backup(git_repository *repo, const char *name, const git_oid *keep,
		      const char *log_message, char **backup_out)
{
	char stamp[32], backup[512], msg[600];
	git_reference *ref = NULL;
	struct tm tm;
	time_t now = time(NULL);
	int rc = GIT_EEXISTS;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(msg, sizeof(msg), "%s (kept before moving %s)", log_message, name);
	for (int k = 1; k <= BACKUP_SUFFIXES && rc == GIT_EEXISTS; k++) {
		if (k == 1)
			snprintf(backup, sizeof(backup), "%s-backup-%s", name, stamp);
		else
			snprintf(backup, sizeof(backup), "%s-backup-%s-%d", name, stamp, k);
		rc = git_reference_create(&ref, repo, backup, keep, 0, msg);
	}
	if (rc < 0)
		return tbx_git_fail(rc, "cannot keep the commits of %s under %s", name, backup);
	git_reference_free(ref);
	*backup_out = strdup(backup);
	return 0;
}

int tbx_git_ref_advance(git_repository *repo, const char *name, const git_oid *to,
			const char *log_message, struct tbx_git_ref_update *out)
{
	const char *msg = log_message ? log_message : "twinbox: sync";
	git_reference *ref = NULL, *moved = NULL;
	char *where = NULL;
	git_oid kept;
	int busy, backed_up = 0, rc;

	memset(out, 0, sizeof(*out));
	if (!tbx_git_ref_is_owned(name))
		return tbx_error_set(TBX_EPERM, "refusing to write %s: twinbox writes only "
				     TBX_GIT_NAMESPACE "*", name ? name : "(null)");
	if (!(out->name = strdup(name)))
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	git_oid_cpy(&out->new_oid, to);
	if ((rc = tbx_git_ref_checked_out(repo, name, &busy, &where)) < 0)
		return rc;
	if (busy) {
		rc = tbx_error_set(TBX_EUNAVAIL, "%s is checked out in %s; twinbox never moves a "
				   "checked-out branch", name + strlen("refs/heads/"),
				   where ? where : "a worktree");
		free(where);
		return rc;
	}
	for (int attempt = 0; attempt < ADVANCE_ATTEMPTS; attempt++) {
		const git_oid *current;

		rc = git_reference_lookup(&ref, repo, name);
		if (rc == GIT_ENOTFOUND) {
			out->had_old = 0;
			/* force = 0: if it appeared meanwhile, go round and look again. */
			rc = git_reference_create(&moved, repo, name, to, 0, msg);
			if (rc == GIT_EEXISTS || rc == GIT_ELOCKED)
				continue;
			if (rc < 0)
				return tbx_git_fail(rc, "cannot create %s", name);
			out->changed = 1;
			git_reference_free(moved);
			return 0;
		}
		if (rc < 0)
			return tbx_git_fail(rc, "cannot read %s", name);
		if (git_reference_type(ref) != GIT_REFERENCE_DIRECT) {
			git_reference_free(ref);
			return tbx_error_set(TBX_EPERM, "%s is a symbolic ref; twinbox leaves it alone",
					     name);
		}
		current = git_reference_target(ref);
		out->had_old = 1;
		git_oid_cpy(&out->old_oid, current);
		git_reference_free(ref);
		if (git_oid_equal(&out->old_oid, to))
			return 0;
		rc = git_graph_descendant_of(repo, to, &out->old_oid);
		if (rc < 0)
			return tbx_git_fail(rc, "cannot compare %s with the new commit", name);
		if (rc == 0 && !(backed_up && git_oid_equal(&kept, &out->old_oid))) {
			/* Commits only the local branch has: keep them before moving it. */
			free(out->backup);
			out->backup = NULL;
			if ((rc = count_only_on(repo, &out->old_oid, to, &out->backup_commits)) < 0 ||
			    (rc = ref_backup(repo, name, &out->old_oid, msg, &out->backup)) < 0)
				return rc;
			git_oid_cpy(&kept, &out->old_oid);
			backed_up = 1;
		}
		rc = git_reference_create_matching(&moved, repo, name, to, 1, &out->old_oid, msg);
		if (rc == GIT_EMODIFIED || rc == GIT_ELOCKED) {
			/* Someone moved it between our read and our write: look again. */
			nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
			continue;
		}
		if (rc < 0)
			return tbx_git_fail(rc, "cannot move %s", name);
		git_reference_free(moved);
		out->changed = 1;
		return 0;
	}
	return tbx_error_set(TBX_EUNAVAIL, "%s kept changing while twinbox tried to move it; "
			     "try the sync again", name);
}
