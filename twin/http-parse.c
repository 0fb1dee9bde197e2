/* SPDX-License-Identifier: MIT */
/* Incremental HTTP/1.1 parser with limits (see http-parse.h). */
#include "http-parse.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_MAX_HEAD (64 * 1024)
#define DEFAULT_MAX_BODY (16 * 1024 * 1024)
#define MAX_TRAILER_BYTES (16 * 1024)

static size_t fail(struct tbx_http_msg *m, int status, const char *why, size_t used)
{
	m->state = TBX_HTTP_ERROR;
	m->error = why;
	m->error_status = status;
	return used;
}

void tbx_http_msg_init(struct tbx_http_msg *m, enum tbx_http_kind kind,
		       const struct tbx_http_limits *limits)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->state = TBX_HTTP_HEAD;
	m->content_length = -1;
	m->limits.max_head = limits && limits->max_head ? limits->max_head : DEFAULT_MAX_HEAD;
	m->limits.max_body = limits && limits->max_body ? limits->max_body : DEFAULT_MAX_BODY;
}

void tbx_http_msg_free(struct tbx_http_msg *m)
{
	free(m->head);
	free(m->body);
	m->head = m->body = NULL;
}

void tbx_http_msg_reset(struct tbx_http_msg *m)
{
	struct tbx_http_limits limits = m->limits;
	enum tbx_http_kind kind = m->kind;

	tbx_http_msg_free(m);
	tbx_http_msg_init(m, kind, &limits);
}

/* RFC 9110 tchar: what a method or a field name may contain. */
static int is_tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

const char *tbx_http_header_get(const struct tbx_http_msg *m, const char *name)
{
	for (size_t i = 0; i < m->n_headers; i++)
		if (strcasecmp(m->headers[i].name, name) == 0)
			return m->headers[i].value;
	return NULL;
}

static int list_has_token(const char *list, const char *token)
{
	size_t tlen = strlen(token);

	while (list && *list) {
		while (*list == ' ' || *list == '\t' || *list == ',')
			list++;
		const char *end = list;
		while (*end && *end != ',')
			end++;
		const char *tail = end;
		while (tail > list && (tail[-1] == ' ' || tail[-1] == '\t'))
			tail--;
		if ((size_t)(tail - list) == tlen && strncasecmp(list, token, tlen) == 0)
			return 1;
		list = end;
	}
	return 0;
}

int tbx_http_header_has_token(const struct tbx_http_msg *m, const char *name, const char *token)
{
	for (size_t i = 0; i < m->n_headers; i++)
		if (strcasecmp(m->headers[i].name, name) == 0 &&
		    list_has_token(m->headers[i].value, token))
			return 1;
	return 0;
}

static int parse_version(const char *s, int *minor)
{
	if (strncmp(s, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)s[7]))
		return -1;
	*minor = s[7] - '0';
	return s[8] == '\0' ? 0 : -1;
}

/* Split "METHOD SP target SP HTTP/1.x". */
static const char *parse_request_line(struct tbx_http_msg *m, char *line)
{
	char *sp1 = strchr(line, ' '), *sp2;

	if (!sp1 || sp1 == line)
		return "malformed request line";
	*sp1 = '\0';
	sp2 = strchr(sp1 + 1, ' ');
	if (!sp2 || sp2 == sp1 + 1)
		return "malformed request line";
	*sp2 = '\0';
	m->method = line;
	m->target = sp1 + 1;
	if (strlen(m->method) > 32)
		return "method too long";
	for (const char *p = m->method; *p; p++)
		if (!is_tchar((unsigned char)*p))
			return "invalid method";
	for (const unsigned char *p = (const unsigned char *)m->target; *p; p++)
		if (*p <= 0x20 || *p == 0x7f)
			return "invalid request target";
	if (parse_version(sp2 + 1, &m->version_minor) < 0)
		return "unsupported HTTP version";
	return NULL;
}

