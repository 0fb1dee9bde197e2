/* SPDX-License-Identifier: MIT */
/*
 * E2B engine settings. Keys of the "e2b" section of config.json win over the
 * environment variables the official SDK reads (E2B_API_KEY, E2B_DOMAIN,
 * E2B_API_URL, E2B_SANDBOX_URL), which keep the SDK's meaning; the template
 * comes from VERIS_E2B_TEMPLATE as in the seeds, else E2B's base image.
 */
#define _GNU_SOURCE
#include "e2b.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *e2b_setting(struct tbx_e2b *e, struct tbx_call *call, const char *key,
			       const char *env)
{
	const char *v = e->host->config_get(call, key);

	if (v && *v)
		return v;
	v = env ? getenv(env) : NULL;
	return v && *v ? v : NULL;
}

static char *e2b_dup(struct tbx_e2b *e, const char *s)
{
	return s ? e->host->strdup(s) : NULL;
}

/* A whole number config value in [min, max]; \p def when absent. */
static int e2b_number(struct tbx_e2b *e, struct tbx_call *call, const char *key, long def,
		      long min, long max, long *out)
{
	const char *v = e->host->config_get(call, key);
	char *end;
	long n;

	if (!v || !*v) {
		*out = def;
		return 0;
	}
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < min || n > max)
		return e->host->error_set(call, TBX_EINVAL,
					  "config backends.e2b.%s must be a whole number from %ld "
					  "to %ld, not '%s'",
					  key, min, max, v);
	*out = n;
	return 0;
}

static int e2b_url_ok(const char *url)
{
	return strncmp(url, "https://", 8) == 0 || strncmp(url, "http://", 7) == 0;
}

int e2b_config_load(struct tbx_e2b *e, struct tbx_call *call)
{
	const struct tbx_host_api *host = e->host;
	const char *key = e2b_setting(e, call, "api_key", "E2B_API_KEY");
	const char *domain = e2b_setting(e, call, "domain", "E2B_DOMAIN");
	const char *api_url = e2b_setting(e, call, "api_url", "E2B_API_URL");
	const char *sandbox_url = e2b_setting(e, call, "sandbox_url", "E2B_SANDBOX_URL");
	const char *tpl = e2b_setting(e, call, "template", "VERIS_E2B_TEMPLATE");
	const char *user = e2b_setting(e, call, "user", NULL);
	long n;
	int ret;

	if (!key)
		return host->error_set(call, TBX_EAUTH,
				       "E2B_API_KEY is not set: create a key at "
				       "https://e2b.dev/dashboard?tab=keys and export it before "
				       "starting twinboxd");
	if (strpbrk(key, "\r\n"))
		return host->error_set(call, TBX_EAUTH, "E2B_API_KEY contains a line break");
	e->domain = e2b_dup(e, domain ? domain : E2B_DEFAULT_DOMAIN);
	if (api_url) {
		e->api_url = e2b_dup(e, api_url);
	} else if (e->domain) {
		size_t len = strlen(e->domain) + sizeof("https://api.");

		if ((e->api_url = host->alloc(len)))
			snprintf(e->api_url, len, "https://api.%s", e->domain);
	}
	e->sandbox_url = e2b_dup(e, sandbox_url);
	e->template_id = e2b_dup(e, tpl ? tpl : E2B_DEFAULT_TEMPLATE);
	e->user = e2b_dup(e, user ? user : E2B_DEFAULT_USER);
	e->api_key_copy = e2b_dup(e, key);
	if (!e->domain || !e->api_url || (sandbox_url && !e->sandbox_url) || !e->template_id ||
	    !e->user || !e->api_key_copy)
		return host->error_set(call, TBX_ENOMEM, "out of memory");
	if (!e2b_url_ok(e->api_url))
		return host->error_set(call, TBX_EINVAL,
				       "the E2B API URL '%s' (E2B_API_URL or backends.e2b.api_url) "
				       "must start with https:// or http://",
				       e->api_url);
	if (e->sandbox_url && !e2b_url_ok(e->sandbox_url))
		return host->error_set(call, TBX_EINVAL,
				       "the envd URL '%s' (E2B_SANDBOX_URL or backends.e2b.sandbox_url) "
				       "must start with https:// or http://",
				       e->sandbox_url);
	{
		size_t len = strlen(key) + sizeof("X-API-KEY: ");
		char *line = host->alloc(len);
		struct curl_slist *h;

		if (!line)
			return host->error_set(call, TBX_ENOMEM, "out of memory");
		snprintf(line, len, "X-API-KEY: %s", key);
		h = curl_slist_append(NULL, line);
		explicit_bzero(line, len);
		host->free(line);
		if (!h)
			return host->error_set(call, TBX_ENOMEM, "out of memory");
		e->api_headers = h;
	}
	if ((ret = e2b_number(e, call, "timeout_s", E2B_DEFAULT_TIMEOUT_S, 1, 86400, &n)) < 0)
		return ret;
	e->timeout_s = (uint32_t)n;
	if ((ret = e2b_number(e, call, "request_timeout_ms", 60000, 100, 3600000, &n)) < 0)
		return ret;
	e->request_timeout_ms = n;
	if ((ret = e2b_number(e, call, "stream_stall_ms", 60000, 0, 3600000, &n)) < 0)
		return ret;
	e->stall_ms = n;
	if ((ret = e2b_number(e, call, "retry_attempts", 4, 1, 20, &n)) < 0)
		return ret;
	e->retry.attempts = (unsigned)n;
	if ((ret = e2b_number(e, call, "retry_base_ms", 250, 0, 60000, &n)) < 0)
		return ret;
	e->retry.base_ms = (unsigned)n;
	if ((ret = e2b_number(e, call, "retry_max_ms", 4000, 0, 600000, &n)) < 0)
		return ret;
	e->retry.max_ms = (unsigned)n;
	if ((ret = e2b_number(e, call, "retry_budget_ms", 30000, 0, 3600000, &n)) < 0)
		return ret;
	e->retry.budget_ms = (unsigned)n;
	return 0;
}

void e2b_config_release(struct tbx_e2b *e)
{
	const struct tbx_host_api *host = e->host;

	if (e->api_key_copy) {
		explicit_bzero(e->api_key_copy, strlen(e->api_key_copy));
		host->free(e->api_key_copy);
	}
	for (struct curl_slist *s = e->api_headers; s; s = s->next)
		explicit_bzero(s->data, strlen(s->data));
	curl_slist_free_all(e->api_headers);
	host->free(e->api_url);
	host->free(e->domain);
	host->free(e->sandbox_url);
	host->free(e->template_id);
	host->free(e->user);
	e->api_headers = NULL;
	e->api_key_copy = e->api_url = e->domain = e->sandbox_url = e->template_id = e->user = NULL;
}
