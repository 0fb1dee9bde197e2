/* SPDX-License-Identifier: MIT */
/* `twinbox tool ID NAME [ARGS_JSON]`: run one tool in a session's sandbox. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char usage_text[] =
	"Usage: twinbox tool ID NAME [ARGS_JSON] [--json]\n"
	"\n"
	"Run tool NAME in session ID's sandbox. ARGS_JSON is a JSON object using the\n"
	"tool's parameter names, e.g.\n"
	"  twinbox tool ses_x bash '{\"command\":\"ls -la\"}'\n"
	"  twinbox tool ses_x read '{\"filePath\":\"README.md\",\"limit\":20}'\n"
	"Tools: bash, read, write, edit, multiedit, ls, glob, grep, gitSync.\n"
	"Prints the tool's output (bash output streams as it runs); --json prints the\n"
	"whole result {title, output, metadata} instead.\n";

struct stream_state {
	int streamed;
};

static void on_progress(struct json_object *params, void *payload)
{
	struct stream_state *st = payload;
	const char *stream = cli_str(params, "stream");
	struct json_object *data;

	if (!json_object_object_get_ex(params, "data", &data))
		return;
	if (strcmp(stream, "stdout") != 0 && strcmp(stream, "stderr") != 0) {
		/* Other streams (gitSync's "sync") are progress, for a person watching. */
		if (isatty(STDERR_FILENO)) {
			fwrite(json_object_get_string(data), 1,
			       (size_t)json_object_get_string_len(data), stderr);
			fflush(stderr);
		}
		return;
	}
	FILE *out = strcmp(stream, "stderr") == 0 ? stderr : stdout;
	fwrite(json_object_get_string(data), 1, (size_t)json_object_get_string_len(data), out);
	fflush(out);
	st->streamed = 1;
}

int cmd_tool(int argc, char **argv)
{
	struct json_object *params, *args = NULL, *result, *meta, *v;
	const char *positional[3] = { 0 };
	struct stream_state st = { 0 };
	int n = 0, json = 0, rc;

	if (cli_wants_help(argc, argv, usage_text))
		return CLI_OK;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (n < 3)
			positional[n++] = argv[i];
		else
			return cli_usage_error(usage_text, "unexpected argument '%s'", argv[i]);
	}
	if (n < 2)
		return cli_usage_error(usage_text, "tool needs a session ID and a tool NAME");
	if (positional[2]) {
		enum json_tokener_error err;
		args = json_tokener_parse_verbose(positional[2], &err);
		if (!args || !json_object_is_type(args, json_type_object)) {
			json_object_put(args);
			return cli_usage_error(usage_text, "ARGS_JSON must be a JSON object (%s)",
					       args ? "got another JSON type" : json_tokener_error_desc(err));
		}
	}
	params = json_object_new_object();
	json_object_object_add(params, "session", json_object_new_string(positional[0]));
	json_object_object_add(params, "name", json_object_new_string(positional[1]));
	json_object_object_add(params, "args", args ? args : json_object_new_object());
	rc = cli_call("tool.call", params, json ? NULL : on_progress, &st, &result);
	json_object_put(params);
	if (rc != CLI_OK)
		return rc;
	if (json) {
		cli_print_json(result);
	} else {
		/* Streamed bash output was already shown; print the text otherwise. */
		if (!st.streamed && json_object_object_get_ex(result, "output", &v)) {
			const char *text = json_object_get_string(v);
			size_t len = strlen(text);
			fwrite(text, 1, len, stdout);
			if (len && text[len - 1] != '\n')
				putchar('\n');
		}
		if (json_object_object_get_ex(result, "metadata", &meta) &&
		    json_object_object_get_ex(meta, "exit", &v) && json_object_get_int(v) != 0)
			fprintf(stderr, "(exit %d)\n", json_object_get_int(v));
		/* Said once by the session, e.g. that uncommitted changes stayed behind. */
		if (json_object_object_get_ex(result, "notice", &v) && v)
			fprintf(stderr, "twinbox: note: %s\n", json_object_get_string(v));
	}
	json_object_put(result);
	return CLI_OK;
}