/* Split "HTTP/1.x SP 3DIGIT [SP reason]". */
static const char *parse_status_line(struct tbx_http_msg *m, char *line)
{
	char *sp = strchr(line, ' ');

	if (!sp)
		return "malformed status line";
	*sp = '\0';
	if (parse_version(line, &m->version_minor) < 0)
		return "unsupported HTTP version";
	if (!isdigit((unsigned char)sp[1]) || !isdigit((unsigned char)sp[2]) ||
	    !isdigit((unsigned char)sp[3]) || (sp[4] != ' ' && sp[4] != '\0'))
		return "malformed status code";
	m->status = (sp[1] - '0') * 100 + (sp[2] - '0') * 10 + (sp[3] - '0');
	if (m->status < 100)
		return "malformed status code";
	m->reason = sp[4] ? sp + 5 : sp + 4;
	return NULL;
}

static const char *parse_header_line(struct tbx_http_msg *m, char *line)
{
	char *colon = strchr(line, ':'), *v, *end;

	if (line[0] == ' ' || line[0] == '\t')
		return "obsolete header line folding";
	if (!colon || colon == line)
		return "malformed header line";
	for (char *p = line; p < colon; p++)
		if (!is_tchar((unsigned char)*p))
			return "invalid header name";
	if (m->n_headers == TBX_HTTP_MAX_HEADERS)
		return "too many headers";
	*colon = '\0';
	v = colon + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	end = v + strlen(v);
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			return "control character in header value";
	m->headers[m->n_headers].name = line;
	m->headers[m->n_headers].value = v;
	m->n_headers++;
	return NULL;
}

/* Content-Length: decimal digits, every occurrence the same. */
static const char *parse_content_length(struct tbx_http_msg *m)
{
	for (size_t i = 0; i < m->n_headers; i++) {
		const char *v = m->headers[i].value;
		long long n = 0;

		if (strcasecmp(m->headers[i].name, "Content-Length") != 0)
			continue;
		if (!*v)
			return "malformed Content-Length";
		for (; *v; v++) {
			if (!isdigit((unsigned char)*v) || n > (1LL << 50))
				return "malformed Content-Length";
			n = n * 10 + (*v - '0');
		}
		if (m->content_length >= 0 && m->content_length != n)
			return "conflicting Content-Length headers";
		m->content_length = n;
	}
	return NULL;
}

/* Start line and headers are in head[0..head_len): split them and decide the framing. */
static size_t finish_head(struct tbx_http_msg *m, size_t used)
{
	char *line = m->head, *eol;
	const char *why, *te;

	m->head[m->head_len] = '\0';
	for (size_t i = 0; i < m->head_len; i++)
		if (m->head[i] == '\0')
			return fail(m, 400, "NUL byte in message head", used);
	eol = strstr(line, "\r\n");
	*eol = '\0';
	why = m->kind == TBX_HTTP_REQUEST ? parse_request_line(m, line) : parse_status_line(m, line);
	if (why)
		return fail(m, 400, why, used);
	line = eol + 2;
	while ((eol = strstr(line, "\r\n")) && eol != line) {
		*eol = '\0';
		if (memchr(line, '\n', (size_t)(eol - line)) || strchr(line, '\r'))
			return fail(m, 400, "bare CR or LF in header line", used);
		if ((why = parse_header_line(m, line)))
			return fail(m, m->n_headers == TBX_HTTP_MAX_HEADERS ? 431 : 400, why, used);
		line = eol + 2;
	}
	if ((why = parse_content_length(m)))
		return fail(m, 400, why, used);
	te = tbx_http_header_get(m, "Transfer-Encoding");
	if (te) {
		/* Both framings at once is how requests get smuggled: refuse it. */
		if (m->content_length >= 0)
			return fail(m, 400, "both Transfer-Encoding and Content-Length", used);
		if (strcasecmp(te, "chunked") != 0)
			return fail(m, 501, "unsupported Transfer-Encoding", used);
		for (size_t i = 0, n = 0; i < m->n_headers; i++)
			if (strcasecmp(m->headers[i].name, "Transfer-Encoding") == 0 && ++n > 1)
				return fail(m, 400, "repeated Transfer-Encoding", used);
		m->chunked = 1;
	}
	if (m->version_minor >= 1)
		m->keep_alive = !tbx_http_header_has_token(m, "Connection", "close");
	else
		m->keep_alive = tbx_http_header_has_token(m, "Connection", "keep-alive");
	m->head_done = 1;

	if (m->kind == TBX_HTTP_REQUEST) {
		const char *expect = tbx_http_header_get(m, "Expect");
		m->expect_continue = expect && strcasecmp(expect, "100-continue") == 0;
		if (m->method[0] == 'C' && strcmp(m->method, "CONNECT") == 0 && !m->chunked &&
		    m->content_length <= 0) {
			m->state = TBX_HTTP_DONE; /* what follows a CONNECT head is the tunnel */
			return used;
		}
	} else if (m->no_body || m->status < 200 || m->status == 204 || m->status == 304) {
		m->state = TBX_HTTP_DONE;
		return used;
	}
	if (m->content_length > 0 && (unsigned long long)m->content_length > m->limits.max_body)
		return fail(m, 413, "body too large", used);
	if (m->chunked)
		m->state = TBX_HTTP_CHUNK_SIZE;
	else if (m->content_length > 0)
		m->state = TBX_HTTP_BODY;
	else if (m->content_length < 0 && m->kind == TBX_HTTP_RESPONSE) {
		m->state = TBX_HTTP_BODY_EOF;
		m->keep_alive = 0;
	} else
		m->state = TBX_HTTP_DONE;
	if (!m->body && !(m->body = calloc(1, 1)))
		return fail(m, 500, "out of memory", used);
	return used;
}

