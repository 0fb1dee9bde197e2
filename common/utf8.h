/* SPDX-License-Identifier: MIT */
/*
 * JSON strings must be UTF-8, sandbox output need not be: invalid
 * sequences become U+FFFD so every frame stays parseable.
 */
#ifndef TBX_UTF8_H
#define TBX_UTF8_H

#include <stddef.h>

struct json_object;

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid/truncated. */
size_t tbx_utf8_seq_len(const unsigned char *s, size_t avail);
/* A malloc'd NUL-terminated copy of data with invalid sequences replaced. */
char *tbx_utf8_sanitize(const char *data, size_t len, size_t *len_out);
/* A JSON string of data, sanitized. */
struct json_object *tbx_json_string_utf8(const char *data, size_t len);

#endif
