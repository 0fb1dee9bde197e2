/* SPDX-License-Identifier: MIT */
/* read: a file as numbered lines, or a directory's entries, in OpenCode's layout. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine.h"
#include "error.h"
#include "tools-priv.h"

#define READ_SUGGESTIONS 3
#define READ_PREVIEW_LINES 20

static const char read_description[] =
	"Read a file or directory in the sandbox.\n"
	"\n"
	"- filePath is absolute or relative to the project directory; paths under your local "
	"project map into the sandbox.\n"
	"- Returns up to 2000 lines from offset (1-indexed), each as `N: text`; lines longer "
	"than 2000 characters are cut, and output stops at 50 KB. Use offset and limit to page "
	"through long files.\n"
	"- For a directory, returns its entries sorted, with a trailing / on subdirectories.\n"
	"- Binary files are refused.";

static const char read_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"filePath\":{\"type\":\"string\",\"description\":\"The absolute path to the file or "
	"directory to read\"},"
	"\"offset\":{\"type\":\"integer\",\"description\":\"The line number to start reading "
	"from (1-indexed)\"},"
	"\"limit\":{\"type\":\"integer\",\"description\":\"The maximum number of lines to read "
	"(defaults to 2000)\"}},"
	"\"required\":[\"filePath\"],\"additionalProperties\":false}";

/* Case-insensitive "contains", for OpenCode's "Did you mean" test. */
static bool icontains(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return true;
	return n == 0;
}

static int cmp_names(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	int c = strcasecmp(x, y);

	/* Close to String.localeCompare for file names: case only breaks ties. */
	return c ? c : strcmp(x, y);
}

