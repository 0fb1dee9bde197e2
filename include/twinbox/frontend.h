/* SPDX-License-Identifier: MIT */
/**
 * \file twinbox/frontend.h
 * The frontend ABI: how an agent protocol (MCP, OpenCode...) plugs into the
 * daemon's socket.
 *
 * A client's first line on the socket is `hello {protocol, client}`. When the
 * protocol is a frontend's, the daemon hands the connection to that frontend:
 * every later newline-delimited frame goes to conn_message(), and the frontend
 * answers with host_conn_send(). Frontends turn their protocol into core
 * calls (the twinbox/1 methods, JSON in and out) with core_call(), which
 * answers asynchronously. Frontend ops run on the daemon's event-loop thread
 * and must never block.
 *
 * JSON crosses this boundary as UTF-8 text, so no JSON library's types appear
 * in the ABI.
 */
#ifndef TWINBOX_FRONTEND_H
#define TWINBOX_FRONTEND_H

#include <twinbox/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A client connection owned by the host. Since ABI 1.0. */
struct tbx_conn;

/**
 * Receives the outcome of a core call. On success \p status is 0 and
 * \p result_json the method's result; otherwise \p status is a negative
 * tbx_status and \p message says what went wrong. Strings are borrowed for the
 * duration of the callback. Runs on the loop thread. Since ABI 1.0.
 */
typedef void (*tbx_core_reply_cb)(int status, const char *result_json, const char *message,
				  void *payload);

/**
 * Receives progress of a core call (for a bash call, output as it streams):
 * \p progress_json is `{"stream":"stdout","data":"..."}`-shaped. Since ABI 1.0.
 */
typedef void (*tbx_core_progress_cb)(const char *progress_json, void *payload);

/**
 * Services the host offers to frontends, in addition to struct tbx_host_api.
 * Since ABI 1.0.
 */
struct tbx_frontend_host {
	uint32_t struct_size; /**< Since ABI 1.0. */
	uint32_t abi_minor;   /**< Since ABI 1.0. */

	/** Queue one frame (a newline is appended) to the client. Since ABI 1.0. */
	int (*conn_send)(struct tbx_conn *conn, const char *json, size_t len);
	/** Close the connection after queued frames are written. Since ABI 1.0. */
	void (*conn_close)(struct tbx_conn *conn);
	/**
	 * Call a core method (for example "tool.call") with \p params_json.
	 * \p on_progress may be NULL. \return a call id usable with core_cancel,
	 * or a negative tbx_status. Since ABI 1.0.
	 */
	int64_t (*core_call)(struct tbx_conn *conn, const char *method, const char *params_json,
			     tbx_core_reply_cb on_reply, tbx_core_progress_cb on_progress,
			     void *payload);
	/** Cancel a core call; its reply still arrives, with TBX_ECANCELED. Since ABI 1.0. */
	void (*core_cancel)(struct tbx_conn *conn, int64_t call_id);
};

/** The ops of a frontend. Since ABI 1.0. */
struct tbx_frontend_ops {
	uint32_t struct_size; /**< sizeof(struct tbx_frontend_ops). Since ABI 1.0. */
	uint32_t abi_minor;   /**< Since ABI 1.0. */

	/** The hello protocol it serves, e.g. "mcp". Since ABI 1.0. */
	const char *protocol;

	/** Make an instance; \p fhost stays valid for the process's life. Since ABI 1.0. */
	int (*instance_new)(struct tbx_call *call, const struct tbx_frontend_host *fhost,
			    void **out);
	/** Release an instance. Since ABI 1.0. */
	void (*instance_free)(void *instance);

	/**
	 * A client said hello with this frontend's protocol; \p hello_json is the
	 * hello params. Set \p conn_state_out for later calls. Since ABI 1.0.
	 */
	int (*conn_open)(void *instance, struct tbx_conn *conn, const char *hello_json,
			 void **conn_state_out);
	/** One frame from the client (without its newline). Since ABI 1.0. */
	int (*conn_message)(void *instance, void *conn_state, const char *json, size_t len);
	/**
	 * The client went away. Outstanding core calls are cancelled; their
	 * replies are not delivered after this returns. Since ABI 1.0.
	 */
	void (*conn_closed)(void *instance, void *conn_state);
};

#ifdef __cplusplus
}
#endif

#endif /* TWINBOX_FRONTEND_H */
