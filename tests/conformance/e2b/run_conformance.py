# SPDX-License-Identifier: MIT
"""Run the official e2b SDK's conformance script against the fake E2B.

Installs the pinned SDK (package-lock.json) into this folder with `npm ci` when
node_modules is missing, under a lock so concurrent runs do not race, then starts
the fake on 127.0.0.1 and runs conformance.mjs with E2B_API_URL/E2B_SANDBOX_URL
pointing at it. Exit 77 (skip) when node or npm is not installed.
"""
import fcntl
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "fakes", "e2b"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "e2b"))

from fakeproc import FakeE2B  # noqa: E402
from jailcheck import require_jail  # noqa: E402

PINNED = "2.51.0"


def installed_version():
    try:
        import json
        with open(os.path.join(HERE, "node_modules", "e2b", "package.json")) as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


def ensure_sdk():
    npm = shutil.which("npm")
    if not shutil.which("node") or not npm:
        print("SKIP: node and npm are needed (Debian: apt-get install nodejs npm)")
        sys.exit(77)
    with open(os.path.join(HERE, ".npm-install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed_version() == PINNED:
            return
        print("# installing the pinned e2b SDK with npm ci", flush=True)
        r = subprocess.run([npm, "ci", "--prefix", HERE, "--no-audit", "--no-fund",
                            "--loglevel=error"], stdout=sys.stdout, stderr=sys.stderr,
                           timeout=600)
        if r.returncode != 0 or installed_version() != PINNED:
            print("Bail out! npm ci failed (exit %d); is the npm registry reachable?" % r.returncode)
            sys.exit(1)


def main():
    require_jail()
    ensure_sdk()
    with FakeE2B() as fake:
        env = dict(os.environ)
        for k in ("E2B_DEBUG", "E2B_DOMAIN", "E2B_ACCESS_TOKEN"):
            env.pop(k, None)
        env.update(fake.env())
        r = subprocess.run(["node", os.path.join(HERE, "conformance.mjs")], env=env, cwd=HERE,
                           timeout=600)
        if r.returncode != 0:
            sys.stderr.write("--- fake E2B log ---\n" + fake.log()[-4000:])
        return r.returncode


if __name__ == "__main__":
    sys.exit(main())
