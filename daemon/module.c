/* SPDX-License-Identifier: MIT */
/* The module loader: find *.so files, dlopen them, apply the ABI rules of plugin.h, record refusals. */
#include "module.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <twinbox/backend.h>
#include <twinbox/frontend.h>

#include "call.h"
#include "config.h"
#include "error.h"
#include "log.h"

#define TBX_LOG_CATEGORY "daemon.module"

#define MODULE_NAME_MAX 64

/* The core hello protocol; no frontend may claim it (DESIGN.md §3). */
#define CORE_PROTOCOL "twinbox/1"

/*
 * The descriptor as ABI 1.0 defined it ends just past `ops`. Later minors
 * append members, so sizeof() grows while this stays the floor every
 * 1.x module must reach.
 */
#define DESC_V1_SIZE \
	(offsetof(struct tbx_plugin_desc, ops) + sizeof(((struct tbx_plugin_desc *)0)->ops))

/*
 * struct_size, abi_major and abi_minor sit at the same offsets in every
 * major, so they can be read (and a foreign major named) before the rest of
 * the descriptor is trusted: Varnish's "the version/id fields must be
 * first, they protect the rest".
 */
#define DESC_HEADER_SIZE (offsetof(struct tbx_plugin_desc, abi_minor) + sizeof(uint32_t))

/* Every ops table starts {struct_size, abi_minor}; the loader reads them before knowing more. */
#define OPS_HEADER_SIZE (offsetof(struct tbx_backend_ops, abi_minor) + sizeof(uint32_t))
_Static_assert(offsetof(struct tbx_backend_ops, struct_size) == 0 &&
		       offsetof(struct tbx_frontend_ops, struct_size) == 0 &&
		       offsetof(struct tbx_backend_ops, abi_minor) ==
			       offsetof(struct tbx_frontend_ops, abi_minor),
	       "ops tables must share the {struct_size, abi_minor} header");

/*
 * What the registry keeps per module. The public part comes first so
 * reg->modules can hold pointers to it; the dlopen handle stays private and
 * is only used to notice a file that is already loaded.
 */
struct module_entry {
	struct tbx_module pub;
	void *handle;
};

static const char *kind_dir(uint32_t kind)
{
	return kind == TBX_PLUGIN_FRONTEND ? "frontends" : "backends";
}

static const char *kind_word(uint32_t kind)
{
	return kind == TBX_PLUGIN_FRONTEND ? "frontend" : "backend";
}

static int module_name_valid(const char *name)
{
	size_t n = 0;

	for (const char *p = name; *p; p++, n++) {
		if (n >= MODULE_NAME_MAX)
			return 0;
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return 0;
	}
	return n > 0;
}

/*
 * A refused name goes into a log line and a JSON reply, so it is clipped and
 * stripped of anything unprintable before it is shown.
 */
static void name_for_message(const char *name, char *buf, size_t size)
{
	size_t i = 0;

	for (; name[i] && i + 4 < size && i < MODULE_NAME_MAX; i++)
		buf[i] = (name[i] >= 0x20 && name[i] < 0x7f) ? name[i] : '?';
	if (name[i]) {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
}

static char *path_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + 1 + lb + 1);

	if (!s)
		return NULL;
	memcpy(s, a, la);
	s[la] = '/';
	memcpy(s + la + 1, b, lb + 1);
	return s;
}

/* <root>/<backends|frontends>/<name>, or NULL when there is no root. */
static char *module_dir(const char *root, uint32_t kind, const char *name, int *oom)
{
	char *dir, *path;

	if (!root)
		return NULL;
	dir = path_join(root, kind_dir(kind));
	path = dir ? path_join(dir, name) : NULL;
	free(dir);
	if (!path)
		*oom = 1;
	return path;
}

static int registry_refuse(struct tbx_registry *reg, const char *path, int status,
			   const char *fmt, ...) TBX_PRINTF(4, 5);

