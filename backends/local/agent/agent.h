/* SPDX-License-Identifier: MIT */
/*
 * twinbox-sandbox-agent: the process inside a local sandbox that serves a
 * subset of E2B's envd protocol (PROTOCOL.md §2.3-2.6) on a Unix socket.
 */
#ifndef TBX_AGENT_H
#define TBX_AGENT_H

#include <event2/event.h>
#include <event2/http.h>
#include <json-c/json.h>
#include <stddef.h>
#include <sys/queue.h>
#include <twinbox/plugin.h>

/* Caps on what a client may send. */
#define AGENT_RPC_BODY_MAX ((size_t)1 << 20)
#define AGENT_UPLOAD_MAX ((size_t)256 << 20)
/* --forward may be given this many times. */
#define AGENT_MAX_FORWARDS 4

struct agent_proc;

struct agent {
	struct event_base *base;
	struct evhttp *http;
	const char *home;    /* relative paths resolve here */
	const char *workdir; /* default cwd of processes */
	LIST_HEAD(, agent_proc) procs;
};

/* agent-http.c: replies and request helpers */
void agent_log(const char *fmt, ...) TBX_PRINTF(1, 2);
void agent_reply_json(struct evhttp_request *req, int status, struct json_object *body);
/* Connect unary error: {"code":"not_found","message":...} with its HTTP status. */
void agent_reply_rpc_error(struct evhttp_request *req, const char *code, const char *fmt, ...)
	TBX_PRINTF(3, 4);
/* /files error: {"code":<status>,"message":...}. */
void agent_reply_files_error(struct evhttp_request *req, int status, const char *fmt, ...)
	TBX_PRINTF(3, 4);
/* Does the request's Content-Type name \p want (parameters ignored)? */
int agent_content_type_is(struct evhttp_request *req, const char *want);
/* Absolute form of a client path: relative and "~" resolve against home. */
char *agent_path_resolve(const struct agent *a, const char *path);
/* The Connect code for an errno. */
const char *agent_errno_code(int err);
/* The request body parsed as a JSON object; NULL with \p why filled. */
struct json_object *agent_body_json(struct evhttp_request *req, char *why, size_t why_len);

/* agent-fs.c: filesystem.Filesystem/{Stat,ListDir,MakeDir,Move,Remove} */
void agent_fs_handle(struct agent *a, struct evhttp_request *req, const char *method);

/* agent-files.c: GET/POST /files */
void agent_files_handle(struct agent *a, struct evhttp_request *req);

/* agent-forward.c: a loopback TCP port relayed to a Unix socket */
struct agent_forward;
/* Is "127.0.0.1:PORT=/abs/socket" well formed (a loopback address, an absolute path)? */
int agent_forward_valid(const char *spec);
/* Listen as spec says; NULL (logged) when it cannot. */
struct agent_forward *agent_forward_start(struct agent *a, const char *spec);
void agent_forward_free(struct agent_forward *f);

/* agent-process.c: process.Process/{Start,SendSignal} */
void agent_process_handle(struct agent *a, struct evhttp_request *req, const char *method);
/* Reap exited children; called on SIGCHLD. */
void agent_process_reap(struct agent *a);

#endif
