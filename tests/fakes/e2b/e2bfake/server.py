# SPDX-License-Identifier: MIT
"""The fake's HTTP/1.1 server: one port for the API, envd and the /_fake admin routes."""
import http.server
import json
import re
import socket
import socketserver
import struct
import threading
import time
import urllib.parse

from .api import Api
from .envd import Envd, target
from .faults import Faults
from .sandboxes import Registry
from .wire import ApiError

MAX_BODY = 300 << 20
SANDBOX_IN_PATH = re.compile(r"^/(?:v2/)?sandboxes/([^/]+)")


class StreamCut(Exception):
    pass


class Stream:
    """A chunked response body; faults may slow it down or cut it."""

    def __init__(self, req):
        self.req = req
        self.sent = 0
        self.rule = req.rule if req.rule and req.rule.get("action") in ("cut_stream", "slow_stream") else None

    def send(self, data):
        from .process import ClientGone
        r = self.rule
        if r and r.get("action") == "slow_stream":
            time.sleep(r.get("delay_ms", 200) / 1000.0)
        if r and r.get("action") == "cut_stream" and self.sent >= r.get("after_events", 1):
            self.req.abort()
            raise ClientGone()
        try:
            self.req.handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.req.handler.wfile.flush()
        except OSError:
            self.req.handler.close_connection = True
            raise ClientGone()
        self.sent += 1

    def finish(self):
        from .process import ClientGone
        try:
            self.req.handler.wfile.write(b"0\r\n\r\n")
            self.req.handler.wfile.flush()
        except OSError:
            self.req.handler.close_connection = True
            raise ClientGone()


