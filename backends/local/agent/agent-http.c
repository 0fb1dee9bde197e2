/* SPDX-License-Identifier: MIT */
/* Agent reply helpers: JSON replies, Connect and /files errors, paths. */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/keyvalq_struct.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "envd-codes.h"

void agent_log(const char *fmt, ...)
{
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	va_list ap;

	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(stderr, "%s agent: ", ts);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void agent_reply_json(struct evhttp_request *req, int status, struct json_object *body)
{
	struct evbuffer *buf = evbuffer_new();
	const char *s = body ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) : "{}";

	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "application/json");
	if (buf)
		evbuffer_add(buf, s, strlen(s));
	evhttp_send_reply(req, status, NULL, buf);
	if (buf)
		evbuffer_free(buf);
}

static void agent_reply_error(struct evhttp_request *req, int status, struct json_object *code,
			      const char *fmt, va_list ap)
{
	struct json_object *o = json_object_new_object();
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (o) {
		json_object_object_add(o, "code", code);
		json_object_object_add(o, "message", json_object_new_string(msg));
	} else {
		json_object_put(code);
	}
	agent_log("%s %s -> %d %s", evhttp_request_get_command(req) == EVHTTP_REQ_GET ? "GET" : "POST",
		  evhttp_request_get_uri(req), status, msg);
	agent_reply_json(req, status, o);
	json_object_put(o);
}

void agent_reply_rpc_error(struct evhttp_request *req, const char *code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	agent_reply_error(req, tbx_envd_code_http(code), json_object_new_string(code), fmt, ap);
	va_end(ap);
}

void agent_reply_files_error(struct evhttp_request *req, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	agent_reply_error(req, status, json_object_new_int(status), fmt, ap);
	va_end(ap);
}

int agent_content_type_is(struct evhttp_request *req, const char *want)
{
	const char *ct = evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Type");
	size_t n = strlen(want);

	if (!ct)
		return 0;
	while (*ct == ' ')
		ct++;
	if (strncasecmp(ct, want, n) != 0)
		return 0;
	ct += n;
	while (*ct == ' ')
		ct++;
	return *ct == '\0' || *ct == ';';
}

char *agent_path_resolve(const struct agent *a, const char *path)
{
	char *out = NULL;

	if (!path || !*path)
		return NULL;
	if (path[0] == '/')
		return strdup(path);
	if (path[0] == '~' && (path[1] == '\0' || path[1] == '/')) {
		if (asprintf(&out, "%s%s", a->home, path + 1) < 0)
			return NULL;
		return out;
	}
	if (asprintf(&out, "%s/%s", a->home, path) < 0)
		return NULL;
	return out;
}

const char *agent_errno_code(int err)
{
	switch (err) {
	case ENOENT: return "not_found";
	case EEXIST: case ENOTEMPTY: return "already_exists";
	case EACCES: case EPERM: case EROFS: return "permission_denied";
	case ENOTDIR: case EISDIR: case EINVAL: case ENAMETOOLONG: case ELOOP: case EXDEV:
		return "invalid_argument";
	case ENOSPC: case EDQUOT: case EMFILE: case ENFILE: case EFBIG:
		return "resource_exhausted";
	default: return "internal";
	}
}

struct json_object *agent_body_json(struct evhttp_request *req, char *why, size_t why_len)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	struct json_tokener *tok;
	struct json_object *o;
	unsigned char *p;

	if (len > AGENT_RPC_BODY_MAX) {
		snprintf(why, why_len, "request body of %zu bytes is larger than %zu", len,
			 AGENT_RPC_BODY_MAX);
		return NULL;
	}
	p = evbuffer_pullup(in, -1);
	tok = json_tokener_new();
	if (!tok) {
		snprintf(why, why_len, "out of memory");
		return NULL;
	}
	o = json_tokener_parse_ex(tok, (const char *)(p ? (char *)p : ""), (int)len);
	/* A body with trailing garbage after the object is refused as well. */
	if (o && json_tokener_get_error(tok) == json_tokener_success)
		for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
			if (p[i] != ' ' && p[i] != '\n' && p[i] != '\r' && p[i] != '\t') {
				json_object_put(o);
				o = NULL;
				break;
			}
	if (!o || json_tokener_get_error(tok) != json_tokener_success) {
		snprintf(why, why_len, "request body is not valid JSON");
		json_object_put(o);
		json_tokener_free(tok);
		return NULL;
	}
	json_tokener_free(tok);
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(why, why_len, "request body is not a JSON object");
		json_object_put(o);
		return NULL;
	}
	return o;
}
