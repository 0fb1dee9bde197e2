/* SPDX-License-Identifier: MIT */
/* The twin service: the Veris cloud or a supervised twinbox-twind behind one client (see twin-service.h). */
#define _GNU_SOURCE /* pipe2, close_range */
#include "twin-service.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "error.h"
#include "log.h"
#include "paths.h"

#define TBX_LOG_CATEGORY "twin"

#define READY_TIMEOUT_MS 15000
#define STOP_GRACE_MS 5000
#define CALL_TIMEOUT_S 30
/* At most this many restarts within RESTART_WINDOW_S before giving up. */
#define MAX_RESTARTS 5
#define RESTART_WINDOW_S 60
#define MAX_RESPONSE (64u * 1024 * 1024)

enum twin_mode { TWIN_LOCAL, TWIN_VERIS };

struct tbx_twin_service {
	enum twin_mode mode;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	char *base;        /* control-plane base URL */
	char *socket_path; /* local twind's control socket, or NULL */
	char *api_key;     /* never logged */
	char *error;       /* why the twin is unavailable, or NULL */

	/* Local twind only. */
	char twind[PATH_MAX];
	char state_dir[PATH_MAX];
	char control_socket[PATH_MAX];
	char gateway_dir[PATH_MAX]; /* the gateway's Unix sockets, for local sandboxes */
	char socks_socket[PATH_MAX];
	char connect_socket[PATH_MAX];
	pid_t pid;
	int restarts;
	time_t window_start;
	int window_restarts;
	int stopping;
	pthread_t supervisor;
	int supervising;
};

static void set_error(struct tbx_twin_service *svc, const char *fmt, ...) TBX_PRINTF(2, 3);

static void set_error(struct tbx_twin_service *svc, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(svc->error);
	svc->error = strdup(buf);
}

static char *random_key(void)
{
	unsigned char bytes[32];
	char *hex = malloc(sizeof(bytes) * 2 + 1);

	if (!hex || getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes)) {
		free(hex);
		return NULL;
	}
	for (size_t i = 0; i < sizeof(bytes); i++)
		snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
	return hex;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read twind's one ready line from fd; NULL on EOF (it failed) or timeout. */
static struct json_object *read_ready(int fd)
{
	char buf[8192];
	size_t len = 0;
	int64_t deadline = now_ms() + READY_TIMEOUT_MS;

	while (len < sizeof(buf) - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t n;
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return NULL;
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		len += (size_t)n;
		if (memchr(buf, '\n', len)) {
			buf[len] = '\0';
			return json_tokener_parse(buf);
		}
	}
	return NULL;
}

