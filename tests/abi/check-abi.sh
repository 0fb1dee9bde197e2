#!/bin/sh
# SPDX-License-Identifier: MIT
# Compare the ABI probe built from the current headers with the checked-in baseline; any difference fails.
#
# Usage: check-abi.sh ABIDIFF BASELINE PROBE_SO   (ABIDIFF empty = libabigail not installed: skip)
abidiff=$1 baseline=$2 probe=$3

if [ -z "$abidiff" ]; then
	echo "abidiff not found (Debian: abigail-tools): ABI check skipped"
	exit 77
fi
# The baseline describes an LP64 layout; elsewhere sizes differ for reasons that are not changes.
if [ "$(getconf LONG_BIT)" != 64 ]; then
	echo "not an LP64 host: ABI check skipped"
	exit 77
fi

# --harmless: by default abidiff filters out "harmless" changes such as a new
# enumerator (a new tbx_status code), yet that is an ABI addition which needs
# a TBX_ABI_MINOR bump like any other, so nothing is filtered.
report=$("$abidiff" --harmless --no-architecture "$baseline" "$probe" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then
	echo "public ABI matches $baseline"
	exit 0
fi
# libabigail 2.2 reports an appended member and an in-place signature change
# alike (exit 4), so any nonzero exit is a failure.
printf '%s\n\n' "$report"
echo "abidiff exited $rc: the public headers no longer match $baseline."
echo "An intentional ABI change regenerates abi/twinbox-abi-1.abi with \`make abi-baseline\`"
echo "(tests/abi/regen-baseline.sh BUILD_DIR) in the commit that bumps TBX_ABI_MINOR (append)"
echo "or TBX_ABI_MAJOR (anything else), with a changelog line in include/twinbox/plugin.h."
exit 1
