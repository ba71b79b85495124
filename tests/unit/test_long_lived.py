"""What a process built before its paths play is kept out of the collector's full passes once, the first time."""

from __future__ import annotations

import subprocess
import sys

from tests.support.common import ROOT

SCRIPT = """
import gc
from tui_eval.long_lived import keep_built_objects

assert gc.get_freeze_count() == 0
built = [[i] for i in range(50_000)]
keep_built_objects()
first = gc.get_freeze_count()
assert first >= 50_000, first
more = [[i] for i in range(50_000)]
keep_built_objects()  # a second run in the same process (a sweep, a test session) freezes nothing more
assert gc.get_freeze_count() == first, (gc.get_freeze_count(), first)
print("ok", first)
"""


def test_the_first_call_freezes_what_is_alive_and_a_later_one_nothing():
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ok ")
