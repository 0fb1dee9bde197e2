/* SPDX-License-Identifier: MIT */
/*
 * The bundle writer and reader against the git CLI: bundles twinbox writes
 * pass `git bundle verify` and `git fetch`; bundles `git bundle create`
 * writes are read; incremental bundles are small; bad bundles are refused
 * with the repository unchanged; and the owned-ref rules hold. Prints TAP.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "error.h"
#include "fixture.h"
#include "git-bundle.h"
#include "git-refs.h"
#include "git-repo.h"

static double now_s(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static void write_bytes(const char *path, const unsigned char *data, size_t len)
{
	FILE *fp = fopen(path, "wb");

	if (!fp || fwrite(data, 1, len, fp) != len || fclose(fp) != 0)
		abort();
}

static unsigned char *read_all(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	long size;
	unsigned char *data;

	if (!fp || fseek(fp, 0, SEEK_END) != 0 || (size = ftell(fp)) < 0)
		abort();
	rewind(fp);
	data = malloc((size_t)size + 1);
	if (!data || fread(data, 1, (size_t)size, fp) != (size_t)size)
		abort();
	fclose(fp);
	*len = (size_t)size;
	return data;
}

/* A repository with a merge, a binary file and a subdirectory; branch opencode/1 at HEAD. */
static void make_rich_repo(const char *repo)
{
	unsigned char bin[4096];

	fx_repo(repo);
	fx_commit(repo, "README", "hello\n", "first");
	for (size_t i = 0; i < sizeof(bin); i++)
		bin[i] = (unsigned char)((i * 7919u) ^ (i >> 3));
	{
		char path[1100];
		snprintf(path, sizeof(path), "%s/blob.bin", repo);
		write_bytes(path, bin, sizeof(bin));
	}
	fx_must("git -C '%s' add blob.bin && git -C '%s' commit -q -m binary", repo, repo);
	fx_must("git -C '%s' checkout -q -b side", repo);
	fx_commit(repo, "src/side.c", "int side;\n", "side work");
	fx_must("git -C '%s' checkout -q main", repo);
	fx_commit(repo, "src/main.c", "int main(void) { return 0; }\n", "main work");
	fx_must("git -C '%s' merge -q --no-ff -m merge side", repo);
	fx_must("git -C '%s' branch opencode/1", repo);
}

static void test_write_verify_fetch(void)
{
	const char *src = fx_path("rich"), *dst = fx_path("rich-fetched");
	const char *bundle = fx_path("rich.bundle");
	struct tbx_git_bundle_tip tip = { .name = "refs/heads/opencode/1" };
	struct tbx_git_bundle_spec spec = { .tips = &tip, .n_tips = 1 };
	struct tbx_git_bundle_stats stats;
	git_repository *repo;
	char *a, *b;
	int rc;

	make_rich_repo(src);
	repo = fx_open(src);
	fx_oid(src, "HEAD", &tip.oid);
	rc = tbx_git_bundle_write_file(repo, &spec, bundle, &stats);
	CHECK(rc == 0, "full bundle of a repository with a merge and a binary file");
	CHECK(stats.commits == 5 && stats.prerequisites == 0, "it has 5 commits, no prerequisites "
	      "(%zu, %zu)", stats.commits, stats.prerequisites);
	CHECK(stats.bytes == (uint64_t)fx_file_size(bundle), "stats.bytes is the file size");
	CHECK(fx_sh("git -C '%s' bundle verify -q '%s' >/dev/null 2>&1", src, bundle) == 0,
	      "git bundle verify accepts it");
	fx_repo(dst);
	CHECK(fx_sh("git -C '%s' fetch -q '%s' 'refs/heads/opencode/1:refs/heads/got' 2>&1",
		    dst, bundle) == 0, "git fetch reads it");
	a = fx_out("git -C '%s' rev-parse HEAD", src);
	b = fx_out("git -C '%s' rev-parse got", dst);
	CHECK(a && b && strcmp(a, b) == 0, "the fetched branch is the same commit");
	CHECK(fx_sh("git -C '%s' fsck --no-dangling --no-progress >/dev/null 2>&1", dst) == 0, "and fsck is happy");
	free(a);
	free(b);
	a = fx_out("git -C '%s' show got:blob.bin | od -An -tx1 | md5sum", dst);
	b = fx_out("od -An -tx1 < '%s/blob.bin' | md5sum", src);
	CHECK(a && b && strcmp(a, b) == 0, "the binary file comes through byte for byte");
	free(a);
	free(b);
	git_repository_free(repo);
}

