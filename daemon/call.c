/* SPDX-License-Identifier: MIT */
/* The per-op call context and the host API table modules call back through. */
#include "call.h"

#include <assert.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "log.h"
#include "module.h"

void tbx_call_init(struct tbx_call *call, const struct tbx_module *module, const atomic_int *cancel)
{
	memset(call, 0, sizeof(*call));
	call->magic = TBX_CALL_MAGIC;
	call->module = module;
	call->cancel = cancel;
}

static const char *call_module_name(const struct tbx_call *call)
{
	if (call && call->module && call->module->desc && call->module->desc->name)
		return call->module->desc->name;
	return "module";
}

int tbx_call_report(struct tbx_call *call, int status, const char *op)
{
	if (status >= 0)
		return status;
	if (call->status == 0 || call->message[0] == '\0')
		/* A module that forgot error_set still gets a useful message. */
		return tbx_error_set(status, "%s: %s failed (%s) without saying why",
				     call_module_name(call), op, tbx_status_name(status));
	return tbx_error_set(status, "%s", call->message);
}

static void host_log(struct tbx_call *call, enum tbx_log_level level, const char *fmt, ...)
{
	char category[96];
	va_list ap;

	assert(!call || call->magic == TBX_CALL_MAGIC);
	snprintf(category, sizeof(category), "module.%s", call_module_name(call));
	va_start(ap, fmt);
	tbx_log_writev(level, category, fmt, ap);
	va_end(ap);
}

static int host_error_set(struct tbx_call *call, int status, const char *fmt, ...)
{
	va_list ap;

	assert(call && call->magic == TBX_CALL_MAGIC);
	if (status >= 0)
		status = TBX_EINTERNAL;
	call->status = status;
	va_start(ap, fmt);
	vsnprintf(call->message, sizeof(call->message), fmt, ap);
	va_end(ap);
	return status;
}

static void *host_alloc(size_t size)
{
	return calloc(1, size ? size : 1);
}

static void *host_realloc(void *ptr, size_t size)
{
	return realloc(ptr, size ? size : 1);
}

static char *host_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void host_free(void *ptr)
{
	free(ptr);
}

static int mkdir_p(const char *path)
{
	char buf[4096];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return (mkdir(buf, 0700) != 0 && errno != EEXIST) ? -1 : 0;
}

static const char *host_config_get(struct tbx_call *call, const char *key)
{
	const struct tbx_module *m;
	struct json_object *v;

	assert(call && call->magic == TBX_CALL_MAGIC);
	m = call->module;
	if (!m || !key)
		return NULL;
	if (strcmp(key, "data_dir") == 0 || strcmp(key, "state_dir") == 0) {
		const char *dir = key[0] == 'd' ? m->data_dir : m->state_dir;
		if (dir && mkdir_p(dir) != 0)
			host_log(call, TBX_LOG_WARN, "cannot create %s: %s", dir, strerror(errno));
		return dir;
	}
	if (strcmp(key, "data_root") == 0)
		return m->data_root;
	if (!m->config || !json_object_object_get_ex(m->config, key, &v))
		return NULL;
	return json_object_is_type(v, json_type_string) ? json_object_get_string(v)
							 : json_object_to_json_string(v);
}

static int host_is_cancelled(struct tbx_call *call)
{
	assert(call && call->magic == TBX_CALL_MAGIC);
	return call->cancel ? atomic_load(call->cancel) : 0;
}

static const struct tbx_host_api host_api = {
	.struct_size = sizeof(struct tbx_host_api),
	.abi_minor = TBX_ABI_MINOR,
	.log = host_log,
	.error_set = host_error_set,
	.alloc = host_alloc,
	.realloc = host_realloc,
	.strdup = host_strdup,
	.free = host_free,
	.config_get = host_config_get,
	.is_cancelled = host_is_cancelled,
};

const struct tbx_host_api *tbx_host_api_get(void)
{
	return &host_api;
}
