/* SPDX-License-Identifier: MIT */
/* The daemon's shared state: engine instances opened on first use. */
#include "core.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "error.h"

int64_t tbx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *tbx_core_default_engine(struct tbx_core *core)
{
	struct json_object *v;

	if (core->config && json_object_object_get_ex(core->config, "engine", &v) &&
	    json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return "local";
}

int tbx_core_engine(struct tbx_core *core, const char *name, struct tbx_engine **out)
{
	const struct tbx_module *m;
	struct tbx_engine *e, **grown;
	int rc = 0;

	pthread_mutex_lock(&core->engines_lock);
	for (size_t i = 0; i < core->n_engines; i++) {
		if (strcmp(tbx_engine_name(core->engines[i]), name) == 0) {
			*out = core->engines[i];
			goto unlock;
		}
	}
	m = tbx_registry_find(&core->registry, TBX_PLUGIN_BACKEND, name);
	if (!m) {
		rc = tbx_error_set(TBX_ENOENT,
				   "no engine named '%s' is loaded; `twinbox modules` lists the engines",
				   name);
		goto unlock;
	}
	/* Opened under the lock so two first uses never make two instances. */
	rc = tbx_engine_open(m, &e);
	if (rc < 0)
		goto unlock;
	grown = realloc(core->engines, (core->n_engines + 1) * sizeof(*grown));
	if (!grown) {
		tbx_engine_free(e);
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto unlock;
	}
	core->engines = grown;
	core->engines[core->n_engines++] = e;
	*out = e;
unlock:
	pthread_mutex_unlock(&core->engines_lock);
	return rc;
}

void tbx_core_engines_free(struct tbx_core *core)
{
	for (size_t i = 0; i < core->n_engines; i++)
		tbx_engine_free(core->engines[i]);
	free(core->engines);
	core->engines = NULL;
	core->n_engines = 0;
}
