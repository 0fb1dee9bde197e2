# SPDX-License-Identifier: MIT
"""Harness for twinbox-twind: a twind on a temporary state directory, and clients for it.

Standard library only. Everything talks to 127.0.0.1; routed hosts such as
api.stripe.com are never resolved here: clients hand the name to the gateway
(SOCKS5 domain-name addresses, CONNECT host:port).
"""
import base64
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request
import warnings

warnings.simplefilter("ignore", ResourceWarning)

BUILD = os.environ.get("TBX_BUILD_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", "..", "build-twin"))
TWIND = os.environ.get("TBX_TWIND", os.path.join(BUILD, "twin", "twinbox-twind"))
API_KEY = "twk_test_0123456789abcdef"


class Twind:
    """twinbox-twind on a fresh state directory, with its bound addresses."""

    def __init__(self, routes=None, args=(), root=None):
        self.root = root or tempfile.mkdtemp(prefix="tbx-twin-")
        self.state = os.path.join(self.root, "state")
        self.ready_file = os.path.join(self.root, "ready.json")
        self.log = os.path.join(self.root, "twind.log")
        self.routes = None
        if routes is not None:
            self.routes = os.path.join(self.root, "routes.json")
            with open(self.routes, "w") as f:
                json.dump(routes, f)
        self.args = list(args)
        self.proc = None
        self.ready = None

    def start(self, env=None):
        if os.path.exists(self.ready_file):
            os.unlink(self.ready_file)
        argv = [TWIND, "--state-dir", self.state, "--ready-file", self.ready_file] + self.args
        if self.routes:
            argv += ["--routes", self.routes]
        e = dict(os.environ)
        e["TWINBOX_TWIN_API_KEY"] = API_KEY
        e.setdefault("TWINBOX_LOG_LEVEL", "info")
        e.update(env or {})
        logf = open(self.log, "ab")
        self.proc = subprocess.Popen(argv, env=e, stdout=logf, stderr=logf, stdin=subprocess.DEVNULL)
        logf.close()
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("twind exited early:\n" + self.read_log())
            if os.path.exists(self.ready_file):
                with open(self.ready_file) as f:
                    self.ready = json.load(f)
                return self
            time.sleep(0.02)
        raise RuntimeError("twind was not ready in 20 s:\n" + self.read_log())

    def read_log(self):
        try:
            with open(self.log, "rb") as f:
                return f.read().decode(errors="replace")
        except FileNotFoundError:
            return ""

    def stop(self):
        """SIGTERM; returns the exit status."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode if self.proc else 0

    def sanitizer_report(self):
        log = self.read_log()
        for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
            at = log.find(marker)
            if at >= 0:
                return log[max(0, at - 200):at + 3000]
        return None

    def cleanup(self):
        status = self.stop()
        report = self.sanitizer_report()
        log = self.read_log()
        shutil.rmtree(self.root, ignore_errors=True)
        if report:
            raise AssertionError("twind's sanitizers reported:\n" + report)
        if status != 0:
            raise AssertionError("twind exited with status %s:\n%s" % (status, log[-4000:]))

    # The control plane.
    def api(self, method, path, body=None, key=API_KEY, raw=None, headers=None):
        """(status, parsed JSON or None) of a control-plane call."""
        url = self.ready["control_url"] + path
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(url, data=data, method=method)
        if key is not None:
            req.add_header("X-API-Key", key)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(req, timeout=20) as r:
                text = r.read()
                return r.status, json.loads(text) if text else None
        except urllib.error.HTTPError as e:
            text = e.read()
            return e.code, json.loads(text) if text else None

    def create_twin(self, env="default", **body):
        status, twin = self.api("POST", "/v1/environments/%s/sandboxes" % env, body)
        assert status == 201, (status, twin)
        return twin

    def credential(self, twin):
        status, cred = self.api("POST", "/v1/environments/%s/sandboxes/%s/egress-credential"
                                % (twin["environment_id"], twin["id"]))
        assert status == 200, (status, cred)
        return cred

    def requests_log(self, twin_id, service="stripe", **query):
        qs = "&".join("%s=%s" % kv for kv in query.items())
        status, page = self.api("GET", "/v1/sandboxes/%s/services/%s/veris/requests%s"
                                % (twin_id, service, "?" + qs if qs else ""))
        assert status == 200, (status, page)
        return page


def hostport(address):
    host, port = address.rsplit(":", 1)
    return host, int(port)


def dial(address, timeout=20):
    """A connection to "host:port" or "unix:/path"."""
    if address.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(address[5:])
        return s
    return socket.create_connection(hostport(address), timeout=timeout)


class Credential:
    """An egress credential and the files a client needs (the CA)."""

    def __init__(self, cred, root):
        self.cred = cred
        self.ca_file = os.path.join(root, "ca-%s.pem" % cred["username"])
        with open(self.ca_file, "w") as f:
            f.write(cred["ca_pem"])
        self.cred_file = os.path.join(root, "cred-%s.json" % cred["username"])
        with open(self.cred_file, "w") as f:
            json.dump(cred, f)

    def __getitem__(self, key):
        return self.cred[key]

    def strict_context(self):
        """What Python 3.13 does by default, set explicitly: VERIFY_X509_STRICT."""
        ctx = ssl.create_default_context(cafile=self.ca_file)
        ctx.verify_flags |= ssl.VERIFY_X509_STRICT
        return ctx

    def proxy_url(self):
        return "http://%s:%s@%s" % (self["username"], self["password"], self["connect_address"])


def socks5_connect(cred, host, port, user=None, password=None, timeout=20, via=None):
    """A socket through the gateway's SOCKS5 listener (or via, "unix:/path") to host:port
    (domain-name address)."""
    s = dial(via or cred["socks_address"], timeout)
    u = (user if user is not None else cred["username"]).encode()
    p = (password if password is not None else cred["password"]).encode()
    s.sendall(b"\x05\x01\x02")
    if recv_exact(s, 2) != b"\x05\x02":
        raise ConnectionError("no username/password method")
    s.sendall(b"\x01" + bytes([len(u)]) + u + bytes([len(p)]) + p)
    if recv_exact(s, 2) != b"\x01\x00":
        s.close()
        raise PermissionError("SOCKS5 credentials refused")
    name = host.encode()
    s.sendall(b"\x05\x01\x00\x03" + bytes([len(name)]) + name + port.to_bytes(2, "big"))
    reply = recv_exact(s, 10)
    if reply[1] != 0:
        s.close()
        raise ConnectionRefusedError("SOCKS5 reply %d" % reply[1])
    return s


def connect_tunnel(cred, host, port, user=None, password=None, timeout=20, via=None):
    """A socket through the gateway's CONNECT listener (or via); raises with the status on
    refusal."""
    s = dial(via or cred["connect_address"], timeout)
    token = base64.b64encode(("%s:%s" % (user if user is not None else cred["username"],
                                          password if password is not None else cred["password"])
                              ).encode()).decode()
    s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\nProxy-Authorization: Basic %s\r\n\r\n"
               % (host, port, host, port, token)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        if not chunk:
            raise ConnectionError("gateway closed during CONNECT")
        head += chunk
    status = int(head.split(b" ", 2)[1])
    if status != 200:
        s.close()
        raise ConnectionRefusedError("CONNECT %d" % status)
    return s


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed after %d of %d bytes" % (len(data), n))
        data += chunk
    return data


def http_over(sock, method, path, host, body=None, headers=None):
    """One HTTP/1.1 request on an open (TLS) socket; returns (status, headers, body)."""
    import http.client

    class Conn(http.client.HTTPConnection):
        def connect(self):
            self.sock = sock

    conn = Conn(host)
    h = {"Host": host}
    h.update(headers or {})
    conn.request(method, path, body=body, headers=h)
    r = conn.getresponse()
    data = r.read()
    return r.status, dict(r.getheaders()), data


class TwinTestCase(unittest.TestCase):
    """A twind per test class; tests make twins in it."""

    routes = None
    args = ()

    @classmethod
    def setUpClass(cls):
        cls.twind = Twind(routes=cls.routes, args=cls.args).start()

    @classmethod
    def tearDownClass(cls):
        cls.twind.cleanup()

    def new_credential(self, env="default", **body):
        twin = self.twind.create_twin(env, **body)
        return twin, Credential(self.twind.credential(twin), self.twind.root)
