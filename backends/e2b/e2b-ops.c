/* SPDX-License-Identifier: MIT */
/*
 * E2B engine: exec and file ops through the sandbox's envd, and preview URLs.
 * A failure that may come from the sandbox itself is checked with the API: a
 * sandbox E2B lost becomes TBX_EGONE, one that paused on its idle timeout is
 * resumed and the op tried again (never a command that had started).
 */
#define _GNU_SOURCE
#include "e2b.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*e2b_envd_fn)(struct tbx_envd_client *c, struct tbx_call *call, void *arg);

enum e2b_state { E2B_STATE_RUNNING, E2B_STATE_PAUSED, E2B_STATE_OTHER };

/* The API's view of a sandbox; refreshes its envd token on the way. */
static int e2b_sandbox_state(struct tbx_e2b *e, struct tbx_call *call, const char *id,
			     enum e2b_state *state)
{
	struct json_object *detail, *v;
	const char *s = NULL;
	int ret = e2b_sandbox_get(e, call, id, &detail);

	if (ret < 0)
		return ret;
	if (json_object_object_get_ex(detail, "state", &v) && json_object_is_type(v, json_type_string))
		s = json_object_get_string(v);
	*state = s && strcmp(s, "running") == 0	 ? E2B_STATE_RUNNING
		 : s && strcmp(s, "paused") == 0 ? E2B_STATE_PAUSED
						 : E2B_STATE_OTHER;
	if (*state == E2B_STATE_RUNNING)
		e2b_cache_put(e, id, detail);
	json_object_put(detail);
	return 0;
}

static int e2b_with_envd(struct tbx_e2b *e, struct tbx_call *call, const char *id, e2b_envd_fn fn,
			 void *arg, const int *started)
{
	for (int attempt = 0;; attempt++) {
		struct tbx_envd_client *c;
		enum e2b_state state;
		int ret = e2b_envd_client(e, call, id, &c), st;

		if (ret == TBX_EPAUSED && attempt == 0) {
			if ((ret = e2b_sandbox_resume(e, call, id)) < 0)
				return ret;
			continue;
		}
		if (ret == TBX_EPAUSED)
			return e->host->error_set(call, TBX_EUNAVAIL,
						  "sandbox %s paused again while it was resumed", id);
		if (ret < 0)
			return ret;
		ret = fn(c, call, arg);
		tbx_envd_client_free(c);
		if (ret != TBX_EIO && ret != TBX_EUNAVAIL && ret != TBX_EPROTO && ret != TBX_EAUTH)
			return ret;
		if (e->host->is_cancelled(call))
			return ret;
		/* Reading the state must not hide the op's own error if it works. */
		if ((st = e2b_sandbox_state(e, call, id, &state)) == TBX_EGONE)
			return st;
		if (st < 0 || attempt > 0 || (started && *started))
			return ret;
		if (state == E2B_STATE_PAUSED) {
			if ((st = e2b_sandbox_resume(e, call, id)) < 0)
				return st;
			continue;
		}
		/* A refused token may have changed with a resume elsewhere: try the fresh one. */
		if (ret == TBX_EAUTH && state == E2B_STATE_RUNNING)
			continue;
		return ret;
	}
}

struct e2b_exec_args {
	struct tbx_e2b *e;
	const struct tbx_exec_request *req;
	tbx_exec_output_cb on_output;
	void *payload;
	struct tbx_exec_result *out;
	int started;
};

static int e2b_exec_fn(struct tbx_envd_client *c, struct tbx_call *call, void *arg)
{
	struct e2b_exec_args *x = arg;
	const char *args[] = { "-l", "-c", x->req->command, NULL };
	const char **env = NULL;
	size_t n = 0, k = 0;
	int ret;

	while (x->req->env && x->req->env[n])
		n++;
	if (n) {
		if (!(env = calloc(n + 1, sizeof(*env))))
			return x->e->host->error_set(call, TBX_ENOMEM, "exec: out of memory");
		for (size_t i = 0; i < n; i++)
			if (e2b_env_safe(x->e, call, x->req->env[i]))
				env[k++] = x->req->env[i];
	}
	{
		/* The shape the official SDK sends for commands.run(). */
		struct tbx_envd_process p = {
			.cmd = "/bin/bash", .args = args, .env = env,
			.cwd = x->req->cwd ? x->req->cwd : E2B_WORKDIR,
			.timeout_ms = x->req->timeout_ms, .started_out = &x->started,
		};

		ret = tbx_envd_process_start(c, call, &p, x->on_output, x->payload, x->out);
	}
	free(env);
	return ret;
}

int e2b_exec(void *inst, struct tbx_call *call, const char *id,
	     const struct tbx_exec_request *request, tbx_exec_output_cb on_output, void *payload,
	     struct tbx_exec_result *out)
{
	struct tbx_e2b *e = inst;
	struct e2b_exec_args x = { .e = e, .req = request, .on_output = on_output,
				   .payload = payload, .out = out };

