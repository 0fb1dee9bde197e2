/* SPDX-License-Identifier: MIT */
/* The Veris-shaped control plane of the local twin (see control.h, docs/twin.md). */
#include "control.h"

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "routes.h"
#include "error.h"
#include "form.h"
#include "gateway.h"
#include "hostname.h"
#include "ids.h"
#include "listen.h"
#include "log.h"
#include "reqlog.h"
#include "twind.h"
#include "twins.h"

#define TBX_LOG_CATEGORY "twin.control"

#define MAX_SEGMENTS 10
#define CONTROL_MAX_BODY (1024 * 1024)

/* Where a sandbox finds the CA (the daemon writes them there): Veris' variable set. */
#define TRUST_BUNDLE "/tmp/twinbox-ca-bundle.crt"
#define TRUST_SINGLE "/tmp/twinbox-ca.crt"
static const char *const bundle_vars[] = {
	"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "AWS_CA_BUNDLE",
	"CARGO_HTTP_CAINFO", "DENO_CERT", "PIP_CERT", "npm_config_cafile",
	"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", "BUNDLE_SSL_CA_CERT", "COMPOSER_CAFILE",
	"HEX_CACERTS_PATH", "JULIA_SSL_CA_ROOTS_PATH", "NIX_SSL_CERT_FILE", "PERL_LWP_SSL_CA_FILE",
	"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
};

struct control_conn {
	struct tbx_control *ctl;
	struct tbx_httpd_conn *http;
	struct control_conn *prev, *next;
};

struct tbx_control {
	struct tbx_twind *d;
	struct evconnlistener *listener;
	struct control_conn *conns;
};

static struct json_object *time_or_null(int64_t ms)
{
	char buf[32];

	if (!ms)
		return NULL;
	tbx_rfc3339(ms, buf, sizeof(buf));
	return json_object_new_string(buf);
}

static struct json_object *leaks_json(const char *policy)
{
	struct json_object *a = json_object_new_array();

	/* Open egress tunnels TCP only; QUIC (UDP) and ECH'd TLS are what it cannot see. */
	if (strcmp(policy, "open") == 0) {
		json_object_array_add(a, json_object_new_string("udp-quic-possible"));
		json_object_array_add(a, json_object_new_string("ech-possible"));
	}
	return a;
}

static const char *kind_name(enum tbx_twin_kind k)
{
	return k == TBX_TWIN_STRIPE ? "stripe" : k == TBX_TWIN_REST ? "rest" : "upstream";
}

static struct json_object *service_json(struct tbx_twind *d, struct tbx_service *s)
{
	struct json_object *o = json_object_new_object(), *routes = json_object_new_array();
	const struct tbx_route_service *r = s->route;
	char buf[700];

	json_object_object_add(o, "name", json_object_new_string(s->name));
	json_object_object_add(o, "status", json_object_new_string(r ? "ready" : "failed"));
	if (r) {
		snprintf(buf, sizeof(buf), "https://%s", r->hosts[0]);
		json_object_object_add(o, "url", json_object_new_string(buf));
	} else {
		json_object_object_add(o, "url", NULL);
	}
	snprintf(buf, sizeof(buf), "%s/v1/sandboxes/%s/services/%s", d->control_base, s->twin->id,
		 s->name);
	json_object_object_add(o, "control_url", json_object_new_string(buf));
	json_object_object_add(o, "env_hint", NULL);
	for (size_t i = 0; r && i < r->n_hosts; i++) {
		struct json_object *route = json_object_new_object();
		json_object_object_add(route, "host", json_object_new_string(r->hosts[i]));
		json_object_array_add(routes, route);
	}
	json_object_object_add(o, "routes", routes);
	if (r) {
		json_object_object_add(o, "twin", json_object_new_string(kind_name(r->kind)));
		if (r->upstream)
			json_object_object_add(o, "upstream", json_object_new_string(r->upstream));
	}
	return o;
}

static struct json_object *services_json(struct tbx_twind *d, struct tbx_twin *t)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < t->n_services; i++)
		json_object_array_add(a, service_json(d, &t->services[i]));
	return a;
}

