/* SPDX-License-Identifier: MIT */
/*
 * glob: files whose path matches a pattern, newest first, computed in the
 * core over the engine's file list so the sandbox needs no ripgrep.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "tools-priv.h"

static const char glob_description[] =
	"Find files in the sandbox by glob pattern, such as \"**/*.js\" or "
	"\"src/**/*.{ts,tsx}\".\n"
	"\n"
	"- Supports *, **, ?, [abc] and {a,b}. A pattern without / matches file names at any "
	"depth; one with / is matched from the search directory.\n"
	"- Returns absolute paths, most recently modified first, at most 100.\n"
	"- .git is skipped.";

static const char glob_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"pattern\":{\"type\":\"string\",\"description\":\"The glob pattern to match files "
	"against\"},"
	"\"path\":{\"type\":\"string\",\"description\":\"The directory to search in. If not "
	"specified, the current working directory will be used. IMPORTANT: Omit this field to "
	"use the default directory. DO NOT enter \\\"undefined\\\" or \\\"null\\\" - simply omit it "
	"for the default behavior. Must be a valid directory path if provided.\"}},"
	"\"required\":[\"pattern\"],\"additionalProperties\":false}";

static int glob_call(const struct tbx_tool_ctx *ctx, struct json_object *args,
		     struct json_object **out)
{
	const char *pattern = tbx_arg_str(args, "pattern");
	char *root = tbx_path_resolve(ctx, tbx_arg_str(args, "path")), *title = NULL, *text = NULL;
	struct tbx_walk w = {0};
	struct json_object *meta;
	struct tbx_buf b;
	size_t found = 0;
	bool truncated = false;
	int rc;

	if (!root)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	rc = tbx_tool_require_dir(ctx, root);
	if (rc == 0)
		rc = tbx_walk_files(ctx, root, tbx_walk_skip_vcs, NULL, &w);
	if (rc < 0)
		goto cleanup;
	tbx_walk_sort_newest(&w);
	tbx_buf_init(&b);
	for (size_t i = 0; i < w.n; i++) {
		if (!tbx_glob_match_rel(pattern, w.files[i].rel, false))
			continue;
		if (found == TBX_TOOL_MAX_RESULTS) {
			truncated = true;
			break;
		}
		tbx_buf_printf(&b, "%s%s", found ? "\n" : "", w.files[i].path);
		found++;
	}
	if (found == 0)
		tbx_buf_adds(&b, "No files found");
	else if (truncated)
		tbx_buf_adds(&b, "\n\n(Results are truncated. Consider using a more specific path or "
				 "pattern.)");
	text = tbx_buf_steal(&b);
	if (!text) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto cleanup;
	}
	title = tbx_path_title(ctx, root);
	meta = json_object_new_object();
	json_object_object_add(meta, "count", json_object_new_int64((int64_t)found));
	json_object_object_add(meta, "truncated", json_object_new_boolean(truncated));
	rc = tbx_tool_result(out, title, text, meta);
cleanup:
	tbx_walk_free(&w);
	free(text);
	free(title);
	free(root);
	return rc;
}

const struct tbx_tool_desc tbx_tool_glob = {
	.name = "glob",
	.description = glob_description,
	.parameters_json = glob_schema,
	.call = glob_call,
};
