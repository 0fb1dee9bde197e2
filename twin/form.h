/* SPDX-License-Identifier: MIT */
/*
 * application/x-www-form-urlencoded bodies and query strings, with the
 * nested keys Stripe's clients send (metadata[plan]=pro, items[0][price]=x,
 * expand[]=customer), decoded into a JSON tree of strings. Pure functions.
 */
#ifndef TBX_FORM_H
#define TBX_FORM_H

#include <stddef.h>

struct json_object;

/*
 * Percent-decode in[0..len) into a malloc'd NUL-terminated string; '+' is a
 * space when plus_is_space. Returns NULL on a malformed escape or a NUL byte.
 */
char *tbx_url_decode(const char *in, size_t len, int plus_is_space);
/*
 * Decode a form body or query string into a new JSON object (out). Keys with
 * brackets nest: "a[b]" is an object member, "a[0]" / "a[]" array elements.
 * Returns 0, or -1 with *why (a static string) for malformed input or a key
 * used both as a value and as a container.
 */
int tbx_form_parse(const char *data, size_t len, struct json_object **out, const char **why);

#endif
