/* SPDX-License-Identifier: MIT */
/* The glob matcher alone: ripgrep-style syntax and gitignore-style anchoring. TAP. */
#include <stdio.h>

#include "tools-priv.h"

struct glob_case {
	const char *pattern;
	const char *path;
	bool rel;    /* through tbx_glob_match_rel (anchoring rules) */
	bool is_dir; /* for rel cases */
	bool want;
};

static const struct glob_case cases[] = {
	/* plain matching */
	{"*.c", "a.c", false, false, true},
	{"*.c", "a.h", false, false, false},
	{"*.c", "src/a.c", false, false, false}, /* * stops at / */
	{"?.c", "a.c", false, false, true},
	{"?.c", "ab.c", false, false, false},
	{"?", "/", false, false, false},
	{"**", "a/b/c", false, false, true},
	{"**/*.c", "a.c", false, false, true}, /* zero directories */
	{"**/*.c", "x/y/a.c", false, false, true},
	{"src/**/*.c", "src/a.c", false, false, true},
	{"src/**/*.c", "src/x/y/a.c", false, false, true},
	{"src/**/*.c", "lib/a.c", false, false, false},
	{"src/**", "src/x/y", false, false, true},
	{"[abc].txt", "b.txt", false, false, true},
	{"[abc].txt", "d.txt", false, false, false},
	{"[a-c]x", "bx", false, false, true},
	{"[!a-c]x", "dx", false, false, true},
	{"[!a-c]x", "ax", false, false, false},
	{"[^a]x", "bx", false, false, true},
	{"[]]", "]", false, false, true},
	{"[a", "[a", false, false, true}, /* unclosed: literal */
	{"*.{c,h}", "a.h", false, false, true},
	{"*.{c,h}", "a.o", false, false, false},
	{"{src,lib}/*.c", "lib/a.c", false, false, true},
	{"*.{ts,tsx}", "app.tsx", false, false, true},
	{"a{b,{c,d}}e", "ade", false, false, true},
	{"a{b,{c,d}}e", "afe", false, false, false},
	{"{", "{", false, false, true},
	{"\\*.c", "*.c", false, false, true},
	{"\\*.c", "a.c", false, false, false},
	{"", "", false, false, true},
	{"", "a", false, false, false},
	{"a*b*c*d", "axxbyyczzd", false, false, true},
	{"a*b*c*d", "axxbyyczz", false, false, false},
	/* ripgrep --glob anchoring */
	{"*.c", "src/deep/a.c", true, false, true},   /* no slash: any depth */
	{"src/*.c", "src/a.c", true, false, true},    /* slash: from the root */
	{"src/*.c", "x/src/a.c", true, false, false},
	{"/a.c", "a.c", true, false, true},
	{"/a.c", "x/a.c", true, false, false},
	{"**/*.c", "x/y/a.c", true, false, true},
	{"build/", "build", true, true, true},        /* trailing / only for directories */
	{"build/", "build", true, false, false},
	{"node_modules", "a/node_modules", true, true, true},
	{"./src/*.c", "src/a.c", true, false, true},
	{"*.{c,h}", "deep/x.h", true, false, true},
};

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);
	int failed = 0;

	printf("TAP version 13\n1..%zu\n", n);
	for (size_t i = 0; i < n; i++) {
		const struct glob_case *c = &cases[i];
		bool got = c->rel ? tbx_glob_match_rel(c->pattern, c->path, c->is_dir)
				  : tbx_glob_match(c->pattern, c->path, 0);

		printf("%s %zu - %s '%s' %s '%s'\n", got == c->want ? "ok" : "not ok", i + 1,
		       c->rel ? "rel" : "glob", c->pattern, c->want ? "matches" : "does not match",
		       c->path);
		failed |= got != c->want;
	}
	return failed;
}
