/* SPDX-License-Identifier: MIT */
/* multiedit: several edits to one file, applied in order, all or nothing. */
#include <stdlib.h>

#include "error.h"
#include "tools-priv.h"

static const char multiedit_description[] =
	"Make several edits to one file in the sandbox in a single call.\n"
	"\n"
	"- Each edit works like the edit tool and applies to the result of the edits before "
	"it, in order.\n"
	"- All or nothing: if any edit fails (no match, several matches without replaceAll, "
	"identical strings), the file is left unchanged and the error names the edit.\n"
	"- filePath is absolute or relative to the project directory.";

static const char multiedit_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"filePath\":{\"type\":\"string\",\"description\":\"The absolute path to the file to "
	"modify\"},"
	"\"edits\":{\"type\":\"array\",\"description\":\"Array of edit operations to perform "
	"sequentially on the file\",\"items\":{\"type\":\"object\",\"properties\":{"
	"\"oldString\":{\"type\":\"string\",\"description\":\"The text to replace\"},"
	"\"newString\":{\"type\":\"string\",\"description\":\"The text to replace it with (must "
	"be different from oldString)\"},"
	"\"replaceAll\":{\"type\":\"boolean\",\"description\":\"Replace all occurrences of "
	"oldString (default false)\"}},"
	"\"required\":[\"oldString\",\"newString\"]}}},"
	"\"required\":[\"filePath\",\"edits\"],\"additionalProperties\":false}";

static int multiedit_call(const struct tbx_tool_ctx *ctx, struct json_object *args,
			  struct json_object **out)
{
	struct json_object *edits = NULL;
	struct tbx_replace *r;
	size_t n;
	int rc;

	json_object_object_get_ex(args, "edits", &edits);
	n = json_object_array_length(edits);
	if (n == 0)
		return tbx_error_set(TBX_EINVAL, "multiedit: 'edits' must hold at least one edit");
	r = calloc(n, sizeof(*r));
	if (!r)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(edits, i);

		r[i].old_str = tbx_arg_str(e, "oldString");
		r[i].old_len = tbx_arg_str_len(e, "oldString");
		r[i].new_str = tbx_arg_str(e, "newString");
		r[i].new_len = tbx_arg_str_len(e, "newString");
		r[i].all = tbx_arg_bool(e, "replaceAll", false);
	}
	rc = tbx_edit_run(ctx, tbx_arg_str(args, "filePath"), r, n, true, out);
	free(r);
	return rc;
}

const struct tbx_tool_desc tbx_tool_multiedit = {
	.name = "multiedit",
	.description = multiedit_description,
	.parameters_json = multiedit_schema,
	.call = multiedit_call,
};
