/* SPDX-License-Identifier: MIT */
/* The Stripe twin's payment intents: create, confirm, capture, cancel, update, list. */
#include <stdio.h>
#include <string.h>

#include "stripe-priv.h"

static const char *const create_params[] = {
	"amount", "currency", "customer", "description", "metadata", "payment_method",
	"payment_method_types", "confirm", "capture_method", "automatic_payment_methods",
	"receipt_email", "setup_future_usage", "statement_descriptor", "statement_descriptor_suffix",
	"return_url", "off_session", "confirmation_method", "error_on_requires_action",
	"use_stripe_sdk", "mandate_data", "shipping", "payment_method_options", "transfer_group",
	NULL,
};
static const char *const confirm_params[] = {
	"payment_method", "return_url", "receipt_email", "off_session", "setup_future_usage",
	"capture_method", "error_on_requires_action", "use_stripe_sdk", "mandate_data", "shipping",
	"payment_method_options", "payment_method_types", NULL,
};

static const char *status_of(struct json_object *pi)
{
	return stripe_obj_str(pi, "status");
}

static void set_str(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

/*
 * Confirm: charge the payment method. A decline leaves the intent waiting for
 * another method with last_payment_error set, and answers 402 as Stripe does.
 */
static int confirm(struct stripe_ctx *c, struct json_object *pi)
{
	const char *st = status_of(pi), *pm = stripe_str(c, "payment_method");
	const char *capture_method = stripe_str(c, "capture_method");
	struct json_object *ch;
	int manual;

	if (strcmp(st, "requires_payment_method") && strcmp(st, "requires_confirmation") &&
	    strcmp(st, "requires_action"))
		return stripe_error(c, 400, "invalid_request_error", "payment_intent_unexpected_state", NULL,
				    "You cannot confirm this PaymentIntent because it has a status of %s. "
				    "Only a PaymentIntent with one of the following statuses may be confirmed: "
				    "requires_confirmation, requires_action, requires_payment_method.", st);
	if (!pm)
		pm = stripe_obj_str(pi, "payment_method");
	if (!pm)
		return stripe_error(c, 400, "invalid_request_error", "payment_intent_unexpected_state",
				    "payment_method",
				    "You cannot confirm this PaymentIntent because it's missing a payment "
				    "method. You can either update the PaymentIntent with a payment method and "
				    "then confirm it again, or confirm it again directly with a payment method "
				    "or ConfirmationToken.");
	if (capture_method && strcmp(capture_method, "automatic") && strcmp(capture_method, "manual") &&
	    strcmp(capture_method, "automatic_async"))
		return stripe_error(c, 400, "invalid_request_error", "parameter_invalid_string",
				    "capture_method", "Invalid capture_method: %s", capture_method);
	if (capture_method)
		set_str(pi, "capture_method", capture_method);
	manual = strcmp(stripe_obj_str(pi, "capture_method"), "manual") == 0;
	set_str(pi, "payment_method", pm);
	if (stripe_str(c, "receipt_email"))
		set_str(pi, "receipt_email", stripe_str(c, "receipt_email"));
	ch = stripe_charge_new(c, stripe_obj_int(pi, "amount"), stripe_obj_str(pi, "currency"),
			       stripe_obj_str(pi, "customer"), pm, stripe_obj_str(pi, "id"), !manual);
	set_str(pi, "latest_charge", stripe_obj_str(ch, "id"));
	if (stripe_decline_code(pm)) {
		struct json_object *err = json_object_new_object(), *pmo = json_object_new_object();
		const char *msg = stripe_obj_str(ch, "failure_message");
		set_str(err, "charge", stripe_obj_str(ch, "id"));
		set_str(err, "code", stripe_obj_str(ch, "failure_code"));
		set_str(err, "decline_code", stripe_decline_code(pm));
		set_str(err, "message", msg);
		set_str(pmo, "id", pm);
		set_str(pmo, "object", "payment_method");
		set_str(pmo, "type", "card");
		json_object_object_add(err, "payment_method", pmo);
		set_str(err, "type", "card_error");
		json_object_object_add(pi, "last_payment_error", err);
		set_str(pi, "status", "requires_payment_method");
		set_str(pi, "payment_method", NULL);
		stripe_put(c, "payment_intent", pi);
		return stripe_decline_error(c, ch, pm, "payment_intent", pi);
	}
	json_object_object_add(pi, "last_payment_error", NULL);
	json_object_object_add(pi, "amount_received", json_object_new_int64(manual ? 0 : stripe_obj_int(pi, "amount")));
	json_object_object_add(pi, "amount_capturable", json_object_new_int64(manual ? stripe_obj_int(pi, "amount") : 0));
	set_str(pi, "status", manual ? "requires_capture" : "succeeded");
	stripe_put(c, "payment_intent", pi);
	return stripe_send(c, 200, pi);
}

static int create(struct stripe_ctx *c)
{
	const char *customer = stripe_str(c, "customer"), *pm = stripe_str(c, "payment_method");
	const char *capture_method = stripe_str(c, "capture_method");
	struct json_object *pi, *types, *apm;
	char id[40], secret[96], sfx[32], currency[4];
	long long amount;
	int do_confirm = 0;

	if (stripe_check_params(c, create_params) < 0 || stripe_amount(c, &amount, currency) < 0 ||
	    stripe_bool(c, "confirm", &do_confirm) < 0)
		return -1;
	if (customer && !stripe_get(c, "customer", customer))
		return stripe_missing(c, "customer", customer, "customer");
	if (capture_method && strcmp(capture_method, "automatic") && strcmp(capture_method, "manual") &&
	    strcmp(capture_method, "automatic_async"))
		return stripe_error(c, 400, "invalid_request_error", "parameter_invalid_string",
				    "capture_method", "Invalid capture_method: %s", capture_method);
	pi = json_object_new_object();
	stripe_id(id, sizeof(id), "pi_", 24);
	stripe_id(sfx, sizeof(sfx), "", 25);
	snprintf(secret, sizeof(secret), "%s_secret_%s", id, sfx);
	set_str(pi, "id", id);
	set_str(pi, "object", "payment_intent");
	json_object_object_add(pi, "amount", json_object_new_int64(amount));
	json_object_object_add(pi, "amount_capturable", json_object_new_int64(0));
	json_object_object_add(pi, "amount_received", json_object_new_int64(0));
	if (json_object_object_get_ex(c->params, "automatic_payment_methods", &apm) &&
	    json_object_is_type(apm, json_type_object)) {
		struct json_object *en, *o = json_object_new_object();
		json_object_object_add(o, "enabled", json_object_new_boolean(
			json_object_object_get_ex(apm, "enabled", &en) && !strcmp(json_object_get_string(en), "true")));
		json_object_object_add(pi, "automatic_payment_methods", o);
	} else {
		json_object_object_add(pi, "automatic_payment_methods", NULL);
	}
	json_object_object_add(pi, "canceled_at", NULL);
	json_object_object_add(pi, "cancellation_reason", NULL);
	set_str(pi, "capture_method", capture_method ? capture_method : "automatic");
	set_str(pi, "client_secret", secret);
	set_str(pi, "confirmation_method", "automatic");
	json_object_object_add(pi, "created", json_object_new_int64(c->now));
	set_str(pi, "currency", currency);
	set_str(pi, "customer", customer);
	set_str(pi, "description", stripe_str(c, "description"));
	json_object_object_add(pi, "last_payment_error", NULL);
	json_object_object_add(pi, "latest_charge", NULL);
	json_object_object_add(pi, "livemode", json_object_new_boolean(0));
	json_object_object_add(pi, "metadata", json_object_new_object());
	json_object_object_add(pi, "next_action", NULL);
	set_str(pi, "payment_method", pm);
	if (json_object_object_get_ex(c->params, "payment_method_types", &types) &&
	    json_object_is_type(types, json_type_array))
		json_object_object_add(pi, "payment_method_types", json_object_get(types));
	else {
		types = json_object_new_array();
		json_object_array_add(types, json_object_new_string("card"));
		json_object_object_add(pi, "payment_method_types", types);
	}
	set_str(pi, "receipt_email", stripe_str(c, "receipt_email"));
	set_str(pi, "setup_future_usage", stripe_str(c, "setup_future_usage"));
	set_str(pi, "statement_descriptor", stripe_str(c, "statement_descriptor"));
	set_str(pi, "status", pm ? "requires_confirmation" : "requires_payment_method");
	if (stripe_apply_metadata(c, pi) < 0) {
		json_object_put(pi);
		return -1;
	}
	stripe_put(c, "payment_intent", pi);
	if (do_confirm)
		return confirm(c, pi);
	return stripe_send(c, 200, pi);
}

static int capture(struct stripe_ctx *c, struct json_object *pi)
{
	long long amount = stripe_obj_int(pi, "amount_capturable");
	struct json_object *ch;
	int rc;

	if (stripe_check_params(c, (const char *const[]){ "amount_to_capture", "metadata",
							  "statement_descriptor", NULL }) < 0 ||
	    (rc = stripe_int(c, "amount_to_capture", &amount)) < 0)
		return -1;
	if (strcmp(status_of(pi), "requires_capture") != 0)
		return stripe_error(c, 400, "invalid_request_error", "payment_intent_unexpected_state", NULL,
				    "This PaymentIntent could not be captured because it has a status of %s. "
				    "Only a PaymentIntent with one of the following statuses may be captured: "
				    "requires_capture.", status_of(pi));
	if (amount > stripe_obj_int(pi, "amount_capturable"))
		return stripe_error(c, 400, "invalid_request_error", "amount_too_large", "amount_to_capture",
				    "The amount to capture must be less than or equal to the capturable amount.");
	if ((ch = stripe_get(c, "charge", stripe_obj_str(pi, "latest_charge")))) {
		json_object_object_add(ch, "captured", json_object_new_boolean(1));
		json_object_object_add(ch, "amount_captured", json_object_new_int64(amount));
		stripe_put(c, "charge", ch);
	}
	json_object_object_add(pi, "amount_received", json_object_new_int64(amount));
	json_object_object_add(pi, "amount_capturable", json_object_new_int64(0));
	set_str(pi, "status", "succeeded");
	stripe_put(c, "payment_intent", pi);
	return stripe_send(c, 200, pi);
}

static int cancel(struct stripe_ctx *c, struct json_object *pi)
{
	const char *reason = stripe_str(c, "cancellation_reason"), *st = status_of(pi);

	if (stripe_check_params(c, (const char *const[]){ "cancellation_reason", NULL }) < 0)
		return -1;
	if (!strcmp(st, "succeeded") || !strcmp(st, "canceled"))
		return stripe_error(c, 400, "invalid_request_error", "payment_intent_unexpected_state", NULL,
				    "You cannot cancel this PaymentIntent because it has a status of %s. Only a "
				    "PaymentIntent with one of the following statuses may be canceled: "
				    "requires_payment_method, requires_capture, requires_confirmation, "
				    "requires_action, processing.", st);
	json_object_object_add(pi, "canceled_at", json_object_new_int64(c->now));
	set_str(pi, "cancellation_reason", reason);
	json_object_object_add(pi, "amount_capturable", json_object_new_int64(0));
	set_str(pi, "status", "canceled");
	stripe_put(c, "payment_intent", pi);
	return stripe_send(c, 200, pi);
}

static int update(struct stripe_ctx *c, struct json_object *pi)
{
	static const char *const params[] = { "amount", "currency", "customer", "description", "metadata",
					      "payment_method", "receipt_email", "setup_future_usage",
					      "statement_descriptor", "payment_method_types", "shipping",
					      "capture_method", NULL };
	const char *st = status_of(pi), *pm = stripe_str(c, "payment_method");
	const char *customer = stripe_str(c, "customer");
	struct json_object *copy = NULL;
	long long amount;
	char currency[4];
	int final = !strcmp(st, "succeeded") || !strcmp(st, "canceled");

	if (stripe_check_params(c, params) < 0)
		return -1;
	if (final && (json_object_object_get_ex(c->params, "amount", NULL) || pm ||
		      json_object_object_get_ex(c->params, "currency", NULL)))
		return stripe_error(c, 400, "invalid_request_error", "payment_intent_unexpected_state", NULL,
				    "This PaymentIntent's amount, currency or payment_method could not be "
				    "updated because it has a status of %s.", st);
	if (customer && !stripe_get(c, "customer", customer))
		return stripe_missing(c, "customer", customer, "customer");
	if (json_object_deep_copy(pi, &copy, NULL) != 0)
		return -1;
	if (json_object_object_get_ex(c->params, "amount", NULL) ||
	    json_object_object_get_ex(c->params, "currency", NULL)) {
		/* Checked together, defaulting whichever is not being changed. */
		struct json_object *saved = json_object_get(c->params);
		struct json_object *both = NULL;
		json_object_deep_copy(c->params, &both, NULL);
		if (!json_object_object_get_ex(both, "amount", NULL)) {
			char buf[32];
			snprintf(buf, sizeof(buf), "%lld", stripe_obj_int(pi, "amount"));
			json_object_object_add(both, "amount", json_object_new_string(buf));
		}
		if (!json_object_object_get_ex(both, "currency", NULL))
			json_object_object_add(both, "currency", json_object_new_string(stripe_obj_str(pi, "currency")));
		c->params = both;
		int rc = stripe_amount(c, &amount, currency);
		c->params = saved;
		json_object_put(both);
		json_object_put(saved);
		if (rc < 0) {
			json_object_put(copy);
			return -1;
		}
		json_object_object_add(copy, "amount", json_object_new_int64(amount));
		set_str(copy, "currency", currency);
	}
	if (stripe_apply_metadata(c, copy) < 0) {
		json_object_put(copy);
		return -1;
	}
	stripe_copy_strings(c, copy, (const char *const[]){ "description", "receipt_email", "customer",
							    "setup_future_usage", "statement_descriptor",
							    "capture_method", NULL });
	if (pm) {
		set_str(copy, "payment_method", pm);
		set_str(copy, "status", "requires_confirmation");
	}
	stripe_put(c, "payment_intent", copy);
	return stripe_send(c, 200, copy);
}

static int pi_filter(struct stripe_ctx *c, struct json_object *pi)
{
	const char *cus = stripe_str(c, "customer"), *have = stripe_obj_str(pi, "customer");
	return !cus || (have && strcmp(cus, have) == 0);
}

int stripe_payment_intents(struct stripe_ctx *c)
{
	static const char *const list_params[] = { "limit", "starting_after", "ending_before", "customer",
						   "created", NULL };
	struct json_object *pi;

	if (c->n == 1 && strcmp(c->method, "POST") == 0)
		return create(c);
	if (c->n == 1 && strcmp(c->method, "GET") == 0)
		return stripe_list(c, "payment_intent", "/v1/payment_intents", pi_filter, list_params);
	if (c->n < 2 || c->n > 3)
		return 1;
	if (c->n == 3 && (strcmp(c->method, "POST") || (strcmp(c->segs[2], "confirm") &&
							 strcmp(c->segs[2], "capture") &&
							 strcmp(c->segs[2], "cancel"))))
		return 1;
	if (c->n == 2 && strcmp(c->method, "GET") && strcmp(c->method, "POST"))
		return 1;
	if (!(pi = stripe_get(c, "payment_intent", c->segs[1])))
		return stripe_missing(c, "payment_intent", c->segs[1], "intent");
	if (c->n == 2 && strcmp(c->method, "GET") == 0) {
		if (stripe_check_params(c, (const char *const[]){ "client_secret", NULL }) < 0)
			return -1;
		return stripe_send(c, 200, pi);
	}
	if (c->n == 2)
		return update(c, pi);
	if (strcmp(c->segs[2], "confirm") == 0)
		return stripe_check_params(c, confirm_params) < 0 ? -1 : confirm(c, pi);
	if (strcmp(c->segs[2], "capture") == 0)
		return capture(c, pi);
	return cancel(c, pi);
}
