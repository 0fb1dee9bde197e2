/* SPDX-License-Identifier: MIT */
/*
 * Agent: process.Process/Start (server-streaming) and SendSignal (§2.4).
 * Each Start forks a process in its own process group and streams its
 * output as Connect envelopes on a chunked reply. The group is killed at
 * the Connect-Timeout-Ms deadline and when the client goes away.
 */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/keyvalq_struct.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "envd-base64.h"
#include "envd-envelope.h"

/* Output queued for a slow client before the pipes stop being read. */
#define AGENT_OUTPUT_HIGH_WATER ((size_t)4 << 20)
/* How long output is still collected after the process itself exited. */
#define AGENT_EXIT_GRACE_MS 200
#define AGENT_READ_CHUNK 65536

extern char **environ;

struct agent_proc {
	LIST_ENTRY(agent_proc) link;
	struct agent *a;
	struct evhttp_request *req;     /* until the reply is ended */
	struct evhttp_connection *evcon; /* NULL once libevent dropped it */
	pid_t pid;
	int fd[2];                       /* stdout, stderr; -1 when closed */
	struct event *ev[2];
	struct event *deadline, *keepalive, *peek, *grace, *throttle;
	uint32_t timeout_ms;
	int exited, wstatus, timed_out, gone;
};

static void agent_proc_finish(struct agent_proc *p);

/* Send one envelope on the streaming reply. */
static void agent_proc_send(struct agent_proc *p, uint8_t flags, struct json_object *msg)
{
	const char *s = json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t n = strlen(s);
	unsigned char hdr[TBX_ENVD_ENVELOPE_HEADER];
	struct evbuffer *buf;

	if (!p->req || !(buf = evbuffer_new()))
		return;
	tbx_envd_envelope_header(hdr, flags, (uint32_t)n);
	evbuffer_add(buf, hdr, sizeof(hdr));
	evbuffer_add(buf, s, n);
	evhttp_send_reply_chunk(p->req, buf);
	evbuffer_free(buf);
}

/* {"event":{<kind>: body}} */
static void agent_proc_event(struct agent_proc *p, const char *kind, struct json_object *body)
{
	struct json_object *msg = json_object_new_object(), *ev = json_object_new_object();

	json_object_object_add(ev, kind, body ? body : json_object_new_object());
	json_object_object_add(msg, "event", ev);
	agent_proc_send(p, 0, msg);
	json_object_put(msg);
}

static void agent_proc_kill(struct agent_proc *p)
{
	/* The group outlives its leader while children remain, so always signal it. */
	if (p->pid > 0 && killpg(p->pid, SIGKILL) < 0 && errno != ESRCH)
		agent_log("killpg %d: %s", p->pid, strerror(errno));
}

static void agent_proc_gone(struct agent_proc *p, const char *why)
{
	if (p->gone)
		return;
	p->gone = 1;
	agent_log("pid %d: client went away (%s); killing its process group", p->pid, why);
	if (p->peek)
		event_del(p->peek);
	agent_proc_kill(p);
}

static void agent_proc_closecb(struct evhttp_connection *evcon, void *arg)
{
	struct agent_proc *p = arg;

	p->evcon = NULL;
	agent_proc_gone(p, "connection closed");
}

/*
 * evhttp does not read a connection while it writes a reply, so a client
 * that hangs up is only noticed on the next write. Peeking at the socket
 * notices it at once, which makes cancellation prompt.
 */
static void agent_proc_peek_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent_proc *p = arg;
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
		agent_proc_gone(p, n == 0 ? "EOF" : strerror(errno));
	else if (n > 0)
		event_del(p->peek); /* pipelined bytes: leave them to evhttp */
}

static int agent_proc_backlogged(struct agent_proc *p)
{
	struct bufferevent *bev;

	if (!p->evcon || !(bev = evhttp_connection_get_bufferevent(p->evcon)))
		return 0;
	return evbuffer_get_length(bufferevent_get_output(bev)) > AGENT_OUTPUT_HIGH_WATER;
}

static void agent_proc_close_fd(struct agent_proc *p, int i)
{
	if (p->ev[i]) {
		event_free(p->ev[i]);
		p->ev[i] = NULL;
	}
	if (p->fd[i] >= 0) {
		close(p->fd[i]);
		p->fd[i] = -1;
	}
}

