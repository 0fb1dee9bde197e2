# SPDX-License-Identifier: MIT
"""The built-in Stripe twin through the gateway, as real client code uses it, and its request log."""
import hashlib
import json
import unittest
import urllib.error
import urllib.parse
import urllib.request

from twind import TwinTestCase


class Stripe:
    """A minimal Stripe client: form bodies with nested keys, Bearer auth, through CONNECT."""

    def __init__(self, cred, key="sk_test_4eC39HqLyjWDarjtT1zdp7dc"):
        self.key = key
        self.opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({"https": cred.proxy_url()}),
            urllib.request.HTTPSHandler(context=cred.strict_context()))
        self.sent = []  # (method, path, status, body bytes) in order

    @staticmethod
    def encode(params, prefix=None):
        out = []
        for k, v in params.items():
            key = "%s[%s]" % (prefix, k) if prefix else k
            if isinstance(v, dict):
                out += Stripe.encode(v, key)
            elif isinstance(v, list):
                for i, item in enumerate(v):
                    out += Stripe.encode({str(i): item}, key)
            else:
                out.append((key, str(v).lower() if isinstance(v, bool) else str(v)))
        return out

    def call(self, method, path, params=None, headers=None, key=True):
        body = None
        url = "https://api.stripe.com" + path
        if params and method in ("GET", "DELETE"):
            url += "?" + urllib.parse.urlencode(self.encode(params))
        elif params is not None:
            body = urllib.parse.urlencode(self.encode(params)).encode()
        req = urllib.request.Request(url, data=body, method=method)
        if key:
            req.add_header("Authorization", "Bearer " + (self.key if key is True else key))
        if body is not None:
            req.add_header("Content-Type", "application/x-www-form-urlencoded")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with self.opener.open(req, timeout=20) as r:
                status, hdrs, data = r.status, dict(r.getheaders()), r.read()
        except urllib.error.HTTPError as e:
            status, hdrs, data = e.code, dict(e.headers.items()), e.read()
        self.sent.append((method, path, status, body or b""))
        return status, json.loads(data), hdrs


