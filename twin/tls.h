/* SPDX-License-Identifier: MIT */
/*
 * Server-side TLS for intercepted hosts: one SSL_CTX per host name holding a
 * leaf forged on first use (cert.h), cached until close to its expiry, all
 * leaves sharing one process-lifetime key. HTTP/1.1 is the only ALPN offered.
 */
#ifndef TBX_TLS_H
#define TBX_TLS_H

#include <openssl/ssl.h>

struct tbx_ca;
struct tbx_tls;

int tbx_tls_new(const struct tbx_ca *ca, struct tbx_tls **out);
void tbx_tls_free(struct tbx_tls *tls);
/* A new server SSL presenting a leaf for host, or NULL (logged). */
SSL *tbx_tls_server_ssl(struct tbx_tls *tls, const char *host);
/* How many leaves were forged so far (tests check the cache with it). */
unsigned long tbx_tls_forged_count(const struct tbx_tls *tls);

#endif