/* Read once from a pipe: 0 data sent, -1 nothing yet, 1 the pipe closed. */
static int agent_proc_read(struct agent_proc *p, int i)
{
	char buf[AGENT_READ_CHUNK];
	ssize_t n = read(p->fd[i], buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return -1;
	if (n <= 0) {
		agent_proc_close_fd(p, i);
		return 1;
	}
	if (!p->gone) {
		char *b64 = tbx_envd_base64_encode(buf, (size_t)n);
		struct json_object *data = json_object_new_object();

		if (b64)
			json_object_object_add(data, i == 0 ? "stdout" : "stderr",
					       json_object_new_string(b64));
		free(b64);
		agent_proc_event(p, "data", data);
	}
	return 0;
}

static void agent_proc_throttle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent_proc *p = arg;
	struct timeval tv = { 0, 20000 };

	if (agent_proc_backlogged(p) && !p->gone) {
		evtimer_add(p->throttle, &tv);
		return;
	}
	for (int i = 0; i < 2; i++)
		if (p->ev[i])
			event_add(p->ev[i], NULL);
}

static void agent_proc_pipe_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent_proc *p = arg;
	int i = fd == p->fd[0] ? 0 : 1;

	agent_proc_read(p, i);
	if (p->fd[0] < 0 && p->fd[1] < 0 && p->exited) {
		agent_proc_finish(p);
		return;
	}
	/* A slow reader: stop reading pipes (the process blocks) until it catches up. */
	if (agent_proc_backlogged(p) && !p->gone) {
		struct timeval tv = { 0, 20000 };

		for (int k = 0; k < 2; k++)
			if (p->ev[k])
				event_del(p->ev[k]);
		evtimer_add(p->throttle, &tv);
	}
}

static void agent_proc_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent_proc *p = arg;

	p->timed_out = 1;
	agent_log("pid %d: deadline of %u ms passed; killing its process group", p->pid,
		  p->timeout_ms);
	agent_proc_kill(p);
}

static void agent_proc_keepalive_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent_proc *p = arg;

	if (!p->gone)
		agent_proc_event(p, "keepalive", NULL);
}

static void agent_proc_grace_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent_proc *p = arg;

	/*
	 * The process exited but something it started still holds the pipes:
	 * take what is already there (bounded) and end the stream, as envd does.
	 */
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 64 && p->fd[i] >= 0; k++)
			if (agent_proc_read(p, i) != 0)
				break;
	agent_proc_finish(p);
}

/* Go's ProcessState.String(): "exit status 3", "signal: killed". */
static void agent_proc_status(int wstatus, char *out, size_t len)
{
	if (WIFEXITED(wstatus)) {
		snprintf(out, len, "exit status %d", WEXITSTATUS(wstatus));
	} else if (WIFSIGNALED(wstatus)) {
		const char *d = sigdescr_np(WTERMSIG(wstatus));
		size_t n;

		n = (size_t)snprintf(out, len, "signal: %s%s", d ? d : "unknown",
				     WCOREDUMP(wstatus) ? " (core dumped)" : "");
		/* Go prints the descriptions in lower case. */
		for (size_t i = 8; i < n && i < len && out[i]; i++)
			if (out[i] >= 'A' && out[i] <= 'Z')
				out[i] = (char)(out[i] - 'A' + 'a');
	} else {
		snprintf(out, len, "unknown status %d", wstatus);
	}
}

static void agent_proc_free(struct agent_proc *p)
{
	for (int i = 0; i < 2; i++)
		agent_proc_close_fd(p, i);
	if (p->deadline)
		event_free(p->deadline);
	if (p->keepalive)
		event_free(p->keepalive);
	if (p->peek)
		event_free(p->peek);
	if (p->grace)
		event_free(p->grace);
	if (p->throttle)
		event_free(p->throttle);
	LIST_REMOVE(p, link);
	free(p);
}

