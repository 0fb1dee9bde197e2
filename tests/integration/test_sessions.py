# SPDX-License-Identifier: MIT
"""Sessions: one sandbox however many first calls race, attach by key, close,
delete, and state that survives kill -9 of the daemon."""
import json
import os
import threading
import time
import unittest

from harness import Daemon, DaemonTest, RpcError


def bash(client, sid, command):
    return client.call("tool.call", {"session": sid, "name": "bash",
                                     "args": {"command": command}})


class SessionTest(DaemonTest):
    def test_racing_first_use_creates_one_sandbox(self):
        sid = self.open_session()["id"]
        results, errors = [], []

        def first_use(i):
            try:
                c = self.d.client()
                r = c.call("tool.call", {"session": sid, "name": "write",
                                         "args": {"filePath": "f%d.txt" % i, "content": str(i)}})
                results.append(r)
                c.close()
            except Exception as e:  # collected and asserted below
                errors.append(e)

        threads = [threading.Thread(target=first_use, args=(i,)) for i in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(results), 12)
        sandboxes = [d for d in os.listdir(self.d.sandboxes_dir())]
        self.assertEqual(len(sandboxes), 1, sandboxes)
        c = self.d.client()
        shown = c.call("session.show", {"session": sid})
        self.assertEqual(shown["sandbox_id"], sandboxes[0])
        out = bash(c, sid, "ls f*.txt | wc -l")["output"]
        self.assertEqual(out.strip(), "12")

    def test_attach_by_key(self):
        c = self.d.client()
        a = self.open_session(c, key="k1")
        b = self.open_session(c, key="k1")
        other = self.open_session(c, key="k2")
        self.assertEqual(a["id"], b["id"])
        self.assertNotEqual(a["id"], other["id"])

    def test_close_keeps_sandbox_delete_kills_it(self):
        c = self.d.client()
        sid = self.open_session(c, key="keep")["id"]
        bash(c, sid, "echo kept > note.txt")
        sbx = c.call("session.show", {"session": sid})["sandbox_id"]
        self.assertEqual(c.call("session.close", {"session": sid})["state"], "closed")
        again = self.open_session(c, key="keep")
        self.assertEqual(again["id"], sid)
        self.assertEqual(again["state"], "open")
        self.assertEqual(bash(c, sid, "cat note.txt")["output"].strip(), "kept")
        self.assertEqual(c.call("session.delete", {"session": sid})["state"], "deleted")
        self.assertFalse(os.path.exists(os.path.join(self.d.sandboxes_dir(), sbx)))
        with self.assertRaises(RpcError) as e:
            bash(c, sid, "true")
        self.assertIn("was deleted", e.exception.message)
        self.assertNotIn(sid, [s["id"] for s in c.call("session.list")["sessions"]])

    def test_unknown_tool_makes_no_sandbox(self):
        c = self.d.client()
        sid = self.open_session(c)["id"]
        with self.assertRaises(RpcError) as e:
            c.call("tool.call", {"session": sid, "name": "teleport", "args": {}})
        self.assertIn("teleport", e.exception.message)
        self.assertIsNone(c.call("session.show", {"session": sid})["sandbox_id"])

    def test_progress_streams_bash_output(self):
        c = self.d.client()
        sid = self.open_session(c)["id"]
        rid = c.request("tool.call", {"session": sid, "name": "bash",
                                      "args": {"command": "for i in 1 2 3; do echo line$i; sleep 0.2; done"}})
        reply = c.wait(rid)
        self.assertIn("result", reply)
        streamed = "".join(n["params"]["data"] for n in c.notifications
                           if n["method"] == "progress" and n["params"]["id"] == rid)
        self.assertEqual(streamed, "line1\nline2\nline3\n")

    def test_cancel(self):
        c = self.d.client()
        sid = self.open_session(c)["id"]
        bash(c, sid, "true")  # sandbox up first
        rid = c.request("tool.call", {"session": sid, "name": "bash",
                                      "args": {"command": "sleep 60"}})
        time.sleep(0.5)
        other = self.d.client()
        # cancel only reaches requests of the same connection
        self.assertFalse(other.call("cancel", {"id": rid})["cancelled"])
        t0 = time.time()
        c.send({"jsonrpc": "2.0", "method": "cancel", "params": {"id": rid}})
        reply = c.wait(rid)
        self.assertLess(time.time() - t0, 30)
        text = reply.get("result", {}).get("output", "") or reply.get("error", {}).get("message", "")
        self.assertRegex(text.lower(), "abort|cancel")


