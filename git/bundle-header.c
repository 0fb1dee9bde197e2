/* SPDX-License-Identifier: MIT */
/*
 * The bundle header: "# v2 git bundle" (or v3 with capabilities), lines
 * "-<oid> [comment]" for prerequisites and "<oid> <refname>" for refs, an
 * empty line, then the pack. Parsed strictly: anything unexpected is refused
 * rather than guessed at.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "git-bundle.h"

#define SIGNATURE_V2 "# v2 git bundle\n"
#define SIGNATURE_V3 "# v3 git bundle\n"
/* Far more refs than any sync carries; keeps a hostile header from eating memory. */
#define MAX_HEADER_LINES 100000

void tbx_git_bundle_header_clear(struct tbx_git_bundle_header *h)
{
	for (size_t i = 0; i < h->n_refs; i++)
		free(h->refs[i].name);
	free(h->refs);
	free(h->prerequisites);
	memset(h, 0, sizeof(*h));
}

/* 40 hex digits at s (not followed by more hex) into oid. */
static int parse_oid(const char *s, size_t len, git_oid *oid)
{
	char hex[GIT_OID_HEXSZ + 1];

	if (len < GIT_OID_HEXSZ)
		return -1;
	for (size_t i = 0; i < GIT_OID_HEXSZ; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return -1;
	}
	memcpy(hex, s, GIT_OID_HEXSZ);
	hex[GIT_OID_HEXSZ] = '\0';
	return git_oid_fromstr(oid, hex) < 0 ? -1 : 0;
}

static int header_fail(struct tbx_git_bundle_header *h, size_t line, const char *what)
{
	tbx_git_bundle_header_clear(h);
	return tbx_error_set(TBX_EPROTO, "not a valid git bundle: %s (header line %zu)", what, line);
}

int tbx_git_bundle_header_parse(const char *data, size_t len, struct tbx_git_bundle_header *out)
{
	size_t pos, n_lines = 1;

	memset(out, 0, sizeof(*out));
	if (len >= strlen(SIGNATURE_V2) && memcmp(data, SIGNATURE_V2, strlen(SIGNATURE_V2)) == 0)
		out->version = 2;
	else if (len >= strlen(SIGNATURE_V3) && memcmp(data, SIGNATURE_V3, strlen(SIGNATURE_V3)) == 0)
		out->version = 3;
	else
		return tbx_error_set(TBX_EPROTO, "not a git bundle: it does not start with "
				     "\"# v2 git bundle\" or \"# v3 git bundle\"");
	pos = strlen(SIGNATURE_V2);
	for (;;) {
		const char *line = data + pos, *nl;
		size_t line_len;

		if (pos >= len || !(nl = memchr(line, '\n', len - pos)))
			return header_fail(out, n_lines + 1, "the header ends before its empty line");
		line_len = (size_t)(nl - line);
		pos += line_len + 1;
		if (++n_lines > MAX_HEADER_LINES)
			return header_fail(out, n_lines, "too many header lines");
		if (line_len == 0)
			break;
		if (line[0] == '@') {
			/* v3 capabilities: only the default object format is understood. */
			if (out->version != 3 || line_len != strlen("@object-format=sha1") ||
			    memcmp(line, "@object-format=sha1", line_len) != 0)
				return header_fail(out, n_lines, "unsupported capability");
			continue;
		}
		if (line[0] == '-') {
			git_oid *grown;
			if (line_len > 1 + GIT_OID_HEXSZ && line[1 + GIT_OID_HEXSZ] != ' ')
				return header_fail(out, n_lines, "malformed prerequisite");
			grown = realloc(out->prerequisites,
					(out->n_prerequisites + 1) * sizeof(*grown));
			if (!grown) {
				tbx_git_bundle_header_clear(out);
				return tbx_error_set(TBX_ENOMEM, "out of memory");
			}
			out->prerequisites = grown;
			if (parse_oid(line + 1, line_len - 1, &grown[out->n_prerequisites]) < 0)
				return header_fail(out, n_lines, "malformed prerequisite");
			out->n_prerequisites++;
			continue;
		}
		{
			struct tbx_git_bundle_ref *grown;
			int valid = 0;

			if (line_len < GIT_OID_HEXSZ + 2 || line[GIT_OID_HEXSZ] != ' ')
				return header_fail(out, n_lines, "malformed ref line");
			grown = realloc(out->refs, (out->n_refs + 1) * sizeof(*grown));
			if (!grown) {
				tbx_git_bundle_header_clear(out);
				return tbx_error_set(TBX_ENOMEM, "out of memory");
			}
			out->refs = grown;
			grown[out->n_refs].name = strndup(line + GIT_OID_HEXSZ + 1,
							  line_len - GIT_OID_HEXSZ - 1);
			if (!grown[out->n_refs].name) {
				tbx_git_bundle_header_clear(out);
				return tbx_error_set(TBX_ENOMEM, "out of memory");
			}
			out->n_refs++;
			if (parse_oid(line, line_len, &grown[out->n_refs - 1].oid) < 0)
				return header_fail(out, n_lines, "malformed ref line");
			/* HEAD is allowed in bundles; anything else must be a proper ref name. */
			if (strcmp(grown[out->n_refs - 1].name, "HEAD") != 0 &&
			    (git_reference_name_is_valid(&valid, grown[out->n_refs - 1].name) < 0 ||
			     !valid))
				return header_fail(out, n_lines, "invalid ref name");
		}
	}
	if (out->n_refs == 0)
		return header_fail(out, n_lines, "it carries no refs");
	if (len - pos < 12 || memcmp(data + pos, "PACK", 4) != 0)
		return header_fail(out, n_lines + 1, "no pack follows the header");
	out->pack_offset = pos;
	return 0;
}
