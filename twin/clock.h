/* SPDX-License-Identifier: MIT */
/* Wall-clock time for records: milliseconds since the epoch, and RFC 3339 text. */
#ifndef TBX_CLOCK_H
#define TBX_CLOCK_H

#include <stdint.h>

int64_t tbx_now_ms(void);
/* "2026-11-29T12:34:56.789Z" into out (>= 32 bytes). */
void tbx_rfc3339(int64_t ms, char *out, unsigned long out_size);

#endif
