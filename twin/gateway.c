/* SPDX-License-Identifier: MIT */
/*
 * The gateway's listeners and handshakes: SOCKS5 and CONNECT parsing,
 * credentials, the routing decision (intercept, tunnel, refuse) and dialing
 * for tunnels (see gateway.h). What happens inside an intercepted tunnel is
 * intercept.c's.
 */
#include "gateway.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "routes.h"
#include "error.h"
#include "gateway-priv.h"
#include "hostname.h"
#include "ids.h"
#include "linger.h"
#include "listen.h"
#include "log.h"
#include "proxy-connect.h"
#include "relay.h"
#include "socks5.h"
#include "twind.h"
#include "twins.h"

#define TBX_LOG_CATEGORY "twin.gateway"

#define MAX_CONNS 4096
#define SOCKS_MAX_HANDSHAKE 1024
#define CONNECT_MAX_HEAD (16 * 1024)
#define TUNNEL_IDLE_S 600

static void describe(struct gw_conn *c, char *buf, size_t size)
{
	int n = snprintf(buf, size, "gateway #%lu %s from %s", c->serial, c->socks ? "socks" : "connect",
			 c->peer);
	if (c->twin && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " twin %s", c->twin->id);
	if (c->host[0] && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " to %s:%u", c->host, c->port);
}

/* Log why, unlink and free; the bufferevents still held are flushed and freed. */
static void conn_free(struct gw_conn *c, const char *why)
{
	struct tbx_gateway *gw = c->gw;
	char who[512];

	describe(c, who, sizeof(who));
	tbx_log_info("%s: closed: %s", who, why);
	if (c->dns) {
		struct evdns_getaddrinfo_request *req = c->dns;
		c->dns = NULL;
		evdns_getaddrinfo_cancel(req);
	}
	if (c->up)
		bufferevent_free(c->up);
	if (c->bev)
		tbx_bev_linger_free(c->bev);
	tbx_http_msg_free(&c->head);
	if (c->prev)
		c->prev->next = c->next;
	else
		gw->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	gw->n_conns--;
	free(c);
}

void gw_conn_close(struct gw_conn *c, const char *why)
{
	if (c->phase == GW_HTTP && c->http)
		tbx_httpd_close(c->http, why); /* calls back into intercept.c, then frees */
	else if (c->phase == GW_TUNNEL && c->relay)
		tbx_relay_stop(c->relay, why);
	else
		conn_free(c, why);
}

void gw_conn_release(struct gw_conn *c, const char *why)
{
	c->http = NULL;
	conn_free(c, why);
}

static struct tbx_twin *check_credentials(struct tbx_gateway *gw, const char *user, const char *pass)
{
	struct tbx_twin *t = tbx_twins_find(gw->d->twins, user);

	return t && tbx_secret_equal(pass, t->password) ? t : NULL;
}

static void send_bytes(struct gw_conn *c, const void *data, size_t len)
{
	bufferevent_write(c->bev, data, len);
}

static void connect_reply(struct gw_conn *c, int status, const char *extra, const char *body)
{
	evbuffer_add_printf(bufferevent_get_output(c->bev),
			    "HTTP/1.1 %d %s\r\n%sContent-Type: text/plain\r\nContent-Length: %zu\r\n"
			    "Connection: close\r\n\r\n%s",
			    status, tbx_http_reason(status), extra ? extra : "", strlen(body), body);
}

/* Refuse the request with a SOCKS reply code or an HTTP status, and close. */
static void refuse(struct gw_conn *c, uint8_t socks_rep, int http_status, const char *why)
{
	char body[600];

	if (c->socks) {
		uint8_t reply[10];
		send_bytes(c, reply, tbx_socks5_reply(reply, socks_rep));
	} else {
		snprintf(body, sizeof(body), "twinbox gateway: %s\n", why);
		connect_reply(c, http_status, http_status == 407
				  ? "Proxy-Authenticate: Basic realm=\"twinbox\"\r\n" : NULL, body);
	}
	conn_free(c, why);
}

static void succeed(struct gw_conn *c)
{
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	uint8_t reply[10];

	if (c->socks)
		send_bytes(c, reply, tbx_socks5_reply(reply, TBX_SOCKS5_REP_SUCCEEDED));
	else
		send_bytes(c, established, sizeof(established) - 1);
}

