/* SPDX-License-Identifier: MIT */
/* The generic JSON REST twin (see rest.h). */
#include "rest.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "form.h"
#include "http-parse.h"
#include "httpd.h"
#include "ids.h"
#include "twins.h"

/* The request body as a JSON object (JSON, or a form); NULL after an error reply. */
static struct json_object *body_object(const struct tbx_http_msg *req, struct tbx_reply *rep)
{
	const char *ct = tbx_http_header_get(req, "Content-Type");
	struct json_object *o = NULL;
	const char *why;

	if (req->body_len == 0)
		return json_object_new_object();
	if (ct && strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0) {
		if (tbx_form_parse(req->body, req->body_len, &o, &why) < 0) {
			tbx_reply_error(rep, 400, "invalid_request_error", why);
			return NULL;
		}
		return o;
	}
	o = json_tokener_parse(req->body);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		tbx_reply_error(rep, 400, "invalid_request_error", "the body must be a JSON object");
		return NULL;
	}
	return o;
}

/* The id a body carries, as text (numbers too), or NULL. */
static const char *body_id(struct json_object *o, char *buf, size_t size)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, "id", &v) || !v)
		return NULL;
	if (json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	if (json_object_is_type(v, json_type_int)) {
		snprintf(buf, size, "%lld", (long long)json_object_get_int64(v));
		return buf;
	}
	return NULL;
}

static int known_collection(struct tbx_service *svc, const char *path)
{
	struct json_object *c;
	return json_object_object_get_ex(svc->state, path, &c);
}

static void list(struct tbx_service *svc, const char *path, struct tbx_reply *rep)
{
	struct json_object *a = json_object_new_array(), *c;

	if (json_object_object_get_ex(svc->state, path, &c)) {
		json_object_object_foreach(c, id, obj) {
			(void)id;
			json_object_array_add(a, json_object_get(obj));
		}
	}
	tbx_reply_json(rep, 200, a);
}

static void not_found(struct tbx_reply *rep, const char *path)
{
	char msg[600];
	snprintf(msg, sizeof(msg), "no such resource: %s", path);
	tbx_reply_error(rep, 404, "not_found", msg);
}

void tbx_rest_handle(struct tbx_service *svc, const struct tbx_http_msg *req, struct tbx_reply *rep)
{
	const char *m = req->method, *q = strchr(req->target, '?');
	size_t len = q ? (size_t)(q - req->target) : strlen(req->target);
	char *path = strndup(req->target, len), *slash, idbuf[32];
	struct json_object *body, *obj;

	if (!path) {
		tbx_reply_error(rep, 500, "api_error", "out of memory");
		return;
	}
	while (len > 1 && path[len - 1] == '/')
		path[--len] = '\0';
	slash = strrchr(path, '/');
	if (len <= 1 || slash[1] == '\0') {
		if (strcmp(m, "GET") == 0) {
			struct json_object *o = json_object_new_object();
			json_object_object_add(o, "twin", json_object_new_string("rest"));
			json_object_object_add(o, "service", json_object_new_string(svc->name));
			tbx_reply_json(rep, 200, o);
		} else {
			tbx_reply_error(rep, 405, "invalid_request_error", "method not allowed on /");
		}
		goto out;
	}
	/* A path is a collection when the twin has one by that name, or when it is one segment. */
	if (strcmp(m, "GET") == 0 && (known_collection(svc, path) || slash == path)) {
		list(svc, path, rep);
		goto out;
	}
	if (strcmp(m, "POST") == 0) {
		const char *id;
		char fresh[40];
		if (!(body = body_object(req, rep)))
			goto out;
		if (!(id = body_id(body, idbuf, sizeof(idbuf)))) {
			tbx_id_random(fresh, sizeof(fresh), "", 16);
			json_object_object_add(body, "id", json_object_new_string(fresh));
			id = fresh;
		}
		if (tbx_service_get(svc, path, id)) {
			json_object_put(body);
			tbx_reply_error(rep, 409, "conflict", "an object with this id exists");
			goto out;
		}
		if (!json_object_object_get_ex(body, "created_at", NULL))
			json_object_object_add(body, "created_at", json_object_new_int64((int64_t)time(NULL)));
		tbx_service_put(svc, path, id, body);
		tbx_reply_json(rep, 201, json_object_get(body));
		goto out;
	}
	/* Item operations: the last segment is the id, the rest the collection. */
	*slash = '\0';
	{
		const char *coll = path[0] ? path : "/", *id = slash + 1;
		obj = tbx_service_get(svc, coll, id);
		if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0) {
			if (obj)
				tbx_reply_json(rep, 200, json_object_get(obj));
			else
				not_found(rep, req->target);
		} else if (strcmp(m, "DELETE") == 0) {
			if (!obj) {
				not_found(rep, req->target);
			} else {
				tbx_service_delete(svc, coll, id);
				rep->status = 204;
			}
		} else if (strcmp(m, "PUT") == 0 || strcmp(m, "PATCH") == 0) {
			int created = !obj;
			if (!(body = body_object(req, rep)))
				goto out;
			if (strcmp(m, "PATCH") == 0) {
				if (!obj) {
					json_object_put(body);
					not_found(rep, req->target);
					goto out;
				}
				/* A shallow merge: members given replace, null deletes. */
				struct json_object *merged = NULL;
				json_object_deep_copy(obj, &merged, NULL);
				json_object_object_foreach(body, k, v) {
					if (v)
						json_object_object_add(merged, k, json_object_get(v));
					else
						json_object_object_del(merged, k);
				}
				json_object_put(body);
				body = merged;
			}
			json_object_object_add(body, "id", json_object_new_string(id));
			tbx_service_put(svc, coll, id, body);
			tbx_reply_json(rep, created ? 201 : 200, json_object_get(body));
		} else {
			tbx_reply_error(rep, 405, "invalid_request_error", "method not allowed");
		}
	}
out:
	free(path);
}
