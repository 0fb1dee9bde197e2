/* SPDX-License-Identifier: MIT */
/*
 * Listening sockets from address specs: "HOST:PORT" (IPv4, or [IPv6]; port
 * 0 picks one) or "unix:/path" (mode 0600, a stale socket file replaced).
 */
#ifndef TBX_LISTEN_H
#define TBX_LISTEN_H

#include <stddef.h>

/*
 * Bind and listen (non-blocking, close-on-exec). With loopback_only, a TCP
 * address must be 127.0.0.0/8 or ::1. bound gets "127.0.0.1:43215", or the
 * socket path for unix. Returns the fd, or a negative tbx_status with the error set.
 */
int tbx_listen(const char *spec, int loopback_only, char *bound, size_t bound_size, int *is_unix);

#endif
