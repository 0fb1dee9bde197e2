/* SPDX-License-Identifier: MIT */
/* Local engine: create, connect, set_timeout, pause, kill and list. */
#define _GNU_SOURCE
#include "local.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static void local_labels_free(const struct tbx_host_api *host, char **labels)
{
	for (size_t i = 0; labels && labels[i]; i++)
		host->free(labels[i]);
	host->free(labels);
}

static void local_info_release(const struct tbx_host_api *host, struct tbx_sandbox_info *out)
{
	host->free(out->id);
	host->free(out->workdir);
	local_labels_free(host, out->labels);
	out->id = out->workdir = NULL;
	out->labels = NULL;
}

/* Fill a tbx_sandbox_info from meta.json; -1 on out of memory. */
static int local_info_fill(struct tbx_local *l, const struct local_sbx *s,
			   struct json_object *meta, struct tbx_sandbox_info *out)
{
	const struct tbx_host_api *host = l->host;
	struct json_object *labels;
	size_t n = 0, k = 0;

	out->id = host->strdup(s->id);
	out->workdir = host->strdup(LOCAL_WORKDIR);
	out->state = local_meta_paused(meta) ? TBX_SANDBOX_PAUSED : TBX_SANDBOX_RUNNING;
	out->labels = NULL;
	if (!out->id || !out->workdir)
		goto oom;
	if (json_object_object_get_ex(meta, "labels", &labels) &&
	    json_object_is_type(labels, json_type_object))
		n = (size_t)json_object_object_length(labels);
	if (n) {
		out->labels = host->alloc((n + 1) * sizeof(char *));
		if (!out->labels)
			goto oom;
		memset(out->labels, 0, (n + 1) * sizeof(char *));
		json_object_object_foreach(labels, key, val) {
			const char *v = json_object_get_string(val);
			size_t len = strlen(key) + strlen(v) + 2;
			char *kv = host->alloc(len);

			if (!kv)
				goto oom;
			snprintf(kv, len, "%s=%s", key, v);
			out->labels[k++] = kv;
		}
	}
	return 0;
oom:
	local_info_release(host, out);
	return -1;
}

/* Does meta carry every "key=value" of \p want? */
static int local_labels_match(struct json_object *meta, const char *const *want)
{
	struct json_object *labels = NULL, *v;

	if (!want)
		return 1;
	json_object_object_get_ex(meta, "labels", &labels);
	for (size_t i = 0; want[i]; i++) {
		const char *eq = strchr(want[i], '=');
		char key[256];
		size_t kl = eq ? (size_t)(eq - want[i]) : strlen(want[i]);

		if (kl >= sizeof(key))
			return 0;
		memcpy(key, want[i], kl);
		key[kl] = '\0';
		if (!labels || !json_object_object_get_ex(labels, key, &v))
			return 0;
		if (eq && strcmp(json_object_get_string(v), eq + 1) != 0)
			return 0;
	}
	return 1;
}

static struct json_object *local_meta_new(const char *id, const struct tbx_sandbox_spec *spec)
{
	struct json_object *meta = json_object_new_object(), *labels = json_object_new_object();
	struct json_object *env = json_object_new_array();

	json_object_object_add(meta, "id", json_object_new_string(id));
	json_object_object_add(meta, "template",
			       spec->template_id ? json_object_new_string(spec->template_id) : NULL);
	json_object_object_add(meta, "created", json_object_new_int64((int64_t)time(NULL)));
	json_object_object_add(meta, "flags", json_object_new_int64(spec->flags));
	for (size_t i = 0; spec->labels && spec->labels[i]; i++) {
		const char *eq = strchr(spec->labels[i], '=');
		char *k = strndup(spec->labels[i], eq ? (size_t)(eq - spec->labels[i])
						      : strlen(spec->labels[i]));

		if (k && *k)
			json_object_object_add(labels, k, json_object_new_string(eq ? eq + 1 : ""));
		free(k);
	}
	json_object_object_add(meta, "labels", labels);
	/* Kept so a resumed sandbox gets the same environment (the dir is 0700). */
	for (size_t i = 0; spec->env && spec->env[i]; i++)
		json_object_array_add(env, json_object_new_string(spec->env[i]));
	json_object_object_add(meta, "env", env);
	if (spec->egress_proxy_url)
		json_object_object_add(meta, "egress_proxy_url",
				       json_object_new_string(spec->egress_proxy_url));
	local_meta_set_state(meta, 0);
	local_meta_set_timeout(meta, spec->timeout_s ? spec->timeout_s : 300);
	return meta;
}

