/* SPDX-License-Identifier: MIT */
/* One deliberately broken module per set of -DFX_* flags, for the loader's refusal tests. */
#include <stddef.h>
#include <twinbox/backend.h>
#include <twinbox/frontend.h>

/*
 * Each fixture changes one thing from a valid backend, so a refusal can only
 * be about that thing; the meson table says which flag makes which fixture.
 */
#ifndef FX_NAME
#define FX_NAME "bad"
#endif
/* A flag, not a test of FX_KIND: #if cannot see enum constants. */
#ifndef FX_KIND
#ifdef FX_FRONTEND
#define FX_KIND TBX_PLUGIN_FRONTEND
#else
#define FX_KIND TBX_PLUGIN_BACKEND
#endif
#endif
#ifndef FX_MAJOR
#define FX_MAJOR TBX_ABI_MAJOR
#endif
#ifndef FX_MINOR
#define FX_MINOR TBX_ABI_MINOR
#endif
#ifndef FX_DESC_SIZE
#define FX_DESC_SIZE sizeof(struct tbx_plugin_desc)
#endif
#ifndef FX_OPS_SIZE
#define FX_OPS_SIZE sizeof(struct tbx_backend_ops)
#endif
#ifndef FX_OPS_MINOR
#define FX_OPS_MINOR TBX_ABI_MINOR
#endif
#ifndef FX_PROTOCOL
#define FX_PROTOCOL "bad/1"
#endif

/* 65 characters: one more than a module name may have. */
#define FX_LONG_NAME "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

#if defined(FX_NULL_OPS)
/* no ops table at all */
#elif defined(FX_FRONTEND)
static const struct tbx_frontend_ops ops = {
	.struct_size = sizeof(struct tbx_frontend_ops),
	.abi_minor = FX_OPS_MINOR,
	.protocol = FX_PROTOCOL,
};
#else
static const struct tbx_backend_ops ops = {
	.struct_size = FX_OPS_SIZE,
	.abi_minor = FX_OPS_MINOR,
};
#endif

static const struct tbx_plugin_desc desc = {
	.struct_size = FX_DESC_SIZE,
	.abi_major = FX_MAJOR,
	.abi_minor = FX_MINOR,
	.kind = FX_KIND,
	.name = FX_NAME,
	.version = "0",
	.description = "a module the loader must refuse",
#ifdef FX_NULL_OPS
	.ops = NULL,
#else
	.ops = &ops,
#endif
};

#ifdef FX_UNRESOLVED
/* Defined nowhere: RTLD_NOW must refuse the module at dlopen() time. */
extern int tbx_fixture_no_such_function(void);
#endif

#if defined(FX_NO_ENTRY)
/* An entry under the wrong name, as a hand-written module without plugin.h's declaration might have. */
TBX_EXPORT const struct tbx_plugin_desc *tbx_plugin_entry(const struct tbx_host_api *host);
TBX_EXPORT const struct tbx_plugin_desc *tbx_plugin_entry(const struct tbx_host_api *host)
#elif defined(FX_ENTRY_V2)
/* What a module built for a future ABI 2 would export instead. */
TBX_EXPORT const struct tbx_plugin_desc *tbx_plugin_entry_v2(const struct tbx_host_api *host);
TBX_EXPORT const struct tbx_plugin_desc *tbx_plugin_entry_v2(const struct tbx_host_api *host)
#else
TBX_EXPORT const struct tbx_plugin_desc *tbx_plugin_entry_v1(const struct tbx_host_api *host)
#endif
{
#ifdef FX_UNRESOLVED
	if (tbx_fixture_no_such_function())
		return NULL;
#endif
#ifdef FX_ENTRY_NULL
	(void)desc;
	host->log(NULL, TBX_LOG_WARN, "fixture declines to load, as the test asked");
	return NULL;
#else
	(void)host;
	return &desc;
#endif
}
