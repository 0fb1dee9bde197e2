/* SPDX-License-Identifier: MIT */
/*
 * Request log entries, the raw material of receipts: what reached a twin
 * (method, path, status, tier, headers with secrets redacted, a digest of
 * the body), and the /veris/requests paging over them.
 */
#ifndef TBX_REQLOG_H
#define TBX_REQLOG_H

#include <stddef.h>
#include <stdint.h>

struct json_object;
struct tbx_http_msg;

/* Tiers: who answered. */
#define TBX_TIER_HANDLER "handler"   /* a built-in twin */
#define TBX_TIER_UPSTREAM "upstream" /* the user's own fake, by an upstream route */

/* Is this header's value a secret the log must not keep? */
int tbx_reqlog_header_is_secret(const char *name);
/*
 * A new log entry for a request as it arrives, status null until
 * tbx_reqlog_finish() (a request whose client left first keeps null, as the
 * Veris log shows a hang). The id is added when it is appended.
 */
struct json_object *tbx_reqlog_entry(const struct tbx_http_msg *req, const char *host,
				     const char *service, const char *tier, int64_t started_ms);
/* Record the answer: status, response size, duration. */
void tbx_reqlog_finish(struct json_object *entry, int status, size_t response_bytes,
		       int64_t started_ms);
/*
 * One page of log (ascending ids) for the query parameters of
 * /veris/requests: limit (1..1000, default 50), order (asc|desc, default
 * asc), since_id (exclusive), before_id (exclusive), tier. Returns a new
 * {requests, has_more} object, or NULL with *why for a bad parameter.
 */
struct json_object *tbx_reqlog_page(struct json_object *log, struct json_object *query,
				    const char **why);

#endif
