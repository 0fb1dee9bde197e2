/* SPDX-License-Identifier: MIT */
/*
 * E2B control-plane requests: JSON over HTTPS with X-API-KEY, on the shared
 * pool, retried the way envd calls are, answers read the way the official SDK
 * reads them (status, then the error body's "code").
 */
#define _GNU_SOURCE
#include "e2b.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define E2B_API_BODY_MAX ((size_t)16 << 20)

struct e2b_xfer {
	struct tbx_e2b *e;
	struct tbx_call *call;
	int cancelled;
	char *next_token;
};

/*
 * error_set, except for the engine's own clean-up requests, which run with no
 * call (so neither a cancellation stops them nor their failure hides the
 * error being reported).
 */
TBX_PRINTF(4, 5)
static int e2b_error(struct tbx_e2b *e, struct tbx_call *call, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!call) {
		e->host->log(NULL, TBX_LOG_DEBUG, "%s", msg);
		return status;
	}
	return e->host->error_set(call, status, "%s", msg);
}

/* Keep X-Next-Token (list paging); every other header is ignored. */
static size_t e2b_header(char *buf, size_t size, size_t nitems, void *userdata)
{
	struct e2b_xfer *x = userdata;
	size_t n = size * nitems, k = sizeof("X-Next-Token:") - 1;

	if (n > k && strncasecmp(buf, "X-Next-Token:", k) == 0) {
		const char *v = buf + k;
		size_t vl = n - k;

		while (vl && (*v == ' ' || *v == '\t'))
			v++, vl--;
		while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
			vl--;
		free(x->next_token);
		x->next_token = vl ? strndup(v, vl) : NULL;
	}
	return n;
}

static int e2b_progress(void *p, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
			curl_off_t ulnow)
{
	struct e2b_xfer *x = p;

	if (x->call && x->e->host->is_cancelled(x->call)) {
		x->cancelled = 1;
		return 1;
	}
	return 0;
}

static int e2b_ct_json(const char *ct)
{
	size_t n = sizeof("application/json") - 1;

	if (!ct)
		return 0;
	while (*ct == ' ')
		ct++;
	return strncasecmp(ct, "application/json", n) == 0 &&
	       (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

void e2b_answer_release(struct e2b_answer *a)
{
	json_object_put(a->json);
	free(a->next_token);
	free(a->message);
	memset(a, 0, sizeof(*a));
}

int e2b_answer_not_found(const struct e2b_answer *a)
{
	return a->status == 404 && a->code == 404;
}

/* The headers of one request: the key's line is copied, so wipe it after. */
static struct curl_slist *e2b_headers(struct tbx_e2b *e, int has_body)
{
	struct curl_slist *h = NULL, *n;
	const char *extra[] = { "Accept: application/json", "Expect:",
				has_body ? "Content-Type: application/json" : NULL };

	for (struct curl_slist *s = e->api_headers; s; s = s->next) {
		if (!(n = curl_slist_append(h, s->data)))
			goto fail;
		h = n;
	}
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		if (!extra[i])
			continue;
		if (!(n = curl_slist_append(h, extra[i])))
			goto fail;
		h = n;
	}
	return h;
fail:
	for (struct curl_slist *s = h; s; s = s->next)
		explicit_bzero(s->data, strlen(s->data));
	curl_slist_free_all(h);
	return NULL;
}

static void e2b_headers_free(struct curl_slist *h)
{
	for (struct curl_slist *s = h; s; s = s->next)
		explicit_bzero(s->data, strlen(s->data));
	curl_slist_free_all(h);
}

static int e2b_transport_fail(struct tbx_e2b *e, struct tbx_call *call, const char *what,
			      CURLcode rc, const char *errbuf, unsigned tries)
{
	const char *detail = errbuf[0] ? errbuf : curl_easy_strerror(rc);

	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		return e2b_error(e, call, TBX_EUNAVAIL,
					  "%s: cannot reach the E2B API at %s (%u tries): %s", what,
					  e->api_url, tries, detail);
	case CURLE_OPERATION_TIMEDOUT:
		return e2b_error(e, call, TBX_ETIMEDOUT,
					  "%s: the E2B API at %s did not answer within %ld ms", what,
					  e->api_url, e->request_timeout_ms);
	case CURLE_OUT_OF_MEMORY:
		return e2b_error(e, call, TBX_ENOMEM, "%s: out of memory", what);
	default:
		return e2b_error(e, call, TBX_EIO,
					  "%s: the connection to the E2B API at %s failed (%u tries): "
					  "%s",
					  what, e->api_url, tries, detail);
	}
}

