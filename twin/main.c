/* SPDX-License-Identifier: MIT */
/*
 * twinbox-twind: the local twin and egress gateway, serving the Veris
 * control-plane API shape. Started by twinboxd (or by hand, or by tests);
 * the process interface is in docs/twin.md.
 */
#include <curl/curl.h>
#include <errno.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "routes.h"
#include "control.h"
#include "error.h"
#include "gateway.h"
#include "hostname.h"
#include "ids.h"
#include "linger.h"
#include "log.h"
#include "paths.h"
#include "statedb.h"
#include "tls.h"
#include "twind.h"
#include "twins.h"
#include "upstream.h"

#define TBX_LOG_CATEGORY "twind"
#define API_KEY_ENV "TWINBOX_TWIN_API_KEY"
#define EXPIRY_CHECK_S 5

struct options {
	char state_dir[4096];
	const char *control, *routes, *advertise, *ready_file, *api_key_file;
	struct tbx_gateway_addrs gateway; /* --socks, --connect: each may repeat */
	size_t n_socks, n_connect;
	int ready_fd, die_with_parent;
	int handshake_timeout_s, idle_timeout_s, upstream_timeout_s;
	long long max_body;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: twinbox-twind [OPTION]...\n"
		"\n"
		"The local twin and egress gateway of twinbox: a Veris-shaped control plane,\n"
		"a SOCKS5 and an HTTP CONNECT gateway, and stateful twins (docs/twin.md).\n"
		"\n"
		"  --state-dir DIR          state: CA, database, api-key (default\n"
		"                           $XDG_STATE_HOME/twinbox/twin)\n"
		"  --control ADDR           control plane: 127.0.0.1:PORT or unix:PATH\n"
		"                           (default 127.0.0.1:0, a free port)\n"
		"  --socks ADDR             SOCKS5 gateway: HOST:PORT or unix:PATH (default\n"
		"                           127.0.0.1:0); repeat it to listen on several\n"
		"  --connect ADDR           HTTP CONNECT gateway, likewise\n"
		"  --advertise HOST         host put in egress credentials (default: the\n"
		"                           first TCP gateway listener's address)\n"
		"  --routes FILE            routes file (default DIR/routes.json if present)\n"
		"  --ready-file FILE        write the bound addresses here, as JSON, when ready\n"
		"  --ready-fd N             also write them to fd N, one line, then close it\n"
		"  --api-key-file FILE      the control plane's API key (else $" API_KEY_ENV ",\n"
		"                           else DIR/api-key, made on first start)\n"
		"  --handshake-timeout S    SOCKS/CONNECT/TLS handshakes (default 10)\n"
		"  --idle-timeout S         idle HTTP connections (default 60)\n"
		"  --upstream-timeout S     requests to upstream routes (default 30)\n"
		"  --max-body BYTES         largest request body (default 16 MiB)\n"
		"  --die-with-parent        exit when the process that started us exits\n"
		"  --help, --version\n"
		"\n"
		"Signals: SIGTERM or SIGINT stop it cleanly (exit 0).\n"
		"Environment: " API_KEY_ENV ", TWINBOX_LOG_LEVEL (error..trace).\n");
}

static int positive(const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || v <= 0 || v > 86400)
		return -1;
	*out = (int)v;
	return 0;
}

