"""The fixtures of the rsl_rl tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.jobs import MJLAB_RUN


@pytest.fixture(scope="session")
def mjlab_run_folder(prefetcher, tmp_path_factory) -> Path:
    """An mjlab cartpole run trained by mjlab's own `train` (3 iterations, CPU), in the background from the
    session's start (tests/support/jobs.py MJLAB_RUN)."""
    proc, out = prefetcher.wait(MJLAB_RUN, tmp_path_factory.mktemp("mjlab"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Path(proc.stdout.strip().splitlines()[-1])
