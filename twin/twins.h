/* SPDX-License-Identifier: MIT */
/*
 * The twins twind holds (a Veris "sandbox" each): per twin its environment,
 * egress credential, policy and services; per service the objects its twin
 * keeps and its request log with monotonic ids. Everything in memory, every
 * change written through to the state database.
 */
#ifndef TBX_TWINS_H
#define TBX_TWINS_H

#include <stddef.h>
#include <stdint.h>

struct json_object;
struct tbx_routes;
struct tbx_route_service;
struct tbx_statedb;
struct tbx_twin;
struct tbx_twins;

struct tbx_service {
	struct tbx_twin *twin;
	char name[64];
	const struct tbx_route_service *route; /* NULL if the routes file no longer has it */
	struct json_object *state;             /* kind -> { id -> object }, creation order */
	struct json_object *log;               /* request entries, ascending id */
	int64_t next_request_id;
};

struct tbx_twin {
	struct tbx_twins *owner;
	char id[40];
	char environment[128];
	char password[40];
	char policy[8];
	int64_t created_ms;
	int64_t expires_ms; /* 0: never */
	struct json_object *metadata;
	char *client_base_url;
	struct tbx_service *services;
	size_t n_services;
	struct tbx_twin *next;
};

struct tbx_twins {
	const struct tbx_routes *cfg;
	struct tbx_statedb *db; /* may be NULL: nothing persists */
	struct tbx_twin *head;
	size_t count;
};

int tbx_twins_new(const struct tbx_routes *cfg, struct tbx_statedb *db, struct tbx_twins **out);
void tbx_twins_free(struct tbx_twins *twins);
/*
 * Create a twin for an environment (routes.h says how ids resolve). policy
 * NULL takes the routes file's default. TBX_ENOENT for an unknown environment.
 */
int tbx_twins_create(struct tbx_twins *twins, const char *env, int64_t ttl_minutes,
		     struct json_object *metadata, const char *policy, struct tbx_twin **out);
struct tbx_twin *tbx_twins_find(struct tbx_twins *twins, const char *id);
/* Forget a twin and everything it holds, here and on disk. */
void tbx_twins_remove(struct tbx_twins *twins, struct tbx_twin *twin);
/* The first expired twin at now_ms, or NULL. */
struct tbx_twin *tbx_twins_expired(struct tbx_twins *twins, int64_t now_ms);
int tbx_twin_save(struct tbx_twin *twin);

struct tbx_service *tbx_twin_service(struct tbx_twin *twin, const char *name);
struct tbx_service *tbx_twin_service_for_host(struct tbx_twin *twin, const char *host);

/* The objects of one kind, id -> object in creation order (borrowed, created empty). */
struct json_object *tbx_service_collection(struct tbx_service *svc, const char *kind);
struct json_object *tbx_service_get(struct tbx_service *svc, const char *kind, const char *id);
/* Store obj (owned from now on) under kind/id and persist it; obj may be the one stored. */
int tbx_service_put(struct tbx_service *svc, const char *kind, const char *id,
		    struct json_object *obj);
int tbx_service_delete(struct tbx_service *svc, const char *kind, const char *id);
/* Drop every object (the request log stays: receipts are read from it). */
void tbx_service_reset(struct tbx_service *svc);
/* Append entry (owned) to the request log under the next id, which is returned. */
int64_t tbx_service_log_append(struct tbx_service *svc, struct json_object *entry);

#endif
