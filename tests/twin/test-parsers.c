/* SPDX-License-Identifier: MIT */
/* Unit tests of the twin's parsers of untrusted input: HTTP/1.1, SOCKS5, CONNECT, forms, host names. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "form.h"
#include "hostname.h"
#include "http-parse.h"
#include "proxy-connect.h"
#include "socks5.h"

static int failures, checks;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		checks++;                                                                  \
		if (!(cond)) {                                                             \
			failures++;                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                          \
	} while (0)

/* Parse all of data, in pieces of step bytes; returns the total consumed. */
static size_t feed(struct tbx_http_msg *m, const char *data, size_t len, size_t step)
{
	size_t used = 0;

	while (used < len && m->state != TBX_HTTP_DONE && m->state != TBX_HTTP_ERROR) {
		size_t n = len - used < step ? len - used : step;
		size_t took = tbx_http_parse(m, data + used, n);
		used += took;
		if (took < n)
			break;
	}
	return used;
}

static size_t feed_str(struct tbx_http_msg *m, const char *s, size_t step)
{
	return feed(m, s, strlen(s), step);
}

static struct tbx_http_msg parse_request(const char *data, size_t step)
{
	struct tbx_http_msg m;
	tbx_http_msg_init(&m, TBX_HTTP_REQUEST, NULL);
	feed(&m, data, strlen(data), step);
	return m;
}

static void test_http_requests(void)
{
	static const size_t steps[] = { 1, 3, 7, 4096 };

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const char *req = "\r\nPOST /v1/charges?x=1 HTTP/1.1\r\nHost: api.stripe.com\r\n"
				  "Content-Length: 11\r\nX-Empty:\r\nX-Pad:   v a l   \r\n\r\nhello world";
		struct tbx_http_msg m = parse_request(req, steps[i]);
		CHECK(m.state == TBX_HTTP_DONE);
		CHECK(strcmp(m.method, "POST") == 0 && strcmp(m.target, "/v1/charges?x=1") == 0);
		CHECK(m.version_minor == 1 && m.keep_alive);
		CHECK(m.n_headers == 4);
		CHECK(strcmp(tbx_http_header_get(&m, "host"), "api.stripe.com") == 0);
		CHECK(strcmp(tbx_http_header_get(&m, "X-Empty"), "") == 0);
		CHECK(strcmp(tbx_http_header_get(&m, "X-Pad"), "v a l") == 0);
		CHECK(m.body_len == 11 && memcmp(m.body, "hello world", 11) == 0);
		tbx_http_msg_free(&m);

		const char *chunked = "PUT /x HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n"
				      "5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n";
		m = parse_request(chunked, steps[i]);
		CHECK(m.state == TBX_HTTP_DONE && m.chunked);
		CHECK(m.body_len == 11 && memcmp(m.body, "hello world", 11) == 0);
		tbx_http_msg_free(&m);
	}

	/* Keep-alive rules. */
	struct tbx_http_msg m = parse_request("GET / HTTP/1.0\r\n\r\n", 100);
	CHECK(m.state == TBX_HTTP_DONE && !m.keep_alive);
	tbx_http_msg_free(&m);
	m = parse_request("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", 100);
	CHECK(m.keep_alive);
	tbx_http_msg_free(&m);
	m = parse_request("GET / HTTP/1.1\r\nConnection: upgrade, close\r\n\r\n", 100);
	CHECK(!m.keep_alive && tbx_http_header_has_token(&m, "connection", "UPGRADE"));
	tbx_http_msg_free(&m);
	m = parse_request("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n", 100);
	CHECK(m.head_done && m.expect_continue && m.state == TBX_HTTP_BODY);
	tbx_http_msg_free(&m);
	m = parse_request("CONNECT api.stripe.com:443 HTTP/1.1\r\n\r\n\x16\x03\x01", 100);
	CHECK(m.state == TBX_HTTP_DONE && strcmp(m.target, "api.stripe.com:443") == 0);
	tbx_http_msg_free(&m);

	/* Two pipelined requests: the first stops where the second begins. */
	const char *two = "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
	tbx_http_msg_init(&m, TBX_HTTP_REQUEST, NULL);
	size_t used = tbx_http_parse(&m, two, strlen(two));
	CHECK(m.state == TBX_HTTP_DONE && used == 19 && strcmp(m.target, "/a") == 0);
	tbx_http_msg_reset(&m);
	used += tbx_http_parse(&m, two + used, strlen(two) - used);
	CHECK(m.state == TBX_HTTP_DONE && used == strlen(two) && strcmp(m.target, "/b") == 0);
	tbx_http_msg_free(&m);
}

