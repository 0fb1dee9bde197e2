#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run the fake E2B on 127.0.0.1 and an ephemeral port; print "PORT <n>" when ready.

It stops on SIGTERM/SIGINT, when its standard input closes (so a test that dies takes
it along), or after --max-lifetime seconds, killing every command it started.
"""
import argparse
import os
import signal
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from e2bfake.server import Fake  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--root", help="where sandboxes live (default: a temporary directory)")
    ap.add_argument("--api-key", help="the only key the API accepts (default: any non-empty key)")
    ap.add_argument("--domain", help="the domain the API reports for sandboxes")
    ap.add_argument("--watch-stdin", action="store_true", help="exit when stdin reaches EOF")
    ap.add_argument("--max-lifetime", type=float, default=1800)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    root = a.root or tempfile.mkdtemp(prefix="e2b-fake-")
    os.makedirs(root, exist_ok=True)
    fake = Fake(root, api_key=a.api_key, domain=a.domain, verbose=a.verbose)
    port = fake.serve("127.0.0.1", a.port)
    done = threading.Event()

    def stop(*_):
        done.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if a.watch_stdin:
        def watch():
            while sys.stdin.buffer.read(4096):
                pass
            done.set()
        threading.Thread(target=watch, daemon=True).start()
    threading.Thread(target=fake.httpd.serve_forever, kwargs={"poll_interval": 0.1},
                     daemon=True).start()
    print("PORT %d" % port, flush=True)
    done.wait(a.max_lifetime)
    fake.shutdown()
    if not a.root:
        import shutil
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
