/* SPDX-License-Identifier: MIT */
/* twinbox: the command-line client of twinboxd. */
#include <json-c/json.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "error.h"

static const char usage_text[] =
	"Usage: twinbox COMMAND [ARGS...]\n"
	"\n"
	"Sandboxes for coding agents, with their work synced home and their vendor\n"
	"calls answered by twins.\n"
	"\n"
	"Commands:\n"
	"  demo                          the main job on the local engine, start to finish\n"
	"  session open [--engine E] [--no-twin] [--repo DIR] [--key K] [--json]\n"
	"  session list|show ID|close ID|delete ID [--json]\n"
	"  tool ID NAME [ARGS_JSON] [--json]\n"
	"                                run a tool (bash, read, write, edit, multiedit, ls,\n"
	"                                glob, grep, gitSync) in a session's sandbox\n"
	"  sync ID [--json]              bring the session's work home onto opencode/N\n"
	"  status [--json]               the daemon's state\n"
	"  modules [--json]              engines and frontends, loaded and refused\n"
	"  daemon stop                   stop the daemon gracefully\n"
	"\n"
	"Every command takes --help. Exit codes: 0 ok, 1 the operation failed, 2 usage.\n"
	"The daemon starts on first use; its socket is $XDG_RUNTIME_DIR/twinbox/twinbox.sock\n"
	"(or $TWINBOX_SOCKET).\n";

int cli_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	fputs("twinbox: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", usage);
	return CLI_USAGE;
}

int cli_wants_help(int argc, char **argv, const char *usage)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(usage, stdout);
			return 1;
		}
	}
	return 0;
}

void cli_print_json(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
}

const char *cli_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return "-";
	return json_object_get_string(v);
}

int cli_call(const char *method, struct json_object *params, tbx_client_progress_cb on_progress,
	     void *payload, struct json_object **result_out)
{
	struct tbx_client *c;
	int rc;

	*result_out = NULL;
	if (tbx_client_connect(1, &c) < 0) {
		fprintf(stderr, "twinbox: %s\n", tbx_error_message());
		return CLI_FAILED;
	}
	rc = tbx_client_call(c, method, params, on_progress, payload, result_out, NULL);
	tbx_client_close(c);
	if (rc < 0) {
		fprintf(stderr, "twinbox: %s\n", tbx_error_message());
		return CLI_FAILED;
	}
	return CLI_OK;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} commands[] = {
		{ "session", cmd_session }, { "tool", cmd_tool },     { "status", cmd_status },
		{ "modules", cmd_modules }, { "demo", cmd_demo },     { "daemon", cmd_daemon },
		{ "sync", cmd_sync },
	};

	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		return cli_usage_error(usage_text, "which command?");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(usage_text, stdout);
		return CLI_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("twinbox %s\n", TBX_VERSION);
		return CLI_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	return cli_usage_error(usage_text, "unknown command '%s'", argv[1]);
}