/*
 * Record one refusal: logged at warn level as "<path>: <reason>", kept in
 * reg->refused for `twinbox modules`, and left as the thread's error for a
 * caller of tbx_registry_load_file(). Returns status, or TBX_ENOMEM when
 * even the record could not be kept.
 */
static int registry_refuse(struct tbx_registry *reg, const char *path, int status,
			   const char *fmt, ...)
{
	struct tbx_module_refusal *grown;
	char reason[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	tbx_log_warn("%s: %s", path, reason);
	tbx_error_set(status, "%s: %s", path, reason);

	grown = realloc(reg->refused, (reg->n_refused + 1) * sizeof(*grown));
	if (!grown)
		return tbx_error_set(TBX_ENOMEM, "out of memory recording a refused module");
	reg->refused = grown;
	grown[reg->n_refused].path = strdup(path);
	grown[reg->n_refused].reason = strdup(reason);
	if (!grown[reg->n_refused].path || !grown[reg->n_refused].reason) {
		free(grown[reg->n_refused].path);
		free(grown[reg->n_refused].reason);
		return tbx_error_set(TBX_ENOMEM, "out of memory recording a refused module");
	}
	reg->n_refused++;
	return status;
}

static const struct tbx_module *registry_find_protocol(const struct tbx_registry *reg,
						       const char *protocol)
{
	for (size_t i = 0; i < reg->n_modules; i++) {
		const struct tbx_plugin_desc *d = reg->modules[i]->desc;
		const struct tbx_frontend_ops *fo = d->ops;

		if (d->kind == TBX_PLUGIN_FRONTEND && strcmp(fo->protocol, protocol) == 0)
			return reg->modules[i];
	}
	return NULL;
}

/*
 * Everything the loader checks about a descriptor, in the order that keeps
 * each read safe: the version header first, then the rest of the descriptor,
 * then the ops table it points at. Returns 0 or a refusal's status.
 */
static int desc_check(struct tbx_registry *reg, const char *path,
		      const struct tbx_plugin_desc *d)
{
	char shown[MODULE_NAME_MAX + 8];
	const struct tbx_module *first;
	const uint32_t *ops_hdr;

	if (!d)
		return registry_refuse(reg, path, TBX_EINVAL,
				       "its %s() returned NULL, so the module declined to load "
				       "(its own log lines say why)",
				       TBX_PLUGIN_ENTRY_SYMBOL);
	if (d->struct_size < DESC_HEADER_SIZE)
		return registry_refuse(reg, path, TBX_EINVAL,
				       "its descriptor struct_size is %u, too small even for the "
				       "version fields, so the descriptor is mangled",
				       (unsigned)d->struct_size);
	if (d->abi_major != TBX_ABI_MAJOR)
		return registry_refuse(reg, path, TBX_ENOTSUP,
				       "it was built for twinbox ABI major %u but this twinbox "
				       "provides ABI major %d; rebuild the module against twinbox ABI %d",
				       (unsigned)d->abi_major, TBX_ABI_MAJOR, TBX_ABI_MAJOR);
	if (d->abi_minor > TBX_ABI_MINOR)
		return registry_refuse(reg, path, TBX_ENOTSUP,
				       "its ABI minor is too new: built for ABI %d.%u but this "
				       "twinbox provides %d.%d; upgrade twinbox",
				       TBX_ABI_MAJOR, (unsigned)d->abi_minor, TBX_ABI_MAJOR,
				       TBX_ABI_MINOR);
	if (d->struct_size < DESC_V1_SIZE)
		return registry_refuse(reg, path, TBX_EINVAL,
				       "its descriptor struct_size is %u but ABI %d.0 needs at least "
				       "%zu, so the descriptor is truncated or mangled",
				       (unsigned)d->struct_size, TBX_ABI_MAJOR, (size_t)DESC_V1_SIZE);
	if (d->kind != TBX_PLUGIN_BACKEND && d->kind != TBX_PLUGIN_FRONTEND)
		return registry_refuse(reg, path, TBX_EINVAL,
				       "its kind is %u, not %d (backend) or %d (frontend)",
				       (unsigned)d->kind, TBX_PLUGIN_BACKEND, TBX_PLUGIN_FRONTEND);
	if (!d->name)
		return registry_refuse(reg, path, TBX_EINVAL, "its descriptor has no name (NULL)");
	if (!module_name_valid(d->name)) {
		name_for_message(d->name, shown, sizeof(shown));
		return registry_refuse(reg, path, TBX_EINVAL,
				       "its name \"%s\" is invalid: a name is 1 to %d characters "
				       "of a-z, 0-9, '_' and '-'",
				       shown, MODULE_NAME_MAX);
	}
	first = tbx_registry_find(reg, d->kind, d->name);
	if (first)
		return registry_refuse(reg, path, TBX_EEXIST,
				       "duplicate %s name \"%s\": %s already provides it",
				       kind_word(d->kind), d->name, first->path);
	if (!d->ops)
		return registry_refuse(reg, path, TBX_EINVAL, "its %s \"%s\" has NULL ops",
				       kind_word(d->kind), d->name);

	/* Only the two header words are known to exist until struct_size says more. */
	ops_hdr = d->ops;
	if (ops_hdr[0] < OPS_HEADER_SIZE)
		return registry_refuse(reg, path, TBX_EINVAL,
				       "its ops struct_size is %u, smaller than the %zu bytes of "
				       "struct_size and abi_minor every ops table starts with",
				       (unsigned)ops_hdr[0], (size_t)OPS_HEADER_SIZE);
	if (ops_hdr[1] > TBX_ABI_MINOR)
		return registry_refuse(reg, path, TBX_ENOTSUP,
				       "its ops ABI minor is too new: built for ABI %d.%u but this "
				       "twinbox provides %d.%d; upgrade twinbox",
				       TBX_ABI_MAJOR, (unsigned)ops_hdr[1], TBX_ABI_MAJOR,
				       TBX_ABI_MINOR);

	if (d->kind == TBX_PLUGIN_FRONTEND) {
		const struct tbx_frontend_ops *fo = d->ops;

		if (!TBX_STRUCT_HAS(fo, struct tbx_frontend_ops, protocol) || !fo->protocol ||
		    !fo->protocol[0])
			return registry_refuse(reg, path, TBX_EINVAL,
					       "its frontend \"%s\" has no protocol to serve",
					       d->name);
		if (strcmp(fo->protocol, CORE_PROTOCOL) == 0)
			return registry_refuse(reg, path, TBX_EINVAL,
					       "its frontend \"%s\" claims the core protocol \"%s\"",
					       d->name, CORE_PROTOCOL);
		first = registry_find_protocol(reg, fo->protocol);
		if (first)
			return registry_refuse(reg, path, TBX_EEXIST,
					       "duplicate frontend protocol \"%s\": %s already serves it",
					       fo->protocol, first->path);
	}
	return 0;
}

static int registry_add(struct tbx_registry *reg, const struct tbx_registry_config *cfg,
			const char *path, void *handle, const struct tbx_plugin_desc *d)
{
	struct tbx_module **grown;
	struct module_entry *e;
	struct json_object *section;
	int oom = 0;

	e = calloc(1, sizeof(*e));
	grown = realloc(reg->modules, (reg->n_modules + 1) * sizeof(*grown));
	if (grown)
		reg->modules = grown;
	if (!e || !grown)
		goto error;
	e->handle = handle;
	e->pub.desc = d;
	e->pub.path = strdup(path);
	if (cfg && cfg->config &&
	    json_object_object_get_ex(cfg->config, kind_dir(d->kind), &section) &&
	    json_object_is_type(section, json_type_object) &&
	    json_object_object_get_ex(section, d->name, &e->pub.config) &&
	    !json_object_is_type(e->pub.config, json_type_object)) {
		/* config_get() looks keys up in an object; anything else would silently hide them. */
		tbx_log_warn("%s: config.json %s.%s is not an object; ignoring it", path,
			     kind_dir(d->kind), d->name);
		e->pub.config = NULL;
	}
	e->pub.data_dir = module_dir(cfg ? cfg->data_root : NULL, d->kind, d->name, &oom);
	e->pub.state_dir = module_dir(cfg ? cfg->state_root : NULL, d->kind, d->name, &oom);
	if (cfg && cfg->data_root) {
		e->pub.data_root = strdup(cfg->data_root);
		oom |= !e->pub.data_root;
	}
	if (oom || !e->pub.path)
		goto error;
	reg->modules[reg->n_modules++] = &e->pub;
	tbx_log_debug("%s: loaded %s \"%s\" %s", path, kind_word(d->kind), d->name,
		      d->version ? d->version : "");
	return 0;

error:
	if (e) {
		free(e->pub.path);
		free(e->pub.data_dir);
		free(e->pub.state_dir);
		free(e->pub.data_root);
		free(e);
	}
	return tbx_error_set(TBX_ENOMEM, "out of memory loading %s", path);
}

/*
 * When the wanted symbol is missing, a module built for another major may
 * still export its own entry; naming that major turns "not a module" into
 * "rebuild it".
 */
static int entry_other_major(void *handle)
{
	char sym[32];

	for (int major = 0; major < 10; major++) {
		if (major == TBX_ABI_MAJOR)
			continue;
		snprintf(sym, sizeof(sym), "tbx_plugin_entry_v%d", major);
		if (dlsym(handle, sym))
			return major;
	}
	return -1;
}

/*
 * Refused modules are deliberately never dlclose()d either. Once dlopen()
 * has run a module's constructors (and those of the libraries it pulled in,
 * which may start threads or register atexit and TLS destructors), and
 * certainly once its entry has been called and may have kept the host
 * pointer, unmapping its code can leave something that later jumps into it.
 * A refused module costs some address space until the daemon exits; an
 * unsafe unload costs a crash that points nowhere near the cause.
 */
int tbx_registry_load_file(struct tbx_registry *reg, const struct tbx_registry_config *cfg,
			   const char *path)
{
	const struct tbx_plugin_desc *(*entry)(const struct tbx_host_api *);
	const struct tbx_plugin_desc *d;
	char local[PATH_MAX];
	const char *open_path = path;
	void *handle, *sym;
	int major, rc;

	/* dlopen() searches the library path for a bare name; a module is always a file. */
	if (!strchr(path, '/')) {
		if (snprintf(local, sizeof(local), "./%s", path) >= (int)sizeof(local))
			return registry_refuse(reg, path, TBX_EINVAL, "its path is too long");
		open_path = local;
	}

	handle = dlopen(open_path, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		const char *err = dlerror();
		return registry_refuse(reg, path, TBX_EIO, "cannot load it: %s",
				       err ? err : "dlopen failed");
	}

	/* The same file reached twice (a repeated search path entry, a symlink) is loaded once. */
	for (size_t i = 0; i < reg->n_modules; i++) {
		const struct module_entry *e = (const struct module_entry *)reg->modules[i];

		if (e->handle == handle) {
			tbx_log_debug("%s: already loaded as %s", path, e->pub.path);
			return 0;
		}
	}

	dlerror();
	sym = dlsym(handle, TBX_PLUGIN_ENTRY_SYMBOL);
	if (!sym) {
		major = entry_other_major(handle);
		if (major >= 0)
			return registry_refuse(reg, path, TBX_ENOTSUP,
					       "it has no %s symbol but exports "
					       "tbx_plugin_entry_v%d, so it was built for twinbox ABI "
					       "major %d; rebuild the module against twinbox ABI %d",
					       TBX_PLUGIN_ENTRY_SYMBOL, major, major, TBX_ABI_MAJOR);
		return registry_refuse(reg, path, TBX_EINVAL,
				       "it exports no %s symbol, so it is not a twinbox module "
				       "(or it was built without TBX_EXPORT on its entry)",
				       TBX_PLUGIN_ENTRY_SYMBOL);
	}
	/* POSIX's sanctioned way from dlsym()'s void * to a function pointer. */
	memcpy(&entry, &sym, sizeof(entry));

	d = entry(tbx_host_api_get());
	rc = desc_check(reg, path, d);
	if (rc < 0)
		return rc;
	return registry_add(reg, cfg, path, handle, d);
}

/* Sort with strcmp, not the locale's collation, so load order is the same everywhere. */
static int dirent_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int dirent_is_so(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 3 && strcmp(d->d_name + n - 3, ".so") == 0;
}

struct seen_files {
	struct stat *st;
	size_t n;
};

/*
 * 1 when the file was met before in this scan, else 0 after remembering it;
 * -1 when out of memory.
 */
static int seen_before(struct seen_files *seen, const struct stat *st)
{
	struct stat *grown;

	for (size_t i = 0; i < seen->n; i++)
		if (seen->st[i].st_dev == st->st_dev && seen->st[i].st_ino == st->st_ino)
			return 1;
	grown = realloc(seen->st, (seen->n + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	seen->st = grown;
	seen->st[seen->n++] = *st;
	return 0;
}

/* Load one directory entry; only TBX_ENOMEM stops the scan, refusals do not. */
static int registry_scan_one(struct tbx_registry *reg, const struct tbx_registry_config *cfg,
			     const char *dir, const char *name, struct seen_files *seen)
{
	char *path = path_join(dir, name);
	struct stat st;
	int rc = 0;

	if (!path)
		return tbx_error_set(TBX_ENOMEM, "out of memory scanning %s", dir);
	/* Meson leaves *.so.p directories beside its outputs; only files are modules. */
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		switch (seen_before(seen, &st)) {
		case 0:
			if (tbx_registry_load_file(reg, cfg, path) == TBX_ENOMEM)
				rc = TBX_ENOMEM;
			break;
		case 1:
			tbx_log_debug("%s: met again on the search path, loaded once", path);
			break;
		default:
			rc = tbx_error_set(TBX_ENOMEM, "out of memory scanning %s", dir);
		}
	}
	free(path);
	return rc;
}

/* Load every *.so directly in dir; a missing directory is normal and quietly skipped. */
static int registry_scan_dir(struct tbx_registry *reg, const struct tbx_registry_config *cfg,
			     const char *dir, struct seen_files *seen)
{
	struct dirent **names = NULL;
	int n, rc = 0;

	n = scandir(dir, &names, dirent_is_so, dirent_cmp);
	if (n < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			tbx_log_debug("%s: no module directory here", dir);
		else if (errno == ENOMEM)
			return tbx_error_set(TBX_ENOMEM, "out of memory scanning %s", dir);
		else
			tbx_log_warn("%s: cannot read this module directory: %s", dir,
				     strerror(errno));
		return 0;
	}
	for (int i = 0; i < n; i++) {
		if (rc == 0)
			rc = registry_scan_one(reg, cfg, dir, names[i]->d_name, seen);
		free(names[i]);
	}
	free(names);
	return rc;
}

int tbx_registry_load(struct tbx_registry *reg, const struct tbx_registry_config *cfg)
{
	static const char *const subdirs[] = { NULL, "backends", "frontends" };
	const char *search = cfg && cfg->search_path ? cfg->search_path : tbx_module_default_path();
	struct seen_files seen = { NULL, 0 };
	char *copy, *dir, *save = NULL;
	int rc = 0;

	copy = strdup(search);
	if (!copy)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	for (dir = strtok_r(copy, ":", &save); dir && rc == 0; dir = strtok_r(NULL, ":", &save)) {
		for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]) && rc == 0; i++) {
			char *sub = subdirs[i] ? path_join(dir, subdirs[i]) : strdup(dir);

			if (!sub) {
				rc = tbx_error_set(TBX_ENOMEM, "out of memory");
				break;
			}
			rc = registry_scan_dir(reg, cfg, sub, &seen);
			free(sub);
		}
	}
	free(seen.st);
	free(copy);
	return rc;
}

