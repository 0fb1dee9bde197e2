/* SPDX-License-Identifier: MIT */
/*
 * Host names from untrusted clients (SOCKS5, CONNECT, SNI): validated and
 * put in one canonical form before they pick a route or name a certificate.
 */
#ifndef TBX_HOSTNAME_H
#define TBX_HOSTNAME_H

#include <stddef.h>

/*
 * Canonicalise host in place: lowercase, no trailing dot. Accepts LDH names
 * (letters, digits, hyphens, underscores; labels 1..63; total <= 253) and IPv4
 * or IPv6 literals (without brackets). Returns 0, or -1 if host is not one.
 */
int tbx_hostname_canon(char *host);
/* 4 for an IPv4 literal, 6 for IPv6, 0 for a name. */
int tbx_hostname_ip_family(const char *host);

#endif
