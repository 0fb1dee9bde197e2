/* SPDX-License-Identifier: MIT */
/*
 * The built-in Stripe twin: customers, payment intents (create, confirm,
 * capture, cancel), charges and refunds with Stripe's form bodies, list
 * pagination, error shapes, sk_test_ auth and Idempotency-Key replay, its
 * state kept in the service (twins.h).
 */
#ifndef TBX_STRIPE_H
#define TBX_STRIPE_H

struct tbx_http_msg;
struct tbx_reply;
struct tbx_service;

void tbx_stripe_handle(struct tbx_service *svc, const struct tbx_http_msg *req,
		       struct tbx_reply *rep);

#endif
