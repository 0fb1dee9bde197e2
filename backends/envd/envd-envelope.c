/* SPDX-License-Identifier: MIT */
/* Connect envelope framing, both directions. */
#include "envd-envelope.h"

#include <stdlib.h>
#include <string.h>

void tbx_envd_envelope_header(unsigned char hdr[TBX_ENVD_ENVELOPE_HEADER], uint8_t flags,
			      uint32_t len)
{
	hdr[0] = flags;
	hdr[1] = (unsigned char)(len >> 24);
	hdr[2] = (unsigned char)(len >> 16);
	hdr[3] = (unsigned char)(len >> 8);
	hdr[4] = (unsigned char)len;
}

void tbx_envd_reader_init(struct tbx_envd_reader *r, size_t max_message)
{
	memset(r, 0, sizeof(*r));
	r->max_message = max_message;
}

void tbx_envd_reader_release(struct tbx_envd_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

int tbx_envd_reader_feed(struct tbx_envd_reader *r, const void *data, size_t len)
{
	/* Drop what was handed out before growing, so the buffer stays small. */
	if (r->consumed) {
		memmove(r->buf, r->buf + r->consumed, r->len - r->consumed);
		r->len -= r->consumed;
		r->consumed = 0;
	}
	if (r->len + len > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		unsigned char *nb;

		while (cap < r->len + len)
			cap *= 2;
		nb = realloc(r->buf, cap);
		if (!nb)
			return -1;
		r->buf = nb;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, data, len);
	r->len += len;
	return 0;
}

int tbx_envd_reader_next(struct tbx_envd_reader *r, uint8_t *flags, const char **msg,
			 size_t *msg_len)
{
	const unsigned char *p = r->buf + r->consumed;
	size_t avail = r->len - r->consumed;
	uint32_t n;

	if (avail < TBX_ENVD_ENVELOPE_HEADER)
		return 0;
	n = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
	if (n > r->max_message)
		return -1;
	if (avail - TBX_ENVD_ENVELOPE_HEADER < n)
		return 0;
	*flags = p[0];
	*msg = (const char *)p + TBX_ENVD_ENVELOPE_HEADER;
	*msg_len = n;
	r->consumed += TBX_ENVD_ENVELOPE_HEADER + n;
	return 1;
}

size_t tbx_envd_reader_pending(const struct tbx_envd_reader *r)
{
	return r->len - r->consumed;
}
