/* SPDX-License-Identifier: MIT */
/* A session's egress: its twin, its credential and the engine's wiring (see egress.h). */
#define _GNU_SOURCE
#include "egress.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <twinbox/backend.h>

#include "core.h"
#include "error.h"
#include "log.h"
#include "store.h" /* struct tbx_session_row */
#include "twin-service.h"

#define TBX_LOG_CATEGORY "egress"

/* How a sandbox of an engine can reach the twin's gateway. */
enum egress_route {
	ROUTE_NONE,
	ROUTE_UNIX, /* local engine: the local twin's gateway socket, bind-mounted in */
	ROUTE_SOCKS /* remote engines: the gateway's SOCKS address, as the engine's egress proxy */
};

const char *tbx_egress_environment(struct tbx_core *core)
{
	struct json_object *v;
	const char *env = getenv("VERIS_ENVIRONMENT_ID");

	if (core->config && json_object_object_get_ex(core->config, "environment", &v) &&
	    json_object_is_type(v, json_type_string) && json_object_get_string_len(v) > 0)
		return json_object_get_string(v);
	/* "default": every service the twin has (the local twind: its whole routes file). */
	return env && env[0] ? env : "default";
}

static void set_str(char **field, const char *value)
{
	free(*field);
	*field = value ? strdup(value) : NULL;
}

/* No twin by design: an engine that cannot be wired yet. Shown, logged, not a notice. */
static void egress_none(struct tbx_egress *e, const char *why)
{
	e->mode = TBX_EGRESS_NONE;
	set_str(&e->reason, why);
}

/* No twin because something failed (the service, the environment): the user is told. */
static void egress_failed(struct tbx_egress *e, const char *why)
{
	egress_none(e, why);
	e->unexpected = 1;
}

static enum egress_route egress_route_for(struct tbx_core *core, const char *engine, char *why,
					  size_t why_size)
{
	if (!core->twin) {
		snprintf(why, why_size, "this daemon has no twin service");
		return ROUTE_NONE;
	}
	if (strcmp(engine, "local") == 0) {
		if (tbx_twin_service_gateway_socket(core->twin))
			return ROUTE_UNIX;
		snprintf(why, why_size, "egress is not wired on the local engine with the Veris "
			 "cloud yet: local sandboxes reach only the local twin's gateway, through a "
			 "Unix socket (unset VERIS_API_KEY to use it)");
		return ROUTE_NONE;
	}
	if (tbx_twin_service_is_local(core->twin)) {
		snprintf(why, why_size, "egress is not wired on the %s engine with the local twin yet: "
			 "its gateway listens on this machine's loopback, which %s sandboxes cannot "
			 "reach (a Veris control plane, VERIS_API_KEY, has a gateway they can)",
			 engine, engine);
		return ROUTE_NONE;
	}
	return ROUTE_SOCKS;
}

/* A remote engine dials the address itself: loopback would be its own. */
static int address_is_loopback(const char *hostport)
{
	return strncmp(hostport, "127.", 4) == 0 || strncmp(hostport, "localhost:", 10) == 0 ||
	       strncmp(hostport, "[::1]", 5) == 0 || strncmp(hostport, "unix:", 5) == 0;
}

/* Percent-encode a URL's user or password (RFC 3986 unreserved characters pass). */
static void userinfo_append(char *out, size_t size, const char *s)
{
	size_t n = strlen(out);

	for (; *s && n + 4 < size; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~", c))
			out[n++] = (char)c;
		else
			n += (size_t)snprintf(out + n, size - n, "%%%02X", c);
	}
	out[n] = '\0';
}

static char *proxy_url(const char *scheme, const struct tbx_twin_credential *c, const char *where)
{
	char buf[2048];

	snprintf(buf, sizeof(buf), "%s://", scheme);
	userinfo_append(buf, sizeof(buf), c->username);
	strncat(buf, ":", sizeof(buf) - strlen(buf) - 1);
	userinfo_append(buf, sizeof(buf), c->password);
	strncat(buf, "@", sizeof(buf) - strlen(buf) - 1);
	if (strlen(buf) + strlen(where) + 1 > sizeof(buf))
		return NULL;
	strcat(buf, where);
	return strdup(buf);
}

