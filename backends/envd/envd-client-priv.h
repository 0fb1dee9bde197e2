/* SPDX-License-Identifier: MIT */
/* Internals the envd client's files share: the client and curl helpers. */
#ifndef TBX_ENVD_CLIENT_PRIV_H
#define TBX_ENVD_CLIENT_PRIV_H

#include <curl/curl.h>

#include "envd-client.h"
#include "envd-retry.h"

struct tbx_envd_client {
	const struct tbx_host_api *host;
	char *base_url;
	char *unix_socket;
	struct curl_slist *headers;
	long timeout_ms;
	CURLSH *share;                /* a connection pool shared with other clients, or NULL */
	struct tbx_envd_retry retry;  /* attempts 0: no retries */
	char *access_token;           /* envd's X-Access-Token for RPCs, or NULL */
	char *files_user;             /* ?username= on /files, or NULL */
	long stall_ms;                /* abort a stream silent this long; 0 = never */
};

/* Progress state: lets the host's cancellation abort a transfer. */
struct tbx_envd_xfer {
	struct tbx_envd_client *c;
	struct tbx_call *call;
	int cancelled;
	long stall_ms;        /* abort when no byte arrived for this long; 0 = never */
	int64_t last_data_ms; /* monotonic time of the last byte received */
	int stalled;
};

/*
 * A curl handle for \p path (with query) on the client's peer, with the
 * client's headers plus \p extra (NULL-terminated, may be NULL). *hdrs_out
 * must be freed with curl_slist_free_all after the transfer.
 */
CURL *tbx_envd_curl_new(struct tbx_envd_client *c, const char *path, const char *const *extra,
			struct curl_slist **hdrs_out, struct tbx_envd_xfer *xfer, char *errbuf);
/* Report a failed transfer with a message naming the peer. */
int tbx_envd_curl_fail(struct tbx_envd_client *c, struct tbx_call *call, CURLcode rc,
		       const struct tbx_envd_xfer *xfer, const char *what, const char *errbuf);
/* Does the Content-Type \p ct name media type \p want (parameters ignored)? */
int tbx_envd_ct_is(const char *ct, const char *want);
/* Turn a Connect error object {"code","message"} into error_set(). */
int tbx_envd_error_object(struct tbx_envd_client *c, struct tbx_call *call, const char *what,
			  struct json_object *err, int http_status);
/* tbx_envd_unary naming the call \p op in messages instead of the RPC path. */
int tbx_envd_unary_as(struct tbx_envd_client *c, struct tbx_call *call, const char *op,
		      const char *rpc, struct json_object *req, struct json_object **resp_out);
/*
 * curl_easy_perform() with the client's retry policy: 429/503 answers (their
 * Retry-After honoured) and, when \p resets is set, failed or reset
 * connections are tried again. \p b is emptied before each new try. Returns
 * the last try's result and *status_out its HTTP status (0 if none); a
 * cancellation while backing off returns CURLE_ABORTED_BY_CALLBACK with
 * xfer->cancelled set.
 */
CURLcode tbx_envd_perform(struct tbx_envd_client *c, struct tbx_call *call, CURL *curl,
			  struct tbx_envd_xfer *xfer, struct tbx_envd_body *b, int resets,
			  long *status_out);
/* "/files?path=<escaped>[&username=..][&signature=..]" for \p op "read" or "write". */
char *tbx_envd_files_path(struct tbx_envd_client *c, CURL *curl, const char *path,
			  const char *op);
/* The peer, for messages: the Unix socket path or the base URL. */
const char *tbx_envd_peer(const struct tbx_envd_client *c);

#endif