static size_t feed_head(struct tbx_http_msg *m, const char *data, size_t len)
{
	size_t used = 0;

	/* Stray CRLFs between requests (after a POST body, say) are allowed. */
	if (m->head_len == 0 && m->kind == TBX_HTTP_REQUEST)
		while (used < len && (data[used] == '\r' || data[used] == '\n'))
			used++;
	while (used < len) {
		size_t take = len - used, start;
		const char *end;

		if (m->head_len + take > m->limits.max_head)
			take = m->limits.max_head - m->head_len;
		if (take == 0)
			return fail(m, 431, "header section too large", used);
		if (m->head_len + take + 1 > m->head_cap) {
			size_t cap = m->head_cap ? m->head_cap : 1024;
			char *grown;
			while (cap < m->head_len + take + 1)
				cap *= 2;
			if (!(grown = realloc(m->head, cap)))
				return fail(m, 500, "out of memory", used);
			m->head = grown;
			m->head_cap = cap;
		}
		memcpy(m->head + m->head_len, data + used, take);
		start = m->scan_from;
		m->head_len += take;
		m->head[m->head_len] = '\0';
		end = NULL;
		for (size_t i = start; i + 3 < m->head_len; i++) {
			if (m->head[i] == '\r' && m->head[i + 1] == '\n' && m->head[i + 2] == '\r' &&
			    m->head[i + 3] == '\n') {
				end = m->head + i;
				break;
			}
		}
		if (end) {
			size_t head_bytes = (size_t)(end - m->head) + 4;
			size_t over = m->head_len - head_bytes; /* bytes past the head */
			used += take - over;
			m->head_len = head_bytes - 2; /* keep one CRLF to end the last line */
			return finish_head(m, used);
		}
		m->scan_from = m->head_len >= 3 ? m->head_len - 3 : 0;
		used += take;
	}
	return used;
}

static int body_append(struct tbx_http_msg *m, const char *data, size_t n)
{
	if (m->body_len + n > m->limits.max_body)
		return -1;
	if (m->body_len + n + 1 > m->body_cap) {
		size_t cap = m->body_cap ? m->body_cap : 4096;
		char *grown;
		while (cap < m->body_len + n + 1)
			cap *= 2;
		if (!(grown = realloc(m->body, cap)))
			return -1;
		m->body = grown;
		m->body_cap = cap;
	}
	memcpy(m->body + m->body_len, data, n);
	m->body_len += n;
	m->body[m->body_len] = '\0';
	return 0;
}

/* "1a2b[;ext]" -> size, or -1. */
static int parse_chunk_size(const char *line, unsigned long long *out)
{
	unsigned long long n = 0;
	int digits = 0;

	for (; isxdigit((unsigned char)*line); line++) {
		if (++digits > 15)
			return -1;
		n = n * 16 + (unsigned long long)(isdigit((unsigned char)*line) ? *line - '0'
						    : (tolower((unsigned char)*line) - 'a' + 10));
	}
	while (*line == ' ' || *line == '\t')
		line++;
	if (!digits || (*line && *line != ';'))
		return -1;
	*out = n;
	return 0;
}

