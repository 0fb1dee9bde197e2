/* SPDX-License-Identifier: MIT */
/* Wall-clock helpers (see clock.h). */
#include "clock.h"

#include <stdio.h>
#include <time.h>

int64_t tbx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void tbx_rfc3339(int64_t ms, char *out, unsigned long out_size)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	char base[24];

	gmtime_r(&s, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, out_size, "%s.%03dZ", base, (int)(ms % 1000));
}
