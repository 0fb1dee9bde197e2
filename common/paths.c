/* SPDX-License-Identifier: MIT */
/* twinbox's directories and files, from the XDG environment (see paths.h). */
#include "paths.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "error.h"

int tbx_mkdir_p(const char *path, unsigned mode)
{
	char buf[4096];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* out = a + b; nonzero when it does not fit. */
static int join(char *out, size_t size, const char *a, const char *b)
{
	int n = snprintf(out, size, "%s%s", a, b);

	return n < 0 || (size_t)n >= size;
}

/* $VAR if set and absolute, else $HOME/fallback. */
static int xdg_dir(char *out, size_t size, const char *var, const char *fallback)
{
	const char *v = getenv(var), *home = getenv("HOME");
	int n;

	if (v && v[0] == '/')
		n = snprintf(out, size, "%s/twinbox", v);
	else if (home && home[0] == '/')
		n = snprintf(out, size, "%s/%s/twinbox", home, fallback);
	else
		return tbx_error_set(TBX_EINVAL, "neither $%s nor $HOME is set to an absolute path; set HOME", var);
	return (n < 0 || (size_t)n >= size) ? tbx_error_set(TBX_EINVAL, "$%s is too long", var) : 0;
}

int tbx_paths_init(struct tbx_paths *p)
{
	const char *runtime = getenv("XDG_RUNTIME_DIR"), *sock = getenv("TWINBOX_SOCKET");
	int rc;

	memset(p, 0, sizeof(*p));
	if ((rc = xdg_dir(p->state_dir, sizeof(p->state_dir), "XDG_STATE_HOME", ".local/state")) ||
	    (rc = xdg_dir(p->data_dir, sizeof(p->data_dir), "XDG_DATA_HOME", ".local/share")) ||
	    (rc = xdg_dir(p->config_dir, sizeof(p->config_dir), "XDG_CONFIG_HOME", ".config")))
		return rc;
	if (runtime && runtime[0] == '/')
		snprintf(p->runtime_dir, sizeof(p->runtime_dir), "%s/twinbox", runtime);
	else
		/* No runtime dir (a root shell, cron): a per-uid directory we verify is ours. */
		snprintf(p->runtime_dir, sizeof(p->runtime_dir), "/tmp/twinbox-%u", (unsigned)getuid());
	if (sock && sock[0]) {
		if (strlen(sock) >= 108)
			return tbx_error_set(TBX_EINVAL, "TWINBOX_SOCKET is longer than a Unix socket path may be (107 bytes)");
		snprintf(p->socket_path, sizeof(p->socket_path), "%s", sock);
	} else {
		if (join(p->socket_path, sizeof(p->socket_path), p->runtime_dir, "/twinbox.sock") ||
		    strlen(p->socket_path) >= 108)
			return tbx_error_set(TBX_EINVAL, "socket path %s is too long; set TWINBOX_SOCKET to a shorter path", p->socket_path);
	}
	if (join(p->lock_path, sizeof(p->lock_path), p->socket_path, ".lock") ||
	    join(p->db_path, sizeof(p->db_path), p->state_dir, "/twinbox.db") ||
	    join(p->log_path, sizeof(p->log_path), p->state_dir, "/twinboxd.log") ||
	    join(p->config_path, sizeof(p->config_path), p->config_dir, "/config.json"))
		return tbx_error_set(TBX_EINVAL, "a twinbox path is too long; shorten $XDG_* or $HOME");
	return 0;
}

void tbx_program_path(const char *env_var, const char *build_rel, const char *installed_dir,
		      const char *name, char *out, size_t size)
{
	const char *env = env_var ? getenv(env_var) : NULL;
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (env && env[0]) {
		snprintf(out, size, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		if (strncmp(self, TBX_BUILD_ROOT "/", strlen(TBX_BUILD_ROOT) + 1) == 0 &&
		    (size_t)snprintf(out, size, "%s/%s", TBX_BUILD_ROOT, build_rel) < size &&
		    access(out, X_OK) == 0)
			return;
		if ((slash = strrchr(self, '/'))) {
			*slash = '\0';
			if ((size_t)snprintf(out, size, "%s/%s", self, name) < size && access(out, X_OK) == 0)
				return;
		}
	}
	snprintf(out, size, "%s/%s", installed_dir, name);
}
