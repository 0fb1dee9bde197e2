# SPDX-License-Identifier: MIT
"""Git sync through the daemon: local HEAD adopted at session start, gitSync and
the `sync` method bringing work home onto opencode/N, distinct N across
sessions and restarts, local-only commits kept, and the checked-out branch
left alone. Runs on harness.ENGINE (the local engine by default); the cases
about a sandbox without git use the fake engine with a PATH that has none."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import BUILD, ENGINE, Daemon, DaemonTest, RpcError  # noqa: E402

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Local User", "GIT_AUTHOR_EMAIL": "user@example.invalid",
    "GIT_COMMITTER_NAME": "Local User", "GIT_COMMITTER_EMAIL": "user@example.invalid",
}


class Repo:
    """A scratch repository driven with the git CLI."""

    def __init__(self, path):
        self.path = path
        self.env = dict(os.environ, HOME=os.path.dirname(path), **GIT_ENV)
        os.makedirs(path, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args, check=True):
        r = subprocess.run(["git", "-C", self.path, *args], env=self.env, capture_output=True,
                           text=True)
        if check and r.returncode != 0:
            raise AssertionError("git %s failed: %s" % (" ".join(args), r.stderr))
        return r.stdout.strip()

    def write(self, name, content):
        full = os.path.join(self.path, name)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(content)

    def commit(self, name, content, msg):
        self.write(name, content)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", msg)
        return self.git("rev-parse", "HEAD")

    def rev(self, name):
        return self.git("rev-parse", "--verify", "-q", name, check=False) or None

    def state(self):
        """HEAD, every ref, the worktree status and file contents: what must not change."""
        files = {}
        for root, dirs, names in os.walk(self.path):
            dirs[:] = [d for d in dirs if d != ".git"]
            for n in names:
                p = os.path.join(root, n)
                with open(p, "rb") as f:
                    files[os.path.relpath(p, self.path)] = f.read()
        return (self.git("symbolic-ref", "-q", "HEAD", check=False),
                self.git("for-each-ref", "--format=%(refname) %(objectname)",
                         "refs/heads/main", "refs/heads/opencode/"),
                self.git("status", "--porcelain"), files)


def tool(c, sid, name, args=None):
    return c.call("tool.call", {"session": sid, "name": name, "args": args or {}})


def bash(c, sid, command):
    return tool(c, sid, "bash", {"command": command})["output"]


class SyncTest(DaemonTest):
    def setUp(self):
        super().setUp()
        self.tmp = tempfile.mkdtemp(prefix="tbx-gitsync-")
        self.repo = Repo(os.path.join(self.tmp, "repo"))
        self.repo.commit("README", "hello\n", "first")
        self.repo.git("checkout", "-q", "-b", "side")
        self.repo.commit("src/side.c", "int side;\n", "side work")
        self.repo.git("checkout", "-q", "main")
        self.repo.commit("src/main.c", "int main;\n", "main work")
        self.repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side")

    def tearDown(self):
        super().tearDown()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def open(self, c, **kw):
        return self.open_session(c, project_dir=kw.pop("project_dir", self.repo.path), **kw)

    def test_session_start_adopts_head(self):
        c = self.d.client()
        os.makedirs(os.path.join(self.repo.path, "src", "deep"), exist_ok=True)
        s = self.open(c, project_dir=os.path.join(self.repo.path, "src"))
        self.assertEqual(s["repo_root"], os.path.realpath(self.repo.path))
        self.assertTrue(s["sync"]["enabled"])
        self.assertEqual(s["sync"]["branch"], "opencode/%d" % s["branch_number"])
        r = tool(c, s["id"], "bash", {"command": "git rev-parse HEAD; git symbolic-ref HEAD; "
                                                 "git status --porcelain; cat src/side.c"})
        self.assertEqual(r["output"].split("\n")[:3],
                         [self.repo.rev("HEAD"), "refs/heads/opencode", "int side;"])
        self.assertNotIn("notice", r)
        shown = c.call("session.show", {"session": s["id"]})
        self.assertEqual(shown["sync"]["state"], "adopted")
        self.assertIsNone(shown["sync"]["notice"])

    def test_dirty_worktree_is_said_plainly(self):
        self.repo.write("README", "edited but not committed\n")
        c = self.d.client()
        sid = self.open(c)["id"]
        r = tool(c, sid, "read", {"filePath": "README"})
        self.assertIn("uncommitted changes are not in the sandbox", r.get("notice", ""))
        self.assertIn("1: hello", r["output"])
        self.assertNotIn("notice", tool(c, sid, "bash", {"command": "true"}))
        self.assertIn("uncommitted changes are not in the sandbox",
                      c.call("session.show", {"session": sid})["sync"]["notice"])
        cli = self.d.cli("tool", self.open(c)["id"], "bash", '{"command":"true"}')
        self.assertIn("twinbox: note: uncommitted changes are not in the sandbox", cli.stderr)

    def test_gitsync_round_trip(self):
        c = self.d.client()
        s = self.open(c)
        sid, n = s["id"], s["branch_number"]
        bash(c, sid, "mkdir -p lib && echo 'int lib;' > lib/lib.c && printf '\\000\\377bin' > "
                     "data.bin && git add lib && git -c user.name=Agent -c user.email=a@x "
                     "commit -q -m 'agent: lib'")
        r = tool(c, sid, "gitSync")
        meta = r["metadata"]
        self.assertEqual((meta["branch"], meta["commits"], meta["files_changed"]),
                         ("opencode/%d" % n, 2, 2), r["output"])
        self.assertTrue(meta["committed"])
        self.assertGreater(meta["bytes"], 0)
        self.assertEqual(self.repo.rev("opencode/%d" % n), meta["tip"])
        self.assertIn("Synced 2 commits (2 files changed) to opencode/%d" % n, r["output"])
        self.assertEqual(self.repo.git("show", "opencode/%d:lib/lib.c" % n), "int lib;")
        self.assertEqual(self.repo.git("log", "-1", "--format=%an", "opencode/%d" % n), "twinbox")
        # The `sync` method: incremental, with progress notifications.
        bash(c, sid, "echo more >> lib/lib.c")
        rid = c.request("sync", {"session": sid})
        reply = c.wait(rid)
        res = reply["result"]
        self.assertEqual((res["commits"], res["files_changed"], res["incremental"]), (1, 1, True))
        self.assertLess(res["bytes"], meta["bytes"] * 2)
        self.assertTrue(any(m["params"].get("stream") == "sync" and m["params"].get("id") == rid
                            for m in c.notifications))
        self.assertEqual(self.repo.rev("opencode/%d" % n), res["tip"])
        # Nothing new; then the CLI.
        again = self.d.cli("sync", sid, "--json")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertTrue(json.loads(again.stdout)["up_to_date"])
        bash(c, sid, "echo cli > cli.txt")
        out = self.d.cli("sync", sid)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertRegex(out.stdout, r"^Synced 1 commit \(1 file changed\) to opencode/%d" % n)

    def test_distinct_numbers_across_sessions_and_restart(self):
        self.repo.git("branch", "opencode/40")  # made by hand: numbering starts above it
        c = self.d.client()
        a, b = self.open(c), self.open(c)
        self.assertNotEqual(a["branch_number"], b["branch_number"])
        self.assertGreater(min(a["branch_number"], b["branch_number"]), 40)
        for s in (a, b):
            bash(c, s["id"], "echo %s > who.txt" % s["id"])
            tool(c, s["id"], "gitSync")
            self.assertEqual(self.repo.git("show", "opencode/%d:who.txt" % s["branch_number"]),
                             s["id"])
        c.close()
        self.d.stop()
        self.d.start()
        c = self.d.client()
        third = self.open(c)
        self.assertNotIn(third["branch_number"], (a["branch_number"], b["branch_number"]))
        self.assertGreater(third["branch_number"], max(a["branch_number"], b["branch_number"]))
        # The first session goes on with its own N after the restart.
        bash(c, a["id"], "echo after > after.txt")
        r = tool(c, a["id"], "gitSync")["metadata"]
        self.assertEqual(r["branch"], "opencode/%d" % a["branch_number"])

    def test_local_only_commits_survive(self):
        c = self.d.client()
        s = self.open(c)
        sid, n = s["id"], s["branch_number"]
        bash(c, sid, "echo one > agent.txt")
        tool(c, sid, "gitSync")
        self.repo.git("checkout", "-q", "opencode/%d" % n)
        mine = self.repo.commit("mine.txt", "my own fix\n", "a local commit on opencode/N")
        self.repo.git("checkout", "-q", "main")
        bash(c, sid, "echo two >> agent.txt")
        r = tool(c, sid, "gitSync")
        meta = r["metadata"]
        self.assertIsNotNone(meta["backup"], r["output"])
        self.assertTrue(meta["backup"].startswith("opencode/%d-backup-" % n))
        self.assertEqual(meta["backup_commits"], 1)
        self.assertEqual(self.repo.rev(meta["backup"]), mine)
        self.assertEqual(self.repo.rev("opencode/%d" % n), meta["tip"])
        self.assertIn("are kept on " + meta["backup"], r["output"])

    def test_checked_out_branch_is_never_touched(self):
        c = self.d.client()
        s = self.open(c)
        sid, n = s["id"], s["branch_number"]
        bash(c, sid, "echo one > agent.txt")
        tool(c, sid, "gitSync")
        self.repo.git("checkout", "-q", "opencode/%d" % n)
        self.repo.write("agent.txt", "my uncommitted edit\n")
        before = self.repo.state()
        bash(c, sid, "echo two >> agent.txt")
        r = tool(c, sid, "gitSync")
        self.assertEqual(r["metadata"]["branch"], "opencode/%d-incoming" % n, r["output"])
        self.assertIn("is checked out", r["output"])
        after = self.repo.state()
        self.assertEqual(before[0], after[0])
        self.assertEqual(before[2:], after[2:])
        self.assertEqual(self.repo.rev("opencode/%d" % n),
                         before[1].split("refs/heads/opencode/%d " % n)[1].split("\n")[0])
        self.assertEqual(self.repo.git("show", "opencode/%d-incoming:agent.txt" % n),
                         "one\ntwo")

    def test_not_a_repository(self):
        c = self.d.client()
        plain = os.path.join(self.tmp, "plain")
        os.makedirs(plain)
        s = self.open(c, project_dir=plain)
        self.assertFalse(s["sync"]["enabled"])
        self.assertIsNone(s["branch_number"])
        self.assertEqual(bash(c, s["id"], "echo works"), "works\n")
        with self.assertRaises(RpcError) as e:
            tool(c, s["id"], "gitSync")
        self.assertIn("git sync is off", e.exception.message)
        fresh = self.open(c)["id"]
        with self.assertRaises(RpcError) as e:
            c.call("sync", {"session": fresh})
        self.assertIn("nothing to sync yet", e.exception.message)


class NoGitTest(unittest.TestCase):
    """The fake engine runs commands on the host: a PATH without git is a sandbox without it."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tbx-nogit-")
        self.repo = Repo(os.path.join(self.tmp, "repo"))
        self.repo.commit("README", "hello\n", "first")
        self.d = Daemon()
        self.d.env["TWINBOX_MODULE_PATH"] = os.path.join(BUILD, "tests", "plugins")
        self.d.env["PATH"] = os.path.join(self.tmp, "empty-bin")
        self.d.start()

    def tearDown(self):
        self.d.cleanup()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_gitsync_says_git_is_missing(self):
        c = self.d.client()
        sid = c.call("session.open", {"project_dir": self.repo.path, "engine": "fake"})["id"]
        r = tool(c, sid, "bash", {"command": "echo still works"})
        self.assertEqual(r["output"], "still works\n")
        self.assertIn("no git", r.get("notice", ""))
        self.assertEqual(c.call("session.show", {"session": sid})["sync"]["state"], "off")
        with self.assertRaises(RpcError) as e:
            tool(c, sid, "gitSync")
        self.assertIn("needs git in the sandbox", e.exception.message)
        self.assertIn("install git", e.exception.message)


if __name__ == "__main__":
    unittest.main(warnings="ignore")