class StripeTwin(TwinTestCase):
    def setUp(self):
        self.twin, self.cred = self.new_credential()
        self.stripe = Stripe(self.cred)

    def ok(self, method, path, params=None, **kw):
        status, body, _ = self.stripe.call(method, path, params, **kw)
        self.assertEqual(status, 200, body)
        return body

    def test_payment_flow_with_state_across_calls(self):
        cus = self.ok("POST", "/v1/customers", {"email": "jenny@example.com", "name": "Jenny",
                                                 "metadata": {"plan": "pro", "seats": 3}})
        self.assertTrue(cus["id"].startswith("cus_"))
        self.assertEqual(cus["metadata"], {"plan": "pro", "seats": "3"})

        pi = self.ok("POST", "/v1/payment_intents", {"amount": 2000, "currency": "USD",
                                                      "customer": cus["id"],
                                                      "automatic_payment_methods": {"enabled": True}})
        self.assertTrue(pi["id"].startswith("pi_"))
        self.assertEqual((pi["status"], pi["currency"], pi["customer"]),
                         ("requires_payment_method", "usd", cus["id"]))
        self.assertTrue(pi["client_secret"].startswith(pi["id"] + "_secret_"))
        self.assertEqual(pi["automatic_payment_methods"], {"enabled": True})

        pi = self.ok("POST", "/v1/payment_intents/%s/confirm" % pi["id"],
                     {"payment_method": "pm_card_visa"})
        self.assertEqual((pi["status"], pi["amount_received"]), ("succeeded", 2000))
        self.assertTrue(pi["latest_charge"].startswith("ch_"))
        again = self.ok("GET", "/v1/payment_intents/" + pi["id"])
        self.assertEqual(again, pi)

        charge = self.ok("GET", "/v1/charges/" + pi["latest_charge"])
        self.assertEqual((charge["amount"], charge["paid"], charge["captured"], charge["customer"],
                          charge["payment_intent"], charge["status"]),
                         (2000, True, True, cus["id"], pi["id"], "succeeded"))

        r1 = self.ok("POST", "/v1/refunds", {"payment_intent": pi["id"], "amount": 500,
                                             "reason": "requested_by_customer"})
        self.assertTrue(r1["id"].startswith("re_"))
        self.assertEqual((r1["amount"], r1["charge"], r1["status"]), (500, charge["id"], "succeeded"))
        charge = self.ok("GET", "/v1/charges/" + charge["id"])
        self.assertEqual((charge["amount_refunded"], charge["refunded"]), (500, False))

        r2 = self.ok("POST", "/v1/refunds", {"charge": charge["id"]})
        self.assertEqual(r2["amount"], 1500, "the default is what is left")
        charge = self.ok("GET", "/v1/charges/" + charge["id"])
        self.assertEqual((charge["amount_refunded"], charge["refunded"]), (2000, True))
        self.assertEqual([r["id"] for r in charge["refunds"]["data"]], [r2["id"], r1["id"]])

        status, err, _ = self.stripe.call("POST", "/v1/refunds", {"charge": charge["id"]})
        self.assertEqual((status, err["error"]["code"]), (400, "charge_already_refunded"))

        refunds = self.ok("GET", "/v1/refunds", {"payment_intent": pi["id"]})
        self.assertEqual((refunds["object"], [r["id"] for r in refunds["data"]]),
                         ("list", [r2["id"], r1["id"]]))
        charges = self.ok("GET", "/v1/charges", {"customer": cus["id"]})
        self.assertEqual([c["id"] for c in charges["data"]], [charge["id"]])
        pis = self.ok("GET", "/v1/payment_intents", {"customer": cus["id"]})
        self.assertEqual([p["id"] for p in pis["data"]], [pi["id"]])

        expanded = self.ok("GET", "/v1/payment_intents/" + pi["id"],
                           {"expand": ["customer", "latest_charge"]})
        self.assertEqual(expanded["customer"]["email"], "jenny@example.com")
        self.assertEqual(expanded["latest_charge"]["amount_refunded"], 2000)

        # The exact request log, in order, with paging.
        log = self.twind.requests_log(self.twin["id"], limit=1000)["requests"]
        self.assertEqual([(r["method"], r["path"], r["status"]) for r in log],
                         [(m, p, s) for m, p, s, _ in self.stripe.sent])
        self.assertEqual([r["id"] for r in log], list(range(1, len(log) + 1)))
        for entry, (_, _, _, body) in zip(log, self.stripe.sent):
            self.assertEqual(entry["tier"], "handler")
            self.assertEqual(entry["host"], "api.stripe.com")
            self.assertEqual(entry["request_body_sha256"], "sha256:" + hashlib.sha256(body).hexdigest())
            headers = json.loads(entry["request_headers"])
            self.assertEqual(headers["Authorization"], "Bearer [REDACTED]")
            self.assertNotIn("sk_test_", entry["request_headers"])

    def test_request_log_paging(self):
        for i in range(7):
            self.ok("POST", "/v1/customers", {"email": "p%d@example.com" % i})
        log = self.twind.requests_log
        tid = self.twin["id"]
        self.assertEqual([r["id"] for r in log(tid)["requests"]], [1, 2, 3, 4, 5, 6, 7])
        page = log(tid, limit=3)
        self.assertEqual(([r["id"] for r in page["requests"]], page["has_more"]), ([1, 2, 3], True))
        page = log(tid, limit=3, since_id=3)
        self.assertEqual([r["id"] for r in page["requests"]], [4, 5, 6])
        page = log(tid, limit=3, since_id=6)
        self.assertEqual(([r["id"] for r in page["requests"]], page["has_more"]), ([7], False))
        page = log(tid, order="desc", limit=2)
        self.assertEqual([r["id"] for r in page["requests"]], [7, 6])
        page = log(tid, order="desc", limit=2, before_id=6)
        self.assertEqual([r["id"] for r in page["requests"]], [5, 4])
        page = log(tid, order="desc", since_id=5)
        self.assertEqual([r["id"] for r in page["requests"]], [7, 6])
        self.assertEqual(log(tid, tier="upstream")["requests"], [])
        self.assertEqual(len(log(tid, limit=1000)["requests"]), 7)
        for bad in ("limit=0", "limit=1001", "limit=x", "order=sideways", "since_id=-1"):
            status, body = self.twind.api("GET", "/v1/sandboxes/%s/services/stripe/veris/requests?%s"
                                          % (tid, bad))
            self.assertEqual(status, 400, bad)
        status, health = self.twind.api("GET", "/v1/sandboxes/%s/services/stripe/veris/health" % tid)
        self.assertEqual((status, health["status"], health["requests"]), (200, "ok", 7))

    def test_list_pagination(self):
        ids = [self.ok("POST", "/v1/customers", {"email": "c%d@example.com" % i})["id"]
               for i in range(5)]
        newest_first = ids[::-1]
        page = self.ok("GET", "/v1/customers", {"limit": 2})
        self.assertEqual(([c["id"] for c in page["data"]], page["has_more"]), (newest_first[:2], True))
        self.assertEqual(page["url"], "/v1/customers")
        page = self.ok("GET", "/v1/customers", {"limit": 2, "starting_after": newest_first[1]})
        self.assertEqual([c["id"] for c in page["data"]], newest_first[2:4])
        page = self.ok("GET", "/v1/customers", {"limit": 2, "starting_after": newest_first[3]})
        self.assertEqual(([c["id"] for c in page["data"]], page["has_more"]), (newest_first[4:], False))
        page = self.ok("GET", "/v1/customers", {"limit": 2, "ending_before": newest_first[4]})
        self.assertEqual(([c["id"] for c in page["data"]], page["has_more"]), (newest_first[2:4], True))
        page = self.ok("GET", "/v1/customers", {"email": "c3@example.com"})
        self.assertEqual([c["id"] for c in page["data"]], [ids[3]])
        status, err, _ = self.stripe.call("GET", "/v1/customers", {"limit": 101})
        self.assertEqual(status, 400)
        status, err, _ = self.stripe.call("GET", "/v1/customers", {"starting_after": "cus_nope"})
        self.assertEqual((status, err["error"]["code"]), (404, "resource_missing"))

    def test_update_and_delete_customer(self):
        cus = self.ok("POST", "/v1/customers", {"email": "u@example.com", "metadata": {"a": 1, "b": 2}})
        cus = self.ok("POST", "/v1/customers/" + cus["id"], {"name": "New", "metadata": {"a": "", "c": 3}})
        self.assertEqual((cus["name"], cus["email"], cus["metadata"]), ("New", "u@example.com",
                                                                       {"b": "2", "c": "3"}))
        gone = self.ok("DELETE", "/v1/customers/" + cus["id"])
        self.assertEqual(gone, {"id": cus["id"], "object": "customer", "deleted": True})
        self.assertEqual(self.ok("GET", "/v1/customers/" + cus["id"])["deleted"], True)
        self.assertEqual(self.ok("GET", "/v1/customers")["data"], [])

    def test_idempotency_key(self):
        params = {"email": "idem@example.com"}
        s1, first, h1 = self.stripe.call("POST", "/v1/customers", params, headers={"Idempotency-Key": "k1"})
        s2, second, h2 = self.stripe.call("POST", "/v1/customers", params, headers={"Idempotency-Key": "k1"})
        self.assertEqual((s1, s2), (200, 200))
        self.assertEqual(first, second)
        self.assertNotIn("Idempotent-Replayed", h1)
        self.assertEqual(h2.get("Idempotent-Replayed"), "true")
        self.assertEqual(len(self.ok("GET", "/v1/customers")["data"]), 1)
        status, err, _ = self.stripe.call("POST", "/v1/customers", {"email": "other@example.com"},
                                          headers={"Idempotency-Key": "k1"})
        self.assertEqual((status, err["error"]["type"]), (400, "idempotency_error"))
        # Another key with the same parameters is another request.
        s3, third, _ = self.stripe.call("POST", "/v1/customers", params, headers={"Idempotency-Key": "k2"})
        self.assertNotEqual(third["id"], first["id"])

    def test_errors_have_stripes_shape(self):
        status, err, _ = self.stripe.call("GET", "/v1/customers", key=False)
        self.assertEqual(status, 401)
        self.assertIn("You did not provide an API key", err["error"]["message"])
        status, err, _ = self.stripe.call("GET", "/v1/customers", key="sk_live_abcdefghijklmnop")
        self.assertEqual((status, err["error"]["type"]), (401, "invalid_request_error"))
        self.assertNotIn("abcdefghijkl", err["error"]["message"])
        status, err, _ = self.stripe.call("POST", "/v1/payment_intents", {"currency": "usd"})
        self.assertEqual((status, err["error"]["code"], err["error"]["param"]),
                         (400, "parameter_missing", "amount"))
        status, err, _ = self.stripe.call("POST", "/v1/payment_intents", {"amount": "ten", "currency": "usd"})
        self.assertEqual((status, err["error"]["code"]), (400, "parameter_invalid_integer"))
        status, err, _ = self.stripe.call("POST", "/v1/payment_intents", {"amount": 10, "currency": "usd"})
        self.assertEqual((status, err["error"]["code"]), (400, "amount_too_small"))
        status, err, _ = self.stripe.call("POST", "/v1/customers", {"emial": "typo@example.com"})
        self.assertEqual((status, err["error"]["code"], err["error"]["param"]),
                         (400, "parameter_unknown", "emial"))
        status, err, _ = self.stripe.call("GET", "/v1/customers/cus_missing")
        self.assertEqual((status, err["error"]["code"], err["error"]["message"]),
                         (404, "resource_missing", "No such customer: 'cus_missing'"))
        status, err, _ = self.stripe.call("GET", "/v1/nothing_here")
        self.assertEqual(status, 404)
        self.assertTrue(err["error"]["message"].startswith("Unrecognized request URL (GET: /v1/nothing_here)"))
        status, err, _ = self.stripe.call("POST", "/v1/payment_intents/pi_nope/confirm", {})
        self.assertEqual((status, err["error"]["code"]), (404, "resource_missing"))

    def test_declined_card_and_state_rules(self):
        pi = self.ok("POST", "/v1/payment_intents", {"amount": 1500, "currency": "eur"})
        status, err, _ = self.stripe.call("POST", "/v1/payment_intents/%s/confirm" % pi["id"], {})
        self.assertEqual((status, err["error"]["code"]), (400, "payment_intent_unexpected_state"))
        status, err, _ = self.stripe.call("POST", "/v1/payment_intents/%s/confirm" % pi["id"],
                                          {"payment_method": "pm_card_chargeDeclinedInsufficientFunds"})
        self.assertEqual((status, err["error"]["type"], err["error"]["code"], err["error"]["decline_code"]),
                         (402, "card_error", "card_declined", "insufficient_funds"))
        self.assertEqual(err["error"]["payment_intent"]["status"], "requires_payment_method")
        failed = self.ok("GET", "/v1/charges/" + err["error"]["charge"])
        self.assertEqual((failed["status"], failed["paid"]), ("failed", False))
        pi = self.ok("POST", "/v1/payment_intents/%s/confirm" % pi["id"], {"payment_method": "pm_card_visa"})
        self.assertEqual(pi["status"], "succeeded")
        status, err, _ = self.stripe.call("POST", "/v1/payment_intents/%s/confirm" % pi["id"], {})
        self.assertEqual((status, err["error"]["code"]), (400, "payment_intent_unexpected_state"))
        status, err, _ = self.stripe.call("POST", "/v1/payment_intents/%s/cancel" % pi["id"], {})
        self.assertEqual(status, 400)

        # Manual capture, and cancel.
        pi = self.ok("POST", "/v1/payment_intents", {"amount": 900, "currency": "usd", "confirm": True,
                                                      "payment_method": "pm_card_mastercard",
                                                      "capture_method": "manual"})
        self.assertEqual((pi["status"], pi["amount_capturable"]), ("requires_capture", 900))
        pi = self.ok("POST", "/v1/payment_intents/%s/capture" % pi["id"], {"amount_to_capture": 700})
        self.assertEqual((pi["status"], pi["amount_received"]), ("succeeded", 700))
        pi2 = self.ok("POST", "/v1/payment_intents", {"amount": 900, "currency": "usd"})
        pi2 = self.ok("POST", "/v1/payment_intents/%s/cancel" % pi2["id"],
                      {"cancellation_reason": "abandoned"})
        self.assertEqual(pi2["status"], "canceled")

    def test_charges_api(self):
        ch = self.ok("POST", "/v1/charges", {"amount": 1234, "currency": "usd", "source": "tok_visa",
                                             "description": "order 1"})
        self.assertEqual((ch["status"], ch["description"], ch["amount_captured"]), ("succeeded", "order 1", 1234))
        status, err, _ = self.stripe.call("POST", "/v1/charges", {"amount": 1234, "currency": "usd",
                                                                  "source": "tok_chargeDeclined"})
        self.assertEqual((status, err["error"]["decline_code"]), (402, "generic_decline"))
        ch = self.ok("POST", "/v1/charges/" + ch["id"], {"metadata": {"order": "1"}})
        self.assertEqual(ch["metadata"], {"order": "1"})
        status, err, _ = self.stripe.call("POST", "/v1/charges", {"amount": 100, "currency": "usd"})
        self.assertEqual(status, 400)

    def test_basic_auth_and_reset(self):
        status, body, _ = self.stripe.call("POST", "/v1/customers", {"email": "b@example.com"})
        self.assertEqual(status, 200)
        status, out = self.twind.api("POST", "/v1/sandboxes/%s/services/stripe/veris/reset"
                                     % self.twin["id"])
        self.assertEqual((status, out["ok"]), (200, True))
        self.assertEqual(self.ok("GET", "/v1/customers")["data"], [])
        # The log outlives a reset: receipts are made from it.
        self.assertEqual(len(self.twind.requests_log(self.twin["id"])["requests"]), 2)


if __name__ == "__main__":
    unittest.main()
