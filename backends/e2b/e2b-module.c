/* SPDX-License-Identifier: MIT */
/* E2B engine module: the entry symbol, the ops table and the instance. */
#include "e2b.h"

#include <string.h>

static const struct tbx_host_api *e2b_host;

static void e2b_instance_free(void *instance)
{
	struct tbx_e2b *e = instance;

	/* Sandboxes keep running on E2B: they belong to sessions, not to this process. */
	if (!e)
		return;
	e2b_cache_release(e);
	e2b_pool_release(e);
	e2b_config_release(e);
	pthread_mutex_destroy(&e->lock);
	e->host->free(e);
}

static int e2b_instance_new(struct tbx_call *call, void **out)
{
	const struct tbx_host_api *host = e2b_host;
	struct tbx_e2b *e;
	int ret;

	*out = NULL;
	if (tbx_envd_global_init() < 0)
		return host->error_set(call, TBX_EINTERNAL, "libcurl failed to initialise");
	if (!(e = host->alloc(sizeof(*e))))
		return host->error_set(call, TBX_ENOMEM, "out of memory");
	memset(e, 0, sizeof(*e));
	e->host = host;
	pthread_mutex_init(&e->lock, NULL);
	if (e2b_pool_init(e) < 0) {
		ret = host->error_set(call, TBX_ENOMEM, "cannot make the E2B connection pool");
		goto fail;
	}
	if ((ret = e2b_config_load(e, call)) < 0)
		goto fail;
	/* Where, never with what key. */
	host->log(call, TBX_LOG_INFO, "e2b engine: API %s, envd %s, template %s", e->api_url,
		  e->sandbox_url ? e->sandbox_url : "https://49983-<id>.<domain>", e->template_id);
	*out = e;
	return 0;
fail:
	e2b_instance_free(e);
	return ret;
}

static const struct tbx_backend_ops e2b_ops = {
	.struct_size = sizeof(struct tbx_backend_ops),
	.abi_minor = TBX_ABI_MINOR,
	.instance_new = e2b_instance_new,
	.instance_free = e2b_instance_free,
	.sandbox_create = e2b_sandbox_create,
	.sandbox_connect = e2b_sandbox_connect,
	.sandbox_set_timeout = e2b_sandbox_set_timeout,
	.sandbox_pause = e2b_sandbox_pause,
	.sandbox_kill = e2b_sandbox_kill,
	.sandbox_list = e2b_sandbox_list,
	.exec = e2b_exec,
	.file_read = e2b_file_read,
	.file_write = e2b_file_write,
	.file_stat = e2b_file_stat,
	.file_list = e2b_file_list,
	.file_mkdir = e2b_file_mkdir,
	.file_remove = e2b_file_remove,
	.file_rename = e2b_file_rename,
	.preview_url = e2b_preview_url,
};

static const struct tbx_plugin_desc e2b_desc = {
	TBX_PLUGIN_DESC_INIT,
	.kind = TBX_PLUGIN_BACKEND,
	.name = "e2b",
	.version = "0.1.0",
	.description = "E2B cloud sandboxes (Firecracker microVMs)",
	.ops = &e2b_ops,
};

TBX_EXPORT const struct tbx_plugin_desc *tbx_plugin_entry_v1(const struct tbx_host_api *host)
{
	e2b_host = host;
	return &e2b_desc;
}
