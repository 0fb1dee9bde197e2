# SPDX-License-Identifier: MIT
"""Egress through the twin: a session's sandbox reaches api.stripe.com only
through its twin's gateway, and the twin's log shows what it sent.

Every test runs a live twinboxd with its supervised twinbox-twind on the local
engine. Nothing leaves this machine: api.stripe.com is never looked up in DNS
(the sandbox hands the name to the proxy) and is answered by the twin."""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import stat
import time
import unittest

from harness import BUILD, Daemon, RpcError

TWIND = os.path.join(BUILD, "twin", "twinbox-twind")
SECRET = "e2b_secret_must_not_leak_0123456789"

CURL_CREATE = "curl -sS https://api.stripe.com/v1/customers -u sk_test_x: -d email=a@b.c"
PY_RETRIEVE = ("python3 -c 'import json, sys, urllib.request as u\n"
               "r = u.Request(\"https://api.stripe.com/v1/customers/\" + sys.argv[1],"
               " headers={\"Authorization\": \"Bearer sk_test_x\"})\n"
               "print(json.load(u.urlopen(r))[\"email\"])' ")


def bash(client, sid, command):
    return client.call("tool.call", {"session": sid, "name": "bash",
                                     "args": {"command": command}})


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=10)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(self.path)


class EgressDaemon(Daemon):
    """A daemon whose twind is started through a wrapper that keeps a copy of
    its control-plane key, so the test can check the twin directly and make
    sure the key never reaches a sandbox."""

    def __init__(self, twind=None):
        super().__init__()
        self.keyfile = os.path.join(self.root, "twind-key")
        wrapper = os.path.join(self.root, "twind-wrapper")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\nIFS= read -r key </dev/fd/4\n"
                    "(umask 077; printf '%%s\\n' \"$key\" > '%s')\n"
                    "exec '%s' \"$@\" --api-key-file '%s'\n" % (self.keyfile, twind or TWIND,
                                                                 self.keyfile))
        os.chmod(wrapper, stat.S_IRWXU)
        self.env["TWINBOX_TWIND"] = wrapper
        self.env["E2B_API_KEY"] = SECRET
        self.env.pop("VERIS_API_KEY", None)
        self.env.pop("VERIS_ENVIRONMENT_ID", None)

    def key(self):
        with open(self.keyfile) as f:
            return f.read().strip()

    def control(self, method, path):
        """A call on twind's control plane, with its key: (status, JSON)."""
        conn = UnixHTTPConnection(os.path.join(self.env["XDG_RUNTIME_DIR"], "twinbox",
                                               "twind.sock"))
        conn.request(method, path, headers={"X-API-Key": self.key()})
        r = conn.getresponse()
        body = r.read()
        conn.close()
        return r.status, json.loads(body) if body else None

    def events(self, sid):
        db = os.path.join(self.env["XDG_STATE_HOME"], "twinbox", "twinbox.db")
        with sqlite3.connect("file:%s?mode=ro" % db, uri=True) as c:
            return [(k, json.loads(j) if j else None) for k, j in
                    c.execute("SELECT kind, json FROM events WHERE session_id = ? ORDER BY id",
                              (sid,))]


