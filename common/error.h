/* SPDX-License-Identifier: MIT */
/*
 * The core's thread-local "last error": a tbx_status plus a message a person
 * can act on. Set where a failure is first understood, read where it is
 * reported (the RPC layer, the CLI). Never crosses a module boundary: modules
 * use host->error_set() on their call instead.
 */
#ifndef TBX_ERROR_H
#define TBX_ERROR_H

#include <twinbox/plugin.h>

/* Record status and message; returns status so callers can `return tbx_error_set(...)`. */
int tbx_error_set(int status, const char *fmt, ...) TBX_PRINTF(2, 3);
/* Prefix the current message with more context: "context: old message". */
int tbx_error_prefix(const char *fmt, ...) TBX_PRINTF(1, 2);
/* The last status set on this thread (0 if none). */
int tbx_error_status(void);
/* The last message on this thread; never NULL. */
const char *tbx_error_message(void);
void tbx_error_clear(void);
/* "TBX_ENOENT" etc. for a status, for machine-readable error data. */
const char *tbx_status_name(int status);

#endif