/* A file descriptor we inherited open: 3 and up (0..2 are stdio). */
static int ready_fd(const char *s, int *out)
{
	int fd;

	if (positive(s, &fd) < 0 || fd < 3 || fcntl(fd, F_GETFD) < 0)
		return -1;
	*out = fd;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	enum { O_STATE = 256, O_CONTROL, O_SOCKS, O_CONNECT, O_ADVERTISE, O_ROUTES, O_READY_FILE,
	       O_READY_FD, O_KEY_FILE, O_HS, O_IDLE, O_UP, O_BODY, O_PARENT, O_HELP, O_VERSION };
	static const struct option longopts[] = {
		{ "state-dir", required_argument, NULL, O_STATE },
		{ "control", required_argument, NULL, O_CONTROL },
		{ "socks", required_argument, NULL, O_SOCKS },
		{ "connect", required_argument, NULL, O_CONNECT },
		{ "advertise", required_argument, NULL, O_ADVERTISE },
		{ "routes", required_argument, NULL, O_ROUTES },
		{ "ready-file", required_argument, NULL, O_READY_FILE },
		{ "ready-fd", required_argument, NULL, O_READY_FD },
		{ "api-key-file", required_argument, NULL, O_KEY_FILE },
		{ "handshake-timeout", required_argument, NULL, O_HS },
		{ "idle-timeout", required_argument, NULL, O_IDLE },
		{ "upstream-timeout", required_argument, NULL, O_UP },
		{ "max-body", required_argument, NULL, O_BODY },
		{ "die-with-parent", no_argument, NULL, O_PARENT },
		{ "help", no_argument, NULL, O_HELP },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int opt, bad = 0;

	o->control = "127.0.0.1:0";
	o->ready_fd = -1;
	o->handshake_timeout_s = 10;
	o->idle_timeout_s = 60;
	o->upstream_timeout_s = 30;
	o->max_body = 16 * 1024 * 1024;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case O_STATE: snprintf(o->state_dir, sizeof(o->state_dir), "%s", optarg); break;
		case O_CONTROL: o->control = optarg; break;
		case O_SOCKS:
			bad |= o->n_socks == TBX_GATEWAY_MAX_LISTENERS;
			if (o->n_socks < TBX_GATEWAY_MAX_LISTENERS)
				o->gateway.socks[o->n_socks++] = optarg;
			break;
		case O_CONNECT:
			bad |= o->n_connect == TBX_GATEWAY_MAX_LISTENERS;
			if (o->n_connect < TBX_GATEWAY_MAX_LISTENERS)
				o->gateway.connect[o->n_connect++] = optarg;
			break;
		case O_ADVERTISE: o->advertise = optarg; break;
		case O_ROUTES: o->routes = optarg; break;
		case O_READY_FILE: o->ready_file = optarg; break;
		case O_READY_FD: bad |= ready_fd(optarg, &o->ready_fd) < 0; break;
		case O_KEY_FILE: o->api_key_file = optarg; break;
		case O_HS: bad |= positive(optarg, &o->handshake_timeout_s) < 0; break;
		case O_IDLE: bad |= positive(optarg, &o->idle_timeout_s) < 0; break;
		case O_UP: bad |= positive(optarg, &o->upstream_timeout_s) < 0; break;
		case O_BODY: o->max_body = strtoll(optarg, NULL, 10); bad |= o->max_body <= 0; break;
		case O_PARENT: o->die_with_parent = 1; break;
		case O_HELP: usage(stdout); exit(0);
		case O_VERSION: printf("twinbox-twind %s\n", TBX_VERSION); exit(0);
		default: return -1;
		}
	}
	if (bad || optind != argc)
		return -1;
	if (!o->n_socks)
		o->gateway.socks[o->n_socks++] = "127.0.0.1:0";
	if (!o->n_connect)
		o->gateway.connect[o->n_connect++] = "127.0.0.1:0";
	if (!o->state_dir[0]) {
		struct tbx_paths paths;
		if (tbx_paths_init(&paths) < 0)
			return -1;
		if (snprintf(o->state_dir, sizeof(o->state_dir), "%s/twin", paths.state_dir) >=
		    (int)sizeof(o->state_dir))
			return -1;
	}
	return 0;
}

/* Read a key file: the first line, which must be non-empty. */
static int read_key_file(const char *path, char *key, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return tbx_error_set(TBX_EIO, "cannot read %s: %s", path, strerror(errno));
	if (!fgets(key, (int)size, f))
		key[0] = '\0';
	fclose(f);
	n = strcspn(key, "\r\n");
	key[n] = '\0';
	if (n == 0)
		return tbx_error_set(TBX_EINVAL, "%s holds no key", path);
	return 0;
}

/* The API key never comes from argv, where every user of the machine can read it. */
static int load_api_key(const struct options *o, char *key, size_t size, char *made_path,
			size_t made_size)
{
	const char *env = getenv(API_KEY_ENV);
	char path[4200];
	int fd;

	made_path[0] = '\0';
	if (env && *env) {
		snprintf(key, size, "%s", env);
		unsetenv(API_KEY_ENV);
		return 0;
	}
	if (o->api_key_file)
		return read_key_file(o->api_key_file, key, size);
	snprintf(path, sizeof(path), "%s/api-key", o->state_dir);
	snprintf(made_path, made_size, "%s", path);
	if (access(path, F_OK) == 0)
		return read_key_file(path, key, size);
	tbx_id_random(key, size, "twk_", 40);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || dprintf(fd, "%s\n", key) < 0) {
		if (fd >= 0)
			close(fd);
		return tbx_error_set(TBX_EIO, "cannot write %s: %s", path, strerror(errno));
	}
	close(fd);
	return 0;
}

static struct json_object *string_or_null(const char *s)
{
	return s[0] ? json_object_new_string(s) : NULL;
}

