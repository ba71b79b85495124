"""The fixtures of the rsl_rl tests."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.cli_jobs import result_of
from tests.support.jobs import MJLAB_RUN
from tests.support.mjlab_jobs import DEPLOY


@pytest.fixture(scope="session")
def mjlab_run_folder(prefetcher, tmp_path_factory) -> Path:
    """An mjlab cartpole run trained by mjlab's own `train` (3 iterations, CPU), in the background from the
    session's start (tests/support/jobs.py MJLAB_RUN)."""
    proc, out = prefetcher.wait(MJLAB_RUN, tmp_path_factory.mktemp("mjlab"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Path(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def mjlab_deploy_run(mjlab_run_folder, prefetcher, tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    """One CLI run of a faithful export's `deploy` path beside its `onnx` path (8 seeds, 20-step episodes), the deploy
    path also on another task (`--vs-env Mjlab-Cartpole-Swingup`), a background job (tests/support/mjlab_jobs.py):
    the contract's and the sim-to-sim tests read it."""
    proc, out = result_of(prefetcher, DEPLOY, tmp_path_factory.mktemp("mjlab_deploy"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, json.loads((out / "summary.json").read_text())
