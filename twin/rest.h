/* SPDX-License-Identifier: MIT */
/*
 * The generic stateful JSON REST twin, for routed hosts without a twin of
 * their own: POST /things creates (id assigned unless given), GET /things
 * lists, GET|PUT|PATCH|DELETE /things/{id} read, replace, merge, delete.
 * Collections nest (/orgs/7/members), state lives in the service (twins.h).
 */
#ifndef TBX_REST_H
#define TBX_REST_H

struct tbx_http_msg;
struct tbx_reply;
struct tbx_service;

void tbx_rest_handle(struct tbx_service *svc, const struct tbx_http_msg *req, struct tbx_reply *rep);

#endif
