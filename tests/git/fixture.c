/* SPDX-License-Identifier: MIT */
/* Scratch repositories made with the git CLI, and TAP output, for the git tests. */
#define _GNU_SOURCE
#include "fixture.h"

#include <dirent.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"

static char root[512];
static char **paths;
static size_t n_paths;
static int tests_run, tests_failed;

static char *vfmt(const char *fmt, va_list ap)
{
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	return s;
}

void fx_init(const char *name)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(root, sizeof(root), "%s/tbx-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(1);
	}
	/* Nothing of the user's own git set-up may leak into the fixtures. */
	setenv("HOME", root, 1);
	setenv("XDG_CONFIG_HOME", root, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "Test Author", 1);
	setenv("GIT_AUTHOR_EMAIL", "author@example.invalid", 1);
	setenv("GIT_COMMITTER_NAME", "Test Committer", 1);
	setenv("GIT_COMMITTER_EMAIL", "committer@example.invalid", 1);
	setenv("GIT_TERMINAL_PROMPT", "0", 1);
	unsetenv("GIT_DIR");
	unsetenv("GIT_WORK_TREE");
	fx_must("git config --global init.defaultBranch main && "
		"git config --global advice.detachedHead false && "
		"git config --global gc.auto 0");
}

void fx_done(void)
{
	if (root[0] && !getenv("TBX_KEEP"))
		fx_sh("rm -rf '%s'", root);
	for (size_t i = 0; i < n_paths; i++)
		free(paths[i]);
	free(paths);
	paths = NULL;
	n_paths = 0;
}

const char *fx_root(void)
{
	return root;
}

/* Interned: the same name gives the same pointer, valid until fx_done(). */
const char *fx_path(const char *name)
{
	char *p = NULL;

	for (size_t i = 0; i < n_paths; i++)
		if (strcmp(paths[i] + strlen(root) + 1, name) == 0)
			return paths[i];
	if (asprintf(&p, "%s/%s", root, name) < 0 ||
	    !(paths = realloc(paths, (n_paths + 1) * sizeof(*paths))))
		abort();
	paths[n_paths++] = p;
	return p;
}

static int run(const char *cmd)
{
	int status = system(cmd);

	if (status == -1)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int fx_sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int rc;

	va_start(ap, fmt);
	cmd = vfmt(fmt, ap);
	va_end(ap);
	rc = run(cmd);
	free(cmd);
	return rc;
}

void fx_must(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int rc;

	va_start(ap, fmt);
	cmd = vfmt(fmt, ap);
	va_end(ap);
	rc = run(cmd);
	if (rc != 0) {
		printf("Bail out! command failed (%d): %s\n", rc, cmd);
		fflush(stdout);
		exit(1);
	}
	free(cmd);
}

char *fx_out(const char *fmt, ...)
{
	va_list ap;
	char *cmd, *buf = NULL;
	size_t len = 0, cap = 0;
	char chunk[4096];
	size_t n;
	FILE *p;

	va_start(ap, fmt);
	cmd = vfmt(fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	free(cmd);
	if (!p)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		memcpy(buf + len, chunk, n);
		len += n;
	}
	if (pclose(p) != 0) {
		free(buf);
		return NULL;
	}
	if (!buf)
		buf = strdup("");
	else
		buf[len] = '\0';
	while (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	return buf;
}

void fx_repo(const char *path)
{
	fx_must("mkdir -p '%s' && git -C '%s' init -q -b main", path, path);
}

void fx_commit(const char *repo, const char *file, const char *content, const char *msg)
{
	char *full = NULL;
	FILE *fp;

	if (asprintf(&full, "%s/%s", repo, file) < 0)
		abort();
	fx_must("mkdir -p \"$(dirname '%s')\"", full);
	fp = fopen(full, "w");
	if (!fp || fputs(content, fp) < 0 || fclose(fp) != 0)
		abort();
	free(full);
	fx_must("git -C '%s' add -A && git -C '%s' commit -q -m '%s'", repo, repo, msg);
}

void fx_oid(const char *repo, const char *rev, git_oid *oid)
{
	char *hex = fx_out("git -C '%s' rev-parse --verify -q '%s'", repo, rev);

	if (!hex || git_oid_fromstr(oid, hex) < 0) {
		printf("Bail out! cannot resolve %s in %s\n", rev, repo);
		exit(1);
	}
	free(hex);
}

git_repository *fx_open(const char *path)
{
	git_repository *repo = NULL;

	if (git_repository_open(&repo, path) < 0) {
		printf("Bail out! cannot open %s\n", path);
		exit(1);
	}
	return repo;
}

char *fx_refs(const char *repo)
{
	return fx_out("cd '%s' && { git for-each-ref --format='%%(refname) %%(objectname)'; "
		      "git symbolic-ref -q HEAD || git rev-parse -q --verify HEAD || echo unborn; }",
		      repo);
}

long fx_objects(const char *repo)
{
	char *out = fx_out("git -C '%s' count-objects -v", repo), *line;
	long total = 0;

	if (!out)
		return -1;
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		long v;
		if (sscanf(line, "count: %ld", &v) == 1 || sscanf(line, "in-pack: %ld", &v) == 1)
			total += v;
	}
	free(out);
	return total;
}

char *fx_object_files(const char *repo)
{
	return fx_out("cd '%s/.git/objects' && ls -a . pack | grep -v '^[0-9a-f][0-9a-f]$'", repo);
}

long fx_file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

void tap_ok(int ok, const char *fmt, ...)
{
	va_list ap;

	tests_run++;
	if (!ok)
		tests_failed++;
	printf("%s %d - ", ok ? "ok" : "not ok", tests_run);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int tap_failures(void)
{
	return tests_failed;
}

void tap_plan_end(void)
{
	printf("1..%d\n", tests_run);
}
