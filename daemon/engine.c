/* SPDX-License-Identifier: MIT */
/* Engines: a backend module plus its instance, and checked wrappers for its ops. */
#include "engine.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "error.h"
#include "module.h"

const char *tbx_engine_name(const struct tbx_engine *engine)
{
	return engine->module->desc->name;
}

/* An op is usable when the module's table is long enough to hold it and it is set. */
#define ENGINE_HAS(e, op)                                                                  \
	((e)->ops->struct_size >= offsetof(struct tbx_backend_ops, op) + sizeof((e)->ops->op) && \
	 (e)->ops->op != NULL)

#define ENGINE_CALL(e, cancel, op, ...)                                                    \
	do {                                                                               \
		struct tbx_call call_;                                                     \
		if (!ENGINE_HAS(e, op))                                                    \
			return tbx_error_set(TBX_ENOTSUP,                                  \
					     "the %s engine does not support " #op,        \
					     tbx_engine_name(e));                          \
		tbx_call_init(&call_, (e)->module, (cancel));                              \
		return tbx_call_report(&call_, (e)->ops->op((e)->instance, &call_, __VA_ARGS__), \
				       #op);                                               \
	} while (0)

int tbx_engine_open(const struct tbx_module *module, struct tbx_engine **out)
{
	struct tbx_engine *e;
	struct tbx_call call;
	int rc;

	if (!module || module->desc->kind != TBX_PLUGIN_BACKEND)
		return tbx_error_set(TBX_EINVAL, "not a backend module");
	e = calloc(1, sizeof(*e));
	if (!e)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	e->module = module;
	e->ops = module->desc->ops;
	if (ENGINE_HAS(e, instance_new)) {
		tbx_call_init(&call, module, NULL);
		rc = e->ops->instance_new(&call, &e->instance);
		if (rc < 0) {
			free(e);
			tbx_call_report(&call, rc, "instance_new");
			return tbx_error_prefix("cannot start the %s engine", module->desc->name);
		}
	}
	*out = e;
	return 0;
}

void tbx_engine_free(struct tbx_engine *engine)
{
	if (!engine)
		return;
	if (ENGINE_HAS(engine, instance_free))
		engine->ops->instance_free(engine->instance);
	free(engine);
}

void tbx_sandbox_info_init(struct tbx_sandbox_info *info)
{
	memset(info, 0, sizeof(*info));
	info->struct_size = sizeof(*info);
	info->abi_minor = TBX_ABI_MINOR;
}

void tbx_sandbox_info_clear(struct tbx_sandbox_info *info)
{
	free(info->id);
	free(info->workdir);
	for (char **l = info->labels; l && *l; l++)
		free(*l);
	free(info->labels);
	tbx_sandbox_info_init(info);
}

void tbx_file_info_init(struct tbx_file_info *info)
{
	memset(info, 0, sizeof(*info));
	info->struct_size = sizeof(*info);
	info->abi_minor = TBX_ABI_MINOR;
}

void tbx_file_info_clear(struct tbx_file_info *info)
{
	free(info->name);
	free(info->path);
	free(info->symlink_target);
	tbx_file_info_init(info);
}

void tbx_file_infos_free(struct tbx_file_info *infos, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tbx_file_info_clear(&infos[i]);
	free(infos);
}

int tbx_engine_sandbox_create(struct tbx_engine *e, const atomic_int *cancel,
			      const struct tbx_sandbox_spec *spec, struct tbx_sandbox_info *out)
{
	ENGINE_CALL(e, cancel, sandbox_create, spec, out);
}

int tbx_engine_sandbox_connect(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			       uint32_t timeout_s, struct tbx_sandbox_info *out)
{
	ENGINE_CALL(e, cancel, sandbox_connect, id, timeout_s, out);
}

int tbx_engine_sandbox_set_timeout(struct tbx_engine *e, const atomic_int *cancel,
				   const char *id, uint32_t timeout_s)
{
	ENGINE_CALL(e, cancel, sandbox_set_timeout, id, timeout_s);
}

int tbx_engine_sandbox_pause(struct tbx_engine *e, const atomic_int *cancel, const char *id)
{
	ENGINE_CALL(e, cancel, sandbox_pause, id);
}

int tbx_engine_sandbox_kill(struct tbx_engine *e, const atomic_int *cancel, const char *id)
{
	ENGINE_CALL(e, cancel, sandbox_kill, id);
}

static int tbx_engine_call_sandbox_list(struct tbx_engine *e, const atomic_int *cancel,
					const char *const *labels, struct tbx_sandbox_info **out,
					size_t *n_out)
{
	ENGINE_CALL(e, cancel, sandbox_list, labels, out, n_out);
}

/*
 * A module fills arrays with elements of its own sizeof, which differs from
 * ours once the struct grows on either side. Re-lay the array out with our
 * stride, copying the members both sides know; the rest stay zero.
 */
static int restride(void **array, size_t n, size_t host_size)
{
	char *theirs = *array, *ours;
	size_t their_size;

	if (n == 0 || !theirs)
		return 0;
	their_size = *(const uint32_t *)theirs; /* struct_size leads every struct */
	if (their_size == host_size)
		return 0;
	if (their_size < 2 * sizeof(uint32_t))
		return tbx_error_set(TBX_EPROTO, "a module returned an array without struct_size set");
	ours = calloc(n, host_size);
	if (!ours)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		memcpy(ours + i * host_size, theirs + i * their_size,
		       their_size < host_size ? their_size : host_size);
		*(uint32_t *)(ours + i * host_size) = (uint32_t)host_size;
	}
	free(theirs);
	*array = ours;
	return 0;
}