const struct tbx_module *tbx_registry_find(const struct tbx_registry *reg,
					   enum tbx_plugin_kind kind, const char *name)
{
	if (!reg || !name)
		return NULL;
	for (size_t i = 0; i < reg->n_modules; i++) {
		const struct tbx_plugin_desc *d = reg->modules[i]->desc;

		if (d->kind == (uint32_t)kind && strcmp(d->name, name) == 0)
			return reg->modules[i];
	}
	return NULL;
}

void tbx_registry_clear(struct tbx_registry *reg)
{
	if (!reg)
		return;
	for (size_t i = 0; i < reg->n_modules; i++) {
		struct tbx_module *m = reg->modules[i];

		free(m->path);
		free(m->data_dir);
		free(m->state_dir);
		free(m->data_root);
		free((struct module_entry *)m);
	}
	for (size_t i = 0; i < reg->n_refused; i++) {
		free(reg->refused[i].path);
		free(reg->refused[i].reason);
	}
	free(reg->modules);
	free(reg->refused);
	memset(reg, 0, sizeof(*reg));
}

/* Append s to the colon-separated list *list; 0 or -1 when out of memory. */
static int list_append(char **list, size_t *len, const char *s)
{
	size_t n = strlen(s);
	char *grown = realloc(*list, *len + n + 2);

	if (!grown)
		return -1;
	if (*len)
		grown[(*len)++] = ':';
	memcpy(grown + *len, s, n + 1);
	*len += n;
	*list = grown;
	return 0;
}

