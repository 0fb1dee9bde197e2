/* SPDX-License-Identifier: MIT */
/* Request log entries and paging (see reqlog.h). */
#include "reqlog.h"

#include <ctype.h>
#include <json-c/json.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "http-parse.h"

int tbx_reqlog_header_is_secret(const char *name)
{
	static const char *const exact[] = {
		"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key",
		"api-key", "x-auth-token", "x-amz-security-token", "x-goog-api-key",
	};
	char lower[128];
	size_t n = strlen(name);

	if (n >= sizeof(lower))
		return 1;
	for (size_t i = 0; i <= n; i++)
		lower[i] = (char)tolower((unsigned char)name[i]);
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strcmp(lower, exact[i]) == 0)
			return 1;
	/* Idempotency keys are request ids, not credentials: receipts may want them. */
	if (strcmp(lower, "idempotency-key") == 0)
		return 0;
	return strstr(lower, "token") || strstr(lower, "secret") || strstr(lower, "password") ||
	       (n > 4 && strcmp(lower + n - 4, "-key") == 0);
}

/* Keep the auth scheme ("Bearer", "Basic"): it says how the client authenticated. */
static struct json_object *redacted(const char *name, const char *value)
{
	const char *sp = strchr(value, ' ');
	char buf[64];

	if ((strcasecmp(name, "Authorization") == 0 || strcasecmp(name, "Proxy-Authorization") == 0) &&
	    sp && (size_t)(sp - value) < 20) {
		snprintf(buf, sizeof(buf), "%.*s [REDACTED]", (int)(sp - value), value);
		return json_object_new_string(buf);
	}
	return json_object_new_string("[REDACTED]");
}

static void sha256_hex(const char *data, size_t len, char out[72])
{
	unsigned char md[32];
	unsigned int n = 0;

	memcpy(out, "sha256:", 7);
	EVP_Digest(data ? data : "", len, md, &n, EVP_sha256(), NULL);
	for (unsigned int i = 0; i < n; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", md[i]);
}

struct json_object *tbx_reqlog_entry(const struct tbx_http_msg *req, const char *host,
				     const char *service, const char *tier, int64_t started_ms)
{
	struct json_object *e = json_object_new_object(), *headers = json_object_new_object();
	const char *q = strchr(req->target, '?');
	size_t path_len = q ? (size_t)(q - req->target) : strlen(req->target);
	char *path = strndup(req->target, path_len), stamp[32], digest[72];

	for (size_t i = 0; i < req->n_headers; i++) {
		const char *name = req->headers[i].name;
		struct json_object *prev, *v;
		v = tbx_reqlog_header_is_secret(name) ? redacted(name, req->headers[i].value)
						      : json_object_new_string(req->headers[i].value);
		if (json_object_object_get_ex(headers, name, &prev)) {
			/* Repeated fields are one list (RFC 9110 5.3). */
			size_t len = strlen(json_object_get_string(prev)) + strlen(json_object_get_string(v)) + 3;
			char *joined = malloc(len);
			snprintf(joined, len, "%s, %s", json_object_get_string(prev), json_object_get_string(v));
			json_object_put(v);
			v = json_object_new_string(joined);
			free(joined);
		}
		json_object_object_add(headers, name, v);
	}
	sha256_hex(req->body, req->body_len, digest);
	tbx_rfc3339(started_ms, stamp, sizeof(stamp));
	json_object_object_add(e, "method", json_object_new_string(req->method));
	json_object_object_add(e, "path", json_object_new_string(path ? path : ""));
	json_object_object_add(e, "query", q ? json_object_new_string(q + 1) : NULL);
	json_object_object_add(e, "status", NULL);
	json_object_object_add(e, "tier", json_object_new_string(tier));
	json_object_object_add(e, "host", json_object_new_string(host));
	json_object_object_add(e, "service", json_object_new_string(service));
	/* A JSON string, as the Veris control plane serves it. */
	json_object_object_add(e, "request_headers",
			       json_object_new_string(json_object_to_json_string_ext(headers, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)));
	json_object_object_add(e, "request_body_sha256", json_object_new_string(digest));
	json_object_object_add(e, "request_body_bytes", json_object_new_int64((int64_t)req->body_len));
	json_object_object_add(e, "response_body_bytes", NULL);
	json_object_object_add(e, "created_at", json_object_new_string(stamp));
	json_object_object_add(e, "duration_ms", NULL);
	json_object_put(headers);
	free(path);
	return e;
}

void tbx_reqlog_finish(struct json_object *e, int status, size_t response_bytes,
		       int64_t started_ms)
{
	json_object_object_add(e, "status", json_object_new_int(status));
	json_object_object_add(e, "response_body_bytes", json_object_new_int64((int64_t)response_bytes));
	json_object_object_add(e, "duration_ms", json_object_new_int64(tbx_now_ms() - started_ms));
}

/* A non-negative integer query parameter; -1 if absent, -2 if malformed. */
static long long int_param(struct json_object *query, const char *name)
{
	struct json_object *v;
	const char *s;
	long long n = 0;

	if (!query || !json_object_object_get_ex(query, name, &v))
		return -1;
	s = json_object_get_string(v);
	if (!s || !*s || strlen(s) > 18)
		return -2;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -2;
		n = n * 10 + (*s - '0');
	}
	return n;
}

static int64_t entry_id(struct json_object *e)
{
	struct json_object *v;
	return json_object_object_get_ex(e, "id", &v) ? json_object_get_int64(v) : 0;
}

struct json_object *tbx_reqlog_page(struct json_object *log, struct json_object *query,
				    const char **why)
{
	long long limit = int_param(query, "limit"), since = int_param(query, "since_id");
	long long before = int_param(query, "before_id");
	const char *order = "asc", *tier = NULL;
	struct json_object *v, *page, *list;
	size_t n = json_object_array_length(log);
	int desc, more = 0;

	if (limit == -2 || limit == 0 || limit > 1000) {
		*why = "limit must be an integer from 1 to 1000";
		return NULL;
	}
	if (since == -2 || before == -2) {
		*why = "since_id and before_id must be non-negative integers";
		return NULL;
	}
	if (limit < 0)
		limit = 50;
	if (query && json_object_object_get_ex(query, "order", &v))
		order = json_object_get_string(v);
	if (!order || (strcmp(order, "asc") != 0 && strcmp(order, "desc") != 0)) {
		*why = "order must be asc or desc";
		return NULL;
	}
	if (query && json_object_object_get_ex(query, "tier", &v))
		tier = json_object_get_string(v);
	desc = strcmp(order, "desc") == 0;
	list = json_object_new_array();
	for (size_t k = 0; k < n; k++) {
		struct json_object *e = json_object_array_get_idx(log, desc ? n - 1 - k : k), *t;
		int64_t id = entry_id(e);
		if ((since >= 0 && id <= since) || (before >= 0 && id >= before))
			continue;
		if (tier && (!json_object_object_get_ex(e, "tier", &t) ||
			     strcmp(json_object_get_string(t), tier) != 0))
			continue;
		if ((long long)json_object_array_length(list) == limit) {
			more = 1;
			break;
		}
		json_object_array_add(list, json_object_get(e));
	}
	page = json_object_new_object();
	json_object_object_add(page, "requests", list);
	json_object_object_add(page, "has_more", json_object_new_boolean(more));
	return page;
}
