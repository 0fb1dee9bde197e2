// SPDX-License-Identifier: MIT
// The TBX_*_INIT macros are designated initializers, so C++ modules can use them from C++20 on.
#include <twinbox/backend.h>

static const struct tbx_plugin_desc desc = {
	TBX_PLUGIN_DESC_INIT,
	.kind = TBX_PLUGIN_BACKEND,
	.name = "header-test",
};

int main()
{
	const struct tbx_sandbox_spec spec = TBX_SANDBOX_SPEC_INIT;
	const struct tbx_exec_request req = TBX_EXEC_REQUEST_INIT;

	return TBX_STRUCT_HAS(&desc, struct tbx_plugin_desc, ops) &&
			       spec.struct_size == sizeof(spec) && req.abi_minor == TBX_ABI_MINOR
		       ? 0
		       : 1;
}
