/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the HTTP/1.1 parser (twin/http-parse.c): the input is
 * parsed as a stream of requests, fed in pieces whose sizes the first byte
 * picks, then whole as a response. Checks the parser's own invariants.
 * Built for libFuzzer with clang -fsanitize=fuzzer, or linked with
 * tests/fuzz/replay.c to replay the corpus in `make check`.
 */
#include <stdlib.h>
#include <string.h>

#include "http-parse.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void check(const struct tbx_http_msg *m)
{
	if (m->state == TBX_HTTP_ERROR && (!m->error || m->error_status < 400))
		abort();
	if (m->state == TBX_HTTP_DONE && m->kind == TBX_HTTP_REQUEST &&
	    (!m->method || !m->target || !m->head_done))
		abort();
	if (m->body_len > m->limits.max_body)
		abort();
	if (m->body && m->body[m->body_len] != '\0')
		abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tbx_http_limits limits = { 4096, 65536 };
	struct tbx_http_msg m;
	size_t step, used = 0;

	if (size == 0)
		return 0;
	step = 1 + data[0] % 64;
	data++;
	size--;
	tbx_http_msg_init(&m, TBX_HTTP_REQUEST, &limits);
	while (used < size) {
		size_t n = size - used < step ? size - used : step;
		size_t took = tbx_http_parse(&m, (const char *)data + used, n);
		if (took > n)
			abort();
		used += took;
		check(&m);
		if (m.state == TBX_HTTP_ERROR)
			break;
		if (m.state == TBX_HTTP_DONE) {
			(void)tbx_http_header_get(&m, "Host");
			(void)tbx_http_header_has_token(&m, "Connection", "close");
			tbx_http_msg_reset(&m);
		} else if (took < n) {
			abort(); /* only a finished or failed message stops short */
		}
	}
	tbx_http_parse_eof(&m);
	check(&m);
	tbx_http_msg_free(&m);

	tbx_http_msg_init(&m, TBX_HTTP_RESPONSE, &limits);
	m.no_body = size > 0 && data[0] == 'H' && size % 7 == 0;
	tbx_http_parse(&m, (const char *)data, size);
	check(&m);
	tbx_http_parse_eof(&m);
	check(&m);
	tbx_http_msg_free(&m);
	return 0;
}
