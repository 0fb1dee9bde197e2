/* SPDX-License-Identifier: MIT */
/* The local CA and leaf forging with OpenSSL 3 (see cert.h). */
#include "cert.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "hostname.h"
#include "log.h"
#include "paths.h"

#define TBX_LOG_CATEGORY "twin.cert"

#define CA_VALIDITY_S (10L * 365 * 24 * 3600)
/* Clocks in sandboxes drift; a leaf that starts "now" fails there for minutes. */
#define BACKDATE_S (5 * 60)

EVP_PKEY *tbx_cert_new_key(void)
{
	return EVP_EC_gen("P-256");
}

static int random_serial(X509 *x)
{
	unsigned char raw[16];
	BIGNUM *bn;
	int ok;

	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return -1;
	raw[0] &= 0x7f; /* positive, and DER without a leading zero byte */
	raw[0] |= 0x01;
	bn = BN_bin2bn(raw, sizeof(raw), NULL);
	ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
	BN_free(bn);
	return ok ? 0 : -1;
}

static int add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *value)
{
	X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, ctx, nid, value);
	int ok = ext && X509_add_ext(x, ext, -1) == 1;

	X509_EXTENSION_free(ext);
	return ok ? 0 : -1;
}

static int set_validity(X509 *x, time_t now, long seconds)
{
	return X509_time_adj_ex(X509_getm_notBefore(x), 0, -BACKDATE_S, &now) &&
			       X509_time_adj_ex(X509_getm_notAfter(x), 0, seconds, &now)
		       ? 0
		       : -1;
}

static X509 *make_ca_cert(EVP_PKEY *key)
{
	X509 *x = X509_new();
	X509_NAME *name = X509_NAME_new();
	unsigned char tag[4];
	char cn[64];
	X509V3_CTX ctx;

	if (!x || !name || RAND_bytes(tag, sizeof(tag)) != 1)
		goto fail;
	/* A per-installation tag in the name tells two users' CAs apart in a trust store. */
	snprintf(cn, sizeof(cn), "twinbox local twin CA %02x%02x%02x%02x", tag[0], tag[1], tag[2],
		 tag[3]);
	if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"twinbox",
					-1, -1, 0) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1,
					0))
		goto fail;
	if (!X509_set_version(x, X509_VERSION_3) || random_serial(x) < 0 ||
	    !X509_set_subject_name(x, name) || !X509_set_issuer_name(x, name) ||
	    set_validity(x, time(NULL), CA_VALIDITY_S) < 0 || !X509_set_pubkey(x, key))
		goto fail;
	X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
	if (add_ext(x, &ctx, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
	    add_ext(x, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
	    add_ext(x, &ctx, NID_subject_key_identifier, "hash") < 0 ||
	    add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always") < 0)
		goto fail;
	if (!X509_sign(x, key, EVP_sha256()))
		goto fail;
	X509_NAME_free(name);
	return x;
fail:
	X509_NAME_free(name);
	X509_free(x);
	return NULL;
}

X509 *tbx_cert_forge_leaf(const struct tbx_ca *ca, EVP_PKEY *key, const char *host, time_t now,
			  long validity_s)
{
	X509 *x = X509_new();
	X509_NAME *name = X509_NAME_new();
	char san[300];
	X509V3_CTX ctx;

	size_t len = host ? strlen(host) : 0;

	if (!x || !name || len == 0 || len > 253)
		goto fail;
	/* With no CN (hosts over 64 bytes) the subject is empty and the SAN must be critical. */
	if (snprintf(san, sizeof(san), "%s%s:%s", len > 64 ? "critical," : "",
		     tbx_hostname_ip_family(host) ? "IP" : "DNS", host) >= (int)sizeof(san))
		goto fail;
	/* CN is informational once there is a SAN, and limited to 64 bytes. */
	if (strlen(host) <= 64 &&
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)host, -1,
					-1, 0))
		goto fail;
	if (!X509_set_version(x, X509_VERSION_3) || random_serial(x) < 0 ||
	    !X509_set_subject_name(x, name) ||
	    !X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) ||
	    set_validity(x, now, validity_s) < 0 || !X509_set_pubkey(x, key))
		goto fail;
	X509V3_set_ctx(&ctx, ca->cert, x, NULL, NULL, 0);
	if (add_ext(x, &ctx, NID_subject_alt_name, san) < 0 ||
	    add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
	    add_ext(x, &ctx, NID_key_usage, "critical,digitalSignature") < 0 ||
	    add_ext(x, &ctx, NID_ext_key_usage, "serverAuth") < 0 ||
	    add_ext(x, &ctx, NID_subject_key_identifier, "hash") < 0 ||
	    add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always") < 0)
		goto fail;
	if (!X509_sign(x, ca->key, EVP_sha256()))
		goto fail;
	X509_NAME_free(name);
	return x;
fail:
	X509_NAME_free(name);
	X509_free(x);
	return NULL;
}

