#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check that each module exports exactly one dynamic symbol: tbx_plugin_entry_v1.

A module that leaks other symbols can collide with the daemon's or another
module's (and those leaks become ABI nobody promised), so every in-tree module
is built with -fvisibility=hidden and TBX_EXPORT on its entry alone.
"""
import argparse
import subprocess
import sys

ENTRY = "tbx_plugin_entry_v1"

# Symbols the toolchain itself may define in a shared object's dynamic table;
# they are not code or data the module chose to export.
LINKER_SYMBOLS = {"_init", "_fini", "__bss_start", "_edata", "_end",
                  "__data_start", "data_start", "__dso_handle", "_IO_stdin_used"}


def exported(nm, path):
    """Defined dynamic symbols of path, as {name: nm type letter}."""
    out = subprocess.run([nm, "-D", "--defined-only", "-P", path],
                         check=True, capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            # A versioned name prints as name@VERSION; the name is what clashes.
            syms[fields[0].split("@")[0]] = fields[1]
    return syms


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nm", default="nm")
    ap.add_argument("modules", nargs="+")
    args = ap.parse_args()

    failed = 0
    for path in args.modules:
        syms = exported(args.nm, path)
        extra = sorted(n for n in syms if n != ENTRY and n not in LINKER_SYMBOLS)
        missing = ENTRY not in syms
        if syms.get(ENTRY, "T") not in ("T", "t"):
            extra.append("%s (type %s, not a function)" % (ENTRY, syms[ENTRY]))
        if extra or missing:
            failed += 1
            print("FAIL %s" % path)
            if missing:
                print("  does not export %s (mark it TBX_EXPORT)" % ENTRY)
            for name in extra:
                print("  also exports %s" % name)
            print("  build it with gnu_symbol_visibility: 'hidden' (-fvisibility=hidden)"
                  " so only the TBX_EXPORT entry escapes")
        else:
            print("ok   %s: %s" % (path, ", ".join(sorted(syms))))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
