/* SPDX-License-Identifier: MIT */
/**
 * \file twinbox/backend.h
 * The engine backend ABI: how the daemon drives one sandbox engine.
 *
 * Every op is blocking and runs on a daemon worker thread, so a backend is
 * plain sequential C; ops on different sandboxes (and on the same one) may run
 * concurrently, so a backend's instance must be thread-safe. Inputs are
 * borrowed for the duration of the op; anything returned is allocated with the
 * host's allocator and freed by the host. A NULL op (or one past struct_size)
 * means "not supported" and reaches the user as a clear TBX_ENOTSUP error.
 * Failures return a negative tbx_status after host->error_set().
 */
#ifndef TWINBOX_BACKEND_H
#define TWINBOX_BACKEND_H

#include <twinbox/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Sandbox creation flags. Since ABI 1.0. */
enum tbx_sandbox_flags {
	/** On timeout, pause (keep files) rather than kill. Since ABI 1.0. */
	TBX_SANDBOX_PAUSE_ON_TIMEOUT = 1u << 0,
	/** The sandbox may reach no network at all (loopback only). Since ABI 1.0. */
	TBX_SANDBOX_NO_NETWORK = 1u << 1,
};

/** What to create. Since ABI 1.0. */
struct tbx_sandbox_spec {
	uint32_t struct_size; /**< Since ABI 1.0. */
	uint32_t abi_minor;   /**< Since ABI 1.0. */
	const char *template_id;        /**< engine template or image; NULL = engine default. Since ABI 1.0. */
	const char *const *env;         /**< NULL-terminated "KEY=VALUE" for every process, or NULL. Since ABI 1.0. */
	const char *const *labels;      /**< NULL-terminated "key=value" the engine stores, or NULL. Since ABI 1.0. */
	uint32_t timeout_s;             /**< idle/lifetime timeout in seconds; 0 = engine default. Since ABI 1.0. */
	uint32_t flags;                 /**< enum tbx_sandbox_flags. Since ABI 1.0. */
	const char *egress_proxy_url;   /**< the only way out ("socks5://u:p@h:port" or "http://..."), or NULL. Since ABI 1.0. */
};

/** Initializer for tbx_sandbox_spec. Since ABI 1.0. */
#define TBX_SANDBOX_SPEC_INIT \
	{ .struct_size = sizeof(struct tbx_sandbox_spec), .abi_minor = TBX_ABI_MINOR }

/** Sandbox states. Since ABI 1.0. */
enum tbx_sandbox_state {
	TBX_SANDBOX_UNKNOWN = 0,
	TBX_SANDBOX_RUNNING = 1,
	TBX_SANDBOX_PAUSED = 2,
};

/**
 * What an engine says about one sandbox. Strings are allocated with
 * host->alloc; the host frees them. Since ABI 1.0.
 */
struct tbx_sandbox_info {
	uint32_t struct_size; /**< set by the host before the call. Since ABI 1.0. */
	uint32_t abi_minor;   /**< Since ABI 1.0. */
	char *id;             /**< the engine's sandbox id. Since ABI 1.0. */
	uint32_t state;       /**< enum tbx_sandbox_state. Since ABI 1.0. */
	char *workdir;        /**< absolute path tools treat as the project root. Since ABI 1.0. */
	char **labels;        /**< NULL-terminated "key=value", or NULL. Since ABI 1.0. */
};

/** Which output stream a chunk came from. Since ABI 1.0. */
enum tbx_exec_stream {
	TBX_STREAM_STDOUT = 1,
	TBX_STREAM_STDERR = 2,
};

/**
 * Receives output as it arrives. Return 0 to go on, nonzero to cancel the
 * command. Since ABI 1.0.
 */
typedef int (*tbx_exec_output_cb)(enum tbx_exec_stream stream, const char *data, size_t len,
				  void *payload);

/** A command to run. Since ABI 1.0. */
struct tbx_exec_request {
	uint32_t struct_size; /**< Since ABI 1.0. */
	uint32_t abi_minor;   /**< Since ABI 1.0. */
	const char *command;  /**< a shell command line, run with the sandbox's /bin/sh -c... style shell. Since ABI 1.0. */
	const char *cwd;      /**< absolute working directory, or NULL for the sandbox workdir. Since ABI 1.0. */
	const char *const *env; /**< NULL-terminated "KEY=VALUE" added to the environment, or NULL. Since ABI 1.0. */
	uint32_t timeout_ms;  /**< kill the command after this long; 0 = no limit. Since ABI 1.0. */
};

/** Initializer for tbx_exec_request. Since ABI 1.0. */
#define TBX_EXEC_REQUEST_INIT \
	{ .struct_size = sizeof(struct tbx_exec_request), .abi_minor = TBX_ABI_MINOR }

/** How a command ended. Since ABI 1.0. */
struct tbx_exec_result {
	uint32_t struct_size; /**< set by the host. Since ABI 1.0. */
	uint32_t abi_minor;   /**< Since ABI 1.0. */
	int exit_code;        /**< exit status, or -1 when killed by a signal. Since ABI 1.0. */
	int signal;           /**< the signal that ended it, or 0. Since ABI 1.0. */
	int timed_out;        /**< nonzero when timeout_ms ended it. Since ABI 1.0. */
	int cancelled;        /**< nonzero when cancellation ended it. Since ABI 1.0. */
};

/** File types. Since ABI 1.0. */
enum tbx_file_type {
	TBX_FILE_UNKNOWN = 0,
	TBX_FILE_REGULAR = 1,
	TBX_FILE_DIRECTORY = 2,
	TBX_FILE_SYMLINK = 3,
};

