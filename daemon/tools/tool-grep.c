/* SPDX-License-Identifier: MIT */
/*
 * grep: lines matching a regular expression, grouped by file, newest files
 * first. PCRE2 stands in for ripgrep's Rust regex syntax (\d, \w, (?i), lazy
 * quantifiers), so the sandbox needs no ripgrep.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "error.h"
#include "tools-priv.h"

/* Bigger files are skipped: reading them through a remote engine costs more
 * than any answer they could give. */
#define GREP_MAX_FILE (10u * 1024 * 1024)

static const char grep_description[] =
	"Search file contents in the sandbox with a regular expression.\n"
	"\n"
	"- Full regex syntax (\"log.*Error\", \"function\\\\s+\\\\w+\", \"(?i)todo\").\n"
	"- include filters files by glob, such as \"*.js\" or \"*.{ts,tsx}\".\n"
	"- Returns matching lines with their line numbers, grouped by file, most recently "
	"modified files first, at most 100 matches.\n"
	"- Binary files, files over 10 MB and .git are skipped.";

static const char grep_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"pattern\":{\"type\":\"string\",\"description\":\"The regex pattern to search for in "
	"file contents\"},"
	"\"path\":{\"type\":\"string\",\"description\":\"The directory to search in. Defaults to "
	"the current working directory.\"},"
	"\"include\":{\"type\":\"string\",\"description\":\"File pattern to include in the search "
	"(e.g. \\\"*.js\\\", \\\"*.{ts,tsx}\\\")\"}},"
	"\"required\":[\"pattern\"],\"additionalProperties\":false}";

struct grep_state {
	pcre2_code *re;
	pcre2_match_data *md;
	struct tbx_buf body;
	size_t total;
	size_t shown;
};

static int grep_compile(const char *pattern, struct grep_state *st)
{
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE offset;
	int err;

	st->re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
			       PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &offset, NULL);
	if (!st->re) {
		pcre2_get_error_message(err, msg, sizeof(msg));
		return tbx_error_set(TBX_EINVAL, "regex parse error: %s at offset %zu in '%s'",
				     (const char *)msg, (size_t)offset, pattern);
	}
	/* JIT is only speed; without it matching still works. */
	pcre2_jit_compile(st->re, PCRE2_JIT_COMPLETE);
	st->md = pcre2_match_data_create_from_pattern(st->re, NULL);
	if (!st->md)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	return 0;
}

static void grep_file(const struct tbx_tool_ctx *ctx, struct grep_state *st, const char *path)
{
	char *data = NULL;
	size_t len = 0, line_no = 0;
	bool named = false;

	if (tbx_engine_file_read(ctx->engine, ctx->cancel, ctx->sandbox_id, path, &data, &len) < 0) {
		/* Unreadable files are passed over, as rg --no-messages does. */
		tbx_error_clear();
		return;
	}
	if (memchr(data, '\0', len)) {
		free(data);
		return;
	}
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(data + pos, '\n', len - pos), *line = data + pos;
		size_t end = nl ? (size_t)(nl - data) : len, n = end - pos;

		line_no++;
		pos = end + 1;
		if (n > 0 && line[n - 1] == '\r')
			n--;
		if (pcre2_match(st->re, (PCRE2_SPTR)line, n, 0, 0, st->md, NULL) < 0)
			continue;
		st->total++;
		if (st->shown == TBX_TOOL_MAX_RESULTS)
			continue;
		if (!named) {
			tbx_buf_printf(&st->body, "%s%s:", st->shown ? "\n\n" : "\n", path);
			named = true;
		}
		tbx_buf_printf(&st->body, "\n  Line %zu: ", line_no);
		if (tbx_utf8_count(line, n) > TBX_TOOL_MAX_LINE_CHARS) {
			tbx_buf_add(&st->body, line, tbx_utf8_prefix(line, n, TBX_TOOL_MAX_LINE_CHARS));
			tbx_buf_adds(&st->body, "...");
		} else {
			tbx_buf_add(&st->body, line, n);
		}
		st->shown++;
	}
	free(data);
}

static int grep_call(const struct tbx_tool_ctx *ctx, struct json_object *args,
		     struct json_object **out)
{
	const char *pattern = tbx_arg_str(args, "pattern"), *include = tbx_arg_str(args, "include");
	char *root = tbx_path_resolve(ctx, tbx_arg_str(args, "path")), *text = NULL;
	struct grep_state st = {0};
	struct tbx_walk w = {0};
	struct json_object *meta;
	struct tbx_buf b;
	uint32_t type = 0;
	uint64_t size = 0;
	bool exists, truncated;
	int rc;

	if (!root)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	tbx_buf_init(&st.body);
	rc = grep_compile(pattern, &st);
	if (rc == 0)
		rc = tbx_tool_stat(ctx, root, &exists, &type, &size);
	if (rc < 0)
		goto cleanup;
	if (!exists) {
		rc = tbx_error_set(TBX_ENOENT, "No such file or directory: '%s'", root);
		goto cleanup;
	}
	if (type == TBX_FILE_DIRECTORY) {
		rc = tbx_walk_files(ctx, root, tbx_walk_skip_vcs, NULL, &w);
		if (rc < 0)
			goto cleanup;
		tbx_walk_sort_newest(&w);
		for (size_t i = 0; i < w.n; i++) {
			if (w.files[i].size > GREP_MAX_FILE ||
			    (include && !tbx_glob_match_rel(include, w.files[i].rel, false)))
				continue;
			grep_file(ctx, &st, w.files[i].path);
		}
	} else if (size <= GREP_MAX_FILE &&
		   (!include || tbx_glob_match_rel(include, tbx_path_base(root), false))) {
		grep_file(ctx, &st, root);
	}
	if (st.body.failed) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto cleanup;
	}
	truncated = st.total > st.shown;
	tbx_buf_init(&b);
	if (st.total == 0) {
		tbx_buf_adds(&b, "No files found");
	} else {
		tbx_buf_printf(&b, "Found %zu matches", st.total);
		if (truncated)
			tbx_buf_printf(&b, " (showing first %d)", TBX_TOOL_MAX_RESULTS);
		tbx_buf_add(&b, st.body.data, st.body.len);
		if (truncated)
			tbx_buf_printf(&b,
				       "\n\n(Results truncated: showing %d of %zu matches (%zu hidden). "
				       "Consider using a more specific path or pattern.)",
				       TBX_TOOL_MAX_RESULTS, st.total, st.total - st.shown);
	}
	text = tbx_buf_steal(&b);
	if (!text) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto cleanup;
	}
	meta = json_object_new_object();
	json_object_object_add(meta, "matches", json_object_new_int64((int64_t)st.total));
	json_object_object_add(meta, "truncated", json_object_new_boolean(truncated));
	rc = tbx_tool_result(out, pattern, text, meta);
cleanup:
	tbx_buf_free(&st.body);
	pcre2_match_data_free(st.md);
	pcre2_code_free(st.re);
	tbx_walk_free(&w);
	free(text);
	free(root);
	return rc;
}

const struct tbx_tool_desc tbx_tool_grep = {
	.name = "grep",
	.description = grep_description,
	.parameters_json = grep_schema,
	.call = grep_call,
};
