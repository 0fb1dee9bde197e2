# SPDX-License-Identifier: MIT
"""The daemon's one twin client: the local twinbox-twind it starts and
supervises by default, or a Veris control plane when VERIS_API_KEY is set."""
import json
import os
import signal
import subprocess
import tempfile
import time
import unittest

from harness import BUILD, Daemon

TWIND = os.path.join(BUILD, "twin", "twinbox-twind")


def proc_text(pid, name):
    try:
        with open("/proc/%d/%s" % (pid, name), "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not proc_text(pid, "stat").split(") ")[-1].startswith("Z")


class LocalTwinTest(unittest.TestCase):
    def setUp(self):
        self.d = Daemon().start()

    def tearDown(self):
        self.d.cleanup()

    def twin(self):
        return self.d.client().call("daemon.status")["twin"]

    def test_started_healthy_and_keyless_argv(self):
        t = self.twin()
        self.assertEqual((t["mode"], t["healthy"]), ("local", True), t)
        pid = t["pid"]
        self.assertTrue(alive(pid))
        self.assertIn("twinbox-twind", proc_text(pid, "cmdline"))
        # The key travels in twind's environment only, and twind drops it once read.
        self.assertNotIn("API_KEY", proc_text(pid, "cmdline"))
        self.assertNotIn("TWINBOX_TWIN_API_KEY", proc_text(pid, "environ"))
        self.assertEqual(os.stat(t["control_socket"]).st_mode & 0o777, 0o600)

    def test_restarted_after_a_crash(self):
        pid = self.twin()["pid"]
        os.kill(pid, signal.SIGKILL)
        deadline = time.time() + 20
        while time.time() < deadline:
            t = self.twin()
            if t.get("pid") and t["pid"] != pid and t["healthy"]:
                break
            time.sleep(0.1)
        self.assertNotEqual(t["pid"], pid)
        self.assertEqual((t["restarts"], t["healthy"]), (1, True), t)
        self.assertIn("died (signal 9); restarting it", self.d.read_log())

    def test_stopped_with_the_daemon(self):
        pid = self.twin()["pid"]
        self.d.stop()
        self.assertEqual(self.d.proc.returncode, 0)
        deadline = time.time() + 10
        while alive(pid) and time.time() < deadline:
            time.sleep(0.05)
        self.assertFalse(alive(pid), "twind outlived the daemon")

    def test_cli_status_shows_it(self):
        r = self.d.cli("status")
        self.assertIn("twin            local at http://localhost, healthy", r.stdout)


class VerisModeTest(unittest.TestCase):
    """With VERIS_API_KEY the daemon starts no twind and uses VERIS_API_BASE;
    a twind we run ourselves on TCP stands in for the Veris cloud."""

    KEY = "veris_key_for_tests_0123456789"

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tbx-veris-")
        ready = os.path.join(self.tmp, "ready.json")
        env = {"PATH": os.environ["PATH"], "TWINBOX_TWIN_API_KEY": self.KEY}
        self.cloud = subprocess.Popen([TWIND, "--state-dir", os.path.join(self.tmp, "state"),
                                       "--control", "127.0.0.1:0", "--ready-file", ready],
                                      env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 15
        while not os.path.exists(ready) and time.time() < deadline:
            time.sleep(0.05)
        with open(ready) as f:
            self.base = json.load(f)["control_url"]

    def tearDown(self):
        self.cloud.terminate()
        self.cloud.wait(timeout=10)
        subprocess.run(["rm", "-rf", self.tmp])

    def start_daemon(self, key):
        d = Daemon()
        d.env.update({"VERIS_API_KEY": key, "VERIS_API_BASE": self.base})
        return d.start()

    def test_one_client_for_the_cloud(self):
        d = self.start_daemon(self.KEY)
        try:
            t = d.client().call("daemon.status")["twin"]
            self.assertEqual((t["mode"], t["base"], t["healthy"]), ("veris", self.base, True), t)
            self.assertNotIn("pid", t)
            self.assertNotIn(self.KEY, d.read_log())
        finally:
            d.cleanup()

    def test_wrong_key_is_unhealthy(self):
        d = self.start_daemon("not-the-key")
        try:
            t = d.client().call("daemon.status")["twin"]
            self.assertEqual((t["mode"], t["healthy"]), ("veris", False), t)
        finally:
            d.cleanup()


if __name__ == "__main__":
    unittest.main(warnings="ignore")
