/* SPDX-License-Identifier: MIT */
/* `twinbox session open|list|show|close|delete`. */
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char usage_text[] =
	"Usage: twinbox session open [--engine E] [--no-twin] [--repo DIR] [--key K] [--json]\n"
	"       twinbox session list [--json]\n"
	"       twinbox session show|close|delete ID [--json]\n"
	"\n"
	"open    open a session on DIR (default: the current directory) and print its id;\n"
	"        with --key, attach to the live session that has that key instead\n"
	"list    the live sessions\n"
	"show    one session\n"
	"close   detach; the sandbox is kept and the session can be used again\n"
	"delete  kill the session's sandbox and forget it\n";

static void print_session(struct json_object *s)
{
	static const char *const keys[] = { "id", "state", "engine", "sandbox_id", "workdir",
					    "project_dir", "repo_root", "frontend", "key" };

	struct json_object *sync, *enabled, *egress;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		printf("%-12s %s\n", keys[i], cli_str(s, keys[i]));
	/* Git sync: where the work comes home, and anything the user should hear. */
	if (json_object_object_get_ex(s, "sync", &sync) && sync &&
	    json_object_object_get_ex(sync, "enabled", &enabled) && json_object_get_boolean(enabled)) {
		printf("%-12s %s (sync %s)\n", "branch", cli_str(sync, "branch"), cli_str(sync, "state"));
		if (strcmp(cli_str(sync, "notice"), "-") != 0)
			printf("%-12s %s\n", "notice", cli_str(sync, "notice"));
	}
	/* The twin: the sandbox's way out, and whether the canary vouched for it. */
	if (json_object_object_get_ex(s, "egress", &egress) && egress) {
		printf("%-12s %s, twin %s, canary %s\n", "egress", cli_str(egress, "mode"),
		       cli_str(egress, "twin_id"), cli_str(egress, "canary"));
		if (strcmp(cli_str(egress, "reason"), "-") != 0)
			printf("%-12s %s\n", "", cli_str(egress, "reason"));
	}
}

static int session_open(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "engine", required_argument, NULL, 'e' }, { "no-twin", no_argument, NULL, 'n' },
		{ "repo", required_argument, NULL, 'r' },   { "key", required_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },         { 0 },
	};
	struct json_object *params = json_object_new_object(), *result;
	char dir[PATH_MAX];
	const char *repo = ".";
	int c, json = 0, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			json_object_object_add(params, "engine", json_object_new_string(optarg));
			break;
		case 'n':
			json_object_object_add(params, "no_twin", json_object_new_boolean(1));
			break;
		case 'r':
			repo = optarg;
			break;
		case 'k':
			json_object_object_add(params, "key", json_object_new_string(optarg));
			break;
		case 'j':
			json = 1;
			break;
		default:
			json_object_put(params);
			return cli_usage_error(usage_text, "bad option for session open");
		}
	}
	if (optind < argc) {
		json_object_put(params);
		return cli_usage_error(usage_text, "unexpected argument '%s'", argv[optind]);
	}
	if (!realpath(repo, dir)) {
		json_object_put(params);
		fprintf(stderr, "twinbox: %s: no such directory\n", repo);
		return CLI_FAILED;
	}
	json_object_object_add(params, "project_dir", json_object_new_string(dir));
	rc = cli_call("session.open", params, NULL, NULL, &result);
	json_object_put(params);
	if (rc == CLI_OK) {
		if (json)
			cli_print_json(result);
		else
			printf("%s\n", cli_str(result, "id"));
	}
	json_object_put(result);
	return rc;
}

static int session_list(int json)
{
	struct json_object *result, *list;
	int rc = cli_call("session.list", NULL, NULL, NULL, &result);

	if (rc != CLI_OK)
		return rc;
	if (json) {
		cli_print_json(result);
	} else if (json_object_object_get_ex(result, "sessions", &list)) {
		printf("%-24s %-8s %-8s %-22s %s\n", "ID", "ENGINE", "STATE", "SANDBOX", "PROJECT");
		for (size_t i = 0; i < json_object_array_length(list); i++) {
			struct json_object *s = json_object_array_get_idx(list, i);
			printf("%-24s %-8s %-8s %-22s %s\n", cli_str(s, "id"), cli_str(s, "engine"),
			       cli_str(s, "state"), cli_str(s, "sandbox_id"), cli_str(s, "project_dir"));
		}
	}
	json_object_put(result);
	return CLI_OK;
}

static int session_by_id(const char *method, const char *id, int json)
{
	struct json_object *params = json_object_new_object(), *result;
	int rc;

	json_object_object_add(params, "session", json_object_new_string(id));
	rc = cli_call(method, params, NULL, NULL, &result);
	json_object_put(params);
	if (rc == CLI_OK) {
		if (json)
			cli_print_json(result);
		else if (strcmp(method, "session.show") == 0)
			print_session(result);
		else
			printf("%s %s\n", cli_str(result, "id"), cli_str(result, "state"));
	}
	json_object_put(result);
	return rc;
}

int cmd_session(int argc, char **argv)
{
	const char *verb, *id = NULL;
	int json = 0;

	if (cli_wants_help(argc, argv, usage_text))
		return CLI_OK;
	if (argc < 2)
		return cli_usage_error(usage_text, "session needs a verb");
	verb = argv[1];
	if (strcmp(verb, "open") == 0)
		return session_open(argc - 1, argv + 1);
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (argv[i][0] == '-')
			return cli_usage_error(usage_text, "unknown option '%s'", argv[i]);
		else if (!id)
			id = argv[i];
		else
			return cli_usage_error(usage_text, "unexpected argument '%s'", argv[i]);
	}
	if (strcmp(verb, "list") == 0) {
		if (id)
			return cli_usage_error(usage_text, "session list takes no ID");
		return session_list(json);
	}
	if (strcmp(verb, "show") && strcmp(verb, "close") && strcmp(verb, "delete"))
		return cli_usage_error(usage_text, "unknown session verb '%s'", verb);
	if (!id)
		return cli_usage_error(usage_text, "session %s needs a session ID", verb);
	if (strcmp(verb, "show") == 0)
		return session_by_id("session.show", id, json);
	if (strcmp(verb, "close") == 0)
		return session_by_id("session.close", id, json);
	return session_by_id("session.delete", id, json);
}
