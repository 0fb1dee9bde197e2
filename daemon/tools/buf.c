/* SPDX-License-Identifier: MIT */
/* A growable, always NUL-terminated byte buffer for building tool output. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools-priv.h"

void tbx_buf_init(struct tbx_buf *b)
{
	memset(b, 0, sizeof(*b));
}

static bool buf_reserve(struct tbx_buf *b, size_t extra)
{
	size_t want, cap;
	char *p;

	if (b->failed)
		return false;
	if (extra > SIZE_MAX - b->len - 1) {
		b->failed = true;
		return false;
	}
	want = b->len + extra + 1;
	if (want <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->failed = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void tbx_buf_add(struct tbx_buf *b, const void *data, size_t len)
{
	if (!buf_reserve(b, len))
		return;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void tbx_buf_adds(struct tbx_buf *b, const char *s)
{
	tbx_buf_add(b, s, strlen(s));
}

void tbx_buf_printf(struct tbx_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = true;
		return;
	}
	if (!buf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *tbx_buf_steal(struct tbx_buf *b)
{
	char *p;

	if (!buf_reserve(b, 0)) {
		tbx_buf_free(b);
		return NULL;
	}
	/* An empty buffer may never have been written to. */
	b->data[b->len] = '\0';
	p = b->data;
	tbx_buf_init(b);
	return p;
}

void tbx_buf_free(struct tbx_buf *b)
{
	free(b->data);
	tbx_buf_init(b);
}