static void on_relay_done(void *arg, const char *why, uint64_t up, uint64_t down)
{
	struct gw_conn *c = arg;
	char msg[200];

	c->relay = NULL;
	snprintf(msg, sizeof(msg), "tunnel ended (%llu bytes out, %llu in): %s",
		 (unsigned long long)up, (unsigned long long)down, why);
	conn_free(c, msg);
}

static void on_host_event(struct bufferevent *bev, short what, void *arg)
{
	struct gw_conn *c = arg;
	char why[300];

	if (what & BEV_EVENT_CONNECTED) {
		bufferevent_set_timeouts(c->bev, NULL, NULL);
		succeed(c);
		c->phase = GW_TUNNEL;
		c->relay = tbx_relay_start(c->bev, c->up, TUNNEL_IDLE_S, on_relay_done, c);
		c->bev = c->up = NULL;
		if (!c->relay)
			conn_free(c, "out of memory");
		return;
	}
	snprintf(why, sizeof(why), "cannot reach %s:%u: %s", c->host, c->port,
		 what & BEV_EVENT_TIMEOUT ? "timed out" : evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	bufferevent_free(c->up);
	c->up = NULL;
	refuse(c, TBX_SOCKS5_REP_HOST_UNREACHABLE, 502, why);
}

/* Where open egress must still not go: this machine's own services, link-local, multicast. */
static int forbidden_address(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		uint32_t a = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
		return (a >> 24) == 127 || (a >> 24) == 0 || (a >> 16) == 0xa9fe || (a >> 28) == 0xe;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a)) {
			struct sockaddr_in v4 = { .sin_family = AF_INET };
			memcpy(&v4.sin_addr, a->s6_addr + 12, 4);
			return forbidden_address((struct sockaddr *)&v4);
		}
		return IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_UNSPECIFIED(a) || IN6_IS_ADDR_LINKLOCAL(a) ||
		       IN6_IS_ADDR_MULTICAST(a);
	}
	return 1;
}

static void dial_address(struct gw_conn *c, const struct sockaddr *sa, int len)
{
	struct timeval tv = { c->gw->d->handshake_timeout_s, 0 };

	c->up = bufferevent_socket_new(c->gw->d->base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!c->up) {
		refuse(c, TBX_SOCKS5_REP_FAILURE, 502, "out of memory");
		return;
	}
	bufferevent_setcb(c->up, NULL, NULL, on_host_event, c);
	bufferevent_set_timeouts(c->up, &tv, &tv);
	if (bufferevent_socket_connect(c->up, sa, len) != 0) {
		char why[300];
		snprintf(why, sizeof(why), "cannot connect to %s:%u", c->host, c->port);
		bufferevent_free(c->up);
		c->up = NULL;
		refuse(c, TBX_SOCKS5_REP_FAILURE, 502, why);
	}
}

static void on_resolved(int err, struct evutil_addrinfo *res, void *arg)
{
	struct gw_conn *c = arg;
	char why[400];

	if (err == EVUTIL_EAI_CANCEL)
		return; /* the connection is already gone */
	c->dns = NULL;
	if (err || !res) {
		snprintf(why, sizeof(why), "cannot resolve %s: %s", c->host, evutil_gai_strerror(err));
		refuse(c, TBX_SOCKS5_REP_HOST_UNREACHABLE, 502, why);
		return;
	}
	if (forbidden_address(res->ai_addr)) {
		evutil_freeaddrinfo(res);
		snprintf(why, sizeof(why), "refused %s: it resolves to a local or reserved address", c->host);
		refuse(c, TBX_SOCKS5_REP_NOT_ALLOWED, 403, why);
		return;
	}
	dial_address(c, res->ai_addr, (int)res->ai_addrlen);
	evutil_freeaddrinfo(res);
}

