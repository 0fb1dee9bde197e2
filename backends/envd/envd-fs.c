/* SPDX-License-Identifier: MIT */
/* envd client: filesystem.Filesystem RPCs as twinbox file ops. */
#define _GNU_SOURCE
#include "envd-client-priv.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *envd_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* int64/uint32 fields arrive as JSON strings or numbers (§2.3). */
static int64_t envd_int(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	if (json_object_is_type(v, json_type_string))
		return strtoll(json_object_get_string(v), NULL, 10);
	return json_object_get_int64(v);
}

/* RFC 3339 ("2024-05-01T10:00:00.123Z", "+02:00" offsets) → epoch seconds. */
static int64_t envd_time(const char *s)
{
	struct tm tm = { 0 };
	const char *p;
	int64_t t;

	if (!s || !(p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)))
		return 0;
	t = (int64_t)timegm(&tm);
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	if ((*p == '+' || *p == '-') && strlen(p) >= 6) {
		int off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600 +
			  ((p[4] - '0') * 10 + (p[5] - '0')) * 60;

		t += *p == '+' ? -off : off;
	}
	return t;
}

static void envd_info_release(const struct tbx_host_api *host, struct tbx_file_info *fi)
{
	host->free(fi->name);
	host->free(fi->path);
	host->free(fi->symlink_target);
	fi->name = fi->path = fi->symlink_target = NULL;
}

/* Fill \p out from an EntryInfo object; -1 on a malformed entry or OOM. */
static int envd_entry_fill(const struct tbx_host_api *host, struct json_object *e,
			   struct tbx_file_info *out)
{
	const char *name = envd_str(e, "name"), *path = envd_str(e, "path");
	const char *type = envd_str(e, "type"), *target = envd_str(e, "symlinkTarget");
	struct json_object *tv;

	if (!json_object_is_type(e, json_type_object) || !path)
		return -1;
	if (!name) {
		name = strrchr(path, '/');
		name = name ? name + 1 : path;
	}
	out->type = TBX_FILE_UNKNOWN;
	if (type) {
		if (strcmp(type, "FILE_TYPE_FILE") == 0)
			out->type = TBX_FILE_REGULAR;
		else if (strcmp(type, "FILE_TYPE_DIRECTORY") == 0)
			out->type = TBX_FILE_DIRECTORY;
		else if (strcmp(type, "FILE_TYPE_SYMLINK") == 0)
			out->type = TBX_FILE_SYMLINK;
	} else if (json_object_object_get_ex(e, "type", &tv)) {
		int t = json_object_get_int(tv); /* enums may arrive as numbers */

		out->type = t >= 1 && t <= 3 ? (uint32_t)t : TBX_FILE_UNKNOWN;
	}
	/* Go's FileMode puts type bits high; keep only the permission bits. */
	out->mode = (uint32_t)envd_int(e, "mode") & 07777;
	out->size = (uint64_t)envd_int(e, "size");
	out->mtime = envd_time(envd_str(e, "modifiedTime"));
	out->name = host->strdup(name);
	out->path = host->strdup(path);
	out->symlink_target = target ? host->strdup(target) : NULL;
	if (!out->name || !out->path || (target && !out->symlink_target)) {
		envd_info_release(host, out);
		return -1;
	}
	return 0;
}

static struct json_object *envd_req_path(const char *key, const char *path)
{
	struct json_object *req = json_object_new_object();

	if (req)
		json_object_object_add(req, key, json_object_new_string(path));
	return req;
}

/* \p op names the call in messages ("stat"), \p rpc is what goes on the wire. */
static int envd_entry_answer(struct tbx_envd_client *c, struct tbx_call *call, const char *op,
			     const char *rpc, struct json_object *req, struct tbx_file_info *out)
{
	struct json_object *resp = NULL, *e;
	int ret;

	if (!req)
		return c->host->error_set(call, TBX_ENOMEM, "%s: out of memory", op);
	ret = tbx_envd_unary_as(c, call, op, rpc, req, &resp);
	json_object_put(req);
	if (ret < 0 || !out) {
		json_object_put(resp);
		return ret;
	}
	if (!json_object_object_get_ex(resp, "entry", &e) || envd_entry_fill(c->host, e, out) < 0)
		ret = c->host->error_set(call, TBX_EPROTO, "%s: envd answered without a valid entry",
					 op);
	json_object_put(resp);
	return ret;
}

