# SPDX-License-Identifier: MIT
"""Integration harness: a twinboxd on temporary XDG directories, and clients for it.

Standard library only. Every test gets its own daemon, socket and state, and
stops the daemon (and the sandboxes it made) when done.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

# Tests drop connections on purpose; the daemon is what must cope.
warnings.simplefilter("ignore", ResourceWarning)

BUILD = os.environ.get("TBX_BUILD_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", "..", "build"))
DAEMON = os.environ.get("TBX_DAEMON", os.path.join(BUILD, "daemon", "twinboxd"))
CLI = os.environ.get("TBX_CLI", os.path.join(BUILD, "cli", "twinbox"))
ENGINE = os.environ.get("TBX_ENGINE", "local")


class RpcError(Exception):
    def __init__(self, error):
        super().__init__(error.get("message"))
        self.code = error.get("code")
        self.message = error.get("message", "")
        self.reason = (error.get("data") or {}).get("reason")


class Client:
    """A twinbox/1 client on the daemon's socket."""

    def __init__(self, path, hello=True, timeout=120):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        self.next_id = 0
        self.notifications = []
        if hello:
            self.call("hello", {"protocol": "twinbox/1", "client": "tests"})

    def close(self):
        self.sock.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, msg):
        self.send_raw(json.dumps(msg).encode() + b"\n")

    def recv(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("daemon closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.next_id

    def wait(self, rid):
        while True:
            msg = self.recv()
            if "method" in msg:
                self.notifications.append(msg)
                continue
            if msg.get("id") == rid:
                return msg

    def call(self, method, params=None):
        msg = self.wait(self.request(method, params))
        if "error" in msg:
            raise RpcError(msg["error"])
        return msg["result"]


class Daemon:
    """twinboxd on fresh XDG directories."""

    def __init__(self, root=None):
        self.root = root or tempfile.mkdtemp(prefix="tbx-it-")
        self.env = dict(os.environ)
        for var, sub in (("XDG_RUNTIME_DIR", "run"), ("XDG_STATE_HOME", "state"),
                         ("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config"),
                         ("HOME", "home")):
            path = os.path.join(self.root, sub)
            os.makedirs(path, mode=0o700, exist_ok=True)
            self.env[var] = path
        self.env.pop("TWINBOX_SOCKET", None)
        self.env.setdefault("TWINBOX_LOG_LEVEL", "info")
        self.socket = os.path.join(self.root, "run", "twinbox", "twinbox.sock")
        self.proc = None
        self.log = os.path.join(self.root, "daemon.log")

    def start(self, wait=True):
        logf = open(self.log, "ab")
        self.proc = subprocess.Popen([DAEMON], env=self.env, stdout=logf, stderr=logf,
                                     stdin=subprocess.DEVNULL)
        logf.close()
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc and self.proc.poll() is not None:
                raise RuntimeError("twinboxd exited early:\n" + self.read_log(6000))
            try:
                c = Client(self.socket)
                c.close()
                return
            except (FileNotFoundError, ConnectionRefusedError):
                time.sleep(0.05)
        raise RuntimeError("twinboxd did not answer within %ss:\n%s" % (timeout, self.read_log(6000)))

    def read_log(self, tail=None):
        """The daemon's log: ours, and the one a CLI-started daemon writes."""
        text = ""
        for path in (self.log, os.path.join(self.env["XDG_STATE_HOME"], "twinbox", "twinboxd.log")):
            try:
                with open(path, "rb") as f:
                    text += f.read().decode(errors="replace")
            except FileNotFoundError:
                pass
        return text[-tail:] if tail else text

    def client(self, **kw):
        return Client(self.socket, **kw)

    def cli(self, *args, input=None, timeout=120):
        return subprocess.run([CLI, *args], env=self.env, input=input, capture_output=True,
                              text=True, timeout=timeout)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def sanitizer_report(self):
        """What ASan/UBSan/LSan said in the daemon's log, if anything."""
        log = self.read_log()
        for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
            at = log.find(marker)
            if at >= 0:
                return log[max(0, at - 200):at + 3000]
        return None

    def kill9(self):
        self.proc.kill()
        self.proc.wait()

    def sandboxes_dir(self):
        return os.path.join(self.env["XDG_DATA_HOME"], "twinbox", "sandboxes")

    def cleanup(self):
        """Delete every session (killing sandboxes), stop, remove files."""
        try:
            if self.proc and self.proc.poll() is None:
                c = self.client()
                for s in c.call("session.list")["sessions"]:
                    try:
                        c.call("session.delete", {"session": s["id"]})
                    except RpcError:
                        pass
                c.close()
        except Exception:  # the test may have broken the daemon on purpose
            pass
        self.stop()
        kill_leftover_sandboxes(self.root)
        report = self.sanitizer_report()
        status = self.proc.returncode if self.proc else 0
        shutil.rmtree(self.root, ignore_errors=True)
        if report:
            raise AssertionError("twinboxd's sanitizers reported:\n" + report)
        if status not in (0, -signal.SIGKILL):
            raise AssertionError("twinboxd exited with status %s" % status)


def kill_leftover_sandboxes(root):
    """Kill every process a failed or interrupted test left behind under root.

    A sandbox outlives its daemon by design, and its pid 1 (bwrap's init)
    leads its own session, so neither the daemon's exit nor a process-group
    kill reaches it; its command line names its directory under root, so that
    is how to find it. Killing it ends the whole pid namespace.
    """
    marker = root.encode() + b"/"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if marker in cmdline and int(pid) != os.getpid():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass


class DaemonTest(unittest.TestCase):
    """A test case with a fresh daemon in self.d."""

    def setUp(self):
        self.d = Daemon().start()

    def tearDown(self):
        if not getattr(getattr(self, "_outcome", None), "success", True):
            sys.stderr.write("--- twinboxd log ---\n" + self.d.read_log())
        self.d.cleanup()

    def open_session(self, client=None, **params):
        c = client or self.d.client()
        params.setdefault("project_dir", params.pop("project_dir", self.d.env["HOME"]))
        params.setdefault("engine", ENGINE)
        return c.call("session.open", params)
