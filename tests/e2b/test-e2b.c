/* SPDX-License-Identifier: MIT */
/*
 * Drives e2b.so against the fake E2B (tests/fakes/e2b): every op, the errors
 * the core must tell apart, the connection pool, and each injected fault
 * ending as a retry that succeeds or a clear error, never a hang.
 * Usage: test-e2b PATH/TO/e2b.so PATH/TO/fake_e2b.py
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <dlfcn.h>
#include <json-c/json.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <twinbox/backend.h>
#include <unistd.h>

#define TEST_KEY "e2b_twinbox_c_test_key_5f3a9d0c1b2e"

struct tbx_call {
	int status;
	char message[4096];
	atomic_int cancelled;
};

static const struct tbx_backend_ops *ops;
static void *inst;
static int failures, tests;
static char fake_url[64];
static pid_t fake_pid;
static int fake_stdin = -1;
static char *logbuf;
static size_t loglen;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* One TAP line: output quoted in messages must not break it. */
static void tap(int ok, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = '|';
	tests++;
	if (!ok)
		failures++;
	printf("%s %d - %s\n", ok ? "ok" : "not ok", tests, msg);
	fflush(stdout);
}

#define CHECK(cond, ...) tap(!!(cond), __VA_ARGS__)

/* ---- the minimal host -------------------------------------------------- */

static void host_log(struct tbx_call *call, enum tbx_log_level level, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = strlen(line);
	pthread_mutex_lock(&log_lock);
	logbuf = realloc(logbuf, loglen + n + 2);
	memcpy(logbuf + loglen, line, n);
	loglen += n;
	logbuf[loglen++] = '\n';
	logbuf[loglen] = '\0';
	pthread_mutex_unlock(&log_lock);
	if (level <= TBX_LOG_INFO)
		fprintf(stderr, "# [e2b] %s\n", line);
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

/* Short backoffs so fault tests stay fast; everything else from the environment. */
static const char *host_config_get(struct tbx_call *call, const char *key)
{
	static const char *const cfg[][2] = {
		{ "retry_base_ms", "20" },   { "retry_max_ms", "200" },
		{ "retry_budget_ms", "4000" }, { "retry_attempts", "4" },
		{ "stream_stall_ms", "3000" }, { "request_timeout_ms", "15000" },
	};

	for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++)
		if (strcmp(cfg[i][0], key) == 0)
			return cfg[i][1];
	return NULL;
}

