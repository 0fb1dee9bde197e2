/* SPDX-License-Identifier: MIT */
/* E2B engine: create, connect (resume), set_timeout, pause and kill over the control plane. */
#define _GNU_SOURCE
#include "e2b.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

void e2b_info_release(const struct tbx_host_api *host, struct tbx_sandbox_info *info)
{
	host->free(info->id);
	host->free(info->workdir);
	for (char **l = info->labels; l && *l; l++)
		host->free(*l);
	host->free(info->labels);
	info->id = info->workdir = NULL;
	info->labels = NULL;
}

static int e2b_check_id(struct tbx_e2b *e, struct tbx_call *call, const char *id)
{
	if (!e2b_id_valid(id))
		return e->host->error_set(call, TBX_EINVAL, "'%s' is not an E2B sandbox id",
					  id ? id : "(null)");
	return 0;
}

static int e2b_gone(struct tbx_e2b *e, struct tbx_call *call, const char *id)
{
	e2b_cache_drop(e, id);
	return e->host->error_set(call, TBX_EGONE, "sandbox %s no longer exists on E2B", id);
}

/*
 * One control-plane call about sandbox id: checks the id, builds
 * <prefix>/sandboxes/<id><suffix> and sends body (NULL for none).
 */
static int e2b_sandbox_api(struct tbx_e2b *e, struct tbx_call *call, const char *id,
			   const char *what, const char *method, const char *prefix,
			   const char *suffix, struct json_object *body, struct e2b_answer *out)
{
	char path[E2B_ID_MAX + 64];
	int ret;

	if ((ret = e2b_check_id(e, call, id)) < 0)
		return ret;
	snprintf(path, sizeof(path), "%s/sandboxes/%s%s", prefix, id, suffix);
	return e2b_api(e, call, what, method, path, body, 1, out);
}

int e2b_sandbox_get(struct tbx_e2b *e, struct tbx_call *call, const char *id,
		    struct json_object **detail_out)
{
	struct e2b_answer a;
	int ret;

	*detail_out = NULL;
	if ((ret = e2b_sandbox_api(e, call, id, "get sandbox", "GET", "", "", NULL, &a)) < 0)
		return ret;
	if (e2b_answer_not_found(&a))
		ret = e2b_gone(e, call, id);
	else if (a.status != 200)
		ret = e2b_api_fail(e, call, "get sandbox", &a);
	else if (!json_object_is_type(a.json, json_type_object))
		ret = e->host->error_set(call, TBX_EPROTO, "get sandbox: the E2B API answered "
					 "without a sandbox object");
	else {
		*detail_out = json_object_get(a.json);
		ret = 0;
	}
	e2b_answer_release(&a);
	return ret;
}

/* The sandboxID of a Sandbox answer, checked, or NULL. */
static const char *e2b_answer_id(const struct e2b_answer *a)
{
	struct json_object *v;

	if (!json_object_is_type(a->json, json_type_object) ||
	    !json_object_object_get_ex(a->json, "sandboxID", &v) ||
	    !json_object_is_type(v, json_type_string) || !e2b_id_valid(json_object_get_string(v)))
		return NULL;
	return json_object_get_string(v);
}

static int e2b_info_fill(struct tbx_e2b *e, const char *id, const char *const *labels,
			 struct tbx_sandbox_info *out)
{
	size_t n = 0;

	out->id = e->host->strdup(id);
	out->workdir = e->host->strdup(E2B_WORKDIR);
	out->state = TBX_SANDBOX_RUNNING;
	out->labels = NULL;
	while (labels && labels[n])
		n++;
	if (n && (out->labels = e->host->alloc((n + 1) * sizeof(char *)))) {
		memset(out->labels, 0, (n + 1) * sizeof(char *));
		for (size_t i = 0; i < n; i++)
			if (!(out->labels[i] = e->host->strdup(labels[i])))
				goto oom;
	}
	if (!out->id || !out->workdir || (n && !out->labels))
		goto oom;
	return 0;
oom:
	e2b_info_release(e->host, out);
	return -1;
}

