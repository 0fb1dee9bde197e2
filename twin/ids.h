/* SPDX-License-Identifier: MIT */
/* Random identifiers and secrets: Stripe-like ids (cus_...), twin ids, passwords. */
#ifndef TBX_IDS_H
#define TBX_IDS_H

#include <stddef.h>

/* prefix + n random base62 characters into out (size >= strlen(prefix) + n + 1). */
void tbx_id_random(char *out, size_t out_size, const char *prefix, size_t n);
/* Constant-time comparison of two NUL-terminated secrets: 1 if equal. */
int tbx_secret_equal(const char *a, const char *b);

#endif
