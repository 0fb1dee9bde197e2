/* SPDX-License-Identifier: MIT */
/*
 * Checking a tool's arguments against its own JSON Schema (the one the model
 * is shown), so the schema is the single statement of what a tool accepts.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "tools-priv.h"

static const char *type_phrase(const char *type)
{
	if (strcmp(type, "string") == 0)
		return "a string";
	if (strcmp(type, "integer") == 0)
		return "an integer";
	if (strcmp(type, "number") == 0)
		return "a number";
	if (strcmp(type, "boolean") == 0)
		return "a boolean";
	if (strcmp(type, "array") == 0)
		return "an array";
	if (strcmp(type, "object") == 0)
		return "an object";
	return type;
}

static const char *json_phrase(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null: return "null";
	case json_type_boolean: return "a boolean";
	case json_type_double: return "a number";
	case json_type_int: return "an integer";
	case json_type_object: return "an object";
	case json_type_array: return "an array";
	case json_type_string: return "a string";
	}
	return "something else";
}

static bool type_ok(const char *type, struct json_object *v)
{
	enum json_type t = json_object_get_type(v);

	if (strcmp(type, "string") == 0)
		return t == json_type_string;
	if (strcmp(type, "integer") == 0) {
		double d;
		if (t == json_type_int)
			return true;
		if (t != json_type_double)
			return false;
		/* 3.0 is an integer to JSON Schema too. */
		d = json_object_get_double(v);
		return isfinite(d) && floor(d) == d && fabs(d) < 9.0e15;
	}
	if (strcmp(type, "number") == 0)
		return t == json_type_int || t == json_type_double;
	if (strcmp(type, "boolean") == 0)
		return t == json_type_boolean;
	if (strcmp(type, "array") == 0)
		return t == json_type_array;
	if (strcmp(type, "object") == 0)
		return t == json_type_object;
	return true;
}

static int check_value(const char *tool, const char *name, struct json_object *schema,
		       struct json_object *v);

static int check_object(const char *tool, const char *prefix, struct json_object *schema,
			struct json_object *obj)
{
	struct json_object *props = NULL, *required = NULL, *v;
	char name[256];

	json_object_object_get_ex(schema, "properties", &props);
	json_object_object_get_ex(schema, "required", &required);
	for (size_t i = 0; required && i < json_object_array_length(required); i++) {
		const char *key = json_object_get_string(json_object_array_get_idx(required, i));
		struct json_object *ps = NULL;
		const char *type = "value";

		if (json_object_object_get_ex(obj, key, &v) && !json_object_is_type(v, json_type_null))
			continue;
		if (props && json_object_object_get_ex(props, key, &ps)) {
			struct json_object *t;
			if (json_object_object_get_ex(ps, "type", &t))
				type = json_object_get_string(t);
		}
		snprintf(name, sizeof(name), "%s%s", prefix, key);
		return tbx_error_set(TBX_EINVAL, "%s: missing required parameter '%s' (%s)", tool,
				     name, type_phrase(type));
	}
	if (!props)
		return 0;
	json_object_object_foreach(props, key, ps)
	{
		int rc;

		/* Unknown keys pass, as with OpenCode's zod objects; null means absent. */
		if (!json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null))
			continue;
		snprintf(name, sizeof(name), "%s%s", prefix, key);
		rc = check_value(tool, name, ps, v);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int check_value(const char *tool, const char *name, struct json_object *schema,
		       struct json_object *v)
{
	struct json_object *t, *items;
	const char *type;
	char item_name[300];

	if (!json_object_object_get_ex(schema, "type", &t))
		return 0;
	type = json_object_get_string(t);
	if (!type_ok(type, v))
		return tbx_error_set(TBX_EINVAL, "%s: parameter '%s' must be %s, not %s", tool, name,
				     type_phrase(type), json_phrase(v));
	if (strcmp(type, "object") == 0) {
		snprintf(item_name, sizeof(item_name), "%s.", name);
		return check_object(tool, item_name, schema, v);
	}
	if (strcmp(type, "array") == 0 && json_object_object_get_ex(schema, "items", &items)) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			struct json_object *item = json_object_array_get_idx(v, i);
			int rc;

			snprintf(item_name, sizeof(item_name), "%s[%zu]", name, i);
			rc = check_value(tool, item_name, items, item);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

int tbx_tool_args_check(const struct tbx_tool_desc *tool, struct json_object *args)
{
	struct json_object *schema;
	int rc;

	if (!json_object_is_type(args, json_type_object))
		return tbx_error_set(TBX_EINVAL, "%s: arguments must be a JSON object, not %s",
				     tool->name, json_phrase(args));
	schema = json_tokener_parse(tool->parameters_json);
	if (!schema)
		return tbx_error_set(TBX_EINTERNAL, "%s: its parameter schema does not parse",
				     tool->name);
	rc = check_object(tool->name, "", schema, args);
	json_object_put(schema);
	return rc;
}

static struct json_object *arg_get(struct json_object *args, const char *name)
{
	struct json_object *v;

	if (!args || !json_object_object_get_ex(args, name, &v) ||
	    json_object_is_type(v, json_type_null))
		return NULL;
	return v;
}

bool tbx_arg_has(struct json_object *args, const char *name)
{
	return arg_get(args, name) != NULL;
}

const char *tbx_arg_str(struct json_object *args, const char *name)
{
	struct json_object *v = arg_get(args, name);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

size_t tbx_arg_str_len(struct json_object *args, const char *name)
{
	struct json_object *v = arg_get(args, name);

	return v && json_object_is_type(v, json_type_string) ? (size_t)json_object_get_string_len(v)
							       : 0;
}

int64_t tbx_arg_int(struct json_object *args, const char *name, int64_t dflt)
{
	struct json_object *v = arg_get(args, name);

	if (!v)
		return dflt;
	if (json_object_is_type(v, json_type_double))
		return (int64_t)json_object_get_double(v);
	return json_object_get_int64(v);
}

bool tbx_arg_bool(struct json_object *args, const char *name, bool dflt)
{
	struct json_object *v = arg_get(args, name);

	return v ? json_object_get_boolean(v) : dflt;
}
