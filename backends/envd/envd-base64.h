/* SPDX-License-Identifier: MIT */
/*
 * Base64 for the bytes fields of envd's proto3 JSON (standard alphabet with
 * padding on the wire; readers also take url-safe and unpadded input).
 */
#ifndef TBX_ENVD_BASE64_H
#define TBX_ENVD_BASE64_H

#include <stddef.h>

/* Encode \p len bytes; returns a malloc'd NUL-terminated string or NULL. */
char *tbx_envd_base64_encode(const void *data, size_t len);
/*
 * Decode \p len characters into a malloc'd buffer (NUL-terminated for
 * convenience); returns NULL on bad input or out of memory.
 */
unsigned char *tbx_envd_base64_decode(const char *text, size_t len, size_t *len_out);

#endif
