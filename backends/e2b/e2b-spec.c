/* SPDX-License-Identifier: MIT */
/*
 * The create request (NewSandboxV2) from a twinbox sandbox spec: template,
 * an explicit timeout (v1's default is 15 s), autoPause for pause-on-timeout,
 * labels as metadata so twinbox finds its own sandboxes, env, network, and the
 * egress proxy the twin provides (E2B takes a SOCKS5 proxy).
 */
#define _GNU_SOURCE
#include "e2b.h"

#include <stdlib.h>
#include <string.h>

int e2b_env_safe(struct tbx_e2b *e, struct tbx_call *call, const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t kl = eq ? (size_t)(eq - kv) : strlen(kv);

	/* The API key stays on this machine, whatever a caller passes along. */
	if ((kl == sizeof("E2B_API_KEY") - 1 && strncmp(kv, "E2B_API_KEY", kl) == 0) ||
	    (eq && e->api_key_copy && *e->api_key_copy && strstr(eq + 1, e->api_key_copy))) {
		e->host->log(call, TBX_LOG_WARN,
			     "not passing %.*s into an E2B sandbox: it would carry the E2B API key",
			     (int)(kl > 64 ? 64 : kl), kv);
		return 0;
	}
	return 1;
}

/* "socks5://user:pass@host:port" → {"address":"host:port","username","password"}. */
static struct json_object *e2b_egress(struct tbx_e2b *e, struct tbx_call *call, const char *url,
				      int *err)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *hostpart = NULL, *port = NULL, *user = NULL, *pass = NULL;
	struct json_object *o = NULL;

	*err = 0;
	if (!u) {
		*err = e->host->error_set(call, TBX_ENOMEM, "out of memory");
		return NULL;
	}
	if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &hostpart, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK) {
		*err = e->host->error_set(call, TBX_EINVAL,
					  "the egress proxy URL is not of the form "
					  "socks5://[user:password@]host:port");
		goto done;
	}
	if (strcmp(scheme, "socks5") != 0 && strcmp(scheme, "socks5h") != 0) {
		*err = e->host->error_set(call, TBX_ENOTSUP,
					  "E2B sandboxes take a SOCKS5 egress proxy, not %s://", scheme);
		goto done;
	}
	curl_url_get(u, CURLUPART_USER, &user, CURLU_URLDECODE);
	curl_url_get(u, CURLUPART_PASSWORD, &pass, CURLU_URLDECODE);
	o = json_object_new_object();
	if (o) {
		size_t n = strlen(hostpart) + strlen(port) + 2;
		char *addr = malloc(n);

		if (addr) {
			snprintf(addr, n, "%s:%s", hostpart, port);
			json_object_object_add(o, "address", json_object_new_string(addr));
			free(addr);
		}
		if (user && *user)
			json_object_object_add(o, "username", json_object_new_string(user));
		if (pass && *pass)
			json_object_object_add(o, "password", json_object_new_string(pass));
	}
	if (!o)
		*err = e->host->error_set(call, TBX_ENOMEM, "out of memory");
done:
	if (pass)
		explicit_bzero(pass, strlen(pass));
	curl_free(scheme);
	curl_free(hostpart);
	curl_free(port);
	curl_free(user);
	curl_free(pass);
	curl_url_cleanup(u);
	return o;
}

struct json_object *e2b_spec_body(struct tbx_e2b *e, struct tbx_call *call,
				  const struct tbx_sandbox_spec *spec, const char *nonce, int *err)
{
	struct json_object *body = json_object_new_object();
	struct json_object *meta = json_object_new_object(), *envs = json_object_new_object();
	const char *tpl = spec->template_id && *spec->template_id ? spec->template_id : e->template_id;
	uint32_t timeout = spec->timeout_s ? spec->timeout_s : e->timeout_s;

	*err = 0;
	if (!body || !meta || !envs) {
		json_object_put(body);
		json_object_put(meta);
		json_object_put(envs);
		*err = e->host->error_set(call, TBX_ENOMEM, "out of memory");
		return NULL;
	}
	json_object_object_add(body, "templateID", json_object_new_string(tpl));
	json_object_object_add(body, "timeout", json_object_new_int64(timeout));
	json_object_object_add(body, "autoPause",
			       json_object_new_boolean(!!(spec->flags & TBX_SANDBOX_PAUSE_ON_TIMEOUT)));
	for (size_t i = 0; spec->labels && spec->labels[i]; i++) {
		const char *eq = strchr(spec->labels[i], '=');
		char *k = strndup(spec->labels[i], eq ? (size_t)(eq - spec->labels[i])
						      : strlen(spec->labels[i]));

		if (k && *k)
			json_object_object_add(meta, k, json_object_new_string(eq ? eq + 1 : ""));
		free(k);
	}
	/* Finds the sandbox again if the answer to this create is lost (e2b-lifecycle.c). */
	json_object_object_add(meta, "twinbox.create", json_object_new_string(nonce));
	json_object_object_add(body, "metadata", meta);
	for (size_t i = 0; spec->env && spec->env[i]; i++) {
		const char *eq = strchr(spec->env[i], '=');
		char *k;

		if (!eq || eq == spec->env[i] || !e2b_env_safe(e, call, spec->env[i]))
			continue;
		if ((k = strndup(spec->env[i], (size_t)(eq - spec->env[i]))))
			json_object_object_add(envs, k, json_object_new_string(eq + 1));
		free(k);
	}
	json_object_object_add(body, "envVars", envs);
	if (spec->egress_proxy_url && *spec->egress_proxy_url) {
		struct json_object *proxy = e2b_egress(e, call, spec->egress_proxy_url, err);
		struct json_object *net;

		if (!proxy) {
			json_object_put(body);
			return NULL;
		}
		net = json_object_new_object();
		json_object_object_add(net, "egressProxy", proxy);
		json_object_object_add(body, "network", net);
	} else if (spec->flags & TBX_SANDBOX_NO_NETWORK) {
		json_object_object_add(body, "allow_internet_access", json_object_new_boolean(0));
	}
	return body;
}
