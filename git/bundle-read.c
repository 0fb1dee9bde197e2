/* SPDX-License-Identifier: MIT */
/*
 * Reading a bundle, in the order that makes a bad one change nothing: the
 * header, the refs it would write (only those under refs/heads/opencode/, never a
 * checked-out branch), its prerequisites, then the pack (quarantined, see
 * pack-index.c), and only then the refs, each moved with compare-and-swap.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "git-bundle.h"

void tbx_git_read_result_clear(struct tbx_git_read_result *r)
{
	for (size_t i = 0; i < r->n_updates; i++)
		tbx_git_ref_update_clear(&r->updates[i]);
	free(r->updates);
	memset(r, 0, sizeof(*r));
}

/* The local name bundle ref `name` is written to, or NULL when it is refused. */
static const char *destination(const struct tbx_git_read_opts *opts, const char *name)
{
	if (!opts || !opts->map)
		return tbx_git_ref_is_owned(name) ? name : NULL;
	for (size_t i = 0; i < opts->n_map; i++)
		if (strcmp(opts->map[i].from, name) == 0)
			return tbx_git_ref_is_owned(opts->map[i].to) ? opts->map[i].to : NULL;
	return NULL;
}

static int check_refs(git_repository *repo, const struct tbx_git_bundle_header *h,
		      const struct tbx_git_read_opts *opts, const char **dests)
{
	for (size_t i = 0; i < h->n_refs; i++) {
		const char *to = destination(opts, h->refs[i].name);
		char *where = NULL;
		int busy, rc;

		if (!to)
			return tbx_error_set(TBX_EPERM, "refusing the bundle: it carries %s, and "
					     "twinbox writes only " TBX_GIT_NAMESPACE "*%s",
					     h->refs[i].name,
					     opts && opts->map ? " (through its own mapping)" : "");
		for (size_t j = 0; j < i; j++)
			if (strcmp(dests[j], to) == 0)
				return tbx_error_set(TBX_EPROTO, "refusing the bundle: two of its refs "
						     "would both be written to %s", to);
		dests[i] = to;
		if ((rc = tbx_git_ref_checked_out(repo, to, &busy, &where)) < 0)
			return rc;
		if (busy) {
			rc = tbx_error_set(TBX_EUNAVAIL, "refusing the bundle: %s is checked out in "
					   "%s, and twinbox never moves a checked-out branch",
					   to + strlen("refs/heads/"), where ? where : "a worktree");
			free(where);
			return rc;
		}
	}
	return 0;
}

static int check_prerequisites(git_repository *repo, const struct tbx_git_bundle_header *h)
{
	const git_oid *first = NULL;
	git_odb *odb = NULL;
	size_t missing = 0;
	int rc = git_repository_odb(&odb, repo);

	if (rc < 0)
		return tbx_git_fail(rc, "cannot open the object database");
	/* Count them all: "3 of 5 missing" says more than the first one alone. */
	for (size_t i = 0; i < h->n_prerequisites; i++) {
		git_object_t type;
		size_t len;
		if (git_odb_read_header(&len, &type, odb, &h->prerequisites[i]) < 0 ||
		    type != GIT_OBJECT_COMMIT) {
			if (!missing++)
				first = &h->prerequisites[i];
		}
	}
	if (missing)
		rc = tbx_error_set(TBX_ENOENT, "refusing the bundle: this repository lacks %zu of "
				   "its %zu prerequisite commits (%s first)", missing,
				   h->n_prerequisites, git_oid_tostr_s(first));
	git_odb_free(odb);
	return rc;
}

int tbx_git_bundle_read_mem(git_repository *repo, const char *data, size_t len,
			    const struct tbx_git_read_opts *opts, struct tbx_git_read_result *out)
{
	const char *log_message = opts && opts->log_message ? opts->log_message : "twinbox: bundle";
	struct tbx_git_bundle_header h;
	const char **dests = NULL;
	git_oid *tips = NULL;
	size_t objects = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = tbx_git_bundle_header_parse(data, len, &h)) < 0)
		return rc;
	dests = calloc(h.n_refs, sizeof(*dests));
	tips = calloc(h.n_refs, sizeof(*tips));
	out->updates = calloc(h.n_refs, sizeof(*out->updates));
	if (!dests || !tips || !out->updates) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto cleanup;
	}
	if ((rc = check_refs(repo, &h, opts, dests)) < 0 ||
	    (rc = check_prerequisites(repo, &h)) < 0)
		goto cleanup;
	for (size_t i = 0; i < h.n_refs; i++)
		git_oid_cpy(&tips[i], &h.refs[i].oid);
	rc = tbx_git_pack_index(repo, data + h.pack_offset, len - h.pack_offset, tips, h.n_refs,
				opts ? opts->progress : NULL, opts ? opts->cancel : NULL, &objects);
	if (rc < 0)
		goto cleanup;
	tbx_git_progress_report(opts ? opts->progress : NULL, "refs", 0, h.n_refs);
	for (size_t i = 0; i < h.n_refs; i++) {
		rc = tbx_git_ref_advance(repo, dests[i], &h.refs[i].oid, log_message,
					 &out->updates[i]);
		out->n_updates = i + 1;
		if (rc < 0)
			goto cleanup;
	}
	tbx_git_progress_report(opts ? opts->progress : NULL, "refs", h.n_refs, h.n_refs);
	out->objects = objects;
	out->prerequisites = h.n_prerequisites;
	out->bytes = len;
	rc = 0;
cleanup:
	free(dests);
	free(tips);
	tbx_git_bundle_header_clear(&h);
	return rc;
}

int tbx_git_bundle_read_file(git_repository *repo, const char *path,
			     const struct tbx_git_read_opts *opts, struct tbx_git_read_result *out)
{
	struct stat st;
	void *map;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return tbx_error_set(errno == ENOENT ? TBX_ENOENT : TBX_EIO, "cannot open %s: %s",
				     path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return tbx_error_set(TBX_EINVAL, "%s is not a regular file", path);
	}
	if (st.st_size == 0) {
		close(fd);
		return tbx_error_set(TBX_EPROTO, "not a git bundle: %s is empty", path);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return tbx_error_set(TBX_EIO, "cannot map %s: %s", path, strerror(errno));
	rc = tbx_git_bundle_read_mem(repo, map, (size_t)st.st_size, opts, out);
	munmap(map, (size_t)st.st_size);
	return rc;
}
