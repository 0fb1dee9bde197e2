/* SPDX-License-Identifier: MIT */
/*
 * What envd needs per sandbox (its access token and domain), remembered from
 * create/connect answers so file and exec calls need no API round trip; after
 * a daemon restart it is fetched again with GET /sandboxes/{id}.
 */
#define _GNU_SOURCE
#include "e2b.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envd-base64.h"

int e2b_id_valid(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	if (!n || n > E2B_ID_MAX)
		return 0;
	/* [a-z0-9], plus the legacy "<id>-<clientID>" form. */
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9') ||
		      (id[i] == '-' && i > 0 && i + 1 < n)))
			return 0;
	return 1;
}

static struct e2b_sbx *e2b_cache_find(struct tbx_e2b *e, const char *id)
{
	for (struct e2b_sbx *s = e->sandboxes; s; s = s->next)
		if (strcmp(s->id, id) == 0)
			return s;
	return NULL;
}

static const char *e2b_json_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static void e2b_sbx_free(const struct tbx_host_api *host, struct e2b_sbx *s)
{
	if (s->token) {
		explicit_bzero(s->token, strlen(s->token));
		host->free(s->token);
	}
	host->free(s->domain);
	host->free(s);
}

int e2b_cache_put(struct tbx_e2b *e, const char *id, struct json_object *sandbox)
{
	const char *token = e2b_json_str(sandbox, "envdAccessToken");
	const char *domain = e2b_json_str(sandbox, "domain");
	struct e2b_sbx *s, *old;

	if (!e2b_id_valid(id))
		return -1;
	s = e->host->alloc(sizeof(*s));
	if (!s)
		return -1;
	memset(s, 0, sizeof(*s));
	snprintf(s->id, sizeof(s->id), "%s", id);
	s->token = token && *token ? e->host->strdup(token) : NULL;
	s->domain = domain && *domain ? e->host->strdup(domain) : NULL;
	if ((token && *token && !s->token) || (domain && *domain && !s->domain)) {
		e2b_sbx_free(e->host, s);
		return -1;
	}
	pthread_mutex_lock(&e->lock);
	old = e2b_cache_find(e, id);
	if (old) {
		/* Swap the contents so pointers to the node stay valid. */
		char *t = old->token, *d = old->domain;

		old->token = s->token;
		old->domain = s->domain;
		s->token = t;
		s->domain = d;
	} else {
		s->next = e->sandboxes;
		e->sandboxes = s;
		s = NULL;
	}
	pthread_mutex_unlock(&e->lock);
	if (s)
		e2b_sbx_free(e->host, s);
	return 0;
}

void e2b_cache_drop(struct tbx_e2b *e, const char *id)
{
	struct e2b_sbx **pp, *s = NULL;

	pthread_mutex_lock(&e->lock);
	for (pp = &e->sandboxes; *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->id, id) == 0) {
			s = *pp;
			*pp = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&e->lock);
	if (s)
		e2b_sbx_free(e->host, s);
}

void e2b_cache_release(struct tbx_e2b *e)
{
	while (e->sandboxes) {
		struct e2b_sbx *s = e->sandboxes;

		e->sandboxes = s->next;
		e2b_sbx_free(e->host, s);
	}
}

/* Copies of the cached token and domain; 1 found, 0 not cached, -1 out of memory. */
static int e2b_cache_get(struct tbx_e2b *e, const char *id, char **token, char **domain)
{
	struct e2b_sbx *s;
	int ret = 0;

	*token = *domain = NULL;
	pthread_mutex_lock(&e->lock);
	s = e2b_cache_find(e, id);
	if (s) {
		ret = 1;
		if (s->token && !(*token = e->host->strdup(s->token)))
			ret = -1;
		if (s->domain && !(*domain = e->host->strdup(s->domain)))
			ret = -1;
	}
	pthread_mutex_unlock(&e->lock);
	return ret;
}

char *e2b_cache_domain(struct tbx_e2b *e, const char *id)
{
	char *token, *domain;

	if (e2b_cache_get(e, id, &token, &domain) < 0) {
		e->host->free(token);
		e->host->free(domain);
		return NULL;
	}
	if (token) {
		explicit_bzero(token, strlen(token));
		e->host->free(token);
	}
	return domain ? domain : e->host->strdup(e->domain);
}

