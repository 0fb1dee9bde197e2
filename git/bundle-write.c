/* SPDX-License-Identifier: MIT */
/*
 * Writing a bundle: walk the tips' history hiding the basis, take the
 * boundary (hidden parents of walked commits) as prerequisites, and build the
 * pack with libgit2's packbuilder from a walk that hides exactly that
 * boundary, so the trees and blobs the reader already has stay out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "git-bundle.h"

/* A sorted set of commit ids, searched with bsearch. */
struct oid_list {
	git_oid *ids;
	size_t n;
	size_t cap;
};

static int oid_list_add(struct oid_list *l, const git_oid *id)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		git_oid *grown = realloc(l->ids, cap * sizeof(*grown));
		if (!grown)
			return tbx_error_set(TBX_ENOMEM, "out of memory");
		l->ids = grown;
		l->cap = cap;
	}
	git_oid_cpy(&l->ids[l->n++], id);
	return 0;
}

static int oid_cmp(const void *a, const void *b)
{
	return git_oid_cmp(a, b);
}

static void oid_list_sort(struct oid_list *l)
{
	if (l->n > 1)
		qsort(l->ids, l->n, sizeof(*l->ids), oid_cmp);
}

static int oid_list_has(const struct oid_list *l, const git_oid *id)
{
	return l->n && bsearch(id, l->ids, l->n, sizeof(*l->ids), oid_cmp) != NULL;
}

/* Add id unless present (for short lists kept unsorted). */
static int oid_list_add_unique(struct oid_list *l, const git_oid *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (git_oid_equal(&l->ids[i], id))
			return 0;
	return oid_list_add(l, id);
}

static int is_commit(git_odb *odb, const git_oid *id)
{
	git_object_t type;
	size_t len;

	return git_odb_read_header(&len, &type, odb, id) == 0 && type == GIT_OBJECT_COMMIT;
}

struct write_state {
	tbx_git_sink_fn sink;
	void *payload;
	const struct tbx_git_bundle_spec *spec;
	uint64_t bytes;
	size_t objects;
	int sink_failed;
};

static int emit(struct write_state *w, const void *data, size_t len)
{
	if (w->sink(w->payload, data, len) != 0) {
		w->sink_failed = 1;
		return -1;
	}
	w->bytes += len;
	return 0;
}

static int on_pack_chunk(void *buf, size_t size, void *payload)
{
	struct write_state *w = payload;

	if (tbx_git_cancelled(w->spec->cancel))
		return GIT_EUSER;
	if (emit(w, buf, size) < 0)
		return GIT_EUSER;
	tbx_git_progress_report(w->spec->progress, "bundle", w->bytes, 0);
	return 0;
}

static int on_pack_progress(int stage, uint32_t current, uint32_t total, void *payload)
{
	struct write_state *w = payload;

	if (tbx_git_cancelled(w->spec->cancel))
		return GIT_EUSER;
	tbx_git_progress_report(w->spec->progress,
				stage == GIT_PACKBUILDER_ADDING_OBJECTS ? "count" : "compress",
				current, total);
	return 0;
}

/* The commits to send (sorted) and the boundary the reader must have. */
static int walk_history(git_repository *repo, const struct tbx_git_bundle_spec *spec,
			const struct oid_list *basis, struct oid_list *commits,
			struct oid_list *boundary)
{
	git_revwalk *walk = NULL;
	git_commit *commit = NULL;
	git_oid id;
	int rc;

	if ((rc = git_revwalk_new(&walk, repo)) < 0)
		return tbx_git_fail(rc, "cannot walk the history");
	for (size_t i = 0; i < spec->n_tips && rc >= 0; i++)
		rc = git_revwalk_push(walk, &spec->tips[i].oid);
	for (size_t i = 0; i < basis->n && rc >= 0; i++)
		rc = git_revwalk_hide(walk, &basis->ids[i]);
	while (rc >= 0 && (rc = git_revwalk_next(&id, walk)) == 0)
		if (oid_list_add(commits, &id) < 0) {
			git_revwalk_free(walk);
			return TBX_ENOMEM;
		}
	git_revwalk_free(walk);
	if (rc != GIT_ITEROVER)
		return tbx_git_fail(rc, "cannot walk the history");
	oid_list_sort(commits);
	for (size_t i = 0; i < commits->n; i++) {
		if ((rc = git_commit_lookup(&commit, repo, &commits->ids[i])) < 0)
			return tbx_git_fail(rc, "cannot read commit %s",
					    git_oid_tostr_s(&commits->ids[i]));
		for (unsigned p = 0; p < git_commit_parentcount(commit); p++) {
			const git_oid *parent = git_commit_parent_id(commit, p);
			if (!oid_list_has(commits, parent) && oid_list_add_unique(boundary, parent) < 0) {
				git_commit_free(commit);
				return TBX_ENOMEM;
			}
		}
		git_commit_free(commit);
	}
	/* A tip the reader already has is listed too, so the reader checks for it. */
	for (size_t i = 0; i < spec->n_tips; i++)
		if (!oid_list_has(commits, &spec->tips[i].oid) &&
		    oid_list_add_unique(boundary, &spec->tips[i].oid) < 0)
			return TBX_ENOMEM;
	return 0;
}

