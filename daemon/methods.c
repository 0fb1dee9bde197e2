/* SPDX-License-Identifier: MIT */
/* The twinbox/1 methods: sessions, tools, git sync, status and modules. */
#include "methods.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "core.h"
#include "error.h"
#include "rpc-server.h"
#include "session.h"
#include "store.h"
#include "tools/tools.h"
#include "twin-service.h"
#include "utf8.h"

static int method_session_open(struct tbx_request *req, struct json_object *params,
			       struct json_object **out)
{
	struct tbx_session_open_args args = { 0 };
	int rc;

	if ((rc = tbx_param_string(req, params, "project_dir", 1, &args.project_dir)) < 0 ||
	    (rc = tbx_param_string(req, params, "engine", 0, &args.engine)) < 0 ||
	    (rc = tbx_param_string(req, params, "key", 0, &args.key)) < 0 ||
	    (rc = tbx_param_bool(req, params, "no_twin", &args.no_twin)) < 0)
		return rc;
	args.frontend = tbx_request_frontend(req);
	return tbx_session_open(tbx_request_core(req)->sessions, &args, out);
}

static int method_session_list(struct tbx_request *req, struct json_object *params,
			       struct json_object **out)
{
	struct json_object *list;
	int rc = tbx_sessions_list_json(tbx_request_core(req)->sessions, &list);

	if (rc == 0) {
		*out = json_object_new_object();
		json_object_object_add(*out, "sessions", list);
	}
	return rc;
}

/* Find params.session; the caller unrefs. */
static int request_session(struct tbx_request *req, struct json_object *params,
			   struct tbx_session **out)
{
	const char *id;
	int rc = tbx_param_string(req, params, "session", 1, &id);

	return rc < 0 ? rc : tbx_session_get(tbx_request_core(req)->sessions, id, out);
}

static int method_session_show(struct tbx_request *req, struct json_object *params,
			       struct json_object **out)
{
	struct tbx_session *s;
	int rc = request_session(req, params, &s);

	if (rc == 0) {
		rc = tbx_session_to_json(s, out);
		tbx_session_unref(s);
	}
	return rc;
}

static int method_session_close(struct tbx_request *req, struct json_object *params,
				struct json_object **out)
{
	struct tbx_session *s;
	int rc = request_session(req, params, &s);

	if (rc == 0) {
		if ((rc = tbx_session_close(s)) == 0)
			rc = tbx_session_to_json(s, out);
		tbx_session_unref(s);
	}
	return rc;
}

static int method_session_delete(struct tbx_request *req, struct json_object *params,
				 struct json_object **out)
{
	struct tbx_session *s;
	int rc = request_session(req, params, &s);

	if (rc == 0) {
		if ((rc = tbx_session_delete(s, tbx_request_cancel(req))) == 0)
			rc = tbx_session_to_json(s, out);
		tbx_session_unref(s);
	}
	return rc;
}

static void tool_progress(void *payload, const char *stream, const char *data, size_t len)
{
	struct json_object *p = json_object_new_object();

	json_object_object_add(p, "stream", json_object_new_string(stream));
	json_object_object_add(p, "data", tbx_json_string_utf8(data, len));
	tbx_request_progress(payload, p);
}

static int method_tool_call(struct tbx_request *req, struct json_object *params,
			    struct json_object **out)
{
	struct json_object *args = NULL;
	struct tbx_session *s;
	const char *name;
	int rc;

	if ((rc = tbx_param_string(req, params, "name", 1, &name)) < 0 ||
	    (rc = tbx_param_object(req, params, "args", 0, &args)) < 0 ||
	    (rc = request_session(req, params, &s)) < 0)
		return rc;
	if (!args)
		args = json_object_new_object();
	else
		json_object_get(args);
	rc = tbx_session_tool_call(s, name, args, tbx_request_cancel(req), tool_progress, req, out);
	json_object_put(args);
	tbx_session_unref(s);
	return rc;
}

static int method_session_twin(struct tbx_request *req, struct json_object *params,
			       struct json_object **out)
{
	struct json_object *since = NULL, *v;
	struct tbx_session *s;
	int64_t limit = 1000;
	int rc;

	if ((rc = tbx_param_object(req, params, "since", 0, &since)) < 0)
		return rc;
	if (json_object_object_get_ex(params, "limit", &v) && v) {
		limit = json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : 0;
		if (limit < 1 || limit > 1000) {
			tbx_request_mark_invalid_params(req);
			return tbx_error_set(TBX_EINVAL, "parameter 'limit' must be an integer "
					     "from 1 to 1000");
		}
	}
	if (since) {
		json_object_object_foreach(since, key, val) {
			if (!json_object_is_type(val, json_type_int)) {
				tbx_request_mark_invalid_params(req);
				return tbx_error_set(TBX_EINVAL, "parameter 'since' maps service names "
						     "to request ids; '%s' is not an integer", key);
			}
		}
	}
	if ((rc = request_session(req, params, &s)) < 0)
		return rc;
	rc = tbx_session_twin(s, since, (int)limit, out);
	tbx_session_unref(s);
	return rc;
}

static void sync_progress(void *payload, const char *phase, uint64_t done, uint64_t total)
{
	struct json_object *p = json_object_new_object();

	json_object_object_add(p, "stream", json_object_new_string("sync"));
	json_object_object_add(p, "phase", json_object_new_string(phase));
	json_object_object_add(p, "done", json_object_new_int64((int64_t)done));
	json_object_object_add(p, "total", json_object_new_int64((int64_t)total));
	tbx_request_progress(payload, p);
}

static int method_sync(struct tbx_request *req, struct json_object *params,
		       struct json_object **out)
{
	struct tbx_session *s;
	int rc = request_session(req, params, &s);

