/* SPDX-License-Identifier: MIT */
/* Git sync for sessions: the engine as a sync port, branch numbers, and the status shown. */
#include "sync.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "error.h"
#include "store.h"

struct collect {
	char *data[2]; /* stdout, stderr */
	size_t len[2];
	size_t cap[2];
	int failed;
};

static int on_output(enum tbx_exec_stream stream, const char *data, size_t len, void *payload)
{
	struct collect *c = payload;
	int i = stream == TBX_STREAM_STDERR ? 1 : 0;

	if (c->failed)
		return 0;
	if (c->len[i] + len + 1 > c->cap[i]) {
		size_t cap = c->cap[i] ? c->cap[i] : 1024;
		while (cap < c->len[i] + len + 1)
			cap *= 2;
		char *grown = realloc(c->data[i], cap);
		if (!grown) {
			c->failed = 1;
			return 0;
		}
		c->data[i] = grown;
		c->cap[i] = cap;
	}
	memcpy(c->data[i] + c->len[i], data, len);
	c->len[i] += len;
	c->data[i][c->len[i]] = '\0';
	return 0;
}

static int port_exec(void *payload, const char *script, const char *const *env,
		     uint32_t timeout_ms, struct tbx_git_exec_result *out)
{
	struct tbx_sync_sandbox *s = payload;
	struct tbx_exec_request req = TBX_EXEC_REQUEST_INIT;
	struct tbx_exec_result res = { .struct_size = sizeof(res), .abi_minor = TBX_ABI_MINOR };
	struct collect c = { 0 };
	int rc;

	req.command = script;
	req.cwd = s->port.workdir;
	req.env = env;
	req.timeout_ms = timeout_ms;
	rc = tbx_engine_exec(s->engine, s->cancel, s->sandbox_id, &req, on_output, &c, &res);
	if (rc == 0 && c.failed)
		rc = tbx_error_set(TBX_ENOMEM, "out of memory for a command's output");
	if (rc == 0 && (res.timed_out || res.cancelled))
		rc = res.timed_out ? tbx_error_set(TBX_ETIMEDOUT, "git in the sandbox took too long")
				   : tbx_error_set(TBX_ECANCELED, "cancelled");
	if (rc < 0) {
		free(c.data[0]);
		free(c.data[1]);
		return rc;
	}
	out->exit_code = res.signal ? -1 : res.exit_code;
	out->out = c.data[0];
	out->out_len = c.len[0];
	out->err = c.data[1];
	out->err_len = c.len[1];
	return 0;
}

static int port_read(void *payload, const char *path, char **data_out, size_t *len_out)
{
	struct tbx_sync_sandbox *s = payload;

	return tbx_engine_file_read(s->engine, s->cancel, s->sandbox_id, path, data_out, len_out);
}

static int port_write(void *payload, const char *path, const char *data, size_t len)
{
	struct tbx_sync_sandbox *s = payload;

	return tbx_engine_file_write(s->engine, s->cancel, s->sandbox_id, path, data, len);
}

static int port_remove(void *payload, const char *path)
{
	struct tbx_sync_sandbox *s = payload;

	/* Not cancellable: a transfer file is cleaned up even after a cancel. */
	return tbx_engine_file_remove(s->engine, NULL, s->sandbox_id, path);
}

void tbx_sync_sandbox_init(struct tbx_sync_sandbox *s, struct tbx_engine *engine,
			   const char *sandbox_id, const char *workdir, const char *session_id,
			   const atomic_int *cancel)
{
	memset(s, 0, sizeof(*s));
	s->engine = engine;
	s->sandbox_id = sandbox_id;
	s->cancel = cancel;
	/* Per session: on engines whose /tmp is shared (the fake one), names must not clash. */
	snprintf(s->scratch, sizeof(s->scratch), "/tmp/twinbox-%s", session_id);
	s->port = (struct tbx_git_sandbox){
		.exec = port_exec, .file_read = port_read, .file_write = port_write,
		.file_remove = port_remove, .payload = s, .workdir = workdir, .scratch = s->scratch,
	};
}

int tbx_sync_branch_allocate(struct tbx_store *store, const char *repo_root,
			     const char *session_id, int64_t *n_out)
{
	int64_t floor = 0;
	int rc;

	/* Numbers made by hand or by another twinbox install are skipped too. */
	if ((rc = tbx_git_sync_branch_floor(repo_root, &floor)) < 0)
		return rc;
	return tbx_store_branch_allocate(store, repo_root, session_id, floor, n_out);
}

void tbx_sync_status_set(struct tbx_sync_status *st, const char *state, const char *notice)
{
	free(st->state);
	free(st->notice);
	st->state = state ? strdup(state) : NULL;
	st->notice = notice ? strdup(notice) : NULL;
}

void tbx_sync_status_clear(struct tbx_sync_status *st)
{
	free(st->state);
	free(st->notice);
	json_object_put(st->last);
	memset(st, 0, sizeof(*st));
}

struct json_object *tbx_sync_status_json(const struct tbx_sync_status *st, const char *repo_root,
					 int64_t branch_number)
{
	struct json_object *o = json_object_new_object();
	char branch[64];

	snprintf(branch, sizeof(branch), "opencode/%lld", (long long)branch_number);
	json_object_object_add(o, "enabled", json_object_new_boolean(repo_root != NULL));
	json_object_object_add(o, "branch", repo_root && branch_number > 0
						    ? json_object_new_string(branch) : NULL);
	json_object_object_add(o, "state", st->state ? json_object_new_string(st->state) : NULL);
	json_object_object_add(o, "notice", st->notice ? json_object_new_string(st->notice) : NULL);
	json_object_object_add(o, "last", st->last ? json_object_get(st->last) : NULL);
	return o;
}
