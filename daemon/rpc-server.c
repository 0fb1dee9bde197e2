/* SPDX-License-Identifier: MIT */
/* The daemon's socket: connections, framing, hello, dispatch, replies (see rpc-server.h). */
#define _GNU_SOURCE /* struct ucred */
#include "rpc-server.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <twinbox/frontend.h>

#include "call.h"
#include "config.h"
#include "core.h"
#include "error.h"
#include "log.h"
#include "methods.h"
#include "workers.h"

#define TBX_LOG_CATEGORY "rpc"

/* JSON-RPC's own codes, for protocol failures only. */
#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
/* Application errors live outside -32768..-32000: 1000 + |tbx_status|. */
#define RPC_APP_BASE 1000

#define MAX_CLIENTS 512

struct tbx_request;

struct frontend_slot {
	const struct tbx_module *module;
	const struct tbx_frontend_ops *ops;
	void *instance;
};

struct tbx_conn {
	int refs;
	struct tbx_server *server;
	struct bufferevent *bev;
	struct tbx_conn *prev, *next;
	int closed;
	int said_hello;
	int discarding; /* skipping the rest of an oversized frame */
	char *client;
	struct frontend_slot *frontend;
	void *frontend_state;
	struct tbx_request *requests;
};

struct tbx_request {
	struct tbx_job job;
	struct tbx_conn *conn;
	struct tbx_request *prev, *next;
	struct json_object *id; /* NULL for a notification */
	const struct tbx_method *method;
	struct json_object *params;
	int status;
	int invalid_params;
	struct json_object *result;
	char *message;
	/* Set when a frontend made the call rather than a twinbox/1 client. */
	tbx_core_reply_cb on_reply;
	tbx_core_progress_cb on_progress;
	void *payload;
	int64_t call_id;
};

struct tbx_server {
	struct event_base *base;
	struct tbx_workers *workers;
	struct tbx_core *core;
	struct evconnlistener *listener;
	struct tbx_conn *conns;
	atomic_int n_conns; /* read by daemon.status on a worker */
	int inflight;
	int stopping;
	int64_t next_call_id;
	struct frontend_slot *frontends;
	size_t n_frontends;
	struct tbx_frontend_host fhost;
};

static void conn_unref(struct tbx_conn *conn)
{
	if (--conn->refs > 0)
		return;
	free(conn->client);
	free(conn);
}

/* ---- writing ---- */

static void conn_write_json(struct tbx_conn *conn, struct json_object *msg)
{
	size_t len;
	const char *text;

	if (conn->closed || !conn->bev)
		return;
	text = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN |
						  JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	bufferevent_write(conn->bev, text, len);
	bufferevent_write(conn->bev, "\n", 1);
}

static void send_error(struct tbx_conn *conn, struct json_object *id, int code,
		       const char *message, const char *reason)
{
	struct json_object *msg = json_object_new_object(), *err = json_object_new_object();

	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", id ? json_object_get(id) : NULL);
	json_object_object_add(err, "code", json_object_new_int(code));
	json_object_object_add(err, "message", json_object_new_string(message));
	if (reason) {
		struct json_object *data = json_object_new_object();
		json_object_object_add(data, "reason", json_object_new_string(reason));
		json_object_object_add(err, "data", data);
	}
	json_object_object_add(msg, "error", err);
	conn_write_json(conn, msg);
	json_object_put(msg);
}

static void send_result(struct tbx_conn *conn, struct json_object *id, struct json_object *result)
{
	struct json_object *msg = json_object_new_object();

	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", json_object_get(id));
	json_object_object_add(msg, "result", result ? json_object_get(result) : json_object_new_object());
	conn_write_json(conn, msg);
	json_object_put(msg);
}

/* ---- requests ---- */

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
			send_error(conn, req->id,
				   req->invalid_params ? RPC_INVALID_PARAMS : RPC_APP_BASE - req->status,
				   req->message, tbx_status_name(req->status));
		else
			send_result(conn, req->id, req->result);
	}
	conn_unref(conn);
	request_free(req);
	if (server->inflight == 0 && server->stopping)
		event_base_loopbreak(server->base);
}

