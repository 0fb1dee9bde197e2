/* SPDX-License-Identifier: MIT */
/* Connect error code tables shared by the envd client and the local agent. */
#include "envd-codes.h"

#include <string.h>
#include <twinbox/plugin.h>

static const struct {
	const char *code;
	int http;
	int status;
} codes[] = {
	{ "canceled", 499, TBX_ECANCELED },
	{ "unknown", 500, TBX_EIO },
	{ "invalid_argument", 400, TBX_EINVAL },
	{ "deadline_exceeded", 504, TBX_ETIMEDOUT },
	{ "not_found", 404, TBX_ENOENT },
	{ "already_exists", 409, TBX_EEXIST },
	{ "permission_denied", 403, TBX_EPERM },
	{ "resource_exhausted", 429, TBX_EIO },
	{ "failed_precondition", 400, TBX_EIO },
	{ "aborted", 409, TBX_EIO },
	{ "out_of_range", 400, TBX_EIO },
	{ "unimplemented", 501, TBX_ENOTSUP },
	{ "internal", 500, TBX_EIO },
	{ "unavailable", 503, TBX_EUNAVAIL },
	{ "data_loss", 500, TBX_EIO },
	{ "unauthenticated", 401, TBX_EAUTH },
};

int tbx_envd_code_status(const char *code)
{
	for (size_t i = 0; code && i < sizeof(codes) / sizeof(codes[0]); i++)
		if (strcmp(codes[i].code, code) == 0)
			return codes[i].status;
	return TBX_EIO;
}

int tbx_envd_code_http(const char *code)
{
	for (size_t i = 0; code && i < sizeof(codes) / sizeof(codes[0]); i++)
		if (strcmp(codes[i].code, code) == 0)
			return codes[i].http;
	return 500;
}

const char *tbx_envd_code_from_http(int http_status)
{
	switch (http_status) {
	case 400: return "internal";
	case 401: return "unauthenticated";
	case 403: return "permission_denied";
	case 404: return "unimplemented";
	case 429: case 502: case 503: case 504: return "unavailable";
	default: return "unknown";
	}
}
