/* SPDX-License-Identifier: MIT */
/*
 * Git bundles written and read with libgit2 (the format of `git bundle`,
 * v2, and v3 with only the sha1 object format). A bundle is a header (its
 * prerequisites: commits the reader must already have; and its refs) and a
 * pack with every object the reader lacks.
 *
 * The writer hides the basis the reader is known to have, so an incremental
 * bundle holds only the new history. The reader checks the header, the ref
 * namespace and the prerequisites, indexes the pack in a quarantine
 * directory with a connectivity check, publishes it into the object
 * database, and only then moves refs: a bad bundle changes nothing.
 */
#ifndef TBX_GIT_BUNDLE_H
#define TBX_GIT_BUNDLE_H

#include <git2.h>
#include <stddef.h>
#include <stdint.h>

#include "git-common.h"
#include "git-refs.h"

/* Where the writer's bytes go; return nonzero to stop (the writer fails). */
typedef int (*tbx_git_sink_fn)(void *payload, const void *data, size_t len);

/* A ref the bundle carries: its name in the bundle, and the commit. */
struct tbx_git_bundle_tip {
	const char *name;
	git_oid oid;
};

struct tbx_git_bundle_spec {
	const struct tbx_git_bundle_tip *tips;
	size_t n_tips;
	/* Commits the reader is known to have; ones this repository lacks are ignored. */
	const git_oid *basis;
	size_t n_basis;
	const struct tbx_git_progress *progress;
	const atomic_int *cancel;
};

struct tbx_git_bundle_stats {
	size_t commits;       /* commits in the pack */
	size_t objects;       /* objects in the pack */
	size_t prerequisites; /* 0 = a full bundle */
	uint64_t bytes;       /* header and pack */
};

/*
 * Write a bundle of spec->tips to sink. Tips must be commits. Fails with
 * TBX_EEXIST when the reader already has every tip (the bundle would be
 * empty, which git refuses too).
 */
int tbx_git_bundle_write(git_repository *repo, const struct tbx_git_bundle_spec *spec,
			 tbx_git_sink_fn sink, void *payload, struct tbx_git_bundle_stats *stats_out);
/* The same into a new file (mode 0600), or into a malloc'd buffer. */
int tbx_git_bundle_write_file(git_repository *repo, const struct tbx_git_bundle_spec *spec,
			      const char *path, struct tbx_git_bundle_stats *stats_out);
int tbx_git_bundle_write_mem(git_repository *repo, const struct tbx_git_bundle_spec *spec,
			     char **data_out, size_t *len_out, struct tbx_git_bundle_stats *stats_out);

/* A parsed bundle header. */
struct tbx_git_bundle_ref {
	char *name;
	git_oid oid;
};

struct tbx_git_bundle_header {
	int version;         /* 2 or 3 */
	git_oid *prerequisites;
	size_t n_prerequisites;
	struct tbx_git_bundle_ref *refs;
	size_t n_refs;
	size_t pack_offset;  /* where the pack starts */
};

/*
 * Parse the header at the start of data. TBX_EPROTO (with a message saying
 * what is wrong) for anything that is not a well-formed bundle header
 * followed by a pack signature.
 */
int tbx_git_bundle_header_parse(const char *data, size_t len, struct tbx_git_bundle_header *out);
void tbx_git_bundle_header_clear(struct tbx_git_bundle_header *h);

/* A rename applied to bundle refs: `from` in the bundle becomes local `to`. */
struct tbx_git_ref_map {
	const char *from;
	const char *to;
};

struct tbx_git_read_opts {
	/*
	 * NULL: bundle refs are written under their own names, which must be
	 * under refs/heads/opencode/. Otherwise every bundle ref must be some
	 * map entry's `from`, and every `to` under refs/heads/opencode/.
	 */
	const struct tbx_git_ref_map *map;
	size_t n_map;
	const char *log_message; /* reflog message; NULL = "twinbox: bundle" */
	const struct tbx_git_progress *progress;
	const atomic_int *cancel;
};

struct tbx_git_read_result {
	struct tbx_git_ref_update *updates; /* one per bundle ref, in bundle order */
	size_t n_updates;
	size_t objects;       /* objects in the pack */
	size_t prerequisites;
	uint64_t bytes;
};

void tbx_git_read_result_clear(struct tbx_git_read_result *r);

/*
 * Read a bundle into repo. Refusals, with nothing changed: TBX_EPROTO (not a
 * bundle, damaged or truncated pack, a ref whose commit is in neither the
 * pack nor the repository), TBX_EPERM (a ref outside refs/heads/opencode/, or
 * not in the map), TBX_ENOENT (a prerequisite the repository lacks),
 * TBX_EUNAVAIL (a destination branch is checked out in a worktree). A
 * failure while moving a second ref leaves the first moved: *out lists the
 * moves made, and the caller clears *out whatever the outcome.
 */
int tbx_git_bundle_read_mem(git_repository *repo, const char *data, size_t len,
			    const struct tbx_git_read_opts *opts, struct tbx_git_read_result *out);
int tbx_git_bundle_read_file(git_repository *repo, const char *path,
			     const struct tbx_git_read_opts *opts, struct tbx_git_read_result *out);

/*
 * Index a pack (data, len) into repo's object database: first into a
 * quarantine directory with a connectivity check (every object the pack's
 * objects name is in the pack or the repository), then each `tips` commit
 * is checked, then the pack is moved into objects/pack. Nothing is left
 * behind on failure. *objects_out = objects in the pack.
 */
int tbx_git_pack_index(git_repository *repo, const char *data, size_t len, const git_oid *tips,
		       size_t n_tips, const struct tbx_git_progress *progress,
		       const atomic_int *cancel, size_t *objects_out);

#endif
