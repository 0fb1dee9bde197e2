/* SPDX-License-Identifier: MIT */
/*
 * `twinbox demo`: the main job on the embedded default, start to finish. It
 * opens a session on a scratch project (a git repository when git is
 * installed), has "an agent" use the tools in a real sandbox, has its code
 * call the Stripe API (answered by the session's twin through the gateway,
 * the sandbox's only way out), shows what the twin received, brings the
 * work home with gitSync, and cleans up.
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
	"show each call and its result, have the agent's code call the Stripe API (the\n"
	"session's twin answers it) and show what the twin received, then bring the\n"
	"agent's work home onto branch opencode/N of the scratch repository. --keep\n"
	"leaves the session (and sandbox) and the scratch project alive.\n";

/* The agent's payment code: Stripe's real host, a test key, nothing pointed at a fake. */
static const char pay_py[] =
	"import json, urllib.parse, urllib.request\n"
	"\n"
	"KEY = 'sk_test_demo'\n"
	"\n"
	"def stripe(path, **params):\n"
	"    req = urllib.request.Request('https://api.stripe.com' + path,\n"
	"                                 data=urllib.parse.urlencode(params).encode(),\n"
	"                                 headers={'Authorization': 'Bearer ' + KEY})\n"
	"    with urllib.request.urlopen(req, timeout=10) as r:\n"
	"        return json.load(r)\n"
	"\n"
	"customer = stripe('/v1/customers', email='ada@example.com')\n"
	"intent = stripe('/v1/payment_intents', amount=1999, currency='eur',\n"
	"                customer=customer['id'], payment_method='pm_card_visa', confirm='true')\n"
	"print('customer', customer['id'], customer['email'])\n"
	"print('payment ', intent['id'], intent['amount'], intent['currency'], intent['status'])\n";

/* Run it with python3, or make the same two calls with curl, or say neither is there. */
static const char pay_run[] =
	"if command -v python3 >/dev/null; then python3 app/pay.py\n"
	"elif command -v curl >/dev/null; then\n"
	"  c=$(curl -sS https://api.stripe.com/v1/customers -u sk_test_demo: -d email=ada@example.com)"
	" && echo \"$c\" && id=$(echo \"$c\" | sed -n 's/.*\"id\":\"\\(cus_[^\"]*\\)\".*/\\1/p')"
	" && curl -sS https://api.stripe.com/v1/payment_intents -u sk_test_demo: -d amount=1999"
	" -d currency=eur -d customer=\"$id\" -d payment_method=pm_card_visa -d confirm=true\n"
	"else echo 'neither python3 nor curl is in this sandbox: no Stripe call to show'; fi";

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
	{ "The sandbox's network: loopback only, no routes. Its one way out is the twin's gateway, "
	  "reached through proxies on its own loopback.",
	  "bash",
	  "{\"command\":\"echo interfaces: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | xargs); [ $(wc -l < /proc/net/route) -le 1 ] && echo 'routes: none, no way out but the gateway'; echo \\\"proxies: ${HTTPS_PROXY:+${HTTPS_PROXY##*@} (CONNECT)} ${ALL_PROXY:+${ALL_PROXY##*@} (SOCKS5)}\\\"\"}" },
};

/* After the Stripe calls: a host the twin does not answer, and a way around the proxy. */
static const struct step blocked = {
	"Anything else is refused (strict egress), and going around the proxy leads nowhere: "
	"no DNS, no route.", "bash",
	"{\"command\":\"curl -sS --max-time 5 https://example.com/ 2>&1 | head -1; curl -sS --max-time 5 --noproxy '*' https://api.stripe.com/ 2>&1 | head -1\"}" };

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
	/* What the daemon tells the agent (no twin, a failed canary, git sync) is shown too. */
	if (json_object_object_get_ex(result, "notice", &v))
		printf("# notice: %s\n", json_object_get_string(v));
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

/* A write step whose content is made here (so it needs no hand-escaped JSON). */
static int write_step(const char *session, const char *say, const char *path, const char *content)
{
	struct json_object *args = json_object_new_object();
	struct step st = { say, "write", NULL };
	int rc;

	json_object_object_add(args, "filePath", json_object_new_string(path));
	json_object_object_add(args, "content", json_object_new_string(content));
	st.args = json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE);
	rc = run_step(session, &st);
	json_object_put(args);
	return rc;
}

