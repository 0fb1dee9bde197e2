/* SPDX-License-Identifier: MIT */
/*
 * What every part of the host-side git code shares: library start-up, the
 * progress callback and the mapping of libgit2 failures onto tbx_status.
 * Everything in git/ is blocking and runs on worker threads; each call opens
 * its own git_repository, so calls on different threads never share one.
 */
#ifndef TBX_GIT_COMMON_H
#define TBX_GIT_COMMON_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <twinbox/plugin.h>

/*
 * Start libgit2 for this process (idempotent, thread-safe). Ref and pack
 * writes are fsynced from then on: a sync says "done" only once the ref is
 * on disk, and a crash right after must not lose the commits it reported.
 */
int tbx_git_init(void);

/*
 * Progress of a long step. phase is a short word ("bundle", "send",
 * "receive", "index", "refs"...); total is 0 when unknown. Called on the
 * worker thread doing the work, often: receivers throttle.
 */
struct tbx_git_progress {
	void (*fn)(void *payload, const char *phase, uint64_t done, uint64_t total);
	void *payload;
};

void tbx_git_progress_report(const struct tbx_git_progress *p, const char *phase, uint64_t done,
			     uint64_t total);

/* True when *cancel is set (NULL never is). */
int tbx_git_cancelled(const atomic_int *cancel);

/*
 * Turn libgit2's last error (after a call returned `code` < 0) into the
 * core's error: "what: libgit2's message". Returns the tbx_status.
 */
int tbx_git_fail(int code, const char *what_fmt, ...) TBX_PRINTF(2, 3);

/* snprintf into a path buffer; TBX_EINVAL ("path too long") instead of cutting it. */
int tbx_git_pathf(char *buf, size_t size, const char *fmt, ...) TBX_PRINTF(3, 4);

#endif
