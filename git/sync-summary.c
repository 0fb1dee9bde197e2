/* SPDX-License-Identifier: MIT */
/* What a sync says: one paragraph for the agent and the user, and the same as JSON. */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git-sync.h"

static void human_bytes(uint64_t bytes, char *buf, size_t size)
{
	if (bytes < 1024)
		snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
	else if (bytes < 1024 * 1024)
		snprintf(buf, size, "%.1f KiB", (double)bytes / 1024);
	else
		snprintf(buf, size, "%.1f MiB", (double)bytes / (1024 * 1024));
}

char *tbx_git_home_summary(const struct tbx_git_home_result *r)
{
	char *s = NULL, *extra = NULL, size[32], tip[16];
	int n;

	snprintf(tip, sizeof(tip), "%.10s", r->has_tip ? git_oid_tostr_s(&r->tip) : "");
	if (!r->has_tip)
		n = asprintf(&s, "Nothing to sync: the sandbox has no commits on branch opencode yet.");
	else if (r->up_to_date)
		n = asprintf(&s, "Nothing new to sync: %s already has the sandbox's work (%s).",
			     r->branch, tip);
	else {
		human_bytes(r->bytes, size, sizeof(size));
		n = asprintf(&s, "Synced %zu commit%s (%zu file%s changed) to %s, now at %s; %s "
			     "moved%s.", r->commits, r->commits == 1 ? "" : "s", r->files_changed,
			     r->files_changed == 1 ? "" : "s", r->branch, tip, size,
			     r->bytes == 0 ? " (the host had the commits already)"
			     : r->incremental ? " (incremental)" : " (the whole branch)");
	}
	if (n < 0)
		return NULL;
	if (r->committed) {
		if (asprintf(&extra, "%s The sandbox's uncommitted changes were committed first.", s) < 0)
			goto fail;
		free(s);
		s = extra;
	}
	if (r->backup) {
		if (asprintf(&extra, "%s Local commits on %s that the sandbox did not have (%zu) are "
			     "kept on %s.", s, r->branch, r->backup_commits, r->backup) < 0)
			goto fail;
		free(s);
		s = extra;
	}
	if (r->notice) {
		if (asprintf(&extra, "%s %s", s, r->notice) < 0)
			goto fail;
		free(s);
		s = extra;
	}
	return s;
fail:
	free(s);
	return NULL;
}

struct json_object *tbx_git_home_json(const struct tbx_git_home_result *r)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "branch", json_object_new_string(r->branch));
	json_object_object_add(o, "tip", r->has_tip ? json_object_new_string(git_oid_tostr_s(&r->tip))
						    : NULL);
	json_object_object_add(o, "commits", json_object_new_int64((int64_t)r->commits));
	json_object_object_add(o, "files_changed", json_object_new_int64((int64_t)r->files_changed));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)r->bytes));
	json_object_object_add(o, "incremental", json_object_new_boolean(r->incremental));
	json_object_object_add(o, "up_to_date", json_object_new_boolean(r->up_to_date));
	json_object_object_add(o, "committed", json_object_new_boolean(r->committed));
	json_object_object_add(o, "backup", r->backup ? json_object_new_string(r->backup) : NULL);
	json_object_object_add(o, "backup_commits", json_object_new_int64((int64_t)r->backup_commits));
	json_object_object_add(o, "notice", r->notice ? json_object_new_string(r->notice) : NULL);
	return o;
}
