/* SPDX-License-Identifier: MIT */
/* Core logging (see log.h). */
#include "log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int max_level = -1;

static const char *const level_names[] = { "error", "warn", "info", "debug", "trace" };

int tbx_log_level_parse(const char *s)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (s && strcmp(s, level_names[i]) == 0)
			return (int)i;
	return -1;
}

void tbx_log_set_level(enum tbx_log_level level)
{
	max_level = (int)level;
}

int tbx_log_enabled(enum tbx_log_level level)
{
	if (max_level < 0) {
		int env = tbx_log_level_parse(getenv("TWINBOX_LOG_LEVEL"));
		max_level = env >= 0 ? env : TBX_LOG_INFO;
	}
	return (int)level <= max_level;
}

void tbx_log_writev(enum tbx_log_level level, const char *category, const char *fmt, va_list ap)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	char stamp[32];
	struct timespec ts;
	struct tm tm;

	if (!tbx_log_enabled(level))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	pthread_mutex_lock(&lock);
	fprintf(stderr, "%s.%03ldZ %-5s %s: ", stamp, ts.tv_nsec / 1000000L,
		level_names[level <= TBX_LOG_TRACE ? level : TBX_LOG_TRACE], category);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&lock);
}

void tbx_log_write(enum tbx_log_level level, const char *category, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tbx_log_writev(level, category, fmt, ap);
	va_end(ap);
}
