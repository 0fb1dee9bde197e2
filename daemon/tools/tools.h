/* SPDX-License-Identifier: MIT */
/*
 * The sandbox tools (bash, read, write, edit, multiedit, ls, glob, grep),
 * computed in the core over engine ops so every engine behaves the same.
 * Parameters, defaults, limits and error texts follow OpenCode's built-ins.
 * gitSync, twinbox's own, brings the sandbox's work home (git/git-sync.h).
 */
#ifndef TBX_TOOLS_H
#define TBX_TOOLS_H

#include <stdatomic.h>
#include <stddef.h>

struct json_object;
struct tbx_engine;

/* Where a tool call runs. Borrowed for the duration of the call. */
struct tbx_tool_ctx {
	struct tbx_engine *engine;
	const char *sandbox_id;
	const char *workdir;    /* the sandbox's project directory (absolute) */
	const char *local_root; /* the local directory mapped onto workdir, or NULL */
	const atomic_int *cancel;
	/* Output as it streams (bash); may be NULL. stream is "stdout" or "stderr". */
	void (*on_progress)(void *payload, const char *stream, const char *data, size_t len);
	void *payload;
	/*
	 * gitSync's way to the session behind the call: bring the sandbox's
	 * work home, giving the summary text and its metadata. Set by sessions;
	 * NULL where no session stands behind the call (then gitSync says so).
	 */
	int (*git_sync)(void *sync_payload, const struct tbx_tool_ctx *ctx, const char *message,
			char **summary_out, struct json_object **metadata_out);
	void *sync_payload;
};

struct tbx_tool_desc {
	const char *name;
	const char *description;
	const char *parameters_json; /* JSON Schema of the arguments */
	int (*call)(const struct tbx_tool_ctx *ctx, struct json_object *args,
		    struct json_object **result_out);
};

/* NULL-terminated table of every tool. */
const struct tbx_tool_desc *const *tbx_tools_all(void);
const struct tbx_tool_desc *tbx_tool_find(const char *name);

/*
 * Run one tool. On success *result_out is {"title","output","metadata"}: output
 * is the text OpenCode's tool would give its model. On failure returns a
 * negative tbx_status with the message (OpenCode's text, e.g. "File not
 * found: /p") in the core's thread-local error. Unknown tools and arguments
 * of the wrong type are TBX_EINVAL with a message naming the parameter.
 */
int tbx_tool_call(const struct tbx_tool_ctx *ctx, const char *name, struct json_object *args,
		  struct json_object **result_out);

#endif
