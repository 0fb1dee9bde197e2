/* SPDX-License-Identifier: MIT */
/*
 * Core logging: timestamped lines on stderr (or the daemon's log file), one
 * category per file, level filtered by TWINBOX_LOG_LEVEL (error..trace).
 */
#ifndef TBX_LOG_H
#define TBX_LOG_H

#include <stdarg.h>
#include <twinbox/plugin.h>

void tbx_log_set_level(enum tbx_log_level level);
/* Parse "error", "warn", "info", "debug", "trace"; returns -1 if unknown. */
int tbx_log_level_parse(const char *s);
int tbx_log_enabled(enum tbx_log_level level);
void tbx_log_write(enum tbx_log_level level, const char *category, const char *fmt, ...)
	TBX_PRINTF(3, 4);
void tbx_log_writev(enum tbx_log_level level, const char *category, const char *fmt, va_list ap);

#define tbx_log_error(...) tbx_log_write(TBX_LOG_ERROR, TBX_LOG_CATEGORY, __VA_ARGS__)
#define tbx_log_warn(...) tbx_log_write(TBX_LOG_WARN, TBX_LOG_CATEGORY, __VA_ARGS__)
#define tbx_log_info(...) tbx_log_write(TBX_LOG_INFO, TBX_LOG_CATEGORY, __VA_ARGS__)
#define tbx_log_debug(...) tbx_log_write(TBX_LOG_DEBUG, TBX_LOG_CATEGORY, __VA_ARGS__)

#endif
