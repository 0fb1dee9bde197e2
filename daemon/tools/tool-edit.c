/* SPDX-License-Identifier: MIT */
/* edit: replace an exact string in a file (literal text, one match unless replaceAll). */
#include "tools-priv.h"

static const char edit_description[] =
	"Replace text in a file in the sandbox.\n"
	"\n"
	"- oldString must match the file exactly, including whitespace and indentation, and "
	"must occur once unless replaceAll is true. newString is inserted literally.\n"
	"- An empty oldString creates the file (or replaces all of it) with newString.\n"
	"- filePath is absolute or relative to the project directory; paths under your local "
	"project map into the sandbox.";

static const char edit_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"filePath\":{\"type\":\"string\",\"description\":\"The absolute path to the file to "
	"modify\"},"
	"\"oldString\":{\"type\":\"string\",\"description\":\"The text to replace\"},"
	"\"newString\":{\"type\":\"string\",\"description\":\"The text to replace it with (must "
	"be different from oldString)\"},"
	"\"replaceAll\":{\"type\":\"boolean\",\"description\":\"Replace all occurrences of "
	"oldString (default false)\"}},"
	"\"required\":[\"filePath\",\"oldString\",\"newString\"],\"additionalProperties\":false}";

static int edit_call(const struct tbx_tool_ctx *ctx, struct json_object *args,
		     struct json_object **out)
{
	struct tbx_replace r = {
		.old_str = tbx_arg_str(args, "oldString"),
		.old_len = tbx_arg_str_len(args, "oldString"),
		.new_str = tbx_arg_str(args, "newString"),
		.new_len = tbx_arg_str_len(args, "newString"),
		.all = tbx_arg_bool(args, "replaceAll", false),
	};

	return tbx_edit_run(ctx, tbx_arg_str(args, "filePath"), &r, 1, false, out);
}

const struct tbx_tool_desc tbx_tool_edit = {
	.name = "edit",
	.description = edit_description,
	.parameters_json = edit_schema,
	.call = edit_call,
};
