/* SPDX-License-Identifier: MIT */
/*
 * The engine's one connection pool: a libcurl share of connections, DNS and
 * TLS sessions that every request (API and envd, on every worker thread) uses,
 * so keep-alive connections are reused across calls instead of a new TLS
 * handshake per request.
 */
#include "e2b.h"

static void e2b_pool_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *userp)
{
	struct tbx_e2b *e = userp;

	(void)handle;
	(void)access;
	if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
		pthread_mutex_lock(&e->share_locks[data]);
}

static void e2b_pool_unlock(CURL *handle, curl_lock_data data, void *userp)
{
	struct tbx_e2b *e = userp;

	(void)handle;
	if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
		pthread_mutex_unlock(&e->share_locks[data]);
}

int e2b_pool_init(struct tbx_e2b *e)
{
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&e->share_locks[i], NULL);
	e->share = curl_share_init();
	if (!e->share)
		return -1;
	if (curl_share_setopt(e->share, CURLSHOPT_LOCKFUNC, e2b_pool_lock) != CURLSHE_OK ||
	    curl_share_setopt(e->share, CURLSHOPT_UNLOCKFUNC, e2b_pool_unlock) != CURLSHE_OK ||
	    curl_share_setopt(e->share, CURLSHOPT_USERDATA, e) != CURLSHE_OK ||
	    curl_share_setopt(e->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) != CURLSHE_OK ||
	    curl_share_setopt(e->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK ||
	    curl_share_setopt(e->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK) {
		e2b_pool_release(e);
		return -1;
	}
	return 0;
}

void e2b_pool_release(struct tbx_e2b *e)
{
	if (e->share) {
		curl_share_cleanup(e->share);
		e->share = NULL;
	}
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&e->share_locks[i]);
}