static struct tbx_request *request_new(struct tbx_conn *conn, const struct tbx_method *method,
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

static void request_submit(struct tbx_request *req)
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
			conn_write_json(req->conn, msg);
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

/* ---- parameters ---- */

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

/* ---- frontends ---- */

static void conn_close_now(struct tbx_conn *conn);

static int fhost_conn_send(struct tbx_conn *conn, const char *json, size_t len)
{
	if (!conn || conn->closed || !conn->bev)
		return TBX_EIO;
	bufferevent_write(conn->bev, json, len);
	bufferevent_write(conn->bev, "\n", 1);
	return 0;
}

static void fhost_conn_close(struct tbx_conn *conn)
{
	if (conn && !conn->closed)
		conn_close_now(conn);
}

static int64_t fhost_core_call(struct tbx_conn *conn, const char *method, const char *params_json,
			       tbx_core_reply_cb on_reply, tbx_core_progress_cb on_progress,
			       void *payload)
{
	const struct tbx_method *m = method ? tbx_method_find(method) : NULL;
	struct json_object *params = NULL;
	struct tbx_request *req;

	if (!conn || conn->closed || !on_reply || !m)
		return m ? TBX_EINVAL : TBX_ENOENT;
	if (params_json && !(params = json_tokener_parse(params_json)))
		return TBX_EINVAL;
	req = request_new(conn, m, NULL, params);
	json_object_put(params);
	if (!req)
		return TBX_ENOMEM;
	req->on_reply = on_reply;
	req->on_progress = on_progress;
	req->payload = payload;
	req->call_id = ++conn->server->next_call_id;
	request_submit(req);
	return req->call_id;
}

static void fhost_core_cancel(struct tbx_conn *conn, int64_t call_id)
{
	for (struct tbx_request *r = conn ? conn->requests : NULL; r; r = r->next)
		if (r->call_id == call_id)
			atomic_store(&r->job.cancel, 1);
}

static void frontends_init(struct tbx_server *server)
{
	const struct tbx_registry *reg = &server->core->registry;

	server->fhost.struct_size = sizeof(server->fhost);
	server->fhost.abi_minor = TBX_ABI_MINOR;
	server->fhost.conn_send = fhost_conn_send;
	server->fhost.conn_close = fhost_conn_close;
	server->fhost.core_call = fhost_core_call;
	server->fhost.core_cancel = fhost_core_cancel;
	server->frontends = calloc(reg->n_modules ? reg->n_modules : 1, sizeof(*server->frontends));
	for (size_t i = 0; server->frontends && i < reg->n_modules; i++) {
		const struct tbx_module *m = reg->modules[i];
		struct frontend_slot *slot = &server->frontends[server->n_frontends];
		struct tbx_call call;

		if (m->desc->kind != TBX_PLUGIN_FRONTEND)
			continue;
		slot->module = m;
		slot->ops = m->desc->ops;
		tbx_call_init(&call, m, NULL);
		if (slot->ops->instance_new &&
		    slot->ops->instance_new(&call, &server->fhost, &slot->instance) < 0) {
			tbx_log_warn("frontend %s did not start: %s", m->desc->name, call.message);
			continue;
		}
		server->n_frontends++;
	}
}

static struct frontend_slot *frontend_for(struct tbx_server *server, const char *protocol)
{
	for (size_t i = 0; i < server->n_frontends; i++)
		if (strcmp(server->frontends[i].ops->protocol, protocol) == 0)
			return &server->frontends[i];
	return NULL;
}

/* ---- messages ---- */

static void handle_hello(struct tbx_conn *conn, struct json_object *id, struct json_object *params)
{
	struct json_object *v, *result;
	const char *protocol = NULL;
	struct frontend_slot *fe;

	if (params && json_object_object_get_ex(params, "protocol", &v) &&
	    json_object_is_type(v, json_type_string))
		protocol = json_object_get_string(v);
	if (!protocol) {
		send_error(conn, id, RPC_INVALID_PARAMS,
			   "hello needs params {\"protocol\": \"twinbox/1\", \"client\": \"<name>\"}",
			   "TBX_EINVAL");
		return;
	}
	if (params && json_object_object_get_ex(params, "client", &v) &&
	    json_object_is_type(v, json_type_string)) {
		free(conn->client);
		conn->client = strdup(json_object_get_string(v));
	}
	if (strcmp(protocol, TBX_PROTOCOL_CORE) == 0) {
		conn->said_hello = 1;
		result = json_object_new_object();
		json_object_object_add(result, "protocol", json_object_new_string(TBX_PROTOCOL_CORE));
		json_object_object_add(result, "server", json_object_new_string("twinboxd"));
		json_object_object_add(result, "version", json_object_new_string(TBX_VERSION));
		json_object_object_add(result, "pid", json_object_new_int(getpid()));
		send_result(conn, id, result);
		json_object_put(result);
		return;
	}
	fe = frontend_for(conn->server, protocol);
	if (!fe) {
		char msg[1024];
		size_t used = (size_t)snprintf(msg, sizeof(msg),
			"unknown protocol '%s'; this daemon speaks %s", protocol, TBX_PROTOCOL_CORE);
		for (size_t i = 0; i < conn->server->n_frontends && used < sizeof(msg); i++)
			used += (size_t)snprintf(msg + used, sizeof(msg) - used, ", %s",
						 conn->server->frontends[i].ops->protocol);
		send_error(conn, id, RPC_INVALID_PARAMS, msg, "TBX_EINVAL");
		return;
	}
	conn->said_hello = 1;
	conn->frontend = fe;
	if (fe->ops->conn_open &&
	    fe->ops->conn_open(fe->instance, conn, json_object_to_json_string(params),
			       &conn->frontend_state) < 0) {
		send_error(conn, id, RPC_APP_BASE - TBX_EIO, "the frontend refused the connection",
			   "TBX_EIO");
		conn_close_now(conn);
		return;
	}
	result = json_object_new_object();
	json_object_object_add(result, "protocol", json_object_new_string(protocol));
	json_object_object_add(result, "server", json_object_new_string("twinboxd"));
	json_object_object_add(result, "version", json_object_new_string(TBX_VERSION));
	send_result(conn, id, result);
	json_object_put(result);
}

static void handle_cancel(struct tbx_conn *conn, struct json_object *id, struct json_object *params)
{
	struct json_object *target = NULL, *result;
	int found = 0;

	if (!params || !json_object_object_get_ex(params, "id", &target)) {
		if (id)
			send_error(conn, id, RPC_INVALID_PARAMS, "cancel needs params {\"id\": <request id>}",
				   "TBX_EINVAL");
		return;
	}
	for (struct tbx_request *r = conn->requests; r; r = r->next) {
		if (r->id && json_object_equal(r->id, target)) {
			atomic_store(&r->job.cancel, 1);
			found = 1;
		}
	}
	if (id) {
		result = json_object_new_object();
		json_object_object_add(result, "cancelled", json_object_new_boolean(found));
		send_result(conn, id, result);
		json_object_put(result);
	}
}

static int valid_id(struct json_object *id)
{
	return !id || json_object_is_type(id, json_type_string) ||
	       json_object_is_type(id, json_type_int) || json_object_is_type(id, json_type_double);
}

static void handle_frame(struct tbx_conn *conn, const char *line, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *msg, *v, *id = NULL, *params = NULL;
	const struct tbx_method *m;
	const char *method;
	struct tbx_request *req;
	char buf[640];
	size_t end;

	msg = json_tokener_parse_ex(tok, line, (int)len);
	end = json_tokener_get_parse_end(tok);
	if (!msg && json_tokener_get_error(tok) == json_tokener_continue) {
		/* A bare number is only complete once the tokener sees its end. */
		msg = json_tokener_parse_ex(tok, "", 1);
		end = len;
	}
	if (!msg || end != len) {
		enum json_tokener_error jerr = json_tokener_get_error(tok);
		snprintf(buf, sizeof(buf), "invalid JSON at byte %zu: %s; send one JSON-RPC object per line",
			 end,
			 msg ? "trailing data after the object" : json_tokener_error_desc(jerr));
		send_error(conn, NULL, RPC_PARSE_ERROR, buf, "TBX_EINVAL");
		json_object_put(msg);
		json_tokener_free(tok);
		return;
	}
	json_tokener_free(tok);
	if (conn->frontend) {
		json_object_put(msg);
		if (conn->frontend->ops->conn_message)
			conn->frontend->ops->conn_message(conn->frontend->instance,
							  conn->frontend_state, line, len);
		return;
	}
	if (!json_object_is_type(msg, json_type_object)) {
		send_error(conn, NULL, RPC_INVALID_REQUEST,
			   json_object_is_type(msg, json_type_array)
				   ? "batch requests are not supported; send one request per line"
				   : "a request must be a JSON object",
			   "TBX_EINVAL");
		goto out;
	}
	json_object_object_get_ex(msg, "id", &id);
	if (!valid_id(id)) {
		send_error(conn, NULL, RPC_INVALID_REQUEST, "\"id\" must be a string or a number",
			   "TBX_EINVAL");
		goto out;
	}
	if (!json_object_object_get_ex(msg, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "2.0") != 0) {
		send_error(conn, id, RPC_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"", "TBX_EINVAL");
		goto out;
	}
	if (!json_object_object_get_ex(msg, "method", &v) || !json_object_is_type(v, json_type_string)) {
		send_error(conn, id, RPC_INVALID_REQUEST, "\"method\" must be a string", "TBX_EINVAL");
		goto out;
	}
	method = json_object_get_string(v);
	if (json_object_object_get_ex(msg, "params", &params) && params &&
	    !json_object_is_type(params, json_type_object)) {
		send_error(conn, id, RPC_INVALID_PARAMS, "\"params\" must be an object", "TBX_EINVAL");
		goto out;
	}
	if (strcmp(method, "hello") == 0) {
		if (!id)
			goto out;
		handle_hello(conn, id, params);
		goto out;
	}
	if (!conn->said_hello) {
		send_error(conn, id, RPC_INVALID_REQUEST,
			   "say hello first: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\","
			   "\"params\":{\"protocol\":\"twinbox/1\"}}",
			   "TBX_EINVAL");
		goto out;
	}
	if (strcmp(method, "cancel") == 0) {
		handle_cancel(conn, id, params);
		goto out;
	}
	m = tbx_method_find(method);
	if (!m) {
		snprintf(buf, sizeof(buf), "unknown method '%.64s'; methods are: %s", method,
			 tbx_method_names());
		if (id)
			send_error(conn, id, RPC_METHOD_NOT_FOUND, buf, "TBX_ENOENT");
		goto out;
	}
	req = request_new(conn, m, id, params);
	if (!req) {
		send_error(conn, id, RPC_APP_BASE - TBX_ENOMEM, "out of memory", "TBX_ENOMEM");
		goto out;
	}
	request_submit(req);
out:
	json_object_put(msg);
}

/* ---- connections ---- */

static void conn_close_now(struct tbx_conn *conn)
{
	struct tbx_server *server = conn->server;

	if (conn->closed)
		return;
	conn->closed = 1;
	for (struct tbx_request *r = conn->requests; r; r = r->next)
		atomic_store(&r->job.cancel, 1); /* nobody is left to read the answer */
	if (conn->frontend && conn->frontend->ops->conn_closed)
		conn->frontend->ops->conn_closed(conn->frontend->instance, conn->frontend_state);
	bufferevent_free(conn->bev);
	conn->bev = NULL;
	if (conn->prev)
		conn->prev->next = conn->next;
	else
		server->conns = conn->next;
	if (conn->next)
		conn->next->prev = conn->prev;
	server->n_conns--;
	conn_unref(conn);
}

static void conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct tbx_conn *conn = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	char msg[160];

	conn->refs++; /* a frontend may close the connection under us */
	while (!conn->closed) {
		size_t len;
		char *line;

		if (conn->discarding) {
			struct evbuffer_ptr eol = evbuffer_search_eol(in, NULL, NULL, EVBUFFER_EOL_LF);
			if (eol.pos < 0) {
				evbuffer_drain(in, evbuffer_get_length(in));
				break;
			}
			evbuffer_drain(in, (size_t)eol.pos + 1);
			conn->discarding = 0;
			continue;
		}
		line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF);
		if (!line) {
			if (evbuffer_get_length(in) > TBX_RPC_MAX_FRAME) {
				snprintf(msg, sizeof(msg),
					 "frame longer than %u bytes; send smaller requests (write large files in parts)",
					 TBX_RPC_MAX_FRAME);
				send_error(conn, NULL, RPC_INVALID_REQUEST, msg, "TBX_EINVAL");
				evbuffer_drain(in, evbuffer_get_length(in));
				conn->discarding = 1;
			}
			break;
		}
		if (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		if (len > TBX_RPC_MAX_FRAME) {
			snprintf(msg, sizeof(msg), "frame longer than %u bytes; send smaller requests",
				 TBX_RPC_MAX_FRAME);
			send_error(conn, NULL, RPC_INVALID_REQUEST, msg, "TBX_EINVAL");
		} else if (len > 0) {
			handle_frame(conn, line, len);
		}
		free(line);
	}
	conn_unref(conn);
}