static void dial(struct gw_conn *c)
{
	struct tbx_twind *d = c->gw->d;
	const char *override = tbx_routes_resolve(d->cfg, c->host);
	struct sockaddr_storage ss;
	int len = sizeof(ss);
	char spec[300], port[8];

	c->phase = GW_DIALING;
	bufferevent_disable(c->bev, EV_READ); /* what the client sends early waits for the tunnel */
	/* The routes file's resolver override is trusted, even towards loopback (tests). */
	if (override || tbx_hostname_ip_family(c->host)) {
		const char *ip = override ? override : c->host;
		snprintf(spec, sizeof(spec), strchr(ip, ':') ? "[%s]:%u" : "%s:%u", ip, c->port);
		if (evutil_parse_sockaddr_port(spec, (struct sockaddr *)&ss, &len) != 0) {
			refuse(c, TBX_SOCKS5_REP_HOST_UNREACHABLE, 502, "bad address");
			return;
		}
		if (!override && forbidden_address((struct sockaddr *)&ss)) {
			refuse(c, TBX_SOCKS5_REP_NOT_ALLOWED, 403, "refused: a local or reserved address");
			return;
		}
		dial_address(c, (struct sockaddr *)&ss, len);
		return;
	}
	if (!d->dns && !(d->dns = evdns_base_new(d->base, EVDNS_BASE_INITIALIZE_NAMESERVERS |
							   EVDNS_BASE_DISABLE_WHEN_INACTIVE))) {
		refuse(c, TBX_SOCKS5_REP_HOST_UNREACHABLE, 502, "no DNS resolver is configured");
		return;
	}
	struct evutil_addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
					 .ai_protocol = IPPROTO_TCP };
	snprintf(port, sizeof(port), "%u", c->port);
	c->dns = evdns_getaddrinfo(d->dns, c->host, port, &hints, on_resolved, c);
	/* NULL means it already finished, and on_resolved ran. */
}

/* Credentials are good and the target is known: intercept, tunnel or refuse. */
static void decide(struct gw_conn *c)
{
	struct tbx_twind *d = c->gw->d;
	char why[400];

	if (strcmp(c->host, d->cfg->canary_host) == 0) {
		c->canary = 1;
	} else if ((c->svc = tbx_twin_service_for_host(c->twin, c->host))) {
		/* intercepted below */
	} else if (strcmp(c->twin->policy, "open") == 0) {
		dial(c);
		return;
	} else {
		snprintf(why, sizeof(why), "refused %s:%u: not routed to twin %s, and its egress policy is strict",
			 c->host, c->port, c->twin->id);
		refuse(c, TBX_SOCKS5_REP_NOT_ALLOWED, 403, why);
		return;
	}
	succeed(c);
	c->phase = GW_FIRST_BYTE;
	if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
		gw_intercept_start(c);
}

static void socks_step(struct gw_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);

	for (;;) {
		size_t len = evbuffer_get_length(in), used = 0;
		const uint8_t *data;
		const char *why = "malformed SOCKS5";
		int rc;

		if (len == 0)
			return;
		if (len > SOCKS_MAX_HANDSHAKE) {
			conn_free(c, "oversized SOCKS5 handshake");
			return;
		}
		data = evbuffer_pullup(in, (ev_ssize_t)len);
		if (c->phase == GW_SOCKS_GREETING) {
			struct tbx_socks5_greeting g;
			if ((rc = tbx_socks5_parse_greeting(data, len, &used, &g, &why)) == TBX_SOCKS5_MORE)
				return;
			if (rc == TBX_SOCKS5_ERROR) {
				conn_free(c, why);
				return;
			}
			evbuffer_drain(in, used);
			if (!g.offers_userpass) {
				send_bytes(c, "\x05\xff", 2);
				conn_free(c, "SOCKS5 client offers no username/password authentication");
				return;
			}
			send_bytes(c, "\x05\x02", 2);
			c->phase = GW_SOCKS_AUTH;
		} else if (c->phase == GW_SOCKS_AUTH) {
			struct tbx_socks5_auth a;
			if ((rc = tbx_socks5_parse_auth(data, len, &used, &a, &why)) == TBX_SOCKS5_MORE)
				return;
			if (rc == TBX_SOCKS5_ERROR) {
				conn_free(c, why);
				return;
			}
			evbuffer_drain(in, used);
			if (!(c->twin = check_credentials(c->gw, a.user, a.pass))) {
				char msg[128];
				send_bytes(c, "\x01\x01", 2);
				snprintf(msg, sizeof(msg), "wrong SOCKS5 credentials (user \"%.40s\")", a.user);
				conn_free(c, msg);
				return;
			}
			send_bytes(c, "\x01\x00", 2);
			c->phase = GW_SOCKS_REQUEST;
		} else {
			struct tbx_socks5_request r;
			if ((rc = tbx_socks5_parse_request(data, len, &used, &r, &why)) == TBX_SOCKS5_MORE)
				return;
			if (rc == TBX_SOCKS5_ERROR) {
				refuse(c, TBX_SOCKS5_REP_FAILURE, 400, why);
				return;
			}
			evbuffer_drain(in, used);
			if (r.cmd != TBX_SOCKS5_CMD_CONNECT) {
				refuse(c, TBX_SOCKS5_REP_CMD_UNSUPPORTED, 400,
					      r.cmd == TBX_SOCKS5_CMD_UDP_ASSOCIATE
						      ? "UDP ASSOCIATE refused: UDP (QUIC) is not relayed"
						      : "only the SOCKS5 CONNECT command is served");
				return;
			}
			snprintf(c->host, sizeof(c->host), "%s", r.host);
			c->port = r.port;
			if (c->port == 0) {
				refuse(c, TBX_SOCKS5_REP_FAILURE, 400, "port 0 in SOCKS5 CONNECT");
				return;
			}
			if (tbx_hostname_canon(c->host) < 0) {
				refuse(c, TBX_SOCKS5_REP_HOST_UNREACHABLE, 400, "invalid host name");
				return;
			}
			decide(c);
			return;
		}
	}
}