/* Reading what `git bundle create` writes, full and then incremental (a thin pack). */
static void test_read_git_bundles(void)
{
	const char *src = fx_path("rich"), *dst = fx_path("from-cli");
	struct tbx_git_read_result res;
	git_repository *repo;
	git_oid want;
	char *before;
	int rc;

	fx_must("git -C '%s' bundle create -q '%s' opencode/1 2>/dev/null", src,
		fx_path("cli-full.bundle"));
	fx_must("mkdir -p '%s' && git -C '%s' init -q", dst, dst);
	repo = fx_open(dst);
	rc = tbx_git_bundle_read_file(repo, fx_path("cli-full.bundle"), NULL, &res);
	CHECK(rc == 0, "a full bundle from git bundle create is read into an empty repository");
	fx_oid(src, "opencode/1", &want);
	CHECK(rc == 0 && res.n_updates == 1 && git_oid_equal(&res.updates[0].new_oid, &want) &&
	      !res.updates[0].had_old, "it creates opencode/1 at the right commit");
	tbx_git_read_result_clear(&res);
	CHECK(fx_sh("git -C '%s' fsck --no-dangling --no-progress >/dev/null 2>&1", dst) == 0, "fsck is happy");

	fx_must("git -C '%s' checkout -q opencode/1", src);
	fx_commit(src, "src/main.c", "int main(void) { return 1; }\n", "more");
	fx_commit(src, "blob2.bin", "\x01\x02\x03 binary-ish \xff\n", "even more");
	fx_must("git -C '%s' checkout -q main", src);
	fx_must("git -C '%s' bundle create -q '%s' opencode/1 ^main 2>/dev/null", src,
		fx_path("cli-inc.bundle"));
	before = fx_out("head -c 200 '%s' | grep -c '^-'", fx_path("cli-inc.bundle"));
	CHECK(before && strcmp(before, "1") == 0, "git's incremental bundle has a prerequisite");
	free(before);
	rc = tbx_git_bundle_read_file(repo, fx_path("cli-inc.bundle"), NULL, &res);
	fx_oid(src, "opencode/1", &want);
	CHECK(rc == 0 && res.n_updates == 1 && res.prerequisites == 1 &&
	      git_oid_equal(&res.updates[0].new_oid, &want) && res.updates[0].had_old &&
	      !res.updates[0].backup, "its thin pack is completed and opencode/1 fast-forwards");
	tbx_git_read_result_clear(&res);
	CHECK(fx_sh("git -C '%s' fsck --no-dangling --no-progress >/dev/null 2>&1", dst) == 0, "fsck is still happy");
	git_repository_free(repo);
}

/* 500 commits over 20 files, through fast-import, on branch main. */
static void make_long_history(const char *repo, int n_commits)
{
	char *files[20] = { 0 };
	size_t lens[20] = { 0 };
	FILE *fp;
	char stream[1100];

	fx_repo(repo);
	snprintf(stream, sizeof(stream), "%s.fi", repo);
	fp = fopen(stream, "w");
	if (!fp)
		abort();
	for (int f = 0; f < 20; f++) {
		files[f] = malloc(1 << 20);
		lens[f] = 0;
		for (int l = 0; l < 40; l++)
			lens[f] += (size_t)sprintf(files[f] + lens[f],
						   "file %d line %d: the quick brown fox %d\n", f, l,
						   l * f);
	}
	for (int c = 1; c <= n_commits; c++) {
		int f = (c * 7) % 20;
		char msg[64];
		lens[f] += (size_t)sprintf(files[f] + lens[f], "commit %d changed this file (%d)\n",
					   c, c * 31 % 97);
		snprintf(msg, sizeof(msg), "commit %d", c);
		fprintf(fp, "commit refs/heads/main\nmark :%d\n", c);
		fprintf(fp, "committer T <t@example.invalid> %d +0000\n", 1700000000 + c);
		fprintf(fp, "data %zu\n%s\n", strlen(msg), msg);
		if (c > 1)
			fprintf(fp, "from :%d\n", c - 1);
		fprintf(fp, "M 100644 inline dir%d/file%d.txt\ndata %zu\n", f % 4, f, lens[f]);
		fwrite(files[f], 1, lens[f], fp);
		fputc('\n', fp);
	}
	fclose(fp);
	for (int f = 0; f < 20; f++)
		free(files[f]);
	fx_must("git -C '%s' fast-import --quiet < '%s' && git -C '%s' reset -q --hard main",
		repo, stream, repo);
}

