"""The fixtures of the rsl_rl tests."""

from __future__ import annotations

import json
import subprocess
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


@pytest.fixture(scope="session")
def mjlab_deploy_run(mjlab_run_folder, tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    """One CLI run of a faithful export's `deploy` path beside its `onnx` path (8 seeds, 20-step episodes), the deploy
    path also on another task (`--vs-env Mjlab-Cartpole-Swingup`): the contract's and the sim-to-sim tests read it."""
    from tests.support.common import cli

    out = tmp_path_factory.mktemp("mjlab_deploy")
    short = json.dumps({"episode_length_s": 1.0})
    proc = cli(mjlab_run_folder, "--env", "Mjlab-Cartpole-Balance", "--env-config", short, "--headless",
               "--episodes", "8", "--num-envs", "8", "--paths", "deploy,onnx", "--vs-env", "Mjlab-Cartpole-Swingup",
               "--vs-env-config", short, "--json", out / "summary.json", "--log", out / "run.sqlite",
               env={"CUDA_VISIBLE_DEVICES": ""}, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, json.loads((out / "summary.json").read_text())
