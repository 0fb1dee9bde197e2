/* SPDX-License-Identifier: MIT */
/* HTTP/1.1 connections over bufferevents (see httpd.h). */
#include "httpd.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <json-c/json.h>
#include <openssl/err.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linger.h"

struct tbx_httpd_conn {
	struct bufferevent *bev;
	const struct tbx_httpd_ops *ops;
	void *arg;
	struct tbx_http_msg msg;
	int busy;       /* a request is with the handler */
	int closing;    /* the last reply is queued: flush, then close */
	int in_process; /* process() is on the stack: closing must wait for it */
	int dead;
	int sent_continue;
	unsigned long requests;
	char why[160];
};

void tbx_reply_init(struct tbx_reply *r)
{
	memset(r, 0, sizeof(*r));
	r->status = 200;
}

void tbx_reply_free(struct tbx_reply *r)
{
	free(r->body);
	free(r->headers);
	r->body = r->headers = NULL;
	r->body_len = r->headers_len = 0;
}

void tbx_reply_header(struct tbx_reply *r, const char *name, const char *fmt, ...)
{
	char value[1024], *grown;
	size_t add;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	/* Never let a value smuggle another header or end the head early. */
	for (char *p = value; *p; p++)
		if (*p == '\r' || *p == '\n')
			*p = ' ';
	add = strlen(name) + strlen(value) + 4;
	if (!(grown = realloc(r->headers, r->headers_len + add + 1)))
		return;
	r->headers = grown;
	snprintf(r->headers + r->headers_len, add + 1, "%s: %s\r\n", name, value);
	r->headers_len += add;
}

void tbx_reply_body(struct tbx_reply *r, const char *data, size_t len)
{
	free(r->body);
	r->body = malloc(len + 1);
	if (r->body) {
		memcpy(r->body, data, len);
		r->body[len] = '\0';
	}
	r->body_len = r->body ? len : 0;
}

void tbx_reply_json(struct tbx_reply *r, int status, struct json_object *body)
{
	size_t len = 0;
	const char *s = json_object_to_json_string_length(body, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE, &len);

	r->status = status;
	snprintf(r->content_type, sizeof(r->content_type), "application/json");
	tbx_reply_body(r, s, len);
	json_object_put(body);
}

void tbx_reply_error(struct tbx_reply *r, int status, const char *type, const char *message)
{
	struct json_object *err = json_object_new_object(), *body = json_object_new_object();

	json_object_object_add(err, "message", json_object_new_string(message));
	json_object_object_add(err, "type", json_object_new_string(type));
	json_object_object_add(body, "error", err);
	tbx_reply_json(r, status, body);
}

const char *tbx_http_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 402: return "Request Failed";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 407: return "Proxy Authentication Required";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 413: return "Content Too Large";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Status";
	}
}

static void really_close(struct tbx_httpd_conn *c)
{
	c->ops->closed(c, c->why, c->arg);
	tbx_http_msg_free(&c->msg);
	tbx_bev_linger_free(c->bev);
	free(c);
}

void tbx_httpd_close(struct tbx_httpd_conn *c, const char *why)
{
	if (c->dead)
		return;
	c->dead = 1;
	if (why != c->why)
		snprintf(c->why, sizeof(c->why), "%s", why);
	bufferevent_disable(c->bev, EV_READ);
	bufferevent_setcb(c->bev, NULL, NULL, NULL, NULL);
	if (!c->in_process)
		really_close(c);
}

unsigned long tbx_httpd_requests(const struct tbx_httpd_conn *c)
{
	return c->requests;
}

static void process(struct tbx_httpd_conn *c);

void tbx_httpd_respond(struct tbx_httpd_conn *c, struct tbx_reply *rep)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	int head = c->msg.method && strcmp(c->msg.method, "HEAD") == 0;
	int no_body = rep->status == 204 || rep->status == 304;
	int close = rep->close || !c->msg.keep_alive || c->msg.state == TBX_HTTP_ERROR;

	if (c->dead) {
		tbx_reply_free(rep);
		return;
	}
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n", rep->status, tbx_http_reason(rep->status));
	if (!no_body)
		evbuffer_add_printf(out, "Content-Type: %s\r\nContent-Length: %zu\r\n",
				    rep->content_type[0] ? rep->content_type : "text/plain",
				    rep->body_len);
	if (rep->headers_len)
		evbuffer_add(out, rep->headers, rep->headers_len);
	evbuffer_add_printf(out, "Connection: %s\r\n\r\n", close ? "close" : "keep-alive");
	if (!head && !no_body && rep->body_len)
		evbuffer_add(out, rep->body, rep->body_len);
	tbx_reply_free(rep);
	c->requests++;
	tbx_http_msg_reset(&c->msg);
	c->sent_continue = 0;
	c->busy = 0;
	if (close) {
		c->closing = 1;
		bufferevent_disable(c->bev, EV_READ);
		if (!c->in_process)
			tbx_httpd_close(c, "done");
		return;
	}
	bufferevent_enable(c->bev, EV_READ);
	if (!c->in_process)
		process(c);
}

