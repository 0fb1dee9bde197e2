# SPDX-License-Identifier: MIT
"""Egress on the e2b engine, against the fake E2B (tests/fakes/e2b).

With the local twin, whose gateway is on this machine's loopback, an E2B
sandbox has no route to it: the session says egress is not wired on this
engine yet and makes no twin. With a Veris control plane (here a twind the
test runs on TCP, advertising a documentation address nothing listens on),
the sandbox is created with network.egressProxy naming the gateway, the trust
files are installed and the canary runs; the fake's sandboxes have no network,
so the canary fails and says so, which is what it is for."""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

from harness import BUILD, Daemon

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fakes", "e2b"))
sys.path.insert(0, os.path.join(HERE, "..", "e2b"))

from fakeproc import FakeE2B  # noqa: E402

E2B_MODULE = os.path.join(BUILD, "backends", "e2b")
TWIND = os.path.join(BUILD, "twin", "twinbox-twind")
VERIS_KEY = "veris_key_for_egress_tests_0123456789"
# TEST-NET-1 (RFC 5737): never routed, and nothing here ever dials it.
ADVERTISED = "192.0.2.1"


def e2b_daemon(fake, extra=None):
    d = Daemon()
    d.env.update(fake.env())
    d.env["TWINBOX_MODULE_PATH"] = E2B_MODULE
    d.env.pop("VERIS_API_KEY", None)
    d.env.update(extra or {})
    return d.start()


def bash(c, sid, command):
    return c.call("tool.call", {"session": sid, "name": "bash", "args": {"command": command}})


@unittest.skipUnless(os.path.exists(os.path.join(E2B_MODULE, "e2b.so")), "e2b.so is not built")
class E2BEgressTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from jailcheck import require_jail
        require_jail()
        cls.fake = FakeE2B()

    @classmethod
    def tearDownClass(cls):
        cls.fake.stop()

    def fake_sandbox(self, sbx):
        return [s for s in self.fake.admin("GET", "/sandboxes") if s["id"] == sbx][0]

    def test_local_twin_is_not_wired_on_e2b_and_says_so(self):
        d = e2b_daemon(self.fake)
        try:
            c = d.client()
            sid = c.call("session.open", {"project_dir": d.env["HOME"], "engine": "e2b"})["id"]
            out = bash(c, sid, "echo up")
            self.assertEqual(out["output"], "up\n")
            self.assertNotIn("notice", out)  # by design, not a failure: shown, not told
            shown = c.call("session.show", {"session": sid})
            self.assertEqual((shown["egress"]["mode"], shown["twin_id"]), ("none", None))
            self.assertIn("not wired on the e2b engine", shown["egress"]["reason"])
            sbx = self.fake_sandbox(shown["sandbox_id"])
            self.assertIs(sbx["allow_internet"], False)
            self.assertIsNone(sbx["network"])
        finally:
            d.cleanup()

    def test_a_reachable_gateway_is_the_sandbox_egress_proxy(self):
        tmp = tempfile.mkdtemp(prefix="tbx-veris-")
        ready = os.path.join(tmp, "ready.json")
        cloud = subprocess.Popen([TWIND, "--state-dir", os.path.join(tmp, "state"),
                                  "--control", "127.0.0.1:0", "--advertise", ADVERTISED,
                                  "--ready-file", ready],
                                 env={"PATH": os.environ["PATH"], "TWINBOX_TWIN_API_KEY": VERIS_KEY},
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        d = None
        try:
            deadline = time.time() + 15
            while not os.path.exists(ready) and time.time() < deadline:
                time.sleep(0.05)
            with open(ready) as f:
                base = json.load(f)["control_url"]
            d = e2b_daemon(self.fake, {"VERIS_API_KEY": VERIS_KEY, "VERIS_API_BASE": base,
                                       "VERIS_ENVIRONMENT_ID": "stripe"})
            c = d.client()
            sid = c.call("session.open", {"project_dir": d.env["HOME"], "engine": "e2b"})["id"]
            out = bash(c, sid, "echo $SSL_CERT_FILE; grep -c 'BEGIN CERT' /tmp/twinbox-ca.crt")
            self.assertEqual(out["output"], "/tmp/twinbox-ca-bundle.crt\n1\n", out)
            # The fake gives its sandboxes no network: the canary fails, and the agent is told.
            self.assertIn("canary", out.get("notice", ""), out)
            shown = c.call("session.show", {"session": sid})
            egress = shown["egress"]
            self.assertEqual((egress["mode"], egress["environment"]), ("gateway", "stripe"))
            self.assertTrue(egress["canary"].startswith("failed: "), egress)
            sbx = self.fake_sandbox(shown["sandbox_id"])
            proxy = sbx["network"]["egressProxy"]
            self.assertTrue(proxy["address"].startswith(ADVERTISED + ":"), proxy)
            self.assertEqual(proxy["username"], shown["twin_id"])
            self.assertTrue(proxy["password"])
            self.assertIsNone(sbx["allow_internet"])  # left out: traffic flows through the proxy
            self.assertNotIn(VERIS_KEY, json.dumps(sbx))
            # Deleting the session deletes its twin in the control plane.
            twin = shown["twin_id"]
            c.call("session.delete", {"session": sid})
            req = urllib.request.Request(base + "/v1/sandboxes/" + twin,
                                         headers={"X-API-Key": VERIS_KEY})
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with self.assertRaises(urllib.error.HTTPError) as e:
                opener.open(req, timeout=10)
            self.assertEqual(e.exception.code, 404)
        finally:
            if d:
                d.cleanup()
            cloud.terminate()
            cloud.wait(timeout=10)
            subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    unittest.main()
