/* SPDX-License-Identifier: MIT */
/*
 * bench/sync: twinbox's bundle writer and reader side by side with the git
 * CLI (`git bundle create`, `git fetch` from the bundle) on one repository,
 * full and incremental, as times, bytes and ratios. Not a test: run it by
 * hand (`build/bench/sync`) or with `meson test --benchmark`.
 *
 *   sync [--repo PATH] [--runs N] [--commits N] [--keep]
 *
 * Without --repo it builds a synthetic repository (N commits over 200 text
 * files, plus two 1 MiB binary files). Each side reads its own bundle into a
 * fresh repository: an empty one for the full bundle, one holding HEAD~1 for
 * the incremental one. The git CLI's times include starting its processes,
 * which is what using it from a daemon would cost too.
 */
#define _GNU_SOURCE
#include <git2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "git-bundle.h"

static char root[512];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd = NULL;
	int status;

	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		abort();
	va_end(ap);
	status = system(cmd);
	if (status != 0) {
		fprintf(stderr, "bench/sync: command failed: %s\n", cmd);
		exit(1);
	}
	free(cmd);
	return 0;
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void make_synthetic(const char *repo, int commits)
{
	char stream[700];
	FILE *fp;
	char *files[200];
	size_t lens[200];

	if (snprintf(stream, sizeof(stream), "%s.fi", repo) >= (int)sizeof(stream))
		abort();
	sh("git init -q -b main '%s'", repo);
	if (!(fp = fopen(stream, "w")))
		abort();
	for (int f = 0; f < 200; f++) {
		files[f] = malloc(1 << 20);
		lens[f] = 0;
		for (int l = 0; l < 60; l++)
			lens[f] += (size_t)sprintf(files[f] + lens[f],
						   "module %d, line %d: static int value_%d = %d;\n", f,
						   l, l, l * f);
	}
	for (int c = 1; c <= commits; c++) {
		int f = (c * 37) % 200;
		if (lens[f] > (1 << 20) - 200)
			lens[f] = 0;
		lens[f] += (size_t)sprintf(files[f] + lens[f], "/* change %d */ int change_%d;\n", c,
					   c);
		fprintf(fp, "commit refs/heads/main\nmark :%d\n", c);
		fprintf(fp, "committer Bench <bench@example.invalid> %d +0000\n", 1700000000 + c);
		fprintf(fp, "data %d\nchange %05d\n", 13, c);
		if (c > 1)
			fprintf(fp, "from :%d\n", c - 1);
		fprintf(fp, "M 100644 inline src/dir%d/module%d.c\ndata %zu\n", f % 10, f, lens[f]);
		fwrite(files[f], 1, lens[f], fp);
		fputc('\n', fp);
	}
	fclose(fp);
	for (int f = 0; f < 200; f++)
		free(files[f]);
	sh("git -C '%s' fast-import --quiet < '%s' && git -C '%s' reset -q --hard main", repo,
	   stream, repo);
	sh("cd '%s' && head -c 1048576 /dev/urandom > a.bin && head -c 1048576 /dev/urandom > b.bin "
	   "&& git add a.bin b.bin && git -c user.name=B -c user.email=b@x commit -q -m binaries && "
	   "echo tail >> README && git add README && git -c user.name=B -c user.email=b@x commit -q "
	   "-m 'one more'", repo);
}

struct row {
	const char *what;
	double ours_s, git_s;
	long ours_bytes, git_bytes;
};

static void print_row(const struct row *r)
{
	printf("| %-22s | %9.1f | %9.1f | %6.2f |", r->what, r->ours_s * 1000, r->git_s * 1000,
	       r->git_s > 0 ? r->ours_s / r->git_s : 0);
	if (r->ours_bytes >= 0)
		printf(" %11ld | %11ld | %6.3f |\n", r->ours_bytes, r->git_bytes,
		       r->git_bytes > 0 ? (double)r->ours_bytes / (double)r->git_bytes : 0);
	else
		printf(" %11s | %11s | %6s |\n", "", "", "");
}

