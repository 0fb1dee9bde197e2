/* SPDX-License-Identifier: MIT */
/*
 * Egress inside the sandbox, through engine ops only, so it is the same on
 * every engine: the CA files the trust variables name, and the canary.
 */
#define _GNU_SOURCE
#include "egress.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <twinbox/backend.h>

#include "engine.h"
#include "error.h"

#define CANARY_TIMEOUT_MS 20000
/* The canary script's exit status when it has nothing to run the request with. */
#define CANARY_NO_CLIENT 97
#define CANARY_OUTPUT_MAX (64 * 1024)

/* Where distributions keep their public roots, most common first. */
static const char *const root_bundles[] = {
	"/etc/ssl/certs/ca-certificates.crt", /* Debian, Ubuntu, Alpine */
	"/etc/pki/tls/certs/ca-bundle.crt",   /* Fedora, RHEL */
	"/etc/ssl/cert.pem",                  /* Arch, macOS-like layouts */
};

/* The image's public roots plus the twin's CA: trusted for real hosts and the twin's alike. */
static char *bundle_make(struct tbx_engine *engine, const atomic_int *cancel,
			 const char *sandbox_id, const char *ca_pem, size_t *len_out)
{
	char *roots = NULL, *bundle;
	size_t roots_len = 0, ca_len = strlen(ca_pem);

	for (size_t i = 0; i < sizeof(root_bundles) / sizeof(root_bundles[0]) && !roots; i++) {
		if (tbx_engine_file_read(engine, cancel, sandbox_id, root_bundles[i], &roots,
					 &roots_len) < 0) {
			roots = NULL;
			tbx_error_clear();
		}
	}
	bundle = malloc(roots_len + ca_len + 2);
	if (!bundle) {
		free(roots);
		return NULL;
	}
	if (roots_len)
		memcpy(bundle, roots, roots_len);
	*len_out = roots_len;
	/* Bundles do not always end with a newline; PEM blocks must start on one. */
	if (roots_len && roots[roots_len - 1] != '\n')
		bundle[(*len_out)++] = '\n';
	memcpy(bundle + *len_out, ca_pem, ca_len);
	*len_out += ca_len;
	free(roots);
	return bundle;
}

int tbx_egress_trust_install(struct tbx_engine *engine, const atomic_int *cancel,
			     const char *sandbox_id, const struct tbx_twin_credential *cred)
{
	char *bundle = NULL;
	size_t bundle_len = 0;
	struct json_object *written = json_object_new_object();
	int rc = 0;

	json_object_object_foreach(cred->trust_env, key, val) {
		const char *path = json_object_get_string(val);
		/* Node adds NODE_EXTRA_CA_CERTS to its own roots: it wants the CA alone. */
		int single = strcmp(key, "NODE_EXTRA_CA_CERTS") == 0;

		if (json_object_object_get_ex(written, path, NULL))
			continue;
		if (!single && !bundle &&
		    !(bundle = bundle_make(engine, cancel, sandbox_id, cred->ca_pem, &bundle_len))) {
			rc = tbx_error_set(TBX_ENOMEM, "out of memory");
			break;
		}
		rc = single ? tbx_engine_file_write(engine, cancel, sandbox_id, path, cred->ca_pem,
						    strlen(cred->ca_pem))
			    : tbx_engine_file_write(engine, cancel, sandbox_id, path, bundle,
						    bundle_len);
		if (rc < 0) {
			tbx_error_prefix("cannot write %s", path);
			break;
		}
		json_object_object_add(written, path, NULL);
	}
	free(bundle);
	json_object_put(written);
	return rc;
}

struct canary_out {
	char buf[2][CANARY_OUTPUT_MAX + 1]; /* stdout, stderr */
	size_t len[2];
};

static int canary_collect(enum tbx_exec_stream stream, const char *data, size_t len, void *payload)
{
	struct canary_out *c = payload;
	int i = stream == TBX_STREAM_STDERR;
	size_t room = CANARY_OUTPUT_MAX - c->len[i];

	if (len > room)
		len = room;
	memcpy(c->buf[i] + c->len[i], data, len);
	c->len[i] += len;
	c->buf[i][c->len[i]] = '\0';
	return 0;
}

/* The last non-empty line of text, trimmed to fit a status. */
static void last_line(const char *text, char *out, size_t size)
{
	const char *end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	snprintf(out, size, "%.*s", (int)(end - start), start);
}

char *tbx_egress_canary_run(struct tbx_engine *engine, const atomic_int *cancel,
			    const char *sandbox_id, const struct tbx_twin_credential *cred)
{
	struct tbx_exec_request req = TBX_EXEC_REQUEST_INIT;
	struct tbx_exec_result res = { .struct_size = sizeof(res), .abi_minor = TBX_ABI_MINOR };
	struct canary_out *out = calloc(1, sizeof(*out));
	struct json_object *answer = NULL, *v;
	char script[1024], line[300], *verdict = NULL;
	int n;

	if (!out)
		return NULL;
	/*
	 * The request goes the way the sandbox's own programs go: the proxy and
	 * trust variables of its environment, no flags of ours. canary_host
	 * was checked to be a plain host name.
	 */
	snprintf(script, sizeof(script),
		 "h='%s'\n"
		 "if command -v curl >/dev/null 2>&1; then exec curl -sS --max-time 10 \"https://$h/\"\n"
		 "elif command -v python3 >/dev/null 2>&1; then exec python3 -c 'import sys, urllib.request as u\n"
		 "sys.stdout.write(u.urlopen(\"https://\" + sys.argv[1] + \"/\", timeout=10).read().decode())' \"$h\"\n"
		 "fi\nexit %d\n",
		 cred->canary_host, CANARY_NO_CLIENT);
	req.command = script;
	req.timeout_ms = CANARY_TIMEOUT_MS;
	if (tbx_engine_exec(engine, cancel, sandbox_id, &req, canary_collect, out, &res) < 0) {
		n = asprintf(&verdict, "failed: cannot run it: %s", tbx_error_message());
		tbx_error_clear();
		goto done;
	}
	if (res.timed_out) {
		n = asprintf(&verdict, "failed: no answer within %d s", CANARY_TIMEOUT_MS / 1000);
		goto done;
	}
	if (res.exit_code == CANARY_NO_CLIENT) {
		n = asprintf(&verdict, "skipped: no curl or python3 in the sandbox");
		goto done;
	}
	if (res.exit_code != 0) {
		last_line(out->buf[1][0] ? out->buf[1] : out->buf[0], line, sizeof(line));
		n = asprintf(&verdict, "failed: exit status %d: %s", res.exit_code,
			     line[0] ? line : "no output");
		goto done;
	}
	answer = json_tokener_parse(out->buf[0]);
	if (!answer || !json_object_object_get_ex(answer, "veris_sandbox_id", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		last_line(out->buf[0], line, sizeof(line));
		n = asprintf(&verdict, "failed: https://%s/ did not answer as the gateway does: %s",
			     cred->canary_host, line[0] ? line : "empty answer");
	} else if (strcmp(json_object_get_string(v), cred->username) != 0) {
		n = asprintf(&verdict, "failed: the gateway answered for twin %s, not %s",
			     json_object_get_string(v), cred->username);
	} else {
		n = asprintf(&verdict, "passed");
	}
done:
	json_object_put(answer);
	free(out);
	return n < 0 ? NULL : verdict;
}
