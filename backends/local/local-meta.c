/* SPDX-License-Identifier: MIT */
/* Local engine: meta.json (labels, state, timeout) and the per-sandbox lock. */
#define _GNU_SOURCE
#include "local.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

struct json_object *local_meta_load(const struct local_sbx *s)
{
	char path[PATH_MAX];
	struct json_object *meta;

	local_sbx_path(s, "meta.json", path);
	meta = json_object_from_file(path);
	if (meta && !json_object_is_type(meta, json_type_object)) {
		json_object_put(meta);
		errno = EINVAL;
		return NULL;
	}
	return meta;
}

int local_meta_save(const struct local_sbx *s, struct json_object *meta)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	const char *text = json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PRETTY);
	size_t len = strlen(text), off = 0;
	int fd, err;

	/* Write beside it and rename, so a crash leaves the old or the new file. */
	local_sbx_path(s, "meta.json", path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		off += (size_t)n;
	}
	if (write(fd, "\n", 1) != 1 || fsync(fd) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	if (rename(tmp, path) < 0) {
		fd = -1;
		goto fail;
	}
	return 0;
fail:
	err = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = err;
	return -1;
}

int local_meta_paused(struct json_object *meta)
{
	struct json_object *v;

	return json_object_object_get_ex(meta, "state", &v) &&
	       strcmp(json_object_get_string(v), "paused") == 0;
}

void local_meta_set_state(struct json_object *meta, int paused)
{
	json_object_object_add(meta, "state", json_object_new_string(paused ? "paused" : "running"));
}

void local_meta_set_timeout(struct json_object *meta, uint32_t timeout_s)
{
	/* Advisory: the local engine has no billing and reaps nothing on its own. */
	json_object_object_add(meta, "timeout_s", json_object_new_int64(timeout_s));
	json_object_object_add(meta, "end_at", json_object_new_int64((int64_t)time(NULL) + timeout_s));
}

int local_sbx_lock(const struct local_sbx *s)
{
	char path[PATH_MAX];
	int fd;

	/* flock holds across processes too, e.g. a second daemon or the CLI. */
	local_sbx_path(s, "lock", path);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			int err = errno;

			close(fd);
			errno = err;
			return -1;
		}
	}
	return fd;
}

void local_sbx_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* releases the flock */
}