class Request:
    def __init__(self, handler, body):
        self.handler = handler
        self.method = handler.command
        u = urllib.parse.urlsplit(handler.path)
        self.path = u.path
        self.query = urllib.parse.parse_qs(u.query, keep_blank_values=True)
        self.headers = handler.headers
        self.raw_head = handler.raw_requestline + bytes(handler.headers)
        self.body = body
        self.rule = None
        self.status = None

    def header_int(self, name, default):
        try:
            return int(self.headers.get(name, default))
        except ValueError:
            return default

    def reply(self, status, headers, body):
        self.status = status
        h = self.handler
        r = self.rule
        if r and r.get("action") == "drop_answer":
            # The request was carried out; its answer is lost on the way back.
            self.abort()
            return
        if r and r.get("action") == "truncate" and body:
            h.send_response(status)
            for k, v in headers.items():
                h.send_header(k, v)
            h.send_header("Content-Length", str(len(body) + 100))
            h.end_headers()
            h.wfile.write(body[: max(1, len(body) // 2)])
            h.wfile.flush()
            self.abort()
            return
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if body and self.method != "HEAD":
            h.wfile.write(body)

    def reply_json(self, status, obj, headers=None):
        hdrs = {"Content-Type": "application/json"}
        hdrs.update(headers or {})
        self.reply(status, hdrs, json.dumps(obj).encode() if obj is not None else b"")

    def open_stream(self):
        self.status = 200
        h = self.handler
        h.send_response(200)
        h.send_header("Content-Type", "application/connect+json")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        h.wfile.flush()
        return Stream(self)

    def abort(self):
        """Close with a TCP reset: no answer, or a cut one."""
        h = self.handler
        try:
            h.wfile.flush()
        except OSError:
            pass
        try:
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.connection.close()
        except OSError:
            pass
        h.close_connection = True


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "e2b-fake/1"
    sys_version = ""

    def setup(self):
        super().setup()
        self.server.fake.count("connections")

    def log_message(self, fmt, *args):
        if self.server.fake.verbose:
            super().log_message(fmt, *args)

    def read_body(self):
        te = self.headers.get("Transfer-Encoding", "").lower()
        if "chunked" in te:
            out = bytearray()
            while True:
                line = self.rfile.readline(1024)
                if not line:
                    raise ValueError("connection closed inside a chunked body")
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                if len(out) + size > MAX_BODY:
                    raise ValueError("body too large")
                out += self.rfile.read(size)
                self.rfile.readline(1024)
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise ValueError("body too large")
        return self.rfile.read(n) if n else b""

    def handle_any(self):
        fake = self.server.fake
        try:
            body = self.read_body()
        except ValueError as e:
            self.send_error(400, str(e))
            self.close_connection = True
            return
        req = Request(self, body)
        if req.path.startswith("/_fake/"):
            return fake.admin(req)
        fake.count("requests")
        if fake.faults.latency_ms:
            time.sleep(fake.faults.latency_ms / 1000.0)
        rule = fake.faults.take(req.method, req.path)
        req.rule = rule
        tgt = target(req)
        try:
            if rule:
                if rule.get("delay_ms") and not rule.get("action"):
                    time.sleep(rule["delay_ms"] / 1000.0)
                if rule.get("action") == "vanish":
                    m = SANDBOX_IN_PATH.match(req.path)
                    sid = tgt[0] if tgt else (m.group(1) if m else None)
                    s = fake.registry.get(sid) if sid else None
                    if s:
                        fake.registry.vanish(s)
                elif rule.get("action") == "reset":
                    return req.abort()
                elif "status" in rule:
                    return self.canned(req, rule)
            if tgt:
                fake.envd.dispatch(req, *tgt)
            else:
                try:
                    res = fake.api.dispatch(req)
                except ApiError as e:
                    return req.reply_json(e.status, e.body())
                status, obj = res[0], res[1]
                headers = res[2] if len(res) > 2 else {}
                if status == 204:
                    req.reply(204, headers, b"")
                else:
                    req.reply_json(status, obj, headers)
        finally:
            fake.log(req, tgt)

    def canned(self, req, rule):
        headers = {}
        body = rule.get("body")
        if body is None:
            body = {"code": rule["status"], "message": "injected fault: HTTP %d" % rule["status"]}
        if not isinstance(body, (str, bytes)):
            body = json.dumps(body)
            headers["Content-Type"] = "application/json"
        if isinstance(body, str):
            body = body.encode()
        if rule.get("content_type"):
            headers["Content-Type"] = rule["content_type"]
        if "retry_after" in rule:
            headers["Retry-After"] = str(rule["retry_after"])
        req.reply(rule["status"], headers, body)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64


class Fake:
    def __init__(self, root, api_key=None, domain=None, verbose=False):
        self.api_key = api_key
        self.domain = domain
        self.verbose = verbose
        self.registry = Registry(root)
        self.faults = Faults()
        self.api = Api(self)
        self.envd = Envd(self)
        self.page_size = 100
        self.missing_templates = set()
        self.lock = threading.Lock()
        self.stats = {"requests": 0, "connections": 0, "api_key_leaks": 0, "routes": {}}
        self.recent = []

    def count(self, key):
        with self.lock:
            self.stats[key] += 1

    def note_leak(self, req):
        with self.lock:
            self.stats["api_key_leaks"] += 1

    def log(self, req, tgt):
        key = "%s %s%s" % (req.method, "envd:" if tgt else "", req.path)
        with self.lock:
            self.stats["routes"][key] = self.stats["routes"].get(key, 0) + 1
            self.recent.append({"method": req.method, "path": req.path, "status": req.status,
                                "sandbox": tgt[0] if tgt else None, "t": time.time()})
            del self.recent[:-500]

    def serve(self, host, port):
        self.httpd = Server((host, port), Handler)
        self.httpd.fake = self
        return self.httpd.server_address[1]

    def shutdown(self):
        self.registry.shutdown()
        self.httpd.shutdown()

    # --- the admin routes tests use ----------------------------------------------
    def admin(self, req):
        p = req.path[len("/_fake"):]
        try:
            body = json.loads(req.body) if req.body else {}
        except ValueError:
            return req.reply_json(400, {"message": "admin body is not JSON"})
        if p == "/faults" and req.method == "POST":
            self.faults.configure(body)
            return req.reply_json(200, {"ok": True})
        if p == "/faults" and req.method == "GET":
            return req.reply_json(200, {"latency_ms": self.faults.latency_ms, "rules": self.faults.report()})
        if p == "/faults" and req.method == "DELETE":
            self.faults.configure({})
            return req.reply_json(200, {"ok": True})
        if p == "/config" and req.method == "POST":
            if "page_size" in body:
                self.page_size = int(body["page_size"])
            if "missing_templates" in body:
                self.missing_templates = set(body["missing_templates"])
            return req.reply_json(200, {"ok": True})
        if p == "/stats" and req.method == "GET":
            with self.lock:
                out = json.loads(json.dumps(self.stats))
                out["recent"] = list(self.recent)
            return req.reply_json(200, out)
        if p == "/sandboxes" and req.method == "GET":
            out = []
            for s in self.registry.all():
                out.append({"id": s.id, "state": s.state, "template": s.template,
                            "metadata": s.metadata, "env_vars": s.env_vars,
                            "auto_pause": s.auto_pause, "timeout_s": s.timeout_s,
                            "end_in_s": s.end_at - time.time(), "dir": s.dir,
                            "allow_internet": s.allow_internet, "network": s.network,
                            "request": s.raw_request, "processes": len(s.processes)})
            return req.reply_json(200, out)
        parts = p.strip("/").split("/")
        if len(parts) == 3 and parts[0] == "sandboxes" and req.method == "POST":
            s = self.registry.get(parts[1])
            if not s:
                return req.reply_json(404, {"message": "no sandbox %s" % parts[1]})
            if parts[2] == "vanish":
                self.registry.vanish(s)
            elif parts[2] == "expire":
                self.registry.expire(s)
            else:
                return req.reply_json(404, {"message": "unknown action"})
            return req.reply_json(200, {"ok": True})
        return req.reply_json(404, {"message": "unknown admin route %s" % p})
