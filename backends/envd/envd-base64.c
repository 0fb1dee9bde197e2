/* SPDX-License-Identifier: MIT */
/* Base64 for envd bytes fields, on top of OpenSSL's block coder. */
#include "envd-base64.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

char *tbx_envd_base64_encode(const void *data, size_t len)
{
	size_t cap = 4 * ((len + 2) / 3) + 1;
	char *out;

	if (len > (size_t)0x7ffffffe / 4 * 3)
		return NULL;
	out = malloc(cap);
	if (!out)
		return NULL;
	EVP_EncodeBlock((unsigned char *)out, data, (int)len);
	return out;
}

unsigned char *tbx_envd_base64_decode(const char *text, size_t len, size_t *len_out)
{
	char *norm;
	unsigned char *out;
	size_t n = 0, padded, pad = 0;
	int got;

	if (len > 0x7ffffff0)
		return NULL;
	/*
	 * EVP_DecodeBlock wants the standard alphabet and whole quads, so
	 * normalise url-safe characters and missing padding first; whitespace
	 * never appears inside a JSON base64 string, so it is refused.
	 */
	norm = malloc(len + 4);
	if (!norm)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (c == '-')
			c = '+';
		else if (c == '_')
			c = '/';
		else if (c == '=')
			break;
		else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			   (c >= '0' && c <= '9') || c == '+' || c == '/')) {
			free(norm);
			return NULL;
		}
		norm[n++] = c;
	}
	if (n % 4 == 1) {
		free(norm);
		return NULL;
	}
	padded = n;
	while (padded % 4) {
		norm[padded++] = '=';
		pad++;
	}
	out = malloc(padded / 4 * 3 + 1);
	if (!out) {
		free(norm);
		return NULL;
	}
	got = padded ? EVP_DecodeBlock(out, (unsigned char *)norm, (int)padded) : 0;
	free(norm);
	if (got < 0) {
		free(out);
		return NULL;
	}
	/* EVP_DecodeBlock counts the padding as zero bytes; drop them. */
	*len_out = (size_t)got - pad;
	out[*len_out] = '\0';
	return out;
}
