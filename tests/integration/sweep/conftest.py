"""The training runs every sweep test reads (tests/support/sweep_runs.py), trained once per session."""

from __future__ import annotations

import pytest

from tests.support.jobs import SWEEP_RUNS


@pytest.fixture(scope="session")
def runs(prefetcher, tmp_path_factory):
    proc, out = prefetcher.wait(SWEEP_RUNS, tmp_path_factory.mktemp("sweep_runs"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out
