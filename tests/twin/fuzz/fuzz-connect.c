/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for CONNECT handling (twin/proxy-connect.c over
 * twin/http-parse.c): parse a request head, interpret it as a CONNECT, and
 * also try the input directly as an authority and as a Basic credential.
 * Linked with tests/fuzz/replay.c for `make check`.
 */
#include <stdlib.h>
#include <string.h>

#include "hostname.h"
#include "proxy-connect.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tbx_http_limits limits = { 16 * 1024, 1 };
	struct tbx_connect_request r;
	struct tbx_http_msg m;
	char text[512], host[256], user[256], pass[256];
	uint16_t port;
	const char *why;
	int status;

	tbx_http_msg_init(&m, TBX_HTTP_REQUEST, &limits);
	tbx_http_parse(&m, (const char *)data, size);
	if (m.state == TBX_HTTP_DONE) {
		if (tbx_connect_parse(&m, &r, &status, &why) == 0) {
			if (r.port == 0 || tbx_hostname_canon(r.host) < 0)
				abort();
		} else if (status != 400 && status != 405) {
			abort();
		}
	}
	tbx_http_msg_free(&m);

	if (size >= sizeof(text))
		size = sizeof(text) - 1;
	memcpy(text, data, size);
	text[size] = '\0';
	if (tbx_authority_parse(text, host, sizeof(host), &port) == 0 && (port == 0 || !host[0]))
		abort();
	tbx_basic_auth_parse(text, user, sizeof(user), pass, sizeof(pass));
	return 0;
}