/* Write ours and git's bundle of HEAD (less basis, when given) `runs` times. */
static void bench_write(const char *repo_path, git_repository *repo, const git_oid *head,
			const git_oid *basis, int runs, const char *kind, struct row *r)
{
	struct tbx_git_bundle_tip tip = { .name = "refs/heads/opencode/1", .oid = *head };
	struct tbx_git_bundle_spec spec = { .tips = &tip, .n_tips = 1, .basis = basis,
					    .n_basis = basis ? 1 : 0 };
	double *t_ours = calloc((size_t)runs, sizeof(double)), *t_git = calloc((size_t)runs,
									       sizeof(double));
	char ours[700], theirs[700], neg[64] = "";

	snprintf(ours, sizeof(ours), "%s/ours-%s.bundle", root, kind);
	snprintf(theirs, sizeof(theirs), "%s/git-%s.bundle", root, kind);
	if (basis)
		snprintf(neg, sizeof(neg), "^%s", git_oid_tostr_s(basis));
	for (int i = 0; i < runs; i++) {
		double t0 = now_s();
		if (tbx_git_bundle_write_file(repo, &spec, ours, NULL) < 0) {
			fprintf(stderr, "bench/sync: %s\n", tbx_error_message());
			exit(1);
		}
		t_ours[i] = now_s() - t0;
		t0 = now_s();
		sh("git -C '%s' bundle create -q '%s' HEAD %s 2>/dev/null", repo_path, theirs, neg);
		t_git[i] = now_s() - t0;
	}
	r->ours_s = median(t_ours, runs);
	r->git_s = median(t_git, runs);
	r->ours_bytes = file_size(ours);
	r->git_bytes = file_size(theirs);
	free(t_ours);
	free(t_git);
}

/* Read each side's own bundle into fresh copies of template `tmpl`, `runs` times. */
static void bench_read(const char *tmpl, int runs, const char *kind, struct row *r)
{
	double *t_ours = calloc((size_t)runs, sizeof(double)), *t_git = calloc((size_t)runs,
									       sizeof(double));
	char ours[700], theirs[700], a[700], b[700];

	snprintf(ours, sizeof(ours), "%s/ours-%s.bundle", root, kind);
	snprintf(theirs, sizeof(theirs), "%s/git-%s.bundle", root, kind);
	for (int i = 0; i < runs; i++) {
		struct tbx_git_read_result res;
		git_repository *target;
		double t0;

		snprintf(a, sizeof(a), "%s/read-ours-%s-%d", root, kind, i);
		snprintf(b, sizeof(b), "%s/read-git-%s-%d", root, kind, i);
		sh("cp -a '%s' '%s' && cp -a '%s' '%s'", tmpl, a, tmpl, b);
		if (git_repository_open(&target, a) < 0)
			abort();
		t0 = now_s();
		if (tbx_git_bundle_read_file(target, ours, NULL, &res) < 0) {
			fprintf(stderr, "bench/sync: %s\n", tbx_error_message());
			exit(1);
		}
		t_ours[i] = now_s() - t0;
		tbx_git_read_result_clear(&res);
		git_repository_free(target);
		t0 = now_s();
		sh("git -C '%s' fetch -q '%s' 'HEAD:refs/heads/opencode/1'", b, theirs);
		t_git[i] = now_s() - t0;
		sh("rm -rf '%s' '%s'", a, b);
	}
	r->ours_s = median(t_ours, runs);
	r->git_s = median(t_git, runs);
	r->ours_bytes = r->git_bytes = -1;
	free(t_ours);
	free(t_git);
}

