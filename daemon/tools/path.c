/* SPDX-License-Identifier: MIT */
/*
 * Path mapping: relative paths resolve from the sandbox's project directory,
 * absolute paths under the user's local worktree map onto it (the model sees
 * the local paths in its prompt), other absolute paths are sandbox paths.
 */
#include <stdlib.h>
#include <string.h>

#include "tools-priv.h"

char *tbx_path_normalize(const char *path)
{
	size_t len = strlen(path);
	char *out = malloc(len + 2);
	size_t o = 0;
	const char *p = path;

	if (!out)
		return NULL;
	while (*p) {
		const char *s;
		size_t n;

		while (*p == '/')
			p++;
		s = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - s);
		if (n == 0 || (n == 1 && s[0] == '.'))
			continue;
		if (n == 2 && s[0] == '.' && s[1] == '.') {
			/* ".." above "/" stays at "/", as path.resolve does. */
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			continue;
		}
		out[o++] = '/';
		memcpy(out + o, s, n);
		o += n;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

const char *tbx_path_below(const char *root, const char *path)
{
	size_t n = strlen(root);

	while (n > 1 && root[n - 1] == '/')
		n--;
	if (n == 1 && root[0] == '/')
		return path[0] == '/' ? path + 1 : NULL;
	if (strncmp(root, path, n) != 0)
		return NULL;
	if (path[n] == '\0')
		return path + n;
	if (path[n] == '/')
		return path + n + 1;
	return NULL;
}

char *tbx_path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = malloc(a + b + 2);

	if (!p)
		return NULL;
	memcpy(p, dir, a);
	if (a == 0 || dir[a - 1] != '/')
		p[a++] = '/';
	memcpy(p + a, name, b + 1);
	return p;
}

char *tbx_path_resolve(const struct tbx_tool_ctx *ctx, const char *path)
{
	char *joined, *norm, *root, *out;
	const char *rest;

	if (!path || !*path)
		return tbx_path_normalize(ctx->workdir);
	if (path[0] != '/') {
		joined = tbx_path_join(ctx->workdir, path);
		if (!joined)
			return NULL;
		norm = tbx_path_normalize(joined);
		free(joined);
		return norm;
	}
	norm = tbx_path_normalize(path);
	if (!norm || !ctx->local_root || !*ctx->local_root)
		return norm;
	root = tbx_path_normalize(ctx->local_root);
	if (!root) {
		free(norm);
		return NULL;
	}
	rest = tbx_path_below(root, norm);
	if (!rest || strcmp(root, "/") == 0) {
		free(root);
		return norm;
	}
	joined = tbx_path_join(ctx->workdir, rest);
	out = joined ? tbx_path_normalize(joined) : NULL;
	free(joined);
	free(root);
	free(norm);
	return out;
}

char *tbx_path_title(const struct tbx_tool_ctx *ctx, const char *abs)
{
	char *root = tbx_path_normalize(ctx->workdir);
	const char *rest = root ? tbx_path_below(root, abs) : NULL;
	char *out;

	if (rest && !*rest)
		out = strdup(".");
	else
		out = strdup(rest ? rest : abs);
	free(root);
	return out;
}

const char *tbx_path_base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

char *tbx_path_dir(const char *path)
{
	const char *s = strrchr(path, '/');

	if (!s)
		return strdup(".");
	if (s == path)
		return strdup("/");
	return strndup(path, (size_t)(s - path));
}
