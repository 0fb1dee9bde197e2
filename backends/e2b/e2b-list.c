/* SPDX-License-Identifier: MIT */
/* E2B engine: list sandboxes by label (E2B metadata), following X-Next-Token pages. */
#define _GNU_SOURCE
#include "e2b.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define E2B_LIST_MAX_PAGES 1000

/* Append \p s as it is to the string in *buf. */
static int e2b_append(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);

	if (*len + n + 1 > *cap) {
		size_t ncap = *cap ? *cap : 256;
		char *nb;

		while (ncap < *len + n + 1)
			ncap *= 2;
		if (!(nb = realloc(*buf, ncap)))
			return -1;
		*buf = nb;
		*cap = ncap;
	}
	memcpy(*buf + *len, s, n + 1);
	*len += n;
	return 0;
}

/* Append \p s percent-encoded (libcurl's escaping) to the string in *buf. */
static int e2b_escape(const char *s, char **buf, size_t *len, size_t *cap)
{
	char *esc = curl_easy_escape(NULL, s, 0);
	size_t n = esc ? strlen(esc) : 0;

	if (!esc)
		return -1;
	if (*len + n + 1 > *cap) {
		size_t ncap = *cap ? *cap : 256;
		char *nb;

		while (ncap < *len + n + 1)
			ncap *= 2;
		if (!(nb = realloc(*buf, ncap))) {
			curl_free(esc);
			return -1;
		}
		*buf = nb;
		*cap = ncap;
	}
	memcpy(*buf + *len, esc, n + 1);
	*len += n;
	curl_free(esc);
	return 0;
}

/* \p s encoded twice: a component, then that as a form value. */
static int e2b_escape2(const char *s, char **buf, size_t *len, size_t *cap)
{
	char *once = NULL;
	size_t l = 0, c = 0;
	int ret;

	if (e2b_escape(s, &once, &l, &c) < 0 || !once) {
		free(once);
		return once ? -1 : e2b_append(buf, len, cap, "");
	}
	ret = e2b_escape(once, buf, len, cap);
	free(once);
	return ret;
}

/*
 * The metadata filter as the SDK sends it: each key and value encoded, the
 * pairs form-encoded, and the whole encoded once more as a query value.
 */
static char *e2b_metadata_query(const char *const *labels)
{
	char *q = NULL, *out = NULL;
	size_t len = 0, cap = 0;

	for (size_t i = 0; labels && labels[i]; i++) {
		const char *eq = strchr(labels[i], '=');
		char *k;

		if (!eq)
			continue; /* a bare key is matched here, not by the API */
		if (!(k = strndup(labels[i], (size_t)(eq - labels[i]))))
			goto fail;
		if (len && e2b_append(&q, &len, &cap, "&") < 0) {
			free(k);
			goto fail;
		}
		if (e2b_escape2(k, &q, &len, &cap) < 0 || e2b_append(&q, &len, &cap, "=") < 0 ||
		    e2b_escape2(eq + 1, &q, &len, &cap) < 0) {
			free(k);
			goto fail;
		}
		free(k);
	}
	if (!q)
		return strdup("");
	len = cap = 0;
	if (e2b_escape(q, &out, &len, &cap) < 0)
		goto fail;
	free(q);
	return out;
fail:
	free(q);
	free(out);
	return NULL;
}

static int e2b_labels_match(struct json_object *meta, const char *const *labels)
{
	for (size_t i = 0; labels && labels[i]; i++) {
		const char *eq = strchr(labels[i], '=');
		size_t kl = eq ? (size_t)(eq - labels[i]) : strlen(labels[i]);
		char *k = strndup(labels[i], kl);
		struct json_object *v = NULL;
		int ok = k && meta && json_object_object_get_ex(meta, k, &v) &&
			 json_object_is_type(v, json_type_string) &&
			 (!eq || strcmp(json_object_get_string(v), eq + 1) == 0);

		free(k);
		if (!ok)
			return 0;
	}
	return 1;
}

int e2b_labels_fill(const struct tbx_host_api *host, struct json_object *metadata,
		    struct tbx_sandbox_info *out)
{
	size_t n = 0, k = 0;

	out->labels = NULL;
	if (!json_object_is_type(metadata, json_type_object))
		return 0;
	n = (size_t)json_object_object_length(metadata);
	if (!n)
		return 0;
	if (!(out->labels = host->alloc((n + 1) * sizeof(char *))))
		return -1;
	memset(out->labels, 0, (n + 1) * sizeof(char *));
	json_object_object_foreach(metadata, key, val) {
		const char *v = json_object_is_type(val, json_type_string) ? json_object_get_string(val)
									   : "";
		size_t len = strlen(key) + strlen(v) + 2;
		char *kv = host->alloc(len);

		if (!kv)
			return -1;
		snprintf(kv, len, "%s=%s", key, v);
		out->labels[k++] = kv;
	}
	return 0;
}

