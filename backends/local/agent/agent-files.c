/* SPDX-License-Identifier: MIT */
/* Agent: GET /files (download) and POST /files (raw upload), §2.6. */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/keyvalq_struct.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* The resolved ?path= of the request; replies 400 and NULL when missing. */
static char *agent_files_path(struct agent *a, struct evhttp_request *req)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *query = uri ? evhttp_uri_get_query(uri) : NULL;
	struct evkeyvalq params;
	const char *p;
	char *out = NULL;

	TAILQ_INIT(&params);
	if (!query || evhttp_parse_query_str(query, &params) < 0 ||
	    !(p = evhttp_find_header(&params, "path")) || !*p) {
		evhttp_clear_headers(&params);
		agent_reply_files_error(req, 400, "the path query parameter is required");
		return NULL;
	}
	out = agent_path_resolve(a, p);
	evhttp_clear_headers(&params);
	if (!out)
		agent_reply_files_error(req, 500, "out of memory");
	return out;
}

static void agent_files_get(struct agent *a, struct evhttp_request *req)
{
	char *path = agent_files_path(a, req);
	struct evbuffer *buf;
	struct stat st;
	int fd;

	if (!path)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			agent_reply_files_error(req, 404, "path '%s' does not exist", path);
		else if (errno == EACCES || errno == EPERM)
			agent_reply_files_error(req, 403, "cannot read '%s': %s", path,
						strerror(errno));
		else
			agent_reply_files_error(req, 500, "cannot open '%s': %s", path,
						strerror(errno));
		free(path);
		return;
	}
	if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode) || !S_ISREG(st.st_mode)) {
		agent_reply_files_error(req, 400, "path '%s' is a %s, not a file", path,
					S_ISDIR(st.st_mode) ? "directory" : "special file");
		close(fd);
		free(path);
		return;
	}
	buf = evbuffer_new();
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "application/octet-stream");
	/* evbuffer_add_file owns fd from here, success or not. */
	if (!buf || (st.st_size && evbuffer_add_file(buf, fd, 0, st.st_size) < 0)) {
		if (!buf)
			close(fd);
		agent_reply_files_error(req, 500, "cannot read '%s'", path);
	} else {
		if (!st.st_size)
			close(fd);
		evhttp_send_reply(req, 200, "OK", buf);
	}
	if (buf)
		evbuffer_free(buf);
	free(path);
}

static int agent_files_mkparents(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return 0;
}

/* Write the whole input buffer to fd without linearising it. */
static int agent_files_drain(struct evbuffer *in, int fd)
{
	struct evbuffer_iovec vec[16];
	int n;

	while ((n = evbuffer_peek(in, -1, NULL, vec, 16)) > 0) {
		size_t done = 0;

		for (int i = 0; i < n && i < 16; i++) {
			const char *p = vec[i].iov_base;
			size_t left = vec[i].iov_len;

			while (left) {
				ssize_t w = write(fd, p, left);

				if (w < 0) {
					if (errno == EINTR)
						continue;
					return -1;
				}
				p += w;
				left -= (size_t)w;
				done += (size_t)w;
			}
		}
		evbuffer_drain(in, done);
	}
	return 0;
}

static void agent_files_post(struct agent *a, struct evhttp_request *req)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	struct evkeyvalq *hdrs = evhttp_request_get_input_headers(req);
	const char *enc = evhttp_find_header(hdrs, "Content-Encoding");
	struct json_object *arr, *e;
	char *path = NULL, *tmp = NULL, *slash;
	mode_t mode = 0644;
	struct stat st;
	int fd = -1, err;

	if (!agent_content_type_is(req, "application/octet-stream")) {
		agent_reply_files_error(req, 400, "unsupported content type: the twinbox agent takes "
					"uploads as application/octet-stream with ?path=");
		return;
	}
	if (enc && strcasecmp(enc, "identity") != 0) {
		agent_reply_files_error(req, 400, "unsupported Content-Encoding '%s'", enc);
		return;
	}
	if (evbuffer_get_length(in) > AGENT_UPLOAD_MAX) {
		agent_reply_files_error(req, 413, "upload larger than %zu MiB", AGENT_UPLOAD_MAX >> 20);
		return;
	}
	if (!(path = agent_files_path(a, req)))
		return;
	slash = strrchr(path, '/');
	if (!slash || !slash[1]) {
		agent_reply_files_error(req, 400, "path '%s' names a directory", path);
		goto done;
	}
	if (agent_files_mkparents(path) < 0) {
		err = errno;
		agent_reply_files_error(req, err == EACCES || err == EPERM || err == EROFS ? 403 : 400,
					"cannot make the parents of '%s': %s", path, strerror(err));
		goto done;
	}
	if (lstat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			agent_reply_files_error(req, 400, "path '%s' is a directory", path);
			goto done;
		}
		if (S_ISREG(st.st_mode))
			mode = st.st_mode & 07777;
	}
	/* A temp file beside the target, renamed over it: no half-written files. */
	*slash = '\0';
	if (asprintf(&tmp, "%s/.%s.tbx-upload-XXXXXX", path, slash + 1) < 0) {
		tmp = NULL;
		*slash = '/';
		agent_reply_files_error(req, 500, "out of memory");
		goto done;
	}
	*slash = '/';
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		agent_reply_files_error(req, err == ENOSPC ? 507 :
					err == EACCES || err == EPERM || err == EROFS ? 403 : 500,
					"cannot write '%s': %s", path, strerror(err));
		goto done;
	}
	if (agent_files_drain(in, fd) < 0 || fchmod(fd, mode) < 0 || close(fd) < 0) {
		err = errno;
		fd = -1;
		unlink(tmp);
		agent_reply_files_error(req, err == ENOSPC || err == EFBIG ? 507 : 500,
					"cannot write '%s': %s", path, strerror(err));
		goto done;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		err = errno;
		unlink(tmp);
		agent_reply_files_error(req, 500, "cannot write '%s': %s", path, strerror(err));
		goto done;
	}
	arr = json_object_new_array();
	e = json_object_new_object();
	json_object_object_add(e, "path", json_object_new_string(path));
	json_object_object_add(e, "name", json_object_new_string(slash + 1));
	json_object_object_add(e, "type", json_object_new_string("file"));
	json_object_array_add(arr, e);
	agent_reply_json(req, 200, arr);
	json_object_put(arr);
done:
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	free(tmp);
	free(path);
}

void agent_files_handle(struct agent *a, struct evhttp_request *req)
{
	switch (evhttp_request_get_command(req)) {
	case EVHTTP_REQ_GET:
		agent_files_get(a, req);
		break;
	case EVHTTP_REQ_POST:
		agent_files_post(a, req);
		break;
	default:
		agent_reply_files_error(req, 405, "/files takes GET or POST");
		break;
	}
}