static char *ready_json(struct tbx_twind *d, const char *control_bound, int control_unix,
			const struct tbx_gateway_bound *gw, const struct options *o,
			const char *key_path)
{
	struct json_object *r = json_object_new_object();
	char ca[4200];
	char *out;

	json_object_object_add(r, "pid", json_object_new_int((int)getpid()));
	json_object_object_add(r, "version", json_object_new_string(TBX_VERSION));
	json_object_object_add(r, "control_url", json_object_new_string(d->control_base));
	json_object_object_add(r, "control_socket", control_unix ? json_object_new_string(control_bound) : NULL);
	json_object_object_add(r, "socks_address", json_object_new_string(d->socks_address));
	json_object_object_add(r, "connect_address", json_object_new_string(d->connect_address));
	json_object_object_add(r, "socks_socket", string_or_null(gw->socks_unix));
	json_object_object_add(r, "connect_socket", string_or_null(gw->connect_unix));
	json_object_object_add(r, "canary_host", json_object_new_string(d->cfg->canary_host));
	json_object_object_add(r, "state_dir", json_object_new_string(o->state_dir));
	snprintf(ca, sizeof(ca), "%s", d->ca.cert_path);
	json_object_object_add(r, "ca_file", json_object_new_string(ca));
	json_object_object_add(r, "api_key_file", key_path[0] ? json_object_new_string(key_path)
			       : o->api_key_file ? json_object_new_string(o->api_key_file) : NULL);
	out = strdup(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(r);
	return out;
}

static int write_ready_file(const char *path, const char *json)
{
	char tmp[4200];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || dprintf(fd, "%s\n", json) < 0 || close(fd) != 0 || rename(tmp, path) != 0) {
		if (fd >= 0)
			close(fd);
		return tbx_error_set(TBX_EIO, "cannot write %s: %s", path, strerror(errno));
	}
	return 0;
}

/* "127.0.0.1:43215" with the host replaced by the advertised one. */
static void advertised(const char *host, const char *bound, char *out, size_t size)
{
	const char *port = strrchr(bound, ':');

	snprintf(out, size, strchr(host, ':') ? "[%s]%s" : "%s%s", host, port ? port : "");
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct event_base *base = arg;

	if (sig == SIGHUP) {
		tbx_log_info("SIGHUP: the routes file is read at start; restart twind to apply changes");
		return;
	}
	tbx_log_info("signal %d: stopping", (int)sig);
	event_base_loopbreak(base);
}

static void on_expiry(evutil_socket_t fd, short what, void *arg)
{
	struct tbx_twind *d = arg;
	struct tbx_twin *t;

	while ((t = tbx_twins_expired(d->twins, tbx_now_ms()))) {
		tbx_log_info("twin %s expired", t->id);
		tbx_gateway_drop_twin(d->gateway, t);
		tbx_twins_remove(d->twins, t);
	}
}

static void on_parent_check(evutil_socket_t fd, short what, void *arg)
{
	if (getppid() == 1) {
		tbx_log_info("our parent exited: stopping");
		event_base_loopbreak(arg);
	}
}

