/* SPDX-License-Identifier: MIT */
/* The tool table and tbx_tool_call(): find the tool, check its arguments, run it. */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "error.h"
#include "tools-priv.h"

static const struct tbx_tool_desc *const all_tools[] = {
	&tbx_tool_bash, &tbx_tool_read, &tbx_tool_write,   &tbx_tool_edit, &tbx_tool_multiedit,
	&tbx_tool_ls,   &tbx_tool_glob, &tbx_tool_grep,    &tbx_tool_gitsync, NULL,
};

const struct tbx_tool_desc *const *tbx_tools_all(void)
{
	return all_tools;
}

const struct tbx_tool_desc *tbx_tool_find(const char *name)
{
	for (size_t i = 0; name && all_tools[i]; i++)
		if (strcmp(all_tools[i]->name, name) == 0)
			return all_tools[i];
	return NULL;
}

int tbx_tool_call(const struct tbx_tool_ctx *ctx, const char *name, struct json_object *args,
		  struct json_object **result_out)
{
	const struct tbx_tool_desc *tool = tbx_tool_find(name);
	struct json_object *empty = NULL;
	int rc;

	*result_out = NULL;
	tbx_error_clear();
	if (!tool) {
		struct tbx_buf names;
		char *list;

		tbx_buf_init(&names);
		for (size_t i = 0; all_tools[i]; i++)
			tbx_buf_printf(&names, "%s%s", i ? ", " : "", all_tools[i]->name);
		list = tbx_buf_steal(&names);
		rc = tbx_error_set(TBX_EINVAL, "unknown tool '%s'; tools are: %s", name ? name : "",
				   list ? list : "?");
		free(list);
		return rc;
	}
	if (!args)
		args = empty = json_object_new_object();
	rc = tbx_tool_args_check(tool, args);
	if (rc == 0)
		rc = tool->call(ctx, args, result_out);
	json_object_put(empty);
	if (rc < 0) {
		json_object_put(*result_out);
		*result_out = NULL;
		return rc;
	}
	return 0;
}

int tbx_tool_stat(const struct tbx_tool_ctx *ctx, const char *path, bool *exists, uint32_t *type,
		  uint64_t *size)
{
	struct tbx_file_info info;
	int rc;

	tbx_file_info_init(&info);
	*exists = false;
	rc = tbx_engine_file_stat(ctx->engine, ctx->cancel, ctx->sandbox_id, path, &info);
	if (rc == TBX_ENOENT || rc == TBX_ENOTDIR) {
		tbx_file_info_clear(&info);
		tbx_error_clear();
		return 0;
	}
	if (rc < 0) {
		tbx_file_info_clear(&info);
		return rc;
	}
	*exists = true;
	if (type)
		*type = info.type;
	if (size)
		*size = info.size;
	tbx_file_info_clear(&info);
	return 0;
}

int tbx_tool_require_dir(const struct tbx_tool_ctx *ctx, const char *path)
{
	uint32_t type = 0;
	bool exists;
	int rc = tbx_tool_stat(ctx, path, &exists, &type, NULL);

	if (rc < 0)
		return rc;
	/* The texts OpenCode's ripgrep wrapper gives for a bad search directory. */
	if (!exists)
		return tbx_error_set(TBX_ENOENT, "No such file or directory: '%s'", path);
	if (type != TBX_FILE_DIRECTORY)
		return tbx_error_set(TBX_ENOTDIR, "Path is not a directory: '%s'", path);
	return 0;
}
