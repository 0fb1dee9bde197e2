/* SPDX-License-Identifier: MIT */
/*
 * Connect streaming envelopes: flags(1) | length(4, big-endian) | message.
 * Envelopes can span or share reads, so the reader buffers until whole.
 */
#ifndef TBX_ENVD_ENVELOPE_H
#define TBX_ENVD_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#define TBX_ENVD_FLAG_COMPRESSED 0x01
#define TBX_ENVD_FLAG_END_STREAM 0x02
#define TBX_ENVD_ENVELOPE_HEADER 5

/* Write the 5-byte header for a message of \p len bytes. */
void tbx_envd_envelope_header(unsigned char hdr[TBX_ENVD_ENVELOPE_HEADER], uint8_t flags,
			      uint32_t len);

struct tbx_envd_reader {
	unsigned char *buf;
	size_t len;      /* bytes held */
	size_t consumed; /* bytes of buf already handed out */
	size_t cap;
	size_t max_message; /* larger envelopes are a protocol error */
};

void tbx_envd_reader_init(struct tbx_envd_reader *r, size_t max_message);
void tbx_envd_reader_release(struct tbx_envd_reader *r);
/* Append bytes; -1 when out of memory. */
int tbx_envd_reader_feed(struct tbx_envd_reader *r, const void *data, size_t len);
/*
 * 1 and the next envelope (valid until the next feed or next call), 0 when
 * more bytes are needed, -1 when the envelope is larger than max_message.
 */
int tbx_envd_reader_next(struct tbx_envd_reader *r, uint8_t *flags, const char **msg,
			 size_t *msg_len);
/* Bytes held that do not yet make a whole envelope. */
size_t tbx_envd_reader_pending(const struct tbx_envd_reader *r);

#endif
