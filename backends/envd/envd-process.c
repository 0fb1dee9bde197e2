/* SPDX-License-Identifier: MIT */
/* envd client: process.Process/Start, a server-streaming Connect call. */
#define _GNU_SOURCE
#include "envd-client-priv.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "envd-base64.h"
#include "envd-codes.h"
#include "envd-envelope.h"

/* Largest single envelope accepted: a data event carries at most a pipe read. */
#define ENVD_STREAM_MAX_MESSAGE (16u << 20)

struct envd_stream {
	struct tbx_envd_client *c;
	struct tbx_call *call;
	CURL *curl;
	tbx_exec_output_cb on_output;
	void *payload;
	struct tbx_exec_result *out;
	struct tbx_envd_xfer *xfer;   /* its last_data_ms is kept current */
	struct tbx_envd_reader reader;
	struct tbx_envd_body errbody; /* a non-200 answer is a unary-style error */
	int mode;                     /* 0 unknown, 1 stream, 2 error body */
	int got_start, got_end, got_eos, output_cancelled, nomem;
	long pid;                     /* from the start event; 0 if none yet */
	char *eos_code, *eos_message;
	char proto[256]; /* first protocol violation seen */
};

/* "signal: killed" → SIGKILL: the status text is Go's ProcessState.String(). */
static int envd_signal_from_status(const char *status)
{
	const char *name;

	if (!status || strncmp(status, "signal: ", 8) != 0)
		return 0;
	name = status + 8;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *d = sigdescr_np(sig);
		size_t n = d ? strlen(d) : 0;

		if (n && strncasecmp(name, d, n) == 0 && (name[n] == '\0' || name[n] == ' '))
			return sig;
	}
	return 0;
}

static void envd_stream_violation(struct envd_stream *s, const char *msg)
{
	if (!s->proto[0])
		snprintf(s->proto, sizeof(s->proto), "%s", msg);
}

static int envd_stream_event(struct envd_stream *s, struct json_object *ev)
{
	struct json_object *part, *v;

	if (json_object_object_get_ex(ev, "start", &part)) {
		s->got_start = 1;
		if (json_object_object_get_ex(part, "pid", &v))
			s->pid = (long)json_object_get_int64(v);
		return 0;
	}
	if (!s->got_start) {
		envd_stream_violation(s, "expected a start event first");
		return -1;
	}
	if (json_object_object_get_ex(ev, "data", &part)) {
		enum tbx_exec_stream which = TBX_STREAM_STDOUT;
		unsigned char *bytes;
		size_t n = 0;

		if (!json_object_object_get_ex(part, "stdout", &v) &&
		    !json_object_object_get_ex(part, "pty", &v)) {
			if (!json_object_object_get_ex(part, "stderr", &v))
				return 0;
			which = TBX_STREAM_STDERR;
		}
		if (!json_object_is_type(v, json_type_string)) {
			envd_stream_violation(s, "a data event's bytes are not a base64 string");
			return -1;
		}
		bytes = tbx_envd_base64_decode(json_object_get_string(v),
					       (size_t)json_object_get_string_len(v), &n);
		if (!bytes) {
			envd_stream_violation(s, "a data event's bytes are not valid base64");
			return -1;
		}
		if (n && s->on_output && s->on_output(which, (const char *)bytes, n, s->payload)) {
			s->output_cancelled = 1;
			free(bytes);
			return -1;
		}
		free(bytes);
		return 0;
	}
	if (json_object_object_get_ex(ev, "end", &part)) {
		const char *status = NULL;
		int exited = 0;

		s->got_end = 1;
		if (json_object_object_get_ex(part, "exitCode", &v))
			s->out->exit_code = json_object_get_int(v);
		else
			s->out->exit_code = 0; /* proto3 leaves 0 out */
		if (json_object_object_get_ex(part, "exited", &v))
			exited = json_object_get_boolean(v);
		if (json_object_object_get_ex(part, "status", &v))
			status = json_object_get_string(v);
		s->out->signal = exited ? 0 : envd_signal_from_status(status);
		if (s->out->signal)
			s->out->exit_code = -1;
		return 0;
	}
	/* keepalive and events newer than this client are ignored. */
	return 0;
}

static int envd_stream_eos(struct envd_stream *s, struct json_object *msg)
{
	struct json_object *err, *v;

	s->got_eos = 1;
	if (!json_object_object_get_ex(msg, "error", &err) || json_object_get_type(err) == json_type_null)
		return 0;
	if (json_object_object_get_ex(err, "code", &v) && json_object_is_type(v, json_type_string))
		s->eos_code = strdup(json_object_get_string(v));
	else
		s->eos_code = strdup("unknown");
	if (json_object_object_get_ex(err, "message", &v) && json_object_is_type(v, json_type_string))
		s->eos_message = strdup(json_object_get_string(v));
	if (!s->eos_code)
		s->nomem = 1;
	return 0;
}

