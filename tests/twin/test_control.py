# SPDX-License-Identifier: MIT
"""The control plane: Veris paths and JSON, API key, credential, persistence, process interface."""
import http.client
import json
import os
import shutil
import socket
import subprocess
import unittest

from twind import API_KEY, TWIND, Credential, Twind, TwinTestCase, http_over, socks5_connect


class ControlPlane(TwinTestCase):
    def test_api_key_is_required(self):
        for key in (None, "wrong", API_KEY + "x", ""):
            status, body = self.twind.api("GET", "/v1/gateway/health", key=key)
            self.assertEqual(status, 401, key)
            self.assertEqual(body["error"]["type"], "authentication_error")
        status, _ = self.twind.api("GET", "/v1/gateway/health", key=None,
                                   headers={"Authorization": "Bearer " + API_KEY})
        self.assertEqual(status, 200)

    def test_health_and_me(self):
        status, health = self.twind.api("GET", "/v1/gateway/health")
        self.assertEqual(status, 200)
        self.assertEqual(health["status"], "ok")
        self.assertEqual(health["socks_address"], self.twind.ready["socks_address"])
        self.assertEqual(health["connect_address"], self.twind.ready["connect_address"])
        status, me = self.twind.api("GET", "/v1/me")
        self.assertEqual((status, me["id"]), (200, "local"))

    def test_twin_lifecycle(self):
        twin = self.twind.create_twin("default", ttl_minutes=30, metadata={"session": "s1"})
        self.assertTrue(twin["id"].startswith("sbx_"))
        self.assertEqual(twin["environment_id"], "default")
        self.assertEqual(twin["status"], "ready")
        self.assertEqual(twin["metadata"], {"session": "s1"})
        self.assertIsNotNone(twin["expires_at"])
        self.assertEqual(twin["egress_policy"], "strict")
        self.assertEqual(twin["leaks"], [])
        [svc] = twin["services"]
        self.assertEqual(svc["name"], "stripe")
        self.assertEqual(svc["routes"], [{"host": "api.stripe.com"}])
        self.assertEqual(svc["control_url"], "%s/v1/sandboxes/%s/services/stripe"
                         % (self.twind.ready["control_url"], twin["id"]))

        status, got = self.twind.api("GET", "/v1/sandboxes/" + twin["id"])
        self.assertEqual((status, got["id"]), (200, twin["id"]))
        status, services = self.twind.api("GET", "/v1/sandboxes/%s/services" % twin["id"])
        self.assertEqual((status, [s["name"] for s in services]), (200, ["stripe"]))
        status, listed = self.twind.api("GET", "/v1/sandboxes")
        self.assertIn(twin["id"], [t["id"] for t in listed["sandboxes"]])

        # PATCH: omitted untouched, null clears.
        status, patched = self.twind.api("PATCH", "/v1/environments/default/sandboxes/" + twin["id"],
                                         {"ttl_minutes": None, "client_base_url": "http://x"})
        self.assertEqual(status, 200)
        self.assertIsNone(patched["expires_at"])
        self.assertEqual(patched["client_base_url"], "http://x")

        # Under another environment the twin does not exist.
        status, _ = self.twind.api("GET", "/v1/environments/other/sandboxes/" + twin["id"])
        self.assertEqual(status, 404)

        status, gone = self.twind.api("DELETE", "/v1/environments/default/sandboxes/" + twin["id"])
        self.assertEqual((status, gone["deleted"]), (200, True))
        for path in ("/v1/sandboxes/" + twin["id"],
                     "/v1/sandboxes/%s/services/stripe/veris/health" % twin["id"]):
            self.assertEqual(self.twind.api("GET", path)[0], 404)
        self.assertEqual(self.twind.api("DELETE", "/v1/environments/default/sandboxes/"
                                        + twin["id"])[0], 404)

    def test_environments(self):
        self.assertEqual(self.twind.create_twin("stripe")["services"][0]["name"], "stripe")
        status, body = self.twind.api("POST", "/v1/environments/nosuch/sandboxes", {})
        self.assertEqual(status, 404)
        self.assertIn("nosuch", body["error"]["message"])

    def test_bad_requests(self):
        self.assertEqual(self.twind.api("POST", "/v1/environments/default/sandboxes",
                                        raw=b"{not json")[0], 400)
        self.assertEqual(self.twind.api("POST", "/v1/environments/default/sandboxes",
                                        {"ttl_minutes": "ten"})[0], 400)
        self.assertEqual(self.twind.api("POST", "/v1/environments/default/sandboxes",
                                        {"egress_policy": "wide-open"})[0], 400)
        self.assertEqual(self.twind.api("GET", "/v2/anything")[0], 404)
        self.assertEqual(self.twind.api("GET", "/v1/sandboxes/sbx_nope")[0], 404)

    def test_egress_credential(self):
        twin = self.twind.create_twin()
        cred = self.twind.credential(twin)
        for key in ("socks_address", "connect_address", "http_proxy_url", "username", "password",
                    "ca_pem", "canary_host", "gateway_ips", "trust_env", "leaks"):
            self.assertIn(key, cred)
        self.assertEqual(cred["username"], twin["id"])
        self.assertEqual(cred["socks_address"], self.twind.ready["socks_address"])
        self.assertEqual(cred["http_proxy_url"], "http://%s:%s@%s" % (
            cred["username"], cred["password"], cred["connect_address"]))
        self.assertTrue(cred["ca_pem"].startswith("-----BEGIN CERTIFICATE-----"))
        with open(self.twind.ready["ca_file"]) as f:
            self.assertEqual(f.read(), cred["ca_pem"])
        self.assertEqual(cred["gateway_ips"], ["127.0.0.1"])
        self.assertEqual(cred["canary_host"], "canary.twinbox.invalid")
        self.assertTrue(all(v.startswith("/") for v in cred["trust_env"].values()))
        self.assertIn("SSL_CERT_FILE", cred["trust_env"])
        self.assertIn("NODE_EXTRA_CA_CERTS", cred["trust_env"])
        # The same twin gets the same credential (it is the twin's capability).
        self.assertEqual(self.twind.credential(twin)["password"], cred["password"])
        status, _ = self.twind.api("POST", "/v1/sandboxes/%s/egress-credential" % twin["id"])
        self.assertEqual(status, 200)

    def test_open_policy_names_its_leaks(self):
        twin = self.twind.create_twin(egress_policy="open")
        self.assertEqual(twin["leaks"], ["udp-quic-possible", "ech-possible"])
        self.assertEqual(self.twind.credential(twin)["leaks"], ["udp-quic-possible", "ech-possible"])

    def test_deleting_a_twin_closes_its_tunnels(self):
        twin = self.twind.create_twin()
        cred = Credential(self.twind.credential(twin), self.twind.root)
        sock = cred.strict_context().wrap_socket(
            socks5_connect(cred, "api.stripe.com", 443), server_hostname="api.stripe.com")
        status, _, _ = http_over(sock, "GET", "/v1/customers", "api.stripe.com",
                                 headers={"Authorization": "Bearer sk_test_1"})
        self.assertEqual(status, 200)
        self.twind.api("DELETE", "/v1/environments/default/sandboxes/" + twin["id"])
        sock.settimeout(10)
        try:
            self.assertEqual(sock.recv(100), b"")
        except (ConnectionError, OSError):
            pass
        with self.assertRaises(PermissionError):
            socks5_connect(cred, "api.stripe.com", 443)
        self.assertIn("its twin was deleted", self.twind.read_log())


