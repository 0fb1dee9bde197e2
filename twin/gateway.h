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

int tbx_gateway_start(struct tbx_twind *d, const char *socks_spec, const char *connect_spec,
		      char *socks_bound, char *connect_bound, size_t bound_size,
		      struct tbx_gateway **out);
/* Close the listeners and every connection. */
void tbx_gateway_stop(struct tbx_gateway *gw);
/* Close every connection tied to twin (it is being deleted). */
void tbx_gateway_drop_twin(struct tbx_gateway *gw, struct tbx_twin *twin);
size_t tbx_gateway_connections(const struct tbx_gateway *gw);

#endif
