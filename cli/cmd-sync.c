/* SPDX-License-Identifier: MIT */
/* `twinbox sync ID`: bring a session's work home onto opencode/N, with a progress bar. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char usage_text[] =
	"Usage: twinbox sync ID [--json]\n"
	"\n"
	"Bring session ID's work home: the sandbox commits everything on its branch\n"
	"opencode, and the new commits land on branch opencode/N of your repository.\n"
	"A branch you have checked out is never moved: the work then goes to\n"
	"opencode/N-incoming. Local commits on opencode/N that the sandbox does not\n"
	"have are kept on opencode/N-backup-<time>. Review and merge with git, e.g.\n"
	"  git log -p main..opencode/3      git merge opencode/3\n"
	"Prints a summary (progress on stderr when it is a terminal); --json prints\n"
	"{summary, branch, tip, commits, files_changed, bytes, incremental, ...}.\n";

#define BAR_WIDTH 30

struct bar {
	int drawn;
};

static void on_progress(struct json_object *params, void *payload)
{
	struct bar *bar = payload;
	struct json_object *v;
	const char *phase = cli_str(params, "phase");
	long long done = 0, total = 0;

	if (json_object_object_get_ex(params, "done", &v))
		done = json_object_get_int64(v);
	if (json_object_object_get_ex(params, "total", &v))
		total = json_object_get_int64(v);
	fprintf(stderr, "\r\033[K%-8s ", phase);
	if (total > 0) {
		int filled = (int)(done * BAR_WIDTH / total);
		if (filled > BAR_WIDTH)
			filled = BAR_WIDTH;
		fputc('[', stderr);
		for (int i = 0; i < BAR_WIDTH; i++)
			fputc(i < filled ? '#' : '.', stderr);
		fprintf(stderr, "] %3lld%%  %lld/%lld", done * 100 / total, done, total);
	} else if (done > 0) {
		fprintf(stderr, "%lld", done);
	}
	fflush(stderr);
	bar->drawn = 1;
}

int cmd_sync(int argc, char **argv)
{
	struct json_object *params, *result;
	struct bar bar = { 0 };
	const char *id = NULL;
	int json = 0, rc;

	if (cli_wants_help(argc, argv, usage_text))
		return CLI_OK;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (!id && argv[i][0] != '-')
			id = argv[i];
		else
			return cli_usage_error(usage_text, "unexpected argument '%s'", argv[i]);
	}
	if (!id)
		return cli_usage_error(usage_text, "sync needs a session ID");
	params = json_object_new_object();
	json_object_object_add(params, "session", json_object_new_string(id));
	rc = cli_call("sync", params, !json && isatty(STDERR_FILENO) ? on_progress : NULL, &bar,
		      &result);
	json_object_put(params);
	if (bar.drawn)
		fputs("\r\033[K", stderr);
	if (rc != CLI_OK)
		return rc;
	if (json)
		cli_print_json(result);
	else
		printf("%s\n", cli_str(result, "summary"));
	json_object_put(result);
	return CLI_OK;
}
