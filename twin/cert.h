/* SPDX-License-Identifier: MIT */
/*
 * The twin's certificate authority and the leaves it forges for intercepted
 * host names. The CA is made once, at first start, in <state>/ca/ (key 0600,
 * never copied elsewhere); leaves are short-lived, built to satisfy strict
 * verifiers (X509_V_FLAG_X509_STRICT, Python 3.13's VERIFY_X509_STRICT).
 */
#ifndef TBX_CERT_H
#define TBX_CERT_H

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <time.h>

struct tbx_ca {
	X509 *cert;
	EVP_PKEY *key;
	char *pem;         /* the certificate, PEM, NUL-terminated */
	char cert_path[4096];
};

/* A fresh EC P-256 key, or NULL. */
EVP_PKEY *tbx_cert_new_key(void);
/*
 * Load <dir>/ca.key and <dir>/ca.pem, or make them when neither exists
 * (the directory is created 0700, the key written 0600). 0 or a negative
 * tbx_status with the error set.
 */
int tbx_ca_load_or_create(const char *dir, struct tbx_ca *ca);
void tbx_ca_free(struct tbx_ca *ca);
/*
 * A leaf for host (a name, or an IP literal) with key's public half, signed
 * by the CA: SAN, AKI, SKI, CA:FALSE, digitalSignature, serverAuth, valid
 * from now - 5 min for validity_s seconds. NULL on failure.
 */
X509 *tbx_cert_forge_leaf(const struct tbx_ca *ca, EVP_PKEY *key, const char *host, time_t now,
			  long validity_s);

#endif
