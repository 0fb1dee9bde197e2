/* SPDX-License-Identifier: MIT */
/*
 * Retry policy shared by the envd client and the E2B control-plane client:
 * bounded in tries and in time, exponential backoff with jitter, and a
 * server's Retry-After honoured (never retried sooner, and not at all when it
 * points past the time budget). Header-only so that every user of the envd
 * library gets it without a new object in the local engine's build list.
 */
#ifndef TBX_ENVD_RETRY_H
#define TBX_ENVD_RETRY_H

#include <curl/curl.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <twinbox/plugin.h>

struct tbx_envd_retry {
	unsigned attempts;  /* tries in all; 0 or 1 = never retry */
	unsigned base_ms;   /* backoff before the second try */
	unsigned max_ms;    /* cap of one backoff */
	unsigned budget_ms; /* all backoffs of one call together stay under this */
};

/* One call's progress through its tries. */
struct tbx_envd_retry_state {
	const struct tbx_envd_retry *policy;
	unsigned tries;   /* tries made so far */
	int64_t start_ms; /* monotonic */
	int64_t slept_ms;
};

static inline int64_t tbx_envd_retry_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void tbx_envd_retry_begin(struct tbx_envd_retry_state *st,
					const struct tbx_envd_retry *policy)
{
	st->policy = policy;
	st->tries = 0;
	st->start_ms = tbx_envd_retry_now_ms();
	st->slept_ms = 0;
}

/* Statuses a server uses for "not now": rate limited, overloaded. */
static inline int tbx_envd_retry_status(long status)
{
	return status == 429 || status == 503;
}

/* Transport failures where the request may simply be tried again. */
static inline int tbx_envd_retry_curl(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
		return 1;
	default:
		return 0;
	}
}

/* A connection that was never made: the request certainly did not arrive. */
static inline int tbx_envd_retry_unsent(CURLcode rc)
{
	return rc == CURLE_COULDNT_CONNECT;
}

/* The server's Retry-After in ms (delta seconds or an HTTP date), or -1. */
static inline long tbx_envd_retry_after_ms(CURL *curl)
{
	curl_off_t secs = -1;

	if (curl_easy_getinfo(curl, CURLINFO_RETRY_AFTER, &secs) != CURLE_OK || secs < 0)
		return -1;
	return secs > 86400 ? 86400L * 1000 : (long)secs * 1000;
}

/*
 * After a failed try: sleep the backoff and return 1 when another try should
 * follow, 0 when tries or the time budget are used up, -1 when the call was
 * cancelled while waiting. \p retry_after_ms is the server's wish, or -1.
 */
static inline int tbx_envd_retry_again(struct tbx_envd_retry_state *st,
				       const struct tbx_host_api *host, struct tbx_call *call,
				       long retry_after_ms)
{
	const struct tbx_envd_retry *p = st->policy;
	int64_t delay, end;
	unsigned shift;

	st->tries++;
	if (!p || st->tries >= p->attempts)
		return 0;
	shift = st->tries - 1 < 16 ? st->tries - 1 : 16;
	delay = (int64_t)p->base_ms << shift;
	if (delay > p->max_ms)
		delay = p->max_ms;
	/* Equal jitter: half fixed, half random, so many clients spread out. */
	delay = delay / 2 + (delay > 1 ? (int64_t)(random() % (delay / 2 + 1)) : 0);
	if (retry_after_ms >= 0 && retry_after_ms > delay)
		delay = retry_after_ms;
	if (tbx_envd_retry_now_ms() - st->start_ms + delay > (int64_t)p->budget_ms)
		return 0;
	end = tbx_envd_retry_now_ms() + delay;
	for (;;) {
		int64_t left = end - tbx_envd_retry_now_ms();
		struct timespec ts;

		if (call && host && host->is_cancelled(call))
			return -1;
		if (left <= 0)
			break;
		if (left > 50)
			left = 50;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left * 1000000L;
		nanosleep(&ts, NULL);
	}
	st->slept_ms += delay;
	return 1;
}

#endif