static void agent_proc_finish(struct agent_proc *p)
{
	struct json_object *end, *eos;
	char status[128];

	if (p->req) {
		end = json_object_new_object();
		agent_proc_status(p->wstatus, status, sizeof(status));
		if (WIFEXITED(p->wstatus)) {
			if (WEXITSTATUS(p->wstatus))
				json_object_object_add(end, "exitCode",
						       json_object_new_int(WEXITSTATUS(p->wstatus)));
			json_object_object_add(end, "exited", json_object_new_boolean(1));
		} else {
			json_object_object_add(end, "exitCode", json_object_new_int(-1));
		}
		json_object_object_add(end, "status", json_object_new_string(status));
		agent_proc_event(p, "end", end);

		eos = json_object_new_object();
		if (p->timed_out) {
			struct json_object *err = json_object_new_object();
			char msg[96];

			snprintf(msg, sizeof(msg), "command timed out after %u ms", p->timeout_ms);
			json_object_object_add(err, "code", json_object_new_string("deadline_exceeded"));
			json_object_object_add(err, "message", json_object_new_string(msg));
			json_object_object_add(eos, "error", err);
		}
		agent_proc_send(p, TBX_ENVD_FLAG_END_STREAM, eos);
		json_object_put(eos);
		/* The reply is done: libevent frees the request, never call us back. */
		if (p->evcon)
			evhttp_connection_set_closecb(p->evcon, NULL, NULL);
		evhttp_send_reply_end(p->req);
		p->req = NULL;
	}
	agent_proc_free(p);
}

void agent_process_reap(struct agent *a)
{
	int wstatus;
	pid_t pid;

	while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
		struct agent_proc *p;

		LIST_FOREACH(p, &a->procs, link)
			if (p->pid == pid && !p->exited)
				break;
		if (!p)
			continue;
		p->exited = 1;
		p->wstatus = wstatus;
		if (p->fd[0] < 0 && p->fd[1] < 0) {
			agent_proc_finish(p);
		} else {
			struct timeval tv = { 0, AGENT_EXIT_GRACE_MS * 1000 };

			evtimer_add(p->grace, &tv);
		}
	}
}

/* A failure before the process started: 200, then an end-of-stream error. */
static void agent_stream_fail(struct evhttp_request *req, const char *code, const char *fmt, ...)
	TBX_PRINTF(3, 4);
static void agent_stream_fail(struct evhttp_request *req, const char *code, const char *fmt, ...)
{
	struct json_object *eos = json_object_new_object(), *err = json_object_new_object();
	unsigned char hdr[TBX_ENVD_ENVELOPE_HEADER];
	struct evbuffer *buf = evbuffer_new();
	char msg[1024];
	const char *s;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	agent_log("Start -> %s: %s", code, msg);
	json_object_object_add(err, "code", json_object_new_string(code));
	json_object_object_add(err, "message", json_object_new_string(msg));
	json_object_object_add(eos, "error", err);
	s = json_object_to_json_string_ext(eos, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	tbx_envd_envelope_header(hdr, TBX_ENVD_FLAG_END_STREAM, (uint32_t)strlen(s));
	if (buf) {
		evbuffer_add(buf, hdr, sizeof(hdr));
		evbuffer_add(buf, s, strlen(s));
	}
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "application/connect+json");
	evhttp_send_reply(req, 200, "OK", buf);
	if (buf)
		evbuffer_free(buf);
	json_object_put(eos);
}

/* What Start was asked to run, owned strings. */
struct agent_spawn {
	char *cmd;
	char **argv; /* argv[0] = cmd */
	char **envp;
	char *cwd;
};

static void agent_spawn_release(struct agent_spawn *s)
{
	for (size_t i = 0; s->argv && s->argv[i]; i++)
		free(s->argv[i]);
	for (size_t i = 0; s->envp && s->envp[i]; i++)
		free(s->envp[i]);
	free(s->argv);
	free(s->envp);
	free(s->cmd);
	free(s->cwd);
}

static int agent_has_nul(struct json_object *v)
{
	return strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v);
}

/* Parse a StartRequest; returns NULL on success, else a message. */
static const char *agent_spawn_parse(struct agent *a, struct json_object *req,
				     struct agent_spawn *s)
{
	struct json_object *proc, *v, *args = NULL, *envs = NULL;
	size_t nargs = 0, nenv = 0, nenv_req = 0, k = 0;

