/* SPDX-License-Identifier: MIT */
/* Thread-local last error of the core (see error.h). */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local int last_status;
static _Thread_local char last_message[2048];

int tbx_error_set(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_message, sizeof(last_message), fmt, ap);
	va_end(ap);
	last_status = status;
	return status;
}

int tbx_error_prefix(const char *fmt, ...)
{
	char prefix[512], old[sizeof(last_message)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, last_message, sizeof(old));
	if (snprintf(last_message, sizeof(last_message), "%s: %s", prefix, old) < 0)
		last_message[0] = '\0';
	return last_status;
}

int tbx_error_status(void)
{
	return last_status;
}

const char *tbx_error_message(void)
{
	return last_message[0] ? last_message : "unknown error";
}

void tbx_error_clear(void)
{
	last_status = 0;
	last_message[0] = '\0';
}

const char *tbx_status_name(int status)
{
	switch (status) {
	case TBX_OK: return "TBX_OK";
	case TBX_EINVAL: return "TBX_EINVAL";
	case TBX_ENOTSUP: return "TBX_ENOTSUP";
	case TBX_ENOENT: return "TBX_ENOENT";
	case TBX_EEXIST: return "TBX_EEXIST";
	case TBX_EIO: return "TBX_EIO";
	case TBX_ECANCELED: return "TBX_ECANCELED";
	case TBX_ETIMEDOUT: return "TBX_ETIMEDOUT";
	case TBX_ENOMEM: return "TBX_ENOMEM";
	case TBX_EPERM: return "TBX_EPERM";
	case TBX_EUNAVAIL: return "TBX_EUNAVAIL";
	case TBX_EGONE: return "TBX_EGONE";
	case TBX_ENOTDIR: return "TBX_ENOTDIR";
	case TBX_EISDIR: return "TBX_EISDIR";
	case TBX_EPROTO: return "TBX_EPROTO";
	case TBX_EPAUSED: return "TBX_EPAUSED";
	case TBX_EINTERNAL: return "TBX_EINTERNAL";
	case TBX_EAUTH: return "TBX_EAUTH";
	default: return "TBX_EUNKNOWN";
	}
}
