/* SPDX-License-Identifier: MIT */
/* The Stripe twin's charges and refunds, and the test cards that decline. */
#include <stdio.h>
#include <string.h>

#include "stripe-priv.h"

static const struct decline {
	const char *suffix; /* after pm_card_ or tok_ */
	const char *code, *decline_code, *message;
} declines[] = {
	{ "chargeDeclined", "card_declined", "generic_decline", "Your card was declined." },
	{ "chargeDeclinedInsufficientFunds", "card_declined", "insufficient_funds",
	  "Your card has insufficient funds." },
	{ "chargeDeclinedFraudulent", "card_declined", "fraudulent", "Your card was declined." },
	{ "chargeDeclinedExpiredCard", "expired_card", "expired_card", "Your card has expired." },
	{ "chargeDeclinedIncorrectCvc", "incorrect_cvc", "incorrect_cvc",
	  "Your card's security code is incorrect." },
	{ "chargeDeclinedProcessingError", "processing_error", "processing_error",
	  "An error occurred while processing your card. Try again in a little bit." },
};

static const struct decline *decline_for(const char *pm)
{
	const char *suffix = NULL;

	if (!pm)
		return NULL;
	if (strncmp(pm, "pm_card_", 8) == 0)
		suffix = pm + 8;
	else if (strncmp(pm, "tok_", 4) == 0)
		suffix = pm + 4;
	for (size_t i = 0; suffix && i < sizeof(declines) / sizeof(declines[0]); i++)
		if (strcmp(suffix, declines[i].suffix) == 0)
			return &declines[i];
	return NULL;
}

const char *stripe_decline_code(const char *payment_method)
{
	const struct decline *d = decline_for(payment_method);
	return d ? d->decline_code : NULL;
}

static const char *brand_of(const char *pm)
{
	static const char *const brands[] = { "mastercard", "amex", "discover", "diners", "jcb",
					      "unionpay" };
	for (size_t i = 0; pm && i < sizeof(brands) / sizeof(brands[0]); i++)
		if (strstr(pm, brands[i]))
			return brands[i];
	return "visa";
}

