/* SPDX-License-Identifier: MIT */
/*
 * Local engine: start a sandbox (bubblewrap running the agent, detached so
 * it outlives the daemon) and stop it (kill its pid namespace).
 */
#define _GNU_SOURCE
#include "local.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOCAL_PATH_ENV "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* A growing argv of owned strings. */
struct local_argv {
	char **v;
	size_t n, cap;
	int oom;
};

static void local_argv_add(struct local_argv *a, const char *s)
{
	char *dup;

	if (a->oom)
		return;
	if (a->n + 2 > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		char **nv = realloc(a->v, cap * sizeof(char *));

		if (!nv) {
			a->oom = 1;
			return;
		}
		a->v = nv;
		a->cap = cap;
	}
	if (!(dup = strdup(s))) {
		a->oom = 1;
		return;
	}
	a->v[a->n++] = dup;
	a->v[a->n] = NULL;
}

static void local_argv_addv(struct local_argv *a, int count, ...)
{
	va_list ap;

	va_start(ap, count);
	for (int i = 0; i < count; i++)
		local_argv_add(a, va_arg(ap, const char *));
	va_end(ap);
}

static void local_argv_release(struct local_argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/* Mirror a host top-level path: symlinks stay symlinks, directories are bound read-only. */
static void local_argv_system(struct local_argv *a, const char *path)
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (lstat(path, &st) < 0)
		return;
	if (S_ISLNK(st.st_mode)) {
		n = readlink(path, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			local_argv_addv(a, 3, "--symlink", target, path);
		}
	} else if (S_ISDIR(st.st_mode)) {
		local_argv_addv(a, 3, "--ro-bind", path, path);
	}
}

static void local_argv_setenv(struct local_argv *a, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char key[256];

	if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(key))
		return;
	memcpy(key, kv, (size_t)(eq - kv));
	key[eq - kv] = '\0';
	local_argv_addv(a, 3, "--setenv", key, eq + 1);
}

/*
 * The sandbox's own passwd and group: uid 1000 is "user" inside whatever the
 * host calls it, and the host's account list stays out of the sandbox.
 */
static void local_write_identity(const struct local_sbx *s)
{
	static const struct {
		const char *name, *text;
	} files[] = {
		{ "passwd", "root:x:0:0:root:/root:/usr/sbin/nologin\n"
			    "user:x:1000:1000:sandbox user:" LOCAL_HOME ":/bin/bash\n"
			    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n" },
		{ "group", "root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n" },
	};
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f;
		local_sbx_path(s, files[i].name, path);
		f = fopen(path, "we");
		if (f) {
			fputs(files[i].text, f);
			fclose(f);
		}
	}
}

static void local_argv_proxy_env(struct local_argv *a, const char *all, const char *http)
{
	static const char *const all_names[] = { "ALL_PROXY", "all_proxy" };
	static const char *const http_names[] = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
						   "https_proxy" };

	for (size_t i = 0; i < sizeof(all_names) / sizeof(all_names[0]); i++)
		local_argv_addv(a, 3, "--setenv", all_names[i], all);
	for (size_t i = 0; i < sizeof(http_names) / sizeof(http_names[0]); i++)
		local_argv_addv(a, 3, "--setenv", http_names[i], http);
	local_argv_addv(a, 3, "--setenv", "NO_PROXY", "localhost,127.0.0.1,::1");
	local_argv_addv(a, 3, "--setenv", "no_proxy", "localhost,127.0.0.1,::1");
}

/*
 * Egress. A gateway on a Unix socket (the local twin's) becomes the one way
 * out: its directory is bound read-only, the agent forwards loopback ports
 * to it, and every process gets proxy variables naming those ports with the
 * credential. Returns 1 then. Any other URL is only exported as it is, for
 * tools that honour it: the namespace has no route to it (returns 0).
 */
static int local_argv_egress(struct local_argv *a, struct local_argv *e, const char *url,
			     struct local_egress *eg)
{
	char all[700], http[700];
	const char *at;

