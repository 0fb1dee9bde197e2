/* SPDX-License-Identifier: MIT */
/* Form and query decoding with nested keys (see form.h). */
#include "form.h"

#include <ctype.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 2000
#define MAX_DEPTH 8
#define MAX_INDEX 10000

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

char *tbx_url_decode(const char *in, size_t len, int plus_is_space)
{
	char *out = malloc(len + 1);
	size_t o = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		char c = in[i];
		if (c == '%') {
			int hi, lo;
			if (i + 2 >= len) {
				free(out);
				return NULL;
			}
			hi = hexval(in[i + 1]);
			lo = hexval(in[i + 2]);
			if (hi < 0 || lo < 0) {
				free(out);
				return NULL;
			}
			c = (char)(hi * 16 + lo);
			i += 2;
		} else if (c == '+' && plus_is_space) {
			c = ' ';
		}
		if (c == '\0') {
			free(out);
			return NULL;
		}
		out[o++] = c;
	}
	out[o] = '\0';
	return out;
}

/* "a[b][0][]" -> segs {"a","b","0",""}; NULs are written into key. */
static int split_key(char *key, char **segs, int *n)
{
	char *p = strchr(key, '[');

	*n = 0;
	segs[(*n)++] = key;
	if (!p)
		return key[0] && !strchr(key, ']') ? 0 : -1;
	if (p == key)
		return -1;
	while (*p) {
		char *close;
		if (*p != '[' || !(close = strchr(p, ']')) || *n == MAX_DEPTH)
			return -1;
		*p = '\0';
		*close = '\0';
		segs[(*n)++] = p + 1;
		p = close + 1;
	}
	return 0;
}

static int is_index(const char *s)
{
	if (!*s || strlen(s) > 5)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* Put value at segs[0..n) under root. */
static int place(struct json_object *root, char **segs, int n, const char *value, const char **why)
{
	struct json_object *cur = root;

	for (int i = 0; i < n; i++) {
		int last = i == n - 1;
		json_type want = last ? json_type_string
				      : (segs[i + 1][0] == '\0' || is_index(segs[i + 1]) ? json_type_array
										  : json_type_object);
		struct json_object *child = NULL, *made;
		size_t index = 0;

		if (json_object_is_type(cur, json_type_object)) {
			if (!segs[i][0]) {
				*why = "empty key in nested parameter";
				return -1;
			}
			json_object_object_get_ex(cur, segs[i], &child);
		} else {
			size_t len = json_object_array_length(cur);
			if (segs[i][0] == '\0') {
				index = len;
			} else if (is_index(segs[i]) && (index = strtoul(segs[i], NULL, 10)) <= MAX_INDEX) {
				if (index > len) {
					*why = "array index out of order in nested parameter";
					return -1;
				}
			} else {
				*why = "non-numeric index for an array parameter";
				return -1;
			}
			if (index < len)
				child = json_object_array_get_idx(cur, index);
		}
		if (child && (last ? !json_object_is_type(child, json_type_string)
				   : !json_object_is_type(child, want))) {
			*why = "parameter used both as a value and as a nested object";
			return -1;
		}
		if (child && !last) {
			cur = child;
			continue;
		}
		made = last ? json_object_new_string(value)
			    : want == json_type_array ? json_object_new_array() : json_object_new_object();
		if (!made) {
			*why = "out of memory";
			return -1;
		}
		if (json_object_is_type(cur, json_type_object))
			json_object_object_add(cur, segs[i], made);
		else if (index < json_object_array_length(cur))
			json_object_array_put_idx(cur, index, made);
		else
			json_object_array_add(cur, made);
		cur = made;
	}
	return 0;
}

int tbx_form_parse(const char *data, size_t len, struct json_object **out, const char **why)
{
	struct json_object *root = json_object_new_object();
	size_t pos = 0;
	int count = 0;

	if (!root) {
		*why = "out of memory";
		return -1;
	}
	while (pos < len) {
		const char *amp = memchr(data + pos, '&', len - pos);
		size_t end = amp ? (size_t)(amp - data) : len;
		const char *eq = memchr(data + pos, '=', end - pos);
		size_t klen = eq ? (size_t)(eq - data) - pos : end - pos;
		char *key, *value, *segs[MAX_DEPTH];
		int nsegs, rc;

		if (end == pos) {
			pos = end + 1;
			continue;
		}
		if (++count > MAX_PARAMS) {
			*why = "too many parameters";
			goto fail;
		}
		key = tbx_url_decode(data + pos, klen, 1);
		value = eq ? tbx_url_decode(eq + 1, end - (size_t)(eq + 1 - data), 1) : strdup("");
		if (!key || !value) {
			free(key);
			free(value);
			*why = "malformed percent-encoding";
			goto fail;
		}
		rc = split_key(key, segs, &nsegs);
		if (rc < 0)
			*why = "malformed nested parameter name";
		else
			rc = place(root, segs, nsegs, value, why);
		free(key);
		free(value);
		if (rc < 0)
			goto fail;
		pos = end + 1;
	}
	*out = root;
	return 0;
fail:
	json_object_put(root);
	return -1;
}