/* The newest request id per service: what the receipt counts from. */
static struct json_object *twin_baseline(const char *session)
{
	struct json_object *params = json_object_new_object(), *result = NULL, *since, *services;

	json_object_object_add(params, "session", json_object_new_string(session));
	if (cli_call("session.twin", params, NULL, NULL, &result) != CLI_OK) {
		json_object_put(params);
		return NULL;
	}
	json_object_put(params);
	since = json_object_new_object();
	if (json_object_object_get_ex(result, "services", &services))
		for (size_t i = 0; i < json_object_array_length(services); i++) {
			struct json_object *svc = json_object_array_get_idx(services, i), *id;
			if (json_object_object_get_ex(svc, "last_id", &id))
				json_object_object_add(since, cli_str(svc, "name"), json_object_get(id));
		}
	json_object_put(result);
	return since;
}

/* What the twin received since the baseline: the receipt, as yet unsigned. */
static void show_receipt(const char *session, struct json_object *since)
{
	struct json_object *params = json_object_new_object(), *result = NULL, *services, *egress;
	int total = 0;

	printf("\n# What the twin received since the baseline: the receipt, unsigned (twinboxd's "
	       "session.twin method).\n");
	fflush(stdout);
	json_object_object_add(params, "session", json_object_new_string(session));
	json_object_object_add(params, "since", json_object_get(since));
	if (cli_call("session.twin", params, NULL, NULL, &result) != CLI_OK) {
		json_object_put(params);
		return;
	}
	json_object_put(params);
	json_object_object_get_ex(result, "egress", &egress);
	printf("twin %s (environment %s)  interception: %s  canary: %s\n", cli_str(result, "twin_id"),
	       cli_str(result, "environment_id"), cli_str(egress, "mode"), cli_str(egress, "canary"));
	if (json_object_object_get_ex(result, "services", &services))
		for (size_t i = 0; i < json_object_array_length(services); i++) {
			struct json_object *reqs;
			json_object_object_get_ex(json_object_array_get_idx(services, i), "requests", &reqs);
			total += (int)json_object_array_length(reqs);
		}
	printf("%d request(s) reached the twin%s\n", total,
	       total ? ":" : ": do not report this change as working");
	for (size_t i = 0; services && i < json_object_array_length(services); i++) {
		struct json_object *svc = json_object_array_get_idx(services, i), *reqs;
		size_t n;

		json_object_object_get_ex(svc, "requests", &reqs);
		if (!(n = json_object_array_length(reqs)))
			continue;
		printf("  %s: %zu request(s)\n", cli_str(svc, "name"), n);
		for (size_t k = 0; k < n; k++) {
			struct json_object *e = json_object_array_get_idx(reqs, k);
			printf("    %s %s -> %s\n", cli_str(e, "method"), cli_str(e, "path"),
			       cli_str(e, "status"));
		}
	}
	json_object_put(result);
}

/* The agent's code calls Stripe from the sandbox; the twin answers and keeps a log. */
static int show_stripe(const char *session)
{
	static const struct step run = {
		"...and runs it. Its HTTPS goes through the gateway, which answers api.stripe.com "
		"from the twin with a certificate the sandbox trusts.", "bash", NULL };
	struct json_object *since = twin_baseline(session), *args;
	struct step st = run;
	int rc;

	rc = write_step(session, "The agent writes payment code against the real Stripe API: "
			"api.stripe.com, a test key, no base URL pointed at a fake.", "app/pay.py",
			pay_py);
	if (rc == CLI_OK) {
		args = json_object_new_object();
		json_object_object_add(args, "command", json_object_new_string(pay_run));
		st.args = json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE);
		rc = run_step(session, &st);
		json_object_put(args);
	}
	if (rc == CLI_OK)
		rc = run_step(session, &blocked);
	if (rc == CLI_OK && since)
		show_receipt(session, since);
	json_object_put(since);
	return rc;
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
	if (rc == CLI_OK)
		rc = show_stripe(session);
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
	printf("\n# Next: signed receipts of what the twin received; see README.md.\n");
out:
	json_object_put(result);
	if (!keep)
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}