static int write_header(git_repository *repo, struct write_state *w, const struct oid_list *boundary)
{
	const struct tbx_git_bundle_spec *spec = w->spec;
	char line[GIT_OID_HEXSZ + 1024];
	git_commit *commit;
	int n;

	if (emit(w, "# v2 git bundle\n", 16) < 0)
		return -1;
	for (size_t i = 0; i < boundary->n; i++) {
		/* git puts the commit's subject after a prerequisite; readers ignore it. */
		const char *subject = NULL;
		if (git_commit_lookup(&commit, repo, &boundary->ids[i]) == 0)
			subject = git_commit_summary(commit);
		else
			commit = NULL;
		n = snprintf(line, sizeof(line), "-%s %.900s\n", git_oid_tostr_s(&boundary->ids[i]),
			     subject ? subject : "");
		git_commit_free(commit);
		if (n < 0 || emit(w, line, strnlen(line, sizeof(line))) < 0)
			return -1;
	}
	for (size_t i = 0; i < spec->n_tips; i++) {
		n = snprintf(line, sizeof(line), "%s %s\n", git_oid_tostr_s(&spec->tips[i].oid),
			     spec->tips[i].name);
		if (n < 0 || (size_t)n >= sizeof(line) || emit(w, line, (size_t)n) < 0)
			return -1;
	}
	return emit(w, "\n", 1);
}

static int check_spec(git_repository *repo, git_odb *odb, const struct tbx_git_bundle_spec *spec,
		      struct oid_list *basis)
{
	if (spec->n_tips == 0)
		return tbx_error_set(TBX_EINVAL, "a bundle needs at least one ref");
	for (size_t i = 0; i < spec->n_tips; i++) {
		int valid = 0;
		const char *name = spec->tips[i].name;
		if (!name || (strcmp(name, "HEAD") != 0 &&
			      (git_reference_name_is_valid(&valid, name) < 0 || !valid)))
			return tbx_error_set(TBX_EINVAL, "'%s' is not a valid ref name for a bundle",
					     name ? name : "(null)");
		if (!is_commit(odb, &spec->tips[i].oid))
			return tbx_error_set(TBX_EINVAL, "%s (%s) is not a commit in %s", name,
					     git_oid_tostr_s(&spec->tips[i].oid),
					     git_repository_path(repo));
	}
	/* Hiding an unknown commit fails the walk; the reader cannot have it from us anyway. */
	for (size_t i = 0; i < spec->n_basis; i++)
		if (is_commit(odb, &spec->basis[i]) && oid_list_add_unique(basis, &spec->basis[i]) < 0)
			return TBX_ENOMEM;
	return 0;
}

