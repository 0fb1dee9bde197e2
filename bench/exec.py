#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/exec: the cost of a command in a sandbox through twinbox, side by side
with the alternative of starting a fresh bubblewrap sandbox for every command
(what a tool without a daemon and an in-sandbox agent would do), and the
daemon's memory as sessions accumulate. Prints times and ratios; asserts nothing.

    python3 bench/exec.py [--runs N] [--sessions M]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
import harness  # noqa: E402

BWRAP = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
         "--uid", "1000", "--gid", "1000", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
         "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--ro-bind", "/etc", "/etc",
         "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--clearenv", "--setenv", "PATH", "/usr/bin:/bin"]


def timed(fn, runs):
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1000)
    return statistics.median(samples)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--sessions", type=int, default=50)
    args = ap.parse_args()
    d = harness.Daemon().start()
    try:
        c = d.client()
        sid = c.call("session.open", {"project_dir": d.env["HOME"], "no_twin": True})["id"]
        call = lambda name, a: c.call("tool.call", {"session": sid, "name": name, "args": a})
        call("bash", {"command": "true"})
        via_twinbox = timed(lambda: call("bash", {"command": "true"}), args.runs)
        fresh_bwrap = timed(lambda: subprocess.run(BWRAP + ["/bin/sh", "-c", "true"], check=True),
                            args.runs)
        call("write", {"filePath": "f.txt", "content": "x" * 4096})
        read_twinbox = timed(lambda: call("read", {"filePath": "f.txt"}), args.runs)
        print("command in a sandbox (median of %d):" % args.runs)
        print("  twinbox tool bash (warm sandbox, via daemon)   %8.2f ms" % via_twinbox)
        print("  fresh bwrap sandbox per command                %8.2f ms" % fresh_bwrap)
        print("  ratio twinbox / fresh bwrap                    %8.2f" % (via_twinbox / fresh_bwrap))
        print("  twinbox tool read of a 4 KiB file              %8.2f ms" % read_twinbox)

        pid = d.proc.pid
        base = rss_kib(pid)
        for _ in range(args.sessions):
            s = c.call("session.open", {"project_dir": d.env["HOME"], "no_twin": True})["id"]
            c.call("tool.call", {"session": s, "name": "bash", "args": {"command": "true"}})
        grown = rss_kib(pid)
        print("daemon memory:")
        print("  RSS with 1 session                             %8d KiB" % base)
        print("  RSS with %3d sessions (each with a sandbox)    %8d KiB" % (args.sessions + 1, grown))
        print("  per additional session                         %8.1f KiB" %
              ((grown - base) / max(args.sessions, 1)))
    finally:
        d.cleanup()


if __name__ == "__main__":
    main()
