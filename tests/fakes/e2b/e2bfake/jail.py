# SPDX-License-Identifier: MIT
"""One sandbox's view of the filesystem, and how its commands run (bubblewrap when present).

Inside, a sandbox looks like an E2B template: the user `user` (uid 1000) with home
/home/user, a private /tmp, and the host's system directories read-only. The fake's
file RPCs run outside the jail, so they translate sandbox paths with the same table
the jail is built from.
"""
import os
import posixpath
import shutil

HOME = "/home/user"
ROOT_HOME = "/root"
USERS = {"user": (1000, HOME), "root": (0, ROOT_HOME)}
# Host directories a sandbox sees read-only, as in an E2B template.
SYSTEM_DIRS = ("/usr", "/etc", "/opt")
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
PATH_ENV = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def bwrap_path():
    return shutil.which("bwrap")


class Jail:
    def __init__(self, directory):
        self.dir = directory
        # (sandbox prefix, host directory): the writable places.
        self.mounts = [(HOME, os.path.join(directory, "home")),
                       (ROOT_HOME, os.path.join(directory, "root")),
                       ("/tmp", os.path.join(directory, "tmp"))]
        for _, host in self.mounts:
            os.makedirs(host, exist_ok=True)
        # The template's own accounts, whatever the host's /etc says.
        self.passwd = os.path.join(directory, "passwd")
        self.group = os.path.join(directory, "group")
        with open(self.passwd, "w") as f:
            f.write("root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/bash\n"
                    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
        with open(self.group, "w") as f:
            f.write("root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n")

    @staticmethod
    def normalize(path, user="user"):
        """Absolute, normalised sandbox path; relative paths start at the user's home."""
        home = USERS.get(user, USERS["user"])[1]
        if path == "~" or path.startswith("~/"):
            path = home + path[1:]
        if not path.startswith("/"):
            path = posixpath.join(home, path)
        path = posixpath.normpath(path)
        if path.startswith("//"):
            path = "/" + path.lstrip("/")
        return path

    def host_path(self, path, user="user", write=False):
        """(host path, writable) for a sandbox path; None when the sandbox has no such place."""
        path = self.normalize(path, user)
        for prefix, host in self.mounts:
            if path == prefix:
                return host, True
            if path.startswith(prefix + "/"):
                return os.path.join(host, path[len(prefix) + 1:]), True
        for d in SYSTEM_DIRS + SYSTEM_LINKS:
            if path == d or path.startswith(d + "/"):
                return path, False
        return None, False

    def sandbox_path(self, host):
        """The sandbox path of a host path under one of the writable mounts."""
        for prefix, h in self.mounts:
            if host == h:
                return prefix
            if host.startswith(h + "/"):
                return prefix + host[len(h):]
        return host

    def command(self, argv, env, cwd, user="user"):
        """(argv, env, host cwd) that run argv inside the sandbox."""
        uid, home = USERS.get(user, USERS["user"])
        base_env = {"PATH": PATH_ENV, "HOME": home, "USER": user, "LOGNAME": user,
                    "SHELL": "/bin/bash", "LANG": "C.UTF-8"}
        base_env.update(env)
        bwrap = bwrap_path()
        if not bwrap:
            # No bubblewrap: run on the host, in the mapped directory. Absolute sandbox
            # paths inside commands then do not resolve; tests that need them skip.
            hcwd, _ = self.host_path(cwd, user)
            base_env["HOME"] = self.host_path(home, user)[0]
            return list(argv), base_env, hcwd or self.dir
        a = [bwrap, "--unshare-all", "--unshare-user", "--die-with-parent",
             "--hostname", "sandbox", "--cap-drop", "ALL",
             "--uid", str(uid), "--gid", str(uid)]
        for d in SYSTEM_DIRS:
            if os.path.isdir(d):
                a += ["--ro-bind", d, d]
        for d in SYSTEM_LINKS:
            if os.path.islink(d):
                a += ["--symlink", os.readlink(d), d]
            elif os.path.isdir(d):
                a += ["--ro-bind", d, d]
        for secret in ("/etc/shadow", "/etc/gshadow"):
            if os.path.exists(secret):
                a += ["--ro-bind", "/dev/null", secret]
        a += ["--ro-bind", self.passwd, "/etc/passwd", "--ro-bind", self.group, "/etc/group"]
        a += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/var/tmp"]
        for prefix, host in self.mounts:
            a += ["--bind", host, prefix]
        a += ["--chdir", cwd, "--clearenv"]
        for k, v in base_env.items():
            a += ["--setenv", k, v]
        a += ["--"] + list(argv)
        return a, {"PATH": PATH_ENV}, self.dir
