/* SPDX-License-Identifier: MIT */
/* The CLI's connection to twinboxd, including starting it (see client.h). */
#include "client.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "error.h"
#include "paths.h"

#define START_TIMEOUT_MS 15000
#define MAX_LINE (64u * 1024 * 1024)

struct tbx_client {
	int fd;
	int64_t next_id;
	char *buf;
	size_t len, cap;
};

static int connect_socket(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if ((size_t)snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path) >= sizeof(addr.sun_path)) {
		close(fd);
		return -ENAMETOOLONG;
	}
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/* twinboxd from the build tree, beside us, installed, or else from PATH. */
static void daemon_path(char *out, size_t size)
{
	tbx_program_path("TWINBOX_DAEMON", "daemon/twinboxd", TBX_BINDIR, "twinboxd", out, size);
	if (access(out, X_OK) != 0)
		snprintf(out, size, "twinboxd");
}

static int start_daemon(const struct tbx_paths *paths)
{
	char path[PATH_MAX];
	pid_t pid;
	int status;

	daemon_path(path, sizeof(path));
	if (tbx_mkdir_p(paths->state_dir, 0700) < 0)
		return tbx_error_set(TBX_EIO, "cannot create %s: %s", paths->state_dir, strerror(errno));
	pid = fork();
	if (pid < 0)
		return tbx_error_set(TBX_EIO, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* Double fork: the daemon must not be our child, nor die with our terminal. */
		if (fork() != 0)
			_exit(0);
		setsid();
		int devnull = open("/dev/null", O_RDWR);
		int log = open(paths->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 1);
		}
		if (log >= 0)
			dup2(log, 2);
		execlp(path, path, (char *)NULL);
		fprintf(stderr, "twinbox: cannot run %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int connect_or_start(int autostart, int *fd_out)
{
	struct tbx_paths paths;
	int64_t deadline;
	int64_t last_start = 0;
	int fd;

	if (tbx_paths_init(&paths) < 0)
		return tbx_error_status();
	fd = connect_socket(paths.socket_path);
	if (fd >= 0 || !autostart || (fd != -ENOENT && fd != -ECONNREFUSED)) {
		if (fd < 0)
			return tbx_error_set(TBX_EUNAVAIL, "cannot reach twinboxd at %s: %s",
					     paths.socket_path, strerror(-fd));
		*fd_out = fd;
		return 0;
	}
	deadline = now_ms() + START_TIMEOUT_MS;
	while (now_ms() < deadline) {
		/*
		 * Racing starters are fine: the daemon's start lock keeps one. Try
		 * again each second, since a starter that lost to a daemon which
		 * was itself shutting down has exited.
		 */
		if (now_ms() - last_start >= 1000) {
			if (start_daemon(&paths) < 0)
				return tbx_error_status();
			last_start = now_ms();
		}
		poll(NULL, 0, 50);
		fd = connect_socket(paths.socket_path);
		if (fd >= 0) {
			*fd_out = fd;
			return 0;
		}
	}
	return tbx_error_set(TBX_EUNAVAIL,
			     "twinboxd did not start within %d s; see %s", START_TIMEOUT_MS / 1000,
			     paths.log_path);
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Next line from the daemon (without newline), or NULL at EOF/error. */
static char *read_line(struct tbx_client *c, size_t *len_out)
{
	for (;;) {
		char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		if (nl) {
			size_t n = (size_t)(nl - c->buf);
			char *line = malloc(n + 1);
			if (!line)
				return NULL;
			memcpy(line, c->buf, n);
			line[n] = '\0';
			memmove(c->buf, nl + 1, c->len - n - 1);
			c->len -= n + 1;
			*len_out = n;
			return line;
		}
		if (c->len == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 65536;
			char *grown;
			if (cap > MAX_LINE || !(grown = realloc(c->buf, cap)))
				return NULL;
			c->buf = grown;
			c->cap = cap;
		}
		ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		c->len += (size_t)n;
	}
}

int tbx_client_call(struct tbx_client *c, const char *method, struct json_object *params,
		    tbx_client_progress_cb on_progress, void *payload,
		    struct json_object **result_out, int *rpc_code_out)
{
	struct json_object *req = json_object_new_object(), *msg, *v, *p;
	int64_t id = ++c->next_id;
	const char *text;
	size_t len;
	int rc;

	*result_out = NULL;
	json_object_object_add(req, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(req, "id", json_object_new_int64(id));
	json_object_object_add(req, "method", json_object_new_string(method));
	json_object_object_add(req, "params", params ? json_object_get(params) : json_object_new_object());
	text = json_object_to_json_string_length(req, JSON_C_TO_STRING_PLAIN, &len);
	rc = write_all(c->fd, text, len) || write_all(c->fd, "\n", 1);
	json_object_put(req);
	if (rc)
		return tbx_error_set(TBX_EIO, "lost the connection to twinboxd: %s", strerror(errno));
	for (;;) {
		char *line = read_line(c, &len);
		if (!line)
			return tbx_error_set(TBX_EIO, "twinboxd closed the connection (it may have stopped; see its log)");
		msg = json_tokener_parse(line);
		free(line);
		if (!msg || !json_object_is_type(msg, json_type_object)) {
			json_object_put(msg);
			return tbx_error_set(TBX_EPROTO, "twinboxd sent something that is not JSON-RPC");
		}
		if (json_object_object_get_ex(msg, "method", &v)) {
			if (on_progress && strcmp(json_object_get_string(v), "progress") == 0 &&
			    json_object_object_get_ex(msg, "params", &p))
				on_progress(p, payload);
			json_object_put(msg);
			continue;
		}
		if (!json_object_object_get_ex(msg, "id", &v) || json_object_get_int64(v) != id) {
			json_object_put(msg);
			continue;
		}
		break;
	}
	if (json_object_object_get_ex(msg, "error", &v)) {
		struct json_object *code = NULL, *message = NULL;
		json_object_object_get_ex(v, "code", &code);
		json_object_object_get_ex(v, "message", &message);
		if (rpc_code_out)
			*rpc_code_out = json_object_get_int(code);
		rc = tbx_error_set(TBX_EIO, "%s", message ? json_object_get_string(message) : "error");
		json_object_put(msg);
		return rc;
	}
	if (json_object_object_get_ex(msg, "result", &v))
		*result_out = json_object_get(v);
	json_object_put(msg);
	return 0;
}

int tbx_client_connect(int autostart, struct tbx_client **out)
{
	struct tbx_client *c;
	struct json_object *params, *result;
	int fd, rc;

	if ((rc = connect_or_start(autostart, &fd)) < 0)
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	}
	c->fd = fd;
	params = json_object_new_object();
	json_object_object_add(params, "protocol", json_object_new_string("twinbox/1"));
	json_object_object_add(params, "client", json_object_new_string("twinbox-cli/" TBX_VERSION));
	rc = tbx_client_call(c, "hello", params, NULL, NULL, &result, NULL);
	json_object_put(params);
	json_object_put(result);
	if (rc < 0) {
		tbx_client_close(c);
		return tbx_error_prefix("hello to twinboxd failed");
	}
	*out = c;
	return 0;
}

void tbx_client_close(struct tbx_client *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c->buf);
	free(c);
}

int tbx_client_wait_gone(int timeout_ms)
{
	struct tbx_paths paths;
	int64_t deadline = now_ms() + timeout_ms;

	if (tbx_paths_init(&paths) < 0)
		return -1;
	while (now_ms() < deadline) {
		int fd = connect_socket(paths.socket_path);
		if (fd < 0)
			return 0;
		close(fd);
		poll(NULL, 0, 50);
	}
	return -1;
}
