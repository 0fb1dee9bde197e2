/* SPDX-License-Identifier: MIT */
/* UTF-8 validation and repair for text that becomes JSON (see utf8.h). */
#include "utf8.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

size_t tbx_utf8_seq_len(const unsigned char *s, size_t avail)
{
	size_t need;
	unsigned cp;

	if (avail == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		need = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		need = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		need = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (avail < need)
		return 0;
	for (size_t i = 1; i < need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are invalid. */
	if ((need == 3 && cp < 0x800) || (need == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return need;
}

char *tbx_utf8_sanitize(const char *data, size_t len, size_t *len_out)
{
	const unsigned char *s = (const unsigned char *)data;
	char *out = malloc(len * 3 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len;) {
		size_t n = tbx_utf8_seq_len(s + i, len - i);
		if (n == 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(o, s + i, n);
			o += n;
			i += n;
		}
	}
	*o = '\0';
	if (len_out)
		*len_out = (size_t)(o - out);
	return out;
}

struct json_object *tbx_json_string_utf8(const char *data, size_t len)
{
	size_t n;
	char *clean = tbx_utf8_sanitize(data, len, &n);
	struct json_object *o;

	if (!clean)
		return NULL;
	o = json_object_new_string_len(clean, (int)n);
	free(clean);
	return o;
}
