/* SPDX-License-Identifier: MIT */
/*
 * The daemon's shared state: paths, configuration, loaded modules, engines,
 * the store and the sessions. One per process; handed to every method.
 */
#ifndef TBX_CORE_H
#define TBX_CORE_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "module.h"
#include "paths.h"

struct json_object;
struct tbx_store;
struct tbx_sessions;
struct tbx_engine;
struct tbx_server;
struct tbx_twin_service;

struct tbx_core {
	struct tbx_paths paths;
	struct json_object *config;     /* config.json, or an empty object */
	struct tbx_registry registry;
	struct tbx_store *store;
	struct tbx_sessions *sessions;
	struct tbx_server *server;
	struct tbx_twin_service *twin;  /* the Veris cloud or the local twind */
	int64_t started_at_ms;

	pthread_mutex_t engines_lock;
	struct tbx_engine **engines;     /* opened lazily, one per backend module */
	size_t n_engines;
};

/* The default engine for new sessions: config "engine", else "local". */
const char *tbx_core_default_engine(struct tbx_core *core);
/* Open (once) and return the engine of backend `name`. Worker threads only. */
int tbx_core_engine(struct tbx_core *core, const char *name, struct tbx_engine **out);
void tbx_core_engines_free(struct tbx_core *core);

int64_t tbx_now_ms(void);

#endif
