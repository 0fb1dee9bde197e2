/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the tool files: byte buffers, argument access, results,
 * path mapping, text handling, glob matching and the file walk. Internal to
 * daemon/tools; tests include it to reach the glob matcher directly.
 */
#ifndef TBX_TOOLS_PRIV_H
#define TBX_TOOLS_PRIV_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <twinbox/plugin.h>

#include "tools.h"

/* OpenCode's limits, shared by several tools. */
#define TBX_TOOL_MAX_LINES 2000          /* bash tail, read default limit */
#define TBX_TOOL_MAX_BYTES (50 * 1024)   /* bash tail, read cap */
#define TBX_TOOL_MAX_LINE_CHARS 2000     /* read and grep per-line cap */
#define TBX_TOOL_MAX_RESULTS 100         /* glob, grep, ls */

/* The tools, one per tool-<name>.c. */
extern const struct tbx_tool_desc tbx_tool_bash;
extern const struct tbx_tool_desc tbx_tool_read;
extern const struct tbx_tool_desc tbx_tool_write;
extern const struct tbx_tool_desc tbx_tool_edit;
extern const struct tbx_tool_desc tbx_tool_multiedit;
extern const struct tbx_tool_desc tbx_tool_ls;
extern const struct tbx_tool_desc tbx_tool_glob;
extern const struct tbx_tool_desc tbx_tool_grep;
extern const struct tbx_tool_desc tbx_tool_gitsync;

/* buf.c: a growable byte buffer, always NUL-terminated. A failed allocation
 * sets `failed` and later appends do nothing, so callers check once. */
struct tbx_buf {
	char *data;
	size_t len;
	size_t cap;
	bool failed;
};

void tbx_buf_init(struct tbx_buf *b);
void tbx_buf_add(struct tbx_buf *b, const void *data, size_t len);
void tbx_buf_adds(struct tbx_buf *b, const char *s);
void tbx_buf_printf(struct tbx_buf *b, const char *fmt, ...) TBX_PRINTF(2, 3);
/* Hand the contents over (never NULL unless allocation failed). */
char *tbx_buf_steal(struct tbx_buf *b);
void tbx_buf_free(struct tbx_buf *b);

/* args.c: checking arguments against a tool's JSON Schema, and reading them. */
int tbx_tool_args_check(const struct tbx_tool_desc *tool, struct json_object *args);
/* Values of already-checked arguments; absent ones give the default. */
const char *tbx_arg_str(struct json_object *args, const char *name);
size_t tbx_arg_str_len(struct json_object *args, const char *name);
int64_t tbx_arg_int(struct json_object *args, const char *name, int64_t dflt);
bool tbx_arg_has(struct json_object *args, const char *name);
bool tbx_arg_bool(struct json_object *args, const char *name, bool dflt);

/* result.c: {"title","output","metadata"}; takes ownership of metadata. */
int tbx_tool_result(struct json_object **out, const char *title, const char *output,
		    struct json_object *metadata);
/* A JSON string from bytes that may not be valid UTF-8. */
struct json_object *tbx_json_text(const char *s, size_t len);

/* path.c: where a tool's path argument lives in the sandbox. */
char *tbx_path_normalize(const char *path);
char *tbx_path_resolve(const struct tbx_tool_ctx *ctx, const char *path);
/* Path shown as a title: relative to the workdir when inside it. */
char *tbx_path_title(const struct tbx_tool_ctx *ctx, const char *abs);
/* The part of `path` below `root`, "" when equal, or NULL when outside. */
const char *tbx_path_below(const char *root, const char *path);
const char *tbx_path_base(const char *path);
char *tbx_path_dir(const char *path);
char *tbx_path_join(const char *dir, const char *name);

/* text.c */
/* OpenCode's test: a binary extension, a NUL byte, or >30% control bytes in
 * the first 4 KB. */
