/* SPDX-License-Identifier: MIT */
/* `twinbox status`, `twinbox modules` and `twinbox daemon stop`. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "error.h"

static const char status_usage[] = "Usage: twinbox status [--json]\n\nThe daemon's state.\n";
static const char modules_usage[] =
	"Usage: twinbox modules [--json]\n\nEngines and frontends the daemon loaded, and modules it refused with the reason.\n";
static const char daemon_usage[] =
	"Usage: twinbox daemon stop\n\nStop the daemon: in-flight calls finish or are cancelled, the store is closed.\nSandboxes are kept.\n";

/* Parse [--json] only. Returns -1 on a usage error (already printed). */
static int only_json_flag(int argc, char **argv, const char *usage)
{
	int json = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else
			return cli_usage_error(usage, "unexpected argument '%s'", argv[i]), -1;
	}
	return json;
}

int cmd_status(int argc, char **argv)
{
	struct json_object *r, *twin;
	int json, rc;

	if (cli_wants_help(argc, argv, status_usage))
		return CLI_OK;
	if ((json = only_json_flag(argc, argv, status_usage)) < 0)
		return CLI_USAGE;
	if ((rc = cli_call("daemon.status", NULL, NULL, NULL, &r)) != CLI_OK)
		return rc;
	if (json) {
		cli_print_json(r);
	} else {
		printf("twinboxd %s, pid %s, up %s ms\n", cli_str(r, "version"), cli_str(r, "pid"),
		       cli_str(r, "uptime_ms"));
		printf("socket          %s\n", cli_str(r, "socket"));
		printf("database        %s (schema %s)\n", cli_str(r, "database"),
		       cli_str(r, "schema_version"));
		printf("default engine  %s\n", cli_str(r, "default_engine"));
		printf("sessions        %s\n", cli_str(r, "sessions"));
		printf("modules         %s\n", cli_str(r, "modules"));
		printf("clients         %s\n", cli_str(r, "clients"));
		if (json_object_object_get_ex(r, "twin", &twin) && twin) {
			printf("twin            %s at %s, %s%s%s\n", cli_str(twin, "mode"),
			       cli_str(twin, "base"),
			       json_object_get_boolean(json_object_object_get(twin, "healthy"))
				       ? "healthy" : "not healthy",
			       json_object_object_get(twin, "error") ? ": " : "",
			       json_object_object_get(twin, "error") ? cli_str(twin, "error") : "");
		}
	}
	json_object_put(r);
	return CLI_OK;
}

int cmd_modules(int argc, char **argv)
{
	struct json_object *r, *list;
	int json, rc;

	if (cli_wants_help(argc, argv, modules_usage))
		return CLI_OK;
	if ((json = only_json_flag(argc, argv, modules_usage)) < 0)
		return CLI_USAGE;
	if ((rc = cli_call("modules.list", NULL, NULL, NULL, &r)) != CLI_OK)
		return rc;
	if (json) {
		cli_print_json(r);
	} else {
		if (json_object_object_get_ex(r, "modules", &list)) {
			for (size_t i = 0; i < json_object_array_length(list); i++) {
				struct json_object *m = json_object_array_get_idx(list, i);
				printf("%-9s %-12s %-8s ABI %-5s %s\n", cli_str(m, "kind"),
				       cli_str(m, "name"), cli_str(m, "version"), cli_str(m, "abi"),
				       cli_str(m, "path"));
			}
		}
		if (json_object_object_get_ex(r, "refused", &list)) {
			for (size_t i = 0; i < json_object_array_length(list); i++) {
				struct json_object *m = json_object_array_get_idx(list, i);
				printf("refused   %s: %s\n", cli_str(m, "path"), cli_str(m, "reason"));
			}
		}
	}
	json_object_put(r);
	return CLI_OK;
}

int cmd_daemon(int argc, char **argv)
{
	struct tbx_client *c;
	struct json_object *r;
	int rc;

	if (cli_wants_help(argc, argv, daemon_usage))
		return CLI_OK;
	if (argc != 2 || strcmp(argv[1], "stop") != 0)
		return cli_usage_error(daemon_usage, "daemon takes one verb: stop");
	/* Stopping must not start a daemon just to stop it. */
	if (tbx_client_connect(0, &c) < 0) {
		printf("twinboxd is not running\n");
		return CLI_OK;
	}
	rc = tbx_client_call(c, "daemon.stop", NULL, NULL, NULL, &r, NULL);
	tbx_client_close(c);
	json_object_put(r);
	if (rc < 0) {
		fprintf(stderr, "twinbox: %s\n", tbx_error_message());
		return CLI_FAILED;
	}
	if (tbx_client_wait_gone(30000) < 0) {
		fprintf(stderr, "twinbox: twinboxd is still running 30 s after being asked to stop\n");
		return CLI_FAILED;
	}
	printf("twinboxd stopped\n");
	return CLI_OK;
}
