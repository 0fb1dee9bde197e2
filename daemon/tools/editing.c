/* SPDX-License-Identifier: MIT */
/*
 * The edit engine behind edit and multiedit: read once, apply every
 * replacement in memory, write once. Nothing is written unless every edit
 * applies, so a failing edit never leaves a half-edited file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "error.h"
#include "tools-priv.h"

/* Re-set the current error with which edit failed in front of it. */
static int edit_failed(bool multi, size_t i, int rc)
{
	char msg[2048];

	if (!multi)
		return rc;
	snprintf(msg, sizeof(msg), "%s", tbx_error_message());
	return tbx_error_set(rc, "edits[%zu] failed: %s (no edits were applied)", i, msg);
}

static bool identical(const struct tbx_replace *r)
{
	return r->old_len == r->new_len && memcmp(r->old_str, r->new_str, r->old_len) == 0;
}

int tbx_edit_run(const struct tbx_tool_ctx *ctx, const char *file_arg,
		 const struct tbx_replace *edits, size_t n, bool multi, struct json_object **out)
{
	char *path = tbx_path_resolve(ctx, file_arg), *title = NULL, *orig = NULL, *cur = NULL;
	char *diff = NULL;
	size_t orig_len = 0, cur_len = 0, added = 0, removed = 0, total = 0;
	struct json_object *meta = NULL, *results = NULL;
	uint32_t type = 0;
	bool exists;
	int rc;

	if (!path)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	/* OpenCode refuses a no-op edit before it looks at the file. */
	for (size_t i = 0; i < n; i++) {
		if (identical(&edits[i])) {
			rc = edit_failed(multi, i,
					 tbx_error_set(TBX_EINVAL, "No changes to apply: oldString and "
								   "newString are identical."));
			goto cleanup;
		}
	}
	rc = tbx_tool_stat(ctx, path, &exists, &type, NULL);
	if (rc < 0)
		goto cleanup;
	if (exists && type == TBX_FILE_DIRECTORY) {
		rc = tbx_error_set(TBX_EISDIR, "Path is a directory, not a file: %s", path);
		goto cleanup;
	}
	if (exists) {
		rc = tbx_engine_file_read(ctx->engine, ctx->cancel, ctx->sandbox_id, path, &orig,
					  &orig_len);
		if (rc < 0)
			goto cleanup;
		cur = malloc(orig_len + 1);
		if (!cur) {
			rc = tbx_error_set(TBX_ENOMEM, "out of memory");
			goto cleanup;
		}
		memcpy(cur, orig, orig_len);
		cur[orig_len] = '\0';
		cur_len = orig_len;
	}
	results = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		struct json_object *r;
		char *next = NULL;
		size_t next_len = 0, count = 0;

		if (!cur && edits[i].old_len > 0) {
			rc = edit_failed(multi, i, tbx_error_set(TBX_ENOENT, "File %s not found", path));
			goto cleanup;
		}
		rc = tbx_replace_apply(cur ? cur : "", cur_len, &edits[i], &next, &next_len, &count);
		if (rc < 0) {
			rc = edit_failed(multi, i, rc);
			goto cleanup;
		}
		free(cur);
		cur = next;
		cur_len = next_len;
		total += count;
		r = json_object_new_object();
		json_object_object_add(r, "replacements", json_object_new_int64((int64_t)count));
		json_object_array_add(results, r);
	}
	rc = tbx_engine_file_write(ctx->engine, ctx->cancel, ctx->sandbox_id, path, cur, cur_len);
	if (rc < 0)
		goto cleanup;
	diff = tbx_diff_unified(path, orig ? orig : "", orig_len, cur, cur_len, &added, &removed);
	title = tbx_path_title(ctx, path);
	meta = json_object_new_object();
	json_object_object_add(meta, "filepath", json_object_new_string(path));
	json_object_object_add(meta, "diff", tbx_json_text(diff ? diff : "", diff ? strlen(diff) : 0));
	json_object_object_add(meta, "additions", json_object_new_int64((int64_t)added));
	json_object_object_add(meta, "deletions", json_object_new_int64((int64_t)removed));
	json_object_object_add(meta, "replacements", json_object_new_int64((int64_t)total));
	if (multi) {
		json_object_object_add(meta, "results", results);
		results = NULL;
	}
	rc = tbx_tool_result(out, title, "Edit applied successfully.", meta);
cleanup:
	json_object_put(results);
	free(diff);
	free(title);
	free(orig);
	free(cur);
	free(path);
	return rc;
}
