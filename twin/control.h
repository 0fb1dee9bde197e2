/* SPDX-License-Identifier: MIT */
/*
 * The control plane: the subset of the Veris control-plane API the daemon
 * uses (specs/ANCHORS.md §3), same paths and JSON, on loopback TCP or a Unix
 * socket, every request checked for the API key.
 */
#ifndef TBX_CONTROL_H
#define TBX_CONTROL_H

#include <stddef.h>

struct tbx_twind;
struct tbx_control;
struct tbx_http_msg;
struct tbx_reply;

/* Listen on spec (listen.h; loopback or unix only). bound gets the address. */
int tbx_control_start(struct tbx_twind *d, const char *spec, char *bound, size_t bound_size,
		      int *is_unix, struct tbx_control **out);
/* Close the listener and every connection. */
void tbx_control_stop(struct tbx_control *ctl);
/* Answer one request (the API proper; exposed for tests). */
void tbx_control_handle(struct tbx_twind *d, const struct tbx_http_msg *req, struct tbx_reply *rep);

#endif