static size_t envd_stream_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct envd_stream *s = userdata;
	size_t n = size * nmemb;
	uint8_t flags;
	const char *msg;
	size_t msg_len;
	int r;

	s->xfer->last_data_ms = tbx_envd_retry_now_ms();
	if (!s->mode) {
		long status = 0;
		const char *ct = NULL;

		curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
		curl_easy_getinfo(s->curl, CURLINFO_CONTENT_TYPE, &ct);
		if (status == 200 && tbx_envd_ct_is(ct, "application/connect+json")) {
			s->mode = 1;
		} else if (status != 200 && tbx_envd_ct_is(ct, "application/json")) {
			s->mode = 2;
		} else {
			char m[200];

			snprintf(m, sizeof(m), "answered HTTP %ld with content type '%s', expected "
				 "application/connect+json", status, ct ? ct : "(none)");
			envd_stream_violation(s, m);
			return 0;
		}
	}
	if (s->mode == 2)
		return tbx_envd_body_write(ptr, size, nmemb, &s->errbody);
	if (s->got_eos) {
		envd_stream_violation(s, "sent data after the end-of-stream message");
		return 0;
	}
	if (tbx_envd_reader_feed(&s->reader, ptr, n) < 0) {
		s->nomem = 1;
		return 0;
	}
	while ((r = tbx_envd_reader_next(&s->reader, &flags, &msg, &msg_len)) == 1) {
		struct json_tokener *tok;
		struct json_object *j, *ev;

		if (flags & TBX_ENVD_FLAG_COMPRESSED) {
			envd_stream_violation(s, "sent a compressed envelope, which was not asked for");
			return 0;
		}
		tok = json_tokener_new();
		if (!tok) {
			s->nomem = 1;
			return 0;
		}
		j = json_tokener_parse_ex(tok, msg, (int)msg_len);
		json_tokener_free(tok);
		if (!j || !json_object_is_type(j, json_type_object)) {
			json_object_put(j);
			envd_stream_violation(s, "sent an envelope that is not a JSON object");
			return 0;
		}
		if (flags & TBX_ENVD_FLAG_END_STREAM) {
			envd_stream_eos(s, j);
		} else if (!json_object_object_get_ex(j, "event", &ev) ||
			   !json_object_is_type(ev, json_type_object)) {
			envd_stream_violation(s, "sent a message without an event");
			json_object_put(j);
			return 0;
		} else if (envd_stream_event(s, ev) < 0) {
			json_object_put(j);
			return 0;
		}
		json_object_put(j);
		if (s->got_eos && tbx_envd_reader_pending(&s->reader)) {
			envd_stream_violation(s, "sent data after the end-of-stream message");
			return 0;
		}
	}
	if (r < 0) {
		envd_stream_violation(s, "sent an envelope larger than 16 MiB");
		return 0;
	}
	return n;
}

/* The request envelope: {"process":{cmd,args,envs,cwd},"stdin":false}. */
static char *envd_start_body(const struct tbx_envd_process *p, size_t *len_out)
{
	struct json_object *req = json_object_new_object();
	struct json_object *proc = json_object_new_object();
	struct json_object *args = json_object_new_array();
	struct json_object *envs = json_object_new_object();
	const char *js;
	char *out = NULL;
	size_t n;

	if (!req || !proc || !args || !envs) {
		json_object_put(proc);
		json_object_put(args);
		json_object_put(envs);
		goto done;
	}
	/* From here req owns everything, so one put frees it all. */
	json_object_object_add(req, "process", proc);
	json_object_object_add(proc, "cmd", json_object_new_string(p->cmd));
	json_object_object_add(proc, "args", args);
	json_object_object_add(proc, "envs", envs);
	for (size_t i = 0; p->args && p->args[i]; i++)
		json_object_array_add(args, json_object_new_string(p->args[i]));
	for (size_t i = 0; p->env && p->env[i]; i++) {
		const char *eq = strchr(p->env[i], '=');
		char *k;

		if (!eq || eq == p->env[i])
			continue;
		if (!(k = strndup(p->env[i], (size_t)(eq - p->env[i]))))
			goto done;
		json_object_object_add(envs, k, json_object_new_string(eq + 1));
		free(k);
	}
	if (p->cwd)
		json_object_object_add(proc, "cwd", json_object_new_string(p->cwd));
	js = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	n = strlen(js);
	out = malloc(TBX_ENVD_ENVELOPE_HEADER + n);
	if (out) {
		tbx_envd_envelope_header((unsigned char *)out, 0, (uint32_t)n);
		memcpy(out + TBX_ENVD_ENVELOPE_HEADER, js, n);
		*len_out = TBX_ENVD_ENVELOPE_HEADER + n;
	}
done:
	json_object_put(req);
	return out;
}