class Persistence(unittest.TestCase):
    def test_restart_keeps_twins_state_and_log_ids(self):
        t = Twind().start()
        try:
            twin = t.create_twin()
            cred = Credential(t.credential(twin), t.root)
            sock = cred.strict_context().wrap_socket(
                socks5_connect(cred, "api.stripe.com", 443), server_hostname="api.stripe.com")
            auth = {"Authorization": "Bearer sk_test_1",
                    "Content-Type": "application/x-www-form-urlencoded"}
            status, _, body = http_over(sock, "POST", "/v1/customers", "api.stripe.com",
                                        body="email=keep@example.com", headers=auth)
            self.assertEqual(status, 200)
            customer = json.loads(body)["id"]
            sock.close()
            ca = t.ready["ca_file"]
            with open(ca) as f:
                ca_pem = f.read()
            self.assertEqual(t.stop(), 0)
            self.assertEqual(oct(os.stat(os.path.join(t.state, "ca", "ca.key")).st_mode & 0o777), "0o600")

            t.start()
            with open(t.ready["ca_file"]) as f:
                self.assertEqual(f.read(), ca_pem, "the CA is made once")
            status, again = t.api("GET", "/v1/sandboxes/" + twin["id"])
            self.assertEqual(status, 200)
            cred = Credential(t.credential(twin), t.root)
            sock = cred.strict_context().wrap_socket(
                socks5_connect(cred, "api.stripe.com", 443), server_hostname="api.stripe.com")
            status, _, body = http_over(sock, "GET", "/v1/customers/" + customer, "api.stripe.com",
                                        headers=auth)
            self.assertEqual((status, json.loads(body)["email"]), (200, "keep@example.com"))
            ids = [r["id"] for r in t.requests_log(twin["id"])["requests"]]
            self.assertEqual(ids, [1, 2], "request ids go on after a restart")
        finally:
            t.cleanup()


