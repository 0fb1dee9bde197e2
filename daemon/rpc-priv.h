/* SPDX-License-Identifier: MIT */
/*
 * What the pieces of the daemon's socket share: connections, in-flight
 * requests and the server, and the calls between rpc-server.c (connections,
 * framing, replies), rpc-dispatch.c (frames to methods), rpc-request.c
 * (requests, progress, parameters) and frontend-host.c (frontend modules).
 * Everything here runs on the event-loop thread unless it says otherwise.
 */
#ifndef TBX_RPC_PRIV_H
#define TBX_RPC_PRIV_H

#include <stdatomic.h>
#include <stdint.h>

#include <twinbox/frontend.h>

#include "rpc-server.h"
#include "workers.h"

struct bufferevent;
struct evconnlistener;
struct json_object;
struct tbx_method;
struct tbx_module;

/* JSON-RPC's own codes, for protocol failures only. */
#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
/* Application errors live outside -32768..-32000: 1000 + |tbx_status|. */
#define RPC_APP_BASE 1000

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

/* rpc-server.c */
void tbx_conn_unref(struct tbx_conn *conn);
void tbx_conn_write_json(struct tbx_conn *conn, struct json_object *msg);
void tbx_conn_close(struct tbx_conn *conn);
void tbx_rpc_send_error(struct tbx_conn *conn, struct json_object *id, int code,
			const char *message, const char *reason);
void tbx_rpc_send_result(struct tbx_conn *conn, struct json_object *id,
			 struct json_object *result);

/* rpc-dispatch.c */
void tbx_rpc_handle_frame(struct tbx_conn *conn, const char *line, size_t len);

/* rpc-request.c */
struct tbx_request *tbx_request_new(struct tbx_conn *conn, const struct tbx_method *method,
				    struct json_object *id, struct json_object *params);
void tbx_request_submit(struct tbx_request *req);

/* frontend-host.c */
void tbx_frontends_init(struct tbx_server *server);
struct frontend_slot *tbx_frontend_for(struct tbx_server *server, const char *protocol);

#endif
