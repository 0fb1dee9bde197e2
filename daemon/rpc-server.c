/* SPDX-License-Identifier: MIT */
/* The daemon's socket: accepting, framing, writing replies, and the server's lifecycle. */
#define _GNU_SOURCE /* struct ucred */
#include "rpc-priv.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core.h"
#include "error.h"
#include "log.h"

#define TBX_LOG_CATEGORY "rpc"

#define MAX_CLIENTS 512

void tbx_conn_unref(struct tbx_conn *conn)
{
	if (--conn->refs > 0)
		return;
	free(conn->client);
	free(conn);
}

void tbx_conn_write_json(struct tbx_conn *conn, struct json_object *msg)
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

void tbx_rpc_send_error(struct tbx_conn *conn, struct json_object *id, int code,
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
	tbx_conn_write_json(conn, msg);
	json_object_put(msg);
}

void tbx_rpc_send_result(struct tbx_conn *conn, struct json_object *id, struct json_object *result)
{
	struct json_object *msg = json_object_new_object();

	json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(msg, "id", json_object_get(id));
	json_object_object_add(msg, "result", result ? json_object_get(result) : json_object_new_object());
	tbx_conn_write_json(conn, msg);
	json_object_put(msg);
}

void tbx_conn_close(struct tbx_conn *conn)
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
	tbx_conn_unref(conn);
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
				tbx_rpc_send_error(conn, NULL, RPC_INVALID_REQUEST, msg, "TBX_EINVAL");
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
			tbx_rpc_send_error(conn, NULL, RPC_INVALID_REQUEST, msg, "TBX_EINVAL");
		} else if (len > 0) {
			tbx_rpc_handle_frame(conn, line, len);
		}
		free(line);
	}
	tbx_conn_unref(conn);
}

static void conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct tbx_conn *conn = arg;

	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		tbx_conn_close(conn);
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
						      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1,
						      listen_fd);
		if (!server->listener) {
			free(server);
			return tbx_error_set(TBX_EIO, "cannot listen on the daemon socket");
		}
		evconnlistener_set_error_cb(server->listener, accept_error_cb);
	}
	tbx_frontends_init(server);
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
		tbx_conn_close(server->conns);
	if (server->listener)
		evconnlistener_free(server->listener);
	for (size_t i = 0; i < server->n_frontends; i++)
		if (server->frontends[i].ops->instance_free)
			server->frontends[i].ops->instance_free(server->frontends[i].instance);
	free(server->frontends);
	free(server);
}
