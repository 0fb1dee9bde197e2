/* SPDX-License-Identifier: MIT */
/* envd client: transport setup, /health, unary Connect calls and /files. */
#include "envd-client-priv.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "envd-base64.h"
#include "envd-codes.h"

#include <openssl/evp.h>

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
	free(c->access_token);
	free(c->files_user);
	free(c);
}

void tbx_envd_client_set_share(struct tbx_envd_client *c, void *share)
{
	c->share = share;
}

void tbx_envd_client_set_retry(struct tbx_envd_client *c, const struct tbx_envd_retry *policy)
{
	c->retry = *policy;
}

int tbx_envd_client_set_auth(struct tbx_envd_client *c, const char *user, const char *token)
{
	char *u = user ? strdup(user) : NULL, *t = token ? strdup(token) : NULL;

	if ((user && !u) || (token && !t)) {
		free(u);
		free(t);
		return -1;
	}
	free(c->files_user);
	free(c->access_token);
	c->files_user = u;
	c->access_token = t;
	return 0;
}

void tbx_envd_client_set_stall_timeout(struct tbx_envd_client *c, long stall_ms)
{
	c->stall_ms = stall_ms;
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
	if (x->stall_ms > 0 && tbx_envd_retry_now_ms() - x->last_data_ms > x->stall_ms) {
		x->stalled = 1;
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
	/* /health and /files are not token-checked: /files is signed instead. */
	if (c->access_token && strcmp(path, "/health") != 0 && strcmp(path, "/files") != 0 &&
	    strncmp(path, "/files?", 7) != 0) {
		size_t ln = strlen(c->access_token) + sizeof("X-Access-Token: ");
		char *line = malloc(ln);

		if (!line)
			goto fail;
		snprintf(line, ln, "X-Access-Token: %s", c->access_token);
		n = curl_slist_append(h, line);
		explicit_bzero(line, ln);
		free(line);
		if (!n)
			goto fail;
		h = n;
	}
	errbuf[0] = '\0';
	curl_easy_setopt(curl, CURLOPT_URL, url);
	free(url);
	url = NULL;
	if (c->unix_socket)
		curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, c->unix_socket);
	if (c->share)
		curl_easy_setopt(curl, CURLOPT_SHARE, c->share);
	curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
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
		xfer->stalled = 0;
		xfer->last_data_ms = tbx_envd_retry_now_ms();
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

CURLcode tbx_envd_perform(struct tbx_envd_client *c, struct tbx_call *call, CURL *curl,
			  struct tbx_envd_xfer *xfer, struct tbx_envd_body *b, int resets,
			  long *status_out)
{
	struct tbx_envd_retry_state st;
	CURLcode rc;

	tbx_envd_retry_begin(&st, &c->retry);
	for (;;) {
		long status = 0, after = -1;
		int again;

		rc = curl_easy_perform(curl);
		if (rc == CURLE_OK)
			curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
		*status_out = status;
		if (xfer && xfer->cancelled)
			return rc;
		if (rc == CURLE_OK && tbx_envd_retry_status(status))
			after = tbx_envd_retry_after_ms(curl);
		else if (!(rc != CURLE_OK && !b->overflow &&
			   (resets ? tbx_envd_retry_curl(rc) : tbx_envd_retry_unsent(rc))))
			return rc;
		again = tbx_envd_retry_again(&st, c->host, call, after);
		if (again < 0) {
			if (xfer)
				xfer->cancelled = 1;
			return CURLE_ABORTED_BY_CALLBACK;
		}
		if (!again)
			return rc;
		c->host->log(call, TBX_LOG_DEBUG, "envd at %s: %s; trying again (%u)",
			     tbx_envd_peer(c),
			     rc == CURLE_OK ? "busy" : curl_easy_strerror(rc), st.tries + 1);
		b->len = 0;
		if (b->data)
			b->data[0] = '\0';
	}
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
	rc = tbx_envd_perform(c, call, curl, &xfer, &b, 1, &status);
	if (rc != CURLE_OK) {
		ret = b.overflow ? c->host->error_set(call, TBX_EPROTO, "%s: response too large", op)
				 : tbx_envd_curl_fail(c, call, rc, &xfer, op, errbuf);
		goto cleanup;
	}
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

/* "v1_" + unpadded base64 of sha256("<path>:<op>:<user>:<token>") (§2.6). */
static char *envd_files_signature(const char *path, const char *op, const char *user,
				  const char *token)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	size_t n = strlen(path) + strlen(op) + strlen(user) + strlen(token) + 4;
	char *raw = malloc(n), *b64 = NULL, *out = NULL;

	if (!raw)
		return NULL;
	snprintf(raw, n, "%s:%s:%s:%s", path, op, user, token);
	if (EVP_Digest(raw, strlen(raw), md, &mdlen, EVP_sha256(), NULL) == 1)
		b64 = tbx_envd_base64_encode(md, mdlen);
	explicit_bzero(raw, n);
	free(raw);
	if (!b64)
		return NULL;
	n = strlen(b64);
	while (n && b64[n - 1] == '=')
		b64[--n] = '\0';
	out = malloc(n + 4);
	if (out)
		snprintf(out, n + 4, "v1_%s", b64);
	free(b64);
	return out;
}

char *tbx_envd_files_path(struct tbx_envd_client *c, CURL *curl, const char *path,
			  const char *op)
{
	char *esc = curl_easy_escape(curl, path, 0), *user = NULL, *sig = NULL, *sig_raw = NULL;
	char *out = NULL;
	size_t n;

	if (!esc)
		return NULL;
	if (c->files_user && !(user = curl_easy_escape(curl, c->files_user, 0)))
		goto done;
	if (c->access_token) {
		sig_raw = envd_files_signature(path, op, c->files_user ? c->files_user : "",
					       c->access_token);
		if (!sig_raw || !(sig = curl_easy_escape(curl, sig_raw, 0)))
			goto done;
	}
	n = strlen(esc) + (user ? strlen(user) : 0) + (sig ? strlen(sig) : 0) +
	    sizeof("/files?path=&username=&signature=");
	out = malloc(n);
	if (out)
		snprintf(out, n, "/files?path=%s%s%s%s%s", esc, user ? "&username=" : "",
			 user ? user : "", sig ? "&signature=" : "", sig ? sig : "");
done:
	curl_free(esc);
	curl_free(user);
	curl_free(sig);
	free(sig_raw);
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

/* A curl handle for /files?path=... (op "read" or "write"); NULL on out of memory. */
static CURL *envd_files_curl(struct tbx_envd_client *c, const char *path, const char *op,
			     const char *const *extra, struct curl_slist **h,
			     struct tbx_envd_xfer *xfer, char *errbuf)
{
	CURL *curl = tbx_envd_curl_new(c, "/files", extra, h, xfer, errbuf);
	char *q, *full;
	size_t n;

	if (!curl)
		return NULL;
	q = tbx_envd_files_path(c, curl, path, op);
	n = q ? strlen(c->base_url) + strlen(q) + 1 : 0;
	full = q ? malloc(n) : NULL;
	if (!full) {
		free(q);
		curl_easy_cleanup(curl);
		curl_slist_free_all(*h);
		*h = NULL;
		return NULL;
	}
	snprintf(full, n, "%s%s", c->base_url, q);
	curl_easy_setopt(curl, CURLOPT_URL, full);
	free(full);
	free(q);
	return curl;
}

int tbx_envd_file_read(struct tbx_envd_client *c, struct tbx_call *call, const char *path,
		       char **data_out, size_t *len_out)
{
	struct tbx_envd_body b = { .max = TBX_ENVD_FILE_MAX };
	struct tbx_envd_xfer xfer = { .call = call };
	struct curl_slist *h = NULL;
	char errbuf[CURL_ERROR_SIZE];
	long status = 0;
	CURL *curl;
	CURLcode rc;
	int ret;

	curl = envd_files_curl(c, path, "read", NULL, &h, &xfer, errbuf);
	if (!curl)
		return c->host->error_set(call, TBX_ENOMEM, "read %s: out of memory", path);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, tbx_envd_body_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
	rc = tbx_envd_perform(c, call, curl, &xfer, &b, 1, &status);
	if (rc != CURLE_OK) {
		ret = b.overflow ? c->host->error_set(call, TBX_EINVAL,
						      "read %s: file is larger than %zu MiB", path,
						      TBX_ENVD_FILE_MAX >> 20)
				 : tbx_envd_curl_fail(c, call, rc, &xfer, "read", errbuf);
		goto cleanup;
	}
	if (status != 200) {
		ret = envd_files_error(c, call, "read", status, &b);
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
	tbx_envd_body_release(&b);
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
	long status = 0;
	CURL *curl;
	CURLcode rc;
	int ret;

	if (len > TBX_ENVD_FILE_MAX)
		return c->host->error_set(call, TBX_EINVAL, "write %s: %zu bytes is more than the "
					  "%zu MiB a file write takes", path, len,
					  TBX_ENVD_FILE_MAX >> 20);
	curl = envd_files_curl(c, path, "write", extra, &h, &xfer, errbuf);
	if (!curl)
		return c->host->error_set(call, TBX_ENOMEM, "write %s: out of memory", path);
	curl_easy_setopt(curl, CURLOPT_POST, 1L);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, len ? data : "");
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, tbx_envd_body_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
	/* A replace is idempotent, so a reset connection is simply tried again. */
	rc = tbx_envd_perform(c, call, curl, &xfer, &b, 1, &status);
	if (rc != CURLE_OK) {
		ret = tbx_envd_curl_fail(c, call, rc, &xfer, "write", errbuf);
		goto cleanup;
	}
	ret = status == 200 ? 0 : envd_files_error(c, call, "write", status, &b);
cleanup:
	tbx_envd_body_release(&b);
	curl_easy_cleanup(curl);
	curl_slist_free_all(h);
	return ret;
}