bool tbx_text_is_binary(const char *path, const char *data, size_t len);
/* Copy with invalid UTF-8 replaced by U+FFFD (what Node's decoder does). */
char *tbx_utf8_clean(const char *s, size_t len, size_t *len_out);
/* Bytes taken by the first `chars` code points of s (or len if fewer). */
size_t tbx_utf8_prefix(const char *s, size_t len, size_t chars);
size_t tbx_utf8_count(const char *s, size_t len);

/* Splits text into lines the way Node's readline does (\n, \r\n or a lone
 * \r end a line; a final terminator does not start another line). */
struct tbx_lines {
	const char *data;
	size_t len;
	size_t pos;
};

void tbx_lines_init(struct tbx_lines *it, const char *data, size_t len);
bool tbx_lines_next(struct tbx_lines *it, const char **line, size_t *line_len);

/* glob.c: ripgrep-style globs: *, **, ?, [...], {a,b}, \ escapes. */
enum tbx_glob_flags {
	TBX_GLOB_CASEFOLD = 1u << 0,
};

/* Does the whole of `path` match `pattern`? */
bool tbx_glob_match(const char *pattern, const char *path, unsigned flags);
/*
 * Does a path relative to the search root match a --glob the way ripgrep
 * (gitignore rules) applies it: a pattern without '/' matches the last
 * component at any depth; one with '/' (or a leading '/') is anchored at the
 * root. A trailing '/' restricts it to directories.
 */
bool tbx_glob_match_rel(const char *pattern, const char *rel, bool is_dir);

/* walk.c: every regular file below a directory, through one file_list op. */
struct tbx_walk_file {
	char *path; /* absolute in the sandbox */
	char *rel;  /* relative to the walk's root */
	uint64_t size;
	int64_t mtime;
};

struct tbx_walk {
	struct tbx_walk_file *files;
	size_t n;
};

/* Return true to leave out a directory (and all below it); rel is relative to the root. */
typedef bool (*tbx_walk_skip_fn)(const char *rel, const char *name, void *payload);

int tbx_walk_files(const struct tbx_tool_ctx *ctx, const char *root, tbx_walk_skip_fn skip,
		   void *payload, struct tbx_walk *out);
void tbx_walk_sort_newest(struct tbx_walk *w);
void tbx_walk_sort_path(struct tbx_walk *w);
void tbx_walk_free(struct tbx_walk *w);
/* The skip function glob and grep use: only .git, as ripgrep --hidden does. */
bool tbx_walk_skip_vcs(const char *rel, const char *name, void *payload);

/* replace.c: literal replacement shared by edit and multiedit. */
struct tbx_replace {
	const char *old_str;
	size_t old_len;
	const char *new_str;
	size_t new_len;
	bool all;
};

/*
 * Apply one replacement to `content`. On success *out is the new text and
 * *count the replacements made. Fails with OpenCode's texts (identical
 * strings, not found, several matches).
 */
int tbx_replace_apply(const char *content, size_t len, const struct tbx_replace *r, char **out,
		      size_t *out_len, size_t *count);
/* A unified diff of two texts, in the createTwoFilesPatch layout. */
char *tbx_diff_unified(const char *path, const char *a, size_t a_len, const char *b,
		       size_t b_len, size_t *added, size_t *removed);

/*
 * editing.c: apply edits in order, in memory, then write the file once; any
 * failure leaves the file untouched. `multi` names the failing edit by index.
 */
int tbx_edit_run(const struct tbx_tool_ctx *ctx, const char *file_arg,
		 const struct tbx_replace *edits, size_t n, bool multi, struct json_object **out);

/* Ask the engine about a path; 0 with *exists false when it is not there. */
int tbx_tool_stat(const struct tbx_tool_ctx *ctx, const char *path, bool *exists,
		  uint32_t *type, uint64_t *size);
/* TBX_ENOENT/TBX_ENOTDIR unless path is a directory. */
int tbx_tool_require_dir(const struct tbx_tool_ctx *ctx, const char *path);

#endif
