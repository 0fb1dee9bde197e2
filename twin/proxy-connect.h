/* SPDX-License-Identifier: MIT */
/*
 * HTTP CONNECT requests to the gateway: the authority they name and the
 * Basic credentials in Proxy-Authorization, from a head the HTTP parser
 * (http-parse.h) has already split. Pure functions, fuzzed with the parser.
 */
#ifndef TBX_PROXY_CONNECT_H
#define TBX_PROXY_CONNECT_H

#include <stddef.h>
#include <stdint.h>

#include "http-parse.h"

struct tbx_connect_request {
	char host[256]; /* canonical (hostname.h), IPv6 without brackets */
	uint16_t port;
	int has_auth;
	char user[256];
	char pass[256];
};

/*
 * Interpret a parsed request head as a CONNECT. Returns 0, or -1 with *status
 * the HTTP status to answer (400 malformed, 405 not CONNECT) and *why a reason.
 * A missing or malformed Proxy-Authorization is not an error here: has_auth
 * says so, and the caller answers 407.
 */
int tbx_connect_parse(const struct tbx_http_msg *m, struct tbx_connect_request *out, int *status,
		      const char **why);
/* "host:port" or "[v6]:port" -> canonical host and port (1..65535). 0 or -1. */
int tbx_authority_parse(const char *authority, char *host, size_t host_len, uint16_t *port);
/* "Basic base64(user:pass)" -> user, pass. 0 or -1. */
int tbx_basic_auth_parse(const char *value, char *user, size_t user_len, char *pass,
			 size_t pass_len);

#endif
