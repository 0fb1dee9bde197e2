/* SPDX-License-Identifier: MIT */
/*
 * A session's egress (DESIGN §7): the twin its sandbox talks to, the egress
 * credential, how the engine wires the gateway in as the sandbox's only way
 * out, the CA trust installed inside, and the canary that proves it. Never
 * fatal: a session whose twin cannot be had goes on with loopback only and
 * says why. Worker threads only.
 */
#ifndef TBX_EGRESS_H
#define TBX_EGRESS_H

#include <stdatomic.h>

#include "twin-ops.h"

struct json_object;
struct tbx_core;
struct tbx_engine;
struct tbx_sandbox_spec;
struct tbx_session_row;

enum tbx_egress_mode {
	TBX_EGRESS_OFF,     /* the session asked for no twin: no network at all */
	TBX_EGRESS_NONE,    /* no twin could be wired (reason says why): loopback only */
	TBX_EGRESS_GATEWAY, /* the twin's gateway is the sandbox's only way out */
};

struct tbx_egress {
	enum tbx_egress_mode mode;
	char *twin_id;
	char *environment;
	int twin_made; /* made by this prepare: delete it if the sandbox never comes */
	char *reason;  /* why not gateway */
	int unexpected; /* NONE because something failed, not by design: the user is told */
	char *canary;  /* "passed", "failed: ...", "skipped: ...", or NULL (not run) */
	char *trust;   /* NULL when installed, else why not */
	struct tbx_twin_credential cred;
	char *proxy_url;
	char **env; /* NULL-terminated, for the spec */
};

/* The environment of new twins: config "environment", else VERIS_ENVIRONMENT_ID, else "default". */
const char *tbx_egress_environment(struct tbx_core *core);

/*
 * Before a sandbox is made: pick the wiring the engine can have, make the
 * session's twin (or take its existing one, for a replaced sandbox) and mint
 * the credential. Fails only for lack of memory; everything else ends in
 * mode NONE with a reason.
 */
int tbx_egress_prepare(struct tbx_core *core, const char *engine,
		       const struct tbx_session_row *row, struct tbx_egress *out);
/*
 * For a sandbox that exists (resumed, or found after a daemon restart): the
 * credential of its twin again, so trust can be reinstalled and the canary
 * re-run. Its proxy settings were fixed when it was made.
 */
int tbx_egress_resume(struct tbx_core *core, const char *engine,
		      const struct tbx_session_row *row, struct tbx_egress *out);
/* Set the spec's egress_proxy_url, env and NO_NETWORK flag; e must outlive the create. */
void tbx_egress_spec(struct tbx_egress *e, struct tbx_sandbox_spec *spec);
/* The sandbox was not made: delete a twin made for it. */
void tbx_egress_abandon(struct tbx_core *core, struct tbx_egress *e);
/* Inside the made sandbox: install the CA where trust_env says, then run the canary. */
void tbx_egress_install(struct tbx_egress *e, struct tbx_engine *engine,
			const atomic_int *cancel, const char *sandbox_id);
/* {twin_id, environment, mode, canary, trust?, reason?}: what session JSON shows. */
struct json_object *tbx_egress_json(const struct tbx_egress *e);
/* What the user or agent should be told, or NULL when all is well (malloc'd). */
char *tbx_egress_notice(const struct tbx_egress *e);
void tbx_egress_clear(struct tbx_egress *e);

/* egress-sandbox.c: the parts that run inside the sandbox, through engine ops. */
/* Write ca_pem (NODE_EXTRA_CA_CERTS) and public roots + ca_pem (every other variable). */
int tbx_egress_trust_install(struct tbx_engine *engine, const atomic_int *cancel,
			     const char *sandbox_id, const struct tbx_twin_credential *cred);
/* One request to https://<canary_host>/ the way the sandbox's programs go; the verdict, malloc'd. */
char *tbx_egress_canary_run(struct tbx_engine *engine, const atomic_int *cancel,
			    const char *sandbox_id, const struct tbx_twin_credential *cred);

#endif
