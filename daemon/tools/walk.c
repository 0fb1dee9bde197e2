/* SPDX-License-Identifier: MIT */
/*
 * The recursive file walk glob, grep and ls share: one file_list op with a
 * deep depth (a remote engine answers it in one round trip), then the
 * filtering ripgrep would do, in the core so every engine agrees.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "error.h"
#include "tools-priv.h"

/* Deep enough for any real project; bounded so a symlink loop cannot run away. */
#define WALK_DEPTH 64

bool tbx_walk_skip_vcs(const char *rel, const char *name, void *payload)
{
	(void)rel;
	(void)payload;
	return strcmp(name, ".git") == 0;
}

/* Is any directory on the way from the root to rel skipped? */
static bool walk_skipped(const char *rel, tbx_walk_skip_fn skip, void *payload)
{
	char *copy;
	bool out = false;

	if (!skip || !strchr(rel, '/'))
		return false;
	copy = strdup(rel);
	if (!copy)
		return true;
	for (char *slash = strchr(copy, '/'); slash && !out; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		out = skip(copy, tbx_path_base(copy), payload);
		*slash = '/';
	}
	free(copy);
	return out;
}

int tbx_walk_files(const struct tbx_tool_ctx *ctx, const char *root, tbx_walk_skip_fn skip,
		   void *payload, struct tbx_walk *out)
{
	struct tbx_file_info *infos = NULL;
	size_t n = 0, k = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = tbx_engine_file_list(ctx->engine, ctx->cancel, ctx->sandbox_id, root, WALK_DEPTH,
				  &infos, &n);
	if (rc < 0)
		return rc;
	out->files = calloc(n ? n : 1, sizeof(*out->files));
	if (!out->files) {
		tbx_file_infos_free(infos, n);
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		struct tbx_file_info *f = &infos[i];
		char *norm;
		const char *rel;

		/* Symlinks are not followed, as ripgrep without --follow. */
		if (f->type != TBX_FILE_REGULAR || !f->path)
			continue;
		norm = tbx_path_normalize(f->path);
		rel = norm ? tbx_path_below(root, norm) : NULL;
		if (!rel || !*rel || walk_skipped(rel, skip, payload)) {
			free(norm);
			continue;
		}
		out->files[k].rel = strdup(rel);
		out->files[k].path = norm;
		out->files[k].size = f->size;
		out->files[k].mtime = f->mtime;
		if (!out->files[k].rel) {
			free(norm);
			continue;
		}
		k++;
	}
	out->n = k;
	tbx_file_infos_free(infos, n);
	return 0;
}

static int cmp_newest(const void *a, const void *b)
{
	const struct tbx_walk_file *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime > y->mtime ? -1 : 1;
	/* Same second: a stable, engine-independent order. */
	return strcmp(x->rel, y->rel);
}

static int cmp_path(const void *a, const void *b)
{
	const struct tbx_walk_file *x = a, *y = b;

	return strcmp(x->rel, y->rel);
}

void tbx_walk_sort_newest(struct tbx_walk *w)
{
	if (w->n > 1)
		qsort(w->files, w->n, sizeof(*w->files), cmp_newest);
}

void tbx_walk_sort_path(struct tbx_walk *w)
{
	if (w->n > 1)
		qsort(w->files, w->n, sizeof(*w->files), cmp_path);
}

void tbx_walk_free(struct tbx_walk *w)
{
	for (size_t i = 0; i < w->n; i++) {
		free(w->files[i].path);
		free(w->files[i].rel);
	}
	free(w->files);
	memset(w, 0, sizeof(*w));
}