class EgressTest(unittest.TestCase):
    def setUp(self):
        self.d = EgressDaemon().start()
        self.c = self.d.client()

    def tearDown(self):
        if not getattr(getattr(self, "_outcome", None), "success", True):
            print("--- twinboxd log ---\n" + self.d.read_log())
        self.c.close()
        self.d.cleanup()

    def open(self, **params):
        params.setdefault("project_dir", self.d.env["HOME"])
        params.setdefault("engine", "local")
        return self.c.call("session.open", params)["id"]

    def show(self, sid):
        return self.c.call("session.show", {"session": sid})

    def requests_since(self, sid, baseline):
        got = self.c.call("session.twin", {"session": sid, "since": baseline})
        return [(e["method"], e["path"], e["status"])
                for s in got["services"] for e in s["requests"]]

    def test_stripe_calls_are_answered_by_the_twin_and_logged(self):
        sid = self.open()
        first = bash(self.c, sid, "true")
        self.assertNotIn("notice", first)  # nothing to tell: the canary passed
        egress = self.show(sid)["egress"]
        self.assertEqual((egress["mode"], egress["canary"]), ("gateway", "passed"), egress)
        self.assertTrue(egress["twin_id"].startswith("sbx_"), egress)
        self.assertEqual(self.show(sid)["twin_id"], egress["twin_id"])
        kinds = [k for k, _ in self.d.events(sid)]
        self.assertIn("egress.wired", kinds)

        before = self.c.call("session.twin", {"session": sid})
        baseline = {s["name"]: s["last_id"] for s in before["services"]}
        self.assertEqual(before["twin_id"], egress["twin_id"])

        out = bash(self.c, sid, CURL_CREATE)
        self.assertEqual(out["metadata"]["exit"], 0, out["output"])
        customer = json.loads(out["output"])
        self.assertTrue(customer["id"].startswith("cus_"), customer)
        self.assertEqual((customer["object"], customer["email"]), ("customer", "a@b.c"))
        # Python's default SSL context trusts the twin's CA through SSL_CERT_FILE.
        out = bash(self.c, sid, PY_RETRIEVE + customer["id"])
        self.assertEqual(out["output"].strip(), "a@b.c", out["output"])

        self.assertEqual(self.requests_since(sid, baseline),
                         [("POST", "/v1/customers", 200),
                          ("GET", "/v1/customers/" + customer["id"], 200)])
        # Entries carry no secrets: the key is redacted to its scheme.
        got = self.c.call("session.twin", {"session": sid, "since": baseline})
        headers = json.loads(got["services"][0]["requests"][0]["request_headers"])
        self.assertEqual(headers["Authorization"], "Basic [REDACTED]")
        # The baseline moves on: nothing new since the last entry.
        last = {s["name"]: s["last_id"] for s in got["services"]}
        self.assertEqual(self.requests_since(sid, last), [])

    def test_only_the_gateway_is_reachable(self):
        sid = self.open()
        status, health = self.d.control("GET", "/v1/gateway/health")
        self.assertEqual(status, 200)
        host_port = health["socks_address"].rsplit(":", 1)[1]
        out = bash(self.c, sid,
                   # a host no twin routes: refused under the strict policy
                   "curl -sS https://example.com/ 2>&1; echo exit=$?;"
                   "curl -sS --proxy \"$ALL_PROXY\" https://example.com/ 2>&1; echo exit=$?;"
                   # no proxy: no DNS, no route, and the host's loopback is not ours
                   "curl -sS --noproxy '*' --max-time 5 https://api.stripe.com/ 2>&1; echo exit=$?;"
                   "curl -sS --noproxy '*' --max-time 5 http://10.0.0.1/ 2>&1; echo exit=$?;"
                   "curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:%s/ 2>&1; echo exit=$?;"
                   "ip -o route 2>/dev/null; tail -n +2 /proc/net/route" % host_port)
        text = out["output"]
        exits = re.findall(r"exit=(\d+)", text)
        self.assertEqual(len(exits), 5, text)
        self.assertIn("403", text)                       # CONNECT refused
        self.assertNotEqual(exits[1], "0", text)          # SOCKS refused
        self.assertEqual(exits[2], "6", text)             # could not resolve
        self.assertEqual(exits[3], "7", text)             # no route
        self.assertEqual(exits[4], "7", text)             # nothing there in the sandbox
        self.assertNotIn("Example Domain", text)

    def test_no_twin_session_has_no_proxy_and_no_network(self):
        sid = self.open(no_twin=True)
        out = bash(self.c, sid, "env | grep -ci -e proxy -e SSL_CERT -e CA_BUNDLE; "
                   "ls /run/twinbox-gateway 2>&1; "
                   "curl -sS --max-time 5 https://api.stripe.com/ 2>&1; echo exit=$?")
        self.assertTrue(out["output"].startswith("0\n"), out["output"])
        self.assertIn("No such file", out["output"])
        self.assertEqual(re.findall(r"exit=(\d+)", out["output"]), ["6"], out["output"])
        self.assertNotIn("notice", out)
        shown = self.show(sid)
        self.assertEqual((shown["twin"], shown["twin_id"], shown["egress"]["mode"]),
                         (False, None, "off"))
        with self.assertRaises(RpcError) as e:
            self.c.call("session.twin", {"session": sid})
        self.assertEqual(e.exception.reason, "TBX_ENOENT")
        self.assertEqual(self.d.control("GET", "/v1/sandboxes")[1]["sandboxes"], [])

    def test_session_delete_deletes_the_twin(self):
        sid = self.open()
        bash(self.c, sid, "true")
        twin = self.show(sid)["twin_id"]
        self.assertEqual(self.d.control("GET", "/v1/sandboxes/" + twin)[0], 200)
        self.c.call("session.delete", {"session": sid})
        self.assertEqual(self.d.control("GET", "/v1/sandboxes/" + twin)[0], 404)
        self.assertIn("twin.deleted", [k for k, _ in self.d.events(sid)])

    def test_kill9_and_restart_keep_egress_in_the_same_sandbox(self):
        sid = self.open()
        self.assertEqual(json.loads(bash(self.c, sid, CURL_CREATE)["output"])["email"], "a@b.c")
        before = self.show(sid)
        twind = self.c.call("daemon.status")["twin"]["pid"]
        self.c.close()
        self.d.kill9()
        deadline = time.time() + 10
        while os.path.exists("/proc/%d" % twind) and time.time() < deadline:
            time.sleep(0.05)  # twind follows its parent down
        self.d.start()
        self.c = self.d.client()
        out = bash(self.c, sid, "curl -sS https://api.stripe.com/v1/customers -u sk_test_x:")
        listed = json.loads(out["output"])
        self.assertEqual([c["email"] for c in listed["data"]], ["a@b.c"], out["output"])
        after = self.show(sid)
        self.assertEqual((after["sandbox_id"], after["twin_id"]),
                         (before["sandbox_id"], before["twin_id"]))
        self.assertEqual(after["egress"]["canary"], "passed", after["egress"])

    def test_a_replaced_sandbox_gets_egress_again(self):
        sid = self.open()
        bash(self.c, sid, CURL_CREATE)
        before = self.show(sid)
        # The engine loses the sandbox behind the daemon's back: its bubblewrap and the
        # pid namespace's init (in a session of its own) die, its directory goes.
        sbx_dir = os.path.join(self.d.sandboxes_dir(), before["sandbox_id"])
        with open(os.path.join(sbx_dir, "agent.pid")) as f:
            os.killpg(int(f.read()), signal.SIGKILL)
        with open(os.path.join(sbx_dir, "bwrap-info.json")) as f:
            os.kill(json.load(f)["child-pid"], signal.SIGKILL)
        time.sleep(0.2)
        shutil.rmtree(sbx_dir)
        out = bash(self.c, sid, "curl -sS https://api.stripe.com/v1/customers -u sk_test_x:")
        after = self.show(sid)
        self.assertNotEqual(after["sandbox_id"], before["sandbox_id"])
        # The same twin, and with it what the old sandbox told it.
        self.assertEqual(after["twin_id"], before["twin_id"])
        self.assertEqual([c["email"] for c in json.loads(out["output"])["data"]], ["a@b.c"])
        self.assertEqual(after["egress"]["canary"], "passed", after["egress"])

    def test_no_key_of_the_daemon_reaches_the_sandbox(self):
        sid = self.open()
        # Into a file read from the host: the tool's output would be cut short.
        bash(self.c, sid, "(env; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline | tr '\\0' '\\n';"
             " cat /tmp/twinbox-ca*.crt; ls -la /run/twinbox /run/twinbox-gateway;"
             " grep -r . /home/user /run/twinbox) > /tmp/dump.txt 2>/dev/null;"
             " mv /tmp/dump.txt /home/user/project/dump.txt")
        sbx = self.show(sid)["sandbox_id"]
        with open(os.path.join(self.d.sandboxes_dir(), sbx, "home", "project", "dump.txt")) as f:
            text = f.read()
        self.assertIn("-----BEGIN CERTIFICATE-----", text)  # the dump did run
        key = self.d.key()
        self.assertGreater(len(key), 20)
        self.assertNotIn(key, text)
        self.assertNotIn(SECRET, text)
        self.assertNotIn("API_KEY", text)
        # What the sandbox does hold is its own capability: the egress credential.
        self.assertRegex(text, r"HTTPS_PROXY=http://sbx_\w+:\w+@127\.0\.0\.1:3128")
        self.assertIn("ALL_PROXY=socks5h://sbx_", text)
        self.assertIn("SSL_CERT_FILE=/tmp/twinbox-ca-bundle.crt", text)
        # On the host, the credential is not on any command line.
        password = re.search(r"HTTPS_PROXY=http://sbx_\w+:(\w+)@", text).group(1)
        with open(os.path.join(self.d.sandboxes_dir(), sbx, "agent.pid")) as f:
            pid = int(f.read())
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            self.assertNotIn(password.encode(), f.read())
        self.assertNotIn(key, self.d.read_log())


class TwinUnavailableTest(unittest.TestCase):
    def test_sessions_go_on_without_a_twin_and_say_so(self):
        d = EgressDaemon(twind="/bin/false").start()
        try:
            c = d.client()
            self.assertFalse(c.call("daemon.status")["twin"]["healthy"])
            sid = c.call("session.open", {"project_dir": d.env["HOME"], "engine": "local"})["id"]
            out = bash(c, sid, "echo works; env | grep -ci proxy")
            self.assertEqual(out["output"], "works\n0\n")
            self.assertIn("No twin for this sandbox", out.get("notice", ""), out)
            self.assertNotIn("notice", bash(c, sid, "true"))  # told once
            egress = c.call("session.show", {"session": sid})["egress"]
            self.assertEqual(egress["mode"], "none", egress)
            self.assertIn("not available", egress["reason"])
            self.assertIn("egress.unavailable", [k for k, _ in d.events(sid)])
            self.assertIn("without a twin", d.read_log())
        finally:
            d.cleanup()


if __name__ == "__main__":
    unittest.main()
