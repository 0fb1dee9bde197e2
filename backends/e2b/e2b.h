/* SPDX-License-Identifier: MIT */
/*
 * The E2B engine: Firecracker sandboxes on E2B's cloud, driven through its
 * control-plane REST API and each sandbox's envd (the shared envd client).
 */
#ifndef TBX_E2B_H
#define TBX_E2B_H

#include <curl/curl.h>
#include <json-c/json.h>
#include <pthread.h>
#include <twinbox/backend.h>

#include "envd-client.h"
#include "envd-retry.h"

#define E2B_ENVD_PORT 49983
#define E2B_HOME "/home/user"
#define E2B_WORKDIR "/home/user/project"
#define E2B_DEFAULT_TEMPLATE "base"
#define E2B_DEFAULT_DOMAIN "e2b.app"
#define E2B_DEFAULT_USER "user"
#define E2B_DEFAULT_TIMEOUT_S 300
#define E2B_ID_MAX 64

/* What envd needs to reach one sandbox, learned from create/connect/get. */
struct e2b_sbx {
	char id[E2B_ID_MAX + 1];
	char *token;  /* envdAccessToken, or NULL for an unsecured sandbox */
	char *domain; /* the API's "domain" for it, or NULL for the configured one */
	struct e2b_sbx *next;
};

struct tbx_e2b {
	const struct tbx_host_api *host;
	/* Settings, fixed after instance_new. */
	char *api_url;     /* "https://api.e2b.app" */
	char *domain;      /* "e2b.app" */
	char *sandbox_url; /* E2B_SANDBOX_URL: envd for every sandbox, or NULL */
	char *template_id; /* default template */
	char *user;        /* envd user */
	struct curl_slist *api_headers; /* X-API-KEY and friends: the key lives only here */
	char *api_key_copy; /* to keep it out of sandboxes; never logged */
	uint32_t timeout_s; /* default sandbox timeout */
	long request_timeout_ms;
	long stall_ms;
	struct tbx_envd_retry retry;
	/* The one connection pool of the engine: every request's connections. */
	CURLSH *share;
	pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
	/* Per-sandbox envd access. */
	pthread_mutex_t lock;
	struct e2b_sbx *sandboxes;
};

/* e2b-config.c: settings from config.json and the SDK's environment variables */
int e2b_config_load(struct tbx_e2b *e, struct tbx_call *call);
void e2b_config_release(struct tbx_e2b *e);

/* e2b-pool.c: the shared libcurl connection pool */
int e2b_pool_init(struct tbx_e2b *e);
void e2b_pool_release(struct tbx_e2b *e);

/* e2b-api.c: control-plane requests */
struct e2b_answer {
	long status;              /* HTTP status */
	struct json_object *json; /* parsed body (object or array), or NULL */
	char *next_token;         /* X-Next-Token, or NULL */
	int code;                 /* the error body's "code", or 0 */
	char *message;            /* the error body's "message", or NULL */
	int reset_retried;        /* a try was lost to a reset: the request may have arrived */
};
/*
 * Send \p method \p path with \p body (NULL for none) and collect the answer.
 * 429/503 and unsent requests are retried; resets too when \p resets is set.
 * 0 with \p out filled whenever the API answered (any status); a negative
 * status (error set) when it did not answer or answered garbage.
 */
int e2b_api(struct tbx_e2b *e, struct tbx_call *call, const char *what, const char *method,
	    const char *path, struct json_object *body, int resets, struct e2b_answer *out);
void e2b_answer_release(struct e2b_answer *a);
/* A non-2xx answer as a twinbox error (401 → EAUTH, 429/503 → EUNAVAIL, ...). */
int e2b_api_fail(struct tbx_e2b *e, struct tbx_call *call, const char *what,
		 const struct e2b_answer *a);
/* Did the API say "no such sandbox", the way the SDK recognises it (body code 404)? */
int e2b_answer_not_found(const struct e2b_answer *a);

