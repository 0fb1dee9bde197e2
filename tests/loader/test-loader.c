/* SPDX-License-Identifier: MIT */
/* Drives the real module loader over good and broken fixture modules, and engines over NULL/short ops (TAP). */
#define _XOPEN_SOURCE 700 /* nftw() */
#include <ftw.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "engine.h"
#include "error.h"
#include "module.h"

static int n_tests, n_failed;

static void ok(int cond, const char *fmt, ...) TBX_PRINTF(2, 3);

static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++n_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		n_failed++;
	fflush(stdout);
}

static int ends_with(const char *s, const char *tail)
{
	size_t ls = strlen(s), lt = strlen(tail);

	return ls >= lt && strcmp(s + ls - lt, tail) == 0 && (ls == lt || s[ls - lt - 1] == '/');
}

static const struct tbx_module_refusal *refusal_for(const struct tbx_registry *reg,
						    const char *file)
{
	for (size_t i = 0; i < reg->n_refused; i++)
		if (ends_with(reg->refused[i].path, file))
			return &reg->refused[i];
	return NULL;
}

/* What each broken fixture must be refused for: words the reason has to contain. */
struct expected_refusal {
	const char *file;
	const char *words[3];
};

static const struct expected_refusal expected[] = {
	{ "bad-major.so", { "major 2", "provides ABI major 1", "rebuild the module against twinbox ABI 1" } },
	{ "bad-minor.so", { "minor", "built for ABI 1.", "upgrade twinbox" } },
	{ "bad-no-entry.so", { "tbx_plugin_entry_v1", "not a twinbox module" } },
	{ "bad-entry-v2.so", { "tbx_plugin_entry_v1", "tbx_plugin_entry_v2", "rebuild" } },
	{ "bad-entry-null.so", { "tbx_plugin_entry_v1", "returned NULL" } },
	{ "bad-desc-size.so", { "struct_size is 16", "truncated" } },
	{ "bad-desc-tiny.so", { "struct_size is 4", "mangled" } },
	{ "bad-kind.so", { "kind is 7" } },
	{ "bad-null-name.so", { "no name" } },
	{ "bad-name.so", { "\"Bad Name\"", "invalid" } },
	{ "bad-long-name.so", { "invalid", "1 to 64" } },
	{ "bad-null-ops.so", { "NULL ops" } },
	{ "bad-ops-size.so", { "ops struct_size is 4" } },
	{ "bad-ops-minor.so", { "ops ABI minor", "upgrade twinbox" } },
	{ "bad-frontend-no-protocol.so", { "frontend", "no protocol" } },
	{ "bad-frontend-core-protocol.so", { "core protocol", "twinbox/1" } },
	{ "bad-undefined.so", { "cannot load", "tbx_fixture_no_such_function" } },
	{ "garbage.so", { "cannot load" } },
	{ "dup-b.so", { "duplicate backend name \"dup\"", "dup-a.so" } },
};

static void check_refusals(const struct tbx_registry *reg)
{
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		const struct tbx_module_refusal *r = refusal_for(reg, expected[i].file);
		int all = r != NULL;

		for (size_t w = 0; r && w < 3 && expected[i].words[w]; w++)
			all &= strstr(r->reason, expected[i].words[w]) != NULL;
		ok(all, "%s refused: %s", expected[i].file, r ? r->reason : "(not refused)");
		/* One sentence, no trailing newline: it goes into a log line and a JSON reply. */
		ok(r && !strchr(r->reason, '\n'), "%s reason is one line", expected[i].file);
	}
	ok(reg->n_refused == sizeof(expected) / sizeof(expected[0]),
	   "exactly the broken fixtures are refused (%zu)", reg->n_refused);
}

static char *join(const char *a, const char *b)
{
	char *s = malloc(strlen(a) + strlen(b) + 2);

	sprintf(s, "%s/%s", a, b);
	return s;
}

