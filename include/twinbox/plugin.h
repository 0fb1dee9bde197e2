/* SPDX-License-Identifier: MIT */
/**
 * \file twinbox/plugin.h
 * The pieces every twinbox module shares: ABI version, status codes, log levels,
 * the host API table and the plugin descriptor.
 *
 * A module is a shared object that exports exactly one symbol,
 * tbx_plugin_entry_v1(), returning a descriptor whose `ops` point at a
 * struct tbx_backend_ops (backend.h) or struct tbx_frontend_ops (frontend.h).
 *
 * ABI rules (the Varnish rule):
 *   - Whenever something is added, increment TBX_ABI_MINOR.
 *   - Whenever something is deleted or changed in a way which is not
 *     binary/load-time compatible, increment TBX_ABI_MAJOR (and rename the
 *     entry symbol to tbx_plugin_entry_v<MAJOR>).
 *   - The daemon loads a module only when its abi_major equals the host's and
 *     its abi_minor is not newer than the host's.
 *   - Structs only grow at the end; every extensible struct starts with
 *     struct_size and abi_minor, so either side can tell which members exist.
 *
 * Changelog:
 *   1.0  first stable ABI: plugin.h, backend.h, frontend.h.
 */
#ifndef TWINBOX_PLUGIN_H
#define TWINBOX_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ABI major version. Since ABI 1.0. */
#define TBX_ABI_MAJOR 1
/** ABI minor version. Since ABI 1.0. */
#define TBX_ABI_MINOR 0

/** Marks the one symbol a module exports. Since ABI 1.0. */
#if defined(__GNUC__)
#define TBX_EXPORT __attribute__((visibility("default")))
#else
#define TBX_EXPORT
#endif

#if defined(__GNUC__)
#define TBX_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define TBX_PRINTF(fmt, args)
#endif

/**
 * True when the struct pointed to by \p p (which starts with struct_size) is
 * large enough to hold \p member. Since ABI 1.0.
 */
#define TBX_STRUCT_HAS(p, type, member) \
	((p)->struct_size >= offsetof(type, member) + sizeof(((type *)0)->member))

/**
 * Status codes. 0 is success; failures are negative and never renumbered.
 * Since ABI 1.0 unless noted.
 */
enum tbx_status {
	TBX_OK = 0,
	TBX_EINVAL = -1,     /**< an argument was wrong */
	TBX_ENOTSUP = -2,    /**< the operation is not supported by this module */
	TBX_ENOENT = -3,     /**< no such file, sandbox, session, tool... */
	TBX_EEXIST = -4,     /**< already exists */
	TBX_EIO = -5,        /**< I/O or transport failure */
	TBX_ECANCELED = -6,  /**< the call was cancelled */
	TBX_ETIMEDOUT = -7,  /**< a deadline passed */
	TBX_ENOMEM = -8,     /**< out of memory */
	TBX_EPERM = -9,      /**< permission denied */
	TBX_EUNAVAIL = -10,  /**< temporarily unavailable: retrying may help */
	TBX_EGONE = -11,     /**< the sandbox no longer exists on its engine */
	TBX_ENOTDIR = -12,   /**< a path component is not a directory */
	TBX_EISDIR = -13,    /**< the path is a directory */
	TBX_EPROTO = -14,    /**< the peer broke its protocol */
	TBX_EPAUSED = -15,   /**< the sandbox is already paused */
	TBX_EINTERNAL = -16, /**< a bug: please report it */
	TBX_EAUTH = -17,     /**< credentials missing or refused */
};

/** Log levels for tbx_host_api.log. Since ABI 1.0. */
enum tbx_log_level {
	TBX_LOG_ERROR = 0,
	TBX_LOG_WARN = 1,
	TBX_LOG_INFO = 2,
	TBX_LOG_DEBUG = 3,
	TBX_LOG_TRACE = 4,
};

/** Module kinds. Since ABI 1.0. */
enum tbx_plugin_kind {
	TBX_PLUGIN_BACKEND = 1,
	TBX_PLUGIN_FRONTEND = 2,
};

