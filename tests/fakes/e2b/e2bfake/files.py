# SPDX-License-Identifier: MIT
"""envd's /files: download (gzip when asked) and upload (multipart or octet-stream), with URL signatures."""
import base64
import gzip
import hashlib
import hmac
import mimetypes
import os
import stat
import tempfile
import time

from .jail import USERS


class FilesError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def signature(path, operation, user, token, expiration=None):
    raw = "%s:%s:%s:%s" % (path, operation, user or "", token)
    if expiration is not None:
        raw += ":%s" % expiration
    digest = base64.b64encode(hashlib.sha256(raw.encode()).digest()).decode().rstrip("=")
    return "v1_" + digest


def authorize(sbx, req, operation, path, user_param):
    """envd's rule: a valid X-Access-Token header, else a valid signature."""
    if not sbx.token:
        return
    hdr = req.headers.get("X-Access-Token")
    if hdr is not None:
        if hmac.compare_digest(hdr, sbx.token):
            return
        raise FilesError(401, "unauthorized access, invalid access token")
    sig = req.query.get("signature", [None])[0]
    if not sig:
        raise FilesError(401, "unauthorized access, please provide a valid access token or method signing if supported")
    exp = req.query.get("signature_expiration", [None])[0]
    if exp is not None:
        try:
            if int(exp) < time.time():
                raise FilesError(401, "signature is already expired")
        except ValueError:
            raise FilesError(400, "invalid signature expiration")
    want = signature(path, operation, user_param, sbx.token, exp)
    if not hmac.compare_digest(sig, want):
        raise FilesError(401, "invalid signature")


def _user(req):
    u = req.query.get("username", [None])[0]
    if u is not None and u not in USERS:
        raise FilesError(401, "invalid user: '%s'" % u)
    return u


def download(sbx, req):
    path = req.query.get("path", [None])[0]
    user_param = _user(req)
    if path is None:
        raise FilesError(400, "path is required")
    authorize(sbx, req, "read", path, user_param)
    user = user_param or "user"
    spath = sbx.jail.normalize(path, user)
    host, _ = sbx.jail.host_path(spath, user)
    if host is None or not os.path.exists(host):
        raise FilesError(404, "path '%s' does not exist" % spath)
    if os.path.isdir(host):
        raise FilesError(400, "path '%s' is a directory" % spath)
    try:
        with open(host, "rb") as f:
            data = f.read()
    except OSError as e:
        raise FilesError(500, "cannot read '%s': %s" % (spath, e.strerror))
    ctype = mimetypes.guess_type(spath)[0] or "application/octet-stream"
    headers = {"Content-Type": ctype,
               "Content-Disposition": 'inline; filename="%s"' % os.path.basename(spath)}
    accept = req.headers.get("Accept-Encoding", "")
    if data and "gzip" in [a.split(";")[0].strip().lower() for a in accept.split(",")]:
        data = gzip.compress(data, 1)
        headers["Content-Encoding"] = "gzip"
        headers["Vary"] = "Accept-Encoding"
    return 200, headers, data


def _parse_multipart(body, ctype):
    boundary = None
    for part in ctype.split(";")[1:]:
        k, _, v = part.strip().partition("=")
        if k.lower() == "boundary":
            boundary = v.strip('"')
    if not boundary:
        raise FilesError(400, "multipart body without a boundary")
    delim = b"--" + boundary.encode()
    pieces = body.split(delim)
    if len(pieces) < 3 or not pieces[-1].startswith(b"--"):
        raise FilesError(400, "malformed multipart body")
    files = []
    for piece in pieces[1:-1]:
        if not piece.startswith(b"\r\n"):
            raise FilesError(400, "malformed multipart part")
        head, sep, content = piece[2:].partition(b"\r\n\r\n")
        if not sep or not content.endswith(b"\r\n"):
            raise FilesError(400, "malformed multipart part")
        content = content[:-2]
        name = filename = None
        for line in head.decode("utf-8", "replace").split("\r\n"):
            k, _, v = line.partition(":")
            if k.strip().lower() == "content-disposition":
                for item in v.split(";"):
                    ik, _, iv = item.strip().partition("=")
                    if ik == "name":
                        name = iv.strip('"')
                    elif ik == "filename":
                        filename = iv.strip('"')
        if name != "file":
            continue
        files.append((filename, content))
    if not files:
        raise FilesError(400, "no file part in the multipart body")
    return files


def _write(sbx, user, spath, data):
    host, writable = sbx.jail.host_path(spath, user)
    if host is None or not writable:
        raise FilesError(403, "permission denied: '%s'" % spath)
    if os.path.isdir(host):
        raise FilesError(400, "path '%s' is a directory" % spath)
    parent = os.path.dirname(host)
    try:
        os.makedirs(parent, exist_ok=True)
        mode = stat.S_IMODE(os.stat(host).st_mode) if os.path.exists(host) else 0o644
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=".upload-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, host)
    except (NotADirectoryError, FileExistsError):
        raise FilesError(400, "a parent of '%s' is not a directory" % spath)
    except OSError as e:
        raise FilesError(500, "cannot write '%s': %s" % (spath, e.strerror))
    return {"name": os.path.basename(spath), "type": "file", "path": spath}


def upload(sbx, req):
    path = req.query.get("path", [None])[0]
    user_param = _user(req)
    user = user_param or "user"
    authorize(sbx, req, "write", path or "", user_param)
    ctype = req.headers.get("Content-Type", "")
    media = ctype.split(";")[0].strip().lower()
    body = req.body
    if media == "application/octet-stream":
        if not path:
            raise FilesError(400, "path is required for an octet-stream upload")
        enc = req.headers.get("Content-Encoding", "").strip().lower()
        if enc == "gzip":
            try:
                body = gzip.decompress(body)
            except (OSError, EOFError):
                raise FilesError(400, "body is not valid gzip")
        elif enc not in ("", "identity"):
            raise FilesError(400, "unsupported content encoding '%s'" % enc)
        return 200, [_write(sbx, user, sbx.jail.normalize(path, user), body)]
    if media != "multipart/form-data":
        raise FilesError(400, "unsupported content type '%s'" % ctype)
    parts = _parse_multipart(body, ctype)
    targets = []
    for filename, content in parts:
        target = path if (path and len(parts) == 1) else filename
        if not target:
            raise FilesError(400, "a file part has no path")
        targets.append((sbx.jail.normalize(target, user), content))
    if len({t for t, _ in targets}) != len(targets):
        raise FilesError(400, "two parts write the same path")
    return 200, [_write(sbx, user, t, c) for t, c in targets]
