/* SPDX-License-Identifier: MIT */
/* libgit2 start-up, progress and error mapping shared by the git sync code. */
#include "git-common.h"

#include <git2.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_status;

static void git_init_once(void)
{
	if (git_libgit2_init() < 0) {
		init_status = tbx_git_fail(-1, "cannot start libgit2");
		return;
	}
	/* "Synced" must mean "on disk": packs, indexes and refs are fsynced. */
	git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, 1);
}

int tbx_git_init(void)
{
	pthread_once(&init_once, git_init_once);
	return init_status;
}

void tbx_git_progress_report(const struct tbx_git_progress *p, const char *phase, uint64_t done,
			     uint64_t total)
{
	if (p && p->fn)
		p->fn(p->payload, phase, done, total);
}

int tbx_git_cancelled(const atomic_int *cancel)
{
	return cancel && atomic_load(cancel);
}

int tbx_git_fail(int code, const char *what_fmt, ...)
{
	const git_error *e = git_error_last();
	char what[512];
	int status;
	va_list ap;

	va_start(ap, what_fmt);
	vsnprintf(what, sizeof(what), what_fmt, ap);
	va_end(ap);
	switch (code) {
	case GIT_ENOTFOUND: status = TBX_ENOENT; break;
	case GIT_EEXISTS: status = TBX_EEXIST; break;
	case GIT_ELOCKED:
	case GIT_EMODIFIED: status = TBX_EUNAVAIL; break;
	case GIT_EUSER: status = TBX_ECANCELED; break;
	case GIT_EINVALIDSPEC:
	case GIT_EINVALID: status = TBX_EINVAL; break;
	case GIT_EOWNER: status = TBX_EPERM; break;
	default: status = TBX_EIO; break;
	}
	return tbx_error_set(status, "%s: %s", what,
			     e && e->message ? e->message : "libgit2 gave no reason");
}

int tbx_git_pathf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		return tbx_error_set(TBX_EINVAL, "path too long: %.200s...", buf);
	return 0;
}
