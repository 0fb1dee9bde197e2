/* SPDX-License-Identifier: MIT */
/* One frame from a client: validate it, answer hello and cancel, hand methods to the workers. */
#include "rpc-priv.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "methods.h"

static void handle_hello(struct tbx_conn *conn, struct json_object *id, struct json_object *params)
{
	struct json_object *v, *result;
	const char *protocol = NULL;
	struct frontend_slot *fe;

	if (params && json_object_object_get_ex(params, "protocol", &v) &&
	    json_object_is_type(v, json_type_string))
		protocol = json_object_get_string(v);
	if (!protocol) {
		tbx_rpc_send_error(conn, id, RPC_INVALID_PARAMS,
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
		tbx_rpc_send_result(conn, id, result);
		json_object_put(result);
		return;
	}
	fe = tbx_frontend_for(conn->server, protocol);
	if (!fe) {
		char msg[1024];
		size_t used = (size_t)snprintf(msg, sizeof(msg),
			"unknown protocol '%s'; this daemon speaks %s", protocol, TBX_PROTOCOL_CORE);
		for (size_t i = 0; i < conn->server->n_frontends && used < sizeof(msg); i++)
			used += (size_t)snprintf(msg + used, sizeof(msg) - used, ", %s",
						 conn->server->frontends[i].ops->protocol);
		tbx_rpc_send_error(conn, id, RPC_INVALID_PARAMS, msg, "TBX_EINVAL");
		return;
	}
	conn->said_hello = 1;
	conn->frontend = fe;
	if (fe->ops->conn_open &&
	    fe->ops->conn_open(fe->instance, conn, json_object_to_json_string(params),
			       &conn->frontend_state) < 0) {
		tbx_rpc_send_error(conn, id, RPC_APP_BASE - TBX_EIO, "the frontend refused the connection",
			   "TBX_EIO");
		tbx_conn_close(conn);
		return;
	}
	result = json_object_new_object();
	json_object_object_add(result, "protocol", json_object_new_string(protocol));
	json_object_object_add(result, "server", json_object_new_string("twinboxd"));
	json_object_object_add(result, "version", json_object_new_string(TBX_VERSION));
	tbx_rpc_send_result(conn, id, result);
	json_object_put(result);
}

static void handle_cancel(struct tbx_conn *conn, struct json_object *id, struct json_object *params)
{
	struct json_object *target = NULL, *result;
	int found = 0;

	if (!params || !json_object_object_get_ex(params, "id", &target)) {
		if (id)
			tbx_rpc_send_error(conn, id, RPC_INVALID_PARAMS, "cancel needs params {\"id\": <request id>}",
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
		tbx_rpc_send_result(conn, id, result);
		json_object_put(result);
	}
}

static int valid_id(struct json_object *id)
{
	return !id || json_object_is_type(id, json_type_string) ||
	       json_object_is_type(id, json_type_int) || json_object_is_type(id, json_type_double);
}

void tbx_rpc_handle_frame(struct tbx_conn *conn, const char *line, size_t len)
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
		tbx_rpc_send_error(conn, NULL, RPC_PARSE_ERROR, buf, "TBX_EINVAL");
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
		tbx_rpc_send_error(conn, NULL, RPC_INVALID_REQUEST,
			   json_object_is_type(msg, json_type_array)
				   ? "batch requests are not supported; send one request per line"
				   : "a request must be a JSON object",
			   "TBX_EINVAL");
		goto out;
	}
	json_object_object_get_ex(msg, "id", &id);
	if (!valid_id(id)) {
		tbx_rpc_send_error(conn, NULL, RPC_INVALID_REQUEST, "\"id\" must be a string or a number",
			   "TBX_EINVAL");
		goto out;
	}
	if (!json_object_object_get_ex(msg, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "2.0") != 0) {
		tbx_rpc_send_error(conn, id, RPC_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"", "TBX_EINVAL");
		goto out;
	}
	if (!json_object_object_get_ex(msg, "method", &v) || !json_object_is_type(v, json_type_string)) {
		tbx_rpc_send_error(conn, id, RPC_INVALID_REQUEST, "\"method\" must be a string", "TBX_EINVAL");
		goto out;
	}
	method = json_object_get_string(v);
	if (json_object_object_get_ex(msg, "params", &params) && params &&
	    !json_object_is_type(params, json_type_object)) {
		tbx_rpc_send_error(conn, id, RPC_INVALID_PARAMS, "\"params\" must be an object", "TBX_EINVAL");
		goto out;
	}
	if (strcmp(method, "hello") == 0) {
		if (!id)
			goto out;
		handle_hello(conn, id, params);
		goto out;
	}
	if (!conn->said_hello) {
		tbx_rpc_send_error(conn, id, RPC_INVALID_REQUEST,
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
			tbx_rpc_send_error(conn, id, RPC_METHOD_NOT_FOUND, buf, "TBX_ENOENT");
		goto out;
	}
	req = tbx_request_new(conn, m, id, params);
	if (!req) {
		tbx_rpc_send_error(conn, id, RPC_APP_BASE - TBX_ENOMEM, "out of memory", "TBX_ENOMEM");
		goto out;
	}
	tbx_request_submit(req);
out:
	json_object_put(msg);
}
