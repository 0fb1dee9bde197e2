/* SPDX-License-Identifier: MIT */
/*
 * The core API, protocol twinbox/1: one handler per JSON-RPC method. Handlers
 * run on worker threads, read their params with the tbx_param_* helpers and
 * return a result object or a negative status with the core error set.
 */
#ifndef TBX_METHODS_H
#define TBX_METHODS_H

#include <stdatomic.h>
#include <stddef.h>

struct json_object;
struct tbx_core;
struct tbx_request;

typedef int (*tbx_method_fn)(struct tbx_request *req, struct json_object *params,
			     struct json_object **result_out);

struct tbx_method {
	const char *name;
	tbx_method_fn fn;
	int priority; /* cheap: may use the priority workers */
	const char *summary;
};

const struct tbx_method *tbx_method_find(const char *name);
/* "a, b, c" of every method name, for error messages. */
const char *tbx_method_names(void);

/* What a handler may ask of its request (implemented by the RPC server). */
struct tbx_core *tbx_request_core(struct tbx_request *req);
const atomic_int *tbx_request_cancel(struct tbx_request *req);
/* Send a progress notification for this request; takes ownership. Any thread. */
void tbx_request_progress(struct tbx_request *req, struct json_object *progress);
/* The frontend the request came through ("cli" for twinbox/1 clients). */
const char *tbx_request_frontend(struct tbx_request *req);

/*
 * Parameter access. A wrong type or a missing required parameter sets the
 * core error (TBX_EINVAL, naming the parameter) and marks the request as an
 * "invalid params" failure.
 */
int tbx_param_string(struct tbx_request *req, struct json_object *params, const char *name,
		     int required, const char **out);
int tbx_param_bool(struct tbx_request *req, struct json_object *params, const char *name,
		   int *out);
int tbx_param_object(struct tbx_request *req, struct json_object *params, const char *name,
		     int required, struct json_object **out);
void tbx_request_mark_invalid_params(struct tbx_request *req);

#endif
