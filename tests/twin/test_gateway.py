# SPDX-License-Identifier: MIT
"""The gateway: policy, canary, the REST twin, upstream routes, and bad input of every kind."""
import base64
import http.server
import json
import socket
import ssl
import threading
import time
import unittest

from twind import (Credential, Twind, TwinTestCase, connect_tunnel, hostport, http_over,
                   recv_exact, socks5_connect)


class Upstream(http.server.BaseHTTPRequestHandler):
    """The user's own fake: answers everything with what it received."""

    protocol_version = "HTTP/1.1"

    def answer(self):
        if self.path.startswith("/slow"):
            time.sleep(2)
        n = int(self.headers.get("Content-Length") or 0)
        body = json.dumps({"fake": True, "method": self.command, "path": self.path,
                           "forwarded_host": self.headers.get("X-Forwarded-Host"),
                           "authorization": self.headers.get("Authorization"),
                           "body": self.rfile.read(n).decode()}).encode()
        self.send_response(418 if self.path.startswith("/teapot") else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Fake", "yes")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = answer

    def log_message(self, *args):
        pass


class Echo(threading.Thread):
    """A TCP echo server on 127.0.0.1: the "internet" an open twin may tunnel to."""

    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]

    def run(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    @staticmethod
    def serve(c):
        with c:
            while True:
                data = c.recv(65536)
                if not data:
                    return
                c.sendall(data)


class Gateway(TwinTestCase):
    args = ("--handshake-timeout", "1", "--idle-timeout", "2")

    @classmethod
    def setUpClass(cls):
        cls.fake = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
        threading.Thread(target=cls.fake.serve_forever, daemon=True).start()
        cls.echo = Echo()
        cls.echo.start()
        cls.routes = {
            "policy": "strict",
            "services": {
                "stripe": {"twin": "stripe", "hosts": ["api.stripe.com"]},
                "github": {"twin": "rest", "hosts": ["api.github.com"]},
                "fake": {"upstream": "http://fake-upstream.test:%d/" % cls.fake.server_port,
                         "hosts": ["api.fake.test"]},
            },
            "environments": {"default": ["stripe", "github", "fake"], "pay": ["stripe"]},
            # Test-only resolver override: never real DNS.
            "resolve": {"fake-upstream.test": "127.0.0.1", "open.example.test": "127.0.0.1"},
        }
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.fake.shutdown()
        cls.echo.sock.close()

    def setUp(self):
        self.twin, self.cred = self.new_credential()

    def tls(self, host, via="socks", cred=None):
        cred = cred or self.cred
        raw = (socks5_connect if via == "socks" else connect_tunnel)(cred, host, 443)
        return cred.strict_context().wrap_socket(raw, server_hostname=host)

    def still_serving(self):
        """The gateway answers the canary, through both listeners."""
        for via in ("socks", "connect"):
            with self.tls(self.cred["canary_host"], via) as s:
                status, _, body = http_over(s, "GET", "/", self.cred["canary_host"])
                self.assertEqual((status, json.loads(body)["veris_sandbox_id"]), (200, self.twin["id"]))

    def raw(self, listener):
        return socket.create_connection(hostport(self.cred[listener + "_address"]), timeout=10)

    def closed(self, s):
        """True once the gateway has closed s (reading any reply first)."""
        s.settimeout(10)
        try:
            while s.recv(4096):
                pass
        except (ConnectionError, socket.timeout, OSError):
            pass
        return True

    # --- canary and policy ---

    def test_canary_names_the_twin_of_the_credential(self):
        other, other_cred = self.new_credential("pay")
        for cred, twin in ((self.cred, self.twin), (other_cred, other)):
            with self.tls(cred["canary_host"], "connect", cred) as s:
                _, _, body = http_over(s, "GET", "/", cred["canary_host"])
                self.assertEqual(json.loads(body)["veris_sandbox_id"], twin["id"])

    def test_strict_refuses_unrouted(self):
        with self.assertRaises(ConnectionRefusedError) as e:
            socks5_connect(self.cred, "example.com", 443)
        self.assertIn("reply 2", str(e.exception))
        with self.assertRaises(ConnectionRefusedError) as e:
            connect_tunnel(self.cred, "open.example.test", self.echo.port)
        self.assertIn("403", str(e.exception))
        # A host routed in the routes file but not in this twin's environment is not routed.
        pay, pay_cred = self.new_credential("pay")
        with self.assertRaises(ConnectionRefusedError):
            connect_tunnel(pay_cred, "api.github.com", 443)

    def test_open_policy_tunnels(self):
        twin, cred = self.new_credential(egress_policy="open")
        for via in (socks5_connect, connect_tunnel):
            with via(cred, "open.example.test", self.echo.port) as s:
                s.sendall(b"hello through the tunnel")
                self.assertEqual(recv_exact(s, 24), b"hello through the tunnel")
        # Routed hosts are still the twin's under open egress.
        with cred.strict_context().wrap_socket(socks5_connect(cred, "api.stripe.com", 443),
                                               server_hostname="api.stripe.com") as s:
            status, _, _ = http_over(s, "GET", "/v1/customers", "api.stripe.com",
                                     headers={"Authorization": "Bearer sk_test_1"})
            self.assertEqual(status, 200)
        # Loopback by address (not through the routes file's override) stays closed.
        with self.assertRaises(ConnectionRefusedError):
            connect_tunnel(cred, "127.0.0.1", self.echo.port)

    def test_udp_associate_refused(self):
        s = self.raw("socks")
        u, p = self.cred["username"].encode(), self.cred["password"].encode()
        s.sendall(b"\x05\x01\x02")
        recv_exact(s, 2)
        s.sendall(b"\x01" + bytes([len(u)]) + u + bytes([len(p)]) + p)
        recv_exact(s, 2)
        s.sendall(b"\x05\x03\x00\x01\x00\x00\x00\x00\x00\x00")
        self.assertEqual(recv_exact(s, 2)[1], 7)
        self.assertTrue(self.closed(s))
        self.assertIn("UDP ASSOCIATE refused", self.twind.read_log())

    # --- the other twins ---

    def test_rest_twin(self):
        with self.tls("api.github.com") as s:
            def call(method, path, body=None):
                status, _, data = http_over(s, method, path, "api.github.com",
                                            body=json.dumps(body) if body is not None else None,
                                            headers={"Content-Type": "application/json"})
                return status, json.loads(data) if data else None

            status, repo = call("POST", "/repos", {"name": "twinbox", "stars": 1})
            self.assertEqual(status, 201)
            rid = repo["id"]
            self.assertEqual(call("POST", "/repos", {"id": 7, "name": "seven"})[1]["id"], 7)
            self.assertEqual(call("POST", "/repos", {"id": 7})[0], 409)
            status, repos = call("GET", "/repos")
            self.assertEqual([r["name"] for r in repos], ["twinbox", "seven"])
            self.assertEqual(call("GET", "/repos/" + rid)[1]["name"], "twinbox")
            status, patched = call("PATCH", "/repos/" + rid, {"stars": 2, "name": None})
            self.assertEqual((status, patched["stars"], "name" in patched), (200, 2, False))
            self.assertEqual(call("PUT", "/repos/" + rid, {"name": "again"})[1], {"name": "again", "id": rid})
            self.assertEqual(call("DELETE", "/repos/" + rid)[0], 204)
            self.assertEqual(call("GET", "/repos/" + rid)[0], 404)
            self.assertEqual(call("GET", "/users")[1], [])
        log = self.twind.requests_log(self.twin["id"], service="github")["requests"]
        self.assertEqual(len(log), 10)
        self.assertEqual(log[0]["host"], "api.github.com")

    def test_upstream_route(self):
        with self.tls("api.fake.test", "connect") as s:
            status, headers, body = http_over(s, "POST", "/v1/things?x=1", "api.fake.test", body="a=b",
                                              headers={"Authorization": "Bearer secret-token",
                                                       "Content-Type": "application/x-www-form-urlencoded"})
            got = json.loads(body)
            self.assertEqual(status, 200)
            self.assertEqual((got["method"], got["path"], got["body"], got["forwarded_host"]),
                             ("POST", "/v1/things?x=1", "a=b", "api.fake.test"))
            self.assertEqual(got["authorization"], "Bearer secret-token")
            self.assertEqual(headers["X-Fake"], "yes")
            status, _, _ = http_over(s, "GET", "/teapot", "api.fake.test")
            self.assertEqual(status, 418)
        log = self.twind.requests_log(self.twin["id"], service="fake")["requests"]
        self.assertEqual([(e["method"], e["path"], e["query"], e["status"], e["tier"]) for e in log],
                         [("POST", "/v1/things", "x=1", 200, "upstream"),
                          ("GET", "/teapot", None, 418, "upstream")])
        self.assertNotIn("secret-token", json.dumps(log))

    def test_client_leaving_before_the_upstream_answers(self):
        s = self.tls("api.fake.test")
        s.sendall(b"GET /slow HTTP/1.1\r\nHost: api.fake.test\r\n\r\n")
        time.sleep(0.3)
        s.close()
        deadline = time.time() + 10
        while time.time() < deadline:
            log = self.twind.requests_log(self.twin["id"], service="fake")["requests"]
            if log:
                break
            time.sleep(0.1)
        self.assertLess(time.time() - deadline + 10, 5)
        # Reading pauses while a request is with its twin, so the answer is logged
        # (the twin did answer) and written to a client that is gone: once.
        self.assertEqual([(e["path"], e["status"]) for e in log], [("/slow", 200)])
        time.sleep(0.5)
        self.assertEqual(len(self.twind.requests_log(self.twin["id"], service="fake")["requests"]), 1)
        self.still_serving()

    def test_plain_http_inside_a_tunnel(self):
        with socks5_connect(self.cred, "api.stripe.com", 80) as s:
            status, _, body = http_over(s, "GET", "/v1/customers", "api.stripe.com",
                                        headers={"Authorization": "Bearer sk_test_plain"})
            self.assertEqual((status, json.loads(body)["object"]), (200, "list"))

    def test_chunked_request_body(self):
        with self.tls("api.stripe.com") as s:
            body = b"email=chunked%40example.com&metadata[k]=v"
            s.sendall(b"POST /v1/customers HTTP/1.1\r\nHost: api.stripe.com\r\n"
                      b"Authorization: Bearer sk_test_c\r\nTransfer-Encoding: chunked\r\n"
                      b"Content-Type: application/x-www-form-urlencoded\r\n\r\n"
                      + b"%x\r\n" % 10 + body[:10] + b"\r\n"
                      + b"%x;ext=1\r\n" % (len(body) - 10) + body[10:] + b"\r\n0\r\nX-Trailer: t\r\n\r\n")
            head = b""
            while b"\r\n\r\n" not in head:
                head += s.recv(1)
            length = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0]
                         .split(b":")[1])
            cus = json.loads(recv_exact(s, length))
            self.assertEqual((cus["email"], cus["metadata"]), ("chunked@example.com", {"k": "v"}))

    # --- bad input: each connection ends with a logged reason, the rest go on ---

    def test_garbage_on_both_listeners(self):
        for listener, data, reason in (
                ("socks", b"GET / HTTP/1.1\r\n\r\n", "not a SOCKS5 greeting"),
                ("socks", b"\x04\x01\x00\x50\x7f\x00\x00\x01user\x00", "SOCKS4 is not supported"),
                ("socks", b"\x05\x00", "offers no methods"),
                ("socks", b"\x05\x01\x00", "offers no username/password"),
                ("socks", b"\x05\x01\x02" + b"\x01" * 2000, "oversized SOCKS5 handshake"),
                ("connect", b"NOT A REQUEST\r\n\r\n", "malformed CONNECT request"),
                ("connect", b"GET http://api.stripe.com/ HTTP/1.1\r\nHost: x\r\n\r\n",
                 "only CONNECT is served"),
                ("connect", b"CONNECT api.stripe.com HTTP/1.1\r\n\r\n", "malformed CONNECT authority"),
                ("connect", b"CONNECT api.stripe.com:443 HTTP/1.1\r\n\r\n", "no Proxy-Authorization"),
                ("connect", b"CONNECT a:1 HTTP/1.1\r\nX: " + b"y" * 20000 + b"\r\n\r\n",
                 "header section too large"),
                ("connect", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64,
                 "malformed CONNECT request")):
            with self.subTest(listener=listener, reason=reason):
                s = self.raw(listener)
                try:
                    s.sendall(data)
                except ConnectionError:
                    pass
                self.assertTrue(self.closed(s))
                s.close()
                deadline = time.time() + 5
                while reason not in self.twind.read_log() and time.time() < deadline:
                    time.sleep(0.05)
                self.assertIn(reason, self.twind.read_log())
        self.still_serving()

    def test_connect_statuses(self):
        for data, status in ((b"CONNECT a:1 HTTP/1.1\r\nX: " + b"y" * 20000 + b"\r\n\r\n", b"431"),
                             (b"CONNECT api.stripe.com:443 HTTP/1.1\r\n\r\n", b"407"),
                             (b"CONNECT api.stripe.com:443 HTTP/1.1\r\nProxy-Authorization: Basic "
                              + base64.b64encode(b"sbx_x:y") + b"\r\n\r\n", b"407"),
                             (b"BREW / HTTP/1.1\r\n\r\n", b"405"),
                             (b"CONNECT a:1 HTTP/3.0\r\n\r\n", b"400")):
            with self.subTest(status=status):
                s = self.raw("connect")
                s.sendall(data)
                self.assertTrue(s.recv(100).startswith(b"HTTP/1.1 " + status))
                s.close()

    def test_tls_garbage_and_bad_http_inside_tls(self):
        # Not TLS at all after the tunnel opened: it is read as HTTP, and refused as such.
        s = socks5_connect(self.cred, "api.stripe.com", 443)
        s.sendall(b"\x17\x03\x03\x00\x05hello\r\n\r\n")
        self.assertTrue(self.closed(s))
        # A TLS record header with garbage after it.
        s = socks5_connect(self.cred, "api.stripe.com", 443)
        s.sendall(b"\x16\x03\x01\x00\x30" + b"\xff" * 48)
        self.assertTrue(self.closed(s))
        # A client that does not trust the leaf aborts the handshake.
        s = socks5_connect(self.cred, "api.stripe.com", 443)
        with self.assertRaises(ssl.SSLError):
            ssl.create_default_context().wrap_socket(s, server_hostname="api.stripe.com")
        # Inside TLS: malformed HTTP, an oversized header, smuggling-shaped framing.
        for data, status in ((b"GARBAGE\r\n\r\n", 400),
                             (b"GET / HTTP/1.1\r\nHost: a\r\nX: " + b"z" * 70000 + b"\r\n\r\n", 431),
                             (b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n"
                              b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
                             (b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
                             (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400)):
            with self.subTest(status=status):
                with self.tls("api.stripe.com") as t:
                    t.sendall(data)
                    reply = t.recv(200)
                    self.assertTrue(reply.startswith(b"HTTP/1.1 %d" % status), reply)
                    self.assertTrue(self.closed(t))
        log = self.twind.read_log()
        self.assertIn("TLS error", log)
        self.assertIn("malformed request: header section too large", log)
        self.still_serving()

    def test_hanging_clients_time_out(self):
        started = time.time()
        hung = [self.raw("socks"), self.raw("connect")]
        hung[0].sendall(b"\x05\x01")  # half a greeting
        hung[1].sendall(b"CONNECT api.stripe.com:443 HTTP/1.1\r\n")  # half a head
        in_tunnel = socks5_connect(self.cred, "api.stripe.com", 443)  # never starts TLS
        self.still_serving()  # others are served meanwhile
        for s in hung + [in_tunnel]:
            self.assertTrue(self.closed(s))
        self.assertLess(time.time() - started, 9)
        # An idle keep-alive connection is closed after --idle-timeout.
        with self.tls("api.stripe.com") as t:
            status, _, _ = http_over(t, "GET", "/v1/customers", "api.stripe.com",
                                     headers={"Authorization": "Bearer sk_test_1"})
            self.assertEqual(status, 200)
            self.assertTrue(self.closed(t))
        log = self.twind.read_log()
        self.assertIn("handshake timed out", log)
        self.assertIn("timed out waiting for the client to start TLS or HTTP", log)
        self.assertIn("idle timeout", log)

    def test_many_connections_at_once(self):
        socks = [self.tls("api.stripe.com") for _ in range(20)]
        for i, s in enumerate(socks):
            status, _, _ = http_over(s, "POST", "/v1/customers", "api.stripe.com",
                                     body="email=m%d@example.com" % i,
                                     headers={"Authorization": "Bearer sk_test_m",
                                              "Content-Type": "application/x-www-form-urlencoded"})
            self.assertEqual(status, 200)
        for s in socks:
            s.close()
        log = self.twind.requests_log(self.twin["id"], limit=100)["requests"]
        self.assertEqual(len(log), 20)


class Shutdown(unittest.TestCase):
    def test_sigterm_with_an_upstream_request_in_flight(self):
        fake = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
        threading.Thread(target=fake.serve_forever, daemon=True).start()
        routes = {"services": {"fake": {"upstream": "http://127.0.0.1:%d" % fake.server_port,
                                        "hosts": ["api.fake.test"]}}}
        t = Twind(routes=routes).start()
        try:
            twin = t.create_twin()
            cred = Credential(t.credential(twin), t.root)
            s = cred.strict_context().wrap_socket(socks5_connect(cred, "api.fake.test", 443),
                                                  server_hostname="api.fake.test")
            s.sendall(b"GET /slow HTTP/1.1\r\nHost: api.fake.test\r\n\r\n")
            time.sleep(0.3)
            started = time.time()
            self.assertEqual(t.stop(), 0)
            self.assertLess(time.time() - started, 8)
            s.close()
        finally:
            t.cleanup()
            fake.shutdown()


if __name__ == "__main__":
    unittest.main()