int tbx_engine_sandbox_list(struct tbx_engine *e, const atomic_int *cancel,
			    const char *const *labels, struct tbx_sandbox_info **out, size_t *n_out)
{
	int rc;

	*out = NULL;
	*n_out = 0;
	rc = tbx_engine_call_sandbox_list(e, cancel, labels, out, n_out);
	return rc < 0 ? rc : restride((void **)out, *n_out, sizeof(**out));
}

int tbx_engine_exec(struct tbx_engine *e, const atomic_int *cancel, const char *id,
		    const struct tbx_exec_request *req, tbx_exec_output_cb on_output, void *payload,
		    struct tbx_exec_result *out)
{
	ENGINE_CALL(e, cancel, exec, id, req, on_output, payload, out);
}

int tbx_engine_file_read(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			 const char *path, char **data_out, size_t *len_out)
{
	ENGINE_CALL(e, cancel, file_read, id, path, data_out, len_out);
}

int tbx_engine_file_write(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			  const char *path, const char *data, size_t len)
{
	ENGINE_CALL(e, cancel, file_write, id, path, data, len);
}

int tbx_engine_file_stat(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			 const char *path, struct tbx_file_info *out)
{
	ENGINE_CALL(e, cancel, file_stat, id, path, out);
}

static int tbx_engine_call_file_list(struct tbx_engine *e, const atomic_int *cancel,
				     const char *id, const char *path, uint32_t depth,
				     struct tbx_file_info **out, size_t *n_out)
{
	ENGINE_CALL(e, cancel, file_list, id, path, depth, out, n_out);
}

int tbx_engine_file_list(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			 const char *path, uint32_t depth, struct tbx_file_info **out, size_t *n_out)
{
	int rc;

	*out = NULL;
	*n_out = 0;
	rc = tbx_engine_call_file_list(e, cancel, id, path, depth, out, n_out);
	return rc < 0 ? rc : restride((void **)out, *n_out, sizeof(**out));
}

int tbx_engine_file_mkdir(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			  const char *path)
{
	ENGINE_CALL(e, cancel, file_mkdir, id, path);
}

int tbx_engine_file_remove(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			   const char *path)
{
	ENGINE_CALL(e, cancel, file_remove, id, path);
}

int tbx_engine_file_rename(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			   const char *from, const char *to)
{
	ENGINE_CALL(e, cancel, file_rename, id, from, to);
}

int tbx_engine_preview_url(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			   uint16_t port, char **url_out)
{
	ENGINE_CALL(e, cancel, preview_url, id, port, url_out);
}