int tbx_envd_fs_stat(struct tbx_envd_client *c, struct tbx_call *call, const char *path,
		     struct tbx_file_info *out)
{
	return envd_entry_answer(c, call, "stat", "filesystem.Filesystem/Stat",
				 envd_req_path("path", path), out);
}

int tbx_envd_fs_mkdir(struct tbx_envd_client *c, struct tbx_call *call, const char *path)
{
	return envd_entry_answer(c, call, "mkdir", "filesystem.Filesystem/MakeDir",
				 envd_req_path("path", path), NULL);
}

int tbx_envd_fs_remove(struct tbx_envd_client *c, struct tbx_call *call, const char *path)
{
	return envd_entry_answer(c, call, "remove", "filesystem.Filesystem/Remove",
				 envd_req_path("path", path), NULL);
}

int tbx_envd_fs_move(struct tbx_envd_client *c, struct tbx_call *call, const char *from,
		     const char *to)
{
	struct json_object *req = envd_req_path("source", from);

	if (req)
		json_object_object_add(req, "destination", json_object_new_string(to));
	return envd_entry_answer(c, call, "rename", "filesystem.Filesystem/Move", req, NULL);
}

int tbx_envd_fs_list(struct tbx_envd_client *c, struct tbx_call *call, const char *path,
		     uint32_t depth, struct tbx_file_info **out, size_t *n_out)
{
	const char *rpc = "filesystem.Filesystem/ListDir", *op = "list";
	struct json_object *req = envd_req_path("path", path), *resp = NULL, *entries;
	struct tbx_file_info *arr = NULL;
	size_t n = 0, k = 0;
	int ret;

	*out = NULL;
	*n_out = 0;
	if (!req)
		return c->host->error_set(call, TBX_ENOMEM, "%s: out of memory", op);
	json_object_object_add(req, "depth", json_object_new_int64(depth ? depth : 1));
	ret = tbx_envd_unary_as(c, call, op, rpc, req, &resp);
	json_object_put(req);
	if (ret < 0)
		return ret;
	if (json_object_object_get_ex(resp, "entries", &entries)) {
		if (!json_object_is_type(entries, json_type_array)) {
			json_object_put(resp);
			return c->host->error_set(call, TBX_EPROTO, "%s: entries is not an array",
						  op);
		}
		n = json_object_array_length(entries);
	}
	if (n) {
		arr = c->host->alloc(n * sizeof(*arr));
		if (!arr) {
			json_object_put(resp);
			return c->host->error_set(call, TBX_ENOMEM, "%s: out of memory", op);
		}
		memset(arr, 0, n * sizeof(*arr));
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(entries, i);
		const char *type = envd_str(e, "type");

		/* As the SDK does, skip entries of unspecified type. */
		if (type && strcmp(type, "FILE_TYPE_UNSPECIFIED") == 0)
			continue;
		arr[k].struct_size = sizeof(arr[k]);
		arr[k].abi_minor = TBX_ABI_MINOR;
		if (envd_entry_fill(c->host, e, &arr[k]) < 0) {
			for (size_t j = 0; j < k; j++)
				envd_info_release(c->host, &arr[j]);
			c->host->free(arr);
			json_object_put(resp);
			return c->host->error_set(call, TBX_EPROTO,
						  "%s: envd answered a malformed entry", op);
		}
		k++;
	}
	json_object_put(resp);
	if (!k) {
		c->host->free(arr);
		arr = NULL;
	}
	*out = arr;
	*n_out = k;
	return 0;
}
