/* SPDX-License-Identifier: MIT */
/* envd client: transport setup, /health, unary Connect calls and /files. */
#include "envd-client-priv.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "envd-codes.h"

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static int global_rc = -1;

static void envd_global_init_once(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

int tbx_envd_global_init(void)
{
	pthread_once(&global_once, envd_global_init_once);
	return global_rc;
}

struct tbx_envd_client *tbx_envd_client_new(const struct tbx_host_api *host, const char *base_url,
					    const char *unix_socket)
{
	struct tbx_envd_client *c = calloc(1, sizeof(*c));
	size_t n;

	if (!c)
		return NULL;
	c->host = host;
	c->timeout_ms = 60000;
	c->base_url = strdup(base_url);
	if (!c->base_url)
		goto fail;
	/* Paths are appended with a leading '/', so drop a trailing one. */
	n = strlen(c->base_url);
	if (n && c->base_url[n - 1] == '/')
		c->base_url[n - 1] = '\0';
	if (unix_socket && !(c->unix_socket = strdup(unix_socket)))
		goto fail;
	return c;
fail:
	tbx_envd_client_free(c);
	return NULL;
}

void tbx_envd_client_free(struct tbx_envd_client *c)
{
	if (!c)
		return;
	curl_slist_free_all(c->headers);
	free(c->base_url);
	free(c->unix_socket);
	free(c);
}

int tbx_envd_client_header_add(struct tbx_envd_client *c, const char *line)
{
	struct curl_slist *n = curl_slist_append(c->headers, line);

	if (!n)
		return -1;
	c->headers = n;
	return 0;
}

void tbx_envd_client_set_timeout(struct tbx_envd_client *c, long timeout_ms)
{
	c->timeout_ms = timeout_ms;
}

const char *tbx_envd_peer(const struct tbx_envd_client *c)
{
	return c->unix_socket ? c->unix_socket : c->base_url;
}

static int envd_xferinfo(void *p, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
			 curl_off_t ulnow)
{
	struct tbx_envd_xfer *x = p;

	if (x->call && x->c->host->is_cancelled(x->call)) {
		x->cancelled = 1;
		return 1;
	}
	return 0;
}

CURL *tbx_envd_curl_new(struct tbx_envd_client *c, const char *path, const char *const *extra,
			struct curl_slist **hdrs_out, struct tbx_envd_xfer *xfer, char *errbuf)
{
	struct curl_slist *h = NULL, *n;
	CURL *curl;
	char *url;
	size_t len = strlen(c->base_url) + strlen(path) + 1;

	*hdrs_out = NULL;
	curl = curl_easy_init();
	url = malloc(len);
	if (!curl || !url)
		goto fail;
	snprintf(url, len, "%s%s", c->base_url, path);
	for (struct curl_slist *s = c->headers; s; s = s->next) {
		if (!(n = curl_slist_append(h, s->data)))
			goto fail;
		h = n;
	}
	/* curl would otherwise wait for 100-continue before larger bodies. */
	if (!(n = curl_slist_append(h, "Expect:")))
		goto fail;
	h = n;
	for (size_t i = 0; extra && extra[i]; i++) {
		if (!(n = curl_slist_append(h, extra[i])))
			goto fail;
		h = n;
	}
	errbuf[0] = '\0';
	curl_easy_setopt(curl, CURLOPT_URL, url);
	free(url);
	url = NULL;
	if (c->unix_socket)
		curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, c->unix_socket);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "twinbox-envd/1");
	/* Let libcurl decode a gzip'd download rather than hand it on raw. */
	curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	if (xfer) {
		xfer->c = c;
		xfer->cancelled = 0;
		curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, envd_xferinfo);
		curl_easy_setopt(curl, CURLOPT_XFERINFODATA, xfer);
	}
	*hdrs_out = h;
	return curl;
fail:
	free(url);
	curl_slist_free_all(h);
	if (curl)
		curl_easy_cleanup(curl);
	return NULL;
}

