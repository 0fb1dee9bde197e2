/* SPDX-License-Identifier: MIT */
/*
 * Upstream routes: a request for a host routed to the user's own fake
 * (stripe-mock, say) is forwarded with libcurl on a short-lived thread and
 * the answer comes back to the event loop, which never blocks on it.
 */
#ifndef TBX_UPSTREAM_H
#define TBX_UPSTREAM_H

struct event_base;
struct tbx_routes;
struct tbx_http_msg;
struct tbx_reply;
struct tbx_upstream;
struct tbx_upstream_job;

/* rep is filled (status 502 with an error body when the upstream failed); consume it. */
typedef void (*tbx_upstream_done)(void *arg, struct tbx_reply *rep);

int tbx_upstream_new(struct event_base *base, const struct tbx_routes *cfg, int timeout_s,
		     struct tbx_upstream **out);
/* Abort what is in flight, wait for its threads, free. */
void tbx_upstream_free(struct tbx_upstream *up);
/*
 * Forward req to base_url + its target; host is the name the client asked
 * for (sent as X-Forwarded-Host). done runs on the loop thread. NULL when
 * too many are in flight or out of memory.
 */
struct tbx_upstream_job *tbx_upstream_forward(struct tbx_upstream *up, const char *base_url,
					      const struct tbx_http_msg *req, const char *host,
					      tbx_upstream_done done, void *arg);
/* The requester is gone: done will not be called. */
void tbx_upstream_cancel(struct tbx_upstream_job *job);

#endif
