# SPDX-License-Identifier: MIT
"""Start the fake E2B as a child process for a test, and talk to its /_fake admin routes.

    with FakeE2B() as fake:
        env = fake.env()           # E2B_API_KEY, E2B_API_URL, E2B_SANDBOX_URL
        fake.faults([{"method": "POST", "path": "^/v2/sandboxes$", "status": 503}])

The fake exits when this process closes its standard input, so a test that dies
does not leave it behind.
"""
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_e2b.py")
# Not a real key: the fake accepts only this one, and tests check it never leaks.
TEST_KEY = "e2b_twinbox_test_key_0123456789abcdef"


class FakeE2B:
    def __init__(self, api_key=TEST_KEY, domain=None):
        self.api_key = api_key
        self.root = tempfile.mkdtemp(prefix="e2b-fake-")
        self.log_path = os.path.join(self.root, "fake.log")
        args = [sys.executable, FAKE, "--watch-stdin", "--root", os.path.join(self.root, "sbx")]
        if api_key:
            args += ["--api-key", api_key]
        if domain:
            args += ["--domain", domain]
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=log)
        log.close()
        line = self.proc.stdout.readline().decode()
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError("the fake E2B did not start:\n" + self.log())
        self.port = int(line.split()[1])
        self.url = "http://127.0.0.1:%d" % self.port

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def env(self):
        return {"E2B_API_KEY": self.api_key or "", "E2B_API_URL": self.url,
                "E2B_SANDBOX_URL": self.url}

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def admin(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + "/_fake" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read() or b"null")

    def faults(self, rules, latency_ms=0):
        return self.admin("POST", "/faults", {"rules": rules, "latency_ms": latency_ms})

    def clear_faults(self):
        return self.admin("DELETE", "/faults")

    def fault_report(self):
        return self.admin("GET", "/faults")["rules"]

    def stats(self):
        return self.admin("GET", "/stats")

    def sandboxes(self):
        return self.admin("GET", "/sandboxes")

    def sandbox(self, sid):
        return next((s for s in self.sandboxes() if s["id"] == sid), None)

    def vanish(self, sid):
        return self.admin("POST", "/sandboxes/%s/vanish" % sid, {})

    def expire(self, sid):
        return self.admin("POST", "/sandboxes/%s/expire" % sid, {})

    def config(self, **kw):
        return self.admin("POST", "/config", kw)

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdout, self.proc.stdin):
            try:
                f.close()
            except (OSError, AttributeError):
                pass
        import shutil
        shutil.rmtree(self.root, ignore_errors=True)