struct json_object *stripe_charge_new(struct stripe_ctx *c, long long amount, const char *currency,
				      const char *customer, const char *payment_method,
				      const char *payment_intent, int capture)
{
	const struct decline *d = decline_for(payment_method);
	struct json_object *ch = json_object_new_object(), *outcome = json_object_new_object();
	struct json_object *details = json_object_new_object(), *card = json_object_new_object();
	struct json_object *refunds = json_object_new_object();
	char id[40], txn[40], url[80];
	const char *brand = brand_of(payment_method);

	stripe_id(id, sizeof(id), "ch_", 24);
	stripe_id(txn, sizeof(txn), "txn_", 24);
	json_object_object_add(ch, "id", json_object_new_string(id));
	json_object_object_add(ch, "object", json_object_new_string("charge"));
	json_object_object_add(ch, "amount", json_object_new_int64(amount));
	json_object_object_add(ch, "amount_captured", json_object_new_int64(!d && capture ? amount : 0));
	json_object_object_add(ch, "amount_refunded", json_object_new_int64(0));
	json_object_object_add(ch, "balance_transaction", d ? NULL : json_object_new_string(txn));
	json_object_object_add(ch, "captured", json_object_new_boolean(!d && capture));
	json_object_object_add(ch, "created", json_object_new_int64(c->now));
	json_object_object_add(ch, "currency", json_object_new_string(currency));
	json_object_object_add(ch, "customer", customer ? json_object_new_string(customer) : NULL);
	json_object_object_add(ch, "description", NULL);
	json_object_object_add(ch, "disputed", json_object_new_boolean(0));
	json_object_object_add(ch, "failure_code", d ? json_object_new_string(d->code) : NULL);
	json_object_object_add(ch, "failure_message", d ? json_object_new_string(d->message) : NULL);
	json_object_object_add(ch, "livemode", json_object_new_boolean(0));
	json_object_object_add(ch, "metadata", json_object_new_object());
	json_object_object_add(outcome, "network_status",
			       json_object_new_string(d ? "declined_by_network" : "approved_by_network"));
	json_object_object_add(outcome, "reason", d ? json_object_new_string(d->decline_code) : NULL);
	json_object_object_add(outcome, "risk_level", json_object_new_string("normal"));
	json_object_object_add(outcome, "seller_message",
			       json_object_new_string(d ? "The bank did not return any further details with this decline."
							: "Payment complete."));
	json_object_object_add(outcome, "type", json_object_new_string(d ? "issuer_declined" : "authorized"));
	json_object_object_add(ch, "outcome", outcome);
	json_object_object_add(ch, "paid", json_object_new_boolean(!d));
	json_object_object_add(ch, "payment_intent", payment_intent ? json_object_new_string(payment_intent) : NULL);
	json_object_object_add(ch, "payment_method",
			       payment_method ? json_object_new_string(payment_method) : NULL);
	json_object_object_add(card, "brand", json_object_new_string(brand));
	json_object_object_add(card, "exp_month", json_object_new_int(12));
	json_object_object_add(card, "exp_year", json_object_new_int(2034));
	json_object_object_add(card, "last4", json_object_new_string(
		strcmp(brand, "mastercard") == 0 ? "4444" : strcmp(brand, "amex") == 0 ? "8431" : "4242"));
	json_object_object_add(card, "funding", json_object_new_string("credit"));
	json_object_object_add(details, "card", card);
	json_object_object_add(details, "type", json_object_new_string("card"));
	json_object_object_add(ch, "payment_method_details", details);
	json_object_object_add(ch, "receipt_email", NULL);
	json_object_object_add(ch, "refunded", json_object_new_boolean(0));
	json_object_object_add(refunds, "object", json_object_new_string("list"));
	json_object_object_add(refunds, "data", json_object_new_array());
	json_object_object_add(refunds, "has_more", json_object_new_boolean(0));
	json_object_object_add(refunds, "total_count", json_object_new_int(0));
	snprintf(url, sizeof(url), "/v1/charges/%s/refunds", id);
	json_object_object_add(refunds, "url", json_object_new_string(url));
	json_object_object_add(ch, "refunds", refunds);
	json_object_object_add(ch, "status", json_object_new_string(d ? "failed" : "succeeded"));
	stripe_put(c, "charge", ch);
	return ch;
}

int stripe_decline_error(struct stripe_ctx *c, struct json_object *charge, const char *pm,
			 const char *extra_key, struct json_object *extra)
{
	const struct decline *d = decline_for(pm);
	struct json_object *err = json_object_new_object(), *body = json_object_new_object();
	char doc[120];

	snprintf(doc, sizeof(doc), "https://stripe.com/docs/error-codes/%s", d->code);
	for (char *p = doc + 36; *p; p++)
		if (*p == '_')
			*p = '-';
	json_object_object_add(err, "charge", json_object_new_string(stripe_obj_str(charge, "id")));
	json_object_object_add(err, "code", json_object_new_string(d->code));
	json_object_object_add(err, "decline_code", json_object_new_string(d->decline_code));
	json_object_object_add(err, "doc_url", json_object_new_string(doc));
	json_object_object_add(err, "message", json_object_new_string(d->message));
	if (extra_key)
		json_object_object_add(err, extra_key, json_object_get(extra));
	json_object_object_add(err, "type", json_object_new_string("card_error"));
	json_object_object_add(body, "error", err);
	tbx_reply_json(c->rep, 402, body);
	return -1;
}

int stripe_amount(struct stripe_ctx *c, long long *amount, char currency[4])
{
	const char *cur = stripe_str(c, "currency");
	int rc = stripe_int(c, "amount", amount);

	if (rc < 0)
		return -1;
	if (rc == 0)
		return stripe_error(c, 400, "invalid_request_error", "parameter_missing", "amount",
				    "Missing required param: amount.");
	if (!cur)
		return stripe_error(c, 400, "invalid_request_error", "parameter_missing", "currency",
				    "Missing required param: currency.");
	if (strlen(cur) != 3)
		return stripe_error(c, 400, "invalid_request_error", "parameter_invalid_string", "currency",
				    "Invalid currency: %s.", cur);
	for (size_t i = 0; i < 3; i++) {
		char ch = cur[i];
		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		if (ch < 'a' || ch > 'z')
			return stripe_error(c, 400, "invalid_request_error", "parameter_invalid_string",
					    "currency", "Invalid currency: %s.", cur);
		currency[i] = ch;
	}
	currency[3] = '\0';
	if (strcmp(currency, "usd") == 0 && *amount < 50)
		return stripe_error(c, 400, "invalid_request_error", "amount_too_small", "amount",
				    "Amount must be at least $0.50 usd");
	if (*amount < 1)
		return stripe_error(c, 400, "invalid_request_error", "amount_too_small", "amount",
				    "Amount must be at least 1.");
	if (*amount > 99999999)
		return stripe_error(c, 400, "invalid_request_error", "amount_too_large", "amount",
				    "Amount must be no more than 99999999.");
	return 0;
}