int tbx_envd_curl_fail(struct tbx_envd_client *c, struct tbx_call *call, CURLcode rc,
		       const struct tbx_envd_xfer *xfer, const char *what, const char *errbuf)
{
	const char *detail = errbuf && errbuf[0] ? errbuf : curl_easy_strerror(rc);

	if (xfer && xfer->cancelled)
		return c->host->error_set(call, TBX_ECANCELED, "%s: cancelled", what);
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		return c->host->error_set(call, TBX_EUNAVAIL,
					  "%s: cannot reach the sandbox's envd at %s: %s", what,
					  tbx_envd_peer(c), detail);
	case CURLE_OPERATION_TIMEDOUT:
		return c->host->error_set(call, TBX_ETIMEDOUT, "%s: no answer from %s in time: %s",
					  what, tbx_envd_peer(c), detail);
	case CURLE_OUT_OF_MEMORY:
		return c->host->error_set(call, TBX_ENOMEM, "%s: out of memory", what);
	default:
		return c->host->error_set(call, TBX_EIO, "%s: transfer with %s failed: %s", what,
					  tbx_envd_peer(c), detail);
	}
}

size_t tbx_envd_body_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct tbx_envd_body *b = userdata;
	size_t n = size * nmemb;

	if (b->len + n > b->max) {
		b->overflow = 1;
		return 0;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *nd;

		while (cap < b->len + n + 1)
			cap *= 2;
		nd = realloc(b->data, cap);
		if (!nd)
			return 0;
		b->data = nd;
		b->cap = cap;
	}
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