static struct json_object *twin_json(struct tbx_twind *d, struct tbx_twin *t)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(t->id));
	json_object_object_add(o, "environment_id", json_object_new_string(t->environment));
	json_object_object_add(o, "status", json_object_new_string("ready"));
	json_object_object_add(o, "created_at", time_or_null(t->created_ms));
	json_object_object_add(o, "expires_at", time_or_null(t->expires_ms));
	json_object_object_add(o, "services", services_json(d, t));
	json_object_object_add(o, "failure_reason", NULL);
	json_object_object_add(o, "metadata", json_object_get(t->metadata));
	json_object_object_add(o, "client_base_url",
			       t->client_base_url ? json_object_new_string(t->client_base_url) : NULL);
	json_object_object_add(o, "egress_policy", json_object_new_string(t->policy));
	json_object_object_add(o, "leaks", leaks_json(t->policy));
	return o;
}

static struct json_object *credential_json(struct tbx_twind *d, struct tbx_twin *t)
{
	struct json_object *o = json_object_new_object(), *trust = json_object_new_object();
	struct json_object *ips = json_object_new_array();
	char url[900];

	/* Twin ids and passwords are base62, so they need no escaping in a URL. */
	snprintf(url, sizeof(url), "http://%s:%s@%s", t->id, t->password, d->connect_address);
	json_object_object_add(o, "socks_address", json_object_new_string(d->socks_address));
	json_object_object_add(o, "connect_address", json_object_new_string(d->connect_address));
	json_object_object_add(o, "http_proxy_url", json_object_new_string(url));
	json_object_object_add(o, "username", json_object_new_string(t->id));
	json_object_object_add(o, "password", json_object_new_string(t->password));
	json_object_object_add(o, "ca_pem", json_object_new_string(d->ca.pem));
	json_object_object_add(o, "canary_host", json_object_new_string(d->cfg->canary_host));
	json_object_object_add(o, "min_sdk", NULL);
	json_object_object_add(o, "expires_at", time_or_null(t->expires_ms));
	for (size_t i = 0; i < sizeof(bundle_vars) / sizeof(bundle_vars[0]); i++)
		json_object_object_add(trust, bundle_vars[i], json_object_new_string(TRUST_BUNDLE));
	json_object_object_add(trust, "NODE_EXTRA_CA_CERTS", json_object_new_string(TRUST_SINGLE));
	json_object_object_add(o, "trust_env", trust);
	if (tbx_hostname_ip_family(d->advertise_host))
		json_object_array_add(ips, json_object_new_string(d->advertise_host));
	json_object_object_add(o, "gateway_ips", ips);
	json_object_object_add(o, "mode", json_object_new_string("gateway"));
	json_object_object_add(o, "egress_policy", json_object_new_string(t->policy));
	json_object_object_add(o, "leaks", leaks_json(t->policy));
	return o;
}

static int authorized(struct tbx_twind *d, const struct tbx_http_msg *req)
{
	const char *key = tbx_http_header_get(req, "X-API-Key");
	const char *auth = tbx_http_header_get(req, "Authorization");

	if (!key && auth && strncasecmp(auth, "Bearer ", 7) == 0)
		key = auth + 7;
	return key && tbx_secret_equal(key, d->api_key);
}

/* The request body as a JSON object; an empty body is {}. */
static struct json_object *body_json(const struct tbx_http_msg *req, struct tbx_reply *rep)
{
	struct json_object *o;

	if (req->body_len == 0)
		return json_object_new_object();
	o = json_tokener_parse(req->body);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		tbx_reply_error(rep, 400, "invalid_request_error", "the body must be a JSON object");
		return NULL;
	}
	return o;
}

static void not_found(struct tbx_reply *rep, const char *what)
{
	char msg[300];
	snprintf(msg, sizeof(msg), "%s not found", what);
	tbx_reply_error(rep, 404, "not_found", msg);
}

static void create_twin(struct tbx_twind *d, const char *env, const struct tbx_http_msg *req,
			struct tbx_reply *rep)
{
	struct json_object *body = body_json(req, rep), *v, *meta = NULL;
	const char *policy = NULL;
	int64_t ttl = 0;
	struct tbx_twin *t;

