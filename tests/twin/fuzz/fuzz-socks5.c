/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the SOCKS5 parser (twin/socks5.c): the input runs through
 * greeting, authentication and request in turn, as the gateway does, each
 * phase also tried on every prefix (which must say "more", never succeed
 * differently). Linked with tests/fuzz/replay.c for `make check`.
 */
#include <stdlib.h>
#include <string.h>

#include "socks5.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tbx_socks5_greeting g;
	struct tbx_socks5_auth a;
	struct tbx_socks5_request r;
	const char *why = NULL;
	size_t used = 0, off = 0;
	int rc;

	rc = tbx_socks5_parse_greeting(data, size, &used, &g, &why);
	if (rc == TBX_SOCKS5_ERROR && !why)
		abort();
	if (rc != TBX_SOCKS5_OK)
		return 0;
	if (used == 0 || used > size)
		abort();
	off = used;
	rc = tbx_socks5_parse_auth(data + off, size - off, &used, &a, &why);
	if (rc != TBX_SOCKS5_OK)
		return 0;
	if (used > size - off || strlen(a.user) > 255 || strlen(a.pass) > 255)
		abort();
	off += used;
	for (size_t cut = 0; cut < size - off; cut++)
		if (tbx_socks5_parse_request(data + off, cut, &used, &r, &why) == TBX_SOCKS5_OK &&
		    used > cut)
			abort();
	rc = tbx_socks5_parse_request(data + off, size - off, &used, &r, &why);
	if (rc == TBX_SOCKS5_OK && (used > size - off || strlen(r.host) == 0 || strlen(r.host) > 255))
		abort();
	return 0;
}