/* POST /v2/sandboxes/{id}/connect: resume or extend; caches the envd token. */
static int e2b_connect_raw(struct tbx_e2b *e, struct tbx_call *call, const char *id,
			   uint32_t timeout_s, int *resumed)
{
	struct json_object *body = json_object_new_object();
	struct e2b_answer a;
	int ret;

	if (!body)
		return e->host->error_set(call, TBX_ENOMEM, "out of memory");
	if (timeout_s)
		json_object_object_add(body, "timeout", json_object_new_int64(timeout_s));
	ret = e2b_sandbox_api(e, call, id, "connect to sandbox", "POST", "/v2", "/connect", body,
			      &a);
	json_object_put(body);
	if (ret < 0)
		return ret;
	if (e2b_answer_not_found(&a))
		ret = e2b_gone(e, call, id);
	else if (a.status != 200 && a.status != 201)
		ret = e2b_api_fail(e, call, "connect to sandbox", &a);
	else if (!e2b_answer_id(&a))
		ret = e->host->error_set(call, TBX_EPROTO, "connect to sandbox: the E2B API "
					 "answered without a valid sandboxID");
	else if (e2b_cache_put(e, id, a.json) < 0)
		ret = e->host->error_set(call, TBX_ENOMEM, "out of memory");
	if (ret == 0 && resumed)
		*resumed = a.status == 201;
	e2b_answer_release(&a);
	return ret;
}

int e2b_sandbox_resume(struct tbx_e2b *e, struct tbx_call *call, const char *id)
{
	int resumed = 0, ret = e2b_connect_raw(e, call, id, e->timeout_s, &resumed);

	if (ret == 0 && resumed)
		e->host->log(call, TBX_LOG_INFO, "sandbox %s was paused; resumed it", id);
	return ret;
}

int e2b_sandbox_connect(void *inst, struct tbx_call *call, const char *id, uint32_t timeout_s,
			struct tbx_sandbox_info *out)
{
	struct tbx_e2b *e = inst;
	int resumed = 0, ret;

	if ((ret = e2b_check_id(e, call, id)) < 0)
		return ret;
	if ((ret = e2b_connect_raw(e, call, id, timeout_s, &resumed)) < 0)
		return ret;
	if (resumed)
		e->host->log(call, TBX_LOG_INFO, "sandbox %s resumed", id);
	if (e2b_info_fill(e, id, NULL, out) < 0)
		return e->host->error_set(call, TBX_ENOMEM, "out of memory");
	return 0;
}

/* A sandbox the create request made although its answer was lost, by its nonce. */
static int e2b_find_created(struct tbx_e2b *e, struct tbx_call *call, const char *nonce,
			    char *id_out, size_t id_size)
{
	char label[64];
	const char *labels[] = { label, NULL };
	struct tbx_sandbox_info *arr = NULL;
	size_t n = 0;
	int ret;

	snprintf(label, sizeof(label), "twinbox.create=%s", nonce);
	if ((ret = e2b_sandbox_list(e, call, labels, &arr, &n)) < 0)
		return ret;
	ret = 0;
	if (n && arr[0].id) {
		snprintf(id_out, id_size, "%s", arr[0].id);
		ret = 1;
	}
	for (size_t i = 0; i < n; i++)
		e2b_info_release(e->host, &arr[i]);
	e->host->free(arr);
	return ret;
}

/* The envd agent of a new sandbox answers: make the project directory. */
static int e2b_make_workdir(struct tbx_e2b *e, struct tbx_call *call, const char *id)
{
	int ret = e2b_file_mkdir(e, call, id, E2B_WORKDIR);

	return ret == TBX_EEXIST ? 0 : ret;
}

int e2b_sandbox_create(void *inst, struct tbx_call *call, const struct tbx_sandbox_spec *spec,
		       struct tbx_sandbox_info *out)
{
	struct tbx_e2b *e = inst;
	unsigned char rnd[8];
	char nonce[17], id[E2B_ID_MAX + 1] = "";
	struct json_object *body;
	struct e2b_answer a = { 0 };
	int ret = 0;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return e->host->error_set(call, TBX_EIO, "create sandbox: no randomness");
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(nonce + 2 * i, 3, "%02x", rnd[i]);
	if (!(body = e2b_spec_body(e, call, spec, nonce, &ret)))
		return ret;
	/*
	 * Resets are not retried blindly, since a create that arrived would
	 * leave a sandbox nobody knows: look for it by its nonce first.
	 */
	for (unsigned attempt = 0;; attempt++) {
		int found;

		ret = e2b_api(e, call, "create sandbox", "POST", "/v2/sandboxes", body, 0, &a);
		if (ret == 0 || (ret != TBX_EIO && ret != TBX_ETIMEDOUT) || attempt == 2)
			break;
		e->host->log(call, TBX_LOG_INFO, "create sandbox: the answer was lost; looking for "
			     "the sandbox it may have made");
		if ((found = e2b_find_created(e, call, nonce, id, sizeof(id))) != 0) {
			ret = found < 0 ? found : e2b_connect_raw(e, call, id, 0, NULL);
			break;
		}
	}
	json_object_put(body);
	if (ret < 0)
		return ret;
	if (!id[0]) {
		const char *aid;

		if (a.status != 201 && a.status != 200) {
			ret = e2b_api_fail(e, call, "create sandbox", &a);
			e2b_answer_release(&a);
			return ret;
		}
		if (!(aid = e2b_answer_id(&a))) {
			e2b_answer_release(&a);
			return e->host->error_set(call, TBX_EPROTO, "create sandbox: the E2B API "
						  "answered without a valid sandboxID");
		}
		snprintf(id, sizeof(id), "%s", aid);
		if (e2b_cache_put(e, id, a.json) < 0) {
			e2b_answer_release(&a);
			ret = e->host->error_set(call, TBX_ENOMEM, "out of memory");
			goto kill;
		}
		e2b_answer_release(&a);
	}
	if ((ret = e2b_make_workdir(e, call, id)) < 0)
		goto kill;
	if (e2b_info_fill(e, id, spec->labels, out) < 0) {
		ret = e->host->error_set(call, TBX_ENOMEM, "out of memory");
		goto kill;
	}
	e->host->log(call, TBX_LOG_INFO, "sandbox %s created from template %s", id,
		     spec->template_id && *spec->template_id ? spec->template_id : e->template_id);
	return 0;
kill:
	/* A sandbox the caller never hears of would bill until its timeout. */
	{
		char path[E2B_ID_MAX + 32];
		struct e2b_answer k;

		snprintf(path, sizeof(path), "/sandboxes/%s", id);
		/* No call: a cancelled create must still clean up, and keep its own error. */
		if (e2b_api(e, NULL, "kill sandbox", "DELETE", path, NULL, 1, &k) == 0)
			e2b_answer_release(&k);
		else
			e->host->log(call, TBX_LOG_WARN, "sandbox %s could not be killed after a failed "
				     "create; E2B ends it at its timeout", id);
		e2b_cache_drop(e, id);
	}
	return ret;
}