/* Headers every envd request of one sandbox carries. -1 on out of memory. */
static int e2b_envd_headers(struct tbx_e2b *e, struct tbx_envd_client *c, const char *id)
{
	char line[E2B_ID_MAX + 64], *b64, *raw;
	size_t n = strlen(e->user) + 2;
	int ret;

	/* The edge proxy routes on these when the host is shared (E2B_SANDBOX_URL). */
	snprintf(line, sizeof(line), "E2b-Sandbox-Id: %s", id);
	if (tbx_envd_client_header_add(c, line) < 0)
		return -1;
	snprintf(line, sizeof(line), "E2b-Sandbox-Port: %d", E2B_ENVD_PORT);
	if (tbx_envd_client_header_add(c, line) < 0)
		return -1;
	/* RPCs run as the Basic-auth user with an empty password. */
	if (!(raw = malloc(n)))
		return -1;
	snprintf(raw, n, "%s:", e->user);
	b64 = tbx_envd_base64_encode(raw, strlen(raw));
	free(raw);
	if (!b64)
		return -1;
	n = strlen(b64) + sizeof("Authorization: Basic ");
	if (!(raw = malloc(n))) {
		free(b64);
		return -1;
	}
	snprintf(raw, n, "Authorization: Basic %s", b64);
	ret = tbx_envd_client_header_add(c, raw);
	free(raw);
	free(b64);
	return ret;
}

int e2b_envd_client(struct tbx_e2b *e, struct tbx_call *call, const char *id,
		    struct tbx_envd_client **out)
{
	char *token = NULL, *domain = NULL, *base = NULL;
	struct tbx_envd_client *c = NULL;
	int found, ret;

	*out = NULL;
	if (!e2b_id_valid(id))
		return e->host->error_set(call, TBX_EINVAL, "'%s' is not an E2B sandbox id", id);
	found = e2b_cache_get(e, id, &token, &domain);
	if (found < 0) {
		ret = e->host->error_set(call, TBX_ENOMEM, "out of memory");
		goto done;
	}
	if (!found) {
		struct json_object *detail = NULL, *st;
		int paused;

		if ((ret = e2b_sandbox_get(e, call, id, &detail)) < 0)
			goto done;
		paused = json_object_object_get_ex(detail, "state", &st) &&
			 strcmp(json_object_get_string(st), "paused") == 0;
		ret = paused ? 0 : e2b_cache_put(e, id, detail);
		json_object_put(detail);
		if (paused) {
			ret = e->host->error_set(call, TBX_EPAUSED, "sandbox %s is paused", id);
			goto done;
		}
		if (ret < 0 || e2b_cache_get(e, id, &token, &domain) < 0) {
			ret = e->host->error_set(call, TBX_ENOMEM, "out of memory");
			goto done;
		}
	}
	if (e->sandbox_url) {
		base = e->host->strdup(e->sandbox_url);
	} else {
		const char *d = domain ? domain : e->domain;
		size_t n = strlen(id) + strlen(d) + 32;

		if ((base = e->host->alloc(n)))
			snprintf(base, n, "https://%d-%s.%s", E2B_ENVD_PORT, id, d);
	}
	if (!base || !(c = tbx_envd_client_new(e->host, base, NULL)) ||
	    e2b_envd_headers(e, c, id) < 0 || tbx_envd_client_set_auth(c, e->user, token) < 0) {
		ret = e->host->error_set(call, TBX_ENOMEM, "out of memory");
		goto done;
	}
	tbx_envd_client_set_share(c, e->share);
	tbx_envd_client_set_retry(c, &e->retry);
	tbx_envd_client_set_timeout(c, e->request_timeout_ms);
	tbx_envd_client_set_stall_timeout(c, e->stall_ms);
	*out = c;
	c = NULL;
	ret = 0;
done:
	tbx_envd_client_free(c);
	if (token) {
		explicit_bzero(token, strlen(token));
		e->host->free(token);
	}
	e->host->free(domain);
	e->host->free(base);
	return ret;
}