static void process(struct tbx_httpd_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);

	c->in_process = 1;
	while (!c->dead && !c->busy && !c->closing) {
		if (c->msg.state == TBX_HTTP_ERROR) {
			struct tbx_reply r;
			char why[160];
			snprintf(why, sizeof(why), "malformed request: %s", c->msg.error);
			tbx_reply_init(&r);
			tbx_reply_error(&r, c->msg.error_status, "invalid_request_error", why);
			r.close = 1;
			tbx_httpd_respond(c, &r);
			snprintf(c->why, sizeof(c->why), "%s", why);
			break;
		}
		if (c->msg.state == TBX_HTTP_DONE) {
			/* No reading while the handler works: no idle timeout, no pipelining. */
			bufferevent_disable(c->bev, EV_READ);
			c->busy = 1;
			c->ops->request(c, &c->msg, c->arg);
			continue;
		}
		if (evbuffer_get_length(in) == 0)
			break;
		struct evbuffer_iovec v;
		evbuffer_peek(in, -1, NULL, &v, 1);
		evbuffer_drain(in, tbx_http_parse(&c->msg, v.iov_base, v.iov_len));
		if (c->msg.head_done && c->msg.expect_continue && !c->sent_continue &&
		    c->msg.state != TBX_HTTP_DONE && c->msg.state != TBX_HTTP_ERROR) {
			evbuffer_add_printf(bufferevent_get_output(c->bev), "HTTP/1.1 100 Continue\r\n\r\n");
			c->sent_continue = 1;
		}
	}
	c->in_process = 0;
	if (c->closing && !c->dead)
		tbx_httpd_close(c, c->why[0] ? c->why : "done");
	else if (c->dead)
		really_close(c);
}

static void on_read(struct bufferevent *bev, void *arg)
{
	process(arg);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct tbx_httpd_conn *c = arg;
	char why[200];

	if (what & BEV_EVENT_TIMEOUT) {
		tbx_httpd_close(c, c->msg.state == TBX_HTTP_HEAD && c->msg.head_len == 0
					   ? "idle timeout"
					   : "timed out waiting for the rest of the request");
	} else if (what & BEV_EVENT_ERROR) {
		unsigned long ssl_err = bufferevent_get_openssl_error(bev);
		if (ssl_err)
			snprintf(why, sizeof(why), "TLS error: %s", ERR_reason_error_string(ssl_err)
									  ? ERR_reason_error_string(ssl_err)
									  : "unknown");
		else
			snprintf(why, sizeof(why), "connection error: %s", strerror(errno));
		tbx_httpd_close(c, why);
	} else if (what & BEV_EVENT_EOF) {
		tbx_httpd_close(c, c->busy ? "client closed before the answer"
			      : c->msg.state == TBX_HTTP_HEAD && c->msg.head_len == 0
				      ? "client closed"
				      : "client closed in the middle of a request");
	}
}

struct tbx_httpd_conn *tbx_httpd_conn_new(struct bufferevent *bev, const struct tbx_httpd_ops *ops,
					  void *arg, const struct tbx_httpd_limits *limits)
{
	struct tbx_httpd_conn *c = calloc(1, sizeof(*c));
	struct tbx_http_limits lim = { limits->max_head, limits->max_body };
	struct timeval idle = { limits->idle_timeout_s, 0 };

	if (!c) {
		bufferevent_free(bev);
		return NULL;
	}
	c->bev = bev;
	c->ops = ops;
	c->arg = arg;
	tbx_http_msg_init(&c->msg, TBX_HTTP_REQUEST, &lim);
	bufferevent_setcb(bev, on_read, NULL, on_event, c);
	bufferevent_set_timeouts(bev, limits->idle_timeout_s > 0 ? &idle : NULL, NULL);
	return c;
}

void tbx_httpd_start(struct tbx_httpd_conn *c)
{
	struct bufferevent *under = bufferevent_get_underlying(c->bev);
	const int trig = BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS;

	/* Enabling a TLS filter may run the handshake, and end the connection, right here. */
	c->in_process = 1;
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	/*
	 * Bytes that came with the tunnel's opening (a request, or a ClientHello
	 * below a TLS filter) raise no new read event: run them from the loop.
	 */
	if (!c->dead && evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
		bufferevent_trigger(c->bev, EV_READ, trig);
	if (!c->dead && under && evbuffer_get_length(bufferevent_get_input(under)) > 0)
		bufferevent_trigger(under, EV_READ, trig);
	c->in_process = 0;
	if (c->dead)
		really_close(c);
}
