# SPDX-License-Identifier: MIT
"""EntryInfo messages (filesystem.proto) built from files on the host."""
import os
import stat

from .wire import rfc3339

# Go's os.FileMode type bits, which envd puts in EntryInfo.mode.
GO_MODE_DIR = 1 << 31
GO_MODE_SYMLINK = 1 << 27


def permissions(st):
    return stat.filemode(st.st_mode)


def entry_info(host, sandbox_path, uid_names=None):
    st = os.lstat(host)
    if stat.S_ISDIR(st.st_mode):
        ftype, gomode = "FILE_TYPE_DIRECTORY", GO_MODE_DIR
    elif stat.S_ISLNK(st.st_mode):
        ftype, gomode = "FILE_TYPE_SYMLINK", GO_MODE_SYMLINK
    elif stat.S_ISREG(st.st_mode):
        ftype, gomode = "FILE_TYPE_FILE", 0
    else:
        ftype, gomode = "FILE_TYPE_UNSPECIFIED", 0
    name = sandbox_path.rstrip("/").rsplit("/", 1)[-1] or "/"
    e = {"name": name, "type": ftype, "path": sandbox_path, "size": str(st.st_size),
         "mode": gomode | stat.S_IMODE(st.st_mode), "permissions": permissions(st),
         "owner": "user", "group": "user", "modifiedTime": rfc3339(st.st_mtime)}
    if st.st_size == 0:
        del e["size"]  # proto3 JSON leaves defaults out
    if ftype == "FILE_TYPE_SYMLINK":
        try:
            e["symlinkTarget"] = os.readlink(host)
        except OSError:
            pass
    return e