void tbx_envd_body_release(struct tbx_envd_body *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

int tbx_envd_ct_is(const char *ct, const char *want)
{
	size_t n = strlen(want);

	if (!ct)
		return 0;
	while (*ct == ' ')
		ct++;
	if (strncasecmp(ct, want, n) != 0)
		return 0;
	ct += n;
	while (*ct == ' ')
		ct++;
	return *ct == '\0' || *ct == ';';
}

int tbx_envd_error_object(struct tbx_envd_client *c, struct tbx_call *call, const char *what,
			  struct json_object *err, int http_status)
{
	struct json_object *code = NULL, *msg = NULL;
	const char *code_s, *msg_s = NULL;

	if (err && json_object_is_type(err, json_type_object)) {
		json_object_object_get_ex(err, "code", &code);
		json_object_object_get_ex(err, "message", &msg);
	}
	/* A missing or non-string code falls back to the HTTP status (§2.3). */
	if (code && json_object_is_type(code, json_type_string))
		code_s = json_object_get_string(code);
	else
		code_s = tbx_envd_code_from_http(http_status);
	if (msg && json_object_is_type(msg, json_type_string))
		msg_s = json_object_get_string(msg);
	return c->host->error_set(call, tbx_envd_code_status(code_s), "%s: %s", what,
				  msg_s && *msg_s ? msg_s : code_s);
}

int tbx_envd_health(struct tbx_envd_client *c, long timeout_ms)
{
	struct curl_slist *h;
	char errbuf[CURL_ERROR_SIZE];
	long status = 0;
	CURL *curl = tbx_envd_curl_new(c, "/health", NULL, &h, NULL, errbuf);
	CURLcode rc;

	if (!curl)
		return TBX_EUNAVAIL;
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl_easy_setopt(curl, CURLOPT_NOBODY, 0L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, tbx_envd_body_write);
	{
		struct tbx_envd_body b = { .max = 4096 };

		curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
		rc = curl_easy_perform(curl);
		tbx_envd_body_release(&b);
	}
	if (rc == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(curl);
	curl_slist_free_all(h);
	return rc == CURLE_OK && status >= 200 && status < 300 ? 0 : TBX_EUNAVAIL;
}

int tbx_envd_unary(struct tbx_envd_client *c, struct tbx_call *call, const char *rpc,
		   struct json_object *req, struct json_object **resp_out)
{
	return tbx_envd_unary_as(c, call, rpc, rpc, req, resp_out);
}

int tbx_envd_unary_as(struct tbx_envd_client *c, struct tbx_call *call, const char *op,
		      const char *rpc, struct json_object *req, struct json_object **resp_out)
{
	static const char *const extra[] = { "Content-Type: application/json",
					     "Connect-Protocol-Version: 1", NULL };
	struct tbx_envd_body b = { .max = 64u << 20 };
	struct tbx_envd_xfer xfer = { .call = call };
	struct curl_slist *h;
	struct json_object *resp = NULL;
	char errbuf[CURL_ERROR_SIZE], path[256];
	const char *body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	const char *ct = NULL;
	long status = 0;
	CURL *curl;
	CURLcode rc;
	int ret;

	if (resp_out)
		*resp_out = NULL;
	snprintf(path, sizeof(path), "/%s", rpc);
	curl = tbx_envd_curl_new(c, path, extra, &h, &xfer, errbuf);
	if (!curl)
		return c->host->error_set(call, TBX_ENOMEM, "%s: out of memory", op);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, tbx_envd_body_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(curl);
	if (rc != CURLE_OK) {
		ret = b.overflow ? c->host->error_set(call, TBX_EPROTO, "%s: response too large", op)
				 : tbx_envd_curl_fail(c, call, rc, &xfer, op, errbuf);
		goto cleanup;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ct);
	if (!tbx_envd_ct_is(ct, "application/json")) {
		ret = c->host->error_set(call, TBX_EPROTO,
					 "%s: envd answered HTTP %ld with content type '%s', "
					 "expected application/json",
					 op, status, ct ? ct : "(none)");
		goto cleanup;
	}
	resp = b.len ? json_tokener_parse(b.data) : NULL;
	if (!resp || !json_object_is_type(resp, json_type_object)) {
		ret = c->host->error_set(call, TBX_EPROTO,
					 "%s: envd answered HTTP %ld with a body that is not a JSON "
					 "object",
					 op, status);
		goto cleanup;
	}
	if (status != 200) {
		ret = tbx_envd_error_object(c, call, op, resp, (int)status);
		goto cleanup;
	}
	if (resp_out) {
		*resp_out = resp;
		resp = NULL;
	}
	ret = 0;
cleanup:
	json_object_put(resp);
	tbx_envd_body_release(&b);
	curl_easy_cleanup(curl);
	curl_slist_free_all(h);
	return ret;
}

/* "/files?path=<escaped>" for a transfer. */
static char *envd_files_path(CURL *curl, const char *path)
{
	char *esc = curl_easy_escape(curl, path, 0);
	char *out;
	size_t n;

	if (!esc)
		return NULL;
	n = strlen(esc) + sizeof("/files?path=");
	out = malloc(n);
	if (out)
		snprintf(out, n, "/files?path=%s", esc);
	curl_free(esc);
	return out;
}

/* Map a /files error: the body is {"code":<int>,"message":...} (§2.6). */
static int envd_files_error(struct tbx_envd_client *c, struct tbx_call *call, const char *what,
			    long status, const struct tbx_envd_body *b)
{
	struct json_object *j = b->len ? json_tokener_parse(b->data) : NULL;
	struct json_object *msg = NULL;
	const char *m = NULL;
	int st;

	if (j && json_object_object_get_ex(j, "message", &msg) &&
	    json_object_is_type(msg, json_type_string))
		m = json_object_get_string(msg);
	switch (status) {
	case 400: st = m && strstr(m, "directory") ? TBX_EISDIR : TBX_EINVAL; break;
	case 401: st = TBX_EAUTH; break;
	case 403: st = TBX_EPERM; break;
	case 404: st = TBX_ENOENT; break;
	case 413: st = TBX_EINVAL; break;
	case 502: case 503: st = TBX_EUNAVAIL; break;
	case 507: st = TBX_EIO; break;
	default: st = TBX_EIO; break;
	}
	st = c->host->error_set(call, st, "%s: %s", what,
				m ? m : "envd answered an error without a message");
	json_object_put(j);
	return st;
}

int tbx_envd_file_read(struct tbx_envd_client *c, struct tbx_call *call, const char *path,
		       char **data_out, size_t *len_out)
{
	struct tbx_envd_body b = { .max = TBX_ENVD_FILE_MAX };
	struct tbx_envd_xfer xfer = { .call = call };
	struct curl_slist *h = NULL;
	char errbuf[CURL_ERROR_SIZE], what[64] = "read";
	char *url = NULL;
	long status = 0;
	CURL *curl;
	CURLcode rc;
	int ret;

	curl = tbx_envd_curl_new(c, "/", NULL, &h, &xfer, errbuf);
	if (!curl || !(url = envd_files_path(curl, path))) {
		ret = c->host->error_set(call, TBX_ENOMEM, "read %s: out of memory", path);
		goto cleanup;
	}
	{
		size_t n = strlen(c->base_url) + strlen(url) + 1;
		char *full = malloc(n);

		if (!full) {
			ret = c->host->error_set(call, TBX_ENOMEM, "read %s: out of memory", path);
			goto cleanup;
		}
		snprintf(full, n, "%s%s", c->base_url, url);
		curl_easy_setopt(curl, CURLOPT_URL, full);
		free(full);
	}
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, tbx_envd_body_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(curl);
	if (rc != CURLE_OK) {
		ret = b.overflow ? c->host->error_set(call, TBX_EINVAL,
						      "read %s: file is larger than %zu MiB", path,
						      TBX_ENVD_FILE_MAX >> 20)
				 : tbx_envd_curl_fail(c, call, rc, &xfer, "read", errbuf);
		goto cleanup;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		ret = envd_files_error(c, call, what, status, &b);
		goto cleanup;
	}
	*data_out = c->host->alloc(b.len + 1);
	if (!*data_out) {
		ret = c->host->error_set(call, TBX_ENOMEM, "read %s: out of memory", path);
		goto cleanup;
	}
	if (b.len)
		memcpy(*data_out, b.data, b.len);
	(*data_out)[b.len] = '\0';
	*len_out = b.len;
	ret = 0;
cleanup:
	free(url);
	tbx_envd_body_release(&b);
	if (curl)
		curl_easy_cleanup(curl);
	curl_slist_free_all(h);
	return ret;
}

int tbx_envd_file_write(struct tbx_envd_client *c, struct tbx_call *call, const char *path,
			const char *data, size_t len)
{
	static const char *const extra[] = { "Content-Type: application/octet-stream", NULL };
	struct tbx_envd_body b = { .max = 1u << 20 };
	struct tbx_envd_xfer xfer = { .call = call };
	struct curl_slist *h = NULL;
	char errbuf[CURL_ERROR_SIZE];
	char *url = NULL, *full = NULL;
	long status = 0;
	CURL *curl;
	CURLcode rc;
	int ret;

	if (len > TBX_ENVD_FILE_MAX)
		return c->host->error_set(call, TBX_EINVAL, "write %s: %zu bytes is more than the "
					  "%zu MiB a file write takes", path, len,
					  TBX_ENVD_FILE_MAX >> 20);
	curl = tbx_envd_curl_new(c, "/", extra, &h, &xfer, errbuf);
	if (curl && (url = envd_files_path(curl, path))) {
		size_t n = strlen(c->base_url) + strlen(url) + 1;

		if ((full = malloc(n)))
			snprintf(full, n, "%s%s", c->base_url, url);
	}
	if (!full) {
		ret = c->host->error_set(call, TBX_ENOMEM, "write %s: out of memory", path);
		goto cleanup;
	}
	curl_easy_setopt(curl, CURLOPT_URL, full);
	curl_easy_setopt(curl, CURLOPT_POST, 1L);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, len ? data : "");
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, tbx_envd_body_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(curl);
	if (rc != CURLE_OK) {
		ret = tbx_envd_curl_fail(c, call, rc, &xfer, "write", errbuf);
		goto cleanup;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	ret = status == 200 ? 0 : envd_files_error(c, call, "write", status, &b);
cleanup:
	free(url);
	free(full);
	tbx_envd_body_release(&b);
	if (curl)
		curl_easy_cleanup(curl);
	curl_slist_free_all(h);
	return ret;
}
