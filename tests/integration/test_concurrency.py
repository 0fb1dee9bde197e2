# SPDX-License-Identifier: MIT
"""16 concurrent clients x 200 tool calls each: no lost or mismatched reply."""
import threading
import unittest

from harness import DaemonTest

CLIENTS = 16
CALLS = 200
# Replies are matched by id; keep this many requests in flight per client so
# they can overtake each other.
PIPELINE = 8


class ConcurrencyTest(DaemonTest):
    def test_many_clients(self):
        setup = self.d.client()
        sessions = [self.open_session(setup)["id"] for _ in range(4)]
        for sid in sessions:
            setup.call("tool.call", {"session": sid, "name": "bash", "args": {"command": "true"}})
        failures = []

        def run(n):
            try:
                c = self.d.client()
                sid = sessions[n % len(sessions)]
                expected = {}
                pending = []
                for i in range(CALLS):
                    token = "c%d-%d" % (n, i)
                    path = "t/%s.txt" % token
                    if i % 4 == 0:
                        name, args = "bash", {"command": "echo %s" % token}
                    elif i % 4 == 1:
                        name, args = "write", {"filePath": path, "content": token}
                    else:
                        name, args = "glob", {"pattern": "t/c%d-*.txt" % n}
                    rid = c.request("tool.call", {"session": sid, "name": name, "args": args})
                    expected[rid] = (name, token)
                    pending.append(rid)
                    if len(pending) >= PIPELINE or i == CALLS - 1:
                        while pending:
                            msg = c.recv()
                            if "method" in msg:
                                continue
                            rid2 = msg.get("id")
                            if rid2 not in pending:
                                failures.append("client %d: unexpected reply id %r" % (n, rid2))
                                return
                            pending.remove(rid2)
                            if "error" in msg:
                                failures.append("client %d: %s" % (n, msg["error"]))
                                continue
                            kind, tok = expected.pop(rid2)
                            out = msg["result"]["output"]
                            if kind == "bash" and out.strip() != tok:
                                failures.append("client %d: reply %r to %r" % (n, out, tok))
                            if kind == "write" and "Wrote file successfully" not in out:
                                failures.append("client %d: write said %r" % (n, out))
                if expected:
                    failures.append("client %d: %d replies never came" % (n, len(expected)))
                c.close()
            except Exception as e:  # reported below
                failures.append("client %d: %r" % (n, e))

        threads = [threading.Thread(target=run, args=(n,)) for n in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])
        status = setup.call("daemon.status")
        self.assertEqual(status["sessions"], 4)


if __name__ == "__main__":
    unittest.main(warnings="ignore")
