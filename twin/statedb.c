/* SPDX-License-Identifier: MIT */
/*
 * SQLite persistence of twins (see statedb.h). twind is one event-loop
 * thread and every write here is one small row in WAL mode with
 * synchronous=NORMAL, so writes happen inline rather than on a worker.
 */
#include "statedb.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "log.h"

#define TBX_LOG_CATEGORY "twin.db"

struct tbx_statedb {
	sqlite3 *db;
};

static const char schema[] =
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=NORMAL;"
	"CREATE TABLE IF NOT EXISTS twins (id TEXT PRIMARY KEY, body TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS objects (twin TEXT NOT NULL, service TEXT NOT NULL,"
	" kind TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL,"
	" PRIMARY KEY (twin, service, kind, id));"
	"CREATE TABLE IF NOT EXISTS requests (twin TEXT NOT NULL, service TEXT NOT NULL,"
	" id INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (twin, service, id));"
	"PRAGMA user_version=1;";

int tbx_statedb_open(const char *path, struct tbx_statedb **out)
{
	struct tbx_statedb *s = calloc(1, sizeof(*s));
	char *err = NULL;

	if (!s)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK ||
	    sqlite3_busy_timeout(s->db, 5000) != SQLITE_OK ||
	    sqlite3_exec(s->db, schema, NULL, NULL, &err) != SQLITE_OK) {
		tbx_error_set(TBX_EIO, "cannot open %s: %s", path, err ? err : sqlite3_errmsg(s->db));
		sqlite3_free(err);
		sqlite3_close(s->db);
		free(s);
		return TBX_EIO;
	}
	*out = s;
	return 0;
}

void tbx_statedb_close(struct tbx_statedb *s)
{
	if (!s)
		return;
	sqlite3_close(s->db);
	free(s);
}

/*
 * Run one statement: texts bind to ?1..?n in order, except that parameter
 * num_at (if nonzero) takes the integer num and the texts shift past it.
 */
static int run(struct tbx_statedb *s, const char *sql, const char *const *texts, int n,
	       int64_t num, int num_at)
{
	sqlite3_stmt *st;
	int rc;

	if (!s)
		return 0;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		tbx_log_error("%s", sqlite3_errmsg(s->db));
		return TBX_EIO;
	}
	for (int i = 0, col = 1; i < n; i++, col++) {
		if (col == num_at)
			sqlite3_bind_int64(st, col++, num);
		sqlite3_bind_text(st, col, texts[i], -1, SQLITE_STATIC);
	}
	if (num_at > n)
		sqlite3_bind_int64(st, num_at, num);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		tbx_log_error("write failed: %s", sqlite3_errmsg(s->db));
		return TBX_EIO;
	}
	return 0;
}

int tbx_statedb_put_twin(struct tbx_statedb *s, const char *twin, const char *json)
{
	const char *t[] = { twin, json };
	return run(s, "INSERT INTO twins (id, body) VALUES (?1, ?2)"
		      " ON CONFLICT(id) DO UPDATE SET body = excluded.body", t, 2, 0, 0);
}

int tbx_statedb_delete_twin(struct tbx_statedb *s, const char *twin)
{
	const char *t[] = { twin };
	int rc = run(s, "DELETE FROM objects WHERE twin = ?1", t, 1, 0, 0);

	rc = rc < 0 ? rc : run(s, "DELETE FROM requests WHERE twin = ?1", t, 1, 0, 0);
	return rc < 0 ? rc : run(s, "DELETE FROM twins WHERE id = ?1", t, 1, 0, 0);
}

int tbx_statedb_put_object(struct tbx_statedb *s, const char *twin, const char *service,
			   const char *kind, const char *id, const char *json)
{
	const char *t[] = { twin, service, kind, id, json };
	/* An update keeps its rowid, so objects load back in creation order. */
	return run(s, "INSERT INTO objects (twin, service, kind, id, body) VALUES (?1, ?2, ?3, ?4, ?5)"
		      " ON CONFLICT(twin, service, kind, id) DO UPDATE SET body = excluded.body",
		   t, 5, 0, 0);
}

int tbx_statedb_delete_object(struct tbx_statedb *s, const char *twin, const char *service,
			      const char *kind, const char *id)
{
	const char *t[] = { twin, service, kind, id };
	return run(s, "DELETE FROM objects WHERE twin = ?1 AND service = ?2 AND kind = ?3 AND id = ?4",
		   t, 4, 0, 0);
}

int tbx_statedb_clear_objects(struct tbx_statedb *s, const char *twin, const char *service)
{
	const char *t[] = { twin, service };
	return run(s, "DELETE FROM objects WHERE twin = ?1 AND service = ?2", t, 2, 0, 0);
}

int tbx_statedb_add_request(struct tbx_statedb *s, const char *twin, const char *service,
			    int64_t id, const char *json)
{
	const char *t[] = { twin, service, json };
	return run(s, "INSERT INTO requests (twin, service, id, body) VALUES (?1, ?2, ?3, ?4)", t, 3,
		   id, 3);
}

int tbx_statedb_load(struct tbx_statedb *s, tbx_statedb_twin_cb on_twin,
		     tbx_statedb_object_cb on_object, tbx_statedb_request_cb on_request, void *arg)
{
	static const char *const queries[] = {
		"SELECT id, body FROM twins ORDER BY rowid",
		"SELECT twin, service, kind, id, body FROM objects ORDER BY rowid",
		"SELECT twin, service, id, body FROM requests ORDER BY twin, service, id",
	};

	for (int q = 0; q < 3; q++) {
		sqlite3_stmt *st;
		int rc;

		if (sqlite3_prepare_v2(s->db, queries[q], -1, &st, NULL) != SQLITE_OK)
			return tbx_error_set(TBX_EIO, "cannot read the twin state: %s", sqlite3_errmsg(s->db));
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
#define COL(i) ((const char *)sqlite3_column_text(st, i))
			if (q == 0)
				on_twin(arg, COL(0), COL(1));
			else if (q == 1)
				on_object(arg, COL(0), COL(1), COL(2), COL(3), COL(4));
			else
				on_request(arg, COL(0), COL(1), sqlite3_column_int64(st, 2), COL(3));
#undef COL
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return tbx_error_set(TBX_EIO, "cannot read the twin state: %s", sqlite3_errmsg(s->db));
	}
	return 0;
}
