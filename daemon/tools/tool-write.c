/* SPDX-License-Identifier: MIT */
/* write: create or replace a file; reports the UTF-8 bytes written. */
#include <stdlib.h>

#include "engine.h"
#include "error.h"
#include "tools-priv.h"

static const char write_description[] =
	"Write a file in the sandbox, replacing it if it exists and creating parent "
	"directories.\n"
	"\n"
	"- filePath is absolute or relative to the project directory; paths under your local "
	"project map into the sandbox.\n"
	"- Prefer edit for changing part of an existing file.";

static const char write_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"content\":{\"type\":\"string\",\"description\":\"The content to write to the file\"},"
	"\"filePath\":{\"type\":\"string\",\"description\":\"The absolute path to the file to "
	"write (must be absolute, not relative)\"}},"
	"\"required\":[\"content\",\"filePath\"],\"additionalProperties\":false}";

static int write_call(const struct tbx_tool_ctx *ctx, struct json_object *args,
		      struct json_object **out)
{
	const char *content = tbx_arg_str(args, "content");
	size_t len = tbx_arg_str_len(args, "content");
	char *path = tbx_path_resolve(ctx, tbx_arg_str(args, "filePath")), *title = NULL;
	struct json_object *meta;
	uint32_t type = 0;
	bool exists;
	int rc;

	if (!path)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	rc = tbx_tool_stat(ctx, path, &exists, &type, NULL);
	if (rc < 0)
		goto cleanup;
	if (exists && type == TBX_FILE_DIRECTORY) {
		rc = tbx_error_set(TBX_EISDIR, "Path is a directory, not a file: %s", path);
		goto cleanup;
	}
	rc = tbx_engine_file_write(ctx->engine, ctx->cancel, ctx->sandbox_id, path, content, len);
	if (rc < 0)
		goto cleanup;
	title = tbx_path_title(ctx, path);
	meta = json_object_new_object();
	json_object_object_add(meta, "filepath", json_object_new_string(path));
	json_object_object_add(meta, "exists", json_object_new_boolean(exists));
	/* Bytes as stored (UTF-8), not JavaScript's UTF-16 string length. */
	json_object_object_add(meta, "bytes", json_object_new_int64((int64_t)len));
	rc = tbx_tool_result(out, title, "Wrote file successfully.", meta);
cleanup:
	free(title);
	free(path);
	return rc;
}

const struct tbx_tool_desc tbx_tool_write = {
	.name = "write",
	.description = write_description,
	.parameters_json = write_schema,
	.call = write_call,
};
