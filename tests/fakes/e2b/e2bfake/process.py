# SPDX-License-Identifier: MIT
"""process.Process: Start (server streaming) and the unary List, SendSignal, SendInput, CloseStdin.

Commands really run, inside the sandbox's jail, each in its own process group. As on
envd, a client that goes away does not stop its command (that is how background
commands work); SendSignal does, and so does the Connect-Timeout-Ms deadline.
"""
import os
import selectors
import signal
import subprocess
import threading
import time

from .wire import ConnectError, as_int, b64, end_stream, envelope

SIGNALS = {"SIGNAL_SIGKILL": signal.SIGKILL, "SIGNAL_SIGTERM": signal.SIGTERM,
           9: signal.SIGKILL, 15: signal.SIGTERM}


class ClientGone(Exception):
    pass


def status_text(returncode):
    """Go's ProcessState.String()."""
    if returncode < 0:
        try:
            name = signal.strsignal(-returncode) or ("signal %d" % -returncode)
        except ValueError:
            name = "signal %d" % -returncode
        return "signal: " + name[0].lower() + name[1:]
    return "exit status %d" % returncode


def _config(msg):
    proc = msg.get("process")
    if not isinstance(proc, dict):
        raise ConnectError("invalid_argument", "process is required")
    cmd = proc.get("cmd")
    if not isinstance(cmd, str) or not cmd:
        raise ConnectError("invalid_argument", "process.cmd is required")
    args = proc.get("args") or []
    envs = proc.get("envs") or {}
    cwd = proc.get("cwd")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConnectError("invalid_argument", "process.args must be strings")
    if not isinstance(envs, dict) or not all(isinstance(v, str) for v in envs.values()):
        raise ConnectError("invalid_argument", "process.envs must map strings to strings")
    if cwd is not None and not isinstance(cwd, str):
        raise ConnectError("invalid_argument", "process.cwd must be a string")
    return cmd, args, envs, cwd


def _spawn(sbx, user, msg):
    cmd, args, envs, cwd = _config(msg)
    jail = sbx.jail
    home = jail.normalize("~", user)
    cwd = jail.normalize(cwd or home, user)
    host, _ = jail.host_path(cwd, user)
    if host is None or not os.path.isdir(host):
        raise ConnectError("invalid_argument", "cwd '%s' does not exist" % cwd)
    env = dict(sbx.env_vars)
    env.update(envs)
    argv, penv, hcwd = jail.command([cmd] + args, env, cwd, user)
    stdin = subprocess.PIPE if msg.get("stdin") else subprocess.DEVNULL
    try:
        p = subprocess.Popen(argv, env=penv, cwd=hcwd, stdin=stdin, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        raise ConnectError("internal", "cannot start %s: %s" % (cmd, e.strerror))
    p.e2b_config = {"cmd": cmd, "args": args, "envs": envs, "cwd": cwd}
    p.e2b_tag = msg.get("tag") if isinstance(msg.get("tag"), str) else None
    with sbx.lock:
        sbx.processes[p.pid] = p
    return p


def _forget(sbx, p):
    with sbx.lock:
        sbx.processes.pop(p.pid, None)


def _reap_later(sbx, p):
    def wait():
        p.wait()
        for f in (p.stdout, p.stderr):
            try:
                f.close()
            except OSError:
                pass
        _forget(sbx, p)
    threading.Thread(target=wait, daemon=True).start()


def start(sbx, user, msg, req):
    timeout_ms = req.header_int("Connect-Timeout-Ms", 0)
    ping_s = req.header_int("Keepalive-Ping-Interval", 90) or 90
    stream = req.open_stream()
    try:
        p = _spawn(sbx, user, msg)
    except ConnectError as e:
        stream.send(end_stream(e))
        stream.finish()
        return
    deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None
    try:
        _pump(sbx, p, stream, deadline, ping_s)
    except ClientGone:
        # The command keeps running, as on envd; it is reaped when it ends.
        _reap_later(sbx, p)
        return
    _forget(sbx, p)


def _pump(sbx, p, stream, deadline, ping_s):
    stream.send(envelope({"event": {"start": {"pid": p.pid}}}))
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ, "stdout")
    sel.register(p.stderr, selectors.EVENT_READ, "stderr")
    open_fds = 2
    next_ping = time.monotonic() + ping_s
    try:
        while open_fds:
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                _kill_group(p)
                p.wait()
                stream.send(end_stream(ConnectError("deadline_exceeded", "context deadline exceeded")))
                stream.finish()
                return
            wait = next_ping - now
            if deadline is not None:
                wait = min(wait, deadline - now)
            for key, _ in sel.select(max(0.0, min(wait, 0.5))):
                data = os.read(key.fileobj.fileno(), 65536)
                if not data:
                    sel.unregister(key.fileobj)
                    open_fds -= 1
                    continue
                stream.send(envelope({"event": {"data": {key.data: b64(data)}}}))
            if time.monotonic() >= next_ping:
                stream.send(envelope({"event": {"keepalive": {}}}))
                next_ping = time.monotonic() + ping_s
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                _kill_group(p)
                p.wait()
                stream.send(end_stream(ConnectError("deadline_exceeded", "context deadline exceeded")))
                stream.finish()
                return
            try:
                p.wait(timeout=min(ping_s, remaining) if remaining is not None else ping_s)
                break
            except subprocess.TimeoutExpired:
                stream.send(envelope({"event": {"keepalive": {}}}))
    finally:
        sel.close()
    rc = p.returncode
    end = {"exited": rc >= 0, "status": status_text(rc)}
    if rc != 0:
        end["exitCode"] = rc if rc >= 0 else -1
    if not end["exited"]:
        del end["exited"]  # false is proto3's default
    stream.send(envelope({"event": {"end": end}}))
    stream.send(end_stream())
    stream.finish()
    for f in (p.stdout, p.stderr):
        f.close()


