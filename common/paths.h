/* SPDX-License-Identifier: MIT */
/*
 * Where twinbox keeps things (DESIGN §8): the socket under
 * $XDG_RUNTIME_DIR/twinbox, the database and logs under $XDG_STATE_HOME/twinbox,
 * sandboxes and keys under $XDG_DATA_HOME/twinbox, config.json under
 * $XDG_CONFIG_HOME/twinbox. Shared by the daemon and the CLI so both agree.
 */
#ifndef TBX_PATHS_H
#define TBX_PATHS_H

#include <stddef.h>

struct tbx_paths {
	char runtime_dir[4096]; /* holds the socket and the start lock; mode 0700 */
	char socket_path[4096];
	char lock_path[4096];
	char state_dir[4096];
	char data_dir[4096];
	char config_dir[4096];
	char db_path[4096];
	char log_path[4096];
	char config_path[4096];
};

/* Fill from the environment; TWINBOX_SOCKET overrides the socket path. */
int tbx_paths_init(struct tbx_paths *paths);
/*
 * Where a twinbox program is: $env_var when set; the build tree's copy
 * (build_rel under the build root) when the running executable is itself in
 * the build tree, so an uninstalled build uses its own pieces; a sibling of
 * the running executable; else installed_dir/name, whether or not it exists.
 */
void tbx_program_path(const char *env_var, const char *build_rel, const char *installed_dir,
		      const char *name, char *out, size_t size);
/* mkdir -p with mode for every missing component. 0 or -errno. */
int tbx_mkdir_p(const char *path, unsigned mode);

#endif
