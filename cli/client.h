/* SPDX-License-Identifier: MIT */
/*
 * A blocking twinbox/1 client for the CLI: connects to the daemon's socket,
 * starting the daemon when no live socket answers, says hello, and makes
 * calls whose progress notifications arrive through a callback.
 */
#ifndef TBX_CLIENT_H
#define TBX_CLIENT_H

struct json_object;
struct tbx_client;

typedef void (*tbx_client_progress_cb)(struct json_object *params, void *payload);

/* Connect (and with autostart, start twinboxd if needed) and say hello. */
int tbx_client_connect(int autostart, struct tbx_client **out);
/*
 * Call method with params (borrowed; NULL = {}). On success *result_out is
 * the result (caller puts it). On failure returns a negative status with the
 * daemon's message in the core error, and *rpc_code_out (if given) set to
 * the JSON-RPC error code.
 */
int tbx_client_call(struct tbx_client *c, const char *method, struct json_object *params,
		    tbx_client_progress_cb on_progress, void *payload,
		    struct json_object **result_out, int *rpc_code_out);
void tbx_client_close(struct tbx_client *c);
/* Wait until nothing answers on the socket any more; 0, or -1 after timeout_ms. */
int tbx_client_wait_gone(int timeout_ms);

#endif
