/* SPDX-License-Identifier: MIT */
/* Local engine: sandbox ids, on-disk paths, and finding bwrap and the agent. */
#define _GNU_SOURCE
#include "local.h"

#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

int local_id_valid(const char *id)
{
	size_t n = 0;

	if (!id)
		return 0;
	for (; id[n]; n++)
		if (!((id[n] >= 'a' && id[n] <= 'z') || (id[n] >= '0' && id[n] <= '9')))
			return 0;
	return n > 0 && n <= LOCAL_ID_MAX;
}

int local_id_new(char out[LOCAL_ID_LEN + 1])
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[LOCAL_ID_LEN];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)n;
	}
	/* 252 = 7 * 36: reject above it so every character is equally likely. */
	for (size_t i = 0; i < LOCAL_ID_LEN; i++) {
		while (r[i] >= 252)
			if (getrandom(&r[i], 1, 0) != 1 && errno != EINTR)
				return -1;
		out[i] = alphabet[r[i] % 36];
	}
	out[LOCAL_ID_LEN] = '\0';
	return 0;
}

int local_sbx_init(struct tbx_local *l, struct tbx_call *call, const char *id,
		   struct local_sbx *s)
{
	int n;

	if (!local_id_valid(id))
		return l->host->error_set(call, TBX_EINVAL,
					  "'%s' is not a local sandbox id (1-64 of [a-z0-9])",
					  id ? id : "(null)");
	snprintf(s->id, sizeof(s->id), "%s", id);
	n = snprintf(s->dir, sizeof(s->dir), "%s/%s", l->sandboxes, id);
	if (n < 0 || (size_t)n >= sizeof(s->dir))
		return l->host->error_set(call, TBX_EINVAL, "sandbox directory path too long");
	n = snprintf(s->sock, sizeof(s->sock), "%s/run/agent.sock", s->dir);
	if (n < 0 || (size_t)n >= sizeof(s->sock))
		return l->host->error_set(call, TBX_EINVAL,
					  "the agent socket path %s/run/agent.sock is longer than "
					  "a Unix socket allows (%zu bytes): set the local "
					  "backend's data_root to a shorter directory",
					  s->dir, sizeof(s->sock) - 1);
	return 0;
}

void local_sbx_path(const struct local_sbx *s, const char *name, char *out)
{
	/* local_sbx_init keeps dir far below PATH_MAX (the socket path must fit). */
	if (snprintf(out, PATH_MAX, "%s/%s", s->dir, name) >= PATH_MAX)
		out[0] = '\0';
}

int local_sbx_exists(const struct local_sbx *s)
{
	struct stat st;

	return stat(s->dir, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *local_exec_path(const struct tbx_host_api *host, const char *path)
{
	return path && access(path, X_OK) == 0 ? host->strdup(path) : NULL;
}

char *local_find_agent(struct tbx_call *call, const struct tbx_host_api *host)
{
	const char *cfg = host->config_get(call, "agent_path");
	char buf[PATH_MAX];
	Dl_info info;

	if (cfg)
		return local_exec_path(host, cfg);
	/* The build tree keeps the agent beside local.so; use it uninstalled. */
	if (dladdr((void *)&local_find_agent, &info) && info.dli_fname) {
		const char *slash = strrchr(info.dli_fname, '/');

		if (slash) {
			snprintf(buf, sizeof(buf), "%.*s/twinbox-sandbox-agent",
				 (int)(slash - info.dli_fname), info.dli_fname);
			if (access(buf, X_OK) == 0)
				return host->strdup(buf);
		}
	}
	return local_exec_path(host, TBX_LIBEXEC_DIR "/twinbox-sandbox-agent");
}

char *local_find_bwrap(struct tbx_call *call, const struct tbx_host_api *host)
{
	const char *cfg = host->config_get(call, "bwrap");
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (cfg)
		return local_exec_path(host, cfg);
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);

		if (n) {
			snprintf(buf, sizeof(buf), "%.*s/bwrap", (int)n, path);
			if (access(buf, X_OK) == 0)
				return host->strdup(buf);
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return NULL;
}

int local_mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

static int local_rm_chmod(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	/* Sandboxed code may leave read-only directories; open them up first. */
	if (flag == FTW_D && (st->st_mode & 0700) != 0700)
		chmod(path, (st->st_mode & 07777) | 0700);
	return 0;
}

static int local_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (remove(path) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

int local_rmtree(const char *path)
{
	nftw(path, local_rm_chmod, 32, FTW_PHYS | FTW_MOUNT);
	if (nftw(path, local_rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) != 0)
		return errno == ENOENT ? 0 : -1;
	return 0;
}