/* Append one ListedSandbox to the array; 0, or -1 on out of memory; skips bad entries. */
static int e2b_list_add(struct tbx_e2b *e, struct json_object *it, const char *const *labels,
			struct tbx_sandbox_info **arr, size_t *n, size_t *cap)
{
	struct json_object *v, *meta = NULL;
	struct tbx_sandbox_info *si;
	const char *id, *state = NULL;

	if (!json_object_is_type(it, json_type_object) ||
	    !json_object_object_get_ex(it, "sandboxID", &v) ||
	    !json_object_is_type(v, json_type_string) || !e2b_id_valid(json_object_get_string(v)))
		return 0;
	id = json_object_get_string(v);
	json_object_object_get_ex(it, "metadata", &meta);
	if (!e2b_labels_match(meta, labels))
		return 0;
	if (json_object_object_get_ex(it, "state", &v) && json_object_is_type(v, json_type_string))
		state = json_object_get_string(v);
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct tbx_sandbox_info *na = e->host->alloc(ncap * sizeof(*na));

		if (!na)
			return -1;
		memset(na, 0, ncap * sizeof(*na));
		if (*n)
			memcpy(na, *arr, *n * sizeof(*na));
		e->host->free(*arr);
		*arr = na;
		*cap = ncap;
	}
	si = &(*arr)[*n];
	si->struct_size = sizeof(*si);
	si->abi_minor = TBX_ABI_MINOR;
	si->id = e->host->strdup(id);
	si->workdir = e->host->strdup(E2B_WORKDIR);
	si->state = !state ? TBX_SANDBOX_UNKNOWN
		    : strcmp(state, "running") == 0 ? TBX_SANDBOX_RUNNING
		    : strcmp(state, "paused") == 0 ? TBX_SANDBOX_PAUSED
						      : TBX_SANDBOX_UNKNOWN;
	(*n)++;
	if (!si->id || !si->workdir || e2b_labels_fill(e->host, meta, si) < 0)
		return -1;
	return 0;
}

int e2b_sandbox_list(void *inst, struct tbx_call *call, const char *const *labels,
		     struct tbx_sandbox_info **out, size_t *n_out)
{
	struct tbx_e2b *e = inst;
	struct tbx_sandbox_info *arr = NULL;
	char *meta = e2b_metadata_query(labels), *token = NULL, *path = NULL;
	size_t n = 0, cap = 0;
	int ret = 0;

	*out = NULL;
	*n_out = 0;
	if (!meta)
		return e->host->error_set(call, TBX_ENOMEM, "out of memory");
	for (int page = 0;; page++) {
		struct e2b_answer a;
		char *tok_esc = NULL;
		size_t tl = 0, tc = 0, len;

		if (page == E2B_LIST_MAX_PAGES) {
			ret = e->host->error_set(call, TBX_EPROTO, "list sandboxes: the E2B API kept "
						 "paging after %d pages", page);
			break;
		}
		if (token && e2b_escape(token, &tok_esc, &tl, &tc) < 0) {
			ret = e->host->error_set(call, TBX_ENOMEM, "out of memory");
			break;
		}
		len = strlen(meta) + (tok_esc ? strlen(tok_esc) : 0) + 128;
		free(path);
		if (!(path = malloc(len))) {
			free(tok_esc);
			ret = e->host->error_set(call, TBX_ENOMEM, "out of memory");
			break;
		}
		snprintf(path, len, "/v2/sandboxes?state=running%%2Cpaused&limit=100%s%s%s%s",
			 *meta ? "&metadata=" : "", meta, tok_esc ? "&nextToken=" : "",
			 tok_esc ? tok_esc : "");
		free(tok_esc);
		if ((ret = e2b_api(e, call, "list sandboxes", "GET", path, NULL, 1, &a)) < 0)
			break;
		if (a.status != 200) {
			ret = e2b_api_fail(e, call, "list sandboxes", &a);
			e2b_answer_release(&a);
			break;
		}
		if (!json_object_is_type(a.json, json_type_array)) {
			e2b_answer_release(&a);
			ret = e->host->error_set(call, TBX_EPROTO,
						 "list sandboxes: the E2B API answered without a list");
			break;
		}
		for (size_t i = 0; i < json_object_array_length(a.json) && ret == 0; i++)
			if (e2b_list_add(e, json_object_array_get_idx(a.json, i), labels, &arr, &n,
					 &cap) < 0)
				ret = e->host->error_set(call, TBX_ENOMEM, "out of memory");
		free(token);
		token = a.next_token && *a.next_token ? strdup(a.next_token) : NULL;
		e2b_answer_release(&a);
		if (ret < 0 || !token)
			break;
	}
	free(meta);
	free(path);
	free(token);
	if (ret < 0) {
		for (size_t i = 0; i < n; i++)
			e2b_info_release(e->host, &arr[i]);
		e->host->free(arr);
		return ret;
	}
	*out = arr;
	*n_out = n;
	return 0;
}
