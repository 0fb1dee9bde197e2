/* SPDX-License-Identifier: MIT */
/*
 * Indexing a received pack through a quarantine: libgit2's indexer writes
 * the pack and its index into objects/incoming-twinbox-XXXXXX/pack/ (thin
 * packs are completed from the repository), every object the new ones name
 * and the ref tips are checked against the quarantine plus the repository,
 * and only then are the two files renamed into objects/pack/. A damaged,
 * truncated or incomplete pack thus never becomes visible, and nothing of it
 * is left behind.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "git-bundle.h"

/* The indexer is fed this much at a time, with cancellation checked in between. */
#define INDEX_CHUNK (1024 * 1024)

struct index_state {
	const struct tbx_git_progress *progress;
	const atomic_int *cancel;
};

static int on_index_progress(const git_indexer_progress *stats, void *payload)
{
	struct index_state *st = payload;

	if (tbx_git_cancelled(st->cancel))
		return GIT_EUSER;
	tbx_git_progress_report(st->progress, "index", stats->indexed_objects + stats->indexed_deltas,
				(uint64_t)stats->total_objects + stats->total_deltas);
	return 0;
}

/* Remove the quarantine directory and whatever is in it (two levels at most). */
static void quarantine_remove(const char *dir)
{
	char sub[PATH_MAX], path[PATH_MAX * 2];
	struct dirent *de;
	DIR *d;

	if (tbx_git_pathf(sub, sizeof(sub), "%s/pack", dir) == 0 && (d = opendir(sub))) {
		while ((de = readdir(d))) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			if (tbx_git_pathf(path, sizeof(path), "%s/%s", sub, de->d_name) == 0)
				unlink(path);
		}
		closedir(d);
	}
	rmdir(sub);
	rmdir(dir);
}

struct connect_check {
	git_repository *both; /* the quarantine and the repository, for parsing */
	git_odb *both_odb;
	git_oid missing;
	int has_missing;
};

static int need(struct connect_check *cc, const git_oid *id)
{
	if (git_odb_exists(cc->both_odb, id))
		return 0;
	git_oid_cpy(&cc->missing, id);
	cc->has_missing = 1;
	return GIT_EUSER;
}

/* Every object a new commit, tree or tag names must exist (one level: the rest was there). */
static int check_object(const git_oid *id, void *payload)
{
	struct connect_check *cc = payload;
	git_object *obj = NULL;
	git_object_t type;
	size_t len;
	int rc = 0;

	/* Blobs name nothing; reading one just for its type would inflate all of it. */
	if (git_odb_read_header(&len, &type, cc->both_odb, id) < 0)
		return -1;
	if (type == GIT_OBJECT_BLOB)
		return 0;
	if (git_object_lookup(&obj, cc->both, id, type) < 0)
		return -1;
	switch (git_object_type(obj)) {
	case GIT_OBJECT_COMMIT: {
		const git_commit *c = (const git_commit *)obj;
		rc = need(cc, git_commit_tree_id(c));
		for (unsigned i = 0; rc == 0 && i < git_commit_parentcount(c); i++)
			rc = need(cc, git_commit_parent_id(c, i));
		break;
	}
	case GIT_OBJECT_TREE: {
		const git_tree *t = (const git_tree *)obj;
		for (size_t i = 0; rc == 0 && i < git_tree_entrycount(t); i++) {
			const git_tree_entry *e = git_tree_entry_byindex(t, i);
			/* A submodule's commit lives in another repository. */
			if (git_tree_entry_type(e) != GIT_OBJECT_COMMIT)
				rc = need(cc, git_tree_entry_id(e));
		}
		break;
	}
	case GIT_OBJECT_TAG:
		rc = need(cc, git_tag_target_id((const git_tag *)obj));
		break;
	default:
		break;
	}
	git_object_free(obj);
	return rc;
}

/*
 * What libgit2's own `verify` indexer option does, done after indexing
 * instead: in 1.5 that option leaks every parsed object the repository
 * already has.
 */
static int check_connected(const char *quarantine, const char *objects, const git_oid *tips,
			   size_t n_tips)
{
	struct connect_check cc = { 0 };
	git_odb *qodb = NULL;
	int rc;

	if ((rc = git_odb_open(&qodb, quarantine)) < 0 || (rc = git_odb_new(&cc.both_odb)) < 0 ||
	    (rc = git_odb_add_disk_alternate(cc.both_odb, quarantine)) < 0 ||
	    (rc = git_odb_add_disk_alternate(cc.both_odb, objects)) < 0 ||
	    (rc = git_repository_wrap_odb(&cc.both, cc.both_odb)) < 0) {
		rc = tbx_git_fail(rc, "cannot open the received pack");
		goto cleanup;
	}
	rc = git_odb_foreach(qodb, check_object, &cc);
	if (rc < 0) {
		if (cc.has_missing)
			rc = tbx_error_set(TBX_EPROTO, "the bundle is incomplete: object %s is in "
					   "neither its pack nor this repository",
					   git_oid_tostr_s(&cc.missing));
		else
			rc = tbx_git_fail(rc, "the bundle's pack has an object that does not parse");
		goto cleanup;
	}
	for (size_t i = 0; i < n_tips; i++) {
		git_object_t type;
		size_t len;
		if (git_odb_read_header(&len, &type, cc.both_odb, &tips[i]) < 0 ||
		    type != GIT_OBJECT_COMMIT) {
			rc = tbx_error_set(TBX_EPROTO, "the bundle names commit %s, which is in "
					   "neither its pack nor this repository",
					   git_oid_tostr_s(&tips[i]));
			goto cleanup;
		}
	}
	rc = 0;
cleanup:
	git_repository_free(cc.both);
	git_odb_free(cc.both_odb);
	git_odb_free(qodb);
	return rc;
}