/* The trust variables, plus what a route needs, as the spec's "KEY=VALUE" list. */
static int egress_env_build(struct tbx_egress *e, enum egress_route route)
{
	size_t n = 0, cap = (size_t)json_object_object_length(e->cred.trust_env) + 2;

	e->env = calloc(cap, sizeof(char *));
	if (!e->env)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	json_object_object_foreach(e->cred.trust_env, key, val) {
		if (asprintf(&e->env[n], "%s=%s", key, json_object_get_string(val)) < 0) {
			e->env[n] = NULL;
			return tbx_error_set(TBX_ENOMEM, "out of memory");
		}
		n++;
	}
	/*
	 * The local engine sets proxy variables. Node 20 ignores them whatever
	 * is set; newer releases (24, late 22.x) use them with this.
	 */
	if (route == ROUTE_UNIX && !(e->env[n++] = strdup("NODE_USE_ENV_PROXY=1")))
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	return 0;
}

/* With the twin known: its credential and the engine's wiring. */
static int egress_wire(struct tbx_core *core, enum egress_route route, struct tbx_egress *e)
{
	char why[600];

	if (tbx_twin_credential(core->twin, e->environment, e->twin_id, &e->cred) < 0) {
		snprintf(why, sizeof(why), "no egress credential for twin %s: %s", e->twin_id,
			 tbx_error_message());
		egress_failed(e, why);
		return 0;
	}
	if (route == ROUTE_UNIX) {
		char where[600];
		/* curl's form for a SOCKS proxy on a Unix socket; the local engine bridges it. */
		snprintf(where, sizeof(where), "localhost%s",
			 tbx_twin_service_gateway_socket(core->twin));
		e->proxy_url = proxy_url("socks5h", &e->cred, where);
	} else {
		if (address_is_loopback(e->cred.socks_address)) {
			snprintf(why, sizeof(why), "the twin's gateway (%s) is on a loopback address, "
				 "which sandboxes of a remote engine cannot reach; egress is not wired",
				 e->cred.socks_address);
			egress_none(e, why);
			return 0;
		}
		e->proxy_url = proxy_url("socks5", &e->cred, e->cred.socks_address);
	}
	if (!e->proxy_url || egress_env_build(e, route) < 0)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	e->mode = TBX_EGRESS_GATEWAY;
	return 0;
}

int tbx_egress_prepare(struct tbx_core *core, const char *engine,
		       const struct tbx_session_row *row, struct tbx_egress *out)
{
	enum egress_route route;
	char why[600];
	int rc;

	memset(out, 0, sizeof(*out));
	if (row->no_twin) {
		out->mode = TBX_EGRESS_OFF;
		return 0;
	}
	route = egress_route_for(core, engine, why, sizeof(why));
	if (route == ROUTE_NONE) {
		egress_none(out, why);
		return 0;
	}
	/* A replaced sandbox keeps the session's twin, and with it the twin's state and log. */
	if (row->twin_id) {
		rc = tbx_twin_environment(core->twin, row->twin_id, &out->environment);
		if (rc == 0) {
			set_str(&out->twin_id, row->twin_id);
		} else if (rc != TBX_EGONE) {
			snprintf(why, sizeof(why), "the session's twin %s cannot be reached: %s",
				 row->twin_id, tbx_error_message());
			egress_failed(out, why);
			set_str(&out->twin_id, row->twin_id);
			return 0;
		} else {
			tbx_log_info("session %s: its twin %s is gone; making a new one", row->id,
				     row->twin_id);
		}
	}
	if (!out->twin_id) {
		const char *env = tbx_egress_environment(core);
		if (tbx_twin_create(core->twin, env, row->id, &out->twin_id) < 0) {
			snprintf(why, sizeof(why), "no twin: %s", tbx_error_message());
			egress_failed(out, why);
			return 0;
		}
		out->twin_made = 1;
		set_str(&out->environment, env);
		tbx_log_info("session %s: twin %s made for environment %s", row->id, out->twin_id,
			     env);
	}
	if (!out->environment)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	return egress_wire(core, route, out);
}

int tbx_egress_resume(struct tbx_core *core, const char *engine,
		      const struct tbx_session_row *row, struct tbx_egress *out)
{
	enum egress_route route;
	char why[600];
	int rc;

	memset(out, 0, sizeof(*out));
	if (row->no_twin) {
		out->mode = TBX_EGRESS_OFF;
		return 0;
	}
	if (!row->twin_id) {
		egress_none(out, "this sandbox was made without a twin, so it has no way out "
			    "(loopback only)");
		return 0;
	}
	set_str(&out->twin_id, row->twin_id);
	route = egress_route_for(core, engine, why, sizeof(why));
	if (route == ROUTE_NONE) {
		egress_none(out, why);
		return 0;
	}
	rc = tbx_twin_environment(core->twin, row->twin_id, &out->environment);
	if (rc < 0) {
		/*
		 * The sandbox's proxy settings name this twin; a new twin would need
		 * a new sandbox. Say so rather than pretend.
		 */
		snprintf(why, sizeof(why), "the session's twin %s %s", row->twin_id,
			 rc == TBX_EGONE ? "is gone; its sandbox's egress cannot work again (delete "
					   "the session and open a new one)"
					 : "cannot be reached");
		if (rc != TBX_EGONE) {
			size_t n = strlen(why);
			snprintf(why + n, sizeof(why) - n, ": %s", tbx_error_message());
		}
		egress_failed(out, why);
		return 0;
	}
	return egress_wire(core, route, out);
}