static void connect_step(struct gw_conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	struct tbx_connect_request r;
	const char *why;
	char msg[300];
	int status;

	while (evbuffer_get_length(in) > 0 && c->head.state != TBX_HTTP_DONE &&
	       c->head.state != TBX_HTTP_ERROR) {
		struct evbuffer_iovec v;
		evbuffer_peek(in, -1, NULL, &v, 1);
		evbuffer_drain(in, tbx_http_parse(&c->head, v.iov_base, v.iov_len));
	}
	if (c->head.state == TBX_HTTP_ERROR) {
		snprintf(msg, sizeof(msg), "malformed CONNECT request: %s", c->head.error);
		refuse(c, 0, c->head.error_status, msg);
		return;
	}
	if (c->head.state != TBX_HTTP_DONE)
		return;
	if (tbx_connect_parse(&c->head, &r, &status, &why) < 0) {
		refuse(c, 0, status, why);
		return;
	}
	if (!r.has_auth) {
		refuse(c, 0, 407, "no Proxy-Authorization (Basic, twin id and password)");
		return;
	}
	if (!(c->twin = check_credentials(c->gw, r.user, r.pass))) {
		snprintf(msg, sizeof(msg), "wrong CONNECT credentials (user \"%.40s\")", r.user);
		refuse(c, 0, 407, msg);
		return;
	}
	snprintf(c->host, sizeof(c->host), "%s", r.host);
	c->port = r.port;
	decide(c);
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct gw_conn *c = arg;

	switch (c->phase) {
	case GW_SOCKS_GREETING:
	case GW_SOCKS_AUTH:
	case GW_SOCKS_REQUEST:
		socks_step(c);
		break;
	case GW_CONNECT_HEAD:
		connect_step(c);
		break;
	case GW_FIRST_BYTE:
		gw_intercept_start(c);
		break;
	default:
		break;
	}
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct gw_conn *c = arg;

	if (what & BEV_EVENT_TIMEOUT)
		conn_free(c, c->phase == GW_FIRST_BYTE ? "timed out waiting for the client to start TLS or HTTP"
						       : "handshake timed out");
	else if (what & BEV_EVENT_EOF)
		conn_free(c, "client closed during the handshake");
	else if (what & BEV_EVENT_ERROR)
		conn_free(c, "connection error during the handshake");
}

static void accept_conn(struct tbx_gateway *gw, evutil_socket_t fd, struct sockaddr *sa, int socks)
{
	struct timeval tv = { gw->d->handshake_timeout_s, 0 };
	struct tbx_http_limits lim = { CONNECT_MAX_HEAD, 1 };
	struct gw_conn *c;

	if (gw->n_conns >= MAX_CONNS) {
		tbx_log_warn("gateway: %d connections open; refusing another", MAX_CONNS);
		evutil_closesocket(fd);
		return;
	}
	if (!(c = calloc(1, sizeof(*c))) ||
	    !(c->bev = bufferevent_socket_new(gw->d->base, fd, BEV_OPT_CLOSE_ON_FREE))) {
		free(c);
		evutil_closesocket(fd);
		return;
	}
	c->gw = gw;
	c->serial = ++gw->next_serial;
	c->socks = socks;
	c->phase = socks ? GW_SOCKS_GREETING : GW_CONNECT_HEAD;
	tbx_http_msg_init(&c->head, TBX_HTTP_REQUEST, &lim);
	if (sa->sa_family == AF_INET)
		evutil_inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, c->peer, sizeof(c->peer));
	else if (sa->sa_family == AF_INET6)
		evutil_inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, c->peer, sizeof(c->peer));
	else
		snprintf(c->peer, sizeof(c->peer), "a Unix socket");
	c->next = gw->conns;
	if (gw->conns)
		gw->conns->prev = c;
	gw->conns = c;
	gw->n_conns++;
	bufferevent_setcb(c->bev, on_read, NULL, on_event, c);
	bufferevent_set_timeouts(c->bev, &tv, &tv);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

