/* SPDX-License-Identifier: MIT */
/*
 * HTTP/1.1 serving over any bufferevent (a TCP or Unix socket, or a TLS
 * filter the gateway put over an intercepted tunnel): requests parsed with
 * http-parse.h one at a time, keep-alive, 100-continue, timeouts, and a
 * logged reason whenever a connection ends. libevent's evhttp cannot serve a
 * stream that began as a SOCKS or CONNECT tunnel, nor a Unix socket in 2.1.
 */
#ifndef TBX_HTTPD_H
#define TBX_HTTPD_H

#include <stddef.h>

#include "http-parse.h"

struct bufferevent;
struct json_object;
struct tbx_httpd_conn;

struct tbx_reply {
	int status;
	char content_type[80];
	char *body;
	size_t body_len;
	char *headers; /* extra "Name: value\r\n" lines */
	size_t headers_len;
	int close; /* end the connection after this reply */
};

void tbx_reply_init(struct tbx_reply *r);
void tbx_reply_free(struct tbx_reply *r);
void tbx_reply_header(struct tbx_reply *r, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Set status and a JSON body; takes the reference to body. */
void tbx_reply_json(struct tbx_reply *r, int status, struct json_object *body);
/* {"error": {"message": message, "type": type}}: the shape of every twind error. */
void tbx_reply_error(struct tbx_reply *r, int status, const char *type, const char *message);
void tbx_reply_body(struct tbx_reply *r, const char *data, size_t len);
const char *tbx_http_reason(int status);

struct tbx_httpd_ops {
	/* A whole request: answer it now or later with tbx_httpd_respond(). */
	void (*request)(struct tbx_httpd_conn *c, struct tbx_http_msg *req, void *arg);
	/* The connection ended, for why; the connection is freed once this returns. */
	void (*closed)(struct tbx_httpd_conn *c, const char *why, void *arg);
};

struct tbx_httpd_limits {
	int idle_timeout_s; /* no byte from the client for this long ends the connection */
	size_t max_head;
	size_t max_body;
};

/*
 * Serve HTTP on bev (owned from now on). NULL only when out of memory (bev
 * is then freed). Nothing happens until tbx_httpd_start().
 */
struct tbx_httpd_conn *tbx_httpd_conn_new(struct bufferevent *bev, const struct tbx_httpd_ops *ops,
					  void *arg, const struct tbx_httpd_limits *limits);
/*
 * Start reading; bytes already buffered (in bev, or below it if it is a
 * filter) are the first request's. ops->closed may run before this returns.
 */
void tbx_httpd_start(struct tbx_httpd_conn *c);
/* Answer the current request; rep's contents are consumed. c may be gone on return. */
void tbx_httpd_respond(struct tbx_httpd_conn *c, struct tbx_reply *rep);
/* End the connection now (ops->closed is called with why). */
void tbx_httpd_close(struct tbx_httpd_conn *c, const char *why);
/* Requests answered on this connection so far. */
unsigned long tbx_httpd_requests(const struct tbx_httpd_conn *c);

#endif