	if (local_egress_parse(url, eg) != 1) {
		local_argv_proxy_env(e, url, url);
		return 0;
	}
	/* After a reboot the runtime directory is new: bwrap needs the source to exist. */
	local_mkdirs(eg->dir, 0700);
	local_argv_addv(a, 3, "--ro-bind", eg->dir, LOCAL_GATEWAY_IN);
	at = eg->userinfo[0] ? "@" : "";
	snprintf(all, sizeof(all), "socks5h://%s%s127.0.0.1:%s", eg->userinfo, at, LOCAL_SOCKS_PORT);
	snprintf(http, sizeof(http), "http://%s%s127.0.0.1:%s", eg->userinfo, at, LOCAL_CONNECT_PORT);
	local_argv_proxy_env(e, all, http);
	return 1;
}

/*
 * bwrap's command line in \p a; the environment's --setenv options in \p e,
 * which bwrap reads from fd 4 (--args): a command line is world-readable in
 * /proc, and the environment holds the egress credential and the spec's env.
 */
static void local_build_argv(struct tbx_local *l, const struct local_sbx *s,
			     struct json_object *meta, struct local_argv *a, struct local_argv *e)
{
	static const char *const top[] = { "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
					   "/usr", "/etc", "/opt" };
	/* Files under /etc a sandbox user must not read even when bound as root. */
	static const char *const masked[] = { "/etc/shadow", "/etc/gshadow", "/etc/shadow-",
					      "/etc/gshadow-", "/etc/ssh/ssh_host_*_key" };
	char path[PATH_MAX];
	struct json_object *env, *proxy;
	struct local_egress eg;
	int egress = 0;
	glob_t g;

	local_argv_add(a, l->bwrap);
	/*
	 * Own mount, pid, ipc, uts, cgroup, user and network namespaces: the
	 * network namespace has loopback only. No --die-with-parent: a sandbox
	 * survives a daemon restart; stopping it kills its pid namespace.
	 */
	local_argv_addv(a, 7, "--unshare-all", "--unshare-user", "--disable-userns",
			"--hostname", "sandbox", "--new-session", "--cap-drop");
	local_argv_addv(a, 5, "ALL", "--uid", "1000", "--gid", "1000");
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++)
		local_argv_system(a, top[i]);
	for (size_t i = 0; i < sizeof(masked) / sizeof(masked[0]); i++) {
		if (glob(masked[i], GLOB_NOSORT, NULL, &g) != 0)
			continue;
		for (size_t k = 0; k < g.gl_pathc; k++)
			local_argv_addv(a, 3, "--ro-bind", "/dev/null", g.gl_pathv[k]);
		globfree(&g);
	}
	local_write_identity(s);
	local_sbx_path(s, "passwd", path);
	local_argv_addv(a, 3, "--ro-bind", path, "/etc/passwd");
	local_sbx_path(s, "group", path);
	local_argv_addv(a, 3, "--ro-bind", path, "/etc/group");
	local_argv_addv(a, 6, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
	local_argv_addv(a, 2, "--tmpfs", "/var/tmp");
	local_sbx_path(s, "home", path);
	local_argv_addv(a, 3, "--bind", path, LOCAL_HOME);
	local_sbx_path(s, "run", path);
	local_argv_addv(a, 3, "--bind", path, LOCAL_RUN);
	local_argv_addv(a, 3, "--ro-bind", l->agent, LOCAL_AGENT_IN);
	local_argv_addv(a, 2, "--chdir", LOCAL_WORKDIR);
	/* The environment every process inside starts from. */
	local_argv_addv(a, 3, "--clearenv", "--args", "4");
	local_argv_addv(e, 3, "--setenv", "PATH", LOCAL_PATH_ENV);
	local_argv_addv(e, 3, "--setenv", "HOME", LOCAL_HOME);
	local_argv_addv(e, 3, "--setenv", "USER", "user");
	local_argv_addv(e, 3, "--setenv", "LOGNAME", "user");
	local_argv_addv(e, 3, "--setenv", "SHELL", "/bin/bash");
	local_argv_addv(e, 3, "--setenv", "LANG", "C.UTF-8");
	local_argv_addv(e, 3, "--setenv", "TWINBOX_SANDBOX_ID", s->id);
	if (json_object_object_get_ex(meta, "egress_proxy_url", &proxy) &&
	    json_object_is_type(proxy, json_type_string))
		egress = local_argv_egress(a, e, json_object_get_string(proxy), &eg);
	if (json_object_object_get_ex(meta, "env", &env) && json_object_is_type(env, json_type_array))
		for (size_t i = 0; i < json_object_array_length(env); i++)
			local_argv_setenv(e, json_object_get_string(json_object_array_get_idx(env, i)));
	/* fd 3 receives {"child-pid": N}: the pid namespace's init, as the host sees it. */
	local_argv_addv(a, 2, "--info-fd", "3");
	local_argv_addv(a, 7, LOCAL_AGENT_IN, "--socket", LOCAL_RUN "/agent.sock", "--home",
			LOCAL_HOME, "--workdir", LOCAL_WORKDIR);
	if (egress) {
		char fwd[256];

		/* The agent relays the two proxy ports to the gateway's sockets. */
		snprintf(fwd, sizeof(fwd), "127.0.0.1:%s=%s/%s", LOCAL_SOCKS_PORT, LOCAL_GATEWAY_IN,
			 eg.socks);
		local_argv_addv(a, 2, "--forward", fwd);
		snprintf(fwd, sizeof(fwd), "127.0.0.1:%s=%s/%s", LOCAL_CONNECT_PORT,
			 LOCAL_GATEWAY_IN, LOCAL_GATEWAY_CONNECT);
		local_argv_addv(a, 2, "--forward", fwd);
	}
}