/* Save meta.json, saying which file could not be written. */
static int meta_save(struct tbx_local *l, struct tbx_call *call, const struct local_sbx *s,
		     struct json_object *meta)
{
	if (local_meta_save(s, meta) < 0)
		return l->host->error_set(call, TBX_EIO, "cannot write %s/meta.json: %s", s->dir,
					  strerror(errno));
	return 0;
}

int local_sandbox_create(void *inst, struct tbx_call *call, const struct tbx_sandbox_spec *spec,
			 struct tbx_sandbox_info *out)
{
	struct tbx_local *l = inst;
	struct json_object *meta = NULL;
	struct local_sbx s;
	char id[LOCAL_ID_LEN + 1], path[PATH_MAX];
	int lock = -1, ret;

	if ((ret = local_egress_check(l, call, spec->egress_proxy_url)) < 0)
		return ret;
	if (local_id_new(id) < 0)
		return l->host->error_set(call, TBX_EIO, "cannot make a sandbox id: %s",
					  strerror(errno));
	if ((ret = local_sbx_init(l, call, id, &s)) < 0)
		return ret;
	if (local_mkdirs(l->sandboxes, 0700) < 0 || mkdir(s.dir, 0700) < 0)
		return l->host->error_set(call, TBX_EIO, "cannot make sandbox directory %s: %s",
					  s.dir, strerror(errno));
	local_sbx_path(&s, "home/project", path);
	if (local_mkdirs(path, 0755) < 0) {
		ret = l->host->error_set(call, TBX_EIO, "cannot make %s: %s", path, strerror(errno));
		goto fail;
	}
	meta = local_meta_new(id, spec);
	if (!meta) {
		ret = l->host->error_set(call, TBX_ENOMEM, "create sandbox: out of memory");
		goto fail;
	}
	if ((ret = meta_save(l, call, &s, meta)) < 0)
		goto fail;
	lock = local_sbx_lock(&s);
	if (lock < 0) {
		ret = l->host->error_set(call, TBX_EIO, "cannot lock sandbox %s: %s", id,
					 strerror(errno));
		goto fail;
	}
	if ((ret = local_sandbox_start(l, call, &s, meta)) < 0)
		goto fail;
	local_sbx_unlock(lock);
	if (local_info_fill(l, &s, meta, out) < 0) {
		json_object_put(meta);
		return l->host->error_set(call, TBX_ENOMEM, "create sandbox: out of memory");
	}
	l->host->log(call, TBX_LOG_INFO, "sandbox %s started in %s", id, s.dir);
	json_object_put(meta);
	return 0;
fail:
	/* A sandbox that never started leaves nothing behind. */
	local_sandbox_stop(l, &s);
	local_rmtree(s.dir);
	local_sbx_unlock(lock);
	json_object_put(meta);
	return ret;
}

/* Lock an existing sandbox and load its meta; EGONE when it is gone. */
static int local_open_locked(struct tbx_local *l, struct tbx_call *call, const char *id,
			     int gone_status, struct local_sbx *s, int *lock_out,
			     struct json_object **meta_out)
{
	int ret;