	if (!json_object_object_get_ex(req, "process", &proc) ||
	    !json_object_is_type(proc, json_type_object))
		return "process is required";
	if (json_object_object_get_ex(req, "pty", &v) && json_object_get_type(v) != json_type_null)
		return "pty is not supported by the twinbox agent";
	if (!json_object_object_get_ex(proc, "cmd", &v) || !json_object_is_type(v, json_type_string) ||
	    !json_object_get_string_len(v) || agent_has_nul(v))
		return "process.cmd is required";
	s->cmd = strdup(json_object_get_string(v));
	if (json_object_object_get_ex(proc, "args", &args) && json_object_get_type(args) != json_type_null) {
		if (!json_object_is_type(args, json_type_array))
			return "process.args must be an array of strings";
		nargs = json_object_array_length(args);
		if (nargs > 4096)
			return "process.args has too many members";
	}
	s->argv = calloc(nargs + 2, sizeof(char *));
	if (!s->cmd || !s->argv)
		return "out of memory";
	s->argv[0] = strdup(s->cmd);
	for (size_t i = 0; i < nargs; i++) {
		v = json_object_array_get_idx(args, i);
		if (!json_object_is_type(v, json_type_string) || agent_has_nul(v))
			return "process.args must be an array of strings";
		if (!(s->argv[i + 1] = strdup(json_object_get_string(v))))
			return "out of memory";
	}
	if (json_object_object_get_ex(proc, "envs", &envs) && json_object_get_type(envs) != json_type_null) {
		if (!json_object_is_type(envs, json_type_object))
			return "process.envs must be an object of strings";
		nenv_req = (size_t)json_object_object_length(envs);
	}
	while (environ[nenv])
		nenv++;
	s->envp = calloc(nenv + nenv_req + 1, sizeof(char *));
	if (!s->envp)
		return "out of memory";
	/* The request's variables replace inherited ones of the same name. */
	for (size_t i = 0; i < nenv; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t kl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
		struct json_object *dummy;
		char *key = strndup(environ[i], kl);

		if (!key)
			return "out of memory";
		if (!(nenv_req && json_object_object_get_ex(envs, key, &dummy)))
			if (!(s->envp[k++] = strdup(environ[i]))) {
				free(key);
				return "out of memory";
			}
		free(key);
	}
	if (nenv_req) {
		json_object_object_foreach(envs, key, val) {
			if (!*key || strchr(key, '=') || !json_object_is_type(val, json_type_string) ||
			    agent_has_nul(val))
				return "process.envs must map names to strings";
			if (asprintf(&s->envp[k], "%s=%s", key, json_object_get_string(val)) < 0) {
				s->envp[k] = NULL;
				return "out of memory";
			}
			k++;
		}
	}
	if (json_object_object_get_ex(proc, "cwd", &v) && json_object_is_type(v, json_type_string) &&
	    json_object_get_string_len(v)) {
		if (agent_has_nul(v))
			return "process.cwd contains a NUL byte";
		s->cwd = agent_path_resolve(a, json_object_get_string(v));
	} else {
		s->cwd = strdup(a->workdir);
	}
	return s->cwd ? NULL : "out of memory";
}

/*
 * Fork and exec; the child reports an exec failure's errno on a CLOEXEC
 * pipe, so the caller knows before it answers whether the process runs.
 */
static pid_t agent_spawn_run(struct agent_spawn *s, int out_fd[2], int *err_out)
{
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, ps[2] = { -1, -1 };
	int devnull, child_err = 0;
	pid_t pid;
	ssize_t n;

	*err_out = 0;
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull < 0 || pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0 ||
	    pipe2(ps, O_CLOEXEC) < 0) {
		*err_out = errno;
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		*err_out = errno;
		goto fail;
	}
	if (pid == 0) {
		sigset_t none;
		int e;

		setpgid(0, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		dup2(devnull, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		if (chdir(s->cwd) < 0) {
			e = errno;
			(void)!write(ps[1], &e, sizeof(e));
			_exit(127);
		}
		execve(s->cmd, s->argv, s->envp);
		e = errno;
		/* Images without bash: run the -c command with sh instead. */
		if (e == ENOENT && strcmp(s->cmd, "/bin/bash") == 0) {
			char *sh_argv[4] = { "/bin/sh", "-c", NULL, NULL };

			for (size_t i = 1; s->argv[i]; i++)
				if (strcmp(s->argv[i], "-c") == 0 && s->argv[i + 1]) {
					sh_argv[2] = s->argv[i + 1];
					break;
				}
			if (sh_argv[2])
				execve("/bin/sh", sh_argv, s->envp);
			e = errno;
		}
		(void)!write(ps[1], &e, sizeof(e));
		_exit(127);
	}
	setpgid(pid, pid); /* also here, so killpg works before the child ran */
	close(ps[1]);
	ps[1] = -1;
	do
		n = read(ps[0], &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	close(ps[0]);
	close(po[1]);
	close(pe[1]);
	close(devnull);
	if (n == sizeof(child_err)) {
		/* The child exits at once; SIGCHLD reaps it (it is in no list). */
		close(po[0]);
		close(pe[0]);
		*err_out = child_err ? child_err : EIO;
		return -1;
	}
	out_fd[0] = po[0];
	out_fd[1] = pe[0];
	return pid;
fail:
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0) close(po[i]);
		if (pe[i] >= 0) close(pe[i]);
		if (ps[i] >= 0) close(ps[i]);
	}
	if (devnull >= 0)
		close(devnull);
	return -1;
}

