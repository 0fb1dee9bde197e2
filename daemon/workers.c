/* SPDX-License-Identifier: MIT */
/* A bounded pthread pool with a priority lane, reporting back to a libevent loop. */
#include "workers.h"

#include <event2/event.h>
#include <pthread.h>
#include <stdlib.h>

#include "log.h"

#define TBX_LOG_CATEGORY "workers"

struct posted {
	void (*fn)(void *arg);
	void *arg;
	struct posted *next;
};

struct tbx_workers {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct tbx_job *normal_head, *normal_tail, *prio_head, *prio_tail;
	int busy;
	int stopping;
	pthread_t *threads;
	int n_threads;

	struct event *wake;
	struct posted *posted_head, *posted_tail;
};

struct worker_arg {
	struct tbx_workers *w;
	int priority_only;
};

static struct tbx_job *queue_pop(struct tbx_job **head, struct tbx_job **tail)
{
	struct tbx_job *job = *head;

	if (job) {
		*head = job->next;
		if (!*head)
			*tail = NULL;
		job->next = NULL;
	}
	return job;
}

static void job_finished(void *arg)
{
	struct tbx_job *job = arg;

	job->done(job);
}

static void *worker_main(void *arg)
{
	struct worker_arg *wa = arg;
	struct tbx_workers *w = wa->w;
	int priority_only = wa->priority_only;

	free(wa);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct tbx_job *job = queue_pop(&w->prio_head, &w->prio_tail);
		if (!job && !priority_only)
			job = queue_pop(&w->normal_head, &w->normal_tail);
		if (!job) {
			if (w->stopping)
				break;
			pthread_cond_wait(&w->cond, &w->lock);
			continue;
		}
		pthread_mutex_unlock(&w->lock);
		job->work(job);
		tbx_workers_post(w, job_finished, job);
		pthread_mutex_lock(&w->lock);
		w->busy--;
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tbx_workers *w = arg;
	struct posted *list;

	pthread_mutex_lock(&w->lock);
	list = w->posted_head;
	w->posted_head = w->posted_tail = NULL;
	pthread_mutex_unlock(&w->lock);
	while (list) {
		struct posted *next = list->next;
		list->fn(list->arg);
		free(list);
		list = next;
	}
}

struct tbx_workers *tbx_workers_new(struct event_base *base, int n_normal, int n_priority)
{
	struct tbx_workers *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->wake = event_new(base, -1, 0, wake_cb, w);
	w->threads = calloc((size_t)(n_normal + n_priority), sizeof(pthread_t));
	if (!w->wake || !w->threads)
		goto fail;
	for (int i = 0; i < n_normal + n_priority; i++) {
		struct worker_arg *wa = malloc(sizeof(*wa));
		if (!wa)
			goto fail;
		wa->w = w;
		wa->priority_only = i >= n_normal;
		if (pthread_create(&w->threads[i], NULL, worker_main, wa) != 0) {
			free(wa);
			goto fail;
		}
		w->n_threads++;
	}
	return w;
fail:
	tbx_log_error("cannot start the worker pool");
	tbx_workers_free(w);
	return NULL;
}

void tbx_workers_submit(struct tbx_workers *w, struct tbx_job *job)
{
	pthread_mutex_lock(&w->lock);
	job->next = NULL;
	if (job->priority) {
		if (w->prio_tail)
			w->prio_tail->next = job;
		else
			w->prio_head = job;
		w->prio_tail = job;
	} else {
		if (w->normal_tail)
			w->normal_tail->next = job;
		else
			w->normal_head = job;
		w->normal_tail = job;
	}
	w->busy++;
	/* Broadcast: a priority-only worker may be the one woken for a normal job. */
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

int tbx_workers_post(struct tbx_workers *w, void (*fn)(void *arg), void *arg)
{
	struct posted *p = malloc(sizeof(*p));

	if (!p)
		return -1;
	p->fn = fn;
	p->arg = arg;
	p->next = NULL;
	pthread_mutex_lock(&w->lock);
	if (w->posted_tail)
		w->posted_tail->next = p;
	else
		w->posted_head = p;
	w->posted_tail = p;
	pthread_mutex_unlock(&w->lock);
	event_active(w->wake, EV_READ, 0);
	return 0;
}

int tbx_workers_busy(struct tbx_workers *w)
{
	int busy;

	pthread_mutex_lock(&w->lock);
	busy = w->busy;
	pthread_mutex_unlock(&w->lock);
	return busy;
}

void tbx_workers_free(struct tbx_workers *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	for (int i = 0; i < w->n_threads; i++)
		pthread_join(w->threads[i], NULL);
	/* Completions posted after the loop stopped: run them so nothing leaks. */
	wake_cb(-1, 0, w);
	if (w->wake)
		event_free(w->wake);
	free(w->threads);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