static void expect_error(const char *data, int status, const struct tbx_http_limits *lim)
{
	struct tbx_http_msg m;

	tbx_http_msg_init(&m, TBX_HTTP_REQUEST, lim);
	feed(&m, data, strlen(data), 5);
	CHECK(m.state == TBX_HTTP_ERROR);
	if (m.state != TBX_HTTP_ERROR || m.error_status != status)
		fprintf(stderr, "  for %.40s: state %d status %d (%s), wanted %d\n", data, m.state,
			m.error_status, m.error ? m.error : "-", status);
	CHECK(m.error_status == status && m.error);
	tbx_http_msg_free(&m);
}

static void test_http_errors(void)
{
	struct tbx_http_limits small = { 64, 10 };
	char many[8192];
	size_t n = 0;

	expect_error("GET / HTTP/1.1\r\nX: 0123456789012345678901234567890123456789012345678901\r\n\r\n",
		     431, &small);
	n += (size_t)snprintf(many + n, sizeof(many) - n, "GET / HTTP/1.1\r\n");
	for (int i = 0; i < 101; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "H%d: v\r\n", i);
	snprintf(many + n, sizeof(many) - n, "\r\n");
	expect_error(many, 431, NULL);
	expect_error("GET /\r\n\r\n", 400, NULL);
	expect_error("GET  / HTTP/1.1\r\n\r\n", 400, NULL);
	expect_error("G(T / HTTP/1.1\r\n\r\n", 400, NULL);
	expect_error("GET / HTTP/2.0\r\n\r\n", 400, NULL);
	expect_error("GET /\x01 HTTP/1.1\r\n\r\n", 400, NULL);
	expect_error("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400, NULL);
	expect_error("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400, NULL);
	expect_error("GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400, NULL);
	expect_error("GET / HTTP/1.1\r\nX: a\nY: b\r\n\r\n", 400, NULL);
	expect_error("POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, NULL);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, NULL);
	expect_error("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400, NULL);
	expect_error("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, NULL);
	expect_error("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400, NULL);
	expect_error("POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world", 413, &small);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, NULL);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n", 400, NULL);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n", 400, NULL);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n", 400, NULL);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n", 413, &small);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\n\r\n", 400, NULL);

	struct tbx_http_msg m;
	tbx_http_msg_init(&m, TBX_HTTP_REQUEST, NULL);
	feed_str(&m, "GET / HTTP/1.1\r\nHo", 100);
	CHECK(tbx_http_parse_eof(&m) < 0 && m.state == TBX_HTTP_ERROR);
	tbx_http_msg_free(&m);
	static const char nul[] = "GET / HTTP/1.1\r\nX: a\0b\r\n\r\n";
	tbx_http_msg_init(&m, TBX_HTTP_REQUEST, NULL);
	feed(&m, nul, sizeof(nul) - 1, 100);
	CHECK(m.state == TBX_HTTP_ERROR);
	tbx_http_msg_free(&m);
}

static void test_http_responses(void)
{
	struct tbx_http_msg m;
	const char *r1 = "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}";
	const char *r2 = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
	const char *r3 = "HTTP/1.0 200\r\n\r\nuntil the end";

	tbx_http_msg_init(&m, TBX_HTTP_RESPONSE, NULL);
	feed(&m, r1, strlen(r1), 3);
	CHECK(m.state == TBX_HTTP_DONE && m.status == 201 && strcmp(m.reason, "Created") == 0);
	CHECK(m.body_len == 2);
	tbx_http_msg_reset(&m);
	feed(&m, r2, strlen(r2), 1);
	CHECK(m.state == TBX_HTTP_DONE && m.body_len == 2 && memcmp(m.body, "ok", 2) == 0);
	tbx_http_msg_reset(&m);
	feed(&m, r3, strlen(r3), 4);
	CHECK(m.state == TBX_HTTP_BODY_EOF && m.status == 200 && !m.keep_alive);
	CHECK(tbx_http_parse_eof(&m) == 0 && m.state == TBX_HTTP_DONE && m.body_len == 13);
	tbx_http_msg_reset(&m);
	feed_str(&m, "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", 100);
	CHECK(m.state == TBX_HTTP_DONE && m.body_len == 0);
	tbx_http_msg_reset(&m);
	m.no_body = 1; /* the answer to a HEAD */
	feed_str(&m, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", 100);
	CHECK(m.state == TBX_HTTP_DONE);
	tbx_http_msg_reset(&m);
	feed_str(&m, "HTTP/1.1 20 OK\r\n\r\n", 100);
	CHECK(m.state == TBX_HTTP_ERROR);
	tbx_http_msg_free(&m);
}

static void test_socks5(void)
{
	const uint8_t greeting[] = { 5, 2, 0, 2 };
	const uint8_t auth[] = { 1, 3, 'b', 'o', 'b', 2, 'p', 'w' };
	const uint8_t domain[] = { 5, 1, 0, 3, 14, 'a', 'p', 'i', '.', 's', 't', 'r', 'i', 'p', 'e',
				   '.', 'c', 'o', 'm', 1, 187 };
	const uint8_t v4[] = { 5, 1, 0, 1, 127, 0, 0, 1, 0, 80 };
	const uint8_t v6[] = { 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x1f, 0x90 };
	struct tbx_socks5_greeting g;
	struct tbx_socks5_auth a;
	struct tbx_socks5_request r;
	const char *why = NULL;
	size_t used;
	uint8_t reply[10];

	for (size_t i = 0; i < sizeof(greeting); i++)
		CHECK(tbx_socks5_parse_greeting(greeting, i, &used, &g, &why) == TBX_SOCKS5_MORE);
	CHECK(tbx_socks5_parse_greeting(greeting, sizeof(greeting), &used, &g, &why) == TBX_SOCKS5_OK);
	CHECK(used == 4 && g.offers_userpass && g.offers_none);
	CHECK(tbx_socks5_parse_greeting((const uint8_t *)"\x04\x01", 2, &used, &g, &why) == TBX_SOCKS5_ERROR);
	CHECK(strstr(why, "SOCKS4") != NULL);
	CHECK(tbx_socks5_parse_greeting((const uint8_t *)"\x05\x00", 2, &used, &g, &why) == TBX_SOCKS5_ERROR);

	for (size_t i = 0; i < sizeof(auth); i++)
		CHECK(tbx_socks5_parse_auth(auth, i, &used, &a, &why) == TBX_SOCKS5_MORE);
	CHECK(tbx_socks5_parse_auth(auth, sizeof(auth), &used, &a, &why) == TBX_SOCKS5_OK);
	CHECK(used == 8 && strcmp(a.user, "bob") == 0 && strcmp(a.pass, "pw") == 0);
	CHECK(tbx_socks5_parse_auth((const uint8_t *)"\x01\x01\x00\x00", 4, &used, &a, &why) == TBX_SOCKS5_ERROR);
	CHECK(tbx_socks5_parse_auth((const uint8_t *)"\x05\x01", 2, &used, &a, &why) == TBX_SOCKS5_ERROR);

	for (size_t i = 0; i < sizeof(domain); i++)
		CHECK(tbx_socks5_parse_request(domain, i, &used, &r, &why) == TBX_SOCKS5_MORE);
	CHECK(tbx_socks5_parse_request(domain, sizeof(domain), &used, &r, &why) == TBX_SOCKS5_OK);
	CHECK(used == sizeof(domain) && r.atyp == 3 && strcmp(r.host, "api.stripe.com") == 0 && r.port == 443);
	CHECK(tbx_socks5_parse_request(v4, sizeof(v4), &used, &r, &why) == TBX_SOCKS5_OK);
	CHECK(strcmp(r.host, "127.0.0.1") == 0 && r.port == 80 && r.cmd == TBX_SOCKS5_CMD_CONNECT);
	CHECK(tbx_socks5_parse_request(v6, sizeof(v6), &used, &r, &why) == TBX_SOCKS5_OK);
	CHECK(strcmp(r.host, "::1") == 0 && r.port == 8080);
	CHECK(tbx_socks5_parse_request((const uint8_t *)"\x05\x01\x01\x01", 4, &used, &r, &why) == TBX_SOCKS5_ERROR);
	CHECK(tbx_socks5_parse_request((const uint8_t *)"\x05\x01\x00\x09", 4, &used, &r, &why) == TBX_SOCKS5_ERROR);
	CHECK(tbx_socks5_parse_request((const uint8_t *)"\x05\x01\x00\x03\x00", 5, &used, &r, &why) == TBX_SOCKS5_ERROR);
	CHECK(tbx_socks5_parse_request((const uint8_t *)"\x05\x01\x00\x03\x01 \x00\x50", 8, &used, &r, &why) == TBX_SOCKS5_ERROR);
	CHECK(tbx_socks5_parse_request((const uint8_t *)"\x04", 1, &used, &r, &why) == TBX_SOCKS5_ERROR);
	CHECK(tbx_socks5_reply(reply, TBX_SOCKS5_REP_NOT_ALLOWED) == 10 && reply[0] == 5 && reply[1] == 2 &&
	      reply[3] == 1);
}

static void test_connect(void)
{
	struct tbx_connect_request r;
	struct tbx_http_msg m;
	char host[256], user[64], pass[64];
	uint16_t port;
	const char *why;
	int status;

	CHECK(tbx_authority_parse("API.Stripe.com.:443", host, sizeof(host), &port) == 0);
	CHECK(strcmp(host, "api.stripe.com") == 0 && port == 443);
	CHECK(tbx_authority_parse("[::1]:8443", host, sizeof(host), &port) == 0 && strcmp(host, "::1") == 0);
	CHECK(tbx_authority_parse("10.0.0.1:1", host, sizeof(host), &port) == 0 && port == 1);
	CHECK(tbx_authority_parse("api.stripe.com", host, sizeof(host), &port) < 0);
	CHECK(tbx_authority_parse("api.stripe.com:", host, sizeof(host), &port) < 0);
	CHECK(tbx_authority_parse("api.stripe.com:0", host, sizeof(host), &port) < 0);
	CHECK(tbx_authority_parse("api.stripe.com:65536", host, sizeof(host), &port) < 0);
	CHECK(tbx_authority_parse("api.stripe.com:44x", host, sizeof(host), &port) < 0);
	CHECK(tbx_authority_parse("::1:443", host, sizeof(host), &port) < 0);
	CHECK(tbx_authority_parse("[example.com]:443", host, sizeof(host), &port) < 0);
	CHECK(tbx_authority_parse("bad host:443", host, sizeof(host), &port) < 0);
	CHECK(tbx_authority_parse(":443", host, sizeof(host), &port) < 0);

	CHECK(tbx_basic_auth_parse("Basic c2J4XzE6cHc6Og==", user, sizeof(user), pass, sizeof(pass)) == 0);
	CHECK(strcmp(user, "sbx_1") == 0 && strcmp(pass, "pw::") == 0);
	CHECK(tbx_basic_auth_parse("basic   c2J4XzE6", user, sizeof(user), pass, sizeof(pass)) == 0);
	CHECK(strcmp(user, "sbx_1") == 0 && pass[0] == '\0');
	CHECK(tbx_basic_auth_parse("Bearer abc", user, sizeof(user), pass, sizeof(pass)) < 0);
	CHECK(tbx_basic_auth_parse("Basic !!!", user, sizeof(user), pass, sizeof(pass)) < 0);
	CHECK(tbx_basic_auth_parse("Basic bm9jb2xvbg==", user, sizeof(user), pass, sizeof(pass)) < 0);

	tbx_http_msg_init(&m, TBX_HTTP_REQUEST, NULL);
	feed_str(&m, "CONNECT api.stripe.com:443 HTTP/1.1\r\nProxy-Authorization: Basic c2J4XzE6cHc=\r\n\r\n", 100);
	CHECK(m.state == TBX_HTTP_DONE);
	CHECK(tbx_connect_parse(&m, &r, &status, &why) == 0 && r.has_auth && r.port == 443);
	CHECK(strcmp(r.user, "sbx_1") == 0 && strcmp(r.pass, "pw") == 0);
	tbx_http_msg_reset(&m);
	feed_str(&m, "GET / HTTP/1.1\r\n\r\n", 100);
	CHECK(tbx_connect_parse(&m, &r, &status, &why) < 0 && status == 405);
	tbx_http_msg_reset(&m);
	feed_str(&m, "CONNECT nope HTTP/1.1\r\n\r\n", 100);
	CHECK(tbx_connect_parse(&m, &r, &status, &why) < 0 && status == 400);
	tbx_http_msg_free(&m);
}

static void check_form(const char *in, const char *want_json)
{
	struct json_object *o = NULL, *want = json_tokener_parse(want_json);
	const char *why = NULL;

	CHECK(tbx_form_parse(in, strlen(in), &o, &why) == 0);
	if (!o || !json_object_equal(o, want))
		fprintf(stderr, "  form %s -> %s, wanted %s (%s)\n", in,
			o ? json_object_to_json_string(o) : "(error)", want_json, why ? why : "");
	CHECK(o && json_object_equal(o, want));
	json_object_put(o);
	json_object_put(want);
}

static void test_form(void)
{
	static const char *const bad[] = {
		"a=%zz", "a=%4", "a%00=b", "a=1&a[b]=2", "a[b]=2&a=1", "a[2]=x", "a[]=1&a[x]=2",
		"[a]=1", "a[b=1", "a]b=1", "a[0]=x&a[0][y]=z", "a[][][][][][][][][]=deep",
	};
	struct json_object *o;
	const char *why;

	check_form("", "{}");
	check_form("a=1&b=two+words&c=%2F%26%3D", "{\"a\":\"1\",\"b\":\"two words\",\"c\":\"/&=\"}");
	check_form("&&a=&b", "{\"a\":\"\",\"b\":\"\"}");
	check_form("a=1&a=2", "{\"a\":\"2\"}");
	check_form("metadata[plan]=pro&metadata[seats]=3", "{\"metadata\":{\"plan\":\"pro\",\"seats\":\"3\"}}");
	check_form("metadata%5Bplan%5D=pro", "{\"metadata\":{\"plan\":\"pro\"}}");
	check_form("expand[]=customer&expand[]=latest_charge", "{\"expand\":[\"customer\",\"latest_charge\"]}");
	check_form("expand[0]=customer&expand[1]=latest_charge", "{\"expand\":[\"customer\",\"latest_charge\"]}");
	check_form("items[0][price]=p1&items[0][quantity]=2&items[1][price]=p2",
		   "{\"items\":[{\"price\":\"p1\",\"quantity\":\"2\"},{\"price\":\"p2\"}]}");
	check_form("a[b][c][d]=x", "{\"a\":{\"b\":{\"c\":{\"d\":\"x\"}}}}");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = NULL;
		why = NULL;
		CHECK(tbx_form_parse(bad[i], strlen(bad[i]), &o, &why) < 0 && why && !o);
		if (o) {
			fprintf(stderr, "  form %s was accepted: %s\n", bad[i], json_object_to_json_string(o));
			json_object_put(o);
		}
	}
	char *d = tbx_url_decode("a%41+b", 6, 0);
	CHECK(d && strcmp(d, "aA+b") == 0);
	free(d);
}

static void test_hostnames(void)
{
	static const char *const good[][2] = {
		{ "API.Stripe.COM", "api.stripe.com" }, { "api.stripe.com.", "api.stripe.com" },
		{ "a-b_c.d9", "a-b_c.d9" }, { "127.0.0.1", "127.0.0.1" }, { "::1", "::1" },
		{ "localhost", "localhost" },
	};
	static const char *const bad[] = { "", ".", "a..b", "-a.b", "a-.b", "a b", "a/b", "a:b", "ä.de",
					   "a.b-", "..", "x\ty" };
	char buf[300];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", good[i][0]);
		CHECK(tbx_hostname_canon(buf) == 0 && strcmp(buf, good[i][1]) == 0);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", bad[i]);
		CHECK(tbx_hostname_canon(buf) < 0);
	}
	memset(buf, 'a', 64);
	buf[64] = '\0';
	CHECK(tbx_hostname_canon(buf) < 0); /* a 64-byte label */
	CHECK(tbx_hostname_ip_family("10.1.2.3") == 4 && tbx_hostname_ip_family("fe80::1") == 6 &&
	      tbx_hostname_ip_family("example.com") == 0);
}

int main(void)
{
	test_http_requests();
	test_http_errors();
	test_http_responses();
	test_socks5();
	test_connect();
	test_form();
	test_hostnames();
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