void tbx_egress_spec(struct tbx_egress *e, struct tbx_sandbox_spec *spec)
{
	if (e->mode == TBX_EGRESS_GATEWAY) {
		spec->egress_proxy_url = e->proxy_url;
		spec->env = (const char *const *)e->env;
		spec->flags &= ~(uint32_t)TBX_SANDBOX_NO_NETWORK;
	} else {
		spec->egress_proxy_url = NULL;
		spec->flags |= TBX_SANDBOX_NO_NETWORK;
	}
}

void tbx_egress_abandon(struct tbx_core *core, struct tbx_egress *e)
{
	if (!e->twin_made || !e->twin_id)
		return;
	if (tbx_twin_delete(core->twin, e->twin_id) < 0) {
		tbx_log_warn("twin %s was made for a sandbox that never came, and cannot be deleted: "
			     "%s", e->twin_id, tbx_error_message());
		tbx_error_clear();
	}
	e->twin_made = 0;
}

void tbx_egress_install(struct tbx_egress *e, struct tbx_engine *engine,
			const atomic_int *cancel, const char *sandbox_id)
{
	char *why = NULL;

	if (e->mode != TBX_EGRESS_GATEWAY)
		return;
	if (tbx_egress_trust_install(engine, cancel, sandbox_id, &e->cred) < 0) {
		/* The canary below will say what this costs; go on to run it. */
		if (asprintf(&why, "the CA could not be installed: %s", tbx_error_message()) < 0)
			why = NULL;
		free(e->trust);
		e->trust = why;
		tbx_error_clear();
	}
	free(e->canary);
	e->canary = tbx_egress_canary_run(engine, cancel, sandbox_id, &e->cred);
}

static const char *mode_name(enum tbx_egress_mode m)
{
	return m == TBX_EGRESS_GATEWAY ? "gateway" : m == TBX_EGRESS_OFF ? "off" : "none";
}

struct json_object *tbx_egress_json(const struct tbx_egress *e)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "twin_id", e->twin_id ? json_object_new_string(e->twin_id) : NULL);
	json_object_object_add(o, "environment",
			       e->environment ? json_object_new_string(e->environment) : NULL);
	json_object_object_add(o, "mode", json_object_new_string(mode_name(e->mode)));
	json_object_object_add(o, "canary", e->canary ? json_object_new_string(e->canary) : NULL);
	if (e->trust)
		json_object_object_add(o, "trust", json_object_new_string(e->trust));
	if (e->mode == TBX_EGRESS_OFF)
		json_object_object_add(o, "reason", json_object_new_string(
			"opened with --no-twin: the sandbox has no network (loopback only)"));
	else if (e->reason)
		json_object_object_add(o, "reason", json_object_new_string(e->reason));
	return o;
}

char *tbx_egress_notice(const struct tbx_egress *e)
{
	char *text = NULL;
	int n = 0;

	if (e->mode == TBX_EGRESS_NONE && e->unexpected)
		n = asprintf(&text, "No twin for this sandbox: %s. It has no network (loopback "
			     "only), so calls to vendor APIs such as api.stripe.com will fail.",
			     e->reason ? e->reason : "unknown reason");
	else if (e->mode == TBX_EGRESS_GATEWAY && e->canary && strcmp(e->canary, "passed") != 0)
		n = asprintf(&text, "The egress canary of twin %s %s%s%s", e->twin_id,
			     strncmp(e->canary, "skipped", 7) == 0 ? "was not run: " : "failed: ",
			     strchr(e->canary, ':') ? strchr(e->canary, ':') + 2 : e->canary,
			     strncmp(e->canary, "skipped", 7) == 0
				     ? "." : ". Vendor calls from the sandbox may not reach the twin.");
	return n < 0 ? NULL : text;
}

void tbx_egress_clear(struct tbx_egress *e)
{
	free(e->twin_id);
	free(e->environment);
	free(e->reason);
	free(e->canary);
	free(e->trust);
	tbx_twin_credential_clear(&e->cred);
	if (e->proxy_url)
		explicit_bzero(e->proxy_url, strlen(e->proxy_url));
	free(e->proxy_url);
	for (size_t i = 0; e->env && e->env[i]; i++)
		free(e->env[i]);
	free(e->env);
	memset(e, 0, sizeof(*e));
}
