/* SPDX-License-Identifier: MIT */
/* The host side of the frontend ABI: frontend instances and the services they call back. */
#include "rpc-priv.h"

#include <event2/bufferevent.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "core.h"
#include "log.h"
#include "methods.h"
#include "module.h"

#define TBX_LOG_CATEGORY "frontend"

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
		tbx_conn_close(conn);
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
	req = tbx_request_new(conn, m, NULL, params);
	json_object_put(params);
	if (!req)
		return TBX_ENOMEM;
	req->on_reply = on_reply;
	req->on_progress = on_progress;
	req->payload = payload;
	req->call_id = ++conn->server->next_call_id;
	tbx_request_submit(req);
	return req->call_id;
}

static void fhost_core_cancel(struct tbx_conn *conn, int64_t call_id)
{
	for (struct tbx_request *r = conn ? conn->requests : NULL; r; r = r->next)
		if (r->call_id == call_id)
			atomic_store(&r->job.cancel, 1);
}

void tbx_frontends_init(struct tbx_server *server)
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

struct frontend_slot *tbx_frontend_for(struct tbx_server *server, const char *protocol)
{
	for (size_t i = 0; i < server->n_frontends; i++)
		if (strcmp(server->frontends[i].ops->protocol, protocol) == 0)
			return &server->frontends[i];
	return NULL;
}
