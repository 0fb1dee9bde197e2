/* SPDX-License-Identifier: MIT */
/*
 * The sync steps (adopt and home) over a host-directory "sandbox": its exec
 * runs /bin/sh in a directory and its file ops are plain file I/O, as on
 * the fake engine. Checks what reaches the sandbox, what comes home, the
 * backup of local-only commits, the checked-out branch being left alone,
 * the fallback to a full bundle, and a sandbox without git. Prints TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "fixture.h"
#include "git-sync.h"

struct hostdir {
	char workdir[1024];
	char scratch[1024];
	const char *path; /* PATH for commands; NULL keeps ours */
};

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *data = NULL;
	long size;

	*len = 0;
	if (!fp)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (size = ftell(fp)) >= 0) {
		rewind(fp);
		data = malloc((size_t)size + 1);
		if (data && fread(data, 1, (size_t)size, fp) == (size_t)size) {
			data[size] = '\0';
			*len = (size_t)size;
		} else {
			free(data);
			data = NULL;
		}
	}
	fclose(fp);
	return data;
}

static int hd_exec(void *payload, const char *script, const char *const *env,
		   uint32_t timeout_ms, struct tbx_git_exec_result *out)
{
	struct hostdir *h = payload;
	char out_path[1100], err_path[1100];
	int status;
	pid_t pid;

	snprintf(out_path, sizeof(out_path), "%s.stdout", h->scratch);
	snprintf(err_path, sizeof(err_path), "%s.stderr", h->scratch);
	pid = fork();
	if (pid == 0) {
		int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 || chdir(h->workdir) != 0)
			_exit(126);
		for (size_t i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		if (h->path)
			setenv("PATH", h->path, 1);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return tbx_error_set(TBX_EIO, "cannot run a command: %s", strerror(errno));
	out->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	out->out = slurp(out_path, &out->out_len);
	out->err = slurp(err_path, &out->err_len);
	return 0;
}

static int hd_read(void *payload, const char *path, char **data, size_t *len)
{
	*data = slurp(path, len);
	return *data ? 0 : tbx_error_set(TBX_ENOENT, "no file %s", path);
}

static int hd_write(void *payload, const char *path, const char *data, size_t len)
{
	FILE *fp = fopen(path, "wb");

	if (!fp || fwrite(data, 1, len, fp) != len || fclose(fp) != 0)
		return tbx_error_set(TBX_EIO, "cannot write %s", path);
	return 0;
}

static int hd_remove(void *payload, const char *path)
{
	unlink(path);
	return 0;
}

static void sandbox_new(struct hostdir *h, struct tbx_git_sandbox *sbx, const char *name)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->workdir, sizeof(h->workdir), "%s/%s/project", fx_root(), name);
	snprintf(h->scratch, sizeof(h->scratch), "%s/%s/tmp-twinbox", fx_root(), name);
	fx_must("mkdir -p '%s'", h->workdir);
	*sbx = (struct tbx_git_sandbox){
		.exec = hd_exec, .file_read = hd_read, .file_write = hd_write,
		.file_remove = hd_remove, .payload = h, .workdir = h->workdir,
		.scratch = h->scratch,
	};
}

/* The sandbox commits with twinbox's identity: none configured there. */
static void sandbox_git(const struct hostdir *h, const char *cmd)
{
	fx_must("cd '%s' && env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL -u GIT_COMMITTER_NAME "
		"-u GIT_COMMITTER_EMAIL GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@x "
		"GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@x sh -c '%s'", h->workdir, cmd);
}

static int same_text(char *a, const char *b)
{
	int same = a && b && strcmp(a, b) == 0;

	free(a);
	return same;
}

static void make_local(const char *repo)
{
	fx_repo(repo);
	fx_commit(repo, "README", "hello\n", "first");
	fx_commit(repo, "src/a.c", "int a;\n", "second");
	fx_must("git -C '%s' checkout -q -b side && echo side > '%s/side.txt' && git -C '%s' add "
		"-A && git -C '%s' commit -q -m side && git -C '%s' checkout -q main && git -C '%s' "
		"merge -q --no-ff -m merge side", repo, repo, repo, repo, repo, repo);
}