class IsolationTest(unittest.TestCase):
    SECRET = "e2b_secret_must_not_leak_0123456789"

    def test_identity_and_no_secrets_inside(self):
        d = Daemon()
        # Keys in the daemon's environment stay out of every sandbox.
        for var in ("E2B_API_KEY", "DAYTONA_API_KEY", "VERIS_API_KEY"):
            d.env[var] = self.SECRET
        d.start()
        try:
            c = d.client()
            sid = c.call("session.open", {"project_dir": d.env["HOME"]})["id"]
            out = bash(c, sid, "id -un; id -u; hostname; env; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'")
            text = out["output"]
            self.assertTrue(text.startswith("user\n1000\nsandbox\n"), text[:200])
            self.assertNotIn(self.SECRET, text)
            self.assertNotIn("API_KEY", text)
            # Nor the host's accounts.
            self.assertNotIn(os.environ.get("USER", "root") + ":x:", bash(c, sid, "cat /etc/passwd")["output"]
                             if os.environ.get("USER") not in (None, "root") else "")
            self.assertNotIn(self.SECRET, d.read_log())
        finally:
            d.cleanup()


class RestartTest(unittest.TestCase):
    def test_kill9_and_restart_keeps_sessions_and_files(self):
        d = Daemon().start()
        try:
            c = d.client()
            sid = d.client().call("session.open", {"project_dir": d.env["HOME"],
                                                   "key": "survivor"})["id"]
            bash(c, sid, "echo before > kept.txt")
            sbx = c.call("session.show", {"session": sid})["sandbox_id"]
            c.close()
            d.kill9()
            self.assertTrue(os.path.exists(d.socket), "a crashed daemon leaves its socket")
            d.start()  # detects the stale socket and replaces it
            c = d.client()
            shown = c.call("session.show", {"session": sid})
            self.assertEqual(shown["sandbox_id"], sbx)
            self.assertEqual(bash(c, sid, "cat kept.txt")["output"].strip(), "before")
            again = c.call("session.open", {"project_dir": d.env["HOME"], "key": "survivor"})
            self.assertEqual(again["id"], sid)
        finally:
            d.cleanup()

    def test_sigterm_cancels_inflight_calls_cleanly(self):
        d = Daemon().start()
        try:
            c = d.client()
            sid = c.call("session.open", {"project_dir": d.env["HOME"]})["id"]
            bash(c, sid, "true")
            rid = c.request("tool.call", {"session": sid, "name": "bash",
                                          "args": {"command": "sleep 60"}})
            time.sleep(0.5)
            t0 = time.time()
            d.proc.terminate()
            reply = c.wait(rid)  # answered, not dropped
            self.assertEqual(d.proc.wait(timeout=30), 0, d.read_log(4000))
            self.assertLess(time.time() - t0, 20)
            text = json.dumps(reply)
            self.assertRegex(text.lower(), "abort|cancel")
            self.assertIn("stopped serving", d.read_log())
        finally:
            d.cleanup()

    def test_graceful_stop_then_restart(self):
        d = Daemon().start()
        try:
            c = d.client()
            sid = c.call("session.open", {"project_dir": d.env["HOME"]})["id"]
            bash(c, sid, "echo x > y")
            c.close()
            d.stop()
            self.assertEqual(d.proc.returncode, 0, d.read_log())
            self.assertFalse(os.path.exists(d.socket))
            d.start()
            self.assertEqual(bash(d.client(), sid, "cat y")["output"].strip(), "x")
        finally:
            d.cleanup()


if __name__ == "__main__":
    unittest.main(warnings="ignore")