static void test_incremental_size(void)
{
	const char *src = fx_path("long"), *dst = fx_path("long-copy");
	struct tbx_git_bundle_tip tip = { .name = "refs/heads/opencode/7" };
	struct tbx_git_bundle_spec spec = { .tips = &tip, .n_tips = 1 };
	struct tbx_git_bundle_stats full, inc;
	struct tbx_git_read_result res;
	git_repository *repo, *copy;
	git_oid base;
	long cli_full, cli_inc;
	int rc;

	make_long_history(src, 500);
	fx_oid(src, "main", &base);
	fx_commit(src, "dir1/file1.txt", "one small change\n", "the 501st commit");
	repo = fx_open(src);
	fx_oid(src, "HEAD", &tip.oid);
	rc = tbx_git_bundle_write_file(repo, &spec, fx_path("long-full.bundle"), &full);
	CHECK(rc == 0 && full.commits == 501, "full bundle of a 501-commit history");
	spec.basis = &base;
	spec.n_basis = 1;
	rc = tbx_git_bundle_write_file(repo, &spec, fx_path("long-inc.bundle"), &inc);
	CHECK(rc == 0 && inc.commits == 1 && inc.prerequisites == 1,
	      "incremental bundle: 1 commit, 1 prerequisite");
	fx_must("git -C '%s' bundle create -q '%s' main 2>/dev/null", src, fx_path("cli-full.b"));
	fx_must("git -C '%s' bundle create -q '%s' main ^HEAD~1 2>/dev/null", src,
		fx_path("cli-inc.b"));
	cli_full = fx_file_size(fx_path("cli-full.b"));
	cli_inc = fx_file_size(fx_path("cli-inc.b"));
	printf("# full: twinbox %llu bytes, git %ld; incremental: twinbox %llu, git %ld\n",
	       (unsigned long long)full.bytes, cli_full, (unsigned long long)inc.bytes, cli_inc);
	CHECK(inc.bytes * 20 < full.bytes && inc.bytes < 4096,
	      "one commit on 500: the incremental bundle (%llu bytes) is under 4 KiB and 20 "
	      "times smaller than the full one (%llu)", (unsigned long long)inc.bytes,
	      (unsigned long long)full.bytes);
	CHECK(fx_sh("git -C '%s' bundle verify -q '%s' >/dev/null 2>&1", src,
		    fx_path("long-inc.bundle")) == 0, "git bundle verify accepts the incremental one");

	/* A copy holding the basis takes the incremental bundle. */
	fx_must("git clone -q --no-local --branch main '%s' '%s' && git -C '%s' reset -q --hard "
		"HEAD~1", src, dst, dst);
	copy = fx_open(dst);
	rc = tbx_git_bundle_read_file(copy, fx_path("long-inc.bundle"), NULL, &res);
	CHECK(rc == 0 && res.n_updates == 1 && git_oid_equal(&res.updates[0].new_oid, &tip.oid),
	      "a repository with the basis reads the incremental bundle");
	tbx_git_read_result_clear(&res);
	CHECK(fx_sh("git -C '%s' fsck --no-dangling --no-progress >/dev/null 2>&1", dst) == 0, "fsck is happy");

	/* Nothing new: the writer says so instead of making an empty bundle. */
	spec.basis = &tip.oid;
	rc = tbx_git_bundle_write_file(repo, &spec, fx_path("empty.bundle"), &inc);
	CHECK(rc == TBX_EEXIST && access(fx_path("empty.bundle"), F_OK) != 0,
	      "a bundle with nothing new is refused and no file is left");
	git_repository_free(copy);
	git_repository_free(repo);
}

struct snapshot {
	char *refs;
	long objects;
	char *files;
};

static void snap(const char *repo, struct snapshot *s)
{
	s->refs = fx_refs(repo);
	s->objects = fx_objects(repo);
	s->files = fx_object_files(repo);
}

