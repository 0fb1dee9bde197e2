/* SPDX-License-Identifier: MIT */
/* The routes file (see routes.h and docs/twin.md). */
#include "routes.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "hostname.h"

static const char default_routes[] =
	"{\"policy\":\"strict\",\"services\":{\"stripe\":{\"twin\":\"stripe\","
	"\"hosts\":[\"api.stripe.com\"]}}}";

int tbx_policy_valid(const char *policy)
{
	return policy && (strcmp(policy, "strict") == 0 || strcmp(policy, "open") == 0);
}

void tbx_routes_free(struct tbx_routes *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->n_services; i++) {
		struct tbx_route_service *s = &cfg->services[i];
		for (size_t j = 0; j < s->n_hosts; j++)
			free(s->hosts[j]);
		free(s->hosts);
		free(s->name);
		free(s->upstream);
	}
	free(cfg->services);
	json_object_put(cfg->environments);
	json_object_put(cfg->resolve);
	free(cfg);
}

static int valid_service_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 63)
		return 0;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
			return 0;
	return 1;
}

static int parse_service(const char *name, struct json_object *spec, struct tbx_route_service *s)
{
	struct json_object *twin, *upstream, *hosts;

	if (!valid_service_name(name))
		return tbx_error_set(TBX_EINVAL, "service name \"%s\": use a-z, 0-9, - and _", name);
	s->name = strdup(name);
	if (!json_object_is_type(spec, json_type_object))
		return tbx_error_set(TBX_EINVAL, "service %s: expected an object", name);
	json_object_object_get_ex(spec, "twin", &twin);
	json_object_object_get_ex(spec, "upstream", &upstream);
	if (upstream && !twin) {
		const char *url = json_object_get_string(upstream);
		if (!url || (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0))
			return tbx_error_set(TBX_EINVAL, "service %s: upstream must be an http(s) URL", name);
		s->kind = TBX_TWIN_UPSTREAM;
		s->upstream = strdup(url);
		/* A trailing slash would double the one every request path starts with. */
		while (strlen(s->upstream) > 8 && s->upstream[strlen(s->upstream) - 1] == '/')
			s->upstream[strlen(s->upstream) - 1] = '\0';
	} else if (twin && !upstream && strcmp(json_object_get_string(twin), "stripe") == 0) {
		s->kind = TBX_TWIN_STRIPE;
	} else if (twin && !upstream && strcmp(json_object_get_string(twin), "rest") == 0) {
		s->kind = TBX_TWIN_REST;
	} else {
		return tbx_error_set(TBX_EINVAL,
				     "service %s: give either \"twin\": \"stripe\"|\"rest\" or \"upstream\": URL",
				     name);
	}
	if (!json_object_object_get_ex(spec, "hosts", &hosts) ||
	    !json_object_is_type(hosts, json_type_array) || json_object_array_length(hosts) == 0)
		return tbx_error_set(TBX_EINVAL, "service %s: \"hosts\" must be a non-empty array", name);
	s->n_hosts = json_object_array_length(hosts);
	if (!(s->hosts = calloc(s->n_hosts, sizeof(char *))))
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	for (size_t i = 0; i < s->n_hosts; i++) {
		const char *h = json_object_get_string(json_object_array_get_idx(hosts, i));
		if (!h || !(s->hosts[i] = strdup(h)) || tbx_hostname_canon(s->hosts[i]) < 0)
			return tbx_error_set(TBX_EINVAL, "service %s: bad host name \"%s\"", name,
					     h ? h : "");
	}
	return 0;
}

