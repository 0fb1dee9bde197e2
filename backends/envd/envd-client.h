/* SPDX-License-Identifier: MIT */
/*
 * A blocking client for E2B's envd protocol (PROTOCOL.md §2): Connect RPCs
 * with the JSON codec, the /files REST routes and /health. It is written for
 * any envd-speaking peer: the local engine's in-sandbox agent (over a Unix
 * socket) and E2B's envd (over HTTPS with access-token headers).
 *
 * Every call takes the host API and the op's call context: failures are
 * reported with host->error_set() and long transfers poll
 * host->is_cancelled(). One client serves one sandbox; it is cheap to make
 * and may be shared by threads (each call uses its own curl handle).
 */
#ifndef TBX_ENVD_CLIENT_H
#define TBX_ENVD_CLIENT_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>
#include <twinbox/backend.h>

struct tbx_envd_client;

/*
 * \p base_url e.g. "http://localhost" or "https://49983-<id>.e2b.app";
 * \p unix_socket connects there instead of resolving the URL's host, or NULL.
 * NULL on out of memory. Call tbx_envd_global_init() once first.
 */
struct tbx_envd_client *tbx_envd_client_new(const struct tbx_host_api *host, const char *base_url,
					    const char *unix_socket);
void tbx_envd_client_free(struct tbx_envd_client *c);
/* Add a header sent on every request, e.g. "X-Access-Token: ..."; -1 on OOM. */
int tbx_envd_client_header_add(struct tbx_envd_client *c, const char *line);
/* Bound for unary calls and file transfers, in ms (default 60000). */
void tbx_envd_client_set_timeout(struct tbx_envd_client *c, long timeout_ms);
/*
 * Use \p share (a CURLSH * with connections shared, owned by the caller and
 * outliving the client) so keep-alive connections are reused across clients.
 */
void tbx_envd_client_set_share(struct tbx_envd_client *c, void *share);
/* Retry 429/503 answers and failed connections with this policy (copied). */
struct tbx_envd_retry;
void tbx_envd_client_set_retry(struct tbx_envd_client *c, const struct tbx_envd_retry *policy);
/*
 * A secured envd: RPCs carry X-Access-Token: \p token, and /files requests
 * are signed with it instead (PROTOCOL.md §2.6), as ?username=\p user. Either
 * may be NULL. -1 on out of memory.
 */
int tbx_envd_client_set_auth(struct tbx_envd_client *c, const char *user, const char *token);
/* Give up on a process stream that sends nothing (not even keepalives) for this long. */
void tbx_envd_client_set_stall_timeout(struct tbx_envd_client *c, long stall_ms);

/* libcurl's process-wide setup; safe to call from several threads. 0 or -1. */
int tbx_envd_global_init(void);

/*
 * GET /health. 0 when the peer answers 2xx within \p timeout_ms, else
 * TBX_EUNAVAIL. Sets no error: callers poll it while a sandbox starts.
 */
int tbx_envd_health(struct tbx_envd_client *c, long timeout_ms);

/*
 * A unary Connect call to \p rpc ("filesystem.Filesystem/Stat"). On success
 * *resp_out (may be NULL) receives the response object (json_object_put it).
 */
int tbx_envd_unary(struct tbx_envd_client *c, struct tbx_call *call, const char *rpc,
		   struct json_object *req, struct json_object **resp_out);

/* What process.Process/Start runs. */
struct tbx_envd_process {
	const char *cmd;               /* e.g. "/bin/bash" */
	const char *const *args;       /* NULL-terminated, or NULL */
	const char *const *env;        /* NULL-terminated "KEY=VALUE", or NULL */
	const char *cwd;               /* or NULL for the peer's default */
	uint32_t timeout_ms;           /* Connect-Timeout-Ms; 0 = none */
	int *started_out;              /* set to 1 once the peer said it started, or NULL */
};

/*
 * Run a process and stream its output to \p on_output. Returns 0 when the
 * process ran, with \p out filled (timed_out / cancelled set when a deadline
 * or cancellation ended it); a negative tbx_status when it could not run.
 * Cancellation drops the stream and sends SendSignal SIGKILL, since envd
 * keeps a process running when its client goes away.
 */
int tbx_envd_process_start(struct tbx_envd_client *c, struct tbx_call *call,
			   const struct tbx_envd_process *p, tbx_exec_output_cb on_output,
			   void *payload, struct tbx_exec_result *out);

/* GET /files: the whole file into a host->alloc buffer (NUL-terminated). */
int tbx_envd_file_read(struct tbx_envd_client *c, struct tbx_call *call, const char *path,
		       char **data_out, size_t *len_out);
/* POST /files as application/octet-stream: create or replace the file. */
int tbx_envd_file_write(struct tbx_envd_client *c, struct tbx_call *call, const char *path,
			const char *data, size_t len);

/* filesystem.Filesystem RPCs mapped onto twinbox's file ops. */
int tbx_envd_fs_stat(struct tbx_envd_client *c, struct tbx_call *call, const char *path,
		     struct tbx_file_info *out);
int tbx_envd_fs_list(struct tbx_envd_client *c, struct tbx_call *call, const char *path,
		     uint32_t depth, struct tbx_file_info **out, size_t *n_out);
int tbx_envd_fs_mkdir(struct tbx_envd_client *c, struct tbx_call *call, const char *path);
int tbx_envd_fs_remove(struct tbx_envd_client *c, struct tbx_call *call, const char *path);
int tbx_envd_fs_move(struct tbx_envd_client *c, struct tbx_call *call, const char *from,
		     const char *to);

/* Largest file the client reads or writes in one call. */
#define TBX_ENVD_FILE_MAX ((size_t)256 << 20)

/*
 * A response body collected in memory, refusing to grow past max: the
 * CURLOPT_WRITEFUNCTION of every engine that talks HTTP with libcurl.
 */
struct tbx_envd_body {
	char *data;
	size_t len, cap, max;
	int overflow; /* set when the body passed max; the transfer is aborted */
};

size_t tbx_envd_body_write(char *ptr, size_t size, size_t nmemb, void *userdata);
void tbx_envd_body_release(struct tbx_envd_body *b);

#endif
