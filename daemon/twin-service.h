/* SPDX-License-Identifier: MIT */
/*
 * The daemon's one twin client (DESIGN §1, §7). With VERIS_API_KEY set it
 * talks to the Veris cloud at VERIS_API_BASE; otherwise it starts the local
 * twin, twinbox-twind, supervises it (restarting it if it dies) and talks to
 * that. Either way the same control-plane calls go to a base URL with an
 * X-API-Key header; the key lives only in this process's memory and in the
 * environment handed to twind, never in argv, a log line or the store.
 */
#ifndef TBX_TWIN_SERVICE_H
#define TBX_TWIN_SERVICE_H

struct json_object;
struct tbx_paths;
struct tbx_twin_service;

/* The Veris cloud's control plane, when VERIS_API_BASE is not set. */
#define TBX_VERIS_DEFAULT_BASE "https://svc.api.veris.ai"

/*
 * Pick the mode and, for the local twin, start twind and wait until it is
 * ready. A twin that cannot start does not stop the daemon: the service
 * keeps the reason, reports it in status, and calls fail with it.
 */
int tbx_twin_service_start(const struct tbx_paths *paths, struct tbx_twin_service **out);
/* Stop supervising and stop twind (SIGTERM, then SIGKILL after a grace period). */
void tbx_twin_service_free(struct tbx_twin_service *svc);

/*
 * One control-plane call: method and path (e.g. "GET", "/v1/gateway/health",
 * or a whole URL under the base, such as a service's control_url),
 * an optional JSON body. Returns 0 with the HTTP status and the parsed body
 * (NULL when empty or not JSON), or a negative status when the control plane
 * could not be reached. Worker threads only.
 */
int tbx_twin_call(struct tbx_twin_service *svc, const char *method, const char *path,
		  struct json_object *body, long *http_status, struct json_object **out);

/* Nonzero for the local twind (its gateway is on this machine), 0 for the Veris cloud. */
int tbx_twin_service_is_local(struct tbx_twin_service *svc);
/*
 * The local gateway's SOCKS5 Unix socket (<runtime>/gateway/socks.sock; the
 * CONNECT one, connect.sock, is beside it), or NULL for the Veris cloud. The
 * path is fixed for the daemon's life and across restarts of twind.
 */
const char *tbx_twin_service_gateway_socket(struct tbx_twin_service *svc);

/* {mode, base, pid?, restarts, healthy, error?} for `status`. Worker threads only. */
struct json_object *tbx_twin_service_status(struct tbx_twin_service *svc);

#endif