static long local_read_long(const char *path)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/* State letter and parent of a pid from /proc, or 0 when it is gone. */
static char local_proc_state(pid_t pid, pid_t *ppid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: parse after the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return 0;
	if (ppid)
		*ppid = (pid_t)strtol(p + 4, NULL, 10);
	return p[2];
}

/* Is \p pid this sandbox's bubblewrap (not a recycled pid)? */
static int local_pid_is_sandbox(pid_t pid, const struct local_sbx *s)
{
	char path[64], buf[8192];
	ssize_t n;
	int fd;

	if (pid <= 1)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	/* Its arguments name the sandbox directory in the home bind. */
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = '\n';
	buf[n] = '\0';
	return strstr(buf, s->dir) != NULL;
}

static pid_t local_sandbox_pid(const struct local_sbx *s)
{
	char path[PATH_MAX];
	long pid;

	local_sbx_path(s, "agent.pid", path);
	pid = local_read_long(path);
	return pid > 1 ? (pid_t)pid : -1;
}

int local_sandbox_alive(const struct local_sbx *s)
{
	pid_t pid = local_sandbox_pid(s);
	char st;

	/* The outer bwrap exits as soon as the agent does, so it stands for both. */
	if (pid < 0 || !local_pid_is_sandbox(pid, s))
		return 0;
	st = local_proc_state(pid, NULL);
	return st && st != 'Z' && st != 'X';
}

/* The pid-namespace init bwrap reported on its info fd, or -1. */
static pid_t local_sandbox_child(const struct local_sbx *s)
{
	char path[PATH_MAX];
	struct json_object *info, *v;
	pid_t pid = -1;

	local_sbx_path(s, "bwrap-info.json", path);
	info = json_object_from_file(path);
	if (info && json_object_object_get_ex(info, "child-pid", &v))
		pid = (pid_t)json_object_get_int(v);
	json_object_put(info);
	return pid;
}

static int local_pid_dead(pid_t pid)
{
	char st = local_proc_state(pid, NULL);

	/* bwrap is not our child: its zombie is someone else's to reap. */
	return !st || st == 'Z' || st == 'X';
}

void local_sandbox_stop(struct tbx_local *l, const struct local_sbx *s)
{
	pid_t pid = local_sandbox_pid(s), child = local_sandbox_child(s);
	char path[PATH_MAX];
	int outer = pid > 1 && local_pid_is_sandbox(pid, s);
	int inner = child > 1 && local_pid_is_sandbox(child, s);

	/*
	 * Killing the namespace's init makes the kernel kill every process in
	 * it. It is found by its command line (a fork of bwrap, same arguments),
	 * not by its parent: when the agent dies, the outer bwrap exits at once
	 * while the init lingers, re-parented, as long as orphans remain.
	 * Checking the command line also keeps a recycled pid from being shot.
	 */
	if (inner)
		kill(child, SIGKILL);
	if (outer) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
	}
	for (int i = 0; (outer || inner) && i < 500; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		if ((!outer || local_pid_dead(pid)) && (!inner || local_pid_dead(child)))
			break;
		nanosleep(&ts, NULL);
	}
	local_sbx_path(s, "agent.pid", path);
	unlink(path);
	local_sbx_path(s, "bwrap-info.json", path);
	unlink(path);
	unlink(s->sock);
}

