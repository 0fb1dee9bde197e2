/* SPDX-License-Identifier: MIT */
/*
 * Persistence of the twins in <state>/twind.db (SQLite, WAL): twin records,
 * the objects each service holds, and the request logs, so a restarted twind
 * answers with the same state and the same monotonic request ids.
 */
#ifndef TBX_STATEDB_H
#define TBX_STATEDB_H

#include <stdint.h>

struct tbx_statedb;

int tbx_statedb_open(const char *path, struct tbx_statedb **out);
void tbx_statedb_close(struct tbx_statedb *db);

int tbx_statedb_put_twin(struct tbx_statedb *db, const char *twin, const char *json);
/* Removes the twin, its objects and its request logs. */
int tbx_statedb_delete_twin(struct tbx_statedb *db, const char *twin);
int tbx_statedb_put_object(struct tbx_statedb *db, const char *twin, const char *service,
			   const char *kind, const char *id, const char *json);
int tbx_statedb_delete_object(struct tbx_statedb *db, const char *twin, const char *service,
			      const char *kind, const char *id);
int tbx_statedb_clear_objects(struct tbx_statedb *db, const char *twin, const char *service);
int tbx_statedb_add_request(struct tbx_statedb *db, const char *twin, const char *service,
			    int64_t id, const char *json);

/* Loading at start-up, in insertion order. */
typedef void (*tbx_statedb_twin_cb)(void *arg, const char *twin, const char *json);
typedef void (*tbx_statedb_object_cb)(void *arg, const char *twin, const char *service,
				      const char *kind, const char *id, const char *json);
typedef void (*tbx_statedb_request_cb)(void *arg, const char *twin, const char *service,
				       int64_t id, const char *json);
int tbx_statedb_load(struct tbx_statedb *db, tbx_statedb_twin_cb on_twin,
		     tbx_statedb_object_cb on_object, tbx_statedb_request_cb on_request, void *arg);

#endif
