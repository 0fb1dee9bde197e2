/* SPDX-License-Identifier: MIT */
/* Flush-then-free for bufferevents (see linger.h). */
#include "linger.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <openssl/ssl.h>
#include <stdlib.h>

#define POLL_MS 5
#define MAX_POLLS 400 /* 2 s */

static int lingering;

struct tbx_linger {
	struct bufferevent *bev;
	struct event *timer;
	int polls;
};

static int pending(struct bufferevent *bev)
{
	struct bufferevent *under = bufferevent_get_underlying(bev);

	return evbuffer_get_length(bufferevent_get_output(bev)) > 0 ||
	       (under && evbuffer_get_length(bufferevent_get_output(under)) > 0);
}

static void on_poll(evutil_socket_t fd, short what, void *arg)
{
	struct tbx_linger *l = arg;
	struct timeval tv = { 0, POLL_MS * 1000 };

	if (pending(l->bev) && ++l->polls < MAX_POLLS) {
		evtimer_add(l->timer, &tv);
		return;
	}
	event_free(l->timer);
	bufferevent_free(l->bev);
	free(l);
	lingering--;
}

int tbx_bev_lingering(void)
{
	return lingering;
}

/* The peer went away: nothing more will drain. */
static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct tbx_linger *l = arg;

	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		l->polls = MAX_POLLS;
}

void tbx_bev_linger_free(struct bufferevent *bev)
{
	SSL *ssl = bufferevent_openssl_get_ssl(bev);
	struct tbx_linger *l;
	struct timeval tv = { 0, 0 };

	if (ssl && SSL_is_init_finished(ssl)) {
		SSL_shutdown(ssl); /* queues close_notify in the socket below */
		bufferevent_flush(bev, EV_WRITE, BEV_FLUSH);
	}
	if (!pending(bev) || !(l = calloc(1, sizeof(*l)))) {
		bufferevent_free(bev);
		return;
	}
	l->bev = bev;
	l->timer = evtimer_new(bufferevent_get_base(bev), on_poll, l);
	if (!l->timer) {
		free(l);
		bufferevent_free(bev);
		return;
	}
	lingering++;
	bufferevent_setcb(bev, NULL, NULL, on_event, l);
	bufferevent_disable(bev, EV_READ);
	bufferevent_enable(bev, EV_WRITE);
	evtimer_add(l->timer, &tv);
}
