# SPDX-License-Identifier: MIT
"""Real clients through the gateway with the proxy settings and the CA: curl, Python, Node."""
import json
import os
import shutil
import subprocess
import unittest
import urllib.request

from twind import TwinTestCase, http_over, socks5_connect

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_DIR = os.path.join(HERE, "node")


def curl(*args):
    # No proxy from the environment, and never a real resolver: the proxy resolves (socks5h).
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    r = subprocess.run(["curl", "-sS", "--max-time", "20", *args], capture_output=True, text=True,
                       env=env, timeout=60)
    return r.returncode, r.stdout, r.stderr


class Curl(TwinTestCase):
    def setUp(self):
        if not shutil.which("curl"):
            self.skipTest("curl is not installed (Debian package curl)")
        self.twin, self.cred = self.new_credential()

    def proxies(self):
        c = self.cred
        return (("socks5h", "socks5h://%s:%s@%s" % (c["username"], c["password"], c["socks_address"])),
                ("connect", c.proxy_url()))

    def test_stripe_through_both_proxies(self):
        for name, proxy in self.proxies():
            with self.subTest(proxy=name):
                rc, out, err = curl("--proxy", proxy, "--cacert", self.cred.ca_file,
                                    "https://api.stripe.com/v1/customers", "-u", "sk_test_123:",
                                    "-d", "email=curl-%s@example.com" % name, "-d", "metadata[via]=" + name)
                self.assertEqual(rc, 0, err)
                cus = json.loads(out)
                self.assertEqual(cus["metadata"], {"via": name})
                rc, out, err = curl("--proxy", proxy, "--cacert", self.cred.ca_file,
                                    "https://api.stripe.com/v1/customers/" + cus["id"],
                                    "-H", "Authorization: Bearer sk_test_123")
                self.assertEqual((rc, json.loads(out)["email"]), (0, "curl-%s@example.com" % name), err)

    def test_canary(self):
        for name, proxy in self.proxies():
            with self.subTest(proxy=name):
                rc, out, err = curl("--proxy", proxy, "--cacert", self.cred.ca_file,
                                    "https://" + self.cred["canary_host"] + "/")
                self.assertEqual(rc, 0, err)
                body = json.loads(out)
                self.assertEqual((body["veris_sandbox_id"], body["mode"]), (self.twin["id"], "gateway"))

    def test_untrusted_without_the_ca(self):
        # The leaf is ours, not a public CA's: without --cacert curl must refuse it.
        rc, out, err = curl("--proxy", self.cred.proxy_url(), "--cacert", "/dev/null",
                            "https://api.stripe.com/v1/customers")
        self.assertNotEqual(rc, 0)

    def test_wrong_credentials_refused(self):
        c = self.cred
        for proxy in ("socks5h://%s:nope@%s" % (c["username"], c["socks_address"]),
                      "http://%s:nope@%s" % (c["username"], c["connect_address"]),
                      "http://sbx_unknown:%s@%s" % (c["password"], c["connect_address"])):
            with self.subTest(proxy=proxy):
                rc, out, err = curl("--proxy", proxy, "--cacert", c.ca_file,
                                    "https://api.stripe.com/v1/customers", "-u", "sk_test_1:")
                self.assertNotEqual(rc, 0)
                self.assertEqual(out, "")

    def test_strict_policy_refuses_unrouted_host(self):
        for name, proxy in self.proxies():
            with self.subTest(proxy=name):
                rc, out, err = curl("--proxy", proxy, "--cacert", self.cred.ca_file,
                                    "https://github.com/")
                self.assertNotEqual(rc, 0)
                if name == "connect":
                    self.assertIn("403", err)
        self.assertIn("refused github.com:443: not routed", self.twind.read_log())


class Python(TwinTestCase):
    def setUp(self):
        self.twin, self.cred = self.new_credential()

    def test_urllib_connect_proxy_strict(self):
        ctx = self.cred.strict_context()
        self.assertTrue(ctx.verify_flags & __import__("ssl").VERIFY_X509_STRICT)
        opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({"https": self.cred.proxy_url()}),
            urllib.request.HTTPSHandler(context=ctx))
        req = urllib.request.Request("https://api.stripe.com/v1/customers", data=b"email=py@example.com",
                                     headers={"Authorization": "Bearer sk_test_py"})
        with opener.open(req, timeout=20) as r:
            self.assertEqual(r.status, 200)
            self.assertEqual(json.loads(r.read())["email"], "py@example.com")
        with opener.open("https://%s/" % self.cred["canary_host"], timeout=20) as r:
            self.assertEqual(json.loads(r.read())["veris_sandbox_id"], self.twin["id"])

    def test_socks5_and_ssl_strict(self):
        ctx = self.cred.strict_context()
        with ctx.wrap_socket(socks5_connect(self.cred, "api.stripe.com", 443),
                             server_hostname="api.stripe.com") as s:
            cert = s.getpeercert()
            self.assertIn(("DNS", "api.stripe.com"), cert["subjectAltName"])
            # Keep-alive: several requests on one connection.
            for i in range(3):
                status, headers, body = http_over(
                    s, "POST", "/v1/customers", "api.stripe.com", body="email=s%d@example.com" % i,
                    headers={"Authorization": "Bearer sk_test_socks",
                             "Content-Type": "application/x-www-form-urlencoded"})
                self.assertEqual(status, 200)
                self.assertEqual(headers["Connection"], "keep-alive")
        log = self.twind.requests_log(self.twin["id"])["requests"]
        self.assertEqual(len(log), 3)


class Node(TwinTestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("node") or not shutil.which("npm"):
            raise unittest.SkipTest("node and npm are needed (Debian package nodejs)")
        if not os.path.isdir(os.path.join(NODE_DIR, "node_modules", "undici")):
            r = subprocess.run(["npm", "ci", "--prefix", NODE_DIR, "--no-audit", "--no-fund"],
                               capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                raise AssertionError("npm ci failed:\n" + r.stdout + r.stderr)
        super().setUpClass()

    def run_node(self, mode):
        twin, cred = self.new_credential()
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        r = subprocess.run(["node", os.path.join(NODE_DIR, "fetch-through-gateway.mjs"), mode,
                            cred.cred_file], capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [json.loads(line) for line in r.stdout.splitlines()]
        self.assertEqual([x["status"] for x in lines], [200, 200, 200])
        self.assertEqual(lines[1]["body"]["metadata"], {"via": mode})
        self.assertEqual(lines[2]["body"]["veris_sandbox_id"], twin["id"])
        log = self.twind.requests_log(twin["id"])["requests"]
        self.assertEqual([(e["method"], e["path"]) for e in log],
                         [("POST", "/v1/customers"), ("GET", "/v1/customers/" + lines[0]["body"]["id"])])

    def test_fetch_through_connect(self):
        self.run_node("connect")

    def test_fetch_through_socks(self):
        self.run_node("socks")


if __name__ == "__main__":
    unittest.main()