static void check_modules(const struct tbx_registry *reg, const char *data_root,
			  const char *state_root)
{
	const struct tbx_module *be = tbx_registry_find(reg, TBX_PLUGIN_BACKEND, "fixture");
	const struct tbx_module *fe = tbx_registry_find(reg, TBX_PLUGIN_FRONTEND, "fixture");
	struct json_object *v;
	char want[4096];

	ok(be && ends_with(be->path, "good-backend.so"), "backend \"fixture\" loaded");
	ok(fe && ends_with(fe->path, "good-frontend.so"),
	   "frontend \"fixture\" loaded beside the backend of the same name");
	ok(tbx_registry_find(reg, TBX_PLUGIN_BACKEND, "short") != NULL, "backend \"short\" loaded");
	ok(tbx_registry_find(reg, TBX_PLUGIN_BACKEND, "dup") != NULL &&
		   ends_with(tbx_registry_find(reg, TBX_PLUGIN_BACKEND, "dup")->path, "dup-a.so"),
	   "the first \"dup\" in sorted order wins");
	ok(reg->n_modules == 4, "exactly four modules loaded (%zu)", reg->n_modules);
	ok(tbx_registry_find(reg, TBX_PLUGIN_FRONTEND, "short") == NULL,
	   "find looks names up per kind");
	if (!be || !fe)
		return;
	snprintf(want, sizeof(want), "%s/backends/fixture", data_root);
	ok(be->data_dir && strcmp(be->data_dir, want) == 0, "backend data_dir is %s", want);
	snprintf(want, sizeof(want), "%s/backends/fixture", state_root);
	ok(be->state_dir && strcmp(be->state_dir, want) == 0, "backend state_dir is %s", want);
	snprintf(want, sizeof(want), "%s/frontends/fixture", data_root);
	ok(fe->data_dir && strcmp(fe->data_dir, want) == 0, "frontend data_dir is %s", want);
	ok(be->data_root && strcmp(be->data_root, data_root) == 0, "data_root is passed on");
	ok(be->config && json_object_object_get_ex(be->config, "greeting", &v),
	   "backend gets its own config section");
	ok(fe->config && !json_object_object_get_ex(fe->config, "greeting", NULL),
	   "frontend gets the frontends section, not the backend's");
}

static void check_engines(const struct tbx_registry *reg, const char *data_root)
{
	struct tbx_sandbox_info info;
	struct tbx_exec_request req = TBX_EXEC_REQUEST_INIT;
	struct tbx_exec_result res;
	struct tbx_engine *e = NULL, *s = NULL;
	char *data = NULL, *want;
	size_t len = 0;
	struct stat st;
	int rc;

	rc = tbx_engine_open(tbx_registry_find(reg, TBX_PLUGIN_BACKEND, "fixture"), &e);
	ok(rc == 0, "fixture engine opens (%s)", rc ? tbx_error_message() : "ok");
	if (rc != 0)
		return;

	tbx_sandbox_info_init(&info);
	rc = tbx_engine_sandbox_create(e, NULL, NULL, &info);
	ok(rc == 0 && info.id && strcmp(info.id, "hello") == 0,
	   "config_get reaches the module (id %s)", info.id ? info.id : "NULL");
	want = join(data_root, "backends/fixture");
	ok(rc == 0 && info.workdir && strcmp(info.workdir, want) == 0 && stat(want, &st) == 0 &&
		   S_ISDIR(st.st_mode),
	   "config_get(\"data_dir\") is %s and creates it", want);
	free(want);
	tbx_sandbox_info_clear(&info);

	memset(&res, 0, sizeof(res));
	tbx_error_clear();
	rc = tbx_engine_exec(e, NULL, "hello", &req, NULL, NULL, &res);
	ok(rc == TBX_ENOTSUP && strstr(tbx_error_message(), "does not support exec"),
	   "NULL exec: %s", tbx_error_message());
	rc = tbx_engine_file_read(e, NULL, "hello", "/x", &data, &len);
	ok(rc == TBX_ENOTSUP && strstr(tbx_error_message(), "does not support file_read"),
	   "NULL file_read: %s", tbx_error_message());
	rc = tbx_engine_preview_url(e, NULL, "hello", 80, &data);
	ok(rc == TBX_ENOTSUP && strstr(tbx_error_message(), "does not support preview_url"),
	   "NULL preview_url: %s", tbx_error_message());
	rc = tbx_engine_sandbox_kill(e, NULL, "nope");
	ok(rc == TBX_ENOENT && strstr(tbx_error_message(), "no sandbox nope here"),
	   "a module's error_set reaches the core: %s", tbx_error_message());
	tbx_engine_free(e);

	rc = tbx_engine_open(tbx_registry_find(reg, TBX_PLUGIN_BACKEND, "short"), &s);
	ok(rc == 0, "short engine opens");
	if (rc != 0)
		return;
	tbx_sandbox_info_init(&info);
	ok(tbx_engine_sandbox_create(s, NULL, NULL, &info) == 0,
	   "an op inside a short table still runs");
	tbx_sandbox_info_clear(&info);
	/* Its exec slot is set but lies past struct_size; calling it would abort(). */
	rc = tbx_engine_exec(s, NULL, "hello", &req, NULL, NULL, &res);
	ok(rc == TBX_ENOTSUP && strstr(tbx_error_message(), "does not support exec"),
	   "exec past struct_size: %s", tbx_error_message());
	tbx_engine_free(s);
}