static void on_accept_socks(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
			    int len, void *arg)
{
	accept_conn(arg, fd, sa, 1);
}

static void on_accept_connect(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
			      int len, void *arg)
{
	accept_conn(arg, fd, sa, 0);
}

/* One listener more; bound gets the first TCP and the first Unix address of its kind. */
static int listen_on(struct tbx_gateway *gw, const char *spec, evconnlistener_cb cb,
		     char *tcp_bound, size_t tcp_size, char *unix_bound, size_t unix_size)
{
	struct gw_listener *gl = &gw->listeners[gw->n_listeners];
	char bound[300];
	int is_unix, fd = tbx_listen(spec, 0, bound, sizeof(bound), &is_unix);

	if (fd < 0)
		return tbx_error_status();
	gl->l = evconnlistener_new(gw->d->base, cb, gw, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
				   -1, fd);
	if (!gl->l) {
		evutil_closesocket(fd);
		if (is_unix)
			unlink(bound);
		return tbx_error_set(TBX_EIO, "cannot listen on %s", spec);
	}
	gw->n_listeners++;
	if (is_unix) {
		snprintf(gl->unix_path, sizeof(gl->unix_path), "%s", bound);
		if (!unix_bound[0])
			snprintf(unix_bound, unix_size, "%s", bound);
	} else if (!tcp_bound[0]) {
		snprintf(tcp_bound, tcp_size, "%s", bound);
	}
	return 0;
}

int tbx_gateway_start(struct tbx_twind *d, const struct tbx_gateway_addrs *addrs,
		      struct tbx_gateway_bound *bound, struct tbx_gateway **out)
{
	struct tbx_gateway *gw = calloc(1, sizeof(*gw));
	int rc = 0;

	if (!gw)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	gw->d = d;
	memset(bound, 0, sizeof(*bound));
	for (size_t i = 0; i < TBX_GATEWAY_MAX_LISTENERS && addrs->socks[i] && rc == 0; i++)
		rc = listen_on(gw, addrs->socks[i], on_accept_socks, bound->socks, sizeof(bound->socks),
			       bound->socks_unix, sizeof(bound->socks_unix));
	for (size_t i = 0; i < TBX_GATEWAY_MAX_LISTENERS && addrs->connect[i] && rc == 0; i++)
		rc = listen_on(gw, addrs->connect[i], on_accept_connect, bound->connect,
			       sizeof(bound->connect), bound->connect_unix, sizeof(bound->connect_unix));
	if (rc == 0 && (!addrs->socks[0] || !addrs->connect[0]))
		rc = tbx_error_set(TBX_EINVAL, "the gateway needs a SOCKS and a CONNECT address");
	if (rc < 0) {
		rc = tbx_error_prefix("gateway");
		tbx_gateway_stop(gw);
		return rc ? rc : TBX_EIO;
	}
	*out = gw;
	return 0;
}

void tbx_gateway_stop(struct tbx_gateway *gw)
{
	if (!gw)
		return;
	for (size_t i = 0; i < gw->n_listeners; i++) {
		evconnlistener_free(gw->listeners[i].l);
		/* A socket file left behind would only answer ECONNREFUSED. */
		if (gw->listeners[i].unix_path[0])
			unlink(gw->listeners[i].unix_path);
	}
	while (gw->conns)
		gw_conn_close(gw->conns, "shutting down");
	free(gw);
}

void tbx_gateway_drop_twin(struct tbx_gateway *gw, struct tbx_twin *twin)
{
	struct gw_conn *c = gw->conns;

	while (c) {
		struct gw_conn *next = c->next;
		if (c->twin == twin)
			gw_conn_close(c, "its twin was deleted");
		c = next;
	}
}

size_t tbx_gateway_connections(const struct tbx_gateway *gw)
{
	return gw ? gw->n_conns : 0;
}