/* Start twind and wait for it to say it is ready. Called with svc->lock held. */
static int twind_spawn(struct tbx_twin_service *svc)
{
	char control[PATH_MAX + 8], pathenv[] = "PATH=/usr/local/bin:/usr/bin:/bin";
	char socks[PATH_MAX + 8], connect[PATH_MAX + 8], tcp[] = "127.0.0.1:0";
	/*
	 * The gateway listens on loopback TCP (what credentials name, for
	 * engines that dial it) and on Unix sockets in gateway_dir, which local
	 * sandboxes reach through a bind mount: their network namespace has no
	 * route to the host's loopback.
	 */
	char *argv[] = { svc->twind, "--state-dir", svc->state_dir, "--control", control,
			 "--socks", tcp, "--socks", socks, "--connect", tcp, "--connect", connect,
			 "--ready-fd", "3", "--api-key-file", "/dev/fd/4", "--die-with-parent", NULL };
	char *envp[] = { pathenv, NULL };
	struct json_object *ready, *v;
	int fds[2], keyfds[2];
	pid_t pid;

	snprintf(control, sizeof(control), "unix:%s", svc->control_socket);
	snprintf(socks, sizeof(socks), "unix:%s", svc->socks_socket);
	snprintf(connect, sizeof(connect), "unix:%s", svc->connect_socket);
	if (pipe2(fds, O_CLOEXEC) != 0)
		return tbx_error_set(TBX_EIO, "pipe: %s", strerror(errno));
	if (pipe2(keyfds, O_CLOEXEC) != 0) {
		close(fds[0]);
		close(fds[1]);
		return tbx_error_set(TBX_EIO, "pipe: %s", strerror(errno));
	}
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		close(keyfds[0]);
		close(keyfds[1]);
		return tbx_error_set(TBX_EIO, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		/*
		 * The key arrives on a pipe (fd 4): not in argv, which anyone may
		 * read, nor in the environment, which /proc keeps for its life.
		 */
		int ready_fd = fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
		int key_fd = fcntl(keyfds[0], F_DUPFD_CLOEXEC, 10);
		if (ready_fd < 0 || key_fd < 0 || dup2(ready_fd, 3) < 0 || dup2(key_fd, 4) < 0)
			_exit(127);
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		/* Nothing of the daemon's (clients, the database) crosses into twind. */
		close_range(5, ~0u, 0);
		execve(svc->twind, argv, envp);
		dprintf(2, "twinboxd: cannot run %s: %s\n", svc->twind, strerror(errno));
		_exit(127);
	}
	close(keyfds[0]);
	if (dprintf(keyfds[1], "%s\n", svc->api_key) < 0)
		tbx_log_warn("could not hand the local twin its key: %s", strerror(errno));
	close(keyfds[1]);
	close(fds[1]);
	ready = read_ready(fds[0]);
	close(fds[0]);
	if (!ready) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return tbx_error_set(TBX_EIO, "%s did not become ready (see the daemon log for why)",
				     svc->twind);
	}
	free(svc->base);
	svc->base = strdup(json_object_object_get_ex(ready, "control_url", &v)
				   ? json_object_get_string(v) : "http://localhost");
	free(svc->socket_path);
	svc->socket_path = strdup(svc->control_socket);
	svc->pid = pid;
	free(svc->error);
	svc->error = NULL;
	json_object_put(ready);
	tbx_log_info("local twin ready (pid %d, control %s)", (int)pid, svc->control_socket);
	return 0;
}

