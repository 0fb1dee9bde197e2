/* SPDX-License-Identifier: MIT */
/* A session's append-only event log. */
#include "store-priv.h"

#include "error.h"

/* What the messages about a refused event name. */
struct event_desc {
	const char *session_id;
	const char *kind;
};

/* The schema refuses an event for an unknown session or with broken JSON; say which. */
static int event_explain(int rc, const void *ctx)
{
	const struct event_desc *ev = ctx;

	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return tbx_error_set(TBX_ENOENT, "no session %s to log a %s event for",
				     ev->session_id, ev->kind);
	if (rc == SQLITE_CONSTRAINT_CHECK)
		return tbx_error_set(TBX_EINVAL, "the %s event for session %s is not valid JSON",
				     ev->kind, ev->session_id);
	return 0;
}

int tbx_store_event_append(struct tbx_store *store, const char *session_id, const char *kind,
			   const char *json)
{
	const struct event_desc ev = { .session_id = session_id, .kind = kind };
	const struct tbx_store_param params[] = {
		TBX_STORE_TEXT(session_id), TBX_STORE_NOW, TBX_STORE_TEXT(kind), TBX_STORE_TEXT(json),
	};

	if (!session_id || !kind || !json)
		return tbx_error_set(TBX_EINVAL, "an event needs a session id, a kind and JSON");
	return tbx_store_write(store, "INSERT INTO events (session_id, at, kind, json)"
			       " VALUES (?, ?, ?, ?)", params, TBX_STORE_N(params),
			       "appending an event", event_explain, &ev);
}
