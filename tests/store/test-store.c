/* SPDX-License-Identifier: MIT */
/* Unit tests of the store: sessions, branch numbers, migrations, refusals, concurrency. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "store.h"

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: check failed: %s\n  last store error: %s\n", \
				__FILE__, __LINE__, #cond, tbx_error_message());           \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

#define CHECK_INT(got, want)                                                               \
	do {                                                                               \
		long long got_ = (long long)(got), want_ = (long long)(want);              \
		if (got_ != want_) {                                                       \
			fprintf(stderr, "%s:%d: %s is %lld, expected %lld\n  last store "   \
				"error: %s\n", __FILE__, __LINE__, #got, got_, want_,      \
				tbx_error_message());                                      \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

#define CHECK_STR(got, want)                                                               \
	do {                                                                               \
		const char *got_ = (got), *want_ = (want);                                 \
		if (!got_ || !want_ ? got_ != want_ : strcmp(got_, want_) != 0) {          \
			fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, \
				__LINE__, #got, got_ ? got_ : "(null)",                    \
				want_ ? want_ : "(null)");                                 \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

static char tmp_root[512];

/* A fresh path under the test's temporary directory. */
static char *tmp_path(const char *name)
{
	static char buf[8][1024];
	static int next;
	char *p = buf[next++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmp_root, name);
	return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static char *read_all(const char *path, size_t *len_out)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, len = 0, got;

	CHECK(f != NULL);
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			buf = realloc(buf, cap);
			CHECK(buf != NULL);
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	fclose(f);
	*len_out = len;
	return buf;
}

/* Run SQL on a plain SQLite connection: builds fixtures and inspects results. */
static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	char *err = NULL;

	CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "fixture SQL failed: %s\n", err);
		exit(1);
	}
	CHECK(sqlite3_close(db) == SQLITE_OK);
}

