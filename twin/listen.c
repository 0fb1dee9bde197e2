/* SPDX-License-Identifier: MIT */
/* Listening sockets from address specs (see listen.h). */
#include "listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "error.h"

static int listen_unix(const char *path, char *bound, size_t bound_size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return tbx_error_set(TBX_EINVAL, "socket path too long: %s", path);
	strcpy(sa.sun_path, path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return tbx_error_set(TBX_EEXIST, "%s exists and is not a socket", path);
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return tbx_error_set(TBX_EIO, "socket: %s", strerror(errno));
	old = umask(077); /* the socket is born 0600: no window where others can connect */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || chmod(path, 0600) != 0 ||
	    listen(fd, 128) != 0) {
		int e = errno;
		umask(old);
		close(fd);
		return tbx_error_set(TBX_EIO, "cannot listen on %s: %s", path, strerror(e));
	}
	umask(old);
	snprintf(bound, bound_size, "%s", path);
	return fd;
}

int tbx_listen(const char *spec, int loopback_only, char *bound, size_t bound_size, int *is_unix)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char host[64];
	const char *colon;
	char *end;
	long port;
	int fd, one = 1;

	*is_unix = 0;
	if (strncmp(spec, "unix:", 5) == 0) {
		*is_unix = 1;
		return listen_unix(spec + 5, bound, bound_size);
	}
	memset(&ss, 0, sizeof(ss));
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof(host))
			return tbx_error_set(TBX_EINVAL, "bad listen address %s", spec);
		snprintf(host, sizeof(host), "%.*s", (int)(close - spec - 1), spec + 1);
		colon = close + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon || (size_t)(colon - spec) >= sizeof(host))
			return tbx_error_set(TBX_EINVAL, "bad listen address %s (want HOST:PORT or unix:PATH)",
					     spec);
		snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
	}
	port = strtol(colon + 1, &end, 10);
	if (*end || port < 0 || port > 65535 || colon[1] == '\0')
		return tbx_error_set(TBX_EINVAL, "bad port in %s", spec);
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		len = sizeof(*sin);
		if (loopback_only && (ntohl(sin->sin_addr.s_addr) >> 24) != 127)
			return tbx_error_set(TBX_EPERM, "%s is not a loopback address", host);
	} else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		len = sizeof(*sin6);
		if (loopback_only && !IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr))
			return tbx_error_set(TBX_EPERM, "%s is not a loopback address", host);
	} else {
		return tbx_error_set(TBX_EINVAL, "listen addresses are IP literals, not %s", host);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return tbx_error_set(TBX_EIO, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
		int e = errno;
		close(fd);
		return tbx_error_set(TBX_EIO, "cannot listen on %s: %s", spec, strerror(e));
	}
	if (ss.ss_family == AF_INET)
		snprintf(bound, bound_size, "%s:%u", host, ntohs(((struct sockaddr_in *)&ss)->sin_port));
	else
		snprintf(bound, bound_size, "[%s]:%u", host, ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
	return fd;
}
