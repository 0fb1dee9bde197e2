/* SPDX-License-Identifier: MIT */
/* Agent: filesystem.Filesystem unary RPCs (PROTOCOL.md §2.5). */
#define _GNU_SOURCE
#include "agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Deepest ListDir walk served, whatever the client asks. */
#define AGENT_LIST_DEPTH_MAX 64
/* Most entries one ListDir answers, so a huge tree cannot exhaust memory. */
#define AGENT_LIST_ENTRIES_MAX 100000

static void agent_fs_perms(mode_t m, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";

	out[0] = S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : '-';
	for (int i = 0; i < 9; i++)
		out[1 + i] = (m & (1u << (8 - i))) ? rwx[i] : '-';
	out[10] = '\0';
}

/* EntryInfo for \p path (not following a final symlink); NULL with errno. */
static struct json_object *agent_fs_entry(const char *path)
{
	struct json_object *e;
	struct stat st;
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;
	char buf[2048], perms[11], mtime[64], size[32], num[16];
	const char *name = strrchr(path, '/');
	struct tm tm;

	if (lstat(path, &st) < 0)
		return NULL;
	e = json_object_new_object();
	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	name = name && name[1] ? name + 1 : path;
	json_object_object_add(e, "name", json_object_new_string(name));
	json_object_object_add(e, "type", json_object_new_string(
		S_ISDIR(st.st_mode) ? "FILE_TYPE_DIRECTORY" :
		S_ISLNK(st.st_mode) ? "FILE_TYPE_SYMLINK" :
		S_ISREG(st.st_mode) ? "FILE_TYPE_FILE" : "FILE_TYPE_UNSPECIFIED"));
	json_object_object_add(e, "path", json_object_new_string(path));
	snprintf(size, sizeof(size), "%lld", (long long)st.st_size);
	json_object_object_add(e, "size", json_object_new_string(size));
	json_object_object_add(e, "mode", json_object_new_int64(st.st_mode & 07777));
	agent_fs_perms(st.st_mode, perms);
	json_object_object_add(e, "permissions", json_object_new_string(perms));
	getpwuid_r(st.st_uid, &pw, buf, sizeof(buf), &pwp);
	snprintf(num, sizeof(num), "%u", (unsigned)st.st_uid);
	json_object_object_add(e, "owner", json_object_new_string(pwp ? pwp->pw_name : num));
	getgrgid_r(st.st_gid, &gr, buf, sizeof(buf), &grp);
	snprintf(num, sizeof(num), "%u", (unsigned)st.st_gid);
	json_object_object_add(e, "group", json_object_new_string(grp ? grp->gr_name : num));
	gmtime_r(&st.st_mtim.tv_sec, &tm);
	{
		char secs[40];

		strftime(secs, sizeof(secs), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(mtime, sizeof(mtime), "%s.%09ldZ", secs, (long)st.st_mtim.tv_nsec);
	}
	json_object_object_add(e, "modifiedTime", json_object_new_string(mtime));
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(path, target, sizeof(target) - 1);

		if (n >= 0) {
			target[n] = '\0';
			json_object_object_add(e, "symlinkTarget", json_object_new_string(target));
		}
	}
	return e;
}

/* The "path"-like string member \p key, resolved; replies and NULL if bad. */
static char *agent_fs_arg(struct agent *a, struct evhttp_request *req, struct json_object *body,
			  const char *key)
{
	struct json_object *v;
	char *p;

	if (!json_object_object_get_ex(body, key, &v) || !json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) == 0) {
		agent_reply_rpc_error(req, "invalid_argument", "%s is required", key);
		return NULL;
	}
	if (strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v)) {
		agent_reply_rpc_error(req, "invalid_argument", "%s contains a NUL byte", key);
		return NULL;
	}
	p = agent_path_resolve(a, json_object_get_string(v));
	if (!p)
		agent_reply_rpc_error(req, "internal", "out of memory");
	return p;
}

static void agent_fs_reply_entry(struct evhttp_request *req, const char *path)
{
	struct json_object *e = agent_fs_entry(path), *resp;

	if (!e) {
		agent_reply_rpc_error(req, agent_errno_code(errno), "cannot stat '%s': %s", path,
				      strerror(errno));
		return;
	}
	resp = json_object_new_object();
	json_object_object_add(resp, "entry", e);
	agent_reply_json(req, 200, resp);
	json_object_put(resp);
}

static int agent_fs_mkdirs(char *path, mode_t mode)
{
	/* Walk the components, making each; the path is modified and restored. */
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, mode) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, mode);
}

static int agent_fs_walk(struct json_object *arr, const char *dir, int depth, int *count)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort);

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		const char *nm = names[i]->d_name;
		struct json_object *e;
		char *child = NULL;

		if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0 || *count >= AGENT_LIST_ENTRIES_MAX)
			goto next;
		if (asprintf(&child, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", nm) < 0) {
			child = NULL;
			goto next;
		}
		e = agent_fs_entry(child);
		if (!e)
			goto next; /* vanished while walking */
		json_object_array_add(arr, e);
		(*count)++;
		{
			struct stat st;

			if (depth > 1 && lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
				agent_fs_walk(arr, child, depth - 1, count);
		}
next:
		free(child);
		free(names[i]);
	}
	free(names);
	return 0;
}

