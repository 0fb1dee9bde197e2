/* SPDX-License-Identifier: MIT */
/* A minimal valid frontend for the loader tests; it shares its name with the fixture backend on purpose. */
#include <twinbox/frontend.h>

static const struct tbx_frontend_ops ops = {
	.struct_size = sizeof(struct tbx_frontend_ops),
	.abi_minor = TBX_ABI_MINOR,
	.protocol = "fixture/1",
};

/* Names are unique per kind, so "fixture" may be both a backend and a frontend. */
static const struct tbx_plugin_desc desc = {
	TBX_PLUGIN_DESC_INIT,
	.kind = TBX_PLUGIN_FRONTEND,
	.name = "fixture",
	.version = "1.0",
	.description = "loader test frontend",
	.ops = &ops,
};

TBX_EXPORT const struct tbx_plugin_desc *tbx_plugin_entry_v1(const struct tbx_host_api *host)
{
	(void)host;
	return &desc;
}