static void conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct tbx_conn *conn = arg;

	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		conn_close_now(conn);
}

static struct tbx_conn *conn_add(struct tbx_server *server, int fd)
{
	struct tbx_conn *conn = calloc(1, sizeof(*conn));

	if (!conn) {
		close(fd);
		return NULL;
	}
	conn->bev = bufferevent_socket_new(server->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!conn->bev) {
		close(fd);
		free(conn);
		return NULL;
	}
	conn->refs = 1;
	conn->server = server;
	conn->next = server->conns;
	if (server->conns)
		server->conns->prev = conn;
	server->conns = conn;
	server->n_conns++;
	bufferevent_setcb(conn->bev, conn_read_cb, NULL, conn_event_cb, conn);
	bufferevent_enable(conn->bev, EV_READ | EV_WRITE);
	return conn;
}

struct tbx_conn *tbx_server_conn_for_fd(struct tbx_server *server, int fd)
{
	evutil_make_socket_nonblocking(fd);
	return conn_add(server, fd);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len,
		      void *arg)
{
	struct tbx_server *server = arg;
	struct ucred cred;
	socklen_t cred_len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 ||
	    cred.uid != geteuid()) {
		tbx_log_warn("refused a client of uid %d: only uid %d may use this daemon",
			     cred_len == sizeof(cred) ? (int)cred.uid : -1, (int)geteuid());
		close(fd);
		return;
	}
	if (server->n_conns >= MAX_CLIENTS) {
		static const char busy[] = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":1010,"
					   "\"message\":\"too many clients; try again later\"}}\n";
		if (write(fd, busy, sizeof(busy) - 1) < 0)
			tbx_log_debug("could not tell a client the daemon is busy");
		close(fd);
		return;
	}
	conn_add(server, fd);
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	/* EMFILE and friends: log and keep listening; clients retry. */
	tbx_log_warn("accept failed: %s", strerror(EVUTIL_SOCKET_ERROR()));
}