/**
 * Per-call context, owned by the host. Every op receives one; it carries the
 * call's error slot, cancellation state and the module's identity. Valid only
 * for the duration of the op. Since ABI 1.0.
 */
struct tbx_call;

/**
 * Services the host offers to modules. Modules never link against the daemon;
 * they reach it only through this table. Probe optional members with
 * TBX_STRUCT_HAS(host, struct tbx_host_api, member). Since ABI 1.0.
 */
struct tbx_host_api {
	uint32_t struct_size; /**< sizeof as the host knows it. Since ABI 1.0. */
	uint32_t abi_minor;   /**< the host's TBX_ABI_MINOR. Since ABI 1.0. */

	/** Log a line tagged with the module's name; \p call may be NULL. Since ABI 1.0. */
	void (*log)(struct tbx_call *call, enum tbx_log_level level, const char *fmt, ...)
		TBX_PRINTF(3, 4);

	/**
	 * Record why \p call failed. \p status is a negative tbx_status.
	 * \return \p status, so an op can `return host->error_set(call, ...)`.
	 * Since ABI 1.0.
	 */
	int (*error_set)(struct tbx_call *call, int status, const char *fmt, ...)
		TBX_PRINTF(3, 4);

	/** Allocators. Anything a module hands to the host must come from these. Since ABI 1.0. */
	void *(*alloc)(size_t size);
	void *(*realloc)(void *ptr, size_t size);
	char *(*strdup)(const char *s);
	void (*free)(void *ptr);

	/**
	 * A configuration value for this module, or NULL. Keys are the members
	 * of the module's section of config.json ("backends": {"local": {...}}),
	 * plus the host-provided "data_dir" and "state_dir" (private directories
	 * for the module, created on demand) and "data_root" (twinbox's data
	 * directory, $XDG_DATA_HOME/twinbox). The string is borrowed until the
	 * call returns.
	 * Since ABI 1.0.
	 */
	const char *(*config_get)(struct tbx_call *call, const char *key);

	/** Nonzero once the call has been cancelled; long ops poll it. Since ABI 1.0. */
	int (*is_cancelled)(struct tbx_call *call);
};

/**
 * What tbx_plugin_entry_v1() returns; must stay valid for the life of the
 * process (modules are never unloaded). Since ABI 1.0.
 */
struct tbx_plugin_desc {
	uint32_t struct_size; /**< sizeof(struct tbx_plugin_desc). Since ABI 1.0. */
	uint32_t abi_major;   /**< TBX_ABI_MAJOR the module was built against. Since ABI 1.0. */
	uint32_t abi_minor;   /**< TBX_ABI_MINOR the module was built against. Since ABI 1.0. */
	uint32_t kind;        /**< enum tbx_plugin_kind. Since ABI 1.0. */
	const char *name;     /**< unique module name, [a-z0-9_-]+, e.g. "local". Since ABI 1.0. */
	const char *version;  /**< the module's own version string. Since ABI 1.0. */
	const char *description; /**< one line for `twinbox modules`. Since ABI 1.0. */
	const void *ops;      /**< struct tbx_backend_ops or struct tbx_frontend_ops. Since ABI 1.0. */
};

/** Initializer for descriptors. Since ABI 1.0. */
#define TBX_PLUGIN_DESC_INIT                                                           \
	.struct_size = sizeof(struct tbx_plugin_desc), .abi_major = TBX_ABI_MAJOR,     \
	.abi_minor = TBX_ABI_MINOR

/** Name of the entry symbol for this major, for dlsym(). Since ABI 1.0. */
#define TBX_PLUGIN_ENTRY_SYMBOL "tbx_plugin_entry_v1"

/**
 * The one symbol a module exports. \p host stays valid for the life of the
 * process; keep the pointer. Return NULL to refuse to load (log why first).
 * Since ABI 1.0.
 */
TBX_EXPORT const struct tbx_plugin_desc *tbx_plugin_entry_v1(const struct tbx_host_api *host);

#ifdef __cplusplus
}
#endif

#endif /* TWINBOX_PLUGIN_H */