static int snap_same(const char *repo, const struct snapshot *a)
{
	struct snapshot b;
	int same;

	snap(repo, &b);
	same = a->refs && b.refs && strcmp(a->refs, b.refs) == 0 && a->objects == b.objects &&
	       a->files && b.files && strcmp(a->files, b.files) == 0;
	if (!same)
		printf("# before: %ld objects, refs:\n# %s\n# files: %s\n# after: %ld objects, "
		       "refs:\n# %s\n# files: %s\n", a->objects, a->refs, a->files, b.objects,
		       b.refs, b.files);
	free(b.refs);
	free(b.files);
	return same;
}

static void snap_free(struct snapshot *s)
{
	free(s->refs);
	free(s->files);
}

/* Read data into repo and require status `want` with everything unchanged. */
static void refused(const char *repo_path, const char *what, const unsigned char *data,
		    size_t len, const struct tbx_git_read_opts *opts, int want)
{
	struct tbx_git_read_result res;
	struct snapshot before;
	git_repository *repo = fx_open(repo_path);
	int rc;

	snap(repo_path, &before);
	rc = tbx_git_bundle_read_mem(repo, (const char *)data, len, opts, &res);
	tbx_git_read_result_clear(&res);
	CHECK(rc == want, "%s is refused with %s (got %s: %s)", what, tbx_status_name(want),
	      tbx_status_name(rc), tbx_error_message());
	CHECK(snap_same(repo_path, &before), "... and refs, objects and files are unchanged");
	snap_free(&before);
	git_repository_free(repo);
}

