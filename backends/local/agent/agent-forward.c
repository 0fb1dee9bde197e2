/* SPDX-License-Identifier: MIT */
/*
 * Port forwarding inside the sandbox: a TCP port on the namespace's own
 * loopback whose every connection is relayed to a Unix socket. This is how
 * the egress gateway becomes reachable from a network namespace that has
 * loopback only: the local engine bind-mounts the gateway's sockets in and
 * the agent listens on 127.0.0.1:1080 (SOCKS5) and 127.0.0.1:3128 (CONNECT)
 * for the sandbox's programs. Nothing else is reachable through it: the
 * target is a fixed socket path, not something a client can name.
 */
#define _GNU_SOURCE
#include "agent.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Stop reading one side while the other still has this much to send. */
#define FWD_HIGH_WATER (256 * 1024)
/* More connections than any sandbox needs to the gateway; a runaway loop stops here. */
#define FWD_MAX_CONNS 1024

struct agent_forward {
	struct agent *a;
	struct evconnlistener *listener;
	struct sockaddr_un target;
	char listen_spec[64];
};

/* One relayed connection: side 0 is the sandbox's client, side 1 the Unix socket. */
struct fwd_conn {
	struct bufferevent *side[2];
	int eof[2];       /* side i sent EOF */
	int shut_due[2];  /* shut side i's write half once its output drains */
	int connected;
};

static int fwd_conns;

static void fwd_free(struct fwd_conn *c)
{
	for (int i = 0; i < 2; i++)
		if (c->side[i])
			bufferevent_free(c->side[i]);
	free(c);
	fwd_conns--;
}

static int fwd_index(struct fwd_conn *c, struct bufferevent *bev)
{
	return c->side[0] == bev ? 0 : 1;
}

static int fwd_drained(struct fwd_conn *c, int i)
{
	return evbuffer_get_length(bufferevent_get_output(c->side[i])) == 0;
}

/* Both sides said EOF and everything was passed on: done. */
static int fwd_maybe_done(struct fwd_conn *c)
{
	if (c->eof[0] && c->eof[1] && fwd_drained(c, 0) && fwd_drained(c, 1)) {
		fwd_free(c);
		return 1;
	}
	return 0;
}

/* Pass side i's EOF on as a half close, once what came before it is sent. */
static void fwd_shut(struct fwd_conn *c, int i)
{
	if (c->shut_due[i] && fwd_drained(c, i)) {
		c->shut_due[i] = 0;
		shutdown(bufferevent_getfd(c->side[i]), SHUT_WR);
	}
}

static void fwd_on_read(struct bufferevent *bev, void *arg)
{
	struct fwd_conn *c = arg;
	int i = fwd_index(c, bev);
	struct bufferevent *other = c->side[!i];

	evbuffer_add_buffer(bufferevent_get_output(other), bufferevent_get_input(bev));
	if (evbuffer_get_length(bufferevent_get_output(other)) >= FWD_HIGH_WATER) {
		bufferevent_disable(bev, EV_READ);
		bufferevent_setwatermark(other, EV_WRITE, FWD_HIGH_WATER / 2, 0);
	}
}

static void fwd_on_write(struct bufferevent *bev, void *arg)
{
	struct fwd_conn *c = arg;
	int i = fwd_index(c, bev);
	struct bufferevent *other = c->side[!i];

	if (!c->eof[!i] && !(bufferevent_get_enabled(other) & EV_READ)) {
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		bufferevent_enable(other, EV_READ);
	}
	fwd_shut(c, i);
	fwd_maybe_done(c);
}