static int create_charge(struct stripe_ctx *c)
{
	static const char *const params[] = { "amount", "currency", "customer", "source", "description",
					      "metadata", "capture", "receipt_email",
					      "statement_descriptor", "statement_descriptor_suffix", NULL };
	const char *customer = stripe_str(c, "customer"), *source = stripe_str(c, "source");
	struct json_object *ch;
	long long amount;
	char currency[4];
	int capture = 1;

	if (stripe_check_params(c, params) < 0 || stripe_amount(c, &amount, currency) < 0 ||
	    stripe_bool(c, "capture", &capture) < 0)
		return -1;
	if (customer && !stripe_get(c, "customer", customer))
		return stripe_missing(c, "customer", customer, "customer");
	if (!customer && !source)
		return stripe_error(c, 400, "invalid_request_error", "parameter_missing", "source",
				    "Must provide source or customer.");
	ch = stripe_charge_new(c, amount, currency, customer, source ? source : "pm_card_visa", NULL,
			       capture);
	if (stripe_apply_metadata(c, ch) < 0)
		return -1;
	stripe_copy_strings(c, ch, (const char *const[]){ "description", "receipt_email", NULL });
	stripe_put(c, "charge", ch);
	if (json_object_get_boolean(json_object_object_get(ch, "paid")) == 0)
		return stripe_decline_error(c, ch, source, NULL, NULL);
	return stripe_send(c, 200, ch);
}

static int charge_filter(struct stripe_ctx *c, struct json_object *ch)
{
	const char *cus = stripe_str(c, "customer"), *pi = stripe_str(c, "payment_intent");
	const char *have_cus = stripe_obj_str(ch, "customer"), *have_pi = stripe_obj_str(ch, "payment_intent");

	return (!cus || (have_cus && !strcmp(cus, have_cus))) && (!pi || (have_pi && !strcmp(pi, have_pi)));
}

static int capture_charge(struct stripe_ctx *c, struct json_object *ch)
{
	long long amount = stripe_obj_int(ch, "amount");
	int rc;

	if (stripe_check_params(c, (const char *const[]){ "amount", "receipt_email", NULL }) < 0 ||
	    (rc = stripe_int(c, "amount", &amount)) < 0)
		return -1;
	if (json_object_get_boolean(json_object_object_get(ch, "captured")) ||
	    strcmp(stripe_obj_str(ch, "status"), "succeeded") != 0)
		return stripe_error(c, 400, "invalid_request_error", "charge_already_captured", NULL,
				    "Charge %s has already been captured.", stripe_obj_str(ch, "id"));
	if (amount > stripe_obj_int(ch, "amount"))
		return stripe_error(c, 400, "invalid_request_error", "amount_too_large", "amount",
				    "You cannot capture more than the authorized amount.");
	json_object_object_add(ch, "captured", json_object_new_boolean(1));
	json_object_object_add(ch, "amount_captured", json_object_new_int64(amount));
	stripe_put(c, "charge", ch);
	return stripe_send(c, 200, ch);
}