	if (!body)
		return;
	if (json_object_object_get_ex(body, "ttl_minutes", &v) && v) {
		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0) {
			tbx_reply_error(rep, 400, "invalid_request_error", "ttl_minutes must be a non-negative integer");
			goto out;
		}
		ttl = json_object_get_int64(v);
	}
	if (json_object_object_get_ex(body, "metadata", &meta) && meta &&
	    !json_object_is_type(meta, json_type_object)) {
		tbx_reply_error(rep, 400, "invalid_request_error", "metadata must be an object");
		goto out;
	}
	if (json_object_object_get_ex(body, "egress_policy", &v) && v) {
		policy = json_object_get_string(v);
		if (!tbx_policy_valid(policy)) {
			tbx_reply_error(rep, 400, "invalid_request_error", "egress_policy must be strict or open");
			goto out;
		}
	}
	if (tbx_twins_create(d->twins, env, ttl, meta, policy, &t) < 0) {
		tbx_reply_error(rep, tbx_error_status() == TBX_ENOENT ? 404 : 400,
				tbx_error_status() == TBX_ENOENT ? "not_found" : "invalid_request_error",
				tbx_error_message());
		goto out;
	}
	tbx_log_info("twin %s created for environment %s (%s egress)", t->id, env, t->policy);
	tbx_reply_json(rep, 201, twin_json(d, t));
out:
	json_object_put(body);
}

static void patch_twin(struct tbx_twind *d, struct tbx_twin *t, const struct tbx_http_msg *req,
		       struct tbx_reply *rep)
{
	struct json_object *body = body_json(req, rep), *v;

	if (!body)
		return;
	/* Omitted: untouched; null: cleared. */
	if (json_object_object_get_ex(body, "ttl_minutes", &v)) {
		if (v && (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)) {
			tbx_reply_error(rep, 400, "invalid_request_error", "ttl_minutes must be a non-negative integer");
			json_object_put(body);
			return;
		}
		t->expires_ms = v && json_object_get_int64(v) > 0
					? tbx_now_ms() + json_object_get_int64(v) * 60000 : 0;
	}
	if (json_object_object_get_ex(body, "client_base_url", &v)) {
		free(t->client_base_url);
		t->client_base_url = v ? strdup(json_object_get_string(v)) : NULL;
	}
	tbx_twin_save(t);
	json_object_put(body);
	tbx_reply_json(rep, 200, twin_json(d, t));
}

static void delete_twin(struct tbx_twind *d, struct tbx_twin *t, struct tbx_reply *rep)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(t->id));
	json_object_object_add(o, "deleted", json_object_new_boolean(1));
	tbx_log_info("twin %s deleted", t->id);
	tbx_gateway_drop_twin(d->gateway, t);
	tbx_twins_remove(d->twins, t);
	tbx_reply_json(rep, 200, o);
}

static void service_control(struct tbx_service *s, const char *op, const char *method,
			    const char *query, struct tbx_reply *rep)
{
	if (strcmp(op, "requests") == 0 && strcmp(method, "GET") == 0) {
		struct json_object *q = NULL, *page;
		const char *why = "malformed query string";
		if (query && tbx_form_parse(query, strlen(query), &q, &why) < 0) {
			tbx_reply_error(rep, 400, "invalid_request_error", why);
			return;
		}
		page = tbx_reqlog_page(s->log, q, &why);
		json_object_put(q);
		if (!page)
			tbx_reply_error(rep, 400, "invalid_request_error", why);
		else
			tbx_reply_json(rep, 200, page);
	} else if (strcmp(op, "reset") == 0 && strcmp(method, "POST") == 0) {
		struct json_object *o = json_object_new_object();
		tbx_service_reset(s);
		json_object_object_add(o, "ok", json_object_new_boolean(1));
		json_object_object_add(o, "service", json_object_new_string(s->name));
		tbx_reply_json(rep, 200, o);
	} else if (strcmp(op, "health") == 0 && strcmp(method, "GET") == 0) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "status", json_object_new_string(s->route ? "ok" : "failed"));
		json_object_object_add(o, "service", json_object_new_string(s->name));
		json_object_object_add(o, "requests",
				       json_object_new_int64(s->next_request_id - 1));
		tbx_reply_json(rep, s->route ? 200 : 503, o);
	} else if (!strcmp(op, "requests") || !strcmp(op, "reset") || !strcmp(op, "health")) {
		tbx_reply_error(rep, 405, "invalid_request_error", "method not allowed");
	} else {
		not_found(rep, "control operation");
	}
}