def _kill_group(p, sig=signal.SIGKILL):
    try:
        os.killpg(p.pid, sig)
    except OSError:
        pass


def _selected(sbx, msg):
    sel = msg.get("process")
    if not isinstance(sel, dict):
        raise ConnectError("invalid_argument", "process selector is required")
    with sbx.lock:
        procs = dict(sbx.processes)
    if "pid" in sel:
        try:
            pid = as_int(sel["pid"])
        except ValueError:
            raise ConnectError("invalid_argument", "pid must be an integer")
        if pid in procs and procs[pid].poll() is None:
            return procs[pid]
        raise ConnectError("not_found", "process with pid %d not found" % pid)
    if "tag" in sel:
        for p in procs.values():
            if p.e2b_tag == sel["tag"] and p.poll() is None:
                return p
        raise ConnectError("not_found", "process with tag %s not found" % sel["tag"])
    raise ConnectError("invalid_argument", "process selector needs a pid or a tag")


def send_signal(sbx, user, msg):
    p = _selected(sbx, msg)
    sig = SIGNALS.get(msg.get("signal"))
    if sig is None:
        raise ConnectError("invalid_argument", "unsupported signal %r" % msg.get("signal"))
    _kill_group(p, sig)
    return {}


def list_rpc(sbx, user, msg):
    with sbx.lock:
        procs = [p for p in sbx.processes.values() if p.poll() is None]
    out = []
    for p in procs:
        d = {"config": p.e2b_config, "pid": p.pid}
        if p.e2b_tag:
            d["tag"] = p.e2b_tag
        out.append(d)
    return {"processes": out}


def send_input(sbx, user, msg):
    import base64
    p = _selected(sbx, msg)
    data = (msg.get("input") or {}).get("stdin")
    if p.stdin is None:
        raise ConnectError("failed_precondition", "stdin is not enabled for this process")
    try:
        p.stdin.write(base64.b64decode(data or ""))
        p.stdin.flush()
    except (OSError, ValueError) as e:
        raise ConnectError("internal", "cannot write stdin: %s" % e)
    return {}


def close_stdin(sbx, user, msg):
    p = _selected(sbx, msg)
    if p.stdin is not None:
        p.stdin.close()
    return {}


UNARY = {
    "List": list_rpc,
    "SendSignal": send_signal,
    "SendInput": send_input,
    "CloseStdin": close_stdin,
}
STREAMING = {"Start": start}
