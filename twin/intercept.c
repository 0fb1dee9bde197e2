/* SPDX-License-Identifier: MIT */
/*
 * Inside an intercepted tunnel: TLS terminated with a leaf forged for the
 * host (or plain HTTP left as it is), then every request answered by the
 * host's twin (the Stripe twin, the REST twin, or the user's upstream) and
 * logged, or by the canary.
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <json-c/json.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "routes.h"
#include "gateway-priv.h"
#include "gateway.h"
#include "httpd.h"
#include "log.h"
#include "reqlog.h"
#include "rest.h"
#include "stripe.h"
#include "tls.h"
#include "twind.h"
#include "twins.h"
#include "upstream.h"

#define TBX_LOG_CATEGORY "twin.gateway"

static void answer_canary(struct gw_conn *c, struct tbx_reply *rep)
{
	struct json_object *o = json_object_new_object();

	/* The shape the Veris canary has: the twin this tunnel reached, and how. */
	json_object_object_add(o, "veris_sandbox_id", json_object_new_string(c->twin->id));
	json_object_object_add(o, "mode", json_object_new_string("gateway"));
	json_object_object_add(o, "egress_policy", json_object_new_string(c->twin->policy));
	json_object_object_add(o, "tls", json_object_new_boolean(c->tls));
	tbx_reply_json(rep, 200, o);
}

static void on_upstream_done(void *arg, struct tbx_reply *rep)
{
	struct gw_conn *c = arg;

	c->job = NULL;
	tbx_reqlog_finish(c->pending_entry, rep->status, rep->body_len, c->pending_started);
	tbx_service_log_append(c->svc, c->pending_entry);
	c->pending_entry = NULL;
	tbx_httpd_respond(c->http, rep);
}

static void on_request(struct tbx_httpd_conn *http, struct tbx_http_msg *req, void *arg)
{
	struct gw_conn *c = arg;
	const struct tbx_route_service *route = c->svc ? c->svc->route : NULL;
	int64_t started = tbx_now_ms();
	struct json_object *entry;
	struct tbx_reply rep;

	tbx_reply_init(&rep);
	if (c->canary) {
		answer_canary(c, &rep);
		tbx_log_info("canary answered for twin %s", c->twin->id);
		tbx_httpd_respond(http, &rep);
		return;
	}
	if (!route) {
		/* The routes file lost this service since the tunnel opened. */
		tbx_reply_error(&rep, 503, "api_error", "this host's twin is not configured any more");
		rep.close = 1;
		tbx_httpd_respond(http, &rep);
		return;
	}
	entry = tbx_reqlog_entry(req, c->host, c->svc->name,
				 route->kind == TBX_TWIN_UPSTREAM ? TBX_TIER_UPSTREAM : TBX_TIER_HANDLER,
				 started);
	if (req->target[0] != '/') {
		tbx_reply_error(&rep, 400, "invalid_request_error",
				"the request target must be a path (origin-form) inside a tunnel");
	} else if (route->kind == TBX_TWIN_STRIPE) {
		tbx_stripe_handle(c->svc, req, &rep);
	} else if (route->kind == TBX_TWIN_REST) {
		tbx_rest_handle(c->svc, req, &rep);
	} else {
		c->job = tbx_upstream_forward(c->gw->d->upstream, route->upstream, req, c->host,
					      on_upstream_done, c);
		if (c->job) {
			c->pending_entry = entry;
			c->pending_started = started;
			return;
		}
		tbx_reply_error(&rep, 503, "api_error", "too many requests in flight to the upstream");
	}
	tbx_reqlog_finish(entry, rep.status, rep.body_len, started);
	tbx_service_log_append(c->svc, entry);
	tbx_httpd_respond(http, &rep);
}

void gw_intercept_closed(struct gw_conn *c)
{
	if (c->job) {
		tbx_upstream_cancel(c->job);
		c->job = NULL;
	}
	if (c->pending_entry) {
		/* It reached the twin; the answer never reached the client. Status stays null. */
		tbx_service_log_append(c->svc, c->pending_entry);
		c->pending_entry = NULL;
	}
}

static void on_closed(struct tbx_httpd_conn *http, const char *why, void *arg)
{
	struct gw_conn *c = arg;
	char msg[300];

	gw_intercept_closed(c);
	snprintf(msg, sizeof(msg), "%s after %lu request(s)%s: %s", c->tls ? "TLS" : "plain HTTP",
		 tbx_httpd_requests(http), c->canary ? " (canary)" : "", why);
	gw_conn_release(c, msg);
}

static const struct tbx_httpd_ops intercept_ops = { on_request, on_closed };

void gw_intercept_start(struct gw_conn *c)
{
	struct tbx_twind *d = c->gw->d;
	struct evbuffer *in = bufferevent_get_input(c->bev);
	struct bufferevent *client = c->bev, *tls;
	unsigned char first;
	SSL *ssl;

	if (evbuffer_copyout(in, &first, 1) != 1)
		return;
	bufferevent_set_timeouts(client, NULL, NULL);
	if (first != 0x16) { /* not a TLS handshake record: plain HTTP */
		c->bev = NULL;
		c->phase = GW_HTTP;
		if (!(c->http = tbx_httpd_conn_new(client, &intercept_ops, c, &d->http_limits)))
			gw_conn_release(c, "out of memory");
		else
			tbx_httpd_start(c->http); /* c may be gone after this */
		return;
	}
	if (!(ssl = tbx_tls_server_ssl(d->tls, c->canary ? d->cfg->canary_host : c->host))) {
		gw_conn_close(c, "cannot forge a certificate");
		return;
	}
	tls = bufferevent_openssl_filter_new(d->base, client, ssl, BUFFEREVENT_SSL_ACCEPTING,
					     BEV_OPT_CLOSE_ON_FREE);
	if (!tls) {
		SSL_free(ssl);
		gw_conn_close(c, "cannot start TLS");
		return;
	}
	/* Clients often skip close_notify; that is the end of a connection, not an error. */
	bufferevent_openssl_set_allow_dirty_shutdown(tls, 1);
	c->bev = NULL;
	c->tls = 1;
	c->phase = GW_HTTP;
	if (!(c->http = tbx_httpd_conn_new(tls, &intercept_ops, c, &d->http_limits))) {
		gw_conn_release(c, "out of memory");
		return;
	}
	/* The ClientHello is already buffered below the filter; start runs the handshake on it. */
	tbx_httpd_start(c->http); /* c may be gone after this */
}