static int host_is_cancelled(struct tbx_call *call)
{
	return call && atomic_load(&call->cancelled);
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

static void call_init(struct tbx_call *c)
{
	memset(c, 0, sizeof(*c));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the fake and its admin routes ------------------------------------- */

static int fake_start(const char *script)
{
	int in[2], out[2];
	char line[128] = "", tmpl[] = "/tmp/e2b-c-test-XXXXXX";
	FILE *f;

	if (!mkdtemp(tmpl) || pipe(in) < 0 || pipe(out) < 0)
		return -1;
	fake_pid = fork();
	if (fake_pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execlp("python3", "python3", script, "--watch-stdin", "--api-key", TEST_KEY, "--root",
		       tmpl, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	fake_stdin = in[1];
	f = fdopen(out[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || strncmp(line, "PORT ", 5) != 0)
		return -1;
	snprintf(fake_url, sizeof(fake_url), "http://127.0.0.1:%d", atoi(line + 5));
	fclose(f);
	return 0;
}

static void fake_stop(void)
{
	int st;

	if (fake_stdin >= 0)
		close(fake_stdin);
	if (fake_pid > 0 && waitpid(fake_pid, &st, 0) < 0)
		kill(fake_pid, SIGKILL);
}

struct buf {
	char *d;
	size_t n;
};

static size_t buf_write(char *p, size_t s, size_t n, void *u)
{
	struct buf *b = u;

	b->d = realloc(b->d, b->n + s * n + 1);
	memcpy(b->d + b->n, p, s * n);
	b->n += s * n;
	b->d[b->n] = '\0';
	return s * n;
}

/* An admin request; the parsed JSON answer (json_object_put it). */
static struct json_object *admin(const char *method, const char *path, const char *body)
{
	/* One handle, so the test's own requests keep one connection. */
	static CURL *c;
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	struct buf b = { 0 };
	char url[256];
	struct json_object *j;

	if (!c)
		c = curl_easy_init();
	else
		curl_easy_reset(c);
	snprintf(url, sizeof(url), "%s/_fake%s", fake_url, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_perform(c);
	curl_slist_free_all(h);
	j = b.d ? json_tokener_parse(b.d) : NULL;
	free(b.d);
	return j;
}

static void faults(const char *rules_json)
{
	char body[4096];

	snprintf(body, sizeof(body), "{\"rules\":%s}", rules_json);
	json_object_put(admin("POST", "/faults", body));
}

/* The fake's record of sandbox \p id (json_object_put the result), or NULL. */
static struct json_object *fake_sandbox(const char *id)
{
	struct json_object *all = admin("GET", "/sandboxes", NULL), *found = NULL;

	for (size_t i = 0; all && i < json_object_array_length(all); i++) {
		struct json_object *s = json_object_array_get_idx(all, i), *v;

		if (json_object_object_get_ex(s, "id", &v) && strcmp(json_object_get_string(v), id) == 0)
			found = json_object_get(s);
	}
	json_object_put(all);
	return found;
}

static const char *jstr(struct json_object *o, const char *path)
{
	struct json_object *v = o;
	char key[128];
	const char *p = path;

	while (v && *p) {
		size_t n = strcspn(p, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		if (!json_object_object_get_ex(v, key, &v))
			return NULL;
		p += n + (p[n] == '.');
	}
	return v ? json_object_get_string(v) : NULL;
}

static long route_count(const char *route)
{
	struct json_object *st = admin("GET", "/stats", NULL), *routes, *v;
	long n = 0;

	if (st && json_object_object_get_ex(st, "routes", &routes) &&
	    json_object_object_get_ex(routes, route, &v))
		n = json_object_get_int64(v);
	json_object_put(st);
	return n;
}

/* ---- helpers over the ops ----------------------------------------------- */

static char *create(const char *const *labels, const char *const *env, uint32_t flags,
		    struct tbx_call *c)
{
	struct tbx_sandbox_spec spec = TBX_SANDBOX_SPEC_INIT;
	struct tbx_sandbox_info info = { .struct_size = sizeof(info), .abi_minor = TBX_ABI_MINOR };

	spec.labels = labels;
	spec.env = env;
	spec.timeout_s = 120;
	spec.flags = flags;
	call_init(c);
	if (ops->sandbox_create(inst, c, &spec, &info) < 0)
		return NULL;
	free(info.workdir);
	for (char **l = info.labels; l && *l; l++)
		free(*l);
	free(info.labels);
	return info.id;
}

/* Output as ">stdout text!stderr text": a marker whenever the stream changes. */
struct collect {
	char out[8192];
	size_t n;
	double first_at;
	int chunks;
	enum tbx_exec_stream last;
};

static int collect_cb(enum tbx_exec_stream stream, const char *data, size_t len, void *payload)
{
	struct collect *c = payload;

	if (!c->chunks++)
		c->first_at = now_s();
	if (c->n + len + 3 < sizeof(c->out)) {
		if (stream != c->last)
			c->out[c->n++] = stream == TBX_STREAM_STDERR ? '!' : '>';
		c->last = stream;
		memcpy(c->out + c->n, data, len);
		c->n += len;
		c->out[c->n] = '\0';
	}
	return 0;
}

static int run(const char *id, const char *cmd, uint32_t timeout_ms, struct collect *col,
	       struct tbx_exec_result *res, struct tbx_call *c)
{
	struct tbx_exec_request req = TBX_EXEC_REQUEST_INIT;

	req.command = cmd;
	req.timeout_ms = timeout_ms;
	memset(res, 0, sizeof(*res));
	res->struct_size = sizeof(*res);
	memset(col, 0, sizeof(*col));
	call_init(c);
	return ops->exec(inst, c, id, &req, collect_cb, col, res);
}

struct cancel_arg {
	struct tbx_call *call;
	int after_ms;
};

static void *cancel_later(void *p)
{
	struct cancel_arg *a = p;

	usleep((useconds_t)a->after_ms * 1000);
	atomic_store(&a->call->cancelled, 1);
	return NULL;
}

/* ---- the tests --------------------------------------------------------- */

static void test_config(void)
{
	struct tbx_call c;
	void *i = NULL;
	int rc;

	unsetenv("E2B_API_KEY");
	call_init(&c);
	rc = ops->instance_new(&c, &i);
	CHECK(rc == TBX_EAUTH && strstr(c.message, "E2B_API_KEY"),
	      "no key: instance_new refuses with TBX_EAUTH naming E2B_API_KEY (%d: %s)", rc, c.message);
	setenv("E2B_API_KEY", TEST_KEY, 1);
	call_init(&c);
	rc = ops->instance_new(&c, &inst);
	CHECK(rc == 0 && inst, "instance_new with the fake's URLs (%s)", c.message);
}

static void test_lifecycle(void)
{
	const char *labels[] = { "twinbox=1", "suite=c", "odd key=a&b+c%d=e", NULL };
	const char *env[] = { "A=1", "E2B_API_KEY=" TEST_KEY, "LEAK=x" TEST_KEY "y", NULL };
	struct tbx_sandbox_info info = { .struct_size = sizeof(info), .abi_minor = TBX_ABI_MINOR };
	struct json_object *s;
	struct tbx_call c;
	struct collect col;
	struct tbx_exec_result res;
	char *id, *url = NULL;
	double t0;
	int rc;

	id = create(labels, env, TBX_SANDBOX_PAUSE_ON_TIMEOUT | TBX_SANDBOX_NO_NETWORK, &c);
	CHECK(id != NULL, "create (%s)", c.message);
	if (!id)
		return;
	s = fake_sandbox(id);
	CHECK(s && strcmp(jstr(s, "auto_pause"), "true") == 0 &&
		      strcmp(jstr(s, "timeout_s"), "120") == 0 &&
		      strcmp(jstr(s, "request.templateID"), "base") == 0 &&
		      strcmp(jstr(s, "allow_internet"), "false") == 0,
	      "create sends template, timeout, autoPause and no internet");
	CHECK(s && jstr(s, "metadata.twinbox") && strcmp(jstr(s, "metadata.suite"), "c") == 0,
	      "labels become metadata");
	CHECK(s && strcmp(jstr(s, "env_vars.A"), "1") == 0 && !jstr(s, "env_vars.E2B_API_KEY") &&
		      !jstr(s, "env_vars.LEAK") && !strstr(json_object_to_json_string(s), TEST_KEY),
	      "env reaches the sandbox, the API key does not");
	json_object_put(s);

	rc = run(id, "pwd; echo $A; echo one; sleep 0.4; echo two >&2; exit 3", 0, &col, &res, &c);
	t0 = now_s();
	CHECK(rc == 0 && res.exit_code == 3 &&
		      strcmp(col.out, ">/home/user/project\n1\none\n!two\n") == 0,
	      "exec streams stdout/stderr in order with the exit code (%d %s: %s)", rc, c.message,
	      col.out);
	CHECK(col.chunks >= 2 && t0 - col.first_at > 0.3, "output arrives while the command runs");

	t0 = now_s();
	rc = run(id, "echo started; sleep 10", 600, &col, &res, &c);
	CHECK(rc == 0 && res.timed_out && res.exit_code == -1 && now_s() - t0 < 5 &&
		      strcmp(col.out, ">started\n") == 0,
	      "exec timeout ends the command (%.1f s)", now_s() - t0);

	{
		struct tbx_exec_request req = TBX_EXEC_REQUEST_INIT;
		struct cancel_arg a = { &c, 400 };
		pthread_t th;
		struct json_object *fs;

		req.command = "sleep 30";
		memset(&res, 0, sizeof(res));
		call_init(&c);
		pthread_create(&th, NULL, cancel_later, &a);
		t0 = now_s();
		rc = ops->exec(inst, &c, id, &req, collect_cb, &col, &res);
		pthread_join(th, NULL);
		usleep(300000);
		fs = fake_sandbox(id);
		CHECK(rc == 0 && res.cancelled && now_s() - t0 < 5 && fs &&
			      strcmp(jstr(fs, "processes"), "0") == 0,
		      "cancellation kills the command in the sandbox with SendSignal (%s)",
		      fs ? jstr(fs, "processes") : "?");
		json_object_put(fs);
	}

	{
		char *data = NULL;
		size_t len = 0;
		struct tbx_file_info fi = { .struct_size = sizeof(fi), .abi_minor = TBX_ABI_MINOR };
		struct tbx_file_info *list = NULL;
		size_t n = 0;
		char big[100000];

		memset(big, 'z', sizeof(big));
		call_init(&c);
		rc = ops->file_write(inst, &c, id, "/home/user/project/d/f.txt", big, sizeof(big));
		CHECK(rc == 0, "file_write creates parents (%s)", c.message);
		call_init(&c);
		rc = ops->file_read(inst, &c, id, "/home/user/project/d/f.txt", &data, &len);
		CHECK(rc == 0 && len == sizeof(big) && memcmp(data, big, len) == 0,
		      "file_read gets it back (gzip'd on the wire)");
		free(data);
		call_init(&c);
		rc = ops->file_stat(inst, &c, id, "/home/user/project/d", &fi);
		CHECK(rc == 0 && fi.type == TBX_FILE_DIRECTORY && strcmp(fi.name, "d") == 0,
		      "file_stat of a directory");
		free(fi.name);
		free(fi.path);
		free(fi.symlink_target);
		call_init(&c);
		rc = ops->file_list(inst, &c, id, "/home/user/project", 2, &list, &n);
		CHECK(rc == 0 && n == 2 && strcmp(list[1].path, "/home/user/project/d/f.txt") == 0 &&
			      list[1].size == sizeof(big),
		      "file_list to depth 2");
		for (size_t i = 0; i < n; i++) {
			free(list[i].name);
			free(list[i].path);
			free(list[i].symlink_target);
		}
		free(list);
		call_init(&c);
		rc = ops->file_mkdir(inst, &c, id, "/home/user/project/d");
		CHECK(rc == TBX_EEXIST, "file_mkdir of an existing directory is TBX_EEXIST");
		call_init(&c);
		rc = ops->file_rename(inst, &c, id, "/home/user/project/d/f.txt", "/home/user/project/g.txt");
		CHECK(rc == 0, "file_rename");
		call_init(&c);
		rc = ops->file_remove(inst, &c, id, "/home/user/project/d");
		CHECK(rc == 0, "file_remove");
		call_init(&c);
		rc = ops->file_read(inst, &c, id, "/home/user/project/d/f.txt", &data, &len);
		CHECK(rc == TBX_ENOENT, "file_read of a missing file is TBX_ENOENT (%s)", c.message);
	}

	call_init(&c);
	rc = ops->preview_url(inst, &c, id, 8080, &url);
	{
		char want[128];

		snprintf(want, sizeof(want), "https://8080-%s.e2b.app", id);
		CHECK(rc == 0 && url && strcmp(url, want) == 0, "preview_url is %s", url ? url : "?");
	}
	free(url);

	call_init(&c);
	rc = ops->sandbox_set_timeout(inst, &c, id, 60);
	s = fake_sandbox(id);
	CHECK(rc == 0 && s && atof(jstr(s, "end_in_s")) > 55 && atof(jstr(s, "end_in_s")) <= 60,
	      "set_timeout");
	json_object_put(s);

	call_init(&c);
	rc = ops->sandbox_pause(inst, &c, id);
	CHECK(rc == 0, "pause (%s)", c.message);
	call_init(&c);
	rc = ops->sandbox_pause(inst, &c, id);
	CHECK(rc == TBX_EPAUSED, "pause again is TBX_EPAUSED (%d: %s)", rc, c.message);
	rc = run(id, "cat /home/user/project/g.txt | wc -c", 0, &col, &res, &c);
	CHECK(rc == 0 && strcmp(col.out, ">100000\n") == 0,
	      "an op on a paused sandbox resumes it, files kept (%s %s)", c.message, col.out);

	{
		char path[128];

		snprintf(path, sizeof(path), "/sandboxes/%s/expire", id);
		json_object_put(admin("POST", path, "{}"));
	}
	s = fake_sandbox(id);
	CHECK(s && strcmp(jstr(s, "state"), "paused") == 0, "expiry with autoPause pauses it");
	json_object_put(s);
	call_init(&c);
	rc = ops->sandbox_connect(inst, &c, id, 300, &info);
	CHECK(rc == 0 && info.id && strcmp(info.workdir, "/home/user/project") == 0 &&
		      info.state == TBX_SANDBOX_RUNNING,
	      "connect resumes it (%s)", c.message);
	free(info.id);
	free(info.workdir);

	{
		const char *want[] = { "suite=c", "odd key=a&b+c%d=e", NULL };
		struct tbx_sandbox_info *arr = NULL;
		size_t n = 0;
		char *more[2];
		int seen = 0;

		for (int i = 0; i < 2; i++)
			more[i] = create(labels, NULL, 0, &c);
		free(create((const char *[]){ "suite=other", NULL }, NULL, 0, &c));
		json_object_put(admin("POST", "/config", "{\"page_size\":1}"));
		call_init(&c);
		rc = ops->sandbox_list(inst, &c, want, &arr, &n);
		json_object_put(admin("POST", "/config", "{\"page_size\":100}"));
		for (size_t i = 0; i < n; i++) {
			if (strcmp(arr[i].id, id) == 0 || (more[0] && strcmp(arr[i].id, more[0]) == 0) ||
			    (more[1] && strcmp(arr[i].id, more[1]) == 0))
				seen++;
			free(arr[i].id);
			free(arr[i].workdir);
			for (char **l = arr[i].labels; l && *l; l++)
				free(*l);
			free(arr[i].labels);
		}
		free(arr);
		CHECK(rc == 0 && n == 3 && seen == 3, "list by label follows pages (%zu found)", n);
		for (int i = 0; i < 2; i++) {
			call_init(&c);
			if (more[i])
				ops->sandbox_kill(inst, &c, more[i]);
			free(more[i]);
		}
	}

	call_init(&c);
	rc = ops->sandbox_kill(inst, &c, id);
	CHECK(rc == 0, "kill");
	call_init(&c);
	rc = ops->sandbox_kill(inst, &c, id);
	CHECK(rc == TBX_ENOENT, "kill again is TBX_ENOENT (%d)", rc);
	call_init(&c);
	rc = ops->sandbox_connect(inst, &c, id, 0, &info);
	CHECK(rc == TBX_EGONE, "connect to a killed sandbox is TBX_EGONE (%d)", rc);
	free(id);
}

static void test_vanish(void)
{
	struct tbx_call c;
	struct collect col;
	struct tbx_exec_result res;
	char path[128], *id = create(NULL, NULL, 0, &c);
	int rc;

	if (!id)
		return;
	snprintf(path, sizeof(path), "/sandboxes/%s/vanish", id);
	json_object_put(admin("POST", path, "{}"));
	rc = run(id, "echo hi", 0, &col, &res, &c);
	CHECK(rc == TBX_EGONE, "exec on a sandbox E2B lost is TBX_EGONE (%d: %s)", rc, c.message);
	free(id);
}

static void test_faults(void)
{
	struct tbx_call c;
	struct collect col;
	struct tbx_exec_result res;
	struct tbx_file_info fi = { .struct_size = sizeof(fi), .abi_minor = TBX_ABI_MINOR };
	char *id, *data = NULL;
	size_t len;
	long before;
	double t0;
	int rc;

	before = route_count("POST /v2/sandboxes");
	faults("[{\"method\":\"POST\",\"path\":\"^/v2/sandboxes$\",\"status\":503,\"times\":2}]");
	id = create(NULL, NULL, 0, &c);
	CHECK(id && route_count("POST /v2/sandboxes") - before == 3,
	      "create retries 503 twice, then succeeds (%s)", c.message);
	if (!id)
		return;

	faults("[{\"path\":\"Filesystem/Stat\",\"status\":429,\"retry_after\":1,\"times\":1,"
	       "\"body\":{\"code\":\"resource_exhausted\",\"message\":\"slow down\"}}]");
	t0 = now_s();
	call_init(&c);
	rc = ops->file_stat(inst, &c, id, "/home/user/project", &fi);
	CHECK(rc == 0 && now_s() - t0 >= 0.9, "429 with Retry-After: 1 is retried after a second "
	      "(%.2f s, %s)", now_s() - t0, c.message);
	free(fi.name);
	free(fi.path);

	faults("[{\"path\":\"Filesystem/Stat\",\"status\":429,\"retry_after\":0,\"times\":-1}]");
	t0 = now_s();
	call_init(&c);
	rc = ops->file_stat(inst, &c, id, "/home/user/project", &fi);
	CHECK(rc == TBX_EUNAVAIL && now_s() - t0 < 6, "endless 429 ends as TBX_EUNAVAIL in bounded "
	      "time (%.2f s: %s)", now_s() - t0, c.message);

	faults("[{\"path\":\"Filesystem/Stat\",\"action\":\"reset\",\"times\":2}]");
	call_init(&c);
	memset(&fi, 0, sizeof(fi));
	fi.struct_size = sizeof(fi);
	rc = ops->file_stat(inst, &c, id, "/home/user/project", &fi);
	CHECK(rc == 0, "connection resets are retried (%s)", c.message);
	free(fi.name);
	free(fi.path);

	faults("[{\"method\":\"POST\",\"path\":\"^/v2/sandboxes$\",\"action\":\"drop_answer\"}]");
	{
		struct json_object *all = admin("GET", "/sandboxes", NULL);

		before = (long)json_object_array_length(all);
		json_object_put(all);
	}
	{
		char *lost = create(NULL, NULL, 0, &c);
		struct json_object *all = admin("GET", "/sandboxes", NULL);

		CHECK(lost && json_object_array_length(all) == (size_t)before + 1,
		      "a create whose answer is lost adopts the sandbox it made, no duplicate (%s)",
		      c.message);
		json_object_put(all);
		if (lost) {
			call_init(&c);
			ops->sandbox_kill(inst, &c, lost);
		}
		free(lost);
	}

	faults("[{\"path\":\"Process/Start\",\"action\":\"cut_stream\",\"after_events\":2}]");
	t0 = now_s();
	rc = run(id, "echo a; sleep 0.2; echo b; sleep 0.2; echo c", 0, &col, &res, &c);
	CHECK((rc == TBX_EPROTO || rc == TBX_EIO) && now_s() - t0 < 10,
	      "a stream cut mid-way is a clear error (%d: %s)", rc, c.message);

	faults("[{\"path\":\"Process/Start\",\"action\":\"slow_stream\",\"delay_ms\":150}]");
	rc = run(id, "echo a; echo b >&2; echo c", 0, &col, &res, &c);
	CHECK(rc == 0 && res.exit_code == 0 && strstr(col.out, "a\n") && strstr(col.out, "c\n"),
	      "a slow stream completes (%s)", c.message);

	faults("[{\"path\":\"Process/Start\",\"action\":\"slow_stream\",\"delay_ms\":6000}]");
	t0 = now_s();
	rc = run(id, "echo never", 0, &col, &res, &c);
	CHECK(rc == TBX_EIO && now_s() - t0 < 6 && strstr(c.message, "keepalive"),
	      "a stalled stream is abandoned after stream_stall_ms (%.1f s: %s)", now_s() - t0,
	      c.message);

	faults("[{\"path\":\"Filesystem/Stat\",\"status\":200,\"content_type\":\"text/plain\","
	       "\"body\":\"{}\",\"times\":-1}]");
	call_init(&c);
	rc = ops->file_stat(inst, &c, id, "/home/user/project", &fi);
	CHECK(rc == TBX_EPROTO && strstr(c.message, "content type"),
	      "a wrong content type is TBX_EPROTO (%s)", c.message);

	faults("[{\"path\":\"/connect$\",\"status\":200,\"content_type\":\"application/json\","
	       "\"body\":\"{not json\",\"times\":-1}]");
	{
		struct tbx_sandbox_info info = { .struct_size = sizeof(info) };

		call_init(&c);
		rc = ops->sandbox_connect(inst, &c, id, 0, &info);
		CHECK(rc == TBX_EPROTO && strstr(c.message, "JSON"),
		      "a malformed API answer is TBX_EPROTO (%s)", c.message);
	}

	faults("[{\"method\":\"GET\",\"path\":\"^/files$\",\"action\":\"truncate\",\"times\":-1}]");
	call_init(&c);
	rc = ops->file_read(inst, &c, id, "/etc/hostname", &data, &len);
	CHECK(rc == TBX_EIO, "a truncated download is TBX_EIO (%d: %s)", rc, c.message);

	faults("[{\"path\":\"^/sandboxes/\",\"status\":401,\"times\":-1,"
	       "\"body\":{\"code\":401,\"message\":\"Invalid API key\"}}]");
	call_init(&c);
	rc = ops->sandbox_set_timeout(inst, &c, id, 30);
	CHECK(rc == TBX_EAUTH && strstr(c.message, "E2B_API_KEY") && !strstr(c.message, TEST_KEY),
	      "a refused key is TBX_EAUTH and the message does not carry it (%s)", c.message);

	json_object_put(admin("POST", "/faults", "{\"latency_ms\":200,\"rules\":[]}"));
	rc = run(id, "echo slow", 0, &col, &res, &c);
	CHECK(rc == 0 && strcmp(col.out, ">slow\n") == 0, "latency is only latency");
	json_object_put(admin("DELETE", "/faults", NULL));

	call_init(&c);
	ops->sandbox_kill(inst, &c, id);
	free(id);
}

static void test_pool_and_secrets(void)
{
	struct json_object *st = admin("GET", "/stats", NULL), *v;
	long requests = 0, conns = 0, leaks = -1;

	if (json_object_object_get_ex(st, "requests", &v))
		requests = json_object_get_int64(v);
	if (json_object_object_get_ex(st, "connections", &v))
		conns = json_object_get_int64(v);
	if (json_object_object_get_ex(st, "api_key_leaks", &v))
		leaks = json_object_get_int64(v);
	json_object_put(st);
	/* Faults reset connections on purpose, so only ask for real reuse. */
	CHECK(requests > 50 && conns * 3 < requests,
	      "keep-alive connections are reused (%ld requests on %ld connections)", requests, conns);
	CHECK(leaks == 0, "the API key never reached envd (%ld)", leaks);
	CHECK(logbuf && !strstr(logbuf, TEST_KEY), "the API key is in no log line");
}

int main(int argc, char **argv)
{
	const struct tbx_plugin_desc *(*entry)(const struct tbx_host_api *);
	const struct tbx_plugin_desc *desc;
	void *so;

	if (argc != 3) {
		fprintf(stderr, "usage: %s e2b.so fake_e2b.py\n", argv[0]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (fake_start(argv[2]) < 0) {
		printf("Bail out! cannot start the fake E2B\n");
		return 1;
	}
	setenv("E2B_API_URL", fake_url, 1);
	setenv("E2B_SANDBOX_URL", fake_url, 1);
	unsetenv("E2B_DOMAIN");
	unsetenv("VERIS_E2B_TEMPLATE");
	so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	entry = so ? (const struct tbx_plugin_desc *(*)(const struct tbx_host_api *))dlsym(
			     so, TBX_PLUGIN_ENTRY_SYMBOL)
		   : NULL;
	desc = entry ? entry(&host) : NULL;
	if (!desc) {
		printf("Bail out! cannot load %s: %s\n", argv[1], dlerror());
		fake_stop();
		return 1;
	}
	ops = desc->ops;
	test_config();
	if (inst) {
		test_lifecycle();
		test_vanish();
		test_faults();
		test_pool_and_secrets();
		ops->instance_free(inst);
	}
	fake_stop();
	printf("1..%d\n", tests);
	free(logbuf);
	curl_global_cleanup();
	return failures ? 1 : 0;
}
