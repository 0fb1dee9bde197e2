/* SPDX-License-Identifier: MIT */
/*
 * An engine: a loaded backend module with its instance, and one wrapper per
 * backend op. The wrappers build the call context, turn a NULL op (or one
 * past the module's struct_size) into a clear TBX_ENOTSUP, and move a
 * failure's message into the core's thread-local error. Nothing else in the
 * core calls backend ops directly. Run these on worker threads only.
 */
#ifndef TBX_ENGINE_H
#define TBX_ENGINE_H

#include <stdatomic.h>
#include <twinbox/backend.h>

struct tbx_module;

struct tbx_engine {
	const struct tbx_module *module;
	const struct tbx_backend_ops *ops;
	void *instance;
};

int tbx_engine_open(const struct tbx_module *module, struct tbx_engine **out);
void tbx_engine_free(struct tbx_engine *engine);
const char *tbx_engine_name(const struct tbx_engine *engine);

/* Frees strings inside and re-initialises struct_size/abi_minor. */
void tbx_sandbox_info_init(struct tbx_sandbox_info *info);
void tbx_sandbox_info_clear(struct tbx_sandbox_info *info);
void tbx_file_info_init(struct tbx_file_info *info);
void tbx_file_info_clear(struct tbx_file_info *info);
void tbx_file_infos_free(struct tbx_file_info *infos, size_t n);

int tbx_engine_sandbox_create(struct tbx_engine *e, const atomic_int *cancel,
			      const struct tbx_sandbox_spec *spec, struct tbx_sandbox_info *out);
int tbx_engine_sandbox_connect(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			       uint32_t timeout_s, struct tbx_sandbox_info *out);
int tbx_engine_sandbox_set_timeout(struct tbx_engine *e, const atomic_int *cancel,
				   const char *id, uint32_t timeout_s);
int tbx_engine_sandbox_pause(struct tbx_engine *e, const atomic_int *cancel, const char *id);
int tbx_engine_sandbox_kill(struct tbx_engine *e, const atomic_int *cancel, const char *id);
int tbx_engine_sandbox_list(struct tbx_engine *e, const atomic_int *cancel,
			    const char *const *labels, struct tbx_sandbox_info **out, size_t *n_out);
int tbx_engine_exec(struct tbx_engine *e, const atomic_int *cancel, const char *id,
		    const struct tbx_exec_request *req, tbx_exec_output_cb on_output, void *payload,
		    struct tbx_exec_result *out);
int tbx_engine_file_read(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			 const char *path, char **data_out, size_t *len_out);
int tbx_engine_file_write(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			  const char *path, const char *data, size_t len);
int tbx_engine_file_stat(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			 const char *path, struct tbx_file_info *out);
int tbx_engine_file_list(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			 const char *path, uint32_t depth, struct tbx_file_info **out, size_t *n_out);
int tbx_engine_file_mkdir(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			  const char *path);
int tbx_engine_file_remove(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			   const char *path);
int tbx_engine_file_rename(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			   const char *from, const char *to);
int tbx_engine_preview_url(struct tbx_engine *e, const atomic_int *cancel, const char *id,
			   uint16_t port, char **url_out);

#endif
