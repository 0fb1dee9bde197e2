/* SPDX-License-Identifier: MIT */
/*
 * Drives local.so end to end with real bubblewrap sandboxes: lifecycle,
 * exec streaming, timeouts, cancellation, files, isolation and cleanup.
 * Usage: test-local PATH/TO/local.so
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <time.h>
#include <twinbox/backend.h>
#include <unistd.h>

/* The host's per-call context, as this test's fake host defines it. */
struct tbx_call {
	int status;
	char message[4096];
	atomic_int cancelled;
};

static char data_root[256];
/* Overrides of the module's config keys, for the failure-path checks. */
static const char *cfg_bwrap, *cfg_agent;
static int failures;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (cond) {                                                     \
			printf("ok - ");                                        \
		} else {                                                        \
			printf("not ok - ");                                    \
			failures++;                                             \
		}                                                               \
		printf(__VA_ARGS__);                                            \
		printf("\n");                                                   \
		fflush(stdout);                                                 \
	} while (0)

static void host_log(struct tbx_call *call, enum tbx_log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > TBX_LOG_INFO)
		return;
	fprintf(stderr, "# [local] ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int host_error_set(struct tbx_call *call, int status, const char *fmt, ...)
{
	va_list ap;

	call->status = status;
	va_start(ap, fmt);
	vsnprintf(call->message, sizeof(call->message), fmt, ap);
	va_end(ap);
	return status;
}

static const char *host_config_get(struct tbx_call *call, const char *key)
{
	if (strcmp(key, "data_root") == 0)
		return data_root;
	if (strcmp(key, "bwrap") == 0)
		return cfg_bwrap;
	if (strcmp(key, "agent_path") == 0)
		return cfg_agent;
	return NULL;
}

static int host_is_cancelled(struct tbx_call *call)
{
	return atomic_load(&call->cancelled);
}

static const struct tbx_host_api host = {
	.struct_size = sizeof(struct tbx_host_api),
	.abi_minor = TBX_ABI_MINOR,
	.log = host_log,
	.error_set = host_error_set,
	.alloc = malloc,
	.realloc = realloc,
	.strdup = strdup,
	.free = free,
	.config_get = host_config_get,
	.is_cancelled = host_is_cancelled,
};

static const struct tbx_backend_ops *ops;
static void *inst;

static void call_reset(struct tbx_call *c)
{
	c->status = 0;
	c->message[0] = '\0';
	atomic_store(&c->cancelled, 0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Output collected by exec. */
struct out {
	char o[65536], e[65536];
	size_t on, en;
	double first_at;
	int cancel_after_first;
};

static int on_output(enum tbx_exec_stream s, const char *d, size_t n, void *p)
{
	struct out *out = p;
	char *buf = s == TBX_STREAM_STDOUT ? out->o : out->e;
	size_t *len = s == TBX_STREAM_STDOUT ? &out->on : &out->en;

	if (!out->first_at)
		out->first_at = now_s();
	if (*len + n < sizeof(out->o) - 1) {
		memcpy(buf + *len, d, n);
		*len += n;
		buf[*len] = '\0';
	}
	return out->cancel_after_first;
}

static int run(const char *id, const char *cmd, uint32_t timeout_ms, struct out *o,
	       struct tbx_exec_result *r, struct tbx_call *c)
{
	struct tbx_exec_request req = TBX_EXEC_REQUEST_INIT;

	memset(r, 0, sizeof(*r));
	r->struct_size = sizeof(*r);
	req.command = cmd;
	req.timeout_ms = timeout_ms;
	memset(o, 0, offsetof(struct out, cancel_after_first));
	return ops->exec(inst, c, id, &req, on_output, o, r);
}

static void info_release(struct tbx_sandbox_info *i)
{
	free(i->id);
	free(i->workdir);
	for (size_t k = 0; i->labels && i->labels[k]; k++)
		free(i->labels[k]);
	free(i->labels);
}

static void file_info_release(struct tbx_file_info *f)
{
	free(f->name);
	free(f->path);
	free(f->symlink_target);
}

static pid_t sandbox_pid(const char *id)
{
	char path[512];
	FILE *f;
	int pid = -1;

	snprintf(path, sizeof(path), "%s/sandboxes/%s/agent.pid", data_root, id);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = -1;
		fclose(f);
	}
	return pid;
}

static int pid_running(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] && p[2] != 'Z' && p[2] != 'X';
}

/* Live processes whose command line mentions our data root. */
static int count_leftovers(int kill_them)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d))) {
		char path[300], buf[8192];
		pid_t pid = (pid_t)atoi(de->d_name);
		ssize_t len;
		int fd;

		if (pid <= 1 || pid == getpid() || !pid_running(pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		for (ssize_t i = 0; i < len; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[len] = '\0';
		if (strstr(buf, data_root)) {
			n++;
			if (kill_them)
				kill(pid, SIGKILL);
		}
	}
	if (d)
		closedir(d);
	return n;
}

static void *cancel_later(void *arg)
{
	struct tbx_call *c = arg;

	usleep(700 * 1000);
	atomic_store(&c->cancelled, 1);
	return NULL;
}

struct connect_job {
	const char *id;
	int ret;
	struct tbx_call call;
	struct tbx_sandbox_info info;
};

static void *connect_thread(void *arg)
{
	struct connect_job *j = arg;

	j->info.struct_size = sizeof(j->info);
	j->ret = ops->sandbox_connect(inst, &j->call, j->id, 60, &j->info);
	return NULL;
}

struct exec_job {
	const char *id;
	int ret;
	struct tbx_call call;
	struct out out;
	struct tbx_exec_result r;
};

static void *exec_thread(void *arg)
{
	struct exec_job *j = arg;

	j->ret = run(j->id, "sleep 30", 0, &j->out, &j->r, &j->call);
	return NULL;
}

static int count_bwrap_for(const char *id)
{
	char needle[512];
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	snprintf(needle, sizeof(needle), "%s/sandboxes/%s/home", data_root, id);
	while (d && (de = readdir(d))) {
		char path[300], buf[8192], comm[64] = "";
		pid_t pid = (pid_t)atoi(de->d_name);
		ssize_t len;
		int fd;
		FILE *f;

		if (pid <= 1 || !pid_running(pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		if ((f = fopen(path, "r"))) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			fclose(f);
		}
		if (strncmp(comm, "bwrap", 5) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		for (ssize_t i = 0; i < len; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[len] = '\0';
		/* bwrap forks: count only the outer process (its parent is not a bwrap of ours). */
		if (strstr(buf, needle)) {
			char spath[64], sbuf[512], *p;
			pid_t ppid = 0;

			snprintf(spath, sizeof(spath), "/proc/%d/stat", (int)pid);
			if ((f = fopen(spath, "r"))) {
				size_t k = fread(sbuf, 1, sizeof(sbuf) - 1, f);

				sbuf[k] = '\0';
				fclose(f);
				if ((p = strrchr(sbuf, ')')))
					ppid = (pid_t)atoi(p + 4);
			}
			snprintf(spath, sizeof(spath), "/proc/%d/comm", (int)ppid);
			comm[0] = '\0';
			if ((f = fopen(spath, "r"))) {
				if (!fgets(comm, sizeof(comm), f))
					comm[0] = '\0';
				fclose(f);
			}
			if (strncmp(comm, "bwrap", 5) != 0)
				n++;
		}
	}
	if (d)
		closedir(d);
	return n;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	if (flag == FTW_DP || flag == FTW_D)
		chmod(p, 0700);
	remove(p);
	return 0;
}

/*
 * Sandboxes outlive their creator by design, so a test killed by a timeout
 * or a crash would leak them. A watchdog child waits for this process to
 * die (EOF on a pipe) and then kills what is left and removes the data root.
 */
static void watchdog_start(void)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		char c;
		int devnull = open("/dev/null", O_RDWR);

		close(p[1]);
		if (devnull >= 0) {
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		setsid(); /* outlive a kill of the test's process group */
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		count_leftovers(1);
		nftw(data_root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
		_exit(0);
	}
	close(p[0]);
	/* The write end stays open, without CLOEXEC games: only this process holds it. */
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
}

/*
 * A stand-in for the gateway's two Unix sockets: each connection gets one
 * line back, "<name>:<the line it sent>", then EOF. It can be restarted (new
 * socket files, as a restarted twind makes) while sandboxes use it.
 */
struct fake_gw {
	char dir[300];
	int fd[2];
	atomic_int stop;
	pthread_t th;
};

static int fake_gw_listen(const char *dir, const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, name);
	unlink(sa.sun_path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 8) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void *fake_gw_serve(void *arg)
{
	static const char *const names[] = { "socks", "connect" };
	struct fake_gw *gw = arg;

	while (!atomic_load(&gw->stop)) {
		struct pollfd p[2] = { { .fd = gw->fd[0], .events = POLLIN },
				       { .fd = gw->fd[1], .events = POLLIN } };
		if (poll(p, 2, 100) <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			char line[256], reply[300];
			ssize_t n;
			int c;

			if (!(p[i].revents & POLLIN) || (c = accept(gw->fd[i], NULL, NULL)) < 0)
				continue;
			n = read(c, line, sizeof(line) - 1);
			line[n > 0 ? n : 0] = '\0';
			line[strcspn(line, "\n")] = '\0';
			n = snprintf(reply, sizeof(reply), "%s:%s\n", names[i], line);
			(void)!write(c, reply, (size_t)n);
			close(c);
		}
	}
	return NULL;
}

static int fake_gw_start(struct fake_gw *gw)
{
	gw->fd[0] = fake_gw_listen(gw->dir, "socks.sock");
	gw->fd[1] = fake_gw_listen(gw->dir, "connect.sock");
	atomic_store(&gw->stop, 0);
	return gw->fd[0] < 0 || gw->fd[1] < 0 ? -1 : pthread_create(&gw->th, NULL, fake_gw_serve, gw);
}

static void fake_gw_stop(struct fake_gw *gw)
{
	atomic_store(&gw->stop, 1);
	pthread_join(gw->th, NULL);
	close(gw->fd[0]);
	close(gw->fd[1]);
}

int main(int argc, char **argv)
{
	const struct tbx_plugin_desc *(*entry)(const struct tbx_host_api *);
	const struct tbx_plugin_desc *desc;
	struct tbx_sandbox_spec spec = TBX_SANDBOX_SPEC_INIT;
	struct tbx_sandbox_info info = { .struct_size = sizeof(info) }, info2 = info;
	struct tbx_exec_result r;
	struct tbx_call c = { 0 };
	struct out *o = calloc(1, sizeof(*o));
	char id[128], id2[128], path[512];
	const char *labels1[] = { "suite=local", "n=1", NULL };
	const char *labels2[] = { "suite=local", "n=2", NULL };
	const char *env[] = { "FOO=bar baz", NULL };
	void *dl;
	int ret;

	if (argc < 2) {
		fprintf(stderr, "usage: %s local.so\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		printf("Bail out! dlopen: %s\n", dlerror());
		return 1;
	}
	entry = (const struct tbx_plugin_desc *(*)(const struct tbx_host_api *))dlsym(
		dl, TBX_PLUGIN_ENTRY_SYMBOL);
	desc = entry ? entry(&host) : NULL;
	CHECK(desc && desc->abi_major == TBX_ABI_MAJOR && desc->kind == TBX_PLUGIN_BACKEND &&
		      strcmp(desc->name, "local") == 0,
	      "module descriptor");
	if (!desc)
		return 1;
	ops = desc->ops;
	CHECK(ops->preview_url == NULL, "preview_url is not offered");

	snprintf(data_root, sizeof(data_root), "/tmp/tbx-local-XXXXXX");
	if (!mkdtemp(data_root)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	/* Failure paths first: no bubblewrap, then an agent that dies at once. */
	cfg_bwrap = "/nonexistent/bwrap";
	watchdog_start();
	ret = ops->instance_new(&c, &inst);
	CHECK(ret == TBX_EUNAVAIL && strstr(c.message, "apt-get install bubblewrap"),
	      "missing bwrap is reported (%s)", c.message);
	cfg_bwrap = NULL;
	cfg_agent = "/bin/false";
	call_reset(&c);
	ret = ops->instance_new(&c, &inst);
	if (ret == 0) {
		char sbdir[300];
		DIR *d;
		int entries = 0;
		struct dirent *de;

		call_reset(&c);
		ret = ops->sandbox_create(inst, &c, &spec, &info);
		CHECK(ret == TBX_EIO && strstr(c.message, "did not start"),
		      "a sandbox whose agent dies fails to start (%s)", c.message);
		snprintf(sbdir, sizeof(sbdir), "%s/sandboxes", data_root);
		d = opendir(sbdir);
		while (d && (de = readdir(d)))
			entries += de->d_name[0] != '.';
		if (d)
			closedir(d);
		CHECK(entries == 0, "a failed create leaves no directory (%d)", entries);
		ops->instance_free(inst);
	}
	cfg_agent = NULL;
	call_reset(&c);
	ret = ops->instance_new(&c, &inst);
	CHECK(ret == 0, "instance_new (%s)", c.message);
	if (ret) {
		printf("1..%d\n", failures);
		return 1;
	}

	/* --- create --- */
	call_reset(&c);
	spec.labels = labels1;
	spec.env = env;
	spec.timeout_s = 120;
	ret = ops->sandbox_create(inst, &c, &spec, &info);
	CHECK(ret == 0 && info.id && strlen(info.id) == 20, "create (%s)", c.message);
	if (ret) {
		printf("Bail out! cannot create a sandbox: %s\n", c.message);
		goto cleanup;
	}
	snprintf(id, sizeof(id), "%s", info.id);
	CHECK(info.workdir && strcmp(info.workdir, "/home/user/project") == 0, "workdir %s",
	      info.workdir);
	CHECK(info.state == TBX_SANDBOX_RUNNING, "state running");
	info_release(&info);

	/* --- exec --- */
	call_reset(&c);
	ret = run(id, "echo hi; echo err >&2; exit 3", 0, o, &r, &c);
	CHECK(ret == 0 && r.exit_code == 3 && !r.timed_out && !r.cancelled,
	      "exec exit 3 (ret %d exit %d: %s)", ret, r.exit_code, c.message);
	CHECK(strcmp(o->o, "hi\n") == 0, "stdout streamed '%s'", o->o);
	CHECK(strcmp(o->e, "err\n") == 0, "stderr streamed '%s'", o->e);

	call_reset(&c);
	ret = run(id, "id -u; id -g; hostname; echo \"$FOO\"; pwd; echo $HOME; echo $USER", 0, o,
		  &r, &c);
	CHECK(ret == 0 && r.exit_code == 0 &&
		      strcmp(o->o, "1000\n1000\nsandbox\nbar baz\n/home/user/project\n/home/user\nuser\n") == 0,
	      "identity inside: '%s' (%s)", o->o, c.message);

	call_reset(&c);
	{
		double t0 = now_s();

		ret = run(id, "echo first; sleep 1.5; echo second", 0, o, &r, &c);
		CHECK(ret == 0 && strcmp(o->o, "first\nsecond\n") == 0 && o->first_at - t0 < 1.2,
		      "output streams as it is produced (first chunk after %.2fs)", o->first_at - t0);
	}

	call_reset(&c);
	ret = run(id, "kill -TERM $$", 0, o, &r, &c);
	CHECK(ret == 0 && r.exit_code == -1 && r.signal == SIGTERM, "signal reported (%d, %d)",
	      r.exit_code, r.signal);

	/* --- the sandbox outlives the module instance (a daemon restart) --- */
	{
		pid_t before = sandbox_pid(id);

		ops->instance_free(inst);
		call_reset(&c);
		ret = ops->instance_new(&c, &inst);
		CHECK(ret == 0, "instance_new again");
		call_reset(&c);
		info.struct_size = sizeof(info);
		ret = ops->sandbox_connect(inst, &c, id, 0, &info);
		CHECK(ret == 0 && sandbox_pid(id) == before && pid_running(before),
		      "connect after a restart reuses the running sandbox (%s)", c.message);
		if (ret == 0)
			info_release(&info);
	}

	/* --- a dead agent is restarted on the next op --- */
	call_reset(&c);
	ret = run(id, "kill -9 $PPID; sleep 5", 0, o, &r, &c);
	CHECK(ret != 0 || r.exit_code != 0, "killing the agent breaks that exec (%d: %s)", ret,
	      c.message);
	usleep(300 * 1000);
	call_reset(&c);
	ret = run(id, "echo again", 0, o, &r, &c);
	CHECK(ret == 0 && strcmp(o->o, "again\n") == 0, "the next exec restarts it (%s)", c.message);

	/* --- isolation --- */
	call_reset(&c);
	ret = run(id, "grep ':' /proc/net/dev | cut -d: -f1 | tr -d ' '", 0, o, &r, &c);
	CHECK(ret == 0 && strcmp(o->o, "lo\n") == 0, "network: loopback only ('%s')", o->o);
	{
		int ls = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in sa = { .sin_family = AF_INET,
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t sl = sizeof(sa);
		char cmd[256];

		bind(ls, (struct sockaddr *)&sa, sizeof(sa));
		listen(ls, 4);
		getsockname(ls, (struct sockaddr *)&sa, &sl);
		snprintf(cmd, sizeof(cmd),
			 "timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d' 2>/dev/null && echo reached || echo blocked",
			 ntohs(sa.sin_port));
		call_reset(&c);
		ret = run(id, cmd, 0, o, &r, &c);
		CHECK(ret == 0 && strcmp(o->o, "blocked\n") == 0,
		      "host's 127.0.0.1:%d is unreachable ('%s')", ntohs(sa.sin_port), o->o);
		close(ls);
	}
	call_reset(&c);
	ret = run(id, "touch /usr/x 2>/dev/null && echo writable || echo readonly; "
		      "test -r /etc/shadow && test -s /etc/shadow && echo shadow || echo noshadow; "
		      "ls /home", 0, o, &r, &c);
	CHECK(ret == 0 && strcmp(o->o, "readonly\nnoshadow\nuser\n") == 0,
	      "host system read-only, secrets masked, no other homes ('%s')", o->o);
	call_reset(&c);
	ret = run(id, "ulimit -n; ulimit -c; cat /proc/1/comm; grep CapEff /proc/self/status", 0, o,
		  &r, &c);
	CHECK(ret == 0 && strncmp(o->o, "4096\n0\n", 7) == 0 &&
		      strstr(o->o, "CapEff:\t0000000000000000"),
	      "limits and no capabilities ('%s')", o->o);

	/* --- timeout and cancellation --- */
	call_reset(&c);
	{
		double t0 = now_s();

		ret = run(id, "sleep 20", 600, o, &r, &c);
		CHECK(ret == 0 && r.timed_out && !r.cancelled && now_s() - t0 < 5,
		      "timeout: timed_out set after %.2fs (%s)", now_s() - t0, c.message);
	}
	call_reset(&c);
	{
		pthread_t th;
		double t0 = now_s();

		pthread_create(&th, NULL, cancel_later, &c);
		ret = run(id, "sleep 30", 0, o, &r, &c);
		pthread_join(th, NULL);
		CHECK(ret == 0 && r.cancelled && now_s() - t0 < 5,
		      "cancel: cancelled set after %.2fs (%s)", now_s() - t0, c.message);
	}
	call_reset(&c);
	o->cancel_after_first = 1;
	ret = run(id, "echo go; sleep 30", 0, o, &r, &c);
	o->cancel_after_first = 0;
	CHECK(ret == 0 && r.cancelled, "cancel from the output callback");
	usleep(300 * 1000);
	call_reset(&c);
	ret = run(id, "for p in /proc/[0-9]*; do cat $p/comm 2>/dev/null; done | grep -c '^sleep$'",
		  0, o, &r, &c);
	CHECK(ret == 0 && strcmp(o->o, "0\n") == 0, "killed commands leave no process ('%s')",
	      o->o);

	/* --- files --- */
	{
		char *data = NULL, big_src[256];
		size_t len = 0;
		struct tbx_file_info fi = { .struct_size = sizeof(fi) };
		struct tbx_file_info *list = NULL;
		size_t n = 0;
		int found_a = 0, found_b = 0;

		call_reset(&c);
		ret = ops->file_write(inst, &c, id, "/home/user/project/a/b.txt", "hello", 5);
		CHECK(ret == 0, "write with parents (%s)", c.message);
		call_reset(&c);
		ret = ops->file_read(inst, &c, id, "/home/user/project/a/b.txt", &data, &len);
		CHECK(ret == 0 && len == 5 && memcmp(data, "hello", 5) == 0, "read back");
		free(data);
		data = NULL;

		for (int i = 0; i < 256; i++)
			big_src[i] = (char)i;
		call_reset(&c);
		ret = ops->file_write(inst, &c, id, "/home/user/project/bin.dat", big_src, 256);
		ret = ret ? ret : ops->file_read(inst, &c, id, "/home/user/project/bin.dat", &data, &len);
		CHECK(ret == 0 && len == 256 && memcmp(data, big_src, 256) == 0, "binary round trip");
		free(data);
		data = NULL;
		{
			size_t blen = 3u << 20;
			char *big = malloc(blen);

			for (size_t i = 0; i < blen; i++)
				big[i] = (char)(i * 7 + (i >> 9));
			call_reset(&c);
			ret = ops->file_write(inst, &c, id, "big.bin", big, blen);
			ret = ret ? ret : ops->file_read(inst, &c, id, "/home/user/big.bin", &data, &len);
			CHECK(ret == 0 && len == blen && memcmp(data, big, blen) == 0,
			      "3 MiB round trip, relative path under home (%s)", c.message);
			free(big);
			free(data);
			data = NULL;
		}

		call_reset(&c);
		ret = ops->file_stat(inst, &c, id, "/home/user/project/a/b.txt", &fi);
		CHECK(ret == 0 && fi.type == TBX_FILE_REGULAR && fi.size == 5 &&
			      strcmp(fi.name, "b.txt") == 0 &&
			      strcmp(fi.path, "/home/user/project/a/b.txt") == 0 && fi.mtime > 1600000000 &&
			      (fi.mode & 0777) == 0644,
		      "stat (mode %o)", fi.mode);
		file_info_release(&fi);

		call_reset(&c);
		ret = ops->file_list(inst, &c, id, "/home/user/project", 2, &list, &n);
		for (size_t i = 0; ret == 0 && i < n; i++) {
			if (strcmp(list[i].path, "/home/user/project/a") == 0 &&
			    list[i].type == TBX_FILE_DIRECTORY)
				found_a = 1;
			if (strcmp(list[i].path, "/home/user/project/a/b.txt") == 0)
				found_b = 1;
			file_info_release(&list[i]);
		}
		free(list);
		CHECK(ret == 0 && n == 3 && found_a && found_b, "list depth 2 (%zu entries)", n);

		call_reset(&c);
		ret = ops->file_mkdir(inst, &c, id, "/home/user/project/d/e");
		CHECK(ret == 0, "mkdir with parents (%s)", c.message);
		call_reset(&c);
		ret = ops->file_mkdir(inst, &c, id, "/home/user/project/d/e");
		CHECK(ret == TBX_EEXIST, "mkdir of an existing dir → EEXIST (%d %s)", ret, c.message);

		call_reset(&c);
		ret = ops->file_rename(inst, &c, id, "/home/user/project/a/b.txt",
				       "/home/user/project/d/e/c.txt");
		CHECK(ret == 0, "rename (%s)", c.message);
		call_reset(&c);
		ret = ops->file_read(inst, &c, id, "/home/user/project/d/e/c.txt", &data, &len);
		CHECK(ret == 0 && len == 5, "read renamed file");
		free(data);
		data = NULL;
		call_reset(&c);
		ret = ops->file_rename(inst, &c, id, "/home/user/project/nope", "/home/user/project/x");
		CHECK(ret == TBX_ENOENT, "rename of a missing file → ENOENT (%s)", c.message);

		call_reset(&c);
		ret = ops->file_remove(inst, &c, id, "/home/user/project/d");
		CHECK(ret == 0, "remove recursively (%s)", c.message);
		call_reset(&c);
		ret = ops->file_remove(inst, &c, id, "/home/user/project/d");
		CHECK(ret == 0, "remove of a missing path is fine (%s)", c.message);
		call_reset(&c);
		ret = ops->file_stat(inst, &c, id, "/home/user/project/d", &fi);
		CHECK(ret == TBX_ENOENT, "stat of removed dir → ENOENT");

		call_reset(&c);
		ret = ops->file_read(inst, &c, id, "/home/user/project/missing.txt", &data, &len);
		CHECK(ret == TBX_ENOENT && strstr(c.message, "/home/user/project/missing.txt"),
		      "read of a missing file → ENOENT naming it (%s)", c.message);
		call_reset(&c);
		ret = ops->file_read(inst, &c, id, "/home/user/project", &data, &len);
		CHECK(ret == TBX_EISDIR, "read of a directory → EISDIR (%d %s)", ret, c.message);
		call_reset(&c);
		ret = ops->file_write(inst, &c, id, "/usr/bin/evil", "x", 1);
		CHECK(ret == TBX_EPERM, "write outside home → EPERM (%d %s)", ret, c.message);
		call_reset(&c);
		ret = ops->file_write(inst, &c, id, "/home/user/project/keep.txt", "kept", 4);
		CHECK(ret == 0, "write a file to survive pause");
	}

	/* --- pause / resume --- */
	{
		pid_t before = sandbox_pid(id);
		char *data = NULL;
		size_t len = 0;
		struct tbx_sandbox_info *arr = NULL;
		size_t n = 0;
		struct connect_job j1 = { .id = id }, j2 = { .id = id };
		pthread_t t1, t2;

		call_reset(&c);
		ret = ops->sandbox_pause(inst, &c, id);
		CHECK(ret == 0 && before > 0 && !pid_running(before), "pause stops its processes (%s)",
		      c.message);
		call_reset(&c);
		ret = ops->sandbox_pause(inst, &c, id);
		CHECK(ret == TBX_EPAUSED, "pause again → EPAUSED (%s)", c.message);
		call_reset(&c);
		ret = run(id, "echo no", 0, o, &r, &c);
		CHECK(ret == TBX_EUNAVAIL, "exec on a paused sandbox fails (%s)", c.message);
		call_reset(&c);
		ret = ops->sandbox_list(inst, &c, NULL, &arr, &n);
		CHECK(ret == 0 && n == 1 && arr[0].state == TBX_SANDBOX_PAUSED, "list shows paused");
		for (size_t i = 0; i < n; i++)
			info_release(&arr[i]);
		free(arr);

		/* Two connects at once resume it exactly once. */
		pthread_create(&t1, NULL, connect_thread, &j1);
		pthread_create(&t2, NULL, connect_thread, &j2);
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
		CHECK(j1.ret == 0 && j2.ret == 0 && j1.info.state == TBX_SANDBOX_RUNNING,
		      "two concurrent connects resume it (%s / %s)", j1.call.message, j2.call.message);
		CHECK(count_bwrap_for(id) == 1, "exactly one bubblewrap runs (%d)", count_bwrap_for(id));
		info_release(&j1.info);
		info_release(&j2.info);
		call_reset(&c);
		ret = ops->file_read(inst, &c, id, "/home/user/project/keep.txt", &data, &len);
		CHECK(ret == 0 && len == 4 && memcmp(data, "kept", 4) == 0, "files survive pause");
		free(data);
		call_reset(&c);
		ret = run(id, "echo back", 0, o, &r, &c);
		CHECK(ret == 0 && strcmp(o->o, "back\n") == 0, "exec after resume");
		call_reset(&c);
		ret = ops->sandbox_connect(inst, &c, id, 0, &info);
		CHECK(ret == 0 && sandbox_pid(id) == sandbox_pid(id), "connect to a running sandbox");
		info_release(&info);
		call_reset(&c);
		ret = ops->sandbox_set_timeout(inst, &c, id, 600);
		CHECK(ret == 0, "set_timeout (advisory)");
	}

	/* --- a second sandbox, list by label --- */
	call_reset(&c);
	spec.labels = labels2;
	spec.env = NULL;
	spec.egress_proxy_url = "http://10.0.0.1:3128";
	ret = ops->sandbox_create(inst, &c, &spec, &info2);
	CHECK(ret == 0, "create a second sandbox (%s)", c.message);
	snprintf(id2, sizeof(id2), "%s", ret == 0 ? info2.id : "none");
	if (ret == 0)
		info_release(&info2);
	call_reset(&c);
	ret = run(id2, "echo $HTTPS_PROXY", 0, o, &r, &c);
	CHECK(ret == 0 && strcmp(o->o, "http://10.0.0.1:3128\n") == 0, "egress proxy exported");
	{
		const char *q1[] = { "suite=local", NULL }, *q2[] = { "n=2", NULL };
		const char *q3[] = { "suite=other", NULL };
		const char *const *qs[] = { q1, q2, q3 };
		size_t want[] = { 2, 1, 0 };

		for (int k = 0; k < 3; k++) {
			struct tbx_sandbox_info *arr = NULL;
			size_t n = 99;
			int has_label = 1;

			call_reset(&c);
			ret = ops->sandbox_list(inst, &c, qs[k], &arr, &n);
			for (size_t i = 0; i < n && ret == 0; i++) {
				int hit = 0;

				for (size_t m = 0; arr[i].labels && arr[i].labels[m]; m++)
					if (strcmp(arr[i].labels[m], qs[k][0]) == 0)
						hit = 1;
				has_label &= hit;
				info_release(&arr[i]);
			}
			free(arr);
			CHECK(ret == 0 && n == want[k] && has_label, "list %s → %zu", qs[k][0], n);
		}
	}

	/* --- egress: a gateway on Unix sockets, the sandbox's only way out --- */
	{
		struct fake_gw gw = { 0 };
		char url[600], id3[128];
		const char *probe = "echo \"$ALL_PROXY $HTTPS_PROXY $NO_PROXY\"; ls /run/twinbox-gateway;"
			" exec 3<>/dev/tcp/127.0.0.1/1080; echo ping >&3; cat <&3;"
			" exec 4<>/dev/tcp/127.0.0.1/3128; echo pong >&4; cat <&4";

		snprintf(gw.dir, sizeof(gw.dir), "%s/gateway", data_root);
		mkdir(gw.dir, 0700);
		CHECK(fake_gw_start(&gw) == 0, "a fake gateway listens on %s", gw.dir);
		call_reset(&c);
		spec.labels = NULL;
		spec.egress_proxy_url = "socks5h://u:p@localhost/a/../b/socks.sock";
		ret = ops->sandbox_create(inst, &c, &spec, &info2);
		CHECK(ret == TBX_EINVAL, "a Unix socket path with .. is refused (%s)", c.message);
		snprintf(url, sizeof(url), "socks5h://sbx_1:pw%%2F@localhost%s/socks.sock", gw.dir);
		spec.egress_proxy_url = url;
		call_reset(&c);
		ret = ops->sandbox_create(inst, &c, &spec, &info2);
		CHECK(ret == 0, "create with the gateway as egress (%s)", c.message);
		snprintf(id3, sizeof(id3), "%s", ret == 0 ? info2.id : "none");
		if (ret == 0)
			info_release(&info2);
		call_reset(&c);
		ret = run(id3, probe, 20000, o, &r, &c);
		CHECK(ret == 0 && strcmp(o->o, "socks5h://sbx_1:pw%2F@127.0.0.1:1080 "
				      "http://sbx_1:pw%2F@127.0.0.1:3128 localhost,127.0.0.1,::1\n"
				      "connect.sock\nsocks.sock\nsocks:ping\nconnect:pong\n") == 0,
		      "proxy variables name the sandbox's own ports, which reach the gateway (%s%s)",
		      o->o, o->e);
		/* twind restarting makes new socket files: the directory is what is bound. */
		fake_gw_stop(&gw);
		call_reset(&c);
		ret = run(id3, "exec 3<>/dev/tcp/127.0.0.1/1080 && cat <&3; echo rc=$?", 20000, o, &r,
			  &c);
		CHECK(ret == 0 && strstr(o->o, "socks:") == NULL,
		      "with the gateway down, the port answers nothing (%s)", o->o);
		CHECK(fake_gw_start(&gw) == 0, "the fake gateway restarts");
		call_reset(&c);
		ret = run(id3, "exec 3<>/dev/tcp/127.0.0.1/1080; echo again >&3; cat <&3", 20000, o, &r,
			  &c);
		CHECK(ret == 0 && strcmp(o->o, "socks:again\n") == 0,
		      "the restarted gateway is reached again (%s%s)", o->o, o->e);
		call_reset(&c);
		ret = run(id3, "exec 3<>/dev/tcp/10.0.0.1/80", 20000, o, &r, &c);
		CHECK(ret == 0 && r.exit_code != 0, "nothing else is reachable (%s)", o->e);
		fake_gw_stop(&gw);
		call_reset(&c);
		CHECK(ops->sandbox_kill(inst, &c, id3) == 0, "kill the egress sandbox (%s)", c.message);
		spec.egress_proxy_url = NULL;
	}

	/* --- kill --- */
	call_reset(&c);
	ret = ops->sandbox_kill(inst, &c, id);
	snprintf(path, sizeof(path), "%s/sandboxes/%s", data_root, id);
	CHECK(ret == 0 && access(path, F_OK) != 0, "kill removes the directory (%s)", c.message);
	call_reset(&c);
	ret = ops->sandbox_connect(inst, &c, id, 0, &info);
	CHECK(ret == TBX_EGONE && strstr(c.message, id), "connect after kill → EGONE (%s)",
	      c.message);
	call_reset(&c);
	ret = ops->sandbox_kill(inst, &c, id);
	CHECK(ret == TBX_ENOENT, "kill again → ENOENT (%s)", c.message);
	call_reset(&c);
	ret = run(id, "true", 0, o, &r, &c);
	CHECK(ret == TBX_EGONE, "exec after kill → EGONE");
	call_reset(&c);
	ret = ops->sandbox_connect(inst, &c, "../../etc", 0, &info);
	CHECK(ret == TBX_EINVAL, "a bad id is refused (%s)", c.message);
	{
		struct exec_job j = { .id = id2 };
		pthread_t th;

		pthread_create(&th, NULL, exec_thread, &j);
		usleep(500 * 1000);
		call_reset(&c);
		ret = ops->sandbox_kill(inst, &c, id2);
		pthread_join(th, NULL);
		CHECK(ret == 0, "kill the second sandbox while it runs a command");
		CHECK(j.ret == TBX_EGONE, "that command's exec → EGONE (%d %s)", j.ret,
		      j.call.message);
	}

cleanup:
	{
		struct tbx_sandbox_info *arr = NULL;
		size_t n = 0;

		call_reset(&c);
		if (ops->sandbox_list(inst, &c, NULL, &arr, &n) == 0) {
			for (size_t i = 0; i < n; i++) {
				call_reset(&c);
				ops->sandbox_kill(inst, &c, arr[i].id);
				info_release(&arr[i]);
			}
			free(arr);
		}
	}
	usleep(200 * 1000);
	{
		int left = count_leftovers(0);

		CHECK(left == 0, "no sandbox process left behind (%d)", left);
		if (left)
			count_leftovers(1);
	}
	ops->instance_free(inst);
	nftw(data_root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(o);
	printf("# %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
