# SPDX-License-Identifier: MIT
"""Skip (exit 77, meson's skip code) when the fake cannot jail commands with bubblewrap.

Without bwrap the fake runs commands on the host, where the sandbox's absolute paths
(/home/user/project) do not exist, so daemon-level tests would fail for the wrong reason.
"""
import shutil
import subprocess
import sys


def require_jail():
    bwrap = shutil.which("bwrap")
    if not bwrap:
        print("SKIP: bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
        sys.exit(77)
    r = subprocess.run([bwrap, "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "true"],
                       capture_output=True)
    if r.returncode != 0:
        print("SKIP: bwrap cannot make namespaces here: %s" % r.stderr.decode(errors="replace"))
        sys.exit(77)