static void test_round_trip(void)
{
	const char *local = fx_path("local");
	struct tbx_git_adopt_result adopt;
	struct tbx_git_home_result home;
	struct tbx_git_sandbox sbx;
	struct hostdir h;
	char *head, *text;
	uint64_t full_bytes;
	int rc;

	make_local(local);
	sandbox_new(&h, &sbx, "sbx1");
	rc = tbx_git_sync_adopt(local, &sbx, NULL, &adopt);
	CHECK(rc == 0 && !adopt.notice && adopt.bytes > 0 && !adopt.incremental,
	      "local HEAD is adopted into a fresh sandbox (%llu bytes)",
	      (unsigned long long)adopt.bytes);
	tbx_git_adopt_result_clear(&adopt);
	head = fx_out("git -C '%s' rev-parse HEAD", local);
	CHECK(same_text(fx_out("git -C '%s' rev-parse opencode", h.workdir), head),
	      "the sandbox's branch opencode is local HEAD");
	CHECK(same_text(fx_out("git -C '%s' symbolic-ref HEAD", h.workdir), "refs/heads/opencode"),
	      "and it is checked out");
	CHECK(same_text(fx_out("cat '%s/side.txt' && git -C '%s' status --porcelain", h.workdir,
			       h.workdir), "side"), "with its files, clean");
	CHECK(access(fx_path("sbx1/tmp-twinbox-in.bundle"), F_OK) != 0,
	      "the transfer file is removed");
	free(head);

	/* The agent works: one commit of its own, and uncommitted changes. */
	sandbox_git(&h, "echo agent > agent.txt && git add agent.txt && git commit -q -m agent");
	fx_must("printf '\\000\\001binary\\377' > '%s/data.bin' && echo more >> '%s/README'",
		h.workdir, h.workdir);
	rc = tbx_git_sync_home(local, 1, &sbx, NULL, &home);
	CHECK(rc == 0 && home.has_tip && !home.up_to_date && home.committed,
	      "the sandbox's work comes home");
	CHECK(home.commits == 2 && home.files_changed == 3 && strcmp(home.branch, "opencode/1") == 0,
	      "2 commits, 3 files, on opencode/1 (%zu, %zu, %s)", home.commits, home.files_changed,
	      home.branch);
	CHECK(same_text(fx_out("git -C '%s' rev-parse opencode/1", local),
			git_oid_tostr_s(&home.tip)), "local opencode/1 is at the sandbox's tip");
	CHECK(same_text(fx_out("git -C '%s' log -1 --format='%%an <%%ae>' opencode/1", local),
			TBX_GIT_SYNC_NAME " <" TBX_GIT_SYNC_EMAIL ">"),
	      "the sandbox committed with twinbox's identity");
	CHECK(same_text(fx_out("git -C '%s' show opencode/1:data.bin | od -An -c | tr -s ' '",
			       local), " \\0 001 b i n a r y 377"), "a binary file comes through");
	CHECK(same_text(fx_out("git -C '%s' symbolic-ref HEAD && git -C '%s' status --porcelain",
			       local, local), "refs/heads/main"),
	      "the user's worktree and branch are untouched");
	text = tbx_git_home_summary(&home);
	printf("# %s\n", text);
	free(text);
	full_bytes = home.bytes;
	tbx_git_home_result_clear(&home);

	/* One more change: the bundle is incremental. */
	fx_must("echo again >> '%s/agent.txt'", h.workdir);
	rc = tbx_git_sync_home(local, 1, &sbx, NULL, &home);
	CHECK(rc == 0 && home.incremental && home.commits == 1 && home.files_changed == 1,
	      "the next sync is incremental: 1 commit, 1 file (%llu bytes)",
	      (unsigned long long)home.bytes);
	printf("# first sync %llu bytes, second %llu\n", (unsigned long long)full_bytes,
	       (unsigned long long)home.bytes);
	tbx_git_home_result_clear(&home);

	rc = tbx_git_sync_home(local, 1, &sbx, NULL, &home);
	CHECK(rc == 0 && home.up_to_date && home.has_tip && home.bytes == 0,
	      "with nothing new, nothing moves");
	text = tbx_git_home_summary(&home);
	CHECK(text && strstr(text, "Nothing new to sync"), "and the summary says so: %s", text);
	free(text);
	tbx_git_home_result_clear(&home);

	/* A commit made locally on opencode/1 survives the next sync. */
	fx_must("git -C '%s' checkout -q opencode/1 && echo mine > '%s/mine.txt' && git -C '%s' add "
		"mine.txt && git -C '%s' commit -q -m 'local only' && git -C '%s' checkout -q main",
		local, local, local, local, local);
	head = fx_out("git -C '%s' rev-parse opencode/1", local);
	fx_must("echo third >> '%s/agent.txt'", h.workdir);
	rc = tbx_git_sync_home(local, 1, &sbx, NULL, &home);
	CHECK(rc == 0 && home.backup && home.backup_commits == 1,
	      "local-only commits on opencode/1 are kept (%s)", home.backup ? home.backup : "-");
	if (home.backup)
		CHECK(same_text(fx_out("git -C '%s' rev-parse '%s'", local, home.backup), head),
		      "the backup branch holds them");
	text = tbx_git_home_summary(&home);
	CHECK(text && strstr(text, "are kept on opencode/1-backup-"), "the summary says where: %s",
	      text);
	free(text);
	free(head);
	tbx_git_home_result_clear(&home);

	/* opencode/1 checked out, with local edits: left alone; the work goes to -incoming. */
	fx_must("git -C '%s' checkout -q opencode/1 && echo 'my edit' >> '%s/README'", local, local);
	head = fx_out("git -C '%s' rev-parse opencode/1 && git -C '%s' status --porcelain && "
		      "md5sum < '%s/README'", local, local, local);
	fx_must("echo fourth >> '%s/agent.txt'", h.workdir);
	rc = tbx_git_sync_home(local, 1, &sbx, NULL, &home);
	CHECK(rc == 0 && strcmp(home.branch, "opencode/1-incoming") == 0 && home.notice &&
	      strstr(home.notice, "is checked out"), "with opencode/1 checked out the work goes "
	      "to %s", home.branch);
	CHECK(same_text(fx_out("git -C '%s' rev-parse opencode/1 && git -C '%s' status "
			       "--porcelain && md5sum < '%s/README'", local, local, local), head),
	      "and the checked-out branch and its files are untouched");
	CHECK(same_text(fx_out("git -C '%s' rev-parse opencode/1-incoming", local),
			git_oid_tostr_s(&home.tip)), "opencode/1-incoming has the tip");
	free(head);
	tbx_git_home_result_clear(&home);
	fx_must("git -C '%s' checkout -q -- README && git -C '%s' checkout -q main", local, local);

	/* A repository without the basis: the bundle falls back to the whole branch. */
	fx_repo(fx_path("elsewhere"));
	fx_commit(fx_path("elsewhere"), "x", "x\n", "unrelated");
	rc = tbx_git_sync_home(fx_path("elsewhere"), 5, &sbx, NULL, &home);
	CHECK(rc == 0 && !home.incremental && home.has_tip && !home.up_to_date,
	      "without the basis locally, the whole branch comes (%llu bytes)",
	      (unsigned long long)home.bytes);
	CHECK(same_text(fx_out("git -C '%s' rev-parse opencode/5", fx_path("elsewhere")),
			git_oid_tostr_s(&home.tip)), "onto opencode/5 there");
	tbx_git_home_result_clear(&home);

	/* A resumed sandbox holding an older commit gets only what is new. */
	fx_commit(local, "src/b.c", "int b;\n", "local progress");
	rc = tbx_git_sync_adopt(local, &sbx, NULL, &adopt);
	CHECK(rc == 0 && adopt.incremental && adopt.bytes < 2048,
	      "adopting into a sandbox that holds a basis is incremental (%llu bytes)",
	      (unsigned long long)adopt.bytes);
	tbx_git_adopt_result_clear(&adopt);
}

