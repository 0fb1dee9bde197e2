/* SPDX-License-Identifier: MIT */
/*
 * twinbox-twind's one context: configuration, twins, CA and TLS, the
 * gateway and the addresses it advertises. Built by main.c, shared by the
 * control plane (control.c), the gateway (gateway.c) and the twins.
 */
#ifndef TBX_TWIND_H
#define TBX_TWIND_H

#include <stdint.h>

#include "cert.h"
#include "httpd.h"

struct event_base;
struct evdns_base;
struct tbx_routes;
struct tbx_gateway;
struct tbx_statedb;
struct tbx_tls;
struct tbx_twins;
struct tbx_upstream;

struct tbx_twind {
	struct event_base *base;
	struct evdns_base *dns;
	struct tbx_routes *cfg;
	struct tbx_statedb *db;
	struct tbx_twins *twins;
	struct tbx_ca ca;
	struct tbx_tls *tls;
	struct tbx_gateway *gateway;
	struct tbx_upstream *upstream;
	char api_key[256];
	char control_base[300];    /* base of control_url: http://127.0.0.1:P, or http://localhost */
	char socks_address[300];   /* host:port as put in egress credentials */
	char connect_address[300];
	char advertise_host[300];  /* the host part of those */
	struct tbx_httpd_limits http_limits;
	int handshake_timeout_s;   /* SOCKS/CONNECT/TLS handshakes */
	int upstream_timeout_s;
	int64_t started_ms;
};

#endif
