/* SPDX-License-Identifier: MIT */
/*
 * bash: run a shell command in the sandbox, streaming its output, and give the
 * model what OpenCode's shell tool gives: stdout and stderr interleaved, the
 * tail when long (the whole saved in the sandbox), notes on timeout or abort,
 * and the exit code only in metadata.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "error.h"
#include "tools-priv.h"

#define BASH_DEFAULT_TIMEOUT_MS 120000
#define BASH_MAX_TIMEOUT_MS 600000
#define BASH_MAX_METADATA 30000

static const char bash_description[] =
	"Run a shell command in the sandbox with /bin/sh, in the project directory (or "
	"workdir).\n"
	"\n"
	"- stdout and stderr come back together, in the order they were written. The exit "
	"code is reported separately.\n"
	"- timeout is in milliseconds: default 120000 (2 minutes), at most 600000.\n"
	"- Long output is cut to its last 2000 lines or 50 KB; the full output is saved to a "
	"file in the sandbox whose path is given.\n"
	"- Prefer the read, glob, grep and edit tools to cat, find, grep and sed.";

static const char bash_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"command\":{\"type\":\"string\",\"description\":\"The command to execute\"},"
	"\"timeout\":{\"type\":\"integer\",\"description\":\"Optional timeout in milliseconds\"},"
	"\"workdir\":{\"type\":\"string\",\"description\":\"The working directory to run the "
	"command in. Defaults to the project directory. Use this instead of 'cd' commands.\"},"
	"\"description\":{\"type\":\"string\",\"description\":\"Clear, concise description of "
	"what this command does in 5-10 words.\"}},"
	"\"required\":[\"command\"],\"additionalProperties\":false}";

struct bash_run {
	const struct tbx_tool_ctx *ctx;
	struct tbx_buf output;
};

static int bash_on_output(enum tbx_exec_stream stream, const char *data, size_t len,
			  void *payload)
{
	struct bash_run *run = payload;
	const struct tbx_tool_ctx *ctx = run->ctx;

	tbx_buf_add(&run->output, data, len);
	if (ctx->on_progress)
		ctx->on_progress(ctx->payload, stream == TBX_STREAM_STDERR ? "stderr" : "stdout",
				 data, len);
	return ctx->cancel && atomic_load(ctx->cancel) ? 1 : 0;
}

/*
 * The last TBX_TOOL_MAX_LINES lines within TBX_TOOL_MAX_BYTES, as OpenCode's
 * tail(): a single line longer than the cap keeps its end, cut at a UTF-8
 * boundary. Returns the offset where the kept tail starts.
 */
static size_t bash_tail(const char *s, size_t len, bool *cut)
{
	size_t lines = 1, bytes = 0, kept = 0, end = len;

	for (size_t i = 0; i < len; i++)
		if (s[i] == '\n')
			lines++;
	*cut = lines > TBX_TOOL_MAX_LINES || len > TBX_TOOL_MAX_BYTES;
	if (!*cut)
		return 0;
	for (;;) {
		size_t start = end, size;

		while (start > 0 && s[start - 1] != '\n')
			start--;
		size = (end - start) + (kept > 0 ? 1 : 0);
		if (bytes + size > TBX_TOOL_MAX_BYTES) {
			if (kept == 0) {
				size_t from = end - TBX_TOOL_MAX_BYTES;
				while (from < end && ((unsigned char)s[from] & 0xc0) == 0x80)
					from++;
				return from;
			}
			return end + 1;
		}
		bytes += size;
		kept++;
		if (kept == TBX_TOOL_MAX_LINES || start == 0)
			return start;
		end = start - 1;
	}
}

/* Save the whole output where the model can read it: the sandbox's /tmp. */
static char *bash_save(const struct tbx_tool_ctx *ctx, const char *data, size_t len)
{
	static atomic_uint counter;
	struct timespec ts;
	struct tbx_buf path;
	char *p;

	clock_gettime(CLOCK_REALTIME, &ts);
	tbx_buf_init(&path);
	tbx_buf_printf(&path, "/tmp/twinbox-bash-%lld%03ld-%u.log", (long long)ts.tv_sec,
		       ts.tv_nsec / 1000000, atomic_fetch_add(&counter, 1) + 1);
	p = tbx_buf_steal(&path);
	if (p && tbx_engine_file_write(ctx->engine, ctx->cancel, ctx->sandbox_id, p, data, len) < 0) {
		tbx_error_clear();
		free(p);
		p = NULL;
	}
	return p;
}

