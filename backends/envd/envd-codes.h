/* SPDX-License-Identifier: MIT */
/*
 * Connect error codes (PROTOCOL.md §2.3): their HTTP statuses, and what they
 * mean as twinbox statuses.
 */
#ifndef TBX_ENVD_CODES_H
#define TBX_ENVD_CODES_H

/* The tbx_status a Connect error code stands for (unknown codes → TBX_EIO). */
int tbx_envd_code_status(const char *code);
/* The HTTP status a Connect server answers a unary call failing with \p code. */
int tbx_envd_code_http(const char *code);
/* The Connect code a client assumes when a unary error body has none. */
const char *tbx_envd_code_from_http(int http_status);

#endif
