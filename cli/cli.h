/* SPDX-License-Identifier: MIT */
/* What the CLI's commands share: calling the daemon and printing results. */
#ifndef TBX_CLI_H
#define TBX_CLI_H

#include "client.h"

struct json_object;

#define CLI_OK 0
#define CLI_FAILED 1
#define CLI_USAGE 2

/* One call on a fresh connection (starting the daemon if needed). Prints failures. */
int cli_call(const char *method, struct json_object *params, tbx_client_progress_cb on_progress,
	     void *payload, struct json_object **result_out);
/* Print a usage error and return CLI_USAGE. */
int cli_usage_error(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print one JSON document on stdout. */
void cli_print_json(struct json_object *o);
/* Member as a string, or "-". */
const char *cli_str(struct json_object *o, const char *key);
/* Is argv[i] "--help"/"-h"? Then print usage and return 1. */
int cli_wants_help(int argc, char **argv, const char *usage);

int cmd_session(int argc, char **argv);
int cmd_tool(int argc, char **argv);
int cmd_sync(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_modules(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_daemon(int argc, char **argv);

#endif
