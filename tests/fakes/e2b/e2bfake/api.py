# SPDX-License-Identifier: MIT
"""The control plane (api.e2b.app): v1 and v2 sandbox routes with E2B's error bodies."""
import json
import re
import time
import urllib.parse

from .sandboxes import MAX_TIMEOUT_S
from .wire import ApiError

ROUTES = []


def route(method, pattern):
    def wrap(fn):
        ROUTES.append((method, re.compile("^" + pattern + "$"), fn))
        return fn
    return wrap


class Api:
    def __init__(self, fake):
        self.fake = fake
        self.reg = fake.registry

    def dispatch(self, req):
        key = req.headers.get("X-API-KEY")
        if not key or (self.fake.api_key is not None and key != self.fake.api_key):
            raise ApiError(401, "Invalid API key, it must start with 'e2b_' prefix and be valid")
        for method, rx, fn in ROUTES:
            m = rx.match(req.path)
            if m and method == req.method:
                return fn(self, req, *m.groups())
        for method, rx, fn in ROUTES:
            if rx.match(req.path):
                raise ApiError(405, "method %s not allowed on %s" % (req.method, req.path))
        raise ApiError(404, "no route %s %s" % (req.method, req.path))

    # --- helpers ---------------------------------------------------------------
    @staticmethod
    def body(req, required=True):
        if not req.body:
            if required:
                raise ApiError(400, "request body is required")
            return {}
        ct = req.headers.get("Content-Type", "")
        if ct.split(";")[0].strip().lower() != "application/json":
            raise ApiError(400, "request body has unsupported content type '%s'" % ct)
        try:
            b = json.loads(req.body)
        except ValueError:
            raise ApiError(400, "request body is not valid JSON")
        if not isinstance(b, dict):
            raise ApiError(400, "request body must be a JSON object")
        return b

    def sandbox(self, sid):
        s = self.reg.get(sid)
        if not s:
            raise ApiError(404, 'Sandbox "%s" doesn\'t exist or you don\'t have access to it' % sid)
        return s

    @staticmethod
    def timeout(b, default):
        t = b.get("timeout", default)
        if isinstance(t, bool) or not isinstance(t, int):
            raise ApiError(400, "timeout must be an integer number of seconds")
        if t <= 0:
            raise ApiError(400, "timeout must be greater than 0")
        if t > MAX_TIMEOUT_S:
            raise ApiError(400, "timeout cannot be greater than %d hours" % (MAX_TIMEOUT_S // 3600))
        return t

    @staticmethod
    def string_map(b, key):
        v = b.get(key)
        if v is None:
            return {}
        if not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values()):
            raise ApiError(400, "%s must be an object of strings" % key)
        return v

    def create(self, req, v2):
        b = self.body(req)
        tpl = b.get("templateID")
        if not isinstance(tpl, str) or not tpl:
            raise ApiError(400, "templateID is required")
        if tpl in self.fake.missing_templates:
            raise ApiError(404, "template '%s' not found" % tpl)
        timeout = self.timeout(b, 300 if v2 else 15)
        net = b.get("network")
        if net is not None and not isinstance(net, dict):
            raise ApiError(400, "network must be an object")
        proxy = (net or {}).get("egressProxy")
        if proxy is not None and (not isinstance(proxy, dict) or not isinstance(proxy.get("address"), str)):
            raise ApiError(400, "network.egressProxy.address is required")
        auto_pause = b.get("autoPause", False)
        if not isinstance(auto_pause, bool):
            raise ApiError(400, "autoPause must be a boolean")
        allow = b.get("allow_internet_access")
        s = self.reg.create(template=tpl, timeout_s=timeout, metadata=self.string_map(b, "metadata"),
                            env_vars=self.string_map(b, "envVars"), auto_pause=auto_pause,
                            secure=True if v2 else bool(b.get("secure", False)),
                            allow_internet=allow if isinstance(allow, bool) else None,
                            network=net, raw=b)
        return 201, s.created(self.fake.domain)

    def connect(self, req, sid, v2):
        b = self.body(req, required=not v2)
        s = self.sandbox(sid)
        if not v2 and "timeout" not in b:
            raise ApiError(400, "timeout is required")
        t = self.timeout(b, s.timeout_s)
        if s.state == "paused":
            self.reg.resume(s, t, keep_memory=b.get("memory", True) is not False)
            return 201, s.created(self.fake.domain)
        # A running sandbox's end is only ever pushed later.
        s.end_at = max(s.end_at, time.time() + t)
        return 200, s.created(self.fake.domain)

    def listed(self, req, states_default):
        q = req.query
        meta = {}
        if "metadata" in q:
            for k, v in urllib.parse.parse_qsl(q["metadata"][0], keep_blank_values=True):
                meta[urllib.parse.unquote(k)] = urllib.parse.unquote(v)
        states = states_default
        if "state" in q:
            states = [x for v in q["state"] for x in v.split(",") if x]
            for st in states:
                if st not in ("running", "paused"):
                    raise ApiError(400, "invalid state '%s'" % st)
        out = [s for s in self.reg.all()
               if s.state in states and all(s.metadata.get(k) == v for k, v in meta.items())]
        out.sort(key=lambda s: (-s.started_at, s.id))
        return out


@route("POST", r"/v2/sandboxes")
def create_v2(api, req):
    return api.create(req, True)


@route("POST", r"/sandboxes")
def create_v1(api, req):
    return api.create(req, False)


@route("POST", r"/v2/sandboxes/([^/]+)/connect")
def connect_v2(api, req, sid):
    return api.connect(req, sid, True)


@route("POST", r"/sandboxes/([^/]+)/connect")
def connect_v1(api, req, sid):
    return api.connect(req, sid, False)


@route("POST", r"/sandboxes/([^/]+)/resume")
def resume(api, req, sid):
    b = api.body(req, required=False)
    s = api.sandbox(sid)
    if s.state != "paused":
        raise ApiError(409, "Sandbox %s is already running" % s.id)
    if "autoPause" in b:
        s.auto_pause = bool(b["autoPause"])
    api.reg.resume(s, api.timeout(b, 15))
    return 201, s.created(api.fake.domain)


@route("POST", r"/sandboxes/([^/]+)/timeout")
def set_timeout(api, req, sid):
    b = api.body(req)
    s = api.sandbox(sid)
    if "timeout" not in b:
        raise ApiError(400, "timeout is required")
    t = api.timeout(b, 0)
    s.end_at = time.time() + t
    s.timeout_s = t
    return 204, None


@route("POST", r"/sandboxes/([^/]+)/refreshes")
def refresh(api, req, sid):
    b = api.body(req, required=False)
    s = api.sandbox(sid)
    d = b.get("duration", 0)
    if not isinstance(d, int) or d < 0 or d > 3600:
        raise ApiError(400, "duration must be between 0 and 3600")
    s.end_at = max(s.end_at, time.time() + d)
    return 204, None


@route("POST", r"/sandboxes/([^/]+)/pause")
def pause(api, req, sid):
    b = api.body(req, required=False)
    s = api.sandbox(sid)
    if s.state == "paused":
        raise ApiError(409, "Sandbox %s is already paused" % s.id)
    api.reg.pause(s, keep_memory=b.get("memory", True) is not False)
    return 204, None


@route("DELETE", r"/sandboxes/([^/]+)")
def kill(api, req, sid):
    s = api.sandbox(sid)
    api.reg.kill(s)
    return 204, None


@route("GET", r"/sandboxes/([^/]+)")
def info(api, req, sid):
    return 200, api.sandbox(sid).full_detail(api.fake.domain)


@route("GET", r"/sandboxes")
def list_v1(api, req):
    return 200, [s.detail(api.fake.domain) for s in api.listed(req, ["running"])]


@route("GET", r"/v2/sandboxes")
def list_v2(api, req):
    q = req.query
    try:
        limit = int(q.get("limit", ["100"])[0])
    except ValueError:
        raise ApiError(400, "limit must be an integer")
    if limit < 1 or limit > 100:
        raise ApiError(400, "limit must be between 1 and 100")
    limit = min(limit, api.fake.page_size)
    items = api.listed(req, ["running", "paused"])
    start = 0
    if q.get("nextToken", [""])[0]:
        tok = q["nextToken"][0]
        ids = [s.id for s in items]
        if tok not in ids:
            raise ApiError(400, "invalid nextToken")
        start = ids.index(tok)
    page = items[start:start + limit]
    headers = {"X-Total-Running": str(sum(1 for s in api.reg.all() if s.state == "running"))}
    if start + limit < len(items):
        headers["X-Next-Token"] = items[start + limit].id
    return 200, [s.detail(api.fake.domain) for s in page], headers
