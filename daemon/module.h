/* SPDX-License-Identifier: MIT */
/*
 * Loading modules (backends and frontends) with dlopen, applying the ABI
 * rules of include/twinbox/plugin.h, and keeping what loaded and what was
 * refused and why. Modules are never unloaded.
 */
#ifndef TBX_MODULE_H
#define TBX_MODULE_H

#include <stddef.h>
#include <twinbox/plugin.h>

struct json_object;

struct tbx_module {
	char *path;                        /* the shared object it came from */
	const struct tbx_plugin_desc *desc; /* as its entry returned it */
	struct json_object *config;        /* its section of config.json, or NULL; borrowed */
	char *data_dir;                    /* $XDG_DATA_HOME/twinbox/<kind>s/<name>, created on demand */
	char *state_dir;                   /* $XDG_STATE_HOME/twinbox/<kind>s/<name> */
	char *data_root;                   /* $XDG_DATA_HOME/twinbox */
};

struct tbx_module_refusal {
	char *path;
	char *reason; /* one sentence naming what was wrong */
};

struct tbx_registry {
	struct tbx_module **modules;
	size_t n_modules;
	struct tbx_module_refusal *refused;
	size_t n_refused;
};

struct tbx_registry_config {
	const char *search_path;         /* colon-separated directories */
	struct json_object *config;      /* whole config.json, or NULL */
	const char *data_root;           /* $XDG_DATA_HOME/twinbox */
	const char *state_root;          /* $XDG_STATE_HOME/twinbox */
};

/*
 * Scan every directory of search_path, and its backends/ and frontends/
 * subdirectories, for *.so files, and load each. A module that fails a check
 * is recorded in reg->refused (and logged) and the rest go on loading.
 * Returns 0 unless memory ran out.
 */
int tbx_registry_load(struct tbx_registry *reg, const struct tbx_registry_config *cfg);
/* Load one file; 0 when loaded, else a negative status with the refusal recorded. */
int tbx_registry_load_file(struct tbx_registry *reg, const struct tbx_registry_config *cfg,
			   const char *path);
const struct tbx_module *tbx_registry_find(const struct tbx_registry *reg,
					   enum tbx_plugin_kind kind, const char *name);
/* Frees bookkeeping only; the shared objects stay loaded. */
void tbx_registry_clear(struct tbx_registry *reg);

/* The default search path: TWINBOX_MODULE_PATH, else the build tree when run uninstalled, else $libdir/twinbox. */
const char *tbx_module_default_path(void);

#endif
