# SPDX-License-Identifier: MIT
"""The fake E2B on the wire, with the standard library's HTTP client.

The official SDK proves the common paths (tests/conformance/e2b); these check the
protocol edges a C client meets and the SDK does not show: chunked request bodies,
strict content types, envelopes and end-of-stream, error bodies with `code`, v1
routes, routing by Host, signatures, expiry, deadlines and keepalives.
"""
import base64
import gzip
import hashlib
import http.client
import json
import os
import struct
import sys
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2b"))

from fakeproc import FakeE2B  # noqa: E402


def envelope(obj, flags=0):
    data = json.dumps(obj).encode()
    return struct.pack(">BI", flags, len(data)) + data


def envelopes(data):
    out, i = [], 0
    while i < len(data):
        flags, n = struct.unpack(">BI", data[i:i + 5])
        out.append((flags, json.loads(data[i + 5:i + 5 + n])))
        i += 5 + n
    return out


class FakeWire(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.fake = FakeE2B(domain="e2b.test")

    @classmethod
    def tearDownClass(cls):
        cls.fake.stop()

    def conn(self):
        return http.client.HTTPConnection("127.0.0.1", self.fake.port, timeout=30)

    def api(self, method, path, body=None, key=None, chunked=False, headers=None):
        c = self.conn()
        h = {"X-API-KEY": key or self.fake.api_key}
        h.update(headers or {})
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        if chunked:
            c.request(method, path, body=iter([data[:5], data[5:]]), headers=h, encode_chunked=True)
        else:
            c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        raw = r.read()
        c.close()
        return r, (json.loads(raw) if raw else None)

    def create(self, **kw):
        body = {"templateID": "base", "timeout": 60}
        body.update(kw)
        r, b = self.api("POST", "/v2/sandboxes", body)
        self.assertEqual(r.status, 201, b)
        return b

    def envd(self, sbx, method, path, body=b"", headers=None, token=True):
        c = self.conn()
        h = {"E2b-Sandbox-Id": sbx["sandboxID"], "E2b-Sandbox-Port": "49983"}
        if token and sbx.get("envdAccessToken"):
            h["X-Access-Token"] = sbx["envdAccessToken"]
        h.update(headers or {})
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r, data

    def rpc(self, sbx, rpc, msg, **kw):
        return self.envd(sbx, "POST", "/" + rpc, json.dumps(msg).encode(),
                         {"Content-Type": "application/json"}, **kw)

    def start(self, sbx, cmd, headers=None):
        h = {"Content-Type": "application/connect+json"}
        h.update(headers or {})
        body = envelope({"process": {"cmd": "/bin/bash", "args": ["-l", "-c", cmd]}})
        r, data = self.envd(sbx, "POST", "/process.Process/Start", body, h)
        return r, envelopes(data) if r.status == 200 else data

    # --- control plane ----------------------------------------------------------
    def test_chunked_create_and_error_bodies(self):
        r, b = self.api("POST", "/v2/sandboxes", {"templateID": "base", "timeout": 30}, chunked=True)
        self.assertEqual(r.status, 201)
        self.assertEqual(r.getheader("Content-Type"), "application/json")
        for k in ("templateID", "sandboxID", "clientID", "envdVersion", "envdAccessToken"):
            self.assertIn(k, b)
        self.assertRegex(b["sandboxID"], r"^[a-z0-9]{20}$")
        self.assertEqual(b["domain"], "e2b.test")
        r, e = self.api("GET", "/sandboxes/nosuchsandbox000000")
        self.assertEqual((r.status, e["code"]), (404, 404))
        self.assertIn("doesn't exist", e["message"])
        r, e = self.api("DELETE", "/sandboxes/nosuchsandbox000000")
        self.assertEqual((r.status, e["code"]), (404, 404))
        r, e = self.api("POST", "/v2/sandboxes", {"templateID": "base"}, key="e2b_wrong")
        self.assertEqual((r.status, e["code"]), (401, 401))
        r, e = self.api("POST", "/v2/sandboxes", {"templateID": "base", "timeout": 0})
        self.assertEqual((r.status, e["code"]), (400, 400))
        r, e = self.api("POST", "/v2/sandboxes", {"timeout": 5})
        self.assertEqual(r.status, 400)

    def test_pause_connect_and_v1_routes(self):
        sbx = self.create()
        sid = sbx["sandboxID"]
        r, _ = self.api("POST", "/sandboxes/%s/pause" % sid, {})
        self.assertEqual(r.status, 204)
        r, e = self.api("POST", "/sandboxes/%s/pause" % sid, {})
        self.assertEqual((r.status, e["code"]), (409, 409))
        r, b = self.api("POST", "/v2/sandboxes/%s/connect" % sid, {})
        self.assertEqual(r.status, 201)
        r, b = self.api("POST", "/v2/sandboxes/%s/connect" % sid, {"timeout": 90})
        self.assertEqual(r.status, 200)
        r, e = self.api("POST", "/sandboxes/%s/connect" % sid, {})
        self.assertEqual(r.status, 400)  # v1 connect needs a timeout
        r, b = self.api("POST", "/sandboxes/%s/connect" % sid, {"timeout": 30})
        self.assertEqual(r.status, 200)
        r, e = self.api("POST", "/sandboxes/%s/resume" % sid, {})
        self.assertEqual((r.status, e["code"]), (409, 409))
        r, b = self.api("POST", "/sandboxes", {"templateID": "base"})
        self.assertEqual(r.status, 201)
        self.assertNotIn("envdAccessToken", b)  # v1 without secure
        v1 = [s for s in self.fake.sandboxes() if s["id"] == b["sandboxID"]][0]
        self.assertEqual(v1["timeout_s"], 15)  # v1's default
        r, d = self.api("GET", "/sandboxes/%s" % sid)
        self.assertEqual((r.status, d["state"]), (200, "running"))
        r, _ = self.api("POST", "/sandboxes/%s/timeout" % sid, {"timeout": 10})
        self.assertEqual(r.status, 204)

    def test_list_pages_and_metadata(self):
        tag = "t%d" % time.time_ns()
        ids = {self.create(metadata={"tag": tag, "a b": "c&d"})["sandboxID"] for _ in range(3)}
        self.fake.config(page_size=2)
        try:
            meta = "tag%3D" + tag + "%26a%2520b%3Dc%2526d"
            r, page1 = self.api("GET", "/v2/sandboxes?metadata=" + meta + "&state=running%2Cpaused")
            tok = r.getheader("X-Next-Token")
            self.assertEqual(len(page1), 2)
            self.assertTrue(tok)
            self.assertTrue(r.getheader("X-Total-Running"))
            r, page2 = self.api("GET", "/v2/sandboxes?metadata=" + meta + "&nextToken=" + tok)
            self.assertFalse(r.getheader("X-Next-Token"))
            self.assertEqual({s["sandboxID"] for s in page1 + page2}, ids)
        finally:
            self.fake.config(page_size=100)

    def test_expiry_kills_or_pauses(self):
        killed = self.create(timeout=1)["sandboxID"]
        paused = self.create(timeout=1, autoPause=True)["sandboxID"]
        time.sleep(1.8)
        r, e = self.api("GET", "/sandboxes/%s" % killed)
        self.assertEqual((r.status, e["code"]), (404, 404))
        r, d = self.api("GET", "/sandboxes/%s" % paused)
        self.assertEqual(d["state"], "paused")

    # --- envd ----------------------------------------------------------------------
    def test_envd_auth_and_routing(self):
        sbx = self.create()
        r, _ = self.envd(sbx, "GET", "/health", token=False)
        self.assertEqual(r.status, 204)
        r, d = self.rpc(sbx, "filesystem.Filesystem/Stat", {"path": "/home/user"}, token=False)
        self.assertEqual(r.status, 401)
        r, d = self.rpc(sbx, "filesystem.Filesystem/Stat", {"path": "/home/user"})
        self.assertEqual(r.status, 200)
        e = json.loads(d)["entry"]
        self.assertEqual((e["type"], e["path"], e["name"]), ("FILE_TYPE_DIRECTORY", "/home/user", "user"))
        # The per-sandbox host form, without routing headers.
        c = self.conn()
        c.request("POST", "/filesystem.Filesystem/Stat", body=b'{"path":"~"}',
                  headers={"Host": "49983-%s.e2b.test" % sbx["sandboxID"],
                           "X-Access-Token": sbx["envdAccessToken"], "Content-Type": "application/json"})
        r = c.getresponse()
        self.assertEqual((r.status, json.loads(r.read())["entry"]["path"]), (200, "/home/user"))
        c.close()
        gone = {"sandboxID": "nosuchsandbox000000"}
        r, d = self.envd(gone, "GET", "/health")
        self.assertEqual(r.status, 502)
        self.assertEqual(json.loads(d)["code"], 502)

    def test_unary_errors_and_content_types(self):
        sbx = self.create()
        r, d = self.rpc(sbx, "filesystem.Filesystem/Stat", {"path": "/home/user/missing"})
        self.assertEqual(r.status, 404)
        self.assertEqual(r.getheader("Content-Type"), "application/json")
        self.assertEqual(json.loads(d)["code"], "not_found")
        r, d = self.rpc(sbx, "filesystem.Filesystem/MakeDir", {"path": "/home/user"})
        self.assertEqual((r.status, json.loads(d)["code"]), (409, "already_exists"))
        r, d = self.envd(sbx, "POST", "/filesystem.Filesystem/Stat", b'{"path":"/"}',
                         {"Content-Type": "text/plain"})
        self.assertEqual(r.status, 415)
        r, d = self.envd(sbx, "POST", "/process.Process/Start", envelope({"process": {"cmd": "true"}}),
                         {"Content-Type": "application/json"})
        self.assertEqual(r.status, 415)
        r, d = self.rpc(sbx, "filesystem.Filesystem/WatchDir", {"path": "/"})
        self.assertEqual(r.status, 501)
        r, d = self.rpc(sbx, "nosuch.Service/Call", {})
        self.assertEqual(r.status, 404)
        r, d = self.rpc(sbx, "process.Process/SendSignal", {"process": {"pid": 1}, "signal": "SIGNAL_SIGKILL"})
        self.assertEqual((r.status, json.loads(d)["code"]), (404, "not_found"))

    def test_stream_envelopes(self):
        sbx = self.create(envVars={"FROM_CREATE": "yes"})
        r, evs = self.start(sbx, "echo $FROM_CREATE; echo err >&2; exit 4")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.getheader("Content-Type"), "application/connect+json")
        self.assertEqual(r.getheader("Transfer-Encoding"), "chunked")
        self.assertIn("start", evs[0][1]["event"])
        self.assertEqual(evs[-1], (2, {}))
        data = {}
        for flags, m in evs[1:-2]:
            for k, v in m["event"].get("data", {}).items():
                data[k] = data.get(k, b"") + base64.b64decode(v)
        self.assertEqual(data, {"stdout": b"yes\n", "stderr": b"err\n"})
        self.assertEqual(evs[-2][1]["event"]["end"],
                         {"exited": True, "status": "exit status 4", "exitCode": 4})
        r, evs = self.start(sbx, "true")
        self.assertEqual(evs[-2][1]["event"]["end"], {"exited": True, "status": "exit status 0"})

    def test_stream_errors_end_with_status_200(self):
        sbx = self.create()
        body = envelope({"process": {"cmd": "/bin/true", "cwd": "/home/user/nowhere"}})
        r, data = self.envd(sbx, "POST", "/process.Process/Start", body,
                            {"Content-Type": "application/connect+json"})
        evs = envelopes(data)
        self.assertEqual(r.status, 200)
        self.assertEqual(evs, [(2, {"error": {"code": "invalid_argument",
                                              "message": "cwd '/home/user/nowhere' does not exist"}})])
        r, data = self.envd(sbx, "POST", "/process.Process/Start", b"\x00\x00\x00\x00\x09{}",
                            {"Content-Type": "application/connect+json"})
        self.assertEqual(envelopes(data)[-1][1]["error"]["code"], "invalid_argument")

    def test_deadline_and_keepalive(self):
        sbx = self.create()
        t0 = time.time()
        r, evs = self.start(sbx, "sleep 1.5; echo late; sleep 5",
                            {"Connect-Timeout-Ms": "2500", "Keepalive-Ping-Interval": "1"})
        self.assertLess(time.time() - t0, 5)
        kinds = [list(m.get("event", {"eos": 0}).keys())[0] for _, m in evs]
        self.assertIn("keepalive", kinds)
        self.assertEqual(evs[-1][1]["error"]["code"], "deadline_exceeded")

    def test_hangup_keeps_the_process_and_signal_kills_it(self):
        sbx = self.create()
        c = self.conn()
        c.request("POST", "/process.Process/Start",
                  body=envelope({"process": {"cmd": "/bin/sleep", "args": ["30"]}}),
                  headers={"E2b-Sandbox-Id": sbx["sandboxID"], "X-Access-Token": sbx["envdAccessToken"],
                           "Content-Type": "application/connect+json"})
        r = c.getresponse()
        hdr = r.read(5)
        n = struct.unpack(">BI", hdr)[1]
        pid = json.loads(r.read(n))["event"]["start"]["pid"]
        c.close()
        time.sleep(0.3)
        r, d = self.rpc(sbx, "process.Process/List", {})
        self.assertIn(pid, [p["pid"] for p in json.loads(d)["processes"]])
        r, d = self.rpc(sbx, "process.Process/SendSignal", {"process": {"pid": pid}, "signal": "SIGNAL_SIGKILL"})
        self.assertEqual(r.status, 200)
        time.sleep(0.3)
        r, d = self.rpc(sbx, "process.Process/List", {})
        self.assertNotIn(pid, [p["pid"] for p in json.loads(d)["processes"]])

    def test_pause_freezes_processes_and_resume_thaws_them(self):
        sbx = self.create()
        sid = sbx["sandboxID"]
        c = self.conn()
        c.request("POST", "/process.Process/Start",
                  body=envelope({"process": {"cmd": "/bin/bash", "args": ["-c", "sleep 0.5; echo done > /tmp/mark"]}}),
                  headers={"E2b-Sandbox-Id": sid, "X-Access-Token": sbx["envdAccessToken"],
                           "Content-Type": "application/connect+json"})
        r = c.getresponse()
        self.assertEqual(r.status, 200)
        r.read(5)
        self.api("POST", "/sandboxes/%s/pause" % sid, {})
        time.sleep(1.0)
        self.api("POST", "/v2/sandboxes/%s/connect" % sid, {})
        r, d = self.envd(sbx, "GET", "/files?path=/tmp/mark")
        self.assertEqual(r.status, 404)  # frozen while paused: it has not run on
        time.sleep(1.0)
        r, d = self.envd(sbx, "GET", "/files?path=/tmp/mark")
        self.assertEqual((r.status, d), (200, b"done\n"))
        c.close()

    def test_files_upload_download_signatures(self):
        sbx = self.create()
        tok = sbx["envdAccessToken"]
        r, d = self.envd(sbx, "POST", "/files?path=a/b.txt", b"hello", {"Content-Type": "application/octet-stream"})
        self.assertEqual((r.status, json.loads(d)), (200, [{"name": "b.txt", "type": "file", "path": "/home/user/a/b.txt"}]))
        r, d = self.envd(sbx, "POST", "/files", b"x", {"Content-Type": "application/octet-stream"})
        self.assertEqual(r.status, 400)
        r, d = self.envd(sbx, "POST", "/files?path=x", b"x", {"Content-Type": "text/plain"})
        self.assertEqual(r.status, 400)
        gz = gzip.compress(b"zipped")
        r, d = self.envd(sbx, "POST", "/files?path=/home/user/z.txt", gz,
                         {"Content-Type": "application/octet-stream", "Content-Encoding": "gzip"})
        self.assertEqual(r.status, 200)
        mp = (b"--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"/home/user/m.txt\"\r\n\r\nm1\r\n"
              b"--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"/home/user/m.txt\"\r\n\r\nm2\r\n--XX--\r\n")
        r, d = self.envd(sbx, "POST", "/files", mp, {"Content-Type": "multipart/form-data; boundary=XX"})
        self.assertEqual(r.status, 400)  # two parts, one path
        r, d = self.envd(sbx, "GET", "/files?path=/home/user/z.txt", headers={"Accept-Encoding": "gzip"})
        self.assertEqual(r.getheader("Content-Encoding"), "gzip")
        self.assertEqual(gzip.decompress(d), b"zipped")
        r, d = self.envd(sbx, "GET", "/files?path=/home/user/a", )
        self.assertEqual((r.status, json.loads(d)["code"]), (400, 400))
        r, d = self.envd(sbx, "GET", "/files?path=/home/user/none")
        self.assertEqual((r.status, json.loads(d)["code"]), (404, 404))
        r, d = self.envd(sbx, "GET", "/files?path=a/b.txt", token=False)
        self.assertEqual(r.status, 401)

        def sig(path, op, user, exp=None):
            raw = "%s:%s:%s:%s" % (path, op, user, tok) + (":%d" % exp if exp else "")
            s = "v1_" + base64.b64encode(hashlib.sha256(raw.encode()).digest()).decode().rstrip("=")
            return urllib.parse.quote(s, safe="")
        r, d = self.envd(sbx, "GET", "/files?path=a/b.txt&signature=" + sig("a/b.txt", "read", ""), token=False)
        self.assertEqual((r.status, d), (200, b"hello"))
        r, d = self.envd(sbx, "GET", "/files?path=a/b.txt&username=user&signature=" +
                         sig("a/b.txt", "read", "user"), token=False)
        self.assertEqual(r.status, 200)
        r, d = self.envd(sbx, "GET", "/files?path=a/b.txt&signature=" + sig("a/b.txt", "write", ""), token=False)
        self.assertEqual(r.status, 401)
        old = int(time.time()) - 10
        r, d = self.envd(sbx, "GET", "/files?path=a/b.txt&signature=%s&signature_expiration=%d"
                         % (sig("a/b.txt", "read", "", old), old), token=False)
        self.assertEqual(r.status, 401)
        r, d = self.envd(sbx, "POST", "/files?path=/etc/x", b"x", {"Content-Type": "application/octet-stream"})
        self.assertEqual(r.status, 403)

    def test_faults_and_stats(self):
        sbx = self.create()
        self.fake.faults([{"method": "GET", "path": "^/sandboxes/", "status": 429, "retry_after": 2, "times": 1}])
        r, e = self.api("GET", "/sandboxes/%s" % sbx["sandboxID"])
        self.assertEqual((r.status, r.getheader("Retry-After")), (429, "2"))
        r, e = self.api("GET", "/sandboxes/%s" % sbx["sandboxID"])
        self.assertEqual(r.status, 200)
        self.fake.faults([{"path": "Process/Start", "action": "cut_stream", "after_events": 1}])
        with self.assertRaises((http.client.HTTPException, ConnectionError)):
            self.start(sbx, "echo 1; echo 2")
        self.fake.clear_faults()
        self.assertGreater(self.fake.stats()["requests"], 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
