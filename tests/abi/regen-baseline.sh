#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerate abi/twinbox-abi-1.abi from the current public headers.
#
# Usage: tests/abi/regen-baseline.sh [BUILD_DIR]   (default: build; must be a configured meson build dir)
#
# Run it only in the commit that changes the ABI on purpose, together with the
# TBX_ABI_MINOR bump (members appended) or TBX_ABI_MAJOR bump (anything else)
# and the changelog line in include/twinbox/plugin.h.
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$src/$build ;; esac
out=$src/abi/twinbox-abi-1.abi

command -v abidw >/dev/null || { echo "abidw not found: install libabigail (Debian: abigail-tools)" >&2; exit 1; }
ninja -C "$build" tests/abi/libtbx-abi-probe.so >/dev/null

# No paths of this machine or build dir, no source locations (a comment edit
# must not churn the baseline), no architecture (LP64 hosts share the layout),
# and hash type ids so an appended member is a small diff to review.
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
abidw --no-corpus-path --no-comp-dir-path --no-show-locs --no-architecture \
	--no-elf-needed --type-id-style hash \
	"$build/tests/abi/libtbx-abi-probe.so" >"$tmp"
# The translation unit's name is relative to wherever the build dir sits.
sed "s|path='[^']*tests/abi/abi-probe.c'|path='tests/abi/abi-probe.c'|" "$tmp" >"$out"
echo "wrote $out"
