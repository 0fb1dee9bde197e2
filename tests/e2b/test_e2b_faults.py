# SPDX-License-Identifier: MIT
"""Faults injected into the fake E2B, seen through twinboxd on the e2b engine.

Every fault must end as a retry that succeeds or as a clear error reply: never a
hang, a crash or a lost reply. The daemon runs with short backoffs, set the way a
user would, in $XDG_CONFIG_HOME/twinbox/config.json.
"""
import glob
import json
import os
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, os.path.join(HERE, "..", "fakes", "e2b"))

from fakeproc import FakeE2B  # noqa: E402
from harness import Daemon, RpcError  # noqa: E402
from jailcheck import require_jail  # noqa: E402

CONFIG = {"engine": "e2b", "backends": {"e2b": {
    "retry_base_ms": 20, "retry_max_ms": 200, "retry_budget_ms": 4000,
    "stream_stall_ms": 3000, "request_timeout_ms": 15000}}}


class E2BFaults(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fake = FakeE2B()
        cls.d = Daemon()
        cls.d.env.update(cls.fake.env())
        cfg = os.path.join(cls.d.env["XDG_CONFIG_HOME"], "twinbox")
        os.makedirs(cfg, exist_ok=True)
        with open(os.path.join(cfg, "config.json"), "w") as f:
            json.dump(CONFIG, f)
        cls.d.start()

    @classmethod
    def tearDownClass(cls):
        try:
            cls.d.cleanup()
        finally:
            cls.fake.stop()

    def setUp(self):
        self.fake.clear_faults()
        self.c = self.d.client(timeout=90)
        self.sid = self.c.call("session.open", {"project_dir": self.d.env["HOME"], "engine": "e2b"})["id"]

    def tearDown(self):
        self.fake.clear_faults()
        try:
            self.c.call("session.delete", {"session": self.sid})
        except RpcError:
            pass
        self.c.close()

    def tool(self, name, args, client=None):
        return (client or self.c).call("tool.call", {"session": self.sid, "name": name, "args": args})

    def sandbox_id(self):
        return self.c.call("session.show", {"session": self.sid})["sandbox_id"]

    def assertClearError(self, ctx, reasons):
        err = ctx.exception
        self.assertIn(err.reason, reasons, err.message)
        self.assertTrue(len(err.message) > 20, err.message)

    def test_create_retries_503(self):
        self.fake.faults([{"method": "POST", "path": "^/v2/sandboxes$", "status": 503, "times": 2}])
        self.assertEqual(self.tool("bash", {"command": "echo ok"})["output"], "ok\n")
        self.assertEqual(self.fake.fault_report()[0]["fired"], 2)

    def test_create_429_retry_after(self):
        self.fake.faults([{"method": "POST", "path": "^/v2/sandboxes$", "status": 429,
                           "retry_after": 1, "times": 1}])
        t0 = time.time()
        self.assertEqual(self.tool("bash", {"command": "echo ok"})["output"], "ok\n")
        self.assertGreaterEqual(time.time() - t0, 0.9)

    def test_create_refused_for_good(self):
        self.fake.faults([{"method": "POST", "path": "^/v2/sandboxes$", "status": 503, "times": -1}])
        t0 = time.time()
        with self.assertRaises(RpcError) as ctx:
            self.tool("bash", {"command": "echo ok"})
        self.assertClearError(ctx, ["TBX_EUNAVAIL"])
        self.assertIn("503", ctx.exception.message)
        self.assertLess(time.time() - t0, 20)

    def test_start_busy_then_ok(self):
        self.tool("bash", {"command": "true"})
        self.fake.faults([{"path": "Process/Start", "status": 503, "times": 2,
                           "body": {"code": "unavailable", "message": "busy"}}])
        self.assertEqual(self.tool("bash", {"command": "echo ok"})["output"], "ok\n")

    def test_reset_on_download(self):
        self.tool("write", {"filePath": "a.txt", "content": "hello\n"})
        self.fake.faults([{"method": "GET", "path": "^/files$", "action": "reset", "times": 1}])
        self.assertIn("1: hello", self.tool("read", {"filePath": "a.txt"})["output"])

    def test_cut_stream_is_a_clear_error(self):
        self.tool("bash", {"command": "true"})
        self.fake.faults([{"path": "Process/Start", "action": "cut_stream", "after_events": 2}])
        with self.assertRaises(RpcError) as ctx:
            self.tool("bash", {"command": "echo a; sleep 0.2; echo b; sleep 0.2; echo c"})
        self.assertClearError(ctx, ["TBX_EPROTO", "TBX_EIO"])
        self.assertEqual(self.tool("bash", {"command": "echo after"})["output"], "after\n")

    def test_slow_stream(self):
        self.tool("bash", {"command": "true"})
        self.fake.faults([{"path": "Process/Start", "action": "slow_stream", "delay_ms": 150}])
        out = self.tool("bash", {"command": "echo one; echo two"})["output"]
        self.assertEqual(out, "one\ntwo\n")

    def test_wrong_content_type(self):
        self.tool("write", {"filePath": "a.txt", "content": "x\n"})
        self.fake.faults([{"path": "Filesystem/Stat", "status": 200, "content_type": "text/html",
                           "body": "<html>proxy</html>", "times": -1}])
        with self.assertRaises(RpcError) as ctx:
            self.tool("read", {"filePath": "a.txt"})
        self.assertClearError(ctx, ["TBX_EPROTO"])
        self.assertIn("content type", ctx.exception.message)

    def test_vanished_sandbox_is_replaced(self):
        self.tool("bash", {"command": "true"})
        old = self.sandbox_id()
        self.fake.vanish(old)
        self.assertEqual(self.tool("bash", {"command": "echo new"})["output"], "new\n")
        self.assertNotEqual(self.sandbox_id(), old)

    def test_paused_sandbox_is_resumed(self):
        self.tool("write", {"filePath": "kept.txt", "content": "kept\n"})
        sbx = self.sandbox_id()
        self.fake.expire(sbx)  # autoPause: E2B paused it on its idle timeout
        self.assertEqual(self.fake.sandbox(sbx)["state"], "paused")
        self.assertEqual(self.tool("bash", {"command": "cat kept.txt"})["output"], "kept\n")
        self.assertEqual(self.sandbox_id(), sbx)
        self.assertEqual(self.fake.sandbox(sbx)["state"], "running")

    def test_latency(self):
        self.fake.faults([], latency_ms=150)
        self.assertEqual(self.tool("bash", {"command": "echo ok"})["output"], "ok\n")

    def test_concurrent_calls_under_faults_all_answer(self):
        self.tool("bash", {"command": "true"})
        self.fake.faults([{"path": "Process/Start", "status": 503, "times": 4},
                          {"path": "Filesystem/Stat", "action": "reset", "times": 2}])
        results, errors = [], []

        def worker(i):
            c = self.d.client(timeout=90)
            try:
                if i % 2:
                    results.append(self.tool("bash", {"command": "echo %d" % i}, c)["output"])
                else:
                    self.tool("write", {"filePath": "f%d.txt" % i, "content": "%d\n" % i}, c)
                    results.append("w%d" % i)
            except Exception as e:  # noqa: BLE001 — any failure is recorded
                errors.append(repr(e))
            finally:
                c.close()

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertFalse(any(t.is_alive() for t in threads), "a call never answered")
        self.assertEqual(errors, [])
        self.assertEqual(len(results), 6)

    def test_zz_key_never_leaves_the_host_side(self):
        self.tool("bash", {"command": "env > /tmp/env.txt"})
        env = self.tool("bash", {"command": "cat /tmp/env.txt"})["output"]
        key = self.fake.api_key
        self.assertNotIn(key, env)
        self.assertEqual(self.fake.stats()["api_key_leaks"], 0)
        for s in self.fake.sandboxes():
            self.assertNotIn(key, json.dumps(s))
        self.assertNotIn(key, self.d.read_log())
        for path in glob.glob(os.path.join(self.d.env["XDG_STATE_HOME"], "twinbox", "*")):
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    self.assertNotIn(key.encode(), f.read(), path)
        self.assertIn("version", self.c.call("daemon.status"))


def main():
    require_jail()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(E2BFaults)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    return 0 if result.wasSuccessful() and result.testsRun else 1


if __name__ == "__main__":
    sys.exit(main())