static void health(struct tbx_twind *d, struct tbx_reply *rep)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "status", json_object_new_string("ok"));
	json_object_object_add(o, "mode", json_object_new_string("local"));
	json_object_object_add(o, "socks_address", json_object_new_string(d->socks_address));
	json_object_object_add(o, "connect_address", json_object_new_string(d->connect_address));
	json_object_object_add(o, "canary_host", json_object_new_string(d->cfg->canary_host));
	json_object_object_add(o, "twins", json_object_new_int64((int64_t)d->twins->count));
	json_object_object_add(o, "connections",
			       json_object_new_int64((int64_t)tbx_gateway_connections(d->gateway)));
	json_object_object_add(o, "uptime_s", json_object_new_int64((tbx_now_ms() - d->started_ms) / 1000));
	tbx_reply_json(rep, 200, o);
}

/* Split "/a/b/c" into decoded segments (owned by the caller). Returns the count or -1. */
static int split_path(const char *path, size_t len, char **segs)
{
	int n = 0;
	size_t i = 0;

	if (len == 0 || path[0] != '/')
		return -1;
	while (i < len) {
		size_t start = ++i;
		while (i < len && path[i] != '/')
			i++;
		if (i == start && i == len)
			break; /* a trailing slash */
		if (n == MAX_SEGMENTS || i == start || !(segs[n] = tbx_url_decode(path + start, i - start, 0)))
			goto fail;
		n++;
	}
	return n;
fail:
	while (n > 0)
		free(segs[--n]);
	return -1;
}

static void route(struct tbx_twind *d, const struct tbx_http_msg *req, char **s, int n,
		  const char *query, struct tbx_reply *rep)
{
	const char *m = req->method;
	struct tbx_twin *t = NULL;

#define IS(i, lit) (n > (i) && strcmp(s[i], lit) == 0)
	if (n < 2 || !IS(0, "v1"))
		goto unknown;
	if (n == 3 && IS(1, "gateway") && IS(2, "health") && !strcmp(m, "GET")) {
		health(d, rep);
		return;
	}
	if (n == 2 && IS(1, "me") && !strcmp(m, "GET")) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "id", json_object_new_string("local"));
		json_object_object_add(o, "name", json_object_new_string("twinbox local twin"));
		tbx_reply_json(rep, 200, o);
		return;
	}
	if (IS(1, "environments") && n >= 4 && IS(3, "sandboxes")) {
		if (n == 4 && !strcmp(m, "POST")) {
			create_twin(d, s[2], req, rep);
			return;
		}
		if (n < 5)
			goto unknown;
		t = tbx_twins_find(d->twins, s[4]);
		/* A twin is only found under the environment it was made for. */
		if (!t || strcmp(t->environment, s[2]) != 0) {
			not_found(rep, "twin");
			return;
		}
		if (n == 5 && !strcmp(m, "DELETE")) {
			delete_twin(d, t, rep);
			return;
		}
		if (n == 5 && !strcmp(m, "PATCH")) {
			patch_twin(d, t, req, rep);
			return;
		}
		if (n == 5 && !strcmp(m, "GET")) {
			tbx_reply_json(rep, 200, twin_json(d, t));
			return;
		}
		if (n == 6 && IS(5, "egress-credential") && !strcmp(m, "POST")) {
			tbx_reply_json(rep, 200, credential_json(d, t));
			return;
		}
		goto unknown;
	}
	if (IS(1, "sandboxes")) {
		if (n == 2 && !strcmp(m, "GET")) {
			struct json_object *a = json_object_new_array(), *o = json_object_new_object();
			for (struct tbx_twin *it = d->twins->head; it; it = it->next)
				json_object_array_add(a, twin_json(d, it));
			json_object_object_add(o, "sandboxes", a);
			tbx_reply_json(rep, 200, o);
			return;
		}
		if (n < 3)
			goto unknown;
		if (!(t = tbx_twins_find(d->twins, s[2]))) {
			not_found(rep, "twin");
			return;
		}
		if (n == 3 && !strcmp(m, "GET")) {
			tbx_reply_json(rep, 200, twin_json(d, t));
			return;
		}
		if (n == 3 && !strcmp(m, "DELETE")) {
			delete_twin(d, t, rep);
			return;
		}
		if (n == 4 && IS(3, "services") && !strcmp(m, "GET")) {
			tbx_reply_json(rep, 200, services_json(d, t));
			return;
		}
		if (n == 4 && IS(3, "egress-credential") && !strcmp(m, "POST")) {
			tbx_reply_json(rep, 200, credential_json(d, t));
			return;
		}
		if (n == 7 && IS(3, "services") && IS(5, "veris")) {
			struct tbx_service *svc = tbx_twin_service(t, s[4]);
			if (!svc) {
				not_found(rep, "service");
				return;
			} {
			service_control(svc, s[6], m, query, rep);
			return;
		}
		}
	}
