/* SPDX-License-Identifier: MIT */
/*
 * A test frontend speaking "echo/1": each frame {"call": METHOD, "params":
 * {...}, "tag": T} becomes a core call whose progress and reply come back as
 * {"tag": T, "progress": ...} and {"tag": T, "status": N, "result"|"message"};
 * {"close": true} closes the connection. It proves the frontend ABI end to end.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include <twinbox/frontend.h>

static const struct tbx_host_api *host;

struct echo_conn {
	struct tbx_conn *conn;
	const struct tbx_frontend_host *fhost;
	int closed;
};

struct echo_call {
	struct echo_conn *ec;
	struct json_object *tag;
};

static void send_obj(struct echo_conn *ec, struct json_object *o)
{
	size_t len;
	const char *text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);

	ec->fhost->conn_send(ec->conn, text, len);
	json_object_put(o);
}

static void on_progress(const char *progress_json, void *payload)
{
	struct echo_call *call = payload;
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "tag", json_object_get(call->tag));
	json_object_object_add(o, "progress", json_tokener_parse(progress_json));
	send_obj(call->ec, o);
}

static void on_reply(int status, const char *result_json, const char *message, void *payload)
{
	struct echo_call *call = payload;
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "tag", json_object_get(call->tag));
	json_object_object_add(o, "status", json_object_new_int(status));
	if (result_json)
		json_object_object_add(o, "result", json_tokener_parse(result_json));
	if (message)
		json_object_object_add(o, "message", json_object_new_string(message));
	send_obj(call->ec, o);
	json_object_put(call->tag);
	free(call);
}

static int echo_instance_new(struct tbx_call *call, const struct tbx_frontend_host *fhost,
			     void **out)
{
	*out = (void *)fhost;
	return 0;
}

static int echo_conn_open(void *instance, struct tbx_conn *conn, const char *hello_json,
			  void **state_out)
{
	struct echo_conn *ec = calloc(1, sizeof(*ec));

	if (!ec)
		return TBX_ENOMEM;
	ec->conn = conn;
	ec->fhost = instance;
	*state_out = ec;
	return 0;
}

static int echo_conn_message(void *instance, void *state, const char *json, size_t len)
{
	struct echo_conn *ec = state;
	struct json_object *msg = json_tokener_parse(json), *method, *params, *flag;
	struct echo_call *call;
	int64_t id;

	if (!msg)
		return TBX_EINVAL;
	if (json_object_object_get_ex(msg, "close", &flag)) {
		json_object_put(msg);
		ec->fhost->conn_close(ec->conn);
		return 0;
	}
	if (!json_object_object_get_ex(msg, "call", &method)) {
		send_obj(ec, msg); /* plain echo */
		return 0;
	}
	call = calloc(1, sizeof(*call));
	call->ec = ec;
	json_object_object_get_ex(msg, "tag", &call->tag);
	json_object_get(call->tag);
	json_object_object_get_ex(msg, "params", &params);
	id = ec->fhost->core_call(ec->conn, json_object_get_string(method),
				  params ? json_object_to_json_string(params) : NULL, on_reply,
				  on_progress, call);
	if (id < 0) {
		on_reply((int)id, NULL, "core_call refused", call);
	}
	json_object_put(msg);
	return 0;
}

static void echo_conn_closed(void *instance, void *state)
{
	free(state);
}

static const struct tbx_frontend_ops ops = {
	.struct_size = sizeof(struct tbx_frontend_ops),
	.abi_minor = TBX_ABI_MINOR,
	.protocol = "echo/1",
	.instance_new = echo_instance_new,
	.conn_open = echo_conn_open,
	.conn_message = echo_conn_message,
	.conn_closed = echo_conn_closed,
};

static const struct tbx_plugin_desc desc = {
	TBX_PLUGIN_DESC_INIT,
	.kind = TBX_PLUGIN_FRONTEND,
	.name = "echo",
	.version = "1.0",
	.description = "test frontend: core calls over a toy protocol",
	.ops = &ops,
};

TBX_EXPORT const struct tbx_plugin_desc *tbx_plugin_entry_v1(const struct tbx_host_api *h)
{
	host = h;
	return &desc;
}
