/* SPDX-License-Identifier: MIT */
/*
 * The sandbox half of git sync: POSIX sh scripts driving the git CLI there.
 * Values reach them through the environment, never spliced into the text,
 * so no path or message needs quoting. They assume nothing of the sandbox
 * but /bin/sh and git (no coreutils: the no-git check must work in an image
 * that has nothing at all), and no configured identity.
 */
#define _GNU_SOURCE
#include "sync-sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Long enough for a big fetch or bundle on a slow sandbox; a hung git still ends. */
#define SCRIPT_TIMEOUT_MS (10u * 60u * 1000u)
/* How much of git's stderr an error message quotes. */
#define STDERR_TAIL 600

/*
 * GIT_CEILING_DIRECTORIES (set by the runner) keeps every git below from
 * finding a repository above the workdir, which matters on engines whose
 * sandbox is a host directory.
 */
const char tbx_git_script_probe[] =
	"cd \"$TBX_WORKDIR\" || exit 3\n"
	"command -v git >/dev/null 2>&1 || { echo nogit; exit 0; }\n"
	"echo git\n"
	"if [ -e .git ]; then\n"
	"\tgit for-each-ref --format='have %(objectname)' 2>/dev/null || :\n"
	"\th=$(git rev-parse -q --verify 'HEAD^{commit}' 2>/dev/null) && echo \"have $h\"\n"
	"fi\n"
	"exit 0\n";

#define SCRIPT_INIT_REPO                                                                    \
	"if [ ! -e .git ]; then\n"                                                          \
	"\tgit init -q\n"                                                                   \
	"\tgit symbolic-ref HEAD refs/heads/opencode\n"                                     \
	"fi\n"

const char tbx_git_script_init[] =
	"set -e\n"
	"cd \"$TBX_WORKDIR\"\n"
	SCRIPT_INIT_REPO;

const char tbx_git_script_adopt[] =
	"set -e\n"
	"cd \"$TBX_WORKDIR\"\n"
	SCRIPT_INIT_REPO
	"if [ -n \"$TBX_BUNDLE\" ]; then\n"
	"\tgit fetch -q --no-tags \"$TBX_BUNDLE\" '+refs/heads/opencode:refs/twinbox/adopted'\n"
	"else\n"
	"\tgit update-ref refs/twinbox/adopted \"$TBX_COMMIT\"\n"
	"fi\n"
	"git checkout -q -B opencode refs/twinbox/adopted\n";

/*
 * Prints "committed" when it made a commit, "head <ref>|detached", then
 * either "empty" (no commit on opencode yet), or "tip <oid>", maybe
 * "adopted <oid>", and "host-has <oid>" (the host already has the tip: no
 * bundle) or "bundle" (written to $TBX_BUNDLE). Negative revisions are the
 * host's candidates the sandbox has, plus the sandbox's own records under
 * refs/twinbox/ (what was adopted and what went home), unless TBX_FULL is set.
 */
const char tbx_git_script_home[] =
	"set -e\n"
	"cd \"$TBX_WORKDIR\"\n"
	"command -v git >/dev/null 2>&1 || { echo 'git: not found in the sandbox' >&2; exit 127; }\n"
	SCRIPT_INIT_REPO
	"if ! git config user.name >/dev/null 2>&1; then\n"
	"\tGIT_AUTHOR_NAME=$TBX_NAME GIT_COMMITTER_NAME=$TBX_NAME\n"
	"\texport GIT_AUTHOR_NAME GIT_COMMITTER_NAME\n"
	"fi\n"
	"if ! git config user.email >/dev/null 2>&1; then\n"
	"\tGIT_AUTHOR_EMAIL=$TBX_EMAIL GIT_COMMITTER_EMAIL=$TBX_EMAIL\n"
	"\texport GIT_AUTHOR_EMAIL GIT_COMMITTER_EMAIL\n"
	"fi\n"
	"git add -A\n"
	"if ! git diff --cached --quiet; then\n"
	"\tgit -c commit.gpgsign=false commit -q --no-verify -m \"$TBX_MESSAGE\"\n"
	"\techo committed\n"
	"fi\n"
	"echo \"head $(git symbolic-ref -q HEAD || echo detached)\"\n"
	"tip=$(git rev-parse -q --verify 'refs/heads/opencode^{commit}') || { echo empty; exit 0; }\n"
	"echo \"tip $tip\"\n"
	"if a=$(git rev-parse -q --verify 'refs/twinbox/adopted^{commit}'); then echo \"adopted $a\"; fi\n"
	"neg=\n"
	"if [ -z \"$TBX_FULL\" ]; then\n"
	"\tfor c in $TBX_HOST_HAS; do\n"
	"\t\tif git merge-base --is-ancestor \"$tip\" \"$c\" 2>/dev/null; then\n"
	"\t\t\techo \"host-has $c\"\n"
	"\t\t\texit 0\n"
	"\t\tfi\n"
	"\t\tif git cat-file -e \"$c^{commit}\" 2>/dev/null; then neg=\"$neg ^$c\"; fi\n"
	"\tdone\n"
	"\tfor c in $(git for-each-ref --format='%(objectname)' refs/twinbox/); do\n"
	"\t\tgit merge-base --is-ancestor \"$tip\" \"$c\" || neg=\"$neg ^$c\"\n"
	"\tdone\n"
	"fi\n"
	"git bundle create \"$TBX_BUNDLE\" refs/heads/opencode $neg\n"
	"echo bundle\n";