static int bash_call(const struct tbx_tool_ctx *ctx, struct json_object *args,
		     struct json_object **out)
{
	struct tbx_exec_request req = TBX_EXEC_REQUEST_INIT;
	struct tbx_exec_result res = {.struct_size = sizeof(res), .abi_minor = TBX_ABI_MINOR};
	struct bash_run run = {.ctx = ctx};
	const char *command = tbx_arg_str(args, "command");
	const char *description = tbx_arg_str(args, "description");
	int64_t timeout = tbx_arg_int(args, "timeout", BASH_DEFAULT_TIMEOUT_MS);
	char *cwd = NULL, *saved = NULL, *text = NULL;
	struct json_object *meta;
	struct tbx_buf o;
	bool cut = false, timed_out, aborted;
	size_t from;
	int rc;

	if (timeout < 0)
		return tbx_error_set(TBX_EINVAL,
				     "Invalid timeout value: %lld. Timeout must be a positive number.",
				     (long long)timeout);
	if (timeout == 0 || timeout > BASH_MAX_TIMEOUT_MS)
		timeout = timeout == 0 ? BASH_DEFAULT_TIMEOUT_MS : BASH_MAX_TIMEOUT_MS;
	cwd = tbx_path_resolve(ctx, tbx_arg_str(args, "workdir"));
	if (!cwd)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	tbx_buf_init(&run.output);
	req.command = command;
	req.cwd = cwd;
	req.timeout_ms = (uint32_t)timeout;
	rc = tbx_engine_exec(ctx->engine, ctx->cancel, ctx->sandbox_id, &req, bash_on_output, &run,
			     &res);
	/* An engine may report a cut-short command as a failure; the model still
	 * gets what the command printed, as OpenCode gives it. */
	if (rc == TBX_ETIMEDOUT || rc == TBX_ECANCELED) {
		res.timed_out = rc == TBX_ETIMEDOUT;
		res.cancelled = rc == TBX_ECANCELED;
		res.exit_code = -1;
		tbx_error_clear();
		rc = 0;
	}
	if (rc < 0)
		goto cleanup;
	if (run.output.failed) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto cleanup;
	}
	timed_out = res.timed_out;
	aborted = res.cancelled || (ctx->cancel && atomic_load(ctx->cancel) && !timed_out);

	from = bash_tail(run.output.data ? run.output.data : "", run.output.len, &cut);
	if (cut)
		saved = bash_save(ctx, run.output.data, run.output.len);
	tbx_buf_init(&o);
	if (cut)
		tbx_buf_printf(&o, "...output truncated...\n\n%s%s%s", saved ? "Full output saved to: " : "",
			       saved ? saved : "", saved ? "\n\n" : "");
	if (run.output.len - from == 0)
		tbx_buf_adds(&o, "(no output)");
	else
		tbx_buf_add(&o, run.output.data + from, run.output.len - from);
	if (timed_out || aborted) {
		tbx_buf_adds(&o, "\n\n<shell_metadata>\n");
		if (timed_out)
			tbx_buf_printf(&o,
				       "shell tool terminated command after exceeding timeout %lld ms. "
				       "If this command is expected to take longer and is not waiting "
				       "for interactive input, retry with a larger timeout value in "
				       "milliseconds.",
				       (long long)timeout);
		if (aborted)
			tbx_buf_printf(&o, "%sUser aborted the command", timed_out ? "\n" : "");
		tbx_buf_adds(&o, "\n</shell_metadata>");
	}
	text = tbx_buf_steal(&o);
	if (!text) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto cleanup;
	}
	meta = json_object_new_object();
	{
		/* OpenCode keeps the last 30 000 characters of the text in metadata. */
		size_t tl = strlen(text), keep = tbx_utf8_count(text, tl);
		if (keep <= BASH_MAX_METADATA) {
			json_object_object_add(meta, "output", tbx_json_text(text, tl));
		} else {
			size_t skip = tbx_utf8_prefix(text, tl, keep - BASH_MAX_METADATA);
			struct tbx_buf m;
			tbx_buf_init(&m);
			tbx_buf_adds(&m, "...\n\n");
			tbx_buf_add(&m, text + skip, tl - skip);
			json_object_object_add(meta, "output", tbx_json_text(m.data ? m.data : "", m.len));
			tbx_buf_free(&m);
		}
	}
	/* null when a signal, the timeout or an abort ended it, as OpenCode reports. */
	json_object_object_add(meta, "exit",
			       res.signal || timed_out || aborted || res.exit_code < 0
				       ? NULL
				       : json_object_new_int(res.exit_code));
	json_object_object_add(meta, "truncated", json_object_new_boolean(cut));
	if (saved)
		json_object_object_add(meta, "outputPath", json_object_new_string(saved));
	if (description)
		json_object_object_add(meta, "description", json_object_new_string(description));
	rc = tbx_tool_result(out, description ? description : command, text, meta);
cleanup:
	tbx_buf_free(&run.output);
	free(text);
	free(saved);
	free(cwd);
	return rc;
}

const struct tbx_tool_desc tbx_tool_bash = {
	.name = "bash",
	.description = bash_description,
	.parameters_json = bash_schema,
	.call = bash_call,
};
