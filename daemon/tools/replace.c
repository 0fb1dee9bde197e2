/* SPDX-License-Identifier: MIT */
/*
 * Literal oldString → newString replacement for edit and multiedit. Unlike
 * String.replace (the upstream plugin's bug), "$&" and friends in newString
 * are plain text, and several matches are an error unless replaceAll.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "tools-priv.h"

static const char *find(const char *hay, size_t hay_len, const char *needle, size_t n)
{
	return memmem(hay, hay_len, needle, n);
}

/* s with every "\r\n" made "\n" and then every "\n" made "\r\n". */
static char *to_crlf(const char *s, size_t len, size_t *out_len)
{
	struct tbx_buf b;

	tbx_buf_init(&b);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n')
			continue;
		if (s[i] == '\n')
			tbx_buf_add(&b, "\r\n", 2);
		else
			tbx_buf_add(&b, s + i, 1);
	}
	*out_len = b.len;
	return tbx_buf_steal(&b);
}

int tbx_replace_apply(const char *content, size_t len, const struct tbx_replace *r, char **out,
		      size_t *out_len, size_t *count)
{
	const char *old_s = r->old_str, *new_s = r->new_str, *p;
	size_t old_n = r->old_len, new_n = r->new_len, n = 0;
	char *old_crlf = NULL, *new_crlf = NULL;
	struct tbx_buf b;
	int rc = 0;

	if (old_n == new_n && memcmp(old_s, new_s, old_n) == 0)
		return tbx_error_set(TBX_EINVAL,
				     "No changes to apply: oldString and newString are identical.");
	if (old_n == 0) {
		/* OpenCode: an empty oldString means "the file is now newString". */
		*out = malloc(new_n + 1);
		if (!*out)
			return tbx_error_set(TBX_ENOMEM, "out of memory");
		memcpy(*out, new_s, new_n);
		(*out)[new_n] = '\0';
		*out_len = new_n;
		*count = 1;
		return 0;
	}
	/* A CRLF file gets CRLF strings, as OpenCode's edit converts them. */
	if (find(content, len, "\r\n", 2)) {
		old_crlf = to_crlf(old_s, old_n, &old_n);
		new_crlf = to_crlf(new_s, new_n, &new_n);
		if (!old_crlf || !new_crlf) {
			rc = tbx_error_set(TBX_ENOMEM, "out of memory");
			goto cleanup;
		}
		old_s = old_crlf;
		new_s = new_crlf;
	}
	for (p = content; (p = find(p, len - (size_t)(p - content), old_s, old_n)); p += old_n)
		n++;
	if (n == 0) {
		rc = tbx_error_set(TBX_EINVAL,
				   "Could not find oldString in the file. It must match exactly, "
				   "including whitespace, indentation, and line endings.");
		goto cleanup;
	}
	if (n > 1 && !r->all) {
		rc = tbx_error_set(TBX_EINVAL, "Found multiple matches for oldString. Provide more "
					       "surrounding context to make the match unique.");
		goto cleanup;
	}
	tbx_buf_init(&b);
	for (const char *at = content;;) {
		const char *hit = find(at, len - (size_t)(at - content), old_s, old_n);
		if (!hit) {
			tbx_buf_add(&b, at, len - (size_t)(at - content));
			break;
		}
		tbx_buf_add(&b, at, (size_t)(hit - at));
		tbx_buf_add(&b, new_s, new_n);
		at = hit + old_n;
	}
	*out_len = b.len;
	*out = tbx_buf_steal(&b);
	if (!*out) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto cleanup;
	}
	*count = n;
cleanup:
	free(old_crlf);
	free(new_crlf);
	return rc;
}
