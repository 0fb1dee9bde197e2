/* SPDX-License-Identifier: MIT */
/* The gateway's connection, shared by gateway.c (handshakes) and intercept.c (HTTP). */
#ifndef TBX_GATEWAY_PRIV_H
#define TBX_GATEWAY_PRIV_H

#include <stdint.h>

#include "gateway.h"
#include "http-parse.h"

struct bufferevent;
struct evdns_getaddrinfo_request;
struct json_object;
struct tbx_httpd_conn;
struct tbx_relay;
struct tbx_service;
struct tbx_twin;
struct tbx_twind;
struct tbx_upstream_job;

enum gw_phase {
	GW_SOCKS_GREETING,
	GW_SOCKS_AUTH,
	GW_SOCKS_REQUEST,
	GW_CONNECT_HEAD,
	GW_DIALING,    /* open policy: resolving and connecting to the host */
	GW_FIRST_BYTE, /* intercepting: waiting to see TLS or plain HTTP */
	GW_HTTP,       /* httpd owns the client side */
	GW_TUNNEL,     /* relay owns both sides */
};

struct gw_conn {
	struct tbx_gateway *gw;
	unsigned long serial;
	int socks; /* arrived on the SOCKS listener */
	enum gw_phase phase;
	char peer[64];
	struct bufferevent *bev; /* the client, until httpd or the relay takes it */
	struct bufferevent *up;  /* the host, while dialing */
	struct tbx_http_msg head; /* CONNECT request head */
	struct evdns_getaddrinfo_request *dns;
	struct tbx_httpd_conn *http;
	struct tbx_relay *relay;
	struct tbx_twin *twin;
	struct tbx_service *svc; /* the routed service; NULL for the canary */
	int canary;
	int tls;
	char host[256];
	uint16_t port;
	/* The request with the upstream, if any. */
	struct tbx_upstream_job *job;
	struct json_object *pending_entry;
	int64_t pending_started;
	struct gw_conn *prev, *next;
};

struct gw_listener {
	struct evconnlistener *l;
	char unix_path[300]; /* removed at stop; empty for TCP */
};

struct tbx_gateway {
	struct tbx_twind *d;
	struct gw_listener listeners[2 * TBX_GATEWAY_MAX_LISTENERS];
	size_t n_listeners;
	struct gw_conn *conns;
	size_t n_conns;
	unsigned long next_serial;
};

/* gateway.c: end a connection, logging why. */
void gw_conn_close(struct gw_conn *c, const char *why);
/* gateway.c: httpd is done with the connection; log why and free it. */
void gw_conn_release(struct gw_conn *c, const char *why);
/* intercept.c: the client's tunnel is up; serve it as TLS or plain HTTP. */
void gw_intercept_start(struct gw_conn *c);
/* intercept.c: a connection in GW_HTTP ends (drops a pending upstream request). */
void gw_intercept_closed(struct gw_conn *c);

#endif
