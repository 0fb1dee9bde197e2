/* SPDX-License-Identifier: MIT */
/*
 * struct tbx_call: the per-op context the host hands to a module, and the
 * host API table modules call back through. A call lives on the caller's
 * stack for the duration of one op.
 */
#ifndef TBX_CALL_H
#define TBX_CALL_H

#include <stdatomic.h>
#include <twinbox/plugin.h>

struct tbx_module;

#define TBX_CALL_MAGIC 0x7b5ca11u

struct tbx_call {
	uint32_t magic;                 /* TBX_CALL_MAGIC; asserted on every host entry */
	const struct tbx_module *module; /* whose op this is (log tag, config) */
	const atomic_int *cancel;       /* nonzero once cancelled; may be NULL */
	int status;                     /* set by host->error_set */
	char message[1024];
};

void tbx_call_init(struct tbx_call *call, const struct tbx_module *module, const atomic_int *cancel);

/*
 * After an op failed with `status`, move the call's message into the core's
 * thread-local error (see common/error.h), prefixed with the module's name.
 * Returns the status.
 */
int tbx_call_report(struct tbx_call *call, int status, const char *op);

/* The host API table given to every module. */
const struct tbx_host_api *tbx_host_api_get(void);

#endif
