/* SPDX-License-Identifier: MIT */
/* A session's twin over the control plane: create, look up, credential, delete, request logs. */
#define _GNU_SOURCE
#include "twin-ops.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "twin-service.h"

/* The trust variables a credential may set (ANCHORS §3); anything else it names is dropped. */
static const char *const trust_names[] = {
	"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
	"AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO", "DENO_CERT", "PIP_CERT", "npm_config_cafile",
	"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", "BUNDLE_SSL_CA_CERT", "COMPOSER_CAFILE",
	"HEX_CACERTS_PATH", "JULIA_SSL_CA_ROOTS_PATH", "NIX_SSL_CERT_FILE",
	"PERL_LWP_SSL_CA_FILE", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", "NODE_EXTRA_CA_CERTS",
};

void tbx_twin_credential_clear(struct tbx_twin_credential *c)
{
	if (c->password)
		explicit_bzero(c->password, strlen(c->password));
	free(c->username);
	free(c->password);
	free(c->socks_address);
	free(c->connect_address);
	free(c->ca_pem);
	free(c->canary_host);
	json_object_put(c->trust_env);
	memset(c, 0, sizeof(*c));
}

static const char *json_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* A new reference to o[key], or NULL. */
static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return json_object_object_get_ex(o, key, &v) ? json_object_get(v) : NULL;
}

/* The error message of a control-plane answer, for our own message. */
static const char *answer_message(struct json_object *body)
{
	struct json_object *err;
	const char *m;

	if (body && json_object_object_get_ex(body, "error", &err) &&
	    (m = json_str(err, "message")))
		return m;
	return json_str(body, "message") ? json_str(body, "message") : "no message";
}

#define ALNUM "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

/* Twin ids and environments go into URL paths: only characters that need no escaping. */
static int path_safe(const char *s)
{
	return s && *s && *s != '.' && strlen(s) <= 128 && strspn(s, ALNUM "_-.,") == strlen(s);
}

/* A trust path as the sandbox will see it: absolute and plain. */
static int trust_path_safe(const char *p)
{
	return p && p[0] == '/' && strlen(p) <= 256 && !strstr(p, "/../") && !strstr(p, "/./") &&
	       strspn(p, ALNUM "_-./") == strlen(p);
}

/* The canary host goes into a shell command: a plain host name only. */
static int host_safe(const char *h)
{
	return h && *h && strlen(h) <= 253 && strspn(h, ALNUM ".-") == strlen(h);
}

int tbx_twin_create(struct tbx_twin_service *svc, const char *env, const char *session_id,
		    char **id_out)
{
	struct json_object *body = json_object_new_object(), *meta = json_object_new_object();
	struct json_object *answer = NULL;
	char path[512];
	long status;
	int rc;

	*id_out = NULL;
	if (!path_safe(env)) {
		json_object_put(body);
		json_object_put(meta);
		return tbx_error_set(TBX_EINVAL, "the twin environment '%s' is not a valid id", env);
	}
	snprintf(path, sizeof(path), "/v1/environments/%s/sandboxes", env);
	json_object_object_add(meta, "twinbox_session", json_object_new_string(session_id));
	json_object_object_add(body, "metadata", meta);
	rc = tbx_twin_call(svc, "POST", path, body, &status, &answer);
	json_object_put(body);
	if (rc < 0)
		return rc;
	if (status == 404)
		rc = tbx_error_set(TBX_ENOENT, "the twin service has no environment '%s' (%s); set "
				   "\"environment\" in config.json or VERIS_ENVIRONMENT_ID", env,
				   answer_message(answer));
	else if (status < 200 || status >= 300)
		rc = tbx_error_set(TBX_EUNAVAIL, "the twin service refused to make a twin "
				   "(HTTP %ld: %s)", status, answer_message(answer));
	else if (!path_safe(json_str(answer, "id")))
		rc = tbx_error_set(TBX_EPROTO, "the twin service made a twin without a usable id");
	else if (!(*id_out = strdup(json_str(answer, "id"))))
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
	json_object_put(answer);
	return rc;
}

