/* SPDX-License-Identifier: MIT */
/*
 * Freeing a bufferevent without losing its last bytes. bufferevent_free()
 * drops whatever is still queued, and a TLS filter's queue lives in the
 * socket bufferevent under it, where no callback reports the drain; so the
 * free waits (polling briefly, at most two seconds) until both are empty.
 */
#ifndef TBX_LINGER_H
#define TBX_LINGER_H

struct bufferevent;

/* Send TLS close_notify if bev is TLS, flush, then free bev (and what it owns). */
void tbx_bev_linger_free(struct bufferevent *bev);
/* How many are still flushing (shutdown waits for none). */
int tbx_bev_lingering(void);

#endif