int tbx_git_bundle_write(git_repository *repo, const struct tbx_git_bundle_spec *spec,
			 tbx_git_sink_fn sink, void *payload, struct tbx_git_bundle_stats *stats_out)
{
	struct oid_list basis = { 0 }, commits = { 0 }, boundary = { 0 };
	struct write_state w = { .sink = sink, .payload = payload, .spec = spec };
	git_packbuilder *pb = NULL;
	git_revwalk *walk = NULL;
	git_odb *odb = NULL;
	int rc;

	if (stats_out)
		memset(stats_out, 0, sizeof(*stats_out));
	if ((rc = git_repository_odb(&odb, repo)) < 0)
		return tbx_git_fail(rc, "cannot open the object database");
	if ((rc = check_spec(repo, odb, spec, &basis)) < 0 ||
	    (rc = walk_history(repo, spec, &basis, &commits, &boundary)) < 0)
		goto cleanup;
	if (commits.n == 0) {
		rc = tbx_error_set(TBX_EEXIST, "nothing to bundle: the reader already has every "
				   "commit asked for");
		goto cleanup;
	}
	/* The pack: everything reachable from the tips that the boundary's trees lack. */
	if ((rc = git_packbuilder_new(&pb, repo)) < 0 || (rc = git_revwalk_new(&walk, repo)) < 0) {
		rc = tbx_git_fail(rc, "cannot start a pack");
		goto cleanup;
	}
	git_packbuilder_set_threads(pb, 0);
	git_packbuilder_set_callbacks(pb, on_pack_progress, &w);
	for (size_t i = 0; i < spec->n_tips && rc >= 0; i++)
		rc = git_revwalk_push(walk, &spec->tips[i].oid);
	for (size_t i = 0; i < boundary.n && rc >= 0; i++)
		rc = git_revwalk_hide(walk, &boundary.ids[i]);
	if (rc >= 0)
		rc = git_packbuilder_insert_walk(pb, walk);
	if (rc < 0) {
		rc = rc == GIT_EUSER ? tbx_error_set(TBX_ECANCELED, "cancelled")
				     : tbx_git_fail(rc, "cannot collect the objects to bundle");
		goto cleanup;
	}
	if (write_header(repo, &w, &boundary) < 0) {
		rc = tbx_error_set(TBX_EIO, "cannot write the bundle header");
		goto cleanup;
	}
	w.objects = git_packbuilder_object_count(pb);
	rc = git_packbuilder_foreach(pb, on_pack_chunk, &w);
	if (rc < 0) {
		if (tbx_git_cancelled(spec->cancel))
			rc = tbx_error_set(TBX_ECANCELED, "cancelled");
		else if (w.sink_failed)
			rc = tbx_error_status() < 0 ? tbx_error_status()
						     : tbx_error_set(TBX_EIO, "cannot write the bundle");
		else
			rc = tbx_git_fail(rc, "cannot write the pack");
		goto cleanup;
	}
	if (stats_out) {
		stats_out->commits = commits.n;
		stats_out->objects = w.objects;
		stats_out->prerequisites = boundary.n;
		stats_out->bytes = w.bytes;
	}
	rc = 0;
cleanup:
	git_revwalk_free(walk);
	git_packbuilder_free(pb);
	git_odb_free(odb);
	free(basis.ids);
	free(commits.ids);
	free(boundary.ids);
	return rc;
}

static int sink_fd(void *payload, const void *data, size_t len)
{
	int fd = *(int *)payload;
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			tbx_error_set(TBX_EIO, "cannot write the bundle: %s", strerror(errno));
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int tbx_git_bundle_write_file(git_repository *repo, const struct tbx_git_bundle_spec *spec,
			      const char *path, struct tbx_git_bundle_stats *stats_out)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), rc;

	if (fd < 0)
		return tbx_error_set(TBX_EIO, "cannot create %s: %s", path, strerror(errno));
	tbx_error_clear();
	rc = tbx_git_bundle_write(repo, spec, sink_fd, &fd, stats_out);
	if (close(fd) != 0 && rc == 0)
		rc = tbx_error_set(TBX_EIO, "cannot write %s: %s", path, strerror(errno));
	if (rc < 0)
		unlink(path);
	return rc;
}

struct mem_sink {
	char *data;
	size_t len;
	size_t cap;
};

static int sink_mem(void *payload, const void *data, size_t len)
{
	struct mem_sink *m = payload;

	if (m->len + len > m->cap) {
		size_t cap = m->cap ? m->cap : 64 * 1024;
		while (cap < m->len + len)
			cap *= 2;
		char *grown = realloc(m->data, cap);
		if (!grown) {
			tbx_error_set(TBX_ENOMEM, "out of memory for a %zu-byte bundle", m->len + len);
			return -1;
		}
		m->data = grown;
		m->cap = cap;
	}
	memcpy(m->data + m->len, data, len);
	m->len += len;
	return 0;
}

int tbx_git_bundle_write_mem(git_repository *repo, const struct tbx_git_bundle_spec *spec,
			     char **data_out, size_t *len_out, struct tbx_git_bundle_stats *stats_out)
{
	struct mem_sink m = { 0 };
	int rc;

	*data_out = NULL;
	*len_out = 0;
	tbx_error_clear();
	rc = tbx_git_bundle_write(repo, spec, sink_mem, &m, stats_out);
	if (rc < 0) {
		free(m.data);
		return rc;
	}
	*data_out = m.data;
	*len_out = m.len;
	return 0;
}
