# SPDX-License-Identifier: MIT
"""The tool table (tests/tools/cases.json) through the daemon, on a real engine.

The same cases the unit runner plays over the fake backend run here through
twinboxd's socket and the engine named by TBX_ENGINE (default: local), so a
tool behaves the same on every engine. See docs/tools.md for the case format.
"""
import json
import os
import re
import tempfile
import time
import unittest

from harness import ENGINE, Daemon, RpcError

CASES = os.path.join(os.path.dirname(__file__), "..", "tools", "cases.json")


def substitute(value, workdir, local):
    if isinstance(value, str):
        return value.replace("$WORKDIR", workdir).replace("$LOCAL", local)
    if isinstance(value, list):
        return [substitute(v, workdir, local) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, workdir, local) for k, v in value.items()}
    return value


def is_subset(want, got):
    if isinstance(want, dict):
        return isinstance(got, dict) and all(k in got and is_subset(v, got[k])
                                             for k, v in want.items())
    return want == got


def short(text, limit=600):
    text = str(text)
    return text if len(text) <= limit else text[:limit // 2] + " ... " + text[-limit // 2:]


def as_list(v):
    return v if isinstance(v, list) else [v]


class ToolTable(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon().start()
        cls.local = tempfile.mkdtemp(prefix="tbx-local-")
        cls.c = cls.d.client()
        cls.sid = cls.c.call("session.open", {"project_dir": cls.local, "engine": ENGINE})["id"]
        cls.tool("bash", {"command": "true"})
        cls.workdir = cls.c.call("session.show", {"session": cls.sid})["workdir"]

    @classmethod
    def tearDownClass(cls):
        cls.d.cleanup()
        os.rmdir(cls.local)

    @classmethod
    def tool(cls, name, args):
        return cls.c.call("tool.call", {"session": cls.sid, "name": name, "args": args})

    def shell(self, command):
        return self.tool("bash", {"command": command})

    def cat(self, path, chunk=16000):
        """The file's text, or None when absent; read in chunks so the bash
        tool's own output limits never cut it."""
        if self.shell("test -e '%s' && echo yes || echo no" % path)["output"].strip() != "yes":
            return None
        text, offset = "", 1
        while True:
            out = self.shell("tail -c +%d '%s' | head -c %d; printf '[chunk]'"
                             % (offset, path, chunk))["output"]
            part = out[:-len("[chunk]")]
            text += part
            if len(part.encode()) < chunk:
                return text
            offset += chunk

    def abspath(self, path):
        return path if path.startswith("/") else os.path.join(self.workdir, path)

    def run_setup(self, steps, sub):
        for st in steps:
            st = sub(st)
            if "file" in st:
                content = st.get("content", "") * st.get("repeat", 1)
                self.tool("write", {"filePath": st["file"], "content": content})
            elif "dir" in st:
                self.shell("mkdir -p '%s'" % st["dir"])
            elif "tool" in st:
                self.tool(st["tool"], st.get("args", {}))
            elif "sleep_ms" in st:
                time.sleep(st["sleep_ms"] / 1000.0)

    def call_case(self, case, args):
        rid = self.c.request("tool.call", {"session": self.sid, "name": case["tool"], "args": args})
        if "cancel_after_ms" in case:
            time.sleep(case["cancel_after_ms"] / 1000.0)
            self.c.send({"jsonrpc": "2.0", "method": "cancel", "params": {"id": rid}})
        reply = self.c.wait(rid)
        progress = "".join(n["params"].get("data", "") for n in self.c.notifications
                           if n.get("method") == "progress" and n["params"].get("id") == rid)
        self.c.notifications.clear()
        return reply, progress

    def assertIn(self, member, container, msg=None):
        if member not in container:
            self.fail(msg or "%r not found in %r" % (member, short(container)))

    def assertNotIn(self, member, container, msg=None):
        if member in container:
            self.fail(msg or "%r unexpectedly found in %r" % (member, short(container)))

    def check(self, case):
        if not isinstance(case.get("args", {}), dict):
            self.skipTest("non-object arguments are refused by the RPC layer (test_rpc)")
        sub = lambda v: substitute(v, self.workdir, self.local)
        self.shell("find '%s' -mindepth 1 -delete" % self.workdir)
        self.run_setup(case.get("setup", []), sub)
        exp = sub(case["expect"])
        reply, progress = self.call_case(case, sub(case.get("args", {})))
        if "error" in reply:
            err = reply["error"]
            self.assertFalse(exp.get("ok", True), "unexpected error: %s" % err["message"])
            if "error_equals" in exp:
                self.assertEqual(err["message"], exp["error_equals"])
            for s in as_list(exp.get("error_contains", [])):
                self.assertIn(s, err["message"])
            if "error_status" in exp:
                self.assertEqual((err.get("data") or {}).get("reason"), exp["error_status"])
        else:
            self.assertTrue(exp.get("ok", True), "expected an error, got %r" % reply["result"])
            res = reply["result"]
            out = res["output"]
            if "output_equals" in exp:
                self.assertEqual(out, exp["output_equals"])
            for s in as_list(exp.get("output_contains", [])):
                self.assertIn(s, out)
            for s in as_list(exp.get("output_not_contains", [])):
                self.assertNotIn(s, out)
            if "output_regex" in exp:
                self.assertRegex(out, re.compile(exp["output_regex"], re.S | re.M))
            if "title_equals" in exp:
                self.assertEqual(res["title"], exp["title_equals"])
            if "metadata" in exp:
                self.assertTrue(is_subset(exp["metadata"], res["metadata"]),
                                "%r not in %r" % (exp["metadata"], res["metadata"]))
            for key, subs in exp.get("metadata_contains", {}).items():
                for s in as_list(subs):
                    self.assertIn(s, res["metadata"][key])
            for s in as_list(exp.get("progress_contains", [])):
                self.assertIn(s, progress)
            if "saved_output_contains" in exp:
                path = res["metadata"]["outputPath"]
                saved = self.cat(path)
                for s in as_list(exp["saved_output_contains"]):
                    self.assertIn(s, saved)
                self.shell("rm -f '%s'" % path)
        for fa in as_list(exp.get("file_after", [])):
            content = self.cat(self.abspath(fa["path"]))
            if fa.get("absent"):
                self.assertIsNone(content, fa["path"])
            elif "content" in fa:
                self.assertEqual(content, fa["content"])
            elif "contains" in fa:
                self.assertIn(fa["contains"], content)


def make_test(case):
    def test(self):
        self.check(case)
    return test


with open(CASES, encoding="utf-8") as f:
    for i, case in enumerate(json.load(f)):
        name = "test_%03d_%s" % (i, re.sub(r"\W+", "_", case["name"]).strip("_")[:60])
        setattr(ToolTable, name, make_test(case))

if __name__ == "__main__":
    unittest.main(warnings="ignore")