int stripe_charges(struct stripe_ctx *c)
{
	static const char *const list_params[] = { "limit", "starting_after", "ending_before", "customer",
						   "payment_intent", "created", "transfer_group", NULL };
	struct json_object *ch, *copy = NULL;

	if (c->n == 1 && strcmp(c->method, "POST") == 0)
		return create_charge(c);
	if (c->n == 1 && strcmp(c->method, "GET") == 0)
		return stripe_list(c, "charge", "/v1/charges", charge_filter, list_params);
	if (c->n < 2 || c->n > 3)
		return 1;
	if (c->n == 3 && (strcmp(c->segs[2], "capture") || strcmp(c->method, "POST")))
		return 1;
	if (c->n == 2 && strcmp(c->method, "GET") && strcmp(c->method, "POST"))
		return 1;
	if (!(ch = stripe_get(c, "charge", c->segs[1])))
		return stripe_missing(c, "charge", c->segs[1], "id");
	if (c->n == 3)
		return capture_charge(c, ch);
	if (strcmp(c->method, "GET") == 0)
		return stripe_check_params(c, NULL) < 0 ? -1 : stripe_send(c, 200, ch);
	if (stripe_check_params(c, (const char *const[]){ "description", "metadata", "receipt_email",
							  "shipping", "fraud_details", NULL }) < 0 ||
	    json_object_deep_copy(ch, &copy, NULL) != 0)
		return -1;
	if (stripe_apply_metadata(c, copy) < 0) {
		json_object_put(copy);
		return -1;
	}
	stripe_copy_strings(c, copy, (const char *const[]){ "description", "receipt_email", NULL });
	stripe_put(c, "charge", copy);
	return stripe_send(c, 200, copy);
}

static int create_refund(struct stripe_ctx *c)
{
	static const char *const params[] = { "charge", "payment_intent", "amount", "reason", "metadata",
					      "refund_application_fee", "reverse_transfer",
					      "instructions_email", NULL };
	const char *charge_id = stripe_str(c, "charge"), *pi_id = stripe_str(c, "payment_intent");
	const char *reason = stripe_str(c, "reason");
	struct json_object *ch, *re, *refunds, *data;
	long long amount, captured, refunded;
	char id[40], txn[40];
	int rc;

	if (stripe_check_params(c, params) < 0 || (rc = stripe_int(c, "amount", &amount)) < 0)
		return -1;
	if (!charge_id && !pi_id)
		return stripe_error(c, 400, "invalid_request_error", "parameter_missing", NULL,
				    "One of the following params should be provided for this request: "
				    "payment_intent or charge.");
	if (pi_id) {
		struct json_object *pi = stripe_get(c, "payment_intent", pi_id);
		if (!pi)
			return stripe_missing(c, "payment_intent", pi_id, "payment_intent");
		if (!(charge_id = stripe_obj_str(pi, "latest_charge")) ||
		    strcmp(stripe_obj_str(pi, "status"), "succeeded") != 0)
			return stripe_error(c, 400, "invalid_request_error", "charge_not_refundable",
					    "payment_intent",
					    "This PaymentIntent (%s) does not have a successful charge to refund.",
					    pi_id);
	}
	if (!(ch = stripe_get(c, "charge", charge_id)))
		return stripe_missing(c, "charge", charge_id, "charge");
	if (reason && strcmp(reason, "duplicate") && strcmp(reason, "fraudulent") &&
	    strcmp(reason, "requested_by_customer"))
		return stripe_error(c, 400, "invalid_request_error", "parameter_invalid_string", "reason",
				    "Invalid reason: must be one of duplicate, fraudulent, or requested_by_customer");
	captured = stripe_obj_int(ch, "amount_captured");
	refunded = stripe_obj_int(ch, "amount_refunded");
	if (strcmp(stripe_obj_str(ch, "status"), "succeeded") != 0 || captured == 0)
		return stripe_error(c, 400, "invalid_request_error", "charge_not_refundable", "charge",
				    "Charge %s has not been captured and cannot be refunded.", charge_id);
	if (refunded >= captured)
		return stripe_error(c, 400, "invalid_request_error", "charge_already_refunded", NULL,
				    "Charge %s has already been refunded.", charge_id);
	if (rc == 0)
		amount = captured - refunded;
	if (amount < 1)
		return stripe_error(c, 400, "invalid_request_error", "amount_too_small", "amount",
				    "Refund amount must be at least 1.");
	if (amount > captured - refunded)
		return stripe_error(c, 400, "invalid_request_error", "amount_too_large", "amount",
				    "Refund amount (%lld) is greater than unrefunded amount on charge (%lld)",
				    amount, captured - refunded);
	re = json_object_new_object();
	stripe_id(id, sizeof(id), "re_", 24);
	stripe_id(txn, sizeof(txn), "txn_", 24);
	json_object_object_add(re, "id", json_object_new_string(id));
	json_object_object_add(re, "object", json_object_new_string("refund"));
	json_object_object_add(re, "amount", json_object_new_int64(amount));
	json_object_object_add(re, "balance_transaction", json_object_new_string(txn));
	json_object_object_add(re, "charge", json_object_new_string(charge_id));
	json_object_object_add(re, "created", json_object_new_int64(c->now));
	json_object_object_add(re, "currency", json_object_new_string(stripe_obj_str(ch, "currency")));
	json_object_object_add(re, "metadata", json_object_new_object());
	json_object_object_add(re, "payment_intent", stripe_obj_str(ch, "payment_intent")
			       ? json_object_new_string(stripe_obj_str(ch, "payment_intent")) : NULL);
	json_object_object_add(re, "reason", reason ? json_object_new_string(reason) : NULL);
	json_object_object_add(re, "receipt_number", NULL);
	json_object_object_add(re, "source_transfer_reversal", NULL);
	json_object_object_add(re, "status", json_object_new_string("succeeded"));
	json_object_object_add(re, "transfer_reversal", NULL);
	if (stripe_apply_metadata(c, re) < 0) {
		json_object_put(re);
		return -1;
	}
	stripe_put(c, "refund", re);
	/* The charge shows it: amount_refunded, refunded once whole, and its refunds list. */
	refunded += amount;
	json_object_object_add(ch, "amount_refunded", json_object_new_int64(refunded));
	json_object_object_add(ch, "refunded", json_object_new_boolean(refunded >= captured));
	if (json_object_object_get_ex(ch, "refunds", &refunds) &&
	    json_object_object_get_ex(refunds, "data", &data)) {
		/* Newest first. */
		struct json_object *copy = NULL, *fresh = json_object_new_array();
		json_object_deep_copy(re, &copy, NULL);
		json_object_array_add(fresh, copy);
		for (size_t i = 0; i < json_object_array_length(data); i++)
			json_object_array_add(fresh, json_object_get(json_object_array_get_idx(data, i)));
		json_object_object_add(refunds, "total_count",
				       json_object_new_int((int)json_object_array_length(fresh)));
		json_object_object_add(refunds, "data", fresh);
	}
	stripe_put(c, "charge", ch);
	return stripe_send(c, 200, re);
}