/* GET /v1/sandboxes/{id}: the twin, or TBX_EGONE. */
static int twin_get(struct tbx_twin_service *svc, const char *twin_id, struct json_object **out)
{
	char path[256];
	long status;
	int rc;

	*out = NULL;
	if (!path_safe(twin_id))
		return tbx_error_set(TBX_EINVAL, "'%s' is not a twin id", twin_id);
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", twin_id);
	if ((rc = tbx_twin_call(svc, "GET", path, NULL, &status, out)) < 0)
		return rc;
	if (status == 404)
		rc = tbx_error_set(TBX_EGONE, "twin %s is gone", twin_id);
	else if (status < 200 || status >= 300 || !*out)
		rc = tbx_error_set(TBX_EUNAVAIL, "the twin service did not show twin %s "
				   "(HTTP %ld: %s)", twin_id, status, answer_message(*out));
	if (rc < 0) {
		json_object_put(*out);
		*out = NULL;
	}
	return rc;
}

int tbx_twin_environment(struct tbx_twin_service *svc, const char *twin_id, char **env_out)
{
	struct json_object *twin;
	const char *env;
	int rc;

	*env_out = NULL;
	if ((rc = twin_get(svc, twin_id, &twin)) < 0)
		return rc;
	env = json_str(twin, "environment_id");
	if (!path_safe(env))
		rc = tbx_error_set(TBX_EPROTO, "twin %s has no usable environment id", twin_id);
	else if (!(*env_out = strdup(env)))
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
	json_object_put(twin);
	return rc;
}

/* Keep the trust variables we know, with plain absolute paths. */
static struct json_object *trust_filter(struct json_object *served)
{
	struct json_object *out = json_object_new_object();

	for (size_t i = 0; i < sizeof(trust_names) / sizeof(trust_names[0]); i++) {
		const char *p = json_str(served, trust_names[i]);
		if (trust_path_safe(p))
			json_object_object_add(out, trust_names[i], json_object_new_string(p));
	}
	return out;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int tbx_twin_credential(struct tbx_twin_service *svc, const char *env, const char *twin_id,
			struct tbx_twin_credential *out)
{
	struct json_object *answer = NULL, *trust = NULL;
	char path[512];
	long status;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!path_safe(env) || !path_safe(twin_id))
		return tbx_error_set(TBX_EINVAL, "bad twin id or environment");
	snprintf(path, sizeof(path), "/v1/environments/%s/sandboxes/%s/egress-credential", env,
		 twin_id);
	if ((rc = tbx_twin_call(svc, "POST", path, NULL, &status, &answer)) < 0)
		return rc;
	if (status == 404) {
		rc = tbx_error_set(TBX_ENOTSUP, "the twin service offers no gateway egress for twin %s "
				   "(%s)", twin_id, answer_message(answer));
		goto out;
	}
	if (status < 200 || status >= 300) {
		rc = tbx_error_set(TBX_EUNAVAIL, "the twin service gave no egress credential for twin "
				   "%s (HTTP %ld: %s)", twin_id, status, answer_message(answer));
		goto out;
	}
	if (!json_str(answer, "username") || !json_str(answer, "password") ||
	    !json_str(answer, "socks_address") || !json_str(answer, "ca_pem") ||
	    !host_safe(json_str(answer, "canary_host"))) {
		rc = tbx_error_set(TBX_EPROTO, "the egress credential for twin %s lacks a username, "
				   "password, SOCKS address, CA or canary host", twin_id);
		goto out;
	}
	json_object_object_get_ex(answer, "trust_env", &trust);
	out->username = dup_or_null(json_str(answer, "username"));
	out->password = dup_or_null(json_str(answer, "password"));
	out->socks_address = dup_or_null(json_str(answer, "socks_address"));
	out->connect_address = dup_or_null(json_str(answer, "connect_address"));
	out->ca_pem = dup_or_null(json_str(answer, "ca_pem"));
	out->canary_host = dup_or_null(json_str(answer, "canary_host"));
	out->trust_env = trust_filter(trust);
	if (!out->username || !out->password || !out->socks_address || !out->ca_pem ||
	    !out->canary_host) {
		tbx_twin_credential_clear(out);
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
	}
out:
	{
		/* The answer holds the password: do not leave it in freed memory. */
		struct json_object *pw;
		if (answer && json_object_object_get_ex(answer, "password", &pw) &&
		    json_object_is_type(pw, json_type_string))
			explicit_bzero((char *)json_object_get_string(pw),
				       (size_t)json_object_get_string_len(pw));
	}
	json_object_put(answer);
	return rc;
}

