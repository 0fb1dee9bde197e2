/* SPDX-License-Identifier: MIT */
/*
 * gitSync: commit the sandbox's work and bring it home onto the user's
 * opencode/N branch. The work itself is the session's (git/git-sync.h);
 * this is the tool face the model sees.
 */
#include <stdlib.h>

#include "error.h"
#include "tools-priv.h"

static const char gitsync_description[] =
	"Bring your work home: commit everything in the sandbox (on branch opencode) and copy "
	"the new commits to the user's own repository as branch opencode/N, where they can "
	"review and merge it. Returns how many commits and files came home and the new tip.\n"
	"\n"
	"- Run it when a piece of work is done, and before you stop.\n"
	"- Only the sandbox's branch opencode is synced; files ignored by .gitignore are not.\n"
	"- message is the commit message for changes not yet committed (optional).";

static const char gitsync_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"message\":{\"type\":\"string\",\"description\":\"Commit message for the changes not "
	"committed yet\"}},"
	"\"additionalProperties\":false}";

static int gitsync_call(const struct tbx_tool_ctx *ctx, struct json_object *args,
			struct json_object **out)
{
	struct json_object *meta = NULL;
	char *summary = NULL;
	int rc;

	if (!ctx->git_sync)
		return tbx_error_set(TBX_ENOTSUP, "gitSync is not available here: no session "
				     "with a git repository stands behind this call");
	rc = ctx->git_sync(ctx->sync_payload, ctx, tbx_arg_str(args, "message"), &summary, &meta);
	if (rc < 0)
		return rc;
	rc = tbx_tool_result(out, "gitSync", summary, meta);
	free(summary);
	return rc;
}

const struct tbx_tool_desc tbx_tool_gitsync = {
	.name = "gitSync",
	.description = gitsync_description,
	.parameters_json = gitsync_schema,
	.call = gitsync_call,
};