/* Read the status, error fields and JSON of an answer into \p out. */
static int e2b_answer_parse(struct tbx_e2b *e, struct tbx_call *call, const char *what,
			    CURL *curl, long status, const struct tbx_envd_body *b,
			    struct e2b_answer *out)
{
	const char *ct = NULL;
	struct json_object *j = NULL, *v;
	int ok = status >= 200 && status < 300;

	curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ct);
	out->status = status;
	if (b->len) {
		if (!e2b_ct_json(ct)) {
			if (ok)
				return e2b_error(e, call, TBX_EPROTO,
							  "%s: the E2B API answered HTTP %ld with "
							  "content type '%s', expected application/json",
							  what, status, ct ? ct : "(none)");
		} else {
			struct json_tokener *tok = json_tokener_new();

			if (!tok)
				return e2b_error(e, call, TBX_ENOMEM, "%s: out of memory", what);
			j = json_tokener_parse_ex(tok, b->data, (int)b->len);
			if (j && json_tokener_get_error(tok) != json_tokener_success) {
				json_object_put(j);
				j = NULL;
			}
			json_tokener_free(tok);
			if (!j && ok)
				return e2b_error(e, call, TBX_EPROTO,
							  "%s: the E2B API answered HTTP %ld with a "
							  "body that is not valid JSON",
							  what, status);
		}
	} else if (ok && status != 204) {
		return e2b_error(e, call, TBX_EPROTO,
					  "%s: the E2B API answered HTTP %ld with an empty body",
					  what, status);
	}
	if (!ok && j && json_object_is_type(j, json_type_object)) {
		if (json_object_object_get_ex(j, "code", &v) && json_object_is_type(v, json_type_int))
			out->code = json_object_get_int(v);
		if (json_object_object_get_ex(j, "message", &v) &&
		    json_object_is_type(v, json_type_string))
			out->message = strdup(json_object_get_string(v));
	}
	if (!ok && !out->message && b->len && !j) {
		/* A proxy's HTML or text error: keep a short, single-line excerpt. */
		size_t n = b->len < 200 ? b->len : 200;

		if ((out->message = strndup(b->data, n)))
			for (char *p = out->message; *p; p++)
				if (*p == '\n' || *p == '\r' || (unsigned char)*p < 0x20)
					*p = ' ';
	}
	out->json = j;
	return 0;
}