static void test_refusals(void)
{
	const char *src = fx_path("long"), *target = fx_path("target");
	struct tbx_git_bundle_tip tip = { .name = "refs/heads/opencode/3" };
	struct tbx_git_bundle_spec spec = { .tips = &tip, .n_tips = 1 };
	struct tbx_git_bundle_tip main_tip = { .name = "refs/heads/main" };
	struct tbx_git_ref_map map = { .from = "refs/heads/opencode", .to = "refs/heads/opencode/3" };
	struct tbx_git_read_opts mapped = { .map = &map, .n_map = 1 };
	git_repository *repo = fx_open(src);
	unsigned char *full, *inc, *bad;
	size_t full_len, inc_len;
	git_oid base;
	char *hex;

	/* The target holds history up to HEAD~5 of src, on main and opencode/3. */
	fx_must("git clone -q --no-local --branch main '%s' '%s' && git -C '%s' reset -q --hard "
		"HEAD~5 && git -C '%s' branch opencode/3 && git -C '%s' remote remove origin",
		src, target, target, target, target);
	fx_oid(target, "HEAD", &base);
	fx_oid(src, "HEAD", &tip.oid);
	spec.basis = &base;
	spec.n_basis = 1;
	CHECK(tbx_git_bundle_write_file(repo, &spec, fx_path("r-inc.bundle"), NULL) == 0,
	      "incremental bundle for the refusal cases");
	spec.basis = NULL;
	spec.n_basis = 0;
	CHECK(tbx_git_bundle_write_file(repo, &spec, fx_path("r-full.bundle"), NULL) == 0,
	      "full bundle for the refusal cases");
	full = read_all(fx_path("r-full.bundle"), &full_len);
	inc = read_all(fx_path("r-inc.bundle"), &inc_len);

	bad = malloc(full_len);
	memcpy(bad, full, full_len);
	for (size_t i = full_len / 2; i < full_len / 2 + 64; i++)
		bad[i] ^= 0x5a;
	refused(target, "a corrupt bundle", bad, full_len, NULL, TBX_EPROTO);
	refused(target, "a truncated bundle", full, full_len - 100, NULL, TBX_EPROTO);
	refused(target, "a bundle cut inside its header", full, 30, NULL, TBX_EPROTO);
	refused(target, "a file that is not a bundle", (const unsigned char *)"hello\n", 6, NULL,
		TBX_EPROTO);
	free(bad);

	/* Trailing garbage after a well-formed pack. */
	bad = malloc(inc_len + 10);
	memcpy(bad, inc, inc_len);
	memcpy(bad + inc_len, "0123456789", 10);
	refused(target, "a bundle with bytes after its pack", bad, inc_len + 10, NULL, TBX_EPROTO);
	free(bad);

	/* Wrong namespace, as named and through a map. */
	main_tip.oid = tip.oid;
	spec.tips = &main_tip;
	CHECK(tbx_git_bundle_write_file(repo, &spec, fx_path("r-main.bundle"), NULL) == 0,
	      "a bundle of refs/heads/main");
	spec.tips = &tip;
	bad = read_all(fx_path("r-main.bundle"), &full_len);
	refused(target, "a bundle writing refs/heads/main", bad, full_len, NULL, TBX_EPERM);
	refused(target, "a bundle whose ref is not in the map", bad, full_len, &mapped, TBX_EPERM);
	free(bad);
	{
		struct tbx_git_ref_map evil = { .from = "refs/heads/main", .to = "refs/heads/main" };
		struct tbx_git_read_opts o = { .map = &evil, .n_map = 1 };
		bad = read_all(fx_path("r-main.bundle"), &full_len);
		refused(target, "a map pointing outside refs/heads/opencode/", bad, full_len, &o,
			TBX_EPERM);
		free(bad);
	}

	/* Missing prerequisite: the incremental bundle into a repository without the basis. */
	fx_must("git init -q '%s'", fx_path("empty"));
	refused(fx_path("empty"), "an incremental bundle without its basis", inc, inc_len, NULL,
		TBX_ENOENT);

	/* A header naming a commit the pack does not carry. */
	bad = malloc(inc_len);
	memcpy(bad, inc, inc_len);
	hex = strstr((char *)bad, git_oid_tostr_s(&tip.oid));
	if (hex)
		memcpy(hex, "0123456789012345678901234567890123456789", GIT_OID_HEXSZ);
	refused(target, "a bundle whose ref names a commit it does not carry", bad, inc_len, NULL,
		TBX_EPROTO);
	free(bad);

	/* A pack that leaves out one blob its tree names (made with git pack-objects). */
	{
		const char *incomplete = fx_path("incomplete.bundle");
		fx_must("cd '%s' && blob=$(git rev-parse HEAD:dir1/file1.txt) && "
			"{ printf '# v2 git bundle\n%%s refs/heads/opencode/9\n\n' "
			"\"$(git rev-parse HEAD)\"; git rev-list --objects HEAD | cut -d' ' -f1 | "
			"grep -v \"$blob\" | git pack-objects -q --stdout; } > '%s'", src, incomplete);
		bad = read_all(incomplete, &full_len);
		refused(fx_path("empty"), "a bundle whose pack lacks an object", bad, full_len, NULL,
			TBX_EPROTO);
		free(bad);
	}

	/* The destination branch is checked out. */
	fx_must("git -C '%s' checkout -q opencode/3", target);
	refused(target, "a bundle onto the checked-out branch", inc, inc_len, NULL, TBX_EUNAVAIL);
	fx_must("git -C '%s' checkout -q main", target);

	/* And after all that, the good bundle still goes in. */
	{
		struct tbx_git_read_result res;
		git_repository *t = fx_open(target);
		int rc = tbx_git_bundle_read_mem(t, (const char *)inc, inc_len, NULL, &res);
		CHECK(rc == 0 && res.n_updates == 1 && res.updates[0].changed &&
		      !res.updates[0].backup, "the intact incremental bundle is then accepted");
		tbx_git_read_result_clear(&res);
		CHECK(fx_sh("git -C '%s' fsck --no-dangling --no-progress >/dev/null 2>&1", target) == 0, "fsck is happy");
		git_repository_free(t);
	}
	free(full);
	free(inc);
	git_repository_free(repo);
}

