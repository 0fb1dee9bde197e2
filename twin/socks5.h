/* SPDX-License-Identifier: MIT */
/*
 * SOCKS5 (RFC 1928) with username/password authentication (RFC 1929), as
 * pure functions over the bytes received so far: each phase is small and
 * bounded, so the caller re-parses its buffer until a phase is complete.
 */
#ifndef TBX_SOCKS5_H
#define TBX_SOCKS5_H

#include <stddef.h>
#include <stdint.h>

enum {
	TBX_SOCKS5_MORE = 0,   /* not enough bytes yet */
	TBX_SOCKS5_OK = 1,     /* a phase is complete; *used says how many bytes it took */
	TBX_SOCKS5_ERROR = -1, /* malformed; *why says how */
};

/* Reply codes (RFC 1928 §6). */
enum {
	TBX_SOCKS5_REP_SUCCEEDED = 0x00,
	TBX_SOCKS5_REP_FAILURE = 0x01,
	TBX_SOCKS5_REP_NOT_ALLOWED = 0x02,
	TBX_SOCKS5_REP_NET_UNREACHABLE = 0x03,
	TBX_SOCKS5_REP_HOST_UNREACHABLE = 0x04,
	TBX_SOCKS5_REP_REFUSED = 0x05,
	TBX_SOCKS5_REP_TTL_EXPIRED = 0x06,
	TBX_SOCKS5_REP_CMD_UNSUPPORTED = 0x07,
	TBX_SOCKS5_REP_ATYP_UNSUPPORTED = 0x08,
};

#define TBX_SOCKS5_CMD_CONNECT 0x01
#define TBX_SOCKS5_CMD_BIND 0x02
#define TBX_SOCKS5_CMD_UDP_ASSOCIATE 0x03

struct tbx_socks5_greeting {
	int offers_userpass; /* method 0x02 */
	int offers_none;     /* method 0x00 */
};

struct tbx_socks5_auth {
	char user[256];
	char pass[256];
};

struct tbx_socks5_request {
	uint8_t cmd;
	uint8_t atyp;   /* 1 IPv4, 3 domain name, 4 IPv6 */
	char host[256]; /* the domain name, or the address as text */
	uint16_t port;
};

/* VER NMETHODS METHODS... */
int tbx_socks5_parse_greeting(const uint8_t *buf, size_t len, size_t *used,
			      struct tbx_socks5_greeting *out, const char **why);
/* VER(1) ULEN UNAME PLEN PASSWD; names with NUL bytes are refused. */
int tbx_socks5_parse_auth(const uint8_t *buf, size_t len, size_t *used,
			  struct tbx_socks5_auth *out, const char **why);
/* VER CMD RSV ATYP DST.ADDR DST.PORT; any command parses, the caller decides. */
int tbx_socks5_parse_request(const uint8_t *buf, size_t len, size_t *used,
			     struct tbx_socks5_request *out, const char **why);
/* A reply with a zero IPv4 bound address; writes 10 bytes, returns 10. */
size_t tbx_socks5_reply(uint8_t out[10], uint8_t rep);

#endif
