/* SPDX-License-Identifier: MIT */
/*
 * Runs tests/tools/cases.json through tbx_tool_call() on the fake backend:
 * one sandbox, its project directory emptied before each case. Prints TAP.
 * The case format is documented in docs/tools.md; the same file is meant for
 * the daemon-level runner, so nothing here is specific to the fake engine.
 */
#define _GNU_SOURCE
#define PCRE2_CODE_UNIT_WIDTH 8
#include <dlfcn.h>
#include <json-c/json.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "call.h"
#include "engine.h"
#include "error.h"
#include "module.h"
#include "tools.h"
#include "tools-priv.h"

/* A local worktree path that exists nowhere: only its mapping matters. */
#define LOCAL_ROOT "/home/dev/myproject"

struct runner {
	struct tbx_engine *engine;
	char *sandbox_id;
	char *workdir;
	atomic_int cancel;
	struct tbx_buf progress;
	struct tbx_buf why; /* failure notes of the current case */
	int failed;
};

static void note(struct runner *r, const char *fmt, ...) TBX_PRINTF(2, 3);

static void note(struct runner *r, const char *fmt, ...)
{
	char line[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	tbx_buf_printf(&r->why, "# %s\n", line);
	r->failed = 1;
}

/* s with $WORKDIR and $LOCAL replaced. */
static char *subst(const struct runner *r, const char *s)
{
	struct tbx_buf b;

	tbx_buf_init(&b);
	while (*s) {
		if (strncmp(s, "$WORKDIR", 8) == 0) {
			tbx_buf_adds(&b, r->workdir);
			s += 8;
		} else if (strncmp(s, "$LOCAL", 6) == 0) {
			tbx_buf_adds(&b, LOCAL_ROOT);
			s += 6;
		} else {
			tbx_buf_add(&b, s++, 1);
		}
	}
	return tbx_buf_steal(&b);
}

/* A deep copy of v with every string substituted. */
static struct json_object *subst_json(const struct runner *r, struct json_object *v)
{
	struct json_object *o;

	switch (json_object_get_type(v)) {
	case json_type_string: {
		char *s;

		/* Strings with NUL bytes (binary fixtures) are copied as they are. */
		if (strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
			return json_object_new_string_len(json_object_get_string(v),
							  json_object_get_string_len(v));
		s = subst(r, json_object_get_string(v));
		o = json_object_new_string(s);
		free(s);
		return o;
	}
	case json_type_object:
		o = json_object_new_object();
		json_object_object_foreach(v, key, val)
			json_object_object_add(o, key, subst_json(r, val));
		return o;
	case json_type_array:
		o = json_object_new_array();
		for (size_t i = 0; i < json_object_array_length(v); i++)
			json_object_array_add(o, subst_json(r, json_object_array_get_idx(v, i)));
		return o;
	default:
		return json_object_get(v);
	}
}

static char *abs_path(const struct runner *r, const char *p)
{
	return p[0] == '/' ? strdup(p) : tbx_path_join(r->workdir, p);
}

static void on_progress(void *payload, const char *stream, const char *data, size_t len)
{
	struct runner *r = payload;

	(void)stream;
	tbx_buf_add(&r->progress, data, len);
}

static struct tbx_tool_ctx make_ctx(struct runner *r)
{
	struct tbx_tool_ctx ctx = {
		.engine = r->engine,
		.sandbox_id = r->sandbox_id,
		.workdir = r->workdir,
		.local_root = LOCAL_ROOT,
		.cancel = &r->cancel,
		.on_progress = on_progress,
		.payload = r,
	};
	return ctx;
}

static int clean_workdir(struct runner *r)
{
	struct tbx_file_info *infos = NULL;
	size_t n = 0;
	int rc = tbx_engine_file_list(r->engine, NULL, r->sandbox_id, r->workdir, 1, &infos, &n);

	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = tbx_engine_file_remove(r->engine, NULL, r->sandbox_id, infos[i].path);
	tbx_file_infos_free(infos, n);
	return rc;
}

static int run_setup(struct runner *r, struct json_object *setup)
{
	for (size_t i = 0; setup && i < json_object_array_length(setup); i++) {
		struct json_object *s = json_object_array_get_idx(setup, i), *v;

		if (json_object_object_get_ex(s, "tool", &v)) {
			struct tbx_tool_ctx ctx = make_ctx(r);
			struct json_object *args = NULL, *res = NULL;
			int rc;

			json_object_object_get_ex(s, "args", &args);
			rc = tbx_tool_call(&ctx, json_object_get_string(v), args, &res);
			json_object_put(res);
			if (rc < 0) {
				note(r, "setup %zu (%s) failed: %s", i, json_object_get_string(v),
				     tbx_error_message());
				return -1;
			}
		} else if (json_object_object_get_ex(s, "file", &v)) {
			struct json_object *c = NULL, *rep = NULL;
			char *path = abs_path(r, json_object_get_string(v));
			int times = 1, rc;
			struct tbx_buf b;

			json_object_object_get_ex(s, "content", &c);
			if (json_object_object_get_ex(s, "repeat", &rep))
				times = json_object_get_int(rep);
			tbx_buf_init(&b);
			for (int k = 0; c && k < times; k++)
				tbx_buf_add(&b, json_object_get_string(c),
					    (size_t)json_object_get_string_len(c));
			rc = tbx_engine_file_write(r->engine, NULL, r->sandbox_id, path,
						   b.data ? b.data : "", b.len);
			tbx_buf_free(&b);
			free(path);
			if (rc < 0) {
				note(r, "setup %zu: %s", i, tbx_error_message());
				return -1;
			}
		} else if (json_object_object_get_ex(s, "dir", &v)) {
			char *path = abs_path(r, json_object_get_string(v));
			int rc = tbx_engine_file_mkdir(r->engine, NULL, r->sandbox_id, path);

			free(path);
			if (rc < 0 && rc != TBX_EEXIST) {
				note(r, "setup %zu: %s", i, tbx_error_message());
				return -1;
			}
		} else if (json_object_object_get_ex(s, "sleep_ms", &v)) {
			usleep((useconds_t)json_object_get_int(v) * 1000);
		} else {
			note(r, "setup %zu: unknown step %s", i, json_object_to_json_string(s));
			return -1;
		}
	}
	return 0;
}

/* An expectation that is one string or an array of strings. */
static size_t str_count(struct json_object *v)
{
	return json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
}

static const char *str_at(struct json_object *v, size_t i)
{
	const char *s = json_object_get_string(
		json_object_is_type(v, json_type_array) ? json_object_array_get_idx(v, i) : v);
	return s ? s : "";
}

static bool regex_search(const char *pattern, const char *text)
{
	PCRE2_SIZE off;
	int err, rc;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
				       PCRE2_DOTALL | PCRE2_MULTILINE | PCRE2_UTF, &err, &off, NULL);
	pcre2_match_data *md;

	if (!re)
		return false;
	md = pcre2_match_data_create_from_pattern(re, NULL);
	rc = pcre2_match(re, (PCRE2_SPTR)text, strlen(text), 0, 0, md, NULL);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return rc >= 0;
}

/* Is every member of want (recursively) in have with the same value? */
static bool json_subset(struct json_object *want, struct json_object *have)
{
	if (json_object_is_type(want, json_type_object)) {
		if (!json_object_is_type(have, json_type_object))
			return false;
		json_object_object_foreach(want, key, val)
		{
			struct json_object *h = NULL;
			if (!json_object_object_get_ex(have, key, &h))
				return false;
			if (!json_subset(val, h))
				return false;
		}
		return true;
	}
	if (json_object_is_type(want, json_type_array)) {
		if (!json_object_is_type(have, json_type_array) ||
		    json_object_array_length(want) != json_object_array_length(have))
			return false;
		for (size_t i = 0; i < json_object_array_length(want); i++)
			if (!json_subset(json_object_array_get_idx(want, i),
					 json_object_array_get_idx(have, i)))
				return false;
		return true;
	}
	return json_object_equal(want, have);
}

static void check_file_after(struct runner *r, struct json_object *fa)
{
	struct json_object *p = NULL, *c = NULL, *absent = NULL, *contains = NULL;
	char *path, *data = NULL;
	size_t len = 0;
	int rc;

	json_object_object_get_ex(fa, "path", &p);
	json_object_object_get_ex(fa, "content", &c);
	json_object_object_get_ex(fa, "absent", &absent);
	json_object_object_get_ex(fa, "contains", &contains);
	path = abs_path(r, json_object_get_string(p));
	rc = tbx_engine_file_read(r->engine, NULL, r->sandbox_id, path, &data, &len);
	if (absent && json_object_get_boolean(absent)) {
		if (rc == 0)
			note(r, "file_after: %s exists but should not", path);
	} else if (rc < 0) {
		note(r, "file_after: cannot read %s: %s", path, tbx_error_message());
	} else if (c && ((size_t)json_object_get_string_len(c) != len ||
			 memcmp(json_object_get_string(c), data, len) != 0)) {
		struct json_object *got = tbx_json_text(data, len);
		note(r, "file_after: %s is %s", path, json_object_to_json_string(got));
		json_object_put(got);
	} else if (contains && !strstr(data, json_object_get_string(contains))) {
		note(r, "file_after: %s lacks %s", path, json_object_get_string(contains));
	}
	free(data);
	free(path);
}

struct canceller {
	atomic_int *flag;
	int after_ms;
};

static void *cancel_later(void *arg)
{
	struct canceller *c = arg;

	usleep((useconds_t)c->after_ms * 1000);
	atomic_store(c->flag, 1);
	return NULL;
}

static void check_result(struct runner *r, struct json_object *expect, int rc,
			 struct json_object *res)
{
	struct json_object *v;
	const char *output = "", *title = "";
	bool want_ok = true;

	if (json_object_object_get_ex(expect, "ok", &v))
		want_ok = json_object_get_boolean(v);
	if (res) {
		struct json_object *o;
		if (json_object_object_get_ex(res, "output", &o))
			output = json_object_get_string(o);
		if (json_object_object_get_ex(res, "title", &o))
			title = json_object_get_string(o);
	}
	if (want_ok && rc < 0) {
		note(r, "failed with %s: %s", tbx_status_name(rc), tbx_error_message());
		return;
	}
	if (!want_ok && rc == 0) {
		note(r, "succeeded but should have failed; output: %s", output);
		return;
	}
	if (want_ok && (!res || !json_object_object_get_ex(res, "metadata", &v)))
		note(r, "result lacks title/output/metadata");
	if (json_object_object_get_ex(expect, "output_equals", &v) &&
	    strcmp(output, json_object_get_string(v)) != 0)
		note(r, "output is\n%s\n# expected\n%s", output, json_object_get_string(v));
	if (json_object_object_get_ex(expect, "output_contains", &v))
		for (size_t i = 0; i < str_count(v); i++)
			if (!strstr(output, str_at(v, i)))
				note(r, "output lacks '%s'; output is\n%s", str_at(v, i), output);
	if (json_object_object_get_ex(expect, "output_not_contains", &v))
		for (size_t i = 0; i < str_count(v); i++)
			if (strstr(output, str_at(v, i)))
				note(r, "output has '%s'; output is\n%s", str_at(v, i), output);
	if (json_object_object_get_ex(expect, "output_regex", &v) &&
	    !regex_search(json_object_get_string(v), output))
		note(r, "output does not match /%s/; output is\n%s", json_object_get_string(v), output);
	if (json_object_object_get_ex(expect, "title_equals", &v) &&
	    strcmp(title, json_object_get_string(v)) != 0)
		note(r, "title is '%s', expected '%s'", title, json_object_get_string(v));
	if (json_object_object_get_ex(expect, "metadata", &v)) {
		struct json_object *m = NULL;
		if (!res || !json_object_object_get_ex(res, "metadata", &m) || !json_subset(v, m))
			note(r, "metadata %s does not contain %s",
			     m ? json_object_to_json_string(m) : "(none)", json_object_to_json_string(v));
	}
	if (json_object_object_get_ex(expect, "metadata_contains", &v)) {
		struct json_object *m = NULL, *field;
		if (res)
			json_object_object_get_ex(res, "metadata", &m);
		json_object_object_foreach(v, key, want)
		{
			const char *text = m && json_object_object_get_ex(m, key, &field)
						   ? json_object_get_string(field)
						   : "";
			for (size_t i = 0; i < str_count(want); i++)
				if (!strstr(text ? text : "", str_at(want, i)))
					note(r, "metadata.%s lacks '%s'; it is\n%s", key, str_at(want, i),
					     text ? text : "");
		}
	}
	if (json_object_object_get_ex(expect, "error_contains", &v))
		for (size_t i = 0; i < str_count(v); i++)
			if (!strstr(tbx_error_message(), str_at(v, i)))
				note(r, "error '%s' lacks '%s'", tbx_error_message(), str_at(v, i));
	if (json_object_object_get_ex(expect, "error_equals", &v) &&
	    strcmp(tbx_error_message(), json_object_get_string(v)) != 0)
		note(r, "error is '%s', expected '%s'", tbx_error_message(), json_object_get_string(v));
	if (json_object_object_get_ex(expect, "error_status", &v) &&
	    strcmp(tbx_status_name(rc), json_object_get_string(v)) != 0)
		note(r, "status is %s, expected %s", tbx_status_name(rc), json_object_get_string(v));
	if (json_object_object_get_ex(expect, "progress_contains", &v) &&
	    !(r->progress.data && strstr(r->progress.data, json_object_get_string(v))))
		note(r, "progress lacks '%s'", json_object_get_string(v));
	/* bash saves long output in the sandbox: check it is whole, then tidy up. */
	if (res && json_object_object_get_ex(res, "metadata", &v) &&
	    json_object_object_get_ex(v, "outputPath", &v)) {
		const char *saved_path = json_object_get_string(v);
		struct json_object *want = NULL;
		char *data = NULL;
		size_t len = 0;

		if (tbx_engine_file_read(r->engine, NULL, r->sandbox_id, saved_path, &data, &len) < 0)
			note(r, "outputPath %s cannot be read: %s", saved_path, tbx_error_message());
		else if (json_object_object_get_ex(expect, "saved_output_contains", &want))
			for (size_t i = 0; i < str_count(want); i++)
				if (!memmem(data, len, str_at(want, i), strlen(str_at(want, i))))
					note(r, "saved output lacks '%s'", str_at(want, i));
		free(data);
		tbx_engine_file_remove(r->engine, NULL, r->sandbox_id, saved_path);
	}
	if (json_object_object_get_ex(expect, "file_after", &v)) {
		if (json_object_is_type(v, json_type_array))
			for (size_t i = 0; i < json_object_array_length(v); i++)
				check_file_after(r, json_object_array_get_idx(v, i));
		else
			check_file_after(r, v);
	}
}

static void run_case(struct runner *r, struct json_object *raw, int num)
{
	struct json_object *c = subst_json(r, raw), *v, *args = NULL, *expect = NULL, *res = NULL;
	const char *name = "?", *tool = "";
	struct tbx_tool_ctx ctx = make_ctx(r);
	struct canceller canc = {.flag = &r->cancel};
	pthread_t th;
	bool threaded = false;
	int rc;

	r->failed = 0;
	tbx_buf_free(&r->why);
	tbx_buf_free(&r->progress);
	atomic_store(&r->cancel, 0);
	if (json_object_object_get_ex(c, "name", &v))
		name = json_object_get_string(v);
	if (json_object_object_get_ex(c, "tool", &v))
		tool = json_object_get_string(v);
	json_object_object_get_ex(c, "args", &args);
	json_object_object_get_ex(c, "expect", &expect);
	if (clean_workdir(r) < 0)
		note(r, "cannot empty the workdir: %s", tbx_error_message());
	json_object_object_get_ex(c, "setup", &v);
	if (!r->failed && run_setup(r, v) == 0) {
		if (json_object_object_get_ex(c, "cancel_after_ms", &v)) {
			canc.after_ms = json_object_get_int(v);
			threaded = pthread_create(&th, NULL, cancel_later, &canc) == 0;
		}
		rc = tbx_tool_call(&ctx, tool, args, &res);
		if (threaded)
			pthread_join(th, NULL);
		check_result(r, expect, rc, res);
	}
	printf("%s %d - %s\n", r->failed ? "not ok" : "ok", num, name);
	if (r->failed && r->why.data)
		fputs(r->why.data, stdout);
	/* TBX_CASE_SHOW=1 prints every result, to see what a case produced. */
	if (getenv("TBX_CASE_SHOW"))
		printf("# %s\n", res ? json_object_to_json_string_ext(res, JSON_C_TO_STRING_PRETTY |
								     JSON_C_TO_STRING_NOSLASHESCAPE)
				    : tbx_error_message());
	fflush(stdout);
	json_object_put(res);
	json_object_put(c);
}

/* Checks that are about the tool table rather than one call. */
static int table_checks(struct runner *r, int num)
{
	const struct tbx_tool_desc *const *all = tbx_tools_all();
	size_t n = 0;
	char *url = NULL;
	int rc;

	r->failed = 0;
	tbx_buf_free(&r->why);
	for (; all[n]; n++) {
		struct json_object *s = json_tokener_parse(all[n]->parameters_json);
		if (!s || !all[n]->description || !*all[n]->description)
			note(r, "%s: bad schema or description", all[n]->name);
		json_object_put(s);
		if (tbx_tool_find(all[n]->name) != all[n])
			note(r, "tbx_tool_find(%s) does not find it", all[n]->name);
	}
	if (n != 9)
		note(r, "%zu tools, expected 9", n);
	printf("%s %d - every tool has a parsable schema and a description\n",
	       r->failed ? "not ok" : "ok", num);
	if (r->failed && r->why.data)
		fputs(r->why.data, stdout);
	r->failed = 0;
	tbx_buf_free(&r->why);
	rc = tbx_engine_preview_url(r->engine, NULL, r->sandbox_id, 8080, &url);
	if (rc != TBX_ENOTSUP)
		note(r, "preview_url gave %s, expected TBX_ENOTSUP", tbx_status_name(rc));
	free(url);
	printf("%s %d - a NULL backend op is TBX_ENOTSUP\n", r->failed ? "not ok" : "ok", num + 1);
	if (r->failed && r->why.data)
		fputs(r->why.data, stdout);
	return 2;
}

int main(int argc, char **argv)
{
	char data_root[] = "/tmp/tbx-tools-test-XXXXXX";
	struct tbx_sandbox_spec spec = TBX_SANDBOX_SPEC_INIT;
	struct tbx_sandbox_info info;
	struct runner r = {0};
	struct tbx_module mod = {0};
	const struct tbx_plugin_desc *(*entry)(const struct tbx_host_api *);
	struct json_object *cases;
	const char *only = getenv("TBX_CASE");
	void *so;
	int num = 0, any_failed = 0;
	char *cmd;

	if (argc < 3) {
		fprintf(stderr, "usage: %s FAKE_BACKEND.so CASES.json\n", argv[0]);
		return 2;
	}
	if (!mkdtemp(data_root)) {
		perror("mkdtemp");
		return 1;
	}
	so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	entry = so ? (const struct tbx_plugin_desc *(*)(const struct tbx_host_api *))dlsym(
			     so, TBX_PLUGIN_ENTRY_SYMBOL)
		   : NULL;
	if (!entry) {
		fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
		return 1;
	}
	mod.path = argv[1];
	mod.desc = entry(tbx_host_api_get());
	mod.data_root = data_root;
	mod.data_dir = data_root;
	mod.state_dir = data_root;
	tbx_sandbox_info_init(&info);
	if (!mod.desc || tbx_engine_open(&mod, &r.engine) < 0 ||
	    tbx_engine_sandbox_create(r.engine, NULL, &spec, &info) < 0) {
		fprintf(stderr, "cannot start the fake engine: %s\n", tbx_error_message());
		return 1;
	}
	r.sandbox_id = info.id;
	r.workdir = info.workdir;
	cases = json_object_from_file(argv[2]);
	if (!json_object_is_type(cases, json_type_array)) {
		fprintf(stderr, "cannot parse %s: %s\n", argv[2], json_util_get_last_err());
		return 1;
	}
	printf("TAP version 13\n");
	for (size_t i = 0; i < json_object_array_length(cases); i++) {
		struct json_object *c = json_object_array_get_idx(cases, i), *name;

		if (only && (!json_object_object_get_ex(c, "name", &name) ||
			     !strstr(json_object_get_string(name), only)))
			continue;
		run_case(&r, c, ++num);
		any_failed |= r.failed;
	}
	num += table_checks(&r, num + 1);
	any_failed |= r.failed;
	printf("1..%d\n", num);
	tbx_engine_sandbox_kill(r.engine, NULL, r.sandbox_id);
	tbx_sandbox_info_clear(&info);
	tbx_engine_free(r.engine);
	json_object_put(cases);
	tbx_buf_free(&r.progress);
	tbx_buf_free(&r.why);
	if (asprintf(&cmd, "rm -rf '%s'", data_root) > 0) {
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", data_root);
		free(cmd);
	}
	return any_failed ? 1 : 0;
}