/* e2b-cache.c: envd access per sandbox */
int e2b_id_valid(const char *id);
/* Remember (or update) a sandbox's token and domain from a Sandbox object. */
int e2b_cache_put(struct tbx_e2b *e, const char *id, struct json_object *sandbox);
void e2b_cache_drop(struct tbx_e2b *e, const char *id);
void e2b_cache_release(struct tbx_e2b *e);
/* The domain a sandbox's hosts live under (a host->strdup'd string), or NULL. */
char *e2b_cache_domain(struct tbx_e2b *e, const char *id);
/* An envd client for \p id; fetches its token from the API when not cached. */
int e2b_envd_client(struct tbx_e2b *e, struct tbx_call *call, const char *id,
		    struct tbx_envd_client **out);

/* e2b-spec.c: the create request */
struct json_object *e2b_spec_body(struct tbx_e2b *e, struct tbx_call *call,
				  const struct tbx_sandbox_spec *spec, const char *nonce, int *err);
/* Drop "KEY=VALUE" entries that would carry the API key into a sandbox. */
int e2b_env_safe(struct tbx_e2b *e, struct tbx_call *call, const char *kv);

/* e2b-lifecycle.c */
int e2b_sandbox_create(void *inst, struct tbx_call *call, const struct tbx_sandbox_spec *spec,
		       struct tbx_sandbox_info *out);
int e2b_sandbox_connect(void *inst, struct tbx_call *call, const char *id, uint32_t timeout_s,
			struct tbx_sandbox_info *out);
int e2b_sandbox_set_timeout(void *inst, struct tbx_call *call, const char *id,
			    uint32_t timeout_s);
int e2b_sandbox_pause(void *inst, struct tbx_call *call, const char *id);
int e2b_sandbox_kill(void *inst, struct tbx_call *call, const char *id);
/* GET /sandboxes/{id}: the SandboxDetail (json_object_put it), or an error (EGONE on 404). */
int e2b_sandbox_get(struct tbx_e2b *e, struct tbx_call *call, const char *id,
		    struct json_object **detail_out);
void e2b_info_release(const struct tbx_host_api *host, struct tbx_sandbox_info *info);
/* Resume a paused sandbox (connect with the default timeout). */
int e2b_sandbox_resume(struct tbx_e2b *e, struct tbx_call *call, const char *id);

/* e2b-list.c */
int e2b_sandbox_list(void *inst, struct tbx_call *call, const char *const *labels,
		     struct tbx_sandbox_info **out, size_t *n_out);
/* Fill \p out's labels from a metadata object; -1 on out of memory. */
int e2b_labels_fill(const struct tbx_host_api *host, struct json_object *metadata,
		    struct tbx_sandbox_info *out);

/* e2b-ops.c: exec and files through envd */
int e2b_exec(void *inst, struct tbx_call *call, const char *id,
	     const struct tbx_exec_request *request, tbx_exec_output_cb on_output, void *payload,
	     struct tbx_exec_result *out);
int e2b_file_read(void *inst, struct tbx_call *call, const char *id, const char *path,
		  char **data_out, size_t *len_out);
int e2b_file_write(void *inst, struct tbx_call *call, const char *id, const char *path,
		   const char *data, size_t len);
int e2b_file_stat(void *inst, struct tbx_call *call, const char *id, const char *path,
		  struct tbx_file_info *out);
int e2b_file_list(void *inst, struct tbx_call *call, const char *id, const char *path,
		  uint32_t depth, struct tbx_file_info **out, size_t *n_out);
int e2b_file_mkdir(void *inst, struct tbx_call *call, const char *id, const char *path);
int e2b_file_remove(void *inst, struct tbx_call *call, const char *id, const char *path);
int e2b_file_rename(void *inst, struct tbx_call *call, const char *id, const char *from,
		    const char *to);
int e2b_preview_url(void *inst, struct tbx_call *call, const char *id, uint16_t port,
		    char **url_out);

#endif
