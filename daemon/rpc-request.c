/* SPDX-License-Identifier: MIT */
/* In-flight requests: running a method on a worker, progress, the reply, and parameter checks. */
#include "rpc-priv.h"

#include <event2/event.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "methods.h"
#include "module.h"

static void request_free(struct tbx_request *req)
{
	json_object_put(req->id);
	json_object_put(req->params);
	json_object_put(req->result);
	free(req->message);
	free(req);
}

static void request_work(struct tbx_job *job)
{
	struct tbx_request *req = (struct tbx_request *)job;
	struct json_object *params = req->params ? req->params : NULL;
	struct json_object *empty = NULL;

	tbx_error_clear();
	if (!params)
		params = empty = json_object_new_object();
	req->status = req->method->fn(req, params, &req->result);
	if (req->status < 0) {
		json_object_put(req->result);
		req->result = NULL;
		req->message = strdup(tbx_error_message());
	} else if (!req->result) {
		req->result = json_object_new_object();
	}
	json_object_put(empty);
}

static void request_done(struct tbx_job *job)
{
	struct tbx_request *req = (struct tbx_request *)job;
	struct tbx_conn *conn = req->conn;
	struct tbx_server *server = conn->server;

	if (req->prev)
		req->prev->next = req->next;
	else
		conn->requests = req->next;
	if (req->next)
		req->next->prev = req->prev;
	server->inflight--;

	if (req->on_reply) {
		if (!conn->closed) {
			const char *result = req->result ? json_object_to_json_string_ext(
				req->result, JSON_C_TO_STRING_PLAIN) : NULL;
			req->on_reply(req->status, result, req->message, req->payload);
		}
	} else if (req->id) {
		if (req->status < 0)
			tbx_rpc_send_error(conn, req->id,
				   req->invalid_params ? RPC_INVALID_PARAMS : RPC_APP_BASE - req->status,
				   req->message, tbx_status_name(req->status));
		else
			tbx_rpc_send_result(conn, req->id, req->result);
	}
	tbx_conn_unref(conn);
	request_free(req);
	if (server->inflight == 0 && server->stopping)
		event_base_loopbreak(server->base);
}

struct tbx_request *tbx_request_new(struct tbx_conn *conn, const struct tbx_method *method,
				       struct json_object *id, struct json_object *params)
{
	struct tbx_request *req = calloc(1, sizeof(*req));

	if (!req)
		return NULL;
	req->job.work = request_work;
	req->job.done = request_done;
	req->job.priority = method->priority;
	atomic_init(&req->job.cancel, 0);
	req->conn = conn;
	req->method = method;
	req->id = id ? json_object_get(id) : NULL;
	req->params = params ? json_object_get(params) : NULL;
	return req;
}

void tbx_request_submit(struct tbx_request *req)
{
	struct tbx_conn *conn = req->conn;

	conn->refs++;
	req->next = conn->requests;
	if (conn->requests)
		conn->requests->prev = req;
	conn->requests = req;
	conn->server->inflight++;
	tbx_workers_submit(conn->server->workers, &req->job);
}

struct tbx_core *tbx_request_core(struct tbx_request *req)
{
	return req->conn->server->core;
}

const atomic_int *tbx_request_cancel(struct tbx_request *req)
{
	return &req->job.cancel;
}

const char *tbx_request_frontend(struct tbx_request *req)
{
	if (req->conn->frontend)
		return req->conn->frontend->module->desc->name;
	return "cli";
}

void tbx_request_mark_invalid_params(struct tbx_request *req)
{
	req->invalid_params = 1;
}

struct progress_msg {
	struct tbx_request *req;
	struct json_object *progress;
};

static void progress_deliver(void *arg)
{
	struct progress_msg *pm = arg;
	struct tbx_request *req = pm->req;

	if (!req->conn->closed) {
		if (req->on_progress) {
			req->on_progress(json_object_to_json_string_ext(pm->progress,
									 JSON_C_TO_STRING_PLAIN),
					 req->payload);
		} else if (req->id) {
			struct json_object *msg = json_object_new_object();
			json_object_object_add(pm->progress, "id", json_object_get(req->id));
			json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
			json_object_object_add(msg, "method", json_object_new_string("progress"));
			json_object_object_add(msg, "params", json_object_get(pm->progress));
			tbx_conn_write_json(req->conn, msg);
			json_object_put(msg);
		}
	}
	json_object_put(pm->progress);
	free(pm);
}

void tbx_request_progress(struct tbx_request *req, struct json_object *progress)
{
	struct progress_msg *pm = malloc(sizeof(*pm));

	if (!pm) {
		json_object_put(progress);
		return;
	}
	pm->req = req;
	pm->progress = progress;
	/* The request outlives this: its done callback is posted after us (FIFO). */
	if (tbx_workers_post(req->conn->server->workers, progress_deliver, pm) != 0) {
		json_object_put(progress);
		free(pm);
	}
}

static int param_fail(struct tbx_request *req, const char *name, const char *type)
{
	req->invalid_params = 1;
	return tbx_error_set(TBX_EINVAL, "parameter '%s' must be %s", name, type);
}

int tbx_param_string(struct tbx_request *req, struct json_object *params, const char *name,
		     int required, const char **out)
{
	struct json_object *v = NULL;

	*out = NULL;
	if (!json_object_object_get_ex(params, name, &v) || !v) {
		if (!required)
			return 0;
		req->invalid_params = 1;
		return tbx_error_set(TBX_EINVAL, "missing parameter '%s' (a string)", name);
	}
	if (!json_object_is_type(v, json_type_string))
		return param_fail(req, name, "a string");
	*out = json_object_get_string(v);
	return 0;
}

int tbx_param_bool(struct tbx_request *req, struct json_object *params, const char *name, int *out)
{
	struct json_object *v = NULL;

	*out = 0;
	if (!json_object_object_get_ex(params, name, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return param_fail(req, name, "true or false");
	*out = json_object_get_boolean(v);
	return 0;
}

int tbx_param_object(struct tbx_request *req, struct json_object *params, const char *name,
		     int required, struct json_object **out)
{
	struct json_object *v = NULL;

	*out = NULL;
	if (!json_object_object_get_ex(params, name, &v) || !v) {
		if (!required)
			return 0;
		req->invalid_params = 1;
		return tbx_error_set(TBX_EINVAL, "missing parameter '%s' (an object)", name);
	}
	if (!json_object_is_type(v, json_type_object))
		return param_fail(req, name, "an object");
	*out = v;
	return 0;
}