	if (rc == 0) {
		rc = tbx_session_sync(s, tbx_request_cancel(req), sync_progress, req, out);
		tbx_session_unref(s);
	}
	return rc;
}

static int method_tool_list(struct tbx_request *req, struct json_object *params,
			    struct json_object **out)
{
	struct json_object *tools = json_object_new_array();

	for (const struct tbx_tool_desc *const *t = tbx_tools_all(); *t; t++) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string((*t)->name));
		json_object_object_add(o, "description", json_object_new_string((*t)->description));
		json_object_object_add(o, "parameters",
				       json_tokener_parse((*t)->parameters_json));
		json_object_array_add(tools, o);
	}
	*out = json_object_new_object();
	json_object_object_add(*out, "tools", tools);
	return 0;
}

static int method_modules_list(struct tbx_request *req, struct json_object *params,
			       struct json_object **out)
{
	const struct tbx_registry *reg = &tbx_request_core(req)->registry;
	struct json_object *mods = json_object_new_array(), *refused = json_object_new_array();
	char abi[32];

	for (size_t i = 0; i < reg->n_modules; i++) {
		const struct tbx_plugin_desc *d = reg->modules[i]->desc;
		struct json_object *o = json_object_new_object();
		snprintf(abi, sizeof(abi), "%u.%u", d->abi_major, d->abi_minor);
		json_object_object_add(o, "name", json_object_new_string(d->name));
		json_object_object_add(o, "kind", json_object_new_string(
			d->kind == TBX_PLUGIN_BACKEND ? "backend" : "frontend"));
		json_object_object_add(o, "version", json_object_new_string(d->version ? d->version : ""));
		json_object_object_add(o, "abi", json_object_new_string(abi));
		json_object_object_add(o, "description",
				       json_object_new_string(d->description ? d->description : ""));
		json_object_object_add(o, "path", json_object_new_string(reg->modules[i]->path));
		json_object_array_add(mods, o);
	}
	for (size_t i = 0; i < reg->n_refused; i++) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "path", json_object_new_string(reg->refused[i].path));
		json_object_object_add(o, "reason", json_object_new_string(reg->refused[i].reason));
		json_object_array_add(refused, o);
	}
	*out = json_object_new_object();
	json_object_object_add(*out, "modules", mods);
	json_object_object_add(*out, "refused", refused);
	return 0;
}

static int method_daemon_status(struct tbx_request *req, struct json_object *params,
				struct json_object **out)
{
	struct tbx_core *core = tbx_request_core(req);
	struct json_object *o = json_object_new_object(), *abi = json_object_new_object();

	json_object_object_add(abi, "major", json_object_new_int(TBX_ABI_MAJOR));
	json_object_object_add(abi, "minor", json_object_new_int(TBX_ABI_MINOR));
	json_object_object_add(o, "version", json_object_new_string(TBX_VERSION));
	json_object_object_add(o, "abi", abi);
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "uptime_ms", json_object_new_int64(tbx_now_ms() - core->started_at_ms));
	json_object_object_add(o, "socket", json_object_new_string(core->paths.socket_path));
	json_object_object_add(o, "database", json_object_new_string(core->paths.db_path));
	json_object_object_add(o, "schema_version",
			       json_object_new_int(tbx_store_schema_version(core->store)));
	json_object_object_add(o, "default_engine",
			       json_object_new_string(tbx_core_default_engine(core)));
	json_object_object_add(o, "sessions",
			       json_object_new_int64((int64_t)tbx_sessions_count(core->sessions)));
	json_object_object_add(o, "modules", json_object_new_int64((int64_t)core->registry.n_modules));
	json_object_object_add(o, "clients", json_object_new_int(tbx_server_clients(core->server)));
	json_object_object_add(o, "twin", core->twin ? tbx_twin_service_status(core->twin) : NULL);
	*out = o;
	return 0;
}

static int method_daemon_stop(struct tbx_request *req, struct json_object *params,
			      struct json_object **out)
{
	tbx_server_stop(tbx_request_core(req)->server);
	*out = json_object_new_object();
	json_object_object_add(*out, "stopping", json_object_new_boolean(1));
	return 0;
}

static const struct tbx_method methods[] = {
	{ "session.open", method_session_open, 0, "open or attach to a session" },
	{ "session.list", method_session_list, 1, "list live sessions" },
	{ "session.show", method_session_show, 1, "show one session" },
	{ "session.close", method_session_close, 1, "detach from a session, keeping its sandbox" },
	{ "session.delete", method_session_delete, 0, "delete a session and kill its sandbox" },
	{ "session.twin", method_session_twin, 0, "a session's twin and the requests it received" },
	{ "tool.call", method_tool_call, 0, "run a tool in a session's sandbox" },
	{ "tool.list", method_tool_list, 1, "list the tools and their parameters" },
	{ "sync", method_sync, 0, "bring a session's work home onto opencode/N" },
	{ "modules.list", method_modules_list, 1, "list loaded and refused modules" },
	{ "daemon.status", method_daemon_status, 1, "the daemon's state" },
	{ "daemon.stop", method_daemon_stop, 1, "stop the daemon gracefully" },
};

const struct tbx_method *tbx_method_find(const char *name)
{
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strcmp(methods[i].name, name) == 0)
			return &methods[i];
	return NULL;
}

const char *tbx_method_names(void)
{
	static char names[512];

	if (!names[0]) {
		size_t used = 0;
		/* hello and cancel are answered by the server itself. */
		used += (size_t)snprintf(names, sizeof(names), "hello, cancel");
		for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]) && used < sizeof(names); i++)
			used += (size_t)snprintf(names + used, sizeof(names) - used, ", %s",
						 methods[i].name);
	}
	return names;
}