class ProcessInterface(unittest.TestCase):
    def test_unix_socket_control_plane(self):
        t = Twind()
        path = os.path.join(t.root, "twind.sock")
        t.args = ["--control", "unix:" + path]
        t.start()
        try:
            self.assertEqual(t.ready["control_socket"], path)
            self.assertEqual(t.ready["control_url"], "http://localhost")
            self.assertEqual(oct(os.stat(path).st_mode & 0o777), "0o600")

            class UnixConn(http.client.HTTPConnection):
                def connect(self):
                    self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    self.sock.connect(path)

            c = UnixConn("localhost")
            c.request("POST", "/v1/environments/default/sandboxes", body="{}",
                      headers={"X-API-Key": API_KEY})
            r = c.getresponse()
            twin = json.loads(r.read())
            self.assertEqual(r.status, 201)
            self.assertTrue(twin["services"][0]["control_url"].startswith("http://localhost/v1/"))
        finally:
            t.cleanup()
        self.assertFalse(os.path.exists(path))

    def test_control_plane_is_loopback_only(self):
        t = Twind(args=["--control", "0.0.0.0:0"])
        with self.assertRaises(RuntimeError) as e:
            t.start()
        self.assertIn("not a loopback address", str(e.exception))
        t.proc.wait()
        self.assertNotEqual(t.proc.returncode, 0)
        shutil.rmtree(t.root, ignore_errors=True)

    def test_api_key_from_file_or_made(self):
        t = Twind()
        os.makedirs(t.root, exist_ok=True)
        keyfile = os.path.join(t.root, "key")
        with open(keyfile, "w") as f:
            f.write("from-a-file\n")
        t.args = ["--api-key-file", keyfile]
        t.start(env={"TWINBOX_TWIN_API_KEY": ""})
        try:
            self.assertEqual(t.api("GET", "/v1/gateway/health", key="from-a-file")[0], 200)
            self.assertEqual(t.ready["api_key_file"], keyfile)
        finally:
            t.cleanup()
        t = Twind()
        t.start(env={"TWINBOX_TWIN_API_KEY": ""})
        try:
            made = t.ready["api_key_file"]
            self.assertEqual(oct(os.stat(made).st_mode & 0o777), "0o600")
            with open(made) as f:
                key = f.read().strip()
            self.assertEqual(t.api("GET", "/v1/gateway/health", key=key)[0], 200)
        finally:
            t.cleanup()

    def test_ready_fd_and_usage(self):
        r, w = os.pipe()
        t = Twind(args=["--ready-fd", str(w)])
        os.makedirs(t.root, exist_ok=True)
        env = dict(os.environ, TWINBOX_TWIN_API_KEY=API_KEY)
        p = subprocess.Popen([TWIND, "--state-dir", t.state, "--ready-fd", str(w)], env=env,
                             pass_fds=(w,), stderr=subprocess.DEVNULL)
        os.close(w)
        line = os.read(r, 4096).decode()
        os.close(r)
        ready = json.loads(line)
        self.assertEqual(ready["pid"], p.pid)
        p.terminate()
        self.assertEqual(p.wait(timeout=20), 0)
        shutil.rmtree(t.root, ignore_errors=True)
        self.assertEqual(subprocess.run([TWIND, "--bogus"], capture_output=True).returncode, 2)
        self.assertEqual(subprocess.run([TWIND, "--help"], capture_output=True).returncode, 0)


if __name__ == "__main__":
    unittest.main()
