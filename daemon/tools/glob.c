/* SPDX-License-Identifier: MIT */
/*
 * Glob matching with ripgrep's syntax (*, **, ?, [...], {a,b}, \ escapes)
 * and its gitignore-style anchoring, so glob, grep's include and ls's ignore
 * behave as OpenCode's ripgrep calls do, without ripgrep in the sandbox.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "tools-priv.h"

/* Brace alternatives are rewritten into new patterns; cap the work a hostile
 * pattern can cause. */
#define GLOB_MAX_DEPTH 64

static bool match_at(const char *p, const char *s, unsigned flags, int depth);

static bool chars_equal(char a, char b, unsigned flags)
{
	if (flags & TBX_GLOB_CASEFOLD)
		return tolower((unsigned char)a) == tolower((unsigned char)b);
	return a == b;
}

/* Parse a [...] class at p (pointing at '['). Returns the char after ']', or
 * NULL when the class never closes (then '[' is literal). */
static const char *class_match(const char *p, char c, unsigned flags, bool *matched)
{
	bool neg = false, hit = false;
	const char *q = p + 1;

	if (*q == '!' || *q == '^') {
		neg = true;
		q++;
	}
	/* A ']' first in the class is a member, not the end. */
	if (*q == ']') {
		hit = hit || c == ']';
		q++;
	}
	while (*q && *q != ']') {
		char lo = *q, hi;

		if (lo == '\\' && q[1])
			lo = *++q;
		hi = lo;
		if (q[1] == '-' && q[2] && q[2] != ']') {
			hi = q[2];
			q += 2;
		}
		if (flags & TBX_GLOB_CASEFOLD) {
			char lc = (char)tolower((unsigned char)c), uc = (char)toupper((unsigned char)c);
			if ((lc >= lo && lc <= hi) || (uc >= lo && uc <= hi))
				hit = true;
		} else if (c >= lo && c <= hi) {
			hit = true;
		}
		q++;
	}
	if (*q != ']')
		return NULL;
	*matched = neg ? !hit : hit;
	return q + 1;
}

/* Find the '}' closing the '{' at p, or NULL. */
static const char *brace_end(const char *p)
{
	int level = 0;

	for (const char *q = p; *q; q++) {
		if (*q == '\\' && q[1]) {
			q++;
			continue;
		}
		if (*q == '{')
			level++;
		else if (*q == '}' && --level == 0)
			return q;
	}
	return NULL;
}

/* Try every alternative of the {..} at p followed by the rest of the pattern. */
static bool match_braces(const char *p, const char *end, const char *s, unsigned flags,
			 int depth)
{
	const char *alt = p + 1, *rest = end + 1;
	size_t rest_len = strlen(rest);
	int level = 0;

	for (const char *q = p + 1; q <= end; q++) {
		if (*q == '\\' && q < end) {
			q++;
			continue;
		}
		if (*q == '{') {
			level++;
			continue;
		}
		if (*q == '}' && level > 0) {
			level--;
			continue;
		}
		if ((*q == ',' && level == 0) || q == end) {
			size_t n = (size_t)(q - alt);
			char *np = malloc(n + rest_len + 1);
			bool ok;

			if (!np)
				return false;
			memcpy(np, alt, n);
			memcpy(np + n, rest, rest_len + 1);
			ok = match_at(np, s, flags, depth + 1);
			free(np);
			if (ok)
				return true;
			alt = q + 1;
		}
	}
	return false;
}

static bool match_at(const char *p, const char *s, unsigned flags, int depth)
{
	if (depth > GLOB_MAX_DEPTH)
		return false;
	for (;;) {
		switch (*p) {
		case '\0':
			return *s == '\0';
		case '*':
			if (p[1] == '*') {
				const char *rest = p + 2;

				while (*rest == '*')
					rest++;
				/* "**" followed by "/" may also stand for no directory at all. */
				if (*rest == '/' && match_at(rest + 1, s, flags, depth + 1))
					return true;
				for (size_t i = 0;; i++) {
					if (match_at(rest, s + i, flags, depth + 1))
						return true;
					if (!s[i])
						return false;
				}
			}
			for (size_t i = 0;; i++) {
				if (match_at(p + 1, s + i, flags, depth + 1))
					return true;
				if (!s[i] || s[i] == '/')
					return false;
			}
		case '?':
			if (!*s || *s == '/')
				return false;
			p++;
			s++;
			continue;
		case '[': {
			bool hit = false;
			const char *next = class_match(p, *s ? *s : 'x', flags, &hit);

			if (!next) {
				/* An unclosed '[' is an ordinary character. */
				if (*s != '[')
					return false;
				p++;
				s++;
				continue;
			}
			if (!*s || *s == '/' || !hit)
				return false;
			p = next;
			s++;
			continue;
		}
		case '{': {
			const char *end = brace_end(p);

			if (end)
				return match_braces(p, end, s, flags, depth);
			if (*s != '{')
				return false;
			p++;
			s++;
			continue;
		}
		case '\\':
			if (p[1])
				p++;
			/* fall through */
		default:
			if (!*s || !chars_equal(*p, *s, flags))
				return false;
			p++;
			s++;
			continue;
		}
	}
}

bool tbx_glob_match(const char *pattern, const char *path, unsigned flags)
{
	return match_at(pattern, path, flags, 0);
}

bool tbx_glob_match_rel(const char *pattern, const char *rel, bool is_dir)
{
	size_t n = strlen(pattern);
	bool anchored = false, ok;
	char *p;

	while (pattern[0] == '.' && pattern[1] == '/') {
		pattern += 2;
		n -= 2;
	}
	if (n > 1 && pattern[n - 1] == '/') {
		if (!is_dir)
			return false;
		n--;
	}
	if (pattern[0] == '/') {
		anchored = true;
		pattern++;
		n--;
	}
	p = strndup(pattern, n);
	if (!p)
		return false;
	if (strchr(p, '/'))
		anchored = true;
	ok = tbx_glob_match(p, anchored ? rel : tbx_path_base(rel), 0);
	free(p);
	return ok;
}