int e2b_api(struct tbx_e2b *e, struct tbx_call *call, const char *what, const char *method,
	    const char *path, struct json_object *body, int resets, struct e2b_answer *out)
{
	struct e2b_xfer x = { .e = e, .call = call };
	struct tbx_envd_body b = { .max = E2B_API_BODY_MAX };
	struct tbx_envd_retry_state st;
	struct curl_slist *h = NULL;
	char errbuf[CURL_ERROR_SIZE] = "", *url = NULL;
	const char *js = body ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN) : NULL;
	long status = 0;
	size_t n;
	CURL *curl;
	CURLcode rc;
	int ret;

	memset(out, 0, sizeof(*out));
	curl = curl_easy_init();
	h = e2b_headers(e, js != NULL);
	n = strlen(e->api_url) + strlen(path) + 1;
	url = malloc(n);
	if (!curl || !h || !url) {
		ret = e2b_error(e, call, TBX_ENOMEM, "%s: out of memory", what);
		goto cleanup;
	}
	snprintf(url, n, "%s%s", e->api_url, path);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_SHARE, e->share);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	if (js) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, js);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)strlen(js));
	}
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
	/*
	 * libcurl silently resends a request whose reused connection died
	 * before any answer; a request that must not run twice gets a fresh one.
	 */
	if (!resets)
		curl_easy_setopt(curl, CURLOPT_FRESH_CONNECT, 1L);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "twinbox-e2b/0.1");
	curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, e->request_timeout_ms);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, tbx_envd_body_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, e2b_header);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, e2b_progress);
	curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &x);
	tbx_envd_retry_begin(&st, &e->retry);
	for (;;) {
		long after = -1;
		int again;

		rc = curl_easy_perform(curl);
		status = 0;
		if (rc == CURLE_OK)
			curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
		if (x.cancelled)
			break;
		if (rc == CURLE_OK && tbx_envd_retry_status(status))
			after = tbx_envd_retry_after_ms(curl);
		else if (rc == CURLE_OK || b.overflow ||
			 !(resets ? tbx_envd_retry_curl(rc) : tbx_envd_retry_unsent(rc)))
			break;
		again = tbx_envd_retry_again(&st, e->host, call, after);
		if (again < 0)
			x.cancelled = 1;
		if (again <= 0)
			break;
		if (rc != CURLE_OK && !tbx_envd_retry_unsent(rc))
			out->reset_retried = 1;
		e->host->log(call, TBX_LOG_DEBUG, "%s: %s %s: %s; trying again (%u)", what, method,
			     path, rc == CURLE_OK ? "busy" : curl_easy_strerror(rc), st.tries + 1);
		b.len = 0;
		free(x.next_token);
		x.next_token = NULL;
		errbuf[0] = '\0';
	}
	if (x.cancelled) {
		ret = e2b_error(e, call, TBX_ECANCELED, "%s: cancelled", what);
		goto cleanup;
	}
	if (rc != CURLE_OK) {
		ret = b.overflow ? e2b_error(e, call, TBX_EPROTO,
						      "%s: the E2B API answered more than %zu MiB",
						      what, E2B_API_BODY_MAX >> 20)
				 : e2b_transport_fail(e, call, what, rc, errbuf, st.tries + 1);
		goto cleanup;
	}
	ret = e2b_answer_parse(e, call, what, curl, status, &b, out);
	if (ret == 0) {
		out->next_token = x.next_token;
		x.next_token = NULL;
		if ((status == 429 || status == 503) && st.tries + 1 > 1)
			e->host->log(call, TBX_LOG_INFO, "%s: still HTTP %ld after %u tries", what,
				     status, st.tries + 1);
	} else {
		e2b_answer_release(out);
	}
cleanup:
	free(x.next_token);
	tbx_envd_body_release(&b);
	free(url);
	e2b_headers_free(h);
	if (curl)
		curl_easy_cleanup(curl);
	return ret;
}

int e2b_api_fail(struct tbx_e2b *e, struct tbx_call *call, const char *what,
		 const struct e2b_answer *a)
{
	const char *m = a->message && *a->message ? a->message : "no message";

	switch (a->status) {
	case 401:
	case 403:
		return e->host->error_set(call, TBX_EAUTH,
					  "%s: E2B refused the API key (HTTP %ld: %s); check "
					  "E2B_API_KEY",
					  what, a->status, m);
	case 429:
		return e->host->error_set(call, TBX_EUNAVAIL,
					  "%s: E2B is rate limiting this account (HTTP 429: %s); "
					  "try again later",
					  what, m);
	case 503:
		return e->host->error_set(call, TBX_EUNAVAIL,
					  "%s: E2B is temporarily unavailable (HTTP 503: %s); try "
					  "again later",
					  what, m);
	case 400:
		return e->host->error_set(call, TBX_EINVAL, "%s: E2B refused the request (HTTP 400: %s)",
					  what, m);
	case 404:
		return e->host->error_set(call, TBX_ENOENT, "%s: E2B answered HTTP 404: %s", what, m);
	default:
		return e->host->error_set(call, TBX_EIO, "%s: E2B answered HTTP %ld: %s", what,
					  a->status, m);
	}
}
