/* SPDX-License-Identifier: MIT */
/* The Stripe twin's customers: create, retrieve, update, delete, list. */
#include <stdio.h>
#include <string.h>

#include "stripe-priv.h"

static const char *const fields[] = { "email", "name", "description", "phone", NULL };
static const char *const writable[] = {
	"email", "name", "description", "phone", "metadata", "payment_method", "address",
	"shipping", "preferred_locales", "invoice_prefix", "tax_exempt", "balance", NULL,
};

static int apply(struct stripe_ctx *c, struct json_object *cus)
{
	struct json_object *v;
	long long balance;

	stripe_copy_strings(c, cus, fields);
	if (stripe_int(c, "balance", &balance) < 0 || stripe_apply_metadata(c, cus) < 0)
		return -1;
	if (json_object_object_get_ex(c->params, "balance", NULL))
		json_object_object_add(cus, "balance", json_object_new_int64(balance));
	if (json_object_object_get_ex(c->params, "address", &v))
		json_object_object_add(cus, "address", json_object_get(v));
	if (json_object_object_get_ex(c->params, "shipping", &v))
		json_object_object_add(cus, "shipping", json_object_get(v));
	if (stripe_str(c, "tax_exempt"))
		json_object_object_add(cus, "tax_exempt", json_object_new_string(stripe_str(c, "tax_exempt")));
	return 0;
}

static int create(struct stripe_ctx *c)
{
	struct json_object *cus = json_object_new_object(), *inv = json_object_new_object();
	char id[32], prefix[16];

	if (stripe_check_params(c, writable) < 0) {
		json_object_put(cus);
		json_object_put(inv);
		return -1;
	}
	stripe_id(id, sizeof(id), "cus_", 14);
	stripe_id(prefix, sizeof(prefix), "", 8);
	for (char *p = prefix; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	json_object_object_add(cus, "id", json_object_new_string(id));
	json_object_object_add(cus, "object", json_object_new_string("customer"));
	json_object_object_add(cus, "address", NULL);
	json_object_object_add(cus, "balance", json_object_new_int(0));
	json_object_object_add(cus, "created", json_object_new_int64(c->now));
	json_object_object_add(cus, "currency", NULL);
	json_object_object_add(cus, "default_source", NULL);
	json_object_object_add(cus, "delinquent", json_object_new_boolean(0));
	json_object_object_add(cus, "description", NULL);
	json_object_object_add(cus, "discount", NULL);
	json_object_object_add(cus, "email", NULL);
	json_object_object_add(cus, "invoice_prefix", json_object_new_string(prefix));
	json_object_object_add(inv, "custom_fields", NULL);
	json_object_object_add(inv, "default_payment_method",
			       stripe_str(c, "payment_method") ? json_object_new_string(stripe_str(c, "payment_method")) : NULL);
	json_object_object_add(inv, "footer", NULL);
	json_object_object_add(inv, "rendering_options", NULL);
	json_object_object_add(cus, "invoice_settings", inv);
	json_object_object_add(cus, "livemode", json_object_new_boolean(0));
	json_object_object_add(cus, "metadata", json_object_new_object());
	json_object_object_add(cus, "name", NULL);
	json_object_object_add(cus, "next_invoice_sequence", json_object_new_int(1));
	json_object_object_add(cus, "phone", NULL);
	json_object_object_add(cus, "preferred_locales", json_object_new_array());
	json_object_object_add(cus, "shipping", NULL);
	json_object_object_add(cus, "tax_exempt", json_object_new_string("none"));
	json_object_object_add(cus, "test_clock", NULL);
	if (apply(c, cus) < 0) {
		json_object_put(cus);
		return -1;
	}
	stripe_put(c, "customer", cus);
	return stripe_send(c, 200, cus);
}

static int by_email(struct stripe_ctx *c, struct json_object *cus)
{
	const char *want = stripe_str(c, "email"), *have = stripe_obj_str(cus, "email");
	return !want || (have && strcmp(want, have) == 0);
}

int stripe_customers(struct stripe_ctx *c)
{
	static const char *const list_params[] = { "limit", "starting_after", "ending_before", "email",
						   "created", "test_clock", NULL };
	struct json_object *cus, *copy = NULL;

	if (c->n == 1 && strcmp(c->method, "POST") == 0)
		return create(c);
	if (c->n == 1 && strcmp(c->method, "GET") == 0)
		return stripe_list(c, "customer", "/v1/customers", by_email, list_params);
	if (c->n != 2)
		return 1;
	if (strcmp(c->method, "GET") && strcmp(c->method, "POST") && strcmp(c->method, "DELETE"))
		return 1;
	if (!(cus = stripe_get(c, "customer", c->segs[1])))
		return stripe_missing(c, "customer", c->segs[1], "id");
	if (strcmp(c->method, "GET") == 0) {
		if (stripe_check_params(c, NULL) < 0)
			return -1;
		return stripe_send(c, 200, cus);
	}
	if (json_object_object_get_ex(cus, "deleted", NULL))
		return stripe_missing(c, "customer", c->segs[1], "id");
	if (strcmp(c->method, "DELETE") == 0) {
		/* Stripe keeps a tombstone: retrieving a deleted customer says deleted. */
		struct json_object *gone = json_object_new_object();
		json_object_object_add(gone, "id", json_object_new_string(c->segs[1]));
		json_object_object_add(gone, "object", json_object_new_string("customer"));
		json_object_object_add(gone, "deleted", json_object_new_boolean(1));
		stripe_put(c, "customer", gone);
		return stripe_send(c, 200, gone);
	}
	/* Work on a copy so a refused update leaves the customer as it was. */
	if (stripe_check_params(c, writable) < 0 || json_object_deep_copy(cus, &copy, NULL) != 0)
		return -1;
	if (apply(c, copy) < 0) {
		json_object_put(copy);
		return -1;
	}
	stripe_put(c, "customer", copy);
	return stripe_send(c, 200, copy);
}