static void test_big_file(void)
{
	const char *src = fx_path("big"), *dst = fx_path("big-copy");
	struct tbx_git_bundle_tip tip = { .name = "refs/heads/opencode/1" };
	struct tbx_git_bundle_spec spec = { .tips = &tip, .n_tips = 1 };
	struct tbx_git_bundle_stats stats;
	struct tbx_git_read_result res;
	git_repository *repo, *copy;
	double t0, t1, t2;
	char *a, *b;
	int rc;

	fx_repo(src);
	fx_must("head -c 52428800 /dev/urandom > '%s/big.bin' && git -C '%s' add big.bin && "
		"git -C '%s' commit -q -m big", src, src, src);
	repo = fx_open(src);
	fx_oid(src, "HEAD", &tip.oid);
	t0 = now_s();
	rc = tbx_git_bundle_write_file(repo, &spec, fx_path("big.bundle"), &stats);
	t1 = now_s();
	CHECK(rc == 0 && stats.bytes > 50u * 1024 * 1024, "a 50 MB file is bundled (%llu bytes, "
	      "%.2f s)", (unsigned long long)stats.bytes, t1 - t0);
	fx_must("git init -q '%s'", dst);
	copy = fx_open(dst);
	rc = tbx_git_bundle_read_file(copy, fx_path("big.bundle"), NULL, &res);
	t2 = now_s();
	CHECK(rc == 0 && res.n_updates == 1, "and read back (%.2f s)", t2 - t1);
	tbx_git_read_result_clear(&res);
	a = fx_out("git -C '%s' rev-parse HEAD:big.bin", src);
	b = fx_out("git -C '%s' rev-parse opencode/1:big.bin", dst);
	CHECK(a && b && strcmp(a, b) == 0, "the 50 MB blob arrives intact");
	free(a);
	free(b);
	git_repository_free(copy);
	git_repository_free(repo);
	fx_must("rm -rf '%s' '%s' '%s'", src, dst, fx_path("big.bundle"));
}

static void test_repo_states(void)
{
	struct tbx_git_head head;
	git_repository *repo = NULL;
	git_oid want;
	size_t dirty;
	int rc;

	fx_must("mkdir -p '%s'", fx_path("plain"));
	rc = tbx_git_repo_open(fx_path("plain"), &repo);
	CHECK(rc == TBX_ENOENT && strstr(tbx_error_message(), "is not a git repository"),
	      "a plain directory is not a repository");

	fx_repo(fx_path("empty-repo"));
	CHECK(tbx_git_repo_open(fx_path("empty-repo"), &repo) == 0, "an empty repository opens");
	CHECK(tbx_git_repo_head(repo, &head) == 0 && head.kind == TBX_GIT_HEAD_UNBORN,
	      "an empty repository's HEAD is unborn");
	git_repository_free(repo);

	fx_must("git -C '%s' checkout -q --detach HEAD~1", fx_path("rich"));
	fx_oid(fx_path("rich"), "HEAD", &want);
	CHECK(tbx_git_repo_open(fx_path("rich"), &repo) == 0, "the rich repository opens");
	CHECK(tbx_git_repo_head(repo, &head) == 0 && head.kind == TBX_GIT_HEAD_DETACHED &&
	      git_oid_equal(&head.oid, &want), "a detached HEAD is seen as such, at its commit");
	CHECK(tbx_git_repo_dirty_count(repo, &dirty) == 0 && dirty == 0, "a clean worktree");
	fx_must("echo change >> '%s/README' && echo new > '%s/untracked.txt'", fx_path("rich"),
		fx_path("rich"));
	CHECK(tbx_git_repo_dirty_count(repo, &dirty) == 0 && dirty == 2,
	      "a changed and an untracked file make it dirty (%zu)", dirty);
	fx_must("git -C '%s' checkout -q -- README && rm '%s/untracked.txt' && "
		"git -C '%s' checkout -q main", fx_path("rich"), fx_path("rich"), fx_path("rich"));
	CHECK(tbx_git_repo_head(repo, &head) == 0 && head.kind == TBX_GIT_HEAD_BRANCH &&
	      strcmp(head.name, "main") == 0, "back on branch main");
	git_repository_free(repo);
}

