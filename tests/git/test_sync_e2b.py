# SPDX-License-Identifier: MIT
"""The git sync cases of test_sync_daemon.py on the e2b engine, against the fake E2B.

Same tests, unchanged: only the engine (TBX_ENGINE=e2b) and the daemon's
environment (the fake's URLs and key) differ, which is the point: sync uses
nothing but the engine's exec and file ops.
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, os.path.join(HERE, "..", "fakes", "e2b"))
sys.path.insert(0, os.path.join(HERE, "..", "e2b"))

from fakeproc import FakeE2B  # noqa: E402
from jailcheck import require_jail  # noqa: E402


def main():
    require_jail()
    fake = FakeE2B()
    try:
        os.environ.update(fake.env())
        os.environ["TBX_ENGINE"] = "e2b"
        import test_sync_daemon  # the harness reads TBX_ENGINE when imported
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(test_sync_daemon.SyncTest)
        result = unittest.TextTestRunner(verbosity=2).run(suite)
        return 0 if result.wasSuccessful() and result.testsRun > 0 else 1
    finally:
        fake.stop()


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore", ResourceWarning)
    sys.exit(main())
