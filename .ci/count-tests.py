#!/usr/bin/env python3
"""Count meson test results from testlog.json files; print 'N passed, N failed'."""
import json
import sys

passed = failed = skipped = 0
seen = False
for path in sys.argv[1:]:
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                seen = True
                result = json.loads(line).get("result", "")
                if result in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif result == "SKIP":
                    skipped += 1
                else:
                    failed += 1
    except FileNotFoundError:
        pass
if not seen:
    # The build failed before any test ran: that is a failure, not an empty pass.
    failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