int main(int argc, char **argv)
{
	const char *repo_path = NULL;
	int runs = 5, commits = 2000, keep = 0;
	char synthetic[600], empty[600], based[600], path[700];
	struct row rows[4] = { { "write full" }, { "write incremental" }, { "read full" },
			       { "read incremental" } };
	git_repository *repo;
	git_oid head, parent;
	git_commit *c;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--repo") == 0 && i + 1 < argc)
			repo_path = argv[++i];
		else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (strcmp(argv[i], "--commits") == 0 && i + 1 < argc)
			commits = atoi(argv[++i]);
		else if (strcmp(argv[i], "--keep") == 0)
			keep = 1;
		else {
			fprintf(stderr, "usage: %s [--repo PATH] [--runs N] [--commits N] [--keep]\n",
				argv[0]);
			return 2;
		}
	}
	if (runs < 1 || commits < 2)
		return 2;
	snprintf(root, sizeof(root), "%s/tbx-bench-sync-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		return 1;
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("HOME", root, 1);
	tbx_git_init();
	if (!repo_path) {
		snprintf(synthetic, sizeof(synthetic), "%s/repo", root);
		fprintf(stderr, "bench/sync: making a %d-commit repository in %s\n", commits, synthetic);
		make_synthetic(synthetic, commits);
		repo_path = synthetic;
	}
	if (git_repository_open(&repo, repo_path) < 0 ||
	    git_reference_name_to_id(&head, repo, "HEAD") < 0 ||
	    git_commit_lookup(&c, repo, &head) < 0 || git_commit_parentcount(c) < 1) {
		fprintf(stderr, "bench/sync: %s: need a repository whose HEAD has a parent\n",
			repo_path);
		return 1;
	}
	git_oid_cpy(&parent, git_commit_parent_id(c, 0));
	git_commit_free(c);

	/* Read targets: an empty repository, and one holding HEAD~1 (made with git). */
	snprintf(empty, sizeof(empty), "%s/empty", root);
	snprintf(based, sizeof(based), "%s/based", root);
	sh("git init -q '%s' && git init -q '%s'", empty, based);
	{
		struct tbx_git_bundle_tip tip = { .name = "refs/heads/base", .oid = parent };
		struct tbx_git_bundle_spec spec = { .tips = &tip, .n_tips = 1 };
		snprintf(path, sizeof(path), "%s/base.bundle", root);
		if (tbx_git_bundle_write_file(repo, &spec, path, NULL) < 0)
			return 1;
		sh("git -C '%s' fetch -q '%s' refs/heads/base:refs/heads/base && rm '%s'", based, path,
		   path);
	}
	bench_write(repo_path, repo, &head, NULL, runs, "full", &rows[0]);
	bench_write(repo_path, repo, &head, &parent, runs, "inc", &rows[1]);
	bench_read(empty, runs, "full", &rows[2]);
	bench_read(based, runs, "inc", &rows[3]);

	printf("bench/sync on %s (HEAD %.10s, libgit2 %d.%d.%d, median of %d runs)\n\n", repo_path,
	       git_oid_tostr_s(&head), LIBGIT2_VER_MAJOR, LIBGIT2_VER_MINOR, LIBGIT2_VER_REVISION,
	       runs);
	printf("| %-22s | %9s | %9s | %6s | %11s | %11s | %6s |\n", "operation", "twinbox ms",
	       "git ms", "time x", "twinbox B", "git B", "size x");
	printf("|%s|%s|%s|%s|%s|%s|%s|\n", "------------------------", "-----------",
	       "-----------", "--------", "-------------", "-------------", "--------");
	for (int i = 0; i < 4; i++)
		print_row(&rows[i]);
	printf("\nx = twinbox / git (below 1: twinbox is faster or smaller). Incremental: HEAD "
	       "over HEAD~1.\n");
	git_repository_free(repo);
	if (!keep)
		sh("rm -rf '%s'", root);
	else
		fprintf(stderr, "bench/sync: kept %s\n", root);
	git_libgit2_shutdown();
	return 0;
}