static int refund_filter(struct stripe_ctx *c, struct json_object *re)
{
	const char *ch = stripe_str(c, "charge"), *pi = stripe_str(c, "payment_intent");
	const char *have_ch = stripe_obj_str(re, "charge"), *have_pi = stripe_obj_str(re, "payment_intent");

	return (!ch || (have_ch && !strcmp(ch, have_ch))) && (!pi || (have_pi && !strcmp(pi, have_pi)));
}

int stripe_refunds(struct stripe_ctx *c)
{
	static const char *const list_params[] = { "limit", "starting_after", "ending_before", "charge",
						   "payment_intent", "created", NULL };
	struct json_object *re, *copy = NULL;

	if (c->n == 1 && strcmp(c->method, "POST") == 0)
		return create_refund(c);
	if (c->n == 1 && strcmp(c->method, "GET") == 0)
		return stripe_list(c, "refund", "/v1/refunds", refund_filter, list_params);
	if (c->n != 2 || (strcmp(c->method, "GET") && strcmp(c->method, "POST")))
		return 1;
	if (!(re = stripe_get(c, "refund", c->segs[1])))
		return stripe_missing(c, "refund", c->segs[1], "id");
	if (strcmp(c->method, "GET") == 0)
		return stripe_check_params(c, NULL) < 0 ? -1 : stripe_send(c, 200, re);
	if (stripe_check_params(c, (const char *const[]){ "metadata", NULL }) < 0 ||
	    json_object_deep_copy(re, &copy, NULL) != 0)
		return -1;
	if (stripe_apply_metadata(c, copy) < 0) {
		json_object_put(copy);
		return -1;
	}
	stripe_put(c, "refund", copy);
	return stripe_send(c, 200, copy);
}
