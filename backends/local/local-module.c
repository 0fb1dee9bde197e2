/* SPDX-License-Identifier: MIT */
/* Local engine module: the entry symbol, the ops table and the instance. */
#define _GNU_SOURCE
#include "local.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static const struct tbx_host_api *local_host;

static int local_instance_new(struct tbx_call *call, void **out)
{
	const struct tbx_host_api *host = local_host;
	struct tbx_local *l;
	const char *root = host->config_get(call, "data_root");
	char buf[4096];
	int ret;

	*out = NULL;
	if (tbx_envd_global_init() < 0)
		return host->error_set(call, TBX_EINTERNAL, "libcurl failed to initialise");
	l = host->alloc(sizeof(*l));
	if (!l)
		return host->error_set(call, TBX_ENOMEM, "out of memory");
	memset(l, 0, sizeof(*l));
	l->host = host;
	if (!root || !*root) {
		const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");

		if (xdg && *xdg)
			snprintf(buf, sizeof(buf), "%s/twinbox", xdg);
		else if (home && *home)
			snprintf(buf, sizeof(buf), "%s/.local/share/twinbox", home);
		else {
			host->free(l);
			return host->error_set(call, TBX_EINVAL,
					       "no data_root for the local engine and no $HOME");
		}
		root = buf;
	}
	{
		size_t n = strlen(root) + sizeof("/sandboxes");

		l->sandboxes = host->alloc(n);
		if (l->sandboxes)
			snprintf(l->sandboxes, n, "%s/sandboxes", root);
	}
	l->bwrap = local_find_bwrap(call, host);
	l->agent = local_find_agent(call, host);
	if (!l->sandboxes) {
		ret = host->error_set(call, TBX_ENOMEM, "out of memory");
		goto fail;
	}
	if (!l->bwrap) {
		ret = host->error_set(call, TBX_EUNAVAIL,
				host->config_get(call, "bwrap")
					? "bubblewrap (bwrap) not found at the configured path: "
					  "apt-get install bubblewrap"
					: "bubblewrap (bwrap) not found: apt-get install bubblewrap");
		goto fail;
	}
	if (!l->agent) {
		ret = host->error_set(call, TBX_EUNAVAIL,
				"twinbox-sandbox-agent not found beside local.so, in %s, or at "
				"the configured agent_path: reinstall twinbox",
				TBX_LIBEXEC_DIR);
		goto fail;
	}
	host->log(call, TBX_LOG_DEBUG, "local engine: sandboxes in %s, bwrap %s, agent %s",
		  l->sandboxes, l->bwrap, l->agent);
	*out = l;
	return 0;
fail:
	host->free(l->sandboxes);
	host->free(l->bwrap);
	host->free(l->agent);
	host->free(l);
	return ret;
}

static void local_instance_free(void *instance)
{
	struct tbx_local *l = instance;

	/* Sandboxes keep running: they belong to sessions, not to this process. */
	if (!l)
		return;
	l->host->free(l->sandboxes);
	l->host->free(l->bwrap);
	l->host->free(l->agent);
	l->host->free(l);
}

static const struct tbx_backend_ops local_ops = {
	.struct_size = sizeof(struct tbx_backend_ops),
	.abi_minor = TBX_ABI_MINOR,
	.instance_new = local_instance_new,
	.instance_free = local_instance_free,
	.sandbox_create = local_sandbox_create,
	.sandbox_connect = local_sandbox_connect,
	.sandbox_set_timeout = local_sandbox_set_timeout,
	.sandbox_pause = local_sandbox_pause,
	.sandbox_kill = local_sandbox_kill,
	.sandbox_list = local_sandbox_list,
	.exec = local_exec,
	.file_read = local_file_read,
	.file_write = local_file_write,
	.file_stat = local_file_stat,
	.file_list = local_file_list,
	.file_mkdir = local_file_mkdir,
	.file_remove = local_file_remove,
	.file_rename = local_file_rename,
	/* No port forwarding out of the loopback-only namespace yet. */
	.preview_url = NULL,
};

static const struct tbx_plugin_desc local_desc = {
	TBX_PLUGIN_DESC_INIT,
	.kind = TBX_PLUGIN_BACKEND,
	.name = "local",
	.version = "0.1.0",
	.description = "bubblewrap sandboxes on this machine",
	.ops = &local_ops,
};

TBX_EXPORT const struct tbx_plugin_desc *tbx_plugin_entry_v1(const struct tbx_host_api *host)
{
	local_host = host;
	return &local_desc;
}