static void test_refs(void)
{
	const char *r = fx_path("refs-repo");
	struct tbx_git_ref_update u;
	git_repository *repo;
	git_oid c1, c2, c3, local;
	int64_t floor;
	int busy, rc;
	char *where = NULL, *out;

	fx_repo(r);
	fx_commit(r, "a", "1\n", "c1");
	fx_oid(r, "HEAD", &c1);
	fx_commit(r, "a", "2\n", "c2");
	fx_oid(r, "HEAD", &c2);
	fx_commit(r, "a", "3\n", "c3");
	fx_oid(r, "HEAD", &c3);
	repo = fx_open(r);

	CHECK(tbx_git_branch_floor(repo, &floor) == 0 && floor == 0, "no opencode/N: floor 0");
	fx_must("git -C '%s' branch opencode/4 HEAD~2 && git -C '%s' branch opencode/12-backup-x "
		"HEAD && git -C '%s' branch opencode/007 HEAD && git -C '%s' branch opencode/x9 HEAD",
		r, r, r, r);
	CHECK(tbx_git_branch_floor(repo, &floor) == 0 && floor == 4,
	      "the floor counts only plain numbers (%lld)", (long long)floor);
	CHECK(!tbx_git_ref_is_owned("refs/heads/main") && !tbx_git_ref_is_owned("refs/heads/opencode") &&
	      !tbx_git_ref_is_owned("refs/heads/opencode/") &&
	      !tbx_git_ref_is_owned("refs/heads/opencode/a..b") &&
	      tbx_git_ref_is_owned("refs/heads/opencode/5"), "the owned namespace");

	rc = tbx_git_ref_advance(repo, "refs/heads/main", &c1, NULL, &u);
	CHECK(rc == TBX_EPERM, "main is never written");
	tbx_git_ref_update_clear(&u);

	rc = tbx_git_ref_advance(repo, "refs/heads/opencode/4", &c3, "test", &u);
	CHECK(rc == 0 && u.changed && u.had_old && !u.backup, "a fast-forward needs no backup");
	tbx_git_ref_update_clear(&u);

	/* A local commit on opencode/4 that the new tip does not have. */
	fx_must("git -C '%s' checkout -q opencode/4", r);
	fx_commit(r, "local.txt", "mine\n", "local only");
	fx_oid(r, "HEAD", &local);
	rc = tbx_git_ref_checked_out(repo, "refs/heads/opencode/4", &busy, &where);
	CHECK(rc == 0 && busy && where, "opencode/4 is seen checked out (in %s)", where);
	free(where);
	rc = tbx_git_ref_advance(repo, "refs/heads/opencode/4", &c2, "test", &u);
	CHECK(rc == TBX_EUNAVAIL, "a checked-out branch is never moved");
	tbx_git_ref_update_clear(&u);
	fx_must("git -C '%s' checkout -q main", r);

	/* The same, from a linked worktree. */
	fx_must("git -C '%s' worktree add -q '%s' opencode/4 2>/dev/null", r, fx_path("wt"));
	rc = tbx_git_ref_checked_out(repo, "refs/heads/opencode/4", &busy, &where);
	CHECK(rc == 0 && busy && where && strcmp(where, fx_path("wt")) == 0,
	      "a branch checked out in a linked worktree is seen (%s)", where ? where : "-");
	free(where);
	fx_must("git -C '%s' worktree remove --force '%s'", r, fx_path("wt"));

	rc = tbx_git_ref_advance(repo, "refs/heads/opencode/4", &c2, "test", &u);
	CHECK(rc == 0 && u.changed && u.backup && u.backup_commits == 2 &&
	      git_oid_equal(&u.old_oid, &local),
	      "local-only commits are kept under %s (%zu commits)", u.backup ? u.backup : "-",
	      u.backup_commits);
	out = u.backup ? fx_out("git -C '%s' rev-parse '%s'", r, u.backup) : NULL;
	CHECK(out && strcmp(out, git_oid_tostr_s(&local)) == 0, "the backup points at them");
	free(out);
	tbx_git_ref_update_clear(&u);
	rc = tbx_git_ref_advance(repo, "refs/heads/opencode/4", &c2, "test", &u);
	CHECK(rc == 0 && !u.changed && !u.backup, "moving to where it is changes nothing");
	tbx_git_ref_update_clear(&u);
	rc = tbx_git_ref_advance(repo, "refs/heads/opencode/9", &c1, "test", &u);
	CHECK(rc == 0 && u.changed && !u.had_old, "a new branch is created");
	tbx_git_ref_update_clear(&u);
	out = fx_out("git -C '%s' reflog -1 --format=%%gs opencode/9", r);
	CHECK(out && strcmp(out, "test") == 0, "with our reflog message (%s)", out ? out : "-");
	free(out);
	git_repository_free(repo);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	fx_init("git-bundle");
	if (tbx_git_init() < 0) {
		printf("Bail out! %s\n", tbx_error_message());
		return 1;
	}
	test_write_verify_fetch();
	test_read_git_bundles();
	test_incremental_size();
	test_refusals();
	test_repo_states();
	test_refs();
	if (!getenv("TBX_GIT_SKIP_BIG"))
		test_big_file();
	tap_plan_end();
	fx_done();
	git_libgit2_shutdown();
	return tap_failures() ? 1 : 0;
}
