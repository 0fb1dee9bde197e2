/* SPDX-License-Identifier: MIT */
/*
 * ls: a tree of up to 100 files below a directory, leaving out the build and
 * dependency directories OpenCode's list tool left out, plus the caller's
 * ignore globs.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "tools-priv.h"

static const char ls_description[] =
	"List files in the sandbox as a tree (up to 100 files).\n"
	"\n"
	"- path is absolute or relative to the project directory (default: the project "
	"directory).\n"
	"- Dependency, build and cache directories (node_modules, .git, dist, build, target, "
	"vendor, ...) are left out; ignore adds more glob patterns to leave out.\n"
	"- Prefer glob and grep when you know what you are looking for.";

static const char ls_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"path\":{\"type\":\"string\",\"description\":\"The absolute path to the directory to "
	"list (must be absolute, not relative)\"},"
	"\"ignore\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"List of "
	"glob patterns to ignore\"}},"
	"\"additionalProperties\":false}";

/* OpenCode ls.ts IGNORE_PATTERNS, as names left out at any depth. */
static const char *const ls_ignored[] = {
	"node_modules", "__pycache__", ".git", "dist", "build", "target", "vendor", "bin",
	"obj", ".idea", ".vscode", ".zig-cache", "zig-out", ".coverage", "coverage", "tmp",
	"temp", ".cache", "cache", "logs", ".venv", "venv", "env", NULL,
};

static bool ls_user_ignored(struct json_object *ignore, const char *rel, bool is_dir)
{
	for (size_t i = 0; ignore && i < json_object_array_length(ignore); i++) {
		const char *g = json_object_get_string(json_object_array_get_idx(ignore, i));
		if (g && tbx_glob_match_rel(g, rel, is_dir))
			return true;
	}
	return false;
}

static bool ls_name_ignored(const char *name)
{
	for (size_t i = 0; ls_ignored[i]; i++)
		if (strcmp(name, ls_ignored[i]) == 0)
			return true;
	return false;
}

static bool ls_skip(const char *rel, const char *name, void *payload)
{
	return ls_name_ignored(name) || ls_user_ignored(payload, rel, true);
}

/* The directory part of a relative path, "" at the root (borrowed into buf). */
static const char *parent_of(const char *rel, char *buf, size_t size)
{
	const char *slash = strrchr(rel, '/');
	size_t n = slash ? (size_t)(slash - rel) : 0;

	if (n >= size)
		n = size - 1;
	memcpy(buf, rel, n);
	buf[n] = '\0';
	return buf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct ls_tree {
	const char **files;
	size_t n_files;
	char **dirs;
	size_t n_dirs;
};

static void ls_render(struct tbx_buf *b, const struct ls_tree *t, const char *dir, size_t depth)
{
	char parent[4096];

	if (depth > 0)
		tbx_buf_printf(b, "%*s%s/\n", (int)(depth * 2), "", tbx_path_base(dir));
	for (size_t i = 0; i < t->n_dirs; i++)
		if (strcmp(parent_of(t->dirs[i], parent, sizeof(parent)), dir) == 0)
			ls_render(b, t, t->dirs[i], depth + 1);
	for (size_t i = 0; i < t->n_files; i++)
		if (strcmp(parent_of(t->files[i], parent, sizeof(parent)), dir) == 0)
			tbx_buf_printf(b, "%*s%s\n", (int)((depth + 1) * 2), "",
				       tbx_path_base(t->files[i]));
}

/* Add every ancestor directory of rel to the tree's set (kept unique later). */
static int ls_add_dirs(struct ls_tree *t, const char *rel, size_t *cap)
{
	for (const char *s = strchr(rel, '/'); s; s = strchr(s + 1, '/')) {
		if (t->n_dirs == *cap) {
			char **v = realloc(t->dirs, (*cap = *cap ? *cap * 2 : 16) * sizeof(*v));
			if (!v)
				return tbx_error_set(TBX_ENOMEM, "out of memory");
			t->dirs = v;
		}
		t->dirs[t->n_dirs] = strndup(rel, (size_t)(s - rel));
		if (!t->dirs[t->n_dirs])
			return tbx_error_set(TBX_ENOMEM, "out of memory");
		t->n_dirs++;
	}
	return 0;
}

static int ls_call(const struct tbx_tool_ctx *ctx, struct json_object *args,
		   struct json_object **out)
{
	struct json_object *ignore = NULL, *meta;
	char *root = tbx_path_resolve(ctx, tbx_arg_str(args, "path")), *title = NULL, *text = NULL;
	struct ls_tree t = {0};
	struct tbx_walk w = {0};
	struct tbx_buf b;
	size_t cap = 0, k = 0;
	int rc;

	if (!root)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	json_object_object_get_ex(args, "ignore", &ignore);
	rc = tbx_tool_require_dir(ctx, root);
	if (rc == 0)
		rc = tbx_walk_files(ctx, root, ls_skip, ignore, &w);
	if (rc < 0)
		goto cleanup;
	tbx_walk_sort_path(&w);
	t.files = calloc(TBX_TOOL_MAX_RESULTS, sizeof(*t.files));
	if (!t.files) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < w.n && t.n_files < TBX_TOOL_MAX_RESULTS; i++) {
		const char *rel = w.files[i].rel;

		if (ls_name_ignored(tbx_path_base(rel)) || ls_user_ignored(ignore, rel, false))
			continue;
		t.files[t.n_files++] = rel;
		rc = ls_add_dirs(&t, rel, &cap);
		if (rc < 0)
			goto cleanup;
	}
	if (t.n_dirs > 1)
		qsort(t.dirs, t.n_dirs, sizeof(*t.dirs), cmp_str);
	for (size_t i = 0; i < t.n_dirs; i++) {
		if (k > 0 && strcmp(t.dirs[k - 1], t.dirs[i]) == 0) {
			free(t.dirs[i]);
			continue;
		}
		t.dirs[k++] = t.dirs[i];
	}
	t.n_dirs = k;
	tbx_buf_init(&b);
	tbx_buf_printf(&b, "%s/\n", strcmp(root, "/") ? root : "");
	ls_render(&b, &t, "", 0);
	text = tbx_buf_steal(&b);
	if (!text) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto cleanup;
	}
	title = tbx_path_title(ctx, root);
	meta = json_object_new_object();
	json_object_object_add(meta, "count", json_object_new_int64((int64_t)t.n_files));
	json_object_object_add(meta, "truncated",
			       json_object_new_boolean(t.n_files >= TBX_TOOL_MAX_RESULTS));
	rc = tbx_tool_result(out, title, text, meta);
cleanup:
	for (size_t i = 0; i < t.n_dirs; i++)
		free(t.dirs[i]);
	free(t.dirs);
	free(t.files);
	tbx_walk_free(&w);
	free(text);
	free(title);
	free(root);
	return rc;
}

const struct tbx_tool_desc tbx_tool_ls = {
	.name = "ls",
	.description = ls_description,
	.parameters_json = ls_schema,
	.call = ls_call,
};