static int parse(struct json_object *root, struct tbx_routes *cfg)
{
	struct json_object *v, *services;
	int rc;

	if (!json_object_is_type(root, json_type_object))
		return tbx_error_set(TBX_EINVAL, "expected a JSON object");
	snprintf(cfg->policy, sizeof(cfg->policy), "strict");
	if (json_object_object_get_ex(root, "policy", &v)) {
		if (!tbx_policy_valid(json_object_get_string(v)))
			return tbx_error_set(TBX_EINVAL, "\"policy\" must be \"strict\" or \"open\"");
		snprintf(cfg->policy, sizeof(cfg->policy), "%s", json_object_get_string(v));
	}
	snprintf(cfg->canary_host, sizeof(cfg->canary_host), "canary.twinbox.invalid");
	if (json_object_object_get_ex(root, "canary_host", &v)) {
		snprintf(cfg->canary_host, sizeof(cfg->canary_host), "%s",
			 json_object_get_string(v) ? json_object_get_string(v) : "");
		if (tbx_hostname_canon(cfg->canary_host) < 0 || tbx_hostname_ip_family(cfg->canary_host))
			return tbx_error_set(TBX_EINVAL, "\"canary_host\" must be a host name");
	}
	if (!json_object_object_get_ex(root, "services", &services) ||
	    !json_object_is_type(services, json_type_object))
		return tbx_error_set(TBX_EINVAL, "\"services\" must be an object");
	cfg->services = calloc((size_t)json_object_object_length(services) + 1, sizeof(*cfg->services));
	if (!cfg->services)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	json_object_object_foreach(services, name, spec) {
		if ((rc = parse_service(name, spec, &cfg->services[cfg->n_services++])) < 0)
			return rc;
	}
	if (json_object_object_get_ex(root, "environments", &v)) {
		if (!json_object_is_type(v, json_type_object))
			return tbx_error_set(TBX_EINVAL, "\"environments\" must be an object");
		json_object_object_foreach(v, env, list) {
			if (!json_object_is_type(list, json_type_array))
				return tbx_error_set(TBX_EINVAL, "environment %s: expected an array", env);
			for (size_t i = 0; i < json_object_array_length(list); i++) {
				const char *sn = json_object_get_string(json_object_array_get_idx(list, i));
				if (!sn || !tbx_routes_service(cfg, sn))
					return tbx_error_set(TBX_EINVAL, "environment %s: no service \"%s\"",
							     env, sn ? sn : "");
			}
		}
		cfg->environments = json_object_get(v);
	}
	if (json_object_object_get_ex(root, "resolve", &v)) {
		if (!json_object_is_type(v, json_type_object))
			return tbx_error_set(TBX_EINVAL, "\"resolve\" must be an object");
		json_object_object_foreach(v, host, ip) {
			if (!json_object_get_string(ip) || !tbx_hostname_ip_family(json_object_get_string(ip)))
				return tbx_error_set(TBX_EINVAL, "resolve %s: expected an IP address", host);
		}
		cfg->resolve = json_object_get(v);
	}
	return 0;
}

int tbx_routes_load(const char *path, struct tbx_routes **out)
{
	struct tbx_routes *cfg = calloc(1, sizeof(*cfg));
	struct json_object *root;
	int rc;

	if (!cfg)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	root = path ? json_object_from_file(path) : json_tokener_parse(default_routes);
	if (!root) {
		free(cfg);
		return tbx_error_set(TBX_EINVAL, "cannot read routes file %s: %s", path,
				     json_util_get_last_err());
	}
	rc = parse(root, cfg);
	json_object_put(root);
	if (rc < 0) {
		tbx_routes_free(cfg);
		return path ? tbx_error_prefix("routes file %s", path) : rc;
	}
	*out = cfg;
	return 0;
}

const struct tbx_route_service *tbx_routes_service(const struct tbx_routes *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->n_services; i++)
		if (cfg->services[i].name && strcmp(cfg->services[i].name, name) == 0)
			return &cfg->services[i];
	return NULL;
}

struct json_object *tbx_routes_environment(const struct tbx_routes *cfg, const char *env)
{
	struct json_object *list, *names;
	char buf[512], *save = NULL;

	if (cfg->environments && json_object_object_get_ex(cfg->environments, env, &list))
		return json_object_get(list);
	names = json_object_new_array();
	if (strcmp(env, "default") == 0) {
		for (size_t i = 0; i < cfg->n_services; i++)
			json_object_array_add(names, json_object_new_string(cfg->services[i].name));
		return names;
	}
	if (strlen(env) >= sizeof(buf))
		goto unknown;
	snprintf(buf, sizeof(buf), "%s", env);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!tbx_routes_service(cfg, tok))
			goto unknown;
		json_object_array_add(names, json_object_new_string(tok));
	}
	if (json_object_array_length(names) > 0)
		return names;
unknown:
	json_object_put(names);
	return NULL;
}

const char *tbx_routes_resolve(const struct tbx_routes *cfg, const char *host)
{
	struct json_object *ip;

	if (cfg->resolve && json_object_object_get_ex(cfg->resolve, host, &ip))
		return json_object_get_string(ip);
	return NULL;
}