/*
 * Run from the build tree, the daemon loads the modules built beside it:
 * each <build>/backends/<engine>/ and <build>/frontends/<name>/ directory,
 * sorted. Returns NULL when out of memory.
 */
static char *build_tree_path(const char *root)
{
	static const char *const tops[] = { "backends", "frontends" };
	char *list = NULL;
	size_t len = 0;

	list = strdup("");
	if (!list)
		return NULL;
	for (size_t t = 0; t < sizeof(tops) / sizeof(tops[0]); t++) {
		struct dirent **names = NULL;
		char *top = path_join(root, tops[t]);
		int n = top ? scandir(top, &names, NULL, dirent_cmp) : -1;

		for (int i = 0; i < n; i++) {
			char *dir = names[i]->d_name[0] != '.' ? path_join(top, names[i]->d_name) : NULL;
			struct stat st;

			if (dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
			    list_append(&list, &len, dir) != 0) {
				free(list);
				list = NULL;
			}
			free(dir);
			free(names[i]);
			if (!list) {
				for (int j = i + 1; j < n; j++)
					free(names[j]);
				break;
			}
		}
		free(names);
		free(top);
		if (!list)
			return NULL;
	}
	return list;
}

static const char *default_path;

static void default_path_init(void)
{
	char exe[PATH_MAX], root[PATH_MAX];
	size_t n;

	/*
	 * A binary inside the build root is running uninstalled: it must load
	 * the modules built with it, never older installed ones.
	 */
	if (realpath("/proc/self/exe", exe) && realpath(TBX_BUILD_ROOT, root)) {
		n = strlen(root);
		if (strncmp(exe, root, n) == 0 && exe[n] == '/') {
			default_path = build_tree_path(root);
			if (default_path)
				return;
		}
	}
	default_path = TBX_MODULE_DIR;
}

const char *tbx_module_default_path(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	const char *env = getenv("TWINBOX_MODULE_PATH");

	/* Set but empty is honoured too: it is how a user loads no modules at all. */
	if (env)
		return env;
	pthread_once(&once, default_path_init);
	return default_path;
}
