/* SPDX-License-Identifier: MIT */
/*
 * The twin's CA and forged leaves: made once and kept private, and every leaf
 * verified by OpenSSL against the CA with X509_V_FLAG_X509_STRICT (what
 * Python 3.13's VERIFY_X509_STRICT turns on), for names and addresses.
 */
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cert.h"
#include "tls.h"

static int failures, checks;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		checks++;                                                                  \
		if (!(cond)) {                                                             \
			failures++;                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                          \
	} while (0)

static char dir[] = "/tmp/tbx-cert-XXXXXX";

/* 0 when leaf verifies strictly for host as a TLS server certificate, else the X509_V_ERR. */
static int verify(const struct tbx_ca *ca, X509 *leaf, const char *host)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	X509_VERIFY_PARAM *param;
	int rc;

	X509_STORE_add_cert(store, ca->cert);
	X509_STORE_CTX_init(ctx, store, leaf, NULL);
	param = X509_STORE_CTX_get0_param(ctx);
	X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_X509_STRICT);
	X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
	if (strchr(host, ':') || strspn(host, "0123456789.") == strlen(host))
		X509_VERIFY_PARAM_set1_ip_asc(param, host);
	else
		X509_VERIFY_PARAM_set1_host(param, host, 0);
	rc = X509_verify_cert(ctx) == 1 ? 0 : X509_STORE_CTX_get_error(ctx);
	if (rc)
		fprintf(stderr, "  %s: %s\n", host, X509_verify_cert_error_string(rc));
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	return rc;
}

static int has_ext(X509 *x, int nid, int critical)
{
	int at = X509_get_ext_by_NID(x, nid, -1);
	return at >= 0 && X509_EXTENSION_get_critical(X509_get_ext(x, at)) == critical;
}

static void test_leaves(const struct tbx_ca *ca)
{
	static const char *const hosts[] = { "api.stripe.com", "canary.twinbox.invalid", "127.0.0.1", "::1",
		"a-very-long-host-name-that-is-over-sixty-four-bytes-long.example.com" };
	EVP_PKEY *key = tbx_cert_new_key();
	time_t now = time(NULL);

	CHECK(key != NULL);
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		X509 *leaf = tbx_cert_forge_leaf(ca, key, hosts[i], now, 24 * 3600);
		CHECK(leaf != NULL);
		if (!leaf)
			continue;
		CHECK(verify(ca, leaf, hosts[i]) == 0);
		CHECK(verify(ca, leaf, "evil.example.com") != 0);
		CHECK(has_ext(leaf, NID_subject_alt_name, strlen(hosts[i]) > 64));
		CHECK(has_ext(leaf, NID_authority_key_identifier, 0));
		CHECK(has_ext(leaf, NID_subject_key_identifier, 0));
		CHECK(has_ext(leaf, NID_basic_constraints, 1));
		CHECK(has_ext(leaf, NID_key_usage, 1));
		CHECK(has_ext(leaf, NID_ext_key_usage, 0));
		CHECK(X509_get_version(leaf) == X509_VERSION_3);
		CHECK(X509_check_ca(leaf) == 0);
		/* Backdated a few minutes, valid about a day. */
		int days, secs;
		ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(leaf), X509_get0_notAfter(leaf));
		CHECK(days * 86400 + secs == 24 * 3600 + 5 * 60);
		CHECK(X509_cmp_time(X509_get0_notBefore(leaf), &now) < 0);
		X509_free(leaf);
	}
	/* A leaf signed by another CA does not verify. */
	struct tbx_ca other = { 0 };
	char other_dir[64];
	snprintf(other_dir, sizeof(other_dir), "%s/other", dir);
	CHECK(tbx_ca_load_or_create(other_dir, &other) == 0);
	X509 *foreign = tbx_cert_forge_leaf(&other, key, "api.stripe.com", now, 3600);
	CHECK(foreign && verify(ca, foreign, "api.stripe.com") != 0);
	X509_free(foreign);
	tbx_ca_free(&other);
	EVP_PKEY_free(key);
}

static void test_ca_on_disk(void)
{
	struct tbx_ca ca = { 0 }, again = { 0 };
	char ca_dir[64], key_path[96], pem_path[96];
	struct stat st;

	snprintf(ca_dir, sizeof(ca_dir), "%s/ca", dir);
	snprintf(key_path, sizeof(key_path), "%s/ca.key", ca_dir);
	snprintf(pem_path, sizeof(pem_path), "%s/ca.pem", ca_dir);
	CHECK(tbx_ca_load_or_create(ca_dir, &ca) == 0);
	CHECK(stat(ca_dir, &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(stat(key_path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(ca.pem && strncmp(ca.pem, "-----BEGIN CERTIFICATE-----", 27) == 0);
	CHECK(X509_check_ca(ca.cert) == 1);
	CHECK(has_ext(ca.cert, NID_basic_constraints, 1) && has_ext(ca.cert, NID_key_usage, 1));
	CHECK((X509_get_key_usage(ca.cert) & (KU_KEY_CERT_SIGN | KU_CRL_SIGN)) == (KU_KEY_CERT_SIGN | KU_CRL_SIGN));
	CHECK(X509_get_pathlen(ca.cert) == 0);
	test_leaves(&ca);

	/* Made once: a second start loads the same CA, and makes its key private again. */
	chmod(key_path, 0644);
	CHECK(tbx_ca_load_or_create(ca_dir, &again) == 0);
	CHECK(again.cert && X509_cmp(ca.cert, again.cert) == 0);
	CHECK(stat(key_path, &st) == 0 && (st.st_mode & 0777) == 0600);
	tbx_ca_free(&again);

	/* A CA whose halves do not match is refused, not replaced. */
	FILE *f = fopen(pem_path, "w");
	fputs("not a certificate\n", f);
	fclose(f);
	CHECK(tbx_ca_load_or_create(ca_dir, &again) < 0);

	/* The TLS cache forges once per host. */
	struct tbx_tls *tls = NULL;
	CHECK(tbx_tls_new(&ca, &tls) == 0);
	SSL *a = tbx_tls_server_ssl(tls, "api.stripe.com");
	SSL *b = tbx_tls_server_ssl(tls, "api.stripe.com");
	SSL *c = tbx_tls_server_ssl(tls, "api.github.com");
	CHECK(a && b && c && tbx_tls_forged_count(tls) == 2);
	SSL_free(a);
	SSL_free(b);
	SSL_free(c);
	tbx_tls_free(tls);
	tbx_ca_free(&ca);
}

int main(void)
{
	char cmd[128];

	if (!mkdtemp(dir))
		return 1;
	test_ca_on_disk();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