int main(int argc, char **argv)
{
	struct tbx_twind d = { 0 };
	struct options o = { 0 };
	struct tbx_control *control = NULL;
	struct event *sigs[3] = { 0 }, *expiry = NULL, *parent = NULL;
	char control_bound[4200], key_path[4200], routes[4200];
	struct tbx_gateway_bound gw;
	char host[300];
	int control_unix = 0, status = 1, rc;
	char *ready = NULL;
	struct timeval every = { EXPIRY_CHECK_S, 0 }, second = { 1, 0 };

	if (parse_args(argc, argv, &o) < 0) {
		usage(stderr);
		return 2;
	}
	if (o.die_with_parent)
		prctl(PR_SET_PDEATHSIG, SIGTERM);
	signal(SIGPIPE, SIG_IGN);
	umask(077);
	if ((rc = tbx_mkdir_p(o.state_dir, 0700)) < 0) {
		tbx_log_error("cannot create %s: %s", o.state_dir, strerror(-rc));
		return 1;
	}
	if (load_api_key(&o, d.api_key, sizeof(d.api_key), key_path, sizeof(key_path)) < 0) {
		tbx_log_error("%s", tbx_error_message());
		return 1;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (evthread_use_pthreads() != 0 || !(d.base = event_base_new())) {
		tbx_log_error("cannot start the event loop");
		goto out;
	}
	snprintf(routes, sizeof(routes), "%s/routes.json", o.state_dir);
	if (!o.routes && access(routes, F_OK) == 0)
		o.routes = routes;
	snprintf(control_bound, sizeof(control_bound), "%s/ca", o.state_dir);
	if (tbx_routes_load(o.routes, &d.cfg) < 0 || tbx_ca_load_or_create(control_bound, &d.ca) < 0 ||
	    tbx_tls_new(&d.ca, &d.tls) < 0) {
		tbx_log_error("%s", tbx_error_message());
		goto out;
	}
	snprintf(control_bound, sizeof(control_bound), "%s/twind.db", o.state_dir);
	if (tbx_statedb_open(control_bound, &d.db) < 0 || tbx_twins_new(d.cfg, d.db, &d.twins) < 0 ||
	    tbx_upstream_new(d.base, d.cfg, o.upstream_timeout_s, &d.upstream) < 0) {
		tbx_log_error("%s", tbx_error_message());
		goto out;
	}
	d.started_ms = tbx_now_ms();
	d.handshake_timeout_s = o.handshake_timeout_s;
	d.upstream_timeout_s = o.upstream_timeout_s;
	d.http_limits.idle_timeout_s = o.idle_timeout_s;
	d.http_limits.max_head = 64 * 1024;
	d.http_limits.max_body = (size_t)o.max_body;
	if (tbx_gateway_start(&d, &o.gateway, &gw, &d.gateway) < 0 ||
	    tbx_control_start(&d, o.control, control_bound, sizeof(control_bound), &control_unix,
			      &control) < 0) {
		tbx_log_error("%s", tbx_error_message());
		goto out;
	}
	/*
	 * The advertised host: --advertise, else the first TCP SOCKS listener's
	 * own (0.0.0.0 says nothing). Credentials name TCP addresses; a gateway
	 * on Unix sockets only names those as unix:PATH.
	 */
	snprintf(host, sizeof(host), "%s", o.advertise ? o.advertise : gw.socks);
	if (!o.advertise) {
		char *colon = host[0] == '[' ? strstr(host, "]:") : strrchr(host, ':');
		if (colon)
			*colon = '\0';
		if (host[0] == '[')
			memmove(host, host + 1, strlen(host));
		if (!strcmp(host, "0.0.0.0") || !strcmp(host, "::"))
			snprintf(host, sizeof(host), "127.0.0.1");
	}
	snprintf(d.advertise_host, sizeof(d.advertise_host), "%s", host);
	if (gw.socks[0])
		advertised(host, gw.socks, d.socks_address, sizeof(d.socks_address));
	else
		snprintf(d.socks_address, sizeof(d.socks_address), "unix:%.200s", gw.socks_unix);
	if (gw.connect[0])
		advertised(host, gw.connect, d.connect_address, sizeof(d.connect_address));
	else
		snprintf(d.connect_address, sizeof(d.connect_address), "unix:%.200s", gw.connect_unix);
	if (control_unix)
		snprintf(d.control_base, sizeof(d.control_base), "http://localhost");
	else if (snprintf(d.control_base, sizeof(d.control_base), "http://%s", control_bound) >=
		 (int)sizeof(d.control_base))
		goto out;

	sigs[0] = evsignal_new(d.base, SIGTERM, on_signal, d.base);
	sigs[1] = evsignal_new(d.base, SIGINT, on_signal, d.base);
	sigs[2] = evsignal_new(d.base, SIGHUP, on_signal, d.base);
	for (int i = 0; i < 3; i++)
		evsignal_add(sigs[i], NULL);
	expiry = event_new(d.base, -1, EV_PERSIST, on_expiry, &d);
	event_add(expiry, &every);
	if (o.die_with_parent) {
		parent = event_new(d.base, -1, EV_PERSIST, on_parent_check, d.base);
		event_add(parent, &second);
	}

	ready = ready_json(&d, control_bound, control_unix, &gw, &o, key_path);
	if (o.ready_file && write_ready_file(o.ready_file, ready) < 0) {
		tbx_log_error("%s", tbx_error_message());
		goto out;
	}
	if (o.ready_fd >= 0) {
		dprintf(o.ready_fd, "%s\n", ready);
		close(o.ready_fd);
	}
	tbx_log_info("ready: control %s, socks %s, connect %s, %zu twin(s), state in %s", d.control_base,
		     d.socks_address, d.connect_address, d.twins->count, o.state_dir);
	event_base_dispatch(d.base);
	status = 0;
out:
	tbx_control_stop(control);
	tbx_gateway_stop(d.gateway);
	tbx_upstream_free(d.upstream);
	/* Let the last replies flush. */
	for (int i = 0; d.base && i < 200 && tbx_bev_lingering() > 0; i++) {
		struct timeval tick = { 0, 10000 };
		event_base_loopexit(d.base, &tick);
		event_base_dispatch(d.base);
	}
	for (int i = 0; i < 3; i++)
		if (sigs[i])
			event_free(sigs[i]);
	if (expiry)
		event_free(expiry);
	if (parent)
		event_free(parent);
	if (d.dns)
		evdns_base_free(d.dns, 0);
	tbx_twins_free(d.twins);
	tbx_statedb_close(d.db);
	tbx_tls_free(d.tls);
	tbx_ca_free(&d.ca);
	tbx_routes_free(d.cfg);
	if (d.base)
		event_base_free(d.base);
	if (control_unix)
		unlink(control_bound);
	if (o.ready_file && status == 0)
		unlink(o.ready_file);
	free(ready);
	curl_global_cleanup();
	memset(d.api_key, 0, sizeof(d.api_key));
	return status;
}