static void check_load_file(const char *dir, const struct tbx_registry_config *cfg)
{
	struct tbx_registry reg = { 0 };
	char *path = join(dir, "bad-major.so");
	int rc;

	rc = tbx_registry_load_file(&reg, cfg, path);
	ok(rc == TBX_ENOTSUP && strstr(tbx_error_message(), path) &&
		   strstr(tbx_error_message(), "major"),
	   "load_file refuses one file, naming it: %s", tbx_error_message());
	ok(reg.n_refused == 1 && strcmp(reg.refused[0].path, path) == 0, "and records it");
	free(path);

	path = join(dir, "good-backend.so");
	ok(tbx_registry_load_file(&reg, cfg, path) == 0 && reg.n_modules == 1,
	   "load_file loads a good one");
	ok(tbx_registry_load_file(&reg, cfg, path) == 0 && reg.n_modules == 1 && reg.n_refused == 1,
	   "the same file twice is loaded once, not refused as a duplicate");
	free(path);

	path = join(dir, "no-such-module.so");
	rc = tbx_registry_load_file(&reg, cfg, path);
	ok(rc < 0 && reg.n_refused == 2 && strstr(reg.refused[1].reason, "cannot load"),
	   "a missing file is refused: %s", reg.n_refused == 2 ? reg.refused[1].reason : "");
	free(path);
	tbx_registry_clear(&reg);
	ok(reg.n_modules == 0 && reg.modules == NULL && reg.n_refused == 0, "clear empties it");
}

/* The loader must accept every module built in the tree (libvirt's virdrivermoduletest). */
static void check_in_tree(int argc, char **argv, const struct tbx_registry_config *cfg)
{
	for (int i = 2; i < argc; i++) {
		struct tbx_registry reg = { 0 };
		int rc = tbx_registry_load_file(&reg, cfg, argv[i]);

		ok(rc == 0 && reg.n_modules == 1, "in-tree module %s loads%s%s", argv[i],
		   rc ? ": " : "", rc ? tbx_error_message() : "");
		tbx_registry_clear(&reg);
	}
}

static void check_default_path(void)
{
	const char *p;

	setenv("TWINBOX_MODULE_PATH", "/nowhere/a:/nowhere/b", 1);
	p = tbx_module_default_path();
	ok(strcmp(p, "/nowhere/a:/nowhere/b") == 0, "TWINBOX_MODULE_PATH wins");
	unsetenv("TWINBOX_MODULE_PATH");
	p = tbx_module_default_path();
	/* This test runs from the build tree, so it must never see installed modules. */
	ok(strcmp(p, TBX_MODULE_DIR) != 0 &&
		   (p[0] == '\0' || strncmp(p, TBX_BUILD_ROOT "/", strlen(TBX_BUILD_ROOT) + 1) == 0),
	   "uninstalled default path is the build tree: \"%s\"", p);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

int main(int argc, char **argv)
{
	char data_tmpl[] = "/tmp/tbx-loader-XXXXXX";
	struct tbx_registry reg = { 0 };
	struct tbx_registry_config cfg = { 0 };
	char *data_root, *state_root, *search;
	const char *dir;
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURE_DIR [IN_TREE_MODULE.so...]\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	if (!mkdtemp(data_tmpl))
		return 99;
	data_root = join(data_tmpl, "data");
	state_root = join(data_tmpl, "state");
	cfg.data_root = data_root;
	cfg.state_root = state_root;
	cfg.config = json_tokener_parse("{\"backends\": {\"fixture\": {\"greeting\": \"hello\"}},"
					" \"frontends\": {\"fixture\": {\"x\": 1}}}");
	/* Listing the directory twice proves a file met twice is loaded once. */
	search = malloc(2 * strlen(dir) + 2);
	sprintf(search, "%s:%s", dir, dir);
	cfg.search_path = search;

	rc = tbx_registry_load(&reg, &cfg);
	ok(rc == 0, "tbx_registry_load goes on past every refusal");
	check_modules(&reg, data_root, state_root);
	check_refusals(&reg);
	check_engines(&reg, data_root);
	check_load_file(dir, &cfg);
	check_in_tree(argc, argv, &cfg);
	check_default_path();
	tbx_registry_clear(&reg);
	ok(1, "the process is still running after %d checks", n_tests);

	printf("1..%d\n", n_tests);
	json_object_put(cfg.config);
	free(search);
	free(data_root);
	free(state_root);
	if (nftw(data_tmpl, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		fprintf(stderr, "# could not remove %s\n", data_tmpl);
	return n_failed ? 1 : 0;
}