	if (!request || !request->command)
		return e->host->error_set(call, TBX_EINVAL, "exec: no command given");
	return e2b_with_envd(e, call, id, e2b_exec_fn, &x, &x.started);
}

struct e2b_file_args {
	const char *path, *to;
	const char *data;
	size_t len;
	uint32_t depth;
	char **data_out;
	size_t *len_out;
	struct tbx_file_info *info;
	struct tbx_file_info **list;
};

static int e2b_read_fn(struct tbx_envd_client *c, struct tbx_call *call, void *arg)
{
	struct e2b_file_args *a = arg;

	return tbx_envd_file_read(c, call, a->path, a->data_out, a->len_out);
}

static int e2b_write_fn(struct tbx_envd_client *c, struct tbx_call *call, void *arg)
{
	struct e2b_file_args *a = arg;

	return tbx_envd_file_write(c, call, a->path, a->data, a->len);
}

static int e2b_stat_fn(struct tbx_envd_client *c, struct tbx_call *call, void *arg)
{
	struct e2b_file_args *a = arg;

	return tbx_envd_fs_stat(c, call, a->path, a->info);
}

static int e2b_list_fn(struct tbx_envd_client *c, struct tbx_call *call, void *arg)
{
	struct e2b_file_args *a = arg;

	return tbx_envd_fs_list(c, call, a->path, a->depth, a->list, a->len_out);
}

static int e2b_mkdir_fn(struct tbx_envd_client *c, struct tbx_call *call, void *arg)
{
	return tbx_envd_fs_mkdir(c, call, ((struct e2b_file_args *)arg)->path);
}

static int e2b_remove_fn(struct tbx_envd_client *c, struct tbx_call *call, void *arg)
{
	return tbx_envd_fs_remove(c, call, ((struct e2b_file_args *)arg)->path);
}

static int e2b_rename_fn(struct tbx_envd_client *c, struct tbx_call *call, void *arg)
{
	struct e2b_file_args *a = arg;

	return tbx_envd_fs_move(c, call, a->path, a->to);
}

int e2b_file_read(void *inst, struct tbx_call *call, const char *id, const char *path,
		  char **data_out, size_t *len_out)
{
	struct e2b_file_args a = { .path = path, .data_out = data_out, .len_out = len_out };

	return e2b_with_envd(inst, call, id, e2b_read_fn, &a, NULL);
}

int e2b_file_write(void *inst, struct tbx_call *call, const char *id, const char *path,
		   const char *data, size_t len)
{
	struct e2b_file_args a = { .path = path, .data = data, .len = len };

	return e2b_with_envd(inst, call, id, e2b_write_fn, &a, NULL);
}

int e2b_file_stat(void *inst, struct tbx_call *call, const char *id, const char *path,
		  struct tbx_file_info *out)
{
	struct e2b_file_args a = { .path = path, .info = out };

	return e2b_with_envd(inst, call, id, e2b_stat_fn, &a, NULL);
}

int e2b_file_list(void *inst, struct tbx_call *call, const char *id, const char *path,
		  uint32_t depth, struct tbx_file_info **out, size_t *n_out)
{
	struct e2b_file_args a = { .path = path, .depth = depth, .list = out, .len_out = n_out };

	return e2b_with_envd(inst, call, id, e2b_list_fn, &a, NULL);
}

int e2b_file_mkdir(void *inst, struct tbx_call *call, const char *id, const char *path)
{
	struct e2b_file_args a = { .path = path };

	return e2b_with_envd(inst, call, id, e2b_mkdir_fn, &a, NULL);
}

int e2b_file_remove(void *inst, struct tbx_call *call, const char *id, const char *path)
{
	struct e2b_file_args a = { .path = path };

	return e2b_with_envd(inst, call, id, e2b_remove_fn, &a, NULL);
}

int e2b_file_rename(void *inst, struct tbx_call *call, const char *id, const char *from,
		    const char *to)
{
	struct e2b_file_args a = { .path = from, .to = to };

	return e2b_with_envd(inst, call, id, e2b_rename_fn, &a, NULL);
}

int e2b_preview_url(void *inst, struct tbx_call *call, const char *id, uint16_t port,
		    char **url_out)
{
	struct tbx_e2b *e = inst;
	char *domain;
	size_t n;

	if (!e2b_id_valid(id))
		return e->host->error_set(call, TBX_EINVAL, "'%s' is not an E2B sandbox id", id);
	if (!port)
		return e->host->error_set(call, TBX_EINVAL, "preview URL: port 0 is not a port");
	if (!(domain = e2b_cache_domain(e, id)))
		return e->host->error_set(call, TBX_ENOMEM, "out of memory");
	/* The SDK's getHost(): ignores E2B_SANDBOX_URL, which is envd's alone. */
	n = strlen(id) + strlen(domain) + 32;
	*url_out = e->host->alloc(n);
	if (*url_out)
		snprintf(*url_out, n, "https://%u-%s.%s", (unsigned)port, id, domain);
	e->host->free(domain);
	return *url_out ? 0 : e->host->error_set(call, TBX_ENOMEM, "out of memory");
}
