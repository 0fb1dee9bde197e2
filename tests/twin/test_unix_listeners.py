# SPDX-License-Identifier: MIT
"""The gateway on Unix sockets beside TCP: how local sandboxes, whose network
namespace has loopback only, reach it (through a bind mount of the socket
directory). Same credentials, same policy, same log; only the transport differs."""
import json
import os
import stat
import subprocess
import tempfile
import unittest

from twind import TWIND, Credential, Twind, connect_tunnel, http_over, socks5_connect


class UnixListenersTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="tbx-gw-")
        cls.socks = os.path.join(cls.dir, "socks.sock")
        cls.connect = os.path.join(cls.dir, "connect.sock")
        cls.twind = Twind(args=["--socks", "127.0.0.1:0", "--socks", "unix:" + cls.socks,
                                "--connect", "unix:" + cls.connect,
                                "--connect", "127.0.0.1:0"]).start()

    @classmethod
    def tearDownClass(cls):
        cls.twind.cleanup()
        # A clean stop takes the socket files away.
        leftovers = os.listdir(cls.dir)
        os.rmdir(cls.dir) if not leftovers else None
        assert not leftovers, leftovers

    def credential(self):
        twin = self.twind.create_twin("default")
        return Credential(self.twind.credential(twin), self.twind.root)

    def test_ready_names_the_sockets_and_credentials_stay_tcp(self):
        r = self.twind.ready
        self.assertEqual((r["socks_socket"], r["connect_socket"]), (self.socks, self.connect))
        for path in (self.socks, self.connect):
            st = os.stat(path)
            self.assertTrue(stat.S_ISSOCK(st.st_mode))
            self.assertEqual(st.st_mode & 0o777, 0o600)
        cred = self.credential()
        self.assertRegex(cred["socks_address"], r"^127\.0\.0\.1:\d+$")
        self.assertRegex(cred["connect_address"], r"^127\.0\.0\.1:\d+$")

    def test_socks5_and_connect_over_unix_reach_the_twin(self):
        cred = self.credential()
        ctx = cred.strict_context()
        for dial in (lambda: socks5_connect(cred, "api.stripe.com", 443, via="unix:" + self.socks),
                     lambda: connect_tunnel(cred, "api.stripe.com", 443,
                                            via="unix:" + self.connect)):
            tls = ctx.wrap_socket(dial(), server_hostname="api.stripe.com")
            status, _, body = http_over(tls, "POST", "/v1/customers", "api.stripe.com",
                                        body=b"email=u@x.y",
                                        headers={"Authorization": "Bearer sk_test_u",
                                                 "Content-Type":
                                                     "application/x-www-form-urlencoded"})
            tls.close()
            self.assertEqual(status, 200, body)
            self.assertEqual(json.loads(body)["email"], "u@x.y")
        log = self.twind.requests_log(cred["username"])["requests"]
        self.assertEqual([(e["method"], e["path"]) for e in log],
                         [("POST", "/v1/customers")] * 2)
        self.assertIn("from a Unix socket twin " + cred["username"], self.twind.read_log())

    def test_policy_and_credentials_hold_on_unix_too(self):
        cred = self.credential()
        with self.assertRaises(ConnectionRefusedError):
            connect_tunnel(cred, "example.com", 443, via="unix:" + self.connect)
        with self.assertRaises(PermissionError):
            socks5_connect(cred, "api.stripe.com", 443, password="wrong", via="unix:" + self.socks)

    def test_curl_speaks_socks5h_on_the_unix_socket(self):
        cred = self.credential()
        out = subprocess.run(["curl", "-sS", "--cacert", cred.ca_file, "--proxy",
                              "socks5h://%s:%s@localhost%s" % (cred["username"], cred["password"],
                                                              self.socks),
                              "https://canary.twinbox.invalid/"],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(json.loads(out.stdout)["veris_sandbox_id"], cred["username"])


class UnixOnlyTest(unittest.TestCase):
    def test_a_unix_only_gateway_advertises_its_paths(self):
        d = tempfile.mkdtemp(prefix="tbx-gw-")
        t = Twind(args=["--socks", "unix:%s/s.sock" % d, "--connect", "unix:%s/c.sock" % d])
        t.start()
        try:
            twin = t.create_twin("default")
            cred = t.credential(twin)
            self.assertEqual(cred["socks_address"], "unix:%s/s.sock" % d)
            self.assertEqual(cred["connect_address"], "unix:%s/c.sock" % d)
        finally:
            t.cleanup()
            os.rmdir(d)

    def test_too_many_listeners_is_a_usage_error(self):
        args = [TWIND, "--state-dir", tempfile.mkdtemp(prefix="tbx-gw-")]
        for _ in range(5):
            args += ["--socks", "127.0.0.1:0"]
        r = subprocess.run(args, capture_output=True, text=True, timeout=20,
                           env={"PATH": os.environ["PATH"], "TWINBOX_TWIN_API_KEY": "k"})
        self.assertEqual(r.returncode, 2, r.stderr)
        subprocess.run(["rm", "-rf", args[2]])


if __name__ == "__main__":
    unittest.main()
