/* SPDX-License-Identifier: MIT */
/*
 * The daemon's Unix socket (DESIGN §3): newline-delimited JSON-RPC 2.0 with a
 * frame cap, `hello` choosing the protocol (twinbox/1 or a frontend's), calls
 * dispatched to the worker pool and answered out of order by id, progress
 * notifications while they run. Runs on the event-loop thread.
 */
#ifndef TBX_RPC_SERVER_H
#define TBX_RPC_SERVER_H

#include <stddef.h>

struct event_base;
struct tbx_core;
struct tbx_server;
struct tbx_workers;

/* Frames longer than this (bytes, without the newline) are refused. */
#define TBX_RPC_MAX_FRAME (16u * 1024 * 1024)
/* The protocol the CLI speaks. */
#define TBX_PROTOCOL_CORE "twinbox/1"

/* Listen on an already bound and listening socket fd. */
int tbx_server_new(struct event_base *base, struct tbx_workers *workers, struct tbx_core *core,
		   int listen_fd, struct tbx_server **out);
/* Ask the loop to stop (any thread). */
void tbx_server_stop(struct tbx_server *server);
/* Stop accepting and cancel every in-flight call. */
void tbx_server_shutdown(struct tbx_server *server);
/* Give queued replies up to timeout_ms to reach their clients (after the loop stopped). */
void tbx_server_flush(struct tbx_server *server, int timeout_ms);
/* Calls still running. */
int tbx_server_inflight(struct tbx_server *server);
int tbx_server_clients(struct tbx_server *server);
void tbx_server_free(struct tbx_server *server);

/*
 * Handle one frame as if it came from a fresh client, writing replies to
 * out_fd: the fuzz harness drives framing and dispatch through this.
 */
struct tbx_conn *tbx_server_conn_for_fd(struct tbx_server *server, int fd);

#endif
