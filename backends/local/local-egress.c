/* SPDX-License-Identifier: MIT */
/*
 * Local engine: the egress proxy URL in its Unix-socket form. A sandbox's
 * network namespace has loopback only, so the one way out the engine can
 * give it is a gateway listening on a Unix socket on the host, which it
 * bind-mounts in (local-spawn.c) and the agent forwards loopback ports to.
 * The URL is written as curl writes a SOCKS proxy on a Unix socket:
 * socks5h://USER:PASS@localhost/DIR/socks.sock.
 */
#define _GNU_SOURCE
#include "local.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int local_egress_parse(const char *url, struct local_egress *out)
{
	static const char *const schemes[] = { "socks5h://", "socks5://" };
	const char *p = NULL, *at, *host, *path, *slash;
	size_t n;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]) && !p; i++)
		if (strncmp(url, schemes[i], strlen(schemes[i])) == 0)
			p = url + strlen(schemes[i]);
	if (!p)
		return 0;
	path = strchr(p, '/');
	at = memchr(p, '@', path ? (size_t)(path - p) : strlen(p));
	host = at ? at + 1 : p;
	if (!path || (size_t)(path - host) != strlen("localhost") ||
	    strncmp(host, "localhost", strlen("localhost")) != 0)
		return 0; /* host:port: a TCP proxy, not ours to bridge */
	if (at) {
		n = (size_t)(at - p);
		if (n >= sizeof(out->userinfo))
			return -1;
		memcpy(out->userinfo, p, n);
		out->userinfo[n] = '\0';
	}
	/*
	 * The directory is bind-mounted into the sandbox, so it must be exactly
	 * the one meant: absolute, no "..", nothing odd in the socket's name.
	 */
	slash = strrchr(path, '/');
	if (strstr(path, "/../") || strstr(path, "/./") || slash == path || !slash[1] ||
	    strcmp(slash + 1, "..") == 0 || strcmp(slash + 1, ".") == 0 ||
	    (size_t)(slash - path) >= sizeof(out->dir) || strlen(slash + 1) >= sizeof(out->socks))
		return -1;
	memcpy(out->dir, path, (size_t)(slash - path));
	out->dir[slash - path] = '\0';
	snprintf(out->socks, sizeof(out->socks), "%s", slash + 1);
	return 1;
}

int local_egress_check(struct tbx_local *l, struct tbx_call *call, const char *url)
{
	struct local_egress eg;
	int kind;

	if (!url)
		return 0;
	kind = local_egress_parse(url, &eg);
	if (kind < 0)
		return l->host->error_set(call, TBX_EINVAL,
					  "egress proxy URL: a Unix socket must be given as "
					  "socks5h://USER:PASS@localhost/ABSOLUTE/PATH/socks.sock");
	if (kind == 1 && local_mkdirs(eg.dir, 0700) < 0)
		return l->host->error_set(call, TBX_EIO, "cannot make the gateway directory %s: %s",
					  eg.dir, strerror(errno));
	return 0;
}
