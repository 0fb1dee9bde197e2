# SPDX-License-Identifier: MIT
"""filesystem.Filesystem: Stat, ListDir, MakeDir, Move, Remove (unary RPCs)."""
import os
import shutil
import stat

from .entries import entry_info
from .wire import ConnectError, as_int


def _path(msg, key="path"):
    p = msg.get(key)
    if not isinstance(p, str) or not p:
        raise ConnectError("invalid_argument", "%s is required" % key)
    return p


def _resolve(sbx, user, path, write=False):
    jail = sbx.jail
    spath = jail.normalize(path, user)
    host, writable = jail.host_path(spath, user)
    if host is None:
        if write:
            raise ConnectError("permission_denied", "permission denied: %s" % spath)
        raise ConnectError("not_found", "path not found: %s" % spath)
    if write and not writable:
        raise ConnectError("permission_denied", "permission denied: %s" % spath)
    return spath, host


def _exists(host):
    try:
        os.lstat(host)
        return True
    except OSError:
        return False


def stat_rpc(sbx, user, msg):
    spath, host = _resolve(sbx, user, _path(msg))
    if not _exists(host):
        raise ConnectError("not_found", "no such file or directory: %s" % spath)
    return {"entry": entry_info(host, spath)}


def list_dir(sbx, user, msg):
    spath, host = _resolve(sbx, user, _path(msg))
    try:
        depth = as_int(msg.get("depth"), 1)
    except ValueError:
        raise ConnectError("invalid_argument", "depth must be an integer")
    if depth < 0:
        raise ConnectError("invalid_argument", "depth must be at least 0")
    depth = depth or 1
    if not _exists(host):
        raise ConnectError("not_found", "directory not found: %s" % spath)
    if not stat.S_ISDIR(os.stat(host).st_mode):
        raise ConnectError("invalid_argument", "path is not a directory: %s" % spath)
    out = []

    def walk(h, s, level):
        try:
            names = sorted(os.listdir(h))
        except OSError as e:
            raise ConnectError("internal", "cannot read directory %s: %s" % (s, e.strerror))
        for n in names:
            hp, sp = os.path.join(h, n), s.rstrip("/") + "/" + n
            try:
                out.append(entry_info(hp, sp))
            except OSError:
                continue
            if level < depth and os.path.isdir(hp) and not os.path.islink(hp):
                walk(hp, sp, level + 1)

    walk(host, spath, 1)
    return {"entries": out}


def make_dir(sbx, user, msg):
    spath, host = _resolve(sbx, user, _path(msg), write=True)
    if _exists(host):
        raise ConnectError("already_exists", "directory already exists: %s" % spath)
    try:
        os.makedirs(host)
    except NotADirectoryError:
        raise ConnectError("invalid_argument", "a parent of %s is not a directory" % spath)
    except OSError as e:
        raise ConnectError("internal", "cannot make %s: %s" % (spath, e.strerror))
    return {"entry": entry_info(host, spath)}


def move(sbx, user, msg):
    src, hsrc = _resolve(sbx, user, _path(msg, "source"), write=True)
    dst, hdst = _resolve(sbx, user, _path(msg, "destination"), write=True)
    if not _exists(hsrc):
        raise ConnectError("not_found", "source not found: %s" % src)
    try:
        os.makedirs(os.path.dirname(hdst), exist_ok=True)
        os.replace(hsrc, hdst)
    except OSError as e:
        raise ConnectError("internal", "cannot move %s to %s: %s" % (src, dst, e.strerror))
    return {"entry": entry_info(hdst, dst)}


def remove(sbx, user, msg):
    spath, host = _resolve(sbx, user, _path(msg), write=True)
    if not _exists(host):
        return {}
    try:
        if os.path.isdir(host) and not os.path.islink(host):
            shutil.rmtree(host)
        else:
            os.unlink(host)
    except OSError as e:
        raise ConnectError("internal", "cannot remove %s: %s" % (spath, e.strerror))
    return {}


UNARY = {
    "Stat": stat_rpc,
    "ListDir": list_dir,
    "MakeDir": make_dir,
    "Move": move,
    "Remove": remove,
}
