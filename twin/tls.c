/* SPDX-License-Identifier: MIT */
/* Per-host server contexts with forged leaves (see tls.h). */
#include "tls.h"

#include <openssl/err.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cert.h"
#include "error.h"
#include "log.h"

#define TBX_LOG_CATEGORY "twin.tls"

#define LEAF_VALIDITY_S (24 * 3600)
/* Re-forge well before expiry so no handshake ever gets a leaf about to lapse. */
#define LEAF_REFRESH_S (3600)
#define CACHE_MAX 512

struct leaf_entry {
	char host[256];
	SSL_CTX *ctx;
	time_t refresh_at;
	unsigned long last_used;
};

struct tbx_tls {
	const struct tbx_ca *ca;
	EVP_PKEY *leaf_key;
	struct leaf_entry *cache;
	size_t n_cache;
	unsigned long clock, forged;
};

int tbx_tls_new(const struct tbx_ca *ca, struct tbx_tls **out)
{
	struct tbx_tls *tls = calloc(1, sizeof(*tls));

	if (!tls || !(tls->cache = calloc(CACHE_MAX, sizeof(*tls->cache)))) {
		free(tls);
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	}
	tls->ca = ca;
	/* One key for every leaf: forging stays cheap, and it never leaves memory. */
	if (!(tls->leaf_key = tbx_cert_new_key())) {
		tbx_tls_free(tls);
		return tbx_error_set(TBX_EINTERNAL, "cannot make the leaf key");
	}
	*out = tls;
	return 0;
}

void tbx_tls_free(struct tbx_tls *tls)
{
	if (!tls)
		return;
	for (size_t i = 0; i < tls->n_cache; i++)
		SSL_CTX_free(tls->cache[i].ctx);
	free(tls->cache);
	EVP_PKEY_free(tls->leaf_key);
	free(tls);
}

unsigned long tbx_tls_forged_count(const struct tbx_tls *tls)
{
	return tls->forged;
}

/* Speak HTTP/1.1 whatever else is offered: the twins do not speak h2. */
static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	for (unsigned int i = 0; i < inlen; i += 1u + in[i]) {
		if (in[i] == 8 && i + 9 <= inlen && memcmp(in + i + 1, "http/1.1", 8) == 0) {
			*out = in + i + 1;
			*outlen = 8;
			return SSL_TLSEXT_ERR_OK;
		}
	}
	return SSL_TLSEXT_ERR_NOACK;
}

static SSL_CTX *make_ctx(struct tbx_tls *tls, const char *host, time_t now)
{
	X509 *leaf = tbx_cert_forge_leaf(tls->ca, tls->leaf_key, host, now, LEAF_VALIDITY_S);
	SSL_CTX *ctx = leaf ? SSL_CTX_new(TLS_server_method()) : NULL;

	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    SSL_CTX_use_certificate(ctx, leaf) != 1 || SSL_CTX_use_PrivateKey(ctx, tls->leaf_key) != 1) {
		tbx_log_error("cannot forge a certificate for %s: %s", host,
			      ERR_error_string(ERR_get_error(), NULL));
		SSL_CTX_free(ctx);
		X509_free(leaf);
		return NULL;
	}
	X509_free(leaf);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
	tls->forged++;
	return ctx;
}

SSL *tbx_tls_server_ssl(struct tbx_tls *tls, const char *host)
{
	time_t now = time(NULL);
	struct leaf_entry *e = NULL;

	for (size_t i = 0; i < tls->n_cache; i++)
		if (strcmp(tls->cache[i].host, host) == 0)
			e = &tls->cache[i];
	if (e && now >= e->refresh_at) {
		SSL_CTX_free(e->ctx); /* connections using it hold their own reference */
		e->ctx = NULL;
	}
	if (!e) {
		if (tls->n_cache < CACHE_MAX) {
			e = &tls->cache[tls->n_cache++];
		} else { /* evict the least recently used */
			e = &tls->cache[0];
			for (size_t i = 1; i < tls->n_cache; i++)
				if (tls->cache[i].last_used < e->last_used)
					e = &tls->cache[i];
			SSL_CTX_free(e->ctx);
			e->ctx = NULL;
		}
		snprintf(e->host, sizeof(e->host), "%s", host);
	}
	if (!e->ctx) {
		if (!(e->ctx = make_ctx(tls, host, now))) {
			e->host[0] = '\0';
			return NULL;
		}
		e->refresh_at = now + LEAF_VALIDITY_S - LEAF_REFRESH_S;
	}
	e->last_used = ++tls->clock;
	return SSL_new(e->ctx);
}
