/* SPDX-License-Identifier: MIT */
/* Random ids and secret comparison (see ids.h). */
#include "ids.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

void tbx_id_random(char *out, size_t out_size, const char *prefix, size_t n)
{
	size_t p = strlen(prefix), i = 0;
	unsigned char raw[64];

	if (p + n + 1 > out_size || n > sizeof(raw))
		abort();
	memcpy(out, prefix, p);
	while (i < n) {
		if (RAND_bytes(raw, sizeof(raw)) != 1)
			abort(); /* no randomness means no safe ids: never carry on */
		/* Rejection sampling keeps every character equally likely. */
		for (size_t j = 0; j < sizeof(raw) && i < n; j++)
			if (raw[j] < 248)
				out[p + i++] = alphabet[raw[j] % 62];
	}
	out[p + n] = '\0';
}

int tbx_secret_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	return la == lb && CRYPTO_memcmp(a, b, la) == 0;
}
