/* SPDX-License-Identifier: MIT */
/* twinboxd: one per user; owns the socket, sessions, modules and the store. */
#include <errno.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "core.h"
#include "engine.h"
#include "error.h"
#include "log.h"
#include "rpc-server.h"
#include "session.h"
#include "store.h"
#include "twin-service.h"
#include "workers.h"

#define TBX_LOG_CATEGORY "daemon"

#define WORKERS_NORMAL 8
#define WORKERS_PRIORITY 2
/* How long in-flight calls get to finish after SIGTERM before we stop anyway. */
#define SHUTDOWN_GRACE_S 15

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: twinboxd [--help] [--version]\n"
		"\n"
		"The twinbox daemon: one per user, normally started by the `twinbox` CLI.\n"
		"It listens on $XDG_RUNTIME_DIR/twinbox/twinbox.sock (or $TWINBOX_SOCKET)\n"
		"and keeps its state in $XDG_STATE_HOME/twinbox and $XDG_DATA_HOME/twinbox.\n"
		"\n"
		"Environment: TWINBOX_SOCKET, TWINBOX_MODULE_PATH, TWINBOX_LOG_LEVEL\n"
		"(error, warn, info, debug, trace).\n");
}

/* The runtime directory must be ours and private: the socket's safety rests on it. */
static int prepare_runtime_dir(const char *dir)
{
	struct stat st;
	int rc = tbx_mkdir_p(dir, 0700);

	if (rc < 0)
		return tbx_error_set(TBX_EIO, "cannot create %s: %s", dir, strerror(-rc));
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return tbx_error_set(TBX_EIO, "%s is not a directory", dir);
	if (st.st_uid != geteuid())
		return tbx_error_set(TBX_EPERM, "%s belongs to uid %d, not to us; remove it", dir,
				     (int)st.st_uid);
	if ((st.st_mode & 077) && chmod(dir, 0700) != 0)
		return tbx_error_set(TBX_EPERM, "cannot make %s private: %s", dir, strerror(errno));
	return 0;
}

static int listen_socket(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	mode_t old;
	int fd;

	if ((size_t)snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path) >= sizeof(addr.sun_path))
		return tbx_error_set(TBX_EINVAL, "socket path %s is too long", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return tbx_error_set(TBX_EIO, "socket: %s", strerror(errno));
	/* We hold the start lock, so a socket file here is a crashed daemon's. */
	unlink(path);
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		umask(old);
		close(fd);
		return tbx_error_set(TBX_EIO, "cannot bind %s: %s", path, strerror(errno));
	}
	umask(old);
	if (listen(fd, 128) != 0) {
		close(fd);
		return tbx_error_set(TBX_EIO, "cannot listen on %s: %s", path, strerror(errno));
	}
	return fd;
}

static int load_config(struct tbx_core *core)
{
	struct stat st;

	if (stat(core->paths.config_path, &st) != 0) {
		core->config = json_object_new_object();
		return 0;
	}
	core->config = json_object_from_file(core->paths.config_path);
	if (!core->config || !json_object_is_type(core->config, json_type_object)) {
		json_object_put(core->config);
		core->config = NULL;
		return tbx_error_set(TBX_EINVAL, "%s is not a JSON object (%s); fix or remove it",
				     core->paths.config_path, json_util_get_last_err());
	}
	return 0;
}

struct daemon_ctx {
	struct event_base *base;
	struct tbx_server *server;
	struct event *grace;
};