static void test_states(void)
{
	const char *local = fx_path("local");
	struct tbx_git_adopt_result adopt;
	struct tbx_git_home_result home;
	struct tbx_git_sandbox sbx;
	struct hostdir h;
	char *head, *text;
	int rc;

	/* Dirty local worktree. */
	fx_must("echo wip >> '%s/README' && echo new > '%s/untracked.txt'", local, local);
	sandbox_new(&h, &sbx, "sbx-dirty");
	rc = tbx_git_sync_adopt(local, &sbx, NULL, &adopt);
	CHECK(rc == 0 && adopt.dirty == 2 && adopt.notice &&
	      strstr(adopt.notice, "uncommitted changes are not in the sandbox"),
	      "a dirty worktree is said plainly: %s", adopt.notice ? adopt.notice : "-");
	CHECK(same_text(fx_out("cat '%s/README'", h.workdir), "hello"),
	      "and the sandbox has the committed state");
	tbx_git_adopt_result_clear(&adopt);
	fx_must("git -C '%s' checkout -q -- README && rm '%s/untracked.txt'", local, local);

	/* Detached HEAD. */
	fx_must("git -C '%s' checkout -q --detach HEAD~1", local);
	head = fx_out("git -C '%s' rev-parse HEAD", local);
	sandbox_new(&h, &sbx, "sbx-detached");
	rc = tbx_git_sync_adopt(local, &sbx, NULL, &adopt);
	CHECK(rc == 0 && same_text(fx_out("git -C '%s' rev-parse opencode", h.workdir), head),
	      "a detached HEAD is adopted as opencode");
	free(head);
	tbx_git_adopt_result_clear(&adopt);
	fx_must("git -C '%s' checkout -q main", local);

	/* Empty repository. */
	fx_repo(fx_path("empty"));
	sandbox_new(&h, &sbx, "sbx-empty");
	rc = tbx_git_sync_adopt(fx_path("empty"), &sbx, NULL, &adopt);
	CHECK(rc == 0 && same_text(fx_out("git -C '%s' symbolic-ref HEAD", h.workdir),
				   "refs/heads/opencode"),
	      "an empty repository gives an empty sandbox repository on opencode");
	tbx_git_adopt_result_clear(&adopt);
	rc = tbx_git_sync_home(fx_path("empty"), 1, &sbx, NULL, &home);
	text = tbx_git_home_summary(&home);
	CHECK(rc == 0 && !home.has_tip && text && strstr(text, "no commits"),
	      "syncing nothing says so: %s", text ? text : "-");
	free(text);
	tbx_git_home_result_clear(&home);
	fx_must("echo first > '%s/first.txt'", h.workdir);
	rc = tbx_git_sync_home(fx_path("empty"), 1, &sbx, NULL, &home);
	CHECK(rc == 0 && home.commits == 1 && home.files_changed == 1 && !home.incremental,
	      "the first commit of an empty repository comes home");
	tbx_git_home_result_clear(&home);

	/* Not a repository. */
	fx_must("mkdir -p '%s'", fx_path("plain"));
	sandbox_new(&h, &sbx, "sbx-plain");
	rc = tbx_git_sync_adopt(fx_path("plain"), &sbx, NULL, &adopt);
	CHECK(rc == TBX_ENOENT && strstr(tbx_error_message(), "not a git repository"),
	      "a plain directory disables sync: %s", tbx_error_message());
	tbx_git_adopt_result_clear(&adopt);

	/* A sandbox without git. */
	sandbox_new(&h, &sbx, "sbx-nogit");
	h.path = "/nonexistent";
	rc = tbx_git_sync_adopt(local, &sbx, NULL, &adopt);
	CHECK(rc == TBX_ENOTSUP && strstr(tbx_error_message(), "no git"),
	      "adopting into a sandbox without git says so: %s", tbx_error_message());
	tbx_git_adopt_result_clear(&adopt);
	rc = tbx_git_sync_home(local, 2, &sbx, NULL, &home);
	CHECK(rc == TBX_ENOTSUP && strstr(tbx_error_message(), "install git"),
	      "and gitSync says so clearly: %s", tbx_error_message());
	tbx_git_home_result_clear(&home);
}

static void test_progress_and_floor(void)
{
	int64_t floor;

	CHECK(tbx_git_sync_branch_floor(fx_path("local"), &floor) == 0 && floor == 1,
	      "the floor of the local repository is 1 (%lld)", (long long)floor);
	CHECK(tbx_git_sync_branch_floor(fx_path("plain"), &floor) == 0 && floor == 0,
	      "a plain directory has floor 0");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	fx_init("git-sync");
	if (tbx_git_init() < 0) {
		printf("Bail out! %s\n", tbx_error_message());
		return 1;
	}
	test_round_trip();
	test_states();
	test_progress_and_floor();
	tap_plan_end();
	fx_done();
	git_libgit2_shutdown();
	return tap_failures() ? 1 : 0;
}
