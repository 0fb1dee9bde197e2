/* SPDX-License-Identifier: MIT */
/* Local engine: exec and file ops, forwarded to the sandbox's agent. */
#include "local.h"

/*
 * Run \p expr with an envd client for sandbox \p id. A transport failure
 * because the sandbox was killed meanwhile is reported as TBX_EGONE.
 */
#define LOCAL_WITH_CLIENT(l, call, id, c, expr)                                   \
	do {                                                                      \
		struct tbx_envd_client *c;                                        \
		int ret_ = local_sandbox_client((l), (call), (id), &c);            \
		if (ret_ < 0)                                                     \
			return ret_;                                              \
		ret_ = (expr);                                                    \
		tbx_envd_client_free(c);                                          \
		if (ret_ == TBX_EIO || ret_ == TBX_EUNAVAIL || ret_ == TBX_EPROTO) \
			ret_ = local_gone_check((l), (call), (id), ret_);         \
		return ret_;                                                      \
	} while (0)

static int local_gone_check(struct tbx_local *l, struct tbx_call *call, const char *id, int ret)
{
	struct local_sbx s;
	int lock, gone;

	if (local_sbx_init(l, call, id, &s) < 0)
		return ret;
	/* A kill holds the lock until the directory is gone: wait for it. */
	lock = local_sbx_lock(&s);
	gone = lock < 0 || !local_sbx_exists(&s);
	local_sbx_unlock(lock);
	if (gone)
		return l->host->error_set(call, TBX_EGONE, "sandbox %s no longer exists", id);
	return ret;
}

int local_exec(void *inst, struct tbx_call *call, const char *id,
	       const struct tbx_exec_request *request, tbx_exec_output_cb on_output, void *payload,
	       struct tbx_exec_result *out)
{
	static const char *const shell_args[] = { "-l", "-c", NULL, NULL };
	struct tbx_local *l = inst;
	const char *args[4] = { shell_args[0], shell_args[1], NULL, NULL };
	struct tbx_envd_process p = { .cmd = "/bin/bash", .args = args };

	if (!request || !request->command)
		return l->host->error_set(call, TBX_EINVAL, "exec: no command given");
	/* The same shape E2B's SDK sends, so the agent and envd agree. */
	args[2] = request->command;
	p.cwd = request->cwd;
	p.env = request->env;
	p.timeout_ms = request->timeout_ms;
	LOCAL_WITH_CLIENT(l, call, id, c,
			  tbx_envd_process_start(c, call, &p, on_output, payload, out));
}

int local_file_read(void *inst, struct tbx_call *call, const char *id, const char *path,
		    char **data_out, size_t *len_out)
{
	LOCAL_WITH_CLIENT((struct tbx_local *)inst, call, id, c,
			  tbx_envd_file_read(c, call, path, data_out, len_out));
}

int local_file_write(void *inst, struct tbx_call *call, const char *id, const char *path,
		     const char *data, size_t len)
{
	LOCAL_WITH_CLIENT((struct tbx_local *)inst, call, id, c,
			  tbx_envd_file_write(c, call, path, data, len));
}

int local_file_stat(void *inst, struct tbx_call *call, const char *id, const char *path,
		    struct tbx_file_info *out)
{
	LOCAL_WITH_CLIENT((struct tbx_local *)inst, call, id, c,
			  tbx_envd_fs_stat(c, call, path, out));
}

int local_file_list(void *inst, struct tbx_call *call, const char *id, const char *path,
		    uint32_t depth, struct tbx_file_info **out, size_t *n_out)
{
	LOCAL_WITH_CLIENT((struct tbx_local *)inst, call, id, c,
			  tbx_envd_fs_list(c, call, path, depth, out, n_out));
}

int local_file_mkdir(void *inst, struct tbx_call *call, const char *id, const char *path)
{
	LOCAL_WITH_CLIENT((struct tbx_local *)inst, call, id, c,
			  tbx_envd_fs_mkdir(c, call, path));
}

int local_file_remove(void *inst, struct tbx_call *call, const char *id, const char *path)
{
	LOCAL_WITH_CLIENT((struct tbx_local *)inst, call, id, c,
			  tbx_envd_fs_remove(c, call, path));
}

int local_file_rename(void *inst, struct tbx_call *call, const char *id, const char *from,
		      const char *to)
{
	LOCAL_WITH_CLIENT((struct tbx_local *)inst, call, id, c,
			  tbx_envd_fs_move(c, call, from, to));
}
