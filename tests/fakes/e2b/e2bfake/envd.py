# SPDX-License-Identifier: MIT
"""envd behind E2B's edge proxy: routing by E2b-Sandbox-Id (or Host), auth, and dispatch."""
import base64
import binascii
import hmac
import json
import re

from . import filesystem, files, process
from .jail import USERS
from .wire import CONNECT_HTTP, ConnectError, read_envelopes

ENVD_PORT = 49983
HOST_RX = re.compile(r"^(\d+)-([a-z0-9]+)\.")
SERVICES = {"process.Process": process, "filesystem.Filesystem": filesystem}


def target(req):
    """(sandbox id, port) the request is for, or None when it is an API request."""
    sid = req.headers.get("E2b-Sandbox-Id")
    if sid:
        try:
            port = int(req.headers.get("E2b-Sandbox-Port") or ENVD_PORT)
        except ValueError:
            port = -1
        return sid, port
    m = HOST_RX.match(req.headers.get("Host", ""))
    if m:
        return m.group(2), int(m.group(1))
    return None


def _connect_error(req, err):
    req.reply_json(CONNECT_HTTP.get(err.code, 500), {"code": err.code, "message": err.message})


class Envd:
    def __init__(self, fake):
        self.fake = fake

    def dispatch(self, req, sid, port):
        fake = self.fake
        if fake.api_key and (req.headers.get("X-API-KEY") or fake.api_key.encode() in req.raw_head + req.body):
            fake.note_leak(req)
        s = fake.registry.get(sid)
        if not s or s.state != "running":
            return req.reply_json(502, {"sandboxId": sid, "message": "The sandbox was not found",
                                        "code": 502})
        if port != ENVD_PORT:
            return req.reply_json(502, {"sandboxId": sid, "port": port, "code": 502,
                                        "message": "The sandbox is running but port is not open"})
        if req.path == "/health" and req.method == "GET":
            return req.reply(204, {}, b"")
        if req.path == "/files":
            return self.files(req, s)
        if s.token and not hmac.compare_digest(req.headers.get("X-Access-Token") or "", s.token):
            return req.reply_json(401, {"code": 401, "message": "unauthorized access, please provide a "
                                        "valid access token or method signing if supported"})
        if req.path == "/envs" and req.method == "GET":
            return req.reply_json(200, s.env_vars)
        parts = req.path.strip("/").split("/")
        if len(parts) != 2 or parts[0] not in SERVICES:
            return req.reply(404, {"Content-Type": "text/plain; charset=utf-8"}, b"404 page not found\n")
        svc, method = SERVICES[parts[0]], parts[1]
        if req.method != "POST":
            return req.reply(405, {"Allow": "POST", "Content-Type": "text/plain"}, b"method not allowed\n")
        if method in getattr(svc, "STREAMING", {}):
            return self.streaming(req, s, svc.STREAMING[method])
        if method in svc.UNARY:
            return self.unary(req, s, svc.UNARY[method])
        return _connect_error(req, ConnectError("unimplemented", "%s is not implemented" % req.path))

    @staticmethod
    def user(req):
        auth = req.headers.get("Authorization")
        if not auth:
            return "user"
        scheme, _, value = auth.partition(" ")
        if scheme.lower() != "basic":
            raise ConnectError("unauthenticated", "unsupported authorization scheme")
        try:
            name = base64.b64decode(value, validate=True).decode().split(":", 1)[0]
        except (binascii.Error, UnicodeDecodeError):
            raise ConnectError("unauthenticated", "malformed basic authorization")
        if name not in USERS:
            raise ConnectError("unauthenticated", "invalid user: '%s'" % name)
        return name

    def unary(self, req, s, fn):
        ct = req.headers.get("Content-Type", "")
        if ct.split(";")[0].strip().lower() != "application/json":
            return req.reply(415, {"Accept-Post": "application/json, application/proto"}, b"")
        try:
            user = self.user(req)
            try:
                msg = json.loads(req.body or b"{}")
            except ValueError:
                raise ConnectError("invalid_argument", "request body is not valid JSON")
            if not isinstance(msg, dict):
                raise ConnectError("invalid_argument", "request body must be a JSON object")
            resp = fn(s, user, msg)
        except ConnectError as e:
            return _connect_error(req, e)
        return req.reply_json(200, resp)

    def streaming(self, req, s, fn):
        ct = req.headers.get("Content-Type", "")
        if ct.split(";")[0].strip().lower() != "application/connect+json":
            return req.reply(415, {"Accept-Post": "application/connect+json, application/connect+proto"}, b"")
        try:
            user = self.user(req)
            try:
                msgs = read_envelopes(req.body)
            except ValueError as e:
                raise ConnectError("invalid_argument", "malformed request envelope: %s" % e)
            if len(msgs) != 1 or msgs[0][0] != 0 or not isinstance(msgs[0][1], dict):
                raise ConnectError("invalid_argument", "a server-streaming call takes exactly one message")
        except ConnectError as e:
            from .wire import end_stream
            stream = req.open_stream()
            stream.send(end_stream(e))
            stream.finish()
            return
        fn(s, user, msgs[0][1], req)

    def files(self, req, s):
        try:
            if req.method == "GET":
                status, headers, data = files.download(s, req)
                return req.reply(status, headers, data)
            if req.method == "POST":
                status, body = files.upload(s, req)
                return req.reply_json(status, body)
            return req.reply(405, {"Allow": "GET, POST", "Content-Type": "text/plain"}, b"method not allowed\n")
        except files.FilesError as e:
            return req.reply_json(e.status, {"code": e.status, "message": e.message})