/* Waits for twind; restarts it when it dies unasked, within bounds. */
static void *supervise(void *arg)
{
	struct tbx_twin_service *svc = arg;

	for (;;) {
		pid_t pid;
		int status;

		pthread_mutex_lock(&svc->lock);
		pid = svc->pid;
		pthread_mutex_unlock(&svc->lock);
		if (pid <= 0)
			break;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		pthread_mutex_lock(&svc->lock);
		svc->pid = 0;
		if (svc->stopping) {
			pthread_cond_broadcast(&svc->changed);
			pthread_mutex_unlock(&svc->lock);
			break;
		}
		tbx_log_warn("local twin (pid %d) died (%s %d); restarting it", (int)pid,
			     WIFSIGNALED(status) ? "signal" : "exit status",
			     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		time_t now = time(NULL);
		if (now - svc->window_start > RESTART_WINDOW_S) {
			svc->window_start = now;
			svc->window_restarts = 0;
		}
		if (++svc->window_restarts > MAX_RESTARTS) {
			set_error(svc, "the local twin died %d times within %d s; not restarting it "
				  "(see the daemon log)", MAX_RESTARTS, RESTART_WINDOW_S);
			tbx_log_error("%s", svc->error);
			pthread_mutex_unlock(&svc->lock);
			break;
		}
		/* Back off a little so a crash loop does not spin. */
		pthread_mutex_unlock(&svc->lock);
		usleep(200000u * (unsigned)svc->window_restarts);
		pthread_mutex_lock(&svc->lock);
		if (!svc->stopping) {
			if (twind_spawn(svc) == 0)
				svc->restarts++;
			else
				set_error(svc, "%s", tbx_error_message());
		}
		pthread_cond_broadcast(&svc->changed);
		pthread_mutex_unlock(&svc->lock);
	}
	return NULL;
}

int tbx_twin_service_start(const struct tbx_paths *paths, struct tbx_twin_service **out)
{
	struct tbx_twin_service *svc = calloc(1, sizeof(*svc));
	const char *key = getenv("VERIS_API_KEY"), *base = getenv("VERIS_API_BASE");

	if (!svc)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	pthread_mutex_init(&svc->lock, NULL);
	pthread_cond_init(&svc->changed, NULL);
	*out = svc;
	if (key && key[0]) {
		svc->mode = TWIN_VERIS;
		svc->api_key = strdup(key);
		svc->base = strdup(base && base[0] ? base : TBX_VERIS_DEFAULT_BASE);
		tbx_log_info("twins come from the Veris control plane at %s", svc->base);
		return 0;
	}
	svc->mode = TWIN_LOCAL;
	svc->api_key = random_key();
	tbx_program_path("TWINBOX_TWIND", "twin/twinbox-twind", TBX_LIBEXEC_DIR, "twinbox-twind",
			 svc->twind, sizeof(svc->twind));
	if ((size_t)snprintf(svc->state_dir, sizeof(svc->state_dir), "%s/twin", paths->state_dir) >=
		    sizeof(svc->state_dir) ||
	    (size_t)snprintf(svc->control_socket, sizeof(svc->control_socket), "%s/twind.sock",
			     paths->runtime_dir) >= 108 ||
	    (size_t)snprintf(svc->gateway_dir, sizeof(svc->gateway_dir), "%s/gateway",
			     paths->runtime_dir) >= 80 ||
	    (size_t)snprintf(svc->socks_socket, sizeof(svc->socks_socket), "%s/socks.sock",
			     svc->gateway_dir) >= 108 ||
	    (size_t)snprintf(svc->connect_socket, sizeof(svc->connect_socket), "%s/connect.sock",
			     svc->gateway_dir) >= 108) {
		set_error(svc, "the twin's paths under %s or %s are too long; set XDG_RUNTIME_DIR "
			  "and XDG_STATE_HOME to shorter directories", paths->runtime_dir, paths->state_dir);
		tbx_log_error("%s", svc->error);
		return 0;
	}
	svc->window_start = time(NULL);
	pthread_mutex_lock(&svc->lock);
	/*
	 * The gateway directory is made once and never replaced: sandboxes
	 * bind-mount it, so a new one would be invisible to them. A restarted
	 * twind binds fresh sockets inside the same directory.
	 */
	if (!svc->api_key || tbx_mkdir_p(svc->state_dir, 0700) < 0 ||
	    tbx_mkdir_p(svc->gateway_dir, 0700) < 0 || twind_spawn(svc) < 0) {
		set_error(svc, "the local twin is not available: %s",
			  svc->api_key ? tbx_error_message() : "no random key");
		tbx_log_error("%s", svc->error);
	} else if (pthread_create(&svc->supervisor, NULL, supervise, svc) == 0) {
		svc->supervising = 1;
	}
	pthread_mutex_unlock(&svc->lock);
	return 0;
}

void tbx_twin_service_free(struct tbx_twin_service *svc)
{
	if (!svc)
		return;
	pthread_mutex_lock(&svc->lock);
	svc->stopping = 1;
	if (svc->pid > 0) {
		pid_t pid = svc->pid;
		int64_t deadline = now_ms() + STOP_GRACE_MS;
		kill(pid, SIGTERM);
		if (svc->supervising) {
			while (svc->pid > 0 && now_ms() < deadline) {
				struct timespec ts;
				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_nsec += 50 * 1000000L;
				if (ts.tv_nsec >= 1000000000L) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000L;
				}
				pthread_cond_timedwait(&svc->changed, &svc->lock, &ts);
			}
			if (svc->pid > 0)
				kill(pid, SIGKILL);
		} else {
			waitpid(pid, NULL, 0);
		}
	}
	pthread_mutex_unlock(&svc->lock);
	if (svc->supervising)
		pthread_join(svc->supervisor, NULL);
	free(svc->base);
	free(svc->socket_path);
	if (svc->api_key) {
		explicit_bzero(svc->api_key, strlen(svc->api_key));
		free(svc->api_key);
	}
	free(svc->error);
	pthread_cond_destroy(&svc->changed);
	pthread_mutex_destroy(&svc->lock);
	free(svc);
}

struct response {
	char *data;
	size_t len;
};

static size_t collect(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct response *r = arg;
	size_t n = size * nmemb;
	char *grown;

	if (r->len + n > MAX_RESPONSE || !(grown = realloc(r->data, r->len + n + 1)))
		return 0;
	r->data = grown;
	memcpy(r->data + r->len, ptr, n);
	r->len += n;
	r->data[r->len] = '\0';
	return n;
}

