/* SPDX-License-Identifier: MIT */
/* CONNECT authority and Proxy-Authorization parsing (see proxy-connect.h). */
#include "proxy-connect.h"

#include <ctype.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hostname.h"

int tbx_authority_parse(const char *authority, char *host, size_t host_len, uint16_t *port)
{
	const char *colon, *h = authority;
	size_t hlen;
	unsigned long p = 0;

	if (authority[0] == '[') {
		const char *close = strchr(authority, ']');
		if (!close || close[1] != ':')
			return -1;
		h = authority + 1;
		hlen = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(authority, ':');
		if (!colon || memchr(authority, ':', (size_t)(colon - authority)))
			return -1; /* IPv6 must be bracketed */
		hlen = (size_t)(colon - authority);
	}
	if (hlen == 0 || hlen >= host_len || !colon[1] || strlen(colon + 1) > 5)
		return -1;
	for (const char *d = colon + 1; *d; d++) {
		if (!isdigit((unsigned char)*d))
			return -1;
		p = p * 10 + (unsigned long)(*d - '0');
	}
	if (p == 0 || p > 65535)
		return -1;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (tbx_hostname_canon(host) < 0)
		return -1;
	if (authority[0] == '[' && tbx_hostname_ip_family(host) != 6)
		return -1;
	*port = (uint16_t)p;
	return 0;
}

int tbx_basic_auth_parse(const char *value, char *user, size_t user_len, char *pass,
			 size_t pass_len)
{
	unsigned char decoded[600];
	size_t n = 0;
	const char *colon;

	if (strncasecmp(value, "Basic", 5) != 0 || (value[5] != ' ' && value[5] != '\t'))
		return -1;
	value += 6;
	while (*value == ' ' || *value == '\t')
		value++;
	if (strlen(value) > 4 * (sizeof(decoded) - 1) / 3 ||
	    sodium_base642bin(decoded, sizeof(decoded) - 1, value, strlen(value), NULL, &n, NULL,
			      sodium_base64_VARIANT_ORIGINAL) != 0)
		return -1;
	decoded[n] = '\0';
	if (memchr(decoded, '\0', n) || !(colon = strchr((char *)decoded, ':')))
		return -1;
	if ((size_t)(colon - (char *)decoded) >= user_len || strlen(colon + 1) >= pass_len)
		return -1;
	memcpy(user, decoded, (size_t)(colon - (char *)decoded));
	user[colon - (char *)decoded] = '\0';
	strcpy(pass, colon + 1);
	sodium_memzero(decoded, sizeof(decoded));
	return 0;
}

int tbx_connect_parse(const struct tbx_http_msg *m, struct tbx_connect_request *out, int *status,
		      const char **why)
{
	const char *auth;

	memset(out, 0, sizeof(*out));
	if (strcmp(m->method, "CONNECT") != 0) {
		*status = 405;
		*why = "only CONNECT is served on this port";
		return -1;
	}
	if (tbx_authority_parse(m->target, out->host, sizeof(out->host), &out->port) < 0) {
		*status = 400;
		*why = "malformed CONNECT authority";
		return -1;
	}
	auth = tbx_http_header_get(m, "Proxy-Authorization");
	if (auth && tbx_basic_auth_parse(auth, out->user, sizeof(out->user), out->pass,
					 sizeof(out->pass)) == 0)
		out->has_auth = 1;
	return 0;
}