/** One file's metadata; strings allocated with host->alloc. Since ABI 1.0. */
struct tbx_file_info {
	uint32_t struct_size; /**< set by the host. Since ABI 1.0. */
	uint32_t abi_minor;   /**< Since ABI 1.0. */
	char *name;           /**< last path component. Since ABI 1.0. */
	char *path;           /**< absolute path in the sandbox. Since ABI 1.0. */
	uint32_t type;        /**< enum tbx_file_type (symlinks are not followed). Since ABI 1.0. */
	uint32_t mode;        /**< permission bits. Since ABI 1.0. */
	uint64_t size;        /**< bytes. Since ABI 1.0. */
	int64_t mtime;        /**< modification time, seconds since the epoch. Since ABI 1.0. */
	char *symlink_target; /**< for symlinks, or NULL. Since ABI 1.0. */
};

/**
 * The ops of a backend. Every op takes the instance made by instance_new and
 * the per-call context. Paths are absolute paths inside the sandbox.
 * Since ABI 1.0 unless noted.
 */
struct tbx_backend_ops {
	uint32_t struct_size; /**< sizeof(struct tbx_backend_ops). Since ABI 1.0. */
	uint32_t abi_minor;   /**< Since ABI 1.0. */

	/** Make an instance; config comes through host->config_get(). Since ABI 1.0. */
	int (*instance_new)(struct tbx_call *call, void **out);
	/** Release an instance (at daemon shutdown). Since ABI 1.0. */
	void (*instance_free)(void *instance);

	/** Create and start a sandbox; \p out is filled (id and workdir at least). Since ABI 1.0. */
	int (*sandbox_create)(void *instance, struct tbx_call *call,
			      const struct tbx_sandbox_spec *spec, struct tbx_sandbox_info *out);
	/**
	 * Attach to an existing sandbox, resuming it if paused, and extend its
	 * timeout to \p timeout_s (0 = leave it). TBX_EGONE when the engine lost it.
	 * Since ABI 1.0.
	 */
	int (*sandbox_connect)(void *instance, struct tbx_call *call, const char *id,
			       uint32_t timeout_s, struct tbx_sandbox_info *out);
	/** Set the sandbox's timeout from now. Since ABI 1.0. */
	int (*sandbox_set_timeout)(void *instance, struct tbx_call *call, const char *id,
				   uint32_t timeout_s);
	/** Stop its processes, keep its files. TBX_EPAUSED if already paused. Since ABI 1.0. */
	int (*sandbox_pause)(void *instance, struct tbx_call *call, const char *id);
	/** Destroy it and its files. TBX_ENOENT if it did not exist. Since ABI 1.0. */
	int (*sandbox_kill)(void *instance, struct tbx_call *call, const char *id);
	/**
	 * List sandboxes carrying every label in \p labels (NULL-terminated
	 * "key=value"; NULL = all). \p out is an array allocated with host->alloc
	 * of elements sized as the module knows struct tbx_sandbox_info, each with
	 * struct_size set: the host walks it with that stride, so the array stays
	 * readable when the struct grows. Since ABI 1.0.
	 */
	int (*sandbox_list)(void *instance, struct tbx_call *call, const char *const *labels,
			    struct tbx_sandbox_info **out, size_t *n_out);

	/**
	 * Run a command, streaming output to \p on_output as it arrives, and
	 * honouring host->is_cancelled() and the request's timeout. Returns 0 when
	 * the command ran (whatever its exit code), with \p out filled.
	 * Since ABI 1.0.
	 */
	int (*exec)(void *instance, struct tbx_call *call, const char *id,
		    const struct tbx_exec_request *request, tbx_exec_output_cb on_output,
		    void *payload, struct tbx_exec_result *out);

	/** Read a whole file into a host->alloc buffer. Since ABI 1.0. */
	int (*file_read)(void *instance, struct tbx_call *call, const char *id, const char *path,
			 char **data_out, size_t *len_out);
	/** Write (create or replace) a file, creating parent directories. Since ABI 1.0. */
	int (*file_write)(void *instance, struct tbx_call *call, const char *id, const char *path,
			  const char *data, size_t len);
	/** Metadata of one path, not following a final symlink. Since ABI 1.0. */
	int (*file_stat)(void *instance, struct tbx_call *call, const char *id, const char *path,
			 struct tbx_file_info *out);
	/**
	 * Entries up to \p depth levels below \p path (1 = direct children), in
	 * walk order, the root excluded. \p out is laid out as for sandbox_list:
	 * elements of the module's sizeof(struct tbx_file_info), struct_size set.
	 * Since ABI 1.0.
	 */
	int (*file_list)(void *instance, struct tbx_call *call, const char *id, const char *path,
			 uint32_t depth, struct tbx_file_info **out, size_t *n_out);
	/** Make a directory and its parents. TBX_EEXIST if it exists. Since ABI 1.0. */
	int (*file_mkdir)(void *instance, struct tbx_call *call, const char *id, const char *path);
	/** Remove a path recursively; a missing path is not an error. Since ABI 1.0. */
	int (*file_remove)(void *instance, struct tbx_call *call, const char *id, const char *path);
	/** Rename \p from to \p to. Since ABI 1.0. */
	int (*file_rename)(void *instance, struct tbx_call *call, const char *id, const char *from,
			   const char *to);

	/** A URL that reaches \p port inside the sandbox from the host. Since ABI 1.0. */
	int (*preview_url)(void *instance, struct tbx_call *call, const char *id, uint16_t port,
			   char **url_out);
};

#ifdef __cplusplus
}
#endif

#endif /* TWINBOX_BACKEND_H */