/* Write through a temporary file and rename, so a crash never leaves half a key. */
static int write_pem(const char *path, mode_t mode, EVP_PKEY *key, X509 *cert)
{
	char tmp[4200];
	FILE *f;
	int fd, ok;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return tbx_error_set(TBX_EIO, "cannot write %s: %s", tmp, strerror(errno));
	}
	ok = key ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL)
		 : PEM_write_X509(f, cert);
	ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
	fclose(f);
	if (!ok || rename(tmp, path) != 0) {
		unlink(tmp);
		return tbx_error_set(TBX_EIO, "cannot write %s", path);
	}
	return 0;
}

static char *cert_to_pem(X509 *cert)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data, *pem = NULL;
	long n;

	if (bio && PEM_write_bio_X509(bio, cert) && (n = BIO_get_mem_data(bio, &data)) > 0 &&
	    (pem = malloc((size_t)n + 1))) {
		memcpy(pem, data, (size_t)n);
		pem[n] = '\0';
	}
	BIO_free(bio);
	return pem;
}

static int load(const char *key_path, const char *cert_path, struct tbx_ca *ca)
{
	struct stat st;
	FILE *f;

	if (stat(key_path, &st) == 0 && (st.st_mode & 077)) {
		/* The key is what lets anyone impersonate every routed host: keep it ours. */
		tbx_log_warn("%s was readable by others; making it 0600", key_path);
		if (chmod(key_path, 0600) != 0)
			return tbx_error_set(TBX_EPERM, "cannot chmod %s: %s", key_path, strerror(errno));
	}
	if (!(f = fopen(key_path, "r")))
		return tbx_error_set(TBX_EIO, "cannot read %s: %s", key_path, strerror(errno));
	ca->key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!(f = fopen(cert_path, "r")))
		return tbx_error_set(TBX_EIO, "cannot read %s: %s", cert_path, strerror(errno));
	ca->cert = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (!ca->key || !ca->cert || X509_check_private_key(ca->cert, ca->key) != 1)
		return tbx_error_set(TBX_EIO, "%s and %s are not a usable CA; remove both to make a new one",
				     key_path, cert_path);
	return 0;
}

int tbx_ca_load_or_create(const char *dir, struct tbx_ca *ca)
{
	char key_path[4200];
	int rc, have_key, have_cert;

	memset(ca, 0, sizeof(*ca));
	if ((rc = tbx_mkdir_p(dir, 0700)) < 0)
		return tbx_error_set(TBX_EIO, "cannot create %s: %s", dir, strerror(-rc));
	snprintf(key_path, sizeof(key_path), "%s/ca.key", dir);
	snprintf(ca->cert_path, sizeof(ca->cert_path), "%s/ca.pem", dir);
	have_key = access(key_path, F_OK) == 0;
	have_cert = access(ca->cert_path, F_OK) == 0;
	if (have_key || have_cert) {
		if ((rc = load(key_path, ca->cert_path, ca)) < 0)
			goto fail;
	} else {
		if (!(ca->key = tbx_cert_new_key()) || !(ca->cert = make_ca_cert(ca->key))) {
			rc = tbx_error_set(TBX_EINTERNAL, "cannot make the twin CA");
			goto fail;
		}
		if ((rc = write_pem(key_path, 0600, ca->key, NULL)) < 0 ||
		    (rc = write_pem(ca->cert_path, 0644, NULL, ca->cert)) < 0)
			goto fail;
		tbx_log_info("made a new twin CA in %s", dir);
	}
	if (!(ca->pem = cert_to_pem(ca->cert))) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto fail;
	}
	return 0;
fail:
	tbx_ca_free(ca);
	return rc;
}

void tbx_ca_free(struct tbx_ca *ca)
{
	X509_free(ca->cert);
	EVP_PKEY_free(ca->key);
	free(ca->pem);
	ca->cert = NULL;
	ca->key = NULL;
	ca->pem = NULL;
}
