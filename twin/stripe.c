/* SPDX-License-Identifier: MIT */
/*
 * The Stripe twin's front: authentication, parameters, idempotency, errors,
 * expansion and pagination shared by every resource (see stripe.h).
 */
#include "stripe.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "form.h"
#include "http-parse.h"
#include "httpd.h"
#include "ids.h"
#include "stripe-priv.h"
#include "twins.h"

#define API_VERSION "2024-06-20"
#define MAX_SEGS 6
#define IDEMPOTENCY_KIND "_idempotency"

void stripe_id(char *out, size_t size, const char *prefix, size_t n)
{
	tbx_id_random(out, size, prefix, n);
}

int stripe_error(struct stripe_ctx *c, int status, const char *type, const char *code,
		 const char *param, const char *fmt, ...)
{
	struct json_object *err = json_object_new_object(), *body = json_object_new_object();
	char msg[1024], doc[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (code) {
		json_object_object_add(err, "code", json_object_new_string(code));
		snprintf(doc, sizeof(doc), "https://stripe.com/docs/error-codes/%s", code);
		for (char *p = doc + 35; *p; p++)
			if (*p == '_')
				*p = '-';
		json_object_object_add(err, "doc_url", json_object_new_string(doc));
	}
	json_object_object_add(err, "message", json_object_new_string(msg));
	if (param)
		json_object_object_add(err, "param", json_object_new_string(param));
	json_object_object_add(err, "type", json_object_new_string(type));
	json_object_object_add(body, "error", err);
	tbx_reply_json(c->rep, status, body);
	return -1;
}

int stripe_missing(struct stripe_ctx *c, const char *kind, const char *id, const char *param)
{
	return stripe_error(c, 404, "invalid_request_error", "resource_missing", param,
			    "No such %s: '%s'", kind, id);
}

const char *stripe_obj_str(struct json_object *obj, const char *key)
{
	struct json_object *v;
	return obj && json_object_object_get_ex(obj, key, &v) && v ? json_object_get_string(v) : NULL;
}

long long stripe_obj_int(struct json_object *obj, const char *key)
{
	struct json_object *v;
	return obj && json_object_object_get_ex(obj, key, &v) ? json_object_get_int64(v) : 0;
}

struct json_object *stripe_get(struct stripe_ctx *c, const char *kind, const char *id)
{
	return tbx_service_get(c->svc, kind, id);
}

void stripe_put(struct stripe_ctx *c, const char *kind, struct json_object *obj)
{
	tbx_service_put(c->svc, kind, stripe_obj_str(obj, "id"), obj);
}

int stripe_check_params(struct stripe_ctx *c, const char *const *allowed)
{
	json_object_object_foreach(c->params, key, val) {
		int ok = strcmp(key, "expand") == 0;
		(void)val;
		for (const char *const *a = allowed; !ok && a && *a; a++)
			ok = strcmp(*a, key) == 0;
		if (!ok)
			return stripe_error(c, 400, "invalid_request_error", "parameter_unknown", key,
					    "Received unknown parameter: %s", key);
	}
	return 0;
}

const char *stripe_str(struct stripe_ctx *c, const char *name)
{
	struct json_object *v;

	if (!json_object_object_get_ex(c->params, name, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int stripe_int(struct stripe_ctx *c, const char *name, long long *out)
{
	struct json_object *v;
	const char *s;
	long long n = 0;

	if (!json_object_object_get_ex(c->params, name, &v))
		return 0;
	s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
	if (!s || !*s || strlen(s) > 15)
		goto invalid;
	for (const char *p = s; *p; p++) {
		if (!isdigit((unsigned char)*p))
			goto invalid;
		n = n * 10 + (*p - '0');
	}
	*out = n;
	return 1;
invalid:
	stripe_error(c, 400, "invalid_request_error", "parameter_invalid_integer", name,
		     "Invalid integer: %s", s ? s : "(object)");
	return -1;
}

int stripe_bool(struct stripe_ctx *c, const char *name, int *out)
{
	const char *s = stripe_str(c, name);
	struct json_object *v;

	if (!json_object_object_get_ex(c->params, name, &v))
		return 0;
	if (s && strcmp(s, "true") == 0) {
		*out = 1;
		return 1;
	}
	if (s && strcmp(s, "false") == 0) {
		*out = 0;
		return 1;
	}
	stripe_error(c, 400, "invalid_request_error", "parameter_invalid_boolean", name,
		     "Invalid boolean: %s", s ? s : "(object)");
	return -1;
}

int stripe_apply_metadata(struct stripe_ctx *c, struct json_object *obj)
{
	struct json_object *in, *meta;

	if (!json_object_object_get_ex(c->params, "metadata", &in))
		return 0;
	if (json_object_is_type(in, json_type_string) && json_object_get_string_len(in) == 0) {
		json_object_object_add(obj, "metadata", json_object_new_object()); /* metadata="" clears */
		return 0;
	}
	if (!json_object_is_type(in, json_type_object))
		return stripe_error(c, 400, "invalid_request_error", "parameter_invalid_string", "metadata",
				    "Invalid object");
	if (!json_object_object_get_ex(obj, "metadata", &meta) || !meta) {
		meta = json_object_new_object();
		json_object_object_add(obj, "metadata", meta);
	}
	json_object_object_foreach(in, key, val) {
		if (!json_object_is_type(val, json_type_string))
			return stripe_error(c, 400, "invalid_request_error", "parameter_invalid_string",
					    "metadata", "Invalid value for metadata[%s]", key);
		if (json_object_get_string_len(val) == 0)
			json_object_object_del(meta, key);
		else
			json_object_object_add(meta, key, json_object_new_string(json_object_get_string(val)));
	}
	if (json_object_object_length(meta) > 50)
		return stripe_error(c, 400, "invalid_request_error", "parameter_invalid_string", "metadata",
				    "Metadata can have at most 50 keys");
	return 0;
}

void stripe_copy_strings(struct stripe_ctx *c, struct json_object *obj, const char *const *fields)
{
	for (const char *const *f = fields; *f; f++) {
		const char *v = stripe_str(c, *f);
		if (v)
			json_object_object_add(obj, *f, *v ? json_object_new_string(v) : NULL);
	}
}

/* What an id's prefix says it is, for expansion. */
static const char *kind_of(const char *id)
{
	static const struct { const char *prefix, *kind; } kinds[] = {
		{ "cus_", "customer" }, { "pi_", "payment_intent" }, { "ch_", "charge" },
		{ "py_", "charge" }, { "re_", "refund" },
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strncmp(id, kinds[i].prefix, strlen(kinds[i].prefix)) == 0)
			return kinds[i].kind;
	return NULL;
}

/* Replace obj[field] (an id) by a copy of the object it names. */
static void expand_field(struct stripe_ctx *c, struct json_object *obj, const char *field)
{
	const char *id = stripe_obj_str(obj, field), *kind;
	struct json_object *target, *copy = NULL;

	if (!id || !(kind = kind_of(id)) || !(target = stripe_get(c, kind, id)))
		return;
	if (json_object_deep_copy(target, &copy, NULL) == 0)
		json_object_object_add(obj, field, copy);
}

int stripe_send(struct stripe_ctx *c, int status, struct json_object *obj)
{
	struct json_object *expand, *out = NULL;

	if (json_object_deep_copy(obj, &out, NULL) != 0)
		return stripe_error(c, 500, "api_error", NULL, NULL, "out of memory");
	if (json_object_object_get_ex(c->params, "expand", &expand) &&
	    json_object_is_type(expand, json_type_array)) {
		struct json_object *data;
		int is_list = json_object_object_get_ex(out, "data", &data) &&
			      json_object_is_type(data, json_type_array);
		for (size_t i = 0; i < json_object_array_length(expand); i++) {
			const char *f = json_object_get_string(json_object_array_get_idx(expand, i));
			if (!f)
				continue;
			if (is_list && strncmp(f, "data.", 5) == 0) {
				for (size_t k = 0; k < json_object_array_length(data); k++)
					expand_field(c, json_object_array_get_idx(data, k), f + 5);
			} else {
				expand_field(c, out, f);
			}
		}
	}
	tbx_reply_json(c->rep, status, out);
	return 0;
}

int stripe_list(struct stripe_ctx *c, const char *kind, const char *url, stripe_filter filter,
		const char *const *allowed)
{
	struct json_object *all = tbx_service_collection(c->svc, kind), *items = json_object_new_array();
	struct json_object *list, *data;
	const char *after = stripe_str(c, "starting_after"), *before = stripe_str(c, "ending_before");
	long long limit = 10;
	int more = 0, rc;
	size_t n;

	if (stripe_check_params(c, allowed) < 0 || (rc = stripe_int(c, "limit", &limit)) < 0)
		goto fail;
	if (limit < 1 || limit > 100) {
		stripe_error(c, 400, "invalid_request_error", "parameter_invalid_integer", "limit",
			     "This value must be less than or equal to 100 (it currently is '%lld').", limit);
		goto fail;
	}
	/* Newest first, as Stripe lists; deleted objects are not listed. */
	json_object_object_foreach(all, id, obj) {
		(void)id;
		if (json_object_object_get_ex(obj, "deleted", NULL) || (filter && !filter(c, obj)))
			continue;
		json_object_array_add(items, json_object_get(obj));
	}
	n = json_object_array_length(items);
	data = json_object_new_array();
	if (before) {
		/* The page just newer than `before`, still newest first. */
		size_t at = n;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(stripe_obj_str(json_object_array_get_idx(items, i), "id"), before))
				at = i;
		if (at == n) {
			json_object_put(data);
			stripe_missing(c, kind, before, "ending_before");
			goto fail;
		}
		size_t start = at + 1, end = n;
		if (end - start > (size_t)limit) {
			end = start + (size_t)limit;
			more = 1;
		}
		for (size_t i = end; i > start; i--)
			json_object_array_add(data, json_object_get(json_object_array_get_idx(items, i - 1)));
	} else {
		size_t start = n; /* index of the newest item still to list, plus one */
		if (after) {
			start = n + 1;
			for (size_t i = 0; i < n; i++)
				if (!strcmp(stripe_obj_str(json_object_array_get_idx(items, i), "id"), after))
					start = i;
			if (start == n + 1) {
				json_object_put(data);
				stripe_missing(c, kind, after, "starting_after");
				goto fail;
			}
		}
		for (size_t i = start; i > 0; i--) {
			if ((long long)json_object_array_length(data) == limit) {
				more = 1;
				break;
			}
			json_object_array_add(data, json_object_get(json_object_array_get_idx(items, i - 1)));
		}
	}
	list = json_object_new_object();
	json_object_object_add(list, "object", json_object_new_string("list"));
	json_object_object_add(list, "data", data);
	json_object_object_add(list, "has_more", json_object_new_boolean(more));
	json_object_object_add(list, "url", json_object_new_string(url));
	json_object_put(items);
	rc = stripe_send(c, 200, list);
	json_object_put(list);
	return rc;
fail:
	json_object_put(items);
	return -1;
}

/* Bearer sk_test_..., or Basic with the key as the user name (curl -u sk_test_...:). */
static const char *api_key(const struct tbx_http_msg *req, char *buf, size_t size)
{
	const char *auth = tbx_http_header_get(req, "Authorization");
	unsigned char raw[300];
	size_t n = 0;

	if (!auth)
		return NULL;
	if (strncasecmp(auth, "Bearer ", 7) == 0) {
		snprintf(buf, size, "%s", auth + 7);
		return buf;
	}
	if (strncasecmp(auth, "Basic ", 6) == 0 && strlen(auth + 6) < 4 * sizeof(raw) / 3 &&
	    sodium_base642bin(raw, sizeof(raw) - 1, auth + 6, strlen(auth + 6), NULL, &n, NULL,
			      sodium_base64_VARIANT_ORIGINAL) == 0) {
		raw[n] = '\0';
		char *colon = strchr((char *)raw, ':');
		if (colon)
			*colon = '\0';
		snprintf(buf, size, "%s", (char *)raw);
		return buf;
	}
	return NULL;
}

static int authenticate(struct stripe_ctx *c, char *key, size_t size)
{
	const char *k = api_key(c->req, key, size);

	if (!k || !*k)
		return stripe_error(c, 401, "invalid_request_error", NULL, NULL,
				    "You did not provide an API key. You need to provide your API key in the "
				    "Authorization header, using Bearer auth (e.g. 'Authorization: Bearer "
				    "YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for "
				    "details, or we can help at https://support.stripe.com/.");
	if (strncmp(k, "sk_test_", 8) != 0 && strncmp(k, "rk_test_", 8) != 0) {
		size_t len = strlen(k);
		return stripe_error(c, 401, "invalid_request_error", NULL, NULL,
				    "Invalid API Key provided: %.8s%s%s (this twin accepts test-mode keys, "
				    "sk_test_..., only)",
				    k, len > 12 ? "****" : "", len > 12 ? k + len - 4 : "");
	}
	return 0;
}

static void body_digest(const struct tbx_http_msg *req, char out[65])
{
	unsigned char md[32];
	unsigned int n = 0;

	EVP_Digest(req->body ? req->body : "", req->body_len, md, &n, EVP_sha256(), NULL);
	for (unsigned int i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* A replay of a stored answer: 1 if answered, 0 to go on, -1 on a key reused differently. */
static int idempotency_replay(struct stripe_ctx *c, const char *slot, const char *digest)
{
	struct json_object *rec = tbx_service_get(c->svc, IDEMPOTENCY_KIND, slot);
	const char *key = tbx_http_header_get(c->req, "Idempotency-Key");
	const char *path = c->req->target;

	if (!rec)
		return 0;
	if (strcmp(stripe_obj_str(rec, "method"), c->method) != 0 ||
	    strcmp(stripe_obj_str(rec, "path"), path) != 0 ||
	    strcmp(stripe_obj_str(rec, "digest"), digest) != 0)
		return stripe_error(c, 400, "idempotency_error", NULL, NULL,
				    "Keys for idempotent requests can only be used with the same parameters "
				    "they were first used with. Try using a key other than '%s' if you meant "
				    "to execute a different request.", key);
	tbx_reply_body(c->rep, stripe_obj_str(rec, "body"), strlen(stripe_obj_str(rec, "body")));
	c->rep->status = (int)stripe_obj_int(rec, "status");
	snprintf(c->rep->content_type, sizeof(c->rep->content_type), "application/json");
	tbx_reply_header(c->rep, "Idempotent-Replayed", "true");
	return 1;
}

static void idempotency_store(struct stripe_ctx *c, const char *slot, const char *digest)
{
	struct json_object *rec = json_object_new_object();

	json_object_object_add(rec, "method", json_object_new_string(c->method));
	json_object_object_add(rec, "path", json_object_new_string(c->req->target));
	json_object_object_add(rec, "digest", json_object_new_string(digest));
	json_object_object_add(rec, "status", json_object_new_int(c->rep->status));
	json_object_object_add(rec, "body", json_object_new_string_len(c->rep->body ? c->rep->body : "",
									(int)c->rep->body_len));
	json_object_object_add(rec, "created", json_object_new_int64(c->now));
	tbx_service_put(c->svc, IDEMPOTENCY_KIND, slot, rec);
}

static int route(struct stripe_ctx *c)
{
	if (c->n >= 1 && strcmp(c->segs[0], "customers") == 0)
		return stripe_customers(c);
	if (c->n >= 1 && strcmp(c->segs[0], "payment_intents") == 0)
		return stripe_payment_intents(c);
	if (c->n >= 1 && strcmp(c->segs[0], "charges") == 0)
		return stripe_charges(c);
	if (c->n >= 1 && strcmp(c->segs[0], "refunds") == 0)
		return stripe_refunds(c);
	return 1;
}

static void unrecognized(struct stripe_ctx *c, const char *path)
{
	stripe_error(c, 404, "invalid_request_error", NULL, NULL,
		     "Unrecognized request URL (%s: %s). Please see https://stripe.com/docs or we can "
		     "help at https://support.stripe.com/.", c->method, path);
}

void tbx_stripe_handle(struct tbx_service *svc, const struct tbx_http_msg *req,
		       struct tbx_reply *rep)
{
	struct stripe_ctx c = { .svc = svc, .req = req, .rep = rep, .method = req->method };
	const char *q = strchr(req->target, '?'), *idem = NULL, *why = NULL, *version;
	size_t path_len = q ? (size_t)(q - req->target) : strlen(req->target);
	char *path = strndup(req->target, path_len), *segs[MAX_SEGS], key[300], request_id[32];
	char slot[700], digest[65];
	int n = 0, rc;

	c.now = (int64_t)time(NULL);
	c.segs = segs;
	stripe_id(request_id, sizeof(request_id), "req_", 14);
	if (!path) {
		stripe_error(&c, 500, "api_error", NULL, NULL, "out of memory");
		goto headers;
	}
	if (authenticate(&c, key, sizeof(key)) < 0)
		goto headers;
	/* GET and DELETE take their parameters in the query, the rest in a form body. */
	if (strcmp(c.method, "GET") == 0 || strcmp(c.method, "DELETE") == 0 || !req->body_len)
		rc = q ? tbx_form_parse(q + 1, strlen(q + 1), &c.params, &why) : 0;
	else
		rc = tbx_form_parse(req->body, req->body_len, &c.params, &why);
	if (rc < 0) {
		stripe_error(&c, 400, "invalid_request_error", NULL, NULL, "Invalid request: %s", why);
		goto headers;
	}
	if (!c.params)
		c.params = json_object_new_object();
	/* Split "/v1/a/b/c"; everything Stripe serves is under /v1. */
	if (strncmp(path, "/v1/", 4) == 0) {
		char *save = NULL;
		for (char *tok = strtok_r(path + 4, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
			if (n == MAX_SEGS) {
				n = 0;
				break;
			}
			segs[n++] = tok;
		}
	}
	c.n = n;
	idem = strcmp(c.method, "POST") == 0 ? tbx_http_header_get(req, "Idempotency-Key") : NULL;
	if (idem) {
		snprintf(slot, sizeof(slot), "%.64s:%.255s", key, idem);
		body_digest(req, digest);
		if (idempotency_replay(&c, slot, digest) != 0)
			goto headers;
	}
	if (n == 0 || route(&c) > 0) {
		char *full = strndup(req->target, path_len);
		unrecognized(&c, full ? full : "");
		free(full);
	}
	/* Stripe keeps results for replay except server errors, which a retry may fix. */
	if (idem && c.rep->status < 500)
		idempotency_store(&c, slot, digest);
headers:
	tbx_reply_header(rep, "Request-Id", "%s", request_id);
	version = tbx_http_header_get(req, "Stripe-Version");
	tbx_reply_header(rep, "Stripe-Version", "%s", version ? version : API_VERSION);
	if (idem)
		tbx_reply_header(rep, "Idempotency-Key", "%s", idem);
	json_object_put(c.params);
	free(path);
}