static void fwd_on_event(struct bufferevent *bev, short what, void *arg)
{
	struct fwd_conn *c = arg;
	int i = fwd_index(c, bev);

	if (what & BEV_EVENT_CONNECTED) {
		c->connected = 1;
		bufferevent_enable(c->side[0], EV_READ | EV_WRITE);
		bufferevent_enable(c->side[1], EV_READ | EV_WRITE);
		return;
	}
	if (what & BEV_EVENT_ERROR || !c->connected) {
		/* The gateway is not there (twind restarting, say): the client sees a close. */
		fwd_free(c);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		fwd_on_read(bev, c);
		c->eof[i] = 1;
		bufferevent_disable(bev, EV_READ);
		c->shut_due[!i] = 1;
		fwd_shut(c, !i);
		fwd_maybe_done(c);
	}
}

static void fwd_on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
			  int len, void *arg)
{
	struct agent_forward *f = arg;
	struct event_base *base = evconnlistener_get_base(l);
	struct fwd_conn *c;

	if (fwd_conns >= FWD_MAX_CONNS || !(c = calloc(1, sizeof(*c)))) {
		agent_log("forward %s: refusing a connection (%d open)", f->listen_spec, fwd_conns);
		evutil_closesocket(fd);
		return;
	}
	fwd_conns++;
	c->side[0] = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->side[1] = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!c->side[0] || !c->side[1]) {
		if (!c->side[0])
			evutil_closesocket(fd);
		fwd_free(c);
		return;
	}
	for (int i = 0; i < 2; i++)
		bufferevent_setcb(c->side[i], fwd_on_read, fwd_on_write, fwd_on_event, c);
	/* The client is read only once the gateway's side is up. */
	bufferevent_disable(c->side[0], EV_READ);
	if (bufferevent_socket_connect(c->side[1], (struct sockaddr *)&f->target,
				       (int)sizeof(f->target)) < 0)
		fwd_free(c);
}

/* "127.0.0.1:1080=/run/twinbox-gateway/socks.sock" into its two halves. */
static int fwd_parse(const char *spec, struct sockaddr_in *sin, struct sockaddr_un *sun)
{
	const char *eq = strchr(spec, '='), *colon;
	char host[INET_ADDRSTRLEN];
	char *end;
	long port;

	if (!eq || !(colon = memchr(spec, ':', (size_t)(eq - spec))) ||
	    (size_t)(colon - spec) >= sizeof(host) || eq[1] != '/' ||
	    strlen(eq + 1) >= sizeof(sun->sun_path))
		return -1;
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (end != eq || port <= 0 || port > 65535)
		return -1;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	/* Loopback only: the sandbox's own programs, nobody else, may use it. */
	if (inet_pton(AF_INET, host, &sin->sin_addr) != 1 ||
	    (ntohl(sin->sin_addr.s_addr) >> 24) != 127)
		return -1;
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	strcpy(sun->sun_path, eq + 1);
	return 0;
}

int agent_forward_valid(const char *spec)
{
	struct sockaddr_in sin;
	struct sockaddr_un sun;

	return fwd_parse(spec, &sin, &sun) == 0;
}

struct agent_forward *agent_forward_start(struct agent *a, const char *spec)
{
	struct agent_forward *f = calloc(1, sizeof(*f));
	struct sockaddr_in sin;

	if (!f || fwd_parse(spec, &sin, &f->target) < 0) {
		free(f);
		return NULL;
	}
	f->a = a;
	snprintf(f->listen_spec, sizeof(f->listen_spec), "%.*s", (int)(strchr(spec, '=') - spec),
		 spec);
	f->listener = evconnlistener_new_bind(a->base, fwd_on_accept, f,
					      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC |
						      LEV_OPT_REUSEABLE,
					      128, (struct sockaddr *)&sin, (int)sizeof(sin));
	if (!f->listener) {
		agent_log("forward %s: cannot listen: %s", f->listen_spec, strerror(errno));
		free(f);
		return NULL;
	}
	agent_log("forwarding %s to %s", f->listen_spec, f->target.sun_path);
	return f;
}

void agent_forward_free(struct agent_forward *f)
{
	if (!f)
		return;
	evconnlistener_free(f->listener);
	free(f);
}