	*lock_out = -1;
	*meta_out = NULL;
	if ((ret = local_sbx_init(l, call, id, s)) < 0)
		return ret;
	if (!local_sbx_exists(s))
		goto gone;
	*lock_out = local_sbx_lock(s);
	if (*lock_out < 0)
		goto gone;
	/* kill may have removed it while we waited for the lock. */
	*meta_out = local_meta_load(s);
	if (!local_sbx_exists(s) || !*meta_out) {
		local_sbx_unlock(*lock_out);
		*lock_out = -1;
		json_object_put(*meta_out);
		*meta_out = NULL;
		goto gone;
	}
	return 0;
gone:
	return gone_status == TBX_EGONE
		       ? l->host->error_set(call, TBX_EGONE, "sandbox %s no longer exists", id)
		       : l->host->error_set(call, gone_status, "no local sandbox %s", id);
}

/* With the lock held: is the agent up and answering? */
static int local_agent_answers(struct tbx_local *l, const struct local_sbx *s)
{
	struct tbx_envd_client *c;
	int ok;

	if (!local_sandbox_alive(s))
		return 0;
	c = tbx_envd_client_new(l->host, "http://localhost", s->sock);
	ok = c && tbx_envd_health(c, 2000) == 0;
	tbx_envd_client_free(c);
	return ok;
}

int local_sandbox_connect(void *inst, struct tbx_call *call, const char *id, uint32_t timeout_s,
			  struct tbx_sandbox_info *out)
{
	struct tbx_local *l = inst;
	struct json_object *meta;
	struct local_sbx s;
	int lock, ret;

	if ((ret = local_open_locked(l, call, id, TBX_EGONE, &s, &lock, &meta)) < 0)
		return ret;
	if (local_meta_paused(meta) || !local_agent_answers(l, &s)) {
		l->host->log(call, TBX_LOG_INFO, "sandbox %s: %s", id,
			     local_meta_paused(meta) ? "resuming" : "restarting its agent");
		if ((ret = local_sandbox_start(l, call, &s, meta)) < 0)
			goto out;
		local_meta_set_state(meta, 0);
	}
	if (timeout_s)
		local_meta_set_timeout(meta, timeout_s);
	if ((ret = meta_save(l, call, &s, meta)) < 0)
		goto out;
	ret = local_info_fill(l, &s, meta, out) < 0
		      ? l->host->error_set(call, TBX_ENOMEM, "connect: out of memory")
		      : 0;
out:
	local_sbx_unlock(lock);
	json_object_put(meta);
	return ret;
}

int local_sandbox_set_timeout(void *inst, struct tbx_call *call, const char *id,
			      uint32_t timeout_s)
{
	struct tbx_local *l = inst;
	struct json_object *meta;
	struct local_sbx s;
	int lock, ret;

	if ((ret = local_open_locked(l, call, id, TBX_EGONE, &s, &lock, &meta)) < 0)
		return ret;
	local_meta_set_timeout(meta, timeout_s);
	ret = meta_save(l, call, &s, meta);
	local_sbx_unlock(lock);
	json_object_put(meta);
	return ret;
}

int local_sandbox_pause(void *inst, struct tbx_call *call, const char *id)
{
	struct tbx_local *l = inst;
	struct json_object *meta;
	struct local_sbx s;
	int lock, ret;

	if ((ret = local_open_locked(l, call, id, TBX_EGONE, &s, &lock, &meta)) < 0)
		return ret;
	if (local_meta_paused(meta)) {
		ret = l->host->error_set(call, TBX_EPAUSED, "sandbox %s is already paused", id);
		goto out;
	}
	/* Locally, pausing stops every process; files stay, memory does not. */
	local_sandbox_stop(l, &s);
	local_meta_set_state(meta, 1);
	ret = meta_save(l, call, &s, meta);
out:
	local_sbx_unlock(lock);
	json_object_put(meta);
	return ret;
}

int local_sandbox_kill(void *inst, struct tbx_call *call, const char *id)
{
	struct tbx_local *l = inst;
	struct json_object *meta;
	struct local_sbx s;
	int lock, ret;

	if ((ret = local_open_locked(l, call, id, TBX_ENOENT, &s, &lock, &meta)) < 0)
		return ret;
	local_sandbox_stop(l, &s);
	ret = local_rmtree(s.dir) < 0
		      ? l->host->error_set(call, TBX_EIO, "cannot remove %s: %s", s.dir,
					   strerror(errno))
		      : 0;
	local_sbx_unlock(lock);
	json_object_put(meta);
	if (!ret)
		l->host->log(call, TBX_LOG_INFO, "sandbox %s killed", id);
	return ret;
}

