# SPDX-License-Identifier: MIT
"""The socket and JSON-RPC layer: permissions, hello, and every kind of bad input."""
import json
import os
import socket
import stat
import unittest

from harness import DaemonTest, RpcError


class SocketTest(DaemonTest):
    def test_permissions(self):
        run_dir = os.path.dirname(self.d.socket)
        self.assertEqual(stat.S_IMODE(os.stat(run_dir).st_mode), 0o700)
        self.assertEqual(stat.S_IMODE(os.stat(self.d.socket).st_mode), 0o600)
        self.assertTrue(stat.S_ISSOCK(os.stat(self.d.socket).st_mode))

    def test_hello(self):
        c = self.d.client(hello=False)
        r = c.call("hello", {"protocol": "twinbox/1", "client": "t"})
        self.assertEqual(r["protocol"], "twinbox/1")
        self.assertEqual(r["server"], "twinboxd")

    def test_hello_first(self):
        c = self.d.client(hello=False)
        with self.assertRaises(RpcError) as e:
            c.call("daemon.status")
        self.assertEqual(e.exception.code, -32600)
        self.assertIn("hello", e.exception.message)

    def test_unknown_protocol(self):
        c = self.d.client(hello=False)
        with self.assertRaises(RpcError) as e:
            c.call("hello", {"protocol": "nope/9"})
        self.assertIn("unknown protocol 'nope/9'", e.exception.message)
        self.assertIn("twinbox/1", e.exception.message)


class BadInputTest(DaemonTest):
    def setUp(self):
        super().setUp()
        self.bystander = self.d.client()  # must keep being served throughout

    def assert_still_serving(self):
        self.assertIn("version", self.bystander.call("daemon.status"))

    def test_malformed_json(self):
        c = self.d.client()
        c.send_raw(b'{"jsonrpc":"2.0","id":1,"method":\n')
        msg = c.recv()
        self.assertEqual(msg["error"]["code"], -32700)
        self.assertIn("invalid JSON", msg["error"]["message"])
        self.assertIsNone(msg["id"])
        # The same connection goes on working.
        self.assertIn("sessions", c.call("session.list"))
        self.assert_still_serving()

    def test_not_an_object(self):
        c = self.d.client()
        for raw, text in ((b"[1,2]\n", "batch"), (b"42\n", "JSON object")):
            c.send_raw(raw)
            msg = c.recv()
            self.assertEqual(msg["error"]["code"], -32600)
            self.assertIn(text, msg["error"]["message"])
        self.assert_still_serving()

    def test_wrong_version_and_method_type(self):
        c = self.d.client()
        c.send({"jsonrpc": "1.0", "id": 5, "method": "session.list"})
        msg = c.recv()
        self.assertEqual((msg["id"], msg["error"]["code"]), (5, -32600))
        c.send({"jsonrpc": "2.0", "id": 6, "method": 7})
        msg = c.recv()
        self.assertEqual((msg["id"], msg["error"]["code"]), (6, -32600))
        c.send({"jsonrpc": "2.0", "id": {"x": 1}, "method": "session.list"})
        self.assertEqual(c.recv()["error"]["code"], -32600)

    def test_unknown_method(self):
        c = self.d.client()
        with self.assertRaises(RpcError) as e:
            c.call("session.explode")
        self.assertEqual(e.exception.code, -32601)
        self.assertIn("session.open", e.exception.message)
        self.assert_still_serving()

    def test_notification_gets_no_reply(self):
        c = self.d.client()
        c.send({"jsonrpc": "2.0", "method": "session.explode"})
        self.assertIn("sessions", c.call("session.list"))

    def test_wrong_param_types(self):
        c = self.d.client()
        cases = [
            ("session.open", {"project_dir": 7}, "project_dir"),
            ("session.open", {}, "project_dir"),
            ("session.show", {"session": ["x"]}, "session"),
            ("tool.call", {"session": "ses_x", "name": "read", "args": "nope"}, "args"),
            ("tool.call", {"session": "ses_x"}, "name"),
            ("session.open", {"project_dir": "/", "no_twin": "yes"}, "no_twin"),
        ]
        for method, params, name in cases:
            with self.assertRaises(RpcError, msg=method) as e:
                c.call(method, params)
            self.assertEqual(e.exception.code, -32602, (method, params))
            self.assertIn("'%s'" % name, e.exception.message)
        c.send({"jsonrpc": "2.0", "id": 9, "method": "session.list", "params": [1]})
        self.assertEqual(c.recv()["error"]["code"], -32602)
        self.assert_still_serving()

    def test_oversized_frame(self):
        c = self.d.client()
        big = b'{"jsonrpc":"2.0","id":1,"method":"session.list","params":{"x":"' + \
            b"a" * (17 * 1024 * 1024) + b'"}}\n'
        c.send_raw(big)
        msg = c.recv()
        self.assertEqual(msg["error"]["code"], -32600)
        self.assertIn("frame longer than", msg["error"]["message"])
        # The rest of the oversized line is skipped; the connection goes on.
        self.assertIn("sessions", c.call("session.list"))
        self.assert_still_serving()

    def test_unknown_session(self):
        c = self.d.client()
        for method, params in (("session.show", {"session": "ses_nope"}),
                               ("tool.call", {"session": "ses_nope", "name": "read",
                                              "args": {"filePath": "x"}}),
                               ("session.delete", {"session": "ses_nope"})):
            with self.assertRaises(RpcError) as e:
                c.call(method, params)
            self.assertEqual(e.exception.reason, "TBX_ENOENT")
            self.assertIn("no session 'ses_nope'", e.exception.message)

    def test_unknown_engine_and_missing_dir(self):
        c = self.d.client()
        with self.assertRaises(RpcError) as e:
            c.call("session.open", {"project_dir": "/", "engine": "warp"})
        self.assertIn("no engine named 'warp'", e.exception.message)
        with self.assertRaises(RpcError) as e:
            c.call("session.open", {"project_dir": "/definitely/not/here"})
        self.assertIn("does not exist", e.exception.message)

    def test_client_vanishing_mid_call(self):
        c = self.d.client()
        s = self.open_session(c)
        c.request("tool.call", {"session": s["id"], "name": "bash",
                                "args": {"command": "sleep 20"}})
        c.close()
        self.assert_still_serving()


if __name__ == "__main__":
    unittest.main(warnings="ignore")