/* A non-negative integer header, or \p dflt when absent or malformed. */
static long agent_header_long(struct evhttp_request *req, const char *name, long dflt, long max)
{
	const char *v = evhttp_find_header(evhttp_request_get_input_headers(req), name);
	char *end;
	long n;

	if (!v || !*v)
		return dflt;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < 0)
		return dflt;
	return n > max ? max : n;
}

static void agent_process_start(struct agent *a, struct evhttp_request *req)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	struct agent_spawn spawn = { 0 };
	struct json_object *body = NULL, *start;
	struct json_tokener *tok;
	const unsigned char *raw;
	const char *why;
	struct agent_proc *p;
	struct stat st;
	uint32_t msg_len;
	long timeout_ms, keepalive_s;
	int fds[2], err;
	pid_t pid;

	if (!agent_content_type_is(req, "application/connect+json")) {
		agent_reply_rpc_error(req, "invalid_argument", "unsupported content type: "
				      "process.Process/Start takes application/connect+json");
		return;
	}
	if (len < TBX_ENVD_ENVELOPE_HEADER || len > AGENT_RPC_BODY_MAX) {
		agent_stream_fail(req, "invalid_argument", "request is not one Connect envelope");
		return;
	}
	raw = evbuffer_pullup(in, -1);
	msg_len = (uint32_t)raw[1] << 24 | (uint32_t)raw[2] << 16 | (uint32_t)raw[3] << 8 | raw[4];
	if (raw[0] != 0) {
		agent_stream_fail(req, "invalid_argument", "request envelope flags 0x%02x are not "
				  "supported (compression or end-of-stream)", raw[0]);
		return;
	}
	if (msg_len != len - TBX_ENVD_ENVELOPE_HEADER) {
		agent_stream_fail(req, "invalid_argument", "request envelope says %u bytes but "
				  "carries %zu", msg_len, len - TBX_ENVD_ENVELOPE_HEADER);
		return;
	}
	tok = json_tokener_new();
	if (tok) {
		body = json_tokener_parse_ex(tok, (const char *)raw + TBX_ENVD_ENVELOPE_HEADER,
					     (int)msg_len);
		if (body && json_tokener_get_parse_end(tok) != msg_len) {
			json_object_put(body);
			body = NULL;
		}
		json_tokener_free(tok);
	}
	if (!body || !json_object_is_type(body, json_type_object)) {
		agent_stream_fail(req, "invalid_argument", "request message is not a JSON object");
		goto done;
	}
	if ((why = agent_spawn_parse(a, body, &spawn))) {
		agent_stream_fail(req, strcmp(why, "out of memory") ? "invalid_argument" : "internal",
				  "%s", why);
		goto done;
	}
	if (stat(spawn.cwd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		agent_stream_fail(req, "invalid_argument", "cwd '%s' is not a directory", spawn.cwd);
		goto done;
	}
	timeout_ms = agent_header_long(req, "Connect-Timeout-Ms", 0, 0x7fffffffL);
	keepalive_s = agent_header_long(req, "Keepalive-Ping-Interval", 90, 3600);
	if (keepalive_s < 1)
		keepalive_s = 1;

	pid = agent_spawn_run(&spawn, fds, &err);
	if (pid < 0) {
		agent_stream_fail(req, err == ENOENT ? "not_found" : agent_errno_code(err),
				  "cannot run '%s' in '%s': %s", spawn.cmd, spawn.cwd, strerror(err));
		goto done;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		killpg(pid, SIGKILL);
		close(fds[0]);
		close(fds[1]);
		agent_stream_fail(req, "internal", "out of memory");
		goto done;
	}
	p->a = a;
	p->req = req;
	p->evcon = evhttp_request_get_connection(req);
	p->pid = pid;
	p->timeout_ms = (uint32_t)timeout_ms;
	LIST_INSERT_HEAD(&a->procs, p, link);
	for (int i = 0; i < 2; i++) {
		p->fd[i] = fds[i];
		evutil_make_socket_nonblocking(fds[i]);
		p->ev[i] = event_new(a->base, fds[i], EV_READ | EV_PERSIST, agent_proc_pipe_cb, p);
		if (p->ev[i])
			event_add(p->ev[i], NULL);
	}
	p->grace = evtimer_new(a->base, agent_proc_grace_cb, p);
	p->throttle = evtimer_new(a->base, agent_proc_throttle_cb, p);
	p->keepalive = event_new(a->base, -1, EV_PERSIST, agent_proc_keepalive_cb, p);
	if (p->keepalive) {
		struct timeval tv = { keepalive_s, 0 };

		event_add(p->keepalive, &tv);
	}
	if (timeout_ms > 0 && (p->deadline = evtimer_new(a->base, agent_proc_deadline_cb, p))) {
		struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };

		evtimer_add(p->deadline, &tv);
	}
	if (p->evcon) {
		struct bufferevent *bev = evhttp_connection_get_bufferevent(p->evcon);

		evhttp_connection_set_closecb(p->evcon, agent_proc_closecb, p);
		if (bev && (p->peek = event_new(a->base, bufferevent_getfd(bev),
						EV_READ | EV_PERSIST, agent_proc_peek_cb, p)))
			event_add(p->peek, NULL);
	}
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "application/connect+json");
	evhttp_send_reply_start(req, 200, "OK");
	start = json_object_new_object();
	json_object_object_add(start, "pid", json_object_new_int64(pid));
	agent_proc_event(p, "start", start);
	agent_log("pid %d: started %s (timeout %ld ms)", pid, spawn.cmd, timeout_ms);
