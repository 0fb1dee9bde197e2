/* SPDX-License-Identifier: MIT */
/*
 * A small unified diff for edit metadata: the changed middle between the
 * common leading and trailing lines, as one hunk with three lines of context,
 * laid out like jsdiff's createTwoFilesPatch (what OpenCode shows).
 */
#include <stdlib.h>
#include <string.h>

#include "tools-priv.h"

#define DIFF_CONTEXT 3

struct line {
	const char *s;
	size_t n;
};

struct lines {
	struct line *v;
	size_t n;
	bool final_newline;
};

static bool split(const char *text, size_t len, struct lines *out)
{
	size_t cap = 16;

	out->n = 0;
	out->final_newline = len == 0 || text[len - 1] == '\n';
	out->v = malloc(cap * sizeof(*out->v));
	if (!out->v)
		return false;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;

		if (out->n == cap) {
			struct line *v = realloc(out->v, (cap *= 2) * sizeof(*v));
			if (!v)
				return false;
			out->v = v;
		}
		out->v[out->n].s = text + i;
		out->v[out->n].n = end - i;
		out->n++;
		i = end + 1;
	}
	return true;
}

static bool line_eq(const struct line *a, const struct line *b)
{
	return a->n == b->n && memcmp(a->s, b->s, a->n) == 0;
}

static void emit(struct tbx_buf *b, char mark, const struct lines *ls, size_t i)
{
	tbx_buf_add(b, &mark, 1);
	tbx_buf_add(b, ls->v[i].s, ls->v[i].n);
	tbx_buf_adds(b, "\n");
	if (i == ls->n - 1 && !ls->final_newline)
		tbx_buf_adds(b, "\\ No newline at end of file\n");
}

char *tbx_diff_unified(const char *path, const char *a, size_t a_len, const char *b,
		       size_t b_len, size_t *added, size_t *removed)
{
	struct lines la = {0}, lb = {0};
	struct tbx_buf out;
	size_t pre = 0, suf = 0, start, a_end, b_end;
	char *res = NULL;

	*added = *removed = 0;
	tbx_buf_init(&out);
	tbx_buf_printf(&out, "Index: %s\n", path);
	tbx_buf_adds(&out, "===================================================================\n");
	tbx_buf_printf(&out, "--- %s\n+++ %s\n", path, path);
	if (!split(a, a_len, &la) || !split(b, b_len, &lb))
		goto cleanup;
	while (pre < la.n && pre < lb.n && line_eq(&la.v[pre], &lb.v[pre]))
		pre++;
	while (suf < la.n - pre && suf < lb.n - pre &&
	       line_eq(&la.v[la.n - 1 - suf], &lb.v[lb.n - 1 - suf]))
		suf++;
	/* A differing final newline makes the last line differ too. */
	if (suf > 0 && la.final_newline != lb.final_newline)
		suf--;
	if (pre == la.n && pre == lb.n && la.final_newline == lb.final_newline) {
		res = tbx_buf_steal(&out);
		goto cleanup;
	}
	start = pre > DIFF_CONTEXT ? pre - DIFF_CONTEXT : 0;
	a_end = la.n - suf + (suf < DIFF_CONTEXT ? suf : DIFF_CONTEXT);
	b_end = lb.n - suf + (suf < DIFF_CONTEXT ? suf : DIFF_CONTEXT);
	tbx_buf_printf(&out, "@@ -%zu,%zu +%zu,%zu @@\n", a_end > start ? start + 1 : start,
		       a_end - start, b_end > start ? start + 1 : start, b_end - start);
	for (size_t i = start; i < pre; i++)
		emit(&out, ' ', &la, i);
	for (size_t i = pre; i < la.n - suf; i++, (*removed)++)
		emit(&out, '-', &la, i);
	for (size_t i = pre; i < lb.n - suf; i++, (*added)++)
		emit(&out, '+', &lb, i);
	for (size_t i = la.n - suf; i < a_end; i++)
		emit(&out, ' ', &la, i);
	res = tbx_buf_steal(&out);
cleanup:
	tbx_buf_free(&out);
	free(la.v);
	free(lb.v);
	return res;
}
