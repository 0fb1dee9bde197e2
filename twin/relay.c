/* SPDX-License-Identifier: MIT */
/* Two-way byte relay with back-pressure (see relay.h). */
#include "relay.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "linger.h"

/* Stop reading one side while the other has this much still to send. */
#define HIGH_WATER (512 * 1024)

struct tbx_relay {
	struct bufferevent *side[2]; /* 0 client, 1 host */
	uint64_t moved[2];           /* bytes read from side i */
	tbx_relay_done done;
	void *arg;
};

static void finish(struct tbx_relay *r, const char *why)
{
	tbx_relay_done done = r->done;
	void *arg = r->arg;
	uint64_t up = r->moved[0], down = r->moved[1];

	for (int i = 0; i < 2; i++) {
		bufferevent_setcb(r->side[i], NULL, NULL, NULL, NULL);
		tbx_bev_linger_free(r->side[i]);
	}
	free(r);
	done(arg, why, up, down);
}

void tbx_relay_stop(struct tbx_relay *r, const char *why)
{
	finish(r, why);
}

static int index_of(struct tbx_relay *r, struct bufferevent *bev)
{
	return r->side[0] == bev ? 0 : 1;
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct tbx_relay *r = arg;
	int i = index_of(r, bev);
	struct bufferevent *other = r->side[!i];
	struct evbuffer *in = bufferevent_get_input(bev);

	r->moved[i] += evbuffer_get_length(in);
	evbuffer_add_buffer(bufferevent_get_output(other), in);
	if (evbuffer_get_length(bufferevent_get_output(other)) >= HIGH_WATER) {
		bufferevent_disable(bev, EV_READ);
		bufferevent_setwatermark(other, EV_WRITE, HIGH_WATER / 2, 0);
	}
}

/* The other side drained below the mark: read from this one again. */
static void on_write(struct bufferevent *bev, void *arg)
{
	struct tbx_relay *r = arg;
	struct bufferevent *other = r->side[!index_of(r, bev)];

	if (!(bufferevent_get_enabled(other) & EV_READ)) {
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		bufferevent_enable(other, EV_READ);
	}
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct tbx_relay *r = arg;
	int i = index_of(r, bev);

	if (what & BEV_EVENT_EOF) {
		/* Whatever arrived with the EOF still goes across before both close. */
		on_read(bev, r);
		finish(r, i == 0 ? "client closed" : "host closed");
	} else if (what & BEV_EVENT_TIMEOUT) {
		finish(r, "idle timeout");
	} else if (what & BEV_EVENT_ERROR) {
		finish(r, i == 0 ? "client connection error" : "host connection error");
	}
}

struct tbx_relay *tbx_relay_start(struct bufferevent *client, struct bufferevent *host,
				  int idle_timeout_s, tbx_relay_done done, void *arg)
{
	struct tbx_relay *r = calloc(1, sizeof(*r));
	struct timeval idle = { idle_timeout_s, 0 };

	if (!r)
		return NULL;
	r->side[0] = client;
	r->side[1] = host;
	r->done = done;
	r->arg = arg;
	for (int i = 0; i < 2; i++) {
		bufferevent_setcb(r->side[i], on_read, on_write, on_event, r);
		bufferevent_set_timeouts(r->side[i], idle_timeout_s > 0 ? &idle : NULL, NULL);
		bufferevent_enable(r->side[i], EV_READ | EV_WRITE);
	}
	for (int i = 0; i < 2; i++)
		if (evbuffer_get_length(bufferevent_get_input(r->side[i])) > 0)
			on_read(r->side[i], r);
	return r;
}