static void local_set_limit(int resource, rlim_t want)
{
	struct rlimit rl;

	/* Only ever lower: an unprivileged process cannot raise a hard limit. */
	if (getrlimit(resource, &rl) < 0)
		return;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want)
		rl.rlim_max = want;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	setrlimit(resource, &rl);
}

/* The last part of sandbox.log, for a failed start's message. */
static void local_log_tail(const struct local_sbx *s, char *out, size_t len)
{
	char path[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	out[0] = '\0';
	local_sbx_path(s, "sandbox.log", path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && (size_t)st.st_size > len - 1)
		lseek(fd, st.st_size - (off_t)(len - 1), SEEK_SET);
	n = read(fd, out, len - 1);
	close(fd);
	out[n > 0 ? n : 0] = '\0';
	for (ssize_t i = n - 1; i >= 0 && (out[i] == '\n' || out[i] == ' '); i--)
		out[i] = '\0';
}

/*
 * Fork twice so bubblewrap is nobody's child here (no zombie for the
 * daemon to reap) and leads its own session. Between fork and exec only
 * async-signal-safe calls: the daemon is multithreaded.
 */
static pid_t local_spawn_detached(char *const argv[], int log_fd, int info_fd, int args_fd)
{
	int pp[2], devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	pid_t mid, pid = -1;
	ssize_t n;

	if (devnull < 0)
		return -1;
	if (pipe2(pp, O_CLOEXEC) < 0) {
		close(devnull);
		return -1;
	}
	mid = fork();
	if (mid < 0)
		goto out;
	if (mid == 0) {
		pid_t gc = fork();

		if (gc == 0) {
			sigset_t none;

			setsid();
			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
			local_set_limit(RLIMIT_NOFILE, 4096);
			/* Counted per host uid; root is exempt (see docs/engines/local.md). */
			local_set_limit(RLIMIT_NPROC, 4096);
			local_set_limit(RLIMIT_FSIZE, (rlim_t)1 << 30);
			local_set_limit(RLIMIT_CORE, 0);
			if (dup2(devnull, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0 ||
			    dup2(info_fd, 3) < 0 || dup2(args_fd, 4) < 0)
				_exit(126);
			close_range(5, ~0U, 0);
			/*
			 * bwrap stays as the sandbox's pid 1, whose /proc/1/environ
			 * every process inside can read: it must not carry the
			 * daemon's environment, engine keys included.
			 */
			execve(argv[0], argv, (char *const[]){ "PATH=/usr/bin:/bin", NULL });
			(void)!write(2, "twinbox: cannot execute bwrap\n", 30);
			_exit(127);
		}
		(void)!write(pp[1], &gc, sizeof(gc));
		_exit(gc < 0 ? 1 : 0);
	}
	close(pp[1]);
	pp[1] = -1;
	do
		n = read(pp[0], &pid, sizeof(pid));
	while (n < 0 && errno == EINTR);
	if (n != sizeof(pid))
		pid = -1;
	while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
out:
	close(pp[0]);
	if (pp[1] >= 0)
		close(pp[1]);
	close(devnull);
	return pid;
}

/* bwrap --args: NUL-terminated arguments in an anonymous file, read from its start. */
static int local_args_fd(const struct local_argv *e)
{
	int fd = memfd_create("twinbox-bwrap-args", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	for (size_t i = 0; i < e->n; i++) {
		size_t len = strlen(e->v[i]) + 1;
		if (write(fd, e->v[i], len) != (ssize_t)len) {
			close(fd);
			return -1;
		}
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int local_sandbox_start(struct tbx_local *l, struct tbx_call *call, const struct local_sbx *s,
			struct json_object *meta)
{
	struct local_argv argv = { 0 }, envargs = { 0 };
	struct tbx_envd_client *c = NULL;
	char path[PATH_MAX], tail[1536];
	int log_fd = -1, info_fd = -1, args_fd = -1, ret;
	struct timespec t0, now;
	pid_t pid;

	local_sandbox_stop(l, s);
	local_build_argv(l, s, meta, &argv, &envargs);
	if (argv.oom || envargs.oom) {
		ret = l->host->error_set(call, TBX_ENOMEM, "start sandbox %s: out of memory", s->id);
		goto out;
	}
	local_sbx_path(s, "run", path);
	if (local_mkdirs(path, 0700) < 0) {
		ret = l->host->error_set(call, TBX_EIO, "start sandbox %s: cannot make %s: %s",
					 s->id, path, strerror(errno));
		goto out;
	}
	local_sbx_path(s, "sandbox.log", path);
	log_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	local_sbx_path(s, "bwrap-info.json", path);
	info_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (log_fd < 0 || info_fd < 0) {
		ret = l->host->error_set(call, TBX_EIO, "start sandbox %s: cannot write in %s: %s",
					 s->id, s->dir, strerror(errno));
		goto out;
	}
	args_fd = local_args_fd(&envargs);
	if (args_fd < 0) {
		ret = l->host->error_set(call, TBX_EIO, "start sandbox %s: cannot pass bwrap its "
					 "environment: %s", s->id, strerror(errno));
		goto out;
	}
	pid = local_spawn_detached(argv.v, log_fd, info_fd, args_fd);
	if (pid < 0) {
		ret = l->host->error_set(call, TBX_EIO, "start sandbox %s: cannot fork: %s", s->id,
					 strerror(errno));
		goto out;
	}
	{
		char buf[32];
		int fd, n = snprintf(buf, sizeof(buf), "%d\n", (int)pid);

		local_sbx_path(s, "agent.pid", path);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, buf, (size_t)n) != n) {
			if (fd >= 0)
				close(fd);
			kill(-pid, SIGKILL);
			ret = l->host->error_set(call, TBX_EIO, "start sandbox %s: cannot write %s",
						 s->id, path);
			goto out;
		}
		close(fd);
	}

	c = tbx_envd_client_new(l->host, "http://localhost", s->sock);
	if (!c) {
		local_sandbox_stop(l, s);
		ret = l->host->error_set(call, TBX_ENOMEM, "start sandbox %s: out of memory", s->id);
		goto out;
	}
	/* Bounded wait until the agent answers /health. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long waited = 0, step = 5;; step = step < 100 ? step * 2 : 100) {
		struct timespec ts = { 0, step * 1000 * 1000 };
		char st = local_proc_state(pid, NULL);

		if (access(s->sock, F_OK) == 0 && tbx_envd_health(c, 1000) == 0) {
			ret = 0;
			break;
		}
		if (!st || st == 'Z' || st == 'X') {
			local_log_tail(s, tail, sizeof(tail));
			local_sandbox_stop(l, s);
			ret = l->host->error_set(call, TBX_EIO,
						 "sandbox %s did not start: bubblewrap exited: %s",
						 s->id, tail[0] ? tail : "(sandbox.log is empty)");
			break;
		}
		if (l->host->is_cancelled(call)) {
			local_sandbox_stop(l, s);
			ret = l->host->error_set(call, TBX_ECANCELED, "start sandbox %s: cancelled",
						 s->id);
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (waited > LOCAL_START_TIMEOUT_MS) {
			local_log_tail(s, tail, sizeof(tail));
			local_sandbox_stop(l, s);
			ret = l->host->error_set(call, TBX_ETIMEDOUT,
						 "sandbox %s did not answer within %d s: %s", s->id,
						 LOCAL_START_TIMEOUT_MS / 1000,
						 tail[0] ? tail : "(sandbox.log is empty)");
			break;
		}
		nanosleep(&ts, NULL);
	}
out:
	tbx_envd_client_free(c);
	if (log_fd >= 0)
		close(log_fd);
	if (info_fd >= 0)
		close(info_fd);
	if (args_fd >= 0)
		close(args_fd);
	local_argv_release(&argv);
	local_argv_release(&envargs);
	return ret;
}