int tbx_server_new(struct event_base *base, struct tbx_workers *workers, struct tbx_core *core,
		   int listen_fd, struct tbx_server **out)
{
	struct tbx_server *server = calloc(1, sizeof(*server));

	if (!server)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	server->base = base;
	server->workers = workers;
	server->core = core;
	if (listen_fd >= 0) {
		evutil_make_socket_nonblocking(listen_fd);
		server->listener = evconnlistener_new(base, accept_cb, server,
						      LEV_OPT_CLOSE_ON_FREE, -1, listen_fd);
		if (!server->listener) {
			free(server);
			return tbx_error_set(TBX_EIO, "cannot listen on the daemon socket");
		}
		evconnlistener_set_error_cb(server->listener, accept_error_cb);
	}
	frontends_init(server);
	core->server = server;
	*out = server;
	return 0;
}

static void stop_cb(void *arg)
{
	struct tbx_server *server = arg;

	tbx_server_shutdown(server);
}

void tbx_server_stop(struct tbx_server *server)
{
	tbx_workers_post(server->workers, stop_cb, server);
}

void tbx_server_shutdown(struct tbx_server *server)
{
	server->stopping = 1;
	if (server->listener) {
		evconnlistener_free(server->listener);
		server->listener = NULL;
	}
	for (struct tbx_conn *c = server->conns; c; c = c->next)
		for (struct tbx_request *r = c->requests; r; r = r->next)
			atomic_store(&r->job.cancel, 1);
	if (server->inflight == 0)
		event_base_loopbreak(server->base);
}

void tbx_server_flush(struct tbx_server *server, int timeout_ms)
{
	for (int waited = 0; waited < timeout_ms; waited += 10) {
		int pending = 0;
		for (struct tbx_conn *c = server->conns; c; c = c->next)
			if (c->bev && evbuffer_get_length(bufferevent_get_output(c->bev)))
				pending = 1;
		if (!pending)
			return;
		event_base_loop(server->base, EVLOOP_NONBLOCK);
		usleep(10000);
	}
}

int tbx_server_inflight(struct tbx_server *server)
{
	return server->inflight;
}

int tbx_server_clients(struct tbx_server *server)
{
	return server ? atomic_load(&server->n_conns) : 0;
}

void tbx_server_free(struct tbx_server *server)
{
	if (!server)
		return;
	while (server->conns)
		conn_close_now(server->conns);
	if (server->listener)
		evconnlistener_free(server->listener);
	for (size_t i = 0; i < server->n_frontends; i++)
		if (server->frontends[i].ops->instance_free)
			server->frontends[i].ops->instance_free(server->frontends[i].instance);
	free(server->frontends);
	free(server);
}
