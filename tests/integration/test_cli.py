# SPDX-License-Identifier: MIT
"""The CLI: start-up of the daemon (also racing), exit codes, --json, --help."""
import json
import os
import subprocess
import time
import unittest

from harness import CLI, Daemon


class CliTest(unittest.TestCase):
    def setUp(self):
        self.d = Daemon()  # not started: the CLI starts it

    def tearDown(self):
        self.d.cli("daemon", "stop")
        self.d.cleanup()

    def daemon_pids(self):
        """twinboxd processes serving this test's runtime directory."""
        mine = ("XDG_RUNTIME_DIR=" + self.d.env["XDG_RUNTIME_DIR"]).encode()
        pids = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                exe = os.readlink("/proc/%s/exe" % pid)
                env = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
            except OSError:
                continue
            if os.path.basename(exe) == "twinboxd" and mine in env:
                pids.append(pid)
        return pids

    def test_racing_starts_end_with_one_daemon(self):
        procs = [subprocess.Popen([CLI, "status", "--json"], env=self.d.env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(6)]
        outs = [p.communicate(timeout=60) for p in procs]
        pids = {json.loads(o[0])["pid"] for o in outs}
        self.assertEqual([p.returncode for p in procs], [0] * 6, outs)
        self.assertEqual(len(pids), 1)
        time.sleep(0.3)
        self.assertEqual(len(self.daemon_pids()), 1)

    def test_session_round_trip_and_json(self):
        r = self.d.cli("session", "open", "--repo", self.d.env["HOME"], "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        s = json.loads(r.stdout)
        self.assertTrue(s["id"].startswith("ses_"))
        r = self.d.cli("tool", s["id"], "bash", '{"command":"echo hi; exit 3"}')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "hi\n")
        self.assertIn("exit 3", r.stderr)
        r = self.d.cli("tool", s["id"], "write", '{"filePath":"a.txt","content":"x"}', "--json")
        self.assertEqual(json.loads(r.stdout)["output"], "Wrote file successfully.")
        r = self.d.cli("session", "list", "--json")
        self.assertIn(s["id"], [x["id"] for x in json.loads(r.stdout)["sessions"]])
        r = self.d.cli("session", "show", s["id"])
        self.assertIn("sandbox_id", r.stdout)
        r = self.d.cli("session", "delete", s["id"])
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_exit_codes(self):
        r = self.d.cli()
        self.assertEqual(r.returncode, 2)
        r = self.d.cli("frobnicate")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown command", r.stderr)
        r = self.d.cli("tool", "ses_x")
        self.assertEqual(r.returncode, 2)
        r = self.d.cli("tool", "ses_x", "read", "{not json")
        self.assertEqual(r.returncode, 2)
        self.assertIn("ARGS_JSON", r.stderr)
        r = self.d.cli("session", "show", "ses_nope")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no session 'ses_nope'", r.stderr)
        r = self.d.cli("session", "show", "ses_nope", "--json")
        self.assertEqual((r.returncode, r.stdout), (1, ""))

    def test_help_everywhere(self):
        for args in (["--help"], ["session", "--help"], ["session", "open", "--help"],
                     ["tool", "--help"], ["status", "--help"], ["modules", "--help"],
                     ["demo", "--help"], ["daemon", "--help"]):
            r = self.d.cli(*args)
            self.assertEqual(r.returncode, 0, args)
            self.assertIn("Usage: twinbox", r.stdout, args)

    def test_status_and_modules(self):
        r = self.d.cli("status", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        st = json.loads(r.stdout)
        self.assertEqual(st["abi"], {"major": 1, "minor": 0})
        r = self.d.cli("modules", "--json")
        mods = json.loads(r.stdout)
        self.assertIn("local", [m["name"] for m in mods["modules"] if m["kind"] == "backend"])
        r = self.d.cli("modules")
        self.assertIn("local", r.stdout)

    def test_demo(self):
        r = self.d.cli("demo", timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("Wrote file successfully.", r.stdout)
        self.assertIn("Edit applied successfully.", r.stdout)
        self.assertIn("interfaces: lo\n", r.stdout)
        self.assertIn("no way out", r.stdout)
        self.assertIn("deleted", r.stdout)


if __name__ == "__main__":
    unittest.main(warnings="ignore")