/* Move pack-<name>.{pack,idx} from the quarantine into objects/pack, index last. */
static int publish(const char *quarantine, const char *objects, const char *name)
{
	static const char *const exts[] = { "pack", "idx" };
	char from[PATH_MAX], to[PATH_MAX];
	struct stat st;

	for (size_t i = 0; i < 2; i++) {
		if (tbx_git_pathf(from, sizeof(from), "%s/pack/pack-%s.%s", quarantine, name,
				  exts[i]) < 0 ||
		    tbx_git_pathf(to, sizeof(to), "%spack/pack-%s.%s", objects, name, exts[i]) < 0)
			return TBX_EINVAL;
		/* The same pack (same name = same content) may be there already. */
		if (stat(to, &st) == 0)
			continue;
		if (rename(from, to) != 0)
			return tbx_error_set(TBX_EIO, "cannot move the received pack into %spack: %s",
					     objects, strerror(errno));
	}
	return 0;
}

int tbx_git_pack_index(git_repository *repo, const char *data, size_t len, const git_oid *tips,
		       size_t n_tips, const struct tbx_git_progress *progress,
		       const atomic_int *cancel, size_t *objects_out)
{
	git_indexer_options opts = GIT_INDEXER_OPTIONS_INIT;
	struct index_state st = { .progress = progress, .cancel = cancel };
	git_indexer_progress stats = { 0 };
	char objects[PATH_MAX], quarantine[PATH_MAX], packdir[PATH_MAX + 8];
	git_odb *odb = NULL;
	git_indexer *idx = NULL;
	char *name = NULL;
	int rc;

	*objects_out = 0;
	if ((rc = git_repository_odb(&odb, repo)) < 0)
		return tbx_git_fail(rc, "cannot open the object database");
	/* Same filesystem as objects/pack, so publishing is a rename. */
	if (tbx_git_pathf(objects, sizeof(objects), "%sobjects/", git_repository_commondir(repo)) < 0 ||
	    tbx_git_pathf(quarantine, sizeof(quarantine), "%sincoming-twinbox-XXXXXX", objects) < 0) {
		git_odb_free(odb);
		return TBX_EINVAL;
	}
	if (!mkdtemp(quarantine)) {
		git_odb_free(odb);
		return tbx_error_set(TBX_EIO, "cannot make a quarantine directory in %s: %s", objects,
				     strerror(errno));
	}
	snprintf(packdir, sizeof(packdir), "%s/pack", quarantine);
	if (mkdir(packdir, 0700) != 0) {
		rc = tbx_error_set(TBX_EIO, "cannot make %s: %s", packdir, strerror(errno));
		goto cleanup;
	}
	opts.progress_cb = on_index_progress;
	opts.progress_cb_payload = &st;
	if ((rc = git_indexer_new(&idx, packdir, 0, odb, &opts)) < 0) {
		rc = tbx_git_fail(rc, "cannot start indexing the pack");
		goto cleanup;
	}
	for (size_t off = 0; off < len; off += INDEX_CHUNK) {
		size_t n = len - off < INDEX_CHUNK ? len - off : INDEX_CHUNK;
		if (tbx_git_cancelled(cancel)) {
			rc = tbx_error_set(TBX_ECANCELED, "cancelled");
			goto cleanup;
		}
		if ((rc = git_indexer_append(idx, data + off, n, &stats)) < 0)
			break;
	}
	if (rc >= 0)
		rc = git_indexer_commit(idx, &stats);
	if (rc < 0) {
		const git_error *e = git_error_last();
		if (tbx_git_cancelled(cancel))
			rc = tbx_error_set(TBX_ECANCELED, "cancelled");
		else
			rc = tbx_error_set(TBX_EPROTO, "the bundle's pack is damaged or incomplete: %s",
					   e && e->message ? e->message : "libgit2 gave no reason");
		goto cleanup;
	}
	if (!(name = strdup(git_indexer_name(idx)))) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto cleanup;
	}
	*objects_out = stats.total_objects;
	tbx_git_progress_report(progress, "check", 0, 0);
	if ((rc = check_connected(quarantine, objects, tips, n_tips)) < 0)
		goto cleanup;
	if (stats.total_objects > 0 && (rc = publish(quarantine, objects, name)) < 0)
		goto cleanup;
	if ((rc = git_odb_refresh(odb)) < 0) {
		rc = tbx_git_fail(rc, "cannot reload the object database");
		goto cleanup;
	}
	rc = 0;
cleanup:
	git_indexer_free(idx);
	git_odb_free(odb);
	quarantine_remove(quarantine);
	free(name);
	return rc;
}