done:
	agent_spawn_release(&spawn);
	json_object_put(body);
}

static void agent_process_signal(struct agent *a, struct evhttp_request *req)
{
	struct json_object *body, *sel, *v;
	struct agent_proc *p;
	char why[256];
	int64_t pid = 0;
	int sig = 0;

	if (!agent_content_type_is(req, "application/json")) {
		agent_reply_rpc_error(req, "invalid_argument",
				      "unsupported content type: unary RPCs take application/json");
		return;
	}
	if (!(body = agent_body_json(req, why, sizeof(why)))) {
		agent_reply_rpc_error(req, "invalid_argument", "%s", why);
		return;
	}
	if (json_object_object_get_ex(body, "process", &sel) &&
	    json_object_object_get_ex(sel, "pid", &v))
		pid = json_object_get_int64(v);
	if (json_object_object_get_ex(body, "signal", &v)) {
		if (json_object_is_type(v, json_type_string)) {
			const char *s = json_object_get_string(v);

			sig = strcmp(s, "SIGNAL_SIGKILL") == 0 ? SIGKILL :
			      strcmp(s, "SIGNAL_SIGTERM") == 0 ? SIGTERM : 0;
		} else {
			int n = json_object_get_int(v);

			sig = n == SIGKILL || n == SIGTERM ? n : 0;
		}
	}
	if (pid <= 0 || !sig) {
		agent_reply_rpc_error(req, "invalid_argument",
				      "process.pid and signal (SIGNAL_SIGKILL or SIGNAL_SIGTERM) "
				      "are required");
		goto done;
	}
	LIST_FOREACH(p, &a->procs, link)
		if (p->pid == pid)
			break;
	if (!p || p->exited) {
		agent_reply_rpc_error(req, "not_found", "process with pid %lld not found",
				      (long long)pid);
		goto done;
	}
	if (killpg(p->pid, sig) < 0 && errno != ESRCH) {
		agent_reply_rpc_error(req, agent_errno_code(errno), "cannot signal pid %lld: %s",
				      (long long)pid, strerror(errno));
		goto done;
	}
	agent_reply_json(req, 200, NULL);
done:
	json_object_put(body);
}

void agent_process_handle(struct agent *a, struct evhttp_request *req, const char *method)
{
	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		agent_reply_rpc_error(req, "invalid_argument", "RPCs take POST");
		return;
	}
	if (strcmp(method, "Start") == 0)
		agent_process_start(a, req);
	else if (strcmp(method, "SendSignal") == 0)
		agent_process_signal(a, req);
	else
		agent_reply_rpc_error(req, "unimplemented", "process.Process/%s is not served by "
				      "the twinbox agent", method);
}