const char tbx_git_script_home_done[] =
	"cd \"$TBX_WORKDIR\" && git update-ref refs/twinbox/home \"$TBX_TIP\"\n";

void tbx_git_exec_result_clear(struct tbx_git_exec_result *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

/* "/a/b/c" -> "/a/b"; "/a" -> "/". */
static char *parent_dir(const char *path)
{
	char *p = strdup(path), *slash;

	if (!p)
		return NULL;
	while (strlen(p) > 1 && p[strlen(p) - 1] == '/')
		p[strlen(p) - 1] = '\0';
	slash = strrchr(p, '/');
	if (!slash)
		strcpy(p, "/");
	else if (slash == p)
		p[1] = '\0';
	else
		*slash = '\0';
	return p;
}

int tbx_git_sandbox_run(const struct tbx_git_sandbox *sbx, const struct tbx_git_sync_opts *opts,
			const char *what, const char *script, const char *const *extra,
			struct tbx_git_exec_result *out)
{
	char *workdir = NULL, *ceiling = NULL, *parent = parent_dir(sbx->workdir);
	const char *env[32];
	size_t n = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!parent || asprintf(&workdir, "TBX_WORKDIR=%s", sbx->workdir) < 0 ||
	    asprintf(&ceiling, "GIT_CEILING_DIRECTORIES=%s", parent) < 0) {
		free(parent);
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	}
	free(parent);
	env[n++] = workdir;
	env[n++] = ceiling;
	env[n++] = "GIT_TERMINAL_PROMPT=0";
	env[n++] = "LC_ALL=C";
	for (size_t i = 0; extra && extra[i] && n < sizeof(env) / sizeof(env[0]) - 1; i++)
		env[n++] = extra[i];
	env[n] = NULL;
	if (tbx_git_cancelled(opts ? opts->cancel : NULL)) {
		rc = tbx_error_set(TBX_ECANCELED, "cancelled");
		goto cleanup;
	}
	rc = sbx->exec(sbx->payload, script, env, SCRIPT_TIMEOUT_MS, out);
	if (rc < 0) {
		tbx_error_prefix("cannot run git in the sandbox (%s)", what);
		goto cleanup;
	}
	if (out->exit_code == TBX_GIT_NO_GIT) {
		rc = tbx_error_set(TBX_ENOTSUP, "git sync needs git in the sandbox, and it has none: "
				   "install git in the sandbox (for example `apt-get install git`) "
				   "and sync again");
	} else if (out->exit_code != 0) {
		size_t len = out->err_len, from = len > STDERR_TAIL ? len - STDERR_TAIL : 0;
		while (len > from && (out->err[len - 1] == '\n' || out->err[len - 1] == ' '))
			len--;
		rc = tbx_error_set(TBX_EIO, "git in the sandbox failed while %s (exit %d)%s%.*s",
				   what, out->exit_code, len > from ? ": " : "",
				   (int)(len - from), out->err ? out->err + from : "");
	}
cleanup:
	free(workdir);
	free(ceiling);
	return rc;
}

int tbx_git_output_field(const struct tbx_git_exec_result *r, const char *key, char *buf,
			 size_t size)
{
	size_t klen = strlen(key);
	const char *p = r->out;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == ' ') {
			snprintf(buf, size, "%.*s", (int)(len - klen - 1), p + klen + 1);
			return 0;
		}
		p = nl ? nl + 1 : NULL;
	}
	return -1;
}

int tbx_git_output_has(const struct tbx_git_exec_result *r, const char *word)
{
	size_t wlen = strlen(word);
	const char *p = r->out;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len == wlen && strncmp(p, word, wlen) == 0)
			return 1;
		p = nl ? nl + 1 : NULL;
	}
	return 0;
}

void tbx_git_sandbox_remove(const struct tbx_git_sandbox *sbx, const char *path)
{
	int status = tbx_error_status();
	char *message = status ? strdup(tbx_error_message()) : NULL;

	/* A leftover transfer file is harmless; the error that matters is the caller's. */
	sbx->file_remove(sbx->payload, path);
	if (status)
		tbx_error_set(status, "%s", message ? message : "out of memory");
	else
		tbx_error_clear();
	free(message);
}
