/* SPDX-License-Identifier: MIT */
/*
 * The egress gateway: SOCKS5 (username/password) and HTTP CONNECT (Basic
 * Proxy-Authorization) listeners. The credential names a twin; a host that
 * twin routes, and the canary host, are intercepted (TLS terminated with a
 * forged leaf, HTTP answered by the twin and logged); any other host is
 * refused ("strict") or tunnelled ("open").
 */
#ifndef TBX_GATEWAY_H
#define TBX_GATEWAY_H

#include <stddef.h>

struct tbx_gateway;
struct tbx_twin;
struct tbx_twind;

#define TBX_GATEWAY_MAX_LISTENERS 4

/* Address specs, as tbx_listen takes them ("127.0.0.1:0", "unix:/path"). */
struct tbx_gateway_addrs {
	/* NULL-padded; at least one of each */
	const char *socks[TBX_GATEWAY_MAX_LISTENERS], *connect[TBX_GATEWAY_MAX_LISTENERS];
};

/* What the listeners bound to: the first TCP one and the first Unix one of each kind. */
struct tbx_gateway_bound {
	char socks[300], connect[300];            /* "127.0.0.1:43215", or "" when none is TCP */
	char socks_unix[300], connect_unix[300];  /* socket paths, or "" */
};

/*
 * Listen on every address. A Unix socket is made 0600 (the gateway trusts
 * its credentials, not the peer, but other users have no business there)
 * and removed again at stop.
 */
int tbx_gateway_start(struct tbx_twind *d, const struct tbx_gateway_addrs *addrs,
		      struct tbx_gateway_bound *bound, struct tbx_gateway **out);
/* Close the listeners and every connection. */
void tbx_gateway_stop(struct tbx_gateway *gw);
/* Close every connection tied to twin (it is being deleted). */
void tbx_gateway_drop_twin(struct tbx_gateway *gw, struct tbx_twin *twin);
size_t tbx_gateway_connections(const struct tbx_gateway *gw);

#endif
