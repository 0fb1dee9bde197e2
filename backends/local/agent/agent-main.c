/* SPDX-License-Identifier: MIT */
/* twinbox-sandbox-agent: serve envd's protocol subset on a Unix socket. */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <event2/listener.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static void agent_dispatch(struct evhttp_request *req, void *arg)
{
	struct agent *a = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;

	if (!path) {
		agent_reply_files_error(req, 400, "bad request URI");
		return;
	}
	if (strcmp(path, "/health") == 0) {
		evhttp_send_reply(req, 204, "No Content", NULL);
	} else if (strcmp(path, "/files") == 0) {
		agent_files_handle(a, req);
	} else if (strncmp(path, "/process.Process/", 17) == 0) {
		agent_process_handle(a, req, path + 17);
	} else if (strncmp(path, "/filesystem.Filesystem/", 23) == 0) {
		agent_fs_handle(a, req, path + 23);
	} else {
		agent_reply_files_error(req, 404, "no route for %s", path);
	}
}

static void agent_sigchld_cb(evutil_socket_t sig, short what, void *arg)
{
	agent_process_reap(arg);
}

static void agent_sigterm_cb(evutil_socket_t sig, short what, void *arg)
{
	struct agent *a = arg;

	agent_log("signal %d: exiting", (int)sig);
	event_base_loopbreak(a->base);
}

static void agent_usage(void)
{
	fprintf(stderr, "usage: twinbox-sandbox-agent --socket PATH [--home DIR] [--workdir DIR]\n"
			"                             [--forward 127.0.0.1:PORT=/unix/socket]...\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "home", required_argument, NULL, 'h' },
		{ "workdir", required_argument, NULL, 'w' },
		{ "forward", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	const char *forward_specs[AGENT_MAX_FORWARDS];
	struct agent_forward *forwards[AGENT_MAX_FORWARDS] = { 0 };
	size_t n_forwards = 0;
	struct agent a = { .home = "/home/user", .workdir = NULL };
	const char *sock = NULL;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct evconnlistener *lis;
	struct event *ev_chld, *ev_term, *ev_int;
	mode_t old_umask;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': sock = optarg; break;
		case 'h': a.home = optarg; break;
		case 'w': a.workdir = optarg; break;
		case 'f':
			if (n_forwards == AGENT_MAX_FORWARDS || !agent_forward_valid(optarg)) {
				agent_usage();
				return 2;
			}
			forward_specs[n_forwards++] = optarg;
			break;
		default: agent_usage(); return 2;
		}
	}
	if (!sock || strlen(sock) >= sizeof(sun.sun_path)) {
		agent_usage();
		return 2;
	}
	if (!a.workdir)
		a.workdir = a.home;
	LIST_INIT(&a.procs);
	/* A client hanging up mid-reply must not kill the agent. */
	signal(SIGPIPE, SIG_IGN);

	a.base = event_base_new();
	a.http = a.base ? evhttp_new(a.base) : NULL;
	if (!a.http) {
		agent_log("cannot set up libevent");
		return 1;
	}
	evhttp_set_max_body_size(a.http, (ev_ssize_t)AGENT_UPLOAD_MAX);
	evhttp_set_max_headers_size(a.http, 64 * 1024);
	evhttp_set_allowed_methods(a.http, EVHTTP_REQ_GET | EVHTTP_REQ_POST);
	evhttp_set_gencb(a.http, agent_dispatch, &a);

	strcpy(sun.sun_path, sock);
	unlink(sock);
	/* Only the sandbox user (the host user, mapped) may connect. */
	old_umask = umask(077);
	lis = evconnlistener_new_bind(a.base, NULL, NULL,
				      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 64,
				      (struct sockaddr *)&sun, (int)sizeof(sun));
	umask(old_umask);
	if (!lis) {
		agent_log("cannot listen on %s: %s", sock, strerror(errno));
		return 1;
	}
	if (!evhttp_bind_listener(a.http, lis)) {
		agent_log("cannot serve HTTP on %s", sock);
		return 1;
	}
	ev_chld = evsignal_new(a.base, SIGCHLD, agent_sigchld_cb, &a);
	ev_term = evsignal_new(a.base, SIGTERM, agent_sigterm_cb, &a);
	ev_int = evsignal_new(a.base, SIGINT, agent_sigterm_cb, &a);
	if (!ev_chld || !ev_term || !ev_int || evsignal_add(ev_chld, NULL) < 0 ||
	    evsignal_add(ev_term, NULL) < 0 || evsignal_add(ev_int, NULL) < 0) {
		agent_log("cannot watch signals");
		return 1;
	}
	/*
	 * A forward that cannot listen (its port taken) leaves the sandbox
	 * without that way out, which the daemon's canary reports; the agent
	 * itself still serves.
	 */
	for (size_t i = 0; i < n_forwards; i++)
		forwards[i] = agent_forward_start(&a, forward_specs[i]);
	agent_log("serving on %s (home %s, workdir %s)", sock, a.home, a.workdir);
	event_base_dispatch(a.base);
	for (size_t i = 0; i < n_forwards; i++)
		agent_forward_free(forwards[i]);
	unlink(sock);
	event_free(ev_chld);
	event_free(ev_term);
	event_free(ev_int);
	evhttp_free(a.http);
	event_base_free(a.base);
	return 0;
}