/*
 * SendSignal SIGKILL to \p pid, best effort and deliberately outside the
 * call's cancellation: envd keeps a process whose stream was dropped.
 */
static void envd_process_kill(struct tbx_envd_client *c, struct tbx_call *call, long pid)
{
	static const char *const extra[] = { "Content-Type: application/json",
					     "Connect-Protocol-Version: 1", NULL };
	struct tbx_envd_body b = { .max = 64u << 10 };
	struct curl_slist *h = NULL;
	char errbuf[CURL_ERROR_SIZE], body[128];
	long status = 0;
	CURL *curl;
	CURLcode rc;

	if (pid <= 0)
		return;
	snprintf(body, sizeof(body), "{\"process\":{\"pid\":%ld},\"signal\":\"SIGNAL_SIGKILL\"}", pid);
	curl = tbx_envd_curl_new(c, "/process.Process/SendSignal", extra, &h, NULL, errbuf);
	if (!curl)
		return;
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, tbx_envd_body_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(curl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	/* not_found is fine: the process ended, or the peer killed it on hang-up. */
	if (rc != CURLE_OK || (status != 200 && status != 404))
		c->host->log(call, TBX_LOG_WARN, "exec: could not signal process %ld at %s: %s", pid,
			     tbx_envd_peer(c), rc != CURLE_OK ? curl_easy_strerror(rc) : "HTTP error");
	tbx_envd_body_release(&b);
	curl_easy_cleanup(curl);
	curl_slist_free_all(h);
}

/* Forget a try that never started a process, so the next try starts clean. */
static void envd_stream_reset(struct envd_stream *s)
{
	tbx_envd_reader_release(&s->reader);
	tbx_envd_reader_init(&s->reader, ENVD_STREAM_MAX_MESSAGE);
	tbx_envd_body_release(&s->errbody);
	s->errbody.max = 1u << 20;
	s->mode = 0;
	s->got_start = s->got_end = s->got_eos = 0;
	free(s->eos_code);
	free(s->eos_message);
	s->eos_code = s->eos_message = NULL;
	s->proto[0] = '\0';
}

int tbx_envd_process_start(struct tbx_envd_client *c, struct tbx_call *call,
			   const struct tbx_envd_process *p, tbx_exec_output_cb on_output,
			   void *payload, struct tbx_exec_result *out)
{
	char timeout_hdr[64];
	const char *extra[] = { "Content-Type: application/connect+json",
				"Connect-Protocol-Version: 1", "Keepalive-Ping-Interval: 5",
				NULL, NULL };
	struct envd_stream s = { .c = c, .call = call, .on_output = on_output,
				 .payload = payload, .out = out };
	struct tbx_envd_xfer xfer = { .call = call };
	struct tbx_envd_retry_state st;
	struct curl_slist *h = NULL;
	char errbuf[CURL_ERROR_SIZE];
	char *body;
	size_t body_len = 0;
	CURLcode rc;
	int ret;

	out->exit_code = -1;
	out->signal = 0;
	out->timed_out = 0;
	out->cancelled = 0;
	if (p->timeout_ms) {
		snprintf(timeout_hdr, sizeof(timeout_hdr), "Connect-Timeout-Ms: %u", p->timeout_ms);
		extra[3] = timeout_hdr;
	}
	body = envd_start_body(p, &body_len);
	if (!body)
		return c->host->error_set(call, TBX_ENOMEM, "exec: out of memory");
	tbx_envd_reader_init(&s.reader, ENVD_STREAM_MAX_MESSAGE);
	s.errbody.max = 1u << 20;
	s.curl = tbx_envd_curl_new(c, "/process.Process/Start", extra, &h, &xfer, errbuf);
	if (!s.curl) {
		ret = c->host->error_set(call, TBX_ENOMEM, "exec: out of memory");
		goto cleanup;
	}
	curl_easy_setopt(s.curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(s.curl, CURLOPT_POSTFIELDSIZE, (long)body_len);
	curl_easy_setopt(s.curl, CURLOPT_WRITEFUNCTION, envd_stream_write);
	curl_easy_setopt(s.curl, CURLOPT_WRITEDATA, &s);
	/*
	 * The peer enforces the deadline (Connect-Timeout-Ms); this guard only
	 * catches a peer that stops answering, so it allows some slack.
	 */
	if (p->timeout_ms)
		curl_easy_setopt(s.curl, CURLOPT_TIMEOUT_MS, (long)p->timeout_ms + 15000L);
	/* A peer that stops sending even keepalives is gone, not slow. */
	xfer.stall_ms = c->stall_ms;
	s.xfer = &xfer;
	tbx_envd_retry_begin(&st, &c->retry);
	for (;;) {
		long status = 0, after = -1;
		int again, retry;

		rc = curl_easy_perform(s.curl);
		curl_easy_getinfo(s.curl, CURLINFO_RESPONSE_CODE, &status);
		/*
		 * Only a start that certainly never ran is tried again: no
		 * connection, or a 429/503 answer instead of a stream.
		 */
		retry = !s.got_start && !s.output_cancelled && !xfer.cancelled && !s.nomem &&
			!s.proto[0] &&
			((rc != CURLE_OK && tbx_envd_retry_unsent(rc)) ||
			 (rc == CURLE_OK && s.mode == 2 && tbx_envd_retry_status(status)));
		if (!retry)
			break;
		if (rc == CURLE_OK)
			after = tbx_envd_retry_after_ms(s.curl);
		again = tbx_envd_retry_again(&st, c->host, call, after);
		if (again < 0)
			xfer.cancelled = 1;
		if (again <= 0)
			break;
		c->host->log(call, TBX_LOG_DEBUG, "exec: envd at %s busy; trying again (%u)",
			     tbx_envd_peer(c), st.tries + 1);
		envd_stream_reset(&s);
		xfer.last_data_ms = tbx_envd_retry_now_ms();
	}
	if (p->started_out)
		*p->started_out = s.got_start;

	if (s.output_cancelled || xfer.cancelled) {
		/* envd keeps a process whose client left: kill it explicitly. */
		if (s.got_start)
			envd_process_kill(c, call, s.pid);
		s.pid = 0;
		out->cancelled = 1;
		out->exit_code = -1;
		out->signal = SIGKILL;
		ret = 0;
		goto cleanup;
	}
	if (xfer.stalled) {
		ret = c->host->error_set(call, TBX_EIO,
					 "exec: envd at %s sent nothing, not even a keepalive, for "
					 "%ld s; the command was abandoned",
					 tbx_envd_peer(c), (c->stall_ms + 999) / 1000);
		goto cleanup;
	}
	if (s.nomem) {
		ret = c->host->error_set(call, TBX_ENOMEM, "exec: out of memory");
		goto cleanup;
	}
	if (s.proto[0]) {
		ret = c->host->error_set(call, TBX_EPROTO, "exec: envd at %s %s", tbx_envd_peer(c),
					 s.proto);
		goto cleanup;
	}
	if (rc == CURLE_OPERATION_TIMEDOUT && p->timeout_ms && s.got_start) {
		envd_process_kill(c, call, s.pid);
		s.pid = 0;
		out->timed_out = 1;
		out->exit_code = -1;
		out->signal = SIGKILL;
		ret = 0;
		goto cleanup;
	}
	if (rc != CURLE_OK) {
		ret = tbx_envd_curl_fail(c, call, rc, &xfer, "exec", errbuf);
		goto cleanup;
	}
	if (s.mode == 2) {
		long status = 0;
		struct json_object *j = s.errbody.len ? json_tokener_parse(s.errbody.data) : NULL;

		curl_easy_getinfo(s.curl, CURLINFO_RESPONSE_CODE, &status);
		ret = tbx_envd_error_object(c, call, "exec", j, (int)status);
		json_object_put(j);
		goto cleanup;
	}
	if (!s.got_eos) {
		ret = c->host->error_set(call, TBX_EPROTO,
					 "exec: envd at %s ended the stream without an "
					 "end-of-stream message",
					 tbx_envd_peer(c));
		goto cleanup;
	}
	if (s.eos_code && strcmp(s.eos_code, "deadline_exceeded") == 0 && s.got_start) {
		out->timed_out = 1;
		if (!s.got_end || out->exit_code >= 0) {
			out->exit_code = -1;
			out->signal = SIGKILL;
		}
		ret = 0;
		goto cleanup;
	}
	if (s.eos_code) {
		ret = c->host->error_set(call, tbx_envd_code_status(s.eos_code), "exec: %s",
					 s.eos_message && *s.eos_message ? s.eos_message
									 : s.eos_code);
		goto cleanup;
	}
	if (!s.got_start || !s.got_end) {
		ret = c->host->error_set(call, TBX_EPROTO,
					 "exec: envd at %s ended the stream without %s event",
					 tbx_envd_peer(c), s.got_start ? "an end" : "a start");
		goto cleanup;
	}
	ret = 0;
cleanup:
	/* A stream that broke after the start leaves the process running on envd. */
	if (ret < 0 && s.got_start && !s.got_end)
		envd_process_kill(c, call, s.pid);
	free(body);
	free(s.eos_code);
	free(s.eos_message);
	tbx_envd_reader_release(&s.reader);
	tbx_envd_body_release(&s.errbody);
	if (s.curl)
		curl_easy_cleanup(s.curl);
	curl_slist_free_all(h);
	return ret;
}