static int agent_fs_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (remove(path) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

void agent_fs_handle(struct agent *a, struct evhttp_request *req, const char *method)
{
	struct json_object *body, *v;
	char why[256];
	char *path = NULL, *dest = NULL;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		agent_reply_rpc_error(req, "invalid_argument", "RPCs take POST");
		return;
	}
	if (!agent_content_type_is(req, "application/json")) {
		agent_reply_rpc_error(req, "invalid_argument",
				      "unsupported content type: unary RPCs take application/json");
		return;
	}
	if (!(body = agent_body_json(req, why, sizeof(why)))) {
		agent_reply_rpc_error(req, "invalid_argument", "%s", why);
		return;
	}
	if (strcmp(method, "Move") == 0) {
		if (!(path = agent_fs_arg(a, req, body, "source")) ||
		    !(dest = agent_fs_arg(a, req, body, "destination")))
			goto done;
	} else if (strcmp(method, "Stat") == 0 || strcmp(method, "ListDir") == 0 ||
		   strcmp(method, "MakeDir") == 0 || strcmp(method, "Remove") == 0) {
		if (!(path = agent_fs_arg(a, req, body, "path")))
			goto done;
	} else {
		agent_reply_rpc_error(req, "unimplemented", "filesystem.Filesystem/%s is not served "
				      "by the twinbox agent", method);
		goto done;
	}

	if (strcmp(method, "Stat") == 0) {
		agent_fs_reply_entry(req, path);
	} else if (strcmp(method, "ListDir") == 0) {
		struct json_object *resp, *arr;
		struct stat st;
		int64_t depth = 1;
		int count = 0;

		if (json_object_object_get_ex(body, "depth", &v))
			depth = json_object_get_int64(v);
		if (depth < 1)
			depth = 1; /* envd treats 0 as 1 */
		if (depth > AGENT_LIST_DEPTH_MAX)
			depth = AGENT_LIST_DEPTH_MAX;
		if (stat(path, &st) < 0) {
			agent_reply_rpc_error(req, agent_errno_code(errno), "cannot list '%s': %s",
					      path, strerror(errno));
			goto done;
		}
		if (!S_ISDIR(st.st_mode)) {
			agent_reply_rpc_error(req, "invalid_argument", "path '%s' is not a directory",
					      path);
			goto done;
		}
		resp = json_object_new_object();
		arr = json_object_new_array();
		json_object_object_add(resp, "entries", arr);
		if (agent_fs_walk(arr, path, (int)depth, &count) < 0) {
			agent_reply_rpc_error(req, agent_errno_code(errno), "cannot list '%s': %s",
					      path, strerror(errno));
		} else {
			agent_reply_json(req, 200, resp);
		}
		json_object_put(resp);
	} else if (strcmp(method, "MakeDir") == 0) {
		struct stat st;

		if (lstat(path, &st) == 0) {
			agent_reply_rpc_error(req, "already_exists", "path '%s' already exists%s",
					      path, S_ISDIR(st.st_mode) ? "" : " and is not a directory");
			goto done;
		}
		if (agent_fs_mkdirs(path, 0755) < 0) {
			agent_reply_rpc_error(req, agent_errno_code(errno), "cannot make '%s': %s",
					      path, strerror(errno));
			goto done;
		}
		agent_fs_reply_entry(req, path);
	} else if (strcmp(method, "Remove") == 0) {
		struct stat st;

		if (strcmp(path, "/") == 0 || strcmp(path, a->home) == 0) {
			agent_reply_rpc_error(req, "invalid_argument", "refusing to remove '%s'", path);
			goto done;
		}
		/* A missing path is not an error. */
		if (lstat(path, &st) == 0 &&
		    nftw(path, agent_fs_rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) != 0) {
			agent_reply_rpc_error(req, agent_errno_code(errno), "cannot remove '%s': %s",
					      path, strerror(errno));
			goto done;
		}
		agent_reply_json(req, 200, NULL);
	} else { /* Move */
		char *slash;

		if (access(path, F_OK) < 0 && errno == ENOENT) {
			agent_reply_rpc_error(req, "not_found", "path '%s' does not exist", path);
			goto done;
		}
		/* envd makes the destination's parents. */
		slash = strrchr(dest, '/');
		if (slash && slash != dest) {
			*slash = '\0';
			if (agent_fs_mkdirs(dest, 0755) < 0 && errno != EEXIST) {
				int err = errno;

				*slash = '/';
				agent_reply_rpc_error(req, agent_errno_code(err),
						      "cannot make parents of '%s': %s", dest,
						      strerror(err));
				goto done;
			}
			*slash = '/';
		}
		if (rename(path, dest) < 0) {
			agent_reply_rpc_error(req, agent_errno_code(errno),
					      "cannot move '%s' to '%s': %s", path, dest,
					      strerror(errno));
			goto done;
		}
		agent_fs_reply_entry(req, dest);
	}
done:
	free(path);
	free(dest);
	json_object_put(body);
}