/* Names in a directory, sorted; directories get a trailing '/' when mark_dirs. */
static int list_names(const struct tbx_tool_ctx *ctx, const char *dir, bool mark_dirs,
		      char ***names_out, size_t *n_out)
{
	struct tbx_file_info *infos = NULL;
	size_t n = 0;
	char **names;
	int rc;

	rc = tbx_engine_file_list(ctx->engine, ctx->cancel, ctx->sandbox_id, dir, 1, &infos, &n);
	if (rc < 0)
		return rc;
	names = calloc(n + 1, sizeof(*names));
	if (!names) {
		tbx_file_infos_free(infos, n);
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const char *name = infos[i].name ? infos[i].name : tbx_path_base(infos[i].path);
		bool dir_mark = mark_dirs && infos[i].type == TBX_FILE_DIRECTORY;
		struct tbx_buf b;

		tbx_buf_init(&b);
		tbx_buf_printf(&b, "%s%s", name, dir_mark ? "/" : "");
		names[i] = tbx_buf_steal(&b);
	}
	tbx_file_infos_free(infos, n);
	qsort(names, n, sizeof(*names), cmp_names);
	*names_out = names;
	*n_out = n;
	return 0;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int read_missing(const struct tbx_tool_ctx *ctx, const char *path)
{
	char *dir = tbx_path_dir(path), **names = NULL;
	const char *base = tbx_path_base(path);
	struct tbx_buf b;
	size_t n = 0, shown = 0;
	int rc;

	tbx_buf_init(&b);
	tbx_buf_printf(&b, "File not found: %s", path);
	if (dir && list_names(ctx, dir, false, &names, &n) == 0) {
		for (size_t i = 0; i < n && shown < READ_SUGGESTIONS; i++) {
			if (!names[i] || !(icontains(names[i], base) || icontains(base, names[i])))
				continue;
			tbx_buf_printf(&b, "%s%s%s%s", shown ? "\n" : "\n\nDid you mean one of these?\n",
				       dir, strcmp(dir, "/") ? "/" : "", names[i]);
			shown++;
		}
		free_names(names, n);
	}
	rc = tbx_error_set(TBX_ENOENT, "%s", b.failed ? "File not found" : b.data);
	tbx_buf_free(&b);
	free(dir);
	return rc;
}

static int read_directory(const struct tbx_tool_ctx *ctx, const char *path, const char *title,
			  int64_t offset, int64_t limit, struct json_object **out)
{
	char **names = NULL, *text;
	size_t n = 0, start = (size_t)(offset - 1), end;
	struct tbx_buf b, preview;
	struct json_object *meta;
	bool truncated;
	int rc;

	rc = list_names(ctx, path, true, &names, &n);
	if (rc < 0)
		return rc;
	if (start > n)
		start = n;
	end = limit < 0 || (uint64_t)limit > n - start ? n : start + (size_t)limit;
	truncated = end < n;
	tbx_buf_init(&b);
	tbx_buf_init(&preview);
	tbx_buf_printf(&b, "<path>%s</path>\n<type>directory</type>\n<entries>\n", path);
	for (size_t i = start; i < end; i++) {
		tbx_buf_printf(&b, "%s%s", i > start ? "\n" : "", names[i]);
		if (i - start < READ_PREVIEW_LINES)
			tbx_buf_printf(&preview, "%s%s", i > start ? "\n" : "", names[i]);
	}
	if (truncated)
		tbx_buf_printf(&b,
			       "\n\n(Showing %zu of %zu entries. Use 'offset' parameter to read "
			       "beyond entry %zu)",
			       end - start, n, (size_t)offset + (end - start));
	else
		tbx_buf_printf(&b, "\n\n(%zu entries)", n);
	tbx_buf_adds(&b, "\n</entries>");
	free_names(names, n);
	meta = json_object_new_object();
	json_object_object_add(meta, "preview", tbx_json_text(preview.data ? preview.data : "", preview.len));
	json_object_object_add(meta, "truncated", json_object_new_boolean(truncated));
	tbx_buf_free(&preview);
	text = tbx_buf_steal(&b);
	if (!text) {
		json_object_put(meta);
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	}
	rc = tbx_tool_result(out, title, text, meta);
	free(text);
	return rc;
}

static int read_file(const struct tbx_tool_ctx *ctx, const char *path, const char *title,
		     int64_t offset, int64_t limit, struct json_object **out)
{
	struct tbx_buf b, preview;
	struct tbx_lines it;
	struct json_object *meta;
	const char *line;
	size_t len = 0, line_len, count = 0, shown = 0, bytes = 0;
	bool more = false, cut = false;
	char *data = NULL, *text;
	int rc;

	rc = tbx_engine_file_read(ctx->engine, ctx->cancel, ctx->sandbox_id, path, &data, &len);
	if (rc < 0)
		return rc;
	if (tbx_text_is_binary(path, data, len)) {
		free(data);
		return tbx_error_set(TBX_EINVAL, "Cannot read binary file: %s", path);
	}
	tbx_buf_init(&b);
	tbx_buf_init(&preview);
	tbx_buf_printf(&b, "<path>%s</path>\n<type>file</type>\n<content>\n", path);
	tbx_lines_init(&it, data, len);
	while (tbx_lines_next(&it, &line, &line_len)) {
		size_t keep = line_len, size;
		bool long_line;

		count++;
		if ((int64_t)count < offset)
			continue;
		if ((int64_t)shown >= limit) {
			more = true;
			continue;
		}
		long_line = tbx_utf8_count(line, line_len) > TBX_TOOL_MAX_LINE_CHARS;
		if (long_line)
			keep = tbx_utf8_prefix(line, line_len, TBX_TOOL_MAX_LINE_CHARS);
		size = keep + (long_line ? strlen("... (line truncated to 2000 chars)") : 0) +
		       (shown > 0 ? 1 : 0);
		if (bytes + size > TBX_TOOL_MAX_BYTES) {
			cut = more = true;
			break;
		}
		tbx_buf_printf(&b, "%s%zu: ", shown > 0 ? "\n" : "", count);
		tbx_buf_add(&b, line, keep);
		if (long_line)
			tbx_buf_adds(&b, "... (line truncated to 2000 chars)");
		if (shown < READ_PREVIEW_LINES) {
			tbx_buf_adds(&preview, shown > 0 ? "\n" : "");
			tbx_buf_add(&preview, line, keep);
		}
		bytes += size;
		shown++;
	}
	free(data);
	if ((int64_t)count < offset && !(count == 0 && offset == 1)) {
		tbx_buf_free(&b);
		tbx_buf_free(&preview);
		return tbx_error_set(TBX_EINVAL, "Offset %lld is out of range for this file (%zu lines)",
				     (long long)offset, count);
	}
	if (cut)
		tbx_buf_printf(&b,
			       "\n\n(Output capped at 50 KB. Showing lines %lld-%lld. Use offset=%lld "
			       "to continue.)",
			       (long long)offset, (long long)offset + (long long)shown - 1,
			       (long long)offset + (long long)shown);
	else if (more)
		tbx_buf_printf(&b, "\n\n(Showing lines %lld-%lld of %zu. Use offset=%lld to continue.)",
			       (long long)offset, (long long)offset + (long long)shown - 1, count,
			       (long long)offset + (long long)shown);
	else
		tbx_buf_printf(&b, "\n\n(End of file - total %zu lines)", count);
	tbx_buf_adds(&b, "\n</content>");
	meta = json_object_new_object();
	json_object_object_add(meta, "preview", tbx_json_text(preview.data ? preview.data : "", preview.len));
	json_object_object_add(meta, "truncated", json_object_new_boolean(more || cut));
	tbx_buf_free(&preview);
	text = tbx_buf_steal(&b);
	if (!text) {
		json_object_put(meta);
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	}
	rc = tbx_tool_result(out, title, text, meta);
	free(text);
	return rc;
}

static int read_call(const struct tbx_tool_ctx *ctx, struct json_object *args,
		     struct json_object **out)
{
	int64_t offset = tbx_arg_int(args, "offset", 1);
	int64_t limit = tbx_arg_int(args, "limit", TBX_TOOL_MAX_LINES);
	char *path, *title;
	uint32_t type = 0;
	bool exists;
	int rc;

	if (offset < 1)
		return tbx_error_set(TBX_EINVAL, "offset must be greater than or equal to 1");
	path = tbx_path_resolve(ctx, tbx_arg_str(args, "filePath"));
	if (!path)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	title = tbx_path_title(ctx, path);
	rc = tbx_tool_stat(ctx, path, &exists, &type, NULL);
	if (rc == 0 && !exists)
		rc = read_missing(ctx, path);
	else if (rc == 0 && type == TBX_FILE_DIRECTORY)
		rc = read_directory(ctx, path, title, offset, limit, out);
	else if (rc == 0)
		rc = read_file(ctx, path, title, offset, limit, out);
	free(title);
	free(path);
	return rc;
}

const struct tbx_tool_desc tbx_tool_read = {
	.name = "read",
	.description = read_description,
	.parameters_json = read_schema,
	.call = read_call,
};
