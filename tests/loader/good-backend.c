/* SPDX-License-Identifier: MIT */
/* A minimal valid backend for the loader tests: config and data_dir echo, most ops left NULL. */
#include <stdlib.h>
#include <string.h>
#include <twinbox/backend.h>

#ifndef FX_NAME
#define FX_NAME "fixture"
#endif

static const struct tbx_host_api *host;

struct instance {
	char *greeting;
	char *data_dir;
};

static int fx_instance_new(struct tbx_call *call, void **out)
{
	struct instance *in = host->alloc(sizeof(*in));
	const char *greeting = host->config_get(call, "greeting");
	const char *data_dir = host->config_get(call, "data_dir");

	if (!in)
		return host->error_set(call, TBX_ENOMEM, "out of memory");
	in->greeting = host->strdup(greeting ? greeting : "no greeting");
	in->data_dir = host->strdup(data_dir ? data_dir : "no data_dir");
	*out = in;
	return 0;
}

static void fx_instance_free(void *instance)
{
	struct instance *in = instance;

	host->free(in->greeting);
	host->free(in->data_dir);
	host->free(in);
}

/* Answers with what the host gave the instance, so the test can see config reach it. */
static int fx_sandbox_create(void *instance, struct tbx_call *call,
			     const struct tbx_sandbox_spec *spec, struct tbx_sandbox_info *out)
{
	struct instance *in = instance;

	(void)spec;
	out->id = host->strdup(in->greeting);
	out->workdir = host->strdup(in->data_dir);
	out->state = TBX_SANDBOX_RUNNING;
	if (!out->id || !out->workdir)
		return host->error_set(call, TBX_ENOMEM, "out of memory");
	return 0;
}

static int fx_sandbox_kill(void *instance, struct tbx_call *call, const char *id)
{
	(void)instance;
	return host->error_set(call, TBX_ENOENT, "no sandbox %s here", id);
}

#ifdef FX_OPS_SHORT
/*
 * Sits past the struct_size this module declares, so the host must never
 * call it: reaching it means the engine wrapper ignored struct_size.
 */
static int fx_exec(void *instance, struct tbx_call *call, const char *id,
		   const struct tbx_exec_request *request, tbx_exec_output_cb on_output,
		   void *payload, struct tbx_exec_result *out)
{
	(void)instance; (void)call; (void)id; (void)request; (void)on_output; (void)payload;
	(void)out;
	abort();
}
#endif

static const struct tbx_backend_ops ops = {
#ifdef FX_OPS_SHORT
	/* As if built against an older minor whose table ended before exec. */
	.struct_size = offsetof(struct tbx_backend_ops, exec),
	.exec = fx_exec,
#else
	.struct_size = sizeof(struct tbx_backend_ops),
#endif
	.abi_minor = TBX_ABI_MINOR,
	.instance_new = fx_instance_new,
	.instance_free = fx_instance_free,
	.sandbox_create = fx_sandbox_create,
	.sandbox_kill = fx_sandbox_kill,
};

static const struct tbx_plugin_desc desc = {
	TBX_PLUGIN_DESC_INIT,
	.kind = TBX_PLUGIN_BACKEND,
	.name = FX_NAME,
	.version = "1.0",
	.description = "loader test backend",
	.ops = &ops,
};

TBX_EXPORT const struct tbx_plugin_desc *tbx_plugin_entry_v1(const struct tbx_host_api *h)
{
	host = h;
	return &desc;
}
