/* SPDX-License-Identifier: MIT */
/*
 * A byte relay between two bufferevents (a client and the host it asked
 * for, under "open" egress), with back-pressure and an idle timeout.
 */
#ifndef TBX_RELAY_H
#define TBX_RELAY_H

#include <stdint.h>

struct bufferevent;
struct tbx_relay;

/* Called once when the relay ends; both bufferevents are being flushed and freed. */
typedef void (*tbx_relay_done)(void *arg, const char *why, uint64_t client_to_host,
			       uint64_t host_to_client);

/* Takes both bufferevents; bytes already in either input are relayed first. */
struct tbx_relay *tbx_relay_start(struct bufferevent *client, struct bufferevent *host,
				  int idle_timeout_s, tbx_relay_done done, void *arg);
/* End it now (done is called with why). */
void tbx_relay_stop(struct tbx_relay *r, const char *why);

#endif