int tbx_twin_delete(struct tbx_twin_service *svc, const char *twin_id)
{
	struct json_object *answer = NULL;
	char *env = NULL, path[512];
	long status;
	int rc;

	/* Veris deletes under the twin's environment, which only the twin knows. */
	rc = tbx_twin_environment(svc, twin_id, &env);
	if (rc == TBX_EGONE) {
		tbx_error_clear();
		return 0;
	}
	if (rc < 0)
		return rc;
	snprintf(path, sizeof(path), "/v1/environments/%s/sandboxes/%s", env, twin_id);
	free(env);
	if ((rc = tbx_twin_call(svc, "DELETE", path, NULL, &status, &answer)) < 0)
		return rc;
	if (status != 404 && (status < 200 || status >= 300))
		rc = tbx_error_set(TBX_EUNAVAIL, "the twin service did not delete twin %s "
				   "(HTTP %ld: %s)", twin_id, status, answer_message(answer));
	json_object_put(answer);
	return rc;
}

/* The hosts a service answers, from its routes: ["api.stripe.com"]. */
static struct json_object *service_hosts(struct json_object *service)
{
	struct json_object *hosts = json_object_new_array(), *routes;
	const char *h;

	if (json_object_object_get_ex(service, "routes", &routes) &&
	    json_object_is_type(routes, json_type_array))
		for (size_t i = 0; i < json_object_array_length(routes); i++)
			if ((h = json_str(json_object_array_get_idx(routes, i), "host")))
				json_object_array_add(hosts, json_object_new_string(h));
	return hosts;
}

/* One service's log after since_id. */
static int service_requests(struct tbx_twin_service *svc, struct json_object *service,
			    int64_t since_id, int limit, struct json_object **out)
{
	struct json_object *answer = NULL, *entries, *v, *o;
	const char *control = json_str(service, "control_url");
	char url[2048];
	long status;
	size_t n;
	int rc;

	*out = NULL;
	if (!control)
		return tbx_error_set(TBX_EPROTO, "service %s has no control_url",
				     json_str(service, "name") ? json_str(service, "name") : "?");
	snprintf(url, sizeof(url), "%s/veris/requests?order=asc&limit=%d&since_id=%lld", control,
		 limit, (long long)since_id);
	if ((rc = tbx_twin_call(svc, "GET", url, NULL, &status, &answer)) < 0)
		return rc;
	if (status < 200 || status >= 300 ||
	    !json_object_object_get_ex(answer, "requests", &entries) ||
	    !json_object_is_type(entries, json_type_array)) {
		rc = tbx_error_set(TBX_EUNAVAIL, "the request log of service %s was not served "
				   "(HTTP %ld: %s)", json_str(service, "name"), status,
				   answer_message(answer));
		json_object_put(answer);
		return rc;
	}
	o = json_object_new_object();
	json_object_object_add(o, "name", member(service, "name"));
	json_object_object_add(o, "hosts", service_hosts(service));
	json_object_object_add(o, "requests", json_object_get(entries));
	json_object_object_add(o, "has_more", member(answer, "has_more"));
	/* The next call's since: the newest id seen, or the one it was given. */
	n = json_object_array_length(entries);
	if (n && json_object_object_get_ex(json_object_array_get_idx(entries, n - 1), "id", &v))
		since_id = json_object_get_int64(v);
	json_object_object_add(o, "last_id", json_object_new_int64(since_id));
	json_object_put(answer);
	*out = o;
	return 0;
}

int tbx_twin_requests(struct tbx_twin_service *svc, const char *twin_id,
		      struct json_object *since, int limit, struct json_object **out)
{
	struct json_object *twin = NULL, *services, *list, *res, *v;
	int rc;

	*out = NULL;
	if ((rc = twin_get(svc, twin_id, &twin)) < 0)
		return rc;
	list = json_object_new_array();
	if (json_object_object_get_ex(twin, "services", &services) &&
	    json_object_is_type(services, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(services) && rc == 0; i++) {
			struct json_object *service = json_object_array_get_idx(services, i), *entry;
			const char *name = json_str(service, "name");
			int64_t since_id = 0;

			if (name && since && json_object_object_get_ex(since, name, &v))
				since_id = json_object_get_int64(v);
			if ((rc = service_requests(svc, service, since_id, limit, &entry)) == 0)
				json_object_array_add(list, entry);
		}
	}
	if (rc < 0) {
		json_object_put(list);
		json_object_put(twin);
		return rc;
	}
	res = json_object_new_object();
	json_object_object_add(res, "twin_id", json_object_new_string(twin_id));
	json_object_object_add(res, "environment_id", member(twin, "environment_id"));
	json_object_object_add(res, "services", list);
	json_object_put(twin);
	*out = res;
	return 0;
}
