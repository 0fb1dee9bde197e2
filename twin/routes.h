/* SPDX-License-Identifier: MIT */
/*
 * The routes file: which services exist, which hosts each answers, what
 * answers them (a built-in twin or the user's own fake at an upstream URL),
 * which environments group them, the default egress policy, and a test-only
 * resolver override. Without a file, api.stripe.com goes to the Stripe twin.
 */
#ifndef TBX_ROUTES_H
#define TBX_ROUTES_H

#include <stddef.h>

struct json_object;

enum tbx_twin_kind {
	TBX_TWIN_STRIPE,   /* the built-in Stripe twin */
	TBX_TWIN_REST,     /* the built-in generic JSON REST twin */
	TBX_TWIN_UPSTREAM, /* forwarded to a URL the user runs */
};

struct tbx_route_service {
	char *name;
	enum tbx_twin_kind kind;
	char *upstream; /* base URL for TBX_TWIN_UPSTREAM */
	char **hosts;   /* canonical host names */
	size_t n_hosts;
};

struct tbx_routes {
	char policy[8]; /* "strict" or "open": the default for new twins */
	char canary_host[256];
	struct tbx_route_service *services;
	size_t n_services;
	struct json_object *environments; /* name -> [service names] */
	struct json_object *resolve;      /* host -> IP literal; tests only */
};

/* Load path, or the built-in default when path is NULL. 0 or a tbx_status with the error set. */
int tbx_routes_load(const char *path, struct tbx_routes **out);
void tbx_routes_free(struct tbx_routes *cfg);
const struct tbx_route_service *tbx_routes_service(const struct tbx_routes *cfg, const char *name);
/*
 * The services an environment id names: an entry of "environments", else a
 * comma-separated list of service names, "default" meaning all of them.
 * Returns a new JSON array of names, or NULL when the id names nothing known.
 */
struct json_object *tbx_routes_environment(const struct tbx_routes *cfg, const char *env);
/* The resolver override for host, or NULL. */
const char *tbx_routes_resolve(const struct tbx_routes *cfg, const char *host);
int tbx_policy_valid(const char *policy);

#endif