#undef IS
unknown:
	tbx_reply_error(rep, 404, "not_found", "no such endpoint");
}

void tbx_control_handle(struct tbx_twind *d, const struct tbx_http_msg *req, struct tbx_reply *rep)
{
	const char *q = strchr(req->target, '?');
	size_t len = q ? (size_t)(q - req->target) : strlen(req->target);
	char *segs[MAX_SEGMENTS];
	int n;

	if (!authorized(d, req)) {
		tbx_reply_error(rep, 401, "authentication_error",
				"missing or wrong API key (send it in X-API-Key)");
		return;
	}
	if ((n = split_path(req->target, len, segs)) < 0) {
		tbx_reply_error(rep, 404, "not_found", "no such endpoint");
		return;
	}
	route(d, req, segs, n, q ? q + 1 : NULL, rep);
	while (n > 0)
		free(segs[--n]);
}

static void on_request(struct tbx_httpd_conn *c, struct tbx_http_msg *req, void *arg)
{
	struct control_conn *cc = arg;
	struct tbx_reply rep;

	tbx_reply_init(&rep);
	tbx_control_handle(cc->ctl->d, req, &rep);
	tbx_log_debug("%s %s -> %d", req->method, req->target, rep.status);
	tbx_httpd_respond(c, &rep);
}

static void on_closed(struct tbx_httpd_conn *c, const char *why, void *arg)
{
	struct control_conn *cc = arg;

	tbx_log_debug("control connection closed: %s", why);
	if (cc->prev)
		cc->prev->next = cc->next;
	else
		cc->ctl->conns = cc->next;
	if (cc->next)
		cc->next->prev = cc->prev;
	free(cc);
}

static const struct tbx_httpd_ops control_ops = { on_request, on_closed };

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len,
		      void *arg)
{
	struct tbx_control *ctl = arg;
	struct tbx_httpd_limits limits = ctl->d->http_limits;
	struct control_conn *cc = calloc(1, sizeof(*cc));
	struct bufferevent *bev;

	bev = cc ? bufferevent_socket_new(ctl->d->base, fd, BEV_OPT_CLOSE_ON_FREE) : NULL;
	if (!bev) {
		free(cc);
		evutil_closesocket(fd);
		return;
	}
	limits.max_body = CONTROL_MAX_BODY;
	cc->ctl = ctl;
	cc->next = ctl->conns;
	if (ctl->conns)
		ctl->conns->prev = cc;
	ctl->conns = cc;
	if (!(cc->http = tbx_httpd_conn_new(bev, &control_ops, cc, &limits))) {
		ctl->conns = cc->next;
		if (cc->next)
			cc->next->prev = NULL;
		free(cc);
		return;
	}
	tbx_httpd_start(cc->http);
}

int tbx_control_start(struct tbx_twind *d, const char *spec, char *bound, size_t bound_size,
		      int *is_unix, struct tbx_control **out)
{
	struct tbx_control *ctl = calloc(1, sizeof(*ctl));
	int fd;

	if (!ctl)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	if ((fd = tbx_listen(spec, 1, bound, bound_size, is_unix)) < 0) {
		free(ctl);
		return tbx_error_prefix("control plane");
	}
	ctl->d = d;
	ctl->listener = evconnlistener_new(d->base, on_accept, ctl,
					   LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (!ctl->listener) {
		evutil_closesocket(fd);
		free(ctl);
		return tbx_error_set(TBX_EIO, "control plane: cannot listen");
	}
	*out = ctl;
	return 0;
}

void tbx_control_stop(struct tbx_control *ctl)
{
	if (!ctl)
		return;
	evconnlistener_free(ctl->listener);
	while (ctl->conns)
		tbx_httpd_close(ctl->conns->http, "shutting down");
	free(ctl);
}
