/* SPDX-License-Identifier: MIT */
/* What the Stripe twin's files share: the request context and its helpers. */
#ifndef TBX_STRIPE_PRIV_H
#define TBX_STRIPE_PRIV_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "httpd.h"

struct tbx_http_msg;
struct tbx_reply;
struct tbx_service;

struct stripe_ctx {
	struct tbx_service *svc;
	const struct tbx_http_msg *req;
	struct tbx_reply *rep;
	const char *method;
	char **segs; /* path segments after /v1 */
	int n;
	struct json_object *params; /* form body or query, as a JSON tree */
	int64_t now;                /* seconds */
};

/* Error replies in Stripe's shape. All return -1 so handlers can `return stripe_err...`. */
int stripe_error(struct stripe_ctx *c, int status, const char *type, const char *code,
		 const char *param, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
int stripe_missing(struct stripe_ctx *c, const char *kind, const char *id, const char *param);
/* Answer with obj (a new reference is taken), expanding what `expand` asks for. */
int stripe_send(struct stripe_ctx *c, int status, struct json_object *obj);
/* A list response over a kind's objects, newest first, with Stripe's cursors. */
typedef int (*stripe_filter)(struct stripe_ctx *c, struct json_object *obj);
int stripe_list(struct stripe_ctx *c, const char *kind, const char *url, stripe_filter filter,
		const char *const *allowed);

/* Refuse parameters outside allowed (NULL-terminated; "expand" always allowed). */
int stripe_check_params(struct stripe_ctx *c, const char *const *allowed);
const char *stripe_str(struct stripe_ctx *c, const char *name);
/* 1 present and valid, 0 absent, -1 invalid (error sent). */
int stripe_int(struct stripe_ctx *c, const char *name, long long *out);
int stripe_bool(struct stripe_ctx *c, const char *name, int *out);
/* Apply metadata[...] updates to obj's metadata ("" deletes a key). -1 on error. */
int stripe_apply_metadata(struct stripe_ctx *c, struct json_object *obj);
/* Copy string parameters named in fields onto obj (empty string clears to null). */
void stripe_copy_strings(struct stripe_ctx *c, struct json_object *obj, const char *const *fields);
/* A fresh id: prefix + n base62 characters. */
void stripe_id(char *out, size_t size, const char *prefix, size_t n);

struct json_object *stripe_get(struct stripe_ctx *c, const char *kind, const char *id);
void stripe_put(struct stripe_ctx *c, const char *kind, struct json_object *obj);
const char *stripe_obj_str(struct json_object *obj, const char *key);
long long stripe_obj_int(struct json_object *obj, const char *key);

/* Handlers, by resource. */
int stripe_customers(struct stripe_ctx *c);
int stripe_payment_intents(struct stripe_ctx *c);
int stripe_charges(struct stripe_ctx *c);
int stripe_refunds(struct stripe_ctx *c);

/* A charge for amount against a payment method or source; NULL after an error reply. */
struct json_object *stripe_charge_new(struct stripe_ctx *c, long long amount, const char *currency,
				      const char *customer, const char *payment_method,
				      const char *payment_intent, int capture);
/* The 402 a declined card gets; extra (the payment intent, say) goes in the error too. */
int stripe_decline_error(struct stripe_ctx *c, struct json_object *charge, const char *pm,
			 const char *extra_key, struct json_object *extra);
/* amount and currency (lowercased into currency) as Stripe checks them on create. */
int stripe_amount(struct stripe_ctx *c, long long *amount, char currency[4]);
/* Non-NULL decline code when this test payment method or token is one that declines. */
const char *stripe_decline_code(const char *payment_method);

#endif
