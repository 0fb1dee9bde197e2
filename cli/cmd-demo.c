/* SPDX-License-Identifier: MIT */
/*
 * `twinbox demo`: the main job on the embedded default, start to finish. It
 * opens a session on a scratch project (a git repository when git is
 * installed), has "an agent" use the tools in a real sandbox, shows what the
 * sandbox can and cannot reach, brings the work home with gitSync, and
 * cleans up.
 */
#define _GNU_SOURCE
#include <ftw.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char usage_text[] =
	"Usage: twinbox demo [--engine E] [--keep]\n"
	"\n"
	"Open a session on a scratch project, run the agent tools in its sandbox and\n"
	"show each call and its result, then bring the agent's work home onto branch\n"
	"opencode/N of the scratch repository. --keep leaves the session (and sandbox)\n"
	"and the scratch project alive.\n";

struct step {
	const char *say;
	const char *tool;
	const char *args;
};

static const struct step steps[] = {
	{ "Where are we? The agent's shell runs inside the sandbox.", "bash",
	  "{\"command\":\"echo \\\"user=$(id -un 2>/dev/null || id -u) uid=$(id -u) host=$(hostname)\\\"; pwd\"}" },
	{ "The agent writes code into the project.", "write",
	  "{\"filePath\":\"app/charge.py\",\"content\":\"import json\\n\\ndef charge(amount):\\n    return {'amount': amount, 'currency': 'usd'}\\n\\nprint(json.dumps(charge(1999)))\\n\"}" },
	{ "...edits it (literal replacement, fails loudly on a miss)...", "edit",
	  "{\"filePath\":\"app/charge.py\",\"oldString\":\"'usd'\",\"newString\":\"'eur'\"}" },
	{ "...reads it back with line numbers...", "read", "{\"filePath\":\"app/charge.py\"}" },
	{ "...runs it (output streams as it arrives)...", "bash",
	  "{\"command\":\"cd app && (python3 charge.py 2>/dev/null || sh -c 'echo python3 is not in this image')\"}" },
	{ "...and searches the tree, with no ripgrep needed in the sandbox.", "grep",
	  "{\"pattern\":\"curr[a-z]+\",\"include\":\"*.py\"}" },
	{ "", "glob", "{\"pattern\":\"**/*.py\"}" },
	{ "The sandbox has no way out yet: loopback only (the twin gateway will be its only exit).",
	  "bash",
	  "{\"command\":\"echo interfaces: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | xargs); [ $(wc -l < /proc/net/route) -le 1 ] && echo 'routes: none, no way out'\"}" },
};

static int run_step(const char *session, const struct step *st)
{
	struct json_object *params = json_object_new_object(), *result, *v;
	int rc;

	if (st->say[0])
		printf("\n# %s\n", st->say);
	printf("$ twinbox tool %s %s '%s'\n", session, st->tool, st->args);
	fflush(stdout);
	json_object_object_add(params, "session", json_object_new_string(session));
	json_object_object_add(params, "name", json_object_new_string(st->tool));
	json_object_object_add(params, "args", json_tokener_parse(st->args));
	rc = cli_call("tool.call", params, NULL, NULL, &result);
	json_object_put(params);
	if (rc != CLI_OK)
		return rc;
	if (json_object_object_get_ex(result, "output", &v)) {
		const char *text = json_object_get_string(v);
		printf("%s%s", text, text[0] && text[strlen(text) - 1] == '\n' ? "" : "\n");
	}
	json_object_put(result);
	return CLI_OK;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path); /* best effort: a scratch directory */
	return 0;
}

/* The scratch project as a git repository with one commit, if git is there to make it. */
static int make_repo(const char *dir)
{
	char cmd[512];

	if (system("git --version >/dev/null 2>&1") != 0)
		return 0;
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && git init -q -b main && echo '# shop' > README.md && git add README.md "
		 "&& git -c user.name=You -c user.email=you@example.invalid commit -q -m 'the project "
		 "as you left it'", dir);
	if (system(cmd) != 0)
		return 0;
	printf("$ git init && git commit -m 'the project as you left it'   # in %s\n", dir);
	return 1;
}

static int show_home(const char *dir, const char *session, const char *n)
{
	static const struct step sync = {
		"The agent's work comes home: committed in the sandbox, bundled, and on a branch "
		"of your repository. No SSH, no port, no credential.", "gitSync", "{}" };
	char cmd[512];
	int rc = run_step(session, &sync);

	if (rc != CLI_OK)
		return rc;
	printf("\n# In your repository, ready to review and merge:\n");
	printf("$ git log --stat --format='%%h %%an: %%s' main..opencode/%s\n", n);
	fflush(stdout);
	snprintf(cmd, sizeof(cmd), "git -C '%s' log --stat --format='%%h %%an: %%s' main..opencode/%s",
		 dir, n);
	return system(cmd) == 0 ? CLI_OK : CLI_FAILED;
}

int cmd_demo(int argc, char **argv)
{
	struct json_object *params, *result = NULL;
	char dir[] = "/tmp/twinbox-demo-XXXXXX", session[64], branch[32];
	const char *engine = NULL;
	int keep = 0, repo, rc;

	if (cli_wants_help(argc, argv, usage_text))
		return CLI_OK;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--keep") == 0)
			keep = 1;
		else if (strcmp(argv[i], "--engine") == 0 && i + 1 < argc)
			engine = argv[++i];
		else
			return cli_usage_error(usage_text, "unexpected argument '%s'", argv[i]);
	}
	if (!mkdtemp(dir)) {
		perror("twinbox: mkdtemp");
		return CLI_FAILED;
	}
	printf("# twinbox demo: a session on %s, engine %s\n", dir, engine ? engine : "(default)");
	repo = make_repo(dir);
	params = json_object_new_object();
	json_object_object_add(params, "project_dir", json_object_new_string(dir));
	if (engine)
		json_object_object_add(params, "engine", json_object_new_string(engine));
	rc = cli_call("session.open", params, NULL, NULL, &result);
	json_object_put(params);
	if (rc != CLI_OK)
		goto out;
	snprintf(session, sizeof(session), "%s", cli_str(result, "id"));
	snprintf(branch, sizeof(branch), "%s", cli_str(result, "branch_number"));
	json_object_put(result);
	result = NULL;
	printf("$ twinbox session open --repo %s\n%s\n", dir, session);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]) && rc == CLI_OK; i++)
		rc = run_step(session, &steps[i]);
	if (rc == CLI_OK && repo)
		rc = show_home(dir, session, branch);
	if (keep) {
		printf("\n# Kept: `twinbox session show %s`; delete with `twinbox session delete %s`.\n",
		       session, session);
	} else {
		params = json_object_new_object();
		json_object_object_add(params, "session", json_object_new_string(session));
		printf("\n$ twinbox session delete %s\n", session);
		int drc = cli_call("session.delete", params, NULL, NULL, &result);
		json_object_put(params);
		if (drc == CLI_OK)
			printf("%s %s\n", cli_str(result, "id"), cli_str(result, "state"));
		if (rc == CLI_OK)
			rc = drc;
	}
	printf("\n# Next: the twin as the sandbox's only way out, and signed receipts; see README.md.\n");
out:
	json_object_put(result);
	if (!keep)
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}
