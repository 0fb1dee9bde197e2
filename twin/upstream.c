/* SPDX-License-Identifier: MIT */
/* Forwarding to upstream fakes with libcurl on threads (see upstream.h). */
#include "upstream.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "routes.h"
#include "http-parse.h"
#include "httpd.h"
#include "log.h"

#define TBX_LOG_CATEGORY "twin.upstream"

#define MAX_IN_FLIGHT 32
#define MAX_RESPONSE (16 * 1024 * 1024)

struct tbx_upstream_job {
	struct tbx_upstream *up;
	/* Set by the loop thread only. */
	tbx_upstream_done done;
	void *arg;
	int cancelled;
	/* Owned by the worker until it posts the job back. */
	char *url;
	char *method;
	char *body;
	size_t body_len;
	struct curl_slist *headers;
	struct curl_slist *resolve;
	struct tbx_reply rep;
	char error[CURL_ERROR_SIZE];
	int failed;
	struct tbx_upstream_job *next;
};

struct tbx_upstream {
	struct event_base *base;
	const struct tbx_routes *cfg;
	int timeout_s;
	struct event *notify;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	struct tbx_upstream_job *finished; /* posted back by workers */
	int in_flight;                     /* threads not yet finished */
	int aborting;
};

static const char *const hop_by_hop[] = {
	"Connection", "Keep-Alive", "Proxy-Authorization", "Proxy-Authenticate", "Proxy-Connection",
	"TE", "Trailer", "Transfer-Encoding", "Upgrade", "Host", "Content-Length", "Expect",
};

static int is_hop_by_hop(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(hop_by_hop) / sizeof(hop_by_hop[0]); i++)
		if (strlen(hop_by_hop[i]) == len && strncasecmp(name, hop_by_hop[i], len) == 0)
			return 1;
	return 0;
}

static void job_free(struct tbx_upstream_job *j)
{
	free(j->url);
	free(j->method);
	free(j->body);
	curl_slist_free_all(j->headers);
	curl_slist_free_all(j->resolve);
	tbx_reply_free(&j->rep);
	free(j);
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
	struct tbx_upstream_job *j = arg;
	size_t len = size * n, name_len;
	const char *colon;

	if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		/* A new status line (after a 100 Continue, say): start the headers over. */
		free(j->rep.headers);
		j->rep.headers = NULL;
		j->rep.headers_len = 0;
		j->rep.content_type[0] = '\0';
		return len;
	}
	if (!(colon = memchr(data, ':', len)))
		return len;
	name_len = (size_t)(colon - data);
	while (len > 0 && (data[len - 1] == '\r' || data[len - 1] == '\n'))
		len--;
	colon++;
	while (colon < data + len && (*colon == ' ' || *colon == '\t'))
		colon++;
	if (name_len == 12 && strncasecmp(data, "Content-Type", 12) == 0)
		snprintf(j->rep.content_type, sizeof(j->rep.content_type), "%.*s",
			 (int)(data + len - colon), colon);
	else if (!is_hop_by_hop(data, name_len) && name_len < 256) {
		char name[256];
		memcpy(name, data, name_len);
		name[name_len] = '\0';
		tbx_reply_header(&j->rep, name, "%.*s", (int)(data + len - colon), colon);
	}
	return size * n;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct tbx_upstream_job *j = arg;
	size_t len = size * n;
	char *grown;

	if (j->rep.body_len + len > MAX_RESPONSE)
		return 0; /* makes curl fail the transfer */
	if (!(grown = realloc(j->rep.body, j->rep.body_len + len + 1)))
		return 0;
	j->rep.body = grown;
	memcpy(j->rep.body + j->rep.body_len, data, len);
	j->rep.body_len += len;
	j->rep.body[j->rep.body_len] = '\0';
	return len;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct tbx_upstream_job *j = arg;
	int abort_now;

	pthread_mutex_lock(&j->up->lock);
	abort_now = j->up->aborting;
	pthread_mutex_unlock(&j->up->lock);
	return abort_now;
}

static void *run(void *arg)
{
	struct tbx_upstream_job *j = arg;
	struct tbx_upstream *up = j->up;
	CURL *curl = curl_easy_init();
	long status = 0;
	CURLcode rc = CURLE_FAILED_INIT;

	if (curl) {
		curl_easy_setopt(curl, CURLOPT_URL, j->url);
		curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, j->method);
		curl_easy_setopt(curl, CURLOPT_HTTPHEADER, j->headers);
		curl_easy_setopt(curl, CURLOPT_RESOLVE, j->resolve);
		if (strcmp(j->method, "HEAD") == 0)
			curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
		else if (j->body_len || strcmp(j->method, "GET") != 0) {
			curl_easy_setopt(curl, CURLOPT_POSTFIELDS, j->body ? j->body : "");
			curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)j->body_len);
		}
		curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(curl, CURLOPT_HEADERDATA, j);
		curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(curl, CURLOPT_WRITEDATA, j);
		curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(curl, CURLOPT_XFERINFODATA, j);
		curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, j->error);
		curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)up->timeout_s);
		curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
		/* The upstream is the user's fake: never let an environment proxy capture it. */
		curl_easy_setopt(curl, CURLOPT_PROXY, "");
		curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
		rc = curl_easy_perform(curl);
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
		curl_easy_cleanup(curl);
	}
	if (rc != CURLE_OK || status < 100) {
		j->failed = 1;
		if (!j->error[0])
			snprintf(j->error, sizeof(j->error), "%s", curl_easy_strerror(rc));
	} else {
		j->rep.status = (int)status;
	}
	pthread_mutex_lock(&up->lock);
	j->next = up->finished;
	up->finished = j;
	event_active(up->notify, EV_READ, 0);
	/* tbx_upstream_free() may be waiting for this instead of the loop. */
	pthread_cond_broadcast(&up->idle);
	pthread_mutex_unlock(&up->lock);
	return NULL;
}

