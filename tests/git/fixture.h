/* SPDX-License-Identifier: MIT */
/*
 * Scratch repositories for the git tests, made and inspected with the git
 * CLI (the reference the bundles are checked against), plus TAP output.
 */
#ifndef TBX_TEST_GIT_FIXTURE_H
#define TBX_TEST_GIT_FIXTURE_H

#include <git2.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* A fresh temporary root with HOME and git's identity pointing into it. */
void fx_init(const char *name);
/* Remove the root (unless TBX_KEEP is set). */
void fx_done(void);
const char *fx_root(void);
/* "<root>/<name>", the same pointer for the same name until fx_done(). */
const char *fx_path(const char *name);

/* Run a shell command; returns its exit status (-1 on failure to run). */
int fx_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Its stdout (malloc'd, trailing newline cut), or NULL when it failed. */
char *fx_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Run and require exit 0; aborts the test program otherwise. */
void fx_must(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* git init -b main at path (made if needed). */
void fx_repo(const char *path);
/* Write file (relative to repo) with content, add it and commit with msg. */
void fx_commit(const char *repo, const char *file, const char *content, const char *msg);
/* `git rev-parse rev` in repo into oid. */
void fx_oid(const char *repo, const char *rev, git_oid *oid);
git_repository *fx_open(const char *path);

/* Refs (every ref and HEAD) as one string; object count (loose + packed). */
char *fx_refs(const char *repo);
long fx_objects(const char *repo);
/* Names under objects/ and objects/pack/ (spots leftovers of a refused read). */
char *fx_object_files(const char *repo);
long fx_file_size(const char *path);

/* TAP */
void tap_ok(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tap_failures(void);
void tap_plan_end(void);

#define CHECK(cond, ...)                                                           \
	do {                                                                       \
		int ok_ = !!(cond);                                                \
		tap_ok(ok_, __VA_ARGS__);                                          \
		if (!ok_)                                                          \
			fprintf(stdout, "#   %s:%d: %s\n#   last error: %s\n",     \
				__FILE__, __LINE__, #cond, tbx_error_message());   \
	} while (0)

#endif
