/* SPDX-License-Identifier: MIT */
/* Exports one function per public type so abidw/abidiff can see the whole plugin ABI in DWARF. */
#include <twinbox/backend.h>
#include <twinbox/frontend.h>

/*
 * libabigail only describes types reachable from exported symbols, so each
 * struct (and each enum, whose values are ABI too) gets a probe taking it.
 * Types reached through members (tbx_exec_output_cb, tbx_core_reply_cb...)
 * come along with their structs. Add a probe here when a public type is added.
 */
#define PROBE(name, type)                                \
	TBX_EXPORT void tbx_abi_probe_##name(type value); \
	TBX_EXPORT void tbx_abi_probe_##name(type value)  \
	{                                                \
		(void)value;                             \
	}

PROBE(host_api, const struct tbx_host_api *)
PROBE(plugin_desc, const struct tbx_plugin_desc *)
PROBE(backend_ops, const struct tbx_backend_ops *)
PROBE(sandbox_spec, const struct tbx_sandbox_spec *)
PROBE(sandbox_info, const struct tbx_sandbox_info *)
PROBE(exec_request, const struct tbx_exec_request *)
PROBE(exec_result, const struct tbx_exec_result *)
PROBE(file_info, const struct tbx_file_info *)
PROBE(frontend_ops, const struct tbx_frontend_ops *)
PROBE(frontend_host, const struct tbx_frontend_host *)

PROBE(status, enum tbx_status)
PROBE(log_level, enum tbx_log_level)
PROBE(plugin_kind, enum tbx_plugin_kind)
PROBE(sandbox_flags, enum tbx_sandbox_flags)
PROBE(sandbox_state, enum tbx_sandbox_state)
PROBE(exec_stream, enum tbx_exec_stream)
PROBE(file_type, enum tbx_file_type)

/* The entry's own signature is ABI as well; this one refuses to load if anyone tries. */
TBX_EXPORT const struct tbx_plugin_desc *tbx_plugin_entry_v1(const struct tbx_host_api *host)
{
	(void)host;
	return NULL;
}