static void grace_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon_ctx *d = arg;

	tbx_log_warn("%d call(s) still running after %d s; stopping anyway",
		     tbx_server_inflight(d->server), SHUTDOWN_GRACE_S);
	event_base_loopbreak(d->base);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct daemon_ctx *d = arg;
	struct timeval tv = { SHUTDOWN_GRACE_S, 0 };

	tbx_log_info("signal %d: shutting down (%d call(s) in flight)", (int)sig,
		     tbx_server_inflight(d->server));
	tbx_server_shutdown(d->server);
	if (!d->grace) {
		d->grace = evtimer_new(d->base, grace_cb, d);
		evtimer_add(d->grace, &tv);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct tbx_core core = { 0 };
	struct tbx_registry_config rcfg = { 0 };
	struct daemon_ctx d = { 0 };
	struct tbx_workers *workers = NULL;
	struct event *sigterm = NULL, *sigint = NULL;
	int c, lock_fd = -1, listen_fd = -1, status = 1;

	while ((c = getopt_long(argc, argv, "hV", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("twinboxd %s (ABI %d.%d)\n", TBX_VERSION, TBX_ABI_MAJOR, TBX_ABI_MINOR);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	pthread_mutex_init(&core.engines_lock, NULL);
	core.started_at_ms = tbx_now_ms();
	if (tbx_paths_init(&core.paths) < 0 || prepare_runtime_dir(core.paths.runtime_dir) < 0)
		goto fail;

	lock_fd = open(core.paths.lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0) {
		tbx_error_set(TBX_EIO, "cannot open %s: %s", core.paths.lock_path, strerror(errno));
		goto fail;
	}
	if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
		/* Another daemon won the race: it serves, we are not needed. */
		tbx_log_info("another twinboxd holds %s; exiting", core.paths.lock_path);
		close(lock_fd);
		return 0;
	}
	if (load_config(&core) < 0)
		goto fail;
	if (tbx_store_open(core.paths.db_path, &core.store) < 0)
		goto fail;
	if (tbx_sessions_new(&core, &core.sessions) < 0)
		goto fail;
	rcfg.search_path = tbx_module_default_path();
	rcfg.config = core.config;
	rcfg.data_root = core.paths.data_dir;
	rcfg.state_root = core.paths.state_dir;
	if (tbx_registry_load(&core.registry, &rcfg) < 0)
		goto fail;
	if (tbx_twin_service_start(&core.paths, &core.twin) < 0)
		goto fail;
	tbx_log_info("%zu module(s) loaded from %s, %zu refused", core.registry.n_modules,
		     rcfg.search_path, core.registry.n_refused);

	if (evthread_use_pthreads() != 0 || !(d.base = event_base_new())) {
		tbx_error_set(TBX_EIO, "cannot start the event loop");
		goto fail;
	}
	workers = tbx_workers_new(d.base, WORKERS_NORMAL, WORKERS_PRIORITY);
	if (!workers) {
		tbx_error_set(TBX_EIO, "cannot start worker threads");
		goto fail;
	}
	if ((listen_fd = listen_socket(core.paths.socket_path)) < 0)
		goto fail;
	if (tbx_server_new(d.base, workers, &core, listen_fd, &d.server) < 0) {
		close(listen_fd);
		goto fail;
	}
	sigterm = evsignal_new(d.base, SIGTERM, signal_cb, &d);
	sigint = evsignal_new(d.base, SIGINT, signal_cb, &d);
	evsignal_add(sigterm, NULL);
	evsignal_add(sigint, NULL);
	tbx_log_info("twinboxd %s listening on %s (pid %d)", TBX_VERSION, core.paths.socket_path,
		     (int)getpid());
	event_base_dispatch(d.base);
	tbx_server_flush(d.server, 1000);
	tbx_log_info("stopped serving");
	status = 0;
	unlink(core.paths.socket_path);
fail:
	if (status != 0)
		tbx_log_error("%s", tbx_error_message());
	/* Joins the workers: every call has finished before the store closes. */
	tbx_workers_free(workers);
	tbx_server_free(d.server);
	if (sigterm)
		event_free(sigterm);
	if (sigint)
		event_free(sigint);
	if (d.grace)
		event_free(d.grace);
	if (d.base)
		event_base_free(d.base);
	tbx_twin_service_free(core.twin);
	tbx_sessions_free(core.sessions);
	tbx_core_engines_free(&core);
	tbx_store_close(core.store);
	tbx_registry_clear(&core.registry);
	json_object_put(core.config);
	if (lock_fd >= 0)
		close(lock_fd);
	return status;
}
