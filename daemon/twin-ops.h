/* SPDX-License-Identifier: MIT */
/*
 * The control-plane calls a session makes about its twin (shared/specs/
 * ANCHORS.md §3, docs/twin.md): create one for an environment, look it up,
 * mint its egress credential, delete it, and read its services' request
 * logs. All of them go through tbx_twin_call, so they work the same against
 * the local twind and the Veris cloud. Worker threads only.
 */
#ifndef TBX_TWIN_OPS_H
#define TBX_TWIN_OPS_H

#include <stdint.h>

struct json_object;
struct tbx_twin_service;

/* An egress credential, as far as the daemon uses it. Never logged, never stored. */
struct tbx_twin_credential {
	char *username; /* the twin id */
	char *password;
	char *socks_address;   /* host:port */
	char *connect_address; /* host:port, or NULL */
	char *ca_pem;
	char *canary_host;
	struct json_object *trust_env; /* {VAR: absolute path}, only names and paths we know to be safe */
};

void tbx_twin_credential_clear(struct tbx_twin_credential *cred);

/*
 * Make a twin for environment env, tagged with the session id. *id_out is the
 * twin id. TBX_ENOENT (with a message naming the settings) when the service
 * has no such environment.
 */
int tbx_twin_create(struct tbx_twin_service *svc, const char *env, const char *session_id,
		    char **id_out);
/* The environment a twin was made for; TBX_EGONE when the twin is gone. */
int tbx_twin_environment(struct tbx_twin_service *svc, const char *twin_id, char **env_out);
/* Mint (or re-mint: the local twin's is stable) the twin's egress credential. */
int tbx_twin_credential(struct tbx_twin_service *svc, const char *env, const char *twin_id,
			struct tbx_twin_credential *out);
/* Delete a twin; one already gone (404) counts as deleted. */
int tbx_twin_delete(struct tbx_twin_service *svc, const char *twin_id);
/*
 * The twin's request logs: {twin_id, environment_id, services: [{name,
 * hosts, requests: [Entry, oldest first], has_more, last_id}]}, each
 * service's entries after since[name] (an id; absent = from the start), at
 * most limit (1..1000) of them.
 */
int tbx_twin_requests(struct tbx_twin_service *svc, const char *twin_id,
		      struct json_object *since, int limit, struct json_object **out);

#endif
