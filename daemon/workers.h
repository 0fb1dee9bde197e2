/* SPDX-License-Identifier: MIT */
/*
 * The worker pool: blocking work (backend ops, SQLite, libgit2) runs here,
 * never on the event loop. Results travel back to the loop thread through
 * tbx_workers_post(). Priority workers take only cheap jobs, so `status` and
 * `session list` answer while every normal worker is busy creating sandboxes.
 */
#ifndef TBX_WORKERS_H
#define TBX_WORKERS_H

#include <stdatomic.h>

struct event_base;
struct tbx_workers;
struct tbx_job;

typedef void (*tbx_job_fn)(struct tbx_job *job);

struct tbx_job {
	tbx_job_fn work;  /* runs on a worker thread */
	tbx_job_fn done;  /* then runs on the loop thread */
	void *data;
	int priority;     /* nonzero: cheap, may run on a priority worker */
	atomic_int cancel;
	struct tbx_job *next; /* queue link, owned by the pool */
};

/* The base must have been created after evthread_use_pthreads(). */
struct tbx_workers *tbx_workers_new(struct event_base *base, int n_normal, int n_priority);
void tbx_workers_submit(struct tbx_workers *w, struct tbx_job *job);
/* Run fn(arg) on the loop thread soon. Safe from any thread. */
int tbx_workers_post(struct tbx_workers *w, void (*fn)(void *arg), void *arg);
/* Jobs queued or running. */
int tbx_workers_busy(struct tbx_workers *w);
/* Stop taking jobs, let running ones finish, join the threads, free. Loop must not be running. */
void tbx_workers_free(struct tbx_workers *w);

#endif
