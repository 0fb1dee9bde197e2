/* SPDX-License-Identifier: MIT */
/*
 * An incremental HTTP/1.1 message parser (requests and responses, fixed-length
 * and chunked bodies) with hard limits, over plain bytes: no sockets, no event
 * loop, so fuzz targets drive exactly what the gateway runs on untrusted input.
 */
#ifndef TBX_HTTP_PARSE_H
#define TBX_HTTP_PARSE_H

#include <stddef.h>

#define TBX_HTTP_MAX_HEADERS 100

enum tbx_http_kind {
	TBX_HTTP_REQUEST,
	TBX_HTTP_RESPONSE,
};

enum tbx_http_state {
	TBX_HTTP_HEAD,       /* collecting the start line and headers */
	TBX_HTTP_BODY,       /* Content-Length bytes to go */
	TBX_HTTP_BODY_EOF,   /* a response delimited by the connection's end */
	TBX_HTTP_CHUNK_SIZE, /* reading a chunk-size line */
	TBX_HTTP_CHUNK_DATA,
	TBX_HTTP_CHUNK_END,  /* the CRLF after a chunk's data */
	TBX_HTTP_TRAILER,    /* trailer fields after the last chunk */
	TBX_HTTP_DONE,       /* one whole message; the caller resets for the next */
	TBX_HTTP_ERROR,      /* see error and error_status */
};

struct tbx_http_header {
	char *name; /* points into the message's head buffer */
	char *value;
};

struct tbx_http_limits {
	size_t max_head; /* start line + headers, bytes */
	size_t max_body; /* decoded body, bytes */
};

struct tbx_http_msg {
	enum tbx_http_kind kind;
	enum tbx_http_state state;
	struct tbx_http_limits limits;

	/* Request: method and target; response: status and reason. */
	char *method;
	char *target;
	int status;
	char *reason;
	int version_minor; /* HTTP/1.x */

	struct tbx_http_header headers[TBX_HTTP_MAX_HEADERS];
	size_t n_headers;

	long long content_length; /* -1 when absent */
	int chunked;
	int keep_alive;      /* what the message asks of the connection */
	int expect_continue; /* a request with "Expect: 100-continue" */
	int head_done;       /* start line and headers are parsed */
	/* A response to HEAD, or 1xx/204/304: no body whatever the headers say. */
	int no_body;

	char *body; /* decoded (de-chunked), NUL-terminated for convenience */
	size_t body_len;

	const char *error;  /* why the message was refused (static string) */
	int error_status;   /* the HTTP status that reason deserves: 400, 413, 431, 501 */

	/* Internal. */
	char *head;
	size_t head_len, head_cap, scan_from;
	size_t body_cap;
	unsigned long long chunk_left;
	char line[256]; /* chunk-size or trailer line being collected */
	size_t line_len;
	size_t trailer_bytes;
};

/* Ready a message for parsing; limits of 0 take the defaults (64 KiB head, 16 MiB body). */
void tbx_http_msg_init(struct tbx_http_msg *m, enum tbx_http_kind kind,
		       const struct tbx_http_limits *limits);
/* Free what the message holds and ready it for the next message on the connection. */
void tbx_http_msg_reset(struct tbx_http_msg *m);
void tbx_http_msg_free(struct tbx_http_msg *m);

/*
 * Feed bytes. Returns how many were consumed: fewer than len when a message
 * completes (state DONE; the rest belongs to the next message) or fails
 * (state ERROR). A response parser must be told whether the request was HEAD
 * before its head completes (set no_body).
 */
size_t tbx_http_parse(struct tbx_http_msg *m, const char *data, size_t len);
/* The peer closed: completes a close-delimited response, else an error. 0 or -1. */
int tbx_http_parse_eof(struct tbx_http_msg *m);

/* The first header of that name (case-insensitive), or NULL. */
const char *tbx_http_header_get(const struct tbx_http_msg *m, const char *name);
/* Does a comma-separated header contain token (case-insensitive)? */
int tbx_http_header_has_token(const struct tbx_http_msg *m, const char *name, const char *token);

#endif
