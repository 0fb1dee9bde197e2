# SPDX-License-Identifier: MIT
"""The frontend ABI end to end: a test frontend (tests/plugins/echo-frontend.c)
takes over a connection after hello and makes core calls for its client."""
import os
import unittest

from harness import BUILD, Daemon


class FrontendTest(unittest.TestCase):
    def setUp(self):
        self.d = Daemon()
        self.d.env["TWINBOX_MODULE_PATH"] = ":".join(
            [os.path.join(BUILD, "backends", "local"), os.path.join(BUILD, "tests", "plugins")])
        self.d.start()

    def tearDown(self):
        self.d.cleanup()

    def test_hello_hands_over_and_core_calls_work(self):
        c = self.d.client(hello=False)
        r = c.call("hello", {"protocol": "echo/1", "client": "t"})
        self.assertEqual(r["protocol"], "echo/1")
        c.send({"just": "echo"})
        self.assertEqual(c.recv(), {"just": "echo"})
        c.send({"call": "session.open", "tag": 1,
                "params": {"project_dir": self.d.env["HOME"], "engine": "fake"}})
        reply = c.recv()
        self.assertEqual((reply["tag"], reply["status"]), (1, 0))
        sid = reply["result"]["id"]
        self.assertEqual(reply["result"]["frontend"], "echo")
        c.send({"call": "tool.call", "tag": 2,
                "params": {"session": sid, "name": "bash", "args": {"command": "echo streamed"}}})
        msgs = []
        while True:
            m = c.recv()
            msgs.append(m)
            if "status" in m:
                break
        self.assertIn({"tag": 2, "progress": {"stream": "stdout", "data": "streamed\n"}}, msgs)
        self.assertEqual(msgs[-1]["status"], 0)
        c.send({"call": "session.show", "tag": 3, "params": {"session": "ses_nope"}})
        bad = c.recv()
        self.assertEqual(bad["status"], -3)
        self.assertIn("no session", bad["message"])
        c.send({"close": True})
        with self.assertRaises(EOFError):
            c.recv()
        # twinbox/1 clients are unaffected.
        self.assertIn("version", self.d.client().call("daemon.status"))

    def test_modules_lists_the_frontend(self):
        mods = self.d.client().call("modules.list")["modules"]
        self.assertIn(("echo", "frontend"), [(m["name"], m["kind"]) for m in mods])


if __name__ == "__main__":
    unittest.main(warnings="ignore")
