/* SPDX-License-Identifier: MIT */
/* Text handling shared by the tools: binary detection, UTF-8, line splitting. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tools-priv.h"
#include "utf8.h"

/* OpenCode's read.ts list: files it never tries to show as text. */
static const char *const binary_exts[] = {
	".zip", ".tar", ".gz", ".exe", ".dll", ".so", ".class", ".jar", ".war", ".7z",
	".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods", ".odp", ".bin",
	".dat", ".obj", ".o", ".a", ".lib", ".wasm", ".pyc", ".pyo", NULL,
};

bool tbx_text_is_binary(const char *path, const char *data, size_t len)
{
	const char *base = tbx_path_base(path), *dot = strrchr(base, '.');
	size_t sample = len < 4096 ? len : 4096, odd = 0;

	/* path.extname: a leading dot alone (".bashrc") is not an extension. */
	if (dot && dot != base) {
		for (size_t i = 0; binary_exts[i]; i++)
			if (strcasecmp(dot, binary_exts[i]) == 0)
				return true;
	}
	if (sample == 0)
		return false;
	for (size_t i = 0; i < sample; i++) {
		unsigned char c = (unsigned char)data[i];
		if (c == 0)
			return true;
		if (c < 9 || (c > 13 && c < 32))
			odd++;
	}
	return odd * 10 > sample * 3;
}

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
char *tbx_utf8_clean(const char *s, size_t len, size_t *len_out)
{
	const unsigned char *u = (const unsigned char *)s;
	struct tbx_buf b;
	size_t i = 0, run = 0;

	tbx_buf_init(&b);
	while (i < len) {
		size_t n = tbx_utf8_seq_len(u + i, len - i);
		if (n) {
			i += n;
			run += n;
			continue;
		}
		tbx_buf_add(&b, s + i - run, run);
		tbx_buf_adds(&b, "\xef\xbf\xbd");
		run = 0;
		i++;
	}
	tbx_buf_add(&b, s + i - run, run);
	if (len_out)
		*len_out = b.len;
	return tbx_buf_steal(&b);
}

size_t tbx_utf8_prefix(const char *s, size_t len, size_t chars)
{
	size_t i = 0;

	while (i < len && chars > 0) {
		i++;
		while (i < len && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		chars--;
	}
	return i;
}

size_t tbx_utf8_count(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

void tbx_lines_init(struct tbx_lines *it, const char *data, size_t len)
{
	it->data = data;
	it->len = len;
	it->pos = 0;
}

bool tbx_lines_next(struct tbx_lines *it, const char **line, size_t *line_len)
{
	size_t start = it->pos, i = it->pos;

	if (it->pos >= it->len)
		return false;
	while (i < it->len && it->data[i] != '\n' && it->data[i] != '\r')
		i++;
	*line = it->data + start;
	*line_len = i - start;
	if (i < it->len && it->data[i] == '\r' && i + 1 < it->len && it->data[i + 1] == '\n')
		i++;
	it->pos = i < it->len ? i + 1 : i;
	return true;
}