int e2b_sandbox_set_timeout(void *inst, struct tbx_call *call, const char *id,
			    uint32_t timeout_s)
{
	struct tbx_e2b *e = inst;
	struct json_object *body;
	struct e2b_answer a;
	int ret;

	if (!timeout_s)
		return e->host->error_set(call, TBX_EINVAL, "set timeout: E2B needs at least 1 second");
	if (!(body = json_object_new_object()))
		return e->host->error_set(call, TBX_ENOMEM, "out of memory");
	json_object_object_add(body, "timeout", json_object_new_int64(timeout_s));
	ret = e2b_sandbox_api(e, call, id, "set timeout", "POST", "", "/timeout", body, &a);
	json_object_put(body);
	if (ret < 0)
		return ret;
	if (e2b_answer_not_found(&a))
		ret = e2b_gone(e, call, id);
	else if (a.status < 200 || a.status >= 300)
		ret = e2b_api_fail(e, call, "set timeout", &a);
	e2b_answer_release(&a);
	return ret;
}

int e2b_sandbox_pause(void *inst, struct tbx_call *call, const char *id)
{
	struct tbx_e2b *e = inst;
	struct json_object *body;
	struct e2b_answer a;
	int ret;

	if (!(body = json_object_new_object()))
		return e->host->error_set(call, TBX_ENOMEM, "out of memory");
	ret = e2b_sandbox_api(e, call, id, "pause sandbox", "POST", "", "/pause", body, &a);
	json_object_put(body);
	if (ret < 0)
		return ret;
	if (e2b_answer_not_found(&a)) {
		ret = e2b_gone(e, call, id);
	} else if (a.status == 409 && a.code == 409) {
		/* After a lost answer, "already paused" may be our own first try. */
		ret = a.reset_retried ? 0
				      : e->host->error_set(call, TBX_EPAUSED,
							   "sandbox %s is already paused", id);
	} else if (a.status < 200 || a.status >= 300) {
		ret = e2b_api_fail(e, call, "pause sandbox", &a);
	} else {
		e->host->log(call, TBX_LOG_INFO, "sandbox %s paused", id);
	}
	e2b_answer_release(&a);
	return ret;
}

int e2b_sandbox_kill(void *inst, struct tbx_call *call, const char *id)
{
	struct tbx_e2b *e = inst;
	struct e2b_answer a;
	int ret;

	if ((ret = e2b_sandbox_api(e, call, id, "kill sandbox", "DELETE", "", "", NULL, &a)) < 0)
		return ret;
	if (e2b_answer_not_found(&a))
		ret = a.reset_retried ? 0
				      : e->host->error_set(call, TBX_ENOENT, "no E2B sandbox %s", id);
	else if (a.status < 200 || a.status >= 300)
		ret = e2b_api_fail(e, call, "kill sandbox", &a);
	e2b_answer_release(&a);
	e2b_cache_drop(e, id);
	if (ret == 0)
		e->host->log(call, TBX_LOG_INFO, "sandbox %s killed", id);
	return ret;
}
