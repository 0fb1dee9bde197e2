/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for form and query decoding with nested keys (twin/form.c):
 * whatever it accepts must be a JSON object that serialises and parses back
 * to the same tree. Linked with tests/fuzz/replay.c for `make check`.
 */
#include <json-c/json.h>
#include <stdlib.h>

#include "form.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct json_object *o = NULL, *back;
	const char *why = NULL;
	char *decoded;

	if (tbx_form_parse((const char *)data, size, &o, &why) == 0) {
		if (!json_object_is_type(o, json_type_object))
			abort();
		back = json_tokener_parse(json_object_to_json_string(o));
		if (!back || !json_object_equal(o, back))
			abort();
		json_object_put(back);
		json_object_put(o);
	} else if (!why || o) {
		abort();
	}
	decoded = tbx_url_decode((const char *)data, size, 1);
	free(decoded);
	return 0;
}