int local_sandbox_list(void *inst, struct tbx_call *call, const char *const *labels,
		       struct tbx_sandbox_info **out, size_t *n_out)
{
	struct tbx_local *l = inst;
	struct tbx_sandbox_info *arr = NULL;
	struct dirent *de;
	size_t n = 0, cap = 0;
	DIR *d;

	*out = NULL;
	*n_out = 0;
	d = opendir(l->sandboxes);
	if (!d)
		return errno == ENOENT ? 0
				       : l->host->error_set(call, TBX_EIO, "cannot list %s: %s",
							    l->sandboxes, strerror(errno));
	while ((de = readdir(d))) {
		struct json_object *meta;
		struct local_sbx s;

		if (!local_id_valid(de->d_name) ||
		    local_sbx_init(l, call, de->d_name, &s) < 0)
			continue;
		/* Read without the lock: meta.json is replaced atomically. */
		meta = local_meta_load(&s);
		if (!meta || !local_labels_match(meta, labels)) {
			json_object_put(meta);
			continue;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			struct tbx_sandbox_info *na = l->host->alloc(ncap * sizeof(*na));

			if (!na) {
				json_object_put(meta);
				goto oom;
			}
			memset(na, 0, ncap * sizeof(*na));
			if (n)
				memcpy(na, arr, n * sizeof(*na));
			l->host->free(arr);
			arr = na;
			cap = ncap;
		}
		arr[n].struct_size = sizeof(arr[n]);
		arr[n].abi_minor = TBX_ABI_MINOR;
		if (local_info_fill(l, &s, meta, &arr[n]) < 0) {
			json_object_put(meta);
			goto oom;
		}
		n++;
		json_object_put(meta);
	}
	closedir(d);
	*out = arr;
	*n_out = n;
	return 0;
oom:
	closedir(d);
	for (size_t i = 0; i < n; i++)
		local_info_release(l->host, &arr[i]);
	l->host->free(arr);
	return l->host->error_set(call, TBX_ENOMEM, "list sandboxes: out of memory");
}

int local_sandbox_client(struct tbx_local *l, struct tbx_call *call, const char *id,
			 struct tbx_envd_client **out)
{
	struct json_object *meta;
	struct local_sbx s;
	int ret;

	*out = NULL;
	if ((ret = local_sbx_init(l, call, id, &s)) < 0)
		return ret;
	if (!local_sbx_exists(&s) || !(meta = local_meta_load(&s)))
		return l->host->error_set(call, TBX_EGONE, "sandbox %s no longer exists", id);
	if (local_meta_paused(meta)) {
		json_object_put(meta);
		return l->host->error_set(call, TBX_EUNAVAIL,
					  "sandbox %s is paused: connect to it to resume it", id);
	}
	json_object_put(meta);
	/* Its process died while it should run (a reboot, an OOM kill): start it again. */
	if (!local_sandbox_alive(&s)) {
		int lock = local_sbx_lock(&s);

		if (lock < 0)
			return l->host->error_set(call, TBX_EGONE, "sandbox %s no longer exists", id);
		meta = local_meta_load(&s);
		if (!meta || !local_sbx_exists(&s))
			ret = l->host->error_set(call, TBX_EGONE, "sandbox %s no longer exists", id);
		else if (local_meta_paused(meta))
			ret = l->host->error_set(call, TBX_EUNAVAIL,
						 "sandbox %s is paused: connect to it to resume it",
						 id);
		else if (!local_sandbox_alive(&s))
			ret = local_sandbox_start(l, call, &s, meta);
		json_object_put(meta);
		local_sbx_unlock(lock);
		if (ret < 0)
			return ret;
	}
	*out = tbx_envd_client_new(l->host, "http://localhost", s.sock);
	if (!*out)
		return l->host->error_set(call, TBX_ENOMEM, "out of memory");
	return 0;
}
