/* SPDX-License-Identifier: MIT */
/* Building a tool's {"title","output","metadata"} result. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "tools-priv.h"

struct json_object *tbx_json_text(const char *s, size_t len)
{
	struct json_object *o;
	size_t clean_len;
	char *clean;

	/* Command output and file text can be any bytes; JSON must be UTF-8. */
	clean = tbx_utf8_clean(s, len, &clean_len);
	if (!clean)
		return NULL;
	o = json_object_new_string_len(clean, (int)clean_len);
	free(clean);
	return o;
}

int tbx_tool_result(struct json_object **out, const char *title, const char *output,
		    struct json_object *metadata)
{
	struct json_object *r = json_object_new_object();
	struct json_object *t = tbx_json_text(title ? title : "", title ? strlen(title) : 0);
	struct json_object *o = tbx_json_text(output ? output : "", output ? strlen(output) : 0);

	if (!metadata)
		metadata = json_object_new_object();
	if (!r || !t || !o || !metadata) {
		json_object_put(r);
		json_object_put(t);
		json_object_put(o);
		json_object_put(metadata);
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	}
	json_object_object_add(r, "title", t);
	json_object_object_add(r, "output", o);
	json_object_object_add(r, "metadata", metadata);
	*out = r;
	return 0;
}
