# SPDX-License-Identifier: MIT
"""The tool table (tests/tools/cases.json) through twinboxd on the e2b engine and the fake E2B.

The same runner the local engine uses (tests/integration/test_tools.py), unchanged:
only the engine (TBX_ENGINE=e2b) and the daemon's environment (the fake's URLs and
key) differ. At the end the fake must have seen the API key on no envd request and
in no sandbox.
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, os.path.join(HERE, "..", "fakes", "e2b"))

from fakeproc import FakeE2B  # noqa: E402
from jailcheck import require_jail  # noqa: E402


def main():
    require_jail()
    fake = FakeE2B()
    try:
        os.environ.update(fake.env())
        os.environ["TBX_ENGINE"] = "e2b"
        import test_tools  # the runner reads TBX_ENGINE when imported
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(test_tools.ToolTable)
        result = unittest.TextTestRunner(verbosity=2).run(suite)
        stats = fake.stats()
        leaks = stats["api_key_leaks"]
        in_sandboxes = [s["id"] for s in fake.sandboxes()
                        if fake.api_key in str(s["env_vars"]) or fake.api_key in str(s["request"])]
        print("fake E2B: %d requests on %d connections" % (stats["requests"], stats["connections"]))
        ok = result.wasSuccessful() and not leaks and not in_sandboxes
        if leaks or in_sandboxes:
            print("FAIL: the API key reached envd (%d requests) or sandboxes %s" % (leaks, in_sandboxes))
        if result.testsRun == 0:
            ok = False
        return 0 if ok else 1
    finally:
        fake.stop()


if __name__ == "__main__":
    sys.exit(main())