size_t tbx_http_parse(struct tbx_http_msg *m, const char *data, size_t len)
{
	size_t used = 0;

	while (used < len) {
		switch (m->state) {
		case TBX_HTTP_HEAD:
			used += feed_head(m, data + used, len - used);
			if (m->state == TBX_HTTP_HEAD)
				return used;
			break;
		case TBX_HTTP_BODY: {
			size_t n = len - used;
			if ((long long)n > m->content_length - (long long)m->body_len)
				n = (size_t)(m->content_length - (long long)m->body_len);
			if (body_append(m, data + used, n) < 0)
				return fail(m, 413, "body too large", used);
			used += n;
			if ((long long)m->body_len == m->content_length)
				m->state = TBX_HTTP_DONE;
			break;
		}
		case TBX_HTTP_BODY_EOF:
			if (body_append(m, data + used, len - used) < 0)
				return fail(m, 413, "body too large", used);
			return len;
		case TBX_HTTP_CHUNK_SIZE:
		case TBX_HTTP_CHUNK_END: {
			char c = data[used++];
			if (m->line_len == sizeof(m->line) - 1)
				return fail(m, 400, "chunk-size line too long", used);
			m->line[m->line_len++] = c;
			if (c != '\n')
				break;
			if (m->line_len < 2 || m->line[m->line_len - 2] != '\r')
				return fail(m, 400, "bare LF in chunked body", used);
			m->line[m->line_len - 2] = '\0';
			if (m->state == TBX_HTTP_CHUNK_END) {
				if (m->line_len != 2)
					return fail(m, 400, "chunk data longer than its size", used);
				m->state = TBX_HTTP_CHUNK_SIZE;
			} else if (parse_chunk_size(m->line, &m->chunk_left) < 0) {
				return fail(m, 400, "malformed chunk size", used);
			} else if (m->chunk_left > m->limits.max_body - m->body_len) {
				return fail(m, 413, "body too large", used);
			} else {
				m->state = m->chunk_left ? TBX_HTTP_CHUNK_DATA : TBX_HTTP_TRAILER;
			}
			m->line_len = 0;
			break;
		}
		case TBX_HTTP_CHUNK_DATA: {
			size_t n = len - used;
			if (n > m->chunk_left)
				n = (size_t)m->chunk_left;
			if (body_append(m, data + used, n) < 0)
				return fail(m, 413, "body too large", used);
			used += n;
			m->chunk_left -= n;
			if (m->chunk_left == 0)
				m->state = TBX_HTTP_CHUNK_END;
			break;
		}
		case TBX_HTTP_TRAILER: {
			/* Trailer fields are read and dropped; only their size is limited.
			 * line_len counts the line's bytes, line[1] is its latest. */
			char c = data[used++];
			if (++m->trailer_bytes > MAX_TRAILER_BYTES)
				return fail(m, 431, "trailer section too large", used);
			if (c == '\n') {
				if (m->line_len == 0 || m->line[1] != '\r')
					return fail(m, 400, "bare LF in trailer", used);
				if (m->line_len == 1) {
					m->state = TBX_HTTP_DONE;
					break;
				}
				m->line_len = 0;
			} else {
				m->line[1] = c;
				m->line_len++;
			}
			break;
		}
		case TBX_HTTP_DONE:
		case TBX_HTTP_ERROR:
			return used;
		}
	}
	return used;
}

int tbx_http_parse_eof(struct tbx_http_msg *m)
{
	if (m->state == TBX_HTTP_BODY_EOF) {
		m->state = TBX_HTTP_DONE;
		return 0;
	}
	if (m->state == TBX_HTTP_DONE)
		return 0;
	if (m->state != TBX_HTTP_ERROR)
		fail(m, 400, m->state == TBX_HTTP_HEAD ? "connection closed in message head"
						       : "connection closed in message body", 0);
	return -1;
}