/* On the loop: hand finished jobs to their requesters. */
static void on_notify(evutil_socket_t fd, short what, void *arg)
{
	struct tbx_upstream *up = arg;
	struct tbx_upstream_job *list;

	pthread_mutex_lock(&up->lock);
	list = up->finished;
	up->finished = NULL;
	pthread_mutex_unlock(&up->lock);
	while (list) {
		struct tbx_upstream_job *j = list;
		list = j->next;
		pthread_mutex_lock(&up->lock);
		up->in_flight--;
		pthread_cond_broadcast(&up->idle);
		pthread_mutex_unlock(&up->lock);
		if (j->failed) {
			char msg[CURL_ERROR_SIZE + 300];
			tbx_log_warn("%s %s failed: %s", j->method, j->url, j->error);
			tbx_reply_free(&j->rep);
			tbx_reply_init(&j->rep);
			snprintf(msg, sizeof(msg), "the upstream for this host did not answer: %s", j->error);
			tbx_reply_error(&j->rep, 502, "upstream_error", msg);
		}
		if (!j->cancelled)
			j->done(j->arg, &j->rep);
		job_free(j);
	}
}

int tbx_upstream_new(struct event_base *base, const struct tbx_routes *cfg, int timeout_s,
		     struct tbx_upstream **out)
{
	struct tbx_upstream *up = calloc(1, sizeof(*up));

	if (!up)
		return -1;
	up->base = base;
	up->cfg = cfg;
	up->timeout_s = timeout_s;
	pthread_mutex_init(&up->lock, NULL);
	pthread_cond_init(&up->idle, NULL);
	if (!(up->notify = event_new(base, -1, 0, on_notify, up))) {
		free(up);
		return -1;
	}
	*out = up;
	return 0;
}

void tbx_upstream_free(struct tbx_upstream *up)
{
	if (!up)
		return;
	pthread_mutex_lock(&up->lock);
	up->aborting = 1;
	while (up->in_flight > 0) {
		/* Workers post back under the lock; collect them here as the loop would. */
		struct tbx_upstream_job *list = up->finished;
		up->finished = NULL;
		while (list) {
			struct tbx_upstream_job *j = list;
			list = j->next;
			up->in_flight--;
			job_free(j);
		}
		if (up->in_flight > 0)
			pthread_cond_wait(&up->idle, &up->lock);
	}
	pthread_mutex_unlock(&up->lock);
	event_free(up->notify);
	pthread_mutex_destroy(&up->lock);
	pthread_cond_destroy(&up->idle);
	free(up);
}

/* CURLOPT_RESOLVE entry for the routes file's resolver override, if it names the URL's host. */
static struct curl_slist *resolve_override(const struct tbx_routes *cfg, const char *url)
{
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL, entry[600];
	struct curl_slist *list = NULL;
	const char *ip;

	if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
	    (ip = tbx_routes_resolve(cfg, host))) {
		snprintf(entry, sizeof(entry), "%s:%s:%s", host, port, ip);
		list = curl_slist_append(NULL, entry);
	}
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return list;
}

struct tbx_upstream_job *tbx_upstream_forward(struct tbx_upstream *up, const char *base_url,
					      const struct tbx_http_msg *req, const char *host,
					      tbx_upstream_done done, void *arg)
{
	struct tbx_upstream_job *j;
	pthread_attr_t attr;
	pthread_t tid;
	size_t url_len;
	char line[9000];
	int rc;

	pthread_mutex_lock(&up->lock);
	rc = up->in_flight >= MAX_IN_FLIGHT;
	pthread_mutex_unlock(&up->lock);
	if (rc || !(j = calloc(1, sizeof(*j))))
		return NULL;
	j->up = up;
	j->done = done;
	j->arg = arg;
	tbx_reply_init(&j->rep);
	url_len = strlen(base_url) + strlen(req->target) + 1;
	j->url = malloc(url_len);
	j->method = strdup(req->method);
	if (req->body_len && (j->body = malloc(req->body_len))) {
		memcpy(j->body, req->body, req->body_len);
		j->body_len = req->body_len;
	}
	if (!j->url || !j->method || (req->body_len && !j->body)) {
		job_free(j);
		return NULL;
	}
	snprintf(j->url, url_len, "%s%s", base_url, req->target);
	for (size_t i = 0; i < req->n_headers; i++) {
		const char *name = req->headers[i].name;
		if (is_hop_by_hop(name, strlen(name)))
			continue;
		snprintf(line, sizeof(line), "%s: %s", name, req->headers[i].value);
		j->headers = curl_slist_append(j->headers, line);
	}
	snprintf(line, sizeof(line), "X-Forwarded-Host: %s", host);
	j->headers = curl_slist_append(j->headers, line);
	j->headers = curl_slist_append(j->headers, "X-Forwarded-Proto: https");
	j->headers = curl_slist_append(j->headers, "Expect:"); /* no 100-continue round trip */
	j->resolve = resolve_override(up->cfg, base_url);

	pthread_mutex_lock(&up->lock);
	up->in_flight++;
	pthread_mutex_unlock(&up->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&tid, &attr, run, j);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		pthread_mutex_lock(&up->lock);
		up->in_flight--;
		pthread_mutex_unlock(&up->lock);
		job_free(j);
		return NULL;
	}
	return j;
}

void tbx_upstream_cancel(struct tbx_upstream_job *job)
{
	job->cancelled = 1;
}
