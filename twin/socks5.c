/* SPDX-License-Identifier: MIT */
/* SOCKS5 greeting, authentication and request parsing (see socks5.h). */
#include "socks5.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static int error(const char **why, const char *reason)
{
	*why = reason;
	return TBX_SOCKS5_ERROR;
}

int tbx_socks5_parse_greeting(const uint8_t *buf, size_t len, size_t *used,
			      struct tbx_socks5_greeting *out, const char **why)
{
	size_t n;

	if (len < 1)
		return TBX_SOCKS5_MORE;
	if (buf[0] != 0x05)
		return error(why, buf[0] == 0x04 ? "SOCKS4 is not supported" : "not a SOCKS5 greeting");
	if (len < 2)
		return TBX_SOCKS5_MORE;
	n = buf[1];
	if (n == 0)
		return error(why, "SOCKS5 greeting offers no methods");
	if (len < 2 + n)
		return TBX_SOCKS5_MORE;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		if (buf[2 + i] == 0x02)
			out->offers_userpass = 1;
		else if (buf[2 + i] == 0x00)
			out->offers_none = 1;
	}
	*used = 2 + n;
	return TBX_SOCKS5_OK;
}

static int copy_field(const uint8_t *src, size_t n, char *dst)
{
	if (memchr(src, '\0', n))
		return -1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

int tbx_socks5_parse_auth(const uint8_t *buf, size_t len, size_t *used,
			  struct tbx_socks5_auth *out, const char **why)
{
	size_t ulen, plen;

	if (len < 1)
		return TBX_SOCKS5_MORE;
	if (buf[0] != 0x01)
		return error(why, "bad username/password subnegotiation version");
	if (len < 2)
		return TBX_SOCKS5_MORE;
	ulen = buf[1];
	if (len < 3 + ulen)
		return TBX_SOCKS5_MORE;
	plen = buf[2 + ulen];
	if (len < 3 + ulen + plen)
		return TBX_SOCKS5_MORE;
	if (copy_field(buf + 2, ulen, out->user) < 0 || copy_field(buf + 3 + ulen, plen, out->pass) < 0)
		return error(why, "NUL byte in SOCKS5 credentials");
	*used = 3 + ulen + plen;
	return TBX_SOCKS5_OK;
}

int tbx_socks5_parse_request(const uint8_t *buf, size_t len, size_t *used,
			     struct tbx_socks5_request *out, const char **why)
{
	size_t addr_len, off = 4;

	if (len < 4)
		return len >= 1 && buf[0] != 0x05 ? error(why, "bad SOCKS5 request version")
						   : TBX_SOCKS5_MORE;
	if (buf[0] != 0x05)
		return error(why, "bad SOCKS5 request version");
	if (buf[2] != 0x00)
		return error(why, "nonzero reserved byte in SOCKS5 request");
	memset(out, 0, sizeof(*out));
	out->cmd = buf[1];
	out->atyp = buf[3];
	switch (buf[3]) {
	case 0x01:
		addr_len = 4;
		break;
	case 0x04:
		addr_len = 16;
		break;
	case 0x03:
		if (len < 5)
			return TBX_SOCKS5_MORE;
		addr_len = buf[4];
		off = 5;
		if (addr_len == 0)
			return error(why, "empty domain name in SOCKS5 request");
		break;
	default:
		return error(why, "unknown SOCKS5 address type");
	}
	if (len < off + addr_len + 2)
		return TBX_SOCKS5_MORE;
	if (buf[3] == 0x03) {
		for (size_t i = 0; i < addr_len; i++)
			if (buf[off + i] <= 0x20 || buf[off + i] >= 0x7f)
				return error(why, "invalid byte in SOCKS5 domain name");
		memcpy(out->host, buf + off, addr_len);
		out->host[addr_len] = '\0';
	} else if (!inet_ntop(buf[3] == 0x01 ? AF_INET : AF_INET6, buf + off, out->host,
			      sizeof(out->host))) {
		return error(why, "bad SOCKS5 address");
	}
	/* Port 0 is legitimate in UDP ASSOCIATE; the caller judges it per command. */
	out->port = (uint16_t)(buf[off + addr_len] << 8 | buf[off + addr_len + 1]);
	*used = off + addr_len + 2;
	return TBX_SOCKS5_OK;
}

size_t tbx_socks5_reply(uint8_t out[10], uint8_t rep)
{
	static const uint8_t tail[] = { 0x00, 0x01, 0, 0, 0, 0, 0, 0 };

	out[0] = 0x05;
	out[1] = rep;
	memcpy(out + 2, tail, sizeof(tail));
	return 10;
}