int tbx_twin_call(struct tbx_twin_service *svc, const char *method, const char *path,
		  struct json_object *body, long *http_status, struct json_object **out)
{
	char url[2048], keyhdr[256], *socket_path = NULL;
	struct curl_slist *headers = NULL;
	struct response r = { 0 };
	CURL *curl;
	CURLcode cc;
	int rc = 0;

	*out = NULL;
	*http_status = 0;
	pthread_mutex_lock(&svc->lock);
	if (svc->error || !svc->base) {
		rc = tbx_error_set(TBX_EUNAVAIL, "%s", svc->error ? svc->error : "no twin service");
		pthread_mutex_unlock(&svc->lock);
		return rc;
	}
	if (strncmp(path, "http://", 7) == 0 || strncmp(path, "https://", 8) == 0) {
		/*
		 * A whole URL (a service's control_url) is called only under
		 * our base: the key must never go to a host it was not meant for.
		 */
		size_t n = strlen(svc->base);
		if (strncmp(path, svc->base, n) != 0 || (path[n] != '/' && path[n] != '\0')) {
			rc = tbx_error_set(TBX_EPERM, "%s is not under the twin control plane %s; "
					   "not calling it with the key", path, svc->base);
			pthread_mutex_unlock(&svc->lock);
			return rc;
		}
		snprintf(url, sizeof(url), "%s", path);
	} else {
		snprintf(url, sizeof(url), "%s%s", svc->base, path);
	}
	snprintf(keyhdr, sizeof(keyhdr), "X-API-Key: %s", svc->api_key);
	if (svc->socket_path)
		socket_path = strdup(svc->socket_path);
	pthread_mutex_unlock(&svc->lock);

	curl = curl_easy_init();
	if (!curl) {
		free(socket_path);
		return tbx_error_set(TBX_ENOMEM, "cannot make an HTTP client");
	}
	headers = curl_slist_append(headers, keyhdr);
	headers = curl_slist_append(headers, "Accept: application/json");
	headers = curl_slist_append(headers, "X-Veris-SDK: twinbox/" TBX_VERSION);
	if (body)
		headers = curl_slist_append(headers, "Content-Type: application/json");
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)CALL_TIMEOUT_S);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r);
	if (socket_path)
		curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, socket_path);
	if (body)
		curl_easy_setopt(curl, CURLOPT_COPYPOSTFIELDS,
				 json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN));
	cc = curl_easy_perform(curl);
	if (cc != CURLE_OK) {
		/* The URL is fine to say; the key is only in a header. */
		rc = tbx_error_set(TBX_EUNAVAIL, "the twin control plane at %s did not answer: %s",
				   url, curl_easy_strerror(cc));
	} else {
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, http_status);
		if (r.len)
			*out = json_tokener_parse(r.data);
	}
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	free(r.data);
	free(socket_path);
	return rc;
}

int tbx_twin_service_is_local(struct tbx_twin_service *svc)
{
	return svc->mode == TWIN_LOCAL;
}

const char *tbx_twin_service_gateway_socket(struct tbx_twin_service *svc)
{
	return svc->mode == TWIN_LOCAL && svc->socks_socket[0] ? svc->socks_socket : NULL;
}

struct json_object *tbx_twin_service_status(struct tbx_twin_service *svc)
{
	struct json_object *o = json_object_new_object(), *health = NULL;
	long status = 0;
	int healthy;

	healthy = tbx_twin_call(svc, "GET", "/v1/gateway/health", NULL, &status, &health) == 0 &&
		  status >= 200 && status < 300;
	json_object_put(health);
	pthread_mutex_lock(&svc->lock);
	json_object_object_add(o, "mode", json_object_new_string(svc->mode == TWIN_LOCAL ? "local" : "veris"));
	json_object_object_add(o, "base", svc->base ? json_object_new_string(svc->base) : NULL);
	if (svc->mode == TWIN_LOCAL) {
		json_object_object_add(o, "pid", svc->pid > 0 ? json_object_new_int(svc->pid) : NULL);
		json_object_object_add(o, "restarts", json_object_new_int(svc->restarts));
		json_object_object_add(o, "control_socket", json_object_new_string(svc->control_socket));
	}
	json_object_object_add(o, "healthy", json_object_new_boolean(healthy));
	if (svc->error)
		json_object_object_add(o, "error", json_object_new_string(svc->error));
	pthread_mutex_unlock(&svc->lock);
	return o;
}
