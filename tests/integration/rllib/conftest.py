"""The RLlib zoo: every tiny zoo checkpoint, trained once per session (tests/support/zoo_checkpoints.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.jobs import ZOO


@pytest.fixture(scope="session")
def zoo(prefetcher, tmp_path_factory) -> Path:
    """Every zoo checkpoint, trained once per session in one subprocess (one ray.init), in the background."""
    proc, out = prefetcher.wait(ZOO, tmp_path_factory.mktemp("zoo"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out
