# SPDX-License-Identifier: MIT
"""The fake's sandboxes: lifecycle (running, paused, killed), timeouts and expiry."""
import os
import secrets
import shutil
import signal
import string
import threading
import time

from .jail import Jail

ID_ALPHABET = string.ascii_lowercase + string.digits
CLIENT_ID = "6532622b"  # the API's legacy constant
ENVD_VERSION = "0.6.13"
MAX_TIMEOUT_S = 24 * 3600


def new_id():
    return "".join(secrets.choice(ID_ALPHABET) for _ in range(20))


class Sandbox:
    def __init__(self, root, template, timeout_s, metadata, env_vars, auto_pause, secure,
                 allow_internet, network, raw):
        self.id = new_id()
        self.template = template
        self.metadata = dict(metadata or {})
        self.env_vars = dict(env_vars or {})
        self.auto_pause = bool(auto_pause)
        self.secure = secure
        self.allow_internet = allow_internet
        self.network = network
        self.raw_request = raw  # the create body, for tests to inspect
        self.token = secrets.token_hex(16) if secure else None
        self.started_at = time.time()
        self.timeout_s = timeout_s
        self.end_at = self.started_at + timeout_s
        self.state = "running"
        self.dir = os.path.join(root, self.id)
        self.jail = Jail(self.dir)
        self.lock = threading.Lock()
        self.processes = {}  # pid -> subprocess.Popen

    def signal_processes(self, sig):
        with self.lock:
            procs = list(self.processes.values())
        for p in procs:
            try:
                os.killpg(p.pid, sig)
            except OSError:
                pass

    def kill_processes(self):
        self.signal_processes(signal.SIGKILL)

    def detail(self, domain):
        d = {"templateID": self.template, "sandboxID": self.id, "clientID": CLIENT_ID,
             "startedAt": _ts(self.started_at), "endAt": _ts(self.end_at), "cpuCount": 2,
             "memoryMB": 512, "diskSizeMB": 1024, "state": self.state,
             "envdVersion": ENVD_VERSION, "metadata": self.metadata}
        if self.template == "base":
            d["alias"] = "base"
        return d

    def full_detail(self, domain):
        d = self.detail(domain)
        if self.token:
            d["envdAccessToken"] = self.token
        d["domain"] = domain
        d["allowInternetAccess"] = self.allow_internet
        d["lifecycle"] = {"autoResume": False, "onTimeout": "pause" if self.auto_pause else "kill"}
        return d

    def created(self, domain):
        c = {"templateID": self.template, "sandboxID": self.id, "clientID": CLIENT_ID,
             "envdVersion": ENVD_VERSION, "trafficAccessToken": None, "domain": domain}
        if self.template == "base":
            c["alias"] = "base"
        if self.token:
            c["envdAccessToken"] = self.token
        return c


def _ts(t):
    from .wire import rfc3339
    return rfc3339(t)


class Registry:
    """Every sandbox the fake knows, with a reaper that applies timeouts."""

    def __init__(self, root):
        self.root = root
        self.lock = threading.Lock()
        self.by_id = {}
        self.stopped = threading.Event()
        self.reaper = threading.Thread(target=self._reap, daemon=True)
        self.reaper.start()

    def create(self, **kw):
        s = Sandbox(self.root, **kw)
        with self.lock:
            self.by_id[s.id] = s
        return s

    def get(self, sid):
        # The API strips a legacy "-<clientID>" suffix.
        if sid and "-" in sid:
            sid = sid.split("-", 1)[0]
        with self.lock:
            return self.by_id.get(sid)

    def all(self):
        with self.lock:
            return list(self.by_id.values())

    def pause(self, s, keep_memory=True):
        """A memory snapshot freezes the processes; a filesystem-only one ends them."""
        s.signal_processes(signal.SIGSTOP if keep_memory else signal.SIGKILL)
        s.state = "paused"

    def resume(self, s, timeout_s, keep_memory=True):
        if not keep_memory:
            s.kill_processes()  # a cold boot from the disk snapshot
        s.signal_processes(signal.SIGCONT)
        s.state = "running"
        s.end_at = time.time() + timeout_s

    def kill(self, s):
        with self.lock:
            self.by_id.pop(s.id, None)
        s.state = "killed"
        s.kill_processes()
        shutil.rmtree(s.dir, ignore_errors=True)

    def vanish(self, s):
        """As if E2B lost it: gone from the API, envd unreachable."""
        self.kill(s)

    def expire(self, s):
        if s.auto_pause:
            self.pause(s)
        else:
            self.kill(s)

    def _reap(self):
        while not self.stopped.wait(0.2):
            now = time.time()
            for s in self.all():
                if s.state == "running" and s.end_at <= now:
                    self.expire(s)

    def shutdown(self):
        self.stopped.set()
        for s in self.all():
            s.kill_processes()