/* First column of the first row of a query, as an integer or (if text_out) a string. */
static long long raw_query(const char *path, const char *sql, char *text_out, size_t text_len)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *stmt = NULL;
	long long v;

	CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
	CHECK(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) == SQLITE_OK);
	CHECK(sqlite3_step(stmt) == SQLITE_ROW);
	v = sqlite3_column_int64(stmt, 0);
	if (text_out)
		snprintf(text_out, text_len, "%s", (const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	return v;
}

static void make_session(struct tbx_session_row *row, const char *id, const char *frontend,
			 const char *key)
{
	memset(row, 0, sizeof(*row));
	row->id = (char *)id;
	row->frontend = (char *)frontend;
	row->external_key = (char *)key;
	row->project_dir = (char *)"/home/u/proj";
	row->repo_root = (char *)"/home/u/proj";
	row->engine = (char *)"local";
}

static void test_open_fresh(void)
{
	const char *path = tmp_path("fresh/a/b/state.db");
	struct tbx_store *store = NULL;
	struct stat st;
	char buf[64], wal[1100];

	CHECK_INT(tbx_store_open(path, &store), 0);
	CHECK(store != NULL);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0600);
	CHECK_INT(stat(tmp_path("fresh/a"), &st), 0);
	CHECK_INT(st.st_mode & 07777, 0700);
	CHECK_INT(stat(tmp_path("fresh/a/b"), &st), 0);
	CHECK_INT(st.st_mode & 07777, 0700);
	/* The WAL file must not be more readable than the database. */
	snprintf(wal, sizeof(wal), "%s-wal", path);
	CHECK_INT(stat(wal, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0600);
	snprintf(wal, sizeof(wal), "%s-shm", path);
	CHECK_INT(stat(wal, &st), 0);
	CHECK_INT(st.st_mode & 07777, 0600);
	CHECK_INT(tbx_store_schema_version(store), TBX_STORE_SCHEMA_VERSION);
	tbx_store_close(store);

	raw_query(path, "PRAGMA journal_mode", buf, sizeof(buf));
	CHECK_STR(buf, "wal");
	CHECK_INT(raw_query(path, "PRAGMA user_version", NULL, 0), TBX_STORE_SCHEMA_VERSION);
	CHECK_INT(raw_query(path, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
			    "name IN ('sessions', 'branches', 'events', 'receipts')", NULL, 0), 4);

	/* An empty file is an empty database too (someone touched it first). */
	path = tmp_path("empty.db");
	close(open(path, O_CREAT | O_WRONLY, 0600));
	CHECK_INT(tbx_store_open(path, &store), 0);
	CHECK_INT(tbx_store_schema_version(store), TBX_STORE_SCHEMA_VERSION);
	tbx_store_close(store);
}

static void test_sessions(void)
{
	struct tbx_store *store = NULL;
	struct tbx_session_row row, got = { 0 }, *rows = NULL;
	size_t n = 0;
	int64_t used;

	CHECK_INT(tbx_store_open(tmp_path("sessions.db"), &store), 0);

	make_session(&row, "ses_aaaaaaaaaaaaaaaaaaaa", "opencode", "oc-1");
	row.twin_id = (char *)"twin_1";
	row.no_twin = 0;
	row.created_at = 1000;
	row.updated_at = 1001;
	row.last_used_at = 1002;
	CHECK_INT(tbx_store_session_insert(store, &row), 0);

	/* Round trip of every column. */
	CHECK_INT(tbx_store_session_get(store, "ses_aaaaaaaaaaaaaaaaaaaa", &got), 0);
	CHECK_STR(got.id, "ses_aaaaaaaaaaaaaaaaaaaa");
	CHECK_STR(got.frontend, "opencode");
	CHECK_STR(got.external_key, "oc-1");
	CHECK_STR(got.project_dir, "/home/u/proj");
	CHECK_STR(got.repo_root, "/home/u/proj");
	CHECK_STR(got.engine, "local");
	CHECK_STR(got.sandbox_id, NULL);
	CHECK_STR(got.workdir, NULL);
	CHECK_STR(got.twin_id, "twin_1");
	CHECK_INT(got.branch_number, 0);
	CHECK_INT(got.no_twin, 0);
	CHECK_STR(got.state, TBX_SESSION_OPEN);
	CHECK_INT(got.created_at, 1000);
	CHECK_INT(got.updated_at, 1001);
	CHECK_INT(got.last_used_at, 1002);
	tbx_session_row_clear(&got);
	CHECK(got.id == NULL);

	/* Zero timestamps become now, NULL repo stays NULL, no_twin is kept. */
	make_session(&row, "ses_bbbbbbbbbbbbbbbbbbbb", "mcp", "conn-7");
	row.repo_root = NULL;
	row.no_twin = 1;
	row.created_at = 500; /* older than the first: list must put it first */
	CHECK_INT(tbx_store_session_insert(store, &row), 0);
	CHECK_INT(tbx_store_session_get(store, "ses_bbbbbbbbbbbbbbbbbbbb", &got), 0);
	CHECK_STR(got.repo_root, NULL);
	CHECK_INT(got.no_twin, 1);
	CHECK(got.updated_at > 1600000000000LL);
	CHECK(got.last_used_at > 1600000000000LL);
	tbx_session_row_clear(&got);

	/* Find by frontend and key, and not by another frontend's key. */
	CHECK_INT(tbx_store_session_find(store, "opencode", "oc-1", &got), 0);
	CHECK_STR(got.id, "ses_aaaaaaaaaaaaaaaaaaaa");
	tbx_session_row_clear(&got);
	CHECK_INT(tbx_store_session_find(store, "mcp", "oc-1", &got), TBX_ENOENT);
	CHECK_INT(tbx_error_status(), TBX_ENOENT);

	/* Unknown ids. */
	tbx_error_clear();
	CHECK_INT(tbx_store_session_get(store, "ses_nope", &got), TBX_ENOENT);
	CHECK_INT(tbx_error_status(), TBX_ENOENT);
	CHECK(strstr(tbx_error_message(), "ses_nope") != NULL);
	CHECK_INT(tbx_store_session_set_sandbox(store, "ses_nope", "sbx", "/w"), TBX_ENOENT);
	CHECK_INT(tbx_store_session_set_state(store, "ses_nope", TBX_SESSION_CLOSED), TBX_ENOENT);
	CHECK_INT(tbx_store_session_set_twin(store, "ses_nope", "t"), TBX_ENOENT);
	CHECK_INT(tbx_store_session_touch(store, "ses_nope"), TBX_ENOENT);

	/* Bad input. */
	CHECK_INT(tbx_store_session_set_state(store, "ses_aaaaaaaaaaaaaaaaaaaa", "paused"),
		  TBX_EINVAL);
	make_session(&row, "ses_cccccccccccccccccccc", "cli", "x");
	row.engine = NULL;
	CHECK_INT(tbx_store_session_insert(store, &row), TBX_EINVAL);

	/* Duplicates: same id, or same live (frontend, key). */
	make_session(&row, "ses_aaaaaaaaaaaaaaaaaaaa", "cli", "other");
	CHECK_INT(tbx_store_session_insert(store, &row), TBX_EEXIST);
	make_session(&row, "ses_dddddddddddddddddddd", "opencode", "oc-1");
	CHECK_INT(tbx_store_session_insert(store, &row), TBX_EEXIST);
	CHECK(strstr(tbx_error_message(), "oc-1") != NULL);

	/* Sandbox recorded, then forgotten (workdir goes with it). */
	CHECK_INT(tbx_store_session_set_sandbox(store, "ses_aaaaaaaaaaaaaaaaaaaa", "sbx_1",
						"/workspace/proj"), 0);
	CHECK_INT(tbx_store_session_get(store, "ses_aaaaaaaaaaaaaaaaaaaa", &got), 0);
	CHECK_STR(got.sandbox_id, "sbx_1");
	CHECK_STR(got.workdir, "/workspace/proj");
	CHECK(got.updated_at > 1001);
	tbx_session_row_clear(&got);
	CHECK_INT(tbx_store_session_set_sandbox(store, "ses_aaaaaaaaaaaaaaaaaaaa", NULL,
						"/ignored"), 0);
	CHECK_INT(tbx_store_session_get(store, "ses_aaaaaaaaaaaaaaaaaaaa", &got), 0);
	CHECK_STR(got.sandbox_id, NULL);
	CHECK_STR(got.workdir, NULL);
	tbx_session_row_clear(&got);

	/* Twin cleared and set. */
	CHECK_INT(tbx_store_session_set_twin(store, "ses_aaaaaaaaaaaaaaaaaaaa", NULL), 0);
	CHECK_INT(tbx_store_session_get(store, "ses_aaaaaaaaaaaaaaaaaaaa", &got), 0);
	CHECK_STR(got.twin_id, NULL);
	tbx_session_row_clear(&got);
	CHECK_INT(tbx_store_session_set_twin(store, "ses_aaaaaaaaaaaaaaaaaaaa", "twin_2"), 0);

	/* Touch moves last_used_at only. */
	CHECK_INT(tbx_store_session_get(store, "ses_bbbbbbbbbbbbbbbbbbbb", &got), 0);
	used = got.last_used_at;
	int64_t updated = got.updated_at;
	tbx_session_row_clear(&got);
	usleep(5000);
	CHECK_INT(tbx_store_session_touch(store, "ses_bbbbbbbbbbbbbbbbbbbb"), 0);
	CHECK_INT(tbx_store_session_get(store, "ses_bbbbbbbbbbbbbbbbbbbb", &got), 0);
	CHECK(got.last_used_at > used);
	CHECK_INT(got.updated_at, updated);
	tbx_session_row_clear(&got);

	/* List: live sessions, oldest first. */
	CHECK_INT(tbx_store_session_list(store, &rows, &n), 0);
	CHECK_INT(n, 2);
	CHECK_STR(rows[0].id, "ses_bbbbbbbbbbbbbbbbbbbb");
	CHECK_STR(rows[1].id, "ses_aaaaaaaaaaaaaaaaaaaa");
	CHECK_STR(rows[1].twin_id, "twin_2");
	tbx_session_rows_free(rows, n);

	/* Closed is still live: found and listed. */
	CHECK_INT(tbx_store_session_set_state(store, "ses_aaaaaaaaaaaaaaaaaaaa",
					      TBX_SESSION_CLOSED), 0);
	CHECK_INT(tbx_store_session_find(store, "opencode", "oc-1", &got), 0);
	CHECK_STR(got.state, TBX_SESSION_CLOSED);
	tbx_session_row_clear(&got);

	/* Deleted is a tombstone: still gettable, no longer found or listed, key free again. */
	CHECK_INT(tbx_store_session_set_state(store, "ses_aaaaaaaaaaaaaaaaaaaa",
					      TBX_SESSION_DELETED), 0);
	CHECK_INT(tbx_store_session_get(store, "ses_aaaaaaaaaaaaaaaaaaaa", &got), 0);
	CHECK_STR(got.state, TBX_SESSION_DELETED);
	CHECK_STR(got.twin_id, "twin_2");
	tbx_session_row_clear(&got);
	CHECK_INT(tbx_store_session_find(store, "opencode", "oc-1", &got), TBX_ENOENT);
	CHECK_INT(tbx_store_session_list(store, &rows, &n), 0);
	CHECK_INT(n, 1);
	CHECK_STR(rows[0].id, "ses_bbbbbbbbbbbbbbbbbbbb");
	tbx_session_rows_free(rows, n);
	CHECK_INT(tbx_store_session_set_state(store, "ses_aaaaaaaaaaaaaaaaaaaa", TBX_SESSION_OPEN),
		  TBX_EINVAL);
	make_session(&row, "ses_eeeeeeeeeeeeeeeeeeee", "opencode", "oc-1");
	CHECK_INT(tbx_store_session_insert(store, &row), 0);
	CHECK_INT(tbx_store_session_find(store, "opencode", "oc-1", &got), 0);
	CHECK_STR(got.id, "ses_eeeeeeeeeeeeeeeeeeee");
	tbx_session_row_clear(&got);
	/* A second deleted session with the same key is fine as well. */
	CHECK_INT(tbx_store_session_set_state(store, "ses_eeeeeeeeeeeeeeeeeeee",
					      TBX_SESSION_DELETED), 0);

	/* Events belong to a known session and are JSON. */
	CHECK_INT(tbx_store_event_append(store, "ses_bbbbbbbbbbbbbbbbbbbb", "exec",
					 "{\"cmd\":\"ls\"}"), 0);
	CHECK_INT(tbx_store_event_append(store, "ses_nope", "exec", "{}"), TBX_ENOENT);
	CHECK_INT(tbx_store_event_append(store, "ses_bbbbbbbbbbbbbbbbbbbb", "exec", "{oops"),
		  TBX_EINVAL);
	tbx_store_close(store);
	CHECK_INT(raw_query(tmp_path("sessions.db"), "SELECT count(*) FROM events", NULL, 0), 1);
	CHECK_INT(raw_query(tmp_path("sessions.db"), "SELECT count(*) FROM sessions", NULL, 0), 3);
}

static void test_branches(void)
{
	struct tbx_store *store = NULL;
	struct tbx_session_row row, got;
	int64_t n = -1;

	CHECK_INT(tbx_store_open(tmp_path("branches.db"), &store), 0);
	make_session(&row, "ses_1", "cli", "one");
	CHECK_INT(tbx_store_session_insert(store, &row), 0);

	CHECK_INT(tbx_store_branch_allocate(store, "/r/a", "ses_1", 0, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(tbx_store_branch_allocate(store, "/r/a", "ses_1", 0, &n), 0);
	CHECK_INT(n, 2);
	/* The floor (branches already present locally) wins when higher... */
	CHECK_INT(tbx_store_branch_allocate(store, "/r/a", "ses_1", 10, &n), 0);
	CHECK_INT(n, 11);
	/* ...and never pulls the ledger back down. */
	CHECK_INT(tbx_store_branch_allocate(store, "/r/a", "ses_1", 5, &n), 0);
	CHECK_INT(n, 12);
	CHECK_INT(tbx_store_session_get(store, "ses_1", &got), 0);
	CHECK_INT(got.branch_number, 12);
	tbx_session_row_clear(&got);

	/* Repositories count independently. */
	CHECK_INT(tbx_store_branch_allocate(store, "/r/b", "ses_1", 0, &n), 0);
	CHECK_INT(n, 1);

	/* Refusals consume nothing. */
	CHECK_INT(tbx_store_branch_allocate(store, "/r/a", "ses_nope", 0, &n), TBX_ENOENT);
	CHECK_INT(n, 0);
	CHECK_INT(tbx_store_branch_allocate(store, "relative", "ses_1", 0, &n), TBX_EINVAL);
	CHECK_INT(tbx_store_branch_allocate(store, "/r/a", "ses_1", -1, &n), TBX_EINVAL);
	CHECK_INT(tbx_store_branch_allocate(store, "/r/a", "ses_1", 0, &n), 0);
	CHECK_INT(n, 13);
	tbx_store_close(store);

	/* Reopening keeps the ledger: numbers continue, never restart. */
	CHECK_INT(tbx_store_open(tmp_path("branches.db"), &store), 0);
	CHECK_INT(tbx_store_branch_allocate(store, "/r/a", "ses_1", 0, &n), 0);
	CHECK_INT(n, 14);
	CHECK_INT(tbx_store_session_get(store, "ses_1", &got), 0);
	CHECK_STR(got.external_key, "one");
	tbx_session_row_clear(&got);
	tbx_store_close(store);
}

#define N_THREADS 8
#define N_PER_WORKER 50

struct worker {
	struct tbx_store *store;
	char session_id[32];
	int64_t got[N_PER_WORKER];
	int failed;
};

static void *branch_worker(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < N_PER_WORKER; i++) {
		if (tbx_store_branch_allocate(w->store, "/r/threads", w->session_id, 0,
					      &w->got[i]) < 0) {
			fprintf(stderr, "thread allocation failed: %s\n", tbx_error_message());
			w->failed = 1;
			break;
		}
	}
	return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* all[] must be exactly 1..n: distinct, and no number skipped. */
static void check_one_to_n(int64_t *all, size_t n)
{
	qsort(all, n, sizeof(*all), cmp_i64);
	for (size_t i = 0; i < n; i++)
		CHECK_INT(all[i], (int64_t)i + 1);
}

static void test_branch_threads(void)
{
	static struct worker workers[N_THREADS];
	static int64_t all[N_THREADS * N_PER_WORKER];
	pthread_t threads[N_THREADS];
	struct tbx_store *store = NULL;
	struct tbx_session_row row;

	CHECK_INT(tbx_store_open(tmp_path("threads.db"), &store), 0);
	for (int t = 0; t < N_THREADS; t++) {
		workers[t].store = store;
		snprintf(workers[t].session_id, sizeof(workers[t].session_id), "ses_t%d", t);
		make_session(&row, workers[t].session_id, "cli", workers[t].session_id);
		CHECK_INT(tbx_store_session_insert(store, &row), 0);
	}
	for (int t = 0; t < N_THREADS; t++)
		CHECK_INT(pthread_create(&threads[t], NULL, branch_worker, &workers[t]), 0);
	for (int t = 0; t < N_THREADS; t++) {
		CHECK_INT(pthread_join(threads[t], NULL), 0);
		CHECK_INT(workers[t].failed, 0);
		/* Each thread sees its own numbers strictly increase. */
		for (int i = 1; i < N_PER_WORKER; i++)
			CHECK(workers[t].got[i] > workers[t].got[i - 1]);
		memcpy(&all[t * N_PER_WORKER], workers[t].got, sizeof(workers[t].got));
	}
	check_one_to_n(all, N_THREADS * N_PER_WORKER);
	tbx_store_close(store);
}

#define N_PROCS 2

/* A child: wait for the start signal, then open (racing the other child) and allocate. */
static void branch_child(const char *path, int index, int start_fd, int out_fd)
{
	struct tbx_store *store = NULL;
	struct tbx_session_row row;
	char id[32];
	char c;

	/* EOF on start_fd is the starting gun: both children open at the same moment. */
	if (read(start_fd, &c, 1) != 0)
		_exit(2);
	if (tbx_store_open(path, &store) < 0) {
		fprintf(stderr, "child %d: open: %s\n", index, tbx_error_message());
		_exit(3);
	}
	snprintf(id, sizeof(id), "ses_p%d", index);
	make_session(&row, id, "cli", id);
	if (tbx_store_session_insert(store, &row) < 0) {
		fprintf(stderr, "child %d: insert: %s\n", index, tbx_error_message());
		_exit(4);
	}
	for (int i = 0; i < N_PER_WORKER; i++) {
		int64_t n;

		if (tbx_store_branch_allocate(store, "/r/procs", id, 0, &n) < 0) {
			fprintf(stderr, "child %d: allocate: %s\n", index, tbx_error_message());
			_exit(5);
		}
		if (write(out_fd, &n, sizeof(n)) != sizeof(n))
			_exit(6);
	}
	tbx_store_close(store);
	_exit(0);
}

static void test_branch_processes(void)
{
	/* No database yet: the children also race creating and migrating it. */
	const char *path = tmp_path("procs/state.db");
	int64_t all[N_PROCS * N_PER_WORKER];
	int start[2], out[N_PROCS][2];
	pid_t pids[N_PROCS];
	size_t total = 0;

	CHECK_INT(pipe(start), 0);
	for (int p = 0; p < N_PROCS; p++) {
		CHECK_INT(pipe(out[p]), 0);
		pids[p] = fork();
		CHECK(pids[p] >= 0);
		if (pids[p] == 0) {
			close(start[1]);
			close(out[p][0]);
			branch_child(path, p, start[0], out[p][1]);
		}
		close(out[p][1]);
	}
	close(start[0]);
	close(start[1]);
	for (int p = 0; p < N_PROCS; p++) {
		ssize_t got;
		int status;

		while ((got = read(out[p][0], (char *)all + total * sizeof(int64_t),
				   sizeof(all) - total * sizeof(int64_t))) > 0)
			total += (size_t)got / sizeof(int64_t);
		close(out[p][0]);
		CHECK_INT(waitpid(pids[p], &status, 0), pids[p]);
		CHECK(WIFEXITED(status));
		CHECK_INT(WEXITSTATUS(status), 0);
	}
	CHECK_INT(total, N_PROCS * N_PER_WORKER);
	check_one_to_n(all, total);
	CHECK_INT(raw_query(path, "SELECT count(*) FROM branches", NULL, 0),
		  N_PROCS * N_PER_WORKER);
	CHECK_INT(raw_query(path, "PRAGMA user_version", NULL, 0), TBX_STORE_SCHEMA_VERSION);
}

/*
 * Frozen copies of each released schema, with data, exactly as that version
 * of twinbox left them. Never edit one; add the next when the schema moves.
 */
struct fixture {
	const char *sql;                /* builds a database at this version */
	void (*check)(struct tbx_store *store); /* the data survived migration */
};

static void check_v1_data(struct tbx_store *store)
{
	struct tbx_session_row got;
	int64_t n;

	CHECK_INT(tbx_store_session_get(store, "ses_v1live", &got), 0);
	CHECK_STR(got.frontend, "opencode");
	CHECK_STR(got.external_key, "oc-old");
	CHECK_STR(got.project_dir, "/home/u/old");
	CHECK_STR(got.repo_root, "/home/u/old");
	CHECK_STR(got.engine, "e2b");
	CHECK_STR(got.sandbox_id, "sbx_old");
	CHECK_STR(got.workdir, "/home/user/old");
	CHECK_STR(got.twin_id, "twin_old");
	CHECK_INT(got.branch_number, 7);
	CHECK_INT(got.no_twin, 0);
	CHECK_STR(got.state, TBX_SESSION_OPEN);
	CHECK_INT(got.created_at, 1700000000000LL);
	CHECK_INT(got.updated_at, 1700000000001LL);
	CHECK_INT(got.last_used_at, 1700000000002LL);
	tbx_session_row_clear(&got);
	CHECK_INT(tbx_store_session_get(store, "ses_v1dead", &got), 0);
	CHECK_STR(got.state, TBX_SESSION_DELETED);
	CHECK_STR(got.repo_root, NULL);
	CHECK_INT(got.no_twin, 1);
	tbx_session_row_clear(&got);
	CHECK_INT(tbx_store_session_find(store, "opencode", "oc-old", &got), 0);
	CHECK_STR(got.id, "ses_v1live");
	tbx_session_row_clear(&got);
	/* opencode/7 was handed out under version 1: it must not come back. */
	CHECK_INT(tbx_store_branch_allocate(store, "/home/u/old", "ses_v1live", 0, &n), 0);
	CHECK_INT(n, 8);
	CHECK_INT(tbx_store_event_append(store, "ses_v1live", "migrated", "{}"), 0);
}

static const struct fixture fixtures[] = {
	/* Version 0: an empty database, as a first start finds it. */
	{ "", NULL },
	/* Version 1: sessions only. */
	{ "CREATE TABLE sessions ("
	  "  id TEXT PRIMARY KEY NOT NULL,"
	  "  frontend TEXT NOT NULL,"
	  "  external_key TEXT NOT NULL,"
	  "  project_dir TEXT NOT NULL,"
	  "  repo_root TEXT,"
	  "  engine TEXT NOT NULL,"
	  "  sandbox_id TEXT,"
	  "  workdir TEXT,"
	  "  twin_id TEXT,"
	  "  branch_number INTEGER NOT NULL DEFAULT 0 CHECK (branch_number >= 0),"
	  "  no_twin INTEGER NOT NULL DEFAULT 0 CHECK (no_twin IN (0, 1)),"
	  "  state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed', 'deleted')),"
	  "  created_at INTEGER NOT NULL,"
	  "  updated_at INTEGER NOT NULL,"
	  "  last_used_at INTEGER NOT NULL"
	  ");"
	  "CREATE UNIQUE INDEX sessions_live_key ON sessions (frontend, external_key)"
	  "  WHERE state != 'deleted';"
	  "CREATE INDEX sessions_created ON sessions (created_at);"
	  "INSERT INTO sessions VALUES ('ses_v1live', 'opencode', 'oc-old', '/home/u/old',"
	  "  '/home/u/old', 'e2b', 'sbx_old', '/home/user/old', 'twin_old', 7, 0, 'open',"
	  "  1700000000000, 1700000000001, 1700000000002);"
	  "INSERT INTO sessions VALUES ('ses_v1dead', 'cli', 'gone', '/tmp/x', NULL, 'local',"
	  "  NULL, NULL, NULL, 0, 1, 'deleted', 1600000000000, 1600000000000, 1600000000000);"
	  "PRAGMA user_version = 1;",
	  check_v1_data },
};

/* Bumping TBX_STORE_SCHEMA_VERSION without a fixture of the old version fails to build. */
_Static_assert(sizeof(fixtures) / sizeof(fixtures[0]) == TBX_STORE_SCHEMA_VERSION,
	       "add a fixture for every released schema version");

/* The schema as sqlite_master records it, to compare migrated and fresh databases. */
static char *schema_of(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *stmt = NULL;
	size_t len = 0;
	char *out = calloc(1, 1);

	CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
	CHECK(sqlite3_prepare_v2(db, "SELECT type || ' ' || name || ' ' || coalesce(sql, '')"
				 " FROM sqlite_master ORDER BY type, name", -1, &stmt, NULL)
	      == SQLITE_OK);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		const char *line = (const char *)sqlite3_column_text(stmt, 0);

		out = realloc(out, len + strlen(line) + 2);
		CHECK(out != NULL);
		memcpy(out + len, line, strlen(line));
		len += strlen(line);
		out[len++] = '\n';
		out[len] = '\0';
	}
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	return out;
}

static void test_migrations(void)
{
	struct tbx_store *store = NULL;
	char *fresh_schema, name[64], mode[16];
	const char *fresh = tmp_path("migrate-fresh.db");

	CHECK_INT(tbx_store_open(fresh, &store), 0);
	tbx_store_close(store);
	fresh_schema = schema_of(fresh);
	CHECK(strstr(fresh_schema, "table branches") != NULL);

	for (int v = 0; v < TBX_STORE_SCHEMA_VERSION; v++) {
		const char *path;
		char *migrated;

		snprintf(name, sizeof(name), "migrate-from-v%d.db", v);
		path = tmp_path(name);
		raw_exec(path, fixtures[v].sql);
		CHECK_INT(raw_query(path, "PRAGMA user_version", NULL, 0), v);

		CHECK_INT(tbx_store_open(path, &store), 0);
		CHECK_INT(tbx_store_schema_version(store), TBX_STORE_SCHEMA_VERSION);
		if (fixtures[v].check)
			fixtures[v].check(store);
		tbx_store_close(store);

		CHECK_INT(raw_query(path, "PRAGMA user_version", NULL, 0), TBX_STORE_SCHEMA_VERSION);
		raw_query(path, "PRAGMA journal_mode", mode, sizeof(mode));
		CHECK_STR(mode, "wal");
		/* Migrating must arrive at exactly the schema a fresh database gets. */
		migrated = schema_of(path);
		if (strcmp(migrated, fresh_schema) != 0) {
			fprintf(stderr, "schema after migrating from v%d:\n%s\nfresh schema:\n%s\n", v,
				migrated, fresh_schema);
			CHECK(!"migrated schema differs from fresh schema");
		}
		free(migrated);
	}
	free(fresh_schema);
}

/* Open must fail with `status`, mention `needle`, and leave path's bytes and neighbours alone. */
static void check_refused(const char *path, int status, const char *needle)
{
	struct tbx_store *store = (struct tbx_store *)1;
	char side[1100];
	size_t before_len, after_len;
	char *before = read_all(path, &before_len), *after;

	tbx_error_clear();
	CHECK_INT(tbx_store_open(path, &store), status);
	CHECK(store == NULL);
	CHECK_INT(tbx_error_status(), status);
	CHECK(strstr(tbx_error_message(), path) != NULL);
	if (!strstr(tbx_error_message(), needle)) {
		fprintf(stderr, "message \"%s\" lacks \"%s\"\n", tbx_error_message(), needle);
		CHECK(!"refusal message");
	}
	after = read_all(path, &after_len);
	CHECK_INT(after_len, before_len);
	CHECK(memcmp(before, after, before_len) == 0);
	snprintf(side, sizeof(side), "%s-wal", path);
	CHECK(!file_exists(side));
	snprintf(side, sizeof(side), "%s-shm", path);
	CHECK(!file_exists(side));
	snprintf(side, sizeof(side), "%s-journal", path);
	CHECK(!file_exists(side));
	free(before);
	free(after);
}

static void test_refusals(void)
{
	char sql[256], needle[128];
	const char *path;
	FILE *f;

	/* A database from a newer twinbox, in rollback mode and in WAL mode. */
	snprintf(sql, sizeof(sql), "CREATE TABLE future (x); INSERT INTO future VALUES (42);"
		 "PRAGMA user_version = %d;", TBX_STORE_SCHEMA_VERSION + 1);
	snprintf(needle, sizeof(needle), "has schema version %d but this twinbox only knows up "
		 "to %d; upgrade twinbox", TBX_STORE_SCHEMA_VERSION + 1, TBX_STORE_SCHEMA_VERSION);
	path = tmp_path("newer.db");
	raw_exec(path, sql);
	check_refused(path, TBX_EINVAL, needle);
	path = tmp_path("newer-wal.db");
	raw_exec(path, "PRAGMA journal_mode = WAL;");
	raw_exec(path, sql);
	check_refused(path, TBX_EINVAL, needle);
	CHECK_INT(raw_query(path, "SELECT x FROM future", NULL, 0), 42);

	/* Not SQLite at all: text longer than a database header, and a short one. */
	path = tmp_path("notes.txt");
	f = fopen(path, "w");
	CHECK(f != NULL);
	for (int i = 0; i < 100; i++)
		fprintf(f, "line %d of someone's notes, not a database\n", i);
	fclose(f);
	check_refused(path, TBX_EINVAL, "not an SQLite database");
	path = tmp_path("short.txt");
	f = fopen(path, "w");
	CHECK(f != NULL);
	fputs("hello", f);
	fclose(f);
	check_refused(path, TBX_EINVAL, "not an SQLite database");

	/* A directory where the file should be. */
	struct tbx_store *store = NULL;
	path = tmp_path("isdir.db");
	CHECK_INT(mkdir(path, 0700), 0);
	CHECK_INT(tbx_store_open(path, &store), TBX_EISDIR);
	CHECK(store == NULL);
}

int main(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmp_root, sizeof(tmp_root), "%s/tbx-store-XXXXXX", base && *base ? base : "/tmp");
	CHECK(mkdtemp(tmp_root) != NULL);

	test_open_fresh();
	test_sessions();
	test_branches();
	test_branch_threads();
	test_branch_processes();
	test_migrations();
	test_refusals();

	nftw(tmp_root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	printf("store tests passed\n");
	return 0;
}
